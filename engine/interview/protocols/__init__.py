"""Protocols as strategies: one module per protocol behind :class:`~engine.interview.protocols.base.SessionProtocol`.

The runner looks a protocol up here by name; an unknown protocol, or one this version cannot run,
is refused with a clear error. An item is never run under another protocol than its own unless
the user asks for that protocol explicitly.
"""

from __future__ import annotations

from engine.interview.protocols.adaptive import Adaptive
from engine.interview.protocols.base import Ask, ProtocolContext, SessionProtocol, Steer
from engine.interview.protocols.graded import Graded
from engine.interview.protocols.rubric import Rubric
from engine.interview.protocols.task import Task
from engine.interview.session import SessionError

PROTOCOLS: dict[str, type[SessionProtocol]] = {p.name: p for p in (Adaptive, Task, Graded, Rubric)}
"""Protocols this version runs, by name."""

PLANNED: dict[str, str] = {}
"""Protocols items can be imported for but that do not run yet, with what they need."""

__all__ = ["PROTOCOLS", "PLANNED", "Ask", "ProtocolContext", "SessionProtocol", "Steer", "protocol_class",
           "protocol_for_item"]


def protocol_class(name: str) -> type[SessionProtocol]:
    """The protocol called ``name``; :class:`SessionError` naming what is available otherwise."""
    if name in PROTOCOLS:
        return PROTOCOLS[name]
    available = ", ".join(PROTOCOLS)
    if name in PLANNED:
        raise SessionError(f"protocol {name!r} does not run in this version of viva: it needs {PLANNED[name]} "
                           f"(available: {available}; pass --protocol adaptive to interview such items adaptively)")
    raise SessionError(f"unknown protocol {name!r} (available: {available})")


def protocol_for_item(item_protocol: str, requested: str | None) -> str:
    """The protocol a session of an item runs: the one asked for explicitly, else the item's own.

    An item whose own protocol does not run yet is refused (never silently run as another).
    """
    name = requested or item_protocol
    protocol_class(name)
    return name
