"""The data home and the configuration file's place, without loading the configuration.

Light on purpose (no pydantic, no YAML): opening a data home for a command that needs no settings
(``viva sessions``) does not pay for the configuration's validation machinery.
:mod:`engine.config` re-exports these names.
"""

from __future__ import annotations

import os
from pathlib import Path

CONFIG_FILENAME = "viva.yaml"
DEFAULT_THEME = "textual-dark"
"""The app's theme when the configuration names none."""


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
    """The data home: ``--home``, else ``VIVA_HOME``, else ``./.viva``; created if missing."""
    chosen = Path(home or os.environ.get("VIVA_HOME") or ".viva").expanduser()
    chosen.mkdir(parents=True, exist_ok=True)
    (chosen / "logs").mkdir(exist_ok=True)
    return chosen
