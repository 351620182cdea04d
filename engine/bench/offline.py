"""The offline kernel's part of benchmark generation: no LLM, deterministic, explainable.

- **Overview items** (the default, issue 33): the documents of the chunks retrieved for a topic are read
  whole and cut into *facets* (:func:`facets_of`): a paragraph's usable sentences, an opening pronoun
  resolved within the paragraph, sentences off the topic dropped, a paragraph with fewer than
  :data:`MIN_CRITERIA` usable sentences merged with the next one (of its section first: the text under
  one Markdown heading; headings and list markers are never part of a sentence). An item is an opening question about
  the passage's subject (:func:`opening_question`: "Who was X?" / "What is X?" for a passage that opens
  by defining it, else "What can you tell me about ASPECT?" and kin, :func:`aspect_of`) and
  :data:`MIN_CRITERIA` to :data:`MAX_CRITERIA` of its key facts as criteria (:func:`choose_facts`), each
  its own sentence citing its chunk: an interview has facts left to draw out after the opening answer.
- Key sentences (the fill when passages run out): retrieved chunks are split into sentences; a sentence
  scores by how many topic words it shares, whether it states something checkable (a number, a name, a
  definition) and whether it stands on its own (not opening with "It", "This", "They"...).
- Single-sentence questions from templates over key sentences: "X is Y" becomes "What is X?"; otherwise
  the sentence becomes a cloze ("Fill in the blank") over one value (a number, a name or a long
  content word). A seeded choice of user framings gives the role-play voice.
- Their criteria are key facts: the sentence the question was built on, plus the key sentences most
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

from engine.text.cjk import HAN, has_han
from engine.text.lexicon import BENCH_STOPWORDS, PAST_VERBS, VERBS
from engine.text.sentences import chunk_sentences as sentences
from engine.text.sentences import period_labels, plain_heading, run_in_label
from engine.text.subjects import (
    chunk_subject,
    is_person,
    opening_phrase,
    present_verb_at,
    resolve_pronoun,
    subject_of,
)
from engine.text.tokens import topic_words as words

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
    resolved: bool = False  # an opening pronoun was replaced (:func:`resolve`): not the text as written


@dataclass(frozen=True)
class OfflineQuestion:
    """A template question over a key sentence."""

    question: str
    persona: str
    template: str  # "definition" or "cloze"
    answer: str
    fact: KeySentence
    core: str = ""  # the question without its role-play framing


def score_sentence(sentence: str, topic_words: set[str]) -> float:
    """How good a sentence is as a key fact for a topic (higher is better; <= 0 unusable)."""
    cjk = has_han(sentence)
    length = len(sentence)
    if (cjk and not 12 <= length <= 160) or (not cjk and not 40 <= length <= 320):
        return 0.0
    if not cjk and not sentence[0].isupper() and not sentence[0].isdigit():
        return 0.0
    if sentence.rstrip().endswith((":", "：")):  # a lead-in to a list ("... follows these steps:") states nothing
        return 0.0
    w = words(sentence)
    if len(w) < (5 if cjk else 4):
        return 0.0
    if not cjk and _verbless_list(sentence):
        return 0.0  # "K. Ostrowska, T. R. Halloran, M. Adebayo-Finch, ...": a list of names, no statement
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


_LINKING_WORDS = frozenset("is are was were be been has have had can may must will shall should would could".split())


def _verbless_list(sentence: str) -> bool:
    """A sentence that is only a list: three items or more cut at commas and semicolons, each of at most five
    words, and no verb anywhere (an author line, an affiliation, a list of terms)."""
    items = [i for i in re.split(r"[,;]\s*", sentence.rstrip(" .")) if i.strip()]
    if len(items) < 3 or any(len(i.split()) > 5 for i in items):
        return False
    return not any(is_verb(t) or t.lower().strip(".,;:") in _LINKING_WORDS for t in sentence.split())


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


_REFERENCE_WORDS = frozenset("section subsection article part schedule chapter paragraph clause rule regulation step "
                             "table figure appendix annex page item".split())
"""Words that, before a number, point to another part of a text ("Section 3", "step 5"): no fact to blank."""


def _cloze_target(sentence: str, topic_words: set[str]) -> str | None:
    """What to blank out: a telling number, else a name, else a single digit, else a long word."""
    span = _RANGE.search(sentence)
    if span:  # "2.5 to 5 mg": the whole range, never half of it
        return span.group(0).strip(" .,")
    numbers = [m.group(0).strip(" .,") for m in _NUMBER.finditer(sentence)
               if not re.search(r"\b(?:" + "|".join(_REFERENCE_WORDS) + r")s?\s*$", sentence[:m.start()], re.I)]
    telling = [n for n in numbers if len(re.sub(r"\D", "", n)) >= 2 or not n.isdigit()]
    if telling:
        return telling[0]
    for m in _NAME.finditer(sentence):
        if words(m.group(0)) - topic_words and not (m.group(0).lower() in _REFERENCE_WORDS
                                                    and re.match(r"\s*\d", sentence[m.end():])):
            return m.group(0)  # (never a cross-reference's word: "in breach of ____ 3 or Section 4")
    if numbers:
        return numbers[0]
    first = sentence.split()[0] if sentence.split() else ""
    negated = set()  # words of a clause holding a negation: the offline judge reads the clause as negated,
    for clause in re.split(r"[,;:]", sentence):  # so a blank there would never be credited
        if re.search(r"\b(?:not|never|no|cannot|n't)\b", clause, re.I):
            negated |= set(re.findall(r"[A-Za-z][A-Za-z\-]+", clause))
    candidates = [w for w in re.findall(r"[A-Za-z][A-Za-z\-]{6,}", sentence)
                  if w.lower() not in BENCH_STOPWORDS and words(w) - topic_words and w != first  # never the opening word
                  and w not in negated and w.lower() not in _REFERENCE_WORDS]
    if candidates:
        return max(candidates, key=len)
    zh = re.findall(f"[{HAN}]{{2,4}}", sentence)
    return max(zh, key=len) if zh else None


def make_question(fact: KeySentence, topic: str, topic_words: set[str], rng: random.Random) -> OfflineQuestion | None:
    """A template question over a key sentence (None when no template fits)."""
    s = fact.text.rstrip()
    cjk = has_han(s)
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


def _framed(framing: str, q: str, bare: str, topic: str) -> str:
    """The question in its role-play framing. ``q`` names the topic where the question alone would not
    ("In connection with Tetanus, what do you know about treatment?"); a framing that names the topic itself
    ("Quick question about Tetanus: ...") takes the question without that prefix (``bare``), so the topic is
    not named twice in one breath."""
    return framing.format(q=bare if "{topic}" in framing else q, topic=topic)


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


def opens_with_pronoun(sentence: str) -> bool:
    """Whether a sentence opens with a pronoun (one :func:`resolve` could not resolve): not a fact on its own."""
    return bool(_PRONOUN_START.match(sentence))


def resolve(sentence: str, chunk_text: str, topic: str) -> str:
    """A key sentence with an opening pronoun replaced by what it stands for in its chunk
    (:func:`engine.text.subjects.chunk_subject`; the topic when nothing else is found)."""
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
    3. its chunk names a word of the topic's name: on topic;
    4. its chunk shares two or more words with the topic's name and description, more than with any
       other topic's (a formulary's rows, which never say "formulary"): on topic; otherwise off topic.
    """
    own = topic_names(topic)
    heading = words(chunk_heading(chunk_text, title))
    described = other_topics if isinstance(other_topics, dict) else {o: "" for o in other_topics}
    if heading and not heading & own:
        mine = len(heading & words(f"{topic} {description}"))
        for other, about in described.items():
            if heading & (topic_names(other) - own) or len(heading & words(f"{other} {about}")) > mine:
                return False, f"its chunk is about {other!r}"
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
    told = words(chunk_text)
    if told & own:
        return True, "its chunk names the topic"
    mine = len(told & words(f"{topic} {description}"))
    others = other_topics.items() if isinstance(other_topics, dict) else []
    if description and mine >= 2 and all(len(told & words(f"{o} {d}")) < mine for o, d in others):
        # a passage that never names its subject's field (a formulary's rows: "The adult dose of X is ...")
        return True, "its chunk shares more words with the topic's description than with any other topic's"
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


# -- items worth an interview: facets of a document, an opening question, 3 to MAX_CRITERIA facts -------

MIN_CRITERIA = 3
"""The fewest key facts an overview item holds: an interview needs facts left to ask after the opening
answer. A paragraph with fewer usable sentences is merged with the next paragraph of its document."""

MAX_CRITERIA = 4
"""The most key facts an overview item holds. With the default six turns (the opening question and five
policy turns) a target that knows every fact and says one per question can state four of them even when
the policy spends a turn or two on challenges; a fifth or sixth fact would measure the policy's draws,
not the target."""

_LEADING_ADVERBIAL = re.compile(r"^(?:in|on|by|since|from|during|until|after|before|around)\s+(?:the\s+)?"
                                r"(?:\d{1,2}(?:st|nd|rd|th)?\s+)?(?:[A-Z][a-z]+\s+)?\d{2,4}s?,?\s+", re.I)
_NP_STOP = frozenset("""in on at by to for with from when while which who whom whose that where because since
after before during until as than and but or if so into onto over under about between within without""".split())
OPENINGS_EN = ("What can you tell me about {aspect}?",
               "What do you know about {aspect}?",
               "What should a specialist know about {aspect}?",
               "How would you explain {aspect} to someone new to the subject?")
OPENINGS_ZH = ("关于{aspect}，你能介绍一下吗？", "你对{aspect}了解多少？", "关于{aspect}，专业人士应该知道什么？")


@dataclass(frozen=True)
class Facet:
    """A passage an overview item is built on: the usable sentences of one paragraph (or of a few
    consecutive ones) of a document, pronouns resolved, in document order."""

    document_id: int
    title: str
    facts: tuple[KeySentence, ...]
    heading: str = ""  # the Markdown heading the passage's first paragraph is under ("" when none)

    @property
    def lead(self) -> str:
        """The passage's first usable sentence."""
        return self.facts[0].text


def document_text(chunks: Sequence[tuple[int, int, int, str]]) -> str:
    """A document's text rebuilt from its chunks ``(chunk id, start, end, text)`` (every chunk is
    exactly ``text[start:end]`` of its document, :mod:`engine.knowledge.chunking`)."""
    size = max((end for _, _, end, _ in chunks), default=0)
    out = [" "] * size
    for _, start, end, text in chunks:
        out[start:end] = list(text[: end - start].ljust(end - start))
    return "".join(out)


def paragraphs(text: str) -> list[tuple[int, str]]:
    """``(start offset, text)`` of a text's paragraphs (cut at blank lines), headings left out; a
    paragraph's lines are kept apart (its sentences are read by ``chunk_sentences``, which joins wrapped
    lines and reads each list item as its own block)."""
    out = []
    pos = 0
    for part in re.split(r"(\n[ \t]*\n)", text):
        body = part.strip()
        if body and not re.fullmatch(r"\n[ \t]*\n", part):
            raw = body.splitlines()
            lines = [ln for at, ln in enumerate(raw) if not ln.lstrip().startswith("#")
                     and not plain_heading(ln, raw[at + 1] if at + 1 < len(raw) else None)]
            if lines:
                # a line's indent kept (a list item nested under another is read under its label)
                out.append((pos + part.find(lines[0].strip()),
                            "\n".join(ln[:len(ln) - len(ln.lstrip())] + " ".join(ln.split()) for ln in lines)))
        pos += len(part)
    return out


def facets_of(doc_text: str, chunk_spans: Sequence[tuple[int, int, int]], topic: str, topic_words: set[str],
              keep: Any) -> list[Facet]:
    """The facets of one document for a topic.

    Each paragraph's sentences are read with an opening pronoun resolved within the paragraph
    (:func:`resolve`), scored (:func:`score_sentence` > 0) and kept when ``keep(sentence, chunk_text)``
    says it is on the topic; each keeps the id of the chunk it starts in (its citation). A paragraph
    with fewer than :data:`MIN_CRITERIA` usable sentences is merged with the next one of its section
    (the text under one Markdown heading; the last one with the one before), then a section still that
    short with the next section (the last with the one before), so a facet is a passage long enough to
    examine, under one heading where the document allows. A facet's ``heading`` is the one over its first
    paragraph (ATX ``#`` or Setext), else that paragraph's run-in label ("**Eligibility.**", "Triggers:",
    in plain text a short fragment closed by a full stop when two paragraphs or more open with one:
    "Symptoms. Early ...", :func:`engine.text.sentences.period_labels`),
    "" under none or under the document's title (its first heading when that is its only top-level one,
    ``#`` or ``===``)."""
    def chunk_of(sentence: str, after: int) -> tuple[int, str]:
        """The chunk holding the whole sentence (the first one holding its start when none does; a list
        item read under its parent's label, "General inspection: carried out ...", by its own words)."""
        pattern = r"\s+".join(re.escape(w) for w in sentence.split())
        m = re.compile(pattern).search(doc_text, after)
        if m is None and ": " in sentence:
            own = sentence.split(": ", 1)[1].split()
            if own:
                pattern = r"\s+".join([f"(?i:{re.escape(own[0])})"] + [re.escape(w) for w in own[1:]])
                m = re.compile(pattern).search(doc_text, after)
        lo, hi = (m.start(), m.end()) if m else (after, after + len(sentence))
        spans = [(cid, start, end) for cid, start, end in chunk_spans if start <= lo < end]
        whole = [x for x in spans if hi <= x[2]] or spans or [chunk_spans[0]]
        cid, start, end = whole[0]
        return cid, doc_text[start:end]

    found_headings = list(re.finditer(
        r"(?m)^[ \t]{0,3}(#{1,6})(?:[ \t]+(.*))?$|^(?=\S)(.+)\n[ \t]{0,3}(=+|-+)[ \t]*$", doc_text))
    marked = [(m.start(), len(m.group(1)) if m.group(1) else (1 if m.group(4).startswith("=") else 2),
               (m.group(2) or m.group(3) or "").strip().rstrip("#")) for m in found_headings]
    # plain-text headings ("WHEN A BAN APPLIES"): the document's first line is its title (level 1), others level 2
    lines = doc_text.splitlines(keepends=True)
    pos, first = 0, True
    for at, line in enumerate(lines):
        plain = plain_heading(line, lines[at + 1] if at + 1 < len(lines) else None)
        if plain and pos not in {start for start, _, _ in marked}:  # (a Setext heading's line is marked already)
            marked.append((pos, 1 if first else 2, plain[0] + plain[1:].lower() if plain.isupper() else plain))
        first = first and not line.strip()
        pos += len(line)
    marked.sort()
    headings = [start for start, _, _ in marked]
    levels = [level for _, level, _ in marked]
    titles = [_QA_LABEL.sub("", _SECTION_NUMBER.sub("", " ".join(text.split()))) for _, _, text in marked]
    groups: list[list[KeySentence]] = []
    sections: list[int] = []  # each group's section: the number of headings before its paragraph
    labels: list[str] = []  # each group's paragraph's run-in label ("**Eligibility.**", "Triggers:"), or ""
    paras = paragraphs(doc_text)
    periods = period_labels([para for _, para in paras])  # "Symptoms. Early ..." in plain text
    # a record's key (its first line, which its sentences name: "The operator of Route 22 is ..."): what "This"
    # and "It" of its notes stand for, rather than the topic's name
    # the topic's name only where the document names it ("Mary Anning"): a pronoun is never read as a field's
    # name the text does not use ("Orsk Valley Seed Library history walked the hill tracks" for "He walked ...")
    key = doc_text.strip().split("\n", 1)[0].strip()
    own = key if key and (f" of {key} is " in doc_text or f" of {key} are " in doc_text) else (
        topic if topic.lower() in doc_text.lower() else "")
    for (start, para), period in zip(paras, periods, strict=True):
        under = sum(1 for h in headings if h <= start)
        if under and _APPARATUS.match(titles[under - 1]):
            continue  # a paper's references, acknowledgements, funding: its apparatus, no fact of the topic
        found = []
        for s in sentences(para):
            cid, ctext = chunk_of(s, start)
            resolved = resolve(s, para, own)
            if score_sentence(resolved, topic_words) <= 0 or not keep(resolved, ctext):
                continue
            found.append(KeySentence(resolved, cid, score_sentence(resolved, topic_words), resolved != s))
        if found:
            groups.append(found)
            sections.append(sum(1 for h in headings if h <= start))
            labels.append(run_in_label(para) or period)
    # short paragraphs join the paragraphs of their own section first (a passage under one heading),
    # then, when a section's usable sentences are still too few, the next section's (as text without
    # headings is one section, the second pass is the first's rule over the sections)
    doc_title = ""
    if levels and levels[0] == 1 and levels.count(1) == 1:
        doc_title, titles[0] = titles[0], ""  # the document's title (its one top-level heading, first): no passage's own
    label_of = {id(g[0]): label for g, label in zip(groups, labels, strict=True)}  # by a group's first sentence
    merged: list[tuple[int, list[KeySentence]]] = []
    for section in dict.fromkeys(sections):
        merged += _merge_short([(at, g) for g, at in zip(groups, sections, strict=True) if at == section])
    # a passage's heading: its section's, else the run-in label of its first paragraph; a passage merged from
    # sections headed by questions (an FAQ's short answers) is headed by all of them ("How hot ...? And how
    # fast ...?"), so that its opening question asks for all of its facts
    section_of = {id(k): at for g, at in zip(groups, sections, strict=True) for k in g}
    out = []
    for at, g in _merge_short(merged):
        heading = (titles[at - 1] if at else "") or label_of.get(id(g[0]), "")
        spanned = [titles[x - 1] for x in dict.fromkeys(section_of[id(k)] for k in g) if x]
        if len(spanned) > 1 and all(t.endswith("?") for t in spanned):
            heading = " And ".join([spanned[0]] + [t[0].lower() + t[1:] for t in spanned[1:]])
        out.append(Facet(0, "", tuple(g), heading))
    if len(out) == 1 and not out[0].heading and doc_title:
        # a document that is one passage (a JSON record's "title" and "text", a short note) is about its title
        out[0] = Facet(0, "", out[0].facts, doc_title)
    return out


_APPARATUS = re.compile(r"^(?:references?|bibliography|works\s+cited|sources|citations|notes|endnotes|footnotes|"
                        r"acknowledge?ments?|funding|conflicts?\s+of\s+interests?|competing\s+interests|further\s+reading|"
                        r"see\s+also|authors?|affiliations?)\s*:?\s*$", re.IGNORECASE)
"""The headings of a document's apparatus, whose lines are citations and credits, not facts to examine."""
_QA_LABEL = re.compile(r"^(?:q|question|faq)\s*\d{0,3}\s*[:.)–—-]\s*(?=\S)", re.IGNORECASE)
"""An FAQ's label before its question ("Q: ", "Question 3: "): not part of the question."""
_SECTION_NUMBER = re.compile(r"^(?:\d{1,2}(?:\.\d{1,2})+\.?|\d{1,2}[.)]|[A-Z][.)]|[IVXLC]+\.|(?i:part|section|chapter|article|"
                             r"schedule|regulation|rule|clause|step)\s+(?:\d{1,3}|[IVXLC]+)[A-Z]?\s*[-–—:.])\s*(?=\S)")
"""A heading's number ("1. ", "2.3 ", "A) ", "IV. ", "Part 2 - ", "Section 4: "): not part of what the passage
is about."""


def _merge_short(groups: list[tuple[int, list[KeySentence]]]) -> list[tuple[int, list[KeySentence]]]:
    """Consecutive ``(section, sentences)`` groups with any group of fewer than :data:`MIN_CRITERIA`
    sentences merged into the next one (the last one into the one before); a merged group keeps the
    section of its first."""
    merged: list[tuple[int, list[KeySentence]]] = []
    for at, g in groups:
        if merged and len(merged[-1][1]) < MIN_CRITERIA:
            merged[-1] = (merged[-1][0], merged[-1][1] + g)
        else:
            merged.append((at, list(g)))
    if len(merged) > 1 and len(merged[-1][1]) < MIN_CRITERIA:
        _, tail = merged.pop()
        merged[-1] = (merged[-1][0], merged[-1][1] + tail)
    return merged


def choose_facts(facet: Facet, limit: int = MAX_CRITERIA) -> list[KeySentence]:
    """The facet's facts an item asks for: its lead sentence and the best-scored others, at most
    ``limit``, in document order, no two alike (the same content words 80% both ways)."""
    chosen = [facet.facts[0]]
    for k in sorted(facet.facts[1:], key=lambda k: -k.score):
        if len(chosen) == limit:
            break
        w = words(k.text)
        if any(len(w & words(c.text)) >= 0.8 * max(1, min(len(w), len(words(c.text)))) for c in chosen):
            continue
        chosen.append(k)
    order = {k.text: i for i, k in enumerate(facet.facts)}
    return sorted(chosen, key=lambda k: order[k.text])


_CALENDAR = frozenset("""january february march april may june july august september october november december
monday tuesday wednesday thursday friday saturday sunday""".split())


def is_verb(word: str) -> bool:
    """A crude reading of whether a word is a finite verb (after a sentence's subject): a listed verb
    form, a common irregular past, or a regular past in -ed."""
    w = word.strip(",.;:()\"'").lower()
    if "-" in w:  # a compound ("council-owned", "well-known") is an adjective, not a finite verb
        return False
    return w in VERBS or w in PAST_VERBS or (w.endswith("ed") and len(w) >= 4 and not w.endswith("eed"))



_AUXILIARY = frozenset("be been being not also often mostly usually always never still only".split())
_MODALS = frozenset("may must can cannot could should would will shall might".split())
_LEADING_CLAUSE = re.compile(r"^(?:if|when|whenever|while|because|although|though|unless|once|whether)\b[^,]{1,80},\s+",
                             re.I)


def _noun_phrase_after_verb(sentence: str) -> str | None:
    toks = sentence.rstrip(" .").split()
    for i, w in enumerate(toks):
        if i and is_verb(w):
            np_words: list[str] = []
            j = i + 1
            while j < len(toks) and (is_verb(toks[j]) or toks[j].lower() in _AUXILIARY):
                j += 1
            if w.lower() in _MODALS and j == i + 1 and j < len(toks):
                j += 1  # the verb a modal governs ("may refer the dispute"), in its bare form
            for x in toks[j:]:
                bare = x.strip(",.;:()\"'")
                if bare.lower() in _NP_STOP or bare.lower() in VERBS:
                    break
                np_words.append(bare)
                if x.endswith((",", ";", ":")):
                    break
            if np_words and np_words[0].lower() not in ("of", "up", "out", "off", "down", "away") \
                    and len(np_words) <= 8 and words(" ".join(np_words)):
                return " ".join(np_words)
            return None
    return None


def _subject(sentence: str) -> str | None:
    """The noun phrase of the words before a sentence's first verb (:func:`is_verb`), at most eight
    (:func:`engine.text.subjects.noun_phrase`), or None."""
    toks = sentence.split()
    at = next((i for i, w in enumerate(toks[:9]) if i and is_verb(w)), present_verb_at(toks))
    if at is None:
        return None
    subject = opening_phrase(toks, at)
    return None if not subject or _PRONOUN_START.match(subject) else subject


_CITATION = re.compile(r"\s*\[\d{1,3}(?:\s*[,–-]\s*\d{1,3})*\]|\s*\((?:[A-Z][\w'’-]+(?:\s+(?:and|&)\s+[A-Z][\w'’-]+)?"
                       r"(?:\s+et\s+al\.?)?,?\s+\d{4}[a-z]?)\)")
"""A citation marker ("[1]", "[2, 3]", "(Marsh et al., 2019)"): no part of what a passage is about."""


_PREPOSITIONS = frozenset("of for in to by with at on from".split())
_RECORD_LEAD = re.compile(r"^The [\w'’ -]{1,40}? of (?P<key>[^,;:]{2,60}?) (?:is|are) ")
"""A record's field said of its key (:func:`engine.knowledge.ingest.fields_text`: "The stage of filtered water
turbidity is ...")."""


def aspect_of(facet: Facet, topic: str, topic_words: set[str]) -> str:
    """What an overview question asks about: the lead sentence's subject when it names more than the
    topic, else the noun phrase after its verb (after a modal, after the verb it governs), else a name
    of the passage that is not the topic's, else the topic itself (leading time phrases such as "In
    1823" and a leading subordinate clause, "If the parties cannot agree, ...", are read past; a citation
    marker, "[1]", is dropped)."""
    lead = _LEADING_CLAUSE.sub("", _LEADING_ADVERBIAL.sub("", _CITATION.sub("", facet.lead)).strip())
    lead = lead[:1].upper() + lead[1:]
    context = " ".join(k.text for k in facet.facts)
    named = topic_names(topic)
    subj = _subject(lead) or subject_of(lead)
    if subj and subj.split()[-1].lower() in _PREPOSITIONS:
        # a subject cut at a participle read as its verb ("The stage of | filtered water turbidity is ..."): a
        # record's sentence is about its key ("filtered water turbidity"), else the subject is not known
        record = _RECORD_LEAD.match(lead)
        if record and words(record.group("key")) - named:
            return _article_lower(record.group("key"), context, topic)
        subj = None
    if subj and words(subj) - named and len(subj.split()) <= 8:
        return _article_lower(subj, context, topic)
    verb = next((w.strip(",.;:").lower() for w in lead.split()[1:9] if is_verb(w)), "")
    phrase = _noun_phrase_after_verb(lead) if verb not in ("is", "are", "was", "were") else None
    if phrase and words(phrase) - topic_words:  # never what follows a copula: that is the fact itself
        return _article_lower(phrase, context, topic)
    toks = lead.split()
    at = next((i for i, w in enumerate(toks[1:8], start=1) if is_verb(w)), None)
    if subj and at is not None and len(subj.split()) <= 4:
        group = [toks[at]]
        for w in toks[at + 1:at + 4]:
            if not (is_verb(w) or w.lower() in _AUXILIARY):
                break
            group.append(w)
        return f"how {_article_lower(subj, context, topic)} {' '.join(group).strip(',.;:').lower()}"
    for k in facet.facts:
        for m in _NAME.finditer(k.text):
            if words(m.group(0)) - topic_words and m.group(0).split()[0].lower() not in _CALENDAR:
                return m.group(0)
    return topic


def heading_case(heading: str, context: str = "") -> str:
    """A heading in Title Case ("Load Limits and Signage") as words read inside a sentence ("load limits and
    signage"): when every word of four letters or more is capitalised (two at least), each is lowered but an
    abbreviation ("QTc", "BMI") and a word the passage writes capitalised inside its sentences (a name:
    "Bridge Manager"); any other heading as it is."""
    toks = heading.split()
    long = [t for t in toks if len(re.sub(r"\W", "", t)) >= 4]
    if len(long) < 2 or not all(t[:1].isupper() for t in long):
        return heading

    bare = [t.strip(",.;:()\"'?!") for t in toks]

    def named(i: int) -> tuple[bool, set[int]]:
        """Whether the word is written capitalised inside a sentence of the passage alone ("Arles") or with
        the heading's words beside it ("the Bridge Manager" for "Role of the Bridge Manager"), and the
        neighbours it was found with; never as a part of another name ("the Water Log" names no "Water
        Quality")."""
        if not bare[i]:
            return False, set()
        for m in re.finditer(rf"(?<=[\w,;] ){re.escape(bare[i])}\b", context):
            after = re.match(r"\s+([A-Z][\w'’-]*)", context[m.end():])
            before = re.search(r"([A-Z][\w'’-]*)\s+$", context[:m.start()])
            if before is not None and before.group(1).lower() in _STOP_BEFORE:
                before = None  # a sentence's "The" is no part of the name
            if (after is None or (i + 1 < len(bare) and after.group(1) == bare[i + 1])) and \
                    (before is None or (i > 0 and before.group(1) == bare[i - 1])):
                return True, {k for k, x in ((i + 1, after), (i - 1, before)) if x is not None}
        return False, set()

    found = [named(i) for i in range(len(toks))]
    # a word found only beside another of the heading's words is a name only when that one is too
    keep = [ok and all(found[k][0] for k in with_) for ok, with_ in found]
    return " ".join(t if (any(ch.isupper() for ch in t[1:]) or keep[i]) else t[:1].lower() + t[1:]
                    for i, t in enumerate(toks))


_STOP_BEFORE = frozenset("the a an this that these those and or of in on at to by for with from".split())


def _article_lower(phrase: str, context: str = "", topic: str = "") -> str:
    """A phrase that opened a sentence, as it reads inside one: "The X" -> "the X", "Annual vaccination"
    -> "annual vaccination"; a name keeps its capital (a word written capitalised inside ``context`` or in
    the topic's name)."""
    first, _, rest = phrase.partition(" ")
    if first in ("The", "A", "An") and rest:
        return f"{first.lower()} {rest}"
    named = re.search(rf"(?<=[a-z,;] ){re.escape(first)}\b", context) is not None or first in topic.split()
    if first[:1].isupper() and first[1:].islower() and not (rest and _NAME.match(" " + rest)) and not named:
        return phrase[0].lower() + phrase[1:]
    return phrase


GENERIC_HEADINGS = frozenset("""introduction overview summary background notes note details contents content
references reference conclusion conclusions general information misc miscellaneous appendix index faq more
further reading also glance""".split())
"""Heading words that name no aspect of a passage ("Introduction", "See also"): such a heading is not asked about."""


_SITUATION = re.compile(r"^(?:after|before|during|following|upon|on|in case of|when|whenever|while|if|once|until)\s+"
                        r"(?!to\b)", re.I)
_SETTING = re.compile(r"^(?:for|in|at|with|without|under|by|from|among|within|outside|inside)\s+", re.I)


def heading_aspect(heading: str, topic: str) -> str:
    """What an opening question asks about, from a heading that names a situation or a setting rather
    than a thing: "after a bite" -> "what happens after a bite", "when symptoms start" -> "what happens
    when symptoms start" ("when to see a doctor" stays: it reads as asked); "for children" -> "Rabies for
    children"; any other heading as it is."""
    if _SITUATION.match(heading):
        return f"what happens {heading[0].lower()}{heading[1:]}"
    if _SETTING.match(heading):
        return f"{topic} {heading[0].lower()}{heading[1:]}"
    return heading


def opening_question(facet: Facet, topic: str, topic_words: set[str], rng: random.Random) -> OfflineQuestion:
    """The opening question of an overview item (template ``overview``): "Who was X?" / "What is X?"
    for a passage that opens by defining its subject, else a what/how question about the passage's
    aspect (:func:`aspect_of`), naming the topic when the aspect does not. Never a cloze: the item's
    criteria are the passage's facts, drawn out by the follow-ups. A passage under a Markdown heading of
    its own (one that names more than the topic and is not a generic label, :data:`GENERIC_HEADINGS`)
    is asked about its heading, the author's name for the whole passage, where its lead sentence names
    only its first fact ("In connection with Tetanus, what do you know about treatment?", not "What is
    Tetanus?" of a passage that opens "Tetanus is a medical emergency", which the near-duplicate rule
    would drop beside the first passage's). A passage that answers a question of its own (an FAQ's "**Q:
    How much does a plot cost?**") is asked that question."""
    lead = facet.lead.rstrip(" .。")
    cjk = has_han(lead)
    framing = rng.choice(FRAMINGS_ZH if cjk else FRAMINGS_EN)
    own_heading = bool(words(facet.heading) - topic_names(topic) - GENERIC_HEADINGS)
    if own_heading and not cjk and facet.heading.endswith("?"):  # a question the passage answers (an FAQ's)
        q = bare = facet.heading[0].upper() + facet.heading[1:]
        if not words(q) & topic_names(topic):
            q = f"In connection with {topic}: {q[0].lower()}{q[1:]}"
        return OfflineQuestion(_framed(framing, q, bare, topic), _persona(framing), "overview", facet.lead,
                               facet.facts[0], q)
    if own_heading and not cjk:
        context = " ".join(k.text for k in facet.facts)
        aspect = heading_aspect(_article_lower(heading_case(facet.heading.rstrip(" .:?。"), context), context, topic),
                                topic)
        q = bare = rng.choice(OPENINGS_EN).format(aspect=aspect)
        if not words(aspect) & topic_names(topic):
            q = f"In connection with {topic}, {q[0].lower()}{q[1:]}"
        return OfflineQuestion(_framed(framing, q, bare, topic), _persona(framing), "overview", facet.lead,
                               facet.facts[0], q)
    if cjk:
        m = _DEFINITION_ZH.match(lead)
        aspect = m.group("subj") if m else topic
        q = bare = f"{aspect}是什么？" if m else rng.choice(OPENINGS_ZH).format(aspect=aspect)
    else:
        m = _DEFINITION.match(lead)
        if m and not _PRONOUN_START.match(m.group("subj")):
            context = " ".join(k.text for k in facet.facts)
            person = is_person(m.group("subj"), m.group("rest"))
            subj = m.group("subj").strip() if person else _article_lower(m.group("subj").strip(), context, topic)
            who = "Who" if person else "What"
            q = bare = f"{who} {m.group('verb').lower()} {subj}?"
        else:
            aspect = aspect_of(facet, topic, topic_words)
            q = bare = rng.choice(OPENINGS_EN).format(aspect=aspect)
            if not words(aspect) & topic_names(topic) and aspect != topic:
                q = f"In connection with {topic}, {q[0].lower()}{q[1:]}"
    return OfflineQuestion(_framed(framing, q, bare, topic), _persona(framing), "overview", facet.lead,
                           facet.facts[0], q)
