"""The offline kernel's floor per adaptive turn: what the texts a turn must embed cost on this machine.

Runs ``--sessions`` offline-kernel sessions of ``--turns`` turns one at a time against the fake
server in its own process (``bench/engine.py``'s overhead setting: threshold policy, response cache
off) and records every encoder run the embedding service makes. Then it replays those exact batches
through the encoder alone (``Embedder.embed``, median of ``--repeat``) and prints, per adaptive turn:

- texts and tokens embedded, encoder runs, the share that is the running summary (for cos_t);
- the encoder's time for them: the floor no caching removes (every text is new: a new answer's
  sentences with their question, the pairs they form, the new summary), and its time per token;
- the measured overhead (wall between ``turn.started`` events, as ``bench/engine.py``) and the engine
  process's CPU per turn (all threads), each with the encoder's share taken off: what remains.

Prints figures; asserts nothing. Run: ``python bench/offline_floor.py [--sessions 8] [--turns 6]``.
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))


def _bench_engine() -> Any:
    import importlib.util

    spec = importlib.util.spec_from_file_location("bench_engine", ROOT / "bench" / "engine.py")
    module = importlib.util.module_from_spec(spec)  # type: ignore[arg-type]
    spec.loader.exec_module(module)  # type: ignore[union-attr]
    return module


async def run_sessions(home: Path, sessions: int, turns: int) -> dict[str, Any]:
    """Run the sessions; return the encoder's batches, the turns' summaries and per-turn walls."""
    from engine.interview.run import execute_run
    from engine.interview.run import run_sessions as sessions_of
    from engine.knowledge.embed import get_embedding_service

    be = _bench_engine()
    with be.Server(0.0) as server:
        runtime = be._runtime(home, server.base_url, False)
        run_id = be._plan(runtime, sessions, turns, "offline", "threshold", 1)
        service = get_embedding_service(runtime.config.retrieval.embedder)
        service.embed(["warm up"])
        encoder = service.embedder
        batches: list[list[str]] = []
        plain = encoder.embed

        def recorded(texts: list[str]) -> Any:
            batches.append(list(texts))
            return plain(texts)

        encoder.embed = recorded
        cpu = time.process_time()
        try:
            errors = await execute_run(runtime, run_id)
        finally:
            cpu = time.process_time() - cpu
            del encoder.embed
    if any(errors.values()):
        raise SystemExit(f"sessions failed: {errors}")
    walls: list[float] = []
    summaries: set[str] = set()
    for sid in sessions_of(runtime, run_id):
        marks = be._turn_marks(runtime.store, sid)
        walls += [(b[1] - a[1]) * 1000 for a, b in zip(marks[1:], marks[2:], strict=False)]
        from engine.store.texts import fill_summaries

        rows = fill_summaries(runtime.store, runtime.store.query("SELECT * FROM turns WHERE session_id = ?", (sid,)))
        summaries.update(r["summary"] for r in rows if r["summary"])
    n_turns = runtime.store.one("SELECT COUNT(*) AS n FROM turns")["n"]
    return {"batches": batches, "summaries": summaries, "walls": walls, "turns": n_turns, "encoder": encoder,
            "cpu": cpu}


def main() -> None:
    """Command line (see the module docstring)."""
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sessions", type=int, default=8)
    ap.add_argument("--turns", type=int, default=6)
    ap.add_argument("--repeat", type=int, default=5, help="replays of each batch (median)")
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        out = asyncio.run(run_sessions(Path(tmp) / "home", args.sessions, args.turns))
    encoder, batches, turns = out["encoder"], out["batches"], out["turns"]
    texts = [t for b in batches for t in b]
    tokens = [len(ids) for ids in encoder._encode_ids(texts)] if texts else []
    summary_tokens = sum(n for t, n in zip(texts, tokens, strict=True) if t in out["summaries"])
    wall = cpu = 0.0
    for batch in batches:
        walls, cpus = [], []
        for _ in range(args.repeat):
            w, c = time.perf_counter(), time.process_time()
            encoder.embed(batch)
            walls.append(time.perf_counter() - w)
            cpus.append(time.process_time() - c)
        wall += statistics.median(walls)
        cpu += statistics.median(cpus)
    p50 = statistics.median(out["walls"])
    per_turn = 1000 / turns
    try:
        import os

        load = os.getloadavg()[0]
    except OSError:
        load = float("nan")
    print(f"offline kernel, {args.sessions} sessions x {args.turns} turns ({turns} turns), load {load:.2f}, "
          f"encoder {encoder.name}, {encoder.workers} worker thread(s)")
    print(f"  per turn: {len(texts) / turns:.2f} texts, {sum(tokens) / turns:.0f} tokens "
          f"({summary_tokens / turns:.0f} of them the running summary), {len(batches) / turns:.2f} encoder runs")
    print(f"  encoder alone on those batches: {wall * per_turn:.1f} ms wall, {cpu * per_turn:.1f} ms CPU per turn "
          f"({1000 * cpu / max(1, sum(tokens)):.2f} ms CPU per token)")
    print(f"  measured: overhead per adaptive turn p50 {p50:.1f} ms (minus the encoder's wall: "
          f"{p50 - wall * per_turn:.1f} ms); engine CPU {out['cpu'] * per_turn:.1f} ms per turn (minus the "
          f"encoder's CPU: {(out['cpu'] - cpu) * per_turn:.1f} ms)")


if __name__ == "__main__":
    main()
