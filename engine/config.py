"""YAML configuration validated into typed objects.

Every value has a default, so no file is needed. The file is ``viva.yaml`` in the working
directory, or the path given by ``--config``. API keys never appear in the file: a model names
the *environment variable* that holds its key (``api_key_env``).
"""

from __future__ import annotations

import os
import re
from pathlib import Path
from typing import Any, Literal

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator

from engine import redact as _redact
from engine.home import CONFIG_FILENAME, DEFAULT_THEME, ConfigError, config_file, resolve_home  # noqa: F401

_SECRET_FIELD_RE = re.compile(r"(?i)(api[_-]?key|apikey|secret|token|password|passwd|credential)")


def check_api_key_env(name: str, source: str = "api_key_env") -> None:
    """Refuse a value that cannot be the *name* of an environment variable, without printing it.

    A key pasted where its variable's name belongs (``--api-key-env sk-…``, ``api_key_env: sk-…``) is
    registered as a secret (so it is redacted wherever it might still go) and refused with a message
    that does not contain it.

    Args:
        name: the value given.
        source: where it was given, for the message (``--api-key-env``, ``kernel.api_key_env``).

    Raises:
        ConfigError: the value looks like a key, or is not a valid variable name.
    """
    if _redact.is_env_name(name) and not _redact.looks_like_key(name):
        return
    if _redact.looks_like_key(name) or len(name) >= 16:
        _redact.register_secret(name)
        raise ConfigError(
            f"{source}: the value given looks like an API key, not the name of an environment variable "
            "(it is not shown). Put the key in a variable (export MY_API_KEY=...) and give the variable's "
            "name, e.g. --api-key-env MY_API_KEY")
    raise ConfigError(
        f"{source}: the value given is not a valid environment variable name (letters, digits and _, not "
        "starting with a digit); give the name of the variable that holds the key, e.g. OPENAI_API_KEY")


REMOTE_TIMEOUT = 60.0
"""Default seconds of silence before a call to a remote endpoint is given up."""
LOOPBACK_TIMEOUT = 600.0
"""Default for a server on this machine: a 135M model on one thread took 68 to 199 s per judge call
(issue 23), so 60 s gave up on work the server was still doing."""


def is_loopback(base_url: str) -> bool:
    """Whether ``base_url`` names this machine (``localhost``, ``127.x.x.x``, ``::1``; a URL without a
    scheme is read as a host)."""
    import ipaddress
    from urllib.parse import urlsplit

    try:
        host = (urlsplit(base_url if "//" in base_url else f"//{base_url}").hostname or "").lower()
    except ValueError:
        return False
    if host == "localhost" or host.endswith(".localhost"):
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


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
    """Tokens one reply may have; unset: the role's budget (``max_tokens:`` of the config) for kernel and
    judge calls, the server's own limit for a target."""
    max_concurrency: int = Field(default=8, gt=0)
    timeout: float | None = Field(default=None, gt=0)
    """Seconds of silence before a call is given up; unset: :data:`REMOTE_TIMEOUT` (60 s), or
    :data:`LOOPBACK_TIMEOUT` (600 s) for a server on this machine (a local model takes minutes per call on
    a small CPU, and a timed-out call it is still computing is never sent again: see ``engine.llm.client``)."""
    max_retries: int = Field(default=4, ge=0)
    structured: Literal["auto", "json_schema", "json_object", "off"] = "auto"
    """How JSON replies are asked for (``response_format``): ``json_schema`` (OpenAI, vLLM, Ollama),
    ``json_object`` (llama-cpp-python: ``{"type": "json_object", "schema": ...}``, then plain JSON mode),
    ``off`` (the prompt alone), or ``auto``: the first JSON call tries them in that order, stepping down on
    a 400 that names ``response_format``, and the endpoint's answer is remembered for the process."""
    context: int | None = Field(default=None, gt=0)
    """The model's context in tokens when the server does not report it (``/v1/models``, ``/props``);
    prompts are trimmed to fit it (:mod:`engine.llm.fit`: oldest turns first, long texts in equal shares)."""
    max_call_seconds: float | None = Field(default=None, gt=0)
    """The whole of one call (a stream included) may take at most this long; unset: 4 x the timeout.
    Over it the reply is cut and recorded as truncated (``engine.llm.client``)."""
    max_reply_chars: int = Field(default=200_000, gt=0)
    """Characters one reply may have (answers, judge replies); over it the reply is cut and recorded as
    truncated, and a JSON reply so cut is a bad reply (repaired, then "cannot judge")."""
    price_in: float = Field(default=0.0, ge=0.0, description="Price per 1M input tokens.")
    price_out: float = Field(default=0.0, ge=0.0, description="Price per 1M output tokens.")
    system_prompt: str | None = Field(default=None, min_length=1)
    """A target's system prompt, sent as the first message of every conversation it is asked (a deployed
    model is its prompt). Part of the target's identity: sessions under it are stored under the target's
    name with ``#sys:HASH`` (:func:`engine.interview.targets.target_label`), so two prompts of one model are
    two rows of the leaderboard. Not used for the kernel or the judge."""
    system_prompt_file: str | None = Field(default=None, min_length=1)
    """The system prompt read from a UTF-8 file (a path relative to the config file's folder); read once,
    when the config is loaded. Not together with ``system_prompt``."""
    min_score: float | None = Field(default=None, ge=0.0, le=100.0)
    """A target's pass mark for ``viva run`` and the JUnit report: a leaderboard row of this target whose
    Score is under it (or that has none) makes ``viva run`` exit with status 3 (:mod:`engine.report.junit`);
    it wins over ``--fail-under``."""
    headers: dict[str, str] = Field(default_factory=dict)
    """Extra HTTP headers sent with every request (a gateway's route, an org id, ``api-version``). A value
    ``env:VAR`` is read from the environment when a request is sent, never stored; a header whose name
    says it carries a secret (``authorization``, ``api-key``, ``x-api-key``, ``cookie``, any name with
    key, token, secret, auth or password) must be given that way."""

    @field_validator("headers")
    @classmethod
    def _headers(cls, value: dict[str, str]) -> dict[str, str]:
        for name, given in value.items():
            check_header(name, given)
        return value

    @model_validator(mode="after")
    def _one_prompt(self) -> ModelConfig:
        if self.system_prompt is not None and self.system_prompt_file is not None:
            raise ValueError("give system_prompt or system_prompt_file, not both")
        return self

    def header_values(self) -> dict[str, str]:
        """The extra headers with ``env:VAR`` values read from the environment (each registered with
        :mod:`engine.redact`, so nothing viva writes carries it).

        Raises:
            ConfigError: a variable named by a header is not set.
        """
        out: dict[str, str] = {}
        for name, given in self.headers.items():
            if given.startswith(ENV_PREFIX):
                var = given[len(ENV_PREFIX):]
                value = os.environ.get(var)
                if not value:
                    raise ConfigError(f"environment variable {var} is not set; it holds header {name} for "
                                      f"{self.model}@{self.base_url}. Export it, or remove the header.")
                if is_secret_header(name):
                    _redact.register_secret(value)
                out[name] = value
            else:
                out[name] = given
        return out

    def header_identity(self) -> str:
        """The headers as they define the endpoint (for cache keys): names with their literal values, or
        the variable's name for ``env:VAR`` values (never the secret); empty without headers."""
        import json

        return json.dumps(dict(sorted(self.headers.items())), ensure_ascii=False) if self.headers else ""

    @field_validator("api_key_env")
    @classmethod
    def _env_name(cls, value: str | None) -> str | None:
        if value is not None:
            try:
                check_api_key_env(value)
            except ConfigError as exc:
                raise ValueError(str(exc).split(": ", 1)[1]) from None
        return value

    @property
    def loopback(self) -> bool:
        """Whether the endpoint is a server on this machine (``localhost``, ``127.0.0.0/8``, ``::1``)."""
        return is_loopback(self.base_url)

    @property
    def call_timeout(self) -> float:
        """The timeout in effect: the configured one, else 600 s on loopback and 60 s elsewhere."""
        if self.timeout is not None:
            return self.timeout
        return LOOPBACK_TIMEOUT if self.loopback else REMOTE_TIMEOUT

    @property
    def call_deadline(self) -> float:
        """The total time one call may take (``max_call_seconds``, else 4 x the timeout)."""
        return self.max_call_seconds if self.max_call_seconds is not None else 4 * self.call_timeout

    def api_key(self) -> str:
        """The key read from the environment (never stored); a placeholder for keyless local servers.

        The value is registered with :mod:`engine.redact` before it is returned, so nothing viva
        writes can carry it.

        Raises:
            ConfigError: ``api_key_env`` is not a variable name (a key given by mistake: not shown),
                or the variable is not set.
        """
        if self.api_key_env:
            check_api_key_env(self.api_key_env, "api_key_env (from the config or --api-key-env)")
            value = os.environ.get(self.api_key_env)
            if not value:
                raise ConfigError(
                    f"environment variable {self.api_key_env} is not set; it holds the API key "
                    f"for {self.model}@{self.base_url}. Export it, or remove api_key_env for a "
                    "keyless local server."
                )
            _redact.register_secret(value)
            return value
        return "sk-no-key"


ENV_PREFIX = "env:"
"""A header value ``env:VAR`` is read from environment variable VAR when a request is sent."""

_HEADER_NAME_RE = re.compile(r"^[!#$%&'*+.^_`|~0-9A-Za-z-]+$")
_SECRET_HEADER_RE = re.compile(r"(?i)(auth|key|token|secret|password|passwd|cookie|credential|signature)")
_RESERVED_HEADERS = {"content-type", "content-length", "host", "transfer-encoding", "connection"}


def is_secret_header(name: str) -> bool:
    """Whether a header's name says it carries a secret (``Authorization``, ``api-key``, ``X-Auth-Token``,
    ``Cookie``...): its value must come from the environment."""
    return bool(_SECRET_HEADER_RE.search(name))


def check_header(name: str, value: str) -> None:
    """Refuse a header that cannot be sent or would put a secret in the config (the value is never shown).

    Raises:
        ValueError: a name that is not an HTTP token or is one HTTP itself sets, an empty ``env:`` name, a
            value with a line break, or a literal value for a secret header or that looks like a key.
    """
    if not _HEADER_NAME_RE.match(name):
        raise ValueError(f"header name {name!r} is not a valid HTTP header name (letters, digits and -)")
    if name.lower() in _RESERVED_HEADERS:
        raise ValueError(f"header {name} is set by the HTTP client itself; remove it")
    if value.startswith(ENV_PREFIX):
        if not _redact.is_env_name(value[len(ENV_PREFIX):]):
            raise ValueError(f"header {name}: after env: give the name of an environment variable, e.g. env:MY_VAR")
        return
    if "\n" in value or "\r" in value:
        raise ValueError(f"header {name}: the value has a line break")
    if is_secret_header(name) or _redact.looks_like_key(value):
        _redact.register_secret(value)
        raise ValueError(f"header {name} carries a secret, which never goes in the config (the value is not "
                         f"shown); put it in an environment variable and write {name}: env:VAR")


class EmbedderConfig(_Strict):
    """The ONNX sentence encoder; empty paths mean the embedded all-MiniLM-L6-v2 int8."""

    model_path: str | None = None
    tokenizer_path: str | None = None
    max_length: int = Field(default=256, gt=8)
    batch_size: int = Field(default=4, gt=0)
    """Texts per ONNX run. With one single-threaded run per core, 4 was the fastest setting in every
    round of ``bench/kb.py``'s peak measurement (batch 4, 8, 16; one session on all cores at 8, 32) on
    the 2-core test machine, and it holds the least memory: a run's activations grow with batch x
    tokens², one run per core."""


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


MAX_TURNS = 1000
"""The most turns a session may have: ``interview.turns``, ``viva run --turns`` and a planned run alike."""


def check_interview_setting(name: str, value: Any) -> Any:
    """Validate one ``interview:`` setting given elsewhere (a command-line option, a run request) by the
    same rule, bound and message as in the config file (:class:`InterviewConfig`).

    Returns:
        The value as the config would hold it.

    Raises:
        ConfigError: ``interview.NAME: <pydantic's message> (got VALUE)``, the config's wording.
    """
    try:
        return getattr(InterviewConfig.model_validate({name: value}), name)
    except ValidationError as exc:
        err = exc.errors()[0]
        raise ConfigError(f"interview.{name}: {err['msg']} (got {_redact.redact(repr(value))})") from None


class InterviewConfig(_Strict):
    """Defaults of an interview (and the bounds of ``viva run``'s options, :func:`check_interview_setting`):
    turns per session, the policy, the reward's tau and lambda, the seed,
    sessions run at once, the worker processes they are spread over, the task protocol's round limit,
    judge JSON repairs, the ``eval_code`` timeout (seconds) and the offline judge's threshold.
    """
    turns: int = Field(default=6, gt=0, le=MAX_TURNS)
    policy: str = "onnx"
    tau: float = Field(default=0.1, ge=0.0)
    lam: float = Field(default=0.5, ge=0.0)
    seed: int = 0
    epochs: int = Field(default=1, ge=1, le=100)
    """Times each item is run per target (``viva run --epochs``): epoch e is its own session with seed
    ``seed + e``, sent to an endpoint target as the request's ``seed`` (with the endpoint's temperature),
    so its calls are cached apart; the leaderboard averages an item's epochs and shows their spread."""
    concurrency: int = Field(default=8, gt=0)
    workers: int = Field(default=1, gt=0, le=64)
    """Processes a run's sessions are spread over (``viva run --workers``); 1 runs them in viva's own
    process. ``concurrency`` stays the total of sessions at once, shared among the workers."""
    max_rounds: int = Field(default=15, gt=0)
    judge_repairs: int = Field(default=2, ge=0)
    eval_code_timeout: float = Field(default=10.0, gt=0)
    offline_threshold: float = Field(default=0.65, gt=0.0, le=1.0)  # engine.judge.freetext.DEFAULT_THRESHOLD


class LocalConfig(_Strict):
    """The embedded local model (target ``local``): ``threads`` the llama.cpp server computes with.

    ``null`` (the default) means :func:`engine.interview.local.default_threads`: one thread per two
    cores the process may use, at least one (``bench/local_threads.py``: llama.cpp's threads spin
    while they wait for each other, so a thread more than the free cores costs far more than it gains).
    """
    threads: int | None = Field(default=None, gt=0, le=256)
    n_ctx: int = Field(default=2048, ge=256)


class Budgets(_Strict):
    """Default ``max_tokens`` of one reply per role (an endpoint's own ``max_tokens`` wins): the examiner's
    questions (``kernel``), a judge call's verdicts and summary (``judge``), a conversation's ratings
    (``ratings``) and a benchmark generation step (``generation``). Without a budget a weak model wrote
    3,260 tokens until its context was full (issue 23)."""

    kernel: int = Field(default=384, gt=0)
    judge: int = Field(default=1024, gt=0)
    ratings: int = Field(default=512, gt=0)
    generation: int = Field(default=2048, gt=0)


class Config(_Strict):
    """The whole configuration. ``kernel: null`` (the default) means the offline kernel."""

    kernel: ModelConfig | None = None
    judge: ModelConfig | None = None
    targets: dict[str, ModelConfig] = Field(default_factory=dict)
    retrieval: RetrievalConfig = RetrievalConfig()
    interview: InterviewConfig = InterviewConfig()
    local: LocalConfig = LocalConfig()
    max_tokens: Budgets = Budgets()
    keys: dict[str, str] = Field(
        default_factory=dict, description="Key remapping for the app: binding id -> keys."
    )
    theme: str = DEFAULT_THEME
    evaluator: str | None = Field(
        default=None, description="Your name on overrides and confirmations (default: the OS user)."
    )

    @model_validator(mode="after")
    def _prompts_on_targets(self) -> Config:
        for role in ("kernel", "judge"):
            endpoint = getattr(self, role)
            if endpoint is not None and (endpoint.system_prompt or endpoint.system_prompt_file):
                raise ValueError(f"{role}: system_prompt is a target's setting (the {role}'s prompts are viva's own); "
                                 "remove it")
        return self


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
    file = config_file(path, cwd)
    if file is None:
        return Config()
    text = read_text_file(file, ConfigError, "config file")
    data = load_yaml(text, file, ConfigError)
    if data is None:
        data = {}
    if not isinstance(data, dict):
        raise ConfigError(f"{file}: expected a mapping of settings at the top level, got {type(data).__name__}")
    _register_inline_secrets(data)
    try:
        config = Config.model_validate(data)
    except ValidationError as exc:
        raise ConfigError("\n".join(_describe(file, err) for err in exc.errors())) from None
    for name, endpoint in config.targets.items():
        if endpoint.system_prompt_file is not None:
            prompt = Path(endpoint.system_prompt_file).expanduser()
            prompt = prompt if prompt.is_absolute() else file.parent / prompt
            text = read_text_file(prompt, ConfigError, f"system prompt file (targets.{name}.system_prompt_file)")
            if not text.strip():
                raise ConfigError(f"{file}: targets.{name}.system_prompt_file: {prompt} is empty")
            config.targets[name] = endpoint.model_copy(update={"system_prompt": text})
    return config


def _known_fields() -> set[str]:
    names: set[str] = set()
    for model in (ModelConfig, EmbedderConfig, RetrievalConfig, InterviewConfig, Budgets, Config):
        names.update(model.model_fields)
    return names - {"api_key_env"}


def _is_secret_name(name: Any) -> bool:
    """A key-like setting name (``api_key``, ``token``...) that is not one of viva's own fields
    (``max_tokens``), or ``api_key_env`` (whose value may be a key given by mistake)."""
    return isinstance(name, str) and name not in _known_fields() and bool(_SECRET_FIELD_RE.search(name))


def _is_secret_path(loc: tuple[Any, ...]) -> bool:
    return any(_is_secret_name(p) for p in loc)


def _describe(file: Path, err: Any) -> str:
    """One line for a validation error; a value given for a key-like field is never printed."""
    path = _key_path(err["loc"])
    value = err.get("input")
    secret = _is_secret_path(err["loc"]) or "headers" in err["loc"] or (isinstance(value, str) and _redact.looks_like_key(value))
    if err["type"] == "extra_forbidden" and _is_secret_path(err["loc"][-1:]):
        return (f"{file}: {path}: API keys never go in the config file (the value is not shown); put the key "
                "in an environment variable and name it with api_key_env, e.g. api_key_env: OPENAI_API_KEY")
    if secret:
        return f"{file}: {path}: {err['msg']} (the value given is not shown)"
    return f"{file}: {path}: {err['msg']} (got {_redact.redact(repr(value))})"


def _register_inline_secrets(data: Any, under_secret: bool = False) -> None:
    """Register every string value under a key-like name (``api_key: ...``) found in the file, so a key
    written in the config by mistake is redacted wherever it could still travel."""
    if isinstance(data, dict):
        for k, v in data.items():
            _register_inline_secrets(v, under_secret or (_is_secret_name(k) and k != "api_key_env"))
    elif isinstance(data, list):
        for v in data:
            _register_inline_secrets(v, under_secret)
    elif isinstance(data, str) and (under_secret or _redact.looks_like_key(data)):
        _redact.register_secret(data)


def read_text_file(file: str | os.PathLike[str], error: type[Exception] = ValueError, what: str = "file") -> str:
    """Read a UTF-8 text file (a BOM is dropped); every problem is one ``error`` naming the file.

    Raises:
        error: missing, a folder, a FIFO, device or socket, over the input size limit, unreadable,
            binary (NUL bytes) or not UTF-8 (with the line and byte).
    """
    from engine.safeload import InputError, read_input

    path = Path(file)
    try:
        data = read_input(path)  # a regular file only, at most VIVA_MAX_INPUT_MB
    except InputError as exc:
        raise error(f"{path}: {exc.reason}") from None
    except FileNotFoundError:
        raise error(f"{path}: {what} not found") from None
    except IsADirectoryError:
        raise error(f"{path}: expected a {what}, got a folder") from None
    except OSError as exc:
        raise error(f"{path}: cannot read {what} ({exc.strerror or exc})") from None
    if b"\x00" in data:
        line = data[: data.index(b"\x00")].count(b"\n") + 1
        raise error(f"{path}:{line}: binary data (NUL bytes), not a text {what}; give a UTF-8 YAML file") from None
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        line = data[: exc.start].count(b"\n") + 1
        raise error(f"{path}:{line}: not UTF-8 (invalid byte 0x{data[exc.start]:02x} at byte {exc.start}); "
                    f"re-save the {what} as UTF-8") from None


class _StrictLoader(yaml.SafeLoader):
    """``yaml.SafeLoader`` that refuses a key given twice in one mapping."""


class DuplicateKeyError(yaml.YAMLError):
    """A mapping that names the same key twice (YAML would silently keep the last)."""

    def __init__(self, key: Any, line: int, first: int):
        super().__init__(f"duplicate key {key!r} (first given at line {first}); remove one of them")
        self.key, self.line, self.first = key, line, first


def _construct_mapping(loader: _StrictLoader, node: yaml.MappingNode, deep: bool = False) -> Any:
    seen: dict[Any, int] = {}
    for key_node, _value in node.value:
        if key_node.tag == "tag:yaml.org,2002:merge":
            continue
        key = loader.construct_object(key_node, deep=True)
        try:
            first = seen.get(key)
        except TypeError:  # an unhashable key: SafeLoader reports it
            continue
        line = key_node.start_mark.line + 1
        if first is not None:
            raise DuplicateKeyError(key, line, first)
        seen[key] = line
    return yaml.SafeLoader.construct_mapping(loader, node, deep=deep)


_StrictLoader.add_constructor(yaml.resolver.BaseResolver.DEFAULT_MAPPING_TAG, _construct_mapping)
StrictLoader = _StrictLoader
"""The YAML loader of every file viva reads: safe, and a key given twice is :class:`DuplicateKeyError`."""


def load_yaml(text: str, file: str | os.PathLike[str], error: type[Exception] = ValueError) -> Any:
    """Parse YAML, refusing duplicate keys; every problem is one ``error`` naming the file and line.

    Args:
        text: the YAML text.
        file: the file it came from (for the message).
        error: the exception class to raise (``ConfigError``, ``BenchError``...).

    Raises:
        error: not valid YAML, or a key given twice in one mapping (``FILE:LINE: ...``).
    """
    try:
        return __import__("engine.safeload", fromlist=["load_yaml"]).load_yaml(text, _StrictLoader)  # capped aliases
    except DuplicateKeyError as exc:
        raise error(f"{file}:{exc.line}: {exc}") from None
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f":{mark.line + 1}" if mark is not None else ""
        raise error(f"{file}{where}: not valid YAML ({getattr(exc, 'problem', None) or exc})") from None
