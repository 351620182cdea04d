"""JudgeAgent's graded rules: gains, the running-average difficulty, batches, validation (Algorithm 2)."""

from __future__ import annotations

import pytest

from engine.metrics.graded import (
    BASE,
    EXTENSION,
    DifficultyTrack,
    GradedError,
    ValidationIdentityError,
    batches,
    evaluation_score,
    gain,
    next_difficulty,
    validation,
    validation_by,
    validation_from_counts,
)


def test_gains_table():
    assert [gain(d, True) for d in ("easy", "medium", "hard", None)] == [1.0, 1.5, 2.0, 1.5]
    assert [gain(d, False) for d in ("easy", "medium", "hard", None)] == [0.0, 0.0, -0.2, 0.0]
    assert gain("Hard", True) == 2.0
    with pytest.raises(GradedError, match="difficulty must be one of"):
        gain("extreme", True)


def test_thresholds_are_inclusive():
    assert next_difficulty(0.0) == "easy"
    assert next_difficulty(0.5) == "easy"
    assert next_difficulty(0.5000001) == "medium"
    assert next_difficulty(1.0) == "medium"
    assert next_difficulty(1.0000001) == "hard"
    assert next_difficulty(-0.2) == "easy"


def test_hand_worked_batch_difficulty_moves_within_the_batch():
    # One batch: three base questions, then three extension rounds, each asked at the track's difficulty.
    #   q1 unlabelled, right: +1.5 -> 1.5/1 = 1.5   -> hard
    #   q2 hard, wrong:       -0.2 -> 1.3/2 = 0.65  -> medium
    #   q3 easy, right:       +1   -> 2.3/3 = 0.767 -> medium
    #   r1 at medium, right:  +1.5 -> 3.8/4 = 0.95  -> medium
    #   r2 at medium, right:  +1.5 -> 5.3/5 = 1.06  -> hard
    #   r3 at hard, wrong:    -0.2 -> 5.1/6 = 0.85  -> medium
    track = DifficultyTrack()
    assert track.difficulty == "medium" and track.average is None
    after_base = []
    for label, right in ((None, True), ("hard", False), ("easy", True)):
        after_base.append(track.record(label, right, BASE).next_difficulty)
    assert after_base == ["hard", "medium", "medium"]
    asked = []
    for right in (True, True, False):
        asked.append(track.difficulty)
        track.record(track.difficulty, right, EXTENSION)
    assert asked == ["medium", "medium", "hard"]  # applied every round, not fixed after the base questions
    assert track.difficulty == "medium"
    steps = track.steps
    assert [s.gain for s in steps] == [1.5, -0.2, 1.0, 1.5, 1.5, -0.2]
    assert [s.kind for s in steps] == [BASE] * 3 + [EXTENSION] * 3
    assert [s.labelled for s in steps] == [False, True, True, True, True, True]
    assert steps[0].difficulty == "medium"
    assert [round(s.total, 10) for s in steps] == [1.5, 1.3, 2.3, 3.8, 5.3, 5.1]
    assert [round(s.average, 4) for s in steps] == [1.5, 0.65, 0.7667, 0.95, 1.06, 0.85]
    assert track.count == 6 and track.total == pytest.approx(5.1)
    assert track.as_dict()["steps"][4]["next_difficulty"] == "hard"


def test_weak_target_stays_easy_up_to_the_boundary():
    track = DifficultyTrack()
    for _ in range(3):
        track.record(None, False)
    assert track.difficulty == "easy" and track.average == 0.0
    for expected_avg in (0.25, 0.4, 0.5):
        track.record(track.difficulty, True, EXTENSION)
        assert track.average == pytest.approx(expected_avg)
        assert track.difficulty == "easy"
    track.record("easy", True, EXTENSION)  # 4/7 = 0.571
    assert track.difficulty == "medium"


def test_record_rejects_bad_input():
    track = DifficultyTrack()
    with pytest.raises(GradedError, match="kind"):
        track.record(None, True, "bonus")
    with pytest.raises(GradedError, match="correct must be"):
        track.record(None, 1)
    assert track.count == 0


def test_evaluation_score_pools_batches():
    a, b = DifficultyTrack(), DifficultyTrack()
    for right in (True, True, True):  # 4.5 over 3
        a.record(None, right)
    b.record("hard", False)  # -0.2 over 1
    assert evaluation_score([a, b]) == pytest.approx(4.3 / 4)
    assert evaluation_score([]) is None


def test_batches_of_three_keep_the_remainder():
    assert batches(list(range(7))) == [[0, 1, 2], [3, 4, 5], [6]]
    assert batches([]) == []
    assert batches("abcd", 2) == [["a", "b"], ["c", "d"]]
    with pytest.raises(GradedError):
        batches([1], 0)


def test_validation_hand_worked():
    # before/after: RR, RW, WR, WR, WW, RR -> right before 3, right after 4, W->R 2, R->W 1
    v = validation([(True, True), (True, False), (False, True), (False, True), (False, False), (True, True)])
    assert (v.n, v.right_before, v.right_after, v.corrected, v.broken) == (6, 3, 4, 2, 1)
    assert v.acc1 == pytest.approx(0.5)
    assert v.acc2 == pytest.approx(4 / 6)
    assert v.cr == pytest.approx(2 / 6)
    assert v.cte == pytest.approx(1 / 6)
    assert v.delta == pytest.approx(1 / 6)
    assert v.delta == pytest.approx(v.cr - v.cte)


def test_validation_empty_and_bad_pairs():
    v = validation([])
    assert v.n == 0 and v.acc1 is None and v.delta is None
    with pytest.raises(GradedError, match="pair 1"):
        validation([(True, True), (True, "yes")])
    with pytest.raises(GradedError, match="pair 0"):
        validation([(True,)])


def test_identity_violation_raises():
    # counts that pass the range checks but break Δ = CR − CtE: 3 − 2 = 1 while 2 − 0 = 2
    with pytest.raises(ValidationIdentityError, match="does not hold"):
        validation_from_counts(4, 2, 3, 2, 0)
    with pytest.raises(GradedError, match="inconsistent"):
        validation_from_counts(4, 2, 3, 3, 0)
    ok = validation_from_counts(10, 5, 7, 3, 1)
    assert ok.delta == pytest.approx(0.2) and ok.cr - ok.cte == pytest.approx(0.2)


def test_validation_by_difficulty():
    rows = [("easy", True, True), ("hard", False, True), ("easy", False, False), ("hard", True, False)]
    by = validation_by(rows)
    assert list(by) == ["easy", "hard"]
    assert by["easy"].acc1 == 0.5 and by["easy"].delta == 0.0
    assert (by["hard"].cr, by["hard"].cte, by["hard"].delta) == (0.5, 0.5, 0.0)
