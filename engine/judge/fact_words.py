"""The free-text judge's word tests: polarity, numbers and what they count, swapped names, foreign
subjects, alternatives offered in a list, word weights and soft (embedding) word matches.

Helpers of :class:`engine.judge.freetext.FreeTextJudge`'s score (the rules are stated in the docstring of
:mod:`engine.judge.freetext`).
"""

from __future__ import annotations

import difflib
import math
import re
from collections import Counter
from collections.abc import Callable
from functools import lru_cache
from typing import Any

import numpy as np

from engine.judge.fact_reading import (
    LINKING,
    VERBISH,
    Candidate,
    FactClaim,
    ScopedClause,
    bound_numbers,
    clause_subject,
    is_number_stem,
    unique,
)
from engine.text.lexicon import COLOURS, OPPOSITES, STOPWORDS, is_negation, opposite, opposites_of
from engine.text.numbers import is_number_word, read_number
from engine.text.quantities import MONTHS, UNITS
from engine.text.tokens import content_stems, stem, tokens

NUMBER_WEIGHT = 3.0
"""Weight of a number among the fact words (a word weighs 1 + ln of its word pieces: :func:`word_weight`)."""
SOFT_FLOOR = 0.55
"""Word cosine below which a reply's word is no evidence for a fact word it does not spell (:func:`soft_matches`)."""
NAME_SPELLING = 0.8
"""Character similarity (difflib ratio) a name needs with a reply's word to match it in other words."""

def polarity_split(claim: FactClaim, cand: Candidate) -> tuple[set[str], set[str]]:
    """(fact words said with the claim's polarity, fact words said only with the other).

    A word in a negated clause is negated unless it stands before the negation word in the clause
    that holds it (the subject: "he" in "he does not believe"); a negated claim's words outside its
    own negation's scope agree in either polarity.
    """
    facts = set(claim.facts)
    agree: set[str] = set()
    disagree: set[str] = set()
    for c in cand.clauses:
        for w in c.stems & facts:
            negated = c.negated and w not in c.head
            if w in claim.neutral or negated == (claim.negated and w not in claim.positive):
                agree.add(w)
            else:
                disagree.add(w)
    return agree, disagree - agree


def _denied_before(clause: str, number: str) -> bool:
    """A negation word of the clause itself stands before ``number`` in it."""
    words = tokens(clause)
    at = next((k for k, w in enumerate(words) if w.replace(",", "").startswith(number)), None)
    return at is not None and any(is_negation(w) for w in words[:at])


def has_number(cand: Candidate, number: str, counted: str, claim_words: set[str], negated: bool = False) -> bool:
    """The candidate states ``number`` of what the claim counts: the number followed by it (within
    three content words) or by another spelling of its unit ("120 volts" for "120 V"), by nothing, or by
    another word of the claim ("up to 2000 a day" for "2,000 eggs a day") that is no unit of another
    dimension ("10 mg" is not "10 days" of a claim that says both); or the claim's number counts nothing.
    A number its own clause denies before it, of a claim that is not negated, is not stated ("the 3-year rule is
    outdated; it is due 4 years after ...", masked to "not the 3-year rule. ...")."""
    for c in cand.clauses:
        if c.negated and not negated and _denied_before(c.text, number):
            continue
        for n, after in c.numbers:
            if n == number and (not counted or not after or counted in after or _same_unit(counted, after[0])
                                or (after[0] in claim_words and not _other_dimension(counted, after[0]))
                                or (counted == "time" and after[0] == "x") or _same_month(counted, after[0])):
                return True
        if not counted and any(s.endswith(number) and s[:-len(number)][-1:].isalpha() for s in c.stems):
            return True  # a name's number ("GPLv3" for "Version 3"): a word with digits is no number of its own
    return False


def unit_of(word: str) -> tuple[str, object] | None:
    """A unit's (dimension, size) from a word or its stem ("volt" of "volts", "mg"); None when it is none.
    Durations of the clock and of the calendar are one dimension here (a day and a month both time)."""
    found = UNITS.get(word) or UNITS.get(f"{word}s") or UNITS.get(f"{word}e") or (
        UNITS.get(word[:-1]) if word.endswith("s") else None)  # ("minut": the stem of "minute")
    if found is None and word == "v":
        found = UNITS.get("volt")
    if found is None:
        return None
    return ("time" if found[0] == "calendar" else found[0], found[1])


def _same_unit(a: str, b: str) -> bool:
    """Two spellings of one unit ("v" and "volt", "mpa" and "megapascal")."""
    ua, ub = unit_of(a), unit_of(b)
    return ua is not None and ua == ub


_MONTH_SHORT = {m[:3] for m in MONTHS} | {"sept"}


def _same_month(a: str, b: str) -> bool:
    """A month's name and its abbreviation, as stems ("januari" and "jan", "sept" and "septemb")."""
    return a != b and (a[:3] in _MONTH_SHORT) and a[:3] == b[:3] and (a in _MONTH_SHORT or b in _MONTH_SHORT) and any(
        m.startswith(a[:3]) and (m.startswith(a) or m.startswith(b) or stem(m) in (a, b)) for m in MONTHS)


def _other_dimension(a: str, b: str) -> bool:
    """Units of two dimensions ("day" and "mg"): a number counted in one is not the number counted in the other
    ("10 mg" is not the claim's "10 days" where the claim says both)."""
    ua, ub = unit_of(a), unit_of(b)
    return ua is not None and ub is not None and ua[0] != ub[0]


_WORD_RUN = re.compile(r"\w(?:[\w'’-]*\w)?")
POSSESSIVE = re.compile(r"['’]s$")
"""A possessive's ending ("the University's role": the name is "university")."""
"""A word as :func:`swapped_name` reads it: a quotation mark or a hyphen at its edge is not its ("'port'" is port)."""


_ROMAN = re.compile(r"(?:I|II|III|IV|V|VI|VII|VIII|IX|X|XI|XII|XIII|XIV|XV|XVI)")


def swapped_name(claim: FactClaim, cand: Candidate) -> str | None:
    """A name or a word of the claim that the candidate replaces by another in the same place (None when
    it does not), the claim's words around it standing in the candidate around the new words:

    - a name, two words on one side of it in place, replaced by capitalised words not in the claim and
      not spelt like it ("an English fossil collector" said "an Welsh fossil collector"; "the Étang de
      Vaccarès." said "the Étang de Berre."); or a name of several words none of which is said, framed
      by two words each side or the sentence's edge ("found by Mary Anning in 1823" said "found by
      William Buckland in 1823", "Georges Cuvier first doubted" said "Richard Owen first doubted"; "He
      was hired" for "David Axelrod was hired" is no name);
    - any other fact word replaced by its opposite (:func:`engine.text.lexicon.opposite`: "before" by
      "after", "maximum" by "minimum", "landlord" by "tenant") in the claim's frame, two words on each
      side or three on one and the sentence's edge on the other. Another word than a listed opposite is
      left to the recall: word vectors put co-hyponyms ("saliva"/"blood") as close as synonyms
      ("abundant"/"common"), so no rule tells a changed fact from a paraphrase there.

    A name or word merely left out, or another one elsewhere in a longer sentence, is the recall's business."""
    words = _WORD_RUN.findall(claim.text)
    # a name's possessive is the name ("the University's role": "university"); other words stay as written
    low = [POSSESSIVE.sub("", w.lower()) if w[:1].isupper() else w.lower() for w in words]
    cand_words = _WORD_RUN.findall(cand.text)
    cand_low = [POSSESSIVE.sub("", w.lower()) if w[:1].isupper() else w.lower() for w in cand_words]
    claim_set, said = set(low), set(cand_low)

    def capitalised(k: int, span: list[str], inside: bool = False) -> bool:  # a word that may be part of another
        # name: not the one replaced (another name of the claim may take its place: "the Vault B laboratory" for
        # "the Marrowfield laboratory" of a claim that names Vault B later), no pronoun; inside a name a regnal
        # number ("Hadrian I", "Leo III") is part of it
        if inside and _ROMAN.fullmatch(cand_words[k]) and cand_low[k] not in span:
            return True
        return cand_words[k][:1].isupper() and cand_low[k] not in span and cand_low[k] not in STOPWORDS

    def replaced(b: int, e: int, sides: int, edges: bool, one_word: bool) -> str | None:
        """The claim's words ``low[b:e]``, framed by ``sides`` words each side (or the sentence's edge when
        ``edges``, with at least three frame words in all), replaced in the candidate by other words
        (one word when ``one_word``, else a run of capitalised ones); the new words, or None."""
        before, after = low[max(0, b - sides):b], low[e:e + sides]
        at_start, at_end = b == len(before), e + len(after) == len(low)
        if edges:
            if len(before) + len(after) < 3:
                before = low[max(0, b - 3):b] if at_end else before
                after = low[e:e + 3] if at_start else after
            if not ((len(before) >= sides or at_start) and (len(after) >= sides or at_end)
                    and len(before) + len(after) >= 3):
                return None
        elif len(before) < sides and len(after) < sides:
            return None
        for j in range(len(before), len(cand_low) + 1):
            if cand_low[j - len(before):j] != before or (edges and at_start and len(before) < sides and j != len(before)):
                continue
            if one_word:
                ends = [j + 1] if j < len(cand_low) and cand_low[j] not in claim_set and (
                    cand_low[j] not in STOPWORDS or cand_low[j] in OPPOSITES) else []  # "more" for "less" too
            else:  # each end of the run of capitalised words ("Wilbur" of "Wilbur Wright piloted")
                ends = []
                while j + len(ends) < len(cand_words) and capitalised(j + len(ends), low[b:e], bool(ends)):
                    ends.append(j + len(ends) + 1)
            for k in ends:
                if cand_low[k:k + len(after)] == after and not (edges and at_end and k + len(after) != len(cand_low)):
                    return " ".join(cand_low[j:k])
        return None

    for i, w in enumerate(low):
        if w in claim.names and w not in said:
            # one name of the claim, two words on one side of it in place ("an English fossil collector" said
            # "an Welsh fossil collector"; "the Étang de Vaccarès." said "the Étang de Berre.")
            new = replaced(i, i + 1, 2, False, False)
            if new and difflib.SequenceMatcher(None, new, w).ratio() < NAME_SPELLING and not _same_month(w, new.rstrip(".")):
                return w  # (a month said short is the month: "31 Jan" for "31 January")
    i = 0
    while i < len(low):
        if low[i] not in claim.names:
            i += 1
            continue
        # a whole name of several words, none of them said ("found by Mary Anning in 1823" said "found by
        # William Buckland in 1823"; a first name at the sentence's start belongs to it: "Georges Cuvier")
        b, e = i, i + 1
        while e < len(low) and (low[e] in claim.names or (
                low[e] in _NAME_JOINS and e + 1 < len(low) and low[e + 1] in claim.names)):
            e += 1  # ("England and Wales", "Isle of Man" are one name)
        while b > 0 and words[b - 1][:1].isupper() and low[b - 1] not in STOPWORDS and low[b - 1] not in said:
            b -= 1  # (a title the candidate says too frames the name: "Pope Leo III" said "Pope Hadrian I")
        while e < len(low) and _ROMAN.fullmatch(words[e]):
            e += 1  # a regnal number is the name's
        i = e
        if e - b >= 2 and not any(x in said for x in low[b:e] if x not in _NAME_JOINS):
            new = replaced(b, e, 2, True, False)
            if new and difflib.SequenceMatcher(None, new, " ".join(low[b:e])).ratio() < NAME_SPELLING:
                return " ".join(low[b:e])
    for i, w in enumerate(low):
        # a word of the claim said as its opposite in the claim's frame ("four weeks before the leave" -> "after",
        # "weighing less than 5 kg" -> "more": a function word too, its frame decides)
        if w in said or not opposites_of(w) & said or is_number_stem(w):
            continue  # (a word with no listed opposite in the candidate costs one lookup)
        new = replaced(i, i + 1, 2, True, True)
        if new and opposite(new, w):
            return w
        # three words of the claim's frame on one side and the candidate's sentence ending (or starting) on the
        # other: a reply that stops where the claim goes on ("kept at 5°C or above." for "... or below in ...")
        before, after = low[max(0, i - 3):i], low[i + 1:i + 4]
        for j in range(len(cand_low)):
            if not opposite(cand_low[j], w):
                continue
            if len(before) == 3 and cand_low[j - 3:j] == before and j + 1 == len(cand_low):
                return w
            if len(after) == 3 and cand_low[j + 1:j + 4] == after and j == 0:
                return w
            # the opposite said of the same thing: the next content word the claim's word qualifies, within
            # two words of each ("the lowest possible total ... is 3" said "3 is the highest total")
            # ("the minimum total is 3 and the highest total is 15" gives the claim's number to another thing: the
            # opposite's part of the sentence holds one of the claim's numbers, when the claim has any)
            # (a word that qualifies a noun, not a preposition before a number nor a comparison: "above 63 °C",
            # "larger in diameter than Mercury" said the other way round are the frame's business)
            if not claim.numbers or i + 1 >= len(low) or low[i + 1] in STOPWORDS or is_number_stem(low[i + 1]) \
                    or "than" in low[i + 1:i + 4]:
                continue
            heads = {x for x in low[i + 1:i + 3] if x not in STOPWORDS and not is_number_stem(x)}
            if heads & {x for x in cand_low[j + 1:j + 3] if x not in STOPWORDS} and _with_number(
                    cand.text, cand_low[j], {n for n, _w in claim.numbers}):
                return w
    return None


_NAME_JOINS = frozenset({"and", "of", "de", "la", "le", "du", "van", "von", "upon"})
"""Words inside a name of several capitalised words ("England and Wales", "Isle of Man", "Stratford upon Avon")."""
_PART = re.compile(r"[,;:]\s|\s(?:and|but|while|whereas)\s", re.IGNORECASE)


def _with_number(text: str, word: str, numbers: set[str]) -> bool:
    """Whether a part of ``text`` (cut at commas, semicolons, colons and conjunctions) that says ``word`` holds one
    of ``numbers`` (True when there are none)."""
    if not numbers:
        return True
    return any(word in (w.lower() for w in _WORD_RUN.findall(part)) and numbers & set(tokens(part))
               for part in _PART.split(text) if part)


def other_number(cand: Candidate, number: str, counted: str, numbers: set[str], facts: set[str]) -> bool:
    """The candidate gives another number for the fact's: a different fact.

    For a number that counts something (``counted``: "10 points"), a number that is none of the
    claim's ``numbers`` followed by the same thing ("a seven-point lead") or by a unit of the same
    dimension ("within 2 hours" for "within 90 minutes"), or this number followed by
    something else ("300 helmets" for "300 bicycles"); for one that counts nothing (a year), another
    number that counts nothing in a clause holding a fact word ("discovered penicillin in 1929" for
    1928). A number masked as the examiner's (``ScopedClause.echoed``: it earns nothing) is another number by the
    same two rules: a claim said back with the examiner's wrong value ("... except for the termination right in
    section 8." after "I have read that it was 8, not 6") states another fact.
    """
    kind = _kind(counted)
    for c in cand.clauses:
        for n, after in c.numbers:
            if counted and ((n not in numbers and (counted in after or (kind and _kind(after[0] if after else "")
                                                                       == kind))) or n == number):
                return True
            if not counted and n not in numbers and not after and c.stems & facts:
                return True
        for n, after in c.echoed:  # the examiner's number said in the claim's place ("section 8" for "section 6")
            if n not in numbers and ((counted and (counted in after or (kind and _kind(after[0] if after else "") == kind)))
                                     or (not counted and not after and c.stems & facts)):
                return True
    return False


_UNIT_KIND = {stem(w): dim for w, (dim, _size) in UNITS.items() if len(w) > 2}
"""A unit's stem -> its dimension ("day" and "week" are both time): two numbers of one kind."""
_STATEMENT_END = re.compile(r"(?<=[.!?;])\s+")
_SENTENCE_STOP = re.compile(r"(?<=[.!?])\s+")


def _is_year(number: str) -> bool:
    return len(number) == 4 and number.isdigit() and 1000 <= int(number) <= 2999


def _same_kind(counted: str, after: tuple[str, ...], number: str, other: str) -> bool:
    if not counted:  # a number that counts nothing: a year for a year ("1215", "1216"), a plain number for one
        return not after and _is_year(number) == _is_year(other)
    kind = _kind(counted)
    return counted in after or any(kind is not None and _kind(a) == kind for a in after[:1])


def _kind(unit: str) -> str | None:
    """A unit's kind (by its stem): its dimension, a duration in days or in months being one kind ("8 weeks" for "6
    months" gives another number; "28 days" said of the quantity supplied beside "six months" of the validity moves
    it), though months do not convert to days."""
    dim = _UNIT_KIND.get(unit)
    return "time" if dim == "calendar" else dim


_DEFINING = frozenset("is was are were applies apply refers refer means mean covers cover concerns".split())


@lru_cache(maxsize=4096)
def _statements(text: str) -> tuple[tuple[frozenset[str], tuple[tuple[str, tuple[str, ...]], ...], bool, str], ...]:
    """A candidate's statements (cut after ".", "!", "?" and ";"): their stems, numbers, negation, and the number
    the statement defines, if any (its subject: "21 days is the time allowed to pay", "The 10-year interval
    is for ...", "1215 is when ...")."""
    out = []
    for part in _STATEMENT_END.split(text):
        toks = tokens(part)
        k = 1 if toks[:1] and toks[0] in ("the", "that", "this") else 0
        defined = toks[k] if len(toks) > k and is_number_stem(toks[k]) and _DEFINING & set(toks[k + 1:k + 7]) else ""
        out.append((frozenset(content_stems(part)), tuple(bound_numbers(part, reach=3)),
                    any(is_negation(t) for t in toks), defined))
    return tuple(out)


def moved_number(cand: Candidate, number: str, counted: str, numbers: set[str], about: set[str],
                 said_of: set[str], subject: set[str] = frozenset(), negated_claim: bool = False) -> str | None:
    """The candidate gives the claim's number to something else and another number of its kind to what the
    claim is about: that other number (None when it does not).

    The candidate is read statement by statement (cut after ".", "!", "?" and ";"). The claim's number
    stands only as the subject of statements that define it as something ("21 days is ...", "The 10-year
    interval is for ...", "79 is the atomic number of platinum", "4 g in 24 hours is the cap for ..."), and
    another number of its kind (the same thing counted or a unit of the same dimension; a year for a year, a
    plain number for one, also beside the claim's number said bare: "10 is the age ... in Scotland; in England
    and Wales it is 14") stands in a statement, not negated (unless the claim is: "that isn't
    life-threatening ... you dial 101"), that holds one of the words the claim says of its subject (``said_of``) or of
    the subject itself (``subject``), and that shares more of the claim's words (``about``: its content
    words but numbers and the counted unit), or names the subject where the claim's number's statements do
    not: "21 days is the time allowed to pay the judgment sum; appeals must be filed within 30 days" for "a
    defendant has 21 days ... to file an appeal"; "1215 is when the barons renounced their allegiance; the
    charter itself was sealed in 1216"; "79 is the atomic number of platinum; gold's is 78".

    Not moved: a number said alone ("1,500 bytes; jumbo frames can carry 9,000 bytes"); the claim's numbers
    said together ("From a low of seven in 2004" beside "from 15 in 2009"); a number stated of something
    rather than defined ("the 65-year-old's case expired" beside "who has lived in Britain for more than 20
    years"; "built in 1961, and the wall fell in 1989").
    """
    own, own_subject, bare = -1, False, False
    others: list[tuple[int, bool, str, tuple[str, ...]]] = []
    for stems, said, negated, defined in _statements(cand.text):
        shared = len(stems & about)
        if len(numbers) > 1 and numbers <= {n for n, _after in said} and defined != number:
            return None
        for n, after in said:
            if n == number:
                if defined != number or not {w for w in stems - about if not is_number_stem(w)} - set(after):
                    return None  # the number stated of something (not defined as something), or said alone
                own, own_subject = max(own, shared), own_subject or bool(stems & subject)
                bare = bare or not after
            elif n not in numbers and (not negated or negated_claim) and (stems & said_of or stems & subject):
                others.append((shared, bool(stems & subject), n, after))
    if own < 0:
        return None
    # of its kind: the same thing counted or a unit of its dimension, a year for a year; a bare number beside
    # the claim's number said bare ("10 is the age ... in Scotland; in England and Wales it is 14")
    return next((n for shared, names, n, after in others
                 if (_same_kind(counted, after, number, n) or (bare and not after and _is_year(n) == _is_year(number)))
                 and (shared > own or (names and not own_subject))), None)


_SEGMENT = re.compile(r"[,;]|:(?!\d)|\b(?:and|or|but|while|whereas)\b", re.IGNORECASE)


@lru_cache(maxsize=4096)
def _segments(text: str) -> tuple[tuple[frozenset[str], frozenset[str]], ...]:
    """A text's segments (cut at commas, semicolons, a colon, and/or/but/while/whereas): each one's numbers
    and its words (content stems and numbers)."""
    out = []
    for part in _SEGMENT.split(text or ""):
        toks = tokens(part)
        nums = frozenset(re.sub(r"(?<=\d)(?:st|nd|rd|th)$", "", t) for t in toks if is_number_stem(t)) - {"1"}  # 30th: 30
        words = frozenset(w for w in content_stems(part) if not is_number_stem(w)) | nums
        if words:
            out.append((nums, words))
    return tuple(out)


_FINITE_START = frozenset("is are was were has have had will would can could may might must shall should does do did "
                          "being been".split())


def segment_moved(cand_text: str, number: str, counted: str, numbers: set[str], about: set[str],
                  claim_text_words: frozenset[str], names: frozenset[str] = frozenset()) -> str | None:
    """The candidate says the claim's number of another case, in a part of a sentence that holds words the
    claim does not ("child passports 10 years", "Germany was reunified on 9 November 1989"), and another
    number of its kind in a part that holds more of the claim's words ``about``, two at least ("Adult UK
    passports last 5 years", "The Berlin Wall opened on 3 October 1990"; not "... after GPLv2 was released in
    1991" beside "GPLv3 came out on 29 June 2007"): that other number, or None.

    The part with the claim's number names another case: a word opposite to one of the claim's ("child" for
    "adult") or a capitalised word the claim does not hold ("Germany"), and it does not open with a verb (the
    same subject's clause going on: "... fled to Britain in the 1990s and was convicted in Italy in 1999").
    Parts are those of one sentence, cut at commas, semicolons, a colon, and/or/but/while/whereas
    (:func:`_segments`); of its kind is the same thing counted or a unit of its dimension, a year for a year, a
    bare number for a bare one. A part with a negation holds no other number. The claim's words are
    ``claim_text_words`` (lower case, as written). A reply that says the claim's number with the claim's words, and
    another case's number beside it ("An adult passport lasts 10 years, and a child's 5 years"), moves
    nothing. Across a semicolon (two statements of one sentence), a part that names the claim's own case by a name
    of the claim (``names``, lower case) that the number's part does not hold has the claim's subject, however few
    of its other words it holds ("10 is the age of criminal responsibility in Scotland; in England and Wales it is
    14"); within a statement the words decide ("came fourth in the 1962 and 1963 Eurovision Song Contest" moves
    nothing)."""
    for sentence in _STATEMENT_END.split(cand_text or ""):  # the parts of one sentence: one statement's cases
        found = _segment_moved(sentence, number, counted, numbers, about, frozenset(claim_text_words), names)
        if found:
            return found
    if names:  # a semicolon's statements are one sentence's cases when a name of the claim sets them apart
        for sentence in _SENTENCE_STOP.split(cand_text or ""):
            if ";" in sentence and (found := _segment_moved(sentence, number, counted, numbers, about,
                                                            frozenset(claim_text_words), names, by_name=True)):
                return found
    return None


def _segment_moved(cand_text: str, number: str, counted: str, numbers: set[str], about: set[str],
                   claim_raw: frozenset[str], names: frozenset[str], by_name: bool = False) -> str | None:
    own: tuple[int, tuple[str, ...]] | None = None
    own_names: set[str] = set()
    others: list[tuple[int, str, tuple[str, ...], frozenset[str]]] = []
    for part in _SEGMENT.split(cand_text or ""):
        toks = tokens(part)
        words = {w for w in content_stems(part) if not is_number_stem(w)}
        said = bound_numbers(part, reach=3)
        raw = re.findall(r"[\w'’-]+", part)
        named = frozenset(w.lower() for w in raw if w[:1].isupper()) & names
        for n, after in said:
            if n == number:
                lead = raw[1:] if raw[:1] and raw[0].lower() in ("and", "but", "or", "while", "whereas") else raw
                other_case = any(OPPOSITES.get(w.lower(), frozenset()) & claim_raw and w.lower() not in claim_raw
                                 for w in raw) or any(  # (a pair the claim says itself is its own frame)
                    w[:1].isupper() and w.lower() not in claim_raw and w.lower() not in STOPWORDS for w in raw)
                if not other_case or (lead and lead[0].lower() in _FINITE_START):
                    return None  # no other case named ("from a low of seven in 2004"), or the same subject's
                    # clause going on ("... fled to Britain in the 1990s and was convicted ... in 1999")
                shared = len(words & about)
                own = (shared, after) if own is None or shared > own[0] else own
                own_names |= named
            elif n not in numbers and not any(is_negation(t) for t in toks):
                others.append((len(words & about), n, after, named))
    if own is None:
        return None
    for shared, n, after, named in others:
        if ((shared > own[0] and shared >= 2) if not by_name else bool(named - own_names)) and (
                _same_kind(counted, after, number, n) or (not own[1] and not after and _is_year(n) == _is_year(number))):
            return n
    return None


_CONTRAST = re.compile(r"(?<!\bor\s)(?<!\band\s)\b(?:lower|higher|shorter|longer|heavier|lighter|cooler|warmer|hotter|colder|smaller|larger|"
                       r"bigger|greater|lesser|fewer|different|differs?|slower|faster|stricter|cheaper|weaker|stronger|"
                       r"thinner|thicker|wider|narrower)\b|\b\w+er\s+than\s+(?:that|this|those|it)\b", re.IGNORECASE)
_CONTRAST_SPLIT = re.compile(r"(?<=[.!?;])\s+|,?\s+(?:whereas|while|but)\s+|\s[—–]\s|\s-\s", re.IGNORECASE)


def contrasted(cand_text: str, number: str, about: set[str], names: frozenset[str], claim_text: str = "") -> bool:
    """The candidate says the claim's ``number`` in one statement and, in another that does not say it, that the
    claim's own case has another value: the other statement names that case by words of the claim (``about``, two at
    least) or a name of it (``names``, lower case) that the number's statement does not hold, and says its value
    differs by a comparison ("... six years is the limitation period for a contract made by deed, whereas a simple
    contract claim has to be brought within a shorter period"; "38.3–39.2 °C is the normal range for cats; adult
    dogs run cooler than that"; "... takes to reach Venus; it takes noticeably longer to reach Earth"). Statements
    are cut at a stop, a semicolon, a dash and whereas/while/but; a negated comparison ("is no different") compares
    nothing, nor a bound's ("63 °C or hotter"), nor one beside another value of the claim ("the lower tier, 80 dB(A)"), nor one in the claim's own words only (``claim_text``: "hold +2 °C
    to +8 °C for up to 8 hours; any session longer than 8 hours needs a second box" said back), and a unit's
    letter ("°C") is no name."""
    parts = [p for p in _CONTRAST_SPLIT.split(spelled_as_digits(cand_text or "")) if p and p.strip()]
    claim_words = set(content_stems(spelled_as_digits(claim_text))) if claim_text else set()
    claim_numbers = {n for n, _after in bound_numbers(spelled_as_digits(claim_text), 3)} - {number} if claim_text else set()
    holding = [p for p in parts if any(n == number for n, _after in bound_numbers(p, 3))]
    if not holding or len(holding) == len(parts):
        return False
    own_words = set().union(*(content_stems(p) for p in holding))
    own_names = {w.lower() for p in holding for w in re.findall(r"[\w'’-]+", p) if w[:1].isupper()}
    for part in parts:
        if part in holding or not _CONTRAST.search(part) or any(is_negation(t) for t in tokens(part)):
            continue
        if claim_words and set(content_stems(part)) <= claim_words:
            continue  # the claim's own comparison, said back
        if any(n in claim_numbers for n, _after in bound_numbers(part, 3)):
            continue  # the claim's other value, said in its place: "at the lower tier, 80 dB(A), ...; at 85 dB(A) ..."
        new = (set(content_stems(part)) & about) - own_words
        named = {w.lower() for w in re.findall(r"[\w'’-]+", part) if w[:1].isupper() and len(w) > 1} & names - own_names
        if len(new) >= 2 or named:
            return True
    return False


def rebound_number(claim_text: str, cand_text: str) -> str | None:
    """A number of the claim that the candidate binds to what the claim says of another of its numbers (None
    when it does not): "100 mL/kg for mild dehydration and 50 mL/kg for moderate" for "50 mL/kg ... for mild
    dehydration, and 100 mL/kg ... for moderate"; "connected to electricity in 1927, and the fog signal was
    added in 1924" for the other way round.

    The claim is cut into segments (:func:`_segments`); a number's words are the content words of the segments
    that hold it. A candidate's segment holding the number holds none of the words only its own segments hold
    (against the numbers never beside it in the claim: "over 4 hours" stands with both doses), and two or more
    that only the segments of another such number, not said beside it, hold ("took four years from
    May 1845" fuses two of the claim's segments, it swaps nothing). A number whose segments hold no word of their own ("in
    1888, the lamp was replaced ...") is not read; a reply that says each number with its own words, in any
    order, binds nothing anew."""
    claim = _segments(claim_text)
    numbers = list(dict.fromkeys(n for nums, _w in claim for n in nums))  # in the claim's order: the same one named
    if len(numbers) < 2:  # whatever the process's hash seed
        return None
    bound = {n: frozenset(w for w in frozenset().union(*(w for nums, w in claim if n in nums)) if not is_number_stem(w))
             for n in numbers}
    companions = {n: frozenset().union(*(nums for nums, _w in claim if n in nums)) for n in numbers}
    segments = _segments(cand_text)
    for n in numbers:
        apart = [m for m in numbers if m not in companions[n]]  # never said beside it in the claim
        own = bound[n] - frozenset().union(*(bound[m] for m in apart))
        held = [(nums, words) for nums, words in segments if n in nums]
        if not own or not held or any(words & own for _nums, words in held):
            continue  # said with its own words somewhere ("capped at 12 weeks" beside "after 12 years")
        for nums, words in held:
            elsewhere = frozenset().union(*(bound[m] for m in apart if m not in nums))
            if len(words & (elsewhere - bound[n])) >= 2:
                return n
    return None


_LOWER = r"less|fewer|lower|younger|shorter|smaller|lighter|earlier|cheaper|slower|narrower|thinner|weaker|colder|cooler"
_BOUND_BEFORE = re.compile(
    rf"\b(?:(?P<max>(?:not|no|never)\s+(?:more|longer|later|greater|higher|over|above|exceeding|exceed|to\s+exceed)(?:\s+than)?|"
    rf"must\s+not\s+exceed|up\s+to|at\s+most|maximum(?:\s+of)?|max|under|below|within|(?:{_LOWER})\s+than|capped\s+at|"
    r"limited\s+to|before|until|till)|(?P<min>(?:not|no)\s+(?:less|fewer|earlier|sooner|lower|under|below)(?:\s+than)?|"
    r"at\s+least|minimum(?:\s+of)?|min|over|above|beyond|exceeding|exceeds?|after|[a-z]+er\s+than|more\s+than))"
    r"\s+(?:about|around|roughly|approximately|nearly)?\s*[£$€]?$", re.IGNORECASE)
_BOUND_AFTER = re.compile(r"^\s*(?:[a-z%°]+\s+){0,2}?(?:(?:or|and)\s+(?:(?P<min>more|above|over|higher|greater|older|longer|"
                          rf"later)|(?P<max>{_LOWER}|below|under|less))|(?P<min2>minimum)|(?P<max2>maximum))\b", re.IGNORECASE)
_LEAD_TIME = re.compile(r"^\s*(?:[a-z%°]+\s+){0,2}?(?:before|prior\s+to|ahead\s+of|in\s+advance|beforehand)\b", re.IGNORECASE)
"""An amount of time counted back from an event ("24 hours before arrival", "48 hours in advance"): a deadline for
it ("no later than") is a minimum of lead time."""
_NEGATION_IN_CLAUSE = re.compile(
    r"\b(?:not|never|no|nobody|none|prohibit\w*|forbid\w*|forbidden|exclud\w*|ban(?:s|ned|ning)?|illegal|contraindicated)\b|"
    r"\b(?:suspend\w*|stop(?:s|ped|ping)?|ceas\w*|halt\w*|discard\w*|refus\w*|reject\w*|disqualif\w*)\s+(?:[\w'’-]+\s+){0,3}?"
    r"(?:whenever|when|if|once|after|as\s+soon\s+as)\b|n['’]t\b",
    re.IGNORECASE)
_UNIT_NEXT = re.compile(r"\s*-?\s*([a-z°%µμ]+)", re.IGNORECASE)
_DIGITS = re.compile(r"(?<![\w.:])\d{1,3}(?:,\d{3})+(?:\.\d+)?(?![\d:])|(?<![\w.:])\d+(?:\.\d+)?(?![\d:])")


_WORD = re.compile(r"[A-Za-z]+")


_DIGIT_WORDS = {w: str(k) for k, w in enumerate("zero one two three four five six seven eight nine".split())} | {"oh": "0"}


@lru_cache(maxsize=4096)
def spelled_as_digits(text: str, lone_one: bool = True) -> str:
    """The text with each cardinal number spelled in words written in digits ("exceeds twenty dollars" ->
    "exceeds 20 dollars", "two hundred and fifty" -> "250", "sixteen fifty-eight" -> "1658", "one point four" -> "1.4",
    three digits or more said one by one: "seven six zero zero" -> "7600"), so a bound reads the
    same in either spelling; without ``lone_one`` a lone "one" stays a word ("no one", "one of them")."""
    found = list(_WORD.finditer(text))
    words = [m.group(0).lower() for m in found]
    out, last, i = [], 0, 0
    while i < len(found):
        j = i
        while j < len(found) and words[j] in _DIGIT_WORDS and (j == i or text[found[j - 1].end():found[j].start()] == " "):
            j += 1
        if j - i >= 3:  # read digit by digit: "seven six zero zero" -> "7600"
            out.append(text[last:found[i].start()] + "".join(_DIGIT_WORDS[w] for w in words[i:j]))
            last, i = found[j - 1].end(), j
            continue
        run = read_number(words, i) if is_number_word(words[i]) else None
        decimal = i + 2 < len(found) and words[i + 1] == "point" and words[i + 2] in _DIGIT_WORDS
        if run is None or run[2] or run[1] == i or (not lone_one and run[1] == i + 1 and words[i] == "one"
                                                   and not decimal):
            i += 1
            continue
        value, end, _ordinal = run
        said = str(value)
        if end + 1 < len(found) and words[end] == "point" and words[end + 1] in _DIGIT_WORDS:
            k = end + 1  # "one point four" -> "1.4"
            while k < len(found) and words[k] in _DIGIT_WORDS:
                k += 1
            said, end = f"{value}." + "".join(_DIGIT_WORDS[w] for w in words[end + 1:k]), k
        out.append(text[last:found[i].start()] + said)
        last, i = found[end - 1].end(), end
    return "".join(out) + text[last:]


def _bounds(text: str) -> dict[tuple[str, str], set[tuple[str, bool]]]:
    """Each number of a text with the direction its words bound it in and whether its clause is negated:
    "max" ("up to 4 g", "within 8 hours", "5°C or below", "less than 5 kg", "not exceeding 30 mA", "no more
    than"), "min" ("at least 30 mA", "or above", "more than 10 staff", "not less than"); the flag is a negation
    or a ban anywhere else in the number's clause ("must not have a pitch steeper than 42 degrees", "does not
    apply to infants younger than 1 month", "a pool of more than 250 litres is banned", an activity stopped or a thing
    discarded or refused once it is passed: "discharge must be suspended whenever it exceeds 22 °C", "discarded after
    24 hours", not "suspended for a maximum of 45 days"), where what the bound
    means depends on what the negation governs. Keyed by the number and the word after it (its unit). A number
    with no such words has none; a clock time ("07:00") is no number here."""
    out: dict[tuple[str, str], set[tuple[str, bool]]] = {}
    text = spelled_as_digits(text or "")
    for m in _DIGITS.finditer(text):
        before, after = text[:m.start()], text[m.end():]
        b, a = _BOUND_BEFORE.search(before), _BOUND_AFTER.match(after)
        way = ("max" if b.group("max") else "min") if b else (
            ("min" if a.group("min") or a.group("min2") else "max") if a else None)
        if way is None:
            continue
        if b and re.search(r"\b(?:later|earlier)\b", b.group(0), re.IGNORECASE) and _LEAD_TIME.match(after):
            way = "min" if way == "max" else "max"  # "no later than 24 hours before arrival": at least 24 hours ahead
        clause = re.split(r"[,;:.!?—–]", before[:b.start()] if b else before)[-1] + " " + re.split(r"[,;:.!?—–]", after)[0]
        unit = _UNIT_NEXT.match(after)
        key = (m.group(0).replace(",", ""), stem(unit.group(1).lower()) if unit else "")
        out.setdefault(key, set()).add((way, bool(_NEGATION_IN_CLAUSE.search(clause))))
    return out


def opposite_bound(claim_text: str, cand_text: str) -> str | None:
    """A number of the claim the candidate bounds the other way (None when it does not): "must be at least 30
    mA" for "not exceeding 30 mA", "5°C or above" for "5°C or below", "more than 5 kg" for "less than 5 kg".
    Like is compared with like: both clauses negated or neither ("Children below 6 months should never receive
    it" for "Do not give it to children younger than 6 months" bounds it the same way); a number bound one way
    by the claim and only the other by the candidate, of the same thing ("12 or more years" does not bound
    "capped at 12 weeks"). A number without such words bounds nothing."""
    claim = _bounds(claim_text)
    if not claim:
        return None
    for (n, unit), ways in _bounds(cand_text).items():
        said = [w for (m, u), w in claim.items() if m == n and (u == unit or not u or not unit)]
        if len(said) != 1 or len(said[0]) != 1 or len(ways) != 1:
            continue
        (c_way, c_neg), (r_way, r_neg) = next(iter(said[0])), next(iter(ways))
        if c_neg == r_neg and c_way != r_way:
            return n
    return None


_RANGE = re.compile(
    r"\b(?:between|from)\s+[£$€]?(?P<a>\d[\d,]*(?:\.\d+)?)\s*(?P<ua>[a-z%°]+)?\s+(?:and|to)\s+[£$€]?(?P<b>\d[\d,]*(?:\.\d+)?)(?!\d|:)"
    r"(?!\s*(?:am|pm|a\.m|p\.m)\b)|(?<![\w.,:])[£$€]?(?P<c>\d[\d,]*(?:\.\d+)?)\s*(?:-|–|to)\s*[£$€]?(?P<d>\d[\d,]*(?:\.\d+)?)(?![\d:])"
    r"(?!\s*(?:am|pm|a\.m|p\.m)\b)", re.IGNORECASE)


_LOW_END = re.compile(r"\b(?:lowest|minimum|min|least|smallest|earliest|shortest|youngest|starts?|begins?|from)\b",
                      re.IGNORECASE)
_HIGH_END = re.compile(r"\b(?:highest|maximum|max|most|largest|latest|longest|oldest|up\s+to|ends?|until)\b", re.IGNORECASE)


_MONTH_NEAR = re.compile(r"(?:^\s*|\b)(?:jan|feb|mar|apr|may|jun|jul|aug|sep|oct|nov|dec)[a-z]*\.?\s*$|^\s*(?:jan|feb|mar|apr|"
                         r"may|jun|jul|aug|sep|oct|nov|dec)[a-z]*\b", re.IGNORECASE)


_CHANGED = re.compile(r"\b(?:increas|decreas|reduc|rais|lower|cut|chang|mov|ros|rise|fell|fall|went|grew|grow|drop|"
                      r"extend|shorten|lengthen|cut|updat|upgrad|downgrad|revis|amend|switch|shift|jump|climb|slid|"
                      r"doubl|halv|tripl|trebl|quadrupl|soar|surg|plung|plummet|slump|tumbl|leap|spik|swell|swoll|"
                      r"shrink|shrank|expand|contract|improv|worsen|recover|boost|slash|hik|trim|fall|climb)\w*\s+"
                      r"(?:\w+\s+){0,2}$", re.IGNORECASE)


def range_around(claim_text: str, cand_text: str) -> str | None:
    """A number of the claim the candidate gives only as one end of a range the claim does not state ("between
    5 and 10 years" for "valid for 10 years", "8 to 12 characters" for "at least 12 characters"): a span is
    not the claim's value (None when the candidate commits to the number itself, the claim states the range
    too, or the number is the end the claim names: a minimum or "the lowest" at the low end, a maximum or "the
    highest" at the high end). Years ("keeper from 1871 to 1898": a period whose ends are events), changes
    ("increased from 16 MB to 64 MB"), dates and clock times ("between 9am and 5pm") are no ranges here."""
    claim_numbers = {n.replace(",", "") for n in _DIGITS.findall(spelled_as_digits(claim_text or ""))}
    if not claim_numbers:
        return None
    text = spelled_as_digits(cand_text or "")
    ends = []
    ways = {n: {w for w, _neg in found} for (n, _u), found in _bounds(claim_text).items()}
    lowest = bool(_LOW_END.search(claim_text or "")) and not _HIGH_END.search(claim_text or "")
    highest = bool(_HIGH_END.search(claim_text or "")) and not _LOW_END.search(claim_text or "")
    for m in _RANGE.finditer(text):
        if _MONTH_NEAR.search(text[max(0, m.start() - 12):m.start()]) or _MONTH_NEAR.match(text[m.end():]):
            continue  # dates ("6 April 2024 to 5 April 2025"): the date rules read them
        if _CHANGED.search(text[max(0, m.start() - 40):m.start()]):
            continue  # a change, not a span: "increased from 16 MB to 64 MB"
        a, b = (m.group("a"), m.group("b")) if m.group("a") else (m.group("c"), m.group("d"))
        a, b = a.replace(",", ""), b.replace(",", "")
        if not m.group("a") and re.search(r"\bfrom\b[^.;:!?]{0,40}$", text[max(0, m.start() - 40):m.start()]):
            continue  # "from 15 in 2009 to 45 last year": the span runs from an earlier number, not this one
        if a == b or (a in claim_numbers) == (b in claim_numbers):
            continue  # the claim's own range, or no number of it
        if any(re.fullmatch(r"1\d{3}|20\d{2}", n) for n in (a, b)):
            continue  # years: a period, whose ends are events ("from 1871 to 1898" says he took over in 1871)
        n, low = (a, True) if a in claim_numbers else (b, False)
        if low and (ways.get(n) == {"min"} or lowest) or not low and (ways.get(n) == {"max"} or highest):
            continue  # the end the claim names: "from 3 to 15" states "the lowest total is 3", "8 to 12" "up to 12"
        ends.append(n)
    if not ends:
        return None
    # the number said elsewhere in the candidate, outside every range, is committed to
    outside = {n.replace(",", "") for n in _DIGITS.findall(_RANGE.sub(" ", text))}
    return next((n for n in ends if n not in outside), None)


def _plain_number(n: str) -> str:
    return (tokens(n) or [n])[0]  # "1,000" is 1000, "2.0" is 2


def range_cut(claim_text: str, cand_text: str) -> str | None:
    """A range of the claim the candidate gives as one of its ends alone ("an INR of 3.0" for "a target INR
    range of 2.0–3.0"): the end said (None when the candidate says both ends, or neither). As in
    :func:`range_around`, years, dates and changes are no ranges; decimal zeros aside ("2–3" is "2.0–3.0")."""
    claim = spelled_as_digits(claim_text or "")
    text = spelled_as_digits(cand_text or "")
    said = {_plain_number(n) for n in _DIGITS.findall(text)}
    for m in _RANGE.finditer(claim):
        if _MONTH_NEAR.search(claim[max(0, m.start() - 12):m.start()]) or _MONTH_NEAR.match(claim[m.end():]) or \
                _CHANGED.search(claim[max(0, m.start() - 40):m.start()]):
            continue
        a, b = (m.group("a"), m.group("b")) if m.group("a") else (m.group("c"), m.group("d"))
        a, b = _plain_number(a), _plain_number(b)
        if a == b or any(re.fullmatch(r"1\d{3}|20\d{2}", n) for n in (a, b)):
            continue
        if (a in said) != (b in said):
            return a if a in said else b
    return None


_TERM = re.compile(r"\d{1,2}:\d{2}|\d[\d,]*(?:\.\d+)?|[A-Z][\w'’-]*(?:\s+(?:(?:of|de|von|van|del|da)\s+)?[A-Z][\w'’-]*)*|"
                   r"[\w'’-]+")
"""A number, a name (a run of capitalised words, "of" and its like inside it: "William of Normandy") or a word."""


@lru_cache(maxsize=4096)
def _terms(text: str) -> tuple[tuple[str, tuple[str, str]], ...]:
    """A text's numbers (a clock time, "07:00", is one), names (runs of capitalised words, not the one that opens a
    sentence alone) and role words (:data:`ROLE_WORDS`), each with the words either side of it, stemmed ("^"/"$" at
    the text's edges)."""
    found = [(m.group(0), m.start()) for m in _TERM.finditer(text or "")]
    words = [w for w, _at in found]
    out = []
    for i, (w, at) in enumerate(found):
        opening = at == 0 or re.search(r"[.!?]\s*$", text[:at])
        is_name = w[:1].isupper() and not (opening and " " not in w) and w.lower() not in STOPWORDS
        if not (w[:1].isdigit() or is_name or w.lower() in ROLE_WORDS):
            continue
        prev = stem(words[i - 1].lower()) if i else "^"
        nxt = stem(words[i + 1].lower()) if i + 1 < len(words) else "$"
        out.append((w.replace(",", "").lower(), (prev, nxt)))
    return tuple(out)


ROLE_WORDS = frozenset("""men women male female males females landlord tenant employer employee buyer seller plaintiff
defendant adult adults child children debtor creditor controller processor port starboard north south east west
import export imports exports summer winter spring autumn morning evening inbound outbound upstream downstream""".split()) \
    | COLOURS
"""The parties, roles and directions of the listed opposites (:data:`engine.text.lexicon.ANTONYMS`), and colours: terms a
reply may say in each other's places ("women ... 12 weeks and men ... 16 weeks" for the other way round, "a green
figure on a white background" for "a white figure on a green background"), as numbers and names."""


def exchanged(claim_text: str, cand_text: str) -> tuple[str, str] | None:
    """Two numbers or names of the claim the candidate says in each other's places (None when it does not):
    "2 chest compressions to 30 rescue breaths" for "30 chest compressions to 2 rescue breaths", "up to 180
    days in any 90-day period" for the other way round, "Neil Armstrong was the second person on the Moon,
    after Buzz Aldrin" for the other way round. A term stands in another's place when the words either side
    of it are those the other has in the claim and the other is not in its own place (two terms the claim joins by
    "and" or "or" change neighbours when their order changes: "31 July and 31 January" for "31 January and 31 July"
    exchanges nothing); or when each number is said in a clause of the other's words
    (:func:`_clauses_exchanged`: "emergency repairs within 3 working days, and urgent repairs within 4 hours")."""
    claim = {}
    for term, sig in _terms(claim_text):
        claim.setdefault(term, set()).add(sig)
    if len(claim) < 2:
        return None
    said = _terms(cand_text)
    sigs_said: dict[str, set[tuple[str, str]]] = {}
    for term, sig in said:
        sigs_said.setdefault(term, set()).add(sig)
    for term, sig in said:
        if term not in claim or sig in claim[term]:
            continue
        for other, sigs in claim.items():
            if other != term and other in sigs_said and sig in sigs and not sigs_said[other] & sigs \
                    and not _COORDINATED.search(_between(claim_text, term, other)):
                return term, other
    return _clauses_exchanged(claim_text, cand_text)


_COORDINATED = re.compile(r"^[\s,]*(?:and|or|&)[\s\d,]*$", re.IGNORECASE)

_COUNT = r"(\d+(?:\.\d+)?|one|two|three|four|five|six|seven|eight|nine|ten|twelve|fifteen|twenty|a|an|each|every)"
_RATIOS = (
    # "one adult for every 8 children", "1 part concentrate to 40 parts water", "4 instructors to 1 student"
    re.compile(rf"\b{_COUNT}\s+([a-z]+)(?:\s+([a-z]+))?\s+(?:to|for\s+every|for\s+each|per)\s+{_COUNT}\s+([a-z]+)"
               r"(?:\s+([a-z]+))?", re.IGNORECASE),
    # "each instructor may supervise no more than 4 students"
    re.compile(r"\b(each|every|one)\s+([a-z]+)\s+(?:may|can|must|should|shall|will)\s+(?:only\s+)?(?:supervise|oversee|"
               r"look\s+after|take|have|manage|lead|accompany|cover)\s+(?:up\s+to\s+|no\s+more\s+than\s+|at\s+most\s+|"
               rf"a\s+maximum\s+of\s+|not\s+more\s+than\s+)?{_COUNT}\s+([a-z]+)", re.IGNORECASE),
)
_RATIO_OF = re.compile(r"\b([a-z]+)[-\s]to[-\s]([a-z]+)\s+ratio\s+(?:of\s+|is\s+)?(?:at\s+least\s+|at\s+most\s+)?"
                       r"(\d+(?:\.\d+)?)\s*:\s*(\d+(?:\.\d+)?)", re.IGNORECASE)


def _count(word: str) -> float | None:
    w = word.lower()
    if w in ("a", "an", "each", "every"):
        return 1.0
    try:
        return float(w)
    except ValueError:
        return float(n[0]) if (n := read_number([w], 0)) and not n[2] else None


@lru_cache(maxsize=1 << 14)
def _ratios(text: str) -> tuple[tuple[str, str, float], ...]:
    """The ratios a text states, each as (first thing, second thing, how many of the first per one of the second),
    things by stem: "one adult for every 8 children" is (adult, child, 0.125), "an adult-to-child ratio of 8:1" (adult,
    child, 8)."""
    out = []
    for pattern in _RATIOS:
        for m in pattern.finditer(text):
            if pattern is _RATIOS[1]:
                a, x, b, y = m.groups()
            else:  # a thing of two words is named by its second ("1 part concentrate", "40 parts water")
                a, x1, x2, b, y1, y2 = m.groups()
                x = x2 if x2 and x2.lower() not in STOPWORDS else x1
                y = y2 if y2 and y2.lower() not in STOPWORDS else y1
            na, nb = _count(a), _count(b)
            if na and nb and stem(x.lower()) != stem(y.lower()):
                out.append((stem(x.lower()), stem(y.lower()), na / nb))
    for m in _RATIO_OF.finditer(text):
        na, nb = float(m.group(3)), float(m.group(4))
        if na and nb:
            out.append((stem(m.group(1).lower()), stem(m.group(2).lower()), na / nb))
    return tuple(out)


def inverted_ratio(claim_text: str, cand_text: str) -> str | None:
    """A ratio of the claim's two things the candidate states the other way round ("an adult-to-child ratio of 8:1" or
    "8 adults to 1 child" for "one adult for every 8 children", "4 instructors to 1 student" for "each instructor may
    supervise no more than 4 students"): the candidate's words for it, or None."""
    claimed = _ratios(claim_text)
    if not claimed:
        return None
    for x, y, r in _ratios(cand_text):
        for cx, cy, cr in claimed:
            mine = r if (x, y) == (cx, cy) else 1 / r if (x, y) == (cy, cx) else None
            if mine is not None and cr != 1 and abs(mine * cr - 1) < 1e-9:
                return f"{x} to {y} as {r:g}"
    return None


NEAR_COPY_SHARE = 0.85
"""The share of a claim's words, in order, a candidate must say for :func:`substituted_word` to read it as a copy."""


def substituted_word(claim_text: str, cand_text: str,
                     alike: Callable[[str, str], bool] | None = None) -> tuple[str, str] | None:
    """A word of the claim the candidate replaces by another in a copy of the claim: (the claim's word, the
    candidate's), or None. A copy says :data:`NEAR_COPY_SHARE` of the claim's words (eight at least) in the claim's
    order (:class:`difflib.SequenceMatcher` on the lowercased words); in it, one content word of the claim, the only
    one replaced, stands where the claim has another, of no shared stem, no number on either side, neither said elsewhere in the other
    text, not an abbreviation of the other, not its opposite (:func:`opposite_bound` and the antonym rules read
    those), and not ``alike`` (a synonym: the judge asks its word vectors): "the end of the next calendar day" for "...
    next working day ...", "at least 50 m from any road" for "... any building". Someone who rewords a rule rewords
    more than one word; someone who keeps every word but one has changed what the rule says, unless the one is said in
    other words ("needed" for "required")."""
    found = _substitution(claim_text, cand_text)
    return None if found is None or (alike is not None and alike(*found)) else found


@lru_cache(maxsize=1 << 14)
def _substitution(claim_text: str, cand_text: str) -> tuple[str, str] | None:
    """:func:`substituted_word` before its synonym test (a pure function of the two texts, kept)."""
    a = [w.lower() for w in re.findall(r"[\w'’°-]+", claim_text)]
    b = [w.lower() for w in re.findall(r"[\w'’°-]+", cand_text)]
    if len(a) < 8 or len(b) < NEAR_COPY_SHARE * len(a):
        return None
    shared = Counter(a) & Counter(b)  # no more words in order than in common: most pairs end here, unaligned
    if sum(shared.values()) < NEAR_COPY_SHARE * len(a):
        return None
    matcher = difflib.SequenceMatcher(None, a, b, autojunk=False)
    if sum(block.size for block in matcher.get_matching_blocks()) < NEAR_COPY_SHARE * len(a):
        return None
    replaced = [(i1, i2, j1, j2) for op, i1, i2, j1, j2 in matcher.get_opcodes() if op == "replace"]
    if len(replaced) != 1:
        return None  # nothing replaced, or reworded in more than one place ("probability of being matched")
    i1, i2, j1, j2 = replaced[0]
    if i2 - i1 != 1 or j2 - j1 != 1:
        return None
    old, new = a[i1], b[j1]
    if old in STOPWORDS or new in STOPWORDS or not old.isalpha() or not new.isalpha() or min(len(old), len(new)) < 3:
        return None
    if stem(old) == stem(new) or is_number_word(old) or is_number_word(new) or old in b or new in a:
        return None
    if new.startswith(old[:3]) and len(new) < len(old) or opposites_of(old) & {new}:
        return None  # "approx" for "approximately"; an opposite is read by the antonym rules
    return old, new


def _between(text: str, a: str, b: str) -> str:
    """The text between the first places two terms are said in it (lower-cased terms), whichever comes first; "x"
    when either is not found or they are said in one place."""
    low = text.lower().replace(",", "")
    i, j = low.find(a), low.find(b)
    if i < 0 or j < 0:
        return "x"
    (i, a), (j, b) = sorted(((i, a), (j, b)))
    return low[i + len(a):j] if j >= i + len(a) else "x"


_PART_CUT = re.compile(r";|(?<=[.!?])\s+|,?\s+\b(?:and|but|while|whereas)\s+(?=\D)|,\s+(?=\D)", re.IGNORECASE)
_NUMBER_AT = re.compile(r"(?<![\w.])\d[\d,]*(?:\.\d+)?(?![\d.]*\w)")


_STATEMENT_CUT = re.compile(r";\s|(?<=[.!?])\s+|,\s+(?:and|but|while|whereas|with|plus|of\s+which)\s+", re.IGNORECASE)


@lru_cache(maxsize=4096)
def _number_parts(text: str, cut: re.Pattern[str] = _PART_CUT) -> dict[str, frozenset[str]] | None:
    """Each number said once in a text, with the content stems of the clause it is said in (its unit, the word
    after it, left out; clauses cut by ``cut``); None when a number is said twice. Memoised (pure): a running
    summary's sentences come back every turn."""
    out: dict[str, frozenset[str]] = {}
    for part in cut.split(text):
        found = list(_NUMBER_AT.finditer(part))
        units = {stem(w.lower()) for m in found for w in re.findall(r"[\w'’-]+", part[m.end():])[:1]}
        words = set(content_stems(part)) - units
        for m in found:
            n = m.group(0).replace(",", "")
            if n in out:
                return None
            out[n] = frozenset(w for w in words if not is_number_stem(w))
    return out


@lru_cache(maxsize=4096)
def _numbers_and_stems(text: str) -> tuple[frozenset[str], frozenset[str]]:
    """A text's numbers (thousands commas off) and content stems (memoised: a summary's sentences come back)."""
    return frozenset(_NUMBER_AT.findall(text.replace(",", ""))), frozenset(content_stems(text))


_PREDICATE_CUT = re.compile(_STATEMENT_CUT.pattern + r"|\s+and\s+(?=(?:must|should|shall|will|may|can|cannot|is|are|"
                            r"was|were|has|have|needs?|do|does|did)\b)", re.IGNORECASE)
"""A claim's statements (:data:`_STATEMENT_CUT`), and predicates coordinated after one subject ("... must be
centrifuged within 4 hours and must not be refrigerated")."""


@lru_cache(maxsize=4096)
def _predicate_words(claim_text: str) -> tuple[frozenset[str], ...]:
    """Each statement's predicate words that no other statement of the claim has (its stems after its own subject:
    :func:`~engine.judge.fact_reading.clause_subject`, all of them when it opens with its verb); () for a claim of
    one statement. Memoised (pure)."""
    parts = [p for p in _PREDICATE_CUT.split(claim_text) if p and p.strip()]
    if len(parts) < 2:
        return ()
    stems = [frozenset(content_stems(p)) for p in parts]
    out = []
    for i, (part, words) in enumerate(zip(parts, stems, strict=True)):
        others = frozenset().union(*(w for j, w in enumerate(stems) if j != i))
        predicate = (words - frozenset(content_stems(clause_subject(part)))) or words
        out.append(frozenset(predicate - others))
    return tuple(out)


def part_denied(claim: FactClaim, cand: Candidate) -> str | None:
    """A statement of a claim of several that the candidate says with the other polarity while agreeing with the rest:
    "Main gear tyre pressures do not need to be checked daily; a tyre more than 10% below nominal is removed" for
    "... must be checked daily with the tyres cold, and any tyre more than 10% below nominal pressure must be removed
    from service". The rule of the whole claim (its predicate's words said more against its polarity than with it)
    applied to each statement's own predicate words (:func:`_predicate_words`), :func:`polarity_split`'s reading but
    that a word the claim asserts is denied only by a negation in its own clause (a negation's scope that runs on from
    an aside, "a leak that can't be contained, need someone on site within 4 hours", denies nothing of this part).
    The denied words, else None."""
    parts = _predicate_words(claim.text)
    if not parts:
        return None
    agree: set[str] = set()
    disagree: set[str] = set()
    for c in cand.clauses:
        own_negation = c.negated and any(is_negation(t) for t in tokens(c.text))
        for w in c.stems & set(claim.facts):
            expected = claim.negated and w not in claim.positive
            negated = c.negated and w not in c.head and (expected or own_negation)
            (agree if w in claim.neutral or negated == expected else disagree).add(w)
    disagree -= agree
    for own in parts:
        against = own & disagree
        if against and len(against) >= len(own & agree):
            return ", ".join(sorted(against))
    return None


def half_said(claim_text: str, cand_text: str) -> str | None:
    """A clause of the claim, with a number of its own, that the candidate says nothing of (none of its numbers,
    none of the words only it has) while it says another such clause: "Workers are withdrawn at 1.25% methane." for
    "Workers are withdrawn at 1.25% methane, and power is isolated at 1.0%." states half the fact. The left-out
    clause's numbers, else None (a claim whose numbers stand in one clause, or are said twice, is not cut). Clauses
    are statements of their own (:data:`_STATEMENT_CUT`: "; ", ", and ...", ", with ...", ", of which ..."): a comma
    alone sets a scene ("Under BS 7671, ...", "In an infant under 3 months old, ...") that an answer may leave out."""
    claim = _number_parts(claim_text, _STATEMENT_CUT)
    if not claim or len(claim) < 2:
        return None
    clauses: dict[frozenset[str], list[str]] = {}
    for n, words in claim.items():
        clauses.setdefault(frozenset(words), []).append(n)
    if len(clauses) < 2:
        return None
    said_numbers, said_words = _numbers_and_stems(cand_text)
    missing, present = [], False
    for words, numbers in clauses.items():
        own = set(words) - set().union(*(w for w in clauses if w != words))
        if said_numbers & set(numbers) or own & said_words:
            present = True
        else:
            missing.extend(numbers)
    return " and ".join(missing) if present and missing else None


def _clauses_exchanged(claim_text: str, cand_text: str) -> tuple[str, str] | None:
    """Two numbers of the claim, each in a clause of its own, that the candidate says each in a clause of the
    other's own words (those of one clause only): "Power must be isolated at 1.25% methane and workers withdrawn at
    1.0%" for "workers must be withdrawn when methane reaches 1.25%, and power must be isolated at 1.0%". A
    clause leans to a number's words when it holds more of them than of the other's."""
    claim = _number_parts(claim_text)
    said = _number_parts(cand_text) if claim and len(claim) >= 2 else None
    if not said:
        return None
    shared = [n for n in claim if n in said]
    for i, a in enumerate(shared):
        for b in shared[i + 1:]:
            own_a, own_b = claim[a] - claim[b], claim[b] - claim[a]
            if not own_a or not own_b or claim[a] == claim[b] or said[a] == said[b]:
                continue

            def lean(words: set[str], own_a: set[str] = own_a, own_b: set[str] = own_b) -> int:
                return len(words & own_a) - len(words & own_b)
            if lean(said[a]) < 0 < lean(said[b]):
                return a, b
    return None


_DAY_KIND = re.compile(r"(?<![\w.])(\d[\d,]*(?:\.\d+)?)\s+(?:(?:full|whole|complete)\s+)?"
                       r"(?:(working|business|banking|trading|school|clear|calendar)\s+)?"
                       r"(days?|hours?|weeks?)\b", re.IGNORECASE)
_KIND_CLASS = {"working": "working", "business": "working", "banking": "working", "trading": "working",
               "school": "school", "clear": "clear", "calendar": "", "": ""}


def other_day_kind(claim_text: str, cand_text: str) -> str | None:
    """A number of days the candidate counts in another kind of day ("28 working days" for "28 days", "5 days" for
    "5 business days"; working, business, banking and trading days are one kind, calendar days are days): the
    claim's number, else None."""
    claim: dict[str, set[str]] = {}
    for n, kind, _unit in _DAY_KIND.findall(claim_text or ""):
        claim.setdefault(n.replace(",", ""), set()).add(_KIND_CLASS[kind.lower()])
    if not claim:
        return None
    for n, kind, _unit in _DAY_KIND.findall(cand_text or ""):
        kinds = claim.get(n.replace(",", ""))
        if kinds and _KIND_CLASS[kind.lower()] not in kinds:
            return n.replace(",", "")
    return None


_LABEL = re.compile(r"\b([A-Za-z][a-z]{2,})\s+([A-Z]|[IVX]{1,4})\b(?![.'’-]\w)")


@lru_cache(maxsize=4096)
def _labels(text: str) -> frozenset[tuple[str, str]]:
    return frozenset((w.lower(), code) for w, code in _LABEL.findall(text) if w.lower() not in STOPWORDS)


def other_label(claim_text: str, cand_text: str) -> tuple[str, str] | None:
    """A lettered label of the claim ("Class B", "Schedule II", "hepatitis B") that the candidate gives another
    letter ("Class A"), its own said nowhere: (the claim's label, the candidate's), else None. A letter after a
    stop word ("in A") or opening an initial ("B. Smith") is no label."""
    claim = _labels(claim_text or "")
    if not claim:
        return None
    said = _labels(cand_text or "")
    for word, code in claim:
        if (word, code) in said:
            continue
        other = next((c for w, c in said if w == word and c != code), None)
        if other is not None:
            return f"{word} {code}", f"{word} {other}"
    return None


def foreign_subject(clause: ScopedClause, known: set[str] | frozenset[str], known_text: str,
                    lowered: str | None = None) -> bool:
    """The clause's subject names something else.

    Its head word (the last before the verb, or before the first preposition after the subject's
    first word: "People with diabetes" -> "people") is neither in the claim nor in the question, or
    it holds a capitalised word (other than the clause's first) that neither mentions ("In Japan ...").
    ``lowered``: ``known_text`` lower-cased, when the caller has it already.
    """
    phrase = clause_subject(clause.text)
    words = re.findall(r"[\w'’-]+", phrase)
    for i, w in enumerate(words[1:], 1):
        if w.lower() in _PREPOSITIONS:
            words = words[:i]
            break
    content = [w for w in words if w.lower() not in STOPWORDS]
    if not content:
        return False
    head = content_stems(content[-1])
    if head and head[-1] not in known:
        return True
    lowered = known_text.lower() if lowered is None else lowered
    first = re.findall(r"[\w'’-]+", clause.text)[:1]
    return any(w[:1].isupper() and w.lower() not in lowered
               for w in re.findall(r"[\w'’-]+", phrase) if [w] != first)


_PREPOSITIONS = frozenset("with of in on at from for by about under over near without within like".split())


_ALT_SPLIT = re.compile(r"((?:\s*(?:,(?!\d{3}\b)|[;/|:&\n]|\(\d+\)|\b(?:or|either|and)\b)\s*)+)", re.IGNORECASE)
_ALT_SEP = re.compile(r",|[;/|:&\n]|\(\d+\)|[a-z]+")
_ALT_MARKS = frozenset({";", "/", "|", "or", "either"})
ALT_ITEM_WORDS = 4
"""Content words an item of a list of alternatives may have (a longer item is a clause, not a candidate)."""


_LEAD_IN = re.compile(r"^(.*?\b(?:include|includes|included|including|such\s+as|namely|e\.g\.|for\s+example|like)"
                      r")\s+(.+)$", re.IGNORECASE | re.DOTALL)


@lru_cache(maxsize=1 << 14)
def alternatives(sentence: str, facts: frozenset[str], units: frozenset[str] = frozenset(),
                 claimed: frozenset[str] = frozenset()) -> tuple[str, ...]:
    """The other candidates a sentence offers beside the one that holds the fact, or () when it commits.

    The sentence is cut into items at commas, ";", "/", "|", ":", "&", "(1)"-style numbering and the
    words or/either/and. When the fact words the sentence holds all lie in one item (with at most
    two other content words: "It could be 48", "Possibly Paris") and its neighbours in the list are
    short items (at most :data:`ALT_ITEM_WORDS` content words, not a clause: "who has leukemia") of the same kind (numbers beside a number, words beside words) that hold none of the
    fact words, those neighbours are other candidates:

    - joined by a mark of alternatives (or, either, "/", "|", ";"), one neighbour is enough
      ("Candidates: 48 / 65 / 60." offers 65 and 60 beside 48; "Either Paris or Lyon.");
    - joined only by commas or "and", the items are a conjunction ("He played for the Braves,
      Giants and Reds" says he played for each): they are candidates only when the list is the
      whole sentence (after a lead-in ending in ":"), has three items or more and the fact's item
      is bare: no other content word, no verb ("48, 65, 60").

    A list whose other items hold fact words too ("red, green and blue" for the fact "red, green
    and blue") commits to all of them and offers nothing else; ":" ends a list (a lead-in). ``units``:
    the words the fact's numbers count ("days" of "28 days"), which a list of numbers shares ("7, 14, 28
    or 56 days" offers 7, 14 and 56 beside 28). A lead-in that ends in "include", "such as", "like"... is
    one too when it holds under two thirds of the fact's other words ("Relevant dates in the history of the
    periodic table include 1864, 1869 and 1871" offers three dates for Mendeleev's 1869; "Primary colours
    include red, green and blue" says each is one); an item the claim holds among its words (``claimed``: a
    cloze that gave the other items of the claim's own list) is never offered, in a lead-in's list or
    beside the fact's item ("... evidence of rats, mice or cockroaches" said back to a cloze that gave
    "rats, mice or ____").
    """
    if units and any(is_number_stem(w) for w in facts):
        facts = facts - units
    lead = _LEAD_IN.match(sentence or "")
    if lead:  # "Relevant dates ... include 1864, 1869 and 1871": a list after a lead-in that names no fact
        led = set(content_stems(lead.group(1)))
        rest = facts - set(content_stems(lead.group(2)))
        if rest and len(led & rest) * 3 >= 2 * len(rest):
            return ()  # "Primary colours include red, green and blue" says each is one
        sentence = ": " + lead.group(2)
    parts = _ALT_SPLIT.split(sentence or "")
    if len(parts) < 3:
        return ()
    texts = parts[::2]
    seps = [frozenset(_ALT_SEP.findall(p.lower())) for p in parts[1::2]]
    stems = [content_stems(t) for t in texts]
    if lead:  # after a lead-in that names no fact, a list of three or more short items offers every item
        items = [k for k, st in enumerate(stems) if st]
        if len(items) >= 3 and all(len(stems[k]) <= ALT_ITEM_WORDS and not _is_clause(texts[k]) for k in items) \
                and any(facts.intersection(stems[k]) for k in items):
            # the items the claim does not hold at all (a cloze that gave the other items gave them as the claim's)
            return tuple(texts[k].strip(" .!?()[]") for k in items if not (facts | claimed).intersection(stems[k]))
    holding = [k for k, st in enumerate(stems) if facts.intersection(st)]
    if len(holding) != 1:
        return ()
    here = holding[0]
    extra = [w for w in stems[here] if w not in facts]
    if len(extra) > 2:
        return ()
    numeric = any(is_number_stem(w) for w in stems[here] if w in facts)
    found: list[int] = []
    for step in (-1, 1):
        k = here
        while 0 <= k + step < len(texts):
            sep = seps[min(k, k + step)]
            item = stems[k + step]
            if ":" in sep or not item or len(item) > ALT_ITEM_WORDS or facts.intersection(item) \
                    or is_number_stem(item[0]) != numeric or _is_clause(texts[k + step]) \
                    or (claimed and set(item) <= claimed):  # the claim's own list ("rats, mice or cockroaches")
                break
            k += step
            found.append(k)
    if not found:
        return ()
    lo, hi = min(found + [here]), max(found + [here])
    joined = set().union(*seps[lo:hi])
    if lo > 0:
        joined |= seps[lo - 1] & {"either"}
    if not joined & _ALT_MARKS:
        last = len(texts) - 1 if stems[-1] else len(texts) - 2
        whole = (lo == 0 or ":" in seps[lo - 1]) and hi == last
        if not whole or extra or len(found) < 2 or _has_verb(texts[here]):
            return ()
    return tuple(texts[k].strip(" .!?()[]") for k in sorted(found))


def _is_clause(text: str) -> bool:
    """Two words or more with a verb among them ("who has leukemia"): a clause, not a listed candidate
    (a single word is an item whatever its kind: "surroundings or carried")."""
    return len(re.findall(r"[\w'’-]+", text)) > 1 and _has_verb(text)


def _has_verb(text: str) -> bool:
    """A linking or common verb, or a word ending in -ed after the first: the text is a clause."""
    words = [w.lower() for w in re.findall(r"[\w'’-]+", text)]
    return any(w in LINKING or w in VERBISH or (k and len(w) > 4 and w.endswith("ed")) for k, w in enumerate(words))


@lru_cache(maxsize=1)
def _word_pieces() -> Any:
    from tokenizers import Tokenizer

    from engine.knowledge.embed import default_tokenizer_path

    tok = Tokenizer.from_file(str(default_tokenizer_path()))
    tok.no_padding()
    tok.no_truncation()
    return tok


@lru_cache(maxsize=1 << 16)
def word_weight(word: str) -> float:
    """How much a fact word weighs in the recall: 1 + ln(its WordPiece count), numbers :data:`NUMBER_WEIGHT`
    (but 1 and "1st": "one", "first" are mostly words, as in :func:`bound_numbers`).

    The WordPiece vocabulary of the default embedder (all-MiniLM-L6-v2's ``tokenizer.json``) holds
    the common words of English whole; a rare word (a name, a term) is cut into several pieces. So
    the count is a rarity measure that needs no corpus and no labels: "said" weighs 1, "Sukumaran"
    (4 pieces) 2.39. On REALSumm's dev half it does as well as an IDF computed from the summaries
    themselves (``bench/criterion_check.py``).
    """
    if is_number_stem(word) and word not in ("1", "1st"):  # "one"/"first" are mostly words ("one of them")
        return NUMBER_WEIGHT
    pieces = len(_word_pieces().encode(word, add_special_tokens=False).ids)
    return 1.0 + math.log(max(1, pieces))


def weighted(words: list[str], said: dict[str, float], weight: dict[str, float]) -> float:
    """The weighted share of ``words`` said (each word's credit in ``said``, its weight in ``weight``)."""
    total = sum(weight[w] for w in words)
    return sum(weight[w] * said[w] for w in words) / total if total else 0.0


def job_words(claims: list[FactClaim], candidates: list[Candidate]) -> list[str]:
    """The words whose vectors :func:`soft_matches` needs: the claims' fact words as written, then the reply's."""
    if not any(c.surface for c in claims):
        return []
    said = sorted({w for cand in candidates for c in cand.clauses for w in c.words})
    return unique([w for c in claims for _f, w in c.surface] + said) if said else []


def soft_matches(claim: FactClaim, candidates: list[Candidate], vecs: dict[str, np.ndarray]) -> list[dict[str, float]]:
    """Per candidate, the fact words it may say in other words, each with its match in (0, 1].

    A fact word's match is the best cosine between its vector and a vector of one of the
    candidate's words (each word embedded alone by the sentence embedder), rescaled from
    [:data:`SOFT_FLOOR`, 1] to [0, 1] ("executed" for "killed", "shiners" for "bruises", a misspelt
    name); below the floor it is no match. A word the candidate spells (the same stem) counts 1 in
    :meth:`FreeTextJudge._base_score`, whatever this says. Word vectors put co-hyponyms close ("red"
    and "blue" 0.73, "Monday" and "Tuesday" 0.87), so: numbers never match softly; a name (a word
    capitalised inside the claim) matches only a word spelt like it (:data:`NAME_SPELLING`: "Chapin"
    for "Chapi", not "Germany" for "France"); and a claim of fewer than :data:`SOFT_MIN_FACTS` fact
    words (a bare value: "blue", "Monday") matches nothing softly.
    """
    if not claim.surface or not vecs:
        return [{} for _ in candidates]
    words = sorted({w for cand in candidates for c in cand.clauses for w in c.words})
    if not words:
        return [{} for _ in candidates]
    col = {w: j for j, w in enumerate(words)}
    sims = np.stack([vecs[w] for _f, w in claim.surface]) @ np.stack([vecs[w] for w in words]).T
    for r, (_f, w) in enumerate(claim.surface):
        if w in claim.names:  # another name is another entity: only a spelling of this one matches
            sims[r] = [x if _spelt_like(w, o) else 0.0 for x, o in zip(sims[r], words, strict=True)]
    out = []
    for cand in candidates:
        idx = sorted({col[w] for c in cand.clauses for w in c.words})
        if not idx:
            out.append({})
            continue
        best = sims[:, idx].max(axis=1)
        out.append({f: round((float(b) - SOFT_FLOOR) / (1.0 - SOFT_FLOOR), 6)
                    for (f, _w), b in zip(claim.surface, best, strict=True) if b > SOFT_FLOOR})
    return out


@lru_cache(maxsize=1 << 16)
def _spelt_like(a: str, b: str) -> bool:
    return difflib.SequenceMatcher(None, a, b).ratio() >= NAME_SPELLING


_TERM_CUT = re.compile(r"\s[—–-]\s|\s?—\s?|:\s")
_TERM_ITEM = re.compile(r",(?!\d{3}\b)\s*(?:and\s+)?|;\s*")
_VERB_LED = re.compile(r"^[a-z]+s\s+(?:the|a|an|his|her|their|its|our|your|this|that|these|those)\b")


def _terms_listed(text: str) -> list[str] | None:
    """The items of a text that is a list of five or more short terms (cut at commas and semicolons; at most four
    words each, no verb, none opening as a verb before its object: "runs the Waterloo"), else None
    (four or fewer are as often a sentence's appositions: "Simon Wood, 38, from Oldham, won Masterchef")."""
    items = [i.strip(" .!?") for i in _TERM_ITEM.split(text) if i.strip(" .!?")]
    if len(items) < 5 or any(len(i.split()) > 4 or _has_verb(i) or _VERB_LED.match(i) for i in items):
        return None
    return items


_LIST_LEAD = re.compile(r"^.*?\b(?:are|is|were|was|include|includes|including|comprise|comprises)\s+", re.IGNORECASE)


def term_list(sentence: str, facts: frozenset[str], claim_text: str) -> bool:
    """The sentence lists the claim's terms without relating them: a run of five or more short verbless items
    (before or after a dash or a colon: "UK, VAT, register, business, taxable turnover, £90,000 — all relevant
    terms", "IRS failure-to-file penalty: 5%, unpaid tax, each month, late return, maximum, 25%") across which
    the claim's fact words are spread (two items or more hold them). A claim that is itself such a list ("The
    primary colours are red, yellow, blue and green") is answered by listing it: never a term list then."""
    claim_parts = _TERM_CUT.split(claim_text or "") + [_LIST_LEAD.sub("", claim_text or "", count=1)]
    if any(_terms_listed(part) for part in claim_parts):
        return False
    for part in _TERM_CUT.split(sentence or ""):
        items = _terms_listed(part)
        if items and sum(bool(facts.intersection(content_stems(i))) for i in items) >= 2:
            return True
    return False


_NUM = r"\d+(?:[.,]\d+)*(?:\s+in\s+\d+(?:[.,]\d+)*)?"
_NUMBER_RUN = re.compile(rf"(?<![\w./])({_NUM})((?:\s*(?:,\s*or|,|or|\s/)\s*{_NUM})+)(?![\w/])", re.IGNORECASE)
_RUN_ITEM = re.compile(_NUM)
_EITHER_OR = re.compile(r"\beither\b[^.;:\d]{0,30}?(?<![\w.])(\d+(?:[.,]\d+)*)(?![\w/])[^.;:\d]{0,24}?\bor\b[^.;:\d]{0,24}?"
                        r"(?<![\w.])(\d+(?:[.,]\d+)*)(?![\w/])", re.IGNORECASE)


def number_alternatives(sentence: str, number: str, numbers: set[str]) -> tuple[str, ...]:
    """Other numbers the sentence offers beside the claim's ``number`` in a run of numbers joined by "or" or "/"
    ("3, 4 or 5 grams", "14 days, or 28, or 30", "1 in 40 or 1 in 80", "48 / 65", "either the last 60 or the last 90
    days"; values with their units, "1.25 mm, 1.5 mm or 1.75 mm", "14 October 1066, or possibly 25 September 1066",
    but not one value in two units, "5 cm, or 2 inches"; spelled numbers read as digits;
    a date's "10/14/1066" is no run), those
    not among the claim's ``numbers`` (a claim's own "one or two tablets" offers nothing): () when it offers none."""
    text = spelled_as_digits(sentence or "")
    for m in _EITHER_OR.finditer(text):  # "in either the last 60 or the last 90 days"
        items = [m.group(1).replace(",", ""), m.group(2).replace(",", "")]
        if number in items and (others := [i for i in items if i != number and i not in numbers]):
            return tuple(others)
    for m in _NUMBER_RUN.finditer(text):
        if not re.search(r"\bor\b|\s/\s", m.group(2), re.IGNORECASE):
            continue
        items = [i.strip().rstrip(",.").replace(",", "") for i in _RUN_ITEM.findall(m.group(0))]
        held = [i for i in items if number in re.findall(r"\d[\d.]*", i)]
        others = [i for i in items if i not in held and not set(re.findall(r"\d[\d.]*", i)) <= numbers | {"1"}]
        if held and others:
            return tuple(others)
    for m in _VALUE_RUN.finditer(text):  # values with their units: "1.25 mm, 1.5 mm or 1.75 mm", "14 October 1066,
        # or possibly 25 September 1066"; one value in two units is no alternative ("5 cm, or 2 inches")
        items = [(i.group(1), (i.group(2) or "").lower()) for i in _VALUE_ITEM.finditer(m.group(0))]
        held = [(v, u) for v, u in items if number in re.findall(r"\d[\d.]*", v.replace(",", ""))]
        if not held or not held[0][1]:
            continue
        unit = held[0][1]
        others = [f"{v} {u}" for v, u in items if (v, u) not in held and (u == unit or (u in _MONTHS and unit in _MONTHS))
                  and not set(re.findall(r"\d[\d.]*", v.replace(",", ""))) <= numbers]  # ("1 June": a digit, no article)
        if others:
            return tuple(others)
    return ()


_MONTHS = frozenset(MONTHS)
_VALUE = r"\d+(?:[.,]\d+)*\s*(?:(?!or\b)[A-Za-zµ°%][\w/°%]{0,11})(?:\s+\d{4})?"
_VALUE_ITEM = re.compile(r"(\d+(?:[.,]\d+)*)\s*((?!or\b)[A-Za-zµ°%][\w/°%]{0,11})?(?:\s+\d{4})?", re.IGNORECASE)
_VALUE_RUN = re.compile(rf"(?<![\w./]){_VALUE}(?:\s*(?:,\s*or|,|\bor)(?:\s+(?:possibly|maybe|perhaps|else|even))?\s+{_VALUE})*"
                        rf"\s*(?:,\s*or|\bor)(?:\s+(?:possibly|maybe|perhaps|else|even))?\s+{_VALUE}", re.IGNORECASE)


def enumerates(items: tuple[str, ...], facts: list[str]) -> bool:
    """Every item of a list (that has content) names a fact word: the list is the answer itself."""
    stems = [set(content_stems(item)) for item in items]
    stems = [s for s in stems if s]
    return bool(stems) and all(s.intersection(facts) for s in stems)
