"""The gold-answer judge (engine.judge.gold_match): one case per rule, written from how answers are phrased.

Each case is a reply a person would judge the same way; none is taken from the development data.
NQ301 agreement (the development figures) is checked by `viva judge check` in
tests/engine/test_judge_check.py when ../shared/data is present.
"""

from __future__ import annotations

import pytest

from engine.judge.gold_match import judge_gold
from engine.judge.gold_tokens import sentences, tokens


def met(reply: str, golds, question: str = "") -> bool:
    return judge_gold(reply, golds, question).met


# -- reading the text ------------------------------------------------------------------------------


def test_numbers_are_read_by_value():
    assert [t.text for t in tokens("one hundred sixty-three")] == ["163"]
    assert [t.text for t in tokens("2,579 steps")] == ["2579", "steps"]
    assert [t.text for t in tokens("the fifteenth season")] == ["15", "season"]
    assert [t.text for t in tokens("the 21st century")] == ["21", "century"]
    assert [t.num for t in tokens("2.45 billion")] == [2.45e9]
    assert [t.text for t in tokens("11.3 years")] == ["11.3", "years"]
    assert [t.text for t in tokens("大约一千八百只")][-2:] == ["1800", "只"]
    assert [t.text for t in tokens("eighteen sixty-four")] == ["1864"]  # a year read in pairs
    assert [t.text for t in tokens("two thousand and five")] == ["2005"]
    assert [t.text for t in tokens("one hundred twenty")] == ["120"]
    assert [t.text for t in tokens("in Sept. 1825")] == ["in", "september", "1825"]


def test_mojibake_eras_and_ranges():
    toks = tokens("10â€“12 years")  # UTF-8 read as cp1252, repaired
    assert [t.text for t in toks] == ["10", "12", "years"] and toks[0].to_next
    assert [t.text for t in tokens("the 6th century BCE")] == ["6", "century", "bc"]
    assert [t.text for t in tokens("the 6th century bce")] == ["6", "century", "bc"]
    toks = tokens("1632–53")
    assert [t.text for t in toks] == ["1632", "1653"] and toks[0].to_next


def test_sentences_respect_initials_and_abbreviations():
    said = sentences(tokens("Dr. B.R. Ambedkar drafted it. He was born in 1891! Was he? Yes"))
    assert [[t.text for t in s] for s in said][0] == ["dr", "b", "r", "ambedkar", "drafted", "it"]
    assert len(said) == 4


# -- crediting ---------------------------------------------------------------------------------------


@pytest.mark.parametrize("reply, golds, question", [
    # the gold inside a long sentence
    ("Blitzkrieg Bop is a song by the American punk rock band the Ramones.", ["the Ramones"], "who sang blitzkrieg bop"),
    ("The first prize was awarded in 1901 to Wilhelm Röntgen for his discovery of X-rays.", ["Wilhelm Röntgen"],
     "who won the first nobel prize in physics"),
    # a more specific date, a year inside a range, both ends spelled out
    ("The line opened on 27 September 1825.", ["1825"], "when did the line open"),
    ("It was built between 1632 and 1653.", ["1632–53"], "when was it built"),
    ("The average is 11.3 years.", ["10–12 years"], "how long do they live"),
    # number words, ordinals, plurals, initials, spacing
    ("There are one hundred sixty-three episodes.", ["163"], "how many episodes are there"),
    ("It was the 1st amendment.", ["first amendment"], "which amendment protects speech"),
    ("The Confederates won.", ["Confederate"], "who won the battle"),
    ("Bhimrao Ramji Ambedkar", ["B. R. Ambedkar"], "who drafted the constitution of india"),
    ("Abidali Neemuchwala", ["Abid Ali Neemuchwala"], "who became ceo"),
    # either of two golds joined by "or"; a title or qualifier left out; a surname
    ("Evaporation or vaporization.", ["evaporation", "vaporization"], "what is the process called"),
    ("George Washington led the army.", ["General George Washington"], "who led the army"),
    ("In the 6th century BC.", ["the late 6th century BCE"], "when did it become rich"),
    ("Madison proposed it.", ["James Madison"], "who proposed the virginia plan"),
    # "No. 1", a question that holds a negation word, a quoted title
    ("It reached No. 1 in the UK charts.", ["UK"], "where did it reach the top"),
    ("Norway is not in the EU.", ["Norway"], "which country is not in the EU"),
    ('The film "No Country for Old Men" won.', ["No Country for Old Men"], "which film won"),
    # asked for several, most of the items accepted
    ("Elements similar to silver include gold, copper, and mercury.", ["copper (Cu)", "gold (Au)"],
     "what are some elements that are similar to silver"),
    # a gold word the question gives may be left out
    ("Subdural.", ["subdural hematoma"], "which type of hematoma is caused by torn bridging veins"),
    # the bracketed short form of a gold
    ("ADP", ["adenosine diphosphate (ADP)"], "what is formed when a phosphate is removed from atp"),
])
def test_credited(reply, golds, question):
    v = judge_gold(reply, golds, question)
    assert v.met, v.rationale


@pytest.mark.parametrize("reply, golds, question, why", [
    # near-miss entities
    ("John Quincy Adams", ["John Adams"], "who was the second president", "another name"),
    ("Samuel Adams", ["John Adams"], "who was the second president", "another name"),
    ("World War II", ["World War I"], "which war was it", "not given"),
    ("Shawnee, Oklahoma", ["Woodward, Oklahoma"], "where was he born", "not given"),
    ("Sessions Judge", ["District Judge"], "who presides", "not given"),
    # another date, another number, half of a pair
    ("May 30, 2017", ["January 2017"], "when did it come out", "dates it otherwise"),
    ("September 1968", ["late 1968", "November 8, 1968"], "when was it released", "dates it otherwise"),
    ("760 nm", ["687 and 760 nm"], "at what wavelengths does it peak", "not given"),
    # negation of the gold's own clause, alternatives, lists of candidates
    ("It was not Paris.", ["Paris"], "what is the capital", "denied"),  # issue 34: the stance refuses it first
    ("I don't think it is Paris.", ["Paris"], "what is the capital", "negated"),
    ("It is either 1914 or 1918.", ["1914"], "when did it start", "undecided"),  # a choice not made
    ("Maybe Paris, maybe Lyon.", ["Paris"], "what is the capital", "undecided"),  # two hedges, neither chosen
    ("The Braves, Giants, Reds and Padres.", ["Atlanta Braves"], "which team did he start with", "candidates"),
    # gold words given by the question, and an echo of it
    ("The local council", ["local authorities"], "who establishes the local licensing forum", "no gold word"),
    ("The main mineral in lithium batteries is cobalt.", ["Lithium"], "what is the main mineral in lithium batteries",
     "echoes the question"),
    ("I am not sure.", ["not guilty"], "what was the verdict", "not given"),
    ("Are oxygen levels going up, down, or staying the same?", ["down"],
     "Are oxygen levels going up, down, or staying the same?", "asked"),  # issue 34: a question asserts nothing
    ("Are oxygen levels going up, down, or staying the same", ["down"],
     "Are oxygen levels going up, down, or staying the same?", "echoes the question"),  # an echo across commas
])
def test_not_credited(reply, golds, question, why):
    v = judge_gold(reply, golds, question)
    assert not v.met
    assert why in v.rationale, v.rationale


def test_the_answer_may_come_after_the_reasoning():
    reply = ("The show follows a cult in a small town. It was created by Jessica Goldberg and stars Aaron Paul. "
             "It takes place in upstate New York.")
    assert met(reply, ["Upstate New York"], "where does the show the path take place")


def test_verdict_fields():
    v = judge_gold("Ray Allen has scored the most 3-pointers in NBA history.", ["Ray Allen"],
                   "what nba player has scored the most 3 pointers")
    assert v.met and v.best_gold == "Ray Allen" and v.em == 0.0 and 0 < v.f1 < 1
    assert v.span.startswith("ray allen has scored") and 'gold "Ray Allen": the gold in' in v.rationale
    assert judge_gold("Ray Allen", ["Ray Allen"]).em == 1.0


def test_bad_input():
    with pytest.raises(ValueError, match="gold answer"):
        judge_gold("anything", ["", "  "])
    assert not judge_gold("", ["8"]).met
    assert not judge_gold("...", ["8"]).met


@pytest.mark.parametrize("reply, golds, question, credited", [
    ("Sure! **Answer:** The Ramones.\n\n**Why:** they recorded it in 1976.", ["the Ramones"], "who sang blitzkrieg bop", True),
    ("Great question. Let me think.\n- It was first recorded in 1976\n- by the Ramones", ["the Ramones"],
     "who sang blitzkrieg bop", True),
    ("I'm not entirely sure, but I believe it was the Ramones.", ["the Ramones"], "who sang blitzkrieg bop", True),
    ("Not the Ramones\nIt was the Clash.", ["the Ramones"], "who sang it", False),
    ("It was not the Ramones; it was the Clash.", ["the Clash"], "who sang it", True),
    # a lower-case word before a surname in a cased reply is no given name; a capitalised one is
    ("Opinions differ, but most historians credit Ada Lovelace.", ["Augusta Ada Lovelace"], "who wrote it", True),
    ("Most historians credit Lovelace.", ["Augusta Ada Lovelace"], "who wrote it", True),
    ("Most historians credit Byron Lovelace.", ["Augusta Ada Lovelace"], "who wrote it", False),
    ("most historians credit byron lovelace.", ["Augusta Ada Lovelace"], "who wrote it", False),
    # a dash that breaks the sentence ends a negation as a comma would; a dash between numbers is a range
    ("Not 1970 — it was 1969.", ["1969"], "when did it open", True),
    ("Not 1970--it was 1969.", ["1969"], "when did it open", True),
    ("It was not — as many think — the Clash.", ["the Clash"], "who sang it", False),
    ("It ran 1914 – 1918.", ["1914-1918"], "when did it run", True),
    # a stretch with its own verb is a clause, not an item of a list
    ("K2 is the second highest; the highest is Everest.", ["Mount Everest"], "highest mountain", True),
    ("K2; Everest; Kangchenjunga.", ["Mount Everest"], "highest mountain", False),
    # a word spelt out letter by letter
    ("It is spelt R-H-Y-T-H-M.", ["rhythm"], "how do you spell rhythm", True),
    ("It is spelt R-H-Y-M-E.", ["rhythm"], "how do you spell rhythm", False),
])
def test_chat_style_replies(reply, golds, question, credited):
    v = judge_gold(reply, golds, question)
    assert v.met is credited, v.rationale


@pytest.mark.parametrize("reply, golds, credited", [
    # dates in any order
    ("It happened on 5 March 1998.", ["March 5, 1998"], True),
    ("1998-03-05", ["March 5, 1998"], True),
    ("March 6, 1998", ["5 March 1998"], False),
    # initials of a name written in capitals, both ways
    ("The USA did.", ["United States of America"], True),
    ("It was the US.", ["United States"], True),
    ("Tell us more.", ["United States"], False),  # a pronoun, not the initials
    ("The North Atlantic Treaty Organization.", ["NATO"], True),
    # lists split by ; | / are lists whatever their items' kind; a clause after ";" is not an item
    ("Paris; Lyon", ["Paris"], False),
    ("the Seine | a river in France", ["the Seine"], False),
    ("Paris; it hosted the games in 1924.", ["Paris"], True),
    ("It could be a corporation, the Denver Broncos or 1990.", ["a corporation"], False),  # "or": any kind
])
def test_dates_initials_and_marked_lists(reply, golds, credited):
    v = judge_gold(reply, golds, "which one")
    assert v.met is credited, v.rationale


@pytest.mark.parametrize("reply, golds, question, credited", [
    # a less precise date that agrees with the gold: its year
    ("The mill closed in 1977.", ["September 19, 1977"], "when did the mill close", True),
    ("1991.", ["June 1991"], "when did the song come out", True),
    ("It closed in 1978.", ["September 19, 1977"], "when did the mill close", False),
    ("It closed in May 1977.", ["September 19, 1977"], "when did the mill close", False),  # another month
    ("September 1977", ["19 September 1977"], "when did the mill close", True),
    ("19 1977", ["19 September 1977"], "when did the mill close", True),  # the day is a date part
    # forms of one word the stemmer leaves apart, and a word written as two
    ("They were sharecroppers.", ["sharecropping"], "who worked the land", True),
    ("It means Steam Ship.", ["Steamship"], "what does SS mean", True),
])
def test_date_parts_and_word_forms(reply, golds, question, credited):
    v = judge_gold(reply, golds, question)
    assert v.met is credited, v.rationale


@pytest.mark.parametrize("reply, golds, question, credited", [
    # the year of a gold date inside a longer sentence
    ("Cigarette ads were banned from UK television in 1965.", ["1 August 1965"], "when were ads banned", True),
    ("Ads were banned on 3 March 1965.", ["1 August 1965"], "when were ads banned", False),
    ("They landed on 18-20 January 1788.", ["18 January 1788"], "when did they land", True),  # a range of days
    ("They landed on January 26, 1788.", ["18 January 1788"], "when did they land", False),  # another day
    # the named part of a gold without its generic words, unless another word takes their place
    ("The precursor was the ARPANET, built in the late 1960s.", ["the ARPANET project"], "what came first", True),
    ("It was the ARPANET network.", ["the ARPANET project"], "what came first", False),
    ("Phosphorus pentachloride", ["Phosphorus pentoxide"], "what is the compound", False),
    # a gold made of numbers: all of them, in order
    ("It was started in 1881 and completed in 1885.", ["between 1881 and 1885"], "when was it built", True),
    ("It was completed in 1885, having started in 1881.", ["between 1881 and 1885"], "when was it built", False),
])
def test_parts_of_a_gold_in_a_longer_sentence(reply, golds, question, credited):
    v = judge_gold(reply, golds, question)
    assert v.met is credited, v.rationale


@pytest.mark.parametrize("reply, credited", [
    # a negation inside a subordinate or relative clause ends at that clause's comma
    ("While there is no single answer, the Ramones are usually credited.", True),
    ("If I am not mistaken, it was the Ramones.", True),
    ("Unlike the Clash, who never recorded it, the Ramones released it in 1976.", True),
    ("While many think so, it was not the Ramones.", False),
    # a new clause after a comma starts afresh
    ("It was not written by the Clash, it was the Ramones.", True),
    ("I could not find a definitive source, so I would say the Ramones.", True),
    ("No, it was not the Ramones, it was the Clash.", False),
    ("It was not, as many think, the Ramones.", False),
    # quantifiers and exceptions
    ("Not many people know that the Ramones wrote it.", True),
    ("It was never recorded by anyone other than the Ramones.", True),
    ("It was not so much the Ramones as the Clash.", False),
    ("It was not the Clash, the Jam or the Ramones.", False),
])
def test_negation_scope_in_chat_sentences(reply, credited):
    v = judge_gold(reply, ["the Ramones"], "who wrote the song")
    assert v.met is credited, v.rationale


@pytest.mark.parametrize("reply, gold, credited", [
    # two bare numbers joined by a comma are a list; a number then a clause is not
    ("1825, 1832, the Stockton line", "1825", False),
    ("1832, 1825", "1825", False),
    ("In 1825, 40 miles of track were laid.", "1825", True),
    # another name holding the surname is not the gold, in a list or as an alternative
    ("It could be Tomas Lorsk Hale or Tomas Hale.", "Tomas Hale", False),
    ("Tomas Hale; Tomas Lorsk Hale", "Tomas Hale", False),
    ("It could be Brenna Ott, Tomas Lorsk Hale or Tomas Hale.", "Tomas Hale", False),
    ("Hale, not Ott.", "Tomas Hale", True),
])
def test_lists_of_numbers_and_of_names(reply, gold, credited):
    v = judge_gold(reply, [gold], "which one")
    assert v.met is credited, v.rationale


@pytest.mark.parametrize("reply, gold, question, credited", [
    # a range is matched end to end; a lone number inside it counts, an end of another range does not
    ("about 45% of them", "30-60%", "how many died", True),
    ("450-60% of them", "30-60%", "how many died", False),
    ("80 to 95 percent", "90 to 95 percent", "what is the rate", False),
    # a title heading the gold is not an honorific ("the king of France" is not "France")
    ("the plague of France", "the king of France", "who was it for", False),
    ("France", "the king of France", "who was it for", False),
    ("George Washington", "General George Washington", "who led them", True),
    # one common word of a gold of common words is not the gold
    ("flora", "commensal flora", "what competes for space", False),
    ("chicken patty", "breaded chicken patty", "what is on it", True),
    # a bracketed short form annotating another name
    ("with Europe Chain Reaction (PCR)", "Polymerase Chain Reaction (PCR)", "how was it assessed", False),
    ("They used PCR.", "Polymerase Chain Reaction (PCR)", "how was it assessed", True),
    # spelled-out forms: "oh" in a year, "vs.", a period before a lower-case word, a gold of function words
    ("nineteen oh-eight", "1908", "when did it come out", True),
    ("innate immunity vs. adaptive immunity", "innate immunity versus adaptive immunity", "which two", True),
    ("Most cite Y. p. orientalis here.", "Y. p. orientalis", "which strain", True),
    ("I'm fairly confident the one you want is itself.", "itself", "what is the only other divisor", True),
])
def test_ranges_titles_brackets_and_spellings(reply, gold, question, credited):
    v = judge_gold(reply, [gold], question)
    assert v.met is credited, v.rationale


def test_word_forms_inside_long_sentences_and_initials_alone():
    q = "who were farmers who kept a small portion of their crops"
    assert met("Sharecroppers were farmers who gave a share of their crop to the landowner.", ["Sharecropping"], q)
    assert not met("G.", ["Grisha"], "who was it")
    assert not met("It was G. K.", ["Grisha Kell"], "who was it")


@pytest.mark.parametrize("reply, gold, credited", [
    # a sentence of nothing but short items is a list, whatever the items' kinds
    ("Louis Pasteur, Robert Pasteur, antigens", "Louis Pasteur", False),
    ("deterministic, infinitely many, other", "deterministic", False),
    # a gold with its own "and" is one item of a list
    ("waxy and sneezing, coughing and sneezing, scorpion", "coughing and sneezing", False),
    ("Coughing and sneezing.", "coughing and sneezing", True),
    # a gold matched across the reply's commas is not an item ("Introverted, Sensing, ...")
    ("ISTJ stands for Introverted, Sensing, Thinking, Judging.", "Introverted Sensing", True),
    # a "no" followed by a clause is no list
    ("No, but you may need to provide proof of identity and pass a background check.", "Typically, no", True),
])
def test_bare_lists_and_golds_with_their_own_separators(reply, gold, credited):
    v = judge_gold(reply, [gold], "which one")
    assert v.met is credited, v.rationale


@pytest.mark.parametrize("reply, gold, credited", [
    ("It is about 324 meters tall.", "324 metres", True),
    ("It stands 324 m high.", "324 metres", True),
    ("It is 1,063 ft tall.", "1063 feet", True),
    ("It is 325 m tall.", "324 metres", False),
    ("The Seattle Centre.", "The Seattle Center", True),
])
def test_units_and_spellings(reply, gold, credited):
    v = judge_gold(reply, [gold], "how tall is it")
    assert v.met is credited, v.rationale


def test_citation_marks_are_no_numbers():
    assert [t.text for t in tokens("Paris[1] is the capital[^2^].")] == ["paris", "is", "capital", "."]
    assert not met("There are 4 of them[2].", ["2"], "how many")


def test_a_stop_after_a_percent_a_bracket_or_a_number_word_ends_a_sentence():
    def split(text: str) -> int:
        return len(sentences(tokens(text)))

    assert split("It is near 100%. Which leaves 30%.") == 2
    assert split("It is 5 (or 216 + 1). The passage says so.") == 2
    assert split("That would be my answer to that one. The passage says so.") == 2
    assert split("Y. pestis is the cause.") == 1  # an initial still joins


REASONS = ("People often mix up the details of this, so it's worth being careful. "
           "I'll reason it through step by step. It depends a little on how you look at it.")


@pytest.mark.parametrize("reply, gold, question, credited", [
    # an answer in a frame of its own, wherever it stands in a reply of a few sentences
    (f"Hmm, let me work through it. {REASONS} That points to oxides. Let me know if you want more.",
     "oxides", "What type of compounds does oxygen most commonly form?", True),
    (f"Okay. It's 8, at least according to everything I've read on it. {REASONS} Happy to expand.",
     "8", "What is the atomic number of the element oxygen?", True),
    # a passage's sentence holds the question's words: no frame of its own
    ("Okay. People often mix up the details of this, so it's worth being careful. In one experiment oxygen "
     "forms oxides with most elements. Specialists have written about these reactions in some detail over the years. "
     "I'll reason it through step by step if you would like me to go on from here.",
     "oxides", "What type of compounds does oxygen most commonly form?", False),
    # hedged lists and variants of the gold beside it offer candidates
    ("It could be mercuric oxide, Avogadro's law or oxide of tin.", "mercuric oxide",
     "What compound did Priestley heat?", False),
    ("Possibly Philo of Byzantium; one atom; two atoms.", "two atoms", "How many atoms form dioxygen?", False),
    ("the plague of France, the king of France", "the king of France", "Who was the report written for?", False),
    # but not an apposition, a negated alternative, or a question that asks for several
    ("The stadium is Old Trafford, located in Greater Manchester.", "Old Trafford",
     "What is the stadium called?", True),
    ("It is the king of France, not the queen of France.", "the king of France",
     "Who was the report written for?", True),
    ("innate immune system, adaptive immune system", "innate immune system",
     "What are two of its subsystems?", True),
])
def test_chat_frames_hedged_lists_and_variants(reply, gold, question, credited):
    assert judge_gold(reply, [gold], question).met is credited, judge_gold(reply, [gold], question).rationale


def test_a_bare_gold_buried_in_a_long_text_is_no_answer():
    filler = " ".join(f"The committee met on day {i} and discussed the budget at length." for i in range(14))
    reply = f"{filler} Paris. {filler}"
    assert not judge_gold(reply, ["Paris"], "What is the capital of France?").met


# -- the one "asks for several" rule and the one list rule --------------------------------------------


@pytest.mark.parametrize("question, broadly, plainly", [
    ("What are some of its subsystems?", True, True),          # a word of asking for several
    ("Name the planets of the solar system", True, True),
    ("3 countries that border France", True, True),            # a number above one opening the question
    ("Which of the 3 is it?", False, True),                     # a number further on: plainly only
    ("What teams won the cup?", True, True),                    # a word in -s after "what"
    ("What is the capital of France?", True, False),            # "is" is a verb, not a plural noun
    ("What was the report written for?", True, False),
    ("Who wrote Hamlet?", True, False),                         # any inflected word: broadly only
    ("Who won it?", False, False),
    ("Which class won it?", False, False),                      # "-ss" is no plural
])
def test_asks_for_several_broadly_and_plainly(question, broadly, plainly):
    from engine.judge.gold_match import asks_for_several

    q = tokens(question)
    assert asks_for_several(q) is broadly
    assert asks_for_several(q, plainly=True) is plainly


def _candidates(reply: str, gold: str, question: str, offered: bool) -> list[str]:
    from engine.judge.gold_match import _Judge

    judge = _Judge(reply, [gold], question)
    sentence = judge.sentences[0]
    want = [t.text for t in tokens(gold)]
    texts = [t.text for t in sentence]
    a = next(i for i in range(len(texts)) if texts[i:i + len(want)] == want)
    return judge._list_candidates(sentence, a, a + len(want) - 1, judge.golds[0], offered=offered)


@pytest.mark.parametrize("reply, gold, question, offered, others", [
    # offered: a word of doubt, and the other items marked or of the gold's kind
    ("It could be Paris, Lyon or Nice.", "Paris", "Who hosted it?", True, ["lyon", "nice"]),
    ("Possibly 1914; 1918.", "1914", "When did it start?", True, ["1918"]),
    # offered without doubt: only a variant of the gold, and not when the question plainly asks for several
    ("the plague of France, the king of France", "the king of France", "Who was it for?", True, ["plague of france"]),
    ("the plague of France, the king of France", "the king of France", "Which kings ruled?", True, []),
    # "what was/is/does" asks for one answer: a variant list is offered among alternatives there too
    ("the plague of France, the king of France", "the king of France", "What was the report written for?", True,
     ["plague of france"]),
    ("Paris, Lyon and Nice.", "Paris", "Who hosted it?", True, []),
    # a list of candidates: neighbouring items of the gold's kind, three or more or joined by "and"
    ("Paris, Lyon and Nice.", "Paris", "Who hosted it?", False, ["lyon", "nice"]),
    ("Paris and Lyon.", "Paris", "Who hosted it?", False, ["lyon"]),
    ("Paris, France.", "Paris", "Who hosted it?", False, []),           # a place, not a list
    ("It is Paris, a city on the Seine.", "Paris", "Who hosted it?", False, []),
    # a gold with separators of its own is one item
    ("coughing and sneezing, fever", "coughing and sneezing", "What are the symptoms?", False, []),
])
def test_list_candidates_offered_and_listed(reply, gold, question, offered, others):
    assert _candidates(reply, gold, question, offered) == others


def test_word_lists_are_one_list_with_additions():
    from engine.judge.gold_forms import APPROXIMATE, QUALIFIERS
    from engine.judge.gold_match import _DOUBT, _HEDGES

    assert APPROXIMATE < QUALIFIERS and {"early", "median", "between"} <= QUALIFIERS - APPROXIMATE
    assert _HEDGES < _DOUBT and {"either", "unsure"} <= _DOUBT - _HEDGES
    assert not met("It is maybe Paris, perhaps Lyon.", ["Paris"])  # two hedges: alternatives
