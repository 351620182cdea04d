"""Subjects and pronouns of English sentences: the noun phrase a sentence opens with, and an opening pronoun
resolved to it.

Read by the offline question generator (:mod:`engine.interview.offline_questions`), the offline bench
generator (:mod:`engine.bench.offline`) and the reference target (:mod:`engine.interview.reference`); it
sits with the text module so that bench, below interview, reads subjects without importing interview.
"""

from __future__ import annotations

import re

from engine.text.lexicon import PERSON_WORDS, VERBS
from engine.text.sentences import plain_sentences

OPENING_PRONOUN = re.compile(r"^(?P<p>it|they|he|she|this|these|its|their)\b(?P<rest>.*)$", re.I | re.S)
"""A sentence that opens with a pronoun (it, they, he, she, this, these, its, their): groups ``p`` and ``rest``."""
_DETERMINER_PRONOUNS = {"this", "these"}


def subject_of(sentence: str) -> str | None:
    """The noun phrase a sentence opens with (the words before its first verb, at most 6), or None
    when it opens with a pronoun or no verb is found."""
    words = sentence.split()
    if not words or OPENING_PRONOUN.match(sentence.strip()):
        return None
    taken: list[str] = []
    for w in words:
        bare = w.strip(",.;:()\"'").lower()
        if taken and bare in VERBS:
            subject = " ".join(taken).strip(",;:")
            return subject if not subject.lower().startswith(("however", "because", "when", "if ")) else None
        taken.append(w)
        if len(taken) > 6:
            return None
    return None


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


def chunk_subject(chunk_text: str, sentence: str, fallback: str = "") -> str:
    """What a pronoun opening ``sentence`` stands for in its chunk: the subject of the nearest earlier
    sentence that opens with a noun phrase, else the chunk's first Markdown heading, else ``fallback``."""
    text = chunk_text or ""
    heading = next((ln.lstrip("#").strip() for ln in text.splitlines() if ln.lstrip().startswith("#")), "")
    body = " ".join(ln for ln in text.splitlines() if not ln.lstrip().startswith("#"))
    parts = plain_sentences(body)
    key = " ".join(sentence.split())
    at = next((i for i, s in enumerate(parts) if " ".join(s.split()) == key), len(parts))
    for s in reversed(parts[:at]):
        subj = subject_of(s)
        if subj:
            return subj
    return heading or fallback


def is_person(subject: str, rest: str) -> bool:
    """Whether a definition "SUBJECT was REST" is about a person: a proper name (every word capitalised,
    no article) defined by a person noun ("an English fossil collector")."""
    toks = subject.split()
    if not toks or toks[0].lower() in ("the", "a", "an") or not all(t[:1].isupper() for t in toks):
        return False
    head = [w.strip(",.;").lower() for w in rest.split()[:8]]
    return any(w in PERSON_WORDS or (len(w) > 5 and w.endswith(("ist", "ian"))) for w in head)
