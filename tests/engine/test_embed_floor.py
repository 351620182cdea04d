"""The embedder's ONNX session: the optimised graph saved under the cache and loaded from it gives the
same vectors as optimising in memory; batching, sorting and parallel runs give the same vectors as
embedding one text at a time; a damaged cached graph is replaced; ``VIVA_ORT_OPTIMIZE=0`` runs the graph
unoptimised, saving nothing. Vectors from two paths are compared within tests/floats.py's tolerance."""

from __future__ import annotations

import numpy as np

from engine.knowledge.embed import (
    OPTIMIZE_ENV,
    Embedder,
    default_model_path,
    default_tokenizer_path,
    get_embedder,
    ort_optimization_level,
)
from tests.floats import FLOAT_ABS

TEXTS = ["Influenza spreads through droplets.", "", "short",
         " ".join(["Vaccination each year prevents most severe illness from seasonal influenza."] * 30),
         "Antiviral drugs shorten the illness when taken early.", "a b c d e f g h i j k l m n o p"]


def test_saved_optimised_graph_gives_the_same_vectors(tmp_path, monkeypatch):
    plain = get_embedder()  # in memory (no cache directory set in tests); unoptimised in the second CI run
    monkeypatch.delenv(OPTIMIZE_ENV, raising=False)  # the saved graph is what is tested here
    first = Embedder(default_model_path(), default_tokenizer_path(), label="x", cache_dir=tmp_path)
    saved = first.optimized_path
    assert saved is not None and saved.is_file() and saved.parent == tmp_path
    again = Embedder(default_model_path(), default_tokenizer_path(), label="x", cache_dir=tmp_path)
    assert again.optimized_path == saved, "the second load reads the saved graph"
    expected = plain.embed(TEXTS)
    np.testing.assert_allclose(first.embed(TEXTS), expected, atol=FLOAT_ABS)
    np.testing.assert_allclose(again.embed(TEXTS), expected, atol=FLOAT_ABS)
    assert first.name == plain.name.replace(plain.name.split("@")[0], "x")


def test_damaged_cached_graph_is_replaced(tmp_path, monkeypatch):
    monkeypatch.delenv(OPTIMIZE_ENV, raising=False)
    first = Embedder(default_model_path(), default_tokenizer_path(), cache_dir=tmp_path)
    first.optimized_path.write_bytes(b"not an onnx file")
    again = Embedder(default_model_path(), default_tokenizer_path(), cache_dir=tmp_path)
    assert again.optimized_path.stat().st_size > 1000
    np.testing.assert_allclose(again.embed(TEXTS[:2]), get_embedder().embed(TEXTS[:2]), atol=FLOAT_ABS)


def test_unoptimised_path_saves_nothing_and_gives_the_same_vectors_within_the_tolerance(tmp_path, monkeypatch):
    monkeypatch.delenv(OPTIMIZE_ENV, raising=False)
    optimised = Embedder(default_model_path(), default_tokenizer_path(), cache_dir=tmp_path / "a")
    monkeypatch.setenv(OPTIMIZE_ENV, "0")
    assert ort_optimization_level() == "ORT_DISABLE_ALL"
    plain = Embedder(default_model_path(), default_tokenizer_path(), cache_dir=tmp_path / "b")
    assert plain.optimized_path is None and not (tmp_path / "b").exists()
    assert plain.name == optimised.name  # the same model: stored vectors stay usable
    a, b = optimised.embed(TEXTS), plain.embed(TEXTS)
    np.testing.assert_allclose(b, a, atol=FLOAT_ABS)
    # another execution path (else CI's second run tests nothing): the optimiser rewrites the shipped
    # graph, and the unoptimised session runs it as shipped (on this CPU the vectors differ by ~1e-7)
    assert optimised.optimized_path.read_bytes() != default_model_path().read_bytes()


def test_batched_sorted_parallel_equals_one_at_a_time():
    embedder = get_embedder()
    together = embedder.embed(TEXTS * 3)
    alone = np.stack([embedder.embed_one(t) for t in TEXTS * 3])
    np.testing.assert_allclose(together, alone, atol=FLOAT_ABS)
    np.testing.assert_allclose(np.linalg.norm(together, axis=1), 1.0, atol=FLOAT_ABS)
