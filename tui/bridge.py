"""Workers that connect the app to the engine: store reads and writes, engine coroutines, followers.

Every piece of engine work runs off the UI thread (Textual guide, "Workers"):

- :func:`db_work`: one call ``fn(store, ...)`` in a thread with its own store connection;
- :func:`engine_work`: an engine coroutine (network I/O async; the ONNX embedder and SQLite it
  uses stay off the UI thread) on its own event loop in a thread; cancelling the worker cancels
  the coroutine, so the runner records the session as interrupted;
- :func:`follow_session`: follows one session's events in the store (written by this app's runner
  or by ``viva run`` in another process) and posts them as messages;
- :func:`follow_sessions`: refreshes the session list when anything is written.

Results come back with ``app.call_from_thread``; errors surface as worker errors, which the app
turns into one notification naming the worker.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Iterator
from contextlib import contextmanager
from typing import Any

from textual.dom import DOMNode
from textual.worker import Worker, get_current_worker

from engine.runtime import Runtime
from engine.store import Store, open_store
from engine.store.db import Event
from tui.messages import AnswerStreamed, MetricsUpdated, SessionEvents, SessionOpened, SessionsChanged

FOLLOW_INTERVAL = 0.05
LIST_INTERVAL = 0.5
LIST_FULL_REFRESH = 5.0
CRITERION_FIELDS = ("cid", "text", "kind", "weight", "source_chunk_ids")


@contextmanager
def thread_store(runtime: Runtime) -> Iterator[Store]:
    """A store connection for the calling thread, closed afterwards."""
    store = open_store(runtime.home)
    try:
        yield store
    finally:
        store.close()


def _deliver(node: DOMNode, then: Callable[[Any], Any] | None, result: Any) -> None:
    if then is None or get_current_worker().is_cancelled:
        return
    try:
        node.app.call_from_thread(then, result)
    except RuntimeError:  # the app is shutting down; nobody is waiting for the result
        pass


def db_work(node: DOMNode, runtime: Runtime, fn: Callable[..., Any], *args: Any,
            then: Callable[[Any], Any] | None = None, name: str = "store", **kwargs: Any) -> Worker:
    """Run ``fn(store, *args, **kwargs)`` in a thread; ``then(result)`` on the UI thread."""

    def work() -> Any:
        with thread_store(runtime) as store:
            result = fn(store, *args, **kwargs)
        _deliver(node, then, result)
        return result

    return node.run_worker(work, thread=True, name=name, group="store", exit_on_error=False)


def engine_work(node: DOMNode, runtime: Runtime, make: Callable[[Runtime], Awaitable[Any]], name: str,
                then: Callable[[Any], Any] | None = None, group: str = "engine") -> Worker:
    """Run the coroutine ``make(runtime)`` on its own event loop in a thread.

    The coroutine gets a runtime whose store belongs to that thread. Cancelling the worker
    cancels the coroutine within 0.1 s (the runner then marks its session interrupted).
    """

    def work() -> Any:
        worker = get_current_worker()
        with thread_store(runtime) as store:
            rt = Runtime(runtime.home, runtime.config, runtime.use_cache, store)

            async def main() -> Any:
                task = asyncio.ensure_future(make(rt))
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


def all_events(store: Store, session_id: int, after: int = 0) -> list[Event]:
    """Every event of a session after ``after`` (the store hands them out in pages)."""
    out: list[Event] = []
    while True:
        page = store.events(after, session_id)
        out.extend(page)
        if len(page) < 10_000:
            return out
        after = page[-1].seq


def version_labels(store: Store, item_id: int | None) -> dict[int, int]:
    """Rubric version id -> version number for an item's rubric."""
    from engine.bench.rubric import has_rubric, list_versions

    if item_id is None or not has_rubric(store, item_id):
        return {}
    return {v.id: v.version for v in list_versions(store, item_id)}


def load_session(store: Store, session_id: int) -> tuple[dict[str, Any], list[dict[str, Any]], dict[int, int]]:
    """A session's row (with its effective status), its starting criteria and its version labels."""
    from engine.bench.rubric import get_version
    from engine.interview.queries import effective_status

    row = store.one("SELECT * FROM sessions WHERE id = ?", (session_id,))
    if row is None:
        raise KeyError(f"session {session_id} does not exist; see `viva sessions`")
    row["status"] = effective_status(row)
    criteria = []
    if row.get("rubric_version_id") is not None:
        # The same fields as the criteria in ``session.started`` (docs/events.md).
        criteria = [{k: v for k, v in c.to_dict().items() if k in CRITERION_FIELDS}
                    for c in get_version(store, row["rubric_version_id"]).criteria]
    return row, criteria, version_labels(store, row.get("item_id"))


class _Splitter:
    """Turns a batch of events into messages: streamed pieces become the whole answer so far,
    metrics become a snapshot, everything else goes through in order."""

    def __init__(self, node: DOMNode, session_id: int, labels: dict[int, int], store: Store, item_id: int | None):
        self.node = node
        self.sid = session_id
        self.labels = labels
        self.store = store
        self.item_id = item_id
        self.answers: dict[int, str] = {}

    def seed(self, events: list[Event]) -> None:
        for e in events:
            self._track(e)

    def _track(self, e: Event) -> None:
        if e.kind == "turn.started" or e.kind == "answer.reset":
            self.answers[int(e.payload["turn"])] = ""
        elif e.kind == "answer.delta":
            turn = int(e.payload["turn"])
            self.answers[turn] = self.answers.get(turn, "") + e.payload.get("text", "")

    def _new_labels(self, events: list[Event]) -> dict[int, int]:
        ids = {e.payload.get("rubric_version_id") for e in events} - {None}
        if ids - set(self.labels):
            self.labels = version_labels(self.store, self.item_id)
            return dict(self.labels)
        return {}

    def post(self, batch: list[Event]) -> None:
        plain: list[Event] = []

        def flush() -> None:
            if plain:
                self.node.post_message(SessionEvents(self.sid, list(plain), self._new_labels(plain)))
                plain.clear()

        for e in batch:
            self._track(e)
            if e.kind == "answer.delta":
                flush()
                turn = int(e.payload["turn"])
                self.node.post_message(AnswerStreamed(self.sid, e.seq, turn, self.answers.get(turn, "")))
            elif e.kind == "metrics":
                flush()
                self.node.post_message(MetricsUpdated(self.sid, e.seq, e.payload))
            else:
                plain.append(e)
        flush()


def follow_session(node: DOMNode, runtime: Runtime, session_id: int, interval: float = FOLLOW_INTERVAL) -> Worker:
    """Load a session and keep posting its new events to ``node`` until the worker is cancelled."""

    def work() -> None:
        worker = get_current_worker()
        with thread_store(runtime) as store:
            row, criteria, labels = load_session(store, session_id)
            backlog = all_events(store, session_id)
            node.post_message(SessionOpened(session_id, row, criteria, labels, backlog))
            splitter = _Splitter(node, session_id, labels, store, row.get("item_id"))
            splitter.seed(backlog)
            last = backlog[-1].seq if backlog else 0
            while not worker.is_cancelled:
                batch = store.events(last, session_id)
                if not batch:
                    worker.cancelled_event.wait(interval)
                    continue
                last = batch[-1].seq
                splitter.post(batch)

    return node.run_worker(work, thread=True, name=f"follow session {session_id}", group="follow",
                           exit_on_error=False, exclusive=True)


def list_everything(store: Store) -> tuple[list[dict[str, Any]], list[Any]]:
    """The session list and the benchmarks, as Home shows them."""
    from engine.bench.items import list_benchmarks
    from engine.interview.queries import list_sessions

    return list_sessions(store), list_benchmarks(store)


def follow_sessions(node: DOMNode, runtime: Runtime, interval: float = LIST_INTERVAL) -> Worker:
    """Post the session list now and again whenever the store changes (and every few seconds, so
    a session whose process died shows as interrupted)."""

    def work() -> None:
        import time

        worker = get_current_worker()
        with thread_store(runtime) as store:
            signature: tuple[Any, ...] | None = None
            last_full = 0.0
            while not worker.is_cancelled:
                row = store.one("SELECT (SELECT COALESCE(MAX(seq), 0) FROM events) AS seq, "
                                "(SELECT COUNT(*) FROM sessions) AS sessions, "
                                "(SELECT COALESCE(MAX(id), 0) FROM benchmarks) AS bench, "
                                "(SELECT COUNT(*) FROM benchmarks) AS benches, "
                                "(SELECT COUNT(*) FROM items) AS items")
                current = tuple(row.values()) if row else None
                now = time.monotonic()
                if current != signature or now - last_full > LIST_FULL_REFRESH:
                    signature, last_full = current, now
                    sessions, benchmarks = list_everything(store)
                    node.post_message(SessionsChanged(sessions, benchmarks))
                worker.cancelled_event.wait(interval)

    return node.run_worker(work, thread=True, name="session list", group="follow-list",
                           exit_on_error=False, exclusive=True)
