"""Messages from the engine's workers to the screens.

Workers read the store in threads and post these; widgets never read the store themselves.
Every string a message carries passes :func:`engine.termsafe.termsafe` in its constructor (what a
target, an endpoint or a benchmark said is shown with its controls visible, never emitted); the
store keeps the text as it was.
High-frequency messages (a streamed answer, the metrics after each change, the session list)
implement ``can_replace`` so Textual's queue keeps only the newest when several are waiting:
each carries a complete value (the whole answer so far, the whole metrics snapshot), so dropping
an older one loses nothing.
"""

from __future__ import annotations

from typing import Any

from textual.message import Message

from engine.events import Event
from engine.termsafe import termsafe_value as safe


class SessionOpened(Message):
    """A follower loaded a session: its row, the criteria it starts with and its backlog of events."""

    bubble = False  # for the screen that asked; nothing above it listens

    def __init__(self, session_id: int, row: dict[str, Any], criteria: list[dict[str, Any]],
                 labels: dict[int, int], events: list[Event]):
        super().__init__()
        self.session_id = session_id
        self.row = safe(row)
        self.criteria = safe(criteria)
        self.labels = labels
        self.events = safe(events)


class SessionEvents(Message):
    """New events of a followed session, in order (none of them a streamed piece or metrics)."""

    bubble = False  # for the screen that asked; nothing above it listens

    def __init__(self, session_id: int, events: list[Event], labels: dict[int, int] | None = None):
        super().__init__()
        self.session_id = session_id
        self.events = safe(events)
        self.labels = labels or {}


class AnswerStreamed(Message):
    """The answer of a turn so far (coalesced: a newer one for the same turn replaces it)."""

    bubble = False  # for the screen that asked; nothing above it listens

    def __init__(self, session_id: int, seq: int, turn: int, text: str):
        super().__init__()
        self.session_id = session_id
        self.seq = seq
        self.turn = turn
        self.text = safe(text)

    def can_replace(self, message: Message) -> bool:
        return (isinstance(message, AnswerStreamed) and message.session_id == self.session_id
                and message.turn == self.turn)


class MetricsUpdated(Message):
    """The session's figures after a change (coalesced: a newer snapshot replaces it)."""

    bubble = False  # for the screen that asked; nothing above it listens

    def __init__(self, session_id: int, seq: int, metrics: dict[str, Any]):
        super().__init__()
        self.session_id = session_id
        self.seq = seq
        self.metrics = safe(metrics)

    def can_replace(self, message: Message) -> bool:
        return isinstance(message, MetricsUpdated) and message.session_id == self.session_id


class SessionRowsChanged(Message):
    """Session rows that changed (read with the filter ``query``): ``rows`` to update or add,
    ``gone`` no longer listed, ``total`` the new filtered count (None: unchanged); ``reset``: reload
    the first page instead."""

    bubble = False  # for the screen that asked; nothing above it listens

    def __init__(self, query: str, rows: list[dict[str, Any]], gone: list[int], total: int | None,
                 reset: bool = False):
        super().__init__()
        self.query = query
        self.rows = safe(rows)
        self.gone = gone
        self.total = total
        self.reset = reset


class BenchmarksChanged(Message):
    """The benchmarks after one was added, removed or changed."""

    bubble = False

    def __init__(self, benchmarks: list[Any]):
        super().__init__()
        self.benchmarks = safe(benchmarks)

    def can_replace(self, message: Message) -> bool:
        return isinstance(message, BenchmarksChanged)


class TurnSelected(Message):
    """The interview pane's selected turn changed."""

    def __init__(self, turn: int | None, pane: Any = None):
        super().__init__()
        self.turn = turn
        self.pane = pane

    @property
    def control(self) -> Any:
        return self.pane


class CriterionSelected(Message):
    """The rubric checklist's highlighted criterion changed."""

    def __init__(self, cid: str | None):
        super().__init__()
        self.cid = cid


class RunStarted(Message):
    """The app began executing a run; ``sessions`` are its session ids."""

    def __init__(self, run_id: int, sessions: list[int]):
        super().__init__()
        self.run_id = run_id
        self.sessions = sessions


class RunEnded(Message):
    """A run the app executed is over; ``errors`` maps session id to error message or None."""

    def __init__(self, run_id: int, errors: dict[int, str | None]):
        super().__init__()
        self.run_id = run_id
        self.errors = safe(errors)


class SessionRescored(Message):
    """The app finished re-scoring a session's stored answers under a new rubric version."""

    def __init__(self, session_id: int, version_id: int):
        super().__init__()
        self.session_id = session_id
        self.version_id = version_id
