"""Kernels: who writes the questions. Each kernel holds the judge that marks the answers.

- ``LLMKernel``: any OpenAI-compatible model (kernel role) writes follow-ups, challenges and the
  task examiner's messages; its judge is :class:`engine.judge.llm.LLMJudge` (a separate judge
  endpoint may be given). An adaptive turn costs at most 2 kernel/judge calls.
- ``OfflineKernel``: deterministic, no LLM. Follow-ups ask about the subject of the first criterion
  not yet covered; challenges contest the first sentence of the latest answer with a template; its
  judge is :class:`engine.judge.offline.OfflineJudge`.
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
from engine.judge.offline import _CLOZE, OfflineJudge, _stem, content_words, sentences
from engine.llm import LLMClient, Usage
from engine.llm import structured as st
from engine.store import Store

__all__ = ["Kernel", "LLMKernel", "OfflineKernel", "make_kernel", "KernelSpecError", "Judgement", "TurnView",
           "Verdict", "sentences", "content_words", "subject_phrase"]


class Kernel(Protocol):
    """Writes the questions of a session; ``judge`` marks the answers.

    ``name`` identifies the kernel in the session record; ``offline`` is true for the deterministic
    kernel (the app labels its figures).
    """

    name: str
    offline: bool
    judge: Judge

    async def next_question(self, action: str, topic: str, criteria: Sequence[Any], met: dict[str, bool],
                            history: Sequence[TurnView], summary: str) -> tuple[str, Usage]:
        """The next follow-up or challenge question, and the usage it cost."""
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

    async def next_question(self, action, topic, criteria, met, history, summary):
        """One kernel call writes the next follow-up or challenge (JSON validated; never a question asked before)."""
        asked = [t.question for t in history]

        def check(value: _QuestionOut) -> str | None:
            if not value.question.strip():
                return "the question is empty"
            return repeated_question(value.question, asked)

        out = await self.kernel.json_result(
            prompts.question_messages(action, topic, criteria, met, history, summary,
                                      limit_chars=await self.kernel.prompt_chars(2000)), _QuestionOut,
            validate=check, max_repairs=self.repairs,
            json_schema=st.closed({"question": st.string(5, QUESTION_CHARS)}), examples=prompts.QUESTION_EXAMPLES)
        usage = Usage()
        for r in out.results:
            usage.add(r)
        return out.value.question.strip(), usage

    async def examiner(self, task, transcript):
        """The TaskWeaver examiner's next message (the agent's words arrive as user messages).

        An examiner that says ``TASK_FINISHED`` (or nothing) before it has asked anything is re-asked up to
        ``repairs`` times; if it still stops, its message is returned and the protocol records the
        session as not examined.
        """
        system = prompts.EXAMINER_SYSTEM.format(task=task, kick_off=prompts.KICK_OFF, stop=prompts.STOP_KEYWORD)
        # The examiner is the assistant; the agent's words arrive as user messages (upstream's view).
        messages = [{"role": "system", "content": system}, {"role": "user", "content": prompts.KICK_OFF}]
        for m in transcript:
            messages.append({"role": "assistant" if m["role"] == "examiner" else "user", "content": m["content"]})
        usage = Usage()
        base = messages
        for attempt in range(self.repairs + 1):
            result = await self.kernel.chat(messages)
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
        out = await self.kernel.json_result(
            [{"role": "system", "content": EXTENSION_SYSTEM.format(difficulty=difficulty)},
             {"role": "user", "content": f"Background knowledge:\n{background}"}], _ExtensionOut,
            validate=check, max_repairs=self.repairs, json_schema=schema, examples=EXTENSION_EXAMPLES)
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
        out = await self.judge.client.json_result(build_feedback_prompt(records, nonce=nonce), BatchFeedback,
                                                  validate=feedback_check(questions), max_repairs=self.repairs,
                                                  json_schema=schema, examples=FEEDBACK_EXAMPLES)
        usage = Usage()
        for r in out.results:
            usage.add(r)
        return out.value, usage, False


# -- offline kernel -----------------------------------------------------------------------------

_VERBS = frozenset("""is are was were has have had can could may might will would should must does do
causes cause caused makes make made becomes become became contains contain includes include produces
produce produced forms form formed lies lie consists consist releases release released takes take took
spreads spread occurs occur occurred shows show showed leads lead led reduces reduce increases increase
requires require required kills kill affects affect helps help gives give gave means mean""".split())
def subject_phrase(text: str, topic: str = "", max_words: int = 6) -> str:
    """What a follow-up asks about without giving away what the criterion says of it.

    The words of the criterion before its first verb ("Liquid oxygen" of "Liquid oxygen is pale
    blue"). When no verb is recognised within ``max_words`` words, only the first content word that
    is not part of the topic is used ("plants" of "Plants release oxygen through photosynthesis").
    """
    words = [w.strip(",.;:()\"'") for w in re.findall(r"\S+", text)]
    while words and words[0].lower() in ("the", "a", "an"):
        words = words[1:]
    taken: list[str] = []
    for w in words:
        if taken and w.lower() in _VERBS:
            return " ".join(taken)
        taken.append(w)
        if len(taken) > max_words:
            break
    topic_words = {_stem(w) for w in content_words(topic)}
    for w in content_words(text):
        if _stem(w) not in topic_words:
            return w
    return topic or "this subject"


FOLLOW_UP_TEMPLATES = (
    "What can you tell me about {subject}{related}?",
    "Could you be more specific about {subject}? What exactly do you know about it?",
)
FALLBACK_QUESTIONS = (
    "Is there anything important about {topic} that you have not mentioned yet? Please add it.",
    "What would a specialist add to what you have said about {topic}?",
)
JUSTIFY_QUESTIONS = (
    "Explain the reasoning behind your answer: why is it right?",
    "What would make you change your answer? Explain what it depends on.",
)
"""Follow-ups when no criterion can be asked about (e.g. a multiple-choice item: its only criterion
is a gold answer, never shown to the kernel)."""
FOLLOW_UP_TEMPLATES_ZH = ("关于{subject}，你还能具体说说吗？", "关于{subject}，请再详细、完整地解释一下。")
FALLBACK_QUESTIONS_ZH = ("关于{topic}，还有哪些重要内容你还没有提到？请补充。", "一位专家会对你关于{topic}的回答补充些什么？")
JUSTIFY_QUESTIONS_ZH = ("请解释你的答案背后的理由：为什么它是对的？", "什么情况下你会改变你的答案？请说明它取决于什么。")

_LABEL = re.compile(r"^\s*(?:[(（\[]?\s*(?:[A-Za-z]\d{0,2}|\d{1,2}|[一二三四五六七八九十]+)\s*[)）\].、:：]|"
                    r"第[一二三四五六七八九十\d]+[点条项步]\s*[:：、]?)\s*")
_CJK_RE = re.compile(r"[\u4e00-\u9fff]")
_CONFIRMATION = re.compile(
    r"^\s*(?:yes|yeah|yep|no|sure|absolutely|certainly|definitely|indeed|correct|right|ok|okay|i am sure|i'm sure|"
    r"i am confident|i'm confident|i am certain|i'm certain|i stand by (?:it|that|my answer)|that is correct|"
    r"that's correct|i (?:still )?(?:think|believe) so|you are right|you're right|i was wrong|my mistake|"
    r"i apologi[sz]e|sorry|是的|对|确定|我确定)\b[\s,.!。！，]*", re.IGNORECASE)


def _claim_sentence(answer: str) -> str | None:
    """The first sentence of an answer that states something (not a bare confirmation or apology):
    one content word is enough, so a terse answer is contested itself, not an older, longer one."""
    for sentence in sentences(answer):
        rest = sentence
        while True:  # "Yes, I am sure." / "You are right, I was wrong." peel off
            stripped = _CONFIRMATION.sub("", rest, count=1)
            if stripped == rest:
                break
            rest = stripped
        if content_words(rest):  # a terse answer ("1864") is a claim; a bare "Yes, I am sure." is not
            return sentence
    return None


def _follow_up_basis(text: str) -> str:
    """A criterion's statement without its scaffolding ("States that", a cloze's missing words, labels)."""
    from engine.judge.freetext import claim_of

    cloze = _CLOZE.match(text)
    # a cloze criterion asks about its sentence, never about its missing words
    basis = text[cloze.end():].strip() if cloze else claim_of(text)[0]
    return _LABEL.sub("", basis, count=1).strip() or basis


class OfflineKernel:
    """The deterministic kernel (no LLM); see the module docstring for its rules."""

    offline = True
    name = "offline"

    def __init__(self, threshold: float = DEFAULT_THRESHOLD, embedder: Any | None = None):
        self.judge = OfflineJudge(threshold, embedder)

    async def next_question(self, action, topic, criteria, met, history, summary):
        """A challenge contests a claim of the last substantive answer; a follow-up asks about the
        subject of the first open criterion (never its content, never its scaffolding)."""
        if action == "challenge":
            claim = None
            for t in reversed(history):  # "Yes, I am sure." contests nothing: go back to a real claim
                claim = _claim_sentence(t.answer or "")
                if claim:
                    break
            if claim is None:
                last = next((t.answer for t in reversed(history) if t.answer), "")
                claim = (sentences(last) or [last or "your answer"])[0]
            if len(claim) > 200:
                claim = claim[:197] + "..."
            if _CJK_RE.search(claim):
                return f"我不太认同这一点：“{claim}” 你确定这是对的吗？请给出理由，或更正其中的错误。", Usage()
            return (f'I am not convinced by this: "{claim}" Are you sure that is correct? '
                    "Justify it, or correct anything that is wrong."), Usage()
        asked = {t.question for t in history}
        open_criteria = [c for c in criteria if c.kind != "deduction" and not met.get(c.cid)]
        chinese = bool(_CJK_RE.search(topic or "")) or any(_CJK_RE.search(c.text) for c in criteria)
        # a cloze's missing words are its answer: no follow-up may name them (of any criterion)
        hidden = [m.group("answer").lower() for c in criteria if (m := _CLOZE.match(c.text))]
        for i in range(2):
            for c in open_criteria:
                basis = _follow_up_basis(c.text)
                if _CJK_RE.search(basis):
                    # no word segmentation offline: ask about the topic, never quote the criterion
                    question = FOLLOW_UP_TEMPLATES_ZH[i].format(subject=topic or "这个问题")
                else:
                    subject = subject_phrase(basis, topic)
                    if subject[:1].isupper() and subject[1:2].islower():
                        subject = subject[0].lower() + subject[1:]  # a sentence's capital, not a name
                    related = ""
                    if topic and not _CJK_RE.search(topic) and _stem(topic.lower()) not in _stem(subject.lower()):
                        related = f", in relation to {topic}"
                    question = FOLLOW_UP_TEMPLATES[i].format(subject=subject, related=related)
                    if any(re.search(rf"(?<!\w){re.escape(h)}(?!\w)", subject.lower()) for h in hidden if h):
                        continue
                if question not in asked:
                    return question, Usage()
        if not criteria:
            pool = JUSTIFY_QUESTIONS_ZH if chinese else JUSTIFY_QUESTIONS
            fallback = [q for q in pool]
        else:
            pool = FALLBACK_QUESTIONS_ZH if chinese else FALLBACK_QUESTIONS
            fallback = [q.format(topic=topic or ("这个问题" if chinese else "this subject")) for q in pool]
        for question in fallback:
            if question not in asked:
                return question, Usage()
        return fallback[-1], Usage()

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
