"""The LLM judge: any OpenAI-compatible model marks answers against the rubric.

One judge call per turn returns verdicts for all criteria *and* the updated summary (fused, as
DESIGN.md asks); a task's scoring point is one call returning ``{reason, is_hit}``. Replies are
JSON validated with pydantic; unknown or missing criterion ids are repaired a bounded number of times.

Hostile answers cannot steer it: the answer is quoted between per-call nonce markers it cannot forge
(:mod:`engine.judge.prompts`), and the reply's verdict is the last JSON object outside any quoted
candidate text that is not a copy of an object the candidate wrote, validated by criterion ids
(:func:`engine.llm.client.extract_json`).
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel

from engine.judge import prompts
from engine.judge.base import Judgement, Verdict
from engine.llm import LLMClient, Usage


class _VerdictOut(BaseModel):
    id: str
    met: bool
    in_answer: bool = False
    rationale: str = ""


class _JudgeOut(BaseModel):
    verdicts: list[_VerdictOut]
    summary: str


class _PointOut(BaseModel):
    reason: str
    is_hit: bool


class LLMJudge:
    """Judges with an LLM client (the ``judge`` role)."""

    offline = False

    def __init__(self, client: LLMClient, repairs: int = 2):
        self.client = client
        self.repairs = repairs

    async def judge(self, question, criteria, summary, answer, reference, history, action) -> Judgement:
        """Verdicts for every criterion and the updated summary, in one validated call."""
        ids = [c.cid for c in criteria]

        def check(value: _JudgeOut) -> str | None:
            given = [v.id for v in value.verdicts]
            unknown = sorted(set(given) - set(ids))
            missing = [i for i in ids if i not in given]
            problems = []
            if unknown:
                problems.append(f"unknown criterion ids {unknown}; valid ids are {ids}")
            if missing:
                problems.append(f"missing verdicts for {missing}")
            if len(given) != len(set(given)):
                problems.append("an id appears more than once")
            return "; ".join(problems) or None

        nonce = prompts.call_nonce(len(history), question, summary, answer)
        out = await self.client.json_result(
            prompts.judge_messages(question, criteria, summary, answer, reference, nonce), _JudgeOut,
            validate=check, max_repairs=self.repairs, quoted=[answer], markers=prompts.markers(nonce))
        usage = Usage()
        for r in out.results:
            usage.add(r)
        verdicts = {v.id: Verdict(v.id, v.met, v.in_answer, v.rationale, "judge") for v in out.value.verdicts}
        return Judgement(verdicts, out.value.summary, usage)

    async def rate(self, turns, topic: str = "", nonce_parts: tuple = ()) -> tuple[Any, Usage]:
        """Professionalism and Stability ratings (1–10 on six dimensions) of a whole conversation."""
        import hashlib
        import random

        from engine.judge.ratings import ConversationRatings, build_rating_prompt

        seed = int(hashlib.sha256(repr(("ratings", *nonce_parts)).encode()).hexdigest()[:12], 16)
        out = await self.client.json_result(build_rating_prompt(turns, topic=topic, rng=random.Random(seed)),
                                            ConversationRatings, max_repairs=self.repairs)
        usage = Usage()
        for r in out.results:
            usage.add(r)
        return out.value, usage

    async def judge_point(self, task, point, transcript):
        """Whether a scoring point is achieved in the transcript: (hit, reason, usage)."""
        nonce = prompts.call_nonce(task, point, transcript)
        out = await self.client.json_result(
            prompts.point_judge_messages(task, point, transcript, nonce), _PointOut, max_repairs=self.repairs,
            quoted=[transcript], markers=prompts.markers(nonce))
        usage = Usage()
        for r in out.results:
            usage.add(r)
        return out.value.is_hit, out.value.reason, usage
