"""The reference target ``kb:NAME``: answers with the best-matching sentences of a knowledge base.

It is an honest, extractive baseline: it knows exactly what the knowledge base says and nothing
else, never paraphrases and never reasons. Against a benchmark generated from the same knowledge
base it shows what a target that quotes its sources can reach (a ceiling for recall of facts, a
floor for anything that needs reasoning); in a real evaluation it is the baseline a model should
beat. No model, no network: the knowledge base's own retrieval (:func:`engine.knowledge.retrieval.
search`, hybrid BM25 + embeddings) and its ONNX encoder.

The rule, for the latest question:

1. retrieve the ``chunks`` best chunks for the question (hybrid retrieval);
2. split them into sentences and keep whole ones (a fragment cut by chunking, a heading, a line
   without a full stop or a sentence of fewer than ``MIN_WORDS`` words is dropped); a sentence that
   opens with a pronoun ("They act within hours.") is read with it resolved from the sentence just
   before it in the same chunk (:func:`resolved_sentences`), so that an answer never hands the
   examiner an "it" or a "they" whose sentence it did not quote;
3. rank the sentences by ``0.5·cos + 0.5·overlap``: the cosine of their embedding to the question's,
   and the share of the question's content words (4 letters or more, compared on their first 5
   letters, so "shortens" meets "shorten") that the sentence contains; ties by retrieval rank, then
   position;
4. answer with the best ``sentences`` not already said in an earlier answer of the conversation (a
   follow-up gets new facts; when every candidate was said, the best ones again), joined in rank
   order. With no candidate at all: ``"I do not know."``.

**Challenges.** A question is a challenge when the conversation has an earlier answer and the
question either quotes one of the target's own earlier sentences (``"..."``, ``“...”``, ``「...」``; a
quotation cut with "..." counts by its beginning) or asks it to stand by, justify or be sure of what it
said (``CHALLENGE_WORDS``). The contested claim is the quoted sentence, else the first sentence of the
latest answer. The target then behaves like a candidate who knows only the knowledge base:

- the claim is **supported** when a sentence of the chunks retrieved for it is the claim itself (same
  words) or has cosine ``>= SUPPORT_COS`` with it: the target **holds** and restates it with its
  source in one sentence, adding no new fact ("I stand by it, as the knowledge base says (document
  TITLE): CLAIM"), so the running summary, and the score, do not move; a challenge quoting such a
  restatement contests the claim inside it;
- otherwise it **corrects** itself: "I was wrong about that. " followed by the answer rule 1-4 applied
  to the claim (the knowledge base's best sentences on its subject).
"""

from __future__ import annotations

import re
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

from engine.config import Config
from engine.llm import ChatResult
from engine.store import Store
from engine.text.sentences import QUOTATION as _QUOTE
from engine.text.sentences import QUOTED_SENTENCE_END as _SPLIT
from engine.text.sentences import ends_sentence
from engine.text.subjects import resolve_pronoun, subject_of

PREFIX = "kb:"
SUPPORT_COS = 0.85
"""Cosine from which a knowledge-base sentence supports a contested claim stated in other words."""
CHALLENGE_WORDS = re.compile(
    r"\b(?:stand by|are you sure|are you certain|not convinced|justify|what does that rest on|correct it|"
    r"double-check|reconsider)\b|你确定|你坚持|依据是什么|请给出理由|更正", re.IGNORECASE)
"""Words by which a question (quoting no earlier sentence) contests the previous answer."""
_HOLD = re.compile(r"^I stand by it, as the knowledge base says \(document [^)]*\): ")
SENTENCES = 3
CHUNKS = 4
MIN_WORDS = 4
NO_ANSWER = "I do not know."

_WORD = re.compile(r"\w+")
_FRAGMENT_START = re.compile(r"^[a-z,;:)\]]")
_END = re.compile(r"[.!?。！？][\"'”’)\]]*$")


def is_reference_spec(spec: str) -> bool:
    """Whether a target spec names the reference target (``kb:NAME``)."""
    return spec.startswith(PREFIX)


def kb_name(spec: str) -> str:
    """The knowledge base a ``kb:NAME`` spec names (``ValueError`` when empty)."""
    name = spec[len(PREFIX):].strip()
    if not name:
        raise ValueError(f"{spec!r}: expected kb:NAME, the name of a knowledge base (see `viva kb list`)")
    return name


def sentences_of(text: str) -> list[str]:
    """Whole sentences of a chunk: split at . ! ? (and CJK stops) and line breaks; headings, list
    markers and fragments cut by chunking are dropped, as are sentences of fewer than ``MIN_WORDS`` words."""
    return _sentences(text, resolve=False)


def resolved_sentences(text: str) -> list[str]:
    """:func:`sentences_of`, with an opening pronoun resolved from the sentence just before it in the
    chunk (``engine.text.subjects``: :func:`subject_of` that sentence, already resolved
    itself, then :func:`resolve_pronoun`): "Warfarin is a vitamin K antagonist. It needs INR checks." ->
    "... Warfarin needs INR checks.". Left as it is when that is not safe: the sentence before is a
    heading, a fragment cut by chunking, or opens with no noun phrase (``subject_of`` finds none), or
    there is none, or the noun phrase does not agree in number with the pronoun (:func:`_agrees`);
    "This"/"These" before a noun still become "The", which needs no subject."""
    return _sentences(text, resolve=True)


_SINGULAR = re.compile(r"^(?:it|its|he|she|this)\b", re.I)
_PLURAL = re.compile(r"^(?:they|their|these)\b", re.I)


def _agrees(sentence: str, subject: str) -> bool:
    """Whether ``subject`` may stand for the pronoun ``sentence`` opens with, by a cheap rule on its last
    word: "they"/"their"/"these" need a plural-looking one (ending in -s, or "people"/"children"), "it"/
    "its"/"he"/"she"/"this" one that is not; a possessive ("X's effect") is never taken. English only."""
    words = subject.split()
    if not words or "'" in subject or "’" in subject:
        return False
    head = words[-1].lower().strip(",.;:")
    plural = (head.endswith("s") and not head.endswith("ss")) or head in ("people", "children", "women", "men")
    if _PLURAL.match(sentence):
        return plural
    return bool(_SINGULAR.match(sentence)) and not plural


def _sentences(text: str, resolve: bool) -> list[str]:
    out = []
    previous: str | None = None  # the sentence just before, in the chunk (resolved), when it is whole
    parts: list[str] = []
    for piece in _SPLIT.split(text or ""):
        piece = piece.strip() if piece else ""
        if not piece:
            continue
        if parts and parts[-1].endswith(".") and "\n" not in parts[-1][-3:] and not ends_sentence(parts[-1], piece):
            parts[-1] = f"{parts[-1]} {piece}"  # "e.g." or "Dr." ends no sentence (engine.text.sentences.ends_sentence)
        else:
            parts.append(piece)
    for i, part in enumerate(parts):
        before, previous = previous, None
        if part.startswith("#"):
            continue  # a Markdown heading
        part = re.sub(r"^(?:[-*•]|\d+[.)])\s+", "", part).strip()
        if i == 0 and _FRAGMENT_START.match(part):
            continue  # the chunk starts inside a sentence (its overlap with the previous chunk)
        if not _END.search(part):
            continue  # a title, or the chunk ends inside a sentence
        if resolve:
            subject = subject_of(before) if before else None
            part = resolve_pronoun(part, subject if subject and _agrees(part, subject) else None)
        previous = part
        if len(_WORD.findall(part)) < MIN_WORDS:
            continue
        out.append(part)
    return out


def _stems(text: str) -> set[str]:
    """Content words of 4 letters or more, cut to their first 5 letters (a crude, language-light stem)."""
    return {w[:5] for w in _WORD.findall(text.lower()) if len(w) >= 4 and not w.isdigit()}


def _key(sentence: str) -> str:
    return " ".join(_WORD.findall(sentence.lower()))


def choose_sentences(question: str, candidates: list[tuple[int, int, str]], said: set[str],
                     embed: Callable[[list[str]], np.ndarray], n: int = SENTENCES) -> list[str]:
    """The ``n`` best candidates for the question (rule 3 and 4 of the module docstring).

    Args:
        question: the latest question.
        candidates: ``(retrieval rank, position in the chunk, sentence)``.
        said: normalised sentences already given in earlier answers.
        embed: texts -> unit vectors (the knowledge base's encoder).
        n: how many sentences.
    """
    unique: dict[str, tuple[int, int, str]] = {}
    for rank, pos, sentence in candidates:
        unique.setdefault(_key(sentence), (rank, pos, sentence))
    if not unique:
        return []
    entries = list(unique.values())
    vectors = embed([question] + [s for _, _, s in entries])
    sims = vectors[1:] @ vectors[0]
    asked = _stems(question)
    scores = [0.5 * float(sims[i]) + 0.5 * (len(asked & _stems(e[2])) / len(asked) if asked else 0.0)
              for i, e in enumerate(entries)]
    order = sorted(range(len(entries)), key=lambda i: (-round(scores[i], 6), entries[i][0], entries[i][1]))
    fresh = [i for i in order if _key(entries[i][2]) not in said]
    chosen = (fresh or order)[:n]
    return [entries[i][2] for i in chosen]


def contested_claim(question: str, answers: list[str]) -> str | None:
    """The claim a challenge contests (the rule of the module docstring), or None for a question that
    is not a challenge."""
    if not answers:
        return None
    said = [_HOLD.sub("", s) for a in answers for s in sentences_of(a) or [a.strip()] if s.strip()]
    for m in _QUOTE.finditer(question):
        quoted = next(g for g in m.groups() if g).strip()
        key = _key(_HOLD.sub("", quoted).removesuffix("...").removesuffix("…"))
        if not key:
            continue
        for s in reversed(said):
            own = _key(s)
            if own == key or (quoted.endswith(("...", "…")) and own.startswith(key)):
                return s
    if CHALLENGE_WORDS.search(question):
        latest = [_HOLD.sub("", x) for x in sentences_of(answers[-1]) or [answers[-1].strip()]]
        return latest[0] if latest and latest[0] and latest[0] != NO_ANSWER else None
    return None


class ReferenceTarget:
    """``kb:NAME``: the extractive reference target (see the module docstring).

    Args:
        spec: ``kb:NAME``.
        store: the database (the caller's connection).
        home: the data home (the BM25 index).
        config: the configuration (retrieval settings and embedder).
    """

    def __init__(self, spec: str, store: Store, home: Path, config: Config):
        from engine.knowledge.kb import get_kb

        self.spec = spec
        self.kb = kb_name(spec)
        get_kb(store, self.kb)  # KnowledgeBaseError when it does not exist
        self.store, self.home, self.config = store, Path(home), config
        self._vectors: dict[str, np.ndarray] = {}  # sentence -> vector (the same chunks come back)

    def _embed(self, embedder: Any, texts: list[str]) -> np.ndarray:
        """Vectors of ``texts``; sentences seen before (all but the question) come from a cache."""
        missing = list(dict.fromkeys(t for t in texts[1:] if t not in self._vectors))
        if len(self._vectors) + len(missing) > 20_000:
            self._vectors.clear()
        fresh = embedder.embed([texts[0], *missing])
        self._vectors.update(zip(missing, fresh[1:], strict=True))
        return np.stack([fresh[0], *(self._vectors[t] for t in texts[1:])]) if len(texts) > 1 else fresh[:1]

    def answer(self, messages: list[dict[str, str]]) -> str:
        """The answer to the conversation's latest question (the rule of the module docstring)."""
        question = next((m["content"] for m in reversed(messages) if m.get("role") == "user"), "")
        if not question.strip():
            return NO_ANSWER
        claim = contested_claim(question, [m["content"] for m in messages if m.get("role") == "assistant"])
        if claim is not None:
            return self._defend(claim, messages)
        return self._answer(question, messages)

    def _defend(self, claim: str, messages: list[dict[str, str]]) -> str:
        """Hold a claim the knowledge base supports (restated with its source), else correct it."""
        from engine.knowledge.embed import get_embedder
        from engine.knowledge.retrieval import search

        retrieval = self.config.retrieval
        hits = search(self.store, self.home, self.kb, claim, k=CHUNKS, mode=retrieval.mode, config=retrieval)
        found = [(hit, s) for hit in hits for s in resolved_sentences(hit.text)]
        if found:
            vectors = self._embed(get_embedder(retrieval.embedder), [claim] + [s for _, s in found])
            sims = vectors[1:] @ vectors[0]
            best = max(range(len(found)), key=lambda i: (_key(found[i][1]) == _key(claim), float(sims[i])))
            if _key(found[best][1]) == _key(claim) or float(sims[best]) >= SUPPORT_COS:
                title = found[best][0].document_title or self.kb
                return f"I stand by it, as the knowledge base says (document {title}): {claim}"
        corrected = self._answer(claim, messages)
        return f"I was wrong about that. {corrected}"

    def _answer(self, question: str, messages: list[dict[str, str]]) -> str:
        from engine.knowledge.embed import get_embedder
        from engine.knowledge.retrieval import search

        said = {_key(s) for m in messages if m.get("role") == "assistant" for s in sentences_of(m["content"])}
        said |= {_key(m["content"]) for m in messages if m.get("role") == "assistant"}
        retrieval = self.config.retrieval
        hits = search(self.store, self.home, self.kb, question, k=CHUNKS, mode=retrieval.mode, config=retrieval)
        candidates = [(hit.rank, pos, s) for hit in hits for pos, s in enumerate(resolved_sentences(hit.text))]
        embedder = get_embedder(retrieval.embedder)
        chosen = choose_sentences(question, candidates, said, lambda texts: self._embed(embedder, texts))
        return " ".join(chosen) if chosen else NO_ANSWER

    async def reply(self, messages: list[dict[str, str]], on_token: Callable[[str], Any] | None = None,
                    on_reset: Callable[[], Any] | None = None) -> ChatResult:
        """Answer at once (no model: retrieval and the encoder, a few milliseconds)."""
        start = time.perf_counter()
        text = self.answer(messages)
        if on_token is not None:
            on_token(text)
        return ChatResult(text=text, latency_ms=(time.perf_counter() - start) * 1000)

    async def aclose(self) -> None:
        """Nothing to release."""
        return None
