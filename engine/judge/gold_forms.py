"""The gold judge's golds: the forms a gold may be written in, and where a form occurs in a reply.

:func:`read_gold` derives a gold's forms (the gold; without titles or qualifiers; without or only its
bracket; its named place; its initials; its named part; the year of a gold date; a person's surname:
the rules of :mod:`engine.judge.gold_match`'s docstring, step 1), :func:`find_form` finds a form as a
contiguous run of a sentence's content tokens, and the date helpers (:func:`dates_of`, :func:`days_of`,
:func:`date_part_indexes`) read the months, days and years a gold or a sentence states.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field

from engine.judge.gold_tokens import Tok, is_initial, same_word, tokens
from engine.text.lexicon import FILLER, NEGATIONS_PLAIN

TITLES = frozenset("""mr mrs ms miss dr doctor sir dame lord lady saint st general gen colonel col captain capt
major admiral commander president king queen prince princess emperor empress pope bishop archbishop rev
reverend professor prof judge justice senator governor duke duchess earl baron sultan tsar czar pharaoh
chief sheikh rabbi imam father brother sister""".split())
"""Honorific titles: a gold may be given without them ("General George Washington")."""

APPROXIMATE = frozenset("around about approximately approx circa c ca nearly almost roughly estimated".split())
"""Qualifiers that make a gold's numbers approximate: a number within 5% of it then counts."""

QUALIFIERS = APPROXIMATE | frozenset("early late mid median average mean up between typically usually generally mostly often".split())
"""Quantity and time qualifiers a gold may be given without ("the late 6th century", "median 10-12 years")."""

MONTHS = {m: i + 1 for i, m in enumerate(
    "january february march april may june july august september october november december".split())}
MONTHS.update({"jan": 1, "feb": 2, "apr": 4, "jun": 6, "jul": 7, "aug": 8, "sep": 9, "sept": 9, "oct": 10,
               "nov": 11, "dec": 12})

GOLD_F1_THRESHOLD = 0.6
"""The F1 of a gold's named part against the whole gold from which it stands for it; callers that report
an F1 line show it too (crediting compares no other F1 with a threshold)."""

# -- golds -----------------------------------------------------------------------------------------


@dataclass
class GoldForm:
    """One way a gold may be written: its content tokens and how it was derived from the gold."""

    toks: list[Tok]
    how: str
    approx: bool = False  # the gold says its numbers are approximate ("around 2.45 billion")


@dataclass
class Gold:
    """A gold answer as the judge reads it: its content tokens, the forms it may be written in, its dates."""

    text: str
    all: list[Tok]  # content tokens (no filler unless nothing else)
    given: bool  # every content word is in the question
    person: bool  # two or more capitalised words and nothing else: a person's (or a named thing's) name
    dates: set[tuple[int, float]]  # (month, year) pairs the gold states
    forms: list[GoldForm] = field(default_factory=list)
    words: set[str] = field(default_factory=set)
    heads: set[int] = field(default_factory=set)  # positions of titles that head the gold ("king of France")


def content_toks(toks: list[Tok]) -> list[Tok]:
    """The words and numbers of ``toks`` without function words (:data:`engine.text.lexicon.FILLER`; "I" and
    a word in capitals are kept), or all of them when nothing else is left."""
    words = [t for t in toks if t.kind in ("word", "num")]
    content = [t for t in words if t.text not in FILLER or t.text == "i" or t.upper]
    return content or words


def dates_of(toks: list[Tok]) -> set[tuple[int, float]]:
    """(month, year) pairs: a month name with a year within three tokens of it."""
    out = set()
    for i, t in enumerate(toks):
        if t.text in MONTHS:
            for u in toks[max(0, i - 3):i + 4]:
                if u.num is not None and 1000 <= u.num <= 2100:
                    out.add((MONTHS[t.text], u.num))
    return out


def read_gold(text: str, q_stems: set[str]) -> Gold:
    """A gold answer with its forms (the module docstring), given the question's content stems."""
    toks = tokens(text)
    content = content_toks(toks)
    given = all(t.stem in q_stems for t in content)
    words = [t for t in content if t.kind == "word"]
    person = (len(words) >= 2 and all(t.cap for t in words) and len(words) == len(content)
              and not any(t.text == "," for t in toks))
    g = Gold(text, content, given, person, dates_of(content))
    g.words = {t.text for t in toks}
    seen: set[tuple[str, ...]] = set()

    def add(form: list[Tok], how: str, dropped_days: bool = False) -> None:
        key = tuple(t.stem for t in form)
        if not form or key in seen:
            return
        numbers = Counter(t.num for t in content if t.num is not None)
        if numbers - Counter(t.num for t in form if t.num is not None) and not dropped_days:
            return  # a gold's numbers are never left out ("September 27" is not "September 27, 2017")
        if g.forms and all(t.stem in q_stems for t in form):
            return  # what the question already says is no answer ("district" for "District Judge")
        if g.forms and all(t.text in NEGATIONS_PLAIN or t.text in QUALIFIERS for t in form) and any(
                t.text not in NEGATIONS_PLAIN and t.text not in QUALIFIERS for t in content):
            return  # "not" alone is not "not guilty" (but "no" is "typically, no")
        seen.add(key)
        g.forms.append(GoldForm(form, how))

    add(content, "the gold")
    heads = {t.pos for k, t in enumerate(toks) if t.text in TITLES and k + 1 < len(toks) and toks[k + 1].text == "of"}
    g.heads = heads
    core = [t for t in content if (t.text not in TITLES or t.pos in heads) and t.text not in QUALIFIERS]
    add(core, "the gold without titles or qualifiers")
    if any(t.text in APPROXIMATE for t in content) and g.forms:
        g.forms[-1].approx = True
    # "adenosine diphosphate (ADP)": either part; "Camping World Stadium in Orlando", "Camarillo, California":
    # the named place before "in" or the comma
    words_only = [t for t in toks if t.kind in ("word", "num", "sep")]
    if "(" in [t.text for t in words_only]:
        i = [t.text for t in words_only].index("(")
        outside = content_toks([t for t in words_only[:i] if t.kind != "sep"])
        inside = content_toks([t for t in words_only[i + 1:] if t.kind != "sep" and t.text != ")"])
        add(outside, "the gold without its bracket")
        add(inside, "the gold's bracketed form")
    for k, t in enumerate(toks):
        if (t.text == "in" or t.text == ",") and k > 0:
            head, tail = content_toks(toks[:k]), content_toks(toks[k + 1:])
            if (all(u.cap for u in head) and len(head) < len(content)
                    and not any(u.num is not None for u in content)):
                add(head, "the named place of the gold")
                if t.text == "in" and tail and all(u.cap for u in tail if u.kind == "word"):
                    add(tail, "the place the gold is in")
            break
    capitals = [t for t in core if t.kind == "word" and t.cap]
    if len(capitals) >= 2 and len(capitals) == len([t for t in core if t.kind == "word"]):
        # "United States of America" as "USA", "Centers for Disease Control" as "CDC"
        initials = "".join(t.text[0] for t in capitals)
        add([Tok(initials, initials, cap=True, acronym=True)], "the gold's initials")
    generic = [i for i, t in enumerate(core) if t.kind == "word" and not t.cap and t.stem not in q_stems
               and t.pos not in heads]
    kept = [t for i, t in enumerate(core) if i not in generic]
    named = [t for t in kept if t.upper or t.num is not None or (t.cap and t is not core[0])]
    if generic and named and len(core) >= 2 \
            and 2 * len(kept) / (len(kept) + len(core)) >= GOLD_F1_THRESHOLD:
        # the named part of a gold without its generic words ("the ARPANET" for "the ARPANET project")
        add(kept, "the gold's named part")
    parts = date_part_indexes(content)
    if parts and len(parts) < len(content):
        # the year of a gold date ("1977" for "September 19, 1977"); another month that year is refused
        add([t for i, t in enumerate(content) if i not in parts], "the year of the gold date", dropped_days=True)
    if person and not given:
        surname = core[-1] if core else content[-1]
        if len(surname.text) > 2 and surname.stem not in q_stems:
            add([surname], "the surname")
    return g


def days_of(toks: list[Tok]) -> set[tuple[float, int, float]]:
    """(day, month, year) triples: a day number beside a month name that has a year after it."""
    out = set()
    parts = date_part_indexes(toks)
    for i in parts:
        t = toks[i]
        if t.text in MONTHS:
            year = next(u.num for u in toks[i + 1:i + 3] if u.num is not None and 1000 <= u.num <= 2100)
            for k in (i - 1, i + 1):
                if k in parts and toks[k].num is not None:
                    out.add((toks[k].num, MONTHS[t.text], year))
                    if k == i - 1 and k > 0 and toks[k - 1].to_next and toks[k - 1].num is not None:
                        out.add((toks[k - 1].num, MONTHS[t.text], year))  # "18-20 January": both ends
    return out


def date_part_indexes(toks: list[Tok]) -> set[int]:
    """Indexes of the month names and day numbers of the dates in ``toks`` (a month beside a year)."""
    out: set[int] = set()
    for i, t in enumerate(toks):
        if t.text in MONTHS and any(u.num is not None and 1000 <= u.num <= 2100 for u in toks[i + 1:i + 3]):
            out.add(i)
            for k in (i - 1, i + 1):
                if 0 <= k < len(toks) and toks[k].num is not None and 1 <= toks[k].num <= 31 \
                        and toks[k].num == int(toks[k].num):
                    out.add(k)
    return out


def range_at(toks: list[Tok], i: int) -> tuple[float, float] | None:
    """(low, high) when the gold tokens at i, i+1 are the two ends of a range."""
    if (i + 1 < len(toks) and toks[i].to_next and toks[i].num is not None and toks[i + 1].num is not None
            and toks[i].num < toks[i + 1].num):
        return toks[i].num, toks[i + 1].num
    return None


def find_form(form: list[Tok], seq: list[Tok], ranged: set[int], approx: bool = False) -> list[tuple[int, int]]:
    """Where ``form`` occurs contiguously in ``seq``: (start, end) index pairs in ``seq``."""
    hits: list[tuple[int, int]] = []
    n, m = len(form), len(seq)
    for start in range(m):
        i, j, exact = 0, start, 0
        while i < n and j < m:
            if i in ranged and seq[j].num is not None:
                low, high = form[i].num, form[i + 1].num
                lone = not seq[j].to_next and not (j > 0 and seq[j - 1].to_next)  # not an end of a range
                if lone and low <= seq[j].num <= high and not (j + 1 < m and seq[j + 1].num is not None):
                    i, j = i + 2, j + 1  # a number inside the gold's range stands for both ends
                    continue
            if not (same_word(form[i], seq[j]) or (approx and form[i].num is not None and seq[j].num is not None
                                                and abs(form[i].num - seq[j].num) <= 0.05 * abs(form[i].num))):
                break
            exact += not is_initial(form[i]) and not is_initial(seq[j])
            i, j = i + 1, j + 1
        if i == n and exact:  # initials alone are no match ("G." is not "Grisha")
            hits.append((start, j))
    if not hits and n == 1 and form[0].upper and 2 <= len(form[0].text) <= 6:
        # a gold written in capitals spelled out: "NATO" for "North Atlantic Treaty Organization"
        k = len(form[0].text)
        for start in range(m - k + 1):
            run = seq[start:start + k]
            if all(t.cap and t.kind == "word" for t in run) and "".join(t.text[0] for t in run) == form[0].text:
                hits.append((start, start + k))
    if not hits and not (n == 1 and form[0].acronym):
        # the run spelled with or without spaces: "Abid Ali" = "Abidali", "Steamship" = "Steam Ship"
        joined = "".join(t.text for t in form)
        for start in range(m):
            acc = ""
            for j in range(start, m):
                acc += seq[j].text
                if acc == joined:
                    hits.append((start, j + 1))
                if len(acc) >= len(joined):
                    break
    return hits
