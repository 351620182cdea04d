"""One SQLite database (sqlite-utils, WAL mode, foreign keys on) with migrations and an event log."""

from __future__ import annotations

import json
import re
import sqlite3
import threading
import time
from collections.abc import AsyncIterator, Iterator
from contextlib import contextmanager
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

from engine.events import Event
from engine.redact import redact, redact_in_place
from engine.store.caps import CAPPED_COLUMNS, MAX_TEXT_CHARS, cap_in_place, cap_text
from engine.store.schema import MIGRATIONS, SCHEMA_VERSION

if TYPE_CHECKING:
    import asyncio

    import sqlite_utils

DB_FILENAME = "viva.db"

MAX_VARIABLES = 999
"""Bound values per statement of :meth:`Store.insert_many` (SQLite's smallest compiled-in limit)."""


class StoreError(Exception):
    """The database cannot be opened or is newer than this version of viva."""


_WRITE_RE = re.compile(r"^\s*(?:INSERT|UPDATE|REPLACE)\b", re.I)
_OWN_REDACTION_RE = re.compile(r"^\s*INSERT\s+OR\s+IGNORE\s+INTO\s+texts\b", re.I)


def _redact_params(params: Any) -> Any:
    if isinstance(params, dict):
        return {k: redact(v) if isinstance(v, str) else v for k, v in params.items()}
    if isinstance(params, (list, tuple)):
        return [redact(v) if isinstance(v, str) else v for v in params]
    return params


class RedactingConnection(sqlite3.Connection):
    """The store's sqlite3 connection: the one choke point of every write.

    The string parameters of every ``INSERT``/``UPDATE``/``REPLACE`` run through it pass
    :func:`engine.redact.redact`, whoever builds the statement: :class:`Store`'s helpers, sqlite-utils
    (rubric edits and their notes, benchmarks, items), or plain SQL. Only ``texts``, which redacts
    before it hashes (:mod:`engine.store.texts`) and stores deltas of redacted text, is left to itself.
    """

    def execute(self, sql: str, parameters: Any = (), /) -> sqlite3.Cursor:  # noqa: D102
        if parameters and _WRITE_RE.match(sql) and not _OWN_REDACTION_RE.match(sql):
            parameters = _redact_params(parameters)
        return super().execute(sql, parameters)

    def executemany(self, sql: str, seq_of_parameters: Any, /) -> sqlite3.Cursor:  # noqa: D102
        if _WRITE_RE.match(sql) and not _OWN_REDACTION_RE.match(sql):
            seq_of_parameters = (_redact_params(p) for p in seq_of_parameters)
        return super().executemany(sql, seq_of_parameters)


def now_iso() -> str:
    """The current UTC time as ISO 8601, the format every ``*_at`` column uses."""
    return datetime.now(UTC).isoformat(timespec="milliseconds")


def dumps(value: Any) -> str:
    """JSON for a TEXT column (stable key order, UTF-8 kept readable)."""
    return json.dumps(value, ensure_ascii=False, sort_keys=True)


def loads(value: str | None, default: Any = None) -> Any:
    """Parse a JSON TEXT column; ``default`` for NULL."""
    return default if value is None else json.loads(value)


class Store:
    """The viva database.

    One ``Store`` per thread: the underlying sqlite3 connection is not shared across threads.
    Other processes may read and write the same file at the same time (WAL mode).
    """

    def __init__(self, path: str | Path):
        self.path = Path(path)
        if self.path.is_dir():
            self.path = self.path / DB_FILENAME
        self.read_only = False
        """The home cannot be written (a read-only mount or folder): opened for reading only, and every
        write transaction is refused with :class:`engine.store.faults.HomeFaultError`."""
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise StoreError(f"{self.path.parent}: cannot create the data home ({exc.strerror})") from None
        self._db: sqlite_utils.Database | None = None
        self._depth = 0
        self.memo: dict[Any, Any] = {}
        """What this connection knows of immutable rows (``engine.store.texts``); emptied on rollback."""
        try:
            self.conn = self._connect()
            self.migrate()
        except sqlite3.DatabaseError as exc:
            from engine.store.faults import DAMAGED, classify, describe

            if classify(exc) == DAMAGED:
                raise StoreError(describe(exc, self.path.parent, self.path)) from None
            raise StoreError(describe(exc, self.path.parent, self.path) or f"{self.path}: cannot open the "
                             f"database ({exc})") from None

    def _connect(self) -> sqlite3.Connection:
        """Open the database: read-write in WAL mode, or read-only when the home cannot be written."""
        import os

        writable = os.access(self.path.parent, os.W_OK) and (not self.path.exists() or os.access(self.path, os.W_OK))
        if writable:
            try:
                conn = sqlite3.connect(str(self.path), timeout=30.0, isolation_level=None, factory=RedactingConnection)
                conn.execute("PRAGMA journal_mode=WAL")
            except sqlite3.OperationalError as exc:
                from engine.store.faults import READ_ONLY, classify

                if classify(exc) != READ_ONLY and "unable to open" not in str(exc):
                    raise
                writable = False
        if not writable:
            if not self.path.exists():
                raise StoreError(f"{self.path.parent}: read-only and holds no database; viva cannot create one "
                                 "there: make it writable, or use another --home")
            self.read_only = True
            # A WAL database needs its -shm file; in a folder that cannot be written, read the file as
            # it is (immutable: nobody can change it here meanwhile).
            uri = f"file:{self.path}?mode=ro"
            conn = sqlite3.connect(uri, uri=True, timeout=30.0, isolation_level=None, factory=RedactingConnection)
            try:
                conn.execute("PRAGMA user_version").fetchone()
            except sqlite3.OperationalError:
                conn.close()
                conn = sqlite3.connect(f"file:{self.path}?immutable=1", uri=True, timeout=30.0,
                                       isolation_level=None, factory=RedactingConnection)
        conn.execute("PRAGMA foreign_keys=ON")
        if not self.read_only:
            conn.execute("PRAGMA synchronous=NORMAL")
        conn.execute("PRAGMA busy_timeout=30000")
        conn.execute("PRAGMA recursive_triggers=ON")  # as sqlite-utils sets it, whether or not .db is used
        return conn

    @property
    def db(self) -> sqlite_utils.Database:
        """The sqlite-utils view of the connection, made on first use (importing sqlite-utils, which
        imports numpy, costs more than opening the store and listing sessions)."""
        if self._db is None:
            import sqlite_utils

            self._db = sqlite_utils.Database(self.conn)
        return self._db

    # -- schema -----------------------------------------------------------------------------
    @property
    def schema_version(self) -> int:
        """The schema version of the open database (SQLite's ``user_version``)."""
        return self.conn.execute("PRAGMA user_version").fetchone()[0]

    def migrate(self) -> None:
        """Apply pending migrations, each in its own transaction."""
        current = self.schema_version
        if current > SCHEMA_VERSION:
            raise StoreError(
                f"{self.path}: database schema version {current} is newer than this viva "
                f"({SCHEMA_VERSION}); upgrade viva or use another --home"
            )
        if current == SCHEMA_VERSION:
            return
        if self.read_only:
            raise StoreError(f"{self.path}: read-only, and its schema (version {current}) needs upgrading to "
                             f"{SCHEMA_VERSION}; make the home writable once, or use another --home")
        # Foreign keys are off while migrations run, so a migration may rebuild a table that others
        # reference (SQLite's documented procedure); the references are checked before each commit.
        self.conn.execute("PRAGMA foreign_keys=OFF")
        try:
            before = {tuple(r) for r in self.conn.execute("PRAGMA foreign_key_check").fetchall()}
            for number in range(current + 1, SCHEMA_VERSION + 1):
                script = MIGRATIONS[number - 1]
                if callable(script):  # a migration that moves data in Python, in one transaction
                    self.conn.execute("BEGIN IMMEDIATE")
                    self._depth = 1
                    try:
                        script(self)
                        self.conn.execute(f"PRAGMA user_version={number}")
                    except BaseException:
                        self.conn.execute("ROLLBACK")
                        raise
                    finally:
                        self._depth = 0
                        self.memo.clear()
                else:
                    # executescript commits implicitly, so wrap the DDL in an explicit transaction.
                    try:
                        self.conn.executescript(f"BEGIN IMMEDIATE;\n{script}\nPRAGMA user_version={number};")
                    except BaseException:
                        if self.conn.in_transaction:  # a statement failed half-way: nothing of it stays
                            self.conn.execute("ROLLBACK")
                        raise
                broken = [r for r in map(tuple, self.conn.execute("PRAGMA foreign_key_check").fetchall())
                          if r not in before]
                if broken:
                    self.conn.execute("ROLLBACK")
                    raise StoreError(f"{self.path}: migration {number} would break {len(broken)} reference(s) "
                                     f"(first: {tuple(broken[0])}); the database was not changed")
                self.conn.execute("COMMIT")
        finally:
            self.conn.execute("PRAGMA foreign_keys=ON")

    # -- transactions -------------------------------------------------------------------------
    @contextmanager
    def transaction(self) -> Iterator[sqlite_utils.Database]:
        """A write transaction (BEGIN IMMEDIATE); nested uses join the outer one."""
        if self._depth:
            self._depth += 1
            try:
                yield self.db
            finally:
                self._depth -= 1
            return
        if self.read_only:
            from engine.store.faults import READ_ONLY, HomeFaultError

            raise HomeFaultError(READ_ONLY, f"{self.path.parent}: read-only; viva can read this home but not "
                                            "write to it: make it writable, or use another --home")
        self.conn.execute("BEGIN IMMEDIATE")
        self._depth = 1
        try:
            yield self.db
        except BaseException:
            self.conn.execute("ROLLBACK")
            self.memo.clear()  # ids handed out inside the transaction are gone
            raise
        else:
            self.conn.execute("COMMIT")
        finally:
            self._depth = 0

    def close(self) -> None:
        """Close the database connection."""
        self.conn.close()

    # -- generic helpers ----------------------------------------------------------------------
    def insert(self, table: str, row: dict[str, Any]) -> int:
        """Insert one row and return its id (within a transaction when one is open).

        Plain SQL on purpose: this is the runner's hot path, and sqlite-utils' ``insert`` inspects the
        table's schema on every call. Text values pass :func:`engine.redact.redact` (no secret is stored).
        """
        _check_identifier(table)
        columns = list(row)
        for column in columns:
            _check_identifier(column)
        sql = (f"INSERT INTO {table} ({', '.join(columns)}) VALUES ({', '.join('?' * len(columns))})"
               if columns else f"INSERT INTO {table} DEFAULT VALUES")
        values = [_clean(row[c], table, c) for c in columns]
        with self.transaction():
            return int(self.conn.execute(sql, values).lastrowid)  # type: ignore[arg-type]

    def insert_many(self, table: str, rows: list[dict[str, Any]]) -> None:
        """Insert rows that share their columns (those of the first) as one multi-row ``INSERT`` (a turn's
        verdicts are one statement, not one per criterion), in chunks of at most :data:`MAX_VARIABLES`
        bound values, within a transaction when one is open; text is redacted as by :meth:`insert`."""
        if not rows:
            return
        _check_identifier(table)
        columns = list(rows[0])
        for column in columns:
            _check_identifier(column)
        row_marks = f"({', '.join('?' * len(columns))})"
        per = max(1, MAX_VARIABLES // max(1, len(columns)))
        with self.transaction():
            for start in range(0, len(rows), per):
                chunk = rows[start:start + per]
                sql = f"INSERT INTO {table} ({', '.join(columns)}) VALUES {', '.join([row_marks] * len(chunk))}"
                self.conn.execute(sql, [_clean(row[c], table, c) for row in chunk for c in columns])

    def update(self, table: str, row_id: int, values: dict[str, Any]) -> None:
        """Update columns of one row by id (within a transaction when one is open); text is redacted."""
        _check_identifier(table)
        for column in values:
            _check_identifier(column)
        if not values:
            return
        sql = f"UPDATE {table} SET {', '.join(f'{c} = ?' for c in values)} WHERE id = ?"
        with self.transaction():
            self.conn.execute(sql, [*(_clean(v, table, c) for c, v in values.items()), row_id])

    def query(self, sql: str, params: tuple | dict = ()) -> list[dict[str, Any]]:
        """Run a read query; returns its rows as dicts (column -> value).

        Plain sqlite3 on purpose (the hot path): sqlite-utils' ``query`` wraps every read in a
        SAVEPOINT/RELEASE pair, two extra statements per query."""
        cursor = self.conn.execute(sql, params)
        if cursor.description is None:
            return []
        keys = [d[0] for d in cursor.description]
        return [dict(zip(keys, row, strict=True)) for row in cursor.fetchall()]

    def one(self, sql: str, params: tuple | dict = ()) -> dict[str, Any] | None:
        """The first row of a read query as a dict, or None when it has none."""
        rows = self.query(sql, params)
        return rows[0] if rows else None

    # -- events -------------------------------------------------------------------------------
    def append_event(self, session_id: int | None, kind: str, payload: dict[str, Any] | None = None) -> int:
        """Append an event and return its sequence number (global, strictly increasing).

        The payload's strings are redacted *in place* (:func:`engine.redact.redact_in_place`), so a
        caller that passes the same dict on to a live listener shows exactly what was stored.
        """
        body = dumps(cap_in_place(redact_in_place(payload if payload is not None else {})))
        with self.transaction():
            cur = self.conn.execute(
                "INSERT INTO events (session_id, ts, kind, payload) VALUES (?, ?, ?, ?)",
                (session_id, time.time(), kind, body),
            )
            return int(cur.lastrowid)  # type: ignore[arg-type]

    def events(self, after: int = 0, session_id: int | None = None, limit: int = 10_000) -> list[Event]:
        """Events with ``seq > after`` in order, optionally for one session."""
        if session_id is None:
            rows = self.conn.execute(
                "SELECT seq, session_id, ts, kind, payload FROM events WHERE seq > ? ORDER BY seq LIMIT ?",
                (after, limit),
            ).fetchall()
        else:
            rows = self.conn.execute(
                "SELECT seq, session_id, ts, kind, payload FROM events WHERE seq > ? AND session_id = ? "
                "ORDER BY seq LIMIT ?",
                (after, session_id, limit),
            ).fetchall()
        return [Event(r[0], r[1], r[2], r[3], json.loads(r[4])) for r in rows]

    def follow(self, after: int = 0, session_id: int | None = None, interval: float = 0.05,
               stop: threading.Event | None = None) -> Iterator[list[Event]]:
        """Follow the event log from ``after`` in a thread: yields each new batch of events as any
        process writes them, until ``stop`` is set (blocking waits of ``interval`` seconds)."""
        last = after
        while stop is None or not stop.is_set():
            batch = self.events(last, session_id)
            if batch:
                last = batch[-1].seq
                yield batch
            elif stop is not None:
                stop.wait(interval)
            else:
                time.sleep(interval)

    async def subscribe(
        self,
        after: int = 0,
        session_id: int | None = None,
        interval: float = 0.05,
        stop: asyncio.Event | None = None,
    ) -> AsyncIterator[Event]:
        """Follow the event log from ``after``: yields new events as any process writes them."""
        import asyncio  # here: listing sessions never needs it

        last = after
        while stop is None or not stop.is_set():
            batch = self.events(last, session_id)
            for event in batch:
                last = event.seq
                yield event
            if not batch:
                await asyncio.sleep(interval)

    def last_seq(self, session_id: int | None = None) -> int:
        """The highest event sequence number, overall or for one session (0 when there are none)."""
        if session_id is None:
            row = self.conn.execute("SELECT COALESCE(MAX(seq), 0) FROM events").fetchone()
        else:
            row = self.conn.execute(
                "SELECT COALESCE(MAX(seq), 0) FROM events WHERE session_id = ?", (session_id,)
            ).fetchone()
        return int(row[0])


def _clean(value: Any, table: str = "", column: str = "") -> Any:
    """A column value on its way in: text capped (:data:`CAPPED_COLUMNS`, else :data:`MAX_TEXT_CHARS`
    unless it is JSON, which a cut would break), everything else unchanged. The connection redacts
    every written string (:class:`RedactingConnection`); a text about to be cut is redacted first, so
    a cut never leaves half a secret that redaction would no longer recognise."""
    if not isinstance(value, str):
        return value
    limit = CAPPED_COLUMNS.get((table, column))
    if limit is None and value[:1] not in "[{":
        limit = MAX_TEXT_CHARS
    if limit is None or len(value) <= limit:
        return value
    return cap_text(redact(value), limit)


_IDENTIFIER = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")


def _check_identifier(name: str) -> None:
    if not _IDENTIFIER.match(name):
        raise StoreError(f"invalid table or column name {name!r}")


def open_store(home: str | Path) -> Store:
    """Open (creating and migrating if needed) the database in a data home."""
    return Store(Path(home) / DB_FILENAME)
