"""Texts and LLM messages stored once, so a turn costs what is new in it (docs/events.md, "Storage").

- ``texts``: each distinct text once (``sha`` of its content is unique). A text is stored whole, or as a
  delta (:mod:`engine.delta`) on another text (``base_id``) when that is smaller: the running
  summary of turn t on turn t−1's, a judge prompt on the same session's previous judge prompt.
- ``llm_messages``: the messages of LLM requests as a tree of prefixes. A node is one message (role,
  text) after its parent node; ``chain`` (a hash of the whole prefix) is unique, so a conversation
  that grows by two messages per turn adds two nodes, and a system prompt shared by 10,000 sessions
  is one node. An ``llm_calls`` row names the last node of its request (``messages_id``).

Both tables are append-only and immutable, so the store may memoise them (``Store.memo``, cleared on
rollback). Contents are redacted (:func:`engine.redact.redact`) before they are stored; hashes are of
the redacted text, so nothing stored derives from a secret.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from itertools import islice
from typing import Any

from engine.delta import Delta, apply_delta, compact, delta_if_smaller
from engine.redact import redact
from engine.store.caps import MAX_TEXT_CHARS, cap_text

MEMO_LIMIT = 4096
"""Entries a store's memo keeps before it forgets the older half (a bound on memory, not on correctness)."""


PROBE_AT_ONCE = 16
"""Messages after the previous request's looked up in one query (more: by bisection)."""
MIN_DELTA_CHARS = 200
"""A shorter text is stored whole (an edit could save only a few bytes)."""


def _sha(text: str) -> bytes:
    return hashlib.sha256(text.encode("utf-8")).digest()[:16]


def _memo(store: Any) -> dict[Any, Any]:
    memo = store.memo
    if len(memo) > MEMO_LIMIT:  # forget the older half (entries are kept in the order they were learnt)
        for key in list(islice(memo, len(memo) // 2)):
            del memo[key]
    return memo


def put_text(store: Any, text: str, base_id: int | None = None, base_text: str | None = None,
             delta: Delta | None = None) -> int:
    """Store ``text`` (already redacted) once and return its id.

    With ``base_id`` (and its text), the text is stored as a delta on it when that is smaller (or as the
    given, already checked ``delta``). An identical text stored before is reused whatever its form.
    """
    if len(text) > MAX_TEXT_CHARS:  # a runaway reply is recorded cut, and marked (engine.store.db.cap_text)
        text = cap_text(text, MAX_TEXT_CHARS)
        base_id = base_text = delta = None
    sha = _sha(text)
    memo = _memo(store)
    known = memo.get(("sha", sha))
    if known is not None:
        return known
    if base_id is not None and ("text", base_id) not in memo and store.conn.execute(
            "SELECT 1 FROM texts WHERE id = ?", (base_id,)).fetchone() is None:
        base_id = delta = None  # a base handed out by a transaction that was rolled back
    if delta is None and base_id is not None and len(text) >= MIN_DELTA_CHARS:
        delta = delta_if_smaller(base_text if base_text is not None else get_text(store, base_id), text)
    if delta is None:
        base_id = None
    body = text if delta is None else compact(delta)
    with store.transaction():  # one statement for a new text; a text stored before keeps its row
        cur = store.conn.execute("INSERT OR IGNORE INTO texts (sha, base_id, body) VALUES (?, ?, ?)",
                                 (sha, base_id, body))
        if cur.rowcount:
            text_id = int(cur.lastrowid)  # type: ignore[arg-type]
        else:
            text_id = int(store.conn.execute("SELECT id FROM texts WHERE sha = ?", (sha,)).fetchone()[0])
    memo[("sha", sha)] = text_id
    memo[("text", text_id)] = text
    return text_id


def get_texts(store: Any, ids: Iterable[int | None]) -> dict[int, str]:
    """Text id -> text, for every id given (None ignored); one query for all that are not memoised."""
    memo = _memo(store)
    wanted = {i for i in ids if i is not None}
    out = {i: memo[("text", i)] for i in wanted if ("text", i) in memo}
    missing = sorted(wanted - set(out))
    if not missing:
        return out
    rows = store.conn.execute(
        "WITH RECURSIVE chain(id) AS (SELECT value FROM json_each(?) UNION "
        "SELECT t.base_id FROM texts t JOIN chain c ON t.id = c.id WHERE t.base_id IS NOT NULL) "
        "SELECT t.id, t.base_id, t.body FROM texts t JOIN chain c ON t.id = c.id",
        (json.dumps(missing),)).fetchall()
    nodes = {r[0]: (r[1], r[2]) for r in rows}
    known: dict[int, str] = {}

    def resolve(text_id: int) -> str:
        path = []
        node = text_id
        while node not in known and ("text", node) not in memo:
            if node not in nodes:
                raise KeyError(f"text {node} is missing from the store")
            path.append(node)
            base = nodes[node][0]
            if base is None:
                break
            node = base
        for n in reversed(path):
            base, body = nodes[n]
            if base is None:
                known[n] = body
            else:
                base_text = known.get(base)
                if base_text is None:
                    base_text = memo[("text", base)]
                known[n] = apply_delta(base_text, json.loads(body))
        return known[text_id] if text_id in known else memo[("text", text_id)]

    for i in missing:
        out[i] = resolve(i)
        memo[("text", i)] = out[i]
    return out


def get_text(store: Any, text_id: int) -> str:
    """One text by id."""
    return get_texts(store, [text_id])[text_id]


# -- messages -------------------------------------------------------------------------------------

def _chain(parent: bytes, role: str, content_sha: bytes) -> bytes:
    return hashlib.sha256(parent + role.encode("utf-8") + b"\0" + content_sha).digest()[:16]


@dataclass(frozen=True)
class StoredMessage:
    """One message of a request as stored: what the next request of the same caller can reuse."""

    role: str
    raw: str
    """The content as sent (compared, never stored)."""
    content: str
    """The content as stored (redacted)."""
    chain: bytes
    text_id: int


def put_messages(store: Any, messages: Sequence[dict[str, Any]], previous: Sequence[StoredMessage] | None = None
                 ) -> tuple[int | None, list[StoredMessage]]:
    """Store a request's messages as a path of the prefix tree; returns (last node id, the stored messages).

    Each message's content is redacted before it is hashed or stored. ``previous`` is what this returned
    for the same caller's previous request: messages it already holds are neither redacted nor hashed
    again, and a new message is stored as a delta on the previous request's message at its position
    when that is smaller.
    """
    prev = list(previous or ())
    roles = [str(m.get("role", "")) for m in messages]
    raws = [str(m.get("content") or "") for m in messages]
    contents: list[str] = []
    chains: list[bytes] = []
    known = 0  # messages[:known] are previous[:known]
    parent = b""
    for k, (role, raw) in enumerate(zip(roles, raws, strict=True)):
        if k == known and k < len(prev) and prev[k].role == role and prev[k].raw == raw:
            known += 1
            content, parent = prev[k].content, prev[k].chain
        else:
            content = redact(raw)
            parent = _chain(parent, role, _sha(content))
        contents.append(content)
        chains.append(parent)
    if not chains:
        return None, []
    memo = _memo(store)

    def node_of(k: int) -> tuple[int, int] | None:
        hit = memo.get(("chain", chains[k]))
        if hit is None:
            row = store.conn.execute("SELECT id, text_id FROM llm_messages WHERE chain = ?", (chains[k],)).fetchone()
            if row is None:
                return None
            hit = memo[("chain", chains[k])] = (int(row[0]), int(row[1]))
        return hit

    with store.transaction():
        # stored prefixes are prefix-closed: the longest one is found among the few messages after what
        # the previous request stored (one query), else by bisection
        found = known - 1 if known and node_of(known - 1) is not None else -1
        tail = list(range(found + 1, len(chains)))
        if 0 < len(tail) <= PROBE_AT_ONCE:
            marks = ", ".join("?" * len(tail))
            rows = store.conn.execute(f"SELECT chain, id, text_id FROM llm_messages WHERE chain IN ({marks})",
                                      [chains[k] for k in tail]).fetchall()
            hits = {bytes(r[0]): (int(r[1]), int(r[2])) for r in rows}
            for k in tail:
                if chains[k] not in hits:
                    break
                memo[("chain", chains[k])] = hits[chains[k]]
                found = k
        elif tail:
            lo, hi = found + 1, len(chains) - 1
            while lo <= hi:
                mid = (lo + hi) // 2
                if node_of(mid) is not None:
                    found, lo = mid, mid + 1
                else:
                    hi = mid - 1
        stored: list[StoredMessage] = []
        parent_id: int | None = None
        for k in range(found + 1):
            if k < known and ("chain", chains[k]) in memo:  # still stored (the memo forgets a rollback)
                stored.append(prev[k])
            else:
                stored.append(StoredMessage(roles[k], raws[k], contents[k], chains[k], node_of(k)[1]))  # type: ignore[index]
        if found >= 0:
            parent_id = node_of(found)[0]  # type: ignore[index]
        for k in range(found + 1, len(chains)):
            base = prev[k] if k < len(prev) and prev[k].role == roles[k] else None
            text_id = put_text(store, contents[k], base.text_id if base else None, base.content if base else None)
            parent_id = int(store.conn.execute(
                "INSERT INTO llm_messages (parent_id, chain, role, text_id) VALUES (?, ?, ?, ?)",
                (parent_id, chains[k], roles[k], text_id)).lastrowid)
            memo[("chain", chains[k])] = (parent_id, text_id)
            stored.append(StoredMessage(roles[k], raws[k], contents[k], chains[k], text_id))
    return parent_id, stored


def get_messages(store: Any, last_id: int | None) -> list[dict[str, str]]:
    """The messages of a request, from its last node (``llm_calls.messages_id``), in order."""
    if last_id is None:
        return []
    rows = store.conn.execute(
        "WITH RECURSIVE path(id, depth) AS (SELECT ?, 0 UNION ALL "
        "SELECT m.parent_id, p.depth + 1 FROM llm_messages m JOIN path p ON m.id = p.id "
        "WHERE m.parent_id IS NOT NULL) "
        "SELECT m.role, m.text_id FROM path p JOIN llm_messages m ON m.id = p.id ORDER BY p.depth DESC",
        (last_id,)).fetchall()
    texts = get_texts(store, [r[1] for r in rows])
    return [{"role": r[0], "content": texts[r[1]]} for r in rows]


def request_of(store: Any, call_id: int) -> dict[str, Any] | None:
    """An ``llm_calls`` row's request as it was sent (redacted): ``{"messages", "params"}``; None when
    there is no such call."""
    row = store.conn.execute("SELECT messages_id, params FROM llm_calls WHERE id = ?", (call_id,)).fetchone()
    if row is None:
        return None
    return {"messages": get_messages(store, row[0]), "params": json.loads(row[1] or "{}")}


def fill_summaries(store: Any, rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Turn rows (``SELECT *``) with ``summary`` read back from ``texts``; ``summary_text`` is dropped, so
    a row looks as it did before migration 7. Rows without ``summary_text`` keep their ``summary``."""
    texts = get_texts(store, [r.get("summary_text") for r in rows if r is not None])
    for r in rows:
        if r is None:
            continue
        text_id = r.pop("summary_text", None)
        if text_id is not None:
            r["summary"] = texts[text_id]
    return rows


def response_of(store: Any, call_id: int) -> dict[str, Any] | None:
    """An ``llm_calls`` row's answer (redacted): ``{"text", "finish_reason"}``; None when the call has no
    answer (it failed) or does not exist."""
    row = store.conn.execute("SELECT response_id, finish_reason FROM llm_calls WHERE id = ?", (call_id,)).fetchone()
    if row is None or row[0] is None:
        return None
    return {"text": get_text(store, row[0]), "finish_reason": row[1]}
