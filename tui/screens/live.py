"""The live interview: follow a session as it runs (in this app or in ``viva run`` elsewhere) and
step in from the keyboard.

Interventions that steer the runner (pause, resume, force the next action, your own question,
stop) are ``control.*`` events (``engine.interview.control``); the runner applies them at its next
step boundary (a stop at once: the answer in flight is cut), wherever it runs, and acknowledges each
one. Until then the header shows them as requested.
"""

from __future__ import annotations

from typing import Any

from textual.binding import Binding

from engine.api import Engine
from tui.bridge import db_work, follow_session
from tui.messages import AnswerStreamed, MetricsUpdated, RunEnded, SessionEvents, SessionOpened
from tui.screens.session_base import SessionScreen
from tui.state import SessionState

ADAPTIVE_ONLY = ("follow_up", "challenge")
STEERING = ("pause_resume", "follow_up", "challenge", "end", "write_question", "stop")


class LiveScreen(SessionScreen):
    """The live interview screen (mode ``live``)."""

    BINDINGS = [
        Binding("space", "pause_resume", "Pause", id="pause_resume",
                tooltip="Pause after the current step, or resume"),
        Binding("f", "force('follow-up')", "Follow-up", id="follow_up", tooltip="Force a follow-up next"),
        Binding("c", "force('challenge')", "Challenge", id="challenge", tooltip="Force a challenge next"),
        Binding("e", "force('end')", "End", id="end", tooltip="End the interview after this turn"),
        Binding("i", "write_question", "Ask", id="write_question", tooltip="Write the next question"),
        Binding("x", "stop", "Stop", id="stop", tooltip="Stop the session now (an answer in flight is cut; resumable)"),
        Binding("n", "other_session(1)", "Next session", show=False, id="next_session",
                tooltip="Show the next session of this run"),
        Binding("p", "other_session(-1)", "Previous session", show=False, id="prev_session",
                tooltip="Show the previous session of this run"),
        Binding("R", "resume_session", "Resume", id="resume_session",
                tooltip="Continue an interrupted or stopped session in this app"),
        Binding("l", "leaderboard", "Leaderboard", show=False, id="live_leaderboard",
                tooltip="Targets across sessions (the demo's reference target and local model side by side)"),
    ]

    def __init__(self) -> None:
        super().__init__(id="live")
        self.session_id: int | None = None
        self.run_id: int | None = None
        self.run_sessions: list[int] = []

    # -- what to show -------------------------------------------------------------------------
    def attach(self, run_id: int | None = None, session_id: int | None = None) -> None:
        """Follow a session (or the first unfinished session of a run)."""
        if run_id is not None:
            self.run_id = run_id
            db_work(self, self.viva.engine, _run_sessions, run_id, then=lambda ids: self._run_loaded(ids, session_id),
                    name=f"load run {run_id}")
        elif session_id is not None:
            self.run_id = None
            self.run_sessions = [session_id]
            self.follow(session_id)

    def _run_loaded(self, rows: list[dict[str, Any]], session_id: int | None) -> None:
        self.run_sessions = [r["id"] for r in rows]
        if not rows:
            self.notify(f"run {self.run_id} has no sessions", severity="error")
            return
        first = session_id or next((r["id"] for r in rows if r["status"] not in ("finished", "not_examined")),
                                   rows[0]["id"])
        self.follow(first)

    def follow(self, session_id: int) -> None:
        """Start following one session (the previous follower stops)."""
        self.session_id = session_id
        self.state = None
        self.sub_title = f"session {session_id}"
        follow_session(self, self.viva.engine, session_id)

    def header_extra(self) -> str:
        if len(self.run_sessions) > 1 and self.session_id in self.run_sessions:
            return f"run {self.run_id}: session {self.run_sessions.index(self.session_id) + 1} of " \
                   f"{len(self.run_sessions)} (n/p)"
        return ""

    # -- events -------------------------------------------------------------------------------
    def on_session_opened(self, message: SessionOpened) -> None:
        if message.session_id != self.session_id:
            return
        state = SessionState(message.session_id, message.row, message.criteria)
        state.version_labels = dict(message.labels)
        state.apply_all(message.events)
        if message.row.get("status") == "interrupted" and state.status in ("running", "paused"):
            state.status = "interrupted"  # its process is gone; the events stop mid-way
        self.state = state
        self.render_state()

    def on_session_events(self, message: SessionEvents) -> None:
        if self.state is None or message.session_id != self.session_id:
            return
        self.state.version_labels.update(message.labels)
        self.state.apply_all(message.events)
        self.render_state()

    def on_answer_streamed(self, message: AnswerStreamed) -> None:
        if self.state is None or message.session_id != self.session_id:
            return
        self.state.apply_stream(message.seq, message.turn, message.text)
        self.pane.refresh_turn(message.turn)

    def on_metrics_updated(self, message: MetricsUpdated) -> None:
        if self.state is None or message.session_id != self.session_id:
            return
        self.state.apply(message.seq, "metrics", message.metrics)
        self.render_selection()

    def on_run_ended(self, message: RunEnded) -> None:
        self.refresh_bindings()
        if message.run_id == self.run_id and len(self.run_sessions) > 1:
            self.notify("Every session of this run has ended: l shows the leaderboard, n / p the sessions.",
                        title=f"run {self.run_id}", timeout=10)

    # -- availability -------------------------------------------------------------------------
    def session_running(self) -> bool:
        state = self.state
        if state is None:
            return False
        if state.status in ("running", "paused"):
            return True
        return state.status == "created" and self.viva.is_executing(state.session_id)

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        if action in STEERING:
            if not self.session_running():
                return None
            if action in ADAPTIVE_ONLY and self.state is not None and self.state.protocol == "task":
                return None
            return True
        if action == "force":
            name = {"follow-up": "follow_up", "challenge": "challenge", "end": "end"}[str(parameters[0])]
            return self.check_action(name, ())
        if action == "other_session":
            return True if len(self.run_sessions) > 1 else None
        if action == "resume_session":
            state = self.state
            ok = state is not None and state.status in ("interrupted", "failed", "created", "stopped") \
                and not self.viva.is_executing(state.session_id)
            return True if ok else False  # in the footer exactly when it applies
        return super().check_action(action, parameters)

    # -- steering -----------------------------------------------------------------------------
    STEERING_KINDS = {"pause_resume": "pause", "follow_up": "force", "challenge": "force", "end": "force",
                      "write_question": "inject", "stop": "stop"}

    def steering_refusal(self) -> str | None:
        """Why the steering keys do nothing now (None: they apply): the session ended, or no runner
        is applying requests to it."""
        from engine.api import steering_refusal

        state = self.state
        if state is None or self.session_running():
            return None
        ended = steering_refusal(state.status, "inject")
        if ended is not None:
            return f"Session {state.session_id}: {ended.split(': ', 1)[0]}; nothing more is asked. " \
                   "o / a / u review its verdicts."
        return f"Session {state.session_id} is {state.status}: no runner applies requests to it" + \
            (" (R resumes it)." if self.check_action("resume_session", ()) else ".")

    def on_key(self, event: Any) -> None:
        """A steering key on a session it cannot steer (hidden from the footer) says why, not nothing."""
        super().on_key(event)
        if event._stop_propagation or self.state is None or self.session_running():
            return
        for binding in self._bindings.key_to_bindings.get(event.key, []):
            name = binding.action.split("(", 1)[0]
            ident = binding.id or name
            if ident in self.STEERING_KINDS or name in ("pause_resume", "force", "write_question", "stop"):
                why = self.steering_refusal()
                if why:
                    event.stop()
                    event.prevent_default()
                    self.notify(why, severity="warning", timeout=6)
                return

    def _control(self, fn: Any, *args: Any, what: str) -> None:
        state = self.state
        if state is None:
            return

        note = queue_note(state, fn.__name__, args[0] if args else None)

        def written(seq: int) -> None:
            # Show the request at once (the follower brings the same event a moment later),
            # unless the follower already went past it.
            if self.state is state and seq > state.last_seq:
                event = state.pending.get(seq)
                if event is None:
                    kind = fn.__name__
                    payload = {"action": args[0]} if kind == "force" else {"question": args[0]} if args else {}
                    state.pending[seq] = (kind, payload)
                    self.render_state()
            when = "an answer in flight is cut" if what == "stop" else "applied at the next step"
            self.notify(f"{what} requested; {note or when}", timeout=5)

        db_work(self, self.viva.engine, fn, state.session_id, *args, name=what, then=written)

    def will_be_paused(self) -> bool:
        """Whether the session is paused once the requests not yet applied are (what space toggles)."""
        state = self.state
        if state is None:
            return False
        paused = state.status == "paused"
        for seq in sorted(state.pending):
            kind = state.pending[seq][0]
            if kind in ("pause", "resume"):
                paused = kind == "pause"
        return paused

    def describe_binding(self, action: str) -> str | None:
        """Space says what it will do: Resume while paused (or a pause is on its way), else Pause."""
        if action == "pause_resume":
            return "Resume" if self.will_be_paused() else "Pause"
        return None

    def action_leaderboard(self) -> None:
        from tui.screens.leaderboard import LeaderboardScreen

        self.app.push_screen(LeaderboardScreen())

    def action_pause_resume(self) -> None:
        state = self.state
        if state is None:
            return
        if self.will_be_paused():
            self._control(resume, what="resume")
        else:
            self._control(pause, what="pause")

    def action_force(self, action: str) -> None:
        self._control(force, action, what=action if action != "end" else "end after this turn")

    def action_stop(self) -> None:
        self._control(stop, what="stop")

    def action_write_question(self) -> None:
        from tui.screens.dialogs import InjectDialog

        state = self.state
        if state is None:
            return
        nxt = len(state.turns)  # the turn in flight finishes first; yours comes after it

        def done(question: str | None) -> None:
            if question:
                self._control(inject, question, what="your question")

        self.app.push_screen(InjectDialog(nxt), done)

    def action_other_session(self, step: int) -> None:
        if len(self.run_sessions) < 2 or self.session_id not in self.run_sessions:
            return
        index = (self.run_sessions.index(self.session_id) + step) % len(self.run_sessions)
        self.follow(self.run_sessions[index])

    def action_resume_session(self) -> None:
        if self.state is not None:
            self.viva.resume_session(self.state.session_id)

    def after_rubric_saved(self, version_id: int | None) -> None:
        # A running session is told by a control event (the editor wrote it); the events of the
        # re-score arrive through the follower like everything else.
        self.refresh_bindings()


def queue_note(state: Any, kind: str, value: Any) -> str:
    """What a new steering request does to the ones already queued: a second forced action or a
    second written question replaces the first (the engine acknowledges the first as replaced); a
    forced action and a written question are both kept and applied in the order they were asked,
    one per turn."""
    steering = {"follow-up", "challenge"}
    queued = [(seq, k, p) for seq, (k, p) in sorted(state.pending.items())
              if (k == "force" and p.get("action") in steering) or k == "inject"]
    if kind == "force" and value in steering:
        same = [p["action"] for _, k, p in queued if k == "force"]
        other = any(k == "inject" for _, k, _ in queued)
        if same:
            return f"it replaces the queued {same[-1]}"
        if other:
            return "your written question comes first, then this one, a turn each"
    elif kind == "inject":
        if any(k == "inject" for _, k, _ in queued):
            return "it replaces the question you wrote before"
        forced = [p["action"] for _, k, p in queued if k == "force"]
        if forced:
            return f"the queued {forced[-1]} comes first, then your question, a turn each"
    return ""


def _run_sessions(engine: Engine, run_id: int) -> list[dict[str, Any]]:
    return engine.run_sessions(run_id)


# The requests the keys send; each function's name is the control's kind (shown as pending).
def pause(engine: Engine, session_id: int) -> int:
    """Ask the runner to pause."""
    return engine.pause(session_id)


def resume(engine: Engine, session_id: int) -> int:
    """Ask the runner to go on."""
    return engine.resume_session(session_id)


def stop(engine: Engine, session_id: int) -> int:
    """Ask the runner to stop."""
    return engine.stop(session_id)


def force(engine: Engine, session_id: int, action: str) -> int:
    """Force the next action."""
    return engine.force(session_id, action)


def inject(engine: Engine, session_id: int, question: str) -> int:
    """Ask the evaluator's question next."""
    return engine.inject(session_id, question)
