"""Calibration: parameters fitted from logged sessions recover the simulated ground truth."""

from __future__ import annotations

import json

import numpy as np
import pytest

from engine.policy.calibrate import (
    BOUNDS,
    calibrate_from_store,
    calibrate_store,
    fitted_sampler,
    load_fitted_targets,
    load_sessions,
    save_fits,
)
from engine.policy.features import ACTIONS
from engine.policy.simulator import TargetParams, params_arrays, run_episodes
from engine.store import Store, now_iso

TRUTH = {
    "careful-model": TargetParams(knowledge=0.3, stability=0.85, verbosity=0.3, wrongness=0.2, judge_error=0.0),
    "pushover-model": TargetParams(knowledge=0.8, stability=0.3, verbosity=0.7, wrongness=0.2, judge_error=0.0),
}


def _item(store, n: int, windowed: bool) -> tuple[int, int]:
    """An item (an activated static one when ``windowed``) whose rubric version has ``n`` point
    criteria and one deduction (not counted), via the store API; returns (item id, version id)."""
    now = now_iso()
    bench = store.insert("benchmarks", {"name": f"b{n}-{windowed}-{now}", "created_at": now})
    meta = {"followups": [{"question": f"q{i}"} for i in range(1, n)]} if windowed else {}
    item = store.insert("items", {"benchmark_id": bench, "ord": 0, "protocol": "adaptive", "question": "q",
                                  "meta": json.dumps(meta)})
    rubric = store.insert("rubrics", {"item_id": item})
    version = store.insert("rubric_versions", {"rubric_id": rubric, "version": 1, "author": "test",
                                               "created_at": now})
    for i in range(n + 1):
        store.insert("criteria", {"rubric_version_id": version, "cid": f"c{i}", "ord": i, "text": f"c{i}",
                                  "kind": "deduction" if i == n else "point"})
    return item, version


def _log_sessions(store, target: str, params: TargetParams, count: int, seed: int, n: int | None = None) -> None:
    """Simulate ``count`` sessions (random choices) and log them with items of the simulated size and
    kind (``params.windowed`` must be 0 or 1 so that every item's kind is known)."""
    rng = np.random.default_rng(seed)
    sizes = np.full(count, n) if n else np.random.default_rng(seed + 2).integers(4, 13, size=count)
    ep = run_episodes(params_arrays([params], repeat=count),
                      lambda s: ((rng.random(len(s)) < 0.5).astype(int), np.zeros((len(s), 2))),
                      np.random.default_rng(seed + 1), sizes=sizes)
    items = {size: _item(store, int(size), params.windowed == 1.0) for size in set(sizes.tolist())}
    for b in range(count):
        now = now_iso()
        item, version = items[int(sizes[b])]
        sid = store.insert("sessions", {"protocol": "adaptive", "target": target, "kernel": "offline",
                                        "status": "finished", "created_at": now, "updated_at": now,
                                        "item_id": item, "rubric_version_id": version})
        for t in range(ep.scores.shape[1]):
            store.insert("turns", {
                "session_id": sid, "idx": t, "question": f"q{t}", "answer": f"a{t}",
                "action": "initial" if t == 0 else ACTIONS[int(ep.actions[b, t - 1])],
                "score": float(ep.scores[b, t]),
                "delta": None if t == 0 else float(ep.deltas[b, t]),
                "cos": None if t == 0 else float(ep.states[b, t, 2]),
                "created_at": now,
            })


def test_fit_recovers_ground_truth_from_the_store(store, tmp_path):
    for i, (name, params) in enumerate(TRUTH.items()):
        _log_sessions(store, name, params, 40, seed=10 * i)
    now = now_iso()  # a running session and another protocol are ignored
    store.insert("sessions", {"protocol": "adaptive", "target": "careful-model", "kernel": "offline",
                              "status": "running", "created_at": now, "updated_at": now})
    logged = load_sessions(store)
    assert {k: len(v) for k, v in logged.items()} == {"careful-model": 40, "pushover-model": 40}

    fits = {f.target: f for f in calibrate_from_store(store, min_sessions=10)}
    careful, pushover = fits["careful-model"].params, fits["pushover-model"].params
    for name, fit in fits.items():
        truth = TRUTH[name]
        assert abs(fit.params.knowledge - truth.knowledge) <= 0.15, (name, fit.params)
        assert abs(fit.params.stability - truth.stability) <= 0.15, (name, fit.params)
    assert careful.knowledge < pushover.knowledge and careful.stability > pushover.stability
    assert careful.verbosity < pushover.verbosity

    path = tmp_path / "targets.json"
    save_fits(list(fits.values()), path)
    targets = load_fitted_targets(path)
    assert len(targets) == 2
    drawn = fitted_sampler(targets, jitter=0.05)(np.random.default_rng(0), 500)
    for name, (low, high) in BOUNDS.items():
        assert low <= drawn[name].min() and drawn[name].max() <= high
    assert np.abs(drawn["knowledge"][:, None] - [careful.knowledge, pushover.knowledge]).min(axis=1).max() <= 0.05


def test_too_few_sessions_are_not_fitted(store):
    _log_sessions(store, "tiny", TRUTH["careful-model"], 3, seed=1)
    assert calibrate_from_store(store, min_sessions=5) == []


def test_calibrate_store_file_sees_item_sizes_and_windowed_items(home):
    path = home / "viva.db"
    store = Store(path)
    truth = TargetParams(knowledge=0.6, stability=0.4, verbosity=0.3, wrongness=0.9, judge_error=0.0,
                         windowed=1.0, narrow=1.0)
    _log_sessions(store, "python:windowed", truth, 60, seed=5, n=7)
    logged = load_sessions(store)["python:windowed"]
    assert {s.criteria for s in logged} == {7} and {s.turns for s in logged} == {6}
    assert {s.windowed for s in logged} == {True}
    store.close()
    (fit,) = calibrate_store(path, min_sessions=10)
    assert fit.params.windowed == 1.0                                # known from the items
    # one claim at stake per challenge: stability is identified only roughly from 60 sessions
    assert abs(fit.params.knowledge - 0.6) <= 0.15 and abs(fit.params.stability - 0.4) <= 0.25
    assert fit.params.wrongness > 0.5                                # outside the training range: kept
    with pytest.raises(FileNotFoundError, match="no viva store"):
        calibrate_store(home / "nothing.db")


def test_fitted_file_without_the_new_parameters_still_loads(tmp_path):
    path = tmp_path / "old.json"
    params = {"knowledge": 0.5, "stability": 0.5, "verbosity": 0.5, "wrongness": 0.1, "judge_error": 0.0}
    path.write_text(json.dumps({"targets": [{"target": "old", "params": params}]}))
    (target,) = load_fitted_targets(path)
    assert target.windowed == 0.0 and target.narrow == 0.0
    path.write_text(json.dumps({"targets": [{"target": "bad", "params": {"knowledge": 0.5}}]}))
    with pytest.raises(ValueError, match="lacks"):
        load_fitted_targets(path)
