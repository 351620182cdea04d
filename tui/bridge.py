"""Workers that connect the app to the engine's facade (:class:`engine.api.Engine`).

Every piece of engine work runs off the UI thread (Textual guide, "Workers"):

- :func:`db_work`: one call ``fn(engine, ...)`` in a thread with its own engine connection;
- :func:`engine_work`: an engine coroutine (network I/O async; the ONNX embedder and SQLite it
  uses stay off the UI thread) on its own event loop in a thread; cancelling the worker cancels
  the coroutine, so the runner records the session as interrupted;
- :func:`follow_session`: follows one session's events (written by this app's runner or by
  ``viva run`` in another process) with the engine's follower and posts them as messages;
- :func:`follow_sessions`: posts the session list's changed rows when anything is written.

Results come back with ``app.call_from_thread``; errors surface as worker errors, which the app
turns into one notification naming the worker.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable, Iterator
from contextlib import contextmanager
from typing import Any

from textual.dom import DOMNode
from textual.worker import Worker, get_current_worker

from engine import events as ev
from engine.api import Engine
from engine.termsafe import termsafe_value
from tui.messages import (
    AnswerStreamed,
    BenchmarksChanged,
    MetricsUpdated,
    SessionEvents,
    SessionOpened,
    SessionRowsChanged,
)

FOLLOW_INTERVAL = 0.05
LIST_INTERVAL = 0.25
LIST_FULL_REFRESH = 5.0


@contextmanager
def thread_engine(engine: Engine) -> Iterator[Engine]:
    """The engine on a connection of the calling thread, closed afterwards."""
    local = engine.connect()
    try:
        yield local
    finally:
        local.close()


def _deliver(node: DOMNode, then: Callable[[Any], Any] | None, result: Any) -> None:
    if then is None or get_current_worker().is_cancelled:
        return
    result = termsafe_value(result)  # shown in the app: every foreign string with its controls visible
    try:
        node.app.call_from_thread(then, result)
    except RuntimeError:  # the app is shutting down; nobody is waiting for the result
        pass


def db_work(node: DOMNode, engine: Engine, fn: Callable[..., Any], *args: Any,
            then: Callable[[Any], Any] | None = None, name: str = "store", **kwargs: Any) -> Worker:
    """Run ``fn(engine, *args, **kwargs)`` in a thread; ``then(result)`` on the UI thread."""

    def work() -> Any:
        with thread_engine(engine) as local:
            result = fn(local, *args, **kwargs)
        _deliver(node, then, result)
        return result

    return node.run_worker(work, thread=True, name=name, group="store", exit_on_error=False)


def engine_work(node: DOMNode, engine: Engine, make: Callable[[Engine], Awaitable[Any]], name: str,
                then: Callable[[Any], Any] | None = None, group: str = "engine") -> Worker:
    """Run the coroutine ``make(engine)`` on its own event loop in a thread.

    The coroutine gets an engine whose connection belongs to that thread. Cancelling the worker
    cancels the coroutine within 0.1 s (the runner then marks its session interrupted).
    """

    def work() -> Any:
        worker = get_current_worker()
        with thread_engine(engine) as local:

            async def main() -> Any:
                task = asyncio.ensure_future(make(local))
                while True:
                    done, _ = await asyncio.wait({task}, timeout=0.1)
                    if done:
                        return task.result()
                    if worker.is_cancelled:
                        task.cancel()
                        await asyncio.wait({task})
                        return None

            result = asyncio.run(main())
        _deliver(node, then, result)
        return result

    return node.run_worker(work, thread=True, name=name, group=group, exit_on_error=False)


def load_session(engine: Engine, session_id: int) -> tuple[dict[str, Any], list[dict[str, Any]], dict[int, int]]:
    """A session's row (with its effective status), its starting criteria and its version labels."""
    return engine.session_view_inputs(session_id)


class _Splitter:
    """Turns a batch of events into messages: streamed pieces become the whole answer so far,
    metrics become a snapshot, everything else goes through in order."""

    def __init__(self, node: DOMNode, session_id: int, labels: dict[int, int], engine: Engine, item_id: int | None):
        self.node = node
        self.sid = session_id
        self.labels = labels
        self.engine = engine
        self.item_id = item_id
        self.answers: dict[int, str] = {}

    def seed(self, events: list[ev.Event]) -> None:
        for e in events:
            self._track(e)

    def _track(self, e: ev.Event) -> None:
        if e.kind in (ev.TURN_STARTED, ev.ANSWER_RESET):
            self.answers[int(e.payload["turn"])] = ""
        elif e.kind == ev.ANSWER_DELTA:
            turn = int(e.payload["turn"])
            self.answers[turn] = self.answers.get(turn, "") + e.payload.get("text", "")

    def _new_labels(self, events: list[ev.Event]) -> dict[int, int]:
        ids = {e.payload.get("rubric_version_id") for e in events} - {None}
        if ids - set(self.labels):
            self.labels = self.engine.version_labels(self.item_id)
            return dict(self.labels)
        return {}

    def post(self, batch: list[ev.Event]) -> None:
        plain: list[ev.Event] = []

        def flush() -> None:
            if plain:
                self.node.post_message(SessionEvents(self.sid, list(plain), self._new_labels(plain)))
                plain.clear()

        for e in batch:
            self._track(e)
            if e.kind == ev.ANSWER_DELTA:
                flush()
                turn = int(e.payload["turn"])
                self.node.post_message(AnswerStreamed(self.sid, e.seq, turn, self.answers.get(turn, "")))
            elif e.kind == ev.METRICS:
                flush()
                self.node.post_message(MetricsUpdated(self.sid, e.seq, e.payload))
            else:
                plain.append(e)
        flush()


def follow_session(node: DOMNode, engine: Engine, session_id: int, interval: float = FOLLOW_INTERVAL) -> Worker:
    """Load a session and keep posting its new events to ``node`` until the worker is cancelled."""

    def work() -> None:
        worker = get_current_worker()
        with thread_engine(engine) as local:
            row, criteria, labels = load_session(local, session_id)
            backlog = local.events(session_id)
            node.post_message(SessionOpened(session_id, row, criteria, labels, backlog))
            splitter = _Splitter(node, session_id, labels, local, row.get("item_id"))
            splitter.seed(backlog)
            last = backlog[-1].seq if backlog else 0
            for batch in local.follow_batches(session_id, last, interval, worker.cancelled_event):
                splitter.post(batch)

    return node.run_worker(work, thread=True, name=f"follow session {session_id}", group="follow",
                           exit_on_error=False, exclusive=True)


NEW_ROWS_AT_ONCE = 200
"""More new sessions than this at once (a large run planned): the list reloads its first page."""


def follow_sessions(node: DOMNode, engine: Engine, query_of: Callable[[], str],
                    loaded_of: Callable[[], list[int]] | None = None, interval: float = LIST_INTERVAL) -> Worker:
    """Post what changed in the session list whenever the store changes, never the whole list.

    Every ``interval`` seconds: the event log after the last seen sequence number names the sessions
    that changed (streamed answer pieces excluded); new sessions are the ids past the last seen one;
    every few seconds, sessions whose process died (now listed as interrupted) and the rows on show
    (``loaded_of()``; a writer may change a row without an event). Only those rows are
    read, with the current filter (``query_of()``), and posted as :class:`SessionRowsChanged`; the
    benchmarks as :class:`BenchmarksChanged` when they change.
    """

    def work() -> None:
        worker = get_current_worker()
        with thread_engine(engine) as local:
            seq, _ = local.session_changes(1 << 62)  # the current end of the log
            catalogue: tuple[Any, ...] | None = None
            orphans = set(local.orphaned_sessions())
            last_orphans = time.monotonic()
            while not worker.is_cancelled:
                token = local.catalogue_token()  # (last session id, sessions, benchmarks..., items)
                changed: set[int] = set()
                recount = reset = False
                if token != catalogue:
                    if catalogue is None or token[2:] != catalogue[2:]:
                        node.post_message(BenchmarksChanged(local.list_benchmarks()))
                    if catalogue is not None and token[:2] != catalogue[:2]:
                        grown = token[0] - catalogue[0]
                        recount = True
                        if grown != token[1] - catalogue[1] or grown > NEW_ROWS_AT_ONCE:
                            reset = True  # sessions were deleted, or a large run was planned
                        else:
                            changed.update(range(catalogue[0] + 1, token[0] + 1))
                    catalogue = token
                seq, ids = local.session_changes(seq)
                changed.update(ids)
                now = time.monotonic()
                if now - last_orphans > LIST_FULL_REFRESH:
                    current = set(local.orphaned_sessions())
                    changed.update(current ^ orphans)
                    if loaded_of is not None:
                        changed.update(loaded_of())
                    orphans, last_orphans = current, now
                query = query_of()
                if reset:
                    node.post_message(SessionRowsChanged(query, [], [], None, reset=True))
                elif changed:
                    rows = local.list_sessions(query=query, ids=sorted(changed))
                    gone = sorted(changed - {r["id"] for r in rows})
                    total = local.count_sessions(query) if recount or (query and (rows or gone)) else None
                    node.post_message(SessionRowsChanged(query, rows, gone, total))
                worker.cancelled_event.wait(interval)

    return node.run_worker(work, thread=True, name="session list", group="follow-list",
                           exit_on_error=False, exclusive=True)
