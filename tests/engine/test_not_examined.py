"""``not_examined``, a final session status of its own (issue 23): a session that ended with no answered
turn examined nothing. Its status end to end: the runner's rule, the event fold, the run's status, resume,
the figures and the session list's filter; and migration 10 from a schema-9 store (the CHECK widened,
finished sessions without an answered turn relabelled, transactional).

Real SQLite, the real fake OpenAI server through the real openai client."""

from __future__ import annotations

import json
import sqlite3

import pytest

import engine.store.db as store_db
from engine.bench.items import add_item, create_benchmark
from engine.bench.rubric import create_rubric
from engine.config import Config
from engine.events.fold import SessionView
from engine.interview.run import (
    RunRequest,
    derive_run_status,
    execute_run,
    execute_sessions,
    plan_run,
    run_sessions,
)
from engine.metrics.breakdown import run_totals
from engine.metrics.leaderboard import leaderboard
from engine.metrics.listing import count_sessions, list_sessions
from engine.metrics.sessions import target_table
from engine.runtime import Runtime
from engine.store import Store
from engine.store.schema import SCHEMA_VERSION
from tests.engine.interview_fixtures import is_target


@pytest.fixture
def runtime(home, endpoint):
    rt = Runtime(home=home, config=Config(kernel=endpoint))
    yield rt
    rt.store.close()


def _two_tasks(store) -> None:
    """Two task items judged by one LLM point each: the examiner asks for the first, and stops at once on
    the second (its task says "count")."""
    with store.transaction():
        bid = create_benchmark(store, "tasks", "test")
        for i, task in enumerate(["Ask the agent to repeat the words Hello World.",
                                  "Ask the agent to count to three."]):
            item = add_item(store, bid, i, protocol="task", topic="t", question=task, meta={"max_rounds": 3})
            create_rubric(store, item, [{"text": "The agent says Hello World", "kind": "point", "weight": 1}],
                          author="human")


def _examiner(body) -> str:
    system = body["messages"][0]["content"]
    if "count to three" in system:
        return "TASK_FINISHED"
    said = [m for m in body["messages"] if m["role"] == "assistant"]
    return "Please say Hello World." if not said else "TASK_FINISHED"


def _script(fake) -> None:
    fake.rule(is_target, "Hello World")
    fake.rule("act as an examiner", _examiner)
    fake.rule("judge of an agent", json.dumps({"reason": "The agent said Hello World.", "is_hit": True}))


async def test_a_run_with_a_session_that_examined_nothing(runtime, fake_openai):
    _script(fake_openai)
    _two_tasks(runtime.store)
    run_id = plan_run(runtime, RunRequest(bench="tasks", targets=[f"openai:t@{fake_openai.base_url}"],
                                          kernel="config"))
    errors = await execute_run(runtime, run_id)
    asked, nothing = run_sessions(runtime, run_id)
    assert errors == {asked: None, nothing: None}
    store = runtime.store
    rows = {r["id"]: r for r in store.query("SELECT id, status, score FROM sessions")}
    assert rows[asked]["status"] == "finished" and rows[asked]["score"] == 100.0
    assert rows[nothing]["status"] == "not_examined" and rows[nothing]["score"] is None
    assert store.one("SELECT status FROM runs WHERE id = ?", (run_id,))["status"] == "finished"
    # the event log says the same, and why
    [end] = [e.payload for e in store.events(0, nothing) if e.kind == "session.finished"]
    assert end["status"] == "not_examined" and "examiner stopped before asking" in end["reason"]
    view = SessionView(nothing)
    view.apply_all(store.events(0, nothing))
    assert view.status == "not_examined" and view.turns == [] and "examiner stopped" in view.not_examined
    done = SessionView(asked)
    done.apply_all(store.events(0, asked))
    assert done.status == "finished" and done.not_examined is None
    # counted, visibly, and never in a Score
    [row] = target_table(store, [asked, nothing])
    assert row["finished"] == 1 and row["not_examined"] == [nothing] and row["unfinished"] == []
    assert row["score"] == 100.0
    [board] = leaderboard(store, [asked, nothing])["rows"]
    assert board["finished"] == 1 and board["not_examined"] == [nothing] and board["unfinished"] == []
    totals = run_totals(store, [asked, nothing])
    assert (totals["finished"], totals["not_examined"], totals["unfinished"]) == (1, 1, 0)
    # the session list's filter: as typed (not-examined) or as stored
    for query in ("status:not-examined", "status:not_examined", "status:NOT-EXAMINED"):
        assert [r["id"] for r in list_sessions(store, query=query)] == [nothing], query
        assert count_sessions(store, query) == 1
    assert [r["id"] for r in list_sessions(store, query="status:finished")] == [asked]
    # a final status: resuming the run or the session runs nothing again
    calls, events = fake_openai.count(), store.one("SELECT MAX(seq) AS n FROM events")["n"]
    assert await execute_run(runtime, run_id) == {}
    assert await execute_sessions(runtime, [nothing], 1) == {nothing: None}
    assert fake_openai.count() == calls
    assert store.one("SELECT MAX(seq) AS n FROM events")["n"] == events
    assert store.one("SELECT status FROM sessions WHERE id = ?", (nothing,))["status"] == "not_examined"


async def test_the_run_report_counts_not_examined_sessions_per_target(runtime, fake_openai):
    """The run report's sessions-and-spend table and its CSV (the leaderboard's) have a not-examined count per
    target beside finished, failed and unfinished; the other columns keep their names and values."""
    import csv
    import io

    from engine.report import build_run_report
    from engine.report.export import export_run

    _script(fake_openai)
    _two_tasks(runtime.store)
    run_id = plan_run(runtime, RunRequest(bench="tasks", targets=[f"openai:t@{fake_openai.base_url}",
                                                                  f"openai:u@{fake_openai.base_url}"],
                                          kernel="config"))
    await execute_run(runtime, run_id)
    store = runtime.store
    by_target = {r["target"]: r for r in store.query(
        "SELECT target, SUM(status = 'finished') AS finished, SUM(status = 'not_examined') AS not_examined "
        "FROM sessions GROUP BY target")}
    assert sorted((r["finished"], r["not_examined"]) for r in by_target.values()) == [(1, 1), (1, 1)]
    spend = build_run_report(store, run_id).section("spend")
    assert spend.columns == ["target", "finished", "failed", "unfinished", "not examined", "tokens in", "tokens out",
                             "cost"]
    assert sorted(row[:5] for row in spend.rows) == [[t, 1, 0, 0, 1] for t in sorted(by_target)]
    tokens = {r["target"]: r["tokens_in"] for r in target_table(store, run_sessions(runtime, run_id))}
    rows = list(csv.DictReader(io.StringIO(export_run(store, run_id, "csv"), newline="")))
    assert list(rows[0]) == ["rank", "target", "score", "delta_follow_up", "p_plus", "m_plus", "p_minus", "m_minus",
                             "p_zero", "r_plus", "r_minus", "r", "follow_ups", "challenges", "finished", "failed",
                             "unfinished", "not_examined", "tokens_in", "tokens_out", "cost"]
    for row in rows:
        assert (row["finished"], row["failed"], row["unfinished"], row["not_examined"]) == ("1", "0", "0", "1")
        assert row["score"] == "100.0" and int(row["tokens_in"]) == tokens[row["target"]] > 0


async def test_a_run_that_examined_nothing_says_so(runtime, fake_openai):
    _script(fake_openai)
    _two_tasks(runtime.store)
    item = runtime.store.one("SELECT id FROM items WHERE question LIKE '%count%'")["id"]
    run_id = plan_run(runtime, RunRequest(bench="tasks", targets=[f"openai:t@{fake_openai.base_url}"],
                                          kernel="config", items=[item]))
    await execute_run(runtime, run_id)
    assert runtime.store.one("SELECT status FROM runs WHERE id = ?", (run_id,))["status"] == "not_examined"
    [row] = target_table(runtime.store, run_sessions(runtime, run_id))
    assert row["finished"] == 0 and row["score"] is None and len(row["not_examined"]) == 1


def test_the_run_status_rule():
    assert derive_run_status(["not_examined"]) == "not_examined"
    assert derive_run_status(["not_examined", "not_examined"]) == "not_examined"
    assert derive_run_status(["finished", "not_examined"]) == "finished"
    assert derive_run_status(["not_examined", "running"]) == "running"
    assert derive_run_status(["not_examined", "failed"]) == "failed"
    assert derive_run_status(["not_examined", "interrupted"]) == "interrupted"
    assert derive_run_status(["not_examined", "stopped"]) == "interrupted"


# -- migration 10 ---------------------------------------------------------------------------------

def _schema_9(path, monkeypatch) -> None:
    """A database as schema 9 left it, with three sessions: finished without an answered turn (the old
    task session that examined nothing, its ``session.finished`` event written before ``status``
    existed), finished with an answer, and interrupted without one."""
    with monkeypatch.context() as m:
        m.setattr(store_db, "SCHEMA_VERSION", 9)
        Store(path).close()
    db = sqlite3.connect(path)
    assert db.execute("PRAGMA user_version").fetchone()[0] == 9
    for status in ("finished", "finished", "interrupted"):
        db.execute("INSERT INTO sessions (protocol, target, kernel, status, created_at, updated_at) "
                   "VALUES ('task', 't', 'k', ?, 'x', 'x')", (status,))
    db.execute("INSERT INTO turns (session_id, idx, question, answer, action, score, created_at) "
               "VALUES (2, 0, 'q', 'a', 'task', 1.0, 'x')")
    db.execute("UPDATE sessions SET score = 100.0 WHERE id = 2")
    for sid in (1, 2):
        db.execute("INSERT INTO events (session_id, ts, kind, payload) VALUES (?, 0, 'session.finished', ?)",
                   (sid, json.dumps({"score": None if sid == 1 else 100.0, "metrics": {}})))
    db.commit()
    db.close()


def test_a_schema_9_store_migrates(tmp_path, monkeypatch):
    path = tmp_path / "viva.db"
    _schema_9(path, monkeypatch)
    store = Store(path)
    assert store.schema_version == SCHEMA_VERSION >= 10
    assert [(r["id"], r["status"], r["score"]) for r in store.query("SELECT id, status, score FROM sessions")] == [
        (1, "not_examined", None), (2, "finished", 100.0), (3, "interrupted", None)]
    # the fold of the log agrees with the row: the migration's own session.finished says why
    view = SessionView(1)
    view.apply_all(store.events(0, 1))
    assert view.status == "not_examined" and "relabelled by schema 10" in view.not_examined
    old = SessionView(2)
    old.apply_all(store.events(0, 2))
    assert old.status == "finished"  # an event without ``status`` reads finished
    # the table keeps its indexes, references and triggers; the CHECK takes the new status and no other
    indexes = {r["name"] for r in store.query("SELECT name FROM sqlite_master WHERE type = 'index' "
                                              "AND tbl_name = 'sessions'")}
    assert {"sessions_run", "sessions_status", "sessions_item"} <= indexes
    assert store.query("PRAGMA foreign_key_check") == []
    with store.transaction():
        store.update("sessions", 3, {"status": "not_examined"})
    with pytest.raises(sqlite3.IntegrityError, match="CHECK"), store.transaction():
        store.update("sessions", 3, {"status": "examined-ish"})
    with store.transaction():
        store.insert("turns", {"session_id": 3, "idx": 0, "question": "q", "answer": "a", "action": "task",
                               "tokens_in": 7, "created_at": "x"})
    assert store.one("SELECT answered, tokens_in FROM session_stats WHERE session_id = 3") == {"answered": 1,
                                                                                           "tokens_in": 7}
    with store.transaction():
        store.conn.execute("DELETE FROM sessions WHERE id = 2")  # the turns' reference still cascades
    assert store.one("SELECT COUNT(*) AS n FROM turns WHERE session_id = 2")["n"] == 0
    store.close()
    assert Store(path).schema_version == SCHEMA_VERSION  # opening again migrates nothing


def test_migration_10_is_one_transaction(tmp_path, monkeypatch):
    """A migration that fails half-way (here: at its events insert, after the table was rebuilt) leaves
    the store exactly at schema 9."""
    path = tmp_path / "viva.db"
    _schema_9(path, monkeypatch)
    db = sqlite3.connect(path)
    db.execute("CREATE TRIGGER no_events BEFORE INSERT ON events BEGIN SELECT RAISE(ABORT, 'events refused'); END")
    db.commit()
    before = db.execute("SELECT sql FROM sqlite_master WHERE name = 'sessions'").fetchone()[0]
    db.close()
    with pytest.raises(Exception, match="events refused"):
        Store(path)
    db = sqlite3.connect(path)
    assert db.execute("PRAGMA user_version").fetchone()[0] == 9
    assert db.execute("SELECT sql FROM sqlite_master WHERE name = 'sessions'").fetchone()[0] == before
    assert db.execute("SELECT status FROM sessions ORDER BY id").fetchall() == [("finished",), ("finished",),
                                                                                  ("interrupted",)]
    assert db.execute("SELECT name FROM sqlite_master WHERE name = 'sessions_v10'").fetchone() is None
    db.close()
