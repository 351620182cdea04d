"""SedarEval JSONL -> ``rubric`` items with self-adaptive rubrics.

Each row: ``id``, ``query``, optional ``answer`` (a sample model answer, not gold) and ``meta`` with
``category`` (a list of levels, any length), ``reference``, ``score_standard`` (compact rubric),
``id_ex``, ``is_complete``. The full format also carries ``auto_prompt{system_prompt, prompt}`` (top
level or in ``meta``), the judge prompt whose ``{response}`` placeholder marks where the answer goes;
when a row's ``score_standard`` is missing, empty or NaN the rubric is read from that prompt's
【评分标准】 section.

Multi-turn rows hold every turn in ``query`` as ``Q1: ...\nQ2: ...``; they become items with
``turns`` (one user message per turn; text before ``Q1`` is kept as ``meta.preamble``).

By default the importer imports what is valid and reports every row it skips with its line and
reason (a line that is not UTF-8 or not JSON, a row with no rubric, a field of the wrong type;
rows with ``is_complete < 0`` are skipped as the dataset marks them incomplete). With
``strict=True`` the first bad line stops the import with an error naming the file and the line, and
nothing is written. Upstream exports write empty cells as ``NaN``: a NaN category level is dropped,
a NaN reference is imported as no reference (with a warning), a NaN ``score_standard`` counts as
missing.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from engine.bench.importers.base import (
    ImportFormatError,
    ImportSummary,
    ItemDraft,
    SkippedRow,
    Skips,
    default_name,
    expected,
    read_bytes,
    report,
    write_benchmark,
)
from engine.bench.items import ensure_free_name
from engine.bench.score_standard import FULL_SCORE, parse_score_standard
from engine.safeload import JSONDepthError, loads_json
from engine.store import Store
from engine.text.cjk import HAN

_TURN_RE = re.compile(r"(?:^|(?<=[\s。？！?!；;]))[QqＱｑ]\s*(?P<n>[0-9０-９]+)\s*[:：;；.．、]\s*", re.M)
_CJK_RE = re.compile(f"[{HAN}]")
_STANDARD_SECTION_RE = re.compile(r"【评分标准】\s*\n(?P<body>.*?)(?=\n【|\Z)", re.S)
_KNOWN_META = {"category", "reference", "score_standard", "id_ex", "is_complete", "auto_prompt"}
_BOM = b"\xef\xbb\xbf"


class RowError(ImportFormatError):
    """A row that cannot be imported; ``kind`` is the short reason it is counted under when skipped."""

    def __init__(self, file: str | Path, where: str, message: str, kind: str):
        """As :class:`ImportFormatError`, plus the short ``kind`` (``no rubric``, ``bad query``...)."""
        super().__init__(file, where, message)
        self.kind = kind


@dataclass
class SedarEvalSummary(ImportSummary):
    """An :class:`ImportSummary` with the distribution of the imported rubrics' totals.

    Attributes:
        rubric_totals: parsed points total (formatted ``5``, ``6``, ``2.5``) -> how many items, in
            increasing total; SedarEval rubrics are written to total 5.
    """

    rubric_totals: dict[str, int] = field(default_factory=dict)

    @property
    def totalling_full(self) -> int:
        """How many imported rubrics total SedarEval's full score (5)."""
        return self.rubric_totals.get(f"{FULL_SCORE:g}", 0)

    def lines(self) -> list[str]:
        """The base report plus one line on the rubric totals."""
        others = ", ".join(f"{total} points: {n}" for total, n in self.rubric_totals.items()
                           if total != f"{FULL_SCORE:g}")
        return [*super().lines(), f"rubric totals: {self.totalling_full} of {self.imported} sum to "
                                  f"{FULL_SCORE:g}" + (f"; others: {others}" if others else "")]


def _nan(value: Any) -> bool:
    return isinstance(value, float) and math.isnan(value)


def split_turns(query: str) -> tuple[list[str], str]:
    """Split a multi-turn query (``Q1: ...\\nQ2: ...``) into its user turns.

    A query is multi-turn when its ``Qn`` markers (``Q``/``q``/``Ｑ``, then a number and one of
    ``:：;；.．、``, at the start of a line or after whitespace or an end-of-sentence mark) run 1, 2,
    3... with at least two turns, each non-empty. Text before ``Q1`` is a preamble for whoever runs
    the test (for example "（提问时请务必开启一轮新对话）", "start a new conversation"); it is returned
    apart, not as a turn.

    Returns:
        The turns ([] for a single-turn query) and the preamble ("" if none).
    """
    marks = list(_TURN_RE.finditer(query))
    if len(marks) < 2 or [int(m.group("n")) for m in marks] != list(range(1, len(marks) + 1)):
        return [], ""
    turns = []
    for i, m in enumerate(marks):
        end = marks[i + 1].start() if i + 1 < len(marks) else len(query)
        turns.append(query[m.end():end].strip())
    if not all(turns):
        return [], ""
    return turns, query[:marks[0].start()].strip()


def standard_from_prompt(prompt: str) -> str | None:
    """The 【评分标准】 lines of a SedarEval judge prompt that state points (``①+2分:...``)."""
    m = _STANDARD_SECTION_RE.search(prompt)
    if not m:
        return None
    lines = [ln.strip() for ln in m.group("body").splitlines()
             if re.search(r"[+＋\-－]\s*\d", ln) and not ln.strip().startswith("共")]
    return "\n".join(lines) or None


def read_rows(file: Path) -> Iterator[tuple[int, dict[str, Any] | None, SkippedRow | None]]:
    """Yield ``(line, row, None)`` for each JSON object line, ``(line, None, skip)`` for a bad line.

    Lines are split at ``\\n`` only (a ``\\r`` before it and a UTF-8 BOM at the start are dropped);
    blank lines are passed over. A line that is not UTF-8, not JSON, or not a JSON object is
    reported, not raised, so one bad line does not hide the rest.

    Raises:
        ImportFormatError: the file is missing, a folder or unreadable.
    """
    data = read_bytes(file, lines=True)  # bounded: a regular file, the size and line limits
    if data.startswith(_BOM):
        data = data[len(_BOM):]
    raws = data.split(b"\n")
    report("read", 0, len(raws), force=True)
    for number, raw in enumerate(raws, start=1):
        report("read", number, len(raws))
        raw = raw.rstrip(b"\r")
        if not raw.strip():
            continue
        try:
            line = raw.decode("utf-8")
        except UnicodeDecodeError as exc:
            yield number, None, SkippedRow(number, "not UTF-8", f"not UTF-8 text (byte {exc.start + 1} of the "
                                                                "line); re-save the file as UTF-8")
            continue
        try:
            row = loads_json(line)  # nesting depth limited (engine.safeload)
        except JSONDepthError as exc:
            yield number, None, SkippedRow(number, "nested too deep", str(exc))
            continue
        except json.JSONDecodeError as exc:
            yield number, None, SkippedRow(number, "broken JSON", f"not valid JSON ({exc.msg} at column {exc.colno})")
            continue
        if not isinstance(row, dict):
            yield number, None, SkippedRow(number, "not a JSON object",
                                           f"expected a JSON object, got {type(row).__name__}")
            continue
        yield number, row, None


def _bad(file: Path, where: str, field_name: str, what: str, got: Any) -> RowError:
    return RowError(file, where, expected(field_name, what, got), f"bad {field_name}")


def _auto_prompt(row: dict[str, Any], meta: dict[str, Any], file: Path, where: str) -> tuple[str | None, str | None]:
    ap = row.get("auto_prompt", meta.get("auto_prompt"))
    if ap is None or _nan(ap):
        return None, None
    if not isinstance(ap, dict):
        raise _bad(file, where, "auto_prompt", "an object with system_prompt and prompt", ap)
    prompt, system = ap.get("prompt"), ap.get("system_prompt")
    if not isinstance(prompt, str) or "{response}" not in prompt:
        raise _bad(file, where, "auto_prompt.prompt", "a string holding the {response} placeholder", prompt)
    if system is not None and not isinstance(system, str):
        raise _bad(file, where, "auto_prompt.system_prompt", "a string", system)
    return prompt, system


def _category(value: Any, file: Path, where: str) -> tuple[list[str], int]:
    """The category levels (any number) with NaN/empty levels dropped, and how many were dropped."""
    if value is None or _nan(value):
        return [], 0
    if isinstance(value, str):
        value = [value]
    if not isinstance(value, list):
        raise _bad(file, where, "meta.category", "a list of strings", value)
    levels, dropped = [], 0
    for level in value:
        if level is None or _nan(level) or (isinstance(level, str) and not level.strip()):
            dropped += 1
        elif isinstance(level, str):
            levels.append(level.strip())
        else:
            raise _bad(file, where, "meta.category", "a list of strings (NaN levels are dropped)", value)
    return levels, dropped


def parse_row(file: Path, number: int, row: dict[str, Any], skips: Skips,
              warnings: list[str]) -> ItemDraft | None:
    """Validate one SedarEval row and turn it into an item draft (None when ``is_complete < 0``).

    Raises:
        RowError: naming the line and the field (an :class:`ImportFormatError`).
    """
    where = f"line {number}"
    query = row.get("query")
    if not isinstance(query, str) or not query.strip():
        raise _bad(file, where, "query", "a non-empty string", query)
    meta = row.get("meta")
    if not isinstance(meta, dict):
        raise _bad(file, where, "meta", "an object", meta)
    complete = meta.get("is_complete", row.get("is_complete"))
    if complete is not None and not _nan(complete):
        if isinstance(complete, bool) or not isinstance(complete, int | float):
            raise _bad(file, where, "meta.is_complete", "a number", complete)
        if complete < 0:
            skips.add("is_complete < 0")
            return None
    category, dropped = _category(meta.get("category"), file, where)
    reference = meta.get("reference")
    if _nan(reference):
        warnings.append(f"{where}: meta.reference is NaN (an empty cell in the source); imported without one")
        reference = None
    if reference is not None and not isinstance(reference, str):
        raise _bad(file, where, "meta.reference", "a string", reference)
    prompt, system = _auto_prompt(row, meta, file, where)
    given = meta.get("score_standard")
    standard, standard_source = given, "score_standard"
    if standard is None or _nan(standard) or (isinstance(standard, str) and not standard.strip()):
        standard = standard_from_prompt(prompt) if prompt is not None else None
        standard_source = "auto_prompt"
        if standard is None:
            state = "missing" if given is None else "NaN" if _nan(given) else "empty"
            raise RowError(file, where, f"field 'meta.score_standard' is {state} and there is no auto_prompt "
                           "with a 【评分标准】 section to read the rubric from; add a score_standard",
                           "no rubric")
    if not isinstance(standard, str):
        raise _bad(file, where, "meta.score_standard", "a rubric string", standard)
    sample = row.get("answer")
    if _nan(sample):
        sample = None
    if sample is not None and not isinstance(sample, str):
        raise _bad(file, where, "answer", "a string (a sample answer)", sample)
    ext = row.get("id", meta.get("id_ex"))
    parsed = parse_score_standard(standard)
    turns, preamble = split_turns(query)
    item_meta: dict[str, Any] = {
        "category": category,
        "score_standard": standard,
        "score_standard_source": standard_source,
        "rubric_notes": parsed.notes,
        "rubric_check": {"points_total": parsed.total, "expected_total": FULL_SCORE,
                         "consistent": parsed.consistent, "fallback_lines": parsed.fallback_lines,
                         "alternatives": parsed.alternatives, "per_unit": parsed.per_unit},
        "language": "zh" if _CJK_RE.search(query) else "en",
        "max_score": FULL_SCORE,
        "line": number,
    }
    if dropped:
        item_meta["category_dropped_levels"] = dropped
    for key in ("id_ex", "is_complete"):
        if key in meta:
            item_meta[key] = meta[key]
    if preamble:
        item_meta["preamble"] = preamble
    if prompt is not None:
        item_meta["judge_prompt"] = prompt
        item_meta["system_prompt"] = system
    if sample is not None:
        item_meta["sample_answer"] = sample
    extra = {k: v for k, v in meta.items() if k not in _KNOWN_META}
    extra.update({k: v for k, v in row.items() if k not in {"id", "query", "answer", "meta", "auto_prompt"}})
    if extra:
        item_meta["extra"] = extra
    draft = ItemDraft(
        protocol="rubric", question=query.strip(), turns=turns, topic=category[0] if category else "",
        ext_id=None if ext is None or _nan(ext) else str(ext), reference=reference,
        criteria=list(parsed.criteria), meta=item_meta, rubric_note="parsed from SedarEval score_standard",
    )
    try:
        return draft.validate(file, where)
    except ImportFormatError as exc:
        raise RowError(file, where, exc.message, "invalid item") from None


def import_sedareval(store: Store, path: str | Path, name: str | None = None, *,
                     strict: bool = False) -> SedarEvalSummary:
    """Import a SedarEval JSONL file as a benchmark of ``rubric`` items.

    Args:
        store: the store.
        path: the JSONL file.
        name: the benchmark name (default ``sedareval-<file stem>``).
        strict: all or nothing: the first bad line raises (nothing is written). Otherwise bad lines
            are skipped and each is reported in ``skipped_rows`` with its line and reason.

    Returns:
        The summary: items imported, rows skipped by kind (``skipped``) and one by one
        (``skipped_rows``), the distribution of the rubrics' totals (``rubric_totals``), counts
        (multi-turn items, criteria, ...), and warnings (NaN references, rubrics whose points do not
        total 5, each with its line).

    Raises:
        ImportFormatError: the file cannot be read; with ``strict``, a bad line (naming the file and
            the line); without, no row at all could be imported.
        BenchError: the name is taken.
    """
    file = Path(path)
    name = ensure_free_name(store, name or default_name("sedareval", file))
    skips = Skips()
    skipped_rows: list[SkippedRow] = []
    drafts: list[ItemDraft] = []
    warnings: list[str] = []
    for number, row, bad in read_rows(file):
        if bad is not None:
            if strict:
                raise ImportFormatError(file, f"line {number}", bad.reason)
            skips.add(bad.kind)
            skipped_rows.append(bad)
            continue
        assert row is not None
        try:
            draft = parse_row(file, number, row, skips, warnings)
        except RowError as exc:
            if strict:
                raise
            skips.add(exc.kind)
            skipped_rows.append(SkippedRow(number, exc.kind, exc.message))
            continue
        if draft is None:
            skipped_rows.append(SkippedRow(number, "is_complete < 0", "meta.is_complete < 0 (the dataset marks "
                                                                      "the row incomplete)"))
            continue
        check = draft.meta["rubric_check"]
        if not check["consistent"]:
            warnings.append(f"line {number}: rubric points total {check['points_total']:g}, not 5 "
                            "(conditional or alternative scoring; raw text kept on each criterion)")
        drafts.append(draft)
    if not drafts:
        first = f"; line {skipped_rows[0].line}: {skipped_rows[0].reason}" if skipped_rows else ""
        raise ImportFormatError(file, "", f"no rows to import ({len(skipped_rows)} skipped{first})")
    ids = write_benchmark(store, name, "sedareval", drafts, meta={"path": str(file.resolve())})
    totals: dict[float, int] = {}
    for d in drafts:
        t = round(float(d.meta["rubric_check"]["points_total"]), 6)
        totals[t] = totals.get(t, 0) + 1
    return SedarEvalSummary(
        benchmark=name, source="sedareval", path=str(file), imported=len(ids), skipped=dict(skips),
        warnings=warnings, item_ids=ids, skipped_rows=skipped_rows,
        rubric_totals={f"{t:g}": n for t, n in sorted(totals.items())},
        counts={
            "multi-turn items": sum(1 for d in drafts if d.turns),
            "criteria": sum(len(d.criteria) for d in drafts),
            "deductions": sum(1 for d in drafts for c in d.criteria if c.kind == "deduction"),
            "rubrics totalling 5": sum(1 for d in drafts if d.meta["rubric_check"]["consistent"]),
            "lines kept unparsed": sum(d.meta["rubric_check"]["fallback_lines"] for d in drafts),
            "with judge prompt": sum(1 for d in drafts if "judge_prompt" in d.meta),
            "rubrics read from auto_prompt": sum(1 for d in drafts if d.meta["score_standard_source"] == "auto_prompt"),
            "categories with NaN/empty levels dropped": sum(1 for d in drafts if "category_dropped_levels" in d.meta),
        },
    )
