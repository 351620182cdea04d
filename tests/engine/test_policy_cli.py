"""`viva policy train / eval / calibrate` end to end (tiny training runs)."""

from __future__ import annotations

import json

from click.testing import CliRunner

from engine.policy.export import file_sha256
from tui.cli import main


def test_train_eval_and_retrain_reproduces(tmp_path, home):
    out = tmp_path / "m" / "policy.onnx"
    runner = CliRunner()
    first = runner.invoke(main, ["policy", "train", "--steps", "600", "--seed", "3", "--out", str(out)])
    assert first.exit_code == 0, first.output
    assert "mean return" in first.output and "held-out evaluation" in first.output
    card = json.loads(out.with_suffix(".json").read_text())
    assert card["sha256"] == file_sha256(out)
    assert card["training"]["seed"] == 3 and card["training"]["steps"] == 512 * 5  # one update of 512 sessions x 5 decisions
    assert card["reward"]["tau"] == 0.1 and card["reward"]["lambda"] == 0.5
    assert [r["label"] for r in card["evaluation"]["rows"]] == [
        "trained", "untrained", "random", "always-follow-up", "threshold"]
    assert card["evaluation"]["table"] in first.output

    again = runner.invoke(main, ["policy", "train", "--steps", "600", "--seed", "3", "--out", str(out)])
    assert again.exit_code == 0, again.output
    assert "bit-identical yes" in again.output
    comparison = json.loads(out.with_suffix(".json").read_text())["reproducibility"]["compared_with_previous_file"]
    assert comparison["bit_identical"] is True and comparison["same_actions"] == comparison["states"]

    shown = runner.invoke(main, ["policy", "eval", "--model", str(out)])
    assert shown.exit_code == 0, shown.output
    assert card["evaluation"]["table"] in shown.output  # eval prints exactly what the card recorded

    as_json = runner.invoke(main, ["policy", "eval", "--model", str(out), "--json"])
    payload = json.loads(as_json.output)
    assert payload["rows"][0]["version"] == f"sha256:{card['sha256'][:12]}"
    assert {g["name"] for g in payload["goals"]} >= {"trained FDR >= 0.95", "trained EIR >= 0.95"}


def test_eval_missing_model_names_the_file(tmp_path, home):
    result = CliRunner().invoke(main, ["policy", "eval", "--model", str(tmp_path / "absent.onnx")])
    assert result.exit_code != 0
    assert "absent.onnx" in result.output


def test_calibrate_without_sessions(tmp_path, home):
    result = CliRunner().invoke(main, ["policy", "calibrate", "--out", str(tmp_path / "t.json")])
    assert result.exit_code == 1
    assert "nothing to fit" in result.output
