"""A run as a pass/fail for a pipeline: the thresholds (``viva run --fail-under``, per-target
``min_score``) and JUnit XML (``viva report run:N --format junit``).

**The gate.** A target's threshold is its endpoint's ``min_score`` in the config (looked up by the
target's spec, its stored name without ``#sys:HASH``), else ``--fail-under``, else none. A leaderboard row
(benchmark, target) with a threshold is *below* when its Score (the point estimate: the mean over items of
each item's mean session score, the figure the board shows) is under the threshold, or when it has no
Score at all (no finished session: nothing measured is not a pass). :func:`below_threshold` lists them.

**JUnit XML** in the form GitHub Actions' and GitLab's test reports read: ``<testsuites>`` for the run,
one ``<testsuite>`` per (benchmark, target) row (``name`` "BENCHMARK / TARGET"), and in it one
``<testcase>`` per item (``classname`` "viva.BENCHMARK.TARGET", ``name`` "item ID: first 80 characters of
the question") and one ``<testcase name="Score">`` for the row. An item's case is an ``<error>`` when a
session of it failed, ``<skipped>`` when none finished (not examined or unfinished), a ``<failure>`` when
its score (the mean over its finished sessions, the epochs) is under the target's threshold, else it
passes; its ``<system-out>`` gives the score and the sessions. The ``Score`` case is a ``<failure>`` when the
row is below its threshold; its ``<system-out>`` gives the Score with its 95% interval, n and, with
epochs, the per-item spread. Without a threshold, nothing is a ``<failure>``. Suites' and the root's
``tests``, ``failures``, ``errors`` and ``skipped`` count their cases.
"""

from __future__ import annotations

from typing import Any
from xml.etree import ElementTree as ET

from engine.store import Store


def threshold_for(target: str, config: Any, fail_under: float | None) -> float | None:
    """The Score a target must reach: its endpoint's ``min_score``, else ``fail_under`` (None: no gate)."""
    from engine.interview.targets import split_label

    spec, _ = split_label(target)
    endpoint = (getattr(config, "targets", None) or {}).get(spec)
    if endpoint is not None and endpoint.min_score is not None:
        return float(endpoint.min_score)
    return fail_under


def below_threshold(board: dict[str, Any], config: Any, fail_under: float | None = None) -> list[dict[str, Any]]:
    """The leaderboard rows under their threshold (module docstring), each ``{"benchmark", "target",
    "score", "threshold", "line"}`` with ``line`` the one line to print."""
    out = []
    for row in board["rows"]:
        threshold = threshold_for(row["target"], config, fail_under)
        if threshold is None:
            continue
        score = row["score"]
        if score is not None and score >= threshold:
            continue
        shown = "no finished session" if score is None else f"Score {score:.1f} < {threshold:g}"
        where = "min_score" if threshold != fail_under else "--fail-under"
        out.append({"benchmark": row["benchmark"], "target": row["target"], "score": score, "threshold": threshold,
                    "line": f"below threshold: {row['target']} on {row['benchmark']}: {shown} ({where})"})
    return out


def _count(element: ET.Element, cases: list[ET.Element]) -> None:
    element.set("tests", str(len(cases)))
    for tag, attr in (("failure", "failures"), ("error", "errors"), ("skipped", "skipped")):
        element.set(attr, str(sum(1 for c in cases if c.find(tag) is not None)))


def render_junit(store: Store, run_id: int, config: Any = None, fail_under: float | None = None) -> str:
    """The run as JUnit XML (module docstring), UTF-8 with an XML declaration, ending with one line break.

    Raises:
        KeyError: the run does not exist.
    """
    from engine.metrics.leaderboard import leaderboard
    from engine.termsafe import termsafe

    run = store.one("SELECT id, created_at FROM runs WHERE id = ?", (run_id,))
    if run is None:
        raise KeyError(f"run {run_id} does not exist")
    ids = [r["id"] for r in store.query("SELECT id FROM sessions WHERE run_id = ? ORDER BY id", (run_id,))]
    board = leaderboard(store, ids)
    below = {(b["benchmark"], b["target"]) for b in below_threshold(board, config, fail_under)}
    sessions = store.query(
        "SELECT s.id, s.target, s.status, s.score, s.error, s.item_id, COALESCE(b.name, '-') AS benchmark, "
        "i.question FROM sessions s LEFT JOIN benchmarks b ON b.id = s.benchmark_id "
        "LEFT JOIN items i ON i.id = s.item_id WHERE s.run_id = ? ORDER BY s.id", (run_id,))
    root = ET.Element("testsuites", name=f"viva run {run_id}", timestamp=str(run["created_at"]))
    every: list[ET.Element] = []
    for row in board["rows"]:
        bench, target = row["benchmark"], row["target"]
        threshold = threshold_for(target, config, fail_under)
        suite = ET.SubElement(root, "testsuite", name=f"{bench} / {target}")
        props = ET.SubElement(suite, "properties")
        for name, value in (("target", target), ("benchmark", bench),
                            ("threshold", "none" if threshold is None else f"{threshold:g}")):
            ET.SubElement(props, "property", name=name, value=value)
        cases: list[ET.Element] = []
        by_item: dict[int, list[dict[str, Any]]] = {}
        for s in sessions:
            if s["benchmark"] == bench and s["target"] == target:
                by_item.setdefault(s["item_id"] if s["item_id"] is not None else -s["id"], []).append(s)
        classname = f"viva.{bench}.{target}"
        for item, group in by_item.items():
            question = " ".join(termsafe(group[0]["question"] or "").split())
            name = f"item {item}: {question[:80]}" if item >= 0 else f"session {-item}"
            case = ET.SubElement(suite, "testcase", classname=classname, name=name)
            finished = [s for s in group if s["status"] == "finished" and s["score"] is not None]
            failed = [s for s in group if s["status"] == "failed"]
            score = sum(s["score"] for s in finished) / len(finished) if finished else None
            if failed:
                ET.SubElement(case, "error", message=f"session {failed[0]['id']} failed",
                              type="session-failed").text = termsafe(failed[0]["error"] or "")
            elif score is None:
                statuses = ", ".join(sorted({s["status"].replace("_", " ") for s in group}))
                ET.SubElement(case, "skipped", message=f"not scored ({statuses})")
            elif threshold is not None and score < threshold:
                ET.SubElement(case, "failure", message=f"score {score:.1f} < {threshold:g}", type="below-threshold")
            out = ET.SubElement(case, "system-out")
            out.text = (f"score {'–' if score is None else format(score, '.1f')} over {len(finished)} finished "
                        f"session(s): {', '.join(str(s['id']) for s in group)}")
            cases.append(case)
        fig = row["figures"]["score"]
        total = ET.SubElement(suite, "testcase", classname=classname, name="Score")
        if (bench, target) in below:
            shown = "no finished session" if row["score"] is None else f"Score {row['score']:.1f}"
            ET.SubElement(total, "failure", message=f"{shown} < {threshold:g}", type="below-threshold")
        ci = "" if fig["ci"] is None else f" [{fig['ci'][0]:.1f}, {fig['ci'][1]:.1f}]"
        spread = f"; per-item spread {row['epochs']['spread']:.1f}" if row.get("epochs") else ""
        ET.SubElement(total, "system-out").text = (
            f"Score {'–' if row['score'] is None else format(row['score'], '.1f')}{ci} over n={fig['n']} items{spread}")
        cases.append(total)
        _count(suite, cases)
        every += cases
    _count(root, every)
    ET.indent(root)
    return '<?xml version="1.0" encoding="UTF-8"?>\n' + ET.tostring(root, encoding="unicode") + "\n"
