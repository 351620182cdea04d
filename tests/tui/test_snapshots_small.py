"""Snapshots of Home, Live and Review at 100x30 (issue 25, defect 11): the Home table fits (the
score and a short date stay), the checklist shows every criterion with room for its text, and the
metric panel does not wrap a figure. Update with ``--snapshot-update`` after looking at the diff."""

from __future__ import annotations

import pytest

from engine.api import Engine
from engine.interview.control import override_verdict
from tests.tui.conftest import freeze_timings, run_to_end, wait_for
from tui.launch import build_app
from tui.widgets.sessions import SessionsTable

SIZE = (100, 30)


@pytest.fixture
def sessions(runtime):
    a = run_to_end(runtime, target="fake-a", turns=3, policy="threshold")
    b = run_to_end(runtime, target="fake-b", turns=3, policy="always-challenge")
    override_verdict(runtime.store, a, 1, "c3", True, "vaccination is implied")
    freeze_timings(runtime)
    return a, b


def test_home_at_100x30(snap_compare, runtime, sessions):
    app = build_app(Engine(runtime), "home")

    async def ready(pilot):
        await wait_for(pilot, lambda: app.screen.query_one(SessionsTable).row_count == 2, "the sessions")
        await pilot.pause()

    assert snap_compare(app, terminal_size=SIZE, run_before=ready)


def test_live_at_100x30(snap_compare, runtime, sessions):
    app = build_app(Engine(runtime), "live", session_id=sessions[0])

    async def ready(pilot):
        await wait_for(pilot, lambda: app.screen.state is not None and app.screen.state.status == "finished"
                       and app.screen.state.metrics, "the session")
        await pilot.press("up")
        await pilot.pause()

    assert snap_compare(app, terminal_size=SIZE, run_before=ready)


def test_review_at_100x30(snap_compare, runtime, sessions):
    app = build_app(Engine(runtime), "review", session_id=sessions[0])

    async def ready(pilot):
        await wait_for(pilot, lambda: getattr(app.screen, "steps", None) and app.screen.state is not None,
                       "the replay")
        await pilot.pause()

    assert snap_compare(app, terminal_size=SIZE, run_before=ready)


async def test_home_table_fits_100_columns(runtime, sessions):
    app = build_app(Engine(runtime), "home")
    async with app.run_test(size=SIZE) as pilot:
        table = app.screen.query_one(SessionsTable)
        await wait_for(pilot, lambda: table.row_count == 2, "the sessions")
        await pilot.pause()
        widths = sum(c.get_render_width(table) for c in table.columns.values())
        assert widths <= table.size.width, (widths, table.size.width)
        assert str(table.get_row_at(0)[6]) in ("0.0", "100.0") or "." in str(table.get_row_at(0)[6])


async def test_checklist_and_metrics_fit_at_100x30(runtime, sessions):
    from tui.widgets.checklist import RubricChecklist
    from tui.widgets.metrics import MetricPanel

    app = build_app(Engine(runtime), "live", session_id=sessions[0])
    async with app.run_test(size=SIZE) as pilot:
        await wait_for(pilot, lambda: app.screen.state is not None and app.screen.state.status == "finished"
                       and app.screen.state.metrics, "the session")
        await pilot.pause()
        checklist = app.screen.query_one(RubricChecklist)
        table = checklist.table
        assert table.row_count == 4 and table.size.height >= 5, "every criterion has a row on screen"
        text_col = table.columns["text"]
        assert text_col.width >= 20, "the criterion text has room"
        panel = app.screen.query_one(MetricPanel)
        # "turn 1  s 0.50   Δs +0.25   cos 0.99" (41 cells) on one line, or laid out shorter
        assert panel.narrow or panel.size.width >= 43, panel.size.width


# -- issue 36: every dialog of the review paths, and the New interview dialog, at 100x30 -------------------------
async def _open_new_interview(app, pilot):
    from tui.screens.new_interview import NewInterviewDialog

    await wait_for(pilot, lambda: app.screen.query_one(SessionsTable).row_count == 2, "the sessions")
    await pilot.press("n")
    dialog = await wait_for(pilot, lambda: isinstance(app.screen, NewInterviewDialog) and app.screen, "the dialog")
    await wait_for(pilot, lambda: dialog.query_one("#items").option_count >= 1, "the items")
    await pilot.pause()
    return dialog


async def _open_override_confirmation(app, pilot):
    from tui.screens.dialogs import OverrideDialog

    await wait_for(pilot, lambda: getattr(app.screen, "steps", None) and app.screen.state is not None, "the replay")
    await pilot.press("o")
    dialog = await wait_for(pilot, lambda: isinstance(app.screen, OverrideDialog) and app.screen, "the dialog")
    await wait_for(pilot, lambda: "Score" in str(dialog.query_one("#override-effect").render()), "the effect")
    await pilot.press(*"said so", "enter")
    await pilot.pause()
    return dialog


async def _open_overrides(app, pilot):
    from tui.screens.dialogs import OverridesDialog

    await wait_for(pilot, lambda: getattr(app.screen, "steps", None) and app.screen.state is not None, "the replay")
    await pilot.press("O")
    dialog = await wait_for(pilot, lambda: isinstance(app.screen, OverridesDialog) and app.screen, "the list")
    await pilot.pause()
    return dialog


async def _open_leaderboard(app, pilot):
    from tui.screens.leaderboard import LeaderboardScreen

    await wait_for(pilot, lambda: getattr(app.screen, "steps", None) and app.screen.state is not None, "the replay")
    await pilot.press("l")
    board = await wait_for(pilot, lambda: isinstance(app.screen, LeaderboardScreen) and app.screen, "the board")
    await pilot.pause(0.3)
    return board


async def _open_undo(app, pilot):
    from tui.screens.dialogs import ConfirmDialog

    await wait_for(pilot, lambda: getattr(app.screen, "steps", None) and app.screen.state is not None, "the replay")
    review = app.screen
    review.pane.select_turn(1)  # the turn with the override of c3
    await pilot.press("tab")
    while review.checklist.selected_cid != "c3":
        await pilot.press("down")
    await pilot.press("u")
    dialog = await wait_for(pilot, lambda: isinstance(app.screen, ConfirmDialog) and app.screen, "the question")
    await pilot.pause()
    return dialog


async def _replay(app, pilot):
    await wait_for(pilot, lambda: getattr(app.screen, "steps", None) and app.screen.state is not None, "the replay")


async def _open_compare(app, pilot):
    from tui.screens.compare import CompareScreen

    await _replay(app, pilot)
    a, b = app.screen.state.session_id, app.screen.state.session_id + 1
    app.open_compare(a, b)
    screen = await wait_for(pilot, lambda: isinstance(app.screen, CompareScreen) and getattr(app.screen, "states", None)
                            and app.screen, "the comparison")
    await pilot.press("right")
    await pilot.pause()
    return screen


async def _open_help(app, pilot):
    from tui.screens.help import HelpScreen

    await _replay(app, pilot)
    await pilot.press("f1")
    screen = await wait_for(pilot, lambda: isinstance(app.screen, HelpScreen) and app.screen, "the help")
    await pilot.pause()
    return screen


async def _open_help_home(app, pilot):
    from tui.screens.help import HelpScreen

    await wait_for(pilot, lambda: app.screen.query_one(SessionsTable).row_count == 2, "the sessions")
    await pilot.pause(0.3)  # Home's table settles (its highlighted row) before the help covers it
    await pilot.press("f1")
    screen = await wait_for(pilot, lambda: isinstance(app.screen, HelpScreen) and app.screen, "the help")
    await pilot.pause()
    return screen


async def _open_export(app, pilot):
    from tui.screens.dialogs import ExportDialog

    await _replay(app, pilot)
    await pilot.press("ctrl+e")
    screen = await wait_for(pilot, lambda: isinstance(app.screen, ExportDialog) and app.screen, "the export dialog")
    # the path under a pytest temporary folder changes from run to run: a fixed one for the snapshot
    screen.query_one("#export-path").value = "/home/evaluator/.viva/exports/viva-session-1.html"
    screen.query_one("#export-folder").update("folder: /home/evaluator/.viva/exports")
    await pilot.pause()
    return screen


async def _open_jump(app, pilot):
    from tui.screens.dialogs import JumpDialog

    await _replay(app, pilot)
    await pilot.press("g")
    screen = await wait_for(pilot, lambda: isinstance(app.screen, JumpDialog) and app.screen, "the jump dialog")
    await pilot.pause()
    return screen


async def _open_sessions(app, pilot):
    from tui.screens.dialogs import PickSessionDialog

    await _replay(app, pilot)
    await pilot.press("b")
    screen = await wait_for(pilot, lambda: isinstance(app.screen, PickSessionDialog) and app.screen, "the picker")
    await pilot.pause(0.2)
    return screen


LONG_CRITERION = ("States that annual vaccination is the main prevention for adults over 65, for pregnant women and "
                  "for health workers, and says why it must be repeated every year (the circulating strains change)")


async def _open_rubric_editor(app, pilot):
    """The editor with a long criterion being written: the area wraps it over several lines."""
    from tui.screens.editor import RubricEditor

    await _replay(app, pilot)
    await pilot.press("r")
    editor = await wait_for(pilot, lambda: isinstance(app.screen, RubricEditor) and app.screen.draft is not None
                            and app.screen, "the editor")
    await pilot.press("a")
    field = await wait_for(pilot, lambda: editor.editing and editor.editing[1], "the new row's area")
    field.insert(LONG_CRITERION)
    await pilot.pause()
    return editor


SCREENS = {"undo": ("review", _open_undo), "new_interview": ("home", _open_new_interview),
           "override_confirmation": ("review", _open_override_confirmation),
           "overrides": ("review", _open_overrides), "leaderboard": ("review", _open_leaderboard),
           "compare": ("review", _open_compare), "help": ("review", _open_help), "help_home": ("home", _open_help_home),
           "export": ("review", _open_export), "jump": ("review", _open_jump), "sessions": ("review", _open_sessions),
           "rubric_editor": ("review", _open_rubric_editor)}


@pytest.mark.parametrize("name", sorted(SCREENS))
def test_dialogs_at_100x30(snap_compare, runtime, sessions, name):
    mode, opener = SCREENS[name]
    app = build_app(Engine(runtime), mode, session_id=sessions[0] if mode == "review" else None)

    async def ready(pilot):
        await opener(app, pilot)

    assert snap_compare(app, terminal_size=SIZE, run_before=ready)


@pytest.mark.parametrize("name", sorted(SCREENS))
async def test_no_label_or_button_is_cut_at_100x30(runtime, sessions, name):
    """Every button and label of the screen lies inside the terminal and inside its dialog's border, and
    a button shows its whole label; a label wider than its room ends in an ellipsis (the full value is
    in the row's detail or the dialog's text)."""
    from textual.widgets import Button, Label

    mode, opener = SCREENS[name]
    app = build_app(Engine(runtime), mode, session_id=sessions[0] if mode == "review" else None)
    async with app.run_test(size=SIZE) as pilot:
        screen = await opener(app, pilot)
        frame = screen.query_one(".dialog") if screen.query(".dialog") else None
        for widget in [*screen.query(Button), *screen.query(Label)]:
            if not widget.display or not widget.region.area:
                continue
            region = widget.region
            assert region.right <= SIZE[0] and region.bottom <= SIZE[1], (name, str(widget.render()), region)
            if frame is not None:
                inner = frame.content_region
                assert inner.x <= region.x and region.right <= inner.right, (name, str(widget.render()), region)
            text = str(widget.label if isinstance(widget, Button) else widget.render())
            room = region.width - (2 if isinstance(widget, Button) else 0)
            one_line = "\n" not in text
            assert len(text) <= room or not one_line or text.endswith("…") or region.height > 1, (name, text, room)
        if frame is not None:
            assert frame.region.right <= SIZE[0] and frame.region.x >= 0, "the dialog keeps its right border"


async def test_the_key_bar_never_cuts_a_key_at_100x30(runtime, sessions):
    """Review has more keys than 100 columns hold: the bar shows those that apply, whole, then "f1 more
    keys"; the live screen of a finished session shows no steering key at all."""
    from tui.widgets.keybar import KeyBar

    for mode in ("review", "live"):
        app = build_app(Engine(runtime), mode, session_id=sessions[0])
        async with app.run_test(size=SIZE) as pilot:
            await wait_for(pilot, lambda a=app: a.screen.state is not None and a.screen.state.turns, "the session")
            await pilot.pause(0.2)
            bar = app.screen.query_one(KeyBar)
            text = bar.render().plain.rstrip()
            assert len(text) <= SIZE[0], text
            shown = bar.fitting(bar.size.width)
            for key, description, *_ in shown:
                assert f" {key} {description} " in text + " ", (key, description, text)
            if mode == "review":
                assert text.endswith("f1 more keys"), text
            else:
                assert not {"Pause", "Follow-up", "Challenge", "End", "Ask", "Stop"} & {d for _, d, *_ in shown}, text
