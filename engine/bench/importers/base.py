"""What every importer shares: located errors, item drafts, the summary, and the one-transaction write.

An importer reads and validates the whole input into :class:`ItemDraft` objects first (no writes),
then :func:`write_benchmark` stores the benchmark, its items and their first rubric versions in one
transaction. A bad record therefore raises :class:`ImportFormatError` (naming the file, the line
or record, the field and what was expected) before anything is written, and a failure during the
write rolls everything back: no half benchmark is ever left behind.

Progress: within :func:`reporting`, the readers and the write call ``progress(stage, done, total)``
(stages ``read`` in lines, ``write`` in items; SQuAD's knowledge-base stages too), so a command line
can show how far an import is without every importer taking a callback.
"""

from __future__ import annotations

import json
import re
from collections import Counter
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from engine.bench.items import add_item, check_item_fields, create_benchmark, validate_name
from engine.bench.model import BenchError, Criterion
from engine.bench.rubric import as_criterion, create_rubric
from engine.store import Store

ProgressFn = Callable[[str, int, int], None]
"""``progress(stage, done, total)``, as for knowledge-base builds."""

_PROGRESS: ContextVar[ProgressFn | None] = ContextVar("viva_import_progress", default=None)
_EVERY = 200  # report at most every this many lines or items (and at the end)


@contextmanager
def reporting(progress: ProgressFn | None) -> Iterator[None]:
    """Within the block, importers report their progress to ``progress`` (None: to nobody)."""
    token = _PROGRESS.set(progress)
    try:
        yield
    finally:
        _PROGRESS.reset(token)


def current_progress() -> ProgressFn | None:
    """The progress callback of the enclosing :func:`reporting` block, if any."""
    return _PROGRESS.get()


def report(stage: str, done: int, total: int, force: bool = False) -> None:
    """Report ``done`` of ``total`` for a stage (every ``_EVERY`` steps, at the end, or when forced)."""
    progress = _PROGRESS.get()
    if progress is not None and (force or done == total or done % _EVERY == 0):
        progress(stage, done, total)


class ImportFormatError(BenchError):
    """Input that cannot be imported.

    Attributes:
        file: the file (or folder) being read.
        where: the line (``line 12``), record or case, or "" for the whole file.
        message: the field and what was expected.
    """

    def __init__(self, file: str | Path, where: str, message: str):
        self.file = str(file)
        self.where = where
        self.message = message
        super().__init__(f"{self.file}{', ' + where if where else ''}: {message}")


def expected(field_name: str, what: str, got: Any) -> str:
    """A uniform "field: expected ..., got ..." message (long values shortened)."""
    shown = repr(got)
    if len(shown) > 80:
        shown = shown[:77] + "..."
    return f"field '{field_name}': expected {what}, got {shown}"


@dataclass
class ItemDraft:
    """An item and its rubric, validated but not yet stored (fields as in :class:`~engine.bench.model.Item`)."""

    protocol: str
    question: str
    criteria: list[Criterion | dict[str, Any]]
    topic: str = ""
    ext_id: str | None = None
    turns: list[str] = field(default_factory=list)
    reference: str | None = None
    options: dict[str, str] | None = None
    gold: Any = None
    difficulty: str | None = None
    source_chunk_ids: list[int] = field(default_factory=list)
    meta: dict[str, Any] = field(default_factory=dict)
    rubric_note: str = ""

    def validate(self, file: str | Path, where: str) -> ItemDraft:
        """Check every field and criterion now, so errors carry the record's location.

        Raises:
            ImportFormatError: naming ``file``, ``where`` and the field.
        """
        try:
            check_item_fields(self.protocol, self.difficulty, self.options, self.turns)
            if not (self.question or "").strip() and not self.turns:
                raise BenchError(expected("question", "a non-empty string", self.question))
            if not self.criteria:
                raise BenchError("no criteria: an item needs at least one scoring point")
            self.criteria = [as_criterion(c, f"criterion {i + 1}") for i, c in enumerate(self.criteria)]
            if all(c.kind == "deduction" for c in self.criteria):
                raise BenchError("the rubric has only deductions; it needs at least one scoring point")
        except ImportFormatError:
            raise
        except BenchError as exc:
            raise ImportFormatError(file, where, str(exc)) from None
        return self


@dataclass
class SkippedRow:
    """One input record that was not imported.

    Attributes:
        line: its line number in the file (1-based).
        kind: the short reason it is counted under in :attr:`ImportSummary.skipped`.
        reason: the full one-line reason (the field, what was expected, what to do).
    """

    line: int
    kind: str
    reason: str


@dataclass
class ImportSummary:
    """What an import did.

    Attributes:
        benchmark: the new benchmark's name.
        source: the format (``sedareval``, ``taskweaver``, ``medqa``, ``squad``, ``jsonl``).
        path: what was read.
        imported: items written.
        skipped: records skipped, by reason.
        warnings: things that did not stop the import but need a look.
        item_ids: the new items' ids in order.
        counts: format-specific figures (criteria, multi-turn items, follow-ups...).
        kb: the knowledge base the items are grounded in, if any.
        skipped_rows: each skipped record with its line and reason (importers that report them).
    """

    benchmark: str
    source: str
    path: str
    imported: int = 0
    skipped: dict[str, int] = field(default_factory=dict)
    warnings: list[str] = field(default_factory=list)
    item_ids: list[int] = field(default_factory=list)
    counts: dict[str, Any] = field(default_factory=dict)
    kb: str | None = None
    skipped_rows: list[SkippedRow] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready dict."""
        return asdict(self)

    def lines(self) -> list[str]:
        """A human-readable report."""
        ids = ""
        if self.item_ids:
            ids = f" (ids {self.item_ids[0]}-{self.item_ids[-1]})" if len(self.item_ids) > 1 \
                else f" (id {self.item_ids[0]})"
        out = [f"imported {self.imported} item(s) into benchmark {self.benchmark!r} from {self.path}{ids}"]
        n_skipped = sum(self.skipped.values())
        out.append(f"skipped {n_skipped}" + (": " + "; ".join(f"{n} {why}" for why, n in self.skipped.items())
                                             if n_skipped else ""))
        out.extend(f"  - line {r.line}: {r.reason}" for r in self.skipped_rows)
        for key, value in self.counts.items():
            out.append(f"{key}: {value}")
        if self.kb:
            out.append(f"knowledge base: {self.kb}")
        if self.warnings:
            out.append(f"{len(self.warnings)} warning(s):")
            out.extend(f"  - {w}" for w in self.warnings[:20])
            if len(self.warnings) > 20:
                out.append(f"  ... and {len(self.warnings) - 20} more (see --json)")
        return out


class Skips(Counter):
    """Skipped-record counter keyed by reason."""

    def add(self, reason: str) -> None:
        """Count one skipped record."""
        self[reason] += 1


def default_name(source: str, path: str | Path) -> str:
    """A benchmark name from the format and the file or folder name (``medqa-us_test_sample50``)."""
    p = Path(path)
    stem = p.name
    for suffix in (".jsonl", ".json", ".yaml", ".yml"):
        if stem.endswith(suffix):
            stem = stem[: -len(suffix)]
    stem = re.sub(r"[^A-Za-z0-9._-]+", "_", stem).strip("._-") or "data"
    return validate_name(f"{source}-{stem}"[:100])


def read_bytes(path: Path, lines: bool = False) -> bytes:
    """The bytes of an input file, read bounded (:func:`engine.safeload.read_input`: a regular file
    only, at most ``VIVA_MAX_INPUT_MB``; with ``lines`` no line over ``VIVA_MAX_LINE_MB``).

    Raises:
        ImportFormatError: missing, a folder, a FIFO, device or socket, over a limit, or unreadable.
    """
    from engine.safeload import InputError, read_input

    if not path.exists():
        raise ImportFormatError(path, "", "file not found")
    if path.is_dir():
        raise ImportFormatError(path, "", "expected a file, got a folder")
    try:
        return read_input(path, lines=lines)
    except InputError as exc:
        raise ImportFormatError(path, f"line {exc.line}" if exc.line else "", exc.reason) from None
    except OSError as exc:
        raise ImportFormatError(path, "", f"cannot read ({exc.strerror})") from None


def read_text(path: Path, lines: bool = False) -> str:
    """Read a UTF-8 file (a BOM is dropped), bounded as :func:`read_bytes`.

    Raises:
        ImportFormatError: missing, a folder, not a regular file, over a limit, unreadable or not UTF-8.
    """
    data = read_bytes(path, lines)
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        line = data[: exc.start].count(b"\n") + 1
        column = exc.start - (data.rfind(b"\n", 0, exc.start) + 1) + 1
        raise ImportFormatError(path, f"line {line}", f"not UTF-8 text (invalid byte 0x{data[exc.start]:02x} at "
                                f"byte {column} of the line); re-save the file as UTF-8") from None


def load_json_line(path: Path, number: int, text: str) -> Any:
    """Parse the JSON of line ``number`` (or, with ``number`` 1, of a whole file) of ``path``, nesting
    depth limited (:mod:`engine.safeload`).

    Raises:
        ImportFormatError: not valid JSON, or nested too deep, naming the file and line.
    """
    from engine.safeload import JSONDepthError, loads_json

    try:
        return loads_json(text)
    except JSONDepthError as exc:
        raise ImportFormatError(path, f"line {number + exc.line - 1}", str(exc)) from None
    except json.JSONDecodeError as exc:
        raise ImportFormatError(path, f"line {number + exc.lineno - 1}",
                                f"not valid JSON ({exc.msg} at column {exc.colno})") from None


def read_jsonl(path: Path) -> Iterator[tuple[int, dict[str, Any]]]:
    """Yield ``(line number, object)`` for each non-blank line of a JSONL file.

    Raises:
        ImportFormatError: a line is not JSON or not a JSON object (with its line number).
    """
    lines = read_text(path, lines=True).splitlines()
    report("read", 0, len(lines), force=True)
    for number, line in enumerate(lines, start=1):
        report("read", number, len(lines))
        if not line.strip():
            continue
        row = load_json_line(path, number, line)
        if not isinstance(row, dict):
            raise ImportFormatError(path, f"line {number}", f"expected a JSON object, got {type(row).__name__}")
        yield number, row


def check_regular_file(folder: Path, name: str, case_file: Path, where: str = "") -> None:
    """A listed data file ``name`` (relative to ``folder``) must be a regular file inside ``folder``,
    reached through no symbolic link (a link to ``/etc/shadow`` would be copied into the home and
    shown to eval_code). ``case_file`` and ``where`` (``line 3``): what listed it (for the message).

    Raises:
        ImportFormatError: naming the file and what to do.
    """
    import stat

    path = folder
    for part in Path(name).parts:
        path = path / part
        mode = path.lstat().st_mode
        if stat.S_ISLNK(mode):
            raise ImportFormatError(case_file, where, f"data file {name!r}: {path} is a symbolic link; viva copies "
                                                   "only regular files inside the case folder: copy the file itself there")
    if not stat.S_ISREG(path.lstat().st_mode):
        raise ImportFormatError(case_file, where, f"data file {name!r} is not a regular file")


def copy_regular_file(src: Path, dst: Path) -> None:
    """Copy one checked data file, opening neither end through a symbolic link (``O_NOFOLLOW``) and
    never over an existing file (``O_EXCL``)."""
    import os

    nofollow = getattr(os, "O_NOFOLLOW", 0)
    fi = os.open(src, os.O_RDONLY | nofollow)
    try:
        st = os.fstat(fi)
        fo = os.open(dst, os.O_WRONLY | os.O_CREAT | os.O_EXCL | nofollow, 0o644)
        try:
            while chunk := os.read(fi, 1 << 20):
                os.write(fo, chunk)
        finally:
            os.close(fo)
        os.utime(dst, ns=(st.st_atime_ns, st.st_mtime_ns), follow_symlinks=False)
    finally:
        os.close(fi)


def write_benchmark(store: Store, name: str, source: str, drafts: list[ItemDraft], *, kb_id: int | None = None,
                    meta: dict[str, Any] | None = None, author: str = "importer") -> list[int]:
    """Store a benchmark with its items and their first rubric versions, in one transaction.

    Args:
        store: the store.
        name: the new benchmark's name (must be free).
        source: where it came from.
        drafts: validated items.
        kb_id: the knowledge base the items are grounded in.
        meta: the benchmark's meta.
        author: author of the rubric versions (``importer`` or ``kernel``).

    Returns:
        The new item ids in order.

    Raises:
        BenchError: the name is taken or invalid (nothing is written).
    """
    ids: list[int] = []
    report("write", 0, len(drafts), force=True)
    with store.transaction():
        bench_id = create_benchmark(store, name, source, kb_id=kb_id, meta=meta)
        for ord_, d in enumerate(drafts):
            report("write", ord_ + 1, len(drafts))
            item_id = add_item(
                store, bench_id, ord_, protocol=d.protocol, question=d.question, topic=d.topic, ext_id=d.ext_id,
                turns=d.turns, reference=d.reference, options=d.options, gold=d.gold, difficulty=d.difficulty,
                source_chunk_ids=d.source_chunk_ids, meta=d.meta,
            )
            create_rubric(store, item_id, d.criteria, author, d.rubric_note or f"{source} import")
            ids.append(item_id)
    return ids
