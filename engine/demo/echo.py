"""The demo's weak reference target: an agent that only echoes the question.

``python:engine.demo.echo:EchoAgent`` answers every question with the question itself, word for word.
It knows nothing, so every figure it earns measures the examiner, not the examinee: the offline
judge discounts the words of the questions (echoing a question proves nothing), so on a sound
benchmark and judge it scores 0 and its challenges move nothing. The demo runs it next to the
reference target (the knowledge base's own sentences) and the local model to show that the
figures separate a target that knows from one that does not.
"""

from __future__ import annotations

SPEC = "python:engine.demo.echo:EchoAgent"
"""The target spec of the echo agent."""


class EchoAgent:
    """``reply(messages)``: the latest user message, unchanged ("" when there is none)."""

    def reply(self, messages: list[dict[str, str]]) -> str:
        """The latest user message, as the answer."""
        return next((m.get("content") or "" for m in reversed(messages) if m.get("role") == "user"), "")
