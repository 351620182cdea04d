"""Human review that cannot be done by accident (issue 36), driven in the app at 100x30: an override
needs a note and a confirmation that shows the Score change, it is undone from the same screen and
listed with who, when and why; `a` agrees with the verdict on screen from either pane, `k` only
moves; the live keys on a finished session are refused with a line, and nothing is stored."""

from __future__ import annotations

from textual.widgets import Static

from engine.api import Engine
from tests.tui.conftest import run_to_end, wait_for
from tui.launch import build_app
from tui.screens.dialogs import ConfirmDialog, InjectDialog, OverrideDialog, OverridesDialog

SIZE = (100, 30)


def loaded(app) -> bool:
    return bool(getattr(app.screen, "steps", None)) and app.screen.state is not None


def human_rows(runtime, sid):
    return runtime.store.query("SELECT t.idx, v.cid, v.met, v.rationale FROM verdicts v JOIN turns t "
                               "ON t.id = v.turn_id WHERE t.session_id = ? AND v.source = 'human' ORDER BY v.id",
                               (sid,))


def session_score(runtime, sid):
    return runtime.store.one("SELECT score FROM sessions WHERE id = ?", (sid,))["score"]


def messages(app) -> list[str]:
    return [str(n.message) for n in app._notifications]


async def test_override_needs_a_note_and_a_confirmation_then_is_undone_and_listed(runtime):
    sid = run_to_end(runtime, turns=2)
    before = session_score(runtime, sid)
    app = build_app(Engine(runtime), "review", session_id=sid)
    async with app.run_test(size=SIZE) as pilot:
        await wait_for(pilot, lambda: loaded(app), "the session to load")
        review = app.screen
        assert app.focused is review.pane, "the interview pane has the focus: o works from it"
        turn = review.pane.selected
        cid = review.checklist.selected_cid
        judged = review.state.turns[turn].verdicts[cid].met
        expected = review.viva.engine.preview_override(sid, turn, cid, not judged)

        await pilot.press("o")
        dialog = await wait_for(pilot, lambda: isinstance(app.screen, OverrideDialog) and app.screen, "the dialog")
        await wait_for(pilot, lambda: "Score" in str(dialog.query_one("#override-effect", Static).render()),
                       "the effect line")
        await pilot.press("enter")  # o then enter: the accident of issue 36
        await pilot.pause()
        assert app.screen is dialog and not dialog.confirming and human_rows(runtime, sid) == []
        await pilot.press(*"not in the answer", "enter")
        assert dialog.confirming and app.screen is dialog and human_rows(runtime, sid) == []
        effect = str(dialog.query_one("#override-effect", Static).render())
        after = expected["after"]["session_score"]
        assert f"Score {before:.1f} → {after:.1f}" in effect, effect
        assert "note: not in the answer" in effect and f"signed: {review.viva.engine.evaluator}" in effect
        await pilot.press("escape")  # back to editing, nothing saved
        assert not dialog.confirming and app.screen is dialog
        await pilot.press("enter")
        await pilot.press("enter")  # confirm
        await wait_for(pilot, lambda: app.screen is review, "back on review")
        await wait_for(pilot, lambda: review.state.turns[turn].verdicts[cid].overridden, "the override shown")
        [row] = human_rows(runtime, sid)
        assert (row["idx"], row["cid"], bool(row["met"]), row["rationale"]) == (turn, cid, not judged,
                                                                               "not in the answer")
        assert session_score(runtime, sid) == after

        await pilot.press("u")  # undo, from the same screen, after a yes
        ask = await wait_for(pilot, lambda: isinstance(app.screen, ConfirmDialog) and app.screen, "undo question")
        assert "not in the answer" in ask.question
        await pilot.press("y")
        await wait_for(pilot, lambda: human_rows(runtime, sid) == [], "the override undone")
        await wait_for(pilot, lambda: not review.state.turns[turn].verdicts[cid].overridden
                       and review.steps[-1].label.startswith("override undone"), "the review reloaded")
        assert session_score(runtime, sid) == before
        assert review.state.turns[turn].verdicts[cid].met is judged

        await pilot.press("u")  # nothing left to undo: a line says so
        await wait_for(pilot, lambda: any("no override to undo" in m for m in messages(app)), "the refusal line")
        assert not isinstance(app.screen, ConfirmDialog)

        await pilot.press("O")
        listing = await wait_for(pilot, lambda: isinstance(app.screen, OverridesDialog) and app.screen, "the list")
        assert [(r["action"], r["undone"], r["note"]) for r in listing.rows] == [
            ("override", True, "not in the answer"), ("undo", False, "undid: not in the answer")]
        assert all(r["by"] == review.viva.engine.evaluator and r["at"].endswith("UTC") for r in listing.rows)


async def test_k_moves_and_a_agrees_with_the_verdict_on_screen_from_each_pane(runtime):
    sid = run_to_end(runtime, turns=3)
    app = build_app(Engine(runtime), "review", session_id=sid)
    async with app.run_test(size=SIZE) as pilot:
        await wait_for(pilot, lambda: loaded(app), "the session to load")
        review = app.screen
        last = review.pane.selected
        await pilot.press("k")  # the interview pane: k is "previous turn", and only that
        assert review.pane.selected == last - 1
        await pilot.pause()
        assert human_rows(runtime, sid) == []
        await pilot.press("tab")  # the checklist: k does nothing here
        assert app.focused is review.checklist.table
        await pilot.press("k")
        await pilot.pause()
        assert human_rows(runtime, sid) == [] and review.pane.selected == last - 1
        on_screen = (review.pane.selected, review.checklist.selected_cid)
        await pilot.press("a")  # agree, from the checklist: the verdict on screen
        await wait_for(pilot, lambda: human_rows(runtime, sid), "the confirmation")
        [row] = human_rows(runtime, sid)
        judge = review.state.turns[on_screen[0]].verdicts[on_screen[1]]
        judge = judge.original or judge
        assert (row["idx"], row["cid"], bool(row["met"])) == (*on_screen, judge.met)
        await pilot.press("shift+tab")  # back to the interview pane; a acts on its selected turn too
        assert app.focused is review.pane
        await pilot.press("k")
        await pilot.press("a")
        await wait_for(pilot, lambda: len(human_rows(runtime, sid)) == 2, "the second confirmation")
        assert human_rows(runtime, sid)[1]["idx"] == last - 2
        assert runtime.store.one("SELECT score FROM sessions WHERE id = ?", (sid,))["score"] is not None


async def test_overrides_in_the_middle_of_a_replay_say_where_to_go(runtime):
    sid = run_to_end(runtime, turns=2)
    app = build_app(Engine(runtime), "review", session_id=sid)
    async with app.run_test(size=SIZE) as pilot:
        await wait_for(pilot, lambda: loaded(app), "the session to load")
        await pilot.press("left")
        await pilot.press("o")
        await wait_for(pilot, lambda: any("end of the record" in m for m in messages(app)), "the line")
        assert not isinstance(app.screen, OverrideDialog)


async def test_live_keys_on_a_finished_session_are_refused_with_a_line(runtime):
    sid = run_to_end(runtime, turns=2)
    engine = Engine(runtime)
    app = build_app(engine, "live", session_id=sid)
    async with app.run_test(size=SIZE) as pilot:
        live = app.screen
        await wait_for(pilot, lambda: live.state is not None and live.state.status == "finished", "the session")
        shown = {b.binding.id for b in live.active_bindings.values() if b.enabled and b.binding.show}
        assert not shown & {"pause_resume", "follow_up", "challenge", "end", "write_question", "stop"}, shown
        count = runtime.store.one("SELECT COUNT(*) AS n FROM events WHERE session_id = ?", (sid,))["n"]
        for key in ("i", "f", "space", "e"):
            await pilot.press(key)
            await pilot.pause()
            assert not isinstance(app.screen, InjectDialog)
        lines = [m for m in messages(app) if "has finished" in m]
        assert len(lines) == 4 and "nothing more is asked" in lines[0], messages(app)
        assert runtime.store.one("SELECT COUNT(*) AS n FROM events WHERE session_id = ?", (sid,))["n"] == count
        assert not live.state.pending
