"""Read-only queries over sessions (listing, detail), shared by the facade and the runner.

Figures (session metrics, target tables, leaderboard, agreement) live in :mod:`engine.metrics.sessions`."""

from __future__ import annotations

import os
from typing import Any

from engine.interview.session import effective_verdicts
from engine.metrics.sessions import session_metrics
from engine.store import Store


def _alive(pid: int | None) -> bool:
    if not pid:
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def effective_status(row: dict[str, Any]) -> str:
    """A session marked running or paused whose process is gone was interrupted."""
    status = row["status"]
    if status in ("running", "paused") and not _alive(row.get("pid")):
        return "interrupted"
    return status


def list_sessions(store: Store, limit: int | None = None) -> list[dict[str, Any]]:
    """Sessions newest first: id, status, protocol, target, kernel, policy, item, benchmark, turns,
    score (0-100), created_at, run_id."""
    sql = (
        "SELECT s.id, s.status, s.pid, s.protocol, s.target, s.kernel, s.policy, s.item_id AS item, "
        "b.name AS benchmark, i.topic AS topic, s.score, s.created_at, s.run_id, "
        "(SELECT COUNT(*) FROM turns t WHERE t.session_id = s.id AND t.answer IS NOT NULL) AS turns "
        "FROM sessions s LEFT JOIN benchmarks b ON b.id = s.benchmark_id "
        "LEFT JOIN items i ON i.id = s.item_id ORDER BY s.id DESC"
    )
    if limit:
        sql += f" LIMIT {int(limit)}"
    rows = store.query(sql)
    for r in rows:
        r["status"] = effective_status(r)
        r.pop("pid", None)
    return rows


def session_detail(store: Store, session_id: int) -> dict[str, Any]:
    """A session with its turns and each turn's effective verdicts (latest row per criterion wins)."""
    session = store.one("SELECT * FROM sessions WHERE id = ?", (session_id,))
    if session is None:
        raise KeyError(f"session {session_id} does not exist")
    session["status"] = effective_status(session)
    turns = store.query("SELECT * FROM turns WHERE session_id = ? ORDER BY idx", (session_id,))
    for t in turns:
        t["verdicts"] = effective_verdicts(store.query(
            "SELECT * FROM verdicts WHERE turn_id = ? AND rubric_version_id IS ? ORDER BY id",
            (t["id"], t["rubric_version_id"])))
    return {"session": session, "turns": turns, "metrics": session_metrics(store, session_id)}
