"""A simulator of interview sessions, the training and evaluation environment of the policy.

One episode is one adaptive session (DESIGN.md, "Protocols/adaptive") of ``T = 6`` turns over an
item with ``n`` criteria (``n`` uniform in 4..12, all weights 1, no deduction points). Turn 0 answers
the opening question; the policy then picks the type of each of the ``T − 1`` further turns.

The simulated target has ground-truth parameters (:class:`TargetParams`):

- **knowledge** ``k``: each criterion is one the target *knows* with probability ``k``; any
  question that is not a challenge (the opening question and every follow-up) draws out each
  believed criterion it has not stated yet with probability ``k``. So ``k`` is both the target's
  share of knowledge and the chance that a follow-up draws out a criterion it knows.
- **wrongness** ``w``: of the criteria it does not know, the target holds a *wrong* belief about a
  share ``w``; any question that is not a challenge draws out each such belief not stated yet with
  probability ``WRONG_DRAW`` = 1/2 (a target that knows little still asserts its wrong beliefs),
  and the claim does not cover the criterion (the target is then *partly wrong*).
- **stability** ``σ``: under a challenge the target holds its answer with probability ``σ``.
  Otherwise it gives way: when it is partly wrong (a wrong claim is in its summary) it corrects
  itself (every stated wrong claim becomes the correct one, the score rises); else it retracts
  claims (each covered criterion with probability 1/2, at least one; the score falls). A retracted
  criterion is still known and a later follow-up may draw it out again.
- **verbosity** ``v``: every answer adds off-rubric content of size ``v`` to the running summary,
  which moves the summary embedding and so lowers ``cos``.
- **judge_error** ``ε``: the judge misreads each criterion of each turn independently with
  probability ``ε`` (a covered criterion read as missing or the reverse).

``cos`` is computed, not invented: the summary is embedded as the topic vector plus one random
vector per stated claim (a wrong claim has its own vector, different from the correct one) plus the
accumulated off-rubric content, in ``EMBED_DIM`` dimensions; ``cos_t`` is the cosine of the
embeddings after turns ``t`` and ``t − 1``.

Parameters are drawn uniformly from :data:`PARAM_RANGES` (one fresh target per training episode).
:func:`heldout_targets` draws the evaluation targets from their own seed (:data:`HELDOUT_SEED`); the
trainer never uses that stream, so these draws are kept for evaluation only.

Calibration from logged sessions (``engine/policy/calibrate.py``) replaces the uniform ranges by
parameters fitted per target from the Δs observed under each action.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import asdict, dataclass, fields

import numpy as np

from engine.policy.features import (
    ACTIONS,
    COS_WHEN_UNDEFINED,
    DELTA_WHEN_UNDEFINED,
    N_FEATURES,
    PREV_ACTIONS,
    state_batch,
)
from engine.policy.reward import RewardSpec

TURNS = 6
"""T: turns per session (the paper's setting); the policy makes T − 1 decisions."""

MIN_CRITERIA = 4
MAX_CRITERIA = 12
EMBED_DIM = 16
RETRACT_SHARE = 0.5
"""Chance that a covered criterion is retracted when an unstable target gives way."""
WRONG_DRAW = 0.5
"""Chance that a question draws out a wrong belief not stated yet (whatever the knowledge)."""

HELDOUT_SEED = 7_000_001
"""Seed of the held-out evaluation targets; never used by training."""

PARAM_RANGES: dict[str, tuple[float, float]] = {
    "knowledge": (0.1, 0.9),
    "stability": (0.2, 0.95),
    "verbosity": (0.1, 0.9),
    "wrongness": (0.0, 0.5),
    "judge_error": (0.0, 0.05),
}
"""Uniform ranges of the simulated targets' parameters (written into the model card)."""

FOLLOW_UP = ACTIONS.index("follow-up")
CHALLENGE = ACTIONS.index("challenge")
_UNKNOWN, _KNOWN, _WRONG = 0, 1, 2


@dataclass(frozen=True)
class TargetParams:
    """Ground truth of one simulated target (see the module docstring for the meaning)."""

    knowledge: float
    stability: float
    verbosity: float
    wrongness: float
    judge_error: float

    def as_dict(self) -> dict[str, float]:
        """The parameters as a plain dict (JSON-ready)."""
        return {k: float(v) for k, v in asdict(self).items()}


PARAM_NAMES: tuple[str, ...] = tuple(f.name for f in fields(TargetParams))


def sample_params(rng: np.random.Generator, count: int,
                  ranges: Mapping[str, tuple[float, float]] = PARAM_RANGES) -> dict[str, np.ndarray]:
    """Draw ``count`` targets uniformly from ``ranges``.

    Args:
        rng: the random generator (the caller's seed decides the draws).
        count: number of targets.
        ranges: ``name -> (low, high)`` for every name in :data:`PARAM_NAMES`.

    Returns:
        ``name -> float64 array [count]``.
    """
    return {name: rng.uniform(*ranges[name], size=count) for name in PARAM_NAMES}


def params_arrays(targets: list[TargetParams], repeat: int = 1) -> dict[str, np.ndarray]:
    """Stack targets into parameter arrays, each target repeated ``repeat`` times in a row."""
    return {name: np.repeat(np.array([getattr(t, name) for t in targets], dtype=np.float64), repeat)
            for name in PARAM_NAMES}


def heldout_targets(count: int = 20) -> list[TargetParams]:
    """The held-out evaluation targets: ``count`` draws from :data:`PARAM_RANGES` with
    :data:`HELDOUT_SEED`. Deterministic; the trainer never draws from this stream."""
    drawn = sample_params(np.random.default_rng(HELDOUT_SEED), count)
    return [TargetParams(**{name: float(drawn[name][i]) for name in PARAM_NAMES}) for i in range(count)]


@dataclass
class StepResult:
    """What one simulated turn returns for every episode of the batch."""

    states: np.ndarray
    """float32 [B, 7]: the state after this turn."""
    rewards: np.ndarray
    """float64 [B]: reward of the action that produced this turn."""
    scores: np.ndarray
    """float64 [B]: s_t as read by the judge."""
    deltas: np.ndarray
    """float64 [B]: Δs_t."""
    cos: np.ndarray
    """float64 [B]: cos_t."""
    done: bool
    """True after the last turn (t = T − 1)."""


class SimBatch:
    """``B`` simulated sessions run in lockstep (they all have ``T`` turns).

    The random numbers drawn at each turn do not depend on the actions, so two policies run with
    the same seed face the same targets, items and luck (common random numbers).
    """

    def __init__(self, params: Mapping[str, np.ndarray], rng: np.random.Generator, turns: int = TURNS,
                 reward: RewardSpec = RewardSpec()):
        """Args:
            params: ``name -> array [B]`` for every name in :data:`PARAM_NAMES`.
            rng: the random generator driving items, answers and judge errors.
            turns: ``T``.
            reward: the reward definition (default: ``outcome`` with τ = 0.1, λ = 0.5).
        """
        if turns < 2:
            raise ValueError(f"a session needs at least 2 turns, got {turns}")
        self.params = {name: np.asarray(params[name], dtype=np.float64) for name in PARAM_NAMES}
        self.size = self.params["knowledge"].shape[0]
        self.rng = rng
        self.turns = turns
        self.reward = reward
        self.t = -1

    # -- episode start ----------------------------------------------------------------------------
    def reset(self) -> np.ndarray:
        """Start new sessions: draw items and beliefs, answer the opening question (turn 0).

        Returns:
            float32 [B, 7]: the states after turn 0.
        """
        rng, size, p = self.rng, self.size, self.params
        self.n = rng.integers(MIN_CRITERIA, MAX_CRITERIA + 1, size=size)
        self.valid = np.arange(MAX_CRITERIA)[None, :] < self.n[:, None]
        u_known = rng.random((size, MAX_CRITERIA))
        u_wrong = rng.random((size, MAX_CRITERIA))
        belief = np.full((size, MAX_CRITERIA), _UNKNOWN, dtype=np.int8)
        belief[u_wrong < p["wrongness"][:, None]] = _WRONG
        belief[u_known < p["knowledge"][:, None]] = _KNOWN
        belief[~self.valid] = _UNKNOWN
        self.belief = belief
        scale = 1.0 / np.sqrt(EMBED_DIM)
        self.topic = rng.standard_normal((size, EMBED_DIM)) * scale
        self.right_vec = rng.standard_normal((size, MAX_CRITERIA, EMBED_DIM)) * scale
        self.wrong_vec = rng.standard_normal((size, MAX_CRITERIA, EMBED_DIM)) * scale
        self.filler = np.zeros((size, EMBED_DIM))
        self.stated = np.zeros((size, MAX_CRITERIA), dtype=bool)
        self.t = 0
        self._answer(np.full(size, FOLLOW_UP))
        self.summary = self._embed()
        self.score = self._judge()
        self.delta = np.full(size, DELTA_WHEN_UNDEFINED)
        self.cos = np.full(size, COS_WHEN_UNDEFINED)
        return state_batch(self.score, None, None, np.zeros(size, dtype=np.int64), 0, self.turns)

    # -- one turn -------------------------------------------------------------------------------------
    def step(self, actions: np.ndarray) -> StepResult:
        """Ask the next question of each session: ``actions[b]`` is 0 (follow-up) or 1 (challenge).

        Returns:
            The states after the new turn, the rewards of ``actions`` and the turn's s, Δs and cos.

        Raises:
            RuntimeError: the sessions are over (call :meth:`reset`).
        """
        if self.t < 0 or self.t >= self.turns - 1:
            raise RuntimeError("no session in progress: call reset()")
        actions = np.asarray(actions, dtype=np.int64)
        self.t += 1
        self._answer(actions)
        summary = self._embed()
        cos = _cosine(summary, self.summary)
        score = self._judge()
        delta = score - self.score
        rewards = self.reward(actions, delta, cos, self.delta, self.cos)
        self.summary, self.score, self.delta, self.cos = summary, score, delta, cos
        prev = np.where(actions == CHALLENGE, PREV_ACTIONS.index("challenge"), PREV_ACTIONS.index("follow-up"))
        states = state_batch(score, delta, cos, prev, self.t, self.turns)
        return StepResult(states, rewards, score, delta, cos, self.t == self.turns - 1)

    def _answer(self, actions: np.ndarray) -> None:
        """Update what each target has stated. All random numbers are drawn whatever the actions."""
        rng, size, p = self.rng, self.size, self.params
        u_draw = rng.random((size, MAX_CRITERIA))
        u_hold = rng.random(size)
        u_retract = rng.random((size, MAX_CRITERIA))
        keys = rng.random((size, MAX_CRITERIA))
        noise = rng.standard_normal((size, EMBED_DIM)) / np.sqrt(EMBED_DIM)

        rate = np.where(self.belief == _KNOWN, p["knowledge"][:, None], WRONG_DRAW)
        follow = actions == FOLLOW_UP
        drawn = follow[:, None] & (self.belief != _UNKNOWN) & ~self.stated & (u_draw < rate)
        self.stated |= drawn

        gives_way = (actions == CHALLENGE) & (u_hold >= p["stability"])
        stated_wrong = self.stated & (self.belief == _WRONG)
        partly_wrong = stated_wrong.any(axis=1)
        corrects = gives_way & partly_wrong
        self.belief[corrects[:, None] & stated_wrong] = _KNOWN

        retracts = gives_way & ~partly_wrong
        covered = self.stated & (self.belief == _KNOWN)
        retract = retracts[:, None] & covered & (u_retract < RETRACT_SHARE)
        need_one = retracts & covered.any(axis=1) & ~retract.any(axis=1)
        pick = np.argmax(np.where(covered, keys, -1.0), axis=1)
        retract[need_one, pick[need_one]] = True
        self.stated &= ~retract

        self.filler += p["verbosity"][:, None] * noise

    def _embed(self) -> np.ndarray:
        right = (self.stated & (self.belief == _KNOWN)).astype(np.float64)
        wrong = (self.stated & (self.belief == _WRONG)).astype(np.float64)
        return (self.topic + np.einsum("bn,bnd->bd", right, self.right_vec)
                + np.einsum("bn,bnd->bd", wrong, self.wrong_vec) + self.filler)

    def _judge(self) -> np.ndarray:
        covered = self.stated & (self.belief == _KNOWN)
        misread = self.rng.random((self.size, MAX_CRITERIA)) < self.params["judge_error"][:, None]
        read = (covered ^ misread) & self.valid
        return read.sum(axis=1) / self.n


def _cosine(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    num = np.einsum("bd,bd->b", a, b)
    den = np.linalg.norm(a, axis=1) * np.linalg.norm(b, axis=1)
    return num / np.maximum(den, 1e-12)


@dataclass
class Episodes:
    """Complete simulated sessions (arrays over ``B`` episodes)."""

    states: np.ndarray
    """float32 [B, T, 7]: state after each turn."""
    actions: np.ndarray
    """int64 [B, T − 1]: action chosen from the state after turn t (produces turn t + 1)."""
    probs: np.ndarray
    """float32 [B, T − 1, 2]: the policy's probabilities at each decision."""
    rewards: np.ndarray
    """float64 [B, T − 1]: reward of each action."""
    scores: np.ndarray
    """float64 [B, T]: s_t."""
    deltas: np.ndarray
    """float64 [B, T]: Δs_t (NaN at t = 0)."""

    @property
    def returns(self) -> np.ndarray:
        """Undiscounted return of each episode, [B]."""
        return self.rewards.sum(axis=1)


def run_episodes(params: Mapping[str, np.ndarray], act: Callable[[np.ndarray], tuple[np.ndarray, np.ndarray]],
                 rng: np.random.Generator, turns: int = TURNS, reward: RewardSpec = RewardSpec()) -> Episodes:
    """Simulate one full session per entry of ``params`` with a policy.

    Args:
        params: ``name -> array [B]`` of target parameters.
        act: maps states [B, 7] to (action indices [B], probabilities [B, 2]).
        rng: drives the simulator (not the policy).
        turns: ``T``.
        reward: the reward definition.

    Returns:
        The recorded :class:`Episodes`.
    """
    sim = SimBatch(params, rng, turns, reward)
    size = sim.size
    states = np.zeros((size, turns, N_FEATURES), dtype=np.float32)
    actions = np.zeros((size, turns - 1), dtype=np.int64)
    probs = np.zeros((size, turns - 1, len(ACTIONS)), dtype=np.float32)
    rewards = np.zeros((size, turns - 1))
    scores = np.zeros((size, turns))
    deltas = np.full((size, turns), np.nan)
    states[:, 0] = sim.reset()
    scores[:, 0] = sim.score
    for t in range(turns - 1):
        a, pr = act(states[:, t])
        actions[:, t], probs[:, t] = a, pr
        res = sim.step(a)
        states[:, t + 1], rewards[:, t] = res.states, res.rewards
        scores[:, t + 1], deltas[:, t + 1] = res.scores, res.deltas
    return Episodes(states, actions, probs, rewards, scores, deltas)
