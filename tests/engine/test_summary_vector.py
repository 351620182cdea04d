"""cos_t's summary vector (engine.knowledge.summary_vector): the sum of the summary's sentences' vectors,
on the real ONNX encoder and the real embedding service."""

from __future__ import annotations

import numpy as np
import pytest

from engine.knowledge.embed import EmbeddingService, get_embedder
from engine.knowledge.summary_vector import (
    all_sentences,
    sum_vector,
    summaries_cosine,
    summary_sentences,
    summary_vector,
)

FACTS = ["Oxygen is the most abundant element in the Earth's crust.", "Plants release oxygen through photosynthesis.",
         "Liquid oxygen is pale blue.", "Oxygen is very reactive."]


@pytest.fixture(scope="module")
def encoder():
    return get_embedder()


def test_sentences_are_split_at_ends_and_lines_and_letterless_pieces_dropped():
    assert summary_sentences("Oxygen is reactive. It is  pale\tblue.\nPlants release it\n--\n") == [
        "Oxygen is reactive.", "It is pale blue.", "Plants release it"]
    assert summary_sentences("") == [] and summary_sentences(None) == [] and summary_sentences(" -- ") == []
    assert all_sentences(["A is b. C is d.", "C is d. E is f."]) == ["A is b.", "C is d.", "E is f."]
    # a sentence said again counts once: repeating itself does not weigh the vector towards it
    assert summary_sentences("A is b. C is d. A is  b.\nA is b.") == ["A is b.", "C is d."]


def test_the_vector_is_the_normalised_sum_of_the_sentences_vectors(encoder):
    summary = " ".join(FACTS[:3])
    rows = encoder.embed(FACTS[:3]).astype(np.float64)
    want = rows.sum(axis=0) / np.linalg.norm(rows.sum(axis=0))
    got = summary_vector(summary, encoder.embed)
    assert got is not None and np.allclose(got, want, atol=1e-12) and abs(np.linalg.norm(got) - 1) < 1e-12
    # one sentence: its own vector
    assert np.allclose(summary_vector(FACTS[0], encoder.embed), encoder.embed(FACTS[:1])[0], atol=1e-6)
    # a sentence added moves it; the same sentences give the same vector bit for bit (a retraction that
    # drops the added sentence comes back exactly)
    grown = summary_vector(summary + " " + FACTS[3], encoder.embed)
    assert summaries_cosine(grown, got) < 0.999
    assert np.array_equal(summary_vector(summary, encoder.embed), got)
    assert summary_vector("--", encoder.embed) is None and summaries_cosine(None, got) is None
    assert sum_vector(np.zeros((0, 4))) is None and sum_vector(np.zeros((2, 4))) is None


def test_all_of_a_long_summary_counts(encoder):
    """The encoder keeps a text's first 256 tokens: embedded whole, a summary past that length no longer
    changes with what is added at its end (cos 1.0, the defect); summed over its sentences it does."""
    long = " ".join(f"Fact {i}: oxygen takes part in reaction number {i} of the list we studied." for i in range(40))
    added = long + " Liquid oxygen is pale blue and strongly attracted by magnets."
    whole = encoder.embed([long, added])
    assert float(whole[0] @ whole[1]) > 0.99999  # the whole-text vector did not see the new sentence
    cos = summaries_cosine(summary_vector(added, encoder.embed), summary_vector(long, encoder.embed))
    assert cos < 0.9999


def test_a_turn_embeds_only_its_new_sentences():
    service = EmbeddingService(get_embedder())
    summary = ""
    for i, fact in enumerate(FACTS):
        summary = f"{summary}\n{fact}".strip()
        before = service.stats()["embedded"]
        summary_vector(summary, service.embed)
        assert service.stats()["embedded"] - before == 1, i
    # the same summary again, or one that only drops a sentence: nothing new to embed
    before = service.stats()["embedded"]
    summary_vector(summary, service.embed)
    summary_vector("\n".join(FACTS[1:]), service.embed)
    assert service.stats()["embedded"] == before
