"""Breakdowns for reports: per criterion, per topic, and run totals (judge–human agreement is
:func:`engine.metrics.sessions.agreement`).

Written-down rules (every figure here is tested in ``tests/engine/test_metrics_breakdown.py``):

- **Criterion rates** of a session, over the turns judged under the rubric version the session
  scores with now (the turns' ``rubric_version_id`` equals the session's): for each criterion of
  that version, ``judged`` = those turns with a verdict on it, ``met`` = how many of them have it
  met (the *effective* verdict: a human override replaces the machine's), ``rate`` = met / judged
  (``None`` when judged = 0), ``final`` = the effective verdict in the last such turn (``None``
  without one) and ``overridden`` = turns whose effective verdict is a human's. For a deduction
  criterion "met" means the fault was found.
- **Topic table**: the sessions grouped by their item's topic (no item or an empty topic is
  ``"(no topic)"``), and in each group :func:`engine.metrics.sessions.target_table` (so the
  Dynamism figures are over finished sessions only, exactly as in the leaderboard).
- **Run totals** over a set of sessions: how many, how many ``finished``, ``failed``, ``not_examined``
  (ended with no answered turn) and none of these
  (``unfinished``: created, running, paused, interrupted; the stored status, as in the target
  table), distinct targets and items, and tokens in, tokens out and cost summed over every turn
  of every session (spent even when a session failed).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from typing import Any

from engine.metrics.sessions import target_table
from engine.store import Store

NO_TOPIC = "(no topic)"
"""The topic label of sessions without an item or with an empty topic."""


def _effective(rows: Iterable[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    """Criterion id -> the latest row (rows in id order): the effective verdict."""
    out: dict[str, dict[str, Any]] = {}
    for r in rows:
        out[r["cid"]] = r
    return out


def criterion_rates(store: Store, session_id: int, criteria_of: Callable[[int], Sequence[Any]]
                    ) -> list[dict[str, Any]]:
    """Per criterion of the session's rubric version: judged, met, rate, final, overridden.

    Args:
        criteria_of: rubric version id -> its criteria (``cid``, ``text``, ``kind``, ``weight``), e.g.
            ``lambda v: engine.bench.rubric.get_version(store, v).criteria``: passed in, as the
            benchmarks' layer sits above this one.

    Returns:
        One dict per criterion in rubric order: ``cid, text, kind, weight, judged, met, rate,
        final, overridden``; ``[]`` for a session without a rubric version.
    """
    row = store.one("SELECT rubric_version_id FROM sessions WHERE id = ?", (session_id,))
    if row is None or row["rubric_version_id"] is None:
        return []
    version_id = row["rubric_version_id"]
    criteria = criteria_of(version_id)
    turns = store.query("SELECT id FROM turns WHERE session_id = ? AND rubric_version_id = ? AND score IS NOT NULL "
                        "ORDER BY idx", (session_id, version_id))
    per_turn = [_effective(store.query("SELECT cid, met, source FROM verdicts WHERE turn_id = ? AND "
                                       "rubric_version_id = ? ORDER BY id", (t["id"], version_id)))
                for t in turns]
    out = []
    for c in criteria:
        seen = [v[c.cid] for v in per_turn if c.cid in v]
        met = sum(1 for v in seen if v["met"])
        out.append({"cid": c.cid, "text": c.text, "kind": c.kind, "weight": c.weight, "judged": len(seen),
                    "met": met, "rate": met / len(seen) if seen else None,
                    "final": bool(seen[-1]["met"]) if seen else None,
                    "overridden": sum(1 for v in seen if v["source"] == "human")})
    return out


def topic_table(store: Store, session_ids: Iterable[int]) -> list[dict[str, Any]]:
    """Per topic, one :func:`~engine.metrics.sessions.target_table` row per target.

    Returns:
        Dicts ``{"topic": ..., **target row}``; topics in order of their first session id.
    """
    ids = sorted(set(session_ids))
    if not ids:
        return []
    marks = ",".join("?" * len(ids))
    rows = store.query(f"SELECT s.id, COALESCE(NULLIF(i.topic, ''), ?) AS topic FROM sessions s "
                       f"LEFT JOIN items i ON i.id = s.item_id WHERE s.id IN ({marks}) ORDER BY s.id",
                       (NO_TOPIC, *ids))
    groups: dict[str, list[int]] = {}
    for r in rows:
        groups.setdefault(r["topic"], []).append(r["id"])
    return [{"topic": topic, **row} for topic, sids in groups.items() for row in target_table(store, sids)]


def run_totals(store: Store, session_ids: Iterable[int]) -> dict[str, Any]:
    """Counts and usage over sessions (see the module's rule).

    Returns:
        ``{"sessions", "finished", "failed", "not_examined", "unfinished", "targets", "items", "tokens_in",
        "tokens_out", "cost"}``; when calls had no counts from their server, the tokens and the cost (a price
        times the counts) are None (unknown)
        and ``tokens_unknown`` (present only then) says how many.
    """
    ids = sorted(set(session_ids))
    out = {"sessions": len(ids), "finished": 0, "failed": 0, "not_examined": 0, "unfinished": 0, "targets": 0,
           "items": 0,
           "tokens_in": 0, "tokens_out": 0, "cost": 0.0}
    if not ids:
        return out
    marks = ",".join("?" * len(ids))
    rows = store.query(f"SELECT status, target, item_id FROM sessions WHERE id IN ({marks})", tuple(ids))
    for r in rows:
        key = r["status"] if r["status"] in ("finished", "failed", "not_examined") else "unfinished"
        out[key] += 1
    out["targets"] = len({r["target"] for r in rows})
    out["items"] = len({r["item_id"] for r in rows if r["item_id"] is not None})
    usage = store.one(f"SELECT COALESCE(SUM(tokens_in), 0) AS tin, COALESCE(SUM(tokens_out), 0) AS tout, "
                      f"COALESCE(SUM(cost), 0) AS cost FROM turns WHERE session_id IN ({marks})", tuple(ids))
    out.update(tokens_in=usage["tin"], tokens_out=usage["tout"], cost=float(usage["cost"]))
    # calls whose server sent no counts (llama-cpp-python's streams): the sums would undercount, so unknown
    unknown = store.one(f"SELECT COUNT(*) AS n FROM llm_calls WHERE usage_unknown = 1 AND session_id IN ({marks})",
                        tuple(ids))["n"]
    if unknown:
        out.update(tokens_in=None, tokens_out=None, cost=None, tokens_unknown=unknown)
    return out


def calls_by_purpose(store: Store, session_ids: Iterable[int]) -> list[dict[str, Any]]:
    """What the sessions' LLM calls were for, from the calls on record (``llm_calls.purpose``;
    docs/turn-cost.md): one row per role and purpose, in the order each first occurred.

    Returns:
        ``[{"role", "purpose", "calls", "per_turn", "cached", "failed", "tokens_in", "tokens_out", "cost"}]``:
        ``calls`` counts every call (a repair is its own purpose, ``<purpose> repair``), ``per_turn`` over the
        sessions' turns, ``cached`` those answered from the response cache (nothing sent), ``failed`` those
        that got no answer; tokens are None when a call of the row had no counts from its server. Calls
        recorded before purposes were (schema 11) have the purpose ``unrecorded``.
    """
    ids = sorted(set(session_ids))
    if not ids:
        return []
    marks = ",".join("?" * len(ids))
    turns = store.one(f"SELECT COUNT(*) AS n FROM turns WHERE session_id IN ({marks})", tuple(ids))["n"]
    rows = store.query(
        "SELECT role, purpose, COUNT(*) AS calls, SUM(cached) AS cached, SUM(error IS NOT NULL) AS failed, "
        "SUM(tokens_in) AS tin, SUM(tokens_out) AS tout, SUM(cost) AS cost, SUM(usage_unknown) AS unknown "
        f"FROM llm_calls WHERE session_id IN ({marks}) GROUP BY role, purpose ORDER BY MIN(id)", tuple(ids))
    return [{"role": r["role"], "purpose": r["purpose"] or "unrecorded", "calls": r["calls"],
             "per_turn": r["calls"] / turns if turns else None, "cached": r["cached"], "failed": r["failed"],
             "tokens_in": None if r["unknown"] else r["tin"], "tokens_out": None if r["unknown"] else r["tout"],
             "cost": float(r["cost"] or 0.0)} for r in rows]

