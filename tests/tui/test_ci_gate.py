"""The CI gate (issue 37): ``viva run --fail-under SCORE`` and per-target ``min_score`` exit non-zero with one
line per target below its threshold; ``viva report run:N --format junit`` writes JUnit XML, read back here
by junitparser (the testsuites/testsuite/testcase/failure form CI systems show)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from engine.store import Store
from tests.engine.interview_fixtures import ANSWERS, is_target, make_bench
from tui.cli import main

junitparser = pytest.importorskip("junitparser", reason="junitparser is in the dev extras")


def invoke(home: Path, *args: str):
    return CliRunner().invoke(main, ["--home", str(home), *args], catch_exceptions=False)


@pytest.fixture
def gated(home, fake_openai, tmp_path):
    """Two items; target `good` answers the crust fact, `weak` says nothing; `weak` has min_score 90."""
    store = Store(home / "viva.db")
    make_bench(store, n_items=2)
    store.close()
    fake_openai.rule(lambda r: is_target(r) and r.body["model"] == "good", ANSWERS[0])
    fake_openai.rule(lambda r: is_target(r) and r.body["model"] == "weak", ANSWERS[6])
    cfg = tmp_path / "viva.yaml"
    cfg.write_text(f"targets:\n  good:\n    base_url: {fake_openai.base_url}\n    model: good\n"
                   f"  weak:\n    base_url: {fake_openai.base_url}\n    model: weak\n    min_score: 90\n",
                   encoding="utf-8")
    return home, cfg


RUN = ["run", "--bench", "oxy", "--target", "good", "--target", "weak", "--kernel", "offline", "--policy",
       "threshold", "--turns", "1", "--quiet"]


def test_fail_under_and_min_score_exit_non_zero_with_one_line_per_target(gated):
    home, cfg = gated
    ran = invoke(home, "--config", str(cfg), *RUN, "--json")
    assert ran.exit_code == 3, ran.output
    rows = {r["target"]: r["score"] for r in json.loads(ran.stdout)["leaderboard"]["rows"]}
    assert rows["good"] > rows["weak"]
    lines = [ln for ln in ran.stderr.splitlines() if ln.startswith("below threshold")]
    assert lines == [f"below threshold: weak on oxy: Score {rows['weak']:.1f} < 90 (min_score)"]
    # --fail-under gates the targets without their own min_score: above good's Score, both are below
    strict = invoke(home, "--config", str(cfg), *RUN, "--fail-under", str(round(rows["good"] + 1, 1)))
    assert strict.exit_code == 3
    assert sorted(ln.split(":")[1].split(" on ")[0].strip() for ln in strict.stderr.splitlines()
                  if ln.startswith("below threshold")) == ["good", "weak"]
    assert "--fail-under" in strict.stderr and "min_score" in strict.stderr
    # a pass: good alone under a mark it reaches
    passing = invoke(home, "--config", str(cfg), "run", "--bench", "oxy", "--target", "good", "--kernel", "offline",
                     "--policy", "threshold", "--turns", "1", "--quiet", "--fail-under", str(rows["good"]))
    assert passing.exit_code == 0 and "below threshold" not in passing.stderr


def test_junit_xml_is_read_back_by_a_junit_parser(gated, tmp_path):
    home, cfg = gated
    assert invoke(home, "--config", str(cfg), *RUN).exit_code == 3
    out = tmp_path / "report.xml"
    written = invoke(home, "--config", str(cfg), "report", "run:1", "--format", "junit", "--out", str(out))
    assert written.exit_code == 0, written.output
    xml = junitparser.JUnitXml.fromfile(str(out))
    assert isinstance(xml, junitparser.JUnitXml)
    suites = {s.name: s for s in xml}
    assert set(suites) == {"oxy / good", "oxy / weak"}
    for name, suite in suites.items():
        cases = list(suite)
        assert [c.name for c in cases][-1] == "Score"
        items = [c for c in cases if c.name.startswith("item ")]
        assert len(items) == 2 and all(c.classname == f"viva.oxy.{name.split(' / ')[1]}" for c in items)
        assert "What do you know about oxygen?" in items[0].name
        assert suite.tests == 3
    weak, good = list(suites["oxy / weak"]), list(suites["oxy / good"])
    assert all(isinstance(c.result[0], junitparser.Failure) for c in weak), "every weak item and its Score fail"
    assert weak[-1].result[0].message.endswith("< 90")
    assert all(c.is_passed for c in good), "good has no threshold: nothing fails"
    assert suites["oxy / weak"].failures == 3 and xml.failures == 3
    # --fail-under on the report gates good too; to stdout without --out
    piped = invoke(home, "--config", str(cfg), "report", "run:1", "--format", "junit", "--fail-under", "100")
    again = junitparser.JUnitXml.fromstring(piped.stdout)
    assert again.failures == 6 if isinstance(again, junitparser.JUnitXml) else False


def test_junit_is_a_runs_report_and_fail_under_goes_with_it(gated):
    home, cfg = gated
    assert invoke(home, "--config", str(cfg), *RUN).exit_code == 3
    session = invoke(home, "report", "1", "--format", "junit")
    assert session.exit_code == 2 and "give run:N" in session.output
    md = invoke(home, "report", "run:1", "--fail-under", "50")
    assert md.exit_code == 2 and "goes with --format junit" in md.output
