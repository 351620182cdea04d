"""The embedded local model's speed by thread count, idle and with one core busy (prints figures).

For each thread count (1, 2 and the usable cores, without repeats) the real ``llama_cpp.server`` is
started through :class:`engine.interview.local.LocalServer` with that many threads; after one warm-up
request, ``--requests`` greedy completions of ``--tokens`` tokens are timed and their tokens per second
(completion tokens / wall time, the median of the requests) printed. Then the same again while one
extra process spins a core (``while True: pass``), as another program on the machine would.

Run: ``python bench/local_threads.py [--tokens 40] [--requests 3]``. The load average is printed
with each row: on a machine shared with other work, "idle" only means no load added by the bench.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from engine.interview.local import MODEL_ALIAS, LocalServer, available_cpus, default_threads  # noqa: E402

PROMPT = "Explain in a few sentences how seasonal influenza spreads and how it can be prevented."


def complete(base_url: str, tokens: int) -> tuple[int, float]:
    """(completion tokens, seconds) of one greedy request of at most ``tokens`` tokens."""
    body = json.dumps({"model": MODEL_ALIAS, "messages": [{"role": "user", "content": PROMPT}],
                       "max_tokens": tokens, "temperature": 0.0}).encode()
    request = urllib.request.Request(f"{base_url}/chat/completions", data=body,
                                     headers={"Content-Type": "application/json"})
    start = time.perf_counter()
    with urllib.request.urlopen(request, timeout=600) as resp:
        payload = json.loads(resp.read())
    return int(payload["usage"]["completion_tokens"]), time.perf_counter() - start


def measure(home: Path, threads: int, tokens: int, requests: int) -> tuple[float, float]:
    """(median tokens/s, median seconds per request) for a server with ``threads`` threads."""
    server = LocalServer(home, threads=threads)
    try:
        server.wait_ready()
        complete(server.base_url, 8)  # warm-up: model pages, first allocation
        rates, seconds = [], []
        for _ in range(requests):
            n, s = complete(server.base_url, tokens)
            rates.append(n / s)
            seconds.append(s)
        return statistics.median(rates), statistics.median(seconds)
    finally:
        server.stop()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tokens", type=int, default=40)
    parser.add_argument("--requests", type=int, default=3)
    args = parser.parse_args()
    cpus = available_cpus()
    counts = sorted({1, 2, cpus})
    print(f"usable cores: {cpus}; default threads (engine.interview.local.default_threads): {default_threads()}")
    print(f"{'load':>10}  {'threads':>7}  {'tokens/s':>9}  {'s/request':>9}  load average (1, 5 min)")
    with tempfile.TemporaryDirectory() as tmp:
        for busy in (False, True):
            spinner = None
            if busy:
                spinner = subprocess.Popen([sys.executable, "-c", "while True: pass"])
                time.sleep(1.0)
            try:
                for threads in counts:
                    rate, seconds = measure(Path(tmp), threads, args.tokens, args.requests)
                    load = os.getloadavg()
                    label = "1 busy" if busy else "no extra"
                    print(f"{label:>10}  {threads:>7}  {rate:>9.1f}  {seconds:>9.2f}  {load[0]:.2f} {load[1]:.2f}",
                          flush=True)
            finally:
                if spinner is not None:
                    spinner.kill()
                    spinner.wait()


if __name__ == "__main__":
    main()
