"""Multiple choice against chance, n that counts questions, and "too few to read" (issue 36).

The unit tests check :mod:`engine.metrics.chance` against figures worked by hand; the run test drives a
graded multiple-choice run through the real engine (offline kernel, targets behind the fake OpenAI
server) and reads the leaderboard, the app's board text and the run report."""

from __future__ import annotations

import asyncio

import pytest

from engine.bench.items import add_item, create_benchmark
from engine.bench.rubric import create_rubric
from engine.config import Config
from engine.interview.run import RunRequest, execute_run, plan_run
from engine.metrics.chance import MIN_READ_N, chance_rate, read_note, too_few, versus_chance
from engine.metrics.leaderboard import leaderboard
from engine.metrics.sessions import target_table
from engine.report.model import build_run_report
from engine.runtime import Runtime
from tui.board import cells, columns_for, detail, legend


def test_chance_rate_is_the_mean_of_one_over_the_options():
    assert chance_rate([4, 4, 4]) == pytest.approx(25.0)
    assert chance_rate([4, 2]) == pytest.approx(37.5)  # (1/4 + 1/2) / 2
    assert chance_rate([5]) == pytest.approx(20.0)
    assert chance_rate([4, None]) is None, "a question that is not multiple choice: no chance rate"
    assert chance_rate([4, 1]) is None and chance_rate([]) is None


def test_below_chance_needs_the_wilson_upper_end_under_it():
    # 0 of 3 at chance 25: Wilson upper = z²/(n + z²) = 3.8416 / 6.8416 = 0.5615, so within noise
    c = versus_chance([0.0, 0.0, 0.0], 25.0)
    assert (c.right, c.answers, c.share) == (0, 3, 0.0)
    assert c.ci[1] == pytest.approx(100 * 3.8416 / 6.8416, abs=1e-3)
    assert c.under and not c.below and "within noise" in c.note
    # 0 of 20: upper = 3.8416 / 23.8416 = 16.11 < 25: flagged
    c = versus_chance([0.0] * 20, 25.0)
    assert c.ci[1] == pytest.approx(100 * 3.8416 / 23.8416, abs=1e-3)
    assert c.below and c.note.startswith("BELOW CHANCE")
    # 12 is the fewest all-wrong answers flagged at chance 25 (upper = z²/(n+z²) < 1/4 iff n > 3z² = 11.52)
    assert versus_chance([0.0] * 12, 25.0).below and not versus_chance([0.0] * 11, 25.0).below
    # exactly at chance: not under
    c = versus_chance([100.0] * 5 + [0.0] * 15, 25.0)
    assert c.share == 25.0 and not c.under and not c.below
    # a partial score: no comparison, said
    c = versus_chance([100.0, 50.0], 25.0)
    assert c.answers is None and not c.below and "partial" in c.note


def test_too_few_to_read_is_the_judge_check_rule():
    assert MIN_READ_N == 50
    assert too_few(49) and not too_few(50) and not too_few(None)
    assert read_note(9) == "too few to read (n = 9 question(s) < 50)"
    assert read_note(50) is None


OPTIONS4 = {"A": "Iron", "B": "Oxygen", "C": "Silicon", "D": "Aluminium"}


@pytest.fixture
def graded_run(home, fake_openai):
    """Seven graded questions in batches of 3, 3 and 1: five with four options, one with two, one with five;
    the gold is B on the first three, A on the rest. ``pickb`` always answers B (3 of 7 right), ``pickc``
    answers C (none right)."""
    rt = Runtime(home=home, config=Config())
    options = [OPTIONS4] * 5 + [{"A": "Iron", "B": "Oxygen"}, {**OPTIONS4, "E": "Neon"}]
    with rt.store.transaction():
        bid = create_benchmark(rt.store, "mc", "medqa")
        for i, opts in enumerate(options):
            gold = "B" if i < 3 else "A"
            item = add_item(rt.store, bid, i, protocol="graded", topic="geo", question=f"Question {i}: which element?",
                            options=opts, gold=gold, reference=opts[gold])
            create_rubric(rt.store, item, [{"text": f"Chooses option {gold}", "answers": [gold]}], author="importer")
    fake_openai.rule(lambda r: "pickb" in r.body["model"], "B")
    fake_openai.rule(lambda r: "pickc" in r.body["model"], "The answer is C.")
    b, c = f"openai:pickb@{fake_openai.base_url}", f"openai:pickc@{fake_openai.base_url}"
    run_id = plan_run(rt, RunRequest(bench="mc", targets=[b, c], kernel="offline"))
    errors = asyncio.run(execute_run(rt, run_id))
    assert not any(errors.values()), errors
    yield rt, run_id, b, c
    rt.close()


def test_a_graded_multiple_choice_board_counts_questions_and_shows_chance(graded_run):
    rt, run_id, b, c = graded_run
    ids = [r["id"] for r in rt.store.query("SELECT id FROM sessions WHERE run_id = ?", (run_id,))]
    assert len(ids) == 6, "three batches per target"
    board = leaderboard(rt.store, ids)
    rows = {r["target"]: r for r in board["rows"]}
    pickb, pickc = rows[b], rows[c]
    # n counts the 7 questions, not the 3 batches; the Score is the share of questions right (3/7), not the mean
    # of the batches' Scores (100, 0, 0 -> 33.3)
    assert pickb["figures"]["score"]["n"] == 7 and pickb["unit"] == "question"
    assert pickb["score"] == pytest.approx(300 / 7)
    assert pickc["score"] == 0.0
    # the per-target table (the run report's "Score by target", `viva run`'s summary) says the same Score
    by_target = {r["target"]: r for r in target_table(rt.store, ids)}
    assert by_target[b]["score"] == pytest.approx(300 / 7) and by_target[c]["score"] == 0.0
    assert pickb["figures"]["score"]["too_few"] and "n = 7 question(s) < 50" in pickb["figures"]["score"]["read_note"]
    # chance: (5 × 1/4 + 1/2 + 1/5) / 7
    expected = 100 * (5 * 0.25 + 0.5 + 0.2) / 7
    assert pickb["chance"]["chance"] == pytest.approx(expected)
    assert (pickb["chance"]["right"], pickb["chance"]["answers"]) == (3, 7)
    assert not pickb["chance"]["under"]
    # 0 of 7: Wilson upper = 3.8416 / 10.8416 = 35.4 > 27.9: under chance, not flagged
    assert pickc["chance"]["under"] and not pickc["chance"]["below"]
    assert pickc["chance"]["ci"][1] == pytest.approx(100 * 3.8416 / 10.8416, abs=1e-3)
    pair = board["comparisons"][0]
    assert pair["n"] == 7 and pair["unit"] == "question" and pair["too_few"]

    # what the app and `viva run` print
    columns = columns_for(board)
    headers = [h for h, _, _ in columns]
    assert headers[headers.index("Score [95% CI]") + 1] == "chance"
    row = dict(zip(headers, cells(pickc, columns=columns), strict=True))
    assert row["n"] == "7*" and row["chance"] == f"{expected:.1f}"
    assert "n=7 question(s)" in detail(pickc) and "under chance 27.9 but within noise" in detail(pickc)
    assert "too few to read (n = 7 question(s) < 50): every figure below is noise" in detail(pickc).splitlines()[0]
    assert any(line.startswith("n: questions scored") for line in legend(board))

    # the run report: n with its unit and the read note, the chance comparison
    report = build_run_report(rt.store, run_id)
    table = report.section("leaderboard-intervals")
    assert table.columns[2:5] == ["n", "Score", "vs chance"]
    by_target = {r[1]: r for r in table.rows}
    assert by_target[b][2] == "7 question(s); too few to read (n = 7 question(s) < 50)"
    assert by_target[c][4].startswith("under chance 27.9 but within noise: 0/7 right")
