"""The app's rough edges a newcomer met (issue 16), each checked with the Pilot against the real engine:
the key bar says Resume while paused; the override dialog takes a typed note and saves on enter; help
descriptions are never cut; the new-interview items show which are chosen without colour and no
label is cut; the compare picker leaves out sessions with no answer and shows whole dates; the
leaderboard shows every column; review's ``g 3`` and its header count turns the same way; Home
starts on the sessions, so its keys work at once."""

from __future__ import annotations

from textual.widgets import DataTable, Input, Label, RadioButton

from engine.api import Engine
from engine.interview.run import RunRequest, plan_run, run_sessions
from engine.interview.session import Session
from tests.tui.conftest import make_runtime, plan, run_to_end, wait_for
from tui.launch import build_app
from tui.screens.dialogs import JumpDialog, OverrideDialog, PickSessionDialog
from tui.screens.help import HelpScreen
from tui.screens.leaderboard import LeaderboardScreen
from tui.screens.new_interview import MarkedSelectionList, NewInterviewDialog
from tui.widgets.checklist import RubricChecklist
from tui.widgets.keybar import KeyBar


def _description(app, action: str) -> str | None:
    bar = app.screen.query_one(KeyBar)
    return next((item[1] for item in bar.items if item[3] == action), None)


def _fits(table: DataTable) -> bool:
    """Every column of the table is inside its visible width (nothing cut at the right edge)."""
    return table.virtual_size.width <= table.scrollable_content_region.width


async def test_key_bar_says_resume_while_paused(runtime, fake_openai):
    make_runtime(runtime.home, fake_openai, slow=0.1)
    run_id = plan(runtime, turns=6)
    app = build_app(Engine(runtime), "live", run_id=run_id)
    async with app.run_test(size=(120, 40)) as pilot:
        await wait_for(pilot, lambda: app.screen.state is not None and app.screen.state.turns, "turn 0")
        await wait_for(pilot, lambda: _description(app, "pause_resume") == "Pause", "the key bar")
        await pilot.press("space")
        await wait_for(pilot, lambda: _description(app, "pause_resume") == "Resume", "Resume once pause is asked")
        await wait_for(pilot, lambda: app.screen.state.status == "paused", "the pause")
        assert _description(app, "pause_resume") == "Resume"
        await pilot.press("f1")
        help_screen = await wait_for(pilot, lambda: isinstance(app.screen, HelpScreen) and app.screen, "help")
        assert next(r["description"] for r in help_screen.rows if r["action"] == "pause_resume") == "Resume"
        await pilot.press("escape")
        await pilot.press("space")
        await wait_for(pilot, lambda: app.screen.state.status == "running", "the resume")
        await wait_for(pilot, lambda: _description(app, "pause_resume") == "Pause", "Pause again")
        await pilot.press("x")
        await wait_for(pilot, lambda: app.screen.state.status == "stopped", "the stop")


async def _override_dialog(app, pilot, cid: str = "c1"):
    await wait_for(pilot, lambda: app.screen.state is not None and app.screen.state.status == "finished", "session")
    checklist = app.screen.query_one(RubricChecklist)
    await pilot.press("tab")
    while checklist.selected_cid != cid:
        await pilot.press("down")
    await pilot.press("o")
    return await wait_for(pilot, lambda: isinstance(app.screen, OverrideDialog) and app.screen, "the dialog")


async def test_override_dialog_takes_a_typed_note_and_saves_on_enter(runtime):
    sid = run_to_end(runtime, turns=1)
    app = build_app(Engine(runtime), "live", session_id=sid)
    async with app.run_test(size=(120, 40)) as pilot:
        live = app.screen
        await wait_for(pilot, lambda: live.state is not None and live.state.status == "finished", "the session")
        judged_met = live.state.turns[0].verdicts["c1"].met
        dialog = await _override_dialog(app, pilot)
        assert isinstance(app.focused, Input) and app.focused.id == "override-note"
        chosen = dialog.query_one("#choice-met", RadioButton).value
        assert chosen is not judged_met, "the choice starts on the opposite of the verdict"
        await pilot.press(*"yes, not new")  # y and n are letters of the note here
        assert dialog.query_one("#override-note", Input).value == "yes, not new"
        assert dialog.query_one("#choice-met", RadioButton).value is chosen, "typing did not flip the choice"
        await pilot.press("enter")
        await wait_for(pilot, lambda: dialog.confirming, "the confirmation step")
        assert "Score" in str(dialog.query_one("#override-effect").render())
        await pilot.press("enter")  # on "Confirm"
        await wait_for(pilot, lambda: live.state.turns[0].verdicts["c1"].overridden, "the override")
        assert live.state.turns[0].verdicts["c1"].met is chosen
        assert live.state.turns[0].verdicts["c1"].rationale == "yes, not new"

        # From the choice: tab back to it, y / n choose there, enter saves too.
        dialog = await _override_dialog(app, pilot)
        await pilot.press("shift+tab")
        assert app.focused.id == "override-choice"
        await pilot.press("n")
        assert dialog.query_one("#choice-not-met", RadioButton).value
        await pilot.press("enter")
        assert not dialog.confirming and app.screen is dialog, "an empty note is refused"
        assert "note is required" in str(dialog.query_one("#override-error").render())
        assert app.focused.id == "override-note"
        await pilot.press(*"back", "enter", "enter")
        await wait_for(pilot, lambda: app.screen is live, "enter on the confirmation saves")
        await wait_for(pilot, lambda: live.state.turns[0].verdicts["c1"].met is False
                       and live.state.turns[0].verdicts["c1"].rationale == "back", "the 2nd override")


async def test_help_descriptions_are_never_cut(runtime):
    sid = run_to_end(runtime, turns=1)
    for width in (200, 100):
        app = build_app(Engine(runtime), "live", session_id=sid)
        async with app.run_test(size=(width, 50)) as pilot:
            await wait_for(pilot, lambda a=app: a.screen.state is not None, "the session")
            await pilot.press("f1")
            screen = await wait_for(pilot, lambda a=app: isinstance(a.screen, HelpScreen) and a.screen, "help")
            await pilot.pause()
            table = screen.query_one(DataTable)
            column = table.columns[next(k for k in table.columns if k.value == "what")]
            longest = max(len(r["tooltip"]) for r in screen.rows)
            assert _fits(table), f"the table is cut at {width} columns"
            for key, row in table.rows.items():
                tooltip = str(table.get_cell(key, "what"))
                lines = -(-len(tooltip) // column.width) if tooltip else 1
                assert row.height >= lines, f"{tooltip!r} is cut at {width} columns"
            if width == 200:
                assert column.width >= longest, "at 200 columns every description fits on one line"


async def test_new_interview_marks_chosen_items_and_cuts_no_label(runtime):
    app = build_app(Engine(runtime), "home")
    async with app.run_test(size=(120, 40)) as pilot:
        await pilot.press("n")
        dialog = await wait_for(pilot, lambda: isinstance(app.screen, NewInterviewDialog) and app.screen, "dialog")
        items = dialog.query_one(MarkedSelectionList)
        await wait_for(pilot, lambda: items.option_count >= 1, "the items")
        from engine.bench.items import add_item, get_benchmark
        from engine.bench.rubric import create_rubric

        bench = get_benchmark(runtime.store, "flu")
        with runtime.store.transaction():  # a second item, to see an unchosen one
            extra = add_item(runtime.store, bench.id, 1, protocol="adaptive", topic="flu", question="How is it treated?")
            create_rubric(runtime.store, extra, [{"text": "Rest and fluids"}], author="human")
        dialog._load_items("flu")
        await wait_for(pilot, lambda: items.option_count == 2, "both items")
        await pilot.pause()
        first, second = (items.render_line(i).text for i in range(2))
        assert "X" in first[:4] and "X" not in second[:4], (first, second)
        for label in dialog.query(Label):
            text = str(label.render())
            assert label.region.width >= len(text), f"label cut: {text!r}"
        protocol = dialog.query_one("#protocol")
        assert "auto (each item's own)" in str(protocol.query_one("SelectCurrent").render()) or \
            protocol.region.width >= len("auto (each item's own)") + 4


async def test_compare_picker_leaves_out_sessions_with_no_answer_and_shows_whole_dates(runtime):
    a = run_to_end(runtime, target="fake-a", turns=1)
    b = run_to_end(runtime, target="fake-b", turns=1)
    run_id = plan_run(runtime, RunRequest(bench="flu", targets=["fake-a"], kernel="offline", turns=1,
                                          policy="threshold"))
    failed = run_sessions(runtime, run_id)[0]
    Session(runtime.store, failed).set_status("failed", error="ConnectionError: no server")  # as a dead target
    app = build_app(Engine(runtime), "review", session_id=a)
    async with app.run_test(size=(130, 40)) as pilot:
        await wait_for(pilot, lambda: getattr(app.screen, "steps", None), "the review")
        await pilot.press("c")
        picker = await wait_for(pilot, lambda: isinstance(app.screen, PickSessionDialog) and app.screen, "picker")
        assert [r["id"] for r in picker.rows] == [b], "the failed session with no answer is not offered"
        await pilot.pause()
        table = picker.query_one(DataTable)
        assert _fits(table), "the date column is cut"
        date = str(table.get_cell_at((0, len(table.columns) - 1)))
        assert len(date) == 16 and date[4] == "-" and date[13] == ":", date


async def test_leaderboard_shows_every_column(runtime):
    run_to_end(runtime, target="fake-a", turns=1)
    app = build_app(Engine(runtime), "review", session_id=None)
    async with app.run_test(size=(150, 40)) as pilot:
        app.push_screen(LeaderboardScreen())
        board = await wait_for(pilot, lambda: isinstance(app.screen, LeaderboardScreen) and app.screen, "board")
        await wait_for(pilot, lambda: board.query(DataTable) and board.query_one(DataTable).row_count >= 1, "rows")
        table = board.query_one(DataTable)
        await pilot.pause()
        assert _fits(table), "a column (the intervals, the last figures) is cut"
        # no calibrated benchmark in scope: no ability columns (tests/tui/test_leaderboard_ability.py has them)
        assert [c.label.plain for c in table.columns.values()][-1] == "fail/ne"


async def test_review_jump_and_header_count_turns_the_same_way(runtime):
    sid = run_to_end(runtime, turns=4)
    app = build_app(Engine(runtime), "review", session_id=sid)
    async with app.run_test(size=(120, 40)) as pilot:
        await wait_for(pilot, lambda: getattr(app.screen, "steps", None), "the review")
        review = app.screen
        await pilot.press("g")
        dialog = await wait_for(pilot, lambda: isinstance(app.screen, JumpDialog) and app.screen, "jump")
        dialog.query_one(Input).value = "3"
        await pilot.press("enter")
        await wait_for(pilot, lambda: app.screen is review, "the jump")
        header = str(review.query_one("#session-header").render())
        timeline = str(review.query_one("#timeline").render())
        assert "turn 3 judged" in timeline
        assert "turn 3 · 4/4 judged" in header, header
        await pilot.press("left")
        header = str(review.query_one("#session-header").render())
        assert "turn 2 · 3/4 judged" in header, header


async def test_home_starts_on_the_sessions_so_keys_work(runtime):
    run_to_end(runtime, turns=1)
    app = build_app(Engine(runtime), "home")
    async with app.run_test(size=(120, 40)) as pilot:
        await pilot.pause()
        assert app.focused is not None and app.focused.id == "sessions"
        await pilot.press("question_mark")
        await wait_for(pilot, lambda: isinstance(app.screen, HelpScreen), "help from Home")
        assert app.screen_stack[0].query_one("#filter", Input).value == ""
