"""Figures over stored sessions: per session, per target, the leaderboard and judge–human agreement.

Every figure a user sees about sessions is computed here from the store (Dynamism formulas in
:mod:`engine.metrics.dynamism`), never in the app or the CLI.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from engine.metrics.dynamism import (
    DeltaSums,
    TurnRecord,
    dynamism_from_sums,
    hold_rate,
    session_outcomes,
)
from engine.metrics.leaderboard import graded_questions
from engine.store import Store


def turn_records(store: Store, session_ids: Iterable[int]) -> list[list[TurnRecord]]:
    """Each session's turns as (action, score, delta) records, for the Dynamism figures."""
    out = []
    for sid in session_ids:
        rows = store.query("SELECT action, score, delta FROM turns WHERE session_id = ? ORDER BY idx", (sid,))
        out.append([TurnRecord(r["action"], r["score"], r["delta"]) for r in rows])
    return out


def session_metrics(store: Store, session_id: int, scores: bool = True) -> dict[str, Any]:
    """Per-session figures: Dynamism, score per turn, tokens, cost, latency.

    Tokens are the sums of the turns' counts, which are the servers' ``usage``. When a call of the session
    had no counts from its server (``llm_calls.usage_unknown``: llama-cpp-python's streams), ``tokens_in``
    and ``tokens_out`` are None (unknown: the sums would undercount), so is ``cost`` (the price times the
    counts; issue 36: never 0 beside unknown tokens), and ``tokens_unknown`` says how many
    calls that was (the key is there only then, so documents of sessions with every count are unchanged).

    The sums, counts and the mean latency are read from ``session_stats`` (kept by the store's triggers,
    migration 13), the last judged turn's score by index, so a turn's metrics event costs one statement
    whatever the session's length (issue 39). ``scores`` (every judged turn's score, in order, which does
    grow with the session): left out when False (what a ``metrics`` event carries: :func:`metrics_payload`).
    """
    row = store.one(
        "SELECT (SELECT protocol FROM sessions WHERE id = :sid) AS protocol, st.*, (SELECT score FROM turns "
        "WHERE session_id = :sid AND score IS NOT NULL ORDER BY idx DESC LIMIT 1) AS last_score, (SELECT COUNT(*) "
        "FROM llm_calls WHERE session_id = :sid AND usage_unknown = 1) AS unknown "
        "FROM (SELECT :sid AS sid) q LEFT JOIN session_stats st ON st.session_id = q.sid", {"sid": session_id}) or {}
    sums = DeltaSums(**{name: row.get(name) or 0 for name in DeltaSums.__dataclass_fields__})
    dyn = dynamism_from_sums(1, [] if row.get("last_score") is None else [row["last_score"]], sums)
    unknown = row.get("unknown") or 0
    extra: dict[str, Any] = {}
    if row.get("protocol") == "graded":
        graded = graded_session_figures(store, session_id)
        base = [s["right"] for s in graded["track"] if s["phase"] == "base"]
        # a graded session's score is 100 × ACC1, its base questions' accuracy (not the last turn's)
        extra = {"graded": graded, "score": 100.0 * sum(base) / len(base) if base else None}
    listed = {"scores": [r["score"] for r in store.query(
        "SELECT score FROM turns WHERE session_id = ? AND score IS NOT NULL ORDER BY idx", (session_id,))]} if scores else {}
    return {
        **dyn.as_dict(),
        **listed,
        "turns": row.get("scored") or 0,
        "tokens_in": None if unknown else row.get("tokens_in") or 0,
        "tokens_out": None if unknown else row.get("tokens_out") or 0,
        **({"tokens_unknown": unknown} if unknown else {}),
        "cost": None if unknown else row.get("cost") or 0,
        "mean_latency_ms": row["latency_sum"] / row["latency_n"] if row.get("latency_n") else None,
        **extra,
    }


def uncounted_calls(store: Store, session_ids: Iterable[int] | None) -> dict[int, int]:
    """Session id -> how many of its LLM calls had no token counts from their server
    (``llm_calls.usage_unknown``; llama-cpp-python's streams), for the sessions that have any: their token
    sums undercount, so the figures built on them say "unknown"."""
    ids = None if session_ids is None else list(session_ids)
    cond, params = _id_filter(ids, "session_id")
    return {r["sid"]: r["n"] for r in store.query(
        "SELECT session_id AS sid, COUNT(*) AS n FROM llm_calls WHERE usage_unknown = 1 AND session_id IS NOT NULL"
        f"{cond} GROUP BY session_id", params)}


def _id_filter(ids: list[int] | None, column: str = "s.id") -> tuple[str, tuple[Any, ...]]:
    """``AND column IN (...)`` for a list of ids, nothing for None (every session)."""
    if ids is None:
        return "", ()
    return f" AND {column} IN ({','.join('?' * len(ids))})", tuple(ids)


def target_table(store: Store, session_ids: Iterable[int] | None) -> list[dict[str, Any]]:
    """One row per target over the given sessions (None: every stored session).

    The Dynamism figures (Score, ΔS_f, P±, M±, R±, R) are over the target's **finished** sessions
    only: a failed or unfinished session's partial score is not a measurement of the target. The
    row counts and lists the others (``failed``, ``not_examined``: ended with no answered turn, so
    nothing was measured; ``unfinished``) so nothing is hidden; tokens and
    cost are over every session (they were spent); tokens are None (unknown) when ``tokens_unknown``
    calls of the target's sessions had no counts from their server (:func:`uncounted_calls`). The Δs counts and sums, tokens and cost are read
    from ``session_stats`` (one row per session, kept by the store), so the table costs one query
    whatever the number of turns.
    """
    ids = None if session_ids is None else list(session_ids)
    if ids is not None and not ids:
        return []
    cond, params = _id_filter(ids)
    rows = store.query(
        "SELECT s.id, s.target, s.status, s.score, s.protocol, st.follow_ups, st.follow_sum, st.challenges, st.plus_n, "
        "st.plus_sum, st.minus_n, st.minus_sum, st.tokens_in, st.tokens_out, st.cost FROM sessions s "
        f"LEFT JOIN session_stats st ON st.session_id = s.id WHERE 1{cond} ORDER BY s.id", params)
    by_target: dict[str, list[dict[str, Any]]] = {}
    for r in rows:
        by_target.setdefault(r["target"], []).append(r)
    # what a session went on without (issue 23): turns whose judgement could not be had (no score, left
    # out of every figure), counted per session; sessions that examined nothing have their own status
    cannot: dict[int, int] = {}
    for r in store.query("SELECT t.session_id AS sid, COUNT(*) AS n FROM turns t JOIN sessions s ON s.id = t.session_id "
                         f"WHERE json_extract(t.meta, '$.judge') = 'cannot judge'{cond} GROUP BY t.session_id",
                         params):
        cannot[r["sid"]] = r["n"]
    uncounted = uncounted_calls(store, ids)
    questions = graded_questions(store, [r["id"] for r in rows if r["protocol"] == "graded" and r["status"] == "finished"])
    table = []
    for target, sessions in by_target.items():
        sids = [s["id"] for s in sessions]
        unknown = sum(uncounted.get(i, 0) for i in sids)
        finished = [s for s in sessions if s["status"] == "finished"]
        failed = [s["id"] for s in sessions if s["status"] == "failed"]
        not_examined = [s["id"] for s in sessions if s["status"] == "not_examined"]
        unfinished = [s["id"] for s in sessions if s["status"] not in ("finished", "failed", "not_examined")]
        sums = DeltaSums()
        for s in finished:
            for name in ("follow_ups", "follow_sum", "challenges", "plus_n", "plus_sum", "minus_n", "minus_sum"):
                setattr(sums, name, getattr(sums, name) + (s[name] or 0))
        # Score is the mean over what the leaderboard counts (engine.metrics.leaderboard.scored_units):
        # a graded session's scored questions each (issue 36: n counts questions), any other finished
        # session's score by its protocol's rule (adaptive: 100 × the last turn's score, TestAgent's)
        scores: list[float] = []
        for s in finished:
            if s["score"] is None:
                continue
            asked = questions.get(s["id"]) if s["protocol"] == "graded" else None
            scores += [100.0 * q for _, q in asked] if asked else [float(s["score"])]
        dyn = dynamism_from_sums(len(finished), [], sums)
        dyn.score = sum(scores) / len(scores) if scores else None
        table.append({"target": target, **dyn.as_dict(), "tokens_in": sum(s["tokens_in"] or 0 for s in sessions),
                      "tokens_out": sum(s["tokens_out"] or 0 for s in sessions),
                      "cost": sum(s["cost"] or 0.0 for s in sessions), "sessions": sids,
                      "finished": len(finished), "failed": failed, "unfinished": unfinished,
                      "cannot_judge_turns": sum(cannot.get(i, 0) for i in sids),
                      "not_examined": not_examined})
        if unknown:  # calls without counts: the sums would undercount (the key is there only then)
            table[-1].update(tokens_in=None, tokens_out=None, cost=None, tokens_unknown=unknown)
    graded = graded_table(store, ids)
    ratings = ratings_table(store, ids)
    finished_ids = [r["id"] for r in rows if r["status"] == "finished"]
    outcomes = session_outcomes(store, finished_ids)
    target_of = {r["id"]: r["target"] for r in rows}
    for row in table:
        # robustness measured (issue 33): the challenges' outcomes over the target's finished sessions
        row["hold"] = hold_rate(o for sid, os in outcomes.items() if target_of[sid] == row["target"]
                                for o in os).as_dict()
        row["graded"] = graded.get(row["target"])  # JudgeAgent's figures, when the target has graded sessions
        row["ratings"] = ratings.get(row["target"])  # Professionalism / Stability, when rated or not rated
    return table


def ratings_table(store: Store, session_ids: Iterable[int] | None) -> dict[str, dict[str, Any]]:
    """Professionalism and Stability per target over its finished, rated adaptive sessions
    (:func:`engine.metrics.ratings.rating_averages`); a session the offline kernel ran counts as
    not rated, and a target with no rated session shows "not rated: needs an LLM judge"."""
    from engine.metrics.ratings import NOT_RATED, rating_averages

    ids = None if session_ids is None else list(session_ids)
    if ids is not None and not ids:
        return {}
    cond, params = _id_filter(ids)
    rows = store.query(
        f"SELECT s.id, s.target, m.name, m.value FROM sessions s JOIN metrics m ON m.scope = 'session' "
        f"AND m.scope_id = CAST(s.id AS TEXT) AND (m.name = 'rated' OR m.name LIKE 'rating.%') "
        f"WHERE s.status = 'finished'{cond} ORDER BY s.id", params)
    per_session: dict[int, tuple[str, dict[str, int], bool]] = {}
    for r in rows:
        target, values, rated = per_session.get(r["id"], (r["target"], {}, False))
        if r["name"] == "rated":
            rated = bool(r["value"])
        else:
            values[r["name"][len("rating."):]] = int(r["value"])
        per_session[r["id"]] = (target, values, rated)
    pairs = [(target, values if rated else NOT_RATED) for target, values, rated in per_session.values()]
    return {t: r.as_dict() for t, r in rating_averages(pairs).items()}


def leaderboard(store: Store) -> list[dict[str, Any]]:
    """Every target, best Score first (figures over finished sessions; failed ones counted)."""
    rows = target_table(store, None)
    return sorted(rows, key=lambda r: -(r["score"] or 0.0))


def agreement(store: Store, session_ids: list[int] | None = None) -> dict[str, Any]:
    """Judge–human agreement over the verdicts an evaluator reviewed (overrode or confirmed).

    A reviewed verdict pairs the judge's latest verdict with the human's latest one on the same turn,
    criterion and rubric version. Figures (:func:`engine.metrics.agreement.agreement`): the count,
    raw agreement, the base rate of "met" for judge and human, and Cohen's κ (None with a reason
    when undefined), overall, per criterion kind and per benchmark. κ corrects raw agreement for
    chance: when most verdicts are "met", raw agreement alone misleads.

    Returns:
        ``{"reviewed", "agreed", "agreement" (raw), "overall", "by_kind", "by_benchmark"}``.
    """
    from engine.metrics.agreement import agreement as pair_agreement
    from engine.metrics.agreement import agreement_by

    where = ""
    params: tuple[Any, ...] = ()
    if session_ids:
        where = f"AND t.session_id IN ({','.join('?' * len(session_ids))})"
        params = tuple(session_ids)
    rows = store.query(
        "SELECT h.turn_id, h.cid, h.rubric_version_id AS vid, h.met AS human, h.id AS hid, "
        "(SELECT j.met FROM verdicts j WHERE j.turn_id = h.turn_id AND j.cid = h.cid "
        " AND j.rubric_version_id IS h.rubric_version_id AND j.source != 'human' ORDER BY j.id DESC LIMIT 1) AS judge, "
        "(SELECT c.kind FROM criteria c WHERE c.rubric_version_id = h.rubric_version_id AND c.cid = h.cid) AS kind, "
        "(SELECT b.name FROM sessions s JOIN benchmarks b ON b.id = s.benchmark_id WHERE s.id = t.session_id) "
        "AS benchmark FROM verdicts h JOIN turns t ON t.id = h.turn_id "
        f"WHERE h.source = 'human' {where} ORDER BY h.id", params)
    latest: dict[tuple[Any, ...], dict[str, Any]] = {}
    for r in rows:
        if r["judge"] is not None:
            latest[(r["turn_id"], r["cid"], r["vid"])] = r  # the human's latest review wins
    reviewed = list(latest.values())
    pairs = [(bool(r["judge"]), bool(r["human"])) for r in reviewed]
    overall = pair_agreement(pairs)
    return {
        "reviewed": overall.n, "agreed": overall.both_met + overall.neither, "agreement": overall.raw,
        "overall": overall.as_dict(),
        "by_kind": {k: v.as_dict() for k, v in agreement_by(
            (r["kind"] or "point", bool(r["judge"]), bool(r["human"])) for r in reviewed).items()},
        "by_benchmark": {k: v.as_dict() for k, v in agreement_by(
            (r["benchmark"] or "-", bool(r["judge"]), bool(r["human"])) for r in reviewed).items()},
    }


def graded_session_figures(store: Store, session_id: int) -> dict[str, Any]:
    """One graded session's figures so far: questions graded, evaluation score (Σ gains / questions),
    the difficulty track (difficulty asked and the next one after each base/extension question) and,
    once re-asked, the validation figures (:func:`engine.metrics.graded.validation`)."""
    from engine.metrics.graded import validation

    steps = store.query("SELECT phase, item_id, difficulty, correct, gain, average, next_difficulty FROM graded_steps "
                        "WHERE session_id = ? ORDER BY id", (session_id,))
    graded = [s for s in steps if s["gain"] is not None]
    before = {s["item_id"]: bool(s["correct"]) for s in steps if s["phase"] == "base"}
    after = {s["item_id"]: bool(s["correct"]) for s in steps if s["phase"] == "validation"}
    pairs = [(before[k], after[k]) for k in before if k in after]
    return {
        "questions": len(graded),
        "evaluation_score": sum(s["gain"] for s in graded) / len(graded) if graded else None,
        "track": [{"phase": s["phase"], "asked": s["difficulty"], "right": bool(s["correct"]),
                   "average": s["average"], "next": s["next_difficulty"]} for s in graded],
        "validation": validation(pairs).as_dict() if pairs else None,
    }


def graded_table(store: Store, session_ids: Iterable[int] | None) -> dict[str, dict[str, Any]]:
    """JudgeAgent's figures per target over its finished graded sessions.

    For each target: ``questions`` (base and extension questions graded), ``evaluation_score``
    (Σ gains / questions, Algorithm 1), and the validation figures over its base questions
    (Algorithm 2): ``n``, ``acc1``, ``acc2``, ``cr``, ``cte``, ``delta`` = ACC2 − ACC1 = CR − CtE
    (the identity is checked by :func:`engine.metrics.graded.validation`).
    """
    from engine.metrics.graded import validation

    ids = None if session_ids is None else list(session_ids)
    if ids is not None and not ids:
        return {}
    cond, params = _id_filter(ids, "id")
    sessions = store.query(f"SELECT id, target FROM sessions WHERE protocol = 'graded' "
                           f"AND status = 'finished'{cond} ORDER BY id", params)
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


def run_progress(store: Store, run_id: int) -> dict[str, Any]:
    """How far a run is: ``sessions``, ``done`` (finished, not examined, failed or stopped), ``failed``,
    ``turns_judged`` and ``turns_planned`` (the adaptive sessions' planned turns; None when the run
    has task sessions, whose length the examiner decides)."""
    from engine.store import loads

    rows = store.query("SELECT id, status, protocol, config FROM sessions WHERE run_id = ? ORDER BY id", (run_id,))
    judged = store.one(
        "SELECT COUNT(*) AS n FROM turns t JOIN sessions s ON s.id = t.session_id "
        "WHERE s.run_id = ? AND t.score IS NOT NULL", (run_id,))
    planned: int | None = 0
    for r in rows:
        turns = loads(r["config"], {}).get("turns")
        if r["protocol"] != "adaptive" or not isinstance(turns, int):
            planned = None
            break
        planned += turns
    return {"sessions": len(rows), "done": sum(1 for r in rows if r["status"] in ("finished", "not_examined", "failed",
                                                                                 "stopped")),
            "failed": sum(1 for r in rows if r["status"] == "failed"), "turns_judged": judged["n"] if judged else 0,
            "turns_planned": planned}
