"""Transport and retries: one chat completion sent to an endpoint, over ``openai.AsyncOpenAI``'s low-level post.

- retries with exponential backoff and jitter on 429 / 5xx / timeouts / dropped connections, honouring
  ``Retry-After`` (:func:`parse_retry_after`);
- a concurrency limit per endpoint (``max_concurrency`` of its config), and the SDK clients of an endpoint,
  key and headers (:class:`Lanes`: another client for every :data:`LANE` requests in flight), both per event
  loop (:func:`loop_state`);
- a call to a loopback endpoint that times out is not sent again: the server is still computing it, and a
  second copy would queue behind the first (the default loopback timeout is 600 s);
- bounded replies: one call takes at most ``max_call_seconds`` in all and keeps at most ``max_reply_chars``
  characters; over either the reply is cut and marked :data:`TRUNCATED`; a reply that is not UTF-8 or whose
  body nests too deeply is one line of error, never a traceback;
- a stream that ends before its first piece (how llama-cpp-python's server refuses an overflowing prompt) is
  asked once without streaming; a server that refuses ``stream_options`` is asked without it;
- an overflow's 400 is recognised and the context it names read (:func:`overflows`,
  :func:`context_in_message`).

:meth:`Transport.send` returns what the server answered, unredacted, or raises :class:`CallFailed` with
the attempts it took; recording, the cache, redaction of what callers see and learning a context are
:class:`engine.llm.LLMClient`'s. Error messages from the server pass :func:`engine.redact.redact` before
they are cut or logged here.
"""

from __future__ import annotations

import asyncio
import atexit
import contextlib
import email.utils
import hashlib
import json
import logging
import random
import re
import time
import weakref
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from engine.config import ModelConfig
from engine.llm.structured import refuses_format
from engine.redact import StreamRedactor, redact

if TYPE_CHECKING:
    import openai

log = logging.getLogger("viva.llm")

Message = dict[str, str]

RETRY_CAP_SECONDS = 60.0
BACKOFF_BASE_SECONDS = 0.5
TRUNCATED = "truncated"
"""The ``finish_reason`` recorded for a reply cut at ``max_reply_chars`` or ``max_call_seconds``."""


class LLMError(Exception):
    """An LLM call that failed for good; the message names the endpoint, the model and the cause."""

    def __init__(self, message: str, *, status: int | None = None, endpoint: str = ""):
        super().__init__(redact(message))
        self.status = status
        self.endpoint = endpoint


_OVERFLOW_RE = re.compile(r"context (?:window|length)|maximum context|exceeds? (?:the )?(?:context|model)|"
                          r"available context size|too many tokens|prompt is too long|n_ctx", re.I)


_CONTEXT_SIZE_RES = tuple(re.compile(p, re.I) for p in (
    r"context window of (\d+)",  # llama-cpp-python's own words: "Requested tokens (4411) exceed context window of 2048"
    r"maximum context length is (\d+)",  # OpenAI, vLLM, llama-cpp-python's server: "...is 8192 tokens. However..."
    r"available context size \((\d+) tokens?\)",  # llama.cpp's llama-server
    r"context length of (?:only )?(\d+)",  # LM Studio: "the model is loaded with context length of only 4096"
    r"must be <= (\d+)",  # TGI: "`inputs` tokens + `max_new_tokens` must be <= 4096"
))


def context_in_message(message: str) -> int | None:
    """The context size in tokens an overflow message names (llama.cpp's, OpenAI's, vLLM's, llama-server's,
    LM Studio's and TGI's wordings), or None when it names none."""
    for pattern in _CONTEXT_SIZE_RES:
        found = pattern.search(message)
        if found:
            n = int(found.group(1))
            return n if n > 0 else None
    return None


class _TruncatedStream(Exception):
    """A stream that ended without a finish reason (connection dropped mid-answer); ``pieces``: how many
    pieces of the answer had arrived."""

    def __init__(self, message: str, pieces: int = 0):
        super().__init__(message)
        self.pieces = pieces


class _OverDeadline(Exception):
    """A non-streamed call that took longer than the endpoint's ``max_call_seconds``."""


class CallFailed(Exception):
    """A call that failed for good (not retryable, or out of retries): the last attempt's ``status`` and
    ``reason`` (redacted), the ``attempts`` made, the ``retries`` (one dict per retried attempt) and the
    ``latency_ms`` from the first attempt."""

    def __init__(self, status: int | None, reason: str, attempts: int, retries: list[dict[str, Any]],
                 latency_ms: float):
        super().__init__(reason)
        self.status, self.reason, self.attempts, self.retries, self.latency_ms = (
            status, reason, attempts, retries, latency_ms)


@dataclass
class Sent:
    """What one call's server answered (unredacted): ``usage`` (prompt, completion tokens) or None when the
    server gave no counts; the ``attempts`` it took, the ``retries`` and the ``latency_ms`` (queueing behind
    the endpoint's limit excluded)."""

    text: str
    usage: tuple[int, int] | None
    finish: str | None
    attempts: int
    retries: list[dict[str, Any]]
    latency_ms: float


def overflows(status: int | None, reason: str) -> bool:
    """Whether a failed call's status and reason are the server saying the prompt does not fit its context."""
    return status == 400 and bool(_OVERFLOW_RE.search(reason))


# Limits and clients are per event loop: asyncio primitives and httpx pools belong to one loop. Keyed by
# the loop itself, weakly: a closed loop's clients go with it (never handed to a new loop that happens
# to reuse its id).
_per_loop: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, dict[tuple[Any, ...], Any]] = (
    weakref.WeakKeyDictionary())
# Clients are kept for their loop's life (making one costs tens of ms: the SDK loads the CA bundle), and
# let go before the interpreter tears its modules down, where the SDK's finaliser would fail noisily.
atexit.register(_per_loop.clear)


def loop_state() -> dict[tuple[Any, ...], Any]:
    """What this event loop keeps per endpoint (limits, SDK clients, and the client's context sizes)."""
    loop = asyncio.get_running_loop()
    state = _per_loop.get(loop)
    if state is None:
        state = _per_loop[loop] = {}
    return state


def loop_states() -> list[dict[tuple[Any, ...], Any]]:
    """The per-loop states of every live event loop (to forget what they hold)."""
    return list(_per_loop.values())


_no_stream_options: set[str] = set()
"""Base URLs that refused ``stream_options`` (HTTP 400/422 naming it): their streams are sent without it."""


def _semaphore(endpoint: ModelConfig) -> asyncio.Semaphore:
    state = loop_state()
    key = ("limit", endpoint.base_url)
    sem = state.get(key)
    if sem is None:
        sem = state[key] = asyncio.Semaphore(endpoint.max_concurrency)
    return sem


LANE = 8
"""Requests in flight on one SDK client before another is opened for the endpoint (:class:`Lanes`)."""

_ssl_context: Any = None


def _shared_ssl_context() -> Any:
    """The TLS context every SDK client of the process shares: the one httpx makes by default (its CA
    bundle, the environment's settings), built once. Building it is most of what a new SDK client costs
    (about 15 ms), so a lane is cheap to open."""
    global _ssl_context
    if _ssl_context is None:
        import httpx2

        _ssl_context = httpx2.create_ssl_context()
    return _ssl_context


WARM_MODULES = ("httpcore2._async.http11", "httpcore2._backends.anyio", "anyio._backends._asyncio", "h11",
                "encodings.idna", "truststore")
"""What a process's first call would otherwise import in the middle of a session's turn (the SDK's HTTP
stack past ``import openai``); :func:`prepare` loads them. Names of other packages' private modules, so
each is best-effort: one that no longer exists is simply loaded later, by the call that needs it."""


def prepare() -> None:
    """Load, once a process, what its first LLM call would otherwise pay inside a session's turn: the SDK,
    its HTTP stack (:data:`WARM_MODULES`) and the shared TLS context (:func:`_shared_ssl_context`, about
    15 ms). ``engine.interview.pool.prepare`` calls it before a process takes its first session."""
    import importlib

    import openai  # noqa: F401  (half a second of imports)

    _shared_ssl_context()
    for name in WARM_MODULES:
        try:
            importlib.import_module(name)
        except ImportError:  # another version of the stack: loaded later, by the call that needs it
            pass


class Lanes:
    """The SDK clients of one endpoint, key and headers on one event loop, each with its own connection pool.

    Why more than one: httpcore's pool re-examines every connection it holds each time a request is
    added or a response closed (an idle one by probing its socket), so with one pool for 64 sessions a
    call paid for 100 or more probes, a large share of a turn's CPU at that load (``bench/engine.py``'s
    64 sessions). A request takes the client with the fewest requests in flight; a new client is opened
    only when every open one has :data:`LANE` in flight, so a lone session always uses the first, and a
    pool holds about :data:`LANE` connections plus its idle ones whatever the load. Connections are never
    shared between clients: a keep-alive connection stays with the client that opened it.
    """

    def __init__(self, endpoint: ModelConfig, api_key: str, headers: dict[str, str]):
        self.endpoint, self.api_key, self.headers = endpoint, api_key, headers
        self.clients: list[Any] = []
        self.busy: list[int] = []

    def _open(self) -> int:
        import openai  # imported when the first call is made: listing sessions never pays for it

        http = openai.DefaultAsyncHttpxClient(verify=_shared_ssl_context())
        self.clients.append(openai.AsyncOpenAI(
            base_url=self.endpoint.base_url, api_key=self.api_key, timeout=self.endpoint.call_timeout,
            max_retries=0, default_headers=self.headers or None, http_client=http))
        self.busy.append(0)
        return len(self.clients) - 1

    @contextlib.contextmanager
    def lease(self) -> Iterator[Any]:
        """A client for one request (its response read to the end inside the block)."""
        i = min(range(len(self.busy)), key=self.busy.__getitem__) if self.busy else -1
        if i < 0 or self.busy[i] >= LANE:
            i = self._open()
        self.busy[i] += 1
        try:
            yield self.clients[i]
        finally:
            self.busy[i] -= 1


def _lanes(endpoint: ModelConfig, api_key: str) -> Lanes:
    state = loop_state()
    headers = endpoint.header_values()
    secret = hashlib.sha256(json.dumps([api_key, sorted(headers.items())]).encode()).hexdigest()
    key = ("client", endpoint.base_url, secret, endpoint.call_timeout)
    lanes = state.get(key)
    if lanes is None:
        lanes = state[key] = Lanes(endpoint, api_key, headers)
    return lanes


def parse_retry_after(value: str | None, now: float | None = None) -> float | None:
    """Seconds to wait from a ``Retry-After`` value: delay-seconds (``5``, ``1.5``) or an HTTP-date
    (``Wed, 21 Oct 2015 07:28:00 GMT``, RFC 9110 10.2.3), counted from ``now`` (default: the clock).

    Returns:
        The wait (0 for a date in the past), or None when the value is neither form.
    """
    if value is None:
        return None
    value = value.strip()
    try:
        seconds = float(value)
    except ValueError:
        pass
    else:
        return max(0.0, seconds) if seconds == seconds else None  # NaN is no answer
    try:
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError, IndexError):
        return None
    if when is None:
        return None
    if when.tzinfo is None:  # HTTP-dates are GMT; an obsolete form without a zone is read as such
        from datetime import UTC

        when = when.replace(tzinfo=UTC)
    return max(0.0, when.timestamp() - (time.time() if now is None else now))


def _retry_after(exc: openai.APIStatusError) -> float | None:
    headers = exc.response.headers if exc.response is not None else {}
    ms = headers.get("retry-after-ms")
    if ms is not None:
        try:
            return max(0.0, float(ms) / 1000)
        except ValueError:
            pass
    return parse_retry_after(headers.get("retry-after"))


class Transport:
    """Sends one endpoint's chat completions, with its retries, limits and caps (see the module)."""

    def __init__(self, endpoint: ModelConfig):
        self.endpoint = endpoint

    @property
    def label(self) -> str:
        """``model@base_url``: the endpoint as named in log lines."""
        return f"{self.endpoint.model}@{self.endpoint.base_url}"

    async def send(self, api_key: str, messages: list[Message], params: dict[str, Any], *, stream: bool = False,
                   on_token: Callable[[str], Any] | None = None, on_reset: Callable[[], Any] | None = None) -> Sent:
        """Send one chat completion, retrying what is retryable (at most the endpoint's ``max_retries``).

        ``on_token`` gets each streamed piece, redacted (never split inside a secret), and ``on_reset`` is
        called when a dropped stream is retried from the start.

        Raises:
            CallFailed: a status that is not retried, or the retries ran out.
        """
        retries: list[dict[str, Any]] = []
        attempts = 0
        shown = StreamRedactor()  # streamed pieces reach on_token redacted, never split inside a secret
        emit = None
        if on_token is not None:
            def emit(piece: str) -> None:
                safe = shown.feed(piece)
                if safe:
                    on_token(safe)
        async with _semaphore(self.endpoint):
            start = time.perf_counter()  # latency excludes time queued behind the endpoint's limit
            plain = False  # a stream that never sent a piece, every time: asked once without streaming
            limit = self.endpoint.max_retries
            while True:
                attempts += 1
                try:
                    if stream and not plain:
                        text, usage, finish = await self.stream(api_key, messages, params, emit)
                    else:
                        try:
                            text, usage, finish = await asyncio.wait_for(
                                self.once(api_key, messages, params), self.endpoint.call_deadline)
                        except TimeoutError:
                            raise _OverDeadline() from None
                        if plain and emit is not None and text:
                            emit(text)  # the answer asked without streaming arrives as one piece
                    if stream and on_token is not None:
                        rest = shown.flush()
                        if rest:
                            on_token(rest)
                    break
                except Exception as exc:  # classified below; anything unknown is re-raised
                    status, wait, retryable, reason = self.classify(exc, attempts)
                    if (stream and not plain and isinstance(exc, _TruncatedStream) and not exc.pieces
                            and (not retryable or attempts > limit)):
                        # llama-cpp-python's server refuses a streamed request (a prompt over its context)
                        # by dropping the stream it has opened, with no word of why; without streaming it
                        # answers the same request with its error (an overflow's names the context)
                        plain, limit = True, attempts + 1  # (one retry for it: the dropped connection's pool)
                        retries.append({"attempt": attempts, "status": status, "reason": reason[:200], "wait": 0.0,
                                        "then": "asked without streaming"})
                        log.info("%s: the stream ended before its first piece %d time(s); asking once without "
                                 "streaming", self.label, attempts)
                        shown.reset()
                        continue
                    if not retryable or attempts > limit:
                        raise CallFailed(status, reason, attempts, retries,
                                         (time.perf_counter() - start) * 1000) from None
                    retries.append({"attempt": attempts, "status": status, "reason": reason[:200], "wait": wait})
                    log.info("%s retry %d after %.2fs: %s", self.label, attempts, wait, reason[:200])
                    shown.reset()
                    if stream and on_reset is not None:
                        on_reset()
                    await asyncio.sleep(wait)
        latency = (time.perf_counter() - start) * 1000
        return Sent(text, usage, finish, attempts, retries, latency)

    def classify(self, exc: Exception, attempt: int) -> tuple[int | None, float, bool, str]:
        """(status, wait seconds, retryable, reason) for an exception from one attempt."""
        import openai

        backoff = min(RETRY_CAP_SECONDS, BACKOFF_BASE_SECONDS * 2 ** (attempt - 1)) * (0.5 + random.random())
        if isinstance(exc, openai.APIStatusError):
            status = exc.status_code
            reason = f"HTTP {status}: {_short(exc)}"  # _short redacts before it cuts
            if status >= 500 and refuses_format(status, reason):
                return status, 0.0, False, reason  # a refused response_format: the same again gets the same
            if status == 429 or status >= 500:
                after = _retry_after(exc)
                wait = min(RETRY_CAP_SECONDS, after) if after is not None else backoff
                return status, wait, True, reason
            return status, 0.0, False, reason
        if isinstance(exc, _OverDeadline):
            return None, 0.0, False, (f"the call took longer than {self.endpoint.call_deadline:g}s in all "
                                      "(max_call_seconds) and was cut")
        if isinstance(exc, openai.APITimeoutError):
            timeout = self.endpoint.call_timeout
            if self.endpoint.loopback:
                # a local server keeps computing a call its client gave up on: sending it again would
                # queue a second copy behind the first
                return None, 0.0, False, (f"timed out after {timeout:g}s; not sent again, since the local server "
                                          "is still computing it: raise this endpoint's timeout")
            return None, backoff, True, f"timed out after {timeout:g}s"
        if isinstance(exc, UnicodeDecodeError):
            return None, 0.0, False, "the reply is not UTF-8 text"
        if isinstance(exc, RecursionError):
            return None, 0.0, False, "the reply's JSON body is nested too deeply to read"
        if isinstance(exc, openai.APIConnectionError):
            return None, backoff, True, redact(f"connection error: {exc.__cause__ or exc}")[:300]
        if isinstance(exc, _TruncatedStream):
            return None, backoff, True, "stream ended before the answer was complete"
        raise exc

    async def once(self, api_key: str, messages: list[Message], params: dict[str, Any]):
        """One attempt without streaming: (text, usage, finish reason), the text cut at ``max_reply_chars``."""
        with _lanes(self.endpoint, api_key).lease() as client:
            return await self._once(client, messages, params)

    async def _once(self, client: Any, messages: list[Message], params: dict[str, Any]):
        # The client's low-level post: the same transport, auth, retries' errors and status handling as
        # chat.completions.create, with the JSON body read as plain data (``cast_to=object``): neither our
        # already-plain request nor the response is re-validated or built into pydantic objects, a
        # measurable share of a turn's CPU (``bench/engine.py``). The fields are read defensively below.
        resp = await client.post("/chat/completions", cast_to=object,
                                 body={"model": self.endpoint.model, "messages": messages, **params})
        choices = resp.get("choices") if isinstance(resp, dict) else None
        if not choices or not isinstance(choices[0], dict):
            raise LLMError(f"{self.endpoint.base_url} returned no choices", endpoint=self.endpoint.base_url)
        choice = choices[0]
        text = _content((choice.get("message") or {}).get("content"))
        finish = choice.get("finish_reason")
        if len(text) > self.endpoint.max_reply_chars:
            text, finish = text[:self.endpoint.max_reply_chars], TRUNCATED
        return text, _usage(resp.get("usage")), finish

    async def stream(self, api_key: str, messages: list[Message], params: dict[str, Any],
                     on_token: Callable[[str], Any] | None):
        """One streamed attempt: (text, usage, finish reason), each piece passed to ``on_token``; cut at
        ``max_reply_chars`` or ``max_call_seconds`` (:data:`TRUNCATED`). A stream that drops before its finish
        reason is :class:`_TruncatedStream`, with how many pieces had arrived."""
        with _lanes(self.endpoint, api_key).lease() as client:
            return await self._stream(client, messages, params, on_token)

    async def _stream(self, client: Any, messages: list[Message], params: dict[str, Any],
                      on_token: Callable[[str], Any] | None):
        import openai

        pieces: list[str] = []
        size = 0
        finish = None
        usage = None
        cap, deadline = self.endpoint.max_reply_chars, time.monotonic() + self.endpoint.call_deadline
        body = {"model": self.endpoint.model, "messages": messages, "stream": True, **params}
        opened = False
        if self.endpoint.base_url not in _no_stream_options:
            # OpenAI and vLLM then send the counts in a last chunk; llama-cpp-python ignores it and sends none
            body["stream_options"] = {"include_usage": True}
        try:
            try:
                stream = await client.post("/chat/completions", cast_to=object, stream=True,
                                           stream_cls=openai.AsyncStream[object], body=body)
            except openai.APIStatusError as exc:
                # a server that refuses the option (a 400 naming it) is asked again without it, and
                # remembered: like the structured-output step-down, never a failed call
                if "stream_options" not in body or exc.status_code not in (400, 422) or \
                        "stream_options" not in _short(exc):
                    raise
                _no_stream_options.add(self.endpoint.base_url)
                log.info("%s refuses stream_options (%s): streams go without it", self.label, _short(exc))
                del body["stream_options"]
                stream = await client.post("/chat/completions", cast_to=object, stream=True,
                                           stream_cls=openai.AsyncStream[object], body=body)
            opened = True
            async for chunk in stream:  # plain dicts (see _once)
                if not isinstance(chunk, dict):
                    continue
                if chunk.get("usage"):
                    usage = _usage(chunk["usage"])
                for choice in chunk.get("choices") or ():
                    if not isinstance(choice, dict):
                        continue
                    piece = _content((choice.get("delta") or {}).get("content"))
                    if piece:
                        if size + len(piece) > cap:
                            piece = piece[:cap - size]
                            finish = TRUNCATED
                        size += len(piece)
                        pieces.append(piece)
                        if on_token is not None and piece:
                            on_token(piece)
                    if choice.get("finish_reason") and finish != TRUNCATED:
                        finish = choice["finish_reason"]
                if finish == TRUNCATED or time.monotonic() > deadline:
                    finish = TRUNCATED  # an endless stream: cut, and the connection closed below
                    await stream.close()
                    break
        except openai.APIConnectionError as exc:
            if opened and finish is None and not isinstance(exc, openai.APITimeoutError):
                # the connection dropped after the stream opened: a cut stream (how many pieces it had
                # matters: none at all is how llama-cpp-python's server refuses an overflowing prompt)
                raise _TruncatedStream(str(exc.__cause__ or exc), len(pieces)) from exc
            raise
        except openai.APIError:
            raise
        except UnicodeDecodeError:
            raise
        except Exception as exc:  # httpx read errors mid-stream surface unwrapped
            if finish is None:
                raise _TruncatedStream(str(exc), len(pieces)) from exc
            raise
        if finish is None:
            raise _TruncatedStream("no finish_reason", len(pieces))
        return "".join(pieces), usage, finish


def _content(value: Any) -> str:
    """A message's or delta's ``content`` as text: a string, or the text parts of a list of parts."""
    if isinstance(value, str):
        return value
    if isinstance(value, list):
        return "".join(p.get("text") or "" for p in value if isinstance(p, dict) and isinstance(p.get("text"), str))
    return ""


def _usage(value: Any) -> tuple[int, int] | None:
    """(prompt tokens, completion tokens) of a ``usage`` object; None (unknown) when there is none or it
    has neither count; 0 for one malformed count beside a good one."""
    if not isinstance(value, dict) or not any(
            isinstance(value.get(k), int) for k in ("prompt_tokens", "completion_tokens")):
        return None

    def count(name: str) -> int:
        n = value.get(name)
        return n if isinstance(n, int) and not isinstance(n, bool) and n >= 0 else 0

    return count("prompt_tokens"), count("completion_tokens")


def _short(exc: openai.APIStatusError) -> str:
    """The error body's message, redacted first and then cut to 200 characters (never half a key)."""
    body = exc.body
    if isinstance(body, dict):
        err = body.get("error", body)
        text = str(err.get("message", err)) if isinstance(err, dict) else str(err)
    else:
        text = str(exc.message)
    return redact(text)[:200]

