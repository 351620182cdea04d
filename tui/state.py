"""The state of one session as the app shows it, folded from the engine's event stream.

The live screen, the review screen and the compare screen all build a :class:`SessionState` by
applying events (docs/events.md) in order; widgets only render it. Nothing here computes a figure:
scores, Δs, cos, probabilities and the running metrics are copied from the events the engine wrote.
This module does not import Textual, so it can be tested (and replayed) on its own.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

ACTIVE = ("running", "paused")
"""Statuses in which a runner is (or should be) applying control events."""

ENDED = ("finished", "failed", "interrupted")


@dataclass
class Verdict:
    """The effective verdict on one criterion for one turn."""

    cid: str
    met: bool
    in_answer: bool | None
    rationale: str
    source: str
    original: Verdict | None = None
    """The verdict a human override replaced (the judge's stays on record)."""

    @property
    def overridden(self) -> bool:
        return self.source == "human"


@dataclass
class Turn:
    """One question and its answer, with the judge's figures once it is scored."""

    idx: int
    question: str
    action: str
    actor: str
    probs: list[float] | None = None
    answer: str = ""
    done: bool = False
    score: float | None = None
    delta: float | None = None
    cos: float | None = None
    summary: str | None = None
    rubric_version_id: int | None = None
    rescored: bool = False
    verdicts: dict[str, Verdict] = field(default_factory=dict)
    latency_ms: float | None = None
    tokens_in: int = 0
    tokens_out: int = 0
    rev: int = 0
    """Bumped on every change, so a widget re-renders only turns that changed."""

    @property
    def judged(self) -> bool:
        return self.score is not None

    @property
    def streaming(self) -> bool:
        return not self.done and bool(self.answer)

    def touch(self) -> None:
        self.rev += 1


@dataclass
class Step:
    """A point of a replay: the state after ``events[:position]``, with a label."""

    position: int
    label: str
    turn: int | None


class SessionState:
    """Everything the app shows about one session, built by :meth:`apply`.

    Args:
        session_id: the session.
        row: the session's row from the store (``sessions`` columns, effective status), if known.
        criteria: criteria of the session's rubric version before any event names them.
    """

    def __init__(self, session_id: int, row: dict[str, Any] | None = None,
                 criteria: list[dict[str, Any]] | None = None):
        self.session_id = session_id
        self.row: dict[str, Any] = dict(row or {})
        self.info: dict[str, Any] = {}
        self.status: str = self.row.get("status", "created")
        self.error: str | None = self.row.get("error")
        self.rubric_version_id: int | None = self.row.get("rubric_version_id")
        self.criteria_by_version: dict[int, list[dict[str, Any]]] = {}
        if criteria is not None and self.rubric_version_id is not None:
            self.criteria_by_version[self.rubric_version_id] = list(criteria)
        self.version_labels: dict[int, int] = {}
        self.turns: list[Turn] = []
        self.decision: dict[str, Any] | None = None
        self.metrics: dict[str, Any] = {}
        self.pending: dict[int, tuple[str, dict[str, Any]]] = {}
        """Control events written but not yet acknowledged by the runner: seq -> (kind, payload)."""
        self.ended: dict[str, Any] | None = None
        self.notes: list[str] = []
        self.last_seq = 0
        self.rev = 0

    # -- reading ------------------------------------------------------------------------------
    @property
    def protocol(self) -> str:
        return self.info.get("protocol") or self.row.get("protocol") or "adaptive"

    @property
    def target(self) -> str:
        return self.info.get("target") or self.row.get("target") or ""

    @property
    def item_id(self) -> int | None:
        return self.info.get("item_id") or self.row.get("item_id")

    @property
    def planned_turns(self) -> int | None:
        return self.info.get("turns")

    @property
    def active(self) -> bool:
        return self.status in ACTIVE

    def criteria(self, version_id: int | None = None) -> list[dict[str, Any]]:
        """Criteria of a rubric version (default: the one the session now scores with)."""
        vid = self.rubric_version_id if version_id is None else version_id
        if vid in self.criteria_by_version:
            return self.criteria_by_version[vid]
        if self.rubric_version_id in self.criteria_by_version:
            return self.criteria_by_version[self.rubric_version_id]
        return []

    def version_label(self, version_id: int | None) -> str:
        if version_id is None:
            return "-"
        number = self.version_labels.get(version_id)
        return f"v{number}" if number is not None else f"#{version_id}"

    def turn(self, idx: int | None) -> Turn | None:
        if idx is None or idx < 0 or idx >= len(self.turns):
            return None
        return self.turns[idx]

    def last_judged(self) -> Turn | None:
        for t in reversed(self.turns):
            if t.judged:
                return t
        return None

    def pending_kinds(self) -> list[str]:
        """Human-readable descriptions of interventions the runner has not applied yet."""
        out = []
        for kind, payload in self.pending.values():
            if kind == "force":
                action = payload.get("action")
                out.append("end after this turn" if action == "end" else f"next: {action}")
            elif kind == "inject":
                out.append("next: your question")
            elif kind == "rubric":
                out.append("re-score requested")
            else:
                out.append(f"{kind} requested")
        return out

    # -- folding ------------------------------------------------------------------------------
    def _turn_for(self, idx: int) -> Turn:
        while len(self.turns) <= idx:
            self.turns.append(Turn(idx=len(self.turns), question="", action="", actor=""))
        return self.turns[idx]

    def apply(self, seq: int, kind: str, payload: dict[str, Any]) -> None:
        """Fold one event into the state (events must come in ``seq`` order)."""
        self.last_seq = max(self.last_seq, seq)
        self.rev += 1
        handler = _HANDLERS.get(kind)
        if handler is not None:
            handler(self, seq, payload)
        elif kind.startswith("control."):
            self.pending[seq] = (kind.split(".", 1)[1], dict(payload))

    def apply_stream(self, seq: int, turn: int, text: str) -> None:
        """Set the answer streamed so far for a turn (the coalesced form of ``answer.delta``)."""
        self.last_seq = max(self.last_seq, seq)
        self.rev += 1
        t = self._turn_for(turn)
        if not t.done:
            t.answer = text
            t.touch()

    def apply_all(self, events: Any) -> None:
        """Fold a sequence of events (objects with ``seq``, ``kind``, ``payload``)."""
        for e in events:
            self.apply(e.seq, e.kind, e.payload)

    # -- handlers -----------------------------------------------------------------------------
    def _started(self, seq: int, p: dict[str, Any]) -> None:
        self.info.update(p)
        self.status = "running"
        self.error = None
        vid = p.get("rubric_version_id")
        if vid is not None:
            self.rubric_version_id = vid
            self.criteria_by_version[vid] = list(p.get("criteria") or [])
        if p.get("by") == "human":
            self.notes.append("resumed by the evaluator")

    def _decided(self, seq: int, p: dict[str, Any]) -> None:
        self.decision = dict(p)

    def _turn_started(self, seq: int, p: dict[str, Any]) -> None:
        t = self._turn_for(int(p["turn"]))
        t.question = p.get("question", "")
        t.action = p.get("action", "")
        t.actor = p.get("actor", "")
        t.probs = p.get("probs")
        t.answer, t.done = "", False
        t.rubric_version_id = self.rubric_version_id
        t.touch()

    def _delta(self, seq: int, p: dict[str, Any]) -> None:
        t = self._turn_for(int(p["turn"]))
        if not t.done:
            t.answer += p.get("text", "")
            t.touch()

    def _reset(self, seq: int, p: dict[str, Any]) -> None:
        t = self._turn_for(int(p["turn"]))
        t.answer = ""
        t.touch()

    def _done(self, seq: int, p: dict[str, Any]) -> None:
        t = self._turn_for(int(p["turn"]))
        t.answer = p.get("answer", t.answer)
        t.done = True
        t.latency_ms = p.get("latency_ms")
        t.tokens_in = p.get("tokens_in", 0)
        t.tokens_out = p.get("tokens_out", 0)
        t.touch()

    def _verdicts(self, seq: int, p: dict[str, Any]) -> None:
        t = self._turn_for(int(p["turn"]))
        t.score = p.get("score")
        t.delta = p.get("delta")
        t.cos = p.get("cos")
        t.summary = p.get("summary")
        t.rubric_version_id = p.get("rubric_version_id", t.rubric_version_id)
        t.rescored = bool(p.get("rescore"))
        t.done = True
        t.verdicts = {
            v["cid"]: Verdict(v["cid"], bool(v["met"]), v.get("in_answer"), v.get("rationale", ""),
                              v.get("source", "judge"))
            for v in p.get("verdicts", [])
        }
        t.touch()

    def _overridden(self, seq: int, p: dict[str, Any]) -> None:
        t = self._turn_for(int(p["turn"]))
        cid = p["cid"]
        prior = t.verdicts.get(cid)
        original = prior.original if prior is not None and prior.original is not None else prior
        t.verdicts[cid] = Verdict(cid, bool(p["met"]), None, p.get("note") or f"override by {p.get('by', 'human')}",
                                  "human", original)
        t.score = p.get("score", t.score)
        t.delta = p.get("delta", t.delta)
        t.touch()
        nxt = self.turn(t.idx + 1)
        if nxt is not None and nxt.judged:
            # The engine recomputed the next turn's Δs too; its value rides along when given.
            nxt.delta = p.get("next_delta") if "next_delta" in p else None
            nxt.touch()
        if p.get("session_score") is not None:
            self.metrics = {**self.metrics, "score": p["session_score"]}

    def _metrics(self, seq: int, p: dict[str, Any]) -> None:
        self.metrics = dict(p)

    def _rubric(self, seq: int, p: dict[str, Any]) -> None:
        vid = p["rubric_version_id"]
        self.rubric_version_id = vid
        self.criteria_by_version[vid] = list(p.get("criteria") or [])
        self.notes.append(f"now scoring with rubric {self.version_label(vid)}")

    def _intervention(self, seq: int, p: dict[str, Any]) -> None:
        self.pending.pop(p.get("control_seq"), None)

    def _paused(self, seq: int, p: dict[str, Any]) -> None:
        self.status = "paused"

    def _ended_early(self, seq: int, p: dict[str, Any]) -> None:
        self.ended = dict(p)
        reason = "stopped" if p.get("reason") == "stop" else "ended"
        self.notes.append(f"{reason} by the evaluator after turn {p.get('after_turn')}")

    def _stop_keyword(self, seq: int, p: dict[str, Any]) -> None:
        self.notes.append(f"examiner finished the task after turn {p.get('after_turn')}")

    def _finished(self, seq: int, p: dict[str, Any]) -> None:
        self.status = "finished"
        if p.get("metrics"):
            self.metrics = dict(p["metrics"])
        self.pending.clear()

    def _failed(self, seq: int, p: dict[str, Any]) -> None:
        self.status = "failed"
        self.error = p.get("error")
        self.pending.clear()

    def _interrupted(self, seq: int, p: dict[str, Any]) -> None:
        self.status = "interrupted"


_HANDLERS = {
    "session.started": SessionState._started,
    "session.resumed": SessionState._started,
    "policy.decided": SessionState._decided,
    "turn.started": SessionState._turn_started,
    "answer.delta": SessionState._delta,
    "answer.reset": SessionState._reset,
    "answer.done": SessionState._done,
    "verdicts": SessionState._verdicts,
    "verdict.overridden": SessionState._overridden,
    "metrics": SessionState._metrics,
    "rubric.updated": SessionState._rubric,
    "intervention": SessionState._intervention,
    "session.paused": SessionState._paused,
    "session.ended_early": SessionState._ended_early,
    "task.stop_keyword": SessionState._stop_keyword,
    "session.finished": SessionState._finished,
    "session.failed": SessionState._failed,
    "session.interrupted": SessionState._interrupted,
}


def replay_steps(events: list[Any]) -> list[Step]:
    """The points a review steps through: after every change of the figures (a judged turn, a
    re-scored turn, an override), and the very end.

    Args:
        events: the session's events in order (objects with ``kind`` and ``payload``).
    """
    steps: list[Step] = []
    last: tuple[str, dict[str, Any]] | None = None
    for i, e in enumerate(events):
        if e.kind in ("verdicts", "verdict.overridden"):
            last = (e.kind, e.payload)
        elif e.kind == "metrics" and last is not None:
            kind, p = last
            turn = int(p["turn"])
            if kind == "verdict.overridden":
                mark = "met" if p.get("met") else "not met"
                label = f"override: {p['cid']} on turn {turn} set to {mark}"
            elif p.get("rescore"):
                label = f"turn {turn} re-scored"
            else:
                label = f"turn {turn} judged"
            steps.append(Step(i + 1, label, turn))
            last = None
    if not steps or steps[-1].position < len(events):
        turn = steps[-1].turn if steps else None
        steps.append(Step(len(events), "end of record", turn))
    return steps


def state_at(session_id: int, row: dict[str, Any] | None, criteria: list[dict[str, Any]] | None,
             labels: dict[int, int], events: list[Any], position: int) -> SessionState:
    """The state after ``events[:position]`` (a replay point)."""
    state = SessionState(session_id, row, criteria)
    state.version_labels = dict(labels)
    state.apply_all(events[:position])
    if position < len(events) and state.status in ACTIVE:
        state.status = "replay"
    return state
