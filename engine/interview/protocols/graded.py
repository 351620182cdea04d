"""graded (JudgeAgent): benchmark grading in batches, difficulty-adaptive extension, feedback and
validation by re-answering (DESIGN.md "graded"; JudgeAgent Algorithms 1, 2 and 4).

A session is one batch of up to 3 base items (``spec.batch``) for one target:

1. **Benchmark grading.** Each base question is asked on its own (a fresh conversation; a
   multiple-choice question shows its options) and judged by its gold answer
   (:mod:`engine.judge.gold`). The gain of its difficulty (:mod:`engine.metrics.graded`) is recorded
   and the next difficulty follows from the running average, **after every question**. An item's
   difficulty is its calibrated tier when the benchmark is calibrated
   (:func:`engine.bench.calibrate.calibrated_tiers`), else its label.
2. **Interactive extension**, up to :data:`ROUNDS` rounds: a knowledge path is sampled on the
   benchmark's knowledge base's context graph (seeded), and the kernel writes a question with a
   concise answer at the current difficulty from the round's window of the path (easy: cloze,
   medium: comprehension, hard: multi-step). The offline kernel writes only easy cloze questions
   (scored by the blanked span) and says so: when a medium or hard question is due, or the
   benchmark has no knowledge base with a built graph, the extension stops with a
   ``graded.note`` event that names what is needed.
3. **Feedback** on the batch (JSON validated; suggestions that contain a base question's gold
   answer or an option text are rejected and re-asked). The offline kernel writes a labelled
   template (which questions were missed, never their answers, and a generic method).
4. **Validation** (Algorithm 2): every base question is asked again with the batch's suggestions;
   ACC1, ACC2, CR, CtE and Δ = ACC2 − ACC1 = CR − CtE follow (:func:`engine.metrics.graded.validation`).

A bad reply costs a step, not the batch (issue 23): an extension question the kernel cannot write
usably (after its repairs) ends the extension with a ``graded.note``; feedback that stays unusable (or
keeps giving answers away) is replaced by the labelled template feedback (``offline`` in its event,
and a ``session.note`` ``feedback-unavailable``), so validation still runs and ACC1 is kept.

Each question is a turn (action ``base``, ``extension`` or ``validation``) and a row of
``graded_steps`` (difficulty, correctness, the track after it). A turn's score is 1 or 0; the
session's score is 100 × ACC1, its base questions' accuracy.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from engine import events as ev
from engine.bench.items import get_benchmark, get_item
from engine.bench.model import Item
from engine.bench.rubric import current_rubric
from engine.interview.protocols.adaptive import stable_seed
from engine.interview.protocols.base import Ask, ProtocolContext, SessionProtocol, Steer
from engine.interview.session import SessionError, Turn
from engine.judge.base import Verdict
from engine.judge.choice import choice_question
from engine.judge.decide import TurnToJudge, judge_reply, judge_turn
from engine.judge.feedback import FeedbackRecord, template_feedback, with_suggestions
from engine.llm import UNUSABLE
from engine.metrics.graded import BASE, EXTENSION, DifficultyTrack, difficulty_label
from engine.store import dumps, loads, now_iso

VALIDATION = "validation"
ROUNDS = 3
"""Extension rounds per batch (JudgeAgent's setting)."""
HOPS = 2
"""Hops per extension round (JudgeAgent's setting)."""


def base_question(item: Item) -> str:
    """A base question as the target sees it (options shown for a multiple-choice item)."""
    return choice_question(item.question, item.options) if item.options else item.question


class Graded(SessionProtocol):
    """JudgeAgent's graded protocol (see the module docstring)."""

    name = "graded"
    scored_per_turn = True  # every turn is judged as it ends (its difficulty decides the next)

    def __init__(self, ctx: ProtocolContext):
        super().__init__(ctx)
        s = self.session
        ids = s.spec.batch or [s.item.id]
        self.items = [get_item(s.store, i) for i in ids]
        self._notes: set[str] = set()
        from engine.bench.calibrate import calibrated_tiers

        # calibrated difficulty tiers (viva bench calibrate) replace the items' labels where they exist
        self._tiers = calibrated_tiers(s.store, self.items[0].benchmark_id) if self.items else {}

    # -- rules ------------------------------------------------------------------------------------
    @classmethod
    def check_item(cls, item: Item, kernel_offline: bool) -> None:
        """A base item needs a gold answer (an option letter or a short answer)."""
        if item.gold in (None, "", []):
            raise SessionError(f"item {item.id} has no gold answer: the graded protocol grades base questions by "
                               "their gold answers (multiple choice or short answer)")

    @staticmethod
    def score(criteria: Sequence[Any], met: Mapping[str, bool]) -> float:
        """A graded turn is right (1) or wrong (0): all its gold criteria met."""
        return 1.0 if criteria and all(met.get(c.cid, False) for c in criteria) else 0.0

    def session_score(self, rows: list[Turn]) -> float | None:
        """100 × ACC1: the share of base questions answered correctly."""
        base = [r.score for r in rows if r.action == BASE and r.score is not None]
        return 100.0 * sum(base) / len(base) if base else None

    def target_messages(self, rows: list[Turn], question: str) -> list[dict[str, str]]:
        """Every graded question is asked on its own, in a fresh conversation."""
        return [{"role": "user", "content": question}]

    # -- the record -------------------------------------------------------------------------------
    def _steps(self) -> list[dict[str, Any]]:
        return self.session.store.query(
            "SELECT * FROM graded_steps WHERE session_id = ? ORDER BY id", (self.session.sid,))

    def _track(self, steps: list[dict[str, Any]]) -> DifficultyTrack:
        track = DifficultyTrack()
        for st in steps:
            if st["phase"] in (BASE, EXTENSION) and st["correct"] is not None:
                track.record(st["difficulty"] if st["labelled"] else None, bool(st["correct"]), st["phase"])
        return track

    def _note(self, text: str) -> None:
        """A ``graded.note`` event (once per text per session)."""
        if text in self._notes:
            return
        self._notes.add(text)
        if not any(e.kind == ev.GRADED_NOTE and e.payload.get("text") == text
                   for e in self.session.store.events(0, self.session.sid)):
            self.session.emit(ev.GradedNote(text))

    def finished(self, rows: list[Turn]) -> bool:
        """Done when every base question has been asked again with the suggestions."""
        return sum(1 for r in rows if r.action == VALIDATION) >= len(self.items)

    # -- questions ----------------------------------------------------------------------------------
    async def next_question(self, rows: list[Turn], steer: Steer) -> Ask | None:
        """Base questions, then extension rounds, then (after the feedback) the validation re-asks."""
        n_base = sum(1 for r in rows if r.action == BASE)
        if n_base < len(self.items):
            return Ask(base_question(self.items[n_base]), BASE, "item")
        n_ext = sum(1 for r in rows if r.action == EXTENSION)
        n_val = sum(1 for r in rows if r.action == VALIDATION)
        if n_val == 0 and n_ext < ROUNDS and not self._extension_over():
            ask = await self._extension(n_ext, len(rows))
            if ask is not None:
                return ask
        suggestions = await self._feedback(rows)
        item = self.items[n_val]
        return Ask(with_suggestions(base_question(item), suggestions), VALIDATION, "item")

    def _extension_over(self) -> bool:
        return any(e.kind == ev.GRADED_NOTE and e.payload.get("stops_extension")
                   for e in self.session.store.events(0, self.session.sid))

    async def _extension(self, round_index: int, turn_idx: int) -> Ask | None:
        s = self.session
        bench = get_benchmark(s.store, s.item.benchmark)
        if not bench.kb:
            self.session.emit(ev.GradedNote("no extension: the benchmark has no knowledge base (the interactive "
                                            "extension samples knowledge paths on its context graph)", True))
            return None
        difficulty = self._track(self._steps()).difficulty
        from engine.knowledge.kb import KnowledgeBaseError

        try:
            path = self._path(bench.kb)  # this thread's store connection (SQLite connections stay in their thread)
        except KnowledgeBaseError as exc:  # no graph built, no entity matched: say what is needed
            self.session.emit(ev.GradedNote(f"no extension: {exc} (build it with `viva kb graph {bench.kb}`)", True))
            return None
        windows = path.windows()
        if round_index >= len(windows):
            self.session.emit(ev.GradedNote("no further extension: the knowledge path ended", True))
            return None
        background = "\n\n".join(h.text for h in windows[round_index])
        seed = stable_seed(s.spec.seed, s.item.id, s.spec.target, "extension", round_index)[0]
        from engine.interview.kernels import NeedsLLMKernel

        try:
            question, answer, usage = await self.kernel.extension_question(difficulty, background, seed)
        except NeedsLLMKernel as exc:
            self.session.emit(ev.GradedNote(f"extension stopped at round {round_index + 1}: {exc}", True))
            return None
        except UNUSABLE as exc:
            self.session.emit(ev.GradedNote(f"extension stopped at round {round_index + 1}: the kernel's question "
                                            f"was unusable ({exc})", True))
            return None
        # The gold answer is on record before the question is asked (never shown to the target), so a
        # resumed session judges the answer with it.
        s.emit(ev.GradedExtension(turn_idx, difficulty, [answer], [h.chunk_id for h in windows[round_index]]))
        return Ask(question, EXTENSION, "kernel", usage=usage)

    def _path(self, kb_name: str) -> Any:
        from engine.knowledge.paths import sample_path

        s = self.session
        seed = stable_seed(s.spec.seed, s.item.id, s.spec.target, "path")[0]
        return sample_path(s.store, self.ctx.data_home or s.store.path.parent, kb_name,
                           " ".join(i.question for i in self.items), hops=HOPS, rounds=ROUNDS, seed=seed,
                           embedder=self.ctx.embedder)

    async def _feedback(self, rows: list[Turn]) -> str:
        """The batch's suggestions (written once, on record as a ``graded.feedback`` event)."""
        s = self.session
        for e in s.store.events(0, s.sid):
            if e.kind == ev.GRADED_FEEDBACK:
                return str(e.payload.get("suggestions", ""))
        steps = {st["turn_id"]: st for st in self._steps()}
        records = []
        for r in rows:
            st = steps.get(r.id)
            if st is None or st["phase"] == VALIDATION:
                continue
            item = get_item(s.store, st["item_id"]) if st["item_id"] else None
            gold = loads(st["gold"], [])
            answer = (f"{gold[0]}. {item.options.get(gold[0], '')}" if item is not None and item.options and gold
                      else ", ".join(gold))
            records.append(FeedbackRecord(r.question, answer, r.answer or "", bool(st["correct"]),
                                          st["difficulty"], st["phase"], item.options if item else None))
        try:
            feedback, usage, offline = await self.kernel.graded_feedback(records, self.items)
        except UNUSABLE as exc:
            feedback, offline = template_feedback(records), True
            s.note("feedback-unavailable", f"the judge's feedback was unusable ({exc}); template feedback stood in")
        s.emit(ev.GradedFeedback(feedback.flaws_knowledge, feedback.flaws_capability,
                                 feedback.comprehensive_performance, feedback.suggestions, offline))
        return feedback.suggestions

    # -- judging ----------------------------------------------------------------------------------
    async def judge_turn(self, turn: Turn, history: list[Turn]) -> None:
        """Right or wrong by the gold answer; the step and the difficulty track after it are recorded."""
        s = self.session
        phase = turn.action
        if phase in (BASE, VALIDATION):
            index = sum(1 for r in history if r.action == phase)
            item = self.items[index]
            rubric = current_rubric(s.store, item.id)
            criteria = [c for c in rubric.criteria if c.answers]
            # the item's source passage (a SQuAD context), as the adaptive protocol passes it: a reply that
            # pastes it is judged on what it says besides the copy
            judged = await judge_turn(self.kernel.judge, TurnToJudge(
                turn.idx, turn.question, turn.answer, turn.action, item, tuple(criteria),
                running_summary=False, passage=(item.meta or {}).get("context")))
            verdicts: dict[str, Verdict] = judged.verdicts
            usage = judged.usage  # the gold LLM judge's calls (none offline), added to the turn's figures
            correct = bool(criteria) and all(v.met for v in verdicts.values())
            tier = self._tiers.get(item.id, item.difficulty)
            version_id, difficulty, labelled = rubric.id, difficulty_label(tier), tier is not None
            golds, path = list(criteria[0].answers or []) if criteria else [], None
            item_id = item.id
        else:
            asked = self._extension_asked(turn)
            g = judge_reply(turn.answer, asked.gold, turn.question)
            correct = g.met
            verdicts = {}  # an extension question has no rubric criterion: its verdict is its graded step
            usage = None  # judged by the lexical rule: no call
            version_id, difficulty, labelled = s.version_id, asked.difficulty, True
            golds, path, item_id = asked.gold, asked.path, None
        steps = self._steps()
        track = self._track(steps)
        step = track.record(difficulty if labelled else None, correct, BASE if phase == BASE else EXTENSION) \
            if phase != VALIDATION else None
        with s.store.transaction():
            s.store.insert("graded_steps", {
                "session_id": s.sid, "turn_id": turn.id, "phase": phase, "item_id": item_id,
                "difficulty": difficulty, "labelled": int(labelled), "gold": dumps(golds), "correct": int(correct),
                "gain": step.gain if step else None, "total": step.total if step else None,
                "count": step.count if step else None, "average": step.average if step else None,
                "next_difficulty": step.next_difficulty if step else None,
                "path": dumps(path) if path is not None else None, "created_at": now_iso()})
            s.record_judgement(turn, verdicts, 1.0 if correct else 0.0, scored_per_turn=False,
                               version_id=version_id, usage=usage,
                               criteria=rubric.criteria if phase in (BASE, VALIDATION) else [])
            s.emit(ev.GradedStep(turn.idx, phase, difficulty, correct, step.gain if step else None,
                                 step.average if step else None, step.next_difficulty if step else None))

    def _extension_asked(self, turn: Turn) -> ev.GradedExtension:
        for e in reversed(self.session.store.events(0, self.session.sid)):
            if e.kind == ev.GRADED_EXTENSION and e.payload.get("turn") == turn.idx:
                return ev.decode(e.kind, e.payload)
        raise SessionError(f"session {self.session.sid}: extension turn {turn.idx} has no gold answer on record")

    async def rescore(self, rows: list[Turn], version_id: int) -> None:
        """Graded questions are judged by gold answers, which a rubric edit does not change."""
        self.session.emit(ev.GradedNote("a rubric edit does not re-score a graded session: its questions are "
                                        "judged by their gold answers"))

