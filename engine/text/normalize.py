"""Normal forms of a text: Unicode and line ends, entity keys, content hashes (the knowledge base's)."""

from __future__ import annotations

import hashlib
import re
import unicodedata


def sha256_text(text: str) -> str:
    """Hex SHA-256 of a string encoded as UTF-8 (the content hash of documents and chunks)."""
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


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
