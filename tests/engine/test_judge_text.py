"""The shared text module for judging (engine.judge.text): tokens, numbers, stems, sentences, negation scope."""

from __future__ import annotations

import pytest

from engine.judge.text import (
    chinese_numerals_to_digits,
    content_stems,
    negation_scopes,
    ordinal,
    scoped_clauses,
    split_sentences,
    stem,
    tokens,
)


@pytest.mark.parametrize("text, expected", [
    ("Two hundred and fifty-three thousand people", ["253000", "people"]),
    ("1.5 million dollars", ["1500000", "dollars"]),
    ("About 2,000 eggs", ["about", "2000", "eggs"]),
    ("3.5 m", ["3.5", "m"]),
    ("90% or 90 per cent", ["90", "percent", "or", "90", "percent"]),
    ("the twenty-first century", ["the", "21st", "century"]),
    ("first, 1st and 22nd", ["1st", "1st", "and", "22nd"]),
    ("nineteen eighty-four", ["1984"]),  # a year read in pairs, not 103 (one reader with the gold judge)
    ("two thousand and fifteen", ["2015"]),
    ("thirteen", ["13"]),
    ("ninety-nine", ["99"]),
    ("hundreds of people", ["hundreds", "of", "people"]),  # a plural scale is not a number
    ("Koirala's group does n't", ["koirala", "group", "does", "n't"]),
    ("1,2,3", ["1", "2", "3"]),  # a list, not a thousands separator
])
def test_tokens_and_numbers(text, expected):
    assert tokens(text) == expected


def test_ordinals_and_chinese_numerals():
    assert [ordinal(n) for n in (1, 2, 3, 4, 11, 12, 13, 21, 22, 101, 111)] == [
        "1st", "2nd", "3rd", "4th", "11th", "12th", "13th", "21st", "22nd", "101st", "111th"]
    assert chinese_numerals_to_digits("一千八百只").strip() == "1800 只"
    assert tokens("百分之九十九") == ["99", "percent"]


def test_stems_and_stop_words():
    assert stem("plates") == stem("plate") and stem("colliding") == stem("collided")
    assert stem("went") == "go" and stem("children") == "child"
    assert content_stems("I think the answer is that the plates are not colliding.") == ["plate", "collid"]
    assert content_stems("大熊猫不冬眠") == ["大", "熊", "猫", "冬", "眠"]


@pytest.mark.parametrize("text, expected", [
    ("Dr. Smith lives in St. Louis. He is a doctor.", ["Dr. Smith lives in St. Louis.", "He is a doctor."]),
    ("J. R. R. Tolkien wrote it. It sold well.", ["J. R. R. Tolkien wrote it.", "It sold well."]),
    ("It was No. 1 in the charts. No. I do not think so.", ["It was No. 1 in the charts.", "No.",
                                                             "I do not think so."]),
    ("He moved to the U.S. in 1990.", ["He moved to the U.S. in 1990."]),
    ("two heroes are in kathmandu , nepal . and they are struggling .",
     ["two heroes are in kathmandu , nepal .", "and they are struggling ."]),
    ("It costs $3.50. Really?\nYes", ["It costs $3.50.", "Really?", "Yes"]),
    ("大熊猫吃竹子。它不冬眠！", ["大熊猫吃竹子。", "它不冬眠！"]),
])
def test_sentences_respect_abbreviations_and_initials(text, expected):
    assert split_sentences(text) == expected


def test_negation_scope():
    # the negation governs what follows it; the words of its clause before it are outside
    (c,) = scoped_clauses("lib dem leader tim farron has said he does not believe in it")
    assert c.negated and c.head == "lib dem leader tim farron has said he does"
    assert negation_scopes("Liquid oxygen, not liquid nitrogen, is pale blue.") == [
        ("Liquid oxygen", False), ("not liquid nitrogen", True), ("is pale blue.", False)]
    assert negation_scopes("No, it is not red. But it is blue") == [
        ("No", False), ("it is not red.", True), ("But it is blue", False)]
    assert negation_scopes("It was the No. 1 hit") == [("It was the No. 1 hit", False)]
    assert negation_scopes("Nobody came; we danced") == [("Nobody came", True), ("we danced", False)]
    (c,) = scoped_clauses("Neither liquid nor solid oxygen is pale blue")
    assert c.negated and c.head == ""
