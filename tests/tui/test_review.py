"""Review: a saved session replayed from its events, stepped turn by turn; compare two sessions;
the leaderboard; the report export."""

from __future__ import annotations

import json

from textual.widgets import DataTable, Input, RadioButton, Static

from engine.api import Engine
from engine.interview.control import override_verdict
from tests.tui.conftest import run_to_end, wait_for
from tui.launch import build_app
from tui.screens.compare import CompareScreen
from tui.screens.dialogs import ExportDialog, JumpDialog, PickSessionDialog
from tui.screens.leaderboard import LeaderboardScreen
from tui.widgets.interview import InterviewPane


def loaded(app) -> bool:
    return bool(getattr(app.screen, "steps", None)) and app.screen.state is not None


async def test_step_through_turns_and_jump(runtime):
    sid = run_to_end(runtime, turns=3)
    override_verdict(runtime.store, sid, 0, "c1", False, "checked by hand")
    app = build_app(Engine(runtime), "review", session_id=sid)
    async with app.run_test(size=(120, 40)) as pilot:
        await wait_for(pilot, lambda: loaded(app), "the session to load")
        review = app.screen
        labels = [s.label for s in review.steps]
        assert labels == ["turn 0 judged", "turn 1 judged", "turn 2 judged",
                          "override: c1 on turn 0 set to not met"]
        # The end of the record: every turn, the override applied.
        assert review.pane.turn_count == 3
        assert review.state.turns[0].verdicts["c1"].overridden
        assert review.check_action("step", (1,)) is None, "nothing after the end"
        await pilot.press("left")  # before the override
        assert review.step_index == 2 and not review.state.turns[0].verdicts["c1"].overridden
        await pilot.press("left", "left")
        assert review.step_index == 0
        assert review.pane.turn_count == 1, "the replay shows only the turns up to this point"
        assert review.check_action("step", (-1,)) is None
        assert review.check_action("override", ()) is None, "edits apply at the end of the record"
        await pilot.press("right")
        assert review.pane.turn_count == 2 and review.pane.selected == 1
        await pilot.press("g")
        dialog = await wait_for(pilot, lambda: isinstance(app.screen, JumpDialog) and app.screen, "the jump dialog")
        dialog.query_one(Input).value = "2"
        await pilot.press("enter")
        await wait_for(pilot, lambda: app.screen is review and review.step_index == 2, "the jump")
        assert review.pane.selected == 2
        timeline = str(review.query_one("#timeline").render())
        assert "turn 2 judged" in timeline and "rubric v1" in timeline


async def test_override_in_review_reloads_the_record(runtime):
    sid = run_to_end(runtime, turns=2)
    app = build_app(Engine(runtime), "review", session_id=sid)
    async with app.run_test(size=(120, 40)) as pilot:
        await wait_for(pilot, lambda: loaded(app), "the session to load")
        review = app.screen
        cid = review.checklist.selected_cid
        met = review.state.turns[1].verdicts[cid].met
        await pilot.press("o")
        await wait_for(pilot, lambda: app.screen is not review, "the override dialog")
        await pilot.press("y" if not met else "n", "tab", *"by hand", "ctrl+s")
        assert app.screen.confirming, "the first ctrl+s shows the confirmation, saves nothing"
        await pilot.press("ctrl+s")
        await wait_for(pilot, lambda: review.steps[-1].label.startswith(f"override: {cid} on turn 1"),
                       "the reloaded record")
        assert review.state.turns[1].verdicts[cid].met is (not met)
        assert review.step_index == len(review.steps) - 1, "the replay stays at the end of the record"


async def test_compare_two_sessions_of_the_same_item(runtime):
    a = run_to_end(runtime, target="fake-a", turns=2, policy="threshold")
    b = run_to_end(runtime, target="fake-b", turns=3, policy="always-challenge")
    app = build_app(Engine(runtime), "review", session_id=a)
    async with app.run_test(size=(120, 40)) as pilot:
        await wait_for(pilot, lambda: loaded(app), "the session to load")
        await pilot.press("c")
        picker = await wait_for(pilot, lambda: isinstance(app.screen, PickSessionDialog) and app.screen, "picker")
        assert [r["id"] for r in picker.rows] == [b]
        await pilot.press("enter")
        compare = await wait_for(pilot, lambda: isinstance(app.screen, CompareScreen) and app.screen.states
                                 and app.screen, "the compare screen")
        assert [s.target for s in compare.states] == ["fake-a", "fake-b"]
        table = compare.query_one("#compare-table", DataTable)
        assert table.row_count == 3
        assert "challenge" in str(table.get_row_at(1)[4])
        await pilot.press("right")
        panes = compare.query(InterviewPane)
        assert [p.selected for p in panes] == [1, 1]
        await pilot.press("right")
        assert [p.selected for p in panes] == [1, 2], "each side stops at its own last turn"
        await pilot.press("escape")
        await wait_for(pilot, lambda: not isinstance(app.screen, CompareScreen), "back to review")


async def test_leaderboard_and_export(runtime, tmp_path):
    a = run_to_end(runtime, target="fake-a", turns=2)
    run_to_end(runtime, target="fake-b", turns=2)
    app = build_app(Engine(runtime), "review", session_id=a)
    async with app.run_test(size=(120, 40)) as pilot:
        await wait_for(pilot, lambda: loaded(app), "the session to load")
        await pilot.press("l")
        board = await wait_for(pilot, lambda: isinstance(app.screen, LeaderboardScreen) and app.screen, "board")
        table = board.query_one(DataTable)
        await wait_for(pilot, lambda: table.row_count == 1, "the latest run's row")
        assert str(table.get_row_at(0)[0]) == "fake-b", "by default the board is the latest run's"
        board.query_one("#scope", Input).value = "bench:flu"
        board.query_one("#scope", Input).focus()
        await pilot.press("enter")
        await wait_for(pilot, lambda: table.row_count == 2, "the benchmark's rows")
        assert {str(table.get_row_at(i)[0]) for i in range(2)} == {"fake-a", "fake-b"}
        assert "paired: fake-" in str(board.query_one("#comparisons", Static).render())
        table.focus()
        await pilot.press("escape")
        await pilot.press("ctrl+e")
        dialog = await wait_for(pilot, lambda: isinstance(app.screen, ExportDialog) and app.screen, "export dialog")
        await pilot.click("#fmt-json")
        path = dialog.query_one("#export-path", Input)
        assert path.value.endswith(".json"), "the file name follows the format"
        path.value = str(tmp_path / "report.json")
        await pilot.press("ctrl+s")
        await wait_for(pilot, lambda: (tmp_path / "report.json").exists(), "the report file")
        report = json.loads((tmp_path / "report.json").read_text())
        assert json.dumps(report).count("fake-a") >= 1


def notified(app, text: str) -> bool:
    return any(text in str(n.message) for n in app._notifications)


async def test_export_offers_every_format_into_the_exports_folder(runtime):
    sid = run_to_end(runtime, target="fake-a", turns=2)
    exports = runtime.home / "exports"
    app = build_app(Engine(runtime), "review", session_id=sid)
    async with app.run_test(size=(120, 40)) as pilot:
        await wait_for(pilot, lambda: loaded(app), "the session to load")
        await pilot.press("ctrl+e")
        dialog = await wait_for(pilot, lambda: isinstance(app.screen, ExportDialog) and app.screen, "export dialog")
        assert [b.id for b in dialog.query(RadioButton)] == ["fmt-html", "fmt-md", "fmt-json", "fmt-csv"]
        path = dialog.query_one("#export-path", Input)
        assert path.value == str(exports / f"viva-session-{sid}.html"), "HTML into the data home's exports/"
        assert str(exports) in str(dialog.query_one("#export-folder", Static).render())
        await pilot.press("enter")
        page = exports / f"viva-session-{sid}.html"
        await wait_for(pilot, lambda: page.exists() and notified(app, str(page)), "the HTML report and its path")
        assert "<svg" in page.read_text(encoding="utf-8")
        # CSV, under a relative name: inside the exports folder
        await pilot.press("ctrl+e")
        dialog = await wait_for(pilot, lambda: isinstance(app.screen, ExportDialog) and app.screen, "export dialog")
        await pilot.click("#fmt-csv")
        path = dialog.query_one("#export-path", Input)
        assert path.value.endswith(f"viva-session-{sid}.csv")
        path.value = "mine.csv"
        await pilot.press("ctrl+s")
        table = exports / "mine.csv"
        await wait_for(pilot, lambda: table.exists() and notified(app, str(table)), "the CSV report and its path")
        data = table.read_bytes()
        assert data.startswith(b"session,turn,") and data.endswith(b"\r\n") and not data.endswith(b"\r\n\r\n")
        assert data.count(b"\r\n") == 1 + 2  # header and one row per turn
        # Markdown; an empty name is refused with a warning
        await pilot.press("ctrl+e")
        dialog = await wait_for(pilot, lambda: isinstance(app.screen, ExportDialog) and app.screen, "export dialog")
        await pilot.click("#fmt-md")
        dialog.query_one("#export-path", Input).value = ""
        await pilot.press("ctrl+s")
        assert app.screen is dialog and notified(app, "Give a file name.")
        dialog.query_one("#export-path", Input).value = str(exports / f"viva-session-{sid}.md")
        await pilot.press("ctrl+s")
        md = exports / f"viva-session-{sid}.md"
        await wait_for(pilot, lambda: md.exists(), "the Markdown report")
        assert md.read_text(encoding="utf-8").startswith(f"# viva session {sid}")


async def test_review_without_a_session_asks_which(runtime):
    sid = run_to_end(runtime, turns=1)
    app = build_app(Engine(runtime), "review")
    async with app.run_test(size=(120, 40)) as pilot:
        picker = await wait_for(pilot, lambda: isinstance(app.screen, PickSessionDialog) and app.screen, "picker")
        assert [r["id"] for r in picker.rows] == [sid]
        await pilot.press("enter")
        await wait_for(pilot, lambda: loaded(app) and app.screen.session_id == sid, "the session")
