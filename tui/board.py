"""The scoped leaderboard as text, for the app and the command line alike
(:func:`engine.metrics.leaderboard.scoped_leaderboard` computes every figure; this only prints)."""

from __future__ import annotations

from typing import Any

from engine.api import kappa_text

COLUMNS: list[tuple[str, str, int]] = [
    ("target", "target", 12), ("bench", "benchmark", 6), ("n", "n", 2), ("Score [95% CI]", "score", 17),
    ("ΔS_f", "delta_follow_up", 5), ("P+", "p_plus", 4), ("P−", "p_minus", 4), ("R [95% CI]", "r", 17),
    ("fail/ne", "failed", 7),
]
"""(header, figure or field, width); a later column (e.g. an ability estimate) is one more entry. ``fail/ne``:
the row's failed / not examined sessions (both counted, neither in a figure; the detail says which)."""

DIGITS = {"score": 1}


def number(value: float | None, digits: int = 3) -> str:
    """A figure, or "–" when it is undefined."""
    return "–" if value is None else f"{value:.{digits}f}"


def with_ci(fig: dict[str, Any], digits: int = 3) -> str:
    """``value [lo, hi]``, or the value with why there is no interval."""
    if fig["value"] is None:
        return "–"
    text = number(fig["value"], digits)
    if fig["ci"] is None:
        return f"{text} (n={fig['n']})"
    lo, hi = fig["ci"]
    return f"{text} [{lo:.{digits}f}, {hi:.{digits}f}]"


def cells(row: dict[str, Any]) -> list[str]:
    """One leaderboard row's cells in :data:`COLUMNS` order."""
    out = []
    for header, key, _ in COLUMNS:
        if key in ("target", "benchmark"):
            out.append(str(row[key]))
        elif key == "n":
            out.append(str(row["figures"]["score"]["n"]))
        elif key == "failed":
            out.append(f"{len(row['failed'])}/{len(row.get('not_examined') or [])}")
        elif "CI" in header:
            out.append(with_ci(row["figures"][key], DIGITS.get(key, 2)))
        else:
            out.append(number(row["figures"][key]["value"], 2))
    return out


def detail(row: dict[str, Any]) -> str:
    """Every figure of a row with its n (items; turns for rates) and interval, one per line."""
    names = {"score": "Score", "delta_follow_up": "ΔS_f", "p_plus": "P+", "m_plus": "M+", "p_minus": "P−",
             "m_minus": "M−", "r_plus": "R+", "r_minus": "R−", "r": "R"}
    unexamined, failed = len(row.get("not_examined") or []), len(row["failed"])
    lines = [f"{row['target']} on {row['benchmark']}: {row['finished']} finished of {len(row['sessions'])} "
             f"session(s), {len(row['items'])} item(s)" + (f"; {failed} failed" if failed else "")
             + (f"; {unexamined} not examined (no question answered, no Score)" if unexamined else "")]
    for key, label in names.items():
        fig = row["figures"][key]
        turns = "" if key == "score" else f", {fig['turns']} turn(s)"
        why = f"  ({fig['ci_note']})" if fig["ci"] is None and fig["value"] is not None else ""
        lines.append(f"  {label:6} {with_ci(fig, DIGITS.get(key, 3))}  n={fig['n']} item(s){turns}{why}")
    return "\n".join(lines)


def comparison(c: dict[str, Any]) -> str:
    """A paired comparison on one line."""
    head = f"{c['a']} − {c['b']} ({c['benchmark']}), {c['n']} shared item(s): "
    if c["mean_difference"] is None:
        return head + c["note"]
    text = head + f"mean difference {c['mean_difference']:+.1f}"
    if c["ci"] is None:
        return text + f"; {c['note']}"
    lo, hi = c["ci"]
    return text + f" [{lo:+.1f}, {hi:+.1f}]; " + ("excludes 0" if c["excludes_zero"] else "includes 0: no clear difference")


def agreement_line(a: dict[str, Any]) -> str:
    """Judge–human agreement over the board's sessions, with n and κ ("too few" under the minimum)."""
    o = a["overall"]
    if not o["n"]:
        return "judge–human agreement: no verdict reviewed yet (confirm with k or override with o in review)"
    return f"judge–human agreement: n={o['n']} reviewed verdict(s), raw {o['raw']:.0%}, {kappa_text(o)}"


def method_line(board: dict[str, Any]) -> str:
    """How the intervals were computed."""
    m = board["method"]
    return (f"{board['scope']['label']}: {m['interval']} ({m['resamples']} resamples, seed {m['seed']}; "
            f"no interval under {m['min_items']} items)")
