"""The offline free-text judge: does a reply state the fact a criterion states?

For a criterion with no gold span ("Liquid oxygen is pale blue", "States that workers are sterile
females", a deduction "Claims oxygen is a noble gas"). Deterministic, explainable, no LLM; it uses
the ONNX sentence embedder once per reply (every candidate, every criterion and, for the word
matches of rule 4, their content words in one batch).

Rules (:meth:`FreeTextJudge.judge`):

1. **The claim.** Scaffolding is removed from the criterion ("States that", "Mentions", "Claims
   that", "Incorrectly says", 指出/声称/提到 ..., a question about the answer: "Does the response
   mention that", "Is it stated that", "Whether the answer says"; a list mark, "the fact that" and a
   points annotation such as "(2 points)"); ``Answers "Q" with "A"`` is judged as the claim
   "A" to the question "Q", ``Gives "X" as the missing part of: S`` as the claim "X" to the question S.
2. **The fact words** are the claim's content words (stemmed; numbers and CJK characters
   included) minus the words of the question: what the answer could have copied from the question
   proves nothing. When every claim word is in the question (a yes/no question), the fact words are
   the claim's words and the reply's polarity decides (a bare "No." answers "Is it caused by diet?").
3. **Candidates** are the reply's sentences, of what the reply asserts
   (:func:`engine.judge.text.asserted_text`, denials kept: a claim asked about, supposed, withdrawn,
   superseded, attributed to others and contradicted, or inside code or a URL states nothing) (:func:`engine.judge.text.split_sentences`), pairs of
   adjacent sentences and, for a reply of three sentences or more, the whole reply (a fact told
   across sentences: "Pushpa Basnet ... She cares for 45 children."). A candidate's ``recall`` is
   the share of fact words it contains *with the claim's polarity*. A word is negated when it sits
   in a negation's scope (:func:`engine.judge.text.scoped_clauses`: not, never, no, none, neither,
   n't, false, myth, 不/没有/并非/不是, from the negation word to the end of the sentence or the next
   ";"/but) and is not one of the words its clause holds before the negation word (the subject:
   "Lib Dem leader Tim Farron has said he does not believe ..." negates what he believes, not that
   he leads); a negated claim's words outside its own negation's scope agree in either polarity.
   "That is false." / "This is a myth." after a sentence negates that sentence. A candidate
   *contradicts* the claim, and scores 0, when the claim's predicate words (its words after the
   subject; all its words when none of those is there) sit at least as often with the other
   polarity as with the claim's.
4. **Score** of a candidate = ``W_COS * cos + W_RECALL * recall`` where ``recall`` is
   ``(1 - W_PRED)`` times the fact-word recall plus ``W_PRED`` times the recall of the predicate's
   fact words (what is said of the subject weighs more than naming it), and ``cos`` is the cosine
   between the claim and the question followed by the candidate (the question supplies the context
   of a terse answer; an echo of the question without the fact earns cos but no recall). Each
   recall is weighted: a fact word weighs :func:`word_weight` (1 + ln of its WordPiece count in
   the embedder's vocabulary: a rare name weighs more than "said"; a number :data:`NUMBER_WEIGHT`).
   A fact word the candidate spells counts 1; one it says in other words counts its word-vector
   match (:func:`_soft`: "executed" for "killed", "Chapin" for "Chapi"; never for numbers, for a
   name only a spelling of it, and only in claims of :data:`SOFT_MIN_FACTS` fact words or more); one
   said only with the other polarity counts :data:`NEGATED_SHARE`. A number of the fact is bound
   to the word it counts (:func:`bound_numbers`: "10 points"); a candidate that gives another
   number of that thing, or that number of another thing (:func:`_other_number`: "a seven-point
   lead over 10-man Inverness" does not say "leads by 10 points"), is capped at
   :data:`PARTIAL_SHARE` of the threshold; a number simply left out only lowers the recall.
5. **Keyword lists.** A candidate that is a bare list (at least :data:`LIST_MIN_ITEMS` short items
   separated by commas, semicolons, slashes or line breaks, no verb or function word linking them)
   makes no claim: it scores at most :data:`KEYWORD_SHARE` of the threshold, unless every item is
   one of the fact words (an enumeration that is the answer, "Red, green, blue.").
5b. **Several candidates.** A candidate in which the fact's value is one item of a list of
   alternatives of its kind (:func:`alternatives`: "Candidates: 48 / 65 / 60.", "It could be Paris,
   Lyon or Nice.", "Either 48 or 65.") commits to none of them: it scores at most
   :data:`KEYWORD_SHARE` of the threshold. A list whose items are the fact's own words ("red,
   green and blue"), and a conjunction led in by a clause ("He played for the Braves, Giants and
   Reds"), still count.
6. **Deductions** (criteria describing a wrong claim) are met only by a candidate that makes the
   claim with its polarity: the same score, and in addition at least :data:`DEDUCTION_MIN_RECALL` of
   the claim's words must be in one clause of the candidate, question words included unless the
   clause names another subject (so "Workers are sterile females" does not claim "drones are sterile
   females", and "X is not a noble gas" does not claim "X is a noble gas").
7. The reply's score is its best candidate's; ``met`` iff score >= threshold. The weights and the
   threshold (:data:`DEFAULT_THRESHOLD`) were fitted on the dev half of REALSumm's human labels
   (``bench/criterion_check.py --half dev``: the threshold that maximises Cohen's κ there) and checked
   on its test half and on the holdout of ``bench/data/judge_calibration.jsonl``
   (``bench/judge_calibration.py``).

Tokens, stems, stop words, numbers, negation scope and sentence splits come from
:mod:`engine.judge.text`, shared with the other offline judges.
"""

from __future__ import annotations

import difflib
import math
import re
import threading
from collections import OrderedDict
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from functools import lru_cache
from typing import Any

import numpy as np

from engine.judge.text import (
    CJK,
    NEGATION_CJK,
    STOPWORDS,
    asserted_text,
    clause_parts,
    content_stems,
    content_words,
    is_negation,
    refutes,
    scoped_clauses,
    split_sentences,
    stem,
    tokens,
)

DEFAULT_THRESHOLD = 0.65
"""Score needed for a criterion to be met (fitted on REALSumm's dev half: ``bench/criterion_check.py``)."""

W_COS = 0.2
"""Weight of the claim/candidate cosine in a candidate's score."""
W_RECALL = 0.8
"""Weight of the polarity-agreeing fact-word recall in a candidate's score."""
W_PRED = 0.3
"""Share of the recall that is the recall of the claim's predicate words (what it says of its subject)."""
KEYWORD_SHARE = 0.5
"""A bare keyword list scores at most this share of the threshold."""
PARTIAL_SHARE = 0.8
"""A candidate missing a number of the fact scores at most this share of the threshold."""
LIST_MIN_ITEMS = 4
"""Items a bare list needs before it counts as a keyword list (three short items may be an answer)."""
NUMBER_WEIGHT = 3.0
"""Weight of a number among the fact words (a word weighs 1 + ln of its word pieces: :func:`word_weight`)."""
SOFT_FLOOR = 0.55
"""Word cosine below which a reply's word is no evidence for a fact word it does not spell (:func:`_soft`)."""
NEGATED_SHARE = 0.0
"""Credit of a fact word said only with the other polarity, when the predicate's polarity agrees."""
SOFT_MIN_FACTS = 3
"""Fact words a claim needs before any may be matched in other words (a one-word value never is)."""
NAME_SPELLING = 0.8
"""Character similarity (difflib ratio) a name needs with a reply's word to match it in other words."""
DEDUCTION_MIN_RECALL = 1.0
"""Share of a deduction claim's own words (fact words without light verbs) needed in one clause."""
_MEMO_CLAIMS = 64
"""Claim signatures whose candidate scores a judge keeps (:meth:`FreeTextJudge._memo_of`)."""

_SCAFFOLD = re.compile(
    r"^\s*(?:(?:the\s+)?(?:answer|response|reply|target|model|candidate|agent)\s+)?"
    r"(?:(?:should|must|will|has\s+to|needs\s+to)\s+)?"
    r"(?:(?:correctly|incorrectly|wrongly|falsely|mistakenly|explicitly|clearly|accurately)\s+)?"
    r"(?:states?|says?|mentions?|notes?|explains?|claims?|asserts?|argues?|suggests?|indicates?|"
    r"identifies|identify|points?\s+out|recogni[sz]es?|describes?|reports?|shows?|includes?|"
    r"gives?|answers?|names?|specifies|specify|tells?|believes?|thinks?)\b"
    r"(?:\s+that\b)?[\s:,]*"
    r"|^\s*(?:声称|指出|提到|说明|认为|回答|表示|说出|说|答出)(?:了)?[：:，,]?", re.IGNORECASE)
_RESPONDENT = r"(?:the\s+|this\s+|its\s+)?(?:answer|response|reply|target|model|candidate|agent|assistant|output|summary|text|student|it|they)"
_SAYS = (r"(?:correctly\s+|explicitly\s+|clearly\s+|accurately\s+)?(?:state|say|mention|note|explain|claim|assert|"
         r"suggest|indicate|identify|point\s+out|recogni[sz]e|describe|report|show|include|give|answer|name|specify|"
         r"tell|acknowledge|address|discuss|convey|cover|emphasi[sz]e|highlight|recommend|advise|warn)(?:s|es|ed)?")
_LIST_MARK = re.compile(r"^\s*(?:[-*•·]|\(?\d{1,2}[.)]|\(?[a-z][.)]|\[\s*[ x]?\s*\])\s+", re.IGNORECASE)
_ASKED = re.compile(
    rf"^\s*(?:(?:does|do|did|will|would|should|can|could)\s+{_RESPONDENT}\s+{_SAYS}|"
    rf"(?:is|was|are|were)\s+(?:it|there\s+(?:a|any)\s+(?:mention|statement|note)\s+(?:of|that))\s*"
    rf"(?:(?:mentioned|stated|noted|explained|said|made\s+clear|clear|true)\s+)?|"
    rf"whether\s+(?:or\s+not\s+)?{_RESPONDENT}\s+{_SAYS})\b(?:\s*that\b)?[\s:,]*", re.IGNORECASE)
_POINTS = re.compile(r"\s*[(\[]\s*[+-]?\d+(?:\.\d+)?\s*(?:points?|pts?|marks?|p)?\s*[)\]]\s*$", re.IGNORECASE)
_FACT_THAT = re.compile(r"^\s*(?:the\s+fact|the\s+idea|the\s+point)\s+that\s+", re.IGNORECASE)
_SQUAD = re.compile(r'^Answers\s+"(?P<q>.+?)"\s+with\s+"(?P<a>.+?)"', re.DOTALL)
_CLOZE = re.compile(r'^Gives\s+"(?P<a>.+?)"\s+as the missing part of:\s*(?P<s>.*)$', re.DOTALL)
_LIST_SPLIT = re.compile(r"[,;/|•·\n、，；]+")
_LINKING = frozenset("""is are was were be been being am has have had do does did can could will would shall should
may might must not no never because since so that which who whom whose when where while if than then by to into
causes cause caused makes make made gives give gave means mean meant helps help helped uses use used lets let
produces produce produced leads lead led becomes become became
是 有 在 会 能 被 把 让 使 为 不 没""".split())
_SENTENCE_PUNCT = re.compile(r"[.!?。！？]\s*$")


def _raw_tokens(text: str) -> list[str]:
    return tokens(text)


def _negated(text: str) -> bool:
    return any(is_negation(t) for t in tokens(text)) or bool(NEGATION_CJK.search(text or ""))


def _is_number(stem: str) -> bool:
    return stem[:1].isdigit()


def bound_numbers(text: str, reach: int = 1) -> list[tuple[str, tuple[str, ...]]]:
    """The numbers of a text, each with the stems of the content words after it (the thing it counts).

    At most ``reach`` content words are taken, up to the next number or function word: "10 points" ->
    (10, (point,)), "a seven-point lead" -> (7, (point,)), "10-man Inverness" -> (10, (man,)), "up to
    2,000 a day" -> (2000, ()), "300 helmets and bicycles" -> (300, (helmet,)). A claim's number counts its first word (``reach`` 1); a reply's
    counts any of its first three ("nine job listings" counts listings). The number 1 is left out: it
    is mostly the article ("one of them").
    """
    toks = tokens(text)
    out = []
    for i, t in enumerate(toks):
        if not _is_number(t) or t in ("1", "1st"):
            continue
        counted: list[str] = []
        for nxt in toks[i + 1:]:
            if _is_number(nxt) or is_negation(nxt) or nxt in STOPWORDS or len(counted) >= reach:
                break
            counted.append(stem(nxt))
        out.append((t, tuple(counted)))
    return out


def _blanked(sentence: str, answer: str) -> str:
    """A cloze's sentence with its missing part shown as a blank (the question the target was asked).

    The criterion's sentence is the completed one; as context it must not hold the answer, or the
    answer's words would count as words the reply copied from the question.
    """
    at = sentence.lower().find(answer.lower()) if answer else -1
    return sentence if at < 0 else f"{sentence[:at]}____{sentence[at + len(answer):]}"


def claim_of(criterion: str) -> tuple[str, str]:
    """(claim, extra question context) of a criterion: scaffolding removed.

    ``Answers "Q" with "A"`` -> ("A", "Q"); ``Gives "X" as the missing part of: S`` -> ("X", S with X
    blanked as ``____``);
    "States that liquid oxygen is pale blue" -> ("liquid oxygen is pale blue", "").
    """
    text = (criterion or "").strip()
    m = _SQUAD.match(text)
    if m:
        return m.group("a").strip(), m.group("q").strip()
    m = _CLOZE.match(text)
    if m:
        return m.group("a").strip(), _blanked(m.group("s").strip(), m.group("a").strip())
    # a rubric's own wording around the fact: a list mark, a question about the answer ("Does the
    # response mention that X?", "Is it stated that X?", "Whether the answer says X"), the scaffolding
    # verbs ("States that X"), "the fact that", a points annotation ("(2 points)")
    stripped = _POINTS.sub("", _LIST_MARK.sub("", text, count=1)).strip()
    asked = _ASKED.sub("", stripped, count=1)
    if asked != stripped:
        stripped = asked.strip().rstrip("?").strip()
    stripped = _FACT_THAT.sub("", _SCAFFOLD.sub("", stripped, count=1)).strip()
    return (stripped or text), ""


@dataclass(frozen=True)
class FactVerdict:
    """The verdict on one criterion.

    Attributes:
        met: the reply states the criterion's fact (for a deduction: makes the wrong claim).
        score: the best candidate's score in [0, 1] (compare with the judge's threshold).
        rationale: one line: the score's parts and the deciding sentence or reason.
        sentence: the reply text behind ``score`` ("" when nothing supported the claim).
        support: the best score of a candidate no rule capped; ``met`` iff ``support >= threshold``
            at any threshold, so a calibration can sweep thresholds without judging again.
    """

    met: bool
    score: float
    rationale: str
    sentence: str = ""
    support: float = 0.0


@dataclass(frozen=True)
class _Clause:
    text: str
    stems: frozenset[str]
    negated: bool
    subject: frozenset[str]  # content stems before the clause's first verb
    head: frozenset[str] = frozenset()  # stems before the clause's own negation word: outside its scope
    numbers: frozenset[tuple[str, tuple[str, ...]]] = frozenset()  # (number, the stems after it)
    words: frozenset[str] = frozenset()  # the content words as written (lower case), numbers left out


@dataclass
class _Candidate:
    text: str
    clauses: tuple[_Clause, ...]
    keyword_list: tuple[str, ...] | None  # the list's items when the candidate is a bare list
    answer_word: str | None  # "yes"/"no" when the candidate opens with a bare yes or no
    asked: str = ""  # the question the candidate's sentences answered (the context of its cosine)
    key: tuple = ()  # what its clauses, list and yes/no follow from: its sentences and their refutations


@dataclass
class _Claim:
    text: str
    context: str
    extra: str  # the criterion's own question context (a SQuAD question, a cloze's blanked sentence)
    stems: list[str]  # all content stems of the claim, unique, in order
    facts: list[str]  # the fact words: stems not in the question (or all when none is left)
    given: bool  # every claim word is in the question (yes/no style)
    negated: bool
    predicate: set[str]  # the claim's stems after its subject
    neutral: frozenset[str] = frozenset()  # a negated claim's stems outside its negation's scope
    numbers: tuple[tuple[str, str], ...] = ()  # the fact numbers with the stem each counts ("" when none)
    weights: tuple[float, ...] = ()  # per fact word (in the order of ``facts``): :func:`word_weight`
    surface: tuple[tuple[str, str], ...] = ()  # (fact stem, the word as written) of the fact words a
    # reply may say in other words (no numbers; none when the claim has fewer than SOFT_MIN_FACTS)
    names: frozenset[str] = frozenset()  # the surface words written capitalised inside the claim (names)
    positive: frozenset[str] = frozenset()  # a negated claim's stems of clauses no negation reaches: said
    # negated, they contradict it ("Hands must be washed ..., because alcohol does not kill spores")


def _keyword_items(sentence: str) -> tuple[str, ...] | None:
    """The items of a bare keyword list, or None when the text makes a claim."""
    items = [i.strip(" .!?。！？\t") for i in _LIST_SPLIT.split(sentence)]
    items = [i for i in items if i]
    if len(items) < LIST_MIN_ITEMS:
        return None
    for item in items:
        words = _raw_tokens(item)
        if not words or len([w for w in words if not re.fullmatch(f"[{CJK}]", w)]) > 3 or len(item) > 24:
            return None
        if _LINKING.intersection(words) or any(ch in _LINKING for ch in item if re.fullmatch(f"[{CJK}]", ch)):
            return None
    return tuple(items)


_YES = re.compile(r"^\W*(?:yes|yeah|yep|correct|true|indeed|是的|是|对|对的)\W*$", re.IGNORECASE)
_NO = re.compile(r"^\W*(?:no|nope|nah|false|不|不是|不对|没有)\W*$", re.IGNORECASE)


Reply = str | Sequence[tuple[str, str]]
"""A reply to judge: one text, or (question, answer) pieces (a running summary of several turns)."""


@lru_cache(maxsize=1 << 14)
def _split(text: str) -> tuple[str, ...]:
    # Memoised (pure): a running summary brings back every earlier answer each turn. Stance before
    # match: only what the reply asserts (denials kept: the polarity rules below read them).
    return tuple(split_sentences(asserted_text(text, keep_denied=True)))


@lru_cache(maxsize=1 << 14)
def _sentence_facts(sentence: str) -> tuple[tuple[_Clause, ...], tuple[str, ...] | None, str | None, bool]:
    """(clauses, keyword-list items, opening yes/no, refutes the sentence before) of one sentence.

    A pure function of the sentence, memoised: a summary's earlier sentences are analysed once.
    """
    clauses = tuple(_Clause(c.text, frozenset(content_stems(c.text)), c.negated,
                            frozenset(content_stems(_subject(c.text))), frozenset(content_stems(c.head)),
                            frozenset(bound_numbers(c.text, 3)), frozenset(_soft_words(c.text)))
                    for c in scoped_clauses(sentence))
    parts = clause_parts(sentence)
    first = parts[0][0] if parts else sentence
    answer_word = "yes" if _YES.match(first) else "no" if _NO.match(first) else None
    return clauses, _keyword_items(sentence), answer_word, refutes(sentence)


def _candidates(reply: Reply, question: str = "") -> list[_Candidate]:
    segments = [(question, reply)] if isinstance(reply, str) else list(reply)
    sentences: list[str] = []
    asked: list[str] = []
    for q, text in segments:
        q = (q or "").strip()
        for s in _split(text or ""):
            sentences.append(s)
            asked.append(q)
    if not sentences:
        return []
    facts = [_sentence_facts(s) for s in sentences]
    scoped = [f[0] for f in facts]
    for i, f in enumerate(facts):  # "That is false." refutes the sentence before it
        if i and f[3]:
            scoped[i - 1] = tuple(replace(c, negated=True, head=frozenset()) for c in scoped[i - 1])
    refuted = [i + 1 < len(facts) and facts[i + 1][3] for i in range(len(facts))]
    out = [_Candidate(s, scoped[i], facts[i][1], facts[i][2], asked[i], (s, refuted[i]))
           for i, s in enumerate(sentences)]
    for i in range(len(sentences) - 1):
        pair_list = None
        if out[i].keyword_list and out[i + 1].keyword_list:
            pair_list = out[i].keyword_list + out[i + 1].keyword_list
        pair_asked = asked[i] if asked[i] == asked[i + 1] else " ".join(p for p in (asked[i], asked[i + 1]) if p)
        out.append(_Candidate(f"{sentences[i]} {sentences[i + 1]}", scoped[i] + scoped[i + 1], pair_list,
                              out[i].answer_word, pair_asked,
                              (sentences[i], refuted[i], sentences[i + 1], refuted[i + 1])))
    if len(sentences) > 2:  # the whole reply: a fact told across sentences ("... She cares for 45 children.")
        whole_asked = " ".join(_unique([a for a in asked if a]))
        out.append(_Candidate(" ".join(sentences), tuple(c for s in scoped for c in s), None, out[0].answer_word,
                              whole_asked, tuple(x for i in range(len(sentences)) for x in (sentences[i], refuted[i]))))
    return out


def _unique(items: list[str]) -> list[str]:
    return list(dict.fromkeys(items))


@dataclass
class FactJob:
    """One reply's judging work (:meth:`FreeTextJudge.prepare`): its claims and candidates, and the
    texts whose vectors :meth:`FreeTextJudge.complete` needs (claims first, then each context's
    candidates)."""

    claims: list[_Claim]
    candidates: list[_Candidate]
    flags: list[bool]
    texts: list[str]
    decided: list[bool | None] | None = None  # met_only: per claim, met when known without cosines
    pending: list[list[int]] | None = None  # met_only: per claim, the candidates whose cosine decides
    words: list[str] = field(default_factory=list)  # the words among ``texts`` (fact words and the reply's)




class FreeTextJudge:
    """Judges criteria that state facts against a reply (see the module docstring for the rules).

    Args:
        embedder: an object with ``embed(list[str]) -> ndarray`` of L2-normalised rows (default:
            :func:`engine.knowledge.embed.get_embedding_service`: cached and coalesced, loaded on first use).
        threshold: score needed for ``met`` (default :data:`DEFAULT_THRESHOLD`).
    """

    def __init__(self, embedder: Any | None = None, threshold: float = DEFAULT_THRESHOLD):
        """Keep the embedder (or load the default one on first use) and the threshold.

        Raises:
            ValueError: the threshold is not in (0, 1].
        """
        if not 0.0 < threshold <= 1.0:
            raise ValueError(f"threshold must be in (0, 1], got {threshold}")
        self._embedder = embedder
        self.threshold = threshold
        self._memos: OrderedDict[Any, dict[Any, tuple[float, float | None, str, bool]]] = OrderedDict()

    @property
    def embedder(self) -> Any:
        """The sentence embedder (loaded on first use)."""
        if self._embedder is None:
            from engine.knowledge.embed import get_embedding_service

            self._embedder = get_embedding_service()
        return self._embedder

    def judge(self, criterion_text: str, reply: str, question: str = "", deduction: bool = False) -> FactVerdict:
        """Judge one criterion against a reply.

        Args:
            criterion_text: the criterion (a fact, or for a deduction the wrong claim).
            reply: the target's reply (or all its answers so far).
            question: the question asked; words the reply could copy from it earn nothing.
            deduction: the criterion describes a wrong claim; met means the reply makes it.
        """
        return self.judge_many([criterion_text], reply, question, [deduction])[0]

    def judge_many(self, criteria: Sequence[str], reply: Reply, question: str = "",
                   deductions: Sequence[bool] | None = None) -> list[FactVerdict]:
        """Judge several criteria against one reply with a single embedding batch.

        Args:
            criteria: the criteria's texts.
            reply: the target's reply; or, for a summary of several turns, its (question, answer)
                pieces in order: each sentence's cosine then takes the question it answered as its
                context (rule 4), and candidates still pair adjacent sentences across pieces.
            question: the question asked (for a summary: every question asked); its words are
                never fact words (rule 2).
            deductions: per criterion, whether it is a deduction (default: none is).

        Returns:
            One :class:`FactVerdict` per criterion, in order.

        Raises:
            ValueError: ``deductions`` and ``criteria`` differ in length.
        """
        job = self.prepare(criteria, reply, question, deductions)
        vectors = self.embedder.embed(job.texts) if job.texts else None  # the service caches
        return self.complete(job, vectors)

    def prepare(self, criteria: Sequence[str], reply: Reply, question: str = "",
                deductions: Sequence[bool] | None = None) -> FactJob:
        """The first half of :meth:`judge_many`: the claims, the candidates and the texts to embed.

        A caller judging several replies at once (the offline judge: the summary and the latest
        answer) embeds every job's ``texts`` in one batch and passes each job its rows to
        :meth:`complete`. Same arguments as :meth:`judge_many`.

        Raises:
            ValueError: ``deductions`` and ``criteria`` differ in length.
        """
        flags = list(deductions) if deductions is not None else [False] * len(criteria)
        if len(flags) != len(criteria):
            raise ValueError(f"{len(criteria)} criteria but {len(flags)} deduction flags")
        claims = [self._claim(c, question) for c in criteria]
        candidates = _candidates(reply or "", question)
        if not candidates:
            return FactJob(claims, candidates, flags, [])
        extras = _unique([c.extra for c in claims])
        texts = [c.text for c in claims] + [
            " ".join(p for p in (cand.asked, extra, cand.text) if p) for extra in extras for cand in candidates]
        words = _job_words(claims, candidates)
        return FactJob(claims, candidates, flags, texts + words, words=words)

    def complete(self, job: FactJob, vectors: Any) -> list[FactVerdict]:
        """The second half of :meth:`judge_many`: verdicts from the vectors of ``job.texts``, in order
        (``None`` when the job has no texts: nothing to judge)."""
        claims, candidates = job.claims, job.candidates
        if not candidates:
            return [FactVerdict(False, 0.0, "offline: no reply to judge") for _ in claims]
        vectors = np.asarray(vectors, dtype=np.float32)
        claim_vecs = vectors[: len(claims)]
        extras = _unique([c.extra for c in claims])
        ctx_index = {extra: len(claims) + k * len(candidates) for k, extra in enumerate(extras)}
        word_vecs = dict(zip(job.words, vectors[len(vectors) - len(job.words):], strict=True))
        verdicts = []
        for i, claim in enumerate(claims):
            start = ctx_index[claim.extra]
            cos = np.clip(vectors[start: start + len(candidates)] @ claim_vecs[i], 0.0, 1.0)
            verdicts.append(self._verdict(claim, candidates, cos, job.flags[i], _soft(claim, candidates, word_vecs)))
        return verdicts

    def _claim(self, criterion: str, question: str) -> _Claim:
        text, extra = claim_of(criterion)
        context = " ".join(p for p in (question.strip(), extra) if p)
        stems = _unique(content_stems(text))
        q_stems = set(content_stems(context))
        facts = [s for s in stems if s not in q_stems]
        subject = set(content_stems(_subject(text)))
        predicate = {s for s in stems if s not in subject} or set(stems)
        scopes = [c for s in split_sentences(text) for c in scoped_clauses(s)] or scoped_clauses(text)
        negated = any(c.negated for c in scopes)
        neutral: set[str] = set()
        positive: set[str] = set()
        if negated:
            in_scope: set[str] = set()
            for c in scopes:
                neutral.update(content_stems(c.head) if c.negated else content_stems(c.text))
                if c.negated:
                    in_scope.update(set(content_stems(c.text)) - set(content_stems(c.head)))
                else:
                    positive.update(content_stems(c.text))
            positive -= in_scope
        fact_set = set(facts or stems)
        numbers = tuple(dict.fromkeys((n, w[0] if w else "") for n, w in bound_numbers(text) if n in fact_set))
        written: dict[str, str] = {}
        for w in content_words(text):
            written.setdefault(stem(w), w)
        weights = tuple(word_weight(written.get(f, f)) for f in facts or stems)
        names = {w.lower() for w in re.findall(r"(?<![.!?]\s)(?<!^)\b[A-Z][\w'’-]*", text)}
        surface = tuple((f, written[f]) for f in facts or stems if f in written and not _is_number(f)) \
            if len(facts) >= SOFT_MIN_FACTS else ()
        names = frozenset(w for _f, w in surface if w in names)
        return _Claim(text, context, extra, stems, facts or stems, not facts, negated, predicate,
                      frozenset(neutral - positive), numbers, weights, surface, names, frozenset(positive))

    def prepare_met(self, criteria: Sequence[str], reply: Reply, question: str = "",
                    deductions: Sequence[bool] | None = None) -> FactJob:
        """Like :meth:`prepare` for a caller that needs only ``met`` (:meth:`complete_met`): texts only
        for the candidates whose cosine can decide it.

        A candidate's raw score ``W_COS * cos + W_RECALL * recall`` lies between its values at cos 0
        and cos 1 (cosines are clipped to [0, 1]); the caps, contradictions and the deduction rule do
        not depend on the cosine. A criterion is met without any cosine when an uncapped candidate
        reaches the threshold at cos 0, and unmet when none reaches it at cos 1; otherwise the
        candidates in between are embedded.
        """
        job = self.prepare(criteria, reply, question, deductions)
        decided: list[bool | None] = []
        pending: list[list[int]] = []
        for i, claim in enumerate(job.claims):
            memo = self._memo_of(claim)
            met, between = False, []
            sure = {f: 1.0 for f, _w in claim.surface}  # every fact word said in other words: the highest score
            for k, cand in enumerate(job.candidates):
                low = self._raw(claim, cand, 0.0, job.flags[i], memo, {})
                if low is None:
                    continue
                if low >= self.threshold:
                    met, between = True, []
                    break
                high = self._raw(claim, cand, 1.0, job.flags[i], memo, sure)
                if high is not None and high >= self.threshold:
                    between.append(k)
            decided.append(met if met or not between else None)
            pending.append(between)
        texts: list[str] = []
        for i, claim in enumerate(job.claims):
            if decided[i] is None:
                texts.append(claim.text)
                texts += [" ".join(p for p in (job.candidates[k].asked, claim.extra, job.candidates[k].text) if p)
                          for k in pending[i]]
        words = job.words if texts else []
        return FactJob(job.claims, job.candidates, job.flags, _unique(texts + words), decided, pending, words)

    def complete_met(self, job: FactJob, vectors: Any) -> list[bool]:
        """``met`` per criterion from :meth:`prepare_met`'s job and the vectors of its ``texts`` (equal to
        :meth:`complete`'s ``met``: the same scores, each cosine from a block of the same shape)."""
        if job.decided is None or job.pending is None:
            raise ValueError("complete_met needs a job from prepare_met")
        row = {t: r for r, t in enumerate(job.texts)}
        vecs = np.asarray(vectors, dtype=np.float32) if job.texts else None
        word_vecs = {w: vecs[row[w]] for w in job.words} if vecs is not None else {}
        out = []
        for i, claim in enumerate(job.claims):
            if job.decided[i] is not None or vecs is None:
                out.append(bool(job.decided[i]))
                continue
            # the cosines as complete() computes them: the whole block of the claim's candidates (rows
            # not needed left at zero), so each row's product is the same operation as there
            block = np.zeros((len(job.candidates), vecs.shape[1]), dtype=np.float32)
            for k in job.pending[i]:
                cand = job.candidates[k]
                block[k] = vecs[row[" ".join(p for p in (cand.asked, claim.extra, cand.text) if p)]]
            cos = np.clip(block @ vecs[row[claim.text]], 0.0, 1.0)
            memo = self._memo_of(claim)
            soft = _soft(claim, job.candidates, word_vecs)
            raws = [self._raw(claim, job.candidates[k], float(cos[k]), job.flags[i], memo, soft[k])
                    for k in job.pending[i]]
            out.append(any(r is not None and r >= self.threshold for r in raws))
        return out

    def _raw(self, claim: _Claim, cand: _Candidate, cos: float, deduction: bool, memo: dict,
             soft: dict[str, float]) -> float | None:
        """A candidate's raw score at this cosine and these word matches (:func:`_soft`), or None when a
        cap or contradiction keeps it out of the support (as in :meth:`_verdict`)."""
        key = (cand.key, cos, tuple(sorted(soft.items())))
        raw, cap, _why, final = memo.get(key) or memo.setdefault(key, self._base_score(claim, cand, cos, soft))
        if final or cap is not None:  # a contradiction scores 0 (the threshold is > 0)
            return None
        if deduction and self._claim_in_one_clause(claim, cand) < DEDUCTION_MIN_RECALL:
            return None
        return raw

    def _verdict(self, claim: _Claim, candidates: list[_Candidate], cos: np.ndarray, deduction: bool,
                 soft: list[dict[str, float]]) -> FactVerdict:
        best = (0.0, "", "nothing in the reply states the claim")
        support = 0.0
        memo = self._memo_of(claim)
        for k, cand in enumerate(candidates):
            c = float(cos[k])
            key = (cand.key, c, tuple(sorted(soft[k].items())))
            raw, cap, why, final = memo.get(key) or memo.setdefault(key, self._base_score(claim, cand, c, soft[k]))
            if deduction and not final and cap is None:
                share = self._claim_in_one_clause(claim, cand)
                if share < DEDUCTION_MIN_RECALL:
                    cap, why = PARTIAL_SHARE, f"{why}; only {share:.0%} of the claim's own words in one clause"
            score = raw if cap is None else min(raw, cap * self.threshold)
            if cap is None:
                support = max(support, raw)
            if score > best[0] or (best[0] == 0.0 and not best[1]):
                best = (score, cand.text, why)
        score, text, why = best
        met = support >= self.threshold
        rel = ">=" if met else "<"
        shown = f' in "{_short(text)}"' if text else ""
        return FactVerdict(met, round(score, 4), f"offline: {why}; {score:.2f} {rel} {self.threshold:.2f}{shown}",
                           text if score > 0 else "", round(support, 4))

    def _memo_of(self, claim: _Claim) -> dict[Any, tuple[float, float | None, str, bool]]:
        """The :meth:`_base_score` results kept for claims with these fact words and polarity.

        A running summary brings its earlier candidates back every turn; their scores depend only on
        what the key names (the candidate's sentences and refutations, the cosine, and the claim's
        fact words, predicate and polarity), so each is computed once. The deduction rule, which also
        reads the question's words, is applied after the memo.
        """
        key = (tuple(claim.facts), claim.given, frozenset(claim.predicate), claim.negated, claim.neutral,
               claim.numbers, claim.weights, claim.positive)
        memo = self._memos.get(key)
        if memo is None:
            memo = self._memos[key] = {}
            while len(self._memos) > _MEMO_CLAIMS:
                self._memos.popitem(last=False)
        else:
            self._memos.move_to_end(key)
        return memo

    def _base_score(self, claim: _Claim, cand: _Candidate, cos: float,
                    soft: dict[str, float]) -> tuple[float, float | None, str, bool]:
        """(score, cap, why, final) before the deduction rule; ``final``: a contradiction or a claim not
        addressed (score 0, no rule applies after it)."""
        facts = claim.facts
        if claim.given:
            # a yes/no question: the claim's words are all in the question; the reply's polarity decides
            said = set().union(*(c.stems for c in cand.clauses))
            addressed = cand.answer_word is not None or len(said & claim.predicate) * 2 >= len(claim.predicate)
            if not addressed:
                return 0.0, None, "does not address the claim", True
            if cand.answer_word is not None:
                reply_negated = cand.answer_word == "no"
            else:
                polarities = {c.negated and bool((c.stems & claim.predicate) - c.head)
                              for c in cand.clauses if c.stems & claim.predicate}
                if len(polarities) > 1:
                    return 0.0, None, "both affirms and denies the claim", True
                reply_negated = polarities == {True}
            if reply_negated != claim.negated:
                return 0.0, None, "contradicts the claim (polarity)", True
            recall = 1.0
        else:
            agree, disagree = _polarity_split(claim, cand)
            # the polarity that counts is the one governing the claim's predicate (what is said of the
            # subject); the subject's words decide only when no predicate word is there
            said_pred = (agree | disagree) & claim.predicate
            against, for_ = (disagree & said_pred, agree & said_pred) if said_pred else (disagree, agree)
            if against and len(against) >= len(for_):
                return 0.0, None, f"contradicts the claim (negated: {', '.join(sorted(against))})", True
            # each fact word weighs word_weight; one said in other words counts its soft match (_soft)
            weight = dict(zip(facts, claim.weights, strict=True))
            said = {f: 1.0 if f in agree else NEGATED_SHARE if f in disagree else soft.get(f, 0.0) for f in facts}
            pred = [f for f in facts if f in claim.predicate] or facts
            recall = (1 - W_PRED) * _weighted(facts, said, weight) + W_PRED * _weighted(pred, said, weight)
        score = W_COS * cos + W_RECALL * recall
        why = f"cos {cos:.2f}, recall {recall:.2f}"
        cap: float | None = None
        # a number of the fact that the candidate gives of another thing, or replaces by another number
        # of the same thing: a different fact (a number simply left out only lowers the recall, by
        # its weight NUMBER_WEIGHT)
        numbers = {n for n, _w in claim.numbers} | {f for f in facts if _is_number(f)}
        bound = claim.numbers or tuple((f, "") for f in facts if _is_number(f))
        replaced = [f"{n} {w}".strip() for n, w in bound if n not in ("1", "1st")
                    and not _has_number(cand, n, w, set(claim.stems))
                    and _other_number(cand, n, w, numbers, {f for f in facts if not _is_number(f)})]
        swapped = _swapped_name(claim, cand) if not claim.given else None
        if replaced and not claim.given:
            cap, why = PARTIAL_SHARE, f"{why}; gives another number than {', '.join(replaced)}"
        elif swapped:
            cap, why = PARTIAL_SHARE, f"{why}; gives another name in the place of {swapped}"
        elif cand.keyword_list and not _enumerates(cand.keyword_list, facts):
            cap, why = KEYWORD_SHARE, f"{why}; a bare keyword list"
        else:
            others = next((alt for sentence in cand.key[::2] if (alt := alternatives(sentence, frozenset(facts)))), ())
            if others:
                cap, why = KEYWORD_SHARE, f"{why}; offered beside other candidates ({', '.join(others[:3])})"
        return score, cap, why, False

    def _claim_in_one_clause(self, claim: _Claim, cand: _Candidate) -> float:
        """Best share of the claim's required words in one polarity-agreeing clause about the claim.

        Required words are the fact words without light verbs (use, make, cause, ...). A clause whose
        subject names something that is neither in the claim nor in the question ("Workers are ...",
        "Modern water systems use ...") is about something else and does not count.
        """
        required = [f for f in claim.facts if f not in _LIGHT] or claim.facts
        if claim.given:
            required = sorted(claim.predicate - _LIGHT) or sorted(claim.predicate)
        known: set[str] | None = None
        best = 0.0
        for c in cand.clauses:
            if c.negated != claim.negated:
                continue
            share = sum(1 for f in required if f in c.stems) / len(required)
            if share <= best:
                continue  # cannot raise the best: the subject check is not needed
            if known is None:
                known = set(claim.stems) | set(content_stems(claim.context))
            if not _foreign_subject(c, known, claim.context + " " + claim.text):
                best = share
        return best


def _polarity_split(claim: _Claim, cand: _Candidate) -> tuple[set[str], set[str]]:
    """(fact words said with the claim's polarity, fact words said only with the other).

    A word in a negated clause is negated unless it stands before the negation word in the clause
    that holds it (the subject: "he" in "he does not believe"); a negated claim's words outside its
    own negation's scope agree in either polarity.
    """
    facts = set(claim.facts)
    agree: set[str] = set()
    disagree: set[str] = set()
    for c in cand.clauses:
        for w in c.stems & facts:
            negated = c.negated and w not in c.head
            if w in claim.neutral or negated == (claim.negated and w not in claim.positive):
                agree.add(w)
            else:
                disagree.add(w)
    return agree, disagree - agree


def _has_number(cand: _Candidate, number: str, counted: str, claim_words: set[str]) -> bool:
    """The candidate states ``number`` of what the claim counts: the number followed by it (within
    three content words), by nothing, or by another word of the claim ("up to 2000 a day" for "2,000
    eggs a day"); or the claim's number counts nothing."""
    for c in cand.clauses:
        for n, after in c.numbers:
            if n == number and (not counted or not after or counted in after or after[0] in claim_words):
                return True
    return False


_WORD_RUN = re.compile(r"[\w'’-]+")


def _swapped_name(claim: _Claim, cand: _Candidate) -> str | None:
    """A name of the claim that the candidate replaces by another name in the same place (None when it
    does not): the claim's words just before and just after the name (two of them, or the sentence's
    end) stand in the candidate around a capitalised word that is not the name, not spelt like it and
    not in the claim ("an English fossil collector" said "an Welsh fossil collector"; "the Étang de
    Vaccarès." said "the Étang de Berre."). Only a substitution in place counts: a name merely left out,
    or another name elsewhere in a longer sentence, is the recall's business."""
    if not claim.names:
        return None
    words = _WORD_RUN.findall(claim.text)
    low = [w.lower() for w in words]
    cand_words = _WORD_RUN.findall(cand.text)
    cand_low = [w.lower() for w in cand_words]
    claim_set = set(low)
    for i, w in enumerate(low):
        if w not in claim.names or w in cand_low:
            continue
        before = low[max(0, i - 2):i]
        after = low[i + 1:i + 3]
        if len(before) < 2 and len(after) < 2:
            continue
        for j in range(len(cand_low)):
            if cand_low[j - len(before):j] != before if len(before) <= j else True:
                continue
            k = j
            while k < len(cand_words) and cand_words[k][:1].isupper() and cand_low[k] not in claim_set:
                k += 1
            if k == j or cand_low[k:k + len(after)] != after:
                continue
            new = " ".join(cand_low[j:k])
            if difflib.SequenceMatcher(None, new, w).ratio() < NAME_SPELLING:
                return w
    return None


def _other_number(cand: _Candidate, number: str, counted: str, numbers: set[str], facts: set[str]) -> bool:
    """The candidate gives another number for the fact's: a different fact.

    For a number that counts something (``counted``: "10 points"), a number that is none of the
    claim's ``numbers`` followed by the same thing ("a seven-point lead"), or this number followed by
    something else ("300 helmets" for "300 bicycles"); for one that counts nothing (a year), another
    number that counts nothing in a clause holding a fact word ("discovered penicillin in 1929" for
    1928).
    """
    for c in cand.clauses:
        for n, after in c.numbers:
            if counted and ((n not in numbers and counted in after) or n == number):
                return True
            if not counted and n not in numbers and not after and c.stems & facts:
                return True
    return False


def _foreign_subject(clause: _Clause, known: set[str], known_text: str) -> bool:
    """The clause's subject names something else.

    Its head word (the last before the verb, or before the first preposition after the subject's
    first word: "People with diabetes" -> "people") is neither in the claim nor in the question, or
    it holds a capitalised word (other than the clause's first) that neither mentions ("In Japan ...").
    """
    phrase = _subject(clause.text)
    words = re.findall(r"[\w'’-]+", phrase)
    for i, w in enumerate(words[1:], 1):
        if w.lower() in _PREPOSITIONS:
            words = words[:i]
            break
    content = [w for w in words if w.lower() not in STOPWORDS]
    if not content:
        return False
    head = content_stems(content[-1])
    if head and head[-1] not in known:
        return True
    lowered = known_text.lower()
    first = re.findall(r"[\w'’-]+", clause.text)[:1]
    return any(w[:1].isupper() and w.lower() not in lowered
               for w in re.findall(r"[\w'’-]+", phrase) if [w] != first)


_PREPOSITIONS = frozenset("with of in on at from for by about under over near without within like".split())


_ALT_SPLIT = re.compile(r"((?:\s*(?:,(?!\d{3}\b)|[;/|:&\n]|\(\d+\)|\b(?:or|either|and)\b)\s*)+)", re.IGNORECASE)
_ALT_SEP = re.compile(r",|[;/|:&\n]|\(\d+\)|[a-z]+")
_ALT_MARKS = frozenset({";", "/", "|", "or", "either"})
ALT_ITEM_WORDS = 4
"""Content words an item of a list of alternatives may have (a longer item is a clause, not a candidate)."""


@lru_cache(maxsize=1 << 14)
def alternatives(sentence: str, facts: frozenset[str]) -> tuple[str, ...]:
    """The other candidates a sentence offers beside the one that holds the fact, or () when it commits.

    The sentence is cut into items at commas, ";", "/", "|", ":", "&", "(1)"-style numbering and the
    words or/either/and. When the fact words the sentence holds all lie in one item (with at most
    two other content words: "It could be 48", "Possibly Paris") and its neighbours in the list are
    short items (at most :data:`ALT_ITEM_WORDS` content words, not a clause: "who has leukemia") of the same kind (numbers beside a number, words beside words) that hold none of the
    fact words, those neighbours are other candidates:

    - joined by a mark of alternatives (or, either, "/", "|", ";"), one neighbour is enough
      ("Candidates: 48 / 65 / 60." offers 65 and 60 beside 48; "Either Paris or Lyon.");
    - joined only by commas or "and", the items are a conjunction ("He played for the Braves,
      Giants and Reds" says he played for each): they are candidates only when the list is the
      whole sentence (after a lead-in ending in ":"), has three items or more and the fact's item
      is bare: no other content word, no verb ("48, 65, 60").

    A list whose other items hold fact words too ("red, green and blue" for the fact "red, green
    and blue") commits to all of them and offers nothing else; ":" ends a list (a lead-in).
    """
    parts = _ALT_SPLIT.split(sentence or "")
    if len(parts) < 3:
        return ()
    texts = parts[::2]
    seps = [frozenset(_ALT_SEP.findall(p.lower())) for p in parts[1::2]]
    stems = [content_stems(t) for t in texts]
    holding = [k for k, st in enumerate(stems) if facts.intersection(st)]
    if len(holding) != 1:
        return ()
    here = holding[0]
    extra = [w for w in stems[here] if w not in facts]
    if len(extra) > 2:
        return ()
    numeric = any(_is_number(w) for w in stems[here] if w in facts)
    found: list[int] = []
    for step in (-1, 1):
        k = here
        while 0 <= k + step < len(texts):
            sep = seps[min(k, k + step)]
            item = stems[k + step]
            if ":" in sep or not item or len(item) > ALT_ITEM_WORDS or facts.intersection(item) \
                    or _is_number(item[0]) != numeric or _is_clause(texts[k + step]):
                break
            k += step
            found.append(k)
    if not found:
        return ()
    lo, hi = min(found + [here]), max(found + [here])
    joined = set().union(*seps[lo:hi])
    if lo > 0:
        joined |= seps[lo - 1] & {"either"}
    if not joined & _ALT_MARKS:
        last = len(texts) - 1 if stems[-1] else len(texts) - 2
        whole = (lo == 0 or ":" in seps[lo - 1]) and hi == last
        if not whole or extra or len(found) < 2 or _has_verb(texts[here]):
            return ()
    return tuple(texts[k].strip(" .!?()[]") for k in sorted(found))


def _is_clause(text: str) -> bool:
    """Two words or more with a verb among them ("who has leukemia"): a clause, not a listed candidate
    (a single word is an item whatever its kind: "surroundings or carried")."""
    return len(re.findall(r"[\w'’-]+", text)) > 1 and _has_verb(text)


def _has_verb(text: str) -> bool:
    """A linking or common verb, or a word ending in -ed after the first: the text is a clause."""
    words = [w.lower() for w in re.findall(r"[\w'’-]+", text)]
    return any(w in _LINKING or w in _VERBISH or (k and len(w) > 4 and w.endswith("ed")) for k, w in enumerate(words))


@lru_cache(maxsize=1)
def _word_pieces() -> Any:
    from tokenizers import Tokenizer

    from engine.knowledge.embed import default_tokenizer_path

    tok = Tokenizer.from_file(str(default_tokenizer_path()))
    tok.no_padding()
    tok.no_truncation()
    return tok


@lru_cache(maxsize=1 << 16)
def word_weight(word: str) -> float:
    """How much a fact word weighs in the recall: 1 + ln(its WordPiece count), numbers :data:`NUMBER_WEIGHT`
    (but 1 and "1st": "one", "first" are mostly words, as in :func:`bound_numbers`).

    The WordPiece vocabulary of the default embedder (all-MiniLM-L6-v2's ``tokenizer.json``) holds
    the common words of English whole; a rare word (a name, a term) is cut into several pieces. So
    the count is a rarity measure that needs no corpus and no labels: "said" weighs 1, "Sukumaran"
    (4 pieces) 2.39. On REALSumm's dev half it does as well as an IDF computed from the summaries
    themselves (``bench/criterion_check.py``).
    """
    if _is_number(word) and word not in ("1", "1st"):  # "one"/"first" are mostly words ("one of them")
        return NUMBER_WEIGHT
    pieces = len(_word_pieces().encode(word, add_special_tokens=False).ids)
    return 1.0 + math.log(max(1, pieces))


def _weighted(words: list[str], said: dict[str, float], weight: dict[str, float]) -> float:
    total = sum(weight[w] for w in words)
    return sum(weight[w] * said[w] for w in words) / total if total else 0.0


def _soft_words(text: str) -> list[str]:
    """A clause's content words as written (lower case) that a fact word may match in other words: no numbers."""
    return [w for w in content_words(text) if not _is_number(w)]


def _job_words(claims: list[_Claim], candidates: list[_Candidate]) -> list[str]:
    """The words whose vectors :func:`_soft` needs: the claims' fact words as written, then the reply's."""
    if not any(c.surface for c in claims):
        return []
    said = sorted({w for cand in candidates for c in cand.clauses for w in c.words})
    return _unique([w for c in claims for _f, w in c.surface] + said) if said else []


def _soft(claim: _Claim, candidates: list[_Candidate], vecs: dict[str, np.ndarray]) -> list[dict[str, float]]:
    """Per candidate, the fact words it may say in other words, each with its match in (0, 1].

    A fact word's match is the best cosine between its vector and a vector of one of the
    candidate's words (each word embedded alone by the sentence embedder), rescaled from
    [:data:`SOFT_FLOOR`, 1] to [0, 1] ("executed" for "killed", "shiners" for "bruises", a misspelt
    name); below the floor it is no match. A word the candidate spells (the same stem) counts 1 in
    :meth:`FreeTextJudge._base_score`, whatever this says. Word vectors put co-hyponyms close ("red"
    and "blue" 0.73, "Monday" and "Tuesday" 0.87), so: numbers never match softly; a name (a word
    capitalised inside the claim) matches only a word spelt like it (:data:`NAME_SPELLING`: "Chapin"
    for "Chapi", not "Germany" for "France"); and a claim of fewer than :data:`SOFT_MIN_FACTS` fact
    words (a bare value: "blue", "Monday") matches nothing softly.
    """
    if not claim.surface or not vecs:
        return [{} for _ in candidates]
    words = sorted({w for cand in candidates for c in cand.clauses for w in c.words})
    if not words:
        return [{} for _ in candidates]
    col = {w: j for j, w in enumerate(words)}
    sims = np.stack([vecs[w] for _f, w in claim.surface]) @ np.stack([vecs[w] for w in words]).T
    for r, (_f, w) in enumerate(claim.surface):
        if w in claim.names:  # another name is another entity: only a spelling of this one matches
            sims[r] = [x if _spelt_like(w, o) else 0.0 for x, o in zip(sims[r], words, strict=True)]
    out = []
    for cand in candidates:
        idx = sorted({col[w] for c in cand.clauses for w in c.words})
        if not idx:
            out.append({})
            continue
        best = sims[:, idx].max(axis=1)
        out.append({f: round((float(b) - SOFT_FLOOR) / (1.0 - SOFT_FLOOR), 6)
                    for (f, _w), b in zip(claim.surface, best, strict=True) if b > SOFT_FLOOR})
    return out


@lru_cache(maxsize=1 << 16)
def _spelt_like(a: str, b: str) -> bool:
    return difflib.SequenceMatcher(None, a, b).ratio() >= NAME_SPELLING


def _enumerates(items: tuple[str, ...], facts: list[str]) -> bool:
    """Every item of a list (that has content) names a fact word: the list is the answer itself."""
    stems = [set(content_stems(item)) for item in items]
    stems = [s for s in stems if s]
    return bool(stems) and all(s.intersection(facts) for s in stems)


_LIGHT = frozenset(stem(w) for w in """use used uses make made makes get got gets take took takes cause caused causes
give gave gives keep kept keeps put puts help helped helps let lets go goes went come came comes show showed shows
become became becomes seem seemed seems need needed needs mean meant means""".split())
_VERBISH = frozenset("""is are was were has have had can could may might will would should must does do did
causes cause caused makes make made becomes become became contains contain includes include produces produce
lies lie consists consist releases release takes take spreads spread occurs occur shows show leads lead reduces
reduce increases increase requires require affects affect helps help gives give means mean uses use used
carry carries carried holds hold held closes close closed opens open opened pushed pushes push""".split())
_CJK_VERBISH = re.compile("是|有|会|不|没|在|能|被|把|以|为|要|吃|住|生活")


def _subject(clause: str) -> str:
    """The words of a clause before its first verb, as written ("" when none is recognised).

    Verbs are a closed list of common ones plus, after the first word, any word ending in -ed.
    """
    if re.search(f"[{CJK}]", clause):
        m = _CJK_VERBISH.search(clause)
        return clause[: m.start()] if m else ""
    for k, m in enumerate(re.finditer(r"[\w'’-]+", clause)):
        word = m.group().lower()
        if word in _VERBISH or (k and len(word) > 4 and word.endswith("ed") and not word.endswith("eed")):
            return clause[: m.start()].strip()
    return ""


def _short(text: str, limit: int = 80) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 3] + "..."


_SHARED: FreeTextJudge | None = None
_SHARED_LOCK = threading.Lock()


def judge_fact(criterion: str, answer: str, question: str = "") -> FactVerdict:
    """Does ``answer`` state the fact ``criterion`` states? The offline free-text judge's verdict.

    The rules are :class:`FreeTextJudge`'s (the module docstring) at :data:`DEFAULT_THRESHOLD`, with
    the default ONNX embedder (loaded on first use, shared by every call in the process).

    Args:
        criterion: one fact ("Pushpa Basnet cares for 45 children.") or a criterion stating one.
        answer: the text that may state it.
        question: the question the answer replied to (its words earn nothing), if any.

    Returns:
        A :class:`FactVerdict`: ``met``, ``score`` (compare with the threshold), ``rationale``.
    """
    global _SHARED
    with _SHARED_LOCK:
        if _SHARED is None:
            _SHARED = FreeTextJudge()
        return _SHARED.judge(criterion, answer, question)
