"""Evaluator overrides of a session's verdicts: override, preview, undo and list (issue 38 moved them out
of :mod:`engine.interview.session`, which the protocols import: an override needs the session's protocol for
its scoring rule, so living in ``session`` made ``session`` and ``protocols`` import each other).

An override holds for later turns until the judge changes its verdict (:mod:`engine.events.overrides`);
every turn's score and Δs and the session score are recomputed with the protocol's rule.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

from engine import events as ev
from engine.bench.rubric import get_version
from engine.interview.protocols import protocol_class
from engine.interview.session import SessionError, Turn, metrics_payload, session_row, session_score
from engine.store import Store, loads, now_iso


def override_verdict(store: Store, session_id: int, turn_idx: int, cid: str, met: bool,
                     note: str = "", who: str = "human") -> dict[str, Any]:
    """Override one verdict of a turn (a ``human`` row; the judge's stays on record); the override
    holds for later turns until the judge changes its verdict (:mod:`engine.metrics.overrides`), and
    every turn's score and Δs and the session score are recomputed with the protocol's rule.

    Returns:
        ``{"turn", "cid", "met", "score", "delta", "session_score", "note", "by", "next_delta",
        "later"}``; ``later`` lists every later judged turn's ``{turn, score, delta, carried}``.
    """
    row = session_row(store, session_id)
    turn = _stored_turn(store, session_id, turn_idx)
    if turn is None or turn.score is None:
        raise SessionError(f"session {session_id} has no judged turn {turn_idx}")
    version_id = turn.rubric_version_id
    criteria = get_version(store, version_id).criteria
    if cid not in {c.cid for c in criteria}:
        raise SessionError(f"criterion {cid!r} is not in rubric version {version_id}")
    if not note.strip():
        raise SessionError("an override needs a note saying why (it may be short, never empty)")
    protocol = protocol_class(row["protocol"])
    with store.transaction():
        store.insert("verdicts", {"turn_id": turn.id, "cid": cid, "rubric_version_id": version_id,
                                  "met": int(met), "in_answer": None, "rationale": note or f"override by {who}",
                                  "source": "human", "created_at": now_iso()})
        # the override holds for later turns until the judge changes its verdict (engine.metrics.overrides)
        from engine.metrics.overrides import rescore

        figures = rescore(store, session_id, protocol, _criteria_of(store, {version_id: criteria}), session_score)
        by_turn = {t["turn"]: t for t in figures["turns"]}
        score, delta = by_turn[turn_idx]["score"], by_turn[turn_idx]["delta"]
        next_delta = by_turn[turn_idx + 1]["delta"] if turn_idx + 1 in by_turn else None
        total = figures["session_score"]
        store.update("sessions", session_id, {"score": total, "updated_at": now_iso()})
        later = [t for t in figures["turns"] if t["turn"] > turn_idx]
        judge = store.one("SELECT met FROM verdicts WHERE turn_id = ? AND cid = ? AND source != 'human' "
                          "AND rubric_version_id IS ? ORDER BY id DESC LIMIT 1", (turn.id, cid, version_id))
        event = ev.VerdictOverridden(turn_idx, cid, met, score, delta, next_delta, total, note, who, later,
                                     confirm=judge is not None and bool(judge["met"]) == met)
        result = event.as_dict()
        store.append_event(session_id, ev.VERDICT_OVERRIDDEN, result)
    from engine.metrics.sessions import session_metrics

    store.append_event(session_id, ev.METRICS, metrics_payload(session_metrics(store, session_id, scores=False)))
    return result


def _stored_turn(store: Store, session_id: int, turn_idx: int) -> Turn | None:
    """Turn ``turn_idx`` of a session as stored (its ``summary`` not read back: the overrides need none)."""
    row = store.one("SELECT * FROM turns WHERE session_id = ? AND idx = ?", (session_id, turn_idx))
    return None if row is None else Turn.from_row(row)


def _override_target(store: Store, session_id: int, turn_idx: int, cid: str) -> tuple[dict[str, Any], Turn, Any]:
    """The session row, the judged turn and its rubric version's criteria (:class:`SessionError` otherwise)."""
    row = session_row(store, session_id)
    turn = _stored_turn(store, session_id, turn_idx)
    if turn is None or turn.score is None:
        raise SessionError(f"session {session_id} has no judged turn {turn_idx}")
    criteria = get_version(store, turn.rubric_version_id).criteria
    if cid not in {c.cid for c in criteria}:
        raise SessionError(f"criterion {cid!r} is not in rubric version {turn.rubric_version_id}")
    return row, turn, criteria


def _criteria_of(store: Store, known: dict[int | None, Any] | None = None) -> Callable[[int | None], Any]:
    """A rubric version's criteria by id, each version read once (``known``: versions already at hand)."""
    versions: dict[int | None, Any] = dict(known or {})

    def criteria_of(vid: int | None) -> Any:
        if vid not in versions:
            versions[vid] = get_version(store, vid).criteria
        return versions[vid]

    return criteria_of


def preview_override(store: Store, session_id: int, turn_idx: int, cid: str, met: bool) -> dict[str, Any]:
    """What overriding ``cid`` on ``turn_idx`` to ``met`` would change, computed and not written:
    ``{"before": {"met", "turn_score", "session_score"}, "after": {...}, "carried_to": [turns]}``
    (:func:`engine.metrics.overrides.preview`)."""
    from engine.metrics.overrides import preview

    row, _, _ = _override_target(store, session_id, turn_idx, cid)
    return preview(store, session_id, turn_idx, cid, met, protocol_class(row["protocol"]), _criteria_of(store),
                   session_score)


def undo_override(store: Store, session_id: int, turn_idx: int, cid: str, who: str = "human") -> dict[str, Any]:
    """Take back the latest human verdict on ``cid`` for ``turn_idx`` (an override or a confirmation):
    its row is removed, the figures are recomputed as if it had never been given, and a
    ``verdict.override_undone`` event keeps the record (what was undone, its note, by whom).

    Returns:
        ``{"turn", "cid", "met", "source", "score", "delta", "session_score", "undone", "by", "later"}``:
        the verdict now in force and who gave it (``judge`` or ``human`` for an earlier override).
    """
    from engine.metrics.overrides import rescore

    row, turn, _ = _override_target(store, session_id, turn_idx, cid)
    last = store.one("SELECT id, met, rationale FROM verdicts WHERE turn_id = ? AND cid = ? AND source = 'human' "
                     "AND rubric_version_id IS ? ORDER BY id DESC LIMIT 1", (turn.id, cid, turn.rubric_version_id))
    if last is None:
        raise SessionError(f"turn {turn_idx} has no override of {cid} to undo")
    protocol = protocol_class(row["protocol"])
    with store.transaction():
        store.conn.execute("DELETE FROM verdicts WHERE id = ?", (last["id"],))
        figures = rescore(store, session_id, protocol, _criteria_of(store), session_score)
        store.update("sessions", session_id, {"score": figures["session_score"], "updated_at": now_iso()})
        human = store.one("SELECT met, rationale FROM verdicts WHERE turn_id = ? AND cid = ? AND source = 'human' "
                          "AND rubric_version_id IS ? ORDER BY id DESC LIMIT 1",
                          (turn.id, cid, turn.rubric_version_id))
        mine = {t["turn"]: t for t in figures["turns"]}[turn_idx]
        result = {"turn": turn_idx, "cid": cid, "met": rescored_met(store, session_id, turn_idx, cid),
                  "source": "human" if human else "judge", "note": human["rationale"] if human else "",
                  "score": mine["score"], "delta": mine["delta"], "session_score": figures["session_score"],
                  "undone": {"met": bool(last["met"]), "note": last["rationale"]}, "by": who,
                  "later": [t for t in figures["turns"] if t["turn"] > turn_idx]}
        store.append_event(session_id, ev.VERDICT_OVERRIDE_UNDONE, result)
    from engine.metrics.sessions import session_metrics

    store.append_event(session_id, ev.METRICS, metrics_payload(session_metrics(store, session_id, scores=False)))
    return result


def rescored_met(store: Store, session_id: int, turn_idx: int, cid: str) -> bool | None:
    """The effective verdict on ``cid`` for ``turn_idx`` (human overrides carried) or None."""
    from engine.events.overrides import effective_verdicts_by_turn
    from engine.metrics.overrides import turn_verdicts

    pairs = [tv for r, tv in turn_verdicts(store, session_id) if r["score"] is not None]
    for e in effective_verdicts_by_turn(pairs):
        if e.idx == turn_idx:
            return e.met.get(cid)
    return None


def list_overrides(store: Store, session_ids: Iterable[int]) -> list[dict[str, Any]]:
    """Every override, confirmation and undo of the given sessions, oldest first:
    ``{"session", "turn", "cid", "action" ("override", "confirm" or "undo"), "met", "by", "at" (ISO UTC),
    "note", "session_score"}``. A confirmation is a human verdict equal to the judge's; an override
    later undone is listed with ``undone: True``."""
    import datetime as _dt

    ids = list(session_ids)
    if not ids:
        return []
    marks = ",".join("?" * len(ids))
    rows = store.query(f"SELECT seq, session_id, ts, kind, payload FROM events WHERE session_id IN ({marks}) "
                       "AND kind IN (?, ?) ORDER BY seq", (*ids, ev.VERDICT_OVERRIDDEN, ev.VERDICT_OVERRIDE_UNDONE))
    out: list[dict[str, Any]] = []
    standing: dict[tuple[int, int, str], list[dict[str, Any]]] = {}
    for r in rows:
        p = loads(r["payload"], {})
        key = (r["session_id"], int(p.get("turn", -1)), str(p.get("cid", "")))
        at = _dt.datetime.fromtimestamp(r["ts"], _dt.UTC).strftime("%Y-%m-%d %H:%M:%S UTC")
        if r["kind"] == ev.VERDICT_OVERRIDE_UNDONE:
            undone = standing.get(key) or []
            if undone:
                undone.pop()["undone"] = True
            out.append({"session": key[0], "turn": key[1], "cid": key[2], "action": "undo",
                        "met": p.get("met"), "by": p.get("by", "human"), "at": at,
                        "note": f"undid: {(p.get('undone') or {}).get('note', '')}",
                        "session_score": p.get("session_score"), "undone": False})
            continue
        action = "confirm" if p.get("confirm") else "override"
        entry = {"session": key[0], "turn": key[1], "cid": key[2], "action": action, "met": bool(p.get("met")),
                 "by": p.get("by", "human"), "at": at, "note": p.get("note", ""),
                 "session_score": p.get("session_score"), "undone": False}
        standing.setdefault(key, []).append(entry)
        out.append(entry)
    return out
