"""Process hardening for viva itself.

``make_non_dumpable()`` is called once at start-up (CLI and app). On Linux it sets
``prctl(PR_SET_DUMPABLE, 0)``: the kernel then makes ``/proc/<viva pid>/*`` owned by root and refuses
``ptrace`` from other processes of the same user, so another process of that user (for instance code
run by some other tool) cannot read viva's environment (``/proc/<pid>/environ``, where the API keys
are) or its memory (``/proc/<pid>/mem``). No core file is written if viva crashes. Child processes that viva starts with ``exec`` are dumpable again
(the kernel resets the flag on ``execve``), which is why eval_code also gets a clean environment.

On other systems (macOS, Windows) both functions are no-ops that report ``None``.
"""

from __future__ import annotations

import sys

PR_GET_DUMPABLE = 3
PR_SET_DUMPABLE = 4


def _prctl():
    """libc's ``prctl`` through ctypes, or None where there is no such call."""
    if not sys.platform.startswith("linux"):
        return None
    import ctypes
    import ctypes.util

    try:
        libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6", use_errno=True)
    except OSError:
        return None
    fn = libc.prctl
    fn.argtypes = [ctypes.c_int, ctypes.c_ulong, ctypes.c_ulong, ctypes.c_ulong, ctypes.c_ulong]
    fn.restype = ctypes.c_int
    return fn


def make_non_dumpable() -> bool | None:
    """Make this process non-dumpable so same-user processes cannot read its /proc entries.

    Returns:
        True when the flag was set, None where the platform has no such flag (not Linux).

    Raises:
        OSError: the kernel refused (it never does for a process lowering its own flag).
    """
    prctl = _prctl()
    if prctl is None:
        return None
    if prctl(PR_SET_DUMPABLE, 0, 0, 0, 0) != 0:
        import ctypes
        import os

        err = ctypes.get_errno()
        raise OSError(err, f"prctl(PR_SET_DUMPABLE, 0) failed: {os.strerror(err)}")
    return True


def is_dumpable() -> bool | None:
    """Whether this process is dumpable (``PR_GET_DUMPABLE``); None where unsupported."""
    prctl = _prctl()
    if prctl is None:
        return None
    return prctl(PR_GET_DUMPABLE, 0, 0, 0, 0) != 0
