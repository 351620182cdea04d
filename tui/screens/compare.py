"""Two sessions of the same item side by side (different targets or policies): each with its
conversation and figures, a per-turn table below, and one turn selection for both (←/→)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical
from textual.screen import Screen
from textual.widgets import DataTable

from engine.api import Engine
from tui.bridge import db_work
from tui.messages import TurnSelected
from tui.screens.review import load_review
from tui.state import SessionState, state_at
from tui.widgets.header import SessionHeader
from tui.widgets.interview import InterviewPane, fmt_float, fmt_signed, turn_label
from tui.widgets.keybar import KeyBar
from tui.widgets.metrics import MetricPanel

if TYPE_CHECKING:
    from tui.app import VivaApp


def load_pair(engine: Engine, a: int, b: int) -> tuple[dict[str, Any], dict[str, Any]]:
    return load_review(engine, a), load_review(engine, b)


class CompareScreen(Screen):
    """Compare two sessions; ``escape`` goes back."""

    BINDINGS = [
        Binding("left", "turn(-1)", "Earlier turn", id="compare_prev", priority=True),
        Binding("right", "turn(1)", "Later turn", id="compare_next", priority=True),
        Binding("tab", "switch_side", "Other side", id="compare_side"),
        Binding("escape", "back", "Back", id="compare_back"),
    ]

    def __init__(self, a: int, b: int):
        super().__init__(id="compare")
        self.ids = (a, b)
        self.states: list[SessionState] = []
        self.turn = 0
        self.focus_side = 0

    @property
    def viva(self) -> VivaApp:
        return self.app  # type: ignore[return-value]

    def compose(self) -> ComposeResult:
        with Horizontal(id="compare-sides"):
            for side in (0, 1):
                with Vertical(classes="compare-side", id=f"side-{side}"):
                    yield SessionHeader(id=f"header-{side}", classes="compare-header")
                    pane = InterviewPane(id=f"pane-{side}", classes="region")
                    pane.border_title = f"Session {self.ids[side]}"
                    yield pane
                    metrics = MetricPanel(id=f"metrics-{side}", compact=True)
                    metrics.add_class("region")
                    yield metrics
        table: DataTable[Any] = DataTable(id="compare-table", cursor_type="row", zebra_stripes=True)
        table.add_column("turn", key="turn", width=5)
        for side in (0, 1):
            table.add_column(f"{self.ids[side]}: action", key=f"action{side}", width=20)
            table.add_column("s", key=f"s{side}", width=5)
            table.add_column("Δs", key=f"d{side}", width=6)
        yield table
        yield KeyBar()

    def on_mount(self) -> None:
        a, b = self.ids
        db_work(self, self.viva.engine, load_pair, a, b, then=self.loaded, name="load sessions to compare")

    def loaded(self, pair: tuple[dict[str, Any], dict[str, Any]]) -> None:
        self.states = []
        for side, data in enumerate(pair):
            state = state_at(self.ids[side], data["row"], data["criteria"], data["labels"], data["events"],
                             len(data["events"]))
            self.states.append(state)
            self.query_one(f"#header-{side}", SessionHeader).show(state, compact=True)
            pane = self.query_one(f"#pane-{side}", InterviewPane)
            pane.border_title = f"Session {self.ids[side]} · {state.target}"
            pane.show(state, follow=False)
        self._table()
        self.select(0)
        self.query_one("#pane-0", InterviewPane).focus()

    def _table(self) -> None:
        table = self.query_one("#compare-table", DataTable)
        table.clear()
        rows = max((len(s.turns) for s in self.states), default=0)
        for i in range(rows):
            cells: list[Any] = [str(i)]
            for state in self.states:
                t = state.turn(i)
                if t is None:
                    cells += ["", "", ""]
                    continue
                delta = Text(fmt_signed(t.delta), style="green" if (t.delta or 0) > 0 else
                             "red" if (t.delta or 0) < 0 else "")
                cells += [turn_label(t), fmt_float(t.score), delta]
            table.add_row(*cells, key=str(i))

    def select(self, turn: int) -> None:
        """Select the same turn on both sides (clamped to each side's length)."""
        self.turn = turn
        for side, state in enumerate(self.states):
            pane = self.query_one(f"#pane-{side}", InterviewPane)
            if state.turns:
                pane.select_turn(min(turn, len(state.turns) - 1))
            self.query_one(f"#metrics-{side}", MetricPanel).show(state, min(turn, len(state.turns) - 1))
        table = self.query_one("#compare-table", DataTable)
        if table.row_count:
            table.move_cursor(row=min(turn, table.row_count - 1), animate=False)

    def on_turn_selected(self, message: TurnSelected) -> None:
        # Only the evaluator's own move (in the focused pane) leads; the panes' replies to
        # ``select`` would otherwise bounce between a short and a long session.
        message.stop()
        pane = message.pane
        if pane is not self.focused or message.turn is None or message.turn != pane.selected or not self.states:
            return  # not the evaluator's move, or a stale message (the pane moved on since)
        side = 0 if message.pane.id == "pane-0" else 1
        echo = min(self.turn, len(self.states[side].turns) - 1)
        if message.turn != echo:
            self.select(message.turn)

    def on_data_table_row_highlighted(self, event: DataTable.RowHighlighted) -> None:
        if event.data_table is self.focused and event.cursor_row != self.turn and self.states:
            self.select(event.cursor_row)

    def action_turn(self, step: int) -> None:
        rows = max((len(s.turns) for s in self.states), default=0)
        if rows:
            self.select(max(0, min(rows - 1, self.turn + step)))

    def action_switch_side(self) -> None:
        self.focus_side = 1 - self.focus_side
        self.query_one(f"#pane-{self.focus_side}", InterviewPane).focus()

    def action_back(self) -> None:
        self.dismiss(None)
