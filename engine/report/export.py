"""Session reports: Markdown, JSON, CSV and HTML, from the store (never from a widget).

The JSON export is a versioned format (``format: viva-session``, ``version: 1``); field order is
part of it. API keys are never in the store, so never in an export.
"""

from __future__ import annotations

import csv
import html
import io
import json
from typing import Any

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


def _f(value: Any, digits: int = 2) -> str:
    return "–" if value is None else (f"{value:.{digits}f}" if isinstance(value, float) else str(value))


def to_markdown(report: dict[str, Any]) -> str:
    """The report (from :func:`session_report`) as Markdown: the headline figures, the rubric table,
    then each turn with its question, answer and met criteria.
    """
    s, m = report["session"], report["metrics"]
    lines = [f"# viva session {s['id']}: {s['target']}", ""]
    lines += [f"- status: {s['status']}; protocol: {s['protocol']}; kernel: {s['kernel']}; "
              f"policy: {s['policy']} {s['policy_version']}; seed {s['seed']}",
              f"- Score: **{_f(s['score'], 1)}** / 100; turns: {m['turns']}; tokens: {m['tokens_in']} in, "
              f"{m['tokens_out']} out; cost: {m['cost']:.4f}",
              f"- ΔS_f {_f(m['delta_follow_up'], 3)}; P+ {_f(m['p_plus'])}, M+ {_f(m['m_plus'], 3)}; "
              f"P− {_f(m['p_minus'])}, M− {_f(m['m_minus'], 3)}; R+ {_f(m['r_plus'], 3)}, "
              f"R− {_f(m['r_minus'], 3)}, R {_f(m['r'], 3)}", ""]
    if report["item"]:
        lines += [f"**Item {report['item']['id']}** ({report['item']['benchmark']}, {report['item']['topic']}): "
                  f"{report['item']['question']}", ""]
    if report["rubric"]:
        r = report["rubric"]
        lines += [f"## Rubric (version {r['version']}, by {r['author']})", "", "| id | kind | weight | criterion |",
                  "|---|---|---|---|"]
        lines += [f"| {c['cid']} | {c['kind']} | {c['weight']:g} | {c['text'].replace('|', '/')} |" for c in r["criteria"]]
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
        lines += [f"### Turn {t['idx']} — {t['action']} ({t['actor']}): score {_f(t['score'])}, "
                  f"Δs {_f(t['delta'])}, cos {_f(t['cos'])}", "", f"**Q:** {t['question']}", "",
                  f"**A:** {t['answer'] or '(no answer)'}", ""]
        met = [v for v in t["verdicts"] if v["met"]]
        if t["verdicts"]:
            lines.append("Met: " + (", ".join(v["cid"] + (" (human)" if v["source"] == "human" else "")
                                             for v in met) or "none"))
            lines.append("")
    return "\n".join(lines)


def to_csv(report: dict[str, Any]) -> str:
    """The report as CSV, one row per turn: figures, tokens, cost, met criterion ids, question, answer."""
    buf = io.StringIO()
    writer = csv.writer(buf)
    writer.writerow(["session", "turn", "action", "actor", "score", "delta", "cos", "tokens_in", "tokens_out",
                     "cost", "met", "question", "answer"])
    for t in report["turns"]:
        writer.writerow([report["session"]["id"], t["idx"], t["action"], t["actor"], t["score"], t["delta"], t["cos"],
                         t["tokens_in"], t["tokens_out"], t["cost"],
                         " ".join(v["cid"] for v in t["verdicts"] if v["met"]), t["question"], t["answer"]])
    return buf.getvalue()


def to_html(report: dict[str, Any]) -> str:
    """The Markdown report, HTML-escaped, as a standalone page (preformatted, wrapping)."""
    body = html.escape(to_markdown(report))
    return (f"<!doctype html><meta charset='utf-8'><title>viva session {report['session']['id']}</title>"
            f"<pre style='white-space:pre-wrap;font-family:system-ui'>{body}</pre>")


def export_session(store: Store, session_id: int, fmt: str = "md") -> str:
    """The session report in ``md``, ``json``, ``csv`` or ``html``."""
    if fmt not in FORMATS:
        raise ValueError(f"unknown report format {fmt!r}; choose one of {', '.join(FORMATS)}")
    report = session_report(store, session_id)
    if fmt == "json":
        return json.dumps(report, ensure_ascii=False, indent=2)
    if fmt == "csv":
        return to_csv(report)
    if fmt == "html":
        return to_html(report)
    return to_markdown(report)
