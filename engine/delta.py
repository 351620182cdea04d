"""A text as the edit of another: what a growing text (a running summary, a judge prompt) stores per turn.

A delta is a JSON list of operations applied left to right: ``[start, end]`` copies ``base[start:end]``,
a string inserts itself. ``apply_delta(base, make_delta(base, new)) == new`` always (the writer checks it
before it stores a delta). The diff is one linear pass over lines (a line found in the base is copied),
refined for an edited line to its clauses and then to the characters that changed, so an appended
sentence or a dropped last answer costs what changed, not the whole text. A long word replaced by another
throughout (a per-call nonce in quote markers) becomes one ``rename`` at the head of the delta. Linear
time, no database: the store's texts (:mod:`engine.store.texts`) and the ``verdicts`` event's summary
(:mod:`engine.events.encode`) both use it, so it sits below both, with the small helpers.
"""

from __future__ import annotations

import json
import re
from bisect import bisect_left
from typing import Any

Delta = list[Any]
"""``[{"rename": [[old, new], ...]}?, [start, end] | str, ...]``: optional word renames applied to the base
first, then copies from the (renamed) base and inserted text, in order."""

def apply_delta(base: str, delta: Delta) -> str:
    """The text a delta describes, given its base.

    Raises:
        ValueError: an operation is neither ``[start, end]`` nor a string, or copies outside the base.
    """
    parts: list[str] = []
    if delta and isinstance(delta[0], dict):
        for old, new in delta[0].get("rename", []):
            base = base.replace(old, new)
        delta = delta[1:]
    n = len(base)
    for op in delta:
        if isinstance(op, str):
            parts.append(op)
        elif isinstance(op, list) and len(op) == 2 and all(isinstance(x, int) for x in op) and 0 <= op[0] <= op[1] <= n:
            parts.append(base[op[0]:op[1]])
        else:
            raise ValueError(f"bad delta operation {op!r} for a base of {n} characters")
    return "".join(parts)


def _common_prefix(a: str, b: str) -> int:
    """Length of the common prefix of two strings (bisection on slice equality: C-speed compares)."""
    lo, hi = 0, min(len(a), len(b))
    while lo < hi:
        mid = (lo + hi + 1) // 2
        if a[:mid] == b[:mid]:
            lo = mid
        else:
            hi = mid - 1
    return lo


def _common_suffix(a: str, b: str, limit: int) -> int:
    """Length of the common suffix of two strings, at most ``limit``."""
    lo, hi = 0, min(len(a), len(b), limit)
    while lo < hi:
        mid = (lo + hi + 1) // 2
        if a[len(a) - mid:] == b[len(b) - mid:]:
            lo = mid
        else:
            hi = mid - 1
    return lo


class _Builder:
    """Collects operations, merging adjacent copies and adjacent inserts."""

    def __init__(self) -> None:
        self.ops: Delta = []

    def copy(self, start: int, end: int) -> None:
        if end <= start:
            return
        last = self.ops[-1] if self.ops else None
        if isinstance(last, list) and last[1] == start:
            last[1] = end
        else:
            self.ops.append([start, end])

    def insert(self, text: str) -> None:
        if not text:
            return
        if self.ops and isinstance(self.ops[-1], str):
            self.ops[-1] += text
        else:
            self.ops.append(text)

    def splice(self, offset: int, old: str, new: str) -> None:
        """``old`` (at ``offset`` in the base) replaced by ``new``: keep their common ends."""
        head = _common_prefix(old, new)
        tail = _common_suffix(old, new, min(len(old), len(new)) - head)
        self.copy(offset, offset + head)
        self.insert(new[head:len(new) - tail])
        self.copy(offset + len(old) - tail, offset + len(old))


_CLAUSE = re.compile(r"[^,.;:!?\n]*(?:[,.;:!?\n]+\s*|$)")
_UNITS = (
    lambda text: text.splitlines(keepends=True),
    lambda text: [u for u in _CLAUSE.findall(text) if u],
)
"""How a text is cut for matching, coarse to fine: lines, then the clauses of a line that was edited."""
LONG_UNIT = 160
"""An edited line is matched clause by clause when it and the line it edits are longer than this together."""
_WORD_CHAR = re.compile(r"\w")
_TOKEN = re.compile(r"\w{8,}")
MAX_RENAMES = 3


def _match(out: _Builder, offset: int, old: str, new: str, level: int) -> None:
    """Add the operations turning ``old`` (at ``offset`` in the base) into ``new``.

    Level 0 walks the new text line by line: a line found in ``old`` starts a copy that runs as far as the
    two texts agree (one C-speed comparison, however many lines it spans); a line that is not there is an
    edit of the old line expected at that point when that one is gone from the new text (matched clause
    by clause when long, else spliced), and inserted otherwise. Level 1 does the same with the clauses of
    one edited line. Linear in the length of the texts, no quadratic matching.
    """
    if level:
        _match_units(out, offset, old, new)
        return
    i = last = 0
    while i < len(new):
        end = new.find("\n", i)
        end = len(new) if end < 0 else end + 1
        line = new[i:end]
        j = old.find(line, last)
        if j < 0:
            j = old.find(line)
        if j >= 0:
            run = _common_prefix(old[j:], new[i:])
            out.copy(offset + j, offset + j + run)
            i, last = i + run, j + run
            continue
        old_end = old.find("\n", last)
        old_end = len(old) if old_end < 0 else old_end + 1
        old_line = old[last:old_end]
        if old_line and new.find(old_line) < 0:
            if len(old_line) + len(line) > LONG_UNIT:
                _match(out, offset + last, old_line, line, 1)
            else:
                out.splice(offset + last, old_line, line)
            last = old_end
        else:
            out.insert(line)
        i = end


def _match_units(out: _Builder, offset: int, old: str, new: str) -> None:
    """Clause by clause: a clause of ``new`` found in ``old`` is copied, one that is not is spliced against
    the old clause expected there when that one is gone, and inserted otherwise."""
    a, b = _UNITS[1](old), _UNITS[1](new)
    starts = [offset]
    for unit in a:
        starts.append(starts[-1] + len(unit))
    where: dict[str, list[int]] = {}
    for i, unit in enumerate(a):
        where.setdefault(unit, []).append(i)
    kept = set(b)
    pos = 0
    for unit in b:
        hits = where.get(unit)
        if hits:
            if pos < len(a) and a[pos] == unit:
                i = pos
            else:
                k = bisect_left(hits, pos)
                i = hits[k] if k < len(hits) else hits[0]
            out.copy(starts[i], starts[i + 1])
            pos = i + 1
        elif pos < len(a) and a[pos] not in kept:
            out.splice(starts[pos], a[pos], unit)
            pos += 1
        else:
            out.insert(unit)


def _renames(base: str, new: str) -> list[list[str]]:
    """Long words of ``base`` replaced throughout by another (a per-call nonce in quote markers), found
    where the texts first differ: ``[[old, new], ...]`` (each old word occurs twice or more in the base
    and not at all in the new text)."""
    renames: list[list[str]] = []
    renamed = base
    for _ in range(MAX_RENAMES):
        p = _common_prefix(renamed, new)
        while p and _WORD_CHAR.match(renamed[p - 1]):
            p -= 1
        old, fresh = _TOKEN.match(renamed, p), _TOKEN.match(new, p)
        if old is None or fresh is None:
            break
        o, n = old.group(), fresh.group()
        if o == n or renamed.count(o) < 2 or o in new:
            break
        renamed = renamed.replace(o, n)
        renames.append([o, n])
    return renames


def make_delta(base: str, new: str) -> Delta:
    """Operations that turn ``base`` into ``new`` (see the module docstring).

    When a long word is replaced by another throughout (a nonce), the delta starts with
    ``{"rename": [[old, new], ...]}``: the base with those words replaced is what the copies read.
    """
    renames = _renames(base, new)
    renamed = base
    for o, n in renames:
        renamed = renamed.replace(o, n)
    out = _Builder()
    # the common head and tail (whole lines) are copied as they are; only the middle is matched
    head = _common_prefix(renamed, new)
    if head < len(renamed):
        head = renamed.rfind("\n", 0, head) + 1
    end = len(renamed) - _common_suffix(renamed, new, min(len(renamed), len(new)) - head)
    if 0 < end < len(renamed) and renamed[end - 1] != "\n":
        cut = renamed.find("\n", end)
        end = len(renamed) if cut < 0 else cut + 1
    new_end = len(new) - (len(renamed) - end)
    out.copy(0, head)
    _match(out, head, renamed[head:end], new[head:new_end], 0)
    out.copy(end, len(renamed))
    return [{"rename": renames}, *out.ops] if renames else out.ops


def compact(ops: Delta) -> str:
    """A delta as stored: compact JSON."""
    return json.dumps(ops, ensure_ascii=False, separators=(",", ":"))


def delta_if_smaller(base: str | None, new: str, ratio: float = 0.75) -> Delta | None:
    """A checked delta from ``base`` to ``new`` when it is smaller than ``ratio`` × the text, else None.

    None also when there is no base, or (a safeguard) when applying the delta would not give ``new``.
    """
    if base is None or not new:
        return None
    ops = make_delta(base, new)
    if len(compact(ops)) >= ratio * len(new) or apply_delta(base, ops) != new:
        return None
    return ops
