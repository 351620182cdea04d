"""Calibration: parameters fitted from logged sessions recover the simulated ground truth."""

from __future__ import annotations

import numpy as np

from engine.policy.calibrate import (
    calibrate_from_store,
    fitted_sampler,
    load_fitted_targets,
    load_sessions,
    save_fits,
)
from engine.policy.features import ACTIONS
from engine.policy.simulator import PARAM_RANGES, TargetParams, params_arrays, run_episodes
from engine.store import now_iso

TRUTH = {
    "careful-model": TargetParams(knowledge=0.3, stability=0.85, verbosity=0.3, wrongness=0.2, judge_error=0.0),
    "pushover-model": TargetParams(knowledge=0.8, stability=0.3, verbosity=0.7, wrongness=0.2, judge_error=0.0),
}


def _log_sessions(store, target: str, params: TargetParams, count: int, seed: int) -> None:
    rng = np.random.default_rng(seed)
    ep = run_episodes(params_arrays([params], repeat=count),
                      lambda s: ((rng.random(len(s)) < 0.5).astype(int), np.zeros((len(s), 2))),
                      np.random.default_rng(seed + 1))
    for b in range(count):
        now = now_iso()
        sid = store.insert("sessions", {"protocol": "adaptive", "target": target, "kernel": "offline",
                                        "status": "finished", "created_at": now, "updated_at": now})
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
    for name, (low, high) in PARAM_RANGES.items():
        assert low <= drawn[name].min() and drawn[name].max() <= high
    assert np.abs(drawn["knowledge"][:, None] - [careful.knowledge, pushover.knowledge]).min(axis=1).max() <= 0.05


def test_too_few_sessions_are_not_fitted(store):
    _log_sessions(store, "tiny", TRUTH["careful-model"], 3, seed=1)
    assert calibrate_from_store(store, min_sessions=5) == []
