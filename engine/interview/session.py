"""One owner for a session's state: its turns, verdicts, status and score.

Every write of a turn or a verdict goes through :class:`Session` (the runner, re-scoring and a
human override alike), and the domain rules live here once:

- **effective verdict**: of a turn's verdict rows under a rubric version, the latest row per
  criterion wins (a human override is a later row; the judge's stays on record);
- **turn score** ``s_t``: the protocol's rule (``Protocol.score``) over the effective verdicts;
- **Δs_t** = ``s_t − s_{t−1}`` for protocols that score every turn (undefined at t = 0);
- **session score** = 100 × the score of the last judged turn (``None`` before any is judged).

Each write is one transaction together with its events (docs/events.md).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field, fields, replace
from typing import Any

from engine import events as ev
from engine.bench.items import get_item
from engine.bench.model import Criterion, Item
from engine.bench.rubric import get_version
from engine.events.encode import encode_summary
from engine.interview import prompts
from engine.judge.base import TurnView, Verdict
from engine.llm import Usage
from engine.redact import redact
from engine.store import Store, dumps, loads, now_iso
from engine.store.texts import fill_summaries, get_text, put_text

FOLLOW_UP, CHALLENGE, HUMAN, INITIAL, TASK = "follow-up", "challenge", "human", "initial", "task"
CANNOT_JUDGE = "cannot judge"
"""A turn whose judgement could not be had (the judge's reply stayed unusable after its repairs): no score,
left out of every figure, counted; its ``meta`` says so (``{"judge": "cannot judge", "problem": ...}``)."""


@dataclass(frozen=True)
class Turn:
    """One turn of a session as stored (a row of ``turns``, its summary read back from ``texts``).

    Frozen: a change is a write through :class:`Session`, which returns the new :class:`Turn`
    (:func:`dataclasses.replace` builds one). Read by attribute (``turn.score``); it is not a mapping.

    Not the event fold's :class:`engine.events.fold.Turn`: that one is what a reader of the session's events
    shows (mutable, built event by event, with its verdicts, a streamed answer's state and a revision
    counter); this one is the stored row the runner and the protocols act on (ids, usage, ``meta``).
    """

    id: int
    session_id: int
    idx: int
    question: str
    answer: str | None = None
    action: str = INITIAL
    actor: str = "policy"
    state: str | None = None
    probs: str | None = None
    difficulty: str | None = None
    summary: str | None = None
    score: float | None = None
    delta: float | None = None
    cos: float | None = None
    latency_ms: float | None = None
    tokens_in: int = 0
    tokens_out: int = 0
    cost: float = 0.0
    rubric_version_id: int | None = None
    meta: str = "{}"
    created_at: str = ""

    @classmethod
    def from_row(cls, row: Mapping[str, Any]) -> Turn:
        """A turn from a ``turns`` row (columns this version does not know are ignored)."""
        return cls(**{f.name: row[f.name] for f in fields(cls) if f.name in row})


TURNS_CHANGED = frozenset({ev.VERDICT_OVERRIDDEN, ev.VERDICT_OVERRIDE_UNDONE, ev.SESSION_RATED})
"""Kinds of events written with a change to a session's turns made outside :class:`Session`'s turn writers
(an override and its undo re-score every turn; the ratings add their tokens to the last turn):
:meth:`Session.turns` reads the turns again after one."""


class SessionError(Exception):
    """A session that cannot run or be changed (missing session, item, turn; unsupported protocol)."""


@dataclass
class SessionSpec:
    """Everything that defines a session, stored in ``sessions.config`` so resume rebuilds it."""

    item_id: int
    target: str
    kernel: str
    protocol: str = "adaptive"
    policy: str = "onnx"
    turns: int = 6
    seed: int = 0
    max_rounds: int | None = None
    threshold: float = 0.65  # engine.judge.freetext.DEFAULT_THRESHOLD
    eval_code_timeout: float = 10.0
    api_key_env: str | None = None
    trust_eval_code: bool = False
    batch: list[int] | None = None
    """graded: the base items of the session's batch (the session's item is the first)."""
    epoch: int | None = None
    """Which repetition of its item this session is (0-based) when the run has several epochs; the
    session's ``seed`` is then the run's seed + epoch and is sent to an endpoint target."""
    system_prompt: str | None = None
    """The target's system prompt (the config's or ``--target-system``'s), kept so resume asks under the
    same one; ``target`` then ends with its hash (:func:`engine.interview.targets.target_label`)."""

    def as_config(self) -> dict[str, Any]:
        """The spec as stored in ``sessions.config`` (with the prompts' version)."""
        return {**self.__dict__, "prompts_version": prompts.PROMPTS_VERSION}

    @classmethod
    def from_config(cls, config: Mapping[str, Any]) -> SessionSpec:
        """Rebuild a spec from ``sessions.config`` (unknown keys are ignored)."""
        return cls(**{k: v for k, v in config.items() if k in cls.__dataclass_fields__})


# -- the rules ----------------------------------------------------------------------------------


def effective_verdicts(rows: Iterable[Mapping[str, Any]]) -> dict[str, dict[str, Any]]:
    """Criterion id -> effective verdict row: the latest row per criterion wins (rows in id order).

    A row that replaces an earlier one keeps that one as ``original`` (a human override shows what
    the judge said).
    """
    out: dict[str, dict[str, Any]] = {}
    for row in rows:
        v = dict(row)
        prior = out.get(v["cid"])
        if v.get("source") == "human" and prior is not None:
            v["original"] = prior.get("original", prior)
        out[v["cid"]] = v
    return out


def session_score(turn_scores: Iterable[float | None]) -> float | None:
    """100 × the last judged turn's score (``None`` when no turn is judged)."""
    last = None
    for s in turn_scores:
        if s is not None:
            last = s
    return None if last is None else 100.0 * last


def session_row(store: Store, session_id: int) -> dict[str, Any]:
    """The session's row; :class:`SessionError` when there is no such session."""
    row = store.one("SELECT * FROM sessions WHERE id = ?", (session_id,))
    if row is None:
        raise SessionError(f"session {session_id} does not exist; see `viva sessions`")
    return row


def metrics_payload(metrics: Mapping[str, Any]) -> dict[str, Any]:
    """A ``metrics`` event's payload: the figures without ``scores`` (every judged turn's score, which a
    reader folds from the ``verdicts`` events; the event stays the same size at every turn)."""
    return {k: v for k, v in metrics.items() if k != "scores"}


def verdict_payload(v: Verdict) -> dict[str, Any]:
    """A verdict as it appears in a ``verdicts`` event."""
    return {"cid": v.cid, "met": v.met, "in_answer": v.in_answer, "rationale": v.rationale, "source": v.source}


def criterion_payload(c: Any) -> dict[str, Any]:
    """A criterion as it appears in ``session.started`` and ``rubric.updated`` events."""
    return {"cid": c.cid, "text": c.text, "kind": c.kind, "weight": c.weight,
            "source_chunk_ids": list(c.source_chunk_ids or [])}


@dataclass
class Consumed:
    """A control event applied by a step, acknowledged by an ``intervention`` event."""

    seq: int
    kind: str
    extra: dict[str, Any] = field(default_factory=dict)


class Session:
    """The record of one session, and the only writer of its turns, verdicts, status and score.

    Args:
        store: the database connection of the caller.
        session_id: an existing session.
        on_event: called in-process with every event written (the CLI's live printer).
    """

    def __init__(self, store: Store, session_id: int,
                 on_event: Callable[[str, dict[str, Any]], None] | None = None):
        self.store = store
        self.sid = session_id
        self.row = session_row(store, session_id)
        self.spec = SessionSpec.from_config(loads(self.row["config"], {}))
        self.item: Item = get_item(store, self.row["item_id"])
        self.on_event = on_event
        self.version_id: int = self.row["rubric_version_id"]
        self.criteria: list[Criterion] = get_version(store, self.version_id).criteria
        self._turns: list[Turn] | None = None  # the turns as last read or written here (:meth:`turns`)
        self._seen = 0  # the session's events up to this sequence number are reflected in ``_turns``
        self._summary: tuple[int, int, str] | None = None  # (turn idx, text id, text) of the summary written last
        self.reads = 0
        """How many times :meth:`turns` read every turn (first, then after a change made elsewhere): what was
        derived from the turns' verdicts under an older count is stale."""

    # -- events and status ----------------------------------------------------------------------
    def emit(self, event: ev.Payload | str, payload: dict[str, Any] | None = None) -> int:
        """Append an event of this session (joins the caller's transaction, if any).

        ``event`` is a typed payload (:mod:`engine.events`), or a kind with a dict (``metrics``).
        """
        if isinstance(event, ev.Payload):
            kind, payload = ev.kind_of(event), event.as_dict()
        else:
            kind, payload = event, payload or {}
        seq = self.store.append_event(self.sid, kind, payload)
        if self.on_event is not None:
            self.on_event(kind, payload)
        return seq

    def set_status(self, status: str, **extra: Any) -> None:
        """Set the session's status (and other columns, e.g. ``error``, ``pid``)."""
        with self.store.transaction():
            self.store.update("sessions", self.sid, {"status": status, "updated_at": now_iso(), **extra})

    def acknowledge(self, consumed: Iterable[Consumed]) -> None:
        """Write an ``intervention`` event for each applied control."""
        for c in consumed:
            self.emit(ev.Intervention(c.seq, c.kind, dict(c.extra)))

    # -- reading ----------------------------------------------------------------------------------
    def turns(self, check: bool = True) -> list[Turn]:
        """The session's turns in order (each ``summary`` read back from ``texts``).

        Read once, then kept: this object's own writes update the copy, and (``check``) the session's events
        written since the last call are scanned (their kinds only: O(new events), not O(turns)) for a change
        made elsewhere (an evaluator's override or its undo, re-scoring the turns; :data:`TURNS_CHANGED`),
        which reads them all again. A turn costs the same at turn 50 as at turn 1. ``check=False``: the copy
        as it is, for a caller that has just written and needs no other process's change yet."""
        if self._turns is not None and not check:
            return list(self._turns)
        if self._turns is not None:
            fresh = self.store.query("SELECT seq, kind FROM events WHERE session_id = ? AND seq > ?",
                                     (self.sid, self._seen))
            if fresh:
                self._seen = max(r["seq"] for r in fresh)
            if not any(r["kind"] in TURNS_CHANGED for r in fresh):
                return list(self._turns)
        # the horizon first: an event written while the rows are read is scanned (again) next time
        self._seen = (self.store.one("SELECT MAX(seq) AS s FROM events WHERE session_id = ?", (self.sid,)) or {}
                      ).get("s") or 0
        self._turns = [Turn.from_row(r) for r in fill_summaries(self.store, self.store.query(
            "SELECT * FROM turns WHERE session_id = ? ORDER BY idx", (self.sid,)))]
        self.reads += 1
        return list(self._turns)

    def _kept(self, turn: Turn) -> Turn:
        """A turn just written, as reading it back would give it (its REAL columns as floats), put into the
        copy :meth:`turns` keeps (a new last turn, or a changed one)."""
        turn = replace(turn, **{name: float(getattr(turn, name)) for name in _REAL
                                if getattr(turn, name) is not None and not isinstance(getattr(turn, name), float)})
        if self._turns is not None:
            at = next((i for i in range(len(self._turns) - 1, -1, -1) if self._turns[i].id == turn.id), None)
            if at is not None:
                self._turns[at] = turn
            elif not self._turns or turn.idx > self._turns[-1].idx:
                self._turns.append(turn)
            else:
                self._turns = None  # not where the copy expects it: read them all again next time
        return turn

    def turn(self, turn_id: int) -> Turn:
        """One turn by id."""
        return Turn.from_row(fill_summaries(self.store, [self.store.one("SELECT * FROM turns WHERE id = ?",
                                                                         (turn_id,))])[0])

    def _summary_before(self, idx: int) -> tuple[int | None, str | None]:
        """(text id, text) of turn ``idx - 1``'s summary, as stored (and as the events have it): the one this
        object wrote last when it is that turn's, else read."""
        if self._summary is not None and self._summary[0] == idx - 1:
            return self._summary[1], self._summary[2]
        row = self.store.one("SELECT summary, summary_text FROM turns WHERE session_id = ? AND idx = ?",
                             (self.sid, idx - 1))
        if row is None:
            return None, None
        if row["summary_text"] is not None:
            return row["summary_text"], get_text(self.store, row["summary_text"])
        return None, row["summary"]

    @staticmethod
    def views(turns: Iterable[Turn]) -> list[TurnView]:
        """Turns as kernels and judges see them."""
        return [TurnView(t.idx, t.question, t.answer, t.action, t.actor, t.score, t.delta, t.summary) for t in turns]

    def criteria_of(self, version_id: int) -> list[Criterion]:
        """Criteria of a rubric version (the session's current one without a query)."""
        return self.criteria if version_id == self.version_id else get_version(self.store, version_id).criteria

    def effective_met(self, turn_id: int, version_id: int) -> dict[str, bool]:
        """Criterion id -> met, under the effective-verdict rule."""
        rows = self.store.query(
            "SELECT id, cid, met, source FROM verdicts WHERE turn_id = ? AND rubric_version_id = ? ORDER BY id",
            (turn_id, version_id))
        return {cid: bool(v["met"]) for cid, v in effective_verdicts(rows).items()}

    # -- writing ----------------------------------------------------------------------------------
    def add_turn(self, idx: int, question: str, action: str, actor: str, *, state: list[float] | None = None,
                 probs: list[float] | None = None, usage: Usage | None = None,
                 consumed: Iterable[Consumed] = ()) -> Turn:
        """Insert turn ``idx`` (its question) with its ``turn.started`` event; returns the row."""
        usage = usage or Usage()
        row = {"session_id": self.sid, "idx": idx, "question": question, "action": action, "actor": actor,
               "state": dumps(state) if state is not None else None,
               "probs": dumps(probs) if probs is not None else None,
               "rubric_version_id": self.version_id, "tokens_in": usage.tokens_in,
               "tokens_out": usage.tokens_out, "cost": usage.cost, "created_at": now_iso()}
        with self.store.transaction():
            turn_id = self.store.insert("turns", row)
            self.acknowledge(consumed)
            self.emit(ev.TurnStarted(idx, question, action, actor, probs))
        return self._kept(Turn.from_row({**row, "id": turn_id}))  # the other columns hold their defaults

    def record_answer(self, turn: Turn, text: str, latency_ms: float, tokens_in: int,
                      tokens_out: int, cost: float) -> Turn:
        """Store the target's answer to a turn with its ``answer.done`` event; returns the turn."""
        with self.store.transaction():
            self.store.update("turns", turn.id, {
                "answer": text, "latency_ms": latency_ms,
                "tokens_in": turn.tokens_in + tokens_in, "tokens_out": turn.tokens_out + tokens_out,
                "cost": turn.cost + cost})
            self.emit(ev.AnswerDone(turn.idx, text, round(latency_ms, 1), tokens_in, tokens_out))
        return self._kept(replace(turn, answer=text, latency_ms=latency_ms, tokens_in=turn.tokens_in + tokens_in,
                                  tokens_out=turn.tokens_out + tokens_out, cost=turn.cost + cost))

    def record_judgement(self, turn: Turn, verdicts: Mapping[str, Verdict], score: float | None, *,
                         prev_score: float | None = None, scored_per_turn: bool = True,
                         summary: str | None = None, cos: float | None = None, usage: Usage | None = None,
                         version_id: int | None = None, rescore: bool = False,
                         extra: Mapping[str, Any] | None = None, criteria: list[Any] | None = None,
                         meta: Mapping[str, Any] | None = None) -> Turn:
        """Store a turn's verdicts and score (s_t, Δs_t, cos_t, summary) with the ``verdicts`` event.

        Args:
            turn: the turn.
            verdicts: criterion id -> verdict.
            score: the turn's score from the protocol's rule (None: the judge could not score it).
            prev_score: the previous turn's score (Δs_t is undefined without one).
            scored_per_turn: false for protocols that score once at the end (no Δs).
            summary, cos: the running summary and cos_t, if the protocol keeps them.
            usage: the judge's usage, added to the turn's.
            version_id: the rubric version judged under (default: the session's).
            rescore: true when re-scoring after a rubric edit.
            extra: more fields for the event (e.g. ``raw_score``).
            criteria: the version's criteria, carried by the event when they are not the session's.
            meta: fields merged into the turn's ``meta`` (a challenge's contested criteria and outcome).

        Returns:
            The turn with the new figures.
        """
        version_id = self.version_id if version_id is None else version_id
        meta_update = meta
        delta = score - prev_score if scored_per_turn and prev_score is not None and score is not None else None
        u = usage or Usage()
        # the summary is stored once (texts, as an edit of the turn before's when smaller) and the event
        # carries only its change when the turn before has one (docs/events.md, verdicts)
        summary_id = edit = None
        if summary is not None:
            summary = redact(summary)
            base_id, base = self._summary_before(turn.idx)
            edit = encode_summary(summary, turn.idx - 1, base)
        with self.store.transaction():
            if summary is not None:
                summary_id = put_text(self.store, summary, base_id, base,
                                      edit["summary_delta"] if edit is not None and base_id is not None else None)
            created = now_iso()
            self.store.insert_many("verdicts", [{
                "turn_id": turn.id, "cid": v.cid, "rubric_version_id": version_id, "met": int(v.met),
                "in_answer": int(v.in_answer), "rationale": v.rationale, "source": v.source,
                "created_at": created} for v in verdicts.values()])
            # a turn re-judged (a rescore) after "cannot judge" loses that mark
            old_meta = loads(turn.meta or "{}", {})
            meta = dict(old_meta)
            if score is not None and "judge" in meta:
                meta = {k: v for k, v in meta.items() if k not in ("judge", "problem")}
            meta.update(meta_update or {})
            judged_now = meta != old_meta
            self.store.update("turns", turn.id, {
                **({"meta": dumps(meta)} if judged_now else {}),
                "score": score, "delta": delta, "cos": cos, "summary": None, "summary_text": summary_id,
                "rubric_version_id": version_id,
                "tokens_in": turn.tokens_in + u.tokens_in, "tokens_out": turn.tokens_out + u.tokens_out,
                "cost": turn.cost + u.cost})
            self.emit(ev.Verdicts(turn.idx, version_id, score, delta, cos, None if edit else summary, rescore,
                                  [verdict_payload(v) for v in verdicts.values()], (extra or {}).get("raw_score"),
                                  [criterion_payload(c) for c in criteria] if criteria is not None else None,
                                  **(edit or {}), challenge=(meta_update or {}).get("challenge")))
            self.emit_metrics()  # one transaction per step: verdicts, turn, their event and the metrics
        self._summary = (turn.idx, summary_id, summary) if summary_id is not None else None
        return self._kept(replace(turn, **({"meta": dumps(meta)} if judged_now else {}), score=score, delta=delta,
                                  cos=cos, summary=summary,
                                  tokens_in=turn.tokens_in + u.tokens_in, tokens_out=turn.tokens_out + u.tokens_out,
                                  cost=turn.cost + u.cost, rubric_version_id=version_id))

    def note(self, what: str, text: str, turn: int = -1) -> None:
        """A ``session.note`` event: what the session went on without, and why (:class:`engine.events.SessionNote`)."""
        self.emit(ev.SessionNote(turn, what, redact(text)))

    def notes(self, what: str | None = None) -> list[dict[str, Any]]:
        """The session's ``session.note`` payloads (of one kind), in order."""
        return [e.payload for e in self.store.events(0, self.sid)
                if e.kind == ev.SESSION_NOTE and (what is None or e.payload.get("what") == what)]

    def mark_cannot_judge(self, turn: Turn, problem: str, usage: Usage | None = None) -> Turn:
        """Record that a turn's judgement could not be had: no score (left out of every figure, counted),
        ``meta.judge`` = :data:`CANNOT_JUDGE` (the runner does not ask again), the calls' tokens added to the
        turn, and a ``session.note``; one transaction. Returns the turn."""
        u = usage or Usage()
        meta = {**loads(turn.meta or "{}", {}), "judge": CANNOT_JUDGE, "problem": redact(problem)[:500]}
        with self.store.transaction():
            self.store.update("turns", turn.id, {
                "meta": dumps(meta), "score": None, "delta": None,
                "tokens_in": turn.tokens_in + u.tokens_in, "tokens_out": turn.tokens_out + u.tokens_out,
                "cost": turn.cost + u.cost})
            self.note("cannot-judge", problem, turn.idx)
            self.emit_metrics()
        return self._kept(replace(turn, meta=dumps(meta), score=None, delta=None,
                                  tokens_in=turn.tokens_in + u.tokens_in, tokens_out=turn.tokens_out + u.tokens_out,
                                  cost=turn.cost + u.cost))

    def emit_metrics(self) -> None:
        """A ``metrics`` event with the session's figures now."""
        from engine.metrics.sessions import session_metrics

        self.emit(ev.METRICS, metrics_payload(session_metrics(self.store, self.sid, scores=False)))

    def switch_rubric(self, version_id: int) -> None:
        """Score with another rubric version from now on (``rubric.updated`` event)."""
        self.version_id = version_id
        self.criteria = get_version(self.store, version_id).criteria
        with self.store.transaction():
            self.store.update("sessions", self.sid, {"rubric_version_id": version_id, "updated_at": now_iso()})
            self.emit(ev.RubricUpdated(version_id, [criterion_payload(c) for c in self.criteria]))

    def update_score(self, rule: Callable[[list[Turn]], float | None] | None = None) -> float | None:
        """Recompute and store the session score: the protocol's ``rule`` over the turns as stored, or the
        default rule in the module docstring (100 × the last judged turn's score)."""
        turns = [Turn.from_row(r) for r in self.store.query("SELECT * FROM turns WHERE session_id = ? ORDER BY idx",
                                                            (self.sid,))]
        score = rule(turns) if rule is not None else session_score(t.score for t in turns)
        with self.store.transaction():
            self.store.update("sessions", self.sid, {"score": score, "updated_at": now_iso()})
        return score


_REAL = ("score", "delta", "cos", "latency_ms", "cost")
"""The ``turns`` columns of type REAL: an int written there reads back as a float."""
