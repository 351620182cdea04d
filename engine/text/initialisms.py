"""Initialisms: a reply that names a claim's term by its initials ("FD" for "Finance Director", "BoE" for
"Bank of England", "GA" for "general anaesthetic"), or spells out a claim's initialism ("Information
Commissioner's Office" for "ICO"), is read in the claim's words (:func:`restate_initialisms`), as an amount in
other units is (:func:`engine.text.quantities.restate`).

The rule: a token of the reply of two to six letters with at least two capitals (digits allowed after the
first letter: "CET1") is the initialism of a run of two to six words of a claim when the run's first letters,
with or without its inner "of", "and", "the", "for" and "&", spell it (case aside); the run starts and ends with
a word that is no stop word, and holds no sentence break nor comma ("PO" is no initialism of "protocol, oral"). The other way, a run of two to six capitalised words
of the reply (inner joining words allowed) whose initials spell a token of a claim of that shape is read as
that token, unless a claim says one of the run's words itself ("Fashion Week Australia" stays for a claim on "an
Australian"). Nothing else is rewritten: a lower-case word ("ga") is no initialism, and a run that only
shares the letters of a claim's initials in another order is left as it is.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from engine.text.lexicon import STOPWORDS
from engine.text.tokens import stem

_JOIN = frozenset({"of", "and", "the", "for", "&"})
_TOKEN = re.compile(r"(?<![\w'’&-])(?=[A-Za-z0-9]*[A-Z][A-Za-z0-9]*[A-Z])[A-Za-z][A-Za-z0-9]{1,5}(?![\w'’&-])")
_WORD = re.compile(r"[A-Za-z][\w'’-]*|\d+(?![\d.,]\d)|&|[.!?;:,]")
"""A word of a term: a word, or a whole number ("Tier 1" of "CET1"; not part of "4.5" or "1,200")."""
__all__ = ["initialisms_said", "restate_initialisms"]


def _initials(words: Sequence[str], keep_joins: bool) -> str:
    out = []
    for w in words:
        if w.lower() in _JOIN:
            if keep_joins and w != "&":
                out.append(w[0])
            continue
        out.append(w[0] if not w[0].isdigit() else w)
    return "".join(out).lower()


def _runs(words: list[str], capitalised: bool) -> list[tuple[int, int]]:
    """Spans (start, end) of two to six words that may be a term: no sentence stop nor comma inside, edges not stop
    words (nor joining words), each inner word a term word or a joining word; capitalised ones only when asked."""
    out = []
    for i in range(len(words)):
        for j in range(i + 2, min(len(words), i + 6) + 1):
            run = words[i:j]
            if any(w in ".!?;:," for w in run):
                break
            if run[0].lower() in STOPWORDS or run[-1].lower() in STOPWORDS or run[-1].lower() in _JOIN:
                continue
            if run[0][:1].isdigit():
                continue
            if capitalised and not all(w[:1].isupper() or w.lower() in _JOIN or w.isdigit() for w in run):
                continue
            out.append((i, j))
    return out


def restate_initialisms(reply: str, claims: Sequence[str]) -> tuple[str, tuple[tuple[str, str], ...]]:
    """``reply`` with each initialism of a claim's term written as the claim's words, and each spelled-out
    term whose initialism a claim uses written as that initialism; the rewritings made ((the reply's words, the
    claim's), in order)."""
    if not reply or not claims:
        return reply, ()
    spelled = " ".join(" ".join(_WORD.findall(c)) for c in claims).lower()  # the claims' words, one space apart
    stems = {stem(w) for w in spelled.split()}
    terms: dict[str, str] = {}  # initials -> the claim's words
    short: dict[str, str] = {}  # initials -> a claim's initialism as written
    for claim in claims:
        for m in _TOKEN.finditer(claim):
            short.setdefault(m.group(0).lower(), m.group(0))
        spans = [(m.start(), m.end(), m.group(0)) for m in _WORD.finditer(claim)]
        words = [w for _s, _e, w in spans]
        for i, j in _runs(words, capitalised=False):
            text = claim[spans[i][0]:spans[j - 1][1]]
            for keep in (False, True):
                terms.setdefault(_initials(words[i:j], keep), text)
    changes: list[tuple[str, str]] = []
    out = reply
    if terms:
        def token(m: re.Match) -> str:
            said = m.group(0)
            words = terms.get(said.lower())
            if words is None or said.lower() in short or words.lower() == said.lower():
                return said
            changes.append((said, words))
            return words

        out = _TOKEN.sub(token, out)
    if short:
        spans = [(m.start(), m.end(), m.group(0)) for m in _WORD.finditer(out)]
        words = [w for _s, _e, w in spans]
        pieces, at, taken = [], 0, -1
        for i, j in _runs(words, capitalised=True):
            if i <= taken:
                continue
            found = next((short[k] for keep in (False, True) if (k := _initials(words[i:j], keep)) in short), None)
            if found is None or found.lower() in {w.lower() for w in words[i:j]} or \
                    any(stem(w.lower()) in stems for w in words[i:j] if w.lower() not in _JOIN):
                continue  # (a word of the term that a claim says itself, "Australia" for "an Australian", stays)
            said = out[spans[i][0]:spans[j - 1][1]]
            pieces += [out[at:spans[i][0]], found]
            at, taken = spans[j - 1][1], j - 1
            changes.append((said, found))
        if pieces:
            out = "".join(pieces) + out[at:]
    return out, tuple(changes)


def initialisms_said(claim: str, sentence: str) -> tuple[set[str], set[str], list[str]]:
    """The claim's runs of capitalised words (and numbers) a reply's sentence says by their initials ("CET1" for
    "Common Equity Tier 1"): (their words in lower case, the initialisms, the numbers among them). The
    challenge-reply rules read a name said so as kept, not replaced (:func:`engine.judge.offline.switches_value`)."""
    said, short, digits = set(), set(), []
    for m in re.finditer(r"(?<![\w'’-])[A-Z][A-Z0-9]{1,7}(?![\w'’-])", sentence):
        abbr = m.group(0)
        words = re.findall(r"[\w'’-]+", claim)
        for i in range(len(words)):
            run, j = "", i
            while j < len(words) and len(run) < len(abbr) and (words[j][:1].isupper() or words[j].isdigit()):
                run += words[j] if words[j].isdigit() else words[j][0]
                j += 1
            if j - i >= 2 and run.upper() == abbr.upper():
                said |= {w.lower() for w in words[i:j]}
                short.add(abbr.lower())
                digits += [w for w in words[i:j] if w.isdigit()]
                break
    return said, short, digits
