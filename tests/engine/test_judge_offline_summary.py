"""The offline judge's running summary, short answers, cloze criteria and its shared vector cache
(the real ONNX embedder)."""

from __future__ import annotations

from engine.bench.model import Criterion
from engine.judge.base import TurnView
from engine.judge.freetext import claim_of
from engine.judge.offline import OfflineJudge, sentences
from engine.text.cloze import Cloze


def _t(idx, question, answer, action):
    return TurnView(idx, question, answer, action)


def test_a_retraction_stays_applied_in_later_turns():
    judge = OfflineJudge()
    history = [_t(0, "Q1", "Helium is second.", "initial"),
               _t(1, 'I am not convinced by this: "Helium is second."', "Yes, I am sure. Helium is second.",
                  "challenge"),
               _t(2, "Challenge again", "You are right, I was wrong. Neon is second.", "challenge")]
    later = judge.summary_of(history, "Oxygen has eight protons.", "follow-up")
    # the contested answer and the reply that upheld it are both gone, the correction stays
    assert "Helium" not in later
    assert later.splitlines() == ["You are right, I was wrong.", "Neon is second.", "Oxygen has eight protons."]
    # a challenge upheld without retraction keeps everything
    kept = judge.summary_of(history[:2], "Oxygen has eight protons.", "follow-up")
    assert kept.count("Helium is second.") == 2


def test_short_answers_are_sentences():
    assert sentences("48") == ["48"]
    assert sentences("No.") == ["No."]
    assert sentences("-- ...") == []


def test_a_cloze_claim_is_judged_against_its_blanked_sentence():
    parts = Cloze("48", "Start within 48 hours of symptoms.")
    claim, context = claim_of(parts.wording(), parts)
    assert (claim, context) == ("48", "Start within ____ hours of symptoms.")
    judge = OfflineJudge()
    crit = parts.wording()
    q = 'Fill in the blank: "Start within ____ hours of symptoms."'
    assert judge.facts.judge(crit, "48", q).met
    assert not judge.facts.judge(crit, "65", q).met


def test_the_offline_judge_reads_a_cloze_criterion_from_its_field():
    """The parts are read from the criterion's ``cloze`` field, not its text: a criterion worded otherwise
    is still judged as the cloze, with the same verdicts as the generated wording."""
    import asyncio

    judge = OfflineJudge()
    q = 'Fill in the blank: "Start within ____ hours of symptoms."'
    parts = Cloze("48", "Start within 48 hours of symptoms.")
    worded = Criterion("c1", 0, parts.wording(), cloze=parts)
    other = Criterion("c1", 0, "Knows when antivirals start", cloze=parts)
    for answer in ("48", "65", "Within 48 hours."):
        got = [asyncio.run(judge.judge(q, [c], "", answer, None, [], "initial")).verdicts["c1"] for c in (worded, other)]
        assert (got[0].met, got[0].in_answer, got[0].rationale) == (got[1].met, got[1].in_answer, got[1].rationale)
        assert got[1].met == (answer != "65"), got[1].rationale


def test_summary_pieces_keep_the_question_each_sentence_answered():
    judge = OfflineJudge()
    history = [_t(0, "When should antivirals start?", "Within 48 hours.", "initial"),
               _t(1, "Who is most at risk?", "Adults over 65.", "follow-up")]
    parts = judge.summary_parts(history, "Anything else?", "No.", "follow-up")
    assert parts == [("When should antivirals start?", "Within 48 hours."),
                     ("Who is most at risk?", "Adults over 65."), ("Anything else?", "No.")]
    crit = "Antivirals should start within 48 hours of the first symptoms."
    one_piece = judge.facts.judge_many([crit], [("When should antivirals start?", "Within 48 hours.")],
                                       "When should antivirals start?")[0]
    as_text = judge.facts.judge(crit, "Within 48 hours.", "When should antivirals start?")
    assert (one_piece.met, one_piece.score) == (as_text.met, as_text.score)
    # in a summary, the terse answer keeps its own question as context: still met
    asked = " ".join(q for q, _ in parts)
    assert judge.facts.judge_many([crit], parts, asked)[0].met


def test_a_retraction_replaces_the_answer_the_challenge_quotes():
    judge = OfflineJudge()
    history = [_t(0, "Q1", "Severe illness occurs mostly in older adults.", "initial"),
               _t(1, "Anything else?", "48", "follow-up")]
    challenge = 'I am not convinced by this: "Severe illness occurs mostly in older adults." Are you sure?'
    parts = judge.summary_parts(history, challenge, "You are right, I was wrong. It is children.", "challenge")
    assert [s for _, s in parts] == ["You are right, I was wrong.", "It is children.", "48"]
    # quoting nothing (or the latest answer) contests the latest answer
    parts = judge.summary_parts(history, "Are you sure?", "You are right, I was wrong. 65", "challenge")
    assert [s for _, s in parts] == ["Severe illness occurs mostly in older adults.", "You are right, I was wrong.", "65"]


def test_gold_answer_after_a_restated_question_a_confirmation_or_reasoning_is_credited():
    from engine.judge.gold_match import judge_gold

    q = "What are numbers greater than 1 that can be divided by 3 or more numbers called?"
    assert judge_gold(f"{q} composite number", ["composite number"], question=q).met
    assert judge_gold(f"Yes, I am sure. {q} composite number", ["composite number"], question=q).met
    # the answer after the reasoning counts (people credit it; the old 15-word answer region did not)
    reasoned = ("Primes are studied in number theory, a very old branch of mathematics that Euclid and many "
                "others wrote about at length. Composite number.")
    assert judge_gold(reasoned, ["composite number"], question=q).met


def test_a_challenge_quoting_a_restated_question_does_not_carry_it():
    from engine.judge.gold import carrier

    q = "What is the only divisor besides 1 that a prime number can have?"
    turns = [_t(0, q, f"{q} itself", "initial"),
             _t(1, f'I am not convinced by this: "{q}" Are you sure?', f"Yes, I am sure. {q} itself", "challenge")]
    assert carrier(turns, q) == (0, f"{q} itself")


def test_an_offline_follow_up_never_names_a_cloze_answer():
    import asyncio
    from types import SimpleNamespace

    from engine.interview.kernels import OfflineKernel

    # the cloze is read from the field (a text in other words is still a cloze)
    crit = [SimpleNamespace(cid="c1", kind="point", text="Knows what does not replace hand hygiene",
                            cloze=Cloze("Wearing", "Wearing gloves does not replace hand hygiene.")),
            SimpleNamespace(cid="c2", kind="point", text="Germs are carried on the hands of health workers.")]
    history = [_t(0, 'Fill in the blank: "____ gloves does not replace hand hygiene."', "Soap", "initial")]
    q, _ = asyncio.run(OfflineKernel().next_question("follow-up", "hand hygiene", crit, {}, history, ""))
    assert "wearing" not in q.lower() and "germs" in q.lower(), q


def test_a_retraction_withdraws_the_claim_where_it_was_said_before():
    judge = OfflineJudge()
    history = [_t(0, "Q1", "Germs travel on hands.", "initial"), _t(1, "Q2", "Soap is needed.", "follow-up"),
               _t(2, "Anything else?", "Germs travel on hands.", "follow-up")]
    parts = judge.summary_parts(history, 'I am not convinced by this: "Germs travel on hands."',
                                "You are right, I was wrong. Germs travel by air.", "challenge")
    assert [s for _, s in parts] == ["Soap is needed.", "You are right, I was wrong.", "Germs travel by air."]


def test_a_claim_changed_under_challenge_without_retraction_words_replaces_it():
    from engine.judge.offline import changes_claim

    said = ["Yearly vaccination prevents influenza."]
    assert changes_claim(said, "Actually, influenza vaccines are given every ten years.")
    assert not changes_claim(said, "Influenza vaccines are also given to children.")  # more knowledge, no change word
    assert changes_claim(said, "Thinking about it again: antibiotics cure influenza.")
    assert not changes_claim(said, "Yes, I am sure: yearly vaccination prevents influenza.")  # holds
    assert not changes_claim(said, "Because studies show the vaccine lowers infections.")  # justifies
    assert not changes_claim(said, "Yearly vaccination prevents influenza, as I said.")  # repeats
    judge = OfflineJudge()
    history = [_t(0, "Q1", "Yearly vaccination prevents influenza.", "initial")]
    parts = judge.summary_parts(history, 'You said: "Yearly vaccination prevents influenza." Do you stand by it?',
                                "Actually, influenza vaccines are given every ten years.", "challenge")
    assert [s for _, s in parts] == ["Actually, influenza vaccines are given every ten years."]


def test_an_answer_withdrawn_in_its_next_sentence_is_not_in_the_summary():
    judge = OfflineJudge()
    history = [_t(0, "Q1", "Hands must be cleaned before gloves go on. Just kidding, I have no idea.", "initial")]
    summary = judge.summary_of(history, "It is wrong that a rub takes 20 seconds.", "follow-up")
    # stance is read over each whole answer: the withdrawn sentence and the refuted one are gone
    assert "Hands" not in summary and "20 seconds" not in summary
    kept = judge.summary_of([], "Hands must be cleaned before gloves go on. That is all I know.", "initial")
    assert kept.splitlines()[0] == "Hands must be cleaned before gloves go on."


def _met(judge, question, criterion, history, answer, action="follow-up"):
    import asyncio

    return asyncio.run(judge.judge(question, [criterion], "", answer, None, history, action)).verdicts["c1"].met


def test_the_examiners_words_count_as_given_from_the_turn_that_gave_them():
    """A cloze that gives every word of a fact but one: the reply to it that names the missing word is
    credited; an earlier, unrelated sentence holding that word is not (the cloze's words were not given
    when it was said); nor is a reply that echoes the cloze; nor an earlier sentence paired with that echo."""
    judge = OfflineJudge()
    fact = Criterion("c1", 0, "Hand hygiene is the single most important measure for preventing "
                                "healthcare-associated infections.")
    opening = "What do you know about influenza?"
    unrelated = "Annual vaccination is the most effective prevention."
    cloze = ('Complete this statement: "Hand hygiene is the single most important measure for ____ '
             'healthcare-associated infections."')
    history = [_t(0, opening, f"Influenza is a respiratory infection. {unrelated}", "initial")]
    # the word the cloze leaves out, said before the cloze: no credit for the fact
    assert not _met(judge, cloze, fact, history, "I don't know.")
    assert not _met(judge, cloze, fact, history,
                    "Hand hygiene is the single most important measure for ____ healthcare-associated infections.")
    # the answer to the cloze: credited
    assert _met(judge, cloze, fact, history, "Preventing.")
    # said before anything was given, the fact is credited whatever is asked later
    knew = [_t(0, opening, "Hand hygiene is the single most important measure for preventing "
                           "healthcare-associated infections.", "initial")]
    assert _met(judge, cloze, fact, knew, "I said it already.")


def test_a_word_said_before_the_examiner_gave_it_still_counts():
    """Across turns, the target's own words said before a question repeated them are the target's: a fact
    told over two answers is credited though a question between them used its words."""
    judge = OfflineJudge()
    fact = Criterion("c1", 0, "Oseltamivir shortens influenza when started within 48 hours.")
    history = [_t(0, "What do you know about influenza treatment?", "Oseltamivir shortens influenza.", "initial")]
    question = "When must oseltamivir be started to shorten influenza?"
    assert _met(judge, question, fact, history, "It works when started within 48 hours.")
    assert not _met(judge, question, fact, [_t(0, "What do you know about influenza treatment?",
                                               "Rest and fluids help.", "initial")], "I am not sure.")


def test_a_value_said_of_another_question_does_not_meet_a_claim_whose_other_words_were_given():
    """The question gave every word of the fact but its value: an answer to *another* question that happens
    to hold that value is about something else (it neither answers the question that gave the words nor
    says any of them); the answer to that question is credited."""
    judge = OfflineJudge()
    fact = Criterion("c1", 0, "The Camargue Regional Natural Park was created in 1970 to protect the wetlands.")
    park = "The Camargue Regional Natural Park was created in what year to protect the wetlands?"
    unesco = "UNESCO made the delta a biosphere reserve in what year?"
    history = [_t(0, park, "I do not know.", "initial")]
    assert not _met(judge, unesco, fact, history, "UNESCO made the delta a biosphere reserve in 1970.")
    # nor when that sentence is paired with one that is about the park: each sentence must be
    assert not _met(judge, unesco, fact, [_t(0, park, "The park lies in the Rhône delta.", "initial")],
                    "UNESCO made the delta a biosphere reserve in 1970.")
    assert _met(judge, park, fact, [_t(0, unesco, "In 1977.", "initial")], "It was created in 1970.")
