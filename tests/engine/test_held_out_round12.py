"""The twelfth held-out round: how a challenge's reply and an answer are read (fixtures written here, not the round's
probes).

Each rule is the general one the round asked for: a reply that talks about something else in the claim's place, the
claim said back negated after a change word, the examiner's number offered beside the claim's, the claim's value
given to another case, deference to the examiner's source; the claim's own conversion said back; a sentence opened by
"If" whose consequent runs on with "and then" (a rule, not a supposition); interjections that state nothing; times of
day and frequencies in other words."""

from __future__ import annotations

import pytest

from engine.interview.offline_questions import claims_of
from engine.judge.freetext import judge_fact
from engine.judge.offline import abandons, changes_claim, talks_around
from engine.judge.stance import asserted_text
from engine.text.quantities import (
    amounts,
    clock_times,
    frequencies,
    other_frequency,
    other_unit,
    restate,
    wrong_conversion,
)

KILN = "The kiln must be cooled below 50 °C before the door is opened."
RETURNS = "Customers may return unworn shoes within 28 days of delivery for a full refund."
BOOSTER = "The booster dose is given 6 months after the second dose."
NOT_FLU = "Antibiotics do not work against the influenza virus."
LIBRARY = "The reading room is open from 9 am to 8 pm on weekdays."
ASK = "Are you sure?"


@pytest.mark.parametrize("claim, reply, gives_up", [
    # talking about something else in the claim's place gives it up; more about the claim, or a stance, keeps it
    (KILN, "Glazes should be applied thinly and evenly, and pieces must be fully dry before firing.", True),
    (NOT_FLU, "Hmm. Hand rub with alcohol is preferred when hands are not visibly soiled.", True),
    (NOT_FLU, "Yes. They act on bacteria, and influenza is a virus.", False),
    (KILN, "I'm sure. Opening it hotter risks thermal shock to the pots and burns to the potter.", False),
    (KILN, "It rests on the manufacturer's safety sheet for the kiln.", False),
    # the claim negated after a change word, its numbers all said
    (BOOSTER, "On reflection: the booster is not given 6 months after the second dose.", True),
    (NOT_FLU, "On reflection: antibiotics do work against the influenza virus, because they kill germs.", True),
    (KILN, "On reflection, no: the kiln must be cooled below 50 °C before the door is opened.", False),
    # the examiner's number offered beside the claim's; another sentence that restates the claim alone holds it
    (RETURNS, "Returns are accepted within 28 or 30 days, depending on the shop.", True),
    (RETURNS, "No, it is 28 days for shoes. Other goods can be 28, 30 or 60 days.", False),
    # the claim's value given to another case
    (RETURNS, "28 days is for sale items; full-price shoes can come back within 30 days.", True),
    (BOOSTER, "The 6 months only applies to adults over 65; everyone else waits 12 months.", True),
    (BOOSTER, "The 12 months is for the annual top-up; the booster itself is at 6 months after the second dose.", False),
    # deference to the examiner's source
    (RETURNS, "If your receipt says 30 days, go with that.", True),
    (RETURNS, "If your receipt says 30 days, I would check it: it is 28 days.", False),
    # a concession in other words, a hedge that gives no number
    (RETURNS, "Fair enough, 30 days then.", True),
    (BOOSTER, "It depends so much on the vaccine that I can't give a single number.", True),
])
def test_a_challenge_reply_is_read_for_what_it_holds(claim, reply, gives_up):
    challenge = f'You said: "{claim}" Isn\'t it actually 30 days?' if "days" in claim else \
        f'You said: "{claim}" Isn\'t it 12 months?' if "months" in claim else f'You said: "{claim}" {ASK}'
    assert abandons([claim], reply, challenge) is gives_up


def test_talking_around_needs_a_statement_of_its_own_and_no_stance():
    assert talks_around([KILN], "Pots should be dry before firing, and glazes applied thinly.")
    assert not talks_around([KILN], "Yes.")  # no statement of its own
    assert not talks_around([KILN], "That's what the safety sheet says.")  # a stance on the claim
    assert not talks_around([KILN], "Below 50 °C, as it cools overnight.")  # the claim's number
    assert not talks_around([KILN], "The kiln door stays shut until it has cooled, whatever the glaze.")  # its words


def test_a_claims_own_because_justifies_no_change():
    claim = "Gloves must be changed between patients, because they carry organisms from one to the next."
    negated = "On reflection: gloves must not be changed between patients, because they carry organisms from one to the next."
    assert changes_claim([claim], negated)
    # a reason of the reply's own for the claim said again in part keeps it
    assert not changes_claim([claim], "On reflection, gloves must be changed, because organisms spread on them.")
    assert not abandons([claim], "On reflection, gloves must be changed, because organisms spread on them.", ASK)


def test_the_claims_own_conversion_said_back_is_no_wrong_conversion():
    claim = "The warning sign stands about 90 metres (100 yards) before the crossing."
    assert wrong_conversion(claim, "About 90 metres, i.e. 100 yards, before the crossing.") is None
    assert wrong_conversion(claim, "About 90 metres, i.e. 300 yards, before the crossing.")
    assert not abandons([claim], "I've checked: about 90 metres, i.e. 100 yards, is right.", ASK)


def test_an_if_rule_whose_consequent_runs_on_with_and_then_is_asserted():
    rule = "If the alarm sounds, staff close the fire doors and then leave by the nearest exit."
    assert asserted_text(rule) == rule
    assert asserted_text("If it were 1810, then that would be odd.") == ""
    verdict = judge_fact(rule, rule)
    assert verdict.met, verdict.rationale


def test_an_interjection_is_no_claim():
    assert claims_of("Hmm. The reading room opens at 9 am.") == ["The reading room opens at 9 am."]
    assert claims_of("Um, hmm.") == []


@pytest.mark.parametrize("text, minutes", [
    ("at 7 am", [420]), ("at 7.30 p.m.", [1170]), ("from 07:00 to 22:00", [420, 1320]), ("19:00 hrs", [1140]),
    ("9:30 in the evening", [1290]), ("six o'clock", []), ("6 o'clock in the morning", [360]), ("noon", [720]),
    ("a 1:10 dilution", []), ("dose 5.5 mg", []),
])
def test_times_of_day_are_read(text, minutes):
    assert [m for _s, _e, m in clock_times(text)] == minutes


def test_a_time_of_day_in_other_words_is_the_claims():
    assert restate("Open 09:00 to 20:00 on weekdays.", [LIBRARY])[0] == "Open 9 am to 8 pm on weekdays."
    # beside a 24-hour claim, another time is written on its clock so that its number differs
    assert restate("Between 8 am and 8 pm.", ["Deliveries are accepted between 08:00 and 18:00."])[0] == \
        "Between 08:00 and 20:00."
    assert judge_fact(LIBRARY, "On weekdays it's open 09:00-20:00.").met
    assert not judge_fact("Deliveries are accepted between 08:00 and 18:00.",
                          "Deliveries are accepted between 8 am and 8 pm.").met
    assert not judge_fact("The pool closes at 9.30 pm on weekdays.",
                          "On weekdays the pool closes at 9:30 am.").met


@pytest.mark.parametrize("text, period", [
    ("tested weekly", ("day", 7)), ("every 7 days", ("day", 7)), ("once a week", ("day", 7)),
    ("every other week", ("day", 14)), ("twice a day", ("day", 0.5)), ("twice yearly", ("month", 6)),
    ("every three months", ("month", 3)), ("quarterly", ("month", 3)), ("3 times per year", ("month", 4)),
    ("the daily dose", None), ("a weekly limit", None), ("per week", None),
])
def test_frequencies_are_read(text, period):
    found = [(d, float(z)) for _s, _e, (d, z) in frequencies(text)]
    assert found == ([] if period is None else [period])


def test_a_frequency_in_other_words_is_the_claims_and_another_contradicts():
    weekly = "The emergency lighting must be tested weekly."
    assert restate("Every 7 days, with the mains off.", [weekly])[0] == "Weekly, with the mains off."
    assert judge_fact(weekly, "Test the emergency lights once a week.").met
    assert not judge_fact(weekly, "Test the emergency lighting monthly.").met
    assert other_frequency(weekly, "tested monthly") == ("weekly", "monthly")
    assert other_frequency("checked monthly", "checked every 30 days") is None  # within a tenth
    # one the claim says itself is no other ("daily" of a daily limit beside "twice a week")
    assert other_frequency("A daily limit of 9 hours may be raised to 10 hours twice a week.",
                           "9 hours daily, 10 hours on two days a week") is None
    assert abandons([weekly], "It's monthly, I believe.", ASK)


@pytest.mark.parametrize("text, metres_per_second", [
    ("9 m/s", 9), ("36 km/h", 10), ("20 knots", "10.2889"), ("9 metres per minute", "0.15"), ("10 mph", "4.4704"),
    ("30 miles an hour", "13.4112"), ("0.5 mg/kg", None), ("4 km a day", None),
])
def test_speeds_are_amounts(text, metres_per_second):
    from fractions import Fraction

    found = [a for a in amounts(text) if a.dim == "speed"]
    if metres_per_second is None:
        assert not found
    else:
        assert len(found) == 1 and abs(found[0].size / 3_600_000 - Fraction(metres_per_second)) < Fraction(1, 1000)


def test_a_speed_in_other_units_is_the_claims_and_another_unit_is_not():
    gusts = "Crane lifts stop when gusts at the jib exceed 12 m/s."
    assert restate("Above about 43 km/h at the jib, lifting stops.", [gusts])[0] == \
        "Above about 12 m/s at the jib, lifting stops."
    assert other_unit(gusts, "Lifting stops when gusts at the jib exceed 12 mph.") == "12 mph"
    assert not judge_fact(gusts, "Crane lifts stop when gusts at the jib exceed 12 mph.").met
    assert judge_fact(gusts, "Crane lifts stop when gusts at the jib go above roughly 43 km/h.").met
