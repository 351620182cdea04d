"""The session runner: drives one session step by step, whatever its protocol.

Each step is written before the next begins, so a killed run loses at most the step in flight, and
``resume`` continues from the first step not on record (cached LLM calls are not re-sent). Every
step is also an event (docs/events.md); the app and the CLI consume only those events.

The runner owns the loop, asking the target (streamed), checkpoints (controls, pause) and the
session's lifecycle. What to ask, how to judge and score and when to end belong to the session's
protocol (:mod:`engine.interview.protocols`); turn and verdict writes to :class:`Session`.

One step of the loop, in order: an unanswered turn is answered; an answered turn not yet judged is
judged (protocols that score turn by turn); otherwise, unless the protocol is done, the controls
are applied and the protocol's next question becomes a new turn. At the end the protocol scores
what is left, pending rubric switches are drained, and the session is marked finished, or
``not_examined`` when no question was answered (:meth:`SessionRunner._not_examined` has the rule).
"""

from __future__ import annotations

import asyncio
import os
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from engine import events as ev
from engine.bench.items import get_item
from engine.bench.rubric import current_rubric
from engine.interview.control import ControlInbox
from engine.interview.protocols import ProtocolContext, protocol_class
from engine.interview.protocols.adaptive import stable_seed
from engine.interview.session import (
    CHALLENGE,
    FOLLOW_UP,
    HUMAN,
    INITIAL,
    TASK,
    Session,
    SessionError,
    SessionSpec,
    Turn,
    criterion_payload,
    verdict_payload,
)
from engine.interview.targets import Target, send_fitted
from engine.llm import ChatResult
from engine.store import Store, dumps, now_iso
from engine.store.lease import SESSION, LeaseLostError, Leases

__all__ = ["SessionRunner", "SessionSpec", "SessionError", "create_session", "stable_seed", "verdict_payload",
           "criterion_payload", "FOLLOW_UP", "CHALLENGE", "HUMAN", "INITIAL", "TASK"]

STREAM_FLUSH_SECONDS = 0.1
STOP_POLL_SECONDS = 0.2
"""How often a target call in flight checks for a stop request (the stop latency's bound)."""
STEP_BEAT_SECONDS = 1.0
"""A step refreshes the session's lease only when the last refresh is older than this (a write
transaction saved per step). Safe: another process takes a lease over only after
``engine.store.lease.STALE_SECONDS`` (30 s) without a heartbeat, and any step after such a gap beats,
so the loss is still noticed before the step writes anything."""


class StopRequested(Exception):
    """The evaluator stopped the session; ``turn`` is the turn whose answer was cut (with ``partial``)."""

    def __init__(self, turn: int | None = None, partial: str = ""):
        super().__init__("stopped by the evaluator")
        self.turn, self.partial = turn, partial


def create_session(store: Store, spec: SessionSpec, run_id: int | None = None) -> int:
    """Insert a session in status ``created`` and return its id (the protocol must be runnable)."""
    item = get_item(store, spec.item_id)
    protocol_class(spec.protocol)
    rubric = current_rubric(store, item.id)
    now = now_iso()
    return store.insert("sessions", {
        "run_id": run_id, "item_id": item.id, "benchmark_id": item.benchmark_id, "protocol": spec.protocol,
        "target": spec.target, "kernel": spec.kernel, "judge": spec.kernel, "policy": spec.policy,
        "seed": spec.seed, "config": dumps(spec.as_config()), "status": "created",
        "rubric_version_id": rubric.id, "created_at": now, "updated_at": now,
    })


class SessionRunner:
    """Runs (or resumes) one session to the end.

    Args:
        store: the database (this runner's own connection).
        session_id: a session created by :func:`create_session`.
        kernel: writes questions; its ``judge`` marks answers.
        target: the model under test.
        policy: chooses follow-up or challenge (``engine.policy.policies``); unused by ``task``.
        embedder: for cos_t between consecutive summaries (``embed(list[str]) -> ndarray``).
        data_home: where a task item's data files are (for eval_code).
        on_event: called in-process with every event written (the CLI's live printer).
        leases: the caller's leases (``engine.store.lease``), which may already hold this session's;
            by default the runner takes and keeps its own.
    """

    def __init__(self, store: Store, session_id: int, kernel: Any, target: Target, policy: Any,
                 embedder: Any, data_home: Path | None = None,
                 on_event: Callable[[str, dict[str, Any]], None] | None = None, leases: Leases | None = None):
        self.store = store
        self.sid = session_id
        self.leases = leases
        self._keeper: asyncio.Task[None] | None = None
        self._beat_at = float("-inf")
        self.session = Session(store, session_id, on_event)
        self.kernel = kernel
        self.target = target
        self.policy = policy
        workdir = None
        if self.session.row["protocol"] == "task" and data_home is not None:
            from engine.interview.protocols.task import case_data_dir
            from engine.judge.sandbox import prepare_work_dir

            # private: HOME/work/session-N-<random>/work, mode 0700, copied without following links
            workdir = prepare_work_dir(case_data_dir(self.session.item, data_home), data_home, session_id)
            if hasattr(target, "set_workdir"):
                target.set_workdir(workdir)  # the agent's tools work where eval_code will look
        self.protocol = protocol_class(self.session.row["protocol"])(
            ProtocolContext(self.session, kernel, policy, embedder, data_home, workdir))
        self.inbox = ControlInbox(self.session)

    # -- ownership (engine/store/lease.py) --------------------------------------------------------
    def _take_lease(self) -> None:
        """Own the session before touching it: ``LeaseHeldError`` (naming the owner) while another live
        process drives it; a stale lease is taken over. Without the caller's leases the runner keeps
        its own alive in the background."""
        if self.leases is None:
            leases = Leases(self.store)
            leases.acquire(SESSION, [self.sid])
            self.leases = leases
            self._keeper = asyncio.get_running_loop().create_task(leases.keep_alive())
        elif not self.leases.holds(SESSION, self.sid):
            self.leases.acquire(SESSION, [self.sid])

    def _heartbeat(self) -> None:
        """Refresh the session's lease at a step (at most every :data:`STEP_BEAT_SECONDS`);
        ``LeaseLostError`` once another process took it over."""
        if self.leases is not None and time.monotonic() - self._beat_at >= STEP_BEAT_SECONDS:
            self.leases.beat(SESSION, self.sid)
            self._beat_at = time.monotonic()

    def _drop_lease(self) -> None:
        """Release the session's lease (only if still this runner's) and stop the background heartbeat."""
        if self._keeper is not None:
            self._keeper.cancel()
            self._keeper = None
        if self.leases is not None:
            self.leases.release(SESSION, [self.sid])

    def _reset_cut_stream(self) -> None:
        """On resume: an ``answer.reset`` for a turn whose stream was cut (its pieces are on record but
        not its answer), so every reader drops them before the answer is streamed again."""
        for row in self.session.turns():
            if row.answer is None and self.store.one(
                    "SELECT 1 AS x FROM events WHERE session_id = ? AND kind = ? AND json_extract(payload, '$.turn') = ? "
                    "LIMIT 1", (self.sid, ev.ANSWER_DELTA, row.idx)):
                self.session.emit(ev.AnswerReset(row.idx))

    # -- steps ----------------------------------------------------------------------------------
    async def _checkpoint(self) -> None:
        """Apply pending interventions; wait while paused; re-score on a rubric switch."""
        inbox = self.inbox
        inbox.poll()
        while inbox.paused and not inbox.stop:
            await asyncio.sleep(0.1)
            inbox.poll()
        if inbox.rubric_version is not None:
            version, inbox.rubric_version = inbox.rubric_version, None
            await self.rescore(version)

    async def _ask_target(self, turn: Turn, history: list[Turn]) -> ChatResult:
        """Ask the target the turn's question, streaming ``answer.delta`` events (coalesced)."""
        idx = turn.idx
        session = self.session
        buffer: list[str] = []
        last_flush = [time.monotonic()]

        def flush() -> None:
            if buffer:
                session.emit(ev.AnswerDelta(idx, "".join(buffer)))
                buffer.clear()
            last_flush[0] = time.monotonic()

        def on_token(piece: str) -> None:
            buffer.append(piece)
            if time.monotonic() - last_flush[0] >= STREAM_FLUSH_SECONDS:
                flush()

        def on_reset() -> None:
            buffer.clear()
            said.clear()
            session.emit(ev.AnswerReset(idx))

        said: list[str] = []  # the whole answer so far (kept if the evaluator stops the call)

        def on_piece(piece: str) -> None:
            said.append(piece)
            on_token(piece)

        start = time.perf_counter()
        result = await send_fitted(self.target, self.protocol.target_messages(history, turn.question), idx,
                                   lambda messages: self._target_call(messages, on_piece, on_reset))
        if result is None:
            flush()
            raise StopRequested(idx, "".join(said))
        # the endpoint's own time when known (not time queued behind its concurrency limit)
        latency = result.latency_ms if result.latency_ms else (time.perf_counter() - start) * 1000
        with self.store.transaction():  # the last pieces and the answer: one commit
            flush()
            session.record_answer(turn, result.text, latency, result.tokens_in, result.tokens_out, result.cost)
        return result

    async def _loop(self) -> None:
        session, protocol, inbox = self.session, self.protocol, self.inbox
        # The turns are checked for a change made elsewhere (an evaluator's override) before each step that
        # reads their scores: judging (after the target's answer) and writing the next question (after the
        # checkpoint, below). Asking the target reads questions and answers only, which nothing else writes.
        check = True
        while True:
            self._heartbeat()
            rows = session.turns(check=check)
            unanswered = next((r for r in rows if r.answer is None), None)
            if unanswered is not None:
                await self._ask_target(unanswered, [r for r in rows if r.idx < unanswered.idx])
                check = True
                continue
            if protocol.scored_per_turn:
                unjudged = next((r for r in rows if not protocol.judged(r)), None)
                if unjudged is not None:
                    await protocol.judge_turn(unjudged, [r for r in rows if r.idx < unjudged.idx])
                    check = False
                    continue
            if protocol.finished(rows):
                return
            await self._checkpoint()
            if inbox.stop:
                raise StopRequested()
            if inbox.end_after and rows:
                session.emit(ev.SessionEndedEarly(len(rows) - 1, "end"))
                return
            rows = session.turns()  # an override or a re-score may have changed them
            ask = await protocol.next_question(rows, inbox.steer)
            if ask is None:
                return
            for c in ask.consumed:
                inbox.consumed.add(c.seq)
            check = False
            session.add_turn(len(rows), ask.question, ask.action, ask.actor, state=ask.state, probs=ask.probs,
                             usage=ask.usage, consumed=ask.consumed)

    # -- stop -------------------------------------------------------------------------------------
    async def _target_call(self, messages: list[dict[str, str]], on_token: Callable[[str], Any],
                           on_reset: Callable[[], Any]) -> ChatResult | None:
        """Ask the target while a watcher polls for a stop request; the first to finish wins.

        Returns the target's answer, or None when a stop came first: the call was cancelled (a
        streamed answer's connection is closed, so the server stops generating).
        """
        call = asyncio.ensure_future(self.target.reply(messages, on_token, on_reset))
        watcher = asyncio.ensure_future(self._watch_stop())
        try:
            await asyncio.wait({call, watcher}, return_when=asyncio.FIRST_COMPLETED)
        finally:
            for task in (call, watcher):
                if not task.done():
                    task.cancel()
            await asyncio.gather(call, watcher, return_exceptions=True)
        if call.done() and not call.cancelled() and call.exception() is None:
            return call.result()
        if watcher.done() and not watcher.cancelled() and watcher.exception() is None and watcher.result():
            return None
        return call.result()  # the call's own error (or cancellation) propagates

    async def _watch_stop(self) -> bool:
        """Return True as soon as a ``control.stop`` is written for this session (polled every
        :data:`STOP_POLL_SECONDS`; the first look after one period, as the step's checkpoint has just looked:
        a call shorter than that costs no statement)."""
        while True:
            await asyncio.sleep(STOP_POLL_SECONDS)
            if self.inbox.has_pending("stop"):
                return True

    def _stopped(self, stop: StopRequested) -> None:
        """Record a stop: the stop control acknowledged, the status ``stopped``, the partial answer
        of the cut turn (if any) in a ``session.stopped`` event. The session can be resumed: the cut
        turn has no answer on record, so it is asked again."""
        self.inbox.poll()  # acknowledges the stop (and applies whatever else is pending)
        rows = self.session.turns()
        answered = [r.idx for r in rows if r.answer is not None]
        after = max(answered) if answered else -1
        with self.store.transaction():
            self.session.update_score()
            self.session.set_status("stopped")
            self.session.emit(ev.SessionStopped(after, stop.turn, stop.partial))

    async def rescore(self, version_id: int) -> None:
        """Re-judge every stored answer under a rubric version (never re-asks the target)."""
        self.session.switch_rubric(version_id)
        await self.protocol.rescore(self.session.turns(), version_id)
        self.session.update_score(self.protocol.session_score)

    async def _finish(self) -> float | None:
        """Drain pending rubric switches, then mark the session finished.

        The final check and the status change share one write transaction, and
        :func:`engine.interview.run.apply_rubric` decides in a write transaction too: a rubric
        saved while the session ends is either re-scored here or, once the session is finished,
        by ``apply_rubric`` itself. It is never left unconsumed.
        """
        while True:
            self.inbox.poll()
            if self.inbox.rubric_version is not None:
                version, self.inbox.rubric_version = self.inbox.rubric_version, None
                await self.rescore(version)
                continue
            with self.store.transaction():
                if self.inbox.has_pending("rubric"):
                    continue
                score = self.session.update_score(self.protocol.session_score)
                reason = self._not_examined()
                status = "finished" if reason is None else ev.NOT_EXAMINED
                self.session.set_status(status, error=None)
                from engine.metrics.sessions import session_metrics

                self.session.emit(ev.SessionFinished(score, session_metrics(self.store, self.sid), status,
                                                     reason or ""))
            return score

    def _not_examined(self) -> str | None:
        """Why the session examined nothing, or None when it examined something (the final-status rule).

        A session that ends with **no answered turn** is ``not_examined``, whatever its protocol: no
        question reached the target (the examiner stopped before asking, every question was unusable and
        its turn skipped), so there is no answer to judge and no score. It is a final status, like
        ``finished``: a resume does not run it again. A session with at least one answered turn is
        ``finished``, even when every judgement came back "cannot judge": the target was examined and the
        judge failed, which the "cannot judge" count says (its score is then None). The reason is the
        protocol's ``not-examined`` note when it wrote one, else a note written here."""
        if any(r.answer is not None for r in self.session.turns()):
            return None
        noted = self.session.notes("not-examined")
        if noted:
            return str(noted[-1].get("text") or "no question was answered")
        skipped = len(self.session.notes("turn-skipped"))
        reason = (f"no question reached the target: {skipped} turn(s) skipped for want of a usable question"
                  if skipped else "no question reached the target")
        self.session.note("not-examined", reason)
        return reason

    async def run(self) -> dict[str, Any]:
        """Run or resume the session to its end, as its only owner; returns the session row.

        A failure marks the session ``failed`` with the error (and an event) and re-raises. Another
        live owner refuses the run (``LeaseHeldError``) before anything is written; a lease lost
        meanwhile (``LeaseLostError``) stops the runner without touching the session.
        """
        session = self.session
        protocol_class(session.row["protocol"]).check_item(session.item, bool(getattr(self.kernel, "offline", False)))
        self._take_lease()
        try:
            return await self._run_owned()
        finally:
            self._drop_lease()

    def _mark_interrupted(self) -> None:
        """The session's status ``interrupted`` and its event, in one write; on a full disk made with the
        space the run set aside (:func:`engine.store.faults.despite_full`). Should it fail all the same
        (the disk still full, the home read-only), the row says running with a dead pid, which every
        reader shows as interrupted (``queries.effective_status``); a damaged home's error is raised."""
        from engine.store.faults import DAMAGED, classify, despite_full

        def mark() -> None:
            with self.store.transaction():
                self.session.set_status("interrupted")
                self.session.emit(ev.SessionInterrupted())

        try:
            despite_full(self.store.path.parent, mark)
        except Exception as exc:
            if classify(exc) in (None, DAMAGED):
                raise

    async def _run_owned(self) -> dict[str, Any]:
        session = self.session
        resumed = bool(session.turns())
        item = session.item
        started = ev.SessionStarted(
            item.id, item.benchmark, item.topic, item.question, session.spec.protocol, session.spec.target,
            self.kernel.name, self.kernel.offline, session.spec.policy, getattr(self.policy, "version", ""),
            session.spec.turns, session.version_id, [criterion_payload(c) for c in session.criteria], resumed)
        with self.store.transaction():  # the status, the policy's version and the event: one commit
            session.set_status("running", pid=os.getpid(), error=None,
                               **({"policy_version": getattr(self.policy, "version", "")}
                                  if self.policy is not None else {}))
            session.emit(ev.SESSION_RESUMED if resumed else ev.SESSION_STARTED,
                         {k: v for k, v in started.as_dict().items() if k != "by"})
        if resumed:
            self._reset_cut_stream()
        try:
            await self._loop()
            await self.protocol.finish(session.turns())
            await self._finish()
            from engine.judge.sandbox import remove_work_dir  # the session is over: its work folder goes

            remove_work_dir(self.protocol.ctx.workdir)
        except LeaseLostError:
            raise  # another process drives the session now: write nothing more
        except StopRequested as stop:
            self._stopped(stop)
        except asyncio.CancelledError:
            # cancelled (Ctrl-C, or another session of the run met a full or read-only home): interrupted,
            # resumable; on a full disk with the space the run set aside, as a session that met the fault
            self._mark_interrupted()
            raise
        except Exception as exc:
            from engine.store.faults import DAMAGED, classify

            if classify(exc) not in (None, DAMAGED):
                # A full (or read-only) home is no fault of the session: it is interrupted, resumable
                # once there is space. On a full disk the space the run set aside is released for this
                # write (engine.store.faults.despite_full). Should it fail all the same, the row says
                # running with a dead pid, which every reader shows as interrupted
                # (queries.effective_status).
                self._mark_interrupted()
                raise
            message = f"{type(exc).__name__}: {exc}"
            session.set_status("failed", error=message)
            session.emit(ev.SessionFailed(message))
            raise
        return self.store.one("SELECT * FROM sessions WHERE id = ?", (self.sid,))  # type: ignore[return-value]
