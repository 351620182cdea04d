"""A text stream wrapper whose every write passes one filter: the one shape of
:class:`engine.redact.RedactingStream` (secrets out) and :class:`engine.termsafe.TerminalStream`
(terminal controls made visible)."""

from __future__ import annotations

from typing import Any


class FilteredStream:
    """A text stream (standard output or error) whose every ``write`` of text passes :meth:`filter`;
    non-text objects pass through (so binary writes fail as before). Other attributes (``isatty``,
    ``encoding``, ``fileno``…) are the wrapped stream's."""

    def __init__(self, stream: Any):
        self._stream = stream

    @property
    def wrapped(self) -> Any:
        """The stream written to."""
        return self._stream

    def filter(self, text: str) -> str:
        """What is written for ``text`` (a subclass's rule)."""
        raise NotImplementedError(f"{type(self).__name__} must define filter()")

    def write(self, text: Any) -> int:
        """Write ``text`` filtered; returns the length of the text given, as a stream does."""
        if isinstance(text, str):
            self._stream.write(self.filter(text))
            return len(text)
        return self._stream.write(text)

    def writelines(self, lines: Any) -> None:
        """Write each line filtered."""
        for line in lines:
            self.write(line)

    def flush(self) -> None:
        """Flush the wrapped stream."""
        self._stream.flush()

    def __getattr__(self, name: str) -> Any:
        return getattr(self._stream, name)
