"""Home and the pickers over many sessions: the store pages the list (100 rows at a time, the next
page when the cursor nears the end), filters it in SQL, and only the rows the events name change
(no reload of the list); a new session appears on top; the compare picker pages the same way."""

from __future__ import annotations

from engine.api import Engine
from tests.tui.conftest import wait_for
from tui.launch import build_app
from tui.screens.dialogs import PickSessionDialog
from tui.widgets.sessions import PAGE, SessionsTable


def _item(runtime) -> int:
    return runtime.store.one("SELECT id FROM items ORDER BY id")["id"]


def _many(runtime, n: int) -> list[int]:
    from bench.app import populate

    return populate(runtime.store, n, _item(runtime), seed=3)


async def test_home_pages_filters_and_changes_only_the_rows_that_changed(runtime):
    ids = _many(runtime, 2 * PAGE + 50)
    newest_first = sorted(ids, reverse=True)
    app = build_app(Engine(runtime), "home")
    async with app.run_test(size=(120, 40)) as pilot:
        table = app.screen.query_one(SessionsTable)
        await wait_for(pilot, lambda: table.row_count == PAGE, "the first page")
        assert table.shown_ids == newest_first[:PAGE] and table.total == len(ids)
        assert table.border_subtitle == f"{PAGE} of {len(ids)} session(s) loaded"
        await pilot.press("end")
        await wait_for(pilot, lambda: table.row_count == 2 * PAGE, "the second page",
                       debug=lambda: (table.row_count, len(table.shown_ids), table.shown_ids[-3:], table.cursor_row, newest_first[:3], newest_first[195:201], table.shown_ids[95:105]))
        assert table.shown_ids == newest_first[:2 * PAGE], "pages join without gaps or repeats"
        generation = table.generation

        # another writer: a shown session fails (status and its event), one more is created
        changed = newest_first[3]
        runtime.store.update("sessions", changed, {"status": "failed", "error": "gone"})
        runtime.store.append_event(changed, "session.failed", {"error": "gone"})
        await wait_for(pilot, lambda: table.by_id[changed]["status"] == "failed", "the changed row")
        row = table.shown_ids.index(changed)
        assert str(table.get_row_at(row)[4]) == "failed"
        [new] = _many(runtime, 1)
        await wait_for(pilot, lambda: table.shown_ids[:1] == [new], "the new session on top")
        assert table.generation == generation, "rows changed in place, the list was not reloaded"
        assert table.row_count == 2 * PAGE + 1 and table.total == len(ids) + 1

        # the filter runs in the store: the rows and the count are the store's
        await pilot.press("slash")
        for key in "score>90":
            await pilot.press(key)
        engine = Engine(runtime)
        expected = [r["id"] for r in engine.list_sessions(query="score>90")]
        await wait_for(pilot, lambda: table.query_text == "score>90" and table.shown_ids == expected[:PAGE],
                       "the filtered list")
        assert table.total == len(expected) and all(table.by_id[i]["score"] > 90 for i in table.shown_ids)


async def test_compare_picker_pages_the_sessions_of_the_item(runtime):
    ids = _many(runtime, PAGE + 30)
    app = build_app(Engine(runtime), "home")
    async with app.run_test(size=(130, 40)) as pilot:
        table = app.screen.query_one(SessionsTable)
        await wait_for(pilot, lambda: table.row_count == PAGE, "the first page")
        await pilot.press("c")
        picker = await wait_for(pilot, lambda: isinstance(app.screen, PickSessionDialog) and app.screen, "picker")
        others = sorted(ids, reverse=True)[1:]
        assert [r["id"] for r in picker.rows] == others[:PAGE] and picker.total == len(others)
        await pilot.press("end")
        pick = picker.query_one(SessionsTable)
        await wait_for(pilot, lambda: pick.row_count == len(others), "the picker's second page")
        assert pick.shown_ids == others
        await pilot.press("enter")
        await wait_for(pilot, lambda: app.screen.id == "compare", "the comparison")


def _drawn(table: SessionsTable) -> list[tuple[tuple[str, object], ...]]:
    """The table's visible lines as drawn: each segment's text and style."""
    return [tuple((s.text, s.style) for s in table.render_line(y)) for y in range(table.size.height)]


async def test_a_changed_row_is_drawn_as_a_fresh_table_draws_it_and_no_other_line_changes(runtime):
    newest = sorted(_many(runtime, 30), reverse=True)

    async def opened(pilot) -> SessionsTable:
        table = pilot.app.screen.query_one(SessionsTable)
        await wait_for(pilot, lambda: table.row_count == 30, "the rows")
        # the cursor on the second row (the changed rows are not under it), set and waited for: a key pressed
        # before the table takes focus on a busy machine would leave it on the first in one of the two apps
        table.move_cursor(row=1)
        await wait_for(pilot, lambda: table.cursor_row == 1, "the cursor on the second row")
        await pilot.pause()
        return table

    app = build_app(Engine(runtime), "home")
    async with app.run_test(size=(120, 40)) as pilot:
        table = await opened(pilot)
        before = _drawn(table)
        for sid, status in ((newest[0], "failed"), (newest[2], "stopped")):  # another writer
            runtime.store.update("sessions", sid, {"status": status})
            runtime.store.append_event(sid, "session.failed", {"error": "gone"})
        await wait_for(pilot, lambda: (table.by_id[newest[0]]["status"], table.by_id[newest[2]]["status"])
                       == ("failed", "stopped"), "the changed rows")
        await pilot.pause()
        after = _drawn(table)
    async with build_app(Engine(runtime), "home").run_test(size=(120, 40)) as pilot:
        fresh = _drawn(await opened(pilot))
    assert after == fresh, "the updated table draws exactly what a table loaded now draws"
    differ = [y for y, (a, b) in enumerate(zip(before, after, strict=True)) if a != b]
    assert len(differ) == 2 and "failed" in "".join(t for t, _ in after[differ[0]]), differ
