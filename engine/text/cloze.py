"""A fill-in-the-blank (cloze) criterion: its two parts, the words it reads as, and the one reading back.

The offline benchmark generator (:mod:`engine.bench.generate`) asks "Fill in the blank" over one key
sentence; the item's criterion is that the reply gives the missing part. The criterion carries the
two parts as data (:class:`Cloze`, the field ``cloze`` of :class:`engine.bench.model.Criterion`, stored
in the ``criteria`` table); its text is the wording :meth:`Cloze.wording` (``Gives "X" as the missing
part of: S``), what users and LLM judges read. The readers (the free-text judge, the offline kernel's
follow-ups) take the field, never the text.

:func:`parse_cloze` is the one reading of that wording back, for texts that carry no field: rows of a
database written before the field existed (schema migration 12), an exported file or a rubric edit
that gives only a text, a ``viva judge check`` file's criterion column. :func:`cloze_of` says which
applies to a criterion handed to a reader: its field when it is an object, the wording read back when
it is a plain text.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any, Protocol

_WORDING = re.compile(r'^Gives\s+"(?P<answer>.+?)"\s+as the missing part of:\s*(?P<sentence>.*)$', re.DOTALL)


@dataclass(frozen=True)
class Cloze:
    """A cloze criterion's parts: the missing part and the whole sentence it is missing from.

    Attributes:
        answer: what fills the blank (as written in the sentence).
        sentence: the completed sentence (the blank filled).
    """

    answer: str
    sentence: str

    def wording(self) -> str:
        """The criterion's text: ``Gives "ANSWER" as the missing part of: SENTENCE``."""
        return f'Gives "{self.answer}" as the missing part of: {self.sentence}'

    def to_dict(self) -> dict[str, str]:
        """A JSON-ready copy (``answer``, ``sentence``)."""
        return {"answer": self.answer, "sentence": self.sentence}

    @classmethod
    def from_dict(cls, value: Any) -> Cloze | None:
        """The parts from a JSON object with ``answer`` and ``sentence`` (``None`` gives ``None``).

        Raises:
            ValueError: not an object with exactly the strings ``answer`` (non-empty) and ``sentence``.
        """
        if value is None or isinstance(value, Cloze):
            return value
        if not isinstance(value, dict) or set(value) != {"answer", "sentence"} or not isinstance(
                value["answer"], str) or not value["answer"].strip() or not isinstance(value["sentence"], str):
            raise ValueError("cloze must be an object with the strings 'answer' (non-empty) and 'sentence', "
                             f"got {value!r}")
        return cls(value["answer"], value["sentence"])


def parse_cloze(text: str | None) -> Cloze | None:
    """The parts of a text in the cloze wording (``Gives "X" as the missing part of: S``), else ``None``.

    The text is read stripped; the answer is the quoted part as written, the sentence what follows the
    colon. The only reading of the wording: for texts that carry no field (see the module docstring).
    """
    m = _WORDING.match((text or "").strip())
    return Cloze(m.group("answer"), m.group("sentence")) if m else None


class Worded(Protocol):
    """A criterion object as a reader takes it (:class:`engine.bench.model.Criterion`): its ``text``, and its
    parts in ``cloze`` when it is a cloze criterion (an object without the attribute has none)."""

    @property
    def text(self) -> str:
        """What the criterion says (for a cloze criterion, its parts' wording)."""
        ...


CriterionIn = str | Worded
"""What a reader of criteria takes: a criterion object, or a plain text (a check file's criterion column)."""


def cloze_of(criterion: CriterionIn) -> Cloze | None:
    """The cloze a reader takes from a criterion: an object's ``cloze`` field (``None`` when it has none:
    its text is never parsed), a plain text's wording read back (:func:`parse_cloze`)."""
    if isinstance(criterion, str):
        return parse_cloze(criterion)
    return getattr(criterion, "cloze", None)


def criterion_text(criterion: CriterionIn) -> str:
    """A criterion's text: the plain text itself, or an object's ``text``."""
    return criterion if isinstance(criterion, str) else criterion.text
