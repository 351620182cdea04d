"""Judge–human agreement: raw agreement, base rates and Cohen's κ on hand-worked tables."""

from __future__ import annotations

import pytest

from engine.metrics.agreement import AgreementError, agreement, agreement_by


def table(both: int, judge_only: int, human_only: int, neither: int) -> list[tuple[bool, bool]]:
    return ([(True, True)] * both + [(True, False)] * judge_only + [(False, True)] * human_only
            + [(False, False)] * neither)


def test_hand_worked_kappa():
    # n 50; p_o = 35/50 = 0.7; p_judge = 25/50 = 0.5; p_human = 30/50 = 0.6
    # p_e = 0.5·0.6 + 0.5·0.4 = 0.5; κ = (0.7 − 0.5) / (1 − 0.5) = 0.4
    a = agreement(table(20, 5, 10, 15))
    assert (a.n, a.both_met, a.judge_only, a.human_only, a.neither) == (50, 20, 5, 10, 15)
    assert a.raw == pytest.approx(0.7)
    assert a.judge_met_rate == pytest.approx(0.5)
    assert a.human_met_rate == pytest.approx(0.6)
    assert a.expected == pytest.approx(0.5)
    assert a.kappa == pytest.approx(0.4)
    assert a.kappa_note is None


def test_high_raw_agreement_low_kappa():
    # most verdicts "met": p_o = 18/20 = 0.9 but p_e = 0.95² + 0.05² = 0.905, κ = −0.005/0.095 ≈ −0.0526
    a = agreement(table(18, 1, 1, 0))
    assert a.raw == pytest.approx(0.9)
    assert a.judge_met_rate == pytest.approx(0.95) and a.human_met_rate == pytest.approx(0.95)
    assert a.expected == pytest.approx(0.905)
    assert a.kappa == pytest.approx(-0.005 / 0.095)
    assert a.kappa < 0.0 < a.raw - 0.8


def test_undefined_kappa_when_chance_agreement_is_one():
    for pairs, value in ((table(7, 0, 0, 0), "'met'"), (table(0, 0, 0, 4), "'not met'")):
        a = agreement(pairs)
        assert a.raw == 1.0 and a.expected == 1.0
        assert a.kappa is None
        assert "κ undefined" in a.kappa_note and value in a.kappa_note and str(a.n) in a.kappa_note


def test_one_constant_rater_gives_kappa_zero_not_undefined():
    # judge always met, human 3 of 4: p_o 0.75, p_e = 1·0.75 + 0·0.25 = 0.75 -> κ = 0
    a = agreement(table(3, 1, 0, 0))
    assert a.kappa == pytest.approx(0.0) and a.kappa_note is None


def test_perfect_and_empty():
    assert agreement(table(3, 0, 0, 2)).kappa == pytest.approx(1.0)
    empty = agreement([])
    assert empty.n == 0 and empty.raw is None and empty.kappa is None
    assert "no verdict" in empty.kappa_note
    with pytest.raises(AgreementError, match="pair 0"):
        agreement([(True, None)])


def test_grouped_per_kind_and_benchmark():
    rows = ([("point", True, True)] * 3 + [("point", False, False)] + [("deduction", True, False)]
            + [("deduction", True, True)])
    by_kind = agreement_by(rows)
    assert list(by_kind) == ["point", "deduction"]
    assert by_kind["point"].kappa == pytest.approx(1.0)
    assert by_kind["deduction"].raw == 0.5 and by_kind["deduction"].kappa == pytest.approx(0.0)
    by_bench = agreement_by((b, j, h) for b, j, h in [("medqa", True, True), ("sedar", True, True)])
    assert by_bench["medqa"].kappa is None and by_bench["sedar"].n == 1
    assert by_kind["point"].as_dict()["n"] == 4


def test_bootstrap_intervals_hold_the_figure_and_shrink_with_n():
    from engine.metrics.agreement import bootstrap_intervals, table_figures

    small = bootstrap_intervals(20, 5, 5, 20)
    large = bootstrap_intervals(2000, 500, 500, 2000)
    point = table_figures(20, 5, 5, 20)
    for key in ("accuracy", "kappa", "precision", "recall"):
        lo, hi = small[key]
        assert lo <= float(point[key]) <= hi
        assert (large[key][1] - large[key][0]) < (hi - lo)
    assert bootstrap_intervals(20, 5, 5, 20) == small  # seeded
    assert bootstrap_intervals(0, 0, 0, 0)["kappa"] is None


def test_kendall_and_pearson_by_hand():
    from engine.metrics.agreement import kendall_tau, pearson_r

    assert kendall_tau([1, 2, 3], [1, 2, 3]) == pytest.approx(1.0)
    assert kendall_tau([1, 2, 3], [3, 2, 1]) == pytest.approx(-1.0)
    # pairs (1,2) C, (1,3) C, (2,3) D: (2 - 1) / 3
    assert kendall_tau([1, 2, 3], [1, 3, 2]) == pytest.approx(1 / 3)
    assert kendall_tau([1, 1], [1, 2]) is None and kendall_tau([1], [1]) is None
    assert pearson_r([1, 2, 3], [2, 4, 6]) == pytest.approx(1.0) and pearson_r([1, 1], [1, 2]) is None


def test_rank_agreement_of_groups():
    from engine.metrics.agreement import rank_agreement

    tables = {"a": (40, 5, 5, 50), "b": (20, 5, 5, 70), "c": (60, 5, 5, 30), "d": (10, 2, 3, 85)}
    r = rank_agreement(tables)
    assert r.groups == 4 and r.kendall == pytest.approx(1.0) and r.pearson > 0.99
    assert r.kendall_interval is not None and r.pearson_interval[1] <= 1.0 + 1e-9
    assert r.shares["a"] == (pytest.approx(0.45), pytest.approx(0.45))
