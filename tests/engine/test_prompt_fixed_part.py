"""Prompt builders measure their fixed part (issue 38, :func:`engine.llm.fit.fit_prompt`): each builds its prompt
with the variable parts empty instead of guessing the fixed part with padding (+300, +200, a 12,000 cap, a
3,000 reserve), so a long variable part keeps more of its text in the same context, and the prompt still fits.

For each builder a long variable text goes through :meth:`engine.llm.LLMClient.fitted` to the fake
OpenAI-compatible server, which enforces a 2,500-token context by its own token count; what the request kept of
the text is counted by its numbered sentences. ``BEFORE`` holds the same figures measured at b743aff (run this
module as a script in that tree: ``python tests/engine/test_prompt_fixed_part.py``, with the fake server); the
test asserts that each builder now keeps more, and that every request fitted the context.
"""

from __future__ import annotations

import asyncio
import json
import re
from types import SimpleNamespace

from engine.config import Budgets, ModelConfig
from engine.llm import LLMClient, structured
from engine.llm.fit import MESSAGE_CHARS
from engine.store import Store
from tests.fakes.openai_server import count_tokens

CONTEXT = 2500
LARGE = 8000
"""A context large enough that the examiner's conversation could take more than 12,000 characters."""
RESERVE = 1500
"""What every call keeps free for its repairs here (the same before and after, so only the builders differ)."""


def long_text(tag: str, n: int = 400) -> str:
    """``n`` numbered sentences (about 40 characters each) whose kept part :func:`kept_of` counts."""
    return " ".join(f"{tag} sentence {i} says oxygen is abundant." for i in range(n))


def kept_of(tag: str, sent: str) -> int:
    """How many characters of :func:`long_text` ``tag`` a prompt kept: its whole sentences found in it."""
    return sum(len(m.group(0)) + 1 for m in re.finditer(rf"{tag}\d* sentence \d+ says oxygen is abundant\.", sent))


CRITERIA = [SimpleNamespace(cid=f"c{i}", kind="key", weight=1.0, text=f"States fact {i} about oxygen.")
            for i in range(1, 5)]


def _measured():
    """(builder name, variable text's tag, build(room, trims)) for each prompt builder, the long text in it
    (the ratings and the extension question are measured through their call sites, :func:`_kept`)."""
    from engine.interview import prompts as interview_prompts
    from engine.judge import prompts
    from engine.judge.feedback import FeedbackRecord, build_feedback_prompt
    from engine.judge.gold_llm import gold_messages
    from engine.judge.rubric_judge import build_judge_prompt
    answer = long_text("Answer")
    history = [SimpleNamespace(idx=i, action="follow-up", question=f"What else about oxygen? ({i})",
                               answer=" ".join(f"Turn sentence {i * 10 + j} says oxygen is abundant."
                                               for j in range(10))) for i in range(40)]
    records = [FeedbackRecord(question=f"Question {i} about oxygen?", answer="oxygen", response=long_text(f"Reply{i}"),
                              correct=bool(i % 2), difficulty="easy") for i in (1, 2)]
    item = SimpleNamespace(question="What do you know about oxygen?", turns=[], reference="Oxygen is abundant.",
                           meta={})
    return [
        ("judge (judge_messages)", "Answer", lambda room, trims: prompts.judge_messages(
            "What do you know about oxygen?", CRITERIA, "", answer, "Oxygen is abundant.", "n0nce",
            limit_chars=room, trims=trims)),
        ("scoring point (point_judge_messages)", "Answer", lambda room, trims: prompts.point_judge_messages(
            "Write the file.", "The agent names the file.", answer, "n0nce", limit_chars=room, trims=trims)),
        ("feedback (build_feedback_prompt)", "Reply", lambda room, trims: build_feedback_prompt(
            records, nonce="n0nce", limit_chars=room, trims=trims)),
        ("gold judge (gold_messages)", "Answer", lambda room, trims: gold_messages(
            "What do you know about oxygen?", ["oxygen", "O2"], answer, limit_chars=room, trims=trims)),
        ("rubric judge (build_judge_prompt)", "Answer", lambda room, trims: build_judge_prompt(
            item, answer, CRITERIA, nonce="n0nce", limit_chars=room, trims=trims).messages),
        ("examiner question (question_messages)", "Turn", lambda room, trims: interview_prompts.question_messages(
            "follow-up", "oxygen", CRITERIA, {}, history, "", limit_chars=room, trims=trims)),
    ]


async def _kept(home, endpoint: ModelConfig, fake) -> dict[str, int]:
    """What each builder kept of its long text in a request the fake server took (``fake`` enforces the
    context and answers)."""
    from engine.interview.kernels import LLMKernel

    store = Store(home / "viva.db")
    client = LLMClient(store, endpoint, "judge", max_tokens=150)
    out: dict[str, int] = {}
    fake.default = "Noted."
    for name, tag, build in _measured():
        before = len(fake.chat_requests())
        await client.fitted(build, lambda messages: client.chat(messages, purpose="judge"), call=name,
                            reserve_chars=RESERVE)
        [request] = fake.chat_requests()[before:]  # taken at once: no overflow, no second build
        out[name] = kept_of(tag, "\n".join(m["content"] for m in request.messages))
    # the ratings through their call site (b743aff's kept the transcript within the room less a 3,000 reserve)
    from engine.judge.llm import LLMJudge

    fake.default = json.dumps({"accuracy": 8, "user_satisfaction": 7, "clarity": 9, "coherence": 6,
                               "question_handling": 8, "challenge_handling": 5, "rationale": "Mostly right."})
    turns = [(f"What else about oxygen? ({i})", " ".join(f"Rated sentence {i * 10 + j} says oxygen is abundant."
                                                         for j in range(10))) for i in range(40)]
    before = len(fake.chat_requests())
    await LLMJudge(client).rate(turns, topic="oxygen")
    [request] = fake.chat_requests()[before:]
    out["ratings (build_rating_prompt)"] = kept_of("Rated", "\n".join(m["content"] for m in request.messages))
    # the examiner in a larger context, where b743aff's 12,000-character cap on the conversation bit
    from engine.interview import prompts as interview_prompts

    fake.context = LARGE
    wide = LLMClient(store, endpoint.model_copy(update={"context": LARGE}), "kernel", max_tokens=150)
    history = [SimpleNamespace(idx=i, action="follow-up", question=f"What else about oxygen? ({i})",
                               answer=" ".join(f"Wide sentence {i * 10 + j} says oxygen is abundant."
                                               for j in range(10))) for i in range(80)]
    fake.default = "Noted."
    before = len(fake.chat_requests())
    await wide.fitted(lambda room, trims: interview_prompts.question_messages(
        "follow-up", "oxygen", CRITERIA, {}, history, "", limit_chars=room, trims=trims),
        lambda messages: wide.chat(messages, purpose="follow-up question"), call="question", reserve_chars=RESERVE)
    [request] = fake.chat_requests()[before:]
    out[f"examiner question (question_messages), {LARGE:,}-token context"] = kept_of(
        "Wide", "\n".join(m["content"] for m in request.messages))
    fake.context = CONTEXT
    kernel = LLMKernel(store, endpoint, budgets=Budgets(kernel=150, judge=150, ratings=150))
    fake.default = json.dumps({"question": "Which element is most abundant in the crust?", "answer": "oxygen"})
    before = len(fake.chat_requests())
    await kernel.extension_question("easy", long_text("Background"), seed=1)
    [request] = fake.chat_requests()[before:]
    out["extension question (LLMKernel.extension_question)"] = kept_of(
        "Background", "\n".join(m["content"] for m in request.messages))
    store.close()
    return out


BEFORE = {
    "judge (judge_messages)": 2793,
    "scoring point (point_judge_messages)": 4306,
    "feedback (build_feedback_prompt)": 3094,
    "gold judge (gold_messages)": 3683,
    "rubric judge (build_judge_prompt)": 4217,
    "examiner question (question_messages)": 3010,
    "ratings (build_rating_prompt)": 3212,
    f"examiner question (question_messages), {LARGE:,}-token context": 9030,
    "extension question (LLMKernel.extension_question)": 5329,
}
"""Characters of the long text each builder kept at b743aff (its padding), in the same context."""
NOW = {
    "judge (judge_messages)": 2882,
    "scoring point (point_judge_messages)": 4395,
    "feedback (build_feedback_prompt)": 3184,
    "gold judge (gold_messages)": 3950,
    "rubric judge (build_judge_prompt)": 4172,
    "examiner question (question_messages)": 3010,
    "ratings (build_rating_prompt)": 3564,
    f"examiner question (question_messages), {LARGE:,}-token context": 15480,
    "extension question (LLMKernel.extension_question)": 5329,
}
"""The same figures now. Three do not grow: the examiner's conversation drops whole turns (about 430
characters each here) and its padding was within one turn of the measured fixed part; the extension's
guess (+100) was 18 characters above the measured part, less than one counted sentence; the rubric judge
measured its prompt already (its own copy, now :func:`engine.llm.fit.fit_prompt`) and now counts each
message's template markers too (:data:`engine.llm.fit.MESSAGE_CHARS`, as the repairs do), 45 characters."""


def _small(fake, endpoint: ModelConfig) -> ModelConfig:
    fake.context, fake.report_context = CONTEXT, False
    return endpoint.model_copy(update={"context": CONTEXT})


async def test_each_prompt_builder_keeps_more_of_its_variable_text(home, endpoint, fake_openai):
    structured.forget_all()
    kept = await _kept(home, _small(fake_openai, endpoint), fake_openai)
    for r in fake_openai.chat_requests():  # every prompt fitted the server's context as it counts tokens
        tokens = sum(count_tokens(str(m.get("content", ""))) for m in r.body["messages"])
        assert tokens + int(r.body.get("max_tokens") or 0) <= (LARGE if "Wide sentence" in r.text else CONTEXT)
    assert kept == NOW
    for name, was in BEFORE.items():
        if name in ("examiner question (question_messages)", "rubric judge (build_judge_prompt)",
                    "extension question (LLMKernel.extension_question)"):  # see NOW
            assert kept[name] >= was - 2 * MESSAGE_CHARS, name
        else:
            assert kept[name] > was, name


if __name__ == "__main__":  # the figures of this tree (BEFORE: run at b743aff)
    import tempfile
    from pathlib import Path

    from tests.fakes.openai_server import FakeOpenAI

    with FakeOpenAI() as server, tempfile.TemporaryDirectory() as tmp:
        config = ModelConfig(base_url=server.base_url, model="fake-model", timeout=5.0, max_retries=3)
        for name, n in asyncio.run(_kept(Path(tmp), _small(server, config), server)).items():
            print(f"{name}: {n:,} characters kept")
