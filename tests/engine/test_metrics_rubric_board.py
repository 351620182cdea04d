"""SedarEval's leaderboard: Σ score × 100 / (count × 5) per category (three levels), overall, per target."""

from __future__ import annotations

import json

import pytest

from engine.metrics.rubric_board import RubricBoardError, RubricScore, rubric_board

ROWS = [
    ("A", ["对话", "角色扮演", "情景模拟"], 4),
    ("A", ["对话", "角色扮演", "名人模仿"], 3),
    ("A", ["对话", "多轮对话", "创作"], None),  # cannot judge
    ("A", ["问答", "常识问答", "常识"], 5),
    ("A", ["问答", "常识问答", "常识"], 2.5),
    ("A", ["问答", "专业知识问答", "医学"], 5),
    RubricScore("B", ["对话"], 5),
    RubricScore("B", ["问答", "常识问答", "常识"], None),
    ("C", ["推理"], None),
]


def test_hand_arithmetic_per_level_and_overall():
    boards = rubric_board(ROWS)
    assert [b.target for b in boards] == ["B", "A", "C"]  # 100, 78, nothing scored
    a = boards[1]
    # overall: (4 + 3 + 5 + 2.5 + 5) × 100 / (5 × 5) = 19.5 × 4 = 78; one item cannot be judged
    assert (a.overall.count, a.overall.cannot_judge, a.overall.total) == (5, 1, 19.5)
    assert a.overall.figure == pytest.approx(78.0)
    lvl1 = a.categories[1]
    assert lvl1[("对话",)].figure == pytest.approx(70.0)  # 7 × 100 / (2 × 5)
    assert lvl1[("对话",)].cannot_judge == 1
    assert lvl1[("问答",)].figure == pytest.approx(12.5 * 100 / 15)  # 83.33
    lvl2 = a.categories[2]
    assert lvl2[("对话", "角色扮演")].figure == pytest.approx(70.0)
    assert lvl2[("对话", "多轮对话")].figure is None and lvl2[("对话", "多轮对话")].cannot_judge == 1
    assert lvl2[("问答", "常识问答")].figure == pytest.approx(75.0)  # 7.5 × 100 / 10
    assert lvl2[("问答", "专业知识问答")].figure == pytest.approx(100.0)
    lvl3 = a.categories[3]
    assert lvl3[("对话", "角色扮演", "情景模拟")].figure == pytest.approx(80.0)
    assert lvl3[("对话", "角色扮演", "名人模仿")].figure == pytest.approx(60.0)
    assert lvl3[("问答", "常识问答", "常识")].figure == pytest.approx(75.0)
    assert a.macro == pytest.approx((70.0 + 250 / 3) / 2)


def test_targets_with_partial_or_no_scores():
    boards = {b.target: b for b in rubric_board(ROWS)}
    b = boards["B"]
    assert b.overall.figure == 100.0 and b.overall.cannot_judge == 1
    assert list(b.categories[2]) == [("问答", "常识问答")] and b.categories[2][("问答", "常识问答")].figure is None
    c = boards["C"]
    assert c.overall.figure is None and c.overall.cannot_judge == 1 and c.macro is None
    dumped = json.loads(json.dumps(boards["A"].as_dict(), ensure_ascii=False))
    entry = next(e for e in dumped["categories"] if e["level"] == 1 and e["category"] == ["对话"])
    assert entry == {"level": 1, "category": ["对话"], "count": 2, "cannot_judge": 1, "total": 7.0, "figure": 70.0}


def test_uncategorised_and_string_category():
    boards = rubric_board([("T", [], 5), ("T", "数学", 0)])
    levels = boards[0].categories[1]
    assert levels[("(uncategorised)",)].figure == 100.0
    assert levels[("数学",)].figure == 0.0
    assert boards[0].overall.figure == 50.0


@pytest.mark.parametrize("row, problem", [
    (("T", ["x"], 5.5), "score must be in"),
    (("T", ["x"], -1), "score must be in"),
    (("T", ["x"], float("nan")), "score must be in"),
    (("T", ["x"], True), "score must be in"),
    (("T", ["a", "b", "c", "d"], 3), "up to 3 names"),
    (("", ["x"], 3), "target"),
    (("T", ["x"]), "expected"),
])
def test_bad_rows_are_named(row, problem):
    with pytest.raises(RubricBoardError, match=problem) as err:
        rubric_board([("T", ["x"], 1), row])
    assert "row 1" in str(err.value)
