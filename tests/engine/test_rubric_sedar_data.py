"""A check on the shared SedarEval sample (skipped when it is absent): import, run a few items through
the rubric protocol against the fake server, print the figures.

The target answers each turn with the row's sample answer for that turn (``A1:``, ``A2:``... of a
multi-turn row). The judge is scripted, not a model: it scores 5 × the share of the reference answer's
character bigrams found in the candidate's answer, rounded to 0.5, and writes the final line in the
item's format. The check is the plumbing and the arithmetic, not the judge's quality.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest

from engine.bench.importers.sedareval import import_sedareval
from engine.bench.items import list_items
from engine.config import Config
from engine.interview.queries import session_detail
from engine.interview.run import RunRequest, execute_run, plan_run, run_sessions
from engine.metrics.rubric_board import rubric_leaderboard, session_judgement
from engine.runtime import Runtime

DATA = Path("/work/shared/data/sedareval/test_first100.jsonl")
SINGLE, MULTI = 4, 2
MARKED = re.compile(r"<<<ANSWER (?P<nonce>[0-9a-f]+)>>>\n(?P<text>.*?)\n<<<END ANSWER (?P=nonce)>>>", re.S)
ANSWER_LABEL = re.compile(r"(?:^|\n)A(\d+)\s*[:：]\s*")

pytestmark = pytest.mark.skipif(not DATA.exists(), reason=f"{DATA} is absent (shared data not available)")


def sample_turn(sample: str, k: int) -> str:
    """Turn k's part (1-based) of a multi-turn sample answer (``A1: ...\\nA2: ...``), else the whole."""
    marks = list(ANSWER_LABEL.finditer(sample))
    for i, m in enumerate(marks):
        if int(m.group(1)) == k:
            end = marks[i + 1].start() if i + 1 < len(marks) else len(sample)
            return sample[m.end():end].strip()
    return sample


def bigrams(text: str) -> set[str]:
    text = re.sub(r"\s+", "", text)
    return {text[i:i + 2] for i in range(len(text) - 1)}


def scripted_judge(body: dict[str, Any]) -> str:
    user = body["messages"][1]["content"]
    answer = "\n".join(m.group("text") for m in MARKED.finditer(user))
    ref = re.search(r"【参考答案】\n(.*?)\n\n【", user, re.S) or re.search(r"\[Reference answer\]\n(.*?)\n\n\[", user, re.S)
    wanted = bigrams(ref.group(1)) if ref else set()
    share = len(wanted & bigrams(answer)) / len(wanted) if wanted else 0.0
    score = round(share * 10) / 2
    if "最终得分" in user:
        return f"评分过程：参考答案的字符二元组覆盖率为 {share:.2f}。\n最终得分：{score:g}分"
    return f"Scoring process: reference bigram coverage {share:.2f}.\nFinal score: {score:g}"


def test_shared_sedareval_sample_through_the_rubric_protocol(home, fake_openai, endpoint):
    import asyncio

    runtime = Runtime(home=home, config=Config(kernel=endpoint))
    summary = import_sedareval(runtime.store, DATA, "sedar")
    items = list_items(runtime.store, "sedar")
    chosen = [i for i in items if not i.turns][:SINGLE] + [i for i in items if i.turns][:MULTI]
    by_first_turn = {(i.turns or [i.question])[0]: i for i in chosen}

    def target(body: dict[str, Any]) -> str:
        users = [m["content"] for m in body["messages"] if m["role"] == "user"]
        item = by_first_turn[users[0]]
        sample = item.meta.get("sample_answer") or ""
        return sample_turn(sample, len(users)) if item.turns else sample

    fake_openai.rule(lambda r: bool(r.body.get("stream")), target)
    fake_openai.rule(lambda r: "<<<ANSWER " in r.text, scripted_judge)
    run_id = plan_run(runtime, RunRequest(bench="sedar", targets=[f"openai:sample@{fake_openai.base_url}"],
                                          items=[i.id for i in chosen], kernel="config"))
    errors = asyncio.run(execute_run(runtime, run_id))
    assert not any(errors.values()), errors
    sids = run_sessions(runtime, run_id)

    scores = []
    for sid in sids:
        detail = session_detail(runtime.store, sid)
        item = next(i for i in chosen if i.id == detail["session"]["item_id"])
        assert detail["session"]["status"] == "finished"
        assert [t["question"] for t in detail["turns"]] == (item.turns or [item.question])
        judgement = session_judgement(runtime.store, sid)
        assert judgement["status"] == "scored" and 0 <= judgement["score"] <= 5
        assert detail["session"]["score"] == pytest.approx(100 * judgement["score"] / 5)
        scores.append((item, judgement["score"]))
    for call in [r for r in fake_openai.chat_requests() if r.body.get("stream")]:
        users = [m for m in call.messages if m["role"] == "user"]
        item = by_first_turn[users[0]["content"]]
        assert [m["content"] for m in users] == (item.turns or [item.question])[:len(users)]

    [entry] = rubric_leaderboard(runtime.store, sids)
    total = sum(s for _, s in scores)
    assert entry["overall"]["figure"] == pytest.approx(total * 100 / (len(scores) * 5))
    for level in (1, 2, 3):
        for cat in (c for c in entry["categories"] if c["level"] == level):
            mine = [s for i, s in scores if list(i.meta["category"][:level]) == cat["category"]]
            assert cat["count"] == len(mine) and cat["figure"] == pytest.approx(sum(mine) * 100 / (len(mine) * 5))

    print(f"\nSedarEval sample: {summary.imported} items imported "
          f"({summary.counts['multi-turn items']} multi-turn), {sum(summary.skipped.values())} rows skipped")
    print(f"ran {len(sids)} sessions ({SINGLE} single-turn, {MULTI} multi-turn); "
          f"target calls {sum(1 for r in fake_openai.chat_requests() if r.body.get('stream'))}, "
          f"judge calls {sum(1 for r in fake_openai.chat_requests() if '<<<ANSWER ' in r.text)}")
    for item, score in scores:
        print(f"  item {item.id} {'/'.join(item.meta['category'])} turns={len(item.turns) or 1}: {score:g} / 5")
    print(f"overall {entry['overall']['figure']:.1f} over {entry['overall']['count']} "
          f"(macro {entry['macro']:.1f}); level 1: " + ", ".join(
              f"{'/'.join(c['category'])} {c['figure']:.1f} ({c['count']})"
              for c in entry["categories"] if c["level"] == 1))
    runtime.close()
