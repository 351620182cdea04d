"""The offline judge's per-turn work (the real ONNX embedder): at most two encoder runs per turn holding
only new texts that can change a verdict, the new summary in the first, and memoised scores that equal
a fresh judge's. (Lazy equals eager: ``test_judge_lazy.py``.)"""

from __future__ import annotations

from types import SimpleNamespace

from engine.judge.base import TurnView
from engine.judge.offline import OfflineJudge
from engine.knowledge.embed import EmbeddingService, get_embedder
from engine.knowledge.summary_vector import summary_sentences

CRITERIA = [SimpleNamespace(cid="c1", text="Liquid oxygen is pale blue", kind="point"),
            SimpleNamespace(cid="c2", text="States that plants release oxygen through photosynthesis", kind="point"),
            SimpleNamespace(cid="c3", text="Oxygen makes up 21 percent of the air", kind="point"),
            SimpleNamespace(cid="c4", text="Claims that oxygen is a noble gas", kind="deduction")]
TURNS = [("What do you know about oxygen?", "Oxygen is a reactive gas. Plants release it. It is 20% of the air.",
          "initial"),
         ("What can you tell me about liquid oxygen?", "Liquid oxygen is pale blue.", "follow-up"),
         ('I am not convinced by this: "Liquid oxygen is pale blue." Are you sure?',
          "Yes, I am sure. It is pale blue.", "challenge"),
         ("What can you tell me about the air?", "Oxygen is a noble gas. That is false. It is 21% of air.",
          "follow-up"),
         ('I am not convinced by this: "Oxygen is a noble gas." Are you sure?',
          "You are right, I was wrong. Oxygen is not a noble gas.", "challenge"),
         ("Is there anything else?", "Red, green, blue, yellow. Photosynthesis releases oxygen.", "follow-up")]


def _session(judge: OfflineJudge, fresh_each_turn: bool = False):
    history: list[TurnView] = []
    out = []
    for idx, (question, answer, action) in enumerate(TURNS):
        j = OfflineJudge(embedder=judge.embedder) if fresh_each_turn else judge
        judgement = j._judge(question, CRITERIA, answer, history, action)
        out.append(judgement)
        history.append(TurnView(idx, question, answer, action, summary=judgement.summary))
    return out


def test_few_encoder_runs_per_turn_with_the_new_summary():
    service = EmbeddingService(get_embedder())
    judge = OfflineJudge(embedder=service)
    history: list[TurnView] = []
    embedded = 0
    for idx, (question, answer, action) in enumerate(TURNS):
        before = service.stats()
        judgement = judge._judge(question, CRITERIA, answer, history, action)
        after = service.stats()
        # words that can decide, then texts that can: at most two runs (nothing new: none)
        assert after["runs"] - before["runs"] <= 2, f"turn {idx}: at most two encoder runs"
        # the summary's sentences for cos_t were embedded: the protocol finds them without embedding
        assert service.cached(summary_sentences(judgement.summary)) is not None
        assert service.stats()["runs"] == after["runs"]
        embedded += after["embedded"] - before["embedded"]
        history.append(TurnView(idx, question, answer, action, summary=judgement.summary))
    # the eager judge embedded every candidate of the summary and of the answer in context, every word
    eager = sum(len(OfflineJudge(embedder=get_embedder()).facts.prepare(
        [c.text for c in CRITERIA], [("", a) for _, a, _ in TURNS[: i + 1]]).texts) for i in range(len(TURNS)))
    assert embedded < eager / 4, (embedded, eager)


def test_memoised_scores_equal_a_fresh_judges():
    service = EmbeddingService(get_embedder())
    warm = _session(OfflineJudge(embedder=service))
    fresh = _session(OfflineJudge(embedder=service), fresh_each_turn=True)
    plain = _session(OfflineJudge(embedder=get_embedder()), fresh_each_turn=True)  # no cache at all
    for a, b, c in zip(warm, fresh, plain, strict=True):
        assert a.summary == b.summary == c.summary
        for cid in a.verdicts:
            assert a.verdicts[cid] == b.verdicts[cid] == c.verdicts[cid]
    # the rationales name the rules the memo must keep apart (a deduction's clause rule, another number
    # than the fact's: the eager judge's, whose memo the lazy one shares)
    facts = OfflineJudge(embedder=service).facts
    texts, flags = [c.text for c in CRITERIA], [c.kind == "deduction" for c in CRITERIA]
    said = " ".join(v.rationale for j in warm for v in j.verdicts.values())
    said += " ".join(v.rationale for i, (_, a, _) in enumerate(TURNS)
                     for v in facts.judge_many(texts, [(q, x) for q, x, _ in TURNS[: i + 1]], "", flags))
    for rule in ("in one clause", "another number than"):
        assert rule in said, rule
    assert warm[-1].verdicts["c1"].met and not warm[-1].verdicts["c4"].met


def test_cached_lookup_embeds_nothing():
    service = EmbeddingService(get_embedder())
    assert service.cached(["never embedded"]) is None
    assert service.stats()["runs"] == 0 and service.stats()["hits"] == 0
    vec = service.embed(["now embedded"])
    assert (service.cached(["now embedded"]) == vec).all()
