"""The text rules every offline judge shares: tokens, stems, stop words, numbers, negation, sentences.

One module so that the gold-answer judge, the free-text judge (:mod:`engine.judge.freetext`) and the
offline kernel (:mod:`engine.judge.offline`) read a text the same way.

- **Tokens** (:func:`tokens`): NFKC, lower case; words (an apostrophe inside a word kept, a final
  "'s" dropped), numbers and CJK characters one token each. Numbers are normalised: thousands
  separators go ("1,000" -> 1000), decimal points stay ("3.5"), "90%" / "90 per cent" -> 90 percent,
  number words of any size become digits ("two hundred and fifty-three thousand" -> 253000, "1.5
  million" -> 1500000), ordinals become digit ordinals ("first", "1st" -> 1st; "twenty-first" ->
  21st), Chinese numerals become digits ("一千八百" -> 1800, "百分之九十" -> 90 percent).
- **Stems** (:func:`stem`): the Snowball English (Porter2) stemmer of ``whoosh`` (a dependency
  already), after a table of common irregular forms ("went" -> go, "children" -> child).
- **Stop words** (:data:`STOPWORDS`): function words and answer scaffolding ("I think", "the answer
  is"); negations are kept apart (:data:`NEGATIONS`) because they set polarity.
- **Sentences** (:func:`split_sentences`): at . ! ? followed by a space, after 。！？ and at line breaks,
  but not after an abbreviation ("Dr.", "Mr.", "St.", "No. 1", "e.g."), an initial ("J. R. R.
  Tolkien") or a dotted acronym ("U.S.", "a.m.").
- **Clauses and negation scope** (:func:`clause_parts`, :func:`scoped_clauses`,
  :func:`negation_scopes`): a negation reaches from its word to the end of the sentence, or to the
  next ";" or but/rather/instead/however/though/yet (但/而/却); the words of its own clause before
  it (the subject: "Tim Farron has said he does ...") are outside its scope; a clause that is only
  "No"/"Nope"/"不" is an interjection and negates nothing; a later clause that opens with the negation
  ("Liquid oxygen, not nitrogen, is blue") is an aside that negates only itself; "No. 1" and "no
  one"/"nobody" as a subject are handled as words, not as a denial of what follows them.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache

from whoosh.lang.porter2 import stem as _porter2

CJK = "\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff"
"""The CJK ranges (kana, CJK ideographs, compatibility ideographs): one character is one token."""
CJK_CHAR = re.compile(f"[{CJK}]")

# -- numbers ------------------------------------------------------------------------------------

_UNITS = {w: i for i, w in enumerate(
    "zero one two three four five six seven eight nine ten eleven twelve thirteen fourteen fifteen sixteen "
    "seventeen eighteen nineteen".split())}
_TENS = {w: 10 * i for i, w in enumerate("_ _ twenty thirty forty fifty sixty seventy eighty ninety".split()) if i >= 2}
_SCALES = {"hundred": 100, "thousand": 1_000, "million": 1_000_000, "billion": 1_000_000_000,
           "trillion": 1_000_000_000_000}
_ORDINAL_UNITS = {w: i for i, w in enumerate(
    "zeroth first second third fourth fifth sixth seventh eighth ninth tenth eleventh twelfth thirteenth "
    "fourteenth fifteenth sixteenth seventeenth eighteenth nineteenth".split()) if i}
_ORDINAL_TENS = {w: 10 * i for i, w in enumerate(
    "_ _ twentieth thirtieth fortieth fiftieth sixtieth seventieth eightieth ninetieth".split()) if i >= 2}
_ORDINAL_SCALES = {"hundredth": 100, "thousandth": 1_000, "millionth": 1_000_000}
_NUMBER_WORD = set(_UNITS) | set(_TENS)


def ordinal(n: int) -> str:
    """The digit ordinal of ``n``: 1 -> "1st", 2 -> "2nd", 11 -> "11th", 23 -> "23rd"."""
    if n % 100 in (11, 12, 13):
        return f"{n}th"
    return f"{n}{ {1: 'st', 2: 'nd', 3: 'rd'}.get(n % 10, 'th')}"


def _fmt_number(value: float) -> str:
    return str(int(value)) if float(value).is_integer() else f"{value:.6f}".rstrip("0").rstrip(".")


_ZH_DIGITS = {"零": 0, "〇": 0, "一": 1, "二": 2, "两": 2, "三": 3, "四": 4, "五": 5, "六": 6, "七": 7, "八": 8,
              "九": 9}
_ZH_UNITS = {"十": 10, "百": 100, "千": 1000, "万": 10_000, "亿": 100_000_000}
_ZH_NUMERAL = re.compile("百分之([零〇一二两三四五六七八九十百千万亿]+)|([零〇一二两三四五六七八九十百千万亿]{2,}|[二两三四五六七八九十])")


def _zh_value(text: str) -> int:
    total, section, digit = 0, 0, 0
    for ch in text:
        if ch in _ZH_DIGITS:
            digit = _ZH_DIGITS[ch]
        else:
            unit = _ZH_UNITS[ch]
            if unit >= 10_000:
                total += (section + digit) * unit
                section = 0
            else:
                section += (digit or 1) * unit
            digit = 0
    return total + section + digit


def chinese_numerals_to_digits(text: str) -> str:
    """Chinese numerals as digits: "一千八百只" -> " 1800 只", "百分之九十九" -> " 99 percent".

    A lone 一 stays (it is mostly "one"/"a" in words such as 一些, 一样).
    """
    def repl(m: re.Match) -> str:
        if m.group(1):
            return f" {_zh_value(m.group(1))} percent "
        return f" {_zh_value(m.group(2))} "

    return _ZH_NUMERAL.sub(repl, text or "")


def scale_of(word: str) -> int | None:
    """The value of a scale word ("hundred" 100, "billion" 10**9), else None."""
    return _SCALES.get(word)


def is_number_word(word: str) -> bool:
    """A word that can open a spelled-out number ("seven", "twenty", "first", "hundredth", "hundred")."""
    return word in _NUMBER_WORD or word in _ORDINAL_UNITS or word in _ORDINAL_TENS or word in _SCALES \
        or word in _ORDINAL_SCALES


def _pair(words: Sequence[str], j: int) -> tuple[int, int] | None:
    """The second half of a year read in pairs, at ``words[j]``: (10..99, index after it), or None
    ("sixty four" in "eighteen sixty four", "oh eight" in "nineteen oh eight", "twelve" in "twenty twelve")."""
    t = words[j]
    nxt = words[j + 1] if j + 1 < len(words) else ""
    if t == "oh" and nxt in _UNITS and 1 <= _UNITS[nxt] <= 9:
        return _UNITS[nxt], j + 2
    if t in _UNITS and _UNITS[t] >= 10:
        return _UNITS[t], j + 1
    if t in _TENS:
        if nxt in _UNITS and 1 <= _UNITS[nxt] <= 9:
            return _TENS[t] + _UNITS[nxt], j + 2
        return _TENS[t], j + 1
    return None


def read_number(words: Sequence[str], i: int, lone_scale: bool = False) -> tuple[int, int, bool] | None:
    """The number spelled by the words from ``words[i]`` (hyphens already split): (value, index after
    it, is an ordinal), or None. The one reader of number words in judging (the gold judge and the
    free-text judge both use it).

    Units, tens and scales of any size ("one hundred sixty three" 163, "two thousand and five" 2005:
    "and" only after a scale word), ordinals ("first" 1, "twenty first" 21, "two hundredth" 200), and
    a year read in pairs ("eighteen sixty four" 1864, "nineteen ninety" 1990, "nineteen oh eight"
    1908). A scale word alone ("hundred" after a dropped "a") is a number only with ``lone_scale``.
    """
    total = current = 0
    j, seen = i, False
    while j < len(words):
        t = words[j]
        low = current % 100
        if j == i + 1 and total == 0 and 10 <= current <= 99 and t not in _SCALES and t not in _ORDINAL_SCALES:
            pair = _pair(words, j)
            if pair is not None and (pair[0] >= 10 or t == "oh"):
                return current * 100 + pair[0], pair[1], False  # a year read in pairs
        if t in _UNITS and (low == 0 or (_UNITS[t] < 10 and low >= 20 and low % 10 == 0)):
            current += _UNITS[t]
        elif t in _TENS and low == 0:
            current += _TENS[t]
        elif t in _SCALES and (seen or lone_scale):
            if _SCALES[t] == 100:
                current = (current or 1) * 100
            else:
                total, current = total + (current or 1) * _SCALES[t], 0
        elif t in _ORDINAL_UNITS or t in _ORDINAL_TENS or (t in _ORDINAL_SCALES and (seen or lone_scale)):
            if t in _ORDINAL_SCALES:
                return (total + (current or 1) * _ORDINAL_SCALES[t], j + 1, True)
            if (_ORDINAL_UNITS.get(t, 10) < 10 and low % 10 == 0) or low == 0:
                return (total + current + (_ORDINAL_UNITS.get(t) or _ORDINAL_TENS[t]), j + 1, True)
            break
        elif t == "and" and seen and words[j - 1] in _SCALES and j + 1 < len(words) \
                and (words[j + 1] in _UNITS or words[j + 1] in _TENS):
            pass  # "two hundred and fifty"
        else:
            break
        seen = True
        j += 1
    return (total + current, j, False) if seen else None


def _fold_numbers(words: list[str]) -> list[str]:
    """Number words and digit-scale pairs as one digit token; ordinals as digit ordinals.

    "two hundred and fifty" -> 250, "twenty one" (a hyphen is split before) -> 21, "1.5 million" ->
    1500000, "twenty first" -> 21st, "first" -> 1st. Plural scales ("thousands") are not numbers.
    """
    out: list[str] = []
    i = 0
    while i < len(words):
        w = words[i]
        if w[:1].isdigit() and i + 1 < len(words) and words[i + 1] in _SCALES and _is_plain_number(w):
            out.append(_fmt_number(float(w) * _SCALES[words[i + 1]]))
            i += 2
            continue
        if w in _ORDINAL_SCALES:
            out.append(ordinal(_ORDINAL_SCALES[w]))
            i += 1
            continue
        run = read_number(words, i) if (w in _NUMBER_WORD or w in _ORDINAL_UNITS or w in _ORDINAL_TENS) else None
        if run is None:
            out.append(w)
            i += 1
            continue
        value, i, is_ordinal = run
        out.append(ordinal(value) if is_ordinal else _fmt_number(value))
    return out


def _is_plain_number(token: str) -> bool:
    try:
        float(token)
    except ValueError:
        return False
    return True


# -- tokens -------------------------------------------------------------------------------------

_TOKEN = re.compile(rf"[{CJK}]|\d+(?:[.,]\d+)*(?:st|nd|rd|th)?%?|[^\W\d_]+(?:['’][^\W\d_]+)*", re.UNICODE)
_THOUSANDS = re.compile(r"^\d{1,3}(?:,\d{3})+(?:\.\d+)?$")
_PER_CENT = re.compile(r"\bper\s+cent\b", re.IGNORECASE)


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
    return [tok, "percent"] if percent else [tok]


@lru_cache(maxsize=1 << 14)
def _tokens(text: str) -> tuple[str, ...]:
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


# -- stems and stop words -----------------------------------------------------------------------

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
    if len(word) <= 3 or not word.isalpha() or CJK_CHAR.match(word):
        return word
    return _porter2(word)


STOPWORDS = frozenset("""
a an the and or but if of to in on at by for with from as into onto about over under than then so such that this
these those there here it its itself they them their theirs he him his she her hers we us our you your i me my
is are was were be been being am do does did done has have had having can could should would may might will shall
must also just only very quite really simply some any each all both other another which who whom whose what when
where why how yes well okay ok sure certainly definitely probably perhaps maybe think believe guess say says said
know answer question correct correctly right exactly approximately roughly around nearly about called named known
up down out off again further once more most much many few less least own same too s t d ll m o re ve y
because since although though while whereas unless until whether
i'm i've i'd it's that's what's there's here's they're you're we're he's she's let's
的 了 是 在 和 与 及 或 吗 呢 吧 啊 个 也 都 就 它 他 她 们 这 那 有 为 要 会 能 很 把 被 让 使 着 过 地 得 之 其 所
""".split())
"""Words that carry no fact: function words and answer scaffolding (negations are not here: they set polarity)."""

NEGATIONS = frozenset("""not no never none neither nor nothing nobody nowhere cannot can't don't doesn't didn't
isn't aren't wasn't weren't won't wouldn't shouldn't couldn't hasn't haven't hadn't ain't n't""".split())
"""Words that negate what follows them (English)."""
DENIALS = frozenset("false untrue myth misconception".split())
"""Words that deny a statement they describe ("it is a myth that ...", "that is false")."""
NEGATION_CJK = re.compile("不|没|并非|未|無|无")
"""Chinese negation characters."""


def is_negation(token: str) -> bool:
    """A negation or denial word (:data:`NEGATIONS`, :data:`DENIALS`) or a Chinese negation."""
    return token in NEGATIONS or token in DENIALS or bool(NEGATION_CJK.fullmatch(token))


@lru_cache(maxsize=1 << 14)
def _content_stems(text: str) -> tuple[str, ...]:
    return tuple(stem(t) for t in _tokens(text) if t not in STOPWORDS and not is_negation(t))


def content_stems(text: str) -> list[str]:
    """The text's content words, stemmed, in order (stop words and negations removed)."""
    return list(_content_stems(text or ""))


def content_words(text: str) -> list[str]:
    """The text's content words, lower case and unstemmed, in order (stop words and negations removed)."""
    return [t for t in _tokens(text or "") if t not in STOPWORDS and not is_negation(t)]


# -- sentences ----------------------------------------------------------------------------------

ABBREVIATIONS = frozenset("""mr mrs ms dr prof sr jr st mt ft rev gen col lt sgt capt cmdr adm gov sen rep pres
supt insp det cpl pvt maj brig hon messrs mme mlle
inc ltd co corp bros dept univ assn est approx vs etc al cf ca fig figs vol vols ed eds no nos op pp
jan feb mar apr jun jul aug sep sept oct nov dec mon tue tues wed thu thur thurs fri sat sun""".split())
"""Words that end in a dot without ending a sentence (lower case, without the dot)."""
_ONLY_BEFORE_NUMBER = frozenset({"no", "nos", "op", "pp", "fig", "figs", "vol", "vols", "mar", "sun", "sat"})
_SENTENCE_END = re.compile(r"[.!?]+['\")\]]*\s+|[。！？]+|\n+")
_LAST_WORD = re.compile(r"([^\W\d_]+(?:\.[^\W\d_]+)*)\.$", re.UNICODE)


def _ends_sentence(before: str, after: str) -> bool:
    """Whether a dot that ends ``before`` (followed by ``after``) ends the sentence."""
    m = _LAST_WORD.search(before)
    if not m:
        return True
    word = m.group(1)
    low = word.lower()
    if "." in word:  # U.S., e.g., a.m., J.R.R.
        return False
    if len(word) == 1 and word.isupper():  # an initial: "J. R. R. Tolkien", "Plan B." is rarer
        return False
    if low in ABBREVIATIONS:
        if low in _ONLY_BEFORE_NUMBER:
            return not after[:1].isdigit()
        return False
    return True


@lru_cache(maxsize=1 << 14)
def _split_sentences(text: str) -> tuple[str, ...]:
    out: list[str] = []
    start = 0
    for m in _SENTENCE_END.finditer(text):
        end = m.end()
        piece = text[start:m.start() + len(m.group().rstrip())]
        if m.group()[0] == "." and "\n" not in m.group() and not _ends_sentence(
                text[start:m.start() + 1].rstrip("'\")]"), text[end:]):
            continue
        if piece.strip():
            out.append(piece.strip())
        start = end
    if text[start:].strip():
        out.append(text[start:].strip())
    return tuple(out)


def split_sentences(text: str) -> list[str]:
    """A text's sentences, stripped (see the module docstring for where it splits)."""
    return list(_split_sentences(text or ""))


# -- clauses and negation scope -----------------------------------------------------------------

_CLAUSE_SPLIT = re.compile(
    r"(,(?=\s|$)|[;:](?=\s|$)|[()\[\]—，；：、（）]|\s[-–]\s|"
    r"\s(?=(?:but|although|though|whereas|while|because|which)\b))", re.IGNORECASE)
_SCOPE_END = re.compile(r"^\s*(?:but|rather|instead|however|though|although|yet|whereas)\b|^\s*(?:但|而|却|可是)",
                        re.IGNORECASE)
_INTERJECTION = frozenset({"no", "nope", "nah", "不", "不是"})


def clause_parts(sentence: str) -> list[tuple[str, str]]:
    """A sentence's clauses, each with the delimiter before it ("" for the first, ",", ";", "(", ...).

    Splits at ", " "; " ": " ( ) [ ] — " - " " – " and the CJK forms, and before but/although/though/
    whereas/while/because/which; "1,000", "30–60%" and "MHC:antigen" do not split. Clauses without
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
        if tok in NEGATIONS or tok in DENIALS or tok.endswith("n't"):
            return m.start()
        if NEGATION_CJK.search(tok):
            return m.start() + NEGATION_CJK.search(tok).start()
    return None


@lru_cache(maxsize=1 << 14)
def _scoped(sentence: str) -> tuple[Clause, ...]:
    out: list[Clause] = []
    scope = False
    for text, delim in clause_parts(sentence) or [(sentence, "")]:
        words = tokens(text)
        if delim.strip() == ";" or _SCOPE_END.match(text):
            scope = False
        at = _negation_at(text, words)
        own = at is not None
        interjection = bool(words) and all(t in _INTERJECTION for t in words)
        aside = bool(out) and own and text[: at or 0].strip() == ""  # "X, not Y, is Z"
        head = ""
        if own and not interjection and not aside and not scope:
            head = text[:at].strip()
            scope = True
        negated = (scope or (own and aside)) and not interjection
        out.append(Clause(text, negated, head if negated else ""))
    return tuple(out)


def scoped_clauses(sentence: str) -> list[Clause]:
    """A sentence's clauses with negation scope (see the module docstring)."""
    return list(_scoped(sentence or ""))


def negation_scopes(sentence: str) -> list[tuple[str, bool]]:
    """A sentence's clauses, each with whether it lies in a negation's scope (:func:`scoped_clauses`)."""
    return [(c.text, c.negated) for c in _scoped(sentence or "")]
