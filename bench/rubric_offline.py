"""SedarEval rubrics offline: the parse of per-unit, range and gate rubrics, and the offline estimate of
the reference answer against mute ("I don't know.") on SedarEval rows.

For each row with a ``score_standard`` and a reference: the rubric is parsed
(:func:`engine.bench.score_standard.parse_score_standard`) and the offline estimate
(:func:`engine.judge.rubric_judge.offline_estimate`) is computed for the reference answer and for
mute. Prints how many rows got an estimate, how often the reference scored above, equal to or below
mute, and how many criteria said "needs an LLM judge", by reason; ``--parses`` prints the parse of the
rubrics listed in ``PARSES`` (Markdown tables). Asserts nothing.

Run: ``python bench/rubric_offline.py ../shared/data/sedareval/test_first100.jsonl [--parses]``.
"""

from __future__ import annotations

import argparse
import collections
import json
import sys
from pathlib import Path
from types import SimpleNamespace

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

PARSES = (
    ("per-unit, a first-100 row (header 指令+3)", "指令+3：四点需求每错1个扣1分，3分扣完为止\n文采+2"),
    ("per-unit, a first-100 row (每少一点)", "指令+2：通知中应包含的内容，每少一点-1，超过200字-1，扣完为止\n文采+3"),
    ("per-unit, the issue's 5分扣完为止 (deductions only)", "写出五个朝代，错一个-1分，5分扣完为止"),
    ("range, the issue's 扣1-2分 (written for this note)", "翻译正确+3，语病扣1-2分\n通顺+2"),
    ("gates, first-100 row 2f6baedf", "司机口吻+2分（欢迎乘坐、陈述+谢谢理解/配合等服务者口吻），态度谦逊+3分（无暴躁/冲突语气即可）\n"
                                     "若第三人称口吻无其他问题整题2分\n若道歉让顾客久等了整题直接0分"),
    ("gate, first-100 row 3f7b959f", "符合人设整体风格颓丧+3分（结尾正能量不给分）；字数符合要求+1分；文采+1分；太宰治外漏直接0分"),
    ("gate, the issue's 未纠错0分 (written for this note)", "A2：纠正回答+3，未纠错0分\nA1正确+2"),
)

MUTE = "I don't know."


def criteria_of(standard: str) -> list[SimpleNamespace]:
    """The parsed criteria with cids c1, c2...."""
    from engine.bench.score_standard import parse_score_standard

    return [SimpleNamespace(cid=f"c{i}", text=c.text, kind=c.kind, weight=c.weight)
            for i, c in enumerate(parse_score_standard(standard).criteria, 1)]


def reference_vs_mute(path: Path) -> None:
    from engine.judge.rubric_judge import NEEDS_LLM, offline_estimate

    rows = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]
    above = equal = below = none = points = needs = 0
    reasons: collections.Counter[str] = collections.Counter()
    table = []
    for row in rows:
        standard, reference = row["meta"].get("score_standard"), row["meta"].get("reference")
        if not isinstance(standard, str) or not standard.strip() or not isinstance(reference, str):
            continue
        crit = criteria_of(standard)
        own = offline_estimate(row["query"], reference, crit, reference)
        points += len(crit)
        needs += own.needs_llm
        reasons.update(p.evidence.split(": ", 1)[1] for p in own.points if p.status == NEEDS_LLM)
        if own.score is None:
            none += 1
            continue
        mute = offline_estimate(row["query"], reference, crit, MUTE).score
        sample = offline_estimate(row["query"], reference, crit, row.get("answer") or "").score
        above, equal, below = above + (own.score > mute), equal + (own.score == mute), below + (own.score < mute)
        table.append(f"| {row['id'][:8]} | {'/'.join(row['meta']['category'][:2])} | {own.score:.2f} | {mute:.2f} | "
                     f"{sample:.2f} | {own.judged_weight:g} of {own.total_weight:g} | {own.needs_llm} of {len(crit)} |")
    print(f"rows {len(rows)}; estimated {above + equal + below}; reference > mute {above}, = {equal}, < {below}; "
          f"needs an LLM judge for the whole item: {none}; criteria {points}, of which 'needs an LLM judge': {needs}")
    for reason, n in reasons.most_common():
        print(f"  {n} needs an LLM judge: {reason}")
    print("\n| row | category | reference | mute | the row's sample answer | points judged (weight) | needs an LLM judge |")
    print("|---|---|---|---|---|---|---|")
    print("\n".join(table))


def parses() -> None:
    from engine.bench.score_standard import gate_value, parse_score_standard, range_bounds, unit_rule

    for title, text in PARSES:
        parsed = parse_score_standard(text)
        print(f"**{title}**\n\n```\n{text}\n```\n")
        print("| cid | kind | weight | text | unit, rate, cap | range | gate |\n|---|---|---|---|---|---|---|")
        for i, c in enumerate(parsed.criteria, 1):
            u, b, g = unit_rule(c), range_bounds(c), gate_value(c)
            unit = "" if u is None else f"{u[0] or '–'}, {u[1]:g}, {u[2]:g}"
            print(f"| c{i} | {c.kind} | {c.weight:g} | {c.text} | {unit} | {'' if b is None else f'{b[0]:g}–{b[1]:g}'} "
                  f"| {'' if g is None else f'{g:g}'} |")
        print(f"\npoints total {parsed.total:g}\n")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("jsonl", type=Path, nargs="?", help="SedarEval rows (JSONL)")
    parser.add_argument("--parses", action="store_true", help="print the parse of the listed rubrics instead")
    args = parser.parse_args()
    if args.parses:
        parses()
    elif args.jsonl:
        reference_vs_mute(args.jsonl)
    else:
        parser.error("give a SedarEval JSONL file, or --parses")


if __name__ == "__main__":
    main()
