"""Calibrated items of a benchmark and the abilities of the targets that ran it (issue 28).

Written-down rules (the estimation itself is :mod:`engine.metrics.irt`):

- **Scored units.** Every criterion of an item's rubric version in force (a gold answer, a
  multiple-choice option and a free-text criterion are all criteria). A target's response to a unit is
  the *effective final verdict* in its latest **finished** session of that item scored under that same
  rubric version (:func:`engine.metrics.breakdown.criterion_rates`, ``final``: a human override replaces
  the machine's): 1 when a point (or code) criterion is met, 1 when a deduction is *not* met (no fault
  found), 0 otherwise. A ``graded`` session asks several base questions: each item it asked
  (``graded_steps``, phase ``base``) gives the item's point criteria its correctness (1 or 0) and the
  item a Score of 100 or 0. No such session, or no verdict on the unit: missing (not asked).
- **The benchmark's version.** The calibration is stored with a fingerprint of the benchmark: the
  SHA-256 (first 16 hex digits) of its items' ids and rubric version ids in force. Editing a rubric makes
  another version: the earlier calibration stays stored under its own fingerprint and is not used.
- **Stored** in the ``metrics`` table (scope ``calibration``, scope id the benchmark id, name
  ``irt:<fingerprint>``; value: the number of targets; meta: model, the sessions used and one entry per
  unit with ``a``, ``b`` and the standard error of ``b``). Units no target has answered are listed as
  uncalibrated.
- **Enough targets** (issue 36). A fit needs finished sessions of at least :data:`MIN_TARGETS` targets, and
  a unit answered by fewer than :data:`MIN_TARGETS` of them is dropped: with fewer responses per item the
  fitted difficulties barely order the items (``bench/calibration_minimum.py``: Spearman's correlation of
  fitted and true difficulty 0.46 at 2 targets, 0.67 at 5, 0.79 at 10, 0.90 at 30; the difficulty error
  is as large as the spread of the difficulties themselves below 5 targets; docs/calibration-minimum.md).
  Every dropped unit is listed with its reason (``dropped``: no target answered it, or too few did).
- **Stale.** :func:`get_calibration` says ``stale`` when finished sessions were added (or removed)
  since the fit: ``viva bench calibrate NAME`` refits; nothing refits on its own (``viva run`` ends with
  "calibration is stale: `viva bench calibrate NAME`", :func:`stale_line`), so the item parameters
  a figure was read with change only when the evaluator asks.
- **Ability** of a target (:func:`target_abilities`): the EAP ability from its responses to the
  calibrated units, its standard error (the posterior SD), a 95% interval (ability ± 1.96 SE), and the
  **expected Score** on the full benchmark: the mean over items of the item's Score (0-100), where an
  item the target ran counts with its session's stored score and any other item with the Score the
  ability implies: 100 x (``sum w_i P_i`` over its point criteria minus the expected deductions) /
  ``sum w_i``, averaged over the ability's posterior (an item not run with a unit no target answered is
  left out) (TestAgent Eq. 1, :func:`engine.metrics.scoring.turn_score`, whose clip
  at 0 is applied to the expectation: exact for rubrics without deductions).
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

import numpy as np

from engine.bench.model import BenchError
from engine.metrics import irt
from engine.store import Store
from engine.store.db import now_iso

SCOPE = "calibration"

MIN_TARGETS = 10
"""The fewest targets a calibration is fitted on, and the fewest responses a unit needs to be kept
(the simulation behind it: ``bench/calibration_minimum.py``, docs/calibration-minimum.md)."""


@dataclass(frozen=True)
class Unit:
    """A scored unit: one criterion of an item's rubric version in force."""

    item_id: int
    cid: str
    kind: str
    weight: float
    version_id: int


def benchmark_units(store: Store, name: str) -> tuple[int, str, list[Unit]]:
    """(benchmark id, fingerprint, units) of a benchmark as it is now.

    Raises:
        BenchError: no benchmark has this name.
    """
    from engine.bench.items import get_benchmark, list_items
    from engine.bench.rubric import current_rubric, has_rubric

    bench = get_benchmark(store, name)
    units: list[Unit] = []
    versions = []
    for item in list_items(store, name):
        if not has_rubric(store, item.id):
            continue
        version = current_rubric(store, item.id)
        versions.append(f"{item.id}:{version.id}")
        units += [Unit(item.id, c.cid, c.kind, float(c.weight), version.id) for c in version.criteria]
    fingerprint = hashlib.sha256("\n".join(versions).encode()).hexdigest()[:16]
    return bench.id, fingerprint, units


def response_matrix(store: Store, units: list[Unit], sessions: Iterable[int] | None = None,
                    ) -> tuple[list[str], np.ndarray, list[int], dict[str, dict[int, float]]]:
    """(targets, responses [targets, units] with NaN for missing, session ids used, per target and item
    the stored Score 0-100 of the latest finished session) under the rules of the module docstring;
    ``sessions``: only these sessions count (a leaderboard's scope), None: every stored session."""
    from engine.bench.rubric import get_version
    from engine.metrics.breakdown import criterion_rates

    by_item: dict[int, dict[str, int]] = {}
    for k, u in enumerate(units):
        by_item.setdefault(u.item_id, {})[u.cid] = k
    versions = {u.item_id: u.version_id for u in units}
    if not versions:
        return [], np.zeros((0, 0)), [], {}
    marks = ",".join("?" * len(versions))
    only = None if sessions is None else set(sessions)
    rows = store.query(f"SELECT id, target, item_id, rubric_version_id, score FROM sessions WHERE status = 'finished' "
                       f"AND protocol != 'graded' AND item_id IN ({marks}) ORDER BY id", tuple(versions))
    latest: dict[tuple[str, int], Any] = {}
    for r in rows:
        if only is not None and r["id"] not in only:
            continue
        if r["rubric_version_id"] == versions[r["item_id"]]:
            latest[(r["target"], r["item_id"])] = r  # later sessions replace earlier ones
    # graded sessions ask several base questions each: one response per item asked (graded_steps)
    steps = store.query(f"SELECT s.id, s.target, g.item_id, g.correct FROM graded_steps g JOIN sessions s ON "
                        f"s.id = g.session_id WHERE s.status = 'finished' AND g.phase = 'base' AND g.correct IS NOT "
                        f"NULL AND g.item_id IN ({marks}) ORDER BY s.id, g.id", tuple(versions))
    graded: dict[tuple[str, int], Any] = {(r["target"], r["item_id"]): r for r in steps
                                          if only is None or r["id"] in only}
    targets = sorted({t for t, _ in latest} | {t for t, _ in graded})
    t_index = {t: i for i, t in enumerate(targets)}
    matrix = np.full((len(targets), len(units)), np.nan)
    scores: dict[str, dict[int, float]] = {t: {} for t in targets}
    for (target, item_id), r in latest.items():
        if r["score"] is not None:
            scores[target][item_id] = float(r["score"])
        for rate in criterion_rates(store, r["id"], lambda v: get_version(store, v).criteria):
            k = by_item[item_id].get(rate["cid"])
            if k is None or rate["final"] is None:
                continue
            met = bool(rate["final"])
            matrix[t_index[target], k] = float(not met if units[k].kind == "deduction" else met)
    for (target, item_id), r in graded.items():
        if (target, item_id) in latest:
            continue
        right = bool(r["correct"])
        scores[target][item_id] = 100.0 if right else 0.0
        for k in by_item[item_id].values():
            if units[k].kind != "deduction":
                matrix[t_index[target], k] = float(right)
    used = {r["id"] for r in latest.values()} | {r["id"] for r in graded.values()}
    return targets, matrix, sorted(used), scores


def calibrate_benchmark(store: Store, name: str, model: str = "auto", min_targets: int = MIN_TARGETS
                        ) -> dict[str, Any]:
    """Fit and store the item parameters of a benchmark from its finished sessions; returns what
    :func:`get_calibration` returns (``dropped`` lists the units left out, each with its reason).

    Args:
        min_targets: the fewest targets, and the fewest responses per unit (:data:`MIN_TARGETS`; lower
            only to study the fit itself: abilities from fewer are not worth reading).

    Raises:
        BenchError: no such benchmark, no rubric criteria, fewer than ``min_targets`` targets with
            finished sessions, no unit with enough responses, or an unknown model.
    """
    bench_id, fingerprint, units = benchmark_units(store, name)
    if not units:
        raise BenchError(f"benchmark {name!r} has no scored units (no item has rubric criteria)")
    targets, matrix, sessions, _scores = response_matrix(store, units)
    if len(targets) < min_targets:
        raise BenchError(f"benchmark {name!r}: calibration needs finished sessions of at least {min_targets} targets "
                         f"scored under the rubrics in force, found {len(targets)}; with fewer the fitted "
                         f"difficulties barely order the items (docs/calibration-minimum.md): run more targets first")
    responses = (~np.isnan(matrix)).sum(axis=0)
    answered = responses >= min_targets
    dropped = [{"item_id": u.item_id, "cid": u.cid,
                "reason": "no target answered it (no finished session ran its item)" if n == 0 else
                f"answered by {int(n)} target(s), fewer than {min_targets}"}
               for u, n in zip(units, responses.tolist(), strict=True) if n < min_targets]
    if not answered.any():
        raise BenchError(f"benchmark {name!r}: no scored unit was answered by {min_targets} targets or more "
                         f"({len(units)} units, at most {int(responses.max())} responses each): run more targets "
                         f"on the same items first")
    try:
        fit = irt.calibrate(matrix[:, answered], model=model)
    except irt.IRTError as exc:
        raise BenchError(f"benchmark {name!r}: {exc}") from None
    params = iter(zip(fit.a.tolist(), fit.b.tolist(), fit.b_se.tolist(), strict=True))
    entries = []
    for u, ok in zip(units, answered.tolist(), strict=True):
        entry: dict[str, Any] = {"item_id": u.item_id, "cid": u.cid, "kind": u.kind, "weight": u.weight,
                                 "version_id": u.version_id}
        if ok:
            a, b, se = next(params)
            entry.update(a=round(a, 6), b=round(b, 6), b_se=round(se, 6))
        entries.append(entry)
    meta = {"fingerprint": fingerprint, "model": fit.model, "requested": model, "targets": targets, "sessions": sessions,
            "iterations": fit.iterations, "converged": fit.converged, "units": entries,
            "min_targets_2pl": irt.MIN_TARGETS_2PL, "min_targets": min_targets, "dropped": dropped}
    with store.transaction():
        store.conn.execute(
            "INSERT INTO metrics (scope, scope_id, name, value, meta, created_at) VALUES (?, ?, ?, ?, ?, ?) "
            "ON CONFLICT (scope, scope_id, name) DO UPDATE SET value = excluded.value, meta = excluded.meta, "
            "created_at = excluded.created_at",
            (SCOPE, str(bench_id), f"irt:{fingerprint}", float(len(targets)), json.dumps(meta), now_iso()))
    out = get_calibration(store, name)
    assert out is not None
    return out


def dropped_line(calibration: dict[str, Any], limit: int = 3) -> str | None:
    """One line on the units a calibration left out and why (None: none), e.g. ``44 of 50 units dropped:
    40 no target answered it (no finished session ran its item); 4 answered by 1 target(s), fewer than 10
    (items 7, 9, 12, …)``."""
    dropped = calibration.get("dropped") or []
    if not dropped:
        return None
    reasons: dict[str, list[int]] = {}
    for d in dropped:
        reasons.setdefault(d["reason"], []).append(d["item_id"])
    parts = []
    for reason, items in sorted(reasons.items(), key=lambda kv: -len(kv[1])):
        shown = sorted(set(items))
        more = ", …" if len(shown) > limit else ""
        parts.append(f"{len(items)} {reason} (item(s) {', '.join(str(i) for i in shown[:limit])}{more})")
    return f"{len(dropped)} of {len(calibration['units'])} units dropped: " + "; ".join(parts)


def stale_line(store: Store, name: str) -> str | None:
    """``calibration is stale: `viva bench calibrate NAME` `` when the benchmark's stored calibration no
    longer covers its finished sessions (None: not calibrated, or up to date). Nothing is refitted."""
    calibration = get_calibration(store, name)
    if calibration is None or not calibration["stale"]:
        return None
    return (f"calibration is stale ({len(calibration['new_sessions'])} new finished session(s) since the fit): "
            f"`viva bench calibrate {name}`")


def get_calibration(store: Store, name: str) -> dict[str, Any] | None:
    """The stored calibration of the benchmark's version in force, or None (never calibrated, or only
    an earlier version was). Keys: ``model``, ``fingerprint``, ``n_targets``, ``targets``, ``sessions``,
    ``units`` (with ``a``, ``b``, ``b_se`` when calibrated), ``calibrated`` (units with parameters),
    ``created_at``, ``stale`` (finished sessions were added or removed since) and ``new_sessions``."""
    bench_id, fingerprint, units = benchmark_units(store, name)
    row = store.one("SELECT value, meta, created_at FROM metrics WHERE scope = ? AND scope_id = ? AND name = ?",
                    (SCOPE, str(bench_id), f"irt:{fingerprint}"))
    if row is None:
        return None
    meta = json.loads(row["meta"])
    _targets, _matrix, sessions, _scores = response_matrix(store, units)
    added = sorted(set(sessions) - set(meta["sessions"]))
    removed = sorted(set(meta["sessions"]) - set(sessions))
    n_targets = int(row["value"])
    return {**meta, "n_targets": n_targets, "created_at": row["created_at"],
            "calibrated": sum(1 for u in meta["units"] if "b" in u), "stale": bool(added or removed),
            "new_sessions": added, "dropped": meta.get("dropped", []),
            # a fit stored before the minimum (issue 36) is kept, and read as not supporting abilities
            "supported": n_targets >= meta.get("min_targets", MIN_TARGETS)}


def refit_if_stale(store: Store, name: str) -> dict[str, Any] | None:
    """Refit the benchmark's calibration when finished sessions were added or removed since it was fitted
    (with the model asked for then); returns the new calibration, or None when there was nothing to refit
    (not calibrated, or not stale). Only on the evaluator's request: a run never calls it
    (:func:`stale_line` says what to do instead)."""
    calibration = get_calibration(store, name)
    if calibration is None or not calibration["stale"]:
        return None
    return calibrate_benchmark(store, name, calibration.get("requested", "auto"),
                               calibration.get("min_targets", MIN_TARGETS))


def item_difficulties(calibration: dict[str, Any]) -> dict[int, float]:
    """Each calibrated item's difficulty: the mean ``b`` of its calibrated units."""
    per: dict[int, list[float]] = {}
    for u in calibration["units"]:
        if "b" in u:
            per.setdefault(u["item_id"], []).append(u["b"])
    return {item: sum(bs) / len(bs) for item, bs in per.items()}


def expected_item_scores(post: np.ndarray, units: list[dict[str, Any]]) -> dict[int, float]:
    """Expected Score (0-100, as sessions store it) of every item whose units are all calibrated, over
    the posterior ``post``."""
    by_item: dict[int, list[dict[str, Any]]] = {}
    for u in units:
        by_item.setdefault(u["item_id"], []).append(u)
    out = {}
    for item, us in by_item.items():
        if any("b" not in u for u in us):
            continue
        a = np.array([u["a"] for u in us])
        b = np.array([u["b"] for u in us])
        p_right = post @ irt.p_correct(irt.GRID, a, b)  # P(right) per unit, over the posterior
        total = sum(u["weight"] for u in us if u["kind"] != "deduction")
        if total <= 0:
            continue
        gained = sum(u["weight"] * p for u, p in zip(us, p_right, strict=True) if u["kind"] != "deduction")
        lost = sum(abs(u["weight"]) * (1 - p) for u, p in zip(us, p_right, strict=True) if u["kind"] == "deduction")
        out[item] = 100.0 * min(1.0, max(0.0, (gained - lost) / total))
    return out


def target_abilities(store: Store, name: str, sessions: Iterable[int] | None = None,
                     calibration: dict[str, Any] | None = None) -> list[dict[str, Any]]:
    """Per target that ran the benchmark, under its stored calibration (rules in the module docstring):
    ``target, ability, se, low, high`` (the 95% interval), ``expected_score`` (0-100), ``items_run``,
    ``units_answered``; best ability first. ``[]`` when the benchmark is not calibrated, or its stored
    calibration was fitted on fewer targets than :data:`MIN_TARGETS` (``supported`` false).

    ``sessions``: the responses are read from these sessions only (a leaderboard's scope), None: from
    every stored session. ``calibration``: :func:`get_calibration`'s answer when the caller has it.

    Raises:
        BenchError: no such benchmark.
    """
    calibration = calibration if calibration is not None else get_calibration(store, name)
    if calibration is None or not calibration.get("supported", True):
        return []  # not calibrated, or on fewer targets than the fit needs: no ability to show
    _bench_id, _fingerprint, units = benchmark_units(store, name)
    targets, matrix, _sessions, scores = response_matrix(store, units, sessions)
    keep = [k for k, u in enumerate(calibration["units"]) if "b" in u]
    a = np.array([calibration["units"][k]["a"] for k in keep])
    b = np.array([calibration["units"][k]["b"] for k in keep])
    items = sorted({u["item_id"] for u in calibration["units"]})
    out = []
    for i, target in enumerate(targets):
        responses = matrix[i, keep]
        theta, se = irt.ability(responses, a, b)
        expected = expected_item_scores(irt.posterior(responses, a, b), calibration["units"])
        per_item = [scores[target][it] if it in scores[target] else expected.get(it) for it in items]
        known = [s for s in per_item if s is not None]
        out.append({"target": target, "ability": round(theta, 4), "se": round(se, 4),
                    "low": round(theta - 1.96 * se, 4), "high": round(theta + 1.96 * se, 4),
                    "expected_score": round(sum(known) / len(known), 2) if known else None,
                    "items_run": len(scores[target]), "items": len(items),
                    "units_answered": int((~np.isnan(responses)).sum())})
    return sorted(out, key=lambda r: -r["ability"])


NOT_CALIBRATED = "not calibrated (viva bench calibrate {bench})"


def scope_abilities(store: Store, bench: str, sessions: list[int]) -> dict[str, dict[str, Any]] | str:
    """A leaderboard's abilities on one benchmark (:data:`engine.metrics.leaderboard.Abilities`, with
    ``functools.partial(scope_abilities, store)``): target -> :func:`target_abilities`' figures over the
    scope's ``sessions`` with the fit's ``model``, ``n_targets`` and ``stale``; or a note when there is no
    calibration (``"-"``, the sessions without a benchmark: "no benchmark")."""
    try:
        calibration = get_calibration(store, bench) if bench != "-" else None
    except BenchError:
        calibration = None
    if calibration is None:
        return NOT_CALIBRATED.format(bench=bench) if bench != "-" else "no benchmark"
    fit = {"model": calibration["model"], "n_targets": calibration["n_targets"], "stale": calibration["stale"]}
    return {a["target"]: {**a, **fit} for a in target_abilities(store, bench, sessions, calibration)}


TIERS = ("easy", "medium", "hard")


def calibrated_tiers(store: Store, benchmark_id: int) -> dict[int, str]:
    """The graded protocol's difficulty tiers from the stored calibration of the benchmark's version in
    force (not refitted here): the calibrated items ranked by difficulty (the mean ``b`` of their units)
    and cut into thirds, easy, medium, hard (the first ``n // 3`` easy, the last ``n // 3`` hard, the rest
    medium; ties keep item order). ``{}`` when the benchmark has no such calibration."""
    row = store.one("SELECT name FROM benchmarks WHERE id = ?", (benchmark_id,))
    if row is None:
        return {}
    _bench_id, fingerprint, _units = benchmark_units(store, row["name"])
    stored = store.one("SELECT meta FROM metrics WHERE scope = ? AND scope_id = ? AND name = ?",
                       (SCOPE, str(benchmark_id), f"irt:{fingerprint}"))
    if stored is None:
        return {}
    difficulty = item_difficulties(json.loads(stored["meta"]))
    ranked = sorted(difficulty, key=lambda item: (difficulty[item], item))
    third = len(ranked) // 3
    return {item: TIERS[0] if k < third else TIERS[2] if k >= len(ranked) - third else TIERS[1]
            for k, item in enumerate(ranked)}
