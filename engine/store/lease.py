"""Single ownership of runs and sessions: a lease (owner pid, host, heartbeat) in the database.

Whoever drives a run or a session holds its lease and refreshes the heartbeat while it works. A
second process that wants to drive the same run or session is refused while the owner is alive,
and takes the lease over once it is stale. The rule, in :func:`owner_alive`:

- an owner on **this host** is alive when its process exists *and* its heartbeat is fresh (younger
  than ``stale_after`` seconds: a reused pid, or a hung process, does not hold a lease forever);
  a dead pid frees the lease at once, with no wait;
- an owner on **another host** (a shared data home) is alive while its heartbeat is fresh.

Every lease taken by one :class:`Leases` object carries its random token; a heartbeat or a release
touches only rows with that token, so a process whose lease was taken over finds out at its next
heartbeat (:class:`LeaseLostError`) and writes nothing more.
"""

from __future__ import annotations

import os
import secrets
import socket
import time
from collections.abc import Iterable
from dataclasses import dataclass

from engine.store.db import Store, StoreError

HEARTBEAT_SECONDS = 2.0
"""How often a holder refreshes its leases."""

STALE_SECONDS = 30.0
"""A heartbeat older than this frees the lease (for a live pid on this host too)."""

RUN, SESSION = "run", "session"
SCOPES = (RUN, SESSION)


def this_host() -> str:
    """The name this machine records as a lease's host."""
    return socket.gethostname()


def pid_alive(pid: int | None) -> bool:
    """Whether a process with this id exists on this host (one we may not signal counts as alive)."""
    if not pid or pid <= 0:
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


@dataclass(frozen=True)
class LeaseOwner:
    """The holder of a lease as stored: what it owns, who it is, and when it last showed life."""

    scope: str
    ident: int
    pid: int
    host: str
    token: str
    acquired_at: float
    heartbeat_at: float

    def describe(self, now: float | None = None) -> str:
        """``pid 1234 on host h (last heartbeat 1.2 s ago)``: the owner, for an error message."""
        age = max(0.0, (time.time() if now is None else now) - self.heartbeat_at)
        return f"pid {self.pid} on host {self.host} (last heartbeat {age:.1f} s ago)"


def owner_alive(owner: LeaseOwner, now: float | None = None, stale_after: float = STALE_SECONDS,
                host: str | None = None) -> bool:
    """The liveness rule of the module docstring."""
    now = time.time() if now is None else now
    fresh = now - owner.heartbeat_at <= stale_after
    if owner.host == (host or this_host()):
        return fresh and pid_alive(owner.pid)
    return fresh


class LeaseHeldError(StoreError):
    """Another live process owns the run or session; the message names it and says what to do."""

    def __init__(self, owner: LeaseOwner, stale_after: float = STALE_SECONDS):
        self.owner = owner
        what = f"{owner.scope} {owner.ident}"
        resume = f"run:{owner.ident}" if owner.scope == RUN else str(owner.ident)
        super().__init__(
            f"{what} is being run by {owner.describe()}; wait for it to end or stop that process "
            f"(its lease is taken over once the process is gone, or {stale_after:.0f} s after its last "
            f"heartbeat), then `viva resume {resume}`")


class LeaseLostError(Exception):
    """A lease this process held was taken over (its heartbeat went stale): stop writing."""


def lease_owner(store: Store, scope: str, ident: int) -> LeaseOwner | None:
    """The stored holder of a run's or session's lease (alive or not), or None."""
    row = store.conn.execute(
        "SELECT scope, ident, pid, host, token, acquired_at, heartbeat_at FROM leases WHERE scope = ? AND ident = ?",
        (scope, int(ident))).fetchone()
    return LeaseOwner(*row) if row else None


class Leases:
    """The leases one owner (one token: a process, or one driver inside it) holds.

    Args:
        store: the database connection this owner writes with.
        stale_after: the heartbeat age after which another owner's lease is taken over.
    """

    def __init__(self, store: Store, stale_after: float = STALE_SECONDS):
        self.store = store
        self.stale_after = stale_after
        self.token = secrets.token_hex(8)
        self.pid = os.getpid()
        self.host = this_host()
        self.held: set[tuple[str, int]] = set()
        self.taken_over: list[LeaseOwner] = []
        """Stale leases this owner took over (whose previous holder was gone)."""

    def holds(self, scope: str, ident: int) -> bool:
        """Whether this owner holds the lease (as far as it knows; :meth:`beat` checks the database)."""
        return (scope, int(ident)) in self.held

    def acquire(self, scope: str, ids: Iterable[int]) -> None:
        """Take the leases of ``ids`` in ``scope``, all or none, in one write transaction.

        A lease held by a live owner (:func:`owner_alive`) refuses the whole set; a stale one is taken
        over (recorded in :attr:`taken_over`).

        Raises:
            LeaseHeldError: naming the live owner of the first lease that is held.
        """
        if scope not in SCOPES:
            raise ValueError(f"unknown lease scope {scope!r}")
        wanted = [int(i) for i in dict.fromkeys(ids)]
        now = time.time()
        conn = self.store.conn
        with self.store.transaction():
            taken: list[LeaseOwner] = []
            for ident in wanted:
                owner = lease_owner(self.store, scope, ident)
                if owner is not None and owner.token != self.token:
                    if owner_alive(owner, now, self.stale_after, self.host):
                        raise LeaseHeldError(owner, self.stale_after)
                    taken.append(owner)
                conn.execute(
                    "INSERT INTO leases (scope, ident, pid, host, token, acquired_at, heartbeat_at) "
                    "VALUES (?, ?, ?, ?, ?, ?, ?) ON CONFLICT (scope, ident) DO UPDATE SET pid = excluded.pid, "
                    "host = excluded.host, token = excluded.token, acquired_at = excluded.acquired_at, "
                    "heartbeat_at = excluded.heartbeat_at",
                    (scope, ident, self.pid, self.host, self.token, now, now))
        self.held.update((scope, i) for i in wanted)
        self.taken_over.extend(taken)

    def beat(self, scope: str | None = None, ident: int | None = None) -> None:
        """Refresh the heartbeat of every held lease (or of one).

        Raises:
            LeaseLostError: a lease is no longer this owner's (it is dropped from :attr:`held`).
        """
        if scope is None:
            targets = sorted(self.held)
        elif ident is None:
            targets = sorted(k for k in self.held if k[0] == scope)
        else:
            targets = [(scope, int(ident))]
        if not targets:
            return
        now = time.time()
        lost: list[tuple[str, int]] = []
        with self.store.transaction():
            for s, i in targets:
                cur = self.store.conn.execute(
                    "UPDATE leases SET heartbeat_at = ? WHERE scope = ? AND ident = ? AND token = ?",
                    (now, s, i, self.token))
                if cur.rowcount == 0:
                    lost.append((s, i))
        if lost:
            self.held.difference_update(lost)
            names = ", ".join(f"{s} {i}" for s, i in lost)
            raise LeaseLostError(f"{names}: the lease was taken over by another process; this one stops")

    def release(self, scope: str | None = None, ids: Iterable[int] | None = None) -> None:
        """Give up held leases (all, or those of ``ids`` in ``scope``); never touches another's lease."""
        if scope is None:
            targets = sorted(self.held)
        else:
            targets = [(scope, int(i)) for i in (ids if ids is not None else [i for s, i in self.held if s == scope])]
        if not targets:
            return
        with self.store.transaction():
            self.store.conn.executemany("DELETE FROM leases WHERE scope = ? AND ident = ? AND token = ?",
                                        [(s, i, self.token) for s, i in targets])
        self.held.difference_update(targets)

    async def keep_alive(self, interval: float = HEARTBEAT_SECONDS) -> None:
        """Beat every ``interval`` seconds until cancelled. A lost lease is dropped from :attr:`held`
        and the others are kept alive; the holder's own next :meth:`beat` of it raises."""
        import asyncio  # here: listing sessions never needs it

        while True:
            await asyncio.sleep(interval)
            if not self.held:
                continue
            try:
                self.beat()
            except LeaseLostError:
                continue
