"""rubric (SedarEval): the item's user turns asked in order, then one 0–5 score for the whole answer.

A session asks the item's turns (``Item.turns`` for a multi-turn row, else its question) as separate
user messages, each answered by the target, and scores once at the end (``scored_per_turn`` false,
like ``task``):

- **LLM judge.** The kernel's judge client gets the prompt of :mod:`engine.judge.rubric_judge`
  (the item's own ``auto_prompt`` when it has one, else one built from the reference, the scoring
  example and the rubric's ``+k`` points and ``-k`` deductions, with the answer between per-call
  nonce markers) and writes its reasoning and a final score. The LAST ``最终得分：N分`` /
  ``最终得分为：N`` (Chinese items) or ``Final score: N`` is read; a reply without a score in [0, 5]
  (missing, negative, above 5) is re-asked with the whole exchange up to ``judge_repairs`` times
  (``config.interview.judge_repairs``), then the session is recorded as :data:`CANNOT_JUDGE`: no
  score, excluded from every average and counted apart. The nonce is drawn from a generator seeded
  by the session's seed, item, target and rubric version, so a resumed session hits the cache.
  When the judge's context is known (reported by the server or ``context:``) the answers are cut to fit it
  (:func:`engine.judge.rubric_judge.build_judge_prompt`: the instructions, the item and the rubric always
  go, the answers share the rest, each keeping its beginning and its end and saying what was left out), and
  the cut is a ``session.note`` ``prompt-trimmed``.
- **Offline kernel.** No LLM can follow the rubric, so the figure is an **offline estimate**
  (:func:`engine.judge.rubric_judge.offline_estimate`): each point is credited when the answers hold
  the reference answer's words for it; a point it cannot judge honestly (translations, proofs,
  qualities, per-unit error counts) says "needs an LLM judge" instead of 0; the score is taken over
  the points it could judge, gates applied; with none, the session records "cannot judge" with the
  problem "needs an LLM judge". Its verdict rationales, its event (``offline_estimate``), the CLI,
  reports and the app say "offline estimate".

The turn score stored on the last turn is ``score / 5`` (so the session score is ``100 × score / 5``);
the judge's reasoning is the turn's summary and the ``rubric.scored`` event's ``reasoning``.
"""

from __future__ import annotations

import asyncio
import random
from collections.abc import Mapping, Sequence
from typing import Any

from engine import events as ev
from engine.interview.protocols.base import Ask, SessionProtocol, Steer
from engine.interview.session import FOLLOW_UP, INITIAL, SessionError, Turn
from engine.judge.base import Verdict
from engine.judge.rubric_judge import (
    CANNOT_JUDGE,
    MAX_REASKS,
    MAX_SCORE,
    NEEDS_LLM,
    ScoreReading,
    build_judge_prompt,
    estimate_score,
    judgement,
    offline_estimate,
    read_final_score,
    reask_messages,
)
from engine.llm import ContextOverflowError, Usage
from engine.metrics.scoring import turn_score
from engine.store import loads

REASK_ROOM = 900
"""Prompt characters kept free for a re-ask's message (what to fix and the score line's format, about 300
characters in English, 100 CJK characters in Chinese) when the prompt is sized to the judge's context."""

OFFLINE_ESTIMATE = "offline estimate"
"""The label of every figure the offline kernel gives a rubric item (point coverage, no LLM judge)."""


def user_turns(item: Any) -> list[str]:
    """The user messages of a rubric item in order: its turns, or its question when it has none."""
    turns = [t for t in (getattr(item, "turns", None) or []) if str(t).strip()]
    return turns or [item.question]


def coverage_score(criteria: Sequence[Any], met: Mapping[str, bool]) -> float:
    """The offline estimate on SedarEval's 0–5 scale: 5 × (Σ points met − Σ deductions met) / Σ points,
    clipped to [0, 5] (the rubric's total maps to the full score 5)."""
    return MAX_SCORE * turn_score(criteria, met)


def nonce_rng(seed: Any, item_id: Any, target: Any, version_id: Any) -> random.Random:
    """The generator of a judge call's marker nonce: the same session draws the same nonces (cache hits)."""
    return random.Random(f"rubric|{seed}|{item_id}|{target}|{version_id}")


class Rubric(SessionProtocol):
    """SedarEval's rubric protocol (see the module docstring)."""

    name = "rubric"
    scored_per_turn = False

    @staticmethod
    def score(criteria: Sequence[Any], met: Mapping[str, bool]) -> float:
        """The offline estimate's rule on the verdicts (:func:`engine.judge.rubric_judge.estimate_score`)
        / 5, in [0, 1], also applied after an override: a criterion without a verdict "needs an LLM
        judge" and is left out.

        A session scored by an LLM judge has one 0–5 score for the whole answer and no per-point
        verdicts: overriding one point there would replace the judge's score by a figure built from
        that single point, so it is refused (``met`` must hold a verdict of the offline estimate
        besides the one overridden).

        Raises:
            SessionError: ``met`` holds no more than the overridden verdict (an LLM-judged session).
        """
        if sum(1 for c in criteria if c.cid in met) < 2 and len(criteria) > 1:
            missing = [c.cid for c in criteria if c.cid not in met]
            raise SessionError(
                f"rubric sessions scored by an LLM judge have one 0-5 score for the whole answer and no verdict "
                f"per point (missing: {', '.join(missing)}); per-point overrides apply to offline estimates only")
        score, _, _ = estimate_score(criteria, met)
        return (score or 0.0) / MAX_SCORE

    # -- the loop's questions ---------------------------------------------------------------------
    def finished(self, rows: list[Turn]) -> bool:
        """Done once every user turn of the item has been asked."""
        return len(rows) >= len(user_turns(self.session.item))

    async def next_question(self, rows: list[Turn], steer: Steer) -> Ask | None:
        """The item's next user turn (the script is fixed: injected questions are not asked)."""
        turns = user_turns(self.session.item)
        t = len(rows)
        if t >= len(turns):
            return None
        return Ask(turns[t], INITIAL if t == 0 else FOLLOW_UP, "item")

    # -- scoring ----------------------------------------------------------------------------------
    def _scored_already(self, turn_idx: int, version_id: int) -> bool:
        """Whether a ``rubric.scored`` event already records this turn under this rubric version."""
        rows = self.session.store.query(
            "SELECT payload FROM events WHERE session_id = ? AND kind = ? ORDER BY seq",
            (self.session.sid, ev.RUBRIC_SCORED))
        return any((p := loads(r["payload"], {})).get("turn") == turn_idx
                   and p.get("rubric_version_id") == version_id for r in rows)

    async def finish(self, rows: list[Turn]) -> None:
        """Score the whole conversation once every turn of the item is answered (unless already on record;
        a session ended early by the evaluator is not scored)."""
        answered = [r for r in rows if r.answer is not None]
        if len(answered) < len(user_turns(self.session.item)):
            return  # ended before every turn was asked: nothing to judge the item's answer on
        last = answered[-1]
        if last.score is None and not self._scored_already(last.idx, self.session.version_id):
            await self._score(answered, self.session.version_id, rescore=False)

    async def rescore(self, rows: list[Turn], version_id: int) -> None:
        """Judge the stored answers again under a rubric version (the target is never asked)."""
        answered = [r for r in rows if r.answer is not None]
        if answered:
            await self._score(answered, version_id, rescore=True)

    async def _score(self, rows: list[Turn], version_id: int, rescore: bool) -> None:
        judge = self.kernel.judge
        if getattr(judge, "offline", False):
            await self._offline(rows, version_id, rescore)
        else:
            await self._llm(rows, version_id, rescore)

    def _record(self, rows: list[Turn], version_id: int, rescore: bool, score5: float | None,
                reasoning: str, verdicts: dict[str, Verdict], usage: Usage, *, attempts: int, status: str,
                problems: list[str], offline: bool, source: str) -> None:
        s = self.session
        last = rows[-1]
        event = ev.RubricScored(last.idx, version_id, score5, MAX_SCORE, status, reasoning, attempts, problems,
                                offline, source, rescore)
        with s.store.transaction():  # the judgement and the turn's score are written together
            s.emit(event)
            s.record_judgement(last, verdicts, None if score5 is None else score5 / MAX_SCORE,
                               scored_per_turn=False, summary=reasoning, usage=usage, version_id=version_id,
                               rescore=rescore)

    async def _offline(self, rows: list[Turn], version_id: int, rescore: bool) -> None:
        s = self.session
        criteria = s.criteria_of(version_id)
        if not any(c.kind != "deduction" for c in criteria):
            raise SessionError(f"item {s.item.id}: the rubric has no scoring point, so the offline kernel cannot "
                               "estimate a score; configure an LLM judge (`judge:` or `kernel:` in viva.yaml)")
        reply = "\n\n".join(r.answer for r in rows)
        asked = "\n".join(r.question for r in rows)
        facts = self.kernel.judge.facts
        est = await asyncio.to_thread(offline_estimate, asked, s.item.reference, criteria, reply, facts)
        # a point that needs an LLM judge gets no verdict (it is left out of the score, here and after an override)
        verdicts = {p.cid: Verdict(p.cid, p.status == "met", p.status == "met", f"{OFFLINE_ESTIMATE}: {p.evidence}",
                                   "offline") for p in est.points if p.status != NEEDS_LLM}
        lines = [f"{OFFLINE_ESTIMATE} (the reference answer's words for each point, no LLM judge):"]
        for c, p in zip(criteria, est.points, strict=True):
            sign = "-" if c.kind == "deduction" else "+"
            lines.append(f"{c.cid} {sign}{float(c.weight):g} {p.status}: {c.text} ({p.evidence})")
        if est.score is None:
            lines.append(f"{OFFLINE_ESTIMATE}: none: every point {NEEDS_LLM}")
            self._record(rows, version_id, rescore, None, "\n".join(lines), verdicts, Usage(), attempts=0,
                         status=CANNOT_JUDGE, problems=[NEEDS_LLM], offline=True, source="coverage")
            return
        lines.append(f"{OFFLINE_ESTIMATE}: {est.score:.2f} / {MAX_SCORE:g} over the points it could judge "
                     f"({est.judged_weight:g} of {est.total_weight:g}; {est.needs_llm} {NEEDS_LLM})")
        self._record(rows, version_id, rescore, est.score, "\n".join(lines), verdicts, Usage(), attempts=0,
                     status="scored", problems=[], offline=True, source="coverage")

    async def _llm(self, rows: list[Turn], version_id: int, rescore: bool) -> None:
        s = self.session
        judge = self.kernel.judge
        client = judge.client
        max_reasks = int(getattr(judge, "repairs", MAX_REASKS))
        answers = [r.answer for r in rows]
        built: list[Any] = []  # the prompt as last built (again after an overflow that named the context)
        readings: list[ScoreReading] = []
        usage = Usage()
        reply = ""

        def build(room: int | None, trims: list[str]) -> Any:
            built.append(build_judge_prompt(s.item, answers if len(answers) > 1 else answers[0],
                                            s.criteria_of(version_id),
                                            rng=nonce_rng(s.spec.seed, s.item.id, s.spec.target, version_id),
                                            limit_chars=room, trims=trims))
            return built[-1]

        async def ask(prompt: Any) -> Any:
            nonlocal reply
            readings.clear()
            reply = ""
            messages = prompt.messages
            while True:
                result = await client.chat(messages, purpose="rubric judge re-ask" if readings else "rubric judge")
                usage.add(result)
                reply = result.text
                reading = read_final_score(reply, prompt.language)
                readings.append(reading)
                outcome = judgement(readings, max_reasks)
                if outcome.status != "reask":
                    return outcome
                # the re-ask is the prompt and what to fix, numbered, never the whole bad reply (re-sending the
                # replies grew a weak judge's prompts from 1,129 to 2,811 tokens: issue 23)
                again = reask_messages([], reply, reading.problem or "no score", prompt.language)[-1]["content"]
                messages = [*prompt.messages, {"role": "user", "content": f"(re-ask {len(readings)}) {again}"}]

        try:
            outcome = await client.fitted(build, ask, call="rubric judge", turn=rows[-1].idx,
                                          reserve_chars=REASK_ROOM)
        except ContextOverflowError as exc:  # a bad exchange, not an unreachable judge: cannot judge
            readings.append(ScoreReading(None, f"the prompt does not fit the judge's context ({exc})"))
            outcome = judgement(readings, 0)
        prompt = built[-1]
        if outcome.status == CANNOT_JUDGE:
            reasoning = reply.strip()
            self._record(rows, version_id, rescore, None, reasoning, {}, usage, attempts=outcome.attempts,
                         status=CANNOT_JUDGE, problems=outcome.problems, offline=False, source=prompt.source)
            return
        self._record(rows, version_id, rescore, outcome.score, reply.strip(), {}, usage,
                     attempts=outcome.attempts, status="scored", problems=outcome.problems, offline=False,
                     source=prompt.source)
