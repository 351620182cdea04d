"""Small benchmarks and scripted replies shared by the interview tests."""

from __future__ import annotations

import json
import re
from typing import Any

from engine.bench.items import add_item, create_benchmark
from engine.bench.rubric import create_rubric
from engine.store import Store
from tests.fakes.openai_server import GOLD_JUDGE_PROMPT, gold_judge_reply

CRITERIA = [
    {"text": "Oxygen is the most abundant element in the Earth's crust", "kind": "point", "weight": 2},
    {"text": "Plants release oxygen through photosynthesis", "kind": "point", "weight": 1},
    {"text": "Liquid oxygen is pale blue", "kind": "point", "weight": 1},
    {"text": "Claims that oxygen is a noble gas", "kind": "deduction", "weight": 1},
]
KEYWORDS = {"c1": "abundant", "c2": "photosynthesis", "c3": "blue", "c4": "noble gas"}

ANSWERS = [
    "Oxygen is the most abundant element in the Earth's crust.",
    "Plants release oxygen through photosynthesis.",
    "I have nothing more to add about that.",
    "Liquid oxygen is pale blue.",
    "Oxygen is a noble gas.",
    "I was wrong about that; oxygen is very reactive.",
    "Nothing else comes to mind.",
    "That is all I know.",
]


def make_bench(store: Store, name: str = "oxy", n_items: int = 1) -> list[int]:
    """A benchmark of adaptive oxygen items, each with the 4-criterion rubric."""
    ids = []
    with store.transaction():
        bid = create_benchmark(store, name, "test")
        for i in range(n_items):
            item = add_item(store, bid, i, protocol="adaptive", topic="oxygen",
                            question=f"What do you know about oxygen? (item {i})",
                            reference="Most abundant element in the crust; photosynthesis; liquid is pale blue.")
            create_rubric(store, item, CRITERIA, author="human")
            ids.append(item)
    return ids


def make_task_bench(store: Store, name: str = "echo") -> int:
    with store.transaction():
        bid = create_benchmark(store, name, "test")
        item = add_item(store, bid, 0, protocol="task", topic="echo",
                        question="Ask the agent to repeat the words Hello World exactly.", meta={"max_rounds": 4})
        create_rubric(store, item, [
            {"text": "The agent's last message is exactly Hello World", "kind": "code", "weight": 1,
             "eval_code": 'last = chat_history[-1]\nassert isinstance(last, HumanMessage) and '
                          'last.content == "Hello World", f"got {last.content!r}"'},
            {"text": "The agent repeats the words Hello World", "kind": "point", "weight": 2},
        ], author="human")
    return item


def target_reply(body: dict[str, Any]) -> str:
    """The scripted target: the t-th answer for the t-th question."""
    t = sum(1 for m in body["messages"] if m["role"] == "user") - 1
    return ANSWERS[t % len(ANSWERS)]


def _between(text: str, start: str, end: str) -> str:
    i = text.find(start)
    if i < 0:
        return ""
    j = text.find(end, i + len(start))
    return text[i + len(start): j if j >= 0 else None]


def judge_reply(body: dict[str, Any]) -> str:
    """A scripted judge: a criterion is met when its keyword is in the summary plus the answer."""
    user = body["messages"][-1]["content"]
    ids = re.findall(r'"id": "(c\d+)"', user)
    summary = _between(user, "before this answer:\n", "\n\nLatest question")
    m = re.search(r"<<<CANDIDATE ([0-9a-f]{16})>>>\n(.*?)\n<<<END CANDIDATE \1>>>", user, re.DOTALL)
    answer = m.group(2) if m else ""
    if "I was wrong" in answer:
        summary = summary.replace("Oxygen is a noble gas.", "")
    new_summary = (summary.replace("(nothing yet)", "").strip() + " " + answer).strip()
    verdicts = [{"id": cid, "met": KEYWORDS[cid] in new_summary.lower(),
                 "in_answer": KEYWORDS[cid] in answer.lower(), "rationale": "keyword check"}
                for cid in ids]
    return json.dumps({"verdicts": verdicts, "summary": new_summary})


def is_target(req) -> bool:
    return bool(req.body.get("stream"))


def _turns_in(body: dict[str, Any]) -> int:
    """A question's position: the highest turn number in a kernel prompt's conversation, plus one (the
    oldest turns are cut from a long conversation, so a count of them would repeat a question)."""
    numbers = [int(n) for n in re.findall(r"\[turn (\d+)", body["messages"][-1]["content"])]
    return max(numbers) + 1 if numbers else 0


def script_llm_kernel(fake) -> None:
    """Route kernel, judge and target requests of the fake server."""
    fake.rule(is_target, target_reply)
    fake.rule(GOLD_JUDGE_PROMPT, gold_judge_reply)
    fake.rule("judge of an oral examination", judge_reply)
    # every question differs from those asked before (a repeated question is refused as degenerate)
    fake.rule("a FOLLOW-UP", lambda body: json.dumps({"question": f"What else do you know about oxygen? "
                                                                  f"({_turns_in(body)})"}))
    fake.rule("a CHALLENGE", lambda body: json.dumps({"question": f"Are you sure about that? ({_turns_in(body)})"}))
    fake.rule("You rate an oral examination", json.dumps(RATINGS))


RATINGS = {"accuracy": 8, "user_satisfaction": 7, "clarity": 9, "coherence": 6, "question_handling": 8,
           "challenge_handling": 5, "rationale": "Mostly right; it gave in once under challenge."}


def script_target_only(fake, delay: float = 0.0) -> None:
    fake.rule(is_target, lambda body: {"content": target_reply(body), "delay": delay})
