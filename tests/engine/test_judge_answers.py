"""Gold-answer judging and multiple choice (engine.judge.answers): hand-worked cases for every rule."""

from __future__ import annotations

import pytest

from engine.judge.answers import (
    GOLD_F1_THRESHOLD,
    LEAD_WORDS,
    chinese_numerals_to_digits,
    choice_question,
    exact_match,
    extract_choice,
    format_options,
    judge_choice,
    judge_gold,
    negation_scopes,
    normalize_answer,
    split_clauses,
    token_f1,
)

# -- normalisation, EM, F1 ----------------------------------------------------------------------


def test_normalize_answer_is_squads_rule():
    assert normalize_answer("  The Denver  Broncos! ") == "denver broncos"
    assert normalize_answer("An apple, a pear.") == "apple pear"
    assert normalize_answer("Theory") == "theory"  # an article only as a whole word
    assert normalize_answer("“Quoted” – text") == "quoted text"  # Unicode punctuation deleted too


def test_normalize_answer_numbers_and_cjk():
    assert normalize_answer("1,000") == normalize_answer("1000") == "1000"
    assert normalize_answer("760") != normalize_answer("seven hundred sixty")
    assert normalize_answer("大熊猫，吃竹子。") == "大 熊 猫 吃 竹 子"
    assert normalize_answer("１０００") == "1000"  # full-width digits (NFKC)


def test_exact_match_and_token_f1_by_hand():
    assert exact_match("the Eiffel Tower.", "Eiffel tower") == 1.0
    assert exact_match("Eiffel", "Eiffel Tower") == 0.0
    # pred [cat, sat], gold [cat, sat, on, mat]: P = 1, R = 0.5, F1 = 2/3
    assert token_f1("The cat sat", "cat sat on the mat") == pytest.approx(2 / 3)
    assert token_f1("dog", "cat") == 0.0
    assert token_f1("", "") == 1.0 and token_f1("", "cat") == 0.0
    # CJK characters are tokens: 2 of 3 characters shared -> P = R = 2/3
    assert token_f1("大熊猫", "小熊猫") == pytest.approx(2 / 3)


def test_chinese_numerals():
    assert chinese_numerals_to_digits("一千八百只").split() == ["1800", "只"]
    assert chinese_numerals_to_digits("百分之九十九").split() == ["99", "percent"]
    assert chinese_numerals_to_digits("十到十六个小时").split() == ["10", "到", "16", "个小时"]
    assert chinese_numerals_to_digits("一些") == "一些"  # a lone 一 stays


def test_clauses_and_negation_scope():
    assert split_clauses("It costs 1,000 dollars, which is a lot; really.") == [
        "It costs 1,000 dollars", "which is a lot", "really."]
    # a negation reaches the end of the sentence, "but" ends it, a lone "No" negates nothing
    assert negation_scopes("Not a long, cool fermentation.") == [("Not a long", True), ("cool fermentation.", True)]
    assert negation_scopes("Not 16, but 8.") == [("Not 16", True), ("but 8.", False)]
    assert negation_scopes("No, it is 8.") == [("No", False), ("it is 8.", False)]
    assert negation_scopes("It is 8, not 16, as tables say.") == [
        ("It is 8", False), ("not 16", True), ("as tables say.", False)]


# -- judge_gold ---------------------------------------------------------------------------------

Q = "At what wavelengths does chlorophyll fluorescence peak?"
G = ["687 and 760 nm"]


def test_threshold_constant():
    assert GOLD_F1_THRESHOLD == 0.6
    assert LEAD_WORDS == 15


@pytest.mark.parametrize("reply", [
    "687 and 760 nm",
    "The peaks are at 687 and 760 nm.",
    "The peaks are at 687 and 760 nm. Satellites map this glow to follow photosynthesis. "
    "It is weak, about one percent of the absorbed light.",
    "Good question. Chlorophyll fluorescence peaks at 687 and 760 nm.",  # a short preamble
])
def test_gold_credited(reply):
    v = judge_gold(reply, G, Q)
    assert v.met, v.rationale
    assert v.f1 >= GOLD_F1_THRESHOLD and v.best_gold == G[0]


def test_gold_verdict_fields_by_hand():
    v = judge_gold("687 and 760 nm", G, Q)
    assert (v.met, v.em, v.f1) == (True, 1.0, 1.0)  # filler "and" dropped from both sides: 3 of 3
    v = judge_gold("The peaks are at 687 and 760 nm.", G, Q)
    # question word "peaks" and filler "are at and" earn nothing: [687, 760, nm] vs [687, 760, nm]
    assert (v.em, v.f1) == (0.0, 1.0)
    assert v.span == "The peaks are at 687 and 760 nm."
    assert 'focused F1 1.00 >= 0.60' in v.rationale


@pytest.mark.parametrize("reply, why", [
    ("I don't know.", "no gold word"),
    ("Chlorophyll fluorescence peaks at certain wavelengths.", "no gold word"),  # echo, no answer
    ("It peaks at 430 and 662 nm.", "numbers"),  # wrong
    ("760 nm", "numbers"),  # half of the numbers is another answer
    ("It does not peak at 687 and 760 nm.", "negated"),
    ("Either 687 and 760 nm or 430 and 662 nm.", "alternatives"),
])
def test_gold_not_credited(reply, why):
    v = judge_gold(reply, G, Q)
    assert not v.met
    assert why in v.rationale, v.rationale


def test_pasted_paragraph_not_credited_but_answer_first_is():
    paragraph = ("Chlorophyll is the green pigment of plants. It absorbs blue and red light, mostly at 430 "
                 "and 662 nm. Absorbed energy drives photosynthesis, and some is lost as heat. A small part "
                 "is re-emitted as fluorescence. Fluorescence peaks at 687 and 760 nm. Satellites measure it.")
    v = judge_gold(paragraph, G, Q)
    assert not v.met and "later sentence" in v.rationale
    assert judge_gold("So, to sum up: " + paragraph + " So the answer is 687 and 760 nm.", G, Q).met  # a conclusion


def test_one_word_gold_in_a_short_clause_only():
    q = "What is the atomic number of oxygen?"
    assert judge_gold("Oxygen has atomic number 8, which means each atom has eight protons.", ["8"], q).met
    assert judge_gold("eight", ["8"], q).met  # number words two to twelve read as digits
    v = judge_gold("Oxygen is a chemical element with symbol O and atomic number 8.", ["8"], q)
    # [chemical, element, symbol, o, 8] vs [8]: F1 = 2*(1/5)/(1/5+1) = 1/3
    assert not v.met and v.f1 == pytest.approx(1 / 3, abs=1e-4)
    assert judge_gold("It's 8, not 16.", ["8"], q).met  # the negation covers 16 only
    assert not judge_gold("It's 16, not 8.", ["8"], q).met


def test_gold_words_given_by_the_question_earn_nothing():
    q = "Which cells does the immune system destroy?"
    assert judge_gold("The beta cells.", ["beta cells"], q).met
    # "cells" is in the question: gold [beta] vs [liver]
    assert not judge_gold("Liver cells.", ["beta cells"], q).met


def test_numbers_with_commas_and_alternatives_in_the_gold():
    assert judge_gold("About 1000 people came.", ["1,000"], "How many people came?").met
    assert not judge_gold("About seven hundred sixty.", ["760"], "How many?").met
    q = "When does type 1 diabetes usually start?"
    assert judge_gold("It usually starts in childhood or adolescence.", ["childhood or adolescence"], q).met
    assert not judge_gold("In childhood, or maybe in old age.", ["childhood or adolescence"], q).met


def test_ranges_question_numbers_and_formulas():
    q = "What share of the harvest was lost?"
    assert judge_gold("Between 20–35% of it.", ["20–35%"], q).met
    assert judge_gold("20-35 percent", ["20–35%"], q).met  # hyphen or en dash: the same two ends
    v = judge_gold("About 35% of it.", ["20–35%"], q)
    assert not v.met and "numbers" in v.rationale  # one end of a range is another answer
    assert split_clauses("The Miller–Rabin test, in short.") == ["The Miller–Rabin test", "in short."]
    # numbers the question already holds are neither required nor held against the reply
    q = "Which divisors do all even numbers larger than 2 have?"
    assert judge_gold("1, 2, and n", ["1, 2, and n"], q).met
    assert judge_gold("1/(1-p)n", ["1/(1-p)n"], "How is it written?").met


def test_gold_given_by_the_question_needs_more_than_an_echo():
    q = "Which conjecture says there are infinitely many twin primes?"
    assert judge_gold("The twin prime conjecture.", ["twin prime conjecture"], q).met
    v = judge_gold("Which conjecture says there are infinitely many twin primes.", ["twin prime conjecture"], q)
    # nothing is discounted: [conjecture, says, infinitely, many, twin, primes] vs [twin, prime, conjecture]
    assert not v.met and v.f1 == pytest.approx(4 / 9, abs=1e-4)


def test_several_golds_and_chinese():
    v = judge_gold("They are called the Broncos.", ["Denver Broncos", "Broncos"], "Who won?")
    assert v.met and v.best_gold == "Broncos"
    q = "野生大熊猫大约有多少只？"
    assert judge_gold("大约一千八百只。", ["一千八百只"], q).met
    assert not judge_gold("五百只。", ["一千八百只"], q).met
    assert not judge_gold("没有一千八百只。", ["一千八百只"], q).met


def test_gold_bad_input():
    with pytest.raises(ValueError, match="gold answer"):
        judge_gold("anything", ["", "  "])
    assert not judge_gold("", ["8"]).met


# -- multiple choice ----------------------------------------------------------------------------

OPTS = {"A": "Streptococcus pneumoniae", "B": "Mycobacterium tuberculosis", "C": "Haemophilus influenzae",
        "D": "Staphylococcus aureus"}


def test_format_options_and_question():
    assert format_options(OPTS) == ("A. Streptococcus pneumoniae\nB. Mycobacterium tuberculosis\n"
                                    "C. Haemophilus influenzae\nD. Staphylococcus aureus")
    assert format_options(["red", "blue"]) == "A. red\nB. blue"
    q = choice_question("Which organism?", OPTS)
    assert q.startswith("Which organism?\n\nA. Streptococcus") and q.endswith("(A, B, C, D).")
    with pytest.raises(ValueError):
        format_options({})


@pytest.mark.parametrize("reply, chosen", [
    ("B", "B"), ("(B)", "B"), ("b)", "B"), ("b", "B"), ("Option B", "B"), ("**Answer: C**", "C"),
    ("The answer is B.", "B"),
    ("I first thought A, but the answer is C", "C"),
    ("It is not B ... the answer is C", "C"),
    ("The answer is A. Actually, C.", "C"),
    ("Staphylococcus aureus", "D"),
    ("It is most likely staphylococcus aureus, given the hospital setting.", "D"),
    ("The correct answer is (D) Staphylococcus aureus.", "D"),
    ("D. Staphylococcus aureus. Streptococcus pneumoniae is the commonest community cause, but not here.", "D"),
    ("Option A is incorrect because of the setting; option D is correct.", "D"),
    ("B and C are both wrong; the answer is D.", "D"),
    ("Vitamin C deficiency is not relevant here. The answer is D.", "D"),
    ("I have no doubt: the answer is D.", "D"),
    ("答案是C", "C"),
])
def test_extract_choice(reply, chosen):
    assert extract_choice(reply, OPTS) == chosen


@pytest.mark.parametrize("reply", [
    "not B", "It is not B.", "A is wrong, B is wrong, C is wrong.",  # negated mentions are no choice
    "A or B", "The answer is A or B.", "It's either C or D.", "A, B, C and D",
    "Streptococcus pneumoniae, Mycobacterium tuberculosis, Haemophilus influenzae, Staphylococcus aureus",
    "A. Streptococcus pneumoniae\nB. Mycobacterium tuberculosis\nC. Haemophilus influenzae\nD. Staphylococcus aureus",
    "I have no idea.", "A patient like this needs antibiotics.", "",
])
def test_no_single_choice(reply):
    assert extract_choice(reply, OPTS) is None


def test_option_texts_that_are_hard_to_read():
    opts = {"A": "Penicillin", "B": "Penicillin-clavulanate", "C": "Vaccinate against measles now",
            "D": "A short rest", "E": "The dose is not changed."}
    assert extract_choice("Penicillin-clavulanate", opts) == "B"  # the longer option wins its words
    assert extract_choice("I would rule out penicillin. The best answer is penicillin-clavulanate.", opts) == "B"
    assert extract_choice("A short rest", opts) == "D"  # the article does not hide the option
    # negations inside an option's own text ("against", "not") are not the reply's
    assert extract_choice("Vaccinate against measles now", opts) == "C"
    assert extract_choice("The dose is not changed.", opts) == "E"
    assert extract_choice("Vaccinate against measles now or a short rest", opts) is None
    assert extract_choice(format_options(opts), opts) is None  # the echoed list, "D. A short rest" included
    assert extract_choice(", ".join(opts.values()), opts) is None


def test_judge_choice():
    v = judge_choice("It is not B ... the answer is C", OPTS, "C")
    assert v.met and v.chosen == "C" and "correct" in v.rationale
    v = judge_choice("A or B", OPTS, "B")
    assert not v.met and v.chosen is None and "several options (A, B)" in v.rationale
    v = judge_choice("not B", OPTS, "b")
    assert not v.met and "only rejects options (B)" in v.rationale
    with pytest.raises(ValueError, match="gold option 'E'"):
        judge_choice("A", OPTS, "E")
