"""The Home screen's session filter: free words plus ``field:value`` and score comparisons.

Examples: ``flu running``, ``target:gpt-4o``, ``bench:medqa status:finished``, ``score>=50``,
``date:2025-11``, ``item:12``, ``policy:onnx``. Every term must match (AND); free words match any
column, case-insensitively.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

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
_SCORE = re.compile(r"^score(<=|>=|<|>|=)(\d+(?:\.\d+)?)$")
_SCORE_LIKE = re.compile(r"^score(<=|>=|<|>|=)")
_OPS: dict[str, Callable[[float, float], bool]] = {
    "<": lambda a, b: a < b, ">": lambda a, b: a > b, "<=": lambda a, b: a <= b,
    ">=": lambda a, b: a >= b, "=": lambda a, b: abs(a - b) < 1e-9,
}

Row = dict[str, Any]


class FilterError(ValueError):
    """A term the filter does not understand (the message says which and what works)."""


def _text(row: Row, column: str) -> str:
    value = row.get(column)
    return "" if value is None else str(value).lower()


def compile_filter(query: str) -> Callable[[Row], bool]:
    """Turn a filter string into a predicate over rows of ``list_sessions``.

    Raises:
        FilterError: an unknown ``field:`` name, or a score comparison without a number (``score>abc``).
    """
    tests: list[Callable[[Row], bool]] = []
    for term in query.split():
        low = term.lower()
        m = _SCORE.match(low)
        if m:
            op, bound = _OPS[m.group(1)], float(m.group(2))
            tests.append(lambda r, op=op, bound=bound: r.get("score") is not None and op(r["score"], bound))
            continue
        if _SCORE_LIKE.match(low):
            raise FilterError(f"{term!r} compares the score with something that is not a number; "
                              "write e.g. score>=50 or score<10.5")
        if ":" in low and not low.startswith(("openai:", "python:")):
            name, _, value = low.partition(":")
            if name not in _FIELDS:
                known = ", ".join(sorted(_FIELDS))
                raise FilterError(f"unknown filter field {name!r}; use one of {known}, or score>N")
            columns = _FIELDS[name]
            if name in ("id", "item", "run"):
                tests.append(lambda r, cols=columns, v=value: any(_text(r, c) == v for c in cols))
            else:
                tests.append(lambda r, cols=columns, v=value: any(v in _text(r, c) for c in cols))
            continue
        tests.append(lambda r, v=low: any(v in _text(r, c) for c in r))
    return lambda row: all(t(row) for t in tests)
