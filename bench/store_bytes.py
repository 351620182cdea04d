"""Bytes stored per turn of one long adaptive session, through the fake OpenAI server.

After every judged turn (each ``metrics`` event) the logical size of what the store holds is taken
(the sum of ``length()`` of every column of every row), split into three groups:

- **requests**: ``llm_calls`` and, when the store has them, ``llm_messages`` and the ``texts`` they use;
- **events**: the ``events`` table;
- **turns**: ``turns``, ``verdicts`` and the ``texts`` that hold turn summaries.

The bytes of turn t are the growth of each group between the end of turn t−1 and the end of turn t.
The kernel and the judge are LLM kernels on the fake server (scripted by
``tests.engine.interview_fixtures.script_llm_kernel``), so every kernel, judge and target request
is a real HTTP call through the real openai client and is recorded.

Run: ``python bench/store_bytes.py [--turns 200] [--at 1,50,200]``
"""

from __future__ import annotations

import argparse
import asyncio
import sys
import tempfile
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from engine.config import Config, ModelConfig  # noqa: E402
from engine.interview.run import RunRequest, execute_run, plan_run, run_sessions  # noqa: E402
from engine.runtime import Runtime  # noqa: E402
from engine.store import Store  # noqa: E402
from tests.engine.interview_fixtures import make_bench, script_llm_kernel  # noqa: E402
from tests.fakes.openai_server import FakeOpenAI  # noqa: E402

GROUPS = {"requests": ("llm_calls", "llm_messages"), "events": ("events",), "turns": ("turns", "verdicts")}


def _table_bytes(store: Store, table: str, where: str = "") -> int:
    columns = [r["name"] for r in store.query(f"PRAGMA table_info({table})")]
    if not columns:
        return 0
    total = " + ".join(f"COALESCE(length({c}), 0)" for c in columns)
    return int(store.one(f"SELECT COALESCE(SUM({total}), 0) AS n FROM {table} {where}")["n"])


def stored_bytes(store: Store) -> dict[str, int]:
    """Logical bytes held per group (see the module docstring)."""
    out = {name: sum(_table_bytes(store, t) for t in tables) for name, tables in GROUPS.items()}
    has_texts = store.one("SELECT 1 AS x FROM sqlite_master WHERE name = 'texts'") is not None
    if has_texts:
        turn_texts = _table_bytes(store, "texts", "WHERE id IN (SELECT summary_text FROM turns)")
        out["turns"] += turn_texts
        out["requests"] += _table_bytes(store, "texts") - turn_texts
    return out


async def measure(home: Path, fake: FakeOpenAI, turns: int) -> list[dict[str, int]]:
    """Run one session of ``turns`` turns; the stored bytes after each judged turn, in order."""
    endpoint = ModelConfig(base_url=fake.base_url, model="bench-kernel", timeout=30, max_retries=0)
    runtime = Runtime(home=home, config=Config(kernel=endpoint, targets={"t": endpoint}), use_cache=False)
    make_bench(runtime.store, name="b")
    run_id = plan_run(runtime, RunRequest(bench="b", targets=["t"], kernel="config", policy="threshold",
                                          turns=turns))
    reader = Store(runtime.store.path)
    after: list[dict[str, int]] = [stored_bytes(reader)]

    def on_event(sid: int, kind: str, payload: dict[str, Any]) -> None:
        if kind == "metrics":
            after.append(stored_bytes(reader))

    errors = await execute_run(runtime, run_id, on_event)
    failed = [e for e in errors.values() if e]
    if failed:
        raise SystemExit(f"the session failed: {failed[0]}")
    assert len(run_sessions(runtime, run_id)) == 1
    reader.close()
    runtime.store.close()
    return after


def per_turn(after: list[dict[str, int]]) -> list[dict[str, int]]:
    """Bytes added by each turn (turn 1 is the first judged turn), per group."""
    return [{k: b[k] - a[k] for k in b} for a, b in zip(after, after[1:], strict=False)]


def main() -> None:
    """Print the bytes per turn at the chosen turns, and the totals."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--turns", type=int, default=200)
    parser.add_argument("--at", default="1,50,200", help="turns to print (1-based)")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp, FakeOpenAI() as fake:
        script_llm_kernel(fake)
        after = asyncio.run(measure(Path(tmp), fake, args.turns))
    rows = per_turn(after)
    print(f"bytes stored per turn, one adaptive session of {args.turns} turns (LLM kernel on the fake server)")
    print(f"{'turn':>5} {'requests':>10} {'events':>10} {'turns':>10}")
    for t in (int(x) for x in args.at.split(",")):
        if 1 <= t <= len(rows):
            r = rows[t - 1]
            print(f"{t:>5} {r['requests']:>10} {r['events']:>10} {r['turns']:>10}")
    total = after[-1]
    print(f"total {total['requests']:>10} {total['events']:>10} {total['turns']:>10}")


if __name__ == "__main__":
    main()
