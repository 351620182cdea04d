"""The interview pane: the conversation turn by turn, the answer appearing as it streams."""

from __future__ import annotations

from rich.console import Group, RenderableType
from rich.style import Style
from rich.table import Table
from rich.text import Text
from textual.binding import Binding
from textual.containers import VerticalScroll
from textual.reactive import reactive
from textual.widget import Widget
from textual.widgets import Static

from tui.messages import TurnSelected
from tui.state import SessionState, Turn

ACTION_LABELS = {
    "initial": "initial question",
    "follow-up": "follow-up",
    "challenge": "challenge",
    "human": "human question",
    "task": "examiner",
}


def fmt_signed(value: float | None, digits: int = 2) -> str:
    return "–" if value is None else f"{value:+.{digits}f}"


def fmt_float(value: float | None, digits: int = 2) -> str:
    return "–" if value is None else f"{value:.{digits}f}"


def turn_label(turn: Turn) -> str:
    """``follow-up``, ``challenge (forced)``, ``human question``... as the pane and tables show it."""
    label = ACTION_LABELS.get(turn.action, turn.action or "…")
    if turn.action in ("follow-up", "challenge") and turn.actor == "human":
        label += " (forced)"
    return label


class TurnView(Widget):
    """One turn: a header with the action and the judge's figures, the kernel's question and the
    target's answer, visibly apart (colours come from the theme, see app.tcss)."""

    COMPONENT_CLASSES = {"turn--kernel", "turn--target", "turn--label", "turn--up", "turn--down", "turn--dim"}

    def __init__(self, turn: Turn, version: str):
        super().__init__(classes="turn")
        self.turn_idx = turn.idx
        self.turn = turn
        self.version = version
        self.rendered: tuple[int, str] = (turn.rev, version)
        self._set_action_class(turn.action)

    def _set_action_class(self, action: str) -> None:
        for name in ACTION_LABELS:
            self.set_class(action == name, f"-action-{name}")

    def set_turn(self, turn: Turn, version: str) -> None:
        """Re-render if the turn changed since it was last drawn."""
        if (turn.rev, version) == self.rendered and turn is self.turn:
            return
        self.turn, self.version, self.rendered = turn, version, (turn.rev, version)
        self._set_action_class(turn.action)
        self.refresh(layout=True)

    def render(self) -> RenderableType:
        turn = self.turn
        style = self.get_component_rich_style
        head = Text()
        head.append(f"Turn {turn.idx} · ", style=style("turn--label"))
        head.append(turn_label(turn), style=style("turn--label"))
        if turn.judged:
            head.append(f"  s {fmt_float(turn.score)}", style=style("turn--label"))
            if turn.delta is not None:
                head.append(f"  Δs {fmt_signed(turn.delta)}",
                            style=style("turn--up") if turn.delta > 0 else style("turn--down") if turn.delta < 0
                            else "")
            elif turn.idx > 0:
                head.append("  Δs –")
            head.append(f"  {self.version}", style=style("turn--dim"))
            if turn.rescored:
                head.append(" re-scored", style=style("turn--dim"))
            if any(v.overridden for v in turn.verdicts.values()):
                head.append(" · overridden", style=style("turn--dim"))
        elif turn.done:
            head.append("   judging…", style=style("turn--dim"))
        grid = Table.grid(padding=(0, 1), expand=True)
        grid.add_column(width=8, no_wrap=True)
        grid.add_column(ratio=1)
        kernel, target = style("turn--kernel"), style("turn--target")
        grid.add_row(Text("examiner", style=kernel + Style(bold=True)), Text(turn.question, style=kernel))
        if turn.answer or turn.done:
            answer = Text(turn.answer or "(empty answer)", style=target)
            if not turn.done:
                answer.append("▌")
            grid.add_row(Text("target", style=target + Style(bold=True)), answer)
        else:
            grid.add_row(Text("target", style=target + Style(bold=True)),
                         Text("waiting for the answer…", style=style("turn--dim")))
        return Group(head, grid)


class InterviewPane(VerticalScroll, can_focus=True):
    """The conversation. ↑/↓ (k/j) select a turn; the checklist and metrics follow the selection.

    New turns are selected as they start while the selection is on the last turn, so a live
    interview follows itself until the evaluator looks back at an earlier turn.
    """

    ALLOW_MAXIMIZE = True

    BINDINGS = [
        Binding("up,k", "select(-1)", "Previous turn", show=False, id="turn_prev"),
        Binding("down,j", "select(1)", "Next turn", show=False, id="turn_next"),
        Binding("home", "select_edge(0)", "First turn", show=False, id="turn_first"),
        Binding("end", "select_edge(-1)", "Last turn", show=False, id="turn_last"),
    ]

    selected: reactive[int | None] = reactive(None)

    def __init__(self, *, id: str | None = None, classes: str | None = None):
        super().__init__(id=id, classes=classes)
        self.state: SessionState | None = None
        self._views: list[TurnView] = []
        self._empty = Static("No turns yet.", classes="empty")

    def compose(self):
        yield self._empty

    def show(self, state: SessionState, follow: bool = True) -> None:
        """Bring the pane in line with ``state``: mount new turns, drop extra ones, re-render the
        turns that changed. With ``follow``, a selection on the last turn moves to a new last turn."""
        self.state = state
        count = len(state.turns)
        was_last = self.selected is None or self.selected >= len(self._views) - 1
        if len(self._views) > count:
            extra = self._views[count:]
            self._views = self._views[:count]
            for view in extra:
                view.remove()
        for view in self._views:
            view.set_turn(state.turns[view.turn_idx], state.version_label(state.turns[view.turn_idx].rubric_version_id))
        if len(self._views) < count:
            new = [TurnView(t, state.version_label(t.rubric_version_id)) for t in state.turns[len(self._views):]]
            self._views.extend(new)
            self.mount_all(new)
        self._empty.display = count == 0
        if count == 0:
            self.selected = None
        elif self.selected is None or self.selected >= count or (follow and was_last):
            self.selected = count - 1
            if follow:
                self.call_after_refresh(self.scroll_end, animate=False)
        else:
            self._mark(self.selected)

    def refresh_turn(self, idx: int) -> None:
        """Re-render one turn (a streamed piece arrived)."""
        if self.state is None or idx >= len(self._views):
            return
        turn = self.state.turns[idx]
        self._views[idx].set_turn(turn, self.state.version_label(turn.rubric_version_id))
        if idx == len(self._views) - 1 and self.selected == idx:
            self.call_after_refresh(self.scroll_end, animate=False)

    def _mark(self, idx: int | None) -> None:
        for view in self._views:
            view.set_class(view.turn_idx == idx, "-selected")

    def watch_selected(self, old: int | None, new: int | None) -> None:
        self._mark(new)
        if new is not None and new < len(self._views):
            # After the refresh: a turn mounted just now has no place on screen before it.
            if new == len(self._views) - 1:
                self.call_after_refresh(self.scroll_end, animate=False)
            else:
                self.call_after_refresh(self.scroll_to_widget, self._views[new], animate=False, top=True)
        self.post_message(TurnSelected(new, self))

    def action_select(self, step: int) -> None:
        if not self._views:
            return
        current = len(self._views) - 1 if self.selected is None else self.selected
        self.selected = max(0, min(len(self._views) - 1, current + step))

    def action_select_edge(self, edge: int) -> None:
        if self._views:
            self.selected = 0 if edge == 0 else len(self._views) - 1

    def select_turn(self, idx: int) -> None:
        """Select a turn from outside (a review step, a jump)."""
        if self._views:
            self.selected = max(0, min(len(self._views) - 1, idx))
