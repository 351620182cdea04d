"""Multiple choice against chance, and when a figure's n is too small to read (issue 36).

**Chance rate.** A multiple-choice question with k options is answered right by a blind guess with
probability 1/k. The chance rate of a set of questions is the mean of 1/k over them (the expected
share right of a uniform guesser when k varies), on the Score's 0–100 scale. It is defined only when
every question of the set is multiple choice (two options or more); a set that mixes in other
questions has none (its Score is not a share of guesses).

**Below chance.** A target is flagged *below chance* only when the upper end of the Wilson 95%
interval of its share of right answers lies below the chance rate: the shortfall is then unlikely to
be noise. Wilson, not the leaderboard's bootstrap, because a bootstrap over a handful of right/wrong
answers that are all wrong gives the interval [0, 0] and would flag 0 of 3 as surely below 25%,
which a guesser does 42% of the time. A Score under chance whose interval still reaches it is
*under chance, within noise*. The test needs right/wrong answers: each question's Score 0 or 100
(a question answered in several epochs counts each session's answer); with a partial score the
comparison is not made and says so.

**Too few to read.** A figure computed on fewer than :data:`MIN_READ_N` questions, items or reviewed
verdicts carries "too few to read (n = X < 50)", whatever its interval: the rule of ``viva judge
check`` (:data:`engine.metrics.agreement.MIN_READ_N`), applied wherever a leaderboard or report figure
is shown.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import asdict, dataclass
from typing import Any

from engine.metrics.agreement import MIN_READ_N
from engine.metrics.dynamism import wilson

__all__ = ["MIN_READ_N", "ChanceComparison", "chance_rate", "read_note", "too_few", "versus_chance"]


def too_few(n: int | None) -> bool:
    """Whether a figure over ``n`` questions, items or verdicts is too few to read (n < :data:`MIN_READ_N`)."""
    return n is not None and n < MIN_READ_N


def read_note(n: int | None, unit: str = "question(s)") -> str | None:
    """``"too few to read (n = 6 question(s) < 50)"`` under :data:`MIN_READ_N`, else None."""
    return f"too few to read (n = {n} {unit} < {MIN_READ_N})" if too_few(n) else None


def chance_rate(option_counts: Sequence[int | None]) -> float | None:
    """The chance rate on the 0–100 scale: 100 × mean(1/k) over the questions' option counts k.

    None when there is no question or one of them is not multiple choice (k None or under 2).
    """
    if not option_counts or any(k is None or k < 2 for k in option_counts):
        return None
    return 100.0 * sum(1.0 / k for k in option_counts if k) / len(option_counts)


@dataclass(frozen=True)
class ChanceComparison:
    """A multiple-choice Score beside the chance rate.

    Attributes:
        chance: the chance rate (0–100).
        right: answers right; ``answers``: answers scored (None when a score was partial).
        share: 100 × right / answers.
        ci: the Wilson 95% interval of the share, on 0–100.
        below: the interval's upper end is below chance (flag it).
        under: the share is below chance (``below`` or within noise).
        note: the comparison in words.
    """

    chance: float
    right: int | None
    answers: int | None
    share: float | None
    ci: tuple[float, float] | None
    below: bool
    under: bool
    note: str

    def as_dict(self) -> dict[str, Any]:
        """A JSON-ready copy."""
        return asdict(self)


def versus_chance(scores: Iterable[float], chance: float) -> ChanceComparison:
    """Compare right/wrong answers (each a Score of 0 or 100) with the chance rate (module docstring)."""
    scores = list(scores)
    if any(s not in (0.0, 100.0) for s in scores):
        return ChanceComparison(chance, None, None, None, None, False, False,
                                f"chance {chance:.1f}; not compared: some answers have a partial score")
    n = len(scores)
    right = sum(1 for s in scores if s == 100.0)
    if n == 0:
        return ChanceComparison(chance, 0, 0, None, None, False, False, f"chance {chance:.1f}; no answer scored")
    share = 100.0 * right / n
    lo, hi = wilson(right, n) or (0.0, 1.0)
    ci = (100.0 * lo, 100.0 * hi)
    below = ci[1] < chance
    under = share < chance
    if below:
        note = (f"BELOW CHANCE: {right}/{n} right, {share:.1f} [{ci[0]:.1f}, {ci[1]:.1f}] (Wilson 95%) "
                f"is under chance {chance:.1f}")
    elif under:
        note = (f"under chance {chance:.1f} but within noise: {right}/{n} right, {share:.1f} "
                f"[{ci[0]:.1f}, {ci[1]:.1f}] (Wilson 95%) reaches it")
    else:
        note = f"chance {chance:.1f}: {right}/{n} right, {share:.1f} [{ci[0]:.1f}, {ci[1]:.1f}] (Wilson 95%)"
    return ChanceComparison(chance, right, n, share, ci, below, under, note)
