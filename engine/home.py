"""The data home, the configuration file's place, and the rule of the names the home keeps things
under (benchmarks, knowledge bases), without loading the configuration.

Light on purpose (no pydantic, no YAML): opening a data home for a command that needs no settings
(``viva sessions``) does not pay for the configuration's validation machinery.
:mod:`engine.config` re-exports these names.
"""

from __future__ import annotations

import logging
import os
import re
from pathlib import Path

CONFIG_FILENAME = "viva.yaml"
DEFAULT_THEME = "textual-dark"
"""The app's theme when the configuration names none."""

NAME_RE = re.compile(r"\A[A-Za-z0-9][A-Za-z0-9._-]{0,99}\Z")  # \Z: "$" lets a final newline through
"""The rule of benchmark and knowledge-base names (a benchmark's is also its folder under the home):
1-100 letters, digits, ``.``, ``_`` or ``-``, starting with a letter or digit (and nothing after it, not
even a final newline). :func:`engine.bench.items.validate_name` and
:func:`engine.knowledge.kb.validate_kb_name` apply it."""


class ConfigError(Exception):
    """A configuration file that cannot be used; the message names the file and the key path."""


def config_file(path: str | os.PathLike[str] | None = None, cwd: Path | None = None) -> Path | None:
    """The configuration file to load: ``path`` (``--config``) when given, else ``viva.yaml`` in
    ``cwd`` (default: the working directory) when it exists, else None (every setting's default)."""
    if path is not None:
        return Path(path)
    candidate = (cwd or Path.cwd()) / CONFIG_FILENAME
    return candidate if candidate.exists() else None


def resolve_home(home: str | os.PathLike[str] | None = None) -> Path:
    """The data home: ``--home``, else ``VIVA_HOME``, else ``./.viva``; created if missing.

    A home that exists but cannot be written (a read-only mount or folder) is returned as it is:
    viva reads it, and the store refuses writes (:mod:`engine.store.faults`).

    Raises:
        ConfigError: the home does not exist and cannot be created, or is not a folder (one line).
    """
    chosen = Path(home or os.environ.get("VIVA_HOME") or ".viva").expanduser()
    try:
        chosen.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise ConfigError(f"{chosen}: cannot create the data home ({exc.strerror}); choose another --home") from None
    try:
        (chosen / "logs").mkdir(exist_ok=True)
    except OSError:
        pass  # a read-only home: nothing is logged (QuietFileHandler)
    return chosen


class QuietFileHandler(logging.FileHandler):
    """viva's log file handler: opened on the first record, and silent when the file cannot be
    opened or written (a read-only home, a full disk). ``logging`` would print a "--- Logging error ---"
    traceback on standard error for every record; the command's own error line says what is wrong.

    Attributes:
        failed: the first error met (None while the log is written).
    """

    def __init__(self, path: str | os.PathLike[str]):
        super().__init__(path, encoding="utf-8", delay=True)
        self.failed: BaseException | None = None

    def emit(self, record: logging.LogRecord) -> None:  # noqa: D102
        if self.failed is None:
            super().emit(record)

    def handleError(self, record: logging.LogRecord) -> None:  # noqa: D102, N802 - logging's name
        import sys

        self.failed = sys.exc_info()[1] or RuntimeError("log write failed")
