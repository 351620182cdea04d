"""Numbers in text: number words of any size, ordinals, Chinese numerals.

The one reader of spelled-out numbers (:func:`read_number`): the judges' tokens (:mod:`engine.text.tokens`)
and the gold judge's own tokens fold number words with it; :data:`NUMBER_WORDS_PATTERN` is the pattern of
the number words the offline question generator recognises in an age or an amount.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

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



AMOUNT_WORDS = tuple([w for w, v in _UNITS.items() if 1 <= v <= 12 or v == 15]
                     + [w for w, v in _TENS.items() if v <= 50] + ["hundred"])
"""The number words the offline question generator recognises in an age or an amount ("the ages of
twelve", "two to three days"): one to twelve, fifteen, the tens to fifty, hundred."""
NUMBER_WORDS_PATTERN = "(?:" + "|".join(AMOUNT_WORDS) + ")"
""":data:`AMOUNT_WORDS` as a regular-expression group."""
