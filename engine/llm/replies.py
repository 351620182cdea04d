"""A model's reply read as JSON: the reply's own objects, never one the candidate wrote.

:func:`extract_json` takes the *last* top-level JSON object of a reply that lies outside any quoted
candidate text: a span between the prompt's quote markers, echoed back, and any object that also appears
in one of the quoted texts (the candidate's answer, a transcript) are quotation, so a judge that quotes a
forged verdict, fenced or not, before or after its own, never has the forged one accepted. A reply whose
JSON nests deeper than :data:`MAX_JSON_DEPTH` is one line of problem, never a traceback.
:meth:`engine.llm.LLMClient.json_result` validates what this finds and asks for repairs.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from pydantic import ValidationError

from engine.redact import redact

MAX_JSON_DEPTH = 64
"""Deeper JSON in a reply is refused with a one-line problem (no verdict object nests more than 4)."""

_DECODER = json.JSONDecoder(strict=False)
"""Lenient about raw control characters inside strings (a grammar-constrained reply held a raw newline)."""


def _too_deep(text: str, start: int, limit: int = MAX_JSON_DEPTH) -> bool:
    """Whether the brackets opened from ``start`` nest deeper than ``limit`` before they close (a quick
    scan that ignores brackets inside strings), so a 200,000-deep reply is refused before it is parsed."""
    depth = 0
    in_string = escaped = False
    for ch in text[start:]:
        if in_string:
            if escaped:
                escaped = False
            elif ch == "\\":
                escaped = True
            elif ch == '"':
                in_string = False
        elif ch == '"':
            in_string = True
        elif ch in "[{":
            depth += 1
            if depth > limit:
                return True
        elif ch in "]}":
            depth -= 1
            if depth <= 0:
                return False
    return False


def _objects(text: str, nested: bool = False) -> list[tuple[int, int, Any]]:
    """``(start, end, value)`` of each JSON object in ``text``: the top-level ones (scanning on after each
    object), or with ``nested`` every object that starts at any ``{``."""
    found: list[tuple[int, int, Any]] = []
    pos = 0
    while True:
        start = text.find("{", pos)
        if start < 0:
            return found
        if _too_deep(text, start):
            raise ValueError(f"the reply's JSON is nested deeper than {MAX_JSON_DEPTH} levels")
        try:
            value, end = _DECODER.raw_decode(text, start)
        except (json.JSONDecodeError, RecursionError):
            pos = start + 1
            continue
        if isinstance(value, dict):
            found.append((start, end, value))
        pos = start + 1 if nested else end


def canonical(value: Any) -> str:
    """A JSON value as one canonical string (keys sorted, no spaces): equal values, equal strings."""
    return json.dumps(value, sort_keys=True, ensure_ascii=False, separators=(",", ":"))


def _without_quotes(text: str, markers: tuple[str, str]) -> str:
    """``text`` without every span from an opening marker to its closing marker (or to the end)."""
    start, end = markers
    out, pos = [], 0
    while True:
        i = text.find(start, pos)
        if i < 0:
            out.append(text[pos:])
            return "".join(out)
        out.append(text[pos:i])
        j = text.find(end, i + len(start))
        if j < 0:
            return "".join(out)
        pos = j + len(end)


def extract_json_all(text: str, *, quoted: Sequence[str] = (), markers: tuple[str, str] | None = None) -> list[Any]:
    """Every JSON object of a model reply that is the reply's own (see :func:`extract_json`), in order;
    a reply that is a JSON array as a whole is ``[array]``.

    Raises:
        ValueError: no JSON object outside the quoted text, or JSON nested too deeply.
    """
    stripped = text.strip()
    if markers:
        stripped = _without_quotes(stripped, markers).strip()
    forged: set[str] = set()
    spans: list[str] = []
    for q in quoted:
        if q:
            try:
                forged.update(canonical(v) for _, _, v in _objects(q, nested=True))
            except ValueError:
                pass  # a candidate's own deep JSON is never the reply's
            spans.append(" ".join(q.split()))
    whole = None
    if stripped[:1] == "[" and not _too_deep(stripped, 0):
        try:
            whole = _DECODER.decode(stripped)
        except (json.JSONDecodeError, RecursionError):
            whole = None
    if isinstance(whole, list):
        return [whole]
    own = []
    found = _objects(stripped)
    for start, end, value in found:
        raw = " ".join(stripped[start:end].split())
        if canonical(value) in forged or any(raw in span for span in spans):
            continue
        own.append(value)
    if own:
        return own
    if forged and found:
        raise ValueError("the only JSON in the reply is quoted from the candidate's answer; "
                         "give your own verdict as a JSON object")
    raise ValueError(f"not valid JSON: {redact(stripped)[:120]!r}")


def extract_json(text: str, *, quoted: Sequence[str] = (), markers: tuple[str, str] | None = None) -> Any:
    """The JSON value of a model reply: the last top-level JSON object that is not quoted candidate text.

    A reply may be bare JSON, fenced, or surrounded by prose. What counts as quotation and is never the
    reply's own object: any span between ``markers`` (the prompt's quote markers, echoed back), and any
    object that also appears in one of the ``quoted`` texts (the candidate wrote it, so a judge that
    quotes it, fenced or not, before or after its own verdict, does not get it accepted). A reply that
    is a JSON array as a whole is returned as such.

    Raises:
        ValueError: no JSON object outside the quoted text, or JSON nested too deeply.
    """
    return extract_json_all(text, quoted=quoted, markers=markers)[-1]


def compact_error(exc: Exception) -> str:
    """Why a reply's value was refused, in one line: a validation error's first five problems, else the message."""
    if isinstance(exc, ValidationError):
        parts = [f"{'.'.join(str(p) for p in e['loc']) or 'value'}: {e['msg']}" for e in exc.errors()[:5]]
        return "; ".join(parts)
    return str(exc)

