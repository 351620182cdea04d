"""The per-target leaderboard over finished sessions (engine.interview.queries.leaderboard) and the
kernel-vs-human verdict agreement from overrides (engine.interview.control.agreement)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.screen import ModalScreen
from textual.widgets import DataTable, Label, Static

from engine.api import Engine
from tui.bridge import db_work
from tui.widgets.header import short

if TYPE_CHECKING:
    from tui.app import VivaApp

COLUMNS = [("target", 34), ("Score", 6), ("ΔS_f", 6), ("P+", 5), ("P−", 5), ("R+", 6), ("R−", 6), ("R", 6),
           ("tokens", 8), ("cost", 8), ("finished", 8), ("failed", 7)]


def load_leaderboard(engine: Engine) -> tuple[list[dict[str, Any]], dict[str, Any]]:
    """The leaderboard and the judge–human agreement, from the engine's metrics."""
    return engine.leaderboard(), engine.agreement()


def _f(value: Any, digits: int = 3) -> str:
    return "–" if value is None else f"{value:.{digits}f}"


class LeaderboardScreen(ModalScreen):
    """Targets ranked by Score across their finished sessions."""

    BINDINGS = [Binding("escape,l", "close", "Close", id="leaderboard_close")]

    @property
    def viva(self) -> VivaApp:
        return self.app  # type: ignore[return-value]

    def compose(self) -> ComposeResult:
        with Vertical(classes="dialog wide"):
            yield Label("Leaderboard: targets over their finished sessions", classes="dialog-title")
            table: DataTable[Any] = DataTable(id="leaderboard-table", cursor_type="row", zebra_stripes=True)
            for name, width in COLUMNS:
                table.add_column(name, key=name, width=width)
            yield table
            yield Static("", id="agreement")

    def on_mount(self) -> None:
        db_work(self, self.viva.engine, load_leaderboard, then=self.loaded, name="leaderboard")

    def loaded(self, result: tuple[list[dict[str, Any]], dict[str, Any]]) -> None:
        rows, agree = result
        table = self.query_one(DataTable)
        for r in rows:
            table.add_row(short(r["target"], 34), _f(r["score"], 1), _f(r["delta_follow_up"]), _f(r["p_plus"], 2),
                          _f(r["p_minus"], 2), _f(r["r_plus"]), _f(r["r_minus"]), _f(r["r"]),
                          str(r["tokens_in"] + r["tokens_out"]), f"{r['cost']:.4f}",
                          f"{r.get('finished', 0)}/{len(r['sessions'])}", str(len(r.get("failed") or [])))
        if not rows:
            table.add_row("no sessions yet", *[""] * (len(COLUMNS) - 1))
        note = Text()
        if agree.get("agreement") is None:
            note.append("kernel-vs-human agreement: no verdict reviewed yet (override verdicts with o)", style="dim")
        else:
            note.append(f"kernel-vs-human agreement: {agree['agreement']:.0%} of {agree['reviewed']} reviewed "
                        f"verdict(s)")
        self.query_one("#agreement", Static).update(note)
        table.focus()

    def action_close(self) -> None:
        self.dismiss(None)
