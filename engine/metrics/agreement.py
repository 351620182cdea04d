"""Judge–human agreement on "met" verdicts: counts, raw agreement, base rates and Cohen's κ.

From pairs ``(judge_met, human_met)`` (one per verdict an evaluator confirmed or overrode):

- the 2×2 table: both met (a), judge only (b), human only (c), neither (d); n = a + b + c + d;
- raw agreement p_o = (a + d) / n;
- base rates of "met": judge (a + b) / n and human (a + c) / n;
- chance agreement p_e = p_judge·p_human + (1 − p_judge)·(1 − p_human);
- Cohen's κ = (p_o − p_e) / (1 − p_e).

κ is undefined when p_e = 1 (both raters gave the same single answer to every verdict: there is no
variation for agreement to be measured against) and when n = 0; it is then ``None`` with a reason.
The arithmetic is exact (fractions) so that p_e = 1 is detected exactly; results are floats.
Raw agreement alone misleads when most verdicts are "met": report κ with the count and base rates.

κ from few verdicts is noise: its standard error is about √(p_o(1 − p_o)/n)/(1 − p_e), 0.18 at
n = 20 with p_o = 0.8 and p_e = 0.5, and larger below. Under :data:`MIN_KAPPA_N` pairs the value is
still computed but flagged ``kappa_too_few``; the app, the CLI and the reports then print "too few"
with n instead of the number.
"""

from __future__ import annotations

from collections.abc import Hashable, Iterable
from dataclasses import asdict, dataclass
from fractions import Fraction
from typing import Any

MIN_KAPPA_N = 20
"""The fewest reviewed verdicts from which κ is shown as a number."""


class AgreementError(ValueError):
    """A pair that is not two booleans."""


@dataclass(frozen=True)
class Agreement:
    """Agreement figures for one group of verdicts.

    Attributes:
        n: number of pairs.
        both_met, judge_only, human_only, neither: the 2×2 table.
        raw: raw agreement p_o (None when n = 0).
        judge_met_rate: share the judge marked met (None when n = 0).
        human_met_rate: share the human marked met (None when n = 0).
        expected: chance agreement p_e (None when n = 0).
        kappa: Cohen's κ, or None when undefined.
        kappa_note: why κ is None (None when it is defined).
        kappa_too_few: n is under :data:`MIN_KAPPA_N` (κ is then shown as "too few", not as a number).
    """

    n: int
    both_met: int
    judge_only: int
    human_only: int
    neither: int
    raw: float | None
    judge_met_rate: float | None
    human_met_rate: float | None
    expected: float | None
    kappa: float | None
    kappa_note: str | None
    kappa_too_few: bool = True

    def as_dict(self) -> dict[str, Any]:
        """A JSON-ready copy."""
        return asdict(self)


def _check(value: Any, i: int, name: str) -> bool:
    if not isinstance(value, bool):
        raise AgreementError(f"pair {i}: {name} must be True or False, got {value!r}")
    return value


def agreement(pairs: Iterable[tuple[bool, bool]]) -> Agreement:
    """Count, raw agreement, base rates of "met" and Cohen's κ from ``(judge_met, human_met)`` pairs.

    Raises:
        AgreementError: a pair is not two bools.
    """
    a = b = c = d = 0
    for i, pair in enumerate(pairs):
        try:
            judge, human = pair
        except (TypeError, ValueError):
            raise AgreementError(f"pair {i}: expected (judge_met, human_met), got {pair!r}") from None
        judge, human = _check(judge, i, "judge_met"), _check(human, i, "human_met")
        if judge and human:
            a += 1
        elif judge:
            b += 1
        elif human:
            c += 1
        else:
            d += 1
    n = a + b + c + d
    if n == 0:
        return Agreement(0, 0, 0, 0, 0, None, None, None, None, None,
                         "κ undefined: no verdict was confirmed or overridden by a human")
    p_o = Fraction(a + d, n)
    p_j = Fraction(a + b, n)
    p_h = Fraction(a + c, n)
    p_e = p_j * p_h + (1 - p_j) * (1 - p_h)
    if p_e == 1:
        value = "met" if a else "not met"
        kappa, note = None, (f"κ undefined: judge and human marked all {n} verdicts {value!r}, "
                             "so chance agreement is 1 (report raw agreement and the count)")
    else:
        kappa, note = float((p_o - p_e) / (1 - p_e)), None
    return Agreement(n, a, b, c, d, float(p_o), float(p_j), float(p_h), float(p_e), kappa, note, n < MIN_KAPPA_N)


def kappa_text(a: dict[str, Any]) -> str:
    """κ as the app, the CLI and the reports print it: the number with n, "too few" under
    :data:`MIN_KAPPA_N` verdicts, or "undefined" with the reason (``a``: :meth:`Agreement.as_dict`)."""
    n = a.get("n", 0)
    if a.get("kappa") is None:
        return f"κ undefined (n={n})" if n else "κ: no reviewed verdict"
    if a.get("kappa_too_few", n < MIN_KAPPA_N):
        return f"κ too few (n={n} < {MIN_KAPPA_N})"
    return f"κ {a['kappa']:.2f} (n={n})"


def agreement_by(rows: Iterable[tuple[Hashable, bool, bool]]) -> dict[Hashable, Agreement]:
    """:func:`agreement` per key (criterion kind, benchmark, target...), keys in first-seen order.

    Args:
        rows: ``(key, judge_met, human_met)`` per reviewed verdict.
    """
    groups: dict[Hashable, list[tuple[bool, bool]]] = {}
    for key, judge, human in rows:
        groups.setdefault(key, []).append((judge, human))
    return {key: agreement(pairs) for key, pairs in groups.items()}
