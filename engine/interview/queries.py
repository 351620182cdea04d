"""Read-only queries over sessions, shared by the CLI, the runner and the app."""

from __future__ import annotations

import os
from collections.abc import Iterable
from typing import Any

from engine.metrics.dynamism import TurnRecord, dynamism
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


def turn_records(store: Store, session_ids: Iterable[int]) -> list[list[TurnRecord]]:
    out = []
    for sid in session_ids:
        rows = store.query("SELECT action, score, delta FROM turns WHERE session_id = ? ORDER BY idx", (sid,))
        out.append([TurnRecord(r["action"], r["score"], r["delta"]) for r in rows])
    return out


def session_metrics(store: Store, session_id: int) -> dict[str, Any]:
    """Per-session figures: Dynamism, score per turn, tokens, cost, latency."""
    dyn = dynamism(turn_records(store, [session_id]))
    rows = store.query(
        "SELECT idx, action, score, delta, cos, tokens_in, tokens_out, cost, latency_ms FROM turns "
        "WHERE session_id = ? ORDER BY idx", (session_id,))
    latencies = [r["latency_ms"] for r in rows if r["latency_ms"] is not None]
    return {
        **dyn.as_dict(),
        "scores": [r["score"] for r in rows if r["score"] is not None],
        "turns": len([r for r in rows if r["score"] is not None]),
        "tokens_in": sum(r["tokens_in"] for r in rows),
        "tokens_out": sum(r["tokens_out"] for r in rows),
        "cost": sum(r["cost"] for r in rows),
        "mean_latency_ms": sum(latencies) / len(latencies) if latencies else None,
    }


def target_table(store: Store, session_ids: Iterable[int]) -> list[dict[str, Any]]:
    """One row per target over the given sessions: Dynamism figures, tokens, cost, session ids."""
    ids = list(session_ids)
    if not ids:
        return []
    marks = ",".join("?" * len(ids))
    rows = store.query(f"SELECT id, target, protocol FROM sessions WHERE id IN ({marks}) ORDER BY id", tuple(ids))
    by_target: dict[str, list[int]] = {}
    for r in rows:
        by_target.setdefault(r["target"], []).append(r["id"])
    table = []
    for target, sids in by_target.items():
        dyn = dynamism(turn_records(store, sids))
        marks = ",".join("?" * len(sids))
        usage = store.one(
            f"SELECT COALESCE(SUM(tokens_in),0) AS tin, COALESCE(SUM(tokens_out),0) AS tout, "
            f"COALESCE(SUM(cost),0) AS cost FROM turns WHERE session_id IN ({marks})", tuple(sids))
        table.append({"target": target, **dyn.as_dict(), "tokens_in": usage["tin"],
                      "tokens_out": usage["tout"], "cost": usage["cost"], "sessions": sids})
    return table


def leaderboard(store: Store) -> list[dict[str, Any]]:
    """Every target over its finished sessions, best Score first."""
    ids = [r["id"] for r in store.query("SELECT id FROM sessions WHERE status = 'finished'")]
    rows = target_table(store, ids)
    return sorted(rows, key=lambda r: -(r["score"] or 0.0))


def session_detail(store: Store, session_id: int) -> dict[str, Any]:
    """A session with its turns and each turn's effective verdicts (latest row per criterion wins)."""
    session = store.one("SELECT * FROM sessions WHERE id = ?", (session_id,))
    if session is None:
        raise KeyError(f"session {session_id} does not exist")
    session["status"] = effective_status(session)
    turns = store.query("SELECT * FROM turns WHERE session_id = ? ORDER BY idx", (session_id,))
    for t in turns:
        verdicts: dict[str, dict[str, Any]] = {}
        for v in store.query("SELECT * FROM verdicts WHERE turn_id = ? AND rubric_version_id IS ? ORDER BY id",
                             (t["id"], t["rubric_version_id"])):
            prior = verdicts.get(v["cid"])
            if v["source"] == "human" and prior is not None:
                v["original"] = prior.get("original", prior)
            verdicts[v["cid"]] = v
        t["verdicts"] = verdicts
    return {"session": session, "turns": turns, "metrics": session_metrics(store, session_id)}
