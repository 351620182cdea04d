"""viva judge probe (engine.judge.probe): adversarial answers from a benchmark's golds, and the judges' stance rules
against them (gold, multiple-choice and criterion judges; English and Chinese)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from engine.judge.choice import judge_choice
from engine.judge.gold_match import judge_gold
from engine.judge.probe import (
    PATTERNS_FILE,
    SETS,
    Pool,
    ProbeError,
    ProbeItem,
    build_answer,
    load_patterns,
    number_words,
    reword,
    run_probe,
)
from tui.cli import main

ITEMS = [
    ProbeItem("Who wrote On the Origin of Species?", ("Charles Darwin",), label="t#1"),
    ProbeItem("In what year did the Battle of Hastings take place?", ("1066",), label="t#2"),
    ProbeItem("What gas do plants release?", ("oxygen",), label="t#3"),
    ProbeItem("What is the stadium of Manchester United?", ("Old Trafford",), label="t#4"),
    ProbeItem("How many legs does a spider have?", ("8",), label="t#5"),
    ProbeItem("Which drug is first line?", ("B",), {"A": "Aspirin", "B": "Metformin", "C": "Insulin", "D": "Warfarin"},
              label="t#6"),
    ProbeItem("When did the ship sink?", ("15 April 1912",), label="t#7"),
    ProbeItem("Who painted the Mona Lisa?", ("Leonardo da Vinci",), label="t#8"),
    ProbeItem("谁写了红楼梦？", ("曹雪芹",), label="t#9"),
    ProbeItem("中国的首都是哪里？", ("北京",), label="t#10"),
]


def test_the_shipped_pattern_file_is_complete():
    patterns = load_patterns()
    names = {p.name for p in patterns}
    assert {"right", "paraphrase", "apposition", "denied", "attributed", "superseded", "withdrawn", "hypothetical",
            "question", "sweep", "code_url"} <= names
    for p in patterns:
        assert p.expect in ("credit", "refuse")
        for lang in p.phrasings.values():
            assert set(lang) == set(SETS) and all(lang[s] for s in SETS)
            assert not set(lang["dev"]) & set(lang["heldout"]), p.name  # the held-out set is another set of phrasings
        assert "zh" in p.phrasings, p.name


@pytest.mark.parametrize("content, message", [
    ("patterns: []\n", "expected a top-level `patterns:` list"),
    ("patterns:\n  - name: x\n    expect: maybe\n", "`expect` must be credit or refuse"),
    ("patterns:\n  - name: x\n    expect: credit\n    en: {dev: [a]}\n", "needs non-empty `dev` and `heldout`"),
    ("patterns:\n  - {name: x, expect: credit, zh: {dev: [a], heldout: [b]}}\n", "needs `en` phrasings"),
])
def test_a_bad_pattern_file_gets_one_line(tmp_path: Path, content: str, message: str):
    path = tmp_path / "p.yaml"
    path.write_text(content, encoding="utf-8")
    with pytest.raises(ProbeError, match="p.yaml") as err:
        load_patterns(path)
    assert message in str(err.value) and "\n" not in str(err.value)


def test_reword():
    assert number_words(1864) == "one thousand eight hundred sixty-four" and number_words(42) == "forty-two"
    assert reword("1066") == "one thousand sixty-six" and reword("1912") == "nineteen twelve"
    assert reword("8") == "eight"
    assert reword("15 April 1912") == "April 15, 1912"
    assert reword("April 15, 1912") == "15 April 1912"
    assert reword("the U.S. Senate") == "the United States Senate"
    assert reword("Metformin", {"A": "x", "B": "Metformin"}, "B") == "Option B"
    assert reword("oxygen") is None


def test_answers_are_built_from_the_benchmark():
    pool = Pool(ITEMS)
    darwin = ITEMS[0]
    wrong = pool.wrong(darwin, 3)
    assert wrong and all("Darwin" not in w for w in wrong)
    assert pool.wrong(ITEMS[5], 3)[:3] and set(pool.wrong(ITEMS[5], 3)) <= {"Aspirin", "Insulin", "Warfarin"}
    assert build_answer("{G} is wrong. The answer is {X}.", darwin, pool).startswith("Charles Darwin is wrong.")
    assert build_answer("https://www.google.com/search?q={G}", darwin, pool).endswith("q=Charles+Darwin")
    sweep = build_answer("{SWEEP:It is {C}.}", ITEMS[1], pool)
    assert sweep.count("It is") >= 3 and "It is 1066." in sweep
    assert build_answer("{G~}", ITEMS[2], pool) is None  # no rewording applies to "oxygen"
    assert build_answer("{PASSAGE}", darwin, pool) is None  # no passage


@pytest.mark.parametrize("answer", [
    "Charles Darwin is wrong. The answer is Alfred Wallace.",
    "Charles Darwin is incorrect.",
    "I refuse to say Charles Darwin.",
    "Anything except Charles Darwin.",
    "Many people think it is Charles Darwin, but it is actually Alfred Wallace.",
    "My friend says Charles Darwin, but I think it is Alfred Wallace.",
    "It was once believed to be Charles Darwin, but it is now known to be Alfred Wallace.",
    "The answer is Charles Darwin. Actually, no: it is Alfred Wallace.",
    "The answer is Charles Darwin. Just kidding, it is Alfred Wallace.",
    "The answer is Charles Darwin. Actually, scratch that, I have no idea.",
    "If it were Charles Darwin, the question would be easy.",
    "Suppose the answer were Charles Darwin; I still could not say.",
    "Is it Alfred Wallace? Is it Gregor Mendel? Is it Charles Darwin?",
    "https://www.google.com/search?q=Charles+Darwin",
    "I cannot answer. ```# Charles Darwin```",
    "It is Gregor Mendel. It is Louis Pasteur. It is Charles Darwin. It is Robert Hooke. It is Isaac Newton.",
])
def test_the_gold_judge_is_not_gamed(answer: str):
    v = judge_gold(answer, ["Charles Darwin"], "Who wrote On the Origin of Species?")
    assert not v.met, v.rationale


@pytest.mark.parametrize("answer, golds, question", [
    ("It was written by Charles Darwin, a famous English naturalist.", ["Charles Darwin"], "Who wrote it?"),
    ("The name of Manchester United's stadium is Old Trafford, located in Greater Manchester.", ["Old Trafford"],
     "What is the stadium of Manchester United?"),
    ("Spiders have eight legs.", ["8"], "How many legs does a spider have?"),
    ("It sank on April 15, 1912.", ["15 April 1912"], "When did the ship sink?"),
    ("If I am not mistaken, it was Charles Darwin.", ["Charles Darwin"], "Who wrote it?"),
    ("Not guilty.", ["not guilty"], "What was the verdict?"),
    ("Most historians believe it was 1066.", ["1066"], "When was the battle?"),
])
def test_right_answers_stay_credited(answer: str, golds: list[str], question: str):
    v = judge_gold(answer, golds, question)
    assert v.met, v.rationale


def test_a_long_passage_must_single_its_answer_out():
    passage = ("The battle took place near the town in the autumn. Many soldiers marched for days to reach the "
               "field. The king was killed in the fighting and the army scattered across the hills. It was the "
               "year 1066 when the old order ended and new castles were built across the land in the following "
               "decades. Chroniclers wrote about it for centuries afterwards.")
    v = judge_gold(passage, ["1066"], "In what year did the battle take place?")
    assert not v.met and "single its answer out" in v.rationale
    answer = "It was in 1066. " + passage
    assert judge_gold(answer, ["1066"], "In what year did the battle take place?").met


@pytest.mark.parametrize("answer, met", [
    ("B", True),
    ("The answer is B.", True),
    ("The answer is B. Actually, no: it is C.", False),
    ("Is it B?", False),
    ("Metformin is wrong. The answer is Aspirin.", False),
    ("It is Aspirin. It is Metformin. It is Insulin. It is Warfarin.", False),
    ("If it were Metformin, I'd be surprised.", False),
])
def test_the_choice_judge_reads_stance(answer: str, met: bool):
    v = judge_choice(answer, {"A": "Aspirin", "B": "Metformin", "C": "Insulin", "D": "Warfarin"}, "B")
    assert v.met is met, v.rationale


@pytest.mark.parametrize("answer, met", [
    ("曹雪芹", True),
    ("答案是曹雪芹。", True),
    ("曹雪芹是错的，答案是鲁迅。", False),
    ("答案是曹雪芹。不对，应该是鲁迅。", False),
    ("很多人认为是曹雪芹，但其实是鲁迅。", False),
    ("如果是曹雪芹的话，这个问题就简单了。", False),
    ("是鲁迅吗？是曹雪芹吗？", False),
    ("答案是曹雪芹。开玩笑的，我不知道。", False),
])
def test_chinese_patterns(answer: str, met: bool):
    v = judge_gold(answer, ["曹雪芹"], "谁写了红楼梦？")
    assert v.met is met, v.rationale


def test_run_probe_on_own_items_both_sets():
    report = run_probe(ITEMS, benchmarks=["t"], examples=2)
    got = {(f.pattern, f.set): f for f in report.figures}
    assert {s for _, s in got} == set(SETS)
    for (name, s), f in got.items():
        if f.n and name in ("right", "apposition", "denied", "hypothetical", "question", "withdrawn"):
            assert f.ok, (name, s, f, [e for e in report.examples if e["pattern"] == name])
    assert got[("paraphrase", "dev")].not_applicable >= 1  # "oxygen" has no rewording
    text = __import__("engine.judge.probe", fromlist=["render_text"]).render_text(report)
    assert "credited share per pattern" in text and "denied" in text
    with pytest.raises(ProbeError, match="no item with a gold answer"):
        run_probe([])


def test_cli_probe(tmp_path: Path):
    data = tmp_path / "squad.json"
    data.write_text(json.dumps({"version": "1.1", "data": [{"title": "Evolution", "paragraphs": [{
        "context": "On the Origin of Species was written by Charles Darwin and published in 1859. It argued for "
                   "natural selection.",
        "qas": [{"id": "q1", "question": "Who wrote On the Origin of Species?",
                 "answers": [{"text": "Charles Darwin", "answer_start": 40}]},
                {"id": "q2", "question": "When was On the Origin of Species published?",
                 "answers": [{"text": "1859", "answer_start": 76}]}]}]}]}), encoding="utf-8")
    runner = CliRunner()
    home = ["--home", str(tmp_path / "h")]
    result = runner.invoke(main, home + ["bench", "import", "squad", str(data)])
    assert result.exit_code == 0, result.output
    result = runner.invoke(main, home + ["judge", "probe", "--set", "dev", "--json"])
    assert result.exit_code == 0, result.output
    report = json.loads(result.output)
    assert report["items"] == 2 and {f["set"] for f in report["figures"]} == {"dev"}
    result = runner.invoke(main, home + ["judge", "probe", "--bench", "nope"])
    assert result.exit_code == 1 and "no such benchmark" in result.output


def test_the_pattern_file_is_documented():
    head = PATTERNS_FILE.read_text(encoding="utf-8").split("patterns:")[0]
    for word in ("{G}", "{G~}", "{X}", "{SWEEP:", "{NOISE}", "{PASSAGE}", "dev", "heldout"):
        assert word in head
