"""viva's own JSONL format (written by ``viva bench export``) -> a benchmark, losslessly.

See docs/benchmark-format.md. Items keep every field and their current rubric, including criterion
ids; they get new global ids. TaskWeaver data files are copied from the source benchmark's folder
when it exists in this data home.
"""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

from engine.bench.export import CRITERION_FIELDS, FORMAT, ITEM_FIELDS, OPTIONAL_CRITERION_FIELDS
from engine.bench.importers.base import (
    ImportFormatError,
    ImportSummary,
    ItemDraft,
    check_regular_file,
    copy_regular_file,
    default_name,
    expected,
    read_jsonl,
    write_benchmark,
)
from engine.bench.items import benchmark_dir, data_dir_of, ensure_free_name
from engine.store import Store

_TOP = {"format", "id", "benchmark", "source", "kb", "ord", "rubric", "rubric_version", *ITEM_FIELDS}


def parse_record(file: Path, number: int, row: dict[str, Any]) -> ItemDraft:
    """Validate one exported record and turn it into an item draft.

    Raises:
        ImportFormatError: naming the line and the field.
    """
    where = f"line {number}"
    if row.get("format") != FORMAT:
        raise ImportFormatError(file, where, expected("format", repr(FORMAT), row.get("format")))
    unknown = set(row) - _TOP
    if unknown:
        raise ImportFormatError(file, where, f"unknown field(s) {', '.join(sorted(unknown))}")
    for key in ("protocol", "question"):
        if not isinstance(row.get(key), str):
            raise ImportFormatError(file, where, expected(key, "a string", row.get(key)))
    for key in ("ext_id", "reference", "difficulty"):
        if row.get(key) is not None and not isinstance(row[key], str):
            raise ImportFormatError(file, where, expected(key, "a string or null", row[key]))
    if not isinstance(row.get("topic", ""), str):
        raise ImportFormatError(file, where, expected("topic", "a string", row.get("topic")))
    if not isinstance(row.get("meta", {}), dict):
        raise ImportFormatError(file, where, expected("meta", "an object", row.get("meta")))
    ids = row.get("source_chunk_ids", [])
    if not isinstance(ids, list) or not all(isinstance(i, int) and not isinstance(i, bool) for i in ids):
        raise ImportFormatError(file, where, expected("source_chunk_ids", "a list of integers", ids))
    rubric = row.get("rubric")
    if not isinstance(rubric, list) or not rubric:
        raise ImportFormatError(file, where, expected("rubric", "a non-empty list of criteria", rubric))
    criteria = []
    for i, c in enumerate(rubric):
        if not isinstance(c, dict):
            raise ImportFormatError(file, where, expected(f"rubric[{i}]", "a criterion object", c))
        bad = set(c) - set(CRITERION_FIELDS) - set(OPTIONAL_CRITERION_FIELDS)
        if bad:
            raise ImportFormatError(file, where, f"field 'rubric[{i}]': unknown key(s) {', '.join(sorted(bad))}")
        if not c.get("cid"):
            raise ImportFormatError(file, where, expected(f"rubric[{i}].cid", "a criterion id like c1", c.get("cid")))
        criteria.append(dict(c))
    note = "imported from viva JSONL"
    rv = row.get("rubric_version")
    if isinstance(rv, dict) and rv.get("version") is not None:
        note += f" (was version {rv.get('version')} by {rv.get('author')}: {rv.get('note') or ''})".replace(": )", ")")
    return ItemDraft(
        protocol=row["protocol"], question=row["question"], criteria=criteria, topic=row.get("topic", ""),
        ext_id=row.get("ext_id"), turns=row.get("turns", []), reference=row.get("reference"),
        options=row.get("options"), gold=row.get("gold"), difficulty=row.get("difficulty"),
        source_chunk_ids=ids, meta=row.get("meta", {}), rubric_note=note,
    ).validate(file, where)


def import_jsonl(store: Store, home: str | Path, path: str | Path, name: str | None = None) -> ImportSummary:
    """Import a file written by ``viva bench export`` as a new benchmark.

    Args:
        store: the store.
        home: the data home (for the knowledge base link and TaskWeaver data files).
        path: the JSONL file.
        name: the new benchmark's name (default ``jsonl-<file stem>``).

    Returns:
        The summary.

    Raises:
        ImportFormatError: a line is malformed (nothing is written).
        BenchError: the name is taken.
    """
    file = Path(path)
    name = ensure_free_name(store, name or default_name("jsonl", file))
    rows = list(read_jsonl(file))
    drafts = [parse_record(file, number, row) for number, row in rows]
    if not drafts:
        raise ImportFormatError(file, "", "no items to import")
    warnings: list[str] = []
    sources = {row.get("source") or "jsonl" for _, row in rows}
    source = sources.pop() if len(sources) == 1 else "jsonl"
    kbs = {row.get("kb") for _, row in rows if row.get("kb")}
    kb_id = None
    if len(kbs) > 1:
        raise ImportFormatError(file, "", f"items refer to several knowledge bases ({', '.join(sorted(kbs))}); "
                                          "a benchmark has one")
    if kbs:
        kb_name = kbs.pop()
        kb_row = store.one("SELECT id FROM knowledge_bases WHERE name = ?", (kb_name,))
        if kb_row is None:
            warnings.append(f"knowledge base {kb_name!r} is not in this data home; source chunk ids are kept "
                            "but cannot be resolved")
        else:
            kb_id = kb_row["id"]
    copies: dict[Path, Path] = {}
    dest_root = benchmark_dir(home, name)
    for (number, row), d in zip(rows, drafts, strict=True):
        _check_data_paths(file, number, d.meta)
        case_dir, files = d.meta.get("case_dir"), d.meta.get("data_files") or []
        if not case_dir or not files or d.meta.get("data_dir"):
            continue
        bench_root = benchmark_dir(home, row.get("benchmark") or "_")
        src_root = bench_root / case_dir
        found = False
        for f in files:
            if f in (d.meta.get("missing_data_files") or []):
                continue
            if (src_root / f).is_file() or (src_root / f).is_symlink():
                check_regular_file(bench_root, str(Path(case_dir) / f), file, f"line {number}")  # no link, inside the folder
                copies[dest_root / case_dir / f] = src_root / f
                found = True
            else:
                warnings.append(f"line {number}: data file {f!r} of case {case_dir!r} not found in {src_root}")
        if found:
            d.meta["data_dir"] = data_dir_of(name, case_dir)
    try:
        for dst, src in copies.items():
            dst.parent.mkdir(parents=True, exist_ok=True)
            copy_regular_file(src, dst)
        ids = write_benchmark(store, name, source, drafts, kb_id=kb_id,
                              meta={"path": str(file.resolve()), "imported_from": "jsonl"})
    except BaseException:
        if copies:
            shutil.rmtree(dest_root, ignore_errors=True)
        raise
    return ImportSummary(benchmark=name, source="jsonl", path=str(file), imported=len(ids), warnings=warnings,
                         item_ids=ids, counts={"criteria": sum(len(d.criteria) for d in drafts),
                                               "data files copied": len(copies)})


def _check_data_paths(file: Path, number: int, meta: dict[str, Any]) -> None:
    """``meta.case_dir``, ``meta.data_files`` and ``meta.data_dir`` of a record name places inside the
    data home: relative paths without ``..`` (a record is data, and ``/root/.ssh`` or ``../../x`` would
    make viva copy host files into the home, or hand that folder to eval_code at run time).

    Raises:
        ImportFormatError: naming the line and the field.
    """
    checks = [("meta.case_dir", meta.get("case_dir")), ("meta.data_dir", meta.get("data_dir"))]
    files = meta.get("data_files")
    if files is not None and not isinstance(files, list):
        raise ImportFormatError(file, f"line {number}", expected("meta.data_files", "a list of file names", files))
    checks += [(f"meta.data_files[{i}]", f) for i, f in enumerate(files or [])]
    for field_name, value in checks:
        if value is None:
            continue
        if not isinstance(value, str) or not value.strip() or Path(value).is_absolute() or ".." in Path(value).parts:
            raise ImportFormatError(file, f"line {number}", expected(
                field_name, "a relative path inside the data home (no leading / and no ..)", value))
