"""Evaluation of questioning policies on held-out simulated targets (``viva policy eval``).

Protocol (fixed; the same for every policy):

- 20 held-out targets (:func:`engine.policy.simulator.heldout_targets`), 50 sessions each, T = 6
  turns; the simulator is seeded with :data:`SIM_SEED` and the policy's choices with
  :data:`POLICY_SEED`, so every policy meets the same targets, items and luck.
- **mean return**: undiscounted sum of the rewards (:mod:`engine.policy.reward`) of the 5 decisions of
  a session, averaged over the 1000 sessions (± its standard error).
- **FDR** (Flaw Detection Rate, TestAgent 3.7): share of *stagnant* states (Δs <= 0) at which the
  policy challenges; **EIR** (Exploratory Inquiry Rate): share of *gaining* states (Δs > τ) at which
  it follows up. Counted over the decision states the policy itself visits after turns 1 .. T − 2
  (after turn 0 Δs is undefined, so that state is neither stagnant nor gaining).
- **ground-truth recovery**, across the 20 targets: Spearman's ρ between the true knowledge ``k`` and
  the measured Score (100 × mean last-turn score), and between the true instability ``1 − σ`` and
  the measured R− = P−·M− over the target's challenge turns (DESIGN.md, "Metrics"). A target without
  challenge turns has no R−; ρ is computed over the targets that have one (``n`` is reported) and is
  undefined below 3 of them.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import asdict, dataclass

import numpy as np

from engine.policy.features import ACTIONS
from engine.policy.policies import Policy, RandomPolicy
from engine.policy.reward import TAU, RewardSpec
from engine.policy.simulator import TURNS, Episodes, heldout_targets, params_arrays, run_episodes

HELDOUT_TARGETS = 20
EPISODES_PER_TARGET = 50
SIM_SEED = 7_000_002
POLICY_SEED = 7_000_003

FDR_GOAL = 0.95
EIR_GOAL = 0.95

CHALLENGE = ACTIONS.index("challenge")
FOLLOW_UP = ACTIONS.index("follow-up")


def r_minus(challenge_deltas: Sequence[float] | np.ndarray) -> float:
    """Instability R− = P−·M− over the Δs of challenge turns, computed by ``engine.metrics``.

    Returns:
        R−, or NaN when there is no challenge turn.
    """
    from engine.metrics.dynamism import CHALLENGE, TurnRecord, dynamism

    turns = [TurnRecord(CHALLENGE, None, float(d)) for d in np.asarray(challenge_deltas, dtype=np.float64)]
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
    order = np.argsort(values, kind="mergesort")
    ranks = np.empty(values.size)
    sorted_vals = values[order]
    i = 0
    while i < values.size:
        j = i
        while j + 1 < values.size and sorted_vals[j + 1] == sorted_vals[i]:
            j += 1
        ranks[order[i:j + 1]] = (i + j) / 2.0 + 1.0
        i = j + 1
    return ranks


@dataclass
class PolicyReport:
    """The evaluation figures of one policy."""

    label: str
    policy: str
    version: str
    mean_return: float
    return_se: float
    fdr: float
    stagnant_states: int
    eir: float
    gaining_states: int
    challenge_share: float
    score_rho: float
    instability_rho: float
    instability_targets: int

    def as_dict(self) -> dict:
        """JSON-ready dict (NaN becomes None)."""
        return {k: (None if isinstance(v, float) and math.isnan(v) else v) for k, v in asdict(self).items()}


def simulate(policy: Policy, episodes_per_target: int = EPISODES_PER_TARGET,
             targets: int = HELDOUT_TARGETS, reward: RewardSpec = RewardSpec()) -> Episodes:
    """Run ``policy`` on the held-out targets (target ``i`` owns episodes ``i·E .. (i+1)·E − 1``)."""
    params = params_arrays(heldout_targets(targets), repeat=episodes_per_target)
    policy_rng = np.random.default_rng(POLICY_SEED)
    return run_episodes(params, lambda s: policy.act(s, policy_rng), np.random.default_rng(SIM_SEED), TURNS,
                        reward)


def evaluate_policy(policy: Policy, label: str | None = None, episodes_per_target: int = EPISODES_PER_TARGET,
                    targets: int = HELDOUT_TARGETS, reward: RewardSpec = RewardSpec()) -> PolicyReport:
    """Evaluate one policy with the protocol of this module.

    Args:
        policy: the policy.
        label: row label (default: the policy's name).
        episodes_per_target: sessions per held-out target.
        targets: number of held-out targets.
        reward: the reward the returns are computed with (the model's own; default ``outcome``).
    """
    truth = heldout_targets(targets)
    ep = simulate(policy, episodes_per_target, targets, reward)
    deltas = ep.deltas[:, 1:TURNS - 1]          # Δs of the states after turns 1 .. T-2
    actions = ep.actions[:, 1:]                 # the decisions taken in those states
    stagnant = deltas <= 0
    gaining = deltas > TAU
    returns = ep.returns
    per_target_score, per_target_rminus = [], []
    for i in range(targets):
        rows = slice(i * episodes_per_target, (i + 1) * episodes_per_target)
        per_target_score.append(100.0 * ep.scores[rows, -1].mean())
        challenged = ep.actions[rows] == CHALLENGE   # action t produced turn t + 1
        per_target_rminus.append(r_minus(ep.deltas[rows, 1:][challenged]))
    knowledge = [t.knowledge for t in truth]
    instability = [1.0 - t.stability for t in truth]
    return PolicyReport(
        label=label or policy.name,
        policy=policy.name,
        version=policy.version,
        mean_return=float(returns.mean()),
        return_se=float(returns.std(ddof=1) / math.sqrt(returns.size)),
        fdr=_share(actions[stagnant] == CHALLENGE),
        stagnant_states=int(stagnant.sum()),
        eir=_share(actions[gaining] == FOLLOW_UP),
        gaining_states=int(gaining.sum()),
        challenge_share=float((ep.actions == CHALLENGE).mean()),
        score_rho=spearman(knowledge, per_target_score),
        instability_rho=spearman(instability, per_target_rminus),
        instability_targets=int(np.isfinite(per_target_rminus).sum()),
    )


def _share(flags: np.ndarray) -> float:
    return float(flags.mean()) if flags.size else math.nan


@dataclass
class Goal:
    """One of the issue's goals, checked on the figures."""

    name: str
    value: float
    target: float
    met: bool


def check_goals(rows: list[PolicyReport]) -> list[Goal]:
    """The goals of the policy issue; ``rows[0]`` is the trained policy, the others the baselines."""
    trained, baselines = rows[0], rows[1:]

    def best(attr: str) -> float:
        values = [getattr(b, attr) for b in baselines if not math.isnan(getattr(b, attr))]
        return max(values) if values else -math.inf

    def at_least(value: float, target: float) -> bool:
        return not math.isnan(value) and value >= target

    best_return = best("mean_return")
    return [
        Goal("trained FDR >= 0.95", trained.fdr, FDR_GOAL, at_least(trained.fdr, FDR_GOAL)),
        Goal("trained EIR >= 0.95", trained.eir, EIR_GOAL, at_least(trained.eir, EIR_GOAL)),
        Goal("trained return > every baseline", trained.mean_return, best_return,
             not math.isnan(trained.mean_return) and trained.mean_return > best_return),
        Goal("rho(k, Score) >= best baseline", trained.score_rho, best("score_rho"),
             at_least(trained.score_rho, best("score_rho"))),
        Goal("rho(1-sigma, R-) >= best baseline", trained.instability_rho, best("instability_rho"),
             at_least(trained.instability_rho, best("instability_rho"))),
    ]


def evaluate_all(trained: Policy, untrained: Policy, baselines: list[Policy] | None = None,
                 reward: RewardSpec = RewardSpec()) -> list[PolicyReport]:
    """The evaluation table: trained, untrained, then ``random``, ``always-follow-up``, ``threshold``."""
    from engine.policy.policies import ConstantPolicy, ThresholdPolicy

    baselines = baselines if baselines is not None else [RandomPolicy(), ConstantPolicy("follow-up"),
                                                         ThresholdPolicy()]
    rows = [evaluate_policy(trained, "trained", reward=reward), evaluate_policy(untrained, "untrained", reward=reward)]
    rows += [evaluate_policy(p, reward=reward) for p in baselines]
    return rows


def format_table(rows: list[PolicyReport], goals: list[Goal] | None = None,
                 reward: RewardSpec = RewardSpec()) -> str:
    """The evaluation as plain text (what ``viva policy eval`` prints)."""
    lines = [
        f"held-out evaluation: {HELDOUT_TARGETS} simulated targets x {EPISODES_PER_TARGET} sessions, "
        f"T={TURNS} turns; return = {reward.kind} reward (tau={reward.tau}, lambda={reward.lam}); "
        f"EIR counts Δs > tau={TAU}",
        "",
        f"{'policy':<18}{'return':>15}{'FDR':>8}{'EIR':>8}{'challenge':>11}{'rho(k,Score)':>14}"
        f"{'rho(1-sigma,R-)':>17}",
    ]
    for r in rows:
        inst = _fmt(r.instability_rho)
        if r.instability_targets < HELDOUT_TARGETS and not math.isnan(r.instability_rho):
            inst += f" n={r.instability_targets}"
        lines.append(
            f"{r.label:<18}{r.mean_return:>8.3f} ±{r.return_se:.3f}{_fmt(r.fdr):>8}{_fmt(r.eir):>8}"
            f"{r.challenge_share:>11.3f}{_fmt(r.score_rho):>14}{inst:>17}"
        )
    lines.append("")
    lines.append("stagnant states (Δs<=0) / gaining states (Δs>τ) visited: "
                 + ", ".join(f"{r.label} {r.stagnant_states}/{r.gaining_states}" for r in rows))
    lines.append("versions: " + ", ".join(f"{r.label}={r.version}" for r in rows))
    if goals:
        lines.append("")
        lines.append("goals:")
        for g in goals:
            lines.append(f"  [{'met' if g.met else 'NOT met'}] {g.name}: {_fmt(g.value)} "
                         f"(needs {'>' if 'return' in g.name else '>='} {_fmt(g.target)})")
    return "\n".join(lines)


def _fmt(value: float) -> str:
    return "n/a" if value is None or math.isnan(value) or math.isinf(value) else f"{value:.3f}"


def evaluation_states(episodes_per_target: int = 10) -> np.ndarray:
    """A fixed set of decision states (the random policy's held-out sessions, seeded) on which two
    models can be compared action by action (the reproducibility check of ``viva policy train``)."""
    ep = simulate(RandomPolicy(), episodes_per_target)
    return ep.states[:, :TURNS - 1].reshape(-1, ep.states.shape[-1])
