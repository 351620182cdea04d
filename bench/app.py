"""App benchmarks (prints figures; asserts nothing).

1. First frame *with rows*: wall time from starting ``viva`` (Home) in a pseudo-terminal to the first
   frame that shows the session list's rows (its "N session(s)" count is drawn with the rows), the
   real console script and terminal driver; at 10 and at 10,000 stored sessions. Goal < 1.5 s.
2. Home key latency while another process writes, at 10 and at 10,000 sessions: ``viva`` runs in
   tmux (a real terminal); ``viva run`` runs four sessions in another process against the fake
   server (streaming 100 tokens/s each) into the same data home; more than 100 keys (down, up, and
   at 10,000 sessions page down / page up) are sent with ``tmux send-keys``, and the latency of each
   is the time until ``tmux capture-pane`` shows the cursor on another session (the highlighted row
   is the bold one). Polling capture-pane costs a few ms, reported as the resolution. Goal p95 < 100 ms.
3. Key latency while streaming: the live screen follows a session whose target streams 100
   tokens/s from the fake server; ``tab`` is pressed every ~0.1 s and the time from the key event to
   the first frame that shows its effect is taken (frames rendered to terminal bytes, as a real
   terminal would get them). Goal p95 < 100 ms.
4. Review open: a 200-turn session (run once by the engine against the fake server), from asking
   the review screen to load it to the first frame that shows it. Goal < 1 s.
5. Peak memory (max RSS) of the ``viva`` process and of this process (which ran 3 and 4).

The 10,000 sessions are written straight into the store (:func:`populate`: six scored turns each,
as a run leaves them; the store's triggers keep the per-session aggregates).

Run: ``python bench/app.py [--repeat 5] [--presses 120] [--turns 200] [--sessions 10000]``
(``--only home`` runs 1 and 2 only).
"""

from __future__ import annotations

import argparse
import asyncio
import fcntl
import os
import pty
import re
import resource
import select
import shutil
import statistics
import struct
import subprocess
import sys
import tempfile
import termios
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from engine.api import Engine  # noqa: E402
from engine.config import Config, ModelConfig  # noqa: E402
from engine.runtime import Runtime  # noqa: E402
from engine.store import Store  # noqa: E402
from tests.fakes.openai_server import FakeOpenAI  # noqa: E402
from tests.tui.conftest import make_benchmark  # noqa: E402

VIVA = shutil.which("viva") or str(Path(sys.executable).with_name("viva"))
LONG_ANSWER = " ".join(["Influenza viruses spread through respiratory droplets when people cough or sneeze,"
                        " and yearly vaccination prevents most severe illness."] * 25)


def pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(round(q * (len(ordered) - 1))))]


# -- 1. first frame ----------------------------------------------------------------------------
def first_frame(home: Path, repeat: int) -> tuple[list[float], int]:
    """Seconds from exec to the first frame with the session list's rows, and the max RSS (KiB)."""
    times = []
    for _ in range(repeat):
        pid, fd = pty.fork()
        if pid == 0:
            os.execv(VIVA, [VIVA, "--home", str(home)])
        fcntl.ioctl(fd, termios.TIOCSWINSZ, struct.pack("HHHH", 40, 120, 0, 0))
        start = time.perf_counter()
        seen = b""
        elapsed = None
        while elapsed is None and time.perf_counter() - start < 60:
            ready, _, _ = select.select([fd], [], [], 0.01)
            if ready:
                try:
                    seen += os.read(fd, 65536)
                except OSError:
                    break
                if b"Benchmarks" in seen and b"session(s)" in seen:  # the count is drawn with the rows
                    elapsed = time.perf_counter() - start
        os.write(fd, b"\x11")  # ctrl+q
        deadline = time.monotonic() + 20
        while time.monotonic() < deadline:
            done, _ = os.waitpid(pid, os.WNOHANG)
            if done:
                break
            ready, _, _ = select.select([fd], [], [], 0.05)
            if ready:
                try:
                    os.read(fd, 65536)
                except OSError:
                    pass
        else:
            os.kill(pid, 9)
            os.waitpid(pid, 0)
        os.close(fd)
        if elapsed is not None:
            times.append(elapsed)
    return times, resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss


# -- many sessions ------------------------------------------------------------------------------
def populate(store, n: int, item_id: int, seed: int = 0) -> list[int]:
    """Write ``n`` finished (some failed) six-turn sessions of one item straight into the store, as a
    run would leave them (turn rows with actions, scores, Δs, tokens; the store's triggers keep the
    per-session aggregates). Seeded. Returns the new session ids."""
    import random

    rng = random.Random(seed)
    bench = store.one("SELECT benchmark_id FROM items WHERE id = ?", (item_id,))["benchmark_id"]
    targets = [f"openai:model-{k}@http://127.0.0.1:9/v1" for k in range(12)]
    actions = ["follow-up", "challenge", "new-question"]
    ids = []
    with store.transaction():
        for k in range(n):
            status = "failed" if rng.random() < 0.05 else "finished"
            created = f"2025-{1 + k * 12 // max(n, 1):02d}-{1 + k % 28:02d}T{k % 24:02d}:{k % 60:02d}:00+00:00"
            score = None if status == "failed" else round(rng.uniform(0, 100), 1)
            sid = store.conn.execute(
                "INSERT INTO sessions (run_id, item_id, benchmark_id, protocol, target, kernel, policy, status, score, "
                "created_at, updated_at) VALUES (NULL, ?, ?, 'adaptive', ?, 'offline', ?, ?, ?, ?, ?)",
                (item_id, bench, rng.choice(targets), rng.choice(["threshold", "random", "onnx"]), status, score,
                 created, created)).lastrowid
            ids.append(sid)
            store.conn.executemany(
                "INSERT INTO turns (session_id, idx, question, answer, action, score, delta, tokens_in, tokens_out, "
                "cost, created_at) VALUES (?, ?, 'q', 'a', ?, ?, ?, ?, ?, 0.0001, ?)",
                [(sid, t, "initial" if t == 0 else rng.choice(actions), rng.random(),
                  None if t == 0 else round(rng.uniform(-0.3, 0.3), 3), 200, 50, created) for t in range(6)])
    return ids


# -- 2. Home keys through tmux while another process writes ---------------------------------------
_ROW = re.compile(r"^(?:\S*?)((?:\x1b\[[0-9;]*m)*)\s(\d+)\s{2,}")


def cursor_id(screen: str) -> int | None:
    """The session id on the highlighted (bold) row of a ``capture-pane -e`` screen."""
    for line in screen.splitlines():
        m = _ROW.match(line)
        if m and "\x1b[1m" in m.group(1):
            return int(m.group(2))
    return None


def tmux(*args: str) -> str:
    return subprocess.run(["tmux", *args], capture_output=True, text=True).stdout


WRITER_CONFIG = """targets:
{targets}
"""


def writer(home: Path, base_url: str, n: int = 4) -> subprocess.Popen:
    """``viva run`` of ``n`` long sessions at once in its own process, into ``home`` (the other writer)."""
    targets = "\n".join(f"  w{k}: {{base_url: '{base_url}', model: 'fake-model'}}" for k in range(n))
    config = home / "writer.yaml"
    config.write_text(WRITER_CONFIG.format(targets=targets))
    cmd = [VIVA, "--home", str(home), "--config", str(config), "run", "--bench", "flu", "--kernel", "offline",
           "--turns", "200", "--policy", "random", "--concurrency", str(n)]
    for k in range(n):
        cmd += ["--target", f"w{k}"]
    return subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)


def home_keys(home: Path, presses: int, big: bool) -> tuple[list[float], int, float, float, dict[str, list[float]]]:
    """Key latencies (ms) on Home in tmux; also keys without a visible effect, the first frame with
    rows as tmux shows it (s), the mean cost of one capture-pane (ms, the resolution) and the
    latencies by key."""
    name = f"viva-bench-{os.getpid()}"
    tmux("new-session", "-d", "-s", name, "-x", "120", "-y", "40", f"{VIVA} --home {home}")
    latencies: list[float] = []
    by_key: dict[str, list[float]] = {}
    missed = 0
    captures: list[float] = []
    try:
        start = time.perf_counter()
        while "session(s)" not in tmux("capture-pane", "-p", "-t", name):
            if time.perf_counter() - start > 120:
                raise SystemExit("Home never showed its rows in tmux")
            time.sleep(0.02)
        first = time.perf_counter() - start
        tmux("send-keys", "-t", name, "Down")  # start on the second row, so up and down both move
        time.sleep(1.0)
        cycle = ["Down", "Down", "Up", "PageDown", "PageUp", "Up"] if big else ["Down", "Down", "Up", "Up"]
        k = 0
        while len(latencies) + missed < presses:
            before = cursor_id(tmux("capture-pane", "-e", "-p", "-t", name))
            key = cycle[k % len(cycle)]
            k += 1
            t0 = time.perf_counter()
            tmux("send-keys", "-t", name, key)
            seen = None
            while time.perf_counter() - t0 < 10:
                c0 = time.perf_counter()
                now = cursor_id(tmux("capture-pane", "-e", "-p", "-t", name))
                captures.append(time.perf_counter() - c0)
                if now is not None and now != before:
                    seen = time.perf_counter()
                    break
            if seen is None:
                missed += 1
            else:
                latencies.append((seen - t0) * 1000)
                by_key.setdefault(key, []).append(latencies[-1])
            time.sleep(0.1)
    finally:
        tmux("send-keys", "-t", name, "C-q")
        time.sleep(1.0)
        tmux("kill-session", "-t", name)
    return latencies, missed, first, 1000 * statistics.mean(captures) if captures else float("nan"), by_key


def home_figures(sessions: int, presses: int, repeat: int) -> None:
    """Figures 1 and 2 at one number of stored sessions (a fresh data home)."""
    home = Path(tempfile.mkdtemp(prefix=f"viva-bench-home{sessions}-"))
    try:
        with FakeOpenAI() as fake:
            runtime = bench_runtime(home, fake)
            item = make_benchmark(runtime)
            t = time.perf_counter()
            populate(runtime.store, sessions, item)
            runtime.store.close()
        print(f"{sessions} sessions written in {time.perf_counter() - t:.1f} s; load average "
              f"{os.getloadavg()[0]:.2f}", flush=True)
        frames, _ = first_frame(home, repeat)
        if frames:
            print(f"  first frame with rows ({len(frames)} runs): median {statistics.median(frames):.2f} s, "
                  f"max {max(frames):.2f} s   (goal < 1.5 s)", flush=True)
        if shutil.which("tmux") is None:
            print("  Home keys: tmux is not installed; skipped")
            return
        with StreamingServer(LONG_ANSWER, 0.01) as base_url:
            proc = writer(home, base_url)
            try:
                time.sleep(3.0)
                latencies, missed, first, capture, by_key = home_keys(home, presses, big=sessions > 100)
            finally:
                proc.terminate()
                proc.wait()
        written = Store(home / "viva.db")
        events = written.one("SELECT COUNT(*) AS n FROM events")["n"]
        written.close()
        if latencies:
            keys = "down/up/page down/page up" if sessions > 100 else "down/up"
            print(f"  Home key latency via tmux while `viva run` writes ({len(latencies)} presses of {keys}; "
                  f"{events} events written): p50 {pct(latencies, 0.5):.0f} ms, p95 {pct(latencies, 0.95):.0f} ms, "
                  f"max {max(latencies):.0f} ms   (goal p95 < 100 ms; capture-pane resolution {capture:.0f} ms; "
                  f"first frame with rows in tmux {first:.2f} s)" + (f"; {missed} without a visible effect"
                                                                    if missed else ""), flush=True)
            print("    by key: " + ", ".join(f"{k} p50 {pct(v, 0.5):.0f} ms / p95 {pct(v, 0.95):.0f} ms ({len(v)})"
                                          for k, v in by_key.items()), flush=True)
    finally:
        shutil.rmtree(home, ignore_errors=True)


# -- helpers -----------------------------------------------------------------------------------
SERVER = """
import sys
sys.path.insert(0, {root!r})
from tests.fakes.openai_server import FakeOpenAI
server = FakeOpenAI()
server.default = {{"content": {answer!r}, "token_delay": {delay!r}}}
print(server.base_url, flush=True)
server.httpd.serve_forever()
"""


class StreamingServer:
    """The fake OpenAI server in its own process, streaming one long answer at ``1/delay`` tokens/s
    (in this process it would compete with the app for the interpreter lock, as no real server does)."""

    def __init__(self, answer: str, delay: float):
        self.code = SERVER.format(root=str(ROOT), answer=answer, delay=delay)

    def __enter__(self) -> str:
        self.proc = subprocess.Popen([sys.executable, "-c", self.code], stdout=subprocess.PIPE, text=True)
        return self.proc.stdout.readline().strip()

    def __exit__(self, *exc: object) -> None:
        self.proc.terminate()
        self.proc.wait()


def bench_runtime(home: Path, fake: FakeOpenAI) -> Runtime:
    endpoint = ModelConfig(base_url=fake.base_url, model="fake-model", timeout=30.0, max_retries=1)
    return Runtime(home=home, config=Config(targets={"fake": endpoint}))


def run_in_thread(runtime: Runtime, run_id: int) -> None:
    from engine.interview.run import execute_run

    def work() -> None:
        rt = Runtime(home=runtime.home, config=runtime.config)
        asyncio.run(execute_run(rt, run_id))
        rt.store.close()

    with ThreadPoolExecutor(1) as pool:
        pool.submit(work).result()


class FrameClock:
    """Records when the app puts a frame on the terminal (rendered to bytes, as a terminal gets it)."""

    def __init__(self, app) -> None:
        self.frames: list[float] = []
        original = app._display

        def display(screen, renderable) -> None:
            if renderable is not None and hasattr(renderable, "render_segments"):
                renderable.render_segments(app.console)
            original(screen, renderable)
            self.frames.append(time.perf_counter())

        app._display = display

    def after(self, t: float) -> float | None:
        return next((f for f in self.frames if f >= t), None)


# -- 2. key latency while streaming ------------------------------------------------------------
async def key_latency(runtime: Runtime, base_url: str, presses: int) -> tuple[list[float], int, float]:
    """Latencies (ms) of ``tab`` presses made while an answer streams; also tokens streamed/s."""
    from textual import events

    from engine.interview.run import RunRequest, plan_run
    from tui.launch import build_app

    run_id = plan_run(runtime, RunRequest(bench="flu", targets=[f"openai:fake-model@{base_url}"], kernel="offline",
                                          turns=6, policy="threshold"))
    app = build_app(Engine(runtime), "live", run_id=run_id)
    latencies: list[float] = []
    async with app.run_test(size=(120, 40)) as pilot:
        clock = FrameClock(app)
        while app.screen.state is None or not app.screen.state.turns or not app.screen.state.turns[-1].answer:
            await asyncio.sleep(0.01)
        streamed_from = len(app.screen.state.turns[-1].answer.split())
        started = time.perf_counter()
        missed = 0
        while len(latencies) < presses:
            state = app.screen.state
            if state.status == "finished":
                break
            if not (state.turns and not state.turns[-1].done and state.turns[-1].answer):
                await asyncio.sleep(0.02)  # between answers: only count presses during a stream
                continue
            before = app.screen.focused
            t0 = time.perf_counter()
            app._driver.send_message(events.Key("tab", None))
            while app.screen.focused is before and time.perf_counter() - t0 < 2:
                await asyncio.sleep(0.0005)
            changed = time.perf_counter()
            frame = None
            while frame is None and time.perf_counter() - changed < 2:
                await asyncio.sleep(0.001)
                frame = clock.after(changed)
            if frame is None:
                missed += 1
            else:
                latencies.append((frame - t0) * 1000)
            await asyncio.sleep(0.08)
        state = app.screen.state
        words = sum(len(t.answer.split()) for t in state.turns) - streamed_from
        rate = words / (time.perf_counter() - started)
        await pilot.press("x")
    return latencies, missed, rate


# -- 3. review open ----------------------------------------------------------------------------
async def review_open(runtime: Runtime, session_id: int, repeat: int) -> list[float]:
    from tui.launch import build_app

    times = []
    for _ in range(repeat):
        app = build_app(Engine(runtime), "home")
        async with app.run_test(size=(120, 40)) as pilot:
            await pilot.pause()
            clock = FrameClock(app)
            t0 = time.perf_counter()
            app.open_review(session_id)
            screen = app.review_screen
            while not (screen.state is not None and screen.steps and screen.pane.turn_count == len(screen.state.turns)):
                await asyncio.sleep(0.001)
            shown = time.perf_counter()
            frame = None
            while frame is None:
                await asyncio.sleep(0.001)
                frame = clock.after(shown)
            times.append(frame - t0)
    return times


def long_session(runtime: Runtime, fake: FakeOpenAI, turns: int) -> int:
    from engine.interview.run import RunRequest, plan_run, run_sessions

    existing = runtime.store.one("SELECT s.id FROM sessions s WHERE s.status = 'finished' AND "
                                 "(SELECT COUNT(*) FROM turns t WHERE t.session_id = s.id) = ?", (turns,))
    if existing:
        return existing["id"]
    fake.default = {"content": "Influenza viruses spread through droplets; yearly vaccination prevents it."}
    run_id = plan_run(runtime, RunRequest(bench="flu", targets=["fake"], kernel="offline", turns=turns,
                                          policy="random"))
    run_in_thread(runtime, run_id)
    return run_sessions(runtime, run_id)[0]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=5, help="runs of the first-frame and review figures")
    parser.add_argument("--presses", type=int, default=120, help="key presses measured (Home, and while streaming)")
    parser.add_argument("--turns", type=int, default=200, help="turns of the session opened in review")
    parser.add_argument("--sessions", type=int, default=10_000, help="stored sessions of the large Home figures")
    parser.add_argument("--only", choices=["home", "rest"], default=None, help="run only figures 1-2, or 3-5")
    parser.add_argument("--home", type=Path, default=None, help="data home to reuse for 3-5 (default: a temporary one)")
    args = parser.parse_args()
    print(f"{os.cpu_count()} CPUs; load average {os.getloadavg()[0]:.2f}")
    if args.only != "rest":
        for sessions in (10, args.sessions):
            home_figures(sessions, args.presses, args.repeat)
    if args.only == "home":
        return
    home = args.home or Path(tempfile.mkdtemp(prefix="viva-bench-app-"))
    home.mkdir(parents=True, exist_ok=True)

    with FakeOpenAI() as fake:
        runtime = bench_runtime(home, fake)
        if runtime.store.one("SELECT id FROM benchmarks WHERE name = 'flu'") is None:
            make_benchmark(runtime)
        print(f"data home {home}; load average {os.getloadavg()[0]:.2f}")

        print(f"preparing a {args.turns}-turn session...", flush=True)
        t = time.perf_counter()
        long_sid = long_session(runtime, fake, args.turns)
        print(f"  session {long_sid} ready ({time.perf_counter() - t:.1f} s)")

        _, child_rss = first_frame(home, 1)

        with StreamingServer(LONG_ANSWER, 0.01) as base_url:  # 100 pieces (tokens) per second
            latencies, missed, rate = asyncio.run(key_latency(runtime, base_url, args.presses))
        if latencies:
            print(f"key latency while streaming ({len(latencies)} presses, {rate:.0f} tokens/s streamed): "
                  f"p50 {pct(latencies, 0.5):.1f} ms, p95 {pct(latencies, 0.95):.1f} ms, "
                  f"max {max(latencies):.1f} ms   (goal p95 < 100 ms)" + (f"; {missed} without a frame" if missed else ""))

        opens = asyncio.run(review_open(runtime, long_sid, args.repeat))
        print(f"review open of a {args.turns}-turn session ({len(opens)} runs): median {statistics.median(opens):.2f} s, "
              f"max {max(opens):.2f} s   (goal < 1 s)")

        own = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
        print(f"peak memory: viva (Home) {child_rss / 1024:.0f} MiB; this process (live + review) {own / 1024:.0f} MiB")
        runtime.store.close()
    if args.home is None:
        shutil.rmtree(home, ignore_errors=True)


if __name__ == "__main__":
    main()
