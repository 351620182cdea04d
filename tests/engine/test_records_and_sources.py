"""A knowledge base of records (a CSV table, flat JSON objects) is examined like prose, and a challenge's
source is not the candidate's claim (the examination round after exam_kb11)."""

from __future__ import annotations

import json
import random

import pytest

from engine.bench import offline
from engine.judge.offline import abandons
from engine.knowledge.ingest import fields_text, read_sources
from engine.text.sentences import claimed_quotes, without_sourced_quotes

FORMULARY = """drug,class,adult_dose,max_daily_dose,interval,notes
Corvalenne,beta blocker,25 mg orally,100 mg,every 12 hours,Withhold the dose if the resting heart rate is below 55 beats per minute.
Tramidex,opioid analgesic,50 mg orally,400 mg,every 6 hours,"Reduce the maximum daily dose to 200 mg in patients over 75 years of age."
"""


def test_a_row_of_short_values_reads_as_sentences_naming_its_columns_and_its_key(tmp_path):
    f = tmp_path / "formulary.csv"
    f.write_text(FORMULARY, encoding="utf-8")
    docs, report = read_sources([f])
    assert not report.bad_files and not report.bad_records
    assert [d.title for d in docs] == ["Corvalenne", "Tramidex"]  # the first column is the row's key
    assert docs[0].text == (
        "Corvalenne\n\nThe class of Corvalenne is beta blocker. The adult dose of Corvalenne is 25 mg orally. "
        "The max daily dose of Corvalenne is 100 mg. The interval of Corvalenne is every 12 hours.\n\n"
        "Withhold the dose if the resting heart rate is below 55 beats per minute.")


@pytest.mark.parametrize("record, text", [
    ({"name": "Neon", "symbol": "Ne", "atomic_number": "10", "Side Effects": "none", "rank": 4},
     "Neon\n\nThe symbol of Neon is Ne. The atomic number of Neon is 10. The side effects of Neon are none."),
    ({"id": 7, "title": "Helium", "text": "Helium is a noble gas discovered in the solar spectrum."}, None),  # prose only
    ({"title": "Helium", "facts": ["light", "inert"]}, "Helium\n\nThe facts of Helium are light and inert."),
    ({"title": "Helium", "facts": [["a"], ["b"]]}, None),  # nested two levels deep: read as before
    ({"title": "Helium", "uses": {"balloons": {"share": 1}}}, None),
    ({"question": "Which gas is the lightest of all the elements known?", "answer": "Hydrogen"}, None),  # no key
    ({"Drug": "Kelvodine", "QTc limit": "480 ms", "vegan": True}, "Kelvodine\n\nThe QTc limit of Kelvodine is 480 ms."),
])
def test_fields_text(record, text):
    assert fields_text(record) == text


def test_a_flat_json_record_is_read_as_its_fields(tmp_path):
    f = tmp_path / "elements.json"
    f.write_text(json.dumps([{"name": "Argon", "symbol": "Ar", "discovered": "1894"}]), encoding="utf-8")
    docs, _ = read_sources([f])
    assert docs[0].title == "Argon" and "The symbol of Argon is Ar." in docs[0].text


def test_a_tables_rows_become_items_on_a_topic_they_never_name(tmp_path):
    f = tmp_path / "formulary.csv"
    f.write_text(FORMULARY, encoding="utf-8")
    doc = read_sources([f])[0][0]
    topic, about = "Hospital formulary", "Adult doses, maximum daily doses and dosing intervals of medicines."
    others = {"Employee leave policy": "Annual leave, sick pay and parental leave."}
    ok, why = offline.on_topic("The class of Corvalenne is beta blocker.", doc.text, topic, others, doc.title, about)
    assert ok and "description" in why
    # without a description, or when another topic's shares as many words, it stays off the topic
    assert not offline.on_topic("The class of Corvalenne is beta blocker.", doc.text, topic, others, doc.title, "")[0]
    assert not offline.on_topic("The class of Corvalenne is beta blocker.", doc.text, topic,
                                {"Dosing rules": "adult daily doses"}, doc.title, "adult daily doses")[0]
    words = offline.words(f"{topic} {about}")
    facets = offline.facets_of(doc.text, [(1, 0, len(doc.text))], topic, words,
                               lambda s, c: offline.on_topic(s, c, topic, others, doc.title, about)[0])
    assert len(facets) == 1 and facets[0].heading == "Corvalenne" and len(facets[0].facts) >= 3
    q = offline.opening_question(facets[0], topic, words, random.Random(0)).core
    assert "Corvalenne" in q


@pytest.mark.parametrize("question, claimed, left", [
    ('The reference material says: "The max daily dose of X is 100 mg." Do you stand by your claim that '
     '"The adult dose of X is 25 mg."? Justify it, or correct it.', ("The adult dose of X is 25 mg.",),
     "The reference material says:   Do you stand by"),
    ('You said: "Paris is big." Are you sure?', ("Paris is big.",), 'You said: "Paris is big."'),
    ('According to the guideline, "X is 5". You said "X is 6".', ("X is 6",), "According to the guideline,  ."),
    ('I have read "it was 1811". You wrote "it was 1810".', ("it was 1810",), "I have read  ."),
    ("资料中写的是：“甲是乙。” 你坚持“丙是丁”这一说法吗？", ("丙是丁",), "资料中写的是：  你坚持"),
])
def test_a_sources_words_are_not_the_candidates_claim(question, claimed, left):
    assert claimed_quotes(question) == claimed
    assert without_sourced_quotes(question).startswith(left)


def test_a_reference_challenge_held_is_kept():
    # what the adaptive protocol sends the stance rules: the contested claim and the candidate's quotation only
    q = ('The reference material says: "The max daily dose of Corvalenne is 100 mg." Do you stand by your claim '
         'that "The adult dose of Corvalenne is 25 mg orally."? Justify it, or correct it.')
    claims = ["The adult dose of Corvalenne is 25 mg orally.", *claimed_quotes(q)]
    assert not abandons(claims, "Yes, I am sure. The adult dose of Corvalenne is 25 mg orally.")
    assert abandons(claims, "You are right, the adult dose of Corvalenne is 100 mg.")


CLAIM = ("Absences of up to 7 calendar days may be self-certified, but a fit note from a doctor is required "
         "from the 8th calendar day onwards.")


@pytest.mark.parametrize("reply, gives_up", [
    (f"You may have read 6, but that is wrong. {CLAIM}", False),  # the claim's own "but" cuts nothing
    (f"I maintain my answer: {CLAIM.lower()}", False),
    (f"{CLAIM} But I might be wrong.", True),  # a contrast after the claim still decides
    ("You're right, it is 6. Absences of up to 6 calendar days may be self-certified, but a fit note from a "
     "doctor is required from the 7th calendar day onwards.", True),
    ("Absences of up to 7 calendar days may be self-certified, but a fit note is needed from day 9.", True),
])
def test_a_contrast_inside_the_claim_said_again_is_the_claims_own(reply, gives_up):
    assert abandons([CLAIM], reply) is gives_up


@pytest.mark.parametrize("reply, gives_up", [
    ("The Badge must be fully submerged before it is switched on.", True),  # another name, every other word kept
    ("The Aquaflow P300 must be fully submerged before it is switched on, as the Manual says.", False),
    ("Yes. The pump must be fully submerged before it is switched on.", False),  # no name in the claim's place
])
def test_a_name_that_is_most_of_a_short_claim_swapped(reply, gives_up):
    assert abandons(["The Aquaflow P300 must be fully submerged before it is switched on."], reply) is gives_up


@pytest.mark.parametrize("reply, gives_up", [
    ("I'm fairly sure it was 1215, when King John sealed it at Runnymede.", False),  # names added, value held
    ("I understand why you'd question it, but the allowance has been £20,000 a year since April 2017.", False),
])
def test_names_added_beside_a_held_value_swap_nothing(reply, gives_up):
    claim = "Magna Carta was sealed in 1215." if "1215" in reply else "The annual ISA allowance in the UK is £20,000."
    assert abandons([claim], reply) is gives_up


def test_the_claims_own_list_said_back_to_a_cloze_offers_no_alternative():
    from engine.judge.check import CheckRow, offline_verdicts

    crit = ("The Environmental Health Office may close a business on the spot if inspectors find evidence of "
            "rats, mice or cockroaches.")
    q = f'Complete this statement: "{crit[:-13]} ____."'
    rows = [CheckRow("criterion", q, crit, True, criterion=crit),
            CheckRow("criterion", q, "Cockroaches.", True, criterion=crit),
            CheckRow("criterion", q, "Rats, cockroaches or flies.", False, criterion=crit),  # flies offered beside it
            CheckRow("criterion", q, crit.replace("cockroaches", "flies"), False, criterion=crit)]
    verdicts = offline_verdicts(rows)
    assert [v.met for v in verdicts] == [r.human for r in rows]
    assert "offered beside other candidates (flies)" in verdicts[2].rationale


@pytest.mark.parametrize("heading, read", [
    ("Load Limits and Signage", "load limits and signage"),
    ("Procedure and Sign-off", "procedure and sign-off"),
    ("Role of the Bridge Manager", "role of the Bridge Manager"),  # a name the passage capitalises stays
    ("QTc Limits and Monitoring", "QTc limits and monitoring"),  # an abbreviation keeps its capitals
    ("Annual leave entitlement", "Annual leave entitlement"),  # not Title Case: as it is
])
def test_a_title_case_heading_is_asked_in_the_words_of_a_sentence(heading, read):
    assert offline.heading_case(heading, "The Bridge Manager countersigns it. The QTc is measured.") == read


def test_an_opening_question_about_a_title_case_heading():
    fact = offline.KeySentence("Most small bridges carry the full 44-tonne limit for heavy goods vehicles.", 1, 2.0, False)
    facet = offline.Facet(0, "", (fact,), "Load Limits and Signage")
    q = offline.opening_question(facet, "Small bridge inspection", offline.words("Small bridge inspection"),
                                 random.Random(0)).core
    assert "load limits and signage" in q


@pytest.mark.parametrize("lead, subject", [
    ("The guide applies to all council-owned road bridges in the county with a span of up to 15 metres.", "The guide"),
    ("Each inspector records the crack widths on the defect sheet.", "Each inspector"),
    ("The small bridges in the county carry the full limit.", "The small bridges in the county"),
])
def test_a_compound_in_ed_is_no_verb_and_a_present_verb_in_s_ends_the_subject(lead, subject):
    assert offline._subject(lead) == subject


def test_a_lead_in_to_a_list_is_no_fact():
    assert offline.score_sentence("For every general inspection, the inspector follows these steps:", set()) == 0.0
    assert offline.score_sentence("For every general inspection, the inspector follows six steps.", set()) > 0.0


NESTED = """Three kinds of inspection are used.

- **General inspection**
  - Carried out every 24 months by a Bridge Inspector.
  - A visual check from ground level.
- **Special inspection**
  - Ordered by the Bridge Manager, who decides its scope.
- Every report is filed within 10 working days of the visit.
"""


def test_an_item_nested_under_a_bare_label_is_read_under_it():
    from engine.text.sentences import chunk_sentences

    said = chunk_sentences(NESTED)
    assert "General inspection: carried out every 24 months by a Bridge Inspector." in said
    assert "General inspection: a visual check from ground level." in said
    assert "Special inspection: ordered by the Bridge Manager, who decides its scope." in said
    assert "Every report is filed within 10 working days of the visit." in said  # not nested: as it is
    facets = offline.facets_of(NESTED, [(1, 0, len(NESTED))], "Bridge inspection", offline.words("bridge inspection"),
                               lambda s, c: True)
    facts = [k.text for f in facets for k in f.facts]
    assert "General inspection: carried out every 24 months by a Bridge Inspector." in facts


@pytest.mark.parametrize("sentence, question", [
    ("The max daily dose of Glucorel is 2000 mg.", "What is the max daily dose of Glucorel?"),
    ("The capital of France is Paris.", "What is the capital of France?"),
    ("The class of Corvalenne is beta blocker.", "What is the class of Corvalenne?"),
])
def test_an_attribute_of_a_thing_is_asked_as_a_question(sentence, question):
    from engine.interview.offline_questions import follow_up_candidates, wh_question

    assert wh_question(sentence)[0] == question
    assert follow_up_candidates(sentence, "Hospital formulary")[0][1] == question


@pytest.mark.parametrize("sentence", ["Most of the bridges in the county are small.",
                                      "The treaty of Versailles was signed on 28 June 1919."])
def test_a_part_of_a_whole_or_a_passive_is_no_attribute(sentence):
    from engine.interview.offline_questions import wh_question

    made = wh_question(sentence)
    assert made is None or not made[0].startswith("What was the treaty")


def test_a_heading_word_is_a_name_only_with_its_neighbours():
    context = "Samples are recorded in the Water Log by the Plant Operator. They reopen after two tests."
    assert offline.heading_case("Pool Types and Water Quality", context) == "pool types and water quality"
    assert offline.heading_case("Duties of the Plant Operator", context) == "duties of the Plant Operator"


def test_a_value_opened_by_a_common_word_is_lowered_in_its_sentence():
    assert fields_text({"route": "Route 22", "frequency": "Every 20 minutes", "operator": "Greyfold Coaches"}) == (
        "Route 22\n\nThe frequency of Route 22 is every 20 minutes. The operator of Route 22 is Greyfold Coaches.")


def test_a_demonstrative_subject_is_what_a_later_it_stands_for():
    from engine.text.subjects import chunk_subject, subject_of

    text = "This manual applies to the Brannock Vale pool. It was last revised in March."
    assert chunk_subject(text, "It was last revised in March.", "Public pool safety") == "The manual"
    assert subject_of("The guide applies to all road bridges.") == "The guide"
    assert subject_of("The small bridges in the county carry the full limit.") == "The small bridges in the county"


def test_a_catalogue_record_reads_its_measures_its_lists_and_its_subjectless_sentences_of_its_key():
    """A museum catalogue's record (exam_kb17's kind): its dimensions object says each measure with the unit its
    field names, a list of exhibitions one object after another, a long value without a stop is a value, and a
    sentence that opens with a participle ("Bequeathed by ...") is said of the record's key."""
    record = {"accession_number": "HM.1987.114", "title": "Longcase clock", "maker": "Josiah Pennock, Ludlow",
              "materials": "Oak case with mahogany crossbanding; painted iron dial; brass eight-day movement",
              "dimensions": {"height_cm": 221.0, "width_cm": 48.5},
              "acquired": "Bequeathed by Miss Edith Carrow of Bromfield in March 1987.",
              "exhibitions": [{"venue": "Ludlow Assembly Rooms", "year": 2008}, {"venue": "Hereford Shire Hall"}]}
    assert fields_text(record) == (
        "Longcase clock\n\nThe dimensions of Longcase clock are height 221 cm, width 48.5 cm.\n\n"
        "The exhibitions of Longcase clock are venue Ludlow Assembly Rooms, year 2008; venue Hereford Shire Hall."
        "\n\nThe accession number of Longcase clock is HM.1987.114. The maker of Longcase clock is Josiah Pennock, "
        "Ludlow. The materials of Longcase clock are Oak case with mahogany crossbanding; painted iron dial; brass "
        "eight-day movement.\n\nLongcase clock was bequeathed by Miss Edith Carrow of Bromfield in March 1987.")
