"""The demo: the embedded defaults end to end, on a small knowledge base viva ships.

``prepare_demo`` builds the ``demo`` knowledge base from ``engine/demo/docs`` (two short public-health
texts written for viva), generates the ``demo`` benchmark with the offline kernel from
``engine/demo/topics.yaml``, and plans a run: offline kernel, the shipped ONNX policy, ``DEMO_ITEMS``
items (alternating topics) and three targets side by side: the reference target ``kb:demo`` (it
answers with the best-matching sentences of the knowledge base and defends them under challenge,
:mod:`engine.interview.reference`), the embedded local model (SmolLM2-135M-Instruct through
llama.cpp) and the echo agent (:mod:`engine.demo.echo`, which repeats the question: a weak reference
that should score 0). Everything is reused when it already exists, so a second ``viva demo`` starts
at once.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Sequence
from pathlib import Path

from engine.runtime import Runtime

DEMO_DIR = Path(__file__).resolve().parent
DEMO_KB = "demo"
DEMO_BENCH = "demo"
DEMO_TARGETS = (f"kb:{DEMO_KB}", "local", "python:engine.demo.echo:EchoAgent")
"""The reference target (the knowledge base's own sentences), the embedded local model and the echo agent."""
DEMO_ITEMS = 4
"""Items the demo runs (alternating the two topics)."""
DEMO_TURNS = 4
"""Turns per demo session (the opening question and three policy decisions)."""


def default_policy() -> str:
    """``onnx`` when the trained policy is shipped, else the documented ``threshold`` baseline."""
    from models import model_file

    return "onnx" if model_file("policy.onnx").is_file() else "threshold"


def prepare_demo(runtime: Runtime, targets: Sequence[str] | str = DEMO_TARGETS, policy: str | None = None,
                 turns: int = DEMO_TURNS, n_items: int = DEMO_ITEMS, seed: int = 0,
                 log: Callable[[str], None] = print) -> int:
    """Build what the demo needs (once) and plan its run (each item for each target); returns the run id."""
    targets = [targets] if isinstance(targets, str) else list(targets)
    from engine.bench.generate import generate_benchmark, load_topics
    from engine.bench.items import list_benchmarks, list_items
    from engine.interview.run import RunRequest, plan_run
    from engine.knowledge.kb import build_kb, find_kb

    store = runtime.store
    if find_kb(store, DEMO_KB) is None:
        log("building the demo knowledge base (engine/demo/docs)...")
        build_kb(store, runtime.home, DEMO_KB, [DEMO_DIR / "docs"], config=runtime.config.retrieval)
    if DEMO_BENCH not in {b.name for b in list_benchmarks(store)}:
        log("generating the demo benchmark with the offline kernel...")
        asyncio.run(generate_benchmark(store, runtime.home, DEMO_BENCH, DEMO_KB,
                                       load_topics(DEMO_DIR / "topics.yaml"), per_topic=2, seed=seed,
                                       config=runtime.config, offline=True))
    items = list_items(store, DEMO_BENCH)
    # alternate topics so the items show both
    by_topic: dict[str, list[int]] = {}
    for item in items:
        by_topic.setdefault(item.topic, []).append(item.id)
    chosen: list[int] = []
    while len(chosen) < min(n_items, len(items)):
        for ids in by_topic.values():
            if ids and len(chosen) < n_items:
                chosen.append(ids.pop(0))
    policy = policy or default_policy()
    log(f"demo run: targets {', '.join(targets)}, kernel offline, policy {policy}, {turns} turns, items {chosen}")
    return plan_run(runtime, RunRequest(bench=DEMO_BENCH, targets=targets, items=chosen, kernel="offline",
                                        policy=policy, turns=turns, seed=seed))
