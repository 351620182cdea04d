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
            table: DataTable[Any] = DataTable(id="help-table", cursor_type="row", zebra_stripes=True)
            table.add_column("key", key="key", width=12)
            table.add_column("action", key="action", width=20)
            table.add_column("id", key="id", width=20)
            table.add_column("now", key="now", width=9)
            table.add_column("what it does", key="what")
            yield table
            yield Static(Text("Remap any key in viva.yaml, by id:  keys: {challenge: C, pause_resume: p}.  "
                              "ctrl+p opens the command palette with every action.", style="dim"))

    def on_mount(self) -> None:
        table = self.query_one(DataTable)
        for row in self.rows:
            now = Text("available") if row["enabled"] else Text("not now", style="dim")
            table.add_row(row["key"], row["description"], row["id"] or "", now, row["tooltip"])
        table.focus()

    def action_close(self) -> None:
        self.dismiss(None)


def help_for(screen: Any) -> HelpScreen:
    """A help screen for ``screen`` (what its footer and hidden keys do now)."""
    return HelpScreen(type(screen).__name__.removesuffix("Screen") or "app", binding_rows(screen))
