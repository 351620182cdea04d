"""Paragraph chunking with a size cap and overlap.

A document is cut at blank lines into paragraphs; consecutive paragraphs are packed into one chunk
while they fit (a Markdown heading always stays with the paragraph after it when the cap allows); a
paragraph longer than the cap is split at sentence ends (else at spaces, else
hard). Every chunk after the first starts up to ``overlap`` characters early, at a word boundary,
so a fact that straddles a cut is still whole in one chunk. Every chunk is exactly
``text[start:end]`` of its document and never longer than ``chunk_chars``.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from engine.text.cjk import CJK_HANGUL_CHAR

_PARAGRAPH_BREAK = re.compile(r"\n[ \t]*\n")
# A sentence end: . ! ? (or CJK 。！？) and closing quotes/brackets, then whitespace or end.
_CJK = re.compile(CJK_HANGUL_CHAR)
_HEADING = re.compile(r"#{1,6}\s+\S[^\n]*$")
_CJK_SENTENCE_END = re.compile(r"[。！？；]+[”’」』)]*")
_SENTENCE_END = re.compile(r"(?:[.!?]+[\"'”’)\]]*(?=\s)|[。！？；]+[”’」』)]*)")


@dataclass(frozen=True)
class Chunk:
    """One chunk: its order in the document, text and character span in the document text."""

    ord: int
    text: str
    start: int
    end: int


def _paragraph_spans(text: str) -> list[tuple[int, int]]:
    spans = []
    pos = 0
    for m in _PARAGRAPH_BREAK.finditer(text):
        spans.append((pos, m.start()))
        pos = m.end()
    spans.append((pos, len(text)))
    out = []
    for s, e in spans:
        while s < e and text[s].isspace():
            s += 1
        while e > s and text[e - 1].isspace():
            e -= 1
        if e > s:
            out.append((s, e))
    return out


def _cut_point(text: str, start: int, limit: int) -> int:
    """The best place to end a piece that starts at ``start`` and may not pass ``limit``."""
    window = text[start:limit]
    best = -1
    for m in _SENTENCE_END.finditer(window):
        if m.end() > len(window) // 3:
            best = m.end()
    if best > 0:
        return start + best
    space = window.rfind(" ")
    if space > len(window) // 3:
        return start + space
    return limit


def _split_long(text: str, start: int, end: int, cap: int) -> list[tuple[int, int]]:
    pieces = []
    while end - start > cap:
        cut = _cut_point(text, start, start + cap)
        pieces.append((start, cut))
        start = cut
        while start < end and text[start].isspace():
            start += 1
    if end > start:
        pieces.append((start, end))
    return pieces


def _overlap_start(text: str, prev_start: int, start: int, overlap: int) -> int:
    """Move ``start`` back by at most ``overlap`` characters, landing on a word boundary."""
    if overlap <= 0:
        return start
    lo = max(prev_start + 1, start - overlap)
    if lo >= start:
        return start
    candidate = lo
    if _CJK.match(text, candidate):
        # No spaces in CJK text: begin after a CJK sentence end if there is one, else anywhere.
        end = _CJK_SENTENCE_END.search(text, candidate, start)
        if end is not None:
            candidate = end.end()
        while candidate < start and text[candidate].isspace():
            candidate += 1
        return candidate
    # Step forward to the start of a word so the overlap does not begin mid-word.
    if candidate > 0 and not text[candidate - 1].isspace():
        nxt = re.search(r"\s", text[candidate:start])
        if nxt is None:
            return start
        candidate += nxt.end()
    while candidate < start and text[candidate].isspace():
        candidate += 1
    return candidate


def chunk_text(text: str, chunk_chars: int = 1200, overlap: int = 150) -> list[Chunk]:
    """Cut a document into chunks.

    Args:
        text: the document text (already normalised, see ``text.normalize_text``).
        chunk_chars: the cap on a chunk's length in characters, overlap included.
        overlap: how many characters of the previous chunk a chunk may repeat at its start.

    Returns:
        Chunks in document order; empty when the text is blank.

    Raises:
        ValueError: ``overlap`` is not below half of ``chunk_chars``.
    """
    if chunk_chars <= 0 or overlap < 0 or overlap * 2 >= chunk_chars:
        raise ValueError(f"need 0 <= overlap < chunk_chars / 2 (got chunk_chars={chunk_chars}, overlap={overlap})")
    pieces: list[tuple[int, int]] = []
    for s, e in _paragraph_spans(text):
        if e - s <= chunk_chars:
            pieces.append((s, e))
        else:  # pieces of a long paragraph leave room for the full overlap
            pieces.extend(_split_long(text, s, e, chunk_chars - overlap))
    packed: list[tuple[int, int]] = []
    last_is_heading = False
    for s, e in pieces:
        # A heading never ends a chunk: it joins the paragraph it introduces if the cap allows.
        limit = chunk_chars if last_is_heading else chunk_chars - overlap
        if packed and e - packed[-1][0] <= limit:
            packed[-1] = (packed[-1][0], e)
        else:
            packed.append((s, e))
        last_is_heading = _HEADING.match(text, s, e) is not None
    chunks: list[Chunk] = []
    prev_start = -1
    for i, (s, e) in enumerate(packed):
        room = min(overlap, chunk_chars - (e - s))
        start = s if i == 0 else _overlap_start(text, prev_start, s, room)
        chunks.append(Chunk(ord=i, text=text[start:e], start=start, end=e))
        prev_start = s
    return chunks
