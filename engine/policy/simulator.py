"""A simulator of interview sessions, the training and evaluation environment of the policy.

One episode is one adaptive session (DESIGN.md, "Protocols/adaptive") of ``T = 6`` turns over an
item with ``n`` criteria (all weights 1, no deduction points; ``n`` uniform in 4..12 for training).
Turn 0 answers the opening question; the policy then picks the type of each of the ``T − 1`` further
turns.

The simulated target has ground-truth parameters (:class:`TargetParams`):

- **knowledge** ``k``: each criterion is one the target *knows* with probability ``k``.
- **wrongness** ``w``: of the criteria it does not know, the target holds a *wrong* belief about a
  share ``w``; a wrong claim does not cover its criterion (the target is then *partly wrong*).
- **stability** ``σ``: under a challenge the target holds its answer with probability ``σ``.
  Otherwise it gives way on the claims the challenge puts *at stake* (below): when a wrong claim is
  among them it corrects itself (every wrong claim at stake becomes the correct one, the score
  rises); else it retracts claims (each covered criterion at stake with probability 1/2, at least
  one; the score falls). A retracted criterion is still known and a later question may draw it
  out again.
- **verbosity** ``v``: every answer adds off-rubric content of size ``v`` to the running summary,
  which moves the summary embedding and so lowers ``cos``.
- **judge_error** ``ε``: the judge misreads each criterion of each turn independently with
  probability ``ε`` (a covered criterion read as missing or the reverse).
- **windowed** ``p_w``: the share of the target's items that ask **one criterion per question**
  (the engine's SQuAD windows and other activated static items: the opening question asks the
  first criterion, each follow-up the next one not asked yet, then a random criterion not covered
  again).
  The target states the asked criterion's claim if it has a belief about it (right or wrong) and
  nothing otherwise. The other items are **open** (generated benchmarks): any question that is not
  a challenge draws out each believed criterion not stated yet, with probability ``k`` for a known
  one and ``WRONG_DRAW`` = 1/2 for a wrong belief (a target that knows little still asserts its
  wrong beliefs). So in open items ``k`` is both the share of knowledge and the chance that a
  follow-up draws a known criterion out.
- **narrow** ``p_n``: the share of sessions in which a challenge puts at stake only the claims of
  the target's **last substantive answer** (the most recent answer that stated a claim), as the
  engine's offline kernel does (it contests a claim of the last answer and, on a retraction, drops
  that answer from the summary). In the other sessions every stated claim is at stake (an LLM
  judge re-reading the whole conversation).

``cos`` is computed, not invented: the summary is embedded as the topic vector plus one random
vector per stated claim (a wrong claim has its own vector, different from the correct one) plus the
accumulated off-rubric content, in ``EMBED_DIM`` dimensions; ``cos_t`` is the cosine of the
embeddings after turns ``t`` and ``t − 1``.

Besides what the engine observes (s, Δs, cos), the simulator keeps the claim bookkeeping the
``measure`` reward and the evaluation's yardstick are computed on (:class:`Ledger`): the share of
criteria the target knew at the start (``κ``), which criteria were ever covered, which claims a
challenge has already put at stake ("tested").

Parameters are drawn uniformly from :data:`PARAM_RANGES` (one fresh target per training episode).
:func:`heldout_targets` draws in-range evaluation targets from their own seed and
:func:`shifted_targets` draws targets **outside** the training ranges (:data:`SHIFT_RANGES`, with
items of :data:`SHIFT_CRITERIA` criteria); the trainer never uses those streams.

Calibration from logged sessions (``engine/policy/calibrate.py``) replaces the uniform ranges by
parameters fitted per target from the logged turns.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
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
from engine.policy.reward import RewardSpec, Transition

TURNS = 6
"""T: turns per session (the paper's setting); the policy makes T − 1 decisions."""

MIN_CRITERIA = 4
MAX_CRITERIA = 12
CRITERIA: tuple[int, int] = (MIN_CRITERIA, MAX_CRITERIA)
"""Criteria per item in training and in-range evaluation (uniform, both ends included)."""

EMBED_DIM = 16
RETRACT_SHARE = 0.5
"""Chance that a covered criterion at stake is retracted when an unstable target gives way."""
WRONG_DRAW = 0.5
"""Chance that a question on an open item draws out a wrong belief not stated yet."""

HELDOUT_SEED = 7_000_001
"""Seed of the in-range held-out evaluation targets; never used by training."""
SHIFT_SEED = 7_000_011
"""Seed of the shifted evaluation targets; never used by training."""
VALIDATION_SEED = 7_000_021
"""Seed of the validation targets (reward selection); neither training nor the reported sets use it."""

PARAM_RANGES: dict[str, tuple[float, float]] = {
    "knowledge": (0.1, 0.9),
    "stability": (0.2, 0.95),
    "verbosity": (0.1, 0.9),
    "wrongness": (0.0, 0.5),
    "judge_error": (0.0, 0.05),
    "windowed": (0.0, 1.0),
    "narrow": (0.0, 1.0),
}
"""Uniform ranges of the simulated targets' parameters in training (written into the model card)."""

SHIFT_RANGES: dict[str, tuple[float, float]] = {
    "knowledge": (0.0, 1.0),
    "stability": (0.0, 1.0),
    "verbosity": (0.9, 1.5),
    "wrongness": (0.5, 1.0),
    "judge_error": (0.05, 0.12),
    "windowed": (0.0, 1.0),
    "narrow": (0.0, 1.0),
}
"""Ranges of the shifted evaluation set: every nuisance parameter (verbosity, wrongness, judge error)
lies outside its training range, knowledge and stability extend to both ends of [0, 1] (beyond the
training ranges), and items have :data:`SHIFT_CRITERIA` criteria."""

SHIFT_CRITERIA: tuple[int, int] = (13, 20)
"""Criteria per item in the shifted set (training has 4..12)."""

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
    windowed: float = 0.0
    narrow: float = 0.0

    def as_dict(self) -> dict[str, float]:
        """The parameters as a plain dict (JSON-ready)."""
        return {k: float(v) for k, v in asdict(self).items()}


PARAM_NAMES: tuple[str, ...] = tuple(f.name for f in fields(TargetParams))
PARAM_DEFAULTS: dict[str, float] = {"windowed": 0.0, "narrow": 0.0}
"""Values used when a parameter mapping lacks one (files written before it existed)."""


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


def params_arrays(targets: Sequence[TargetParams], repeat: int = 1) -> dict[str, np.ndarray]:
    """Stack targets into parameter arrays, each target repeated ``repeat`` times in a row."""
    return {name: np.repeat(np.array([getattr(t, name) for t in targets], dtype=np.float64), repeat)
            for name in PARAM_NAMES}


def draw_targets(seed: int, count: int, ranges: Mapping[str, tuple[float, float]] = PARAM_RANGES
                 ) -> list[TargetParams]:
    """``count`` targets drawn uniformly from ``ranges`` with their own generator seeded by ``seed``."""
    drawn = sample_params(np.random.default_rng(seed), count, ranges)
    return [TargetParams(**{name: float(drawn[name][i]) for name in PARAM_NAMES}) for i in range(count)]


def heldout_targets(count: int = 20) -> list[TargetParams]:
    """The in-range held-out evaluation targets: ``count`` draws from :data:`PARAM_RANGES` with
    :data:`HELDOUT_SEED`. Deterministic; the trainer never draws from this stream."""
    return draw_targets(HELDOUT_SEED, count)


def shifted_targets(count: int = 20) -> list[TargetParams]:
    """The shifted evaluation targets: ``count`` draws from :data:`SHIFT_RANGES` with
    :data:`SHIFT_SEED` (items of :data:`SHIFT_CRITERIA` criteria when simulated)."""
    return draw_targets(SHIFT_SEED, count, SHIFT_RANGES)


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


@dataclass
class Ledger:
    """Claim bookkeeping of a batch of sessions (what the engine cannot observe)."""

    known_share: np.ndarray
    """float64 [B]: κ, the share of the item's criteria the target knew at the start."""
    stake_untested: np.ndarray
    """float64 [B]: of the last turn, if a challenge: covered claims it put at stake for the first
    time in the session, as a share of ``n`` (0 for a follow-up)."""
    stake: np.ndarray
    """float64 [B]: of the last turn, if a challenge: covered claims it put at stake, share of ``n``."""
    new_covered: np.ndarray
    """float64 [B]: of the last turn: criteria covered for the first time in the session, share of ``n``."""


class SimBatch:
    """``B`` simulated sessions run in lockstep (they all have ``T`` turns).

    The random numbers drawn at each turn do not depend on the actions, so two policies run with
    the same seed face the same targets, items and luck (common random numbers).
    """

    def __init__(self, params: Mapping[str, np.ndarray], rng: np.random.Generator, turns: int = TURNS,
                 reward: RewardSpec = RewardSpec(), criteria: tuple[int, int] = CRITERIA,
                 sizes: np.ndarray | None = None):
        """Args:
            params: ``name -> array [B]`` for every name in :data:`PARAM_NAMES` (``windowed`` and
                ``narrow`` default to 0 when absent).
            rng: the random generator driving items, answers and judge errors.
            turns: ``T``.
            reward: the reward definition (default: ``outcome`` with τ = 0.1, λ = 0.5).
            criteria: ``(min, max)`` criteria per item, drawn uniformly.
            sizes: criteria of each episode's item instead of drawing them (replaying logged
                sessions); entries < 1 are drawn from ``criteria``.
        """
        if turns < 2:
            raise ValueError(f"a session needs at least 2 turns, got {turns}")
        if not 1 <= criteria[0] <= criteria[1]:
            raise ValueError(f"criteria range {criteria} must satisfy 1 <= min <= max")
        size = np.asarray(params["knowledge"]).shape[0]
        self.params = {name: np.asarray(params[name], dtype=np.float64) if name in params
                       else np.full(size, PARAM_DEFAULTS[name]) for name in PARAM_NAMES}
        self.size = size
        self.rng = rng
        self.turns = turns
        self.reward = reward
        self.criteria = (int(criteria[0]), int(criteria[1]))
        self.sizes = None if sizes is None else np.asarray(sizes, dtype=np.int64)
        if self.sizes is not None and self.sizes.shape != (size,):
            raise ValueError(f"sizes has shape {self.sizes.shape}, expected ({size},)")
        self.width = max(self.criteria[1], int(self.sizes.max()) if self.sizes is not None else 0)
        self.t = -1

    # -- episode start ----------------------------------------------------------------------------
    def reset(self) -> np.ndarray:
        """Start new sessions: draw items and beliefs, answer the opening question (turn 0).

        Returns:
            float32 [B, 7]: the states after turn 0.
        """
        rng, size, p, width = self.rng, self.size, self.params, self.width
        self.n = rng.integers(self.criteria[0], self.criteria[1] + 1, size=size)
        if self.sizes is not None:
            self.n = np.where(self.sizes >= 1, self.sizes, self.n)
        self.valid = np.arange(width)[None, :] < self.n[:, None]
        u_known = rng.random((size, width))
        u_wrong = rng.random((size, width))
        self.windowed = rng.random(size) < p["windowed"]
        self.narrow = rng.random(size) < p["narrow"]
        belief = np.full((size, width), _UNKNOWN, dtype=np.int8)
        belief[u_wrong < p["wrongness"][:, None]] = _WRONG
        belief[u_known < p["knowledge"][:, None]] = _KNOWN
        belief[~self.valid] = _UNKNOWN
        self.belief = belief
        self.known_share = (belief == _KNOWN).sum(axis=1) / self.n
        scale = 1.0 / np.sqrt(EMBED_DIM)
        self.topic = rng.standard_normal((size, EMBED_DIM)) * scale
        self.right_vec = rng.standard_normal((size, width, EMBED_DIM)) * scale
        self.wrong_vec = rng.standard_normal((size, width, EMBED_DIM)) * scale
        self.filler = np.zeros((size, EMBED_DIM))
        self.stated = np.zeros((size, width), dtype=bool)
        self.asked = np.zeros((size, width), dtype=bool)
        self.last_claims = np.zeros((size, width), dtype=bool)
        self.ever_covered = np.zeros((size, width), dtype=bool)
        self.tested = np.zeros((size, width), dtype=bool)
        self.t = 0
        self._answer(np.full(size, FOLLOW_UP))
        self.ever_covered |= self._covered()
        self.summary = self._embed()
        self.score = self._judge()
        self.delta = np.full(size, DELTA_WHEN_UNDEFINED)
        self.cos = np.full(size, COS_WHEN_UNDEFINED)
        self.ledger = Ledger(self.known_share, np.zeros(size), np.zeros(size), self.ever_covered.sum(1) / self.n)
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
        first = np.full(self.size, self.t == 0)
        self.t += 1
        at_stake = self._answer(actions)
        covered = self._covered()
        new_covered = (covered & ~self.ever_covered).sum(axis=1) / self.n
        self.ever_covered |= covered
        stake_share = at_stake.sum(axis=1) / self.n
        untested = (at_stake & ~self.tested).sum(axis=1) / self.n
        self.tested |= at_stake
        summary = self._embed()
        cos = _cosine(summary, self.summary)
        score = self._judge()
        delta = score - self.score
        self.ledger = Ledger(self.known_share, untested, stake_share, new_covered)
        rewards = self.reward.compute(Transition(
            action=actions, delta=delta, cos=cos, delta_t=self.delta, cos_t=self.cos, first=first,
            untested=untested, new_covered=new_covered, stake=stake_share))
        self.summary, self.score, self.delta, self.cos = summary, score, delta, cos
        prev = np.where(actions == CHALLENGE, PREV_ACTIONS.index("challenge"), PREV_ACTIONS.index("follow-up"))
        states = state_batch(score, delta, cos, prev, self.t, self.turns)
        return StepResult(states, rewards, score, delta, cos, self.t == self.turns - 1)

    def _covered(self) -> np.ndarray:
        return self.stated & (self.belief == _KNOWN)

    def _answer(self, actions: np.ndarray) -> np.ndarray:
        """Update what each target has stated; return the covered claims each challenge put at stake
        (as they were before the answer). All random numbers are drawn whatever the actions."""
        rng, size, p, width = self.rng, self.size, self.params, self.width
        u_draw = rng.random((size, width))
        u_hold = rng.random(size)
        u_retract = rng.random((size, width))
        keys = rng.random((size, width))
        noise = rng.standard_normal((size, EMBED_DIM)) / np.sqrt(EMBED_DIM)

        follow = actions == FOLLOW_UP
        believed = self.belief != _UNKNOWN
        # open items: every believed claim not stated yet may come out
        rate = np.where(self.belief == _KNOWN, p["knowledge"][:, None], WRONG_DRAW)
        drawn_open = believed & ~self.stated & (u_draw < rate)
        # windowed items: the next criterion not asked yet, else a random one not covered, asked again
        unasked = self.valid & ~self.asked
        uncovered = self.valid & ~self._covered()
        again = np.argmax(np.where(uncovered, keys, -1.0), axis=1)  # a random criterion not covered
        pick = np.where(unasked.any(axis=1), np.argmax(unasked, axis=1), again)
        has_question = unasked.any(axis=1) | uncovered.any(axis=1)
        asked_now = np.zeros((size, width), dtype=bool)
        asked_now[np.arange(size), pick] = has_question
        drawn_window = asked_now & believed & ~self.stated
        windowed = self.windowed[:, None]
        drawn = follow[:, None] & np.where(windowed, drawn_window, drawn_open)
        self.asked |= follow[:, None] & windowed & asked_now
        self.stated |= drawn
        substantive = drawn.any(axis=1)
        self.last_claims[substantive] = drawn[substantive]

        challenge = actions == CHALLENGE
        stake = challenge[:, None] & self.stated & np.where(self.narrow[:, None], self.last_claims, True)
        covered_stake = stake & (self.belief == _KNOWN)
        gives_way = challenge & (u_hold >= p["stability"])
        wrong_at_stake = stake & (self.belief == _WRONG)
        partly_wrong = wrong_at_stake.any(axis=1)
        corrects = gives_way & partly_wrong
        self.belief[corrects[:, None] & wrong_at_stake] = _KNOWN

        retracts = gives_way & ~partly_wrong
        covered = stake & (self.belief == _KNOWN)
        retract = retracts[:, None] & covered & (u_retract < RETRACT_SHARE)
        need_one = retracts & covered.any(axis=1) & ~retract.any(axis=1)
        pick_one = np.argmax(np.where(covered, keys, -1.0), axis=1)
        retract[need_one, pick_one[need_one]] = True
        self.stated &= ~retract

        self.filler += p["verbosity"][:, None] * noise
        return covered_stake

    def _embed(self) -> np.ndarray:
        right = (self.stated & (self.belief == _KNOWN)).astype(np.float64)
        wrong = (self.stated & (self.belief == _WRONG)).astype(np.float64)
        return (self.topic + np.einsum("bn,bnd->bd", right, self.right_vec)
                + np.einsum("bn,bnd->bd", wrong, self.wrong_vec) + self.filler)

    def _judge(self) -> np.ndarray:
        covered = self._covered()
        misread = self.rng.random((self.size, self.width)) < self.params["judge_error"][:, None]
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
    known_share: np.ndarray | None = None
    """float64 [B]: κ, the share of each item's criteria the target knew (ground truth)."""
    stake: np.ndarray | None = None
    """float64 [B, T − 1]: covered claims each challenge put at stake, share of n (0 for follow-ups)."""

    @property
    def returns(self) -> np.ndarray:
        """Undiscounted return of each episode, [B]."""
        return self.rewards.sum(axis=1)


def run_episodes(params: Mapping[str, np.ndarray], act: Callable[[np.ndarray], tuple[np.ndarray, np.ndarray]],
                 rng: np.random.Generator, turns: int = TURNS, reward: RewardSpec = RewardSpec(),
                 criteria: tuple[int, int] = CRITERIA, sizes: np.ndarray | None = None) -> Episodes:
    """Simulate one full session per entry of ``params`` with a policy.

    Args:
        params: ``name -> array [B]`` of target parameters.
        act: maps states [B, 7] to (action indices [B], probabilities [B, 2]).
        rng: drives the simulator (not the policy).
        turns: ``T``.
        reward: the reward definition.
        criteria: ``(min, max)`` criteria per item.
        sizes: criteria of each episode's item instead of drawing them (see :class:`SimBatch`).

    Returns:
        The recorded :class:`Episodes`.
    """
    sim = SimBatch(params, rng, turns, reward, criteria, sizes)
    size = sim.size
    states = np.zeros((size, turns, N_FEATURES), dtype=np.float32)
    actions = np.zeros((size, turns - 1), dtype=np.int64)
    probs = np.zeros((size, turns - 1, len(ACTIONS)), dtype=np.float32)
    rewards = np.zeros((size, turns - 1))
    scores = np.zeros((size, turns))
    deltas = np.full((size, turns), np.nan)
    stake = np.zeros((size, turns - 1))
    states[:, 0] = sim.reset()
    scores[:, 0] = sim.score
    for t in range(turns - 1):
        a, pr = act(states[:, t])
        actions[:, t], probs[:, t] = a, pr
        res = sim.step(a)
        states[:, t + 1], rewards[:, t] = res.states, res.rewards
        scores[:, t + 1], deltas[:, t + 1] = res.scores, res.deltas
        stake[:, t] = sim.ledger.stake
    return Episodes(states, actions, probs, rewards, scores, deltas, sim.known_share.copy(), stake)
