"""A data home that is damaged, full or read-only: recognised, and said in one line.

SQLite and the file system report these as ``sqlite3.DatabaseError`` / ``OSError`` from wherever the
write (or the first read) happened. :func:`classify` tells the three apart (by SQLite's error code
where Python gives it, else by its documented message, and by ``errno``); :func:`describe` turns one
into the line the user reads, naming the file and what to do:

- damaged (``SQLITE_CORRUPT``, ``SQLITE_NOTADB``): ``PRAGMA integrity_check`` is run on a separate
  read-only connection and its first finding quoted; restore the file from a copy or start a new home;
- full (``SQLITE_FULL``, ``ENOSPC``, ``EDQUOT``): free space, then ``viva resume run:N``; sessions
  that were running are marked ``interrupted`` (resumable), never left ``running``;
- read-only (``SQLITE_READONLY``, ``EROFS``, ``EACCES``/``EPERM`` on the home): viva reads such a
  home (the store opens it read-only) and refuses to write, saying so.
"""

from __future__ import annotations

import errno
import sqlite3
from pathlib import Path

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


def describe(exc: BaseException, home: Path | str | None, db: Path | str | None = None) -> str | None:
    """The one line for a damaged, full or read-only home, or None when ``exc`` is none of these.

    Args:
        exc: the error.
        home: the data home (for the message); None when not known yet.
        db: the database file (default ``home/viva.db``).
    """
    kind = classify(exc)
    if kind is None:
        return None
    if isinstance(exc, HomeFaultError):
        return str(exc)
    where = Path(home) if home is not None else None
    file = Path(db) if db is not None else (where / "viva.db" if where is not None else None)
    detail = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
    if kind == DAMAGED:
        finding = integrity_finding(file) if file is not None and file.exists() else "the file is missing"
        return (f"{file}: the database is damaged ({detail}; integrity_check: {finding}); restore it from a "
                "copy, or start a new home with --home DIR")
    if kind == FULL:
        return (f"{where or 'the data home'}: disk full ({detail}); free some space, then continue with "
                "`viva resume run:N` (`viva sessions` lists the interrupted sessions)")
    name = getattr(exc, "filename", None) or where or "the data home"
    return (f"{name}: read-only ({detail}); viva can read this home but not write to it: make it writable, "
            "or use another --home")
