"""What judges exchange with the interview: the turn as a judge sees it, verdicts and judgements."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

from engine.llm import Usage


@dataclass
class TurnView:
    """A turn as kernels and judges see it."""

    idx: int
    question: str
    answer: str | None
    action: str
    actor: str = "policy"
    score: float | None = None
    delta: float | None = None
    summary: str | None = None


@dataclass
class Verdict:
    """One criterion's verdict on one turn.

    ``met``: the candidate's position so far covers the criterion (for a deduction: it applies);
    ``in_answer``: the latest answer alone covers it; ``source``: judge, offline, code or human.
    """

    cid: str
    met: bool
    in_answer: bool
    rationale: str
    source: str


@dataclass
class Judgement:
    """A judge's verdicts on every criterion of a turn, with the updated running summary."""

    verdicts: dict[str, Verdict]
    summary: str
    usage: Usage = field(default_factory=Usage)


class Judge(Protocol):
    """Marks answers: what :mod:`engine.judge.decide` (the one caller that judges) uses of a judge.

    ``offline``: no LLM (the deterministic judge); ``client``: the LLM client an LLM judge calls (``None``
    offline), which the gold LLM judge and the rubric judge share; ``repairs``: how many times an unusable
    reply is repaired or re-asked; ``facts``: the offline free-text judge the rubric's offline estimate
    uses (``None`` for an LLM judge).
    """

    offline: bool
    client: Any
    repairs: int
    facts: Any

    async def judge(self, question: str, criteria: Sequence[Any], summary: str, answer: str | None,
                    reference: str | None, history: Sequence[TurnView], action: str) -> Judgement:
        """Verdicts for every criterion after ``answer`` and the updated summary."""
        ...

    async def judge_point(self, task: str, point: str, transcript: str) -> tuple[bool, str, Usage]:
        """Whether a scoring point is achieved in a transcript: (hit, reason, usage)."""
        ...

    async def rate(self, turns: Sequence[tuple[str, str, str]], topic: str = "",
                   nonce_parts: tuple = ()) -> tuple[Any, Usage]:
        """Professionalism and Stability ratings of a conversation's answered turns (an LLM judge)."""
        ...
