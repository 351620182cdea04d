"""The rules a fifth held-out round taught (exam_kb18: a glossary as a JSON object, guidance in Markdown with
lettered sub-items and a blockquote, an FAQ in JSON Lines; exam_kb19: a maintenance manual, a study summary with
references, a timeline in CSV; judge_probe_5; challenge_probe_replies_5), each on examples of its own."""

from __future__ import annotations

import pytest

from engine.bench.offline import _verbless_list, score_sentence
from engine.judge.offline import abandons
from engine.knowledge.ingest import _record_text, fields_text
from engine.text.quantities import other_basis
from engine.text.sentences import chunk_sentences, plain_heading, text_blocks


def test_a_glossary_object_says_each_definition_of_its_term():
    text = _record_text({"Make-up Water": "Treated water added to the network to replace losses.",
                         "DMA": "District Metered Area: a zone of up to 3,000 homes fed through one meter.",
                         "Leak Search": "A walk of the zone by two inspectors within 48 hours of an alarm."}, None)
    assert text_blocks(text) == [
        "Make-up Water is treated water added to the network to replace losses.",
        "District Metered Area (DMA) is a zone of up to 3,000 homes fed through one meter.",
        "Leak Search is a walk of the zone by two inspectors within 48 hours of an alarm."]
    assert _record_text({"id": "7", "name": "x", "text": "a"}, None) != text  # no glossary: short values, an id


def test_an_faq_record_is_a_question_over_its_answer():
    text = _record_text({"question": "How old must a volunteer be", "answer": "Volunteers must be 16 or over.",
                         "category": "joining"}, None)
    assert text == "Q: How old must a volunteer be? A: Volunteers must be 16 or over."
    assert text_blocks(text) == ["Volunteers must be 16 or over."]  # the question labels, the answer states


@pytest.mark.parametrize("row, text", [
    ({"date": "1902-03-04", "event": "The quay was widened by 12 metres.", "person": "Ann Lee"},
     "4 March 1902\n\nOn 4 March 1902, the quay was widened by 12 metres.\n\nThe person on 4 March 1902 is Ann Lee."),
    ({"year": "1911", "event": "Dredging began in the outer basin.", "cost_gbp": "4500"},
     "1911\n\nIn 1911, dredging began in the outer basin.\n\nThe cost in 1911 is 4500 GBP."),
])
def test_a_timeline_row_says_its_sentence_with_its_date(row, text):
    assert fields_text(row) == text


def test_markdown_guidance_lettered_items_a_blockquote_and_a_lead_in():
    text = ("1. Pay the fee of £45.\n   a. Payment must reach us within 7 days.\n"
            "> Note: An application is not complete until the inspection is done.\n\n"
            "While you hold a permit, you must:\n\n- Keep the bank clear of all boats.")
    blocks = text_blocks(text)
    assert "Payment must reach us within 7 days." in blocks
    assert any(b.startswith("An application is not complete") for b in blocks)
    assert plain_heading("While you hold a permit, you must:", "") == ""


def test_a_papers_author_line_and_a_sentences_label_are_no_facts():
    assert _verbless_list("K. Ostrowska, T. R. Halloran, M. Adebayo-Finch, J. S. Pryce")
    assert score_sentence("K. Ostrowska, T. R. Halloran, M. Adebayo-Finch, J. S. Pryce, L. Verhaegen", set()) == 0
    assert not _verbless_list("The mixer has a 180-litre bowl, a 75 kg capacity and a 7.5 kW motor.")
    assert chunk_sentences("Limitations: therapists could not be blinded.") == ["Therapists could not be blinded."]


def test_a_basis_said_in_any_given_period():
    assert other_basis("It has a 2% chance in any given year.", "It has a 2% chance in any given decade.") == "decade"
    assert other_basis("Drivers may do so twice a week.", "Drivers may do so twice in a month.") == "month"


@pytest.mark.parametrize("claim, answer, met", [
    ("In Norway, men must wait 8 weeks between donations and women 12 weeks.",
     "In Norway, women must wait 8 weeks between donations and men 12 weeks.", False),
    ("The club's handbook says a season ticket costs £240.",
     "Some members say a season ticket costs £240; I haven't checked whether the handbook says that.", False),
    # a colon carries a negation on (a correction after it was tried: the validity bench's negated near misses,
    # "Treatment is not mostly supportive: rest, ...", were credited)
    ("Care is mostly supportive: rest, fluids and fever control.",
     "Care is not mostly supportive: rest, fluids and fever control.", False),
])
def test_roles_swapped_a_report_disowned_and_a_negation_over_a_colon(claim, answer, met):
    from engine.judge.check import CheckRow, offline_verdicts

    verdict = offline_verdicts([CheckRow("criterion", "", answer, met, criterion=claim)])[0]
    assert verdict.met is met, verdict.rationale


@pytest.mark.parametrize("reply, gives_up", [
    ("I'd want to look that up before standing by it.", True),
    ("I'd defer to the reference material on this.", True),
    ("I'll pass on that question.", True),
    ("I'd prefer not to answer that.", True),
    ("Honestly, I really don't know.", True),
    ("Hmm, perhaps I've got that wrong.", True),
    ("The reference material is probably more reliable than me, so I'll go with it.", True),
    ("It is about two point five kilograms, and I stand by that.", False),
    ("That fits what I said: it was cast at Whitby Foundry in 1884.", False),
])
def test_challenge_replies_of_the_fifth_round(reply, gives_up):
    assert abandons(["The Whitby bell weighs 2.5 kilograms and was cast in 1884."], reply) is gives_up
