"""The scoped leaderboard: bootstrap intervals over items, paired comparisons, scopes (issue 25)."""

from __future__ import annotations

import numpy as np
import pytest

from engine.metrics.leaderboard import MIN_ITEMS, _Item, paired, row_figures


def test_score_interval_is_the_seeded_percentile_bootstrap_over_items():
    scores = [20.0, 40.0, 60.0, 80.0, 100.0]
    f = row_figures([_Item(score_mean=s) for s in scores], seed=7, resamples=500)["score"]
    assert f["value"] == pytest.approx(60.0) and f["n"] == 5
    # the same computation by hand: resample the 5 items 500 times with the seeded generator
    rng = np.random.default_rng(7)
    counts = rng.multinomial(5, [0.2] * 5, size=500)
    means = counts @ np.array(scores) / 5
    assert f["ci"] == pytest.approx(list(np.percentile(means, [2.5, 97.5])))
    assert f["ci"][0] < 60.0 < f["ci"][1]
    again = row_figures([_Item(score_mean=s) for s in scores], seed=7, resamples=500)["score"]
    assert again["ci"] == f["ci"], "seeded: the same interval every time"


def test_rates_pool_turns_and_resample_items():
    items = [_Item(score_mean=50.0, follow_ups=2, follow_sum=0.2, challenges=2, plus_n=1, plus_sum=0.1,
                   minus_n=1, minus_sum=0.3),
             _Item(score_mean=70.0, follow_ups=1, follow_sum=0.4, challenges=2, plus_n=2, plus_sum=0.2)]
    f = row_figures(items, resamples=300)
    assert f["delta_follow_up"]["value"] == pytest.approx(0.6 / 3) and f["delta_follow_up"]["turns"] == 3
    assert f["p_plus"]["value"] == pytest.approx(3 / 4) and f["p_minus"]["value"] == pytest.approx(1 / 4)
    assert f["m_plus"]["value"] == pytest.approx(0.3 / 3) and f["m_minus"]["value"] == pytest.approx(0.3)
    assert f["r"]["value"] == pytest.approx(0.75 * 0.1 - 0.25 * 0.3)
    assert f["p_plus"]["turns"] == 4 and f["p_plus"]["n"] == 2
    lo, hi = f["p_plus"]["ci"]
    assert 0.5 <= lo <= 0.75 <= hi <= 1.0  # resamples hold item 1 twice (1/2), item 2 twice (1) or both


def test_one_item_has_no_interval():
    f = row_figures([_Item(score_mean=80.0)])["score"]
    assert f["value"] == 80.0 and f["ci"] is None and f"n=1 < {MIN_ITEMS}" in f["ci_note"]


def test_paired_comparison_on_shared_items():
    a = {1: 80.0, 2: 70.0, 3: 90.0, 4: 60.0, 9: 10.0}
    b = {1: 60.0, 2: 50.0, 3: 75.0, 4: 45.0, 8: 99.0}
    cmp = paired(a, b, seed=3, resamples=500)
    assert cmp["n"] == 4 and cmp["items"] == [1, 2, 3, 4]
    assert cmp["mean_difference"] == pytest.approx((20 + 20 + 15 + 15) / 4)
    assert cmp["excludes_zero"] is True and cmp["ci"][0] >= 15.0 and cmp["ci"][1] <= 20.0
    noisy = paired({1: 80.0, 2: 20.0, 3: 50.0}, {1: 20.0, 2: 80.0, 3: 50.0}, resamples=500)
    assert noisy["mean_difference"] == pytest.approx(0.0) and noisy["excludes_zero"] is False
    assert paired({1: 1.0}, {1: 0.0})["ci"] is None and paired({1: 1.0}, {2: 0.0})["n"] == 0


def test_scopes_never_mix_benchmarks(home, fake_openai):
    from engine.metrics.leaderboard import ScopeError, scoped_leaderboard
    from tests.tui.conftest import make_benchmark, make_runtime, run_to_end

    rt = make_runtime(home, fake_openai)
    try:
        make_benchmark(rt, "flu")
        make_benchmark(rt, "other")
        a = run_to_end(rt, target="fake-a", turns=2, bench="flu")
        b = run_to_end(rt, target="fake-a", turns=2, bench="other")
        c = run_to_end(rt, target="fake-b", turns=2, bench="other")
        latest = scoped_leaderboard(rt.store, resamples=100)
        assert latest["scope"]["kind"] == "run" and latest["sessions"] == [c]
        by_bench = scoped_leaderboard(rt.store, benchmark="other", resamples=100)
        assert by_bench["sessions"] == [b, c]
        assert {(r["benchmark"], r["target"]) for r in by_bench["rows"]} == {("other", "fake-a"), ("other", "fake-b")}
        assert len(by_bench["comparisons"]) == 1 and by_bench["comparisons"][0]["n"] == 1
        everything = scoped_leaderboard(rt.store, query="target:fake-a", resamples=100)
        assert everything["sessions"] == [a, b]
        assert [(r["benchmark"], r["figures"]["score"]["n"]) for r in everything["rows"]] == [("flu", 1), ("other", 1)]
        assert everything["comparisons"] == [], "targets of different benchmarks are not compared"
        with pytest.raises(ScopeError, match="no benchmark 'nope'"):
            scoped_leaderboard(rt.store, benchmark="nope")
        with pytest.raises(ScopeError, match="the limit is"):
            scoped_leaderboard(rt.store, query="x " * 200)
    finally:
        rt.store.close()


def test_kappa_is_too_few_under_the_minimum():
    from engine.metrics.agreement import MIN_KAPPA_N, agreement, kappa_text

    few = agreement([(True, False), (False, True)])
    assert few.kappa == pytest.approx(-1.0) and few.kappa_too_few  # the "κ -1.00" from 2 overrides
    assert kappa_text(few.as_dict()) == f"κ too few (n=2 < {MIN_KAPPA_N})"
    pairs = [(True, True)] * 12 + [(False, False)] * 6 + [(True, False)] * 2
    enough = agreement(pairs)
    assert enough.n == 20 and not enough.kappa_too_few
    assert kappa_text(enough.as_dict()) == f"κ {enough.kappa:.2f} (n=20)"


def test_cli_filter_bound_and_run_json_leaderboard(home, fake_openai, tmp_path):
    import json

    import yaml
    from click.testing import CliRunner

    from tests.tui.conftest import make_benchmark, make_runtime
    from tui.cli import main

    rt = make_runtime(home, fake_openai)
    make_benchmark(rt)
    rt.store.close()
    runner = CliRunner()
    long = runner.invoke(main, ["--home", str(home), "sessions", "--filter", "flu " * 1300])
    assert long.exit_code != 0 and "the limit is 200" in long.output and "Traceback" not in long.output
    config = tmp_path / "viva.yaml"
    config.write_text(yaml.safe_dump({"targets": {"fake-a": {"base_url": fake_openai.base_url, "model": "m"},
                                                  "fake-b": {"base_url": fake_openai.base_url, "model": "n"}}}))
    out = runner.invoke(main, ["--home", str(home), "--config", str(config), "run", "--bench", "flu", "--target",
                               "fake-a", "--target", "fake-b", "--kernel", "offline", "--turns", "2", "--quiet",
                               "--json"])
    assert out.exit_code == 0, out.output
    doc = json.loads(out.stdout)
    board = doc["leaderboard"]
    assert board["scope"] == {"kind": "run", "value": doc["run"], "label": f"run {doc['run']}"}
    assert {r["target"] for r in board["rows"]} == {"fake-a", "fake-b"}
    assert all(r["figures"]["score"]["n"] == 1 for r in board["rows"])
    assert board["comparisons"][0]["n"] == 1 and board["method"]["seed"] == 0
