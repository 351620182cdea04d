"""Knowledge bases: ingest, chunking, BM25 and dense retrieval, context graph, knowledge paths.

Public API (import from the modules; this package imports nothing heavy, so ``viva --help`` stays
fast):

- ``engine.knowledge.kb``: ``build_kb``, ``get_kb``, ``find_kb``, ``list_kbs``, ``delete_kb``,
  ``get_chunks``, ``KnowledgeBaseError``;
- ``engine.knowledge.retrieval``: ``search`` -> ``list[Hit]``;
- ``engine.knowledge.embed``: ``get_embedder``, ``Embedder``, ``cosine``;
- ``engine.knowledge.graph``: ``build_graph`` / ``build_graph_async``, ``load_graph``;
- ``engine.knowledge.entities``: ``OfflineEntityExtractor``, ``LLMEntityExtractor``;
- ``engine.knowledge.paths``: ``sample_path`` -> ``KnowledgePath``.
"""

from __future__ import annotations

from pathlib import Path

EMBED_CACHE_DIR: Path | None = None
"""Where embedders keep their optimised ONNX graph, as :meth:`engine.runtime.Runtime.create` set it
before :mod:`engine.knowledge.embed` was imported (that module starts from this value; afterwards its
``set_cache_dir`` rules). Kept here so opening a data home does not import numpy and onnxruntime."""
