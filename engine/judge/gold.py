"""Gold-answer criteria, judged the same way whichever kernel runs the session.

A criterion with gold ``answers`` (a SQuAD span, the gold option of a multiple-choice item, an
imported short answer) is judged against what the target said **in reply to the question that
carries it** (``asks``; the item's own question when ``asks`` is empty):

1. the carrier is the latest turn, other than a challenge, whose question contains ``asks`` (an
   initial multiple-choice question carries its options after the stem, so containment, not
   equality; a challenge that quotes a reply which restated the question does not carry it);
2. the reply is that turn's answer, until a later reply **gives a different answer** to the same
   question (up to the next turn that asks another gold question), which then replaces it,
   whatever words announce it (:func:`changes_answer`):

   - a retraction ("I was wrong", "you are right", "I apologise", ...) always replaces it;
   - for a multiple-choice item, a later reply that chooses another option replaces it;
   - a challenge's reply that does not hold the answer (no "yes", "I am sure", "I stand by", "my
     answer is correct", "I still think", ... without a change word) replaces it when it states a
     new candidate: the gold itself, a number the earlier reply did not give (when the golds have
     numbers), a capitalised name the earlier reply, the question and the challenge do not hold,
     or (no question back) words of its own while it keeps fewer than half of the earlier reply's
     own words ("It's the southern valley." after "the northern valley"; "I am not sure any more."
     gives the answer up);
   - any later reply with a change word ("actually", "in fact", "I meant", "rather", "instead",
     "the correct answer is", ...) and a new candidate replaces it;
   - a reply that holds, justifies or repeats the answer leaves it standing;
   - a challenge that quotes another reply than the one that counts ("You said: "about six weeks"" while
     "thin layers of chitin" counts) contests another claim: its reply replaces nothing here; one whose last
     question is open ("Of everything you have said, which claim are you least sure of, and why?") asks for a
     claim and contests none: its reply replaces the answer only as any later reply does (a retraction, a change
     word);
3. a multiple-choice item (the item has options) is credited iff the reply's single, last explicit,
   non-negated choice is the gold option (:func:`engine.judge.choice.judge_choice`); otherwise the
   reply is judged against every gold answer by :func:`engine.judge.gold_match.judge_gold`;
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
from engine.judge.stance import CHANGE, HOLD, RETRACTION

CHALLENGE = "challenge"


def is_gold(criterion: Any) -> bool:
    """True for a criterion judged by its gold answers."""
    return bool(getattr(criterion, "answers", None))


def _asks(criterion: Any, item_question: str) -> str:
    return (getattr(criterion, "asks", None) or item_question or "").strip()


def changes_answer(earlier: str, later: str, *, challenged: bool, golds: Sequence[str] = (),
                   options: Mapping[str, str] | None = None, question: str = "", challenge: str = "") -> bool:
    """Whether ``later`` gives a different answer than ``earlier`` to ``question`` (rule 2 above).

    Args:
        earlier: the reply that counts so far.
        later: a later reply in the same span.
        challenged: ``later`` answers a challenge of the answer.
        golds: the accepted answers (for the gold itself and whether answers are numbers).
        options: a multiple-choice item's options.
        question: the question that carries the criterion.
        challenge: the challenge ``later`` answers ("" for other turns).
    """
    if RETRACTION.search(later):
        return True
    if options:
        from engine.judge.choice import extract_choice

        before, after = extract_choice(earlier, options), extract_choice(later, options)
        return after is not None and after != before
    changed = bool(CHANGE.search(later))
    holds = bool(HOLD.search(later)) and not changed
    if not (changed or (challenged and not holds)):
        return False
    return _new_candidate(earlier, later, golds, question, challenge)


def _new_candidate(earlier: str, later: str, golds: Sequence[str], question: str, challenge: str) -> bool:
    from engine.judge.gold_tokens import sentences, tokens
    from engine.text.lexicon import FILLER

    if golds and judge_gold(later, list(golds), question).met and not judge_gold(earlier, list(golds), question).met:
        return True  # it now gives the gold
    known = tokens(earlier) + tokens(question) + tokens(challenge)
    known_words = {t.stem for t in known}
    known_numbers = {t.num for t in known if t.num is not None}
    later_toks = tokens(later)
    if any(t.num is not None for g in golds for t in tokens(g)):
        return any(t.num is not None and t.num not in known_numbers for t in later_toks)
    for sentence in sentences(later_toks):
        words = [t for t in sentence if t.kind == "word"]
        if any(t.cap and t.stem not in known_words and len(t.text) > 1 for t in words[1:]):
            return True  # a name the earlier reply did not give
        if words and words[0].cap and words[0].stem not in known_words and len(sentence) <= 4:
            return True  # a short reply that is a new name ("Lyon.")
    # a reply that no longer says the earlier answer's own words and says words of its own
    # ("Actually it is the southern valley." after "the northern valley of the river")
    asked = {t.stem for t in tokens(question)} | {t.stem for t in tokens(challenge)}
    before = {t.stem for t in tokens(earlier) if t.kind == "word" and t.text not in FILLER} - asked
    after = {t.stem for t in later_toks if t.kind == "word" and t.text not in FILLER} - asked
    if "?" in later:
        return False  # a question back is no answer
    return bool(before) and bool(after - before) and len(before & after) < len(before) / 2


_QUOTE = re.compile(r'"([^"]{2,})"|“([^”]{2,})”|「([^」]{2,})」')


_OPEN_QUESTION = re.compile(r"^\W*(?:[^,?]*,\s*)?(?:which|what|why|how|where|when|who|whom|whose)\b", re.IGNORECASE)


def _last_question(text: str) -> str:
    """The last question of a text (the sentence that ends with its last "?"), or ""."""
    asked = re.findall(r"[^.!?]*\?", text or "")
    return asked[-1].strip() if asked else ""


def _contests_another(challenge: str, reply: str) -> bool:
    """A challenge that quotes something, none of it the reply that counts: it contests another claim."""
    quotes = [next(g for g in m.groups() if g) for m in _QUOTE.finditer(challenge)]
    said = " ".join(re.findall(r"\w+", (reply or "").lower()))
    return bool(quotes) and not any(" ".join(re.findall(r"\w+", q.lower())) in said for q in quotes)


def carrier(turns: Sequence[Any], asks: str, others: Sequence[str] = (), golds: Sequence[str] = (),
            options: Mapping[str, str] | None = None) -> tuple[int | None, str | None]:
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
        challenged = t.action == CHALLENGE
        if challenged and _contests_another(t.question or "", reply):
            continue  # a challenge that quotes another reply ("You said: "about six weeks"") is not about this one
        if challenged and _OPEN_QUESTION.search(_last_question(t.question or "")):
            challenged = False  # "which claim are you least sure of?" asks for a claim: it contests none
        if changes_answer(reply, t.answer, challenged=challenged, golds=golds, options=options, question=asks,
                          challenge=t.question or "" if challenged else ""):
            index, reply = j, t.answer
    return index, reply


PASTE_SENTENCES = 2
"""A reply that copies at least this many whole sentences of the item's passage is a paste."""

PASTE_MIN_WORDS = 6
"""A copied sentence counts when it has at least this many words (short ones are answers, not copies)."""

PASTE_SHARE = 0.5
"""A reply is a paste when it copies at least this share of the passage's sentences (and at least
:data:`PASTE_SENTENCES`): a chat answer that quotes a sentence or two of its source as its reasons is
an answer, one that reproduces the passage is not."""

_WORDS = re.compile(r"\w+", re.UNICODE)


def _words(text: str) -> str:
    return " ".join(w.lower() for w in _WORDS.findall(text or ""))


def without_paste(reply: str, passage: str | None) -> tuple[str, int]:
    """The reply without the sentences it copies from the item's passage, when it copies at least
    :data:`PASTE_SENTENCES` of them and at least :data:`PASTE_SHARE` of the passage's sentences
    (``(reply, 0)`` otherwise), and how many it copied.

    A target that pastes the source paragraph restates every candidate the passage holds without
    singling one out as its answer (issue 34): what it says of its own around the copy is what is
    judged ("The answer is X." before a pasted passage is still credited for X). A sentence is copied
    when a run of its words (lower-cased, punctuation aside; :data:`PASTE_MIN_WORDS` or more, at least
    half the sentence) runs unbroken in the passage; its words outside that run (a lead-in such as "Here
    is the relevant text:") stay the target's own."""
    if not passage or not reply:
        return reply, 0
    source = f" {_words(passage)} "
    from engine.text.sentences import split_sentences

    kept, copied = [], 0
    for sentence in split_sentences(reply):
        words = _words(sentence).split()
        window = _copied_window(words, source)
        if window is None:
            kept.append(sentence)
            continue
        copied += 1
        i, j = window
        rest = " ".join(words[:i] + words[j:])  # a lead-in ("Here is the relevant text:") stays the target's
        if rest:
            kept.append(rest + ".")
    passage_sentences = len([x for x in split_sentences(passage) if len(_words(x).split()) >= PASTE_MIN_WORDS])
    if copied < max(PASTE_SENTENCES, PASTE_SHARE * passage_sentences):
        return reply, 0  # a few sentences quoted as reasons: an answer that explains, not a paste
    return " ".join(kept), copied


def _copied_window(words: list[str], source: str) -> tuple[int, int] | None:
    """The longest run of a sentence's words found unbroken in the passage, when it has at least
    :data:`PASTE_MIN_WORDS` words and is most of the sentence (the rest a short lead-in or tail)."""
    n = len(words)
    for size in range(n, PASTE_MIN_WORDS - 1, -1):
        if size * 2 < n:
            return None
        for i in range(0, n - size + 1):
            if f" {' '.join(words[i:i + size])} " in source:
                return i, i + size
    return None


def judge_gold_criteria(criteria: Sequence[Any], turns: Sequence[Any], item_question: str,
                        options: Mapping[str, str] | None = None, passage: str | None = None) -> dict[str, Verdict]:
    """Verdicts for the gold-answer criteria among ``criteria`` after the last of ``turns``.

    ``in_answer`` is true when the latest turn's answer is the reply judged and it is credited.
    ``passage``: the item's source passage (a SQuAD context); a reply that pastes it is judged on what
    it says besides the copy (:func:`without_paste`).
    """
    out: dict[str, Verdict] = {}
    last = len(turns) - 1
    for c in criteria:
        if not is_gold(c):
            continue
        asks = _asks(c, item_question)
        others = [_asks(o, item_question) for o in criteria if is_gold(o) and o is not c]
        index, reply = carrier(turns, asks, others, golds=c.answers, options=options)
        if reply is None:
            out[c.cid] = Verdict(c.cid, False, False, "gold answer: its question has not been asked yet", "gold")
            continue
        if options:
            v = judge_choice(reply, options, c.answers[0])
            met, why = v.met, v.rationale
        else:
            own, copied = without_paste(reply, passage)
            g = judge_gold(own, c.answers, question=asks)
            met, why = g.met, g.rationale
            if copied:
                why = f"pastes {copied} sentence(s) of the item's passage, judged without them: {why}"
        number = getattr(turns[index], "idx", index)
        where = f"turn {number}" if index == last else f"turn {number} (the reply to its question)"
        out[c.cid] = Verdict(c.cid, met, met and index == last, f"gold answer, {where}: {why}", "gold")
    return out
