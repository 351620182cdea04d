"""Clauses and negation scope (sentences of prose, English and Chinese).

A negation (:data:`engine.text.lexicon.NEGATIONS`, :data:`~engine.text.lexicon.DENIALS`, a Chinese
negation) reaches from its word to the end of the sentence, or to the next ";" or a scope end
(:data:`engine.text.lexicon.SCOPE_END`: but/rather/instead/however/though/although/yet/whereas/unless, 但/而/却/可是)
or a dash; a negation that only bounds a value ("not more than 4 grams", "must not exceed 8") negates nothing;
the words of its own clause before it (the subject: "Tim Farron has said he does ...") are outside its
scope; a clause that is only "No"/"Nope"/"不" is an interjection and negates nothing; a clause that opens
a scope with an even number of negations (two: "it is not preferred when hands are not soiled") asserts
and opens none; a later clause that opens with the negation ("Liquid oxygen, not nitrogen, is blue") is
an aside that negates only itself; "No. 1" and "no one"/"nobody" as a subject are handled as words, not
as a denial of what follows them; a negation whose scope "unless" ends states a condition ("may not carry
passengers unless ..." is "may carry passengers only if ..."): its clauses are not negated; a clause joined by "and"
or "or" with a subject and a finite verb of its own ("cannot be re-let until ..., and the lettings officer must record
...") ends the scope. The gold judge marks
scope on its own tokens
(:mod:`engine.judge.gold_tokens`) with the same word lists.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache

from engine.text.lexicon import (
    DENIALS,
    NEGATION_CJK,
    NEGATIONS,
    PAST_VERBS,
    PROHIBITIONS,
    SCOPE_END,
    SCOPE_END_CJK,
    VERBS,
)
from engine.text.numbers import NUMBER_WORDS_PATTERN
from engine.text.tokens import tokens

_CLAUSE_SPLIT = re.compile(
    r"(,(?=\s|$)|[;:](?=\s|$)|[()\[\]—，；：、（）]|\s[-–]\s|"
    r"\s(?=(?:but|although|though|whereas|while|because|which|unless)\b))", re.IGNORECASE)
_SCOPE_END = re.compile(rf"^\s*(?:{'|'.join(sorted(SCOPE_END))})\b|^\s*(?:{'|'.join(SCOPE_END_CJK)})", re.IGNORECASE)
_INTERJECTION = frozenset({"no", "nope", "nah", "不", "不是"})
_FINITE = r"(?:must|shall|should|may|might|can|could|will|would|is|are|was|were|has|have|does|do|[a-z]{3,}ed)"
_NEW_CLAUSE = re.compile(
    rf"^(?:and|or|so)\s+(?!{_FINITE}\b|not\b|never\b|then\b)[\w'’-]+(?:\s+[\w'’-]+){{0,4}}?\s+{_FINITE}\b")
"""A clause joined by "and"/"or" that has a subject and a finite verb of its own ("..., and the lettings officer must
record the certificate number"): an independent clause, outside the scope of a negation before it."""


def clause_parts(sentence: str) -> list[tuple[str, str]]:
    """A sentence's clauses, each with the delimiter before it ("" for the first, ",", ";", "(", ...).

    Splits at ", " "; " ": " ( ) [ ] — " - " " – " and the CJK forms, and before but/although/though/
    whereas/while/because/which/unless; "1,000", "30–60%" and "MHC:antigen" do not split. Clauses without
    words are dropped.
    """
    parts = _CLAUSE_SPLIT.split(sentence or "")
    out, delim = [], ""
    for i, part in enumerate(parts):
        if i % 2:
            delim = part
            continue
        if part and part.strip(" \t.!?。！？"):
            out.append((part.strip(), delim))
    return out


@dataclass(frozen=True)
class Clause:
    """A clause and where negation reaches in it.

    Attributes:
        text: the clause as written.
        negated: the clause lies in a negation's scope (its own or an earlier clause's).
        head: when the clause's own negation opens the scope, the clause's text before the negation
            word (its subject, outside the scope: "he" in "he does not believe"); "" otherwise.
    """

    text: str
    negated: bool
    head: str = ""


BOUND = re.compile(r"\s+(?:\w+\s+)?(?:(?:more|less|fewer|longer|later|greater|higher|older)\s+than|exceed(?:s|ing)?)\b|"
                    r"\s+(?:[\w'’-]+\s+){0,6}?(?:[a-z]+er\s+than|more\s+than|less\s+than|fewer\s+than|exceed(?:s|ing)?|"
                    r"within|beyond|above|below|over|under|until)\s+(?:about\s+|around\s+|roughly\s+|approximately\s+|at\s+(?:least|most)\s+)?"
                    rf"(?:[\d£$€]|{NUMBER_WORDS_PATTERN}\b)", re.IGNORECASE)
"""What follows a negation that only bounds a value ("not more than 4 grams", "no later than 1 May", "must not
exceed 8 guests", "should not take more than"; a few words on, a bound before a number: "must not have a pitch
steeper than 42 degrees", "must not act as a crew member within 8 hours", "must not be harvested until at least
14 days after"): an upper or lower limit stated, not the fact denied."""


_FORBIDDEN_OF = re.compile(r"\s+(?:[\w'’-]+\s+){0,3}?from\b", re.IGNORECASE)


def _bound_from(text: str, tok: str, end: int) -> int:
    """Where a bound after a negation word would start: after a prohibition's "from" ("prohibit a pilot from acting as a
    crew member within 8 hours" bounds like "must not act as a crew member within 8 hours"), else after the word."""
    m = _FORBIDDEN_OF.match(text, end) if tok in PROHIBITIONS else None
    return m.end() if m else end


def negation_count(text: str) -> int:
    """How many negation or denial words a clause says (the rule of :func:`_negation_at`)."""
    n = 0
    for m in re.finditer(r"[^\W_]+(?:['’][^\W_]+)*", text, re.UNICODE):
        tok = m.group().lower().replace("’", "'")
        if tok == "no" and text[m.end():].lstrip(" .")[:1].isdigit():
            continue
        if (tok in NEGATIONS or tok in DENIALS or tok.endswith("n't") or NEGATION_CJK.search(tok)) \
                and not BOUND.match(text, _bound_from(text, tok, m.end())):
            n += 1
    return n


def _negation_at(text: str, words: list[str]) -> int | None:
    """Character offset of the first word of ``text`` that negates what follows it, or None.

    "No. 1" / "no 1" (a number), "no one"/"nobody" opening the clause (a subject whose verb is
    what is denied: still a negation) and a bare "no" interjection are told apart by the caller;
    here a "no" directly before a number or an ordinal is not a negation.
    """
    for m in re.finditer(r"[^\W_]+(?:['’][^\W_]+)*", text, re.UNICODE):
        tok = m.group().lower().replace("’", "'")
        if tok == "no":
            rest = text[m.end():].lstrip(" .")
            if rest[:1].isdigit():
                continue
        if (tok in NEGATIONS or tok in DENIALS or tok.endswith("n't")) and not BOUND.match(text, _bound_from(text, tok, m.end())):
            return m.start()
        if NEGATION_CJK.search(tok):
            return m.start() + NEGATION_CJK.search(tok).start()
    return None


_FINITE = VERBS | PAST_VERBS | frozenset("am be been being did shall".split())
"""Words that make what follows a colon a clause of its own (:func:`_scoped`)."""
_WITH_NO = re.compile(r"\bwith\s+no\s+\S", re.IGNORECASE)
_UNLESS = re.compile(r"^\s*unless\b", re.IGNORECASE)
_FORBIDS_SUBJECT = re.compile(rf"(?:{'|'.join(sorted(PROHIBITIONS))})\b(?!\s+(?:from|to)\b)", re.IGNORECASE)
_COPULA_END = re.compile(r"\b(?:is|are|was|were|be|been|being)\s+(?:\w+ly\s+)?$", re.IGNORECASE)
"""A prohibition said of its subject ("Smoking is banned in all wards": after a copula, with no "from"/"to" after it):
the subject is what it denies; one followed by what it forbids ("Drivers are forbidden to use / from using a phone",
"The code prohibits spraying") denies that, not its subject."""
_CONDITION = re.compile(r"^(?:when|whenever|if|where|while|once|unless|provided|as\s+long\s+as)\b", re.IGNORECASE)
"""A clause opening as a condition: its own negation ends with it ("When the patient isn't bleeding, give 2 mg ..."
denies the bleeding, not the dose)."""


def _states(parts: list[tuple[str, str]], i: int) -> bool:
    """Whether the clauses from ``i`` to the next ";", dash or scope end hold a verb (:data:`_FINITE`): what
    follows a colon states something of its own ("... can't happen: the lowest possible total is 3")."""
    for k in range(i, len(parts)):
        text, delim = parts[k]
        if k > i and (delim.strip() in (";", "—", "-", "–") or _SCOPE_END.match(text)):
            break
        if any(w in _FINITE for w in tokens(text)):
            return True
    return False


@lru_cache(maxsize=1 << 14)
def _scoped(sentence: str) -> tuple[Clause, ...]:
    out: list[Clause] = []
    scope = False
    opened = -1  # the clause whose own negation opened the scope
    parts = clause_parts(sentence) or [(sentence, "")]
    for i, (text, delim) in enumerate(parts):
        words = tokens(text)
        if scope and opened >= 0 and _UNLESS.match(text):
            # "may not carry passengers unless they have made three landings" is "may carry passengers only if ...":
            # a condition on what it negated, not its denial
            out[opened:] = [Clause(c.text, False) for c in out[opened:]]
        if delim.strip() in (";", "—", "-", "–") or _SCOPE_END.match(text) or (delim.strip() == ":" and _states(parts, i)) \
                or (delim.strip() == "," and _NEW_CLAUSE.match(text)):
            scope = False  # (a dash starts a clause of its own: "Not 30 days — it is 60 days."; a colon does when
            # a verb follows it: "that can't happen: each component scores at least 1, so the lowest total is 3";
            # not before a list: "Treatment is not mostly supportive: rest, fluids and fever control" denies it too)
        at = _negation_at(text, words)
        own = at is not None
        interjection = bool(words) and all(t in _INTERJECTION for t in words)
        aside = bool(out) and own and text[: at or 0].strip() == ""  # "X, not Y, is Z"
        head = ""
        if own and not interjection and not aside and not scope:
            head = "" if _FORBIDS_SUBJECT.match(text, at) and _COPULA_END.search(text[:at]) else text[:at].strip()
            scope, opened = True, len(out)
        negated = (scope or (own and aside)) and not interjection
        if negated and head and negation_count(text) % 2 == 0:
            negated, head, scope = False, "", False  # "not ... when they are not soiled": two negations assert
        if own and head and _WITH_NO.search(text[max(0, at - 6):at + 4]):
            scope = False  # "with no" denies its noun, not the sentence: "A patient with no eye, verbal or motor
            # response at all scores three" (its own clause is negated: "on all wages, with no upper limit")
        out.append(Clause(text, negated, head if negated else ""))
        if own and head and _CONDITION.match(text):
            scope = False
    return tuple(out)


def scoped_clauses(sentence: str) -> list[Clause]:
    """A sentence's clauses with negation scope (see the module docstring)."""
    return list(_scoped(sentence or ""))


def negation_scopes(sentence: str) -> list[tuple[str, bool]]:
    """A sentence's clauses, each with whether it lies in a negation's scope (:func:`scoped_clauses`)."""
    return [(c.text, c.negated) for c in _scoped(sentence or "")]



_PREFIXED = re.compile(r"\b(?:un|non-?)([a-z]{4,})\b", re.IGNORECASE)


def restate_prefixed(text: str, claims: tuple[str, ...]) -> tuple[str, tuple[tuple[str, str], ...]]:
    """``text`` with each "not X" (or "never X") written as a claim's word that says it with a negating prefix, and the
    rewritings made: "remains that are not collected" read as "remains that are uncollected" for "Uncollected remains
    must be kept ...", "a drug that is not prescription" as "non-prescription". The claim's word is one word, a
    denial of nothing; the reply's "not" would otherwise negate its clause."""
    changes: list[tuple[str, str]] = []
    for claim in claims:
        for m in _PREFIXED.finditer(claim or ""):
            pattern = re.compile(rf"\b(?:not|never)\s+(?:been\s+)?{re.escape(m.group(1))}\b", re.IGNORECASE)
            said = pattern.search(text)
            if said:
                changes.append((said.group(0), m.group(0).lower()))
                text = pattern.sub(m.group(0).lower(), text)
    return text, tuple(changes)
