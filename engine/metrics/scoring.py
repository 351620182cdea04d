"""Turn scores from criterion verdicts (TestAgent Eq. 1, weighted, with deductions)."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any


def turn_score(criteria: Iterable[Any], met: Mapping[str, bool]) -> float:
    """``s_t = (Σ w_i·I(met c_i) over points − Σ w_j·I(met d_j) over deductions) / Σ w_i``, clipped to [0, 1].

    Args:
        criteria: objects with ``cid``, ``kind`` (point, deduction, code) and ``weight``; code
            criteria count as points.
        met: criterion id -> whether the running summary covers it (for a deduction: whether the
            deduction applies). Missing ids count as not met.

    Returns:
        The score in [0, 1]; 0 when the rubric has no positive weight.
    """
    total = gained = lost = 0.0
    for c in criteria:
        weight = float(c.weight)
        if c.kind == "deduction":
            if met.get(c.cid):
                lost += abs(weight)
        else:
            total += weight
            if met.get(c.cid):
                gained += weight
    if total <= 0:
        return 0.0
    return min(1.0, max(0.0, (gained - lost) / total))


def weighted_hit_score(points: Iterable[tuple[float, bool]]) -> tuple[float, float]:
    """TaskWeaver: (Σ weight·hit, Σ weight·hit / Σ weight)."""
    pairs = list(points)
    total = sum(w for w, _ in pairs)
    score = sum(w for w, hit in pairs if hit)
    return score, (score / total if total else 0.0)
