"""Keys: every binding has an id, the config remaps by id, keys that do not apply are dimmed, the
command palette lists every action, the help screen lists the keys; light and dark themes; the
CLI commands open the right screen."""

from __future__ import annotations

import inspect

from click.testing import CliRunner
from textual.binding import Binding

import tui.app
import tui.screens.compare
import tui.screens.dialogs
import tui.screens.editor
import tui.screens.help
import tui.screens.home
import tui.screens.leaderboard
import tui.screens.live
import tui.screens.new_interview
import tui.screens.review
import tui.screens.session_base
import tui.widgets.interview
from engine.api import Engine
from engine.config import Config
from engine.runtime import Runtime
from tests.tui.conftest import run_to_end, wait_for
from tui.launch import build_app
from tui.screens.help import HelpScreen

MODULES = [tui.app, tui.screens.compare, tui.screens.dialogs, tui.screens.editor, tui.screens.help,
           tui.screens.home, tui.screens.leaderboard, tui.screens.live, tui.screens.new_interview,
           tui.screens.review, tui.screens.session_base, tui.widgets.interview]


def our_bindings() -> list[tuple[str, Binding]]:
    out = []
    for module in MODULES:
        for _name, cls in inspect.getmembers(module, inspect.isclass):
            if cls.__module__ == module.__name__:
                for b in cls.__dict__.get("BINDINGS", []):
                    out.append((f"{cls.__name__}.{b.action}", b))
    return out


def test_every_binding_has_an_id():
    bindings = our_bindings()
    assert len(bindings) > 40
    missing = [name for name, b in bindings if not b.id]
    assert not missing, f"bindings without an id: {missing}"


def test_default_live_keys_are_the_issue_s():
    ids = {b.id: b.key for _, b in our_bindings()}
    assert {k: ids[k] for k in ("pause_resume", "follow_up", "challenge", "end", "write_question", "override",
                                "rubric_editor", "stop", "next_region", "quit")} == {
        "pause_resume": "space", "follow_up": "f", "challenge": "c", "end": "e", "write_question": "i",
        "override": "o", "rubric_editor": "r", "stop": "x", "next_region": "tab", "quit": "ctrl+q"}


async def test_keymap_from_config_remaps_by_id(home, fake_openai):
    from tests.tui.conftest import make_benchmark, make_runtime

    rt = make_runtime(home, fake_openai)
    make_benchmark(rt)
    sid = run_to_end(rt, turns=1)
    remapped = Runtime(home=home, config=Config(targets=rt.config.targets, keys={"rubric_editor": "E",
                                                                                 "help": "f12"}))
    app = build_app(Engine(remapped), "live", session_id=sid)
    async with app.run_test(size=(120, 40)) as pilot:
        await wait_for(pilot, lambda: app.screen.state is not None and app.screen.state.turns, "the session")
        keys = {active.binding.id: key for key, active in app.screen.active_bindings.items()}
        assert keys["rubric_editor"] == "E" and keys["help"] == "f12"
        await pilot.press("r")
        await pilot.pause()
        assert type(app.screen).__name__ == "LiveScreen", "the old key no longer opens the editor"
        await pilot.press("E")  # (R was resume_session's key on Live: a conflict, refused at start-up)
        await wait_for(pilot, lambda: type(app.screen).__name__ == "RubricEditor", "the editor on the new key")


async def test_keys_that_do_not_apply_are_dimmed_and_listed(runtime):
    sid = run_to_end(runtime, turns=1)
    app = build_app(Engine(runtime), "live", session_id=sid)
    async with app.run_test(size=(120, 40)) as pilot:
        await wait_for(pilot, lambda: app.screen.state is not None and app.screen.state.status == "finished",
                       "the session")
        live = app.screen
        active = {a.binding.id: a.enabled for a in live.active_bindings.values()}
        assert active["challenge"] is False and active["pause_resume"] is False, "a finished session: dimmed"
        assert active["rubric_editor"] is True and active["override"] is True
        # The command palette has an entry for every action of the screen.
        titles = [c.title for c in app.get_system_commands(live)]
        for title in ("Challenge (not available now)", "Override", "Rubric", "Home", "Review", "Live interview"):
            assert title in titles
        await pilot.press("f1")
        help_screen = await wait_for(pilot, lambda: isinstance(app.screen, HelpScreen) and app.screen, "help")
        ids = {row["id"] for row in help_screen.rows}
        assert {"pause_resume", "challenge", "override", "next_region", "maximize", "toggle_checklist",
                "quit"} <= ids
        assert any(row["id"] == "challenge" and not row["enabled"] for row in help_screen.rows)
        await pilot.press("escape")
        await pilot.press("ctrl+t")
        assert app.theme == "textual-light"
        await pilot.press("ctrl+t")
        assert app.theme == "textual-dark"


async def test_regions_move_resize_and_collapse(runtime):
    sid = run_to_end(runtime, turns=1)
    app = build_app(Engine(runtime), "live", session_id=sid)
    async with app.run_test(size=(120, 40)) as pilot:
        await wait_for(pilot, lambda: app.screen.state is not None and app.screen.state.turns, "the session")
        live = app.screen
        assert live.focused.id == "interview"
        await pilot.press("tab")
        assert live.focused.id == "checklist-table"
        await pilot.press("tab")
        assert live.focused.id == "metrics"
        await pilot.press("tab")
        assert live.focused.id == "interview"
        width = live.query_one("#interview").size.width
        await pilot.press("right_square_bracket")
        await pilot.pause()
        assert live.query_one("#interview").size.width > width
        await pilot.press("2")
        await pilot.pause()
        assert not live.checklist.display
        await pilot.press("tab")
        assert live.focused.id == "metrics", "a collapsed region is skipped"
        await pilot.press("3")
        await pilot.pause()
        assert not live.query_one("#side").display
        await pilot.press("1")
        assert live.query_one("#interview").display, "the last open region stays"
        await pilot.press("2", "3", "m")
        await pilot.pause()
        assert live.maximized is not None
        await pilot.press("m")
        assert live.maximized is None


def test_cli_commands_open_the_app(home, monkeypatch):
    from tui.cli import main

    opened = []
    monkeypatch.setattr("tui.launch.open_app", lambda runtime, **kw: opened.append(kw))
    assert CliRunner().invoke(main, ["--home", str(home), "tui"]).exit_code == 0
    assert CliRunner().invoke(main, ["--home", str(home)]).exit_code == 0
    result = CliRunner().invoke(main, ["--home", str(home), "review", "99"])
    assert result.exit_code != 0 and "session 99 does not exist" in result.output
    assert CliRunner().invoke(main, ["--home", str(home), "review"]).exit_code == 0
    assert opened == [{"screen": "home"}, {"screen": "home"}, {"screen": "review", "session_id": None}]
