"""The reward of the questioning policy: the constants live here and nowhere else.

TestAgent's Eq. 2 did not survive in the paper's text we have; this is viva's reading of it
(DESIGN.md, "Policy"), the ``outcome`` reward every shipped model is trained with:

- follow-up: ``r = Δs + λ·(1 − cos)``: new knowledge (score gain) plus new content (summary moved);
- challenge: ``r = |Δs| − τ``: positive when the challenge moved the score by more than ``τ`` (it
  exposed instability or drew a correction), negative when the answer simply held;

where ``Δs`` and ``cos`` are those of the turn the action *produced*.

``evidence`` is an experimental alternative, kept so that the figures quoted in the model card's
notes can be reproduced (``viva policy train --reward evidence``): it scores a decision against the
evidence it was taken on, ``Δs_t`` and ``cos_t`` of the turn the action *responds to* (as encoded in
the state, so 0 and 1 at t = 0): follow-up ``Δs_t + λ·(1 − cos_t)``, challenge ``τ − Δs_t``.

The constants are written into the model card (``models/policy.json``) by the trainer.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass

import numpy as np

TAU = 0.1
"""Score fluctuation threshold τ: a challenge pays only if it moves the score by more than this."""

LAMBDA = 0.5
"""Semantic variation weight λ of the follow-up reward."""

KINDS: tuple[str, ...] = ("outcome", "evidence")
"""Reward definitions: ``outcome`` (the default, DESIGN.md) and the experimental ``evidence``."""

FORMULAS = {
    "outcome": {"follow_up": "delta + lambda * (1 - cos)", "challenge": "abs(delta) - tau",
                "note": "delta and cos of the turn the action produced"},
    "evidence": {"follow_up": "delta_t + lambda * (1 - cos_t)", "challenge": "tau - delta_t",
                 "note": "delta_t and cos_t of the turn the action responds to (state encoding)"},
}


def reward(action: np.ndarray, delta: np.ndarray, cos: np.ndarray,
           tau: float = TAU, lam: float = LAMBDA) -> np.ndarray:
    """``outcome`` rewards of a batch of transitions.

    Args:
        action: action indices (0 follow-up, 1 challenge; see ``features.ACTIONS``), shape [B].
        delta: ``Δs`` of the turn each action produced, shape [B].
        cos: ``cos`` of that turn, shape [B].
        tau: τ (default :data:`TAU`).
        lam: λ (default :data:`LAMBDA`).

    Returns:
        float64 rewards, shape [B].
    """
    action = np.asarray(action)
    delta = np.asarray(delta, dtype=np.float64)
    cos = np.asarray(cos, dtype=np.float64)
    follow_up = delta + lam * (1.0 - cos)
    challenge = np.abs(delta) - tau
    return np.where(action == 1, challenge, follow_up)


def evidence_reward(action: np.ndarray, delta_t: np.ndarray, cos_t: np.ndarray,
                    tau: float = TAU, lam: float = LAMBDA) -> np.ndarray:
    """``evidence`` rewards (experimental): the decision scored on the turn it responds to.

    Args:
        action: action indices, shape [B].
        delta_t: ``Δs_t`` as encoded in the state the decision was taken in, shape [B].
        cos_t: ``cos_t`` as encoded in that state, shape [B].
        tau: τ.
        lam: λ.
    """
    action = np.asarray(action)
    delta_t = np.asarray(delta_t, dtype=np.float64)
    cos_t = np.asarray(cos_t, dtype=np.float64)
    return np.where(action == 1, tau - delta_t, delta_t + lam * (1.0 - cos_t))


@dataclass(frozen=True)
class RewardSpec:
    """Which reward, with which constants."""

    kind: str = "outcome"
    tau: float = TAU
    lam: float = LAMBDA

    def __post_init__(self) -> None:
        if self.kind not in KINDS:
            raise ValueError(f"unknown reward {self.kind!r}; expected one of {', '.join(KINDS)}")

    def __call__(self, action: np.ndarray, delta: np.ndarray, cos: np.ndarray,
                 delta_t: np.ndarray, cos_t: np.ndarray) -> np.ndarray:
        """Rewards given the produced turn (``delta``, ``cos``) and the state's (``delta_t``, ``cos_t``)."""
        if self.kind == "evidence":
            return evidence_reward(action, delta_t, cos_t, self.tau, self.lam)
        return reward(action, delta, cos, self.tau, self.lam)

    def card(self) -> dict:
        """The reward as written into the model card."""
        return {"kind": self.kind, "tau": self.tau, "lambda": self.lam, **FORMULAS[self.kind]}

    def as_dict(self) -> dict:
        """Plain dict of the fields."""
        return asdict(self)


def constants() -> dict[str, float]:
    """The default reward constants."""
    return {"tau": TAU, "lambda": LAMBDA}
