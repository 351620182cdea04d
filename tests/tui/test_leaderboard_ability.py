"""The app's leaderboard shows each target's ability with its interval and the expected Score beside
the Score on a calibrated benchmark, and "—" with the reason on one that is not (issue 28).

Four targets of known knowledge (the fake OpenAI server answers "Question N" right when N < K for the
model ``knows-K``) run a 12-question multiple-choice benchmark through the real engine, which is then
calibrated; ``fake-a`` runs the uncalibrated ``flu`` benchmark. Update the snapshot with
``--snapshot-update`` after looking at the SVG diff."""

from __future__ import annotations

import json
import re

import pytest
from textual.widgets import DataTable, Static

from engine.api import Engine, calibrate_benchmark, target_abilities
from engine.bench.importers import run_import
from engine.config import Config, ModelConfig
from engine.runtime import Runtime
from tests.tui.conftest import execute, freeze_timings, make_benchmark, plan, scripted_answer, wait_for
from tui.launch import build_app
from tui.screens.leaderboard import LeaderboardScreen

KNOWS = (3, 6, 9, 12)
SIZE = (150, 40)


def knows_answer(body: dict) -> str:
    """``knows-K`` picks the right option of question N when N < K; other models answer the flu script."""
    model = body.get("model", "")
    if not model.startswith("knows-"):
        return scripted_answer(body)
    asked = next(m["content"] for m in reversed(body["messages"]) if m["role"] == "user")
    found = re.search(r"Question (\d+):", asked)
    n = int(found.group(1)) if found else 99
    return f"The answer is right-{n}." if n < int(model[len("knows-"):]) else f"The answer is wrong-{n}."


@pytest.fixture
def calibrated(home, fake_openai, tmp_path):
    endpoint = ModelConfig(base_url=fake_openai.base_url, model="fake-model", timeout=10.0, max_retries=1)
    targets = {"fake-a": endpoint, **{f"knows{k}": endpoint.model_copy(update={"model": f"knows-{k}"}) for k in KNOWS}}
    fake_openai.default = knows_answer
    rt = Runtime(home=home, config=Config(targets=targets))
    make_benchmark(rt)
    with (tmp_path / "mc.jsonl").open("w", encoding="utf-8") as fh:
        for q in range(12):
            fh.write(json.dumps({"id": f"q{q}", "question": f"Question {q}: which label is right for item {q}?",
                                 "options": {"A": f"right-{q}", "B": f"wrong-{q}", "C": f"other-{q}"},
                                 "answer": f"right-{q}", "answer_idx": "A"}) + "\n")
    run_import(rt.store, rt.home, "medqa", tmp_path / "mc.jsonl", "mc")
    for k in KNOWS:
        assert not any(execute(rt, plan(rt, target=f"knows{k}", turns=1, bench="mc")).values())
    assert not any(execute(rt, plan(rt, target="fake-a", turns=1)).values())
    calibrate_benchmark(rt.store, "mc", min_targets=2)  # the board mechanics; a user's fit needs MIN_TARGETS
    freeze_timings(rt)
    yield rt
    rt.store.close()


def _app(runtime):
    """The review of fake-a's session (its header has no path that changes between runs), to open the board over."""
    sid = runtime.store.one("SELECT id FROM sessions WHERE target = 'fake-a'")["id"]
    return build_app(Engine(runtime), "review", session_id=sid)


async def _board(app, pilot):
    await wait_for(pilot, lambda: getattr(app.screen, "steps", None), "the review")
    app.push_screen(LeaderboardScreen("status:finished"))
    board = await wait_for(pilot, lambda: isinstance(app.screen, LeaderboardScreen) and app.screen, "board")
    await wait_for(pilot, lambda: board.query("#leaderboard-table"), "the table")
    table = board.query_one("#leaderboard-table", DataTable)
    await wait_for(pilot, lambda: table.row_count == 5, "the five rows")
    await pilot.pause()
    return board, table


async def test_the_board_shows_abilities_beside_the_score(calibrated):
    app = _app(calibrated)
    async with app.run_test(size=SIZE) as pilot:
        board, table = await _board(app, pilot)
        rows = {str(table.get_row_at(i)[0]): [str(c) for c in table.get_row_at(i)] for i in range(5)}
        known = {a["target"]: a for a in target_abilities(calibrated.store, "mc")}
        for k, score in zip(KNOWS, ("25.0", "50.0", "75.0", "100.0"), strict=True):
            a, cells = known[f"knows{k}"], rows[f"knows{k}"]
            assert cells[-2] == f"{a['ability']:+.2f} ± {1.96 * a['se']:.2f}"
            assert cells[-1] == score  # every item run: the expected Score is the Score (K of 12 right)
        assert rows["fake-a"][-2:] == ["—", "—"]  # flu has no calibration: no number
        order = [str(table.get_row_at(i)[0]) for i in range(5)]
        assert order == ["fake-a", "knows12", "knows9", "knows6", "knows3"]  # per benchmark, best Score first
        assert "ability: —, not calibrated (viva bench calibrate flu)" in str(board.query_one("#row-detail").render())
        table.move_cursor(row=2)
        a = known["knows9"]
        await wait_for(pilot, lambda: "knows9" in str(board.query_one("#row-detail", Static).render()), "the detail")
        detail = str(board.query_one("#row-detail", Static).render())
        assert (f"ability {a['ability']:+.2f}, SE {a['se']:.2f}, 95% interval {a['low']:+.2f} to {a['high']:+.2f}; "
                "expected Score on all 12 item(s) 75.0 (12 run; rasch calibration on 4 targets)") in detail


def test_leaderboard_with_abilities(snap_compare, calibrated):
    app = _app(calibrated)

    async def ready(pilot):
        await _board(app, pilot)

    assert snap_compare(app, terminal_size=SIZE, run_before=ready)


def test_a_long_target_spec_keeps_the_part_that_tells_targets_apart():
    from tui.board import short_target

    assert short_target("knows9", 12) == "knows9"
    assert short_target("python:bench.efficiency_targets:Able07", 12) == "Able07"
    assert short_target("openai:qwen2.5-0.5b@http://127.0.0.1:8080/v1", 12) == "qwen2.5-0.5b"
    assert short_target("kb:a-very-long-knowledge-base", 12) == "kb:a-very-long-knowledge-base"  # cut by the table
