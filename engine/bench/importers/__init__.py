"""Importers: SedarEval, TaskWeaver, MedQA-style, SQuAD and viva's own JSONL.

Every importer validates the whole input before writing, writes the benchmark in one transaction,
and returns an :class:`ImportSummary` (imported, skipped and why, warnings, counts).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from engine.bench.importers.base import (
    ImportFormatError,
    ImportSummary,
    ItemDraft,
    ProgressFn,
    reporting,
    write_benchmark,
)
from engine.bench.model import BenchError
from engine.config import Config
from engine.store import Store

FORMATS = ("sedareval", "taskweaver", "medqa", "squad", "jsonl")
"""Formats ``viva bench import FORMAT PATH`` reads."""


def run_import(store: Store, home: str | Path, fmt: str, path: str | Path, name: str | None = None, *,
               config: Config | None = None, kb: str | None = None, embedder: Any = None,
               strict: bool = False, progress: ProgressFn | None = None) -> ImportSummary:
    """Import a file or folder in one of :data:`FORMATS`.

    Args:
        store: the store.
        home: the data home (TaskWeaver data files, the SQuAD knowledge base index).
        fmt: the format.
        path: the file (a folder for ``taskweaver``).
        name: the benchmark name (default ``<format>-<file stem>``).
        config: the configuration (TaskWeaver's default ``max_rounds``, SQuAD's retrieval settings).
        kb: SQuAD only: the knowledge base name (default: the benchmark name).
        embedder: SQuAD only: an embedder to use instead of the configured one.
        strict: SedarEval only: the first bad row stops the import (default: skip bad rows, each
            listed with its line and reason in the summary).
        progress: called as ``progress(stage, done, total)`` while reading (``read``: lines),
            building a knowledge base (SQuAD: ``read``, ``chunk``, ``embed``, ``index``) and writing
            (``write``: items).

    Returns:
        The import summary.

    Raises:
        ImportFormatError: bad input (file, line/record, field, what was expected); nothing written.
        BenchError: unknown format, or the name is taken.
    """
    with reporting(progress):
        return _run_import(store, home, fmt, path, name, config=config, kb=kb, embedder=embedder, strict=strict)


def _run_import(store: Store, home: str | Path, fmt: str, path: str | Path, name: str | None, *,
                config: Config | None, kb: str | None, embedder: Any, strict: bool) -> ImportSummary:
    config = config or Config()
    if strict and fmt != "sedareval":
        raise BenchError("--strict applies to the sedareval format (the other importers are all-or-nothing)")
    if kb is not None and fmt != "squad":
        raise BenchError("--kb only applies to the squad format")
    if fmt == "sedareval":
        from engine.bench.importers.sedareval import import_sedareval

        return import_sedareval(store, path, name, strict=strict)
    if fmt == "taskweaver":
        from engine.bench.importers.taskweaver import import_taskweaver

        return import_taskweaver(store, home, path, name, default_max_rounds=config.interview.max_rounds)
    if fmt == "medqa":
        from engine.bench.importers.medqa import import_medqa

        return import_medqa(store, path, name)
    if fmt == "squad":
        from engine.bench.importers.squad import import_squad

        return import_squad(store, home, path, name, kb=kb, config=config.retrieval, embedder=embedder,
                            window=config.interview.turns)
    if fmt == "jsonl":
        from engine.bench.importers.jsonl import import_jsonl

        return import_jsonl(store, home, path, name)
    raise BenchError(f"unknown import format {fmt!r}; expected one of {', '.join(FORMATS)}")


__all__ = ["FORMATS", "ImportFormatError", "ImportSummary", "ItemDraft", "run_import", "write_benchmark"]
