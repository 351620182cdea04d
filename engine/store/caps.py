"""How much text the store keeps: caps per column, with a marker where a text was cut.

A runaway endpoint (a 20 MB judge rationale, an endless answer) must not fill the data home: every
text is cut at its column's cap and ends with :data:`TRUNCATED_MARK` naming how many characters were
not stored. Applied on the store's write path (:mod:`engine.store.db`, :mod:`engine.store.texts`).
"""

from __future__ import annotations

from typing import Any

MAX_ANSWER_CHARS = 100_000
"""Longest answer (and question) stored in ``turns``; the rest is cut and marked (:func:`cap_text`)."""
MAX_RATIONALE_CHARS = 20_000
"""Longest judge rationale stored in ``verdicts``."""
MAX_EVENT_STRING_CHARS = 100_000
"""Longest string stored inside an event's payload."""
MAX_TEXT_CHARS = 1_000_000
"""Longest text of any other column, and of an LLM call's recorded reply (``texts``)."""
CAPPED_COLUMNS: dict[tuple[str, str], int] = {
    ("turns", "answer"): MAX_ANSWER_CHARS, ("turns", "question"): MAX_ANSWER_CHARS,
    ("verdicts", "rationale"): MAX_RATIONALE_CHARS,
}
"""Columns with their own cap; every other text column written by ``insert``/``update`` that is not
JSON gets :data:`MAX_TEXT_CHARS`."""
TRUNCATED_MARK = "[… truncated by viva: {n} more characters not stored]"
"""What replaces the cut part of a capped text (``n``: characters cut)."""


def cap_text(text: str, limit: int) -> str:
    """``text`` when it has at most ``limit`` characters, else its first ``limit`` characters and
    :data:`TRUNCATED_MARK` saying how many were cut (the reply, rationale or answer stays readable,
    the database stays small: three 20 MB rationales no longer make a 287 MB home)."""
    if not isinstance(text, str) or len(text) <= limit:
        return text
    return text[:limit] + "\n" + TRUNCATED_MARK.format(n=len(text) - limit)


def cap_in_place(value: Any, limit: int = MAX_EVENT_STRING_CHARS) -> Any:
    """Cap every string inside a dict or list (an event payload) *in place*, iteratively."""
    stack = [value]
    while stack:
        node = stack.pop()
        keys = list(node) if isinstance(node, dict) else range(len(node)) if isinstance(node, list) else ()
        for k in keys:
            v = node[k]
            if isinstance(v, str):
                if len(v) > limit:
                    node[k] = cap_text(v, limit)
            elif isinstance(v, (dict, list)):
                stack.append(v)
    return value
