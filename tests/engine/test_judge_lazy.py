"""The free-text judge's lazy verdicts (:meth:`engine.judge.freetext.FreeTextJudge.judge_lazily`): a cosine or
a word's vector is embedded only where it can change ``met``, and ``met`` equals the eager judge's
(:meth:`~engine.judge.freetext.FreeTextJudge.judge_many`) whatever the replies, criteria and threshold."""

from __future__ import annotations

import hashlib
import random

import numpy as np
import pytest

from engine.judge.freetext import FreeTextJudge
from engine.knowledge.embed import EmbeddingService, get_embedder


class HashEmbedder:
    """Deterministic vectors: each text a random mix of a shared direction and its own (seeded by its hash),
    so cosines spread over [0, 1] and words can match each other in other words; counts what it embeds."""

    def __init__(self, dim: int = 24):
        self.dim, self.embedded = dim, 0
        self.common = np.random.default_rng(7).normal(size=dim)

    def embed(self, texts):
        self.embedded += len(texts)
        rows = []
        for t in texts:
            rng = np.random.default_rng(int.from_bytes(hashlib.sha256(t.encode()).digest()[:8], "little"))
            v = rng.uniform(0.0, 4.0) * self.common + rng.normal(size=self.dim)
            rows.append(v / np.linalg.norm(v))
        return np.asarray(rows, dtype=np.float32)


SUBJECTS = ["Oxygen", "Liquid oxygen", "The Eiffel Tower", "Marie Curie", "Plants", "Water", "The river Seine"]
PREDICATES = ["is pale blue", "is a noble gas", "release oxygen through photosynthesis", "was built in 1889",
              "won 2 Nobel prizes", "boils at 100 degrees", "flows through Paris", "is very reactive",
              "makes up 21 percent of the air", "is 330 metres tall", "discovered radium and polonium"]
FILLERS = ["I think", "Actually,", "As far as I know,", "It is said that", "", "", ""]


def _sentence(rng: random.Random) -> str:
    subject, predicate = rng.choice(SUBJECTS), rng.choice(PREDICATES)
    if rng.random() < 0.2:
        predicate = predicate.replace("is ", "is not ", 1) if predicate.startswith("is ") else "never " + predicate
    if rng.random() < 0.15:
        predicate = predicate.replace("1889", "1887").replace("21", "20").replace("2 ", "3 ")
    return " ".join(p for p in (rng.choice(FILLERS), subject, predicate) if p) + "."


def _reply(rng: random.Random) -> str:
    sentences = [_sentence(rng) for _ in range(rng.randint(1, 4))]
    if rng.random() < 0.1:
        sentences.append("Red, green, blue, yellow.")
    if rng.random() < 0.1:
        sentences.append("That is false.")
    return " ".join(sentences)


def _criterion(rng: random.Random) -> tuple[str, bool]:
    deduction = rng.random() < 0.2
    text = f"{rng.choice(SUBJECTS)} {rng.choice(PREDICATES)}"
    return (f"Claims that {text.lower()}" if deduction else rng.choice(["", "States that "]) + text), deduction


def _lazy(judge: FreeTextJudge, criteria, reply, question, flags):
    return judge.judge_lazily([judge.prepare(criteria, reply, question, flags)], judge.embedder.embed)[0]


@pytest.mark.parametrize("seed", range(6))
def test_lazy_equals_eager_on_random_replies(seed):
    """The property: for random replies (one text, or a summary of (question, answer) pieces), criteria
    (facts, deductions, numbers, names, negations) and thresholds, lazy ``met`` == eager ``met``, with fewer
    texts embedded."""
    rng = random.Random(seed)
    eager_texts = lazy_texts = decided_without = 0
    for _case in range(60):
        threshold = rng.uniform(0.35, 0.9)
        eager, lazy = FreeTextJudge(HashEmbedder(), threshold), FreeTextJudge(HashEmbedder(), threshold)
        criteria = [_criterion(rng) for _ in range(rng.randint(1, 4))]
        texts, flags = [c for c, _ in criteria], [d for _, d in criteria]
        question = rng.choice(["", "What do you know about oxygen?", "Tell me about Paris and its tower."])
        reply = _reply(rng) if rng.random() < 0.5 else [(rng.choice(["Q1?", "What else?", ""]), _reply(rng))
                                                         for _ in range(rng.randint(1, 3))]
        full = eager.judge_many(texts, reply, question, flags)
        got = _lazy(lazy, texts, reply, question, flags)
        assert [v.met for v in got] == [v.met for v in full], (texts, reply, question, threshold)
        decided_without += sum("whatever the cosine" in g.rationale for g in got)
        eager_texts += eager.embedder.embedded
        lazy_texts += lazy.embedder.embedded
    assert decided_without and lazy_texts < eager_texts


def test_lazy_equals_eager_with_the_real_encoder():
    """The same on the real ONNX encoder, with replies and criteria of the offline judge's own tests, at
    thresholds around the default: every ``met`` equal, both ways (with and without a cosine) taken."""
    service = EmbeddingService(get_embedder())
    criteria = ["Liquid oxygen is pale blue", "States that plants release oxygen through photosynthesis",
                "Oxygen makes up 21 percent of the air", "Claims that oxygen is a noble gas",
                "Oxygen boils at minus 183 degrees", "Is oxygen a metal?",
                "Marie Curie discovered radium and polonium in 1898"]
    flags = [False, False, False, True, False, False, False]
    replies = ["Oxygen is a reactive gas. Plants release it. It is 20% of the air.", "Liquid oxygen is pale blue.",
               "Yes, I am sure. It is pale blue.", "Oxygen is a noble gas. That is false. It is 21% of air.",
               "You are right, I was wrong. Oxygen is not a noble gas.", "Oxygen boils at -183 degrees.",
               "It boils at 90 K.", "No.", "Plants, algae, bacteria, oceans.", "Oxygen is not a metal, it is a gas.",
               "Curie found two elements, radium and polonium, in 1898.", "The liquid form looks light blue.",
               [("What do you know about oxygen?", "Oxygen is a reactive gas. Plants make it from light."),
                ("What colour is it?", "Liquid oxygen is blue. Pale, in fact.")]]
    questions = ["", "What do you know about oxygen?", 'I am not convinced by this: "Oxygen is a gas." Sure?']
    exact = bounded = 0
    for threshold in (0.55, 0.65, 0.75):
        judge = FreeTextJudge(service, threshold)
        for reply in replies:
            for question in questions:
                full = judge.judge_many(criteria, reply, question, flags)
                got = _lazy(judge, criteria, reply, question, flags)
                assert [v.met for v in got] == [v.met for v in full], (reply, question, threshold)
                for g in got:
                    if "whatever the cosine" in g.rationale:
                        bounded += 1
                    elif "cos " in g.rationale:
                        exact += 1
    assert exact and bounded


def test_nothing_embedded_when_the_words_decide():
    """A fact said word for word meets its claim at cos 0, and a reply about something else cannot reach
    it at cos 1: neither needs a vector; ``also`` is embedded alone then."""
    embedder = HashEmbedder()
    judge = FreeTextJudge(embedder, 0.65)
    criteria = ["Liquid oxygen is pale blue", "The Eiffel Tower was built in 1889"]
    job = judge.prepare(criteria, "Liquid oxygen is pale blue.", "", [False, False])
    got = judge.judge_lazily([job], embedder.embed, ["the summary"])[0]
    assert [v.met for v in got] == [True, False]
    assert embedder.embedded == 1  # only the caller's own text
    assert all("whatever the cosine" in v.rationale for v in got)
    assert got[0].rationale.startswith("offline: recall 1.00; ") and ">= 0.65 whatever the cosine" in got[0].rationale


@pytest.mark.parametrize("seed", range(4))
def test_lazy_equals_eager_on_sessions_with_words_given_by_turn(seed):
    """The same property for a summary said over several turns (:meth:`FreeTextJudge.prepare_session`): the
    jobs of each set of given words judged lazily and merged give the ``met`` of the same jobs judged eagerly
    and merged; and with nothing given and one question the session's verdicts are :meth:`prepare`'s."""
    from engine.judge.freetext import merge
    from engine.text.tokens import content_stems

    rng = random.Random(100 + seed)
    masked = 0
    for _case in range(40):
        threshold = rng.uniform(0.35, 0.9)
        eager, lazy = FreeTextJudge(HashEmbedder(), threshold), FreeTextJudge(HashEmbedder(), threshold)
        criteria = [_criterion(rng) for _ in range(rng.randint(1, 4))]
        texts, flags = [c for c, _ in criteria], [d for _, d in criteria]
        turns = rng.randint(2, 4)
        questions = [rng.choice(["What do you know?", "Is liquid oxygen pale blue?", f"Tell me about {c}."])
                     for c in (rng.choice(SUBJECTS) for _ in range(turns))]
        given, acc = [], frozenset()
        for q in questions:
            acc = acc | frozenset(content_stems(q))
            given.append(acc)
        parts, said = [], []
        for t in range(turns):
            for sentence in _reply(rng).split(". "):
                parts.append((questions[t], sentence.rstrip(".") + "."))
                said.append(t)
        if rng.random() < 0.2:  # a challenge's reply joins an earlier group: pieces out of turn order
            pieces = list(zip(parts, said, strict=True))
            rng.shuffle(pieces)
            parts, said = [p for p, _ in pieces], [t for _, t in pieces]
        asked = " ".join(questions)
        jobs = eager.prepare_session(texts, parts, said, given, asked, flags)
        full = merge([eager.complete(j, eager.embedder.embed(j.texts) if j.texts else None) for j in jobs])
        got = merge(lazy.judge_lazily(lazy.prepare_session(texts, parts, said, given, asked, flags),
                                      lazy.embedder.embed))
        assert [v.met for v in got] == [v.met for v in full], (texts, parts, said, threshold)
        masked += sum(1 for j in jobs for c in j.candidates if c.mask)
        # nothing given, one question: the session's verdicts are those of the same pieces as one reply
        none, one = [frozenset()] * turns, [("What do you know?", p) for _, p in parts]
        plain = eager.judge_many(texts, one, "", flags)
        session = merge(lazy.judge_lazily(lazy.prepare_session(texts, one, said, none, "", flags), lazy.embedder.embed))
        assert [v.met for v in session] == [v.met for v in plain]
    assert masked


def test_a_joined_context_has_the_stems_of_its_text_read_whole():
    """The offline judge's context of every question asked, folded a question a turn
    (``OfflineJudge._asked_stems``, ``freetext.joined_stems``), has ``stem_set`` of the joined text, exactly,
    whatever runs across a boundary: a number spelt in words ("… one" "hundred …"), a digit before a scale
    word, "per" "cent", "nineteen oh" "eight", Chinese numerals."""
    import random

    from engine.judge.freetext import Joined, joined_stems, stem_set
    from engine.judge.offline import OfflineJudge
    from engine.text.tokens import runs_on

    words = ["oxygen", "is", "one", "hundred", "and", "fifty", "per", "cent", "1.5", "million", "nineteen",
             "oh", "eight", "first", "twenty", "thousand", "seven", "?", ".", "Who", "found", "it", "一千八百",
             "百分之九十", "二", "the", "water's", "1,000", "3rd", "", "  "]
    rng = random.Random(5)
    judge = OfflineJudge()
    boundaries = {True: 0, False: 0}
    for _ in range(400):
        parts: list[str] = []
        for _ in range(rng.randint(1, 9)):
            if parts and runs_on(parts[-1]) is not None:
                boundaries[runs_on(parts[-1])] += 1
            parts.append(" ".join(rng.choice(words) for _ in range(rng.randint(0, 4))))
            got = judge._asked_stems(tuple(parts))  # grown by one piece, as a session's context is
            assert got == stem_set(" ".join(parts)) == Joined(parts, got).stems, parts
    assert boundaries[True] > 100 and boundaries[False] > 100  # both kinds of boundary were met
    # a boundary nothing runs across is really the union; one a number runs across is not
    assert joined_stems(stem_set("Where is oxygen found?"), ("Where is oxygen found?", "one hundred"), 1) == \
        stem_set("Where is oxygen found? one hundred")
    assert joined_stems(stem_set("It was one"), ("It was one", "hundred years"), 1) == \
        stem_set("It was one hundred years") != stem_set("It was one") | stem_set("hundred years")
