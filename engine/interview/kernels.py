"""Kernels: who writes the questions. Each kernel holds the judge that marks the answers.

- ``LLMKernel``: any OpenAI-compatible model (kernel role) writes follow-ups, challenges and the
  task examiner's messages; its judge is :class:`engine.judge.llm.LLMJudge` (a separate judge
  endpoint may be given). An adaptive turn costs at most 2 kernel/judge calls.
- ``OfflineKernel``: deterministic, no LLM. Follow-ups ask for the first uncovered criterion's fact
  as a question or a cloze of its sentence; challenges contest a claim of the latest substantive
  answer with the knowledge base's closest covered statement (rules and templates in
  :mod:`engine.interview.offline_questions`); its judge is :class:`engine.judge.offline.OfflineJudge`.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any, Protocol

from pydantic import BaseModel

from engine.config import Budgets, Config, ModelConfig
from engine.interview import prompts
from engine.judge.base import Judge, Judgement, TurnView, Verdict
from engine.judge.freetext import DEFAULT_THRESHOLD
from engine.judge.llm import LLMJudge
from engine.judge.offline import OfflineJudge, content_words, sentences
from engine.llm import LLMClient, Usage
from engine.llm import structured as st
from engine.llm.fit import fit_conversation, fit_prompt
from engine.store import Store

__all__ = ["Kernel", "LLMKernel", "OfflineKernel", "make_kernel", "KernelSpecError", "Judgement", "TurnView",
           "Verdict", "sentences", "content_words"]


class Kernel(Protocol):
    """Writes the questions of a session; ``judge`` marks the answers.

    ``name`` identifies the kernel in the session record; ``offline`` is true for the deterministic
    kernel (the app labels its figures).
    """

    name: str
    offline: bool
    judge: Judge

    async def next_question(self, action: str, topic: str, criteria: Sequence[Any], met: dict[str, bool],
                            history: Sequence[TurnView], summary: str, earned: Sequence[str] = ()) -> tuple[str, Usage]:
        """The next follow-up or challenge question, and the usage it cost (``earned``: the criteria the
        last answer earned, the claims a challenge may contest)."""
        ...

    async def examiner(self, task: str, transcript: Sequence[dict[str, str]]) -> tuple[str, Usage]:
        """The task examiner's next message to the agent (``TASK_FINISHED`` ends the task)."""
        ...


class KernelSpecError(ValueError):
    """A kernel spec that is neither ``offline`` nor ``openai:MODEL@BASE_URL``."""


class _QuestionOut(BaseModel):
    question: str


class _ExtensionOut(BaseModel):
    question: str
    answer: str


class NeedsLLMKernel(Exception):
    """The offline kernel cannot honestly write this (e.g. a medium or hard extension question)."""


EXTENSION_SYSTEM = """You are the interviewer in a knowledge examination of an AI model (JudgeAgent's interactive
extension). From the background knowledge below, write ONE new question at difficulty {difficulty}, with a
concise answer (a short phrase or number) that the background supports:
- easy: a fill-in-the-blank (cloze) question on one fact of the text;
- medium: a comprehension question that needs one fact understood in context;
- hard: a multi-step question that needs facts from more than one of the background passages combined.
The question must stand on its own (do not mention "the text" or "the passage") and must not contain its answer.
Reply with only a JSON object, for example: {{"question": "At what temperature does water boil at sea level, in degrees Celsius?", "answer": "100"}}
Write your own question from the background below; never copy the example."""

EXTENSION_EXAMPLES = ("At what temperature does water boil at sea level, in degrees Celsius?",)

_EXAMINER_REPAIR = "You have not sent the task request yet, so the task cannot be over."

QUESTION_CHARS = 400
"""Bound of a written question in the schema sent to the server."""


def _norm(text: str) -> str:
    return " ".join(re.sub(r"[^\w\s]", " ", text.casefold()).split())


def repeated_question(question: str, asked: Sequence[str]) -> str | None:
    """The problem with a question equal (case, punctuation and spacing aside) to one already asked, or None."""
    q = _norm(question)
    for i, earlier in enumerate(asked):
        if q and q == _norm(earlier):
            return (f"this question was already asked (turn {i}); ask something new that the conversation has "
                    "not asked yet")
    return None


def _cloze_from(background: str, seed: int) -> tuple[str, str] | None:
    """An easy extension question: a fill-in-the-blank over a sentence of the path's text."""
    import random

    from engine.bench.offline import KeySentence, make_question

    rng = random.Random(seed)
    facts = [s for s in sentences(background) if 40 <= len(s) <= 300]
    for fact in facts:
        q = make_question(KeySentence(fact, 0, 1.0), "", set(), rng)
        if q is not None and q.template == "cloze":
            return q.core, q.answer
    return None


class LLMKernel:
    """The kernel behind OpenAI-compatible endpoints, with an LLM judge.

    Every JSON call sends a schema (:mod:`engine.llm.structured`) and refuses degenerate replies as
    repairs: a placeholder or example copied from the prompt, a question asked before, an empty one.
    What stays unusable after the repairs raises :class:`~engine.llm.JSONOutputError` for the protocol to
    record (a skipped turn, a stopped extension, template feedback), never a value.
    """

    offline = False

    def __init__(self, store: Store, kernel: ModelConfig, judge: ModelConfig | None = None,
                 use_cache: bool = True, session_id: int | None = None, repairs: int = 2,
                 budgets: Budgets | None = None):
        budgets = budgets or Budgets()
        self.kernel = LLMClient(store, kernel, "kernel", use_cache, session_id, max_tokens=budgets.kernel)
        self.judge = LLMJudge(LLMClient(store, judge or kernel, "judge", use_cache, session_id,
                                        max_tokens=budgets.judge), repairs, budgets.ratings)
        self.repairs = repairs
        self.name = f"openai:{kernel.model}@{kernel.base_url}"

    async def next_question(self, action, topic, criteria, met, history, summary, earned=()):
        """One kernel call writes the next follow-up or challenge (JSON validated; never a question asked before)."""
        asked = [t.question for t in history]

        def check(value: _QuestionOut) -> str | None:
            if not value.question.strip():
                return "the question is empty"
            return repeated_question(value.question, asked)

        out = await self.kernel.fitted_json(
            lambda room, trims: prompts.question_messages(action, topic, criteria, met, history, summary,
                                                          limit_chars=room, trims=trims),
            _QuestionOut, validate=check, max_repairs=self.repairs,
            json_schema=st.closed({"question": st.string(5, QUESTION_CHARS)}),
            examples=prompts.QUESTION_EXAMPLES, call=f"{action} question", turn=len(history), reserve_chars=2000)
        usage = Usage()
        for r in out.results:
            usage.add(r)
        return out.value.question.strip(), usage

    async def examiner(self, task, transcript):
        """The TaskWeaver examiner's next message (the agent's words arrive as user messages).

        An examiner that says ``TASK_FINISHED`` (or nothing) before it has asked anything is re-asked up to
        ``repairs`` times; if it still stops, its message is returned and the protocol records the
        session as not examined. The conversation is cut to the kernel's context when it is known or learned
        (:meth:`engine.llm.LLMClient.fitted`, :func:`engine.llm.fit.fit_conversation`): its oldest turns drop
        out whole, never the system prompt (which holds the task) or the latest message; a cut is a
        ``session.note`` ``prompt-trimmed`` ("examiner prompt cut..."), on the turn being asked.
        """
        system = prompts.EXAMINER_SYSTEM.format(task=task, kick_off=prompts.KICK_OFF, stop=prompts.STOP_KEYWORD)
        # The examiner is the assistant; the agent's words arrive as user messages (upstream's view).
        messages = [{"role": "system", "content": system}, {"role": "user", "content": prompts.KICK_OFF}]
        for m in transcript:
            messages.append({"role": "assistant" if m["role"] == "examiner" else "user", "content": m["content"]})
        usage = Usage()
        base = messages
        turn = sum(1 for m in transcript if m["role"] == "examiner")
        for attempt in range(self.repairs + 1):
            result = await self.kernel.fitted(
                lambda room, trims, sent=messages: fit_conversation(sent, room, trims),
                lambda sent, n=attempt: self.kernel.chat(sent, purpose="examiner" if n == 0 else "examiner repair"),
                call="examiner", turn=turn)
            usage.add(result)
            text = result.text.strip()
            # the repair's words echoed back are no request either (the repair avoids the stop keyword, so an
            # echo of it cannot end the task by accident)
            early = not transcript and (prompts.STOP_KEYWORD in text or not text or _EXAMINER_REPAIR in text)
            if not early and text:
                return text, usage
            if attempt == self.repairs:
                return text if prompts.STOP_KEYWORD in text or not text else prompts.STOP_KEYWORD, usage
            messages = base + [{"role": "user", "content": (
                f"(repair {attempt + 1} of {self.repairs}) {_EXAMINER_REPAIR} Write the agent your request now, "
                "in your own words, from the task description; the conversation may end only after the agent "
                "has answered.")}]
        return "", usage

    async def extension_question(self, difficulty: str, background: str, seed: int) -> tuple[str, str, Usage]:
        """JudgeAgent's extension question at a difficulty from a knowledge path's text: (question, answer)."""

        def check(value: _ExtensionOut) -> str | None:
            if not (value.question.strip() and value.answer.strip()):
                return "question and answer are required"
            if _norm(value.answer) and f" {_norm(value.answer)} " in f" {_norm(value.question)} ":
                return "the question contains its own answer; ask without giving it"
            return None

        schema = st.closed({"question": st.string(5, QUESTION_CHARS), "answer": st.string(1, 120)})
        system = EXTENSION_SYSTEM.format(difficulty=difficulty)
        # the knowledge path's chunks, in path order, keep their beginning (engine.llm.fit)
        def messages(texts: list[str]) -> list[dict[str, str]]:
            return [{"role": "system", "content": system},
                    {"role": "user", "content": f"Background knowledge:\n{texts[0]}"}]

        def build(room: int | None, trims: list[str]) -> list[dict[str, str]]:
            return messages(fit_prompt(messages, [("the background knowledge", background)], room, trims,
                                       end=("the background knowledge",)))

        out = await self.kernel.fitted_json(
            build, _ExtensionOut, validate=check, max_repairs=self.repairs, json_schema=schema,
            examples=EXTENSION_EXAMPLES, call="extension question")
        usage = Usage()
        for r in out.results:
            usage.add(r)
        return out.value.question.strip(), out.value.answer.strip(), usage

    async def graded_feedback(self, records: Sequence[Any], questions: Sequence[Any]) -> tuple[Any, Usage, bool]:
        """The judge's feedback on a batch (JSON validated; suggestions that give an answer away are
        re-asked): (BatchFeedback, usage, offline=False).

        The answers are quoted between markers whose nonce is derived from the batch's questions and
        answers (the sanitiser removes the nonce from quoted text, so it must be no word an answer uses)."""
        from engine.judge.feedback import (
            FEEDBACK_EXAMPLES,
            BatchFeedback,
            build_feedback_prompt,
            feedback_check,
        )
        from engine.judge.prompts import call_nonce

        nonce = call_nonce("feedback", *((r.question, r.response) for r in records))
        text = st.string(1, 600)
        schema = st.closed({"flaws_knowledge": text, "flaws_capability": text, "comprehensive_performance": text,
                            "suggestions": text})
        client = self.judge.client
        out = await client.fitted_json(
            lambda room, trims: build_feedback_prompt(records, nonce=nonce, limit_chars=room, trims=trims),
            BatchFeedback, validate=feedback_check(questions), max_repairs=self.repairs, json_schema=schema,
            examples=FEEDBACK_EXAMPLES, call="feedback")
        usage = Usage()
        for r in out.results:
            usage.add(r)
        return out.value, usage, False


# -- offline kernel -----------------------------------------------------------------------------

class OfflineKernel:
    """The deterministic kernel (no LLM); see the module docstring for its rules."""

    offline = True
    name = "offline"

    def __init__(self, threshold: float = DEFAULT_THRESHOLD, embedder: Any | None = None):
        self.judge = OfflineJudge(threshold, embedder)

    async def next_question(self, action, topic, criteria, met, history, summary, earned=()):
        """A challenge contests a claim the last answer earned credit for, with a plausible wrong
        alternative of its value or "Are you sure?"; a follow-up asks for an open criterion's fact as a
        real question (:mod:`engine.interview.offline_questions`)."""
        from engine.interview.offline_questions import challenge_question, follow_up_question

        if action == "challenge":
            return challenge_question(topic or "", criteria, met, history, earned), Usage()
        return follow_up_question(topic or "", criteria, met, [t.question for t in history]), Usage()

    async def extension_question(self, difficulty: str, background: str, seed: int) -> tuple[str, str, Usage]:
        """Offline: only an easy cloze question from the path's text (scored by the blanked span).

        Raises:
            NeedsLLMKernel: a medium or hard question, or no sentence fits a cloze.
        """
        if difficulty != "easy":
            raise NeedsLLMKernel(f"a {difficulty} extension question needs an LLM kernel (the offline kernel writes "
                                 "only easy cloze questions from the knowledge path's text)")
        made = _cloze_from(background, seed)
        if made is None:
            raise NeedsLLMKernel("no sentence of the knowledge path fits a cloze question")
        return made[0], made[1], Usage()

    async def graded_feedback(self, records: Sequence[Any], questions: Sequence[Any]) -> tuple[Any, Usage, bool]:
        """Offline: a template, honest about what it is: which questions were missed (never their answers)
        and a generic method; labelled offline. (BatchFeedback, usage, offline=True)."""
        from engine.judge.feedback import BatchFeedback

        missed = [r for r in records if not r.correct]
        lines = [f"- {r.kind} question ({r.difficulty}): {r.question.splitlines()[0][:120]}" for r in missed]
        knowledge = ("Missed:\n" + "\n".join(lines)) if missed else "No question was missed."
        feedback = BatchFeedback(
            flaws_knowledge=knowledge,
            flaws_capability="offline feedback (no LLM judge): the reasoning behind the answers was not analysed.",
            comprehensive_performance=f"{len(records) - len(missed)} of {len(records)} questions answered correctly.",
            suggestions="Read the whole question again, including every option, before answering; check each option "
                        "against each fact the question states and rule out those that contradict one; answer with "
                        "a single option.")
        return feedback, Usage(), True

    async def examiner(self, task, transcript):
        """Offline: send the opening message once, then stop after the agent's first reply."""
        if not transcript:
            return task, Usage()
        return prompts.STOP_KEYWORD, Usage()



def make_kernel(spec: str | None, config: Config, store: Store, use_cache: bool = True,
                session_id: int | None = None, api_key_env: str | None = None) -> Kernel:
    """``offline`` / ``openai:MODEL@BASE_URL`` / ``config`` (the config's kernel) -> a kernel.

    ``None`` means the config's kernel when one is configured, else the offline kernel.
    """
    if spec is None:
        spec = "config" if config.kernel is not None else "offline"
    if spec == "offline":
        return OfflineKernel(config.interview.offline_threshold)
    if spec == "config":
        if config.kernel is None:
            raise KernelSpecError("kernel 'config' asked for, but the config has no kernel: section")
        kernel = config.kernel
    elif spec.startswith("openai:") and "@" in spec:
        model, base_url = spec[len("openai:"):].split("@", 1)
        base = config.kernel or ModelConfig()
        kernel = base.model_copy(update={"model": model, "base_url": base_url,
                                         **({"api_key_env": api_key_env} if api_key_env else {})})
    else:
        raise KernelSpecError(f"unknown kernel {spec!r}: use offline, config, or openai:MODEL@BASE_URL")
    kernel.api_key()  # fail now, not mid-session, when the key variable is missing
    return LLMKernel(store, kernel, config.judge, use_cache, session_id, config.interview.judge_repairs,
                     config.max_tokens)
