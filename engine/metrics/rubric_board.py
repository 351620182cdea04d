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


# -- from stored sessions ------------------------------------------------------------------------

JUDGE, OFFLINE_ESTIMATE = "judge", "offline estimate"
"""How a rubric session was scored: by an LLM judge (0–5), or estimated offline by point coverage."""


def session_judgement(store: Any, session_id: int) -> dict[str, Any] | None:
    """The latest ``rubric.scored`` payload of a session (score 0–5, reasoning, status...), or None."""
    from engine.store import loads

    row = store.one("SELECT payload FROM events WHERE session_id = ? AND kind = 'rubric.scored' "
                    "ORDER BY seq DESC LIMIT 1", (session_id,))
    return None if row is None else loads(row["payload"], {})


def rubric_scores(store: Any, session_ids: Iterable[int] | None = None) -> list[dict[str, Any]]:
    """One record per finished rubric session: what the leaderboard counts.

    Rule: the score is 5 × the session's last scored turn score (so a human override of an offline
    estimate's verdict counts as recomputed); a session with no scored turn whose latest
    ``rubric.scored`` event says "cannot judge" is counted as such (score None); one with neither
    (ended by the evaluator before every turn was asked) is ``not judged``. ``scoring`` is
    :data:`OFFLINE_ESTIMATE` when the judgement was the offline point coverage (the event's
    ``offline_estimate``; the offline kernel when there is no event), else :data:`JUDGE`. The
    category is the item's ``meta.category`` cut to its first three levels.

    Args:
        store: the store.
        session_ids: only these sessions (default: every stored session).

    Returns:
        ``{session, target, category, score, status, scoring}`` dicts in session order; ``status``
        is ``scored``, ``cannot judge`` or ``not judged``.
    """
    from engine.store import loads

    # one query: each session's last scored turn and latest judgement come with its row
    sql = "SELECT s.id, s.target, s.kernel, i.meta, " \
          "(SELECT t.score FROM turns t WHERE t.session_id = s.id AND t.score IS NOT NULL ORDER BY t.idx DESC " \
          "LIMIT 1) AS last_score, (SELECT e.payload FROM events e WHERE e.session_id = s.id AND " \
          "e.kind = 'rubric.scored' ORDER BY e.seq DESC LIMIT 1) AS judgement " \
          "FROM sessions s JOIN items i ON i.id = s.item_id WHERE s.protocol = 'rubric' AND s.status = 'finished'"
    params: tuple[Any, ...] = ()
    if session_ids is not None:
        ids = list(session_ids)
        if not ids:
            return []
        sql += f" AND s.id IN ({','.join('?' * len(ids))})"
        params = tuple(ids)
    out = []
    for r in store.query(sql + " ORDER BY s.id", params):
        event = None if r["judgement"] is None else loads(r["judgement"], {})
        offline = bool(event.get("offline_estimate")) if event else r["kernel"] == "offline"
        if r["last_score"] is not None:
            score: float | None = min(FULL_SCORE, max(0.0, FULL_SCORE * float(r["last_score"])))
            status = "scored"
        else:
            score = None
            status = "cannot judge" if event and event.get("status") == "cannot judge" else "not judged"
        category = (loads(r["meta"], {}) or {}).get("category") or []
        if isinstance(category, str):
            category = [category]
        category = [str(c) for c in category if str(c).strip()][:len(LEVELS)]
        out.append({"session": r["id"], "target": r["target"], "category": category, "score": score,
                    "status": status, "scoring": OFFLINE_ESTIMATE if offline else JUDGE})
    return out


def rubric_leaderboard(store: Any, session_ids: Iterable[int] | None = None) -> list[dict[str, Any]]:
    """SedarEval's leaderboard from stored rubric sessions, per target and per category (3 levels).

    Each figure is Σ score × 100 / (count × 5) over the judged sessions (:class:`CategoryScore`);
    "cannot judge" sessions are left out and counted. Offline estimates are never pooled with judge
    scores: a target gets one entry per way of scoring, judge entries first.

    Args:
        store: the store.
        session_ids: only these sessions (default: every stored session).

    Returns:
        One entry per (target, scoring): :meth:`TargetBoard.as_dict` plus ``scoring`` (``judge`` or
        ``offline estimate``), ``offline_estimate`` (bool), ``sessions`` (counted session ids) and
        ``not_judged`` (finished sessions ended before every turn was asked). Empty when there is
        no finished rubric session.
    """
    records = rubric_scores(store, session_ids)
    out: list[dict[str, Any]] = []
    for scoring in (JUDGE, OFFLINE_ESTIMATE):
        mine = [r for r in records if r["scoring"] == scoring]
        counted = [r for r in mine if r["status"] != "not judged"]
        boards = rubric_board(RubricScore(r["target"], r["category"], r["score"]) for r in counted)
        for board in boards:
            out.append({**board.as_dict(), "scoring": scoring, "offline_estimate": scoring == OFFLINE_ESTIMATE,
                        "sessions": [r["session"] for r in counted if r["target"] == board.target],
                        "not_judged": [r["session"] for r in mine
                                       if r["target"] == board.target and r["status"] == "not judged"]})
        judged_targets = {b.target for b in boards}
        for target in dict.fromkeys(r["target"] for r in mine if r["target"] not in judged_targets):
            empty = TargetBoard(target)
            out.append({**empty.as_dict(), "scoring": scoring, "offline_estimate": scoring == OFFLINE_ESTIMATE,
                        "sessions": [], "not_judged": [r["session"] for r in mine if r["target"] == target]})
    return out
