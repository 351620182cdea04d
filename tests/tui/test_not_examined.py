"""A session that examined nothing in the app (issue 23): Home lists it as "not examined" in its own
colour, ``status:not-examined`` filters it, and its header says why there is no score."""

from __future__ import annotations

from textual.widgets import Input

from engine.api import Engine
from tests.tui.conftest import execute, run_to_end, wait_for
from tui.launch import build_app
from tui.screens.review import ReviewScreen
from tui.widgets.header import SessionHeader
from tui.widgets.sessions import SessionsTable


def not_examined_session(runtime, fake) -> int:
    """A task session whose LLM examiner (the fake server) says TASK_FINISHED before asking anything."""
    from engine.bench.items import add_item, create_benchmark
    from engine.bench.rubric import create_rubric
    from engine.interview.run import RunRequest, plan_run, run_sessions

    store = runtime.store
    with store.transaction():
        bench = create_benchmark(store, "tasks", "jsonl")
        item = add_item(store, bench, 0, protocol="task", topic="echo",
                        question="Ask the agent to repeat the words Hello World.", meta={"max_rounds": 3})
        create_rubric(store, item, [{"text": "The agent says Hello World"}], author="human")
    fake.rule("act as an examiner", "TASK_FINISHED")
    run_id = plan_run(runtime, RunRequest(bench="tasks", targets=["fake-a"],
                                          kernel=f"openai:examiner@{fake.base_url}"))
    assert not any(execute(runtime, run_id).values())
    [sid] = run_sessions(runtime, run_id)
    assert store.one("SELECT status FROM sessions WHERE id = ?", (sid,))["status"] == "not_examined"
    return sid


async def test_home_shows_and_filters_a_session_that_examined_nothing(runtime, fake_openai):
    done = run_to_end(runtime, target="fake-a", turns=1)
    nothing = not_examined_session(runtime, fake_openai)
    app = build_app(Engine(runtime), "home")
    async with app.run_test(size=(120, 40)) as pilot:
        table = app.screen.query_one(SessionsTable)
        await wait_for(pilot, lambda: table.row_count == 2, "the session list")
        assert table.shown_ids == [nothing, done]
        status = table.get_row_at(0)[4]
        assert status.plain == "not examined" and "magenta" in str(status.style)
        assert table.get_row_at(1)[4].plain == "finished"
        await pilot.press("slash")
        for key in "status:not-examined":
            await pilot.press(key)
        await wait_for(pilot, lambda: table.shown_ids == [nothing], "the status filter")
        app.screen.query_one("#filter", Input).value = "status:finished"
        await wait_for(pilot, lambda: table.shown_ids == [done], "the finished filter")
        app.screen.query_one("#filter", Input).value = "status:not-examined"
        await wait_for(pilot, lambda: table.shown_ids == [nothing], "the status filter again")
        await pilot.press("enter")  # back to the table
        await pilot.press("enter")  # open the session
        await wait_for(pilot, lambda: isinstance(app.screen, ReviewScreen) and app.screen.state is not None
                       and app.screen.state.status == "not_examined", "review")
        await pilot.pause()
        header = str(app.screen.query_one(SessionHeader).render())
        assert "● not examined" in header and "not examined: the examiner stopped before asking" in header


async def test_the_leaderboard_counts_failed_and_not_examined_sessions(runtime, fake_openai):
    """The board's ``fail/ne`` column: a row's failed / not examined sessions, at 100 columns with every
    column whole; the detail says both."""
    from textual.widgets import DataTable

    from engine.interview.run import run_sessions
    from engine.interview.session import Session
    from tests.tui.conftest import plan
    from tests.tui.test_edges import _fits
    from tui.screens.leaderboard import LeaderboardScreen

    run_to_end(runtime, target="fake-a", turns=1)
    not_examined_session(runtime, fake_openai)
    [failed] = run_sessions(runtime, plan(runtime, target="fake-a", turns=1))
    Session(runtime.store, failed).set_status("failed", error="ConnectionError: no server")
    app = build_app(Engine(runtime), "home")
    async with app.run_test(size=(100, 30)) as pilot:
        await wait_for(pilot, lambda: app.screen.query_one(SessionsTable).row_count == 3, "the sessions")
        app.push_screen(LeaderboardScreen())
        board = await wait_for(pilot, lambda: isinstance(app.screen, LeaderboardScreen) and app.screen, "board")
        scope = await wait_for(pilot, lambda: board.query("#scope") and board.query_one("#scope", Input), "scope")
        scope.value = "target:fake-a"
        scope.focus()
        await pilot.press("enter")
        await wait_for(pilot, lambda: board.query(DataTable) and board.query_one(DataTable).row_count == 2, "rows")
        await pilot.pause()
        table = board.query_one(DataTable)
        assert _fits(table), (table.virtual_size.width, table.scrollable_content_region.width)
        by_bench = {str(table.get_row_at(i)[1]): str(table.get_row_at(i)[-1]) for i in range(table.row_count)}
        assert by_bench == {"flu": "1/0", "tasks": "0/1"}
