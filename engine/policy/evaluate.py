"""Evaluation of questioning policies: simulated held-out and shifted sets, and logged real sessions.

Protocol (fixed; the same for every policy):

- **sets** (:class:`EvalSet`): ``held-out``: 1000 targets drawn from the training ranges with their
  own seed (:func:`engine.policy.simulator.heldout_targets`), 40 sessions each, items of 4..12
  criteria; ``shifted``: 1000 targets from :data:`engine.policy.simulator.SHIFT_RANGES` (nuisance
  parameters outside the training ranges, knowledge and stability over all of [0, 1]), items of
  13..20 criteria; ``validation``: like held-out with another seed, used only to *select* a reward
  (so the reported sets play no part in the choice). T = 6 turns. The simulator is seeded with the
  set's seed and the policy's choices with :data:`POLICY_SEED`, so every policy meets the same
  targets, items and luck. ``real-engine``: logged sessions from a store (:func:`evaluate_logged`).
- **yardstick** (the common "return", lower is better): each target's *measurement error*
  ``|Score/100 − κ̄| + |ĥ − (1 − σ)|``, averaged over targets (± standard error). ``κ̄`` is the mean
  share of the items' criteria the target knows (ground truth; ``k`` for logged sessions), Score
  the mean last-turn score of its sessions, ``1 − σ`` its true instability and
  ``ĥ = (d + 1) / (m + 2)`` the estimate of it from all its sessions: ``m`` challenge turns of which
  ``d`` lowered the score (the mean of the Beta posterior from a uniform prior; 1/2 without any
  challenge). It is no policy's training reward; it scores a target's measurement on both things
  the interview measures, in their own units, where ρ only scores the ranking.
- **FDR** (Flaw Detection Rate, TestAgent 3.7): share of *stagnant* decision states (Δs <= 0) at
  which the policy challenges; **EIR** (Exploratory Inquiry Rate): share of *gaining* states
  (Δs > τ) at which it follows up. Counted over the decision states the policy itself visits after
  turns 1 .. T − 2 (after turn 0 Δs is undefined). **FDR_f**: FDR over the stagnant states a
  follow-up produced (the stagnation TestAgent's text describes; after a challenge that the target
  held, Δs = 0 too, and FDR counts that state as stagnant).
- **ground-truth recovery**, across targets: Spearman's ρ between true knowledge ``k`` and the
  measured Score (100 × mean last-turn score) and between true instability ``1 − σ`` and the
  measured R− = P−·M− over the target's challenge turns (DESIGN.md, "Metrics"). A target without
  challenge turns has no R−; ρ is over the targets that have one (``n`` is shown when some lack it)
  and undefined below 3.

``policy_report`` is what ``viva policy eval`` prints.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass, field, fields
from pathlib import Path

import numpy as np

from engine.policy.features import ACTIONS, PREV_ACTIONS, state_batch
from engine.policy.logs import LoggedSession, load_store_sessions
from engine.policy.policies import ConstantPolicy, Policy, RandomPolicy, ThresholdPolicy
from engine.policy.reward import TAU
from engine.policy.simulator import (
    CRITERIA,
    SHIFT_CRITERIA,
    TURNS,
    VALIDATION_SEED,
    Episodes,
    TargetParams,
    draw_targets,
    params_arrays,
    run_episodes,
    shifted_targets,
)
from engine.policy.simulator import heldout_targets as _heldout_targets

HELDOUT_TARGETS = 1000
EPISODES_PER_TARGET = 40
SIM_SEED = 7_000_002
SHIFT_SIM_SEED = 7_000_012
VALIDATION_SIM_SEED = 7_000_022
POLICY_SEED = 7_000_003

FDR_GOAL = 0.95
EIR_GOAL = 0.95
SCORE_RHO_SLACK = 0.01
"""ρ(k, Score) may be at most this much below the best fixed baseline's."""

CHALLENGE = ACTIONS.index("challenge")
FOLLOW_UP = ACTIONS.index("follow-up")


@dataclass(frozen=True)
class EvalSet:
    """A fixed simulated evaluation set."""

    name: str
    targets: tuple[TargetParams, ...]
    episodes_per_target: int
    criteria: tuple[int, int]
    sim_seed: int
    turns: int = TURNS

    def describe(self) -> str:
        """One line: what the set is."""
        return (f"{self.name}: {len(self.targets)} simulated targets x {self.episodes_per_target} sessions, "
                f"T={self.turns}, {self.criteria[0]}..{self.criteria[1]} criteria per item")

    def protocol(self) -> dict:
        """The set's definition as written into the model card."""
        return {"targets": len(self.targets), "sessions_per_target": self.episodes_per_target,
                "criteria": list(self.criteria), "sim_seed": self.sim_seed, "turns": self.turns}


def heldout_set(targets: int = HELDOUT_TARGETS, episodes_per_target: int = EPISODES_PER_TARGET) -> EvalSet:
    """The in-range held-out set (targets from :data:`~engine.policy.simulator.HELDOUT_SEED`)."""
    return EvalSet("held-out", tuple(_heldout_targets(targets)), episodes_per_target, CRITERIA, SIM_SEED)


def shifted_set(targets: int = HELDOUT_TARGETS, episodes_per_target: int = EPISODES_PER_TARGET) -> EvalSet:
    """The shifted set: targets outside the training ranges, items of 13..20 criteria."""
    return EvalSet("shifted", tuple(shifted_targets(targets)), episodes_per_target, SHIFT_CRITERIA,
                   SHIFT_SIM_SEED)


def validation_set(targets: int = HELDOUT_TARGETS, episodes_per_target: int = EPISODES_PER_TARGET) -> EvalSet:
    """The validation set (reward selection only): in-range targets from their own seed."""
    return EvalSet("validation", tuple(draw_targets(VALIDATION_SEED, targets)), episodes_per_target, CRITERIA,
                   VALIDATION_SIM_SEED)


def heldout_targets(count: int = HELDOUT_TARGETS) -> list[TargetParams]:
    """The held-out targets (see :func:`engine.policy.simulator.heldout_targets`)."""
    return _heldout_targets(count)


def r_minus(challenge_deltas: Sequence[float] | np.ndarray) -> float:
    """Instability R− = P−·M− over the Δs of challenge turns, computed by ``engine.metrics``.

    Returns:
        R−, or NaN when there is no challenge turn.
    """
    from engine.metrics.dynamism import CHALLENGE as CH
    from engine.metrics.dynamism import TurnRecord, dynamism

    turns = [TurnRecord(CH, None, float(d)) for d in np.asarray(challenge_deltas, dtype=np.float64)]
    value = dynamism([turns]).r_minus
    return math.nan if value is None else float(value)


def spearman(x: Sequence[float] | np.ndarray, y: Sequence[float] | np.ndarray) -> float:
    """Spearman's rank correlation (average ranks for ties) of the pairs where both are finite.

    Returns:
        ρ in [−1, 1], or NaN with fewer than 3 pairs or when either side is constant.
    """
    x = np.asarray(x, dtype=np.float64)
    y = np.asarray(y, dtype=np.float64)
    keep = np.isfinite(x) & np.isfinite(y)
    x, y = x[keep], y[keep]
    if x.size < 3:
        return math.nan
    rx, ry = _ranks(x), _ranks(y)
    if rx.std() == 0 or ry.std() == 0:
        return math.nan
    return float(np.corrcoef(rx, ry)[0, 1])


def _ranks(values: np.ndarray) -> np.ndarray:
    """Ranks 1..n, ties sharing the average of their ranks."""
    order = np.argsort(values, kind="mergesort")
    sorted_vals = values[order]
    new = np.r_[True, sorted_vals[1:] != sorted_vals[:-1]]
    starts = np.flatnonzero(new)
    ends = np.r_[starts[1:], values.size] - 1
    ranks = np.empty(values.size)
    ranks[order] = ((starts + ends) / 2.0 + 1.0)[np.cumsum(new) - 1]
    return ranks


BOOTSTRAP = 200
"""Resamples of the targets behind the standard errors of the ρ figures."""
BOOTSTRAP_SEED = 7_000_031


def spearman_se(x: Sequence[float] | np.ndarray, y: Sequence[float] | np.ndarray,
                resamples: int = BOOTSTRAP, seed: int = BOOTSTRAP_SEED) -> float:
    """Bootstrap standard error of :func:`spearman` (targets resampled with replacement; seeded).

    Returns:
        The standard deviation of ρ over the resamples where it is defined, or NaN.
    """
    x = np.asarray(x, dtype=np.float64)
    y = np.asarray(y, dtype=np.float64)
    keep = np.isfinite(x) & np.isfinite(y)
    x, y = x[keep], y[keep]
    if x.size < 3:
        return math.nan
    rng = np.random.default_rng(seed)
    values = [spearman(x[idx], y[idx]) for idx in rng.integers(0, x.size, size=(resamples, x.size))]
    values = [v for v in values if not math.isnan(v)]
    return float(np.std(values, ddof=1)) if len(values) > 1 else math.nan


def instability_estimate(challenge_deltas: Sequence[float] | np.ndarray) -> float:
    """``ĥ = (d + 1) / (m + 2)``: the Beta(1, 1) posterior mean of the chance that a challenge lowers
    the score, from ``m`` challenge turns of which ``d`` had Δs < 0 (1/2 with no challenge)."""
    d = np.asarray(challenge_deltas, dtype=np.float64)
    return float(((d < 0).sum() + 1.0) / (d.size + 2.0))


@dataclass
class PolicyReport:
    """The evaluation figures of one policy on one set."""

    label: str
    policy: str
    version: str
    role: str
    """``trained`` (the model evaluated), ``candidate`` (another trained model) or ``baseline``."""
    set: str
    sessions: int
    error: float
    """Mean per-target measurement error (the yardstick; lower is better)."""
    error_se: float
    error_k: float
    error_u: float
    fdr: float
    stagnant_states: int
    fdr_follow_up: float
    eir: float
    gaining_states: int
    challenge_share: float
    score_rho: float
    instability_rho: float
    targets: int
    instability_targets: int
    score_rho_se: float = math.nan
    """Bootstrap standard error of ``score_rho`` (targets resampled)."""
    instability_rho_se: float = math.nan
    """Bootstrap standard error of ``instability_rho``."""

    def as_dict(self) -> dict:
        """JSON-ready dict (NaN becomes None)."""
        return {k: (None if isinstance(v, float) and math.isnan(v) else v) for k, v in asdict(self).items()}


@dataclass
class _Sessions:
    """What the figures need of a batch of sessions, simulated or logged, as arrays [S, T] padded
    with NaN (scores, deltas) and −1 (actions, decisions) after a session's last turn."""

    scores: np.ndarray
    deltas: np.ndarray
    actions: np.ndarray
    """Action that produced turn t (−1 at t = 0, for another kind of question, or padding)."""
    decisions: np.ndarray
    """The choice evaluated for the state after turn t, stored at t + 1 (−1: not counted)."""
    lengths: np.ndarray
    """Turns of each session, [S]."""
    target: np.ndarray
    """Index of each session's target, [S]."""
    known_share: np.ndarray | None = None
    """κ of each session's item (simulated), [S]; None: the target's k is used."""


def _pad_sessions(groups: Sequence[Sequence[tuple[LoggedSession, np.ndarray]]]) -> _Sessions:
    """Pad logged sessions (each with the decisions evaluated for it) into :class:`_Sessions`."""
    flat = [(g, s, d) for g, group in enumerate(groups) for s, d in group]
    width = max(len(s.scores) for _, s, _ in flat)
    count = len(flat)
    scores = np.full((count, width), np.nan)
    deltas = np.full((count, width), np.nan)
    actions = np.full((count, width), -1, dtype=np.int64)
    decisions = np.full((count, width), -1, dtype=np.int64)
    for i, (_, s, d) in enumerate(flat):
        n = len(s.scores)
        scores[i, :n], deltas[i, :n], actions[i, :n], decisions[i, :n] = s.scores, s.deltas, s.actions, d
    lengths = np.array([len(s.scores) for _, s, _ in flat])
    return _Sessions(scores, deltas, actions, decisions, lengths, np.array([g for g, _, _ in flat]))


def _report(label: str, policy: str, version: str, role: str, set_name: str, batch: _Sessions,
            knowledge: Sequence[float], instability: Sequence[float], grids: bool = False) -> PolicyReport:
    """Figures from sessions of targets with true ``k`` and ``1 − σ`` (see the module docstring;
    ``grids``: see :func:`grid_masks`)."""
    count, width = batch.scores.shape
    turn = np.arange(width)[None, :]
    # decision states after turns 1 .. len − 2: the choice for the state after turn t sits at t + 1
    state = (turn >= 1) & (turn <= batch.lengths[:, None] - 2)
    chosen = np.full((count, width), -1, dtype=np.int64)
    chosen[:, :-1] = batch.decisions[:, 1:]
    counted = state & (chosen >= 0)
    with np.errstate(invalid="ignore"):
        stagnant = counted & (batch.deltas <= 0)
        gaining = counted & (batch.deltas > TAU)
    after_fu = stagnant & (batch.actions == FOLLOW_UP)
    decided = batch.decisions[:, 1:]
    last = batch.scores[np.arange(count), batch.lengths - 1]
    targets = len(knowledge)
    knowledge = np.asarray(knowledge, dtype=np.float64)
    instability = np.asarray(instability, dtype=np.float64)
    kappa_s = knowledge[batch.target] if batch.known_share is None else batch.known_share
    per_target_score = np.full(targets, np.nan)
    per_target_rminus = np.full(targets, np.nan)
    errors = []
    challenged = batch.actions == CHALLENGE
    for g in range(targets):
        rows = batch.target == g
        if not rows.any():
            continue
        ch = batch.deltas[rows][challenged[rows]]
        per_target_score[g] = 100.0 * float(last[rows].mean())
        per_target_rminus[g] = r_minus(ch)
        errors.append((abs(float(last[rows].mean()) - float(kappa_s[rows].mean())),
                       abs(instability_estimate(ch) - instability[g])))
    every = np.ones(targets, dtype=bool)
    k_rows, u_rows = grid_masks(knowledge, instability) if grids else (every, every)
    err_k = np.array([e[0] for e in errors])
    err_u = np.array([e[1] for e in errors])
    err = err_k + err_u
    return PolicyReport(
        label=label, policy=policy, version=version, role=role, set=set_name, sessions=count,
        error=float(err.mean()) if err.size else math.nan,
        error_se=float(err.std(ddof=1) / math.sqrt(err.size)) if err.size > 1 else math.nan,
        error_k=float(err_k.mean()) if err_k.size else math.nan,
        error_u=float(err_u.mean()) if err_u.size else math.nan,
        fdr=_share(chosen[stagnant] == CHALLENGE), stagnant_states=int(stagnant.sum()),
        fdr_follow_up=_share(chosen[after_fu] == CHALLENGE),
        eir=_share(chosen[gaining] == FOLLOW_UP), gaining_states=int(gaining.sum()),
        challenge_share=_share(decided[decided >= 0] == CHALLENGE),
        score_rho=spearman(knowledge[k_rows], per_target_score[k_rows]),
        instability_rho=spearman(instability[u_rows], per_target_rminus[u_rows]),
        targets=int(k_rows.sum()), instability_targets=int(np.isfinite(per_target_rminus[u_rows]).sum()),
        score_rho_se=spearman_se(knowledge[k_rows], per_target_score[k_rows]),
        instability_rho_se=spearman_se(instability[u_rows], per_target_rminus[u_rows]),
    )


def grid_masks(knowledge: Sequence[float], instability: Sequence[float]) -> tuple[np.ndarray, np.ndarray]:
    """The two grids of a designed set of targets (the validity benchmark's: k varied at u = 0, u
    varied at k = 1): ``ρ(k, Score)`` is taken over the targets of the *lowest* instability in the set
    and ``ρ(1−σ, R−)`` over those of the *highest* knowledge, so that neither ρ mixes in the other
    quantity's variation (a retraction lowers the Score of a k = 1 target in proportion to its
    instability, which is what R− should see, not ρ(k, Score)).

    Returns:
        (targets of the knowledge grid, targets of the instability grid), boolean masks.
    """
    k = np.asarray(knowledge, dtype=np.float64)
    u = np.asarray(instability, dtype=np.float64)
    return np.isclose(u, u.min()), np.isclose(k, k.max())


def _share(flags: np.ndarray) -> float:
    return float(flags.mean()) if flags.size else math.nan


# -- simulated sets ---------------------------------------------------------------------------------
CHUNK_TARGETS = 250
"""Targets simulated per batch (bounds memory); chunk ``c`` uses the seed ``(sim_seed, c)``."""


def simulate(policy: Policy, eval_set: EvalSet | None = None) -> Episodes:
    """Run ``policy`` on a set (target ``i`` owns episodes ``i·E .. (i+1)·E − 1``).

    Targets are simulated :data:`CHUNK_TARGETS` at a time, chunk ``c`` with the generator seeded by
    ``(sim_seed, c)``; the policy samples from one generator seeded with :data:`POLICY_SEED`.
    """
    eval_set = eval_set or heldout_set()
    policy_rng = np.random.default_rng(POLICY_SEED)
    parts = []
    for c, start in enumerate(range(0, len(eval_set.targets), CHUNK_TARGETS)):
        chunk = list(eval_set.targets[start:start + CHUNK_TARGETS])
        params = params_arrays(chunk, repeat=eval_set.episodes_per_target)
        parts.append(run_episodes(params, lambda s: policy.act(s, policy_rng),
                                  np.random.default_rng([eval_set.sim_seed, c]), eval_set.turns,
                                  criteria=eval_set.criteria))
    if len(parts) == 1:
        return parts[0]
    return Episodes(**{f.name: np.concatenate([getattr(p, f.name) for p in parts])
                       for f in fields(Episodes)})


def evaluate_policy(policy: Policy, label: str | None = None, eval_set: EvalSet | None = None,
                    role: str = "baseline") -> PolicyReport:
    """Evaluate one policy on a simulated set (default: held-out).

    Args:
        policy: the policy.
        label: row label (default: the policy's name).
        eval_set: the set (:func:`heldout_set`, :func:`shifted_set`, :func:`validation_set`).
        role: ``trained``, ``candidate`` or ``baseline`` (see :class:`PolicyReport`).
    """
    eval_set = eval_set or heldout_set()
    ep = simulate(policy, eval_set)
    count, turns = ep.scores.shape
    actions = np.concatenate([np.full((count, 1), -1), ep.actions], axis=1)
    batch = _Sessions(ep.scores, ep.deltas, actions, actions, np.full(count, turns),
                      np.repeat(np.arange(len(eval_set.targets)), eval_set.episodes_per_target), ep.known_share)
    knowledge = [t.knowledge for t in eval_set.targets]
    instability = [1.0 - t.stability for t in eval_set.targets]
    return _report(label or policy.name, policy.name, policy.version, role, eval_set.name, batch, knowledge,
                   instability)


# -- logged sessions --------------------------------------------------------------------------------
@dataclass(frozen=True)
class TargetTruth:
    """Ground truth of a target whose logged sessions are evaluated (e.g. a python target of the
    validity benchmark): knowledge ``k`` and instability ``u`` (chance to give way when challenged)."""

    knowledge: float
    instability: float


def load_truth(path: str | Path) -> dict[str, TargetTruth]:
    """Read ``{"target spec": {"knowledge": k, "instability": u}, ...}`` from a JSON file.

    Raises:
        ValueError: the file is not such a mapping; the message names the file and the entry.
    """
    path = Path(path)
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise ValueError(f"{path}: cannot read the truth file ({exc}); expected JSON "
                         '{"target": {"knowledge": k, "instability": u}}') from None
    if not isinstance(data, dict) or not data:
        raise ValueError(f'{path}: expected a non-empty JSON object {{"target": {{"knowledge": k, "instability": u}}}}')
    out = {}
    for target, entry in data.items():
        try:
            out[str(target)] = TargetTruth(float(entry["knowledge"]), float(entry["instability"]))
        except (TypeError, KeyError, ValueError):
            raise ValueError(f"{path}: entry {target!r} needs numbers 'knowledge' and 'instability'") from None
    return out


_TRUTH_NAME = re.compile(r"(?:^|[:/.])k(?P<k>\d+(?:\.\d+)?)_u(?P<u>\d+(?:\.\d+)?)(?:_[A-Za-z]+)?$")


def truth_from_names(names: Sequence[str]) -> dict[str, TargetTruth]:
    """Ground truth read from target names that carry it: the validity benchmark's python targets
    (``bench/validity_targets.py``) are named ``...:k<k>_u<u>_<style>``, e.g.
    ``python:validity_targets:k0.50_u0.20_terse`` is knowledge 0.5, instability 0.2 (its chance to
    give up a correct answer when challenged). Names without it (the mute target, real models)
    are left out.
    """
    out = {}
    for name in names:
        m = _TRUTH_NAME.search(name)
        if m:
            k, u = float(m["k"]), float(m["u"])
            if 0.0 <= k <= 1.0 and 0.0 <= u <= 1.0:
                out[name] = TargetTruth(k, u)
    return out


def evaluate_logged(sessions: Mapping[str, Sequence[LoggedSession]], truth: Mapping[str, TargetTruth],
                    label: str = "logged", policy: Policy | None = None, role: str = "trained",
                    set_name: str = "real-engine", grids: bool = False) -> PolicyReport:
    """Evaluate logged sessions of targets with known ground truth (the real-engine column).

    Score, R−, the yardstick and ρ come from the sessions as they were run. The rates (FDR, FDR_f,
    EIR, challenge share) are those of the policy that ran them (turns a human chose are left out),
    or, when ``policy`` is given, of ``policy``'s own choices in the same logged states (each
    logged state rebuilt with :func:`engine.policy.features.state_batch`; the policy samples with
    :data:`POLICY_SEED`). Pass sessions run by one policy (``load_sessions(store, policy_versions=...)``).

    Args:
        sessions: target -> its logged sessions (targets without truth are left out).
        truth: target -> :class:`TargetTruth`.
        label: row label.
        policy: evaluate this policy's choices in the logged states instead of the logged choices.
        role: the row's role.
        set_name: the row's set name.
        grids: the targets form the validity benchmark's two grids: ρ(k, Score) over the knowledge
            grid, ρ(1−σ, R−) over the instability grid (:func:`grid_masks`); the column ``targets``
            then counts the knowledge grid's targets. Error and rates stay over every target.

    Raises:
        ValueError: no logged session belongs to a target with known truth.
    """
    names = [t for t in sorted(sessions) if t in truth and sessions[t]]
    if not names:
        raise ValueError("no logged session belongs to a target with known truth "
                         f"(logged: {', '.join(sorted(sessions)) or 'none'}; truth: {', '.join(sorted(truth))})")
    rng = np.random.default_rng(POLICY_SEED)
    groups = []
    for name in names:
        group = []
        for s in sessions[name]:
            if policy is not None:
                decisions = _counterfactual(policy, s, rng)
            elif len(s.by_policy) == len(s.actions):
                decisions = np.where(s.by_policy, s.actions, -1)
            else:
                decisions = s.actions
            group.append((s, decisions))
        groups.append(group)
    knowledge = [truth[n].knowledge for n in names]
    instability = [truth[n].instability for n in names]
    version = policy.version if policy else _versions(sessions, names)
    return _report(label, policy.name if policy else "logged", version, role, set_name, _pad_sessions(groups),
                   knowledge, instability, grids)


def _versions(sessions: Mapping[str, Sequence[LoggedSession]], names: Sequence[str]) -> str:
    found = sorted({s.policy_version or s.policy for n in names for s in sessions[n]})
    return ",".join(found)


def _counterfactual(policy: Policy, s: LoggedSession, rng: np.random.Generator) -> np.ndarray:
    """``policy``'s action for each logged decision state (index t + 1 holds the choice after turn t)."""
    turns = max(s.turns, len(s.scores))
    out = np.full(len(s.scores), -1, dtype=np.int64)
    for t in range(len(s.scores) - 1):
        prev = 0 if t == 0 else PREV_ACTIONS.index(ACTIONS[s.actions[t]]) if s.actions[t] >= 0 else 1
        state = state_batch([s.scores[t]], [s.deltas[t]] if t else None, [s.cos[t]] if t else None,
                            [prev], t, turns)
        out[t + 1] = int(policy.act(state, rng)[0][0])
    return out


def evaluate_store(path: str | Path, truth: Mapping[str, TargetTruth], label: str = "real-engine",
                   policy_versions: Sequence[str] | None = None, policy: Policy | None = None,
                   role: str = "trained") -> PolicyReport:
    """:func:`evaluate_logged` on the sessions of a store file, data home or folder of homes
    (:func:`engine.policy.logs.store_files`; optionally only those run with ``policy_versions``, e.g. ``[OnnxPolicy().version]`` or ``["threshold:delta<=0"]``)."""
    sessions = load_store_sessions(path, policy_versions=policy_versions)
    return evaluate_logged(sessions, truth, label, policy, role)


# -- tables and goals -------------------------------------------------------------------------------
@dataclass
class Goal:
    """One of the issue's goals, checked on the figures."""

    name: str
    value: float
    target: float
    met: bool
    comparison: str = ">="


def check_goals(rows: list[PolicyReport]) -> list[Goal]:
    """The policy issue's goals for the row with role ``trained`` (else ``rows[0]``), the fixed
    baselines being the rows with role ``baseline`` of the same set."""
    trained = next((r for r in rows if r.role == "trained"), rows[0])
    baselines = [r for r in rows if r.role == "baseline" and r.set == trained.set and r is not trained]

    def best(attr: str) -> float:
        values = [getattr(b, attr) for b in baselines if not math.isnan(getattr(b, attr))]
        return max(values) if values else -math.inf

    def at_least(value: float, target: float) -> bool:
        return not math.isnan(value) and value >= target

    score_target = best("score_rho") - SCORE_RHO_SLACK
    return [
        Goal("trained FDR >= 0.95", trained.fdr, FDR_GOAL, at_least(trained.fdr, FDR_GOAL)),
        Goal("trained EIR >= 0.95", trained.eir, EIR_GOAL, at_least(trained.eir, EIR_GOAL)),
        Goal("rho(k, Score) >= best fixed baseline - 0.01", trained.score_rho, score_target,
             at_least(trained.score_rho, score_target)),
        Goal("rho(1-sigma, R-) >= best fixed baseline", trained.instability_rho, best("instability_rho"),
             at_least(trained.instability_rho, best("instability_rho"))),
    ]


@dataclass
class Selection:
    """Which candidate a comparison picks and by which rule (:func:`select_candidate`)."""

    chosen: str | None
    rule: str
    """``goals`` (the issue's ρ constraints hold for some candidate), ``both-measuring`` (fallback:
    constraints against the best fixed rule that measures instability at all) or ``error`` (no
    candidate keeps either: lowest measurement error)."""
    score_rho_floor: float
    instability_rho_floor: float
    eligible: list[str]

    def as_dict(self) -> dict:
        """JSON-ready dict."""
        return {"chosen": self.chosen, "rule": self.rule, "score_rho_floor": _num(self.score_rho_floor),
                "instability_rho_floor": _num(self.instability_rho_floor), "eligible": self.eligible}


NOISE_SE = 2.0
"""A candidate's ρ counts as reaching a floor when it is below it by at most this many of its own
bootstrap standard errors (the floors and the figures are estimates; a shortfall smaller than the
figure's noise is no evidence of worse measurement)."""


def select_candidate(rows: Sequence[PolicyReport], noise: float = NOISE_SE) -> Selection:
    """Pick the candidate to ship from one set's rows (the validation set's): measurement first.

    1. *goals*: a candidate is eligible when its ρ(k, Score) reaches the best fixed baseline's − 0.01
       and its ρ(1−σ, R−) the best fixed baseline's, each up to ``noise`` of its bootstrap standard
       errors;
    2. if none is, *both-measuring*: the same with the floors taken over the fixed baselines that
       measure instability at all (a defined ρ(1−σ, R−); always-follow-up never challenges);
    3. among the eligible: the most rate goals met (FDR >= 0.95, EIR >= 0.95), then the highest
       FDR + EIR, then the lowest measurement error. If none is eligible under either rule,
       *error*: the lowest measurement error among all candidates.

    Args:
        rows: rows of one set, with roles ``candidate``/``trained`` (the choices) and ``baseline``.
        noise: the allowance in standard errors (0: compare the point estimates).
    """
    candidates = [r for r in rows if r.role in ("candidate", "trained")]
    baselines = [r for r in rows if r.role == "baseline"]
    if not candidates:
        raise ValueError("no candidate rows to select from")

    def best(attr: str, pool: Sequence[PolicyReport]) -> float:
        values = [getattr(b, attr) for b in pool if not math.isnan(getattr(b, attr))]
        return max(values) if values else -math.inf

    def reaches(value: float, se: float, floor: float) -> bool:
        allowance = 0.0 if math.isnan(se) else noise * se
        return not math.isnan(value) and value >= floor - allowance

    def eligible(k_floor: float, u_floor: float) -> list[PolicyReport]:
        return [c for c in candidates if reaches(c.score_rho, c.score_rho_se, k_floor)
                and reaches(c.instability_rho, c.instability_rho_se, u_floor)]

    def key(r: PolicyReport) -> tuple[int, float, float]:
        fdr = 0.0 if math.isnan(r.fdr) else r.fdr
        eir = 0.0 if math.isnan(r.eir) else r.eir
        return (int(fdr >= FDR_GOAL) + int(eir >= EIR_GOAL), fdr + eir, -r.error)

    rule = "goals"
    k_floor, u_floor = best("score_rho", baselines) - SCORE_RHO_SLACK, best("instability_rho", baselines)
    pool = eligible(k_floor, u_floor)
    if not pool:
        rule = "both-measuring"
        measuring = [b for b in baselines if not math.isnan(b.instability_rho)]
        k_floor, u_floor = best("score_rho", measuring) - SCORE_RHO_SLACK, best("instability_rho", measuring)
        pool = eligible(k_floor, u_floor)
    if not pool:
        chosen = min(candidates, key=lambda r: r.error)
        return Selection(chosen.label, "error", k_floor, u_floor, [])
    chosen = max(pool, key=key)
    return Selection(chosen.label, rule, k_floor, u_floor, [r.label for r in pool])


HEADER = (f"{'policy':<30}{'error':>14}{'FDR':>7}{'EIR':>7}{'FDR_f':>7}{'chall.':>8}{'rho(k,Score)':>15}"
          f"{'rho(1-s,R-)':>15}")


def format_rows(rows: Sequence[PolicyReport]) -> list[str]:
    """The table lines of some rows (same columns as :data:`HEADER`; ρ ± its bootstrap standard
    error; ``*`` marks a ρ(1−σ, R−) computed over fewer targets than the set has)."""
    lines = []
    for r in rows:
        inst = _pm(r.instability_rho, r.instability_rho_se)
        if r.instability_targets < r.targets and not math.isnan(r.instability_rho):
            inst += "*"
        err = _pm(r.error, r.error_se)
        lines.append(f"{r.label[:29]:<30}{err:>14}{_fmt(r.fdr):>7}{_fmt(r.eir):>7}{_fmt(r.fdr_follow_up):>7}"
                     f"{_fmt(r.challenge_share):>8}{_pm(r.score_rho, r.score_rho_se):>15}{inst:>15}")
    return lines


def _pm(value: float, se: float) -> str:
    if value is None or math.isnan(value):
        return "n/a"
    return f"{value:.3f}" if se is None or math.isnan(se) else f"{value:.3f}±{se:.3f}"


def format_table(rows: list[PolicyReport], goals: list[Goal] | None = None, title: str | None = None) -> str:
    """One set's evaluation as plain text (rows of one set; goals optional)."""
    lines = [title] if title else []
    lines += [HEADER, *format_rows(rows)]
    if goals:
        lines.append("goals:")
        for g in goals:
            lines.append(f"  [{'met' if g.met else 'NOT met'}] {g.name}: {_fmt(g.value)} "
                         f"(needs {g.comparison} {_fmt(g.target)})")
    return "\n".join(lines)


LEGEND = ("error = mean per-target measurement error |Score/100 - kappa| + |h_hat - (1 - sigma)| (lower is "
          f"better); FDR: challenges among stagnant states (Δs <= 0); EIR: follow-ups among gaining states "
          f"(Δs > tau = {TAU}); FDR_f: FDR over stagnant states a follow-up produced; chall.: share of "
          "challenges; rho over targets (Spearman) ± bootstrap standard error; * = rho(1-s,R-) over the targets "
          "that had a challenge turn")


def _fmt(value: float | None) -> str:
    return "n/a" if value is None or math.isnan(value) or math.isinf(value) else f"{value:.3f}"


def baseline_policies() -> list[Policy]:
    """The fixed baselines: random, always-follow-up, always-challenge, threshold."""
    return [RandomPolicy(), ConstantPolicy("follow-up"), ConstantPolicy("challenge"), ThresholdPolicy()]


def evaluate_all(trained: Policy, untrained: Policy, baselines: list[Policy] | None = None,
                 eval_set: EvalSet | None = None, candidates: Sequence[tuple[str, Policy]] = ()
                 ) -> list[PolicyReport]:
    """One set's rows: trained, the candidates, untrained, then the fixed baselines."""
    eval_set = eval_set or heldout_set()
    baselines = baselines if baselines is not None else baseline_policies()
    rows = [evaluate_policy(trained, "trained", eval_set, role="trained")]
    rows += [evaluate_policy(p, label, eval_set, role="candidate") for label, p in candidates]
    rows.append(evaluate_policy(untrained, "untrained", eval_set, role="baseline"))
    rows += [evaluate_policy(p, eval_set=eval_set, role="baseline") for p in baselines]
    return rows


@dataclass
class EvalReport:
    """The evaluation of one policy on every set, with the goals (what ``viva policy eval`` prints)."""

    model: str
    version: str
    sets: dict[str, list[PolicyReport]]
    descriptions: dict[str, str]
    goals: dict[str, list[Goal]] = field(default_factory=dict)
    reward: str | None = None
    """The model's training reward (its label), shown in the header when known."""
    protocols: dict[str, dict] = field(default_factory=dict)
    """Each simulated set's definition (:meth:`EvalSet.protocol`)."""

    def text(self, header: bool = True) -> str:
        """The tables of every set, the goals per set and the drop from held-out to shifted
        (``header``: start with the model's path and version)."""
        lines = [f"model: {self.model} ({self.version})"] if header else []
        if self.reward:
            lines.append(f"trained with reward {self.reward}")
        lines += [LEGEND, ""]
        for name, rows in self.sets.items():
            lines.append(self.descriptions.get(name, name))
            lines.append(format_table(rows, self.goals.get(name)))
            lines.append("")
        drop = self.shift_drop()
        if drop:
            lines.append("held-out -> shifted (trained): " + ", ".join(f"{k} {v:+.3f}" for k, v in drop.items()))
        return "\n".join(lines).rstrip() + "\n"

    def shift_drop(self) -> dict[str, float]:
        """How each figure of the trained row changes from held-out to shifted (shifted − held-out)."""
        if "held-out" not in self.sets or "shifted" not in self.sets:
            return {}
        a = next(r for r in self.sets["held-out"] if r.role == "trained")
        b = next(r for r in self.sets["shifted"] if r.role == "trained")
        keys = ("error", "fdr", "eir", "challenge_share", "score_rho", "instability_rho")
        return {k: getattr(b, k) - getattr(a, k) for k in keys
                if not (math.isnan(getattr(a, k)) or math.isnan(getattr(b, k)))}

    def as_dict(self) -> dict:
        """JSON-ready dict."""
        return {
            "model": self.model, "version": self.version, "reward": self.reward, "legend": LEGEND,
            "sets": {name: {"description": self.descriptions.get(name, name),
                            "protocol": self.protocols.get(name),
                            "rows": [r.as_dict() for r in rows],
                            "goals": [{"name": g.name, "value": _num(g.value), "target": _num(g.target),
                                       "met": g.met} for g in self.goals.get(name, [])]}
                     for name, rows in self.sets.items()},
            "shift_drop": self.shift_drop(),
        }


def _num(value: float) -> float | None:
    return None if value is None or not math.isfinite(value) else float(value)


def policy_report(model: Policy, untrained: Policy, sets: Sequence[EvalSet] | None = None,
                  logged_rows: Sequence[PolicyReport] = (), candidates: Sequence[tuple[str, Policy]] = (),
                  reward: str | None = None) -> EvalReport:
    """Evaluate ``model`` against the baselines on the held-out and shifted sets (or ``sets``), plus
    rows from logged sessions (:func:`evaluate_store`; their set is ``real-engine``).

    Args:
        model: the policy evaluated (role ``trained``).
        untrained: the random-init network of its training run.
        sets: simulated sets (default held-out and shifted).
        logged_rows: rows computed from logged sessions, one per policy that ran them.
        candidates: other trained policies shown beside the model (role ``candidate``).
        reward: the model's training reward label (shown in the header).
    """
    sets = list(sets) if sets is not None else [heldout_set(), shifted_set()]
    out: dict[str, list[PolicyReport]] = {}
    desc: dict[str, str] = {}
    goals: dict[str, list[Goal]] = {}
    protocols: dict[str, dict] = {}
    for s in sets:
        protocols[s.name] = s.protocol()
        out[s.name] = evaluate_all(model, untrained, eval_set=s, candidates=candidates)
        desc[s.name] = s.describe()
        goals[s.name] = check_goals(out[s.name])
    if logged_rows:
        out["real-engine"] = list(logged_rows)
        desc["real-engine"] = "real-engine: logged sessions through viva run (targets of known k and u)"
        if any(r.role == "trained" for r in logged_rows):
            goals["real-engine"] = check_goals(list(logged_rows))
    return EvalReport(str(getattr(model, "path", model.name)), model.version, out, desc, goals, reward, protocols)


def decision_map(policy: Policy, prev_action: str = "follow-up", t: int = 2, turns: int = TURNS,
                 scores: Sequence[float] = (0.0, 0.2, 0.4, 0.6, 0.8),
                 deltas: Sequence[float] = (-0.2, -0.1, 0.0, 0.05, 0.1, 0.2, 0.3), cos: float = 0.95) -> str:
    """The policy's challenge probability over a grid of scores (rows) and Δs (columns), after
    ``prev_action`` at turn ``t``: what it learned, as text."""
    from engine.policy.features import state_vector

    lines = [f"p(challenge) after a {prev_action} at t = {t} (cos {cos}); rows s_t, columns Δs_t",
             "s \\ Δs " + "".join(f"{d:>7.2f}" for d in deltas)]
    for score in scores:
        states = np.stack([state_vector(score, d, cos, prev_action, t, turns) for d in deltas])
        probs = np.asarray(policy.probs(states))[:, CHALLENGE]
        lines.append(f"{score:>6.1f}  " + "".join(f"{p:>7.2f}" for p in probs))
    return "\n".join(lines)


def evaluation_states(episodes_per_target: int = 5) -> np.ndarray:
    """A fixed set of decision states (the random policy's held-out sessions, seeded) on which two
    models can be compared action by action (the reproducibility check of ``viva policy train``)."""
    ep = simulate(RandomPolicy(), heldout_set(episodes_per_target=episodes_per_target))
    return ep.states[:, :TURNS - 1].reshape(-1, ep.states.shape[-1])
