"""Parsers with limits: JSON nesting depth and YAML alias expansion, for every file viva reads.

Python's ``json`` parses recursively: JSON nested 200,000 deep ends in a ``RecursionError`` (and a
value nested 900 deep parses, then breaks whatever walks it later). PyYAML expands nothing while
loading, but a "billion laughs" document (anchors of anchors) becomes a structure whose *expanded*
size is exponential, which the first code that walks it (validation, redaction, JSON) pays for.

The rules, both checked before anything walks the data:

- JSON: at most :data:`MAX_JSON_DEPTH` nested arrays/objects. The text is scanned once (strings
  skipped) before ``json.loads``; a deeper value is :class:`JSONDepthError` naming the line.
- YAML: at most :data:`MAX_YAML_DEPTH` nested collections, at most :data:`MAX_YAML_ALIASES` alias
  uses, and at most :data:`MAX_YAML_NODES` nodes once every alias is expanded (a recursive alias is
  refused too). Counted on the composed node graph, where an alias is a shared node, so a bomb is
  refused in time proportional to its *written* size. Over a limit: :class:`YAMLLimitError`, a
  ``yaml.MarkedYAMLError`` with the line of the node that crossed it.

And every input file is read bounded (:func:`read_input`, :func:`check_input`,
:func:`iter_input_lines`): only a regular file (a FIFO, device or socket is one
:class:`InputError`), at most ``VIVA_MAX_INPUT_MB`` (default 1024 MB) of it, and, for line-based
formats, no line over ``VIVA_MAX_LINE_MB`` (default 16 MB).
"""

from __future__ import annotations

import json
import os
import re
import stat
from collections.abc import Iterator
from typing import Any

import yaml

MAX_JSON_DEPTH = 100
"""Deepest nesting of arrays and objects accepted in a JSON value (real data sets nest under 10)."""
MAX_YAML_DEPTH = 100
"""Deepest nesting of sequences and mappings accepted in a YAML document."""
MAX_YAML_ALIASES = 10_000
"""Most alias uses (``*name``) in one YAML document."""
MAX_YAML_NODES = 1_000_000
"""Most nodes of a YAML document with every alias expanded (a written node counts once per use)."""

_TOKENS = re.compile(r'"(?:[^"\\]|\\.)*"|[\[\]{}]')


class JSONDepthError(ValueError):
    """JSON nested deeper than the limit.

    Attributes:
        line: the 1-based line (of the text given) where the limit was crossed.
        depth: the limit.
    """

    def __init__(self, line: int, depth: int):
        self.line, self.depth = line, depth
        super().__init__(f"JSON nested more than {depth} levels deep (arrays/objects); viva refuses it")


def json_too_deep(text: str, max_depth: int = MAX_JSON_DEPTH) -> int | None:
    """The character offset where ``text`` first nests deeper than ``max_depth``, or None.

    Brackets inside strings do not count; the scan does not validate the JSON (``json.loads`` does).
    """
    if text.count("[") + text.count("{") <= max_depth:
        return None
    depth = 0
    for m in _TOKENS.finditer(text):
        c = m.group()
        if c in "[{":
            depth += 1
            if depth > max_depth:
                return m.start()
        elif c in "]}":
            depth -= 1
    return None


def loads_json(text: str, max_depth: int = MAX_JSON_DEPTH) -> Any:
    """``json.loads`` with the nesting limit checked first.

    Raises:
        JSONDepthError: nested deeper than ``max_depth`` (``.line`` counts from 1 in ``text``).
        json.JSONDecodeError: not valid JSON (as ``json.loads``).
    """
    at = json_too_deep(text, max_depth)
    if at is not None:
        raise JSONDepthError(text.count("\n", 0, at) + 1, max_depth)
    try:
        return json.loads(text)
    except RecursionError:  # a limit above the interpreter's own (the caller chose it)
        raise JSONDepthError(1, max_depth) from None


class YAMLLimitError(yaml.MarkedYAMLError):
    """A YAML document over one of the limits (depth, aliases, expanded size)."""


def _check_graph(root: yaml.Node) -> None:
    """Count depth, aliases and the expanded size of a composed document (iteratively, memoised per
    node, so shared alias targets are counted once per use without being walked again)."""
    size: dict[int, int] = {}
    aliases = 0
    seen: set[int] = set()
    on_path: set[int] = set()
    # (node, depth, state): state 0 = enter, 1 = leave
    stack: list[tuple[yaml.Node, int, int]] = [(root, 1, 0)]
    while stack:
        node, depth, state = stack.pop()
        key = id(node)
        children: list[yaml.Node] = []
        if isinstance(node, yaml.SequenceNode):
            children = list(node.value)
        elif isinstance(node, yaml.MappingNode):
            children = [n for pair in node.value for n in pair]
        if state == 1:
            on_path.discard(key)
            total = 1 + sum(size[id(c)] for c in children)
            if total > MAX_YAML_NODES:
                raise YAMLLimitError(None, None, f"more than {MAX_YAML_NODES:,} nodes once its aliases are "
                                     "expanded (a YAML bomb?); viva refuses it", node.start_mark)
            size[key] = total
            continue
        if key in on_path:
            raise YAMLLimitError(None, None, "a recursive alias (a node that contains itself); viva refuses it",
                                 node.start_mark)
        if key in seen:
            aliases += 1
            if aliases > MAX_YAML_ALIASES:
                raise YAMLLimitError(None, None, f"more than {MAX_YAML_ALIASES:,} alias uses; viva refuses it",
                                     node.start_mark)
            if key in size:
                continue
        seen.add(key)
        if depth > MAX_YAML_DEPTH:
            raise YAMLLimitError(None, None, f"nested more than {MAX_YAML_DEPTH} levels deep; viva refuses it",
                                 node.start_mark)
        on_path.add(key)
        stack.append((node, depth, 1))
        for c in children:
            if id(c) in on_path:
                raise YAMLLimitError(None, None, "a recursive alias (a node that contains itself); viva "
                                     "refuses it", c.start_mark)
            stack.append((c, depth + 1, 0))


def _compose(self: Any, parent: Any, index: Any) -> Any:
    # The composer recurses once per nesting level: stop before Python's own recursion limit.
    self._viva_depth = getattr(self, "_viva_depth", 0) + 1
    try:
        if self._viva_depth > MAX_YAML_DEPTH:
            raise YAMLLimitError(None, None, f"nested more than {MAX_YAML_DEPTH} levels deep; viva refuses it",
                                 self.peek_event().start_mark)
        return yaml.composer.Composer.compose_node(self, parent, index)
    finally:
        self._viva_depth -= 1


_LOADERS: dict[type, type] = {}


def capped_loader(base: type = yaml.SafeLoader) -> type:
    """A subclass of the SafeLoader-derived ``base`` that enforces the YAML limits."""
    if base not in _LOADERS:
        def get_single_node(self: Any) -> Any:
            node = base.get_single_node(self)
            if node is not None:
                _check_graph(node)
            return node

        _LOADERS[base] = type(f"Capped{base.__name__}", (base,),
                              {"compose_node": _compose, "get_single_node": get_single_node})
    return _LOADERS[base]


def load_yaml(text: str, base: type = yaml.SafeLoader) -> Any:
    """Parse one YAML document with ``base`` (a ``yaml.SafeLoader`` subclass) under the limits.

    Raises:
        YAMLLimitError: over a limit (a ``yaml.YAMLError`` with ``problem_mark``).
        yaml.YAMLError: not valid YAML.
    """
    return yaml.load(text, Loader=capped_loader(base))  # noqa: S506 - a SafeLoader subclass


# -- bounded input --------------------------------------------------------------------------------
DEFAULT_MAX_INPUT_MB = 1024.0
"""Largest input file viva reads (benchmarks, knowledge-base sources, labelled rows, config), in MB;
``VIVA_MAX_INPUT_MB`` overrides it."""
DEFAULT_MAX_LINE_MB = 16.0
"""Longest line of a line-based input (JSONL, CSV, labelled rows), in MB; ``VIVA_MAX_LINE_MB``
overrides it. Whole-document formats (JSON, YAML, Markdown) are bounded by the size limit only."""
_CHUNK = 1 << 20


class InputError(ValueError):
    """An input file viva refuses before (or while) reading it: not a regular file, over the size
    limit, or a line over the line limit.

    Attributes:
        path: the file.
        reason: what is wrong and what to do, without the path (``str()`` starts with the path).
        line: the 1-based line, for a line over the limit (else None).
    """

    def __init__(self, path: str | os.PathLike[str], reason: str, line: int | None = None):
        self.path, self.reason, self.line = str(path), reason, line
        super().__init__(f"{self.path}{f', line {line}' if line else ''}: {reason}")


def _limit_mb(name: str, default: float) -> float:
    raw = os.environ.get(name, "").strip()
    if not raw:
        return default
    try:
        value = float(raw)
    except ValueError:
        return default
    return value if value > 0 else default


def input_limits() -> tuple[int, int]:
    """(largest file, longest line) in bytes: ``VIVA_MAX_INPUT_MB`` and ``VIVA_MAX_LINE_MB`` (MB,
    fractions allowed) or :data:`DEFAULT_MAX_INPUT_MB` and :data:`DEFAULT_MAX_LINE_MB`."""
    return (int(_limit_mb("VIVA_MAX_INPUT_MB", DEFAULT_MAX_INPUT_MB) * 1024 * 1024),
            int(_limit_mb("VIVA_MAX_LINE_MB", DEFAULT_MAX_LINE_MB) * 1024 * 1024))


def _mb(n: int) -> str:
    return f"{n / (1024 * 1024):,.1f} MB" if n >= 1024 * 1024 else f"{n:,} bytes"


def _kind(mode: int) -> str:
    if stat.S_ISFIFO(mode):
        return "a FIFO (named pipe)"
    if stat.S_ISCHR(mode):
        return "a character device"
    if stat.S_ISBLK(mode):
        return "a block device"
    if stat.S_ISSOCK(mode):
        return "a socket"
    if stat.S_ISDIR(mode):
        return "a folder"
    return "not a regular file"


def _refuse_kind(path: str | os.PathLike[str], mode: int) -> InputError:
    return InputError(path, f"{_kind(mode)}, not a regular file; viva reads only regular files "
                      "(save the data to a file first)")


def _over_size(path: str | os.PathLike[str], size: int, limit: int, at_least: bool = False) -> InputError:
    return InputError(path, f"{'more than ' if at_least else ''}{_mb(size)}, over viva's input limit of "
                      f"{_mb(limit)}; split the file, or raise the limit with VIVA_MAX_INPUT_MB")


def check_input(path: str | os.PathLike[str], max_bytes: int | None = None) -> os.stat_result:
    """Check, without reading, that ``path`` is a regular file (a link to one is fine) within the size
    limit; its ``stat``. A missing file raises ``FileNotFoundError`` as ``os.stat`` does.

    Raises:
        InputError: a FIFO, device, socket or folder, or larger than ``max_bytes`` (default: the
            configured limit, :func:`input_limits`).
    """
    st = os.stat(path)
    if not stat.S_ISREG(st.st_mode):
        raise _refuse_kind(path, st.st_mode)
    limit = input_limits()[0] if max_bytes is None else max_bytes
    if st.st_size > limit:
        raise _over_size(path, st.st_size, limit)
    return st


def read_input(path: str | os.PathLike[str], *, lines: bool = False, max_bytes: int | None = None,
               max_line: int | None = None) -> bytes:
    """The bytes of the regular file ``path``, read with limits: the file is checked before it is
    opened and again on the open descriptor (opened non-blocking, so a FIFO swapped in never blocks),
    and at most the size limit (+1 byte) is ever read, so a file that grows while read is refused too.
    With ``lines``, a line longer than the line limit is refused, naming the line.

    Raises:
        InputError: see :func:`check_input`, or a line over the limit.
        OSError: missing or unreadable (as ``open``).
    """
    limit_bytes, limit_line = input_limits()
    limit = limit_bytes if max_bytes is None else max_bytes
    check_input(path, limit)
    fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0))
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            raise _refuse_kind(path, st.st_mode)
        chunks: list[bytes] = []
        total = 0
        while chunk := os.read(fd, min(_CHUNK, limit + 1 - total)):
            chunks.append(chunk)
            total += len(chunk)
            if total > limit:
                raise _over_size(path, total, limit, at_least=True)
    finally:
        os.close(fd)
    data = b"".join(chunks)
    if lines:
        check_lines(path, data, limit_line if max_line is None else max_line)
    return data


def check_lines(path: str | os.PathLike[str], data: bytes | str, max_line: int | None = None) -> None:
    """Raise :class:`InputError` naming the first line of ``data`` longer than ``max_line`` (default:
    the configured line limit) bytes (characters, for text); linear in the size of ``data``."""
    limit = input_limits()[1] if max_line is None else max_line
    if len(data) <= limit:
        return
    pattern = "(?m)^[^\n]{" + str(limit + 1) + "}"
    if isinstance(data, bytes):
        pattern = pattern.encode()  # type: ignore[assignment]
    m = re.search(pattern, data)
    if m is not None:
        line = data.count(b"\n" if isinstance(data, bytes) else "\n", 0, m.start()) + 1
        raise InputError(path, f"a line longer than {_mb(limit)}, over viva's line limit; split the record, "
                         "or raise the limit with VIVA_MAX_LINE_MB", line)


def iter_input_lines(path: str | os.PathLike[str], max_line: int | None = None) -> Iterator[bytes]:
    """The lines of the regular file ``path`` (each with its ``\\n``), read in blocks and never holding
    more than one line over the line limit: for a file too large to read at once.

    Raises:
        InputError: see :func:`check_input`, or a line over the limit (naming it).
    """
    limit_bytes, limit_line = input_limits()
    limit = limit_line if max_line is None else max_line
    check_input(path, limit_bytes)
    fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0))
    with os.fdopen(fd, "rb") as fh:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            raise _refuse_kind(path, os.fstat(fd).st_mode)
        number, total = 0, 0
        while True:
            line = fh.readline(limit + 2)
            if not line:
                return
            number += 1
            total += len(line)
            if total > limit_bytes:
                raise _over_size(path, total, limit_bytes, at_least=True)
            if len(line.rstrip(b"\r\n")) > limit:
                raise InputError(path, f"a line longer than {_mb(limit)}, over viva's line limit; split the "
                                 "record, or raise the limit with VIVA_MAX_LINE_MB", number)
            yield line
