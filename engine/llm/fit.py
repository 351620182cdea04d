"""Prompts sized to the model's context (issue 23): what does not fit is left out by one rule, said in the
prompt where it was left out, and noted.

The room is :meth:`engine.llm.LLMClient.prompt_chars`: the model's context (reported by the server, or the
endpoint's ``context:``) less the reply's ``max_tokens``, at :data:`engine.llm.client.CHARS_PER_TOKEN`
characters a token, less what the caller reserves for the repairs. A prompt's fixed parts (instructions,
rubric, scoring point, schema) always go; its variable texts share the rest by **equal shares**
(:func:`shares`): each keeps at most a cap, the largest for which all fit, so a short text is never cut and
the longest are cut first. A cut text says so in place (:data:`LEFT_OUT`):

- a long text that is read as a whole (an answer, a task transcript, a running summary, a reference, a
  question) keeps its beginning and its end, its middle left out (:func:`cut_middle`);
- an ordered background (a knowledge path's chunks) keeps its beginning, its end left out (:func:`cut_end`);
- a conversation drops its oldest turns whole (``engine.interview.prompts.transcript_block``).

Each cut is described in words ("the answer: 1,200 of 9,000 characters kept") for the caller to note
(:meth:`engine.llm.LLMClient.note_trimmed`: a ``session.note`` ``prompt-trimmed``), so a verdict on a cut
answer is never silently a verdict on the whole one. With the context unknown nothing is cut (the
overflow, if any, is the server's :class:`~engine.llm.ContextOverflowError`).
"""

from __future__ import annotations

from collections.abc import Sequence

LEFT_OUT = "[… {n:,} characters left out to fit the model's context …]"
"""What stands in a cut text where its part was left out."""
MARK_CHARS = 80
"""Room kept per text for its :data:`LEFT_OUT` mark and the newlines around it."""
MIN_KEEP = 200
"""No text is cut below this many characters (a prompt that needs less is then the server's overflow)."""


def shares(lengths: Sequence[int], room: int) -> list[int]:
    """How many characters each text keeps: all of it when they fit in ``room``; else each keeps
    ``min(length, cap)`` with the largest ``cap`` for which the kept lengths fit (equal shares: the short
    ones whole, the long ones cut to the same length), never below :data:`MIN_KEEP` (or the text's length)."""
    lengths = [max(0, int(n)) for n in lengths]
    if sum(lengths) <= room:
        return lengths
    left, rest = max(0, room), len(lengths)
    cap = 0
    for n in sorted(lengths):
        each = left // rest
        if n > each:
            cap = each
            break
        left -= n
        rest -= 1
    return [min(n, max(cap, MIN_KEEP)) for n in lengths]


def cut_middle(text: str, keep: int) -> tuple[str, int]:
    """``text`` in at most about ``keep`` characters: its beginning and its end, the middle replaced by
    :data:`LEFT_OUT`; returns (text, characters left out)."""
    if len(text) <= keep:
        return text, 0
    keep = max(keep, MIN_KEEP)
    left_out = len(text) - keep
    head = keep // 2
    tail = keep - head
    return f"{text[:head]}\n{LEFT_OUT.format(n=left_out)}\n{text[len(text) - tail:]}", left_out


def cut_end(text: str, keep: int) -> tuple[str, int]:
    """``text`` in at most about ``keep`` characters: its beginning, the end replaced by :data:`LEFT_OUT`;
    returns (text, characters left out)."""
    if len(text) <= keep:
        return text, 0
    keep = max(keep, MIN_KEEP)
    return f"{text[:keep]}\n{LEFT_OUT.format(n=len(text) - keep)}", len(text) - keep


def fit(texts: Sequence[tuple[str, str]], room: int | None, trims: list[str] | None = None,
        end: Sequence[str] = ()) -> list[str]:
    """The variable texts of one prompt, ``(name, text)`` pairs, cut to share ``room`` characters
    (:func:`shares`; None: the context is unknown, nothing is cut). A text named in ``end`` loses its end
    (:func:`cut_end`), any other its middle (:func:`cut_middle`). Each cut is described in ``trims``."""
    if room is None:
        return [t for _, t in texts]
    caps = shares([len(t) for _, t in texts], room - MARK_CHARS * len(texts))
    out = []
    for (name, text), cap in zip(texts, caps, strict=True):
        cut, left_out = (cut_end if name in end else cut_middle)(text, cap)
        if left_out and trims is not None:
            trims.append(f"{name}: {len(text) - left_out:,} of {len(text):,} characters kept")
        out.append(cut)
    return out
