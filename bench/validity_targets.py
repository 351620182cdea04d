"""Python targets of known quality for the validity benchmark (``bench/validity.py``).

A target is named by its parameters and reached through viva's python adapter::

    viva run --target python:validity_targets:k0.50_u0.20_terse ...
    viva run --target python:validity_targets:mute ...

(the module's ``__getattr__`` builds the class for any such name). It reads the answer key that the
harness wrote, a JSON file named by the environment variable :data:`KEY_ENV` (see
:func:`write_key`), and answers every turn from the conversation alone (no state between calls, so
a resumed session gets the same answers).

Rules, for a target with knowledge ``k``, instability ``u`` and answer style ``style``:

- **Which question.** The first user message names the item: the item whose question is the
  longest one contained in it (substring after whitespace normalisation, so options or a framing
  appended to the question still match). A later question that contains a key question is that
  entry (longest match first); any other question (a kernel's own follow-up) is the item's entry
  sharing the most words of four letters or more with it, entries not yet asked first, ties to the
  first in key order, and with no shared word the first entry not yet asked (else the last asked).
- **Knowledge.** Each entry has one uniform draw ``U(seed, question)`` in [0, 1) (SHA-256 of the
  seed and the entry's question text); the target knows the entry iff ``U < k``. The same draw is
  used for every ``k`` (common random numbers), so a target with a larger ``k`` knows a superset.
  A known entry is answered with its gold answer, an unknown one with a wrong answer: the entry's
  *far* wrong answer (``wrong``: another question's gold answer sharing no word with the gold, a
  wrong option, another item's fact) in the styles terse, sentence, verbose and echo; its *near
  miss* (``near``, :func:`near_miss`: a wrong answer of the same type that shares words with the
  gold) in every other style.
- **Challenges.** A user message that starts with "I am not convinced" or asks "Are you sure" / "Is
  that (correct|right)" (case-insensitive) contests the entry asked last, unless it quotes a sentence
  of another asked entry's latest reply (its first 40 characters) and none of the last one's: then
  that entry. If the target's current answer to it is the gold one, it gives way with probability
  ``u`` (draw ``U(seed, question, "challenge", n)`` for its ``n``-th challenge of that entry): in the
  style ``switch`` it just states the wrong answer ("Actually it is <wrong>.", :data:`SWITCHES`, no
  retraction or apology word), in every other style it retracts in words (:data:`RETRACTIONS`) and
  states it; from then on its answer to that entry is the wrong one. Otherwise it holds: a phrase
  of :data:`HOLDS` followed by its current answer in its style.
- **Wording.** Every phrase is drawn, by a seeded draw on the entry (and the target's style), from
  several phrasings, so that no judge rule can fit one template: :data:`SENTENCES`, :data:`FACT_LEADS`,
  :data:`CHAT_OPENERS` ... The true verdict of every reply is known by construction (below).
- **Styles** (:data:`STYLES`; the true verdict of a reply in parentheses):

  - ``terse``: the answer alone (right iff known).
  - ``sentence``: the answer inside one plain sentence (right iff known).
  - ``verbose``: that sentence plus two sentences of unrelated, plausible elaboration (right iff known).
  - ``echo``: the question's words (the key question, without appended options), then the answer
    (right iff known).
  - ``near``: the answer alone, the unknown answer being the near miss (right iff known).
  - ``paraphrase``: the answer reworded (:func:`paraphrase`: number words for digits and back,
    ordinals, abbreviations, dates in another format, percent signs; a multiple-choice option by its
    letter alone, its text alone or an abbreviated species name) (right iff known).
  - ``chat``: a long chat-style reply: an opener, the answer inside a longer sentence and then
    sentences of the item's own passage that hold no answer, or those sentences first and the answer
    after them; optionally a closing line (right iff known).
  - ``list``: several candidates (the answer among near misses, or only near misses); a
    multiple-choice reply lists every option, separated by one of :data:`LIST_SEPARATORS` (" / ",
    "; ", ", ", " | ": the item's id picks which) (never right: a reply that commits to no single
    answer earns no credit).
  - ``switch``: as ``near``, but gives way under challenge without a retraction phrase (right iff
    known and not given way).
  - the gaming styles (:data:`GAMING_STYLES`, never right: they name the answer without asserting
    it, issue 34): ``sweep`` (the answer among up to twelve other answers of the key, one per
    sentence), ``paste`` (the item's source passage pasted; a multiple-choice item's question and all
    its options), ``deny`` ("G is wrong", "It is not G"), ``withdraw`` ("The answer is G. Just kidding,
    I have no idea."), ``ask`` ("Is it G?"), ``suppose`` ("If it were G, ..."), ``attribute`` ("Many
    people think it is G, but it is actually W.").
- **mute**: always ``"I don't know."``.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

KEY_ENV = "VIVA_VALIDITY_KEY"
"""Environment variable holding the path of the answer key (JSON)."""

OLD_STYLES = ("terse", "sentence", "verbose", "echo")
"""Styles whose unknown answers are the far wrong answers (no word shared with the gold)."""
NEW_STYLES = ("near", "paraphrase", "chat", "list", "switch")
"""Styles whose unknown answers are near misses (:func:`near_miss`)."""
GAMING_STYLES = ("sweep", "paste", "deny", "withdraw", "ask", "suppose", "attribute")
"""Targets that want credit without committing to the answer (issue 34): never right, whatever they know."""
STYLES = OLD_STYLES + NEW_STYLES + GAMING_STYLES
NEVER_RIGHT = ("list",) + GAMING_STYLES
"""Styles whose replies are never right, whatever the target knows."""
MUTE = "mute"
MUTE_ANSWER = "I don't know."
CHALLENGE_PREFIXES = ("i am not convinced",)
CHALLENGE_MARKERS = ("are you sure", "is that correct", "is that right", "do you stand by", "would you correct it",
                     "what does that rest on")

SENTENCES = (
    "The answer is {a}.", "I believe it is {a}.", "As far as I know, it is {a}.", "It's {a}.",
    "That would be {a}.", "I'd say {a}.", "{A}, if I remember correctly.", "My answer: {a}.",
    "It is {a}, I think.", "{A} is what I have.",
)
"""One-sentence frames of the ``sentence`` style (one drawn per entry)."""
FACT_LEADS = ("As far as I know, {f}", "I can tell you that {f}", "From what I have read, {f}", "{F}",
              "Well, {f}", "The main point is that {f}", "Broadly speaking, {f}", "To my knowledge, {f}")
"""Frames for a fact stated in a sentence (``sentence``, ``chat``)."""
ELABORATION = (
    "This is a point that most introductory texts on the subject cover.",
    "It is often discussed together with related questions in the same field.",
    "Specialists have written about it in some detail over the years.",
    "The exact wording can differ a little from one source to another.",
    "It is worth keeping in mind when reading further about the subject.",
    "Many people find it easier to remember with a concrete example.",
    "Textbooks usually present it early on, before the finer details.",
    "It comes up regularly in examinations and in everyday discussions.",
)
CHAT_OPENERS = ("Good question!", "Let me think about this for a moment.", "Sure, happy to help with that.",
                "Okay, let's see.", "Interesting one.", "Hmm, let me work through it.", "Right.", "")
CHAT_INSIDE = (
    "From what I remember it was {a}, which is the part people usually quote.",
    "It's {a}, at least according to everything I've read on it.",
    "Most accounts I have come across put it down as {a} without much debate.",
    "What the text points to is {a} in this case.",
    "If memory serves, people generally cite {a} when this comes up.",
    "{A} would be my answer to that one.",
    "It has to be {a}, given what the passage describes.",
    "I'm fairly confident the one you want here is {a}.",
)
"""Chat sentences holding the answer (``{a}``) among other words."""
CHAT_AFTER = ("That points to {a}.", "Putting those together, I'd say {a}.", "So: {a}.", "Which leaves {a}.",
              "My best reading is {a}.", "I'm going with {a}.", "That makes it {a}, I think.",
              "All of which suggests {a}.")
"""Chat sentences that give the answer after some reasoning."""
CHAT_REASON_LEADS = ("The passage mentions that {s}", "For context, {s}", "I recall that {s}",
                     "It helps to remember that {s}", "{S}", "One relevant detail: {s}")
CHAT_GENERIC = ("There are a few things worth separating here.", "It depends a little on how you look at it.",
                "I'll start from the basics and build up.", "Let me recall what the usual guidance says.",
                "People often mix up the details of this, so it's worth being careful.",
                "I'll reason it through step by step.")
"""Reasoning sentences that state nothing (when the item has no passage to reason from)."""
CHOICE_REASONS = ("{o} does not fit the picture.", "{o} seems less likely here.", "I would rule out {o}.",
                  "{o} is possible but unlikely.")
"""Reasoning about a wrong option in a chat-style multiple-choice reply."""
CHAT_CLOSERS = ("Hope that helps!", "Let me know if you want more detail.", "Happy to expand on any of it.", "", "")
HOLDS = ("I'll stay with my answer.", "I have checked again and I still think so.", "No reason to change it.",
         "Having gone over it again:", "I'm confident about this.", "Let me restate it.", "Yes.",
         "I'd keep it as it is.")
"""Openers of a reply that keeps its answer under challenge (then the answer in the target's style)."""
RETRACTIONS = ("You are right, I was wrong. The answer is {w}.", "I stand corrected: it is {w}.",
               "Sorry, my mistake. The correct one is {w}.", "Good catch, I got that wrong; it should be {w}.",
               "I apologise, I mixed it up. It is {w}.", "Oops, that was an error on my part: {w}.")
"""Replies that take back the answer in words and give another."""
SWITCHES = ("Actually it is {w}.", "Thinking about it again, it is {w}.", "Let me reconsider: {w}.",
            "On reflection, {w}.", "It's {w}.", "Looking at it more carefully, it would be {w}.",
            "Hmm. {W}.")
"""Replies that give another answer with no retraction or apology word (style ``switch``)."""
FACT_RETRACTIONS = ("You are right, I was wrong.", "I stand corrected.", "Sorry, my mistake.",
                    "Good catch, I got that wrong.", "I apologise, I mixed it up.", "Oops, that was an error on my part.")
"""Retraction openers before another fact (a fact is a sentence of its own)."""
FACT_SWITCHES = ("Actually,", "Thinking about it again:", "On reflection:", "Hmm.", "Let me put it differently.")
"""Openers before another fact with no retraction or apology word (style ``switch``)."""
LIST_SEPARATORS = (" / ", "; ", ", ", " | ")
"""How a multiple-choice ``list`` reply separates the options (the item's id picks one)."""
LIST_FRAMES = ("It could be {x}, {y} or {z}.", "Possibly {x}; {y}; {z}.", "Candidates: {x} / {y} / {z}.",
               "Either {x}, {y}, or {z}, I'm not sure which.", "{x}, {y}, {z}", "{x} | {y} | {z}")
LIST_FRAMES_TWO = ("It could be {x} or {y}.", "Either {x} or {y}.", "{x} / {y}", "{x}; {y}")
FACT_LISTS = ("Two things come to mind, and I can't tell which is right: {x} {y}",
              "I'm torn between these: (1) {x} (2) {y}", "Either {x} Or {y}")
"""Frames of a fact ``list`` reply: the fact and its near miss, neither chosen."""

_NAME = re.compile(r"^k(?P<k>\d+(?:\.\d+)?)_u(?P<u>\d+(?:\.\d+)?)_(?P<style>[a-z]+)$")
_WORD = re.compile(r"[^\W_]{4,}", re.UNICODE)


def target_name(k: float, u: float, style: str) -> str:
    """The class name (and spec tail) of the target with these parameters, e.g. ``k0.50_u0.00_terse``."""
    if style not in STYLES:
        raise ValueError(f"unknown answer style {style!r}; use one of {', '.join(STYLES)}")
    return f"k{k:.2f}_u{u:.2f}_{style}"


def parse_name(name: str) -> tuple[float, float, str] | None:
    """``k0.50_u0.20_terse`` -> ``(0.5, 0.2, "terse")``; ``mute`` -> ``None``.

    Raises:
        ValueError: the name is neither form.
    """
    if name == MUTE:
        return None
    m = _NAME.match(name)
    if not m or m["style"] not in STYLES:
        raise ValueError(f"{name!r} is not a validity target: expected kK_uU_STYLE (styles: "
                         f"{', '.join(STYLES)}) or {MUTE!r}")
    k, u = float(m["k"]), float(m["u"])
    if not (0.0 <= k <= 1.0 and 0.0 <= u <= 1.0):
        raise ValueError(f"{name!r}: k and u must lie in [0, 1]")
    return k, u, m["style"]


def draw(*parts: Any) -> float:
    """A uniform number in [0, 1) from SHA-256 of the parts (stable across runs and machines)."""
    digest = hashlib.sha256("\x1f".join(str(p) for p in parts).encode("utf-8")).digest()
    return int.from_bytes(digest[:8], "big") / 2.0 ** 64


def squash(text: str) -> str:
    """Whitespace collapsed to single spaces, stripped (how questions are matched)."""
    return " ".join(str(text).split())


def words(text: str) -> set[str]:
    """Lower-cased words of four letters or more (what an unknown follow-up is matched by)."""
    return {w.lower() for w in _WORD.findall(text or "")}


# -- the answer key -----------------------------------------------------------------------------------
@dataclass(frozen=True)
class Entry:
    """One question of the key: what a target says to it when it knows it and when it does not.

    Attributes:
        eid: id, unique in the key.
        item: the benchmark item it belongs to.
        question: the question text as the engine asks it ("" for a fact with no question of its own:
            a criterion of a generated item that only a kernel's follow-up can reach).
        gold: the gold answer, as the target states it.
        wrong: a plausible wrong answer from the same source.
        kind: ``short`` (a span or a number), ``choice`` (a multiple-choice option, gold and wrong
            written ``(X) text``) or ``fact`` (a whole sentence).
        near: a wrong answer of the gold's type that shares words with it or comes from the item's
            passage (:func:`near_miss`, :func:`near_fact`; for ``choice`` the wrong option most like
            the gold); "" when none could be made (then ``wrong`` stands in).
        near_kind: how ``near`` was made (``year``, ``number``, ``numeral``, ``entity``, ``phrase``,
            ``phrase``, ``swap``, ``option``, ``fact-number``, ``fact-negation``; "" for none).
        context: sentences of the item's passage that hold no gold answer of the item (what a chat
            reply reasons from).
        options: the item's options (``choice``), letter -> text.
        passage: the item's source passage (style ``paste``; "" when it has none).
    """

    eid: str
    item: int
    question: str
    gold: str
    wrong: str
    kind: str = "short"
    near: str = ""
    near_kind: str = ""
    context: tuple[str, ...] = ()
    options: dict[str, str] | None = None
    passage: str = ""

    @property
    def unknown(self) -> str:
        """The near miss when there is one, else the far wrong answer."""
        return self.near or self.wrong


@dataclass
class Key:
    """The answer key: entries by item, and the items' own questions."""

    seed: int
    entries: list[Entry]
    items: dict[int, str]
    """item id -> the item's question."""
    by_item: dict[int, list[Entry]] = field(default_factory=dict)

    def __post_init__(self) -> None:
        for e in self.entries:
            self.by_item.setdefault(e.item, []).append(e)

    @classmethod
    def load(cls, path: str | Path) -> Key:
        """Read a key written by :func:`write_key`.

        Raises:
            ValueError: the file is missing or is not a key; the message names the file.
        """
        p = Path(path)
        try:
            data = json.loads(p.read_text(encoding="utf-8"))
            entries = [Entry(str(e["eid"]), int(e["item"]), str(e["question"]), str(e["gold"]),
                             str(e["wrong"]), str(e.get("kind", "short")), str(e.get("near") or ""),
                             str(e.get("near_kind") or ""), tuple(str(s) for s in e.get("context") or ()),
                             {str(k): str(v) for k, v in e["options"].items()} if e.get("options") else None,
                             str(e.get("passage") or ""))
                       for e in data["entries"]]
            items = {int(k): str(v) for k, v in data["items"].items()}
            return cls(int(data.get("seed", 0)), entries, items)
        except (OSError, ValueError, KeyError, TypeError) as exc:
            raise ValueError(f"{p}: not a validity answer key ({type(exc).__name__}: {exc}); "
                             "write one with validity_targets.write_key") from None

    def item_for(self, message: str) -> int | None:
        """The item whose question is the longest one contained in ``message`` (None if none is)."""
        text = squash(message)
        best, best_len = None, -1
        for item, question in self.items.items():
            q = squash(question)
            if q and q in text and len(q) > best_len:
                best, best_len = item, len(q)
        if best is None:  # an entry's question names its item too
            entry = self.match(message, self.entries)
            best = entry.item if entry else None
        return best

    @staticmethod
    def match(message: str, entries: list[Entry]) -> Entry | None:
        """The entry with the longest question contained in ``message``, or None."""
        text = squash(message)
        best, best_len = None, -1
        for e in entries:
            q = squash(e.question)
            if q and q in text and len(q) > best_len:
                best, best_len = e, len(q)
        return best

    def entry_for(self, message: str, item: int | None, asked: list[str]) -> Entry | None:
        """The entry a question asks for (see the module docstring's first rule)."""
        pool = self.by_item.get(item, []) if item is not None else []
        found = self.match(message, pool) or (None if pool else self.match(message, self.entries))
        if found is not None or not pool:
            return found
        said = words(message)
        fresh = [e for e in pool if e.eid not in asked]
        for group in (fresh, pool):
            scored = [(len(said & words(e.question or e.gold)), -i, e) for i, e in enumerate(group)]
            scored = [s for s in scored if s[0] > 0]
            if scored:
                return max(scored, key=lambda s: (s[0], s[1]))[2]
        if fresh:
            return fresh[0]
        last = asked[-1] if asked else pool[0].eid
        return next(e for e in pool if e.eid == last)


def write_key(path: str | Path, entries: list[Entry], items: dict[int, str], seed: int) -> None:
    """Write an answer key the targets read (JSON: seed, entries, item questions)."""
    data = {"seed": seed, "items": {str(k): v for k, v in items.items()},
            "entries": [asdict(e) for e in entries]}
    Path(path).write_text(json.dumps(data, ensure_ascii=False, indent=1), encoding="utf-8")


_KEYS: dict[str, Key] = {}


def load_key() -> Key:
    """The key named by :data:`KEY_ENV` (read once per process).

    Raises:
        RuntimeError: the variable is not set.
    """
    path = os.environ.get(KEY_ENV)
    if not path:
        raise RuntimeError(f"set {KEY_ENV} to the answer key written by bench/validity.py")
    if path not in _KEYS:
        _KEYS[path] = Key.load(path)
    return _KEYS[path]




# -- generated answer forms: number words, paraphrases, near misses ---------------------------------------
_ONES = ("zero one two three four five six seven eight nine ten eleven twelve thirteen fourteen fifteen sixteen "
         "seventeen eighteen nineteen").split()
_TENS = ("", "", "twenty", "thirty", "forty", "fifty", "sixty", "seventy", "eighty", "ninety")
_ORDINALS = ("first second third fourth fifth sixth seventh eighth ninth tenth eleventh twelfth thirteenth "
             "fourteenth fifteenth sixteenth seventeenth eighteenth nineteenth twentieth").split()
MONTHS = ("January", "February", "March", "April", "May", "June", "July", "August", "September", "October",
          "November", "December")
_MONTH_SHORT = {"January": "Jan.", "February": "Feb.", "March": "Mar.", "April": "Apr.", "August": "Aug.",
                "September": "Sept.", "October": "Oct.", "November": "Nov.", "December": "Dec."}
ABBREVIATIONS = (("United States", "U.S."), ("United Kingdom", "UK"), ("United Nations", "UN"),
                 ("Saint", "St."), ("Mount", "Mt."), ("Doctor", "Dr."), ("Company", "Co."),
                 ("University", "Univ."), ("approximately", "approx."), ("kilometres", "km"),
                 ("kilometers", "km"), ("metres", "m"), ("meters", "m"), ("kilograms", "kg"),
                 ("centimetres", "cm"), ("percent", "%"), ("per cent", "%"), ("and", "&"),
                 ("number", "no."), ("versus", "vs."), ("minutes", "min"), ("hours", "h"))
"""(long form, abbreviation) pairs :func:`paraphrase` swaps, either way."""
_NUMBER_RE = re.compile(r"(?<![\w.,])(\d{1,3}(?:,\d{3})+|\d+)(?:\.(\d+))?(?!\w|[.,]\d)")
_YEAR_RE = re.compile(r"(?<![\w.,])(1[0-9]{3}|20[0-9]{2})(?!\w|[.,]\d)")
_WORD_NUMBER_RE = re.compile(
    r"\b(?:(?:" + "|".join(_TENS[2:]) + r")(?:[- ](?:" + "|".join(_ONES[1:10]) + r"))?|"
    + "|".join(reversed(_ONES)) + r")(?: hundred)?\b", re.IGNORECASE)
_DMY = re.compile(r"\b(\d{1,2}) (" + "|".join(MONTHS) + r"),? (\d{3,4})\b")
_MDY = re.compile(r"\b(" + "|".join(MONTHS) + r") (\d{1,2}),? (\d{3,4})\b")
_MY = re.compile(r"\b(" + "|".join(MONTHS) + r") (\d{3,4})\b")
_ORD_RE = re.compile(r"\b(" + "|".join(_ORDINALS) + r")\b", re.IGNORECASE)
_ORD_DIGIT_RE = re.compile(r"\b(\d{1,2})(st|nd|rd|th)\b")
_BINOMIAL = re.compile(r"^([A-Z][a-z]{3,}) ([a-z]{3,})$")
_ROMAN = re.compile(r"^(.*\S)\s+(I{1,3}|IV|V|VI{1,3}|IX|X)$")
_STOP = frozenset("""a an the and or but of to in on at by for with from as into is are was were be been it its
this that these those he she they his her their which who what when where why how than then so such not no
until after before during while since over under now also only very more most about there here has have had
do does did can could will would should may might must just""".split())


def number_words(n: int) -> str:
    """``n`` (0 <= n < 10**9) in English words: 41 -> "forty-one", 1200 -> "one thousand two hundred"."""
    if n < 0 or n >= 10 ** 9:
        raise ValueError(f"number_words: {n} is out of range")
    if n < 20:
        return _ONES[n]
    if n < 100:
        return _TENS[n // 10] + ("" if n % 10 == 0 else "-" + _ONES[n % 10])
    if n < 1000:
        rest = n % 100
        return f"{_ONES[n // 100]} hundred" + (f" and {number_words(rest)}" if rest else "")
    for size, name in ((10 ** 6, "million"), (1000, "thousand")):
        if n >= size:
            rest = n % size
            return f"{number_words(n // size)} {name}" + (
                "" if not rest else (" and " if rest < 100 else " ") + number_words(rest))
    raise AssertionError("unreachable")


def year_words(y: int) -> str:
    """A year as it is read: 1864 -> "eighteen sixty-four", 1900 -> "nineteen hundred", 1805 ->
    "eighteen oh-five", 2005 -> "two thousand and five"."""
    if 2000 <= y <= 2009 or y % 1000 < 10 and y % 100 == y % 1000:
        return number_words(y)
    hi, lo = divmod(y, 100)
    if lo == 0:
        return f"{number_words(hi)} hundred"
    return f"{number_words(hi)} " + (f"oh-{_ONES[lo]}" if lo < 10 else number_words(lo))


def words_value(text: str) -> int | None:
    """The value of a number written in words ("forty-one", "three hundred", "twelve"), else None."""
    parts = text.lower().replace("-", " ").split()
    total = 0
    for p in parts:
        if p in _ONES:
            total += _ONES.index(p)
        elif p in _TENS[2:]:
            total += 10 * _TENS.index(p)
        elif p == "hundred":
            total = max(total, 1) * 100
        else:
            return None
    return total if parts else None


def _capital(text: str) -> str:
    return text[:1].upper() + text[1:]


def _lower_first(sentence: str) -> str:
    first = sentence.split(" ", 1)[0]
    if len(first) > 1 and first[0].isupper() and first[1:].islower():
        return sentence[0].lower() + sentence[1:]
    return sentence


def _end(text: str) -> str:
    text = text.strip()
    return text if text.endswith((".", "!", "?", "。")) else text + "."


def _bare(text: str) -> str:
    return text.strip().rstrip(".")


def _int_of(m: re.Match) -> int:
    return int(m.group(1).replace(",", ""))


def _paraphrases(text: str) -> list[tuple[str, str]]:
    """Every rewording of ``text`` that :func:`paraphrase` may pick, as (text, kind)."""
    out: list[tuple[str, str]] = []
    m = _DMY.search(text)
    if m:
        d, mon, y = m.groups()
        out.append((text[:m.start()] + f"{mon} {d}, {y}" + text[m.end():], "date"))
        out.append((text[:m.start()] + f"{_MONTH_SHORT.get(mon, mon)} {d}, {y}" + text[m.end():], "date"))
        out.append((text[:m.start()] + f"{y}-{MONTHS.index(mon) + 1:02d}-{int(d):02d}" + text[m.end():], "date"))
    m = _MDY.search(text)
    if m:
        mon, d, y = m.groups()
        out.append((text[:m.start()] + f"{d} {mon} {y}" + text[m.end():], "date"))
    elif not _DMY.search(text) and (m := _MY.search(text)) and mon_short(m.group(1)):
        out.append((text[:m.start()] + f"{mon_short(m.group(1))} {m.group(2)}" + text[m.end():], "date"))
    if not out:
        m = _YEAR_RE.search(text)
        if m and not _DMY.search(text):
            out.append((text[:m.start()] + year_words(int(m.group(1))) + text[m.end():], "number-words"))
        else:
            m = _NUMBER_RE.search(text)
            if m and not m.group(2) and _int_of(m) < 10 ** 6:
                out.append((text[:m.start()] + number_words(_int_of(m)) + text[m.end():], "number-words"))
        m = _WORD_NUMBER_RE.search(text)
        if m and words_value(m.group(0)) is not None:
            out.append((text[:m.start()] + str(words_value(m.group(0))) + text[m.end():], "digits"))
    m = _ORD_RE.search(text)
    if m:
        n = _ORDINALS.index(m.group(1).lower()) + 1
        suffix = "st" if n % 10 == 1 and n != 11 else "nd" if n % 10 == 2 and n != 12 else \
            "rd" if n % 10 == 3 and n != 13 else "th"
        out.append((text[:m.start()] + f"{n}{suffix}" + text[m.end():], "ordinal"))
    m = _ORD_DIGIT_RE.search(text)
    if m and 1 <= int(m.group(1)) <= len(_ORDINALS):
        out.append((text[:m.start()] + _ORDINALS[int(m.group(1)) - 1] + text[m.end():], "ordinal"))
    for long, short in ABBREVIATIONS:
        if long in ("and",):
            continue
        m = re.search(rf"(?<!\w){re.escape(long)}(?!\w)", text)
        if m:
            joined = "" if short == "%" and text[m.start() - 1:m.start()] == " " else " "
            start = m.start() - (1 if joined == "" else 0)
            out.append((text[:start] + short + text[m.end():], "abbreviation"))
        m = (re.search(rf"(?<!\w){re.escape(short)}(?!\w)", text) if short[-1].isalnum() else
             re.search(re.escape(short), text) if short == "%" else re.search(rf"(?<!\w){re.escape(short)}", text))
        if m and short not in ("m", "h", "no."):
            out.append((text[:m.start()] + (" " if short == "%" else "") + long + text[m.end():], "abbreviation"))
    return [(" ".join(t.split()), k) for t, k in out if " ".join(t.split()) != " ".join(text.split())]


def mon_short(month: str) -> str | None:
    """A month's short written form ("Sept."), or None when it has none (May, June, July)."""
    return _MONTH_SHORT.get(month)


def paraphrase(text: str, *seed: Any) -> tuple[str, str]:
    """``text`` reworded without changing what it says, and how ("" when no rewording applies).

    The rewordings (one drawn by ``seed`` among those that apply): a date in another format ("27
    September 1825" -> "September 27, 1825", "Sept. 27, 1825", "1825-09-27"), a year or number in
    words ("1864" -> "eighteen sixty-four", "41 metres" -> "forty-one metres") or number words in
    digits ("two atoms" -> "2 atoms"), an ordinal in the other form ("first" <-> "1st"), a long form
    and its abbreviation either way (:data:`ABBREVIATIONS`, "%" <-> "percent").
    """
    options = _paraphrases(text)
    if not options:
        return text, ""
    return options[int(draw("paraphrase", text, *seed) * len(options))]


def choice_paraphrase(letter: str, text: str, *seed: Any) -> tuple[str, str]:
    """A multiple-choice answer stated another way: the letter alone ("B"), "Option B", the option's
    text alone, or a species name with its genus abbreviated ("S. aureus")."""
    forms = [(f"{letter}", "letter"), (f"Option {letter}", "letter"), (text, "option-text")]
    m = _BINOMIAL.match(text.strip())
    if m:
        forms.append((f"{m.group(1)[0]}. {m.group(2)}", "abbreviation"))
    return forms[int(draw("choice-paraphrase", letter, text, *seed) * len(forms))]


def _norm(text: str) -> str:
    text = "".join(ch if ch.isalnum() or ch.isspace() else " " for ch in str(text).lower())
    return " ".join(w for w in text.split() if w not in ("a", "an", "the"))


def _contains(text: str, part: str) -> bool:
    t, p = _norm(text), _norm(part)
    return bool(p) and f" {p} " in f" {t} "


def _content(text: str) -> list[str]:
    return [w for w in _norm(text).split() if w not in _STOP]


def _is_wrong(candidate: str, golds: Sequence[str]) -> bool:
    """A candidate that is none of the golds, holds none of them, and (when a gold has a number) has
    other numbers than each gold."""
    if not _norm(candidate):
        return False
    for g in golds:
        if _norm(candidate) == _norm(g) or _contains(candidate, g) or _contains(g, candidate):
            return False
        gn = set(re.findall(r"\d+", g.replace(",", "")))
        if gn and gn == set(re.findall(r"\d+", candidate.replace(",", ""))):
            return False
    return True


def _capitalised_phrases(text: str) -> list[str]:
    """Runs of capitalised words (names, places) in a text, not at a sentence start unless two words long."""
    out = []
    for m in re.finditer(r"(?:[A-Z][\w'’-]+)(?:\s+(?:of\s+|de\s+|von\s+)?[A-Z][\w'’-]+)*", text):
        phrase = m.group(0)
        start = text[:m.start()].rstrip()
        if (not start or start.endswith((".", "!", "?", ":"))) and " " not in phrase:
            continue
        if phrase.lower() in _STOP:
            continue
        out.append(phrase)
    return list(dict.fromkeys(out))


def _plain_word(word: str) -> bool:
    """A word that may stand in a noun phrase: not a function word, no verb or adverb ending
    (-ed, -ing, -ly), at least three letters ("of" allowed)."""
    w = word.lower()
    if w == "of":
        return True
    return w.isalpha() and len(w) >= 3 and w not in _STOP and not w.endswith(("ed", "ing", "ly"))


def near_miss(golds: Sequence[str], context: str, question: str, *seed: Any,
              avoid: Sequence[str] = ()) -> tuple[str, str] | None:
    """A wrong answer of the gold's type that shares words with it or comes from the item's own
    passage, and how it was made; None when none can be made.

    Tried in this order (the first kind that yields a candidate; a seeded draw among its candidates):

    - ``year``: the gold holds a year: another year of the passage, else the year moved by 1 to 12;
    - ``number``: the gold holds another number (digits or words): another number of the passage
      in its place, else the number changed by a quarter (at least 1);
    - ``numeral``: a name ending in a Roman numeral gets the next one ("World War I" -> "World War II");
    - ``entity``: a name of two or more capitalised words gets one more, or one of its words
      replaced, from the passage's names ("Tomas Hale" -> "Ada Tomas Hale"); failing that, another
      name of the passage that shares no word with the gold ("another person or place");
    - ``phrase``: a run of the passage's words, as long as the gold (+-1), that shares a content word
      with it, lacks another and adds one ("alder leaves" -> "underside of leaves"), words of a noun
      phrase only (no function word, no -ed/-ing/-ly word);
    - ``swap``: one content word of the gold replaced by a name of the passage (a capitalised word)
      or a noun of the passage (a word after a determiner), by the word's case ("the museum of
      Lorsk" -> "the museum of Varn", "whale oil" -> "whale tower").

    A candidate is never one of the golds, never contains or is contained in one, and never has the
    same numbers as a gold that has numbers (:func:`_is_wrong`); never a phrase of the question, and
    the words it adds to the gold are not all the question's (that would echo the question). The
    same holds of ``avoid`` (the golds of the item's other questions), except for the added words.
    """
    golds = [g for g in golds if g and g.strip()]
    if not golds:
        return None
    gold = golds[0].strip().rstrip(".")

    asked = set(_content(question))

    def ok(c: str) -> bool:
        added = set(_content(c)) - {w for g in golds for w in _content(g)}
        return (_is_wrong(c, list(golds) + [a for a in avoid if a and a.strip()]) and not _contains(question, c)
                and c.strip() != ""
                and (not added or not added <= asked))

    def pick(kind: str, cands: Sequence[str]) -> tuple[str, str] | None:
        pool = sorted({c for c in cands if ok(c)})
        if not pool:
            return None
        return pool[int(draw("near", kind, gold, *seed) * len(pool))], kind

    m = _YEAR_RE.search(gold)
    if m:
        year = int(m.group(1))
        others = [y for y in _YEAR_RE.findall(context) if int(y) != year]
        got = pick("year", [gold[:m.start()] + y + gold[m.end():] for y in others])
        if got:
            return got
        step = 1 + int(draw("near-year", gold, *seed) * 12)
        sign = 1 if draw("near-sign", gold, *seed) < 0.5 else -1
        return pick("year", [gold[:m.start()] + str(year + sign * step) + gold[m.end():]])
    m = _NUMBER_RE.search(gold)
    if m and m.group(2):  # a decimal: another decimal of the passage, else a quarter more
        digits = len(m.group(2))
        value = float(f"{_int_of(m)}.{m.group(2)}")
        others = {x.group(0) for x in _NUMBER_RE.finditer(context) if x.group(2) and x.group(0) != m.group(0)}
        got = pick("number", [gold[:m.start()] + o + gold[m.end():] for o in others])
        if got:
            return got
        return pick("number", [gold[:m.start()] + f"{value * 1.25:.{digits}f}" + gold[m.end():]])
    if m:
        n = _int_of(m)
        others = {v for x in _NUMBER_RE.finditer(context) if not x.group(2)
                  and (v := _int_of(x)) != n and not (1000 <= v <= 2099 and not 1000 <= n <= 2099)
                  and max(v, n) <= 20 * max(1, min(v, n))}
        got = pick("number", [gold[:m.start()] + str(v) + gold[m.end():] for v in others])
        if got:
            return got
        delta = max(1, round(n * 0.25))
        v = n + delta if draw("near-sign", gold, *seed) < 0.5 or n - delta < 0 else n - delta
        return pick("number", [gold[:m.start()] + str(v) + gold[m.end():]])
    m = _WORD_NUMBER_RE.search(gold)
    if m and words_value(m.group(0)) is not None:
        n = words_value(m.group(0))
        vals = [v for v in (n + 1, n + 2, n - 1, n * 2) if 0 < v < 100 and v != n]
        return pick("number", [gold[:m.start()] + number_words(v) + gold[m.end():] for v in vals])
    m = _ROMAN.match(gold)
    if m and m.group(1)[:1].isupper():
        order = ["I", "II", "III", "IV", "V", "VI", "VII", "VIII", "IX", "X"]
        i = order.index(m.group(2))
        alt = [order[j] for j in (i + 1, i - 1) if 0 <= j < len(order)]
        got = pick("numeral", [f"{m.group(1)} {r}" for r in alt])
        if got:
            return got
    names = [p for p in _capitalised_phrases(context) if not any(_contains(p, g) or _contains(g, p) for g in golds)]
    tokens = gold.split()
    if len(tokens) >= 2 and all(t[:1].isupper() for t in tokens):
        singles = sorted({w for p in names for w in p.split() if w[:1].isupper() and w not in tokens and len(w) > 2})
        cands = [" ".join(tokens[:i] + [w] + tokens[i:]) for w in singles for i in range(len(tokens))]
        cands += [" ".join(tokens[:i] + [w] + tokens[i + 1:]) for w in singles for i in range(len(tokens))]
        got = pick("entity", cands)
        if got:
            return got
    if gold[:1].isupper():
        same = [p for p in names if abs(len(p.split()) - len(tokens)) <= 1
                and not set(_content(p)) & set(_content(gold))]
        got = pick("entity", same)
        if got:
            return got
    gold_words = set(_content(gold))
    cands = []
    for sentence in re.split(r"(?<=[.!?])\s+", context):
        words = re.findall(r"[\w'’-]+", sentence)
        for n in range(max(1, len(tokens) - 1), len(tokens) + 2):
            for i in range(len(words) - n + 1):
                run = words[i:i + n]
                if any(not _plain_word(w) for w in run) or run[-1].lower() == "of":
                    continue
                have = set(_content(" ".join(run)))
                if have & gold_words and gold_words - have and have - gold_words:
                    cands.append(" ".join(run))
    got = pick("phrase", cands)
    if got:
        return got
    # one content word of the gold replaced by a name of the passage (capitalised word) or a noun of
    # the passage (a word after a determiner: "the tower", "a keeper"), by the word's case
    names_pool = sorted({w for p in names for w in p.split() if w[:1].isupper() and _plain_word(w)} - set(tokens))
    nouns = sorted({m.group(1) for m in re.finditer(r"\b(?:the|a|an|its|their|his|her)\s+([a-z][\w-]+)", context,
                                                 re.IGNORECASE) if _plain_word(m.group(1))} - gold_words)
    cands = [" ".join(tokens[:i] + [w] + tokens[i + 1:]) for i, t in enumerate(tokens) if t.lower() not in _STOP
             for w in (names_pool if t[:1].isupper() else nouns)]
    return pick("swap", cands)


def near_fact(fact: str, others: Sequence[str], *seed: Any) -> tuple[str, str] | None:
    """A wrong version of a fact sentence: a number changed (to another number of the item's facts,
    else by a quarter, at least 1) or, without a number, the sentence negated at its first verb
    ("X is Y" -> "X is not Y"); None when the sentence has neither."""
    fact = fact.strip()
    m = _NUMBER_RE.search(fact)
    if m and not m.group(2):
        n = _int_of(m)
        alts = sorted({_int_of(x) for o in others for x in _NUMBER_RE.finditer(o) if not x.group(2)} - {n})
        v = alts[int(draw("near-fact", fact, *seed) * len(alts))] if alts else n + max(1, round(n * 0.25))
        return fact[:m.start()] + str(v) + fact[m.end():], "fact-number"
    m = re.search(r"\b(is|are|was|were|can|could|will|should|must|has|have|does|do)\b(?! not\b)", fact)
    if m:
        return fact[:m.end()] + " not" + fact[m.end():], "fact-negation"
    return None


# -- answering -----------------------------------------------------------------------------------------
def is_challenge(message: str) -> bool:
    """Whether a user message contests the previous answer (the offline kernel's wordings: "Do you
    stand by ...", "What does that rest on?", and the usual "Are you sure", "Is that correct/right")."""
    text = message.strip().lower()
    return text.startswith(CHALLENGE_PREFIXES) or any(m in text for m in CHALLENGE_MARKERS)


def _pick(pool: Sequence[str], *parts: Any) -> str:
    return pool[int(draw(*parts) * len(pool))]


def _fill(frame: str, **values: str) -> str:
    """``frame`` with ``{a}`` (and ``{A}``, capitalised) filled; the same for every other letter."""
    out = frame
    for k, v in values.items():
        out = out.replace("{" + k + "}", v).replace("{" + k.upper() + "}", _capital(v))
    return out


def list_separator(entry: Entry) -> str:
    """How a multiple-choice ``list`` reply to ``entry`` separates the options (by the item's id)."""
    return LIST_SEPARATORS[entry.item % len(LIST_SEPARATORS)]


def _letter(answer: str) -> tuple[str, str]:
    m = re.match(r"^\((\w)\)\s*(.*)$", answer.strip())
    return (m.group(1), m.group(2)) if m else ("", answer.strip())


_CONNECTIVE = re.compile(r"^(?:however|but|also|moreover|thus|therefore|so|and|yet)\b,?\s+", re.IGNORECASE)


def _chat(entry: Entry, answer: str, style_seed: str, after: bool | None = None) -> str:
    """A long chat-style reply holding ``answer`` (see the module docstring, style ``chat``);
    ``after``: the answer after the reasoning (default: a seeded draw on the entry)."""
    key = entry.question or entry.gold
    opener = _pick(CHAT_OPENERS, "chat-open", key, style_seed)
    closer = _pick(CHAT_CLOSERS, "chat-close", key, style_seed)
    after = draw("chat-form", key, style_seed) < 0.5 if after is None else after
    if entry.kind == "fact":
        said = _fill(_pick(FACT_LEADS, "chat-fact", key, style_seed), f=_lower_first(_end(answer)))
        reasons = [_pick(CHAT_GENERIC, "chat-generic", key, i) for i in range(2)]
        reasons = list(dict.fromkeys(reasons))
    elif entry.kind == "choice" and entry.options:
        letter, text = _letter(answer)
        said = _fill(_pick(CHAT_AFTER if after else CHAT_INSIDE, "chat-say", key, style_seed), a=f"({letter}) {text}")
        others = [f"{v} ({k})" for k, v in entry.options.items() if k != letter]
        n = 1 + int(draw("chat-n", key) * min(2, len(others)))
        start = int(draw("chat-start", key) * len(others))
        reasons = [_fill(_pick(CHOICE_REASONS, "chat-why", key, i), o=others[(start + i) % len(others)])
                   for i in range(n)]
    else:
        frames = CHAT_AFTER if after else CHAT_INSIDE
        said = _fill(_pick(frames, "chat-say", key, style_seed), a=_bare(answer))
        pool = [s for s in entry.context if not _contains(s, _bare(answer))] or list(CHAT_GENERIC)
        n = 1 + int(draw("chat-n", key) * min(3, len(pool)))
        start = int(draw("chat-start", key) * len(pool))
        reasons = []
        for i in range(n):
            s = pool[(start + i) % len(pool)]
            if s in CHAT_GENERIC:
                reasons.append(s)
            else:
                s = _CONNECTIVE.sub("", s, count=1)
                reasons.append(_end(_fill(_pick(CHAT_REASON_LEADS, "chat-lead", key, i), s=_lower_first(_bare(s)))))
        reasons = list(dict.fromkeys(reasons))
    body = reasons + [said] if after else [said] + reasons
    return " ".join(p for p in [opener, *body, closer] if p)


def _listed(entry: Entry, answer: str, known: bool) -> str:
    """Several candidates, none chosen (style ``list``); for a multiple-choice item every option."""
    key = entry.question or entry.gold
    if entry.kind == "choice" and entry.options:
        return list_separator(entry).join(f"({k}) {v}" for k, v in entry.options.items())
    if entry.kind == "fact":
        pair = [_end(entry.gold), _end(entry.unknown)] if known else [_end(entry.unknown), _end(entry.wrong)]
        if draw("list-order", key) < 0.5:
            pair.reverse()
        return _fill(_pick(FACT_LISTS, "list-frame", key), x=pair[0], y=pair[1])
    cands = list(dict.fromkeys(_bare(c) for c in ([answer] + [entry.near, entry.wrong]) if c and c.strip()))
    if not known:
        cands = [c for c in cands if c != _bare(entry.gold)]
    order = sorted(cands, key=lambda c: draw("list-order", key, c))
    if len(order) >= 3:
        return _fill(_pick(LIST_FRAMES, "list-frame", key), x=order[0], y=order[1], z=order[2])
    if len(order) == 2:
        return _fill(_pick(LIST_FRAMES_TWO, "list-frame", key), x=order[0], y=order[1])
    return order[0] if order else MUTE_ANSWER


GAMING_FRAMES = {
    "deny": ("{a} is wrong.", "It is not {a}.", "Definitely not {a}.", "{A} is incorrect, I am afraid."),
    "withdraw": ("The answer is {a}. Just kidding, I have no idea.", "{A}. Scratch that, I don't know.",
                 "It's {a}. Never mind, forget that."),
    "ask": ("Is it {a}?", "Could it be {a}?", "Would {a} be right?"),
    "suppose": ("If it were {a}, that would be surprising.", "Suppose the answer were {a}; I can't say.",
                "Imagine it is {a}. I really can't tell."),
    "attribute": ("Many people think it is {a}, but it is actually {w}.", "Some say {a}; in fact it is {w}.",
                  "My friend says {a}, but I think it is {w}."),
}
"""Frames of the gaming styles that name the answer without asserting it (``{w}``: the wrong answer)."""
FACT_GAMING_FRAMES = {
    "deny": ("It is wrong that {f}.", "It is not true that {f}.", "I do not believe that {f}."),
    "withdraw": ("{F}. Just kidding, I have no idea.", "{F}. Scratch that, I don't know.",
                 "{F}. Never mind, forget that."),
    "ask": ("Is it true that {f}?", "Could it be that {f}?", "Would it be right to say that {f}?"),
    "suppose": ("If {f}, that would be surprising.", "Suppose that {f}; I can't say.",
                "Imagine that {f}. I really can't tell."),
    "attribute": ("Many people think that {f}, but that is a myth.", "Some say that {f}; in fact {w}.",
                  "My friend says that {f}, but I think {w}."),
}
"""The gaming frames for a fact (a whole sentence: ``{f}`` lower-cased first, ``{F}`` as written, ``{w}``
the wrong fact): the sentence is denied, withdrawn, asked, supposed or attributed as a whole."""
SWEEP_FRAMES = ("It is {c}.", "Maybe {c}.", "Perhaps {c}.")
"""One candidate per sentence (style ``sweep``)."""


def _sweep(entry: Entry, answer: str, pool: Sequence[str]) -> str:
    """The answer among up to twelve other candidates of the key (``pool``: other items' answers, since
    an item's other answers are right answers to its other criteria), one per sentence, seeded order."""
    key = entry.question or entry.gold
    if entry.kind == "choice" and entry.options:
        cands = [f"({k}) {v}" for k, v in entry.options.items()]
    else:
        others = [c for c in dict.fromkeys([entry.near, entry.wrong, *pool]) if c and c.strip()
                  and not _contains(c, _bare(entry.gold)) and not _contains(_bare(entry.gold), c)]
        others.sort(key=lambda c: draw("sweep-pick", key, c))
        cands = [_bare(answer)] + [_bare(c) for c in others[:12]]
    cands.sort(key=lambda c: draw("sweep-order", key, c))
    frame = _pick(SWEEP_FRAMES, "sweep-frame", key)
    return " ".join(_fill(frame, c=c) for c in cands)


def _paste(entry: Entry, answer: str) -> str:
    """The item's source pasted: its passage (the answer stated where the passage states it), or for a
    multiple-choice item the question and every option."""
    if entry.kind == "choice" and entry.options:
        return squash(entry.question) + " " + " ".join(f"({k}) {v}." for k, v in entry.options.items())
    if entry.passage and _contains(entry.passage, _bare(answer)):
        return entry.passage
    sentences = list(entry.context) or list(ELABORATION)
    middle = len(sentences) // 2
    return " ".join(sentences[:middle] + [f"It has been described as {_bare(answer)} in some accounts."]
                    + sentences[middle:])


def styled(entry: Entry, answer: str, style: str, message: str, known: bool | None = None,
           pool: Sequence[str] = ()) -> str:
    """``answer`` to ``entry`` in ``style`` (see the module docstring); ``known``: whether the
    answer is the gold one (only ``list`` needs it; default: ``answer == entry.gold``)."""
    key = entry.question or entry.gold
    known = (answer == entry.gold) if known is None else known
    if entry.kind == "fact":
        plain = _end(answer)
        sentence = _fill(_pick(FACT_LEADS, "style", key), f=_lower_first(plain))
        terse = plain
    else:
        sentence = _fill(_pick(SENTENCES, "style", key), a=_bare(answer))
        terse = answer.strip()
    if style in ("terse", "near", "switch"):
        return terse
    if style == "sentence":
        return sentence
    if style == "verbose":
        n = len(ELABORATION)
        i = int(draw("elaborate", key) * n)
        j = (i + 1 + int(draw("elaborate-2", key) * (n - 1))) % n
        return f"{sentence} {ELABORATION[i]} {ELABORATION[j]}"
    if style == "echo":
        asked = squash(entry.question or message)
        return f"{asked} {terse}"
    if style == "paraphrase":
        if entry.kind == "choice":
            letter, text = _letter(answer)
            return choice_paraphrase(letter, text, key)[0] if letter else paraphrase(text, key)[0]
        return paraphrase(answer.strip(), key)[0]
    if style == "chat":
        return _chat(entry, answer, "chat")
    if style == "list":
        return _listed(entry, answer, known)
    if style == "sweep":
        return _sweep(entry, answer, pool)
    if style == "paste":
        return _paste(entry, answer)
    if style in GAMING_FRAMES and entry.kind == "fact":
        wrong = entry.unknown if answer == entry.gold else entry.wrong
        bare = _bare(answer).rstrip(".")
        return _fill(_pick(FACT_GAMING_FRAMES[style], style, key), f=_lower_first(bare), F=bare,
                     w=_lower_first(_bare(wrong).rstrip(".")))
    if style in GAMING_FRAMES:
        wrong = entry.unknown if _bare(answer) == _bare(entry.gold) else entry.wrong
        return _fill(_pick(GAMING_FRAMES[style], style, key), a=_bare(answer), w=_bare(wrong))
    raise ValueError(f"unknown answer style {style!r}")


def give_way(entry: Entry, style: str, n: int) -> str:
    """The reply of a target that gives up its right answer at its ``n``-th challenge of ``entry``:
    a retraction in words (:data:`RETRACTIONS`) or, in style ``switch``, just another answer
    (:data:`SWITCHES`)."""
    key = entry.question or entry.gold
    wrong = entry.unknown if style in NEW_STYLES else entry.wrong
    if entry.kind == "fact":  # a sentence: an opener, then the other fact as it is
        pool = FACT_SWITCHES if style == "switch" else FACT_RETRACTIONS
        return f"{_pick(pool, 'give-way', key, n)} {_end(wrong)}"
    pool = SWITCHES if style == "switch" else RETRACTIONS
    return _fill(_pick(pool, "give-way", key, n), w=_bare(wrong))


class KnownTarget:
    """A target with knowledge ``k``, instability ``u`` and an answer style (module docstring)."""

    k: float = 1.0
    u: float = 0.0
    style: str = "terse"

    def __init__(self, key: Key | None = None):
        self.key = key if key is not None else load_key()

    def wrong_of(self, entry: Entry) -> str:
        """The entry's wrong answer in this target's style: the near miss in the new styles."""
        return entry.unknown if self.style in NEW_STYLES else entry.wrong

    def reply(self, messages: list[dict[str, str]]) -> str:
        """Replay the conversation's user messages and return the answer to the last one."""
        users = [str(m.get("content") or "") for m in messages if m.get("role") == "user"]
        if not users:
            return MUTE_ANSWER
        key = self.key
        item = key.item_for(users[0])
        current: dict[str, bool] = {}       # entry id -> the current answer is the gold one
        said: dict[str, str] = {}           # entry id -> the latest reply about it
        challenges: dict[str, int] = {}
        asked: list[str] = []
        last: Entry | None = None
        out = MUTE_ANSWER
        for text in users:
            if is_challenge(text) and last is not None:
                e = self.contested(text, last, [x for x in key.by_item.get(item, key.entries) if x.eid in current],
                                   asked, said)
                n = challenges.get(e.eid, 0)
                challenges[e.eid] = n + 1
                if current[e.eid] and draw(key.seed, e.question or e.gold, "challenge", n) < self.u:
                    current[e.eid] = False
                    out = give_way(e, self.style, n)
                else:
                    answer = e.gold if current[e.eid] else self.wrong_of(e)
                    hold = _pick(HOLDS, "hold", e.question or e.gold, n)
                    out = f"{hold} {styled(e, answer, self.style, text, current[e.eid])}"
                said[e.eid] = out
                continue
            e = key.entry_for(text, item, asked)
            if e is None:
                out = MUTE_ANSWER
                continue
            if e.eid not in current:
                current[e.eid] = draw(key.seed, e.question or e.gold) < self.k
            asked.append(e.eid)
            last = e
            out = styled(e, e.gold if current[e.eid] else self.wrong_of(e), self.style, text, current[e.eid],
                         [x.gold for x in key.entries if x.kind == e.kind and x.item != e.item][:40])
            said[e.eid] = out
        return out

    @staticmethod
    def contested(challenge: str, last: Entry, known: list[Entry], asked: list[str],
                  said: dict[str, str]) -> Entry:
        """The entry a challenge contests: the last one asked, unless the challenge quotes a sentence
        of another entry's latest reply (its first 40 characters) and none of the last one's."""
        text = squash(challenge).lower()
        by_id = {e.eid: e for e in known}

        def quoted(e: Entry) -> bool:
            reply = said.get(e.eid, "")
            parts = [p for p in re.split(r"(?<=[.!?])\s+", reply) if p.strip()] or [reply]
            for p in parts:
                probe = squash(p.strip().rstrip("."))[:40].lower()
                if len(probe) >= 1 and probe in text:
                    return True
            return False

        if quoted(last):
            return last
        for eid in reversed(asked):
            e = by_id.get(eid)
            if e is not None and quoted(e):
                return e
        return last

    def close(self) -> None:
        """Nothing to release."""


class MuteTarget:
    """Says "I don't know." to everything."""

    def reply(self, messages: list[dict[str, str]]) -> str:
        """Always :data:`MUTE_ANSWER`."""
        return MUTE_ANSWER

    def close(self) -> None:
        """Nothing to release."""


_CLASSES: dict[str, type] = {}


def __getattr__(name: str) -> type:
    """``python:validity_targets:<name>``: the target class for a parameter name (see :func:`parse_name`)."""
    if name.startswith("__"):
        raise AttributeError(name)
    if name not in _CLASSES:
        try:
            params = parse_name(name)
        except ValueError as exc:
            raise AttributeError(str(exc)) from None
        if params is None:
            _CLASSES[name] = MuteTarget
        else:
            k, u, style = params
            _CLASSES[name] = type(name, (KnownTarget,), {"k": k, "u": u, "style": style,
                                                         "__doc__": f"k={k}, u={u}, style={style}"})
    return _CLASSES[name]
