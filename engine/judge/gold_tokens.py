"""The gold judge's tokens: how it reads a reply and a gold before crediting.

Mojibake is repaired (``ftfy``), then Unicode NFKC; dashes become "-"; "1,000" is 1000, "11.3" keeps its
decimal point; number words of any size are digits (:func:`engine.text.numbers.read_number`, ordinals as
their number: "fifteenth" is 15); dates are put in one order ("5 March 1998"); "B.C.", "BCE" are BC, "CE"
is AD; "%" is "percent". Words are lower-cased, articles dropped, apostrophes removed, hyphens and dots
split words except a word spelt out letter by letter; a dash that breaks a sentence reads as a comma.
Each :class:`Tok` keeps what the crediting rules need: capitals, separators, quotes and sentence stops.

- :func:`tokens`, :func:`sentences` (the sentence rule of :mod:`engine.text.sentences` on tokens, with
  :data:`engine.text.lexicon.GOLD_ABBREVIATIONS`), :func:`same_word` (two tokens the same word: stems of
  :func:`engine.text.tokens.stem`, numbers by value, initials);
- :func:`mark_scope`: negation scope and quotation on a sentence's tokens (the gold judge's reading of
  :mod:`engine.text.negation`'s rule, with :data:`engine.text.lexicon.NEGATIONS_PLAIN` and
  :data:`engine.text.lexicon.GOLD_SCOPE_END`; the module docstring of :mod:`engine.judge.gold_match` states it).

The word lists, numbers, stems and the CJK range come from :mod:`engine.text`; what is here is the gold
judge's own reading of them.
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass

import ftfy

from engine.text.cjk import CJK
from engine.text.lexicon import GOLD_ABBREVIATIONS, GOLD_SCOPE_END, NEGATION_CJK, NEGATIONS_PLAIN, abbreviate
from engine.text.numbers import chinese_numerals_to_digits, is_number_word, read_number, scale_of
from engine.text.tokens import stem

_NOT_NEGATING = {("not", "only"), ("not", "just"), ("no", "doubt"), ("nothing", "but"), ("no", "matter"),
                 ("not", "many"), ("not", "much"), ("not", "least"), ("not", "surprisingly"), ("no", "less"),
                 ("not", "unlike")}
_SUBORDINATE = frozenset("""while although though whereas if unless unlike since because as when whether despite
even who which whom whose where""".split())
"""Words that open a subordinate or relative clause: a negation inside one ends at the clause's comma
("While there is no single answer, the Ramones are credited"; "If I am not mistaken, it was X")."""
_NEW_CLAUSE = frozenset("so it he she they we i you there this these those its his her their our my".split())
"""Words that, after a comma, start a new clause with its own subject ("It was not the Clash, it was X"; ", so I would say X")."""

_SPELLINGS = {b: a for pair in """metre:meter metres:meters litre:liter litres:liters centre:center centres:centers
centimetre:centimeter centimetres:centimeters millimetre:millimeter millimetres:millimeters kilometre:kilometer
kilometres:kilometers theatre:theater theatres:theaters colour:color colours:colors favourite:favorite
honour:honor labour:labor neighbour:neighbor defence:defense offence:offense licence:license programme:program
grey:gray aluminium:aluminum catalogue:catalog analogue:analog cheque:check tyre:tire jewellery:jewelry
feet:foot""".split() for b, a in [pair.split(":")]}
"""British spellings and an irregular plural, read as one form ("324 metres" = "324 meters")."""
_SAME_RELATION = {"under": "beneath", "underneath": "beneath", "below": "beneath"}
"""Prepositions of one relation, read as one form ("under the liver" = "beneath the liver"); the form kept
is a content word, so "above the liver" is not "beneath the liver"."""
_UNIT_ABBREVIATIONS = {"m": "meter", "km": "kilometer", "cm": "centimeter", "mm": "millimeter", "ft": "foot",
                       "kg": "kilogram", "g": "gram", "lb": "pound", "lbs": "pound", "mi": "mile", "l": "liter",
                       "yd": "yard", "oz": "ounce"}
"""Unit abbreviations after a number ("330 m" = "330 meters"); km, kg, cm, mm and lbs anywhere."""


# -- tokens ----------------------------------------------------------------------------------------

_LETTER = rf"(?:(?![{CJK}])[^\W\d_])"
_TOKEN = re.compile(rf"\d+(?:\.\d+)?(?:st|nd|rd|th|s)?(?!{_LETTER})|{_LETTER}+(?:['’]{_LETTER}+)*|[{CJK}]"
                    r"|[,;/|&()\"“”~]|(?<=[\w)\]\"”’])[.!?](?=\s|$)|\n|[。！？]", re.UNICODE)
_PERCENT_IN = re.compile(r"%(?=\w)")
_PERCENT_END = re.compile(r"%")
_THOUSANDS = re.compile(r"(?<=\d),(?=\d{3}(?!\d))")
_ERA = [(re.compile(r"\bB\.?\s?C\.?\s?E\b\.?|\bB\.\s?C\.|\bBC\b", re.IGNORECASE), " BC "),
        (re.compile(r"\bC\.?E\b\.?|\bA\.\s?D\.|\bAD\b"), " AD ")]
_CITATION = re.compile(r"\[\^?\d{1,3}\^?\]")
_VERSUS = re.compile(r"\bvs\.?(?=\s)", re.IGNORECASE)
_DASHES = re.compile("[\u2010-\u2015\u2212]")
_CLAUSE_DASH = re.compile("\\s+(?:--?|[\u2013\u2014\u2015])\\s+|\u2014|--")
"""A dash that breaks a sentence (spaced, or an em dash): read as a comma ("Not 1970 — it was 1969")."""


def _digit_around(m: re.Match) -> bool:
    """The dash stands between numbers: a range ("10 - 12", "1914 – 1918"), not a break."""
    text = m.string
    before = text[:m.start()].rstrip()[-1:]
    after = text[m.end():].lstrip()[:1]
    return before.isdigit() and after.isdigit()
_RANGE_TO = re.compile(r"(?<=\d)(\s*%?\s*)(?:-|to|through|until)\s*(?=\d)", re.IGNORECASE)
_YEAR_RANGE = re.compile(r"\b(1\d|20)(\d\d)\s*~\s*(\d\d)\b(?!\s*~)")
_ARTICLES = frozenset({"a", "an", "the"})
_SEPARATORS = frozenset({",", ";", "/", "|", "&", "(", ")"})
_QUOTES = frozenset({'"', "“", "”"})
_SPELLED = re.compile(r"(?<![\w-])[^\W\d_](?:-[^\W\d_]){2,}(?![\w-])")
"""A word spelt out letter by letter with hyphens ("P-A-D-A-W-A-N"): three letters or more."""


@dataclass
class Tok:
    """One token of a judged text.

    Attributes:
        text: the normalised form (lower case; digits for numbers).
        stem: the form compared (plural folded; numbers as their canonical digits).
        cap: the original word began with a capital letter.
        num: the value when the token is a number, else None.
        kind: "word", "num", "sep" (one of , ; / & ( )), "quote" or "stop" (. ! ? ending a sentence).
        pos: the token's index in its text.
    """

    text: str
    stem: str
    cap: bool = False
    num: float | None = None
    kind: str = "word"
    pos: int = 0
    negated: bool = False
    quoted: bool = False
    to_next: bool = False  # a number that opens a range ("10-12", "10 to 12")
    upper: bool = False  # written in capitals, two letters or more ("USA", "NATO")
    acronym: bool = False  # a gold's initials, matched only by a word written in capitals
    lead: bool = False  # a capitalised article ("The", dropped) stood right before it: a sentence may start here


_MONTH_NAMES = ("january february march april may june july august september october november december "
                "jan feb mar apr jun jul aug sep sept oct nov dec")
_MONTH_RE = "|".join(sorted(_MONTH_NAMES.split(), key=len, reverse=True))
_MONTH_DAY_YEAR = re.compile(rf"\b({_MONTH_RE})\.?\s+(\d{{1,2}})(?:st|nd|rd|th)?,?\s+(\d{{3,4}})\b", re.IGNORECASE)
_ISO_DATE = re.compile(r"\b(\d{4})-(\d{2})-(\d{2})\b")
_MONTHS_BY_NUMBER = "January February March April May June July August September October November December".split()


_SHORT_MONTH = re.compile(r"\b(Jan|Feb|Mar|Apr|Jun|Jul|Aug|Sep|Sept|Oct|Nov|Dec)\.", re.IGNORECASE)
_LONG_MONTH = {m[:3]: m for m in _MONTHS_BY_NUMBER}


def _iso(m: re.Match) -> str:
    month = int(m.group(2))
    if not 1 <= month <= 12:
        return m.group()
    return f"{int(m.group(3))} {_MONTHS_BY_NUMBER[month - 1]} {m.group(1)}"


def prepare(text: str) -> str:
    """The text as judged before tokenising: mojibake repaired, NFKC, dashes, eras, thousands, ranges."""
    text = unicodedata.normalize("NFKC", ftfy.fix_text(text or ""))
    text = abbreviate(text)  # "ribonucleic acid" is "RNA" (engine.text.lexicon.EXPANSIONS)
    # one order for dates: "March 5, 1998", "5 March 1998" and "1998-03-05" are all "5 March 1998"
    text = _ISO_DATE.sub(_iso, text)
    text = _SHORT_MONTH.sub(lambda m: _LONG_MONTH[m.group(1)[:3].title()], text)  # "Sept." is September
    text = _MONTH_DAY_YEAR.sub(r"\2 \1 \3", text)
    text = _CLAUSE_DASH.sub(lambda m: m.group() if _digit_around(m) else ", ", text)  # "Not 1970 - it was 1969"
    text = _DASHES.sub("-", text)
    text = _VERSUS.sub("versus", text)  # "vs." is no sentence end
    text = _CITATION.sub("", text)  # "[1]", "[^2^]": a chat reply's citation marks are no numbers
    text = _SPELLED.sub(lambda m: m.group().replace("-", ""), text)  # "P-A-D-A-W-A-N" spells one word
    for pattern, repl in _ERA:
        text = pattern.sub(repl, text)
    text = _THOUSANDS.sub("", text)
    text = _RANGE_TO.sub(r"\1 ~ ", chinese_numerals_to_digits(text))
    # "1632-53" is 1632 to 1653
    text = _YEAR_RANGE.sub(lambda m: f"{m.group(1)}{m.group(2)} ~ {m.group(1)}{m.group(3)}"
                           if m.group(3) > m.group(2) else m.group(), text)
    # "100%." is "100 percent." (the stop still ends the sentence); "5%of" is "5 percent of"
    return _PERCENT_END.sub(" percent", _PERCENT_IN.sub(" percent ", text))


def tokens(text: str) -> list[Tok]:
    """The tokens of a text (see the module docstring): words, numbers, separators, sentence stops."""
    raw: list[Tok] = []
    lead = False
    for m in _TOKEN.finditer(prepare(text)):
        s = m.group()
        if s == "~":
            if raw and raw[-1].num is not None:
                raw[-1].to_next = True
            continue
        if s in _SEPARATORS:
            raw.append(Tok(s, s, kind="sep"))
            continue
        if s in _QUOTES:
            raw.append(Tok(s, s, kind="quote"))
            continue
        if s in ".!?\n。！？":
            raw.append(Tok(s, s, kind="stop"))
            continue
        cap = s[0].isupper()
        low = re.sub(r"['’]s$", "", s.lower())
        low = re.sub(r"['’]", "", low)
        if low[0].isdigit():
            digits = re.match(r"\d+(?:\.\d+)?", low).group()
            value = float(digits)
            text_ = digits if not low.endswith("s") or low.endswith(("st", "nd", "rd", "th")) else low
            raw.append(Tok(text_, text_, num=value if text_ == digits else None,
                           kind="num" if text_ == digits else "word"))
            continue
        if low in _ARTICLES:
            lead = cap
            continue
        if low == "vs":
            low = "versus"
        after_number = bool(raw) and raw[-1].num is not None
        if (after_number and s not in ("M", "L")) or low in ("km", "kg", "cm", "mm", "lbs"):
            low = _UNIT_ABBREVIATIONS.get(low, low)
        low = _SPELLINGS.get(low, low)
        low = _SAME_RELATION.get(low, low)
        raw.append(Tok(low, stem(low), cap=cap, upper=len(s) > 1 and s.isupper(), lead=lead))
        lead = False
    out = _merge_number_words(raw)
    for i, t in enumerate(out):
        t.pos = i
    return out


def _merge_number_words(toks: list[Tok]) -> list[Tok]:
    """Number words as one number token (:func:`engine.text.numbers.read_number`, the one reader of judging;
    ordinals are their number here: "fifteenth" is 15), and a scale word after digits multiplies them
    ("2.45 billion")."""
    out: list[Tok] = []
    i = 0
    while i < len(toks):
        t = toks[i]
        scale = scale_of(t.text) if t.kind == "word" else None
        if scale and out and out[-1].num is not None and not out[-1].to_next:
            out[-1].num *= scale  # "2.45 billion"
            out[-1].text = out[-1].stem = f"{out[-1].num:g}"
            i += 1
            continue
        if t.kind != "word" or not is_number_word(t.text):
            out.append(t)
            i += 1
            continue
        j = i
        while j < len(toks) and toks[j].kind == "word" and j - i < 16:
            j += 1
        run = read_number([u.text for u in toks[i:j]], 0, lone_scale=True)
        if run is None:
            out.append(t)
            i += 1
            continue
        number, used = run[0], run[1]
        out.append(Tok(str(number), str(number), cap=t.cap, num=float(number), kind="num"))
        i += used
    return out


def same_word(a: Tok, b: Tok) -> bool:
    """Whether two tokens are the same word: an acronym by its capitals, numbers by value, stems equal
    (or equal but for a doubled final consonant), or an initial and a word it begins."""
    if a.acronym or b.acronym:
        other = b if a.acronym else a
        return other.upper and other.text == (a if a.acronym else b).text
    if a.num is not None or b.num is not None:
        return a.num is not None and b.num is not None and a.num == b.num
    if a.stem == b.stem or (len(a.stem) > 4 and len(b.stem) > 4 and _undouble(a.stem) == _undouble(b.stem)):
        return True
    # an initial stands for a word it begins ("B." for "Bhimrao"; the initial was written as a capital,
    # and is not a roman numeral: "World War I" is not "World War II")
    if is_initial(a) and len(b.text) > 1 and b.text[0] == a.text:
        return True
    return is_initial(b) and len(a.text) > 1 and a.text[0] == b.text


def _undouble(stem: str) -> str:
    """A stem without a doubled final consonant: the stemmer leaves "sharecropp" (sharecroppers) beside
    "sharecrop" (sharecropping)."""
    if len(stem) > 2 and stem[-1] == stem[-2] and stem[-1] not in "aeiouy":
        return stem[:-1]
    return stem


def name_variant(a: str, b: str) -> bool:
    """Two given names that are forms of one name: one holds the other ("Yevgenia", "Evgenia") or they
    share their first three letters ("Dave", "David"; "Will", "William")."""
    if len(a) < 3 or len(b) < 3:
        return False
    return a in b or b in a or a[:3] == b[:3]


def is_initial(t: Tok) -> bool:
    """A capital letter alone (an initial), not a roman numeral."""
    return len(t.text) == 1 and t.cap and t.text not in "ivx"


# -- sentences and negation ------------------------------------------------------------------------


def sentences(toks: list[Tok]) -> list[list[Tok]]:
    """Tokens grouped into sentences: a stop ends one unless it follows an initial or an abbreviation."""
    out: list[list[Tok]] = [[]]
    for i, t in enumerate(toks):
        if t.kind == "stop":
            prev = toks[i - 1] if i else None
            nxt = toks[i + 1] if i + 1 < len(toks) else None
            if t.text not in ".":  # ! ? a line break or a CJK stop always ends a sentence
                if out[-1]:
                    out.append([])
                continue
            initial = prev is not None and prev.kind == "word" and len(prev.text) == 1 and (prev.cap or (
                nxt is not None and nxt.kind == "word" and not nxt.cap and not nxt.lead))  # "Y. p. orientalis"
            abbreviation = prev is not None and prev.text in GOLD_ABBREVIATIONS and nxt is not None and (
                nxt.cap or nxt.num is not None or (nxt.kind == "word" and prev.text != "no"))
            if not (initial or abbreviation) and out[-1]:
                out.append([])
            continue
        out[-1].append(t)
    return [s for s in out if s]


def mark_scope(sentence: list[Tok], question_words: set[str], gold_words: set[str]) -> None:
    """Set ``negated`` and ``quoted`` on a sentence's tokens (the scope rule of the module docstring)."""
    quoted = False
    for t in sentence:
        if t.kind == "quote":
            quoted = not quoted
        t.quoted = quoted
    scope = False
    local = False  # the scope began inside a subordinate clause: it ends at that clause's comma
    clause_start = True
    opener = None  # the first word of the current clause
    for i, t in enumerate(sentence):
        nxt = sentence[i + 1] if i + 1 < len(sentence) else None
        prev = sentence[i - 1] if i > 0 else None
        if t.kind == "sep" and t.text == ";" or t.text in GOLD_SCOPE_END:
            scope = False
        if t.text == "than" and prev is not None and prev.text == "other":
            scope = False  # "never by anyone other than X": the exception is affirmed
        if t.kind == "sep":
            if t.text == "," and scope and (local or (nxt is not None and nxt.text in _NEW_CLAUSE)):
                scope = local = False
            clause_start = True
            opener = None
            t.negated = scope
            continue
        if opener is None:
            opener = t.text
        negation = (t.text in NEGATIONS_PLAIN or bool(NEGATION_CJK.fullmatch(t.text))) and not t.quoted
        if negation and (t.text in question_words or t.text in gold_words):
            negation = False
        if negation and nxt is not None and (t.text, nxt.text) in _NOT_NEGATING:
            negation = False
        if negation and t.text == "no" and (nxt is None or nxt.num is not None or nxt.kind == "sep"):
            negation = False  # "No. 1", "No, it is 8."
        if negation and clause_start and i > 0 and sentence[i - 1].kind == "sep" and sentence[i - 1].text == ",":
            # ", not 16": an aside that negates only up to the next separator
            j = i
            while j < len(sentence) and sentence[j].kind != "sep":
                sentence[j].negated = True
                j += 1
            clause_start = False
            continue
        if negation and not scope:
            scope = True
            local = opener in _SUBORDINATE
        t.negated = scope or t.negated
        clause_start = False
