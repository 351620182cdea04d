"""The report model: one structure per report, rendered to Markdown, JSON, CSV and HTML.

A :class:`Report` is a title, a list of sections and the JSON document. Sections are typed:

- :class:`Figures`: ``(label, value, note)`` rows (a new figure is one more :class:`Row`);
- :class:`Table`: columns and rows;
- :class:`LineChart` and :class:`BarChart`: what the HTML page draws as inline SVG (Markdown and
  CSV show the same numbers as tables);
- :class:`Transcript`: each turn's question and answer.

The builders here only *gather*: every figure comes from :mod:`engine.metrics` (session metrics,
target tables, the topic table, criterion rates, judge–human agreement, ratings, graded and rubric
boards) or is a stored value (scores,
tokens, verdicts, override events, rubric versions). Nothing here computes a figure.

JSON documents are versioned. ``viva-session`` version 2 keeps every version-1 field in its order
(``format, version, session, item, rubric, turns, metrics``, then ``rubric_judgement`` for a
rubric-protocol session); it adds to each verdict ``at`` (when written) and, for a human verdict,
``by`` and ``note``; and appends ``rubric_history``, ``overrides``, ``criteria``, ``agreement``
(:func:`engine.metrics.sessions.agreement`), ``ratings`` (None unless the session was rated) and
``figures`` (each :class:`Figures` section's rows); ``chance`` (issue 36: the Score against chance when the
session's questions are multiple choice, :func:`engine.metrics.leaderboard.session_chance`; else None) comes
between ``ratings`` and ``figures``, then ``notes`` (the session's ``session.note`` events: ``turn``, ``what``,
``text``; the key is there only when the session has any, so a document without notes is unchanged). ``viva-run`` version 1 holds ``run, sessions,
totals, leaderboard, topics, agreement, rubrics``, ``rubric_board`` (SedarEval's per-category
board, empty without rubric sessions) and ``figures``; ``board``'s rows also carry ``ability`` (the ability
on the benchmark's item calibration, :mod:`engine.metrics.leaderboard`; ``value`` None when not calibrated).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from engine.metrics.agreement import MIN_READ_N, kappa_text
from engine.metrics.chance import read_note
from engine.store import Store, loads

SESSION_FORMAT = "viva-session"
SESSION_VERSION = 2
RUN_FORMAT = "viva-run"
RUN_VERSION = 1


@dataclass
class Row:
    """One figure: its label, its value (a number, text, bool or None) and what it means.

    ``fmt`` is a format spec for numbers (``".1f"``); empty means the renderer's default.
    """

    label: str
    value: Any
    note: str = ""
    fmt: str = ""

    def as_dict(self) -> dict[str, Any]:
        """``{"label", "value", "note"}`` for the JSON document."""
        return {"label": self.label, "value": self.value, "note": self.note}


@dataclass
class Figures:
    """A section of ``(label, value, note)`` rows."""

    id: str
    title: str
    rows: list[Row]
    note: str = ""


@dataclass
class Table:
    """A section of rows under named columns; ``formats`` (one per column, may be empty) are
    format specs for numbers."""

    id: str
    title: str
    columns: list[str]
    rows: list[list[Any]]
    formats: list[str] = field(default_factory=list)
    note: str = ""

    def fmt(self, i: int) -> str:
        """The format spec of column ``i``."""
        return self.formats[i] if i < len(self.formats) else ""


@dataclass
class Point:
    """One point of a line chart: its x label, its value (None: not judged), its category (the
    turn's action, drawn as the point's colour) and a hover text."""

    x: str
    y: float | None
    category: str = ""
    tip: str = ""


@dataclass
class LineChart:
    """A line over ordered points on a fixed y range."""

    id: str
    title: str
    x_label: str
    y_label: str
    points: list[Point]
    y_min: float = 0.0
    y_max: float = 1.0
    note: str = ""


@dataclass
class BarChart:
    """Horizontal bars: one group per label, one bar per series in each group.

    ``values[g][s]`` is group ``g``'s value for series ``s`` (None: no value); bars are drawn on
    ``[0, v_max]`` (``v_max`` None: the largest value). ``notes[g]`` is shown beside group ``g``.
    """

    id: str
    title: str
    groups: list[str]
    series: list[str]
    values: list[list[float | None]]
    v_max: float | None = None
    fmt: str = ".2f"
    notes: list[str] = field(default_factory=list)
    note: str = ""


@dataclass
class TurnText:
    """One turn of a transcript."""

    idx: int
    heading: str
    question: str
    answer: str | None
    meta: str = ""


@dataclass
class Transcript:
    """Every turn's question and answer."""

    id: str
    title: str
    turns: list[TurnText]


Section = Figures | Table | LineChart | BarChart | Transcript


@dataclass
class Report:
    """A report: title, subtitle, sections in order, the table written as CSV, the JSON document."""

    kind: str
    title: str
    subtitle: str
    sections: list[Section]
    csv: Table
    data: dict[str, Any]

    def section(self, section_id: str) -> Section:
        """The section with this id (KeyError when absent)."""
        for s in self.sections:
            if s.id == section_id:
                return s
        raise KeyError(section_id)

    def document(self) -> dict[str, Any]:
        """The JSON document: :attr:`data` with ``figures`` (section id -> rows) appended."""
        figures = {s.id: [r.as_dict() for r in s.rows] for s in self.sections if isinstance(s, Figures)}
        return {**self.data, "figures": figures}


# -- helpers ------------------------------------------------------------------------------------
UNKNOWN = "unknown"
"""What a token count or cost shows when a call's server sent no counts (never 0)."""


def _usage(turn: dict[str, Any]) -> list[Any]:
    """A turn's tokens in, tokens out and cost for a table: "unknown" where the document has None."""
    return [UNKNOWN if turn[k] is None else turn[k] for k in ("tokens_in", "tokens_out", "cost")]


def _iso(ts: float | None) -> str | None:
    """An event timestamp (epoch seconds) as ISO 8601 UTC to the second."""
    if ts is None:
        return None
    return datetime.fromtimestamp(ts, tz=UTC).isoformat(timespec="seconds")


def _day(text: str | None) -> str:
    """An ISO timestamp shortened to ``YYYY-MM-DD HH:MM:SS`` (UTC as stored)."""
    return "" if not text else str(text)[:19].replace("T", " ")


def _held(hold: dict[str, Any] | None) -> str:
    """``0.83 = 5/6 [0.44, 0.97]`` (the hold rate, kept / tested, the Wilson 95% interval), or "none tested"."""
    if not hold or not hold.get("tested"):
        return "none tested"
    lo, hi = hold["ci"]
    return f"{hold['rate']:.2f} = {hold['kept']}/{hold['tested']} [{lo:.2f}, {hi:.2f}]"


def dynamism_rows(m: dict[str, Any]) -> list[Row]:
    """The Dynamism figures (of :func:`engine.metrics.dynamism.dynamism`) as rows, with meanings."""
    return [
        Row("Score", m.get("score"), "100 × mean last-turn score s_T over finished conversations", ".1f"),
        Row("ΔS_f", m.get("delta_follow_up"), f"mean Δs over {m.get('follow_ups', 0)} follow-up turns", "+.3f"),
        Row("challenges", m.get("challenges"), "challenge turns with a Δs"),
        Row("P+", m.get("p_plus"), "share of challenges with Δs > 0", ".2f"),
        Row("M+", m.get("m_plus"), "mean Δs among them", ".3f"),
        Row("P−", m.get("p_minus"), "share of challenges with Δs < 0", ".2f"),
        Row("M−", m.get("m_minus"), "mean |Δs| among them", ".3f"),
        Row("P0", m.get("p_zero"), "share of challenges with Δs = 0", ".2f"),
        Row("R+", m.get("r_plus"), "P+ · M+", ".3f"),
        Row("R−", m.get("r_minus"), "P− · M−", ".3f"),
        Row("R", m.get("r"), "R+ − R− (robustness under challenge)", "+.3f"),
    ]


def agreement_rows(a: dict[str, Any]) -> list[Row]:
    """Judge–human agreement (the ``overall`` figures of :func:`engine.metrics.sessions.agreement`)
    as rows."""
    return [
        Row("reviewed verdicts", a["n"], "verdicts a human confirmed or overrode"
            + (f"; {read_note(a['n'], 'verdict(s)')}" if a["n"] and read_note(a["n"]) else "")),
        Row("raw agreement", a["raw"], "share where the human kept the judge's verdict"
            + ("; too few to read" if a["n"] and read_note(a["n"]) else ""), ".2f"),
        Row("Cohen's κ", None if a.get("kappa_too_few") else a["kappa"],
            a["kappa_note"] or (kappa_text(a) if a.get("kappa_too_few")
                                else "agreement beyond chance (1 = perfect, 0 = chance)"), ".2f"),
        Row("judge 'met' rate", a["judge_met_rate"], "base rate of the judge", ".2f"),
        Row("human 'met' rate", a["human_met_rate"], "base rate of the human", ".2f"),
        Row("2×2 table", f"{a['both_met']} / {a['judge_only']} / {a['human_only']} / {a['neither']}",
            "both met / judge only / human only / neither"),
    ]


def versions_table(versions: list[Any], in_use: set[int], current_id: int | None, note: str) -> Table:
    """The rubric's versions, oldest first: version, author, when, note, criteria, marks."""
    by_id = {v.id: v.version for v in versions}
    rows = []
    for v in versions:
        marks = [m for m, on in (("current", v.id == current_id), ("used here", v.id in in_use)) if on]
        rows.append([v.version, v.id, by_id.get(v.parent_id, None), v.author, _day(v.created_at), len(v.criteria),
                     ", ".join(marks), v.note])
    return Table("rubric-history", "Rubric versions", ["version", "id", "from", "author", "written (UTC)",
                                                       "criteria", "marks", "note"], rows, note=note)


def agreement_groups(a: dict[str, Any]) -> Table:
    """Agreement per criterion kind and per benchmark (of :func:`engine.metrics.sessions.agreement`)."""
    rows = [[f"{label}: {key}", g["n"], g["raw"], None if g.get("kappa_too_few") else g["kappa"],
             g["kappa_note"] or (kappa_text(g) if g.get("kappa_too_few") else "")]
            for label, groups in (("kind", a.get("by_kind") or {}), ("benchmark", a.get("by_benchmark") or {}))
            for key, g in groups.items()]
    return Table("agreement-groups", "Agreement by criterion kind and benchmark",
                 ["group", "reviewed", "raw", "κ", "note"], rows, ["", "", ".2f", ".2f", ""])


RATING_ROWS = (("Professionalism", "professionalism", "mean of accuracy, user satisfaction and clarity"),
               ("accuracy", "accuracy", ""), ("user satisfaction", "user_satisfaction", ""),
               ("clarity", "clarity", ""),
               ("Stability", "stability", "mean of coherence, question handling and challenge handling"),
               ("coherence", "coherence", ""), ("question handling", "question_handling", ""),
               ("challenge handling", "challenge_handling", ""))
"""(label, key, note) of the Professionalism and Stability figures (:mod:`engine.metrics.ratings`)."""


def rating_rows(r: dict[str, Any]) -> list[Row]:
    """One target's (or session's) ratings (:meth:`engine.metrics.ratings.TargetRatings.as_dict`)."""
    rows = [Row("conversations rated", r["rated"], f"{r['not_rated']} not rated (the offline kernel does not rate)")]
    return rows + [Row(label, r[key], note or "the judge's 1–10 rating", ".1f") for label, key, note in RATING_ROWS]


def unrated_figures(not_rated: int) -> Figures:
    """The ratings section when no conversation was rated (an offline run: the offline kernel does not
    rate): one row saying "needs an LLM judge" once, instead of eight rows (or columns) that all say so."""
    return Figures("ratings", "Professionalism and Stability",
                   [Row("Professionalism and Stability", "needs an LLM judge",
                        f"{not_rated} conversation(s) not rated: the offline kernel does not rate")],
                   note="the judge's 1–10 ratings of whole conversations need an LLM kernel")


def graded_rows(g: dict[str, Any]) -> list[Row]:
    """A graded session's figures (``graded`` of :func:`engine.metrics.sessions.session_metrics`)."""
    v = g.get("validation") or {}
    return [
        Row("questions graded", g["questions"], "base and extension questions"),
        Row("evaluation score", g["evaluation_score"], "Σ gains / questions (JudgeAgent, Algorithm 1)", ".3f"),
        Row("re-answered", v.get("n"), "base questions asked again after the feedback"),
        Row("ACC1", v.get("acc1"), "accuracy before the feedback", ".2f"),
        Row("ACC2", v.get("acc2"), "accuracy after it", ".2f"),
        Row("CR", v.get("cr"), "share corrected (wrong, then right)", ".2f"),
        Row("CtE", v.get("cte"), "share broken (right, then wrong)", ".2f"),
        Row("Δ", v.get("delta"), "ACC2 − ACC1 = CR − CtE", "+.2f"),
    ]


def judgement_rows(j: dict[str, Any]) -> list[Row]:
    """A rubric session's 0–5 judgement (:func:`engine.metrics.rubric_board.session_judgement`)."""
    how = "offline estimate by point coverage (no LLM)" if j.get("offline_estimate") else "by the LLM judge"
    return [
        Row("score", j.get("score"), f"out of {j.get('max_score', 5):g}; {how}", "g"),
        Row("status", j.get("status")),
        Row("judge replies read", j.get("attempts"), "; ".join(j.get("problems") or []) or "first ask and re-asks"),
        Row("prompt", j.get("prompt_source") or None, "auto_prompt: the item's own; rubric: built from the rubric; "
            "coverage: the offline estimate"),
        Row("reasoning", (j.get("reasoning") or "").strip() or None, "the judge's scoring process"),
    ]

# -- the session report ---------------------------------------------------------------------------
def _overrides(store: Store, session_id: int) -> tuple[list[dict[str, Any]], dict[int, dict[str, Any]]]:
    """The session's override events in order, and human verdict row id -> its event.

    The k-th human verdict row on (turn, criterion) and the k-th ``verdict.overridden`` event on
    (turn, criterion) are written in one transaction, so they are matched by that order.
    """
    from engine.events import VERDICT_OVERRIDDEN

    events = []
    for e in store.query("SELECT seq, ts, payload FROM events WHERE session_id = ? AND kind = ? ORDER BY seq",
                         (session_id, VERDICT_OVERRIDDEN)):
        p = loads(e["payload"], {})
        events.append({"turn": p.get("turn"), "cid": p.get("cid"), "met": bool(p.get("met")),
                       "by": p.get("by", "human"), "note": p.get("note", ""), "at": _iso(e["ts"]),
                       "turn_score": p.get("score"), "session_score": p.get("session_score")})
    queue: dict[tuple[Any, Any], list[dict[str, Any]]] = {}
    for e in events:
        queue.setdefault((e["turn"], e["cid"]), []).append(e)
    matched: dict[int, dict[str, Any]] = {}
    for r in store.query("SELECT v.id, t.idx, v.cid FROM verdicts v JOIN turns t ON t.id = v.turn_id "
                         "WHERE t.session_id = ? AND v.source = 'human' ORDER BY v.id", (session_id,)):
        pending = queue.get((r["idx"], r["cid"]))
        if pending:
            matched[r["id"]] = pending.pop(0)
    return events, matched


def _verdict(v: dict[str, Any], matched: dict[int, dict[str, Any]]) -> dict[str, Any]:
    out = {"cid": v["cid"], "met": bool(v["met"]), "source": v["source"], "rationale": v["rationale"]}
    if "original" in v:
        out["original_met"] = bool(v["original"]["met"])
    out["at"] = v.get("created_at")
    if v["source"] == "human":
        event = matched.get(v["id"], {})
        out["by"] = event.get("by", "human")
        out["note"] = event.get("note", v["rationale"])
    return out


def session_document(store: Store, session_id: int) -> dict[str, Any]:
    """The ``viva-session`` JSON document (version :data:`SESSION_VERSION`)."""
    from engine.bench.items import get_item
    from engine.bench.rubric import get_version, has_rubric, list_versions
    from engine.interview.queries import session_detail
    from engine.metrics.breakdown import criterion_rates
    from engine.metrics.leaderboard import session_chance
    from engine.metrics.rubric_board import session_judgement
    from engine.metrics.sessions import agreement, ratings_table

    detail = session_detail(store, session_id)
    s = detail["session"]
    item = get_item(store, s["item_id"]) if s["item_id"] else None
    events, matched = _overrides(store, session_id)
    # a call of the session had no token counts from its server: which turn it belonged to is not on record,
    # so every turn's tokens and cost are unknown (None), as the session's are (issue 36: never 0 beside it)
    unknown = bool(detail["metrics"].get("tokens_unknown"))
    turns = []
    for t in detail["turns"]:
        turns.append({
            "idx": t["idx"], "action": t["action"], "actor": t["actor"], "question": t["question"],
            "answer": t["answer"], "score": t["score"], "delta": t["delta"], "cos": t["cos"],
            "state": loads(t["state"]), "probs": loads(t["probs"]), "summary": t["summary"],
            "rubric_version_id": t["rubric_version_id"], "latency_ms": t["latency_ms"],
            "tokens_in": None if unknown else t["tokens_in"], "tokens_out": None if unknown else t["tokens_out"],
            "cost": None if unknown else t["cost"],
            "verdicts": [_verdict(v, matched) for v in t["verdicts"].values()],
        })
    current = get_version(store, s["rubric_version_id"]) if s["rubric_version_id"] else None
    judgement = session_judgement(store, session_id) if s["protocol"] == "rubric" else None
    history = list_versions(store, item.id) if item is not None and has_rubric(store, item.id) else []
    notes = session_notes(store, session_id)
    item_current = None
    if item is not None and history:
        from engine.bench.rubric import current_rubric

        item_current = current_rubric(store, item.id).id
    return {
        "format": SESSION_FORMAT, "version": SESSION_VERSION,
        "session": {"id": s["id"], "status": s["status"], "protocol": s["protocol"], "target": s["target"],
                    "kernel": s["kernel"], "policy": s["policy"], "policy_version": s["policy_version"],
                    "seed": s["seed"], "score": s["score"], "created_at": s["created_at"], "run_id": s["run_id"]},
        "item": None if item is None else {"id": item.id, "benchmark": item.benchmark, "topic": item.topic,
                                           "question": item.question, "reference": item.reference},
        "rubric": None if current is None else {
            "version_id": current.id, "version": current.version, "author": current.author,
            "criteria": [{"cid": c.cid, "text": c.text, "kind": c.kind, "weight": c.weight} for c in current.criteria]},
        "turns": turns,
        "metrics": detail["metrics"],
        **({"rubric_judgement": judgement} if judgement is not None else {}),
        "rubric_history": [{"version_id": v.id, "version": v.version, "parent_id": v.parent_id, "author": v.author,
                            "note": v.note, "created_at": v.created_at, "criteria": len(v.criteria),
                            "current": v.id == item_current} for v in history],
        "overrides": events,
        "criteria": criterion_rates(store, session_id, lambda v: get_version(store, v).criteria),
        "agreement": agreement(store, [session_id]),
        "ratings": ratings_table(store, [session_id]).get(s["target"]),
        "chance": session_chance(store, session_id),
        **({"notes": notes} if notes else {}),
    }


def session_notes(store: Store, session_id: int) -> list[dict[str, Any]]:
    """The session's ``session.note`` events in the order written (``turn``, ``what``, ``text``): what it went on
    without because a model's reply was unusable (a question the offline kernel asked instead, a turn that
    could not be judged, repairs given up), or what a prompt left out to fit."""
    rows = store.query("SELECT payload FROM events WHERE session_id = ? AND kind = 'session.note' ORDER BY seq",
                       (session_id,))
    return [{"turn": p.get("turn", -1), "what": p.get("what", ""), "text": p.get("text", "")}
            for p in (loads(r["payload"], {}) for r in rows)]


def build_session_report(store: Store, session_id: int) -> Report:
    """The report of one session (raises ``KeyError`` when it does not exist)."""
    from engine.bench.rubric import get_version

    doc = session_document(store, session_id)
    s, m, item = doc["session"], doc["metrics"], doc["item"]
    labels = {v["version_id"]: v["version"] for v in doc["rubric_history"]}
    for t in doc["turns"]:  # versions of an item-less session (or a deleted history) by id
        vid = t["rubric_version_id"]
        if vid is not None and vid not in labels:
            labels[vid] = get_version(store, vid).version
    rubric = doc["rubric"]
    summary = [
        Row("Score", s["score"], "100 × ACC1, the share of base questions right (0–100)" if s["protocol"] == "graded"
            else "100 × s_T, the last judged turn's score (0–100)", ".1f"),
        *([Row("vs chance", doc["chance"]["chance"], doc["chance"]["note"] + (
            f"; {read_note(doc['chance']['answers'])}" if read_note(doc["chance"]["answers"]) else ""), ".1f")]
          if doc.get("chance") else []),
        Row("status", s["status"]),
        Row("target", s["target"]),
        Row("turns judged", m["turns"]),
        Row("protocol", s["protocol"]),
        Row("kernel", s["kernel"], "the examiner model (writes questions and judges)"),
        Row("policy", s["policy"], "chooses follow-up, challenge or end"
            + (f"; version {s['policy_version']}" if s["policy_version"] and s["policy_version"] != s["policy"] else "")),
        Row("seed", s["seed"]),
        Row("item", None if item is None else f"{item['id']} ({item['benchmark']})",
            "" if item is None else item["question"]),
        Row("topic", None if item is None else (item["topic"] or None)),
        Row("rubric version", None if rubric is None else rubric["version"],
            "" if rubric is None else f"by {rubric['author']}; {len(rubric['criteria'])} criteria"),
        Row("run", s["run_id"]),
        Row("started (UTC)", _day(s["created_at"])),
        Row("tokens in", UNKNOWN if m.get("tokens_unknown") else m["tokens_in"],
            f"{m['tokens_unknown']} call(s) had no counts from the server" if m.get("tokens_unknown")
            else "prompt tokens of every call of this session"),
        Row("tokens out", "unknown" if m.get("tokens_unknown") else m["tokens_out"], "completion tokens"),
        Row("cost", UNKNOWN if m.get("tokens_unknown") else m["cost"],
            "the price times token counts, which are unknown" if m.get("tokens_unknown")
            else "in the configured price units", ".4f"),
        Row("mean latency (ms)", m["mean_latency_ms"], "target answer time per turn", ".0f"),
    ]
    from engine.judge.gold_llm import disagreement_count

    judged, differ = disagreement_count([v for t in doc["turns"] for v in t["verdicts"]])
    if judged:
        summary.append(Row("gold answers: LLM vs lexical", f"{differ} of {judged} differ",
                           "verdicts on gold answers given by the LLM judge whose lexical verdict (kept beside it "
                           "in the rationale) differs"))
    sections: list[Section] = [Figures("summary", "Summary", summary)]
    sections.append(LineChart(
        "score-per-turn", "Score per turn", "turn", "s_t",
        [Point(str(t["idx"]), t["score"], t["action"],
               f"turn {t['idx']} ({t['action']}): s = " + ("–" if t["score"] is None else f"{t['score']:.3f}")
               + ("" if t["delta"] is None else f", Δs = {t['delta']:+.3f}"))
         for t in doc["turns"]],
        note="s_t: the turn's rubric score (0–1); points coloured by the turn's action"))
    crit = doc["criteria"]
    if crit:
        sections.append(BarChart(
            "criteria", f"Criteria met (rubric version {rubric['version']})" if rubric else "Criteria met",
            [f"{c['cid']} {c['text']}" for c in crit], ["share of judged turns met"],
            [[c["rate"]] for c in crit], v_max=1.0,
            notes=[f"{c['kind']}, weight {c['weight']:g}; {c['met']}/{c['judged']} turns; at the end: "
                   + ("–" if c["final"] is None else ("met" if c["final"] else "not met"))
                   + (f"; {c['overridden']} overridden" if c["overridden"] else "") for c in crit],
            note="for a deduction, 'met' means the fault was found"))
    sections.append(Figures("dynamism", "Dynamism", dynamism_rows(m),
                            note="TestAgent's figures over this session (one conversation)"))
    if doc.get("rubric_judgement"):
        j = doc["rubric_judgement"]
        sections.append(Figures("rubric-judgement", "Rubric judgement" + (" (offline estimate)"
                                                                          if j.get("offline_estimate") else ""),
                                judgement_rows(j), note="SedarEval: one 0–5 judgement of the whole conversation "
                                                        "at its end"))
    if m.get("graded"):
        sections.append(Figures("graded", "Graded (JudgeAgent)", graded_rows(m["graded"]),
                                note="the session's Score is 100 × ACC1 (its base questions' accuracy)"))
        sections.append(Table("graded-track", "Difficulty track", ["#", "phase", "asked", "right", "average", "next"],
                              [[i, t["phase"], t["asked"], t["right"], t["average"], t["next"]]
                               for i, t in enumerate(m["graded"]["track"])], ["", "", "", "", ".2f", ""],
                              note="the difficulty asked, whether the answer was right, the running average "
                                   "and the difficulty chosen next"))
    if doc.get("ratings") and not doc["ratings"]["rated"]:
        sections.append(unrated_figures(doc["ratings"]["not_rated"]))
    elif doc.get("ratings"):
        sections.append(Figures("ratings", "Professionalism and Stability", rating_rows(doc["ratings"]),
                                note="the judge's 1–10 ratings of the whole conversation"))
    sections.append(Table(
        "turns", "Turns", ["turn", "action", "actor", "s_t", "Δs", "cos", "rubric v.", "met", "tokens in",
                           "tokens out", "cost", "latency ms"],
        [[t["idx"], t["action"], t["actor"], t["score"], t["delta"], t["cos"], labels.get(t["rubric_version_id"]),
          " ".join(v["cid"] for v in t["verdicts"] if v["met"]), *_usage(t), t["latency_ms"]] for t in doc["turns"]],
        ["", "", "", ".3f", "+.3f", ".2f", "", "", "", "", ".4f", ".0f"],
        note=f"tokens and cost unknown: {m['tokens_unknown']} call(s) of this session had no counts from the "
             "server, and which turn each belonged to is not recorded" if m.get("tokens_unknown") else ""))
    if doc.get("notes"):
        sections.append(Table("notes", "Notes", ["turn", "kind", "what happened"],
                              [[n["turn"] if n["turn"] >= 0 else "session", n["what"].replace("-", " "), n["text"]]
                               for n in doc["notes"]],
                              note="what the session went on without because a model's reply was unusable, or what "
                                   "a prompt left out to fit the model's context, in the order written"))
    verdict_rows = []
    for t in doc["turns"]:
        for v in t["verdicts"]:
            judge = v.get("original_met")
            verdict_rows.append([t["idx"], v["cid"], v["met"], v["source"], judge, v.get("by", ""),
                                 _day(v.get("at")) if v["source"] == "human" else "",
                                 v.get("note", "") if v["source"] == "human" else v["rationale"]])
    sections.append(Table("verdicts", "Verdicts", ["turn", "criterion", "met", "source", "judge said", "by",
                                                   "when (UTC)", "note or rationale"], verdict_rows,
                          note="the effective verdict of each criterion on each judged turn; a human override "
                               "shows what the judge said, who overrode it and when"))
    sections.append(Table("overrides", "Overrides", ["when (UTC)", "by", "turn", "criterion", "set to",
                                                     "turn s_t after", "Score after", "note"],
                          [[_day(e["at"]), e["by"], e["turn"], e["cid"], "met" if e["met"] else "not met",
                            e["turn_score"], e["session_score"], e["note"]] for e in doc["overrides"]],
                          ["", "", "", "", "", ".3f", ".1f", ""],
                          note="every override in the order made (a later one on the same verdict replaces it)"))
    if rubric:
        sections.append(Table("rubric", f"Rubric (version {rubric['version']}, by {rubric['author']})",
                              ["id", "kind", "weight", "criterion"],
                              [[c["cid"], c["kind"], c["weight"], c["text"]] for c in rubric["criteria"]],
                              ["", "", "g", ""]))
    if doc["rubric_history"]:
        from engine.bench.rubric import list_versions

        in_use = {t["rubric_version_id"] for t in doc["turns"] if t["rubric_version_id"] is not None}
        current = next((v["version_id"] for v in doc["rubric_history"] if v["current"]), None)
        sections.append(versions_table(list_versions(store, item["id"]), in_use, current,
                                       "every version of this item's rubric; 'used here': this session's turns were "
                                       "scored with it; 'current': the item's current version"))
    sections.append(Figures("agreement", "Judge–human agreement", agreement_rows(doc["agreement"]["overall"]),
                            note="over this session's verdicts that a human confirmed or overrode "
                                 "(the latest review of each verdict)"))
    sections.append(Transcript("transcript", "Transcript", [
        TurnText(t["idx"], f"Turn {t['idx']} — {t['action']} ({t['actor']})", t["question"], t["answer"],
                 "s_t " + ("–" if t["score"] is None else f"{t['score']:.3f}")
                 + ("" if t["delta"] is None else f", Δs {t['delta']:+.3f}")
                 + "; met: " + (" ".join(v["cid"] for v in t["verdicts"] if v["met"]) or "none"))
        for t in doc["turns"]]))
    csv_table = Table(
        "turns", "Turns", ["session", "turn", "action", "actor", "score", "delta", "cos", "rubric_version",
                           "tokens_in", "tokens_out", "cost", "latency_ms", "met", "overridden", "question", "answer"],
        [[s["id"], t["idx"], t["action"], t["actor"], t["score"], t["delta"], t["cos"],
          labels.get(t["rubric_version_id"]), *_usage(t), t["latency_ms"],
          " ".join(v["cid"] for v in t["verdicts"] if v["met"]),
          " ".join(v["cid"] for v in t["verdicts"] if v["source"] == "human"), t["question"], t["answer"]]
         for t in doc["turns"]])
    subtitle = f"{s['status']} · {s['protocol']} · kernel {s['kernel']} · policy {s['policy']}"
    return Report("session", f"viva session {s['id']}: {s['target']}", subtitle, sections, csv_table, doc)


# -- the run report -----------------------------------------------------------------------------
def run_document(store: Store, run_id: int) -> dict[str, Any]:
    """The ``viva-run`` JSON document (version :data:`RUN_VERSION`); ``KeyError`` when the run is missing."""
    from functools import partial

    from engine.bench.calibrate import scope_abilities
    from engine.bench.rubric import current_rubric, get_version, has_rubric
    from engine.interview.queries import effective_status
    from engine.interview.run import derive_run_status
    from engine.metrics.breakdown import calls_by_purpose, run_totals, topic_table
    from engine.metrics.leaderboard import leaderboard
    from engine.metrics.rubric_board import rubric_leaderboard
    from engine.metrics.sessions import agreement, target_table

    run = store.one("SELECT id, created_at, status, config FROM runs WHERE id = ?", (run_id,))
    if run is None:
        raise KeyError(f"run {run_id} does not exist")
    rows = store.query(
        "SELECT s.id, s.status, s.pid, s.target, s.item_id, i.topic, b.name AS benchmark, s.score, "
        "s.rubric_version_id, s.created_at, (SELECT COUNT(*) FROM turns t WHERE t.session_id = s.id "
        "AND t.score IS NOT NULL) AS turns FROM sessions s LEFT JOIN items i ON i.id = s.item_id "
        "LEFT JOIN benchmarks b ON b.id = s.benchmark_id WHERE s.run_id = ? ORDER BY s.id", (run_id,))
    sessions = []
    for r in rows:
        status = effective_status(r)
        sessions.append({"id": r["id"], "target": r["target"], "item": r["item_id"], "benchmark": r["benchmark"],
                         "topic": r["topic"], "status": status, "turns": r["turns"], "score": r["score"],
                         "rubric_version_id": r["rubric_version_id"]})
    ids = [r["id"] for r in sessions]
    board = sorted(target_table(store, ids), key=lambda r: -(r["score"] or 0.0))
    rubrics: dict[int, dict[str, Any]] = {}
    for r in sessions:
        if r["item"] is None or r["item"] in rubrics or not has_rubric(store, r["item"]):
            continue
        used = sorted({x["rubric_version_id"] for x in sessions if x["item"] == r["item"]
                       and x["rubric_version_id"] is not None})
        cur = current_rubric(store, r["item"])
        rubrics[r["item"]] = {"item": r["item"], "topic": r["topic"],
                              "used": [get_version(store, v).version for v in used],
                              "current": cur.version, "author": cur.author, "written": cur.created_at}
    return {
        "format": RUN_FORMAT, "version": RUN_VERSION,
        # the run's status is its sessions' (one rule: engine.interview.run.derive_run_status), so a run
        # whose process was killed reads as interrupted, not as the "running" it last wrote
        "run": {"id": run["id"], "created_at": run["created_at"],
                "status": derive_run_status([r["status"] for r in sessions]),
                "config": loads(run["config"], {})},
        "sessions": sessions,
        "totals": run_totals(store, ids),
        # what the LLM calls were for (per role and purpose, repairs apart): what a turn cost
        "calls": calls_by_purpose(store, ids),
        "leaderboard": board,
        "topics": topic_table(store, ids),
        # (the engine's agreement reads "no ids" as "every session"; a run without sessions has none)
        "agreement": agreement(store, ids or [-1]),
        "rubrics": list(rubrics.values()),
        "rubric_board": rubric_leaderboard(store, ids) if ids else [],
        # per (benchmark, target): n and seeded bootstrap 95% intervals over items, paired comparisons
        "board": leaderboard(store, ids, abilities=partial(scope_abilities, store)),
    }


def rubric_board_table(entries: list[dict[str, Any]]) -> Table:
    """SedarEval's board (:func:`engine.metrics.rubric_board.rubric_leaderboard`): one row per
    category at every level (indented by level), one column per target and way of scoring."""
    columns = ["category"] + [e["target"] + (" (offline estimate)" if e.get("offline_estimate") else "")
                              for e in entries]
    order: dict[tuple[str, ...], int] = {}
    cells: list[dict[tuple[str, ...], dict[str, Any]]] = []
    for e in entries:
        mine = {}
        for c in e["categories"]:
            order.setdefault(tuple(c["category"]), len(order))
            mine[tuple(c["category"])] = c
        cells.append(mine)
    rows = [["overall", *[e["overall"]["figure"] for e in entries]],
            ["mean of level-1 categories", *[e["macro"] for e in entries]]]
    for path in sorted(order, key=lambda p: tuple(order[p[:k]] for k in range(1, len(p) + 1))):
        rows.append(["· " * (len(path) - 1) + path[-1], *[(m.get(path) or {}).get("figure") for m in cells]])
    return Table("rubric-board", "Rubric leaderboard (SedarEval)", columns, rows,
                 ["", *[".1f"] * len(entries)],
                 note="Σ score × 100 / (count × 5) per category; cannot-judge items are left out and counted "
                      "in the JSON; offline estimates are never pooled with judge scores")


def interval_tables(board: dict[str, Any]) -> list[Section]:
    """The leaderboard per (benchmark, target) with n and 95% intervals, and the paired comparisons
    (:func:`engine.metrics.leaderboard.leaderboard`); each cell is ``value [low, high]`` (the JSON
    document's ``board`` has the numbers)."""
    def cell(fig: dict[str, Any], digits: int) -> str:
        if fig["value"] is None:
            return "–"
        if fig["ci"] is None:
            return f"{fig['value']:.{digits}f} (no interval: n={fig['n']})"
        lo, hi = fig["ci"]
        return f"{fig['value']:.{digits}f} [{lo:.{digits}f}, {hi:.{digits}f}]"

    def n(r: dict[str, Any]) -> str:
        fig = r["figures"]["score"]
        return f"{fig['n']} {r.get('unit', 'item')}(s)" + (f"; {fig['read_note']}" if fig.get("read_note") else "")

    def chance(r: dict[str, Any]) -> str:
        return "–" if not r.get("chance") else r["chance"]["note"]

    def ability(r: dict[str, Any]) -> str:
        a = r.get("ability") or {}
        if a.get("value") is None:
            return "— (" + (a.get("note") or "not calibrated") + ")"
        return f"{a['value']:+.2f} [{a['low']:+.2f}, {a['high']:+.2f}], SE {a['se']:.2f}"

    def expected(r: dict[str, Any]) -> str:
        a = r.get("ability") or {}
        return "—" if a.get("expected_score") is None else f"{a['expected_score']:.1f}"

    def epochs(r: dict[str, Any]) -> list[Any]:
        e = r.get("epochs")
        if not e:
            return [1, "–"]
        k = str(e["k_max"]) if e["k_min"] == e["k_max"] else f"{e['k_min']}-{e['k_max']}"
        return [k, f"{e['spread']:.1f} (max {e['spread_max']:.1f})"]

    m = board["method"]
    repeated = any(r.get("epochs") for r in board["rows"])
    extra = ["sessions per item (K)", "per-item spread (SD)"] if repeated else []
    out: list[Section] = [Table(
        "leaderboard-intervals", "Leaderboard with 95% intervals",
        ["benchmark", "target", "n", "Score", "vs chance", "ΔS_f", "P+", "R", "challenge turns", "ability [95% CI]",
         "expected Score (all items)", *extra],
        [[r["benchmark"], r["target"], n(r), cell(r["figures"]["score"], 1), chance(r),
          cell(r["figures"]["delta_follow_up"], 3), cell(r["figures"]["p_plus"], 2), cell(r["figures"]["r"], 3),
          r["figures"]["p_plus"]["turns"], ability(r), expected(r), *(epochs(r) if repeated else [])]
         for r in board["rows"]],
        [""] * (11 + len(extra)),
        note=f"{m['interval']}, {m['resamples']} resamples, seed {m['seed']}; no interval under {m['min_items']} "
             "items; n counts questions (each question of a graded batch) or items (an adaptive session's item), "
             f"and under {MIN_READ_N} a figure is too few to read whatever its interval; vs chance (multiple "
             "choice): the Score of a blind guess (100 × mean 1/options) and the share right with its Wilson 95% "
             "interval, BELOW CHANCE only when the interval's upper end is under it (engine/metrics/chance.py); "
             "rows per benchmark, never averaged across benchmarks. Ability: on the benchmark's item "
             "calibration (viva bench calibrate), from this run's responses, ability ± 1.96 SE; the expected "
             "Score counts the items run as scored and the others by the ability (docs/calibration.md)"
             + ("; where items ran more than once (epochs), the Score is the mean over items of each item's mean, "
                "its interval a bootstrap over items and, within each, its sessions, and the spread the mean "
                "per-item standard deviation (n−1)" if repeated else ""))]
    if board["comparisons"]:
        def diff(c: dict[str, Any]) -> str:
            if c["mean_difference"] is None:
                return "–"
            if c["ci"] is None:
                return f"{c['mean_difference']:+.1f} (no interval)"
            return f"{c['mean_difference']:+.1f} [{c['ci'][0]:+.1f}, {c['ci'][1]:+.1f}]"

        out.append(Table(
            "paired", "Paired comparisons (same items)",
            ["benchmark", "A", "B", "shared (n)", "Score A − B [95% CI]", "excludes 0"],
            [[c["benchmark"], c["a"], c["b"], c["n"], diff(c) + (f"; {c['read_note']}" if c.get("read_note") else ""),
              "–" if c["excludes_zero"] is None else ("yes" if c["excludes_zero"] else "no")]
             for c in board["comparisons"]],
            ["", "", "", "", "", ""],
            note="difference of Scores on the items (questions) both targets finished; bootstrap over them; "
                 f"under {MIN_READ_N} shared, too few to read"))
    return out


def build_run_report(store: Store, run_id: int) -> Report:
    """The report of a run: its leaderboard across targets, per-topic scores, sessions, agreement."""
    doc = run_document(store, run_id)
    run, board, sessions = doc["run"], doc["leaderboard"], doc["sessions"]
    totals = doc["totals"]
    summary = [
        Row("sessions", totals["sessions"], "one per item and target"),
        Row("finished", totals["finished"], "the figures are over these"),
        Row("failed", totals["failed"], "counted, never averaged in"),
        Row("unfinished", totals["unfinished"], f"resume with `viva resume run:{run['id']}`"),
        *([Row("not examined", totals["not_examined"], "no question was answered: counted, no Score")]
          if totals.get("not_examined") else []),
        Row("targets", totals["targets"]),
        Row("items", totals["items"]),
        Row("best Score", board[0]["score"] if board else None, board[0]["target"] if board else "", ".1f"),
        Row("tokens in", UNKNOWN if totals.get("tokens_unknown") else totals["tokens_in"],
            f"{totals['tokens_unknown']} call(s) had no counts from the server" if totals.get("tokens_unknown")
            else "over every session (spent even if it failed)"),
        Row("tokens out", "unknown" if totals.get("tokens_unknown") else totals["tokens_out"]),
        Row("cost", UNKNOWN if totals.get("tokens_unknown") else totals["cost"],
            "the price times token counts, which are unknown" if totals.get("tokens_unknown")
            else "in the configured price units", ".4f"),
        Row("started (UTC)", _day(run["created_at"])),
        Row("status", run["status"]),
    ]
    sections: list[Section] = [Figures("summary", "Summary", summary)]
    sections.append(BarChart("leaderboard-chart", "Score by target", [r["target"] for r in board], ["Score"],
                             [[r["score"]] for r in board], v_max=100.0, fmt=".1f",
                             notes=[f"{r['finished']} finished" + (f", {len(r['failed'])} failed" if r["failed"] else "")
                                    + (f", {len(r['unfinished'])} unfinished" if r["unfinished"] else "")
                                    + (f", {len(r['not_examined'])} not examined" if r.get("not_examined") else "")
                                    + ("" if r["r"] is None else f"; R {r['r']:+.3f}") for r in board],
                             note="Score = 100 × mean last-turn score over finished sessions (0–100); a graded "
                                  "session counts each scored question, as the leaderboard's n does"))
    sections.append(Table(
        "leaderboard", "Leaderboard",
        ["#", "target", "Score", "ΔS_f", "hold: kept/tested [95%]", "P+", "P−", "R+", "R−", "R"],
        [[i + 1, r["target"], r["score"], r["delta_follow_up"], _held(r.get("hold")), r["p_plus"], r["p_minus"],
          r["r_plus"], r["r_minus"], r["r"]] for i, r in enumerate(board)],
        ["", "", ".1f", "+.3f", "", ".2f", ".2f", ".3f", ".3f", "+.3f"],
        note="best Score first; the Dynamism figures are over finished sessions (sessions and spend below); hold = "
             "share of challenged right claims the target kept, with its Wilson 95% interval (M+ and M− are in "
             "each session's report and the CSV)"))
    sections.append(Table(
        "spend", "Sessions and spend per target",
        ["target", "finished", "failed", "unfinished", "not examined", "tokens in", "tokens out", "cost"],
        [[r["target"], r["finished"], len(r["failed"]), len(r["unfinished"]), len(r.get("not_examined") or []),
          "unknown" if r.get("tokens_unknown") else r["tokens_in"],
          "unknown" if r.get("tokens_unknown") else r["tokens_out"],
          "unknown" if r.get("tokens_unknown") else r["cost"]] for r in board],
        ["", "", "", "", "", "", "", ".4f"],
        note="tokens and cost over every session (spent even if it failed); not examined: ended with no answered "
             "turn (no Score)"))
    if doc["calls"]:
        sections.append(Table(
            "calls", "LLM calls by purpose",
            ["role", "purpose", "calls", "per turn", "cached", "failed", "tokens in", "tokens out", "cost"],
            [[c["role"], c["purpose"], c["calls"], c["per_turn"], c["cached"], c["failed"],
              "unknown" if c["tokens_in"] is None else c["tokens_in"],
              "unknown" if c["tokens_out"] is None else c["tokens_out"], c["cost"]] for c in doc["calls"]],
            ["", "", "", ".2f", "", "", "", "", ".4f"],
            note="every call of the run's sessions as recorded: per turn over all their turns; a repair (a reply "
                 "that could not be used, asked again) is counted apart as '<purpose> repair'; cached: answered "
                 "from the response cache, nothing sent"))
    sections.extend(interval_tables(doc["board"]))
    topics = list(dict.fromkeys(r["topic"] for r in doc["topics"]))
    targets = [r["target"] for r in board]
    by = {(r["topic"], r["target"]): r for r in doc["topics"]}
    if topics:
        sections.append(BarChart("topics", "Score by topic", topics, targets,
                                 [[(by.get((tp, tg)) or {}).get("score") for tg in targets] for tp in topics],
                                 v_max=100.0, fmt=".1f",
                                 note="per topic, each target's Score over its finished sessions on that topic"))
        sections.append(Table("topic-table", "Per topic", ["topic", "target", "Score", "ΔS_f", "R", "finished",
                                                           "failed", "unfinished"],
                              [[r["topic"], r["target"], r["score"], r["delta_follow_up"], r["r"], r["finished"],
                                len(r["failed"]), len(r["unfinished"])] for r in doc["topics"]],
                              ["", "", ".1f", "+.3f", "+.3f"]))
    sections.append(Table("sessions", "Sessions", ["session", "target", "item", "topic", "status", "turns judged",
                                                   "Score"],
                          [[s["id"], s["target"], s["item"], s["topic"], s["status"], s["turns"], s["score"]]
                           for s in sessions], ["", "", "", "", "", "", ".1f"]))
    if doc["rubrics"]:
        sections.append(Table("rubrics", "Rubric versions", ["item", "topic", "versions used", "current version",
                                                             "current by", "written (UTC)"],
                              [[r["item"], r["topic"], ", ".join(str(v) for v in r["used"]), r["current"],
                                r["author"], _day(r["written"])] for r in doc["rubrics"]],
                              note="a version used that is not the current one: re-score with "
                                   f"`viva rescore run:{run['id']}`"))
    rated = [r for r in board if r.get("ratings")]
    if rated and not any(r["ratings"]["rated"] for r in rated):  # an offline run: one line, not a table of blanks
        sections.append(unrated_figures(sum(r["ratings"]["not_rated"] for r in rated)))
    elif rated:
        sections.append(Table("ratings", "Professionalism and Stability",
                              ["target", "rated", *[label for label, _, _ in RATING_ROWS]],
                              [[r["target"], f"{r['ratings']['rated']}/{r['ratings']['rated'] + r['ratings']['not_rated']}",
                                *[r["ratings"][key] for _, key, _ in RATING_ROWS]] for r in rated],
                              ["", "", *[".1f"] * len(RATING_ROWS)],
                              note="the judge's 1–10 ratings of whole conversations; the offline kernel does not rate"))
    graded = [r for r in board if r.get("graded")]
    if graded:
        sections.append(Table("graded", "Graded (JudgeAgent)",
                              ["target", "sessions", "questions", "extension", "evaluation score", "re-answered",
                               "ACC1", "ACC2", "CR", "CtE", "Δ"],
                              [[r["target"], r["graded"]["sessions"], r["graded"]["questions"],
                                r["graded"]["extension_questions"], r["graded"]["evaluation_score"],
                                *[(r["graded"].get("validation") or {}).get(k)
                                  for k in ("n", "acc1", "acc2", "cr", "cte", "delta")]] for r in graded],
                              ["", "", "", "", ".3f", "", ".2f", ".2f", ".2f", ".2f", "+.2f"],
                              note="evaluation score = Σ gains / questions; Δ = ACC2 − ACC1 = CR − CtE"))
    if doc["rubric_board"]:
        sections.append(rubric_board_table(doc["rubric_board"]))
    sections.append(Figures("agreement", "Judge–human agreement", agreement_rows(doc["agreement"]["overall"]),
                            note="over this run's verdicts that a human confirmed or overrode "
                                 "(the latest review of each verdict)"))
    if doc["agreement"]["overall"]["n"]:
        sections.append(agreement_groups(doc["agreement"]))
    csv_table = Table("leaderboard", "Leaderboard", [
        "rank", "target", "score", "delta_follow_up", "p_plus", "m_plus", "p_minus", "m_minus", "p_zero", "r_plus",
        "r_minus", "r", "follow_ups", "challenges", "finished", "failed", "unfinished", "not_examined", "tokens_in",
        "tokens_out", "cost"],
        [[i + 1, r["target"], r["score"], r["delta_follow_up"], r["p_plus"], r["m_plus"], r["p_minus"], r["m_minus"],
          r["p_zero"], r["r_plus"], r["r_minus"], r["r"], r["follow_ups"], r["challenges"], r["finished"],
          len(r["failed"]), len(r["unfinished"]), len(r.get("not_examined") or []),
          "unknown" if r.get("tokens_unknown") else r["tokens_in"],
          "unknown" if r.get("tokens_unknown") else r["tokens_out"],
          "unknown" if r.get("tokens_unknown") else r["cost"]]
         for i, r in enumerate(board)])
    subtitle = f"{len(sessions)} sessions · {len(board)} targets · started {_day(run['created_at'])}"
    return Report("run", f"viva run {run['id']}", subtitle, sections, csv_table, doc)
