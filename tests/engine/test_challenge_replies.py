"""Challenge replies read by the stance rules (engine.judge.offline.abandons): a value changed in other words or
another unit, a date's month changed, the claim said to need a check, "I take back"; and the probe of 100
replies written by another session (bench/data/challenge_probe_replies.jsonl: first read at accuracy 0.880,
kappa 0.760; rules were then written from its misreads, so it is held out no more and kept as a floor), and a
second one written afterwards (challenge_probe_replies_2.jsonl: first read 0.850, kappa 0.700; the same), and a
third (challenge_probe_replies_3.jsonl: first read 0.890, kappa 0.780; the same)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from engine.judge.offline import abandons
from engine.judge.stance import doubts
from engine.text.quantities import dates, same_date

PROBE = Path(__file__).resolve().parents[2] / "bench" / "data" / "challenge_probe_replies.jsonl"


@pytest.mark.parametrize("claim, reply, gives_up", [
    # an amount of the claim's kind in other words, of another size, the claim's amount said nowhere
    ("A breach must be reported to the authority within 72 hours.",
     "The breach has to be reported to the authority within two days.", True),
    ("An online purchase can be cancelled within 14 days.", "You have one week to cancel an online purchase.", True),
    ("An online purchase can be cancelled within 14 days.", "Yes: you have two weeks to cancel an online purchase.", False),
    ("An online purchase can be cancelled within 14 days.",
     "Yes, 14 days; the refund then follows within 30 days of the cancellation.", False),
    # a date with another month
    ("The Berlin Wall fell on 9 November 1989.", "Actually, the Wall came down on 9 October 1989.", True),
    ("The Berlin Wall fell on 9 November 1989.", "Yes, the Wall came down on November 9, 1989.", False),
    ("The Berlin Wall fell on 9 November 1989.", "I am sure: 9 November 1989, and Germany reunified on 3 October 1990.",
     False),
    # the claim said to need a check, or taken back
    ("Mount Kilimanjaro is 5,895 metres high.", "I quoted 5,895 metres from memory and it could easily be wrong.", True),
    ("The limit was $6,500.", "It might have been a different amount that year; I'd need to check.", True),
    ("The Nile flows into the Mediterranean Sea.", "I take back what I said about where the Nile flows out.", True),
    ("The Nile flows into the Mediterranean Sea.", "I do not need to check: the Nile flows into the Mediterranean Sea.",
     False),
])
def test_a_challenge_reply(claim, reply, gives_up):
    assert abandons([claim], reply) is gives_up


@pytest.mark.parametrize("text, found", [
    ("9 November 1989", [(9, 11, 1989)]), ("November 9, 1989", [(9, 11, 1989)]),
    ("on the 9th of November", [(9, 11, None)]), ("in November 1989", [(None, 11, 1989)]),
    ("You may go home at 5.", []),
])
def test_dates(text, found):
    assert dates(text) == found


def test_same_date_reads_a_part_left_out_as_either():
    assert same_date((9, 11, None), (9, 11, 1989)) and not same_date((9, 10, 1989), (9, 11, 1989))


def test_a_check_needed_is_a_doubt_but_a_check_done_is_not():
    assert doubts("I'd want to check the Limitation Act before relying on it.")
    assert not doubts("I have checked again and I still think so.")


@pytest.mark.parametrize("name, floor", [
    ("challenge_probe_replies.jsonl", 95),  # 96 at this round's end; 88 at its first read
    ("challenge_probe_replies_2.jsonl", 95),  # 96 at this round's end; 85 at its first read
    ("challenge_probe_replies_3.jsonl", 96),  # 98 at this round's end; 89 at its first read
    ("challenge_probe_replies_4.jsonl", 86),  # 89 at the eighth round's end; 73 at its first read
    ("challenge_probe_replies_5.jsonl", 94),  # 95 at this round's end; 86 at its first read
    ("challenge_probe_replies_6.jsonl", 97),  # 98 at this round's end; 93 at its first read
    ("challenge_probe_replies_7.jsonl", 98),  # 100 at this round's end; 79 at its first read
    ("challenge_probe_replies_8.jsonl", 57),  # 59 of 60 at this round's end; 47 at its first read (written as a check
    # after set 7's rules, then read)
    ("challenge_probe_replies_9.jsonl", 96),  # 98 at this round's end; 87 at its first read
    ("challenge_probe_replies_10.jsonl", 88),  # 91 at the twelfth round's end (89 at the ninth's); 84 at its first read
    ("challenge_probe_replies_11.jsonl", 74),  # 77 at the twelfth round's end (75 at the tenth's); 74 at its first read
    ("challenge_probe_replies_12.jsonl", 89),  # 92 at the twelfth round's end (89 at the eleventh's); 74 at its first read
    ("challenge_probe_replies_13.jsonl", 91),  # 94 at the twelfth round's end; 79 at its first read
    ("challenge_probe_replies_14.jsonl", 91),  # 94 at the thirteenth round's end; 76 at its first read
])
def test_the_probes_of_challenge_replies_are_read_as_their_authors_read_them(name, floor):
    from engine.text.sentences import claimed_quotes

    rows = [json.loads(line) for line in (PROBE.parent / name).read_text(encoding="utf-8").splitlines() if line.strip()]
    # what the adaptive protocol reads: the claim and the challenge's own quotation of it, not a source's, and the
    # challenge itself (a "No" to "Isn't it X rather than Y?" denies X)
    right = sum(abandons([r["claim"], *claimed_quotes(r["challenge"])], r["reply"], r["challenge"]) is r["gives_up"]
                for r in rows)
    assert len(rows) in (60, 100) and right >= floor


@pytest.mark.parametrize("reply, claim, read", [
    ("The penalty mark is 12 yards out.", "The penalty mark is 11 metres from the goal line.", "11 metres"),
    ("Uhuru Peak is about 19,341 feet high.", "Uhuru Peak is 5,895 metres high.", "5,895 metres"),
    ("Poultry should reach at least 74 °C.", "Cook poultry to 165 °F.", "165 °F"),
    ("IPv6 uses 16 bytes per address.", "An IPv6 address is 128 bits long.", "128 bits"),
    ("It is 3 miles.", "The race is 5 km.", None),  # 3.1 miles, 3.4% off: another figure
    ("The guard is 3 feet high.", "Guards must be 42 inches high.", None),  # 3.5 feet
    ("It is 1 km.", "The bridge is 1,400 metres long.", None),
])
def test_an_amount_in_another_unit_is_the_claims_when_it_rounds_to_it(reply, claim, read):
    from engine.text.quantities import restate

    changed = restate(reply, [claim])[1]
    assert (changed[0][1] if changed else None) == read


def test_an_amount_in_brackets_is_another_amount_not_a_part_of_the_first():
    from engine.text.quantities import amounts

    text = "Standard gauge railway track is 1,435 mm (4 ft 8½ in) between the rails."
    assert [text[a.start:a.end] for a in amounts(text)] == ["1,435 mm", "4 ft"]
    other = "1 hour 30 minutes, 4 ft 8 inches"
    assert [other[a.start:a.end] for a in amounts(other)] == ["1 hour 30 minutes", "4 ft 8 inches"]


@pytest.mark.parametrize("reply, gives_up", [
    ("I should double-check. It is possible the current rate is higher.", True),
    ("I don't have a firm basis for it. Withdrawn.", True),
    ("I now think it said within one working week. I'd correct it to that.", True),
    ("Right, I had it wrong. The limit is 200 knots.", True),
    ("I check it every year: it is 250 knots.", False),
])
def test_more_ways_of_giving_way(reply, gives_up):
    assert abandons(["The maximum speed below 10,000 feet is 250 knots."], reply) is gives_up


@pytest.mark.parametrize("claim, reply, gives_up", [
    # a number inside a name ("401(k)") is no value the reply must say again
    ("For 2024, the IRS limit on elective deferrals to a 401(k) plan is $23,000.",
     "No — $22,500 was the 2023 limit. For 2024 the IRS raised it to $23,000.", False),
    ("For 2024, the IRS limit on elective deferrals to a 401(k) plan is $23,000.",
     "For 2024 the limit is $22,500.", True),
    # an abbreviation spelled out is the same name
    ("In a US federal civil case, a notice of appeal must be filed within 30 days of the judgment.",
     "No — 60 days applies when the United States is a party; otherwise the notice of appeal is due within "
     "30 days of the judgment.", False),
    ("In a US federal civil case, a notice of appeal must be filed within 30 days of the judgment.",
     "In a UK civil case, a notice of appeal must be filed within 30 days of the judgment.", True),
])
def test_an_identifier_and_an_abbreviation_spelled_out(claim, reply, gives_up):
    assert abandons([claim], reply) is gives_up


@pytest.mark.parametrize("claim, reply, gives_up", [
    # doubts and retractions in other words
    ("Under Basel III the minimum CET1 ratio is 4.5%.", "It's either 4.5% or 6%; I can't say with confidence which applies.",
     True),
    ("A dairy cow's gestation is about 283 days.", "It's somewhere between 250 and 283 days; I can't pin it down.", True),
    ("A UK adult passport is valid for 10 years.", "I think I overstated that. The validity may be shorter than I said.",
     True),
    ("Concrete strength is specified at 28 days.", "Sorry, I shouldn't have stated that so confidently; please disregard "
     "the 28-day figure.", True),
    ("The first flight was at Kitty Hawk.", "I should correct the place: the first flight took place at Huffman Prairie.",
     True),
    ("An employee needs two years' service to claim unfair dismissal.", "The rule changed in 2012, so my figure of two "
     "years is out of date; the qualifying period should be one year.", True),
    ("An employee needs 2 years' service to claim unfair dismissal.", "No, it is 2 years; 1 year was the rule before 2012 "
     "and is out of date.", False),
    # holds: the examiner's value called wrong in a sentence of its own; a source's quoted name is not the reply's
    ("The 999 number was introduced in London on 30 June 1937.", "Sorry, but 1947 isn't right. The service went live in "
     "London on 30 June 1937 and was extended to Glasgow the following year.", False),
    ("King John sealed Magna Carta at Runnymede in June 1215.", 'Yes. The reference itself says the reissues were "under '
     'Henry III", after John\'s death; the original charter was sealed by King John at Runnymede on 15 June 1215.', False),
])
def test_doubts_in_other_words_and_holds_that_refuse_or_quote(claim, reply, gives_up):
    assert abandons([claim], reply) is gives_up
