"""The rubric (SedarEval) protocol end to end: real client, fake server, real SQLite, real ONNX embedder.

The judge is scripted on the fake server: it reads the candidate's answer between the call's nonce
markers and replies with reasoning and a final score in the item's language.
"""

from __future__ import annotations

import json
import re
from typing import Any

import pytest
from click.testing import CliRunner

from engine.bench.items import add_item, create_benchmark
from engine.bench.rubric import create_rubric
from engine.config import Config
from engine.events.fold import SessionView
from engine.interview import control
from engine.interview.queries import session_detail
from engine.interview.run import RunRequest, execute_run, plan_run, rescore_session, run_sessions
from engine.metrics.rubric_board import rubric_leaderboard, session_judgement
from engine.report import export_session
from engine.runtime import Runtime

ZH_CRITERIA = [{"text": "有替代方案", "kind": "point", "weight": 1}, {"text": "文采", "kind": "point", "weight": 4}]
EN_CRITERIA = [
    {"text": "Oxygen is the most abundant element in the Earth's crust", "kind": "point", "weight": 2},
    {"text": "Plants release oxygen through photosynthesis", "kind": "point", "weight": 2},
    {"text": "Liquid oxygen is pale blue", "kind": "point", "weight": 1},
    {"text": "Claims that oxygen is a noble gas", "kind": "deduction", "weight": 1},
]
MARKED = re.compile(r"<<<ANSWER (?P<nonce>[0-9a-f]+)>>>\n(?P<text>.*?)\n<<<END ANSWER (?P=nonce)>>>", re.S)


@pytest.fixture
def runtime(home, endpoint):
    rt = Runtime(home=home, config=Config(kernel=endpoint))
    yield rt
    rt.store.close()


def add_rubric_item(store, bid: int, ord: int, question: str, criteria: list[dict[str, Any]], *,
                    category: list[str], turns: list[str] | None = None, language: str | None = None,
                    meta: dict[str, Any] | None = None) -> int:
    m = {"category": category, **({"language": language} if language else {}), **(meta or {})}
    item = add_item(store, bid, ord, protocol="rubric", question=question, turns=turns, topic=category[0],
                    reference="参考答案" if language == "zh" else "Reference answer.", meta=m)
    create_rubric(store, item, criteria, author="importer")
    return item


def is_target(req) -> bool:
    return bool(req.body.get("stream"))


def is_judge(req) -> bool:
    return not req.body.get("stream") and "<<<ANSWER " in req.text


def marked(body: dict[str, Any]) -> str:
    """The candidate's text between the markers of the call's first user message."""
    user = next(m["content"] for m in body["messages"] if m["role"] == "user")
    return "\n".join(m.group("text") for m in MARKED.finditer(user))


def judge_calls(fake) -> list[Any]:
    return [r for r in fake.chat_requests() if is_judge(r)]


def rubric_events(store, sid: int) -> list[dict[str, Any]]:
    return [e.payload for e in store.events(0, sid) if e.kind == "rubric.scored"]


def target_spec(fake, model: str = "fake-target") -> str:
    return f"openai:{model}@{fake.base_url}"


async def run_bench(runtime, bench: str, targets: list[str], kernel: str = "config", **kw: Any) -> list[int]:
    run_id = plan_run(runtime, RunRequest(bench=bench, targets=targets, kernel=kernel, **kw))
    errors = await execute_run(runtime, run_id)
    assert not any(errors.values()), errors
    return run_sessions(runtime, run_id)


async def test_chinese_and_english_final_score_formats(runtime, fake_openai):
    with runtime.store.transaction():
        bid = create_benchmark(runtime.store, "sed", "sedareval")
        zh = add_rubric_item(runtime.store, bid, 0, "请编辑一条短信给领导拒绝加班。", ZH_CRITERIA,
                             category=["创作", "文案创作", "日常沟通"], language="zh")
        en = add_rubric_item(runtime.store, bid, 1, "What do you know about oxygen?", EN_CRITERIA,
                             category=["QA", "science"], language="en")
    fake_openai.rule(is_target, lambda body: "尊敬的领导，今天家里有事，无法加班，我明早提前到。"
                     if "领导" in body["messages"][-1]["content"] else "Oxygen is the most abundant element.")
    # the last statement wins: a draft score, then the final one, in both Chinese forms
    fake_openai.rule(lambda r: is_judge(r) and "最终得分" in r.text,
                     "评分过程：有替代方案，+1；文采一般。\n初步最终得分：2分\n复核后，**最终得分为：** 4")
    fake_openai.rule(lambda r: is_judge(r) and "Final score" in r.text,
                     "Scoring process: point 1 earned (+2); the rest missing.\nFinal score: 1.5\n\nFinal score: 3.5")
    sids = await run_bench(runtime, "sed", [target_spec(fake_openai)])
    by_item = {session_detail(runtime.store, s)["session"]["item_id"]: s for s in sids}

    zh_detail, en_detail = session_detail(runtime.store, by_item[zh]), session_detail(runtime.store, by_item[en])
    assert zh_detail["session"]["protocol"] == "rubric" and zh_detail["session"]["status"] == "finished"
    assert zh_detail["session"]["score"] == pytest.approx(100 * 4 / 5)
    assert en_detail["session"]["score"] == pytest.approx(100 * 3.5 / 5)
    [zh_turn], [en_turn] = zh_detail["turns"], en_detail["turns"]
    assert zh_turn["score"] == pytest.approx(0.8) and zh_turn["delta"] is None
    assert "复核后" in zh_turn["summary"]  # the judge's reasoning is kept on the turn
    assert en_turn["score"] == pytest.approx(0.7) and en_turn["summary"].startswith("Scoring process")
    [ev_zh] = rubric_events(runtime.store, by_item[zh])
    assert (ev_zh["score"], ev_zh["status"], ev_zh["attempts"], ev_zh["offline_estimate"]) == (4.0, "scored", 1, False)
    assert ev_zh["prompt_source"] == "rubric" and "复核后" in ev_zh["reasoning"]
    [ev_en] = rubric_events(runtime.store, by_item[en])
    assert ev_en["score"] == 3.5 and ev_en["problems"] == []

    calls = judge_calls(fake_openai)
    assert len(calls) == 2  # one judge call per session
    zh_call = next(c for c in calls if "最终得分" in c.text)
    assert marked(zh_call.body) == "尊敬的领导，今天家里有事，无法加班，我明早提前到。"
    assert "+1分: 有替代方案" in zh_call.text and "+4分: 文采" in zh_call.text  # the rubric's points
    en_call = next(c for c in calls if "Final score" in c.text)
    assert "Deduction points:\n1. -1: Claims that oxygen is a noble gas" in en_call.text

    # the fold keeps the judgement on the view and on the last turn
    view = SessionView(by_item[zh])
    view.apply_all(runtime.store.events(0, by_item[zh]))
    assert view.rubric_judgement["score"] == 4.0 and view.turns[-1].rubric_judgement["status"] == "scored"
    # a judged session is not judged again on resume: same score, no new judge call
    await execute_run(runtime, zh_detail["session"]["run_id"])
    assert len(judge_calls(fake_openai)) == 2


async def test_missing_score_is_reasked_then_cannot_judge(runtime, fake_openai):
    with runtime.store.transaction():
        bid = create_benchmark(runtime.store, "sed", "sedareval")
        bad = add_rubric_item(runtime.store, bid, 0, "写一首关于莲花的诗。", ZH_CRITERIA,
                              category=["创作", "诗歌"], language="zh")
        late = add_rubric_item(runtime.store, bid, 1, "Describe oxygen.", EN_CRITERIA, category=["QA"], language="en")
    fake_openai.rule(is_target, "An answer.")
    # Chinese item: no score, then a negative one (SedarEval's "cannot judge"), then no score again
    replies = iter(["评分过程：答案不完整。", "评分过程：无法评估。最终得分：-1分", "我无法给出分数。"])
    fake_openai.rule(lambda r: is_judge(r) and "最终得分" in r.text, lambda body: next(replies))
    # English item: the first reply lacks a score, the re-ask gets one
    english = iter(["The answer is short.", "Scoring process: nothing earned.\nFinal score: 0"])
    fake_openai.rule(lambda r: is_judge(r) and "Final score" in r.text, lambda body: next(english))
    sids = await run_bench(runtime, "sed", [target_spec(fake_openai)])
    by_item = {session_detail(runtime.store, s)["session"]["item_id"]: s for s in sids}

    zh_calls = [c for c in judge_calls(fake_openai) if "最终得分" in c.text]
    assert len(zh_calls) == 3  # the first ask and judge_repairs = 2 re-asks
    # each re-ask is the prompt and what was wrong, numbered: never the bad replies (issue 23: they grew the
    # prompt from 1,129 to 2,811 tokens)
    assert [len(c.messages) for c in zh_calls] == [2, 3, 3]
    assert all(m["role"] != "assistant" for c in zh_calls for m in c.messages)
    assert "no final score line" in zh_calls[1].messages[2]["content"]
    assert "negative final score -1" in zh_calls[2].messages[2]["content"]

    row = session_detail(runtime.store, by_item[bad])
    assert row["session"]["status"] == "finished" and row["session"]["score"] is None
    assert row["turns"][0]["score"] is None
    [event] = rubric_events(runtime.store, by_item[bad])
    assert (event["status"], event["score"], event["attempts"]) == ("cannot judge", None, 3)
    assert event["problems"][0].startswith("no final score line") and "negative" in event["problems"][1]

    [late_event] = rubric_events(runtime.store, by_item[late])
    assert (late_event["status"], late_event["score"], late_event["attempts"]) == ("scored", 0.0, 2)
    assert session_detail(runtime.store, by_item[late])["session"]["score"] == 0.0

    # excluded from the averages and counted
    [entry] = rubric_leaderboard(runtime.store)
    assert entry["overall"] == {"count": 1, "cannot_judge": 1, "total": 0.0, "figure": 0.0}
    creation = next(c for c in entry["categories"] if c["category"] == ["创作"])
    assert (creation["count"], creation["cannot_judge"], creation["figure"]) == (0, 1, None)
    # the per-target table averages only the judged session
    from engine.metrics.sessions import target_table

    [row] = target_table(runtime.store, sids)
    assert row["score"] == 0.0 and row["conversations"] == 2 and row["finished"] == 2


async def test_multi_turn_item_is_asked_as_separate_user_messages(runtime, fake_openai):
    turns = ["把这句话变成间接引语：他说：“我很累。”", "再把人称换成第一人称。", "最后用英文说一遍。"]
    prompt = ("【问题】{history_chat1}\n{history_chat2}\n{history_chat3}\n【待评估模型】\nA1:{response1}\n"
              "A2:{response2}\nA3:{response3}\n【评分标准】\nA1正确+2，A2正确+2，A3正确+1\n请给出最终得分：N分")
    with runtime.store.transaction():
        bid = create_benchmark(runtime.store, "sed", "sedareval")
        add_rubric_item(runtime.store, bid, 0, "\n".join(f"Q{i}: {t}" for i, t in enumerate(turns, 1)),
                        [{"text": "A1正确", "kind": "point", "weight": 2}, {"text": "A2正确", "kind": "point", "weight": 2},
                         {"text": "A3正确", "kind": "point", "weight": 1}],
                        category=["对话", "多轮对话", "改写"], turns=turns, language="zh",
                        meta={"judge_prompt": prompt, "system_prompt": "你是评分助手。"})

    def target(body: dict[str, Any]) -> str:
        n = sum(1 for m in body["messages"] if m["role"] == "user")
        return f"第{n}轮的回答"

    fake_openai.rule(is_target, target)
    fake_openai.rule(is_judge, "A1正确+2，A2正确+2，A3错误。\n最终得分：4分")
    [sid] = await run_bench(runtime, "sed", [target_spec(fake_openai)], protocol="rubric")

    target_calls = [r for r in fake_openai.chat_requests() if is_target(r)]
    assert len(target_calls) == 3
    for t, call in enumerate(target_calls):
        users = [m["content"] for m in call.messages if m["role"] == "user"]
        assistants = [m["content"] for m in call.messages if m["role"] == "assistant"]
        assert users == turns[:t + 1]  # each turn its own user message, the earlier answers in between
        assert assistants == [f"第{k}轮的回答" for k in range(1, t + 1)]
    detail = session_detail(runtime.store, sid)
    assert [t["question"] for t in detail["turns"]] == turns
    assert [t["action"] for t in detail["turns"]] == ["initial", "follow-up", "follow-up"]
    assert [t["score"] for t in detail["turns"]] == [None, None, pytest.approx(0.8)]  # scored once, at the end
    [call] = judge_calls(fake_openai)
    assert call.messages[0]["content"].startswith("你是评分助手。")  # the item's own auto_prompt
    user = call.messages[1]["content"]
    for k in range(1, 4):
        assert turns[k - 1] in user and re.search(rf"A{k}:<<<ANSWER [0-9a-f]+>>>\n第{k}轮的回答\n", user)
    [event] = rubric_events(runtime.store, sid)
    assert event["prompt_source"] == "auto_prompt" and event["turn"] == 2 and event["score"] == 4.0
    assert detail["session"]["score"] == pytest.approx(80.0)


ITEMS = [  # category, score given to target A, to target B (None: the judge never gives a score)
    (["对话", "角色扮演", "情景模拟"], 4, 5),
    (["对话", "角色扮演", "名人模仿"], 3, 5),
    (["问答", "常识问答", "常识"], None, 2.5),
    (["问答"], 5, 0),
]


def _board_bench(store) -> list[int]:
    with store.transaction():
        bid = create_benchmark(store, "board", "sedareval")
        return [add_rubric_item(store, bid, i, f"问题{i}：请回答。", ZH_CRITERIA, category=cat, language="zh")
                for i, (cat, _, _) in enumerate(ITEMS)]


def _script_board(fake) -> None:
    fake.rule(is_target, lambda body: f"{body['model']}:{body['messages'][-1]['content'][:3]}")

    def judge(body: dict[str, Any]) -> str:
        model, question = marked(body).split(":")
        score = ITEMS[int(question[2])][1 if model == "model-a" else 2]
        return "评分过程：无法判断。" if score is None else f"评分过程：按标准打分。\n最终得分：{score:g}分"

    fake.rule(is_judge, judge)


async def test_category_board_arithmetic_through_real_sessions(runtime, fake_openai):
    _board_bench(runtime.store)
    _script_board(fake_openai)
    a, b = target_spec(fake_openai, "model-a"), target_spec(fake_openai, "model-b")
    sids = await run_bench(runtime, "board", [a, b])
    entries = rubric_leaderboard(runtime.store, sids)
    by_target = {e["target"]: e for e in entries}
    assert [e["scoring"] for e in entries] == ["judge", "judge"]
    ea, eb = by_target[a], by_target[b]
    # A: 4 + 3 + 5 over 3 scored items (one cannot judge) = 12 × 100 / 15 = 80
    assert (ea["overall"]["count"], ea["overall"]["cannot_judge"]) == (3, 1)
    assert ea["overall"]["figure"] == pytest.approx(80.0)
    # B: 5 + 5 + 2.5 + 0 = 12.5 × 100 / 20 = 62.5
    assert eb["overall"]["figure"] == pytest.approx(62.5) and eb["overall"]["cannot_judge"] == 0
    cats_a = {(c["level"], tuple(c["category"])): c for c in ea["categories"]}
    cats_b = {(c["level"], tuple(c["category"])): c for c in eb["categories"]}
    assert cats_a[(1, ("对话",))]["figure"] == pytest.approx(70.0)  # (4 + 3) × 100 / 10
    assert cats_a[(2, ("对话", "角色扮演"))]["figure"] == pytest.approx(70.0)
    assert cats_a[(3, ("对话", "角色扮演", "名人模仿"))]["figure"] == pytest.approx(60.0)
    assert cats_a[(1, ("问答",))]["figure"] == pytest.approx(100.0) and cats_a[(1, ("问答",))]["cannot_judge"] == 1
    assert cats_a[(3, ("问答", "常识问答", "常识"))]["figure"] is None
    assert ea["macro"] == pytest.approx((70 + 100) / 2)
    assert cats_b[(1, ("问答",))]["figure"] == pytest.approx(25.0)  # (2.5 + 0) × 100 / 10
    assert cats_b[(2, ("问答", "常识问答"))]["figure"] == pytest.approx(50.0)
    assert eb["macro"] == pytest.approx((100 + 25) / 2)
    assert entries[0]["target"] == a  # best overall first
    assert sorted(ea["sessions"] + eb["sessions"]) == sorted(sids)


def test_cli_run_prints_the_rubric_board(home, fake_openai):
    from tui.cli import main

    runtime = Runtime(home=home, config=Config())
    _board_bench(runtime.store)
    runtime.close()
    _script_board(fake_openai)
    kernel = f"openai:fake-judge@{fake_openai.base_url}"
    a, b = target_spec(fake_openai, "model-a"), target_spec(fake_openai, "model-b")
    args = ["--home", str(home), "run", "--bench", "board", "--target", a, "--target", b, "--kernel", kernel,
            "--protocol", "rubric"]
    result = CliRunner().invoke(main, [*args, "--json"])
    assert result.exit_code == 0, result.output
    out = json.loads(result.stdout)
    board = {e["target"]: e for e in out["rubric"]}
    assert board[a]["overall"]["figure"] == pytest.approx(80.0) and board[b]["overall"]["figure"] == pytest.approx(62.5)
    result = CliRunner().invoke(main, args)
    assert result.exit_code == 0, result.output
    assert "rubric leaderboard (SedarEval)" in result.output
    assert "80.0 (3) +1 cj" in result.output and "62.5 (4)" in result.output
    assert "名人模仿" in result.output and "60.0 (1)" in result.output


async def test_offline_estimate_is_point_coverage_and_labelled(runtime, fake_openai):
    with runtime.store.transaction():
        bid = create_benchmark(runtime.store, "sed", "sedareval")
        add_rubric_item(runtime.store, bid, 0, "What do you know about oxygen?", EN_CRITERIA,
                        category=["QA", "science"], language="en")
    fake_openai.rule(is_target, "Oxygen is the most abundant element in the Earth's crust. Oxygen is a noble gas.")
    [sid] = await run_bench(runtime, "sed", [target_spec(fake_openai)], kernel="offline")
    assert not judge_calls(fake_openai)  # no LLM judge
    detail = session_detail(runtime.store, sid)
    [turn] = detail["turns"]
    met = {cid: bool(v["met"]) for cid, v in turn["verdicts"].items()}
    assert met == {"c1": True, "c2": False, "c3": False, "c4": True}
    assert all(v["rationale"].startswith("offline estimate: ") and v["source"] == "offline"
               for v in turn["verdicts"].values())
    # (2 − 1) / 5 of the rubric's total, on the 0–5 scale: 1.0
    [event] = rubric_events(runtime.store, sid)
    assert event["offline_estimate"] is True and event["score"] == pytest.approx(1.0)
    assert event["prompt_source"] == "coverage" and event["reasoning"].startswith("offline estimate")
    assert detail["session"]["score"] == pytest.approx(20.0)
    [entry] = rubric_leaderboard(runtime.store)
    assert entry["scoring"] == "offline estimate" and entry["offline_estimate"] is True
    assert entry["overall"]["figure"] == pytest.approx(20.0)
    md = export_session(runtime.store, sid, "md")
    assert "## Rubric judgement (offline estimate)" in md and "| score | 1 | out of 5; offline estimate" in md
    assert json.loads(export_session(runtime.store, sid, "json"))["rubric_judgement"]["offline_estimate"] is True

    # an evaluator's override of an offline verdict recomputes the estimate with the same rule
    result = control.override_verdict(runtime.store, sid, 0, "c2", True, note="it says so")
    assert result["score"] == pytest.approx((2 + 2 - 1) / 5) and result["session_score"] == pytest.approx(60.0)
    assert rubric_leaderboard(runtime.store)[0]["overall"]["figure"] == pytest.approx(60.0)


def test_cli_labels_offline_estimates(home, fake_openai):
    from tui.cli import main

    runtime = Runtime(home=home, config=Config())
    with runtime.store.transaction():
        bid = create_benchmark(runtime.store, "sed", "sedareval")
        add_rubric_item(runtime.store, bid, 0, "What do you know about oxygen?", EN_CRITERIA,
                        category=["QA", "science"], language="en")
    runtime.close()
    fake_openai.default = "Liquid oxygen is pale blue."
    result = CliRunner().invoke(main, ["--home", str(home), "run", "--bench", "sed", "--target",
                                       target_spec(fake_openai), "--kernel", "offline", "--live"])
    assert result.exit_code == 0, result.output
    assert "rubric score 1 / 5 (offline estimate)" in result.output  # the live line
    assert "(offline estimate)" in result.output.split("rubric leaderboard (SedarEval)")[1]  # the board's column


async def test_llm_judged_session_refuses_per_point_override_and_rescores(runtime, fake_openai):
    with runtime.store.transaction():
        bid = create_benchmark(runtime.store, "sed", "sedareval")
        item = add_rubric_item(runtime.store, bid, 0, "Describe oxygen.", EN_CRITERIA, category=["QA"], language="en")
    fake_openai.rule(is_target, "Oxygen is reactive.")
    scores = iter(["Final score: 2", "Rescored under the new rubric.\nFinal score: 4.5"])
    fake_openai.rule(is_judge, lambda body: next(scores))
    [sid] = await run_bench(runtime, "sed", [target_spec(fake_openai)])
    with pytest.raises(control.ControlError, match="per-point overrides apply to offline estimates only"):
        control.override_verdict(runtime.store, sid, 0, "c1", True, "per point")
    assert session_detail(runtime.store, sid)["session"]["score"] == pytest.approx(40.0)  # unchanged

    from engine.bench.rubric import Delete, edit_rubric

    version = edit_rubric(runtime.store, item, [Delete("c4")], author="human")
    targets_before = len([r for r in fake_openai.chat_requests() if is_target(r)])
    await rescore_session(runtime, sid, version.id)
    assert len([r for r in fake_openai.chat_requests() if is_target(r)]) == targets_before  # never re-asked
    last_call = judge_calls(fake_openai)[-1]
    assert "noble gas" not in last_call.text  # judged under the new rubric
    judgement = session_judgement(runtime.store, sid)
    assert (judgement["score"], judgement["rescore"], judgement["rubric_version_id"]) == (4.5, True, version.id)
    assert session_detail(runtime.store, sid)["session"]["score"] == pytest.approx(90.0)


def test_rubric_items_run_their_own_protocol_by_default(runtime):
    with runtime.store.transaction():
        bid = create_benchmark(runtime.store, "sed", "sedareval")
        add_rubric_item(runtime.store, bid, 0, "Describe oxygen.", EN_CRITERIA, category=["QA"], language="en")
    run_id = plan_run(runtime, RunRequest(bench="sed", targets=["openai:m@http://127.0.0.1:9/v1"], kernel="offline"))
    [sid] = run_sessions(runtime, run_id)
    assert session_detail(runtime.store, sid)["session"]["protocol"] == "rubric"  # the item's own protocol
