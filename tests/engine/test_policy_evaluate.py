"""Evaluation: R−, Spearman, strategic rates and the goal checks."""

from __future__ import annotations

import math

import numpy as np
import pytest

from engine.policy.evaluate import (
    PolicyReport,
    check_goals,
    evaluate_policy,
    format_table,
    r_minus,
    spearman,
)
from engine.policy.policies import ConstantPolicy, RandomPolicy, ThresholdPolicy


def test_r_minus_reproduces_the_design_check_row():
    # DESIGN.md: medical GPT-4o P+ 0.803, M+ 0.042, P- 0.197, M- 0.086 -> R- 0.017
    deltas = [0.042] * 803 + [-0.086] * 197
    assert r_minus(deltas) == pytest.approx(0.197 * 0.086)
    assert round(r_minus(deltas), 3) == 0.017


def test_r_minus_edge_cases():
    assert math.isnan(r_minus([]))
    assert r_minus([0.0, 0.2]) == 0.0
    assert r_minus([-0.5, 0.0, 0.0, 0.5]) == pytest.approx(0.25 * 0.5)


def test_spearman():
    assert spearman([1, 2, 3, 4], [10, 20, 30, 40]) == pytest.approx(1.0)
    assert spearman([1, 2, 3, 4], [4, 3, 2, 1]) == pytest.approx(-1.0)
    assert spearman([1, 2, 3, 4], [1, 3, 2, 4]) == pytest.approx(0.8)
    # ties get average ranks: ranks y = [1.5, 1.5, 3, 4]
    assert spearman([1, 2, 3, 4], [5, 5, 6, 7]) == pytest.approx(np.corrcoef([1, 2, 3, 4], [1.5, 1.5, 3, 4])[0, 1])
    assert math.isnan(spearman([1, 2, 3], [1, 1, 1]))
    assert math.isnan(spearman([1, 2, float("nan")], [1, 2, 3]))


def test_rule_policies_have_the_rates_their_rules_imply():
    threshold = evaluate_policy(ThresholdPolicy(), episodes_per_target=10)
    assert threshold.fdr == 1.0 and threshold.eir == 1.0
    follow = evaluate_policy(ConstantPolicy("follow-up"), episodes_per_target=10)
    assert follow.fdr == 0.0 and follow.eir == 1.0 and follow.challenge_share == 0.0
    assert math.isnan(follow.instability_rho) and follow.instability_targets == 0
    rnd = evaluate_policy(RandomPolicy(), episodes_per_target=10)
    assert 0.35 < rnd.fdr < 0.65 and 0.35 < rnd.eir < 0.65
    assert rnd.stagnant_states > 100 and rnd.gaining_states > 50


def test_evaluation_is_deterministic():
    a = evaluate_policy(RandomPolicy(), episodes_per_target=5)
    b = evaluate_policy(RandomPolicy(), episodes_per_target=5)
    assert a == b


def _report(label, ret, fdr, eir, score_rho, inst_rho):
    return PolicyReport(label, label, "v", ret, 0.01, fdr, 10, eir, 10, 0.5, score_rho, inst_rho, 20)


def test_goals():
    rows = [_report("trained", 0.5, 0.96, 0.97, 0.9, 0.6), _report("random", 0.3, 0.5, 0.5, 0.8, 0.5),
            _report("always-follow-up", 0.4, 0.0, 1.0, 0.95, float("nan"))]
    goals = {g.name: g for g in check_goals(rows)}
    assert goals["trained FDR >= 0.95"].met and goals["trained EIR >= 0.95"].met
    assert goals["trained return > every baseline"].met
    assert not goals["rho(k, Score) >= best baseline"].met
    assert goals["rho(k, Score) >= best baseline"].target == 0.95
    assert goals["rho(1-sigma, R-) >= best baseline"].met     # NaN baselines are skipped
    rows[0] = _report("trained", 0.4, 0.9, 0.97, 0.99, float("nan"))
    goals = {g.name: g for g in check_goals(rows)}
    assert not goals["trained FDR >= 0.95"].met
    assert not goals["trained return > every baseline"].met      # a tie is not "above"
    assert not goals["rho(1-sigma, R-) >= best baseline"].met    # undefined never meets a goal
    text = format_table(rows, check_goals(rows))
    assert "NOT met" in text and "n/a" in text
