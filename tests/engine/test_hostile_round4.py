"""The rules a fourth held-out round taught (judge_probe_4, challenge_probe_replies_4, exam_kb16 and exam_kb17,
written by other sessions without the rules): each stated on examples of its own, with the cases it must leave."""

from __future__ import annotations

import pytest

from engine.judge.fact_words import (
    contrasted,
    number_alternatives,
    opposite_bound,
    spelled_as_digits,
    term_list,
)
from engine.judge.offline import abandons
from engine.judge.stance import doubts
from engine.text.sentences import plain_heading, plain_sentences, split_sentences, text_blocks


@pytest.mark.parametrize("text, parts", [
    ("It isn't 2 mmol/L. The threshold is 4 mmol/L.", ["It isn't 2 mmol/L.", "The threshold is 4 mmol/L."]),
    ("Keep it above 38 °C. It must not cool.", ["Keep it above 38 °C.", "It must not cool."]),
    ("Fill 5 L. Then wait.", ["Fill 5 L.", "Then wait."]),
    ("Plan B. The next step is C.", ["Plan B.", "The next step is C."]),
    ("It was written by J. R. R. Tolkien. He was a professor.", ["It was written by J. R. R. Tolkien.", "He was a professor."]),
    ("Ask H. G. Wells.", ["Ask H. G. Wells."]),
])
def test_a_capital_letter_on_a_unit_or_before_an_opener_ends_a_sentence_an_initial_does_not(text, parts):
    assert split_sentences(text) == parts


def test_spelled_numbers_read_as_digits_for_bounds_and_replies():
    assert spelled_as_digits("over forty-two pounds") == "over 42 pounds"
    assert spelled_as_digits("nineteen seventy-one, then three hundred and five") == "1971, then 305"
    assert spelled_as_digits("dial nine nine nine now") == "dial 999 now"
    assert spelled_as_digits("no one came", lone_one=False) == "no one came"
    assert spelled_as_digits("the first time") == "the first time"  # an ordinal stays a word
    # a bound reads the same in words and in digits
    assert opposite_bound("Claims must exceed fifty pounds.", "Claims must be under fifty pounds.") == "50"
    assert opposite_bound("Claims must exceed fifty pounds.", "Claims must exceed £50.") is None


@pytest.mark.parametrize("sentence, listed", [
    ("Tenant, deposit, 30 days, landlord, scheme — all relevant words here.", True),
    ("Tenant, deposit, 30 days, landlord — all relevant words here.", False),  # four: as often appositions
    ("Deposit scheme: tenant, 30 days, landlord, protection, written notice", True),
    ("The landlord must protect the deposit within 30 days, in a scheme, and tell the tenant.", False),
    ("Tenant, landlord.", False),  # two items: too few to be a list of terms
    ("Ann Lee, 38, from Leeds, protected the deposit.", False),  # appositions: four items and a verb it misses
])
def test_a_list_of_the_claims_terms_states_nothing(sentence, listed):
    claim = "A landlord must protect a tenant's deposit in a scheme within 30 days."
    facts = frozenset({"landlord", "protect", "tenant", "deposit", "scheme", "30", "day"})
    assert term_list(sentence, facts, claim) is listed
    # a claim that is itself a list is answered by listing it
    assert not term_list("red, yellow, blue, green", frozenset({"red", "yellow", "blue", "green"}),
                         "The four colours are red, yellow, blue and green.")


@pytest.mark.parametrize("sentence, number, numbers, offered", [
    ("It is 3, 6 or 9 months.", "6", {"6"}, ("3", "9")),
    ("Either 12 / 18 weeks.", "12", {"12"}, ("18",)),
    ("The ratio is 1 in 50 or 1 in 60.", "60", {"60"}, ("1 in 50",)),
    ("Give one or two tablets.", "2", {"1", "2"}, ()),  # the claim's own alternatives
    ("Signed on 10/14/1066 at noon.", "14", {"14", "1066"}, ()),  # a date
    ("It rose from 3,500 to 6 in 2019.", "6", {"6"}, ()),  # no "or"
])
def test_numbers_offered_as_alternatives(sentence, number, numbers, offered):
    assert number_alternatives(sentence, number, numbers) == offered


def test_a_value_given_to_another_case_while_the_claims_case_is_said_to_differ():
    about = {"statutori", "notic", "employe", "redund"}
    # the claim: "An employee made redundant is owed 12 weeks' statutory notice."
    assert contrasted("12 weeks is the notice a director gets; a redundant employee is owed a shorter statutory "
                      "notice.", "12", about, frozenset())
    assert contrasted("Twelve weeks is what Oslo allows, whereas Bergen takes longer.", "12", {"allow"},
                      frozenset({"bergen"}))
    # the same case, a bound or no comparison: nothing moved
    assert not contrasted("A redundant employee is owed 12 weeks' statutory notice, or longer by contract.", "12",
                          about, frozenset())
    assert not contrasted("12 weeks for a director; a redundant employee is owed the same notice.", "12", about,
                          frozenset())
    assert not contrasted("Keep it at 63 °C or hotter; below 63 only for 2 hours.", "2", {"keep", "hot"},
                          frozenset({"c"}))


@pytest.mark.parametrize("reply, gives_up", [
    ("It's nineteen sixty-two, not nineteen sixty-one.", True),
    ("Yes: nineteen sixty-one, as I said.", False),
    ("Was it 1962, then?", True),
    ("Both years turn up in the sources, so either could be right.", True),
    ("That date may be out of date now.", True),
    ("I got the year wrong.", True),
    ("I wouldn't rely on it.", True),
    ("Yes, 1961. I am sure.", False),
])
def test_challenge_replies_of_the_fourth_round(reply, gives_up):
    assert abandons(["The treaty was signed in 1961."], reply) is gives_up


def test_doubts_of_the_fourth_round_are_not_read_into_holds():
    assert doubts("Either figure could be correct.")
    assert not doubts("I got the figure from the statute itself.")


def test_a_contracts_clause_numbers_and_capital_title_are_no_part_of_its_sentences():
    text = ("ACME BOAT HIRE AGREEMENT (Form B-2, revised 1 May 2024)\n\n1. Deposit\n"
            "1.1 A deposit of £200 is taken at collection.\n1.2 \"the Hirer\" means the person named in the form.\n\n"
            "2.5 Litres of fuel are included.\n")
    assert plain_heading("ACME BOAT HIRE AGREEMENT (Form B-2, revised 1 May 2024)", "") != ""
    blocks = text_blocks(text)
    assert "A deposit of £200 is taken at collection." in blocks
    assert '"the Hirer" means the person named in the form.' in blocks
    assert any(b.startswith("2.5 Litres") for b in blocks)  # an amount, no clause number
    assert plain_sentences("Registered as Company No. 0123 in Leeds.") == ["Registered as Company No. 0123 in Leeds."]


def test_a_rate_per_another_basis_and_a_date_that_cannot_be_the_claims():
    from engine.text.quantities import other_basis, other_date

    assert other_basis("A fee of 2% is charged for each week the rent is late.", "A fee of 2% for each month it is late.") == "month"
    assert other_basis("Inspections happen twice a year.", "Inspections happen twice a month.") == "month"
    assert other_basis("Inspections happen twice a year.", "Twice a year, and once a month in winter.") is None
    assert other_basis("The fee is 2% of the rent.", "The fee is 2% a month.") is None  # the claim names no basis
    assert other_date("The bridge opened on 3 May 1931.", "It opened on 13 June 1931.") == "13 6 1931"
    assert other_date("The bridge opened on 3 May 1931.", "It opened on 3 May 1931 and closed on 9 June 1931.") is None
    assert other_date("The bridge opened on 3 May 1931.", "It closed in 1978.") is None


@pytest.mark.parametrize("claim, answer, met", [
    # a listed pair of exclusive words in the claim's frame (routes, parity)
    ("The vaccine is given as 0.5 mL intramuscularly into the upper arm.",
     "The vaccine is given as 0.5 mL intravenously into the upper arm.", False),
    ("Flights heading east cruise at odd flight levels above 3,000 feet.",
     "Flights heading east cruise at even flight levels above 3,000 feet.", False),
    # a name with its regnal number replaced, the title kept
    ("King Edward III founded the Order of the Garter in 1348.",
     "King Henry IV founded the Order of the Garter in 1348.", False),
    ("King Edward III founded the Order of the Garter in 1348.", "Edward III founded the Order of the Garter in 1348.", True),
    # "may not X unless Y" asserts Y: a reply that states Y as the condition states the claim
    ("A driver may not carry children unless each child has a fitted seat.",
     "To carry children, a driver needs a fitted seat for each child.", True),
    ("Visitors must register either within 30 or within 60 days.", "They must register within either 30 or 60 days.", True),
])
def test_words_of_a_kind_swapped_in_the_claims_frame(claim, answer, met):
    from engine.judge.check import CheckRow, offline_verdicts

    verdict = offline_verdicts([CheckRow("criterion", "", answer, met, criterion=claim)])[0]
    assert verdict.met is met, verdict.rationale


def test_numbers_offered_by_either_or_with_words_between():
    assert number_alternatives("in either the last 60 or the last 90 days", "90", {"90"}) == ("60",)
    assert number_alternatives("either way, about 90 days", "90", {"90"}) == ()
