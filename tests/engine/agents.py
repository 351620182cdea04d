"""A Python adapter target for tests: ``python:tests.engine.agents:OxygenAgent``."""

from __future__ import annotations

from tests.engine.interview_fixtures import ANSWERS


class OxygenAgent:
    """Answers the t-th question with the t-th scripted answer; records that close() was called."""

    closed = 0

    def reply(self, messages):
        t = sum(1 for m in messages if m["role"] == "user") - 1
        return ANSWERS[t % len(ANSWERS)]

    def close(self):
        type(self).closed += 1
