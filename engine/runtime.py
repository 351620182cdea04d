"""What every command and the app share: the data home, the configuration and the store."""

from __future__ import annotations

import logging
from dataclasses import dataclass, field
from pathlib import Path

from engine.config import Config, load_config, resolve_home
from engine.redact import install_log_filter, register_config
from engine.store import Store, open_store


@dataclass
class Runtime:
    """The data home, configuration and cache switch chosen on the command line."""

    home: Path
    config: Config
    use_cache: bool = True
    _store: Store | None = field(default=None, repr=False)

    @classmethod
    def create(cls, home: str | Path | None = None, config_path: str | Path | None = None,
               use_cache: bool = True) -> Runtime:
        """Resolve ``--home``/``VIVA_HOME``, load ``--config``/``viva.yaml`` and set up logging."""
        runtime = cls(home=resolve_home(home), config=load_config(config_path), use_cache=use_cache)
        register_config(runtime.config)
        setup_logging(runtime.home)
        from engine.knowledge.embed import set_cache_dir

        set_cache_dir(runtime.home / "cache")  # the embedder's optimised graph, made once per machine
        return runtime

    @property
    def store(self) -> Store:
        """The store for the calling thread's main use (opened lazily)."""
        if self._store is None:
            self._store = open_store(self.home)
        return self._store

    def new_store(self) -> Store:
        """A separate connection, for another thread."""
        return open_store(self.home)

    def connect(self) -> Runtime:
        """The same home and configuration on a new database connection (for another thread)."""
        return Runtime(self.home, self.config, self.use_cache, open_store(self.home))

    def close(self) -> None:
        """Close this runtime's database connection, if open."""
        if self._store is not None:
            self._store.close()
            self._store = None


def setup_logging(home: Path) -> None:
    """Log viva's own messages to ``HOME/logs/viva.log``. Secrets never reach a log line: every record
    passes :class:`engine.redact.RedactingFilter` (message, arguments and traceback), and headers are
    never logged."""
    logger = logging.getLogger("viva")
    (home / "logs").mkdir(parents=True, exist_ok=True)
    target = str((home / "logs" / "viva.log").resolve())
    for h in logger.handlers:
        if getattr(h, "baseFilename", None) == target:
            install_log_filter(h)
            return
    for handler in list(logger.handlers):
        logger.removeHandler(handler)
        handler.close()
    handler = logging.FileHandler(target, encoding="utf-8")
    handler.setFormatter(logging.Formatter("%(asctime)s %(levelname)s %(name)s: %(message)s"))
    install_log_filter(handler)
    logger.addHandler(handler)
    logger.setLevel(logging.INFO)
    logger.propagate = False
