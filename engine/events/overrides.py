"""The rule of human overrides over a session's turns: an override is a fact about the criterion from
its turn on.

A turn's verdict on a criterion says whether the running summary *so far* covers it, so a human who
marks c1 met on turn 0 has said something about every later turn too: what was covered stays
covered. The rule (per criterion, over the turns in order that score with the same rubric version):

1. a turn with a human verdict on the criterion takes the human's latest one;
2. a later turn without one keeps the human's verdict (it is *carried*) as long as the judge's verdict
   on that turn is the same as the judge's verdict on the overridden turn: the judge has not changed
   its mind since the human corrected it;
3. when the judge's verdict differs from that (a later judgement) or another rubric version is in
   force, the carried verdict ends and the judge's verdict counts again, until the next override.

This module holds the rule alone, on verdicts in memory: the fold of a session's events
(:class:`engine.events.fold.SessionView`) shows a newly judged turn's checklist with it, and
:mod:`engine.metrics.overrides` recomputes the stored scores with it. It sits with the events (the
lowest of its users) so that neither imports the other's layer.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field


@dataclass
class TurnVerdicts:
    """One turn's verdicts as stored: the judge's latest per criterion and the human's latest."""

    idx: int
    version: int | None
    judge: dict[str, bool] = field(default_factory=dict)
    human: dict[str, bool] = field(default_factory=dict)


@dataclass
class Effective:
    """A turn's effective verdicts and which of them a human gave on an earlier turn."""

    idx: int
    met: dict[str, bool]
    carried: dict[str, int]
    """criterion id -> the turn whose override it carries."""


def effective_verdicts_by_turn(turns: Sequence[TurnVerdicts]) -> list[Effective]:
    """The effective verdicts of every turn under the rule of this module (turns in order)."""
    out: list[Effective] = []
    # cid -> (human verdict, judge's verdict on the overridden turn, overridden turn, version)
    carried: dict[str, tuple[bool, bool | None, int, int | None]] = {}
    for t in turns:
        met: dict[str, bool] = {}
        from_turn: dict[str, int] = {}
        for cid in dict.fromkeys([*t.judge, *t.human, *carried]):
            judge = t.judge.get(cid)
            if cid in t.human:
                met[cid] = t.human[cid]
                carried[cid] = (t.human[cid], judge, t.idx, t.version)
                continue
            held = carried.get(cid)
            if held is not None and held[3] == t.version and judge == held[1]:
                met[cid] = held[0]
                if held[0] != bool(judge):
                    from_turn[cid] = held[2]
                continue
            carried.pop(cid, None)
            if judge is not None:
                met[cid] = judge
        out.append(Effective(t.idx, met, from_turn))
    return out
