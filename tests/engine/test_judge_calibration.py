"""The judge calibration set (bench/judge_calibration.py, bench/data/judge_calibration.jsonl): its
dev/sealed split, its generated rows, and the judges' verdicts on specific cases of the dev split.

No test asserts a figure of the set (an accuracy, a share credited): a rule tuned until such a figure
passes has been fitted to the set. The cases below are inputs with the verdict any judge must give.
"""

from __future__ import annotations

import json

import pytest

from bench import judge_calibration as jc
from engine.judge.answers import judge_gold
from engine.judge.freetext import FreeTextJudge
from engine.knowledge.embed import get_embedder


def test_batch_one_is_all_dev_and_the_sealed_split_is_seeded():
    rows = jc.load_rows()
    first = [r for r in rows if int(r.get("batch") or 1) == 1]
    later = [r for r in rows if int(r.get("batch") or 1) > 1]
    assert first and all(r["split"] == "dev" for r in first)
    assert {r["split"] for r in later} == {"dev", "sealed"}
    assert all(r["split"] == jc.split_of(r) for r in later)
    # one criterion's answers share a split (the split is drawn per criterion, not per row)
    by_group: dict[str, set[str]] = {}
    for r in later:
        by_group.setdefault(jc.fact_group(r), set()).add(r["split"])
    assert all(len(s) == 1 for s in by_group.values())
    assert jc.split_of({"id": "x-g1-terse", "batch": 2}) == jc.split_of({"id": "x-g1-near", "batch": 2})


def test_the_generated_rows_are_what_the_generator_writes():
    committed = [r for r in jc.load_rows() if int(r.get("batch") or 1) == 2]
    assert committed == jc.generated_rows(jc.load_docs())
    styles = {r["style"]: r["label"] for r in committed}
    assert styles["near"] is False and styles["list"] is False and styles["chat-after"] is True


def test_a_row_in_the_wrong_split_is_refused(tmp_path):
    row = json.loads(jc.DATA.read_text(encoding="utf-8").splitlines()[0])
    row["split"] = "sealed"
    bad = tmp_path / "cal.jsonl"
    bad.write_text(json.dumps(row) + "\n", encoding="utf-8")
    with pytest.raises(jc.CalibrationDataError, match=rf"{bad}:1: split 'sealed' is not 'dev'"):
        jc.load_rows(bad)


WAGGLE = ["the waggle dance", "waggle dance"]
WAGGLE_Q = "What do foragers use to show nestmates where food lies?"


@pytest.mark.parametrize("answer, met", [
    ("The waggle dance.", True),
    ("They use the waggle dance.", True),
    ("Foragers use the waggle dance. Its angle to vertical encodes the direction of the food relative to the "
     "sun, and nestmates follow the dancer to learn it.", True),
    ("Foragers use a scent trail to show nestmates where food lies.", False),
    ("A round of buzzing.", False),
    ("They don't use the waggle dance.", False),
    ("Either the waggle dance or a scent trail.", False),
    ("I'm not sure, sorry.", False),
])
def test_gold_judge_cases(answer, met):
    """Rows honeybees-g1-* of the dev split: the gold said, negated, hedged, echoed or missing."""
    assert judge_gold(answer, WAGGLE, WAGGLE_Q).met is met


@pytest.mark.parametrize("answer, golds, question, met", [
    ("December 1993", ["December 1993"], "When did astronauts fix its mirror flaw?", True),
    ("It has to be 1956, given what the passage describes.", ["1956"],
     "In which year did Egypt nationalise the canal?", True),
    ("20 July 1968", ["20 July 1969"], "On what date did Apollo 11 land on the Moon?", False),
    ("Pope Innocent IV", ["Pope Innocent III", "Innocent III"], "Which pope annulled the charter?", False),
])
def test_gold_judge_cases_generated(answer, golds, question, met):
    """Generated dev-split cases (hubble-g4, suez-g4, apollo-g1, magnacarta-g3): the gold, said tersely
    or in a sentence; a near miss (another date, another numeral) is not the gold."""
    assert judge_gold(answer, golds, question).met is met


@pytest.fixture(scope="module")
def facts():
    return FreeTextJudge(get_embedder())


@pytest.mark.parametrize("answer, met", [
    ("Sterile females.", True),
    ("The workers are all female, and they are sterile.", True),
    ("Workers are sterile female bees. They do most of the colony's labour: building comb, nursing larvae and "
     "foraging. Only the queen lays eggs in a healthy colony.", True),
    ("Worker honeybees are the male bees of the colony.", False),
    ("Worker honeybees are not sterile females.", False),
    ("workers, bees, queen, drones, sterile, hive, wax, pollen", False),
    ("A queen can lay about 2,000 eggs a day.", False),
])
def test_free_text_judge_cases(facts, answer, met):
    """Rows honeybees-f1-* of the dev split: the fact stated three ways; an echo with the wrong fact,
    its negation, a keyword list and another fact of the document."""
    v = facts.judge("Worker honeybees are sterile females.", answer, "What are worker honeybees?")
    assert v.met is met, v.rationale
