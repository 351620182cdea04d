"""A data home that is damaged, full or read-only: recognised, and said in one line.

SQLite and the file system report these as ``sqlite3.DatabaseError`` / ``OSError`` from wherever the
write (or the first read) happened. :func:`classify` tells the three apart (by SQLite's error code
where Python gives it, else by its documented message, and by ``errno``); :func:`describe` turns one
into the line the user reads, naming the file and what to do:

- damaged (``SQLITE_CORRUPT``, ``SQLITE_NOTADB``): ``PRAGMA integrity_check`` is run on a separate
  read-only connection and its first finding quoted; restore the file from a copy or start a new home;
- full (``SQLITE_FULL``, ``ENOSPC``, ``EDQUOT``): free space, then ``viva resume run:N``; sessions
  that were running are marked ``interrupted`` (resumable), never left ``running``. So that this last
  write can still be made on a full disk, a run first sets aside :data:`RESERVE_BYTES` in
  ``HOME/.viva-reserve`` (:func:`reserve_space`); on a full disk that file is deleted and the write
  tried once more (:func:`despite_full`). A home where even the reserve could not be made still shows
  such sessions ``interrupted`` (a ``running`` row whose process is gone reads as interrupted);
- read-only (``SQLITE_READONLY``, ``EROFS``, ``EACCES``/``EPERM`` on the home): viva reads such a
  home (the store opens it read-only) and refuses to write, saying so.
"""

from __future__ import annotations

import errno
import os
import sqlite3
from collections.abc import Callable
from pathlib import Path
from typing import TypeVar

from engine.store.db import StoreError

DAMAGED, FULL, READ_ONLY = "damaged", "full", "read-only"

_CODES = {"SQLITE_CORRUPT": DAMAGED, "SQLITE_NOTADB": DAMAGED, "SQLITE_FULL": FULL, "SQLITE_READONLY": READ_ONLY}
"""SQLite's primary result codes (an extended one, ``SQLITE_CORRUPT_INDEX``, counts as its primary)."""
_MESSAGES = (
    ("database disk image is malformed", DAMAGED), ("file is not a database", DAMAGED),
    ("database or disk is full", FULL), ("attempt to write a readonly database", READ_ONLY),
    ("readonly database", READ_ONLY),
)
_ERRNOS = {errno.ENOSPC: FULL, errno.EROFS: READ_ONLY, errno.EACCES: READ_ONLY, errno.EPERM: READ_ONLY,
           getattr(errno, "EDQUOT", errno.ENOSPC): FULL}


class HomeFaultError(StoreError):
    """The data home is damaged, full or read-only; the message is the line to show (one line).

    Attributes:
        kind: :data:`DAMAGED`, :data:`FULL` or :data:`READ_ONLY`.
    """

    def __init__(self, kind: str, message: str):
        self.kind = kind
        super().__init__(message)


def classify(exc: BaseException) -> str | None:
    """:data:`DAMAGED`, :data:`FULL`, :data:`READ_ONLY`, or None for any other error.

    Follows ``__cause__``/``__context__`` (an error re-raised while handling a full disk is still one).
    """
    seen: set[int] = set()
    current: BaseException | None = exc
    while current is not None and id(current) not in seen:
        seen.add(id(current))
        if isinstance(current, HomeFaultError):
            return current.kind
        if isinstance(current, sqlite3.Error):
            name = getattr(current, "sqlite_errorname", "") or ""
            kind = _CODES.get("_".join(name.split("_")[:2]))
            if kind is None:
                text = str(current).lower()
                kind = next((k for m, k in _MESSAGES if m in text), None)
            if kind is not None:
                return kind
        elif isinstance(current, OSError) and current.errno in _ERRNOS:
            return _ERRNOS[current.errno]
        current = current.__cause__ or current.__context__
    return None


LOW_SPACE_BYTES = 64 * 1024
"""Below this much free space for viva's user, an I/O error of SQLite's is taken for a full disk."""


def no_space_left(home: Path | str) -> bool:
    """True when the file system of ``home`` has less than :data:`LOW_SPACE_BYTES` free for this user."""
    try:
        st = os.statvfs(home)
    except OSError:
        return False
    return st.f_bavail * st.f_frsize < LOW_SPACE_BYTES


def _io_error(exc: BaseException) -> bool:
    """Whether ``exc`` (or one in its chain) is SQLite's I/O error (``SQLITE_IOERR*``)."""
    seen: set[int] = set()
    current: BaseException | None = exc
    while current is not None and id(current) not in seen:
        seen.add(id(current))
        if isinstance(current, sqlite3.Error) and (
                (getattr(current, "sqlite_errorname", "") or "").startswith("SQLITE_IOERR")
                or "disk i/o error" in str(current).lower()):
            return True
        current = current.__cause__ or current.__context__
    return False


def _said_already(exc: BaseException) -> str | None:
    """The message of the first :class:`StoreError` in ``exc``'s chain (``exc`` included): viva's
    own line about the fault (the store's, when it opened the home), which a caller that wrapped it
    (e.g. as a command's error) must not describe a second time."""
    seen: set[int] = set()
    current: BaseException | None = exc
    while current is not None and id(current) not in seen:
        seen.add(id(current))
        if isinstance(current, StoreError) and str(current):
            return str(current).splitlines()[0]
        current = current.__cause__ or current.__context__
    return None


def integrity_finding(db: Path) -> str:
    """The first line ``PRAGMA integrity_check`` gives for ``db`` (``ok`` when it finds nothing), or why
    it could not run; on a read-only connection of its own, so it writes nothing."""
    try:
        conn = sqlite3.connect(f"file:{db}?mode=ro", uri=True, timeout=5.0)
        try:
            row = conn.execute("PRAGMA integrity_check").fetchone()
        finally:
            conn.close()
    except sqlite3.Error as exc:
        return str(exc)
    return str(row[0]) if row else "no answer"


def describe(exc: BaseException, home: Path | str | None, db: Path | str | None = None,
             resume: str | None = None) -> str | None:
    """The one line for a damaged, full or read-only home, or None when ``exc`` is none of these.

    Args:
        exc: the error.
        home: the data home (for the message); None when not known yet.
        db: the database file (default ``home/viva.db``).
        resume: what ``viva resume`` takes to continue (``run:3``, a session id); None: ``run:N``.
    """
    kind = classify(exc)
    if kind is None and home is not None and _io_error(exc) and no_space_left(home):
        kind = FULL  # e.g. SQLite cannot even make its shared-memory file: "disk I/O error"
    if kind is None:
        return None
    said = _said_already(exc)
    if said is not None:
        return said
    where = Path(home) if home is not None else None
    file = Path(db) if db is not None else (where / "viva.db" if where is not None else None)
    detail = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
    if kind == DAMAGED:
        finding = integrity_finding(file) if file is not None and file.exists() else "the file is missing"
        return (f"{file}: the database is damaged ({detail}; integrity_check: {finding}); restore it from a "
                "copy, or start a new home with --home DIR")
    if kind == FULL:
        if resume is None:
            return (f"{where or 'the data home'}: disk full ({detail}); free some space, then try again "
                    "(`viva resume run:N` continues an interrupted run; `viva sessions` lists them)")
        return (f"{where or 'the data home'}: disk full ({detail}); free some space, then continue with "
                f"`viva resume {resume}` (`viva sessions` lists the interrupted sessions)")
    name = getattr(exc, "filename", None) or where or "the data home"
    return (f"{name}: read-only ({detail}); viva can read this home but not write to it: make it writable, "
            "or use another --home")


# -- space set aside for the last writes on a full disk ---------------------------------------------
RESERVE_NAME = ".viva-reserve"
"""The file in the data home that holds the space set aside (:func:`reserve_space`)."""
RESERVE_BYTES = 1 << 20
"""Space set aside per home: 1 MiB, room for the ``interrupted`` marks of hundreds of sessions (each
is one small row update and one event, a few pages of the write-ahead log)."""

T = TypeVar("T")


def reserve_space(home: Path | str) -> bool:
    """Set :data:`RESERVE_BYTES` aside in ``HOME/.viva-reserve`` (blocks allocated, not a sparse file),
    unless it is there already. False, and nothing left behind, when it cannot be made (a full or
    read-only home, a link in its place: never followed)."""
    path = Path(home) / RESERVE_NAME
    try:
        st = os.lstat(path)
        if st.st_size >= RESERVE_BYTES and st.st_blocks * 512 >= RESERVE_BYTES:
            return True
    except OSError:
        pass
    try:
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | getattr(os, "O_NOFOLLOW", 0), 0o600)
    except OSError:
        return False
    try:
        os.posix_fallocate(fd, 0, RESERVE_BYTES)
        return True
    except OSError:
        release_reserve(home)
        return False
    finally:
        os.close(fd)


def release_reserve(home: Path | str) -> bool:
    """Delete ``HOME/.viva-reserve``, freeing its space; True when there was one."""
    try:
        os.unlink(Path(home) / RESERVE_NAME)
        return True
    except OSError:
        return False


def despite_full(home: Path | str, write: Callable[[], T]) -> T:
    """Make ``write``; on a full disk, release the reserve (:func:`release_reserve`) and make it once
    more. Any other error, or a full disk without a reserve to release, is raised as it came."""
    try:
        return write()
    except Exception as exc:
        if classify(exc) != FULL or not release_reserve(home):
            raise
    return write()
