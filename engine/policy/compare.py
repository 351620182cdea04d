"""The reward comparison: train every candidate reward, evaluate them side by side, pick one.

Each candidate is a :class:`~engine.policy.ppo.PPOConfig` that differs only in its reward (same seed,
steps and hyper-parameters). Every trained actor is evaluated on the **validation** set, which
selects the reward (:func:`engine.policy.evaluate.select_candidate`), and on the held-out and
shifted sets, which report it; the fixed baselines are evaluated on the same sets. The result
prints as one table per set (the Pareto table of the model card) and as JSON.

``bench/policy.py compare`` runs it; ``bench/policy.py train`` then trains the chosen reward into
``models/policy.onnx``.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, fields, replace
from typing import Any

import numpy as np

from engine.policy.evaluate import (
    LEGEND,
    EvalSet,
    PolicyReport,
    Selection,
    baseline_policies,
    evaluate_policy,
    format_table,
    heldout_set,
    select_candidate,
    shifted_set,
    validation_set,
)
from engine.policy.policies import NetworkPolicy
from engine.policy.ppo import PPOConfig, train, untrained_actor

CANDIDATES: dict[str, dict[str, Any]] = {
    "outcome": {"reward": "outcome"},
    "evidence": {"reward": "evidence"},
    "evidence-lam0": {"reward": "evidence", "lam": 0.0},
    **{f"measure-mu{mu:g}-beta{beta:g}": {"reward": "measure", "mu": mu, "beta": beta}
       for mu in (0.5, 0.75, 1.0) for beta in (0.0, 0.03, 0.05)},
    **{f"measure-mu0.5-beta{beta:g}": {"reward": "measure", "mu": 0.5, "beta": beta} for beta in (0.01, 0.02)},
    **{f"measure-mu{mu:g}-eir{beta:g}": {"reward": "measure", "mu": mu, "beta": beta, "rates": "eir"}
       for mu in (0.5, 0.75, 1.0) for beta in (0.05, 0.1)},
    **{f"trial-mu{mu:g}-beta{beta:g}": {"reward": "measure", "unit": "trial", "mu": mu, "beta": beta}
       for mu in (0.1, 0.15, 0.2) for beta in (0.0, 0.03, 0.05)},
    **{f"trial-mu{mu:g}-eir0.1": {"reward": "measure", "unit": "trial", "mu": mu, "beta": 0.1, "rates": "eir"}
       for mu in (0.15, 0.2)},
    **{f"retrial-mu{mu:g}-eir0.1": {"reward": "measure", "unit": "retrial", "mu": mu, "beta": 0.1, "rates": "eir"}
       for mu in (0.02, 0.05, 0.1, 0.2)},
    **{f"retrial-mu{mu:g}-beta0": {"reward": "measure", "unit": "retrial", "mu": mu, "beta": 0.0}
       for mu in (0.05, 0.1)},
    **{f"retrial-mu{mu:g}-eir{beta:g}": {"reward": "measure", "unit": "retrial", "mu": mu, "beta": beta,
                                         "rates": "eir"} for mu in (0.12, 0.15) for beta in (0.1, 0.2)},
    **{f"stake-mu{mu:g}-eir{beta:g}": {"reward": "measure", "unit": "stake", "mu": mu, "beta": beta, "rates": "eir"}
       for mu in (0.5, 0.75, 1.0) for beta in (0.1, 0.2, 0.3, 0.4)},
}
"""The compared rewards: DESIGN's ``outcome`` and the ``evidence`` reading (baselines) and the
``measure`` family over μ (what a new test of stability is worth), β (the weight of the rates) and
which rates the shaping pays (both, or only EIR's), per claim or per trial; and the ``retrial`` and
``stake`` units, which pay every challenge that puts knowledge at stake, tested before or not (a
stagnant state's challenge tests stability again when there is nothing new to draw out)."""

REWARD_BASELINES = ("outcome", "evidence", "evidence-lam0")


@dataclass
class CandidateResult:
    """One trained candidate and its rows."""

    name: str
    config: PPOConfig
    seconds: float
    rows: dict[str, PolicyReport]
    actor: dict[str, np.ndarray] = field(repr=False, default_factory=dict)


@dataclass
class Comparison:
    """The whole comparison."""

    steps: int
    seed: int
    candidates: list[CandidateResult]
    baselines: dict[str, list[PolicyReport]]
    selection: Selection
    sets: list[EvalSet]

    def rows(self, set_name: str) -> list[PolicyReport]:
        """All rows of one set: candidates (the chosen one marked ``trained``), then baselines."""
        out = []
        for c in self.candidates:
            row = c.rows[set_name]
            role = "trained" if c.name == self.selection.chosen else "candidate"
            out.append(replace(row, role=role))
        return out + self.baselines[set_name]

    def text(self) -> str:
        """One table per set; the selection rule and its outcome."""
        lines = [f"reward comparison: seed {self.seed}, {self.steps} steps per candidate", LEGEND, ""]
        for s in self.sets:
            lines.append(s.describe())
            lines.append(format_table(self.rows(s.name)))
            lines.append("")
        sel = self.selection
        lines.append(f"selection on the validation set (rule {sel.rule}): floors rho(k,Score) >= "
                     f"{sel.score_rho_floor:.3f}, rho(1-s,R-) >= {sel.instability_rho_floor:.3f}; "
                     f"eligible: {', '.join(sel.eligible) or 'none'}; chosen: {sel.chosen}")
        return "\n".join(lines) + "\n"

    def as_dict(self) -> dict:
        """JSON-ready dict (configs, rows per set, selection)."""
        return {
            "steps": self.steps, "seed": self.seed,
            "candidates": {c.name: {"config": c.config.as_dict(), "seconds": round(c.seconds, 1),
                                    "reward": c.config.reward_spec().card()} for c in self.candidates},
            "sets": {s.name: {"description": s.describe(), "protocol": s.protocol(),
                              "rows": [r.as_dict() for r in self.rows(s.name)]} for s in self.sets},
            "selection": self.selection.as_dict(),
            "table": self.text(),
        }


def candidate_config(name: str, steps: int, seed: int) -> PPOConfig:
    """The configuration of a named candidate.

    Raises:
        ValueError: unknown name (the message lists the known ones).
    """
    if name not in CANDIDATES:
        raise ValueError(f"unknown candidate {name!r}; known: {', '.join(CANDIDATES)}")
    return PPOConfig(steps=steps, seed=seed, **CANDIDATES[name])


def compare(steps: int, seed: int = 0, names: Sequence[str] | None = None,
            sets: Sequence[EvalSet] | None = None,
            on_result: Callable[[CandidateResult], None] | None = None) -> Comparison:
    """Train each candidate with ``steps`` and ``seed``, evaluate all of them and the baselines.

    Args:
        steps: decisions simulated per training run.
        seed: the seed of every run.
        names: candidates to train (default: all of :data:`CANDIDATES`).
        sets: evaluation sets; the first one selects (default: validation, held-out, shifted).
        on_result: called after each candidate is trained and evaluated.
    """
    sets = list(sets) if sets is not None else [validation_set(), heldout_set(), shifted_set()]
    names = list(names) if names is not None else list(CANDIDATES)
    results = []
    for name in names:
        config = candidate_config(name, steps, seed)
        run = train(config)
        policy = NetworkPolicy(run.actor, name=name, version=config.reward_spec().label)
        rows = {s.name: evaluate_policy(policy, name, s, role="candidate") for s in sets}
        result = CandidateResult(name, config, run.seconds, rows, run.actor)
        results.append(result)
        if on_result is not None:
            on_result(result)
    untrained = NetworkPolicy(untrained_actor(seed), name="untrained", version=f"init-seed{seed}")
    baselines = {s.name: [evaluate_policy(untrained, "untrained", s)]
                 + [evaluate_policy(p, eval_set=s) for p in baseline_policies()] for s in sets}
    selection = select_candidate([r.rows[sets[0].name] for r in results] + baselines[sets[0].name])
    return Comparison(steps, seed, results, baselines, selection, sets)


def _row_from_dict(data: Mapping[str, Any]) -> PolicyReport:
    """A :class:`PolicyReport` back from its :meth:`~PolicyReport.as_dict` (None was NaN)."""
    return PolicyReport(**{f.name: (math.nan if data.get(f.name) is None and f.type in ("float", float)
                                    else data[f.name]) for f in fields(PolicyReport) if f.name in data})


def merge(parts: Sequence[Mapping[str, Any]]) -> Comparison:
    """One comparison from several ``compare`` runs (their :meth:`Comparison.as_dict`), as if all the
    candidates had been trained in one run: training and evaluation are deterministic for a seed, so
    a candidate's rows do not depend on the run it was trained in. The baselines are taken from the
    first part; the selection is made again over every candidate.

    Raises:
        ValueError: the parts differ in seed, steps or sets, or a candidate appears twice.
    """
    if not parts:
        raise ValueError("nothing to merge")
    first = parts[0]
    set_names = list(first["sets"])
    makers = {"validation": validation_set, "held-out": heldout_set, "shifted": shifted_set}
    for part in parts[1:]:
        if (part["seed"], part["steps"], list(part["sets"])) != (first["seed"], first["steps"], set_names):
            raise ValueError("comparisons to merge must share seed, steps and sets "
                             f"({part['seed']}, {part['steps']}, {list(part['sets'])} vs "
                             f"{first['seed']}, {first['steps']}, {set_names})")
    unknown = [n for n in set_names if n not in makers]
    if unknown:
        raise ValueError(f"cannot merge comparisons over the sets {unknown}; known: {', '.join(makers)}")
    results: list[CandidateResult] = []
    seen: set[str] = set()
    for part in parts:
        for name, cand in part["candidates"].items():
            if name in seen:
                raise ValueError(f"candidate {name!r} appears in more than one comparison")
            seen.add(name)
            rows = {}
            for set_name in set_names:
                data = next(r for r in part["sets"][set_name]["rows"] if r["label"] == name)
                rows[set_name] = replace(_row_from_dict(data), role="candidate")
            results.append(CandidateResult(name, PPOConfig(**cand["config"]), float(cand["seconds"]), rows))
    baselines = {n: [_row_from_dict(r) for r in first["sets"][n]["rows"] if r["role"] == "baseline"]
                 for n in set_names}
    sets = [makers[n]() for n in set_names]
    selection = select_candidate([r.rows[set_names[0]] for r in results] + baselines[set_names[0]])
    return Comparison(int(first["steps"]), int(first["seed"]), results, baselines, selection, sets)
