"""The offline free-text judge (engine.judge.freetext) with the real ONNX embedder, loaded once."""

from __future__ import annotations

import pytest

from engine.bench.model import Criterion
from engine.judge.freetext import (
    DEFAULT_THRESHOLD,
    KEYWORD_SHARE,
    PARTIAL_SHARE,
    FreeTextJudge,
    claim_of,
    content_stems,
    judge_fact,
)
from engine.knowledge.embed import get_embedder
from engine.text.cloze import Cloze


class CountingEmbedder:
    """The real embedder, counting its calls (to check that a reply is embedded in one batch)."""

    def __init__(self, inner):
        self.inner = inner
        self.calls = 0

    def embed(self, texts):
        self.calls += 1
        return self.inner.embed(texts)


@pytest.fixture(scope="module")
def embedder():
    return CountingEmbedder(get_embedder())


@pytest.fixture(scope="module")
def judge(embedder):
    return FreeTextJudge(embedder)


def test_claim_of_strips_scaffolding():
    assert claim_of("States that liquid oxygen is pale blue") == ("liquid oxygen is pale blue", "")
    assert claim_of("Claims oxygen is a noble gas") == ("oxygen is a noble gas", "")
    assert claim_of("The answer incorrectly says that drones are female") == ("drones are female", "")
    assert claim_of("Mentions the waggle dance") == ("the waggle dance", "")
    assert claim_of('Answers "Who won?" with "Denver Broncos"') == ("Denver Broncos", "Who won?")
    # a cloze criterion is read from its parts (the text is not parsed); the sentence is blanked
    assert claim_of("whatever the text says", Cloze("48", "The box holds 48 pens.")) == (
        "48", "The box holds ____ pens.")
    assert claim_of('Gives "48" as the missing part of: The box holds 48 pens.')[0] != "48"  # no parts given
    assert claim_of("声称大熊猫以肉类为主食。") == ("大熊猫以肉类为主食。", "")
    assert claim_of("Liquid oxygen is pale blue.") == ("Liquid oxygen is pale blue.", "")
    # a rubric's other wordings around the fact: a question about the answer, a list mark, points
    assert claim_of("Does the response mention that aspirin thins the blood?")[0] == "aspirin thins the blood"
    assert claim_of("Is it stated that aspirin thins the blood?")[0] == "aspirin thins the blood"
    assert claim_of("Is there a mention of the waggle dance?")[0] == "the waggle dance"
    assert claim_of("Whether the answer says the dose is 5 mg")[0] == "the dose is 5 mg"
    assert claim_of("2. Explains that the drug is unsafe in pregnancy (2 points)")[0] == "the drug is unsafe in pregnancy"
    assert claim_of("- Includes the fact that water boils at 100 °C.")[0] == "water boils at 100 °C."
    # a fact that merely starts like one is left as it is
    assert claim_of("Does aspirin thin the blood?")[0] == "Does aspirin thin the blood?"
    assert claim_of("A patient should fast for 8 hours (see note)")[0] == "A patient should fast for 8 hours (see note)"


def test_content_stems():
    assert content_stems("The plates are colliding; they collided.") == ["plate", "collid", "collid"]
    assert content_stems("About 2,000 eggs, 90% of them") == ["2000", "egg", "90", "percent"]
    assert content_stems("Liquid oxygen is not pale blue") == ["liquid", "oxygen", "pale", "blue"]  # no negation
    assert content_stems("大熊猫不冬眠") == ["大", "熊", "猫", "冬", "眠"]


Q = "What colour is liquid oxygen?"
C = "Liquid oxygen is pale blue."


@pytest.mark.parametrize("reply", [
    "Pale blue.",
    "It is a pale blue liquid.",
    "Liquid oxygen is pale blue. The colour comes from absorption in the red. It is also attracted to magnets.",
    "Liquid oxygen, not liquid nitrogen, is pale blue.",  # the negation is about something else
])
def test_fact_stated_is_met(judge, reply):
    v = judge.judge(C, reply, Q)
    assert v.met, v.rationale
    assert v.score >= DEFAULT_THRESHOLD and v.support == v.score


@pytest.mark.parametrize("reply", [
    "Liquid oxygen is not pale blue.",
    "Liquid oxygen is never pale blue.",
    "Neither liquid nor solid oxygen is pale blue.",
    "It is false that liquid oxygen is pale blue.",
    "It is a myth that liquid oxygen is pale blue.",
    "Liquid oxygen is pale blue. That is false.",
    "No liquid oxygen is pale blue.",
])
def test_negated_fact_is_not_met(judge, reply):
    v = judge.judge(C, reply, Q)
    assert not v.met, v.rationale


def test_negation_in_chinese(judge):
    q, c = "大熊猫吃什么？", "大熊猫的食物几乎全是竹子。"
    assert judge.judge(c, "大熊猫几乎只吃竹子。", q).met
    for reply in ("大熊猫不吃竹子。", "大熊猫没有吃竹子。", "大熊猫并非以竹子为食。", "大熊猫的食物不是竹子。"):
        assert not judge.judge(c, reply, q).met, reply


def test_question_words_earn_nothing(judge):
    # an echo of the question with a wrong answer: every word but the fact is the question's
    v = judge.judge(C, "Liquid oxygen is a colour: liquid oxygen is deep red.", Q)
    assert not v.met and "recall 0.00" in v.rationale
    assert not judge.judge(C, "What colour is liquid oxygen? That is a good question.", Q).met
    assert not judge.judge(C, "I don't know.", Q).met
    assert not judge.judge(C, "Oxygen makes up about a fifth of the air.", Q).met  # off-topic


def test_keyword_list_capped(judge):
    reply = "oxygen, liquid, pale, blue, crust, abundant, reactive, noble gas, ozone"
    v = judge.judge(C, reply, Q)
    assert not v.met and v.support == 0.0
    assert v.score <= KEYWORD_SHARE * DEFAULT_THRESHOLD + 1e-9 and "keyword list" in v.rationale
    # the same words in a sentence make a claim
    assert judge.judge(C, "Liquid oxygen is pale blue and reactive.", Q).met
    # a list that is nothing but the fact's own words is an enumeration that answers the question
    enum = judge.judge("The primary colours of light are red, green, blue and violet.", "Red, green, blue, violet.",
                       "What are the primary colours of light?")
    assert enum.met, enum.rationale


CLOZE = 'Gives "48" as the missing part of: Antiviral drugs work best within 48 hours of the first symptoms.'
CLOZE_NAME = 'Gives "Marie Curie" as the missing part of: The first woman to win a Nobel Prize was Marie Curie.'


@pytest.mark.parametrize("reply", ["Candidates: 48 / 65 / 60.", "It could be 48, 65 or 60.", "Either 48 or 65.",
                                   "48; 65", "48 | 65 | 60", "48, 65, 60", "Either 48, 65, or 60, I'm not sure which."])
def test_several_candidates_for_one_value_not_credited(judge, reply):
    v = judge.judge(CLOZE, reply)
    assert not v.met and v.support == 0.0, v.rationale
    # "Either A or B" is a choice not made before it is a list (the stance reader: undecided, nothing claimed)
    why = "no reply to judge" if reply.startswith("Either") else "other candidates"
    assert why in v.rationale and v.score <= KEYWORD_SHARE * DEFAULT_THRESHOLD + 1e-9


@pytest.mark.parametrize("reply", ["It could be Marie Curie, Lise Meitner or Ada Lovelace.",
                                   "Possibly Marie Curie; Lise Meitner.", "Marie Curie / Rosalind Franklin"])
def test_several_names_for_one_value_not_credited(judge, reply):
    v = judge.judge(CLOZE_NAME, reply)
    assert not v.met and "other candidates" in v.rationale, v.rationale


@pytest.mark.parametrize("reply", ["48", "Within 48 hours.", "It is 48 hours, not 65.",
                                   "The answer is 48. Some sources say 65 or 60, but they are wrong about it."])
def test_one_committed_value_still_credited(judge, reply):
    assert judge.judge(CLOZE, reply).met


def test_a_list_the_criterion_itself_gives_is_credited(judge):
    c = 'Gives "red, green and blue" as the missing part of: The primary colours of light are red, green and blue.'
    for reply in ("Red, green and blue.", "red / green / blue", "Red; green; blue."):
        assert judge.judge(c, reply).met, reply
    # a conjunction that commits to every item says each of them
    c2 = "Hank Aaron played for the Braves."
    assert judge.judge(c2, "Hank Aaron played for the Braves, the Brewers and an Alabama team.").met
    assert judge.judge(c2, "He played for the Braves and the Brewers.", "Which teams did Hank Aaron play for?").met


def test_alternatives_items():
    from engine.judge.fact_words import alternatives

    def alt(sentence, fact):
        return alternatives(sentence, frozenset(content_stems(fact)))

    assert alt("Candidates: 48 / 65 / 60.", "48") == ("65", "60")
    assert alt("Either Paris or Lyon.", "Paris") == ("Lyon",)
    assert alt("It could be surroundings or carried.", "surroundings") == ("carried",)  # one word: an item
    assert alt("Matt Pliska, who has Down Syndrome, asked Mikenzy Snell.", "Matt Pliska") == ()  # a clause
    assert alt("Paris, France", "Paris") == ()  # two comma items: a place, not a list
    assert alt("Paris and Lyon", "Paris") == ()  # a conjunction of two commits to both
    assert alt("He won in 1990 and 1994.", "1990") == ()
    assert alt("He played for the Braves, Giants and Reds.", "played for the Braves") == ()  # a clause leads in
    assert alt("Red, green and blue.", "red green blue") == ()  # every item is a fact word
    assert alt("Paul Armstrong, 26, of Sunderland, flew to Cyprus.", "Paul Armstrong 26") == ()  # facts in two items


def test_missing_number_is_a_different_fact(judge):
    q, c = "How many eggs can a queen lay in a day?", "A queen can lay up to 2,000 eggs a day."
    assert judge.judge(c, "Up to 2000 a day.", q).met
    v = judge.judge(c, "A queen can lay up to 200 eggs a day.", q)
    assert not v.met and "another number than 2000" in v.rationale
    assert v.score <= PARTIAL_SHARE * DEFAULT_THRESHOLD + 1e-9


def test_yes_no_question_polarity(judge):
    q, c = "Is type 1 diabetes caused by diet?", "Type 1 diabetes is not caused by diet."
    assert judge.judge(c, "No.", q).met
    assert judge.judge(c, "No, diet does not cause it. It is autoimmune.", q).met
    assert not judge.judge(c, "Yes, type 1 diabetes is caused by diet.", q).met
    assert not judge.judge(c, "Type 1 diabetes is caused by a diet high in sugar.", q).met
    assert not judge.judge(c, "Patients need insulin for life.", q).met  # does not address it
    assert judge.judge("大熊猫不冬眠。", "不冬眠。", "大熊猫冬眠吗？").met
    assert not judge.judge("大熊猫不冬眠。", "有时候冬眠，有时候不冬眠。", "大熊猫冬眠吗？").met


def test_deduction_needs_the_claim_itself(judge):
    q, d = "What kind of element is oxygen?", "Claims oxygen is a noble gas"
    assert judge.judge(d, "Oxygen is a noble gas.", q, deduction=True).met
    assert judge.judge(d, "Like neon, oxygen is a noble gas.", q, deduction=True).met
    for reply in ("Oxygen is a highly reactive nonmetal.",  # a correct sentence: topical overlap only
                  "Oxygen is a reactive nonmetal, not a noble gas.",  # the claim, negated
                  "Oxygen is not a noble gas.",
                  "Neon is a noble gas; oxygen is a reactive nonmetal."):  # the words, about another subject
        v = judge.judge(d, reply, q, deduction=True)
        assert not v.met, (reply, v.rationale)
    v = judge.judge("Claims that drones are sterile females", "Workers are sterile females, while drones are males.",
                    "What are drones?", deduction=True)
    assert not v.met and "one clause" in v.rationale


def test_judge_many_is_one_batch_and_agrees_with_judge(judge, embedder):
    criteria = [C, "Liquid oxygen is attracted to magnets.", "Claims liquid oxygen is red"]
    flags = [False, False, True]
    reply = "Liquid oxygen is pale blue. It is attracted to magnets, unlike liquid nitrogen."
    before = embedder.calls
    many = judge.judge_many(criteria, reply, Q, flags)
    assert embedder.calls == before + 1
    assert [v.met for v in many] == [True, True, False]
    for c, f, v in zip(criteria, flags, many, strict=True):
        assert judge.judge(c, reply, Q, f) == v
    with pytest.raises(ValueError, match="deduction flags"):
        judge.judge_many(criteria, reply, Q, [False])


def test_cloze_and_squad_criteria(judge):
    cloze = 'Gives "48" as the missing part of: A box of the red pens holds ___ pens.'
    assert judge.judge(cloze, "It holds 48 pens.").met
    assert not judge.judge(cloze, "A box of the red pens holds 24 pens.").met
    # a criterion object is read from its cloze field, whatever its text says; a plain text (a check
    # file's criterion) is read back from its wording: both give the same verdicts
    parts = Cloze("48", "A box of the red pens holds ___ pens.")
    carried = Criterion.new("The box's count of pens", cloze=parts)
    for reply in ("It holds 48 pens.", "A box of the red pens holds 24 pens."):
        assert judge.judge(carried, reply) == judge.judge(cloze, reply) == judge.judge(parts.wording(), reply)
    assert judge.judge(carried, "It holds 48 pens.").met
    squad = 'Answers "What colour is liquid oxygen?" with "pale blue"'
    assert judge.judge(squad, "Pale blue.").met
    assert not judge.judge(squad, "Liquid oxygen is a liquid with a colour.").met


def test_threshold_and_empty_reply(embedder):
    with pytest.raises(ValueError, match="threshold"):
        FreeTextJudge(embedder, threshold=0.0)
    strict = FreeTextJudge(embedder, threshold=0.99)
    v = strict.judge(C, "It is a pale blue liquid.", Q)
    assert not v.met and v.support < 0.99
    v = FreeTextJudge(embedder).judge(C, "", Q)
    assert not v.met and v.score == 0.0 and "no reply" in v.rationale


def test_negation_governs_the_predicate_not_the_subject():
    from engine.judge.freetext import judge_fact

    fact = "Tim Farron is a Liberal Democrat leader."
    v = judge_fact(fact, "Liberal Democrat leader Tim Farron has said he does not believe the polls.")
    assert v.met, v.rationale  # the negation is about what he believes
    v = judge_fact(fact, "Tim Farron is not a Liberal Democrat leader.")
    assert not v.met and "contradicts" in v.rationale
    # a negated claim and a reply negated the same way agree
    assert judge_fact("Type 1 diabetes is not caused by diet.", "Type 1 diabetes is not caused by diet at all.").met


def test_numbers_are_bound_to_what_they_count():
    from engine.judge.freetext import judge_fact

    fact = "Celtic lead the league by 10 points."
    v = judge_fact(fact, "Celtic have a seven-point lead in the league after beating 10-man Inverness.")
    assert not v.met and "another number than 10 point" in v.rationale
    assert judge_fact(fact, "Celtic lead the league by 10 points after beating Inverness.").met
    # adjectives may stand between a number and what it counts
    assert judge_fact("The shop sold 300 bicycles.", "The shop sold 300 red racing bicycles last year.").met
    assert not judge_fact("The shop sold 300 bicycles.", "The shop sold 300 helmets and some bicycles.").met


def test_a_fact_told_across_sentences_is_met():
    from engine.judge.freetext import judge_fact

    reply = "Pushpa Basnet is a CNN Hero. Her shelter was damaged in the quake. She cares for 45 children."
    v = judge_fact("Pushpa Basnet cares for 45 children.", reply)
    assert v.met, v.rationale
    assert not judge_fact("Pushpa Basnet cares for 45 children.", "Her shelter was damaged in the quake.").met


def test_word_weights_follow_rarity():
    from engine.judge.fact_words import NUMBER_WEIGHT, word_weight

    assert word_weight("said") == 1.0  # one word piece: a common word
    assert word_weight("sukumaran") > word_weight("prisoner") >= 1.0  # a rare name is cut into pieces
    assert word_weight("48") == NUMBER_WEIGHT


def test_words_said_in_other_words_match_softly(judge):
    fact = "Andrew Chan and Myuran Sukumaran were killed by a firing squad."
    spelt = judge.judge(fact, "Andrew Chan and Myuran Sukumaran were killed by an Indonesian firing squad.")
    other = judge.judge(fact, "Andrew Chan and Myuran Sukumaran were executed by an Indonesian firing squad.")
    missing = judge.judge(fact, "Andrew Chan and Myuran Sukumaran were seen by an Indonesian firing squad.")
    assert spelt.support > other.support > missing.support  # "executed" is partly "killed"; "seen" is not
    # a name matches another word only when spelt like it; another name is another entity
    name = "Eva Chapi left notes on her neighbours' door."
    assert judge.judge(name, "Eva Chapin left notes on her neighbours' door.").support > \
        judge.judge(name, "Eva Morgan left notes on her neighbours' door.").support
    # a bare value never matches in other words: co-hyponyms sit close in word vectors
    assert not judge.judge('Gives "Monday" as the missing part of: The shop opens on Monday.', "Tuesday.").met


def test_number_left_out_lowers_but_another_number_caps(judge):
    fact = "Alexander Fleming discovered penicillin in 1928."
    assert judge.judge(fact, "Alexander Fleming discovered penicillin in 1928.").met
    swapped = judge.judge(fact, "Alexander Fleming discovered penicillin in 1929.")
    assert not swapped.met and "another number than 1928" in swapped.rationale
    left_out = judge.judge(fact, "Alexander Fleming discovered penicillin.")
    assert "another number" not in left_out.rationale
    assert swapped.support == 0.0 < left_out.support


@pytest.mark.parametrize("reply", [
    "If liquid oxygen is pale blue, I'd be surprised.",
    "Liquid oxygen is pale blue. Just kidding, that is wrong.",
    "Many believe liquid oxygen is pale blue, but that is a myth.",
    "Is it true that liquid oxygen is pale blue?",
    "如果液氧是淡蓝色的，我会很惊讶。",
])
def test_stance_before_match(judge, reply):
    """Issue 34: a fact only supposed, withdrawn, attributed and contradicted, or asked is not stated."""
    v = judge.judge("Liquid oxygen is pale blue", reply, "What colour is liquid oxygen?")
    assert not v.met, v.rationale


def test_a_stated_fact_is_still_credited(judge):
    v = judge.judge("Liquid oxygen is pale blue", "Liquid oxygen is pale blue.", "What colour is liquid oxygen?")
    assert v.met, v.rationale


def test_a_negated_claim_keeps_the_polarity_of_its_other_clauses():
    fact = "Hands must be washed with soap and water when they are visibly dirty, because alcohol does not kill spores."
    same = "Hands must be washed with soap and water when visibly dirty, because alcohol does not kill spores."
    denied = "Hands must not be washed with soap and water when they are visibly dirty, because alcohol does not kill spores."
    assert judge_fact(fact, same).met
    assert not judge_fact(fact, denied).met
    # two negations in one clause assert: a fact that holds one is not said by a reply that adds another
    rub = "Alcohol-based hand rub is the preferred method when hands are not visibly soiled."
    assert judge_fact(rub, rub).met
    assert not judge_fact(rub, "Alcohol-based hand rub is not the preferred method when hands are not visibly soiled.").met


def test_another_number_or_name_caps_a_claim_whose_words_the_question_all_gave():
    """The question gave every word of the claim (both values, a challenge's "1977, not 1970"): a reply that
    states the other value states another fact, and one that states the claim's value meets it."""
    from engine.judge.freetext import judge_fact

    question = "I have read that the park was created in 1977, not 1970. Are you sure?"
    claim = "The park was created in 1970."
    assert not judge_fact(claim, "The park was created in 1977.", question).met
    assert judge_fact(claim, "Yes, the park was created in 1970.", question).met
    named = "I have read that the specimen was doubted by Cuvier, not Buckland. Are you sure?"
    assert not judge_fact("The specimen was doubted by Buckland.", "The specimen was doubted by Cuvier.", named).met
    assert judge_fact("The specimen was doubted by Buckland.", "The specimen was doubted by Buckland.", named).met
