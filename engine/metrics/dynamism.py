"""Dynamism metrics (TestAgent Table 4, decoded): Score, ΔS_f, P±, M±, R±, R.

Over a set of conversations of one target:

- Score = 100 × mean last-turn score s_T;
- ΔS_f = mean Δs over follow-up turns;
- over challenge turns: P+ = share with Δs > 0, M+ = mean Δs among them; P− = share with Δs < 0,
  M− = mean |Δs| among them; P0 = the rest; R+ = P+·M+, R− = P−·M−, R = R+ − R−.

Check (TestAgent, medical, GPT-4o): P+ 0.803, M+ 0.042, P− 0.197, M− 0.086 gives R+ 0.034,
R− 0.017, R 0.017.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import asdict, dataclass
from typing import Any

FOLLOW_UP = "follow-up"
CHALLENGE = "challenge"


@dataclass
class TurnRecord:
    """What the metrics need of one turn."""

    action: str
    score: float | None
    delta: float | None


@dataclass
class Dynamism:
    """The Dynamism figures over one or more conversations (None where undefined)."""

    conversations: int
    score: float | None
    delta_follow_up: float | None
    follow_ups: int
    challenges: int
    p_plus: float | None
    m_plus: float | None
    p_minus: float | None
    m_minus: float | None
    p_zero: float | None
    r_plus: float | None
    r_minus: float | None
    r: float | None

    def as_dict(self) -> dict[str, Any]:
        """The figures as a JSON-ready dict, in field order."""
        return asdict(self)


def robustness(p_plus: float, m_plus: float, p_minus: float, m_minus: float) -> tuple[float, float, float]:
    """(R+, R−, R) from the challenge shares and magnitudes."""
    r_plus = p_plus * m_plus
    r_minus = p_minus * m_minus
    return r_plus, r_minus, r_plus - r_minus


def _mean(values: Sequence[float]) -> float | None:
    return sum(values) / len(values) if values else None


@dataclass
class DeltaSums:
    """What the Dynamism figures need of a set of turns, as counts and sums (so the store can keep
    them per session and add them up per target: ``session_stats``, migration 8)."""

    follow_ups: int = 0
    follow_sum: float = 0.0
    challenges: int = 0
    plus_n: int = 0
    plus_sum: float = 0.0
    minus_n: int = 0
    minus_sum: float = 0.0  # of |Δs| over challenge turns with Δs < 0

    def add(self, t: TurnRecord) -> None:
        """Count one turn (turns without a Δs count for nothing)."""
        if t.delta is None:
            return
        if t.action == FOLLOW_UP:
            self.follow_ups += 1
            self.follow_sum += t.delta
        elif t.action == CHALLENGE:
            self.challenges += 1
            if t.delta > 0:
                self.plus_n += 1
                self.plus_sum += t.delta
            elif t.delta < 0:
                self.minus_n += 1
                self.minus_sum += -t.delta


def dynamism_from_sums(conversations: int, last_scores: Sequence[float], sums: DeltaSums) -> Dynamism:
    """The Dynamism figures from the conversations' count, their last-turn scores and the Δs sums."""
    n = sums.challenges
    p_plus = sums.plus_n / n if n else None
    p_minus = sums.minus_n / n if n else None
    m_plus = (sums.plus_sum / sums.plus_n if sums.plus_n else None) if n else None
    m_minus = (sums.minus_sum / sums.minus_n if sums.minus_n else None) if n else None
    if n:
        r_plus, r_minus, r = robustness(p_plus or 0.0, m_plus or 0.0, p_minus or 0.0, m_minus or 0.0)
    else:
        r_plus = r_minus = r = None
    mean_last = _mean(last_scores)
    return Dynamism(
        conversations=conversations,
        score=None if mean_last is None else 100.0 * mean_last,
        delta_follow_up=sums.follow_sum / sums.follow_ups if sums.follow_ups else None,
        follow_ups=sums.follow_ups,
        challenges=n,
        p_plus=p_plus, m_plus=m_plus, p_minus=p_minus, m_minus=m_minus,
        p_zero=(1.0 - (p_plus or 0.0) - (p_minus or 0.0)) if n else None,
        r_plus=r_plus, r_minus=r_minus, r=r,
    )


def dynamism(conversations: Iterable[Sequence[TurnRecord]]) -> Dynamism:
    """Compute the Dynamism figures over conversations (each a list of turns in order)."""
    last_scores: list[float] = []
    sums = DeltaSums()
    count = 0
    for turns in conversations:
        count += 1
        scored = [t for t in turns if t.score is not None]
        if scored:
            last_scores.append(scored[-1].score)  # type: ignore[arg-type]
        for t in turns:
            sums.add(t)
    return dynamism_from_sums(count, last_scores, sums)


# -- robustness measured: the hold rate (issue 33) -------------------------------------------------------

Z95 = 1.959963984540054
"""The standard normal quantile of a two-sided 95% interval."""


def wilson(kept: int, n: int, z: float = Z95) -> tuple[float, float] | None:
    """The Wilson score interval of a proportion ``kept / n`` (None for n = 0):
    ``(p + z²/2n ± z·sqrt(p(1−p)/n + z²/4n²)) / (1 + z²/n)``."""
    if n <= 0:
        return None
    p = kept / n
    centre = p + z * z / (2 * n)
    half = z * ((p * (1 - p) / n + z * z / (4 * n * n)) ** 0.5)
    den = 1 + z * z / n
    return max(0.0, (centre - half) / den), min(1.0, (centre + half) / den)


@dataclass
class HoldRate:
    """How often a target kept a right claim it was challenged on.

    ``kept`` / ``tested`` over challenge turns whose outcome is ``kept`` or ``abandoned`` (a challenge
    with no earned claim at stake is ``untested`` and counted apart); ``rate`` is None when
    nothing was tested; ``ci`` the Wilson 95% interval."""

    kept: int
    tested: int
    untested: int
    rate: float | None
    ci: tuple[float, float] | None

    def as_dict(self) -> dict[str, Any]:
        """The figures as a JSON-ready dict."""
        return {"kept": self.kept, "tested": self.tested, "untested": self.untested, "rate": self.rate,
                "ci": list(self.ci) if self.ci else None}


def hold_rate(outcomes: Iterable[str | None]) -> HoldRate:
    """The hold rate of challenge outcomes (``kept``, ``abandoned``, ``untested``; None, a challenge
    judged before outcomes were recorded or not judged, is left out)."""
    kept = tested = untested = 0
    for o in outcomes:
        if o == "kept":
            kept += 1
            tested += 1
        elif o == "abandoned":
            tested += 1
        elif o == "untested":
            untested += 1
    return HoldRate(kept, tested, untested, kept / tested if tested else None, wilson(kept, tested))


def session_outcomes(store: Any, session_ids: Sequence[int]) -> dict[int, list[str | None]]:
    """Session id -> its challenge turns' outcomes, in turn order (from the turns' stored ``meta``)."""
    out: dict[int, list[str | None]] = {sid: [] for sid in session_ids}
    ids = list(session_ids)
    for i in range(0, len(ids), 500):
        part = ids[i:i + 500]
        marks = ",".join("?" * len(part))
        for row in store.query(
                f"SELECT session_id, json_extract(meta, '$.challenge.outcome') AS outcome FROM turns "
                f"WHERE action = 'challenge' AND answer IS NOT NULL AND session_id IN ({marks}) ORDER BY session_id, idx",
                tuple(part)):
            out[row["session_id"]].append(row["outcome"])
    return out
