"""The leaderboard's columns at a narrow width (tui.board.fit_columns)."""

from __future__ import annotations


def test_columns_shrink_by_priority_to_the_width():
    from tui.board import CHANCE_COLUMN, COLUMNS, SHRINK_ORDER, fit_columns

    wide = COLUMNS[:4] + [CHANCE_COLUMN] + COLUMNS[4:]
    full = sum(w + 2 for _, _, w in wide)
    kept, dropped = fit_columns(wide, full)
    assert kept == wide and dropped == []
    kept, dropped = fit_columns(wide, 92)  # a 100-column terminal less the dialog's frame
    assert sum(w + 2 for _, _, w in kept) <= 92
    assert dropped == [h for h in SHRINK_ORDER if h in dropped] and dropped[0] == "E[S]"
    assert [h for h, _, _ in kept][:4] == ["target", "bench", "n", "Score [95% CI]"]
    kept, dropped = fit_columns(wide, 10)  # never below the four that name the row and its Score
    assert [h for h, _, _ in kept] == ["target", "bench", "n", "Score [95% CI]"]
