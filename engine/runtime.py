"""What every command and the app share: the data home, the configuration and the store."""

from __future__ import annotations

import logging
import sys
from pathlib import Path
from typing import TYPE_CHECKING

from engine.home import QuietFileHandler, config_file, resolve_home
from engine.redact import install_log_filter, register_config
from engine.store import Store, open_store

if TYPE_CHECKING:
    from engine.config import Config


class Runtime:
    """The data home, configuration and cache switch chosen on the command line.

    Args:
        home: the data home.
        config: the configuration; None means every default, built on first use of :attr:`config`
            (so a command that needs no setting never imports the validation machinery).
        use_cache: whether LLM calls are answered from the cache.
        _store: an open store for this runtime (else opened on first use of :attr:`store`).
    """

    def __init__(self, home: Path, config: Config | None = None, use_cache: bool = True,
                 _store: Store | None = None):
        self.home = home
        self._config = config
        self.use_cache = use_cache
        self._store = _store

    def __repr__(self) -> str:
        return f"Runtime(home={self.home!r}, use_cache={self.use_cache!r})"

    @property
    def config(self) -> Config:
        """The configuration (every default when none was given)."""
        if self._config is None:
            from engine.config import Config

            self._config = Config()
        return self._config

    @property
    def config_loaded(self) -> bool:
        """Whether the configuration object exists yet (given, read from a file, or built on use)."""
        return self._config is not None

    @classmethod
    def create(cls, home: str | Path | None = None, config_path: str | Path | None = None,
               use_cache: bool = True) -> Runtime:
        """Resolve ``--home``/``VIVA_HOME``, load ``--config``/``viva.yaml`` and set up logging.

        A configuration file is loaded and validated now (its errors and keys are known at once);
        without one the defaults are built when first used (they name no key to register).
        """
        home_path = resolve_home(home)
        file = config_file(config_path)
        config = None
        if file is not None:
            from engine.config import load_config

            config = load_config(file)
            register_config(config)
        runtime = cls(home=home_path, config=config, use_cache=use_cache)
        setup_logging(runtime.home)
        set_embed_cache_dir(runtime.home / "cache")  # the embedder's optimised graph, made once per machine
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
        return Runtime(self.home, self._config, self.use_cache, open_store(self.home))

    def close(self) -> None:
        """Close this runtime's database connection, if open."""
        if self._store is not None:
            self._store.close()
            self._store = None


def set_embed_cache_dir(path: Path) -> None:
    """Where embedders keep their optimised graph: set in :mod:`engine.knowledge.embed` when it is
    loaded, else kept for it in :mod:`engine.knowledge` (importing the embedder, numpy and
    onnxruntime just to store a path would slow every command down)."""
    import engine.knowledge

    engine.knowledge.EMBED_CACHE_DIR = path
    embed = sys.modules.get("engine.knowledge.embed")
    if embed is not None:
        embed.set_cache_dir(path)


def setup_logging(home: Path) -> None:
    """Log viva's own messages to ``HOME/logs/viva.log``. Secrets never reach a log line: every record
    passes :class:`engine.redact.RedactingFilter` (message, arguments and traceback), and headers are
    never logged."""
    logger = logging.getLogger("viva")
    try:
        (home / "logs").mkdir(parents=True, exist_ok=True)
    except OSError:
        pass  # a read-only home: the handler stays silent (engine.home.QuietFileHandler)
    target = str((home / "logs" / "viva.log").resolve())
    for h in logger.handlers:
        if getattr(h, "baseFilename", None) == target:
            install_log_filter(h)
            return
    for handler in list(logger.handlers):
        logger.removeHandler(handler)
        handler.close()
    handler = QuietFileHandler(target)
    handler.setFormatter(logging.Formatter("%(asctime)s %(levelname)s %(name)s: %(message)s"))
    install_log_filter(handler)
    logger.addHandler(handler)
    logger.setLevel(logging.INFO)
    logger.propagate = False
