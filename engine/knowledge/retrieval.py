"""Retrieval over a knowledge base: BM25, dense (cosine) and hybrid (reciprocal-rank fusion).

Every later stage (benchmark generation, the interview engine, the offline kernel) calls
``search``. Per process, the Whoosh searcher and the embedding matrix of a knowledge base are
cached and reused until the knowledge base's version changes.
"""

from __future__ import annotations

import threading
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, Literal

import numpy as np

from engine.config import RetrievalConfig
from engine.knowledge import bm25
from engine.knowledge.embed import Embedder, get_embedder
from engine.knowledge.kb import KnowledgeBase, KnowledgeBaseError, ensure_index, get_chunks, get_kb
from engine.store import Store

Mode = Literal["bm25", "dense", "hybrid"]
MODES: tuple[str, ...] = ("bm25", "dense", "hybrid")


@dataclass
class Hit:
    """One retrieved chunk.

    Attributes:
        chunk_id: the chunk's id.
        document_id: its document's id.
        document_title: its document's title.
        text: the chunk text.
        score: the score that ranked it (BM25 score, cosine, or fused RRF score).
        scores: per ranker: ``bm25`` and ``dense`` (present when that ranker retrieved the chunk),
            ``rrf`` for hybrid.
        rank: 1-based position in the results.
        ranks: per ranker, the 1-based rank the chunk had in that ranker's list.
    """

    chunk_id: int
    document_id: int
    document_title: str
    text: str
    score: float
    scores: dict[str, float] = field(default_factory=dict)
    rank: int = 0
    ranks: dict[str, int] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready dict."""
        return asdict(self)


@dataclass
class _Matrix:
    version: int
    model: str
    chunk_ids: np.ndarray
    vectors: np.ndarray


_MATRICES: dict[tuple[str, int], _Matrix] = {}
_MATRIX_LOCK = threading.Lock()


def chunk_matrix(store: Store, kb: KnowledgeBase, embedder: Embedder) -> tuple[np.ndarray, np.ndarray]:
    """The knowledge base's chunk ids and their unit vectors ``[n, dim]`` (cached per version).

    Raises:
        KnowledgeBaseError: the knowledge base was embedded with another model.
    """
    built_with = kb.config.get("embedder")
    if built_with != embedder.name:
        raise KnowledgeBaseError(
            f"knowledge base {kb.name!r} was embedded with {built_with} but the configured embedder is "
            f"{embedder.name}; run `viva kb build {kb.name} ...` again to re-embed it")
    key = (str(store.path), kb.id)
    with _MATRIX_LOCK:
        cached = _MATRICES.get(key)
        if cached is not None and cached.version == kb.version and cached.model == embedder.name:
            return cached.chunk_ids, cached.vectors
    rows = store.conn.execute(
        "SELECT c.id, e.vector FROM chunks c JOIN embeddings e ON e.sha256 = c.sha256 AND e.model = ? "
        "WHERE c.kb_id = ? ORDER BY c.id", (embedder.name, kb.id)).fetchall()
    ids = np.fromiter((r[0] for r in rows), dtype=np.int64, count=len(rows))
    vectors = np.frombuffer(b"".join(r[1] for r in rows), dtype=np.float32).reshape(len(rows), embedder.dim) \
        if rows else np.zeros((0, embedder.dim), dtype=np.float32)
    with _MATRIX_LOCK:
        _MATRICES[key] = _Matrix(kb.version, embedder.name, ids, vectors)
    return ids, vectors


def _dense(store: Store, kb: KnowledgeBase, embedder: Embedder, query: str, limit: int) -> list[tuple[int, float]]:
    ids, vectors = chunk_matrix(store, kb, embedder)
    if len(ids) == 0:
        return []
    sims = vectors @ embedder.embed_one(query)
    limit = min(limit, len(ids))
    top = np.argpartition(-sims, limit - 1)[:limit]
    top = top[np.argsort(-sims[top], kind="stable")]
    return [(int(ids[i]), float(sims[i])) for i in top]


def _bm25(store: Store, home: Path, kb: KnowledgeBase, query: str, limit: int) -> list[tuple[int, float]]:
    ensure_index(store, home, kb)
    return bm25.search_index(bm25.index_dir(home, kb.name), query, limit, kb.version)


def rrf(rankings: dict[str, list[tuple[int, float]]], k: int = 60) -> list[tuple[int, float]]:
    """Reciprocal-rank fusion: ``score(d) = sum over rankers of 1 / (k + rank(d))``, best first.

    Ties are broken by the best single rank, then by chunk id, so the order is deterministic.
    """
    fused: dict[int, float] = {}
    best: dict[int, int] = {}
    for ranking in rankings.values():
        for rank, (cid, _score) in enumerate(ranking, start=1):
            fused[cid] = fused.get(cid, 0.0) + 1.0 / (k + rank)
            best[cid] = min(best.get(cid, rank), rank)
    return sorted(fused.items(), key=lambda kv: (-kv[1], best[kv[0]], kv[0]))


def search(
    store: Store,
    home: Path,
    kb_name: str,
    query: str,
    k: int = 5,
    mode: str = "hybrid",
    *,
    config: RetrievalConfig | None = None,
    embedder: Embedder | None = None,
    candidates: int | None = None,
) -> list[Hit]:
    """Retrieve the chunks of a knowledge base that best match a query.

    Args:
        store: the database.
        home: the data home (where the BM25 index lives).
        kb_name: the knowledge base.
        query: free text, any language the analyser and encoder handle.
        k: how many hits to return.
        mode: ``bm25``, ``dense`` or ``hybrid`` (reciprocal-rank fusion of the two).
        config: retrieval settings (``rrf_k`` and the embedder); defaults when None.
        embedder: use this embedder instead of the configured one.
        candidates: for hybrid, how many hits each ranker contributes (default ``max(50, 4k)``).

    Returns:
        Up to ``k`` hits, best first, ``rank`` 1-based.

    Raises:
        KnowledgeBaseError: unknown knowledge base, or embedded with another model.
        ValueError: unknown mode or ``k < 1``.
    """
    if mode not in MODES:
        raise ValueError(f"unknown retrieval mode {mode!r}; use one of {', '.join(MODES)}")
    if k < 1:
        raise ValueError("k must be at least 1")
    config = config or RetrievalConfig()
    kb = get_kb(store, kb_name)
    if not query.strip():
        return []
    rankings: dict[str, list[tuple[int, float]]] = {}
    depth = k if mode != "hybrid" else (candidates or max(50, 4 * k))
    if mode in ("bm25", "hybrid"):
        rankings["bm25"] = _bm25(store, home, kb, query, depth)
    if mode in ("dense", "hybrid"):
        rankings["dense"] = _dense(store, kb, embedder or get_embedder(config.embedder), query, depth)
    if mode == "hybrid":
        ordered = rrf(rankings, config.rrf_k)[:k]
    else:
        ordered = rankings[mode][:k]
    per_ranker = {name: {cid: (score, rank) for rank, (cid, score) in enumerate(r, start=1)}
                  for name, r in rankings.items()}
    chunks = get_chunks(store, [cid for cid, _ in ordered])
    hits = []
    for rank, (cid, score) in enumerate(ordered, start=1):
        row = chunks.get(cid)
        if row is None:  # the index was ahead of the database (concurrent build); skip it
            continue
        scores = {name: round(m[cid][0], 6) for name, m in per_ranker.items() if cid in m}
        ranks = {name: m[cid][1] for name, m in per_ranker.items() if cid in m}
        if mode == "hybrid":
            scores["rrf"] = round(score, 6)
        hits.append(Hit(chunk_id=cid, document_id=row["document_id"], document_title=row["document_title"],
                        text=row["text"], score=round(score, 6), scores=scores, rank=rank, ranks=ranks))
    return hits
