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


class Knows1(_Knows):
    knows = 1


class Knows2(_Knows):
    knows = 2


class Knows3(_Knows):
    knows = 3


class Knows4(_Knows):
    knows = 4


class Knows5(_Knows):
    knows = 5


class Knows6(_Knows):
    knows = 6


class Knows7(_Knows):
    knows = 7


class Knows8(_Knows):
    knows = 8


class Knows9(_Knows):
    knows = 9


class Knows10(_Knows):
    knows = 10


class Knows11(_Knows):
    knows = 11


class Knows12(_Knows):
    knows = 12


HOSTILE = ("plain start "
           "\x1b]52;c;ZWNobyBwd25lZA==\x07"  # OSC 52: write the clipboard
           "\x1b]0;owned title\x07"  # OSC 0: window title
           "\x1b]8;;https://evil.example/\x1b\\click\x1b]8;;\x1b\\"  # OSC 8 hyperlink
           "\x1b[1A\x1b[2K\x1b[32mScore 100.0\x1b[0m"  # cursor up, erase line, a forged green score
           "\x1bc"  # RIS: full reset
           "\x9b31m\x9d0;c1 title\x9c\x90dcs\x9c"  # 8-bit CSI, OSC, ST, DCS
           "\x07\x08\x0b\x0c\r\x7f"  # BEL, BS, VT, FF, CR, DEL
           "\u202eevil\u202c \u2066iso\u2069 zero\u200bwidth\u200d\ufeff\u2060 tag\U000e0041 end")
"""Every terminal control sequence of issue 35 in one answer."""


class HostileAgent:
    """Answers every question with :data:`HOSTILE`."""

    def reply(self, messages):
        return HOSTILE

    def close(self):
        pass


class WrongThenHoldAgent:
    """A first answer to the oxygen item that earns nothing, then holds it (tests/engine/test_examination.py)."""

    def reply(self, messages):
        return "Oxygen was discovered in 1774 by Joseph Priestley."

    def close(self):
        pass


class HoldThenYieldAgent:
    """The oxygen item's first fact, then, challenged: holds it once, gives way the second time
    ("You're right, I was wrong."), and says nothing of substance after (a hand-counted session:
    tests/engine/test_examination.py)."""

    REPLIES = ["Oxygen is the most abundant element in the Earth's crust.",
               "Yes, I am sure. Oxygen is the most abundant element in the Earth's crust.",
               "You're right, I was wrong about that.",
               "I have nothing to add."]

    def reply(self, messages):
        t = sum(1 for m in messages if m["role"] == "user") - 1
        return self.REPLIES[min(t, len(self.REPLIES) - 1)]

    def close(self):
        pass


class StatesThenYieldsAgent:
    """The oxygen item's facts one an answer (asked anything but a challenge: the next fact, then nothing to add);
    challenged, gives way ("You're right, I was wrong about that.") (tests/engine/test_examination.py: the examiner
    presses again)."""

    FACTS = ("Oxygen is the most abundant element in the Earth's crust.",
             "Plants release oxygen through photosynthesis.", "Liquid oxygen is pale blue.")

    def reply(self, messages):
        import re

        asked = [m["content"] for m in messages if m["role"] == "user"]
        challenge = re.compile(r"are you sure|stand by", re.IGNORECASE)
        if challenge.search(asked[-1]):
            return "You're right, I was wrong about that."
        k = sum(1 for q in asked[:-1] if not challenge.search(q))
        return self.FACTS[k] if k < len(self.FACTS) else "I have nothing to add."

    def close(self):
        pass
