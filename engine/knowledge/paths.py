"""Knowledge-path sampling on the context graph (JudgeAgent, Algorithm 4, with its code's defaults).

From a seed question: its entities are matched to the most similar graph entity (an exact
normalised-name match counts as similarity 1; ties go to the entity with the chunk most similar to
the question), and one of that entity's chunks is taken, chosen like every later chunk. Each
further hop moves to a neighbour: among the (at most) 5 unvisited neighbours most similar to the
current entity, and then among the (at most) 5 unused chunks of that neighbour most similar to the
question, the best is taken with probability 0.7, otherwise one of the others uniformly. A walk
that reaches an entity with no unvisited neighbour ends early.

For ``rounds`` extension rounds of ``hops`` hops each, one path of ``hops + rounds - 1`` hops is
sampled and cut into overlapping windows ``path[i : i + hops]``, one per round (upstream's
``sample_hop + max_extend_rounds - 1``). A seeded RNG makes the path reproducible.
"""

from __future__ import annotations

import random
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from engine.config import RetrievalConfig
from engine.knowledge.embed import Embedder, get_embedder
from engine.knowledge.entities import OfflineEntityExtractor
from engine.knowledge.graph import ContextGraph, load_graph
from engine.knowledge.kb import KnowledgeBaseError, get_chunks, get_kb
from engine.knowledge.retrieval import chunk_matrix
from engine.store import Store
from engine.text.normalize import normalize_entity

TOP_ENTITIES = 5
TOP_CHUNKS = 5
P_BEST = 0.7


@dataclass
class Hop:
    """One step of a knowledge path: an entity and the chunk taken for it.

    Attributes:
        entity: the entity's display name.
        entity_id: its id in ``entities``.
        chunk_id: the chunk taken.
        document_id: the chunk's document.
        document_title: that document's title.
        text: the chunk text.
        question_similarity: cosine between the chunk and the seed question.
        entity_similarity: cosine between this entity and the previous one (for the first hop:
            the best match with the question's entities).
        via: ``seed`` for the first hop, else the kind of the edge followed (``chunk`` or
            ``document``).
    """

    entity: str
    entity_id: int
    chunk_id: int
    document_id: int
    document_title: str
    text: str
    question_similarity: float
    entity_similarity: float
    via: str


@dataclass
class KnowledgePath:
    """A sampled knowledge path with its provenance.

    Attributes:
        question: the seed question.
        seed_entities: the question's entities that were matched against the graph.
        matched: the question entity that matched the start entity best.
        hops: the path, in order.
        hops_per_round: the window size.
        rounds: how many windows were asked for.
        seed: the RNG seed.
    """

    question: str
    seed_entities: list[str]
    matched: str
    hops: list[Hop]
    hops_per_round: int
    rounds: int
    seed: int
    chunk_ids: list[int] = field(default_factory=list)

    def __post_init__(self) -> None:
        self.chunk_ids = [h.chunk_id for h in self.hops]

    @property
    def background(self) -> str:
        """All chunk texts of the path, in order, separated by blank lines."""
        return "\n\n".join(h.text for h in self.hops)

    def windows(self, rounds: int | None = None) -> list[list[Hop]]:
        """Overlapping windows of ``hops_per_round`` hops, one per extension round.

        Args:
            rounds: how many windows (default: the path's ``rounds``). A path that ended early
                gives fewer windows; a path shorter than one window gives the whole path once.
        """
        rounds = self.rounds if rounds is None else rounds
        size = self.hops_per_round
        if not self.hops:
            return []
        if len(self.hops) <= size:
            return [list(self.hops)]
        count = min(rounds, len(self.hops) - size + 1)
        return [self.hops[i: i + size] for i in range(count)]

    def window_text(self, index: int) -> str:
        """The background text of one window (its chunk texts separated by blank lines)."""
        return "\n\n".join(h.text for h in self.windows()[index])

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready dict, with the background and the windows as hop indexes."""
        data = asdict(self)
        data["background"] = self.background
        n = len(self.windows())
        data["windows"] = [list(range(i, min(i + self.hops_per_round, len(self.hops)))) for i in range(n)]
        return data


def _pick(rng: random.Random, ranked: list[int], p_best: float) -> int:
    """The best with probability ``p_best``, else one of the others uniformly."""
    if len(ranked) == 1 or rng.random() < p_best:
        return ranked[0]
    return rng.choice(ranked[1:])


def _top(candidates: list[int], scores: np.ndarray, k: int) -> list[int]:
    """``candidates`` sorted by score (desc, ties by position), first ``k``."""
    order = sorted(range(len(candidates)), key=lambda i: (-float(scores[i]), i))
    return [candidates[i] for i in order[:k]]


def _start(graph: ContextGraph, embedder: Embedder, entities: list[str], q_vec: np.ndarray,
           chunk_relevance: dict[int, float]) -> tuple[int, float, str]:
    """The graph entity most similar to one of the question's entities: (row, similarity, matched).

    An exact normalised-name match has similarity 1. Ties (several exact matches, say) go to the
    entity whose best chunk is most similar to the question, then to the earlier question entity.
    """
    best: list[tuple[int, float, str]] = []
    if entities:
        exact = [(graph.row_of(normalize_entity(e)), e) for e in entities]
        best = [(row, 1.0, e) for row, e in exact if row is not None]
        if not best:
            sims = embedder.embed(entities) @ graph.vectors.T  # [question entities, graph entities]
            top = float(sims.max())
            best = [(int(gi), float(sims[qi, gi]), entities[int(qi)])
                    for qi, gi in zip(*np.nonzero(sims >= top - 1e-6), strict=True)]
    else:
        sims = graph.vectors @ q_vec
        row = int(np.argmax(sims))
        best = [(row, float(sims[row]), "")]

    def relevance(item: tuple[int, float, str]) -> float:
        return max((chunk_relevance.get(c, -1.0) for c in graph.chunk_ids[item[0]]), default=-1.0)

    return max(best, key=lambda item: (relevance(item), -best.index(item)))


def sample_path(
    store: Store,
    home: Path,
    kb_name: str,
    question: str,
    hops: int = 2,
    rounds: int = 1,
    seed: int = 0,
    *,
    question_entities: list[str] | None = None,
    config: RetrievalConfig | None = None,
    embedder: Embedder | None = None,
    top_entities: int = TOP_ENTITIES,
    top_chunks: int = TOP_CHUNKS,
    p_best: float = P_BEST,
) -> KnowledgePath:
    """Sample a knowledge path for a seed question on a knowledge base's context graph.

    Args:
        store: the database (the graph, chunks and embeddings live there).
        home: the data home; the walk itself reads only the database, the argument keeps every
            retrieval entry point's leading arguments the same.
        kb_name: the knowledge base (its graph must be built: ``viva kb graph``).
        question: the seed question.
        hops: hops per extension round (JudgeAgent: 2).
        rounds: extension rounds; the path has ``hops + rounds - 1`` hops.
        seed: RNG seed; the same seed and graph give the same path.
        question_entities: the question's entities if already known (e.g. labelled by the kernel
            LLM); default: the offline extractor's candidates.
        config: retrieval settings (the embedder); defaults when None.
        embedder: use this embedder instead of the configured one.
        top_entities: neighbours considered per hop (5).
        top_chunks: chunks considered per hop (5).
        p_best: probability of taking the best candidate (0.7).

    Returns:
        The path, its background text and its windows.

    Raises:
        KnowledgeBaseError: unknown knowledge base, no graph, or a graph built with another
            embedder.
        ValueError: ``hops`` or ``rounds`` below 1.
    """
    del home  # see Args
    if hops < 1 or rounds < 1:
        raise ValueError("hops and rounds must be at least 1")
    kb = get_kb(store, kb_name)
    graph = load_graph(store, kb_name)
    embedder = embedder or get_embedder((config or RetrievalConfig()).embedder)
    graph_embedder = kb.config.get("graph", {}).get("embedder")
    if graph_embedder != embedder.name:
        raise KnowledgeBaseError(
            f"the graph of {kb_name!r} was embedded with {graph_embedder}, not {embedder.name}; "
            f"rebuild it with `viva kb graph {kb_name}`")
    rng = random.Random(seed)
    q_vec = embedder.embed_one(question)
    ids, vectors = chunk_matrix(store, kb, embedder)
    chunk_row = {int(c): i for i, c in enumerate(ids)}
    chunk_sim = vectors @ q_vec

    if question_entities is None:
        question_entities = OfflineEntityExtractor().extract_query(question)
    relevance = {int(c): float(chunk_sim[i]) for i, c in enumerate(ids)}
    start, start_sim, matched = _start(graph, embedder, list(question_entities), q_vec, relevance)

    def choose_chunk(row: int, used: set[int]) -> int | None:
        options = [c for c in graph.chunk_ids[row] if c not in used and c in chunk_row]
        if not options:
            return None
        scores = np.array([chunk_sim[chunk_row[c]] for c in options], dtype=np.float32)
        return _pick(rng, _top(options, scores, top_chunks), p_best)

    steps: list[tuple[int, int, float, str]] = []  # (entity row, chunk id, entity similarity, via)
    used: set[int] = set()
    first = choose_chunk(start, used)
    if first is None:
        raise KnowledgeBaseError(f"entity {graph.names[start]!r} has no chunk in {kb_name!r}; rebuild the graph")
    steps.append((start, first, start_sim, "seed"))
    used.add(first)
    visited = {start}
    current = start
    total = hops + rounds - 1
    while len(steps) < total:
        options = [n for n in sorted(graph.neighbours[current]) if n not in visited
                   and any(c not in used and c in chunk_row for c in graph.chunk_ids[n])]
        if not options:
            break
        sims = graph.vectors[options] @ graph.vectors[current]
        nxt = _pick(rng, _top(options, sims, top_entities), p_best)
        chunk = choose_chunk(nxt, used)
        if chunk is None:  # cannot happen: options have an unused chunk
            break
        steps.append((nxt, chunk, float(graph.vectors[nxt] @ graph.vectors[current]), graph.neighbours[current][nxt]))
        used.add(chunk)
        visited.add(nxt)
        current = nxt

    rows = get_chunks(store, [c for _, c, _, _ in steps])
    path_hops = [
        Hop(entity=graph.names[r], entity_id=graph.ids[r], chunk_id=c, document_id=rows[c]["document_id"],
            document_title=rows[c]["document_title"], text=rows[c]["text"],
            question_similarity=round(float(chunk_sim[chunk_row[c]]), 6), entity_similarity=round(esim, 6), via=via)
        for r, c, esim, via in steps
    ]
    return KnowledgePath(question=question, seed_entities=list(question_entities), matched=matched, hops=path_hops,
                         hops_per_round=hops, rounds=rounds, seed=seed)
