"""Questioning policies: the trained network (ONNX, run by onnxruntime alone) and the baselines.

Every policy maps states [N, 7] (see :mod:`engine.policy.features`) to probabilities [N, 2] over
:data:`~engine.policy.features.ACTIONS` and chooses by **sampling** from them with the caller's
seeded ``numpy.random.Generator``: the trained policy is used as the stochastic policy PPO optimised,
its probabilities are what the app shows, and a session is reproducible for a seed. Rule policies
have one-hot probabilities, so sampling returns their rule's action. ``OnnxPolicy(greedy=True)``
takes the most probable action instead (ties go to follow-up).

Names accepted by :func:`load_policy`: ``onnx``, ``threshold``, ``random``, ``always-follow-up``,
``always-challenge``.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np

from engine.policy import network
from engine.policy.features import ACTIONS, DELTA, FEATURE_NAMES, N_FEATURES, PREV_NONE
from engine.policy.network import Params

POLICY_NAMES: tuple[str, ...] = ("onnx", "threshold", "random", "always-follow-up", "always-challenge")
DEFAULT_MODEL = "policy.onnx"

FOLLOW_UP = ACTIONS.index("follow-up")
CHALLENGE = ACTIONS.index("challenge")


class PolicyError(ValueError):
    """A policy model cannot be loaded (missing file, wrong graph, feature order mismatch).

    A ``ValueError``, like an unknown policy name, so a caller validating the user's policy choice
    catches both with one clause."""


class Policy:
    """Base of all policies.

    Attributes:
        name: the policy's name (``onnx``, ``threshold``, ...).
        version: what identifies its behaviour: ``sha256:<12 hex>`` of an ONNX file, or the rule name.
        greedy: choose the most probable action instead of sampling.
    """

    name: str = ""
    version: str = ""
    greedy: bool = False

    def probs(self, states: np.ndarray) -> np.ndarray:
        """Action probabilities.

        Args:
            states: float32 [N, 7].

        Returns:
            float32 [N, 2]: column 0 follow-up, column 1 challenge.
        """
        raise NotImplementedError

    def act(self, states: np.ndarray, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
        """Choose actions for a batch of states (the evaluation's entry point).

        Draws exactly one uniform number per state from ``rng`` (also when greedy), so the stream a
        caller shares with other code advances the same way whatever the policy.

        Returns:
            (action indices int64 [N], probabilities float32 [N, 2]).
        """
        states = _as_states(states)
        probs = np.asarray(self.probs(states), dtype=np.float32)
        u = rng.random(states.shape[0])
        if self.greedy:
            actions = (probs[:, CHALLENGE] > probs[:, FOLLOW_UP]).astype(np.int64)
        else:
            actions = (u < probs[:, CHALLENGE]).astype(np.int64)
        return actions, probs

    def choose(self, state: np.ndarray, rng: np.random.Generator) -> tuple[str, list[float]]:
        """Choose the next action for one session (the interview runner's entry point).

        Args:
            state: float32 [7] from :func:`engine.policy.features.state_vector`.
            rng: the session's seeded generator.

        Returns:
            (action name from :data:`ACTIONS`, [p(follow-up), p(challenge)]).
        """
        actions, probs = self.act(np.asarray(state, dtype=np.float32).reshape(1, -1), rng)
        return ACTIONS[int(actions[0])], [float(p) for p in probs[0]]

    def __repr__(self) -> str:
        """``<Class name version>``."""
        return f"<{type(self).__name__} {self.name} {self.version}>"


class OnnxPolicy(Policy):
    """The trained actor, run by onnxruntime (the ``onnx`` package is not needed)."""

    name = "onnx"

    def __init__(self, path: str | Path | None = None, greedy: bool = False):
        """Args:
            path: the ``.onnx`` file; default ``models/policy.onnx`` shipped with viva.
            greedy: take the most probable action instead of sampling.

        Raises:
            PolicyError: the file is missing, is not a policy graph, or its metadata names features
                in another order than :data:`engine.policy.features.FEATURE_NAMES`.
        """
        import onnxruntime as ort

        from engine.policy.export import file_sha256

        if path is None:
            from models import model_file

            path = model_file(DEFAULT_MODEL)
        self.path = Path(path)
        self.greedy = greedy
        if not self.path.is_file():
            raise PolicyError(
                f"policy model {self.path} not found; train one with `viva policy train --out {self.path}` "
                "or choose a rule policy (threshold, random, always-follow-up, always-challenge)"
            )
        options = ort.SessionOptions()
        options.intra_op_num_threads = 1
        options.inter_op_num_threads = 1
        try:
            self.session = ort.InferenceSession(str(self.path), options, providers=["CPUExecutionProvider"])
        except Exception as exc:  # onnxruntime raises several unrelated types for bad files
            raise PolicyError(f"policy model {self.path} cannot be loaded by onnxruntime: {exc}") from None
        inputs, outputs = self.session.get_inputs(), self.session.get_outputs()
        if [i.name for i in inputs] != ["state"] or [o.name for o in outputs] != ["probs"]:
            raise PolicyError(f"policy model {self.path}: expected input 'state' and output 'probs', got "
                              f"{[i.name for i in inputs]} -> {[o.name for o in outputs]}")
        meta = self.session.get_modelmeta().custom_metadata_map
        if "features" in meta and json.loads(meta["features"]) != list(FEATURE_NAMES):
            raise PolicyError(f"policy model {self.path} was trained on features {meta['features']}, "
                              f"this viva computes {list(FEATURE_NAMES)}; retrain it")
        self.sha256 = file_sha256(self.path)
        self.version = f"sha256:{self.sha256[:12]}"

    def probs(self, states: np.ndarray) -> np.ndarray:  # noqa: D102
        return self.session.run(["probs"], {"state": _as_states(states)})[0]


class NetworkPolicy(Policy):
    """An actor held as numpy parameters (the untrained baseline; training-time checks)."""

    def __init__(self, actor: Params, name: str = "network", version: str = "", greedy: bool = False):
        """Args:
            actor: actor parameters (see :mod:`engine.policy.network`).
            name: display name.
            version: what identifies the parameters (e.g. ``init-seed0``).
            greedy: take the most probable action instead of sampling.
        """
        self.actor = actor
        self.name = name
        self.version = version
        self.greedy = greedy

    def probs(self, states: np.ndarray) -> np.ndarray:  # noqa: D102
        return network.actor_probs(self.actor, _as_states(states)).astype(np.float32)


class ThresholdPolicy(Policy):
    """Challenge iff the last turn did not raise the score (Δs <= 0), else follow up.

    At ``t = 0`` Δs is undefined (``prev_none`` is set): the rule follows up, since there is no
    evidence yet of stagnation. It achieves FDR = EIR = 1 by construction.
    """

    name = "threshold"
    version = "threshold:delta<=0"

    def probs(self, states: np.ndarray) -> np.ndarray:  # noqa: D102
        states = _as_states(states)
        challenge = (states[:, DELTA] <= 0.0) & (states[:, PREV_NONE] < 0.5)
        return _one_hot(challenge)


class RandomPolicy(Policy):
    """Follow up or challenge with probability 1/2 each."""

    name = "random"
    version = "random:0.5"

    def probs(self, states: np.ndarray) -> np.ndarray:  # noqa: D102
        return np.full((_as_states(states).shape[0], len(ACTIONS)), 0.5, dtype=np.float32)


class ConstantPolicy(Policy):
    """Always the same action."""

    def __init__(self, action: str):
        """Args:
            action: one of :data:`ACTIONS`.
        """
        if action not in ACTIONS:
            raise ValueError(f"unknown action {action!r}; expected one of {', '.join(ACTIONS)}")
        self.action = action
        self.name = f"always-{action}"
        self.version = self.name

    def probs(self, states: np.ndarray) -> np.ndarray:  # noqa: D102
        count = _as_states(states).shape[0]
        return _one_hot(np.full(count, self.action == "challenge"))


def load_policy(name: str, model_path: str | None = None) -> Policy:
    """The policy called ``name``.

    Args:
        name: one of :data:`POLICY_NAMES`.
        model_path: for ``onnx``, the model file (default: the shipped ``models/policy.onnx``).

    Raises:
        ValueError: unknown name (the message lists the valid ones).
        PolicyError: the ONNX model cannot be loaded.
    """
    if name == "onnx":
        return OnnxPolicy(model_path)
    if name == "threshold":
        return ThresholdPolicy()
    if name == "random":
        return RandomPolicy()
    if name == "always-follow-up":
        return ConstantPolicy("follow-up")
    if name == "always-challenge":
        return ConstantPolicy("challenge")
    raise ValueError(f"unknown policy {name!r}; valid policies: {', '.join(POLICY_NAMES)}")


def _as_states(states: np.ndarray) -> np.ndarray:
    arr = np.asarray(states, dtype=np.float32)
    if arr.ndim != 2 or arr.shape[1] != N_FEATURES:
        raise ValueError(f"states must have shape [N, {N_FEATURES}], got {list(arr.shape)}")
    return arr


def _one_hot(challenge: np.ndarray) -> np.ndarray:
    out = np.zeros((challenge.shape[0], len(ACTIONS)), dtype=np.float32)
    out[:, CHALLENGE] = challenge
    out[:, FOLLOW_UP] = ~challenge
    return out


__all__ = [
    "POLICY_NAMES", "ConstantPolicy", "NetworkPolicy", "OnnxPolicy", "Policy", "PolicyError",
    "RandomPolicy", "ThresholdPolicy", "load_policy",
]
