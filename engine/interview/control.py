"""Interventions: the evaluator steps into a session.

A running session is steered through ``control.*`` events that its runner applies at the next step
boundary (so the app, or another terminal, can steer a session running in another process, and a
request survives a restart): pause, resume, force the next action, inject the next question, stop,
switch to a new rubric version. Overriding a verdict needs no runner: it is its own verdict row
(the judge's stays on record) and the scores are recomputed at once.
"""

from __future__ import annotations

from typing import Any

from engine.metrics.scoring import turn_score
from engine.store import Store, now_iso

ACTIONS = ("follow-up", "challenge", "end")


class ControlError(ValueError):
    """An intervention that does not apply (unknown session, turn or criterion; bad action)."""


def _session(store: Store, session_id: int) -> dict[str, Any]:
    row = store.one("SELECT * FROM sessions WHERE id = ?", (session_id,))
    if row is None:
        raise ControlError(f"session {session_id} does not exist")
    return row


def request(store: Store, session_id: int, kind: str, **payload: Any) -> int:
    """Append a ``control.<kind>`` event for the session's runner; returns its sequence number."""
    _session(store, session_id)
    return store.append_event(session_id, f"control.{kind}", payload)


def pause(store: Store, session_id: int) -> int:
    return request(store, session_id, "pause")


def resume(store: Store, session_id: int) -> int:
    return request(store, session_id, "resume")


def stop(store: Store, session_id: int) -> int:
    return request(store, session_id, "stop")


def force(store: Store, session_id: int, action: str) -> int:
    """Force the next action: ``follow-up``, ``challenge`` or ``end`` (end after the current turn)."""
    if action not in ACTIONS:
        raise ControlError(f"unknown action {action!r}; choose one of {', '.join(ACTIONS)}")
    return request(store, session_id, "force", action=action)


def inject(store: Store, session_id: int, question: str) -> int:
    """Ask the evaluator's own question next (recorded with actor ``human``)."""
    if not question.strip():
        raise ControlError("the injected question is empty")
    return request(store, session_id, "inject", question=question.strip())


def switch_rubric(store: Store, session_id: int, version_id: int) -> int:
    """Tell a running session to re-score its stored answers under a new rubric version."""
    return request(store, session_id, "rubric", version_id=version_id)


def override_verdict(store: Store, session_id: int, turn_idx: int, cid: str, met: bool,
                     note: str = "", who: str = "human") -> dict[str, Any]:
    """Override one verdict of a turn; recompute that turn's score and the next turn's Δs.

    Returns:
        ``{"turn", "cid", "met", "score", "delta", "session_score"}`` after the change.
    """
    from engine.bench.rubric import get_version

    _session(store, session_id)
    turn = store.one("SELECT * FROM turns WHERE session_id = ? AND idx = ?", (session_id, turn_idx))
    if turn is None or turn["score"] is None:
        raise ControlError(f"session {session_id} has no judged turn {turn_idx}")
    version_id = turn["rubric_version_id"]
    criteria = get_version(store, version_id).criteria
    if cid not in {c.cid for c in criteria}:
        raise ControlError(f"criterion {cid!r} is not in rubric version {version_id}")
    with store.transaction():
        store.insert("verdicts", {"turn_id": turn["id"], "cid": cid, "rubric_version_id": version_id,
                                  "met": int(met), "in_answer": None, "rationale": note or f"override by {who}",
                                  "source": "human", "created_at": now_iso()})
        met_map = {v["cid"]: bool(v["met"]) for v in store.query(
            "SELECT cid, met FROM verdicts WHERE turn_id = ? AND rubric_version_id = ? ORDER BY id",
            (turn["id"], version_id))}
        score = turn_score(criteria, met_map) if turn["action"] != "task" else _task_score(criteria, met_map)
        prev = store.one("SELECT score FROM turns WHERE session_id = ? AND idx = ?", (session_id, turn_idx - 1))
        delta = None if prev is None or prev["score"] is None else score - prev["score"]
        store.update("turns", turn["id"], {"score": score, "delta": delta})
        nxt = store.one("SELECT id, score FROM turns WHERE session_id = ? AND idx = ?", (session_id, turn_idx + 1))
        next_delta = None
        if nxt is not None and nxt["score"] is not None:
            next_delta = nxt["score"] - score
            store.update("turns", nxt["id"], {"delta": next_delta})
        last = store.one("SELECT score FROM turns WHERE session_id = ? AND score IS NOT NULL "
                         "ORDER BY idx DESC LIMIT 1", (session_id,))
        session_score = 100.0 * last["score"] if last else None
        store.update("sessions", session_id, {"score": session_score, "updated_at": now_iso()})
        result = {"turn": turn_idx, "cid": cid, "met": met, "score": score, "delta": delta,
                  "session_score": session_score, "note": note, "by": who, "next_delta": next_delta}
        store.append_event(session_id, "verdict.overridden", result)
    from engine.interview.queries import session_metrics

    store.append_event(session_id, "metrics", session_metrics(store, session_id))
    return result


def _task_score(criteria: list[Any], met: dict[str, bool]) -> float:
    from engine.metrics.scoring import weighted_hit_score

    return weighted_hit_score([(c.weight, met.get(c.cid, False)) for c in criteria])[1]


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
