"""``viva bench calibrate`` on sessions the real engine ran: python targets of known skill
(``tests/engine/agents.py``: ``KnowsK`` answers questions 0..K-1 right) on a multiple-choice benchmark
imported as MedQA (the ``graded`` protocol, three base questions per session).

A calibration needs :data:`MIN_TARGETS` targets (issue 36): the CLI tests run twelve; the tests of the fit's
own mechanics pass ``min_targets`` to fit on four (``calibrate``)."""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
from dataclasses import replace
from pathlib import Path

import pytest

from engine.bench.calibrate import MIN_TARGETS, calibrate_benchmark, get_calibration, target_abilities
from engine.bench.importers import run_import
from engine.bench.model import BenchError
from engine.interview.run import RunRequest, execute_run, plan_run
from engine.runtime import Runtime

ROOT = Path(__file__).resolve().parents[2]
TARGETS = [f"python:tests.engine.agents:Knows{k}" for k in (3, 6, 9, 12)]
EVERY = [f"python:tests.engine.agents:Knows{k}" for k in range(1, 13)]


def _write_mc(path: Path, n: int = 12) -> None:
    with path.open("w", encoding="utf-8") as fh:
        for q in range(n):
            fh.write(json.dumps({"id": f"q{q}", "question": f"Question {q}: which label is right for item {q}?",
                                 "options": {"A": f"right-{q}", "B": f"wrong-{q}", "C": f"other-{q}"},
                                 "answer": f"right-{q}", "answer_idx": "A"}) + "\n")


def calibrate(store, name: str = "mc", model: str = "auto"):
    """The fit on the few targets of these tests (the mechanics; a user's fit needs MIN_TARGETS)."""
    return calibrate_benchmark(store, name, model, min_targets=2)


def _run(runtime: Runtime, targets: list[str], items: list[int] | None = None) -> None:
    run_id = plan_run(runtime, RunRequest(bench="mc", targets=targets, kernel="offline", policy="threshold",
                                          turns=1, seed=0, items=items))
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
        calibrate(runtime.store)
    with pytest.raises(BenchError, match=f"at least {MIN_TARGETS} targets"):
        calibrate_benchmark(runtime.store, "mc")
    _run(runtime, TARGETS)
    fit = calibrate(runtime.store)
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
    calibrate(runtime.store)
    _run(runtime, TARGETS[2:3])
    seen = get_calibration(runtime.store, "mc")
    assert seen["stale"] and len(seen["new_sessions"]) == 4 and seen["n_targets"] == 2
    # the new target is scored under the stored items meanwhile
    assert {r["target"] for r in target_abilities(runtime.store, "mc")} == set(TARGETS[:3])
    again = calibrate(runtime.store)
    assert not again["stale"] and again["n_targets"] == 3


def test_a_target_that_ran_some_items_gets_an_expected_score_for_all(runtime):
    _run(runtime, TARGETS)
    calibrate(runtime.store)
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

    few = viva("bench", "calibrate", "mc")
    assert few.returncode == 1 and f"at least {MIN_TARGETS} targets" in few.stderr and "found 4" in few.stderr
    assert "docs/calibration-minimum.md" in few.stderr
    _run(runtime, [t for t in EVERY if t not in TARGETS])
    shown = viva("bench", "show", "mc", "--json")
    assert shown.returncode == 0 and json.loads(shown.stdout)["calibration"] is None
    done = viva("bench", "calibrate", "mc", "--json")
    assert done.returncode == 0, done.stderr
    out = json.loads(done.stdout)
    assert out["calibration"]["model"] == "rasch" and len(out["abilities"]) == 12
    assert out["calibration"]["dropped"] == [] and out["calibration"]["supported"]
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
    calibrate(runtime.store)
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
    calibrate(runtime.store)
    args = [sys.executable, "-m", "tui", "--home", str(runtime.home), "run", "--bench", "mc", "--items", "adaptive",
            "--budget", "3", "--target", TARGETS[3], "--kernel", "offline", "--turns", "1", "--policy", "threshold"]
    out = subprocess.run([*args, "--json"], cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr
    result = json.loads(out.stdout)["targets"][TARGETS[3]]
    assert result["asked"] == 3 and all(s["right"] == [1] for s in result["steps"])
    # never refitted silently: the run says what to do
    assert "calibration is stale (3 new finished session(s) since the fit): `viva bench calibrate mc`" in out.stderr
    assert get_calibration(runtime.store, "mc")["stale"]
    text = subprocess.run(args, cwd=ROOT, capture_output=True, text=True, timeout=300,
                          env={**os.environ, "COLUMNS": "200"})
    assert text.returncode == 0 and "-> ability" in text.stdout and "expected Score" in text.stdout
    bad = subprocess.run([*args[:8], "--target", TARGETS[0], "--se", "0.5", "--items", "1,2"], cwd=ROOT,
                         capture_output=True, text=True, timeout=60)
    assert bad.returncode == 2 and "--items adaptive" in bad.stderr


def test_the_engine_matrix_of_bench_efficiency_holds_the_known_targets_answers(tmp_path, monkeypatch):
    """bench/efficiency.py --engine: every response read back from the store is the one the target of
    known ability gave (its rule in bench/efficiency_targets.py), for every target and question."""
    from bench import efficiency_targets as able
    from bench.efficiency import engine_matrix

    key = tmp_path / "key.jsonl"
    questions = [f"Case {q}: which drug is the first choice for condition {q}?" for q in range(6)]
    with key.open("w", encoding="utf-8") as fh:
        for q, text in enumerate(questions):
            fh.write(json.dumps({"question": text, "options": {"A": f"drug-a{q}", "B": f"drug-b{q}", "C": f"drug-c{q}",
                                                              "D": f"drug-d{q}"},
                                 "answer": f"drug-{'abcd'[q % 4]}{q}", "answer_idx": "ABCD"[q % 4]}) + "\n")
    monkeypatch.setattr(able, "_KEY", None)
    monkeypatch.setenv(able.KEY_ENV, str(key))  # engine_matrix sets it too: restored after the test
    targets, matrix, facts = engine_matrix(key, tmp_path / "home")
    assert targets == able.TARGETS and matrix.shape == (12, 6) and facts["answered"] == 72
    for i, target in enumerate(targets):
        name = target.rsplit(":", 1)[1]
        for q, text in enumerate(questions):
            expected = able._unit(name, text) < able.p_right(able.ABILITIES[i], text)
            assert matrix[i, q] == float(expected), (target, q)
    assert 0 < matrix.mean() < 1


def test_graded_sessions_take_their_difficulty_tiers_from_the_calibration(runtime):
    from engine.bench.calibrate import calibrated_tiers

    bench_id = runtime.store.one("SELECT id FROM benchmarks WHERE name = 'mc'")["id"]
    assert calibrated_tiers(runtime.store, bench_id) == {}
    _run(runtime, [TARGETS[3]])
    steps = runtime.store.query("SELECT difficulty, labelled FROM graded_steps WHERE phase = 'base'")
    assert {(s["difficulty"], s["labelled"]) for s in steps} == {("medium", 0)}  # unlabelled items
    _run(runtime, TARGETS[:3])
    calibrate(runtime.store)
    tiers = calibrated_tiers(runtime.store, bench_id)
    # question q is known by the targets with K > q: items 1-3 the easiest, 10-12 the hardest
    assert tiers == {i: "easy" if i <= 4 else "hard" if i >= 9 else "medium" for i in range(1, 13)}
    run_id = plan_run(runtime, RunRequest(bench="mc", targets=[TARGETS[3]], items=[10, 11, 12], kernel="offline",
                                          policy="threshold", turns=1, seed=0))
    assert not any(asyncio.run(execute_run(runtime, run_id)).values())
    late = runtime.store.query("SELECT g.difficulty, g.labelled, g.gain FROM graded_steps g JOIN sessions s ON "
                               "s.id = g.session_id WHERE s.run_id = ? AND g.phase = 'base'", (run_id,))
    assert [(s["difficulty"], s["labelled"]) for s in late] == [("hard", 1)] * 3
    assert [s["gain"] for s in late] == [2.0, 2.0, 2.0]  # a right hard answer gains 2


def test_the_leaderboard_shows_the_ability_from_the_scopes_own_responses(runtime):
    """Known answers: with every item run the expected Score is the Score; a run of a few items gets the
    ability of exactly the responses its sessions hold (KnowsK answers questions 0..K-1 right); a
    benchmark without a calibration says so, with no number."""
    from functools import partial

    import numpy as np

    from engine.bench.calibrate import NOT_CALIBRATED, scope_abilities
    from engine.metrics import irt
    from engine.metrics.leaderboard import scoped_leaderboard
    from engine.report import export_run

    abilities = partial(scope_abilities, runtime.store)  # the reader the engine's board and reports pass
    _run(runtime, TARGETS)
    before = scoped_leaderboard(runtime.store, benchmark="mc", abilities=abilities)
    assert all(r["ability"]["value"] is None and r["ability"]["note"] == NOT_CALIBRATED.format(bench="mc") for r in before["rows"])
    fit = calibrate(runtime.store)
    board = scoped_leaderboard(runtime.store, benchmark="mc", abilities=abilities)
    shown = {r["target"]: r["ability"] for r in board["rows"]}
    for a in target_abilities(runtime.store, "mc"):
        mine = shown[a["target"]]
        assert (mine["value"], mine["se"], mine["low"], mine["high"]) == (a["ability"], a["se"], a["low"], a["high"])
        assert mine["model"] == "rasch" and mine["n_targets"] == 4 and not mine["stale"]
    assert [shown[t]["expected_score"] for t in TARGETS] == [25.0, 50.0, 75.0, 100.0]
    # a run of three items: the ability of the responses its sessions hold, not of every stored session
    run_id = plan_run(runtime, RunRequest(bench="mc", targets=[TARGETS[2]], items=[1, 7, 12], kernel="offline",
                                          policy="threshold", turns=1, seed=0))
    assert not any(asyncio.run(execute_run(runtime, run_id)).values())
    row = scoped_leaderboard(runtime.store, run=run_id, abilities=abilities)["rows"][0]
    asked = runtime.store.query("SELECT DISTINCT g.item_id FROM graded_steps g JOIN sessions s ON s.id = g.session_id "
                                "WHERE s.run_id = ? AND g.phase = 'base'", (run_id,))
    units = fit["units"]  # one unit per item (the right option), item ids 1..12 carry questions 0..11
    responses = np.full(len(units), np.nan)
    for r in asked:
        k = next(i for i, u in enumerate(units) if u["item_id"] == r["item_id"])
        responses[k] = float(r["item_id"] - 1 < 9)  # Knows9
    theta, se = irt.ability(responses, np.array([u["a"] for u in units]), np.array([u["b"] for u in units]))
    assert row["ability"]["units_answered"] == len(asked) < 12
    assert row["ability"]["value"] == pytest.approx(theta, abs=1e-4) and row["ability"]["se"] == pytest.approx(se, abs=1e-4)
    assert row["ability"]["value"] != shown[TARGETS[2]]["value"]  # fewer responses, another estimate
    markdown = export_run(runtime.store, run_id, "md").replace("\\", "")  # Markdown escapes [ ] + .
    assert "ability [95% CI]" in markdown and f"{row['ability']['value']:+.2f} [" in markdown
    assert f"{row['ability']['expected_score']:.1f}" in markdown
    assert json.loads(export_run(runtime.store, run_id, "json"))["board"]["rows"][0]["ability"] == row["ability"]
    html = export_run(runtime.store, run_id, "html")
    assert f"{row['ability']['value']:+.2f} [{row['ability']['low']:+.2f}, {row['ability']['high']:+.2f}]" in html


def test_viva_run_json_and_table_carry_the_ability(runtime):
    _run(runtime, TARGETS)
    calibrate(runtime.store)
    args = [sys.executable, "-m", "tui", "--home", str(runtime.home), "run", "--bench", "mc", "--items", "5,6,7",
            "--target", TARGETS[3], "--target", TARGETS[0], "--kernel", "offline", "--turns", "1",
            "--policy", "threshold"]
    out = subprocess.run([*args, "--json", "--quiet"], cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr
    rows = {r["target"]: r for r in json.loads(out.stdout)["leaderboard"]["rows"]}
    strong, weak = rows[TARGETS[3]]["ability"], rows[TARGETS[0]]["ability"]
    assert strong["value"] > weak["value"] and strong["low"] < strong["value"] < strong["high"]
    assert strong["units_answered"] >= 2 and 0 <= weak["expected_score"] < strong["expected_score"] <= 100
    text = subprocess.run([*args, "--quiet"], cwd=ROOT, capture_output=True, text=True, timeout=300,
                          env={**os.environ, "COLUMNS": "200"})
    assert text.returncode == 0, text.stderr
    assert "θ ± 95%" in text.stdout and "E[S]" in text.stdout and "ability on the benchmark's item" in text.stdout


def test_adaptive_with_common_items_takes_every_kth_from_one_order_shared_by_the_targets(runtime):
    from engine.interview.item_selection import run_adaptive_items

    _run(runtime, TARGETS)
    calibrate(runtime.store)
    request = RunRequest(bench="mc", targets=[TARGETS[0], TARGETS[3]], kernel="offline", policy="threshold", turns=1,
                         seed=2)
    every = asyncio.run(run_adaptive_items(runtime, request, budget=4, common=1))
    weak, strong = (every["targets"][t]["steps"] for t in (TARGETS[0], TARGETS[3]))
    assert [s["chosen"] for s in weak + strong] == ["common"] * 8
    # whatever they answer, both targets get the same items in the same order: the shared order's first four
    assert [s["item"] for s in weak] == [s["item"] for s in strong]
    assert [s["right"] for s in weak] != [s["right"] for s in strong]  # (and they did answer differently)
    order = [s["item"] for s in weak]
    third = asyncio.run(run_adaptive_items(runtime, replace(request, targets=[TARGETS[1]]), budget=6, common=3))
    steps = third["targets"][TARGETS[1]]["steps"]
    assert [s["chosen"] for s in steps] == ["information", "information", "common"] * 2
    asked_before = [s["item"] for s in steps[:2]]
    assert steps[2]["item"] == next(i for i in order if i not in asked_before)  # the same order, any target count
    with pytest.raises(BenchError, match="--common"):
        asyncio.run(run_adaptive_items(runtime, request, budget=2, common=0))


def test_units_too_few_targets_answered_are_dropped_and_said_so(runtime):
    """Twelve targets ran items 1-8, one ran every item: items 9-12 have one response each and are
    left out of the fit, each with its reason, and `viva bench calibrate` prints the line."""
    from engine.bench.calibrate import dropped_line

    _run(runtime, EVERY, items=list(range(1, 9)))
    _run(runtime, [EVERY[-1]], items=[9, 10, 11, 12])
    done = subprocess.run([sys.executable, "-m", "tui", "--home", str(runtime.home), "bench", "calibrate", "mc"],
                          cwd=ROOT, capture_output=True, text=True, timeout=300, env={**os.environ, "COLUMNS": "200"})
    assert done.returncode == 0, done.stderr
    assert ("4 of 12 units dropped: 4 answered by 1 target(s), fewer than 10 (item(s) 9, 10, 11, …)"
            in " ".join(done.stdout.split())), done.stdout
    fit = get_calibration(runtime.store, "mc")
    assert fit["calibrated"] == 8 and [d["item_id"] for d in fit["dropped"]] == [9, 10, 11, 12]
    assert dropped_line(fit).startswith("4 of 12 units dropped")


def test_a_stored_fit_on_too_few_targets_shows_no_ability(runtime):
    """A calibration stored before the minimum (its meta has no min_targets) is read as unsupported."""
    _run(runtime, TARGETS)
    calibrate(runtime.store)
    row = runtime.store.one("SELECT id, meta FROM metrics WHERE scope = 'calibration'")
    meta = json.loads(row["meta"])
    del meta["min_targets"]
    with runtime.store.transaction():
        runtime.store.conn.execute("UPDATE metrics SET meta = ? WHERE id = ?", (json.dumps(meta), row["id"]))
    fit = get_calibration(runtime.store, "mc")
    assert not fit["supported"] and target_abilities(runtime.store, "mc") == []
