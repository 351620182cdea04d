"""The scoped leaderboard as text, for the app and the command line alike
(:func:`engine.metrics.leaderboard.scoped_leaderboard` computes every figure; this only prints)."""

from __future__ import annotations

from typing import Any

from engine.api import kappa_text

COLUMNS: list[tuple[str, str, int]] = [
    ("target", "target", 11), ("bench", "benchmark", 6), ("n", "n", 3), ("Score [95% CI]", "score", 18),
    ("ΔS_f", "delta_follow_up", 5), ("hold (n)", "hold", 9), ("P+", "p_plus", 4), ("P−", "p_minus", 4),
    ("R", "r", 5),
    ("fail/ne", "failed", 7), ("θ ± 95%", "ability", 12), ("E[S]", "expected_score", 5),
]
"""(header, figure or field, width); a later column is one more entry. ``n``: what the Score is a mean over,
questions (each base question of a graded batch; a multiple-choice item) or items (an adaptive session's item,
whatever its criteria), ``*`` under 50 (too few to read; :func:`legend`). ``chance`` (:data:`CHANCE_COLUMN`,
added by :func:`columns_for` only when a row is multiple choice): the Score a blind guess gets, ``▼`` when the
target is below it (:mod:`engine.metrics.chance`). ``fail/ne``: the row's failed / not
examined sessions (both counted, neither in a figure; the detail says which). ``θ ± 95%``: the ability on
the benchmark's calibration with the half-width of its 95% interval (1.96 SE); ``E[S]``: the Score on the
full benchmark that the ability implies; "—" on a benchmark without a calibration. ``hold (n)``: the share of
challenged right claims the target kept, with the number tested (the detail has its Wilson interval).
:data:`EPOCH_COLUMNS` ``K`` and ``spread`` (added by :func:`columns_for` only when a row's items were run
more than once, ``--epochs``): the sessions per item (``2-3`` when they differ) and the mean per-item standard deviation of the session scores; the Score's
interval is then over items and epochs."""

DIGITS = {"score": 1}

ABILITY_KEYS = ("ability", "expected_score")

EPOCH_COLUMNS: list[tuple[str, str, int]] = [("K", "epochs_k", 3), ("spread", "spread", 6)]
"""The columns of repeated runs (see :data:`COLUMNS`)."""

EPOCH_KEYS = ("epochs_k", "spread")

CHANCE_COLUMN = ("chance", "chance", 6)
"""The chance column (see :data:`COLUMNS`), right after the Score."""

BELOW = "▼"
"""The mark of a Score below chance (its Wilson 95% upper end under the chance rate)."""

FEW = "*"
"""The mark of an ``n`` too few to read (under :data:`engine.metrics.chance.MIN_READ_N`)."""


def columns_for(board: dict[str, Any]) -> list[tuple[str, str, int]]:
    """The board's columns: :data:`COLUMNS`, without the ability columns when no row has an ability (no
    calibrated benchmark in scope: the row's detail and the notes say why), so the table fits 100 columns."""
    calibrated = any((r.get("ability") or {}).get("value") is not None for r in board.get("rows") or [])
    repeated = any(r.get("epochs") for r in board.get("rows") or [])
    chance = any(r.get("chance") for r in board.get("rows") or [])
    out = []
    for c in COLUMNS:
        if calibrated or c[1] not in ABILITY_KEYS:
            out.append(c)
        if c[1] == "score" and chance:
            out.append(CHANCE_COLUMN)
    return out + (EPOCH_COLUMNS if repeated else [])


SHRINK_ORDER = ("E[S]", "fail/ne", "spread", "K", "P−", "P+", "θ ± 95%", "R", "ΔS_f", "hold (n)", "chance")
"""The columns a narrow terminal drops first, in order (the target, benchmark, n and Score always stay);
every dropped figure is in the row's detail (:func:`detail`)."""


def fit_columns(columns: list[tuple[str, str, int]], width: int,
                pad: int = 2) -> tuple[list[tuple[str, str, int]], list[str]]:
    """``columns`` that fit ``width`` cells (each column takes its width plus ``pad``), dropping them in
    :data:`SHRINK_ORDER`; returns (the columns kept, the headers dropped)."""
    kept = list(columns)
    dropped: list[str] = []
    for header in SHRINK_ORDER:
        if sum(w + pad for _, _, w in kept) <= width:
            break
        if any(h == header for h, _, _ in kept):
            kept = [c for c in kept if c[0] != header]
            dropped.append(header)
    return kept, dropped


def chance_cell(row: dict[str, Any]) -> str:
    """``25.0`` (the chance rate), ``25.0▼`` when the target is below it, "–" for a row that is not
    multiple choice."""
    c = row.get("chance")
    if not c:
        return "–"
    return f"{c['chance']:.1f}" + (BELOW if c["below"] else "")


def n_cell(fig: dict[str, Any]) -> str:
    """A figure's n, marked :data:`FEW` when it is too few to read."""
    return f"{fig['n']}{FEW if fig.get('too_few') else ''}"


def legend(board: dict[str, Any]) -> list[str]:
    """What ``n``, its mark and the chance column mean, for the rows on the board (one line each)."""
    from engine.api import MIN_READ_N

    rows = board.get("rows") or []
    if not rows:
        return []
    units = {r.get("unit", "item") for r in rows}
    what = {"question": "questions scored (each question of a graded batch counts)",
            "item": "items (an adaptive session's item, whatever its criteria)"}
    out = [f"n: {' or '.join(what[u] for u in sorted(units, reverse=True))}"
           + (f"; {FEW} under {MIN_READ_N}: too few to read, the figure and its interval are noise"
              if any(r["figures"]["score"].get("too_few") for r in rows) else "")]
    if any(r.get("chance") for r in rows):
        out.append(f"chance: the Score of a blind guess, 100 × mean(1/options) over the row's questions; {BELOW}: "
                   "below chance (the Wilson 95% upper end of the share right is under it)")
    return out


def chance_line(row: dict[str, Any]) -> str | None:
    """The row's Score against chance in full, for its detail (None when it is not multiple choice)."""
    c = row.get("chance")
    return None if not c else "  " + c["note"]


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


def challenge_line(challenge: dict[str, Any]) -> str:
    """What a challenge turn tested and found: "tested c2: kept" / "abandoned", or why it tested nothing."""
    contested = challenge.get("contested") or []
    outcome = challenge.get("outcome")
    if not contested or outcome == "untested":
        return "tested nothing: no claim that earned credit was at stake"
    return f"tested {', '.join(contested)}: {outcome}"


def hold_cell(hold: dict[str, Any] | None) -> str:
    """``0.83 (6)``: the hold rate and the challenges it is over, or "–" when nothing was tested."""
    if not hold or hold.get("rate") is None:
        return "–"
    return f"{hold['rate']:.2f} ({hold['tested']})"


def hold_line(hold: dict[str, Any] | None) -> str:
    """The hold rate in full for a row's detail."""
    if not hold or hold.get("rate") is None:
        untested = (hold or {}).get("untested") or 0
        return "  hold   –  no challenge tested a right claim" + (f" ({untested} untested)" if untested else "")
    lo, hi = hold["ci"]
    return (f"  hold   {hold['rate']:.2f} [{lo:.2f}, {hi:.2f}]  {hold['kept']} kept of {hold['tested']} challenged "
            f"right claim(s), Wilson 95%" + (f"; {hold['untested']} untested" if hold.get("untested") else "")
            + (f"; {hold['read_note']}" if hold.get("read_note") else ""))


def ability_cell(ability: dict[str, Any] | None) -> str:
    """``+0.68 ± 0.87`` (the ability and 1.96 SE), or "—" when the row has none."""
    if not ability or ability["value"] is None:
        return "—"
    return f"{ability['value']:+.2f} ± {1.96 * ability['se']:.2f}"


def ability_line(ability: dict[str, Any] | None) -> str:
    """The ability in full for the row's detail: interval, SE, expected Score, the calibration it is on."""
    if not ability:
        return "ability: —"
    if ability["value"] is None:
        return f"ability: —, {ability['note']}"
    stale = ", stale: refit with viva bench calibrate" if ability["stale"] else ""
    expected = "–" if ability["expected_score"] is None else f"{ability['expected_score']:.1f}"
    return (f"ability {ability['value']:+.2f}, SE {ability['se']:.2f}, 95% interval {ability['low']:+.2f} to "
            f"{ability['high']:+.2f}; expected Score on all {ability['items']} item(s) {expected} "
            f"({ability['items_run']} run; {ability['model']} calibration on {ability['n_targets']} targets{stale})")


def ability_notes(board: dict[str, Any]) -> list[str]:
    """What the ability columns mean, and per benchmark why a row has none (one line each)."""
    rows = board["rows"]
    out = []
    if any((r.get("ability") or {}).get("value") is not None for r in rows):
        out.append("θ ± 95%: ability on the benchmark's item calibration, ± 1.96 SE; E[S]: the Score on all its "
                   "items that the ability implies (docs/calibration.md)")
    why = {r["benchmark"]: r["ability"]["note"] for r in rows
           if r.get("ability") and r["ability"]["value"] is None and r["benchmark"] != "-"}
    out += [f"{bench}: ability — {note}" for bench, note in sorted(why.items())]
    return out


def short_target(spec: str, width: int) -> str:
    """A target as a narrow column shows it: whole when it fits, else the part that tells targets apart
    (``python:module:Class`` -> ``Class``, ``openai:MODEL@URL`` -> ``MODEL``); the row's detail has it all."""
    if len(spec) <= width:
        return spec
    if spec.startswith("python:"):
        return spec.rsplit(":", 1)[-1]
    if spec.startswith("openai:"):
        return spec[len("openai:"):].split("@", 1)[0]
    return spec


def cells(row: dict[str, Any], narrow: bool = False,
          columns: list[tuple[str, str, int]] | None = None) -> list[str]:
    """One leaderboard row's cells in the order of ``columns`` (default :data:`COLUMNS`; ``narrow``: the
    target as :func:`short_target` gives it for the column's width)."""
    out = []
    for header, key, width in columns or COLUMNS:
        if key == "target" and narrow:
            out.append(short_target(str(row[key]), width))
        elif key in ("target", "benchmark"):
            out.append(str(row[key]))
        elif key == "n":
            out.append(n_cell(row["figures"]["score"]))
        elif key == "chance":
            out.append(chance_cell(row))
        elif key == "failed":
            out.append(f"{len(row['failed'])}/{len(row.get('not_examined') or [])}")
        elif key == "hold":
            out.append(hold_cell(row.get("hold")))
        elif key == "ability":
            out.append(ability_cell(row.get("ability")))
        elif key == "expected_score":
            ability = row.get("ability") or {}
            out.append("—" if ability.get("expected_score") is None else f"{ability['expected_score']:.1f}")
        elif key in EPOCH_KEYS:
            epochs = row.get("epochs")
            if not epochs:
                out.append("1" if key == "epochs_k" else "–")
            elif key == "epochs_k":
                lo, hi = epochs["k_min"], epochs["k_max"]
                out.append(str(hi) if lo == hi else f"{lo}-{hi}")
            else:
                out.append(number(epochs["spread"], 1))
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
    unit = row.get("unit", "item")
    few = row["figures"]["score"].get("read_note")
    lines = [f"{row['target']} on {row['benchmark']}: {row['finished']} finished of {len(row['sessions'])} "
             f"session(s), {len(row['items'])} {unit}(s)" + (f"; {few}: every figure below is noise" if few else "")
             + (f"; {failed} failed" if failed else "")
             + (f"; {unexamined} not examined (no question answered, no Score)" if unexamined else "")]
    for key, label in names.items():
        fig = row["figures"][key]
        turns = "" if key == "score" else f", {fig['turns']} turn(s)"
        why = f"  ({fig['ci_note']})" if fig["ci"] is None and fig["value"] is not None else ""
        lines.append(f"  {label:6} {with_ci(fig, DIGITS.get(key, 3))}  n={fig['n']} {unit}(s){turns}{why}")
        if key == "score" and chance_line(row):
            lines.append(chance_line(row))
    lines.append(hold_line(row.get("hold")))
    lines.append("  " + ability_line(row.get("ability")))
    return "\n".join(lines)


def comparison(c: dict[str, Any]) -> str:
    """A paired comparison on one line."""
    head = f"{c['a']} − {c['b']} ({c['benchmark']}), {c['n']} shared {c.get('unit', 'item')}(s): "
    if c["mean_difference"] is None:
        return head + c["note"]
    text = head + f"mean difference {c['mean_difference']:+.1f}"
    if c["ci"] is None:
        return text + f"; {c['note']}"
    lo, hi = c["ci"]
    return (text + f" [{lo:+.1f}, {hi:+.1f}]; " + ("excludes 0" if c["excludes_zero"] else "includes 0: no clear difference")
            + (f"; {c['read_note']}" if c.get("read_note") else ""))


def agreement_line(a: dict[str, Any]) -> str:
    """Judge–human agreement over the board's sessions, with n and κ ("too few" under the minimum)."""
    o = a["overall"]
    if not o["n"]:
        return "judge–human agreement: no verdict reviewed yet (agree with a or override with o in review)"
    from engine.api import read_note

    few = read_note(o["n"], "reviewed verdict(s)")
    return (f"judge–human agreement: n={o['n']} reviewed verdict(s), raw {o['raw']:.0%}, {kappa_text(o)}"
            + (f"; {few}" if few else ""))


def method_line(board: dict[str, Any]) -> str:
    """How the intervals were computed."""
    m = board["method"]
    epochs = ("; the Score's over items and each item's epochs where K > 1"
              if any(r.get("epochs") for r in board.get("rows") or []) else "")
    return (f"{board['scope']['label']}: {m['interval']} ({m['resamples']} resamples, seed {m['seed']}; "
            f"no interval under {m['min_items']} items{epochs})")
