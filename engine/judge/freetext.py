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
   "A" to the question "Q", a cloze criterion (X missing from S, read from its ``cloze`` field:
   :mod:`engine.text.cloze`; a plain text in the wording ``Gives "X" as the missing part of: S`` is
   read back by :func:`engine.text.cloze.parse_cloze`) as the claim "X" to the question S blanked.
2. **The fact words** are the claim's content words (stemmed; numbers and CJK characters
   included) minus the words of the question: what the answer could have copied from the question
   proves nothing. When every claim word is in the question (a yes/no question), the fact words are
   the claim's words and the reply's polarity decides (a bare "No." answers "Is it caused by diet?").
   Over a summary of several turns (:meth:`FreeTextJudge.prepare_session`) a word counts as given from
   the turn whose question gave it: a candidate's fact words are the claim's minus the words given by
   the turn of its earliest sentence, and a word given later counts only in the sentences said before
   it was given (what the target echoed of a later question is masked out of its sentences).
3. **Candidates** are the reply's sentences, of what the reply asserts
   (:func:`engine.judge.stance.asserted_text`, denials kept: a claim asked about, supposed, withdrawn,
   superseded, attributed to others and contradicted, or inside code or a URL states nothing) (:func:`engine.text.sentences.split_sentences`), pairs of
   adjacent sentences and, for a reply of three sentences or more, the whole reply (a fact told
   across sentences: "Pushpa Basnet ... She cares for 45 children."; over a summary of several turns,
   each question's answer and challenge replies whole, not the session's). A candidate's ``recall`` is
   the share of fact words it contains *with the claim's polarity*. A word is negated when it sits
   in a negation's scope (:func:`engine.text.negation.scoped_clauses`: not, never, no, none, neither,
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
   match (:func:`soft_matches`: "executed" for "killed", "Chapin" for "Chapi"; never for numbers, for a
   name only a spelling of it, and only in claims of :data:`SOFT_MIN_FACTS` fact words or more); one
   said only with the other polarity counts :data:`NEGATED_SHARE`. A number of the fact is bound
   to the word it counts (:func:`bound_numbers`: "10 points"); a candidate that gives another
   number of that thing, or that number of another thing (:func:`other_number`: "a seven-point
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
:mod:`engine.text`, shared with the other offline judges.
"""

from __future__ import annotations

import re
import threading
from collections import OrderedDict
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from functools import lru_cache
from typing import Any

import numpy as np

from engine.judge.fact_reading import (
    LIGHT_VERBS,
    Candidate,
    FactClaim,
    Reply,
    bound_numbers,
    claim_of,
    clause_subject,
    is_number_stem,
    reply_candidates,
    unique,
)
from engine.judge.fact_words import (
    POSSESSIVE,
    alternatives,
    contrasted,
    enumerates,
    exchanged,
    foreign_subject,
    half_said,
    has_number,
    inverted_ratio,
    job_words,
    moved_number,
    number_alternatives,
    opposite_bound,
    other_day_kind,
    other_label,
    other_number,
    part_denied,
    polarity_split,
    range_around,
    range_cut,
    rebound_number,
    segment_moved,
    soft_matches,
    spelled_as_digits,
    substituted_word,
    swapped_name,
    term_list,
    unit_of,
    weighted,
    word_weight,
)
from engine.text.cloze import Cloze, CriterionIn, cloze_of, criterion_text
from engine.text.initialisms import restate_initialisms
from engine.text.negation import restate_prefixed, scoped_clauses
from engine.text.quantities import (
    among_others,
    other_basis,
    other_date,
    other_frequency,
    other_rate,
    other_unit,
    restate,
    wrong_conversion,
)
from engine.text.sentences import split_sentences
from engine.text.tokens import content_stems, content_words, runs_on, stem, tokens

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
NEGATED_SHARE = 0.0
"""Credit of a fact word said only with the other polarity, when the predicate's polarity agrees."""
SOFT_MIN_FACTS = 3
"""Fact words a claim needs before any may be matched in other words (a one-word value never is)."""
DEDUCTION_MIN_RECALL = 1.0
"""Share of a deduction claim's own words (fact words without light verbs) needed in one clause."""
_MEMO_CLAIMS = 64
"""Claim signatures whose candidate scores a judge keeps (:meth:`FreeTextJudge._memo_of`)."""

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



@dataclass
class FactJob:
    """One reply's judging work (:meth:`FreeTextJudge.prepare`): its claims and candidates, and the
    texts whose vectors :meth:`FreeTextJudge.complete` needs (claims first, then each context's
    candidates)."""

    claims: list[FactClaim]
    candidates: list[Candidate]
    flags: list[bool]
    texts: list[str]
    words: list[str] = field(default_factory=list)  # the words among ``texts`` (fact words and the reply's)
    restated: tuple[tuple[str, str], ...] = ()  # the reply's amounts read in the claims' words (said, read as)


ALIKE_COS = 0.40
"""Two words whose vectors' cosine reaches this are said alike (:meth:`FreeTextJudge._alike`)."""
_PARENTHESES = re.compile(r"\(([^()]*)\)")
ASIDE_SHARE = 0.25
"""The weight in the recall of a criterion's word said only inside parentheses, against its word weight."""


_NUMBER_RULES = (
    (rebound_number, "gives {} with what the claim says of another of its numbers"),
    (opposite_bound, "bounds {} the other way (a minimum for a maximum, or back)"),
    (range_around, "gives {} only as one end of a range"),
    (range_cut, "gives {} alone for the claim's range"),
    (among_others, "gives {} among other amounts of it"),
    (other_unit, "gives the number in another unit ({})"),
    (other_rate, "gives {} per another thing or in another currency"),
    (other_basis, "gives the rate per {}, not per the claim's"),
    (other_date, "gives another date ({})"),
    (wrong_conversion, "restates {}, not the same amount"),
)
"""The rules that read a claim's number said otherwise from the two texts alone, in the order they are tried: each
finds what the candidate says in its place (None when it does not), and the verdict's line says it so."""


def _number_misread(claim_text: str, cand_text: str) -> str | None:
    """The first of :data:`_NUMBER_RULES` that finds the claim's number said otherwise, as the verdict says it."""
    for rule, said in _NUMBER_RULES:
        if found := rule(claim_text, cand_text):
            return said.format(found)
    return None


def restate_reply(reply: Reply, criteria: Sequence[CriterionIn]) -> tuple[Reply, tuple[tuple[str, str], ...]]:
    """The reply (a text, or its (question, answer) pieces) with each amount a criterion holds in other words
    written in the criterion's (:func:`engine.text.quantities.restate`: "a fortnight" read as "14 days" for
    "within 14 days"; a cloze's amount from its whole sentence), and the rewritings made."""
    claims = tuple([criterion_text(c) for c in criteria] + [z.sentence for z in map(cloze_of, criteria) if z is not None])

    def read(text: str) -> tuple[str, tuple[tuple[str, str], ...]]:
        return _read_in_claims(text, claims)

    if isinstance(reply, str):
        return read(reply)
    pieces, changes = [], []
    for q, a in reply:
        a, made = read(a)
        pieces.append((q, a))
        changes += made
    return pieces, tuple(changes)


@lru_cache(maxsize=4096)
def _read_in_claims(text: str, claims: tuple[str, ...]) -> tuple[str, tuple[tuple[str, str], ...]]:
    """:func:`restate_reply`'s reading of one text, kept: a session's summary re-reads every earlier answer
    each turn against the same criteria, so each is read once (turn 50 costs what turn 1 does)."""
    text, amounts_read = restate(text, claims)
    text, terms_read = restate_initialisms(text, claims)  # "FD" for "Finance Director", and back
    text, prefixed = restate_prefixed(text, claims)  # "not collected" for "uncollected"
    return text, amounts_read + terms_read + prefixed


def with_reading(verdict: FactVerdict, restated: tuple[tuple[str, str], ...]) -> FactVerdict:
    """The verdict with the amounts read in the criterion's words that its sentence holds named."""
    read = [f'"{said}" as "{words}"' for said, words in dict.fromkeys(restated) if words in verdict.sentence]
    return replace(verdict, rationale=f"{verdict.rationale}; read {', '.join(read)}") if read else verdict


def _in_context(cand: Candidate, claim: FactClaim) -> str:
    """The text embedded for a candidate's cosine with a claim: the question it answered, the claim's
    context (``Answers "Q" with ...``) and the candidate."""
    return " ".join(p for p in (cand.asked, claim.extra, cand.text) if p)


@dataclass(frozen=True)
class _LazyClaim:
    """Where :meth:`FreeTextJudge.judge_lazily` stands on one claim: ``met`` (None: still open), the
    candidates whose score can still decide it, and the word matches known (exact for ``exact``)."""

    met: bool | None
    between: list[int]
    soft: list[dict[str, float]] | None
    exact: frozenset[int]


@dataclass
class _LazyJob:
    """One :class:`FactJob` under :meth:`FreeTextJudge.judge_lazily`: a :class:`_LazyClaim` per claim."""

    job: FactJob
    claims: list[_LazyClaim]

    def words_needed(self) -> list[str]:
        """The words whose vectors the open claims' word matches need: their fact words and the words of
        their candidates in between."""
        out: list[str] = []
        for claim, state in zip(self.job.claims, self.claims, strict=True):
            if state.met is None and state.soft is None:
                out += [w for _f, w in claim.surface]
                out += [w for k in state.between for c in self.job.candidates[k].clauses for w in c.words]
        return unique(out)

    def texts_needed(self) -> list[str]:
        """The texts whose vectors the open claims' cosines need: the claim, its candidates in between."""
        out: list[str] = []
        for claim, state in zip(self.job.claims, self.claims, strict=True):
            if state.met is None:
                out += [claim.text] + [_in_context(self.job.candidates[k], claim) for k in state.between]
        return unique(out)




@lru_cache(maxsize=256)
def stem_set(text: str) -> frozenset[str]:
    """The set of a text's content stems, memoised: a summary's context (every question asked) is the same
    for each of a turn's criteria, and grows with the session."""
    return frozenset(content_stems(text))


class Joined(str):
    """Texts joined by one space, with the content stems of the whole (``stems``: :func:`stem_set` of the
    text, which the offline judge folds a question a turn, :func:`joined_stems`) and whether a reading may
    run on from its end into a text after it (``runs_on``): the offline judge's context of every question
    asked, whose stems the deduction rule's subject check needs at every turn."""

    stems: frozenset[str]
    runs_on: bool

    def __new__(cls, parts: Sequence[str], stems: frozenset[str]) -> Joined:  # noqa: D102 - the class says it
        joined = super().__new__(cls, " ".join(parts))
        joined.stems, joined.runs_on = stems, _runs_on(parts)
        return joined


def joined_stems(acc: frozenset[str], parts: Sequence[str], i: int) -> frozenset[str]:
    """``stem_set(" ".join(parts[:i + 1]))`` from ``acc``, the set of ``parts[:i]`` joined: one step of a left
    fold, so a context one question longer than the last turn's reads that question only. The union of the
    two sets, unless a reading may run across the boundary (:func:`engine.text.tokens.runs_on`: a number
    spelt in words, a digit before a scale word, "per" "cent": "… chapter one?" "Hundred …" reads 100);
    then the joined text is read whole."""
    if i and _runs_on(parts[:i]):
        return stem_set(" ".join(parts[: i + 1]))
    return acc | stem_set(parts[i])


def _runs_on(parts: Sequence[str]) -> bool:
    """Whether a reading may run from the end of ``" ".join(parts)`` into a text after it: its last piece
    with a token decides (a piece without one joins nothing)."""
    for part in reversed(parts):
        verdict = runs_on(part)
        if verdict is not None:
            return verdict
    return False


class _Matches(dict):
    """Word matches shared by every candidate of a claim (each fact word matched fully), with their memo key
    computed once: the key of :meth:`FreeTextJudge._parts`' memo is built for every candidate of a summary."""

    __slots__ = ("key",)

    def __init__(self, matches: dict[str, float]):
        super().__init__(matches)
        self.key = tuple(sorted(self.items()))


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

    def judge(self, criterion: CriterionIn, reply: str, question: str = "", deduction: bool = False) -> FactVerdict:
        """Judge one criterion against a reply.

        Args:
            criterion: the criterion (a fact, or for a deduction the wrong claim): a criterion object (its
                text and cloze field) or a plain text (:data:`engine.text.cloze.CriterionIn`).
            reply: the target's reply (or all its answers so far).
            question: the question asked; words the reply could copy from it earn nothing.
            deduction: the criterion describes a wrong claim; met means the reply makes it.
        """
        return self.judge_many([criterion], reply, question, [deduction])[0]

    def judge_many(self, criteria: Sequence[CriterionIn], reply: Reply, question: str = "",
                   deductions: Sequence[bool] | None = None) -> list[FactVerdict]:
        """Judge several criteria against one reply with a single embedding batch.

        Args:
            criteria: the criteria: objects (a cloze criterion read from its ``cloze`` field) or plain
                texts (a cloze read back from its wording: :func:`engine.text.cloze.cloze_of`).
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

    def prepare(self, criteria: Sequence[CriterionIn], reply: Reply, question: str = "",
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
        claims = [self._claim(criterion_text(c), cloze_of(c), question) for c in criteria]
        reply, restated = restate_reply(reply or "", criteria)
        return replace(self._job(claims, reply_candidates(reply, question), flags), restated=restated)

    def prepare_session(self, criteria: Sequence[CriterionIn], parts: Sequence[tuple[str, str]],
                        said: Sequence[int], given: Sequence[frozenset[str]], question: str = "",
                        deductions: Sequence[bool] | None = None) -> list[FactJob]:
        """:meth:`prepare` for a summary said over several turns, the examiner's words counted by when they
        were given: one job per set of claim words given, whose verdicts :func:`merge` joins.

        ``parts`` are the summary's (question, sentence) pieces, ``said`` the turn each was said in, ``given``
        the stems the examiner had given by each turn (cumulative) and ``question`` every question asked
        (the context of the deduction rule's subjects). A candidate's fact words are the claim's minus the
        words given by the turn of its earliest sentence (:attr:`Candidate.epoch`), and a word given later
        counts only in the sentences said before it was given (:func:`engine.judge.fact_reading.reply_candidates`
        masks it out of the others). So a cloze that gives every word of a fact but one discounts those
        words for the answer to it, not for an earlier sentence that happens to hold the missing one, and
        a target that echoes the cloze earns nothing from the words it echoed.

        Raises:
            ValueError: ``deductions`` and ``criteria`` differ in length.
        """
        flags = list(deductions) if deductions is not None else [False] * len(criteria)
        if len(flags) != len(criteria):
            raise ValueError(f"{len(criteria)} criteria but {len(flags)} deduction flags")
        read = [(criterion_text(c), cloze_of(c)) for c in criteria]
        parts, restated = restate_reply(list(parts), criteria)
        candidates = reply_candidates(list(parts), question, said, given)
        if not candidates:
            return [self._job([self._claim(t, z, question) for t, z in read], [], flags)]
        stems = [frozenset(content_stems(claim_of(t, z)[0])) for t, z in read]
        groups: dict[tuple[frozenset[str], ...], tuple[int, list[Candidate]]] = {}
        for cand in candidates:  # candidates whose claims' given words are the same share one job
            sig = tuple(s & given[cand.epoch] for s in stems)
            groups.setdefault(sig, (cand.epoch, []))[1].append(cand)
        return [replace(self._job([self._claim(t, z, question, given[epoch]) for t, z in read], cands, flags),
                        restated=restated) for epoch, cands in groups.values()]

    @staticmethod
    def _job(claims: list[FactClaim], candidates: list[Candidate], flags: list[bool]) -> FactJob:
        if not candidates:
            return FactJob(claims, candidates, flags, [])
        extras = unique([c.extra for c in claims])
        texts = [c.text for c in claims] + [
            " ".join(p for p in (cand.asked, extra, cand.text) if p) for extra in extras for cand in candidates]
        words = job_words(claims, candidates)
        return FactJob(claims, candidates, flags, texts + words, words=words)

    def complete(self, job: FactJob, vectors: Any) -> list[FactVerdict]:
        """The second half of :meth:`judge_many`: verdicts from the vectors of ``job.texts``, in order
        (``None`` when the job has no texts: nothing to judge)."""
        claims, candidates = job.claims, job.candidates
        if not candidates:
            return [FactVerdict(False, 0.0, "offline: no reply to judge") for _ in claims]
        vectors = np.asarray(vectors, dtype=np.float32)
        claim_vecs = vectors[: len(claims)]
        extras = unique([c.extra for c in claims])
        ctx_index = {extra: len(claims) + k * len(candidates) for k, extra in enumerate(extras)}
        word_vecs = dict(zip(job.words, vectors[len(vectors) - len(job.words):], strict=True))
        verdicts = []
        for i, claim in enumerate(claims):
            start = ctx_index[claim.extra]
            cos = np.clip(vectors[start: start + len(candidates)] @ claim_vecs[i], 0.0, 1.0)
            verdicts.append(self._verdict(claim, candidates, cos, job.flags[i], soft_matches(claim, candidates, word_vecs)))
        return [with_reading(v, job.restated) for v in verdicts]

    @staticmethod
    def _claim(criterion: str, cloze: Cloze | None, question: str,
               given: frozenset[str] | None = None) -> FactClaim:
        """The criterion read as a claim; its fact words are its stems minus the question's (``given``: minus
        these stems and the criterion's own context's instead: the examiner's words by a turn)."""
        text, extra = claim_of(criterion, cloze)
        context = " ".join(p for p in (question.strip(), extra) if p)
        context_stems = None  # read here once from a Joined question's stems; else when first needed
        if isinstance(question, Joined):
            context_stems = question.stems | stem_set(extra) if not (extra and question.runs_on) else stem_set(context)
        stems = unique(content_stems(text))
        q_stems = stem_set(context) if given is None else given | stem_set(extra)
        own_context = stem_set(extra)
        examiner = stem_set(question) if given is None else given
        asked = frozenset(s for s in stems if s in examiner and s not in own_context)
        facts = [s for s in stems if s not in q_stems]
        subject = set(content_stems(clause_subject(text)))
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
        # what a number counts: its unit among the three words after it ("2 full working days" counts days), else the
        # word after it ("12 weeks", "1.3 times")
        counted = [(n, next((x for x in w if unit_of(x)), w[0]) if w else "") for n, w in bound_numbers(text, 3)]
        numbers = tuple(dict.fromkeys((n, w) for n, w in counted if n in fact_set))
        # a number the question gave, with what it counts ("Early deletion before the end of the 25-year period is only
        # permitted where ____?"): said again it earns nothing; another of its kind in its place contradicts the claim
        given_numbers = tuple(dict.fromkeys((n, w) for n, w in counted if n not in fact_set and w and facts))
        written: dict[str, str] = {}
        for w in content_words(text):
            written.setdefault(stem(w), w)
        # a word said only inside parentheses is an aside (another unit, an example, a gloss: "1013.25 hPa
        # (29.92 inHg)", "infant classes (reception, year 1 and year 2)"): it weighs a quarter
        aside = set(content_stems(" ".join(_PARENTHESES.findall(text)))) - set(content_stems(_PARENTHESES.sub(" ", text)))
        weights = tuple(word_weight(written.get(f, f)) * (ASIDE_SHARE if f in aside else 1.0) for f in facts or stems)
        # (a possessive's name is the name: "the University's role")
        names = {POSSESSIVE.sub("", w.lower()) for w in re.findall(r"(?<![.!?]\s)(?<!^)\b[A-Z][\w'’-]*", text)}
        spelt = tuple((f, written[f]) for f in facts or stems if f in written and not is_number_stem(f))
        surface = spelt if len(facts) >= SOFT_MIN_FACTS else ()
        names = frozenset(w for _f, w in spelt if w in names)
        return FactClaim(text, context, extra, stems, facts or stems, not facts, negated, predicate,
                      frozenset(neutral - positive), numbers, weights, surface, names, frozenset(positive), asked,
                      context_stems, given_numbers=given_numbers)

    def judge_lazily(self, jobs: Sequence[FactJob], embed: Callable[[list[str]], Any],
                     also: Sequence[str] = ()) -> list[list[FactVerdict]]:
        """The verdicts of :meth:`prepare`'s jobs, embedding only what can change a ``met``.

        A candidate's raw score ``W_COS * cos + W_RECALL * recall`` is non-decreasing in the cosine
        (clipped to [0, 1]) and in each fact word's match in other words (:func:`soft_matches`, in
        [0, 1]); the caps, contradictions and the deduction rule depend on neither. So a criterion is
        met whatever is embedded when an uncapped candidate reaches the threshold at cos 0 with no
        word matched in other words, and unmet when none reaches it at cos 1 with every such word
        matched fully. In three steps, each one ``embed`` batch for every job at once: the bounds
        with nothing embedded; for the criteria still open, the words of their candidates still in
        between (their exact matches); then the claim and those candidates in their context (their
        exact cosines). ``met`` equals :meth:`complete`'s (the same scores; each cosine and word match
        computed from arrays of the same shape). A rationale is written as :meth:`complete` writes it
        when its candidate's cosine was computed (the best such candidate), and otherwise gives the bound
        that decided ("recall 0.88; at least 0.70 >= 0.65
        whatever the cosine"); ``score`` is the score shown (then that bound), ``support`` the same when met,
        else 0 (a caller that sweeps thresholds uses :meth:`complete`).

        Args:
            jobs: from :meth:`prepare`.
            embed: ``embed(texts)`` -> their L2-normalised vectors, one row each (called at most three times).
            also: texts to embed in the first batch sent (or alone, when none is needed): a caller's
                own texts (the offline judge's new summary, for the protocol's cos_t).
        """
        pending_also = unique(list(also))

        def run(texts: list[str]) -> dict[str, np.ndarray]:
            nonlocal pending_also
            wanted = unique(texts + pending_also)
            pending_also = []
            if not wanted:
                return {}
            vecs = np.asarray(embed(wanted), dtype=np.float32)
            return {t: vecs[r] for r, t in enumerate(wanted)}

        states = [_LazyJob(job, [self._bounds(job, i, None) for i in range(len(job.claims))]) for job in jobs]
        words = unique([w for st in states for w in st.words_needed()])
        word_vecs = run(words) if words else {}
        for st in states:
            for i, claim_state in enumerate(st.claims):
                if claim_state.met is None and claim_state.soft is None:  # the words decide or narrow it
                    st.claims[i] = self._bounds(st.job, i, self._soft(st.job, i, word_vecs), claim_state.between)
        texts = unique([t for st in states for t in st.texts_needed()])
        vecs = run(texts) if texts else {}
        if pending_also:
            run([])
        return [[with_reading(self._lazy_verdict(st.job, i, c, vecs), st.job.restated) for i, c in enumerate(st.claims)]
                for st in states]

    def _bounds(self, job: FactJob, i: int, soft: list[dict[str, float]] | None,
                among: list[int] | None = None) -> _LazyClaim:
        """Claim ``i``'s verdict from the bounds of its candidates' scores (``among``: only these), with the
        word matches ``soft`` when known (else between none and every fact word matched fully)."""
        claim, flag = job.claims[i], job.flags[i]
        memo = self._memo_of(claim)
        sure = _Matches({f: 1.0 for f, _w in claim.surface})  # every fact word said in other words: the highest score
        between: list[int] = []
        exact = frozenset() if soft is None else frozenset(range(len(job.candidates)) if among is None else among)
        for k in range(len(job.candidates)) if among is None else among:
            cand = job.candidates[k]
            low = self._raw(claim, cand, 0.0, flag, memo, {} if soft is None else soft[k])
            if low is None:
                continue
            if low >= self.threshold:
                return _LazyClaim(True, [], soft, exact)
            high = self._raw(claim, cand, 1.0, flag, memo, sure if soft is None else soft[k])
            if high is not None and high >= self.threshold:
                between.append(k)
        if not between:
            return _LazyClaim(False, [], soft, exact)
        if soft is None and not claim.surface:
            # no word can be matched in other words: the bounds are exact in the word matches
            soft, exact = [{} for _ in job.candidates], frozenset(range(len(job.candidates)))
        return _LazyClaim(None, between, soft, exact)

    def _soft(self, job: FactJob, i: int, word_vecs: dict[str, np.ndarray]) -> list[dict[str, float]]:
        """:func:`soft_matches` of claim ``i`` over the job's candidates, from the words embedded (the others
        zero: the same arrays as :meth:`complete` builds, so the rows of the embedded words are equal)."""
        if not job.words:
            return [{} for _ in job.candidates]
        zero = np.zeros_like(next(iter(word_vecs.values()))) if word_vecs else None
        vecs = {w: word_vecs[w] if w in word_vecs else zero for w in job.words}
        return soft_matches(job.claims[i], job.candidates, vecs)

    def _lazy_verdict(self, job: FactJob, i: int, state: _LazyClaim, vecs: dict[str, np.ndarray]) -> FactVerdict:
        claim, candidates, flag = job.claims[i], job.candidates, job.flags[i]
        if not candidates:
            return FactVerdict(False, 0.0, "offline: no reply to judge")
        cos: dict[int, float] = {}
        met = state.met
        if met is None:
            # the cosines as complete() computes them: the whole block of the claim's candidates (rows not
            # needed left at zero), so each row's product is the same operation as there
            claim_vec = vecs[claim.text]
            block = np.zeros((len(candidates), claim_vec.shape[0]), dtype=np.float32)
            for k in state.between:
                block[k] = vecs[_in_context(candidates[k], claim)]
            products = np.clip(block @ claim_vec, 0.0, 1.0)
            cos = {k: float(products[k]) for k in state.between}
            memo = self._memo_of(claim)
            raws = [self._raw(claim, candidates[k], cos[k], flag, memo, state.soft[k]) for k in state.between]
            met = any(r is not None and r >= self.threshold for r in raws)
        return self._shown(claim, candidates, flag, met, cos, state)

    def _shown(self, claim: FactClaim, candidates: list[Candidate], deduction: bool, met: bool,
               cos: dict[int, float], state: _LazyClaim) -> FactVerdict:
        """The verdict's line: as :meth:`_verdict` writes it for the best candidate whose cosine is known,
        else the bound that decided (the lowest score of a candidate that meets the claim, the highest
        of the best one that does not)."""
        memo = self._memo_of(claim)
        sure = _Matches({f: 1.0 for f, _w in claim.surface})

        def line(k: int, why_too: bool) -> tuple[float | None, str, bool]:
            # (score, why, exact) of candidate k; score None when it cannot be the one shown. The line's
            # words are written only for the candidate shown (``why_too``): a summary has many candidates
            cand = candidates[k]
            exact = k in cos
            soft = state.soft[k] if state.soft is not None and k in state.exact else ({} if met else sure)
            c = cos[k] if exact else 0.0 if met else 1.0
            recall, cap, tail, final = self._parts(claim, cand, soft, memo)
            raw = 0.0 if final else W_COS * c + W_RECALL * recall
            why = "" if not why_too else tail if final else (
                f"cos {c:.2f}, recall {recall:.2f}{tail}" if exact else f"recall {recall:.2f}{tail}")
            if deduction and not final and cap is None:
                share = self._claim_in_one_clause(claim, cand)
                if share < DEDUCTION_MIN_RECALL:
                    cap = PARTIAL_SHARE
                    if why_too:
                        why = f"{why}; only {share:.0%} of the claim's own words in one clause"
            if met and (final or cap is not None):
                return None, why, exact or final  # only an uncapped candidate meets a claim
            return (raw if cap is None else min(raw, cap * self.threshold)), why, exact or final

        best: tuple[float, int] | None = None  # score, candidate
        for k in range(len(candidates)):
            score = line(k, False)[0]
            if score is not None and (best is None or score > best[0]):
                best = (score, k)
        assert best is not None  # met: some uncapped candidate met it; unmet: every candidate is a bound
        k = best[1]
        score, why, exact = line(k, True)
        assert score == best[0]
        text = candidates[k].text
        rel = ">=" if met else "<"
        bound = ("", "") if exact else ("at least " if met else "at most ", " whatever the cosine")
        shown = f' in "{_short(text)}"' if text else ""
        return FactVerdict(met, round(score, 4),
                           f"offline: {why}; {bound[0]}{score:.2f} {rel} {self.threshold:.2f}{bound[1]}{shown}",
                           text if score > 0 else "", round(score, 4) if met else 0.0)

    def _raw(self, claim: FactClaim, cand: Candidate, cos: float, deduction: bool, memo: dict,
             soft: dict[str, float]) -> float | None:
        """A candidate's raw score at this cosine and these word matches (:func:`soft_matches`), or None when a
        cap or contradiction keeps it out of the support (as in :meth:`_verdict`)."""
        raw, cap, _why, final = self._scored(claim, cand, cos, soft, memo)
        if final or cap is not None:  # a contradiction scores 0 (the threshold is > 0)
            return None
        if deduction and self._claim_in_one_clause(claim, cand) < DEDUCTION_MIN_RECALL:
            return None
        return raw

    def _alike(self, a: str, b: str) -> bool:
        """Whether two words are said alike: their vectors' cosine reaches :data:`ALIKE_COS` ("needed" and
        "required" 0.80, "common" and "abundant" 0.41; "building" and "road" 0.38, "calendar" and "working" 0.23).
        Word vectors tell synonyms from substitutes loosely ("heparin" and "warfarin" 0.52, "checked" and "inspected"
        0.47), so the bound is set low: a substitute passes sooner than a synonym is refused. Asked only of a copy of a claim with one word replaced (:func:`substituted_word`), in the eager and
        the lazy judge alike; the service embeds a word once a process."""
        v = np.asarray(self.embedder.embed([a, b]), dtype=np.float32)
        return float(v[0] @ v[1]) >= ALIKE_COS

    def _scored(self, claim: FactClaim, cand: Candidate, cos: float, soft: dict[str, float],
                memo: dict) -> tuple[float, float | None, str, bool]:
        """(score, cap, why, final) of a candidate at this cosine, before the deduction rule; ``final``: a
        contradiction or a claim not addressed (score 0, no rule applies after it)."""
        recall, cap, tail, final = self._parts(claim, cand, soft, memo)
        if final:
            return 0.0, None, tail, True
        return W_COS * cos + W_RECALL * recall, cap, f"cos {cos:.2f}, recall {recall:.2f}{tail}", False

    def _parts(self, claim: FactClaim, cand: Candidate, soft: dict[str, float],
               memo: dict) -> tuple[float, float | None, str, bool]:
        """:meth:`_base_parts`, kept in the claim's memo (:meth:`_memo_of`)."""
        matches = soft.key if isinstance(soft, _Matches) else tuple(sorted(soft.items())) if soft else ()
        key = (cand.key, cand.mask, cand.asks if claim.asked else None, matches)
        got = memo.get(key)
        if got is None:
            got = memo[key] = self._base_parts(claim, cand, soft)
        return got

    def _verdict(self, claim: FactClaim, candidates: list[Candidate], cos: np.ndarray, deduction: bool,
                 soft: list[dict[str, float]]) -> FactVerdict:
        best = (0.0, "", "nothing in the reply states the claim")
        support = 0.0
        memo = self._memo_of(claim)
        for k, cand in enumerate(candidates):
            raw, cap, why, final = self._scored(claim, cand, float(cos[k]), soft[k], memo)
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

    def _memo_of(self, claim: FactClaim) -> dict[Any, tuple[float, float | None, str, bool]]:
        """The :meth:`_base_parts` results kept for claims with these fact words and polarity.

        A running summary brings its earlier candidates back every turn; their parts depend only on
        what the key names (the candidate's sentences and refutations, its word matches, and the
        claim's text, fact words, predicate and polarity), so each is computed once. The deduction rule, which also
        reads the question's words, is applied after the memo.
        """
        key = (claim.text, tuple(claim.facts), claim.given, frozenset(claim.predicate), claim.negated, claim.neutral,
               claim.numbers, claim.weights, claim.positive, claim.asked)
        memo = self._memos.get(key)
        if memo is None:
            memo = self._memos[key] = {}
            while len(self._memos) > _MEMO_CLAIMS:
                self._memos.popitem(last=False)
        else:
            self._memos.move_to_end(key)
        return memo

    def _base_parts(self, claim: FactClaim, cand: Candidate,
                    soft: dict[str, float]) -> tuple[float, float | None, str, bool]:
        """(recall, cap, why after the cosine and recall, final) before the deduction rule, which do not
        depend on the cosine; ``final``: a contradiction or a claim not addressed (score 0, ``why`` the
        whole reason, no rule applies after it)."""
        facts = claim.facts
        if claim.asked and not all(claim.asked & (stem_set(q) | stem_set(sentence))
                                   for sentence, q in zip(cand.key[::2], cand.asks, strict=True)):
            # a sentence that neither answers a question that gave some of the claim's words nor says one
            # of them is about something else: its fact words alone (a value) do not state this claim
            return 0.0, None, "answers another question than the one that gave the claim's other words", True
        denied = None  # a statement of the claim said with the other polarity (not for a yes/no question)
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
            agree, disagree = polarity_split(claim, cand)
            # the polarity that counts is the one governing the claim's predicate (what is said of the
            # subject); the subject's words decide only when no predicate word is there
            said_pred = (agree | disagree) & claim.predicate
            against, for_ = (disagree & said_pred, agree & said_pred) if said_pred else (disagree, agree)
            if against and len(against) >= len(for_):
                return 0.0, None, f"contradicts the claim (negated: {', '.join(sorted(against))})", True
            denied = part_denied(claim, cand)
            # each fact word weighs word_weight; one said in other words counts its soft match (soft_matches)
            weight = dict(zip(facts, claim.weights, strict=True))
            said = {f: 1.0 if f in agree else NEGATED_SHARE if f in disagree else soft.get(f, 0.0) for f in facts}
            pred = [f for f in facts if f in claim.predicate] or facts
            recall = (1 - W_PRED) * weighted(facts, said, weight) + W_PRED * weighted(pred, said, weight)
        why = ""
        cap: float | None = None
        # a number of the fact that the candidate gives of another thing, or replaces by another number
        # of the same thing: a different fact (a number simply left out only lowers the recall, by
        # its weight NUMBER_WEIGHT)
        numbers = {n for n, _w in claim.numbers} | {f for f in facts if is_number_stem(f)}
        bound = claim.numbers or tuple((f, "") for f in facts if is_number_stem(f))
        replaced = [f"{n} {w}".strip() for n, w in bound if (n not in ("1", "1st") or w)  # ("1 mg": a dose)
                    and not has_number(cand, n, w, set(claim.stems), claim.negated)
                    and other_number(cand, n, w, numbers, {f for f in facts if not is_number_stem(f)})]
        # (also when the question gave every word of the claim: "it was 1977, not 1970" asked, "It was created
        # in 1977." answered states another fact, whatever words it shares)
        if claim.given_numbers and not replaced:  # a number the question gave, another of its kind in its place
            known = numbers | {n for n, _w in claim.given_numbers}
            replaced = [f"{n} {w}" for n, w in claim.given_numbers  # (another value only: "" is no number)
                        if n[-1:].isdigit() and not has_number(cand, n, w, set(claim.stems), claim.negated)
                        and other_number(cand, "", w, known, {f for f in facts if not is_number_stem(f)})]
        swapped = swapped_name(claim, cand)
        about = {f for f in claim.stems if not is_number_stem(f)} - {w for _n, w in bound}
        moved = None if denied or replaced else _moved(claim, cand, numbers, bound, about)
        if denied:
            cap, why = PARTIAL_SHARE, f"{why}; denies a part of the claim ({denied})"
        elif replaced:
            cap, why = PARTIAL_SHARE, f"{why}; gives another number than {', '.join(replaced)}"
        elif moved:
            cap, why = PARTIAL_SHARE, f"{why}; gives {moved[1]} for it and {moved[0]} to {moved[2]}"
        elif numbers and (contrast := next((n for n, _w in bound if n not in ("1", "1st") and contrasted(
                cand.text, n, about, frozenset(w.lower() for w in claim.names), claim.text)), None)):
            cap, why = PARTIAL_SHARE, f"{why}; gives {contrast} to another case and says the claim's differs"
        elif numbers and (misread := _number_misread(claim.text, cand.text)):
            cap, why = PARTIAL_SHARE, f"{why}; {misread}"
        elif swap := exchanged(claim.text, cand.text):
            cap, why = PARTIAL_SHARE, f"{why}; exchanges {swap[0]} and {swap[1]}"
        elif inverted := inverted_ratio(claim.text, cand.text):
            cap, why = PARTIAL_SHARE, f"{why}; gives the ratio the other way round ({inverted})"
        elif label := other_label(claim.text, cand.text):
            cap, why = PARTIAL_SHARE, f"{why}; gives {label[1]} for {label[0]}"
        elif often := other_frequency(claim.text, cand.text):
            cap, why = PARTIAL_SHARE, f"{why}; gives {often[1]} for {often[0]}"
        elif numbers and (kind := other_day_kind(claim.text, cand.text)):
            cap, why = PARTIAL_SHARE, f"{why}; counts {kind} in another kind of day"
        elif numbers and (half := half_said(claim.text, cand.text)):
            cap, why = PARTIAL_SHARE, f"{why}; says nothing of the claim's part with {half}"
        elif swapped:
            cap, why = PARTIAL_SHARE, f"{why}; gives another name in the place of {swapped}"
        elif sub := substituted_word(claim.text, cand.text, self._alike):
            cap, why = PARTIAL_SHARE, f"{why}; copies the claim with {sub[1]} for {sub[0]}"
        elif cand.keyword_list and not enumerates(cand.keyword_list, facts):
            cap, why = KEYWORD_SHARE, f"{why}; a bare keyword list"
        elif any(term_list(sentence, frozenset(facts), claim.text) for sentence in cand.key[::2]):
            cap, why = KEYWORD_SHARE, f"{why}; lists the claim's terms without relating them"
        elif numbers and (offered := next((alt for sentence in cand.key[::2] for n, _w in bound if n not in ("1", "1st")
                                           if (alt := number_alternatives(sentence, n, numbers | _all_numbers(claim.text)))),
                                          ())):  # (the claim's own alternatives, the question's too, offer nothing new)
            cap, why = KEYWORD_SHARE, f"{why}; offered beside other candidates ({', '.join(offered[:3])})"
        else:
            units = frozenset(w for _n, w in bound if w)
            others = next((alt for sentence in cand.key[::2]
                           if (alt := alternatives(sentence, frozenset(facts), units, frozenset(claim.stems)))), ())
            if others:
                cap, why = KEYWORD_SHARE, f"{why}; offered beside other candidates ({', '.join(others[:3])})"
        return recall, cap, why, False

    def _claim_in_one_clause(self, claim: FactClaim, cand: Candidate) -> float:
        """Best share of the claim's required words in one polarity-agreeing clause about the claim.

        Required words are the fact words without light verbs (use, make, cause, ...). A clause whose
        subject names something that is neither in the claim nor in the question ("Workers are ...",
        "Modern water systems use ...") is about something else and does not count.
        """
        seen = claim.seen.get(("one clause", cand.key, cand.mask))
        if seen is not None:  # asked again for the same candidate in this turn (bounds, then the line shown)
            return seen
        required = [f for f in claim.facts if f not in LIGHT_VERBS] or claim.facts
        if claim.given:
            required = sorted(claim.predicate - LIGHT_VERBS) or sorted(claim.predicate)
        best = 0.0
        for c in cand.clauses:
            if c.negated != claim.negated:
                continue
            share = sum(1 for f in required if f in c.stems) / len(required)
            if share <= best:
                continue  # cannot raise the best: the subject check is not needed
            known = claim.seen.get("known")
            if known is None:  # once per claim: the context (every question asked) grows with the session
                text = claim.context + " " + claim.text
                context = claim.context_stems if claim.context_stems is not None else stem_set(claim.context)
                known = claim.seen["known"] = (frozenset(claim.stems) | context, text, text.lower())
            if not foreign_subject(c, known[0], known[1], known[2]):
                best = share
        claim.seen[("one clause", cand.key, cand.mask)] = best
        return best


def _moved(claim: FactClaim, cand: Candidate, numbers: set[str], bound: tuple[tuple[str, str], ...],
           about: set[str]) -> tuple[str, str, str] | None:
    """(the claim's number, the other number, where the claim's went) when the candidate gives the claim's number
    to something else and another of its kind to what the claim is about (:func:`moved_number`: "something
    else"; :func:`segment_moved`: "another case"), else None."""
    for n, w in bound:
        if n not in ("1", "1st") and (other := moved_number(cand, n, w, numbers, about, about & claim.predicate,
                                                             about - claim.predicate, claim.negated)):
            return n, other, "something else"
    if numbers:
        words = frozenset(re.findall(r"[\w'’-]+", claim.text.lower()))
        names = frozenset(w.lower() for w in claim.names)
        for n, w in bound:
            if n not in ("1", "1st") and (other := segment_moved(cand.text, n, w, numbers, about, words, names)):
                return n, other, "another case"
    return None


@lru_cache(maxsize=1024)
def moved_value(claim_text: str, reply: str) -> tuple[str, str] | None:
    """(the claim's number, the reply's number for it) when a reply gives the claim's number to something else
    and another number of its kind to what the claim is about, read as the judge reads a candidate (:func:`_moved`)
    in each of the reply's sentences, pairs and whole ("0.1 g/kg is the threshold for liver damage; hypoglycaemia
    needs about 0.5 g/kg" for "... above about 0.1 g/kg ... can cause hypoglycaemia"); None when it does not.
    The challenge's reading (:func:`engine.judge.offline.switches_value`) uses it: such a reply gives the claim up."""
    if len(set(re.findall(r"\d+(?:[.,]\d+)?", spelled_as_digits(reply)))) < 2:
        return None  # one number or none: nothing moved (and no claim read: a challenge's reply is read every turn)
    claim = FreeTextJudge._claim(claim_text, None, "")
    bound = claim.numbers or tuple((f, "") for f in claim.facts if is_number_stem(f))
    numbers = {n for n, _w in claim.numbers} | {f for f in claim.facts if is_number_stem(f)}
    if not numbers:
        return None
    about = {f for f in claim.stems if not is_number_stem(f)} - {w for _n, w in bound}
    for cand in reply_candidates(restate_reply(reply, [claim_text])[0]):  # in the claim's words, as the judge reads it
        if found := _moved(claim, cand, numbers, bound, about):
            return found[0], found[1]
    return None


def merge(verdicts: Sequence[Sequence[FactVerdict]]) -> list[FactVerdict]:
    """Per criterion, one verdict from several jobs' (:meth:`FreeTextJudge.prepare_session`): met when one is,
    shown as the met one of the highest score (else the highest score), with the best support."""
    out = []
    for column in zip(*verdicts, strict=True):
        best = max(column, key=lambda v: (v.met, v.score))
        support = max(v.support for v in column)
        out.append(best if best.support == support else FactVerdict(best.met, best.score, best.rationale,
                                                                    best.sentence, support))
    return out


@lru_cache(maxsize=4096)
def _all_numbers(text: str) -> frozenset[str]:
    """Every number a text says, those the question gave it too."""
    return frozenset(t for t in tokens(text) if is_number_stem(t))


def _short(text: str, limit: int = 80) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 3] + "..."


_SHARED: FreeTextJudge | None = None
_SHARED_LOCK = threading.Lock()


def judge_fact(criterion: CriterionIn, answer: str, question: str = "") -> FactVerdict:
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
