"""Session reports: Markdown, JSON, CSV and HTML, from the store (never from a widget).

The JSON export is a versioned format (``format: viva-session``, ``version: 1``); field order is
part of it. API keys are never in the store, and every export passes :func:`engine.redact.redact`
as well (a database written by an older viva, a key-shaped token).

Candidate text is untrusted: in Markdown (and the HTML built from it) every answer, question,
summary and criterion is escaped (:func:`escape_markdown`), so an answer cannot open a heading, a
list, a table, a code block or raw HTML; in CSV a text cell starting with ``=``, ``+``, ``-``, ``@``
(or a tab or carriage return) is prefixed with ``'`` (:func:`csv_text_cell`), so a spreadsheet shows
it as text instead of running it as a formula.
"""

from __future__ import annotations

import csv
import html
import io
import json
import re
from typing import Any

from engine.redact import redact
from engine.store import Store, loads

FORMATS = ("md", "json", "csv", "html")
REPORT_VERSION = 1


def session_report(store: Store, session_id: int) -> dict[str, Any]:
    """The session as one JSON-ready object: session, item, rubric, turns with verdicts, metrics."""
    from engine.bench.items import get_item
    from engine.bench.rubric import get_version
    from engine.interview.queries import session_detail

    detail = session_detail(store, session_id)
    s = detail["session"]
    item = get_item(store, s["item_id"]) if s["item_id"] else None
    versions: dict[int, Any] = {}
    turns = []
    for t in detail["turns"]:
        vid = t["rubric_version_id"]
        if vid is not None and vid not in versions:
            versions[vid] = get_version(store, vid)
        turns.append({
            "idx": t["idx"], "action": t["action"], "actor": t["actor"], "question": t["question"],
            "answer": t["answer"], "score": t["score"], "delta": t["delta"], "cos": t["cos"],
            "state": loads(t["state"]), "probs": loads(t["probs"]), "summary": t["summary"],
            "rubric_version_id": vid, "latency_ms": t["latency_ms"], "tokens_in": t["tokens_in"],
            "tokens_out": t["tokens_out"], "cost": t["cost"],
            "verdicts": [{"cid": v["cid"], "met": bool(v["met"]), "source": v["source"],
                          "rationale": v["rationale"],
                          **({"original_met": bool(v["original"]["met"])} if "original" in v else {})}
                         for v in t["verdicts"].values()],
        })
    from engine.metrics.rubric_board import session_judgement

    judgement = session_judgement(store, session_id) if s["protocol"] == "rubric" else None
    current = versions.get(s["rubric_version_id"]) if s["rubric_version_id"] else None
    if current is None and s["rubric_version_id"]:
        current = get_version(store, s["rubric_version_id"])
    return {
        "format": "viva-session", "version": REPORT_VERSION,
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
    }


_MD_INLINE = re.compile(r"([\\`*_\[\]<>|~&#!])")
_MD_LINE_START = re.compile(r"^(\s*)([-+=>:]|\d+[.)])")
_FORMULA_START = ("=", "+", "-", "@", "\t", "\r")


def escape_markdown(text: str | None) -> str:
    """``text`` as inert Markdown: one paragraph that renders as the text itself.

    Markdown's inline punctuation is backslash-escaped (``\\ ` * _ [ ] < > | ~ & # !``), a line that
    could start a block (``-``, ``+``, ``=``, ``>``, ``:``, ``1.``) has that character escaped, blank
    lines are dropped and lines are joined with hard breaks (a trailing backslash), so nothing can
    open a heading (ATX or setext), list, quote, table, code block or HTML block.
    """
    if not text:
        return ""
    lines = []
    for line in str(text).splitlines():
        if not line.strip():
            continue
        line = _MD_INLINE.sub(r"\\\1", line.strip())
        line = _MD_LINE_START.sub(lambda m: m.group(1) + "\\" + m.group(2) if len(m.group(2)) == 1
                                  else m.group(1) + m.group(2)[:-1] + "\\" + m.group(2)[-1], line)
        lines.append(line)
    return "\\\n".join(lines)


def csv_text_cell(value: Any) -> Any:
    """A CSV cell: text that a spreadsheet would run as a formula (starting with ``= + - @``, a tab or a
    carriage return) gets a leading ``'``; numbers and None are left as they are."""
    if isinstance(value, str) and value.startswith(_FORMULA_START):
        return "'" + value
    return value


def _f(value: Any, digits: int = 2) -> str:
    return "–" if value is None else (f"{value:.{digits}f}" if isinstance(value, float) else str(value))


def to_markdown(report: dict[str, Any]) -> str:
    """The report (from :func:`session_report`) as Markdown: the headline figures, the rubric table,
    then each turn with its question, answer and met criteria.
    """
    s, m = report["session"], report["metrics"]
    e = escape_markdown
    lines = [f"# viva session {s['id']}: {e(s['target'])}", ""]
    lines += [f"- status: {e(s['status'])}; protocol: {e(s['protocol'])}; kernel: {e(s['kernel'])}; "
              f"policy: {e(s['policy'])} {e(s['policy_version'])}; seed {s['seed']}",
              f"- Score: **{_f(s['score'], 1)}** / 100; turns: {m['turns']}; tokens: {m['tokens_in']} in, "
              f"{m['tokens_out']} out; cost: {m['cost']:.4f}",
              f"- ΔS_f {_f(m['delta_follow_up'], 3)}; P+ {_f(m['p_plus'])}, M+ {_f(m['m_plus'], 3)}; "
              f"P− {_f(m['p_minus'])}, M− {_f(m['m_minus'], 3)}; R+ {_f(m['r_plus'], 3)}, "
              f"R− {_f(m['r_minus'], 3)}, R {_f(m['r'], 3)}", ""]
    if report["item"]:
        it = report["item"]
        lines += [f"**Item {it['id']}** ({e(it['benchmark'])}, {e(it['topic'])}): {e(it['question'])}", ""]
    if report["rubric"]:
        r = report["rubric"]
        lines += [f"## Rubric (version {r['version']}, by {e(r['author'])})", "", "| id | kind | weight | criterion |",
                  "|---|---|---|---|"]
        lines += [f"| {e(c['cid'])} | {e(c['kind'])} | {c['weight']:g} | {e(c['text']).replace(chr(92) + chr(10), ' ')} |"
                  for c in r["criteria"]]
        lines.append("")
    j = report.get("rubric_judgement")
    if j:
        label = " (offline estimate)" if j.get("offline_estimate") else ""
        score = "cannot judge" if j.get("score") is None else f"{j['score']:g} / {j.get('max_score', 5):g}"
        lines += [f"## Rubric judgement{label}", "", f"- score: **{score}**{label}; judge replies: "
                  f"{j.get('attempts', 0)}; prompt: {j.get('prompt_source') or '-'}", "",
                  (j.get("reasoning") or "").strip() or "(no reasoning)", ""]
    lines += ["## Turns", ""]
    for t in report["turns"]:
        lines += [f"### Turn {t['idx']} — {e(t['action'])} ({e(t['actor'])}): score {_f(t['score'])}, "
                  f"Δs {_f(t['delta'])}, cos {_f(t['cos'])}", "", f"**Q:** {e(t['question'])}", "",
                  f"**A:** {e(t['answer']) or '(no answer)'}", ""]
        met = [v for v in t["verdicts"] if v["met"]]
        if t["verdicts"]:
            lines.append("Met: " + (", ".join(e(v["cid"]) + (" (human)" if v["source"] == "human" else "")
                                             for v in met) or "none"))
            lines.append("")
    return "\n".join(lines)


def to_csv(report: dict[str, Any]) -> str:
    """The report as CSV, one row per turn: figures, tokens, cost, met criterion ids, question, answer
    (text cells that a spreadsheet would run as formulas are quoted as text: :func:`csv_text_cell`)."""
    buf = io.StringIO()
    writer = csv.writer(buf)
    writer.writerow(["session", "turn", "action", "actor", "score", "delta", "cos", "tokens_in", "tokens_out",
                     "cost", "met", "question", "answer"])
    for t in report["turns"]:
        row = [report["session"]["id"], t["idx"], t["action"], t["actor"], t["score"], t["delta"], t["cos"],
               t["tokens_in"], t["tokens_out"], t["cost"],
               " ".join(v["cid"] for v in t["verdicts"] if v["met"]), t["question"], t["answer"]]
        writer.writerow([csv_text_cell(c) for c in row])
    return buf.getvalue()


def to_html(report: dict[str, Any]) -> str:
    """The Markdown report, HTML-escaped, as a standalone page (preformatted, wrapping)."""
    body = html.escape(to_markdown(report))
    return (f"<!doctype html><meta charset='utf-8'><title>viva session {report['session']['id']}</title>"
            f"<pre style='white-space:pre-wrap;font-family:system-ui'>{body}</pre>")


def export_session(store: Store, session_id: int, fmt: str = "md") -> str:
    """The session report in ``md``, ``json``, ``csv`` or ``html``, redacted (:func:`engine.redact.redact`)."""
    if fmt not in FORMATS:
        raise ValueError(f"unknown report format {fmt!r}; choose one of {', '.join(FORMATS)}")
    report = session_report(store, session_id)
    if fmt == "json":
        return redact(json.dumps(report, ensure_ascii=False, indent=2))
    if fmt == "csv":
        return redact(to_csv(report))
    if fmt == "html":
        return redact(to_html(report))
    return redact(to_markdown(report))
