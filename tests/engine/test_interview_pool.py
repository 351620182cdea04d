"""What the in-process run and the workers' parent share (engine/interview/pool.py): taking a run's
leases (another live owner is one RunError naming it, and nothing is kept), and the bookkeeping writes
made despite a full disk (skipped when they still cannot be made; any other error raised)."""

from __future__ import annotations

import errno
import os

import pytest

from engine.interview.pool import RunError, despite_full, take_leases
from engine.store.lease import RUN, SESSION, Leases, lease_owner


def test_take_leases_refuses_another_live_owner_and_keeps_nothing(store):
    first, second = Leases(store), Leases(store)
    take_leases(first, SESSION, [1])
    take_leases(second, RUN, [7])
    with pytest.raises(RunError, match=rf"session 1 is being run by pid {os.getpid()}"):
        take_leases(second, SESSION, [2, 1])
    assert lease_owner(store, RUN, 7) is None  # what the refused owner held is released
    assert lease_owner(store, SESSION, 2) is None
    take_leases(second, SESSION, [2])  # the refusal left it usable


def test_despite_full_skips_a_write_a_full_disk_refuses_and_raises_anything_else(tmp_path):
    calls = []

    def full() -> None:
        calls.append("full")
        raise OSError(errno.ENOSPC, "No space left on device")

    despite_full(tmp_path, full)  # no reserve to release: tried once, then skipped
    assert calls == ["full"]

    def broken() -> None:
        raise ValueError("not a disk problem")

    with pytest.raises(ValueError):
        despite_full(tmp_path, broken)
    done = []
    despite_full(tmp_path, lambda: done.append(1))
    assert done == [1]
