"""The engine decides who re-scores a rubric edit (issue: the editor opened on a running session,
the session finished, then the save wrote a control event nothing consumed)."""

from __future__ import annotations

import asyncio

import pytest

from engine.api import Engine
from engine.bench.rubric import edit_rubric
from engine.config import Config
from engine.interview.run import RunRequest, execute_run, plan_run, run_sessions
from engine.runtime import Runtime
from tests.engine.interview_fixtures import make_bench, script_target_only


@pytest.fixture
def runtime(home):
    rt = Runtime(home=home, config=Config())
    yield rt
    rt.close()


def _plan(runtime, fake) -> tuple[int, int, int]:
    item = make_bench(runtime.store)[0]
    run_id = plan_run(runtime, RunRequest(bench="oxy", targets=[f"openai:t@{fake.base_url}"], kernel="offline",
                                          policy="threshold", turns=3))
    return run_id, run_sessions(runtime, run_id)[0], item


def _versions_of_turns(runtime, sid) -> set[int]:
    return {r["rubric_version_id"] for r in runtime.store.query(
        "SELECT rubric_version_id FROM turns WHERE session_id = ?", (sid,))}


def _unconsumed_rubric_controls(runtime, sid) -> list[int]:
    events = runtime.store.events(0, sid)
    acked = {e.payload.get("control_seq") for e in events if e.kind == "intervention"}
    return [e.seq for e in events if e.kind == "control.rubric" and e.seq not in acked]


async def test_saved_after_the_session_finished_rescores_at_once(runtime, fake_openai):
    script_target_only(fake_openai)
    run_id, sid, item = _plan(runtime, fake_openai)
    # The editor is opened while the session runs (it would have decided "running" then) ...
    task = asyncio.create_task(execute_run(runtime, run_id))
    await task  # ... the session finishes before the evaluator saves.
    editor = Engine(runtime.connect())
    version = edit_rubric(editor.runtime.store, item, [{"op": "reweight", "cid": "c1", "weight": 5}], "human")
    calls = fake_openai.count()
    result = await editor.apply_rubric(sid, version.id)
    editor.close()
    assert result["queued"] is False
    assert _versions_of_turns(runtime, sid) == {version.id}
    assert runtime.store.one("SELECT rubric_version_id FROM sessions WHERE id = ?", (sid,))["rubric_version_id"] \
        == version.id
    assert _unconsumed_rubric_controls(runtime, sid) == []
    assert fake_openai.count() == calls  # the target is never asked again


async def test_saved_while_the_last_answer_is_in_flight_is_drained_before_finishing(runtime, fake_openai):
    script_target_only(fake_openai, delay=0.4)
    run_id, sid, item = _plan(runtime, fake_openai)
    task = asyncio.create_task(execute_run(runtime, run_id))
    editor = Engine(runtime.connect())
    # wait until the last turn's question is asked and its answer is in flight
    for _ in range(400):
        rows = editor.session_detail(sid)["turns"]
        if len(rows) == 3 and rows[-1]["answer"] is None:
            break
        await asyncio.sleep(0.02)
    else:
        pytest.fail("the session never reached its last turn")
    version = edit_rubric(editor.runtime.store, item, [{"op": "reweight", "cid": "c1", "weight": 5}], "human")
    result = await editor.apply_rubric(sid, version.id)
    editor.close()
    assert result["queued"] is True  # a live runner owns the session: the engine queued it
    errors = await task
    assert not any(errors.values())
    assert _versions_of_turns(runtime, sid) == {version.id}
    assert _unconsumed_rubric_controls(runtime, sid) == []
    kinds = [e.kind for e in runtime.store.events(0, sid)]
    assert kinds.index("rubric.updated") < kinds.index("session.finished")
