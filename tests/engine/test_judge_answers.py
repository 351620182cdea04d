"""SQuAD metrics, clause/negation helpers and multiple choice: hand-worked cases for every rule.

The gold-answer judge has its own cases in tests/engine/test_gold_match.py.
"""

from __future__ import annotations

import pytest

from engine.judge.answers import (
    chinese_numerals_to_digits,
    choice_question,
    exact_match,
    extract_choice,
    format_options,
    judge_choice,
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


# -- multiple choice ----------------------------------------------------------------------------

OPTS_TEXTS = ["Streptococcus pneumoniae", "Mycobacterium tuberculosis", "Haemophilus influenzae", "Staphylococcus aureus"]
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
    ("S. aureus", "D"),  # a two-word name by its first word's initial
    # an option rejected after the chosen one is not the choice
    ("Staphylococcus aureus (D) is my pick. Streptococcus pneumoniae (A) does not fit the picture.", "D"),
    ("From what I remember it was (D) Staphylococcus aureus. Haemophilus influenzae (C) is possible but unlikely.",
     "D"),
])
def test_extract_choice(reply, chosen):
    assert extract_choice(reply, OPTS) == chosen


@pytest.mark.parametrize("reply", [
    "not B", "It is not B.", "A is wrong, B is wrong, C is wrong.",  # negated mentions are no choice
    "A or B", "The answer is A or B.", "It's either C or D.", "A, B, C and D",
    "Streptococcus pneumoniae, Mycobacterium tuberculosis, Haemophilus influenzae, Staphylococcus aureus",
    "A. Streptococcus pneumoniae\nB. Mycobacterium tuberculosis\nC. Haemophilus influenzae\nD. Staphylococcus aureus",
    "I have no idea.", "A patient like this needs antibiotics.", "",
    # every option listed, in the four list formats, by text, by letter and as "A. text"
    *[sep.join(OPTS_TEXTS) for sep in (" / ", "; ", ", ", " | ")],
    *[sep.join("ABCD") for sep in (" / ", "; ", ", ", " | ")],
    *[sep.join(f"{k}. {v}" for k, v in zip("ABCD", OPTS_TEXTS, strict=True)) for sep in (" / ", "; ", ", ", " | ")],
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


def test_a_case_history_echoed_before_the_choice_is_no_sweep():
    # the short clauses of a case history ("Hematocrit 50%") are no candidates beside a bare option
    vignette = ("A 62-year-old man has a fever and a cough. His vitals include: heart rate 88/min, respiratory "
                "rate 20/min, temperature 38.4°C. Blood count: Hemoglobin 16 mg/dL, Hematocrit 50%, "
                "Neutrophils 72%, Bands 4%, Platelets 280,000/mm3. What is the most likely cause?")
    opts = {"A": "Streptococcus pneumoniae", "B": "Mycobacterium tuberculosis", "C": "Haemophilus influenzae",
            "D": "Staphylococcus aureus"}
    assert judge_choice(f"{vignette} (D) Staphylococcus aureus", opts, "D").met
    # a run of bare candidates right around it still is one
    assert not judge_choice("Streptococcus pneumoniae. Mycobacterium tuberculosis. Haemophilus influenzae. "
                            "Staphylococcus aureus.", opts, "D").met
