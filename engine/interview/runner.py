"""The session runner: drives one interview turn by turn, writing every step to the store.

Each step is written before the next begins, so a killed run loses at most the step in flight, and
``resume`` continues from the first step not on record (cached LLM calls are not re-sent). Every
step is also an event (see docs/events.md); the app and the CLI consume only those events.

Steps of an adaptive turn t: decide the question (turn row inserted) -> target answers (answer
stored) -> judge (verdicts, summary, s_t, Δs_t, cos_t stored) -> policy decides turn t+1.
"""

from __future__ import annotations

import asyncio
import hashlib
import logging
import os
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from engine.interview import prompts
from engine.interview.kernels import Judgement, Kernel, TurnView, Verdict
from engine.interview.targets import Target
from engine.llm import ChatResult, Usage
from engine.metrics.scoring import turn_score, weighted_hit_score
from engine.store import Event, Store, dumps, loads, now_iso

log = logging.getLogger("viva.runner")

FOLLOW_UP, CHALLENGE, HUMAN, INITIAL, TASK = "follow-up", "challenge", "human", "initial", "task"
STREAM_FLUSH_SECONDS = 0.1


class SessionError(Exception):
    """A session that cannot run (missing item, unsupported protocol, bad state)."""


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
    threshold: float = 0.55
    eval_code_timeout: float = 10.0
    api_key_env: str | None = None

    def as_config(self) -> dict[str, Any]:
        return {**self.__dict__, "prompts_version": prompts.PROMPTS_VERSION}


def create_session(store: Store, spec: SessionSpec, run_id: int | None = None) -> int:
    """Insert a session in status ``created`` and return its id."""
    from engine.bench.items import get_item
    from engine.bench.rubric import current_rubric

    item = get_item(store, spec.item_id)
    if spec.protocol not in ("adaptive", "task"):
        raise SessionError(
            f"protocol {spec.protocol!r} is not available in this version of viva (available: adaptive, task)")
    rubric = current_rubric(store, item.id)
    now = now_iso()
    return store.insert("sessions", {
        "run_id": run_id, "item_id": item.id, "benchmark_id": item.benchmark_id, "protocol": spec.protocol,
        "target": spec.target, "kernel": spec.kernel, "judge": spec.kernel, "policy": spec.policy,
        "seed": spec.seed, "config": dumps(spec.as_config()), "status": "created",
        "rubric_version_id": rubric.id, "created_at": now, "updated_at": now,
    })


def stable_seed(*parts: Any) -> list[int]:
    """A seed sequence from stable parts (never Python's salted hash())."""
    digest = hashlib.sha256("|".join(str(p) for p in parts).encode()).digest()
    return [int.from_bytes(digest[i:i + 4], "little") for i in range(0, 16, 4)]


@dataclass
class Controls:
    """Interventions requested for the next step."""

    paused: bool = False
    forced: str | None = None
    forced_seq: int | None = None
    injected: str | None = None
    injected_seq: int | None = None
    stop: bool = False
    end_after: bool = False
    rubric_version: int | None = None
    consumed: set[int] = field(default_factory=set)


class SessionRunner:
    """Runs (or resumes) one session to the end.

    Args:
        store: the database (this runner's own connection).
        session_id: a session created by :func:`create_session`.
        kernel: writes questions and judges answers.
        target: the model under test.
        policy: chooses follow-up or challenge (``engine.policy.policies``); unused by ``task``.
        embedder: for cos_t between consecutive summaries (``embed(list[str]) -> ndarray``).
        data_dir: where a task item's data files are (for eval_code).
        on_event: called in-process with every event written (the CLI's live printer).
    """

    def __init__(self, store: Store, session_id: int, kernel: Kernel, target: Target, policy: Any,
                 embedder: Any, data_home: Path | None = None,
                 on_event: Callable[[str, dict[str, Any]], None] | None = None):
        from engine.bench.items import get_item

        self.store = store
        self.sid = session_id
        row = store.one("SELECT * FROM sessions WHERE id = ?", (session_id,))
        if row is None:
            raise SessionError(f"session {session_id} does not exist")
        self.row = row
        self.spec = SessionSpec(**{k: v for k, v in loads(row["config"], {}).items()
                                   if k in SessionSpec.__dataclass_fields__})
        self.item = get_item(store, row["item_id"])
        self.kernel = kernel
        self.target = target
        self.policy = policy
        self.embedder = embedder
        self.data_home = data_home
        self.on_event = on_event
        self.controls = Controls()
        self._vectors: dict[str, np.ndarray] = {}
        self._control_floor = 0  # controls at or below this sequence number are all consumed
        self.version_id: int = row["rubric_version_id"]
        self.criteria = self._criteria(self.version_id)

    # -- store helpers ------------------------------------------------------------------------
    def _criteria(self, version_id: int) -> list[Any]:
        from engine.bench.rubric import get_version

        return get_version(self.store, version_id).criteria

    def emit(self, kind: str, payload: dict[str, Any] | None = None) -> int:
        payload = payload or {}
        seq = self.store.append_event(self.sid, kind, payload)
        if self.on_event is not None:
            self.on_event(kind, payload)
        return seq

    def _set_status(self, status: str, **extra: Any) -> None:
        with self.store.transaction():
            self.store.update("sessions", self.sid, {"status": status, "updated_at": now_iso(), **extra})

    def turns(self) -> list[dict[str, Any]]:
        return self.store.query("SELECT * FROM turns WHERE session_id = ? ORDER BY idx", (self.sid,))

    def views(self, rows: list[dict[str, Any]]) -> list[TurnView]:
        return [TurnView(r["idx"], r["question"], r["answer"], r["action"], r["actor"], r["score"],
                         r["delta"], r["summary"]) for r in rows]

    def effective_met(self, turn_id: int, version_id: int) -> dict[str, bool]:
        """Verdicts of a turn under a rubric version; a human override (a later row) wins."""
        met: dict[str, bool] = {}
        for v in self.store.query(
                "SELECT cid, met FROM verdicts WHERE turn_id = ? AND rubric_version_id = ? ORDER BY id",
                (turn_id, version_id)):
            met[v["cid"]] = bool(v["met"])
        return met

    # -- controls -----------------------------------------------------------------------------
    def _poll_controls(self) -> None:
        consumed = self.controls.consumed
        if not consumed:
            for e in self.store.query(
                    "SELECT payload FROM events WHERE session_id = ? AND kind = 'intervention'", (self.sid,)):
                seq = loads(e["payload"], {}).get("control_seq")
                if seq is not None:
                    consumed.add(int(seq))
        rows = self.store.query(
            "SELECT seq, kind, payload FROM events WHERE session_id = ? AND seq > ? AND kind LIKE 'control.%' "
            "ORDER BY seq", (self.sid, self._control_floor))
        for row in rows:
            event = Event(row["seq"], self.sid, 0.0, row["kind"], loads(row["payload"], {}))
            if event.seq in consumed:
                continue
            kind = event.kind.split(".", 1)[1]
            c = self.controls
            if kind == "force":
                action = event.payload.get("action")
                if action == "end":
                    c.end_after = True
                    self._consume(event.seq, kind, {"action": "end"})
                else:
                    c.forced, c.forced_seq = action, event.seq  # consumed with the turn it shapes
                    consumed.add(event.seq)
            elif kind == "inject":
                c.injected, c.injected_seq = event.payload.get("question", ""), event.seq
                consumed.add(event.seq)
            elif kind == "pause":
                c.paused = True
                self._consume(event.seq, kind)
                self._set_status("paused")
                self.emit("session.paused", {})
            elif kind == "resume":
                if c.paused:
                    c.paused = False
                    self._set_status("running")
                    self.emit("session.resumed", {"by": "human"})
                self._consume(event.seq, kind)
            elif kind == "stop":
                c.stop = True
                self._consume(event.seq, kind)
            elif kind == "rubric":
                c.rubric_version = int(event.payload["version_id"])
                self._consume(event.seq, kind, {"version_id": c.rubric_version})
            else:
                self._consume(event.seq, kind, {"ignored": True})
        pending = [r["seq"] for r in rows if r["seq"] not in consumed]
        if rows:
            self._control_floor = (min(pending) - 1) if pending else rows[-1]["seq"]

    def _consume(self, seq: int, kind: str, extra: dict[str, Any] | None = None) -> None:
        self.controls.consumed.add(seq)
        self.emit("intervention", {"control_seq": seq, "kind": kind, **(extra or {})})

    async def _checkpoint(self) -> None:
        """Apply pending interventions; wait while paused."""
        self._poll_controls()
        while self.controls.paused and not self.controls.stop:
            await asyncio.sleep(0.1)
            self._poll_controls()
        if self.controls.rubric_version is not None:
            version, self.controls.rubric_version = self.controls.rubric_version, None
            await self.rescore(version)

    # -- target -------------------------------------------------------------------------------
    def _target_messages(self, rows: list[dict[str, Any]], question: str) -> list[dict[str, str]]:
        messages: list[dict[str, str]] = []
        for r in rows:
            if r["answer"] is None:
                continue
            messages.append({"role": "user", "content": r["question"]})
            messages.append({"role": "assistant", "content": r["answer"]})
        messages.append({"role": "user", "content": question})
        return messages

    async def _ask_target(self, turn: dict[str, Any], rows: list[dict[str, Any]]) -> ChatResult:
        idx = turn["idx"]
        buffer: list[str] = []
        last_flush = [time.monotonic()]

        def flush() -> None:
            if buffer:
                self.emit("answer.delta", {"turn": idx, "text": "".join(buffer)})
                buffer.clear()
            last_flush[0] = time.monotonic()

        def on_token(piece: str) -> None:
            buffer.append(piece)
            if time.monotonic() - last_flush[0] >= STREAM_FLUSH_SECONDS:
                flush()

        def on_reset() -> None:
            buffer.clear()
            self.emit("answer.reset", {"turn": idx})

        start = time.perf_counter()
        result = await self.target.reply(self._target_messages(rows, turn["question"]), on_token, on_reset)
        flush()
        # the endpoint's own time when known (not time queued behind its concurrency limit)
        latency = result.latency_ms if result.latency_ms else (time.perf_counter() - start) * 1000
        with self.store.transaction():
            self.store.update("turns", turn["id"], {
                "answer": result.text, "latency_ms": latency,
                "tokens_in": turn["tokens_in"] + result.tokens_in,
                "tokens_out": turn["tokens_out"] + result.tokens_out,
                "cost": turn["cost"] + result.cost})
            self.emit("answer.done", {"turn": idx, "answer": result.text, "latency_ms": round(latency, 1),
                                      "tokens_in": result.tokens_in, "tokens_out": result.tokens_out})
        return result

    # -- adaptive -----------------------------------------------------------------------------
    def _cos(self, a: str | None, b: str | None) -> float | None:
        """cos between two summaries; each summary is embedded once (the previous turn's is reused)."""
        if not a or not b:
            return None
        missing = [t for t in (a, b) if t not in self._vectors]
        if missing:
            for text, vec in zip(missing, self.embedder.embed(missing), strict=True):
                self._vectors[text] = vec
        while len(self._vectors) > 8:
            self._vectors.pop(next(iter(self._vectors)))
        return float(np.clip(self._vectors[a] @ self._vectors[b], -1.0, 1.0))

    def _decide(self, prev: dict[str, Any], t: int) -> tuple[str, str, list[float] | None, list[float] | None]:
        """(action, actor, state, probs) for turn t from the state after turn t-1."""
        from engine.policy.features import state_vector

        prev_action = prev["action"] if prev["action"] in (FOLLOW_UP, CHALLENGE) else (
            "none" if prev["action"] == INITIAL else FOLLOW_UP)
        state = state_vector(prev["score"] or 0.0, prev["delta"], prev["cos"], prev_action, t - 1, self.spec.turns)
        rng = np.random.default_rng(stable_seed(self.spec.seed, self.item.id, self.spec.target, t))
        action, probs = self.policy.choose(state, rng)
        return action, "policy", [float(x) for x in state], [float(p) for p in probs]

    async def _new_turn(self, t: int, rows: list[dict[str, Any]]) -> dict[str, Any] | None:
        usage = Usage()
        state = probs = None
        consumed: list[tuple[int, str, dict[str, Any]]] = []
        if t == 0:
            question, action, actor = self.item.question, INITIAL, "item"
        else:
            prev = rows[-1]
            action, actor, state, probs = self._decide(prev, t)
            c = self.controls
            if c.forced in (FOLLOW_UP, CHALLENGE):
                action, actor = c.forced, "human"
                consumed.append((c.forced_seq, "force", {"action": c.forced, "turn": t}))  # type: ignore[arg-type]
                c.forced = c.forced_seq = None
            if c.injected:
                question, action, actor = c.injected, HUMAN, "human"
                consumed.append((c.injected_seq, "inject", {"question": question, "turn": t}))  # type: ignore[arg-type]
                c.injected = c.injected_seq = None
            else:
                self.emit("policy.decided", {"turn": t, "state": state, "probs": probs, "action": action,
                                             "actor": actor})
                followup = self._static_followup(rows) if action == FOLLOW_UP else None
                if followup is not None:
                    question = followup
                else:
                    met = self.effective_met(prev["id"], self.version_id)
                    question, usage = await self.kernel.next_question(
                        action, self.item.topic, self.criteria, met, self.views(rows), prev["summary"] or "")
        with self.store.transaction():
            turn_id = self.store.insert("turns", {
                "session_id": self.sid, "idx": t, "question": question, "action": action, "actor": actor,
                "state": dumps(state) if state is not None else None,
                "probs": dumps(probs) if probs is not None else None,
                "rubric_version_id": self.version_id, "tokens_in": usage.tokens_in,
                "tokens_out": usage.tokens_out, "cost": usage.cost, "created_at": now_iso()})
            for seq, kind, extra in consumed:
                self.controls.consumed.add(seq)
                self.emit("intervention", {"control_seq": seq, "kind": kind, **extra})
            self.emit("turn.started", {"turn": t, "question": question, "action": action, "actor": actor,
                                       "probs": probs})
        return self.store.one("SELECT * FROM turns WHERE id = ?", (turn_id,))

    def _static_followup(self, rows: list[dict[str, Any]]) -> str | None:
        """Activated static benchmark (TestAgent 3.5): a follow-up asks the context's next question
        of the dataset (``item.meta.followups``) instead of a kernel-written one."""
        followups = self.item.meta.get("followups") or []
        asked = {r["question"] for r in rows}
        for f in followups:
            if f.get("question") and f["question"] not in asked:
                return str(f["question"])
        return None

    async def _judge_turn(self, turn: dict[str, Any], history: list[dict[str, Any]]) -> None:
        prev = history[-1] if history else None
        judgement: Judgement = await self.kernel.judge(
            turn["question"], self.criteria, (prev or {}).get("summary") or "", turn["answer"],
            self.item.reference, self.views(history), turn["action"])
        met = {cid: v.met for cid, v in judgement.verdicts.items()}
        cos = None if prev is None else await asyncio.to_thread(self._cos, judgement.summary, prev["summary"])
        self._store_judgement(turn, prev, judgement, met, self.version_id, cos)

    def _store_judgement(self, turn: dict[str, Any], prev: dict[str, Any] | None, judgement: Judgement,
                         met: dict[str, bool], version_id: int, cos: float | None,
                         rescore: bool = False) -> dict[str, Any]:
        criteria = self._criteria(version_id) if version_id != self.version_id else self.criteria
        score = turn_score(criteria, met)
        delta = None if prev is None or prev["score"] is None else score - prev["score"]
        u = judgement.usage
        with self.store.transaction():
            for v in judgement.verdicts.values():
                self.store.insert("verdicts", {
                    "turn_id": turn["id"], "cid": v.cid, "rubric_version_id": version_id, "met": int(v.met),
                    "in_answer": int(v.in_answer), "rationale": v.rationale, "source": v.source,
                    "created_at": now_iso()})
            self.store.update("turns", turn["id"], {
                "score": score, "delta": delta, "cos": cos, "summary": judgement.summary,
                "rubric_version_id": version_id,
                "tokens_in": turn["tokens_in"] + u.tokens_in, "tokens_out": turn["tokens_out"] + u.tokens_out,
                "cost": turn["cost"] + u.cost})
            payload = {"turn": turn["idx"], "rubric_version_id": version_id, "score": score, "delta": delta,
                       "cos": cos, "summary": judgement.summary, "rescore": rescore,
                       "verdicts": [verdict_payload(v) for v in judgement.verdicts.values()]}
            self.emit("verdicts", payload)
        self._emit_metrics()
        return {**turn, "score": score, "delta": delta, "cos": cos, "summary": judgement.summary}

    def _emit_metrics(self) -> None:
        from engine.interview.queries import session_metrics

        self.emit("metrics", session_metrics(self.store, self.sid))

    async def rescore(self, version_id: int) -> None:
        """Re-judge every stored answer under a rubric version (never re-asks the target)."""
        self.version_id = version_id
        self.criteria = self._criteria(version_id)
        with self.store.transaction():
            self.store.update("sessions", self.sid, {"rubric_version_id": version_id, "updated_at": now_iso()})
        self.emit("rubric.updated", {"rubric_version_id": version_id,
                                     "criteria": [criterion_payload(c) for c in self.criteria]})
        rows = [r for r in self.turns() if r["answer"] is not None]
        history: list[dict[str, Any]] = []
        for row in rows:
            if self.spec.protocol == "task":
                continue
            prev = history[-1] if history else None
            judgement = await self.kernel.judge(
                row["question"], self.criteria, (prev or {}).get("summary") or "", row["answer"],
                self.item.reference, self.views(history), row["action"])
            met = {cid: v.met for cid, v in judgement.verdicts.items()}
            cos = None if prev is None else await asyncio.to_thread(self._cos, judgement.summary, prev["summary"])
            history.append(self._store_judgement(row, prev, judgement, met, version_id, cos, rescore=True))
        if self.spec.protocol == "task" and rows:
            await self._score_task(rows)
        self._update_session_score()

    async def _adaptive(self) -> None:
        total = self.spec.turns
        t = 0
        while t < total:
            rows = self.turns()
            turn = next((r for r in rows if r["idx"] == t), None)
            history = [r for r in rows if r["idx"] < t]
            if turn is None:
                await self._checkpoint()
                if self.controls.stop or (self.controls.end_after and t > 0):
                    self.emit("session.ended_early", {"after_turn": t - 1,
                                                      "reason": "stop" if self.controls.stop else "end"})
                    break
                history = [r for r in self.turns() if r["idx"] < t]  # an override may have changed them
                turn = await self._new_turn(t, history)
            if turn["answer"] is None:
                await self._ask_target(turn, history)
                turn = self.store.one("SELECT * FROM turns WHERE id = ?", (turn["id"],))
            if turn["score"] is None:
                await self._judge_turn(turn, history)
            t += 1

    # -- task (TaskWeaver) --------------------------------------------------------------------
    def _transcript(self, rows: list[dict[str, Any]]) -> list[dict[str, str]]:
        out: list[dict[str, str]] = []
        for r in rows:
            out.append({"role": "examiner", "content": r["question"]})
            if r["answer"] is not None:
                out.append({"role": "agent", "content": r["answer"]})
        return out

    async def _task(self) -> None:
        max_rounds = self.spec.max_rounds or int(self.item.meta.get("max_rounds") or 15)
        task = self.item.question
        while True:
            rows = self.turns()
            pending = next((r for r in rows if r["answer"] is None), None)
            if pending is None:
                if len(rows) >= max_rounds:
                    break
                await self._checkpoint()
                if self.controls.stop or self.controls.end_after:
                    break
                if self.controls.injected:
                    message, usage = self.controls.injected, Usage()
                    seq = self.controls.injected_seq
                    self.controls.injected = self.controls.injected_seq = None
                    self._consume(seq, "inject", {"turn": len(rows)})  # type: ignore[arg-type]
                    actor = "human"
                else:
                    message, usage = await self.kernel.examiner(task, self._transcript(rows))
                    actor = "kernel"
                if prompts.STOP_KEYWORD in message and actor == "kernel":
                    self.emit("task.stop_keyword", {"after_turn": len(rows) - 1, "message": message})
                    break
                with self.store.transaction():
                    turn_id = self.store.insert("turns", {
                        "session_id": self.sid, "idx": len(rows), "question": message, "action": TASK,
                        "actor": actor, "rubric_version_id": self.version_id, "tokens_in": usage.tokens_in,
                        "tokens_out": usage.tokens_out, "cost": usage.cost, "created_at": now_iso()})
                    self.emit("turn.started", {"turn": len(rows), "question": message, "action": TASK,
                                               "actor": actor, "probs": None})
                pending = self.store.one("SELECT * FROM turns WHERE id = ?", (turn_id,))
                rows = self.turns()
            # The agent sees the examiner as the user.
            history = [r for r in rows if r["idx"] < pending["idx"]]
            await self._ask_target(pending, history)
        rows = [r for r in self.turns() if r["answer"] is not None]
        if rows and rows[-1]["score"] is None:
            await self._score_task(rows)

    async def _score_task(self, rows: list[dict[str, Any]]) -> None:
        from engine.judge.sandbox import run_eval_code

        transcript = self._transcript(rows)
        text = "\n".join(f"{m['role'].upper()}: {m['content']}" for m in transcript)
        data_dir = None
        if self.item.meta.get("data_dir"):
            data_dir = Path(self.item.meta["data_dir"])
            if not data_dir.is_absolute() and self.data_home is not None:
                data_dir = self.data_home / data_dir
        verdicts: dict[str, Verdict] = {}
        usage = Usage()
        for c in self.criteria:
            if c.kind == "code" and c.eval_code:
                result = await asyncio.to_thread(run_eval_code, c.eval_code, transcript, data_dir,
                                                 self.spec.eval_code_timeout)
                verdicts[c.cid] = Verdict(c.cid, result.hit, result.hit, result.reason, "code")
            else:
                hit, reason, u = await self.kernel.judge_point(self.item.question, c.text, text)
                usage.tokens_in += u.tokens_in
                usage.tokens_out += u.tokens_out
                usage.cost += u.cost
                verdicts[c.cid] = Verdict(c.cid, hit, hit, reason, "offline" if self.kernel.offline else "judge")
        last = rows[-1]
        met = {cid: v.met for cid, v in verdicts.items()}
        raw, normalised = weighted_hit_score([(c.weight, met.get(c.cid, False)) for c in self.criteria])
        with self.store.transaction():
            for v in verdicts.values():
                self.store.insert("verdicts", {
                    "turn_id": last["id"], "cid": v.cid, "rubric_version_id": self.version_id, "met": int(v.met),
                    "in_answer": int(v.in_answer), "rationale": v.rationale, "source": v.source,
                    "created_at": now_iso()})
            self.store.update("turns", last["id"], {
                "score": normalised, "rubric_version_id": self.version_id,
                "tokens_in": last["tokens_in"] + usage.tokens_in, "tokens_out": last["tokens_out"] + usage.tokens_out,
                "cost": last["cost"] + usage.cost})
            self.emit("verdicts", {"turn": last["idx"], "rubric_version_id": self.version_id, "score": normalised,
                                   "raw_score": raw, "delta": None, "cos": None, "summary": None, "rescore": False,
                                   "verdicts": [verdict_payload(v) for v in verdicts.values()]})
        self._emit_metrics()

    # -- whole session ------------------------------------------------------------------------
    def _update_session_score(self) -> float | None:
        last = self.store.one(
            "SELECT score FROM turns WHERE session_id = ? AND score IS NOT NULL ORDER BY idx DESC LIMIT 1",
            (self.sid,))
        score = None if last is None else 100.0 * last["score"]
        with self.store.transaction():
            self.store.update("sessions", self.sid, {"score": score, "updated_at": now_iso()})
        return score

    async def run(self) -> dict[str, Any]:
        """Run or resume the session to its end; returns the session row.

        A failure marks the session ``failed`` with the error (and an event) and re-raises.
        """
        resumed = bool(self.turns())
        self._set_status("running", pid=os.getpid(), error=None)
        self.emit("session.resumed" if resumed else "session.started", {
            "item_id": self.item.id, "benchmark": self.item.benchmark, "topic": self.item.topic,
            "question": self.item.question, "protocol": self.spec.protocol, "target": self.spec.target,
            "kernel": self.kernel.name, "kernel_offline": self.kernel.offline, "policy": self.spec.policy,
            "policy_version": getattr(self.policy, "version", ""), "turns": self.spec.turns,
            "rubric_version_id": self.version_id,
            "criteria": [criterion_payload(c) for c in self.criteria], "resumed": resumed})
        if self.policy is not None:
            with self.store.transaction():
                self.store.update("sessions", self.sid, {"policy_version": getattr(self.policy, "version", "")})
        try:
            if self.spec.protocol == "task":
                await self._task()
            else:
                await self._adaptive()
        except asyncio.CancelledError:
            self._set_status("interrupted")
            self.emit("session.interrupted", {})
            raise
        except Exception as exc:
            message = f"{type(exc).__name__}: {exc}"
            self._set_status("failed", error=message)
            self.emit("session.failed", {"error": message})
            raise
        score = self._update_session_score()
        self._set_status("finished")
        from engine.interview.queries import session_metrics

        self.emit("session.finished", {"score": score, "metrics": session_metrics(self.store, self.sid)})
        return self.store.one("SELECT * FROM sessions WHERE id = ?", (self.sid,))  # type: ignore[return-value]


def verdict_payload(v: Verdict) -> dict[str, Any]:
    return {"cid": v.cid, "met": v.met, "in_answer": v.in_answer, "rationale": v.rationale, "source": v.source}


def criterion_payload(c: Any) -> dict[str, Any]:
    return {"cid": c.cid, "text": c.text, "kind": c.kind, "weight": c.weight,
            "source_chunk_ids": list(c.source_chunk_ids or [])}
