"""Evaluation: R−, Spearman, the yardstick, strategic rates, logged sessions, goals and selection."""

from __future__ import annotations

import json
import math
from dataclasses import replace

import numpy as np
import pytest

from engine.policy.evaluate import (
    EvalSet,
    PolicyReport,
    TargetTruth,
    check_goals,
    evaluate_logged,
    evaluate_policy,
    evaluate_store,
    format_table,
    instability_estimate,
    load_truth,
    r_minus,
    select_candidate,
    spearman,
    spearman_se,
)
from engine.policy.features import ACTIONS
from engine.policy.logs import load_sessions
from engine.policy.policies import ConstantPolicy, RandomPolicy, ThresholdPolicy
from engine.policy.simulator import CRITERIA, TargetParams, draw_targets
from engine.store import now_iso

SMALL = EvalSet("small", tuple(draw_targets(123, 30)), 10, CRITERIA, 99)


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
    assert spearman([3, 1, 2, 2, 5], [1, 2, 3, 4, 5]) == pytest.approx(
        np.corrcoef([4, 1, 2.5, 2.5, 5], [1, 2, 3, 4, 5])[0, 1])
    assert math.isnan(spearman([1, 2, 3], [1, 1, 1]))
    assert math.isnan(spearman([1, 2, float("nan")], [1, 2, 3]))


def test_spearman_standard_error_shrinks_with_more_targets():
    rng = np.random.default_rng(0)
    x = rng.random(400)
    y = x + rng.normal(0, 0.3, 400)
    small, large = spearman_se(x[:40], y[:40]), spearman_se(x, y)
    assert 0 < large < small < 0.3
    assert spearman_se(x[:40], y[:40]) == small                      # seeded
    assert math.isnan(spearman_se([1, 2], [1, 2]))


def test_instability_estimate_is_the_beta_posterior_mean():
    assert instability_estimate([]) == 0.5
    assert instability_estimate([-0.1, 0.0, 0.0, 0.2]) == pytest.approx(2 / 6)


def test_rule_policies_have_the_rates_their_rules_imply():
    threshold = evaluate_policy(ThresholdPolicy(), eval_set=SMALL)
    assert threshold.fdr == 1.0 and threshold.eir == 1.0 and threshold.fdr_follow_up == 1.0
    follow = evaluate_policy(ConstantPolicy("follow-up"), eval_set=SMALL)
    assert follow.fdr == 0.0 and follow.eir == 1.0 and follow.challenge_share == 0.0
    assert math.isnan(follow.instability_rho) and follow.instability_targets == 0
    assert follow.error_u == pytest.approx(np.mean([abs(0.5 - (1 - t.stability)) for t in SMALL.targets]))
    rnd = evaluate_policy(RandomPolicy(), eval_set=SMALL)
    assert 0.35 < rnd.fdr < 0.65 and 0.35 < rnd.eir < 0.65
    assert rnd.stagnant_states > 100 and rnd.gaining_states > 50 and rnd.sessions == 300
    # following up draws knowledge out: the Score part of the error is smallest without challenges
    assert follow.error_k < rnd.error_k and follow.score_rho > rnd.score_rho


def test_evaluation_is_deterministic():
    assert evaluate_policy(RandomPolicy(), eval_set=SMALL) == evaluate_policy(RandomPolicy(), eval_set=SMALL)


def _row(label, role, score_rho, inst_rho, fdr=0.5, eir=0.5, error=0.3, set_name="v"):
    return PolicyReport(label, label, "v", role, set_name, 100, error, 0.01, 0.1, 0.2, fdr, 10, fdr, eir, 10, 0.5,
                        score_rho, inst_rho, 20, 20)


def test_goals():
    rows = [_row("trained", "trained", 0.95, 0.6, 0.96, 0.97), _row("random", "baseline", 0.8, 0.5),
            _row("always-follow-up", "baseline", 0.955, float("nan"), 0.0, 1.0),
            _row("other", "candidate", 0.99, 0.9)]
    goals = {g.name: g for g in check_goals(rows)}
    assert goals["trained FDR >= 0.95"].met and goals["trained EIR >= 0.95"].met
    assert goals["rho(k, Score) >= best fixed baseline - 0.01"].met                # 0.95 >= 0.955 - 0.01
    assert goals["rho(k, Score) >= best fixed baseline - 0.01"].target == pytest.approx(0.945)
    assert goals["rho(1-sigma, R-) >= best fixed baseline"].met                     # candidates are no baseline
    rows[0] = _row("trained", "trained", 0.94, float("nan"), 0.9, 0.97)
    goals = {g.name: g for g in check_goals(rows)}
    assert not goals["trained FDR >= 0.95"].met
    assert not goals["rho(k, Score) >= best fixed baseline - 0.01"].met
    assert not goals["rho(1-sigma, R-) >= best fixed baseline"].met    # undefined never meets a goal
    text = format_table(rows, check_goals(rows))
    assert "NOT met" in text and "n/a" in text


def test_selection_rules():
    baselines = [_row("always-follow-up", "baseline", 0.98, float("nan")), _row("random", "baseline", 0.86, 0.57),
                 _row("threshold", "baseline", 0.85, 0.56)]
    keeps = _row("keeps", "candidate", 0.975, 0.60, fdr=0.1, eir=0.7)
    eir_goal = _row("eir", "candidate", 0.972, 0.58, fdr=0.02, eir=0.96)
    threshold_like = _row("thr", "candidate", 0.80, 0.55, fdr=1.0, eir=1.0)
    sel = select_candidate([keeps, eir_goal, threshold_like, *baselines], noise=0)
    assert sel.rule == "goals" and sel.chosen == "eir" and sel.eligible == ["keeps", "eir"]   # a rate goal met
    # a shortfall within the figure's own noise still reaches the floor
    close = replace(keeps, label="close", score_rho=0.966, score_rho_se=0.003, fdr=0.3)
    assert select_candidate([close, *baselines], noise=0).rule == "both-measuring"
    sel = select_candidate([close, threshold_like, *baselines], noise=2.0)
    assert sel.rule == "goals" and sel.chosen == "close"
    # no candidate within 0.01 of always-follow-up: floors from the rules that measure instability
    a = _row("a", "candidate", 0.93, 0.60, fdr=0.6, eir=0.99)
    b = _row("b", "candidate", 0.95, 0.62, fdr=0.1, eir=0.7)
    sel = select_candidate([a, b, threshold_like, *baselines], noise=0)
    assert sel.rule == "both-measuring" and sel.chosen == "a"
    assert sel.score_rho_floor == pytest.approx(0.85) and sel.instability_rho_floor == pytest.approx(0.57)
    # equal rates: the lower measurement error
    a2 = replace(a, label="a2", error=0.2)
    assert select_candidate([a, a2, *baselines], noise=0).chosen == "a2"
    # nothing keeps either: the lowest measurement error
    sel = select_candidate([replace(threshold_like, error=0.5), _row("low", "candidate", 0.5, 0.1, error=0.2),
                            *baselines], noise=0)
    assert sel.rule == "error" and sel.chosen == "low" and sel.eligible == []


# -- logged sessions ----------------------------------------------------------------------------------
TRUTH = {f"python:t{i}": TargetParams(knowledge=k, stability=s, verbosity=0.3, wrongness=0.2, judge_error=0.0,
                                      windowed=0.5, narrow=0.5)
         for i, (k, s) in enumerate([(0.2, 0.9), (0.4, 0.3), (0.6, 0.7), (0.8, 0.5), (0.9, 0.2)])}


def _log(store, policy, sessions_per_target=12, human_turn=None, names=None):
    """Simulate sessions of the TRUTH targets with ``policy`` and write them through the store API
    (under ``names`` instead of TRUTH's keys when given)."""
    names = list(names or TRUTH)
    eval_set = EvalSet("log", tuple(TRUTH.values()), sessions_per_target, CRITERIA, 3)
    from engine.policy.evaluate import simulate

    ep = simulate(policy, eval_set)
    for b in range(ep.scores.shape[0]):
        now = now_iso()
        sid = store.insert("sessions", {"protocol": "adaptive", "target": names[b // sessions_per_target],
                                        "kernel": "offline", "policy": policy.name, "policy_version": policy.version,
                                        "config": json.dumps({"turns": 6}), "status": "finished",
                                        "created_at": now, "updated_at": now})
        for t in range(ep.scores.shape[1]):
            store.insert("turns", {
                "session_id": sid, "idx": t, "question": f"q{t}", "answer": f"a{t}",
                "action": "initial" if t == 0 else ACTIONS[int(ep.actions[b, t - 1])],
                "actor": "human" if t == human_turn else "policy",
                "score": float(ep.scores[b, t]), "delta": None if t == 0 else float(ep.deltas[b, t]),
                "cos": None if t == 0 else float(ep.states[b, t, 2]), "created_at": now})
    return eval_set


def test_logged_sessions_give_the_simulated_figures(store):
    eval_set = _log(store, RandomPolicy())
    truth = {n: TargetTruth(t.knowledge, 1 - t.stability) for n, t in TRUTH.items()}
    logged = evaluate_logged(load_sessions(store), truth, "random-logged", role="baseline")
    simulated = evaluate_policy(RandomPolicy(), eval_set=eval_set)
    for key in ("fdr", "eir", "fdr_follow_up", "challenge_share", "stagnant_states", "gaining_states",
                "score_rho", "instability_rho", "error_u", "sessions"):
        assert getattr(logged, key) == pytest.approx(getattr(simulated, key)), key
    assert logged.version == "random:0.5" and logged.set == "real-engine"
    # the same states judged by another policy's choices: the threshold rule's rates
    counterfactual = evaluate_logged(load_sessions(store), truth, "threshold", policy=ThresholdPolicy())
    assert counterfactual.fdr == 1.0 and counterfactual.eir == 1.0
    assert counterfactual.score_rho == logged.score_rho              # Score and R- are the logged ones


def test_human_choices_are_left_out_of_the_rates(store, tmp_path):
    _log(store, ConstantPolicy("follow-up"), sessions_per_target=4, human_turn=2)
    truth = {n: TargetTruth(t.knowledge, 1 - t.stability) for n, t in TRUTH.items()}
    row = evaluate_store(store.path, truth, policy_versions=["always-follow-up"])
    assert row.sessions == 20 and row.challenge_share == 0.0
    # the decision after turn 1 (producing turn 2) was a human's: that state is not counted
    sessions = load_sessions(store)
    for group in sessions.values():
        for s in group:
            assert not s.by_policy[2] and s.by_policy[1] and s.by_policy[3]
            s.by_policy[1:] = True
    everything = evaluate_logged(sessions, truth)
    counted = row.stagnant_states + row.gaining_states
    assert 0 < counted < everything.stagnant_states + everything.gaining_states
    with pytest.raises(ValueError, match="no logged session"):
        evaluate_logged(load_sessions(store), {"someone-else": TargetTruth(0.5, 0.5)})
    with pytest.raises(FileNotFoundError, match="no viva store"):
        evaluate_store(tmp_path / "absent.db", truth)


def test_truth_file(tmp_path):
    path = tmp_path / "truth.json"
    path.write_text(json.dumps({"python:a": {"knowledge": 0.3, "instability": 0.1}}))
    assert load_truth(path) == {"python:a": TargetTruth(0.3, 0.1)}
    path.write_text(json.dumps({"python:a": {"knowledge": 0.3}}))
    with pytest.raises(ValueError, match="truth.json.*python:a"):
        load_truth(path)
    path.write_text("[1, 2]")
    with pytest.raises(ValueError, match="truth.json"):
        load_truth(path)


def test_truth_from_validity_target_names():
    from engine.policy.evaluate import truth_from_names

    names = ["python:validity_targets:k0.50_u0.20_terse", "python:validity_targets:k1.00_u0.00_echo",
             "python:validity_targets:mute", "openai:gpt", "python:validity_targets:k1.50_u0.00_terse"]
    assert truth_from_names(names) == {names[0]: TargetTruth(0.5, 0.2), names[1]: TargetTruth(1.0, 0.0)}


def test_grid_masks_split_the_validity_design():
    from engine.policy.evaluate import grid_masks

    k_rows, u_rows = grid_masks([0.0, 0.5, 1.0, 1.0, 1.0], [0.0, 0.0, 0.0, 0.5, 1.0])
    assert k_rows.tolist() == [True, True, True, False, False]
    assert u_rows.tolist() == [False, False, True, True, True]


def test_decision_map_shows_the_rule():
    from engine.policy.evaluate import decision_map

    text = decision_map(ThresholdPolicy(), scores=(0.2, 0.6), deltas=(-0.1, 0.0, 0.2))
    rows = [line.split() for line in text.splitlines()[2:]]
    assert rows == [["0.2", "1.00", "1.00", "0.00"], ["0.6", "1.00", "1.00", "0.00"]]
