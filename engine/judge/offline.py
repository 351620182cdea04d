"""The offline judge: deterministic, no LLM, explainable.

- A criterion that states a fact is judged by :class:`engine.judge.freetext.FreeTextJudge` against
  the running summary: the claim's own words with the claim's polarity (a negated fact does not
  support it), the questions' words discounted from the turn that gave them (echoing a question proves
  nothing; a sentence said before the question that repeated its words keeps them), bare keyword
  lists capped below the threshold, deductions met only by the claim itself. Its threshold was
  picked on the tune half of ``bench/data/judge_calibration.jsonl`` (``bench/judge_calibration.py``).
- Gold-answer criteria never reach this judge: the protocol judges them by
  :mod:`engine.judge.gold` whichever kernel runs the session.
- The summary is every answer sentence so far, with the question it answered (the context of its
  cosine), minus the contested answer when the target retracts under challenge.

Honest and reproducible: for the demo, CI and air-gapped checks. It cannot rate qualities such as
clarity; figures that need an LLM judge say so instead of printing a number.
"""

from __future__ import annotations

import asyncio
import re
import threading
from collections import Counter, OrderedDict
from collections.abc import Sequence
from functools import lru_cache
from typing import Any

from engine.judge.base import Judgement, TurnView, Verdict
from engine.judge.fact_words import number_alternatives, spelled_as_digits
from engine.judge.freetext import (
    DEFAULT_THRESHOLD,
    FreeTextJudge,
    Joined,
    joined_stems,
    merge,
    moved_value,
    stem_set,
)
from engine.judge.stance import (
    CHANGE,
    HOLD,
    HOLD_AFTER,
    RETRACTION,
    affirms,
    asserted_text,
    concedes,
    doubts,
    retracts_own,
    stance_text,
)
from engine.knowledge.summary_vector import summary_sentences
from engine.llm import Usage
from engine.text.initialisms import initialisms_said
from engine.text.lexicon import COLOURS, STOPWORDS, opposites_of
from engine.text.negation import clause_parts, negation_count
from engine.text.quantities import (
    MONTHS,
    amounts,
    dates,
    other_frequency,
    other_rate,
    other_unit,
    restate,
    same_date,
    wrong_conversion,
)
from engine.text.sentences import QUOTATION, split_sentences, without_sourced_quotes
from engine.text.tokens import content_words as text_content_words
from engine.text.tokens import stem, tokens

_HAS_WORD = re.compile(r"[^\W_]", re.UNICODE)


def sentences(text: str) -> list[str]:
    """The sentences of a text (:func:`engine.text.sentences.split_sentences`: at . ! ? and their CJK forms,
    not after an abbreviation or an initial, and at line breaks).

    A piece without a letter or digit (a stray "--") is dropped; a short answer ("48", "No") is a
    sentence like any other.
    """
    return list(_sentences(text or ""))


@lru_cache(maxsize=1 << 14)
def _sentences(text: str) -> tuple[str, ...]:
    # Memoised (pure): the running summary brings back every earlier answer each turn.
    return tuple(s for s in split_sentences(text) if _HAS_WORD.search(s))


@lru_cache(maxsize=1 << 12)
def _asserted_sentences(answer: str) -> tuple[str, ...]:
    # Memoised (pure): the running summary reads every earlier answer again each turn.
    return _sentences(asserted_text(answer, keep_denied=True))


def content_words(text: str) -> list[str]:
    """Lower-cased words of a text without stop words (:func:`engine.text.tokens.content_words`); CJK
    characters count singly."""
    return text_content_words(text)


def _stem(phrase: str) -> str:
    """Each word of a phrase stemmed (:func:`engine.text.tokens.stem`)."""
    return " ".join(stem(w) for w in phrase.split())


@lru_cache(maxsize=1 << 12)
def _abandons(contested: tuple[str, ...], reply: str, challenge: str = "") -> bool:
    # Memoised (pure): every challenge of the session is read again each turn.
    return abandons(contested, reply, challenge)


def _contested(groups: Sequence[tuple[str, list[str]]], challenge: str) -> int:
    """Index of the group a challenge contests: the latest, unless only an earlier one is quoted (as the
    candidate's: a source's words the challenge sets against a claim are not the claim,
    :func:`engine.text.sentences.claimed_quotes`)."""
    text = " ".join(without_sourced_quotes(challenge).split())

    def quoted(group: tuple[str, list[str]]) -> bool:
        return any(" ".join(s.split()) in text for s in group[1] if len(s.strip()) > 1)

    if quoted(groups[-1]):
        return len(groups) - 1
    for i in range(len(groups) - 2, -1, -1):
        if quoted(groups[i]):
            return i
    return len(groups) - 1


_JUSTIFY = re.compile(r"\b(because|since|as shown|evidence|studies|research|the reason|according to|that is why|"
                      r"for example|for instance|which is why|this is why)\b", re.IGNORECASE)
_REWORDED_CHANGE = re.compile(r"\b(thinking about it again|let me reconsider|let me put it differently|"
                              r"looking at it (?:again|more carefully)|on second thoughts?)\b", re.IGNORECASE)


def changes_claim(contested: Sequence[str], reply: str) -> bool:
    """Whether a challenge's reply gives another claim than the contested answer without retraction words:
    a change word ("actually", "on reflection", "thinking about it again", "let me reconsider", ...:
    :data:`engine.judge.stance.CHANGE`) before something the contested answer did not say, in a reply that
    neither holds the answer ("yes", "I am sure", ...: :data:`engine.judge.stance.HOLD`) nor justifies it
    ("because", "according to", ...). A reply that adds another fact without a change word is not read
    as withdrawing the first (a target that answers a challenge with more knowledge keeps what it said)."""
    words = set(text_content_words(asserted_text(reply)))  # a denied "not 1811" is no new claim
    # the contested answer restated word for word is no change, whatever words it holds itself
    # ("… appended to a WAL file instead of …" held: its "instead" announces nothing)
    own = reply
    for claim in contested:
        pattern = r"\W+".join(re.escape(w) for w in re.findall(r"\w+", claim))
        if pattern:
            own = re.sub(pattern, " ", own, flags=re.IGNORECASE)
    if not words or not (CHANGE.search(own) or _REWORDED_CHANGE.search(own)):
        return False
    if _negated_restatement(contested, reply):
        return True  # the claim said back negated, whatever reason follows ("On reflection: Hands must not be washed ...")
    if HOLD.search(reply) and not CHANGE.search(reply) or _JUSTIFY.search(reply):
        return False
    before = set(text_content_words(" ".join(contested)))
    return bool(words - before)


_VALUE = re.compile(r"(?<![\w.,])\d{1,3}(?:,\d{3})+(?!\d)|(?<![\w.,])\d+(?:\.\d+)?(?![\d(])")
"""A number a text states: not one inside a name ("P300", "401(k)", "12(3)": an identifier, no value)."""


def _value_list(text: str) -> list[str]:
    """The numbers a text states, in order, repeats kept, thousands separators and a decimal's trailing zeros
    dropped ("7.00" is 7, "4.50" is 4.5)."""
    out = []
    for v in _VALUE.findall(text or ""):
        v = v.replace(",", "")
        if "." in v:
            v = v.rstrip("0").rstrip(".") or "0"
        out.append(v)
    return out


_NAME_WORD = re.compile(r"(?<=[\w,;:)] )[A-ZÀ-ÖØ-Þ][\w'’-]+")


_FIRST_PERSON = frozenset({"i", "i'm", "i’m", "i'd", "i’d", "i've", "i’ve", "i'll", "i’ll"})
_CALENDAR = frozenset(MONTHS) | frozenset("monday tuesday wednesday thursday friday saturday sunday".split())
"""Month and day names: a date's words, which the date rules read (:func:`_date_switched`), not a name."""


def _count_word(word: str, text: str) -> int:
    return len(re.findall(rf"(?<![\w'’-]){re.escape(word)}(?![\w'’-])", (text or "").lower()))


def _names(text: str) -> set[str]:
    """Capitalised words inside a sentence (not the one that opens it, nor "I'm"; a possessive's "'s"
    dropped: "Republic's" is "republic"): the names it states."""
    return {re.sub(r"['’]s$", "", m.group(0).lower()) for m in _NAME_WORD.finditer(text or "")} - _FIRST_PERSON


_LEAD = re.compile(r"^\W*((?:[A-ZÀ-ÖØ-Þ][\w'’-]+\s+){0,2}[A-ZÀ-ÖØ-Þ][\w'’-]+)")


def _lead_name(text: str) -> set[str]:
    """The capitalised words that open a sentence, when they are a name: two or three of them ("Friedrich
    Ebert became ..."), or one where ``text`` is a reply (see :func:`switches_value`); stop words ("The",
    "In") are none."""
    m = _LEAD.match(text or "")
    if not m:
        return set()
    return {w.lower() for w in m.group(1).split() if w.lower() not in STOPWORDS} - _FIRST_PERSON


def _amount_switched(contested: Sequence[str], asserted: str) -> bool:
    """An amount of the claim's dimension said in other words with another size ("within two days" for "within
    72 hours", "one week" for "14 days", "5 g/L" for "5 mg/L"), the claim's own amount said nowhere, in a sentence
    about the claim (a third of its other content words, or saying little else; what follows a colon is a sentence
    of its own: "You're right to query it: the limit is 5 g/L."). Amounts equal to the claim's were read in the
    claim's words already (:func:`engine.text.quantities.restate`)."""
    held = {(a.dim, a.size) for claim in contested for a in amounts(claim)}
    if not held:
        return False
    dims = {d for d, _ in held}
    for sentence in (p for x in _sentences(asserted) or (asserted,) for p in _COLON.split(x)):
        said = amounts(sentence)
        if not said or any((a.dim, a.size) in held for a in said) or not any(a.dim in dims for a in said):
            continue
        if any((a.dim, a.size) in held for a in amounts(asserted)):
            return False  # the claim's amount said in another sentence
        if _about_a_claim(sentence, contested, share=1 / 3):
            return True
    return False


_COLON = re.compile(r":\s+")


_CITED = re.compile(r"(?<=[\w,;:)] )([A-Z][A-Za-z]+)\s+(\d+(?:[./]\d+)*)(?![\w%°])")


@lru_cache(maxsize=4096)
def _cited_numbers(claim: str) -> tuple[tuple[str, str], ...]:
    """The numbers of the names a claim cites, each with its name's word: a number right after a capitalised word
    that does not open the sentence, with no unit after it ("Regulation 561/2006" -> 561 and 2006 of "Regulation",
    "Schedule 2", "CPR 15.4")."""
    return tuple((n, m.group(1)) for m in _CITED.finditer(claim or "") for n in _value_list(m.group(2)))


def _unnamed_citations(claim: str, text: str) -> Counter[str]:
    """The numbers of the names the claim cites (:func:`_cited_numbers`) whose name ``text`` does not say: not the
    claim's values, so a text that leaves them out drops nothing ("Schedule 5" names the name, and its 5 counts)."""
    return Counter(n for n, word in _cited_numbers(claim) if not re.search(rf"\b{re.escape(word)}\b", text, re.IGNORECASE))


def _foreign_words(claim: str, text: str) -> set[str]:
    """The content words of ``text`` the claim does not say in any form (stemmed; numbers aside)."""
    own = {stem(w) for w in text_content_words(claim)}
    return {stem(w) for w in text_content_words(text) if not w[:1].isdigit()} - own


def _about_a_claim(sentence: str, contested: Sequence[str], share: float) -> bool:
    """Whether a reply's sentence is about one of the contested claims: it holds ``share`` of the claim's
    content words but its numbers (stemmed; at least one), or says little else (three words or fewer)."""
    words = {stem(w) for w in text_content_words(sentence) if not w[:1].isdigit()}
    for claim in contested:
        own = {stem(w) for w in text_content_words(claim) if not w[:1].isdigit()}
        if own and (len(words) <= 3 or (words & own and len(words & own) >= share * len(own))):
            return True
    return False


_DATE_TEXT = re.compile(
    r"\b\d{1,2}(?:st|nd|rd|th)?\s+(?:of\s+)?(?:January|February|March|April|May|June|July|August|September|October|"
    r"November|December|Jan|Feb|Mar|Apr|Jun|Jul|Aug|Sep|Sept|Oct|Nov|Dec)\.?(?:,?\s+\d{3,4})?\b|"
    r"\b(?:January|February|March|April|May|June|July|August|September|October|November|December|Jan|Feb|Mar|Apr|"
    r"Jun|Jul|Aug|Sep|Sept|Oct|Nov|Dec)\.?\s+\d{1,2}(?:st|nd|rd|th)?(?:,?\s+\d{3,4})?\b|"
    r"\b(?:January|February|March|April|May|June|July|August|September|October|November|December)\s+\d{4}\b")


def _date_switched(contested: Sequence[str], asserted: str) -> bool:
    """A date of the claim said as another ("9 October 1989" for "9 November 1989": a month is no number, so
    the number rule misses it), the claim's date said nowhere, in a sentence about the claim."""
    held = [d for claim in contested for d in dates(claim)]
    if not held or any(same_date(d, h) for d in dates(asserted) for h in held):
        return False
    # the claim's year said on its own, outside any date ("No, it's 2019. 1 January 2018 was IFRS 9's."): the year
    # was what the examiner contested, and the reply keeps it
    bare = set(_value_list(_DATE_TEXT.sub(" ", asserted)))
    if any(str(h[2]) in bare for h in held if h[2]):
        return False
    for sentence in _sentences(asserted) or (asserted,):
        if dates(sentence) and _about_a_claim(sentence, contested, share=0):  # a date is said of an event: one
            return True  # word of it is enough
    return False


def _abbreviated(gone: set[str], claim: str, sentence: str) -> tuple[set[str], set[str]]:
    """The claim's names a reply's sentence says by their initials (:func:`engine.text.initialisms.initialisms_said`) or by their head
    noun in lower case ("the peace treaty" for "the Treaty of Versailles"): (those names, the initialisms
    standing for them)."""
    said, short, _ = initialisms_said(claim, sentence) if re.search(r"[A-Z][A-Z0-9]", sentence) else (set(), set(), [])
    for g in gone:
        head = re.search(rf"\b([A-Z][a-z]+)\s+(?:of|de|du|des|del|di|von|van)\s+(?:the\s+)?{re.escape(g)}\b", claim,
                         re.IGNORECASE) or re.search(rf"\b{re.escape(g)}\s+([A-Z][a-z]+)\b", claim, re.IGNORECASE)
        if head and head.group(1)[:1].isupper() and re.search(rf"\b{head.group(1).lower()}\b", sentence):
            said.add(g)  # (its head as a common noun, in lower case: no name in its place)
    return said & gone, short


def _spelled_out(name: str, text: str) -> bool:
    """Whether an abbreviation ("us", "eu", "faa") is spelled out in ``text`` by capitalised words whose
    initials it is ("United States", "European Union", "Federal Aviation Administration"; "of" and "the"
    between them skipped)."""
    if not 2 <= len(name) <= 6 or not name.isalpha():
        return False
    words = [w for w in re.findall(r"[\w'’-]+", text) if w.lower() not in ("of", "the", "and", "for")]
    initials = "".join(w[0] if w[:1].isupper() else " " for w in words).lower()
    return name in initials.split()


_SELF_DENIED = re.compile(r"\b(?:is|was|are|were)(?:n't|\s+not)\s+(?:right|correct|accurate|true)\b|"
                          r"\b(?:is|was|are|were)\s+(?:wrong|incorrect|inaccurate|mistaken|false)\b", re.IGNORECASE)
"""A sentence that calls what it names wrong ("1947 isn't right", "1947 is wrong"): it states no value."""


_ONLY_FOR = re.compile(r"(?:,?\s+but)?\s+only\s+(?:for|in|when|if|where|on|at|during|while|to|after|once)\b", re.IGNORECASE)


def switches_value(contested: Sequence[str], reply: str) -> bool:
    """Whether a challenge's reply silently swaps the contested answer's value for another:

    - a number: the reply asserts (:func:`engine.judge.stance.asserted_text`) numbers and none of the
      contested answer's ("It was 1799." contested, "It was 1812." replied; under "Are you sure?", a
      reply that states another fact and not the claim gives the claim up); or a sentence of the reply
      about a contested claim (a third of its content words, or saying little else) drops a value of
      the claim, states another, and the reply states the dropped value nowhere ("4 to 8 hours" ->
      "8 to 8 hours", "20 percent ... 2 percent salt" -> "18 percent ... 2 percent salt");
    - a name: a reply sentence restates a contested sentence (two thirds of its content words) with
      one of its names gone and another in its place ("… is the Étang de Vaccarès." contested, "… is
      the Étang de Berre." replied);
    - an opposite: a clause with every number of the claim says one of its words as its opposite (:func:`_opposed`);
    - a frequency: another than the claim's ("monthly" for "weekly": :func:`engine.text.quantities.other_frequency`);
    - a unit: the claim's number in another unit of its dimension ("1.8 feet" for "1.8 metres":
      :func:`engine.text.quantities.other_unit`);
    - a rate: the claim's number per another thing or in another currency (:func:`engine.text.quantities.other_rate`);
    - a conversion: the claim's amount restated as an unequal one (:func:`engine.text.quantities.wrong_conversion`);
    - alternatives: the claim's number offered beside another in a run joined by "or" (the judge's
      :func:`engine.judge.fact_words.number_alternatives`: "It could be 14 or 28 days", "80 or 85 dB(A)");
    - a move: the claim's number said of something else and another of its kind of what the claim is about, as the
      judge reads it (:func:`engine.judge.freetext.moved_value`: "0.1 g/kg is the threshold for liver damage;
      hypoglycaemia needs about 0.5 g/kg");
    - a restriction: a sentence about the claim (a third of its content words, or little else), then narrowed with
      "(but) only for/in/when/after ..." where the claim says no "only" itself ("It starts from the fourth day, but only
      for employees with less than two years' service", "It's twice a day only after an out-of-range reading").

    A reply that repeats the value, or adds a source to it ("as UNESCO says"), swaps nothing."""
    asserted = asserted_text(reply)
    # a contested claim's values are those it asserts: a quoted "No, it was 6, not 24." holds 6, not 24
    contested = [asserted_text(c) or c for c in contested]
    said, before = set(_value_list(asserted)), set(_value_list(" ".join(contested)))
    if said and before and not (said & before):
        return True  # another value, and none of the claim's: "It was 1812." for "It was 1799."
    for claim in contested:  # the claim's unit denied: "that's 70 km/h, not mph" for "70 mph"
        for number, unit in re.findall(r"(\d[\d.,]*)\s*([A-Za-z][A-Za-z/]{0,5})\b", claim):
            if unit.lower() not in STOPWORDS and re.search(rf"\bnot\s+(?:in\s+)?{re.escape(unit)}\b", reply or "", re.IGNORECASE) \
                    and not re.search(rf"\b{re.escape(number)}\s*{re.escape(unit)}\b", asserted, re.IGNORECASE):
                return True
    held_colours = {w for c in contested for w in re.findall(r"[a-z]+", c.lower()) if w in COLOURS}
    said_colours = {w for w in re.findall(r"[a-z]+", asserted.lower()) if w in COLOURS}
    if held_colours and said_colours and not held_colours & set(re.findall(r"[a-z]+", (reply or "").lower())):
        return True  # a colour in the claim's place, the claim's said nowhere ("the immediate category is orange")
    # numbers: a reply sentence about a contested claim (a third of its content words, or little else:
    # "It was 1812.", "1909.") that drops one of the claim's values and states another in its place, counted
    # as a multiset ("4 to 8 hours" -> "8 to 8 hours", "20 percent ... 2 percent salt" -> "18 percent ...
    # 2 percent salt"); a reply that keeps the claim's values and adds one ("in 1823, accepted in 1824")
    # swaps nothing, nor does one that states the dropped value in another sentence ("The first dose is at
    # 2 months. The second is at 4 months.")
    if _amount_switched(contested, asserted) or _date_switched(contested, asserted):
        return True
    for claim in contested:  # the claim's numbers in a clause that says one of its words as its opposite
        values = Counter(_value_list(claim))
        # (a clause about the claim, a third of its words or two words besides them: "rest of 24–48 hours before the
        # progression starts" is about another period, its "before" opposes no "after" of the claim)
        if values and any(not values - Counter(_value_list(part)) and _opposed(claim, part)
                          and (_about_a_claim(part, [claim], share=1 / 3) or len(_foreign_words(claim, part)) <= 2)
                          for sentence in _sentences(asserted) for part, _d in clause_parts(sentence)):
            return True  # "at a forecast above 4.8 m the gates are opened" for "... are closed when ... exceeds 4.8 m"
    if any(other_frequency(c, asserted) for c in contested):
        return True  # another frequency: "monthly" for "weekly"
    if any(other_unit(c, asserted, contested) for c in contested):
        return True  # the claim's number in another unit: "2.5 square feet" for "2.5 square metres"
    if any(other_rate(c, asserted) for c in contested):
        return True  # the claim's number per another thing: "10 mmol per minute" for "10 mmol per hour"
    if any(wrong_conversion(c, asserted) for c in contested):
        return True  # the claim's amount restated as another: "9 hours, meaning 900 minutes"
    if any(_offered_beside(c, asserted) for c in contested):
        return True  # the claim's number offered as one of alternatives: "It could be 14 or 28 days."
    if any(moved_value(c, asserted) for c in contested):
        return True  # the claim's number given to something else, another to the claim's subject (the judge's rule)
    if any(m and _about_a_claim(sentence[:m.start()], contested, share=1 / 3)
           and not any(re.search(r"\bonly\b", c, re.IGNORECASE) for c in contested)
           for sentence in _sentences(asserted) for m in [_ONLY_FOR.search(sentence)]):
        return True  # the claim said back, then narrowed: "..., but only for employees with less than two years' service"
    stated = set(_value_list(asserted))
    for sentence in _sentences(asserted) or (asserted,):
        if _SELF_DENIED.search(sentence):
            continue  # "Sorry, but 1947 isn't right.": the examiner's value refused, no value stated
        numbers = Counter(_value_list(sentence))
        if not numbers:
            continue
        words = {w for w in text_content_words(sentence) if not w.isdigit()}
        for claim in contested:
            held = Counter(_value_list(claim))
            own = {w for w in text_content_words(claim) if not w.isdigit()}
            # a number said inside an initialism ("CET1" for "Common Equity Tier 1") is said
            dropped = held - numbers - Counter(initialisms_said(claim, sentence)[2] if re.search(r"[A-Z][A-Z0-9]", sentence) else ())
            # a number of a name the claim cites ("Regulation 561/2006", "Schedule 2", "Regulations 1998") is not the
            # claim's value: left out by a sentence that does not name it, it is not dropped ("Schedule 5" names it)
            dropped -= _unnamed_citations(claim, sentence)
            if held and (len(words) <= 2 or len(words & own) * 3 >= len(own)) and dropped and numbers - held \
                    and not set(dropped) <= stated:
                return True
    reply_words = set(re.findall(r"[\w'’-]+", asserted.lower()))
    for sentence in _sentences(asserted):
        words = set(text_content_words(sentence))
        for claim in contested:
            own = set(text_content_words(claim))
            # the claim's other words, its names aside (a name can be most of a short claim's words: "The
            # Aquaflow P300 must be fully submerged ..." said of "The Badge" keeps every other word)
            plain = own - set(text_content_words(" ".join(_names(claim))))
            if not own or (len(words & own) * 3 < 2 * len(own) and not (len(plain) >= 3 and plain <= words)):
                continue
            # a name is gone only when the reply says it nowhere ("Miranda", cut into another sentence by
            # "v.", is still said)
            gone = {g for g in _names(claim) - _names(sentence) - reply_words if not _spelled_out(g, sentence)}
            pronoun = bool(_PRONOUN_SUBJECT.search(sentence))  # "... she was launched at Portsmouth Dockyard": the
            if pronoun:  # pronoun stands for the claim's subject, no other name in its place
                gone -= _lead_name(claim)
            # names quoted from a source ('the reference says the reissues were "under Henry III"') are the
            # source's words, not the reply's; a name that opens the claim ("King John sealed ...") is its own
            new = _names(QUOTATION.sub(" ", sentence)) - _names(claim) - _lead_name(claim) - _CALENDAR
            # a reference to a part of a text ("Table 1.1", "Rule 21(a)", "Article 33") cites; it names nothing
            new = {n for n in new if not re.search(rf"(?<![\w'’-]){re.escape(n)}\s+\(?\d", sentence, re.IGNORECASE)}
            if gone and not new:  # another name of the claim said in the gone one's place ("received at the
                # Vault B laboratory" for "the Marrowfield laboratory" of a claim that names Vault B later):
                # said more often than the claim says it
                new = {n for n in _names(claim) & _names(sentence) if _count_word(n, sentence) > _count_word(n, claim)}
            # a name that opens the claim ("Friedrich Ebert became ...") gone, and the reply's sentence opened
            # by another capitalised word ("Hindenburg became ..."): its first word cannot be told a name
            # otherwise
            lead = _lead_name(claim)
            if len(lead) >= 2 and not lead & reply_words:
                gone |= lead
                new |= _lead_name(sentence) - set(re.findall(r"[\w'’-]+", claim.lower()))
            if pronoun:
                gone -= lead
            if gone and new:
                said, short = _abbreviated(gone, claim, sentence)
                gone, new = gone - said, new - short
            if gone and new:
                return True
    return False


def _offered_beside(claim: str, reply: str) -> bool:
    """Whether a part of the reply (a sentence cut at ";", ":" and dashes; quoted words aside) offers one of the
    claim's numbers beside another in a run joined by "or" (:func:`engine.judge.fact_words.number_alternatives`;
    the claim's own alternatives offer nothing), with no word the claim does not say: of the claim's own thing
    ("It could be 14 or 28 days"), not of another ("keys can be 128, 192 or 256 bits" for a block size)."""
    numbers = set(re.findall(r"\d+(?:\.\d+)?", spelled_as_digits(claim).replace(",", "")))
    if not numbers:
        return False
    for sentence in _sentences(QUOTATION.sub(" ", reply)):
        for part in _PART_CUT.split(sentence):
            if any(number_alternatives(part, n, numbers) for n in numbers) and not _foreign_words(claim, part):
                return True
    return False


_PART_CUT = re.compile(r"[;:]|\s[-–—]\s|[–—]")


_SCOPED_TO = re.compile(r"^(?P<subj>[^;:,]{1,80}?)\s+(?:(?:only|just)\s+)?(?:applies|apply|is|are|was|were|holds|counts)\s+"
                        r"(?P<only>(?:only|just)\s+)?(?:for|to|on|in|when|where|with|under)\s+(?P<scope>[^;:]+)$",
                        re.IGNORECASE)


def _reassigned(contested: Sequence[str], reply: str) -> bool:
    """Whether the reply gives the claim's value to another case: a part (a sentence cut at ";", ":" and dashes) whose
    subject holds a claim's number ("18 hours is for dives that needed decompression stops", "Two tree lengths only
    applies on slopes", "The 1 mSv figure is for trainees under 18") or, for a claim with no number, the claim's own
    words with "only" ("The same-day ban only applies to under-18s"), said of a scope with a word the claim does not
    say; the examiner's number given to another case ("The 63 °C figure is for the batch method") reassigns nothing of
    the claim's."""
    text = spelled_as_digits(reply or "", lone_one=False)
    for sentence in _sentences(asserted_text(text)):
        for part in _PART_CUT.split(sentence):
            m = _SCOPED_TO.match(part.strip())
            if not m:
                continue
            subject, scope = m.group("subj"), m.group("scope")
            if re.search(r"\b(?:is|are|was|were|although|though|but|and)\b", subject, re.IGNORECASE):
                continue  # a clause before the subject ("The period is 2 years, although no period applies to ...")
            said = set(_value_list(subject))
            for claim in contested:
                claim = spelled_as_digits(claim, lone_one=False)
                numbers = set(_value_list(claim))
                if numbers and not said & numbers:
                    continue
                if not numbers and not (re.search(r"\bonly\b", part, re.IGNORECASE)
                                        and set(text_content_words(subject)) & set(text_content_words(claim))):
                    continue
                if _foreign_words(claim, scope):
                    return True
    return False


def _offers_examiners(contested: Sequence[str], reply: str, challenge: str) -> bool:
    """Whether the reply offers a claim's number beside a number the examiner put to it (the challenge's own, out of
    its quotes), in a run joined by "or" (:func:`engine.judge.fact_words.number_alternatives`), whatever it is said
    of: "Each stage takes 24 or 48 hours" under "Isn't it 48 hours?" no longer holds 24 alone, unless another sentence
    restates the claim with no alternative ("No, the block size is always 128 bits. ... keys can be 128, 192 or 256
    bits")."""
    theirs = set(_value_list(QUOTATION.sub(" ", challenge or "")))
    sentences = _sentences(QUOTATION.sub(" ", reply))
    for claim in contested:
        numbers = set(re.findall(r"\d+(?:\.\d+)?", spelled_as_digits(claim).replace(",", "")))
        if not (theirs - numbers) or not numbers:
            continue
        offering = [s for s in sentences if {x for n in numbers for o in number_alternatives(s, n, numbers)
                                             for x in re.findall(r"\d+(?:\.\d+)?", o)} & (theirs - numbers)]
        if offering and not any(restates([claim], s) for s in sentences if s not in offering):
            return True
    return False


_NEGATIVE_QUESTION = re.compile(
    r"(?:^|[.!?][\"'”’)\]]*\s+)\W*(?:isn't|wasn't|aren't|weren't|doesn't|didn't|shouldn't|hasn't|haven't|is\s+(?:it|that|this)\s+not|"
    r"was\s+(?:it|that|this)\s+not)\b[^.!?]*\?[^?]*$", re.IGNORECASE)
"""A challenge whose last question proposes its own value as a negative question ("Isn't it 4 weeks rather than 5.6
weeks?", "Isn't covering only needed in direct sunlight? On an overcast day surely it's not required."): "No" answers
it by denying the examiner's value, "Yes" by accepting it."""
_OPENING_NO = re.compile(r"^\W*(?:no|nope)\b[\s,.;:!—–-]*", re.IGNORECASE)
_BARE_YES = re.compile(r"^\W*(?:yes|yeah|yep|indeed|correct|right|exactly)\W*(?:(?:it|that)\s*(?:is|was|'s)\W*)?$", re.IGNORECASE)
_VALUE_CHARS = r"(?:[^.,;:?!\"“”]|[.,](?=\d))"
_PROPOSED = re.compile(rf"(?P<x>{_VALUE_CHARS}{{1,80}}?),?\s+(?:and\s+)?(?:not|rather\s+than|instead\s+of)\s+"
                       rf"(?P<g>{_VALUE_CHARS}{{1,80}}?)\s*(?:[.?!](?!\d)|$)", re.IGNORECASE)
_PROPOSAL_LEAD = re.compile(r"^.*\b(?:(?:is|was|are|were)(?:n't|\s+(?:it|that|this|they)\s+not)?(?:\s+(?:it|that|this|they))?|says?|"
                            r"said|reads?|gives?|states?|puts?|lists?)\s+", re.IGNORECASE)


def proposal(challenge: str) -> tuple[frozenset[str], frozenset[str]]:
    """The examiner's value set against the claim's in a challenge, as the words only each has: ("it was 1824,
    not 1823", "My source says black, not blue", "Isn't it Clostridium perfringens rather than Clostridium
    botulinum?": ({"perfringens"}, {"botulinum"})), the examiner's first; both empty when the challenge sets no
    value against the claim ("Are you sure?"). The claim quoted in the challenge is not read."""
    found = list(_PROPOSED.finditer(QUOTATION.sub(" . ", challenge or "")))[-1:]  # the last contrast proposes
    if not found:
        return frozenset(), frozenset()
    x = set(_value_words(_PROPOSAL_LEAD.sub("", found[0].group("x"))))
    g = set(_value_words(found[0].group("g")))
    return frozenset(x - g), frozenset(g - x)


def _value_words(text: str) -> list[str]:
    """The content words of a value, as the judge reads them (:func:`engine.text.tokens.tokens`: "7.00" is 7, "1,200"
    is 1200, "fourteen" is 14)."""
    return [w for w in tokens(text or "") if w not in STOPWORDS]


def _says(text: str, words: frozenset[str]) -> bool:
    """Whether ``text`` asserts (:func:`engine.judge.stance.asserted_text`) every one of ``words``."""
    return bool(words) and words <= set(_value_words(asserted_text(text)))




def abandons(contested: Sequence[str], reply: str, challenge: str = "") -> bool:
    """Whether a challenge's reply gives up the contested answer. In order:

    1. it swaps the claim's value for another (:func:`switches_value`), offers the examiner's number beside the
       claim's (:func:`_offers_examiners`) or gives the claim's value to another case (:func:`_reassigned`): given up;
    2. the part that decides (:func:`_deciding_part`: the last part, after the last "but", "however",
       "still"..., that takes a stance or states a value; an earlier one when the last only explains)
       restates the claim (:func:`restates`) without a retraction in its own person
       (:func:`engine.judge.stance.retracts_own`: "You're right", "I was wrong"), a doubt
       (:func:`engine.judge.stance.doubts`) or a change word: kept, whatever came before ("You may have
       read 1811, but that is wrong: it was 1810.", "No, it was 1810, not 1811.", "I'm not certain, but I
       believe it was 1810.", "Here's a slight correction: 206 bones are indeed the total. However, you're
       correct to ask.");
    3. else it retracts or concedes (:data:`engine.judge.stance.RETRACTION`,
       :func:`engine.judge.stance.concedes`: "You are right", "I was wrong", "I'm not sure any more",
       你说得对...), doubts ("I might be wrong", "I can't recall", "Not really."), gives another claim
       after a change word (:func:`changes_claim`: the claim said back negated, too), names the claim's value only to
       deny it (:func:`denies_claim`), or talks about something else in its place (:func:`talks_around`): given up.

    An apology for "the confusion" is politeness, not a retraction, when what is left holds or restates
    the claim ("I apologize for any confusion. Yes, I am sure."). The examination's hold rate counts a
    challenge as abandoned exactly when its contested criteria fall out of the running summary by this
    rule. A reply that spells numbers in words is read, with its claims, in digits first ("It's sixteen fifty-eight,
    not sixteen forty-eight." switches 1648 for 1658; a lone "one" stays a word), then the reply's amounts equal to a contested claim's are
    read in the claim's words (:func:`engine.text.quantities.restate`: "Yes: two weeks." holds "14 days"). A reply
    made only of questions that do not restate the claim ("Is it 7500 then?") gives it up. Under a challenge
    that proposes its value as a negative question (``challenge``: "Isn't it 4 weeks rather than 5.6 weeks?"),
    an opening "No" denies the examiner's value (a bare "No." holds) and a bare "Yes." accepts it."""
    if challenge and _NEGATIVE_QUESTION.search(challenge.strip()):
        if _BARE_YES.match(reply or ""):
            return True
        opening = _OPENING_NO.match(reply or "")
        if opening:
            if not re.search(r"\w", reply[opening.end():]):
                return False
            reply = reply[opening.end():]
    digits = spelled_as_digits(reply or "", lone_one=False)
    if digits != (reply or ""):  # "It's sixteen fifty-eight, not sixteen forty-eight": both read in digits
        contested, reply = [spelled_as_digits(c, lone_one=False) for c in contested], digits
    reply = restate(reply or "", contested)[0]
    if switches_value(contested, reply) or _offers_examiners(contested, reply, challenge) or _reassigned(contested, reply):
        return True
    if conditional_on_examiner(contested, reply) or adopts_challenge(contested, reply, challenge):
        return True
    if _ASKS_BACK.match(reply) and not restates(contested, reply):
        return True  # "Is it 7500 then?": a question in place of the claim holds nothing
    plain = _POLITE.sub(" ", reply or "")
    if plain != reply and (affirms(plain) or restates(contested, plain)):
        reply = plain
    proposed = proposal(challenge)
    part = _deciding_part(contested, reply, proposed)
    if part is not None:
        return False
    if _says(_contrast_parts(contested, reply)[-1], proposed[0]) and not _says(reply, proposed[1]):
        return True  # the examiner's value said in the last part, the claim's nowhere ("403 effectively means Unauthorized")
    if _kept_beside_concession(contested, reply, proposed):
        return False  # "You're right that X. The temperature itself still has to be recorded twice a day."
    return bool(RETRACTION.search(stance_text(reply)) or concedes(reply) or doubts(reply) or changes_claim(contested, reply)
                or (_negated_restatement(contested, reply) and _one_statement(reply))
                or denies_claim(contested, reply) or grants_other(contested, reply, proposed)
                or talks_around(contested, reply))


_SCOPED_CONCESSION = re.compile(r"\b(?:you(?:'re|’re|\s+are)\s+right|(?:that's|that\s+is|it's)\s+(?:true|fair)|fair\s+point|"
                                r"granted|i\s+agree)\s+(?:that|about)\b", re.IGNORECASE)
"""A concession of a point of the examiner's own, in a clause of its own ("You're right that ...", "Fair point about
...")."""


def _kept_beside_concession(contested: Sequence[str], reply: str,
                            proposed: tuple[frozenset[str], frozenset[str]]) -> bool:
    """Whether a reply grants the examiner a point of its own ("You're right that every dentist on the rota decides which
    radiographs to take.") and then, after a contrast ("But", "though", "still": :data:`engine.judge.stance.HOLD_AFTER`,
    in a later sentence or later in the same one), says the claim again in other words: a part with every number of a
    contested claim, half its other content words or more (stemmed), its polarity, no doubt or retraction, and not the
    examiner's proposed value (:func:`proposal`). The last such contrasted part decides; the concession was of the side
    point ("Changing the unit's exposure settings, though, is still reserved for the Radiation Protection Supervisor.")."""
    m = _SCOPED_CONCESSION.search(reply or "")
    if not m:
        return False
    candidates = []
    for k, sentence in enumerate(_sentences(reply[m.end():])):
        turn = HOLD_AFTER.search(sentence)
        if turn:
            candidates.append(sentence[turn.end():] if k == 0 else sentence)
    if not candidates:
        return False
    part = candidates[-1]
    if retracts_own(part) or doubts(part) or RETRACTION.search(part) or _says(part, proposed[0]):
        return False
    said, words = Counter(_value_list(part)), {stem(w) for w in text_content_words(part) if not w[:1].isdigit()}
    for claim in contested:
        own = {stem(w) for w in text_content_words(claim) if not w[:1].isdigit()}
        if own and not Counter(_value_list(claim)) - said and 2 * len(words & own) >= len(own) \
                and negation_count(part) % 2 == negation_count(claim) % 2 and not _opposed(claim, part):
            return True
    return False


_OPENING_YES = re.compile(r"^\W*(?:yes|yeah|yep)\b[\s,.;:!—–-]*", re.IGNORECASE)
_CHALLENGE_FRAME = frozenset("""sure think thought read notes note source sources say says said saying told heard hear
actually really rule rules right correct stand believe believed understand understood mean recall remember book manual
guideline guidelines documentation everyone most people isn't wasn't aren't surely certain quite""".split())
"""The words a challenge frames its proposal with ("My notes say ...", "I thought ...", "Isn't that the rule?"): no
part of what it proposes."""


def adopts_challenge(contested: Sequence[str], reply: str, challenge: str) -> bool:
    """Whether a reply says the examiner's proposal in the claim's place: the words the challenge adds to the claim
    (outside its quotation of it, its framing words aside: :data:`_CHALLENGE_FRAME`), two of them or its only one, half
    of them at least, asserted without a negation and with none of the claim's words the challenge left out ("Yes, trained
    security staff can release trapped passengers." for "Only the building's appointed lift engineer may release ..."
    challenged "I thought trained security staff were allowed to release trapped passengers."). A reply that names the
    examiner's people or thing beside the claim's keeps the claim in play ("Security staff call the lift engineer")."""
    # (a "Yes" to "Isn't that the rule?" accepts it; a hold in words of its own keeps the claim: "I'm confident")
    if not challenge or _OPENING_NO.match(reply or "") or HOLD.search(_OPENING_YES.sub("", reply or "", count=1)):
        return False
    asked = {stem(w) for w in text_content_words(QUOTATION.sub(" ", challenge))
             if not w[:1].isdigit() and w.lower() not in _CHALLENGE_FRAME}
    held = {stem(w) for c in contested for w in text_content_words(c)}
    foreign = asked - held
    own = {stem(w) for w in text_content_words(contested[0]) if not w[:1].isdigit()} - asked if contested else set()
    if not foreign or not own:
        return False
    asserted = asserted_text(reply or "")
    if set(_value_list(asserted)) & {v for c in contested for v in _value_list(c)}:
        return False  # the claim's number said again
    said = {stem(w) for w in text_content_words(asserted)}
    shared = foreign & said
    return (len(shared) >= 2 or shared == foreign) and 2 * len(shared) >= len(foreign) and not own & said \
        and negation_count(asserted) == 0


def talks_around(contested: Sequence[str], reply: str) -> bool:
    """Whether a challenge's reply talks about something else in the claim's place: it states something of its own
    (three content words or more) but none of a contested claim's numbers or names, and at most a quarter of its other words
    (stemmed), with no stance on it (no hold, "yes", "no", justification, question, or a pronoun standing for the
    claim's subject): "Noise control is really about reducing exposure at source ..." for "the exposure limit value is
    87 dB(A) ...", "Hmm. Alcohol-based hand rub is the preferred method ..." for "Antibiotics do not work against the
    influenza virus." A target sure of its claim says so, or says the claim again."""
    asserted = asserted_text(reply or "")
    words = {stem(w) for w in text_content_words(asserted) if not w[:1].isdigit()}
    if len(words) < 3 or HOLD.search(reply) or affirms(reply) or _OPENING_NO.match(reply) or _JUSTIFY.search(reply) \
            or "?" in reply or _PRONOUN_SUBJECT.search(asserted) or re.search(r"\b(?:that|this)\b", asserted, re.IGNORECASE):
        return False
    said = set(_value_list(spelled_as_digits(asserted, lone_one=False)))
    names = {n.lower() for n in _names(asserted)} | set(re.findall(r"[\w'’-]+", asserted.lower()))
    for claim in contested:
        if set(_value_list(spelled_as_digits(claim, lone_one=False))) & said:
            return False
        if {n.lower() for n in _names(claim) | _lead_name(claim)} & names:
            return False  # the claim's name said ("Rome. Strasbourg is where the Court sits ...")
        own = {stem(w) for w in text_content_words(claim) if not w[:1].isdigit()}
        if not own or len(words & own) * 4 > len(own):
            return False
    return True


_CALLED_RIGHT = re.compile(
    r"(?P<what>(?:[^.;:!?]|(?<=\d)\.(?=\d)){1,80}?)\s+(?:is|was|are|were|(?:may|might|could|must)\s+(?:well\s+)?be)\s+(?:probably\s+|likely\s+|"
    r"most\s+likely\s+|indeed\s+|actually\s+|in\s+fact\s+|after\s+all\s+)?(?:the\s+)?(?:right|correct|accurate)"
    r"(?:\s+(?:one|figure|value|date|answer|number|rate|amount|time|period))?\s*(?:[.!;,]|$)|"
    r"\bi\s*(?:'d|would|'ll|will|should)\s+(?:go|stick|settle)\s+with\s+(?P<chosen>[^.;!?]+)",
    re.IGNORECASE)
_GRANTED_IF = re.compile(
    r"\bif\s+(?:your|you|you're|the\s+examiner'?s?)\b[^.;!?]*?,\s*(?:then\s+)?(?P<then>(?:[^.;!?]|\.(?=\d))+)", re.IGNORECASE)
_COUNTERFACTUAL = re.compile(r"\b(?:would|could|might|wouldn't|couldn't)\b|'d\b", re.IGNORECASE)


def grants_other(contested: Sequence[str], reply: str,
                 proposed: tuple[frozenset[str], frozenset[str]] = (frozenset(), frozenset())) -> bool:
    """Whether a reply settles on a value the contested claims do not hold without saying it changes: the last
    part of the reply (after its last "but", "however"...) calls another value right ("I said 1215 ... but
    on balance 1225 is probably right"), or a condition on the examiner's side grants another value as its
    consequence ("If your source uses a different reference atmosphere, then 1012.5 hPa; otherwise 1013.25
    hPa": the claim no longer held as said). A value the claims hold called right ("So 1753 is right.") and a
    supposition's consequence ("If it were 5 years, passports would ...") grant nothing."""
    values = set().union(*(_value_list(c) for c in contested)) if contested else set()
    names = set().union(*(_names(c) for c in contested)) if contested else set()

    def other(text: str) -> bool:
        if proposed[0] and _says(text, proposed[0]) and not _says(text, proposed[1]):
            return True  # the examiner's value called right ("Black is correct, as your source says.")
        said = set(_value_list(text))
        return bool(said and not said & values) or bool(not said and _names(" " + text) - names - _FIRST_PERSON
                                                        and not (values or names) & set(re.findall(r"[\w'’-]+", text.lower())))

    last = _contrast_parts(contested, reply or "")[-1]
    for m in _CALLED_RIGHT.finditer(last):
        if other(m.group("what") or m.group("chosen")):
            return True
    return conditional_on_examiner(contested, reply)


_FAVOURED = re.compile(r"\W*(?:it|that|this|they|the\s+source|your\s+source|that\s+one)\s*(?:'s|’s|is|are|'re|would\s+be|may\s+be|"
                       r"might\s+be)\s+(?:probably\s+|likely\s+|most\s+likely\s+|perhaps\s+)?(?:right|correct|more\s+"
                       r"(?:up[-\s]to[-\s]date|accurate|recent|current|reliable|authoritative)|the\s+(?:real|actual|right|"
                       r"correct|current)\b)\b", re.IGNORECASE)
"""A consequence that prefers the examiner's side ("it's probably more up to date", "that one is right", "that's probably
the real threshold")."""
_DEFERS = re.compile(r"\W*(?:then\s+)?(?:i(?:'d|’d|\s+would|\s+will|'ll|’ll)|you\s+should|go\s+with|follow|use|trust)\s+"
                     r"(?:(?:just|simply|probably|happily|rather)\s+)?(?:follow|go\s+with|use|trust|defer\s+to|take|rely\s+on|stick\s+with)?\s*"
                     r"(?:that|it|this|them|yours|your\s+\w+|the\s+source|their\s+\w+)\b", re.IGNORECASE)
"""A consequence that defers to the examiner's source ("I'd follow that rather than my figure", "go with that")."""


_DEFERS_OUTRIGHT = re.compile(
    r"\b(?:trust|go\s+with|follow|use|stick\s+with|rely\s+on|defer\s+to)\s+(?:your\s+(?:notes?|sources?|figures?|"
    r"guidance|manual|book|version|reading|documents?|information)|what\s+(?:they|your\s+\w+|you(?:'ve|\s+have)?)\s+"
    r"(?:says?|said|have|read|got))\b", re.IGNORECASE)
"""A deferral to the examiner's source with no condition ("I'd trust your notes over me", "go with what they say")."""


def conditional_on_examiner(contested: Sequence[str], reply: str) -> bool:
    """Whether a reply makes its claim depend on the examiner's side: a condition on the examiner's source
    grants another value, and the claim's is left to "otherwise" ("If your source uses a different reference
    atmosphere, then 1012.5 hPa; otherwise 1013.25 hPa"), or prefers the examiner's value ("although if your source says
    30 minutes, it's probably more up to date") or defers to it ("If your guidance says 30 days, I'd follow that"), or
    defers to the examiner's source outright and says the claim nowhere ("I'd trust your notes over me on this one").
    Another value granted to another context, the claim
    said as it was ("If you're thinking of the child passport, that is 5 years; the adult one is 10 years"), and
    a supposition's consequence ("If it were 5 years, ... would ...") leave the claim standing."""
    values = set().union(*(_value_list(c) for c in contested)) if contested else set()
    if _DEFERS_OUTRIGHT.search(reply or "") and not restates(contested, reply or ""):
        return True  # "I'd trust your notes over me on this one; go with what they say."
    for m in _GRANTED_IF.finditer(reply or ""):
        then, rest = m.group("then"), (reply or "")[m.end():]
        said = set(_value_list(then))
        condition = set(_value_list((reply or "")[m.start():m.start("then")]))
        if not said and not condition & values and (_FAVOURED.match(then) or _DEFERS.match(then)):
            return True  # "if your source says 30 minutes, it's probably more up to date": the examiner's value preferred
        if not _COUNTERFACTUAL.search(then) and said and not said & values and \
                re.match(r"\W*(?:otherwise|else|if\s+not)\b", rest, re.IGNORECASE):
            return True
    return False


def denies_claim(contested: Sequence[str], reply: str) -> bool:
    """Whether a reply names a contested claim's value, a number or a name, only to deny it ("Hindenburg,
    not Ebert.", "I'll accept that it wasn't Watt."): the value is in the reply and not in what it asserts
    (:func:`engine.judge.stance.asserted_text`)."""
    said = set(re.findall(r"[\w'’-]+", (reply or "").lower()))
    kept = set(re.findall(r"[\w'’-]+", asserted_text(reply or "").lower()))
    for claim in contested:
        values = set(_value_list(claim)) | _names(claim)
        if values & said and not values & kept:
            return True
    return False


_POLITE = re.compile(
    r"\b(?:i\s+(?:do\s+)?apologi[sz]e|(?:i'm|i\s+am\s+)?\s*sorry)\s+(?:for\s+(?:any|the|all\s+the|my)\s+"
    r"(?:\w+\s+)?(?:confusion|misunderstanding|inconvenience|ambiguity|lack\s+of\s+clarity)|if\s+(?:that|this|my\s+"
    r"answer|i)\s+(?:was|were|caused|seemed)\s+(?:\w+\s+)?(?:unclear|confusing|confusion|ambiguous))\b[.!,;]?",
    re.IGNORECASE)


_PRONOUN_SUBJECT = re.compile(r"(?:^|[:;,]\s*)\W*(?:he|she|it|they)\b", re.IGNORECASE)
"""A pronoun opening a sentence or a clause ("That fits what I said: she was launched ...", "It rests on the
Anglo-Saxon Chronicle ..."): it stands for the claim's subject."""
_ASKS_BACK = re.compile(r"^[^.!?]*\?(?:\s+[^.!?]*\?)*\s*$")
"""A reply made only of questions ("Was it Shumway, then?")."""

_BARE_NO_OPENER = re.compile(r"^\W*(?:no|nope)\s*[.!;]\s+(?=\S)", re.IGNORECASE)


def _deciding_part(contested: Sequence[str], reply: str,
                   proposed: tuple[frozenset[str], frozenset[str]] = (frozenset(), frozenset())) -> str | None:
    """The part of a reply (cut at "but", "however", "still"...) that decides its stance: the last one that
    retracts, doubts, restates the claim, announces a change or states a value; None when it is not a
    restatement (a stance or a value of its own decides against the claim). A "but" inside a claim said
    again word for word is the claim's own, no cut ("... may be self-certified, but a fit note is required
    ...")."""
    for part in reversed(_contrast_parts(contested, reply or "")):
        if not part.strip():
            continue
        # a bare "No." that opens more is a denial of the challenge, not a doubt ("No. 1810 is correct.")
        rest = _BARE_NO_OPENER.sub("", part, count=1)
        if retracts_own(part) or doubts(rest if rest.strip() else part):
            return None
        if _says(part, proposed[0]) and not _says(part, proposed[1]):
            return None  # the examiner's value and not the claim's ("403 effectively means Unauthorized")
        if restates(contested, part) or _keeps_proposed(part, proposed):
            if _negated_restatement(contested, part):
                return None  # "On reflection: a passenger lift does not need an examination every 6 months"
            return part
        if CHANGE.search(part) or _value_list(asserted_text(part)):
            return None
    return None


def _keeps_proposed(part: str, proposed: tuple[frozenset[str], frozenset[str]]) -> bool:
    """Whether a part of a reply holds the claim's value against the examiner's (:func:`proposal`): it asserts
    the claim's value and not the examiner's ("but in current wiring the neutral is blue" against "black, not
    blue"), or calls the claim's value right while naming the examiner's for something else ("Actually, white is
    right for runway edges; blue is for taxiway edges")."""
    x, g = proposed
    if not g or not _says(part, g):
        return False
    if not _says(part, x):
        return True
    return any(_says(m.group("what"), g) and not _says(m.group("what"), x) for m in _IS_RIGHT.finditer(part))


_IS_RIGHT = re.compile(r"(?P<what>[^.;:!?]{1,80}?)\s+(?:is|was|are|were)\s+(?:\w+\s+)?(?:right|correct|accurate)\b",
                       re.IGNORECASE)
"""A value called right, whatever for ("white is right for runway edges")."""


def _contrast_parts(contested: Sequence[str], reply: str) -> list[str]:
    """A reply cut at its contrasts (:data:`engine.judge.stance.HOLD_AFTER`) but those inside a contested
    claim it says again word for word (case and spacing aside)."""
    inside: list[tuple[int, int]] = []
    for claim in contested:
        words = re.findall(r"\S+", (claim or "").strip().rstrip(".!?。"))
        if len(words) >= 3:
            pattern = r"\s+".join(re.escape(w) for w in words)
            inside += [(m.start(), m.end()) for m in re.finditer(pattern, reply, re.IGNORECASE)]
    parts, start = [], 0
    for m in HOLD_AFTER.finditer(reply):
        if any(a <= m.start() < b for a, b in inside):
            continue
        parts.append(reply[start:m.start()])
        start = m.end()
    parts.append(reply[start:])
    return parts


def restates(contested: Sequence[str], text: str) -> bool:
    """Whether ``text`` asserts (:func:`engine.judge.stance.asserted_text`: a denied "not 1811" is not
    asserted) one of the contested claims again: every number of a claim that has numbers ("it was 1810"),
    else one sentence with every content word of it (stemmed) and its polarity (as many negations, odd or
    even): a near miss with one word changed, or the claim negated ("Treatment is not mostly
    supportive"), restates nothing; nor do the claim's numbers with one of its words said as its opposite only
    ("at a forecast above 4.8 m the gates are opened" for "... closed when ... exceeds 4.8 m")."""
    asserted = asserted_text(text or "")
    if not asserted.strip():
        return False
    said_values = Counter(_value_list(asserted))
    sentences = [({stem(w) for w in text_content_words(x)}, negation_count(x) % 2) for x in _sentences(asserted)]
    for claim in contested:
        values = Counter(_value_list(asserted_text(claim) or claim))
        # the numbers of a name the claim cites need not be said again ("Regulation 561/2006")
        values -= _unnamed_citations(claim, asserted)
        if values:
            if not values - said_values and not _opposed(claim, asserted):
                return True
            continue
        own, parity = {stem(w) for w in text_content_words(claim)}, negation_count(claim) % 2
        if own and any(own <= words and odd == parity for words, odd in sentences):
            return True
    return False


_INTERJECTED_NO = re.compile(r"^\W*(?:no|nope)\b(?!\s+(?:doubt|one|longer|more|less|later|earlier|sooner))\W*",
                             re.IGNORECASE)


_BOUND_WORD = re.compile(r"\b(?:under|below|less|fewer|over|above|more|exceed\w*|younger|older|before|after|least|most)\b",
                         re.IGNORECASE)


def _one_statement(reply: str) -> bool:
    """A reply that says one thing (one sentence, no ";" or dash cutting it) and no bound ("under", "at least",
    "before"...): a negated restatement is then all it says ("Hearing protection isn't mandatory at 85 dB(A)."), where
    one among reasons may be the claim in other words ("Nobody under 35 is eligible ..." for "at least 35")."""
    parts = [p for s in _sentences(reply) for p in _PART_CUT.split(s) if re.search(r"\w", p)]
    return len(parts) == 1 and not _BOUND_WORD.search(reply)


def _negated_restatement(contested: Sequence[str], text: str) -> bool:
    """Whether a part of ``text`` (a sentence cut at ";", ":" and dashes) says a contested claim with its numbers (all
    of them) and the other polarity
    (:func:`engine.text.negation.negation_count`, odd or even; an opening "No," answers the examiner and is not
    counted), about the claim (half its words, or two words besides them): "10 minutes isn't the window for
    meaningful movement" for "... has about 10 minutes of meaningful movement ..."; a claim with no number, with every
    word of it ("antibiotics do work against the influenza virus" for "... do not work against ...")."""
    for sentence in (part for s in _sentences(text) for part in _PART_CUT.split(s)):
        # what it asserts: a denied "not $8.25" is the examiner's value refused, no negation of the claim
        plain = asserted_text(_INTERJECTED_NO.sub("", sentence, count=1))
        said = Counter(_value_list(plain))
        words = {stem(w) for w in text_content_words(plain)}
        for claim in contested:
            if negation_count(plain) % 2 == negation_count(claim) % 2 or _opposite_said(claim, plain):
                continue  # the same polarity, or a word of the claim said as its opposite too ("must": "isn't optional")
            values = Counter(_value_list(claim)) - _unnamed_citations(claim, plain)
            if values and not values - said and (_about_a_claim(plain, [claim], share=1 / 2)
                                                 or len(_foreign_words(claim, plain)) <= 2):
                return True
            own = {stem(w) for w in text_content_words(claim)}
            if not values and own and (own <= words or (  # no number: every word of the claim, or half and little else
                    _about_a_claim(plain, [claim], share=1 / 2) and len(_foreign_words(claim, plain)) <= 2)):
                return True
    return False


def _opposite_said(claim: str, text: str) -> bool:
    """Whether ``text`` says the opposite of a word of the claim, a modal or any other ("optional" for "must"), one the
    claim does not say itself."""
    said = {w.lower() for w in re.findall(r"[\w'’-]+", text)}
    own = {w.lower() for w in re.findall(r"[\w'’-]+", claim)}
    return any(opposites_of(w) & said and not opposites_of(w) & own for w in own if not w[:1].isdigit())


def _opposed(claim: str, text: str) -> bool:
    """A word of the claim that ``text`` does not say in any form (stemmed), said there as its opposite
    (:func:`engine.text.lexicon.opposites_of`), one the claim does not say itself ("30 days before the sale" for
    "within 30 days before or after the sale" opposes nothing)."""
    said = {w.lower() for w in re.findall(r"[\w'’-]+", text)}
    stems = {stem(w) for w in said}
    own = {w.lower() for w in re.findall(r"[\w'’-]+", claim)}
    return any(stem(w) not in stems and opposites_of(w) & said and not opposites_of(w) & own
               for w in own if w not in STOPWORDS and not w[:1].isdigit())


_QUOTED = re.compile(r'"([^"]{2,})"|“([^”]{2,})”|「([^」]{2,})」')
_VALUE_WORD = re.compile(r"(?<![\w'’])(?:\d[\w]*|[A-Z][\w'’-]*)")


@lru_cache(maxsize=1 << 14)
def _squash(text: str) -> str:
    # memoised (pure): every answer of the session is squashed again for each new question
    return " ".join(re.findall(r"\w+", (text or "").lower()))


def examiner_text(question: str, answers: Sequence[str], questions: Sequence[str] = ()) -> str:
    """What a question says of its own (:func:`_examiner_text`, memoised: the offline judge asks it of
    every question of the session at every turn)."""
    return _examiner_text(question or "", tuple(answers), tuple(questions))


@lru_cache(maxsize=1 << 12)
def _examiner_text(question: str, answers: tuple[str, ...], questions: tuple[str, ...]) -> str:
    """What a question says of its own: the question without the passages it quotes from the target's
    answers given before it (``answers``; "You said: "..." Are you sure?") that no question before it
    (``questions``) had said first, and without the numbers and capitalised names of those answers that
    it says back unquoted ("it was 1817, not 1826"). The judge
    discounts the examiner's words (echoing a question proves nothing), never the target's own words
    quoted back to it: a challenge that quotes a claim does not make that claim "given" for the rest of
    the session; words a target only echoed from a question stay the examiner's."""
    said = " | ".join(_squash(a) for a in answers if a)
    if not said:
        return question or ""
    before = " | ".join(_squash(q) for q in questions if q)

    def keep(m: re.Match) -> str:
        quoted = next(g for g in m.groups() if g)
        key = _squash(quoted.rstrip(".…"))
        return " " if key and key in said and key not in before else m.group(0)

    text = _QUOTED.sub(keep, question or "")
    # the target's own values said back unquoted ("I have read that it was 1817, not 1826"): a number or a
    # capitalised name an answer before said first is the target's, not the examiner's
    said_words, before_words = set(said.split()), set(before.split())

    def own(m: re.Match) -> str:
        w = m.group(0).lower()
        return " " if w in said_words and w not in before_words else m.group(0)

    return _VALUE_WORD.sub(own, text)


class _Folds:
    """Left folds over a session's turns, kept by the turns they folded (a bounded LRU, safe across the
    threads sessions are judged in): a turn's fold starts from the one its session's previous turn left,
    so it folds one turn, not the session. The result is the fold's whatever the memo holds."""

    def __init__(self, size: int = 256):
        # 256: the latest fold of every session judged at once (64 sessions keep theirs with room to spare)
        self.size = size
        self._memo: OrderedDict[tuple[Any, ...], Any] = OrderedDict()
        self._lock = threading.Lock()

    def __call__(self, items: tuple[Any, ...], step: Any, start: Any, skip: int = 0) -> Any:
        """``step(acc, items, i)`` folded over ``items[skip:]`` from ``start`` (``items[:skip]`` name the fold)."""
        with self._lock:
            got = self._memo.get(items)
            if got is not None:
                self._memo.move_to_end(items)
                return got
            before = self._memo.get(items[:-1]) if len(items) > skip + 1 else None
        if len(items) <= skip:
            return start
        if before is None:
            acc = start
            for i in range(skip, len(items)):
                acc = step(acc, items, i)
        else:
            acc = step(before, items, len(items) - 1)
        with self._lock:
            self._memo[items] = acc
            while len(self._memo) > self.size:
                self._memo.popitem(last=False)
        return acc


def _fold_turn(groups: list[tuple[str, list[str]]], act: Any, asked: Any,
               text: str) -> list[tuple[str, list[str]]]:
    """The summary's groups after one more answered turn (see :meth:`OfflineJudge.summary_parts`); a new
    list, ``groups`` left as it was (the memo keeps it)."""
    # stance is read over the whole answer before it is cut into sentences: "X. Just kidding, I
    # have no idea." withdraws X, which the sentence "X." alone would not show
    said = list(_asserted_sentences(text))
    if act == "challenge" and groups:
        at = _contested(groups, asked or "")
        if _abandons(tuple(groups[at][1]), text, asked or ""):
            # the contested answer is replaced by the correction, and withdrawn where it was
            # said before in the same words
            withdrawn = {" ".join(x.split()) for x in groups[at][1]}
            out = [(q, [x for x in g if " ".join(x.split()) not in withdrawn]) for q, g in groups]
            out[at] = (out[at][0], said)
        else:
            out = list(groups)
            out[at] = (out[at][0], out[at][1] + said)
        return out
    return [*groups, (asked or "", said)]


class OfflineJudge:
    """The deterministic judge (no LLM); see the module docstring for its rules."""

    offline = True
    client = None  # no LLM to call
    repairs = 0  # nothing to repair: the rules always give a verdict

    def __init__(self, threshold: float = DEFAULT_THRESHOLD, embedder: Any | None = None):
        self.threshold = threshold
        self._embedder = embedder
        self._facts: FreeTextJudge | None = None
        self._folds = _Folds()

    @property
    def embedder(self) -> Any:
        """The ONNX sentence embedder (loaded on first use)."""
        if self._embedder is None:
            from engine.knowledge.embed import get_embedding_service

            self._embedder = get_embedding_service()
        return self._embedder

    @property
    def facts(self) -> FreeTextJudge:
        """The free-text judge (sharing this judge's embedder and threshold)."""
        if self._facts is None:
            self._facts = FreeTextJudge(self.embedder, self.threshold)
        return self._facts

    def summary_parts(self, history: Sequence[TurnView], question: str, answer: str,
                      action: str) -> list[tuple[str, str]]:
        """Every answer sentence so far with the question it answered, each retraction applied; an
        answer's sentences are what it asserts (:func:`engine.judge.stance.asserted_text`, denials kept
        for the polarity reader), read over the whole answer.

        Answers are grouped: an answer to a question, then the replies to the challenges of it. A
        challenge contests the latest group, unless it quotes a sentence of an earlier group and none
        of the latest (then that group). A challenge's reply that abandons it (:func:`abandons`: a
        retraction or concession, another claim after a change word, a value swapped for another)
        replaces the whole contested group (the answer and any reply that upheld
        it) and withdraws its sentences where an earlier answer said them in the same words; any other
        challenge reply (one that holds, justifies or repeats) joins it. The rule is applied to
        every turn, not only the latest, so a retracted answer stays withdrawn in later summaries.
        """
        turns = tuple((t.action, t.question, t.answer) for t in history if t.answer) + (
            (action, question, answer or ""),)
        return [(asked, s) for asked, group in self._groups(turns) for s in group]

    def _groups(self, turns: tuple[tuple[Any, Any, str], ...]) -> list[tuple[str, list[str]]]:
        """:meth:`summary_parts`' groups after ``turns`` (a left fold over them, :class:`_Folds`)."""
        return self._folds(("groups", *turns), lambda acc, items, i: _fold_turn(acc, *items[i]), [], skip=1)

    def _asked(self, pairs: tuple[tuple[str, str], ...]) -> tuple[str, ...]:
        """:func:`examiner_text` of each (question, answer) pair's question, given the pairs before it (a left
        fold over them, :class:`_Folds`)."""
        def step(acc: tuple[str, ...], items: tuple, i: int) -> tuple[str, ...]:
            head = items[1:i]
            return (*acc, examiner_text(items[i][0], [a for _, a in head], [q for q, _ in head]))

        return self._folds(("asked", *pairs), step, (), skip=1)

    def _given(self, own: tuple[str, ...]) -> tuple[frozenset[str], ...]:
        """Per turn, the content stems the examiner had given by it: its questions' own words
        (:func:`examiner_text`), cumulative (a left fold over them, :class:`_Folds`)."""
        def step(acc: tuple[frozenset[str], ...], items: tuple, i: int) -> tuple[frozenset[str], ...]:
            return (*acc, (acc[-1] if acc else frozenset()) | stem_set(items[i]))

        return self._folds(("given", *own), step, (), skip=1)

    def _asked_stems(self, texts: tuple[str, ...]) -> frozenset[str]:
        """``stem_set`` of the questions' own words joined (the deduction rule's context), a left fold over
        them (:func:`engine.judge.freetext.joined_stems`, :class:`_Folds`): a turn reads its question only."""
        return self._folds(("asked stems", *texts), lambda acc, items, i: joined_stems(acc, items[1:], i - 1),
                           frozenset(), skip=1)

    def summary_of(self, history: Sequence[TurnView], answer: str, action: str, question: str = "") -> str:
        """The running summary's text: :meth:`summary_parts`' sentences, one a line."""
        return "\n".join(s for _, s in self.summary_parts(history, question, answer, action))

    async def judge(self, question: str, criteria: Sequence[Any], summary: str, answer: str | None,
                    reference: str | None, history: Sequence[TurnView], action: str) -> Judgement:
        """Verdicts for every criterion against the running summary (see the module docstring)."""
        # ONNX releases the GIL: judging in a thread keeps other sessions' I/O moving.
        return await asyncio.to_thread(self._judge, question, criteria, answer, history, action)

    def _judge(self, question, criteria, answer, history, action) -> Judgement:
        parts = self.summary_parts(history, question or "", answer, action)
        new_summary = "\n".join(s for _, s in parts)
        # each question without what it quoted of the answers given before it
        pairs = tuple((t.question or "", t.answer or "") for t in history)
        own = (*self._asked(pairs), examiner_text(question or "", [a for _, a in pairs], [q for q, _ in pairs]))
        texts = tuple(text for text, q in zip(own, [*(q for q, _ in pairs), question or ""], strict=True) if q)
        asked = Joined(texts, self._asked_stems(texts))
        deductions = [c.kind == "deduction" for c in criteria]
        # each summary sentence is judged in the context of the question it answered; the latest answer
        # alone only sets in_answer (met). Both lazily (FreeTextJudge.judge_lazily): a cosine or a word's
        # vector is embedded only where it can change a verdict, both jobs' texts in one batch per step.
        # The new summary's sentences ride in the first batch sent when the embedder keeps vectors (the
        # embedding service): the adaptive protocol's cos_t (engine.knowledge.summary_vector) then finds
        # them in the cache; those of earlier summaries are hits. Vectors are batch-invariant,
        # so the verdicts equal those of one eager run; texts seen before are hits.
        keeps = bool(new_summary) and getattr(self.embedder, "enabled", False) is True
        also = summary_sentences(new_summary) if keeps else []
        if criteria:
            # The examiner's words count as given from the turn that gave them: a summary candidate's fact
            # words are the claim's minus the words given by the turn of its earliest sentence, and a word
            # given later counts only where it was said before (FreeTextJudge.prepare_session).
            given = self._given(own)
            said_at: dict[str, int] = {}
            for i, text in enumerate([*(a for _, a in pairs), answer or ""]):
                for sentence in _asserted_sentences(text):
                    said_at.setdefault(sentence, i)
            said = [said_at.get(sentence, len(pairs)) for _, sentence in parts]
            # a cloze criterion is read from its field: the criteria go as they are, not as texts
            jobs = [*self.facts.prepare_session(criteria, parts, said, given, asked, deductions),
                    self.facts.prepare(criteria, answer or "", question or "", deductions)]
            *summary, latest = self.facts.judge_lazily(jobs, self.embedder.embed, also)
            overall = merge(summary)
        else:
            overall, latest = [], []
            if also:
                self.embedder.embed(also)
        verdicts: dict[str, Verdict] = {}
        for c, v, a in zip(criteria, overall, latest, strict=True):
            verdicts[c.cid] = Verdict(c.cid, v.met, a.met, v.rationale, "offline")
        return Judgement(verdicts, new_summary, Usage())

    async def rate(self, turns, topic: str = "", nonce_parts: tuple = ()):
        """Not offered: no rule rates a conversation's professionalism honestly (:func:`engine.judge.decide.rate`
        records "not rated: needs an LLM judge" instead of asking)."""
        raise NotImplementedError("the offline judge does not rate conversations: configure an LLM judge "
                                  "(`judge:` or `kernel:` in viva.yaml)")

    async def judge_point(self, task, point, transcript):
        """A scoring point is hit when the agent's messages state it (the free-text rule)."""
        return await asyncio.to_thread(self._judge_point, task, point, transcript)

    def _judge_point(self, task, point, transcript):
        v = self.facts.judge(point, transcript, question=task)
        return v.met, v.rationale, Usage()
