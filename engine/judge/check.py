"""``viva judge check``: how far a judge agrees with people, on a file of human-labelled answers.

Before trusting a judge's scores, run it on answers whose correctness people have decided, and read
Cohen's κ beside the base rate, never raw accuracy alone (a judge that credits everything is 70%
"accurate" where 70% of the answers are right, and its κ is 0).

**Rows** (JSON Lines, one object per line):

- *gold rows*: ``question`` (may be ""), ``golds`` (a list of accepted answers, or one string),
  ``answer``, ``human`` (true/false: did people judge the answer correct);
- *criterion rows*: ``criterion`` (one fact), ``answer``, ``human`` (does the answer state it),
  ``question`` optional.

Any other field may group the figures (``--by model``). Any other *boolean* field is read as another
judge's verdict on the same rows (NQ301 carries ``gpt4_eval``, ``instructgpt_eval``, ``bem``) and is
reported beside viva's on the rows where it is present.

**Figures**, per group and overall (:class:`Figures`): n; the human base rate of "correct"; the
judge's rate; accuracy; Cohen's κ (:func:`engine.metrics.agreement.agreement`); precision and
recall of "correct" (precision = credited and right / credited; recall = credited and right /
right); the confusion matrix; a 95% percentile bootstrap interval of accuracy, κ, precision and recall
(the rows resampled 1000 times, seeded: :func:`engine.metrics.agreement.bootstrap_intervals`), and
"too few to read" under 50 rows. With ``--by FIELD``, each judge's **rank agreement** over the groups
(:func:`engine.metrics.agreement.rank_agreement`): Kendall τ-b and Pearson r between the share the
judge credits and the share people credit per group, with bootstrap intervals (rows resampled within
each group): how far a leaderboard built by the judge orders the groups as people would. Two reference rules are computed on every file: for gold rows, SQuAD
*exact match* and *substring* ("a gold, normalised, occurs in the answer at word boundaries"); for
criterion rows, *word overlap*: the share of the criterion's content stems found in the answer, at
the threshold that maximises κ on the same rows (fitted in-sample, so the baseline is optimistic).

**Judges**: ``offline`` (the gold judge :func:`engine.judge.gold_match.judge_gold` and the free-text
judge :class:`engine.judge.freetext.FreeTextJudge`), or an LLM judge asked as sessions ask it
(:class:`LLMCheckJudge`: :mod:`engine.judge.gold_llm` for gold rows, the interview's judge prompt for
criterion rows, one call per answer) whose test-retest agreement ``--repeat K`` measures as the share of rows on which all K verdicts
agree and the κ between the first two runs.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Callable, Iterable, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from engine.metrics.agreement import MIN_READ_N, agreement, bootstrap_intervals, rank_agreement

MAX_ROWS = 200_000
"""A file with more rows is refused (split it): the check keeps every row and verdict in memory."""

MAX_LINE_BYTES = 1_000_000
"""A longer line is refused with its number."""


class JudgeCheckError(ValueError):
    """A labelled file that cannot be checked (the message names the file and line)."""


@dataclass(frozen=True)
class CheckRow:
    """One human-labelled answer."""

    kind: str  # "gold" or "criterion"
    question: str
    answer: str
    human: bool
    golds: tuple[str, ...] = ()
    criterion: str = ""
    fields: dict[str, Any] = field(default_factory=dict)
    line: int = 0


def load_rows(path: str | Path) -> list[CheckRow]:
    """Read and validate a labelled JSONL file.

    Raises:
        JudgeCheckError: the file is missing, unreadable, or a line is not a valid row (the message
            names the file, the line and what to fix).
    """
    from engine.safeload import InputError, iter_input_lines

    path = Path(path)
    rows: list[CheckRow] = []
    handle = iter_input_lines(path, MAX_LINE_BYTES)  # a regular file only, size and line limits
    try:
        for number, raw in enumerate(handle, 1):
            try:
                text = raw.decode("utf-8")
            except UnicodeDecodeError:
                raise JudgeCheckError(f"{path}:{number}: not UTF-8 text") from None
            if not text.strip():
                continue
            try:
                obj = json.loads(text)
            except (json.JSONDecodeError, RecursionError) as exc:
                raise JudgeCheckError(f"{path}:{number}: not JSON ({getattr(exc, 'msg', 'too deeply nested')})") \
                    from None
            rows.append(_row(obj, path, number))
            if len(rows) > MAX_ROWS:
                raise JudgeCheckError(f"{path}: more than {MAX_ROWS} rows; split the file")
    except InputError as exc:
        raise JudgeCheckError(f"{path}{f':{exc.line}' if exc.line else ''}: {exc.reason}") from None
    except OSError as exc:
        raise JudgeCheckError(f"{path}: cannot read it ({exc.strerror or exc})") from None
    if not rows:
        raise JudgeCheckError(f"{path}: no rows (expected JSON Lines with answer, human and golds or criterion)")
    kinds = {r.kind for r in rows}
    if len(kinds) > 1:
        raise JudgeCheckError(f"{path}: mixes gold rows and criterion rows; check them as two files")
    return rows


def _row(obj: Any, path: Path, number: int) -> CheckRow:
    where = f"{path}:{number}"
    if not isinstance(obj, dict):
        raise JudgeCheckError(f"{where}: expected a JSON object, got {type(obj).__name__}")
    human = obj.get("human")
    if not isinstance(human, bool):
        raise JudgeCheckError(f'{where}: "human" must be true or false, got {human!r}')
    answer = obj.get("answer")
    if not isinstance(answer, str):
        raise JudgeCheckError(f'{where}: "answer" must be a string')
    question = obj.get("question") or ""
    if not isinstance(question, str):
        raise JudgeCheckError(f'{where}: "question" must be a string')
    fields = {k: v for k, v in obj.items() if k not in ("question", "answer", "human", "golds", "criterion")}
    if "golds" in obj:
        golds = obj["golds"]
        golds = [golds] if isinstance(golds, str) else golds
        if not isinstance(golds, list) or not all(isinstance(g, str) for g in golds) or not any(g.strip() for g in golds):
            raise JudgeCheckError(f'{where}: "golds" must be a non-empty list of strings')
        return CheckRow("gold", question, answer, human, golds=tuple(golds), fields=fields, line=number)
    criterion = obj.get("criterion")
    if isinstance(criterion, str) and criterion.strip():
        return CheckRow("criterion", question, answer, human, criterion=criterion, fields=fields, line=number)
    raise JudgeCheckError(f'{where}: a row needs "golds" (a list of accepted answers) or "criterion" (a fact)')


# -- figures ---------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Figures:
    """Agreement of one judge with the human labels on one group of rows."""

    n: int
    base_rate: float | None  # share of rows people marked correct
    judge_rate: float | None  # share the judge credited
    accuracy: float | None
    kappa: float | None
    kappa_note: str | None
    precision: float | None  # of "correct"
    recall: float | None  # of "correct"
    both: int  # judge and human say correct
    judge_only: int
    human_only: int
    neither: int
    intervals: dict[str, tuple[float, float] | None] = field(default_factory=dict)  # 95% bootstrap
    too_few: bool = False  # n under MIN_READ_N: too few to read

    def as_dict(self) -> dict[str, Any]:
        """A JSON-ready copy."""
        return asdict(self)


def figures(pairs: Iterable[tuple[bool, bool]]) -> Figures:
    """:class:`Figures` from ``(judge, human)`` pairs, with 95% bootstrap intervals of accuracy, κ,
    precision and recall (:func:`engine.metrics.agreement.bootstrap_intervals`) and ``too_few`` under
    :data:`engine.metrics.agreement.MIN_READ_N` rows."""
    a = agreement(pairs)
    credited, right = a.both_met + a.judge_only, a.both_met + a.human_only
    return Figures(a.n, a.human_met_rate, a.judge_met_rate, a.raw, a.kappa, a.kappa_note,
                   a.both_met / credited if credited else None, a.both_met / right if right else None,
                   a.both_met, a.judge_only, a.human_only, a.neither,
                   bootstrap_intervals(a.both_met, a.judge_only, a.human_only, a.neither), a.n < MIN_READ_N)


# -- reference rules -------------------------------------------------------------------------------


def substring_rule(row: CheckRow) -> bool:
    """A gold, SQuAD-normalised, occurs in the normalised answer at word boundaries."""
    from engine.judge.gold_match import normalize_answer

    answer = f" {normalize_answer(row.answer)} "
    return any(f" {normalize_answer(g)} " in answer for g in row.golds if normalize_answer(g))


def exact_match_rule(row: CheckRow) -> bool:
    """SQuAD exact match with some gold."""
    from engine.judge.gold_match import exact_match

    return any(exact_match(row.answer, g) for g in row.golds)


def overlap_share(row: CheckRow) -> float:
    """The share of the criterion's content stems (no function words) found among the answer's."""
    from engine.judge.gold_tokens import tokens
    from engine.text.lexicon import FILLER

    def stems(text: str) -> set[str]:
        return {t.stem for t in tokens(text) if t.kind in ("word", "num") and t.text not in FILLER}

    want = stems(row.criterion)
    return len(want & stems(row.answer)) / len(want) if want else 0.0


def fitted_overlap(rows: Sequence[CheckRow]) -> tuple[list[bool], float]:
    """Word-overlap verdicts at the threshold that maximises κ on ``rows`` (ties: the lower threshold)."""
    shares = [overlap_share(r) for r in rows]
    humans = [r.human for r in rows]
    best = (-2.0, 1.0)
    for t in sorted(set(shares)):
        k = agreement([(s >= t, h) for s, h in zip(shares, humans, strict=True)]).kappa
        if k is not None and k > best[0]:
            best = (k, t)
    return [s >= best[1] for s in shares], best[1]


# -- the check -------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Verdict:
    """A judge's verdict on one row."""

    met: bool
    rationale: str


@dataclass
class CheckReport:
    """What ``viva judge check`` prints (``as_dict`` is its ``--json``)."""

    path: str
    kind: str
    judge: str
    by: str | None
    overall: dict[str, Figures]  # judge name -> figures; viva's judge first
    groups: dict[str, dict[str, Figures]]  # group -> judge name -> figures
    disagreements: list[dict[str, Any]]
    notes: list[str]
    repeat: dict[str, Any] | None = None
    usage: dict[str, Any] | None = None
    ranks: dict[str, Any] = field(default_factory=dict)  # judge name -> RankAgreement over the --by groups

    def as_dict(self) -> dict[str, Any]:
        """A JSON-ready copy."""
        return {
            "path": self.path, "kind": self.kind, "judge": self.judge, "by": self.by,
            "overall": {k: v.as_dict() for k, v in self.overall.items()},
            "groups": {g: {k: v.as_dict() for k, v in figs.items()} for g, figs in self.groups.items()},
            "disagreements": self.disagreements, "notes": self.notes, "repeat": self.repeat, "usage": self.usage,
            "ranks": {k: v.as_dict() for k, v in self.ranks.items()},
        }


JudgeFn = Callable[[Sequence[CheckRow]], list[Verdict]]


def offline_verdicts(rows: Sequence[CheckRow]) -> list[Verdict]:
    """The offline judge's verdicts, through the judging entry point sessions use
    (:mod:`engine.judge.decide`): a gold row is a one-turn session on a one-question item
    (:func:`engine.judge.decide.gold_row`); the criterion rows that share a question and an answer are one
    turn's criteria (:func:`engine.judge.decide.criterion_rows_verdicts`), judged as a session's first turn."""
    import asyncio

    from engine.judge.offline import OfflineJudge

    if rows and rows[0].kind == "gold":
        from engine.judge.decide import gold_rows_verdicts

        judged = asyncio.run(gold_rows_verdicts(OfflineJudge(), [(r.question, r.golds, r.answer) for r in rows]))
        return [Verdict(v.met, v.rationale) for v in judged]
    from engine.judge.decide import criterion_rows_verdicts

    judged = asyncio.run(criterion_rows_verdicts(OfflineJudge(), [(r.question, r.criterion, r.answer) for r in rows]))
    return [Verdict(v.met, v.rationale) for v in judged]


def resolve_endpoint(config: Any, name: str) -> Any:
    """The endpoint ``--judge NAME`` names: ``judge`` (the judge role, default the kernel), ``kernel``,
    or a named entry of ``targets:`` in viva.yaml.

    Raises:
        JudgeCheckError: no such endpoint is configured.
    """
    if name == "judge" and (config.judge or config.kernel):
        return config.judge or config.kernel
    if name == "kernel" and config.kernel:
        return config.kernel
    if name in config.targets:
        return config.targets[name]
    known = [n for n, e in (("kernel", config.kernel), ("judge", config.judge or config.kernel)) if e]
    known += sorted(config.targets)
    raise JudgeCheckError(f"--judge {name}: no such endpoint in the configuration "
                          f"(configured: {', '.join(known) or 'none'}; `offline` needs none)")


class LLMCheckJudge:
    """An LLM judge for :func:`run_check`, through the entry point sessions use
    (:func:`engine.judge.decide.judge_turn`): a gold row is a turn with one gold criterion, judged by the
    gold LLM route as a session judges it (:func:`engine.judge.gold_llm.llm_gold_verdicts`: the LLM's
    verdict with the lexical rule's beside it, credited when either credits; where the LLM reply stays
    unusable, the lexical verdict stands, saying so); criterion rows by the interview's own judge
    (:meth:`engine.judge.llm.LLMJudge.judge`, the prompt a session's criteria are marked with): the rows
    that share a question and an answer are one rubric, judged in one call as a turn's criteria are, each
    row's verdict its criterion's ``met``. A row whose
    call fails (endpoint error, reply invalid after repairs) is counted as not credited and listed in
    the report's notes with its reason."""

    def __init__(self, client: Any, concurrency: int = 4, repairs: int = 2, retest_client: Any = None):
        from engine.llm import Usage

        self.client = client
        self.retest_client = retest_client or client  # runs after the first bypass the cache (test-retest)
        self.runs = 0
        self.concurrency = concurrency
        self.repairs = repairs
        self.usage = Usage()
        self.failed: dict[int, str] = {}  # line -> why its call failed (the last run's reason)

    def __call__(self, rows: Sequence[CheckRow]) -> list[Verdict]:
        """Judge every row (one event loop, ``concurrency`` calls at a time)."""
        import asyncio

        client = self.client if self.runs == 0 else self.retest_client
        self.runs += 1
        return asyncio.run(self._all(rows, client))

    async def _all(self, rows: Sequence[CheckRow], client: Any) -> list[Verdict]:
        import asyncio

        from engine.bench.model import Criterion
        from engine.judge.decide import GOLD_CID, ItemToJudge, TurnToJudge, gold_row, judge_turn
        from engine.judge.gold_llm import UNUSABLE_MARK
        from engine.judge.llm import LLMJudge
        from engine.redact import redact

        gate = asyncio.Semaphore(max(1, self.concurrency))
        judge = LLMJudge(client, self.repairs)
        out: list[Verdict | None] = [None] * len(rows)

        def add(usage: Any) -> None:
            for field_ in ("tokens_in", "tokens_out", "cost", "calls", "cached_calls"):
                setattr(self.usage, field_, getattr(self.usage, field_) + getattr(usage, field_))

        def failed(idx: list[int], exc: Exception) -> None:  # one bad reply costs its rows, not the check
            for i in idx:
                self.failed[rows[i].line] = f"line {rows[i].line}: {redact(str(exc))[:200]}"
                out[i] = Verdict(False, f"cannot judge: {redact(str(exc))[:200]}")

        async def gold(i: int) -> None:
            r = rows[i]
            async with gate:
                try:
                    judgement = await judge_turn(judge, gold_row(r.question, r.golds, r.answer))
                except Exception as exc:  # noqa: BLE001
                    failed([i], exc)
                    return
            add(judgement.usage)
            v = judgement.verdicts[GOLD_CID]
            if UNUSABLE_MARK in v.rationale:  # the lexical verdict stood in, as in a session: counted, listed
                why = v.rationale.split(UNUSABLE_MARK, 1)[1].rstrip("]")
                self.failed[r.line] = f"line {r.line}: {redact(why)[:200]} (the lexical verdict stands)"
            out[i] = Verdict(bool(v.met), v.rationale)

        async def rubric(idx: list[int]) -> None:
            first = rows[idx[0]]
            criteria = tuple(Criterion(cid=f"c{k + 1}", ord=k, text=rows[i].criterion) for k, i in enumerate(idx))
            turn = TurnToJudge(0, first.question, first.answer, "initial", ItemToJudge(first.question), criteria)
            async with gate:
                try:
                    judgement = await judge_turn(judge, turn)
                except Exception as exc:  # noqa: BLE001
                    failed(idx, exc)
                    return
            add(judgement.usage)
            for c, i in zip(criteria, idx, strict=True):
                v = judgement.verdicts[c.cid]
                out[i] = Verdict(bool(v.met), f"LLM judge: {v.rationale}")

        groups: dict[tuple[str, str], list[int]] = {}
        for i, r in enumerate(rows):
            if r.kind == "criterion":
                groups.setdefault((r.question, r.answer), []).append(i)
        await asyncio.gather(*(gold(i) for i, r in enumerate(rows) if r.kind == "gold"),
                             *(rubric(idx) for idx in groups.values()))
        return [v if v is not None else Verdict(False, "cannot judge") for v in out]

    def usage_report(self) -> dict[str, Any]:
        """Tokens, calls and cost so far (cost None when the endpoint has no price)."""
        u = self.usage
        priced = bool(getattr(self.client.endpoint, "price_in", 0) or getattr(self.client.endpoint, "price_out", 0))
        return {"tokens_in": u.tokens_in, "tokens_out": u.tokens_out, "calls": u.calls, "cached_calls": u.cached_calls,
                "cost": u.cost if priced else None, "rows_not_judged": len(self.failed),
                "not_judged": [self.failed[k] for k in sorted(self.failed)][:20]}


def _other_judges(rows: Sequence[CheckRow]) -> list[str]:
    """Boolean fields present on some rows: other judges' verdicts carried by the file."""
    names: dict[str, None] = {}
    for r in rows:
        for k, v in r.fields.items():
            if isinstance(v, bool):
                names.setdefault(k, None)
    return list(names)


def run_check(path: str | Path, rows: Sequence[CheckRow], *, judge_name: str = "offline",
              verdicts_of: JudgeFn = offline_verdicts, by: str | None = None, disagreements: int = 0,
              repeat: int = 1, usage: Callable[[], dict[str, Any]] | None = None, either: bool = False) -> CheckReport:
    """Judge every row and compare with the human labels.

    Args:
        path: the file (for the report).
        rows: from :func:`load_rows`.
        judge_name: the judge's name in the report.
        verdicts_of: the judge (default: the offline judges).
        by: a field to group the figures by (rows without it fall in "(none)").
        disagreements: how many disagreeing rows to list (false credits and misses alternately).
        repeat: judge K times (an LLM judge); reports test-retest agreement.
        usage: called after judging for tokens and cost (an LLM judge).
        either: gold rows: also each of the file's other judges "or" the lexical rule (credited when
            either credits), as sessions combine an LLM judge with the rule (:func:`engine.judge.gold_llm.combined`).

    Raises:
        JudgeCheckError: ``by`` names a field no row has; ``repeat`` < 1.
    """
    if repeat < 1:
        raise JudgeCheckError("--repeat must be at least 1")
    if by is not None and not any(by in r.fields for r in rows):
        known = sorted({k for r in rows for k in r.fields})
        raise JudgeCheckError(f"--by {by}: no row has that field (fields: {', '.join(known) or 'none'})")
    runs = [verdicts_of(rows) for _ in range(repeat)]
    verdicts = runs[0]
    kind = rows[0].kind
    viva = f"viva ({judge_name})"
    judges: dict[str, list[tuple[int, bool]]] = {viva: [(i, v.met) for i, v in enumerate(verdicts)]}
    notes: list[str] = []
    if kind == "gold" and verdicts_of is not offline_verdicts:
        # as sessions use an LLM judge on gold answers: credited when it or the lexical rule credits
        from engine.judge.gold_llm import combined

        lexical = offline_verdicts(rows)
        judges[f"viva ({judge_name} or lexical)"] = [(i, combined(v.met, lex.met))
                                                     for i, (v, lex) in enumerate(zip(verdicts, lexical, strict=True))]
        judges["viva (offline)"] = [(i, lex.met) for i, lex in enumerate(lexical)]
    if kind == "gold":
        judges["exact match"] = [(i, exact_match_rule(r)) for i, r in enumerate(rows)]
        judges["substring"] = [(i, substring_rule(r)) for i, r in enumerate(rows)]
    else:
        fitted, threshold = fitted_overlap(rows)
        judges["word overlap (fitted)"] = list(enumerate(fitted))
        notes.append(f"word overlap (fitted): share of the criterion's content stems in the answer >= "
                     f"{threshold:.3f}, the threshold that maximises κ on these same rows (optimistic)")
    lexical_met = [v.met for v in (verdicts if verdicts_of is offline_verdicts else offline_verdicts(rows))] \
        if kind == "gold" and either else []
    for name in _other_judges(rows):
        judges[name] = [(i, r.fields[name]) for i, r in enumerate(rows) if isinstance(r.fields.get(name), bool)]
        if lexical_met:
            judges[f"{name} or lexical"] = [(i, met or lexical_met[i]) for i, met in judges[name]]
        missing = len(rows) - len(judges[name])
        if missing:
            notes.append(f"{name}: from the file, on the {len(judges[name])} rows that carry it ({missing} without)")
    overall = {name: figures((met, rows[i].human) for i, met in pairs) for name, pairs in judges.items()}
    groups: dict[str, dict[str, Figures]] = {}
    if by is not None:
        keys: dict[str, list[int]] = {}
        for i, r in enumerate(rows):
            keys.setdefault(_key(r.fields.get(by)), []).append(i)
        for key in sorted(keys):
            members = set(keys[key])
            groups[key] = {name: figures((met, rows[i].human) for i, met in pairs if i in members)
                           for name, pairs in judges.items()}
    ranks = {}
    if by is not None and len(groups) >= 2:
        # how each judge ranks the groups against people (what a leaderboard needs)
        for name in judges:
            tables = {g: (f.both, f.judge_only, f.human_only, f.neither) for g, figs in groups.items()
                      for n_, f in figs.items() if n_ == name}
            ranks[name] = rank_agreement(tables)
    listed = _disagreements(rows, verdicts, disagreements)
    repeat_report = None
    if repeat > 1:
        stable = sum(len({run[i].met for run in runs}) == 1 for i in range(len(rows)))
        retest = agreement((a.met, b.met) for a, b in zip(runs[0], runs[1], strict=True))
        repeat_report = {"runs": repeat, "rows": len(rows), "all_runs_agree": stable,
                         "all_runs_agree_rate": stable / len(rows), "kappa_run1_run2": retest.kappa}
    return CheckReport(str(path), kind, judge_name, by, overall, groups, listed, notes, repeat_report,
                       usage() if usage else None, ranks)


def _key(value: Any) -> str:
    if value is None:
        return "(none)"
    return value if isinstance(value, str) else json.dumps(value)


def _disagreements(rows: Sequence[CheckRow], verdicts: Sequence[Verdict], limit: int) -> list[dict[str, Any]]:
    if limit <= 0:
        return []
    credited = [i for i, (r, v) in enumerate(zip(rows, verdicts, strict=True)) if v.met and not r.human]
    missed = [i for i, (r, v) in enumerate(zip(rows, verdicts, strict=True)) if r.human and not v.met]
    order: list[int] = []
    for a, b in zip(credited + [None] * len(missed), missed + [None] * len(credited), strict=False):
        order += [i for i in (a, b) if i is not None]
    out = []
    for i in order[:limit]:
        r, v = rows[i], verdicts[i]
        out.append({"line": r.line, "judge": v.met, "human": r.human,
                    "what": "credited, people did not" if v.met else "missed, people credited",
                    "question": r.question, "golds": list(r.golds), "criterion": r.criterion,
                    "answer": r.answer, "rationale": v.rationale})
    return out


def render_text(report: CheckReport) -> str:
    """The plain-text report (the command line prints it)."""
    lines = [f"{report.path}: {next(iter(report.overall.values())).n} {report.kind} rows, judge {report.judge}"]
    header = f"{'':30} {'n':>6} {'base':>6} {'rate':>6} {'acc':>6} {'κ':>6} {'prec':>6} {'rec':>6}  TP/FP/FN/TN"
    lines.append(header)

    def row(name: str, f: Figures) -> str:
        return (f"{name[:30]:30} {f.n:>6} {_p(f.base_rate)} {_p(f.judge_rate)} {_p(f.accuracy)} {_p(f.kappa)} "
                f"{_p(f.precision)} {_p(f.recall)}  {f.both}/{f.judge_only}/{f.human_only}/{f.neither}")

    def interval_line(f: Figures) -> str:
        if f.too_few:
            return f"{'':32}too few to read (n = {f.n} < {MIN_READ_N}): the figures above are noise"
        parts = []
        for key, label in (("accuracy", "acc"), ("kappa", "κ"), ("precision", "prec"), ("recall", "rec")):
            iv = f.intervals.get(key)
            parts.append(f"{label} [{iv[0]:.3f}, {iv[1]:.3f}]" if iv else f"{label} —")
        return f"{'':32}95% CI  " + "  ".join(parts)

    lines.append("overall")
    for name, f in report.overall.items():
        lines += ["  " + row(name, f), interval_line(f)]
    for group, figs in report.groups.items():
        lines.append(f"{report.by} = {group}")
        for name, f in figs.items():
            lines += ["  " + row(name, f), interval_line(f)]
    if report.ranks:
        lines.append(f"rank agreement over the {report.by} groups: the judge's credited share per group against "
                     "people's (95% bootstrap intervals)")
        for name, r in report.ranks.items():
            def fmt(v: float | None, iv: tuple[float, float] | None) -> str:
                if v is None:
                    return "—"
                return f"{v:.3f}" + (f" [{iv[0]:.3f}, {iv[1]:.3f}]" if iv else "")
            lines.append(f"  {name[:30]:30} groups {r.groups:>3}  Kendall τ {fmt(r.kendall, r.kendall_interval)}  "
                         f"Pearson r {fmt(r.pearson, r.pearson_interval)}")
    lines.append("columns: n rows; base = share people credit; rate = share the judge credits; acc = share where "
                 "judge and people agree; κ = Cohen's kappa (agreement beyond chance, 0 = chance, 1 = perfect); "
                 "prec = of the rows the judge credits, share people credit; rec = of the rows people credit, "
                 "share the judge credits; TP/FP/FN/TN = judge and people credit / judge only / people only / "
                 f"neither; 95% CI = percentile bootstrap over the rows (1000 resamples); under {MIN_READ_N} rows "
                 "a group is too few to read")
    for note in report.notes:
        lines.append(f"note: {note}")
    undefined = {f.kappa_note for f in report.overall.values() if f.kappa_note}
    lines += [f"note: {n}" for n in sorted(undefined)]
    if report.repeat:
        r = report.repeat
        lines.append(f"test-retest over {r['runs']} runs: all runs agree on {r['all_runs_agree']}/{r['rows']} rows "
                     f"({r['all_runs_agree_rate']:.3f}); κ between runs 1 and 2: {_p(r['kappa_run1_run2']).strip()}")
    if report.usage:
        u = report.usage
        cost = u.get("cost")
        lines.append(f"tokens: {u.get('tokens_in', 0)} in, {u.get('tokens_out', 0)} out; "
                     f"calls {u.get('calls', 0)} ({u.get('cached_calls', 0)} from the cache); "
                     f"cost {'unknown (no price set)' if cost is None else f'{cost:.4f}'}")
        if u.get("rows_not_judged"):
            lines.append(f"not judged by the LLM: {u['rows_not_judged']} rows (a gold row keeps the lexical verdict, "
                         "as in a session; a criterion row is counted as not credited)")
            lines += [f"  {line}" for line in u.get("not_judged", [])]
    for d in report.disagreements:
        target = ", ".join(d["golds"]) if d["golds"] else d["criterion"]
        lines.append(f"- line {d['line']}: {d['what']}")
        if d["question"]:
            lines.append(f"    question: {_clip(d['question'])}")
        lines.append(f"    {'golds' if d['golds'] else 'criterion'}: {_clip(target)}")
        lines.append(f"    answer: {_clip(d['answer'])}")
        lines.append(f"    judge: {_clip(d['rationale'])}")
    return "\n".join(lines)


def _p(x: float | None) -> str:
    return f"{'—':>6}" if x is None or (isinstance(x, float) and math.isnan(x)) else f"{x:>6.3f}"


def _clip(text: str, limit: int = 200) -> str:
    text = re.sub(r"\s+", " ", text or "").strip()
    return text if len(text) <= limit else text[: limit - 3] + "..."
