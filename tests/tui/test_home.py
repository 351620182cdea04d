"""Home: the session list (filter, live updates), benchmarks, a new interview from the dialog, and
watching a session that ``viva run`` runs in another process."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import yaml
from textual.widgets import DataTable, Input, Select

from engine.api import Engine
from tests.tui.conftest import make_runtime, run_to_end, wait_for
from tui.launch import build_app
from tui.screens.live import LiveScreen
from tui.screens.new_interview import NewInterviewDialog
from tui.screens.review import ReviewScreen
from tui.widgets.sessions import SessionsTable

ROOT = Path(__file__).resolve().parents[2]


async def test_sessions_benchmarks_and_filter(runtime):
    a = run_to_end(runtime, target="fake-a", turns=1)
    b = run_to_end(runtime, target="fake-b", turns=1, policy="random")
    app = build_app(Engine(runtime), "home")
    async with app.run_test(size=(120, 40)) as pilot:
        table = app.screen.query_one(SessionsTable)
        await wait_for(pilot, lambda: table.row_count == 2, "the session list")
        assert table.shown_ids == [b, a], "newest first"
        benches = app.screen.query_one("#benchmarks", DataTable)
        assert str(benches.get_row_at(0)[0]) == "flu"
        await pilot.press("slash")
        for key in "target:fake-b":
            await pilot.press(key)
        await wait_for(pilot, lambda: table.shown_ids == [b], "the filter")
        filt = app.screen.query_one("#filter", Input)
        filt.value = "colour:red"
        await pilot.pause()
        assert filt.has_class("-invalid") and "unknown filter field" in str(filt.tooltip)
        filt.value = "score>=0 finished"
        await wait_for(pilot, lambda: table.shown_ids == [b, a], "the score filter")
        await pilot.press("enter")  # back to the table
        await pilot.press("enter")  # open the highlighted (finished) session
        await wait_for(pilot, lambda: isinstance(app.screen, ReviewScreen) and app.screen.session_id == b, "review")


async def test_new_interview_from_the_dialog(runtime):
    app = build_app(Engine(runtime), "home")
    async with app.run_test(size=(120, 40)) as pilot:
        await pilot.press("n")
        dialog = await wait_for(pilot, lambda: isinstance(app.screen, NewInterviewDialog) and app.screen, "dialog")
        await wait_for(pilot, lambda: dialog.query_one("#items").option_count == 1, "the items")
        dialog.query_one("#target", Input).value = "fake-a"
        dialog.query_one("#policy", Select).value = "always-challenge"
        dialog.query_one("#turns", Input).value = "2"
        dialog.query_one("#target", Input).value = "nowhere"
        await pilot.press("ctrl+s")
        await wait_for(pilot, lambda: "cannot start" in str(dialog.query_one("#new-error").render()), "the error")
        assert app.screen is dialog, "a planning error keeps the dialog open"
        dialog.query_one("#target", Input).value = "fake-a"
        await pilot.press("ctrl+s")
        live = await wait_for(pilot, lambda: isinstance(app.screen, LiveScreen) and app.screen.state is not None
                              and app.screen.state.status == "finished" and app.screen, "the interview")
        assert [t.action for t in live.state.turns] == ["initial", "challenge"]
        assert live.state.target == "fake-a"


async def test_watch_a_session_run_by_another_process(runtime, fake_openai, tmp_path):
    make_runtime(runtime.home, fake_openai, slow=0.05)
    config = tmp_path / "viva.yaml"
    config.write_text(yaml.safe_dump({"targets": {"fake-a": {"base_url": fake_openai.base_url,
                                                              "model": "fake-model"}}}))
    app = build_app(Engine(runtime), "home")
    async with app.run_test(size=(120, 40)) as pilot:
        table = app.screen.query_one(SessionsTable)
        proc = subprocess.Popen(
            [sys.executable, "-m", "tui", "--home", str(runtime.home), "--config", str(config), "run",
             "--bench", "flu", "--target", "fake-a", "--kernel", "offline", "--turns", "4", "--policy",
             "threshold"], cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        try:
            await wait_for(pilot, lambda: table.sessions and table.sessions[0]["status"] == "running",
                           "the other process's session to appear")
            await pilot.press("enter")
            live = await wait_for(pilot, lambda: isinstance(app.screen, LiveScreen) and app.screen.state is not None
                                  and app.screen, "the live screen")
            assert not app.is_executing(live.state.session_id), "the app only watches"
            assert live.check_action("pause_resume", ()) is True, "control events reach the other runner"
            await wait_for(pilot, lambda: live.state.status == "finished", "the other process to finish", timeout=120)
            assert len(live.state.turns) == 4 and all(t.judged for t in live.state.turns)
        finally:
            proc.wait(timeout=120)
        assert proc.returncode == 0, proc.stderr.read().decode()[-2000:]
