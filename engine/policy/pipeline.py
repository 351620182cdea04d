"""Train, export, evaluate and write the card; evaluate a shipped model (``viva policy train | eval``).

The two entry points a command line calls:

- :func:`train_and_export`: train with PPO, export to ONNX, evaluate on the held-out and shifted
  sets, write the card next to the model (and compare with the file it replaces);
- :func:`eval_report`: evaluate a model file against the baselines on the held-out and shifted
  sets and, given a store and the targets' ground truth, on the logged real-engine sessions;
  ``.text()`` is the printed table, ``.as_dict()`` the JSON.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from engine.policy.card import build_card, card_path, read_card, write_card
from engine.policy.evaluate import (
    EvalReport,
    EvalSet,
    PolicyReport,
    TargetTruth,
    evaluate_logged,
    evaluation_states,
    load_truth,
    policy_report,
    truth_from_names,
)
from engine.policy.export import export_onnx
from engine.policy.logs import LoggedSession, load_store_sessions
from engine.policy.network import HIDDEN
from engine.policy.policies import NetworkPolicy, OnnxPolicy, Policy
from engine.policy.ppo import PPOConfig, TrainResult, Update, train, untrained_actor
from engine.policy.reward import RewardSpec

DEFAULT_STEPS = 400_000
DEFAULT_SEED = 0
FIXED_RULES = ("threshold", "random", "always-follow-up", "always-challenge")


@dataclass
class Shipped:
    """The outcome of :func:`train_and_export`."""

    result: TrainResult
    path: Path
    sha256: str
    rows: list[PolicyReport]
    table: str
    card: dict[str, Any]
    comparison: dict[str, Any] | None
    report: EvalReport | None = None


def untrained_policy(seed: int, hidden: int = HIDDEN) -> Policy:
    """The random-init network of a training run with ``seed`` (the "untrained" baseline)."""
    return NetworkPolicy(untrained_actor(seed, hidden), name="untrained", version=f"init-seed{seed}")


def evaluation_table(model: Policy, untrained: Policy,
                     reward: RewardSpec | None = None) -> tuple[list[PolicyReport], str]:
    """Evaluate a model against the baselines on the held-out and shifted sets.

    Args:
        model: the policy.
        untrained: the random-init network of its run.
        reward: the model's training reward, named in the table's header; a model file with a card
            is named by its card's reward instead.

    Returns:
        (the held-out rows, the printed tables of both sets).
    """
    label = reward.label if reward else None
    path = getattr(model, "path", None)
    if path is not None and read_card(card_path(path)) is not None:
        label = model_and_untrained(path)[2]
    report = policy_report(model, untrained, reward=label)
    return report.sets["held-out"], report.text(header=False)


def compare_models(old: Policy, new: Policy) -> dict[str, Any]:
    """Compare two policies on :func:`engine.policy.evaluate.evaluation_states`.

    Returns:
        ``states``, ``same_actions`` (how many states get the same most probable action) and
        ``max_prob_diff``.
    """
    states = evaluation_states()
    p_old, p_new = old.probs(states), new.probs(states)
    same = int((np.argmax(p_old, axis=1) == np.argmax(p_new, axis=1)).sum())
    return {"states": int(states.shape[0]), "same_actions": same,
            "max_prob_diff": float(np.abs(p_old - p_new).max())}


def train_and_export(config: PPOConfig, out: str | Path, sampler=None, calibration: str | None = None,
                     on_update: Callable[[Update], None] | None = None,
                     selection: dict[str, Any] | None = None, sets: Sequence[EvalSet] | None = None) -> Shipped:
    """Train a policy, export it to ``out`` (ONNX) and write its card next to it.

    When ``out`` already holds a model, the new one is compared with it before it is replaced
    (bit-identical bytes? same actions on the evaluation states?) and the comparison goes into the
    card, which is how the shipped card records that retraining reproduces the shipped file.

    Args:
        config: PPO configuration (seed, steps, reward, ...).
        out: destination ``.onnx``; the card is written to the same name with ``.json``.
        sampler: target parameter sampler (calibration); default uniform ranges.
        calibration: name of the calibration file, recorded in the card.
        on_update: progress callback.
        selection: how the reward was chosen (``bench/policy.py``), recorded in the card; when
            absent, the selection recorded in the card being replaced is kept (same reward only).
        sets: evaluation sets (default: held-out and shifted).
    """
    out = Path(out)
    previous: OnnxPolicy | None = None
    previous_bytes: bytes | None = None
    if out.is_file():
        previous_bytes = out.read_bytes()
        try:
            previous = OnnxPolicy(out)
        except Exception:  # an unreadable old file is simply replaced
            previous = None
    previous_card = read_card(card_path(out))
    result = train(config, sampler=sampler, on_update=on_update)
    sha = export_onnx(result.actor, out, {"seed": str(config.seed), "steps": str(config.steps)})
    model = OnnxPolicy(out)
    comparison = None
    if previous is not None and previous_bytes is not None:
        comparison = {
            "previous_sha256": previous.sha256,
            "bit_identical": previous_bytes == out.read_bytes(),
            **compare_models(previous, model),
        }
        if previous_card is not None:
            comparison["previous_training"] = {
                k: previous_card.get("training", {}).get(k) for k in ("seed", "steps", "seconds", "platform")
            }
    if selection is None and previous_card is not None and previous_card.get("reward") == config.reward_spec().card():
        selection = previous_card.get("selection")
    report = policy_report(model, untrained_policy(config.seed, config.hidden), sets=sets,
                           reward=config.reward_spec().label)
    table = report.text(header=False)
    card = build_card(result, out, sha, report, table, calibration,
                      {"compared_with_previous_file": comparison} if comparison else None, selection)
    write_card(card, card_path(out))
    return Shipped(result, out, sha, report.sets["held-out"], table, card, comparison, report)


# -- evaluating a shipped model -------------------------------------------------------------------
def model_and_untrained(model_path: str | Path | None = None) -> tuple[OnnxPolicy, Policy, str | None]:
    """The ONNX model, the untrained network of its run (seed and width from its card; seed
    :data:`DEFAULT_SEED` without a card) and its training reward's label (None without a card).

    Raises:
        PolicyError: the model cannot be loaded.
    """
    model = OnnxPolicy(model_path)
    card = read_card(card_path(model.path))
    if card is None:
        return model, untrained_policy(DEFAULT_SEED), None
    hidden = int(card["training"]["hyperparameters"].get("hidden", HIDDEN))
    r = card.get("reward", {})
    fields = {k: r[k] for k in ("tau", "mu", "cost", "beta", "unit", "rates") if k in r}
    if "lambda" in r:
        fields["lam"] = r["lambda"]
    reward = RewardSpec(r.get("kind", "outcome"), **fields)
    return model, untrained_policy(int(card["training"]["seed"]), hidden), reward.label


def logged_rows(store_path: str | Path, truth: Mapping[str, TargetTruth] | None, model: Policy
                ) -> list[PolicyReport]:
    """One real-engine row per policy version found in the store's logged sessions of targets with
    known truth: role ``trained`` for ``model``'s version, ``baseline`` for the fixed rules,
    ``candidate`` for any other.

    Args:
        store_path: a ``viva.db``, a data home or a folder of homes (``bench/validity.py --keep``).
        truth: target -> truth; None: read from the target names
            (:func:`~engine.policy.evaluate.truth_from_names`), and then the targets are the validity
            benchmark's two grids: ρ(k, Score) is over the u = 0 grid, ρ(1−σ, R−) over the k = 1 grid
            (:func:`~engine.policy.evaluate.grid_masks`).
        model: the evaluated model (its version marks the ``trained`` row).

    Raises:
        FileNotFoundError: no store at ``store_path``.
        ValueError: no logged session of a target with known truth.
    """
    sessions = load_store_sessions(store_path)
    grids = truth is None
    if truth is None:
        truth = truth_from_names(list(sessions))
        if not truth:
            raise ValueError(f"{store_path}: no logged target name carries its truth (k<k>_u<u>, as the validity "
                             "benchmark's python targets); pass a truth file")
    by_version: dict[str, dict[str, list[LoggedSession]]] = {}
    names: dict[str, str] = {}
    for target, group in sessions.items():
        if target not in truth:
            continue
        for s in group:
            version = s.policy_version or s.policy
            by_version.setdefault(version, {}).setdefault(target, []).append(s)
            names[version] = s.policy
    if not by_version:
        raise ValueError(f"{store_path}: no finished adaptive session of a target with known truth "
                         f"(targets with truth: {', '.join(sorted(truth))})")
    rows = []
    for version in sorted(by_version, key=lambda v: (v != model.version, v)):
        name = names[version]
        role = "trained" if version == model.version else "baseline" if name in FIXED_RULES else "candidate"
        label = "trained" if role == "trained" else name or version
        rows.append(evaluate_logged(by_version[version], truth, label, role=role, grids=grids))
    return rows


def eval_report(model_path: str | Path | None = None, store: str | Path | None = None,
                truth: Mapping[str, TargetTruth] | str | Path | None = None,
                sets: Sequence[EvalSet] | None = None) -> EvalReport:
    """What ``viva policy eval`` prints: the model against the baselines on the held-out and shifted
    simulated sets and, when ``store`` is given, on the sessions logged there.

    Args:
        model_path: the ``.onnx`` (default: the shipped ``models/policy.onnx``).
        store: a viva store (``viva.db`` or a data home) holding real-engine sessions, e.g. from
            ``bench/validity.py``; one row per policy version that ran them.
        truth: target -> :class:`~engine.policy.evaluate.TargetTruth`, or a JSON file of
            ``{"target": {"knowledge": k, "instability": u}}``; None with a store: read from the
            target names (the validity benchmark's ``k<k>_u<u>_<style>``).
        sets: simulated sets (default: held-out and shifted).

    Returns:
        The :class:`~engine.policy.evaluate.EvalReport` (``.text()``, ``.as_dict()``).

    Raises:
        PolicyError: the model cannot be loaded.
        ValueError: a truth without a store, a malformed truth file, or no logged target with a
            known truth.
    """
    if store is None and truth is not None:
        raise ValueError("a truth file needs a store (--store) whose logged sessions it describes")
    model, untrained, reward = model_and_untrained(model_path)
    rows: list[PolicyReport] = []
    if store is not None:
        known = None if truth is None else load_truth(truth) if isinstance(truth, (str, Path)) else dict(truth)
        rows = logged_rows(store, known, model)
    report = policy_report(model, untrained, sets=sets, logged_rows=rows, reward=reward)
    if rows and truth is None:
        report.descriptions["real-engine"] += ("; truth from the target names, rho(k,Score) over the u = 0 grid "
                                               "and rho(1-s,R-) over the k = 1 grid")
    return report

