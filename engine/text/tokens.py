"""Tokens, stems and content words: how the engine cuts a text into words.

- **Tokens** (:func:`tokens`): NFKC, lower case; words (an apostrophe inside a word kept, a final
  "'s" dropped), numbers and CJK characters one token each. Numbers are normalised: thousands
  separators go ("1,000" -> 1000), decimal points stay ("3.5") and a decimal's trailing zeros go ("2.0" -> 2, "0.50" -> 0.5), "90%" / "90 per cent" / "90 percentage points" -> 90 percent,
  number words of any size become digits ("two hundred and fifty-three thousand" -> 253000, "1.5
  million" -> 1500000), ordinals become digit ordinals ("first", "1st" -> 1st; "twenty-first" ->
  21st), Chinese numerals become digits ("一千八百" -> 1800, "百分之九十" -> 90 percent)
  (:mod:`engine.text.numbers`); a number in scientific notation is one number ("6.02214076 × 10^23",
  "6.02214076e23" -> 6.02214076e23; "1.5 × 10^3" -> 1500); a word with digits glued after its letters is one
  word, not a number ("M10", "FD30", "IPx7", "H2O", "dm³" -> dm3).
- **Stems** (:func:`stem`): the Snowball English (Porter2) stemmer of ``whoosh`` (a dependency
  already), after a table of common irregular forms ("went" -> go, "children" -> child); the one
  stemmer of judging. :func:`crude_stem` is the suffix-stripping stem of the offline generators.
- **Content words** (:func:`content_stems`, :func:`content_words`): tokens without
  :data:`engine.text.lexicon.STOPWORDS` and negations (:func:`engine.text.lexicon.is_negation`).
- **The generators' words** (:func:`question_words`, :func:`topic_words`) and the knowledge base's
  word pattern (:data:`WORD_RE`).
"""

from __future__ import annotations

import re
import unicodedata
from functools import lru_cache

from whoosh.lang.porter2 import stem as _porter2

from engine.text.cjk import CJK, CJK_HANGUL_CHAR, CJK_RE, HAN
from engine.text.lexicon import BENCH_STOPWORDS, QUESTION_STOPWORDS, STOPWORDS, is_negation
from engine.text.numbers import (
    _NUMBER_WORD,
    _ORDINAL_SCALES,
    _ORDINAL_TENS,
    _ORDINAL_UNITS,
    _SCALES,
    _fold_numbers,
    chinese_numerals_to_digits,
    ordinal,
)

_TOKEN = re.compile(rf"[{CJK}]|\d+(?:[.,]\d+)*(?:e-?\d+(?!\w|\.\d))?(?:st|nd|rd|th)?%?|[^\W\d_]+\d[^\W_]*|[^\W\d_]+(?:['’][^\W\d_]+)*", re.UNICODE)
_THOUSANDS = re.compile(r"^\d{1,3}(?:,\d{3})+(?:\.\d+)?$")
_PER_CENT = re.compile(r"\bper\s+cent\b|\bpercentage\s+points?\b", re.IGNORECASE)
"""Percent in words ("25 per cent"; "8 percentage points" above a base rate is the rate's "8%")."""


def normalize(text: str) -> str:
    """NFKC, Chinese numerals as digits, curly apostrophes straight; case kept."""
    text = unicodedata.normalize("NFKC", text or "").replace("’", "'").replace("‘", "'")
    return chinese_numerals_to_digits(text)


def _number_token(tok: str) -> list[str]:
    percent = tok.endswith("%")
    if percent:
        tok = tok[:-1]
    m = re.match(r"^(.*?)(st|nd|rd|th)$", tok)
    if m and m.group(1)[-1:].isdigit():
        core = m.group(1).replace(",", "")
        return [ordinal(int(core))] if core.isdigit() else [core]
    if _THOUSANDS.match(tok):
        tok = tok.replace(",", "")
    elif "," in tok:  # "1,2" is a list, not a number: keep its numbers apart
        parts = [p for p in tok.split(",") if p]
        return parts + (["percent"] if percent else [])
    if _DECIMAL_ZEROS.match(tok):
        tok = tok.rstrip("0").rstrip(".")  # "2.0" is 2, "0.50" is 0.5
    return [tok, "percent"] if percent else [tok]


_DECIMAL_ZEROS = re.compile(r"^\d+\.\d*0$")


_SUPERSCRIPT = str.maketrans("⁰¹²³⁴⁵⁶⁷⁸⁹⁺⁻", "0123456789+-")
_SCIENTIFIC = re.compile(r"(?<![\w.])(?:(\d+(?:\.\d+)?)\s*[×x✕*·]\s*)?10\s*(?:\^\s*\(?\s*([+\-−]?\d+)\s*\)?|([⁺⁻]?[⁰¹²³⁴⁵⁶⁷⁸⁹]+))"
                         r"(?![\w^])|(?<![\w.])(\d+(?:\.\d+)?)[eE]([+\-]?\d+)(?!\w|\.\d)")
"""A number in scientific notation: "6.02214076 × 10^23", "1.0 x 10^-14", "10⁻¹⁴", "6.02214076e23"."""


def _scientific(m: re.Match) -> str:
    """One number for a number in scientific notation: plain digits when its exponent is between -6 and 12
    ("1.5 × 10^3" is 1500), else its significand and exponent ("6.02214076e23"), so each way of writing it reads
    the same."""
    from decimal import Decimal, InvalidOperation

    mantissa = m.group(1) or m.group(4) or "1"
    exponent = (m.group(2) or (m.group(3) or "").translate(_SUPERSCRIPT) or m.group(5) or "0").replace("−", "-")
    try:
        value = Decimal(mantissa).scaleb(int(exponent)).normalize()
    except (InvalidOperation, ValueError):
        return m.group(0)
    if -6 <= value.adjusted() <= 12:
        return format(value, "f")
    digits, exp = format(value, "e").split("e")
    return f"{digits}e{int(exp)}"


@lru_cache(maxsize=1 << 14)
def _tokens(text: str) -> tuple[str, ...]:
    if "10" in text or "e" in text or "E" in text:
        text = _SCIENTIFIC.sub(_scientific, text)
    text = _PER_CENT.sub("percent", normalize(text)).lower()
    words: list[str] = []
    for tok in _TOKEN.findall(text):
        if tok[0].isdigit():
            words.extend(_number_token(tok))
            continue
        if tok.endswith("'s"):
            tok = tok[:-2]
        elif tok.endswith("s'"):
            tok = tok[:-1]
        words.append(tok)
    return tuple(_fold_numbers(words))


def tokens(text: str) -> list[str]:
    """The text's tokens (see the module docstring): lower-case words, normalised numbers, CJK characters."""
    return list(_tokens(text or ""))


def is_number(token: str) -> bool:
    """A digit token (a number or a digit ordinal)."""
    return token[:1].isdigit()


# -- stems --------------------------------------------------------------------------------------

_IRREGULAR = dict(pair.split(":") for pair in """ran:run made:make took:take taken:take gave:give given:give
went:go gone:go came:come grew:grow grown:grow found:find built:build led:lead held:hold kept:keep left:leave
lay:lie lain:lie laid:lay lost:lose got:get brought:bring thought:think taught:teach sold:sell told:tell said:say
saw:see seen:see knew:know known:know began:begin begun:begin fell:fall fallen:fall felt:feel rose:rise
risen:rise spoke:speak spoken:speak wrote:write written:write drove:drive driven:drive ate:eat eaten:eat fed:feed
bred:breed sent:send spent:spend struck:strike threw:throw thrown:throw wore:wear worn:wear won:win became:become
meant:mean paid:pay froze:freeze frozen:freeze shone:shine stood:stand understood:understand dug:dig hung:hang
fought:fight caught:catch bought:buy sought:seek flew:fly flown:fly hid:hide hidden:hide shot:shoot slept:sleep
fled:flee met:meet sat:sit stole:steal stolen:steal swam:swim sang:sing sung:sing rang:ring rung:ring
broke:break broken:break chose:choose chosen:choose forgot:forget forgotten:forget woke:wake woken:wake
men:man women:woman children:child feet:foot teeth:tooth mice:mouse geese:goose people:person""".split())


@lru_cache(maxsize=1 << 16)
def stem(word: str) -> str:
    """A word's stem: irregular forms first ("went" -> "go"), then Snowball English (Porter2).

    Numbers, CJK characters and words of three letters or fewer are kept as they are.
    """
    word = _IRREGULAR.get(word, word)
    if len(word) <= 3 or not word.isalpha() or CJK_RE.match(word):
        return word
    return _porter2(word)



def crude_stem(word: str, suffixes: tuple[str, ...] = ("ing", "es", "ed", "s"), keep_ss: bool = False) -> str:
    """The offline generators' stem: the first of ``suffixes`` the word ends with is cut when at least
    four letters stay ("treating" -> "treat", "doses" -> "dos"); with ``keep_ss`` a word in "-ss" keeps it."""
    if keep_ss and word.endswith("ss"):
        return word
    for suffix in suffixes:
        if len(word) > len(suffix) + 3 and word.endswith(suffix):
            return word[: -len(suffix)]
    return word


# -- content words ------------------------------------------------------------------------------

@lru_cache(maxsize=1 << 14)
def _content_stems(text: str) -> tuple[str, ...]:
    return tuple(stem(t) for t in _tokens(text) if t not in STOPWORDS and not is_negation(t))


def content_stems(text: str) -> list[str]:
    """The text's content words, stemmed, in order (stop words and negations removed)."""
    return list(_content_stems(text or ""))


_RUNS_ON = frozenset(_NUMBER_WORD | set(_SCALES) | set(_ORDINAL_UNITS) | set(_ORDINAL_TENS)
                     | set(_ORDINAL_SCALES) | {"and", "oh", "per"})
"""Tokens a reading may continue past: a number spelt in words ("… one" "hundred …", "two hundred and" "fifty"),
a year read in pairs ("nineteen oh" "eight"), "per" "cent"; a digit token too ("1.5" "million")."""


@lru_cache(maxsize=1 << 14)
def runs_on(text: str) -> bool | None:
    """Whether the tokens of ``text`` followed by a space and another text may differ from its own tokens and
    the other's: its last token (as :func:`_tokens` reads it, before numbers are folded) is one a number or
    "per cent" may continue past. None when ``text`` has no token (the text before it decides)."""
    tokens = _TOKEN.findall(normalize(text).lower())
    if not tokens:
        return None
    last = tokens[-1]
    return last[:1].isdigit() or last in _RUNS_ON


def content_words(text: str) -> list[str]:
    """The text's content words, lower case and unstemmed, in order (stop words and negations removed)."""
    return [t for t in _tokens(text or "") if t not in STOPWORDS and not is_negation(t)]



QUESTION_WORD_RE = re.compile(rf"[{HAN}]|[A-Za-z0-9][A-Za-z0-9'\-]*")
"""A word of the offline question generator: an ideograph, or letters and digits with inner ' and -."""
TOPIC_WORD_RE = re.compile(rf"[A-Za-z][A-Za-z'\-]+|\d+(?:[.,]\d+)?|[{HAN}]")
"""A word of the offline bench generator: two letters or more, a number, or an ideograph."""


def question_words(text: str) -> set[str]:
    """The offline question generator's content words: lower-cased, :data:`engine.text.lexicon.QUESTION_STOPWORDS`
    out, :func:`crude_stem` (-ing, -es, -ed, -s); CJK characters singly."""
    out = set()
    for w in QUESTION_WORD_RE.findall(text or ""):
        w = w.lower()
        if w in QUESTION_STOPWORDS:
            continue
        out.add(crude_stem(w))
    return out


def topic_words(text: str) -> set[str]:
    """The offline bench generator's content words: lower-cased, :data:`engine.text.lexicon.BENCH_STOPWORDS`
    out, a plural -s stripped (:func:`crude_stem`, "-ss" kept); CJK characters singly."""
    out = set()
    for w in TOPIC_WORD_RE.findall(text):
        w = w.lower()
        if w in BENCH_STOPWORDS:
            continue
        out.add(crude_stem(w, ("s",), keep_ss=True))
    return out


WORD_RE = re.compile(rf"(?:(?!{CJK_HANGUL_CHAR})\w)+(?:['’.\-](?:(?!{CJK_HANGUL_CHAR})\w)+)*")
"""The knowledge base's word for Latin-like scripts: letters/digits with inner apostrophes, hyphens or dots
("O2", "Earth's", "non-metal", "U.S"), never holding a CJK or Hangul character."""
