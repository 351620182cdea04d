"""Issue 25: the app holds up under an evaluator's ordinary keys (each test failed before its fix)."""

from __future__ import annotations

import pytest
from textual.widgets import Button, Input, Static

from engine.api import MAX_FILTER_CHARS, Engine
from tests.tui.conftest import run_to_end, wait_for
from tui.launch import build_app
from tui.widgets.sessions import SessionsTable


async def test_a_long_filter_says_why_and_the_list_recovers(runtime):
    a = run_to_end(runtime, target="fake-a", turns=1)
    app = build_app(Engine(runtime), "home")
    async with app.run_test(size=(120, 40)) as pilot:
        table = app.screen.query_one(SessionsTable)
        await wait_for(pilot, lambda: table.row_count == 1, "the session list")
        filt = app.screen.query_one("#filter", Input)
        filt.value = "influenza " * 500  # a 5 KB paste
        await pilot.pause()
        error = app.screen.query_one("#filter-error", Static)
        assert error.display and f"the limit is {MAX_FILTER_CHARS}" in str(error.render())
        filt.value = " ".join(["fake"] * 13)  # short, but too many terms
        await pilot.pause()
        assert "13 terms" in str(error.render())
        filt.value = ""
        await wait_for(pilot, lambda: not error.display and not table.loading and table.shown_ids == [a],
                       "the list after clearing the filter")


async def test_enter_twice_in_a_dialog_submits_once(runtime):
    from tui.screens.dialogs import JumpDialog, OverrideDialog
    from tui.screens.review import ReviewScreen

    sid = run_to_end(runtime, target="fake-a", turns=3)
    app = build_app(Engine(runtime), "review", session_id=sid)
    async with app.run_test(size=(120, 40)) as pilot:
        review = await wait_for(pilot, lambda: isinstance(app.screen, ReviewScreen) and getattr(app.screen, "steps", None)
                                and app.screen, "the review")
        await pilot.press("tab")  # the checklist, where o overrides the highlighted criterion
        await pilot.press("o")
        dialog = await wait_for(pilot, lambda: isinstance(app.screen, OverrideDialog) and app.screen, "the dialog")
        for key in "ok":
            await pilot.press(key)
        # two Enters that both reach the dialog before it is gone (a slow repaint); before the fix the
        # second popped the review too: ScreenStackError, the app gone
        note = dialog.query_one(Input)
        dialog.post_message(Input.Submitted(note, note.value))
        dialog.post_message(Input.Submitted(note, note.value))  # the 2nd enter from the note never confirms
        await wait_for(pilot, lambda: dialog.confirming, "the confirmation step")
        await pilot.pause()
        assert app.screen is dialog, "two enters in the note reach the confirmation, not a saved override"
        save = dialog.query_one("#save", Button)
        dialog.post_message(Button.Pressed(save))
        dialog.post_message(Button.Pressed(save))
        await wait_for(pilot, lambda: app.screen is review, "back on review")
        await pilot.press("g")
        dialog = await wait_for(pilot, lambda: isinstance(app.screen, JumpDialog) and app.screen, "the jump dialog")
        turn = dialog.query_one(Input)
        turn.value = "1"
        for _ in range(3):
            dialog.post_message(Input.Submitted(turn, "1"))
        await wait_for(pilot, lambda: app.screen is review, "back on review after the jump")
        await pilot.pause()
        assert app.is_running and app.screen is review
        human = runtime.store.one("SELECT COUNT(*) AS n FROM verdicts v JOIN turns t ON t.id = v.turn_id "
                                  "WHERE t.session_id = ? AND v.source = 'human'", (sid,))["n"]
        assert human == 1, "one override, not two"


def test_key_remapping_conflicts_and_unknown_ids_stop_the_start(home, tmp_path):
    import yaml
    from click.testing import CliRunner

    from tui.cli import main as cli
    from tui.keys import KeymapError, check_keymap

    with pytest.raises(KeymapError, match=r"'p' would be both pause_resume and prev_session on Live"):
        check_keymap({"pause_resume": "p"})  # the help screen's old example
    with pytest.raises(KeymapError, match=r"'pause' is not a binding id"):
        check_keymap({"pause": "p"})  # the README's old example
    check_keymap({"challenge": "C", "pause_resume": "P"})  # the examples now given
    config = tmp_path / "viva.yaml"
    config.write_text(yaml.safe_dump({"keys": {"pause": "p", "stop": "f"}}))
    result = CliRunner().invoke(cli, ["--home", str(home), "--config", str(config), "tui"])
    assert result.exit_code != 0
    assert "'pause' is not a binding id" in result.output
    assert "'f' would be both follow_up and stop on Live" in result.output


def test_the_live_screen_says_what_a_second_request_does():
    from types import SimpleNamespace

    from tui.screens.live import queue_note

    state = SimpleNamespace(pending={})
    assert queue_note(state, "force", "challenge") == ""
    state.pending[5] = ("force", {"action": "challenge"})
    assert queue_note(state, "inject", "Why?") == "the queued challenge comes first, then your question, a turn each"
    assert queue_note(state, "force", "follow-up") == "it replaces the queued challenge"
    state.pending = {7: ("inject", {"question": "Why?"})}
    assert queue_note(state, "inject", "How?") == "it replaces the question you wrote before"
    assert queue_note(state, "force", "challenge") == "your written question comes first, then this one, a turn each"


async def test_f3_and_f4_open_the_current_session_not_an_empty_screen(runtime):
    from tui.screens.live import LiveScreen
    from tui.screens.review import ReviewScreen

    a = run_to_end(runtime, target="fake-a", turns=2)
    b = run_to_end(runtime, target="fake-b", turns=2)
    app = build_app(Engine(runtime), "home")
    async with app.run_test(size=(120, 40)) as pilot:
        table = app.screen.query_one(SessionsTable)
        await wait_for(pilot, lambda: table.row_count == 2, "the session list")
        await pilot.press("down")  # highlight session a (the list is newest first)
        await pilot.press("f4")
        review = await wait_for(pilot, lambda: isinstance(app.screen, ReviewScreen) and app.screen, "review")
        await wait_for(pilot, lambda: review.session_id == a and review.steps, "review of the highlighted session")
        await pilot.press("f3")
        live = await wait_for(pilot, lambda: isinstance(app.screen, LiveScreen) and app.screen, "live")
        await wait_for(pilot, lambda: live.state is not None and live.state.session_id == a and live.state.turns,
                       "live on the session under review")
        assert b != a


async def test_a_failed_session_reads_clearly(home, fake_openai):
    import socket

    from engine.config import Config, ModelConfig
    from engine.runtime import Runtime
    from tests.tui.conftest import execute, make_benchmark, plan
    from tui.screens.live import LiveScreen
    from tui.widgets.interview import InterviewPane
    from tui.widgets.keybar import KeyBar

    listener = socket.socket()  # listens while the run is planned, then the server is gone
    listener.bind(("127.0.0.1", 0))
    listener.listen()
    port = listener.getsockname()[1]
    dead = ModelConfig(base_url=f"http://127.0.0.1:{port}/v1", model="m", timeout=2.0, max_retries=0)
    rt = Runtime(home=home, config=Config(targets={"dead": dead}))
    try:
        make_benchmark(rt)
        run = plan(rt, target="dead", turns=2)
        listener.close()
        errors = execute(rt, run)
        [(sid, error)] = errors.items()
        assert error and "failed after" in error
        app = build_app(Engine(rt), "live", session_id=sid)
        async with app.run_test(size=(100, 30)) as pilot:
            live = await wait_for(pilot, lambda: isinstance(app.screen, LiveScreen) and app.screen.state is not None
                                  and app.screen.state.status == "failed" and app.screen, "the failed session")
            await pilot.pause()
            header = str(live.query_one("#session-header").render())
            cause = error.rsplit(":", 1)[-1].strip()
            assert "error: " in header and cause in header.replace("\n", " "), (cause, header)
            pane = live.query_one(InterviewPane)
            text = "".join(seg.text for y in range(pane.virtual_size.height)
                           for seg in pane.render_line(y - int(pane.scroll_y)))
            assert "waiting for the answer" not in text and "the session failed" in text
            keys = " ".join(item[1] for item in live.query_one(KeyBar).items)
            assert "Resume" in keys
    finally:
        rt.store.close()


async def test_the_new_interview_dialog_bounds_turns_and_finds_a_dead_port(runtime):
    import socket

    from tui.screens.new_interview import NewInterviewDialog

    app = build_app(Engine(runtime), "home")
    async with app.run_test(size=(120, 40)) as pilot:
        await pilot.press("n")
        dialog = await wait_for(pilot, lambda: isinstance(app.screen, NewInterviewDialog) and app.screen, "dialog")
        await wait_for(pilot, lambda: dialog.query_one("#items").option_count == 1, "the items")
        dialog.query_one("#target", Input).value = "fake-a"
        dialog.query_one("#turns", Input).value = "99999999999"
        await pilot.press("ctrl+s")
        await pilot.pause()
        assert "from 1 to 1000" in str(dialog.query_one("#new-error").render())
        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            port = s.getsockname()[1]
        dialog.query_one("#turns", Input).value = "2"
        dialog.query_one("#target", Input).value = f"openai:m@http://127.0.0.1:{port}/v1"
        await pilot.press("ctrl+s")
        await wait_for(pilot, lambda: "nothing listens" in str(dialog.query_one("#new-error").render()), "error")
        assert runtime.store.one("SELECT COUNT(*) AS n FROM sessions")["n"] == 0
