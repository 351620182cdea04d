"""One async client for every role (kernel, judge, target): the calls a caller makes, recorded and cached.

The client is three parts, each changed for its own reasons:

- transport and retries (:mod:`engine.llm.transport`): one chat completion sent over
  ``openai.AsyncOpenAI``, retried with backoff on 429 / 5xx / timeouts / dropped connections, bounded in
  size and time, a concurrency limit per endpoint;
- structured output (:mod:`engine.llm.structured`: the schema in each endpoint's dialect, stepping down on a
  400 that names it; :mod:`engine.llm.replies`: the reply's own JSON object, never one the candidate wrote);
- prompt fitting and repairs (:mod:`engine.llm.fit`): a prompt built to the model's context, and a JSON
  call's repairs sized to it.

This module ties them together:

- every call recorded in ``llm_calls`` (its ``purpose`` with it), and the same table used as a cache: an
  identical request (base_url, model, messages, parameters) is answered from it (by its ``cache_key``); a
  request's messages are stored once each, as a path of the message tree (:mod:`engine.store.texts`;
  :func:`engine.store.texts.request_of` and ``response_of`` give a call's request and answer back);
- secrets never leave it: answers (streamed pieces too), retry reasons and error messages pass
  :func:`engine.redact.redact` before anyone sees them (a server that echoes the key in an error
  body, a model that repeats a key it was shown);
- JSON outputs validated against a pydantic model, with a bounded number of repair re-asks
  (:meth:`LLMClient.json_result`); a repair re-sends the original prompt with the problem and the schema,
  never the whole bad reply (a runaway reply re-sent overflowed the context), sized to a known context like a
  first prompt (:meth:`LLMClient._repair`: the problem and schema counted at JSON's rate, the schema's text
  left out where the server's grammar holds it, the problem cut, the prompt built again smaller; not sent
  when even so it cannot fit);
- a reply has at most ``max_tokens`` tokens: the endpoint's own, else the budget of the client's role
  (``max_tokens:`` of the config);
- a prompt that overflows the model's context is its own error (:class:`ContextOverflowError`), not
  "check the base_url"; a 400 that names the context's size (llama.cpp's, OpenAI's, vLLM's wordings:
  :func:`context_in_message`) teaches it to the client for the process when none was known or it is
  smaller (a ``session.note`` ``context-learned``), and a prompt sized with :meth:`LLMClient.fitted` is
  built again to that size and sent once more.
"""

from __future__ import annotations

import hashlib
import json
import logging
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, TypeVar

from pydantic import BaseModel, ValidationError

from engine.config import ModelConfig
from engine.llm.fit import CHARS_PER_TOKEN, prompt_size
from engine.llm.replies import canonical, compact_error, extract_json, extract_json_all
from engine.llm.structured import refuses_format
from engine.llm.transport import (
    TRUNCATED,
    CallFailed,
    LLMError,
    Transport,
    context_in_message,
    loop_state,
    loop_states,
    overflows,
    parse_retry_after,
)
from engine.redact import redact
from engine.store import Store, dumps, now_iso
from engine.store.texts import StoredMessage, get_text, put_messages, put_text

__all__ = ["CHARS_PER_TOKEN", "TRUNCATED", "UNUSABLE", "ChatResult", "ContextOverflowError", "JSONOutputError",
           "JSONResult", "LLMClient", "LLMError", "Usage", "cache_key", "context_in_message", "extract_json",
           "extract_json_all", "forget_contexts", "parse_retry_after", "spent"]

log = logging.getLogger("viva.llm")

T = TypeVar("T", bound=BaseModel)
P = TypeVar("P")
R = TypeVar("R")
Message = dict[str, str]


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

FUTILE_ROUNDS = 2
"""Repairs are given up for the rest of a session, for one kind of call (``call``: ``follow-up question``,
``judge``...), after this many calls of that kind in a row whose repairs gave no valid reply, every reply a JSON
object of the model's own: a model that has not repaired that call twice is not sent a third round of repairs
(each one a whole prompt again), and an unusable reply of that kind is then given up at once. A repair that
succeeds resets the count; a call with a reply that held no JSON object (prose, or garbled on the way) neither
counts nor resets. Only for a client of one session (``session_id``): a session-less client (``viva judge
check``, generation) keeps every repair."""


def spent(exc: BaseException) -> Usage:
    """The tokens an unusable exchange spent (the calls of a :class:`JSONOutputError`)."""
    usage = Usage()
    for r in getattr(exc, "results", None) or []:
        usage.add(r)
    return usage


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

    def extend(self, other: Usage) -> None:
        """Add another tally's calls, tokens and cost to this one."""
        for name in ("tokens_in", "tokens_out", "cost", "calls", "cached_calls", "unknown_calls"):
            setattr(self, name, getattr(self, name) + getattr(other, name))


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

_contexts: dict[tuple[Any, ...], int] = {}
"""Context sizes the servers reported per (endpoint, model), for the process (0: not reported): from
``/models`` or ``/props``, or learned from an overflow's 400 (:func:`context_in_message`)."""


def forget_contexts() -> None:
    """Forget every context size reported or learned (tests: a port reused by a later server)."""
    _contexts.clear()
    for state in loop_states():
        for key in [k for k in state if k[0] == "context"]:
            del state[key]


def cache_key(base_url: str, model: str, messages: Sequence[Message], params: dict[str, Any]) -> str:
    """sha256 of the request identity: endpoint, model, messages and sampling parameters."""
    blob = json.dumps(
        {"base_url": base_url.rstrip("/"), "model": model, "messages": list(messages), "params": params},
        sort_keys=True, ensure_ascii=False,
    )
    return hashlib.sha256(blob.encode("utf-8")).hexdigest()

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
        self.transport = Transport(endpoint)
        """Sends the calls that the cache does not answer (:mod:`engine.llm.transport`)."""
        self.role = role
        self.use_cache = use_cache
        self.session_id = session_id
        self._previous: list[StoredMessage] | None = None
        """The messages of this client's last recorded request: those the next request repeats are not
        redacted or hashed again, and a new one is stored as an edit of the one at its position."""
        self._last_response: tuple[str, int] | None = None
        """(text, text id) of this client's last answer: the next is stored as an edit of it when smaller."""
        self._futile: dict[str, int] = {}
        """Per kind of call: how many of its calls in a row ended with repairs that gave no valid reply
        (:data:`FUTILE_ROUNDS`; a session's client only)."""

    async def context_tokens(self) -> int | None:
        """The model's context in tokens: reported by the server (``/models``, ``/props``; asked once per
        endpoint and process), else the endpoint's ``context:`` setting, else None (unknown)."""
        key = ("context", self.identity, self.endpoint.model)
        state = loop_state()
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
        state = loop_state()
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

    def _note_futile(self, call: str, turn: int) -> None:
        """Record that ``call``'s repairs are given up for the session (:data:`FUTILE_ROUNDS`): a
        ``session.note`` ``repairs-given-up``."""
        text = (f"{call} repairs given up for the rest of this session: in {FUTILE_ROUNDS} {call} calls in a row "
                f"no repair gave a valid reply, so an unusable {call} reply is now given up at once")
        log.info("%s: %s", self.label, text)
        self.store.append_event(self.session_id, "session.note", {"turn": turn, "what": "repairs-given-up",
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

        try:
            sent = await self.transport.send(api_key, messages, params, stream=stream, on_token=on_token,
                                             on_reset=on_reset)
        except CallFailed as failed:
            status, reason = failed.status, failed.reason
            message = redact(f"{self.role} call to {self.endpoint.base_url} (model {self.endpoint.model}) "
                             f"failed after {failed.attempts} attempt(s): {reason}")
            self._record(
                messages, params, cache_key=key, role=self.role, base_url=self.endpoint.base_url,
                model=self.endpoint.model, error=message, purpose=purpose,
                attempts=failed.attempts, retries=dumps(failed.retries), latency_ms=failed.latency_ms,
            )
            # a refused response_format is the dialect probe stepping down, not a failure
            (log.info if refuses_format(status, reason) else log.warning)("%s", message)
            if overflows(status, reason):
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
        text, usage, latency, attempts = redact(sent.text), sent.usage, sent.latency_ms, sent.attempts
        unknown = usage is None  # no counts from the server: recorded as unknown, never estimated
        t_in, t_out = usage or (0, 0)
        cost = self._cost(t_in, t_out)
        call_id = self._record(
            messages, params, cache_key=key, role=self.role, base_url=self.endpoint.base_url,
            model=self.endpoint.model, answer=text, finish_reason=sent.finish, tokens_in=t_in, tokens_out=t_out,
            latency_ms=latency, cost=cost, attempts=attempts, retries=dumps(sent.retries),
            usage_unknown=int(unknown), purpose=purpose,
        )
        log.info("%s %s ok in %.0f ms (%s in, %s out, %d attempt(s))", self.role, self.label, latency,
                 "?" if unknown else t_in, "?" if unknown else t_out, attempts)
        return ChatResult(text, t_in, t_out, latency, cost, False, call_id, attempts, sent.finish, unknown)

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

        Repairs stop early when they cannot help: a repair answered with the very JSON object it asked to
        repair (however laid out: the model did not act on the problem) is not followed by another, and a
        session's client gives up a kind of call's repairs after :data:`FUTILE_ROUNDS` calls of that kind in a
        row whose every reply was a JSON object and none usable, repairs included.

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
            JSONOutputError: still invalid after the repairs; the message holds the last problem (and why
                fewer repairs than ``max_repairs`` were sent, when they were).
            ContextOverflowError: a repair cannot fit the model's context (not sent); ``results``: the calls
                made.
        """
        from engine.llm import structured

        if json_schema is None:
            json_schema = structured.schema_of(schema)
        given_up = self.session_id is not None and self._futile.get(call, 0) >= FUTILE_ROUNDS
        allowed = 0 if given_up else max_repairs
        base = [dict(m) for m in messages]
        convo = base
        results: list[ChatResult] = []
        problems: list[str] = []
        problem = ""
        dialect = self._dialect()
        base_size: int | None = None
        scale = 1.0
        stopped = ""  # why no further repair was sent although the bound allowed one
        said: list[str | None] = []  # each reply's JSON object (canonical), None when it held none
        for attempt in range(allowed + 1):
            # recorded as the call's purpose; a repair as its own ("judge repair"), so repairs are counted
            purpose = call if attempt == 0 else f"{call} repair"
            result, dialect = await self._chat_structured(convo, json_schema, schema.__name__, dialect, params,
                                                          purpose)
            results.append(result)
            value = None
            said.append(None)
            try:
                if result.finish_reason == TRUNCATED:
                    raise ValueError("the reply was cut at the endpoint's size or time cap (max_reply_chars, "
                                     "max_call_seconds); reply with a much shorter JSON object")
                candidates = extract_json_all(result.text, quoted=quoted, markers=markers)
                said[-1] = canonical(candidates[-1])  # what the reply says, however it is laid out
                value = schema.model_validate(candidates[-1])  # the last object is the reply's
                dumped = value.model_dump(mode="json")
                said[-1] = mine = canonical(dumped)  # as validated: 1 and 1.0 are one number where the schema says so
                problem = (structured.echoed_placeholder(dumped, base, examples)
                           or (validate(value) if validate else None) or "")
                if not problem:  # another object that fits too and says otherwise: which one is meant?
                    for candidate in candidates[:-1]:
                        try:
                            other = schema.model_validate(candidate)
                        except ValidationError:
                            continue
                        if canonical(other.model_dump(mode="json")) != mine and not (validate and validate(other)):
                            problem = ("the reply holds two different JSON objects that each fit and disagree; "
                                       "reply with exactly one")
                            break
            except (ValueError, ValidationError) as exc:
                problem = compact_error(exc)
                if result.finish_reason == "length":
                    problem += " (the reply stopped at its token budget: be brief)"
            if not problem:
                if attempt:
                    self._futile.pop(call, None)
                return JSONResult(value, results, dialect, problems)
            problem = redact(problem)
            problems.append(problem)
            if attempt == allowed:
                break
            if attempt and said[-1] is not None and said[-1] == said[-2]:
                # the repair was answered with the very object it asked to repair: the model did not act on the
                # problem, and another would only cost a call (a reply with no object, garbled on the way or
                # prose, is repaired as before: the same garbage twice can be a proxy's, not the model's)
                stopped = " (the last repair was answered with the same reply as the one it repaired)"
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
        sent = len(results) - 1
        if given_up:
            stopped = f" (no repair sent: {call} repairs were given up for this session)"
        elif sent and self.session_id is not None and None not in said:
            # a round counts when every reply was the model's own JSON object, none usable: a garbled reply
            # (a cut stream, a proxy's page) says nothing of whether the model repairs
            self._futile[call] = self._futile.get(call, 0) + 1
            if self._futile[call] == FUTILE_ROUNDS:
                self._note_futile(call, turn)
        error = JSONOutputError(
            f"{self.role} at {self.endpoint.base_url} (model {self.endpoint.model}) gave no valid JSON "
            f"after {sent} repair(s): {problem}{stopped}",
            endpoint=self.endpoint.base_url,
        )
        error.results, error.problems = results, problems
        raise error

