"""Export a benchmark as viva's own JSONL format (docs/benchmark-format.md).

One item per line, each with its global ``id`` (what ``viva run --items`` takes) and its current
rubric. ``viva bench import jsonl FILE --name NAME`` reads it back: the re-exported file is identical
except for ``id``, ``benchmark`` and ``rubric_version`` (the new item ids, the new name, and the new
rubric's provenance). ``meta.data_dir`` of an imported TaskWeaver case (``benchmarks/NAME/CASE``, inside this data home) is
not exported: the importer copies the files and sets it for the new benchmark.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any, TextIO

from engine.bench.items import data_dir_of, get_benchmark, list_items
from engine.bench.model import Criterion, Item
from engine.bench.rubric import current_rubric, has_rubric
from engine.store import Store

FORMAT = "viva.item/1"
"""The value of every line's ``format`` field."""

CRITERION_FIELDS = ("cid", "text", "kind", "weight", "eval_code", "source_chunk_ids", "raw")
"""The fields every exported criterion has."""

OPTIONAL_CRITERION_FIELDS = ("answers", "asks", "cloze")
"""Fields a criterion has only when set (``answers``: a gold criterion's accepted answers, ``asks``: the
question that carries it, ``cloze``: a fill-in-the-blank criterion's parts); a file without them (written
before they existed) reads as before."""
ITEM_FIELDS = ("ext_id", "topic", "protocol", "question", "turns", "reference", "options", "gold", "difficulty",
               "source_chunk_ids", "meta")


def criterion_record(c: Criterion) -> dict[str, Any]:
    """One criterion as a record's ``rubric`` entry: :data:`CRITERION_FIELDS`, and those of
    :data:`OPTIONAL_CRITERION_FIELDS` it has (a gold criterion's ``answers`` and ``asks``; ``cloze``
    (``answer``, ``sentence``) on a fill-in-the-blank criterion). Before, a gold criterion was exported
    without its answers, so a benchmark exported and imported again judged it as free text."""
    record = {k: getattr(c, k) for k in CRITERION_FIELDS}
    if c.answers:
        record["answers"] = list(c.answers)
    if c.asks is not None:
        record["asks"] = c.asks
    if c.cloze is not None:
        record["cloze"] = c.cloze.to_dict()
    return record


def item_record(store: Store, item: Item, kb: str | None = None, source: str = "") -> dict[str, Any]:
    """One item as a JSONL record (see docs/benchmark-format.md)."""
    record: dict[str, Any] = {"format": FORMAT, "id": item.id, "benchmark": item.benchmark, "source": source,
                              "kb": kb, "ord": item.ord}
    for name in ITEM_FIELDS:
        record[name] = getattr(item, name)
    # Our own data_dir (benchmarks/NAME/CASE) depends on the benchmark name; import recomputes it.
    if item.meta.get("case_dir") and item.meta.get("data_dir") == data_dir_of(item.benchmark, item.meta["case_dir"]):
        record["meta"] = {k: v for k, v in item.meta.items() if k != "data_dir"}
    if has_rubric(store, item.id):
        rv = current_rubric(store, item.id)
        record["rubric"] = [criterion_record(c) for c in rv.criteria]
        record["rubric_version"] = {"id": rv.id, "version": rv.version, "author": rv.author, "note": rv.note,
                                    "created_at": rv.created_at}
    else:
        record["rubric"] = []
        record["rubric_version"] = None
    return record


def iter_records(store: Store, name: str) -> Iterator[dict[str, Any]]:
    """The records of a benchmark's items in order.

    Raises:
        BenchError: no benchmark has this name.
    """
    bench = get_benchmark(store, name)
    for item in list_items(store, name):
        yield item_record(store, item, bench.kb, bench.source)


def export_jsonl(store: Store, name: str, out: TextIO) -> int:
    """Write a benchmark as JSONL to ``out``.

    Returns:
        The number of items written.

    Raises:
        BenchError: no benchmark has this name.
    """
    n = 0
    for record in iter_records(store, name):
        out.write(json.dumps(record, ensure_ascii=False) + "\n")
        n += 1
    return n
