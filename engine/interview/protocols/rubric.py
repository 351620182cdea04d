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

import random
from collections.abc import Mapping, Sequence
from typing import Any

from engine import events as ev
from engine.interview.protocols.base import Ask, SessionProtocol, Steer
from engine.interview.session import FOLLOW_UP, INITIAL, SessionError, Turn
from engine.judge.base import Verdict
from engine.judge.decide import CannotEstimate, judge_rubric
from engine.judge.rubric_judge import (
    MAX_SCORE,
    estimate_score,
)
from engine.llm import Usage
from engine.metrics.scoring import turn_score
from engine.store import loads


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
        """The conversation's 0–5 score by the judge's route (:func:`engine.judge.decide.judge_rubric`)."""
        s = self.session
        try:
            out = await judge_rubric(self.kernel.judge, s.item, s.criteria_of(version_id),
                                     [r.question for r in rows], [r.answer for r in rows],
                                     rng=nonce_rng(s.spec.seed, s.item.id, s.spec.target, version_id),
                                     turn=rows[-1].idx)
        except CannotEstimate as exc:
            raise SessionError(str(exc)) from exc
        self._record(rows, version_id, rescore, out.score5, out.reasoning, out.verdicts, out.usage,
                     attempts=out.attempts, status=out.status, problems=out.problems, offline=out.offline,
                     source=out.source)

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
