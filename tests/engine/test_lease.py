"""Leases on runs and sessions (engine/store/lease.py): the liveness rule, refusal, takeover, loss."""

from __future__ import annotations

import os
import subprocess
import sys
import time

import pytest

from engine.events.fold import SessionView
from engine.interview.run import derive_run_status
from engine.store.lease import (
    RUN,
    SESSION,
    LeaseHeldError,
    LeaseLostError,
    LeaseOwner,
    Leases,
    lease_owner,
    owner_alive,
    this_host,
)


def dead_pid() -> int:
    """The id of a process that has exited (and been reaped)."""
    proc = subprocess.Popen([sys.executable, "-c", "pass"])
    proc.wait()
    return proc.pid


def owner(pid: int, host: str, age: float) -> LeaseOwner:
    now = time.time()
    return LeaseOwner(RUN, 1, pid, host, "t", now - age, now - age)


def test_liveness_rule():
    me = os.getpid()
    assert owner_alive(owner(me, this_host(), 1.0))
    assert not owner_alive(owner(me, this_host(), 31.0))  # a live pid with a stale heartbeat (reused, or hung)
    assert not owner_alive(owner(dead_pid(), this_host(), 0.0))  # a dead pid frees the lease at once
    assert owner_alive(owner(dead_pid(), "elsewhere", 5.0))  # another host: only the heartbeat tells
    assert not owner_alive(owner(me, "elsewhere", 31.0))
    assert owner_alive(owner(me, this_host(), 9.0), stale_after=10.0)


def test_refused_while_alive_taken_over_when_stale(store):
    first, second = Leases(store), Leases(store)
    first.acquire(RUN, [1])
    first.acquire(SESSION, [1, 2])
    with pytest.raises(LeaseHeldError) as err:
        second.acquire(SESSION, [3, 2])
    message = str(err.value)
    assert f"session 2 is being run by pid {os.getpid()} on host {this_host()}" in message
    assert "viva resume 2" in message
    assert lease_owner(store, SESSION, 3) is None  # all or none: session 3 was not taken either
    with pytest.raises(LeaseHeldError, match=r"run 1 is being run by .*`viva resume run:1`"):
        second.acquire(RUN, [1])

    # the first owner's process dies: its leases are taken over at once
    store.conn.execute("UPDATE leases SET pid = ?", (dead_pid(),))
    second.acquire(SESSION, [2, 3])
    assert [o.ident for o in second.taken_over] == [2]
    assert lease_owner(store, SESSION, 2).token == second.token
    # the old owner finds out at its next heartbeat, and its release does not touch the new lease
    with pytest.raises(LeaseLostError, match="session 2: the lease was taken over"):
        first.beat()
    first.release()
    assert lease_owner(store, SESSION, 2).token == second.token
    assert lease_owner(store, SESSION, 1) is None and lease_owner(store, RUN, 1) is None

    # a live pid whose heartbeat went stale is taken over too
    store.conn.execute("UPDATE leases SET heartbeat_at = heartbeat_at - 60 WHERE ident = 3")
    third = Leases(store)
    third.acquire(SESSION, [3])
    with pytest.raises(LeaseLostError):
        second.beat(SESSION, 3)
    second.beat(SESSION, 2)  # the lease it still holds beats fine
    second.release()
    third.release()
    assert store.query("SELECT * FROM leases") == []


def test_acquire_again_with_the_same_token_refreshes(store):
    leases = Leases(store)
    leases.acquire(SESSION, [5])
    before = lease_owner(store, SESSION, 5).heartbeat_at
    time.sleep(0.01)
    leases.acquire(SESSION, [5])
    assert lease_owner(store, SESSION, 5).heartbeat_at > before and leases.taken_over == []


def test_fold_drops_a_cut_stream_when_the_session_is_resumed():
    """Logs written before the runner wrote answer.reset on resume still fold to one answer."""
    view = SessionView(1)
    events = [
        ("session.started", {"resumed": False}),
        ("turn.started", {"turn": 0, "question": "Q?", "action": "initial", "actor": "item"}),
        ("answer.delta", {"turn": 0, "text": "Liquid oxygen "}),
        ("session.resumed", {"resumed": True}),
        ("answer.delta", {"turn": 0, "text": "Liquid oxygen is pale blue."}),
        ("answer.done", {"turn": 0, "answer": "Liquid oxygen is pale blue."}),
    ]
    for seq, (kind, payload) in enumerate(events, start=1):
        view.apply(seq, kind, payload)
        if kind == "answer.delta" and seq == 5:
            assert view.turns[0].answer == "Liquid oxygen is pale blue."  # before answer.done too
    assert view.turns[0].answer == "Liquid oxygen is pale blue."
    # a pause ending (by a human) keeps what was shown
    view.apply(7, "turn.started", {"turn": 1, "question": "Q2?", "action": "follow-up", "actor": "policy"})
    view.apply(8, "answer.delta", {"turn": 1, "text": "Partly"})
    view.apply(9, "session.resumed", {"by": "human"})
    assert view.turns[1].answer == "Partly"


def test_run_status_is_derived_from_its_sessions():
    assert derive_run_status([]) == "created"
    assert derive_run_status(["finished", "running"]) == "running"
    assert derive_run_status(["failed", "paused"]) == "running"
    assert derive_run_status(["finished", "finished"]) == "finished"
    assert derive_run_status(["finished", "failed", "interrupted"]) == "failed"
    assert derive_run_status(["finished", "interrupted", "created"]) == "interrupted"
