"""Migration 7: move a database at schema 6 to constant storage per turn.

Runs inside the migration's transaction with foreign keys off (:meth:`engine.store.db.Store.migrate`):

1. new tables ``texts`` and ``llm_messages`` (:mod:`engine.store.texts`), ``turns.summary_text``;
2. every turn's summary moves to ``texts`` (a delta on the previous turn's when smaller);
3. ``llm_calls`` is rebuilt: its ``request`` JSON becomes ``messages_id`` (the request's path in the
   message tree) and ``params``, its ``response`` JSON ``response_id`` (a text) and ``finish_reason``; a
   message new to the tree is a delta on the same position of the same session and role's previous
   request when smaller, an answer on the same session and role's previous answer;
4. events are rewritten so that the fold (:class:`engine.events.fold.SessionView`) gives the same view:
   a ``verdicts`` event's ``summary`` becomes ``summary_base`` + ``summary_delta`` when the turn before
   it has a summary in the view at that point and the delta is smaller, and a ``metrics`` event drops
   ``scores`` when the list equals the one the fold derives (every judged turn's score, in order).
"""

from __future__ import annotations

import json
from typing import Any

from engine.store.texts import put_messages, put_text

DDL = """
CREATE TABLE texts (
    id INTEGER PRIMARY KEY,
    sha BLOB NOT NULL UNIQUE,
    base_id INTEGER REFERENCES texts(id),
    body TEXT NOT NULL
);
CREATE TABLE llm_messages (
    id INTEGER PRIMARY KEY,
    parent_id INTEGER REFERENCES llm_messages(id),
    chain BLOB NOT NULL UNIQUE,
    role TEXT NOT NULL,
    text_id INTEGER NOT NULL REFERENCES texts(id)
);
ALTER TABLE turns ADD COLUMN summary_text INTEGER REFERENCES texts(id);
CREATE TABLE llm_calls_v7 (
    id INTEGER PRIMARY KEY,
    cache_key TEXT NOT NULL,
    role TEXT NOT NULL,
    base_url TEXT NOT NULL,
    model TEXT NOT NULL,
    messages_id INTEGER REFERENCES llm_messages(id),
    params TEXT NOT NULL DEFAULT '{}',
    response_id INTEGER REFERENCES texts(id),
    finish_reason TEXT,
    tokens_in INTEGER NOT NULL DEFAULT 0,
    tokens_out INTEGER NOT NULL DEFAULT 0,
    latency_ms REAL NOT NULL DEFAULT 0,
    cost REAL NOT NULL DEFAULT 0,
    attempts INTEGER NOT NULL DEFAULT 1,
    retries TEXT NOT NULL DEFAULT '[]',
    cached INTEGER NOT NULL DEFAULT 0,
    error TEXT,
    session_id INTEGER,
    created_at TEXT NOT NULL
);
"""

COPIED = ("id, cache_key, role, base_url, model, tokens_in, tokens_out, latency_ms, cost, attempts, "
          "retries, cached, error, session_id, created_at")
BATCH = 500


def migrate(store: Any) -> None:
    """Apply migration 7 to ``store`` (its transaction is open)."""
    conn = store.conn
    for statement in DDL.split(";"):
        if statement.strip():
            conn.execute(statement)
    _turn_summaries(store)
    _llm_calls(store)
    conn.execute("DROP TABLE llm_calls")
    conn.execute("ALTER TABLE llm_calls_v7 RENAME TO llm_calls")
    conn.execute("CREATE INDEX llm_calls_key ON llm_calls(cache_key)")
    _events(store)


def _turn_summaries(store: Any) -> None:
    conn = store.conn
    rows = conn.execute("SELECT id, session_id, idx, summary FROM turns WHERE summary IS NOT NULL "
                        "ORDER BY session_id, idx").fetchall()
    last: tuple[int, int, int, str] | None = None  # (session, idx, text id, text)
    for turn_id, sid, idx, summary in rows:
        base = last if last is not None and last[0] == sid and last[1] == idx - 1 else None
        text_id = put_text(store, summary, base[2] if base else None, base[3] if base else None)
        conn.execute("UPDATE turns SET summary_text = ?, summary = NULL WHERE id = ?", (text_id, turn_id))
        last = (sid, idx, text_id, summary)


def _llm_calls(store: Any) -> None:
    conn = store.conn
    previous: dict[tuple[Any, str], list[Any]] = {}
    answers: dict[tuple[Any, str], tuple[str, int]] = {}
    after = 0
    while True:
        rows = conn.execute(f"SELECT {COPIED}, request, response FROM llm_calls WHERE id > ? ORDER BY id LIMIT ?",
                            (after, BATCH)).fetchall()
        if not rows:
            return
        for row in rows:
            *copied, request, response = row
            messages, params = _parse_request(request)
            named = dict(zip(COPIED.split(", "), copied, strict=True))
            key = (named["session_id"], named["role"])
            last_id, texts = put_messages(store, messages, previous.get(key))
            previous[key] = texts
            answer, finish = _parse_response(response)
            answer_id = None
            if answer is not None:
                last = answers.get(key)
                answer_id = put_text(store, answer, last[1] if last else None, last[0] if last else None)
                answers[key] = (answer, answer_id)
            conn.execute(f"INSERT INTO llm_calls_v7 ({COPIED}, messages_id, params, response_id, finish_reason) "
                         f"VALUES ({', '.join('?' * (len(copied) + 4))})",
                         (*copied, last_id, json.dumps(params, ensure_ascii=False, sort_keys=True), answer_id, finish))
        after = rows[-1][0]


def _parse_response(response: str | None) -> tuple[str | None, str | None]:
    """A stored response's (text, finish reason); a response that is not the JSON viva wrote is kept whole
    as the text."""
    if response is None:
        return None, None
    try:
        data = json.loads(response)
        return str(data["text"]), data.get("finish_reason")
    except (ValueError, TypeError, KeyError):
        return response, None


def _parse_request(request: str | None) -> tuple[list[dict[str, Any]], dict[str, Any]]:
    """A stored request's messages and params; a request that is not the JSON viva wrote is kept whole as
    one message of role ``request``."""
    try:
        data = json.loads(request or "")
        messages = [{"role": str(m["role"]), "content": m.get("content") or ""} for m in data["messages"]]
        params = data.get("params") or {}
        if not isinstance(params, dict):
            raise TypeError
        return messages, params
    except (ValueError, TypeError, KeyError):
        return [{"role": "request", "content": request or ""}], {}


def _events(store: Any) -> None:
    from engine.events import METRICS, VERDICT_OVERRIDDEN, VERDICTS
    from engine.events.encode import encode_summary

    conn = store.conn
    views: dict[int, tuple[dict[int, str | None], dict[int, float | None]]] = {}
    after = 0
    while True:
        rows = conn.execute("SELECT seq, session_id, kind, payload FROM events WHERE seq > ? "
                            "AND kind IN (?, ?, ?) ORDER BY seq LIMIT ?",
                            (after, VERDICTS, VERDICT_OVERRIDDEN, METRICS, BATCH)).fetchall()
        if not rows:
            return
        for seq, sid, kind, body in rows:
            summaries, scores = views.setdefault(sid, ({}, {}))
            try:
                payload = json.loads(body)
                turn = int(payload.get("turn", -1)) if kind != METRICS else -1
            except (ValueError, TypeError):
                continue  # not ours to interpret: left as it is
            if kind == VERDICTS:
                summary = payload.get("summary")
                scores[turn] = payload.get("score")
                if summary is not None and "summary_delta" not in payload:
                    new = encode_summary(summary, turn - 1, summaries.get(turn - 1))
                    if new is not None:
                        payload.pop("summary", None)
                        payload.update(new)
                        conn.execute("UPDATE events SET payload = ? WHERE seq = ?", (_dumps(payload), seq))
                summaries[turn] = summary
            elif kind == VERDICT_OVERRIDDEN:
                if payload.get("score") is not None:
                    scores[turn] = payload["score"]
                scores.setdefault(turn, None)
            elif "scores" in payload:
                derived = [s for _, s in sorted(scores.items()) if s is not None]
                if payload["scores"] == derived:
                    del payload["scores"]
                    conn.execute("UPDATE events SET payload = ? WHERE seq = ?", (_dumps(payload), seq))
        after = rows[-1][0]


def _dumps(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, sort_keys=True)
