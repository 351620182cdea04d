"""The session table: one row per session, filtered by the Home screen's filter string."""

from __future__ import annotations

from typing import Any

from rich.text import Text
from textual.widgets import DataTable

from tui.filters import compile_filter
from tui.widgets.header import STATUS_STYLES, short

COLUMNS = [("id", 5), ("target", 28), ("benchmark / item", 22), ("protocol", 9), ("status", 11),
           ("turns", 5), ("score", 6), ("date", 16)]


class SessionsTable(DataTable):
    """Sessions newest first; ``sessions`` keeps the full list, ``shown_ids`` the filtered ids."""

    def __init__(self, *, id: str | None = None):
        super().__init__(id=id, cursor_type="row", zebra_stripes=True)
        self.sessions: list[dict[str, Any]] = []
        self.shown_ids: list[int] = []
        self.query_text = ""

    def on_mount(self) -> None:
        for name, width in COLUMNS:
            self.add_column(name, key=name, width=width)

    def set_rows(self, rows: list[dict[str, Any]]) -> None:
        self.sessions = rows
        self._fill()

    def set_filter(self, text: str) -> None:
        """Apply a filter string (see ``tui.filters``); raises ``FilterError`` on a bad term."""
        compile_filter(text)
        self.query_text = text
        self._fill()

    @property
    def selected_session(self) -> dict[str, Any] | None:
        if not self.shown_ids or self.cursor_row is None or self.cursor_row >= len(self.shown_ids):
            return None
        sid = self.shown_ids[self.cursor_row]
        return next((r for r in self.sessions if r["id"] == sid), None)

    def _fill(self) -> None:
        keep = self.selected_session["id"] if self.selected_session else None
        match = compile_filter(self.query_text)
        shown = [r for r in self.sessions if match(r)]
        self.clear()
        self.shown_ids = [r["id"] for r in shown]
        for r in shown:
            item = f"{r.get('benchmark') or '?'}/{r.get('item') or '?'}"
            if r.get("topic"):
                item += f" {r['topic']}"
            score = "" if r.get("score") is None else f"{r['score']:.1f}"
            self.add_row(str(r["id"]), short(r["target"], 28), short(item, 22), r["protocol"],
                         Text(r["status"], style=STATUS_STYLES.get(r["status"], "")), str(r["turns"]), score,
                         (r.get("created_at") or "")[:16].replace("T", " "), key=str(r["id"]))
        if keep in self.shown_ids:
            self.move_cursor(row=self.shown_ids.index(keep), animate=False)
