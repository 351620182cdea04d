"""The app's session state is the engine's fold of the event stream (:mod:`engine.events.fold`)."""

from engine.events.fold import (
    ACTIVE,
    ENDED,
    Note,
    SessionState,
    SessionView,
    Step,
    Turn,
    Verdict,
    replay_steps,
    state_at,
)

__all__ = ["ACTIVE", "ENDED", "Note", "SessionState", "SessionView", "Step", "Turn", "Verdict", "replay_steps", "state_at"]
