"""Benchmarks and items in the store: create, read, list, delete.

Writing functions (:func:`create_benchmark`, :func:`add_item`) join the caller's transaction, so an
importer wraps a whole import in one ``store.transaction()`` and a failure leaves nothing behind.
"""

from __future__ import annotations

import shutil
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from engine.bench.model import DIFFICULTIES, PROTOCOLS, BenchError, Benchmark, Item
from engine.home import NAME_RE
from engine.store import Store
from engine.store.db import dumps, loads, now_iso

_ITEM_SQL = (
    "SELECT i.*, b.name AS benchmark FROM items i JOIN benchmarks b ON b.id = i.benchmark_id"
)


def validate_name(name: str) -> str:
    """Check a benchmark name (also used as a folder name for its data files).

    Raises:
        BenchError: the name is empty or has characters other than letters, digits, ``.``, ``_``
            and ``-`` (or is longer than 100 characters).
    """
    if not NAME_RE.match(name or ""):
        raise BenchError(
            f"invalid benchmark name {name!r}: use 1-100 letters, digits, '.', '_' or '-', "
            "starting with a letter or digit"
        )
    return name


def benchmark_dir(home: str | Path, name: str) -> Path:
    """The folder holding a benchmark's files (``HOME/benchmarks/NAME``); not created here."""
    return Path(home) / "benchmarks" / validate_name(name)


def data_dir_of(name: str, case_dir: str) -> str:
    """Where a benchmark item's data files live, relative to the data home
    (``benchmarks/NAME/CASE``); the value of ``meta.data_dir``."""
    return f"benchmarks/{validate_name(name)}/{case_dir}"


def item_data_dir(home: str | Path, item: Item) -> Path | None:
    """The absolute folder of an item's data files (TaskWeaver cases), or None if it has none."""
    rel = item.meta.get("data_dir")
    if not rel:
        return None
    path = Path(rel)
    return path if path.is_absolute() else Path(home) / path


def _benchmark(store: Store, row: dict[str, Any]) -> Benchmark:
    counts = store.query(
        "SELECT protocol, COUNT(*) AS n FROM items WHERE benchmark_id = ? GROUP BY protocol ORDER BY protocol",
        (row["id"],),
    )
    kb = None
    if row["kb_id"] is not None:
        kb_row = store.one("SELECT name FROM knowledge_bases WHERE id = ?", (row["kb_id"],))
        kb = kb_row["name"] if kb_row else None
    return Benchmark(
        id=row["id"], name=row["name"], kb_id=row["kb_id"], kb=kb, source=row["source"],
        meta=loads(row["meta"], {}), created_at=row["created_at"],
        n_items=sum(c["n"] for c in counts), protocols={c["protocol"]: c["n"] for c in counts},
    )


def list_benchmarks(store: Store) -> list[Benchmark]:
    """All benchmarks, by name, with item counts per protocol."""
    return [_benchmark(store, r) for r in store.query("SELECT * FROM benchmarks ORDER BY name")]


def get_benchmark(store: Store, name: str) -> Benchmark:
    """The benchmark with this name.

    Raises:
        BenchError: there is none; the message lists the existing names.
    """
    row = store.one("SELECT * FROM benchmarks WHERE name = ?", (name,))
    if row is None:
        names = [r["name"] for r in store.query("SELECT name FROM benchmarks ORDER BY name")]
        known = ", ".join(names) if names else "none yet (create one with `viva bench import` or `viva bench generate`)"
        raise BenchError(f"no benchmark named {name!r}; existing benchmarks: {known}")
    return _benchmark(store, row)


def _item(row: dict[str, Any]) -> Item:
    return Item(
        id=row["id"], benchmark_id=row["benchmark_id"], benchmark=row["benchmark"], ord=row["ord"],
        ext_id=row["ext_id"], topic=row["topic"], protocol=row["protocol"], question=row["question"],
        turns=loads(row["turns"], []), reference=row["reference"], options=loads(row["options"]),
        gold=loads(row["gold"]), difficulty=row["difficulty"],
        source_chunk_ids=loads(row["source_chunk_ids"], []), meta=loads(row["meta"], {}),
    )


def get_item(store: Store, item_id: int) -> Item:
    """The item with this global id.

    Raises:
        BenchError: there is no such item (the message says how to list items).
    """
    row = store.one(_ITEM_SQL + " WHERE i.id = ?", (int(item_id),))
    if row is None:
        raise BenchError(f"no item with id {item_id}; list item ids with `viva bench show NAME`")
    return _item(row)


def get_items(store: Store, item_ids: Iterable[int]) -> list[Item]:
    """Several items by id, in the order given.

    Raises:
        BenchError: some ids do not exist (all of them are named).
    """
    ids = [int(i) for i in item_ids]
    if not ids:
        return []
    marks = ",".join("?" * len(ids))
    rows = {r["id"]: r for r in store.query(_ITEM_SQL + f" WHERE i.id IN ({marks})", tuple(ids))}
    missing = [i for i in ids if i not in rows]
    if missing:
        raise BenchError(f"no items with ids {', '.join(map(str, missing))}; "
                         "list item ids with `viva bench show NAME`")
    return [_item(rows[i]) for i in ids]


def list_items(store: Store, benchmark_name: str) -> list[Item]:
    """The items of a benchmark in order.

    Raises:
        BenchError: no benchmark has this name.
    """
    bench = get_benchmark(store, benchmark_name)
    rows = store.query(_ITEM_SQL + " WHERE i.benchmark_id = ? ORDER BY i.ord", (bench.id,))
    return [_item(r) for r in rows]


def ensure_free_name(store: Store, name: str) -> str:
    """Check that a benchmark name is valid and not taken yet.

    Raises:
        BenchError: invalid or taken (the message says how to free it).
    """
    validate_name(name)
    if store.one("SELECT id FROM benchmarks WHERE name = ?", (name,)) is not None:
        raise BenchError(
            f"a benchmark named {name!r} already exists; choose another --name "
            f"or delete it first with `viva bench delete {name}`"
        )
    return name


def create_benchmark(store: Store, name: str, source: str, kb_id: int | None = None,
                     meta: dict[str, Any] | None = None) -> int:
    """Insert a benchmark row and return its id (joins the caller's transaction).

    Raises:
        BenchError: the name is invalid or already taken.
    """
    with store.transaction() as db:
        ensure_free_name(store, name)
        return db["benchmarks"].insert({
            "name": name, "kb_id": kb_id, "source": source, "meta": dumps(meta or {}),
            "created_at": now_iso(),
        }).last_pk  # type: ignore[return-value]


def set_benchmark_meta(store: Store, benchmark_id: int, meta: dict[str, Any]) -> None:
    """Replace a benchmark's meta (joins the caller's transaction)."""
    with store.transaction():
        store.conn.execute("UPDATE benchmarks SET meta = ? WHERE id = ?", (dumps(meta), benchmark_id))


def check_item_fields(protocol: str, difficulty: str | None, options: Any, turns: Any) -> None:
    """Validate the enumerated and structured fields of an item.

    Raises:
        BenchError: naming the field and what is expected.
    """
    if protocol not in PROTOCOLS:
        raise BenchError(f"protocol: expected one of {', '.join(PROTOCOLS)}, got {protocol!r}")
    if difficulty is not None and difficulty not in DIFFICULTIES:
        raise BenchError(f"difficulty: expected one of {', '.join(DIFFICULTIES)} or null, got {difficulty!r}")
    if options is not None and (
        not isinstance(options, dict) or not options
        or not all(isinstance(k, str) and isinstance(v, str) for k, v in options.items())
    ):
        raise BenchError(f"options: expected a non-empty mapping of option label to text, got {options!r}")
    if not isinstance(turns, list) or not all(isinstance(t, str) and t.strip() for t in turns):
        raise BenchError(f"turns: expected a list of non-empty strings, got {turns!r}")


def add_item(store: Store, benchmark_id: int, ord: int, *, protocol: str, question: str,
             topic: str = "", ext_id: str | None = None, turns: list[str] | None = None,
             reference: str | None = None, options: dict[str, str] | None = None, gold: Any = None,
             difficulty: str | None = None, source_chunk_ids: list[int] | None = None,
             meta: dict[str, Any] | None = None) -> int:
    """Insert an item and return its global id (joins the caller's transaction).

    Raises:
        BenchError: a field is invalid (see :func:`check_item_fields`) or the question is empty.
    """
    turns = list(turns or [])
    check_item_fields(protocol, difficulty, options, turns)
    if not (question or "").strip() and not turns:
        raise BenchError("question: expected a non-empty question, task description or turns")
    with store.transaction() as db:
        return db["items"].insert({
            "benchmark_id": benchmark_id, "ord": ord, "ext_id": None if ext_id is None else str(ext_id),
            "topic": topic or "", "protocol": protocol, "question": question or "", "turns": dumps(turns),
            "reference": reference, "options": None if options is None else dumps(options),
            "gold": None if gold is None else dumps(gold), "difficulty": difficulty,
            "source_chunk_ids": dumps([int(c) for c in (source_chunk_ids or [])]),
            "meta": dumps(meta or {}),
        }).last_pk  # type: ignore[return-value]


def delete_benchmark(store: Store, name: str, home: str | Path | None = None) -> int:
    """Delete a benchmark, its items and rubrics (and its data folder under ``home``).

    Returns:
        The number of items deleted.

    Raises:
        BenchError: no such benchmark, or interview sessions still refer to its items (their
            verdicts point at its rubric versions, which must stay).
    """
    bench = get_benchmark(store, name)
    with store.transaction():
        used = store.one(
            "SELECT COUNT(*) AS n FROM sessions WHERE benchmark_id = ? OR item_id IN "
            "(SELECT id FROM items WHERE benchmark_id = ?)", (bench.id, bench.id),
        )
        if used and used["n"]:
            raise BenchError(
                f"benchmark {name!r} has {used['n']} interview session(s); it is kept so that "
                "their verdicts stay readable"
            )
        store.conn.execute("DELETE FROM benchmarks WHERE id = ?", (bench.id,))
    if home is not None:
        folder = benchmark_dir(home, name)
        if folder.exists():
            shutil.rmtree(folder)
    return bench.n_items
