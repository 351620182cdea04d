"""The offline judge's per-turn work (the real ONNX embedder): one encoder run per turn holding only
new texts, the new summary among them, and memoised scores that equal a fresh judge's."""

from __future__ import annotations

from types import SimpleNamespace

from engine.judge.base import TurnView
from engine.judge.offline import OfflineJudge
from engine.knowledge.embed import EmbeddingService, get_embedder

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


def test_one_encoder_run_per_turn_with_the_new_summary():
    service = EmbeddingService(get_embedder())
    judge = OfflineJudge(embedder=service)
    history: list[TurnView] = []
    for idx, (question, answer, action) in enumerate(TURNS):
        before = service.stats()
        judgement = judge._judge(question, CRITERIA, answer, history, action)
        after = service.stats()
        assert after["runs"] - before["runs"] == 1, f"turn {idx}: one encoder run"
        # the summary for cos_t was in that run: the protocol finds it without embedding
        assert service.cached([judgement.summary]) is not None
        assert service.stats()["runs"] == after["runs"]
        if idx:  # only new texts: the earlier turns' candidates come back as hits
            assert after["embedded"] - before["embedded"] < after["hits"] - before["hits"]
        history.append(TurnView(idx, question, answer, action, summary=judgement.summary))


def test_memoised_scores_equal_a_fresh_judges():
    service = EmbeddingService(get_embedder())
    warm = _session(OfflineJudge(embedder=service))
    fresh = _session(OfflineJudge(embedder=service), fresh_each_turn=True)
    plain = _session(OfflineJudge(embedder=get_embedder()), fresh_each_turn=True)  # no cache at all
    for a, b, c in zip(warm, fresh, plain, strict=True):
        assert a.summary == b.summary == c.summary
        for cid in a.verdicts:
            assert a.verdicts[cid] == b.verdicts[cid] == c.verdicts[cid]
    # the deciding rationales name the rules the memo must keep apart (a deduction's clause rule,
    # another number than the fact's); contradictions and the keyword list score 0 or less and are never shown
    said = " ".join(v.rationale for j in warm for v in j.verdicts.values())
    for rule in ("in one clause", "another number than"):
        assert rule in said, rule
    assert warm[-1].verdicts["c1"].met and not warm[-1].verdicts["c4"].met


def test_cached_lookup_embeds_nothing():
    service = EmbeddingService(get_embedder())
    assert service.cached(["never embedded"]) is None
    assert service.stats()["runs"] == 0 and service.stats()["hits"] == 0
    vec = service.embed(["now embedded"])
    assert (service.cached(["now embedded"]) == vec).all()


def test_met_only_equals_the_full_verdicts_met():
    judge = OfflineJudge(embedder=EmbeddingService(get_embedder())).facts
    texts = [c.text for c in CRITERIA] + ["Oxygen boils at minus 183 degrees", "Is oxygen a metal?"]
    flags = [c.kind == "deduction" for c in CRITERIA] + [False, False]
    replies = [a for _, a, _ in TURNS] + ["Oxygen boils at -183 degrees.", "It boils at 90 K.", "No.",
                                          "Plants, algae, bacteria, oceans.", "Oxygen is not a metal, it is a gas."]
    questions = ["", "What do you know about oxygen?", 'I am not convinced by this: "Oxygen is a gas." Sure?']
    decided = pending = 0
    for reply in replies:
        for question in questions:
            full = [v.met for v in judge.judge_many(texts, reply, question, flags)]
            job = judge.prepare_met(texts, reply, question, flags)
            vectors = judge.embedder.embed(job.texts) if job.texts else None
            assert judge.complete_met(job, vectors) == full, (reply, question)
            decided += sum(d is not None for d in job.decided)
            pending += sum(d is None for d in job.decided)
    assert decided and pending  # both ways were taken
