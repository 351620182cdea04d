"""``viva bench calibrate`` on sessions the real engine ran: python targets of known skill
(``tests/engine/agents.py``: ``KnowsK`` answers questions 0..K-1 right) on a multiple-choice benchmark
imported as MedQA (the ``graded`` protocol, three base questions per session)."""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
from dataclasses import replace
from pathlib import Path

import pytest

from engine.bench.calibrate import calibrate_benchmark, get_calibration, target_abilities
from engine.bench.importers import run_import
from engine.bench.model import BenchError
from engine.interview.run import RunRequest, execute_run, plan_run
from engine.runtime import Runtime

ROOT = Path(__file__).resolve().parents[2]
TARGETS = [f"python:tests.engine.agents:Knows{k}" for k in (3, 6, 9, 12)]


def _write_mc(path: Path, n: int = 12) -> None:
    with path.open("w", encoding="utf-8") as fh:
        for q in range(n):
            fh.write(json.dumps({"id": f"q{q}", "question": f"Question {q}: which label is right for item {q}?",
                                 "options": {"A": f"right-{q}", "B": f"wrong-{q}", "C": f"other-{q}"},
                                 "answer": f"right-{q}", "answer_idx": "A"}) + "\n")


def _run(runtime: Runtime, targets: list[str]) -> None:
    run_id = plan_run(runtime, RunRequest(bench="mc", targets=targets, kernel="offline", policy="threshold",
                                          turns=1, seed=0))
    errors = asyncio.run(execute_run(runtime, run_id))
    assert not any(errors.values()), errors


@pytest.fixture
def runtime(tmp_path):
    _write_mc(tmp_path / "mc.jsonl")
    rt = Runtime(home=tmp_path / "home")
    run_import(rt.store, rt.home, "medqa", tmp_path / "mc.jsonl", "mc")
    yield rt
    rt.store.close()


def test_calibration_orders_items_and_targets_by_what_they_know(runtime):
    with pytest.raises(BenchError, match="at least 2 targets"):
        calibrate_benchmark(runtime.store, "mc")
    _run(runtime, TARGETS)
    fit = calibrate_benchmark(runtime.store, "mc")
    assert fit["model"] == "rasch" and fit["n_targets"] == 4 and fit["calibrated"] == 12 and not fit["stale"]
    assert len(fit["sessions"]) == 16  # 4 targets x 12 items, 3 base questions per graded session
    b = [u["b"] for u in fit["units"]]  # question q is known by the targets with K > q: harder as q grows
    assert b == sorted(b) and b[0] < 0 < b[-1]
    rows = target_abilities(runtime.store, "mc")
    assert [r["target"] for r in rows] == TARGETS[::-1]
    # every item run: the expected Score is the Score (K of 12 right)
    assert [r["expected_score"] for r in rows] == [100.0, 75.0, 50.0, 25.0]
    for r in rows:
        assert r["se"] > 0 and r["low"] < r["ability"] < r["high"]
        assert r["high"] - r["low"] == pytest.approx(2 * 1.96 * r["se"], abs=5e-4)  # each rounded to 4 decimals
        assert r["items_run"] == r["items"] == 12 and r["units_answered"] == 12
    stored = runtime.store.one("SELECT value, meta FROM metrics WHERE scope = 'calibration'")
    assert stored["value"] == 4 and json.loads(stored["meta"])["fingerprint"] == fit["fingerprint"]


def test_a_new_target_makes_the_calibration_stale_and_a_refit_takes_it_in(runtime):
    _run(runtime, TARGETS[:2])
    calibrate_benchmark(runtime.store, "mc")
    _run(runtime, TARGETS[2:3])
    seen = get_calibration(runtime.store, "mc")
    assert seen["stale"] and len(seen["new_sessions"]) == 4 and seen["n_targets"] == 2
    # the new target is scored under the stored items meanwhile
    assert {r["target"] for r in target_abilities(runtime.store, "mc")} == set(TARGETS[:3])
    again = calibrate_benchmark(runtime.store, "mc")
    assert not again["stale"] and again["n_targets"] == 3


def test_a_target_that_ran_some_items_gets_an_expected_score_for_all(runtime):
    _run(runtime, TARGETS)
    calibrate_benchmark(runtime.store, "mc")
    run_id = plan_run(runtime, RunRequest(bench="mc", targets=["python:tests.engine.agents:Knows9"], items=[1, 2, 3],
                                          kernel="offline", policy="threshold", turns=1, seed=0))
    assert not any(asyncio.run(execute_run(runtime, run_id)).values())
    rows = {r["target"]: r for r in target_abilities(runtime.store, "mc")}
    assert rows[TARGETS[2]]["items_run"] == 12  # the latest session of each item counts


def test_the_cli_calibrates_and_shows_abilities(runtime):
    _run(runtime, TARGETS)
    home = str(runtime.home)

    def viva(*args):
        return subprocess.run([sys.executable, "-m", "tui", "--home", home, *args], cwd=ROOT, capture_output=True,
                              text=True, timeout=300, env={**os.environ, "COLUMNS": "200"})

    shown = viva("bench", "show", "mc", "--json")
    assert shown.returncode == 0 and json.loads(shown.stdout)["calibration"] is None
    done = viva("bench", "calibrate", "mc", "--json")
    assert done.returncode == 0, done.stderr
    out = json.loads(done.stdout)
    assert out["calibration"]["model"] == "rasch" and len(out["abilities"]) == 4
    shown = json.loads(viva("bench", "show", "mc", "--json").stdout)
    assert shown["abilities"] == out["abilities"]
    assert all(item["irt_difficulty"] is not None for item in shown["items"])
    text = viva("bench", "show", "mc")
    assert "calibrated (rasch" in text.stdout and "Knows12" in text.stdout and "expected" in text.stdout
    bad = viva("bench", "calibrate", "nope")
    assert bad.returncode == 1 and "nope" in bad.stderr


def test_adaptive_items_follow_the_ability_and_stop_on_budget_or_se(runtime):
    from engine.interview.item_selection import run_adaptive_items

    request = RunRequest(bench="mc", targets=[TARGETS[1]], kernel="offline", policy="threshold", turns=1, seed=4)
    with pytest.raises(BenchError, match="not calibrated"):
        asyncio.run(run_adaptive_items(runtime, request, budget=3))
    _run(runtime, TARGETS)
    calibrate_benchmark(runtime.store, "mc")
    seen = []
    first = asyncio.run(run_adaptive_items(runtime, request, budget=4, on_step=lambda t, s: seen.append(s)))
    trace = first["targets"][TARGETS[1]]
    assert trace["asked"] == 4 and trace["stopped"] == "budget" and seen == trace["steps"]
    items = [s["item"] for s in trace["steps"]]
    assert len(set(items)) == 4
    # Knows6 answers questions 0-5 (items 1-6) right: each step's response is the truth
    assert [s["right"] for s in trace["steps"]] == [[int(item <= 6)] for item in items]
    assert all(s["se"] < 1.0 for s in trace["steps"]) and trace["steps"][-1]["se"] == trace["se"]
    fit = get_calibration(runtime.store, "mc")
    info_first = {u["item_id"]: -abs(u["b"]) for u in fit["units"]}  # at ability 0: the items nearest b = 0
    best = sorted(info_first, key=info_first.get, reverse=True)[:5]
    assert items[0] in best
    again = asyncio.run(run_adaptive_items(runtime, request, budget=4))
    assert [s["item"] for s in again["targets"][TARGETS[1]]["steps"]] == items  # seeded: the same examination
    early = asyncio.run(run_adaptive_items(runtime, request, se=0.75))
    stop = early["targets"][TARGETS[1]]
    assert stop["stopped"] == "se" and stop["se"] <= 0.75 and stop["asked"] < 12
    assert 0 <= stop["expected_score"] <= 100
    with pytest.raises(BenchError, match="chooses the items"):
        asyncio.run(run_adaptive_items(runtime, replace(request, items=[1]), budget=2))


def test_the_cli_runs_adaptive_items(runtime):
    _run(runtime, TARGETS)
    calibrate_benchmark(runtime.store, "mc")
    args = [sys.executable, "-m", "tui", "--home", str(runtime.home), "run", "--bench", "mc", "--items", "adaptive",
            "--budget", "3", "--target", TARGETS[3], "--kernel", "offline", "--turns", "1", "--policy", "threshold"]
    out = subprocess.run([*args, "--json"], cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr
    result = json.loads(out.stdout)["targets"][TARGETS[3]]
    assert result["asked"] == 3 and all(s["right"] == [1] for s in result["steps"])
    text = subprocess.run(args, cwd=ROOT, capture_output=True, text=True, timeout=300,
                          env={**os.environ, "COLUMNS": "200"})
    assert text.returncode == 0 and "-> ability" in text.stdout and "expected Score" in text.stdout
    bad = subprocess.run([*args[:8], "--target", TARGETS[0], "--se", "0.5", "--items", "1,2"], cwd=ROOT,
                         capture_output=True, text=True, timeout=60)
    assert bad.returncode == 2 and "--items adaptive" in bad.stderr
