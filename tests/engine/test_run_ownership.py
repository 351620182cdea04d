"""One owner per run (issue 15, item 4) and replay after kill -9 (item 5), with real processes.

`python -m tui --home H` processes against the real fake server. The server holds the target's (or the
kernel's) replies behind a gate the test opens, so "the owner is alive and busy" and "killed while
streaming" are states the test reaches deterministically, not by timing.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
import time
from collections import Counter
from collections.abc import Callable
from pathlib import Path

from engine.events.fold import SessionView
from engine.store import Store
from tests.engine.interview_fixtures import RATINGS, is_target, judge_reply, make_bench, target_reply

ROOT = Path(__file__).resolve().parents[2]


def viva_cmd(home: Path, *args: str) -> list[str]:
    return [sys.executable, "-m", "tui", "--home", str(home), *args]


def viva(home: Path, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run(viva_cmd(home, *args), cwd=ROOT, capture_output=True, text=True, timeout=240)


def popen(home: Path, *args: str) -> subprocess.Popen:
    return subprocess.Popen(viva_cmd(home, *args), cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True)


def wait_for(what: str, check: Callable[[], bool], procs: list[subprocess.Popen], timeout: float = 120) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if check():
            return
        for p in procs:
            assert p.poll() is None, f"process ended while waiting for {what}: {p.stderr.read()[-3000:]}"
        time.sleep(0.05)
    raise AssertionError(f"timed out waiting for {what}")


def count(store: Store, sql: str, params: tuple = ()) -> int:
    return int(store.one(sql, params)["n"])


def gate() -> tuple[threading.Semaphore, Callable[[Callable[[dict], object]], Callable[[dict], object]]]:
    permits = threading.Semaphore(0)

    def gated(reply: Callable[[dict], object]) -> Callable[[dict], object]:
        def answer(body: dict) -> object:
            if not permits.acquire(timeout=120):
                return {"status": 400, "message": "test gate never opened"}
            return reply(body)
        return answer
    return permits, gated


def judged_once(store: Store) -> Counter:
    """(session, turn) -> how many times it was judged (verdicts events that are not re-scores)."""
    rows = store.query("SELECT session_id, payload FROM events WHERE kind = 'verdicts'")
    return Counter((r["session_id"], json.loads(r["payload"])["turn"]) for r in rows
                   if not json.loads(r["payload"]).get("rescore"))


def test_a_second_owner_is_refused_and_a_dead_owners_lease_is_taken_over(tmp_path, fake_openai):
    permits, gated = gate()
    fake_openai.rule(is_target, gated(target_reply))
    home = tmp_path / "home"
    home.mkdir()
    store = Store(home / "viva.db")
    make_bench(store, n_items=2)
    run_args = ["run", "--bench", "oxy", "--target", f"openai:fake-target@{fake_openai.base_url}", "--kernel",
                "offline", "--policy", "threshold", "--turns", "3", "--concurrency", "1", "--seed", "3"]

    permits.release(2)
    owner = popen(home, *run_args)
    # the owner answered two turns and is now waiting for the third answer: alive and busy
    wait_for("two answers and a third question", lambda: fake_openai.count() >= 3 and count(
        store, "SELECT COUNT(*) AS n FROM turns WHERE answer IS NOT NULL") == 2, [owner])
    sessions = [r["id"] for r in store.query("SELECT id FROM sessions ORDER BY id")]

    second = viva(home, "resume", "run:1")
    assert second.returncode == 1, second.stderr
    assert f"run 1 is being run by pid {owner.pid} on host" in second.stderr
    assert "Traceback" not in second.stderr and len(second.stderr.strip().splitlines()) == 1
    # a session of the run that has not started yet belongs to the owner too
    alone = viva(home, "resume", str(sessions[1]))
    assert alone.returncode == 1 and f"session {sessions[1]} is being run by pid {owner.pid}" in alone.stderr
    assert count(store, "SELECT COUNT(*) AS n FROM turns") == 3  # the refused processes wrote nothing

    os.kill(owner.pid, signal.SIGKILL)
    owner.wait()
    from engine.report.model import run_document

    assert store.one("SELECT status FROM runs WHERE id = 1")["status"] == "running"  # what it last wrote
    assert run_document(store, 1)["run"]["status"] == "interrupted"  # derived from its sessions
    before = fake_openai.count()
    taker = popen(home, "resume", "run:1", "--json")
    wait_for("the new owner to ask the target", lambda: fake_openai.count() > before, [taker])
    third = viva(home, "resume", "run:1")
    assert third.returncode == 1 and f"run 1 is being run by pid {taker.pid}" in third.stderr
    permits.release(100)
    out, err = taker.communicate(timeout=240)
    assert taker.returncode == 0, err[-3000:]
    assert json.loads(out)["failed"] == []

    for text in (second.stderr, alone.stderr, third.stderr, err):
        assert "UNIQUE constraint" not in text
    rows = store.query("SELECT id, status, error FROM sessions ORDER BY id")
    assert [(r["status"], r["error"]) for r in rows] == [("finished", None)] * 2
    assert store.one("SELECT status FROM runs WHERE id = 1")["status"] == "finished"
    assert count(store, "SELECT COUNT(*) AS n FROM turns") == 6
    judged = judged_once(store)
    assert sorted(judged) == [(s, t) for s in sessions for t in range(3)] and set(judged.values()) == {1}
    assert count(store, "SELECT COUNT(*) AS n FROM events WHERE kind = 'turn.started'") == 6
    assert store.query("SELECT * FROM leases") == []  # released at the end
    store.close()


def test_kill_mid_stream_and_mid_decision_then_resume_replays_each_answer_once(tmp_path, fake_openai):
    permits, gated = gate()
    fake_openai.rule(is_target, lambda body: {"content": target_reply(body), "token_delay": 0.25})
    fake_openai.rule("judge of an oral examination", judge_reply)
    # numbered: a question asked before is refused as degenerate (issue 23)
    fake_openai.rule("a FOLLOW-UP", gated(lambda body: json.dumps(
        {"question": f"What else do you know about it? ({body['messages'][-1]['content'].count('[turn ')})"})))
    fake_openai.rule("a CHALLENGE", gated(lambda body: json.dumps(
        {"question": f"Are you sure about that? ({body['messages'][-1]['content'].count('[turn ')})"})))
    fake_openai.rule("You rate an oral examination", json.dumps(RATINGS))
    home = tmp_path / "home"
    home.mkdir()
    store = Store(home / "viva.db")
    make_bench(store, n_items=1)
    args = ["--bench", "oxy", "--target", f"openai:fake-target@{fake_openai.base_url}", "--kernel",
            f"openai:fake-kernel@{fake_openai.base_url}", "--policy", "threshold", "--turns", "3", "--seed", "1"]

    def kinds(kind: str, turn: int) -> int:
        return count(store, "SELECT COUNT(*) AS n FROM events WHERE kind = ? AND json_extract(payload, '$.turn') = ?",
                     (kind, turn))

    first = popen(home, "run", *args)
    wait_for("part of the first answer", lambda: kinds("answer.delta", 0) >= 1, [first])
    os.kill(first.pid, signal.SIGKILL)  # mid-stream: the answer is not on record, some pieces are
    first.wait()
    assert kinds("answer.done", 0) == 0

    second = popen(home, "resume", "run:1")
    # the policy decided turn 1, and the kernel is writing its question (held at the gate)
    wait_for("the decision for turn 1", lambda: kinds("policy.decided", 1) == 1, [second])
    os.kill(second.pid, signal.SIGKILL)
    second.wait()
    assert kinds("turn.started", 1) == 0

    permits.release(100)
    third = viva(home, "resume", "run:1")
    assert third.returncode == 0, third.stderr[-3000:]

    sid = store.one("SELECT id FROM sessions")["id"]
    turns = store.query("SELECT idx, answer FROM turns WHERE session_id = ? ORDER BY idx", (sid,))
    assert len(turns) == 3 and all(t["answer"] for t in turns)
    view = SessionView(sid)
    view.apply_all(store.events(session_id=sid))
    assert [t.answer for t in view.turns] == [t["answer"] for t in turns]  # each answer once
    assert view.status == "finished"
    assert [kinds("policy.decided", t) for t in (1, 2)] == [1, 1]  # not again after the resume
    assert set(judged_once(store).values()) == {1}
    # a replay shows the cut stream until the resume, then only the new stream: at every point the
    # text shown is a prefix of the answer (never the cut piece followed by the answer again)
    events = store.events(session_id=sid)
    done_at = next(i for i, e in enumerate(events) if e.kind == "answer.done" and e.payload["turn"] == 0)
    resumed_at = next(i for i, e in enumerate(events) if e.kind == "session.resumed")
    replay = SessionView(sid)
    shown = []
    for e in events[:done_at]:
        replay.apply(e.seq, e.kind, e.payload)
        shown.append(replay.turns[0].answer if replay.turns else "")
    assert shown[resumed_at - 1], "the cut stream was on record before the resume"
    assert all(turns[0]["answer"].startswith(text) for text in shown), shown
    assert kinds("answer.reset", 0) == 1  # the resumed runner told readers to drop the cut stream
    store.close()
