"""Gold-answer criteria, judged the same way whichever kernel runs the session.

A criterion with gold ``answers`` (a SQuAD span, the gold option of a multiple-choice item, an
imported short answer) is judged against what the target said **in reply to the question that
carries it** (``asks``; the item's own question when ``asks`` is empty):

1. the carrier is the latest turn, other than a challenge, whose question contains ``asks`` (an
   initial multiple-choice question carries its options after the stem, so containment, not
   equality; a challenge that quotes a reply which restated the question does not carry it);
2. the reply is that turn's answer; a later challenge answered with a retraction ("I was wrong",
   "you are right", "I apologise", ...) replaces it, up to the next turn that asks another gold
   question (an item's next dataset question); a challenge answered without a retraction, and any
   other turn, leaves it standing;
3. a multiple-choice item (the item has options) is credited iff the reply's single, last explicit,
   non-negated choice is the gold option (:func:`engine.judge.answers.judge_choice`); otherwise the
   reply is judged by SQuAD's normalisation, exact match and focused token F1 against every gold
   answer (:func:`engine.judge.answers.judge_gold`, threshold
   :data:`engine.judge.answers.GOLD_F1_THRESHOLD`);
4. a criterion whose question has not been asked yet is not met ("not asked yet").

The rule is reproducible and explainable: the rationale names the reply judged and the figure.
An LLM judge is never asked about such criteria.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import Any

from engine.judge.base import Verdict
from engine.judge.choice import judge_choice
from engine.judge.gold_match import judge_gold

CHALLENGE = "challenge"
RETRACTION = re.compile(
    r"\b(i was wrong|i am wrong|i'm wrong|you are right|you're right|i apologi[sz]e|my mistake|i made a mistake|"
    r"that was incorrect|that is incorrect|i stand corrected|correction|let me correct|i misspoke|"
    r"on second thought|i take (?:it|that) back)\b|我错了|你说得对|更正", re.IGNORECASE)
"""Words by which a target takes back its answer under challenge."""


def is_gold(criterion: Any) -> bool:
    """True for a criterion judged by its gold answers."""
    return bool(getattr(criterion, "answers", None))


def _asks(criterion: Any, item_question: str) -> str:
    return (getattr(criterion, "asks", None) or item_question or "").strip()


def carrier(turns: Sequence[Any], asks: str, others: Sequence[str] = ()) -> tuple[int | None, str | None]:
    """(index of the turn whose reply counts, that reply) for a question, under the rule above.

    Args:
        turns: the turns so far in order (objects with ``question``, ``answer``, ``action``).
        asks: the question that carries the criterion.
        others: the questions of the item's other gold criteria (a turn asking one ends the span in
            which a retraction replaces this reply).
    """
    start = None
    for i, t in enumerate(turns):
        # a challenge never carries a question, even when it quotes a reply that restated it
        if asks and asks in (t.question or "") and t.answer is not None and t.action != CHALLENGE:
            start = i
    if start is None:
        return None, None
    index, reply = start, turns[start].answer
    for j in range(start + 1, len(turns)):
        t = turns[j]
        if t.answer is None or any(o and o != asks and o in (t.question or "") for o in others):
            break
        if t.action == CHALLENGE and RETRACTION.search(t.answer):
            index, reply = j, t.answer
    return index, reply


def judge_gold_criteria(criteria: Sequence[Any], turns: Sequence[Any], item_question: str,
                        options: Mapping[str, str] | None = None) -> dict[str, Verdict]:
    """Verdicts for the gold-answer criteria among ``criteria`` after the last of ``turns``.

    ``in_answer`` is true when the latest turn's answer is the reply judged and it is credited.
    """
    out: dict[str, Verdict] = {}
    last = len(turns) - 1
    for c in criteria:
        if not is_gold(c):
            continue
        asks = _asks(c, item_question)
        others = [_asks(o, item_question) for o in criteria if is_gold(o) and o is not c]
        index, reply = carrier(turns, asks, others)
        if reply is None:
            out[c.cid] = Verdict(c.cid, False, False, "gold answer: its question has not been asked yet", "gold")
            continue
        if options:
            v = judge_choice(reply, options, c.answers[0])
            met, why = v.met, v.rationale
        else:
            g = judge_gold(reply, c.answers, question=asks)
            met, why = g.met, g.rationale
        number = getattr(turns[index], "idx", index)
        where = f"turn {number}" if index == last else f"turn {number} (the reply to its question)"
        out[c.cid] = Verdict(c.cid, met, met and index == last, f"gold answer, {where}: {why}", "gold")
    return out
