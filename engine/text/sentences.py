"""Sentences and quotations: where a text's sentences end.

- :func:`split_sentences` (the judges' rule): at . ! ? followed by a space, after 。！？ and at line
  breaks, but not after an abbreviation (:data:`engine.text.lexicon.ABBREVIATIONS`: "Dr.", "Mr.",
  "St.", "No. 1", "e.g."), an initial ("J. R. R. Tolkien") or a dotted acronym ("U.S.", "a.m.").
  :data:`SENTENCE_END` and :func:`ends_sentence` are its parts, for a caller that needs the offsets
  (the judge's stance reading). The gold judge splits its own tokens by the same rule
  (:mod:`engine.judge.gold_tokens`, with :data:`engine.text.lexicon.GOLD_ABBREVIATIONS`).
- The offline generators' plain splits, which read no abbreviations and were measured as they are:
  :func:`plain_sentences` (the question generator and its pronoun resolution: at a space after . ! ?
  and their CJK forms, after 。！？； and at line breaks), :func:`chunk_sentences` (the bench
  generator: at a space after . ! ? before a capital, a digit, a quote or a bracket, and after 。！？；)
  and :data:`QUOTED_SENTENCE_END` (the reference target: after . ! ? and CJK stops and any closing
  quotes, and at line breaks).
- :data:`QUOTATION`: a quotation of two characters or more in "...", “...” or 「...」 (the quoted
  sentence a challenge contests).
"""

from __future__ import annotations

import re
from functools import lru_cache

from engine.text.lexicon import ABBREVIATIONS, ONLY_BEFORE_NUMBER
from engine.text.tokens import QUESTION_WORD_RE

SENTENCE_END = re.compile(r"[.!?]+['\")\]]*\s+|[。！？]+|\n+")
_LAST_WORD = re.compile(r"([^\W\d_]+(?:\.[^\W\d_]+)*)\.$", re.UNICODE)


def ends_sentence(before: str, after: str) -> bool:
    """Whether a dot that ends ``before`` (followed by ``after``) ends the sentence."""
    m = _LAST_WORD.search(before)
    if not m:
        return True
    word = m.group(1)
    low = word.lower()
    if "." in word:  # U.S., e.g., a.m., J.R.R.
        return False
    if len(word) == 1 and word.isupper():  # an initial: "J. R. R. Tolkien", "Plan B." is rarer
        return False
    if low in ABBREVIATIONS:
        if low in ONLY_BEFORE_NUMBER:
            return not after[:1].isdigit()
        return False
    return True


@lru_cache(maxsize=1 << 14)
def _split_sentences(text: str) -> tuple[str, ...]:
    out: list[str] = []
    start = 0
    for m in SENTENCE_END.finditer(text):
        end = m.end()
        piece = text[start:m.start() + len(m.group().rstrip())]
        if m.group()[0] == "." and "\n" not in m.group() and not ends_sentence(
                text[start:m.start() + 1].rstrip("'\")]"), text[end:]):
            continue
        if piece.strip():
            out.append(piece.strip())
        start = end
    if text[start:].strip():
        out.append(text[start:].strip())
    return tuple(out)


def split_sentences(text: str) -> list[str]:
    """A text's sentences, stripped (see the module docstring for where it splits)."""
    return list(_split_sentences(text or ""))



# -- the generators' plain splits ---------------------------------------------------------------

_PLAIN_END = re.compile(r"(?<=[.!?。！？])\s+|(?<=[。！？；])|\n+")
_CHUNK_END = re.compile(r"(?<=[.!?])\s+(?=[\"“(\[A-Z0-9])|(?<=[。！？；])")
QUOTED_SENTENCE_END = re.compile(r"(?<=[.!?。！？])[\"'”’)\]]*\s+|\n+")
"""Where the reference target cuts a chunk into sentences: after a stop and its closing quotes, at line breaks."""


def plain_sentences(text: str) -> list[str]:
    """Sentences of a text (``.!?`` and their CJK forms, line breaks); pieces without a word dropped."""
    return [s.strip() for s in _PLAIN_END.split(text or "") if s and QUESTION_WORD_RE.search(s)]


def chunk_sentences(text: str) -> list[str]:
    """A chunk's sentences (English and CJK end punctuation), whitespace collapsed first."""
    parts = [p.strip() for p in _CHUNK_END.split(" ".join(text.split()))]
    return [p for p in parts if p]


QUOTATION = re.compile(r'"([^"]{2,})"|“([^”]{2,})”|「([^」]{2,})」')
"""A quotation of two characters or more ("...", “...”, 「...」): one group per form."""
