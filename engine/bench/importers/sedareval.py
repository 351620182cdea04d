"""SedarEval JSONL -> ``rubric`` items with self-adaptive rubrics.

Each row: ``id``, ``query``, optional ``answer`` (a sample model answer, not gold) and ``meta`` with
``category`` (1-3 levels), ``reference``, ``score_standard`` (compact rubric), ``id_ex``,
``is_complete``. The full format also carries ``auto_prompt{system_prompt, prompt}`` (top level or
in ``meta``), the judge prompt whose ``{response}`` placeholder marks where the answer goes; when a
row has no ``score_standard`` the rubric is read from that prompt's 【评分标准】 section.

Multi-turn rows hold every turn in ``query`` as ``Q1: ...\\nQ2: ...``; they become items with
``turns`` (text before ``Q1`` is kept as ``meta.preamble``). Rows with ``is_complete < 0`` are
skipped and counted. A ``NaN`` reference (an empty cell in the upstream export) is imported as no
reference, with a warning.
"""

from __future__ import annotations

import math
import re
from pathlib import Path
from typing import Any

from engine.bench.importers.base import (
    ImportFormatError,
    ImportSummary,
    ItemDraft,
    Skips,
    default_name,
    expected,
    read_jsonl,
    write_benchmark,
)
from engine.bench.items import ensure_free_name
from engine.bench.score_standard import FULL_SCORE, parse_score_standard
from engine.store import Store

_TURN_RE = re.compile(r"(?m)^\s*Q(\d+)\s*[:：;；]\s*")
_CJK_RE = re.compile(r"[\u4e00-\u9fff]")
_STANDARD_SECTION_RE = re.compile(r"【评分标准】\s*\n(?P<body>.*?)(?=\n【|\Z)", re.S)
_KNOWN_META = {"category", "reference", "score_standard", "id_ex", "is_complete", "auto_prompt"}


def split_turns(query: str) -> tuple[list[str], str]:
    """Split a multi-turn query (``Q1: ...\\nQ2: ...``) into its user turns.

    A query is multi-turn when its ``Qn:`` (or ``Qn：``) line markers run 1, 2, 3... with at least
    two turns. Text before ``Q1`` is a preamble for whoever runs the test (for example
    "（提问时请务必开启一轮新对话）", "start a new conversation"); it is returned apart, not as a turn.

    Returns:
        The turns ([] for a single-turn query) and the preamble ("" if none).
    """
    marks = list(_TURN_RE.finditer(query))
    if len(marks) < 2 or [int(m.group(1)) for m in marks] != list(range(1, len(marks) + 1)):
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


def _auto_prompt(row: dict[str, Any], meta: dict[str, Any], file: Path, where: str) -> tuple[str | None, str | None]:
    ap = row.get("auto_prompt", meta.get("auto_prompt"))
    if ap is None:
        return None, None
    if not isinstance(ap, dict):
        raise ImportFormatError(file, where, expected("auto_prompt", "an object with system_prompt and prompt", ap))
    prompt, system = ap.get("prompt"), ap.get("system_prompt")
    if not isinstance(prompt, str) or "{response}" not in prompt:
        raise ImportFormatError(file, where, expected(
            "auto_prompt.prompt", "a string holding the {response} placeholder", prompt))
    if system is not None and not isinstance(system, str):
        raise ImportFormatError(file, where, expected("auto_prompt.system_prompt", "a string", system))
    return prompt, system


def parse_row(file: Path, number: int, row: dict[str, Any], skips: Skips,
              warnings: list[str]) -> ItemDraft | None:
    """Validate one SedarEval row and turn it into an item draft (None when skipped).

    Raises:
        ImportFormatError: naming the line and the field.
    """
    where = f"line {number}"
    query = row.get("query")
    if not isinstance(query, str) or not query.strip():
        raise ImportFormatError(file, where, expected("query", "a non-empty string", query))
    meta = row.get("meta")
    if not isinstance(meta, dict):
        raise ImportFormatError(file, where, expected("meta", "an object", meta))
    complete = meta.get("is_complete", row.get("is_complete"))
    if complete is not None:
        if isinstance(complete, bool) or not isinstance(complete, int | float):
            raise ImportFormatError(file, where, expected("meta.is_complete", "a number", complete))
        if complete < 0:
            skips.add("is_complete < 0")
            return None
    category = meta.get("category", [])
    if isinstance(category, str):
        category = [category]
    if not isinstance(category, list) or not all(isinstance(c, str) for c in category) or len(category) > 3:
        raise ImportFormatError(file, where, expected("meta.category", "a list of up to 3 strings", category))
    reference = meta.get("reference")
    if isinstance(reference, float) and math.isnan(reference):
        warnings.append(f"{where}: meta.reference is NaN (an empty cell in the source); imported without one")
        reference = None
    if reference is not None and not isinstance(reference, str):
        raise ImportFormatError(file, where, expected("meta.reference", "a string", reference))
    prompt, system = _auto_prompt(row, meta, file, where)
    standard = meta.get("score_standard")
    standard_source = "score_standard"
    if standard is None and prompt is not None:
        standard, standard_source = standard_from_prompt(prompt), "auto_prompt"
    if not isinstance(standard, str) or not standard.strip():
        raise ImportFormatError(file, where, expected(
            "meta.score_standard", "a non-empty rubric string (or an auto_prompt with a 【评分标准】 section)",
            meta.get("score_standard")))
    sample = row.get("answer")
    if sample is not None and not isinstance(sample, str):
        raise ImportFormatError(file, where, expected("answer", "a string (a sample answer)", sample))
    ext = row.get("id", meta.get("id_ex"))
    parsed = parse_score_standard(standard)
    turns, preamble = split_turns(query)
    item_meta: dict[str, Any] = {
        "category": category,
        "score_standard": standard,
        "score_standard_source": standard_source,
        "rubric_notes": parsed.notes,
        "rubric_check": {"points_total": parsed.total, "expected_total": FULL_SCORE,
                         "consistent": parsed.consistent, "fallback_lines": parsed.fallback_lines},
        "language": "zh" if _CJK_RE.search(query) else "en",
        "max_score": FULL_SCORE,
        "line": number,
    }
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
    return ItemDraft(
        protocol="rubric", question=query.strip(), turns=turns, topic=category[0] if category else "",
        ext_id=None if ext is None else str(ext), reference=reference, criteria=list(parsed.criteria),
        meta=item_meta, rubric_note="parsed from SedarEval score_standard",
    ).validate(file, where)


def import_sedareval(store: Store, path: str | Path, name: str | None = None) -> ImportSummary:
    """Import a SedarEval JSONL file as a benchmark of ``rubric`` items.

    Args:
        store: the store.
        path: the JSONL file.
        name: the benchmark name (default ``sedareval-<file stem>``).

    Returns:
        The summary: items imported, rows skipped by reason, multi-turn items, criteria, and the
        rubrics whose parsed points do not total 5 (listed as warnings with their lines).

    Raises:
        ImportFormatError: a row is malformed (nothing is written).
        BenchError: the name is taken.
    """
    file = Path(path)
    name = ensure_free_name(store, name or default_name("sedareval", file))
    skips = Skips()
    drafts: list[ItemDraft] = []
    warnings: list[str] = []
    for number, row in read_jsonl(file):
        draft = parse_row(file, number, row, skips, warnings)
        if draft is None:
            continue
        check = draft.meta["rubric_check"]
        if not check["consistent"]:
            warnings.append(f"line {number}: rubric points total {check['points_total']:g}, not 5 "
                            "(conditional or alternative scoring; raw text kept on each criterion)")
        drafts.append(draft)
    if not drafts:
        raise ImportFormatError(file, "", "no rows to import" + (f" ({sum(skips.values())} skipped)" if skips else ""))
    ids = write_benchmark(store, name, "sedareval", drafts, meta={"path": str(file.resolve())})
    return ImportSummary(
        benchmark=name, source="sedareval", path=str(file), imported=len(ids), skipped=dict(skips),
        warnings=warnings, item_ids=ids,
        counts={
            "multi-turn items": sum(1 for d in drafts if d.turns),
            "criteria": sum(len(d.criteria) for d in drafts),
            "deductions": sum(1 for d in drafts for c in d.criteria if c.kind == "deduction"),
            "rubrics totalling 5": sum(1 for d in drafts if d.meta["rubric_check"]["consistent"]),
            "lines kept unparsed": sum(d.meta["rubric_check"]["fallback_lines"] for d in drafts),
            "with judge prompt": sum(1 for d in drafts if "judge_prompt" in d.meta),
        },
    )
