"""The rules a sixth held-out round taught (judge_probe_6, challenge_probe_replies_6, a court's rules in plain text
with sections and a schedule, a veterinary drug table in CSV under a "#" preamble, a rescue team's minutes with
speakers' turns), each on examples of its own, not the probes' rows."""

from __future__ import annotations

from pathlib import Path

import pytest

from engine.interview.offline_questions import wh_question
from engine.judge.fact_words import number_alternatives
from engine.judge.freetext import FreeTextJudge
from engine.judge.offline import abandons
from engine.judge.stance import asserted_text, judged_text
from engine.knowledge.ingest import ReadReport, _unit_from_field, read_file
from engine.text.negation import negation_scopes
from engine.text.sentences import chunk_sentences, plain_heading
from engine.text.tokens import tokens


@pytest.fixture(scope="module")
def judge():
    return FreeTextJudge()


@pytest.mark.parametrize("sentence, scopes", [
    # a colon before a clause of its own ends the negation; before a list it carries on
    ("That cannot be right: the smallest possible count is 2.", [True, False]),
    ("The dressing is not waterproof: gauze, tape and cotton.", [True, True, True]),
    # "with no" denies its noun, not what the sentence goes on to say
    ("A tenant with no deposit, guarantor or reference pays two months ahead.", [True, False]),
    ("Members pay the fee on every visit, with no cap.", [False, True]),
])
def test_where_a_negation_stops(sentence, scopes):
    assert [negated for _text, negated in negation_scopes(sentence)] == scopes


@pytest.mark.parametrize("text, expected", [
    ("Planck's constant is 6.62607015 × 10^-34 J s.", ["6.62607015e-34"]),
    ("h = 6.62607015e-34 J s", ["6.62607015e-34"]),
    ("a density of 10⁻³ per litre", ["0.001"]),
    ("about 2.5 x 10^3 people", ["2500"]),
])
def test_scientific_notation_is_one_number(text, expected):
    assert [t for t in tokens(text) if t[:1].isdigit()] == expected


def test_a_word_with_digits_is_no_number():
    assert tokens("An A4 sheet, a B12 deficiency, CO2 and 5 cm³") == ["an", "a4", "sheet", "a", "b12", "deficiency",
                                                                    "co2", "and", "5", "cm3"]


@pytest.mark.parametrize("criterion, answer, met", [
    # a quoted word is the word ("'east'" said "'west'")
    ("Under the club's rule 7, a red pennant means 'the course turns east'.",
     "Under rule 7, a red pennant means 'the course turns west'.", False),
    # the opposite said of the same thing as the claim's number
    ("The highest grade a candidate can be awarded is 9.", "9 is the lowest grade a candidate can be awarded.", False),
    ("The highest grade a candidate can be awarded is 9.",
     "The top grade a candidate can be awarded is 9, and the lowest grade is 1.", True),
    # a name of several words joined by "and"
    ("In Bosnia and Herzegovina, the speed limit on motorways is 130 km/h.",
     "In Croatia, the speed limit on motorways is 130 km/h.", False),
    # a value mentioned in a sentence that calls it wrong
    ("The statutory interest rate on late commercial payments is 8% above the base rate.",
     "You will often see 8% above the base rate quoted for late commercial payments, but that figure is wrong.", False),
    ("The statutory interest rate on late commercial payments is 8% above the base rate.",
     "The statutory interest rate on late commercial payments is 8% above the base rate. Some say 4%, but that is wrong.",
     True),
    # scientific notation and a name's number
    ("The Boltzmann constant is exactly 1.380649 × 10^-23 joules per kelvin.",
     "It is exactly 1.380649e-23 joules per kelvin, the Boltzmann constant.", True),
    # one before a unit is a number, not an article
    ("The minimum dose of ketamine is 1 mg per kg.", "The minimum dose of ketamine is 3 mg per kg.", False),
    ("The minimum dose of ketamine is 1 mg per kg.", "Ketamine's minimum dose is one milligram per kilogram.", True),
    ("Version 2 of the protocol was published on 3 March 2011.", "HTTPv2 ... no: the protocol's v2 came out on 3 March 2011.",
     True),
])
def test_hostile_and_honest_answers_of_the_sixth_round(judge, criterion, answer, met):
    assert judge.judge(criterion, answer).met is met


@pytest.mark.parametrize("sentence, number, numbers, offered", [
    ("The drill bit is 6 mm, 8 mm or 10 mm; one of those.", "8", {"8"}, ("6 mm", "10 mm")),
    ("It opened on 3 May 1851, or possibly 1 June 1851.", "3", {"3", "1851"}, ("1 june",)),
    ("Keep it 5 cm, or 2 inches, from the edge.", "5", {"5"}, ()),
])
def test_values_with_units_offered_as_alternatives(sentence, number, numbers, offered):
    assert number_alternatives(sentence, number, numbers) == offered


def test_a_verdict_in_the_middle_of_a_sentence_denies_what_the_sentence_said():
    assert judged_text("Many guides give 1912 as the year, but that date is a later invention.") == \
        "not Many guides give 1912 as the year."
    # a verdict on an attributed value goes with it, and refutes nothing before it
    assert asserted_text("It is 40. Some say 45, but that is wrong.", keep_denied=True) == "It is 40."
    # a verdict after a withdrawal still refutes the sentence before
    assert judged_text("It is 40. Just kidding, that is wrong.") == "that is wrong."


@pytest.mark.parametrize("reply", [
    "I'd rather not give a number for that.",
    "I will decline to commit to a date here.",
    "I can't decide between the two.",
    "I'll go with what your source says.",
])
def test_declining_to_give_a_value_gives_the_claim_up(reply):
    assert abandons(["The ferry takes 45 minutes."], reply)


def test_a_csv_preamble_is_no_row_and_a_columns_unit_is_said_with_its_value(tmp_path: Path):
    path = tmp_path / "drugs.csv"
    path.write_text("# Ward formulary, version 3\n# approved by the pharmacy\n"
                    "drug,dose_max_mg_per_kg,onset (minutes)\nketamine,10,3-5\n", encoding="utf-8")
    report = ReadReport()
    docs = list(read_file(path, report))
    assert not report.bad_files and len(docs) == 1
    assert "The maximum dose of ketamine is 10 mg per kg." in docs[0].text
    assert "The onset of ketamine is 3-5 minutes." in docs[0].text
    assert docs[0].meta["line"] == 4
    assert _unit_from_field("interval min", "5") == ("interval", "5 min")
    assert _unit_from_field("dose per patient", "5") == ("dose per patient", "5")


def test_section_titles_speakers_and_a_dash_lead_in():
    assert plain_heading("Section 4. Starting a claim", "(1) A claim is started ...") == "Section 4. Starting a claim"
    assert plain_heading("Section 3 applies to all claims", "x") == ""
    assert plain_heading("SCHEDULE 2 - HEARING FEES (payable by the claimant at the listing stage)", "x")
    text = ("2. Budget for the year to March\nAnna Webb: We spent 4,200 pounds on fuel.\n"
            "Tom Ray: That is 300 over budget.\nDECISION: The fuel budget rises to 4,500 pounds.\n\n"
            "The owner must give notice -\n(a) in writing; and\n(b) at least 7 days ahead.\n")
    assert chunk_sentences(text) == ["We spent 4,200 pounds on fuel.",
                                     "That is 300 over budget.", "The fuel budget rises to 4,500 pounds.",
                                     "The owner must give notice in writing; and at least 7 days ahead."]


def test_a_records_sentence_is_asked_about_its_key():
    from engine.bench.offline import Facet, KeySentence, aspect_of

    facet = Facet(0, "limits", (KeySentence("The stage of filtered water turbidity is each rapid gravity filter.", 1, 1.0),))
    assert aspect_of(facet, "Water treatment limits", {"water", "treatment", "limit"}) == "filtered water turbidity"


def test_a_sum_is_asked_how_much():
    assert wh_question("Filing online is £25 cheaper than filing on paper.") == \
        ("Filing online is how much cheaper than filing on paper?", "£25")
