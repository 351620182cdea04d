"""The offline judge: deterministic, no LLM, explainable.

A criterion is met when ``0.5·cos + 0.5·recall >= threshold`` (cos = best cosine between the
criterion and a sentence of the summary, recall = share of the criterion's content words present).
The summary is every answer sentence so far, minus the contested answer when the target retracts
under challenge. A cloze criterion is met only when its missing words appear. Honest and
reproducible: for the demo, CI and air-gapped smoke tests.
"""

from __future__ import annotations

import asyncio
import re
from collections.abc import Sequence
from typing import Any

from engine.judge.base import Judgement, TurnView, Verdict
from engine.llm import Usage

_SENTENCE = re.compile(r"(?<=[.!?。！？])\s+|\n+")
_WORD = re.compile(r"[\u4e00-\u9fff]|[A-Za-z0-9][A-Za-z0-9'-]*")
STOPWORDS = frozenset("""a an the and or but if of to in on at by for with from as is are was were be been being
it its this that these those there their they them he she his her we you your i my our not no do does did
has have had can could should would may might will shall than then so such which who whom what when where
why how also into about over under more most other some any each all both only very just""".split())
# Criteria written by the offline benchmark generator for a fill-in-the-blank question.
_CLOZE = re.compile(r'^Gives "(?P<answer>.+?)" as the missing part of:', re.DOTALL)
_RETRACTION = re.compile(
    r"\b(i was wrong|you are right|you're right|i apologi[sz]e|my mistake|i made a mistake|"
    r"that was incorrect|i stand corrected|correction|let me correct|i misspoke)\b", re.IGNORECASE)


def sentences(text: str) -> list[str]:
    """The sentences of a text (split at . ! ? and their CJK forms, and at line breaks)."""
    return [s.strip() for s in _SENTENCE.split(text or "") if len(s.strip()) > 2]


def content_words(text: str) -> list[str]:
    """Lower-cased words of a text without stop words; CJK characters count singly."""
    return [w.lower() for w in _WORD.findall(text or "") if w.lower() not in STOPWORDS]


def _stem(word: str) -> str:
    for suffix in ("ing", "es", "ed", "s"):
        if len(word) > len(suffix) + 3 and word.endswith(suffix):
            return word[: -len(suffix)]
    return word


class OfflineJudge:
    """The deterministic judge (no LLM); see the module docstring for its rules."""

    offline = True

    def __init__(self, threshold: float = 0.55, embedder: Any | None = None):
        self.threshold = threshold
        self._embedder = embedder

    @property
    def embedder(self) -> Any:
        """The ONNX sentence embedder (loaded on first use)."""
        if self._embedder is None:
            from engine.knowledge.embed import get_embedder

            self._embedder = get_embedder()
        return self._embedder

    def summary_of(self, history: Sequence[TurnView], answer: str, action: str) -> str:
        """Every answer sentence so far; a retraction under challenge drops the contested answer."""
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
        """Verdicts for every criterion against the running summary (see the module docstring)."""
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

    async def judge_point(self, task, point, transcript):
        """A scoring point is hit when its coverage of the transcript reaches the threshold."""
        return await asyncio.to_thread(self._judge_point, point, transcript)

    def _judge_point(self, point, transcript):
        sents = sentences(transcript)
        vecs = self.embedder.embed(sents) if sents else None
        combined, cos, recall = self.coverage(point, sents, vecs)
        hit = combined >= self.threshold
        return hit, f"offline: cos {cos:.2f}, recall {recall:.2f}, combined {combined:.2f}", Usage()


