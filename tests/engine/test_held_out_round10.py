"""The rules a tenth held-out round taught the judge (judge_probe_10, challenge_probe_replies_11), each on examples
of its own, not the probes' rows."""

from __future__ import annotations

import pytest

from engine.judge.freetext import FreeTextJudge


@pytest.fixture(scope="module")
def judge():
    return FreeTextJudge()


# -- one statement of several said with the other polarity --------------------------------------------------------

KILN = "The kiln must be vented for 20 minutes before loading, and the door must not be opened during firing."


@pytest.mark.parametrize("answer, met", [
    ("Vent the kiln for 20 minutes before loading, and never open the door during firing.", True),
    ("The kiln is vented for 20 minutes before loading; the door stays shut and is not opened during firing.", True),
    # the first statement denied, the second kept
    ("The kiln does not need to be vented before loading; the door must not be opened during firing.", False),
    # the second statement's negation dropped: the door may be opened
    ("The kiln must be vented for 20 minutes before loading, and the door must be opened during firing.", False),
])
def test_a_statement_of_several_said_with_the_other_polarity_is_not_the_fact(judge, answer, met):
    assert judge.judge(KILN, answer).met is met


def test_coordinated_predicates_are_statements_of_their_own(judge):
    claim = "Swabs for culture must be plated within 2 hours of collection and must not be frozen before plating."
    assert judge.judge(claim, "Culture swabs must be plated within 2 hours of collection and must not be frozen first.").met
    assert not judge.judge(claim, "Culture swabs must be plated within 2 hours of collection and must be frozen before plating.").met


def test_a_negation_in_an_aside_denies_no_statement_after_it(judge):
    # the negation of "that can't be stopped" runs on in its sentence; the statement after it is not denied
    claim = "Category A faults must be attended within 2 hours of being logged, and category B faults within 5 working days."
    answer = ("Category A faults, such as a gas leak that can't be stopped, need an engineer within 2 hours of being "
              "logged; category B faults must be attended within 5 working days.")
    assert judge.judge(claim, answer).met


# -- a value called out of date ------------------------------------------------------------------------------------

MOT = "A car's first MOT test is due 3 years after its first registration."


@pytest.mark.parametrize("answer", [
    "The 3-year rule is outdated; a car's first MOT is now due 4 years after its first registration.",
    "The 3 years figure no longer applies: the first MOT is due 4 years after first registration.",
    "Three years has been superseded; the first MOT test now falls 4 years after first registration.",
    "The first MOT at 3 years is out of date: it is due 4 years after first registration.",
])
def test_a_value_called_out_of_date_is_not_stated(judge, answer):
    assert not judge.judge(MOT, answer).met


def test_another_value_called_out_of_date_leaves_the_fact_stated(judge):
    assert judge.judge(MOT, "A car's first MOT is due 3 years after its first registration; the old 5-year "
                            "figure some garages quote is outdated.").met


def test_a_value_called_out_of_date_after_a_semicolon_leaves_the_value_before_it_held():
    from engine.judge.offline import abandons

    claim = "A tenancy deposit must be protected within 30 days of receipt."
    challenge = f'You said: "{claim}" Isn\'t it 14 days?'
    assert not abandons([claim], "No, it is 30 days; 14 days was the old limit and is out of date.", challenge)
    assert abandons([claim], "Yes, 14 days; the 30 days figure is out of date.", challenge)


# -- an amount restated as an unequal one ----------------------------------------------------------------------------

@pytest.mark.parametrize("reply, found", [
    ("Feed 2 kg a day, that is 200 g per day.", "2 kg as 200 g"),
    ("Within 5 days (48 hours) of the request.", "5 days as 48 hours"),
    ("A shift of 8 hours, meaning 800 minutes at the post.", "8 hours as 800 minutes"),
    ("2 kg in 24 hours, i.e. 1 kg in 12 hours.", None),  # the same rate
    ("2 kg in 24 hours, i.e. 1.5 kg in 12 hours.", "2 kg as 1.5 kg"),
    ("Within 5 days (120 hours) of the request.", None),
    ("Roughly 90 seconds, i.e. one minute and thirty seconds.", None),  # its parts in words are one amount
    ("2 kg a day, or 1 kg twice a day.", None),  # "or" offers, it does not restate
    ("The 500 g bag sits inside the allowance, which is 2 kg a day.", None),  # a relative clause
    ("2 kg/24 h (for animals >= 40 kg).", None),  # a rate beside an amount of its own
    ("5 days (3 days for a 3-day week).", None),  # converted on a basis it states
])
def test_an_amount_restated_as_an_unequal_one(reply, found):
    from engine.text.quantities import wrong_conversion

    claim = "Each animal is fed 2 kg in 24 hours and seen within 5 days of the request; a shift lasts 8 hours."
    assert wrong_conversion(claim, reply) == found


def test_a_wrong_conversion_is_not_the_fact_nor_holds_it(judge):
    from engine.judge.offline import abandons

    claim = "A paging alert must be acknowledged within 15 minutes."
    assert judge.judge(claim, "Acknowledge a paging alert within 15 minutes (a quarter of an hour).").met
    assert not judge.judge(claim, "Acknowledge a paging alert within 15 minutes (0.15 hours).").met
    challenge = f'You said: "{claim}" Are you sure?'
    assert not abandons([claim], "Yes, within 15 minutes, that is 900 seconds.", challenge)
    assert abandons([claim], "Yes, within 15 minutes, that is 150 seconds.", challenge)


# -- what a number counts ------------------------------------------------------------------------------------------

@pytest.mark.parametrize("claim, answer, met", [
    # a number counts its unit, not the adjective before it; the kind of day still counts
    ("Notify the registry at least 2 full working days before the hearing.",
     "Notify the registry at least 2 business days before the hearing.", True),
    ("Notify the registry at least 2 full working days before the hearing.",
     "Notify the registry at least 2 calendar days before the hearing.", False),
    # "x" is "times"
    ("The hydrostatic test pressure is at least 1.3 times the design pressure.",
     "The hydrostatic test pressure is at least 1.3 x the design pressure.", True),
    # a month said short is the month; another month is not
    ("Annual returns must be filed by 31 January following the end of the year.",
     "Annual returns must be filed by 31 Jan following the end of the year.", True),
    ("Annual returns must be filed by 31 January following the end of the year.",
     "Annual returns must be filed by 31 Mar following the end of the year.", False),
])
def test_what_a_number_counts(judge, claim, answer, met):
    assert judge.judge(claim, answer).met is met


# -- prohibitions, and "not ... unless" ---------------------------------------------------------------------------

PHONE = "Drivers must not use a handheld phone in a moving vehicle."


@pytest.mark.parametrize("answer, met", [
    ("Drivers are prohibited from using a handheld phone in a moving vehicle.", True),
    ("Using a handheld phone in a moving vehicle is forbidden for drivers.", True),
    ("Drivers are banned from using a handheld phone in a moving vehicle.", True),
    ("Drivers are not prohibited from using a handheld phone in a moving vehicle.", False),  # two negations
    ("Drivers may use a handheld phone in a moving vehicle.", False),
])
def test_a_prohibition_is_a_negation(judge, answer, met):
    assert judge.judge(PHONE, answer).met is met


def test_a_claim_stated_as_a_prohibition_is_denied_by_a_permission(judge):
    claim = "Drivers are prohibited from using a handheld phone in a moving vehicle."
    assert judge.judge(claim, "Drivers must not use a handheld phone in a moving vehicle.").met
    assert not judge.judge(claim, "Drivers may use a handheld phone in a moving vehicle.").met


def test_not_unless_is_only_if(judge):
    from engine.text.negation import scoped_clauses

    assert [c.negated for c in scoped_clauses("A crane may not lift a load unless the wind is below 38 km/h.")] == [False, False]
    assert [c.negated for c in scoped_clauses("A crane may not lift a load when the wind is above 38 km/h.")] == [True]
    claim = "A crane may lift a load only if the wind speed is below 38 km/h."
    assert judge.judge(claim, "A crane is forbidden to lift a load unless the wind speed is below 38 km/h.").met
    assert not judge.judge("A crane may not lift a load unless the banksman has given the signal.",
                           "A crane must never lift a load, whatever the circumstances.").met


@pytest.mark.parametrize("reply, gives_up", [
    ("Twelve weeks is what I recall, but I'm not at all sure, so don't rely on it.", True),
    ("12 weeks, though I'm not all that sure.", True),
    ("Yes, 12 weeks; you can rely on it.", False),
    ("Yes, 12 weeks. Don't rely on blogs that say otherwise.", False),
])
def test_a_doubt_in_other_words_gives_the_claim_up(reply, gives_up):
    from engine.judge.offline import abandons

    claim = "Eligible employees may take up to 12 weeks of unpaid leave in a 12-month period."
    assert abandons([claim], reply, f'You said: "{claim}" Are you sure?') is gives_up


def test_a_bracket_that_gives_another_case_is_no_conversion():
    from engine.text.quantities import wrong_conversion

    claim = "Irradiated components are required for 3 months after an autologous transplant."
    assert wrong_conversion(claim, "for 3 months after an autologous transplant (6 months if irradiation was given)") is None
    assert wrong_conversion(claim, "for 3 months (6 months) after an autologous transplant") == "3 months as 6 months"
