"""Train, export, evaluate and write the card: what ``viva policy train`` does, as one function."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from engine.policy.card import build_card, card_path, read_card, write_card
from engine.policy.evaluate import PolicyReport, check_goals, evaluate_all, evaluation_states, format_table
from engine.policy.export import export_onnx
from engine.policy.policies import NetworkPolicy, OnnxPolicy, Policy
from engine.policy.ppo import PPOConfig, TrainResult, Update, train, untrained_actor
from engine.policy.reward import RewardSpec

DEFAULT_STEPS = 400_000
DEFAULT_SEED = 0


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


def untrained_policy(seed: int, hidden: int) -> Policy:
    """The random-init network of a training run with ``seed`` (the "untrained" baseline)."""
    return NetworkPolicy(untrained_actor(seed, hidden), name="untrained", version=f"init-seed{seed}")


def evaluation_table(model: Policy, untrained: Policy,
                     reward: RewardSpec = RewardSpec()) -> tuple[list[PolicyReport], str]:
    """Evaluate a model against the baselines; return the rows and the printed table."""
    rows = evaluate_all(model, untrained, reward=reward)
    return rows, format_table(rows, check_goals(rows), reward)


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
                     on_update: Callable[[Update], None] | None = None) -> Shipped:
    """Train a policy, export it to ``out`` (ONNX) and write its card next to it.

    When ``out`` already holds a model, the new one is compared with it before it is replaced
    (bit-identical bytes? same actions on the evaluation states?) and the comparison goes into the
    card, which is how the shipped card records that retraining reproduces the shipped file.

    Args:
        config: PPO configuration (seed, steps, ...).
        out: destination ``.onnx``; the card is written to the same name with ``.json``.
        sampler: target parameter sampler (calibration); default uniform ranges.
        calibration: name of the calibration file, recorded in the card.
        on_update: progress callback.
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
    rows, table = evaluation_table(model, untrained_policy(config.seed, config.hidden), config.reward_spec())
    card = build_card(result, out, sha, rows, check_goals(rows), table, calibration,
                      {"compared_with_previous_file": comparison} if comparison else None)
    write_card(card, card_path(out))
    return Shipped(result, out, sha, rows, table, card, comparison)
