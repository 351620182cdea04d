"""Engine benchmarks against the fake OpenAI server in its own process (prints figures; asserts nothing).

Every measurement runs in a fresh Python process (``--child``) that starts its own fake server
process (``--serve``), so neither the server's threads nor an earlier measurement's caches share the
engine's interpreter. Figures are medians over ``--repeat`` runs (default 3).

1. **Overhead per adaptive turn** (zero server latency; sessions one at a time): the wall time
   between consecutive ``turn.started`` events, nothing subtracted, so the openai client's CPU,
   localhost HTTP and the server's own (tiny) time all count as overhead: an upper bound. Also the
   engine process's CPU per turn (all its threads, ONNX included) and SQL statements per turn. For
   the LLM kernel (every kernel/judge step an HTTP call) and the default offline kernel; for the
   *bare* setting (threshold policy, no LLM response cache) and the *default* one (ONNX policy,
   response cache on). Under each: the LLM calls per turn by purpose with their tokens
   (``llm_calls.purpose``: answer, judge, follow-up/challenge question, ratings, ``<purpose> repair``...)
   and the SQL statements per turn by kind (verb and table; a trigger's statements, which sqlite traces
   as their outer statement again, counted apart). The fake server behaves like a good model (a new
   question at every turn, valid replies to every schema), so a repair here is the engine's defect.
2. **Concurrency**: N sessions at once, ``--latency`` seconds per call (LLM kernel, default policy
   and cache): throughput as a fraction of the ideal (each session's calls back to back at exactly
   the latency). ``--workers W`` runs it as ``viva run --workers W`` does (``execute_run(..., workers=W)``:
   sessions handed out to W processes sharing the store, SQLite WAL), timed from the first session's start.
   Under it, what the ratio is made of (the share of the run the sessions had a call in flight, and a call's
   mean time against the latency), and the same run's ceiling: N coroutines making a session's calls through
   the bare openai SDK with no engine around them (``measure_bare``), and the engine's ratio as a share of it.
3. **Per turn vs turn index** (one session of ``--long-turns`` turns, offline kernel then LLM kernel): the
   median over the ten turns from turn 1, 46 and 196 (around turns 1, 50 and 200) of the turn's time, bytes
   stored (the session's rows in events, llm_calls, turns and verdicts, allocated to the turn they were
   written in), SQL statements sent and (offline) texts and characters embedded; and like for like, each
   action's median time over the window's turns of that action (the policy's mix of follow-ups and
   challenges moves over a session). docs/turn-cost.md explains the figures.

``--baseline`` repeats each measurement with ``VIVA_EMBED_CACHE=0`` (the embedding service off:
every text re-embedded, as before it existed) for a before/after in the same run.

Run: ``python bench/engine.py [--quick] [--repeat 3] [--sessions 64,256] [--latency 0.2] [--turns 6]
[--long-turns 200] [--workers 1,2] [--baseline]``
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))


# -- the fake server, in its own process ------------------------------------------------------------

FOLLOW_UPS = ("What else do you know about {topic}?", "How does {topic} take part in the processes you described?",
              "Which properties of {topic} can be observed directly?", "Where is {topic} found in nature?",
              "What would change without {topic}?", "How is {topic} produced or obtained?")
"""A good kernel's follow-ups: a different question at every turn (the turn number picks one, and names the
round once the list is used up), so viva never refuses one as already asked."""


def good_question(body: dict[str, Any], kind: str) -> str:
    """The JSON reply of a well-behaved kernel to a question prompt: a question not asked before in the
    conversation (``kind`` "follow-up" or "challenge"), of the length its schema asks for."""
    from tests.engine.interview_fixtures import _turns_in

    t = _turns_in(body)
    if kind == "challenge":
        question = f"Are you sure about your answer at turn {t - 1}? Many sources say otherwise."
    else:
        question = FOLLOW_UPS[t % len(FOLLOW_UPS)].format(topic="oxygen")
        if t >= len(FOLLOW_UPS):
            question = f"{question[:-1]}, beyond what you said up to turn {t - 1}?"
    return json.dumps({"question": question})


def serve(latency: float) -> None:
    """Run the scripted fake server until stdin closes; print its base URL first.

    The server behaves like a good model: the target answers (naming its item), the judge marks by
    keyword and keeps the summary, the kernel writes a question not asked before, the gold judge and the
    ratings reply to their schemas. So a repair in a measured turn is the engine's defect, not the fake's.
    """
    from tests.engine.interview_fixtures import RATINGS, judge_reply, target_reply
    from tests.fakes.openai_server import GOLD_JUDGE_PROMPT, FakeOpenAI, gold_judge_reply

    def delayed(fn):
        return lambda body: {"content": fn(body), "delay": latency} if latency else fn(body)

    def distinct_reply(body):
        """The scripted answer, one sentence naming its item and its turn: no sentence is said twice, in a
        session or across sessions, so the embedding cache shares no summary and no summary sentence
        between sessions or turns (real sessions' answers differ too), however long the session."""
        item = re.search(r"\(item (\d+)\)", next((m["content"] for m in body["messages"] if m["role"] == "user"), ""))
        turn = sum(1 for m in body["messages"] if m["role"] == "user") - 1
        return f"{target_reply(body).rstrip('.')} (item {item.group(1) if item else '?'}, answer {turn})."

    def bounded_judge(body):
        """The scripted judge, its summary within the schema's ``maxLength`` (``engine.judge.llm.SUMMARY_CHARS``),
        as a good model keeps it: its latest sentences. (The scripted judge of the tests appends every answer,
        so its summary, and with it the next judge prompt, grew with the session past what the schema allows.)"""
        from engine.judge.llm import SUMMARY_CHARS
        from engine.text.sentences import split_sentences

        reply = json.loads(judge_reply(body))
        kept: list[str] = []
        for sentence in reversed(split_sentences(reply["summary"])):
            if sum(len(k) + 1 for k in kept) + len(sentence) > SUMMARY_CHARS:
                break
            kept.insert(0, sentence)
        reply["summary"] = " ".join(kept) or reply["summary"][-SUMMARY_CHARS:]
        return json.dumps(reply)

    with FakeOpenAI() as fake:
        fake.rule(lambda r: bool(r.body.get("stream")), delayed(distinct_reply))
        fake.rule(GOLD_JUDGE_PROMPT, delayed(gold_judge_reply))
        fake.rule("judge of an oral examination", delayed(bounded_judge))
        fake.rule("a FOLLOW-UP", delayed(lambda b: good_question(b, "follow-up")))
        fake.rule("a CHALLENGE", delayed(lambda b: good_question(b, "challenge")))
        fake.rule("You rate an oral examination", delayed(lambda b: json.dumps(RATINGS)))
        print(fake.base_url, flush=True)
        sys.stdin.read()  # until the parent closes the pipe


class Server:
    """The fake server as a child process."""

    def __init__(self, latency: float):
        self.proc = subprocess.Popen([sys.executable, __file__, "--serve", str(latency)], stdin=subprocess.PIPE,
                                     stdout=subprocess.PIPE, text=True)
        self.base_url = self.proc.stdout.readline().strip()  # type: ignore[union-attr]
        if not self.base_url:
            raise SystemExit("the fake server process did not start")

    def __enter__(self) -> Server:
        return self

    def cpu_seconds(self) -> float | None:
        """The server process's CPU time so far (Linux ``/proc``; None elsewhere)."""
        try:
            fields = Path(f"/proc/{self.proc.pid}/stat").read_text().rsplit(")", 1)[1].split()
        except OSError:
            return None
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")  # utime + stime

    def __exit__(self, *exc: object) -> None:
        self.proc.stdin.close()  # type: ignore[union-attr]
        self.proc.wait(timeout=10)


# -- one measurement, in a child process -------------------------------------------------------------

def _runtime(home: Path, base_url: str, use_cache: bool):
    from engine.config import Config, ModelConfig
    from engine.runtime import Runtime

    endpoint = ModelConfig(base_url=base_url, model="bench-model", max_concurrency=1024, timeout=60, max_retries=0)
    return Runtime(home=home, config=Config(kernel=endpoint, targets={"t": endpoint}), use_cache=use_cache)


def _plan(runtime, sessions: int, turns: int, kernel: str, policy: str, concurrency: int) -> int:
    from engine.interview.run import RunRequest, plan_run
    from tests.engine.interview_fixtures import make_bench

    make_bench(runtime.store, name="b", n_items=sessions)
    return plan_run(runtime, RunRequest(bench="b", targets=["t"], kernel=kernel, policy=policy, turns=turns,
                                        concurrency=concurrency, seed=0))


WINDOW = 10
"""Turns in each window of the long run's figures (turns 1-10, 46-55, 196-205)."""


def _turn_marks(store, sid: int) -> list[tuple[int, float]]:
    events = store.events(0, sid, limit=10**7)
    return [(e.seq, e.ts) for e in events if e.kind == "turn.started"] + [
        (e.seq, e.ts) for e in events if e.kind == "session.finished"]


async def measure_overhead(home: Path, kernel: str, policy: str, use_cache: bool, sessions: int,
                           turns: int) -> dict[str, Any]:
    """Zero-latency server; sessions one at a time; per-turn wall, CPU and SQL statements."""
    from engine.interview.run import execute_run, run_sessions
    from engine.knowledge.embed import get_embedding_service

    with Server(0.0) as server:
        runtime = _runtime(home, server.base_url, use_cache)
        run_id = _plan(runtime, sessions, turns, kernel, policy, 1)
        service = get_embedding_service(runtime.config.retrieval.embedder)
        service.embed(["warm up"])
        from engine.interview.pool import prepare

        prepare()  # the imports a session needs, before the clock, as a worker does before it says ready

        embedded: list[list[str]] = []  # every ONNX call's texts, replayed below
        encoder = service.embedder
        encode = encoder.embed
        encoder.embed = lambda texts, *a, **k: (embedded.append(list(texts)), encode(texts, *a, **k))[1]
        statements: Counter[str] = Counter()
        triggered = [0, ""]  # statements run by triggers (sqlite traces each as its outer statement again)

        def trace(sql: str) -> None:
            if sql == triggered[1]:
                triggered[0] += 1
            else:
                statements[sql_kind(sql)] += 1
            triggered[1] = sql

        runtime.store.conn.set_trace_callback(trace)
        cpu = time.process_time()
        errors = await execute_run(runtime, run_id)
        cpu = time.process_time() - cpu
        runtime.store.conn.set_trace_callback(None)
        encoder.embed = encode
        parts = await _floor_parts(runtime, server.base_url, embedded, encode)
    if any(errors.values()):
        raise SystemExit(f"sessions failed: {errors}")
    walls = []
    for sid in run_sessions(runtime, run_id):
        marks = _turn_marks(runtime.store, sid)
        walls += [(b[1] - a[1]) * 1000 for a, b in zip(marks[1:], marks[2:], strict=False)]  # adaptive turns
    n_turns = runtime.store.one("SELECT COUNT(*) AS n FROM turns")["n"]
    calls = {r["purpose"] or r["role"]: {"calls": r["n"] / n_turns, "tokens_in": r["t_in"] / n_turns,
                                         "tokens_out": r["t_out"] / n_turns}
             for r in runtime.store.query("SELECT role, purpose, COUNT(*) AS n, SUM(tokens_in) AS t_in, "
                                          "SUM(tokens_out) AS t_out FROM llm_calls GROUP BY role, purpose "
                                          "ORDER BY MIN(id)")}
    embed = get_embedding_service(runtime.config.retrieval.embedder).stats()
    kj = runtime.store.one("SELECT COUNT(*) AS n FROM llm_calls WHERE role IN ('kernel', 'judge')")["n"]
    client_ms, onnx_ms = (1000 * parts[0] / n_turns, 1000 * parts[1] / n_turns)
    return {"p50_ms": statistics.median(walls), "p95_ms": _percentile(walls, 0.95),
            "cpu_ms_per_turn": 1000 * cpu / n_turns, "client_floor_ms_per_turn": client_ms,
            "embed_floor_ms_per_turn": onnx_ms, "own_cpu_ms_per_turn": 1000 * cpu / n_turns - client_ms - onnx_ms, "sql_per_turn": sum(statements.values()) / n_turns,
            "sql_triggered_per_turn": triggered[0] / n_turns,
            "kernel_judge_calls_per_turn": kj / n_turns, "texts_embedded_per_turn": (embed["embedded"] - 1) / n_turns,
            "embed_runs_per_turn": (embed["runs"] - 1) / n_turns, "calls_by_purpose": calls,
            "sql_by_kind": {k: n / n_turns for k, n in statements.most_common()}}


async def _floor_parts(runtime, base_url: str, embedded: list[list[str]], encode) -> tuple[float, float]:
    """CPU seconds of the parts a run keeps, for exactly this run's work: every recorded LLM call sent
    again through the bare openai SDK (the low-level ``post`` with plain JSON, streamed for the target, as
    ``LLMClient`` sends it) to the same server, and every ONNX embedding call run again (the same texts,
    the same batches, no cache). What the engine spends beyond these is its own overhead."""
    import openai

    from engine.store.texts import request_of

    sdk = openai.AsyncOpenAI(base_url=base_url, api_key="bench", max_retries=0)
    calls = runtime.store.query("SELECT id, role, model FROM llm_calls WHERE cached = 0 AND error IS NULL ORDER BY id")
    requests = [(c, request_of(runtime.store, c["id"])) for c in calls]
    client_cpu = time.process_time()
    for call, request in requests:
        body = {"model": call["model"], "messages": request["messages"], **request["params"]}
        if call["role"] == "target":
            stream = await sdk.post("/chat/completions", cast_to=object, stream=True,
                                    stream_cls=openai.AsyncStream[object],
                                    body={**body, "stream": True, "stream_options": {"include_usage": True}})
            async for _ in stream:
                pass
        else:
            await sdk.post("/chat/completions", cast_to=object, body=body)
    client_cpu = time.process_time() - client_cpu
    await sdk.close()
    onnx_cpu = time.process_time()
    for texts in embedded:
        encode(texts)
    return client_cpu, time.process_time() - onnx_cpu


async def measure_concurrency(home: Path, sessions: int, latency: float, turns: int, workers: int) -> dict[str, Any]:
    """N sessions at once at ``latency`` per call, over ``workers`` processes sharing the store: the product's
    path (``execute_run(..., workers=W)``; 1 = in this process), timed from the first ``session.started`` to
    the last ``session.finished`` event (a worker's start-up before its first session is ``start_s``)."""
    from engine.interview.run import execute_run
    from engine.knowledge.embed import get_embedding_service
    from engine.policy.policies import load_policy

    with Server(latency) as server:
        runtime = _runtime(home, server.base_url, True)
        run_id = _plan(runtime, sessions, turns, "config", "onnx", sessions)
        if workers == 1:  # loaded before the clock starts, as a worker does before it takes a session
            get_embedding_service(runtime.config.retrieval.embedder).embed(["warm up"])
            load_policy("onnx")
            from engine.interview.pool import prepare

            prepare()
        called, cpu, server_cpu = time.time(), time.process_time(), server.cpu_seconds()
        errors = await execute_run(runtime, run_id, workers=workers)
        engine_cpu = time.process_time() - cpu
        server_cpu = (server.cpu_seconds() or 0.0) - (server_cpu or 0.0)
        startup_cpu = 0.0
        if workers > 1:  # the workers' CPU after they were ready (their start-up is reported apart)
            from engine.interview.workers import last_workers

            engine_cpu += sum(w["cpu_s"] - w["startup_cpu_s"] for w in last_workers)
            startup_cpu = sum(w["startup_cpu_s"] for w in last_workers)
    if any(errors.values()):
        raise SystemExit(f"sessions failed: {errors}")
    marks = runtime.store.one("SELECT MIN(CASE WHEN kind = 'session.started' THEN ts END) AS a, "
                              "MAX(CASE WHEN kind = 'session.finished' THEN ts END) AS b FROM events")
    elapsed = marks["b"] - marks["a"]
    calls = runtime.store.one("SELECT COUNT(*) * 1.0 / COUNT(DISTINCT session_id) AS n FROM llm_calls")["n"]
    n_turns = runtime.store.one("SELECT COUNT(*) AS n FROM turns")["n"]
    processes = runtime.store.one("SELECT COUNT(DISTINCT pid) AS n FROM sessions")["n"]
    ideal = calls * latency
    # what the ratio is made of: the share of the run the sessions had a call in flight (each call from its
    # start, its record's time less its latency, to its end), and how long a call took against the server's
    # latency (a returned call waits for a busy loop before it is read): ratio ~ share x latency / mean latency
    from datetime import datetime

    spans = [(datetime.fromisoformat(r["created_at"]).timestamp(), r["latency_ms"] / 1000)
             for r in runtime.store.query("SELECT created_at, latency_ms FROM llm_calls")]
    busy = sum(d for _, d in spans)
    span = max(e for e, _ in spans) - min(e - d for e, d in spans)
    # The CPU a turn costs the machine (the engine's processes and the server; the server is our fake, so its
    # share stands in for the network stack's and a proxy's), and the ratio the cores allow at that cost: a
    # run cannot end before its CPU time / cores. A worker's start-up (imports, models) is ``startup_cpu_s``.
    cores = os.cpu_count() or 1
    return {"elapsed_s": elapsed, "ideal_s": ideal, "ratio": ideal / elapsed, "calls_per_session": calls,
            "start_s": marks["a"] - called, "processes": processes, "startup_cpu_s": startup_cpu, "turns": n_turns,
            "engine_cpu_ms_per_turn": 1000 * engine_cpu / n_turns,
            "server_cpu_ms_per_turn": 1000 * server_cpu / n_turns, "cores": cores,
            "cpu_bound_ratio": min(1.0, ideal / ((engine_cpu + server_cpu) / cores)),
            "in_flight_share": busy / (span * sessions), "call_ms_mean": 1000 * busy / len(spans),
            "call_ms_median": 1000 * statistics.median(d for _, d in spans)}


JUDGE_MESSAGES = [{"role": "system", "content": "You are the judge of an oral examination. " * 40},
                  {"role": "user", "content": "Criteria: c1 oxygen is reactive; c2 liquid oxygen is pale blue. "
                                              "Answer: Oxygen is very reactive and liquid oxygen is pale blue."}]
TARGET_MESSAGES = [{"role": "system", "content": "Answer the examiner's question."},
                   {"role": "user", "content": "What is the most abundant element in the Earth's crust?"}]
QUESTION_MESSAGES = [{"role": "system", "content": "Ask a CHALLENGE to the candidate's last answer. " * 20},
                     {"role": "user", "content": "The conversation so far: oxygen is reactive."}]
RATINGS_MESSAGES = [{"role": "system", "content": "You rate an oral examination. " * 20},
                    {"role": "user", "content": "The conversation: oxygen is reactive."}]
"""Requests of a turn's shapes (a judge's, a target's, a question's, the ratings'), routed by the fake server
like the engine's: the client rows and the bare 64-session baseline send them."""


async def measure_bare(home: Path, sessions: int, latency: float, turns: int) -> dict[str, Any]:
    """The concurrency run's calls with no engine around them: ``sessions`` coroutines at once, each making an
    adaptive session's calls one after another through the bare openai SDK (low-level ``post``, as
    ``LLMClient`` sends them), against the same fake server at ``latency``: per turn a streamed answer and a
    judge's reply, a question for every turn but the last, the ratings once. What this machine, the SDK
    and the fake allow at all: the ceiling of the engine's ratio, measured in the same run."""
    import openai

    with Server(latency) as server:
        sdk = openai.AsyncOpenAI(base_url=server.base_url, api_key="bench", max_retries=0)
        took: list[float] = []

        async def call(messages: list[dict[str, str]], stream: bool, tag: str) -> None:
            start = time.perf_counter()
            body = {"model": "bench-model", "messages": [*messages, {"role": "user", "content": tag}]}
            if stream:
                reply = await sdk.post("/chat/completions", cast_to=object, stream=True,
                                       stream_cls=openai.AsyncStream[object], body={**body, "stream": True})
                async for _ in reply:
                    pass
            else:
                await sdk.post("/chat/completions", cast_to=object, body=body)
            took.append(time.perf_counter() - start)

        async def session(k: int) -> None:
            for t in range(turns):
                await call(TARGET_MESSAGES, True, f"session {k} turn {t}")
                await call(JUDGE_MESSAGES, False, f"session {k} turn {t}")
                if t < turns - 1:
                    await call(QUESTION_MESSAGES, False, f"session {k} turn {t}")
            await call(RATINGS_MESSAGES, False, f"session {k}")

        await session(-1)  # the code path warmed
        took.clear()
        server_cpu, cpu, start = server.cpu_seconds(), time.process_time(), time.perf_counter()
        await asyncio.gather(*(session(k) for k in range(sessions)))
        elapsed = time.perf_counter() - start
        cpu = time.process_time() - cpu
        server_cpu = (server.cpu_seconds() or 0.0) - (server_cpu or 0.0)
        await sdk.close()
    ideal = len(took) / sessions * latency
    return {"elapsed_s": elapsed, "ideal_s": ideal, "ratio": ideal / elapsed, "call_ms_mean": 1000 * statistics.mean(took),
            "client_cpu_ms_per_turn": 1000 * cpu / (sessions * turns),
            "server_cpu_ms_per_turn": 1000 * server_cpu / (sessions * turns)}


async def measure_client(home: Path, calls: int) -> dict[str, Any]:
    """CPU per call (this process, all threads) of what a turn must keep: the openai client itself and one
    embedding, against the fake server in its own process (zero latency).

    Rows: the SDK as documented (``chat.completions.create``: request and response built into pydantic
    objects), the SDK's low-level ``post`` with plain JSON (what ``LLMClient`` sends), and ``LLMClient.chat``
    end to end (cache lookup, recording the call in the store); each non-streamed (a judge's JSON verdict)
    and streamed (a target's answer, a piece per word). Plus one embedding of a new two-sentence text
    through the embedding service (what the adaptive protocol needs per turn for cos_t). Interleaved in
    rounds so drifts in machine load hit every row alike; the median of the rounds' per-call figures.
    """
    import openai

    from engine.knowledge.embed import get_embedding_service
    from engine.llm.client import LLMClient

    judge_messages, target_messages = JUDGE_MESSAGES, TARGET_MESSAGES
    with Server(0.0) as server:
        runtime = _runtime(home, server.base_url, False)
        service = get_embedding_service(runtime.config.retrieval.embedder)
        service.embed(["warm up"])
        sdk = openai.AsyncOpenAI(base_url=server.base_url, api_key="bench", max_retries=0)
        endpoint = runtime.config.kernel
        client = LLMClient(runtime.store, endpoint, role="judge", use_cache=False, session_id=None)
        target = LLMClient(runtime.store, endpoint, role="target", use_cache=False, session_id=None)
        model = endpoint.model

        async def sdk_once(i: int) -> None:
            await sdk.chat.completions.create(model=model, messages=judge_messages + [
                {"role": "user", "content": f"call {i}"}])  # type: ignore[arg-type]

        async def sdk_stream(i: int) -> None:
            stream = await sdk.chat.completions.create(model=model, stream=True, messages=target_messages + [
                {"role": "user", "content": f"call {i}"}])  # type: ignore[arg-type]
            async for _ in stream:
                pass

        async def post_once(i: int) -> None:
            await sdk.post("/chat/completions", cast_to=object, body={
                "model": model, "messages": judge_messages + [{"role": "user", "content": f"call {i}"}]})

        async def post_stream(i: int) -> None:
            stream = await sdk.post("/chat/completions", cast_to=object, stream=True,
                                    stream_cls=openai.AsyncStream[object], body={
                                        "model": model, "stream": True,
                                        "messages": target_messages + [{"role": "user", "content": f"call {i}"}]})
            async for _ in stream:
                pass

        async def ours_once(i: int) -> None:
            await client.chat(judge_messages + [{"role": "user", "content": f"call {i}"}])

        async def ours_stream(i: int) -> None:
            await target.chat(target_messages + [{"role": "user", "content": f"call {i}"}], stream=True,
                              on_token=lambda piece: None)

        async def embed(i: int) -> None:
            await asyncio.get_running_loop().run_in_executor(None, service.embed, [
                f"Oxygen is the most abundant element in the crust, item {i}. Plants release oxygen through "
                f"photosynthesis (case {i * 7 + 3})."])

        rows = {"sdk_create": sdk_once, "sdk_create_stream": sdk_stream, "sdk_post_plain": post_once,
                "sdk_post_plain_stream": post_stream, "llmclient_chat": ours_once,
                "llmclient_chat_stream": ours_stream, "embed_one_text": embed}
        per: dict[str, list[float]] = {name: [] for name in rows}
        counter = 0
        for _ in range(5):
            for name, fn in rows.items():
                await fn(counter)  # warm the connection and the code path
                counter += 1
                cpu = time.process_time()
                for _ in range(calls):
                    await fn(counter)
                    counter += 1
                per[name].append(1000 * (time.process_time() - cpu) / calls)
        await sdk.close()
    return {f"{name}_cpu_ms": statistics.median(values) for name, values in per.items()}


def _row_bytes(row: dict[str, Any]) -> int:
    return sum(len(v.encode()) if isinstance(v, str) else len(v) if isinstance(v, bytes) else 8
               for v in row.values() if v is not None)


async def measure_long(home: Path, turns: int, kernel: str = "offline") -> dict[str, Any]:
    """One session of ``turns`` turns (``kernel``: ``offline`` or ``config``, the LLM kernel): turn time, bytes
    stored, SQL statements and (offline) texts and characters embedded, by turn index."""
    from engine.interview.run import execute_run, run_sessions
    from engine.knowledge.embed import get_embedding_service

    with Server(0.0) as server:
        runtime = _runtime(home, server.base_url, False)
        run_id = _plan(runtime, 1, turns, kernel, "onnx", 1)
        service = get_embedding_service(runtime.config.retrieval.embedder)
        service.embed(["warm up"])
        from engine.interview.pool import prepare

        prepare()  # turn 1 is a turn, not the process's imports
        counts = {"sql": 0, "texts": 0, "chars": 0}
        starts: list[dict[str, int]] = []  # the counts as each turn started

        last = [""]

        def trace(sql: str) -> None:
            if sql != last[0]:  # (a trigger's statements are traced as their outer statement again)
                counts["sql"] += 1
            last[0] = sql
            if sql.startswith("INSERT INTO events") and "'turn.started'" in sql:
                starts.append({**counts, "cpu": time.process_time() * 1000})

        encoder = service.embedder
        encode = encoder.embed

        def counted(texts, *a, **k):
            counts["texts"] += len(texts)
            counts["chars"] += sum(len(t) for t in texts)
            return encode(texts, *a, **k)

        encoder.embed = counted
        runtime.store.conn.set_trace_callback(trace)
        errors = await execute_run(runtime, run_id)
        runtime.store.conn.set_trace_callback(None)
        encoder.embed = encode
        starts.append({**counts, "cpu": time.process_time() * 1000})
    if any(errors.values()):
        raise SystemExit(f"session failed: {errors}")
    store = runtime.store
    sid = run_sessions(runtime, run_id)[0]
    marks = _turn_marks(store, sid)
    walls = [(b[1] - a[1]) * 1000 for a, b in zip(marks, marks[1:], strict=False)]
    per_turn = [0] * len(walls)

    def turn_of(value: float, index: int) -> int | None:
        for t in range(len(walls)):
            if marks[t][index] <= value < marks[t + 1][index] or (t == len(walls) - 1 and value >= marks[t][index]):
                return t
        return None

    for e in store.query("SELECT * FROM events WHERE session_id = ?", (sid,)):
        t = turn_of(e["seq"], 0)
        if t is not None:
            per_turn[t] += _row_bytes(e)
    from datetime import datetime

    for c in store.query("SELECT * FROM llm_calls WHERE session_id = ?", (sid,)):
        t = turn_of(datetime.fromisoformat(c["created_at"]).timestamp(), 1)
        if t is not None:
            per_turn[t] += _row_bytes(c)
    for r in store.query("SELECT * FROM turns WHERE session_id = ? ORDER BY idx", (sid,)):
        if r["idx"] < len(per_turn):
            per_turn[r["idx"]] += _row_bytes(r)
    for v in store.query("SELECT v.*, t.idx FROM verdicts v JOIN turns t ON t.id = v.turn_id WHERE t.session_id = ?",
                         (sid,)):
        if v["idx"] < len(per_turn):
            per_turn[v["idx"]] += _row_bytes(v) - 8

    actions = [r["action"] for r in store.query("SELECT action FROM turns WHERE session_id = ? ORDER BY idx", (sid,))]
    cpus = [starts[t + 1]["cpu"] - starts[t]["cpu"] for t in range(len(starts) - 1)]

    def window(k: int) -> range:
        """The ten turns around turn ``k`` (turns 1-10 for turn 1, 46-55 for turn 50), within the session."""
        first = max(1, k - 4)
        return range(first, min(len(walls), len(starts) - 1, first + WINDOW))

    def counted_around(k: int, what: str) -> float:
        return statistics.median(starts[t + 1][what] - starts[t][what] for t in window(k))

    out = {"turns": len(walls), "ms_series": [round(w, 2) for w in walls],  # every turn's figures, for --json
           "cpu_series": [round(c, 2) for c in cpus], "actions": actions[:len(walls)]}
    for k in (1, 50, 200):
        if k < len(walls) or k == len(walls):
            turns = window(min(k, len(walls) - 1))
            out[f"t{k}_ms"] = statistics.median(walls[t] for t in turns)
            out[f"t{k}_bytes"] = statistics.median(per_turn[t] for t in turns)
            for what in ("sql", "texts", "chars", "cpu"):
                out[f"t{k}_{what}"] = counted_around(min(k, len(walls) - 1), what)
            # like for like: the policy's mix of follow-ups and challenges moves over a session, and the two
            # cost differently; each action's median over the window's turns of that action
            by_action: dict[str, dict[str, float]] = {}
            for action in sorted({actions[t] for t in turns if t < len(actions)}):
                same = [t for t in turns if t < len(actions) and actions[t] == action]
                by_action[action] = {"n": len(same), "ms": statistics.median(walls[t] for t in same),
                                     "cpu": statistics.median(cpus[t] for t in same)}
            out[f"t{k}_by_action"] = by_action
    return out


_SQL_TABLE = re.compile(r"\b(?:FROM|INTO|UPDATE|JOIN)\s+([A-Za-z_]+)", re.IGNORECASE)


def sql_kind(sql: str) -> str:
    """A statement's verb and first table ("INSERT events", "SELECT turns", "BEGIN"): what the SQL a turn
    runs is spent on."""
    words = sql.split(None, 1)
    verb = words[0].upper() if words else "?"
    table = _SQL_TABLE.search(sql)
    return f"{verb} {table.group(1)}" if table and verb in ("SELECT", "INSERT", "UPDATE", "DELETE", "WITH") else verb


def _percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    k = (len(ordered) - 1) * q
    lo, hi = int(k), min(int(k) + 1, len(ordered) - 1)
    return ordered[lo] + (ordered[hi] - ordered[lo]) * (k - lo)


def child(spec: dict[str, Any]) -> dict[str, Any]:
    """Run one measurement described by ``spec`` in a temporary home; returns its figures."""
    with tempfile.TemporaryDirectory() as tmp:
        home = Path(tmp) / "home"
        kind = spec.pop("kind")
        fn = {"overhead": measure_overhead, "concurrency": measure_concurrency, "long": measure_long, "bare": measure_bare,
              "client": measure_client}[kind]
        return asyncio.run(fn(home, **spec))


# -- the parent: runs children, prints the table ---------------------------------------------------------

def run_child(spec: dict[str, Any], cached: bool) -> dict[str, Any]:
    env = {**os.environ, "VIVA_EMBED_CACHE": "1" if cached else "0", "PYTHONPATH": str(ROOT)}
    out = subprocess.run([sys.executable, __file__, "--child", json.dumps(spec)], capture_output=True, text=True,
                         env=env, check=False)
    if out.returncode != 0:
        raise SystemExit(f"measurement {spec} failed:\n{out.stderr[-3000:]}")
    return json.loads(out.stdout.strip().splitlines()[-1])


def medians(runs: list[dict[str, Any]]) -> dict[str, Any]:
    """Per-key median of numeric figures over repeated runs."""
    out: dict[str, Any] = {}
    for key, value in runs[0].items():
        if isinstance(value, int | float):
            out[key] = statistics.median(r[key] for r in runs)
        else:
            out[key] = value
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--sessions", default="64,256", help="concurrent sessions, comma-separated")
    parser.add_argument("--latency", type=float, default=0.2)
    parser.add_argument("--turns", type=int, default=6)
    parser.add_argument("--long-turns", type=int, default=200)
    parser.add_argument("--workers", default="1", help="worker processes for the concurrency figure, e.g. 1,2")
    parser.add_argument("--baseline", action="store_true", help="also run with the embedding service off")
    parser.add_argument("--only", default="client,overhead,concurrency,long", help="which measurements")
    parser.add_argument("--quick", action="store_true", help="1 run each, 64 sessions, 60 long turns")
    parser.add_argument("--json", type=Path, help="write every figure here")
    parser.add_argument("--serve", type=float, help=argparse.SUPPRESS)
    parser.add_argument("--child", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.serve is not None:
        return serve(args.serve)
    if args.child:
        print(json.dumps(child(json.loads(args.child))))
        return None
    if args.quick:
        args.repeat, args.sessions, args.long_turns = 1, "64", 60
    only = set(args.only.split(","))
    modes = [("after", True)] + ([("before", False)] if args.baseline else [])
    figures: dict[str, Any] = {}
    try:
        load = os.getloadavg()[0]
    except OSError:
        load = float("nan")
    print(f"bench/engine.py: medians of {args.repeat}; load average at start {load:.2f}; "
          f"'before' = VIVA_EMBED_CACHE=0 (embedding service off)", flush=True)

    def measure(name: str, spec: dict[str, Any]) -> dict[str, dict[str, Any]]:
        result = {}
        for label, cached in modes:
            result[label] = medians([run_child(dict(spec), cached) for _ in range(args.repeat)])
        figures[name] = result
        return result

    def pair(result: dict[str, dict[str, Any]], key: str, fmt: str = "{:.1f}") -> str:
        text = fmt.format(result["after"][key])
        if "before" in result:
            text += f" (before {fmt.format(result['before'][key])})"
        return text

    if "client" in only:
        r = measure("client", {"kind": "client", "calls": 40})["after"]
        print("CPU per call, this process (the parts a turn keeps; fake server in its own process): "
              f"openai SDK chat.completions.create {r['sdk_create_cpu_ms']:.2f} ms, streamed "
              f"{r['sdk_create_stream_cpu_ms']:.2f} ms; SDK post with plain JSON {r['sdk_post_plain_cpu_ms']:.2f} ms, "
              f"streamed {r['sdk_post_plain_stream_cpu_ms']:.2f} ms; LLMClient.chat (cache lookup, recorded) "
              f"{r['llmclient_chat_cpu_ms']:.2f} ms, streamed {r['llmclient_chat_stream_cpu_ms']:.2f} ms; one new "
              f"text embedded {r['embed_one_text_cpu_ms']:.2f} ms. An LLM-kernel turn (1 streamed call, 2 JSON calls, "
              f"1 text) needs at least {r['sdk_post_plain_stream_cpu_ms'] + 2 * r['sdk_post_plain_cpu_ms'] + r['embed_one_text_cpu_ms']:.1f} ms "
              "of these parts", flush=True)
    if "overhead" in only:
        for kernel, goal in (("config", "p50 < 5 ms"), ("offline", "p50 < 10 ms")):
            for setting, policy, cache in (("bare", "threshold", False), ("default", "onnx", True)):
                r = measure(f"overhead.{kernel}.{setting}", {"kind": "overhead", "kernel": kernel, "policy": policy,
                                                             "use_cache": cache, "sessions": 8, "turns": args.turns})
                name = "LLM kernel" if kernel == "config" else "offline kernel"
                print(f"overhead per adaptive turn, {name}, {setting} ({policy} policy, response cache "
                      f"{'on' if cache else 'off'}): p50 {pair(r, 'p50_ms')} ms, p95 {pair(r, 'p95_ms')} ms; "
                      f"engine CPU {pair(r, 'cpu_ms_per_turn')} ms/turn; SQL {pair(r, 'sql_per_turn', '{:.0f}')} "
                      f"statements/turn (+{pair(r, 'sql_triggered_per_turn', '{:.0f}')} run by triggers); texts embedded/turn {pair(r, 'texts_embedded_per_turn')} in "
                      f"{pair(r, 'embed_runs_per_turn')} ONNX calls; kernel+judge calls/turn {r['after']['kernel_judge_calls_per_turn']:.2f}; "
                      f"of the CPU: the same calls through the bare openai SDK {pair(r, 'client_floor_ms_per_turn')} ms, "
                      f"the same ONNX embedding calls {pair(r, 'embed_floor_ms_per_turn')} ms, the engine's own "
                      f"{pair(r, 'own_cpu_ms_per_turn')} ms"
                      f"   goal: {goal}", flush=True)
                calls = r["after"]["calls_by_purpose"]
                if calls:
                    print("  LLM calls per turn, by purpose (tokens in/out per turn; ratings once a session): " + "; ".join(
                        f"{p} {c['calls']:.2f} ({c['tokens_in']:.0f}/{c['tokens_out']:.0f})" for p, c in calls.items()),
                        flush=True)
                print("  SQL statements per turn, by kind: " + ", ".join(
                    f"{k} {n:.1f}" for k, n in r["after"]["sql_by_kind"].items() if n >= 0.05), flush=True)
    if "concurrency" in only:
        for n in [int(s) for s in args.sessions.split(",")]:
            r = measure(f"bare.{n}", {"kind": "bare", "sessions": n, "latency": args.latency, "turns": args.turns})
            a = r["after"]
            print(f"{n} sessions' calls through the bare openai SDK, no engine (the ceiling here): {a['elapsed_s']:.2f} s, "
                  f"ideal {a['ideal_s']:.2f} s -> {a['ratio']:.2f} of ideal; a call took {a['call_ms_mean']:.0f} ms on "
                  f"average; CPU per turn: the SDK {a['client_cpu_ms_per_turn']:.1f} ms + fake server "
                  f"{a['server_cpu_ms_per_turn']:.1f} ms", flush=True)
        for workers in [int(w) for w in args.workers.split(",")]:
            for n in [int(s) for s in args.sessions.split(",")]:
                r = measure(f"concurrency.{n}.w{workers}", {"kind": "concurrency", "sessions": n,
                                                            "latency": args.latency, "turns": args.turns,
                                                            "workers": workers})
                print(f"{n} sessions x {args.turns} turns at {args.latency * 1000:.0f} ms/call, {workers} process(es): "
                      f"{pair(r, 'elapsed_s', '{:.2f}')} s, ideal {r['after']['ideal_s']:.2f} s -> "
                      f"{pair(r, 'ratio', '{:.2f}')} of ideal   goal: >= 0.85; CPU per turn: engine "
                      f"{pair(r, 'engine_cpu_ms_per_turn')} ms + fake server {pair(r, 'server_cpu_ms_per_turn')} ms, so "
                      f"{r['after']['cores']} cores allow at most {pair(r, 'cpu_bound_ratio', '{:.2f}')} of ideal "
                      f"(sessions ran in {r['after']['processes']:.0f} process(es); workers' start-up "
                      f"{r['after']['startup_cpu_s']:.1f} s CPU, not counted)",
                      flush=True)
                a = r["after"]
                print(f"  calls in flight {100 * a['in_flight_share']:.0f}% of the time (of {n} sessions' calls); a call "
                      f"took {a['call_ms_mean']:.0f} ms on average (median {a['call_ms_median']:.0f}), the server "
                      f"{args.latency * 1000:.0f}: {a['in_flight_share']:.2f} x {args.latency * 1000:.0f}/"
                      f"{a['call_ms_mean']:.0f} = {a['in_flight_share'] * args.latency * 1000 / a['call_ms_mean']:.2f}",
                      flush=True)
                bare = figures.get(f"bare.{n}", {}).get("after")
                if bare:
                    print(f"  the engine's run is {a['ratio'] / bare['ratio']:.2f} of the bare SDK's ({a['ratio']:.2f} / "
                          f"{bare['ratio']:.2f})", flush=True)
                kept = figures.get("overhead.config.default", {}).get("after")
                if kept:  # what the parts the engine keeps would allow alone, from this run's overhead figures
                    a = r["after"]
                    floor = kept["client_floor_ms_per_turn"] + kept["embed_floor_ms_per_turn"] + a["server_cpu_ms_per_turn"]
                    print(f"  with the engine's own CPU at zero (the openai SDK's {kept['client_floor_ms_per_turn']:.1f} ms "
                          f"and ONNX's {kept['embed_floor_ms_per_turn']:.1f} ms a turn, from the LLM kernel's overhead run, "
                          f"and the fake server's {a['server_cpu_ms_per_turn']:.1f} ms), {a['cores']} cores would allow at "
                          f"most {min(1.0, a['ideal_s'] * a['cores'] / (a['turns'] * floor / 1000)):.2f} of ideal",
                          flush=True)
    if "long" in only:
        for kernel, name in (("offline", "offline kernel"), ("config", "LLM kernel")):
            r = measure(f"long.{kernel}", {"kind": "long", "turns": args.long_turns, "kernel": kernel})
            cells = [f"turn {k}: {pair(r, f't{k}_ms', '{:.1f}')} ms ({pair(r, f't{k}_cpu', '{:.1f}')} ms of the engine's "
                     f"CPU), {pair(r, f't{k}_bytes', '{:.0f}')} bytes, "
                     f"{r['after'][f't{k}_sql']:.0f} SQL statements"
                     + (f", {r['after'][f't{k}_texts']:.0f} texts ({r['after'][f't{k}_chars']:.0f} characters) "
                        "embedded" if kernel == "offline" else "")
                     for k in (1, 50, 200) if f"t{k}_ms" in r["after"]]
            a = r["after"]
            ratios = ", ".join(f"{what} x{a[f't50_{what}'] / a[f't1_{what}']:.2f}" for what in ("ms", "cpu", "sql", "bytes")
                               if a.get(f"t1_{what}") and f"t50_{what}" in a)
            early, late = a.get("t1_by_action", {}), a.get("t50_by_action", {})
            alike = "; ".join(
                f"{action} ({early[action]['n']}/{late[action]['n']} turns) ms x{late[action]['ms'] / early[action]['ms']:.2f}, "
                f"cpu x{late[action]['cpu'] / early[action]['cpu']:.2f}"
                for action in early if action in late and min(early[action]["n"], late[action]["n"]) >= 3)
            print(f"per turn by turn index, {name} (median of the {WINDOW} turns from turn 1, 46, 196): " + "; ".join(cells)
                  + (f"; turn 50 / turn 1: {ratios}" if ratios else "")
                  + (f"; like for like (the same action, at least 3 turns in each window): {alike}" if alike else "")
                  + "   goal: flat (turn 50 within 20% of turn 1)", flush=True)
    if args.json:
        args.json.write_text(json.dumps(figures, indent=2))
    return None


if __name__ == "__main__":
    main()
