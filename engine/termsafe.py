"""One terminal-safe text path: what a target, endpoint or benchmark said, made harmless to show.

Every string that did not come from viva itself (answers, questions, rationales, endpoint
messages, benchmark fields, file names) passes :func:`termsafe` before it reaches a terminal, in the
command line and in the app alike. Stored data is never changed: the database keeps what was said;
only what is *shown* is made safe.

What it does, character by character (one ``str.translate``, so a megabyte takes milliseconds):

- C0 controls (U+0000-U+001F) other than newline and tab are shown as their Unicode control
  pictures: ESC is ``␛``, BEL ``␇``, carriage return ``␍``, backspace ``␈`` and so on; DEL (U+007F)
  is ``␡`` (``CR LF`` is a line end and is kept; a lone ``CR`` is ``␍``). ``ESC ] 52 ; …`` (a clipboard write) is shown as ``␛]52;…`` and never emitted.
- C1 controls (U+0080-U+009F: the 8-bit CSI, OSC, DCS, ST… that some terminals obey) are shown as
  ``\\u009b``.
- Bidirectional overrides, embeddings, isolates and marks (U+202A-U+202E, U+2066-U+2069, U+200E,
  U+200F, U+061C), zero-width and invisible characters (U+200B-U+200D, U+2060-U+2064, U+FEFF,
  U+00AD, U+180E, U+034F, U+115F, U+1160, U+3164, U+FFA0), the line and paragraph separators
  (U+2028, U+2029), interlinear annotation marks (U+FFF9-U+FFFB), Unicode tag characters
  (U+E0000-U+E007F, used to hide text) and lone surrogates are shown as the marker ``\\u202e``
  (above U+FFFF as JSON writes it, a surrogate pair: ``\\udb40\\udc41``).

The ``\\uXXXX`` form keeps a JSON document printed with ``ensure_ascii=False`` valid and exact (it
is JSON's own escape), and is one visible marker in plain text. C0 characters never reach JSON
output unescaped, so their pictures need no such care.
"""

from __future__ import annotations

from typing import Any

from engine.streams import FilteredStream

_KEEP = {0x09, 0x0A}
_INVISIBLE = (
    [0x00AD, 0x034F, 0x061C, 0x115F, 0x1160, 0x180E, 0x3164, 0xFEFF, 0xFFA0, 0x2028, 0x2029]
    + list(range(0x200B, 0x2010))  # zero-width space, ZWNJ, ZWJ, LRM, RLM
    + list(range(0x202A, 0x202F))  # LRE, RLE, PDF, LRO, RLO
    + list(range(0x2060, 0x2065))  # word joiner, invisible operators
    + list(range(0x2066, 0x2070))  # LRI, RLI, FSI, PDI and the deprecated format characters
    + list(range(0xFFF9, 0xFFFC))  # interlinear annotation
    + list(range(0xE0000, 0xE0080))  # tag characters
    + list(range(0xD800, 0xE000))  # lone surrogates (undecodable bytes)
)


def _marker(code: int) -> str:
    if code <= 0xFFFF:
        return f"\\u{code:04x}"
    code -= 0x10000  # above U+FFFF: the UTF-16 surrogate pair, as JSON writes it
    return f"\\u{0xD800 + (code >> 10):04x}\\u{0xDC00 + (code & 0x3FF):04x}"


def _table() -> dict[int, str]:
    table: dict[int, str] = {}
    for c in range(0x20):
        if c not in _KEEP:
            table[c] = chr(0x2400 + c)  # the control pictures block
    table[0x7F] = "\u2421"  # ␡
    for c in range(0x80, 0xA0):
        table[c] = _marker(c)
    for c in _INVISIBLE:
        table[c] = _marker(c)
    return table


TABLE: dict[int, str] = _table()
"""What :func:`termsafe` replaces: code point -> the visible form."""


def termsafe(text: Any) -> str:
    """``text`` (``str()`` of it; ``None`` gives ``""``) with every terminal control, bidi override and
    invisible character made visible (see the module docstring); newline and tab are kept."""
    if text is None:
        return ""
    if not isinstance(text, str):
        text = str(text)
    if text.isascii() and text.isprintable():
        return text
    if "\r\n" in text:  # a line end (CSV writes them), not a stray carriage return: kept
        return "\r\n".join(part.translate(TABLE) for part in text.split("\r\n"))
    return text.translate(TABLE)


def is_terminal_safe(text: str) -> bool:
    """True when ``text`` holds nothing :func:`termsafe` would replace."""
    return not any(ord(ch) in TABLE for ch in text)


def termsafe_value(value: Any) -> Any:
    """``value`` with :func:`termsafe` applied to every string inside it (dicts, lists, tuples and
    dataclass instances are copied, keys included; other values are returned as they are)."""
    import dataclasses

    if isinstance(value, str):
        return termsafe(value)
    if isinstance(value, dict):
        return {termsafe_value(k): termsafe_value(v) for k, v in value.items()}
    if isinstance(value, list):
        return [termsafe_value(v) for v in value]
    if isinstance(value, tuple) and not hasattr(value, "_fields"):
        return tuple(termsafe_value(v) for v in value)
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        changes = {f.name: termsafe_value(getattr(value, f.name)) for f in dataclasses.fields(value)
                   if f.init}
        try:
            return dataclasses.replace(value, **changes)
        except (TypeError, ValueError):
            return value
    return value


class TerminalStream(FilteredStream):
    """A text stream (standard output or error) whose every ``write`` passes :func:`termsafe`.

    :meth:`write_styled` writes text as it is: for a console that has already made every piece of
    foreign text safe and adds only its own colour sequences (``tui.cli.console.SafeConsole``).
    Other attributes (``isatty``, ``encoding``, ``fileno``…) are the wrapped stream's.
    """

    def filter(self, text: str) -> str:
        """``text`` made terminal-safe."""
        return termsafe(text)

    def write_styled(self, text: str) -> int:
        """Write ``text`` unchanged: its foreign parts were made safe by the caller."""
        self._stream.write(text)
        return len(text)


def terminal_std_streams() -> Any:
    """A context manager routing ``sys.stdout`` and ``sys.stderr`` through :class:`TerminalStream`."""
    import sys
    from contextlib import contextmanager

    @contextmanager
    def wrap() -> Any:
        saved = sys.stdout, sys.stderr
        if sys.stdout is not None and not isinstance(sys.stdout, TerminalStream):
            sys.stdout = TerminalStream(sys.stdout)  # type: ignore[assignment]
        if sys.stderr is not None and not isinstance(sys.stderr, TerminalStream):
            sys.stderr = TerminalStream(sys.stderr)  # type: ignore[assignment]
        try:
            yield
        finally:
            sys.stdout, sys.stderr = saved

    return wrap()
