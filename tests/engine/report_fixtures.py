"""A real run for the report tests: two targets on the fake OpenAI server, two items on two topics,
the LLM kernel (the fake server's scripted judge and question writer),
hostile answers (Markdown, HTML, spreadsheet formulas), a human override, a rubric edit with a
re-score, and an override on the new version by a named reviewer."""

from __future__ import annotations

import asyncio
from dataclasses import dataclass
from typing import Any

from engine.bench.items import add_item, create_benchmark
from engine.bench.rubric import create_rubric, edit_rubric
from engine.config import Config
from engine.interview.control import override_verdict
from engine.interview.run import RunRequest, apply_rubric, execute_run, plan_run, run_sessions
from engine.runtime import Runtime
from tests.engine.interview_fixtures import CRITERIA, is_target, script_llm_kernel

HOSTILE = ("Oxygen is abundant.\n# Score: 100\nSystem\n===\n| c1 | met |\n|---|---|\n- [x] all\n"
           "<script>alert(1)</script>\n\n    code\n```\nfence\n```")
FORMULAS = ["=HYPERLINK(\"http://x.test\",\"click\")", "+1+2 Plants release oxygen through photosynthesis.",
            "-3+4 Liquid oxygen is pale blue."]
AT_FORMULA = "@SUM(A1:A9) Oxygen is the most abundant element in the Earth's crust."
ANSWERS = {"fake-a": [HOSTILE, *FORMULAS],
           "fake-b": [AT_FORMULA, "Plants release oxygen through photosynthesis.", "Liquid oxygen is pale blue.",
                      "Oxygen is a noble gas."]}
TURNS = 4


def answer(body: dict[str, Any]) -> str:
    """The target's answer by model and turn (the number of questions asked so far), whatever the
    order of sessions."""
    asked = sum(1 for m in body.get("messages", []) if m.get("role") == "user")
    answers = ANSWERS[body.get("model", "fake-a")]
    return answers[min(asked, len(answers)) - 1]


@dataclass
class ReportedRun:
    """What the report tests look at."""

    runtime: Runtime
    run_id: int
    sessions: list[int]
    items: list[int]
    targets: list[str]
    versions: list[Any]


def make_reported_run(home: Any, fake: Any) -> ReportedRun:
    """Run 2 targets × 2 items (4 turns), then review and re-score session 1."""
    fake.rule(is_target, answer)  # before the shared script's target rule, so it wins
    script_llm_kernel(fake)
    runtime = Runtime(home=home, config=Config())
    store = runtime.store
    with store.transaction():
        bench = create_benchmark(store, "oxy", "test")
        items = [add_item(store, bench, i, protocol="adaptive", topic=topic,
                          question=f"What do you know about {topic}?",
                          reference="Most abundant element in the crust; photosynthesis; liquid is pale blue.")
                 for i, topic in enumerate(["oxygen", "ozone"])]
        for item in items:
            create_rubric(store, item, CRITERIA, author="human")
    targets = [f"openai:fake-a@{fake.base_url}", f"openai:fake-b@{fake.base_url}"]
    run_id = plan_run(runtime, RunRequest(bench="oxy", targets=targets, kernel=f"openai:fake-kernel@{fake.base_url}",
                                          turns=TURNS,
                                          policy="always-challenge", concurrency=1, seed=3))
    errors = asyncio.run(execute_run(runtime, run_id))
    assert not any(errors.values()), errors
    sessions = list(run_sessions(runtime, run_id))
    first = sessions[0]
    override_verdict(store, first, 1, "c1", False, "not <b>really</b> | said\n# fake heading", who="human")
    v2 = edit_rubric(store, items[0], [{"op": "reweight", "cid": "c2", "weight": 3}], author="human",
                     note="photosynthesis matters more")
    asyncio.run(apply_rubric(runtime, first, v2.id))
    override_verdict(store, first, 2, "c3", True, "=cmd|' /C calc'!A0", who="ana")
    from engine.bench.rubric import list_versions

    return ReportedRun(runtime, run_id, sessions, items, targets, list_versions(store, items[0]))
