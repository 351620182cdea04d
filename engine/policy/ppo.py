"""PPO (clipped objective, GAE, entropy bonus, Adam, minibatches) in numpy, on the session simulator.

Every random number of a training run comes from one ``numpy.random.Generator`` seeded with
``PPOConfig.seed`` and is drawn in a fixed order, so a run is deterministic for a given seed (and
bit-identical on the same numpy/BLAS build; see the model card for what was verified).

Each update simulates ``envs`` fresh sessions (one new target per session) for their ``T − 1``
decisions, so ``steps`` counts decisions and one update consumes ``envs × (T − 1)`` of them.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping
from dataclasses import asdict, dataclass, field

import numpy as np

from engine.policy import network
from engine.policy.blas import single_thread_blas
from engine.policy.features import N_FEATURES
from engine.policy.network import Params
from engine.policy.reward import BETA, COST, LAMBDA, MU, TAU, RewardSpec
from engine.policy.simulator import TURNS, SimBatch, sample_params

ParamSampler = Callable[[np.random.Generator, int], Mapping[str, np.ndarray]]


@dataclass(frozen=True)
class PPOConfig:
    """Hyper-parameters of a training run (all written into the model card)."""

    steps: int = 1_000_000
    seed: int = 0
    envs: int = 512
    epochs: int = 4
    minibatches: int = 4
    lr: float = 3e-4
    clip: float = 0.2
    ent_coef: float = 0.01
    gamma: float = 1.0
    gae_lambda: float = 0.95
    max_grad_norm: float = 0.5
    hidden: int = network.HIDDEN
    turns: int = TURNS
    tau: float = TAU
    lam: float = LAMBDA
    reward: str = "outcome"
    mu: float = MU
    cost: float = COST
    beta: float = BETA
    unit: str = "claim"
    rates: str = "both"

    def reward_spec(self) -> RewardSpec:
        """The reward this run optimises."""
        return RewardSpec(self.reward, self.tau, self.lam, self.mu, self.cost, self.beta, self.unit, self.rates)

    def as_dict(self) -> dict:
        """The configuration as a plain dict."""
        return asdict(self)


@dataclass
class Adam:
    """Adam optimiser over a parameter dict (updates in place)."""

    lr: float
    beta1: float = 0.9
    beta2: float = 0.999
    eps: float = 1e-8
    t: int = 0
    m: dict[str, np.ndarray] = field(default_factory=dict)
    v: dict[str, np.ndarray] = field(default_factory=dict)

    def step(self, params: Params, grads: Params) -> None:
        """One Adam step: ``params -= lr · m̂ / (√v̂ + eps)``."""
        self.t += 1
        for name, g in grads.items():
            m = self.m.get(name, np.zeros_like(g))
            v = self.v.get(name, np.zeros_like(g))
            m = self.beta1 * m + (1.0 - self.beta1) * g
            v = self.beta2 * v + (1.0 - self.beta2) * g * g
            self.m[name], self.v[name] = m, v
            m_hat = m / (1.0 - self.beta1 ** self.t)
            v_hat = v / (1.0 - self.beta2 ** self.t)
            params[name] -= self.lr * m_hat / (np.sqrt(v_hat) + self.eps)


def actor_loss(params: Params, states: np.ndarray, actions: np.ndarray, logp_old: np.ndarray,
               advantages: np.ndarray, clip: float, ent_coef: float) -> tuple[float, Params, dict[str, float]]:
    """PPO's clipped surrogate loss with an entropy bonus, and its gradients.

    ``L = −mean(min(ρ·A, clip(ρ, 1−ε, 1+ε)·A)) − c·mean(H)`` with ``ρ = π(a|s) / π_old(a|s)``.

    Args:
        params: actor parameters.
        states: [N, 7].
        actions: [N] action indices.
        logp_old: [N] log-probabilities of ``actions`` under the rollout policy.
        advantages: [N] (already normalised by the caller if wanted).
        clip: ε.
        ent_coef: c.

    Returns:
        (loss, gradients, stats with ``entropy``, ``clip_frac`` and ``approx_kl``).
    """
    count = states.shape[0]
    logits, cache = network.forward(params, states)
    logp_all = network.log_softmax(logits)
    probs = np.exp(logp_all)
    rows = np.arange(count)
    logp = logp_all[rows, actions]
    ratio = np.exp(logp - logp_old)
    clipped = np.clip(ratio, 1.0 - clip, 1.0 + clip)
    unclipped_obj = ratio * advantages
    clipped_obj = clipped * advantages
    objective = np.minimum(unclipped_obj, clipped_obj)
    entropy = -(probs * logp_all).sum(axis=1)
    loss = float(-objective.mean() - ent_coef * entropy.mean())

    # d objective / d logp: ρ·A where the unclipped term is the minimum, else 0 (clip is flat there).
    active = unclipped_obj <= clipped_obj
    d_logp = np.where(active, unclipped_obj, 0.0)
    onehot = np.zeros_like(probs)
    onehot[rows, actions] = 1.0
    d_logits = -(d_logp[:, None] * (onehot - probs)) / count
    # dH/dz_j = −p_j (log p_j + H)
    d_entropy = -probs * (logp_all + entropy[:, None])
    d_logits -= ent_coef * d_entropy / count
    grads = network.backward(params, cache, d_logits)
    stats = {
        "entropy": float(entropy.mean()),
        "clip_frac": float((np.abs(ratio - 1.0) > clip).mean()),
        "approx_kl": float((logp_old - logp).mean()),
    }
    return loss, grads, stats


def critic_loss(params: Params, states: np.ndarray, returns: np.ndarray) -> tuple[float, Params]:
    """Value loss ``0.5 · mean((V(s) − R)²)`` and its gradients."""
    values, cache = network.forward(params, states)
    err = values[:, 0] - returns
    loss = float(0.5 * (err ** 2).mean())
    grads = network.backward(params, cache, (err / states.shape[0])[:, None])
    return loss, grads


def clip_grad_norm(grads: Params, max_norm: float) -> float:
    """Scale ``grads`` in place so their global L2 norm is at most ``max_norm``; return the norm before."""
    norm = float(np.sqrt(sum(float((g * g).sum()) for g in grads.values())))
    if norm > max_norm > 0:
        scale = max_norm / (norm + 1e-12)
        for g in grads.values():
            g *= scale
    return norm


def gae(rewards: np.ndarray, values: np.ndarray, gamma: float, lam: float) -> tuple[np.ndarray, np.ndarray]:
    """Generalised advantage estimation for fixed-length episodes.

    Args:
        rewards: [T', B] rewards (T' decisions per episode; the episode ends after the last).
        values: [T', B] critic values of the states the decisions were taken in.
        gamma: discount.
        lam: GAE λ.

    Returns:
        (advantages [T', B], returns = advantages + values [T', B]).
    """
    steps = rewards.shape[0]
    adv = np.zeros_like(rewards)
    running = np.zeros(rewards.shape[1])
    for t in reversed(range(steps)):
        next_value = values[t + 1] if t + 1 < steps else 0.0
        delta = rewards[t] + gamma * next_value - values[t]
        running = delta + gamma * lam * running
        adv[t] = running
    return adv, adv + values


@dataclass
class Update:
    """Progress report after one PPO update."""

    update: int
    steps: int
    mean_return: float
    entropy: float
    value_loss: float
    approx_kl: float
    clip_frac: float


@dataclass
class TrainResult:
    """A trained actor and critic with the run's history."""

    actor: Params
    critic: Params
    initial_actor: Params
    config: PPOConfig
    history: list[Update]
    steps: int
    seconds: float


def train(config: PPOConfig = PPOConfig(), sampler: ParamSampler | None = None,
          on_update: Callable[[Update], None] | None = None) -> TrainResult:
    """Train the questioning policy with PPO on simulated sessions.

    Args:
        config: hyper-parameters, seed and number of decisions (``steps``) to simulate.
        sampler: draws target parameters for a batch of episodes (default: uniform over
            ``simulator.PARAM_RANGES``; calibration passes one built from logged sessions).
        on_update: called after every update (progress bars).

    Returns:
        The :class:`TrainResult`; ``initial_actor`` is the random-init actor (the "untrained" baseline).
        numpy's BLAS runs on one thread meanwhile (see :mod:`engine.policy.blas`).
    """
    with single_thread_blas():
        return _train(config, sampler or sample_params, on_update)


def _train(config: PPOConfig, sampler: ParamSampler, on_update: Callable[[Update], None] | None) -> TrainResult:
    rng = np.random.default_rng(config.seed)
    actor = _init_actor(rng, config.hidden)
    critic = network.init_mlp(rng, 1, 1.0, hidden=config.hidden)
    initial_actor = {k: v.copy() for k, v in actor.items()}
    actor_opt, critic_opt = Adam(config.lr), Adam(config.lr)
    decisions = config.turns - 1
    per_update = config.envs * decisions
    updates = max(1, -(-config.steps // per_update))
    history: list[Update] = []
    started = time.perf_counter()
    for number in range(1, updates + 1):
        states, actions, logp, values, rewards = _rollout(actor, critic, config, sampler, rng)
        adv, returns = gae(rewards, values, config.gamma, config.gae_lambda)
        flat = _flatten(states, actions, logp, adv, returns)
        stats = _optimise(actor, critic, actor_opt, critic_opt, flat, config, rng)
        update = Update(number, number * per_update, float(rewards.sum(axis=0).mean()), **stats)
        history.append(update)
        if on_update is not None:
            on_update(update)
    return TrainResult(actor, critic, initial_actor, config, history, updates * per_update,
                       time.perf_counter() - started)


def untrained_actor(seed: int, hidden: int = network.HIDDEN) -> Params:
    """The random-init actor a training run with ``seed`` starts from (the "untrained" baseline)."""
    return _init_actor(np.random.default_rng(seed), hidden)


def _init_actor(rng: np.random.Generator, hidden: int) -> Params:
    # The actor is the first thing drawn from a run's generator, so untrained_actor() can rebuild it.
    return network.init_mlp(rng, 2, 0.01, hidden=hidden)


def _rollout(actor: Params, critic: Params, config: PPOConfig, sampler: ParamSampler,
             rng: np.random.Generator) -> tuple[np.ndarray, ...]:
    sim = SimBatch(sampler(rng, config.envs), rng, config.turns, config.reward_spec())
    decisions = config.turns - 1
    states = np.zeros((decisions, config.envs, N_FEATURES))
    actions = np.zeros((decisions, config.envs), dtype=np.int64)
    logp = np.zeros((decisions, config.envs))
    values = np.zeros((decisions, config.envs))
    rewards = np.zeros((decisions, config.envs))
    current = sim.reset()
    for t in range(decisions):
        states[t] = current
        logits, _ = network.forward(actor, current)
        logp_all = network.log_softmax(logits)
        actions[t] = (rng.random(config.envs) < np.exp(logp_all[:, 1])).astype(np.int64)
        logp[t] = logp_all[np.arange(config.envs), actions[t]]
        values[t] = network.forward(critic, current)[0][:, 0]
        result = sim.step(actions[t])
        rewards[t] = result.rewards
        current = result.states
    return states, actions, logp, values, rewards


def _flatten(states, actions, logp, adv, returns) -> dict[str, np.ndarray]:
    return {
        "states": states.reshape(-1, states.shape[-1]),
        "actions": actions.reshape(-1),
        "logp": logp.reshape(-1),
        "adv": adv.reshape(-1),
        "returns": returns.reshape(-1),
    }


def _optimise(actor: Params, critic: Params, actor_opt: Adam, critic_opt: Adam, batch: dict[str, np.ndarray],
              config: PPOConfig, rng: np.random.Generator) -> dict[str, float]:
    count = batch["states"].shape[0]
    size = count // config.minibatches
    totals = {"entropy": 0.0, "value_loss": 0.0, "approx_kl": 0.0, "clip_frac": 0.0}
    rounds = 0
    for _ in range(config.epochs):
        order = rng.permutation(count)
        for start in range(0, size * config.minibatches, size):
            idx = order[start:start + size]
            adv = batch["adv"][idx]
            adv = (adv - adv.mean()) / (adv.std() + 1e-8)
            _, a_grads, stats = actor_loss(actor, batch["states"][idx], batch["actions"][idx],
                                           batch["logp"][idx], adv, config.clip, config.ent_coef)
            clip_grad_norm(a_grads, config.max_grad_norm)
            actor_opt.step(actor, a_grads)
            v_loss, c_grads = critic_loss(critic, batch["states"][idx], batch["returns"][idx])
            clip_grad_norm(c_grads, config.max_grad_norm)
            critic_opt.step(critic, c_grads)
            totals["entropy"] += stats["entropy"]
            totals["approx_kl"] += stats["approx_kl"]
            totals["clip_frac"] += stats["clip_frac"]
            totals["value_loss"] += v_loss
            rounds += 1
    return {k: v / rounds for k, v in totals.items()}
