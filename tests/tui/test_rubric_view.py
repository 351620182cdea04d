"""A rubric (SedarEval) session in the app: the 0–5 judgement under the last turn (labelled when it is
an offline estimate) and the per-category board in the leaderboard."""

from __future__ import annotations

from textual.widgets import DataTable

from engine.api import Engine
from tests.tui.conftest import execute, wait_for
from tui.launch import build_app
from tui.screens.leaderboard import LeaderboardScreen

TURNS = ["What causes influenza?", "How does it spread?"]


def rubric_session(runtime) -> int:
    """A two-turn rubric item run to its end by the offline kernel (an offline estimate)."""
    from engine.bench.items import add_item, create_benchmark
    from engine.bench.rubric import create_rubric
    from engine.interview.run import RunRequest, plan_run, run_sessions

    store = runtime.store
    with store.transaction():
        bench = create_benchmark(store, "sed", "sedareval")
        item = add_item(store, bench, 0, protocol="rubric", topic="医学", question="\n".join(TURNS), turns=TURNS,
                        meta={"category": ["问答", "医学", "流感"], "language": "en"})
        create_rubric(store, item, [
            {"text": "Influenza is caused by influenza viruses", "weight": 3},
            {"text": "Influenza spreads through respiratory droplets when people cough or sneeze", "weight": 2},
            {"text": "Claims that antibiotics cure influenza", "kind": "deduction", "weight": 1}], author="importer")
    run_id = plan_run(runtime, RunRequest(bench="sed", targets=["fake-a"], kernel="offline"))
    errors = execute(runtime, run_id)
    assert not any(errors.values()), errors
    return run_sessions(runtime, run_id)[0]


async def test_review_shows_the_judgement_and_the_category_board(runtime):
    sid = rubric_session(runtime)
    app = build_app(Engine(runtime), "review", session_id=sid)
    async with app.run_test(size=(120, 40)) as pilot:
        await wait_for(pilot, lambda: getattr(app.screen, "steps", None) and app.screen.state is not None,
                       "the session to load")
        pane = app.screen.pane
        assert pane.turn_count == 2
        first, last = pane.turn_text(0), pane.turn_text(1)
        assert "judging" not in first and "score" not in first  # scored once, at the end
        # the scripted target states both points: (3 + 2) / 5 of the rubric -> 5 / 5
        assert "score 5 / 5 · offline estimate" in last
        assert "offline estimate (the reference answer's" in last and "c1 +3 met" in last
        await pilot.press("l")
        board = await wait_for(pilot, lambda: isinstance(app.screen, LeaderboardScreen) and app.screen, "board")
        table = board.query_one("#rubric-table", DataTable)
        await wait_for(pilot, lambda: table.row_count > 0, "the rubric board")
        labels = [str(c.label) for c in table.columns.values()]
        assert labels[0] == "category" and labels[1].endswith("(offline estimate)")
        rows = [[str(v) for v in table.get_row_at(i)] for i in range(table.row_count)]
        assert rows[0] == ["overall", "100.0 (1)"]
        assert [r[0] for r in rows[2:]] == ["问答", "  医学", "    流感"]  # all three levels
