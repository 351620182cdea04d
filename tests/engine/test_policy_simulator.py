"""The session simulator: each ground-truth parameter does what the docstring says."""

from __future__ import annotations

import numpy as np
import pytest

from engine.policy.reward import LAMBDA, TAU, RewardSpec, reward
from engine.policy.simulator import (
    MAX_CRITERIA,
    MIN_CRITERIA,
    PARAM_RANGES,
    TURNS,
    SimBatch,
    TargetParams,
    heldout_targets,
    params_arrays,
    run_episodes,
    sample_params,
)


def _target(**kw) -> TargetParams:
    base = {"knowledge": 0.6, "stability": 0.5, "verbosity": 0.5, "wrongness": 0.0, "judge_error": 0.0}
    return TargetParams(**(base | kw))


def _run(target: TargetParams, policy, count=400, seed=0):
    def act(states):
        a = policy(states)
        return a, np.zeros((len(a), 2))
    return run_episodes(params_arrays([target], repeat=count), act, np.random.default_rng(seed))


def always(action):
    return lambda s: np.full(len(s), action)


def test_same_seed_same_episodes_and_rewards_follow_the_formula():
    target = _target(judge_error=0.05, wrongness=0.3)
    rng = np.random.default_rng(9)
    policy = lambda s: (rng.random(len(s)) < 0.5).astype(int)  # noqa: E731
    a = _run(target, policy, seed=4)
    rng = np.random.default_rng(9)
    b = _run(target, policy, seed=4)
    np.testing.assert_array_equal(a.states, b.states)
    np.testing.assert_array_equal(a.rewards, b.rewards)
    cos = a.states[:, 1:, 2].astype(np.float64)
    expected = reward(a.actions, a.deltas[:, 1:], cos, TAU, LAMBDA)
    np.testing.assert_allclose(a.rewards, expected, atol=1e-6)
    np.testing.assert_allclose(a.deltas[:, 1:], np.diff(a.scores, axis=1))


def test_follow_ups_only_add_and_knowledge_sets_the_ceiling():
    weak = _run(_target(knowledge=0.2), always(0))
    strong = _run(_target(knowledge=0.8), always(0))
    assert (np.diff(weak.scores, axis=1) >= 0).all()      # no judge noise, no challenge: never falls
    assert weak.scores[:, -1].mean() < 0.25 < 0.6 < strong.scores[:, -1].mean()
    assert strong.scores[:, 0].mean() < strong.scores[:, -1].mean()


def test_stable_target_holds_under_challenge():
    ep = _run(_target(stability=1.0), always(1))
    assert (ep.deltas[:, 1:] == 0).all()
    assert (ep.rewards == -TAU).all()


def test_unstable_target_retracts_what_it_covered():
    ep = _run(_target(stability=0.0, knowledge=0.9), always(1))
    first = ep.deltas[:, 1]
    had = ep.scores[:, 0] > 0
    assert (first[had] < 0).all() and (first[~had] == 0).all()


def test_unstable_partly_wrong_target_corrects_itself():
    # Knows nothing, believes wrongly all the rest: no score until a challenge corrects the claims.
    ep = _run(_target(stability=0.0, knowledge=0.0, wrongness=1.0), lambda s: np.ones(len(s), int))
    assert (ep.scores[:, 0] == 0).all()
    assert (ep.deltas[:, 1] >= 0).all() and (ep.deltas[:, 1] > 0).any()


def test_verbosity_lowers_cos():
    held = always(1)  # a stable target holding: only the off-rubric content moves the summary
    terse = _run(_target(stability=1.0, verbosity=0.1), held).states[:, 1:, 2]
    verbose = _run(_target(stability=1.0, verbosity=0.9), held).states[:, 1:, 2]
    assert terse.min() >= -1 and verbose.max() <= 1
    assert verbose.mean() < terse.mean() - 0.05


def test_judge_errors_make_a_holding_target_move():
    clean = _run(_target(stability=1.0), always(1))
    noisy = _run(_target(stability=1.0, judge_error=0.05), always(1))
    assert (clean.deltas[:, 1:] == 0).all()
    assert (noisy.deltas[:, 1:] != 0).mean() > 0.1


def test_item_sizes_and_param_ranges():
    sim = SimBatch(sample_params(np.random.default_rng(0), 500), np.random.default_rng(1))
    sim.reset()
    assert sim.n.min() == MIN_CRITERIA and sim.n.max() == MAX_CRITERIA
    drawn = sample_params(np.random.default_rng(0), 1000)
    for name, (low, high) in PARAM_RANGES.items():
        assert low <= drawn[name].min() and drawn[name].max() <= high


def test_heldout_targets_are_fixed_and_in_range():
    a, b = heldout_targets(), heldout_targets()
    assert a == b and len(a) == 20
    for t in a:
        for name, (low, high) in PARAM_RANGES.items():
            assert low <= getattr(t, name) <= high
    train_draws = sample_params(np.random.default_rng(0), 20)
    assert not np.isin([t.knowledge for t in a], train_draws["knowledge"]).any()


def test_episode_shapes():
    ep = _run(_target(), always(0), count=3)
    assert ep.states.shape == (3, TURNS, 7)
    assert ep.actions.shape == ep.rewards.shape == (3, TURNS - 1)
    assert np.isnan(ep.deltas[:, 0]).all()
    assert (ep.states[:, 0, 3] == 1).all() and (ep.states[:, 1:, 4] == 1).all()


def test_evidence_reward_scores_the_state_the_decision_was_taken_in():
    rng = np.random.default_rng(2)
    ep = run_episodes(params_arrays([_target(judge_error=0.03)], repeat=200),
                      lambda s: ((rng.random(len(s)) < 0.5).astype(int), np.zeros((len(s), 2))),
                      np.random.default_rng(3), reward=RewardSpec("evidence"))
    delta_t = ep.states[:, :-1, 1].astype(np.float64)
    cos_t = ep.states[:, :-1, 2].astype(np.float64)
    expected = np.where(ep.actions == 1, TAU - delta_t, delta_t + LAMBDA * (1 - cos_t))
    np.testing.assert_allclose(ep.rewards, expected, atol=1e-6)
    assert (ep.rewards[:, 0] == np.where(ep.actions[:, 0] == 1, TAU, 0.0)).all()  # t = 0: Δs 0, cos 1


def test_unknown_reward_kind():
    with pytest.raises(ValueError, match="outcome"):
        RewardSpec("surprise")
