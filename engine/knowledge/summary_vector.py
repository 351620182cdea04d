"""The vector of a running summary, for the adaptive protocol's ``cos_t``: the sum of its sentences' vectors.

``cos_t = cosine(v(summary_t), v(summary_{t-1}))`` with

    v(summary) = Σ_i e(sentence_i) / ‖Σ_i e(sentence_i)‖

where the sentences are :func:`summary_sentences` (the text's distinct sentences, in the order first
said: a sentence said again adds nothing, as a claim stated twice is one claim) and ``e`` is the
encoder's unit-length vector of one sentence. A summary with no sentence has
no vector (``cos_t`` undefined, as for an empty summary).

Why a sum and not the encoder run over the whole summary:

- **All of it counts.** The encoder keeps a text's first 256 tokens; a summary longer than that (a
  long session, a verbose target) had only its beginning compared, so ``cos_t`` read 1.0 whatever the
  target said after it.
- **What the policy was trained on.** The policy's simulator (:mod:`engine.policy.simulator`) embeds a
  summary as a sum: the topic's vector plus one vector per stated claim. A stated sentence added,
  dropped (a retraction) or changed moves the sum by its own vector, as there.
- **Each sentence embedded once.** A sentence kept from one summary to the next (every sentence the
  offline kernel's summary keeps, and what an LLM judge copies into its new summary) is a cache hit
  of the embedding service, so a turn embeds what its summary says that is new, whatever the
  session's length: the cost of ``cos_t`` no longer grows with the session.

The sum is taken in float64 over the sentences in their order, so the same summary gives the same
vector bit for bit.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from functools import lru_cache

import numpy as np

from engine.text.sentences import split_sentences

_HAS_WORD = re.compile(r"[^\W_]", re.UNICODE)


def summary_sentences(summary: str | None) -> list[str]:
    """The sentences a summary's vector is the sum of: :func:`engine.text.sentences.split_sentences`
    (at . ! ? and their CJK forms, not after an abbreviation, and at line breaks), each with its runs of
    whitespace made one space, each once (the first time it is said); a piece without a letter or digit
    is dropped. A target that says a sentence over and over does not weigh the vector towards it."""
    return list(_summary_sentences(summary or ""))


@lru_cache(maxsize=1 << 12)
def _summary_sentences(summary: str) -> tuple[str, ...]:
    # memoised (pure): a summary is read again at the next turn, as the previous one
    out: dict[str, None] = {}
    for piece in split_sentences(summary):
        piece = " ".join(piece.split())
        if piece and _HAS_WORD.search(piece):
            out.setdefault(piece, None)
    return tuple(out)


def sum_vector(vectors: np.ndarray) -> np.ndarray | None:
    """The unit vector of the sum of ``vectors`` (rows), in float64; None for no rows or a zero sum."""
    rows = np.asarray(vectors, dtype=np.float64)
    if rows.ndim != 2 or rows.shape[0] == 0:
        return None
    total = rows.sum(axis=0)
    norm = float(np.linalg.norm(total))
    return total / norm if norm > 0.0 else None


def summary_vector(summary: str | None, embed: Callable[[list[str]], np.ndarray]) -> np.ndarray | None:
    """``v(summary)`` (see the module): ``embed`` gives one unit vector per sentence (an embedding
    service's ``embed``, which embeds only the sentences it has not seen)."""
    sentences = summary_sentences(summary)
    if not sentences:
        return None
    return sum_vector(embed(sentences))


def summaries_cosine(a: np.ndarray | None, b: np.ndarray | None) -> float | None:
    """cos between two summary vectors, clipped to [-1, 1]; None when either is undefined."""
    if a is None or b is None:
        return None
    return float(np.clip(float(a @ b), -1.0, 1.0))


def all_sentences(summaries: Sequence[str | None]) -> list[str]:
    """The distinct sentences of several summaries, first seen first (what to embed for all of them)."""
    seen: dict[str, None] = {}
    for summary in summaries:
        for s in summary_sentences(summary):
            seen.setdefault(s, None)
    return list(seen)
