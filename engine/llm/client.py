"""One async client for every role (kernel, judge, target) over ``openai.AsyncOpenAI``.

- retries with exponential backoff and jitter on 429 / 5xx / timeouts / dropped connections,
  honouring ``Retry-After``;
- a concurrency limit per endpoint (``max_concurrency`` of its config);
- JSON outputs validated against a pydantic model, with a bounded number of repair re-asks;
- every call recorded in ``llm_calls`` (secrets redacted), and the same table used as a cache:
  an identical request (base_url, model, messages, parameters) is answered from it.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import logging
import random
import re
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, TypeVar

import openai
from openai.types.chat import ChatCompletion, ChatCompletionChunk
from pydantic import BaseModel, ValidationError

from engine.config import ModelConfig
from engine.store import Store, dumps, now_iso

log = logging.getLogger("viva.llm")

T = TypeVar("T", bound=BaseModel)
Message = dict[str, str]

RETRY_CAP_SECONDS = 60.0
BACKOFF_BASE_SECONDS = 0.5


class LLMError(Exception):
    """An LLM call that failed for good; the message names the endpoint, the model and the cause."""

    def __init__(self, message: str, *, status: int | None = None, endpoint: str = ""):
        super().__init__(message)
        self.status = status
        self.endpoint = endpoint


class JSONOutputError(LLMError):
    """The model did not produce valid JSON for the schema within the allowed repairs."""


class _TruncatedStream(Exception):
    """A stream that ended without a finish reason (connection dropped mid-answer)."""


@dataclass
class ChatResult:
    """The outcome of one logical chat call (possibly after retries, possibly from the cache)."""

    text: str
    tokens_in: int = 0
    tokens_out: int = 0
    latency_ms: float = 0.0
    cost: float = 0.0
    cached: bool = False
    call_id: int | None = None
    attempts: int = 1
    finish_reason: str | None = None


@dataclass
class Usage:
    """Tokens and cost accumulated over several calls (e.g. one turn)."""

    tokens_in: int = 0
    tokens_out: int = 0
    cost: float = 0.0
    calls: int = 0
    cached_calls: int = 0

    def add(self, result: ChatResult) -> None:
        """Add one call's tokens and cost, and count the call (and whether the cache answered it)."""
        self.tokens_in += result.tokens_in
        self.tokens_out += result.tokens_out
        self.cost += result.cost
        self.calls += 1
        self.cached_calls += int(result.cached)


@dataclass
class JSONResult:
    """A validated JSON output with the calls it took (first answer plus repairs)."""

    value: Any
    results: list[ChatResult] = field(default_factory=list)

    @property
    def repairs(self) -> int:
        """The repair calls it took: every call after the first."""
        return max(0, len(self.results) - 1)


# Limits and clients are per event loop: asyncio primitives and httpx pools belong to one loop.
_semaphores: dict[tuple[int, str], asyncio.Semaphore] = {}
_clients: dict[tuple[int, str, str, float], openai.AsyncOpenAI] = {}


def _loop_id() -> int:
    return id(asyncio.get_running_loop())


def _semaphore(endpoint: ModelConfig) -> asyncio.Semaphore:
    key = (_loop_id(), endpoint.base_url)
    sem = _semaphores.get(key)
    if sem is None:
        sem = _semaphores[key] = asyncio.Semaphore(endpoint.max_concurrency)
    return sem


def _client(endpoint: ModelConfig, api_key: str) -> openai.AsyncOpenAI:
    key = (_loop_id(), endpoint.base_url, hashlib.sha256(api_key.encode()).hexdigest(), endpoint.timeout)
    client = _clients.get(key)
    if client is None:
        client = _clients[key] = openai.AsyncOpenAI(
            base_url=endpoint.base_url, api_key=api_key, timeout=endpoint.timeout, max_retries=0
        )
    return client


def cache_key(base_url: str, model: str, messages: Sequence[Message], params: dict[str, Any]) -> str:
    """sha256 of the request identity: endpoint, model, messages and sampling parameters."""
    blob = json.dumps(
        {"base_url": base_url.rstrip("/"), "model": model, "messages": list(messages), "params": params},
        sort_keys=True, ensure_ascii=False,
    )
    return hashlib.sha256(blob.encode("utf-8")).hexdigest()


def _retry_after(exc: openai.APIStatusError) -> float | None:
    value = exc.response.headers.get("retry-after") if exc.response is not None else None
    if value is None:
        return None
    try:
        return max(0.0, float(value))
    except ValueError:
        return None


class LLMClient:
    """Chat and JSON calls for one role on one endpoint.

    Args:
        store: where calls are recorded and cached.
        endpoint: the endpoint's configuration.
        role: ``kernel``, ``judge`` or ``target`` (recorded with each call).
        use_cache: answer identical requests from the store (``--no-cache`` turns it off).
        session_id: recorded with each call, for per-session accounting.
        identity: stable name of the endpoint for the cache key (default: its base_url).
    """

    def __init__(self, store: Store, endpoint: ModelConfig, role: str, use_cache: bool = True,
                 session_id: int | None = None, identity: str | None = None):
        self.store = store
        # What the cache knows the endpoint by: its base_url, unless the address changes from run
        # to run for the same model (the embedded local server on a random port).
        self.identity = identity or endpoint.base_url
        self.endpoint = endpoint
        self.role = role
        self.use_cache = use_cache
        self.session_id = session_id

    @property
    def label(self) -> str:
        """``model@base_url``: the endpoint as named in log lines."""
        return f"{self.endpoint.model}@{self.endpoint.base_url}"

    def _params(self, overrides: dict[str, Any]) -> dict[str, Any]:
        params: dict[str, Any] = {"temperature": self.endpoint.temperature}
        if self.endpoint.max_tokens:
            params["max_tokens"] = self.endpoint.max_tokens
        params.update({k: v for k, v in overrides.items() if v is not None})
        return params

    def _redact(self, text: str, api_key: str) -> str:
        if api_key and len(api_key) >= 6 and api_key != "sk-no-key":
            text = text.replace(api_key, "[REDACTED]")
        return text

    def _cost(self, tokens_in: int, tokens_out: int) -> float:
        return tokens_in / 1e6 * self.endpoint.price_in + tokens_out / 1e6 * self.endpoint.price_out

    def _from_cache(self, key: str) -> dict[str, Any] | None:
        return self.store.one(
            "SELECT id, response, tokens_in, tokens_out FROM llm_calls "
            "WHERE cache_key = ? AND error IS NULL AND cached = 0 ORDER BY id DESC LIMIT 1",
            (key,),
        )

    def _record(self, **row: Any) -> int:
        row.setdefault("session_id", self.session_id)
        row.setdefault("created_at", now_iso())
        return self.store.insert("llm_calls", row)

    async def chat(
        self,
        messages: Sequence[Message],
        *,
        stream: bool = False,
        on_token: Callable[[str], Any] | None = None,
        on_reset: Callable[[], Any] | None = None,
        **params: Any,
    ) -> ChatResult:
        """Send a chat completion and return its text.

        Args:
            messages: OpenAI-style ``{"role", "content"}`` messages.
            stream: stream the answer; ``on_token`` is called with each piece as it arrives and
                ``on_reset`` when a dropped stream is retried from the start.
            **params: sampling parameters (temperature, max_tokens, response_format, seed...).

        Raises:
            LLMError: after the configured retries, or at once for a non-retryable status; the
                message names the endpoint and the status.
        """
        api_key = self.endpoint.api_key()
        params = self._params(params)
        messages = [dict(m) for m in messages]
        key = cache_key(self.identity, self.endpoint.model, messages, params)
        request_text = self._redact(dumps({"messages": messages, "params": params}), api_key)

        if self.use_cache:
            hit = self._from_cache(key)
            if hit is not None:
                text = json.loads(hit["response"])["text"]
                if on_token is not None and text:
                    on_token(text)
                call_id = self._record(
                    cache_key=key, role=self.role, base_url=self.endpoint.base_url,
                    model=self.endpoint.model, request=request_text, response=hit["response"],
                    tokens_in=hit["tokens_in"], tokens_out=hit["tokens_out"], cached=1,
                )
                return ChatResult(text, hit["tokens_in"], hit["tokens_out"], 0.0, 0.0, True, call_id, 0)

        retries: list[dict[str, Any]] = []
        attempts = 0
        async with _semaphore(self.endpoint):
            start = time.perf_counter()  # latency excludes time queued behind the endpoint's limit
            while True:
                attempts += 1
                try:
                    if stream:
                        text, t_in, t_out, finish = await self._stream(api_key, messages, params, on_token)
                    else:
                        text, t_in, t_out, finish = await self._once(api_key, messages, params)
                    break
                except Exception as exc:  # classified below; anything unknown is re-raised
                    status, wait, retryable, reason = self._classify(exc, attempts)
                    if not retryable or attempts > self.endpoint.max_retries:
                        message = (
                            f"{self.role} call to {self.endpoint.base_url} (model {self.endpoint.model}) "
                            f"failed after {attempts} attempt(s): {reason}"
                        )
                        message = self._redact(message, api_key)
                        self._record(
                            cache_key=key, role=self.role, base_url=self.endpoint.base_url,
                            model=self.endpoint.model, request=request_text, error=message,
                            attempts=attempts, retries=dumps(retries),
                            latency_ms=(time.perf_counter() - start) * 1000,
                        )
                        log.warning("%s", message)
                        raise LLMError(message, status=status, endpoint=self.endpoint.base_url) from None
                    retries.append({"attempt": attempts, "status": status, "reason": reason[:200], "wait": wait})
                    log.info("%s retry %d after %.2fs: %s", self.label, attempts, wait, reason[:200])
                    if stream and on_reset is not None:
                        on_reset()
                    await asyncio.sleep(wait)
        latency = (time.perf_counter() - start) * 1000
        response_text = self._redact(dumps({"text": text, "finish_reason": finish}), api_key)
        cost = self._cost(t_in, t_out)
        call_id = self._record(
            cache_key=key, role=self.role, base_url=self.endpoint.base_url, model=self.endpoint.model,
            request=request_text, response=response_text, tokens_in=t_in, tokens_out=t_out,
            latency_ms=latency, cost=cost, attempts=attempts, retries=dumps(retries),
        )
        log.info("%s %s ok in %.0f ms (%d in, %d out, %d attempt(s))",
                 self.role, self.label, latency, t_in, t_out, attempts)
        return ChatResult(text, t_in, t_out, latency, cost, False, call_id, attempts, finish)

    def _classify(self, exc: Exception, attempt: int) -> tuple[int | None, float, bool, str]:
        """(status, wait seconds, retryable, reason) for an exception from one attempt."""
        backoff = min(RETRY_CAP_SECONDS, BACKOFF_BASE_SECONDS * 2 ** (attempt - 1)) * (0.5 + random.random())
        if isinstance(exc, openai.APIStatusError):
            status = exc.status_code
            reason = f"HTTP {status}: {_short(exc)}"
            if status == 429 or status >= 500:
                after = _retry_after(exc)
                wait = min(RETRY_CAP_SECONDS, after) if after is not None else backoff
                return status, wait, True, reason
            return status, 0.0, False, reason
        if isinstance(exc, openai.APITimeoutError):
            return None, backoff, True, f"timed out after {self.endpoint.timeout:g}s"
        if isinstance(exc, openai.APIConnectionError):
            return None, backoff, True, f"connection error: {exc.__cause__ or exc}"
        if isinstance(exc, _TruncatedStream):
            return None, backoff, True, "stream ended before the answer was complete"
        raise exc

    async def _once(self, api_key: str, messages: list[Message], params: dict[str, Any]):
        client = _client(self.endpoint, api_key)
        # The client's low-level post: the same transport, auth and errors as chat.completions.create,
        # without re-validating our already-plain JSON body (a measurable cost per call in a large run).
        resp = await client.post("/chat/completions", cast_to=ChatCompletion,
                                 body={"model": self.endpoint.model, "messages": messages, **params})
        if not resp.choices:
            raise LLMError(f"{self.endpoint.base_url} returned no choices", endpoint=self.endpoint.base_url)
        choice = resp.choices[0]
        text = choice.message.content or ""
        usage = resp.usage
        t_in = usage.prompt_tokens if usage else 0
        t_out = usage.completion_tokens if usage else 0
        return text, t_in, t_out, choice.finish_reason

    async def _stream(self, api_key: str, messages: list[Message], params: dict[str, Any],
                      on_token: Callable[[str], Any] | None):
        client = _client(self.endpoint, api_key)
        pieces: list[str] = []
        finish = None
        t_in = t_out = 0
        try:
            stream = await client.post(
                "/chat/completions", cast_to=ChatCompletion, stream=True,
                stream_cls=openai.AsyncStream[ChatCompletionChunk],
                body={"model": self.endpoint.model, "messages": messages, "stream": True,
                      "stream_options": {"include_usage": True}, **params},
            )
            async for chunk in stream:
                if chunk.usage:
                    t_in, t_out = chunk.usage.prompt_tokens, chunk.usage.completion_tokens
                for choice in chunk.choices:
                    piece = choice.delta.content if choice.delta else None
                    if piece:
                        pieces.append(piece)
                        if on_token is not None:
                            on_token(piece)
                    if choice.finish_reason:
                        finish = choice.finish_reason
        except (openai.APIError, openai.APIConnectionError):
            raise
        except Exception as exc:  # httpx read errors mid-stream surface unwrapped
            if finish is None:
                raise _TruncatedStream(str(exc)) from exc
            raise
        if finish is None:
            raise _TruncatedStream("no finish_reason")
        if not t_out:
            t_out = len(pieces)
        return "".join(pieces), t_in, t_out, finish

    async def json(
        self,
        messages: Sequence[Message],
        schema: type[T],
        *,
        validate: Callable[[T], str | None] | None = None,
        max_repairs: int = 2,
        **params: Any,
    ) -> T:
        """Ask for JSON and return it validated against ``schema``; see :meth:`json_result`."""
        return (await self.json_result(messages, schema, validate=validate, max_repairs=max_repairs,
                                       **params)).value

    async def json_result(
        self,
        messages: Sequence[Message],
        schema: type[T],
        *,
        validate: Callable[[T], str | None] | None = None,
        max_repairs: int = 2,
        **params: Any,
    ) -> JSONResult:
        """Ask for a JSON object, validate it, and re-ask with the error up to ``max_repairs`` times.

        Args:
            schema: the pydantic model the answer must match.
            validate: extra check on the parsed value returning an error message (e.g. "criterion
                c9 does not exist") or None when the value is acceptable.

        Raises:
            JSONOutputError: still invalid after the repairs; the message holds the last problem.
        """
        convo = [dict(m) for m in messages]
        results: list[ChatResult] = []
        problem = ""
        for _ in range(max_repairs + 1):
            result = await self.chat(convo, **params)
            results.append(result)
            try:
                value = schema.model_validate(extract_json(result.text))
                problem = (validate(value) if validate else None) or ""
            except (ValueError, ValidationError) as exc:
                problem = _compact_error(exc)
            if not problem:
                return JSONResult(value, results)
            convo = convo + [
                {"role": "assistant", "content": result.text},
                {"role": "user", "content": (
                    f"Your reply could not be used: {problem}\n"
                    "Reply again with only the corrected JSON object, no prose and no code fence.")},
            ]
        raise JSONOutputError(
            f"{self.role} at {self.endpoint.base_url} (model {self.endpoint.model}) gave no valid JSON "
            f"after {max_repairs} repair(s): {problem}",
            endpoint=self.endpoint.base_url,
        )


_FENCE = re.compile(r"```(?:json)?\s*(.*?)```", re.DOTALL)


def extract_json(text: str) -> Any:
    """Parse the JSON object in a model reply (bare, fenced, or surrounded by prose).

    Raises:
        ValueError: no JSON object could be parsed.
    """
    text = text.strip()
    candidates = [text]
    candidates += [m.group(1).strip() for m in _FENCE.finditer(text)]
    start, end = text.find("{"), text.rfind("}")
    if 0 <= start < end:
        candidates.append(text[start:end + 1])
    for candidate in candidates:
        try:
            return json.loads(candidate)
        except json.JSONDecodeError:
            continue
    raise ValueError(f"not valid JSON: {text[:120]!r}")


def _compact_error(exc: Exception) -> str:
    if isinstance(exc, ValidationError):
        parts = [f"{'.'.join(str(p) for p in e['loc']) or 'value'}: {e['msg']}" for e in exc.errors()[:5]]
        return "; ".join(parts)
    return str(exc)


def _short(exc: openai.APIStatusError) -> str:
    body = exc.body
    if isinstance(body, dict):
        err = body.get("error", body)
        if isinstance(err, dict):
            return str(err.get("message", err))[:200]
        return str(err)[:200]
    return str(exc.message)[:200]
