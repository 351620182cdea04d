"""MedQA-style JSONL -> ``graded`` items (JudgeAgent's base questions).

Each row: ``question``; ``options`` (``{"A": "...", ...}`` or a list, lettered A, B, C...);
``answer_idx`` (the gold letter) and/or ``answer`` (the gold option's text); optional
``difficulty`` (easy / medium / hard), ``topic``, ``id``/``realidx``, ``meta_info``,
``metamap_phrases``. A row without options is a short-answer item whose gold is ``answer``.
"""

from __future__ import annotations

import string
from pathlib import Path
from typing import Any

from engine.bench.importers.base import (
    ImportFormatError,
    ImportSummary,
    ItemDraft,
    default_name,
    expected,
    read_jsonl,
    write_benchmark,
)
from engine.bench.items import ensure_free_name
from engine.bench.model import DIFFICULTIES, Criterion
from engine.store import Store

_KNOWN = {"question", "options", "answer", "answer_idx", "difficulty", "topic", "id", "realidx", "meta_info",
          "metamap_phrases"}


def _norm(text: str) -> str:
    return " ".join(text.split()).casefold()


def _options(raw: Any, file: Path, where: str) -> dict[str, str] | None:
    if raw is None:
        return None
    if isinstance(raw, list):
        if len(raw) > 26:
            raise ImportFormatError(file, where, expected("options", "at most 26 options", f"{len(raw)} options"))
        raw = dict(zip(string.ascii_uppercase, raw, strict=False))
    if not isinstance(raw, dict) or not raw:
        raise ImportFormatError(file, where, expected("options", "a non-empty mapping of letter to text", raw))
    out: dict[str, str] = {}
    for key, value in raw.items():
        if not isinstance(value, str) or not value.strip():
            raise ImportFormatError(file, where, expected(f"options.{key}", "a non-empty string", value))
        out[str(key).strip()] = value.strip()
    return out


def parse_row(file: Path, number: int, row: dict[str, Any]) -> ItemDraft:
    """Validate one row and turn it into a ``graded`` item draft.

    Raises:
        ImportFormatError: naming the line and the field.
    """
    where = f"line {number}"
    question = row.get("question")
    if not isinstance(question, str) or not question.strip():
        raise ImportFormatError(file, where, expected("question", "a non-empty string", question))
    options = _options(row.get("options"), file, where)
    answer, idx = row.get("answer"), row.get("answer_idx")
    if answer is not None and not isinstance(answer, str):
        raise ImportFormatError(file, where, expected("answer", "a string", answer))
    if idx is not None and not isinstance(idx, str):
        raise ImportFormatError(file, where, expected("answer_idx", "an option letter", idx))
    if options is None:
        if not answer or not answer.strip():
            raise ImportFormatError(file, where, expected("answer", "the gold answer (no options given)", answer))
        gold, reference = answer.strip(), answer.strip()
        criterion = Criterion.new(f"Answers: {reference}", answers=[reference])
    else:
        if idx is None and answer is not None:
            matches = [k for k, v in options.items() if _norm(v) == _norm(answer)]
            if len(matches) != 1:
                raise ImportFormatError(file, where, expected(
                    "answer", f"the text of exactly one option ({', '.join(options)})", answer))
            idx = matches[0]
        if idx is None:
            raise ImportFormatError(file, where, expected("answer_idx", "the gold option letter", None))
        idx = idx.strip()
        if idx not in options:
            raise ImportFormatError(file, where, expected("answer_idx", f"one of {', '.join(options)}", idx))
        if answer is not None and _norm(answer) != _norm(options[idx]):
            raise ImportFormatError(file, where, expected(
                "answer", f"the text of option {idx} ({options[idx]!r})", answer))
        gold, reference = idx, options[idx]
        criterion = Criterion.new(f"Chooses option {idx}: {options[idx]}", answers=[idx])
    difficulty = row.get("difficulty")
    if isinstance(difficulty, str):
        difficulty = difficulty.strip().lower() or None
    if difficulty is not None and difficulty not in DIFFICULTIES:
        raise ImportFormatError(file, where, expected("difficulty", f"one of {', '.join(DIFFICULTIES)} or null",
                                                      row.get("difficulty")))
    topic = row.get("topic", row.get("meta_info")) or ""
    if not isinstance(topic, str):
        raise ImportFormatError(file, where, expected("topic", "a string", topic))
    ext = row.get("id", row.get("realidx"))
    meta: dict[str, Any] = {"line": number}
    for key in ("realidx", "meta_info", "metamap_phrases"):
        if key in row:
            meta[key] = row[key]
    extra = {k: v for k, v in row.items() if k not in _KNOWN}
    if extra:
        meta["extra"] = extra
    return ItemDraft(
        protocol="graded", question=question.strip(), options=options, gold=gold, reference=reference,
        difficulty=difficulty, topic=topic, ext_id=None if ext is None else str(ext), criteria=[criterion],
        meta=meta, rubric_note="gold answer",
    ).validate(file, where)


def import_medqa(store: Store, path: str | Path, name: str | None = None) -> ImportSummary:
    """Import MedQA-style JSONL as a benchmark of ``graded`` items.

    Args:
        store: the store.
        path: the JSONL file.
        name: the benchmark name (default ``medqa-<file stem>``).

    Returns:
        The summary (items per difficulty label and per topic).

    Raises:
        ImportFormatError: a row is malformed (nothing is written).
        BenchError: the name is taken.
    """
    file = Path(path)
    name = ensure_free_name(store, name or default_name("medqa", file))
    drafts = [parse_row(file, number, row) for number, row in read_jsonl(file)]
    if not drafts:
        raise ImportFormatError(file, "", "no rows to import")
    ids = write_benchmark(store, name, "medqa", drafts, meta={"path": str(file.resolve())})
    by_diff: dict[str, int] = {}
    by_topic: dict[str, int] = {}
    for d in drafts:
        by_diff[d.difficulty or "unlabelled"] = by_diff.get(d.difficulty or "unlabelled", 0) + 1
        by_topic[d.topic or "(none)"] = by_topic.get(d.topic or "(none)", 0) + 1
    return ImportSummary(
        benchmark=name, source="medqa", path=str(file), imported=len(ids), item_ids=ids,
        counts={"multiple choice": sum(1 for d in drafts if d.options), "difficulty": by_diff, "topics": by_topic},
    )
