"""task (TaskWeaver auto-eval): the kernel plays the examiner holding a task description; it
sends the task, supervises, and ends with ``TASK_FINISHED`` or at ``max_rounds``. Then each scoring
point is judged on **the agent's messages only** (no examiner text, no role labels: the examiner's
description may hold the expected answer), or checked by its ``eval_code`` in the sandbox, in the
same working directory the agent's tools used (``HOME``-independent, one per session).

The offline kernel is no examiner: it runs a task item only when the item gives an explicit opening
message for the agent (``meta.opening``), sends it once and stops; otherwise the session is refused
with a message saying an LLM examiner is needed and how to configure one.

Score = Σ weight·hit; normalised = score / Σ weight (the turn score stored on the last turn).

A session the examiner ends before it has asked anything (``TASK_FINISHED`` or nothing as its first
message, after the kernel's re-asks) examined nothing: it gets no score, a ``session.note``
``not-examined`` and the status ``not_examined`` (:meth:`engine.interview.runner.SessionRunner._not_examined`),
never a figure. A scoring point whose judge reply stays unusable makes the session's
score "cannot judge" (no score, the other points' verdicts kept); only an unreachable endpoint fails it.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from engine import events as ev
from engine.interview import prompts
from engine.interview.protocols.base import Ask, SessionProtocol, Steer
from engine.interview.session import TASK, Consumed, SessionError, Turn
from engine.judge.decide import Sandbox, judge_points
from engine.metrics.scoring import weighted_hit_score


def case_data_dir(item: Any, data_home: Path | None) -> Path | None:
    """The folder of a task item's data files, if it has one."""
    if not item.meta.get("data_dir"):
        return None
    data_dir = Path(item.meta["data_dir"])
    if not data_dir.is_absolute() and data_home is not None:
        data_dir = data_home / data_dir
    return data_dir


def transcript(rows: list[Turn]) -> list[dict[str, str]]:
    """The task conversation as ``{role: examiner|agent, content}`` messages."""
    out: list[dict[str, str]] = []
    for r in rows:
        out.append({"role": "examiner", "content": r.question})
        if r.answer is not None:
            out.append({"role": "agent", "content": r.answer})
    return out


class Task(SessionProtocol):
    """The TaskWeaver task protocol (see the module docstring)."""

    name = "task"
    scored_per_turn = False

    @staticmethod
    def score(criteria: Sequence[Any], met: Mapping[str, bool]) -> float:
        """Σ weight·hit / Σ weight over the scoring points."""
        return weighted_hit_score([(c.weight, met.get(c.cid, False)) for c in criteria])[1]

    @classmethod
    def check_item(cls, item: Any, kernel_offline: bool) -> None:
        """The offline kernel needs an explicit opening message (``meta.opening``)."""
        if kernel_offline and not str(item.meta.get("opening") or "").strip():
            raise SessionError(
                f"item {item.id} is a task written for an examiner (TaskWeaver's task_description is for the "
                "examiner only), and the offline kernel cannot play one: configure an LLM kernel (`kernel:` in "
                "viva.yaml, or --kernel openai:MODEL@BASE_URL), or give the item an explicit opening message "
                "for the agent (meta.opening)")

    def _max_rounds(self) -> int:
        s = self.session
        return s.spec.max_rounds or int(s.item.meta.get("max_rounds") or 15)

    def finished(self, rows: list[Turn]) -> bool:
        """Done at ``max_rounds`` examiner messages."""
        return len(rows) >= self._max_rounds()

    async def next_question(self, rows: list[Turn], steer: Steer) -> Ask | None:
        """The examiner's next message (an evaluator's injected one wins); ``TASK_FINISHED`` ends."""
        s = self.session
        if steer.injected:
            ask = Ask(steer.injected, TASK, "human",
                      consumed=[Consumed(steer.injected_seq, "inject", {"question": steer.injected,  # type: ignore[arg-type]
                                                                         "turn": len(rows)})])
            steer.injected = steer.injected_seq = None
            return ask
        task = s.item.meta.get("opening") if self.kernel.offline else s.item.question
        message, usage = await self.kernel.examiner(task, transcript(rows))
        if not rows and (prompts.STOP_KEYWORD in message or not message.strip()):
            s.note("not-examined", "the examiner stopped before asking anything: nothing was examined "
                   f"(its message: {message[:200]!r})")
            return None
        if prompts.STOP_KEYWORD in message or not message.strip():
            s.emit(ev.TaskStopKeyword(len(rows) - 1, message))
            return None
        return Ask(message, TASK, "kernel", usage=usage)

    async def finish(self, rows: list[Turn]) -> None:
        """Judge the scoring points once the conversation is over (unless already scored)."""
        answered = [r for r in rows if r.answer is not None]
        if answered and not self.judged(answered[-1]):
            await self._score(answered, self.session.version_id, rescore=False)

    async def rescore(self, rows: list[Turn], version_id: int) -> None:
        """Re-judge the scoring points on the stored transcript."""
        answered = [r for r in rows if r.answer is not None]
        if answered:
            await self._score(answered, version_id, rescore=True)

    async def _score(self, rows: list[Turn], version_id: int, rescore: bool) -> None:
        """Every scoring point by the judge's route (:func:`engine.judge.decide.judge_points`)."""
        s = self.session
        criteria = s.criteria_of(version_id)
        sandbox = Sandbox(case_data_dir(s.item, self.ctx.data_home), s.spec.eval_code_timeout,
                          workdir=self.ctx.workdir, trust=s.spec.trust_eval_code,
                          hide=(self.ctx.data_home,) if self.ctx.data_home is not None else ())
        out = await judge_points(self.kernel.judge, s.item.question, criteria, transcript(rows), sandbox)
        verdicts, usage, unjudged = out.verdicts, out.usage, out.unjudged
        met = {cid: v.met for cid, v in verdicts.items()}
        if unjudged:  # a point without a verdict: no honest score for the session
            row = s.record_judgement(rows[-1], verdicts, None, scored_per_turn=False, usage=usage,
                                     version_id=version_id, rescore=rescore)
            s.mark_cannot_judge(row, "scoring point(s) could not be judged: " + "; ".join(unjudged))
            return
        raw = weighted_hit_score([(c.weight, met.get(c.cid, False)) for c in criteria])[0]
        s.record_judgement(rows[-1], verdicts, self.score(criteria, met), scored_per_turn=False, usage=usage,
                           version_id=version_id, rescore=rescore, extra={"raw_score": raw})
