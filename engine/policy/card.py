"""The model card ``policy.json`` written next to every exported ``policy.onnx``."""

from __future__ import annotations

import json
import platform
import sys
from pathlib import Path
from typing import Any

import numpy as np

from engine.policy import evaluate, simulator
from engine.policy.evaluate import EvalReport
from engine.policy.export import IR_VERSION, OPSET
from engine.policy.features import (
    ACTIONS,
    COS_WHEN_UNDEFINED,
    DELTA_WHEN_UNDEFINED,
    FEATURE_NAMES,
    PREV_ACTIONS,
)
from engine.policy.ppo import PPOConfig, TrainResult
from engine.policy.reward import LAMBDA, TAU


def card_path(model_path: str | Path) -> Path:
    """Where the card of a model lives: same name, ``.json``."""
    return Path(model_path).with_suffix(".json")


def build_card(result: TrainResult, model_path: str | Path, sha256: str, report: EvalReport, table: str,
               calibration: str | None = None, reproducibility: dict[str, Any] | None = None,
               selection: dict[str, Any] | None = None) -> dict[str, Any]:
    """The card as a dict.

    Args:
        result: the training run.
        model_path: the exported ``.onnx``.
        sha256: its sha256.
        report: the evaluation on the held-out and shifted sets.
        table: the evaluation tables as printed by ``viva policy eval``.
        calibration: the ``--targets`` file the simulator was calibrated from, if any.
        reproducibility: the comparison with the model the file replaced, if any.
        selection: how the reward was chosen among candidates (``bench/policy.py``), if known.
    """
    cfg = result.config
    return {
        "name": "viva questioning policy",
        "file": Path(model_path).name,
        "sha256": sha256,
        "format": {
            "input": "state float32 [N, 7]",
            "output": "probs float32 [N, 2]",
            "ops": ["MatMul", "Add", "Tanh", "Softmax"],
            "opset": OPSET,
            "ir_version": IR_VERSION,
            "runtime": "onnxruntime only",
        },
        "features": list(FEATURE_NAMES),
        "features_at_t0": {"delta": DELTA_WHEN_UNDEFINED, "cos": COS_WHEN_UNDEFINED,
                           "prev": PREV_ACTIONS[0]},
        "prev_actions": list(PREV_ACTIONS),
        "actions": list(ACTIONS),
        "decision": "sample an action from probs with the session's seeded generator "
                    "(OnnxPolicy(greedy=True) takes the most probable one)",
        "reward": cfg.reward_spec().card(),
        "simulator": {
            "turns": cfg.turns,
            "criteria": list(simulator.CRITERIA),
            "ranges": {k: list(v) for k, v in simulator.PARAM_RANGES.items()},
            "calibrated_from": calibration,
            "embed_dim": simulator.EMBED_DIM,
            "retract_share": simulator.RETRACT_SHARE,
            "wrong_draw": simulator.WRONG_DRAW,
            "heldout_seed": simulator.HELDOUT_SEED,
            "shifted": {"seed": simulator.SHIFT_SEED, "criteria": list(simulator.SHIFT_CRITERIA),
                        "ranges": {k: list(v) for k, v in simulator.SHIFT_RANGES.items()}},
            "validation_seed": simulator.VALIDATION_SEED,
        },
        "training": {
            "seed": cfg.seed,
            "steps": result.steps,
            "steps_requested": cfg.steps,
            "updates": len(result.history),
            "seconds": round(result.seconds, 1),
            "final_mean_return": round(result.history[-1].mean_return, 4),
            "hyperparameters": {k: v for k, v in cfg.as_dict().items() if k not in ("steps", "seed")},
            "numpy": np.__version__,
            "python": sys.version.split()[0],
            "platform": platform.platform(),
        },
        "evaluation": {
            "protocol": {
                "sets": report.protocols,
                "policy_seed": evaluate.POLICY_SEED,
                "chunk_targets": evaluate.CHUNK_TARGETS,
                "bootstrap": evaluate.BOOTSTRAP,
            },
            **report.as_dict(),
            "rows": [r.as_dict() for r in report.sets["held-out"]],
            "table": table,
        },
        "selection": selection,
        "reproducibility": {
            "command": _command(cfg),
            "determinism": "one numpy Generator seeded with the seed drives initialisation, simulation, "
                           "sampling and minibatches in a fixed order; the same seed and steps give the "
                           "same float64 weights and the same .onnx bytes on the same numpy/BLAS build",
            **(reproducibility or {}),
        },
    }


def _command(cfg: PPOConfig) -> str:
    parts = [f"python bench/policy.py train --seed {cfg.seed} --steps {cfg.steps}"]
    if cfg.reward != "outcome":
        parts.append(f"--reward {cfg.reward}")
    if cfg.tau != TAU:
        parts.append(f"--tau {cfg.tau}")
    if cfg.lam != LAMBDA and cfg.reward != "measure":
        parts.append(f"--lam {cfg.lam}")
    if cfg.reward == "measure":
        parts.append(f"--mu {cfg.mu:g} --cost {cfg.cost:g} --beta {cfg.beta:g} --rates {cfg.rates} --unit {cfg.unit}")
    return " ".join(parts + ["--out models/policy.onnx"])


def write_card(card: dict[str, Any], path: str | Path) -> None:
    """Write the card as indented JSON."""
    Path(path).write_text(json.dumps(card, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")


def read_card(path: str | Path) -> dict[str, Any] | None:
    """The card at ``path``, or ``None`` when there is none."""
    path = Path(path)
    return json.loads(path.read_text(encoding="utf-8")) if path.is_file() else None
