"""The interface every protocol implements; the runner drives it.

A protocol decides three things (DESIGN.md "Protocols"): what to ask next, how to judge and score
a turn, and when the session ends. The runner keeps everything else: the loop, asking the target
(streamed), checkpoints, controls, events and the session's lifecycle. Adding a protocol is adding
a module with one subclass of :class:`SessionProtocol` and registering it in ``protocols/__init__.py``.

(The base class was called ``Protocol``, which shadowed :class:`typing.Protocol`, the base of the
``Kernel``, ``Judge`` and ``Target`` interfaces the context is typed with.)
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar, Protocol

from engine.bench.model import Item
from engine.interview.session import CANNOT_JUDGE, Consumed, Session, Turn
from engine.llm import Usage
from engine.store import loads

if TYPE_CHECKING:
    import numpy as np

    from engine.interview.kernels import Kernel


class Policy(Protocol):
    """Chooses follow-up or challenge from a state vector (``engine.policy.policies``)."""

    version: str

    def choose(self, state: Any, rng: np.random.Generator) -> tuple[str, Any]:
        """(action, probabilities) for a state."""
        ...


class Embedder(Protocol):
    """Embeds texts as unit vectors (``engine.knowledge.embed``)."""

    def embed(self, texts: list[str]) -> np.ndarray:
        """One row per text."""
        ...


@dataclass
class Ask:
    """The next question a protocol wants asked, and what led to it."""

    question: str
    action: str
    actor: str
    state: list[float] | None = None
    probs: list[float] | None = None
    usage: Usage = field(default_factory=Usage)
    consumed: list[Consumed] = field(default_factory=list)


@dataclass
class Steer:
    """An evaluator's requests for the next question (from ``control.force`` / ``control.inject``).

    A protocol that honours one returns it in ``Ask.consumed`` (the runner acknowledges it with the
    turn) and clears it here.
    """

    forced: str | None = None
    forced_seq: int | None = None
    injected: str | None = None
    injected_seq: int | None = None


@dataclass
class ProtocolContext:
    """What a protocol may use: the session record, the kernel (and its judge), the policy, the
    embedder and the data home (for a task item's files)."""

    session: Session
    kernel: Kernel
    policy: Policy | None = None
    embedder: Embedder | None = None
    data_home: Path | None = None
    workdir: Path | None = None


class SessionProtocol(ABC):
    """One protocol's rules. Subclasses set ``name`` and implement the abstract methods."""

    name: ClassVar[str]
    scored_per_turn: ClassVar[bool] = True
    """True when every turn is judged as it ends (Δs defined); false when scoring happens once at the end."""

    def __init__(self, ctx: ProtocolContext):
        self.ctx = ctx
        self.session = ctx.session
        self.kernel = ctx.kernel

    # -- what the item must be ----------------------------------------------------------------------
    @classmethod
    def check_item(cls, item: Item, kernel_offline: bool) -> None:
        """Raise ``SessionError`` when this protocol cannot honestly run the item (default: it can)."""
        return None

    # -- scoring rule ---------------------------------------------------------------------------------
    @staticmethod
    @abstractmethod
    def score(criteria: Sequence[Any], met: Mapping[str, bool]) -> float:
        """A turn's score in [0, 1] from its effective verdicts."""

    def session_score(self, rows: list[Turn]) -> float | None:
        """The session's score from its turns (default: 100 × the last judged turn's score)."""
        from engine.interview.session import session_score

        return session_score(r.score for r in rows)

    # -- the loop's questions ---------------------------------------------------------------------------
    @abstractmethod
    def finished(self, rows: list[Turn]) -> bool:
        """True when no further question is due (e.g. the planned turns are done)."""

    @abstractmethod
    async def next_question(self, rows: list[Turn], steer: Steer) -> Ask | None:
        """The next question, or ``None`` when the session ends here."""

    def target_messages(self, rows: list[Turn], question: str) -> list[dict[str, str]]:
        """The conversation the target sees: earlier questions and answers, then the new question."""
        messages: list[dict[str, str]] = []
        for r in rows:
            if r.answer is None:
                continue
            messages.append({"role": "user", "content": r.question})
            messages.append({"role": "assistant", "content": r.answer})
        messages.append({"role": "user", "content": question})
        return messages

    @staticmethod
    def judged(row: Turn) -> bool:
        """Whether a turn needs no judging: it has a score, or its judgement could not be had ("cannot
        judge": recorded once, the turn left out of the figures, never asked of the judge again)."""
        return row.score is not None or loads(row.meta or "{}", {}).get("judge") == CANNOT_JUDGE

    async def judge_turn(self, turn: Turn, history: list[Turn]) -> None:
        """Judge and score a turn just answered (only called when ``scored_per_turn``)."""
        raise NotImplementedError(f"protocol {self.name} does not judge turn by turn")

    async def finish(self, rows: list[Turn]) -> None:
        """Score what is left once no question is due (default: nothing)."""
        return None

    @abstractmethod
    async def rescore(self, rows: list[Turn], version_id: int) -> None:
        """Re-judge stored answers under a rubric version (never re-asks the target)."""
