"""Kernels: who writes the questions and who judges the answers.

- ``LLMKernel``: any OpenAI-compatible model (kernel role; a separate judge endpoint may be given).
  One judge call per turn returns verdicts for all criteria *and* the updated summary; one kernel call
  writes the next question. So an adaptive turn costs at most 2 kernel/judge calls.
- ``OfflineKernel``: deterministic, no LLM. Follow-ups ask about the subject of the first criterion
  not yet covered; challenges contest the first sentence of the latest answer with a template; a
  criterion is met when ``0.5·cos + 0.5·recall >= threshold`` (cos = best cosine between the criterion
  and a sentence of the summary, recall = share of the criterion's content words present). The
  summary is every answer sentence so far, minus the contested answer when the target retracts under
  challenge. Honest, explainable, reproducible: for the demo, CI and air-gapped smoke tests.
"""

from __future__ import annotations

import asyncio
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

from pydantic import BaseModel

from engine.config import Config, ModelConfig
from engine.interview import prompts
from engine.llm import LLMClient, Usage
from engine.store import Store


@dataclass
class TurnView:
    """A turn as kernels see it."""

    idx: int
    question: str
    answer: str | None
    action: str
    actor: str = "policy"
    score: float | None = None
    delta: float | None = None
    summary: str | None = None


@dataclass
class Verdict:
    cid: str
    met: bool
    in_answer: bool
    rationale: str
    source: str


@dataclass
class Judgement:
    verdicts: dict[str, Verdict]
    summary: str
    usage: Usage = field(default_factory=Usage)


class Kernel(Protocol):
    name: str
    offline: bool

    async def next_question(self, action: str, topic: str, criteria: Sequence[Any], met: dict[str, bool],
                            history: Sequence[TurnView], summary: str) -> tuple[str, Usage]: ...

    async def judge(self, question: str, criteria: Sequence[Any], summary: str, answer: str,
                    reference: str | None, history: Sequence[TurnView], action: str) -> Judgement: ...

    async def examiner(self, task: str, transcript: Sequence[dict[str, str]]) -> tuple[str, Usage]: ...

    async def judge_point(self, task: str, point: str, transcript: str) -> tuple[bool, str, Usage]: ...


class KernelSpecError(ValueError):
    """A kernel spec that is neither ``offline`` nor ``openai:MODEL@BASE_URL``."""


# -- LLM kernel ---------------------------------------------------------------------------------


class _VerdictOut(BaseModel):
    id: str
    met: bool
    in_answer: bool = False
    rationale: str = ""


class _JudgeOut(BaseModel):
    verdicts: list[_VerdictOut]
    summary: str


class _QuestionOut(BaseModel):
    question: str


class _PointOut(BaseModel):
    reason: str
    is_hit: bool


class LLMKernel:
    """The kernel (and judge) behind OpenAI-compatible endpoints."""

    offline = False

    def __init__(self, store: Store, kernel: ModelConfig, judge: ModelConfig | None = None,
                 use_cache: bool = True, session_id: int | None = None, repairs: int = 2):
        self.kernel = LLMClient(store, kernel, "kernel", use_cache, session_id)
        self.judge_client = LLMClient(store, judge or kernel, "judge", use_cache, session_id)
        self.repairs = repairs
        self.name = f"openai:{kernel.model}@{kernel.base_url}"

    async def next_question(self, action, topic, criteria, met, history, summary):
        out = await self.kernel.json_result(
            prompts.question_messages(action, topic, criteria, met, history, summary), _QuestionOut,
            validate=lambda v: None if v.question.strip() else "the question is empty",
            max_repairs=self.repairs)
        usage = Usage()
        for r in out.results:
            usage.add(r)
        return out.value.question.strip(), usage

    async def judge(self, question, criteria, summary, answer, reference, history, action) -> Judgement:
        ids = [c.cid for c in criteria]

        def check(value: _JudgeOut) -> str | None:
            given = [v.id for v in value.verdicts]
            unknown = sorted(set(given) - set(ids))
            missing = [i for i in ids if i not in given]
            problems = []
            if unknown:
                problems.append(f"unknown criterion ids {unknown}; valid ids are {ids}")
            if missing:
                problems.append(f"missing verdicts for {missing}")
            if len(given) != len(set(given)):
                problems.append("an id appears more than once")
            return "; ".join(problems) or None

        out = await self.judge_client.json_result(
            prompts.judge_messages(question, criteria, summary, answer, reference), _JudgeOut,
            validate=check, max_repairs=self.repairs)
        usage = Usage()
        for r in out.results:
            usage.add(r)
        verdicts = {v.id: Verdict(v.id, v.met, v.in_answer, v.rationale, "judge") for v in out.value.verdicts}
        return Judgement(verdicts, out.value.summary, usage)

    async def examiner(self, task, transcript):
        system = prompts.EXAMINER_SYSTEM.format(task=task, kick_off=prompts.KICK_OFF, stop=prompts.STOP_KEYWORD)
        # The examiner is the assistant; the agent's words arrive as user messages (upstream's view).
        messages = [{"role": "system", "content": system}, {"role": "user", "content": prompts.KICK_OFF}]
        for m in transcript:
            messages.append({"role": "assistant" if m["role"] == "examiner" else "user", "content": m["content"]})
        result = await self.kernel.chat(messages)
        usage = Usage()
        usage.add(result)
        return result.text.strip(), usage

    async def judge_point(self, task, point, transcript):
        out = await self.judge_client.json_result(
            prompts.point_judge_messages(task, point, transcript), _PointOut, max_repairs=self.repairs)
        usage = Usage()
        for r in out.results:
            usage.add(r)
        return out.value.is_hit, out.value.reason, usage


# -- offline kernel -----------------------------------------------------------------------------

_SENTENCE = re.compile(r"(?<=[.!?。！？])\s+|\n+")
_WORD = re.compile(r"[\u4e00-\u9fff]|[A-Za-z0-9][A-Za-z0-9'-]*")
STOPWORDS = frozenset("""a an the and or but if of to in on at by for with from as is are was were be been being
it its this that these those there their they them he she his her we you your i my our not no do does did
has have had can could should would may might will shall than then so such which who whom what when where
why how also into about over under more most other some any each all both only very just""".split())
_VERBS = frozenset("""is are was were has have had can could may might will would should must does do
causes cause caused makes make made becomes become became contains contain includes include produces
produce produced forms form formed lies lie consists consist releases release released takes take took
spreads spread occurs occur occurred shows show showed leads lead led reduces reduce increases increase
requires require required kills kill affects affect helps help gives give gave means mean""".split())
# Criteria written by the offline benchmark generator for a fill-in-the-blank question.
_CLOZE = re.compile(r'^Gives "(?P<answer>.+?)" as the missing part of:', re.DOTALL)
_RETRACTION = re.compile(
    r"\b(i was wrong|you are right|you're right|i apologi[sz]e|my mistake|i made a mistake|"
    r"that was incorrect|i stand corrected|correction|let me correct|i misspoke)\b", re.IGNORECASE)


def sentences(text: str) -> list[str]:
    return [s.strip() for s in _SENTENCE.split(text or "") if len(s.strip()) > 2]


def content_words(text: str) -> list[str]:
    return [w.lower() for w in _WORD.findall(text or "") if w.lower() not in STOPWORDS]


def _stem(word: str) -> str:
    for suffix in ("ing", "es", "ed", "s"):
        if len(word) > len(suffix) + 3 and word.endswith(suffix):
            return word[: -len(suffix)]
    return word


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


class OfflineKernel:
    """The deterministic kernel (no LLM); see the module docstring for its rules."""

    offline = True
    name = "offline"

    def __init__(self, threshold: float = 0.55, embedder: Any | None = None):
        self.threshold = threshold
        self._embedder = embedder

    @property
    def embedder(self) -> Any:
        if self._embedder is None:
            from engine.knowledge.embed import get_embedder

            self._embedder = get_embedder()
        return self._embedder

    async def next_question(self, action, topic, criteria, met, history, summary):
        if action == "challenge":
            last = next((t.answer for t in reversed(history) if t.answer), "")
            claim = (sentences(last) or [last or "your answer"])[0]
            if len(claim) > 200:
                claim = claim[:197] + "..."
            return (f'I am not convinced by this: "{claim}" Are you sure that is correct? '
                    "Justify it, or correct anything that is wrong."), Usage()
        asked = {t.question for t in history}
        open_criteria = [c for c in criteria if c.kind != "deduction" and not met.get(c.cid)]
        for template in FOLLOW_UP_TEMPLATES:
            for c in open_criteria:
                cloze = _CLOZE.match(c.text)
                # a cloze criterion asks about its sentence, never about its missing words
                basis = c.text[cloze.end():].strip() if cloze else c.text
                subject = subject_phrase(basis, topic)
                if subject[:1].isupper() and subject[1:2].islower():
                    subject = subject[0].lower() + subject[1:]  # a sentence's capital, not a name
                related = f", in relation to {topic}" if topic and _stem(topic.lower()) not in _stem(subject.lower()) else ""
                question = template.format(subject=subject, related=related)
                if question not in asked:
                    return question, Usage()
        for fallback in FALLBACK_QUESTIONS:
            question = fallback.format(topic=topic or "this subject")
            if question not in asked:
                return question, Usage()
        return FALLBACK_QUESTIONS[-1].format(topic=topic or "this subject"), Usage()

    def summary_of(self, history: Sequence[TurnView], answer: str, action: str) -> str:
        kept: list[list[str]] = [sentences(t.answer) for t in history if t.answer]
        if action == "challenge" and _RETRACTION.search(answer or "") and kept:
            kept.pop()  # the contested answer is replaced by the correction
        kept.append(sentences(answer))
        return "\n".join(s for group in kept for s in group)

    def coverage(self, criterion_text: str, text_sentences: list[str], vectors: Any) -> tuple[float, float, float]:
        """(combined, cos, recall) of a criterion against some sentences.

        A cloze criterion ('Gives "48" as the missing part of: ...') is met only when the missing
        words themselves appear: the rest of the sentence is in the question, so similarity to it
        proves nothing.
        """
        cloze = _CLOZE.match(criterion_text)
        if cloze:
            wanted = " ".join(content_words(cloze.group("answer"))) or cloze.group("answer").lower()
            said = " ".join(content_words(" ".join(text_sentences)))
            hit = 1.0 if re.search(rf"(?<!\w){re.escape(wanted)}(?!\w)", said) else 0.0
            return hit, hit, hit
        words = {_stem(w) for w in content_words(criterion_text)}
        present = {_stem(w) for s in text_sentences for w in content_words(s)}
        recall = len(words & present) / len(words) if words else 0.0
        cos = 0.0
        if len(text_sentences):
            crit_vec = self.embedder.embed([criterion_text])[0]
            cos = float(max(0.0, (vectors @ crit_vec).max()))
        return 0.5 * cos + 0.5 * recall, cos, recall

    async def judge(self, question, criteria, summary, answer, reference, history, action) -> Judgement:
        # ONNX releases the GIL: judging in a thread keeps other sessions' I/O moving.
        return await asyncio.to_thread(self._judge, criteria, answer, history, action)

    def _judge(self, criteria, answer, history, action) -> Judgement:
        new_summary = self.summary_of(history, answer, action)
        summary_sents = sentences(new_summary)
        answer_sents = sentences(answer)
        emb = self.embedder
        sum_vecs = emb.embed(summary_sents) if summary_sents else None
        ans_vecs = emb.embed(answer_sents) if answer_sents else None
        verdicts: dict[str, Verdict] = {}
        for c in criteria:
            combined, cos, recall = self.coverage(c.text, summary_sents, sum_vecs)
            in_answer = self.coverage(c.text, answer_sents, ans_vecs)[0] >= self.threshold
            met = combined >= self.threshold
            if _CLOZE.match(c.text):
                rationale = f"offline: the missing words {'are' if met else 'are not'} in the answers"
            else:
                rationale = (f"offline: 0.5·cos {cos:.2f} + 0.5·recall {recall:.2f} = {combined:.2f} "
                             f"{'>=' if met else '<'} {self.threshold:.2f}")
            verdicts[c.cid] = Verdict(c.cid, met, in_answer, rationale, "offline")
        return Judgement(verdicts, new_summary, Usage())

    async def examiner(self, task, transcript):
        # Offline: send the task once, then stop after the agent's first reply.
        if not transcript:
            return task, Usage()
        return prompts.STOP_KEYWORD, Usage()

    async def judge_point(self, task, point, transcript):
        return await asyncio.to_thread(self._judge_point, point, transcript)

    def _judge_point(self, point, transcript):
        sents = sentences(transcript)
        vecs = self.embedder.embed(sents) if sents else None
        combined, cos, recall = self.coverage(point, sents, vecs)
        hit = combined >= self.threshold
        return hit, f"offline: cos {cos:.2f}, recall {recall:.2f}, combined {combined:.2f}", Usage()


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
    return LLMKernel(store, kernel, config.judge, use_cache, session_id, config.interview.judge_repairs)
