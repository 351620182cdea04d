"""The command line's Rich console: viva's own colours, and every piece of text made terminal-safe.

A Rich console turns segments (text plus style) into terminal output; the style becomes viva's own
SGR sequences, the text is whatever was printed, foreign text included. :class:`SafeConsole` passes
the text of every segment through :func:`engine.termsafe.termsafe` just before it is rendered, so no
control sequence that came from a target, an endpoint or a benchmark is ever emitted, with colours
on or off, and whatever the call site forgot to clean. Rich's own control segments (cursor moves of
a live progress display) are kept as they are.

Its output goes to ``sys.stdout``/``sys.stderr`` *as they are at write time* (as a plain Rich
console does), through :meth:`engine.termsafe.TerminalStream.write_styled` when the command wraps
them (``tui.cli.VivaGroup``), so viva's colour sequences are not shown as ``␛`` themselves. With
``NO_COLOR`` set it emits no escape sequence at all (no bold or dim either).
"""

from __future__ import annotations

import os
import sys
from collections.abc import Iterable
from typing import Any

from rich.console import Console
from rich.segment import Segment

from engine.termsafe import termsafe


class _Out:
    """The current ``sys.stdout`` or ``sys.stderr``, written through ``write_styled`` when it has it."""

    def __init__(self, stderr: bool, stream: Any = None):
        self._stderr = stderr
        self._stream = stream

    def _target(self) -> Any:
        if self._stream is not None:
            return self._stream
        return sys.stderr if self._stderr else sys.stdout

    def write(self, text: str) -> int:
        target = self._target()
        styled = getattr(target, "write_styled", None)
        return styled(text) if styled is not None else target.write(text)

    def flush(self) -> None:
        self._target().flush()

    def __getattr__(self, name: str) -> Any:
        return getattr(self._target(), name)


WHOLE_WIDTH = 100_000
"""The width a table is measured in when the output is not a terminal (it then takes what it needs)."""


class SafeConsole(Console):
    """A Rich console whose printed text is always terminal-safe (see the module docstring)."""

    def __init__(self, *args: Any, **kwargs: Any):
        if os.environ.get("NO_COLOR"):  # no-color.org: no colour, and here no other escape either
            kwargs.setdefault("color_system", None)
        kwargs["file"] = _Out(bool(kwargs.get("stderr")), kwargs.get("file"))
        super().__init__(*args, **kwargs)

    def print(self, *objects: Any, **kwargs: Any) -> None:
        """Print as Rich does; when the output is not a terminal (a pipe, a file), a table is given the
        width it needs, so no cell is cut or folded (``python:eng…``) for want of a terminal width."""
        if self.is_terminal or not objects:
            return super().print(*objects, **kwargs)
        from rich.measure import Measurement
        from rich.table import Table

        tables = [o for o in objects if isinstance(o, Table)]
        if not tables:
            return super().print(*objects, **kwargs)
        wide = self.options.update_width(WHOLE_WIDTH)
        need = max(Measurement.get(self, wide, t).maximum for t in tables)
        before = self._width
        self.width = max(self.width, need)
        try:
            return super().print(*objects, **kwargs)
        finally:
            self._width = before

    def _render_buffer(self, buffer: Iterable[Segment]) -> str:
        safe = (seg if seg.control else Segment(termsafe(seg.text), seg.style, seg.control) for seg in buffer)
        return super()._render_buffer(safe)
