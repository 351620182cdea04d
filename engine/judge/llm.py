"""The LLM judge: any OpenAI-compatible model marks answers against the rubric.

One judge call per turn returns verdicts for all criteria *and* the updated summary (fused, as
DESIGN.md asks); a task's scoring point is one call returning ``{reason, is_hit}``. Replies are
JSON validated with pydantic; unknown or missing criterion ids are repaired a bounded number of times.

Structured output (:mod:`engine.llm.structured`): each call sends a schema a grammar can enforce. The
verdicts are an object keyed by criterion id (every id required, no other key: exactly one verdict
each), each verdict's ``rationale`` before its booleans, strings bounded; the reply's ``verdicts`` may
also be the older list of ``{id, met, in_answer, rationale}`` objects (a server without a grammar).

Degenerate replies are repairs, never values: a placeholder copied from the prompt (``<…>``) or one of
its example values, a summary that is empty when the candidate said something, ratings in schema order
(1, 2, 3, 4, 5, 6) or without a rationale. A reply still unusable after the repairs raises
:class:`~engine.llm.JSONOutputError`; the protocol records "cannot judge" (or "not rated") for that
turn and goes on.

Hostile answers cannot steer it: the answer is quoted between per-call nonce markers it cannot forge
(:mod:`engine.judge.prompts`), and the reply's verdict is the last JSON object outside any quoted
candidate text that is not a copy of an object the candidate wrote, validated by criterion ids
(:func:`engine.llm.client.extract_json`).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from pydantic import BaseModel, field_validator

from engine.judge import prompts
from engine.judge.base import Judgement, TurnView, Verdict
from engine.llm import LLMClient, Usage
from engine.llm import structured as st

RATIONALE_CHARS = 200
"""Bound of one verdict's rationale in the schema sent to the server."""
SUMMARY_CHARS = 800
"""Bound of the running summary in the schema sent to the server."""


class _VerdictOut(BaseModel):
    id: str
    met: bool
    in_answer: bool = False
    rationale: str = ""


class _KeyedVerdict(BaseModel):
    rationale: str = ""
    in_answer: bool = False
    met: bool


class _JudgeOut(BaseModel):
    verdicts: list[_VerdictOut]
    summary: str

    @field_validator("verdicts", mode="before")
    @classmethod
    def _keyed(cls, value: Any) -> Any:
        """``{"c1": {...}, ...}`` (the schema's shape) as the list of verdicts with their ids."""
        if isinstance(value, dict):
            return [{"id": k, **(v if isinstance(v, dict) else {"met": v})} for k, v in value.items()]
        return value


class _PointOut(BaseModel):
    reason: str
    is_hit: bool


def judge_schema(ids: list[str]) -> dict[str, Any]:
    """The judge call's schema: one verdict per criterion id (object keys), rationale first, then the summary."""
    verdict = st.closed({"rationale": st.string(1, RATIONALE_CHARS), "in_answer": {"type": "boolean"},
                         "met": {"type": "boolean"}})
    return st.closed({"verdicts": st.closed({i: verdict for i in ids}),
                      "summary": st.string(1, SUMMARY_CHARS)})


POINT_SCHEMA = st.closed({"reason": st.string(1, RATIONALE_CHARS * 2), "is_hit": {"type": "boolean"}})


def ratings_schema() -> dict[str, Any]:
    """The ratings call's schema: a rationale first, then six integers 1..10 as an enum (a grammar
    honours an enum; llama.cpp's ignored an integer ``maximum``)."""
    from engine.metrics.ratings import DIMENSIONS

    score = {"type": "integer", "enum": list(range(1, 11))}
    return st.closed({"rationale": st.string(20, 800), **{d: score for d in DIMENSIONS}})


EXAMPLE_RATINGS = [7, 6, 8, 7, 8, 4]
"""The ratings of the prompt's example (:data:`engine.judge.ratings._SYSTEM`), in dimension order."""


def ratings_problem(value: Any) -> str | None:
    """Why ratings are degenerate: the prompt's example ratings copied, no rationale, or the six values in
    schema order 1, 2, 3, 4, 5, 6 (what a model that copies the schema's order writes), else None."""
    values = list(value.values().values())
    if values == EXAMPLE_RATINGS:
        return "the ratings are the example's (7, 6, 8, 7, 8, 4), not an assessment; rate this conversation"
    if not value.rationale.strip():
        return "give a rationale (two or three sentences) before the ratings"
    if values == list(range(1, len(values) + 1)):
        return ("the ratings are 1, 2, 3, 4, 5, 6 in the order of the fields, not an assessment; rate each "
                "dimension on its own")
    return None


class LLMJudge:
    """Judges with an LLM client (the ``judge`` role)."""

    offline = False
    facts = None  # the offline estimate's free-text judge: an LLM judge follows the rubric itself

    def __init__(self, client: LLMClient, repairs: int = 2, ratings_max_tokens: int | None = None):
        self.client = client
        self.repairs = repairs
        self.ratings_max_tokens = ratings_max_tokens

    async def judge(self, question: str, criteria: Sequence[Any], summary: str, answer: str | None,
                    reference: str | None, history: Sequence[TurnView], action: str) -> Judgement:
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
            if answer.strip() and not value.summary.strip():
                problems.append("the summary is empty; list what the candidate has asserted so far")
            return "; ".join(problems) or None

        nonce = prompts.call_nonce(len(history), question, summary, answer)
        schema = judge_schema(ids)
        out = await self.client.fitted_json(
            lambda room, trims: prompts.judge_messages(question, criteria, summary, answer, reference, nonce,
                                                       limit_chars=room, trims=trims),
            _JudgeOut, validate=check, max_repairs=self.repairs, quoted=[answer], markers=prompts.markers(nonce),
            json_schema=schema, examples=prompts.JUDGE_EXAMPLES, call="judge", turn=len(history))
        usage = Usage()
        for r in out.results:
            usage.add(r)
        verdicts = {v.id: Verdict(v.id, v.met, v.in_answer, v.rationale, "judge") for v in out.value.verdicts}
        return Judgement(verdicts, out.value.summary, usage)

    async def rate(self, turns, topic: str = "", nonce_parts: tuple = ()) -> tuple[Any, Usage]:
        """Professionalism and Stability ratings (1–10 on six dimensions) of a whole conversation."""
        import hashlib
        import random

        from engine.judge.ratings import RATING_EXAMPLES, ConversationRatings, build_rating_prompt

        seed = int(hashlib.sha256(repr(("ratings", *nonce_parts)).encode()).hexdigest()[:12], 16)
        # the transcript keeps its end within what the prompt's measured fixed part leaves of the context
        out = await self.client.fitted_json(
            lambda room, trims: build_rating_prompt(turns, topic=topic, rng=random.Random(seed),
                                                    limit_chars=room, trims=trims),
            ConversationRatings, max_repairs=self.repairs,
            validate=ratings_problem, json_schema=ratings_schema(), examples=RATING_EXAMPLES,
            **({"max_tokens": self.ratings_max_tokens}
               if self.ratings_max_tokens and not self.client.endpoint.max_tokens else {}),
            call="ratings")
        usage = Usage()
        for r in out.results:
            usage.add(r)
        return out.value, usage

    async def judge_point(self, task, point, transcript):
        """Whether a scoring point is achieved in the transcript: (hit, reason, usage)."""
        nonce = prompts.call_nonce(task, point, transcript)
        out = await self.client.fitted_json(
            lambda room, trims: prompts.point_judge_messages(task, point, transcript, nonce, limit_chars=room,
                                                             trims=trims),
            _PointOut, max_repairs=self.repairs, quoted=[transcript], markers=prompts.markers(nonce),
            json_schema=POINT_SCHEMA, examples=prompts.POINT_EXAMPLES, call="scoring point")
        usage = Usage()
        for r in out.results:
            usage.add(r)
        return out.value.is_hit, out.value.reason, usage
