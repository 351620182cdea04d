"""What a process running sessions shares, and how a run holds its sessions.

:class:`SessionPool` runs sessions one :meth:`~SessionPool.run_one` call each, sharing the embedding
service, the target factory and the loaded policies: ``engine.interview.run`` runs a run's sessions
through one in this process, and each worker process of :mod:`engine.interview.workers` through its
own. :func:`take_leases` takes a run's or its sessions' leases (another live owner is a
:class:`RunError`); :func:`despite_full` makes the bookkeeping writes at the end of a run on a full
disk. Both the in-process path and the workers' parent use them, so neither imports the other.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable
from typing import Any

from engine.interview.kernels import make_kernel
from engine.interview.runner import SessionRunner
from engine.interview.targets import TargetFactory
from engine.runtime import Runtime
from engine.store import loads
from engine.store.lease import LeaseHeldError, Leases

log = logging.getLogger("viva.run")  # the run's log lines, as they were written before the move

EventCallback = Callable[[int, str, dict[str, Any]], None]


class RunError(Exception):
    """A run that cannot start or resume; the message says what to change."""


def take_leases(leases: Leases, scope: str, ids: list[int]) -> None:
    """Take leases for a run or its sessions; another live owner is a :class:`RunError` naming it."""
    try:
        leases.acquire(scope, ids)
    except LeaseHeldError as exc:
        leases.release()
        raise RunError(str(exc)) from None
    for owner in leases.taken_over:
        log.info("took over the stale lease of %s %s from %s", owner.scope, owner.ident, owner.describe())
    leases.taken_over.clear()


def despite_full(home: Any, write: Callable[[], Any]) -> None:
    """A bookkeeping write at the end of a run (leases, the run's status): on a full disk made with
    the reserve's space (:func:`engine.store.faults.despite_full`); if it still cannot be made it is
    skipped (a lease of a dead process is taken over; the run's status is derived from its sessions)."""
    from engine.store import faults

    try:
        faults.despite_full(home, write)
    except Exception as exc:
        if faults.classify(exc) is None:
            raise


SESSION_PACKAGES = ("engine.interview", "engine.judge", "engine.metrics", "engine.llm", "engine.events", "engine.store",
                    "engine.text", "engine.policy", "engine.knowledge")
"""The packages whose modules a session may import on its way (many lazily, so that listing sessions or
printing ``--help`` stays quick): :func:`prepare` imports all of them."""

_prepared = False


def prepare() -> None:
    """Load, once a process, what a session would otherwise load in the middle of its first turns: every
    module of :data:`SESSION_PACKAGES`, the LLM client's HTTP stack and TLS context
    (:func:`engine.llm.transport.prepare`) and the judge's WordPiece tokenizer. A process that runs
    sessions calls it before it takes one (a worker before it says ready, ``execute_sessions`` before it
    starts any), so that the 64 sessions a run starts at once do not each wait for a second of imports in
    their first turn. Idempotent."""
    global _prepared
    if _prepared:
        return
    import importlib
    import pkgutil

    from engine.llm.transport import prepare as prepare_transport

    for name in SESSION_PACKAGES:
        package = importlib.import_module(name)
        for module in pkgutil.walk_packages(package.__path__, name + "."):
            importlib.import_module(module.name)
    prepare_transport()
    from engine.judge.fact_words import word_weight

    word_weight("warm")  # the judge's WordPiece tokenizer (20 ms to load), read at a session's first judged turn
    _prepared = True


class SessionPool:
    """What the sessions one process runs share: the embedding service (one cache, coalesced ONNX
    runs), the target factory, the loaded policies and a limit of ``concurrency`` sessions at once.

    ``execute_sessions`` runs a fixed list through one pool; a worker process
    (:mod:`engine.interview.workers`) runs the sessions its parent hands it, one :meth:`run_one` each.

    Args:
        runtime: this process's home, configuration and store.
        concurrency: sessions run at once through :meth:`run_one`.
        on_event: called in-process with ``(session id, kind, payload)`` for every event written.
        leases: the owner whose leases the sessions' runners take (or already hold).
    """

    def __init__(self, runtime: Runtime, concurrency: int, on_event: EventCallback | None = None,
                 leases: Leases | None = None):
        from engine.knowledge.embed import get_embedding_service

        prepare()
        self.runtime = runtime
        self.on_event = on_event
        self.leases = leases
        self.embedder = get_embedding_service(runtime.config.retrieval.embedder)
        self.factory = TargetFactory(runtime.store, runtime.config, runtime.home, runtime.use_cache)
        self.policies: dict[str, Any] = {}
        self.semaphore = asyncio.Semaphore(max(1, concurrency))
        self.home_fault: BaseException | None = None
        """The first error of a full or read-only data home (``engine.store.faults``): once there is
        one, no further session is started (they stay resumable) and the caller reports it."""

    async def run_one(self, sid: int) -> str | None:
        """Run (or resume) one session to its end; its error message, or None when it ended well.

        A failure is recorded on the session by its runner and returned here; cancelling the call
        interrupts the session (status ``interrupted``, resumable) and propagates.
        """
        from engine.policy.policies import load_policy
        from engine.store.faults import DAMAGED, classify

        runtime, store, on_event = self.runtime, self.runtime.store, self.on_event
        async with self.semaphore:
            if self.home_fault is not None:
                return "not started: the data home is full or read-only"
            row = store.one("SELECT * FROM sessions WHERE id = ?", (sid,))
            spec = loads(row["config"], {})
            self.factory.api_key_env = spec.get("api_key_env")
            target = self.factory.make(row["target"], sid, spec.get("system_prompt"),
                                       row["seed"] if spec.get("epoch") is not None else None)
            if row["protocol"] == "adaptive" and row["policy"] not in self.policies:
                self.policies[row["policy"]] = load_policy(row["policy"])
            kernel = make_kernel(row["kernel"], runtime.config, store, runtime.use_cache, sid,
                                 spec.get("api_key_env"))
            callback = (lambda kind, payload, _sid=sid: on_event(_sid, kind, payload)) if on_event else None
            runner = SessionRunner(store, sid, kernel, target, self.policies.get(row["policy"]), self.embedder,
                                   runtime.home, callback, self.leases)
            try:
                await runner.run()
                return None
            except Exception as exc:  # recorded on the session by the runner; the others go on
                error = f"{type(exc).__name__}: {exc}"
                if classify(exc) not in (None, DAMAGED):  # interrupted by its runner, not failed
                    self.home_fault = self.home_fault or exc
                    log.warning("session %s interrupted: %s", sid, error)
                    return error
                log.warning("session %s failed: %s", sid, error)
                return error
            finally:
                await target.aclose()

    def close(self) -> None:
        """Close what the target factory opened (e.g. the local model's server)."""
        self.factory.close()
