"""Knowledge bases: build (ingest, chunk, embed, index), look up, list and delete.

A build makes the knowledge base reflect exactly the given files: new documents are added,
documents whose content hash (or the chunking settings) changed are re-chunked, documents no longer
found are removed, and unchanged documents are left alone. Embeddings are cached by chunk hash and
model, so unchanged text is never embedded twice, even across knowledge bases.

Order of work, so a crash never leaves a half-written knowledge base: read and chunk (no lock),
embed what is missing (each batch committed to the content-addressed cache), then one SQLite
transaction for documents and chunks, then the Whoosh index, which records the version it reflects
and is rebuilt from SQLite by any reader that finds it behind.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from engine.config import RetrievalConfig
from engine.knowledge import bm25
from engine.knowledge.chunking import Chunk, chunk_text
from engine.knowledge.embed import Embedder, get_embedder
from engine.knowledge.ingest import ReadReport, SourceDocument, iter_source_files, read_file
from engine.knowledge.text import sha256_text
from engine.store import Store, dumps, loads, now_iso

ProgressFn = Callable[[str, int, int], None]
"""``progress(stage, done, total)``; stages: ``read``, ``chunk``, ``embed``, ``index``."""

_EMBED_BATCH = 128  # texts per embedder call (and per cache commit and progress update)


class KnowledgeBaseError(Exception):
    """A knowledge base that does not exist, or a build that cannot produce one."""


@dataclass(frozen=True)
class KnowledgeBase:
    """A row of ``knowledge_bases`` with its parsed config.

    ``config`` holds ``version`` (bumped by every build that changes content), ``chunk_chars``,
    ``overlap``, ``embedder`` (the model id of its vectors), ``paths`` and ``built_at``, and
    ``graph`` once a context graph was built.
    """

    id: int
    name: str
    created_at: str
    config: dict[str, Any]

    @property
    def version(self) -> int:
        """The content version: bumped by every build that changes content (0 before the first)."""
        return int(self.config.get("version", 0))


@dataclass
class BuildSummary:
    """What a build did. Counts are documents unless named otherwise; ``seconds`` per stage."""

    name: str
    kb_id: int
    version: int
    files_read: int = 0
    files_ignored: int = 0
    bad_files: list[str] = field(default_factory=list)
    bad_records: list[str] = field(default_factory=list)
    documents: int = 0
    added: int = 0
    updated: int = 0
    unchanged: int = 0
    removed: int = 0
    chunks: int = 0
    chunks_written: int = 0
    embedded: int = 0
    embeddings_cached: int = 0
    indexed: int = 0
    index_rebuilt: bool = False
    graph_cleared: bool = False
    seconds: dict[str, float] = field(default_factory=dict)

    @property
    def changed(self) -> bool:
        """True when the build added, updated or removed a document."""
        return bool(self.added or self.updated or self.removed)

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready dict."""
        return asdict(self)


def _row_to_kb(row: dict[str, Any]) -> KnowledgeBase:
    return KnowledgeBase(row["id"], row["name"], row["created_at"], loads(row["config"], {}))


def find_kb(store: Store, name: str) -> KnowledgeBase | None:
    """The knowledge base with this name, or None."""
    row = store.one("SELECT * FROM knowledge_bases WHERE name = ?", (name,))
    return _row_to_kb(row) if row else None


def get_kb(store: Store, name: str) -> KnowledgeBase:
    """The knowledge base with this name.

    Raises:
        KnowledgeBaseError: there is none; the message lists the ones that exist.
    """
    kb = find_kb(store, name)
    if kb is None:
        names = [r["name"] for r in store.query("SELECT name FROM knowledge_bases ORDER BY name")]
        known = f"existing: {', '.join(names)}" if names else "there are none yet"
        raise KnowledgeBaseError(
            f"no knowledge base named {name!r} ({known}); create it with `viva kb build {name} PATH...`")
    return kb


def list_kbs(store: Store) -> list[dict[str, Any]]:
    """Every knowledge base with its document, chunk and entity counts."""
    rows = store.query(
        """
        SELECT kb.id, kb.name, kb.created_at, kb.config,
               (SELECT COUNT(*) FROM documents d WHERE d.kb_id = kb.id) AS documents,
               (SELECT COUNT(*) FROM chunks c WHERE c.kb_id = kb.id) AS chunks,
               (SELECT COUNT(*) FROM entities e WHERE e.kb_id = kb.id) AS entities
        FROM knowledge_bases kb ORDER BY kb.name
        """
    )
    out = []
    for r in rows:
        config = loads(r.pop("config"), {})
        r.update(version=config.get("version", 0), built_at=config.get("built_at"),
                 embedder=config.get("embedder"), chunk_chars=config.get("chunk_chars"),
                 overlap=config.get("overlap"))
        out.append(r)
    return out


def delete_kb(store: Store, home: Path, name: str) -> None:
    """Delete a knowledge base, its documents, chunks, graph and index (cached embeddings stay)."""
    kb = get_kb(store, name)
    with store.transaction() as db:
        db.execute("DELETE FROM knowledge_bases WHERE id = ?", (kb.id,))
    bm25.delete_index(home, name)


def get_chunks(store: Store, chunk_ids: Sequence[int]) -> dict[int, dict[str, Any]]:
    """Chunks by id, each with ``id, document_id, ord, text, sha256, document_title, document_path``."""
    out: dict[int, dict[str, Any]] = {}
    ids = list(dict.fromkeys(int(c) for c in chunk_ids))
    for start in range(0, len(ids), 500):
        part = ids[start: start + 500]
        marks = ",".join("?" * len(part))
        for row in store.query(
            f"""SELECT c.id, c.document_id, c.ord, c.text, c.sha256, d.title AS document_title,
                       d.path AS document_path
                FROM chunks c JOIN documents d ON d.id = c.document_id WHERE c.id IN ({marks})""",
            tuple(part),
        ):
            out[row["id"]] = row
    return out


def _missing_hashes(store: Store, model: str, hashes: Iterable[str]) -> set[str]:
    wanted = list(dict.fromkeys(hashes))
    present: set[str] = set()
    for start in range(0, len(wanted), 500):
        part = wanted[start: start + 500]
        marks = ",".join("?" * len(part))
        present.update(r[0] for r in store.conn.execute(
            f"SELECT sha256 FROM embeddings WHERE model = ? AND sha256 IN ({marks})", (model, *part)))
    return set(wanted) - present


def embed_missing(store: Store, embedder: Embedder, texts_by_hash: dict[str, str],
                  progress: ProgressFn | None = None) -> tuple[int, int]:
    """Embed the texts whose hash has no vector for this model yet, and cache them.

    Returns:
        ``(embedded, already_cached)``.
    """
    missing = sorted(_missing_hashes(store, embedder.name, texts_by_hash))
    cached = len(texts_by_hash) - len(missing)
    # Similar lengths side by side, so each embedder call pads little (it sorts by tokens again).
    missing.sort(key=lambda h: len(texts_by_hash[h]))
    done = 0
    if progress:
        progress("embed", 0, len(missing))
    for start in range(0, len(missing), _EMBED_BATCH):
        part = missing[start: start + _EMBED_BATCH]
        vectors = embedder.embed([texts_by_hash[h] for h in part])
        with store.transaction():
            store.conn.executemany(
                "INSERT OR IGNORE INTO embeddings (model, sha256, dim, vector) VALUES (?, ?, ?, ?)",
                [(embedder.name, h, int(v.shape[0]), v.astype(np.float32).tobytes()) for h, v in zip(part, vectors,
                                                                                                  strict=True)],
            )
        done += len(part)
        if progress:
            progress("embed", done, len(missing))
    return len(missing), cached


def _indexed_chunks(store: Store, kb_id: int, document_ids: Iterable[int] | None = None):
    if document_ids is None:
        rows = store.conn.execute(
            "SELECT id, document_id, ord, text FROM chunks WHERE kb_id = ? ORDER BY id", (kb_id,))
        yield from (bm25.IndexedChunk(*r) for r in rows)
        return
    ids = list(document_ids)
    for start in range(0, len(ids), 500):
        part = ids[start: start + 500]
        marks = ",".join("?" * len(part))
        rows = store.conn.execute(
            f"SELECT id, document_id, ord, text FROM chunks WHERE document_id IN ({marks}) ORDER BY id", part)
        yield from (bm25.IndexedChunk(*r) for r in rows)


def ensure_index(store: Store, home: Path, kb: KnowledgeBase) -> bool:
    """Rebuild the BM25 index from SQLite when it is missing or behind; True if it was rebuilt."""
    path = bm25.index_dir(home, kb.name)
    if bm25.read_stamp(path) == kb.version:
        return False
    bm25.rebuild_index(path, _indexed_chunks(store, kb.id), kb.version)
    return True


def _settings(kb: KnowledgeBase | None, config: RetrievalConfig, chunk_chars: int | None,
              overlap: int | None) -> tuple[int, int]:
    cc = chunk_chars if chunk_chars is not None else (kb.config.get("chunk_chars") if kb else None)
    ov = overlap if overlap is not None else (kb.config.get("overlap") if kb else None)
    cc = int(cc if cc is not None else config.chunk_chars)
    ov = int(ov if ov is not None else config.overlap)
    if cc <= 50 or ov < 0 or ov * 2 >= cc:
        raise KnowledgeBaseError(
            f"chunk size {cc} and overlap {ov} are not usable: need chunk size > 50 and "
            "0 <= overlap < chunk size / 2")
    return cc, ov


def _read_all(paths: Sequence[str | Path], text_field: str | None, text_column: str | None,
              progress: ProgressFn | None) -> tuple[list[SourceDocument], ReadReport]:
    report = ReadReport()
    files = list(iter_source_files(paths, report))
    docs: list[SourceDocument] = []
    seen: set[str] = set()
    if progress:
        progress("read", 0, len(files))
    for i, file in enumerate(files, start=1):
        for doc in read_file(file, report, text_field, text_column):
            if doc.path not in seen:
                seen.add(doc.path)
                docs.append(doc)
        if progress:
            progress("read", i, len(files))
    return docs, report


def build_kb(
    store: Store,
    home: Path,
    name: str,
    paths: Sequence[str | Path],
    *,
    chunk_chars: int | None = None,
    overlap: int | None = None,
    text_field: str | None = None,
    text_column: str | None = None,
    config: RetrievalConfig | None = None,
    embedder: Embedder | None = None,
    progress: ProgressFn | None = None,
) -> BuildSummary:
    """Create or update a knowledge base from files and folders.

    Args:
        store: the database.
        home: the data home (the index goes under ``home/indexes/<name>``).
        name: the knowledge base's name.
        paths: files and folders (.txt, .md, .json, .jsonl, .csv).
        chunk_chars: chunk size cap; default: the knowledge base's previous setting, else config.
        overlap: chunk overlap in characters; default as for ``chunk_chars``.
        text_field: JSON/JSONL: index only this field of each record.
        text_column: CSV: index only this column of each row.
        config: retrieval settings (chunking defaults, embedder); default settings when None.
        embedder: use this embedder instead of the configured one.
        progress: called as ``progress(stage, done, total)`` while working.

    Returns:
        What was read, skipped, added, updated, removed, embedded and indexed.

    Raises:
        KnowledgeBaseError: nothing usable was found (the message lists what was skipped and why),
            the settings are invalid, or another build changed the knowledge base meanwhile.
    """
    name = name.strip()
    if not name or "/" in name or "\\" in name or name.startswith("."):
        raise KnowledgeBaseError(f"invalid knowledge base name {name!r}: use letters, digits, '-' or '_'")
    config = config or RetrievalConfig()
    seconds: dict[str, float] = {}
    kb = find_kb(store, name)
    cc, ov = _settings(kb, config, chunk_chars, overlap)

    t0 = time.perf_counter()
    docs, report = _read_all(paths, text_field, text_column, progress)
    seconds["read"] = time.perf_counter() - t0
    if not docs:
        skipped = [str(i) for i in report.bad_files + report.bad_records]
        detail = ("; skipped: " + "; ".join(skipped[:10]) + (" ..." if len(skipped) > 10 else "")) if skipped else ""
        raise KnowledgeBaseError(
            f"no text found in {', '.join(str(p) for p in paths)} ({report.files_read} files read, "
            f"{report.files_ignored} ignored){detail}; knowledge base {name!r} was not changed")

    embedder = embedder or get_embedder(config.embedder)
    old_version = kb.version if kb else 0
    rechunk_all = kb is not None and (kb.config.get("chunk_chars"), kb.config.get("overlap")) != (cc, ov)
    existing: dict[str, tuple[int, str]] = {}
    if kb is not None:
        existing = {r["path"]: (r["id"], r["sha256"]) for r in store.query(
            "SELECT id, path, sha256 FROM documents WHERE kb_id = ?", (kb.id,))}

    doc_hashes = {d.path: sha256_text(d.text) for d in docs}
    to_write = [d for d in docs if d.path not in existing or rechunk_all or existing[d.path][1] != doc_hashes[d.path]]
    writing = {d.path for d in to_write}
    unchanged = [d for d in docs if d.path not in writing]
    removed_paths = sorted(set(existing) - set(doc_hashes))

    t0 = time.perf_counter()
    chunked: dict[str, list[Chunk]] = {}
    if progress:
        progress("chunk", 0, len(to_write))
    for i, doc in enumerate(to_write, start=1):
        chunked[doc.path] = chunk_text(doc.text, cc, ov)
        if progress and (i % 200 == 0 or i == len(to_write)):
            progress("chunk", i, len(to_write))
    seconds["chunk"] = time.perf_counter() - t0

    # Every chunk the knowledge base will hold needs a vector from this embedder.
    texts_by_hash = {sha256_text(c.text): c.text for cs in chunked.values() for c in cs}
    if kb is not None and (kb.config.get("embedder") != embedder.name):
        for row in store.conn.execute(
            "SELECT c.sha256, c.text FROM chunks c JOIN documents d ON d.id = c.document_id "
            "WHERE c.kb_id = ?", (kb.id,)):
            texts_by_hash.setdefault(row[0], row[1])
    t0 = time.perf_counter()
    embedded, cached = embed_missing(store, embedder, texts_by_hash, progress)
    seconds["embed"] = time.perf_counter() - t0

    t0 = time.perf_counter()
    changed = bool(to_write or removed_paths)
    written_doc_ids: list[int] = []
    stale_doc_ids: list[int] = []
    chunks_written = 0
    with store.transaction() as db:
        current = find_kb(store, name)
        if (current.version if current else 0) != old_version:
            raise KnowledgeBaseError(
                f"knowledge base {name!r} was changed by another build while this one ran; run the build again")
        now = now_iso()
        base_config = dict(current.config) if current else {}
        if current is None:
            kb_id = int(db["knowledge_bases"].insert(
                {"name": name, "created_at": now, "config": dumps({})}).last_pk)  # type: ignore[arg-type]
        else:
            kb_id = current.id
        for path in removed_paths:
            stale_doc_ids.append(existing[path][0])
            db.execute("DELETE FROM documents WHERE id = ?", (existing[path][0],))
        for doc in to_write:
            row = {"kb_id": kb_id, "path": doc.path, "title": doc.title, "sha256": doc_hashes[doc.path],
                   "n_chars": len(doc.text), "meta": dumps(doc.meta), "created_at": now}
            if doc.path in existing:
                doc_id = existing[doc.path][0]
                stale_doc_ids.append(doc_id)
                db.execute("DELETE FROM chunks WHERE document_id = ?", (doc_id,))
                db.execute("UPDATE documents SET title = ?, sha256 = ?, n_chars = ?, meta = ? WHERE id = ?",
                           (doc.title, row["sha256"], row["n_chars"], row["meta"], doc_id))
            else:
                doc_id = int(db.execute(
                    "INSERT INTO documents (kb_id, path, title, sha256, n_chars, meta, created_at) "
                    "VALUES (:kb_id, :path, :title, :sha256, :n_chars, :meta, :created_at)", row).lastrowid)
            written_doc_ids.append(doc_id)
            store.conn.executemany(
                "INSERT INTO chunks (kb_id, document_id, ord, text, sha256, start_char, end_char) "
                "VALUES (?, ?, ?, ?, ?, ?, ?)",
                [(kb_id, doc_id, c.ord, c.text, sha256_text(c.text), c.start, c.end) for c in chunked[doc.path]],
            )
            chunks_written += len(chunked[doc.path])
        graph_cleared = False
        if changed and current is not None:
            graph_cleared = bool(store.one("SELECT 1 AS x FROM entities WHERE kb_id = ? LIMIT 1", (kb_id,)))
            db.execute("DELETE FROM entities WHERE kb_id = ?", (kb_id,))
            db.execute("DELETE FROM entity_edges WHERE kb_id = ?", (kb_id,))
            base_config.pop("graph", None)
        version = old_version + 1 if (changed or current is None or base_config.get("embedder") != embedder.name) \
            else old_version
        base_config.update(
            version=version, chunk_chars=cc, overlap=ov, embedder=embedder.name,
            paths=[str(Path(p).expanduser().resolve()) for p in paths],
            text_field=text_field, text_column=text_column,
            built_at=now if version != old_version else base_config.get("built_at", now),
        )
        db.execute("UPDATE knowledge_bases SET config = ? WHERE id = ?", (dumps(base_config), kb_id))
        total_chunks = store.conn.execute("SELECT COUNT(*) FROM chunks WHERE kb_id = ?", (kb_id,)).fetchone()[0]
    seconds["store"] = time.perf_counter() - t0

    t0 = time.perf_counter()
    index_path = bm25.index_dir(home, name)
    stamp = bm25.read_stamp(index_path)
    indexed = 0
    rebuilt = False
    if stamp == version:
        pass
    elif stamp == old_version and current is not None:
        added = list(_indexed_chunks(store, kb_id, written_doc_ids))
        if progress:
            progress("index", 0, len(added))
        indexed = bm25.update_index(index_path, stale_doc_ids, added, version)
    else:
        all_chunks = list(_indexed_chunks(store, kb_id))
        if progress:
            progress("index", 0, len(all_chunks))
        indexed = bm25.rebuild_index(index_path, all_chunks, version)
        rebuilt = True
    if progress:
        progress("index", indexed, indexed)
    seconds["index"] = time.perf_counter() - t0

    return BuildSummary(
        name=name, kb_id=kb_id, version=version, files_read=report.files_read,
        files_ignored=report.files_ignored, bad_files=[str(i) for i in report.bad_files],
        bad_records=[str(i) for i in report.bad_records], documents=len(docs),
        added=sum(1 for d in to_write if d.path not in existing),
        updated=sum(1 for d in to_write if d.path in existing), unchanged=len(unchanged),
        removed=len(removed_paths), chunks=int(total_chunks), chunks_written=chunks_written,
        embedded=embedded, embeddings_cached=cached, indexed=indexed, index_rebuilt=rebuilt,
        graph_cleared=graph_cleared, seconds={k: round(v, 4) for k, v in seconds.items()},
    )
