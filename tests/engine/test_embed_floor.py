"""The embedder's ONNX session: the optimised graph saved under the cache and loaded from it gives the
same vectors as optimising in memory; batching, sorting and parallel runs give the same vectors as
embedding one text at a time; a damaged cached graph is replaced."""

from __future__ import annotations

import numpy as np

from engine.knowledge.embed import Embedder, default_model_path, default_tokenizer_path, get_embedder

TEXTS = ["Influenza spreads through droplets.", "", "short",
         " ".join(["Vaccination each year prevents most severe illness from seasonal influenza."] * 30),
         "Antiviral drugs shorten the illness when taken early.", "a b c d e f g h i j k l m n o p"]


def test_saved_optimised_graph_gives_the_same_vectors(tmp_path):
    plain = get_embedder()  # optimised in memory (no cache directory set in tests)
    first = Embedder(default_model_path(), default_tokenizer_path(), label="x", cache_dir=tmp_path)
    saved = first.optimized_path
    assert saved is not None and saved.is_file() and saved.parent == tmp_path
    again = Embedder(default_model_path(), default_tokenizer_path(), label="x", cache_dir=tmp_path)
    assert again.optimized_path == saved, "the second load reads the saved graph"
    expected = plain.embed(TEXTS)
    np.testing.assert_allclose(first.embed(TEXTS), expected, atol=1e-5)
    np.testing.assert_allclose(again.embed(TEXTS), expected, atol=1e-5)
    assert first.name == plain.name.replace(plain.name.split("@")[0], "x")


def test_damaged_cached_graph_is_replaced(tmp_path):
    first = Embedder(default_model_path(), default_tokenizer_path(), cache_dir=tmp_path)
    first.optimized_path.write_bytes(b"not an onnx file")
    again = Embedder(default_model_path(), default_tokenizer_path(), cache_dir=tmp_path)
    assert again.optimized_path.stat().st_size > 1000
    np.testing.assert_allclose(again.embed(TEXTS[:2]), get_embedder().embed(TEXTS[:2]), atol=1e-5)


def test_batched_sorted_parallel_equals_one_at_a_time():
    embedder = get_embedder()
    together = embedder.embed(TEXTS * 3)
    alone = np.stack([embedder.embed_one(t) for t in TEXTS * 3])
    np.testing.assert_allclose(together, alone, atol=1e-5)
    np.testing.assert_allclose(np.linalg.norm(together, axis=1), 1.0, atol=1e-5)
