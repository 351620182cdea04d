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
  A known entry is answered with its gold answer, an unknown one with the entry's plausible wrong
  answer (chosen by the harness from the same source: another question's gold answer, a wrong
  option, another item's fact).
- **Challenges.** A user message that starts with "I am not convinced" or contains "Are you sure"
  (case-insensitive) contests the entry asked last, unless it quotes another asked entry's current
  answer (its first 40 characters) and not the last one's: then that entry. If the target's current answer to it is the gold
  one, it gives way with probability ``u`` (draw ``U(seed, question, "challenge", n)`` for its
  ``n``-th challenge of that entry) and says ``"You are right, I was wrong. The answer is <wrong>."``;
  from then on its answer to that entry is the wrong one. Otherwise it holds: ``"Yes, I am sure. "``
  followed by its current answer in its style.
- **Styles.** ``terse``: the answer alone. ``sentence``: the answer inside one plain sentence.
  ``verbose``: that sentence plus two sentences of unrelated, plausible elaboration (drawn from a
  fixed pool by the question's hash). ``echo``: the question's words (the key question, without
  appended options), then the answer.
- **mute**: always ``"I don't know."``.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

KEY_ENV = "VIVA_VALIDITY_KEY"
"""Environment variable holding the path of the answer key (JSON)."""

STYLES = ("terse", "sentence", "verbose", "echo")
MUTE = "mute"
MUTE_ANSWER = "I don't know."
CHALLENGE_PREFIXES = ("i am not convinced",)
CHALLENGE_MARKERS = ("are you sure",)
RETRACTION = "You are right, I was wrong."
HOLD = "Yes, I am sure."

SENTENCE_TEMPLATES = ("The answer is {a}.", "I believe it is {a}.", "As far as I know, it is {a}.")
FACT_TEMPLATES = ("As far as I know, {f}", "I can tell you that {f}", "From what I have read, {f}")
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
    """

    eid: str
    item: int
    question: str
    gold: str
    wrong: str
    kind: str = "short"


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
                             str(e["wrong"]), str(e.get("kind", "short"))) for e in data["entries"]]
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
            "entries": [e.__dict__ for e in entries]}
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


# -- answering -----------------------------------------------------------------------------------------
def is_challenge(message: str) -> bool:
    """Whether a user message contests the previous answer (the offline kernel's wording, or "Are you sure")."""
    text = message.strip().lower()
    return text.startswith(CHALLENGE_PREFIXES) or any(m in text for m in CHALLENGE_MARKERS)


def _decapitalise(sentence: str) -> str:
    first = sentence.split(" ", 1)[0]
    if len(first) > 1 and first[0].isupper() and first[1:].islower():
        return sentence[0].lower() + sentence[1:]
    return sentence


def _end(text: str) -> str:
    text = text.strip()
    return text if text.endswith((".", "!", "?", "。")) else text + "."


def styled(entry: Entry, answer: str, style: str, message: str) -> str:
    """``answer`` to ``entry`` in ``style`` (see the module docstring)."""
    pick = draw("style", entry.question or entry.gold)
    if entry.kind == "fact":
        plain = _end(answer)
        sentence = FACT_TEMPLATES[int(pick * len(FACT_TEMPLATES))].format(f=_decapitalise(plain))
        terse = plain
    else:
        sentence = SENTENCE_TEMPLATES[int(pick * len(SENTENCE_TEMPLATES))].format(a=answer.strip().rstrip("."))
        terse = answer.strip()
    if style == "terse":
        return terse
    if style == "sentence":
        return sentence
    if style == "verbose":
        n = len(ELABORATION)
        i = int(draw("elaborate", entry.question or entry.gold) * n)
        j = (i + 1 + int(draw("elaborate-2", entry.question or entry.gold) * (n - 1))) % n
        return f"{sentence} {ELABORATION[i]} {ELABORATION[j]}"
    if style == "echo":
        asked = squash(entry.question or message)
        return f"{asked} {terse}"
    raise ValueError(f"unknown answer style {style!r}")


class KnownTarget:
    """A target with knowledge ``k``, instability ``u`` and an answer style (module docstring)."""

    k: float = 1.0
    u: float = 0.0
    style: str = "terse"

    def __init__(self, key: Key | None = None):
        self.key = key if key is not None else load_key()

    def reply(self, messages: list[dict[str, str]]) -> str:
        """Replay the conversation's user messages and return the answer to the last one."""
        users = [str(m.get("content") or "") for m in messages if m.get("role") == "user"]
        if not users:
            return MUTE_ANSWER
        key = self.key
        item = key.item_for(users[0])
        current: dict[str, bool] = {}       # entry id -> the current answer is the gold one
        challenges: dict[str, int] = {}
        asked: list[str] = []
        last: Entry | None = None
        out = MUTE_ANSWER
        for text in users:
            if is_challenge(text) and last is not None:
                e = self.contested(text, last, [x for x in key.by_item.get(item, key.entries) if x.eid in current],
                                   asked, current)
                n = challenges.get(e.eid, 0)
                challenges[e.eid] = n + 1
                if current[e.eid] and draw(key.seed, e.question or e.gold, "challenge", n) < self.u:
                    current[e.eid] = False
                    wrong = e.wrong.strip().rstrip(".")
                    out = f"{RETRACTION} {wrong}." if e.kind == "fact" else f"{RETRACTION} The answer is {wrong}."
                else:
                    out = f"{HOLD} {styled(e, e.gold if current[e.eid] else e.wrong, self.style, text)}"
                continue
            e = key.entry_for(text, item, asked)
            if e is None:
                out = MUTE_ANSWER
                continue
            if e.eid not in current:
                current[e.eid] = draw(key.seed, e.question or e.gold) < self.k
            asked.append(e.eid)
            last = e
            out = styled(e, e.gold if current[e.eid] else e.wrong, self.style, text)
        return out

    @staticmethod
    def contested(challenge: str, last: Entry, known: list[Entry], asked: list[str],
                  current: dict[str, bool]) -> Entry:
        """The entry a challenge contests: the last one asked, unless the challenge quotes another
        entry's current answer (its first 40 characters) and not the last one's."""
        text = squash(challenge).lower()
        by_id = {e.eid: e for e in known}

        def quoted(e: Entry) -> bool:
            probe = squash((e.gold if current.get(e.eid) else e.wrong).strip().rstrip("."))[:40].lower()
            return bool(probe) and probe in text

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
