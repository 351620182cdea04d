"""Records that carry a value with its unit, a JSON object holding its records under one field, a glossary
written one term a line, a title-case title line, a long name before its verb, and a challenge or a
reply that moves one name of the claim into another's place (the examination round after exam_kb13)."""

from __future__ import annotations

import json
import random

import pytest

from engine.bench import offline
from engine.interview.offline_questions import alternative_value
from engine.judge.offline import abandons
from engine.knowledge.ingest import fields_text, read_sources
from engine.text.sentences import chunk_sentences, plain_heading, text_blocks
from engine.text.subjects import chunk_subject, subject_of

RULES = {
    "council": "Aldwick Borough Council",
    "scheme": "Street trading rules",
    "rules": [
        {"name": "Pitch licence", "description": "A pitch licence is needed for every stall on a public street.",
         "value": 240, "unit": "GBP per year",
         "reduced_rate": {"value": 120, "unit": "GBP per year", "applies_to": "charities"}},
        {"name": "Stall width", "capacity": 3, "unit": "metres",
         "description": "A stall may not block more than half of the pavement."},
        {"name": "Trading hours", "description": "Stalls may trade from 07:00 to 20:00."},
    ],
}


def test_a_value_with_its_unit_and_a_field_holding_one_are_read_as_sentences():
    first = fields_text(RULES["rules"][0])
    assert first == (
        "Pitch licence\n\nThe figure for Pitch licence is 240 GBP per year.\n\n"
        "The reduced rate of Pitch licence is 120 GBP per year (applies to: charities).\n\n"
        "A pitch licence is needed for every stall on a public street.")
    # a value named by its own field is said with that name; no unit, no amount (read as before)
    assert "The capacity of Stall width is 3 metres." in fields_text(RULES["rules"][1])
    assert fields_text({"name": "Fee", "value": 12}) is None
    # two values beside one unit: which one it measures is unknown, so neither is said
    assert "12" not in (fields_text({"name": "Fee", "low": 12, "high": 20, "unit": "GBP", "kind": "flat rate"}) or "")


def test_a_json_object_holding_its_records_under_one_field_reads_each_record(tmp_path):
    f = tmp_path / "rules.json"
    f.write_text(json.dumps(RULES), encoding="utf-8")
    docs, report = read_sources([f])
    assert not report.bad_records and not report.bad_files
    assert [d.title for d in docs] == ["rules", "Pitch licence", "Stall width", "Trading hours"]
    assert docs[0].text.startswith("Aldwick Borough Council\n\nThe scheme of Aldwick Borough Council is Street trading")
    assert "GBP per year" not in docs[2].text and "Stall width" in docs[2].text  # no record runs into the next
    # an object whose list is no list of records is read whole, as before
    g = tmp_path / "one.json"
    g.write_text(json.dumps({"title": "Stalls", "notes": ["Stalls are inspected twice a year.", "Fees rise in April."]}))
    docs, _ = read_sources([g])
    assert len(docs) == 1 and "Fees rise in April." in docs[0].text


def test_a_glossary_written_one_term_a_line_is_one_fact_a_line():
    text = ("2. Definitions\nAccession: a single collection from one site, with a six-digit number.\n"
            "eRH: equilibrium relative humidity, the humidity of air in balance with a sample.\n"
            "Vault B: the long-term store held at minus 20 °C.\n")
    assert chunk_sentences(text) == [
        "Accession is a single collection from one site, with a six-digit number.",
        "eRH is equilibrium relative humidity, the humidity of air in balance with a sample.",
        "Vault B is the long-term store held at minus 20 °C."]
    assert chunk_sentences("Permits: the cards issued by the Trust.\nWardens: the staff who check them.") == [
        "Permits are the cards issued by the Trust.", "Wardens are the staff who check them."]
    # wrapped prose and an FAQ's question and answer are no glossary
    assert text_blocks("The pool opens at 06:30.\nIt closes at 21:00.") == ["The pool opens at 06:30. It closes at 21:00."]
    assert chunk_sentences("Q: How long is the wait?\nAnswer: The wait is about 14 months.") == [
        "The wait is about 14 months."]


@pytest.mark.parametrize("line, below, heading", [
    ("Standard Operating Procedure SOP-MSC-07: Intake, Drying and Storage of Wild Seed Collections",
     "Version 4.2, effective 3 March 2025.", True),
    ("The Pool Opens at Nine", "Swimmers arrive early.", True),
    ("The pool opens at nine and closes at ten on weekdays", "Swimmers arrive early.", False),  # a wrapped line
    ("Standard Operating Procedure for Intake and Storage", "in the laboratory.", False),  # runs on below
    ("Intake, Drying and Storage", "Version 4.2.", True),
])
def test_a_title_case_line_over_a_capitalised_line_is_a_heading(line, below, heading):
    assert bool(plain_heading(line, below)) is heading
    blocks = text_blocks(f"{line}\n{below}")
    assert (blocks == [below]) is heading


def test_a_name_of_several_words_before_its_verb_is_the_subject_a_later_it_stands_for():
    text = ("The Quell Valley Foraging Code governs the picking of wild fungi in the reserve. "
            "It is administered by the Conservancy Trust.")
    assert subject_of(text.split(". ")[0] + ".") == "The Quell Valley Foraging Code"
    assert chunk_subject(text, "It is administered by the Conservancy Trust.", "Foraging") == \
        "The Quell Valley Foraging Code"
    assert subject_of("The number of visitors to the park rose in June.") != "The number of"


def test_a_name_of_the_claim_is_no_alternative_to_another_of_its_names():
    claim = "The procedure covers every collection received at the Marrowfield laboratory in Carrow Fenn, up to Vault B."
    pool = ["Vault B is held at minus 20 °C.", "Duplicates are kept in Hambury by a partner.", claim]
    assert alternative_value("Carrow Fenn", "name", pool, "Seed bank", salt="s", claim=claim) == "Hambury"
    assert alternative_value("Carrow Fenn", "name", pool[:1] + pool[2:], "Seed bank", salt="s", claim=claim) is None


@pytest.mark.parametrize("reply, gives_up", [
    # the claim said again with another of its own names in one name's place: a changed claim
    ("The procedure covers every collection received at the Vault B laboratory in Carrow Fenn, up to Vault B.", True),
    ("Yes. The procedure covers every collection received at the Marrowfield laboratory in Carrow Fenn, up to Vault B.",
     False),
])
def test_a_reply_that_puts_another_name_of_the_claim_in_a_names_place_gives_it_up(reply, gives_up):
    claim = "The procedure covers every collection received at the Marrowfield laboratory in Carrow Fenn, up to Vault B."
    assert abandons([claim], reply) is gives_up


def test_opening_question_of_a_record_names_it():
    docs = fields_text(RULES["rules"][0])
    facets = offline.facets_of(docs, [(1, 0, len(docs))], "Street trading", offline.words("Street trading rules"),
                               lambda s, c: True)
    q = offline.opening_question(facets[0], "Street trading", offline.words("Street trading rules"), random.Random(0))
    assert "pitch licence" in q.question.lower()


def test_a_follow_up_keeps_a_names_capital_and_a_bound_in_no_more_than():
    from engine.interview.offline_questions import _definition, wh_question

    assert _definition("Vault B is the long-term seed store held at minus 20 °C.", False, "Seed bank") == "What is Vault B?"
    assert _definition("Drying room D2 is the controlled room held at 15 °C.", False, "Seed bank") == \
        "What is drying room D2?"
    q, value = wh_question("Spread the seeds in mesh trays to a depth of no more than 1 cm in drying room D2.")
    assert q == "Spread the seeds in mesh trays to a depth of no more than how many cm in drying room D2?"
    assert wh_question("A stall may block more than 2 metres of the pavement.")[0] == \
        "A stall may block how many metres of the pavement?"


def test_a_column_named_with_its_unit_says_the_unit_after_the_number():
    text = fields_text({"route": "Harrowfield to Skellig", "operator": "Northwind Aerial Charter Ltd",
                        "distance_km": "186", "fare_gbp": "240", "flight_time_min": "55", "share_pct": "12",
                        "notes": "This is a cargo-only flight with no passenger seats."})
    assert ("The distance of Harrowfield to Skellig is 186 km. The fare of Harrowfield to Skellig is 240 GBP. "
            "The flight time of Harrowfield to Skellig is 55 min. The share of Harrowfield to Skellig is 12%.") in text
    # a company's "Ltd." ends its sentence before one that opens with "The"
    assert chunk_sentences("The operator is Northwind Aerial Charter Ltd. The distance is 186 km.") == [
        "The operator is Northwind Aerial Charter Ltd.", "The distance is 186 km."]
    assert chunk_sentences("It was bought by Smith & Co. Ltd. Bristol in 1990.") == ["It was bought by Smith & Co. Ltd. Bristol in 1990."]
    # a record's note that says "This" is about the record, not about the topic
    facets = offline.facets_of(text, [(1, 0, len(text))], "Supply flights", offline.words("Supply flights"),
                               lambda s, c: True)
    said = [k.text for f in facets for k in f.facts]
    assert "Harrowfield to Skellig is a cargo-only flight with no passenger seats." in said


def test_a_cross_reference_is_no_blank_and_an_example_in_brackets_is_not_asked():
    from engine.interview.offline_questions import wh_question
    from engine.interview.reference import sentences_of

    target = offline._cloze_target("A person who keeps a hive in breach of Section 3 or Section 4 commits an offence.", set())
    assert target not in ("Section", "3", "4")
    asked = wh_question("A keeper who has completed an approved course (e.g. the Tallowmere Basic Certificate) pays a "
                        "reduced fee of £20.")
    assert asked is None or "(e.g. what)" not in asked[0]
    # the reference target's sentences do not end at "i.e." or "e.g."
    assert sentences_of("A distance is the shortest horizontal distance, i.e. measured along the ground. It is in "
                        "metres.") == ["A distance is the shortest horizontal distance, i.e. measured along the ground.",
                                       "It is in metres."]


def test_a_table_row_says_its_units_and_a_memo_header_is_no_fact():
    table = ("| Weight (kg) | Dose (mg) | Interval (hours) |\n|---|---|---|\n| 5.1–7.5 | 15 | 24 |\n"
             "| Over 60 | 180 | 24 |\n")
    assert text_blocks(table) == ["Weight 5.1–7.5 kg – dose 15 mg, interval 24 hours.",
                                  "Over 60 – dose 180 mg, interval 24 hours."]
    memo = ("To: All research staff, Buildings C and D\nFrom: Dr Priya Halvorsen, Chemical Safety Officer\n"
            "Date: 14 August 2023\nSubject: Revised Storage Rules for Flammable Solvents\n\nColleagues,\n\n"
            "The rules are as follows:\n\n* No more than 10 litres may be kept on a bench.\n")
    assert chunk_sentences(memo) == ["Colleagues,", "The rules are as follows:",
                                     "No more than 10 litres may be kept on a bench."]
    assert not plain_heading("From: Dr Priya Halvorsen, Chemical Safety Officer", "Date: 14 August 2023")
    assert not plain_heading("The rules are as follows:", "")


def test_he_and_she_stand_for_a_person_it_for_no_plural_and_the_topic_only_where_the_text_names_it():
    text = ("The Orsk Valley Seed Library was founded in 1904 by Maren Oulette. She had spent the winter copying "
            "notes. The years 1911-1914 were the busiest. It had thick walls.")
    assert chunk_subject(text, "She had spent the winter copying notes.", "Orsk Valley Seed Library history") == ""
    assert chunk_subject(text, "It had thick walls.", "") != "The years 1911-1914"
    assert chunk_subject("Her father, Richard Anning, was a carpenter. He died in 1810.", "He died in 1810.",
                         "Mary Anning") == "Her father, Richard Anning"
    assert chunk_subject("Tobias Venning was a drover. He walked the tracks.", "He walked the tracks.",
                         "Seed Library history") == "Tobias Venning"
    # the bench's generator falls back to the topic's name only where the document uses it
    doc = "Founding\n\nThe library opened in 1904 and lent seed to farmers. It was the first in the county to do so."
    facets = offline.facets_of(doc, [(1, 0, len(doc))], "Seed library history", offline.words("Seed library history"),
                               lambda s, c: True)
    said = " ".join(k.text for f in facets for k in f.facts)
    assert "Seed library history was" not in said


def test_an_abbreviation_before_a_lower_case_word_ends_no_claim():
    from engine.interview.offline_questions import claims_of

    assert claims_of("The excess is returned to the cabinet by 6 p.m. the same day.") == [
        "The excess is returned to the cabinet by 6 p.m. the same day."]
