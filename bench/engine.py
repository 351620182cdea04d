"""Engine benchmarks against the fake OpenAI server (prints figures; asserts nothing).

1. Overhead per turn: with zero server latency, the time of each adaptive turn that is not spent
   waiting on the server (turn wall time − Σ latency of that turn's calls), p50 / p95.
2. Concurrency: 64 sessions at once with 200 ms server latency per call; throughput as a fraction of
   the ideal (every session's calls back to back at exactly the server latency).
3. Calls and tokens per adaptive turn (kernel + judge, and target).

Run: ``python bench/engine.py [--sessions 64] [--latency 0.2] [--turns 6]``
The kernel is an LLM kernel on the fake server (scripted judge), so every kernel/judge step is a
real HTTP call through the real openai client.
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from engine.config import Config, ModelConfig  # noqa: E402
from engine.interview.run import RunRequest, execute_run, plan_run, run_sessions  # noqa: E402
from engine.runtime import Runtime  # noqa: E402
from tests.engine.interview_fixtures import judge_reply, make_bench, target_reply  # noqa: E402
from tests.fakes.openai_server import FakeOpenAI  # noqa: E402


def script(fake: FakeOpenAI, latency: float) -> None:
    import json

    def delayed(fn):
        return lambda body: {"content": fn(body), "delay": latency}

    fake.rule(lambda r: bool(r.body.get("stream")), delayed(target_reply))
    fake.rule("judge of an oral examination", delayed(judge_reply))
    fake.rule("a FOLLOW-UP", delayed(lambda b: json.dumps({"question": "What else do you know about oxygen?"})))
    fake.rule("a CHALLENGE", delayed(lambda b: json.dumps({"question": "Are you sure about that?"})))


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    k = (len(ordered) - 1) * q
    lo, hi = int(k), min(int(k) + 1, len(ordered) - 1)
    return ordered[lo] + (ordered[hi] - ordered[lo]) * (k - lo)


async def run_once(home: Path, fake: FakeOpenAI, sessions: int, turns: int, concurrency: int) -> tuple[Runtime, int, float]:
    endpoint = ModelConfig(base_url=fake.base_url, model="bench-kernel", max_concurrency=max(64, concurrency),
                           timeout=30, max_retries=0)
    runtime = Runtime(home=home, config=Config(kernel=endpoint, targets={"t": endpoint}), use_cache=False)
    make_bench(runtime.store, name="b", n_items=sessions)
    run_id = plan_run(runtime, RunRequest(bench="b", targets=["t"], kernel="config", policy="threshold",
                                          turns=turns, concurrency=concurrency))
    start = time.perf_counter()
    errors = await execute_run(runtime, run_id)
    elapsed = time.perf_counter() - start
    failed = [e for e in errors.values() if e]
    if failed:
        raise SystemExit(f"{len(failed)} sessions failed: {failed[0]}")
    return runtime, run_id, elapsed


def overhead_per_turn(runtime: Runtime, run_id: int) -> list[float]:
    """Turn wall time (event timestamps) minus the latency of the calls made during it."""
    store = runtime.store
    out = []
    for sid in run_sessions(runtime, run_id):
        events = store.events(0, sid)
        marks = [e.ts for e in events if e.kind == "turn.started"] + [
            e.ts for e in events if e.kind == "session.finished"]
        # the question of turn t is written before turn.started(t): count its call in turn t-1's window
        calls = store.query("SELECT latency_ms, created_at FROM llm_calls WHERE session_id = ? ORDER BY id", (sid,))
        from datetime import datetime

        call_times = [(datetime.fromisoformat(c["created_at"]).timestamp(), c["latency_ms"] / 1000) for c in calls]
        for a, b in zip(marks, marks[1:], strict=False):
            waited = sum(lat for end, lat in call_times if a < end <= b + 0.002)
            out.append(max(0.0, (b - a) - waited))
    return out


class TimedEmbedder:
    """Wraps the embedder to measure the engine's own ONNX time per turn (cos of summaries)."""

    def __init__(self, inner):
        self.inner = inner
        self.seconds = 0.0
        self.calls = 0

    def __getattr__(self, name):
        return getattr(self.inner, name)

    def embed(self, texts):
        start = time.perf_counter()
        try:
            return self.inner.embed(texts)
        finally:
            self.seconds += time.perf_counter() - start
            self.calls += 1


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sessions", type=int, default=64)
    parser.add_argument("--latency", type=float, default=0.2)
    parser.add_argument("--turns", type=int, default=6)
    args = parser.parse_args()

    import engine.knowledge.embed as embed_module

    timed = TimedEmbedder(embed_module.get_embedder())
    embed_module.get_embedder = lambda config=None: timed  # the runner imports it at call time
    with tempfile.TemporaryDirectory() as tmp, FakeOpenAI() as fake:
        script(fake, 0.0)
        runtime, run_id, elapsed = await run_once(Path(tmp) / "a", fake, 8, args.turns, 1)
        over = overhead_per_turn(runtime, run_id)
        embed_ms = 1000 * timed.seconds / max(1, len(over))
        print(f"overhead per turn (zero latency, {len(over)} turns): p50 {1000 * statistics.median(over):.2f} ms, "
              f"p95 {1000 * percentile(over, 0.95):.2f} ms   goal: p50 < 5 ms")
        print(f"  of which ONNX embedding of summaries (cos_t): {embed_ms:.2f} ms per turn on average; "
              f"the rest (SQLite, events, policy, client): ~{1000 * statistics.median(over) - embed_ms:.2f} ms")
        turns = runtime.store.one("SELECT COUNT(*) AS n FROM turns")["n"]
        kj = runtime.store.one("SELECT COUNT(*) AS n, SUM(tokens_in + tokens_out) AS tok FROM llm_calls "
                               "WHERE role IN ('kernel', 'judge')")
        tg = runtime.store.one("SELECT COUNT(*) AS n, SUM(tokens_in + tokens_out) AS tok FROM llm_calls "
                               "WHERE role = 'target'")
        print(f"kernel+judge calls per adaptive turn: {kj['n'] / turns:.2f} ({kj['tok'] / turns:.0f} tokens); "
              f"target calls per turn: {tg['n'] / turns:.2f} ({tg['tok'] / turns:.0f} tokens)   goal: <= 2")

        fake.reset()
        script(fake, args.latency)
        runtime, run_id, elapsed = await run_once(Path(tmp) / "b", fake, args.sessions, args.turns, args.sessions)
        calls_per_session = runtime.store.one(
            "SELECT COUNT(*) * 1.0 / COUNT(DISTINCT session_id) AS n FROM llm_calls")["n"]
        ideal = calls_per_session * args.latency
        print(f"{args.sessions} concurrent sessions x {args.turns} turns at {args.latency * 1000:.0f} ms/call: "
              f"{elapsed:.2f} s, ideal {ideal:.2f} s ({calls_per_session:.0f} serial calls per session) -> "
              f"throughput {ideal / elapsed:.2f} of ideal   goal: >= 0.8")


if __name__ == "__main__":
    asyncio.run(main())
