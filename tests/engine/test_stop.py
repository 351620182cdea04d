"""Stop cancels the target call in flight: the stream is closed, the session is ``stopped`` with the
partial answer kept as such, and a resume asks that turn again (real client, real SQLite, fake server)."""

from __future__ import annotations

import asyncio
import time

import pytest

from engine.config import Config
from engine.events.fold import SessionView
from engine.interview import control
from engine.interview.run import RunRequest, execute_run, plan_run, run_sessions
from engine.runtime import Runtime
from tests.engine.interview_fixtures import make_bench

LONG = " ".join(f"Oxygen fact number {i} is that it is abundant." for i in range(200))  # 2000 pieces


@pytest.fixture
def runtime(home):
    rt = Runtime(home=home, config=Config())
    yield rt
    rt.store.close()


def _plan(runtime, fake, turns=3) -> int:
    make_bench(runtime.store)
    target = f"openai:fake-target@{fake.base_url}"
    run_id = plan_run(runtime, RunRequest(bench="oxy", targets=[target], kernel="offline", policy="threshold",
                                          turns=turns))
    return run_id


async def _wait(predicate, what: str, limit: float = 60.0):
    deadline = time.monotonic() + limit
    while time.monotonic() < deadline:
        value = predicate()
        if value:
            return value
        await asyncio.sleep(0.01)
    raise AssertionError(f"timed out waiting for {what}")


async def test_stop_cuts_the_answer_in_flight_and_resume_asks_it_again(runtime, fake_openai):
    # The first answer streams slowly (2000 pieces, 20 ms apart: 40 s); a stop must not wait for it.
    fake_openai.push({"content": LONG, "token_delay": 0.02})
    fake_openai.default = "Oxygen is the most abundant element in the Earth's crust."
    run_id = _plan(runtime, fake_openai)
    sid = run_sessions(runtime, run_id)[0]
    store = runtime.store

    run = asyncio.ensure_future(execute_run(runtime, run_id))
    await _wait(lambda: any(e.kind == "answer.delta" for e in store.events(0, sid)), "the answer to stream")
    asked = time.monotonic()
    control.stop(store, sid)
    errors = await asyncio.wait_for(run, 60)
    latency = time.monotonic() - asked
    print(f"\nstop latency: {latency:.2f} s (poll every 0.2 s)")

    assert errors == {sid: None}
    row = store.one("SELECT status, score FROM sessions WHERE id = ?", (sid,))
    assert row["status"] == "stopped"
    turn0 = store.one("SELECT answer, score FROM turns WHERE session_id = ? AND idx = 0", (sid,))
    assert turn0["answer"] is None and turn0["score"] is None, "a cut answer is never recorded as an answer"
    events = store.events(0, sid)
    stopped = [e for e in events if e.kind == "session.stopped"]
    assert len(stopped) == 1 and stopped[0].payload["turn"] == 0 and stopped[0].payload["after_turn"] == -1
    partial = stopped[0].payload["partial"]
    assert partial and LONG.startswith(partial) and len(partial) < len(LONG), "the partial answer is kept"
    # The stream was closed: the server saw the client hang up before it sent every piece.
    await _wait(lambda: fake_openai.disconnects >= 1, "the server to see the closed stream", 10)
    assert fake_openai.pieces_sent[0] < len(LONG.split())
    assert [e.kind for e in events].count("intervention") == 1, "the stop is acknowledged"
    assert not any(e.kind in ("session.finished", "verdicts") for e in events)

    view = SessionView(sid)
    view.apply_all(events)
    assert view.status == "stopped" and view.turns[0].partial and view.turns[0].answer == partial

    # Resumable: the cut turn is asked again and the session runs to its end.
    errors = await execute_run(runtime, run_id)
    assert errors == {sid: None}
    assert store.one("SELECT status FROM sessions WHERE id = ?", (sid,))["status"] == "finished"
    answers = [r["answer"] for r in store.query("SELECT answer FROM turns WHERE session_id = ? ORDER BY idx", (sid,))]
    assert answers[0] == "Oxygen is the most abundant element in the Earth's crust." and len(answers) == 3
    view = SessionView(sid)
    view.apply_all(store.events(0, sid))
    assert view.status == "finished" and not view.turns[0].partial
    assert view.turns[0].answer == answers[0], "the partial text is replaced, not appended to"


async def test_stop_between_steps_is_stopped_and_resumable(runtime, fake_openai):
    fake_openai.default = "Plants release oxygen through photosynthesis."
    run_id = _plan(runtime, fake_openai, turns=4)
    sid = run_sessions(runtime, run_id)[0]
    control.pause(runtime.store, sid)
    control.stop(runtime.store, sid)  # read at the first checkpoint, before any question is asked
    await execute_run(runtime, run_id)
    row = runtime.store.one("SELECT status FROM sessions WHERE id = ?", (sid,))
    assert row["status"] == "stopped"
    stopped = [e for e in runtime.store.events(0, sid) if e.kind == "session.stopped"]
    assert stopped and stopped[0].payload["turn"] is None
    await execute_run(runtime, run_id)
    assert runtime.store.one("SELECT status FROM sessions WHERE id = ?", (sid,))["status"] == "finished"
    assert runtime.store.one("SELECT COUNT(*) AS n FROM turns WHERE session_id = ?", (sid,))["n"] == 4


async def test_an_answer_that_ends_before_the_stop_is_kept_whole(runtime, fake_openai):
    # A stop written after the answer came back is applied at the next step: nothing is cut. The later
    # answers take 0.5 s, so the session is still running when the stop is written (the first answer's
    # turn alone takes a few milliseconds: without it the session could finish first).
    fake_openai.push("Liquid oxygen is pale blue.")
    fake_openai.default = {"content": "Liquid oxygen is pale blue.", "delay": 0.5}
    run_id = _plan(runtime, fake_openai, turns=3)
    sid = run_sessions(runtime, run_id)[0]
    store = runtime.store

    async def stop_after_first_answer():
        async for event in store.subscribe(0, sid, interval=0.01):
            if event.kind == "answer.done":
                control.stop(store, sid)
                return

    await asyncio.gather(execute_run(runtime, run_id), asyncio.wait_for(stop_after_first_answer(), 60))
    assert store.one("SELECT status FROM sessions WHERE id = ?", (sid,))["status"] == "stopped"
    first = store.one("SELECT answer FROM turns WHERE session_id = ? AND idx = 0", (sid,))
    assert first["answer"] == "Liquid oxygen is pale blue."
