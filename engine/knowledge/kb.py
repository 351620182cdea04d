"""Knowledge bases: build (ingest, chunk, embed, index), look up, list and delete.

A build makes the knowledge base reflect exactly the given files: new documents are added,
documents whose content hash (or the chunking settings) changed are re-chunked, documents no longer
found are removed, and unchanged documents are left alone. Embeddings are cached by chunk hash and
model, so unchanged text is never embedded twice, even across knowledge bases.

Order of work, so memory stays bounded and a crash never leaves a half-written knowledge base:
files are read one at a time; new and changed documents are chunked, embedded (each batch committed
to the content-addressed cache) and staged in batches, each in its own transaction, in a staging
knowledge base; then one SQLite transaction publishes them; then the Whoosh index, which records the
version it reflects and is rebuilt from SQLite by any reader that finds it behind. A killed build
continues from its staged documents (:func:`build_kb`).
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
from engine.knowledge.ingest import ReadReport, SourceDocument, iter_file, iter_source_files
from engine.store import Store, dumps, loads, now_iso
from engine.text.normalize import sha256_text

ProgressFn = Callable[[str, int, int], None]
"""``progress(stage, done, total)``; a build's stages: ``ingest`` (bytes), ``chunks`` (total 0: unknown),
``index``; the graph's: ``embed``, ``extract``."""

_EMBED_BATCH = 128  # texts per embedder call (and per cache commit and progress update)

SHADOW_PREFIX = ".build:"
"""An unfinished build of NAME stages its documents in the knowledge base ``.build:NAME`` (a name no user
knowledge base can have); publishing moves them into NAME in one transaction."""

BATCH_CHARS = 256_000
"""Characters of new or changed documents held before they are chunked, embedded and written."""


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
    resumed: int = 0
    """Documents an interrupted build had already staged (not chunked or embedded again)."""
    chunks: int = 0
    chunks_written: int = 0
    embedded: int = 0
    embeddings_cached: int = 0
    indexed: int = 0
    index_rebuilt: bool = False
    graph_cleared: bool = False
    bytes_read: int = 0
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
        names = [r["name"] for r in store.query("SELECT name FROM knowledge_bases WHERE substr(name, 1, 7) != ? "
                                                "ORDER BY name", (SHADOW_PREFIX,))]
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
        FROM knowledge_bases kb WHERE substr(kb.name, 1, 7) != ? ORDER BY kb.name
        """, (SHADOW_PREFIX,)
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
    """Delete a knowledge base, its documents, chunks, graph and index, and what an unfinished build of
    it staged (cached embeddings stay)."""
    kb = get_kb(store, name)
    with store.transaction() as db:
        db.execute("DELETE FROM knowledge_bases WHERE id = ? OR name = ?", (kb.id, _shadow_name(name)))
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


def _shadow_name(name: str) -> str:
    return SHADOW_PREFIX + name


def _open_staging(store: Store, name: str, settings: dict[str, Any]) -> tuple[int, int]:
    """The staging knowledge base of ``name``: the one an interrupted build left, when it was made with
    the same settings on the same version (its documents are kept), else a new, empty one.

    Returns:
        ``(staging kb id, documents already staged)``.
    """
    shadow = find_kb(store, _shadow_name(name))
    if shadow is not None and shadow.config.get("settings") == settings:
        staged = store.conn.execute("SELECT COUNT(*) FROM documents WHERE kb_id = ?", (shadow.id,)).fetchone()[0]
        return shadow.id, int(staged)
    with store.transaction() as db:
        if shadow is not None:
            db.execute("DELETE FROM knowledge_bases WHERE id = ?", (shadow.id,))
        kb_id = int(db.execute("INSERT INTO knowledge_bases (name, created_at, config) VALUES (?, ?, ?)",
                               (_shadow_name(name), now_iso(),
                                dumps({"staging_for": name, "settings": settings}))).lastrowid)
    return kb_id, 0


def _drop_staging(store: Store, shadow_id: int) -> None:
    with store.transaction() as db:
        db.execute("DELETE FROM knowledge_bases WHERE id = ?", (shadow_id,))


def _rows_by_path(store: Store, kb_id: int, paths: list[str]) -> dict[str, tuple[int, str]]:
    """path -> (document id, sha256) for those of ``paths`` stored in a knowledge base."""
    out: dict[str, tuple[int, str]] = {}
    for start in range(0, len(paths), 500):
        part = paths[start: start + 500]
        marks = ",".join("?" * len(part))
        for row in store.conn.execute(
                f"SELECT path, id, sha256 FROM documents WHERE kb_id = ? AND path IN ({marks})", (kb_id, *part)):
            out[row[0]] = (row[1], row[2])
    return out


class _Build:
    """The state of one streaming build (see :func:`build_kb`)."""

    def __init__(self, store: Store, name: str, live: KnowledgeBase | None, shadow_id: int, cc: int, ov: int,
                 embedder: Embedder, rechunk_all: bool, progress: ProgressFn | None):
        self.store, self.name, self.live, self.shadow_id = store, name, live, shadow_id
        self.cc, self.ov, self.embedder, self.rechunk_all, self.progress = cc, ov, embedder, rechunk_all, progress
        self.documents = self.unchanged = self.resumed = self.staged_chunks = 0
        self.embedded = self.cached = 0
        self.seconds = {"read": 0.0, "chunk": 0.0, "embed": 0.0, "store": 0.0}

    def flush(self, pending: list[tuple[SourceDocument, str]]) -> None:
        """Chunk, embed and stage a batch of documents (``(document, sha256)``) in one transaction."""
        if not pending:
            return
        store = self.store
        paths = [d.path for d, _ in pending]
        live = _rows_by_path(store, self.live.id, paths) if self.live is not None else {}
        staged = _rows_by_path(store, self.shadow_id, paths)
        t0 = time.perf_counter()
        work: list[tuple[SourceDocument, str, list[tuple[Chunk, str]]]] = []
        for doc, sha in pending:
            if not self.rechunk_all and live.get(doc.path, (0, ""))[1] == sha:
                self.unchanged += 1
            elif staged.get(doc.path, (0, ""))[1] == sha:
                self.resumed += 1  # staged by an interrupted build: not chunked or embedded again
            else:
                work.append((doc, sha, [(c, sha256_text(c.text)) for c in chunk_text(doc.text, self.cc, self.ov)]))
        self.seconds["chunk"] += time.perf_counter() - t0
        if not work:
            return
        t0 = time.perf_counter()
        embedded, cached = embed_missing(store, self.embedder, {h: c.text for _, _, cs in work for c, h in cs})
        self.embedded += embedded
        self.cached += cached
        self.seconds["embed"] += time.perf_counter() - t0
        t0 = time.perf_counter()
        now = now_iso()
        with store.transaction() as db:
            if store.one("SELECT 1 AS x FROM knowledge_bases WHERE id = ?", (self.shadow_id,)) is None:
                raise KnowledgeBaseError(f"knowledge base {self.name!r} was changed by another build while this one "
                                         "ran; run the build again")
            for doc, sha, chunks in work:
                if doc.path in staged:
                    db.execute("DELETE FROM documents WHERE id = ?", (staged[doc.path][0],))
                doc_id = int(db.execute(
                    "INSERT INTO documents (kb_id, path, title, sha256, n_chars, meta, created_at) "
                    "VALUES (?, ?, ?, ?, ?, ?, ?)",
                    (self.shadow_id, doc.path, doc.title, sha, len(doc.text), dumps(doc.meta), now)).lastrowid)
                store.conn.executemany(
                    "INSERT INTO chunks (kb_id, document_id, ord, text, sha256, start_char, end_char) "
                    "VALUES (?, ?, ?, ?, ?, ?, ?)",
                    [(self.shadow_id, doc_id, c.ord, c.text, h, c.start, c.end) for c, h in chunks])
                self.staged_chunks += len(chunks)
        self.seconds["store"] += time.perf_counter() - t0
        if self.progress:
            self.progress("chunks", self.staged_chunks, 0)

    def embed_live(self) -> None:
        """Vectors from this build's embedder for the chunks the knowledge base keeps (its embedder changed)."""
        if self.live is None or self.live.config.get("embedder") == self.embedder.name:
            return
        t0 = time.perf_counter()
        last = 0
        while True:
            rows = self.store.conn.execute(
                "SELECT id, sha256, text FROM chunks WHERE kb_id = ? AND id > ? ORDER BY id LIMIT 2000",
                (self.live.id, last)).fetchall()
            if not rows:
                break
            last = rows[-1][0]
            embedded, cached = embed_missing(self.store, self.embedder, {r[1]: r[2] for r in rows})
            self.embedded += embedded
            self.cached += cached
        self.seconds["embed"] += time.perf_counter() - t0


def _index_progress(chunks: Iterable[bm25.IndexedChunk], progress: ProgressFn | None, total: int):
    done = 0
    for chunk in chunks:
        yield chunk
        done += 1
        if progress and done % 1000 == 0:
            progress("index", done, total)


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
    batch_chars: int = BATCH_CHARS,
) -> BuildSummary:
    """Create or update a knowledge base from files and folders, streaming, in bounded memory.

    Files are read one at a time (JSONL and CSV record by record); new and changed documents are
    chunked, embedded and written in batches of about ``batch_chars`` characters, each batch in its
    own transaction, into a staging knowledge base (``.build:NAME``). The memory held is one batch
    (and the largest single document or JSON file), never the corpus. When every file is read,
    one transaction publishes the staged documents into NAME, removes the documents no longer found
    and bumps the version; readers never see a half-built knowledge base.

    A build that is killed continues where it stopped: the next build with the same settings finds
    its staged documents (by path and content hash) and neither chunks nor embeds them again
    (``resumed``); embeddings are cached by content hash in any case.

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
        progress: called as ``progress(stage, done, total)``: ``ingest`` (bytes of the files read, of
            all), ``chunks`` (chunks staged so far; total 0: not known ahead), ``index`` (chunks).
        batch_chars: characters of new or changed documents per staged batch.

    Returns:
        What was read, skipped, added, updated, removed, resumed, embedded and indexed.

    Raises:
        KnowledgeBaseError: nothing usable was found (the message lists what was skipped and why),
            the settings are invalid, or another build changed the knowledge base meanwhile.
    """
    validate_kb_name(name)  # before anything is written
    config = config or RetrievalConfig()
    live = find_kb(store, name)
    cc, ov = _settings(live, config, chunk_chars, overlap)
    embedder = embedder or get_embedder(config.embedder)
    old_version = live.version if live else 0
    rechunk_all = live is not None and (live.config.get("chunk_chars"), live.config.get("overlap")) != (cc, ov)
    settings = {"chunk_chars": cc, "overlap": ov, "embedder": embedder.name, "text_field": text_field,
                "text_column": text_column, "base_version": old_version}
    shadow_id, _ = _open_staging(store, name, settings)
    try:
        return _build_staged(store, home, name, paths, text_field, text_column, embedder, progress, batch_chars,
                             live, cc, ov, old_version, rechunk_all, shadow_id)
    except BaseException:
        # A build that failed before staging anything leaves no hidden ``.build:NAME`` row behind
        # (one that staged documents keeps them: the next build resumes from them).
        try:
            if store.one("SELECT 1 AS x FROM knowledge_bases WHERE id = ?", (shadow_id,)) and not store.one(
                    "SELECT 1 AS x FROM documents WHERE kb_id = ? LIMIT 1", (shadow_id,)):
                _drop_staging(store, shadow_id)
        except Exception:  # noqa: S110 - the original error is the one to report
            pass
        raise


def documents_outside(store: Store, name: str, paths: Sequence[str | Path]) -> list[str]:
    """Paths of NAME's documents that are not under any of ``paths`` (the build would remove them);
    empty for a new knowledge base. A record's path (``file#record``) counts as its file's."""
    rows = store.query("SELECT d.path FROM documents d JOIN knowledge_bases k ON k.id = d.kb_id WHERE k.name = ? "
                       "ORDER BY d.path", (name,))
    roots = [Path(p).expanduser().resolve() for p in paths]
    out = []
    for r in rows:
        doc = Path(r["path"].split("#", 1)[0])
        if not any(doc == root or root in doc.parents for root in roots):
            out.append(r["path"])
    return out


def validate_kb_name(name: str) -> str:
    """Check a knowledge-base name: the rule of benchmark names (1-100 letters, digits, ``.``, ``_`` or
    ``-``, starting with a letter or digit; :data:`engine.home.NAME_RE`).

    Raises:
        KnowledgeBaseError: any other name (a newline, a control character, ``*?<>|``, a path, too long);
            the message shows the name with its controls visible and cut to 60 characters.
    """
    from engine.home import NAME_RE
    from engine.termsafe import termsafe

    if not isinstance(name, str) or not NAME_RE.match(name):
        shown = repr(name[:60] + ("…" if len(name) > 60 else "")) if isinstance(name, str) else repr(name)
        raise KnowledgeBaseError(f"invalid knowledge base name {termsafe(shown)}: use 1-100 letters, digits, "
                                 "'.', '_' or '-', starting with a letter or digit")
    return name


def _build_staged(store: Store, home: Path, name: str, paths: Sequence[str | Path], text_field: str | None,
                  text_column: str | None, embedder: Embedder, progress: ProgressFn | None, batch_chars: int,
                  live: Any, cc: int, ov: int, old_version: int, rechunk_all: bool, shadow_id: int) -> BuildSummary:
    build = _Build(store, name, live, shadow_id, cc, ov, embedder, rechunk_all, progress)

    report = ReadReport()
    files = list(iter_source_files(paths, report))
    sizes = [f.stat().st_size for f in files]
    total_bytes, done_bytes = sum(sizes), 0
    conn = store.conn
    conn.execute("CREATE TEMP TABLE IF NOT EXISTS kb_build_seen (path TEXT PRIMARY KEY)")
    conn.execute("DELETE FROM temp.kb_build_seen")
    pending: list[tuple[SourceDocument, str]] = []
    pending_chars = 0
    if progress:
        progress("ingest", 0, total_bytes)
        progress("chunks", 0, 0)
    for file, size in zip(files, sizes, strict=True):
        t0 = time.perf_counter()
        in_file = 0  # characters of this file's documents so far: its progress, for large files
        for doc in iter_file(file, report, text_field, text_column):
            in_file += len(doc.text)
            if conn.execute("INSERT OR IGNORE INTO temp.kb_build_seen (path) VALUES (?)", (doc.path,)).rowcount == 0:
                continue  # the same document twice: the first wins
            build.documents += 1
            pending.append((doc, sha256_text(doc.text)))
            pending_chars += len(doc.text)
            if pending_chars >= batch_chars:
                build.seconds["read"] += time.perf_counter() - t0
                build.flush(pending)
                pending, pending_chars = [], 0
                if progress:  # bytes done: read, and every document in them chunked, embedded and staged
                    progress("ingest", done_bytes + min(in_file, size), total_bytes)
                t0 = time.perf_counter()
        build.seconds["read"] += time.perf_counter() - t0
        done_bytes += size
    build.flush(pending)
    del pending
    if progress:
        progress("ingest", total_bytes, total_bytes)
    if not build.documents:
        if not store.one("SELECT 1 AS x FROM documents WHERE kb_id = ? LIMIT 1", (shadow_id,)):
            _drop_staging(store, shadow_id)
        skipped = [str(i) for i in report.bad_files + report.bad_records]
        detail = ("; skipped: " + "; ".join(skipped[:10]) + (" ..." if len(skipped) > 10 else "")) if skipped else ""
        raise KnowledgeBaseError(
            f"no text found in {', '.join(str(p) for p in paths)} ({report.files_read} files read, "
            f"{report.files_ignored} ignored){detail}; knowledge base {name!r} was not changed")
    build.embed_live()

    t0 = time.perf_counter()
    with store.transaction() as db:
        current = find_kb(store, name)
        if (current.version if current else 0) != old_version or not store.one(
                "SELECT 1 AS x FROM knowledge_bases WHERE id = ?", (shadow_id,)):
            raise KnowledgeBaseError(
                f"knowledge base {name!r} was changed by another build while this one ran; run the build again")
        now = now_iso()
        base_config = dict(current.config) if current else {}
        if current is None:
            kb_id = int(db.execute("INSERT INTO knowledge_bases (name, created_at, config) VALUES (?, ?, ?)",
                                   (name, now, dumps({}))).lastrowid)
        else:
            kb_id = current.id
        # staged documents this build did not see (an earlier attempt over other paths) are dropped
        db.execute("DELETE FROM documents WHERE kb_id = ? AND path NOT IN (SELECT path FROM temp.kb_build_seen)",
                   (shadow_id,))
        removed = [r[0] for r in conn.execute(
            "SELECT id FROM documents WHERE kb_id = ? AND path NOT IN (SELECT path FROM temp.kb_build_seen)", (kb_id,))]
        replaced = [r[0] for r in conn.execute(
            "SELECT id FROM documents WHERE kb_id = ? AND path IN (SELECT path FROM documents WHERE kb_id = ?)",
            (kb_id, shadow_id))]
        written_doc_ids = [r[0] for r in conn.execute("SELECT id FROM documents WHERE kb_id = ?", (shadow_id,))]
        chunks_written = conn.execute("SELECT COUNT(*) FROM chunks WHERE kb_id = ?", (shadow_id,)).fetchone()[0]
        stale_doc_ids = removed + replaced
        conn.executemany("DELETE FROM documents WHERE id = ?", [(i,) for i in stale_doc_ids])
        db.execute("UPDATE documents SET kb_id = ? WHERE kb_id = ?", (kb_id, shadow_id))
        db.execute("UPDATE chunks SET kb_id = ? WHERE kb_id = ?", (kb_id, shadow_id))
        db.execute("DELETE FROM knowledge_bases WHERE id = ?", (shadow_id,))
        changed = bool(written_doc_ids or removed)
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
        total_chunks = conn.execute("SELECT COUNT(*) FROM chunks WHERE kb_id = ?", (kb_id,)).fetchone()[0]
    conn.execute("DELETE FROM temp.kb_build_seen")
    build.seconds["store"] += time.perf_counter() - t0

    t0 = time.perf_counter()
    index_path = bm25.index_dir(home, name)
    stamp = bm25.read_stamp(index_path)
    indexed = 0
    rebuilt = False
    if stamp == version:
        pass
    elif stamp == old_version and current is not None:
        if progress:
            progress("index", 0, chunks_written)
        indexed = bm25.update_index(index_path, stale_doc_ids, _index_progress(
            _indexed_chunks(store, kb_id, written_doc_ids), progress, chunks_written), version)
    else:
        if progress:
            progress("index", 0, total_chunks)
        indexed = bm25.rebuild_index(index_path, _index_progress(_indexed_chunks(store, kb_id), progress, total_chunks),
                                     version)
        rebuilt = True
    if progress:
        progress("index", indexed, indexed)
    seconds = {**build.seconds, "index": time.perf_counter() - t0}

    n_replaced = len(replaced)
    return BuildSummary(
        name=name, kb_id=kb_id, version=version, files_read=report.files_read,
        files_ignored=report.files_ignored, bad_files=[str(i) for i in report.bad_files],
        bad_records=[str(i) for i in report.bad_records], documents=build.documents,
        added=len(written_doc_ids) - n_replaced, updated=n_replaced, unchanged=build.unchanged,
        removed=len(removed), resumed=build.resumed, chunks=int(total_chunks), chunks_written=int(chunks_written),
        embedded=build.embedded, embeddings_cached=build.cached, indexed=indexed, index_rebuilt=rebuilt,
        graph_cleared=graph_cleared, bytes_read=total_bytes,
        seconds={k: round(v, 4) for k, v in seconds.items()},
    )
