"""Runs: every item for every target, concurrently, resumable.

``plan_run`` writes the run and all its sessions (status ``created``) in one transaction;
``execute_run`` runs every session of the run that has not finished, at most ``concurrency`` at a
time (per-endpoint limits from the config apply on top). ``resume`` is ``execute_run`` again: finished
turns are not redone and cached calls are not re-sent.
"""

from __future__ import annotations

import asyncio
from dataclasses import asdict, dataclass, field, replace
from typing import Any, NoReturn

from engine import events as ev
from engine.bench.rubric import current_rubric
from engine.config import MAX_TURNS as _MAX_TURNS
from engine.config import ConfigError, check_interview_setting
from engine.interview.kernels import make_kernel
from engine.interview.pool import EventCallback, RunError, SessionPool, despite_full, take_leases
from engine.interview.protocols import protocol_class, protocol_for_item
from engine.interview.runner import SessionRunner, create_session
from engine.interview.session import SessionError, SessionSpec
from engine.interview.targets import TargetFactory
from engine.runtime import Runtime
from engine.store import dumps, loads, now_iso
from engine.store.lease import RUN, SESSION, Leases


@dataclass
class RunRequest:
    """What ``viva run`` asks for."""

    bench: str
    targets: list[str]
    items: list[int] | None = None
    kernel: str | None = None
    protocol: str | None = None
    turns: int | None = None
    policy: str | None = None
    concurrency: int | None = None
    workers: int | None = None
    seed: int | None = None
    api_key_env: str | None = None
    trust_eval_code: bool = False
    extra: dict[str, Any] = field(default_factory=dict)
    epochs: int | None = None
    """``--epochs``: each item is run this many times per target (default ``interview.epochs``)."""
    system_prompts: list[str] | None = None
    """``--target-system``: the texts of system prompts; each target that takes one is run under each
    (replacing the config's own), so one model under two prompts is two targets of the run."""


MAX_TURNS = _MAX_TURNS
"""The most turns a session may have (:data:`engine.config.MAX_TURNS`: ``--turns`` and ``interview.turns``)."""


def plan_run(runtime: Runtime, req: RunRequest) -> int:
    """Validate the request and create the run with one session per (item, target)."""
    from engine.bench.items import get_benchmark, list_items

    store = runtime.store
    cfg = runtime.config.interview
    get_benchmark(store, req.bench)
    items = list_items(store, req.bench)
    if req.items:
        wanted = set(req.items)
        unknown = sorted(wanted - {i.id for i in items})
        if unknown:
            raise RunError(f"items {unknown} are not in benchmark {req.bench!r}; see `viva bench show {req.bench}`")
        items = [i for i in items if i.id in wanted]
    if not items:
        raise RunError(f"benchmark {req.bench!r} has no items to run")
    if not req.targets:
        raise RunError("give at least one --target")
    for name in ("turns", "epochs", "concurrency", "workers", "seed"):  # the config's own rule and message
        if getattr(req, name) is not None:
            try:
                check_interview_setting(name, getattr(req, name))
            except ConfigError as exc:
                raise RunError(str(exc)) from None
    epochs = cfg.epochs if req.epochs is None else req.epochs
    factory = TargetFactory(store, runtime.config, runtime.home, runtime.use_cache, req.api_key_env)
    planned = planned_targets(runtime.config, req.targets, req.system_prompts)
    for spec, prompt in planned.values():
        factory.validate(spec, prompt)
    kernel = make_kernel(req.kernel, runtime.config, store, api_key_env=req.api_key_env)
    kernel_spec = req.kernel or ("config" if runtime.config.kernel is not None else "offline")
    policy = req.policy or cfg.policy
    try:
        protocols = {protocol_for_item(i.protocol, req.protocol) for i in items}
        for i in items:  # e.g. a task item the offline kernel cannot examine: refused before anything runs
            protocol_class(protocol_for_item(i.protocol, req.protocol)).check_item(i, kernel.offline)
    except SessionError as exc:
        raise RunError(f"benchmark {req.bench!r}: {exc}") from None
    if "task" in protocols and any(c.kind == "code" for i in items for c in current_rubric(store, i.id).criteria):
        from engine.judge.sandbox import SandboxUnavailableError, require_sandbox

        try:
            require_sandbox(req.trust_eval_code)
        except SandboxUnavailableError as exc:
            raise RunError(str(exc)) from None
    if "adaptive" in protocols:
        from engine.policy.policies import load_policy

        load_policy(policy)  # fail before creating anything
    seed = cfg.seed if req.seed is None else req.seed
    config = {"bench": req.bench, "targets": list(planned), "kernel": kernel_spec, "policy": policy,
              "turns": req.turns or cfg.turns, "seed": seed, "concurrency": req.concurrency or cfg.concurrency,
              "workers": req.workers or cfg.workers, "api_key_env": req.api_key_env, "protocol": req.protocol,
              "epochs": epochs}
    with store.transaction():
        run_id = store.insert("runs", {"created_at": now_iso(), "config": dumps(config), "status": "created"})
        units = session_units(items, req.protocol)
        for epoch in range(epochs):  # epoch by epoch: an interrupted run has whole epochs done first
            for (protocol, batch), (target, (_, prompt)) in ((u, t) for u in units for t in planned.items()):
                spec = SessionSpec(item_id=batch[0].id, target=target, kernel=kernel_spec, protocol=protocol,
                                   policy=policy, turns=req.turns or cfg.turns, seed=seed + epoch,
                                   epoch=epoch if epochs > 1 else None,
                                   threshold=cfg.offline_threshold, eval_code_timeout=cfg.eval_code_timeout,
                                   api_key_env=req.api_key_env, trust_eval_code=req.trust_eval_code,
                                   batch=[i.id for i in batch] if protocol == "graded" else None,
                                   system_prompt=prompt)
                create_session(store, spec, run_id)
    del kernel
    return run_id


def planned_targets(config: Any, specs: list[str], system_prompts: list[str] | None = None
                    ) -> dict[str, tuple[str, str | None]]:
    """The targets a run asks, by stored name (:func:`engine.interview.targets.target_label`) -> (spec,
    system prompt): each spec under each ``--target-system`` prompt when given (a ``python:`` or ``kb:``
    target, which takes none, once without), else under the config's own prompt for a named target.
    A name given twice is asked once.

    Raises:
        RunError: a ``--target-system`` prompt is empty.
    """
    from engine.interview.targets import configured_system_prompt, takes_system_prompt, target_label

    out: dict[str, tuple[str, str | None]] = {}
    for prompt in system_prompts or []:
        if not prompt.strip():
            raise RunError("--target-system: the file is empty; give a file with the system prompt's text")
    for spec in specs:
        if system_prompts and takes_system_prompt(spec):
            prompts: list[str | None] = list(dict.fromkeys(system_prompts))
        else:
            prompts = [configured_system_prompt(spec, config)]
        for prompt in prompts:
            out.setdefault(target_label(spec, prompt), (spec, prompt))
    return out


def session_units(items: list[Any], requested: str | None) -> list[tuple[str, list[Any]]]:
    """What each session covers, in benchmark order: one item, or for the graded protocol a batch of
    up to 3 consecutive graded items (JudgeAgent's batches)."""
    from engine.metrics.graded import batches

    units: list[tuple[str, list[Any]]] = []
    graded: list[Any] = []
    for item in items:
        protocol = protocol_for_item(item.protocol, requested)
        if protocol == "graded":
            graded.append(item)
        else:
            units.append((protocol, [item]))
    units += [("graded", b) for b in batches(graded)]
    return units


def run_sessions(runtime: Runtime, run_id: int) -> list[int]:
    """Ids of a run's sessions in order."""
    return [r["id"] for r in runtime.store.query("SELECT id FROM sessions WHERE run_id = ? ORDER BY id", (run_id,))]


async def execute_sessions(runtime: Runtime, session_ids: list[int], concurrency: int,
                           on_event: EventCallback | None = None, leases: Leases | None = None,
                           resume: str | None = None) -> dict[int, str | None]:
    """Run (or resume) sessions concurrently; returns session id -> error message or None.

    Every session is owned before any starts (``engine.store.lease``): while another live process
    drives one of them, nothing runs and a :class:`RunError` names that process. A session already in a
    final status (``finished``, ``not_examined``) is not run again. ``leases``: the
    caller's (``execute_run``), already holding the run's; by default this call takes its own.

    A full or read-only data home ends every session in flight ``interrupted`` (by its runner) and
    starts no other; then this raises :class:`engine.store.faults.HomeFaultError`, one line saying
    what to do and ``viva resume RESUME`` (``resume``: default the session's id when there is one).

    Raises:
        RunError: a session is driven by another live process, or its ``python:`` target's module
            no longer imports (:func:`check_python_targets`).
    """
    keeper = None
    own = leases is None
    if own:
        check_python_targets(runtime, session_ids)
    if leases is None:
        leases = Leases(runtime.store)
    take_leases(leases, SESSION, session_ids)
    if own:
        keeper = asyncio.get_running_loop().create_task(leases.keep_alive())
    pool = SessionPool(runtime, concurrency, on_event, leases)
    errors: dict[int, str | None] = {}

    tasks: dict[int, asyncio.Future[None]] = {}

    final = {r["id"] for r in runtime.store.query(
        f"SELECT id FROM sessions WHERE id IN ({','.join('?' * len(session_ids))}) "  # noqa: S608 - placeholders
        "AND status IN ('finished', 'not_examined')", tuple(session_ids))} if session_ids else set()

    async def one(sid: int) -> None:
        if sid in final:  # ended for good (finished, not examined): a resume has nothing to run
            errors[sid] = None
            return
        try:
            errors[sid] = await pool.run_one(sid)
        except asyncio.CancelledError:
            if pool.home_fault is None:
                raise
            errors[sid] = "interrupted: the data home is full or read-only"  # cancelled below
            return
        if pool.home_fault is not None:  # the home is full: the sessions in flight stop now, interrupted
            for other, task in tasks.items():
                if other != sid and not task.done():
                    task.cancel()

    try:
        tasks.update((sid, asyncio.ensure_future(one(sid))) for sid in session_ids)
        await asyncio.gather(*tasks.values())
    finally:
        pool.close()
        if keeper is not None:
            _stop_keeper(keeper)
        home = runtime.home
        despite_full(home, lambda: leases.release(SESSION, session_ids))
        if own:
            despite_full(home, leases.release)
    if pool.home_fault is not None:
        _raise_home_fault(runtime, pool.home_fault,
                          resume or (str(session_ids[0]) if len(session_ids) == 1 else None))
    return errors


def check_python_targets(runtime: Runtime, session_ids: list[int]) -> None:
    """Before sessions resume: each ``python:`` target among them still imports (its module, its
    class, an instance), else one :class:`RunError` naming the module and what to do; nothing is
    started or written. (Other targets fail, if they do, on their first call, as in a fresh run.)"""
    from engine.interview.targets import PythonTarget, TargetError

    if not session_ids:
        return
    marks = ",".join("?" * len(session_ids))
    specs = sorted({r["target"] for r in runtime.store.query(
        f"SELECT DISTINCT target FROM sessions WHERE id IN ({marks})", tuple(session_ids))})  # noqa: S608
    for spec in specs:
        if spec.startswith("python:"):
            try:
                PythonTarget(spec)
            except TargetError as exc:
                raise RunError(f"cannot resume: {exc}") from None


def _stop_keeper(keeper: asyncio.Task[Any]) -> None:
    """Cancel a lease keeper; an error it already ended with (e.g. a full disk at a heartbeat) is
    collected here, not printed at exit as "Task exception was never retrieved"."""
    keeper.cancel()
    if keeper.done() and not keeper.cancelled():
        keeper.exception()


def _raise_home_fault(runtime: Runtime, exc: BaseException, resume: str | None) -> NoReturn:
    """Raise the one-line :class:`~engine.store.faults.HomeFaultError` for a full or read-only home."""
    from engine.store.faults import HomeFaultError, classify, describe

    kind = classify(exc)
    db = getattr(runtime.store, "path", None)
    raise HomeFaultError(kind or "full", describe(exc, runtime.home, db, resume) or str(exc)) from None


def derive_run_status(statuses: list[str]) -> str:
    """A run's status from its sessions' effective statuses (one rule, whoever asks):

    ``created`` without sessions; ``running`` while any session is running or paused; when every
    session reached a final status (``finished`` or ``not_examined``, neither run again by a resume):
    ``not_examined`` when none of them examined anything, else ``finished`` (the not-examined ones are
    counted in the per-target table's "not examined" column, never in its Score); else ``failed`` when
    any failed; else ``interrupted`` (some were never started or were cut off, none failed:
    ``viva resume run:N`` continues them).
    """
    if not statuses:
        return "created"
    if any(s in ("running", "paused") for s in statuses):
        return "running"
    if all(s in ev.FINAL for s in statuses):
        return ev.NOT_EXAMINED if all(s == ev.NOT_EXAMINED for s in statuses) else "finished"
    if any(s == "failed" for s in statuses):
        return "failed"
    return "interrupted"


def run_status(runtime_or_store: Any, run_id: int) -> str:
    """The run's status derived now from its sessions (:func:`derive_run_status`)."""
    from engine.interview.queries import run_sessions as session_statuses

    store = getattr(runtime_or_store, "store", runtime_or_store)
    return derive_run_status([r["status"] for r in session_statuses(store, run_id)])


async def execute_run(runtime: Runtime, run_id: int, on_event: EventCallback | None = None,
                      workers: int | None = None) -> dict[int, str | None]:
    """Run every unfinished session of a run, as the run's only owner.

    The run and its pending sessions are leased first (``engine.store.lease``): while another live
    process drives the run, this refuses with a :class:`RunError` naming it, before anything is
    written; a stale lease (its process gone) is taken over. The run's stored status is derived
    from its sessions when this ends (:func:`derive_run_status`).

    ``workers``: processes to spread the sessions over (default: the run's ``workers``, planned from
    ``--workers`` or ``interview.workers``; 1 runs them in this process). With more than one, the
    sessions are handed out one at a time to worker processes sharing the store
    (:func:`engine.interview.workers.execute_on_workers`) and ``on_event`` is fed from the store's
    event log.
    """
    from engine.store.faults import HomeFaultError, classify, reserve_space

    store = runtime.store
    run = store.one("SELECT * FROM runs WHERE id = ?", (run_id,))
    if run is None:
        raise RunError(f"run {run_id} does not exist; see `viva sessions`")
    config = loads(run["config"], {})
    home = runtime.home
    try:
        leases = Leases(store)
        take_leases(leases, RUN, [run_id])
        try:
            pending = [r["id"] for r in store.query(
                "SELECT id FROM sessions WHERE run_id = ? AND status NOT IN ('finished', 'not_examined') ORDER BY id",
                (run_id,))]
            check_python_targets(runtime, pending)
            if not store.read_only:
                reserve_space(home)  # room to mark the sessions interrupted should the disk fill up
            take_leases(leases, SESSION, pending)
            keeper = asyncio.get_running_loop().create_task(leases.keep_alive())
            try:
                with store.transaction():
                    store.update("runs", run_id, {"status": "running"})
                concurrency = int(config.get("concurrency") or 8)
                count = max(1, int(workers or config.get("workers") or 1))
                if count > 1 and len(pending) > 1:
                    from engine.interview.workers import execute_on_workers

                    return await execute_on_workers(runtime, pending, concurrency, count, on_event, leases, run_id)
                return await execute_sessions(runtime, pending, concurrency, on_event, leases, f"run:{run_id}")
            finally:
                _stop_keeper(keeper)
                despite_full(home, lambda: leases.release(SESSION))

                def derive() -> None:
                    with store.transaction():
                        store.update("runs", run_id, {"status": run_status(store, run_id)})

                despite_full(home, derive)
        finally:
            despite_full(home, leases.release)
    except HomeFaultError:
        raise  # already the one line (execute_sessions names run:N; a read-only home needs none)
    except Exception as exc:
        if classify(exc) is None:
            raise
        _raise_home_fault(runtime, exc, f"run:{run_id}")


def resolve_resume(runtime: Runtime, what: str) -> tuple[str, int]:
    """``12`` (a session), ``run:3`` or ``r3`` (a run) -> (kind, id)."""
    text = what.strip().lower()
    for prefix in ("run:", "r"):
        if text.startswith(prefix) and text[len(prefix):].isdigit():
            return "run", int(text[len(prefix):])
    if text.isdigit():
        return "session", int(text)
    raise RunError(f"cannot resume {what!r}: give a session id (12) or a run (run:3)")


def spec_dict(spec: SessionSpec) -> dict[str, Any]:
    """A session spec as a plain dict."""
    return asdict(spec)


async def rescore_session(runtime: Runtime, session_id: int, version_id: int,
                          trust_eval_code: bool = False) -> dict[str, Any]:
    """Re-judge a session's stored answers under a rubric version without calling the target.

    For a session that is running in some process, use ``control.switch_rubric`` instead: its
    runner re-scores at the next step boundary.

    ``trust_eval_code``: run the rubric's eval_code unisolated where bubblewrap is unusable (as
    ``viva run --trust-eval-code``; also when the session was run with it, the choice is made anew).

    Raises:
        RunError: the session does not exist, or the rubric has eval_code that cannot be isolated here
            and ``trust_eval_code`` is False (the same one line as ``viva run``).
    """
    from engine.knowledge.embed import get_embedding_service
    from engine.metrics.sessions import session_metrics

    store = runtime.store
    row = store.one("SELECT * FROM sessions WHERE id = ?", (session_id,))
    if row is None:
        raise RunError(f"session {session_id} does not exist")
    spec = loads(row["config"], {})
    if row["protocol"] == "task":
        from engine.bench.rubric import get_version
        from engine.judge.sandbox import SandboxUnavailableError, require_sandbox

        if any(c.kind == "code" and c.eval_code for c in get_version(store, version_id).criteria):
            try:
                require_sandbox(trust_eval_code)
            except SandboxUnavailableError as exc:
                raise RunError(str(exc)) from None
    kernel = make_kernel(row["kernel"], runtime.config, store, runtime.use_cache, session_id,
                         spec.get("api_key_env"))
    runner = SessionRunner(store, session_id, kernel, _NoTarget(row["target"]), None,
                           get_embedding_service(runtime.config.retrieval.embedder), runtime.home)
    runner.session.spec = replace(runner.session.spec, trust_eval_code=trust_eval_code)  # decided for this call
    await runner.rescore(version_id)
    return session_metrics(store, session_id)


class _NoTarget:
    """Re-scoring never asks the target; this makes any attempt fail loudly."""

    def __init__(self, spec: str):
        self.spec = spec

    async def reply(self, *args: Any, **kwargs: Any):
        """Always fails: re-scoring never asks the target."""
        raise RunError("re-scoring must not call the target")

    async def aclose(self) -> None:
        """Nothing to close."""
        return None


async def apply_rubric(runtime: Runtime, session_id: int, version_id: int,
                       trust_eval_code: bool = False) -> dict[str, Any]:
    """Make a session score with a rubric version; the engine decides who re-scores.

    In one write transaction: when the session is live (running or paused, its process alive) the
    switch is queued as a ``control.rubric`` event for its runner, which applies it at the next step
    or, at the latest, before it finishes; otherwise the stored answers are re-scored here at once.

    Returns:
        ``{"session", "version_id", "queued": bool, "control_seq" | "metrics"}``.
    """
    from engine.interview.queries import effective_status
    from engine.interview.session import session_row

    store = runtime.store
    with store.transaction():
        row = session_row(store, session_id)
        if effective_status(row) in ("running", "paused"):
            seq = store.append_event(session_id, ev.CONTROL_RUBRIC, {"version_id": version_id})
            return {"session": session_id, "version_id": version_id, "queued": True, "control_seq": seq}
    metrics = await rescore_session(runtime, session_id, version_id, trust_eval_code)
    return {"session": session_id, "version_id": version_id, "queued": False, "metrics": metrics}
