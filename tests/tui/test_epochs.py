"""Repeated runs (issue 37): ``viva run --epochs K`` runs each item K times per target with distinct seeds
(sent to the endpoint, so each epoch is its own sample and is cached apart); the leaderboard shows the
mean, the per-item spread and a Score interval over items and, within each item, its epochs."""

from __future__ import annotations

import json
import math
import sqlite3
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner

from engine.metrics.leaderboard import LEVEL, epoch_interval, epoch_spread
from engine.store import Store
from tests.engine.interview_fixtures import ANSWERS, is_target, make_bench
from tests.fakes.openai_server import sampled_reply
from tui.cli import main


def invoke(home: Path, *args: str):
    return CliRunner().invoke(main, ["--home", str(home), *args], catch_exceptions=False)


def test_spread_is_the_mean_per_item_standard_deviation_by_hand():
    spread = epoch_spread([[1.0, 2.0, 3.0], [4.0, 4.0, 6.0], [5.0]])
    # item 1: sd(1,2,3) = 1; item 2: mean 14/3, deviations -2/3, -2/3, 4/3 -> var (4/9+4/9+16/9)/2 = 4/3
    assert spread["spread"] == pytest.approx((1.0 + math.sqrt(4 / 3)) / 2)
    assert spread["spread_max"] == pytest.approx(math.sqrt(4 / 3))
    assert (spread["k_min"], spread["k_max"], spread["items_repeated"]) == (1, 3, 2)
    assert epoch_spread([[1.0], [2.0]]) is None, "one session per item: no spread"


def test_interval_matches_the_procedure_written_out_by_hand():
    scores = [[0.0, 10.0, 5.0], [20.0, 30.0], [7.0], [1.0, 2.0, 3.0]]
    resamples, seed = 400, 7
    # the documented draws, written out with loops
    rng = np.random.default_rng(seed)
    n, big = len(scores), 3
    items = rng.integers(0, n, size=(resamples, n))
    u = rng.random((resamples, n, big))
    means = []
    for r in range(resamples):
        total = 0.0
        for j in range(n):
            item = scores[items[r, j]]
            k = len(item)
            total += sum(item[int(u[r, j, e] * k)] for e in range(k)) / k
        means.append(total / n)
    tail = (1 - LEVEL) / 2 * 100
    expected = list(np.percentile(means, [tail, 100 - tail]))
    assert epoch_interval(scores, seed, resamples) == pytest.approx(expected)


def test_without_spread_within_items_two_items_give_their_two_scores_exactly():
    # items scored 2 and 8 in every epoch: a resample's Score is 2, 5 or 8 (1/4, 1/2, 1/4), so the 2.5th and
    # 97.5th percentiles are 2 and 8
    assert epoch_interval([[2.0, 2.0, 2.0], [8.0, 8.0, 8.0]], 0, 2000) == [2.0, 8.0]
    assert epoch_interval([[2.0, 3.0]], 0, 100) is None, "one item: no interval"


@pytest.fixture
def bench_home(home):
    store = Store(home / "viva.db")
    make_bench(store, n_items=3)
    store.close()
    return home


def test_three_epochs_two_prompts_at_temperature_above_zero(bench_home, fake_openai, tmp_path):
    fake_openai.rule(is_target, sampled_reply([ANSWERS[0], ANSWERS[1], ANSWERS[3], ANSWERS[6], ANSWERS[4]]))
    cfg = tmp_path / "viva.yaml"
    cfg.write_text(f"targets:\n  terse:\n    base_url: {fake_openai.base_url}\n    model: fake-target\n"
                   "    temperature: 0.8\n    system_prompt: Answer in one sentence.\n"
                   f"  kind:\n    base_url: {fake_openai.base_url}\n    model: fake-target\n"
                   "    temperature: 0.8\n    system_prompt: Answer kindly.\n", encoding="utf-8")
    args = ["--config", str(cfg), "run", "--bench", "oxy", "--target", "terse", "--target", "kind", "--kernel",
            "offline", "--policy", "threshold", "--turns", "2", "--epochs", "3", "--seed", "5"]
    result = invoke(bench_home, *args, "--json")
    assert result.exit_code == 0, result.output
    board = json.loads(result.stdout)["leaderboard"]
    assert len(board["rows"]) == 2
    db = sqlite3.connect(bench_home / "viva.db")
    seeds = sorted({r[0] for r in db.execute("SELECT seed FROM sessions")})
    assert seeds == [5, 6, 7], "epoch e has seed SEED+e"
    sent = {r.body.get("seed") for r in fake_openai.chat_requests() if is_target(r)}
    assert sent == {5, 6, 7}, "each epoch's seed is sent to the target"
    cached = db.execute("SELECT COUNT(*) FROM llm_calls WHERE role = 'target' AND cached = 1").fetchone()[0]
    assert cached == 0, "an epoch is never answered from another epoch's cached reply"
    for row in board["rows"]:
        sessions = {}
        for item, score in db.execute(
                "SELECT item_id, score FROM sessions WHERE target = ? AND status = 'finished'", (row["target"],)):
            sessions.setdefault(item, []).append(score)
        assert all(len(s) == 3 for s in sessions.values()) and len(sessions) == 3
        by_item = list(sessions.values())
        assert row["score"] == pytest.approx(np.mean([np.mean(s) for s in by_item]))
        assert row["epochs"]["spread"] == pytest.approx(np.mean([np.std(s, ddof=1) for s in by_item]))
        assert row["figures"]["score"]["ci"] == pytest.approx(
            epoch_interval([sessions[k] for k in sorted(sessions)], board["method"]["seed"],
                           board["method"]["resamples"]))
    assert any(row["epochs"]["spread"] > 0 for row in board["rows"]), "sampled answers differ between epochs"
    table = invoke(bench_home, *args)  # the same run again: a new run, same seeds, answered from the cache
    assert table.exit_code == 0, table.output
    assert "spread" in table.stdout and "over items and each item's epochs" in table.stdout


def test_run_report_shows_k_and_spread(bench_home, fake_openai):
    fake_openai.rule(is_target, sampled_reply([ANSWERS[0], ANSWERS[1], ANSWERS[6]]))
    spec = f"openai:fake-target@{fake_openai.base_url}"
    cfg = bench_home.parent / "warm.yaml"
    cfg.write_text(f"targets:\n  warm:\n    base_url: {fake_openai.base_url}\n    model: m\n    temperature: 1.0\n",
                   encoding="utf-8")
    ran = invoke(bench_home, "--config", str(cfg), "run", "--bench", "oxy", "--target", "warm", "--target", spec,
                 "--kernel", "offline", "--policy", "threshold", "--turns", "1", "--epochs", "2", "--quiet")
    assert ran.exit_code == 0, ran.output
    md = invoke(bench_home, "report", "run:1")
    assert "sessions per item (K)" in md.stdout and "per-item spread (SD)" in md.stdout
    assert "within each, its sessions" in md.stdout
