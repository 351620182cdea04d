"""Structured output: per-call JSON schemas a grammar can enforce, sent in each endpoint's dialect.

A JSON call sends its schema as ``response_format`` in one of four dialects (``DIALECTS``, strongest
first):

- ``json_schema``: ``{"type": "json_schema", "json_schema": {"name", "schema", "strict": true}}``
  (OpenAI, vLLM, Ollama);
- ``json_object+schema``: ``{"type": "json_object", "schema": ...}`` (llama-cpp-python's server, which
  refuses ``json_schema`` with HTTP 400 ``Input should be 'text' or 'json_object'``);
- ``json_object``: plain JSON mode, no schema;
- ``off``: nothing; the prompt alone asks for JSON.

The endpoint's ``structured`` setting picks the first rung (``auto`` and ``json_schema`` start at the
top, ``json_object`` at ``json_object+schema``); under ``auto`` a 400 whose message names
``response_format`` (or the dialect's words) steps down one rung and the call is sent again, and the
rung that worked is remembered for the endpoint (:func:`remember`, per process). The validation and
repair loop of :meth:`engine.llm.client.LLMClient.json_result` stays the second line: a grammar
keeps the shape, the checks keep the meaning.

Schemas (:func:`schema_of`) are built from the pydantic models that parse the replies, inlined (no
``$ref``: grammar converters differ in what they follow), every object closed
(``additionalProperties: false``) with all its properties required and in the model's order (a
grammar writes them in that order, so a model lists ``rationale`` before ``met``). Call sites narrow
them further: ids as an enum or as an object's keys, exact item counts, string length bounds, integer
ratings as an enum (llama.cpp's grammar ignored an integer ``maximum``).
"""

from __future__ import annotations

import copy
import re
import threading
from typing import Any

from pydantic import BaseModel

DIALECTS = ("json_schema", "json_object+schema", "json_object", "off")
"""The rungs, strongest first."""

_START = {"auto": 0, "json_schema": 0, "json_object": 1, "off": 3}

_known: dict[tuple[str, str], str] = {}
_lock = threading.Lock()


def start_dialect(setting: str) -> str:
    """The first rung for an endpoint's ``structured`` setting."""
    return DIALECTS[_START.get(setting, 0)]


def known_dialect(base_url: str, model: str) -> str | None:
    """The rung remembered for an endpoint (None before its first JSON call under ``auto``)."""
    with _lock:
        return _known.get((base_url.rstrip("/"), model))


def remember(base_url: str, model: str, dialect: str) -> None:
    """Remember the rung that an endpoint accepted (for the rest of the process)."""
    with _lock:
        _known[(base_url.rstrip("/"), model)] = dialect


def forget_all() -> None:
    """Forget every remembered rung (tests)."""
    with _lock:
        _known.clear()


def next_dialect(dialect: str) -> str | None:
    """The rung below ``dialect`` (None below ``off``)."""
    i = DIALECTS.index(dialect)
    return DIALECTS[i + 1] if i + 1 < len(DIALECTS) else None


_REFUSAL_RE = re.compile(r"response_format|json_schema|json_object|Input should be 'text'|schema", re.I)


def refuses_format(status: int | None, message: str) -> bool:
    """Whether an error is the server refusing the ``response_format``: a 400/422 naming it, or a 5xx whose
    message is a validation error of ``response_format`` (llama-cpp-python 0.3 answers HTTP 500 with
    ``'loc': ('body', 'response_format', 'type')``, ``Input should be 'text' or 'json_object'``)."""
    message = message or ""
    if status in (400, 422):
        return bool(_REFUSAL_RE.search(message))
    return status is not None and status >= 500 and "response_format" in message and (
        "Input should be" in message or "validation" in message.lower())


GRAMMAR_MAX_LENGTH = 800
"""The longest ``maxLength`` sent in llama-cpp-python's dialect. Its converter writes a ``maxLength`` of N as N
nested optional groups: four strings of 1,200 made its grammar parser fail ("failed to parse grammar"), and
the server then generated with no grammar at all; 800 parsed (issue 23's measurements)."""


def grammar_safe(schema: dict[str, Any], limit: int = GRAMMAR_MAX_LENGTH) -> dict[str, Any]:
    """``schema`` with every ``maxLength`` above ``limit`` lowered to it."""
    out = copy.deepcopy(schema)

    def walk(node: Any) -> None:
        if isinstance(node, dict):
            if isinstance(node.get("maxLength"), int) and node["maxLength"] > limit:
                node["maxLength"] = limit
            for v in node.values():
                walk(v)
        elif isinstance(node, list):
            for v in node:
                walk(v)

    walk(out)
    return out


def response_format(dialect: str, schema: dict[str, Any] | None, name: str = "reply") -> dict[str, Any] | None:
    """The ``response_format`` parameter for a rung (None for ``off``, or without a schema for the schema rungs)."""
    if dialect == "off":
        return None
    if dialect == "json_object":
        return {"type": "json_object"}
    if schema is None:
        return {"type": "json_object"}
    if dialect == "json_object+schema":
        return {"type": "json_object", "schema": grammar_safe(schema)}
    return {"type": "json_schema", "json_schema": {"name": _name(name), "schema": schema, "strict": True}}


def _name(name: str) -> str:
    return re.sub(r"[^A-Za-z0-9_-]", "_", name)[:64] or "reply"


# -- schemas --------------------------------------------------------------------------------------


def _inline(node: Any, defs: dict[str, Any]) -> Any:
    if isinstance(node, dict):
        if "$ref" in node:
            target = defs[node["$ref"].rsplit("/", 1)[-1]]
            merged = {**_inline(target, defs), **{k: v for k, v in node.items() if k != "$ref"}}
            return merged
        out = {}
        for k, v in node.items():
            if k in ("$defs", "title", "default"):
                continue
            out[k] = _inline(v, defs)
        if out.get("type") == "object" and "properties" in out:
            out["required"] = list(out["properties"])
            out["additionalProperties"] = False
        if "anyOf" in out:  # Optional[X]: keep X (a grammar need not allow null where the parser has a default)
            options = [o for o in out["anyOf"] if o.get("type") != "null"]
            if len(options) == 1:
                rest = {k: v for k, v in out.items() if k != "anyOf"}
                out = {**options[0], **rest}
        return out
    if isinstance(node, list):
        return [_inline(v, defs) for v in node]
    return node


def schema_of(model: type[BaseModel]) -> dict[str, Any]:
    """The JSON schema of a pydantic model, inlined and closed (see the module docstring)."""
    raw = model.model_json_schema()
    return _inline(raw, raw.get("$defs", {}))


def string(min_length: int = 0, max_length: int | None = None) -> dict[str, Any]:
    """A string schema with length bounds."""
    s: dict[str, Any] = {"type": "string"}
    if min_length:
        s["minLength"] = min_length
    if max_length:
        s["maxLength"] = max_length
    return s


def closed(properties: dict[str, Any]) -> dict[str, Any]:
    """An object schema with exactly these properties, all required, in this order."""
    return {"type": "object", "properties": properties, "required": list(properties),
            "additionalProperties": False}


# -- degenerate replies ---------------------------------------------------------------------------

_PLACEHOLDER_RE = re.compile(r"(?<!<)<(?!<)[^<>\n]{1,60}>(?!>)")
"""``<the question>``; never a part of a ``<<<MARKER …>>>`` run."""


def placeholders_in(messages: Any) -> set[str]:
    """The ``<…>`` placeholders a prompt's instructions (its system messages) hold: what a weak model
    copies instead of writing. Quoted candidate text is in user messages and never counts (an answer may
    hold ``<div>``)."""
    found: set[str] = set()
    for m in messages:
        content = m.get("content") if isinstance(m, dict) and m.get("role") == "system" else None
        if isinstance(content, str):
            found.update(_PLACEHOLDER_RE.findall(content))
    return found


def strings_of(value: Any, path: str = "") -> list[tuple[str, str]]:
    """Every string in a JSON value with its path (``verdicts.c1.rationale``)."""
    out: list[tuple[str, str]] = []
    if isinstance(value, str):
        out.append((path or "value", value))
    elif isinstance(value, dict):
        for k, v in value.items():
            out.extend(strings_of(v, f"{path}.{k}" if path else str(k)))
    elif isinstance(value, list):
        for i, v in enumerate(value):
            out.extend(strings_of(v, f"{path}[{i}]"))
    return out


def echoed_placeholder(value: Any, messages: Any, examples: Any = ()) -> str | None:
    """The problem with a reply that copies a placeholder (``<updated summary>``) or an example value
    of the prompt instead of writing its own, or None."""
    marks = placeholders_in(messages)
    example_set = {e.strip() for e in examples if isinstance(e, str) and e.strip()}
    for path, text in strings_of(value):
        stripped = text.strip()
        for mark in marks:
            if mark in text:
                return (f"{path} is the placeholder {mark!r} copied from the instructions; "
                        "write the actual content")
        if stripped and stripped in example_set:
            return f"{path} copies the example value {stripped[:60]!r} from the instructions; write your own"
    return None


# -- repairs --------------------------------------------------------------------------------------

REPAIR_HEAD = "Your previous reply could not be used (repair {n} of {of}): "
REPAIR_WITH_SCHEMA = ("\nReply again with only one JSON object that matches this JSON schema, no prose and no code "
                      "fence:\n{schema}")
REPAIR_HELD = ("\nReply again with only one JSON object of the shape asked for above, no prose and no code fence "
               "(the server holds the reply to the call's JSON schema).")
"""The repair's request when the schema's text is left out to fit the context: only where the dialect sends
the schema for the server's grammar (:data:`HELD`)."""
SCHEMA_TEXT_CHARS = 4000
"""A schema's text in a repair is cut here (``...``): the server's grammar, not the text, holds a long one."""
HELD = ("json_schema", "json_object+schema")
"""The rungs that send the schema itself, for the server's grammar to hold the reply to it."""


def schema_text(schema: dict[str, Any]) -> str:
    """A schema as a repair shows it: compact JSON, cut at :data:`SCHEMA_TEXT_CHARS`."""
    import json

    text = json.dumps(schema, ensure_ascii=False, separators=(",", ":"))
    return text if len(text) <= SCHEMA_TEXT_CHARS else text[:SCHEMA_TEXT_CHARS] + "..."


def repair_size(schema: dict[str, Any] | None, problem: str = "") -> int:
    """What a repair message takes, in prompt characters (:mod:`engine.llm.fit`): the wording at the prose
    rate, the schema's text (None: left out, :data:`REPAIR_HELD`) and the problem at JSON's
    (:func:`engine.llm.fit.json_size`), the message's own overhead. With no ``problem``, one of
    :data:`REPAIR_PROBLEM_CHARS` is assumed: what a caller sizing its first prompt keeps free for a repair
    (:meth:`engine.llm.LLMClient.fitted_json`)."""
    from engine.llm.fit import MESSAGE_CHARS, json_size, size

    head = size(REPAIR_HEAD.format(n=9, of=9))
    tail = (size(REPAIR_WITH_SCHEMA.format(schema="")) + json_size(schema_text(schema)) if schema is not None
            else size(REPAIR_HELD))
    return head + tail + json_size(problem or "x" * REPAIR_PROBLEM_CHARS) + MESSAGE_CHARS


REPAIR_PROBLEM_CHARS = 300
"""The problem's length a first prompt's reserve assumes (a validation error quoting up to 120 characters of
the bad reply); a longer one is cut at the repair (:func:`repair_message`)."""


def repair_message(problem: str, schema: dict[str, Any], n: int, of: int, room: int | None = None,
                   held: bool = False, trims: list[str] | None = None) -> str | None:
    """Repair ``n`` of ``of``: the problem and the schema, in at most ``room`` prompt characters (None: the
    context is unknown, nothing is cut). The schema's text is a fixed part; where the server's grammar holds
    the reply to it (``held``: the dialect sent it, :data:`HELD`) and it does not fit, it is left out
    (:data:`REPAIR_HELD`). Then the problem, which is there so that the model sees what was wrong (it may
    quote the bad reply), keeps its beginning and end (:func:`engine.llm.fit.cut_middle`, at least
    :data:`engine.llm.fit.MIN_KEEP` characters). Each cut is described in ``trims``. None when even so the
    message does not fit ``room``."""
    from engine.llm.fit import MARK_CHARS, MESSAGE_CHARS, MIN_KEEP, cut_middle, json_size, size

    head = REPAIR_HEAD.format(n=n, of=of)
    tails = [(REPAIR_WITH_SCHEMA.format(schema=schema_text(schema)),
              size(head) + size(REPAIR_WITH_SCHEMA.format(schema="")) + json_size(schema_text(schema)) + MESSAGE_CHARS)]
    if held:
        tails.append((REPAIR_HELD, size(head) + size(REPAIR_HELD) + MESSAGE_CHARS))
    for i, (tail, fixed) in enumerate(tails):
        left_out = 0
        if room is None or fixed + json_size(problem) <= room:
            kept = problem
        elif len(problem) > MIN_KEEP and fixed + json_size(problem[:MIN_KEEP]) + MARK_CHARS <= room:
            share = (room - fixed - MARK_CHARS) * len(problem) // max(1, json_size(problem))
            kept, left_out = cut_middle(problem, max(MIN_KEEP, share))
        else:
            continue
        if trims is not None:
            if i:
                trims.append("the repair's JSON schema: left out (the server's grammar holds the reply to it)")
            if left_out:
                trims.append(f"the repair's problem: {len(problem) - left_out:,} of {len(problem):,} characters kept")
        return head + kept + tail
    return None
