"""Small text helpers shared by ingest, BM25, the entity extractor and the graph."""

from __future__ import annotations

import hashlib
import re
import unicodedata

# CJK Unified Ideographs (+ extension A, compatibility), Hiragana, Katakana and Hangul: scripts
# written without spaces, which BM25 indexes as overlapping character bigrams.
_CJK_RANGES = (
    "\u3040-\u30ff"  # Hiragana, Katakana
    "\u3400-\u4dbf"  # CJK extension A
    "\u4e00-\u9fff"  # CJK unified ideographs
    "\uac00-\ud7af"  # Hangul syllables
    "\uf900-\ufaff"  # CJK compatibility ideographs
)
CJK_CHAR = f"[{_CJK_RANGES}]"
CJK_RUN_RE = re.compile(f"{CJK_CHAR}+")
_CJK_ANY_RE = re.compile(CJK_CHAR)
# A "word" for Latin-like scripts: letters/digits with inner apostrophes, hyphens or dots
# ("O2", "Earth's", "non-metal", "U.S"), never containing a CJK character.
WORD_RE = re.compile(rf"(?:(?!{CJK_CHAR})\w)+(?:['’.\-](?:(?!{CJK_CHAR})\w)+)*")


def sha256_text(text: str) -> str:
    """Hex SHA-256 of a string encoded as UTF-8 (the content hash of documents and chunks)."""
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def has_cjk(text: str) -> bool:
    """True when the text contains at least one CJK, kana or Hangul character."""
    return _CJK_ANY_RE.search(text) is not None


def normalize_text(text: str) -> str:
    """Unicode NFC, ``\\r\\n`` to ``\\n``, no NUL characters, no trailing spaces on lines."""
    text = unicodedata.normalize("NFC", text).replace("\r\n", "\n").replace("\r", "\n").replace("\x00", "")
    return re.sub(r"[ \t]+\n", "\n", text)


def normalize_entity(name: str) -> str:
    """The key two entity mentions share when they name the same thing.

    NFKC, case-folded, inner whitespace collapsed, surrounding punctuation and a leading English
    article removed: ``"The  Black Death,"`` and ``"black death"`` give the same key.
    """
    key = unicodedata.normalize("NFKC", name).casefold()
    key = re.sub(r"\s+", " ", key).strip(" \t\n\"'`“”‘’.,;:!?()[]{}<>")
    key = re.sub(r"^(?:the|a|an) ", "", key)
    return key
