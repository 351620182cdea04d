"""`viva policy eval / calibrate` error paths through the CLI (fast).

Training, the card and bit-identical retraining are tested at the function level in
test_policy_pipeline.py (small evaluation sets); the CLI's full evaluation takes about half a minute.
"""

from __future__ import annotations

from click.testing import CliRunner

from tui.cli import main


def test_eval_missing_model_names_the_file(tmp_path, home):
    result = CliRunner().invoke(main, ["policy", "eval", "--model", str(tmp_path / "absent.onnx")])
    assert result.exit_code != 0
    assert "absent.onnx" in result.output


def test_calibrate_without_sessions(tmp_path, home):
    result = CliRunner().invoke(main, ["policy", "calibrate", "--out", str(tmp_path / "t.json")])
    assert result.exit_code == 1
    assert "nothing to fit" in result.output
