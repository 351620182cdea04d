"""The Home screen's session filter: free words plus ``field:value`` and score comparisons.

Examples: ``flu running``, ``target:gpt-4o``, ``bench:medqa status:finished``, ``score>=50``,
``date:2025-11``, ``item:12``, ``policy:onnx``. Every term must match (AND); free words match any
column, case-insensitively.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from engine.api import MAX_FILTER_CHARS, SessionFilterError, parse_filter

__all__ = ["MAX_FILTER_CHARS", "FilterError", "compile_filter"]

_FIELDS = {
    "target": ("target",),
    "bench": ("benchmark",),
    "benchmark": ("benchmark",),
    "item": ("item",),
    "topic": ("topic",),
    "status": ("status",),
    "protocol": ("protocol",),
    "policy": ("policy",),
    "kernel": ("kernel",),
    "date": ("created_at",),
    "id": ("id",),
    "run": ("run_id",),
}
_OPS: dict[str, Callable[[float, float], bool]] = {
    "<": lambda a, b: a < b, ">": lambda a, b: a > b, "<=": lambda a, b: a <= b,
    ">=": lambda a, b: a >= b, "=": lambda a, b: abs(a - b) < 1e-9,
}

Row = dict[str, Any]

FilterError = SessionFilterError
"""A term the filter does not understand (the message says which and what works)."""


def _text(row: Row, column: str) -> str:
    value = row.get(column)
    return "" if value is None else str(value).lower()


def compile_filter(query: str) -> Callable[[Row], bool]:
    """Turn a filter string into a predicate over rows of ``list_sessions``: the engine's reading of
    the filter (``parse_filter``, the same terms the store's SQL compiles from), applied to rows.

    Raises:
        FilterError: an unknown ``field:`` name, or a score comparison without a number (``score>abc``).
    """
    tests: list[Callable[[Row], bool]] = []
    for term in parse_filter(query):
        if term.kind == "score":
            op, bound = _OPS[term.op], term.bound
            tests.append(lambda r, op=op, bound=bound: r.get("score") is not None and op(r["score"], bound))
        elif term.kind == "field":
            columns = _FIELDS[term.field]
            if term.exact:
                tests.append(lambda r, cols=columns, v=term.value: any(_text(r, c) == v for c in cols))
            else:
                tests.append(lambda r, cols=columns, v=term.value: any(v in _text(r, c) for c in cols))
        else:
            tests.append(lambda r, v=term.value: any(v in _text(r, c) for c in r))
    return lambda row: all(t(row) for t in tests)
