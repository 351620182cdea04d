"""Calibrate the offline judges on a labelled set: pick the threshold on one half, report the other.

Usage (from the repository root)::

    python bench/judge_calibration.py                 # bench/data/judge_calibration.jsonl
    python bench/judge_calibration.py --json          # the same report as JSON
    python bench/judge_calibration.py other.jsonl

The set (``bench/data/judge_calibration.jsonl``) holds criterion/answer pairs written for this
purpose on small documents of our own (``bench/data/judge_calibration_docs.jsonl``), never on the
SQuAD/MedQA samples. Each row: ``id``, ``kind`` (``fact``: a free-text criterion, judged by
:class:`engine.judge.freetext.FreeTextJudge`; ``gold``: a criterion with gold ``answers``, judged by
:func:`engine.judge.answers.judge_gold`), ``doc``, ``question``, ``criterion``, ``deduction``,
``answer``, ``style``, ``label`` (met or not, by hand) and ``split``. The split is a seeded hash of
the row's *fact group* (the same criterion's answers in every style fall in the same half), so the
holdout judges criteria the threshold never saw.

Free-text rows: the threshold is the one that maximises accuracy on the tune half (grid 0.30 to 0.90
by 0.01; ties: the median of the best). The holdout report gives the threshold, accuracy, the share
of negated facts credited, the share of echo-the-question wrong answers credited, and accuracy per
style. Goals: accuracy >= 0.9, negated credited <= 5%, echo-wrong credited <= 5%.

Gold rows: judged at the documented :data:`engine.judge.answers.GOLD_F1_THRESHOLD`; the report also
shows which threshold the tune half alone would pick.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import statistics
import sys
from collections import defaultdict
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))  # before bench/, whose engine.py would shadow the package

from engine.judge.answers import GOLD_F1_THRESHOLD, judge_gold  # noqa: E402
from engine.judge.freetext import DEFAULT_THRESHOLD, FreeTextJudge  # noqa: E402

DATA = ROOT / "bench" / "data" / "judge_calibration.jsonl"
SEED = "viva-judge-calibration/1"
GRID = [round(0.30 + 0.01 * i, 2) for i in range(61)]
GOALS = {"accuracy": 0.9, "negated_credited": 0.05, "echo_credited": 0.05}
_FIELDS = {"id": str, "kind": str, "doc": str, "question": str, "criterion": str, "deduction": bool,
           "answer": str, "style": str, "label": bool, "split": str}


class CalibrationDataError(ValueError):
    """A calibration row that cannot be used (the message names the file and line)."""


def fact_group(row: dict[str, Any]) -> str:
    """The group a row's split is drawn for: its document and criterion number (``honeybees/f1``)."""
    doc, rest = row["id"].split("-", 1)
    return f"{doc}/{rest.split('-', 1)[0]}"


def split_of(group: str, seed: str = SEED) -> str:
    """``holdout`` or ``tune`` from the SHA-256 of ``seed:group`` (even -> tune)."""
    return "holdout" if int(hashlib.sha256(f"{seed}:{group}".encode()).hexdigest(), 16) % 2 else "tune"


def load_rows(path: str | Path = DATA) -> list[dict[str, Any]]:
    """Read and check the calibration rows.

    Raises:
        CalibrationDataError: a line is not JSON, lacks a field, has a wrong type, a gold row has no
            ``gold`` list, an id repeats, or a split differs from the seeded hash.
    """
    path = Path(path)
    rows, seen = [], set()
    with path.open(encoding="utf-8") as fh:
        for n, line in enumerate(fh, 1):
            if not line.strip():
                continue
            where = f"{path}:{n}"
            try:
                row = json.loads(line)
            except json.JSONDecodeError as exc:
                raise CalibrationDataError(f"{where}: not valid JSON ({exc.msg}); fix or remove the line") from None
            for name, kind in _FIELDS.items():
                if not isinstance(row.get(name), kind):
                    raise CalibrationDataError(f"{where}: field {name!r} must be a {kind.__name__}, "
                                               f"got {row.get(name)!r}")
            if row["kind"] not in ("fact", "gold"):
                raise CalibrationDataError(f"{where}: kind must be 'fact' or 'gold', got {row['kind']!r}")
            if row["kind"] == "gold" and not (isinstance(row.get("gold"), list) and row["gold"]):
                raise CalibrationDataError(f"{where}: a gold row needs a non-empty 'gold' list of answers")
            if row["id"] in seen:
                raise CalibrationDataError(f"{where}: id {row['id']!r} appears twice; ids must be unique")
            seen.add(row["id"])
            if row["split"] != split_of(fact_group(row)):
                raise CalibrationDataError(f"{where}: split {row['split']!r} is not the seeded hash's "
                                           f"{split_of(fact_group(row))!r}; regenerate the split")
            rows.append(row)
    if not rows:
        raise CalibrationDataError(f"{path}: no rows")
    return rows


def pick_threshold(pairs: Sequence[tuple[float, bool]], grid: Iterable[float] = GRID) -> float:
    """The grid threshold with the best accuracy of ``score >= t`` against the labels (median of ties)."""
    grid = list(grid)
    accs = [sum((s >= t) == label for s, label in pairs) for t in grid]
    best = max(accs)
    tied = [t for t, a in zip(grid, accs, strict=True) if a == best]
    return float(statistics.median_low(tied))


def _report(pairs: list[tuple[dict[str, Any], float]], threshold: float) -> dict[str, Any]:
    by_style: dict[str, list[bool]] = defaultdict(list)
    for row, score in pairs:
        by_style[row["style"]].append((score >= threshold) == row["label"])
    correct = [ok for oks in by_style.values() for ok in oks]

    def credited(style: str) -> float | None:
        hits = [score >= threshold for row, score in pairs if row["style"] == style]
        return sum(hits) / len(hits) if hits else None

    return {
        "threshold": threshold,
        "rows": len(pairs),
        "accuracy": sum(correct) / len(correct) if correct else None,
        "negated_credited": credited("negated"),
        "echo_credited": credited("echo-wrong"),
        "per_style": {s: {"accuracy": sum(v) / len(v), "rows": len(v)} for s, v in sorted(by_style.items())},
        "errors": sorted(row["id"] for row, score in pairs if (score >= threshold) != row["label"]),
    }


def calibrate_facts(rows: Sequence[dict[str, Any]], judge: FreeTextJudge | None = None,
                    splits: Sequence[str] = ("tune", "holdout"), threshold: float | None = None) -> dict[str, Any]:
    """Score the free-text rows, pick the threshold on ``tune`` (unless given) and report each split.

    Returns:
        ``{"threshold", "constant", "tune": report, "holdout": report}`` (a report per split asked).
    """
    judge = judge or FreeTextJudge()
    scored: dict[str, list[tuple[dict[str, Any], float]]] = defaultdict(list)
    for row in rows:
        if row["kind"] != "fact" or row["split"] not in splits:
            continue
        verdict = judge.judge(row["criterion"], row["answer"], row["question"], row["deduction"])
        scored[row["split"]].append((row, verdict.support))
    if threshold is None:
        if not scored.get("tune"):
            raise ValueError("no tune rows to pick the threshold on; pass a threshold")
        threshold = pick_threshold([(s, r["label"]) for r, s in scored["tune"]])
    out: dict[str, Any] = {"threshold": threshold, "constant": DEFAULT_THRESHOLD}
    for split in splits:
        out[split] = _report(scored.get(split, []), threshold)
    return out


def calibrate_gold(rows: Sequence[dict[str, Any]], splits: Sequence[str] = ("tune", "holdout")) -> dict[str, Any]:
    """Judge the gold-answer rows at :data:`GOLD_F1_THRESHOLD` and report each split.

    Returns:
        ``{"threshold", "tune_pick", "tune": report, "holdout": report}``.
    """
    scored: dict[str, list[tuple[dict[str, Any], float]]] = defaultdict(list)
    for row in rows:
        if row["kind"] != "gold" or row["split"] not in splits:
            continue
        verdict = judge_gold(row["answer"], row["gold"], row["question"])
        scored[row["split"]].append((row, verdict.f1))
    out: dict[str, Any] = {"threshold": GOLD_F1_THRESHOLD}
    if scored.get("tune"):
        out["tune_pick"] = pick_threshold([(s, r["label"]) for r, s in scored["tune"]],
                                          [round(0.05 * i, 2) for i in range(4, 20)])
    for split in splits:
        out[split] = _report(scored.get(split, []), GOLD_F1_THRESHOLD)
    return out


def goals_met(holdout: dict[str, Any]) -> dict[str, bool]:
    """The three holdout goals: accuracy >= 0.9, negated and echo-wrong credited <= 5%."""
    return {
        "accuracy": (holdout["accuracy"] or 0.0) >= GOALS["accuracy"],
        "negated_credited": (holdout["negated_credited"] or 0.0) <= GOALS["negated_credited"],
        "echo_credited": (holdout["echo_credited"] or 0.0) <= GOALS["echo_credited"],
    }


def _pct(x: float | None) -> str:
    return "n/a" if x is None else f"{100 * x:.1f}%"


def format_report(facts: dict[str, Any], gold: dict[str, Any]) -> str:
    """The human-readable report."""
    lines = []
    h = facts["holdout"]
    lines.append(f"Free-text judge (engine.judge.freetext): threshold {facts['threshold']:.2f} picked on the tune "
                 f"half ({facts['tune']['rows']} rows, accuracy {_pct(facts['tune']['accuracy'])}); "
                 f"shipped constant {facts['constant']:.2f}")
    lines.append(f"  holdout ({h['rows']} rows): accuracy {_pct(h['accuracy'])}, negated facts credited "
                 f"{_pct(h['negated_credited'])}, echo-the-question wrong answers credited {_pct(h['echo_credited'])}")
    for style, v in h["per_style"].items():
        lines.append(f"    {style:20s} {_pct(v['accuracy']):>7s}  ({v['rows']} rows)")
    goals = goals_met(h)
    lines.append("  goals: " + ", ".join(f"{k} {'met' if ok else 'MISSED'}" for k, ok in goals.items()))
    if h["errors"]:
        lines.append(f"  holdout errors: {', '.join(h['errors'])}")
    g = gold["holdout"]
    lines.append(f"Gold-answer judge (engine.judge.answers): F1 threshold {gold['threshold']:.2f} "
                 f"(the tune half alone would pick {gold.get('tune_pick', float('nan')):.2f}); "
                 f"tune accuracy {_pct(gold['tune']['accuracy'])}")
    lines.append(f"  holdout ({g['rows']} rows): accuracy {_pct(g['accuracy'])}, negated credited "
                 f"{_pct(g['negated_credited'])}, echo-wrong credited {_pct(g['echo_credited'])}")
    for style, v in g["per_style"].items():
        lines.append(f"    {style:20s} {_pct(v['accuracy']):>7s}  ({v['rows']} rows)")
    if g["errors"]:
        lines.append(f"  holdout errors: {', '.join(g['errors'])}")
    return "\n".join(lines)


def main(argv: Sequence[str] | None = None) -> int:
    """Run the calibration and print the report; exit status 1 when a holdout goal is missed."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("path", nargs="?", default=str(DATA), help="the calibration JSONL")
    parser.add_argument("--json", action="store_true", help="print the report as JSON")
    args = parser.parse_args(argv)
    try:
        rows = load_rows(args.path)
    except (OSError, CalibrationDataError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    facts = calibrate_facts(rows)
    gold = calibrate_gold(rows)
    if args.json:
        print(json.dumps({"facts": facts, "gold": gold}, indent=2))
    else:
        print(format_report(facts, gold))
    return 0 if all(goals_met(facts["holdout"]).values()) else 1


if __name__ == "__main__":
    raise SystemExit(main())
