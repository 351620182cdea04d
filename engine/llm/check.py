"""``viva check``: what an OpenAI-compatible endpoint supports, found with a few small requests.

Before a run, :func:`check_endpoint` asks an endpoint:

1. ``GET /models``: is it reachable, which models it serves, and the context length when it says so
   (vLLM's ``max_model_len``; ``context_length``, ``context_window``, ``n_ctx`` of a model entry), else
   llama.cpp's ``GET /props`` (``n_ctx``), else the endpoint's ``context:`` setting, else unknown;
2. one small JSON request per ``response_format`` rung, strongest first (``json_schema``,
   ``json_object`` with a schema, plain ``json_object``, none), until one is accepted: the structured
   output dialect (what ``structured: auto`` would settle on) and whether the reply was valid JSON for
   the schema;
3. whether a plain reply carries ``usage`` (prompt tokens counted by the server);
4. one streamed request: whether streaming works and whether the stream ends with ``usage``.

Every request asks for at most 16 tokens. Nothing is recorded in the data home; the API key comes from
the endpoint's ``api_key_env`` and is never shown.
"""

from __future__ import annotations

import json
import time
from dataclasses import asdict, dataclass, field
from typing import Any

from engine.config import ModelConfig
from engine.llm import structured
from engine.redact import redact

PROBE_SCHEMA = structured.closed({"ok": {"type": "boolean"}})
PROBE_MESSAGES = [{"role": "system", "content": 'Reply with only the JSON object {"ok": true}.'},
                  {"role": "user", "content": "Are you there?"}]
MAX_TOKENS = 16


@dataclass
class EndpointReport:
    """What :func:`check_endpoint` found; ``None`` is "could not tell" (the reason is in ``notes``)."""

    base_url: str
    model: str
    reachable: bool = False
    models: list[str] = field(default_factory=list)
    context: int | None = None
    context_source: str = "unknown"
    structured: str | None = None
    """The ``response_format`` rung the endpoint accepted (``json_schema``, ``json_object+schema``,
    ``json_object`` or ``off``)."""
    structured_valid: bool | None = None
    """Whether the reply under that rung was valid JSON for the probe's schema."""
    refused: list[str] = field(default_factory=list)
    """The rungs refused, each with the server's message."""
    usage: bool | None = None
    streaming: bool | None = None
    stream_usage: bool | None = None
    loopback: bool = False
    timeout: float = 0.0
    notes: list[str] = field(default_factory=list)

    def as_dict(self) -> dict[str, Any]:
        """The report as plain data (``--json``)."""
        return asdict(self)

    def lines(self) -> list[str]:
        """The report as lines of text, one per capability."""
        def yes(v: bool | None) -> str:
            return "unknown" if v is None else ("yes" if v else "no")

        out = [f"endpoint: {self.model}@{self.base_url}" + (" (loopback)" if self.loopback else ""),
               f"reachable: {yes(self.reachable)}" + (f" (models: {', '.join(self.models[:8])})" if self.models else "")]
        if not self.reachable:
            return out + [f"note: {n}" for n in self.notes]
        valid = "" if self.structured_valid is None else (
            ", reply valid for the schema" if self.structured_valid else ", reply NOT valid for the schema")
        out += [f"structured output: {self.structured or 'unknown'}{valid}"
                + (f" (refused: {'; '.join(self.refused)})" if self.refused else ""),
                f"usage in replies: {yes(self.usage)}",
                f"streaming: {yes(self.streaming)}; usage in streams: {yes(self.stream_usage)}",
                f"context: {self.context if self.context else 'unknown'} tokens ({self.context_source})",
                f"timeout in effect: {self.timeout:g}s"]
        return out + [f"note: {n}" for n in self.notes]


def _root(base_url: str) -> str:
    """The server's root (``http://host:port``) for llama.cpp's ``/props``."""
    from urllib.parse import urlsplit

    parts = urlsplit(base_url)
    return f"{parts.scheme}://{parts.netloc}"


def _context_of(entry: dict[str, Any]) -> int | None:
    for key in ("max_model_len", "context_length", "context_window", "n_ctx", "max_context_length"):
        value = entry.get(key)
        if isinstance(value, int) and not isinstance(value, bool) and value > 0:
            return value
    meta = entry.get("meta")
    if isinstance(meta, dict):
        value = meta.get("n_ctx")
        if isinstance(value, int) and value > 0:
            return value
    return None


def _message(exc: Any) -> str:
    """An openai status error's message (redacted, cut)."""
    body = getattr(exc, "body", None)
    err = body.get("error", body) if isinstance(body, dict) else body
    text = err.get("message", err) if isinstance(err, dict) else (err or getattr(exc, "message", exc))
    return redact(str(text))[:200]


def _get_json(url: str, key: str, timeout: float, headers: dict[str, str] | None = None) -> Any:
    """``GET url`` as JSON (None on any failure): for llama.cpp's ``/props``, outside the API's base URL."""
    import urllib.request

    request = urllib.request.Request(url, headers={"Authorization": f"Bearer {key}", **(headers or {})})
    try:
        with urllib.request.urlopen(request, timeout=timeout) as resp:  # noqa: S310 - the user's endpoint
            return json.loads(resp.read(1_000_000))
    except (OSError, ValueError):
        return None


async def context_of(endpoint: ModelConfig, models: list[dict[str, Any]] | None = None) -> tuple[int | None, str]:
    """(context tokens, where it came from): a ``/models`` entry, ``/props``, the ``context:`` setting, or
    unknown. ``models``: the ``/models`` entries when already fetched."""
    import asyncio

    key = endpoint.api_key()
    if models is None:
        listing = await asyncio.to_thread(_get_json, endpoint.base_url.rstrip("/") + "/models", key,
                                          min(30.0, endpoint.call_timeout), endpoint.header_values())
        models = listing.get("data") if isinstance(listing, dict) else None
    entries = [e for e in models or [] if isinstance(e, dict)]
    for entry in entries:
        found = _context_of(entry)
        if found and (entry.get("id") == endpoint.model or len(entries) == 1):
            return found, "/models"
    props = await asyncio.to_thread(_get_json, _root(endpoint.base_url) + "/props", key,
                                    min(30.0, endpoint.call_timeout), endpoint.header_values())
    if isinstance(props, dict):
        settings = props.get("default_generation_settings") or {}
        found = (settings.get("n_ctx") if isinstance(settings, dict) else None) or props.get("n_ctx")
        if isinstance(found, int) and found > 0:
            return found, "/props"
    if endpoint.context:
        return endpoint.context, "config"
    return None, "unknown"


async def check_endpoint(endpoint: ModelConfig) -> EndpointReport:
    """Probe an endpoint (see the module docstring); never raises for what the endpoint does."""
    import openai

    report = EndpointReport(endpoint.base_url, endpoint.model, loopback=endpoint.loopback,
                            timeout=endpoint.call_timeout)
    client = openai.AsyncOpenAI(base_url=endpoint.base_url, api_key=endpoint.api_key(),
                                timeout=endpoint.call_timeout, max_retries=0,
                                default_headers=endpoint.header_values() or None)
    try:
        try:
            listing = await client.get("/models", cast_to=object)
        except openai.APIStatusError as exc:
            report.reachable = exc.status_code < 500
            report.notes.append(f"GET /models answered HTTP {exc.status_code}: {_message(exc)}")
            listing = None
        except (openai.APIConnectionError, openai.APITimeoutError) as exc:
            report.notes.append(redact(f"GET {endpoint.base_url}/models failed: {type(exc).__name__}: "
                                       f"{exc.__cause__ or exc}")[:300])
            return report
        else:
            report.reachable = True
        entries = listing.get("data") if isinstance(listing, dict) else None
        report.models = [str(m.get("id")) for m in entries or [] if isinstance(m, dict)]
        report.context, report.context_source = await context_of(endpoint, entries)

        body = {"model": endpoint.model, "messages": PROBE_MESSAGES, "max_tokens": MAX_TOKENS, "temperature": 0}
        dialect: str | None = structured.start_dialect(endpoint.structured)
        while dialect is not None:
            fmt = structured.response_format(dialect, PROBE_SCHEMA, "probe")
            try:
                data = await client.post("/chat/completions", cast_to=object,
                                         body={**body, **({"response_format": fmt} if fmt else {})})
            except openai.APIStatusError as exc:
                message = _message(exc)
                if not structured.refuses_format(exc.status_code, message):
                    report.notes.append(f"chat request answered HTTP {exc.status_code}: {message}")
                    break
                report.refused.append(f"{dialect}: HTTP {exc.status_code} {' '.join(message.split())[:120]}")
                dialect = structured.next_dialect(dialect)
                continue
            except (openai.APIConnectionError, openai.APITimeoutError) as exc:
                report.notes.append(redact(f"chat request failed: {type(exc).__name__}: {exc}")[:300])
                return report
            report.structured = dialect
            try:
                text = data["choices"][0]["message"]["content"] or ""
                report.usage = bool((data.get("usage") or {}).get("prompt_tokens"))
                value = json.loads(text.strip().removeprefix("```json").removesuffix("```").strip())
                report.structured_valid = isinstance(value, dict) and isinstance(value.get("ok"), bool)
            except (ValueError, KeyError, IndexError, TypeError, AttributeError):
                report.structured_valid = False
            break

        chunks = finish = 0
        usage = False
        try:
            stream = await client.post("/chat/completions", cast_to=object, stream=True,
                                       stream_cls=openai.AsyncStream[object],
                                       body={**body, "stream": True, "stream_options": {"include_usage": True}})
            deadline = time.monotonic() + endpoint.call_timeout
            async for chunk in stream:
                if not isinstance(chunk, dict):
                    continue
                chunks += 1
                usage = usage or bool((chunk.get("usage") or {}).get("prompt_tokens"))
                finish += sum(1 for c in chunk.get("choices") or [] if isinstance(c, dict) and c.get("finish_reason"))
                if time.monotonic() > deadline:
                    break
            report.streaming = chunks > 0 and finish > 0
            report.stream_usage = usage
        except openai.APIStatusError as exc:
            report.notes.append(f"streamed request answered HTTP {exc.status_code}: {_message(exc)}")
        except (openai.APIConnectionError, openai.APITimeoutError) as exc:
            report.notes.append(redact(f"streamed request failed: {type(exc).__name__}: {exc}")[:300])
    finally:
        await client.close()
    if report.usage is False or report.stream_usage is False:
        report.notes.append("without usage the tokens of those calls are recorded as unknown (no estimate is made)")
    if report.context is None:
        report.notes.append("the server does not report its context: set `context:` for this endpoint so "
                            "viva can trim prompts before they overflow")
    return report


class EndpointSpecError(ValueError):
    """A ``viva check`` argument that names no endpoint."""


def resolve_endpoint(config: Any, spec: str, api_key_env: str | None = None) -> ModelConfig:
    """The endpoint ``viva check SPEC`` means: a name from ``targets:``, ``kernel`` or ``judge`` (the
    config's), ``openai:MODEL@BASE_URL``, or a bare ``http(s)://`` base URL (model ``default``).

    Raises:
        EndpointSpecError: none of those, naming what is accepted.
    """
    extra = {"api_key_env": api_key_env} if api_key_env else {}
    if spec in config.targets:
        return config.targets[spec].model_copy(update=extra)
    if spec in ("kernel", "judge"):
        chosen = (config.judge or config.kernel) if spec == "judge" else config.kernel
        if chosen is None:
            raise EndpointSpecError(f"the config has no {spec}: section (the offline kernel needs no endpoint)")
        return chosen.model_copy(update=extra)
    if spec.startswith("openai:") and "@" in spec:
        model, base_url = spec[len("openai:"):].split("@", 1)
        return ModelConfig(model=model, base_url=base_url, **extra)
    if spec.startswith(("http://", "https://")):
        return ModelConfig(base_url=spec, **extra)
    names = ", ".join(sorted(config.targets)) or "none configured"
    raise EndpointSpecError(f"unknown target {spec!r}: give a name from targets: ({names}), kernel, judge, "
                            "openai:MODEL@BASE_URL, a base URL, local, python:module:Class or kb:NAME")
