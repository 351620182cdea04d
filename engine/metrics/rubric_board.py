"""SedarEval's leaderboard: per-category figures on the 0–5 judge scores, per target.

Figure of a group of judged items = Σ score × 100 / (count × 5): the mean score as a percentage of
the full score 5. An item the judge could not score ("cannot judge": no valid final score after the
re-asks) is left out of the sum and the count, and counted apart.

Categories have up to three levels (SedarEval ``meta.category``, e.g. 对话 / 角色扮演 / 情景模拟);
every level gets its own figures: level 1 groups by the first name, level 2 by the first two,
level 3 by all three. Each target also gets an overall figure (all its judged items pooled) and the
plain mean of its level-1 figures (``macro``; SedarEval's published 总分 averages categories, with
extra weights for its reasoning group that are not reproduced here).
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

FULL_SCORE = 5.0
"""SedarEval's full score."""

LEVELS = (1, 2, 3)
"""Category levels."""

UNCATEGORISED = "(uncategorised)"
"""The level-1 name of an item without a category."""


class RubricBoardError(ValueError):
    """A row that cannot be scored; the message names the row and the problem."""


@dataclass(frozen=True)
class RubricScore:
    """One judged rubric item.

    Attributes:
        target: the target model's name.
        category: the item's category path (1–3 names, most general first).
        score: the final judge score in [0, 5], or None when the judge could not score it.
    """

    target: str
    category: Sequence[str]
    score: float | None


@dataclass
class CategoryScore:
    """The figures of one group of items.

    Attributes:
        count: items with a score.
        cannot_judge: items left out because the judge gave no valid score.
        total: Σ score over the scored items.
    """

    count: int = 0
    cannot_judge: int = 0
    total: float = 0.0

    @property
    def figure(self) -> float | None:
        """Σ score × 100 / (count × 5), or None when no item was scored."""
        return self.total * 100.0 / (self.count * FULL_SCORE) if self.count else None

    def add(self, score: float | None) -> None:
        """Count one item (None = cannot judge)."""
        if score is None:
            self.cannot_judge += 1
        else:
            self.count += 1
            self.total += score

    def as_dict(self) -> dict[str, Any]:
        """A JSON-ready copy, with the figure."""
        return {"count": self.count, "cannot_judge": self.cannot_judge, "total": self.total,
                "figure": self.figure}


@dataclass
class TargetBoard:
    """One target's row of the leaderboard.

    Attributes:
        target: the target's name.
        overall: all its items pooled.
        categories: level -> category path -> figures (paths in first-seen order).
    """

    target: str
    overall: CategoryScore = field(default_factory=CategoryScore)
    categories: dict[int, dict[tuple[str, ...], CategoryScore]] = field(
        default_factory=lambda: {level: {} for level in LEVELS})

    @property
    def macro(self) -> float | None:
        """Mean of the level-1 figures that are defined (None when there is none)."""
        figures = [c.figure for c in self.categories[1].values() if c.figure is not None]
        return sum(figures) / len(figures) if figures else None

    def as_dict(self) -> dict[str, Any]:
        """A JSON-ready copy: overall, macro, and a list of category entries per level."""
        return {
            "target": self.target,
            "overall": self.overall.as_dict(),
            "macro": self.macro,
            "categories": [
                {"level": level, "category": list(path), **score.as_dict()}
                for level in LEVELS for path, score in self.categories[level].items()
            ],
        }


def _row(row: Any, i: int) -> RubricScore:
    if not isinstance(row, RubricScore):
        try:
            target, category, score = row
        except (TypeError, ValueError):
            raise RubricBoardError(f"row {i}: expected (target, category, score), got {row!r}") from None
        row = RubricScore(target, category, score)
    if not isinstance(row.target, str) or not row.target:
        raise RubricBoardError(f"row {i}: target must be a non-empty string, got {row.target!r}")
    category = [row.category] if isinstance(row.category, str) else row.category
    if not isinstance(category, Sequence) or len(category) > len(LEVELS) or \
            not all(isinstance(c, str) for c in category):
        raise RubricBoardError(f"row {i}: category must be up to 3 names, got {row.category!r}")
    score = row.score
    if score is not None:
        if isinstance(score, bool) or not isinstance(score, int | float) or math.isnan(score) \
                or not 0 <= score <= FULL_SCORE:
            raise RubricBoardError(f"row {i}: score must be in [0, 5] or None (cannot judge), got {score!r}")
        score = float(score)
    return RubricScore(row.target, tuple(c.strip() for c in category), score)


def rubric_board(rows: Iterable[RubricScore | tuple[str, Sequence[str], float | None]]) -> list[TargetBoard]:
    """The per-target leaderboard, best overall figure first (targets with no scored item last).

    Args:
        rows: one per judged item: :class:`RubricScore` or ``(target, category path, score)``;
            ``score`` None means "cannot judge".

    Raises:
        RubricBoardError: a row has no target, more than three category levels, or a score outside [0, 5].
    """
    boards: dict[str, TargetBoard] = {}
    for i, raw in enumerate(rows):
        row = _row(raw, i)
        board = boards.setdefault(row.target, TargetBoard(row.target))
        board.overall.add(row.score)
        path = tuple(c for c in row.category if c) or (UNCATEGORISED,)
        for level in range(1, len(path) + 1):
            board.categories[level].setdefault(path[:level], CategoryScore()).add(row.score)
    return sorted(boards.values(), key=lambda b: (b.overall.figure is None, -(b.overall.figure or 0.0), b.target))
