"""The live screen against the real engine and the fake OpenAI server: turns stream in, and the
evaluator steers from the keyboard (force a challenge, ask their own question, override a verdict,
edit the rubric and save, pause and stop)."""

from __future__ import annotations

from textual.widgets import Input, TextArea

from engine.api import Engine
from engine.events import Event
from engine.interview.run import run_sessions
from tests.tui.conftest import ANSWERS, execute, make_runtime, plan, run_to_end, wait_for
from tui.launch import build_app
from tui.messages import AnswerStreamed, MetricsUpdated, SessionEvents
from tui.screens.dialogs import InjectDialog, OverrideDialog
from tui.screens.editor import RubricEditor
from tui.widgets.checklist import RubricChecklist
from tui.widgets.interview import InterviewPane


def finished(app) -> bool:
    return app.screen.state is not None and app.screen.state.status == "finished"


async def test_interview_streams_and_every_turn_arrives(runtime, fake_openai):
    make_runtime(runtime.home, fake_openai, slow=0.02)  # stream word by word
    run_id = plan(runtime, turns=3)
    messages = []
    app = build_app(Engine(runtime), "live", run_id=run_id)
    async with app.run_test(size=(120, 40), message_hook=messages.append) as pilot:
        await wait_for(pilot, lambda: finished(app), "the session to finish")
        await pilot.pause()
        state = app.screen.state
        # (the turn before the last presses a claim when the policy pressed none, and a held claim leaves the last turn
        # to draw out a fact: docs/examination.md, "Robustness measured")
        assert [t.action for t in state.turns] == ["initial", "challenge", "follow-up"]
        assert [t.answer for t in state.turns] == ANSWERS[:3]
        assert all(t.judged for t in state.turns)
        streamed = [m for m in messages if isinstance(m, AnswerStreamed)]
        assert streamed, "answers arrive in pieces while they stream"
        assert any(m.text and m.text != ANSWERS[m.turn] for m in streamed), "a partial answer was shown"
        assert any(isinstance(m, MetricsUpdated) for m in messages)
        pane = app.screen.pane
        assert pane.turn_count == 3
        assert "examiner You said:" in pane.turn_text(1) and ANSWERS[1][:30] in pane.turn_text(1)  # the pressure test
        assert app.screen.pane.selected == 2, "the selection follows the newest turn"
        # The figures on screen are the engine's.
        from engine.interview.queries import session_detail

        detail = session_detail(runtime.store, state.session_id)
        assert [t.score for t in state.turns] == [t["score"] for t in detail["turns"]]
        assert state.metrics["score"] == detail["session"]["score"]


async def test_force_challenge_and_inject_a_question(runtime, fake_openai):
    # Pauses make the order deterministic: a request written while the runner waits is applied
    # to the next turn, however fast the machine is.
    make_runtime(runtime.home, fake_openai, slow=0.1)
    run_id = plan(runtime, turns=4, policy="always-follow-up")
    app = build_app(Engine(runtime), "live", run_id=run_id)
    async with app.run_test(size=(120, 40)) as pilot:
        await wait_for(pilot, lambda: app.screen.state is not None and app.screen.state.turns
                       and app.screen.state.turns[0].answer, "turn 0 to start streaming")
        await pilot.press("space", "c")
        await wait_for(pilot, lambda: app.screen.state.status == "paused", "the pause")
        forced_at = len(app.screen.state.turns)
        await pilot.press("space")
        await wait_for(pilot, lambda: len(app.screen.state.turns) > forced_at, "the forced turn")
        await pilot.press("space")
        await wait_for(pilot, lambda: app.screen.state.status == "paused", "the second pause")
        asked_at = len(app.screen.state.turns)
        await pilot.press("i")
        dialog = await wait_for(pilot, lambda: isinstance(app.screen, InjectDialog) and app.screen, "the dialog")
        dialog.query_one(TextArea).insert("Which vaccine schedule would you recommend?")
        await pilot.press("ctrl+s")
        await wait_for(pilot, lambda: "next: your question" in app.screen.state.pending_kinds(), "the question")
        await pilot.press("space")
        await wait_for(pilot, lambda: finished(app), "the session to finish")
        turns = app.screen.state.turns
        assert (turns[forced_at].action, turns[forced_at].actor) == ("challenge", "human")
        assert (turns[asked_at].action, turns[asked_at].actor) == ("human", "human")
        assert turns[asked_at].question == "Which vaccine schedule would you recommend?"
        assert f"Turn {forced_at} · challenge (forced)" in app.screen.pane.turn_text(forced_at)
        assert "Which vaccine schedule" in app.screen.pane.turn_text(asked_at)
        asked = [r.messages[-1]["content"] for r in fake_openai.chat_requests()]
        assert "Which vaccine schedule would you recommend?" in asked
        assert not app.screen.state.pending, "every intervention was acknowledged by the runner"


async def test_override_a_verdict_changes_the_score(runtime, fake_openai):
    sid = run_to_end(runtime, turns=2)
    app = build_app(Engine(runtime), "live", session_id=sid)
    async with app.run_test(size=(120, 40)) as pilot:
        await wait_for(pilot, lambda: finished(app), "the session to load")
        screen = app.screen
        before = screen.state.turns[1].score
        checklist = screen.query_one(RubricChecklist)
        # Pick the first criterion the judge marked met on turn 1 and mark it not met.
        turn = screen.state.turns[1]
        cid = next(c for c, v in turn.verdicts.items() if v.met and c != "c4")
        await pilot.press("tab")
        while checklist.selected_cid != cid:
            await pilot.press("down")
        await pilot.press("o")
        dialog = await wait_for(pilot, lambda: isinstance(app.screen, OverrideDialog) and app.screen, "the dialog")
        await pilot.press("n")
        dialog.query_one("#override-note", Input).value = "not stated in the answer"
        await pilot.press("ctrl+s")
        await wait_for(pilot, lambda: dialog.confirming, "the confirmation step")
        await pilot.press("ctrl+s")
        await wait_for(pilot, lambda: screen.state.turns[1].verdicts[cid].overridden, "the override event")
        after = screen.state.turns[1]
        assert after.score < before
        assert after.verdicts[cid].original is not None and after.verdicts[cid].original.met
        await wait_for(pilot, lambda: abs(screen.state.metrics["score"] - 100 * after.score) < 1e-9,
                       "the metrics after the override")
        row = [str(c) for c in checklist.table.get_row(cid)]
        assert "✘ overridden" in row


async def test_turns_judged_after_an_override_show_the_carried_verdict(runtime, fake_openai):
    """While the session runs, a turn judged after an override shows the human's verdict carried (as the
    store scores it, engine.metrics.overrides), not the judge's own, without reopening the session."""
    from engine.interview.queries import session_detail

    make_runtime(runtime.home, fake_openai, slow=0.05)
    run_id = plan(runtime, turns=4, policy="always-follow-up")
    engine = Engine(runtime)
    app = build_app(engine, "live", run_id=run_id)
    async with app.run_test(size=(120, 40)) as pilot:
        await wait_for(pilot, lambda: app.screen.state is not None and app.screen.state.turns
                       and app.screen.state.turns[0].answer, "turn 0 to start streaming")
        await pilot.press("space")
        await wait_for(pilot, lambda: app.screen.state.status == "paused", "the pause")
        state = app.screen.state
        last = [t for t in state.turns if t.judged][-1]  # the turns after it are judged after the override
        cid = next(c for c, v in last.verdicts.items() if v.met and c != "c4")
        engine.override_verdict(state.session_id, last.idx, cid, False, "not stated in the answer")
        await wait_for(pilot, lambda: state.turns[last.idx].verdicts[cid].overridden, "the override event")
        await pilot.press("space")
        await wait_for(pilot, lambda: finished(app), "the session to finish")
        later = [t for t in state.turns if t.idx > last.idx and t.judged]
        assert later, "turns were judged after the override"
        # the judge kept marking it met (the summary still covers it), so the override is carried
        carried = [t for t in later if t.verdicts[cid].carried_from == last.idx]
        assert carried and all(not t.verdicts[cid].met for t in carried)
        assert all(t.verdicts[cid].original is not None and t.verdicts[cid].original.met for t in carried)
        # the live view is the store's view, verdict for verdict, and its scores are the stored ones
        detail = session_detail(runtime.store, state.session_id)
        for t, stored in zip(state.turns, detail["turns"], strict=True):
            assert {c: v.met for c, v in t.verdicts.items()} == {c: bool(v["met"]) for c, v in stored["verdicts"].items()}
            assert t.score == stored["score"]
        # and the checklist shows it as the human's verdict on the newest turn
        checklist = app.screen.query_one(RubricChecklist)
        await wait_for(pilot, lambda: app.screen.pane.selected == state.turns[-1].idx, "the newest turn selected")
        assert state.turns[-1] in carried
        assert "✘ overridden" in [str(c) for c in checklist.table.get_row(cid)]


async def test_edit_rubric_saves_a_version_and_rescores_without_the_target(runtime, fake_openai):
    sid = run_to_end(runtime, turns=2)
    target_calls = fake_openai.count()
    app = build_app(Engine(runtime), "live", session_id=sid)
    async with app.run_test(size=(120, 40)) as pilot:
        await wait_for(pilot, lambda: finished(app), "the session to load")
        live = app.screen
        await pilot.press("r")
        editor = await wait_for(pilot, lambda: isinstance(app.screen, RubricEditor) and app.screen.draft
                                and app.screen, "the editor")
        await pilot.press("enter")  # edit c1 in place
        field = await wait_for(pilot, lambda: editor.editing and editor.editing[1], "the input in the row")
        field.text = "Names influenza viruses (A or B) as the cause"
        await pilot.press("enter")
        assert editor.draft.find("c1").text == "Names influenza viruses (A or B) as the cause"
        await pilot.press("u")  # undo the edit: only what follows is saved
        await pilot.press("j", "j")  # c3: yearly vaccination
        await pilot.press("d")  # delete it
        await pilot.press("u")  # undo
        await pilot.press("ctrl+y")  # redo
        await pilot.press("plus")  # the cursor is now on c4
        assert [op["op"] for op in editor.draft.ops] == ["delete", "reweight"]
        await pilot.press("ctrl+s")
        await wait_for(pilot, lambda: editor.draft.base.version == 2 and not editor.draft.dirty, "the saved version")
        diff = str(editor.query_one("#diff-text").render())
        assert "- c3" in diff and "weight 1 -> 1.5" in diff
        await pilot.press("escape")
        await wait_for(pilot, lambda: live.state.version_label(live.state.turns[-1].rubric_version_id) == "v2"
                       and all(t.rescored for t in live.state.turns), "the re-scored turns")
        assert [c["cid"] for c in live.state.criteria()] == ["c1", "c2", "c4"]
        assert fake_openai.count() == target_calls, "re-scoring never asks the target"
        assert live.checklist.border_subtitle == "rubric v2"


async def test_pause_resume_and_stop(runtime, fake_openai):
    make_runtime(runtime.home, fake_openai, slow=0.1)
    run_id = plan(runtime, turns=6)
    app = build_app(Engine(runtime), "live", run_id=run_id)
    async with app.run_test(size=(120, 40)) as pilot:
        await wait_for(pilot, lambda: app.screen.state is not None and app.screen.state.turns, "turn 0")
        await pilot.press("space")
        await wait_for(pilot, lambda: app.screen.state.status == "paused", "the pause")
        await pilot.press("space")  # resume...
        await wait_for(pilot, lambda: app.screen.state.pending or app.screen.state.status == "running",
                       "the resume request")
        await pilot.press("space")  # ...and pause again
        await wait_for(pilot, lambda: "resumed by the evaluator" in app.screen.state.notes
                       and not app.screen.state.pending and app.screen.state.status == "paused",
                       "the runner to apply both")
        stopped_at = len(app.screen.state.turns)
        await pilot.press("x")
        await wait_for(pilot, lambda: app.screen.state.status == "stopped", "the stop")
        state = app.screen.state
        assert f"stopped by the evaluator after turn {stopped_at - 1} (resumable)" in state.notes
        assert len(state.turns) == stopped_at < 6
        assert app.screen.check_action("resume_session", ()) is True, "a stopped session can be resumed"
        # Nothing left to steer: the keys are dimmed.
        for action in ("pause_resume", "follow_up", "challenge", "end", "write_question", "stop"):
            assert app.screen.check_action(action, ()) is None


async def test_next_session_of_a_run(runtime, fake_openai):
    from engine.interview.run import RunRequest, plan_run

    run_id = plan_run(runtime, RunRequest(bench="flu", targets=["fake-a", "fake-b"], kernel="offline", turns=1,
                                          policy="threshold"))
    execute(runtime, run_id)
    first, second = run_sessions(runtime, run_id)
    app = build_app(Engine(runtime), "live", run_id=run_id, execute=False)
    async with app.run_test(size=(120, 40)) as pilot:
        await wait_for(pilot, lambda: app.screen.state is not None and app.screen.state.session_id == first, "s1")
        await pilot.press("n")
        await wait_for(pilot, lambda: app.screen.state is not None and app.screen.state.session_id == second
                       and app.screen.state.turns, "the second session")
        assert app.screen.state.target == "fake-b"
        assert isinstance(app.screen.query_one(InterviewPane).state, type(app.screen.state))


async def test_session_events_are_ignored_for_another_session(runtime, fake_openai):
    sid = run_to_end(runtime, turns=1)
    app = build_app(Engine(runtime), "live", session_id=sid)
    async with app.run_test(size=(120, 40)) as pilot:
        await wait_for(pilot, lambda: finished(app), "the session")
        before = (app.screen.state.rev, len(app.screen.state.turns), app.screen.state.status)
        # Events that would change the view if applied: a new turn and a failure, for another session.
        foreign = [Event(10**9, sid + 100, 0.0, "turn.started",
                         {"turn": 7, "question": "not yours", "action": "follow-up", "actor": "policy"}),
                   Event(10**9 + 1, sid + 100, 0.0, "session.failed", {"error": "not yours"})]
        app.screen.post_message(SessionEvents(sid + 100, foreign))
        await pilot.pause()
        assert (app.screen.state.rev, len(app.screen.state.turns), app.screen.state.status) == before
        # The same events for the session shown do change it (so the check above can fail).
        app.screen.post_message(SessionEvents(sid, [Event(10**9 + 2, sid, 0.0, e.kind, e.payload) for e in foreign]))
        await wait_for(pilot, lambda: app.screen.state.status == "failed", "the events of the session shown")
        assert len(app.screen.state.turns) == 8
