"""The view of one session, folded from its event stream (docs/events.md).

The app's live, review and compare screens, the CLI's live printer, reports and tests all build a
:class:`SessionView` by applying events in order; widgets only render it. Nothing here computes a
figure: scores, Δs, cos, probabilities and the running metrics are copied from the events the
engine wrote (the figures themselves come from :mod:`engine.metrics`).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from engine import events as ev

ACTIVE = ("running", "paused")
"""Statuses in which a runner is (or should be) applying control events."""

ENDED = ("finished", "not_examined", "failed", "interrupted", "stopped")


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
    carried_from: int | None = None
    """The turn whose override this verdict carries (not a human verdict given on this turn)."""

    @property
    def overridden(self) -> bool:
        """True when a human override replaced the judge's verdict."""
        return self.source == "human"


@dataclass
class Turn:
    """One question and its answer, with the judge's figures once it is scored.

    What a reader of the session's events shows, built event by event (a streamed answer, its verdicts, a
    revision counter): not the stored row the runner and protocols act on
    (:class:`engine.interview.session.Turn`), which this layer does not import.
    """

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
    rubric_judgement: dict[str, Any] | None = None
    """A rubric session's 0–5 judgement stored on this turn (the ``rubric.scored`` payload)."""
    extra: list[str] = field(default_factory=list)
    """Lines a protocol attaches to the turn (graded: its difficulty step, the extension's gold answer)."""
    partial: bool = False
    """The answer was cut by a stop: what arrived before it (not judged; asked again on resume)."""
    challenge: dict[str, Any] | None = None
    """A challenge turn's test once judged: the criteria it contested and whether the target kept them."""
    rev: int = 0
    """Bumped on every change, so a widget re-renders only turns that changed."""

    @property
    def judged(self) -> bool:
        """True once the turn has a score."""
        return self.score is not None

    @property
    def streaming(self) -> bool:
        """True while the answer is arriving: some text, not yet done."""
        return not self.done and not self.partial and bool(self.answer)

    def touch(self) -> None:
        """Mark the turn changed (bump ``rev``) so widgets re-render it."""
        self.rev += 1


@dataclass(frozen=True)
class Note:
    """A ``session.note`` (:class:`engine.events.SessionNote`) as the views show it.

    Attributes:
        turn: the turn it concerns (-1: the session as a whole).
        what: its kind (``prompt-trimmed``, ``cannot-judge``, ``turn-skipped``...).
        text: what was left out, skipped or not had, and why.
        at: the turn it is shown under: its own, else the latest turn when it was written (-1: none yet). A
            note on a turn not started yet (the examiner's prompt for the next question) waits on the last
            turn until that turn starts.
    """

    turn: int
    what: str
    text: str
    at: int

    @property
    def label(self) -> str:
        """Its kind in words: ``prompt trimmed``, ``cannot judge``, ``turn skipped``..."""
        return self.what.replace("-", " ") or "note"


@dataclass
class Step:
    """A point of a replay: the state after ``events[:position]``, with a label."""

    position: int
    label: str
    turn: int | None


class SessionView:
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
        self.rubric_judgement: dict[str, Any] | None = None
        """The latest ``rubric.scored`` payload of a rubric session (score 0–5, reasoning, status)."""
        self.notes: list[str] = []
        self.session_notes: list[Note] = []
        """The session's ``session.note`` events in order (what it went on without, and why)."""
        self.not_examined: str | None = None
        """Why the session examined nothing, once it ended ``not_examined`` (its ``session.finished`` reason)."""
        self.graded: list[dict[str, Any]] = []
        """graded: every question's step (phase, difficulty, right, gain, average, next difficulty)."""
        self.feedback: dict[str, Any] | None = None
        self.last_seq = 0
        self.rev = 0

    # -- reading ------------------------------------------------------------------------------
    @property
    def protocol(self) -> str:
        """The session's protocol: from its start event, else its row, else ``adaptive``."""
        return self.info.get("protocol") or self.row.get("protocol") or "adaptive"

    @property
    def target(self) -> str:
        """The target spec under test: from the start event, else the row (empty when unknown)."""
        return self.info.get("target") or self.row.get("target") or ""

    @property
    def item_id(self) -> int | None:
        """The benchmark item's id: from the start event, else the row."""
        return self.info.get("item_id") or self.row.get("item_id")

    @property
    def planned_turns(self) -> int | None:
        """The turns the session was started to run (None before its start event)."""
        return self.info.get("turns")

    @property
    def active(self) -> bool:
        """True while a runner is (or should be) applying control events: running or paused."""
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
        """A rubric version's label: ``vN`` by number, ``#id`` if the number is unknown, ``-`` for None."""
        if version_id is None:
            return "-"
        number = self.version_labels.get(version_id)
        return f"v{number}" if number is not None else f"#{version_id}"

    def turn(self, idx: int | None) -> Turn | None:
        """The turn at ``idx``, or None when ``idx`` is None or out of range."""
        if idx is None or idx < 0 or idx >= len(self.turns):
            return None
        return self.turns[idx]

    def last_judged(self) -> Turn | None:
        """The latest turn that has a score, or None."""
        for t in reversed(self.turns):
            if t.judged:
                return t
        return None

    def notes_under(self, idx: int) -> list[Note]:
        """The notes shown under turn ``idx``: those at it (:attr:`Note.at`), and under the last turn those
        at a turn not started yet."""
        last = idx == len(self.turns) - 1
        return [n for n in self.session_notes if n.at == idx or (last and n.at > idx)]

    def note_counts(self) -> list[tuple[str, int]]:
        """How many notes of each kind, in the order the kinds first came (``not-examined`` left out: the
        session's status and its reason say it)."""
        counts: dict[str, int] = {}
        for n in self.session_notes:
            if n.what != "not-examined":
                counts[n.label] = counts.get(n.label, 0) + 1
        return list(counts.items())

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
            if kind in (ev.SESSION_STARTED, ev.SESSION_RESUMED):
                self.info.update(payload)  # only the fields written (a resume by a human carries just ``by``)
            handler(self, seq, ev.decode(kind, payload))
        elif kind.startswith(ev.CONTROL_PREFIX):
            self.pending[seq] = (kind[len(ev.CONTROL_PREFIX):], dict(payload))

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

    # -- handlers (typed payloads from engine.events.decode) ---------------------------------------
    def _started(self, seq: int, p: ev.SessionStarted) -> None:
        self.status = "running"
        self.error = None
        for t in self.turns:
            if t.partial:  # a resumed session asks a cut turn again: its partial answer goes
                t.answer, t.partial = "", False
                t.touch()
        if p.rubric_version_id is not None:
            self.rubric_version_id = p.rubric_version_id
            self.criteria_by_version[p.rubric_version_id] = list(p.criteria or [])
        if p.by == "human":
            self.notes.append("resumed by the evaluator")
        elif p.resumed:
            # a new runner took the session over: an answer cut off mid-stream is asked again from
            # the start, so the pieces shown so far are dropped (the runner also writes answer.reset)
            for t in self.turns:
                if not t.done and t.answer:
                    t.answer = ""
                    t.touch()

    def _decided(self, seq: int, p: ev.PolicyDecided) -> None:
        self.decision = p.as_dict()

    def _turn_started(self, seq: int, p: ev.TurnStarted) -> None:
        t = self._turn_for(int(p.turn))
        t.question, t.action, t.actor, t.probs = p.question, p.action, p.actor, p.probs
        t.answer, t.done = "", False
        t.rubric_version_id = self.rubric_version_id
        t.touch()

    def _delta(self, seq: int, p: ev.AnswerDelta) -> None:
        t = self._turn_for(int(p.turn))
        if not t.done:
            t.answer += p.text
            t.touch()

    def _reset(self, seq: int, p: ev.AnswerReset) -> None:
        t = self._turn_for(int(p.turn))
        t.answer = ""
        t.touch()

    def _done(self, seq: int, p: ev.AnswerDone) -> None:
        t = self._turn_for(int(p.turn))
        t.answer = p.answer
        t.done = True
        t.latency_ms = p.latency_ms
        t.tokens_in, t.tokens_out = p.tokens_in, p.tokens_out
        t.touch()

    def _verdicts(self, seq: int, p: ev.Verdicts) -> None:
        t = self._turn_for(int(p.turn))
        summary = p.summary_text(lambda idx: self.turns[idx].summary if 0 <= idx < len(self.turns) else None)
        t.score, t.delta, t.cos, t.summary = p.score, p.delta, p.cos, summary
        if p.rubric_version_id is not None:
            t.rubric_version_id = p.rubric_version_id
            if p.criteria is not None:
                self.criteria_by_version[p.rubric_version_id] = list(p.criteria)
        t.rescored = bool(p.rescore)
        t.challenge = p.challenge
        t.done = True
        t.verdicts = {
            v["cid"]: Verdict(v["cid"], bool(v["met"]), v.get("in_answer"), v.get("rationale", ""),
                              v.get("source", "judge"))
            for v in p.verdicts
        }
        if not p.rescore:
            self._carry(t)
        t.touch()

    def _carry(self, t: Turn) -> None:
        """Show a newly judged turn's verdicts as the store scores them: an override on an earlier turn
        holds on this one until the judge changes its mind (the rule of :mod:`engine.events.overrides`,
        which ``carried_met`` applies to the turn's score); without this the Live checklist showed the
        judge's own verdict until the session was reopened."""
        from engine.events.overrides import TurnVerdicts, effective_verdicts_by_turn

        earlier = [u for u in self.turns if u.idx < t.idx and u.score is not None]
        if not any(v.source == "human" and v.carried_from is None for u in earlier for v in u.verdicts.values()):
            return
        stored = []
        for u in [*earlier, t]:
            tv = TurnVerdicts(u.idx, u.rubric_version_id)
            for v in u.verdicts.values():
                if v.source != "human":
                    tv.judge[v.cid] = v.met
                    continue
                if v.original is not None:
                    tv.judge[v.cid] = v.original.met
                if v.carried_from is None:
                    tv.human[v.cid] = v.met
            stored.append(tv)
        last = effective_verdicts_by_turn(stored)[-1]
        for cid, src in last.carried.items():
            prior = t.verdicts.get(cid)
            t.verdicts[cid] = Verdict(cid, last.met[cid], None, f"carried from the override on turn {src}", "human",
                                      prior, src)

    def _rubric_scored(self, seq: int, p: ev.RubricScored) -> None:
        judgement = p.as_dict()
        self.rubric_judgement = judgement
        t = self._turn_for(int(p.turn))
        t.rubric_judgement = judgement
        t.touch()

    def _overridden(self, seq: int, p: ev.VerdictOverridden) -> None:
        t = self._turn_for(int(p.turn))
        prior = t.verdicts.get(p.cid)
        original = prior.original if prior is not None and prior.original is not None else prior
        t.verdicts[p.cid] = Verdict(p.cid, bool(p.met), None, p.note or f"override by {p.by}", "human", original)
        if p.score is not None:
            t.score = p.score
        t.delta = p.delta
        t.touch()
        nxt = self.turn(t.idx + 1)
        if nxt is not None and nxt.judged:
            nxt.delta = p.next_delta  # the engine recomputed the next turn's Δs too
            nxt.touch()
        for later in getattr(p, "later", None) or []:  # the override holds from its turn on
            lt = self.turn(int(later["turn"]))
            if lt is None:
                continue
            lt.score, lt.delta = later["score"], later["delta"]
            for cid, held in (later.get("carried") or {}).items():
                prior = lt.verdicts.get(cid)
                original = prior.original if prior is not None and prior.original is not None else prior
                lt.verdicts[cid] = Verdict(cid, bool(held["met"]), None,
                                           f"carried from the override on turn {held['from']}", "human", original,
                                           int(held["from"]))
            lt.touch()
        if p.session_score is not None:
            self.metrics = {**self.metrics, "score": p.session_score}

    def _override_undone(self, seq: int, payload: Any) -> None:
        """An override taken back: the verdict in force again (the judge's, or an earlier human's)
        and the recomputed figures of its turn and the later ones."""
        p: dict[str, Any] = getattr(payload, "data", payload)
        t = self._turn_for(int(p["turn"]))
        cid = p["cid"]
        prior = t.verdicts.get(cid)
        original = prior.original if prior is not None and prior.original is not None else prior
        met = p.get("met")
        if p.get("source") == "human" and met is not None:
            t.verdicts[cid] = Verdict(cid, bool(met), None, p.get("note") or "override", "human", original)
        elif original is not None:
            t.verdicts[cid] = original
        if p.get("score") is not None:
            t.score = p["score"]
        t.delta = p.get("delta")
        t.touch()
        for later in p.get("later") or []:
            lt = self.turn(int(later["turn"]))
            if lt is None:
                continue
            lt.score, lt.delta = later["score"], later["delta"]
            carried = later.get("carried") or {}
            for c, v in list(lt.verdicts.items()):
                if v.carried_from is not None and c not in carried and v.original is not None:
                    lt.verdicts[c] = v.original  # the carried override ended with the undo
            for c, held in carried.items():
                prior = lt.verdicts.get(c)
                original = prior.original if prior is not None and prior.original is not None else prior
                lt.verdicts[c] = Verdict(c, bool(held["met"]), None, f"carried from the override on turn {held['from']}",
                                         "human", original, int(held["from"]))
            lt.touch()
        if p.get("session_score") is not None:
            self.metrics = {**self.metrics, "score": p["session_score"]}

    def _metrics(self, seq: int, p: dict[str, Any]) -> None:
        self.metrics = dict(p)
        if "scores" not in p:  # written without the list since schema 7: every judged turn's score
            self.metrics["scores"] = [t.score for t in self.turns if t.score is not None]

    def _rubric(self, seq: int, p: ev.RubricUpdated) -> None:
        self.rubric_version_id = p.rubric_version_id
        self.criteria_by_version[p.rubric_version_id] = list(p.criteria or [])
        self.notes.append(f"now scoring with rubric {self.version_label(p.rubric_version_id)}")

    def _intervention(self, seq: int, p: ev.Intervention) -> None:
        self.pending.pop(p.control_seq, None)

    def _paused(self, seq: int, p: ev.SessionPaused) -> None:
        self.status = "paused"

    def _ended_early(self, seq: int, p: ev.SessionEndedEarly) -> None:
        self.ended = p.as_dict()
        if p.reason == "questions-exhausted":
            self.notes.append(f"every question of the item was asked by turn {p.after_turn}")
            return
        reason = "stopped" if p.reason == "stop" else "ended"
        self.notes.append(f"{reason} by the evaluator after turn {p.after_turn}")

    def _stop_keyword(self, seq: int, p: ev.TaskStopKeyword) -> None:
        self.notes.append(f"examiner finished the task after turn {p.after_turn}")

    def _finished(self, seq: int, p: ev.SessionFinished) -> None:
        self.status = p.status or "finished"
        if self.status == ev.NOT_EXAMINED:
            self.not_examined = p.reason or "no question was answered"
            self.notes.append(f"not examined: {self.not_examined}")
        if p.metrics:
            self.metrics = dict(p.metrics)
        self.pending.clear()

    def _touch_last(self) -> None:
        """The last turn is drawn again (an unanswered one says why it has no answer)."""
        if self.turns:
            self.turns[-1].touch()

    def _failed(self, seq: int, p: ev.SessionFailed) -> None:
        self.status = "failed"
        self.error = p.error
        self.pending.clear()
        self._touch_last()

    def _interrupted(self, seq: int, p: ev.SessionInterrupted) -> None:
        self.status = "interrupted"
        self._touch_last()

    def _stopped(self, seq: int, p: ev.SessionStopped) -> None:
        self.status = "stopped"
        self.pending.clear()
        self._touch_last()
        if p.turn is not None:
            t = self._turn_for(int(p.turn))
            t.answer, t.partial, t.done = p.partial, True, False
            t.touch()
            self.notes.append(f"stopped by the evaluator during turn {p.turn} (partial answer kept; "
                              "resume asks it again)")
        else:
            self.notes.append(f"stopped by the evaluator after turn {p.after_turn} (resumable)")

    # graded (JudgeAgent): the figures come from the engine's events, as written
    def _graded_step(self, seq: int, p: ev.GradedStep) -> None:
        t = self._turn_for(int(p.turn))
        mark = "right" if p.correct else "wrong"
        if p.gain is None:
            t.extra.append(f"graded {p.phase}: {mark} (re-asked with the suggestions)")
        else:
            t.extra.append(f"graded {p.phase} at {p.difficulty}: {mark}, gain {p.gain:+g}, average {p.average:.2f}"
                           f" -> next {p.next_difficulty}")
        self.graded.append(p.as_dict())
        t.touch()

    def _graded_extension(self, seq: int, p: ev.GradedExtension) -> None:
        t = self._turn_for(int(p.turn))
        t.extra.append(f"extension question at {p.difficulty}; gold answer: {', '.join(p.gold)}; "
                       f"knowledge path chunks {p.path}")
        t.touch()

    def _graded_feedback(self, seq: int, p: ev.GradedFeedback) -> None:
        self.feedback = p.as_dict()
        label = "feedback (offline template)" if p.offline else "feedback"
        if self.turns:
            self.turns[-1].extra.append(f"{label}: {p.comprehensive_performance} Suggestions: {p.suggestions}")
            self.turns[-1].touch()

    def _session_note(self, seq: int, p: ev.SessionNote) -> None:
        turn = int(p.turn)
        at = turn if turn >= 0 else len(self.turns) - 1
        self.session_notes.append(Note(turn, p.what, p.text, at))
        shown = self.turn(min(at, len(self.turns) - 1))
        if shown is not None:
            shown.touch()

    def _graded_note(self, seq: int, p: ev.GradedNote) -> None:
        self.notes.append(p.text)
        if self.turns:
            self.turns[-1].extra.append(p.text)
            self.turns[-1].touch()


_HANDLERS = {
    ev.SESSION_STARTED: SessionView._started,
    ev.SESSION_RESUMED: SessionView._started,
    ev.POLICY_DECIDED: SessionView._decided,
    ev.TURN_STARTED: SessionView._turn_started,
    ev.ANSWER_DELTA: SessionView._delta,
    ev.ANSWER_RESET: SessionView._reset,
    ev.ANSWER_DONE: SessionView._done,
    ev.VERDICTS: SessionView._verdicts,
    ev.VERDICT_OVERRIDDEN: SessionView._overridden,
    ev.VERDICT_OVERRIDE_UNDONE: SessionView._override_undone,
    ev.RUBRIC_SCORED: SessionView._rubric_scored,
    ev.METRICS: SessionView._metrics,
    ev.RUBRIC_UPDATED: SessionView._rubric,
    ev.INTERVENTION: SessionView._intervention,
    ev.SESSION_PAUSED: SessionView._paused,
    ev.SESSION_ENDED_EARLY: SessionView._ended_early,
    ev.TASK_STOP_KEYWORD: SessionView._stop_keyword,
    ev.SESSION_FINISHED: SessionView._finished,
    ev.SESSION_FAILED: SessionView._failed,
    ev.SESSION_INTERRUPTED: SessionView._interrupted,
    ev.SESSION_STOPPED: SessionView._stopped,
    ev.GRADED_STEP: SessionView._graded_step,
    ev.GRADED_EXTENSION: SessionView._graded_extension,
    ev.GRADED_FEEDBACK: SessionView._graded_feedback,
    ev.GRADED_NOTE: SessionView._graded_note,
    ev.SESSION_NOTE: SessionView._session_note,
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
        if e.kind in (ev.VERDICTS, ev.VERDICT_OVERRIDDEN, ev.VERDICT_OVERRIDE_UNDONE):
            last = (e.kind, e.payload)
        elif e.kind == ev.METRICS and last is not None:
            kind, p = last
            turn = int(p["turn"])
            if kind == ev.VERDICT_OVERRIDDEN:
                mark = "met" if p.get("met") else "not met"
                label = f"override: {p['cid']} on turn {turn} set to {mark}"
            elif kind == ev.VERDICT_OVERRIDE_UNDONE:
                label = f"override undone: {p['cid']} on turn {turn}"
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
             labels: dict[int, int], events: list[Any], position: int) -> SessionView:
    """The state after ``events[:position]`` (a replay point)."""
    state = SessionView(session_id, row, criteria)
    state.version_labels = dict(labels)
    state.apply_all(events[:position])
    if position < len(events) and state.status in ACTIVE:
        state.status = "replay"
    return state


SessionState = SessionView
"""The name the app used before the fold moved into the engine."""
