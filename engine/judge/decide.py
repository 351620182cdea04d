"""The one place that decides how a turn is judged (issue 38).

Protocols (:mod:`engine.interview.protocols`) and ``viva judge check`` (:mod:`engine.judge.check`) hand a
typed view of what is to be judged to one of the entry points below and record what comes back; they hold
no judging logic. Which judge serves what is written once, in :data:`JUDGES`, and :func:`route` reads it:

=====================  ==========================================  ==================  ==========================
route                  serves                                      configuration       judged by
=====================  ==========================================  ==================  ==========================
choice                 a gold criterion of a multiple-choice item  any judge           engine.judge.choice
gold lexical           a gold criterion of a free-answer item      offline judge       engine.judge.gold_match
gold LLM               a gold criterion of a free-answer item      LLM judge           engine.judge.gold_llm
                                                                                       (the lexical verdict kept
                                                                                       beside it)
criterion offline      any other criterion (adaptive turns)        offline judge       engine.judge.offline
criterion LLM          any other criterion (adaptive turns)        LLM judge           engine.judge.llm
rubric 0-5 estimate    a SedarEval rubric item (the conversation)  offline judge       engine.judge.rubric_judge
                                                                                       (offline estimate)
rubric 0-5 LLM         a SedarEval rubric item (the conversation)  LLM judge           engine.judge.rubric_judge
                                                                                       (prompt, re-asks)
task eval_code         a task scoring point with ``eval_code``     any judge           engine.judge.sandbox
task point offline     a task scoring point                        offline judge       engine.judge.offline
task point LLM         a task scoring point                        LLM judge           engine.judge.llm
=====================  ==========================================  ==================  ==========================

Entry points:

- :func:`judge_turn`: a question-and-answer turn against its criteria (the adaptive protocol, the
  graded protocol's base and validation questions, ``viva judge check``'s rows): every gold criterion by
  its route, every other criterion by the kernel's judge in one call, the running summary beside them;
- :func:`judge_reply`: one reply against golds with no criterion (a graded extension question);
- :func:`judge_rubric`: a rubric item's whole conversation on SedarEval's 0–5 scale;
- :func:`judge_points`: a task transcript's scoring points;
- :func:`rate`: Professionalism and Stability of a whole conversation (an LLM judge only).
"""

from __future__ import annotations

import asyncio
import random
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from engine.judge.base import Judge, Judgement, TurnView, Verdict
from engine.judge.gold import is_gold, judge_gold_criteria
from engine.judge.gold_llm import llm_gold_verdicts
from engine.judge.gold_match import GoldVerdict, judge_gold
from engine.llm import UNUSABLE, ContextOverflowError, Usage, spent

# -- the table -------------------------------------------------------------------------------------------
OFFLINE, LLM, ANY = "offline judge", "LLM judge", "any judge"


@dataclass(frozen=True)
class Route:
    """One row of :data:`JUDGES`: a judge, what it serves and under which configuration."""

    name: str
    serves: str
    configuration: str
    module: str


CHOICE = Route("choice", "a gold criterion of a multiple-choice item", ANY, "engine.judge.choice")
GOLD_LEXICAL = Route("gold lexical", "a gold criterion of a free-answer item", OFFLINE, "engine.judge.gold_match")
GOLD_LLM = Route("gold LLM", "a gold criterion of a free-answer item", LLM, "engine.judge.gold_llm")
CRITERION_OFFLINE = Route("criterion offline", "any other criterion of a turn", OFFLINE, "engine.judge.offline")
CRITERION_LLM = Route("criterion LLM", "any other criterion of a turn", LLM, "engine.judge.llm")
RUBRIC_ESTIMATE = Route("rubric 0-5 estimate", "a rubric item's conversation", OFFLINE, "engine.judge.rubric_judge")
RUBRIC_LLM = Route("rubric 0-5 LLM", "a rubric item's conversation", LLM, "engine.judge.rubric_judge")
TASK_CODE = Route("task eval_code", "a task scoring point with eval_code", ANY, "engine.judge.sandbox")
TASK_OFFLINE = Route("task point offline", "a task scoring point", OFFLINE, "engine.judge.offline")
TASK_LLM = Route("task point LLM", "a task scoring point", LLM, "engine.judge.llm")

JUDGES: tuple[Route, ...] = (CHOICE, GOLD_LEXICAL, GOLD_LLM, CRITERION_OFFLINE, CRITERION_LLM, RUBRIC_ESTIMATE,
                             RUBRIC_LLM, TASK_CODE, TASK_OFFLINE, TASK_LLM)
"""Which judge serves which item kind and configuration: the table the module docstring draws."""


def uses_llm(judge: Judge) -> bool:
    """The configuration column: an LLM judge is one that is not offline and has a client to call."""
    return not judge.offline and judge.client is not None


def route(criterion: Any, item: Any, judge: Judge, *, kind: str = "turn") -> Route:
    """The row of :data:`JUDGES` that judges ``criterion`` of ``item`` under ``judge``.

    ``kind``: ``turn`` (a question-and-answer turn), ``rubric`` (a rubric item's conversation) or
    ``task`` (a task transcript's scoring point).
    """
    llm = uses_llm(judge)
    if kind == "rubric":
        return RUBRIC_ESTIMATE if judge.offline else RUBRIC_LLM
    if kind == "task":
        if criterion.kind == "code" and criterion.eval_code:
            return TASK_CODE
        return TASK_OFFLINE if judge.offline else TASK_LLM
    if kind != "turn":
        raise ValueError(f"unknown kind of judging {kind!r} (turn, rubric or task)")
    if is_gold(criterion):
        if getattr(item, "options", None):
            return CHOICE
        return GOLD_LLM if llm else GOLD_LEXICAL
    return CRITERION_OFFLINE if judge.offline else CRITERION_LLM


# -- a question-and-answer turn ------------------------------------------------------------------------
@dataclass(frozen=True)
class ItemToJudge:
    """The parts of an item a judge reads, for callers without a stored item (``viva judge check``'s rows);
    sessions pass their :class:`engine.bench.model.Item`, which has the same fields."""

    question: str
    options: Mapping[str, str] | None = None
    reference: str | None = None
    topic: str = ""
    id: Any = None


@dataclass(frozen=True)
class TurnToJudge:
    """What :func:`judge_turn` judges: one turn, the target's turns before it and the item.

    ``item`` holds the item's question, options (multiple choice), reference and topic; ``criteria`` the
    criteria to judge (gold ones carry their golds in ``answers``); ``earlier`` the session's turns before
    this one, as judges see them; ``summary`` the running summary after the last judged turn;
    ``passage`` the item's source passage (a reply that pastes it is judged on what it says besides the
    copy) or ``None``; ``running_summary``: the protocol keeps a running summary, so the kernel's judge is
    asked even when every criterion is a gold one (it writes the summary).
    """

    idx: int
    question: str
    answer: str | None
    action: str
    item: Any
    criteria: tuple[Any, ...]
    earlier: tuple[TurnView, ...] = ()
    summary: str = ""
    passage: str | None = None
    running_summary: bool = True

    @property
    def view(self) -> TurnView:
        """This turn as judges see it."""
        return TurnView(self.idx, self.question, self.answer, self.action)


async def judge_turn(judge: Judge, turn: TurnToJudge, *, memo: dict | None = None) -> Judgement:
    """Verdicts for every criterion of ``turn`` (in the criteria's order), the running summary and the usage.

    Gold criteria go by :func:`route` (choice, gold lexical, or gold LLM with the lexical verdict beside it);
    the others to the kernel's judge in one call (criterion offline or LLM), which also writes the running
    summary. The gold LLM call and the judge's call do not need each other's reply, so they are sent at
    once (a turn waits for one round trip, not two). ``memo``: the gold LLM judge's answers so far in the
    session (a reply judged once is not asked again).

    Raises:
        the gold LLM call's error first, else the judge's (an ``engine.llm.UNUSABLE`` error is a turn
        that cannot be judged; the caller records it).
    """
    item, criteria = turn.item, list(turn.criteria)
    seen = [*turn.earlier, turn.view]
    gold = judge_gold_criteria(criteria, seen, item.question, getattr(item, "options", None), passage=turn.passage)
    others = [c for c in criteria if c.cid not in gold]
    asked = judge.judge(question=turn.question, criteria=others, summary=turn.summary, answer=turn.answer,
                        reference=getattr(item, "reference", None), history=list(turn.earlier),
                        action=turn.action) if others or turn.running_summary else None
    gold_llm = [c for c in criteria if c.cid in gold and route(c, item, judge) is GOLD_LLM]
    gold_usage = None
    if gold_llm:
        calls = [llm_gold_verdicts(judge.client, criteria, seen, item.question, gold, repairs=judge.repairs,
                                   memo=memo)]
        if asked is not None:
            calls.append(asked)
        done = await asyncio.gather(*calls, return_exceptions=True)
        if isinstance(done[0], BaseException):
            raise done[0]
        llm, gold_usage = done[0]
        gold.update(llm)
        judged = done[1] if asked is not None else None
    else:
        try:
            judged = await asked if asked is not None else None
        except UNUSABLE as exc:
            judged = exc
    if isinstance(judged, BaseException):
        raise judged
    if judged is None:
        return Judgement({c.cid: gold[c.cid] for c in criteria if c.cid in gold}, turn.summary,
                         gold_usage or Usage())
    judgement: Judgement = judged
    judgement.verdicts = {c.cid: gold.get(c.cid) or judgement.verdicts[c.cid] for c in criteria}
    if gold_usage is not None:
        for name in ("tokens_in", "tokens_out", "cost", "calls", "cached_calls"):
            setattr(judgement.usage, name, getattr(judgement.usage, name) + getattr(gold_usage, name))
    return judgement


def judge_reply(answer: str | None, golds: Sequence[str], question: str) -> GoldVerdict:
    """One reply against golds with no criterion to carry them (a graded extension question): the gold
    lexical route."""
    return judge_gold(answer or "", list(golds), question=question)


# -- ratings of a whole conversation -------------------------------------------------------------------
NOT_RATED_OFFLINE = "not rated: needs an LLM judge"


@dataclass
class Rating:
    """Professionalism and Stability of a conversation: the six 1–10 ratings (empty when not rated), the
    judge's rationale, why it was not rated (``note``), the usage, and whether the judge's reply was
    unusable."""

    ratings: dict[str, float] = field(default_factory=dict)
    rationale: str = ""
    note: str = ""
    usage: Usage | None = None
    unusable: bool = False


async def rate(judge: Judge, turns: Sequence[tuple[str, str, str]], topic: str) -> Rating:
    """Ratings of the answered ``turns`` (question, answer, action) by an LLM judge; an offline judge does
    not rate (the note says an LLM judge is needed), and an unusable reply is a note, not a failure."""
    if not uses_llm(judge):
        return Rating(note=NOT_RATED_OFFLINE)
    try:
        out, usage = await judge.rate(list(turns), topic=topic, nonce_parts=tuple((q, a) for q, a, _ in turns))
    except UNUSABLE as exc:
        return Rating(note=f"not rated: the judge's ratings were unusable ({exc})", usage=spent(exc), unusable=True)
    return Rating(dict(out.values()), out.rationale, "", usage)


# -- a rubric item's conversation ------------------------------------------------------------------------
class CannotEstimate(ValueError):
    """A rubric item the offline estimate cannot score at all (the message says what to configure)."""


@dataclass
class RubricOutcome:
    """What :func:`judge_rubric` found: the 0–5 score (``None``: cannot judge), the reasoning, per-point
    verdicts (the offline estimate's), usage, attempts, status (``scored`` or cannot judge), problems,
    whether it is an offline estimate, and the prompt's source."""

    score5: float | None
    reasoning: str
    verdicts: dict[str, Verdict]
    usage: Usage
    attempts: int
    status: str
    problems: list[str]
    offline: bool
    source: str


OFFLINE_ESTIMATE = "offline estimate"
"""The label of every figure the offline judge gives a rubric item (point coverage, no LLM judge)."""

REASK_ROOM = 900
"""Prompt characters kept free for a re-ask's message (what to fix and the score line's format, about 300
characters in English, 100 CJK characters in Chinese) when the prompt is sized to the judge's context."""


async def judge_rubric(judge: Judge, item: Any, criteria: Sequence[Any], questions: Sequence[str],
                       answers: Sequence[str], *, rng: random.Random, turn: int) -> RubricOutcome:
    """A rubric item's whole conversation on SedarEval's 0–5 scale, by :func:`route`: the LLM judge's prompt
    (:func:`engine.judge.rubric_judge.build_judge_prompt`, re-asked while its final score is unreadable,
    fitted to the judge's context), or the offline estimate (point coverage by the reference's words).

    Raises:
        CannotEstimate: the offline judge and a rubric with no scoring point.
    """
    if route(None, item, judge, kind="rubric") is RUBRIC_ESTIMATE:
        return await _rubric_estimate(judge, item, criteria, questions, answers)
    return await _rubric_llm(judge, item, criteria, answers, rng=rng, turn=turn)


async def _rubric_estimate(judge: Judge, item: Any, criteria: Sequence[Any], questions: Sequence[str],
                           answers: Sequence[str]) -> RubricOutcome:
    from engine.judge.rubric_judge import CANNOT_JUDGE, MAX_SCORE, NEEDS_LLM, offline_estimate

    if not any(c.kind != "deduction" for c in criteria):
        raise CannotEstimate(f"item {item.id}: the rubric has no scoring point, so the offline kernel cannot "
                             "estimate a score; configure an LLM judge (`judge:` or `kernel:` in viva.yaml)")
    reply = "\n\n".join(answers)
    asked = "\n".join(questions)
    est = await asyncio.to_thread(offline_estimate, asked, item.reference, criteria, reply, judge.facts)
    # a point that needs an LLM judge gets no verdict (it is left out of the score, here and after an override)
    verdicts = {p.cid: Verdict(p.cid, p.status == "met", p.status == "met", f"{OFFLINE_ESTIMATE}: {p.evidence}",
                               "offline") for p in est.points if p.status != NEEDS_LLM}
    lines = [f"{OFFLINE_ESTIMATE} (the reference answer's words for each point, no LLM judge):"]
    for c, p in zip(criteria, est.points, strict=True):
        sign = "-" if c.kind == "deduction" else "+"
        lines.append(f"{c.cid} {sign}{float(c.weight):g} {p.status}: {c.text} ({p.evidence})")
    if est.score is None:
        lines.append(f"{OFFLINE_ESTIMATE}: none: every point {NEEDS_LLM}")
        return RubricOutcome(None, "\n".join(lines), verdicts, Usage(), 0, CANNOT_JUDGE, [NEEDS_LLM], True,
                             "coverage")
    lines.append(f"{OFFLINE_ESTIMATE}: {est.score:.2f} / {MAX_SCORE:g} over the points it could judge "
                 f"({est.judged_weight:g} of {est.total_weight:g}; {est.needs_llm} {NEEDS_LLM})")
    return RubricOutcome(est.score, "\n".join(lines), verdicts, Usage(), 0, "scored", [], True, "coverage")


async def _rubric_llm(judge: Judge, item: Any, criteria: Sequence[Any], answers: Sequence[str], *,
                      rng: random.Random, turn: int) -> RubricOutcome:
    from engine.judge.rubric_judge import (
        CANNOT_JUDGE,
        ScoreReading,
        build_judge_prompt,
        judgement,
        read_final_score,
        reask_messages,
    )

    client = judge.client
    max_reasks = int(judge.repairs)
    answers = list(answers)
    built: list[Any] = []  # the prompt as last built (again after an overflow that named the context)
    readings: list[ScoreReading] = []
    usage = Usage()
    reply = ""

    def build(room: int | None, trims: list[str]) -> Any:
        built.append(build_judge_prompt(item, answers if len(answers) > 1 else answers[0], criteria, rng=rng,
                                        limit_chars=room, trims=trims))
        return built[-1]

    async def ask(prompt: Any) -> Any:
        nonlocal reply
        readings.clear()
        reply = ""
        messages = prompt.messages
        while True:
            result = await client.chat(messages, purpose="rubric judge re-ask" if readings else "rubric judge")
            usage.add(result)
            reply = result.text
            reading = read_final_score(reply, prompt.language)
            readings.append(reading)
            outcome = judgement(readings, max_reasks)
            if outcome.status != "reask":
                return outcome
            # the re-ask is the prompt and what to fix, numbered, never the whole bad reply (re-sending the
            # replies grew a weak judge's prompts from 1,129 to 2,811 tokens: issue 23)
            again = reask_messages([], reply, reading.problem or "no score", prompt.language)[-1]["content"]
            messages = [*prompt.messages, {"role": "user", "content": f"(re-ask {len(readings)}) {again}"}]

    try:
        outcome = await client.fitted(build, ask, call="rubric judge", turn=turn, reserve_chars=REASK_ROOM)
    except ContextOverflowError as exc:  # a bad exchange, not an unreachable judge: cannot judge
        readings.append(ScoreReading(None, f"the prompt does not fit the judge's context ({exc})"))
        outcome = judgement(readings, 0)
    prompt = built[-1]
    if outcome.status == CANNOT_JUDGE:
        return RubricOutcome(None, reply.strip(), {}, usage, outcome.attempts, CANNOT_JUDGE, outcome.problems,
                             False, prompt.source)
    return RubricOutcome(outcome.score, reply.strip(), {}, usage, outcome.attempts, "scored", outcome.problems,
                         False, prompt.source)


# -- a task transcript's scoring points -----------------------------------------------------------------
@dataclass
class PointsOutcome:
    """What :func:`judge_points` found: a verdict per judged point, the usage, and the points that could
    not be judged (``cid: why``; any of them leaves the session without an honest score)."""

    verdicts: dict[str, Verdict]
    usage: Usage
    unjudged: list[str]


@dataclass(frozen=True)
class Sandbox:
    """How a scoring point's ``eval_code`` runs (:func:`engine.judge.sandbox.run_eval_code`)."""

    data_dir: Path | None
    timeout: float
    workdir: Path | None = None
    trust: bool = False
    hide: tuple[Path, ...] = ()


async def judge_points(judge: Judge, task: str, criteria: Sequence[Any], messages: Sequence[Mapping[str, str]],
                       sandbox: Sandbox) -> PointsOutcome:
    """Every scoring point of a task transcript, by :func:`route`: ``eval_code`` in the sandbox; otherwise
    on **the agent's messages only** (no examiner text, no role labels: the examiner's description may
    hold the expected answer): the offline judge discounts what the agent could copy from what it was
    told (the examiner's messages), an LLM judge reads the task description (``task``) for context."""
    from engine.judge.sandbox import run_eval_code

    text = "\n\n".join(m["content"] for m in messages if m["role"] == "agent")
    told = "\n".join(m["content"] for m in messages if m["role"] == "examiner")
    verdicts: dict[str, Verdict] = {}
    usage = Usage()
    unjudged: list[str] = []
    for c in criteria:
        way = route(c, None, judge, kind="task")
        if way is TASK_CODE:
            result = await asyncio.to_thread(run_eval_code, c.eval_code, list(messages), sandbox.data_dir,
                                             sandbox.timeout, workdir=sandbox.workdir, trust=sandbox.trust,
                                             hide=list(sandbox.hide))
            verdicts[c.cid] = Verdict(c.cid, result.hit, result.hit, result.reason, "code")
            continue
        try:
            hit, reason, u = await judge.judge_point(told if way is TASK_OFFLINE else task, c.text, text)
        except UNUSABLE as exc:
            unjudged.append(f"{c.cid}: {exc}")
            u = spent(exc)
            usage.tokens_in += u.tokens_in
            usage.tokens_out += u.tokens_out
            usage.cost += u.cost
            continue
        usage.tokens_in += u.tokens_in
        usage.tokens_out += u.tokens_out
        usage.cost += u.cost
        verdicts[c.cid] = Verdict(c.cid, hit, hit, reason, "offline" if way is TASK_OFFLINE else "judge")
    return PointsOutcome(verdicts, usage, unjudged)



def table_rows() -> list[tuple[str, str, str, str]]:
    """:data:`JUDGES` as rows (route, serves, configuration, module), for docs and ``viva judge`` help."""
    return [(r.name, r.serves, r.configuration, r.module) for r in JUDGES]


GOLD_CID = "gold"


def gold_row(question: str, golds: Sequence[str], answer: str | None) -> TurnToJudge:
    """A labelled answer to a question with golds (``viva judge check``'s gold row) as one turn with one gold
    criterion: what a session's first turn on a one-question item is."""
    from engine.bench.model import Criterion

    criterion = Criterion(GOLD_CID, 0, "gold answer", answers=list(golds))
    return TurnToJudge(0, question, answer, "initial", ItemToJudge(question), (criterion,), running_summary=False)


async def gold_rows_verdicts(judge: Judge, rows: Sequence[tuple[str, Sequence[str], str]], *,
                             concurrency: int = 4) -> list[Verdict]:
    """:func:`judge_turn` on each (question, golds, answer) row as :func:`gold_row` builds it; at most
    ``concurrency`` rows at once (an LLM judge's calls). An error propagates (the caller decides what a
    failed row is)."""
    gate = asyncio.Semaphore(max(1, concurrency))

    async def one(row: tuple[str, Sequence[str], str]) -> Verdict:
        async with gate:
            return (await judge_turn(judge, gold_row(*row))).verdicts[GOLD_CID]

    return list(await asyncio.gather(*(one(r) for r in rows)))


async def criterion_rows_verdicts(judge: Judge, rows: Sequence[tuple[str, str, str]], *,
                                  concurrency: int = 4) -> list[Verdict]:
    """:func:`judge_turn` on (question, criterion, answer) rows: the rows that share a question and an answer
    are one turn's criteria (a session's first turn on that question), each row's verdict its criterion's.
    An error propagates (the caller decides what a failed row is)."""
    from engine.bench.model import Criterion
    from engine.text.cloze import parse_cloze

    groups: dict[tuple[str, str], list[int]] = {}
    for i, (question, _, answer) in enumerate(rows):
        groups.setdefault((question, answer), []).append(i)
    out: list[Verdict | None] = [None] * len(rows)
    gate = asyncio.Semaphore(max(1, concurrency))

    async def one(question: str, answer: str, idx: list[int]) -> None:
        criteria = tuple(Criterion(cid=f"c{k + 1}", ord=k, text=rows[i][1], cloze=parse_cloze(rows[i][1]))
                         for k, i in enumerate(idx))  # a row's text in the cloze wording is read as a cloze
        turn = TurnToJudge(0, question, answer, "initial", ItemToJudge(question), criteria)
        async with gate:
            judgement = await judge_turn(judge, turn)
        for c, i in zip(criteria, idx, strict=True):
            out[i] = judgement.verdicts[c.cid]

    await asyncio.gather(*(one(q, a, idx) for (q, a), idx in groups.items()))
    return [v for v in out if v is not None]
