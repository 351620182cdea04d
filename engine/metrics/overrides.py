"""Scoring under human overrides: the stored scores recomputed under the rule of
:mod:`engine.events.overrides` (an override is a fact about the criterion from its turn on; a later turn
keeps it until the judge changes its mind or another rubric version is in force).

Every turn score is then recomputed with the protocol's rule from its effective verdicts, every Δs
(s_t − s_{t−1}) from those scores, and the session's score from the last one; the Dynamism figures
(ΔS_f, P±, M±, R±, R) follow from the turns' Δs (``session_stats`` is kept by the store's triggers).
Without this, an early override raised one turn's score and left the next ones at the judge's
figures: ΔS_f went negative and the Score did not move (issue 25).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from engine.events.overrides import TurnVerdicts, effective_verdicts_by_turn


def turn_verdicts(store: Any, session_id: int) -> list[tuple[dict[str, Any], TurnVerdicts]]:
    """Each judged turn's row and its stored verdicts (under the turn's rubric version), in order."""
    turns = store.query("SELECT id, idx, score, delta, rubric_version_id FROM turns WHERE session_id = ? "
                        "ORDER BY idx", (session_id,))
    rows = store.query("SELECT v.turn_id, v.cid, v.met, v.source FROM verdicts v JOIN turns t ON t.id = v.turn_id "
                       "WHERE t.session_id = ? AND v.rubric_version_id IS t.rubric_version_id ORDER BY v.id",
                       (session_id,))
    by_turn: dict[int, TurnVerdicts] = {t["id"]: TurnVerdicts(t["idx"], t["rubric_version_id"]) for t in turns}
    for r in rows:
        tv = by_turn[r["turn_id"]]
        (tv.human if r["source"] == "human" else tv.judge)[r["cid"]] = bool(r["met"])
    return [(t, by_turn[t["id"]]) for t in turns]


def project(pairs: Sequence[tuple[dict[str, Any], TurnVerdicts]], protocol: Any, criteria_of: Any,
            session_score: Any) -> dict[str, Any]:
    """Every judged turn's score and Δs and the session's score from the effective verdicts of
    ``pairs`` (as :func:`turn_verdicts` returns them), without writing anything.

    Returns:
        ``{"turns": [{"turn", "score", "delta", "carried", "met", "id", "changed"}...] (every judged turn),
        "session_score"}``; ``changed`` says whether the stored score or Δs differ.
    """
    effective = {e.idx: e for e in effective_verdicts_by_turn([tv for _, tv in pairs])}
    prev: float | None = None
    out: list[dict[str, Any]] = []
    scores: list[float | None] = []
    for row, tv in pairs:
        if row["score"] is None:  # not judged (yet): nothing to recompute, and no Δs after it
            scores.append(None)
            prev = None
            continue
        e = effective[tv.idx]
        score = protocol.score(criteria_of(tv.version), e.met)
        delta = (None if prev is None else score - prev) if protocol.scored_per_turn else row["delta"]
        out.append({"turn": tv.idx, "score": score, "delta": delta, "met": dict(e.met), "id": row["id"],
                    "changed": score != row["score"] or delta != row["delta"],
                    "carried": {cid: {"met": e.met[cid], "from": src} for cid, src in e.carried.items()}})
        scores.append(score)
        prev = score
    return {"turns": out, "session_score": session_score(scores)}


def rescore(store: Any, session_id: int, protocol: Any, criteria_of: Any,
            session_score: Any) -> dict[str, Any]:
    """Recompute every judged turn's score and Δs and the session's score from the effective
    verdicts; write only what changed (call inside the caller's transaction).

    Args:
        protocol: the session's protocol class (``score(criteria, met)``, ``scored_per_turn``).
        criteria_of: rubric version id -> its criteria.
        session_score: turn scores in order -> the session's score.

    Returns:
        ``{"turns": [{"turn", "score", "delta", "carried"}...] (every judged turn), "session_score"}``.
    """
    figures = project(turn_verdicts(store, session_id), protocol, criteria_of, session_score)
    out = []
    for t in figures["turns"]:
        if t["changed"]:
            store.update("turns", t["id"], {"score": t["score"], "delta": t["delta"]})
        out.append({k: t[k] for k in ("turn", "score", "delta", "carried")})
    return {"turns": out, "session_score": figures["session_score"]}


def preview(store: Any, session_id: int, turn_idx: int, cid: str, met: bool, protocol: Any, criteria_of: Any,
            session_score: Any) -> dict[str, Any]:
    """What an override of ``cid`` on ``turn_idx`` to ``met`` would do, computed and not written.

    Returns:
        ``{"before": {"met", "turn_score", "session_score"}, "after": {...}, "carried_to": [turns]}``:
        the effective verdict, the turn's score and the session's score now and after the override,
        and the later turns the new verdict would be carried to.
    """
    pairs = turn_verdicts(store, session_id)
    now = project(pairs, protocol, criteria_of, session_score)
    changed = []
    for row, tv in pairs:
        if tv.idx == turn_idx:
            tv = TurnVerdicts(tv.idx, tv.version, dict(tv.judge), {**tv.human, cid: met})
        changed.append((row, tv))
    then = project(changed, protocol, criteria_of, session_score)

    def side(fig: dict[str, Any]) -> dict[str, Any]:
        turn = next((t for t in fig["turns"] if t["turn"] == turn_idx), None)
        return {"met": None if turn is None else turn["met"].get(cid),
                "turn_score": None if turn is None else turn["score"], "session_score": fig["session_score"]}

    carried_to = [t["turn"] for t in then["turns"] if t["turn"] > turn_idx and cid in t["carried"]
                  and t["carried"][cid]["from"] == turn_idx]
    return {"before": side(now), "after": side(then), "carried_to": carried_to}


def carried_met(store: Any, session_id: int, turn_idx: int, version_id: int | None,
                judge_met: dict[str, bool]) -> dict[str, bool]:
    """The verdicts a newly judged turn scores with: the judge's, with the overrides of earlier turns
    carried under the rule of :mod:`engine.events.overrides` (the judge's own verdicts when nobody
    overrode anything)."""
    if store.one("SELECT 1 AS x FROM verdicts v JOIN turns t ON t.id = v.turn_id WHERE t.session_id = ? "
                 "AND v.source = 'human' LIMIT 1", (session_id,)) is None:
        return judge_met
    earlier = [tv for row, tv in turn_verdicts(store, session_id) if tv.idx < turn_idx and row["score"] is not None]
    effective = effective_verdicts_by_turn([*earlier, TurnVerdicts(turn_idx, version_id, dict(judge_met))])
    return {**judge_met, **effective[-1].met}


def carried_verdicts(store: Any, session_id: int) -> dict[int, dict[str, tuple[bool, int]]]:
    """Turn index -> criterion id -> (met, the turn whose override it carries), for the turns where a
    carried human verdict differs from the judge's own (empty when nobody overrode anything)."""
    if store.one("SELECT 1 AS x FROM verdicts v JOIN turns t ON t.id = v.turn_id WHERE t.session_id = ? "
                 "AND v.source = 'human' LIMIT 1", (session_id,)) is None:
        return {}
    pairs = [tv for row, tv in turn_verdicts(store, session_id) if row["score"] is not None]
    return {e.idx: {cid: (e.met[cid], src) for cid, src in e.carried.items()}
            for e in effective_verdicts_by_turn(pairs) if e.carried}
