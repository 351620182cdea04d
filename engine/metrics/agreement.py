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


# -- uncertainty: bootstrap intervals and rank agreement ----------------------------------------------

BOOTSTRAP_RESAMPLES = 1000
"""Resamples behind every 95% bootstrap interval."""
BOOTSTRAP_SEED = 20250
"""The seed of the resampling (the same file gives the same intervals)."""
MIN_READ_N = 50
"""Under this many rows a judge check's figures are printed with "too few to read"."""


def table_figures(a: Any, b: Any, c: Any, d: Any) -> dict[str, Any]:
    """Accuracy, κ, precision and recall of "met" from 2×2 counts (numbers or numpy arrays of them):
    a = both met, b = judge only, c = human only, d = neither. Undefined values are NaN."""
    import numpy as np

    a, b, c, d = (np.asarray(x, dtype=float) for x in (a, b, c, d))
    n = a + b + c + d
    with np.errstate(divide="ignore", invalid="ignore"):
        p_o = (a + d) / n
        p_j, p_h = (a + b) / n, (a + c) / n
        p_e = p_j * p_h + (1 - p_j) * (1 - p_h)
        kappa = np.where(p_e < 1, (p_o - p_e) / (1 - p_e), np.nan)
        precision = a / (a + b)
        recall = a / (a + c)
    return {"accuracy": p_o, "kappa": kappa, "precision": precision, "recall": recall}


def bootstrap_intervals(a: int, b: int, c: int, d: int, resamples: int = BOOTSTRAP_RESAMPLES,
                        seed: int = BOOTSTRAP_SEED, level: float = 0.95) -> dict[str, tuple[float, float] | None]:
    """95% percentile bootstrap intervals of accuracy, κ, precision and recall.

    Resampling the n rows with replacement draws the four cell counts from a multinomial with the
    observed shares, so each resample is one multinomial draw (exact, and cheap at any n). An interval
    is None when the figure is undefined in more than half of the resamples (or n = 0).
    """
    import numpy as np

    n = a + b + c + d
    keys = ("accuracy", "kappa", "precision", "recall")
    if n == 0:
        return dict.fromkeys(keys)
    rng = np.random.default_rng(seed)
    draws = rng.multinomial(n, np.array([a, b, c, d], dtype=float) / n, size=resamples)
    values = table_figures(draws[:, 0], draws[:, 1], draws[:, 2], draws[:, 3])
    out: dict[str, tuple[float, float] | None] = {}
    lo_q, hi_q = 100 * (1 - level) / 2, 100 * (1 + level) / 2
    for key in keys:
        v = values[key][~np.isnan(values[key])]
        out[key] = (float(np.percentile(v, lo_q)), float(np.percentile(v, hi_q))) if len(v) * 2 > resamples else None
    return out


def kendall_tau(x: Any, y: Any) -> float | None:
    """Kendall's τ-b of two equal-length sequences (ties corrected); None under 2 pairs or when
    either sequence is constant."""
    import numpy as np

    x, y = np.asarray(x, dtype=float), np.asarray(y, dtype=float)
    if len(x) < 2:
        return None
    dx = np.sign(x[:, None] - x[None, :])
    dy = np.sign(y[:, None] - y[None, :])
    upper = np.triu_indices(len(x), 1)
    sx, sy = dx[upper], dy[upper]
    concordant = float(np.sum(sx * sy))
    tx, ty = float(np.sum(sx != 0)), float(np.sum(sy != 0))
    if tx == 0 or ty == 0:
        return None
    return concordant / float(np.sqrt(tx * ty))


def pearson_r(x: Any, y: Any) -> float | None:
    """Pearson's r of two equal-length sequences; None under 2 pairs or when either is constant."""
    import numpy as np

    x, y = np.asarray(x, dtype=float), np.asarray(y, dtype=float)
    if len(x) < 2 or np.std(x) == 0 or np.std(y) == 0:
        return None
    return float(np.corrcoef(x, y)[0, 1])


@dataclass(frozen=True)
class RankAgreement:
    """How a judge ranks groups (systems, models) against people: per group the share the judge
    credits and the share people credit; Kendall τ-b and Pearson r between them, each with a 95%
    bootstrap interval (rows resampled within each group)."""

    groups: int
    kendall: float | None
    kendall_interval: tuple[float, float] | None
    pearson: float | None
    pearson_interval: tuple[float, float] | None
    shares: dict[str, tuple[float, float]]  # group -> (judge share, human share)

    def as_dict(self) -> dict[str, Any]:
        """A JSON-ready copy."""
        return asdict(self)


def rank_agreement(tables: dict[str, tuple[int, int, int, int]], resamples: int = BOOTSTRAP_RESAMPLES,
                   seed: int = BOOTSTRAP_SEED, level: float = 0.95) -> RankAgreement:
    """:class:`RankAgreement` from each group's 2×2 counts (both met, judge only, human only, neither).

    The judge's share of a group is (a + b) / n, people's (a + c) / n. Each resample draws every
    group's counts from a multinomial with its observed shares (the rows of each group resampled), and
    recomputes both coefficients; the interval is the 2.5th to 97.5th percentile.
    """
    import numpy as np

    names = [g for g, t in tables.items() if sum(t) > 0]
    counts = np.array([tables[g] for g in names], dtype=float)
    n = counts.sum(axis=1)
    judge = (counts[:, 0] + counts[:, 1]) / n if len(names) else np.array([])
    human = (counts[:, 0] + counts[:, 2]) / n if len(names) else np.array([])
    tau, r = kendall_tau(judge, human), pearson_r(judge, human)
    tau_iv = r_iv = None
    if len(names) >= 3:
        rng = np.random.default_rng(seed)
        taus, rs = [], []
        probs = counts / n[:, None]
        for _ in range(resamples):
            draw = np.array([rng.multinomial(int(k), p) for k, p in zip(n, probs, strict=True)], dtype=float)
            j, h = (draw[:, 0] + draw[:, 1]) / n, (draw[:, 0] + draw[:, 2]) / n
            t, p_ = kendall_tau(j, h), pearson_r(j, h)
            if t is not None:
                taus.append(t)
            if p_ is not None:
                rs.append(p_)
        lo_q, hi_q = 100 * (1 - level) / 2, 100 * (1 + level) / 2
        if len(taus) * 2 > resamples:
            tau_iv = (float(np.percentile(taus, lo_q)), float(np.percentile(taus, hi_q)))
        if len(rs) * 2 > resamples:
            r_iv = (float(np.percentile(rs, lo_q)), float(np.percentile(rs, hi_q)))
    shares = {g: (float(j), float(h)) for g, j, h in zip(names, judge, human, strict=True)}
    return RankAgreement(len(names), tau, tau_iv, r, r_iv, shares)
