"""Prompts sized to the model's context (issue 23): what does not fit is left out by one rule, said in the
prompt where it was left out, and noted.

The room is :meth:`engine.llm.LLMClient.prompt_chars`: the model's context (reported by the server, the
endpoint's ``context:``, or learned from the server's overflow answer) less the reply's ``max_tokens``, at :data:`CHARS_PER_TOKEN`
characters a token, less what the caller reserves for the repairs. A text's size in those characters is
:func:`size`: its length, a CJK character counted as a whole token (:data:`CJK_CHARS`). A prompt's fixed parts (instructions,
rubric, scoring point, schema) always go; its variable texts share the rest by **equal shares**
(:func:`shares`): each keeps at most a cap, the largest for which all fit, so a short text is never cut and
the longest are cut first. A cut text says so in place (:data:`LEFT_OUT`):

- a long text that is read as a whole (an answer, a task transcript, a running summary, a reference, a
  question) keeps its beginning and its end, its middle left out (:func:`cut_middle`);
- an ordered background (a knowledge path's chunks) keeps its beginning, its end left out (:func:`cut_end`);
- a conversation drops its oldest turns whole: the examiner's transcript
  (``engine.interview.prompts.transcript_block``), the target's own conversation and the task examiner's chat
  (:func:`fit_conversation`: never its system prompt or the message now answered).

Each cut is described in words ("the answer: 1,200 of 9,000 characters kept") for the caller to note
(:meth:`engine.llm.LLMClient.note_trimmed`: a ``session.note`` ``prompt-trimmed``), so a verdict on a cut
answer is never silently a verdict on the whole one. With the context unknown nothing is cut; the overflow,
if any, is the server's 400, and when it names the context (llama.cpp's, OpenAI's, vLLM's wordings:
:func:`engine.llm.client.context_in_message`) the client learns it for the process (a ``session.note``
``context-learned``) and the prompt is built again to it and sent once more
(:meth:`engine.llm.LLMClient.fitted`, the one place every caller builds, notes and sends a sized prompt).
A message with no size, or a second overflow, is the :class:`~engine.llm.ContextOverflowError`.

A prompt builder never guesses its fixed part: :func:`fixed_size` measures it by building the prompt with
every variable part empty, and :func:`fit_prompt` cuts the variable texts to the room that leaves (a text
the prompt quotes twice costs twice), then checks the built prompt against the room and tightens once more
where a part that shows only when its text is not empty (a heading) still overflows.

A JSON call's repair (:meth:`engine.llm.LLMClient.fitted_json`) is sized the same way: its schema and problem
counted by :func:`json_size` (JSON runs nearer :data:`JSON_CHARS_PER_TOKEN` characters a token), the schema's
text left out where the server's grammar holds the reply to it, the problem cut in its middle, then the prompt
built again with its texts cut by these rules (:func:`engine.llm.structured.repair_message`); a repair that
cannot fit even so is not sent.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence

from engine.text.cjk import CJK_WIDE

CHARS_PER_TOKEN = 3
"""Characters per token assumed when a prompt is sized against a context (below English's ~4: safe)."""
LEFT_OUT = "[… {n:,} characters left out to fit the model's context …]"
"""What stands in a cut text where its part was left out."""
MARK_CHARS = 80
"""Room kept per text for its :data:`LEFT_OUT` mark and the newlines around it."""
MIN_KEEP = 200
"""No text is cut below this many characters (a prompt that needs less is then the server's overflow)."""
CJK_CHARS = 3
"""What one CJK character counts in :func:`size`: one token at :data:`CHARS_PER_TOKEN`
characters a token (Qwen's and GPT-4's tokenizers spend about one token a Chinese character or less; an
English-only byte-level tokenizer spends more, and such a prompt may still be the server's overflow)."""
_CJK_RE = re.compile(f"[{CJK_WIDE}]")


JSON_CHARS_PER_TOKEN = 2
"""Characters per token assumed for JSON and other punctuation-heavy text (a JSON schema, a validation error,
a bad reply): each brace, quote, colon and comma is often a token of its own (the fake server's count gives
2.4 characters a token on the judge's schema, SmolLM2's tokenizer 2.3 on the ratings' schema), against the
:data:`CHARS_PER_TOKEN` assumed for prose."""
MESSAGE_CHARS = 30
"""What a chat message adds to a prompt beyond its content, in prompt characters (its role and the chat
template's markers: about five tokens in ChatML, ``<|im_start|>user\n … <|im_end|>\n``, with room)."""


def json_size(text: str) -> int:
    """A JSON (punctuation-heavy) text's size in prompt characters: :func:`size` scaled from
    :data:`JSON_CHARS_PER_TOKEN` to the prose rate, so that it counts what the text costs in tokens."""
    return -(-size(text) * CHARS_PER_TOKEN // JSON_CHARS_PER_TOKEN)


def prompt_size(messages: Sequence[dict[str, str]]) -> int:
    """A chat prompt's size in prompt characters: each message's :func:`size` and :data:`MESSAGE_CHARS`."""
    return sum(size(m.get("content") or "") + MESSAGE_CHARS for m in messages)


def size(text: str) -> int:
    """A text's size in prompt characters: its length, each CJK character (Chinese, Japanese, Korean, full-width
    forms) counted :data:`CJK_CHARS` times, since a model spends about a token on each where it spends one on
    about three English characters."""
    return len(text) + (CJK_CHARS - 1) * len(_CJK_RE.findall(text))


def shares(lengths: Sequence[int], room: int) -> list[int]:
    """How many characters each text keeps: all of it when they fit in ``room``; else each keeps
    ``min(length, cap)`` with the largest ``cap`` for which the kept lengths fit (equal shares: the short
    ones whole, the long ones cut to the same length), never below :data:`MIN_KEEP` (or the text's length)."""
    lengths = [max(0, int(n)) for n in lengths]
    if sum(lengths) <= room:
        return lengths
    left, rest = max(0, room), len(lengths)
    cap = 0
    for n in sorted(lengths):
        each = left // rest
        if n > each:
            cap = each
            break
        left -= n
        rest -= 1
    return [min(n, max(cap, MIN_KEEP)) for n in lengths]


def cut_middle(text: str, keep: int) -> tuple[str, int]:
    """``text`` in at most about ``keep`` characters: its beginning and its end, the middle replaced by
    :data:`LEFT_OUT`; returns (text, characters left out)."""
    if len(text) <= keep:
        return text, 0
    keep = max(keep, MIN_KEEP)
    left_out = len(text) - keep
    head = keep // 2
    tail = keep - head
    return f"{text[:head]}\n{LEFT_OUT.format(n=left_out)}\n{text[len(text) - tail:]}", left_out


def cut_end(text: str, keep: int) -> tuple[str, int]:
    """``text`` in at most about ``keep`` characters: its beginning, the end replaced by :data:`LEFT_OUT`;
    returns (text, characters left out)."""
    if len(text) <= keep:
        return text, 0
    keep = max(keep, MIN_KEEP)
    return f"{text[:keep]}\n{LEFT_OUT.format(n=len(text) - keep)}", len(text) - keep


def fit(texts: Sequence[tuple[str, str]], room: int | None, trims: list[str] | None = None,
        end: Sequence[str] = ()) -> list[str]:
    """The variable texts of one prompt, ``(name, text)`` pairs, cut to share ``room`` characters
    (:func:`shares` of their :func:`size`; None: the context is unknown, nothing is cut). A text named in
    ``end`` loses its end (:func:`cut_end`), any other its middle (:func:`cut_middle`), keeping the characters
    of its share (fewer than the share when it holds CJK text). Each cut is described in ``trims``."""
    if room is None:
        return [t for _, t in texts]
    sizes = [size(t) for _, t in texts]
    caps = shares(sizes, room - MARK_CHARS * len(texts))
    out = []
    for (name, text), n, cap in zip(texts, sizes, caps, strict=True):
        keep = len(text) if cap >= n else cap * len(text) // max(1, n)
        cut, left_out = (cut_end if name in end else cut_middle)(text, keep)
        if left_out and trims is not None:
            trims.append(f"{name}: {len(text) - left_out:,} of {len(text):,} characters kept")
        out.append(cut)
    return out


def fixed_size(build: Callable[[list[str]], Sequence[dict[str, str]]], n: int) -> int:
    """The fixed part of a prompt (instructions, rubric, headings, markers, the messages' own cost) in prompt
    characters: :func:`prompt_size` of ``build`` called with its ``n`` variable texts all empty."""
    return prompt_size(build([""] * n))


def fit_prompt(build: Callable[[list[str]], Sequence[dict[str, str]]], texts: Sequence[tuple[str, str]],
               room: int | None, trims: list[str] | None = None, end: Sequence[str] = ()) -> list[str]:
    """The variable texts of the prompt ``build(texts)``, ``(name, text)`` pairs, cut so that the whole
    prompt takes at most ``room`` prompt characters (:func:`prompt_size`; None: the context is unknown,
    nothing is cut); returns the texts to build it with.

    The fixed part is measured (:func:`fixed_size`), never guessed; the texts share what it leaves
    (:func:`fit`: equal shares, ``end`` naming the texts that lose their end), divided by how many times the
    prompt holds each character of them (a template that quotes an answer twice). The prompt built with the
    cut texts is measured again and the share made smaller by what it still overflows (at most three times:
    what is left is the server's overflow). Each cut is described in ``trims``."""
    whole = [t for _, t in texts]
    if room is None or prompt_size(build(whole)) <= room:
        return whole
    fixed = fixed_size(build, len(whole))
    times = max(1.0, (prompt_size(build(whole)) - fixed) / max(1, sum(size(t) for t in whole)))
    share = int((room - fixed) / times)
    for _ in range(4):
        cuts: list[str] = []
        kept = fit(texts, share, cuts, end)
        over = prompt_size(build(kept)) - room
        if over <= 0:
            break
        share -= int(over / times) + 1
    if trims is not None:
        trims.extend(cuts)
    return kept


EARLIER_LEFT_OUT = "[{n} earlier turn(s) of this conversation left out to fit the model's context]"
"""What opens a conversation whose oldest turns were dropped (:func:`fit_conversation`)."""


def fit_conversation(messages: Sequence[dict[str, str]], room: int | None,
                     trims: list[str] | None = None) -> list[dict[str, str]]:
    """A chat conversation in at most ``room`` prompt characters (:func:`size`; None: unknown, nothing is
    dropped): its system messages and its last message (the question now asked) always go; the earlier
    turns (a user message and the replies after it) are dropped whole, oldest first, until the rest fits.
    The first message kept after the system messages then opens with :data:`EARLIER_LEFT_OUT` (so the
    roles still alternate), and ``trims`` says how many turns were left out. When even the system messages
    and the last message do not fit, every earlier turn is dropped (the overflow is then the server's)."""
    messages = [dict(m) for m in messages]
    if room is None or not messages or sum(size(m.get("content") or "") for m in messages) <= room:
        return messages
    head = 0
    while head < len(messages) - 1 and messages[head].get("role") == "system":
        head += 1
    system, middle, last = messages[:head], messages[head:-1], messages[-1]
    turns: list[list[dict[str, str]]] = []
    for m in middle:
        if m.get("role") == "user" or not turns:
            turns.append([m])
        else:
            turns[-1].append(m)
    total = len(turns)
    mark = len(EARLIER_LEFT_OUT) + 10

    def used() -> int:
        return sum(size(m.get("content") or "") for m in [*system, *(m for t in turns for m in t), last]) + mark

    while turns and used() > room:
        turns.pop(0)
    dropped = total - len(turns)
    if not dropped:
        return messages
    kept = [m for t in turns for m in t] + [last]
    first = kept[0]
    note = EARLIER_LEFT_OUT.format(n=dropped)
    kept[0] = {**first, "content": f"{note}\n\n{first.get('content') or ''}"}
    if trims is not None:
        trims.append(f"the conversation: the {dropped} oldest of {total} earlier turn(s) left out")
    return [*system, *kept]
