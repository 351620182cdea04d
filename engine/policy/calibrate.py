"""Calibrate the simulator from logged sessions: fit target parameters per target from the store.

How (``viva policy calibrate``, then ``viva policy train --targets FILE``):

1. Read every finished or interrupted adaptive session with at least two answered turns from the
   ``sessions`` and ``turns`` tables, grouped by ``sessions.target``. For each session keep, turn by
   turn, the score ``s_t``, Δs, cos and the action that produced the turn (``turns.action``).
2. Summarise a target by statistics the simulator's parameters drive: mean ``s_0`` and mean Δs after
   follow-ups (knowledge ``k``), the shares of challenge turns with Δs < 0 and Δs > 0 and their mean
   |Δs| (stability ``σ`` and wrongness ``w``), the mean ``1 − cos`` after follow-ups (verbosity ``v``).
3. Fit by simulation: for a candidate parameter set, simulate sessions that *replay the logged action
   sequences* (so the fit compares like with like whatever policy or human chose them), compute the
   same statistics, and minimise the squared distance by coordinate search over grids (``k`` and
   ``σ`` in steps of 0.05, ``w`` and ``v`` in steps of 0.1, the judge error ``ε`` at 5 points of its
   range; two rounds, starting from the middle of every range). ``ε`` is only weakly identified
   (it shows as small score moves of a target that holds); treat its fit as rough.
4. ``train --targets FILE`` then draws each training episode's target from the fitted ones, each
   parameter jittered uniformly by ±0.05 (clipped to the simulator's ranges).

Turns whose action is neither follow-up nor challenge (an evaluator's own question) are replayed
as follow-ups and left out of the statistics. Targets with fewer than ``min_sessions`` sessions
are not fitted.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from engine.policy.features import ACTIONS
from engine.policy.simulator import (
    PARAM_NAMES,
    PARAM_RANGES,
    SimBatch,
    TargetParams,
    params_arrays,
)
from engine.store import Store

FOLLOW_UP = ACTIONS.index("follow-up")
CHALLENGE = ACTIONS.index("challenge")
STAT_NAMES = ("s0", "follow_up_delta", "challenge_neg_share", "challenge_pos_share",
              "challenge_abs_delta", "follow_up_novelty")
REPLAYS_PER_SESSION = 8
FIT_SEED = 11


@dataclass
class LoggedSession:
    """One logged session: per turn ``t`` the score, Δs, cos and the producing action (−1 at t = 0 or
    for an action that is neither follow-up nor challenge)."""

    scores: np.ndarray
    deltas: np.ndarray
    cos: np.ndarray
    actions: np.ndarray


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


def load_sessions(store: Store) -> dict[str, list[LoggedSession]]:
    """Logged adaptive sessions grouped by target (see the module docstring for which ones)."""
    rows = store.query(
        "SELECT s.id AS session, s.target, t.idx, t.action, t.score, t.delta, t.cos "
        "FROM sessions s JOIN turns t ON t.session_id = s.id "
        "WHERE s.protocol = 'adaptive' AND s.status IN ('finished', 'interrupted') "
        "AND t.answer IS NOT NULL AND t.score IS NOT NULL ORDER BY s.id, t.idx"
    )
    grouped: dict[int, list[dict]] = {}
    targets: dict[int, str] = {}
    for r in rows:
        grouped.setdefault(r["session"], []).append(r)
        targets[r["session"]] = r["target"]
    out: dict[str, list[LoggedSession]] = {}
    for sid, turns in grouped.items():
        if len(turns) < 2:
            continue
        scores = np.array([t["score"] for t in turns], dtype=np.float64)
        deltas = np.array([np.nan if t["delta"] is None else t["delta"] for t in turns], dtype=np.float64)
        deltas[1:] = np.where(np.isnan(deltas[1:]), np.diff(scores), deltas[1:])
        deltas[0] = np.nan
        cos = np.array([np.nan if t["cos"] is None else t["cos"] for t in turns], dtype=np.float64)
        actions = np.array([ACTIONS.index(t["action"]) if (i and t["action"] in ACTIONS) else -1
                            for i, t in enumerate(turns)], dtype=np.int64)
        out.setdefault(targets[sid], []).append(LoggedSession(scores, deltas, cos, actions))
    return out


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

    return {
        "s0": mean(scores[:, 0]),
        "follow_up_delta": mean(deltas[fu]),
        "challenge_neg_share": float((ch_d < 0).mean()) if ch_d.size else float("nan"),
        "challenge_pos_share": float((ch_d > 0).mean()) if ch_d.size else float("nan"),
        "challenge_abs_delta": mean(np.abs(ch_d)),
        "follow_up_novelty": mean(1.0 - cos[fu]),
    }


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


def _replay(params: TargetParams, actions: np.ndarray, mask: np.ndarray, seed: int) -> dict[str, float]:
    """Statistics of simulated sessions that replay the logged action sequences."""
    acts = np.repeat(actions, REPLAYS_PER_SESSION, axis=0)
    msk = np.repeat(mask, REPLAYS_PER_SESSION, axis=0)
    count, turns = acts.shape
    sim = SimBatch(params_arrays([params], repeat=count), np.random.default_rng(seed), turns=max(turns, 2))
    sim.reset()
    scores = np.full((count, turns), np.nan)
    deltas = np.full((count, turns), np.nan)
    cos = np.full((count, turns), np.nan)
    scores[:, 0] = sim.score
    for t in range(1, turns):
        res = sim.step(np.where(acts[:, t] == CHALLENGE, CHALLENGE, FOLLOW_UP))
        scores[:, t], deltas[:, t], cos[:, t] = res.scores, res.deltas, res.cos
    return statistics(scores, deltas, cos, acts, msk)


def _loss(observed: Mapping[str, float], simulated: Mapping[str, float]) -> float:
    total = 0.0
    for name in STAT_NAMES:
        o, s = observed[name], simulated[name]
        if np.isfinite(o) and np.isfinite(s):
            total += (o - s) ** 2
    return total


def fit_target(target: str, sessions: list[LoggedSession], rounds: int = 2) -> Fit:
    """Fit one target's parameters to its logged sessions (coordinate search, see module docstring).

    Args:
        target: the target's name (as in ``sessions.target``).
        sessions: its logged sessions.
        rounds: passes of the coordinate search.
    """
    scores, deltas, cos, actions, mask = _pad(sessions)
    observed = statistics(scores, deltas, cos, actions, mask)
    grids = {
        "knowledge": np.round(np.arange(0.05, 0.951, 0.05), 2),
        "stability": np.round(np.arange(0.05, 0.951, 0.05), 2),
        "wrongness": np.round(np.arange(0.0, 0.501, 0.1), 2),
        "verbosity": np.round(np.arange(0.1, 0.901, 0.1), 2),
        "judge_error": np.round(np.linspace(*PARAM_RANGES["judge_error"], 5), 4),
    }
    current = {name: float(np.mean(PARAM_RANGES[name])) for name in PARAM_NAMES}
    best_loss, best_stats = float("inf"), observed
    for _ in range(rounds):
        for name in grids:
            for value in grids[name]:
                candidate = dict(current, **{name: float(value)})
                stats = _replay(TargetParams(**candidate), actions, mask, FIT_SEED)
                loss = _loss(observed, stats)
                if loss < best_loss - 1e-12:
                    best_loss, best_stats, current = loss, stats, candidate
    return Fit(target, TargetParams(**current), len(sessions), observed, best_stats, best_loss)


def calibrate_from_store(store: Store, min_sessions: int = 5) -> list[Fit]:
    """Fit every target of the store that has at least ``min_sessions`` logged adaptive sessions."""
    return [fit_target(target, sessions) for target, sessions in sorted(load_sessions(store).items())
            if len(sessions) >= min_sessions]


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
        missing = [n for n in PARAM_NAMES if n not in params]
        if missing:
            raise ValueError(f"{path}: target {entry.get('target')!r} lacks {', '.join(missing)}")
        targets.append(TargetParams(**{n: float(params[n]) for n in PARAM_NAMES}))
    if not targets:
        raise ValueError(f"{path}: no fitted targets")
    return targets


def fitted_sampler(targets: list[TargetParams], jitter: float = 0.05):
    """A parameter sampler for :func:`engine.policy.ppo.train` drawing from fitted targets.

    Each episode takes a fitted target uniformly at random and moves every parameter by a uniform
    amount in ``[−jitter, +jitter]``, clipped to :data:`engine.policy.simulator.PARAM_RANGES`.
    """
    base = params_arrays(targets)

    def sample(rng: np.random.Generator, count: int) -> dict[str, np.ndarray]:
        pick = rng.integers(0, len(targets), size=count)
        out = {}
        for name in PARAM_NAMES:
            low, high = PARAM_RANGES[name]
            out[name] = np.clip(base[name][pick] + rng.uniform(-jitter, jitter, size=count), low, high)
        return out

    return sample
