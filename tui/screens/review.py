"""Review: a saved session replayed from its events through the live screen's widgets.

The replay moves between the points where the figures changed (each judged turn, each re-scored
turn, each override) with ←/→; ``g`` jumps to a turn. Overrides and rubric edits apply to the end
of the record, so they are offered there. From here: compare with another session of the same
item, the leaderboard, and the session report (HTML with charts, Markdown, JSON or CSV, written
to the data home's ``exports/`` by default).
"""

from __future__ import annotations

from typing import Any

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.widgets import Static

from engine.api import Engine
from tui.bridge import db_work, load_session
from tui.messages import SessionRescored
from tui.screens.session_base import SessionScreen
from tui.state import Step, replay_steps, state_at
from tui.widgets.header import SessionHeader


def load_review(engine: Engine, session_id: int) -> dict[str, Any]:
    """Everything a replay needs: the row, starting criteria, version labels and all events."""
    row, criteria, labels = load_session(engine, session_id)
    return {"row": row, "criteria": criteria, "labels": labels, "events": engine.events(session_id)}


def sessions_like(engine: Engine, session_id: int) -> tuple[list[dict[str, Any]], int, Any]:
    """Other sessions of the same item with at least one answer (what a comparison makes sense with):
    the first page, how many there are, and the loader of further pages (paged in the store)."""
    from tui.widgets.sessions import PAGE

    item = engine.session_row(session_id).get("item_id")

    def loader(eng: Engine, query: str, offset: int, limit: int) -> tuple[list[dict[str, Any]], int]:
        rows = eng.sessions_of_item(item, exclude=session_id, limit=limit, offset=offset, answered_only=True,
                                    query=query)
        return rows, eng.count_sessions_of_item(item, exclude=session_id, answered_only=True, query=query)

    rows, total = loader(engine, "", 0, PAGE)
    return rows, total, loader


def pick_comparison(screen: Any, sid: int) -> None:
    """Ask which other session of ``sid``'s item to compare it with (a paged picker; the store is read
    off the UI thread), then open the comparison. Home and Review share it."""
    from tui.screens.dialogs import PickSessionDialog

    def picked(found: tuple[list[dict[str, Any]], int, Any]) -> None:
        rows, total, loader = found
        if not rows:
            screen.notify("No other session of this item to compare with.", severity="warning")
            return
        screen.app.push_screen(PickSessionDialog(f"Compare session {sid} with…", rows, total, loader),
                               lambda other: other is not None and screen.viva.open_compare(sid, other))

    db_work(screen, screen.viva.engine, sessions_like, sid, then=picked, name="find sessions to compare")


def list_sessions(engine: Engine) -> tuple[list[dict[str, Any]], int, Any]:
    """The first page of every session, newest first, the count, and the loader of further pages."""
    from tui.widgets.sessions import PAGE, list_page

    rows, total = list_page(engine, "", 0, PAGE)
    return rows, total, list_page


def write_report(engine: Engine, session_id: int, fmt: str, path: str | None = None) -> str:
    """Write the session report (``path``, default the data home's ``exports/``); returns the
    absolute path."""
    return str(engine.write_report("session", session_id, fmt, path, force=True))  # the dialog chose the name


class ReviewScreen(SessionScreen):
    """The review screen (mode ``review``)."""

    BINDINGS = [
        Binding("left", "step(-1)", "Back", id="step_back", priority=True, tooltip="Step back in the replay"),
        Binding("right", "step(1)", "Forward", id="step_forward", priority=True,
                tooltip="Step forward in the replay"),
        Binding("g", "jump_turn", "Jump", id="jump_turn", tooltip="Jump to a turn"),
        Binding("c", "compare", "Compare", id="compare", tooltip="Compare with another session of this item"),
        Binding("l", "leaderboard", "Leaderboard", id="leaderboard", tooltip="Targets across sessions"),
        Binding("ctrl+e", "export", "Export", id="export", tooltip="Export the session report"),
        Binding("b", "pick_session", "Sessions", id="pick_session", tooltip="Review another session"),
    ]

    def __init__(self) -> None:
        super().__init__(id="review")
        self.session_id: int | None = None
        self.data: dict[str, Any] | None = None
        self.steps: list[Step] = []
        self.step_index = 0

    def compose_top(self) -> ComposeResult:
        yield SessionHeader(id="session-header")
        yield Static("", id="timeline")

    # -- loading ------------------------------------------------------------------------------
    def attach(self, session_id: int | None) -> None:
        """Load a session for replay (None: let the evaluator pick one)."""
        if session_id is None:
            self.action_pick_session()
            return
        self.session_id = session_id
        self.sub_title = f"session {session_id}"
        db_work(self, self.viva.engine, load_review, session_id, then=self.loaded, name=f"load session {session_id}")

    def loaded(self, data: dict[str, Any], keep_position: bool = False) -> None:
        if data["row"]["id"] != self.session_id:
            return
        at_end = not self.steps or self.step_index == len(self.steps) - 1
        self.data = data
        self.steps = replay_steps(data["events"])
        if not keep_position or at_end or self.step_index >= len(self.steps):
            self.step_index = len(self.steps) - 1
        self.show_step()

    def reload(self) -> None:
        if self.session_id is not None:
            db_work(self, self.viva.engine, load_review, self.session_id,
                    then=lambda data: self.loaded(data, keep_position=True), name=f"load session {self.session_id}")

    def show_step(self) -> None:
        data = self.data
        if data is None or not self.steps:
            return
        step = self.steps[self.step_index]
        self.state = state_at(self.session_id, data["row"], data["criteria"], data["labels"], data["events"],
                              step.position)
        self.render_state(follow=False)
        if step.turn is not None:
            self.pane.select_turn(step.turn)
        self._timeline(step)

    def _timeline(self, step: Step) -> None:
        line = Text()
        line.append("replay ", style="bold")
        line.append(f"step {self.step_index + 1}/{len(self.steps)}  ")
        line.append(step.label, style="bold")
        if self.state is not None:
            turn = self.state.turn(self.selected_turn)
            if turn is not None and turn.judged:
                line.append(f"  · turn {turn.idx} scored with rubric {self.state.version_label(turn.rubric_version_id)}")
        if not self.at_end:
            line.append("  · overrides and rubric edits apply at the end (→)", style="dim")
        self.query_one("#timeline", Static).update(line)

    @property
    def at_end(self) -> bool:
        return bool(self.steps) and self.step_index == len(self.steps) - 1

    def on_turn_selected(self, message: Any) -> None:
        super().on_turn_selected(message)
        if self.steps:
            self._timeline(self.steps[self.step_index])

    def on_session_rescored(self, message: SessionRescored) -> None:
        if message.session_id == self.session_id:
            self.reload()

    # -- availability -------------------------------------------------------------------------
    def can_edit(self) -> bool:
        return self.state is not None and self.at_end

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        if action == "step":
            if not self.steps:
                return None
            step = int(parameters[0])  # type: ignore[call-overload]
            ok = 0 <= self.step_index + step < len(self.steps)
            return True if ok else None
        if action in ("jump_turn", "compare", "export"):
            return True if self.state is not None and self.state.turns else None
        return super().check_action(action, parameters)

    # -- actions ------------------------------------------------------------------------------
    def action_step(self, step: int) -> None:
        if self.steps and 0 <= self.step_index + step < len(self.steps):
            self.step_index += step
            self.show_step()

    def action_jump_turn(self) -> None:
        from tui.screens.dialogs import JumpDialog

        if self.data is None:
            return
        turns = [s.turn for s in self.steps if s.turn is not None]
        if not turns:
            return
        self.app.push_screen(JumpDialog(max(turns)), self.jump_to)

    def jump_to(self, turn: int | None) -> None:
        """Go to the point where ``turn`` was first judged."""
        if turn is None:
            return
        index = next((i for i, s in enumerate(self.steps) if s.turn == turn), None)
        if index is None:
            self.notify(f"turn {turn} was never judged", severity="warning")
            return
        self.step_index = index
        self.show_step()

    def action_compare(self) -> None:
        if self.session_id is not None:
            pick_comparison(self, self.session_id)

    def action_leaderboard(self) -> None:
        from tui.screens.leaderboard import LeaderboardScreen

        self.app.push_screen(LeaderboardScreen())

    def action_export(self) -> None:
        from engine.api import REPORT_EXTENSIONS
        from tui.screens.dialogs import ExportDialog

        sid = self.session_id
        if sid is None:
            return

        def chosen(result: tuple[str, str] | None) -> None:
            if result is None:
                return
            fmt, path = result
            db_work(self, self.viva.engine, write_report, sid, fmt, path,
                    then=lambda where: self.notify(f"wrote {where}", title="Report exported", timeout=10),
                    name="export report")

        self.app.push_screen(ExportDialog(sid, self.viva.engine.exports_dir, dict(REPORT_EXTENSIONS)), chosen)

    def action_pick_session(self) -> None:
        from tui.screens.dialogs import PickSessionDialog

        def picked(found: tuple[list[dict[str, Any]], int, Any]) -> None:
            rows, total, loader = found
            if not rows:
                self.notify("No sessions yet: start one from Home (n) or with `viva run`.", severity="warning")
                return
            self.app.push_screen(PickSessionDialog("Review which session?", rows, total, loader),
                                 lambda sid: sid is not None and self.attach(sid))

        db_work(self, self.viva.engine, list_sessions, then=picked, name="list sessions")

    def after_override(self, result: dict[str, Any]) -> None:
        super().after_override(result)
        self.reload()

    def after_override_undone(self, result: dict[str, Any]) -> None:
        self.reload()

    def after_confirm(self, result: dict[str, Any]) -> None:
        super().after_confirm(result)
        self.reload()

    def after_rubric_saved(self, version_id: int | None) -> None:
        if version_id is not None:
            self.reload()
