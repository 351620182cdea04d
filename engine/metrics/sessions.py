"""Figures over stored sessions: per session, per target, the leaderboard and judge–human agreement.

Every figure a user sees about sessions is computed here from the store (Dynamism formulas in
:mod:`engine.metrics.dynamism`), never in the app or the CLI.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from engine.metrics.dynamism import TurnRecord, dynamism
from engine.store import Store


def turn_records(store: Store, session_ids: Iterable[int]) -> list[list[TurnRecord]]:
    """Each session's turns as (action, score, delta) records, for the Dynamism figures."""
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
    """One row per target over the given sessions.

    The Dynamism figures (Score, ΔS_f, P±, M±, R±, R) are over the target's **finished** sessions
    only: a failed or unfinished session's partial score is not a measurement of the target. The
    row counts and lists the others (``failed``, ``unfinished``) so nothing is hidden; tokens and
    cost are over every session (they were spent).
    """
    ids = list(session_ids)
    if not ids:
        return []
    marks = ",".join("?" * len(ids))
    rows = store.query(f"SELECT id, target, status, pid, score FROM sessions WHERE id IN ({marks}) ORDER BY id",
                       tuple(ids))
    by_target: dict[str, list[dict[str, Any]]] = {}
    for r in rows:
        by_target.setdefault(r["target"], []).append(r)
    table = []
    for target, sessions in by_target.items():
        sids = [s["id"] for s in sessions]
        finished = [s["id"] for s in sessions if s["status"] == "finished"]
        failed = [s["id"] for s in sessions if s["status"] == "failed"]
        unfinished = [s["id"] for s in sessions if s["status"] not in ("finished", "failed")]
        dyn = dynamism(turn_records(store, finished))
        # Score is the mean of the finished sessions' scores, each by its protocol's rule (for
        # adaptive sessions that is 100 × the last turn's score, TestAgent's Score).
        scores = [s["score"] for s in sessions if s["status"] == "finished" and s["score"] is not None]
        dyn.score = sum(scores) / len(scores) if scores else None
        marks = ",".join("?" * len(sids))
        usage = store.one(
            f"SELECT COALESCE(SUM(tokens_in),0) AS tin, COALESCE(SUM(tokens_out),0) AS tout, "
            f"COALESCE(SUM(cost),0) AS cost FROM turns WHERE session_id IN ({marks})", tuple(sids))
        table.append({"target": target, **dyn.as_dict(), "tokens_in": usage["tin"],
                      "tokens_out": usage["tout"], "cost": usage["cost"], "sessions": sids,
                      "finished": len(finished), "failed": failed, "unfinished": unfinished})
    graded = graded_table(store, ids)
    for row in table:
        row["graded"] = graded.get(row["target"])  # JudgeAgent's figures, when the target has graded sessions
    return table


def leaderboard(store: Store) -> list[dict[str, Any]]:
    """Every target, best Score first (figures over finished sessions; failed ones counted)."""
    ids = [r["id"] for r in store.query("SELECT id FROM sessions")]
    rows = target_table(store, ids)
    return sorted(rows, key=lambda r: -(r["score"] or 0.0))


def agreement(store: Store, session_ids: list[int] | None = None) -> dict[str, Any]:
    """Kernel-vs-human verdict agreement from overrides: of the verdicts a human reviewed (overrode
    or confirmed), the share where the human kept the kernel's verdict."""
    where = ""
    params: tuple[Any, ...] = ()
    if session_ids:
        where = f"AND t.session_id IN ({','.join('?' * len(session_ids))})"
        params = tuple(session_ids)
    rows = store.query(
        "SELECT h.turn_id, h.cid, h.met AS human, (SELECT j.met FROM verdicts j WHERE j.turn_id = h.turn_id "
        "AND j.cid = h.cid AND j.rubric_version_id IS h.rubric_version_id AND j.source != 'human' "
        "ORDER BY j.id DESC LIMIT 1) AS kernel FROM verdicts h JOIN turns t ON t.id = h.turn_id "
        f"WHERE h.source = 'human' {where}", params)
    reviewed = [r for r in rows if r["kernel"] is not None]
    agreed = sum(1 for r in reviewed if bool(r["kernel"]) == bool(r["human"]))
    return {"reviewed": len(reviewed), "agreed": agreed,
            "agreement": agreed / len(reviewed) if reviewed else None}


def graded_table(store: Store, session_ids: Iterable[int]) -> dict[str, dict[str, Any]]:
    """JudgeAgent's figures per target over its finished graded sessions.

    For each target: ``questions`` (base and extension questions graded), ``evaluation_score``
    (Σ gains / questions, Algorithm 1), and the validation figures over its base questions
    (Algorithm 2): ``n``, ``acc1``, ``acc2``, ``cr``, ``cte``, ``delta`` = ACC2 − ACC1 = CR − CtE
    (the identity is checked by :func:`engine.metrics.graded.validation`).
    """
    from engine.metrics.graded import validation

    ids = list(session_ids)
    if not ids:
        return {}
    marks = ",".join("?" * len(ids))
    sessions = store.query(f"SELECT id, target FROM sessions WHERE id IN ({marks}) AND protocol = 'graded' "
                           "AND status = 'finished' ORDER BY id", tuple(ids))
    out: dict[str, dict[str, Any]] = {}
    by_target: dict[str, list[int]] = {}
    for s in sessions:
        by_target.setdefault(s["target"], []).append(s["id"])
    for target, sids in by_target.items():
        marks = ",".join("?" * len(sids))
        steps = store.query(f"SELECT session_id, phase, item_id, correct, gain FROM graded_steps "
                            f"WHERE session_id IN ({marks}) ORDER BY id", tuple(sids))
        graded = [s for s in steps if s["phase"] in ("base", "extension") and s["gain"] is not None]
        before = {(s["session_id"], s["item_id"]): bool(s["correct"]) for s in steps if s["phase"] == "base"}
        after = {(s["session_id"], s["item_id"]): bool(s["correct"]) for s in steps if s["phase"] == "validation"}
        pairs = [(before[k], after[k]) for k in before if k in after]
        v = validation(pairs).as_dict() if pairs else None
        out[target] = {
            "sessions": len(sids), "questions": len(graded),
            "extension_questions": sum(1 for s in graded if s["phase"] == "extension"),
            "evaluation_score": sum(s["gain"] for s in graded) / len(graded) if graded else None,
            "validation": v,
        }
    return out
