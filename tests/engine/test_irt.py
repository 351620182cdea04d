"""Item calibration, ability and adaptive selection (engine.metrics.irt) against known answers."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import numpy as np
import pytest

from engine.metrics import irt

ROOT = Path(__file__).resolve().parents[2]

# 200 simulated targets x 8 items (Rasch, seed 11), packed by rows; the references below are what
# girth 0.8.0 (onepl_mml, twopl_mml: marginal maximum likelihood, no item priors) estimates on it.
MATRIX = bytes.fromhex(
    "7a103bbcc49420fd57381d7fc1983f8401828da8148cf9840c52d714e89fd41f99ddb910401081107709b5702fc03d9c8fff81"
    "9d349f8e15979156f57e00de9c911ffdff045d95159df700ff9d0a1512bdd9d521897fbd1ab591158d901f12fe88860c6e9d01"
    "7dd9ff309c9c6fff1610b4079c08d8f501be88dd00083d082b15bdc23c1c94929d1a0d2b0f1e080685fb0508ae5fc7ffff09cf"
    "894daa1f15200502c6621739159dd7808434da6d1b88bd9d1e05d609003818df9c00b4805c4cbe9d8188fd9e3ebd1d")
GIRTH_ONEPL_B = [-0.0781, 1.1878, 1.0349, -0.6905, -0.4194, -0.6354, 0.8308, -0.1302]
GIRTH_ONEPL_A = 0.90425
GIRTH_TWOPL_B = [-0.1296, 1.0065, 0.9613, -0.5479, -0.5096, -0.4697, 0.9883, -0.1354]
GIRTH_TWOPL_A = [0.4894, 1.1465, 1.0016, 1.2762, 0.704, 1.4443, 0.7231, 0.8578]


def _matrix() -> np.ndarray:
    return np.unpackbits(np.frombuffer(MATRIX, dtype=np.uint8)).reshape(200, 8).astype(float)


def test_without_priors_the_fit_is_girths(monkeypatch):
    responses = _matrix()
    assert responses.sum(0).tolist() == [103, 57, 62, 126, 116, 124, 69, 105]
    monkeypatch.setattr(irt, "PRIOR_D_SD", 1e6)
    monkeypatch.setattr(irt, "PRIOR_LOG_A_SD", 1e6)
    rasch = irt.calibrate(responses, model="rasch")
    assert rasch.converged and rasch.model == "rasch"
    np.testing.assert_allclose(rasch.b, GIRTH_ONEPL_B, atol=0.005)
    np.testing.assert_allclose(rasch.a, GIRTH_ONEPL_A, atol=0.002)
    two = irt.calibrate(responses, model="2pl")
    np.testing.assert_allclose(two.b, GIRTH_TWOPL_B, atol=0.005)
    np.testing.assert_allclose(two.a, GIRTH_TWOPL_A, atol=0.005)


def test_priors_keep_items_everyone_got_right_finite_and_auto_picks_rasch_below_the_threshold():
    rng = np.random.default_rng(3)
    theta = rng.normal(0, 1, 11)
    b = np.linspace(-1.5, 1.5, 40)
    responses = (rng.random((11, 40)) < irt.p_correct(theta, np.ones(40), b)).astype(float)
    responses[:, 0], responses[:, 1] = 1.0, 0.0  # everyone right / everyone wrong
    responses[3, 5] = np.nan  # a target that never met item 5
    fit = irt.calibrate(responses)
    assert fit.model == "rasch" and fit.n_targets == 11 < irt.MIN_TARGETS_2PL
    assert np.isfinite(fit.b).all() and fit.b[0] < fit.b[2:].min() and fit.b[1] > fit.b[2:].max()
    share = irt.p_correct(0.0, fit.a, fit.b)[0]
    assert 0.9 < share[0] < 0.995 and 0.005 < share[1] < 0.1
    assert np.corrcoef(fit.b[2:], b[2:])[0, 1] > 0.7
    assert (fit.b_se > 0).all() and fit.b_se[0] > np.median(fit.b_se)  # the extreme item is the least certain


def test_2pl_recovers_simulated_items():
    rng = np.random.default_rng(0)
    a, b, theta = rng.uniform(0.6, 2.0, 30), rng.normal(0, 1, 30), rng.normal(0, 1, 400)
    responses = (rng.random((400, 30)) < irt.p_correct(theta, a, b)).astype(float)
    fit = irt.calibrate(responses)
    assert fit.model == "2pl"
    assert np.corrcoef(fit.b, b)[0, 1] > 0.97 and np.corrcoef(fit.a, a)[0, 1] > 0.8


def test_ability_and_its_standard_error_against_closed_forms():
    a, b = np.ones(400), np.zeros(400)
    assert irt.ability(np.full(400, np.nan), a, b) == pytest.approx((0.0, 1.0), abs=1e-3)  # the prior
    half = np.array([1.0, 0.0] * 200)
    theta, se = irt.ability(half, a, b)
    assert theta == pytest.approx(0.0, abs=1e-9)
    assert se == pytest.approx(1 / np.sqrt(400 * 0.25 + 1), rel=0.01)  # 1 / sqrt(information + prior's)
    # 300 of 400 right: the posterior mode solves 400 P(theta) - 300 + theta = 0 (prior N(0, 1))
    lo, hi = 0.0, 3.0
    for _ in range(60):
        mid = (lo + hi) / 2
        lo, hi = (mid, hi) if 400 / (1 + np.exp(-mid)) - 300 + mid < 0 else (lo, mid)
    theta, se = irt.ability(np.array([1.0] * 300 + [0.0] * 100), a, b)
    assert theta == pytest.approx(lo, abs=0.01)
    assert se == pytest.approx(1 / np.sqrt(400 * 0.75 * 0.25 + 1), rel=0.02)
    everything = irt.ability(np.ones(10), np.ones(10), np.zeros(10))
    assert np.isfinite(everything[0]) and everything[1] > 0.5  # all right: finite, with a wide interval


def test_expected_accuracy_counts_asked_items_as_answered():
    a, b = np.ones(4), np.array([-1.0, 0.0, 1.0, 2.0])
    assert irt.expected_accuracy(np.array([1.0, 0.0, 1.0, 1.0]), a, b) == 0.75
    prior = irt.PRIOR_WEIGHTS @ irt.p_correct(irt.GRID, a, b)
    assert irt.expected_accuracy(np.full(4, np.nan), a, b) == pytest.approx(prior.mean())
    one = irt.expected_accuracy(np.array([1.0, np.nan, np.nan, np.nan]), a, b)
    assert prior[1:].sum() / 4 + 0.25 < one < 1.0  # a right answer raises the others' expectation


def test_next_item_is_the_most_informative_among_the_available_drawn_among_the_best():
    a, b = np.ones(6), np.array([-3.0, -1.0, 0.1, 0.5, 2.0, 4.0])
    rng = np.random.default_rng(0)
    available = np.ones(6, bool)
    assert irt.next_item(0.0, a, b, available, rng, top_k=1) == 2
    available[2] = False
    assert irt.next_item(0.0, a, b, available, rng, top_k=1) == 3
    assert {irt.next_item(0.0, a, b, np.ones(6, bool), np.random.default_rng(s), top_k=2) for s in range(40)} == {2, 3}
    assert irt.next_item(0.0, a, b, np.zeros(6, bool), rng) is None
    draws = [irt.next_item(0.0, a, b, np.ones(6, bool), np.random.default_rng(7)) for _ in range(3)]
    assert len(set(draws)) == 1  # seeded: the same draw


def test_bad_responses_are_refused():
    with pytest.raises(irt.IRTError, match="at least 2 targets"):
        irt.calibrate(np.ones((1, 3)))
    with pytest.raises(irt.IRTError, match="no response"):
        irt.calibrate(np.array([[1.0, np.nan], [0.0, np.nan]]))
    with pytest.raises(irt.IRTError, match="1 \\(right\\), 0"):
        irt.calibrate(np.array([[1.0, 0.5], [0.0, 1.0]]))
    with pytest.raises(irt.IRTError, match="unknown model"):
        irt.calibrate(np.eye(3), model="3pl")


def _efficiency():
    spec = importlib.util.spec_from_file_location("bench_efficiency", ROOT / "bench" / "efficiency.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_kendall_tau_b_known_answers():
    tau = _efficiency().kendall_tau_b
    assert tau([1, 2, 3, 4], [1, 2, 3, 4]) == 1.0 and tau([1, 2, 3, 4], [4, 3, 2, 1]) == -1.0
    assert tau([1, 2, 3, 4], [1, 3, 2, 4]) == pytest.approx(2 / 3)
    # with ties in both rankings; scipy.stats.kendalltau (tau-b) gives 0.7877263614433762
    assert tau([0.61, 0.65, 0.65, 0.70, 0.71, 0.71], [0.60, 0.66, 0.64, 0.72, 0.70, 0.73]) == pytest.approx(
        0.7877263614433762, abs=1e-12)


def test_adaptive_beats_random_on_a_matrix_the_model_fits(tmp_path):
    """12 simulated systems x 200 items from a Rasch model: the study's adaptive estimate errs less than
    a random subset of the same size at 10% of the items (what bench/efficiency.py measures on NQ301)."""
    import json

    rng = np.random.default_rng(5)
    theta, b = rng.normal(0, 1, 12), rng.normal(0, 1.5, 200)
    responses = rng.random((12, 200)) < irt.p_correct(theta, np.ones(200), b)
    path = tmp_path / "matrix.jsonl"
    with path.open("w", encoding="utf-8") as fh:
        for s in range(12):
            for q in range(200):
                fh.write(json.dumps({"model": f"s{s:02d}", "question": f"q{q:03d}", "human": bool(responses[s, q])}) + "\n")
    result = _efficiency().run(path, seeds=8, budgets=(0.10,))
    rows = {r["method"]: r for r in result["table"]}
    assert result["model"] == ["rasch"] and rows["adaptive"]["items"] == 20
    assert rows["adaptive"]["mae_mean"] < rows["random"]["mae_mean"]
    assert rows["adaptive"]["tau_mean"] > rows["random"]["tau_mean"]
    assert rows["adaptive+common"]["mae_mean"] < rows["random"]["mae_mean"]
    assert rows["stratified+IRT"]["mae_mean"] < rows["random"]["mae_mean"]


def test_the_ceiling_is_exact_when_every_item_ranks_the_systems_alike_and_noisy_otherwise():
    eff = _efficiency()
    constant = np.repeat(np.array([[1.0], [1.0], [0.0], [0.0], [1.0], [0.0]]), 40, axis=1)
    constant[0, :20] = 0.0  # system 0 right on half the items, the first half: ties and a middle system
    c = eff.ceiling(constant, seeds=5, budgets=(1.0,))
    full = c["subsets"][0]
    assert full["items"] == 40 and full["common"]["tau"]["mean"] == 1.0 and full["common"]["mae"]["mean"] == 0.0
    assert full["own"]["tau"]["mean"] == 1.0  # every system's own permutation of all the items: its accuracy
    rng = np.random.default_rng(3)
    theta, b = np.linspace(-1, 1, 8), rng.normal(0, 1, 300)
    noisy = (rng.random((8, 300)) < irt.p_correct(theta, np.ones(300), b)).astype(float)
    c = eff.ceiling(noisy, seeds=20, budgets=(0.05, 0.5))
    small, half = c["subsets"]
    assert small["items"] == 15 and half["items"] == 150
    assert small["common"]["tau"]["mean"] < half["common"]["tau"]["mean"] < 1.0
    assert half["common"]["mae"]["mean"] < small["common"]["mae"]["mean"]
    assert -1.0 <= c["split_half"]["mean"] < 1.0 and c["bootstrap"]["sd"] > 0


def test_log_loss_known_answers_and_the_model_comparison_runs_both_models():
    eff = _efficiency()
    assert eff.log_loss(np.array([0.5, 0.5]), np.array([1.0, 0.0])) == pytest.approx(np.log(2))
    assert eff.log_loss(np.array([0.9]), np.array([0.0])) == pytest.approx(-np.log(0.1))
    rng = np.random.default_rng(4)
    theta, b = rng.normal(0, 1, 6), rng.normal(0, 1, 60)
    matrix = (rng.random((6, 60)) < irt.p_correct(theta, np.ones(60), b)).astype(float)
    out = eff.model_comparison(matrix, seeds=2)
    assert set(out) == {"rasch", "2pl"}
    for figs in out.values():  # better than guessing at a coin's odds on a matrix the model fits
        assert figs["log_loss"]["mean"] < np.log(2) and figs["accuracy"]["mean"] > 0.5
