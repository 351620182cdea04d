"""Answer-text helpers kept for their callers, and the public names of the answer judges.

- The gold-answer judge lives in :mod:`engine.judge.gold_match` (:func:`judge_gold`, developed on
  human labels); multiple-choice extraction in :mod:`engine.judge.choice`. Both are re-exported here.
- SQuAD's official metrics: :func:`normalize_answer`, :func:`exact_match`, :func:`token_f1`.
- Sentence, clause and negation-scope helpers used by the free-text judge (:func:`split_sentences`,
  :func:`clause_parts`, :func:`negation_scopes`) and Chinese numerals as digits.
"""

from __future__ import annotations

import re
import string
import unicodedata
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass

from engine.judge.choice import (  # noqa: F401  (re-exported)
    ChoiceVerdict,
    choice_question,
    extract_choice,
    format_options,
    judge_choice,
)
from engine.judge.gold_match import GOLD_F1_THRESHOLD, GoldVerdict, judge_gold  # noqa: F401  (re-exported)

_CJK = "\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff"
_CJK_CHAR = re.compile(f"([{_CJK}])")
_ARTICLES = re.compile(r"\b(a|an|the)\b", re.UNICODE)
_NUMBER_WORDS = {"zero": "0", "two": "2", "three": "3", "four": "4", "five": "5", "six": "6", "seven": "7",
                 "eight": "8", "nine": "9", "ten": "10", "eleven": "11", "twelve": "12"}
_NUMBER = re.compile(r"^\d+$")


def _is_punct(ch: str) -> bool:
    return ch in string.punctuation or unicodedata.category(ch).startswith("P")


def normalize_answer(text: str) -> str:
    """SQuAD's official answer normalisation, Unicode-aware.

    NFKC, lower-case, punctuation deleted (ASCII and Unicode), articles a/an/the removed, CJK
    characters spaced apart (one token each), whitespace collapsed.
    """
    text = unicodedata.normalize("NFKC", text or "").lower()
    text = "".join(ch for ch in text if not _is_punct(ch))
    text = _ARTICLES.sub(" ", text)
    text = _CJK_CHAR.sub(r" \1 ", text)
    return " ".join(text.split())


def answer_tokens(text: str) -> list[str]:
    """The tokens of :func:`normalize_answer` (CJK characters one token each)."""
    return normalize_answer(text).split()


def exact_match(prediction: str, gold: str) -> float:
    """SQuAD exact match: 1.0 when the normalised strings are equal, else 0.0."""
    return float(normalize_answer(prediction) == normalize_answer(gold))


def _f1(pred: Sequence[str], gold: Sequence[str]) -> float:
    if not pred or not gold:
        return float(list(pred) == list(gold))
    common = Counter(pred) & Counter(gold)
    same = sum(common.values())
    if same == 0:
        return 0.0
    precision, recall = same / len(pred), same / len(gold)
    return 2 * precision * recall / (precision + recall)


def token_f1(prediction: str, gold: str) -> float:
    """SQuAD token F1 of the normalised strings (1.0 when both are empty, 0.0 when one is)."""
    return _f1(answer_tokens(prediction), answer_tokens(gold))


# -- Chinese numerals ----------------------------------------------------------------------------

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


# -- judging a reply against gold answers --------------------------------------------------------

FILLER = frozenset("""
and or but if of to in on at by for with from as into onto about over under than then so such that this these
those there here it its itself they them their he she his her we us our you your i me my mine im ive id
is are was were be been being am do does did has have had having can could should would may might will shall
must also just only very quite really simply some any each all both other another which who whom whose what
when where why how yes well okay ok sure certainly definitely probably perhaps maybe think believe guess
say said know answer answers answered question correct correctly right exactly approximately roughly around
nearly called named known thats whats theres heres theyre youre
的 了 是 在 和 与 及 或 吗 呢 吧 啊 个 也 都 就 它 他 她 们 这 那 有 为
""".split())
"""Words that carry no answer: removed from a candidate before its focused F1 (unless a gold word)."""

_NEGATION_WORDS = frozenset("""not no never none neither nor nothing nobody nowhere cannot cant dont doesnt didnt
isnt arent wasnt werent wont wouldnt shouldnt couldnt hasnt havent hadnt aint wrong false incorrect untrue myth
misconception""".split())
_NEGATION_CJK = re.compile("不|没|并非|未|無|无")
_INTERJECTION = frozenset({"no", "nope", "nah", "不", "不是"})
_SCOPE_END = re.compile(r"^\s*(?:but|rather|instead|however|though|although|yet|whereas)\b|^\s*(?:但|而|却|可是)",
                        re.IGNORECASE)
_ALTERNATIVE = re.compile(r"\b(?:or|either)\b|或者|或|还是", re.IGNORECASE)
_HEDGE = re.compile(r"\b(?:maybe|perhaps|possibly)\b|也许|可能", re.IGNORECASE)
_SENTENCE_SPLIT = re.compile(r"(?<=[.!?])\s+|(?<=[。！？])|\n+")
_CLAUSE_SPLIT = re.compile(
    r"(,(?=\s|$)|[;:](?=\s|$)|[()\[\]—，；：、（）]|\s[-–]\s|"
    r"\s(?=(?:but|although|though|whereas|while|because|which)\b))", re.IGNORECASE)
_CONCLUSION = re.compile(
    r"^\W*(?:so|therefore|thus|hence|overall|in short|in summary|in conclusion|to sum(?:marise|marize)? up|"
    r"(?:the |my )?(?:final |short |correct )?answer)\b|\bthe (?:final |short |correct )?answer is\b|^\W*(?:所以|因此|答案)",
    re.IGNORECASE)


def _stem(token: str) -> str:
    if len(token) > 3 and token.endswith("ies"):
        return token[:-3] + "y"
    if len(token) > 3 and token.endswith("s") and not token.endswith("ss"):
        return token[:-1]
    return token


_RANGE = re.compile(r"(?<=\d)(\s*%?\s*)[-–—/](?=\s*\d)")


def _judge_tokens(text: str) -> list[str]:
    """Tokens for judging: a range's ends stay two numbers ("30–60%" -> 30 60), digits for number words."""
    text = _RANGE.sub(r"\1 ", chinese_numerals_to_digits(text or ""))
    return [_NUMBER_WORDS.get(t, t) for t in answer_tokens(text)]


def split_sentences(text: str) -> list[str]:
    """Sentences of a reply (at . ! ? followed by space, after 。！？, and at line breaks), stripped."""
    return [s.strip() for s in _SENTENCE_SPLIT.split(text or "") if s and s.strip()]


def _split_clauses(sentence: str) -> list[tuple[str, str]]:
    """(clause, the delimiter before it) pairs; clauses without words are dropped."""
    parts = _CLAUSE_SPLIT.split(sentence or "")
    out, delim = [], ""
    for i, part in enumerate(parts):
        if i % 2:
            delim = part
            continue
        if part and part.strip(" \t.!?。！？"):
            out.append((part.strip(), delim))
    return out


def clause_parts(sentence: str) -> list[tuple[str, str]]:
    """A sentence's clauses, each with the delimiter before it ("" for the first, ",", ";", "(", ...).

    Splits at ", " "; " ": " ( ) [ ] — " - " " – " and the CJK forms, and before but/although/though/
    whereas/while/because/which; "1,000", "30–60%" and "MHC:antigen" do not split.
    """
    return _split_clauses(sentence)


def split_clauses(sentence: str) -> list[str]:
    """Clauses of a sentence (the splits of :func:`clause_parts`)."""
    return [c for c, _ in _split_clauses(sentence)]


@dataclass
class _Clause:
    text: str
    tokens: list[str]
    negated: bool  # the clause lies in a negation's scope
    sentence: str  # the sentence's judge tokens, joined by spaces
    alternative: bool  # the sentence has an alternative marker (or, either, 或, two hedges)


def _sentence_clauses(sentence: str) -> list[_Clause]:
    """The sentence's clauses with negation scope and the sentence's alternatives marked."""
    alternative = bool(_ALTERNATIVE.search(sentence)) or len(_HEDGE.findall(sentence)) >= 2
    joined = " ".join(_judge_tokens(sentence))
    out: list[_Clause] = []
    scope = False
    for text, delim in _split_clauses(sentence) or [(sentence, "")]:
        tokens = _judge_tokens(text)
        if delim.strip() == ";" or _SCOPE_END.match(text):
            scope = False
        own = (bool(_NEGATION_WORDS.intersection(tokens)) or bool(_NEGATION_CJK.search(text)))
        interjection = bool(tokens) and all(t in _INTERJECTION for t in tokens)
        aside = bool(out) and bool(tokens) and tokens[0] in _NEGATION_WORDS  # "X, not Y, is Z"
        if own and not interjection and not aside:
            scope = True
        out.append(_Clause(text, tokens, (scope or (own and aside)) and not interjection, joined, alternative))
    return out


def negation_scopes(sentence: str) -> list[tuple[str, bool]]:
    """A sentence's clauses, each with whether it lies in a negation's scope.

    A negation (not, never, no, none, neither, n't, wrong, false, 不/没/并非/未) reaches from its
    clause to the end of the sentence, or to the next ";" or but/rather/instead/however/though/yet
    (但/而/却); a clause that is only "No"/"Nope"/"不" is an interjection and negates nothing, and a
    later clause that opens with the negation ("Liquid oxygen, not nitrogen, is blue"; "It's 8, not
    16") is an aside that negates only itself.
    """
    return [(c.text, c.negated) for c in _sentence_clauses(sentence)]


def _short(text: str, limit: int = 80) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 3] + "..."


