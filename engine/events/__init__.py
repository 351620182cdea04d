"""The event stream's contract in code: kinds, typed payloads, and the fold into a session view.

``docs/events.md`` is the contract; this module is its one reader and writer. Kinds are constants;
each payload is a dataclass (:data:`PAYLOADS` maps a kind to its class). Writers build the dataclass
and the store keeps ``asdict(payload)``; readers call :func:`decode`, which accepts events written
by any earlier version (missing fields take their defaults, unknown fields are ignored, unknown
kinds decode to :class:`Unknown`). :class:`~engine.events.fold.SessionView` folds events into what the
app, the CLI printer, reports and tests show.
"""

from __future__ import annotations

import copy
from dataclasses import dataclass, field, fields
from typing import Any


@dataclass(frozen=True)
class Event:
    """One row of the append-only event log (the store writes and reads them: ``Store.events``)."""

    seq: int
    session_id: int | None
    ts: float
    kind: str
    payload: dict[str, Any]


# -- kinds ----------------------------------------------------------------------------------------
SESSION_STARTED = "session.started"
SESSION_RESUMED = "session.resumed"
POLICY_DECIDED = "policy.decided"
TURN_STARTED = "turn.started"
ANSWER_DELTA = "answer.delta"
ANSWER_RESET = "answer.reset"
ANSWER_DONE = "answer.done"
VERDICTS = "verdicts"
METRICS = "metrics"
RUBRIC_UPDATED = "rubric.updated"
INTERVENTION = "intervention"
SESSION_PAUSED = "session.paused"
SESSION_ENDED_EARLY = "session.ended_early"
TASK_STOP_KEYWORD = "task.stop_keyword"
SESSION_FINISHED = "session.finished"
SESSION_FAILED = "session.failed"
SESSION_INTERRUPTED = "session.interrupted"
SESSION_STOPPED = "session.stopped"
VERDICT_OVERRIDDEN = "verdict.overridden"
VERDICT_OVERRIDE_UNDONE = "verdict.override_undone"
"""An evaluator took back their latest override of a verdict (the row is removed; this event keeps the record)."""
SESSION_RATED = "session.rated"
RUBRIC_SCORED = "rubric.scored"
GRADED_STEP = "graded.step"
GRADED_EXTENSION = "graded.extension"
GRADED_FEEDBACK = "graded.feedback"
GRADED_NOTE = "graded.note"
SESSION_NOTE = "session.note"
NOT_EXAMINED = "not_examined"
"""The final status of a session that ended with no answered turn (issue 23): it examined nothing."""
FINAL = ("finished", NOT_EXAMINED)
"""The statuses of a session that ended for good: never run again by a resume."""
CONTROL_PREFIX = "control."
CONTROL_PAUSE = "control.pause"
CONTROL_RESUME = "control.resume"
CONTROL_STOP = "control.stop"
CONTROL_FORCE = "control.force"
CONTROL_INJECT = "control.inject"
CONTROL_RUBRIC = "control.rubric"


# -- payloads -------------------------------------------------------------------------------------
@dataclass
class Payload:
    """Base of every typed payload; ``kind`` is the event kind it is written under."""

    kind = ""

    def as_dict(self) -> dict[str, Any]:
        """The JSON object stored in ``events.payload``: what ``dataclasses.asdict`` gives (nested payloads
        as dicts, containers copied, so redacting the stored form never touches this object), without its
        deep copy of every scalar (a payload is emitted several times per turn)."""
        return {f.name: _plain(getattr(self, f.name)) for f in fields(self)}


def _plain(value: Any) -> Any:
    """A payload field as stored: dataclasses as dicts, lists/tuples/dicts copied, scalars as they are."""
    if isinstance(value, str | int | float | bool) or value is None:
        return value
    if isinstance(value, list | tuple):
        return type(value)(_plain(v) for v in value)
    if isinstance(value, dict):
        return {k: _plain(v) for k, v in value.items()}
    if hasattr(value, "__dataclass_fields__") and not isinstance(value, type):
        return {f.name: _plain(getattr(value, f.name)) for f in fields(value)}
    return copy.deepcopy(value)


@dataclass
class SessionStarted(Payload):
    """A runner started (``resumed`` false) or resumed a session; also written with ``by: human``
    under ``session.resumed`` when a pause ends."""

    kind = SESSION_STARTED
    item_id: int | None = None
    benchmark: str = ""
    topic: str = ""
    question: str = ""
    protocol: str = "adaptive"
    target: str = ""
    kernel: str = ""
    kernel_offline: bool = False
    policy: str | None = None
    policy_version: str = ""
    turns: int | None = None
    rubric_version_id: int | None = None
    criteria: list[dict[str, Any]] = field(default_factory=list)
    resumed: bool = False
    by: str | None = None


@dataclass
class PolicyDecided(Payload):
    """The policy chose the action of turn ``turn`` from ``state``."""

    kind = POLICY_DECIDED
    turn: int = 0
    state: list[float] | None = None
    probs: list[float] | None = None
    action: str = ""
    actor: str = ""


@dataclass
class TurnStarted(Payload):
    """Turn ``turn`` asks ``question``."""

    kind = TURN_STARTED
    turn: int = 0
    question: str = ""
    action: str = ""
    actor: str = ""
    probs: list[float] | None = None


@dataclass
class AnswerDelta(Payload):
    """The next piece of a streamed answer."""

    kind = ANSWER_DELTA
    turn: int = 0
    text: str = ""


@dataclass
class AnswerReset(Payload):
    """A dropped stream is retried: discard the pieces shown so far."""

    kind = ANSWER_RESET
    turn: int = 0


@dataclass
class AnswerDone(Payload):
    """The whole answer of a turn."""

    kind = ANSWER_DONE
    turn: int = 0
    answer: str = ""
    latency_ms: float | None = None
    tokens_in: int = 0
    tokens_out: int = 0


@dataclass
class Verdicts(Payload):
    """A turn judged (or re-judged after a rubric edit: ``rescore``)."""

    kind = VERDICTS
    turn: int = 0
    rubric_version_id: int | None = None
    score: float | None = None
    delta: float | None = None
    cos: float | None = None
    summary: str | None = None
    rescore: bool = False
    verdicts: list[dict[str, Any]] = field(default_factory=list)
    raw_score: float | None = None
    criteria: list[dict[str, Any]] | None = None
    """The criteria of ``rubric_version_id`` when they are not the session's (graded: each base
    question is its own item with its own rubric)."""
    summary_base: int | None = None
    """With ``summary_delta``: the turn whose summary this one edits (``summary`` is then null)."""
    summary_delta: list[Any] | None = None
    """The summary as an edit of turn ``summary_base``'s (:mod:`engine.events.encode`)."""
    challenge: dict[str, Any] | None = None
    """A challenge turn's test (issue 33): ``{"contested": [criterion ids], "outcome": "kept" | "abandoned" |
    "untested"}`` (:func:`engine.interview.protocols.adaptive.challenge_outcome`); None on other turns."""

    def summary_text(self, summary_of: Any) -> str | None:
        """The turn's summary: ``summary``, or the delta applied to ``summary_of(summary_base)``."""
        from engine.events.encode import decode_summary

        return decode_summary(self.summary, self.summary_base, self.summary_delta, summary_of)


@dataclass
class RubricScored(Payload):
    """A rubric (SedarEval) session scored once at its end, on turn ``turn`` (the last).

    ``score`` is the 0–5 score (None when the judge could not score: ``status`` ``cannot judge``);
    ``reasoning`` is the judge's scoring process (or, with ``offline_estimate``, the point-coverage
    account of the offline free-text judge); ``attempts`` counts the judge's replies read (first
    ask and re-asks), ``problems`` why each unusable one was rejected; ``prompt_source`` is
    ``auto_prompt`` (the item's own judge prompt), ``rubric`` (built from the rubric) or
    ``coverage`` (offline estimate, no LLM).
    """

    kind = RUBRIC_SCORED
    turn: int = 0
    rubric_version_id: int | None = None
    score: float | None = None
    max_score: float = 5.0
    status: str = "scored"
    reasoning: str = ""
    attempts: int = 0
    problems: list[str] = field(default_factory=list)
    offline_estimate: bool = False
    prompt_source: str = ""
    rescore: bool = False


@dataclass
class VerdictOverridden(Payload):
    """An evaluator overrode a verdict; the figures were recomputed at once."""

    kind = VERDICT_OVERRIDDEN
    turn: int = 0
    cid: str = ""
    met: bool = False
    score: float | None = None
    delta: float | None = None
    next_delta: float | None = None
    session_score: float | None = None
    note: str = ""
    by: str = "human"
    later: list[dict[str, Any]] = field(default_factory=list)
    """Every later judged turn's recomputed ``{turn, score, delta, carried}`` (the override holds
    from its turn on; ``carried``: criterion id -> ``{met, from}``)."""
    confirm: bool = False
    """True when the human verdict equals the judge's (a confirmation, not a change)."""


@dataclass
class RubricUpdated(Payload):
    """The session now scores with another rubric version."""

    kind = RUBRIC_UPDATED
    rubric_version_id: int = 0
    criteria: list[dict[str, Any]] = field(default_factory=list)


@dataclass
class Intervention(Payload):
    """A ``control.*`` event was applied (``control_seq``); ``details`` holds what it carried."""

    kind = INTERVENTION
    control_seq: int | None = None
    control: str = ""
    details: dict[str, Any] = field(default_factory=dict)

    def as_dict(self) -> dict[str, Any]:
        """Stored flat: ``{control_seq, kind, **details}`` (the format of docs/events.md)."""
        return {"control_seq": self.control_seq, "kind": self.control, **self.details}

    @classmethod
    def from_dict(cls, payload: dict[str, Any]) -> Intervention:
        """Read the flat stored form."""
        rest = {k: v for k, v in payload.items() if k not in ("control_seq", "kind")}
        return cls(payload.get("control_seq"), payload.get("kind", ""), rest)


@dataclass
class SessionPaused(Payload):
    """The runner is paused."""

    kind = SESSION_PAUSED


@dataclass
class SessionEndedEarly(Payload):
    """The evaluator stopped or ended the session after ``after_turn``."""

    kind = SESSION_ENDED_EARLY
    after_turn: int = -1
    reason: str = "end"


@dataclass
class TaskStopKeyword(Payload):
    """The TaskWeaver examiner said ``TASK_FINISHED``."""

    kind = TASK_STOP_KEYWORD
    after_turn: int = -1
    message: str = ""


@dataclass
class SessionFinished(Payload):
    """The session ended normally: ``status`` ``finished``, or ``not_examined`` when no question was
    answered (nothing was examined; ``reason`` says why). Events written before ``status`` existed read
    ``finished``."""

    kind = SESSION_FINISHED
    score: float | None = None
    metrics: dict[str, Any] = field(default_factory=dict)
    status: str = "finished"
    reason: str = ""


@dataclass
class SessionFailed(Payload):
    """The session failed; ``error`` says why."""

    kind = SESSION_FAILED
    error: str = ""


@dataclass
class SessionInterrupted(Payload):
    """The session was cancelled (it can be resumed)."""

    kind = SESSION_INTERRUPTED


@dataclass
class SessionStopped(Payload):
    """The evaluator stopped the session (status ``stopped``, resumable). ``after_turn`` is the last
    turn with a whole answer; when a target call was cut, ``turn`` is its turn and ``partial`` the
    answer received so far (kept as partial: not judged, and asked again on resume)."""

    kind = SESSION_STOPPED
    after_turn: int = -1
    turn: int | None = None
    partial: str = ""


@dataclass
class SessionRated(Payload):
    """The judge's 1–10 ratings of a finished adaptive conversation (Professionalism: accuracy,
    user_satisfaction, clarity; Stability: coherence, question_handling, challenge_handling);
    ``ratings`` is empty and ``note`` says why when the kernel is offline (never a number)."""

    kind = SESSION_RATED
    ratings: dict[str, int] = field(default_factory=dict)
    rationale: str = ""
    note: str = ""


@dataclass
class GradedStep(Payload):
    """graded: a question judged; the difficulty track after it (``gain``/``average``/``next`` are
    null for a validation re-ask, which does not count towards the track)."""

    kind = GRADED_STEP
    turn: int = 0
    phase: str = "base"
    difficulty: str = "medium"
    correct: bool = False
    gain: float | None = None
    average: float | None = None
    next_difficulty: str | None = None


@dataclass
class GradedExtension(Payload):
    """graded: an extension question is about to be asked at turn ``turn``: its difficulty, its gold
    answer (for the judge and the evaluator, never the target) and the path's chunks."""

    kind = GRADED_EXTENSION
    turn: int = 0
    difficulty: str = "easy"
    gold: list[str] = field(default_factory=list)
    path: list[int] = field(default_factory=list)


@dataclass
class GradedFeedback(Payload):
    """graded: the batch's feedback (``offline``: the offline kernel's labelled template)."""

    kind = GRADED_FEEDBACK
    flaws_knowledge: str = ""
    flaws_capability: str = ""
    comprehensive_performance: str = ""
    suggestions: str = ""
    offline: bool = False


@dataclass
class GradedNote(Payload):
    """graded: what the protocol could not do and why (``stops_extension``: no more extension rounds)."""

    kind = GRADED_NOTE
    text: str = ""
    stops_extension: bool = False


@dataclass
class SessionNote(Payload):
    """What a session went on without, because a model's reply was unusable (a bad reply costs a turn,
    never the session). ``what``: ``cannot-judge`` (the turn's judgement could not be had: the turn is
    left out of every figure and counted), ``turn-skipped`` (no usable question), ``not-rated``,
    ``feedback-unavailable`` (graded: a labelled template stands in), ``not-examined`` (the session ended with
    no answered turn: its status is ``not_examined``), ``prompt-trimmed`` (a prompt was cut to fit the model's
    context: what was left out), ``context-learned`` (a server's overflow answer named the model's context, which
    no ``/models``, ``/props`` or ``context:`` had said: prompts are sized to it from then on), ``repairs-given-up``
    (a kind of call whose repairs failed in :data:`engine.llm.client.FUTILE_ROUNDS` calls in a row is repaired no
    more in the session); ``turn`` is the turn concerned (-1: the session); ``text`` says why."""

    kind = SESSION_NOTE
    turn: int = -1
    what: str = ""
    text: str = ""


@dataclass
class Control(Payload):
    """A request to a session's runner (``control.<name>``): pause, resume, stop, force, inject, rubric."""

    name: str = ""
    action: str | None = None
    question: str | None = None
    version_id: int | None = None

    @property
    def event_kind(self) -> str:  # noqa: D102
        return CONTROL_PREFIX + self.name

    def as_dict(self) -> dict[str, Any]:
        """Only the fields the control carries."""
        return {k: v for k, v in (("action", self.action), ("question", self.question),
                                  ("version_id", self.version_id)) if v is not None}


@dataclass
class Unknown(Payload):
    """An event of a kind this version does not know (kept, never an error)."""

    name: str = ""
    data: dict[str, Any] = field(default_factory=dict)


PAYLOADS: dict[str, type[Payload]] = {cls.kind: cls for cls in (
    SessionStarted, PolicyDecided, TurnStarted, AnswerDelta, AnswerReset, AnswerDone, Verdicts,
    VerdictOverridden, RubricUpdated, Intervention, SessionPaused, SessionEndedEarly, TaskStopKeyword,
    SessionFinished, SessionFailed, SessionInterrupted, SessionStopped, SessionRated, GradedStep,
    GradedExtension, GradedFeedback, GradedNote, RubricScored, SessionNote)}
PAYLOADS[SESSION_RESUMED] = SessionStarted
PAYLOADS[METRICS] = dict  # type: ignore[assignment]  # the figures of engine.metrics.sessions.session_metrics


def kind_of(payload: Payload) -> str:
    """The event kind a payload is written under."""
    if isinstance(payload, Control):
        return payload.event_kind
    return payload.kind


def decode(kind: str, payload: dict[str, Any]) -> Any:
    """A stored payload as its typed form (``metrics`` stays a dict of figures)."""
    if kind == METRICS:
        return dict(payload)
    if kind.startswith(CONTROL_PREFIX):
        return Control(kind[len(CONTROL_PREFIX):], payload.get("action"), payload.get("question"),
                       payload.get("version_id"))
    cls = PAYLOADS.get(kind)
    if cls is None:
        return Unknown(kind, dict(payload))
    if cls is Intervention:
        return Intervention.from_dict(payload)
    names = {f.name for f in fields(cls)}
    return cls(**{k: v for k, v in payload.items() if k in names})


__all__ = [name for name in dir() if name.isupper() or name[:1].isupper()] + ["decode", "kind_of", "Event"]
