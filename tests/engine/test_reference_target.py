"""The reference target ``kb:NAME``: the best-matching whole sentences of a knowledge base, new facts on
follow-ups, and a full session through the engine (real SQLite, real ONNX embedder, offline kernel)."""

from __future__ import annotations

import asyncio
import re

import pytest

from engine.config import Config
from engine.demo import DEMO_DIR
from engine.interview.reference import NO_ANSWER, ReferenceTarget, choose_sentences, sentences_of
from engine.interview.run import RunRequest, execute_run, plan_run, run_sessions
from engine.interview.targets import TargetError, TargetFactory
from engine.knowledge.embed import get_embedder
from engine.knowledge.kb import build_kb
from engine.runtime import Runtime

DOCS = DEMO_DIR / "docs"


@pytest.fixture
def runtime(home):
    rt = Runtime(home=home, config=Config())
    build_kb(rt.store, rt.home, "flu", [DOCS], config=rt.config.retrieval)
    yield rt
    rt.store.close()


def _doc_text() -> str:
    return " ".join(re.sub(r"\s+", " ", p.read_text(encoding="utf-8")) for p in sorted(DOCS.glob("*.md")))


def test_sentences_of_keeps_whole_sentences_only():
    chunk = ("ted in winter, so it spreads. # Seasonal influenza\nSeasonal influenza is an acute infection.\n"
             "- Rest and fluids help most people recover.\nShort one.\nA title without a stop\n"
             "Antibiotics do not work against the influenza virus. The vaccine is revi")
    assert sentences_of(chunk) == ["Seasonal influenza is an acute infection.",
                                   "Rest and fluids help most people recover.",
                                   "Antibiotics do not work against the influenza virus."]


def test_choose_sentences_ranks_by_meaning_and_prefers_new_facts():
    embed = get_embedder().embed
    candidates = [(1, 0, "Annual vaccination is the most effective prevention."),
                  (1, 1, "The virus spreads mainly through droplets released when an infected person coughs."),
                  (2, 0, "Typical symptoms start suddenly: fever, dry cough and headache.")]
    question = "How does the influenza virus spread from one person to another?"
    first = choose_sentences(question, candidates, set(), embed, n=1)
    assert first == [candidates[1][2]]
    said = {" ".join(re.findall(r"\w+", first[0].lower()))}
    again = choose_sentences(question, candidates, said, embed, n=1)
    assert again and again != first, "a follow-up gets a sentence not said before"
    everything = {" ".join(re.findall(r"\w+", c[2].lower())) for c in candidates}
    assert choose_sentences(question, candidates, everything, embed, n=1) == first, "all said: the best again"
    assert choose_sentences(question, [], set(), embed) == []


async def test_reference_target_answers_with_sentences_of_the_knowledge_base(runtime):
    target = ReferenceTarget("kb:flu", runtime.store, runtime.home, runtime.config)
    pieces: list[str] = []
    result = await target.reply([{"role": "user", "content": "Which drug shortens influenza if started early?"}],
                                on_token=pieces.append)
    assert "oseltamivir" in result.text and pieces == [result.text]
    text = _doc_text()
    for sentence in re.split(r"(?<=[.!?])\s+", result.text):
        assert sentence in text, f"not a sentence of the documents: {sentence!r}"
    follow = await target.reply([
        {"role": "user", "content": "Which drug shortens influenza if started early?"},
        {"role": "assistant", "content": result.text},
        {"role": "user", "content": "What else do you know about treating influenza?"}])
    assert set(re.split(r"(?<=[.!?])\s+", follow.text)).isdisjoint(re.split(r"(?<=[.!?])\s+", result.text))
    empty = await target.reply([{"role": "user", "content": "   "}])
    assert empty.text == NO_ANSWER


def test_unknown_knowledge_base_is_refused_before_the_run(runtime):
    factory = TargetFactory(runtime.store, runtime.config, runtime.home)
    with pytest.raises(TargetError, match="kb build"):
        factory.validate("kb:nothing-here")
    with pytest.raises(TargetError, match="kb:NAME"):
        factory.validate("kb:")


async def test_a_session_with_the_reference_target_scores_and_moves(runtime):
    from engine.bench.generate import generate_benchmark, load_topics

    await generate_benchmark(runtime.store, runtime.home, "flu-bench", "flu", load_topics(DEMO_DIR / "topics.yaml"),
                             per_topic=1, seed=0, config=runtime.config, offline=True)
    from engine.bench.items import list_items

    first = list_items(runtime.store, "flu-bench")[0].id
    run_id = plan_run(runtime, RunRequest(bench="flu-bench", targets=["kb:flu"], items=[first], kernel="offline",
                                          policy="threshold", turns=3))
    errors = await execute_run(runtime, run_id)
    assert set(errors.values()) == {None}
    text = _doc_text()
    for sid in run_sessions(runtime, run_id):
        rows = runtime.store.query("SELECT answer, score FROM turns WHERE session_id = ? ORDER BY idx", (sid,))
        assert len(rows) == 3 and all(r["score"] is not None for r in rows)
        for r in rows:  # sentences of the documents, or a challenge held by restating one with its source
            answer = re.sub(r"^I stand by it, as the knowledge base says \(document [^)]*\): ", "", r["answer"])
            assert all(s in text for s in re.split(r"(?<=[.!?])\s+", answer)), r["answer"]
        assert runtime.store.one("SELECT score FROM sessions WHERE id = ?", (sid,))["score"] > 0
    assert asyncio.get_running_loop()  # ran inside the test's loop, no thread needed


async def test_challenged_it_holds_a_supported_claim_and_corrects_an_unsupported_one(runtime):
    from engine.interview.reference import contested_claim

    target = ReferenceTarget("kb:flu", runtime.store, runtime.home, runtime.config)
    q = "Which drug shortens influenza if started early?"
    first = (await target.reply([{"role": "user", "content": q}])).text
    claim = re.split(r"(?<=[.!?])\s+", first)[0]
    challenge = f'The reference material says: "Annual vaccination is the most effective prevention." ' \
                f'Do you stand by your claim that "{claim}"? Justify it, or correct it.'
    assert contested_claim(challenge, [first]) == claim
    held = (await target.reply([{"role": "user", "content": q}, {"role": "assistant", "content": first},
                                {"role": "user", "content": challenge}])).text
    assert held.startswith("I stand by it, as the knowledge base says (document ") and held.endswith(claim)
    wrong = "Antibiotics cure influenza within a day."
    fixed = (await target.reply([{"role": "user", "content": q}, {"role": "assistant", "content": wrong},
                                 {"role": "user", "content": f'You said: "{wrong}" What does that rest on? '
                                                             "Do you stand by it, or would you correct it?"}])).text
    assert fixed.startswith("I was wrong about that. ") and "do not work" in fixed
    # a follow-up quoting no earlier sentence is not a challenge
    assert contested_claim('Complete this statement: "Washing takes ____ seconds."', [first]) is None


ANTICOAGULANTS = (
    "# Anticoagulants\n\n"
    "Direct oral anticoagulants are an alternative to warfarin for atrial fibrillation. They act within hours of "
    "the first dose and need no routine INR monitoring. Their effect fades within a day of the last dose.\n\n"
    "Warfarin is a vitamin K antagonist. It needs regular INR checks because many foods and drugs change its "
    "effect. They are not advised for patients with mechanical heart valves.\n")


def test_resolved_sentences_take_the_subject_of_the_sentence_before():
    from engine.interview.reference import resolved_sentences

    got = resolved_sentences(ANTICOAGULANTS)
    assert got[1] == "Direct oral anticoagulants act within hours of the first dose and need no routine INR monitoring."
    assert got[3] == "Warfarin is a vitamin K antagonist."
    assert got[4] == "Warfarin needs regular INR checks because many foods and drugs change its effect."
    # not safe, left as written: a possessive ("Direct oral anticoagulants' effect") is no subject to
    # borrow, and "They" after a singular "Warfarin" does not agree
    assert got[2] == "Direct oral anticoagulants' effect fades within a day of the last dose."
    assert got[5] == "They are not advised for patients with mechanical heart valves."
    assert resolved_sentences("ted in winter. They spread in droplets from coughs.") == [
        "They spread in droplets from coughs."], "the sentence before is a fragment cut by chunking"
    assert resolved_sentences("# Antivirals\nThey shorten the illness when started early.") == [
        "They shorten the illness when started early."], "a heading is no sentence to resolve from"
    assert [len(sentences_of(ANTICOAGULANTS))] == [len(got)]


async def test_reference_target_answers_with_pronouns_resolved(home, tmp_path):
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "anticoagulants.md").write_text(ANTICOAGULANTS, encoding="utf-8")
    rt = Runtime(home=home, config=Config())
    try:
        build_kb(rt.store, rt.home, "anticoag", [docs], config=rt.config.retrieval)
        target = ReferenceTarget("kb:anticoag", rt.store, rt.home, rt.config)
        result = await target.reply([{"role": "user", "content": "How fast do direct oral anticoagulants act, "
                                                                 "and do they need INR monitoring?"}])
        sentences = re.split(r"(?<=[.!?])\s+", result.text)
        assert "Direct oral anticoagulants act within hours of the first dose and need no routine INR " \
               "monitoring." in sentences, result.text
        assert not any(s.startswith(("They act", "It needs")) for s in sentences), result.text
        # challenged on its resolved sentence, it holds it (the knowledge base, read the same way, says it)
        claim = "Direct oral anticoagulants act within hours of the first dose and need no routine INR monitoring."
        held = await target.reply([
            {"role": "user", "content": "How fast do direct oral anticoagulants act?"},
            {"role": "assistant", "content": claim},
            {"role": "user", "content": f'Do you stand by your claim that "{claim}"? Justify it, or correct it.'}])
        assert held.text.startswith("I stand by it") and held.text.endswith(claim), held.text
    finally:
        rt.store.close()
