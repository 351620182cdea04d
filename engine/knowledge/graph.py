"""The context graph of a knowledge base (JudgeAgent, Appendix A / Algorithm 3).

Node = (entity, chunk ids, document ids). Two entities are neighbours when they share a chunk
(edge kind ``chunk``) or a document (kind ``document``), as in the paper. A document-level clique
grows with the square of a document's entities, so for a document with more than
``max_doc_entities`` entities the document edges join only entities of *adjacent* chunks; every
chunk-level edge is always kept. Edges are stored once, ``src < dst``, weight = number of shared
chunks (or documents). Each entity also gets an embedding of its name, used by path sampling.

Entities come from the kernel LLM when one is configured (``LLMEntityExtractor``) or from the
deterministic ``OfflineEntityExtractor``.
"""

from __future__ import annotations

import asyncio
import inspect
import threading
import time
from collections import Counter, defaultdict
from dataclasses import asdict, dataclass, field
from itertools import combinations
from typing import Any

import numpy as np

from engine.config import RetrievalConfig
from engine.knowledge.embed import Embedder, get_embedder
from engine.knowledge.entities import OfflineEntityExtractor
from engine.knowledge.kb import KnowledgeBaseError, ProgressFn, embed_missing, get_kb
from engine.store import Store, dumps, loads, now_iso
from engine.text.normalize import normalize_entity, sha256_text

DEFAULT_MAX_DOC_ENTITIES = 200


@dataclass
class GraphStats:
    """Counts describing a context graph."""

    kb: str
    extractor: str
    entities: int
    edges: int
    chunk_edges: int
    document_edges: int
    mean_degree: float
    largest_component: int
    components: int
    isolated: int
    chunks: int
    chunks_with_entities: int
    seconds: dict[str, float] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready dict."""
        return asdict(self)


@dataclass
class _Node:
    names: Counter = field(default_factory=Counter)
    chunks: set[int] = field(default_factory=set)
    documents: set[int] = field(default_factory=set)


def _components(n: int, edges: list[tuple[int, int]]) -> list[int]:
    """Sizes of the connected components (union-find), largest first."""
    parent = list(range(n))

    def find(x: int) -> int:
        while parent[x] != x:
            parent[x] = parent[parent[x]]
            x = parent[x]
        return x

    for a, b in edges:
        ra, rb = find(a), find(b)
        if ra != rb:
            parent[ra] = rb
    sizes = Counter(find(i) for i in range(n))
    return sorted(sizes.values(), reverse=True)


def _edges(nodes: dict[str, _Node], chunk_entities: dict[int, list[str]], chunk_doc: dict[int, int],
           chunk_ord: dict[int, int], max_doc_entities: int) -> dict[tuple[str, str], list]:
    """``(norm_a, norm_b)`` with ``a < b`` -> ``[kind, weight]``."""
    edges: dict[tuple[str, str], list] = {}
    for ents in chunk_entities.values():
        for a, b in combinations(sorted(set(ents)), 2):
            entry = edges.setdefault((a, b), ["chunk", 0])
            entry[1] += 1
    doc_chunks: dict[int, list[int]] = defaultdict(list)
    for cid, doc in chunk_doc.items():
        doc_chunks[doc].append(cid)
    for _doc, cids in doc_chunks.items():
        cids.sort(key=lambda c: chunk_ord[c])
        ents = sorted({e for c in cids for e in chunk_entities.get(c, [])})
        if len(ents) <= max_doc_entities:
            pairs = combinations(ents, 2)
        else:
            pairs_set: set[tuple[str, str]] = set()
            for c1, c2 in zip(cids, cids[1:], strict=False):
                for a in chunk_entities.get(c1, []):
                    for b in chunk_entities.get(c2, []):
                        if a != b:
                            pairs_set.add((a, b) if a < b else (b, a))
            pairs = iter(sorted(pairs_set))
        for a, b in pairs:
            entry = edges.get((a, b))
            if entry is None:
                edges[(a, b)] = ["document", 1]
            elif entry[0] == "document":
                entry[1] += 1
    return edges


async def build_graph_async(
    store: Store,
    kb_name: str,
    *,
    extractor: Any | None = None,
    embedder: Embedder | None = None,
    config: RetrievalConfig | None = None,
    max_doc_entities: int = DEFAULT_MAX_DOC_ENTITIES,
    progress: ProgressFn | None = None,
) -> GraphStats:
    """Build (or rebuild) the context graph of a knowledge base; see ``build_graph``."""
    kb = get_kb(store, kb_name)
    extractor = extractor or OfflineEntityExtractor()
    embedder = embedder or get_embedder((config or RetrievalConfig()).embedder)
    seconds: dict[str, float] = {}
    rows = store.query("SELECT id, document_id, ord, text FROM chunks WHERE kb_id = ? ORDER BY document_id, ord",
                       (kb.id,))
    if not rows:
        raise KnowledgeBaseError(f"knowledge base {kb_name!r} has no chunks; build it first")

    t0 = time.perf_counter()
    if progress:
        progress("extract", 0, len(rows))
    result = extractor.extract([r["text"] for r in rows])
    entity_lists = await result if inspect.isawaitable(result) else result
    if progress:
        progress("extract", len(rows), len(rows))
    seconds["extract"] = time.perf_counter() - t0

    nodes: dict[str, _Node] = {}
    chunk_entities: dict[int, list[str]] = {}
    chunk_doc = {r["id"]: r["document_id"] for r in rows}
    chunk_ord = {r["id"]: r["ord"] for r in rows}
    for row, names in zip(rows, entity_lists, strict=True):
        norms = []
        for name in names:
            norm = normalize_entity(name)
            if not norm:
                continue
            node = nodes.setdefault(norm, _Node())
            node.names[name] += 1
            node.chunks.add(row["id"])
            node.documents.add(row["document_id"])
            norms.append(norm)
        chunk_entities[row["id"]] = list(dict.fromkeys(norms))
    if not nodes:
        raise KnowledgeBaseError(
            f"no entities found in knowledge base {kb_name!r} ({len(rows)} chunks) by the {extractor.name} extractor")

    t0 = time.perf_counter()
    edges = _edges(nodes, chunk_entities, chunk_doc, chunk_ord, max_doc_entities)
    seconds["link"] = time.perf_counter() - t0

    t0 = time.perf_counter()
    norms = sorted(nodes)
    display = {n: nodes[n].names.most_common(1)[0][0] for n in norms}
    by_hash = {sha256_text(display[n]): display[n] for n in norms}
    embed_missing(store, embedder, by_hash, progress)
    vectors = _cached_vectors(store, embedder, list(by_hash))
    seconds["embed"] = time.perf_counter() - t0

    t0 = time.perf_counter()
    with store.transaction() as db:
        current = get_kb(store, kb_name)
        if current.version != kb.version:
            raise KnowledgeBaseError(
                f"knowledge base {kb_name!r} was rebuilt while its graph was being built; run `viva kb graph` again")
        db.execute("DELETE FROM entity_edges WHERE kb_id = ?", (kb.id,))
        db.execute("DELETE FROM entities WHERE kb_id = ?", (kb.id,))
        ids: dict[str, int] = {}
        for norm in norms:
            node = nodes[norm]
            vec = vectors[sha256_text(display[norm])]
            ids[norm] = int(db.execute(
                "INSERT INTO entities (kb_id, name, norm, chunk_ids, document_ids, vector) VALUES (?, ?, ?, ?, ?, ?)",
                (kb.id, display[norm], norm, dumps(sorted(node.chunks)), dumps(sorted(node.documents)),
                 vec.tobytes())).lastrowid)
        edge_rows = []
        for (a, b), (kind, weight) in edges.items():
            src, dst = sorted((ids[a], ids[b]))
            edge_rows.append((kb.id, src, dst, kind, float(weight)))
        store.conn.executemany(
            "INSERT INTO entity_edges (kb_id, src, dst, kind, weight) VALUES (?, ?, ?, ?, ?)", edge_rows)
        index = {norm: i for i, norm in enumerate(norms)}
        sizes = _components(len(norms), [(index[a], index[b]) for a, b in edges])
        stats = GraphStats(
            kb=kb_name, extractor=extractor.name, entities=len(norms), edges=len(edges),
            chunk_edges=sum(1 for kind, _ in edges.values() if kind == "chunk"),
            document_edges=sum(1 for kind, _ in edges.values() if kind == "document"),
            mean_degree=round(2 * len(edges) / len(norms), 3), largest_component=sizes[0] if sizes else 0,
            components=len(sizes), isolated=sum(1 for s in sizes if s == 1), chunks=len(rows),
            chunks_with_entities=sum(1 for v in chunk_entities.values() if v),
        )
        config = dict(current.config)
        config["graph"] = {**{k: v for k, v in stats.to_dict().items() if k not in ("seconds", "kb")},
                           "embedder": embedder.name, "kb_version": kb.version, "built_at": now_iso(),
                           "max_doc_entities": max_doc_entities}
        db.execute("UPDATE knowledge_bases SET config = ? WHERE id = ?", (dumps(config), kb.id))
    seconds["store"] = time.perf_counter() - t0
    stats.seconds = {k: round(v, 4) for k, v in seconds.items()}
    return stats


def build_graph(
    store: Store,
    kb_name: str,
    *,
    extractor: Any | None = None,
    embedder: Embedder | None = None,
    config: RetrievalConfig | None = None,
    max_doc_entities: int = DEFAULT_MAX_DOC_ENTITIES,
    progress: ProgressFn | None = None,
) -> GraphStats:
    """Build (or rebuild) the context graph of a knowledge base, replacing any previous one.

    Call ``build_graph_async`` instead from code already running an event loop.

    Args:
        store: the database.
        kb_name: the knowledge base.
        extractor: ``OfflineEntityExtractor`` (default) or ``LLMEntityExtractor``; anything with a
            ``name`` and an ``extract(texts) -> list[list[str]]`` (sync or async) works.
        embedder: for entity-name vectors (default: the configured embedder).
        config: retrieval settings (the embedder); defaults when None.
        max_doc_entities: above this many entities in one document, document edges join only
            entities of adjacent chunks.
        progress: called as ``progress(stage, done, total)``.

    Returns:
        Counts: entities, edges (by kind), mean degree, components.

    Raises:
        KnowledgeBaseError: unknown or empty knowledge base, or no entity found.
        engine.llm.LLMError: the LLM extractor failed for good.
    """
    return asyncio.run(build_graph_async(store, kb_name, extractor=extractor, embedder=embedder, config=config,
                                         max_doc_entities=max_doc_entities, progress=progress))


def _cached_vectors(store: Store, embedder: Embedder, hashes: list[str]) -> dict[str, np.ndarray]:
    out: dict[str, np.ndarray] = {}
    for start in range(0, len(hashes), 500):
        part = hashes[start: start + 500]
        marks = ",".join("?" * len(part))
        for h, blob in store.conn.execute(
                f"SELECT sha256, vector FROM embeddings WHERE model = ? AND sha256 IN ({marks})",
                (embedder.name, *part)):
            out[h] = np.frombuffer(blob, dtype=np.float32)
    return out


@dataclass
class ContextGraph:
    """A context graph loaded for sampling.

    Attributes:
        kb_id: the knowledge base.
        ids: entity ids, row order of ``vectors``.
        names: display names, same order.
        norms: normalised names, same order.
        chunk_ids: for each entity, the chunks that mention it.
        document_ids: for each entity, the documents that mention it.
        vectors: unit vectors of the names ``[n, dim]``.
        neighbours: for each entity row, ``{row: kind}`` of its neighbours.
        version: the graph's build time (cache key).
    """

    kb_id: int
    ids: list[int]
    names: list[str]
    norms: list[str]
    chunk_ids: list[list[int]]
    document_ids: list[list[int]]
    vectors: np.ndarray
    neighbours: list[dict[int, str]]
    version: str
    _by_norm: dict[str, int] = field(init=False, repr=False)

    def __post_init__(self) -> None:
        self._by_norm = {n: i for i, n in enumerate(self.norms)}

    def row_of(self, norm: str) -> int | None:
        """The row of an entity by normalised name, or None."""
        return self._by_norm.get(norm)


_GRAPHS: dict[tuple[str, int], ContextGraph] = {}
_GRAPH_LOCK = threading.Lock()


def load_graph(store: Store, kb_name: str) -> ContextGraph:
    """The context graph of a knowledge base, cached per process until it is rebuilt.

    Raises:
        KnowledgeBaseError: unknown knowledge base, or no graph built yet (or the knowledge base
            changed since), with the command that builds it.
    """
    kb = get_kb(store, kb_name)
    meta = kb.config.get("graph")
    if not meta or meta.get("kb_version") != kb.version:
        raise KnowledgeBaseError(
            f"knowledge base {kb_name!r} has no context graph (or it changed since); build it with "
            f"`viva kb graph {kb_name}`")
    key = (str(store.path), kb.id)
    with _GRAPH_LOCK:
        cached = _GRAPHS.get(key)
        if cached is not None and cached.version == meta["built_at"]:
            return cached
    rows = store.query("SELECT id, name, norm, chunk_ids, document_ids, vector FROM entities WHERE kb_id = ? "
                       "ORDER BY id", (kb.id,))
    row_of = {r["id"]: i for i, r in enumerate(rows)}
    neighbours: list[dict[int, str]] = [{} for _ in rows]
    for src, dst, kind in store.conn.execute("SELECT src, dst, kind FROM entity_edges WHERE kb_id = ?", (kb.id,)):
        a, b = row_of[src], row_of[dst]
        neighbours[a][b] = kind
        neighbours[b][a] = kind
    dim = len(rows[0]["vector"]) // 4 if rows else 0
    graph = ContextGraph(
        kb_id=kb.id, ids=[r["id"] for r in rows], names=[r["name"] for r in rows], norms=[r["norm"] for r in rows],
        chunk_ids=[loads(r["chunk_ids"], []) for r in rows], document_ids=[loads(r["document_ids"], []) for r in rows],
        vectors=np.frombuffer(b"".join(r["vector"] for r in rows), dtype=np.float32).reshape(len(rows), dim),
        neighbours=neighbours, version=meta["built_at"],
    )
    with _GRAPH_LOCK:
        _GRAPHS[key] = graph
    return graph
