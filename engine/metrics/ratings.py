"""Professionalism and Stability per target: averages of the judge's 1–10 conversation ratings.

Per target, over its rated sessions: the mean of each of the six dimensions; Professionalism = the
mean of its three dimension means (accuracy, user satisfaction, clarity); Stability = the mean of
coherence, question handling and challenge handling. A session judged by an offline kernel is not
rated: it carries :data:`NOT_RATED` and counts in ``not_rated``, and a target with no rated session
shows :data:`NOT_RATED` for every figure, never a number.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

PROFESSIONALISM = ("accuracy", "user_satisfaction", "clarity")
"""The Professionalism dimensions."""

STABILITY = ("coherence", "question_handling", "challenge_handling")
"""The Stability dimensions."""

DIMENSIONS = PROFESSIONALISM + STABILITY
"""All six dimensions, in display order."""


@dataclass(frozen=True)
class NotRated:
    """The value of a rating no LLM judge gave (offline kernel). Never a number.

    Attributes:
        reason: why there is no rating.
    """

    reason: str = "needs an LLM judge"

    def __str__(self) -> str:
        """``not rated: <reason>``."""
        return f"not rated: {self.reason}"

    def as_json(self) -> str:
        """How it appears in JSON output."""
        return str(self)


NOT_RATED = NotRated()
"""The rating of a session judged offline: "not rated: needs an LLM judge"."""


class RatingsInputError(ValueError):
    """A session rating that is neither six 1–10 integers nor :class:`NotRated`."""


def _values(rating: Any, i: int) -> dict[str, int]:
    if isinstance(rating, Mapping):
        values = {d: rating.get(d) for d in DIMENSIONS}
    else:
        values = {d: getattr(rating, d, None) for d in DIMENSIONS}
    for d, v in values.items():
        if isinstance(v, bool) or not isinstance(v, int) or not 1 <= v <= 10:
            raise RatingsInputError(f"session {i}: {d} must be an integer from 1 to 10, got {v!r}")
    return values  # type: ignore[return-value]


@dataclass
class TargetRatings:
    """One target's rating figures.

    Attributes:
        target: the target's name.
        rated: sessions with ratings.
        not_rated: sessions without (offline kernel).
        means: dimension -> mean rating, or :data:`NOT_RATED` when no session was rated.
    """

    target: str
    rated: int = 0
    not_rated: int = 0
    means: dict[str, float | NotRated] = field(default_factory=dict)

    def _group(self, dims: tuple[str, ...]) -> float | NotRated:
        values = [self.means.get(d, NOT_RATED) for d in dims]
        if any(isinstance(v, NotRated) for v in values):
            return NOT_RATED
        return sum(values) / len(values)  # type: ignore[arg-type]

    @property
    def professionalism(self) -> float | NotRated:
        """Mean of the accuracy, user-satisfaction and clarity means."""
        return self._group(PROFESSIONALISM)

    @property
    def stability(self) -> float | NotRated:
        """Mean of the coherence, question-handling and challenge-handling means."""
        return self._group(STABILITY)

    def as_dict(self) -> dict[str, Any]:
        """A JSON-ready copy; unrated figures appear as the string "not rated: needs an LLM judge"."""
        def show(v: float | NotRated) -> float | str:
            return v.as_json() if isinstance(v, NotRated) else v
        return {"target": self.target, "rated": self.rated, "not_rated": self.not_rated,
                "professionalism": show(self.professionalism), "stability": show(self.stability),
                **{d: show(self.means.get(d, NOT_RATED)) for d in DIMENSIONS}}


def rating_averages(sessions: Iterable[tuple[str, Any]]) -> dict[str, TargetRatings]:
    """Per-target averages of session ratings, targets in first-seen order.

    Args:
        sessions: ``(target, rating)`` per finished session, the rating being the judge's ratings
            (:class:`engine.judge.ratings.ConversationRatings` or a mapping of the six dimensions)
            or :data:`NOT_RATED`.

    Raises:
        RatingsInputError: a rating that is neither.
    """
    sums: dict[str, dict[str, int]] = {}
    out: dict[str, TargetRatings] = {}
    for i, (target, rating) in enumerate(sessions):
        row = out.setdefault(target, TargetRatings(target))
        if isinstance(rating, NotRated):
            row.not_rated += 1
            continue
        values = _values(rating, i)
        row.rated += 1
        acc = sums.setdefault(target, dict.fromkeys(DIMENSIONS, 0))
        for d, v in values.items():
            acc[d] += v
    for target, row in out.items():
        row.means = ({d: sums[target][d] / row.rated for d in DIMENSIONS} if row.rated
                     else dict.fromkeys(DIMENSIONS, NOT_RATED))
    return out
