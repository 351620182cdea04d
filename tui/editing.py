"""The rubric editor's working copy: a list of pending operations with undo and redo.

The editor never changes a rubric in place: it collects operations (the dicts
``engine.bench.rubric.edit_rubric`` takes), previews their result with the engine's own
``apply_ops`` (pure, no store), and saving hands the whole list to ``edit_rubric``, which writes
one new version. No Textual here, so the editing rules are tested on their own.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from engine.api import BenchError, Criterion, RubricVersion, apply_ops

WEIGHT_STEP = 0.5
MIN_WEIGHT = 0.5


@dataclass
class RubricDraft:
    """Pending edits on top of a saved rubric version.

    Args:
        base: the version being edited (the current one when the editor opened).
        next_number: the number the next new criterion's cid gets (``c<next_number>``); the same
            number ``edit_rubric`` will use, so previewed cids match the saved ones.
    """

    base: RubricVersion
    next_number: int
    ops: list[dict[str, Any]] = field(default_factory=list)
    undone: list[dict[str, Any]] = field(default_factory=list)

    @property
    def criteria(self) -> list[Criterion]:
        """The criteria as they will be saved."""
        return apply_ops(self.base.criteria, self.ops, self.next_number)[0]

    @property
    def dirty(self) -> bool:
        return bool(self.ops)

    def describe(self) -> list[str]:
        """One short line per pending operation."""
        return apply_ops(self.base.criteria, self.ops, self.next_number)[1]

    def find(self, cid: str) -> Criterion:
        for c in self.criteria:
            if c.cid == cid:
                return c
        raise BenchError(f"no criterion {cid!r} in the draft")

    # -- operations ---------------------------------------------------------------------------
    def push(self, op: dict[str, Any]) -> None:
        """Add an operation if the result is valid (else raise ``BenchError`` and change nothing)."""
        apply_ops(self.base.criteria, [*self.ops, op], self.next_number)
        self.ops.append(op)
        self.undone.clear()

    def add(self, text: str, position: int | None = None, kind: str = "point", weight: float = 1.0) -> str:
        """Add a criterion; returns the cid it will have."""
        cid = f"c{self.next_number + sum(1 for o in self.ops if o['op'] == 'add')}"
        self.push({"op": "add", "text": text, "kind": kind, "weight": weight, "position": position})
        return cid

    def edit(self, cid: str, text: str) -> None:
        if text == self.find(cid).text:
            return
        self.push({"op": "edit", "cid": cid, "text": text})

    def delete(self, cid: str) -> None:
        self.push({"op": "delete", "cid": cid})

    def move(self, cid: str, position: int) -> None:
        current = [c.cid for c in self.criteria].index(cid)
        position = max(0, min(position, len(self.criteria) - 1))
        if position != current:
            self.push({"op": "move", "cid": cid, "position": position})

    def reweight(self, cid: str, step: float) -> None:
        """Change a weight by ``step`` (never below :data:`MIN_WEIGHT`)."""
        old = self.find(cid).weight
        new = max(MIN_WEIGHT, round(old + step, 4))
        if new != old:
            self.push({"op": "reweight", "cid": cid, "weight": new})

    def toggle_deduction(self, cid: str) -> None:
        """A scoring point becomes a deduction and back (a ``code`` criterion stays as it is)."""
        kind = self.find(cid).kind
        if kind == "code":
            raise BenchError(f"{cid} is checked by code; it cannot be a deduction")
        self.push({"op": "set_kind", "cid": cid, "kind": "point" if kind == "deduction" else "deduction"})

    def undo(self) -> bool:
        if not self.ops:
            return False
        self.undone.append(self.ops.pop())
        return True

    def redo(self) -> bool:
        if not self.undone:
            return False
        self.ops.append(self.undone.pop())
        return True


def next_cid_number(versions: list[RubricVersion]) -> int:
    """One more than the highest ``cN`` any version of the rubric used (cids are never reused)."""
    numbers = [int(c.cid[1:]) for v in versions for c in v.criteria if c.cid[1:].isdigit()]
    return max(numbers, default=0) + 1


def diff_criteria(old: list[Criterion], new: list[Criterion]) -> list[tuple[str, str]]:
    """What changed between two lists of criteria, as ``(mark, text)`` lines.

    Marks: ``+`` added, ``-`` removed, ``~`` changed (text, weight or kind), ``>`` moved.
    """
    before = {c.cid: c for c in old}
    after = {c.cid: c for c in new}
    lines: list[tuple[str, str]] = []
    for c in new:
        prev = before.get(c.cid)
        if prev is None:
            lines.append(("+", f"{c.cid} [{c.kind}, w {c.weight:g}] {c.text}"))
            continue
        changes = []
        if prev.text != c.text:
            changes.append(f"text: {prev.text!r} -> {c.text!r}")
        if prev.weight != c.weight:
            changes.append(f"weight {prev.weight:g} -> {c.weight:g}")
        if prev.kind != c.kind:
            changes.append(f"kind {prev.kind} -> {c.kind}")
        if changes:
            lines.append(("~", f"{c.cid} " + "; ".join(changes)))
    for c in old:
        if c.cid not in after:
            lines.append(("-", f"{c.cid} [{c.kind}, w {c.weight:g}] {c.text}"))
    kept_old = [c.cid for c in old if c.cid in after]
    kept_new = [c.cid for c in new if c.cid in before]
    stayed = _longest_increasing([kept_old.index(cid) for cid in kept_new])
    for pos, cid in enumerate(kept_new):
        if pos not in stayed:
            lines.append((">", f"{cid} moved to position {new.index(after[cid]) + 1}"))
    return lines


def _longest_increasing(values: list[int]) -> set[int]:
    """Positions of one longest increasing subsequence: the criteria that kept their order, so
    that moving one criterion reports one move, not every criterion it jumped over."""
    best: list[list[int]] = []
    for i, v in enumerate(values):
        chains = [chain for chain in best if values[chain[-1]] < v]
        longest = max(chains, key=len, default=[])
        best.append([*longest, i])
    return set(max(best, key=len, default=[]))
