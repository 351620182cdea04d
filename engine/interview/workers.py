"""A run's sessions spread over worker processes that share the store (``viva run --workers N``).

Where one core of Python is the ceiling (engine CPU per turn times sessions at once), the sessions of
a run go to ``N`` processes, each with its own interpreter, event loop, database connection and
embedding service, all writing the same SQLite file (WAL: readers never wait, one writer at a time).

**The parent** (:func:`execute_on_workers`, one :class:`WorkerRun`, called by
``engine.interview.run.execute_run``) holds the run's lease and, until it hands a session out, that
session's lease. It starts each worker with
``python -m engine.interview.workers`` (a fresh interpreter: nothing of the parent's event loop, ONNX
session or SQLite connection is inherited) and sends it, on its stdin, the data home, the
configuration (endpoints name the environment variables of their keys; the keys themselves reach a
worker only through the environment it inherits) and its number of slots. Then it hands out session
ids one at a time: a worker gets a new one each time one of its sessions ends, so a worker with long
sessions takes fewer and none sits idle while sessions wait. The parent follows progress by reading
the store's event log and calls ``on_event`` with each event of the run's sessions, as the in-process
path does.

**A worker** runs each session it is handed through one :class:`~engine.interview.pool.SessionPool`;
its runner takes the session's lease and writes everything to the store; the worker reports
``{"done": id, "error": ...}`` on its stdout.

**A worker that dies** (killed, out of memory) leaves its sessions leased by a dead pid, which frees
them at once (``engine.store.lease``): the parent takes their leases back and hands them to the
workers still alive, at most once per session (a session in flight in two workers that died is
reported failed rather than tried a third time); with no worker left, what remains is reported and
``viva resume run:N`` continues it.

**Interrupt** (Ctrl-C reaches the parent; workers ignore SIGINT so it is not delivered twice): the
parent closes every worker's stdin; a worker whose stdin closes without ``stop`` cancels its
sessions (each is marked ``interrupted`` with its event, resumable) and exits; the parent waits for
them (then kills what is left after :data:`EXIT_GRACE` seconds), releases its leases and re-raises.
A parent killed outright closes the pipes too, with the same effect.

**A full or read-only data home** (``engine.store.faults``) met by a worker's session: the session is
marked ``interrupted`` by its runner, the worker cancels its other sessions (interrupted too) and
reports ``{"done": id, "error": ..., "fault": KIND, "line": ...}`` (the one line, naming
``viva resume run:N``); the parent then hands out nothing more (the sessions not handed out stay
resumable), closes every worker's stdin so that each interrupts what it runs, and raises
:class:`~engine.store.faults.HomeFaultError` with that line, as the in-process path does.

Per-endpoint limits (``max_concurrency`` of the endpoints named in the configuration) are divided
among the workers, rounded up; ``concurrency`` (sessions at once) is the run's total, shared among
the workers (never more workers than that).
"""

from __future__ import annotations

import asyncio
import collections
import json
import logging
import math
import os
import signal
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from engine.config import Config
from engine.interview.pool import SessionPool, despite_full, take_leases
from engine.runtime import Runtime
from engine.store.lease import SESSION, LeaseHeldError, Leases

log = logging.getLogger("viva.workers")

EXIT_GRACE = 30.0
"""Seconds a worker gets to mark its sessions interrupted and exit before it is killed."""

FOLLOW_INTERVAL = 0.1
"""Seconds between the parent's reads of the event log while workers run."""

last_workers: list[dict[str, Any]] = []
"""What the workers of this process's last :func:`execute_on_workers` reported: per worker its ``pid``,
``sessions`` run, ``startup_cpu_s`` (CPU seconds until it was ready: interpreter, imports, models) and
``cpu_s`` (CPU seconds in all, when it exited normally). ``bench/engine.py`` reads it."""


def worker_config(config: Config, workers: int) -> dict[str, Any]:
    """The configuration a worker runs with, as JSON data: the parent's, with each configured
    endpoint's ``max_concurrency`` divided among ``workers`` (rounded up)."""
    data = config.model_dump(mode="json")
    for role in ("kernel", "judge"):
        if data.get(role):
            data[role]["max_concurrency"] = math.ceil(data[role]["max_concurrency"] / workers)
    for endpoint in (data.get("targets") or {}).values():
        endpoint["max_concurrency"] = math.ceil(endpoint["max_concurrency"] / workers)
    return data


def worker_env() -> dict[str, str]:
    """The environment of a worker: the parent's (API keys included: they never travel otherwise),
    with this engine's source tree first on ``PYTHONPATH`` so the worker runs the same code."""
    root = str(Path(__file__).resolve().parents[2])
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([root, *[p for p in env.get("PYTHONPATH", "").split(os.pathsep) if p]])
    return env


@dataclass
class _Worker:
    """The parent's handle on one worker process."""

    index: int
    proc: asyncio.subprocess.Process
    slots: int
    ready: bool = False
    stopping: bool = False
    inflight: set[int] = field(default_factory=set)
    stderr: collections.deque[str] = field(default_factory=lambda: collections.deque(maxlen=20))
    stats: dict[str, Any] = field(default_factory=dict)

    @property
    def alive(self) -> bool:
        return self.proc.returncode is None

    def send(self, message: dict[str, Any]) -> None:
        stdin = self.proc.stdin
        if stdin is None or stdin.is_closing():
            return
        stdin.write((json.dumps(message) + "\n").encode())

    def close_stdin(self) -> None:
        stdin = self.proc.stdin
        if stdin is not None and not stdin.is_closing():
            stdin.close()

    def describe_exit(self) -> str:
        last = next((line for line in reversed(self.stderr) if line.strip()), "")
        tail = f": {last.strip()[:300]}" if last else ""
        return f"worker process {self.proc.pid} exited with code {self.proc.returncode}{tail}"


async def execute_on_workers(runtime: Runtime, session_ids: list[int], concurrency: int, workers: int,
                             on_event: Any = None, leases: Leases | None = None,
                             run_id: int | None = None) -> dict[int, str | None]:
    """Run sessions over ``workers`` processes sharing the store; session id -> error or None.

    Args:
        runtime: the parent's home, configuration and store (the workers open their own).
        session_ids: the sessions to run or resume.
        concurrency: sessions at once over all workers (shared among them as evenly as it divides).
        workers: processes to start (never more than there are sessions, nor than ``concurrency``).
        on_event: called with ``(session id, kind, payload)`` for each event the workers write.
        leases: the caller's, holding the sessions' leases (``execute_run``); by default this call
            takes them (a :class:`~engine.interview.pool.RunError` naming another live owner).
        run_id: the run, for the messages that say how to resume.

    Raises:
        asyncio.CancelledError: interrupted; the workers have marked their sessions interrupted.
        engine.store.faults.HomeFaultError: a worker met a full or read-only home; the sessions in
            flight were interrupted, the others not started (``viva resume run:N`` continues them).
    """
    ids = list(dict.fromkeys(int(s) for s in session_ids))
    if not ids:
        return {}
    return await WorkerRun(runtime, ids, concurrency, workers, on_event, leases, run_id).run()


class WorkerRun:
    """The parent's side of one :func:`execute_on_workers` call: the workers, the sessions not yet
    handed out, the errors reported so far and the first full home a worker met.

    Each worker has a reader of its stdout (:meth:`_read_stdout`: ready, done, bye) and of its stderr;
    each message hands out more sessions (:meth:`_dispatch`) and checks whether every session is
    accounted for (:meth:`_settle`); a worker that ends gives its sessions to the others
    (:meth:`_lost`); with ``on_event`` the event log is followed (:meth:`_follow`).
    """

    def __init__(self, runtime: Runtime, ids: list[int], concurrency: int, workers: int, on_event: Any,
                 leases: Leases | None, run_id: int | None):
        self.runtime = runtime
        self.store = runtime.store
        self.ids = ids
        self.on_event = on_event
        self.own = leases is None
        """Whether this call took the sessions' leases itself (and keeps them alive)."""
        self.leases = leases if leases is not None else Leases(self.store)
        self.concurrency = max(1, concurrency)
        self.count = max(1, min(workers, len(ids), self.concurrency))
        self.shares = [self.concurrency // self.count + (1 if i < self.concurrency % self.count else 0)
                       for i in range(self.count)]
        self.run_id = run_id
        self.resume = f"`viva resume run:{run_id}`" if run_id is not None else "`viva resume`"
        self.errors: dict[int, str | None] = {}
        self.pending: collections.deque[int] = collections.deque(ids)
        self.deaths: collections.Counter[int] = collections.Counter()
        self.done = asyncio.Event()
        self.wanted = set(ids)
        self.after = 0
        """The last event-log seq read (set when the run starts)."""
        self.pool: list[_Worker] = []
        self.readers: list[asyncio.Task[Any]] = []
        self.spawned = False
        self.closing = False
        self.fault: dict[str, str] = {}
        """The first full or read-only home a worker reported: its ``kind`` and one ``line``."""

    async def run(self) -> dict[int, str | None]:
        """Start the workers, hand the sessions out, wait for every one to be reported, wind down."""
        from engine.store.faults import HomeFaultError

        store, ids, leases = self.store, self.ids, self.leases
        take_leases(leases, SESSION, ids)
        keeper = asyncio.get_running_loop().create_task(leases.keep_alive()) if self.own else None
        self.after = store.last_seq()
        run_id = self.run_id
        hello = {"home": str(self.runtime.home), "config": worker_config(self.runtime.config, self.count),
                 "use_cache": self.runtime.use_cache, "cache_dir": _cache_dir(),
                 "api_key_envs": _api_key_envs(store, ids),
                 "resume": f"run:{run_id}" if run_id is not None else None}
        follower = asyncio.get_running_loop().create_task(self._follow()) if self.on_event is not None else None
        try:
            env = worker_env()
            for index in range(self.count):
                proc = await asyncio.create_subprocess_exec(
                    sys.executable, "-m", "engine.interview.workers", stdin=asyncio.subprocess.PIPE,
                    stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE, env=env)
                w = _Worker(index, proc, self.shares[index])
                self.pool.append(w)
                w.send({**hello, "slots": self.shares[index]})
                self.readers += [asyncio.create_task(self._read_stdout(w)), asyncio.create_task(self._read_stderr(w))]
            self.spawned = True
            self._settle()
            await self.done.wait()
            if not self.fault:  # else the workers' stdin is closed below: each interrupts what it still runs
                for w in self.pool:
                    if not w.stopping:
                        w.stopping = True
                        w.send({"stop": True})
                await asyncio.gather(*self.readers)
        finally:
            self.closing = True
            await asyncio.shield(_wind_down(self.pool, self.readers))
            if follower is not None:
                follower.cancel()
                self.after = _feed(store, self.after, self.wanted, self.on_event)  # what the workers wrote last
            if keeper is not None:
                keeper.cancel()
            home = self.runtime.home
            despite_full(home, lambda: leases.release(SESSION, [sid for sid in ids if leases.holds(SESSION, sid)]))
            if self.own:
                despite_full(home, leases.release)
            last_workers[:] = [w.stats for w in self.pool]
        if self.fault:
            raise HomeFaultError(self.fault["kind"], self.fault["line"])
        errors = self.errors
        missing = [sid for sid in ids if sid not in errors]
        for sid in missing:  # cannot happen unless a worker broke the protocol
            errors[sid] = f"RunError: no worker reported session {sid}; {self.resume} continues it"
        return {sid: errors[sid] for sid in ids}

    def _settle(self) -> None:
        """Done when every session is reported, or every worker started has ended."""
        if len(self.errors) == len(self.ids) or (self.spawned and not any(w.alive for w in self.pool)):
            self.done.set()

    def _dispatch(self) -> None:
        """Hand pending sessions to the ready workers with free slots, least busy first."""
        if self.fault:
            return
        for w in sorted((w for w in self.pool if w.ready and w.alive and not w.stopping),
                        key=lambda w: len(w.inflight)):
            while self.pending and len(w.inflight) < w.slots:
                sid = self.pending.popleft()
                self.leases.release(SESSION, [sid])  # the worker's runner takes it now
                w.inflight.add(sid)
                w.send({"session": sid})

    def _lost(self, w: _Worker) -> None:
        """A worker ended: hand its unfinished sessions to the others (once), or report them."""
        if self.closing:  # interrupted: the worker marked its sessions interrupted itself
            w.inflight.clear()
            return
        reason = w.describe_exit()
        if w.inflight or not w.stopping:
            log.warning("%s with sessions %s in flight", reason, sorted(w.inflight))
        alive = [x for x in self.pool if x.alive and not x.stopping]
        for sid in sorted(w.inflight):
            self.deaths[sid] += 1
            if self.deaths[sid] >= 2 or not alive:
                self.errors[sid] = f"RunError: {reason}; {self.resume} continues the session"
                continue
            try:
                self.leases.acquire(SESSION, [sid])  # its owner is gone: taken over at once
            except LeaseHeldError as exc:
                self.errors[sid] = f"RunError: {exc}"
                continue
            self.pending.appendleft(sid)
        w.inflight.clear()
        if not alive:
            while self.pending:
                self.errors[self.pending.popleft()] = (f"RunError: no worker process left ({reason}); "
                                                       f"{self.resume} continues it")
        self._dispatch()
        self._settle()

    async def _read_stdout(self, w: _Worker) -> None:
        """A worker's reports (ready, done, bye), until it ends; then :meth:`_lost`."""
        assert w.proc.stdout is not None
        while True:
            line = await w.proc.stdout.readline()
            if not line:
                break
            try:
                msg = json.loads(line)
            except ValueError:
                log.warning("worker %s wrote %r", w.proc.pid, line[:200])
                continue
            if "ready" in msg:
                w.ready = True
                w.stats.update(pid=w.proc.pid, sessions=0, startup_cpu_s=msg.get("cpu"))
            elif "bye" in msg:
                w.stats["cpu_s"] = msg.get("cpu")
            elif "done" in msg:
                sid = int(msg["done"])
                w.inflight.discard(sid)
                w.stats["sessions"] = w.stats.get("sessions", 0) + 1
                if sid in self.wanted:
                    self.errors[sid] = msg.get("error")
                if msg.get("fault") and not self.fault:  # the home is full: nothing more is handed out
                    self.fault.update(kind=str(msg["fault"]), line=str(msg.get("line") or msg.get("error")))
                    while self.pending:
                        self.errors[self.pending.popleft()] = "not started: the data home is full or read-only"
                    self.done.set()
            self._dispatch()
            self._settle()
        await w.proc.wait()
        self._lost(w)

    async def _read_stderr(self, w: _Worker) -> None:
        """Keep a worker's last stderr lines (the reason shown when it dies)."""
        assert w.proc.stderr is not None
        while True:
            line = await w.proc.stderr.readline()
            if not line:
                return
            w.stderr.append(line.decode(errors="replace"))

    async def _follow(self) -> None:
        """Feed ``on_event`` from the event log every :data:`FOLLOW_INTERVAL` seconds."""
        while True:
            self.after = _feed(self.store, self.after, self.wanted, self.on_event)
            await asyncio.sleep(FOLLOW_INTERVAL)


async def _wind_down(pool: list[_Worker], readers: list[asyncio.Task[Any]]) -> None:
    """Close every worker's stdin (a worker told ``stop`` exits; one that was not interrupts its
    sessions and exits); kill any still running after :data:`EXIT_GRACE` seconds."""
    for w in pool:
        w.close_stdin()

    async def settle(w: _Worker) -> None:
        if not w.alive:
            return
        try:
            await asyncio.wait_for(w.proc.wait(), EXIT_GRACE)
        except TimeoutError:
            log.warning("worker %s did not exit in %.0f s; killed", w.proc.pid, EXIT_GRACE)
            w.proc.kill()
            await w.proc.wait()

    await asyncio.gather(*(settle(w) for w in pool))  # one grace period for all, not one each
    await asyncio.gather(*readers, return_exceptions=True)


def _feed(store: Any, after: int, wanted: set[int], on_event: Any) -> int:
    """Call ``on_event`` with every event of ``wanted`` sessions after ``after``; the last seq read."""
    if on_event is None:
        return after
    while True:
        batch = store.events(after, None)
        for event in batch:
            after = event.seq
            if event.session_id in wanted:
                on_event(event.session_id, event.kind, event.payload)
        if len(batch) < 10_000:
            return after


def _cache_dir() -> str | None:
    """The embedder's graph cache of this process (``set_cache_dir``), for the workers to share."""
    from engine.knowledge import embed

    cache = getattr(embed, "_CACHE_DIR", None)
    return None if cache is None else str(cache)


def _api_key_envs(store: Any, ids: list[int]) -> list[str]:
    """The ``--api-key-env`` names the sessions were planned with (names only, never values)."""
    from engine.store import loads

    names: set[str] = set()
    for row in store.query(f"SELECT config FROM sessions WHERE id IN ({','.join('?' * len(ids))})", tuple(ids)):
        name = loads(row["config"], {}).get("api_key_env")
        if name:
            names.add(name)
    return sorted(names)


# -- the worker process -----------------------------------------------------------------------------

async def _serve(reader: asyncio.StreamReader, out: Any) -> int:
    """A worker's life: read the parent's hello, run each session it is handed, report each end."""
    from engine.knowledge.embed import get_embedding_service, set_cache_dir
    from engine.redact import register_config
    from engine.runtime import setup_logging
    from engine.store.faults import classify, describe

    def send(message: dict[str, Any]) -> None:
        out.write(json.dumps(message) + "\n")
        out.flush()

    line = await reader.readline()
    if not line:
        return 0
    hello = json.loads(line)
    home = Path(hello["home"])
    runtime = Runtime(home, Config.model_validate(hello["config"]), bool(hello["use_cache"]))
    register_config(runtime.config, hello.get("api_key_envs") or [])
    setup_logging(home)
    set_cache_dir(hello.get("cache_dir"))
    leases = Leases(runtime.store)
    loop = asyncio.get_running_loop()
    keeper = loop.create_task(leases.keep_alive())
    pool = SessionPool(runtime, int(hello["slots"]), None, leases)  # loads what sessions import (pool.prepare)
    await loop.run_in_executor(None, get_embedding_service(runtime.config.retrieval.embedder).embed, ["warm up"])

    send({"ready": os.getpid(), "cpu": time.process_time()})
    tasks: set[asyncio.Task[Any]] = set()
    interrupted = asyncio.Event()
    loop.add_signal_handler(signal.SIGTERM, interrupted.set)

    async def one(sid: int) -> None:
        try:
            error = await pool.run_one(sid)
        except Exception as exc:  # e.g. the session's target cannot be made: reported, the others go on
            error = f"{type(exc).__name__}: {exc}"
            log.warning("session %s failed: %s", sid, error)
        message: dict[str, Any] = {"done": sid, "error": error}
        if pool.home_fault is not None:  # the home is full: this worker's other sessions stop now, interrupted
            exc = pool.home_fault
            message.update(fault=classify(exc) or "full", line=describe(
                exc, home, getattr(runtime.store, "path", None), hello.get("resume")) or error)
            for task in list(tasks):
                if task is not asyncio.current_task():
                    task.cancel()
        send(message)

    stopped = False
    waiter = loop.create_task(interrupted.wait())
    try:
        while True:
            getter = loop.create_task(reader.readline())
            finished, _ = await asyncio.wait({getter, waiter}, return_when=asyncio.FIRST_COMPLETED)
            if waiter in finished:
                getter.cancel()
                break
            line = getter.result()
            if not line:
                break  # the parent is gone or interrupted: interrupt what runs
            msg = json.loads(line)
            if msg.get("stop"):
                stopped = True
                break
            task = loop.create_task(one(int(msg["session"])))
            tasks.add(task)
            task.add_done_callback(tasks.discard)
        if stopped:
            await asyncio.gather(*tasks, return_exceptions=True)
        else:
            for task in list(tasks):
                task.cancel()
            await asyncio.gather(*tasks, return_exceptions=True)
    finally:
        waiter.cancel()
        pool.close()
        keeper.cancel()
        despite_full(home, leases.release)  # on a full disk: skipped, the lease of a gone process is free
        runtime.close()
    if stopped:
        send({"bye": os.getpid(), "cpu": time.process_time()})
    return 0 if stopped else 3


async def _main_async() -> int:
    loop = asyncio.get_running_loop()
    reader = asyncio.StreamReader(limit=1 << 20)
    await loop.connect_read_pipe(lambda: asyncio.StreamReaderProtocol(reader), sys.stdin)
    out = os.fdopen(os.dup(1), "w", buffering=1, encoding="utf-8")
    os.dup2(2, 1)  # anything a library prints goes to stderr, never into the protocol
    sys.stdout = sys.stderr
    return await _serve(reader, out)


def main() -> int:
    """Entry point of ``python -m engine.interview.workers`` (started by :func:`execute_on_workers`)."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C goes to the parent, which tells the workers
    from engine.security import make_non_dumpable

    make_non_dumpable()
    return asyncio.run(_main_async())


if __name__ == "__main__":
    sys.exit(main())
