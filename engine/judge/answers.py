"""Gold-answer judging: SQuAD-normalised exact match and token F1, and multiple-choice extraction.

A criterion that carries gold ``answers`` (a SQuAD span, a MedQA option, an imported reference) is
judged against the target's reply *to the question that carries it*, with the rules below. Every
verdict is reproducible and comes with a one-line rationale.

Normalisation (:func:`normalize_answer`) is SQuAD's official one (lower-case, punctuation deleted,
the articles a/an/the removed, whitespace collapsed) after Unicode NFKC, with two additions: Unicode
punctuation (``，。“”–``) is deleted like ASCII punctuation, and each CJK character is a token of its
own. Deleting punctuation makes "1,000" and "1000" equal; "760" and "seven hundred sixty" stay
different. For judging (not for :func:`exact_match`/:func:`token_f1`), the number words zero and
two to twelve and Chinese numerals ("一千八百", "百分之九十九") are read as digits.

Crediting rule of :func:`judge_gold` (``met``):

1. The reply is split into sentences, and each sentence into clauses (at ", " "; " ": " ( ) — " – "
   and before but/although/though/whereas/while/because/which; "1,000", "30–60%", "MHC:antigen"
   stay whole). Candidates are the clauses, the sentences and,
   when every sentence is read, the whole reply.
2. Only the reply's *answer region* is read: its first sentence, the sentences that begin within its
   first :data:`LEAD_WORDS` words (so a short preamble such as "Good question." does not hide the
   answer; a sentence with no word beyond the question's and filler, such as the question restated
   or "Yes, I am sure.", uses up none of them), and any sentence that opens with a conclusion ("So", "Therefore", "In short", "The answer
   is", ...). An answer stated up front with elaboration after it counts; a pasted paragraph that
   holds the gold in a later sentence does not.
3. A candidate's *focused F1* against a gold answer is SQuAD's token F1 after removing filler words
   (function words, "answer", "think", ...) and the words of the question, from both the candidate
   and the gold (a gold word that is also in the question is given, not answered; when every gold
   word is in the question, the gold is kept whole and nothing is discounted, since an echo of the
   question would hold the gold too). Ranges keep both ends ("30–60%" is 30 and 60). So "The peaks are at 687 and 760 nm." for "At
   what wavelengths does the fluorescence peak?" scores like "687 and 760 nm" (1.0), "liver cells"
   for "Which cells ...?" (gold "beta cells") scores 0, a clause that holds a one-word gold among
   more than two new words scores below the threshold, and echoing the question scores 0.
4. A candidate is not eligible when the gold sits in a negated stretch (not, never, no, none,
   neither, n't, wrong, false, 不/没/并非/未; a negation reaches to the end of its sentence or to the
   next ";" or but/rather/instead/however, a lone "No," is an interjection, and a later clause
   opening with the negation, ", not 16", is an aside), when its sentence
   offers alternatives the gold does not ("A or B", "either", "maybe A, maybe B"), or, for a gold
   answer with numbers, when its own numbers differ from the gold's (both without the question's
   numbers: "760 nm" for "687 and 760 nm", "1914 or 1918").
5. ``met`` iff some eligible candidate reaches focused F1 >= :data:`GOLD_F1_THRESHOLD` against some
   gold answer. ``em`` and ``f1`` in the verdict are SQuAD's exact match of the whole reply and the
   best eligible focused F1.

Multiple choice: :func:`format_options` shows options to the target, :func:`extract_choice` reads the
chosen option back (see its docstring for the rules), :func:`judge_choice` compares it with the gold.
"""

from __future__ import annotations

import re
import string
import unicodedata
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

GOLD_F1_THRESHOLD = 0.6
"""A candidate clause/sentence is credited at focused token F1 >= this against a gold answer.

With all g gold words present, a candidate of m focused words scores 2g/(g+m): a one-word gold may
sit among two new words (0.67), a two-word gold among four. Half of a two-word gold ("Belize Barrier
Reef" for "Great Barrier Reef", F1 0.5) is another answer, not a partial one, so the line is above
0.5. Checked on the gold rows of ``bench/data/judge_calibration.jsonl`` (tune half).
"""

LEAD_WORDS = 15
"""Sentences that begin within the reply's first ``LEAD_WORDS`` words are in its answer region."""

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


@dataclass(frozen=True)
class GoldVerdict:
    """The verdict on a reply against gold answers.

    Attributes:
        met: the reply is credited (see the module docstring for the rule).
        em: SQuAD exact match of the whole reply against the best gold answer (0.0 or 1.0).
        f1: best focused token F1 of an eligible candidate clause/sentence (0.0 when none).
        best_gold: the gold answer behind ``f1`` (the first gold when nothing matched).
        rationale: one line explaining the verdict.
        span: the candidate clause/sentence behind ``f1`` ("" when none).
    """

    met: bool
    em: float
    f1: float
    best_gold: str
    rationale: str
    span: str = ""


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


def _answer_region(sentences: list[str], question_stems: set[str] | None = None) -> list[int]:
    """Indices of the sentences read: the first, those starting within LEAD_WORDS words, conclusions.

    A sentence that says nothing beyond the question's words and filler (the question restated,
    "Yes, I am sure.") does not use up the lead words: the answer after it is still up front.
    """
    chosen, words = [], 0.0
    q = question_stems or set()
    for i, s in enumerate(sentences):
        if i == 0 or words < LEAD_WORDS or _CONCLUSION.search(s):
            chosen.append(i)
        if any(t not in FILLER and _stem(t) not in q for t in _judge_tokens(s)):
            words += _word_count(s)
    return chosen


def _word_count(text: str) -> float:
    """Words of a text; two CJK characters count as about one word."""
    cjk = len(_CJK_CHAR.findall(text))
    return max(1.0, len(_CJK_CHAR.sub(" ", text).split()) + cjk / 2)


@dataclass
class _Gold:
    text: str
    tokens: list[str]  # focused gold tokens: no filler, no question words (unless nothing else is left)
    words: set[str]
    stems: set[str]
    numbers: Counter
    has_negation: bool
    normalized: str
    given: bool  # every gold word is in the question


def _gold(text: str, question_stems: set[str]) -> _Gold:
    raw = _judge_tokens(text)
    content = [t for t in raw if t not in FILLER] or raw
    focused = [t for t in content if _stem(t) not in question_stems]
    given = not focused
    focused = focused or content
    return _Gold(text, focused, set(focused), {_stem(t) for t in focused},
                 Counter(t for t in raw if _NUMBER.match(t)),
                 bool(_NEGATION_WORDS.intersection(raw)) or bool(_NEGATION_CJK.search(text)),
                 " ".join(raw), given)


def _focused(tokens: list[str], gold: _Gold, question_stems: set[str]) -> list[str]:
    return [t for t in tokens
            if t in gold.words or (t not in FILLER and _stem(t) not in question_stems)]


def judge_gold(reply: str, golds: Sequence[str] | str, question: str = "",
               threshold: float = GOLD_F1_THRESHOLD) -> GoldVerdict:
    """Judge a reply against gold answers (the module docstring states the rule).

    Args:
        reply: the target's reply to the question that carries the criterion.
        golds: the accepted answers (one string or several).
        question: the question asked; words copied from it earn nothing.
        threshold: focused F1 needed for credit (default :data:`GOLD_F1_THRESHOLD`).

    Returns:
        A :class:`GoldVerdict`.

    Raises:
        ValueError: no non-empty gold answer was given.
    """
    if isinstance(golds, str):
        golds = [golds]
    golds = [g for g in golds if g and normalize_answer(g)]
    if not golds:
        raise ValueError("judge_gold needs at least one non-empty gold answer")
    em = max(exact_match(reply or "", g) for g in golds)
    em_gold = next((g for g in golds if exact_match(reply or "", g)), golds[0])
    q_tokens = _judge_tokens(question)
    q_stems = {_stem(t) for t in q_tokens}
    q_numbers = Counter(t for t in q_tokens if _NUMBER.match(t))
    sentences = split_sentences(reply or "")
    if not sentences:
        return GoldVerdict(False, em, 0.0, golds[0], "no reply to judge")
    clauses = [_sentence_clauses(s) for s in sentences]
    region = _answer_region(sentences, q_stems)
    candidates: list[tuple[str, list[_Clause]]] = []
    for i in region:
        if len(clauses[i]) > 1:
            candidates.extend((c.text, [c]) for c in clauses[i])
        candidates.append((sentences[i], clauses[i]))
    if len(region) == len(sentences) and len(sentences) > 1:
        candidates.append((reply.strip(), [c for group in clauses for c in group]))

    best: tuple[float, str, str] = (0.0, golds[0], "")
    blocked: tuple[float, str, str, str] | None = None  # the best candidate a rule refused
    for gold_text in golds:
        gold = _gold(gold_text, q_stems)
        # every gold word in the question: the gold cannot be told from an echo, so no word is discounted
        q_only = set() if gold.given else q_stems - gold.stems
        for text, parts in candidates:
            tokens = parts[0].tokens if len(parts) == 1 else _judge_tokens(text)
            f1 = _f1(_focused(tokens, gold, q_only), gold.tokens)
            if f1 <= 0.0:
                continue
            reason = _refusal(parts, tokens, gold, q_numbers)
            if reason:
                if blocked is None or f1 > blocked[0]:
                    blocked = (f1, gold_text, text, reason)
                continue
            if f1 > best[0]:
                best = (f1, gold_text, text)
    f1, best_gold, span = best
    met = f1 >= threshold
    if met:
        rationale = f'gold "{best_gold}": focused F1 {f1:.2f} >= {threshold:.2f} in "{_short(span)}"'
    elif blocked is not None and blocked[0] >= threshold:
        rationale = f'gold "{blocked[1]}": not credited, {blocked[3]} in "{_short(blocked[2])}"'
    elif len(region) < len(sentences) and _outside_region_hit(sentences, region, golds, q_stems, threshold):
        rationale = ("the gold answer appears only in a later sentence, not in the reply's answer "
                     f"(its first sentence or first {LEAD_WORDS} words) or a conclusion")
    elif blocked is not None and blocked[0] > f1:
        rationale = (f'best focused F1 {blocked[0]:.2f} < {threshold:.2f} (gold "{blocked[1]}", in '
                     f'"{_short(blocked[2])}", where {blocked[3]})')
    else:
        rationale = (f"best focused F1 {f1:.2f} < {threshold:.2f}"
                     + (f' (gold "{best_gold}", in "{_short(span)}")' if span else " (no gold word given)"))
    return GoldVerdict(met, em, round(f1, 4), best_gold if f1 > 0 else em_gold, rationale, span)


def _refusal(parts: list[_Clause], tokens: list[str], gold: _Gold, q_numbers: Counter) -> str:
    """Why a candidate may not be credited ("" when it may)."""
    if not gold.has_negation and any(c.negated and gold.words.intersection(c.tokens) for c in parts):
        return "the gold answer is negated"
    if any(c.alternative and _offers_alternatives(c.sentence, gold) for c in parts):
        return "the sentence offers alternatives"
    wanted = set(gold.numbers) - set(q_numbers)
    if wanted:
        own = set(t for t in tokens if _NUMBER.match(t)) - set(q_numbers)
        if own != wanted:
            return f"numbers {sorted(own) or 'none'} differ from the gold's {sorted(wanted)}"
    return ""


def _offers_alternatives(sentence: str, gold: _Gold) -> bool:
    """The sentence offers alternatives beyond any the gold itself names ("childhood or adolescence")."""
    rest = f" {sentence} ".replace(f" {gold.normalized} ", " ") if gold.normalized else sentence
    return bool(_ALTERNATIVE.search(rest)) or len(_HEDGE.findall(rest)) >= 2


def _outside_region_hit(sentences: list[str], region: list[int], golds: Sequence[str], q_stems: set[str],
                        threshold: float) -> bool:
    for i, s in enumerate(sentences):
        if i in region:
            continue
        for g in golds:
            gold = _gold(g, q_stems)
            q_only = set() if gold.given else q_stems - gold.stems
            for c in _sentence_clauses(s):
                if _f1(_focused(c.tokens, gold, q_only), gold.tokens) >= threshold:
                    return True
    return False


def _short(text: str, limit: int = 80) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 3] + "..."


# -- multiple choice ----------------------------------------------------------------------------


def _as_options(options: Mapping[str, str] | Sequence[str]) -> dict[str, str]:
    if isinstance(options, Mapping):
        out = {str(k).strip(): str(v).strip() for k, v in options.items()}
    else:
        out = {chr(ord("A") + i): str(v).strip() for i, v in enumerate(options)}
    if not out or any(not k for k in out):
        raise ValueError("multiple choice needs at least one option with a non-empty key")
    return out


def format_options(options: Mapping[str, str] | Sequence[str]) -> str:
    """The options as shown to the target: one ``"A. text"`` line per option, in the given order.

    A list is lettered A, B, C, ...
    """
    return "\n".join(f"{k}. {v}" for k, v in _as_options(options).items())


def choice_question(question: str, options: Mapping[str, str] | Sequence[str]) -> str:
    """A multiple-choice question as sent to the target: the stem, the options, an instruction."""
    opts = _as_options(options)
    keys = ", ".join(opts)
    return (f"{question.strip()}\n\n{format_options(opts)}\n\n"
            f"Answer with the letter of one option ({keys}).")


@dataclass(frozen=True)
class ChoiceVerdict:
    """The verdict on a multiple-choice reply.

    Attributes:
        met: the chosen option is the gold option.
        chosen: the chosen option's key, or None when the reply chooses no single option.
        rationale: one line explaining the verdict.
    """

    met: bool
    chosen: str | None
    rationale: str


@dataclass
class _Mention:
    start: int
    end: int
    key: str
    strong: bool
    how: str
    negated: bool = False
    keys: frozenset[str] = frozenset()


_MC_BOUNDARY = re.compile(
    r"[.;!?\n。；！？,，—–]|\s-\s|\b(?:but|however|although|though|whereas|while|so|therefore|thus|hence|"
    r"actually|wait|correction)\b", re.IGNORECASE)
_MC_NEG_BEFORE = re.compile(
    r"\b(?:not|never|no(?!\s+doubt)|neither|nor|isn'?t|aren'?t|wasn'?t|don'?t|doesn'?t|cannot|can'?t|won'?t|"
    r"rul(?:e|es|ed|ing) out|exclud(?:e|es|ed|ing)|except|rather than|instead of|other than|against)\b"
    r"|不是|并非|不选|排除|不", re.IGNORECASE)
_MC_NEG_AFTER = re.compile(
    r"\b(?:is|are|was|seems|looks|appears|would be)\s+(?:\w+\s+)?(?:not|incorrect|wrong|false|unlikely|"
    r"less likely|implausible|ruled out|excluded)\b|\b(?:isn'?t|wasn'?t|can be (?:ruled out|excluded))\b"
    r"|不对|错误|不正确|排除", re.IGNORECASE)
_MC_CUE = (
    r"(?:(?:the\s+)?(?:final\s+|correct\s+|best\s+|right\s+)?answer(?:\s+(?:is|would\s+be|should\s+be|must\s+be|"
    r"could\s+be|will\s+be|seems\s+to\s+be))?|(?:the\s+)?(?:correct|right|best)\s+(?:option|choice)"
    r"(?:\s+is)?|i\s+(?:would\s+|will\s+|'d\s+|'ll\s+)?(?:choose|pick|select|go\s+with|say|opt\s+for)|"
    r"going\s+with|it(?:'s|\s+is|\s+must\s+be|\s+should\s+be|\s+would\s+be|\s+has\s+to\s+be)|"
    r"i\s+(?:think|believe)(?:\s+(?:it(?:'s|\s+is)|that\s+it(?:'s|\s+is)))?|"
    r"actually|on\s+second\s+thought|correction|i\s+mean|wait|答案(?:是|为|应该是|应为)?|选择?)"
)
_MC_OPENERS = r"[\s:,=\-*\"'(\[]*"
_MC_CONNECTOR = re.compile(r"^[\s,/&*()\[\]\"']*(?:\b(?:or|and|and/or|either|maybe|possibly|perhaps|a|an|the)\b"
                           r"[\s,/&*()\[\]\"']*)*$|^[\s,、/或和]*$", re.IGNORECASE)
_MC_WORD = re.compile(f"[{_CJK}]|[^\\W_]+", re.UNICODE)


def _letter_pattern(keys: Sequence[str]) -> str:
    return "(?:" + "|".join(re.escape(k) for k in sorted(keys, key=len, reverse=True)) + ")"


def _key_of(raw: str, keys: dict[str, str]) -> str | None:
    return keys.get(raw.upper()) or keys.get(raw)


def _letter_mentions(reply: str, opts: dict[str, str]) -> list[_Mention]:
    keys = {k.upper(): k for k in opts}
    keys.update({k: k for k in opts})
    letter = _letter_pattern(list(opts) + [k.lower() for k in opts if k.lower() != k])
    after = r"(?=\s*(?:[).:,;!?\]\n*\"'。，]|$|\s(?:or|and)\b|\s*[-–—(]))"
    found: list[_Mention] = []

    def add(m: re.Match, group: int, strong: bool, how: str) -> None:
        key = _key_of(m.group(group), keys)
        if key is not None:
            found.append(_Mention(m.start(group), m.end(group), key, strong, how))

    whole = re.fullmatch(rf"\W*(?:option\s+|choice\s+)?({letter})\W*", reply.strip(), re.IGNORECASE)
    if whole:
        key = _key_of(whole.group(1), keys)
        if key is not None:
            start = reply.find(whole.group(1), reply.find(reply.strip()))
            return [_Mention(start, start + len(whole.group(1)), key, True, "a bare letter")]
    for m in re.finditer(rf"{_MC_CUE}{_MC_OPENERS}(?:option\s+|choice\s+|letter\s+)?({letter}){after}", reply,
                         re.IGNORECASE):
        add(m, 1, True, "announced")
    for m in re.finditer(rf"(?<![\w'])({letter})\s*\)?\s+(?:is|would\s+be|seems)\s+(?:the\s+)?"
                         rf"(?:correct|right|best|answer|most\s+likely)\b", reply, re.IGNORECASE):
        add(m, 1, True, "announced")
    upper = _letter_pattern(list(opts))
    # bare letters offered together: "A or B", "A, B, C and D", "either C or D"
    for span in re.finditer(rf"(?<![\w'])({upper})(?:\s*(?:,|/|&|\bor\b|\band\b|,\s*or\b|,\s*and\b)\s*({upper}))+"
                            rf"(?![\w'])", reply):
        for m in re.finditer(rf"(?<![\w'])({upper})(?![\w'])", span.group()):
            key = _key_of(m.group(1), keys)
            if key is not None:
                found.append(_Mention(span.start() + m.start(1), span.start() + m.end(1), key, False, "listed"))
    # a bare letter right after a negation: "not B", "isn't C"
    for m in re.finditer(rf"\b(?:not|isn'?t|never|nor|neither|rule\s+out|exclude)\s+(?:option\s+|choice\s+)?"
                         rf"({letter}){after}", reply, re.IGNORECASE):
        add(m, 1, False, "rejected")
    for m in re.finditer(rf"[(\[]\s*({letter})\s*[)\]]", reply, re.IGNORECASE):
        add(m, 1, False, "bracketed")
    for m in re.finditer(rf"(?<![\w(\[])({letter})\)", reply, re.IGNORECASE):
        add(m, 1, False, "bracketed")
    for m in re.finditer(rf"\b(?:option|choice)\s+({letter}){after}", reply, re.IGNORECASE):
        add(m, 1, False, "named")
    for m in re.finditer(rf"(?m)^[\s>*#\-]*\**({letter})\**\s*[.:)]\s", reply):
        add(m, 1, False, "at a line start")
    for m in re.finditer(rf"\*\*({letter})\*\*", reply):
        add(m, 1, False, "in bold")
    for m in re.finditer(rf"(?<![A-Za-z])({letter})(?=选项)", reply):
        add(m, 1, False, "named")
    return found


def _mc_words(text: str) -> list[tuple[int, int, str]]:
    """(start, end, normalised word) of a text's words, articles dropped; the same rule for replies and
    option texts, so hyphens and apostrophes split both alike ("Amoxicillin-clavulanate")."""
    words = [(m.start(), m.end(), normalize_answer(m.group())) for m in _MC_WORD.finditer(text)]
    return [w for w in words if w[2] and w[2] not in ("a", "an", "the")]


def _text_mentions(reply: str, opts: dict[str, str]) -> list[_Mention]:
    words = _mc_words(reply)
    taken = [False] * len(words)
    found: list[_Mention] = []
    wanted = {key: [w[2] for w in _mc_words(text)] for key, text in opts.items()}
    for key in sorted(wanted, key=lambda k: len(wanted[k]), reverse=True):  # longest first
        want = wanted[key]
        if not want:
            continue
        n = len(want)
        for i in range(len(words) - n + 1):
            if any(taken[i:i + n]):
                continue
            if [w[2] for w in words[i:i + n]] == want:
                for j in range(i, i + n):
                    taken[j] = True
                end = words[i + n - 1][1]
                tail = re.match(r"[^\w\s]+", opts[key].strip()[::-1])  # the option's closing punctuation
                if tail and reply.startswith(tail.group()[::-1], end):
                    end += len(tail.group())
                found.append(_Mention(words[i][0], end, key, False, "by its text"))
    return found


def _clause_bounds(reply: str, pos: int) -> tuple[int, int]:
    start = 0
    for m in _MC_BOUNDARY.finditer(reply, 0, pos):
        start = m.end()
    nxt = _MC_BOUNDARY.search(reply, pos)
    return start, (nxt.start() if nxt else len(reply))


def _strong_by_cue(reply: str, m: _Mention, clause_start: int) -> bool:
    before = reply[clause_start:m.start]
    return bool(re.search(rf"{_MC_CUE}{_MC_OPENERS}(?:option\s+|choice\s+)?$", before, re.IGNORECASE))


def _mentions(reply: str, opts: dict[str, str]) -> list[_Mention]:
    raw = _letter_mentions(reply, opts)
    if len(raw) == 1 and raw[0].how == "a bare letter":
        return raw
    raw += _text_mentions(reply, opts)
    raw.sort(key=lambda m: (m.start, -m.end))
    # one mention per place: overlapping detections keep the strongest
    merged: list[_Mention] = []
    for m in raw:
        if merged and m.start < merged[-1].end and m.key == merged[-1].key:
            merged[-1].strong = merged[-1].strong or m.strong
            continue
        if merged and m.start < merged[-1].end:
            continue
        merged.append(m)
    # a letter and its option's text side by side ("B. Mycobacterium tuberculosis", "... (B)") are one
    joined: list[_Mention] = []
    for m in merged:
        prev = joined[-1] if joined else None
        if (prev is not None and prev.key == m.key
                and re.fullmatch(r"(?:[\s.:)\]*(\[-]|\b(?:a|an|the)\b)*", reply[prev.end:m.start], re.IGNORECASE)):
            prev.end, prev.strong = m.end, prev.strong or m.strong
            continue
        joined.append(m)
    # a lone line-start letter opening the reply announces the answer ("D. Staphylococcus aureus ...")
    line_starts = [m for m in joined if m.how == "at a line start"]
    if len(line_starts) == 1 and not reply[:line_starts[0].start].strip(" \t*#>-"):
        line_starts[0].strong = True
    # negations and clause breaks are read outside the options' own texts ("vaccination against rubella")
    masked = list(reply)
    for m in joined:
        masked[m.start:m.end] = " " * (m.end - m.start)
    plain = "".join(masked)
    for m in joined:
        start, end = _clause_bounds(plain, m.start)
        m.negated = bool(_MC_NEG_BEFORE.search(plain, start, m.start)) or bool(
            _MC_NEG_AFTER.search(plain[m.end:max(m.end, end)]))
        if not m.strong and _strong_by_cue(plain, m, start):
            m.strong = True
    return joined


def _chain(reply: str, mentions: list[_Mention], index: int) -> set[str]:
    """Options offered together with mention ``index`` ("A or B", "A, B, C and D", an echoed list)."""
    keys = {mentions[index].key}
    for step in (-1, 1):
        i = index
        while 0 <= i + step < len(mentions):
            a, b = (mentions[i + step], mentions[i]) if step < 0 else (mentions[i], mentions[i + step])
            gap = reply[a.end:b.start]
            if not (_MC_CONNECTOR.match(gap) or _is_option_list_gap(gap)):
                break
            if mentions[i + step].negated:
                break
            keys.add(mentions[i + step].key)
            i += step
    return keys


def _is_option_list_gap(gap: str) -> bool:
    return "\n" in gap and len(gap.strip()) <= 200 and gap.count("\n") == 1


def _extract(reply: str, options: Mapping[str, str] | Sequence[str]) -> tuple[str | None, str]:
    opts = _as_options(options)
    if not (reply or "").strip():
        return None, "no reply"
    mentions = _mentions(reply, opts)
    if not mentions:
        return None, "names no option"
    kept = [i for i, m in enumerate(mentions) if not m.negated]
    if not kept:
        rejected = ", ".join(sorted({mentions[i].key for i in range(len(mentions))}))
        return None, f"only rejects options ({rejected})"
    strong = [i for i in kept if mentions[i].strong]
    pick = strong[-1] if strong else kept[-1]
    together = _chain(reply, mentions, pick)
    if len(together) > 1:
        return None, f"offers several options ({', '.join(sorted(together))})"
    m = mentions[pick]
    how = "announced" if m.strong else m.how
    return m.key, f'chooses {m.key} ({how}: "{_short(reply[m.start:m.end], 40)}")'


def extract_choice(reply: str, options: Mapping[str, str] | Sequence[str]) -> str | None:
    """The option a reply chooses, or None.

    Rules: an option is mentioned by its letter (a bare "B", "(B)", "b)", "option B", "B." at a
    line start, "the answer is B") or by its text ("Staphylococcus aureus"). A mention is *negated*
    when a negation precedes it in its clause ("not B", "rule out B", "rather than B") or follows
    it ("B is wrong", "B is unlikely"); negated mentions are not choices (negations inside an
    option's own text, "vaccinate against measles", are not the reply's). Announced mentions ("the
    answer is C", "I'd go with C", "it's C", "actually, C", a lone "D." opening the reply) win over
    passing ones; among them the last wins ("I first thought A, but the answer is C" -> C). When
    the winning mention is offered together with other options ("A or B", "A, B, C and D", an
    echoed option list), there is no choice (None). "not B" alone is None.

    Args:
        reply: the target's reply.
        options: key -> option text (a list is lettered A, B, ...).

    Returns:
        The chosen option's key as given in ``options``, or None.
    """
    return _extract(reply, options)[0]


def judge_choice(reply: str, options: Mapping[str, str] | Sequence[str], gold_letter: str) -> ChoiceVerdict:
    """Judge a multiple-choice reply: met iff :func:`extract_choice` equals the gold option's key.

    Raises:
        ValueError: the gold key is not one of the options.
    """
    opts = _as_options(options)
    gold = next((k for k in opts if k == gold_letter or k.upper() == str(gold_letter).strip().upper()), None)
    if gold is None:
        raise ValueError(f"gold option {gold_letter!r} is not one of the options {list(opts)}")
    chosen, why = _extract(reply, opts)
    met = chosen == gold
    verdict = "correct" if met else f"the gold option is {gold}"
    return ChoiceVerdict(met, chosen, f"{why}; {verdict}")
