"""PPO in numpy: hand-written gradients against finite differences, GAE, Adam, determinism."""

from __future__ import annotations

import numpy as np
import pytest

from engine.policy import network
from engine.policy.ppo import (
    Adam,
    PPOConfig,
    actor_loss,
    clip_grad_norm,
    critic_loss,
    gae,
    train,
    untrained_actor,
)


def _numeric_grads(loss_fn, params, eps=1e-6):
    grads = {}
    for name, value in params.items():
        g = np.zeros_like(value)
        it = np.nditer(value, flags=["multi_index"])
        for _ in it:
            idx = it.multi_index
            old = value[idx]
            value[idx] = old + eps
            up = loss_fn()
            value[idx] = old - eps
            down = loss_fn()
            value[idx] = old
            g[idx] = (up - down) / (2 * eps)
        grads[name] = g
    return grads


def _batch(rng, count=24):
    states = rng.standard_normal((count, 7))
    actions = rng.integers(0, 2, size=count)
    adv = rng.standard_normal(count)
    return states, actions, adv


def test_actor_gradients_match_finite_differences():
    rng = np.random.default_rng(1)
    params = network.init_mlp(rng, 2, 1.0, hidden=8)
    states, actions, adv = _batch(rng)
    logits, _ = network.forward(params, states)
    logp_now = network.log_softmax(logits)[np.arange(len(actions)), actions]
    # Old log-probs chosen so that ratios are clearly inside or clearly outside [0.8, 1.2]:
    # both branches of the clipped objective are exercised, away from the kinks.
    shift = np.where(np.arange(len(actions)) % 3 == 0, 0.6, 0.05) * np.where(adv > 0, 1, -1)
    logp_old = logp_now - shift
    loss, grads, _ = actor_loss(params, states, actions, logp_old, adv, clip=0.2, ent_coef=0.05)
    ratio = np.exp(logp_now - logp_old)
    assert ((ratio > 1.2) | (ratio < 0.8)).any() and ((ratio < 1.2) & (ratio > 0.8)).any()
    numeric = _numeric_grads(lambda: actor_loss(params, states, actions, logp_old, adv, 0.2, 0.05)[0], params)
    for name in params:
        np.testing.assert_allclose(grads[name], numeric[name], rtol=1e-5, atol=1e-8, err_msg=name)
    assert np.isfinite(loss)


def test_critic_gradients_match_finite_differences():
    rng = np.random.default_rng(2)
    params = network.init_mlp(rng, 1, 1.0, hidden=8)
    states = rng.standard_normal((16, 7))
    returns = rng.standard_normal(16)
    _, grads = critic_loss(params, states, returns)
    numeric = _numeric_grads(lambda: critic_loss(params, states, returns)[0], params)
    for name in params:
        np.testing.assert_allclose(grads[name], numeric[name], rtol=1e-5, atol=1e-8, err_msg=name)


def test_gae_matches_direct_formula():
    rewards = np.array([[1.0], [0.5], [-0.2]])
    values = np.array([[0.3], [0.1], [0.4]])
    gamma, lam = 0.9, 0.8
    adv, ret = gae(rewards, values, gamma, lam)
    d2 = -0.2 - 0.4
    d1 = 0.5 + gamma * 0.4 - 0.1
    d0 = 1.0 + gamma * 0.1 - 0.3
    expected = [d0 + gamma * lam * (d1 + gamma * lam * d2), d1 + gamma * lam * d2, d2]
    np.testing.assert_allclose(adv[:, 0], expected)
    np.testing.assert_allclose(ret, adv + values)
    # lambda = 1, gamma = 1: the advantage is the return-to-go minus the value.
    adv1, ret1 = gae(rewards, values, 1.0, 1.0)
    np.testing.assert_allclose(ret1[:, 0], [1.3, 0.3, -0.2])


def test_adam_first_step_moves_by_lr_against_the_gradient():
    params = {"w": np.array([1.0, -2.0])}
    Adam(lr=0.1).step(params, {"w": np.array([3.0, -0.5])})
    np.testing.assert_allclose(params["w"], [0.9, -1.9])


def test_clip_grad_norm():
    grads = {"a": np.array([3.0]), "b": np.array([4.0])}
    assert clip_grad_norm(grads, 1.0) == pytest.approx(5.0)
    np.testing.assert_allclose([grads["a"][0], grads["b"][0]], [0.6, 0.8])


def test_actor_updates_raise_probability_of_advantaged_action():
    rng = np.random.default_rng(3)
    params = network.init_mlp(rng, 2, 0.01, hidden=16)
    states = rng.standard_normal((64, 7))
    actions = np.ones(64, dtype=np.int64)
    adv = np.ones(64)
    logp_old = network.log_softmax(network.forward(params, states)[0])[:, 1]
    before = network.actor_probs(params, states)[:, 1].mean()
    opt = Adam(1e-2)
    for _ in range(5):
        _, grads, _ = actor_loss(params, states, actions, logp_old, adv, 0.2, 0.0)
        opt.step(params, grads)
    after = network.actor_probs(params, states)[:, 1].mean()
    assert after > before + 0.05


def test_training_is_deterministic_for_a_seed():
    config = PPOConfig(steps=1200, seed=5, envs=64, minibatches=2, epochs=2)
    a, b = train(config), train(config)
    for name in a.actor:
        np.testing.assert_array_equal(a.actor[name], b.actor[name])
        np.testing.assert_array_equal(a.critic[name], b.critic[name])
    assert [u.mean_return for u in a.history] == [u.mean_return for u in b.history]
    other = train(PPOConfig(steps=1200, seed=6, envs=64, minibatches=2, epochs=2))
    assert not np.array_equal(other.actor["W1"], a.actor["W1"])
    # The untrained baseline is exactly the actor a run starts from.
    for name, value in untrained_actor(5).items():
        np.testing.assert_array_equal(value, a.initial_actor[name])
    assert a.steps == 4 * 64 * 5 and len(a.history) == 4
