"""YAML configuration validated into typed objects.

Every value has a default, so no file is needed. The file is ``viva.yaml`` in the working
directory, or the path given by ``--config``. API keys never appear in the file: a model names
the *environment variable* that holds its key (``api_key_env``).
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any, Literal

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError

CONFIG_FILENAME = "viva.yaml"


class ConfigError(Exception):
    """A configuration file that cannot be used; the message names the file and the key path."""


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid")


class ModelConfig(_Strict):
    """One OpenAI-compatible endpoint used for a role (kernel, judge or target)."""

    base_url: str = "http://127.0.0.1:8000/v1"
    model: str = "default"
    api_key_env: str | None = Field(
        default=None, description="Name of the environment variable holding the API key."
    )
    temperature: float = Field(default=0.0, ge=0.0, le=2.0)
    max_tokens: int | None = Field(default=None, gt=0)
    max_concurrency: int = Field(default=8, gt=0)
    timeout: float = Field(default=60.0, gt=0)
    max_retries: int = Field(default=4, ge=0)
    price_in: float = Field(default=0.0, ge=0.0, description="Price per 1M input tokens.")
    price_out: float = Field(default=0.0, ge=0.0, description="Price per 1M output tokens.")

    def api_key(self) -> str:
        """The key read from the environment (never stored); a placeholder for keyless local servers."""
        if self.api_key_env:
            value = os.environ.get(self.api_key_env)
            if not value:
                raise ConfigError(
                    f"environment variable {self.api_key_env} is not set; it holds the API key "
                    f"for {self.model}@{self.base_url}. Export it, or remove api_key_env for a "
                    "keyless local server."
                )
            return value
        return "sk-no-key"


class EmbedderConfig(_Strict):
    """The ONNX sentence encoder; empty paths mean the embedded all-MiniLM-L6-v2 int8."""

    model_path: str | None = None
    tokenizer_path: str | None = None
    max_length: int = Field(default=256, gt=8)
    batch_size: int = Field(default=32, gt=0)


class RetrievalConfig(_Strict):
    """How knowledge bases are chunked and searched: chunk size and overlap in characters, ``k``
    passages per query, the reciprocal-rank-fusion constant, the search mode and the embedder.
    """
    chunk_chars: int = Field(default=1200, gt=50)
    overlap: int = Field(default=150, ge=0)
    k: int = Field(default=5, gt=0)
    rrf_k: int = Field(default=60, gt=0)
    mode: Literal["bm25", "dense", "hybrid"] = "hybrid"
    embedder: EmbedderConfig = EmbedderConfig()


class InterviewConfig(_Strict):
    """Defaults of an interview: turns per session, the policy, the reward's tau and lambda, the seed,
    sessions run at once, the task protocol's round limit, judge JSON repairs, the ``eval_code`` timeout
    (seconds) and the offline judge's threshold.
    """
    turns: int = Field(default=6, gt=0, le=100)
    policy: str = "onnx"
    tau: float = Field(default=0.1, ge=0.0)
    lam: float = Field(default=0.5, ge=0.0)
    seed: int = 0
    concurrency: int = Field(default=8, gt=0)
    max_rounds: int = Field(default=15, gt=0)
    judge_repairs: int = Field(default=2, ge=0)
    eval_code_timeout: float = Field(default=10.0, gt=0)
    offline_threshold: float = Field(default=0.59, gt=0.0, le=1.0)


class Config(_Strict):
    """The whole configuration. ``kernel: null`` (the default) means the offline kernel."""

    kernel: ModelConfig | None = None
    judge: ModelConfig | None = None
    targets: dict[str, ModelConfig] = Field(default_factory=dict)
    retrieval: RetrievalConfig = RetrievalConfig()
    interview: InterviewConfig = InterviewConfig()
    keys: dict[str, str] = Field(
        default_factory=dict, description="Key remapping for the app: binding id -> keys."
    )
    theme: str = "textual-dark"


def _key_path(loc: tuple[Any, ...]) -> str:
    return ".".join(str(p) for p in loc) or "(top level)"


def load_config(path: str | os.PathLike[str] | None = None, cwd: Path | None = None) -> Config:
    """Load and validate the configuration.

    Args:
        path: explicit file (``--config``); if None, ``viva.yaml`` in ``cwd`` is used when present.
        cwd: directory searched for ``viva.yaml`` (default: the working directory).

    Returns:
        The validated configuration (all defaults when no file exists).

    Raises:
        ConfigError: the file is missing, is not YAML, or a value is wrong; the message names the
            file, the key path and what is expected.
    """
    if path is None:
        candidate = (cwd or Path.cwd()) / CONFIG_FILENAME
        if not candidate.exists():
            return Config()
        path = candidate
    file = Path(path)
    try:
        text = file.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise ConfigError(f"{file}: config file not found") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise ConfigError(f"{file}: cannot read config file ({exc})") from None
    try:
        data = yaml.safe_load(text)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f":{mark.line + 1}" if mark is not None else ""
        raise ConfigError(f"{file}{where}: not valid YAML ({getattr(exc, 'problem', exc)})") from None
    if data is None:
        data = {}
    if not isinstance(data, dict):
        raise ConfigError(f"{file}: expected a mapping of settings at the top level, got {type(data).__name__}")
    try:
        return Config.model_validate(data)
    except ValidationError as exc:
        lines = []
        for err in exc.errors():
            lines.append(f"{file}: {_key_path(err['loc'])}: {err['msg']} (got {err.get('input')!r})")
        raise ConfigError("\n".join(lines)) from None


def resolve_home(home: str | os.PathLike[str] | None = None) -> Path:
    """The data home: ``--home``, else ``VIVA_HOME``, else ``./.viva``; created if missing."""
    chosen = Path(home or os.environ.get("VIVA_HOME") or ".viva").expanduser()
    chosen.mkdir(parents=True, exist_ok=True)
    (chosen / "logs").mkdir(exist_ok=True)
    return chosen
