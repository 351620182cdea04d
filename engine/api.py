"""The engine's one door for the app and the command line.

:class:`Engine` holds the data home, the configuration and a database connection, and offers
everything a user interface does with sessions: list and load sessions, runs, benchmarks, items and
rubrics; plan, run, resume and steer sessions; override or confirm verdicts; apply a rubric
version (the engine decides who re-scores); follow a session's events; read the figures of
:mod:`engine.metrics`; export reports. ``tui/`` imports only this module and :mod:`engine.events`
(an import-linter contract in ``pyproject.toml`` enforces it), so the store's tables, SQL and
module layout stay the engine's own business.

The command line's administrative commands (knowledge bases, benchmark import and generation,
policy training) call the engine functions re-exported at the end of this module, with
:attr:`Engine.runtime`.

An :class:`Engine` connection belongs to one thread; :meth:`Engine.connect` opens another for a
worker thread.
"""

from __future__ import annotations

import threading
from collections.abc import AsyncIterator, Callable, Iterable, Iterator, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from engine import __version__
from engine.bench.model import BenchError, Benchmark, Criterion, Item, RubricVersion
from engine.home import DEFAULT_THEME, ConfigError
from engine.metrics import listing as _listing
from engine.metrics.listing import (
    MAX_FILTER_CHARS,
    MAX_FILTER_TERMS,
    FilterTerm,
    SessionFilterError,
    parse_filter,
)
from engine.runtime import Runtime
from engine.security import make_non_dumpable
from engine.store import StoreError

if TYPE_CHECKING:
    from engine import events as ev
    from engine.config import Config
    from engine.interview.run import RunRequest

# Start-up stays light: this module imports only what opening a data home and listing sessions need
# (configuration, store, listing). Everything else (the interview machinery, the LLM client, the
# embedder, the policy, the reports) is imported by the method that uses it, and the names
# re-exported for the command line (the table below, and USER_ERRORS) on first access through the
# module's ``__getattr__``, so ``viva sessions`` never loads openai, onnxruntime or tokenizers.
_LAZY: dict[str, str] = {
    # errors and types
    "RunRequest": "engine.interview.run", "RunError": "engine.interview.pool",
    "ControlError": "engine.interview.control", "SessionError": "engine.interview.session",
    "steering_refusal": "engine.interview.control:refusal",
    "KnowledgeBaseError": "engine.knowledge.kb", "EmbedderError": "engine.knowledge.embed",
    "LLMError": "engine.llm", "PolicyError": "engine.policy.policies", "OnnxPolicy": "engine.policy.policies",
    # benchmarks and rubrics
    "apply_ops": "engine.bench.rubric", "current_rubric": "engine.bench.rubric", "edit_rubric": "engine.bench.rubric",
    "has_rubric": "engine.bench.rubric", "list_versions": "engine.bench.rubric",
    "restore_version": "engine.bench.rubric", "export_jsonl": "engine.bench.export",
    "describe_home_fault": "engine.store.faults:describe",
    "load_check_rows": "engine.judge.check:load_rows", "run_judge_check": "engine.judge.check:run_check",
    "render_judge_check": "engine.judge.check:render_text", "JudgeCheckError": "engine.judge.check",
    "render_judge_probe": "engine.judge.probe:render_text", "ProbeError": "engine.judge.probe",
    "generate_benchmark": "engine.bench.generate", "load_topics": "engine.bench.generate",
    "run_import": "engine.bench.importers", "delete_benchmark": "engine.bench.items",
    "get_benchmark": "engine.bench.items", "get_item": "engine.bench.items", "list_benchmarks": "engine.bench.items",
    "list_items": "engine.bench.items", "prepare_demo": "engine.demo", "DEMO_TARGETS": "engine.demo",
    "calibrate_benchmark": "engine.bench.calibrate", "get_calibration": "engine.bench.calibrate",
    "target_abilities": "engine.bench.calibrate", "item_difficulties": "engine.bench.calibrate",
    "run_adaptive_items": "engine.interview.item_selection", "refit_if_stale": "engine.bench.calibrate", "stale_line": "engine.bench.calibrate",
    "dropped_line": "engine.bench.calibrate", "MIN_TARGETS": "engine.bench.calibrate",
    # runs
    "list_sessions": "engine.interview.queries", "execute_run": "engine.interview.run",
    "execute_sessions": "engine.interview.run", "plan_run": "engine.interview.run",
    "resolve_resume": "engine.interview.run", "run_sessions": "engine.interview.run",
    # knowledge
    "LLMEntityExtractor": "engine.knowledge.entities", "OfflineEntityExtractor": "engine.knowledge.entities",
    "build_graph": "engine.knowledge.graph", "build_kb": "engine.knowledge.kb", "delete_kb": "engine.knowledge.kb",
    "documents_outside": "engine.knowledge.kb",
    "get_kb": "engine.knowledge.kb", "list_kbs": "engine.knowledge.kb", "sample_path": "engine.knowledge.paths",
    "search": "engine.knowledge.retrieval", "LLMClient": "engine.llm",
    "check_endpoint": "engine.llm.check", "resolve_endpoint": "engine.llm.check",
    "EndpointSpecError": "engine.llm.check", "OutputError": "engine.safewrite",
    # figures, policy, reports
    "target_table": "engine.metrics.sessions", "calibrate_from_store": "engine.policy.calibrate",
    "fitted_sampler": "engine.policy.calibrate", "load_fitted_targets": "engine.policy.calibrate",
    "save_fits": "engine.policy.calibrate", "card_path": "engine.policy.card", "read_card": "engine.policy.card",
    "check_goals": "engine.policy.evaluate", "HIDDEN": "engine.policy.network",
    "DEFAULT_SEED": "engine.policy.pipeline", "DEFAULT_STEPS": "engine.policy.pipeline",
    "eval_report": "engine.policy.pipeline", "evaluation_table": "engine.policy.pipeline",
    "train_and_export": "engine.policy.pipeline", "untrained_policy": "engine.policy.pipeline",
    "PPOConfig": "engine.policy.ppo", "LAMBDA": "engine.policy.reward", "TAU": "engine.policy.reward",
    "RewardSpec": "engine.policy.reward", "export_run": "engine.report", "export_session": "engine.report",
    "REPORT_EXTENSIONS": "engine.report:EXTENSIONS", "REPORT_FORMATS": "engine.report:FORMATS",
    "ScopeError": "engine.metrics.leaderboard", "kappa_text": "engine.metrics.agreement",
    "MIN_KAPPA_N": "engine.metrics.agreement", "MAX_TURNS": "engine.interview.run",
    "MIN_READ_N": "engine.metrics.chance", "read_note": "engine.metrics.chance",
    "read_text_file": "engine.config", "check_interview_setting": "engine.config", "check_target": "engine.interview.targets",
    "TargetError": "engine.interview.targets", "planned_targets": "engine.interview.run",
}

_USER_ERROR_NAMES = ("ConfigError", "StoreError", "BenchError", "KnowledgeBaseError", "EmbedderError", "RunError",
                     "ControlError", "SessionError", "LLMError", "PolicyError", "SessionFilterError",
                     "JudgeCheckError", "ProbeError", "EndpointSpecError", "ScopeError", "OutputError")


def __getattr__(name: str) -> Any:
    """Import a re-exported name (or build :data:`USER_ERRORS`) on first access, then keep it."""
    if name == "USER_ERRORS":
        value: Any = tuple(globals()[n] if n in globals() else __getattr__(n) for n in _USER_ERROR_NAMES)
    elif name in _LAZY:
        import importlib

        module, _, attr = _LAZY[name].partition(":")
        value = getattr(importlib.import_module(module), attr or name)
    else:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_LAZY) | {"USER_ERRORS"})


class _Module:
    """A module imported on first use of one of its attributes (the facade's methods call through it)."""

    def __init__(self, name: str):
        self._name = name

    def __getattr__(self, attr: str) -> Any:
        import importlib

        return getattr(importlib.import_module(self._name), attr)


_queries = _Module("engine.interview.queries")
_control = _Module("engine.interview.control")
_run = _Module("engine.interview.run")
_items = _Module("engine.bench.items")
_rubric = _Module("engine.bench.rubric")
_figures = _Module("engine.metrics.sessions")
_kb = _Module("engine.knowledge.kb")


USER_ERRORS: tuple[type[Exception], ...]
"""Errors that carry a message for the user (the command line prints them as one line); built on
first access (it imports the modules that define them)."""


SQLITE_MAX_INT = 2**63 - 1
"""The largest integer SQLite stores; an id beyond it names no row (binding it would overflow)."""


def in_id_range(ident: Any) -> bool:
    """Whether ``ident`` is an integer SQLite can hold (so it may name a stored row)."""
    return isinstance(ident, int) and -SQLITE_MAX_INT - 1 <= ident <= SQLITE_MAX_INT


class Engine:
    """The data home, configuration and a database connection, with every operation a UI needs.

    Args:
        runtime: an existing runtime (home, config, cache switch, optional store).
    """

    def __init__(self, runtime: Runtime):
        self.runtime = runtime

    @classmethod
    def open(cls, home: str | Path | None = None, config_path: str | Path | None = None,
             use_cache: bool = True) -> Engine:
        """Resolve ``--home``/``VIVA_HOME``, load ``--config``/``viva.yaml``, set up logging."""
        return cls(Runtime.create(home, config_path, use_cache))

    # -- plumbing -------------------------------------------------------------------------------
    @property
    def home(self) -> Path:
        """The data home."""
        return self.runtime.home

    @property
    def config(self) -> Config:
        """The loaded configuration."""
        return self.runtime.config

    def ui_settings(self) -> tuple[str, dict[str, str]]:
        """The app's theme and key remapping (binding id -> keys) from the configuration; without a
        configuration file, the defaults, without building the configuration (the first frame does
        not need it)."""
        if not self.runtime.config_loaded:
            return DEFAULT_THEME, {}
        return self.config.theme, dict(self.config.keys)

    @property
    def use_cache(self) -> bool:
        """Whether LLM calls are answered from the cache."""
        return self.runtime.use_cache

    def connect(self) -> Engine:
        """The same engine on a new database connection (for another thread); close it after use."""
        return Engine(self.runtime.connect())

    def close(self) -> None:
        """Close this engine's database connection."""
        self.runtime.close()

    def __enter__(self) -> Engine:
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()

    @property
    def _store(self) -> Any:
        return self.runtime.store

    def ensure_writable(self) -> None:
        """Raise the home's one-line fault now (read-only, damaged, full) when it cannot take a write, before
        any other check: an empty write transaction (``BEGIN IMMEDIATE``) is the test."""
        with self._store.transaction():
            pass

    # -- judges ---------------------------------------------------------------------------------
    def judge_check(self, path: str | Path, *, judge: str = "offline", by: str | None = None,
                    disagreements: int = 0, repeat: int = 1, concurrency: int = 4, either: bool = False) -> Any:
        """``viva judge check``: a judge's agreement with the human labels of a JSONL file
        (:mod:`engine.judge.check`). ``judge`` is ``offline`` or the name of a configured endpoint
        (``judge``, ``kernel`` or a target); LLM calls are recorded and cached in this home.

        Raises:
            JudgeCheckError: a bad file, field or judge name.
        """
        from engine.judge import check

        rows = check.load_rows(path)
        if judge == "offline":
            if repeat > 1:
                raise check.JudgeCheckError("--repeat needs an LLM judge: the offline judge gives the same verdicts")
            return check.run_check(path, rows, by=by, disagreements=disagreements, either=either)
        from engine.llm import LLMClient

        endpoint = check.resolve_endpoint(self.config, judge)
        llm = check.LLMCheckJudge(LLMClient(self._store, endpoint, "judge", self.use_cache), concurrency,
                                  self.config.interview.judge_repairs,
                                  retest_client=LLMClient(self._store, endpoint, "judge", use_cache=False))
        return check.run_check(path, rows, judge_name=judge, verdicts_of=llm, by=by, disagreements=disagreements,
                               repeat=repeat, usage=llm.usage_report, either=either)

    def judge_probe(self, bench: str | None = None, *, judge: str = "offline", sets: Sequence[str] = ("dev", "heldout"),
                    examples: int = 0, patterns: str | Path | None = None, concurrency: int = 4) -> Any:
        """``viva judge probe``: the share of adversarial answers, built from a benchmark's own golds, that
        the judge credits, per pattern (:mod:`engine.judge.probe`). ``bench`` names one benchmark (default:
        every benchmark with gold answers); ``judge`` is ``offline`` or a configured endpoint, combined
        with the lexical rule as sessions combine them.

        Raises:
            ProbeError: no such benchmark, no gold answer, a bad pattern file or set.
            JudgeCheckError: an unknown judge name.
        """
        from engine.bench.items import list_benchmarks, list_items
        from engine.bench.rubric import current_rubric
        from engine.judge import probe

        store = self._store
        names = [b.name for b in list_benchmarks(store)]
        if bench is not None and bench not in names:
            raise probe.ProbeError(f"--bench {bench}: no such benchmark (imported: {', '.join(names) or 'none'})")
        chosen = [bench] if bench else names
        items: list[Any] = []
        used: list[str] = []

        def criteria_of(item: Any) -> list[Any]:
            try:
                return list(current_rubric(store, item.id).criteria)
            except BenchError:
                return []

        for name in chosen:
            got = probe.probe_items(list_items(store, name), criteria_of)
            if got:
                used.append(name)
                items += got
        pats = probe.load_patterns(patterns)
        if judge == "offline":
            return probe.run_probe(items, benchmarks=used, patterns=pats, sets=sets, examples=examples)
        from engine.judge import check
        from engine.llm import LLMClient

        endpoint = check.resolve_endpoint(self.config, judge)
        llm = check.LLMCheckJudge(LLMClient(self._store, endpoint, "judge", self.use_cache), concurrency,
                                  self.config.interview.judge_repairs)
        return probe.run_probe(items, benchmarks=used, judge_name=f"{judge} or lexical", patterns=pats, sets=sets,
                               examples=examples, verdicts_of=probe.llm_verdicts(llm))

    # -- sessions -------------------------------------------------------------------------------
    def list_sessions(self, limit: int | None = None, offset: int = 0, query: str = "",
                      ids: list[int] | None = None) -> list[dict[str, Any]]:
        """Sessions newest first (id, status, protocol, target, item, benchmark, turns, score...),
        filtered and paged in the store: ``limit`` rows (None: all) after ``offset``, matching the
        filter string ``query`` (:mod:`engine.metrics.listing`), only ``ids`` when given.

        Raises:
            SessionFilterError: a bad filter term.
        """
        return _listing.list_sessions(self._store, limit, offset, query, ids=ids)

    def count_sessions(self, query: str = "") -> int:
        """How many sessions match the filter string ``query`` (all of them when empty)."""
        return _listing.count_sessions(self._store, query)

    def session_changes(self, after: int) -> tuple[int, list[int]]:
        """``(last event seq, ids of sessions whose listed columns may have changed since ``after``)``."""
        return _listing.session_changes(self._store, after)

    def orphaned_sessions(self) -> list[int]:
        """Sessions marked running or paused whose process is gone (listed as interrupted)."""
        return _listing.orphaned_sessions(self._store)

    def catalogue_token(self) -> tuple[Any, ...]:
        """A value that changes when sessions are added or removed, or benchmarks or items change."""
        return _listing.catalogue_token(self._store)

    def session_exists(self, session_id: int) -> bool:
        """Whether a session with this id is stored (an id beyond SQLite's integer range never is)."""
        return in_id_range(session_id) and _queries.session_exists(self._store, session_id)

    def session_row(self, session_id: int) -> dict[str, Any]:
        """The session's record with its effective status; :class:`SessionError` if missing."""
        if not in_id_range(session_id):
            from engine.interview.session import SessionError

            raise SessionError(f"no such session {session_id}")
        return _queries.session_summary(self._store, session_id)

    def session_detail(self, session_id: int) -> dict[str, Any]:
        """A session with its turns, each turn's effective verdicts, and its metrics."""
        return _queries.session_detail(self._store, session_id)

    def sessions_of_item(self, item_id: int | None, exclude: int | None = None, limit: int | None = None,
                         offset: int = 0, answered_only: bool = False, query: str = "") -> list[dict[str, Any]]:
        """Sessions on the same item (for compare), newest first, paged in the store; with
        ``answered_only`` only those with an answered turn (something to show side by side)."""
        if item_id is None:
            return []
        return _listing.list_sessions(self._store, limit, offset, query, item=item_id, exclude=exclude,
                                      answered_only=answered_only)

    def count_sessions_of_item(self, item_id: int | None, exclude: int | None = None,
                               answered_only: bool = False, query: str = "") -> int:
        """How many sessions :meth:`sessions_of_item` lists, unpaged."""
        if item_id is None:
            return 0
        return _listing.count_sessions(self._store, query, item=item_id, exclude=exclude, answered_only=answered_only)

    def run_sessions(self, run_id: int) -> list[dict[str, Any]]:
        """A run's sessions: id and effective status, in order."""
        return _queries.run_sessions(self._store, run_id)

    def run_exists(self, run_id: int) -> bool:
        """Whether a run with this id is stored (an id beyond SQLite's integer range never is)."""
        return in_id_range(run_id) and _queries.run_exists(self._store, run_id)

    def known_targets(self, limit: int = 20) -> list[str]:
        """Targets used by recent sessions, newest first, then the config's named targets."""
        used = _queries.recent_targets(self._store, limit)
        return list(dict.fromkeys(used + list(self.config.targets)))

    def change_token(self) -> tuple[Any, ...]:
        """A value that changes whenever sessions, events, benchmarks or items change."""
        return _queries.change_token(self._store)

    # -- events -----------------------------------------------------------------------------------
    def events(self, session_id: int, after: int = 0) -> list[ev.Event]:
        """Every event of a session after ``after``, in order."""
        out: list[ev.Event] = []
        while True:
            page = self._store.events(after, session_id)
            out.extend(page)
            if len(page) < 10_000:
                return out
            after = page[-1].seq

    def follow(self, session_id: int, after: int = 0, interval: float = 0.05) -> AsyncIterator[ev.Event]:
        """Follow a session's events as any process writes them (async iterator)."""
        return self._store.subscribe(after, session_id, interval)

    def follow_batches(self, session_id: int | None, after: int = 0, interval: float = 0.05,
                       stop: threading.Event | None = None) -> Iterator[list[ev.Event]]:
        """Follow events in a thread: each new batch as any process writes it, until ``stop`` is set."""
        return self._store.follow(after, session_id, interval, stop)

    def session_view_inputs(self, session_id: int) -> tuple[dict[str, Any], list[dict[str, Any]], dict[int, int]]:
        """What a :class:`~engine.events.fold.SessionView` starts from: the session's row (effective
        status), the criteria of its rubric version, and rubric version id -> version number."""
        row = self.session_row(session_id)
        criteria = []
        if row.get("rubric_version_id") is not None:
            criteria = [{"cid": c.cid, "text": c.text, "kind": c.kind, "weight": c.weight,
                         "source_chunk_ids": list(c.source_chunk_ids or [])}
                        for c in _rubric.get_version(self._store, row["rubric_version_id"]).criteria]
        return row, criteria, self.version_labels(row.get("item_id"))

    # -- runs -------------------------------------------------------------------------------------
    def plan_run(self, request: RunRequest) -> int:
        """Validate a request and create the run with one session per (item, target).

        A key given as ``--api-key-env`` is refused first (without printing it), whatever the targets.
        """
        if request.api_key_env:
            from engine.config import check_api_key_env

            check_api_key_env(request.api_key_env, "--api-key-env")
        return _run.plan_run(self.runtime, request)

    async def execute_run(self, run_id: int, on_event: Callable[[int, str, dict[str, Any]], None] | None = None,
                          workers: int | None = None) -> dict[int, str | None]:
        """Run every unfinished session of a run; session id -> error or None.

        ``workers``: processes to spread the sessions over (default: the run's own setting, from
        ``--workers`` or ``interview.workers``; 1 runs them in this process). ``on_event`` is called
        in this process either way (from the store's event log when workers write it).
        """
        return await _run.execute_run(self.runtime, run_id, on_event, workers)

    async def execute_sessions(self, session_ids: list[int], concurrency: int = 1,
                               on_event: Callable[[int, str, dict[str, Any]], None] | None = None
                               ) -> dict[int, str | None]:
        """Run (or resume) sessions; session id -> error or None."""
        return await _run.execute_sessions(self.runtime, session_ids, concurrency, on_event)

    def run_progress(self, run_id: int) -> dict[str, Any]:
        """How far a run is: sessions, done, failed, turns judged and planned."""
        return _figures.run_progress(self._store, run_id)

    def target_warnings(self, specs: Iterable[str], api_key_env: str | None = None) -> list[str]:
        """Warnings about target specs before a run (e.g. a remote endpoint with no API key)."""
        from engine.interview.targets import target_warnings

        return [w for spec in specs for w in target_warnings(spec, self.config, api_key_env)]

    def unreachable_targets(self, specs: Iterable[str], api_key_env: str | None = None) -> list[str]:
        """Targets on this machine that refuse connections now, one message each (checked before a
        run is planned, so no session is created for a dead port)."""
        from engine.interview.targets import unreachable

        found = (unreachable(spec, self.config, api_key_env) for spec in specs)
        return [m for m in found if m]

    def resolve_resume(self, what: str) -> tuple[str, int]:
        """``12`` -> (session, 12); ``run:3`` -> (run, 3)."""
        return _run.resolve_resume(self.runtime, what)

    # -- steering ---------------------------------------------------------------------------------
    def pause(self, session_id: int) -> int:
        """Ask the session's runner to pause at its next step."""
        return _control.pause(self._store, session_id)

    def resume_session(self, session_id: int) -> int:
        """Ask a paused runner to go on."""
        return _control.resume(self._store, session_id)

    def stop(self, session_id: int) -> int:
        """Ask the runner to stop now (an answer in flight is cut); the session becomes ``stopped``, resumable."""
        return _control.stop(self._store, session_id)

    def force(self, session_id: int, action: str) -> int:
        """Force the next action: follow-up, challenge or end."""
        return _control.force(self._store, session_id, action)

    def inject(self, session_id: int, question: str) -> int:
        """Ask the evaluator's own question next."""
        return _control.inject(self._store, session_id, question)

    def override_verdict(self, session_id: int, turn_idx: int, cid: str, met: bool, note: str = "",
                         who: str | None = None) -> dict[str, Any]:
        """Override (or, with the judge's own value, confirm) a verdict; figures recomputed at once.
        ``note`` says why and may not be empty; ``who`` defaults to :attr:`evaluator`."""
        return _control.override_verdict(self._store, session_id, turn_idx, cid, met, note, who or self.evaluator)

    def preview_override(self, session_id: int, turn_idx: int, cid: str, met: bool) -> dict[str, Any]:
        """What an override would change (verdict, turn score, session Score before and after), not written."""
        return _control.preview_override(self._store, session_id, turn_idx, cid, met)

    def undo_override(self, session_id: int, turn_idx: int, cid: str) -> dict[str, Any]:
        """Take back the latest override (or confirmation) of a verdict; figures recomputed at once."""
        return _control.undo_override(self._store, session_id, turn_idx, cid, self.evaluator)

    def overrides(self, session_id: int | None = None, run_id: int | None = None) -> list[dict[str, Any]]:
        """Overrides, confirmations and undos of a session or a run: who, when, why, oldest first."""
        return _control.overrides(self._store, session_id, run_id)

    @property
    def evaluator(self) -> str:
        """Who signs overrides: ``evaluator:`` in the configuration, else the OS user."""
        configured = getattr(self.config, "evaluator", None)
        return _control.evaluator_name(configured)

    async def apply_rubric(self, session_id: int, version_id: int, trust_eval_code: bool = False) -> dict[str, Any]:
        """Score a session with a rubric version: queued for its live runner, or re-scored now
        (``trust_eval_code``: as ``viva run --trust-eval-code``)."""
        return await _run.apply_rubric(self.runtime, session_id, version_id, trust_eval_code)

    async def rescore(self, session_id: int, version_id: int, trust_eval_code: bool = False) -> dict[str, Any]:
        """Re-judge a session's stored answers under a rubric version (never asks the target)."""
        return await _run.rescore_session(self.runtime, session_id, version_id, trust_eval_code)

    # -- benchmarks, items, rubrics --------------------------------------------------------------
    def list_benchmarks(self) -> list[Benchmark]:
        """Every benchmark."""
        return _items.list_benchmarks(self._store)

    def get_benchmark(self, name: str) -> Benchmark:
        """A benchmark by name (:class:`BenchError` if missing)."""
        return _items.get_benchmark(self._store, name)

    def list_items(self, benchmark: str) -> list[Item]:
        """A benchmark's items in order."""
        return _items.list_items(self._store, benchmark)

    def get_item(self, item_id: int) -> Item:
        """One item by id."""
        return _items.get_item(self._store, item_id)

    def current_rubric(self, item_id: int) -> RubricVersion:
        """An item's current rubric version."""
        return _rubric.current_rubric(self._store, item_id)

    def list_versions(self, item_id: int) -> list[RubricVersion]:
        """Every version of an item's rubric, oldest first."""
        return _rubric.list_versions(self._store, item_id)

    def get_version(self, version_id: int) -> RubricVersion:
        """One rubric version by id."""
        return _rubric.get_version(self._store, version_id)

    def version_labels(self, item_id: int | None) -> dict[int, int]:
        """Rubric version id -> version number for an item's rubric ({} without one)."""
        if item_id is None or not _rubric.has_rubric(self._store, item_id):
            return {}
        return {v.id: v.version for v in _rubric.list_versions(self._store, item_id)}

    def edit_rubric(self, item_id: int, ops: list[Any], author: str = "human", note: str = "",
                    base_version_id: int | None = None) -> RubricVersion:
        """Write a new rubric version from edit operations."""
        return _rubric.edit_rubric(self._store, item_id, ops, author=author, note=note,
                                   base_version_id=base_version_id)

    # -- figures and reports -----------------------------------------------------------------------
    def target_table(self, session_ids: Iterable[int]) -> list[dict[str, Any]]:
        """One row of figures per target over the given sessions."""
        return _figures.target_table(self._store, session_ids)

    def leaderboard(self) -> list[dict[str, Any]]:
        """Every target over its finished sessions, best Score first."""
        return _figures.leaderboard(self._store)

    def board(self, run: int | None = None, benchmark: str | None = None, query: str | None = None,
              seed: int | None = None) -> dict[str, Any]:
        """The scoped leaderboard (:func:`engine.metrics.leaderboard.scoped_leaderboard`): one run, one
        benchmark or a filter's sessions (default: the latest run); rows per (benchmark, target) with
        n and seeded bootstrap 95% intervals over items, paired comparisons and κ with its n.

        Raises:
            ScopeError: no such run or benchmark, or a bad filter (a ``ValueError``).
        """
        from functools import partial

        from engine.bench.calibrate import scope_abilities
        from engine.metrics.leaderboard import SEED, scoped_leaderboard

        return scoped_leaderboard(self._store, run, benchmark, query, SEED if seed is None else seed,
                                  abilities=partial(scope_abilities, self._store))

    def rubric_leaderboard(self, session_ids: Iterable[int] | None = None) -> list[dict[str, Any]]:
        """SedarEval's per-category leaderboard (Σ score × 100 / (count × 5), three levels, overall)
        per target over finished rubric sessions; offline estimates are separate, labelled entries."""
        from engine.metrics.rubric_board import rubric_leaderboard

        return rubric_leaderboard(self._store, session_ids)

    def rubric_judgement(self, session_id: int) -> dict[str, Any] | None:
        """A rubric session's latest 0–5 judgement (score, reasoning, status, offline_estimate), or None."""
        from engine.metrics.rubric_board import session_judgement

        return session_judgement(self._store, session_id)

    def agreement(self, session_ids: list[int] | None = None) -> dict[str, Any]:
        """Judge–human verdict agreement from reviewed verdicts."""
        return _figures.agreement(self._store, session_ids)

    def session_metrics(self, session_id: int) -> dict[str, Any]:
        """One session's figures (Dynamism, scores, tokens, cost, latency)."""
        return _figures.session_metrics(self._store, session_id)

    def export_session(self, session_id: int, fmt: str) -> str:
        """A session report as text (md, json, csv, html)."""
        from engine.report import export_session

        return export_session(self._store, session_id, fmt)

    def export_run(self, run_id: int, fmt: str) -> str:
        """A run report as text (md, json, csv, html): the leaderboard across targets, per-topic
        scores, sessions, rubric versions and agreement."""
        from engine.report import export_run

        return export_run(self._store, run_id, fmt)

    def export_junit(self, run_id: int, fail_under: float | None = None) -> str:
        """A run as JUnit XML (:mod:`engine.report.junit`): one test case per item and target, failures
        under each target's threshold (its ``min_score``, else ``fail_under``)."""
        from engine.redact import redact
        from engine.report.junit import render_junit

        return redact(render_junit(self._store, run_id, self.config, fail_under))

    def below_threshold(self, run_id: int, fail_under: float | None = None) -> list[dict[str, Any]]:
        """The run's leaderboard rows under their threshold (``min_score`` or ``fail_under``), each with the
        ``line`` to print; empty when every gated row passes (:func:`engine.report.junit.below_threshold`)."""
        from engine.report.junit import below_threshold

        return below_threshold(self.board(run=run_id), self.config, fail_under)

    @property
    def exports_dir(self) -> Path:
        """Where reports are written by default: the data home's ``exports/``."""
        return self.home / "exports"

    def default_report_path(self, kind: str, ident: int, fmt: str) -> Path:
        """``<home>/exports/viva-<kind>-<id>.<ext>`` for a ``session`` or ``run`` report."""
        from engine.report import EXTENSIONS

        if kind not in ("session", "run"):
            raise ValueError(f"a report is of a session or a run, not {kind!r}")
        if fmt == "junit":
            return self.exports_dir / f"viva-{kind}-{ident}.junit.xml"
        if fmt not in EXTENSIONS:
            raise ValueError(f"unknown report format {fmt!r}; choose one of {', '.join(EXTENSIONS)}")
        return self.exports_dir / f"viva-{kind}-{ident}{EXTENSIONS[fmt]}"

    def sweep_stale_work(self) -> int:
        """Remove what killed runs left: working directories (``HOME/work/session-N-…``) of sessions
        that are over or gone (a resumable session keeps its own), and eval_code's private folders
        and cgroups of processes that are gone; returns how many."""
        from engine.judge.sandbox import sweep_stale, sweep_work_dirs

        rows = self._store.query("SELECT id, status FROM sessions WHERE status NOT IN ('finished', 'not_examined')")
        open_ids = {r["id"] for r in rows}
        return sweep_work_dirs(self.home, open_ids.__contains__) + sweep_stale(force=True)

    def write_report(self, kind: str, ident: int, fmt: str, path: str | Path | None = None,
                     force: bool = False, fail_under: float | None = None) -> Path:
        """Write a ``session`` or ``run`` report to ``path`` (default :meth:`default_report_path`,
        which may be overwritten), creating its folder; returns the absolute path. CSV is written
        byte for byte (``\r\n``). A symbolic link is never followed, a ``path`` that exists is kept
        unless ``force`` (:func:`engine.safewrite.write_new_file`).

        Raises:
            OutputError: a link, an existing file without ``force``, or a failed write (naming the file).
        """
        from engine.safewrite import write_new_file

        if fmt == "junit":
            text = self.export_junit(ident, fail_under)
        else:
            text = self.export_session(ident, fmt) if kind == "session" else self.export_run(ident, fmt)
        target = Path(path).expanduser() if path else self.default_report_path(kind, ident, fmt)
        return write_new_file(target, text, force=force or not path)

    def chunks(self, chunk_ids: list[int]) -> dict[int, Any]:
        """Knowledge-base chunks by id (what a criterion cites)."""
        return _kb.get_chunks(self._store, chunk_ids)


__all__ = ["Engine", "USER_ERRORS", "Runtime", "BenchError", "Benchmark", "Criterion", "Item", "RubricVersion",
           "ConfigError", "StoreError", "SessionFilterError", "FilterTerm", "parse_filter",
           "MAX_FILTER_CHARS", "MAX_FILTER_TERMS", "make_non_dumpable", "__version__", *_LAZY]
