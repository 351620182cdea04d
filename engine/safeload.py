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
"""

from __future__ import annotations

import json
import re
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
