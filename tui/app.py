"""The viva app: Home, Live and Review as independent modes over one runtime.

The app receives the engine's facade (:class:`engine.api.Engine`: data home, config, connection) and
talks to the engine only through it and its event stream (see ``tui.bridge``). It runs the engine
in workers, keeps track of the runs it executes, and turns any worker error into a notification
naming the worker.
"""

from __future__ import annotations

import gc
from collections.abc import Callable, Iterable
from functools import partial
from typing import TYPE_CHECKING, Any

from textual.app import App, SystemCommand
from textual.binding import Binding
from textual.message import Message
from textual.screen import Screen
from textual.worker import Worker, WorkerState

from engine.api import Engine
from tui.bridge import engine_work
from tui.keys import binding_rows, check_keymap
from tui.messages import RunEnded, RunStarted, SessionRescored
from tui.screens.home import HomeScreen

if TYPE_CHECKING:
    from tui.screens.live import LiveScreen
    from tui.screens.review import ReviewScreen

LIGHT_THEME = "textual-light"
DARK_THEME = "textual-dark"


class VivaApp(App[None]):
    """The Textual app. ``start`` is ``home``, ``live`` or ``review``."""

    CSS_PATH = "app.tcss"
    TITLE = "viva"
    ENABLE_COMMAND_PALETTE = True
    BINDINGS = [
        Binding("ctrl+q", "quit", "Quit", id="quit", priority=True, tooltip="Quit (a running session is interrupted)"),
        Binding("f1,question_mark", "help", "Help", id="help", tooltip="Every key of this screen"),
        Binding("f2", "mode('home')", "Home", id="mode_home", show=False, tooltip="Sessions and benchmarks"),
        Binding("f3", "mode('live')", "Live", id="mode_live", show=False, tooltip="The live interview"),
        Binding("f4", "mode('review')", "Review", id="mode_review", show=False, tooltip="Replay a saved session"),
        Binding("ctrl+t", "toggle_theme", "Theme", id="toggle_theme", show=False, tooltip="Light or dark theme"),
    ]

    def __init__(self, engine: Engine, start: str = "home", run_id: int | None = None,
                 session_id: int | None = None, execute: bool = True):
        super().__init__()
        self.engine = engine
        self.start = start
        self.start_run_id = run_id
        self.start_session_id = session_id
        self.execute = execute
        self.home_screen = HomeScreen()
        self._live_screen: LiveScreen | None = None  # made on first use: Home's first frame needs neither
        self._review_screen: ReviewScreen | None = None
        self.add_mode("home", lambda: self.home_screen)
        self.add_mode("live", lambda: self.live_screen)
        self.add_mode("review", lambda: self.review_screen)
        self.executing: dict[int, set[int]] = {}
        """Runs this app is executing: run id -> its session ids."""
        self.resuming: set[int] = set()
        self.start_theme, self.start_keys = engine.ui_settings()
        check_keymap(self.start_keys)  # unknown ids and conflicts stop the start, naming key and ids
        self.dark_theme = self.start_theme if self.start_theme != LIGHT_THEME else DARK_THEME

    @property
    def live_screen(self) -> LiveScreen:
        """The live screen (mode ``live``), made on first use."""
        if self._live_screen is None:
            from tui.screens.live import LiveScreen

            self._live_screen = LiveScreen()
        return self._live_screen

    @property
    def review_screen(self) -> ReviewScreen:
        """The review screen (mode ``review``), made on first use."""
        if self._review_screen is None:
            from tui.screens.review import ReviewScreen

            self._review_screen = ReviewScreen()
        return self._review_screen

    # -- start --------------------------------------------------------------------------------
    def on_mount(self) -> None:
        self.theme = self.start_theme
        if self.start_keys:
            self.set_keymap(self.start_keys)
        if self.start == "live":
            if self.start_run_id is not None and self.execute:
                self.start_run(self.start_run_id)
            self.open_live(run_id=self.start_run_id, session_id=self.start_session_id)
        elif self.start == "review":
            self.open_review(self.start_session_id)
        else:
            self.switch_mode("home")
        # Everything loaded so far (modules, styles, the first screen) lives as long as the app:
        # keep it out of the cyclic collector, whose full passes over it otherwise stall the UI
        # for ~100 ms every few seconds while an answer streams.
        self.call_after_refresh(gc.freeze)

    # -- navigation ---------------------------------------------------------------------------
    def open_live(self, run_id: int | None = None, session_id: int | None = None) -> None:
        """Show the live screen on a run (its first unfinished session) or on one session."""
        self.switch_mode("live")
        if run_id is not None or session_id is not None:
            self.call_after_refresh(self.live_screen.attach, run_id, session_id)

    def open_review(self, session_id: int | None) -> None:
        """Replay a session (None: pick one)."""
        self.switch_mode("review")
        self.call_after_refresh(self.review_screen.attach, session_id)

    def open_compare(self, a: int, b: int) -> None:
        from tui.screens.compare import CompareScreen

        self.push_screen(CompareScreen(a, b))

    def current_session(self) -> int | None:
        """The session the evaluator is on: the one shown on this screen, else Home's highlighted row."""
        screen = self.screen
        sid = getattr(screen, "session_id", None)
        if isinstance(sid, int):
            return sid
        selected = self.home_screen.selected if self.home_screen.is_attached else None
        return selected["id"] if selected else None

    def action_mode(self, mode: str) -> None:
        """F2/F3/F4. Live and Review open on a session: the one they show, else the current one
        (this screen's, or Home's highlighted row); Review without any lets the evaluator pick one,
        Live says how to choose one (never an empty screen)."""
        if mode == "live" and (self._live_screen is None or self._live_screen.session_id is None):
            sid = self.current_session()
            if sid is None:
                self.notify("No session to watch yet: start one with n on Home, or highlight one there.",
                            severity="warning")
                return
            self.open_live(session_id=sid)
            return
        if mode == "review" and (self._review_screen is None or self._review_screen.session_id is None):
            self.open_review(self.current_session())
            return
        self.switch_mode(mode)

    def action_help(self) -> None:
        from tui.screens.help import HelpScreen, help_for

        if isinstance(self.screen, HelpScreen):
            return
        self.push_screen(help_for(self.screen))

    def action_toggle_theme(self) -> None:
        self.theme = LIGHT_THEME if self.theme != LIGHT_THEME else self.dark_theme

    # -- engine work --------------------------------------------------------------------------
    def is_executing(self, session_id: int) -> bool:
        """True when this app runs (or will run) the session."""
        return session_id in self.resuming or any(session_id in s for s in self.executing.values())

    def start_run(self, run_id: int) -> None:
        """Execute every unfinished session of a run in an engine worker."""
        if run_id in self.executing:
            return
        self.executing[run_id] = set()

        async def run(engine: Engine) -> dict[int, str | None]:
            sessions = [r["id"] for r in engine.run_sessions(run_id)]
            self.call_from_thread(self._run_started, run_id, sessions)
            return await engine.execute_run(run_id)

        engine_work(self, self.engine, run, name=f"run {run_id}", then=partial(self._run_ended, run_id))

    def _run_started(self, run_id: int, sessions: list[int]) -> None:
        self.executing[run_id] = set(sessions)
        self._broadcast(lambda: RunStarted(run_id, sessions))

    def _run_ended(self, run_id: int, errors: dict[int, str | None] | None) -> None:
        self.executing.pop(run_id, None)
        failed = {sid: e for sid, e in (errors or {}).items() if e}
        for sid, error in failed.items():
            self.notify(error, title=f"session {sid} failed", severity="error", timeout=10)
        self._broadcast(lambda: RunEnded(run_id, errors or {}))

    def resume_session(self, session_id: int) -> None:
        """Continue an interrupted session in an engine worker."""
        if self.is_executing(session_id):
            return
        self.resuming.add(session_id)

        async def run(engine: Engine) -> dict[int, str | None]:
            return await engine.execute_sessions([session_id], 1)

        def ended(errors: dict[int, str | None] | None) -> None:
            self.resuming.discard(session_id)
            if errors and errors.get(session_id):
                self.notify(errors[session_id] or "", title=f"session {session_id} failed", severity="error")
            self._broadcast(lambda: RunEnded(-1, errors or {}))

        engine_work(self, self.engine, run, name=f"resume session {session_id}", then=ended)

    def apply_rubric(self, session_id: int, version_id: int) -> None:
        """Make a session score with a rubric version; the engine decides at once whether its live
        runner re-scores (queued) or the stored answers are re-scored now (no target calls)."""

        def done(result: dict[str, Any] | None) -> None:
            if result is not None and not result.get("queued"):
                self._broadcast(lambda: SessionRescored(session_id, version_id))

        engine_work(self, self.engine, lambda engine: engine.apply_rubric(session_id, version_id),
                    name=f"re-score session {session_id}", then=done)

    def _broadcast(self, make: Callable[[], Message]) -> None:
        """Post a fresh copy of a message to each mode's screen (a message is handled once)."""
        for screen in (self.home_screen, self._live_screen, self._review_screen):
            if screen is not None and screen.is_attached:
                screen.post_message(make())

    def notify(self, message: Any, *, title: str = "", **kwargs: Any) -> None:
        """Every notification (errors hold what an endpoint or a benchmark said) is shown terminal-safe."""
        from engine.termsafe import termsafe

        super().notify(termsafe(message), title=termsafe(title), **kwargs)

    def on_worker_state_changed(self, event: Worker.StateChanged) -> None:
        """One place where any worker's failure becomes a notification naming the worker."""
        if event.state == WorkerState.ERROR:
            error = event.worker.error
            self.notify(f"{type(error).__name__}: {error}", title=f"{event.worker.name} failed",
                        severity="error", timeout=10)

    # -- command palette ----------------------------------------------------------------------
    def get_system_commands(self, screen: Screen) -> Iterable[SystemCommand]:
        """Every action of the current screen (with its key and id), then the app's own."""
        seen: set[str] = set()
        for row in binding_rows(screen):
            if row["action"] in ("command_palette", "quit") or row["action"] in seen:
                continue
            seen.add(row["action"])
            state = "" if row["enabled"] else " (not available now)"
            yield SystemCommand(row["description"] + state, f"{row['tooltip'] or row['description']} · key "
                                f"{row['key']} · id {row['id']}", partial(self._run_from_palette, row))
        yield SystemCommand("Home", "Sessions and benchmarks (F2)", partial(self.switch_mode, "home"))
        yield SystemCommand("Live interview", "The live screen (F3)", partial(self.switch_mode, "live"))
        yield SystemCommand("Review", "Replay a saved session (F4)", partial(self.open_review,
                                                                           self.review_screen.session_id))
        yield from super().get_system_commands(screen)

    def _run_from_palette(self, row: dict[str, Any]) -> None:
        self.call_later(self.run_action, row["action"], row["node"])

