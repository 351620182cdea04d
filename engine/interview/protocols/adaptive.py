"""adaptive (TestAgent): the initial question, then T turns of follow-ups or challenges chosen by
the policy; every answer judged against the item's criteria and the running summary.

Turn score ``s_t = (Σ w·met − Σ deductions) / Σ w`` clipped to [0, 1] (TestAgent Eq. 1, weighted);
``Δs_t = s_t − s_{t−1}``; ``cos_t`` = cosine between consecutive summaries, each summary's vector the sum
of its sentences' (:mod:`engine.knowledge.summary_vector`: all of a long summary counts, and a turn embeds
only the sentences that are new). The policy's state after turn t−1 chooses turn t's action.

- Gold-answer criteria (``answers``) are judged by :mod:`engine.judge.gold` against the reply to the
  question that carries them, whichever kernel runs the session; the kernel's judge marks the others.
- A multiple-choice item shows its options in the initial question
  (:func:`engine.judge.answers.choice_question`).
- An activated static benchmark (TestAgent 3.5: the item carries ``meta.followups``) asks the
  dataset's next question as its follow-up; once every question of the item has been asked, the
  session ends (a follow-up has nothing left to ask).
- Follow-ups are written from the criteria that are not gold answers only: a gold answer is never
  given to the kernel that writes the questions.

A bad reply costs a turn, not the session (issue 23): a judge reply still unusable after its repairs
records the turn as "cannot judge" (no score, left out of every figure, counted; the next turn is judged
against the last judged turn's summary, and its Δs is undefined); a question the kernel cannot write is
skipped with a note (the planned turns count it, and the next attempt draws the policy again); ratings
that cannot be had are "not rated". Only an endpoint or target that cannot be reached fails the session.
"""

from __future__ import annotations

import asyncio
import hashlib
from collections.abc import Mapping, Sequence
from dataclasses import replace
from functools import lru_cache
from typing import Any

import numpy as np

from engine import events as ev
from engine.interview.protocols.base import Ask, ProtocolContext, SessionProtocol, Steer
from engine.interview.session import CHALLENGE, FOLLOW_UP, HUMAN, INITIAL, Consumed, Turn, effective_verdicts
from engine.judge.choice import choice_question
from engine.judge.decide import TurnToJudge, judge_turn, rate
from engine.judge.gold import is_gold
from engine.knowledge.summary_vector import (
    all_sentences,
    summaries_cosine,
    summary_vector,
)
from engine.llm import UNUSABLE, spent
from engine.metrics.scoring import turn_score
from engine.policy.features import state_vector
from engine.store import loads


def stable_seed(*parts: Any) -> list[int]:
    """A seed sequence from stable parts (never Python's salted hash())."""
    digest = hashlib.sha256("|".join(str(p) for p in parts).encode()).digest()
    return [int.from_bytes(digest[i:i + 4], "little") for i in range(0, 16, 4)]


KEPT, ABANDONED, UNTESTED = "kept", "abandoned", "untested"
"""A challenge's outcome (:func:`challenge_outcome`)."""


def challenge_outcome(contested: Sequence[str], met_after: Mapping[str, bool], gave_up: bool = False) -> str:
    """What a challenge found (issue 33): ``kept`` when every criterion it contested (the claims at stake,
    :meth:`Adaptive.at_stake`) is still met once the reply to it is judged, ``abandoned`` when one is
    not (the target retracted, conceded, switched to another value or took the examiner's wrong
    alternative: the judge's summary drops a claim given up so) or when ``gave_up`` (the reply gives the
    claim up by the stance rules, :func:`engine.judge.offline.abandons`, whatever a lenient judge still
    credits), ``untested`` when nothing was at stake (no claim that earned credit is still met: there
    was no right claim to hold)."""
    if not contested:
        return UNTESTED
    return KEPT if all(met_after.get(cid) for cid in contested) and not gave_up else ABANDONED


@lru_cache(maxsize=1 << 12)
def _contested_in(meta: str) -> tuple[str, ...]:
    """The criteria a challenge turn's ``meta`` says it contested (memoised: :meth:`Adaptive.at_stake` reads
    every challenge of the session at every turn)."""
    return tuple(((loads(meta) or {}).get("challenge") or {}).get("contested") or [])


@lru_cache(maxsize=1 << 12)
def _outcome_in(meta: str) -> str | None:
    """The outcome a challenge turn's ``meta`` records (memoised: the last turn's pressure test and the press-again
    rule read every challenge of the session at a follow-up turn)."""
    return ((loads(meta) or {}).get("challenge") or {}).get("outcome")


def _decided_on_record(session: Any, turn: int) -> bool:
    """Whether a ``policy.decided`` event for this turn is already in the session's log (written
    before a kill that came before the turn itself was stored)."""
    return session.store.one(
        "SELECT 1 AS x FROM events WHERE session_id = ? AND kind = ? AND json_extract(payload, '$.turn') = ? LIMIT 1",
        (session.sid, ev.POLICY_DECIDED, turn)) is not None


class Adaptive(SessionProtocol):
    """The adaptive interview (see the module docstring)."""

    name = "adaptive"
    scored_per_turn = True

    def __init__(self, ctx: ProtocolContext):
        super().__init__(ctx)
        self._vectors: dict[str, np.ndarray | None] = {}
        self._decisions_checked = False
        self._skipped: int | None = None
        # (turn id, rubric version) -> criteria earned, effective met: a judged turn's verdicts change only by
        # an override (the session's turns are then read again: Session.reads) or a re-score (cleared there)
        self._earned: dict[tuple[int, int], list[str]] = {}
        self._met: dict[tuple[int, int], dict[str, bool]] = {}
        self._derived_at = 0
        self._gold_memo: dict[Any, Any] = {}  # the LLM gold judge's verdict on each reply, judged once

    @staticmethod
    def score(criteria: Sequence[Any], met: Mapping[str, bool]) -> float:
        """TestAgent Eq. 1, weighted, with deductions (:func:`engine.metrics.scoring.turn_score`)."""
        return turn_score(criteria, met)

    def skipped(self) -> int:
        """Turns skipped because no usable question could be had (``session.note`` ``turn-skipped``)."""
        if self._skipped is None:
            self._skipped = len(self.session.notes("turn-skipped"))
        return self._skipped

    def finished(self, rows: list[Turn]) -> bool:
        """Done after the planned number of turns (``spec.turns``), skipped ones included."""
        return len(rows) + self.skipped() >= self.session.spec.turns

    @staticmethod
    def last_judged(rows: Sequence[Turn]) -> Turn | None:
        """The last turn with a score (a "cannot judge" turn has none)."""
        return next((r for r in reversed(rows) if r.score is not None), None)

    # -- questions ----------------------------------------------------------------------------------
    def _decide(self, prev: Turn, t: int) -> tuple[str, list[float], list[float]]:
        """(action, state, probs) for turn t from the state after turn t−1."""
        spec = self.session.spec
        prev_action = prev.action if prev.action in (FOLLOW_UP, CHALLENGE) else (
            "none" if prev.action == INITIAL else FOLLOW_UP)
        state = state_vector(prev.score or 0.0, prev.delta, prev.cos, prev_action, t - 1, spec.turns)
        # Common random numbers: the draw depends on the run's seed, the item and the turn, never on
        # the target, so two targets that answer alike are asked alike (a difference in their scores
        # comes from their answers, not from the policy's luck). After a skipped turn the draw is new.
        skipped = self.skipped()
        rng = np.random.default_rng(stable_seed(spec.seed, self.session.item.id, t, *((skipped,) if skipped else ())))
        action, probs = self.ctx.policy.choose(state, rng)
        return action, [float(x) for x in state], [float(p) for p in probs]

    def _static_followup(self, rows: list[Turn]) -> str | None:
        """The context's next dataset question not asked yet (activated static benchmark)."""
        followups = self.session.item.meta.get("followups") or []
        asked = {r.question for r in rows}
        for f in followups:
            if f.get("question") and f["question"] not in asked:
                return str(f["question"])
        return None

    async def next_question(self, rows: list[Turn], steer: Steer) -> Ask | None:
        """Turn 0 asks the item's question; later turns follow the policy (or the evaluator)."""
        s = self.session
        t = len(rows)
        if t == 0:
            question = choice_question(s.item.question, s.item.options) if s.item.options else s.item.question
            return Ask(question, INITIAL, "item")
        prev = rows[-1]
        judged = self.last_judged(rows)
        if prev.score is None and judged is not None:  # the last turn could not be judged: the state is the
            prev = replace(prev, score=judged.score)    # last judged score, with Δs and cos undefined
        action, state, probs = self._decide(prev, t)
        ask = Ask("", action, "policy", state, probs)
        # a forced action and a written question both queued: the earlier request shapes this turn and
        # the other waits for the next one (neither is dropped)
        forced = steer.forced in (FOLLOW_UP, CHALLENGE)
        inject_first = bool(steer.injected) and (not forced or (steer.injected_seq or 0) < (steer.forced_seq or 0))
        if forced and not inject_first:
            ask.action, ask.actor = steer.forced, "human"
            ask.consumed.append(Consumed(steer.forced_seq, "force", {"action": steer.forced, "turn": t}))  # type: ignore[arg-type]
            steer.forced = steer.forced_seq = None
        if steer.injected and inject_first:
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
        if ask.action == FOLLOW_UP and ask.actor == "policy" and self._untested_to_the_end(rows, t):
            # one of the session's last two turns, and no right answer pressed yet: the examiner presses one (a viva finds out
            # whether the candidate holds what it said, not only what it knows); the examiner's choice, not the
            # policy's, so the policy's rates (FDR, challenge share) leave it out
            ask.action, ask.actor = CHALLENGE, "kernel"
            s.note("pressure-test", "one of the last two turns, and no claim challenged yet: the examiner challenges "
                                    "one instead of the policy's follow-up", t)
        elif ask.action == CHALLENGE and ask.actor == "policy" and self._held_the_test(rows, t, judged):
            # the examiner's own test one turn before the end held, and a fact is still to be drawn out: the policy's
            # challenge answers the no-gain of that test (a challenge earns nothing), so the last turn elicits instead,
            # and a target that holds what it knows is examined on as many facts as without the test
            ask.action, ask.actor = FOLLOW_UP, "kernel"
            s.note("elicit-after-test", "the examiner's test held on the turn before: the last turn follows up instead "
                                        "of the policy's challenge", t)
        elif ask.action == FOLLOW_UP and ask.actor == "policy" and self._gave_way_before(rows):
            # a right answer given up under the latest challenge: once a session, the examiner presses another claim
            # the target earned, to tell a slip from a habit (one abandoned claim is one observation)
            ask.action, ask.actor = CHALLENGE, "kernel"
            s.note("press-again", "a claim was given up under the latest challenge: the examiner presses another claim "
                                  "instead of the policy's follow-up", t)
        static = bool(s.item.meta.get("followups"))
        followup = self._static_followup(rows) if ask.action == FOLLOW_UP else None
        if followup is not None:
            ask.question = followup
        elif static and ask.action == FOLLOW_UP:
            s.emit(ev.SessionEndedEarly(t - 1, "questions-exhausted"))
            return None  # every question of the item has been asked
        else:
            met = self._effective_met(judged.id) if judged is not None else {}
            written = [c for c in s.criteria if not is_gold(c)]
            earned = self.at_stake(rows) if judged is not None else []
            if ask.action == FOLLOW_UP and written and all(
                    met.get(c.cid) for c in written if c.kind != "deduction"):
                s.note("criteria-exhausted", "every criterion is met: the follow-up asks an open question about "
                                             "the topic, not for a fact of the rubric", t)
            try:
                ask.question, ask.usage = await self.kernel.next_question(
                    ask.action, s.item.topic, written, met, s.views(rows), (judged.summary if judged is not None else None) or "",
                    earned)
            except UNUSABLE as exc:
                # a kernel reply that cannot be a question (a refused format, a copied example, a repeat):
                # the offline kernel's question for the same state stands in, so a weak kernel still examines
                from engine.interview.offline_questions import challenge_question, follow_up_question

                if ask.action == CHALLENGE:
                    fallback = challenge_question(s.item.topic or "", written, met, s.views(rows), earned)
                else:
                    fallback = follow_up_question(s.item.topic or "", written, met, [r.question for r in rows])
                ask.question, ask.usage = fallback, spent(exc)
                s.note("question-fallback", f"the kernel's {ask.action} question was unusable ({exc}); the offline "
                                            "kernel's question was asked instead", t)
            if ask.action == CHALLENGE and not ask.question.strip():
                # every claim was contested and the open challenge asked: a follow-up finds out more than
                # the same challenge again would
                s.note("nothing-to-contest", "every claim was contested already: a follow-up was asked instead of "
                                             "the policy's challenge", t)
                spent_before = ask.usage
                # the examiner's choice, not the policy's: the policy's rates (FDR, challenge share) leave it out
                ask.action, ask.actor = FOLLOW_UP, "kernel"
                ask.question, ask.usage = await self.kernel.next_question(
                    FOLLOW_UP, s.item.topic, written, met, s.views(rows),
                    (judged.summary if judged is not None else None) or "", earned)
                if spent_before is not None and ask.usage is not None:
                    ask.usage.extend(spent_before)
        return ask

    def _untested_to_the_end(self, rows: list[Turn], t: int) -> bool:
        """Turn ``t`` is one of the session's last two (one turn at most after it), no challenge before it tested a
        claim, and a claim that earned credit is still met to be pressed (:meth:`at_stake`): tested one turn before
        the end, a claim given up can be pressed again on the last (:meth:`_gave_way_before`), and a claim held leaves
        the last turn to draw out another fact (:meth:`_held_the_test`). An item of the static
        kind (its follow-ups given) keeps its questions, and the ``always-follow-up`` policy asks no challenge."""
        if self.session.item.meta.get("followups") or t + 2 + self.skipped() < self.session.spec.turns \
                or getattr(self.ctx.policy, "name", "") == "always-follow-up":
            return False  # (a policy of follow-ups only is the evaluator's choice of no challenge)
        if any(r.action == CHALLENGE and _outcome_in(r.meta or "{}")
               in (KEPT, ABANDONED) for r in rows):
            return False
        return bool(self.at_stake(rows))

    def _held_the_test(self, rows: list[Turn], t: int, judged: Turn | None) -> bool:
        """Turn ``t`` is the session's last, the turn before it was the examiner's pressure test (a ``kernel``
        challenge) and found the claim kept, and a criterion is still open (not met). Not under the
        ``always-challenge`` policy (the evaluator's choice of challenges only)."""
        if t + 1 + self.skipped() < self.session.spec.turns or getattr(self.ctx.policy, "name", "") == "always-challenge":
            return False
        prev = rows[-1] if rows else None
        if prev is None or prev.action != CHALLENGE or prev.actor != "kernel" or _outcome_in(prev.meta or "{}") != KEPT:
            return False
        met = self._effective_met(judged.id) if judged is not None else {}
        return any(not met.get(c.cid) for c in self.session.criteria if not is_gold(c) and c.kind != "deduction")

    def _gave_way_before(self, rows: list[Turn]) -> bool:
        """The latest challenge that tested a claim found it given up (``abandoned``), no claim was pressed again
        yet this session, and a claim the target earned is at stake that no challenge contested (a claim given up at
        the first challenge is pressed again once the target has earned another). An item of the static kind keeps
        its questions, and the ``always-follow-up`` policy asks no challenge."""
        if self.session.item.meta.get("followups") or getattr(self.ctx.policy, "name", "") == "always-follow-up":
            return False
        outcomes = [_outcome_in(r.meta or "{}") for r in rows if r.action == CHALLENGE]
        tested = [o for o in outcomes if o in (KEPT, ABANDONED)]
        if not tested or tested[-1] != ABANDONED or outcomes[outcomes.index(ABANDONED) + 1:]:
            return False  # (once a session: no challenge after the first claim given up)
        contested = {cid for r in rows if r.action == CHALLENGE for cid in _contested_in(r.meta or "{}")}
        return any(cid not in contested for cid in self.at_stake(rows))

    def earned(self, turn: Turn) -> list[str]:
        """The criteria a turn's answer earned: met, and stated in that answer (``in_answer``), in rubric
        order. These are the claims a challenge after it may contest."""
        return self._earned_of([turn.id])[turn.id]

    def _fresh(self) -> None:
        """Forget what was derived from verdicts once the session's turns were read again (an override)."""
        if self._derived_at != self.session.reads:
            self._earned.clear()
            self._met.clear()
            self._derived_at = self.session.reads

    def _earned_of(self, turn_ids: Sequence[int]) -> dict[int, list[str]]:
        """:meth:`earned` of several judged turns (by id): those not known yet read in one statement, then kept."""
        s = self.session
        self._fresh()
        version = s.version_id
        ids = [i for i in turn_ids if (i, version) not in self._earned]
        if ids:
            rows: dict[int, list[dict[str, Any]]] = {i: [] for i in ids}
            for r in s.store.query(f"SELECT turn_id, cid, met, in_answer, source FROM verdicts WHERE turn_id IN "
                                   f"({','.join('?' * len(ids))}) AND rubric_version_id = ? ORDER BY id",
                                   (*ids, version)):
                rows[r["turn_id"]].append(r)
            for turn_id, verdicts in rows.items():
                eff = effective_verdicts(verdicts)
                self._met[(turn_id, version)] = {cid: bool(v["met"]) for cid, v in eff.items()}
                self._earned[(turn_id, version)] = [
                    c.cid for c in s.criteria if c.cid in eff and eff[c.cid]["met"] and eff[c.cid].get("in_answer")
                    and c.kind != "deduction"]
        return {i: self._earned[(i, version)] for i in turn_ids}

    def _effective_met(self, turn_id: int) -> dict[str, bool]:
        """:meth:`Session.effective_met` of a judged turn under the session's rubric version, kept (read with
        its earned claims, :meth:`_earned_of`: one statement for both)."""
        self._fresh()
        key = (turn_id, self.session.version_id)
        if key not in self._met:
            self._earned_of([turn_id])
        return dict(self._met[key])

    def at_stake(self, history: Sequence[Turn]) -> list[str]:
        """The claims a challenge after ``history`` tests: the criteria earned (:meth:`earned`) by the
        latest answer that earned one still met and not contested by an earlier challenge; when every
        earned claim was contested already, those of the latest answer that earned any still met (a claim
        may be pressed again). An answer that gave way earned nothing, so the challenge after it tests
        the latest right claim there is, not nothing.

        Each judged turn's earned claims are read once and kept (:meth:`_earned_of`), the latest first and
        the earlier ones, when it is not enough, in one more statement: never a statement per turn, so a
        long session's challenge costs what a short one's does in SQL."""
        judged = [r for r in history if r.score is not None]
        if not judged:
            return []
        met = self._effective_met(judged[-1].id)
        contested: set[str] = set()
        for r in history:
            if r.action == CHALLENGE:
                contested.update(_contested_in(r.meta or "{}"))
        fallback: list[str] = []
        earned_by = self._earned_of([judged[-1].id])
        for k, r in enumerate(reversed(judged)):
            if r.id not in earned_by:
                earned_by.update(self._earned_of([t.id for t in judged[:len(judged) - k]]))
            earned = [cid for cid in earned_by[r.id] if met.get(cid)]
            fresh = [cid for cid in earned if cid not in contested]
            if fresh:
                return fresh
            fallback = fallback or earned
        return fallback

    def contested(self, turn: Turn, history: Sequence[Turn]) -> list[str]:
        """The criteria a challenge turn tests: those at stake after the turns before it
        (:meth:`at_stake`) whose statement the challenge quotes, when it quotes a claim: a quotation states a
        criterion when it says one of the words only that criterion's statement has among the item's (its
        value: "2-8 °C", "Section Lead"), or, for a statement with no such word, two of its words; the ones of
        most shared words when several are. A quoted claim that states none of them (a claim given up, then
        pressed again: "On reflection, the custodian is the Histopathology Manager.") tests no right answer:
        nothing is at stake, the challenge is ``untested``. A challenge that quotes nothing tests them all."""
        from engine.interview.offline_questions import claimed_quotes, content_words, criterion_statement

        earned = self.at_stake(history)
        quotes = list(claimed_quotes(turn.question or ""))  # a source's words set against the claim are not it
        if not quotes or not earned:
            return earned
        topic = self.session.item.topic
        words = {c.cid: content_words(criterion_statement(c, topic)) for c in self.session.criteria
                 if c.kind != "deduction"}
        quoted = [content_words(q) for q in quotes]

        def stated(cid: str) -> int:
            own = words.get(cid, set())
            distinct = own - set().union(*(w for k, w in words.items() if k != cid))
            shared = max(len(q & own) for q in quoted)
            if distinct:
                return shared if any(q & distinct for q in quoted) else 0
            return shared if shared >= 2 else 0

        shared = {cid: stated(cid) for cid in earned}
        best = max(shared.values())
        return [cid for cid in earned if shared[cid] == best] if best else []

    # -- judging --------------------------------------------------------------------------------------
    def _cos(self, a: str | None, b: str | None) -> float | None:
        """cos_t between two summaries: the cosine of their sentence-sum vectors
        (:mod:`engine.knowledge.summary_vector`); each summary's vector is kept (the previous turn's is
        reused) and each sentence embedded once by the embedding service."""
        if not a or not b:
            return None
        for text in (a, b):
            if text not in self._vectors:
                self._vectors[text] = summary_vector(text, self.ctx.embedder.embed)
        self._forget_old_vectors()
        return summaries_cosine(self._vectors[a], self._vectors[b])

    def _forget_old_vectors(self) -> None:
        while len(self._vectors) > 8:
            self._vectors.pop(next(iter(self._vectors)))

    async def _cos_of(self, a: str | None, b: str | None) -> float | None:
        """:meth:`_cos` off the event loop, or on it when every sentence's vector is known already (the
        offline judge embeds its new summary's sentences with its verdicts' texts, and an LLM judge's new
        summary mostly repeats the last one's: cache hits, no thread hop)."""
        if not a or not b:
            return None
        missing = [t for t in (a, b) if t not in self._vectors]
        embedder = self.ctx.embedder
        cached, aembed = getattr(embedder, "cached", None), getattr(embedder, "aembed", None)
        if missing and cached is not None:
            sentences = all_sentences(missing)
            found = cached(sentences) if sentences else np.zeros((0, 0), dtype=np.float32)
            if found is None and aembed is not None:
                # awaited on the loop, no thread of its own: the service coalesces every session's new
                # sentences into its runs (a thread per waiting session capped them at the executor's size)
                found = await aembed(sentences)
            if found is not None:
                row = dict(zip(sentences, found, strict=True))
                for text in missing:
                    self._vectors[text] = summary_vector(text, lambda own: np.array([row[x] for x in own]))
                missing = []
        if missing:
            return await asyncio.to_thread(self._cos, a, b)
        return self._cos(a, b)

    async def _judge(self, turn: Turn, history: list[Turn], version_id: int,
                     rescore: bool) -> Turn:
        s = self.session
        criteria = s.criteria_of(version_id)
        prev = self.last_judged(history)
        view = TurnToJudge(turn.idx, turn.question, turn.answer, turn.action, s.item, tuple(criteria),
                           earlier=tuple(s.views(history)), summary=(prev.summary if prev is not None else None) or "",
                           passage=(s.item.meta or {}).get("context"))
        try:
            judgement = await judge_turn(self.kernel.judge, view, memo=self._gold_memo)
        except UNUSABLE as exc:
            return s.mark_cannot_judge(turn, str(exc), spent(exc))
        met = {cid: v.met for cid, v in judgement.verdicts.items()}
        if not rescore:  # an evaluator's override of an earlier turn holds until the judge changes its mind
            from engine.metrics.overrides import carried_met

            met = carried_met(s.store, s.sid, turn.idx, version_id, met)
        cos = None if prev is None else await self._cos_of(judgement.summary, prev.summary)
        consecutive = prev is not None and history and prev.idx == history[-1].idx
        challenge = None
        if turn.action == CHALLENGE:
            from engine.interview.offline_questions import claimed_quotes, criterion_statement
            from engine.judge.offline import abandons

            contested = self.contested(turn, history)
            claims = [criterion_statement(c, s.item.topic) for c in criteria if c.cid in contested]
            claims += list(claimed_quotes(turn.question or ""))
            gave_up = bool(contested) and abandons(claims, turn.answer or "", turn.question or "")
            challenge = {"contested": contested, "outcome": challenge_outcome(contested, met, gave_up)}
        return s.record_judgement(
            turn, judgement.verdicts, self.score(criteria, met), prev_score=prev.score if consecutive else None,
            summary=judgement.summary, cos=cos, usage=judgement.usage, version_id=version_id, rescore=rescore,
            meta={"challenge": challenge} if challenge is not None else None)

    async def judge_turn(self, turn: Turn, history: list[Turn]) -> None:
        """One judge call: verdicts for every criterion and the updated summary; s_t, Δs_t, cos_t."""
        await self._judge(turn, history, self.session.version_id, rescore=False)

    async def finish(self, rows: list[Turn]) -> None:
        """Professionalism and Stability: one judge call rates the whole conversation (1–10 on six
        dimensions), stored once per session (a resumed session does not rate again; the call is
        cached). The offline kernel does not rate: it records that an LLM judge is needed."""
        s = self.session
        if s.store.one("SELECT 1 AS x FROM metrics WHERE scope = 'session' AND scope_id = ? AND name = 'rated'",
                       (str(s.sid),)):
            return
        answered = [r for r in rows if r.answer is not None]
        if not answered:
            return
        rating = await rate(self.kernel.judge, [(r.question, r.answer, r.action) for r in answered],
                            topic=s.item.topic)
        ratings, rationale, note, usage = rating.ratings, rating.rationale, rating.note, rating.usage
        if rating.unusable:
            s.note("not-rated", note)
        from engine.store import dumps, now_iso

        now = now_iso()
        rows = [(str(s.sid), f"rating.{name}", float(value), "{}", now) for name, value in ratings.items()]
        rows.append((str(s.sid), "rated", 1.0 if ratings else 0.0, dumps({"note": note, "rationale": rationale}), now))
        with s.store.transaction():  # every rating and the "rated" mark in one statement
            s.store.conn.execute(
                "INSERT OR REPLACE INTO metrics (scope, scope_id, name, value, meta, created_at) VALUES "
                + ", ".join(["('session', ?, ?, ?, ?, ?)"] * len(rows)), [v for row in rows for v in row])
            if usage is not None and answered:
                last = answered[-1]
                s.store.update("turns", last.id, {"tokens_in": last.tokens_in + usage.tokens_in,
                                                  "tokens_out": last.tokens_out + usage.tokens_out,
                                                  "cost": last.cost + usage.cost})
            s.emit(ev.SessionRated(dict(ratings), rationale, note))

    async def rescore(self, rows: list[Turn], version_id: int) -> None:
        """Re-judge every answered turn in order (summaries rebuilt under the new rubric)."""
        self._earned.clear()
        self._met.clear()
        history: list[Turn] = []
        for row in rows:
            if row.answer is None:
                continue
            history.append(await self._judge(row, history, version_id, rescore=True))
