"""Read-only queries over sessions (listing, detail), shared by the facade and the runner.

Figures (session metrics, target tables, leaderboard, agreement) live in :mod:`engine.metrics.sessions`."""

from __future__ import annotations

from typing import Any

from engine.interview.session import effective_verdicts
from engine.metrics.sessions import session_metrics
from engine.store import Store
from engine.store.lease import pid_alive
from engine.store.texts import fill_summaries


def effective_status(row: dict[str, Any]) -> str:
    """A session marked running or paused whose process is gone was interrupted."""
    status = row["status"]
    if status in ("running", "paused") and not pid_alive(row.get("pid")):
        return "interrupted"
    return status


def list_sessions(store: Store, limit: int | None = None, offset: int = 0, query: str = "",
                  **where: Any) -> list[dict[str, Any]]:
    """Sessions newest first, filtered and paged in the store (:func:`engine.metrics.listing.list_sessions`):
    id, status, protocol, target, kernel, policy, item, benchmark, topic, turns, score (0-100),
    created_at, run_id."""
    from engine.metrics.listing import list_sessions as page

    return page(store, limit, offset, query, **where)


def session_detail(store: Store, session_id: int) -> dict[str, Any]:
    """A session with its turns and each turn's effective verdicts (latest row per criterion wins)."""
    session = store.one("SELECT * FROM sessions WHERE id = ?", (session_id,))
    if session is None:
        raise KeyError(f"session {session_id} does not exist")
    session["status"] = effective_status(session)
    turns = fill_summaries(store, store.query("SELECT * FROM turns WHERE session_id = ? ORDER BY idx", (session_id,)))
    for t in turns:
        t["verdicts"] = effective_verdicts(store.query(
            "SELECT * FROM verdicts WHERE turn_id = ? AND rubric_version_id IS ? ORDER BY id",
            (t["id"], t["rubric_version_id"])))
    from engine.metrics.overrides import carried_verdicts

    carried = carried_verdicts(store, session_id)
    for t in turns:  # an override holds from its turn on (engine.metrics.overrides)
        for cid, (met, src) in carried.get(t["idx"], {}).items():
            prior = t["verdicts"].get(cid)
            t["verdicts"][cid] = {**(prior or {"cid": cid}), "met": int(met), "source": "human",
                                  "rationale": f"carried from the override on turn {src}", "carried_from": src,
                                  "original": (prior or {}).get("original", prior)}
    return {"session": session, "turns": turns, "metrics": session_metrics(store, session_id)}


def session_exists(store: Store, session_id: int) -> bool:
    """Whether a session with this id is stored."""
    return store.one("SELECT 1 AS x FROM sessions WHERE id = ?", (session_id,)) is not None


def session_summary(store: Store, session_id: int) -> dict[str, Any]:
    """The session's row with its effective status; ``SessionError`` when there is none."""
    from engine.interview.session import session_row

    row = session_row(store, session_id)
    row["status"] = effective_status(row)
    return row


def run_exists(store: Store, run_id: int) -> bool:
    """Whether a run with this id is stored."""
    return store.one("SELECT 1 AS x FROM runs WHERE id = ?", (run_id,)) is not None


def run_sessions(store: Store, run_id: int) -> list[dict[str, Any]]:
    """A run's sessions in order: id and effective status."""
    rows = store.query("SELECT id, status, pid FROM sessions WHERE run_id = ? ORDER BY id", (run_id,))
    return [{"id": r["id"], "status": effective_status(r)} for r in rows]


def recent_targets(store: Store, limit: int = 20) -> list[str]:
    """Distinct targets of the most recent sessions, newest first."""
    rows = store.query("SELECT target FROM sessions ORDER BY id DESC LIMIT ?", (int(limit) * 5,))
    return list(dict.fromkeys(r["target"] for r in rows))[:limit]


def change_token(store: Store) -> tuple[Any, ...]:
    """A cheap value that changes when events, sessions, benchmarks or items change."""
    row = store.one("SELECT (SELECT COALESCE(MAX(seq), 0) FROM events) AS seq, "
                    "(SELECT COUNT(*) FROM sessions) AS sessions, "
                    "(SELECT COALESCE(MAX(id), 0) FROM benchmarks) AS bench, "
                    "(SELECT COUNT(*) FROM benchmarks) AS benches, "
                    "(SELECT COUNT(*) FROM items) AS items")
    return tuple(row.values()) if row else ()
