"""Escaping for report text that comes from models and users (answers, questions, notes, names).

- Markdown (:func:`escape_markdown`, :func:`markdown_cell`): every character Markdown gives a
  meaning inline is backslash-escaped, and a line that could open a block (heading, list, quote,
  setext underline, ordered list) has its first character escaped; blank lines are dropped and
  lines are joined with hard breaks, so a text renders as one paragraph of itself: no fake
  heading, no raw HTML, no code block, no table.
- CSV (:func:`csv_text_cell`): a text cell that a spreadsheet would run as a formula (it starts
  with ``=``, ``+``, ``-``, ``@``, a tab or a carriage return) gets a leading ``'`` (OWASP's "CSV
  injection" advice); the csv module quotes a cell holding a separator, quote or line break.
- HTML: :func:`html.escape` with ``quote=True`` on every text, in the renderer.
"""

from __future__ import annotations

import re
from typing import Any

_MD_INLINE = re.compile(r"([\\`*_\[\]<>|~&#!])")
_MD_LINE_START = re.compile(r"^(\s*)([-+=>:]|\d+[.)])")
FORMULA_START = ("=", "+", "-", "@", "\t", "\r")
"""What a CSV text cell may not start with (OWASP, CSV injection)."""


def _escape_line(line: str) -> str:
    line = _MD_INLINE.sub(r"\\\1", line.strip())

    def start(m: re.Match[str]) -> str:
        mark = m.group(2)
        return m.group(1) + (("\\" + mark) if len(mark) == 1 else (mark[:-1] + "\\" + mark[-1]))

    return _MD_LINE_START.sub(start, line)


def escape_markdown(text: Any) -> str:
    """``text`` as inert Markdown: one paragraph that renders as the text itself (lines joined by
    hard breaks; ``None`` or empty gives ``""``)."""
    if text is None or text == "":
        return ""
    lines = [_escape_line(x) for x in str(text).splitlines() if x.strip()]
    return "\\\n".join(lines)


def markdown_cell(text: Any) -> str:
    """``text`` escaped for one Markdown table cell: as :func:`escape_markdown`, on one line."""
    if text is None or text == "":
        return ""
    return " ".join(_escape_line(x) for x in str(text).splitlines() if x.strip())


def csv_text_cell(value: Any) -> Any:
    """A CSV cell: text starting with ``= + - @``, a tab or a carriage return gets a leading ``'``;
    numbers, booleans and None are left as they are."""
    if isinstance(value, str) and value.startswith(FORMULA_START):
        return "'" + value
    return value
