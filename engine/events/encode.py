"""What a ``verdicts`` event carries of the running summary: the whole text, or its change.

A turn's summary usually extends the previous turn's (the offline judge keeps every answer sentence;
an LLM judge rewrites a little). The event then carries ``summary_base`` (the turn whose summary it
edits, the one before it) and ``summary_delta`` (:mod:`engine.delta` operations) instead of
``summary``; a reader gets the text back with :func:`decode_summary` from the view it has folded so
far. The writer (``engine.interview.session``) and migration 7 use :func:`encode_summary`.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from engine.delta import apply_delta, delta_if_smaller
from engine.redact import redact


def encode_summary(summary: str, base_turn: int, base: str | None) -> dict[str, Any] | None:
    """``{"summary_base", "summary_delta"}`` for a summary whose base (turn ``base_turn``'s summary as
    a reader of the events has it) is known and the delta is smaller; None: carry ``summary`` whole.

    The summary must be redacted already. A delta whose inserted text the store's redaction would change
    (a piece that looks like a secret on its own) is not used: the event must apply to exactly the text.
    """
    if base is None or base_turn < 0:
        return None
    ops = delta_if_smaller(base, summary)
    if ops is None:
        return None
    inserted = [op for op in ops if isinstance(op, str)]
    inserted += [n for op in ops if isinstance(op, dict) for _, n in op.get("rename", [])]
    if any(redact(text) != text for text in inserted):
        return None
    return {"summary_base": base_turn, "summary_delta": ops}


def decode_summary(summary: str | None, base_turn: int | None, delta: list[Any] | None,
                   summary_of: Callable[[int], str | None]) -> str | None:
    """The summary a ``verdicts`` event describes: ``summary`` itself, or its delta applied to the
    summary of turn ``base_turn`` (``summary_of``); None when that base is unknown to the reader."""
    if delta is None or base_turn is None:
        return summary
    base = summary_of(int(base_turn))
    if base is None:
        return None
    try:
        return apply_delta(base, delta)
    except ValueError:
        return None
