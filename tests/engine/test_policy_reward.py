"""Rewards: the formulas of outcome, evidence and measure, and the rate term."""

from __future__ import annotations

import numpy as np
import pytest

from engine.policy.reward import RewardSpec, Transition, measure_reward, rate_term


def _tr(**kw) -> Transition:
    base = dict(action=np.array([0, 1]), delta=np.array([0.2, -0.1]), cos=np.array([0.9, 0.8]),
                delta_t=np.array([0.0, 0.3]), cos_t=np.array([1.0, 0.95]), first=np.array([False, False]),
                untested=np.array([0.0, 0.25]), new_covered=np.array([0.2, 0.0]))
    return Transition(**{k: np.asarray(v) for k, v in (base | kw).items()})


def test_rate_term_counts_what_fdr_and_eir_count():
    action = np.array([1, 0, 0, 1, 1, 0, 1])
    delta_t = np.array([0.0, 0.0, 0.2, 0.2, 0.05, 0.05, -0.1])
    first = np.array([False] * 6 + [True])
    # stagnant+challenge, stagnant+follow-up, gaining+follow-up, gaining+challenge, free band x2, turn 0
    np.testing.assert_array_equal(rate_term(action, delta_t, first), [1, -1, 1, -1, 0, 0, 0])


def test_measure_reward_formula():
    tr = _tr()
    spec = RewardSpec("measure", mu=2.0, cost=0.05, beta=0.1)
    # follow-up after Δs_t = 0 (stagnant): 0.2 + 0.1·(−1); challenge after a gain: −0.1 + 2·0.25 − 0.05 + 0.1·(−1)
    np.testing.assert_allclose(spec.compute(tr), [0.2 - 0.1, -0.1 + 0.5 - 0.05 - 0.1])
    np.testing.assert_allclose(measure_reward(tr.action, tr.delta, tr.untested, tr.delta_t, tr.first, 2.0, 0.05, 0.0),
                               [0.2, -0.1 + 0.5 - 0.05])


def test_trial_unit_counts_one_per_new_test():
    tr = _tr(action=np.array([1, 1, 1]), delta=np.zeros(3), cos=np.ones(3), delta_t=np.full(3, 0.05),
             cos_t=np.ones(3), first=np.zeros(3, bool), untested=np.array([0.0, 0.1, 0.5]),
             new_covered=np.zeros(3))
    spec = RewardSpec("measure", mu=0.2, cost=0.0, unit="trial")
    np.testing.assert_allclose(spec.compute(tr), [0.0, 0.2, 0.2])


def test_retrial_and_stake_units_count_every_test_of_knowledge_at_stake():
    # a challenge re-testing claims already tested (untested 0, stake 0.4) still tests stability
    tr = _tr(action=np.array([1, 1, 1, 0]), delta=np.zeros(4), cos=np.ones(4), delta_t=np.zeros(4),
             cos_t=np.ones(4), first=np.zeros(4, bool), untested=np.array([0.0, 0.0, 0.25, 0.0]),
             new_covered=np.zeros(4), stake=np.array([0.0, 0.4, 0.5, 0.0]))
    np.testing.assert_allclose(RewardSpec("measure", mu=0.1, cost=0.0, unit="retrial").compute(tr), [0, 0.1, 0.1, 0])
    np.testing.assert_allclose(RewardSpec("measure", mu=1.0, cost=0.0, unit="stake").compute(tr), [0, 0.4, 0.5, 0])
    np.testing.assert_allclose(RewardSpec("measure", mu=1.0, cost=0.0, unit="claim").compute(tr), [0, 0, 0.25, 0])
    with pytest.raises(ValueError, match="stake"):
        RewardSpec("measure", unit="retrial").compute(_tr())
    assert RewardSpec("measure", mu=0.1, beta=0.1, rates="eir", unit="retrial").label == \
        "measure(mu=0.1,c=0.02,beta=0.1,eir,retrial)"


def test_outcome_and_evidence_through_compute():
    tr = _tr()
    np.testing.assert_allclose(RewardSpec("outcome", tau=0.1, lam=0.5).compute(tr),
                               [0.2 + 0.5 * 0.1, 0.1 - 0.1])
    np.testing.assert_allclose(RewardSpec("evidence", tau=0.1, lam=0.5).compute(tr), [0.0, 0.1 - 0.3])


def test_spec_validation_labels_and_card():
    with pytest.raises(ValueError, match="measure"):
        RewardSpec("surprise")
    with pytest.raises(ValueError, match="trial"):
        RewardSpec("measure", unit="bits")
    with pytest.raises(ValueError, match="compute"):
        RewardSpec("measure")(np.zeros(1), np.zeros(1), np.ones(1), np.zeros(1), np.ones(1))
    spec = RewardSpec("measure", mu=0.75, beta=0.05)
    assert spec.label == "measure(mu=0.75,c=0.02,beta=0.05)"
    card = spec.card()
    assert card["kind"] == "measure" and card["mu"] == 0.75 and "untested" in card["challenge"]
    assert RewardSpec().card()["lambda"] == 0.5 and RewardSpec().label == "outcome(lambda=0.5)"


def test_one_sided_rate_terms():
    action = np.array([1, 0, 0, 1])
    delta_t = np.array([0.0, 0.0, 0.2, 0.2])
    first = np.zeros(4, dtype=bool)
    np.testing.assert_array_equal(rate_term(action, delta_t, first, rates="eir"), [0, 0, 1, -1])
    np.testing.assert_array_equal(rate_term(action, delta_t, first, rates="fdr"), [1, -1, 0, 0])
    with pytest.raises(ValueError, match="eir"):
        RewardSpec("measure", rates="some")
    assert RewardSpec("measure", beta=0.05, rates="eir").label == "measure(mu=1,c=0.02,beta=0.05,eir)"
