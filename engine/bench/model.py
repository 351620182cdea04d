"""The benchmark data model: benchmarks, items, rubric versions and criteria.

These are plain dataclasses read from and written to the store (``benchmarks``, ``items``,
``rubrics``, ``rubric_versions`` and ``criteria`` tables). Everything else in ``engine.bench``
builds on them; the interview engine, the judge and the app only ever see these types.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any

from engine.text.cloze import Cloze

PROTOCOLS = ("adaptive", "graded", "task", "rubric")
"""The protocols an item can suit (see DESIGN.md, "Protocols")."""

DIFFICULTIES = ("easy", "medium", "hard")
"""Difficulty labels (JudgeAgent); ``None`` means unlabelled (graded as medium)."""

KINDS = ("point", "deduction", "code")
"""Criterion kinds: a scoring point adds its weight, a deduction subtracts it, a ``code`` point is
checked by running its ``eval_code`` (and adds its weight when the code exits 0)."""

AUTHORS = ("kernel", "importer", "human")
"""Who may write a rubric version. A human author may add a name: ``"human:alice"``."""


class BenchError(Exception):
    """A benchmark, item or rubric operation that cannot be done; the message says why and what to do."""


@dataclass(frozen=True)
class Benchmark:
    """A named set of items.

    Attributes:
        id: database id.
        name: unique name (what ``viva bench show NAME`` takes).
        kb_id: the knowledge base its items are grounded in, if any.
        kb: that knowledge base's name, if any.
        source: where it came from (``generate``, ``sedareval``, ``taskweaver``, ``medqa``,
            ``squad``, ``jsonl``).
        meta: free-form details (import summary, generation settings, topics...).
        created_at: ISO 8601 UTC.
        n_items: number of items.
        protocols: item count per protocol.
    """

    id: int
    name: str
    kb_id: int | None
    kb: str | None
    source: str
    meta: dict[str, Any]
    created_at: str
    n_items: int = 0
    protocols: dict[str, int] = field(default_factory=dict)


@dataclass(frozen=True)
class Item:
    """One question, task or multi-turn script, with what is needed to score an answer.

    Attributes:
        id: the global item id (``viva run --items 12,13``).
        benchmark_id: id of its benchmark.
        benchmark: name of its benchmark.
        ord: position within the benchmark (0-based).
        ext_id: the id the source dataset gave it (SedarEval hash, MedQA realidx, SQuAD question
            id, TaskWeaver case folder), if any.
        topic: topic or top-level category ("" if none).
        protocol: one of :data:`PROTOCOLS`.
        question: the question, the task description (``task``) or, for a multi-turn item, the
            original text holding all turns.
        turns: the user turns of a multi-turn item in order; empty for a single-turn item.
        reference: a reference answer, if any.
        options: multiple-choice options (letter -> text), if any.
        gold: the gold answer: a string (an option letter, a short answer) or a list of accepted
            answers (SQuAD); ``None`` if there is none.
        difficulty: ``easy``, ``medium``, ``hard`` or ``None``.
        source_chunk_ids: knowledge-base chunks the item was written from.
        meta: source-specific fields (see docs/benchmark-format.md).
    """

    id: int
    benchmark_id: int
    benchmark: str
    ord: int
    ext_id: str | None
    topic: str
    protocol: str
    question: str
    turns: list[str]
    reference: str | None
    options: dict[str, str] | None
    gold: Any
    difficulty: str | None
    source_chunk_ids: list[int]
    meta: dict[str, Any]

    @property
    def multi_turn(self) -> bool:
        """True when the item is a scripted multi-turn conversation."""
        return bool(self.turns)

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready copy."""
        return asdict(self)


@dataclass(frozen=True)
class Criterion:
    """One criterion of a rubric version.

    Attributes:
        cid: short id stable across versions (``c1``, ``c2``...; never reused within a rubric).
        ord: position in the rubric (0-based).
        text: what an answer must show (or, for a deduction, what costs points).
        kind: ``point``, ``deduction`` or ``code``.
        weight: points gained (point, code) or deduction size (deduction); always > 0.
        eval_code: Python checked on the transcript (kind ``code`` only).
        source_chunk_ids: knowledge-base chunks the criterion is grounded in.
        raw: the source text it was parsed from (SedarEval ``score_standard`` line), if any.
        answers: gold answers (SQuAD spans, the gold option's letter for a multiple-choice item, an
            imported short answer); such a criterion is judged by :mod:`engine.judge.answers`
            against the target's reply to the question that carries it, never by similarity.
        asks: the question that carries the criterion (``None``: the item's own question).
        cloze: a fill-in-the-blank criterion's parts (the missing part and the whole sentence), whose
            ``text`` is their wording (:class:`engine.text.cloze.Cloze`); the judge and the offline
            kernel read the parts from here, never from the text.
    """

    cid: str
    ord: int
    text: str
    kind: str = "point"
    weight: float = 1.0
    eval_code: str | None = None
    source_chunk_ids: list[int] = field(default_factory=list)
    raw: str | None = None
    answers: list[str] | None = None
    asks: str | None = None
    cloze: Cloze | None = None

    @classmethod
    def new(cls, text: str, kind: str = "point", weight: float = 1.0, eval_code: str | None = None,
            source_chunk_ids: list[int] | None = None, raw: str | None = None, answers: list[str] | None = None,
            asks: str | None = None, cloze: Cloze | None = None) -> Criterion:
        """A criterion not yet in a rubric (cid and ord are assigned when it is saved)."""
        return cls("", 0, text, kind, weight, eval_code, list(source_chunk_ids or []), raw,
                   list(answers) if answers else None, asks, cloze)

    @classmethod
    def of_cloze(cls, cloze: Cloze, source_chunk_ids: list[int] | None = None) -> Criterion:
        """A fill-in-the-blank criterion: its parts, and their wording as its text."""
        return cls.new(cloze.wording(), source_chunk_ids=source_chunk_ids, cloze=cloze)

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready copy."""
        return asdict(self)


@dataclass(frozen=True)
class RubricVersion:
    """One immutable version of an item's rubric.

    Attributes:
        id: database id of the version (what verdicts and sessions refer to).
        rubric_id: id of the rubric (one per item).
        version: 1, 2, 3... within the rubric.
        parent_id: the version it was derived from (``None`` for the first).
        author: ``kernel``, ``importer`` or ``human`` (optionally ``human:NAME``).
        note: what changed.
        created_at: ISO 8601 UTC.
        criteria: the criteria in order.
    """

    id: int
    rubric_id: int
    version: int
    parent_id: int | None
    author: str
    note: str
    created_at: str
    criteria: list[Criterion]

    @property
    def total_points(self) -> float:
        """Sum of the weights of the scoring points (``point`` and ``code``)."""
        return sum(c.weight for c in self.criteria if c.kind != "deduction")

    def criterion(self, cid: str) -> Criterion:
        """The criterion with this cid.

        Raises:
            BenchError: no such criterion in this version.
        """
        for c in self.criteria:
            if c.cid == cid:
                return c
        known = ", ".join(c.cid for c in self.criteria) or "none"
        raise BenchError(f"rubric version {self.id} has no criterion {cid!r} (criteria: {known})")

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready copy."""
        return asdict(self)
