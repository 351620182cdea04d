"""The rewards of the questioning policy: the constants live here and nowhere else.

Three definitions (``RewardSpec.kind``), each computed on one transition: the decision state after
turn ``t`` (``Δs_t``, ``cos_t`` as encoded in the state; ``first`` marks the decision after turn 0),
the action, and the turn ``t + 1`` it produced (``Δs``, ``cos``; for ``measure`` also the
simulator's claim bookkeeping, :class:`Transition`).

- ``outcome`` (DESIGN.md, "Policy"; viva's reading of TestAgent's lost Eq. 2), on the produced turn:
  follow-up ``Δs + λ·(1 − cos)``, challenge ``|Δs| − τ``. Kept as a named baseline: its optimum
  challenges right after a gain (a challenge can only move the score by what is at stake).
- ``evidence`` (kept as a named baseline), on the decision state: follow-up ``Δs_t + λ·(1 − cos_t)``,
  challenge ``τ − Δs_t``. Its optimum with λ = 0 is the threshold rule.
- ``measure`` (new): pays what a turn adds to the *measurement*:

  - every turn, ``Δs``: the knowledge the target has on record after the turn minus before. Summed
    over a session this is ``s_{T−1} − s_0``: the Score is what is measured, so drawing knowledge
    out pays, and a retraction the session does not recover costs what the Score loses;
  - a challenge, in addition, ``μ·u − c``: what the challenge tests, by ``unit``: ``claim`` (the
    first definition): ``u`` is the share of the item's criteria that are covered claims the
    challenge put at stake **for the first time in the session**; ``stake`` (the shipped model's):
    the share of the item's criteria that are covered claims at stake, **tested before or not**
    (stability is a per-challenge chance: a target that held once may give way the next time, so a
    re-test of the same knowledge reveals instability or rules it out again, and when a follow-up
    has nothing new to draw out that is all a turn can still measure); ``trial``/``retrial``: 1 per
    such challenge whatever its size. ``c`` prices a challenge that tests nothing (nothing covered
    at stake);
  - optionally ``β·g``, a shaping term for TestAgent's strategic rates on the decision state:
    ``g = +1`` for a challenge when ``Δs_t <= 0`` or a follow-up when ``Δs_t > τ``, ``−1`` for the
    opposite choices, ``0`` after turn 0 and when ``0 < Δs_t <= τ`` (the states FDR and EIR do not
    count); ``rates = eir`` (``fdr``) counts only the gaining (stagnant) states. ``β = 0`` is the
    pure measurement reward; ``β > 0`` trades measurement for the rates.

  ``u`` needs the claim bookkeeping only the simulator has (which claims are covered, which were at
  stake before); training happens in simulation, so the reward may use it, while the policy sees
  only its 7 features.

The constants are written into the model card (``models/policy.json``) by the trainer.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass

import numpy as np

TAU = 0.1
"""Score fluctuation threshold τ (outcome: a challenge pays only if it moves the score by more than
this; the strategic rates call a state *gaining* when Δs > τ)."""

LAMBDA = 0.5
"""Semantic variation weight λ of the outcome and evidence follow-up rewards."""

MU = 1.0
"""Weight μ of the untested claims a challenge puts at stake (measure)."""

COST = 0.02
"""Price c of a challenge (measure)."""

BETA = 0.0
"""Weight β of the strategic-rate shaping term (measure); 0 = pure measurement."""

RATES: tuple[str, ...] = ("both", "eir", "fdr")
"""Which side of the rate term ``measure`` pays: both rates, only EIR's gaining states, only FDR's
stagnant states."""

UNITS: tuple[str, ...] = ("claim", "trial", "retrial", "stake")
"""How ``measure`` counts what a challenge tests: ``claim``: the share of the item's criteria that are
covered claims put at stake for the first time; ``trial``: 1 when at least one such claim is at stake
(one new observation of the target's stability, whatever its size), else 0; ``retrial``: 1 when any
covered claim is at stake, tested before or not (every such challenge is one more Bernoulli draw of
the target's stability: a target that held once may give way the next time), else 0; ``stake``: the
share of the item's criteria that are covered claims at stake, tested before or not."""

SHIPPED: dict[str, object] = {"kind": "measure", "mu": 0.75, "cost": COST, "beta": 0.4, "unit": "stake",
                              "rates": "eir"}
"""The reward ``models/policy.onnx`` was trained with (:meth:`RewardSpec.shipped`; the model card
records the same)."""

KINDS: tuple[str, ...] = ("outcome", "evidence", "measure")
"""Reward definitions: ``outcome`` (DESIGN.md), ``evidence`` and ``measure``."""

FORMULAS = {
    "outcome": {"follow_up": "delta + lambda * (1 - cos)", "challenge": "abs(delta) - tau",
                "note": "delta and cos of the turn the action produced"},
    "evidence": {"follow_up": "delta_t + lambda * (1 - cos_t)", "challenge": "tau - delta_t",
                 "note": "delta_t and cos_t of the turn the action responds to (state encoding)"},
    "measure": {"follow_up": "delta + beta * rate_term",
                "challenge": "delta + mu * untested - cost + beta * rate_term",
                "note": "delta of the turn the action produced (summed over a session: the last score "
                        "minus the first); untested = covered claims the challenge put at stake for the "
                        "first time in the session, as a share of the item's criteria (simulator "
                        "bookkeeping); rate_term = +1 for a challenge when delta_t <= 0 or a follow-up "
                        "when delta_t > tau, -1 for the opposite, 0 after turn 0 and for 0 < delta_t <= tau; "
                        "rates = eir counts only the gaining states (delta_t > tau), rates = fdr only the "
                        "stagnant ones (delta_t <= 0); unit = trial: untested is 1 when positive; unit = retrial: "
                        "untested is replaced by 1 when any covered claim is at stake (tested before or not); "
                        "unit = stake: by the share of the item's criteria that are covered claims at stake"},
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
    """``evidence`` rewards: the decision scored on the turn it responds to.

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


def rate_term(action: np.ndarray, delta_t: np.ndarray, first: np.ndarray, tau: float = TAU,
              rates: str = "both") -> np.ndarray:
    """TestAgent's strategic rates as a per-decision score: +1 for the choice FDR/EIR count as right
    (challenge when ``Δs_t <= 0``, follow-up when ``Δs_t > τ``), −1 for the other one, 0 in the
    states the rates do not count (``first``: the decision after turn 0; ``0 < Δs_t <= τ``) and,
    with ``rates`` = ``eir`` or ``fdr``, in the other rate's states."""
    action = np.asarray(action)
    delta_t = np.asarray(delta_t, dtype=np.float64)
    counted = ~np.asarray(first, dtype=bool)
    stagnant = counted & (delta_t <= 0) & (rates != "eir")
    gaining = counted & (delta_t > tau) & (rates != "fdr")
    challenge = action == 1
    right = (stagnant & challenge) | (gaining & ~challenge)
    wrong = (stagnant & ~challenge) | (gaining & challenge)
    return right.astype(np.float64) - wrong.astype(np.float64)


def measure_reward(action: np.ndarray, delta: np.ndarray, untested: np.ndarray, delta_t: np.ndarray,
                   first: np.ndarray, mu: float = MU, cost: float = COST, beta: float = BETA,
                   tau: float = TAU, rates: str = "both") -> np.ndarray:
    """``measure`` rewards (see the module docstring).

    Args:
        action: action indices, shape [B].
        delta: ``Δs`` of the produced turn, shape [B].
        untested: covered claims the challenge put at stake for the first time, share of n, [B].
        delta_t: ``Δs_t`` of the decision state, [B].
        first: True for the decision after turn 0, [B].
        mu: μ.
        cost: c.
        beta: β.
        tau: τ (for the rate term's gaining states).
        rates: which states the rate term counts (:data:`RATES`).
    """
    challenge = np.asarray(action) == 1
    delta = np.asarray(delta, dtype=np.float64)
    out = delta + np.where(challenge, mu * np.asarray(untested, dtype=np.float64) - cost, 0.0)
    if beta:
        out = out + beta * rate_term(action, delta_t, first, tau, rates)
    return out


@dataclass
class Transition:
    """What a reward may be computed on, for a batch of transitions (arrays of shape [B])."""

    action: np.ndarray
    """The action taken (0 follow-up, 1 challenge)."""
    delta: np.ndarray
    """Δs of the turn the action produced."""
    cos: np.ndarray
    """cos of that turn."""
    delta_t: np.ndarray
    """Δs_t of the decision state (0 after turn 0)."""
    cos_t: np.ndarray
    """cos_t of the decision state (1 after turn 0)."""
    first: np.ndarray
    """True for the decision after turn 0."""
    untested: np.ndarray
    """Covered claims the action (a challenge) put at stake for the first time, share of n."""
    new_covered: np.ndarray
    """Criteria covered for the first time in the session by the produced turn, share of n."""
    stake: np.ndarray | None = None
    """Covered claims the action (a challenge) put at stake, tested before or not, share of n (the
    ``retrial`` and ``stake`` units need it)."""


@dataclass(frozen=True)
class RewardSpec:
    """Which reward, with which constants."""

    kind: str = "outcome"
    tau: float = TAU
    lam: float = LAMBDA
    mu: float = MU
    cost: float = COST
    beta: float = BETA
    unit: str = "claim"
    rates: str = "both"

    def __post_init__(self) -> None:
        """Refuse an unknown kind, unit or rates with a message listing the valid ones."""
        if self.kind not in KINDS:
            raise ValueError(f"unknown reward {self.kind!r}; expected one of {', '.join(KINDS)}")
        if self.unit not in UNITS:
            raise ValueError(f"unknown measure unit {self.unit!r}; expected one of {', '.join(UNITS)}")
        if self.rates not in RATES:
            raise ValueError(f"unknown rates {self.rates!r}; expected one of {', '.join(RATES)}")

    def __call__(self, action: np.ndarray, delta: np.ndarray, cos: np.ndarray,
                 delta_t: np.ndarray, cos_t: np.ndarray) -> np.ndarray:
        """``outcome`` or ``evidence`` rewards from the produced turn (``delta``, ``cos``) and the
        state's (``delta_t``, ``cos_t``); ``measure`` needs :meth:`compute`.

        Raises:
            ValueError: the kind is ``measure`` (it needs the simulator's bookkeeping).
        """
        if self.kind == "measure":
            raise ValueError("the measure reward needs a Transition with the simulator's claim bookkeeping; "
                             "call RewardSpec.compute")
        if self.kind == "evidence":
            return evidence_reward(action, delta_t, cos_t, self.tau, self.lam)
        return reward(action, delta, cos, self.tau, self.lam)

    def compute(self, tr: Transition) -> np.ndarray:
        """Rewards of a batch of transitions, whatever the kind."""
        if self.kind == "measure":
            untested = self._tested(tr)
            return measure_reward(tr.action, tr.delta, untested, tr.delta_t, tr.first,
                                  self.mu, self.cost, self.beta, self.tau, self.rates)
        return self(tr.action, tr.delta, tr.cos, tr.delta_t, tr.cos_t)

    @classmethod
    def shipped(cls) -> RewardSpec:
        """The reward the shipped ``models/policy.onnx`` was trained with (:data:`SHIPPED`)."""
        return cls(**SHIPPED)

    def _tested(self, tr: Transition) -> np.ndarray:
        """What the challenge term of ``measure`` counts, by :data:`UNITS`."""
        if self.unit in ("claim", "trial"):
            untested = np.asarray(tr.untested, dtype=np.float64)
            return untested if self.unit == "claim" else (untested > 0).astype(np.float64)
        if tr.stake is None:
            raise ValueError(f"the measure unit {self.unit!r} needs Transition.stake (the covered claims at stake)")
        stake = np.asarray(tr.stake, dtype=np.float64)
        return stake if self.unit == "stake" else (stake > 0).astype(np.float64)

    @property
    def label(self) -> str:
        """A short name with the constants that matter for the kind (table rows)."""
        if self.kind == "measure":
            unit = "" if self.unit == "claim" else f",{self.unit}"
            rates = "" if self.rates == "both" or not self.beta else f",{self.rates}"
            return f"measure(mu={self.mu:g},c={self.cost:g},beta={self.beta:g}{rates}{unit})"
        return f"{self.kind}(lambda={self.lam:g})"

    def card(self) -> dict:
        """The reward as written into the model card."""
        constants = {"tau": self.tau, "lambda": self.lam}
        if self.kind == "measure":
            constants = {"tau": self.tau, "mu": self.mu, "cost": self.cost, "beta": self.beta, "unit": self.unit,
                         "rates": self.rates}
        return {"kind": self.kind, **constants, **FORMULAS[self.kind]}

    def as_dict(self) -> dict:
        """Plain dict of the fields."""
        return asdict(self)


def constants() -> dict[str, float]:
    """The default reward constants."""
    return {"tau": TAU, "lambda": LAMBDA, "mu": MU, "cost": COST, "beta": BETA}
