"""Scoring under human overrides: an override is a fact about the criterion from its turn on.

A turn's verdict on a criterion says whether the running summary *so far* covers it, so a human who
marks c1 met on turn 0 has said something about every later turn too: what was covered stays
covered. The rule (per criterion, over the turns in order that score with the same rubric version):

1. a turn with a human verdict on the criterion takes the human's latest one;
2. a later turn without one keeps the human's verdict (it is *carried*) as long as the judge's verdict
   on that turn is the same as the judge's verdict on the overridden turn: the judge has not changed
   its mind since the human corrected it;
3. when the judge's verdict differs from that (a later judgement) or another rubric version is in
   force, the carried verdict ends and the judge's verdict counts again, until the next override.

Every turn score is then recomputed with the protocol's rule from its effective verdicts, every Δs
(s_t − s_{t−1}) from those scores, and the session's score from the last one; the Dynamism figures
(ΔS_f, P±, M±, R±, R) follow from the turns' Δs (``session_stats`` is kept by the store's triggers).
Without this, an early override raised one turn's score and left the next ones at the judge's
figures: ΔS_f went negative and the Score did not move (issue 25).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any


@dataclass
class TurnVerdicts:
    """One turn's verdicts as stored: the judge's latest per criterion and the human's latest."""

    idx: int
    version: int | None
    judge: dict[str, bool] = field(default_factory=dict)
    human: dict[str, bool] = field(default_factory=dict)


@dataclass
class Effective:
    """A turn's effective verdicts and which of them a human gave on an earlier turn."""

    idx: int
    met: dict[str, bool]
    carried: dict[str, int]
    """criterion id -> the turn whose override it carries."""


def effective_verdicts_by_turn(turns: Sequence[TurnVerdicts]) -> list[Effective]:
    """The effective verdicts of every turn under the rule of this module (turns in order)."""
    out: list[Effective] = []
    # cid -> (human verdict, judge's verdict on the overridden turn, overridden turn, version)
    carried: dict[str, tuple[bool, bool | None, int, int | None]] = {}
    for t in turns:
        met: dict[str, bool] = {}
        from_turn: dict[str, int] = {}
        for cid in dict.fromkeys([*t.judge, *t.human, *carried]):
            judge = t.judge.get(cid)
            if cid in t.human:
                met[cid] = t.human[cid]
                carried[cid] = (t.human[cid], judge, t.idx, t.version)
                continue
            held = carried.get(cid)
            if held is not None and held[3] == t.version and judge == held[1]:
                met[cid] = held[0]
                if held[0] != bool(judge):
                    from_turn[cid] = held[2]
                continue
            carried.pop(cid, None)
            if judge is not None:
                met[cid] = judge
        out.append(Effective(t.idx, met, from_turn))
    return out


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
    carried under the rule of this module (the judge's own verdicts when nobody overrode anything)."""
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
