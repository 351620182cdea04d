"""The gold-answer judge: does a reply give one of the accepted answers?

Developed and measured on human judgements (NQ301: 3,574 answers of 12 QA systems, each judged
correct or not by people; the README's "Checking a judge" has the figures, and ``viva judge check``
measures any judge on any labelled file). The rules are general, about how answers are written, never about
one sample's phrases.

**Reading a text.** Mojibake is repaired (``ftfy``), then Unicode NFKC; dashes become "-"; "1,000"
is 1000 (thousands separators of exactly three digits), "11.3" keeps its decimal point; number words
of any size are digits ("one hundred sixty-three" is 163, "fifteenth" is 15) and ordinals are their
number ("21st" is 21); "B.C.", "BCE" are BC, "CE" is AD; "%" is "percent". Words are lower-cased,
articles dropped, apostrophes removed ("don't" -> "dont", "Kobol's" -> "kobol"), hyphens and dots
split words ("s-block" = "s - block", "B.R." = "B. R.") except a word spelt out letter by letter
("P-A-D-A-W-A-N" = "Padawan", three letters or more); a dash that breaks a sentence (spaced, an em
dash or "--", not between numbers) reads as a comma ("Not 1970 — it was 1969"), and words are compared by the stem of
:func:`engine.judge.text.stem`, the one stemmer of judging ("rocks"/"rock", "Confederates"/"Confederate").
Its function words (:data:`FILLER`) are narrower than :data:`engine.judge.text.STOPWORDS`: "up", "down",
"more", "same" and the like can be answers. Sentences end at . ! ? and line breaks, but not after
an initial ("J. R. R.") or a common abbreviation ("Dr.", "U.S.", "No.", "St.").

**Crediting** (``met``), against each gold answer in turn, over every sentence of the reply:

1. *Containment*: the gold's content words (no function words; words the question already holds
   are no evidence and are dropped from both sides, unless the gold has nothing else) appear in a
   sentence as one contiguous run, each word equal after stemming, numbers equal by value, an
   initial matching a capitalised word it begins ("B. R. Ambedkar" = "Bhimrao Ramji Ambedkar"), stems
   that differ only by a doubled final consonant ("sharecroppers" = "sharecropping"), or the run
   spelled with or without spaces ("Abid Ali" = "Abidali", "Steam Ship" = "Steamship"). The gold's
   *core* may stand for it:
   the gold without honorific titles ("General George Washington" -> "George Washington") and
   quantity/time qualifiers ("the late 6th century" -> "6th century", "median 10-12 years"), and for
   a person's name (two or more capitalised words, no comma) the surname; the year of a gold date
   ("in 1977" for "September 19, 1977"); a gold's named part without its generic words ("the ARPANET"
   for "the ARPANET project": the kept words hold a name written in capitals, a number or a capitalised
   word after the first, they make an F1 of at least 0.6 with the gold, and no other word stands
   beside them where the dropped words were). A number inside a gold range counts for the range
   ("11.3 years" for "10-12 years"); a gold made only of numbers counts when all of them are in one
   sentence in the same order ("started in 1881 and completed in 1885" for "between 1881 and 1885").
2. *A less specific answer*: a sentence whose own content words (after the question's and filler
   words are dropped) all belong to the gold, with what is missing only titles, qualifiers,
   initials, the day and month of a gold date whose year is given ("1965" for "1 August 1965"), or
   the given names of a person whose surname is given.
3. A candidate is refused when (a) the gold's words lie in a negation's scope (not, never, no,
   n't, wrong, false, ...; the scope runs to the end of the clause chain, and ends at "but",
   "rather", "however", "except", "other than", a ";", at the comma that closes a subordinate or
   relative clause the negation sits in ("While there is no single answer, X ..."; "Unlike Y, who
   never ..., X ...") and at a comma that opens a new clause ("..., it was X"; "..., so X")), where
   negation words that the question or the gold itself contains, "No." before a number, "not only",
   "not many", "no doubt" and words inside quotation marks do not count;
   (b) the gold is offered as one alternative ("A or B", "either", two hedges) and the other side is
   not also a gold; (c) the gold is one item of a list of several candidates of its kind (three or
   more items, two joined by and / & / "/", or two bare numbers; a stretch with its own "is"/"was" is
   a clause, not an item) and some other item is not a gold
   (another name holding the gold's surname is not a gold: a capitalised word before it, or any word
   in a reply written without capitals; "most sources credit Röntgen" names no one else); (d) for a
   person's name, the run is flanked by another capitalised name word ("John Quincy Adams" is not
   "John Adams"); (e) a gold given entirely by the question occurs only inside a phrase copied from
   the question (an echo); (f) the sentence dates it otherwise: another month in a gold date's year,
   or another day in a gold date's month ("18-20 January" holds the 18th).

``em`` is SQuAD's exact match of the whole reply; ``f1`` is SQuAD-style token F1 of the crediting
sentence's content words against the gold's (0 when nothing matched). What this judge cannot
credit: aliases and nicknames ("Dave" for "David"), paraphrases with other words, answers right but
not in the gold list (world knowledge). An LLM judge is the answer there.
"""

from __future__ import annotations

import re
import unicodedata
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field

import ftfy

from engine.judge.text import (  # the one text module of judging
    SWEEP_MIN_MATES,
    abbreviate,
    asserted_text,
    chinese_numerals_to_digits,
    claims,
    frame_mates,
    is_number_word,
    read_number,
    scale_of,
    split_sentences,
    stem,
)

GOLD_F1_THRESHOLD = 0.6
"""Kept for callers that report an F1 line; crediting no longer compares F1 with a threshold."""

# -- words -----------------------------------------------------------------------------------------

FILLER = frozenset("""
and or but if of to in on at by for with from as into onto about over under than then so such that this these
those there here it its itself they them their he she his her we us our you your me my mine im ive id
is are was were be been being am do does did has have had having can could should would may might will shall
must also just only very quite really simply some any each all both other another which who whom whose what
when where why how yes well okay ok sure certainly definitely probably perhaps maybe think believe guess
say said know answer answers answered question correct correctly right exactly
called named known thats whats theres heres theyre youre
的 了 是 在 和 与 及 或 吗 呢 吧 啊 个 也 都 就 它 他 她 们 这 那 有 为
""".split())
"""Function words: never evidence of an answer (a gold made only of them is kept whole)."""

TITLES = frozenset("""mr mrs ms miss dr doctor sir dame lord lady saint st general gen colonel col captain capt
major admiral commander president king queen prince princess emperor empress pope bishop archbishop rev
reverend professor prof judge justice senator governor duke duchess earl baron sultan tsar czar pharaoh
chief sheikh rabbi imam father brother sister""".split())
"""Honorific titles: a gold may be given without them ("General George Washington")."""

APPROXIMATE = frozenset("around about approximately approx circa c ca nearly almost roughly estimated".split())
"""Qualifiers that make a gold's numbers approximate: a number within 5% of it then counts."""

QUALIFIERS = frozenset("""early late mid around about approximately approx circa c ca nearly almost roughly
median average mean estimated up between typically usually generally mostly often""".split())
"""Quantity and time qualifiers a gold may be given without ("the late 6th century", "median 10-12 years")."""

MONTHS = {m: i + 1 for i, m in enumerate(
    "january february march april may june july august september october november december".split())}
MONTHS.update({"jan": 1, "feb": 2, "apr": 4, "jun": 6, "jul": 7, "aug": 8, "sep": 9, "sept": 9, "oct": 10,
               "nov": 11, "dec": 12})

NEGATIONS = frozenset("""not no never none neither nor nothing nobody nowhere cannot cant dont doesnt didnt
isnt arent wasnt werent wont wouldnt shouldnt couldnt hasnt havent hadnt aint wrong false incorrect untrue
myth misconception""".split())
_NEGATION_CJK = re.compile("不|没|并非|未|無|无")
_NOT_NEGATING = {("not", "only"), ("not", "just"), ("no", "doubt"), ("nothing", "but"), ("no", "matter"),
                 ("not", "many"), ("not", "much"), ("not", "least"), ("not", "surprisingly"), ("no", "less"),
                 ("not", "unlike")}
_SCOPE_END = frozenset("but rather instead however though although yet whereas except".split())
_SUBORDINATE = frozenset("""while although though whereas if unless unlike since because as when whether despite
even who which whom whose where""".split())
"""Words that open a subordinate or relative clause: a negation inside one ends at the clause's comma
("While there is no single answer, the Ramones are credited"; "If I am not mistaken, it was X")."""
_NEW_CLAUSE = frozenset("so it he she they we i you there this these those its his her their our my".split())
"""Words that, after a comma, start a new clause with its own subject ("It was not the Clash, it was X"; ", so I would say X")."""
_ALTERNATIVE_WORDS = frozenset({"or", "either"})
_HEDGES = frozenset({"maybe", "perhaps", "possibly"})
_LIST_WORDS = frozenset({"and", "&"})

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

_ABBREVIATIONS = frozenset("""dr mr mrs ms st jr sr vs v etc inc ltd co no nos gen col capt prof rev mt ft
fig vol approx est dept univ corp bros jan feb mar apr jun jul aug sep sept oct nov dec""".split())

# -- tokens ----------------------------------------------------------------------------------------

_CJK = "\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff"
_LETTER = rf"(?:(?![{_CJK}])[^\W\d_])"
_TOKEN = re.compile(rf"\d+(?:\.\d+)?(?:st|nd|rd|th|s)?(?!{_LETTER})|{_LETTER}+(?:['’]{_LETTER}+)*|[{_CJK}]"
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
    text = abbreviate(text)  # "ribonucleic acid" is "RNA" (engine.judge.text.EXPANSIONS)
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
    """Number words as one number token (:func:`engine.judge.text.read_number`, the one reader of judging;
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


def _same(a: Tok, b: Tok) -> bool:
    if a.acronym or b.acronym:
        other = b if a.acronym else a
        return other.upper and other.text == (a if a.acronym else b).text
    if a.num is not None or b.num is not None:
        return a.num is not None and b.num is not None and a.num == b.num
    if a.stem == b.stem or (len(a.stem) > 4 and len(b.stem) > 4 and _undouble(a.stem) == _undouble(b.stem)):
        return True
    # an initial stands for a word it begins ("B." for "Bhimrao"; the initial was written as a capital,
    # and is not a roman numeral: "World War I" is not "World War II")
    if _initial(a) and len(b.text) > 1 and b.text[0] == a.text:
        return True
    return _initial(b) and len(a.text) > 1 and a.text[0] == b.text


def _undouble(stem: str) -> str:
    """A stem without a doubled final consonant: the stemmer leaves "sharecropp" (sharecroppers) beside
    "sharecrop" (sharecropping)."""
    if len(stem) > 2 and stem[-1] == stem[-2] and stem[-1] not in "aeiouy":
        return stem[:-1]
    return stem


def _name_variant(a: str, b: str) -> bool:
    """Two given names that are forms of one name: one holds the other ("Yevgenia", "Evgenia") or they
    share their first three letters ("Dave", "David"; "Will", "William")."""
    if len(a) < 3 or len(b) < 3:
        return False
    return a in b or b in a or a[:3] == b[:3]


def _initial(t: Tok) -> bool:
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
            abbreviation = prev is not None and prev.text in _ABBREVIATIONS and nxt is not None and (
                nxt.cap or nxt.num is not None or (nxt.kind == "word" and prev.text != "no"))
            if not (initial or abbreviation) and out[-1]:
                out.append([])
            continue
        out[-1].append(t)
    return [s for s in out if s]


def _mark(sentence: list[Tok], question_words: set[str], gold_words: set[str]) -> None:
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
        if t.kind == "sep" and t.text == ";" or t.text in _SCOPE_END:
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
        negation = (t.text in NEGATIONS or bool(_NEGATION_CJK.fullmatch(t.text))) and not t.quoted
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


# -- golds -----------------------------------------------------------------------------------------


@dataclass
class _Form:
    """One way a gold may be written: its content tokens and how it was derived from the gold."""

    toks: list[Tok]
    how: str
    approx: bool = False  # the gold says its numbers are approximate ("around 2.45 billion")


@dataclass
class _Gold:
    text: str
    all: list[Tok]  # content tokens (no filler unless nothing else)
    given: bool  # every content word is in the question
    person: bool  # two or more capitalised words and nothing else: a person's (or a named thing's) name
    dates: set[tuple[int, float]]  # (month, year) pairs the gold states
    forms: list[_Form] = field(default_factory=list)
    words: set[str] = field(default_factory=set)
    heads: set[int] = field(default_factory=set)  # positions of titles that head the gold ("king of France")


def _content(toks: list[Tok]) -> list[Tok]:
    words = [t for t in toks if t.kind in ("word", "num")]
    content = [t for t in words if t.text not in FILLER or t.text == "i" or t.upper]
    return content or words


def _dates(toks: list[Tok]) -> set[tuple[int, float]]:
    """(month, year) pairs: a month name with a year within three tokens of it."""
    out = set()
    for i, t in enumerate(toks):
        if t.text in MONTHS:
            for u in toks[max(0, i - 3):i + 4]:
                if u.num is not None and 1000 <= u.num <= 2100:
                    out.add((MONTHS[t.text], u.num))
    return out


def _gold(text: str, q_stems: set[str]) -> _Gold:
    toks = tokens(text)
    content = _content(toks)
    given = all(t.stem in q_stems for t in content)
    words = [t for t in content if t.kind == "word"]
    person = (len(words) >= 2 and all(t.cap for t in words) and len(words) == len(content)
              and not any(t.text == "," for t in toks))
    g = _Gold(text, content, given, person, _dates(content))
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
        if g.forms and all(t.text in NEGATIONS or t.text in QUALIFIERS for t in form) and any(
                t.text not in NEGATIONS and t.text not in QUALIFIERS for t in content):
            return  # "not" alone is not "not guilty" (but "no" is "typically, no")
        seen.add(key)
        g.forms.append(_Form(form, how))

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
        outside = _content([t for t in words_only[:i] if t.kind != "sep"])
        inside = _content([t for t in words_only[i + 1:] if t.kind != "sep" and t.text != ")"])
        add(outside, "the gold without its bracket")
        add(inside, "the gold's bracketed form")
    for k, t in enumerate(toks):
        if (t.text == "in" or t.text == ",") and k > 0:
            head, tail = _content(toks[:k]), _content(toks[k + 1:])
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
    parts = _date_parts(content)
    if parts and len(parts) < len(content):
        # the year of a gold date ("1977" for "September 19, 1977"); another month that year is refused
        add([t for i, t in enumerate(content) if i not in parts], "the year of the gold date", dropped_days=True)
    if person and not given:
        surname = core[-1] if core else content[-1]
        if len(surname.text) > 2 and surname.stem not in q_stems:
            add([surname], "the surname")
    return g


def _days(toks: list[Tok]) -> set[tuple[float, int, float]]:
    """(day, month, year) triples: a day number beside a month name that has a year after it."""
    out = set()
    parts = _date_parts(toks)
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


def _date_parts(toks: list[Tok]) -> set[int]:
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


def _range_at(toks: list[Tok], i: int) -> tuple[float, float] | None:
    """(low, high) when the gold tokens at i, i+1 are the two ends of a range."""
    if (i + 1 < len(toks) and toks[i].to_next and toks[i].num is not None and toks[i + 1].num is not None
            and toks[i].num < toks[i + 1].num):
        return toks[i].num, toks[i + 1].num
    return None


def _find(form: list[Tok], seq: list[Tok], ranged: set[int], approx: bool = False) -> list[tuple[int, int]]:
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
            if not (_same(form[i], seq[j]) or (approx and form[i].num is not None and seq[j].num is not None
                                                and abs(form[i].num - seq[j].num) <= 0.05 * abs(form[i].num))):
                break
            exact += not _initial(form[i]) and not _initial(seq[j])
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


# -- the verdict -----------------------------------------------------------------------------------


@dataclass(frozen=True)
class GoldVerdict:
    """The verdict on a reply against gold answers.

    Attributes:
        met: the reply is credited (see the module docstring for the rule).
        em: SQuAD exact match of the whole reply against the best gold answer (0.0 or 1.0).
        f1: token F1 of the crediting (or best) sentence's content words against the gold's.
        best_gold: the gold answer behind the verdict (the first gold when nothing matched).
        rationale: one line explaining the verdict.
        span: the sentence behind the verdict ("" when none).
    """

    met: bool
    em: float
    f1: float
    best_gold: str
    rationale: str
    span: str = ""


def _f1(pred: Sequence[Tok], gold: Sequence[Tok]) -> float:
    if not pred or not gold:
        return 0.0
    common = Counter(t.stem for t in pred) & Counter(t.stem for t in gold)
    same = sum(common.values())
    if same == 0:
        return 0.0
    p, r = same / len(pred), same / len(gold)
    return 2 * p * r / (p + r)


def _text(toks: Sequence[Tok]) -> str:
    """Tokens joined for a rationale: words spaced, separators attached ("a, b (c)")."""
    out, glue, open_quote = "", True, False
    for t in toks:
        opener = t.text in "(“" or (t.text == '"' and not open_quote)
        if t.text == '"':
            open_quote = not open_quote
        if t.kind in ("sep", "quote") and not opener:
            out += t.text
            glue = False
        else:
            out += ("" if glue or not out else " ") + t.text
            glue = opener
    return out


def _short(text: str, limit: int = 80) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 3] + "..."


def normalize_answer(text: str) -> str:
    """SQuAD's official answer normalisation, Unicode-aware (lower case, no punctuation, no articles)."""
    text = unicodedata.normalize("NFKC", text or "").lower()
    text = "".join(ch for ch in text if not (unicodedata.category(ch).startswith("P") or ch in "$+<=>^`|~"))
    text = re.sub(r"\b(a|an|the)\b", " ", text)
    text = re.sub(f"([{_CJK}])", r" \1 ", text)
    return " ".join(text.split())


def exact_match(prediction: str, gold: str) -> float:
    """SQuAD exact match: 1.0 when the normalised strings are equal, else 0.0."""
    return float(normalize_answer(prediction) == normalize_answer(gold))


class _Judge:
    def __init__(self, reply: str, golds: list[str], question: str):
        self.q_toks = tokens(question)
        self.q_words = {t.text for t in self.q_toks}
        q_content = _content(self.q_toks)
        self.q_stems = {t.stem for t in q_content}
        self.q_bigrams = {(a.stem, b.stem) for a, b in zip(q_content, q_content[1:], strict=False)}
        self.golds = [_gold(g, self.q_stems) for g in golds]
        self.all_gold_words = set().union(*(g.words for g in self.golds))
        self.gold_dates = set().union(*(g.dates for g in self.golds))
        self.gold_days = set().union(*(_days(g.all) for g in self.golds))
        self.several = _asks_for_several(self.q_toks)
        self.sentences = sentences(tokens(reply))
        # a reply written with capitals shows names by them: a lower-case word before a surname is no
        # given name ("most sources credit Röntgen"); in a reply without any, every word may be one
        self.cased = any(t.cap for s in self.sentences for t in s if t.kind == "word" and t.pos > 0)
        for s in self.sentences:
            _mark(s, self.q_words, self.all_gold_words)

    def credits(self, sentence: list[Tok]) -> bool:
        """Whether this one sentence gives a gold (the rules of :meth:`judge`)."""
        return self.judge([sentence])[0]

    def judge(self, only: list[list[Tok]] | None = None) -> tuple[bool, str, str, str, float]:
        """(met, gold, sentence, rationale, f1), over every sentence or those ``only``."""
        refused: tuple[str, str, str, float] | None = None
        best_f1: tuple[float, str, str] = (0.0, self.golds[0].text, "")
        for gold in self.golds:
            for sentence in (self.sentences if only is None else only):
                kept_filler = {t.text for t in gold.all if t.text in FILLER}  # a gold of function words ("itself")
                content = [t for t in sentence if t.kind in ("word", "num")
                           and (t.text not in FILLER or t.text == "i" or t.upper or t.text in kept_filler)]
                own = [t for t in content if t.stem not in self.q_stems]  # what the reply adds to the question
                f1 = _f1(own if not gold.given else content, gold.all)
                if f1 > best_f1[0]:
                    best_f1 = (f1, gold.text, _text(sentence))
                for form in gold.forms:
                    ranged = {i for i in range(len(form.toks)) if _range_at(form.toks, i)}
                    for start, end in _find(form.toks, content, ranged, form.approx):
                        around = (content[start - 1] if start > 0 else None, content[end] if end < len(content) else None)
                        reason = self._refusal(content[start:end], sentence, gold, form, around)
                        if reason:
                            if refused is None:
                                refused = (gold.text, _text(sentence), reason, f1)
                            continue
                        return True, gold.text, _text(sentence), f"{form.how} in", f1
                nums = [t.num for t in gold.all if t.num is not None]
                if len(nums) >= 2 and len(nums) == len([t for t in gold.all if t.text not in QUALIFIERS]):
                    # a gold made of numbers ("between 1881 and 1885"): all of them, in order, in one sentence
                    seen = [t.num for t in content if t.num in nums]
                    it = iter(seen)
                    if all(n in it for n in nums):
                        at = [t for t in content if t.num in nums]
                        reason = self._refusal(at, sentence, gold, None)
                        if not reason:
                            return True, gold.text, _text(sentence), "the gold's numbers in order in", f1
                subset = self._subset(own, gold)
                if subset:
                    reason = self._refusal(own, sentence, gold, None)
                    if reason:
                        if refused is None:
                            refused = (gold.text, _text(sentence), reason, f1)
                        continue
                    return True, gold.text, _text(sentence), subset, f1
        if refused is not None:
            g, s, reason, f1 = refused
            return False, g, s, f'gold "{g}": not credited, {reason}', f1
        f1, g, s = best_f1
        if f1 > 0:
            return False, g, s, f'gold "{g}" not given (content-word F1 {f1:.2f})', f1
        return False, self.golds[0].text, "", "no gold word given", 0.0

    def _subset(self, own: list[Tok], gold: _Gold) -> str:
        """Why ``own`` (a sentence's words beyond the question's) is a shorter form of the gold ("" if not)."""
        if gold.given or not own or all(_initial(t) for t in own):
            return ""  # initials alone are no answer ("G." is not "Grisha")
        matched: set[int] = set()
        for t in own:
            hit = next((i for i, g in enumerate(gold.all) if i not in matched and _same(g, t)), None)
            if hit is None:
                return ""
            matched.add(hit)
        missing = [g for i, g in enumerate(gold.all) if i not in matched]
        if not missing:
            return "the gold's words in"
        kept = [g for i, g in enumerate(gold.all) if i in matched]
        if all(t.text in NEGATIONS for t in kept) and any(
                t.text not in NEGATIONS and t.text not in QUALIFIERS for t in gold.all):
            return ""  # "not" alone is not "not guilty"
        surname = gold.person and (len(gold.all) - 1) in matched
        f1 = 2 * len(kept) / (len(kept) + len(gold.all))
        date_parts = _date_parts(gold.all) if any(
            t.num is not None and 1000 <= t.num <= 2100 for t in kept) else set()
        for i, g in enumerate(gold.all):
            if i in matched:
                continue
            if i in date_parts:
                continue  # the day and month of a gold date whose year is given ("1965" for "1 August 1965")
            if (g.text in TITLES and g.pos not in gold.heads) or g.text in QUALIFIERS or (len(g.text) == 1 and g.cap) \
                    or (surname and g.cap):
                continue
            if g.stem in self.q_stems:
                continue  # the question gives it ("substitute" for "substitute good" when asked for a good)
            if g.kind == "word" and not g.cap and g.pos not in gold.heads and f1 >= GOLD_F1_THRESHOLD and (
                    len(kept) >= 2 or kept[0].cap or kept[0].num is not None):
                # a generic word of the gold left out ("the ARPANET" for "the ARPANET project", "chicken
                # patty" for "breaded chicken patty"), but one common word is not the gold ("flora" for
                # "commensal flora")
                continue
            return ""
        return "a shorter form of the gold in"

    def _refusal(self, span: list[Tok], sentence: list[Tok], gold: _Gold, form: _Form | None,
                 around: tuple[Tok | None, Tok | None] = (None, None)) -> str:
        if any(t.negated for t in span):
            return "the gold answer is negated"
        if sum(t.text in _HEDGES for t in sentence) >= 2:
            return "the sentence offers alternatives"
        pos = {t.pos: k for k, t in enumerate(sentence)}
        a, b = pos[span[0].pos], pos[span[-1].pos]
        if form is not None and form.how == "the surname":
            while a > 0 and sentence[a - 1].kind == "word" and sentence[a - 1].text in gold.words:
                a -= 1  # the whole name, given names included, is what an alternative or a list holds
        before = sentence[a - 1] if a > 0 else None
        after = sentence[b + 1] if b + 1 < len(sentence) else None
        if (before is not None and before.text in _ALTERNATIVE_WORDS) or (after is not None and after.text == "or"):
            if not self._other_side_is_gold(sentence, a, b):
                return "the sentence offers alternatives"
        if form is not None and form.how == "the surname" and before is not None and before.kind in ("word", "num") \
                and (before.cap or before.num is not None or not self.cased) and before.text not in FILLER and before.text not in TITLES and before.text not in gold.words \
                and not any(_name_variant(before.text, g.text) for g in gold.all[:-1]):
            return f'"{before.text} {span[0].text}" is another name'
        if form is not None and form.how == "the gold's bracketed form" and before is not None and before.text == "(":
            # the reply brackets it too: it annotates the name before the bracket, which must be the gold's
            outside = next((f for f in gold.forms if f.how == "the gold without its bracket"), None)
            lead = [t for t in sentence[:a - 1] if t.kind in ("word", "num") and t.text not in FILLER]
            if lead and (outside is None or not any(e == len(lead) for _, e in _find(outside.toks, lead, set()))):
                return f'the bracket annotates "{_text(lead[-3:])}"'
        if form is not None and form.how == "the gold's named part":
            for k, step in ((a - 1, -1), (b + 1, 1)):
                while 0 <= k < len(sentence) and sentence[k].text in FILLER and sentence[k].text in gold.words:
                    k += step  # the gold's own function words ("of" in "the king of France")
                side = sentence[k] if 0 <= k < len(sentence) else None
                if side is not None and side.kind in ("word", "num") and side.text not in FILLER:
                    return f'"{side.text}" stands where the gold has other words'
        if gold.given and form is not None:
            left, right = around  # the content words beside it (separators and function words skipped)
            if (left is not None and (left.stem, span[0].stem) in self.q_bigrams) or (
                    right is not None and (span[-1].stem, right.stem) in self.q_bigrams):
                return "it only echoes the question"
        stated = _dates([t for t in sentence if t.kind in ("word", "num")])
        other = {d for d in stated - self.gold_dates if any(d[1] == y for _, y in self.gold_dates)}
        if other:
            month, year = sorted(other)[0]
            return f"it dates it otherwise (month {month} of {year:g})"
        days = _days([t for t in sentence if t.kind in ("word", "num")])
        for _, month, year in sorted(self.gold_days):
            said = {d for d, m, y in days if (m, y) == (month, year)}
            if said and not said & {d for d, m, y in self.gold_days if (m, y) == (month, year)}:
                return f"it dates it otherwise (day {min(said):g} of month {month} of {year:g})"
        offered = self._hedged_alternatives(sentence, a, b, gold)
        if offered:
            return f'the sentence offers it among alternatives ({", ".join(offered[:3])})'
        siblings = self._list_siblings(sentence, a, b, gold)
        if siblings:
            return f'it is one of several candidates ({", ".join(siblings[:3])})'
        return ""

    def _hedged_alternatives(self, sentence: list[Tok], a: int, b: int, gold: _Gold) -> list[str]:
        """The other candidates of a sentence that offers the gold as one possibility among several
        ("It could be A, B or C.", "Possibly A; B; C.", "Either A or B, I'm not sure which.",
        "Candidates: A / B / C"): the sentence holds a word of doubt (:data:`_DOUBT`) and the gold's list
        item has siblings that are not golds, not negated, and either split from it by "or", ";", "/" or
        "|", or of its kind (a number for a number, a name for a name). Without a word of doubt, a
        sibling that is a variant of the gold (it shares at least half of the gold's content words and
        has at most two more: "the king of France, the plague of France") is offered beside it, unless
        the question asks for several answers. [] when it offers none."""
        words = [t.text for t in sentence]
        doubt = bool(_DOUBT & set(words) or any(x == "not" and y == "sure" for x, y in zip(words, words[1:], strict=False)))
        if not doubt and _asks_plural(self.q_toks):
            return []
        items = _items(sentence)
        spanned = [k for k, (s, e) in enumerate(items) if s <= b and e >= a]
        if not spanned:
            return []
        lo, hi = items[spanned[0]][0], items[spanned[-1]][1]
        items = items[:spanned[0]] + [(lo, hi)] + items[spanned[-1] + 1:]  # the gold is one item, whatever it holds
        here = spanned[0]
        marked = any((t.kind == "sep" and t.text in ";|/") or t.text == "or" for t in sentence[:lo] + sentence[hi + 1:])
        span = sentence[a:b + 1]
        kind = "num" if any(t.num is not None for t in span) else (
            "cap" if all(t.cap for t in span if t.kind == "word") else "low")
        own = {t.stem for t in span if t.kind in ("word", "num") and t.text not in FILLER}
        out = []
        for k, (ks, ke) in enumerate(items):
            if k == here:
                continue
            part = sentence[ks:ke + 1]
            content = [t for t in part if t.kind in ("word", "num") and t.text not in FILLER
                       and t.text not in _DOUBT and t.text not in _CLAUSE_STARTS and t.text != "sure"]
            if not content or any(t.negated for t in part) or self._is_gold(part):
                continue
            if doubt and (marked or _same_kind(content, kind)):
                out.append(_text(part))
            elif len({t.stem for t in content} & own) * 2 >= len(own) > 0 and len(content) <= len(own) + 2:
                out.append(_text(part))  # a variant of the gold beside it, of its size ("two waves, one waves")
        return out

    def _other_side_is_gold(self, sentence: list[Tok], a: int, b: int) -> bool:
        items = _items(sentence)
        here = next((k for k, (s, e) in enumerate(items) if s <= a <= e), None)
        if here is None:
            return False
        others = [items[k] for k in (here - 1, here + 1) if 0 <= k < len(items)]
        return any(self._is_gold(sentence[s:e + 1]) for s, e in others)

    def _is_gold(self, toks: list[Tok]) -> bool:
        content = [t for t in toks if t.kind in ("word", "num") and t.text not in FILLER]
        if not content:
            return False
        # a surname stands for a gold only alone ("Hale"), not inside another name ("Tomas Lorsk Hale")
        return any(_find(form.toks, content, set()) for g in self.golds for form in g.forms
                   if form.how != "the surname" or len(content) == 1)

    def _list_siblings(self, sentence: list[Tok], a: int, b: int, gold: _Gold | None = None) -> list[str]:
        """Other items of a list the gold is an item of ([] when it is in none, or all of them are golds)."""
        items = _items(sentence)
        spanned = [k for k, (s, e) in enumerate(items) if s <= b and e >= a]
        joins = {",", ";", "/", "|", "&", "and", "or", "nor"}
        if len(spanned) > 1 and gold is not None and gold.words & joins:
            # a gold with its own separators ("coughing and sneezing", "1, 2, and n") is one item
            items = items[:spanned[0]] + [(items[spanned[0]][0], items[spanned[-1]][1])] + items[spanned[-1] + 1:]
        here = next((k for k, (s, e) in enumerate(items) if s <= a and b <= e), None)
        if here is None:
            return []
        s, e = items[here]
        after = [t for t in sentence[b + 1:e + 1] if t.kind in ("word", "num") and t.text not in FILLER]
        before = [t for t in sentence[s:a] if t.kind in ("word", "num") and t.text not in FILLER]
        if after:
            return []  # the gold sits in a longer phrase, not a list item
        span = sentence[a:b + 1]
        kind = "num" if any(t.num is not None for t in span) else (
            "cap" if all(t.cap for t in span if t.kind == "word") else "low")
        # items split by ; | / or offered with "or" are a list whatever their kind ("the Seine | a river in
        # France", "the Ramones, a corporation or 1990")
        marked = any((t.kind == "sep" and t.text in ";|/") or t.text == "or" for t in sentence)

        def short(ks: int, ke: int, limit: int) -> bool:
            words = [t for t in sentence[ks:ke + 1] if t.kind in ("word", "num")]
            first = next((t for t in sentence[ks:ke + 1] if t.kind in ("word", "num")), None)
            return bool(words) and len(words) <= limit and not (
                first is not None and (first.text in _CLAUSE_STARTS or first.text in _SCOPE_END))

        # a sentence that is nothing but three or more short items is a list whatever their kinds
        # ("Louis Pasteur, Robert Pasteur, antigens")
        bare = len(items) >= 3 and all(short(ks, ke, 4) for k, (ks, ke) in enumerate(items) if k != here)
        siblings: list[tuple[int, int]] = []
        for step in (-1, 1):
            k = here + step
            while 0 <= k < len(items):
                ks, ke = items[k]
                words = [t for t in sentence[ks:ke + 1] if t.kind in ("word", "num") and t.text not in FILLER] or [
                    t for t in sentence[ks:ke + 1] if t.kind in ("word", "num")]  # "other", "itself" are items too
                first = next((t for t in sentence[ks:ke + 1] if t.kind in ("word", "num")), None)
                if not words or len(words) > (8 if marked else 4) or not (marked or bare or _same_kind(words, kind)) \
                        or (first is not None and first.text in _CLAUSE_STARTS) \
                        or any(t.text in _FINITE for t in sentence[ks + 1:ke + 1]):
                    break  # not an item of the same list (a clause: "Paris; it hosted the games")
                siblings.append(items[k])
                k += step
        if not siblings:
            return []
        later = [x for x in siblings if items.index(x) > here]
        if len(before) > 1 and (len(later) < 2 or len(later) < len(siblings)):
            return []  # a lead-in ("X played for A, B and C") is allowed before a list's first item only
        lo = min([here] + [items.index(x) for x in siblings])
        hi = max([here] + [items.index(x) for x in siblings])
        joiners = {t.text for t in sentence[items[lo][1] + 1:items[hi][0]]}
        bare_numbers = kind == "num" and all(
            len([t for t in sentence[ks:ke + 1] if t.kind in ("word", "num")]) == 1
            and sentence[ks].num is not None for ks, ke in siblings)
        if len(siblings) + 1 < 3 and not joiners & {"and", "&", "/", ";", "|"} and not bare_numbers:
            return []  # "Paris, France" is a place, not a list (but "1825, 1832" is two years)
        bad = [_text(sentence[ks:ke + 1]) for ks, ke in siblings if not self._is_gold(sentence[ks:ke + 1])]
        if self.several and 2 * len(bad) < len(siblings) + 1:
            return []  # asked for several, and most of the items are accepted answers
        return bad


_DOUBT = frozenset("maybe perhaps possibly either could might candidates candidate torn unsure".split())
"""Words of doubt: with them, a list offers candidates (:meth:`_Judge._hedged_alternatives`)."""
_FINITE = frozenset("is was are were".split())
"""A verb inside a stretch makes it a clause ("K2 is the second; the tallest is Everest"), not a list item."""
_CLAUSE_STARTS = frozenset("""it he she they we i you this that these those which who there here its his her their
is was are were has had have will would""".split())
"""Words that open a clause, not a list item."""

_SEVERAL = frozenset("are were some list examples several many name".split())


def _asks_for_several(q: list[Tok]) -> bool:
    """The question asks for several answers: "what are some...", "list of...", "what teams...", "3 ..."."""
    words = [t for t in q if t.kind in ("word", "num")][:5]
    return any(t.text in _SEVERAL or (t.num is not None and t.num > 1 and t.pos < 2) or (
        t.kind == "word" and len(t.text) > 3 and t.stem != t.text and t.pos > 0) for t in words)


def _asks_plural(q: list[Tok]) -> bool:
    """The question plainly asks for several answers: a word of :data:`_SEVERAL`, a number above one, or
    a plural right after "what"/"which" ("what teams", "which two countries") among its first words
    (narrower than :func:`_asks_for_several`, which takes any inflected word for a plural)."""
    words = [t for t in q if t.kind in ("word", "num")][:5]
    if any(t.text in _SEVERAL or (t.num is not None and t.num > 1) for t in words):
        return True
    return any(w.text in ("what", "which") and n.kind == "word" and n.text.endswith("s") and not n.text.endswith("ss")
               for w, n in zip(words, words[1:], strict=False))


def _same_kind(words: list[Tok], kind: str) -> bool:
    if kind == "num":
        return any(t.num is not None for t in words)
    if kind == "cap":
        return all(t.cap for t in words if t.kind == "word")
    return all(not t.cap for t in words)


def _items(sentence: list[Tok]) -> list[tuple[int, int]]:
    """(start, end) index pairs of the stretches between list separators (, ; / & and or nor)."""
    items, start = [], 0
    for i, t in enumerate(sentence):
        if (t.kind == "sep" and t.text in ",;/|&") or t.text in ("and", "or", "nor"):
            if i > start:
                items.append((start, i - 1))
            start = i + 1
    if start < len(sentence):
        items.append((start, len(sentence) - 1))
    return items


LONG_REPLY = 3
"""Sentences from which a reply must single its answer out (:func:`_search`), when it also has
:data:`LONG_REPLY_WORDS` words or more."""
LONG_REPLY_WORDS = 40
"""Words (tokens) from which a reply of :data:`LONG_REPLY` sentences must single its answer out."""
SHORT_SENTENCE = 12
"""Content words (besides the gold's) of a sentence short enough to single an answer out by its place
(first or last)."""
REPLY_SENTENCES = 10
"""Sentences up to which a text is a reply, where an answer in a frame of its own singles itself out wherever
it stands (:func:`_search`); a longer text is a document (a pasted source, noise), where only a first or
last sentence or an answer cue does."""
_CUE = re.compile(r"\b(?:(?:the|my|final)\s+answer|in\s+short|in\s+summary|to\s+sum\s+up|i(?:'d|\s+would)\s+say|"
                  r"my\s+(?:guess|bet|pick)|i(?:'m|\s+am)\s+going\s+with)\b|答案|所以", re.IGNORECASE)


def _search(said: str, gold: str, judge: _Judge) -> str:
    """Why a credited reply is a search rather than one answer ("" when it is one answer).

    - a *sweep*: the gold's unit has :data:`engine.judge.text.SWEEP_MIN_MATES` frame mates or more
      (:func:`engine.judge.text.frame_mates`: "It is 0. It is 1. ... It is 100.") that are not golds;
    - a *passage*: a reply of :data:`LONG_REPLY` sentences and :data:`LONG_REPLY_WORDS` words or more
      (a pasted source, an answer buried in noise) where no sentence that gives the gold singles it out: none is among the first two sentences
      or is the last with at most :data:`SHORT_SENTENCE` content words, or has at most twice that and
      an answer cue ("the answer", "so", "therefore", "in short", "which means", "I'd say", "is called",
      答案, 所以), or, in a reply of at most :data:`REPLY_SENTENCES` sentences, wherever it stands, has at
      most :data:`SHORT_SENTENCE` content words besides the
      gold's, none of them a word of the question, and at least one word besides the gold (an answer
      in a frame of its own: "That points to oxides.", "It's 8, at least as far as I know."). A pasted
      passage's sentence that holds the gold holds the question's words too (questions are written
      from passages); a bare gold buried in noise has no frame.
    """
    for g in [gold] + [x.text for x in judge.golds if x.text != gold]:
        mates = [m for m in frame_mates(said, g) if not judge._is_gold(_content(tokens(m)))]
        if len(mates) >= SWEEP_MIN_MATES:
            return f"one of {len(mates) + 1} candidates offered one per sentence or clause (a sweep: {', '.join(mates[:3])}, ...)"
    sentences = judge.sentences
    if len(sentences) < LONG_REPLY or sum(len(x) for x in sentences) < LONG_REPLY_WORDS:
        return ""
    raw = split_sentences(said)

    def content_of(sentence: list[Tok]) -> list[Tok]:
        return [t for t in sentence if t.kind in ("word", "num") and t.text not in FILLER]

    credits = [judge.credits(sentence) for sentence in sentences]
    # an opener or a closer of a few words ("Good question!", "Hope that helps!") has no place of its own
    placed = [k for k, sentence in enumerate(sentences) if credits[k] or len(content_of(sentence)) > 3]
    for k, sentence in enumerate(sentences):
        if not credits[k]:
            continue
        content = [t for t in content_of(sentence) if t.text not in judge.all_gold_words]  # the gold's own words aside
        text = raw[k] if k < len(raw) and len(raw) == len(sentences) else _text(sentence)
        if len(content) <= SHORT_SENTENCE and k in (placed[0], placed[-1]):
            return ""  # a short first sentence answers; a short last one concludes
        if len(content) <= 2 * SHORT_SENTENCE and _CUE.search(text):
            return ""  # "so the answer is ...", "which means ..."
        if len(sentences) <= REPLY_SENTENCES and len(content) <= SHORT_SENTENCE and _framed(sentence, judge) and not any(
                t.stem in judge.q_stems for t in content):
            return ""  # an answer in a frame of its own ("So: 8.", "That points to oxides.", "It's 8, at least
            # as far as I know."): a passage's sentence that holds the gold holds the question's words too
    return f"a reply of {len(sentences)} sentences that does not single its answer out (a passage, not an answer)"


def _framed(sentence: list[Tok], judge: _Judge) -> bool:
    """The sentence says more than the gold: at least one word that is not the gold's (a bare "Paris."
    buried in a long text is no answer's frame)."""
    return any(t.kind in ("word", "num") and t.text not in judge.all_gold_words for t in sentence)


def judge_gold(reply: str, golds: Sequence[str] | str, question: str = "",
               threshold: float = GOLD_F1_THRESHOLD) -> GoldVerdict:
    """Judge a reply against gold answers (the module docstring states the rule).

    Args:
        reply: the target's reply to the question that carries the criterion.
        golds: the accepted answers (one string or several).
        question: the question asked; words copied from it earn nothing.
        threshold: unused by the crediting rule; kept for callers' signatures.

    Returns:
        A :class:`GoldVerdict`.

    Raises:
        ValueError: no non-empty gold answer was given.
    """
    del threshold
    if isinstance(golds, str):
        golds = [golds]
    golds = [g for g in golds if g and normalize_answer(g)]
    if not golds:
        raise ValueError("judge_gold needs at least one non-empty gold answer")
    em = max(exact_match(reply or "", g) for g in golds)
    if not (reply or "").strip():
        return GoldVerdict(False, em, 0.0, golds[0], "no reply to judge")
    # stance before match: only what the reply asserts can give the gold (a gold that holds a negation,
    # "not guilty", keeps the denials: the negation scope rule below reads them)
    negative_gold = any(t.text in NEGATIONS for g in golds for t in tokens(g))
    said = asserted_text(reply, keep_negated=negative_gold)
    if not said.strip():
        kinds = sorted({c.stance for c in claims(reply) if not c.asserted})
        return GoldVerdict(False, em, 0.0, golds[0], f"nothing asserted ({', '.join(kinds)})")
    judge = _Judge(said, golds, question)
    if not judge.sentences:
        return GoldVerdict(False, em, 0.0, golds[0], "no reply to judge")
    met, gold, span, why, f1 = judge.judge()
    if met:
        search = _search(said, gold, judge)
        if search:
            return GoldVerdict(False, em, round(f1, 4), gold, f'gold "{gold}": not credited, {search}', span)
    if met:
        rationale = f'gold "{gold}": {why} "{_short(span)}"'
    else:
        rationale = why + (f' (in "{_short(span)}")' if span else "")
    return GoldVerdict(met, em, round(f1, 4), gold, rationale, span)
