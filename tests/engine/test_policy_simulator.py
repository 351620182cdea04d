"""The session simulator: each ground-truth parameter does what the docstring says."""

from __future__ import annotations

import numpy as np
import pytest

from engine.policy.reward import LAMBDA, TAU, RewardSpec, rate_term, reward
from engine.policy.simulator import (
    MAX_CRITERIA,
    MIN_CRITERIA,
    PARAM_RANGES,
    SHIFT_CRITERIA,
    SHIFT_RANGES,
    TURNS,
    SimBatch,
    TargetParams,
    heldout_targets,
    params_arrays,
    run_episodes,
    sample_params,
    shifted_targets,
)


def _target(**kw) -> TargetParams:
    base = {"knowledge": 0.6, "stability": 0.5, "verbosity": 0.5, "wrongness": 0.0, "judge_error": 0.0}
    return TargetParams(**(base | kw))


def _run(target: TargetParams, policy, count=400, seed=0, reward=RewardSpec(), **kw):
    def act(states):
        a = policy(states)
        return a, np.zeros((len(a), 2))
    return run_episodes(params_arrays([target], repeat=count), act, np.random.default_rng(seed), reward=reward,
                        **kw)


def schedule(*actions):
    """The same action sequence in every session (one action per decision)."""
    def policy(states):
        t = int(round(float(states[0, 6]) * TURNS))
        return np.full(len(states), actions[t])
    return policy


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


def test_known_share_is_the_items_true_knowledge():
    ep = _run(_target(knowledge=0.7), always(0), count=500)
    assert abs(ep.known_share.mean() - 0.7) < 0.03
    assert (ep.scores[:, -1] <= ep.known_share + 1e-9).all()         # no judge error: never above it


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


def test_windowed_items_ask_one_criterion_per_question():
    knows_all = _target(knowledge=1.0, windowed=1.0, stability=1.0)
    ep = _run(knows_all, always(0), count=200, criteria=(8, 8))
    np.testing.assert_allclose(np.diff(ep.scores, axis=1), 1 / 8)   # one new criterion per follow-up
    np.testing.assert_allclose(ep.scores[:, 0], 1 / 8)
    knows_none = _run(_target(knowledge=0.0, wrongness=1.0, windowed=1.0), always(0), count=50)
    assert (knows_none.scores == 0).all()                            # wrong answers cover nothing
    open_items = _run(_target(knowledge=1.0, stability=1.0), always(0), count=200, criteria=(8, 8))
    assert open_items.scores[:, 0].mean() > 0.5                      # an open question draws many out


def test_window_used_up_then_stagnates():
    ep = _run(_target(knowledge=1.0, windowed=1.0, stability=1.0), always(0), count=20, criteria=(4, 4))
    np.testing.assert_allclose(ep.scores[:, 3:], 1.0)
    assert (ep.deltas[:, 4:] == 0).all()


def test_narrow_challenge_puts_only_the_last_answer_at_stake():
    # windowed, knows everything, never holds: FU, FU, then challenge -> only the last claim goes
    narrow = _run(_target(knowledge=1.0, windowed=1.0, narrow=1.0, stability=0.0), schedule(0, 0, 1, 1, 0),
                  count=100, criteria=(10, 10))
    np.testing.assert_allclose(narrow.deltas[:, 3], -0.1)
    np.testing.assert_allclose(narrow.deltas[:, 4], 0.0)             # nothing of that answer left to retract
    wide = _run(_target(knowledge=1.0, windowed=1.0, narrow=0.0, stability=0.0), schedule(0, 0, 1, 1, 0),
                count=100, criteria=(10, 10))
    assert (wide.deltas[:, 3] <= -0.1 + 1e-9).all() and (wide.deltas[:, 3] < -0.1 - 1e-9).any()


def test_measure_reward_pays_a_claim_tested_once():
    spec = RewardSpec("measure", mu=1.0, cost=0.02)
    target = _target(knowledge=1.0, windowed=1.0, narrow=1.0, stability=1.0)
    ep = _run(target, schedule(0, 1, 1, 0, 1), count=50, criteria=(10, 10), reward=spec)
    # FU draws one claim (+0.1); the first challenge tests it (+0.1 − c); the second tests nothing new (−c);
    # FU draws the next (+0.1); the last challenge tests that new claim (+0.1 − c)
    np.testing.assert_allclose(ep.rewards, [[0.1, 0.1 - 0.02, -0.02, 0.1, 0.1 - 0.02]] * 50)
    np.testing.assert_allclose(ep.stake[:, [1, 2, 4]], 0.1)


def test_measure_reward_follows_its_formula_on_random_sessions():
    spec = RewardSpec("measure", mu=0.7, cost=0.03, beta=0.05)
    rng = np.random.default_rng(5)
    target = _target(judge_error=0.03, wrongness=0.3, windowed=0.5, narrow=0.5)
    ep = _run(target, lambda s: (rng.random(len(s)) < 0.5).astype(int), count=300, reward=spec)
    delta = np.diff(ep.scores, axis=1)
    delta_t = np.nan_to_num(ep.deltas[:, :-1])                       # float64, as the simulator sees it
    first = np.zeros_like(delta_t, dtype=bool)
    first[:, 0] = True
    base = ep.rewards - delta - 0.05 * rate_term(ep.actions, delta_t, first)
    follow = ep.actions == 0
    np.testing.assert_allclose(base[follow], 0.0, atol=1e-6)
    paid = base[~follow] + 0.03                                      # mu * untested share >= 0
    assert (paid >= -1e-9).all() and (paid > 0).any()
    assert (paid <= 0.7 * ep.stake[~follow] + 1e-9).all()            # never more than what was at stake


def test_sizes_override_the_drawn_item_sizes():
    sim = SimBatch(params_arrays([_target()], repeat=3), np.random.default_rng(0), sizes=np.array([2, 0, 15]))
    sim.reset()
    assert sim.n[0] == 2 and MIN_CRITERIA <= sim.n[1] <= MAX_CRITERIA and sim.n[2] == 15
    with pytest.raises(ValueError, match="sizes"):
        SimBatch(params_arrays([_target()], repeat=3), np.random.default_rng(0), sizes=np.array([2, 3]))


def test_shifted_targets_lie_outside_the_training_ranges():
    targets = shifted_targets(200)
    for name in ("verbosity", "wrongness", "judge_error"):
        low, high = PARAM_RANGES[name]
        values = np.array([getattr(t, name) for t in targets])
        assert ((values >= high) | (values <= low)).all(), name
        assert SHIFT_RANGES[name][0] <= values.min() and values.max() <= SHIFT_RANGES[name][1]
    k = np.array([t.knowledge for t in targets])
    assert (k < PARAM_RANGES["knowledge"][0]).any() and (k > PARAM_RANGES["knowledge"][1]).any()
    assert SHIFT_CRITERIA[0] > MAX_CRITERIA
    sim = SimBatch(params_arrays(targets[:5], repeat=40), np.random.default_rng(0), criteria=SHIFT_CRITERIA)
    sim.reset()
    assert sim.n.min() >= SHIFT_CRITERIA[0] and sim.n.max() <= SHIFT_CRITERIA[1]
