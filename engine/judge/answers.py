"""The public names of the answer judges, and SQuAD's official answer metrics.

Judging has one text module, :mod:`engine.text` (tokens, stems, stop words, negation scope,
numbers, CJK, sentences and clauses); the gold-answer judge (:mod:`engine.judge.gold_match`,
developed on human labels), multiple-choice extraction (:mod:`engine.judge.choice`) and the free-text
judge (:mod:`engine.judge.freetext`) build on it or on their own documented reading of an answer.
This module re-exports what callers import by these names, and keeps SQuAD's metrics:
:func:`normalize_answer` (lower-case, punctuation deleted, articles removed, CJK characters one token
each), :func:`exact_match` and :func:`token_f1`.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence

from engine.judge.choice import (  # noqa: F401  (re-exported)
    ChoiceVerdict,
    choice_question,
    extract_choice,
    format_options,
    judge_choice,
)
from engine.judge.gold_match import (  # noqa: F401  (re-exported)
    GOLD_F1_THRESHOLD,
    GoldVerdict,
    exact_match,
    judge_gold,
    normalize_answer,
)
from engine.text.negation import clause_parts, negation_scopes  # noqa: F401  (re-exported)
from engine.text.numbers import chinese_numerals_to_digits  # noqa: F401  (re-exported)
from engine.text.sentences import split_sentences  # noqa: F401  (re-exported)


def answer_tokens(text: str) -> list[str]:
    """The tokens of :func:`normalize_answer` (CJK characters one token each)."""
    return normalize_answer(text).split()


def _f1(pred: Sequence[str], gold: Sequence[str]) -> float:
    if not pred or not gold:
        return float(list(pred) == list(gold))
    common = Counter(pred) & Counter(gold)
    same = sum(common.values())
    if same == 0:
        return 0.0
    precision, recall = same / len(pred), same / len(gold)
    return 2 * precision * recall / (precision + recall)


def token_f1(prediction: str, gold: str) -> float:
    """SQuAD token F1 of the normalised strings (1.0 when both are empty, 0.0 when one is)."""
    return _f1(answer_tokens(prediction), answer_tokens(gold))


def split_clauses(sentence: str) -> list[str]:
    """Clauses of a sentence (the splits of :func:`engine.text.negation.clause_parts`)."""
    return [c for c, _ in clause_parts(sentence)]
