"""Secrets never leave viva: one :func:`redact` every outgoing string passes through.

What is removed (replaced by ``[REDACTED]``):

- the *values* of registered secrets: the API keys read from the environment variables the
  configuration names (``api_key_env`` of the kernel, the judge and every target, plus
  ``--api-key-env``). :func:`register_config` registers them at start-up, and
  :meth:`engine.config.ModelConfig.api_key` registers every key it reads, so a key is known before
  any request that uses it is sent;
- key-shaped tokens, registered or not: provider prefixes (``sk-…``, ``ghp_…``, ``hf_…``,
  ``AKIA…``, ``xoxb-…``…), ``Bearer <token>``, and a long random-looking value after a name such as
  ``api_key``, ``token``, ``secret`` or ``password`` (``api_key=…``, ``"token": "…"``).

Where it is applied (the choke points): :class:`engine.store.Store` (every text column written by
``insert``/``update`` and every event payload), the log file (:class:`RedactingFilter` on viva's
handler), the LLM client (answers, retry reasons, error messages, streamed pieces through
:class:`StreamRedactor`), the command line's standard output and error (:func:`redacted_std_streams`)
and the report exporters.

A random-looking value is at least 16 characters of ``[A-Za-z0-9_-./+=~]`` with a letter and a digit
and a Shannon entropy of at least 3 bits per character; after a generic name (``key``, ``token``) a
value of only hex digits and dashes is kept (hashes, UUIDs and cache keys are not secrets).
"""

from __future__ import annotations

import logging
import math
import os
import re
import sys
import threading
from collections import Counter
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from typing import Any

from engine.streams import FilteredStream

REDACTED = "[REDACTED]"
"""What a secret is replaced by."""

MIN_SECRET_LENGTH = 8
"""Registered values shorter than this are ignored (replacing them would mangle ordinary text)."""

_lock = threading.Lock()
_secrets: set[str] = set()
_secret_re: re.Pattern[str] | None = None

_ENV_NAME_RE = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")
_VALUE = r"[A-Za-z0-9_\-./+=~]"

_PREFIXED_RE = re.compile(
    r"(?<![A-Za-z0-9_-])(?:"
    r"(?P<sk>sk-(?:proj-|ant-(?:api\d+-)?|live-|test-|or-v1-|svcacct-)?)(?P<skbody>[A-Za-z0-9_-]{16,})"
    r"|gh[pousr]_[A-Za-z0-9]{30,}|github_pat_[A-Za-z0-9_]{30,}|glpat-[A-Za-z0-9_-]{20,}"
    r"|xox[abprs]-[A-Za-z0-9-]{10,}|AKIA[0-9A-Z]{16}|AIza[0-9A-Za-z_-]{35}"
    r"|hf_[A-Za-z0-9]{30,}|gsk_[A-Za-z0-9]{30,}|r8_[A-Za-z0-9]{30,}|pk-lf-[A-Za-z0-9-]{20,}"
    r")(?![A-Za-z0-9_-])"
)
_BEARER_RE = re.compile(r"(?i)(?<![A-Za-z0-9])(?P<lead>bearer\s+)(?P<value>[A-Za-z0-9._~+/-]{8,}=*)")
_NAMES = (r"api[_-]?key|apikey|access[_-]?key|secret[_-]?key|private[_-]?key|key|token|secret|password"
          r"|passwd|pwd|credentials?|auth")
_CONTEXT_RE = re.compile(
    r"(?i)(?<![A-Za-z0-9])(?P<name>(?:" + _NAMES + r")s?(?:[_.-][A-Za-z0-9]+)*)"
    r"(?P<sep>[\"']?\s*[:=]\s*[\"']?|[\"']?\s+(?:is\s+)?[\"']?)"
    r"(?P<value>" + _VALUE + r"{16,})"
)
_HEXISH_RE = re.compile(r"^[0-9a-fA-F-]+$")
# Cheap substring checks first: most text holds none of these, and ``in`` is far faster than a regex scan.
_PREFIX_HINTS = ("sk-", "gh", "github_pat_", "glpat-", "xox", "AKIA", "AIza", "hf_", "gsk_", "r8_", "pk-lf-")
_CONTEXT_HINTS = ("key", "token", "secret", "passw", "pwd", "credential", "auth")


def entropy(text: str) -> float:
    """Shannon entropy of the characters of ``text``, in bits per character (0 for empty text)."""
    if not text:
        return 0.0
    n = len(text)
    return -sum(c / n * math.log2(c / n) for c in Counter(text).values())


def looks_random(value: str, allow_hex: bool = True) -> bool:
    """Whether ``value`` looks like a generated credential rather than a word or an identifier.

    At least 16 characters, a letter and a digit, and at least 3 bits of entropy per character;
    with ``allow_hex=False`` a value of only hex digits and dashes (a hash, a UUID) does not count.
    """
    if len(value) < 16 or not re.search(r"\d", value) or not re.search(r"[A-Za-z]", value):
        return False
    if not allow_hex and _HEXISH_RE.match(value):
        return False
    return entropy(value) >= 3.0


MEMO_CHARS = 1 << 16
"""Characters (of the texts and their results) :func:`redact` remembers at most: a bound on memory, so that a
knowledge base's build, whose every chunk passes here once, holds no more than a short session does."""
MEMO_TEXT_CHARS = 1 << 13
"""A longer text is not remembered (it would push out many shorter ones that recur)."""

_memo: dict[str, str] = {}
_memo_chars = 0
_generation = 0
"""Bumped (under ``_lock``) whenever the registered secrets change; a result computed under an older
generation is not remembered, so no text is ever answered with a redaction that missed a new secret."""


def _rebuild() -> None:
    global _secret_re, _generation, _memo_chars
    values = sorted(_secrets, key=len, reverse=True)
    _secret_re = re.compile("|".join(re.escape(v) for v in values)) if values else None
    _generation += 1
    _memo.clear()
    _memo_chars = 0


def register_secret(value: str | None) -> bool:
    """Remember a secret value so :func:`redact` removes it wherever it appears.

    Returns:
        True when the value is now registered (values shorter than :data:`MIN_SECRET_LENGTH` are not).
    """
    if not value:
        return False
    value = value.strip()
    if len(value) < MIN_SECRET_LENGTH:
        return False
    with _lock:
        if value not in _secrets:
            _secrets.add(value)
            _rebuild()
    return True


def register_env(name: str | None) -> bool:
    """Register the value of the environment variable ``name`` (when set) as a secret."""
    if not name or not is_env_name(name):
        return False
    return register_secret(os.environ.get(name))


def register_config(config: Any, api_key_envs: Iterable[str | None] = ()) -> int:
    """Register the keys of every configured endpoint (kernel, judge, targets) and of ``api_key_envs``.

    Args:
        config: an :class:`engine.config.Config` (anything with ``kernel``, ``judge`` and ``targets``).
        api_key_envs: further variable names, e.g. the ``--api-key-env`` of a command.

    Returns:
        How many secret values are registered in total.
    """
    names: list[str | None] = [getattr(config.kernel, "api_key_env", None), getattr(config.judge, "api_key_env", None)]
    names += [getattr(t, "api_key_env", None) for t in (getattr(config, "targets", None) or {}).values()]
    names += list(api_key_envs)
    for name in names:
        register_env(name)
    with _lock:
        return len(_secrets)


def clear() -> None:
    """Forget every registered secret (tests; a new configuration)."""
    with _lock:
        _secrets.clear()
        _rebuild()


def is_env_name(value: str) -> bool:
    """Whether ``value`` can be the name of an environment variable (``[A-Za-z_][A-Za-z0-9_]*``)."""
    return bool(_ENV_NAME_RE.match(value))


def looks_like_key(value: str) -> bool:
    """Whether a string given where a variable *name* was expected looks like a key instead.

    True for anything :func:`redact` would change, for a registered secret, and for a long
    mixed-case-and-digit string (``AbC3…``), which names of environment variables never are.
    """
    value = value.strip()
    if not value:
        return False
    if redact(value) != value:
        return True
    has_lower, has_upper = bool(re.search(r"[a-z]", value)), bool(re.search(r"[A-Z]", value))
    return len(value) >= 20 and has_lower and has_upper and bool(re.search(r"\d", value))


def _prefixed(m: re.Match[str]) -> str:
    if m.group("sk") is not None and not looks_random(m.group("skbody")):
        return m.group(0)
    return REDACTED


def _bearer(m: re.Match[str]) -> str:
    value = m.group("value")
    if len(value) >= 16 or (re.search(r"\d", value) and re.search(r"[A-Za-z]", value)):
        return m.group("lead") + REDACTED
    return m.group(0)


def _context(m: re.Match[str]) -> str:
    if looks_random(m.group("value"), allow_hex=False):
        return m.group("name") + m.group("sep") + REDACTED
    return m.group(0)


def redact(text: str) -> str:
    """``text`` with every registered secret and every key-shaped token replaced by ``[REDACTED]``.

    Results are remembered by text (at most :data:`MEMO_CHARS`, the oldest forgotten first): the same
    prompt, passage or stored value passes here many times (once as a call's message, again at the store's
    choke point, in every session), and most of the cost is the scans of long texts. The memo is emptied
    whenever a secret is registered."""
    global _memo_chars
    if not text or not isinstance(text, str):
        return text
    known = _memo.get(text)
    if known is not None:
        return known
    generation = _generation
    out = _redact(text)
    size = len(text) + (len(out) if out is not text else 0)
    if size <= MEMO_TEXT_CHARS:
        with _lock:
            if generation == _generation and text not in _memo:  # no secret registered meanwhile
                while _memo and _memo_chars + size > MEMO_CHARS:
                    old = next(iter(_memo))
                    gone = _memo.pop(old)
                    _memo_chars -= len(old) + (len(gone) if gone is not old else 0)
                _memo[text] = out
                _memo_chars += size
    return out


def _redact(text: str) -> str:
    pattern = _secret_re
    if pattern is not None:
        text = pattern.sub(REDACTED, text)
    if any(h in text for h in _PREFIX_HINTS):
        text = _PREFIXED_RE.sub(_prefixed, text)
    lower = text.lower()
    if "bearer" in lower:
        text = _BEARER_RE.sub(_bearer, text)
    if any(h in lower for h in _CONTEXT_HINTS):
        text = _CONTEXT_RE.sub(_context, text)
    return text


def redact_value(value: Any) -> Any:
    """A copy of ``value`` with every string inside (dict values and keys, list and tuple items) redacted."""
    if isinstance(value, str):
        return redact(value)
    if isinstance(value, dict):
        return {redact_value(k): redact_value(v) for k, v in value.items()}
    if isinstance(value, list):
        return [redact_value(v) for v in value]
    if isinstance(value, tuple):
        return tuple(redact_value(v) for v in value)
    return value


def redact_in_place(value: Any) -> Any:
    """Redact the strings inside a dict or list *in place* (and return it).

    The store redacts an event's payload this way, so a caller that hands the same dict to a live
    listener after writing it (the CLI's live printer) shows what was stored.
    """
    if isinstance(value, dict):
        for k in list(value):
            v = value[k]
            if isinstance(v, (dict, list)):
                redact_in_place(v)
            else:
                value[k] = redact_value(v)
    elif isinstance(value, list):
        for i, v in enumerate(value):
            if isinstance(v, (dict, list)):
                redact_in_place(v)
            else:
                value[i] = redact_value(v)
    return value


# -- streams ------------------------------------------------------------------------------------
_WORD_RE = re.compile(r"\S+\s*")
_CONTEXT_WORD_RE = re.compile(
    r"(?i)^[\"'{(\[]*(?:[A-Za-z0-9]+[_.-])*(?:" + _NAMES + r"|bearer|basic|authorization)s?(?:[_.-][A-Za-z0-9]+)*"
    r"[\"']?\s*[:=]?\s*[\"']?\s*$|^[\"']?[:=]+[\"']?\s*$|^is\s*$")


class StreamRedactor:
    """Redacts text that arrives in pieces (a streamed answer) without splitting a secret.

    :meth:`feed` returns the part of the text so far that is safe to show: whole words, never the
    last (possibly incomplete) word, and never a word that could introduce a secret (``Bearer``,
    ``api_key:``, ``=``) before the word that follows it. :meth:`flush` returns the rest at the end.
    The pieces returned, joined, equal :func:`redact` of the whole text up to where the cuts fall.
    """

    MAX_HOLD = 4096
    """Characters held back at most; beyond that the held text is released (redacted) anyway."""

    def __init__(self) -> None:
        self.pending = ""

    def reset(self) -> None:
        """Drop the held text (the stream restarts from the beginning)."""
        self.pending = ""

    def feed(self, piece: str) -> str:
        """Add a piece; returns the redacted text that can be shown now (possibly empty)."""
        self.pending += piece
        units = _WORD_RE.findall(self.pending)
        lead = len(self.pending) - sum(len(u) for u in units)  # leading whitespace
        if not units:
            return ""
        # a word not yet followed by whitespace may be incomplete
        hold = len(units) if units[-1][-1].isspace() else len(units) - 1
        while hold > 0 and _CONTEXT_WORD_RE.match(units[hold - 1]):
            hold -= 1
        cut = lead + sum(len(u) for u in units[:hold])
        if cut == 0 and len(self.pending) > self.MAX_HOLD:
            cut = len(self.pending)
        if cut == 0:
            return ""
        out, self.pending = self.pending[:cut], self.pending[cut:]
        return redact(out)

    def flush(self) -> str:
        """The redacted rest of the text (end of the stream)."""
        out, self.pending = self.pending, ""
        return redact(out)


class RedactingStream(FilteredStream):
    """A text stream (standard output or error) whose every write is redacted first."""

    def filter(self, text: str) -> str:
        """``text`` redacted."""
        return redact(text)


@contextmanager
def redacted_std_streams() -> Iterator[None]:
    """Route ``sys.stdout`` and ``sys.stderr`` through :class:`RedactingStream` while inside."""
    saved = sys.stdout, sys.stderr
    if not isinstance(sys.stdout, RedactingStream) and sys.stdout is not None:
        sys.stdout = RedactingStream(sys.stdout)  # type: ignore[assignment]
    if not isinstance(sys.stderr, RedactingStream) and sys.stderr is not None:
        sys.stderr = RedactingStream(sys.stderr)  # type: ignore[assignment]
    try:
        yield
    finally:
        sys.stdout, sys.stderr = saved


class RedactingFilter(logging.Filter):
    """A logging filter that redacts the message, its arguments and any traceback of each record."""

    _formatter = logging.Formatter()

    def filter(self, record: logging.LogRecord) -> bool:
        """Redact the record in place; never drops it."""
        message = record.getMessage()
        record.msg, record.args = redact(message), None
        if record.exc_info and not record.exc_text:
            record.exc_text = self._formatter.formatException(record.exc_info)
        if record.exc_text:
            record.exc_text = redact(record.exc_text)
            record.exc_info = None
        if record.stack_info:
            record.stack_info = redact(record.stack_info)
        return True


def install_log_filter(handler: logging.Handler) -> None:
    """Add a :class:`RedactingFilter` to ``handler`` (once)."""
    if not any(isinstance(f, RedactingFilter) for f in handler.filters):
        handler.addFilter(RedactingFilter())


__all__ = ["REDACTED", "MIN_SECRET_LENGTH", "RedactingFilter", "RedactingStream", "StreamRedactor", "clear",
           "entropy", "install_log_filter", "is_env_name", "looks_like_key", "looks_random", "redact",
           "redact_in_place", "redact_value", "redacted_std_streams", "register_config", "register_env",
           "register_secret"]
