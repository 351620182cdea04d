"""The session list as the store serves it: filtered, counted and paged in SQL, never in Python.

A filter string (the Home screen's and ``viva sessions --filter``) is words and ``field:value`` terms,
all of which must match: ``flu running``, ``target:gpt-4o``, ``bench:medqa status:finished``,
``score>=50``, ``date:2025-11``, ``item:12``, ``run:3``. Free words match any listed column, case-
insensitively; ``id``, ``item`` and ``run`` match exactly, other fields by substring. The status is
the *effective* one: a session marked running or paused whose process is gone reads ``interrupted``;
``status:not-examined`` (a hyphen for the stored underscore) finds the sessions that examined nothing.

Answered turns come from ``session_stats`` (kept by the store's triggers, migration 8), so one page
of 10,000 sessions costs one indexed query, not a count per row.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from engine.store import Store
from engine.store.lease import pid_alive

DELTA_KINDS = ("answer.delta",)
"""Event kinds that change no column of the session list (streamed answer pieces)."""

FIELDS: dict[str, str] = {
    "target": "s.target",
    "bench": "b.name",
    "benchmark": "b.name",
    "item": "s.item_id",
    "topic": "i.topic",
    "status": "s.status_now",
    "protocol": "s.protocol",
    "policy": "s.policy",
    "kernel": "s.kernel",
    "date": "s.created_at",
    "id": "s.id",
    "run": "s.run_id",
}
"""Filter field -> SQL column of the listing query."""

_EXACT = {"id", "item", "run"}
_WORDS = ("s.id", "s.target", "b.name", "s.item_id", "i.topic", "s.status_now", "s.protocol", "s.policy", "s.kernel",
          "s.created_at", "s.run_id", "s.score", "COALESCE(st.answered, 0)")
_SCORE = re.compile(r"^score(<=|>=|<|>|=)(\d+(?:\.\d+)?)$")
_SCORE_LIKE = re.compile(r"^score(<=|>=|<|>|=)")

MAX_FILTER_CHARS = 200
"""The longest filter string read (a filter is typed, not pasted: a longer one is an error, not a
slow query; SQLite's expression tree also has a depth limit of 1000)."""

MAX_FILTER_TERMS = 12
"""The most terms a filter may have (each word becomes 13 ``LIKE`` clauses in SQL)."""


class SessionFilterError(ValueError):
    """A filter term the session list does not understand (the message says which and what works)."""


@dataclass(frozen=True)
class FilterTerm:
    """One term of a filter string, lower-cased: a score comparison (``op``, ``bound``), a
    ``field:value`` (``field``, ``value``, ``exact`` for ``id``/``item``/``run``) or a free word."""

    kind: str
    """``score``, ``field`` or ``word``."""
    value: str = ""
    field: str = ""
    exact: bool = False
    op: str = ""
    bound: float = 0.0


def parse_filter(query: str) -> list[FilterTerm]:
    """The terms of a filter string: the one reading of the filter language, which the store's SQL
    (:func:`compile_filter`) and the app's in-memory filter both compile from.

    The language is bounded: at most :data:`MAX_FILTER_CHARS` characters and
    :data:`MAX_FILTER_TERMS` terms.

    Raises:
        SessionFilterError: an unknown ``field:`` name, a score comparison without a number
            (``score>abc``), or a filter longer than the bounds.
    """
    query = query or ""
    if len(query) > MAX_FILTER_CHARS:
        raise SessionFilterError(f"the filter is {len(query)} characters long; the limit is {MAX_FILTER_CHARS} "
                                 f"(use up to {MAX_FILTER_TERMS} words or field:value terms)")
    words = query.split()
    if len(words) > MAX_FILTER_TERMS:
        raise SessionFilterError(f"the filter has {len(words)} terms; the limit is {MAX_FILTER_TERMS} "
                                 "(every term must match, so a few precise ones do the job)")
    terms: list[FilterTerm] = []
    for term in words:
        low = term.lower()
        m = _SCORE.match(low)
        if m:
            terms.append(FilterTerm("score", op=m.group(1), bound=float(m.group(2))))
        elif _SCORE_LIKE.match(low):
            raise SessionFilterError(f"{term!r} compares the score with something that is not a number; "
                                     "write e.g. score>=50 or score<10.5")
        elif ":" in low and not low.startswith(("openai:", "python:")):  # a target spec is a word
            name, _, value = low.partition(":")
            if name not in FIELDS:
                raise SessionFilterError(f"unknown filter field {name!r}; use one of {', '.join(sorted(FIELDS))}, "
                                         "or score>N")
            if name == "status":  # the status as shown ("not examined") or typed (not-examined) as stored
                value = value.replace("-", "_")
            terms.append(FilterTerm("field", value, name, name in _EXACT))
        else:
            terms.append(FilterTerm("word", low))
    return terms


def _like(value: str) -> str:
    return "%" + value.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_") + "%"


def compile_filter(query: str) -> tuple[str, list[Any]]:
    """A filter string as a SQL condition over the listing query, with its parameters.

    Raises:
        SessionFilterError: a bad term (:func:`parse_filter`).
    """
    clauses: list[str] = []
    params: list[Any] = []
    for t in parse_filter(query):
        if t.kind == "score":
            if t.op == "=":
                clauses.append("(s.score IS NOT NULL AND ABS(s.score - ?) < 1e-9)")
            else:
                clauses.append(f"(s.score IS NOT NULL AND s.score {t.op} ?)")
            params.append(t.bound)
        elif t.kind == "field":
            column = FIELDS[t.field]
            if t.exact:
                clauses.append(f"LOWER(CAST({column} AS TEXT)) = ?")
                params.append(t.value)
            else:
                clauses.append(f"LOWER(COALESCE(CAST({column} AS TEXT), '')) LIKE ? ESCAPE '\\'")
                params.append(_like(t.value))
        else:
            clauses.append("(" + " OR ".join(f"LOWER(COALESCE(CAST({c} AS TEXT), '')) LIKE ? ESCAPE '\\'"
                                             for c in _WORDS) + ")")
            params.extend([_like(t.value)] * len(_WORDS))
    return " AND ".join(clauses) or "1", params


def orphaned_sessions(store: Store) -> list[int]:
    """Sessions marked running or paused whose process is gone (they read ``interrupted``)."""
    rows = store.query("SELECT id, pid FROM sessions WHERE status IN ('running', 'paused')")
    return [r["id"] for r in rows if not pid_alive(r["pid"])]


def _listing_sql(columns: str, orphans: list[int]) -> tuple[str, list[Any]]:
    status = "s.status"
    params: list[Any] = []
    if orphans:
        status = f"CASE WHEN s.id IN ({','.join('?' * len(orphans))}) THEN 'interrupted' ELSE s.status END"
        params = list(orphans)
    sql = (f"SELECT {columns} FROM (SELECT s.*, {status} AS status_now FROM sessions s) s "
           "LEFT JOIN benchmarks b ON b.id = s.benchmark_id LEFT JOIN items i ON i.id = s.item_id "
           "LEFT JOIN session_stats st ON st.session_id = s.id")
    return sql, params


_COLUMNS = ("s.id AS id, s.status_now AS status, s.protocol AS protocol, s.target AS target, s.kernel AS kernel, "
            "s.policy AS policy, s.item_id AS item, b.name AS benchmark, i.topic AS topic, s.score AS score, "
            "s.created_at AS created_at, s.run_id AS run_id, COALESCE(st.answered, 0) AS turns")


def _where(query: str, ids: list[int] | None, item: int | None, exclude: int | None,
           answered_only: bool) -> tuple[str, list[Any]]:
    cond, params = compile_filter(query)
    clauses = [cond]
    if ids is not None:
        clauses.append(f"s.id IN ({','.join('?' * len(ids))})" if ids else "0")
        params = params + list(ids)
    if item is not None:
        clauses.append("s.item_id = ?")
        params.append(item)
    if exclude is not None:
        clauses.append("s.id != ?")
        params.append(exclude)
    if answered_only:
        clauses.append("COALESCE(st.answered, 0) > 0")
    return " AND ".join(clauses), params


def list_sessions(store: Store, limit: int | None = None, offset: int = 0, query: str = "",
                  ids: list[int] | None = None, item: int | None = None, exclude: int | None = None,
                  answered_only: bool = False) -> list[dict[str, Any]]:
    """Sessions newest first, filtered and paged in the store.

    Args:
        limit: at most this many rows (None: all).
        offset: skip this many rows first.
        query: a filter string (module docstring).
        ids: only these sessions.
        item: only sessions of this item; ``exclude``: not this session.
        answered_only: only sessions with at least one answered turn.

    Returns:
        Rows with id, status (effective), protocol, target, kernel, policy, item, benchmark, topic,
        score (0-100 or None), created_at, run_id and turns (answered).

    Raises:
        SessionFilterError: a bad filter term.
    """
    sql, params = _listing_sql(_COLUMNS, orphaned_sessions(store))
    where, more = _where(query, ids, item, exclude, answered_only)
    sql += f" WHERE {where} ORDER BY s.id DESC"
    params += more
    if limit is not None:
        sql += " LIMIT ? OFFSET ?"
        params += [max(0, int(limit)), max(0, int(offset))]
    elif offset:
        sql += " LIMIT -1 OFFSET ?"
        params.append(max(0, int(offset)))
    return store.query(sql, tuple(params))


def count_sessions(store: Store, query: str = "", item: int | None = None, exclude: int | None = None,
                   answered_only: bool = False) -> int:
    """How many sessions :func:`list_sessions` would list with the same filter, unpaged."""
    sql, params = _listing_sql("COUNT(*) AS n", orphaned_sessions(store))
    where, more = _where(query, None, item, exclude, answered_only)
    row = store.one(f"{sql} WHERE {where}", tuple(params + more))
    return int(row["n"]) if row else 0


def session_changes(store: Store, after: int) -> tuple[int, list[int]]:
    """Sessions whose listed columns may have changed since event ``after``.

    Returns:
        ``(last event seq, session ids)``: the ids of sessions with an event after ``after`` other
        than streamed answer pieces (which change no listed column), newest first.
    """
    last = store.one("SELECT COALESCE(MAX(seq), 0) AS seq FROM events")
    top = int(last["seq"]) if last else 0
    if top <= after:
        return top, []
    marks = ",".join("?" * len(DELTA_KINDS))
    rows = store.query(f"SELECT DISTINCT session_id FROM events WHERE seq > ? AND seq <= ? AND session_id IS NOT NULL "
                       f"AND kind NOT IN ({marks}) ORDER BY session_id DESC", (after, top, *DELTA_KINDS))
    return top, [r["session_id"] for r in rows]


def catalogue_token(store: Store) -> tuple[Any, ...]:
    """A cheap value that changes when sessions are added or removed or benchmarks or items change."""
    row = store.one("SELECT (SELECT COALESCE(MAX(id), 0) FROM sessions) AS last, (SELECT COUNT(*) FROM sessions) AS n, "
                    "(SELECT COALESCE(MAX(id), 0) FROM benchmarks) AS bench, (SELECT COUNT(*) FROM benchmarks) AS "
                    "benches, (SELECT COUNT(*) FROM items) AS items")
    return tuple(row.values()) if row else ()
