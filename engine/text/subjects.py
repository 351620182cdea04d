"""Subjects and pronouns of English sentences: the noun phrase a sentence opens with, and an opening pronoun
resolved to it.

Read by the offline question generator (:mod:`engine.interview.offline_questions`), the offline bench
generator (:mod:`engine.bench.offline`) and the reference target (:mod:`engine.interview.reference`); it
sits with the text module so that bench, below interview, reads subjects without importing interview.
"""

from __future__ import annotations

import re

from engine.text.lexicon import PERSON_WORDS, VERBS
from engine.text.sentences import plain_sentences, text_blocks

OPENING_PRONOUN = re.compile(r"^(?P<p>it|they|he|she|this|these|its|their)\b(?P<rest>.*)$", re.I | re.S)
"""A sentence that opens with a pronoun (it, they, he, she, this, these, its, their): groups ``p`` and ``rest``."""
_DETERMINER_PRONOUNS = {"this", "these"}
_PLURAL_PRONOUN = re.compile(r"^(?:they|their)\b", re.I)


_SUBORDINATOR = re.compile(r"^(?:if|when|whenever|while|because|although|though|unless|once|whether|where|"
                          r"however|so that|even)\b", re.I)
_LEADING_PREPOSITION = re.compile(r"^(?:in|on|at|by|since|from|during|after|before|around|until|for)\b", re.I)
_RELATIVE = re.compile(r"\s+(?:who|whom|whose|which|that|where)\b.*$", re.I | re.S)


_FINITE = frozenset("is are was were has have had must may can cannot should will would could might shall does do "
                    "did".split())
_PRONOUN_HEAD = frozenset("them it they us him her those these this that one".split())


def opening_phrase(tokens: list[str], at: int) -> str | None:
    """The noun phrase of a sentence's words before its verb ``tokens[at]`` (:func:`noun_phrase`); when
    that verb is a relative clause's ("A landlord who takes a deposit must..."), the phrase runs with its
    clause to the main verb, a finite or modal one within six words ("A landlord who takes a deposit")."""
    taken = tokens[:at]
    if taken and taken[-1].strip(",").lower() in ("who", "which", "that", "whose"):
        for j in range(at + 1, min(len(tokens), at + 7)):
            if tokens[j].strip(",;:").lower() in _FINITE:
                return noun_phrase(" ".join(tokens[:j]), keep_clause=True)
    return noun_phrase(" ".join(taken))


def noun_phrase(opening: str, keep_clause: bool = False) -> str | None:
    """The noun phrase a sentence's opening words (those before its verb) name: cut at a relative clause
    ("A landlord who takes..." -> "A landlord") and at a comma ("Normal wear and tear, such as faded
    paint" -> "Normal wear and tear"; after a leading phrase "In 1823, Anning" -> "Anning"; a name in
    apposition is kept: "Her father, Richard Anning"); None when
    they open a subordinate clause ("If the parties cannot agree, either of them") or end in a pronoun
    ("either of them"): no noun phrase. ``keep_clause``: a relative clause is kept (:func:`opening_phrase`)."""
    text = " ".join(opening.split()).strip(",;: ")
    if not text or _SUBORDINATOR.match(text):
        return None
    head, comma, tail = text.partition(",")
    if comma and _LEADING_PREPOSITION.match(head) and tail.strip():
        head, comma, tail = tail.partition(",")
    apposition = tail.partition(",")[0].strip()
    if comma and apposition and all(w[:1].isupper() or w in ("of", "de", "the", "van", "von")
                                    for w in apposition.split()):
        head = f"{head.strip()}, {apposition}"  # a name in apposition: "Her father, Richard Anning"
    head = (head if keep_clause else _RELATIVE.sub("", head)).strip().strip(",;: ")
    if head and head.split()[-1].lower() in _PRONOUN_HEAD:
        return None  # "either of them", "each one": a pronoun, no aspect of its own
    return head or None


def subject_of(sentence: str) -> str | None:
    """The noun phrase a sentence opens with (the words before its first verb, at most 6, read by
    :func:`noun_phrase`), or None when it opens with a pronoun or a subordinate clause or no verb is found."""
    words = sentence.split()
    if not words or OPENING_PRONOUN.match(sentence.strip()):
        return None
    taken: list[str] = []
    for i, w in enumerate(words):
        bare = w.strip(",.;:()\"'").lower()
        if taken and bare in VERBS:
            return opening_phrase(words, i)
        taken.append(w)
        if len(taken) > 6:
            break
    at = present_verb_at(words)
    return opening_phrase(words, at) if at is not None else None


_DETERMINER = frozenset("the this that a an each every any no our your its their his her".split())
_AFTER_VERB = frozenset("to the a an all that these those this for in on with by from at each every its their his her "
                        "no only any some both either more less".split())


def present_verb_at(toks: list[str]) -> int | None:
    """Where a present-tense verb in -s stands after a short subject opened by a determiner, when no listed
    verb does ("The guide applies to all ...", "Each inspector records the ..."): the word in -s (not -ss,
    -us, -is, -'s) at the second to fourth place, or up to the sixth after a name in capitals ("The Quell
    Valley Foraging Code governs the ..."), before a preposition or a determiner, after a word that does
    not end in -s itself ("The bridges in the county ..." has none) and is no preposition, article or
    conjunction ("The number of visitors to ...")."""
    if not toks or toks[0].lower() not in _DETERMINER:
        return None
    for i in range(2, min(7, len(toks) - 1)):
        w = toks[i].lower()
        if w.endswith("s") and not w.endswith(("ss", "us", "is", "'s", "’s")) and w.isalpha() \
                and toks[i + 1].strip(",").lower() in _AFTER_VERB and not toks[i - 1].lower().endswith("s") \
                and toks[i - 1].lower() not in _NOT_BEFORE_VERB and (i < 5 or all(t[:1].isupper() for t in toks[1:i])):
            return i
    return None


_NOT_BEFORE_VERB = frozenset("of for to in on at by with from and or the a an".split())
"""Words a verb does not follow ("The number of visitors to ..." has none)."""


def resolve_pronoun(sentence: str, subject: str | None) -> str:
    """The sentence with an opening pronoun replaced by ``subject`` ("It peaks in winter." + "Seasonal
    influenza" -> "Seasonal influenza peaks in winter."); "This"/"These" before a noun become "The".
    Unchanged when it opens with no pronoun, or no subject is known."""
    m = OPENING_PRONOUN.match(sentence.strip())
    if not m:
        return sentence
    pronoun, rest = m.group("p"), m.group("rest")
    if pronoun.lower() in _DETERMINER_PRONOUNS:
        nxt = rest.split()[0].strip(",.;:").lower() if rest.split() else ""
        if nxt and nxt not in VERBS:
            return ("The" if pronoun[0].isupper() else "the") + rest
    if not subject:
        return sentence
    subject = subject.strip()
    if sentence.strip()[0].isupper() and subject[:1].islower():
        subject = subject[0].upper() + subject[1:]
    elif subject[:1].isupper() and subject[1:2].islower() and not sentence.strip()[0].isupper():
        subject = subject[0].lower() + subject[1:]
    if pronoun.lower() in ("its", "their"):
        return f"{subject}'s{rest}" if not subject.endswith("s") else f"{subject}'{rest}"
    return subject + rest


_DEMONSTRATIVE = re.compile(r"^(?:This|That|These|Those)\s+(?=[a-z])")


def chunk_subject(chunk_text: str, sentence: str, fallback: str = "") -> str:
    """What a pronoun opening ``sentence`` stands for in its chunk: the subject of the nearest earlier
    sentence that opens with a noun phrase :func:`subject_of` reads, else the chunk's first Markdown
    heading, else ``fallback`` (in an encyclopedic text "it", "she" most often stand for its subject). A
    plural pronoun (they, their) is never read as the heading or the fallback (a title or a topic's name,
    singular as a rule: "Tetanus enter the body" is wrong), nor past a sentence whose subject the rule
    cannot read; a singular one never as a plural subject ("It had thick walls" is not "The years ..."), and
    "he" or "she" only as a person's name or a person noun (:func:`_person_like`), never as a body's name (the likeliest referent: "The spores of this bacterium live in soil. They enter ..."):
    "" then, and the sentence stays as it is."""
    text = chunk_text or ""
    heading = next((ln.lstrip("#").strip() for ln in text.splitlines() if ln.lstrip().startswith("#")), "")
    parts = [p for block in text_blocks(text) for p in plain_sentences(block)]  # headings and markers left out
    key = " ".join(sentence.split())
    at = next((i for i, s in enumerate(parts) if " ".join(s.split()) == key), len(parts))
    plural = bool(_PLURAL_PRONOUN.match(key))
    person = bool(_PERSON_PRONOUN.match(key))
    for s in reversed(parts[:at]):
        # "This manual applies to ..." names its subject too: read as "The manual applies to ..."
        subj = subject_of(s) or subject_of(_DEMONSTRATIVE.sub("The ", s.strip(), count=1))
        if subj and not plural and _plural_head(subj):
            continue  # "It had thick walls" is not about "The years 1911-1914" said before
        if subj and person and not _person_like(subj):
            continue  # "She had spent the winter ..." is not about "The Orsk Valley Seed Library"
        if subj:
            return subj
        if plural and not OPENING_PRONOUN.match(s.strip()):
            return ""  # it opens with a noun phrase this rule cannot read: the likeliest referent, unknown
    if plural:
        return ""
    if person:
        return next((f for f in (heading, fallback) if f and _person_like(f)), "")
    return heading or fallback


_PERSON_PRONOUN = re.compile(r"^(?:he|she|his|her)\b", re.I)
_NOT_PERSON_WORDS = frozenset("""library museum council society trust act code company institute university college school
hospital reserve valley river street road centre center board committee department office agency service scheme
policy procedure rules guide history station hall church park bank club group association""".split())


_KIN = frozenset("father mother grandfather grandmother uncle aunt cousin parent stepfather stepmother".split())


def _person_like(subject: str) -> bool:
    """Whether "he" or "she" may stand for a noun phrase: a name of two to four capitalised words, none of them a
    body's or a place's ("Maren Oulette", not "The Orsk Valley Seed Library"), a phrase whose last word names
    a person ("The head keeper", "Her father"), or one with such a name in apposition ("Her father, Richard
    Anning")."""
    head, comma, apposition = subject.partition(",")
    if comma and apposition.strip() and _person_like(apposition.strip()):
        return True  # "Her father, Richard Anning"
    words = [w.strip(",.;:") for w in head.split()]
    if not words:
        return False
    if words[-1].lower() in PERSON_WORDS or words[-1].lower() in _KIN:
        return True
    return (1 <= len(words) <= 4 and words[0].lower() not in _DETERMINER and all(w[:1].isupper() for w in words)
            and not any(w.lower() in _NOT_PERSON_WORDS for w in words))


def _plural_head(subject: str) -> bool:
    """A noun phrase whose last word looks plural ("The years 1911-1914", "Permits"): no referent of "it"."""
    words = [w.strip(",.;:") for w in subject.split() if not any(ch.isdigit() for ch in w)]
    head = words[-1].lower() if words else ""
    return (head.endswith("s") and not head.endswith(("ss", "us", "is")) and head.isalpha()
            and not words[-1][:1].isupper()) or head in ("people", "children", "women", "men")


def is_person(subject: str, rest: str) -> bool:
    """Whether a definition "SUBJECT was REST" is about a person: a proper name (every word capitalised,
    no article) defined by a person noun ("an English fossil collector")."""
    toks = subject.split()
    if not toks or toks[0].lower() in ("the", "a", "an") or not all(t[:1].isupper() for t in toks):
        return False
    head = [w.strip(",.;").lower() for w in rest.split()[:8]]
    return any(w in PERSON_WORDS or (len(w) > 5 and w.endswith(("ist", "ian"))) for w in head)
