"""A leaderboard an evaluator can decide from: scoped, with n and intervals, and paired comparisons.

**Scope.** The board covers one run, one benchmark or the sessions a filter selects
(:func:`scope_sessions`); by default the latest run. Rows are per (benchmark, target): a target's
figures are never averaged across benchmarks, whatever the scope.

**Items are the unit; a graded batch's questions each count** (issue 36). A row's figures are over the
target's *finished* sessions, grouped by item (the benchmark question): an item's score is the mean score of
the target's finished sessions on it (one session per item in an ordinary run), and the Score is the mean
over items. A graded session asks a batch of up to 3 questions (JudgeAgent), and a reader counts
questions, not batches: each of its scored base questions is a unit of its own (key: the question's item,
score 100 × its turn score, 0 or 100; :func:`scored_units`), so ``n`` counts questions and the interval
resamples questions. ``unit`` says which a row counts (``question`` for graded rows and rows whose items
are all multiple choice, else ``item``). ΔS_f, P±, M±, R± and R pool the turns of those sessions
(:mod:`engine.metrics.dynamism`).

**Chance and small n** (issue 36, :mod:`engine.metrics.chance`). A row whose units are all multiple-choice
questions has ``chance``: the chance rate (100 × mean 1/options) and the Wilson comparison of its answers
with it (``below`` only when the Wilson 95% upper end is under chance); otherwise None. Every figure has
``too_few`` and ``read_note`` ("too few to read" under 50 of its unit, the rule of ``viva judge check``), as
do the paired comparisons (over shared units) and the hold rate (over challenges tested).

**Intervals.** Every figure has a 95% percentile bootstrap interval over items: the row's items are
resampled with replacement :data:`RESAMPLES` times with ``numpy.random.default_rng(seed)`` (seed
:data:`SEED` unless given), each figure is recomputed from the resampled items' sums, and the 2.5th
and 97.5th percentiles of the resampled figures are the interval. Resamples in which a rate is
undefined (no follow-up or challenge turn drawn) are left out for that rate. Under
:data:`MIN_ITEMS` items there is no interval (``ci`` None, ``ci_note`` says "too few items"): a
bootstrap over one item says nothing. ``n`` is the number of items (questions), and for rates also the number
of turns the rate is over (``turns``); ``unit`` what n counts.

**Epochs** (issue 37). When an item of a row has more than one finished session (``viva run --epochs
K``, or the same items run again within the scope), the row's ``epochs`` says how many sessions its
items have (``k_min``, ``k_max``), the per-item spread (``spread``: the mean over the items run at least
twice of the sample standard deviation, n−1, of their session scores; ``spread_max`` the largest, and
``per_item`` each), and the Score's interval is a two-level bootstrap (:func:`epoch_interval`): items
are resampled with replacement, then each drawn item's sessions are resampled with replacement within
it, and the Score of a resample is the mean over the drawn items of the mean of their drawn sessions,
so the interval accounts for both the items and the epochs. ``method["score_interval"]`` says which
was used. The other figures pool turns and keep the bootstrap over items.

**Paired comparison.** Two targets of one benchmark on the items both have a finished score: the
difference d_i = score_A(i) − score_B(i), its mean, and a bootstrap interval over those shared items
(same resampling, same seed); ``excludes_zero`` says whether the interval leaves 0 out (the
difference is then unlikely to be resampling noise). Under :data:`MIN_ITEMS` shared items there is
no interval.

**Ability** (issue 28). On a benchmark with a stored item calibration (``viva bench calibrate``), a
row also has the target's ability with its standard error and 95% interval, and the expected Score on
the full benchmark that the ability implies (:func:`engine.bench.calibrate.target_abilities`), from the
responses of the row's own sessions (the scope's, not every session stored); the caller passes the
reader (:data:`Abilities`, :func:`engine.bench.calibrate.scope_abilities`). ``ability`` is then
``{"value", "se", "low", "high", "expected_score", "units_answered", "items_run", "items", "model",
"n_targets", "stale", "note"}``; without a calibration, or without a response to a calibrated unit,
``value`` is None and ``note`` says why (never a number made up from the prior alone).

**Hold rate** (issue 33). A row also has ``hold``: of the challenges that tested a claim the answer
before had earned (:func:`engine.interview.protocols.adaptive.challenge_outcome`), the share the
target kept, with n (``tested``) and the Wilson 95% interval (:func:`engine.metrics.dynamism.wilson`;
over challenges, not a bootstrap over items); challenges with no earned claim at stake are
counted apart (``untested``).

**Judge–human agreement** (:func:`engine.metrics.sessions.agreement`) comes with its n; κ is
reported only from :data:`engine.metrics.agreement.MIN_KAPPA_N` reviewed verdicts on ("too few"
below).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any

import numpy as np

from engine.metrics.chance import chance_rate, read_note, too_few, versus_chance
from engine.store import Store, loads

SEED = 0
"""The bootstrap's default seed (figures are reproducible)."""

RESAMPLES = 2000
"""Bootstrap resamples per interval."""

MIN_ITEMS = 2
"""The fewest items (or shared items, for a comparison) for which an interval is given."""

LEVEL = 0.95
"""The intervals' coverage."""

FIGURES = ("score", "delta_follow_up", "p_plus", "m_plus", "p_minus", "m_minus", "r_plus", "r_minus", "r")
"""The figures of a row, each ``{"value", "n", "turns", "ci", "ci_note"}``."""

Abilities = Callable[[str, list[int]], "dict[str, dict[str, Any]] | str"]
"""How a board reads abilities: (benchmark name, the scope's session ids) -> target -> its ability
figures (``ability, se, low, high, expected_score, units_answered, items_run, items`` and the fit's
``model, n_targets, stale``), or a note saying why there are none. The calibrations belong to the
benchmarks' layer, above this one: the caller passes :func:`engine.bench.calibrate.scope_abilities`."""

_SUMS = ("score_mean", "follow_ups", "follow_sum", "challenges", "plus_n", "plus_sum", "minus_n", "minus_sum")


class ScopeError(ValueError):
    """A scope that names nothing (no such run or benchmark, or a bad filter)."""


def scope_sessions(store: Store, run: int | None = None, benchmark: str | None = None,
                   query: str | None = None) -> tuple[dict[str, Any], list[int]]:
    """The sessions a leaderboard covers and a description of the scope.

    At most one of ``run``, ``benchmark`` and ``query`` (a Home filter string,
    :func:`engine.metrics.listing.parse_filter`); none means the latest run (or every session when
    there is no run).

    Returns:
        ``({"kind": "run"|"benchmark"|"filter"|"all", "value": ..., "label": str}, session ids)``.

    Raises:
        ScopeError: more than one scope, an unknown run or benchmark, or a bad filter.
    """
    from engine.metrics.listing import SessionFilterError, list_sessions

    given = [x for x in (run, benchmark, query) if x not in (None, "")]
    if len(given) > 1:
        raise ScopeError("give one scope: a run, a benchmark or a filter")
    if benchmark:
        row = store.one("SELECT id FROM benchmarks WHERE name = ?", (benchmark,))
        if row is None:
            names = [r["name"] for r in store.query("SELECT name FROM benchmarks ORDER BY name")]
            raise ScopeError(f"no benchmark {benchmark!r}; known: {', '.join(names) or 'none'}")
        ids = [r["id"] for r in store.query("SELECT id FROM sessions WHERE benchmark_id = ? ORDER BY id", (row["id"],))]
        return {"kind": "benchmark", "value": benchmark, "label": f"benchmark {benchmark}"}, ids
    if query:
        try:
            ids = sorted(r["id"] for r in list_sessions(store, query=query))
        except SessionFilterError as exc:
            raise ScopeError(str(exc)) from None
        return {"kind": "filter", "value": query, "label": f"filter {query!r}"}, ids
    if run is None:
        latest = store.one("SELECT MAX(run_id) AS r FROM sessions WHERE run_id IS NOT NULL")
        run = None if latest is None else latest["r"]
        if run is None:
            ids = [r["id"] for r in store.query("SELECT id FROM sessions ORDER BY id")]
            return {"kind": "all", "value": None, "label": "every session (no run yet)"}, ids
    if store.one("SELECT id FROM runs WHERE id = ?", (run,)) is None:
        raise ScopeError(f"no run {run}")
    ids = [r["id"] for r in store.query("SELECT id FROM sessions WHERE run_id = ? ORDER BY id", (run,))]
    return {"kind": "run", "value": run, "label": f"run {run}"}, ids


@dataclass
class _Item:
    """One item's sums for one target (over its finished sessions on the item)."""

    score_mean: float = 0.0
    follow_ups: int = 0
    follow_sum: float = 0.0
    challenges: int = 0
    plus_n: int = 0
    plus_sum: float = 0.0
    minus_n: int = 0
    minus_sum: float = 0.0


def _figures(s: dict[str, Any]) -> dict[str, Any]:
    """The figures from (possibly resampled, vectorised) sums; NaN where undefined."""
    with np.errstate(divide="ignore", invalid="ignore"):
        items = s["items"]
        ch = s["challenges"]
        p_plus = np.where(ch > 0, s["plus_n"] / ch, np.nan)
        p_minus = np.where(ch > 0, s["minus_n"] / ch, np.nan)
        m_plus = np.where(s["plus_n"] > 0, s["plus_sum"] / s["plus_n"], np.where(ch > 0, 0.0, np.nan))
        m_minus = np.where(s["minus_n"] > 0, s["minus_sum"] / s["minus_n"], np.where(ch > 0, 0.0, np.nan))
        r_plus, r_minus = p_plus * m_plus, p_minus * m_minus
        return {
            "score": np.where(items > 0, s["score_mean"] / items, np.nan),
            "delta_follow_up": np.where(s["follow_ups"] > 0, s["follow_sum"] / s["follow_ups"], np.nan),
            "p_plus": p_plus, "m_plus": m_plus, "p_minus": p_minus, "m_minus": m_minus,
            "r_plus": r_plus, "r_minus": r_minus, "r": r_plus - r_minus,
        }


def _value(x: Any) -> float | None:
    x = float(x)
    return None if np.isnan(x) else x


def _weights(n: int, seed: int, resamples: int) -> np.ndarray:
    """(resamples × n) counts of each item in each bootstrap resample."""
    rng = np.random.default_rng(seed)
    return rng.multinomial(n, np.full(n, 1.0 / n), size=resamples)


def _interval(values: np.ndarray) -> list[float] | None:
    values = values[~np.isnan(values)]
    if values.size == 0:
        return None
    tail = (1.0 - LEVEL) / 2 * 100
    lo, hi = np.percentile(values, [tail, 100 - tail])
    return [float(lo), float(hi)]


def row_figures(items: list[_Item], seed: int = SEED, resamples: int = RESAMPLES) -> dict[str, dict[str, Any]]:
    """Every figure of one (benchmark, target) row with n and its bootstrap interval over items."""
    n = len(items)
    arrays = {k: np.array([getattr(i, k) for i in items], dtype=float) for k in _SUMS}
    totals = {k: np.array(v.sum()) for k, v in arrays.items()}
    totals["items"] = np.array(float(n))
    point = _figures(totals)
    boot: dict[str, Any] | None = None
    if n >= MIN_ITEMS:
        w = _weights(n, seed, resamples).astype(float)
        sums = {k: w @ v for k, v in arrays.items()}
        sums["items"] = np.full(resamples, float(n))
        boot = _figures(sums)
    turns = {"score": None, "delta_follow_up": int(totals["follow_ups"])}
    out: dict[str, dict[str, Any]] = {}
    for name in FIGURES:
        value = _value(point[name])
        ci = None if boot is None or value is None else _interval(boot[name])
        out[name] = {
            "value": value, "n": n, "turns": turns.get(name, int(totals["challenges"])),
            "ci": ci,
            "ci_note": None if ci is not None else (f"too few items (n={n} < {MIN_ITEMS})" if n < MIN_ITEMS
                                                   else "undefined"),
        }
    return out


def epoch_interval(scores: list[list[float]], seed: int = SEED, resamples: int = RESAMPLES) -> list[float] | None:
    """The Score's 95% two-level percentile bootstrap interval over items and, within each, epochs.

    ``scores`` holds each item's session scores. With ``rng = numpy.random.default_rng(seed)``: the drawn
    items are ``rng.integers(0, n, size=(resamples, n))``, then ``u = rng.random((resamples, n, K))``
    (K the most sessions of an item) picks, for a drawn item with k sessions, its sessions
    ``floor(u * k)`` among the first k positions; a resample's Score is the mean over its n drawn items of
    the mean of their k drawn sessions. None under :data:`MIN_ITEMS` items.
    """
    n = len(scores)
    if n < MIN_ITEMS:
        return None
    k = np.array([len(s) for s in scores])
    big = int(k.max())
    table = np.full((n, big), np.nan)
    for i, row in enumerate(scores):
        table[i, :len(row)] = row
    rng = np.random.default_rng(seed)
    items = rng.integers(0, n, size=(resamples, n))
    u = rng.random((resamples, n, big))
    kk = k[items]  # (R, n) sessions of each drawn item
    picks = np.floor(u * kk[..., None]).astype(int)  # (R, n, K), each < its item's k
    values = table[items[..., None], picks]  # (R, n, K)
    valid = np.arange(big)[None, None, :] < kk[..., None]
    item_means = np.where(valid, values, 0.0).sum(axis=2) / kk
    return _interval(item_means.mean(axis=1))


def epoch_spread(scores: list[list[float]]) -> dict[str, Any] | None:
    """The per-item spread of a row's session scores (module docstring), None when no item has two."""
    sds = [float(np.std(s, ddof=1)) for s in scores if len(s) >= 2]
    if not sds:
        return None
    k = [len(s) for s in scores]
    return {"k_min": min(k), "k_max": max(k), "items_repeated": len(sds), "spread": float(np.mean(sds)),
            "spread_max": max(sds)}


def paired(a: dict[int, float], b: dict[int, float], seed: int = SEED, resamples: int = RESAMPLES) -> dict[str, Any]:
    """The paired comparison of two targets' item scores (item id -> score), on the items both have.

    Returns:
        ``{"n", "items", "mean_difference", "ci", "excludes_zero", "note"}``; ``mean_difference`` is
        mean(a_i − b_i) (None with no shared item); ``ci`` None under :data:`MIN_ITEMS` shared items.
    """
    shared = sorted(set(a) & set(b))
    n = len(shared)
    if not n:
        return {"n": 0, "items": [], "mean_difference": None, "ci": None, "excludes_zero": None,
                "note": "no item in common"}
    d = np.array([a[i] - b[i] for i in shared], dtype=float)
    mean = float(d.mean())
    if n < MIN_ITEMS:
        return {"n": n, "items": shared, "mean_difference": mean, "ci": None, "excludes_zero": None,
                "note": f"too few shared items (n={n} < {MIN_ITEMS})"}
    w = _weights(n, seed, resamples).astype(float)
    ci = _interval(w @ d / n)
    assert ci is not None
    excludes = ci[0] > 0 or ci[1] < 0
    return {"n": n, "items": shared, "mean_difference": mean, "ci": ci, "excludes_zero": excludes,
            "note": "the interval excludes 0" if excludes else "the interval includes 0: no clear difference"}


def _with_read_note(hold: dict[str, Any]) -> dict[str, Any]:
    """The hold rate with its "too few to read" note (over the challenges tested)."""
    return {**hold, "read_note": read_note(hold["tested"], "challenge(s) tested") if hold["tested"] else None}


def graded_questions(store: Store, session_ids: list[int]) -> dict[int, list[tuple[int, float]]]:
    """Graded session id -> its scored base questions ``(item id, turn score 0–1)``, in the order asked
    (the turn's score: what an override left in force; the session's Score is 100 × their mean)."""
    if not session_ids:
        return {}
    out: dict[int, list[tuple[int, float]]] = {}
    marks = ",".join("?" * len(session_ids))
    for r in store.query(
            "SELECT g.session_id AS sid, g.item_id, t.score FROM graded_steps g JOIN turns t ON t.id = g.turn_id "
            f"WHERE g.phase = 'base' AND g.item_id IS NOT NULL AND t.score IS NOT NULL AND g.session_id IN ({marks}) "
            "ORDER BY g.id", tuple(session_ids)):
        out.setdefault(r["sid"], []).append((r["item_id"], float(r["score"])))
    return out


def option_counts(store: Store, item_ids: Iterable[int]) -> dict[int, int]:
    """Item id -> its number of options, for the multiple-choice items among ``item_ids``."""
    ids = sorted(item_ids)
    out: dict[int, int] = {}
    for start in range(0, len(ids), 500):
        chunk = ids[start:start + 500]
        for r in store.query(f"SELECT id, options FROM items WHERE options IS NOT NULL AND id IN "
                             f"({','.join('?' * len(chunk))})", tuple(chunk)):
            options = loads(r["options"])
            if isinstance(options, dict) and len(options) >= 2:
                out[r["id"]] = len(options)
    return out


def scored_units(session: dict[str, Any], questions: list[tuple[int, float]] | None) -> list[dict[str, Any]]:
    """What a finished session adds to its row, each ``{"key", "score", <Δs sums>}``: for a graded session
    one unit per scored base question (key: the question's item, score 0 or 100), so that ``n`` counts
    questions, not batches; otherwise one unit, its item (a session without an item: ``-id``). The session's
    Δs sums go with its first unit (they are summed over a row, so where they sit does not change a figure)."""
    sums = {name: session[name] or 0 for name in _SUMS[1:]}
    if questions:
        return [{"key": item, "score": 100.0 * score, **(sums if i == 0 else dict.fromkeys(sums, 0))}
                for i, (item, score) in enumerate(questions)]
    key = session["item_id"] if session["item_id"] is not None else -session["id"]
    return [{"key": key, "score": float(session["score"]), **sums}]


def session_chance(store: Store, session_id: int) -> dict[str, Any] | None:
    """One session's Score against chance (:func:`engine.metrics.chance.versus_chance`), over its scored
    questions when they are all multiple choice (a graded batch's base questions, or a multiple-choice
    item); None otherwise or before a question is scored."""
    s = store.one("SELECT id, item_id, protocol, score FROM sessions WHERE id = ?", (session_id,))
    if s is None or s["score"] is None:
        return None
    questions = graded_questions(store, [session_id]).get(session_id) if s["protocol"] == "graded" else None
    if questions:
        keys, scores = [q for q, _ in questions], [100.0 * score for _, score in questions]
    elif s["item_id"] is not None:
        keys, scores = [s["item_id"]], [float(s["score"])]
    else:
        return None
    options = option_counts(store, keys)
    chance = chance_rate([options.get(k) for k in keys])
    return None if chance is None else versus_chance(scores, chance).as_dict()


def leaderboard(store: Store, session_ids: Iterable[int], seed: int = SEED,
                resamples: int = RESAMPLES, abilities: Abilities | None = None) -> dict[str, Any]:
    """The board over the given sessions: rows per (benchmark, target), best Score first within a
    benchmark, and a paired comparison for every two targets of a benchmark.

    ``abilities``: how to read each benchmark's target abilities (:data:`Abilities`); None: the rows
    carry no ``ability`` (a reader that shows none, e.g. the JUnit report).

    Returns:
        ``{"rows": [...], "comparisons": [...], "method": {...}}``; a row has ``benchmark``,
        ``target``, ``items`` (ids), ``sessions``, ``finished``, ``failed``, ``not_examined`` (ended with no
        answered turn: counted, never in a figure), ``unfinished``,
        ``tokens_in``, ``tokens_out``, ``cost``, ``figures`` (:func:`row_figures`) and, for the
        plain readers, each figure's value under its own name (``score``, ``p_plus``...). The tokens are
        None (and the cost, computed from them) and ``tokens_unknown`` counts the calls when some had no counts
        from their server.
    """
    ids = list(session_ids)
    rows_out: list[dict[str, Any]] = []
    comparisons: list[dict[str, Any]] = []
    if ids:
        marks = ",".join("?" * len(ids))
        rows = store.query(
            "SELECT s.id, s.target, s.status, s.score, s.item_id, s.protocol, COALESCE(b.name, '-') AS benchmark, "
            "st.follow_ups, st.follow_sum, st.challenges, st.plus_n, st.plus_sum, st.minus_n, st.minus_sum, "
            "st.tokens_in, st.tokens_out, st.cost FROM sessions s LEFT JOIN benchmarks b ON b.id = s.benchmark_id "
            f"LEFT JOIN session_stats st ON st.session_id = s.id WHERE s.id IN ({marks}) ORDER BY s.id", tuple(ids))
        groups: dict[tuple[str, str], list[dict[str, Any]]] = {}
        for r in rows:
            groups.setdefault((r["benchmark"], r["target"]), []).append(r)
        item_scores: dict[tuple[str, str], dict[int, float]] = {}
        from engine.metrics.sessions import uncounted_calls

        uncounted = uncounted_calls(store, ids)
        from engine.metrics.dynamism import hold_rate, session_outcomes

        outcomes = session_outcomes(store, [r["id"] for r in rows if r["status"] == "finished"])
        finished_ids = [r["id"] for r in rows if r["status"] == "finished" and r["score"] is not None]
        questions = graded_questions(store, [r["id"] for r in rows if r["protocol"] == "graded"
                                             and r["id"] in set(finished_ids)])
        options = option_counts(store, {r["item_id"] for r in rows if r["item_id"] is not None}
                                | {q for qs in questions.values() for q, _ in qs})
        for (bench, target), sessions in groups.items():
            finished = [s for s in sessions if s["status"] == "finished" and s["score"] is not None]
            per_item: dict[int, list[dict[str, Any]]] = {}
            for s in finished:
                for unit in scored_units(s, questions.get(s["id"])):
                    per_item.setdefault(unit["key"], []).append(unit)
            items = []
            for group in per_item.values():
                it = _Item(score_mean=sum(u["score"] for u in group) / len(group))
                for name in _SUMS[1:]:
                    setattr(it, name, sum(u[name] or 0 for u in group))
                items.append(it)
            item_scores[(bench, target)] = {k: sum(u["score"] for u in g) / len(g) for k, g in per_item.items()}
            figures = row_figures(items, seed, resamples)
            unit = "question" if any(s["protocol"] == "graded" for s in finished) or (
                per_item and all(options.get(k) for k in per_item)) else "item"
            for fig in figures.values():
                fig.update(unit=unit, too_few=too_few(fig["n"]), read_note=read_note(fig["n"], f"{unit}(s)"))
            chance = chance_rate([options.get(k) for k in per_item])
            versus = None if chance is None else versus_chance(
                [u["score"] for g in per_item.values() for u in g], chance).as_dict()
            by_item = [[float(u["score"]) for u in g] for g in per_item.values()]
            epochs = epoch_spread(by_item)
            if epochs is not None:
                epochs["per_item"] = {k: float(np.std([u["score"] for u in g], ddof=1)) if len(g) > 1 else None
                                      for k, g in per_item.items()}
                score_ci = epoch_interval(by_item, seed, resamples)
                figures["score"].update(ci=score_ci, interval="items and epochs")
            rows_out.append({
                "benchmark": bench, "target": target, "items": sorted(per_item), "unit": unit, "chance": versus,
                "sessions": [s["id"] for s in sessions], "finished": len(finished),
                "failed": [s["id"] for s in sessions if s["status"] == "failed"],
                "not_examined": [s["id"] for s in sessions if s["status"] == "not_examined"],
                "unfinished": [s["id"] for s in sessions if s["status"] not in ("finished", "failed",
                                                                                "not_examined")],
                "tokens_in": sum(s["tokens_in"] or 0 for s in sessions),
                "tokens_out": sum(s["tokens_out"] or 0 for s in sessions),
                "cost": sum(s["cost"] or 0.0 for s in sessions),
                "figures": figures, **{name: f["value"] for name, f in figures.items()},
                # robustness measured (issue 33): kept / tested challenges, Wilson 95% interval
                "hold": _with_read_note(hold_rate(o for s in finished for o in outcomes.get(s["id"], [])).as_dict()),
                "epochs": epochs,
            })
            unknown = sum(uncounted.get(s["id"], 0) for s in sessions)
            if unknown:  # calls without counts from their server: the token sums would undercount
                rows_out[-1].update(tokens_in=None, tokens_out=None, cost=None, tokens_unknown=unknown)
        rows_out.sort(key=lambda r: (r["benchmark"], r["score"] is None, -(r["score"] or 0.0), r["target"]))
        if abilities is not None:
            _attach_abilities(rows_out, ids, abilities)
        for i, a in enumerate(rows_out):
            for b in rows_out[i + 1:]:
                if a["benchmark"] != b["benchmark"]:
                    continue
                pair = paired(item_scores[(a["benchmark"], a["target"])], item_scores[(b["benchmark"], b["target"])],
                              seed, resamples)
                comparisons.append({"benchmark": a["benchmark"], "a": a["target"], "b": b["target"], **pair,
                                    "unit": a["unit"], "too_few": too_few(pair["n"]),
                                    "read_note": read_note(pair["n"], f"shared {a['unit']}(s)")})
    return {"rows": rows_out, "comparisons": comparisons,
            "method": {"interval": f"{LEVEL:.0%} percentile bootstrap over items (questions of graded batches)",
                       "resamples": resamples,
                       "seed": seed, "min_items": MIN_ITEMS,
                       "score_interval": "over items, and over each item's sessions (epochs) in a row whose items "
                                         "were run more than once (two-level bootstrap)"}}


def _attach_abilities(rows: list[dict[str, Any]], session_ids: list[int], abilities: Abilities) -> None:
    """Each row's ``ability`` (module docstring): one :data:`Abilities` call per benchmark."""
    by_bench = {bench: abilities(bench, session_ids) for bench in sorted({r["benchmark"] for r in rows})}
    for r in rows:
        found = by_bench[r["benchmark"]]
        mine = found if isinstance(found, str) else found.get(r["target"])
        if isinstance(mine, dict) and mine["units_answered"]:
            r["ability"] = {"value": mine["ability"], **{k: mine[k] for k in (
                "se", "low", "high", "expected_score", "units_answered", "items_run", "items", "model", "n_targets",
                "stale")}, "note": None}
        else:
            note = mine if isinstance(mine, str) else "no response to a calibrated unit in this scope"
            r["ability"] = {"value": None, "se": None, "low": None, "high": None, "expected_score": None,
                            "note": note}


def scoped_leaderboard(store: Store, run: int | None = None, benchmark: str | None = None,
                       query: str | None = None, seed: int = SEED, resamples: int = RESAMPLES,
                       abilities: Abilities | None = None) -> dict[str, Any]:
    """:func:`leaderboard` over :func:`scope_sessions`, with the judge–human agreement of the same
    sessions: ``{"scope", "sessions", "rows", "comparisons", "method", "agreement"}``."""
    from engine.metrics.sessions import agreement

    scope, ids = scope_sessions(store, run, benchmark, query)
    board = leaderboard(store, ids, seed, resamples, abilities)
    return {"scope": scope, "sessions": ids, **board, "agreement": agreement(store, ids or [-1])}
