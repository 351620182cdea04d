"""JudgeAgent's graded protocol: difficulty gains, the adaptive difficulty rule, batches, validation.

Rules (JudgeAgent, Algorithm 1 and its code; DESIGN.md "graded"):

- **Gains.** A correct answer adds the gain of the question's difficulty: easy +1, medium +1.5,
  hard +2; a wrong answer adds easy 0, medium 0, hard -0.2. A question without a difficulty label
  counts as medium.
- **Next difficulty.** From the running average gain over the questions answered so far:
  average <= 0.5 -> easy, <= 1.0 -> medium, otherwise hard. :class:`DifficultyTrack` applies this
  after **every** question, base or extension (the upstream code decides once per batch and never
  applies the update inside the extension loop; we do). Algorithm 1 keeps the running sums per batch
  (``sc_B`` and ``RND_total`` restart at each batch): make one track per batch to follow it.
- **Batches.** Base questions are asked in batches of 3 (the last batch may be shorter).
- **Evaluation score** (Algorithm 1, line 35): Σ gains over every question of every batch / number of
  questions.
- **Validation** (Algorithm 2): every base question is asked again with its batch's suggestions.
  Over N base questions with (correct before, correct after): ACC1 = right before / N,
  ACC2 = right after / N, CR = (wrong -> right) / N, CtE = (right -> wrong) / N, and
  Δ = ACC2 - ACC1 = CR - CtE. The identity is checked on the counts and on the rates; a violation
  raises :class:`ValidationIdentityError`.
"""

from __future__ import annotations

from collections.abc import Hashable, Iterable, Sequence
from dataclasses import asdict, dataclass, field
from typing import Any, TypeVar

EASY, MEDIUM, HARD = "easy", "medium", "hard"
DIFFICULTIES = (EASY, MEDIUM, HARD)
"""Difficulty labels, easiest first."""

DEFAULT_DIFFICULTY = MEDIUM
"""What a question without a difficulty label counts as."""

CORRECT_GAIN = {EASY: 1.0, MEDIUM: 1.5, HARD: 2.0}
"""Gain of a correct answer per difficulty."""

WRONG_GAIN = {EASY: 0.0, MEDIUM: 0.0, HARD: -0.2}
"""Gain of a wrong answer per difficulty."""

EASY_MAX = 0.5
"""Running average at or below which the next question is easy."""

MEDIUM_MAX = 1.0
"""Running average at or below which (and above :data:`EASY_MAX`) the next question is medium."""

BATCH_SIZE = 3
"""Base questions per batch (JudgeAgent's setting)."""

BASE, EXTENSION = "base", "extension"
"""Kinds of question in a graded session."""

T = TypeVar("T")


class GradedError(ValueError):
    """Bad input to a graded-protocol rule; the message says what was wrong."""


class ValidationIdentityError(ArithmeticError):
    """Δ = ACC2 − ACC1 and CR − CtE disagree: the counts behind the validation table are inconsistent."""


def difficulty_label(difficulty: str | None) -> str:
    """The difficulty a question counts as: its label, or medium when it has none.

    Raises:
        GradedError: the label is not easy, medium or hard.
    """
    if difficulty is None:
        return DEFAULT_DIFFICULTY
    label = difficulty.strip().lower() if isinstance(difficulty, str) else difficulty
    if label not in DIFFICULTIES:
        raise GradedError(f"difficulty must be one of {', '.join(DIFFICULTIES)} or none, got {difficulty!r}")
    return label


def gain(difficulty: str | None, correct: bool) -> float:
    """The score gain of one answer: correct easy +1, medium +1.5, hard +2; wrong hard -0.2, else 0."""
    label = difficulty_label(difficulty)
    return CORRECT_GAIN[label] if correct else WRONG_GAIN[label]


def next_difficulty(average: float) -> str:
    """The difficulty for the next question from the running average gain (<= 0.5 easy, <= 1.0 medium, else hard)."""
    if average <= EASY_MAX:
        return EASY
    if average <= MEDIUM_MAX:
        return MEDIUM
    return HARD


def batches(items: Sequence[T], size: int = BATCH_SIZE) -> list[list[T]]:
    """Split base items into consecutive batches of ``size`` (the last one may be shorter).

    Raises:
        GradedError: ``size`` is not a positive integer.
    """
    if isinstance(size, bool) or not isinstance(size, int) or size < 1:
        raise GradedError(f"batch size must be a positive integer, got {size!r}")
    return [list(items[i:i + size]) for i in range(0, len(items), size)]


@dataclass(frozen=True)
class GradedStep:
    """One answered question and the state of the track after it.

    Attributes:
        index: 0-based position in the track.
        kind: ``base`` or ``extension``.
        difficulty: the difficulty the question counted as (a missing label is ``medium``).
        labelled: whether the question carried its own difficulty label.
        correct: whether the answer was marked correct.
        gain: the gain this answer added.
        total: the sum of gains so far.
        count: the number of questions so far.
        average: ``total / count``.
        next_difficulty: the difficulty this average sets for the next question.
        ref: what the caller attached to the step (an item id, an extension round), if anything.
    """

    index: int
    kind: str
    difficulty: str
    labelled: bool
    correct: bool
    gain: float
    total: float
    count: int
    average: float
    next_difficulty: str
    ref: Any = None

    def as_dict(self) -> dict[str, Any]:
        """A JSON-ready copy."""
        return asdict(self)


@dataclass
class DifficultyTrack:
    """The running gain and difficulty of a graded session, updated after every question.

    Make one per batch to follow JudgeAgent's Algorithm 1 (its sums restart at each batch).
    Before any question the next difficulty is ``initial`` (medium, as for an unlabelled question).

    Attributes:
        initial: the difficulty before any answer.
        steps: every answered question in order, with the state after it (the "difficulty track").
    """

    initial: str = DEFAULT_DIFFICULTY
    steps: list[GradedStep] = field(default_factory=list)

    def __post_init__(self) -> None:
        """Check the initial difficulty."""
        self.initial = difficulty_label(self.initial)

    @property
    def total(self) -> float:
        """Sum of gains so far."""
        return self.steps[-1].total if self.steps else 0.0

    @property
    def count(self) -> int:
        """Questions answered so far."""
        return len(self.steps)

    @property
    def average(self) -> float | None:
        """Running average gain (None before any question)."""
        return self.steps[-1].average if self.steps else None

    @property
    def difficulty(self) -> str:
        """The difficulty of the next question (what an extension round asks at)."""
        return self.steps[-1].next_difficulty if self.steps else self.initial

    def record(self, difficulty: str | None, correct: bool, kind: str = BASE, ref: Any = None) -> GradedStep:
        """Add one answered question and update the next difficulty.

        Args:
            difficulty: the question's difficulty label (``None`` counts as medium). For an
                extension question pass the difficulty it was written at (:attr:`difficulty`).
            correct: whether the judge marked the answer correct.
            kind: ``base`` or ``extension``.
            ref: anything to keep with the step (an item id, a round number).

        Returns:
            The new step.

        Raises:
            GradedError: bad difficulty, kind, or ``correct`` not a bool.
        """
        if kind not in (BASE, EXTENSION):
            raise GradedError(f"kind must be {BASE!r} or {EXTENSION!r}, got {kind!r}")
        if not isinstance(correct, bool):
            raise GradedError(f"correct must be True or False, got {correct!r}")
        label = difficulty_label(difficulty)
        g = gain(label, correct)
        total = self.total + g
        count = self.count + 1
        average = total / count
        step = GradedStep(index=count - 1, kind=kind, difficulty=label, labelled=difficulty is not None,
                          correct=correct, gain=g, total=total, count=count, average=average,
                          next_difficulty=next_difficulty(average), ref=ref)
        self.steps.append(step)
        return step

    def as_dict(self) -> dict[str, Any]:
        """A JSON-ready copy (initial difficulty, totals and every step)."""
        return {"initial": self.initial, "total": self.total, "count": self.count, "average": self.average,
                "difficulty": self.difficulty, "steps": [s.as_dict() for s in self.steps]}


def evaluation_score(tracks: Iterable[DifficultyTrack]) -> float | None:
    """JudgeAgent's evaluation score: Σ gains over all batches / Σ questions (None when no question)."""
    total = 0.0
    count = 0
    for track in tracks:
        total += track.total
        count += track.count
    return total / count if count else None


@dataclass(frozen=True)
class Validation:
    """JudgeAgent Algorithm 2 over N base questions (rates are None when N = 0).

    Attributes:
        n: number of base questions.
        right_before: answered correctly the first time (N_acc1).
        right_after: answered correctly with the suggestions (N_acc2).
        corrected: wrong -> right (N_cr).
        broken: right -> wrong (N_ce).
        acc1, acc2, cr, cte: the rates (counts / N).
        delta: ACC2 - ACC1 (= CR - CtE).
    """

    n: int
    right_before: int
    right_after: int
    corrected: int
    broken: int
    acc1: float | None
    acc2: float | None
    cr: float | None
    cte: float | None
    delta: float | None

    def as_dict(self) -> dict[str, Any]:
        """A JSON-ready copy."""
        return asdict(self)


def _as_bool(value: Any, where: str) -> bool:
    if not isinstance(value, bool):
        raise GradedError(f"{where}: expected True or False, got {value!r}")
    return value


def validation_from_counts(n: int, right_before: int, right_after: int, corrected: int, broken: int) -> Validation:
    """ACC1, ACC2, CR, CtE and Δ from the counts of Algorithm 2 (e.g. summed over batches or read back).

    Raises:
        GradedError: a count is negative or larger than the counts allow.
        ValidationIdentityError: ``right_after − right_before ≠ corrected − broken`` (then
            Δ = ACC2 − ACC1 ≠ CR − CtE), or the rates disagree.
    """
    counts = {"n": n, "right_before": right_before, "right_after": right_after, "corrected": corrected,
              "broken": broken}
    for name, value in counts.items():
        if isinstance(value, bool) or not isinstance(value, int) or value < 0:
            raise GradedError(f"{name} must be a non-negative integer, got {value!r}")
    if right_before > n or right_after > n or corrected > n - right_before or broken > right_before:
        raise GradedError(f"inconsistent validation counts {counts}: right answers, corrections (wrong before) "
                          "and breakages (right before) cannot exceed what they are drawn from")
    if right_after - right_before != corrected - broken:
        raise ValidationIdentityError(
            f"N_acc2 - N_acc1 = {right_after - right_before} but N_cr - N_ce = {corrected - broken} (N = {n}): "
            "Δ = ACC2 - ACC1 = CR - CtE does not hold")
    if n == 0:
        return Validation(0, 0, 0, 0, 0, None, None, None, None, None)
    acc1, acc2, cr, cte = right_before / n, right_after / n, corrected / n, broken / n
    delta = acc2 - acc1
    if abs(delta - (cr - cte)) > 1e-9:
        raise ValidationIdentityError(f"ACC2 - ACC1 = {delta!r} but CR - CtE = {cr - cte!r} (N = {n})")
    return Validation(n, right_before, right_after, corrected, broken, acc1, acc2, cr, cte, delta)


def validation(pairs: Iterable[tuple[bool, bool]]) -> Validation:
    """ACC1, ACC2, CR, CtE and Δ from per-question (correct before, correct after) pairs.

    Raises:
        GradedError: a pair is not two bools.
        ValidationIdentityError: Δ = ACC2 − ACC1 does not equal CR − CtE.
    """
    n = right_before = right_after = corrected = broken = 0
    for i, pair in enumerate(pairs):
        try:
            before, after = pair
        except (TypeError, ValueError):
            raise GradedError(f"pair {i}: expected (correct_before, correct_after), got {pair!r}") from None
        before = _as_bool(before, f"pair {i}, correct_before")
        after = _as_bool(after, f"pair {i}, correct_after")
        n += 1
        right_before += before
        right_after += after
        corrected += (not before) and after
        broken += before and (not after)
    return validation_from_counts(n, right_before, right_after, corrected, broken)


def validation_by(rows: Iterable[tuple[Hashable, bool, bool]]) -> dict[Hashable, Validation]:
    """:func:`validation` per key (e.g. per difficulty, per batch, per target), keys in first-seen order.

    Args:
        rows: ``(key, correct_before, correct_after)`` per base question.
    """
    groups: dict[Hashable, list[tuple[bool, bool]]] = {}
    for key, before, after in rows:
        groups.setdefault(key, []).append((before, after))
    return {key: validation(pairs) for key, pairs in groups.items()}
