"""Targets of KNOWN knowledge and robustness for the examination bench (``bench/examination.py``).

A target knows a seeded share ``k`` of a knowledge base's sentences (the documents in
``$VIVA_EXAM_DOCS``, Markdown or text, read whole; an opening pronoun is resolved from the sentence
before it by the reference target's rule, as a person who read the text would say it). It answers the
way issue 33 asks: **one sentence per question**, the known sentence that best matches the question
(``0.5·cos + 0.5·word overlap`` with the real ONNX encoder, the reference target's ranking), not said
before, and only when it is about the question (its score at least half the best score of any sentence
of the documents); else "I do not know.".

Challenged (a question that quotes one of its sentences, or asks whether it is sure / stands by it / which
claim it is least sure of, which contests its last claim):

- a **holding** target (``hold``) keeps its claim, in one of seven phrasings, restating it (one a polite
  hedge: "I understand the doubt, but ..."), or, when the examiner proposed another value, one of two
  more that name that value only to deny it ("No, it was 1810, not 1811. ...", "You may have read 1811,
  but that is wrong. ...");
- a **yielding** target (``yield``) gives it up, in one of seven phrasings drawn per challenge: a
  concession that takes the examiner's alternative ("You're right, it was X."), an apology with the
  claim restated with another value, a change word ("On reflection, ..."), a **silent switch** to
  another value (the claim restated with it, nothing else: another number, else another name of the
  documents in place of its last name), a withdrawal ("I'm not sure any more."), a doubt with no
  other value ("I might be wrong about that.", "I can't recall it exactly any more."),
  and a plain retraction ("Sorry, I think I got that wrong."). Having given a claim up it keeps the
  new belief: asked for that fact again, it says the switched sentence (or "I am not sure.").

Class names carry the parameters: ``k1_00_hold``, ``k0_50_hold``, ``k0_00_hold``, ``k1_00_yield``
(``python:bench.exam_targets:k1_00_hold``). Nothing here reads viva's rubric or criteria: a target
knows the documents, never the answers the examiner expects.
"""

from __future__ import annotations

import hashlib
import os
import re
from functools import lru_cache
from pathlib import Path

import numpy as np

NO_ANSWER = "I do not know."
HOLDS = ("Yes, I am sure. {claim}", "I stand by it: {claim}", "That is correct. {claim}",
         "I am confident about this. {claim}", "Yes. As I said: {claim}", "I maintain my answer: {claim}",
         "I understand the doubt, but {claim_lower}")
AGAINST = ("No, it was {value}, not {alt}. {claim}", "You may have read {alt}, but that is wrong. {claim}")
"""Holds that name the examiner's alternative only to deny it (when the challenge proposed one)."""
DOUBTS = ("I might be wrong about that.", "I can't recall it exactly any more.")
CHALLENGE = re.compile(r"\b(?:are you sure|stand by|are you certain|justify|correct it|i do not think that is right|"
                       r"i have read|least sure)\b", re.I)
_QUOTE = re.compile(r'"([^"]{2,})"|“([^”]{2,})”')
_ALTERNATIVE = re.compile(r"I have read that it was (?P<alt>.+?), not (?P<value>.+?)\. Are you sure\?")
_NUMBER = re.compile(r"(?<![\w.,])\d{1,3}(?:,\d{3})+(?!\d)|(?<![\w.,])\d+(?:\.\d+)?(?!\d)")
_WORD = re.compile(r"\w+")


def draw(*parts: object) -> float:
    """A seeded uniform draw in [0, 1) from stable parts."""
    digest = hashlib.sha256("|".join(str(p) for p in parts).encode()).digest()
    return int.from_bytes(digest[:8], "little") / 2 ** 64


_CATALOGUES = frozenset({"topics.yaml", "topics.yml"})
"""The bench's catalogue of a knowledge base's topics (``bench/examination.py --topics``, by default DOCS/topics.yaml):
not one of its documents, now that YAML is a source format."""


@lru_cache(maxsize=4)
def document_sentences(folder: str) -> tuple[str, ...]:
    """Every whole sentence of the documents in ``folder``, pronouns resolved within each paragraph."""
    from engine.interview.reference import resolved_sentences
    from engine.knowledge.ingest import SUPPORTED_SUFFIXES, ReadReport, iter_file
    from engine.text.sentences import text_blocks

    out: list[str] = []
    texts: list[str] = []
    for path in sorted(Path(folder).glob("*")):
        if path.name.lower() in _CATALOGUES:
            continue  # the bench's list of topics, not a document the target learnt
        if path.suffix.lower() in (".md", ".txt"):
            texts.append(path.read_text(encoding="utf-8"))
        elif path.suffix.lower() in SUPPORTED_SUFFIXES:  # JSON, JSON Lines, CSV: each record as the product reads it
            texts += [doc.text for doc in iter_file(path, ReadReport())]
    for text in texts:
        for para in re.split(r"\n\s*\n", text):
            # read as the product reads a passage (engine.text.sentences.text_blocks): a heading is not a
            # sentence, each item of a list is its own unit, an item nested under a bare label is read under it
            for block in text_blocks(para):
                out += resolved_sentences(block)
    return tuple(dict.fromkeys(out))


@lru_cache(maxsize=4)
def _vectors(folder: str) -> np.ndarray:
    from engine.knowledge.embed import get_embedder

    return get_embedder().embed(list(document_sentences(folder)))


def _stems(text: str) -> set[str]:
    return {w[:5] for w in _WORD.findall(text.lower()) if len(w) >= 4 and not w.isdigit()}


_NAME = re.compile(r"(?<=[a-z,;] )[A-Z][\w'’-]+(?:\s+(?:de|of|the)?\s*[A-Z][\w'’-]+)*")


def switched_name(sentence: str, names: list[str], salt: str) -> str | None:
    """The sentence with its last name (a capitalised run inside it) replaced by another name of the
    documents, or None when it holds none."""
    found = list(_NAME.finditer(sentence))
    if not found:
        return None
    m = found[-1]  # the last name: what the sentence says of its subject, not the subject itself
    others = [n for n in names if n != m.group(0) and n not in sentence]
    if not others:
        return None
    other = others[int(draw(salt, "name") * len(others))]
    return sentence[:m.start()] + other + sentence[m.end():]


def switched(sentence: str, alternative: str | None, salt: str, names: list[str] | None = None) -> str | None:
    """The sentence with its first number replaced by ``alternative`` (or by a nearby wrong number);
    without a number, its first name replaced by another name of the documents (``names``)."""
    m = _NUMBER.search(sentence)
    if not m:
        if alternative and not _NUMBER.fullmatch(alternative.replace(",", "").strip()):
            n = _NAME.search(sentence)
            if n:
                return sentence[:n.start()] + alternative + sentence[n.end():]
        return switched_name(sentence, names or [], salt)
    if not alternative or not _NUMBER.fullmatch(alternative.replace(",", "").strip()):
        x = float(m.group(0).replace(",", ""))
        step = max(1, round(abs(x) * 0.2)) if x < 1000 or x > 2100 else 1 + int(draw(salt) * 9)
        alternative = str(int(x + step))
    return sentence[:m.start()] + alternative + sentence[m.end():]


_YOU = re.compile(r"\byou(?:r)?\b", re.I)


def quoted_claim(question: str, said: list[str]) -> str | None:
    """Which sentence the target said (``said``, in order) a question quotes: the quote put to the target
    as its own (a "you" or "your" in the 40 characters before it: "your claim that "…"", "You said: "…"")
    before any other, then the sentence said last; None when no quote is one of its sentences. (A
    reference the examiner quotes may be a sentence the target said too: it is not the one contested.)"""
    found: list[tuple[bool, int, str]] = []
    for m in _QUOTE.finditer(question):
        quote = " ".join(next(g for g in m.groups() if g).split())
        cut = quote.endswith(("…", "..."))  # a quote the examiner shortened: its words are the sentence's start
        q = quote.rstrip(".…")
        if not q:
            continue
        mine = bool(_YOU.search(question[max(0, m.start() - 40):m.start()]))
        for at in range(len(said) - 1, -1, -1):
            own = " ".join(said[at].split()).rstrip(".…")
            if own == q or (cut and own.startswith(q)):
                found.append((mine, at, said[at]))
                break
    return max(found)[2] if found else None


class _Known:
    """A target of knowledge ``k`` that holds (``yields = False``) or gives way (see the module docstring)."""

    k = 1.0
    yields = False

    def __init__(self) -> None:
        folder = os.environ.get("VIVA_EXAM_DOCS", "")
        if not folder or not Path(folder).is_dir():
            raise RuntimeError("set VIVA_EXAM_DOCS to the folder of the knowledge base's documents")
        self.folder = folder
        self.sentences = document_sentences(folder)
        self.known = [draw("known", s) < self.k for s in self.sentences]
        self.names = sorted({m.group(0) for s in self.sentences for m in _NAME.finditer(s)})

    def _best(self, question: str, said: set[str], given_up: dict[str, str] | None = None) -> str | None:
        from engine.knowledge.embed import get_embedder

        q = get_embedder().embed([question])[0]
        sims = _vectors(self.folder) @ q
        asked = _stems(question)
        scores = [0.5 * float(sims[i]) + 0.5 * (len(asked & _stems(s)) / len(asked) if asked else 0.0)
                  for i, s in enumerate(self.sentences)]
        top = max(scores, default=0.0)
        order = sorted(range(len(scores)), key=lambda i: -scores[i])
        given_up = given_up or {}
        for i in order:
            if scores[i] < 0.5 * top:
                break
            s = self.sentences[i]
            if s in given_up and given_up[s] not in said:
                return given_up[s]  # it gave this fact up: it now says what it said instead
            if self.known[i] and s not in said and s not in given_up:
                return s
        return None

    def reply(self, messages: list[dict[str, str]]) -> str:
        """Replay the conversation (deterministic) and answer its last question."""
        users = [m.get("content") or "" for m in messages if m.get("role") == "user"]
        said: set[str] = set()
        order: list[str] = []  # what it said, in order
        given_up: dict[str, str] = {}  # sentence -> what it now says instead
        last: str | None = None
        out = NO_ANSWER
        for n, question in enumerate(users):
            claim = quoted_claim(question, order)
            if last is not None and (claim or CHALLENGE.search(question)) and CHALLENGE.search(question):
                claim = claim or last
                if claim in given_up:
                    out = given_up[claim]
                elif not self.yields:
                    m = _ALTERNATIVE.search(question)
                    frames = HOLDS + (AGAINST if m else ())
                    frame = frames[int(draw("hold", question, n) * len(frames))]
                    out = frame.format(claim=claim, claim_lower=claim[0].lower() + claim[1:],
                                       alt=m.group("alt") if m else "", value=m.group("value") if m else "")
                else:
                    out, instead = self._give_way(claim, question, n)
                    given_up[claim] = instead
                continue
            best = self._best(question, said, given_up)
            if best is None:
                out = NO_ANSWER
                continue
            said.add(best)
            order.append(best)
            last = best
            out = best
        return out

    def _give_way(self, claim: str, question: str, n: int) -> tuple[str, str]:
        m = _ALTERNATIVE.search(question)
        alt = m.group("alt") if m else None
        other = switched(claim, alt, f"{claim}|{n}", self.names)
        styles = ["concede", "apology", "reflection", "silent", "withdraw", "retract", "doubt"]
        if other is None:
            styles = ["concede", "withdraw", "retract", "doubt"]
        style = styles[int(draw("give-way", question, n) * len(styles))]
        instead = other or "I am not sure."
        if style == "concede":
            return (f"You're right, it was {alt}." if alt else "You're right, I was wrong about that."), instead
        if style == "apology":
            return f"I apologise, my mistake. {other}", instead
        if style == "reflection":
            return f"On reflection, {other[0].lower() + other[1:]}", instead
        if style == "silent":
            return other, instead
        if style == "withdraw":
            return "Hmm, I'm not sure any more.", instead
        if style == "doubt":
            return DOUBTS[int(draw("doubt", question, n) * len(DOUBTS))], instead
        return "Sorry, I think I got that wrong.", instead

    def close(self) -> None:
        """Nothing to release."""


class k1_00_hold(_Known):  # noqa: N801 - the parameters are the name
    """Knows every sentence; holds."""

    k = 1.0


class k0_50_hold(_Known):  # noqa: N801
    """Knows half the sentences (seeded); holds."""

    k = 0.5


class k0_00_hold(_Known):  # noqa: N801
    """Knows nothing."""

    k = 0.0


class k1_00_yield(_Known):  # noqa: N801
    """Knows every sentence; gives way under every challenge."""

    k = 1.0
    yields = True
