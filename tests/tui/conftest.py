"""Fixtures for the app tests: a data home with a small benchmark, the fake OpenAI server as the
target (named in the config, so snapshots do not depend on its port), the offline kernel, and
helpers to run sessions with the real engine and to wait for the app without sleeping blindly."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import pytest

from engine.config import Config, ModelConfig
from engine.runtime import Runtime

ANSWERS = [
    "Influenza is caused by influenza viruses.",
    "Influenza spreads through respiratory droplets when infected people cough or sneeze.",
    "Yearly vaccination prevents influenza.",
    "Rest and fluids help; influenza viruses are the cause.",
]

CRITERIA = [
    {"text": "Influenza is caused by influenza viruses"},
    {"text": "Influenza spreads through respiratory droplets when people cough or sneeze", "weight": 2},
    {"text": "Yearly vaccination prevents influenza"},
    {"text": "Claims that antibiotics cure influenza", "kind": "deduction"},
]


def scripted_answer(body: dict[str, Any]) -> str:
    """The target's answer by turn: the number of questions it has been asked so far."""
    asked = sum(1 for m in body.get("messages", []) if m.get("role") == "user")
    return ANSWERS[min(asked - 1, len(ANSWERS) - 1)]


def make_runtime(home, fake, slow: float = 0.0) -> Runtime:
    """A runtime whose config names the fake server ``fake-a`` and ``fake-b`` (two targets)."""
    endpoint = ModelConfig(base_url=fake.base_url, model="fake-model", timeout=10.0, max_retries=1)
    config = Config(targets={"fake-a": endpoint, "fake-b": endpoint.model_copy(update={"model": "fake-b"})})
    fake.default = (lambda body: {"content": scripted_answer(body), "token_delay": slow}) if slow else scripted_answer
    return Runtime(home=home, config=config)


def make_benchmark(runtime: Runtime, name: str = "flu") -> int:
    """One adaptive item about influenza with a four-criterion rubric; returns the item id."""
    from engine.bench.items import add_item, create_benchmark
    from engine.bench.rubric import create_rubric

    store = runtime.store
    with store.transaction():
        bench = create_benchmark(store, name, "jsonl")
        item = add_item(store, bench, 0, protocol="adaptive", topic="influenza",
                        question="What causes influenza, and how does it spread?",
                        reference="Influenza viruses cause it; droplets spread it; yearly vaccines prevent it.")
        create_rubric(store, item, CRITERIA, author="human")
    return item


def plan(runtime: Runtime, target: str = "fake-a", turns: int = 3, policy: str = "threshold",
         bench: str = "flu") -> int:
    from engine.interview.run import RunRequest, plan_run

    return plan_run(runtime, RunRequest(bench=bench, targets=[target], kernel="offline", turns=turns,
                                        policy=policy))


def execute(runtime: Runtime, run_id: int) -> dict[int, str | None]:
    """Execute a run to its end in another thread (tests run inside an event loop already), with
    that thread's own store, as another process would."""
    from engine.interview.run import execute_run

    def work() -> dict[int, str | None]:
        rt = Runtime(home=runtime.home, config=runtime.config)
        try:
            return asyncio.run(execute_run(rt, run_id))
        finally:
            rt.store.close()

    with ThreadPoolExecutor(1) as pool:
        return pool.submit(work).result()


def run_to_end(runtime: Runtime, **kwargs: Any) -> int:
    """Plan and execute one session outside the app; returns its session id."""
    from engine.interview.run import run_sessions

    run_id = plan(runtime, **kwargs)
    errors = execute(runtime, run_id)
    assert not any(errors.values()), errors
    return run_sessions(runtime, run_id)[0]


def freeze_timings(runtime: Runtime) -> None:
    """Replace measured latencies and timestamps with fixed values, so screens are reproducible."""
    store = runtime.store
    with store.transaction():
        store.conn.execute("UPDATE turns SET latency_ms = 250.0, created_at = '2025-01-01T00:00:00.000+00:00'")
        store.conn.execute("UPDATE sessions SET created_at = '2025-01-01T00:00:00.000+00:00', "
                           "updated_at = '2025-01-01T00:00:00.000+00:00'")
        store.conn.execute("UPDATE rubric_versions SET created_at = '2025-01-01T00:00:00.000+00:00'")
        # overrides are listed with their time (the overrides list of issue 36): 2025-01-01 00:00:00 UTC
        store.conn.execute("UPDATE events SET ts = 1735689600.0 WHERE kind IN ('verdict.overridden', "
                           "'verdict.override_undone')")
        for seq, kind, payload in store.conn.execute("SELECT seq, kind, payload FROM events").fetchall():
            data = json.loads(payload)
            if kind == "metrics" and data.get("mean_latency_ms") is not None:
                data["mean_latency_ms"] = 250.0
            elif kind == "session.finished" and (data.get("metrics") or {}).get("mean_latency_ms") is not None:
                data["metrics"]["mean_latency_ms"] = 250.0
            elif kind == "answer.done":
                data["latency_ms"] = 250.0
            else:
                continue
            store.conn.execute("UPDATE events SET payload = ? WHERE seq = ?", (json.dumps(data), seq))


async def wait_for(pilot: Any, predicate: Callable[[], Any], what: str, timeout: float = 60.0,
                   debug: Callable[[], Any] | None = None) -> Any:
    """Let the app run until ``predicate()`` is truthy (a guard against hanging, not a timing check)."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout
    while True:
        value = predicate()
        if value:
            return value
        if loop.time() > deadline:
            raise AssertionError(f"timed out waiting for: {what}; {debug() if debug else ''}")
        await pilot.pause(0.05)


@pytest.fixture
def runtime(home, fake_openai):
    """The runtime with the fake targets and the ``flu`` benchmark."""
    rt = make_runtime(home, fake_openai)
    make_benchmark(rt)
    yield rt
    rt.store.close()


@pytest.fixture(autouse=True)
def no_cursor_blink(monkeypatch):
    """Inputs and text areas do not blink in tests, so screenshots are stable."""
    from textual.widgets import Input, TextArea

    monkeypatch.setattr(Input, "cursor_blink", False, raising=False)
    monkeypatch.setattr(TextArea, "cursor_blink", False, raising=False)
