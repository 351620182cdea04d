"""The help screen: every key of the screen it was opened from, with its binding id (for
remapping in viva.yaml under ``keys:``), and whether it applies right now."""

from __future__ import annotations

from typing import Any

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.screen import ModalScreen
from textual.widgets import DataTable, Label, Static

from tui.keys import binding_rows

FIXED = [("key", 12), ("action", 20), ("id", 20), ("now", 9)]
CHROME = 2 + 4 + 2  # the dialog's border, padding and the table's scrollbar room


class HelpScreen(ModalScreen):
    """Keys of the screen below."""

    BINDINGS = [Binding("escape,f1,question_mark", "close", "Close", id="help_close")]

    def __init__(self, screen_name: str, rows: list[dict[str, Any]]):
        super().__init__()
        self.screen_name = screen_name
        self.rows = rows

    def compose(self) -> ComposeResult:
        with Vertical(classes="dialog wide", id="help"):
            yield Label(f"Keys · {self.screen_name}", classes="dialog-title")
            yield DataTable(id="help-table", cursor_type="row", zebra_stripes=True)
            yield Static(Text("Remap any key in viva.yaml, by id:  keys: {challenge: C, pause_resume: P}.  "
                              "ctrl+p opens the command palette with every action.", style="dim"))

    def on_mount(self) -> None:
        table = self.query_one(DataTable)
        for key, width in FIXED:
            table.add_column(key if key != "now" else "now", key=key, width=width)
        table.add_column("what it does", key="what", width=self.what_width())
        for row in self.rows:
            now = Text("available") if row["enabled"] else Text("not now", style="dim")
            # A description longer than its column wraps onto more lines of the row (never cut).
            table.add_row(row["key"], row["description"], row["id"] or "", now, Text(row["tooltip"]), height=None)
        table.focus()

    def what_width(self) -> int:
        """The description column: as wide as the longest description, or what the dialog has left."""
        longest = max((len(r["tooltip"]) for r in self.rows), default=0)
        dialog = min(180, int(self.app.size.width * 0.96))
        left = dialog - CHROME - sum(w + 2 for _, w in FIXED) - 2
        return max(16, min(longest, left))

    def action_close(self) -> None:
        self.dismiss(None)


def help_for(screen: Any) -> HelpScreen:
    """A help screen for ``screen`` (what its footer and hidden keys do now)."""
    return HelpScreen(type(screen).__name__.removesuffix("Screen") or "app", binding_rows(screen))
