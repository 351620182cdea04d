"""The offline kernel's part of benchmark generation: no LLM, deterministic, explainable.

- Key sentences: retrieved chunks are split into sentences; a sentence scores by how many topic
  words it shares, whether it states something checkable (a number, a name, a definition) and
  whether it stands on its own (not opening with "It", "This", "They"...).
- Questions from templates over key sentences: "X is Y" becomes "What is X?"; otherwise the
  sentence becomes a cloze ("Fill in the blank") over a number, a name or a long content word.
  A seeded choice of user framings gives the role-play voice.
- Criteria are key facts: the sentence the question was built on, plus the key sentences most
  related to the question in text retrieved for it, each citing its chunk.

- Filters (:func:`resolve`, :func:`on_topic`, :data:`DUPLICATE_COS`, :func:`question_filter`): an
  opening pronoun is replaced by what it stands for in its chunk; a key sentence of another topic's
  chunk or subject is dropped; a question that is a near-duplicate of a kept one (cosine >=
  ``DUPLICATE_COS`` or the same key sentence) is dropped; a related fact becomes a criterion only when
  the question asks for it (two shared content words and cosine >= ``CRITERION_COS``). ``bench
  generate`` prints how many of each were dropped.

Everything is marked ``generator: offline`` so nobody mistakes it for a model's work.
"""

from __future__ import annotations

import random
import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

_SENT_SPLIT = re.compile(r"(?<=[.!?])\s+(?=[\"“(\[A-Z0-9])|(?<=[。！？；])")
_WORD = re.compile(r"[A-Za-z][A-Za-z'\-]+|\d+(?:[.,]\d+)?|[\u4e00-\u9fff]")
_CJK = re.compile(r"[\u4e00-\u9fff]")
_STOP = frozenset("""
a an the and or but if of to in on at by for with from as is are was were be been being it its this that these
those there their they them he she his her we our you your i me my not no do does did have has had can could
would should may might will shall than then so such also which who whom whose what when where why how all any
each other some more most many much into over under about after before between during through while very only
own same both few just one two three first new used use using well known called between because within per
""".split())
_PRONOUN_START = re.compile(r"^(?:it|this|that|these|those|they|he|she|his|her|its|their|such|there|here|"
                            r"however|also|thus|therefore|in addition|moreover)\b", re.I)
_DEFINITION = re.compile(r"^(?P<subj>(?:the |a |an )?[^,;:()]{2,60}?)\s+(?P<verb>is|are|was|were)\s+"
                         r"(?P<rest>(?:a|an|the|one|any|two|three)\b.{8,})$", re.I)
_DEFINITION_ZH = re.compile(r"^(?P<subj>[^，,；;。]{2,20}?)是(?P<rest>.{6,})$")
_NUMBER = re.compile(r"(?<![A-Z] )(?<![A-Za-z])\d[\d,.]*(?:st|nd|rd|th)?\b(?:\s?(?:%|percent|million|billion|thousand|years?|°C|K)\b)?")
_RANGE = re.compile(r"(?<![\w.])\d[\d,.]*\s*(?:to|-|–)\s*\d[\d,.]*(?:\s?(?:%|percent|mg|ml|seconds|minutes|hours|"
                    r"days|weeks|months|years)\b)?")
_NAME = re.compile(r"(?<=\s)(?:[A-Z][a-z]+(?:\s+(?:of\s+)?[A-Z][a-z]+)*)")

FRAMINGS_EN = (
    "{q}",
    "I'm studying {topic} and I'm stuck on this. {q}",
    "A colleague asked me something about {topic} I couldn't answer. {q}",
    "Quick question about {topic}: {q}",
    "I'm preparing a short briefing on {topic}. {q}",
)
FRAMINGS_ZH = (
    "{q}",
    "我正在学习{topic}，想请教一下：{q}",
    "关于{topic}，我有个问题：{q}",
)


@dataclass(frozen=True)
class KeySentence:
    """A sentence of a retrieved chunk, with its score."""

    text: str
    chunk_id: int
    score: float


@dataclass(frozen=True)
class OfflineQuestion:
    """A template question over a key sentence."""

    question: str
    persona: str
    template: str  # "definition" or "cloze"
    answer: str
    fact: KeySentence
    core: str = ""  # the question without its role-play framing


def words(text: str) -> set[str]:
    """Content words of a text, lower-cased, crude plural stripping; CJK characters count singly."""
    out = set()
    for w in _WORD.findall(text):
        w = w.lower()
        if w in _STOP:
            continue
        if len(w) > 4 and w.endswith("s") and not w.endswith("ss"):
            w = w[:-1]
        out.add(w)
    return out


def sentences(text: str) -> list[str]:
    """Split a chunk into sentences (English and CJK end punctuation)."""
    parts = [p.strip() for p in _SENT_SPLIT.split(" ".join(text.split()))]
    return [p for p in parts if p]


def score_sentence(sentence: str, topic_words: set[str]) -> float:
    """How good a sentence is as a key fact for a topic (higher is better; <= 0 unusable)."""
    cjk = bool(_CJK.search(sentence))
    length = len(sentence)
    if (cjk and not 12 <= length <= 160) or (not cjk and not 40 <= length <= 320):
        return 0.0
    if not cjk and not sentence[0].isupper() and not sentence[0].isdigit():
        return 0.0
    w = words(sentence)
    if len(w) < (5 if cjk else 4):
        return 0.0
    score = 1.0 + 2.0 * len(w & topic_words)
    if _NUMBER.search(sentence):
        score += 1.0
    if _NAME.search(sentence):
        score += 0.5
    if (_DEFINITION_ZH if cjk else _DEFINITION).match(sentence.rstrip(".。")):
        score += 1.5
    if _PRONOUN_START.match(sentence):
        score -= 2.5
    return score


def key_sentences(hits: Sequence[Any], topic_words: set[str], rng: random.Random) -> list[KeySentence]:
    """Candidate key sentences of retrieved chunks, best first (ties broken by the seeded ``rng``)."""
    found: list[KeySentence] = []
    seen: set[str] = set()
    for h in hits:
        for s in sentences(h.text):
            key = s.lower()
            if key in seen:
                continue
            seen.add(key)
            sc = score_sentence(s, topic_words)
            if sc > 0:
                found.append(KeySentence(s, h.chunk_id, sc))
    rng.shuffle(found)
    return sorted(found, key=lambda k: -k.score)


def pick_facts(candidates: Sequence[KeySentence], n: int) -> list[KeySentence]:
    """Choose ``n`` key sentences, spreading them over different chunks first."""
    chosen: list[KeySentence] = []
    used_chunks: set[int] = set()
    for k in candidates:
        if len(chosen) == n:
            break
        if k.chunk_id not in used_chunks:
            chosen.append(k)
            used_chunks.add(k.chunk_id)
    for k in candidates:
        if len(chosen) == n:
            break
        if k not in chosen:
            chosen.append(k)
    return chosen


def _cloze_target(sentence: str, topic_words: set[str]) -> str | None:
    """What to blank out: a telling number, else a name, else a single digit, else a long word."""
    span = _RANGE.search(sentence)
    if span:  # "2.5 to 5 mg": the whole range, never half of it
        return span.group(0).strip(" .,")
    numbers = [m.group(0).strip(" .,") for m in _NUMBER.finditer(sentence)]
    telling = [n for n in numbers if len(re.sub(r"\D", "", n)) >= 2 or not n.isdigit()]
    if telling:
        return telling[0]
    for m in _NAME.finditer(sentence):
        if words(m.group(0)) - topic_words:
            return m.group(0)
    if numbers:
        return numbers[0]
    first = sentence.split()[0] if sentence.split() else ""
    negated = set()  # words of a clause holding a negation: the offline judge reads the clause as negated,
    for clause in re.split(r"[,;:]", sentence):  # so a blank there would never be credited
        if re.search(r"\b(?:not|never|no|cannot|n't)\b", clause, re.I):
            negated |= set(re.findall(r"[A-Za-z][A-Za-z\-]+", clause))
    candidates = [w for w in re.findall(r"[A-Za-z][A-Za-z\-]{6,}", sentence)
                  if w.lower() not in _STOP and words(w) - topic_words and w != first  # never the opening word
                  and w not in negated]
    if candidates:
        return max(candidates, key=len)
    zh = re.findall(r"[\u4e00-\u9fff]{2,4}", sentence)
    return max(zh, key=len) if zh else None


def make_question(fact: KeySentence, topic: str, topic_words: set[str], rng: random.Random) -> OfflineQuestion | None:
    """A template question over a key sentence (None when no template fits)."""
    s = fact.text.rstrip()
    cjk = bool(_CJK.search(s))
    framing = rng.choice(FRAMINGS_ZH if cjk else FRAMINGS_EN)
    body = s.rstrip(".。")
    m = (_DEFINITION_ZH if cjk else _DEFINITION).match(body)
    if m and not _PRONOUN_START.match(m.group("subj")):
        subj = m.group("subj").strip()
        if cjk:
            q = f"{subj}是什么？"
        else:
            first, _, rest = subj.partition(" ")
            if first.lower() in ("the", "a", "an"):
                subj = f"{first.lower()} {rest}".strip()
            elif first[:1].isupper() and first[1:].islower() and not _NAME.match(" " + rest):
                subj = subj[0].lower() + subj[1:]  # a sentence's capital ("Annual vaccination"), not a name
            q = f"What {m.group('verb').lower()} {subj}?"
        return OfflineQuestion(framing.format(q=q, topic=topic), _persona(framing), "definition", s, fact, q)
    target = _cloze_target(s, topic_words)
    if not target or target not in s:
        return None
    blanked = s.replace(target, "____", 1)
    q = f"请填空：「{blanked}」" if cjk else f'Fill in the blank: "{blanked}"'
    return OfflineQuestion(framing.format(q=q, topic=topic), _persona(framing), "cloze", target, fact, q)


def _persona(framing: str) -> str:
    if "studying" in framing or "学习" in framing:
        return "student"
    if "colleague" in framing:
        return "practitioner"
    if "briefing" in framing:
        return "analyst"
    return "user"


def related_facts(question: str, hits: Sequence[Any], exclude: str, topic_words: set[str], limit: int
                  ) -> list[KeySentence]:
    """Key sentences of text retrieved for a question that share the most words with it (and with the
    fact it was built on, passed as ``exclude``), at least two."""
    qwords = words(question) | words(exclude)
    scored = []
    for h in hits:
        for s in sentences(h.text):
            if s == exclude or score_sentence(s, topic_words | qwords) <= 0:
                continue
            overlap = len(words(s) & qwords)
            if overlap >= 2:
                scored.append((overlap, -h.rank, KeySentence(s, h.chunk_id, float(overlap))))
    scored.sort(key=lambda t: (-t[0], -t[1]))
    out: list[KeySentence] = []
    for _, _, k in scored:
        if all(k.text != o.text for o in out):
            out.append(k)
        if len(out) == limit:
            break
    return out


# -- filters: pronouns, topic, near-duplicates, question-level criteria ----------------------------

DUPLICATE_COS = 0.9
"""Two generated items are near-duplicates when their questions (without role-play framing) have an
embedding cosine of at least this, or are built on the same key sentence: the later one is dropped.
Measured on the demo knowledge base (all-MiniLM-L6-v2 int8): two framings of one fact score 0.93 to
1.0, questions on different facts of one document at most 0.8."""

CRITERION_COS = 0.6
"""Stage 2: a related fact becomes a criterion of a question only when its cosine with the question
(without framing) is at least this, besides sharing two content words with it. Measured on the
anticoagulation and demo knowledge bases of docs/examiner-evidence.md: facts the question asks about
(the reversal of the same drug, what to do when the same condition is suspected) score 0.6 to 0.8,
facts it does not ask (HIT timing for a question on the route of heparin) 0.5 to 0.56."""


def resolve(sentence: str, chunk_text: str, topic: str) -> str:
    """A key sentence with an opening pronoun replaced by what it stands for in its chunk
    (:func:`engine.interview.offline_questions.chunk_subject`; the topic when nothing else is found)."""
    from engine.interview.offline_questions import chunk_subject, resolve_pronoun

    if not re.match(r"^(?:it|they|this|these|its|their|he|she)\b", sentence, re.I):
        return sentence
    return resolve_pronoun(sentence, chunk_subject(chunk_text, sentence, topic))


def topic_names(name: str) -> set[str]:
    """The content words of a topic's name (what an on-topic item must be about)."""
    return words(name)


def chunk_heading(chunk_text: str, title: str = "") -> str:
    """What a chunk is about by its own label: its first Markdown heading, else its document's title."""
    for line in (chunk_text or "").splitlines():
        if line.lstrip().startswith("#"):
            return line.lstrip("# ").strip()
    return title or ""


def on_topic(sentence: str, chunk_text: str, topic: str, other_topics: Sequence[str] | dict[str, str], title: str = "",
             description: str = "") -> tuple[bool, str]:
    """Whether a key sentence belongs to its topic, and why (the rule, in order):

    0. its chunk's heading (or document title) does not name the topic, and names another topic, or
       shares more words with another topic's name and description than with this one's: off topic
       (a "warfarin" item taken from the bridging or the DOAC document, a "hand hygiene" item from
       the influenza one);
       its subject (the words before its first verb) names none of the topic's words and two or more
       of another topic's name and description: off topic ("Direct oral anticoagulants act within
       hours..." is not a warfarin item). ``other_topics`` maps names to descriptions (a plain list of
       names skips the subject test);
    1. it names a word of the topic's name: on topic;
    2. it names a word of another topic's name that the topic's name lacks: off topic (a "doacs"
       item about warfarin);
    3. its chunk names a word of the topic's name: on topic; otherwise off topic.
    """
    own = topic_names(topic)
    heading = words(chunk_heading(chunk_text, title))
    described = other_topics if isinstance(other_topics, dict) else {o: "" for o in other_topics}
    if heading and not heading & own:
        mine = len(heading & words(f"{topic} {description}"))
        for other, about in described.items():
            if heading & (topic_names(other) - own) or len(heading & words(f"{other} {about}")) > mine:
                return False, f"its chunk is about {other!r}"
    from engine.interview.offline_questions import subject_of

    subject = words(subject_of(sentence) or "")
    if subject and not subject & own:
        for other, described in other_topics.items() if isinstance(other_topics, dict) else []:
            if len(subject & (words(f"{other} {described}") - own)) >= 2:
                return False, f"its subject is {other!r}'s"
    have = words(sentence)
    if have & own:
        return True, "names the topic"
    for other in other_topics:
        foreign = topic_names(other) - own
        if have & foreign:
            return False, f"about {other!r}, not {topic!r}"
    if words(chunk_text) & own:
        return True, "its chunk names the topic"
    return False, f"neither the sentence nor its chunk names {topic!r}"


def question_filter(question: str, facts: Sequence[KeySentence], cosines: Sequence[float], exclude: str
                    ) -> tuple[list[KeySentence], int]:
    """Stage 2 of the criteria: the facts the question asks for. A fact is kept when it shares at least
    two content words with the question itself (not with the fact the question was built on) and its
    cosine with the question is at least :data:`CRITERION_COS`; returns (kept, how many dropped)."""
    qwords = words(question)
    kept, dropped = [], 0
    for fact, cos in zip(facts, cosines, strict=True):
        if fact.text == exclude:
            continue
        if len(words(fact.text) & qwords) >= 2 and cos >= CRITERION_COS:
            kept.append(fact)
        else:
            dropped += 1
    return kept, dropped
