"""The reading rules an eighth held-out round taught (a trial protocol in Markdown with bold-labelled header lines,
a bold subject in a bullet and a table of counts; a tariff in JSON with metadata objects beside its records,
integral floats and prices by period; an operations manual in JSON Lines with lists of threshold objects), each on
examples of its own, not the round's documents."""

from __future__ import annotations

import json
from pathlib import Path

from engine.knowledge.ingest import (
    ReadReport,
    _field_phrase,
    _plural,
    _unit_from_field,
    fields_text,
    read_file,
)
from engine.text.sentences import chunk_sentences, table_row, text_blocks

# -- A: a bold label a line ---------------------------------------------------------------------------------------

def test_lines_that_each_open_with_a_bold_label_are_a_sentence_each_with_their_label():
    text = ("# Field Study Charter\n\n**Funder:** Harrowby Wetlands Trust\n"
            "**Instrument:** TX-9 acoustic logger, battery powered (2 units)\n"
            "**Stage:** II, open, multi-site\n**Revision:** 2.3\n\nThe study runs for two seasons.\n")
    assert chunk_sentences(text) == [
        "Funder is Harrowby Wetlands Trust",
        "Instrument is TX-9 acoustic logger, battery powered (2 units)",
        "Stage is II, open, multi-site",
        "Revision is 2.3",
        "The study runs for two seasons."]


def test_several_bold_labels_on_one_line_are_fields_of_their_own():
    line = "**Ref:** QX-12  **Issue:** 5 · **Checked by:** Site Warden | **Next audit:** June 2027"
    assert text_blocks(line) == ["Ref is QX-12", "Issue is 5", "Checked by Site Warden", "Next audit is June 2027"]


def test_a_bold_label_over_a_sentence_or_a_list_of_names_is_still_dropped():
    # a sentence of its own (a verb, a stop) keeps no label, as before
    assert text_blocks("**Note:** Spare loggers are kept in the field hut.") == [
        "Spare loggers are kept in the field hut."]
    # an author line is a list of names, no statement: no "is" made up for it
    assert text_blocks("**Authors:** P. Quayle, R. Oduya, M. Lindqvist") == ["P. Quayle, R. Oduya, M. Lindqvist"]


# -- B: bold emphasis inside a sentence -----------------------------------------------------------------------

def test_bold_emphasis_that_opens_a_sentence_is_its_subject_not_a_label():
    text = ("- **The safe limit** is the largest load at which fewer than **10%** of beams crack.\n"
            "- **Warm-up** means five minutes of light cycling.\n"
            "1. **25%** when the order is placed.\n")
    assert text_blocks(text) == [
        "The safe limit is the largest load at which fewer than 10% of beams crack.",
        "Warm-up means five minutes of light cycling.",
        "25% when the order is placed."]
    # a bold label with a colon or a stop is a label as before
    assert text_blocks("- **Limit:** at most 3 visits a week.") == ["Limit is at most 3 visits a week."]
    assert text_blocks("**Eligibility.** A member can borrow six books.") == ["A member can borrow six books."]


# -- C, D: a table's rows -------------------------------------------------------------------------------------

def test_a_row_whose_first_cell_is_a_count_or_a_condition_says_its_column():
    table = ("| Faults found in week 2 | Response |\n|---|---|\n| 0 of 4 | Continue the trial |\n"
             "| ≥ 3 of 4 | Stop and review |\n\n| Severity | Response |\n|---|---|\n| mild | Observe |\n"
             "| Severe | Call the engineer |\n\n| Score | Response |\n|---|---|\n| 2 or more | Retest |\n")
    assert text_blocks(table) == [
        "Faults found in week 2: 0 of 4 – Continue the trial.",
        "Faults found in week 2: ≥ 3 of 4 – Stop and review.",
        "Severity mild – Observe.",
        "Severe – Call the engineer.",  # a capitalised first cell is a name, said as it is
        "Score 2 or more – Retest."]
    # a code in lower case with a capital inside is a name too
    assert table_row(["pH", "acidity"], ["measure", "meaning"]) == "pH – acidity."


def test_a_header_keeps_its_initialisms_and_codes_in_a_row():
    table = ("| Step | QZ-7 feed rate | Max RPM | Operator note |\n|---|---|---|---|\n"
             "| S1 | 40 g | 1200 | Check the seal |\n\n| Site | Dose (mL) | Route |\n|---|---|---|\n"
             "| Ward B | 5 | oral |\n")
    # ("Max" is only capitalised: lower case like any word)
    assert text_blocks(table) == ["S1 – QZ-7 feed rate 40 g, max RPM 1200, operator note Check the seal.",
                                  "Ward B – dose 5 mL, route oral."]


# -- E: a JSON object's metadata beside its records ------------------------------------------------------------

def test_metadata_objects_beside_the_records_say_each_value_with_its_field(tmp_path: Path):
    path = tmp_path / "hire.json"
    path.write_text(json.dumps({
        "metadata": {"title": "Boat Hire Rates 2026", "operator": "Lenmoor Lake Company",
                     "licence_order": "Lenmoor (Navigation) Byelaws 2019", "currency": "EUR",
                     "notes": ["Rates include insurance.", "Children under 5 travel free."]},
        "boats": [{"name": "Rowing boat", "seats": "4"}, {"name": "Electric launch", "seats": "8"}],
        "fees": {"late_return": {"value": 12.0, "unit": "EUR"}, "lost_key": {"value": 7.5, "unit": "EUR"},
                 "cancellation": "Full refund up to 48 hours before the booking; none after that time for any reason"},
    }), encoding="utf-8")
    docs = read_file(path, ReadReport())
    texts = [d.text for d in docs]
    assert [d.title for d in docs][:2] == ["Boat Hire Rates 2026", "Fees"]
    meta = texts[0]
    assert "The licence order of Boat Hire Rates 2026 is Lenmoor (Navigation) Byelaws 2019." in meta
    assert "The operator of Boat Hire Rates 2026 is Lenmoor Lake Company." in meta
    assert "Notes of Boat Hire Rates 2026: Children under 5 travel free." in meta
    fees = next(t for t in texts if "late return" in t)
    assert "The late return of Fees is 12 EUR." in fees and "The lost key of Fees is 7.50 EUR." in fees
    assert "Rowing boat\n\nThe seats of Rowing boat are 4." in texts


# -- F: numbers and fields as a person writes them -------------------------------------------------------------

def test_integral_floats_money_and_fields_that_end_with_a_period():
    record = {"name": "Season pass", "price_3_months": {"value": 120.0, "unit": "USD"},
              "price_1_year": {"value": 399.5, "unit": "USD per person"},
              "deposit": {"value": 2.25, "unit": "USD"}, "sizes": {"length_cm": 30.0, "width_cm": 12.5}}
    text = fields_text(record)
    assert "The price for 3 months of Season pass is 120 USD." in text
    assert "The price for 1 year of Season pass is 399.50 USD per person." in text
    assert "The deposit of Season pass is 2.25 USD." in text
    assert "The sizes of Season pass are length 30 cm, width 12.5 cm." in text
    assert ".0 " not in text
    assert _field_phrase("fee 6 months") == "fee for 6 months"
    assert _field_phrase("notice within 24 hours") == "notice within 24 hours"
    assert _plural("price for 12 months") is False and _plural("validity months") is True
    assert _plural("number of days") is False
    # a number in the field's name is no value's unit
    assert _unit_from_field("price 12 months", "50") == ("price 12 months", "50")


# -- G: a record's list of objects ----------------------------------------------------------------------------

def test_a_list_of_objects_is_said_object_by_object_with_all_its_fields(tmp_path: Path):
    path = tmp_path / "ferry.jsonl"
    lines = [
        {"document": "Kestrel Sound ferry handbook v4", "id": "2.1", "section": "Swell limits",
         "text": "Swell is read at the harbour buoy every hour.",
         "limits": [{"swell_metres": "0-1.5", "action": "Sail as timetabled"},
                    {"swell_metres": "1.6-2.5", "action": "Sail with vehicles lashed; close the car deck doors early"},
                    {"swell_metres": "2.6+", "action": "Cancel; notify passengers by text"}]},
        {"document": "Kestrel Sound ferry handbook v4", "id": "2.2", "section": "Wind",
         "text": "The master may cancel at any wind speed.",
         "bands": [{"wind_kmh": "60-79", "action": "Foot passengers only; no motorcycles or caravans on the deck"},
                   {"wind_kmh": "80 and above", "action": "No sailing"}]},
    ]
    path.write_text("\n".join(json.dumps(x) for x in lines) + "\n", encoding="utf-8")
    docs = read_file(path, ReadReport())
    assert docs[0].title == "Swell limits"
    said = [s for d in docs for s in chunk_sentences(d.text)]
    assert "Limits of Swell limits: swell 1.6-2.5 metres, action Sail with vehicles lashed; close the car deck doors early." \
        in said
    assert "Limits of Swell limits: swell 2.6+ metres, action Cancel; notify passengers by text." in said
    # a unit in the field's name ("kmh") said after the number, a note after the unit; a short key keeps the label
    assert "The bands of Wind: wind 60-79 km/h, action Foot passengers only; no motorcycles or caravans on the deck." \
        in said
    assert "The bands of Wind: wind 80 km/h and above, action No sailing." in said
    # the handbook's name, the same on every record, is where the record stands, not a fact of it
    assert not any("handbook" in s for s in said)
    assert "Swell is read at the harbour buoy every hour." in said


def test_a_short_list_of_objects_is_still_one_sentence_and_a_csv_document_column_is_data(tmp_path: Path):
    record = {"title": "Oak chest", "shows": [{"venue": "Town Hall", "year": 2011}, {"venue": "Guild House"}]}
    assert "The shows of Oak chest are venue Town Hall, year 2011; venue Guild House." in fields_text(record)
    path = tmp_path / "papers.csv"
    path.write_text("document,issued_by,valid_for\nPassport,Home Office,10 years\n", encoding="utf-8")
    text = read_file(path, ReadReport())[0].text
    assert text.startswith("Passport") and "The issued by of Passport is Home Office." in text
