"""Calibrate the simulator from logged sessions: fit target parameters per target from the store.

How (:func:`calibrate_store` on a store file, e.g. the validity benchmark's; ``bench/policy.py
calibrate --store viva.db``, then ``bench/policy.py train --targets FILE``):

1. Read every finished or interrupted adaptive session with at least two answered turns
   (:func:`engine.policy.logs.load_sessions`), grouped by target: turn by turn the score ``s_t``,
   Δs, cos, the action that produced the turn, the item's number of scored criteria and whether
   it is an activated static item (one criterion per question: ``windowed``, then taken as known
   instead of fitted).
2. Summarise a target by statistics the simulator's parameters drive: mean ``s_0``, mean Δs after
   follow-ups, the share of follow-ups that raise the score and the mean rise when they do
   (knowledge ``k``; one criterion per question in windowed items gives small, single-step rises),
   the shares of challenge turns with Δs < 0 and Δs > 0 and their mean |Δs| (stability ``σ``,
   wrongness ``w``), the share of the score a falling challenge removes (all claims at stake or
   only the last answer's: ``narrow``), the mean ``1 − cos`` after follow-ups (verbosity ``v``).
3. Fit by simulation: for a candidate parameter set, simulate sessions that *replay the logged action
   sequences* on items of the logged sizes (so the fit compares like with like whatever policy or
   human chose them), compute the same statistics, and minimise the squared distance by coordinate
   search over grids (``k`` and ``σ`` in steps of 0.05, ``w`` and ``v`` in steps of 0.1, the judge
   error ``ε`` at 5 points, ``windowed`` and ``narrow`` at 0, 1/2, 1; two rounds, starting from
   the best point of a coarse joint grid over ``k``, ``σ``, ``w``, ``windowed`` and ``narrow``).
   Each statistic's misfit is divided by its bootstrap standard error over the target's sessions,
   so a well-measured statistic weighs more than a noisy one. ``ε`` is only weakly identified (it
   shows as small score moves of a target that holds); treat its fit as rough.
4. ``train --targets FILE`` then draws each training episode's target from the fitted ones, each
   parameter jittered uniformly by ±0.05 (clipped to :data:`BOUNDS`, the parameters' meaningful
   ranges, not the training ranges: a fitted target may lie outside them).

Turns whose action is neither follow-up nor challenge (an evaluator's own question) are replayed
as follow-ups and left out of the statistics. Targets with fewer than ``min_sessions`` sessions
are not fitted.
"""

from __future__ import annotations

import itertools
import json
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from engine.policy.features import ACTIONS
from engine.policy.logs import LoggedSession, load_sessions, open_store
from engine.policy.simulator import (
    PARAM_DEFAULTS,
    PARAM_NAMES,
    PARAM_RANGES,
    SimBatch,
    TargetParams,
    params_arrays,
)
from engine.store import Store

FOLLOW_UP = ACTIONS.index("follow-up")
CHALLENGE = ACTIONS.index("challenge")
STAT_NAMES = ("s0", "follow_up_delta", "follow_up_gain_share", "follow_up_gain_size", "challenge_neg_share",
              "challenge_pos_share", "challenge_abs_delta", "challenge_drop_ratio", "follow_up_novelty")
BOUNDS: dict[str, tuple[float, float]] = {
    "knowledge": (0.0, 1.0), "stability": (0.0, 1.0), "verbosity": (0.0, 2.0), "wrongness": (0.0, 1.0),
    "judge_error": (0.0, 0.5), "windowed": (0.0, 1.0), "narrow": (0.0, 1.0),
}
"""Meaningful range of each parameter (fitted values and jittered draws stay inside)."""
REPLAYS_PER_SESSION = 8
FIT_SEED = 11


@dataclass
class Fit:
    """Fitted parameters of one target with the statistics they were fitted to."""

    target: str
    params: TargetParams
    sessions: int
    observed: dict[str, float]
    simulated: dict[str, float]
    loss: float

    def as_dict(self) -> dict:
        """JSON-ready dict."""
        return {"target": self.target, "params": self.params.as_dict(), "sessions": self.sessions,
                "observed": self.observed, "simulated": self.simulated, "loss": self.loss}


def statistics(scores: np.ndarray, deltas: np.ndarray, cos: np.ndarray, actions: np.ndarray,
               mask: np.ndarray) -> dict[str, float]:
    """The fitting statistics of a set of sessions given as padded arrays [S, T] (``mask`` marks
    real turns; ``actions[:, t]`` produced turn ``t``)."""
    fu = mask & (actions == FOLLOW_UP)
    ch = mask & (actions == CHALLENGE)
    ch_d = deltas[ch]

    def mean(values: np.ndarray) -> float:
        values = values[np.isfinite(values)]
        return float(values.mean()) if values.size else float("nan")

    fu_d = deltas[fu]
    fu_d = fu_d[np.isfinite(fu_d)]
    before = np.concatenate([np.full((scores.shape[0], 1), np.nan), scores[:, :-1]], axis=1)
    falls = ch & (deltas < 0) & (before > 0)
    return {
        "s0": mean(scores[:, 0]),
        "follow_up_delta": mean(fu_d),
        "follow_up_gain_share": float((fu_d > 0).mean()) if fu_d.size else float("nan"),
        "follow_up_gain_size": mean(fu_d[fu_d > 0]),
        "challenge_neg_share": float((ch_d < 0).mean()) if ch_d.size else float("nan"),
        "challenge_pos_share": float((ch_d > 0).mean()) if ch_d.size else float("nan"),
        "challenge_abs_delta": mean(np.abs(ch_d)),
        "challenge_drop_ratio": mean(-deltas[falls] / before[falls]),
        "follow_up_novelty": mean(1.0 - cos[fu]),
    }


def _sizes(sessions: list[LoggedSession]) -> np.ndarray:
    return np.array([s.criteria for s in sessions], dtype=np.int64)


def _known_windowed(sessions: list[LoggedSession]) -> np.ndarray:
    """Per session 1.0 / 0.0 when the item's kind is known from the store, NaN otherwise."""
    return np.array([np.nan if s.windowed is None else float(s.windowed) for s in sessions])


def _pad(sessions: list[LoggedSession]) -> tuple[np.ndarray, ...]:
    turns = max(len(s.scores) for s in sessions)
    count = len(sessions)
    scores = np.full((count, turns), np.nan)
    deltas = np.full((count, turns), np.nan)
    cos = np.full((count, turns), np.nan)
    actions = np.full((count, turns), -1, dtype=np.int64)
    mask = np.zeros((count, turns), dtype=bool)
    for i, s in enumerate(sessions):
        n = len(s.scores)
        scores[i, :n], deltas[i, :n], cos[i, :n], actions[i, :n] = s.scores, s.deltas, s.cos, s.actions
        mask[i, :n] = True
    return scores, deltas, cos, actions, mask


def _replay(params: TargetParams, actions: np.ndarray, mask: np.ndarray, sizes: np.ndarray,
            windowed: np.ndarray, seed: int) -> dict[str, float]:
    """Statistics of simulated sessions that replay the logged action sequences on items of the
    logged sizes and kinds (unknown sizes are drawn from the training range, unknown kinds follow
    the candidate's ``windowed``)."""
    acts = np.repeat(actions, REPLAYS_PER_SESSION, axis=0)
    msk = np.repeat(mask, REPLAYS_PER_SESSION, axis=0)
    count, turns = acts.shape
    arrays = params_arrays([params], repeat=count)
    known = np.repeat(windowed, REPLAYS_PER_SESSION)
    arrays["windowed"] = np.where(np.isnan(known), arrays["windowed"], known)
    sim = SimBatch(arrays, np.random.default_rng(seed), turns=max(turns, 2),
                   sizes=np.repeat(sizes, REPLAYS_PER_SESSION))
    sim.reset()
    scores = np.full((count, turns), np.nan)
    deltas = np.full((count, turns), np.nan)
    cos = np.full((count, turns), np.nan)
    scores[:, 0] = sim.score
    for t in range(1, turns):
        res = sim.step(np.where(acts[:, t] == CHALLENGE, CHALLENGE, FOLLOW_UP))
        scores[:, t], deltas[:, t], cos[:, t] = res.scores, res.deltas, res.cos
    return statistics(scores, deltas, cos, acts, msk)


COARSE: dict[str, tuple[float, ...]] = {
    "knowledge": (0.2, 0.5, 0.8), "stability": (0.2, 0.5, 0.8), "wrongness": (0.1, 0.5, 0.9),
    "windowed": (0.0, 0.5, 1.0), "narrow": (0.0, 0.5, 1.0),
}
"""The coarse joint grid the coordinate search starts from."""
BOOTSTRAP = 40
MIN_SE = 0.01
MISSING_PENALTY = 4.0
"""Loss added for a statistic the logs show but a candidate's simulation never produces (2 SE, squared)."""


def statistic_errors(scores: np.ndarray, deltas: np.ndarray, cos: np.ndarray, actions: np.ndarray,
                     mask: np.ndarray, resamples: int = BOOTSTRAP) -> dict[str, float]:
    """Bootstrap standard error of each observed statistic (sessions resampled; seeded), at least
    :data:`MIN_SE`: the scale each statistic's misfit is measured in."""
    rng = np.random.default_rng(FIT_SEED)
    count = scores.shape[0]
    draws: dict[str, list[float]] = {name: [] for name in STAT_NAMES}
    for _ in range(resamples):
        idx = rng.integers(0, count, size=count)
        stats = statistics(scores[idx], deltas[idx], cos[idx], actions[idx], mask[idx])
        for name in STAT_NAMES:
            if np.isfinite(stats[name]):
                draws[name].append(stats[name])
    return {name: max(MIN_SE, float(np.std(v, ddof=1)) if len(v) > 1 else MIN_SE) for name, v in draws.items()}


def _loss(observed: Mapping[str, float], simulated: Mapping[str, float], scale: Mapping[str, float]) -> float:
    total = 0.0
    for name in STAT_NAMES:
        o, s = observed[name], simulated[name]
        if np.isfinite(o) and np.isfinite(s):
            total += ((o - s) / scale[name]) ** 2
        elif np.isfinite(o):
            total += MISSING_PENALTY
    return total


def fit_target(target: str, sessions: list[LoggedSession], rounds: int = 2) -> Fit:
    """Fit one target's parameters to its logged sessions (coordinate search, see module docstring).

    Args:
        target: the target's name (as in ``sessions.target``).
        sessions: its logged sessions.
        rounds: passes of the coordinate search.
    """
    scores, deltas, cos, actions, mask = _pad(sessions)
    sizes = _sizes(sessions)
    windowed = _known_windowed(sessions)
    observed = statistics(scores, deltas, cos, actions, mask)
    scale = statistic_errors(scores, deltas, cos, actions, mask)
    grids = {
        "knowledge": np.round(np.arange(0.05, 0.951, 0.05), 2),
        "stability": np.round(np.arange(0.05, 0.951, 0.05), 2),
        "wrongness": np.round(np.arange(0.0, 1.001, 0.1), 2),
        "verbosity": np.round(np.arange(0.1, 0.901, 0.1), 2),
        "judge_error": np.round(np.linspace(*PARAM_RANGES["judge_error"], 5), 4),
        "windowed": np.array([0.0, 0.5, 1.0]),
        "narrow": np.array([0.0, 0.5, 1.0]),
    }
    coarse = dict(COARSE)
    if not np.isnan(windowed).any():  # every item's kind is known: nothing to fit
        del grids["windowed"]
        coarse["windowed"] = (float(windowed.mean()),)
    current = {name: float(np.mean(PARAM_RANGES[name])) for name in PARAM_NAMES}
    best_loss, best_stats = float("inf"), observed
    # start from the best point of a coarse joint grid (the structure flags and wrongness change
    # which statistics knowledge and stability drive, so one coordinate at a time can stall)
    for k, sigma, w, win, nar in itertools.product(*coarse.values()):
        candidate = dict(current, knowledge=k, stability=sigma, wrongness=w, windowed=win, narrow=nar)
        stats = _replay(TargetParams(**candidate), actions, mask, sizes, windowed, FIT_SEED)
        loss = _loss(observed, stats, scale)
        if loss < best_loss - 1e-12:
            best_loss, best_stats, start = loss, stats, candidate
    current = start
    for _ in range(rounds):
        for name in grids:
            for value in grids[name]:
                candidate = dict(current, **{name: float(value)})
                stats = _replay(TargetParams(**candidate), actions, mask, sizes, windowed, FIT_SEED)
                loss = _loss(observed, stats, scale)
                if loss < best_loss - 1e-12:
                    best_loss, best_stats, current = loss, stats, candidate
    return Fit(target, TargetParams(**current), len(sessions), observed, best_stats, best_loss)


def calibrate_from_store(store: Store, min_sessions: int = 5) -> list[Fit]:
    """Fit every target of the store that has at least ``min_sessions`` logged adaptive sessions."""
    return [fit_target(target, sessions) for target, sessions in sorted(load_sessions(store).items())
            if len(sessions) >= min_sessions]


def calibrate_store(path: str | Path, min_sessions: int = 5) -> list[Fit]:
    """:func:`calibrate_from_store` on a store file (``viva.db``) or data home, whatever sessions it holds.

    Raises:
        FileNotFoundError: no store at ``path``.
    """
    store = open_store(path)
    try:
        return calibrate_from_store(store, min_sessions)
    finally:
        store.close()


def save_fits(fits: list[Fit], path: str | Path) -> None:
    """Write fits as JSON (the file ``viva policy train --targets`` reads)."""
    Path(path).write_text(json.dumps({"targets": [f.as_dict() for f in fits]}, indent=2) + "\n",
                          encoding="utf-8")


def load_fitted_targets(path: str | Path) -> list[TargetParams]:
    """The fitted targets of a file written by :func:`save_fits`.

    Raises:
        ValueError: the file has no targets or a target lacks a parameter.
    """
    data = json.loads(Path(path).read_text(encoding="utf-8"))
    targets = []
    for entry in data.get("targets", []):
        params = entry.get("params", {})
        missing = [n for n in PARAM_NAMES if n not in params and n not in PARAM_DEFAULTS]
        if missing:
            raise ValueError(f"{path}: target {entry.get('target')!r} lacks {', '.join(missing)}")
        targets.append(TargetParams(**{n: float(params.get(n, PARAM_DEFAULTS.get(n, 0.0))) for n in PARAM_NAMES}))
    if not targets:
        raise ValueError(f"{path}: no fitted targets")
    return targets


def fitted_sampler(targets: list[TargetParams], jitter: float = 0.05):
    """A parameter sampler for :func:`engine.policy.ppo.train` drawing from fitted targets.

    Each episode takes a fitted target uniformly at random and moves every parameter by a uniform
    amount in ``[−jitter, +jitter]``, clipped to :data:`BOUNDS`.
    """
    base = params_arrays(targets)

    def sample(rng: np.random.Generator, count: int) -> dict[str, np.ndarray]:
        pick = rng.integers(0, len(targets), size=count)
        out = {}
        for name in PARAM_NAMES:
            low, high = BOUNDS[name]
            out[name] = np.clip(base[name][pick] + rng.uniform(-jitter, jitter, size=count), low, high)
        return out

    return sample
