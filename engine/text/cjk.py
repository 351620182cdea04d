"""The CJK ranges of the engine: one definition, three named widths.

- :data:`CJK` (kana, CJK ideographs with extension A, compatibility ideographs): the judges' tokens,
  where one such character is one token;
- :data:`CJK_HANGUL` (the same and Hangul syllables): the knowledge base, which indexes scripts written
  without spaces as character bigrams (BM25) and keeps them out of Latin words;
- :data:`HAN` (the unified ideographs only): the offline question and bench generators, which read a
  text as Chinese by it.

The widths differ on purpose (a wider range would change what a judge or a generator reads); a caller
names the one it reads by. Two more: :data:`IDEOGRAPHS` (extension A and unified ideographs: the rubric
judge and the probe) and :data:`CJK_WIDE` (with punctuation and full-width forms: the LLM client's token
estimate, a size, not a reading of words).
"""

from __future__ import annotations

import re

CJK = "\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff"
"""Kana, CJK ideographs (extension A, unified) and compatibility ideographs, as a character-class range."""
HANGUL = "\uac00-\ud7af"
"""Hangul syllables, as a character-class range."""
CJK_HANGUL = CJK + HANGUL
""":data:`CJK` and Hangul: the scripts written without spaces (the knowledge base's reading)."""
HAN = "\u4e00-\u9fff"
"""The CJK unified ideographs only: what the offline generators take for Chinese."""
IDEOGRAPHS = "\u3400-\u4dbf" + HAN
"""CJK ideographs, extension A and unified: the rubric judge's and the probe's reading of Chinese terms."""
FULL_WIDTH = "\u3000-\u303f\uff00-\uffef"
"""CJK punctuation and full-width forms."""
CJK_WIDE = CJK_HANGUL + FULL_WIDTH
""":data:`CJK_HANGUL` with CJK punctuation and full-width forms: every character the LLM client's token
estimate (``engine.llm.fit``) counts as a CJK character."""

CJK_RE = re.compile(f"[{CJK}]")
"""One character of :data:`CJK`."""
CJK_HANGUL_CHAR = f"[{CJK_HANGUL}]"
"""One character of :data:`CJK_HANGUL`, as a pattern string (for building other patterns)."""
CJK_RUN_RE = re.compile(f"{CJK_HANGUL_CHAR}+")
"""A run of :data:`CJK_HANGUL` characters."""
HAN_RE = re.compile(f"[{HAN}]")
"""One character of :data:`HAN`."""


def has_han(text: str) -> bool:
    """True when the text holds a CJK unified ideograph (:data:`HAN`): the generators' test for Chinese."""
    return bool(HAN_RE.search(text or ""))
