"""adaptive (TestAgent): the initial question, then T turns of follow-ups or challenges chosen by
the policy; every answer judged against the item's criteria and the running summary.

Turn score ``s_t = (Σ w·met − Σ deductions) / Σ w`` clipped to [0, 1] (TestAgent Eq. 1, weighted);
``Δs_t = s_t − s_{t−1}``; ``cos_t`` = cosine between consecutive summaries. The policy's state after
turn t−1 chooses turn t's action.

- Gold-answer criteria (``answers``) are judged by :mod:`engine.judge.gold` against the reply to the
  question that carries them, whichever kernel runs the session; the kernel's judge marks the others.
- A multiple-choice item shows its options in the initial question
  (:func:`engine.judge.answers.choice_question`).
- An activated static benchmark (TestAgent 3.5: the item carries ``meta.followups``) asks the
  dataset's next question as its follow-up; once every question of the item has been asked, the
  session ends (a follow-up has nothing left to ask).
- Follow-ups are written from the criteria that are not gold answers only: a gold answer is never
  given to the kernel that writes the questions.
"""

from __future__ import annotations

import asyncio
import hashlib
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from engine import events as ev
from engine.interview.protocols.base import Ask, Protocol, ProtocolContext, Steer
from engine.interview.session import CHALLENGE, FOLLOW_UP, HUMAN, INITIAL, Consumed
from engine.judge.base import Judgement, TurnView
from engine.judge.choice import choice_question
from engine.judge.gold import is_gold, judge_gold_criteria
from engine.metrics.scoring import turn_score
from engine.policy.features import state_vector


def stable_seed(*parts: Any) -> list[int]:
    """A seed sequence from stable parts (never Python's salted hash())."""
    digest = hashlib.sha256("|".join(str(p) for p in parts).encode()).digest()
    return [int.from_bytes(digest[i:i + 4], "little") for i in range(0, 16, 4)]


def _decided_on_record(session: Any, turn: int) -> bool:
    """Whether a ``policy.decided`` event for this turn is already in the session's log (written
    before a kill that came before the turn itself was stored)."""
    return session.store.one(
        "SELECT 1 AS x FROM events WHERE session_id = ? AND kind = ? AND json_extract(payload, '$.turn') = ? LIMIT 1",
        (session.sid, ev.POLICY_DECIDED, turn)) is not None


class Adaptive(Protocol):
    """The adaptive interview (see the module docstring)."""

    name = "adaptive"
    scored_per_turn = True

    def __init__(self, ctx: ProtocolContext):
        super().__init__(ctx)
        self._vectors: dict[str, np.ndarray] = {}
        self._decisions_checked = False

    @staticmethod
    def score(criteria: Sequence[Any], met: Mapping[str, bool]) -> float:
        """TestAgent Eq. 1, weighted, with deductions (:func:`engine.metrics.scoring.turn_score`)."""
        return turn_score(criteria, met)

    def finished(self, rows: list[dict[str, Any]]) -> bool:
        """Done after the planned number of turns (``spec.turns``)."""
        return len(rows) >= self.session.spec.turns

    # -- questions ----------------------------------------------------------------------------------
    def _decide(self, prev: dict[str, Any], t: int) -> tuple[str, list[float], list[float]]:
        """(action, state, probs) for turn t from the state after turn t−1."""
        spec = self.session.spec
        prev_action = prev["action"] if prev["action"] in (FOLLOW_UP, CHALLENGE) else (
            "none" if prev["action"] == INITIAL else FOLLOW_UP)
        state = state_vector(prev["score"] or 0.0, prev["delta"], prev["cos"], prev_action, t - 1, spec.turns)
        # Common random numbers: the draw depends on the run's seed, the item and the turn, never on
        # the target, so two targets that answer alike are asked alike (a difference in their scores
        # comes from their answers, not from the policy's luck).
        rng = np.random.default_rng(stable_seed(spec.seed, self.session.item.id, t))
        action, probs = self.ctx.policy.choose(state, rng)
        return action, [float(x) for x in state], [float(p) for p in probs]

    def _static_followup(self, rows: list[dict[str, Any]]) -> str | None:
        """The context's next dataset question not asked yet (activated static benchmark)."""
        followups = self.session.item.meta.get("followups") or []
        asked = {r["question"] for r in rows}
        for f in followups:
            if f.get("question") and f["question"] not in asked:
                return str(f["question"])
        return None

    async def next_question(self, rows: list[dict[str, Any]], steer: Steer) -> Ask | None:
        """Turn 0 asks the item's question; later turns follow the policy (or the evaluator)."""
        s = self.session
        t = len(rows)
        if t == 0:
            question = choice_question(s.item.question, s.item.options) if s.item.options else s.item.question
            return Ask(question, INITIAL, "item")
        prev = rows[-1]
        action, state, probs = self._decide(prev, t)
        ask = Ask("", action, "policy", state, probs)
        if steer.forced in (FOLLOW_UP, CHALLENGE):
            ask.action, ask.actor = steer.forced, "human"
            ask.consumed.append(Consumed(steer.forced_seq, "force", {"action": steer.forced, "turn": t}))  # type: ignore[arg-type]
            steer.forced = steer.forced_seq = None
        if steer.injected:
            ask.question, ask.action, ask.actor = steer.injected, HUMAN, "human"
            ask.consumed.append(Consumed(steer.injected_seq, "inject", {"question": steer.injected, "turn": t}))  # type: ignore[arg-type]
            steer.injected = steer.injected_seq = None
            return ask
        # A resumed session asks again; the decision is written once. Only this runner's first decision
        # can already be on record (a kill between a decision and its turn): later ones cannot, as this
        # runner owns the session (lease), so the log is searched once per runner, not every turn.
        if self._decisions_checked or not _decided_on_record(s, t):
            s.emit(ev.PolicyDecided(t, state, probs, ask.action, ask.actor))
        self._decisions_checked = True
        static = bool(s.item.meta.get("followups"))
        followup = self._static_followup(rows) if ask.action == FOLLOW_UP else None
        if followup is not None:
            ask.question = followup
        elif static and ask.action == FOLLOW_UP:
            s.emit(ev.SessionEndedEarly(t - 1, "questions-exhausted"))
            return None  # every question of the item has been asked
        else:
            met = s.effective_met(prev["id"], s.version_id)
            written = [c for c in s.criteria if not is_gold(c)]
            ask.question, ask.usage = await self.kernel.next_question(
                ask.action, s.item.topic, written, met, s.views(rows), prev["summary"] or "")
        return ask

    # -- judging --------------------------------------------------------------------------------------
    def _cos(self, a: str | None, b: str | None) -> float | None:
        """cos between two summaries; each summary is embedded once (the previous turn's is reused)."""
        if not a or not b:
            return None
        missing = [t for t in (a, b) if t not in self._vectors]
        if missing:
            for text, vec in zip(missing, self.ctx.embedder.embed(missing), strict=True):
                self._vectors[text] = vec
        while len(self._vectors) > 8:
            self._vectors.pop(next(iter(self._vectors)))
        return float(np.clip(self._vectors[a] @ self._vectors[b], -1.0, 1.0))

    async def _cos_of(self, a: str | None, b: str | None) -> float | None:
        """:meth:`_cos` off the event loop, or on it when both vectors are known already (the offline
        judge embeds its new summary with its verdicts' texts: a cache hit, no thread hop)."""
        if not a or not b:
            return None
        missing = [t for t in (a, b) if t not in self._vectors]
        cached = getattr(self.ctx.embedder, "cached", None)
        found = cached(missing) if missing and cached is not None else None
        if missing and found is None:
            return await asyncio.to_thread(self._cos, a, b)
        for text, vec in zip(missing, found if missing else [], strict=True):
            self._vectors[text] = vec
        return self._cos(a, b)

    async def _judge(self, turn: dict[str, Any], history: list[dict[str, Any]], version_id: int,
                     rescore: bool) -> dict[str, Any]:
        s = self.session
        criteria = s.criteria_of(version_id)
        prev = history[-1] if history else None
        views = s.views(history)
        gold = judge_gold_criteria(criteria, [*views, TurnView(turn["idx"], turn["question"], turn["answer"],
                                                               turn["action"])],
                                   s.item.question, s.item.options)
        others = [c for c in criteria if c.cid not in gold]
        judgement: Judgement = await self.kernel.judge.judge(
            turn["question"], others, (prev or {}).get("summary") or "", turn["answer"],
            s.item.reference, views, turn["action"])
        judgement.verdicts = {c.cid: gold.get(c.cid) or judgement.verdicts[c.cid] for c in criteria}
        met = {cid: v.met for cid, v in judgement.verdicts.items()}
        cos = None if prev is None else await self._cos_of(judgement.summary, prev["summary"])
        return s.record_judgement(
            turn, judgement.verdicts, self.score(criteria, met), prev_score=None if prev is None else prev["score"],
            summary=judgement.summary, cos=cos, usage=judgement.usage, version_id=version_id, rescore=rescore)

    async def judge_turn(self, turn: dict[str, Any], history: list[dict[str, Any]]) -> None:
        """One judge call: verdicts for every criterion and the updated summary; s_t, Δs_t, cos_t."""
        await self._judge(turn, history, self.session.version_id, rescore=False)

    async def finish(self, rows: list[dict[str, Any]]) -> None:
        """Professionalism and Stability: one judge call rates the whole conversation (1–10 on six
        dimensions), stored once per session (a resumed session does not rate again; the call is
        cached). The offline kernel does not rate: it records that an LLM judge is needed."""
        s = self.session
        if s.store.one("SELECT 1 AS x FROM metrics WHERE scope = 'session' AND scope_id = ? AND name = 'rated'",
                       (str(s.sid),)):
            return
        answered = [r for r in rows if r["answer"] is not None]
        if not answered:
            return
        judge = self.kernel.judge
        if getattr(judge, "offline", True) or not hasattr(judge, "rate"):
            ratings, rationale, note, usage = {}, "", "not rated: needs an LLM judge", None
        else:
            out, usage = await judge.rate([(r["question"], r["answer"], r["action"]) for r in answered],
                                          topic=s.item.topic,
                                          nonce_parts=tuple((r["question"], r["answer"]) for r in answered))
            ratings, rationale, note = out.values(), out.rationale, ""
        from engine.store import dumps, now_iso

        with s.store.transaction():
            for name, value in ratings.items():
                s.store.conn.execute(
                    "INSERT OR REPLACE INTO metrics (scope, scope_id, name, value, meta, created_at) "
                    "VALUES ('session', ?, ?, ?, '{}', ?)", (str(s.sid), f"rating.{name}", float(value), now_iso()))
            s.store.conn.execute(
                "INSERT OR REPLACE INTO metrics (scope, scope_id, name, value, meta, created_at) "
                "VALUES ('session', ?, 'rated', ?, ?, ?)",
                (str(s.sid), 1.0 if ratings else 0.0, dumps({"note": note, "rationale": rationale}), now_iso()))
            if usage is not None and answered:
                last = answered[-1]
                s.store.update("turns", last["id"], {"tokens_in": last["tokens_in"] + usage.tokens_in,
                                                     "tokens_out": last["tokens_out"] + usage.tokens_out,
                                                     "cost": last["cost"] + usage.cost})
            s.emit(ev.SessionRated(dict(ratings), rationale, note))

    async def rescore(self, rows: list[dict[str, Any]], version_id: int) -> None:
        """Re-judge every answered turn in order (summaries rebuilt under the new rubric)."""
        history: list[dict[str, Any]] = []
        for row in rows:
            if row["answer"] is None:
                continue
            history.append(await self._judge(row, history, version_id, rescore=True))
