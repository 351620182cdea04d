"""The demo's plan (four items, both topics, three targets) and the separation it shows without the local
model: the reference target scores, the echo agent (it repeats the question) scores 0."""

from __future__ import annotations

import asyncio

from engine.config import Config
from engine.demo import DEMO_TARGETS, prepare_demo
from engine.demo.echo import SPEC, EchoAgent
from engine.interview.run import execute_run, run_sessions
from engine.metrics.sessions import target_table
from engine.runtime import Runtime


def test_the_echo_agent_repeats_the_question():
    assert EchoAgent().reply([{"role": "user", "content": "Q1"}, {"role": "assistant", "content": "A"},
                              {"role": "user", "content": "Q2?"}]) == "Q2?"
    assert EchoAgent().reply([]) == ""
    assert SPEC in DEMO_TARGETS and "kb:demo" in DEMO_TARGETS and "local" in DEMO_TARGETS


def test_the_demo_separates_the_reference_target_from_the_echo_agent(home):
    runtime = Runtime(home=home, config=Config())
    try:
        run_id = prepare_demo(runtime, targets=["kb:demo", SPEC], policy="threshold", log=lambda m: None)
        sessions = run_sessions(runtime, run_id)
        assert len(sessions) == 8  # four items for each target
        topics = {r["topic"] for r in runtime.store.query(
            "SELECT i.topic FROM sessions s JOIN items i ON i.id = s.item_id WHERE s.run_id = ?", (run_id,))}
        assert topics == {"influenza", "hand hygiene"}
        errors = asyncio.run(execute_run(runtime, run_id))
        assert set(errors.values()) == {None}
        rows = {r["target"]: r for r in target_table(runtime.store, sessions)}
        assert rows["kb:demo"]["score"] > 50 and rows[SPEC]["score"] == 0
    finally:
        runtime.store.close()
