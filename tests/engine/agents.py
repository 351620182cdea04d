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


class _Knows:
    """Answers the multiple-choice question "Question N: ..." of ``tests/engine/test_bench_calibrate.py``
    right when N < ``knows`` (so a higher ``knows`` is a more able target), else with a wrong option."""

    knows = 0

    def reply(self, messages):
        import re

        asked = next(m["content"] for m in reversed(messages) if m["role"] == "user")
        found = re.search(r"Question (\d+):", asked)
        n = int(found.group(1)) if found else 99
        return f"The answer is right-{n}." if n < self.knows else f"The answer is wrong-{n}."

    def close(self):
        pass


class Knows3(_Knows):
    knows = 3


class Knows6(_Knows):
    knows = 6


class Knows9(_Knows):
    knows = 9


class Knows12(_Knows):
    knows = 12
