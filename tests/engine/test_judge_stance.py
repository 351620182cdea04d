"""The stance rules of the judges' text module: claims, asserted_text, concedes, affirms (English and Chinese)."""

from __future__ import annotations

import pytest

from engine.judge.stance import STANCES, Claim, affirms, asserted_text, claims, concedes


def stances(text: str) -> list[tuple[str, str]]:
    return [(c.text, c.stance) for c in claims(text)]


def stance_of(text: str, word: str) -> str:
    """The stance of the first claim unit holding ``word``."""
    return next(c.stance for c in claims(text) if word in c.text)


@pytest.mark.parametrize("text, word, stance", [
    # superseded: the claim asserted last counts
    ("The answer is Paris. Actually, no: it is Lyon.", "Paris", "superseded"),
    ("The answer is Paris. Actually, no: it is Lyon.", "Lyon", "asserted"),
    ("It was Hastings. No, it was Stamford Bridge.", "Hastings", "superseded"),
    ("It was once believed to be Mars, but it is now known to be Venus.", "Mars", "superseded"),
    ("It was once believed to be Mars, but it is now known to be Venus.", "Venus", "asserted"),
    ("答案是巴黎。不对，应该是里昂。", "巴黎", "superseded"),
    ("答案是巴黎。不对，应该是里昂。", "里昂", "asserted"),
    ("起初认为是火星，后来发现是金星。", "火星", "superseded"),
    # denied
    ("Paris is wrong. The answer is Lyon.", "Paris", "denied"),
    ("Paris is wrong. The answer is Lyon.", "Lyon", "asserted"),
    ("Paris is incorrect.", "Paris", "denied"),
    ("I refuse to say Paris.", "Paris", "denied"),
    ("Anything except Paris.", "Paris", "denied"),
    ("Not Paris.", "Paris", "denied"),
    ("It is not Paris; it is Lyon.", "Paris", "denied"),
    ("I refuse to say Rome, Paris or Lyon.", "Paris", "denied"),
    ("Anything except war, famine, and weather.", "weather", "denied"),
    ("The capital is Paris. That is false.", "Paris", "denied"),
    ("巴黎是错的，答案是里昂。", "巴黎", "denied"),
    ("不是巴黎。", "巴黎", "denied"),
    ("首都是巴黎。这是错误的。", "巴黎", "denied"),
    # attributed, then contradicted
    ("Many people think it is Paris, but it is actually Lyon.", "Paris", "attributed"),
    ("Many people think it is Paris, but it is actually Lyon.", "Lyon", "asserted"),
    ("My friend says Paris, but I think it is Lyon.", "Paris", "attributed"),
    ("It is widely believed that bulls hate red. In fact they are colour-blind to it.", "bulls", "attributed"),
    ("很多人认为是巴黎，但其实是里昂。", "巴黎", "attributed"),
    ("很多人认为是巴黎，但其实是里昂。", "里昂", "asserted"),
    # hypothetical
    ("If it were Paris, the question would be easy.", "Paris", "hypothetical"),
    ("Suppose the answer were Paris; nothing would follow.", "Paris", "hypothetical"),
    ("Suppose the answer were Paris; nothing would follow.", "nothing", "asserted"),
    ("如果是巴黎的话，这个问题就简单了。", "巴黎", "hypothetical"),
    ("假如答案是巴黎，也说明不了什么。", "巴黎", "hypothetical"),
    # asked
    ("Is it Paris?", "Paris", "asked"),
    ("Is it Rome? Is it Madrid? Is it Paris?", "Paris", "asked"),
    ("是里昂吗？是巴黎吗？", "巴黎", "asked"),
    # withdrawn
    ("The answer is Paris. Just kidding, it is Lyon.", "Paris", "withdrawn"),
    ("The answer is Paris. Just kidding, it is Lyon.", "Lyon", "asserted"),
    ("The answer is Paris. Actually, scratch that, I have no idea.", "Paris", "withdrawn"),
    ("Paris. Never mind, I don't know.", "Paris", "withdrawn"),
    ("答案是巴黎。开玩笑的，我不知道。", "巴黎", "withdrawn"),
    # code and URLs
    ("I cannot answer. ```# Paris```", "Paris", "code"),
    ("Try `print('Paris')` yourself.", "Paris", "code"),
    ("https://www.google.com/search?q=Paris", "Paris", "url"),
    ("See www.example.org/Paris for more.", "Paris", "url"),
])
def test_stance(text: str, word: str, stance: str) -> None:
    assert stance_of(text, word) == stance


@pytest.mark.parametrize("text", [
    "The capital of France is Paris.",
    "Paris is the capital. It has about two million people.",
    "If I am not mistaken, it was Paris.",  # a hedge, not a supposition
    "Most historians believe it was Paris.",  # attributed but not contradicted: asserted
    "Oxygen is not a noble gas.",  # a negative statement with a subject: the judges read its polarity
    "It is Paris, right?",  # a tag question asserts
    "Who founded it? Charles Darwin, a famous English naturalist.",
    "The stadium is Old Trafford, located in Greater Manchester.",
    "Not only Paris but also Lyon hosted matches.",
    "No, the Earth is not flat.",
    "巴黎是法国的首都。",
    "如果我没记错，是巴黎。",
])
def test_asserted_sentences_stay(text: str) -> None:
    units = claims(text)
    if text.startswith("Who founded"):
        units = units[1:]
    assert units and all(c.asserted for c in units), stances(text)


def test_claim_fields() -> None:
    units = claims("The answer is Paris. Actually, no: it is Lyon.")
    assert all(isinstance(c, Claim) and c.stance in STANCES for c in units)
    assert [c.asserted for c in units] == [c.stance == "asserted" for c in units]
    text = "Is it Paris? It is Lyon."
    for c in claims(text):
        assert text[c.start:c.end].strip() == c.text
    with pytest.raises(AttributeError):
        units[0].stance = "asserted"  # frozen
    assert claims("") == [] and claims("   ") == []


@pytest.mark.parametrize("text, expected", [
    ("The answer is Paris. Just kidding, it is Lyon.", "it is Lyon."),
    ("Paris is wrong. The answer is Lyon.", "The answer is Lyon."),
    ("Many think it is Paris, but it is Lyon.", "but it is Lyon."),
    ("Is it Paris?", ""),
    ("I cannot answer. ```# Paris```", ""),
    ("The capital of France is Paris.", "The capital of France is Paris."),
    ("答案是巴黎。不对，应该是里昂。", "应该是里昂。"),
    ("如果是巴黎的话，这个问题就简单了。", ""),
    # tokenised text (REALSumm's summaries): the sentences kept keep their ends, standing alone or not;
    # only the cut unit's own end and comma go
    ("paris is the capital . just kidding , it is lyon . lyon is big .", "it is lyon . lyon is big ."),
    ("Paris, just kidding, Lyon", "Lyon"),
])
def test_asserted_text(text: str, expected: str) -> None:
    assert asserted_text(text) == expected


def test_negated_units_kept_for_a_negative_gold() -> None:
    assert asserted_text("Not guilty.") == ""
    assert asserted_text("Not guilty.", keep_negated=True) == "Not guilty."
    assert claims("Not guilty.")[0].negation and not claims("Paris is wrong.")[0].negation
    assert asserted_text("Paris is wrong.", keep_negated=True) == ""


def test_asserted_text_keeps_denials_for_a_polarity_reader() -> None:
    assert "Paris" not in asserted_text("Paris is wrong.")
    assert asserted_text("Paris is wrong.", keep_denied=True) == "Paris is wrong."
    assert "Paris" not in asserted_text("If it were Paris, I would be surprised.", keep_denied=True)


@pytest.mark.parametrize("text", [
    "You're right, it is Lyon.", "You are right.", "I was wrong.", "I apologise, it is actually Lyon.",
    "I'm not sure any more.", "Scratch that.", "My mistake: Lyon.", "I stand corrected.",
    "I don't know.", "你说得对，是里昂。", "我错了。", "抱歉，应该是里昂。", "我不确定了。",
])
def test_concedes(text: str) -> None:
    assert concedes(text)
    assert not affirms(text)


@pytest.mark.parametrize("text", [
    "Yes, I'm sure.", "I stand by it.", "That is correct, it is Paris.", "No, it is Paris as I said.",
    "I am confident it is Paris.", "My answer stands.", "I'll stick with Paris.", "我坚持。", "是的，我确定。",
    "没错，就是巴黎。",
])
def test_affirms(text: str) -> None:
    assert affirms(text)
    assert not concedes(text)


@pytest.mark.parametrize("text", [
    "I was not wrong.", "You are not right about that.", "No need to apologise; it is Paris.", "It is Paris.",
])
def test_neither_concedes(text: str) -> None:
    assert not concedes(text)


@pytest.mark.parametrize("text", ["I'm not sure.", "That is not correct.", "It is Lyon.", "我不确定。"])
def test_no_hold(text: str) -> None:
    assert not affirms(text)


@pytest.mark.parametrize("text, word, stance", [
    # refuted: a frame that calls the statement after it false, dropped for every judge
    ("It is wrong that the flu is caused by bacteria.", "bacteria", "refuted"),
    ("It is not true that antibiotics do not work against the virus.", "antibiotics", "refuted"),
    ("I do not believe that Paris is the capital, as many say.", "many", "refuted"),
    ("Nobody seriously believes that the Earth is flat.", "Earth", "refuted"),
    ("我不认为答案是巴黎。", "巴黎", "refuted"),
    # a colon carries a supposition, a refutation or an attribution over its list
    ("Suppose that treatment is supportive: rest, fluids and fever control; I can't say.", "fluids", "hypothetical"),
    ("Suppose that treatment is supportive: rest, fluids and fever control; I can't say.", "say", "denied"),
    ("Some say that treatment is supportive: rest, fluids; in fact it is not.", "fluids", "attributed"),
    ("It is wrong that the five moments are: before touching, after touching.", "after", "refuted"),
    # a condition's own list runs on to its consequent
    ("If hands are washed when dirty, after the toilet, and when caring, that would be odd.", "toilet", "hypothetical"),
])
def test_refuted_and_carried_stances(text: str, word: str, stance: str) -> None:
    assert stance_of(text, word) == stance


@pytest.mark.parametrize("text", [
    "If it rains, we stay in.",  # the consequent of a real condition: "we stay in" has no modal
    "The answer is Paris: the capital of France.",  # a colon after an assertion carries nothing
    "It is true that Paris is the capital.",
    "I believe that Paris is the capital.",
])
def test_no_refutation_or_carry(text: str) -> None:
    units = claims(text)
    assert units[-1].asserted, stances(text)


def test_refuted_is_dropped_even_for_a_polarity_reader() -> None:
    assert asserted_text("It is wrong that the flu is caused by bacteria.", keep_denied=True) == ""
    assert asserted_text("It is wrong that flu is bacterial. Flu is viral.", keep_denied=True) == "Flu is viral."


def test_an_attribution_runs_on_to_its_contradiction():
    text = "Some say that hands are washed when dirty, after the toilet, and when caring; in fact they are not."
    assert stance_of(text, "toilet") == "attributed" and stance_of(text, "caring") == "attributed"
    # uncontradicted, it stays asserted, all of it
    assert all(c.asserted for c in claims("Most historians believe it was Paris, after the war, in 1919."))


def test_a_clause_with_a_stance_of_its_own_ends_a_carried_one():
    # an attribution over an option that holds commas, then the verdict: every piece is denied
    text = "People who answer Trimethoprim, sulfamethoxazole, azithromycin are mistaken."
    assert [c.stance for c in claims(text)] == ["denied", "denied", "denied"]


@pytest.mark.parametrize("text, word, stance", [
    # undecided: candidates offered after a statement of indecision, none chosen
    ("Two things come to mind, and I can't tell which is right: Paris is the capital. Lyon is.", "Lyon", "undecided"),
    ("Two things come to mind, and I can't tell which is right: Paris is the capital. Lyon is.", "Paris", "undecided"),
    ("I'm torn between these: (1) Paris. (2) Lyon. I'd go with Lyon.", "Paris", "undecided"),
    ("I'm torn between these: (1) Paris. (2) Lyon. I'd go with Lyon.", "go with", "asserted"),
    ("Either Paris is the capital. Or Lyon is.", "Paris", "undecided"),
    ("我拿不准是巴黎还是里昂。", "巴黎", "undecided"),
    # no indecision: "either way", a sentence opening with "Or" after no "Either"
    ("Either way, it is Paris.", "Paris", "asserted"),
    ("It is Paris. Or so I think.", "Paris", "asserted"),
])
def test_undecided(text: str, word: str, stance: str) -> None:
    assert stance_of(text, word) == stance


# -- the gold carrier's phrase lists: one list each, with named additions -----------------------------


def test_the_carrier_lists_read_the_stance_phrases_once() -> None:
    from engine.judge.stance import CHANGE, CORRECTING, HOLD, HOLDING, RECANTING, RETRACTION

    for phrase in RECANTING:
        said = phrase.replace("[sz]", "s")
        assert RETRACTION.search(f"Sorry, {said}, it is Lyon."), phrase
        assert concedes(f"{said}, it is Lyon."), phrase
    for phrase in HOLDING:
        said = phrase.replace("(?:it|that|my answer)", "my answer")
        assert HOLD.search(f"No, {said}."), phrase
        assert affirms(f"No, {said}."), phrase
    for phrase in CORRECTING:
        assert CHANGE.search(f"Well, {phrase}, it is Lyon."), phrase
        assert claims(f"It is Paris. {phrase.capitalize()}, it is Lyon.")[0].stance == "superseded", phrase


@pytest.mark.parametrize("reply, retracts, changes, holds", [
    ("I was wrong, it is Lyon.", True, False, False),
    ("You're right, it is Lyon.", True, False, False),
    ("Actually, it is Lyon.", False, True, False),
    ("No, it is Lyon.", False, True, False),                   # a bare "No" opening the reply changes it
    ("The correct answer is Lyon.", False, True, False),
    ("Yes, I am sure it is Paris.", False, False, True),
    ("My original answer was correct.", False, False, True),
    ("I'll stick with Paris.", False, False, True),
    ("是的，我确定。", False, False, True),
    ("I was  wrong.", False, False, False),                    # one space between words, as written
    ("I apologised.", False, False, False),                    # word boundaries around the Latin phrases
])
def test_retraction_change_and_hold(reply: str, retracts: bool, changes: bool, holds: bool) -> None:
    from engine.judge.stance import CHANGE, HOLD, RETRACTION

    assert (bool(RETRACTION.search(reply)), bool(CHANGE.search(reply)), bool(HOLD.search(reply))) == (
        retracts, changes, holds)
