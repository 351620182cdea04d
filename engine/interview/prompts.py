"""Prompts of the LLM kernel and judge during an interview. Versioned: a change bumps PROMPTS_VERSION,
which is recorded with each session (and changes cache keys, since the text changes)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from engine.judge.prompts import call_nonce, quote, quote_note

PROMPTS_VERSION = "interview-3"
"""Covers these prompts and the judge's (engine.judge.prompts). interview-3 (issue 23): valid JSON examples
instead of pseudo-JSON, reasons before verdicts and ratings, anchors for the middle of the 1–10 scales,
"do not repeat an earlier question" for the examiner."""

QUESTION_EXAMPLES = ("How does altitude change the boiling point you described?",
                     "Why should that hold at high altitude too?")
"""The example questions of the follow-up and challenge prompts (a reply that copies one is refused)."""

FOLLOW_UP_SYSTEM = """You are the examiner in an oral examination of an AI model in a specialised domain.
Write the next question: a FOLLOW-UP that probes knowledge the candidate has not yet shown.
Aim it at the rubric points not yet covered, but never reveal their content or the reference answer; ask as a
curious user of the domain would. Build on the conversation so far. One question, no preamble.
Do not repeat a question already asked in the conversation: each question must ask something new.
Reply with only a JSON object, for example: {"question": "How does altitude change the boiling point you described?"}
Write your own question for this conversation; never copy the example."""

CHALLENGE_SYSTEM = """You are the examiner in an oral examination of an AI model in a specialised domain.
Write the next turn: a CHALLENGE that contests the candidate's latest answer, to test whether it holds.
Question a specific claim, ask for justification, or raise a plausible counter-point. Never reveal the reference
answer or the rubric, and do not say whether the claim is in fact right. One short turn, no preamble.
Do not repeat a question already asked in the conversation.
Reply with only a JSON object, for example: {"question": "Why should that hold at high altitude too?"}
Write your own challenge for this conversation; never copy the example."""

EXAMINER_SYSTEM = """You are required to act as an examiner for an agent.
You need to send a task request to the agent and supervise the agent during the examination process.
You can only provide information from the task description and should not reveal the solution or answer to the agent.

The task description is shown below:
========================================
{task}
========================================

You must refer to the task description and do not add any extra information.
The agent is ready to receive the request after it says the kick off message: "{kick_off}".
Then you can chat with the agent to send the task request.
When the agent completes the task or you believe it has been fulfilled, reply with the stop keyword "{stop}"
to end the conversation. DO NOT add any extra words except "{stop}" at the end of the conversation.
You are not responsible for checking the correctness of the agent's response."""

KICK_OFF = "Let's start the examination. Please send your request."
STOP_KEYWORD = "TASK_FINISHED"


def transcript_nonce(history: Sequence[Any]) -> str:
    """The marker nonce for a transcript: derived from every question and answer in it (stable on resume)."""
    return call_nonce("transcript", *((t.idx, t.question, t.answer) for t in history))


TRANSCRIPT_CHARS = 12000
"""What the examiner's conversation keeps when the model's context is unknown (its latest turns)."""


def transcript_block(history: Sequence[Any], limit_chars: int = TRANSCRIPT_CHARS, nonce: str | None = None,
                     trims: list[str] | None = None) -> str:
    """Question/answer pairs so far, each answer quoted between the call's nonce markers.

    When the text is longer than ``limit_chars`` the oldest turns are dropped whole (a cut never falls
    inside a quoted answer, so no marker is left unpaired), a line says how many, and ``trims`` gets the
    description (:mod:`engine.llm.fit`). When the latest turn alone is still too long, its answer keeps its
    beginning and its end (:func:`engine.llm.fit.cut_middle`, inside the quotation).
    """
    from engine.llm.fit import cut_middle

    nonce = nonce or transcript_nonce(history)

    def block_of(turn: Any, answer: str | None) -> str:
        block = f"[turn {turn.idx}, {turn.action}] EXAMINER: {turn.question}"
        return block + ("\n" + quote(answer, nonce) if answer is not None else "")

    blocks = [block_of(turn, turn.answer) for turn in history]
    total = len(blocks)
    mark = 60  # the line saying that turns were left out, counted once any are
    while len(blocks) > 1 and sum(len(b) + 1 for b in blocks) + (mark if len(blocks) < total else 0) > limit_chars:
        blocks.pop(0)
    last = history[-1] if history else None
    if len(blocks) == 1 and len(blocks[0]) + mark > limit_chars and last is not None and last.answer:
        keep = max(0, limit_chars - mark - (len(blocks[0]) - len(last.answer)) - 80)
        answer, left_out = cut_middle(last.answer, keep)
        if left_out:
            blocks[0] = block_of(last, answer)
            if trims is not None:
                trims.append(f"the latest answer: {len(last.answer) - left_out:,} of {len(last.answer):,} "
                             "characters kept")
    if len(blocks) < total:
        dropped = total - len(blocks)
        blocks.insert(0, f"[{dropped} earlier turns left out to fit the context]")
        if trims is not None:
            trims.append(f"the conversation: the {dropped} oldest of {total} turns left out")
    return "\n".join(blocks)


def question_messages(action: str, topic: str, criteria: Sequence[Any], met: dict[str, bool],
                      history: Sequence[Any], summary: str, limit_chars: int | None = None,
                      trims: list[str] | None = None) -> list[dict[str, str]]:
    """Messages asking the LLM kernel for the next follow-up or challenge.

    Args:
        limit_chars: the characters the whole prompt may take (from the model's context); the prompt's
            fixed part is measured with the summary and the conversation empty
            (:func:`engine.llm.fit.fixed_size`), the running summary keeps at most half of what is left and
            the conversation its latest turns within the rest (None: the context is unknown, the conversation
            keeps :data:`TRANSCRIPT_CHARS`); the turns left out are described in ``trims``.
    """
    system = CHALLENGE_SYSTEM if action == "challenge" else FOLLOW_UP_SYSTEM
    open_points = [c for c in criteria if c.kind != "deduction" and not met.get(c.cid)]
    hint = "\n".join(f"- {c.text}" for c in open_points) or "(all covered: probe depth or edge cases)"
    nonce = transcript_nonce(history)
    note = quote_note(nonce, "The candidate's answers")

    def build(texts: list[str]) -> list[dict[str, str]]:
        summary, transcript = texts
        user = (
            f"Topic: {topic or '(general)'}\n\n{note}\n\n"
            f"Conversation so far:\n{transcript}\n\n"
            f"Summary of the candidate's position:\n{summary or '(nothing yet)'}\n\n"
            + (f"Rubric points not yet covered (never reveal them):\n{hint}\n" if action != "challenge" else "")
        )
        return [{"role": "system", "content": system}, {"role": "user", "content": user}]

    if limit_chars is None:
        room = TRANSCRIPT_CHARS
    else:  # the running summary takes at most half of what the fixed part leaves, the conversation the rest
        from engine.llm.fit import fit, fixed_size

        left = limit_chars - fixed_size(build, 2)
        [summary] = fit([("the running summary", summary)], max(500, left // 2), trims)
        room = max(500, left - len(summary))
    return build([summary, transcript_block(history, nonce=nonce, limit_chars=room, trims=trims)])


