"""Multiple-choice answers: the options as shown to the target, and the option a reply chooses.

:func:`format_options` shows options to the target, :func:`extract_choice` reads the chosen option
back (see its docstring for the rules), :func:`judge_choice` compares it with the gold.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from engine.judge.gold_match import normalize_answer
from engine.judge.stance import SWEEP_MIN_MATES, asserted_text, claims, frame_mates
from engine.text.cjk import CJK
from engine.text.sentences import split_sentences

SWEEP_OPTIONS = 3
"""A reply that announces this many different options ("It is A. It is B. It is C.") chooses none (a sweep)."""



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
    r"|\b(?:does|do)\s*(?:not|n't)\s+(?:fit|match|apply|explain)\b"
    r"|不对|错误|不正确|排除", re.IGNORECASE)
_MC_NEG_LATER = re.compile(r"^[^.;!?\n]*?\b(?:is|seems)\s+(?:possible|plausible)\s+but\s+(?:unlikely|less likely)\b",
                           re.IGNORECASE)
"""A rejection that runs past a clause break ("(A) is possible but unlikely"), read to the sentence's end."""
_MC_CUE = (
    r"(?:(?:the\s+)?(?:final\s+|correct\s+|best\s+|right\s+)?answer(?:\s+(?:is|would\s+be|should\s+be|must\s+be|"
    r"could\s+be|will\s+be|seems\s+to\s+be))?|(?:the\s+)?(?:correct|right|best)\s+(?:option|choice)"
    r"(?:\s+is)?|i\s+(?:would\s+|will\s+|'d\s+|'ll\s+)?(?:choose|pick|select|go\s+with|say|opt\s+for)|"
    r"going\s+with|it(?:'s|\s+is|\s+was|\s+must\s+be|\s+should\s+be|\s+would\s+be|\s+has\s+to\s+be)|"
    r"i\s+(?:think|believe)(?:\s+(?:it(?:'s|\s+is)|that\s+it(?:'s|\s+is)))?|"
    r"actually|on\s+second\s+thought|on\s+reflection|correction|i\s+mean|wait|答案(?:是|为|应该是|应为)?|选择?)"
)
_MC_OPENERS = r"[\s:,=\-*\"'(\[]*"
_MC_CONNECTOR = re.compile(r"^[\s,;|/&*()\[\]\"']*(?:(?:\b(?:or|and|and/or|either|maybe|possibly|perhaps|a|an|the)\b"
                           r"|\b[A-Za-z][.)](?=\s))[\s,;|/&*()\[\]\"']*)*$|^[\s,;|、/或和]*$", re.IGNORECASE)
"""What may stand between options offered together: separators (, ; / | &), or/and/either, articles,
and the next option's letter label ("A. Paris / B. Lyon")."""
_MC_WORD = re.compile(f"[{CJK}]|[^\\W_]+", re.UNICODE)


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
    for m in re.finditer(rf"(?<![\w'])({letter})\s*\)?\s+(?:is|would\s+be|seems)\s+(?:the\s+|my\s+)?"
                         rf"(?:correct|right|best|answer|most\s+likely|pick|choice)\b", reply, re.IGNORECASE):
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
    forms = [(key, [w[2] for w in _mc_words(text)]) for key, text in opts.items()]
    # a two-word name also by its first word's initial: "S. aureus" for "Staphylococcus aureus"
    forms += [(key, [want[0][0], *want[1:]]) for key, want in list(forms)
              if len(want) == 2 and len(want[0]) > 1 and opts[key].strip()[:1].isupper() and want[0][0].isalpha()]
    for key, want in sorted(forms, key=lambda f: len(f[1]), reverse=True):  # longest first
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
            _MC_NEG_AFTER.search(plain[m.end:max(m.end, end)])) or bool(_MC_NEG_LATER.search(plain[m.end:]))
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
    # stance before match: what the reply does not assert chooses nothing (own negations stay: read below)
    said = asserted_text(reply, keep_negated=True)
    if not said.strip():
        kinds = sorted({c.stance for c in claims(reply) if not c.asserted})
        return None, f"nothing asserted ({', '.join(kinds)})"
    reply = said
    mentions = _mentions(reply, opts)
    if not mentions:
        return None, "names no option"
    kept = [i for i, m in enumerate(mentions) if not m.negated]
    if not kept:
        rejected = ", ".join(sorted({mentions[i].key for i in range(len(mentions))}))
        return None, f"only rejects options ({rejected})"
    strong = [i for i in kept if mentions[i].strong]
    announced = sorted({mentions[i].key for i in strong})
    if len(announced) >= SWEEP_OPTIONS:
        return None, f"announces several options one after another ({', '.join(announced)})"
    pick = strong[-1] if strong else kept[-1]
    together = _chain(reply, mentions, pick)
    if len(together) > 1:
        return None, f"offers several options ({', '.join(sorted(together))})"
    m = mentions[pick]
    mates = max((len(frame_mates(reply, said_as)) for said_as in (opts[m.key], reply[m.start:m.end])), default=0)
    if mates >= SWEEP_MIN_MATES:
        return None, f"offers {m.key} as one of {mates + 1} candidates, one per sentence (a sweep)"
    if not m.strong and _buried(reply, m.start):
        return None, f"names {m.key} in a long reply that does not single it out (a passage, not a choice)"
    how = "announced" if m.strong else m.how
    return m.key, f'chooses {m.key} ({how}: "{_short(reply[m.start:m.end], 40)}")'


LONG_REPLY = 3
"""Sentences (with :data:`LONG_REPLY_WORDS` words) from which a reply must single its choice out."""
LONG_REPLY_WORDS = 40
SHORT_SENTENCE = 12
"""Words of a first or last sentence short enough to single a choice out by its place."""


def _buried(reply: str, at: int) -> bool:
    """A passing mention at ``at`` inside a long reply (:data:`LONG_REPLY` sentences and
    :data:`LONG_REPLY_WORDS` words) that is not in a short first or last sentence."""
    sentences = split_sentences(reply)
    if len(sentences) < LONG_REPLY or len(reply.split()) < LONG_REPLY_WORDS:
        return False
    pos, index = 0, len(sentences) - 1
    for k, sentence in enumerate(sentences):
        found = reply.find(sentence, pos)
        if found >= 0:
            if found <= at < found + len(sentence):
                index = k
                break
            pos = found + len(sentence)
    short = len(sentences[index].split()) <= SHORT_SENTENCE
    return not (short and index in (0, len(sentences) - 1))


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
    echoed option list), there is no choice (None). "not B" alone is None. Only what the reply asserts
    is read (:func:`engine.judge.stance.asserted_text`: an option asked about, supposed, withdrawn,
    superseded, attributed to others or inside code or a URL is no choice), and a reply that announces
    :data:`SWEEP_OPTIONS` different options or more, or says the chosen one as one of several
    candidates in one frame ("Maybe A. Maybe B. Maybe C.": :func:`engine.judge.stance.frame_mates`), chooses
    none (a sweep); a passing mention in a long reply (:data:`LONG_REPLY` sentences, :data:`LONG_REPLY_WORDS`
    words) that is not in a short first or last sentence is no choice either (a passage).

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
