"""One async client for every role (kernel, judge, target) over ``openai.AsyncOpenAI``.

- retries with exponential backoff and jitter on 429 / 5xx / timeouts / dropped connections,
  honouring ``Retry-After``;
- a concurrency limit per endpoint (``max_concurrency`` of its config);
- JSON outputs validated against a pydantic model, with a bounded number of repair re-asks;
- every call recorded in ``llm_calls``, and the same table used as a cache: an identical request
  (base_url, model, messages, parameters) is answered from it (by its ``cache_key``); a request's
  messages are stored once each, as a path of the message tree (:mod:`engine.store.texts`;
  :func:`engine.store.texts.request_of` and ``response_of`` give a call's request and answer back);
- secrets never leave it: answers (streamed pieces too), retry reasons and error messages pass
  :func:`engine.redact.redact` before anyone sees them (a server that echoes the key in an error
  body, a model that repeats a key it was shown).

JSON replies are read by :func:`extract_json`: the *last* top-level JSON object outside any quoted
candidate text, never an object the candidate wrote (see :meth:`LLMClient.json_result`).

Structured output and budgets (issue 23):

- a JSON call sends its schema as ``response_format`` in the endpoint's dialect
  (:mod:`engine.llm.structured`), stepping down on a 400 that names it;
- a reply has at most ``max_tokens`` tokens: the endpoint's own, else the budget of the client's role
  (``max_tokens:`` of the config);
- a repair re-sends the original prompt with the problem and the schema, never the whole bad reply
  (a runaway reply re-sent overflowed the context), sized to a known context like a first prompt
  (:meth:`LLMClient._repair`: the problem and schema counted at JSON's rate, the schema's text left out where
  the server's grammar holds it, the problem cut, the prompt built again smaller; not sent when even so it
  cannot fit);
- a prompt that overflows the model's context is its own error (:class:`ContextOverflowError`), not
  "check the base_url"; a 400 that names the context's size (llama.cpp's, OpenAI's, vLLM's wordings:
  :func:`context_in_message`) teaches it to the client for the process when none was known or it is
  smaller (a ``session.note`` ``context-learned``), and a prompt sized with :meth:`LLMClient.fitted` is
  built again to that size and sent once more;
- a call to a loopback endpoint that times out is not sent again: the server is still computing it,
  and a second copy would queue behind the first (the default loopback timeout is 600 s);
- bounded replies: one call takes at most ``max_call_seconds`` in all and keeps at most
  ``max_reply_chars`` characters; over either the reply is cut and marked ``truncated`` (a cut JSON
  reply is a bad reply: repaired, then the caller records "cannot judge"); a reply that is not UTF-8 or
  whose JSON is nested deeper than :data:`MAX_JSON_DEPTH` is one line of error, never a traceback.
"""

from __future__ import annotations

import asyncio
import atexit
import email.utils
import hashlib
import json
import logging
import random
import re
import time
import weakref
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, TypeVar

from pydantic import BaseModel, ValidationError

from engine.config import ModelConfig
from engine.llm.fit import prompt_size
from engine.llm.structured import refuses_format
from engine.redact import StreamRedactor, redact
from engine.store import Store, dumps, now_iso
from engine.store.texts import StoredMessage, get_text, put_messages, put_text

if TYPE_CHECKING:
    import openai

log = logging.getLogger("viva.llm")

T = TypeVar("T", bound=BaseModel)
P = TypeVar("P")
R = TypeVar("R")
Message = dict[str, str]

RETRY_CAP_SECONDS = 60.0
BACKOFF_BASE_SECONDS = 0.5
CHARS_PER_TOKEN = 3
"""Characters per token assumed when a prompt is sized against a context (below English's ~4: safe)."""
MAX_JSON_DEPTH = 64
"""Deeper JSON in a reply is refused with a one-line problem (no verdict object nests more than 4)."""
TRUNCATED = "truncated"
"""The ``finish_reason`` recorded for a reply cut at ``max_reply_chars`` or ``max_call_seconds``."""


class LLMError(Exception):
    """An LLM call that failed for good; the message names the endpoint, the model and the cause."""

    def __init__(self, message: str, *, status: int | None = None, endpoint: str = ""):
        super().__init__(redact(message))
        self.status = status
        self.endpoint = endpoint


class JSONOutputError(LLMError):
    """The model did not produce valid JSON for the schema within the allowed repairs; ``results`` are the
    calls it took (their tokens were spent) and ``problems`` why each reply was refused."""

    results: list[ChatResult]
    problems: list[str]


class ContextOverflowError(LLMError):
    """The prompt and ``max_tokens`` do not fit the model's context (a 400 saying so, or a JSON repair that
    viva did not send because it could not fit); ``context``: the context size in tokens the server's message
    named (None: it named none, or nothing was sent); ``results``/``problems``: for a repair not sent, the calls
    made before it and why their replies were refused."""

    context: int | None = None
    results: list[ChatResult]
    problems: list[str]


UNUSABLE = (JSONOutputError, ContextOverflowError)
"""The errors that are a bad reply, not an unreachable endpoint: a protocol records the turn as "cannot
judge" (or skips it) and goes on; any other :class:`LLMError` fails the session."""


def spent(exc: BaseException) -> Usage:
    """The tokens an unusable exchange spent (the calls of a :class:`JSONOutputError`)."""
    usage = Usage()
    for r in getattr(exc, "results", None) or []:
        usage.add(r)
    return usage


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
    usage_unknown: bool = False
    """The server reported no token counts for this call (``tokens_in``/``tokens_out`` are 0 for unknown)."""

    @property
    def truncated(self) -> bool:
        """The reply was cut at the endpoint's size or time cap (or at ``max_tokens``: ``length``)."""
        return self.finish_reason in (TRUNCATED, "length")


@dataclass
class Usage:
    """Tokens and cost accumulated over several calls (e.g. one turn)."""

    tokens_in: int = 0
    tokens_out: int = 0
    cost: float = 0.0
    calls: int = 0
    cached_calls: int = 0
    unknown_calls: int = 0
    """Calls whose server reported no token counts: the token sums leave them out (they are not 0)."""

    def add(self, result: ChatResult) -> None:
        """Add one call's tokens and cost, and count the call (and whether the cache answered it)."""
        self.tokens_in += result.tokens_in
        self.tokens_out += result.tokens_out
        self.cost += result.cost
        self.calls += 1
        self.cached_calls += int(result.cached)
        self.unknown_calls += int(result.usage_unknown)


@dataclass
class JSONResult:
    """A validated JSON output with the calls it took (first answer plus repairs)."""

    value: Any
    results: list[ChatResult] = field(default_factory=list)
    dialect: str = "off"
    """The ``response_format`` rung the endpoint took (:mod:`engine.llm.structured`)."""
    problems: list[str] = field(default_factory=list)
    """Why each rejected reply was rejected, in order."""

    @property
    def repairs(self) -> int:
        """The repair calls it took: every call after the first."""
        return max(0, len(self.results) - 1)


# Limits and clients are per event loop: asyncio primitives and httpx pools belong to one loop. Keyed by
# the loop itself, weakly: a closed loop's clients go with it (never handed to a new loop that happens
# to reuse its id).
_per_loop: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, dict[tuple[Any, ...], Any]] = (
    weakref.WeakKeyDictionary())
# Clients are kept for their loop's life (making one costs tens of ms: the SDK loads the CA bundle), and
# let go before the interpreter tears its modules down, where the SDK's finaliser would fail noisily.
atexit.register(_per_loop.clear)


_contexts: dict[tuple[Any, ...], int] = {}
"""Context sizes the servers reported per (endpoint, model), for the process (0: not reported): from
``/models`` or ``/props``, or learned from an overflow's 400 (:func:`context_in_message`)."""


def forget_contexts() -> None:
    """Forget every context size reported or learned (tests: a port reused by a later server)."""
    _contexts.clear()
    for state in list(_per_loop.values()):
        for key in [k for k in state if k[0] == "context"]:
            del state[key]


def _loop_state() -> dict[tuple[Any, ...], Any]:
    loop = asyncio.get_running_loop()
    state = _per_loop.get(loop)
    if state is None:
        state = _per_loop[loop] = {}
    return state


_no_stream_options: set[str] = set()
"""Base URLs that refused ``stream_options`` (HTTP 400/422 naming it): their streams are sent without it."""


def _semaphore(endpoint: ModelConfig) -> asyncio.Semaphore:
    state = _loop_state()
    key = ("limit", endpoint.base_url)
    sem = state.get(key)
    if sem is None:
        sem = state[key] = asyncio.Semaphore(endpoint.max_concurrency)
    return sem


def _client(endpoint: ModelConfig, api_key: str) -> openai.AsyncOpenAI:
    import openai  # imported when the first call is made: listing sessions never pays for it

    state = _loop_state()
    headers = endpoint.header_values()
    secret = hashlib.sha256(json.dumps([api_key, sorted(headers.items())]).encode()).hexdigest()
    key = ("client", endpoint.base_url, secret, endpoint.call_timeout)
    client = state.get(key)
    if client is None:
        client = state[key] = openai.AsyncOpenAI(
            base_url=endpoint.base_url, api_key=api_key, timeout=endpoint.call_timeout, max_retries=0,
            default_headers=headers or None,
        )
    return client


def cache_key(base_url: str, model: str, messages: Sequence[Message], params: dict[str, Any]) -> str:
    """sha256 of the request identity: endpoint, model, messages and sampling parameters."""
    blob = json.dumps(
        {"base_url": base_url.rstrip("/"), "model": model, "messages": list(messages), "params": params},
        sort_keys=True, ensure_ascii=False,
    )
    return hashlib.sha256(blob.encode("utf-8")).hexdigest()


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


class LLMClient:
    """Chat and JSON calls for one role on one endpoint.

    Args:
        store: where calls are recorded and cached.
        endpoint: the endpoint's configuration.
        role: ``kernel``, ``judge`` or ``target`` (recorded with each call).
        use_cache: answer identical requests from the store (``--no-cache`` turns it off).
        session_id: recorded with each call, for per-session accounting.
        identity: stable name of the endpoint for the cache key (default: its base_url).
        max_tokens: the role's budget, used when the endpoint sets no ``max_tokens`` of its own.
    """

    def __init__(self, store: Store, endpoint: ModelConfig, role: str, use_cache: bool = True,
                 session_id: int | None = None, identity: str | None = None, max_tokens: int | None = None):
        self.store = store
        self.max_tokens = max_tokens
        # What the cache knows the endpoint by: its base_url, unless the address changes from run
        # to run for the same model (the embedded local server on a random port).
        self.identity = (identity or endpoint.base_url) + (
            f" headers={endpoint.header_identity()}" if endpoint.headers else "")
        """The endpoint as its cache keys, context and dialect memory know it: its base URL (or the given
        name) and, when it has extra headers, their names and literal values (an ``env:VAR`` header by the
        variable's name; a secret never enters a key)."""
        self.endpoint = endpoint
        self.role = role
        self.use_cache = use_cache
        self.session_id = session_id
        self._previous: list[StoredMessage] | None = None
        """The messages of this client's last recorded request: those the next request repeats are not
        redacted or hashed again, and a new one is stored as an edit of the one at its position."""
        self._last_response: tuple[str, int] | None = None
        """(text, text id) of this client's last answer: the next is stored as an edit of it when smaller."""

    async def context_tokens(self) -> int | None:
        """The model's context in tokens: reported by the server (``/models``, ``/props``; asked once per
        endpoint and process), else the endpoint's ``context:`` setting, else None (unknown)."""
        key = ("context", self.identity, self.endpoint.model)
        state = _loop_state()
        if key not in state:
            found = _contexts.get(key[1:])
            if found is None:
                from engine.llm.check import context_of

                try:
                    reported, source = await context_of(self.endpoint)
                    found = reported if source != "config" and reported else 0
                except Exception:  # noqa: BLE001 - a probe that fails means "unknown", never a failed call
                    found = 0
                _contexts[key[1:]] = found
            state[key] = found
        # only what the server said is shared: two roles on one server and model may set different `context:`
        return state[key] or self.endpoint.context or None

    async def prompt_chars(self, reserve_chars: int = 0, reply_share: float = 0.0) -> int | None:
        """How many characters of prompt fit the model's context with room for the reply's budget, by
        :data:`CHARS_PER_TOKEN` (a conservative estimate: English runs about 4 characters a token), less
        ``reserve_chars`` for the fixed parts; None when the context is unknown. With no ``max_tokens``
        budget, ``reply_share`` of the context is kept for the reply instead (a target's answer)."""
        context = await self.context_tokens()
        if not context:
            return None
        budget = self._params({}).get("max_tokens") or 0
        if not budget and reply_share:
            reserve_chars += int(context * reply_share) * CHARS_PER_TOKEN
        return max(1000, (context - budget) * CHARS_PER_TOKEN - reserve_chars)

    def learn_context(self, tokens: int, message: str = "") -> bool:
        """Take ``tokens`` as the model's context for the process (the size an overflow's 400 named), when no
        context was known for this endpoint and model or a larger one was: the store
        :meth:`context_tokens` reads, for every client of the endpoint. A ``session.note``
        ``context-learned`` of the client's session (else a log line) says so, quoting the server's
        ``message``. Returns whether the context was taken (False: the same or a smaller one was known)."""
        key = ("context", self.identity, self.endpoint.model)
        state = _loop_state()
        known = state.get(key) or _contexts.get(key[1:]) or self.endpoint.context or 0
        if known and known <= tokens:
            return False
        _contexts[key[1:]] = state[key] = tokens
        was = f"{known:,} tokens before" if known else "unknown before: not reported by /models or /props, no `context:`"
        text = redact(f"{self.role} {self.label}: the server's overflow answer says the model's context is "
                      f"{tokens:,} tokens ({was}); prompts are sized to it from now on"
                      + (f" (the server said: {message[:200]})" if message else ""))
        log.info("%s", text)
        if self.session_id is not None:
            self.store.append_event(self.session_id, "session.note", {"turn": -1, "what": "context-learned",
                                                                      "text": text})
        return True

    async def fitted(self, build: Callable[[int | None, list[str]], P], send: Callable[[P], Awaitable[R]], *,
                     call: str, turn: int = -1, reserve_chars: int = 0, reply_share: float = 0.0) -> R:
        """Build a prompt sized to the model's context and send it; the one place a prompt is re-fitted.

        ``build(room, trims)`` makes the prompt for ``room`` characters (:meth:`prompt_chars` with
        ``reserve_chars`` and ``reply_share``; None: the context is unknown, nothing is cut), appending what
        it cut to ``trims`` (:mod:`engine.llm.fit`), which is noted (:meth:`note_trimmed`, as ``call`` on
        ``turn``); ``send(prompt)`` makes the call(s). When a call overflows and the server's message named
        a context (:func:`context_in_message`, learned by :meth:`chat`) that gives a smaller room than the
        prompt was built for, the prompt is built again for it and sent once more.

        Raises:
            ContextOverflowError: the message named no size, the size gave no smaller room, or the second
                prompt overflowed too.
        """
        room = await self.prompt_chars(reserve_chars, reply_share)
        trims: list[str] = []
        prompt = build(room, trims)
        self.note_trimmed(call, trims, turn)
        try:
            return await send(prompt)
        except ContextOverflowError as exc:
            if not exc.context:
                raise
            again = await self.prompt_chars(reserve_chars, reply_share)
            if again is None or (room is not None and again >= room):
                raise
            log.info("%s: %s prompt built again for %s characters after an overflow", self.label, call, f"{again:,}")
        trims = []
        prompt = build(again, trims)
        self.note_trimmed(call, trims, turn)
        return await send(prompt)

    def note_trimmed(self, call: str, trims: Sequence[str], turn: int = -1) -> None:
        """Record that a prompt was cut to fit the model's context (:mod:`engine.llm.fit`, ``trims`` saying
        what was left out of what): a ``session.note`` ``prompt-trimmed`` of the client's session, else a log
        line. Nothing when nothing was cut."""
        if not trims:
            return
        text = redact(f"{call} prompt cut to fit the model's context: " + "; ".join(trims))
        log.info("%s: %s", self.label, text)
        if self.session_id is not None:
            self.store.append_event(self.session_id, "session.note", {"turn": turn, "what": "prompt-trimmed",
                                                                      "text": text})

    @property
    def label(self) -> str:
        """``model@base_url``: the endpoint as named in log lines."""
        return f"{self.endpoint.model}@{self.endpoint.base_url}"

    def _params(self, overrides: dict[str, Any]) -> dict[str, Any]:
        params: dict[str, Any] = {"temperature": self.endpoint.temperature}
        budget = self.endpoint.max_tokens or self.max_tokens
        if budget:
            params["max_tokens"] = budget
        params.update({k: v for k, v in overrides.items() if v is not None})
        return params

    def _cost(self, tokens_in: int, tokens_out: int) -> float:
        return tokens_in / 1e6 * self.endpoint.price_in + tokens_out / 1e6 * self.endpoint.price_out

    def _from_cache(self, key: str) -> dict[str, Any] | None:
        return self.store.one(
            "SELECT id, response_id, finish_reason, tokens_in, tokens_out, usage_unknown FROM llm_calls "
            "WHERE cache_key = ? AND error IS NULL AND cached = 0 AND response_id IS NOT NULL "
            "ORDER BY id DESC LIMIT 1",
            (key,),
        )

    def _record(self, messages: Sequence[Message], params: dict[str, Any], answer: str | None = None,
                **row: Any) -> int:
        """Record one call: its request as a path of the message tree (each message stored once), its
        parameters and its ``answer`` (a text; the same text as a later request's message is one row),
        with the outcome in ``row``; text is redacted."""
        row.setdefault("session_id", self.session_id)
        row.setdefault("created_at", now_iso())
        with self.store.transaction():
            row["messages_id"], self._previous = put_messages(self.store, messages, self._previous)
            row["params"] = redact(dumps(params))
            if answer is not None and "response_id" not in row:
                answer = redact(answer)
                last = self._last_response
                row["response_id"] = put_text(self.store, answer, last[1] if last else None, last[0] if last else None)
                self._last_response = (answer, row["response_id"])
            return self.store.insert("llm_calls", row)

    async def chat(
        self,
        messages: Sequence[Message],
        *,
        stream: bool = False,
        on_token: Callable[[str], Any] | None = None,
        on_reset: Callable[[], Any] | None = None,
        purpose: str = "",
        **params: Any,
    ) -> ChatResult:
        """Send a chat completion and return its text.

        Args:
            messages: OpenAI-style ``{"role", "content"}`` messages.
            stream: stream the answer; ``on_token`` is called with each piece as it arrives and
                ``on_reset`` when a dropped stream is retried from the start.
            purpose: what the call is for, recorded with it (``llm_calls.purpose``: ``answer``, ``judge``,
                ``challenge question``, ``judge repair``...), so a turn's calls are counted by purpose.
            **params: sampling parameters (temperature, max_tokens, response_format, seed...).

        Raises:
            LLMError: after the configured retries, or at once for a non-retryable status; the
                message names the endpoint and the status.
        """
        api_key = self.endpoint.api_key()
        params = self._params(params)
        messages = [dict(m) for m in messages]
        key = cache_key(self.identity, self.endpoint.model, messages, params)

        if self.use_cache:
            hit = self._from_cache(key)
            if hit is not None:
                text = redact(get_text(self.store, hit["response_id"]))
                if on_token is not None and text:
                    on_token(text)
                call_id = self._record(
                    messages, params, cache_key=key, role=self.role, base_url=self.endpoint.base_url,
                    model=self.endpoint.model, response_id=hit["response_id"], finish_reason=hit["finish_reason"],
                    tokens_in=hit["tokens_in"], tokens_out=hit["tokens_out"], cached=1,
                    usage_unknown=hit["usage_unknown"], purpose=purpose,
                )
                return ChatResult(text, hit["tokens_in"], hit["tokens_out"], 0.0, 0.0, True, call_id, 0,
                                  usage_unknown=bool(hit["usage_unknown"]))

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
                        text, usage, finish = await self._stream(api_key, messages, params, emit)
                    else:
                        try:
                            text, usage, finish = await asyncio.wait_for(
                                self._once(api_key, messages, params), self.endpoint.call_deadline)
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
                    status, wait, retryable, reason = self._classify(exc, attempts)
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
                        message = (
                            f"{self.role} call to {self.endpoint.base_url} (model {self.endpoint.model}) "
                            f"failed after {attempts} attempt(s): {reason}"
                        )
                        message = redact(message)
                        self._record(
                            messages, params, cache_key=key, role=self.role, base_url=self.endpoint.base_url,
                            model=self.endpoint.model, error=message, purpose=purpose,
                            attempts=attempts, retries=dumps(retries),
                            latency_ms=(time.perf_counter() - start) * 1000,
                        )
                        # a refused response_format is the dialect probe stepping down, not a failure
                        (log.info if refuses_format(status, reason) else log.warning)("%s", message)
                        if status == 400 and _OVERFLOW_RE.search(reason):
                            told = context_in_message(reason)
                            if told:
                                self.learn_context(told, reason)
                            overflow = ContextOverflowError(
                                f"{self.role} call to {self.endpoint.base_url} (model {self.endpoint.model}): the "
                                f"prompt and max_tokens ({params.get('max_tokens', 'unset')}) do not fit the model's "
                                f"context ({reason}); give the server a larger context, lower this role's "
                                "max_tokens, or set the endpoint's `context:` so viva trims prompts to fit",
                                status=status, endpoint=self.endpoint.base_url)
                            overflow.context = told
                            raise overflow from None
                        raise LLMError(message, status=status, endpoint=self.endpoint.base_url) from None
                    retries.append({"attempt": attempts, "status": status, "reason": reason[:200], "wait": wait})
                    log.info("%s retry %d after %.2fs: %s", self.label, attempts, wait, reason[:200])
                    shown.reset()
                    if stream and on_reset is not None:
                        on_reset()
                    await asyncio.sleep(wait)
        latency = (time.perf_counter() - start) * 1000
        text = redact(text)
        unknown = usage is None  # no counts from the server: recorded as unknown, never estimated
        t_in, t_out = usage or (0, 0)
        cost = self._cost(t_in, t_out)
        call_id = self._record(
            messages, params, cache_key=key, role=self.role, base_url=self.endpoint.base_url,
            model=self.endpoint.model, answer=text, finish_reason=finish, tokens_in=t_in, tokens_out=t_out,
            latency_ms=latency, cost=cost, attempts=attempts, retries=dumps(retries), usage_unknown=int(unknown),
            purpose=purpose,
        )
        log.info("%s %s ok in %.0f ms (%s in, %s out, %d attempt(s))", self.role, self.label, latency,
                 "?" if unknown else t_in, "?" if unknown else t_out, attempts)
        return ChatResult(text, t_in, t_out, latency, cost, False, call_id, attempts, finish, unknown)

    def _classify(self, exc: Exception, attempt: int) -> tuple[int | None, float, bool, str]:
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

    async def _once(self, api_key: str, messages: list[Message], params: dict[str, Any]):
        client = _client(self.endpoint, api_key)
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

    async def _stream(self, api_key: str, messages: list[Message], params: dict[str, Any],
                      on_token: Callable[[str], Any] | None):
        import openai

        client = _client(self.endpoint, api_key)
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

    async def json(
        self,
        messages: Sequence[Message],
        schema: type[T],
        *,
        validate: Callable[[T], str | None] | None = None,
        max_repairs: int = 2,
        quoted: Sequence[str] = (),
        markers: tuple[str, str] | None = None,
        json_schema: dict[str, Any] | None = None,
        examples: Sequence[str] = (),
        **params: Any,
    ) -> T:
        """Ask for JSON and return it validated against ``schema``; see :meth:`json_result`."""
        return (await self.json_result(messages, schema, validate=validate, max_repairs=max_repairs,
                                       quoted=quoted, markers=markers, json_schema=json_schema,
                                       examples=examples, **params)).value

    def _dialect(self) -> str:
        """The ``response_format`` rung to try first: the remembered one under ``auto``, else the setting's."""
        from engine.llm import structured

        setting = self.endpoint.structured
        if setting == "auto":
            return structured.known_dialect(self.identity, self.endpoint.model) or structured.start_dialect(setting)
        return structured.start_dialect(setting)

    async def _chat_structured(self, convo: list[Message], json_schema: dict[str, Any] | None, name: str,
                               dialect: str, params: dict[str, Any], purpose: str = "") -> tuple[ChatResult, str]:
        """One chat call with the schema in the endpoint's dialect; under ``auto`` (and from
        ``json_object`` with a schema to plain JSON mode) a 400 that names ``response_format`` steps down a
        rung and the call is sent again. Returns the result and the rung that was accepted.

        Under ``auto`` the rung stepped down to is remembered even when its call then fails for another
        reason (an overflow's 400): the rungs above it were refused, so the call sent again (:meth:`fitted`,
        cut to the learned context) starts there instead of asking the refused rung once more."""
        from engine.llm import structured

        first = dialect
        while True:
            fmt = structured.response_format(dialect, json_schema, name)
            try:
                result = await self.chat(convo, **({"response_format": fmt} if fmt else {}), purpose=purpose, **params)
            except LLMError as exc:
                lower = structured.next_dialect(dialect)
                may_step = self.endpoint.structured == "auto" or (
                    self.endpoint.structured == "json_object" and dialect == "json_object+schema")
                if lower is None or not may_step or not structured.refuses_format(exc.status, str(exc)):
                    if dialect != first and self.endpoint.structured == "auto":
                        structured.remember(self.identity, self.endpoint.model, dialect)
                    raise
                log.info("%s refused response_format %s (%s); trying %s", self.label, dialect, str(exc)[:160], lower)
                dialect = lower
                continue
            if self.endpoint.structured == "auto":
                structured.remember(self.identity, self.endpoint.model, dialect)
            return result, dialect

    async def _repair(self, base: list[Message], base_size: int, scale: float, problem: str,
                      json_schema: dict[str, Any], n: int, of: int, held: bool, params: dict[str, Any],
                      refit: Callable[[int | None, list[str]], Sequence[Message]] | None, call: str,
                      turn: int) -> tuple[list[Message], int, str]:
        """Repair ``n`` of ``of`` sized to the model's context (:func:`engine.llm.structured.repair_message`):
        the original prompt ``base`` (``base_size`` prompt characters: the server's count of it when it gave
        one, ``scale`` the ratio of that count to :func:`engine.llm.fit.prompt_size`), then the problem and the
        schema, within the context less ``max_tokens``. When they do not fit, the schema's text is left out where
        the grammar holds the reply to it and the problem is cut; when even that does not fit, the original
        prompt is built again (``refit``) for the room the repair leaves, its variable texts cut by
        :mod:`engine.llm.fit`'s rules. The cuts are noted (``call`` repair, on ``turn``). Returns (the
        original prompt as sent now, its size, the repair's message); with the context unknown, the
        original prompt and the whole message.

        Raises:
            ContextOverflowError: the repair's fixed parts and the original prompt's cannot fit (nothing sent).
        """
        from engine.llm import structured
        from engine.llm.fit import MIN_KEEP

        context = await self.context_tokens()
        if not context:
            return base, base_size, structured.repair_message(problem, json_schema, n, of)  # type: ignore[return-value]
        budget = self._params(params).get("max_tokens") or 0
        room = (context - budget) * CHARS_PER_TOKEN
        trims: list[str] = []
        message = structured.repair_message(problem, json_schema, n, of, room - base_size, held, trims)
        if message is None and refit is not None:
            # the original prompt gives way: built for what the smallest repair leaves (in the builder's
            # characters, which the server's count of the first prompt scales), its texts cut by fit.py's rules
            least = structured.repair_size(None if held else json_schema, problem[:MIN_KEEP])
            again: list[str] = []
            rebuilt = [dict(m) for m in refit(int((room - least) / scale), again)]
            size_again = int(prompt_size(rebuilt) * scale)
            if size_again < base_size:
                trims = []
                message = structured.repair_message(problem, json_schema, n, of, room - size_again, held, trims)
                if message is not None:
                    base, base_size = rebuilt, size_again
                    trims = again + trims
        if message is None:
            need = structured.repair_size(None if held else json_schema, problem[:MIN_KEEP]) // CHARS_PER_TOKEN
            raise ContextOverflowError(
                f"{self.role} at {self.endpoint.base_url} (model {self.endpoint.model}): {call} repair {n} not "
                f"sent: it cannot fit the model's context of {context:,} tokens with {budget:,} kept for the "
                f"reply: the prompt takes about {base_size // CHARS_PER_TOKEN:,} tokens"
                f"{' with its texts cut' if refit else ''} and the repair's problem and "
                f"{'wording' if held else 'schema'} about {need:,}; give the model a larger context "
                f"(the server's n_ctx) or this role a smaller max_tokens",
                endpoint=self.endpoint.base_url)
        self.note_trimmed(f"{call} repair {n}", trims, turn)
        return base, base_size, message

    async def fitted_json(self, build: Callable[[int | None, list[str]], Sequence[Message]], schema: type[T], *,
                          call: str, turn: int = -1, reserve_chars: int | None = None, reply_share: float = 0.0,
                          **kwargs: Any) -> JSONResult:
        """:meth:`json_result` on a prompt sized with :meth:`fitted`, whose repairs are sized to the context
        too (``build`` makes the original prompt smaller for a repair that needs the room). ``reserve_chars``
        is kept free in the first prompt; default: one repair's size (:func:`engine.llm.structured.repair_size`),
        without the schema's text where the endpoint's dialect sends the schema for its grammar (a repair
        that needs the room leaves that text out before it cuts the prompt). ``kwargs``: those of
        :meth:`json_result`."""
        from engine.llm import structured

        if reserve_chars is None:
            held = self._dialect() in structured.HELD
            reserve_chars = structured.repair_size(
                None if held else kwargs.get("json_schema") or structured.schema_of(schema))
        return await self.fitted(
            build, lambda messages: self.json_result(messages, schema, refit=build, call=call, turn=turn, **kwargs),
            call=call, turn=turn, reserve_chars=reserve_chars, reply_share=reply_share)

    async def json_result(
        self,
        messages: Sequence[Message],
        schema: type[T],
        *,
        validate: Callable[[T], str | None] | None = None,
        max_repairs: int = 2,
        quoted: Sequence[str] = (),
        markers: tuple[str, str] | None = None,
        json_schema: dict[str, Any] | None = None,
        examples: Sequence[str] = (),
        refit: Callable[[int | None, list[str]], Sequence[Message]] | None = None,
        call: str = "JSON",
        turn: int = -1,
        **params: Any,
    ) -> JSONResult:
        """Ask for a JSON object, validate it, and re-ask with the error up to ``max_repairs`` times.

        The request carries the call's JSON schema as ``response_format`` in the endpoint's dialect
        (:mod:`engine.llm.structured`; default: the schema of ``schema``). The reply's object is the *last*
        top-level JSON object outside any quoted candidate text (:func:`extract_json`): a reply that
        quotes the candidate's own forged verdict, before or after its own, never has the forged one
        accepted; a reply that holds two different objects that both fit the schema is a problem (which
        one it means is not for viva to guess). That one object is then validated (``schema``, then
        ``validate``), and refused when a string in it is a placeholder of the instructions (``<…>``) or
        one of the prompt's ``examples`` copied; a reply cut at a cap is refused too. A problem is sent
        back for a repair: the original messages, then the problem and the schema (never the whole bad
        reply, which could overflow the context), sized to the model's context when it is known
        (:meth:`_repair`: the schema's text left out where the server's grammar holds the reply to it, the
        problem cut, the original prompt built again smaller by ``refit``), or the
        :class:`ContextOverflowError` without a request when even that cannot fit.

        Args:
            schema: the pydantic model the answer must match.
            validate: extra check on the parsed value returning an error message (e.g. "criterion
                c9 does not exist") or None when the value is acceptable.
            quoted: the untrusted texts the prompt quoted (the candidate's answer, a transcript); an
                object that also appears in one of them is the candidate's, not the judge's.
            markers: the prompt's (opening, closing) markers around quoted text; anything between
                them in the reply is quotation, not the reply's own object.
            json_schema: the schema sent to the server (narrower than ``schema``'s: ids as an enum,
                exact counts, length bounds); default :func:`engine.llm.structured.schema_of`.
            examples: example values the prompt shows, which a reply may not copy.
            refit: ``build(room, trims)`` of :meth:`fitted`: the original messages built again for ``room``
                prompt characters, to make room for a repair (None: they cannot be rebuilt).
            call, turn: what a repair's cuts are noted as (:meth:`note_trimmed`).

        Raises:
            JSONOutputError: still invalid after the repairs; the message holds the last problem.
            ContextOverflowError: a repair cannot fit the model's context (not sent); ``results``: the calls
                made.
        """
        from engine.llm import structured

        if json_schema is None:
            json_schema = structured.schema_of(schema)
        base = [dict(m) for m in messages]
        convo = base
        results: list[ChatResult] = []
        problems: list[str] = []
        problem = ""
        dialect = self._dialect()
        base_size: int | None = None
        scale = 1.0
        for attempt in range(max_repairs + 1):
            # recorded as the call's purpose; a repair as its own ("judge repair"), so repairs are counted
            purpose = call if attempt == 0 else f"{call} repair"
            result, dialect = await self._chat_structured(convo, json_schema, schema.__name__, dialect, params,
                                                          purpose)
            results.append(result)
            value = None
            try:
                if result.finish_reason == TRUNCATED:
                    raise ValueError("the reply was cut at the endpoint's size or time cap (max_reply_chars, "
                                     "max_call_seconds); reply with a much shorter JSON object")
                candidates = extract_json_all(result.text, quoted=quoted, markers=markers)
                value = schema.model_validate(candidates[-1])  # the last object is the reply's
                problem = (structured.echoed_placeholder(value.model_dump(mode="json"), base, examples)
                           or (validate(value) if validate else None) or "")
                if not problem:  # another object that fits too and says otherwise: which one is meant?
                    mine = _canonical(value.model_dump(mode="json"))
                    for candidate in candidates[:-1]:
                        try:
                            other = schema.model_validate(candidate)
                        except ValidationError:
                            continue
                        if _canonical(other.model_dump(mode="json")) != mine and not (validate and validate(other)):
                            problem = ("the reply holds two different JSON objects that each fit and disagree; "
                                       "reply with exactly one")
                            break
            except (ValueError, ValidationError) as exc:
                problem = _compact_error(exc)
                if result.finish_reason == "length":
                    problem += " (the reply stopped at its token budget: be brief)"
            if not problem:
                return JSONResult(value, results, dialect, problems)
            problem = redact(problem)
            problems.append(problem)
            if attempt == max_repairs:
                break
            if base_size is None:  # what the original prompt takes: the server's count of it when it gave one
                measured = result.tokens_in * CHARS_PER_TOKEN if not result.usage_unknown else 0
                estimate = prompt_size(base)
                scale = measured / estimate if measured else 1.0
                base_size = measured or estimate
            # the repair's number is part of it: two repairs for the same problem are different requests
            # (at temperature 0 the same request gets the same reply, and the cache would answer it)
            try:
                base, base_size, message = await self._repair(
                    base, base_size, scale, problem, json_schema, attempt + 1, max_repairs,
                    dialect in structured.HELD, params, refit, call, turn)
            except ContextOverflowError as exc:
                exc.results, exc.problems = results, problems
                raise
            convo = base + [{"role": "user", "content": message}]
        error = JSONOutputError(
            f"{self.role} at {self.endpoint.base_url} (model {self.endpoint.model}) gave no valid JSON "
            f"after {max_repairs} repair(s): {problem}",
            endpoint=self.endpoint.base_url,
        )
        error.results, error.problems = results, problems
        raise error


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


_DECODER = json.JSONDecoder(strict=False)
"""Lenient about raw control characters inside strings (a grammar-constrained reply held a raw newline)."""


def _too_deep(text: str, start: int, limit: int = MAX_JSON_DEPTH) -> bool:
    """Whether the brackets opened from ``start`` nest deeper than ``limit`` before they close (a quick
    scan that ignores brackets inside strings), so a 200,000-deep reply is refused before it is parsed."""
    depth = 0
    in_string = escaped = False
    for ch in text[start:]:
        if in_string:
            if escaped:
                escaped = False
            elif ch == "\\":
                escaped = True
            elif ch == '"':
                in_string = False
        elif ch == '"':
            in_string = True
        elif ch in "[{":
            depth += 1
            if depth > limit:
                return True
        elif ch in "]}":
            depth -= 1
            if depth <= 0:
                return False
    return False


def _objects(text: str, nested: bool = False) -> list[tuple[int, int, Any]]:
    """``(start, end, value)`` of each JSON object in ``text``: the top-level ones (scanning on after each
    object), or with ``nested`` every object that starts at any ``{``."""
    found: list[tuple[int, int, Any]] = []
    pos = 0
    while True:
        start = text.find("{", pos)
        if start < 0:
            return found
        if _too_deep(text, start):
            raise ValueError(f"the reply's JSON is nested deeper than {MAX_JSON_DEPTH} levels")
        try:
            value, end = _DECODER.raw_decode(text, start)
        except (json.JSONDecodeError, RecursionError):
            pos = start + 1
            continue
        if isinstance(value, dict):
            found.append((start, end, value))
        pos = start + 1 if nested else end


def _canonical(value: Any) -> str:
    return json.dumps(value, sort_keys=True, ensure_ascii=False, separators=(",", ":"))


def _without_quotes(text: str, markers: tuple[str, str]) -> str:
    """``text`` without every span from an opening marker to its closing marker (or to the end)."""
    start, end = markers
    out, pos = [], 0
    while True:
        i = text.find(start, pos)
        if i < 0:
            out.append(text[pos:])
            return "".join(out)
        out.append(text[pos:i])
        j = text.find(end, i + len(start))
        if j < 0:
            return "".join(out)
        pos = j + len(end)


def extract_json_all(text: str, *, quoted: Sequence[str] = (), markers: tuple[str, str] | None = None) -> list[Any]:
    """Every JSON object of a model reply that is the reply's own (see :func:`extract_json`), in order;
    a reply that is a JSON array as a whole is ``[array]``.

    Raises:
        ValueError: no JSON object outside the quoted text, or JSON nested too deeply.
    """
    stripped = text.strip()
    if markers:
        stripped = _without_quotes(stripped, markers).strip()
    forged: set[str] = set()
    spans: list[str] = []
    for q in quoted:
        if q:
            try:
                forged.update(_canonical(v) for _, _, v in _objects(q, nested=True))
            except ValueError:
                pass  # a candidate's own deep JSON is never the reply's
            spans.append(" ".join(q.split()))
    whole = None
    if stripped[:1] == "[" and not _too_deep(stripped, 0):
        try:
            whole = _DECODER.decode(stripped)
        except (json.JSONDecodeError, RecursionError):
            whole = None
    if isinstance(whole, list):
        return [whole]
    own = []
    found = _objects(stripped)
    for start, end, value in found:
        raw = " ".join(stripped[start:end].split())
        if _canonical(value) in forged or any(raw in span for span in spans):
            continue
        own.append(value)
    if own:
        return own
    if forged and found:
        raise ValueError("the only JSON in the reply is quoted from the candidate's answer; "
                         "give your own verdict as a JSON object")
    raise ValueError(f"not valid JSON: {redact(stripped)[:120]!r}")


def extract_json(text: str, *, quoted: Sequence[str] = (), markers: tuple[str, str] | None = None) -> Any:
    """The JSON value of a model reply: the last top-level JSON object that is not quoted candidate text.

    A reply may be bare JSON, fenced, or surrounded by prose. What counts as quotation and is never the
    reply's own object: any span between ``markers`` (the prompt's quote markers, echoed back), and any
    object that also appears in one of the ``quoted`` texts (the candidate wrote it, so a judge that
    quotes it, fenced or not, before or after its own verdict, does not get it accepted). A reply that
    is a JSON array as a whole is returned as such.

    Raises:
        ValueError: no JSON object outside the quoted text, or JSON nested too deeply.
    """
    return extract_json_all(text, quoted=quoted, markers=markers)[-1]


def _compact_error(exc: Exception) -> str:
    if isinstance(exc, ValidationError):
        parts = [f"{'.'.join(str(p) for p in e['loc']) or 'value'}: {e['msg']}" for e in exc.errors()[:5]]
        return "; ".join(parts)
    return str(exc)


def _short(exc: openai.APIStatusError) -> str:
    """The error body's message, redacted first and then cut to 200 characters (never half a key)."""
    body = exc.body
    if isinstance(body, dict):
        err = body.get("error", body)
        text = str(err.get("message", err)) if isinstance(err, dict) else str(err)
    else:
        text = str(exc.message)
    return redact(text)[:200]
