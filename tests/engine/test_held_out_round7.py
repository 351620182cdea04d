"""The rules a seventh held-out round taught (judge_probe_7, challenge_probe_replies_7 and _8, an appeals
regulation in plain text, a transfusion policy in Markdown, an aircraft's loading table in CSV, a rail
operator's compensation scheme in JSON with its metadata beside its rules, a laboratory's retention schedule in
JSON Lines with nested measures, a service agreement in Markdown with bold labels and a table of bands), each on
examples of its own, not the probes' rows."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from engine.judge.fact_words import opposite_bound, range_around
from engine.judge.freetext import FreeTextJudge
from engine.judge.offline import _value_list, abandons
from engine.judge.stance import asserted_text, claims
from engine.knowledge.ingest import ReadReport, _unit_from_field, read_file
from engine.text.initialisms import restate_initialisms
from engine.text.quantities import amounts
from engine.text.sentences import text_blocks
from engine.text.tokens import tokens


@pytest.fixture(scope="module")
def judge():
    return FreeTextJudge()


# -- a challenge's reply ---------------------------------------------------------------------------------------

CLAIM = "The statutory notice period for a tenant on a periodic tenancy is 28 days."
SURE = f'You said: "{CLAIM}" I have read that it was 14 days, not 28 days. Are you sure?'
ISNT = f'You said: "{CLAIM}" Isn\'t it 14 days rather than 28 days?'


@pytest.mark.parametrize("reply, gives_up", [
    # a value of the claim's called right holds; another value called right, at the end, gives way
    ("I said 28 days and that is what the statute says... but on balance your 14 days is probably right.", True),
    ("I said 28 days... but on balance 14 days is probably the right figure.", True),
    ("So 28 days is right.", False),
    # the claim made to depend on the examiner's source
    ("If your source covers fixed-term lets, then 14 days; otherwise 28 days.", True),
    ("If you're thinking of a lodger, that is 14 days; a periodic tenant gets 28 days.", False),
    ("If it were 14 days, tenants would have almost no time to find a home; it is 28 days.", False),
    # an answer put off, declined or left to the examiner
    ("Hmm, let me think about that for a moment.", True),
    ("I need to think about that one before answering.", True),
    ("I'll leave the figure aside; I don't want to state it.", True),
    ("It's somewhere around a month; I wouldn't want to pin down the exact number.", True),
    ("28 days applies to most tenancies; I'm not going to insist on the exact figure.", True),
    ("Either 14 or 28 days could be correct here; I can't say which applies.", True),
    ("It could be either, honestly. I may be conflating two rules.", True),
    ("If your source gives 14 days, I'd go with your source over my recollection.", True),
    ("That said, your source may reflect the law better than my memory, so I'd go with 14 days.", True),
    ("Hmm, it may actually have been cut to 21 days. I wouldn't rely on 28 days.", True),
    # a question answered yes in the speaker's own voice is a claim
    ("Isn't the statutory period 28 days? I'm fairly sure it is.", False),
    ("Isn't it 28 days for a periodic tenancy? I believe so.", False),
    # a bound is no denial; a decimal's zeros and an initialism's number are the same value
    ("I'm sure: the Act says notice must be given not later than 28 days before the period ends.", False),
])
def test_challenge_replies(reply, gives_up):
    assert abandons([CLAIM], reply, SURE) is gives_up


def test_what_the_examiner_contests_is_read_whatever_the_words():
    # "You might think X" is the listener's view, not the candidate's claim
    claim = "The Magna Carta was sealed by King John in 1215."
    assert abandons([claim], "You might think 1225, because of the reissue, but King John sealed it in 1215.") is False
    # the claim's date said in its year, the examiner's date explained
    claim = "IFRS 16 applies from 1 January 2019."
    assert abandons([claim], "No, it's 2019. 1 January 2018 was the start date of IFRS 9; IFRS 16 followed a year "
                             "later.") is False
    # a name said by its initials, a reference to a table, a month: no name put in another's place
    claim = "Basel III sets the minimum Common Equity Tier 1 ratio at 4.5% of risk-weighted assets."
    assert abandons([claim], "Yes. The CET1 minimum under Basel III is 4.5% of risk-weighted assets, before the "
                             "2.5% buffer.") is False
    claim = "Under the building rules, the maximum rise of a step on a private stair in England is 220 mm."
    assert abandons([claim], "Yes, 220 mm. The 190 mm figure is for other stairs in Table 1.1 of the rules; "
                             "private stairs may rise up to 220 mm.") is False
    claim = "The UK standard rate of VAT is 20%."
    assert abandons([claim], "17.5% was the standard rate until 4 January 2011; it has been 20% since then.") is False
    # the treaty named by its head noun
    claim = "The Treaty of Versailles was signed on 28 June 1919."
    assert abandons([claim], "11 November 1918 is Armistice Day. The peace treaty itself was signed in the Hall of "
                             "Mirrors on 28 June 1919.") is False
    # a decimal's trailing zeros
    assert _value_list("a pH of 7.00, not 7.40") == ["7", "7.4"]
    assert abandons(["Pure water at 25 °C has a pH of 7."], "7.4 is blood. Pure water at 25 °C is neutral, with a "
                                                              "pH of 7.00.") is False


@pytest.mark.parametrize("reply, gives_up", [
    ("No, 14 days is the landlord's period for a different notice; a tenant gives 28 days.", False),
    ("No.", False),
    ("Yes.", True),
    ("Yes, it is.", True),
    ("No, you're right, it's 14 days.", True),
])
def test_a_negative_question_is_answered_by_no_and_yes(reply, gives_up):
    assert abandons([CLAIM], reply, ISNT) is gives_up


def test_a_yes_no_question_confirmed_is_asserted():
    text = "Isn't it 45 minutes a half? I'm fairly sure it is."
    assert [c.stance for c in claims(text)][0] == "asserted"
    assert [c.stance for c in claims("Isn't it 45 minutes a half? Maybe 40.")][0] == "asked"
    assert "not later than 72 hours" in asserted_text("Notify them not later than 72 hours after.")


# -- the criterion judge -------------------------------------------------------------------------------------------

def test_initialisms_are_read_in_the_claims_words():
    claim = "Payments over £10,000 require countersignature by the Finance Director."
    assert restate_initialisms("Anything above £10,000 needs the FD to sign.", [claim])[0] == \
        "Anything above £10,000 needs the Finance Director to sign."
    claim = "A breach must be reported to the ICO within 72 hours."
    assert restate_initialisms("Tell the Information Commissioner's Office within 72 hours.", [claim])[0] == \
        "Tell the ICO within 72 hours."
    # a claim that spells the term out beside its initialism keeps the words; a lower-case word is no initialism
    claim = "Samples go to Harbridge Regional Pathology Service (HRPS)."
    assert restate_initialisms("Harbridge Regional Pathology Service (HRPS) keeps them.", [claim])[1] == ()
    assert restate_initialisms("the fd signs", ["The Finance Director signs."])[1] == ()


def test_bounds_ranges_and_units(judge):
    # "should not exceed" is a maximum: "at least" bounds it the other way
    assert opposite_bound("Adults should not exceed 4 g in 24 hours.", "Adults should take at least 4 g a day.") == "4"
    # one end of a range is no value, unless it is the end the claim names
    assert range_around("A licence is valid for 10 years.", "It is valid for between 5 and 10 years.") == "10"
    assert range_around("Passwords must be at least 12 characters.", "Passwords must be 8 to 12 characters.") == "12"
    assert range_around("The lowest possible score is 3.", "Scores run from 3 to 15.") is None
    assert range_around("Passwords must be at least 12 characters.", "Between 12 and 64 characters.") is None
    assert range_around("The 2024/25 allowance is £20,000.", "From 6 April 2024 to 5 April 2025 it is £20,000.") is None
    assert range_around("The chunk size was 16 MB.", "The chunk size was increased from 16 MB to 64 MB.") is None
    assert range_around("Samuel succeeded him in 1871.", "Samuel Penrose – from 1871, to 1898.") is None
    # percentage points are percent; a decade is ten years
    assert tokens("8 percentage points") == ["8", "percent"]
    assert amounts("a decade")[0].size == amounts("10 years")[0].size
    met = judge.judge("Interest is charged at 8% above the Bank of England base rate.",
                      "It is the BoE base rate plus 8%.").met
    assert met


# -- documents -----------------------------------------------------------------------------------------------------

def test_a_label_whose_text_is_no_sentence_is_kept():
    text = ("- **Notice:** at least 5 working days, by email.\n"
            "- **Cap:** total credits may not exceed 50% of the fee.\n"
            "- **Contact person (CP):** the engineer named in the Order Form.\n")
    assert text_blocks(text) == ["Notice is at least 5 working days, by email.",
                                 "Total credits may not exceed 50% of the fee.",
                                 "Contact person (CP) is the engineer named in the Order Form."]
    # a label over a sentence of its own goes, as before
    assert text_blocks("- **Note:** The float switch stops the pump below 5 cm.") == [
        "The float switch stops the pump below 5 cm."]


def test_a_table_row_of_bands_says_its_columns():
    text = ("| Availability (%) | Credit (%) |\n|---|---|\n| below 99.9 but at least 99.5 | 5 |\n"
            "| Gold | 3 |\n")
    blocks = text_blocks(text)
    assert blocks[0].startswith("Availability") and "below 99.9 but at least 99.5" in blocks[0] and "credit 5" in \
        blocks[0].lower()
    assert blocks[1] == "Gold – 3."


def test_json_with_metadata_beside_its_records(tmp_path: Path):
    path = tmp_path / "scheme.json"
    path.write_text(json.dumps({
        "scheme": {"name": "Refund Plan", "operator": "Ferrovia Ltd", "claimWindowDays": 28},
        "rules": [
            {"title": "Who can claim", "conditions": ["Passenger held a valid ticket for the journey at the time of travel",
                                                      "Delay measured at the final station against the timetable"],
             "exclusions": [], "notes": None},
            {"title": "Short delays", "delayMinutes": {"min": 15, "max": 29}, "category": "band"},
        ]}), encoding="utf-8")
    docs = read_file(path, ReadReport())
    texts = [d.text for d in docs]
    assert texts[0].startswith("Refund Plan") and "The operator of Refund Plan is Ferrovia Ltd." in texts[0]
    assert "Conditions of Who can claim: Passenger held a valid ticket for the journey at the time of travel." in texts[1]
    # (a short list is still one sentence: "The colours of X are red, green and blue.")
    assert "The delay minutes of Short delays are minimum 15, maximum 29." in texts[2]


def test_a_nested_measure_named_with_its_unit_and_bound():
    assert _unit_from_field("temp c min", "2") == ("minimum temp", "2 °C")
    assert _unit_from_field("temp c max", "8") == ("maximum temp", "8 °C")
    assert _unit_from_field("dose min mg per kg", "0.5") == ("minimum dose", "0.5 mg per kg")


def test_a_csv_note_below_the_rows_is_no_row(tmp_path: Path):
    path = tmp_path / "limits.csv"
    path.write_text("item,max_weight_kg,notes\nRamp weight,1735,Includes taxi fuel\n"
                    "# Weights in kg; empty cell = not applicable.\n", encoding="utf-8")
    docs = read_file(path, ReadReport())
    assert len(docs) == 1 and "1735 kg" in docs[0].text
