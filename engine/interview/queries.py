"""Read-only queries over sessions, shared by the CLI and the app."""

from __future__ import annotations

from typing import Any

from engine.store import Store


def list_sessions(store: Store, limit: int | None = None) -> list[dict[str, Any]]:
    """Sessions newest first with id, status, protocol, target, item, benchmark, turns and score (0-100)."""
    sql = (
        "SELECT s.id, s.status, s.protocol, s.target, s.kernel, s.policy, s.item_id AS item, "
        "b.name AS benchmark, s.score, s.created_at, s.run_id, "
        "(SELECT COUNT(*) FROM turns t WHERE t.session_id = s.id AND t.answer IS NOT NULL) AS turns "
        "FROM sessions s LEFT JOIN benchmarks b ON b.id = s.benchmark_id ORDER BY s.id DESC"
    )
    if limit:
        sql += f" LIMIT {int(limit)}"
    return store.query(sql)
