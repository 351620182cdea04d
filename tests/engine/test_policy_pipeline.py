"""Train, export, card, retrain bit for bit; evaluate a model file with logged real-engine sessions."""

from __future__ import annotations

import json

import pytest

from engine.policy.card import read_card
from engine.policy.evaluate import EvalSet
from engine.policy.export import file_sha256
from engine.policy.pipeline import eval_report, train_and_export
from engine.policy.policies import OnnxPolicy, ThresholdPolicy
from engine.policy.ppo import PPOConfig
from engine.policy.simulator import CRITERIA, SHIFT_CRITERIA, SHIFT_RANGES, draw_targets
from tests.engine.test_policy_evaluate import TRUTH, _log

SETS = [EvalSet("held-out", tuple(draw_targets(5, 12)), 6, CRITERIA, 8),
        EvalSet("shifted", tuple(draw_targets(6, 12, SHIFT_RANGES)), 6, SHIFT_CRITERIA, 9)]
CONFIG = PPOConfig(steps=600, seed=3, envs=64, minibatches=2, epochs=2, reward="measure", mu=0.5, beta=0.05,
                   rates="eir")


def test_train_export_card_and_bit_identical_retraining(tmp_path):
    out = tmp_path / "m" / "policy.onnx"
    first = train_and_export(CONFIG, out, sets=SETS, selection={"rule": "goals", "chosen": "x"})
    card = read_card(out.with_suffix(".json"))
    assert card["sha256"] == file_sha256(out) == first.sha256
    assert card["training"]["seed"] == 3 and card["training"]["steps"] == 64 * 5 * 2
    assert card["reward"] == {**CONFIG.reward_spec().card()} and card["reward"]["kind"] == "measure"
    assert set(card["evaluation"]["sets"]) == {"held-out", "shifted"}
    labels = [r["label"] for r in card["evaluation"]["sets"]["held-out"]["rows"]]
    assert labels == ["trained", "untrained", "random", "always-follow-up", "always-challenge", "threshold"]
    assert card["evaluation"]["protocol"]["sets"]["shifted"]["criteria"] == list(SHIFT_CRITERIA)
    assert {g["name"] for g in card["evaluation"]["sets"]["held-out"]["goals"]} >= {"trained FDR >= 0.95"}
    assert "--reward measure --mu 0.5" in card["reproducibility"]["command"]
    assert card["selection"]["chosen"] == "x"
    assert "held-out -> shifted" in first.table and card["evaluation"]["table"] == first.table

    again = train_and_export(CONFIG, out, sets=SETS)
    assert again.comparison["bit_identical"] is True
    assert again.comparison["same_actions"] == again.comparison["states"]
    card = read_card(out.with_suffix(".json"))
    assert card["reproducibility"]["compared_with_previous_file"]["bit_identical"] is True
    assert card["selection"]["chosen"] == "x"                       # same reward: the selection is kept

    report = eval_report(out, sets=SETS)
    assert report.text(header=False) == first.table                  # eval prints what the card recorded
    assert report.reward == CONFIG.reward_spec().label == "measure(mu=0.5,c=0.02,beta=0.05,eir)"


def test_eval_report_adds_real_engine_rows(tmp_path, store):
    model_path = tmp_path / "policy.onnx"
    train_and_export(CONFIG, model_path, sets=SETS[:1])
    model = OnnxPolicy(model_path)
    _log(store, model, sessions_per_target=4)
    _log(store, ThresholdPolicy(), sessions_per_target=4)
    truth_file = tmp_path / "truth.json"
    truth_file.write_text(json.dumps({n: {"knowledge": t.knowledge, "instability": 1 - t.stability}
                                      for n, t in TRUTH.items()}))
    report = eval_report(model_path, store.path, truth_file, sets=SETS[:1])
    real = report.sets["real-engine"]
    assert [(r.label, r.role) for r in real] == [("trained", "trained"), ("threshold", "baseline")]
    assert real[1].fdr == 1.0 and real[1].eir == 1.0 and real[0].sessions == 20
    assert "real-engine" in report.text() and report.goals["real-engine"]
    payload = report.as_dict()
    json.dumps(payload, allow_nan=False)
    assert payload["sets"]["real-engine"]["rows"][0]["version"] == model.version
    with pytest.raises(ValueError, match="needs a store"):
        eval_report(model_path, None, truth_file, sets=SETS[:1])
    with pytest.raises(ValueError, match="no logged target name carries"):
        eval_report(model_path, store.path, None, sets=SETS[:1])


def test_eval_report_reads_a_folder_of_validity_homes(tmp_path):
    """What bench/validity.py --keep DIR leaves: one home per source, targets named k<k>_u<u>_<style>;
    the truth comes from the names, the sessions of both homes are pooled by target."""
    from engine.store import Store

    model_path = tmp_path / "policy.onnx"
    train_and_export(CONFIG, model_path, sets=SETS[:1])
    # named as the validity benchmark's two grids: k varied at u = 0, u varied at k = 1
    grid = [(0.2, 0.0), (0.5, 0.0), (1.0, 0.0), (1.0, 0.5), (1.0, 1.0)]
    names = [f"python:validity_targets:k{k:.2f}_u{u:.2f}_terse" for k, u in grid]
    for source in ("squad", "medqa"):
        (tmp_path / "keep" / source).mkdir(parents=True)
        store = Store(tmp_path / "keep" / source / "viva.db")
        _log(store, ThresholdPolicy(), sessions_per_target=2, names=names)
        store.close()
    report = eval_report(model_path, tmp_path / "keep", sets=SETS[:1])
    [row] = report.sets["real-engine"]
    # rho(k, Score) over the u = 0 grid (3 targets), rho(1-sigma, R-) over the k = 1 grid
    assert (row.label, row.role, row.sessions, row.targets) == ("threshold", "baseline", 20, 3)
    assert row.instability_targets <= 3
    assert row.fdr == 1.0 and row.eir == 1.0
    with pytest.raises(FileNotFoundError, match="folder of homes"):
        eval_report(model_path, tmp_path / "m", sets=SETS[:1])
