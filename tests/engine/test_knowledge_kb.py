"""Knowledge bases end to end: real SQLite, real Whoosh index, real ONNX encoder, small documents."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from types import SimpleNamespace

import pytest

from engine.knowledge import bm25
from engine.knowledge.kb import KnowledgeBaseError, build_kb, get_kb, list_kbs
from engine.knowledge.retrieval import rrf, search
from engine.store import Store

FIXTURES = Path(__file__).parent / "fixtures" / "kb"
CHUNKING = {"chunk_chars": 200, "overlap": 30}  # one paragraph per chunk for these documents


@pytest.fixture(scope="module")
def demo(tmp_path_factory):
    """One knowledge base over the fixture documents (astronomy, baking, Chinese), shared by tests."""
    home = tmp_path_factory.mktemp("home")
    src = tmp_path_factory.mktemp("src") / "docs"
    shutil.copytree(FIXTURES / "docs", src)
    store = Store(home / "viva.db")
    summary = build_kb(store, home, "demo", [src], **CHUNKING)
    yield SimpleNamespace(home=home, src=src, store=store, summary=summary)
    store.close()


def _titles_first(hits):
    return (hits[0].document_title, hits[0].text) if hits else None


def test_first_build_summary(demo):
    s = demo.summary
    assert (s.documents, s.added, s.updated, s.unchanged, s.removed) == (3, 3, 0, 0, 0)
    assert s.chunks == 9 and s.chunks_written == 9
    assert s.embedded == 9 and s.embeddings_cached == 0
    assert s.indexed == 9 and s.index_rebuilt
    assert s.bad_files == [] and s.bad_records == []
    kb = get_kb(demo.store, "demo")
    assert kb.version == 1 and kb.config["chunk_chars"] == 200 and kb.config["overlap"] == 30
    row = demo.store.one("SELECT COUNT(*) AS n FROM embeddings WHERE model = ?", (kb.config["embedder"],))
    assert row["n"] == 9


QUERIES = [
    ("What makes bread dough rise?", "Bread dough rises because yeast ferments"),
    ("Which is the largest planet, a gas giant?", "Jupiter is the largest planet"),
    ("Why does Mars look red, and what are its moons?", "Mars is the fourth planet"),
    ("rings made of ice particles", "Saturn is famous for its bright rings"),
]


@pytest.mark.parametrize("mode", ["bm25", "dense", "hybrid"])
@pytest.mark.parametrize("query,expected", QUERIES)
def test_each_mode_ranks_the_right_chunk_first(demo, mode, query, expected):
    hits = search(demo.store, demo.home, "demo", query, k=3, mode=mode)
    assert hits, f"no hits for {query!r} in {mode}"
    assert expected in hits[0].text, f"{mode}: {query!r} -> {_titles_first(hits)}"
    assert [h.rank for h in hits] == list(range(1, len(hits) + 1))


def test_chinese_text_is_searchable_with_bm25_bigrams(demo):
    hits = search(demo.store, demo.home, "demo", "八达岭", k=3, mode="bm25")
    assert hits and "北京的八达岭长城" in hits[0].text
    hits = search(demo.store, demo.home, "demo", "秦始皇统一六国", k=3, mode="bm25")
    assert hits and "秦始皇" in hits[0].text
    # The analyser makes overlapping bigrams of CJK runs and stems English words.
    assert bm25.analyze("万里长城 rises") == ["万里", "里长", "长城", "rise"]


def test_hits_carry_ids_titles_and_a_score_per_ranker(demo):
    for mode, keys in (("bm25", {"bm25"}), ("dense", {"dense"})):
        hit = search(demo.store, demo.home, "demo", "sourdough starter", k=1, mode=mode)[0]
        assert set(hit.scores) == keys and hit.score == hit.scores[mode]
    hits = search(demo.store, demo.home, "demo", "sourdough starter culture", k=5, mode="hybrid")
    top = hits[0]
    assert "Sourdough" in top.text and top.document_title == "baking"
    assert {"bm25", "dense", "rrf"} <= set(top.scores)
    assert top.scores["rrf"] == pytest.approx(sum(1 / (60 + r) for r in top.ranks.values()), abs=1e-6)
    row = demo.store.one("SELECT document_id FROM chunks WHERE id = ?", (top.chunk_id,))
    assert row["document_id"] == top.document_id
    assert all(a.score >= b.score for a, b in zip(hits, hits[1:], strict=False))


def test_rrf_fuses_ranks_with_k():
    fused = rrf({"a": [(1, 9.0), (2, 5.0)], "b": [(2, 0.9), (3, 0.5)]}, k=60)
    assert [cid for cid, _ in fused] == [2, 1, 3]
    assert fused[0][1] == pytest.approx(1 / 62 + 1 / 61)


def test_unknown_kb_and_bad_arguments(demo):
    with pytest.raises(KnowledgeBaseError, match=r"no knowledge base named 'nope' \(existing: demo\)"):
        search(demo.store, demo.home, "nope", "x")
    with pytest.raises(ValueError, match="unknown retrieval mode"):
        search(demo.store, demo.home, "demo", "x", mode="sparse")
    assert search(demo.store, demo.home, "demo", "   ") == []
    assert search(demo.store, demo.home, "demo", "the of and", mode="bm25") == []  # only stop words


def test_a_missing_index_is_rebuilt_from_the_database(demo):
    shutil.rmtree(bm25.index_dir(demo.home, "demo"))
    hits = search(demo.store, demo.home, "demo", "kneading gluten", k=1, mode="bm25")
    assert hits and "Kneading develops gluten" in hits[0].text
    assert bm25.read_stamp(bm25.index_dir(demo.home, "demo")) == get_kb(demo.store, "demo").version


def test_rebuild_skips_unchanged_updates_changed_and_removes_missing(tmp_path):
    src = tmp_path / "docs"
    shutil.copytree(FIXTURES / "docs", src)
    store = Store(tmp_path / "home" / "viva.db")
    home = tmp_path / "home"
    first = build_kb(store, home, "kb", [src], **CHUNKING)

    again = build_kb(store, home, "kb", [src])  # chunking settings are remembered
    assert (again.added, again.updated, again.unchanged, again.removed) == (0, 0, 3, 0)
    assert again.embedded == 0 and again.chunks_written == 0 and again.indexed == 0
    assert again.version == first.version

    baking = src / "baking.txt"
    baking.write_text(baking.read_text(encoding="utf-8") + "\nRye flour holds less gluten, so rye loaves are dense.\n",
                      encoding="utf-8")
    (src / "astronomy.md").unlink()
    changed = build_kb(store, home, "kb", [src])
    assert (changed.added, changed.updated, changed.unchanged, changed.removed) == (0, 1, 1, 1)
    assert changed.version == first.version + 1
    # Only the new chunk text is embedded: the untouched paragraphs keep their cached vectors.
    assert 1 <= changed.embedded < 3 and changed.embeddings_cached >= 2
    assert changed.chunks == 3 + 3
    hits = search(store, home, "kb", "rye loaves", k=1, mode="bm25")
    assert hits and "Rye flour" in hits[0].text
    assert search(store, home, "kb", "Jupiter", k=3, mode="bm25") == []
    assert not any("Jupiter" in h.text for h in search(store, home, "kb", "Jupiter gas giant", k=7, mode="dense"))

    # Another knowledge base over the same text reuses every cached embedding.
    other = build_kb(store, home, "copy", [src], **CHUNKING)
    assert other.embedded == 0 and other.embeddings_cached == other.chunks
    assert [r["name"] for r in list_kbs(store)] == ["copy", "kb"]

    # New chunking settings re-chunk everything.
    rechunked = build_kb(store, home, "kb", [src], chunk_chars=2000, overlap=0)
    assert rechunked.updated == 2 and rechunked.chunks == 2
    store.close()


def test_bad_files_are_reported_and_skipped_and_an_empty_result_is_an_error(tmp_path):
    src = tmp_path / "mixed"
    src.mkdir()
    (src / "good.md").write_text("# Glaciers\n\nGlaciers carve U-shaped valleys.\n", encoding="utf-8")
    (src / "binary.txt").write_bytes(b"GIF89a\x00\x01\x00\x00")
    (src / "latin1.txt").write_bytes("r\xe9sum\xe9".encode("latin-1"))
    (src / "notes.jsonl").write_text('{"text": "Moraines are deposits."}\n{"text": oops}\n', encoding="utf-8")
    home = tmp_path / "home"
    store = Store(home / "viva.db")
    summary = build_kb(store, home, "mixed", [src])
    assert summary.documents == 2  # good.md and the one good JSONL line
    assert sorted(Path(i.split(":")[0]).name for i in summary.bad_files) == ["binary.txt", "latin1.txt"]
    assert summary.bad_records == [f"{(src / 'notes.jsonl').resolve()}:2: malformed JSON line: "
                                   "Expecting value (column 10)"]
    assert search(store, home, "mixed", "moraine deposits", k=1, mode="bm25")[0].text == "Moraines are deposits."

    empty = tmp_path / "empty"
    empty.mkdir()
    (empty / "binary.txt").write_bytes(b"\x00\x01")
    with pytest.raises(KnowledgeBaseError, match=r"no text found in .*binary file") as err:
        build_kb(store, home, "empty", [empty])
    assert "'empty' was not changed" in str(err.value)
    assert [r["name"] for r in list_kbs(store)] == ["mixed"]
    store.close()


def test_cli_build_search_list_and_errors(tmp_path):
    from click.testing import CliRunner

    from tui.cli import main

    home = tmp_path / "home"
    src = tmp_path / "docs"
    shutil.copytree(FIXTURES / "docs", src)
    (src / "broken.json").write_text("{not json", encoding="utf-8")
    runner = CliRunner()
    base = ["--home", str(home), "kb"]
    result = runner.invoke(main, [*base, "build", "demo", str(src), "--chunk-chars", "200", "--overlap", "30"])
    assert result.exit_code == 0, result.output
    assert "demo: 3 documents (3 added" in result.output
    assert f"skipped file: {(src / 'broken.json').resolve()}:1: malformed JSON" in result.output

    result = runner.invoke(main, [*base, "search", "demo", "largest planet", "--k", "2", "--mode", "bm25", "--json"])
    assert result.exit_code == 0, result.output
    hits = json.loads(result.output)
    assert len(hits) == 2 and "Jupiter is the largest" in hits[0]["text"] and set(hits[0]["scores"]) == {"bm25"}

    result = runner.invoke(main, [*base, "search", "demo", "why is mars red"])
    assert result.exit_code == 0 and result.output.startswith("1. [chunk ")

    result = runner.invoke(main, [*base, "list", "--json"])
    assert [(r["name"], r["documents"], r["chunks"]) for r in json.loads(result.output)] == [("demo", 3, 9)]

    result = runner.invoke(main, [*base, "search", "missing", "x"])
    assert result.exit_code == 1 and "no knowledge base named 'missing' (existing: demo)" in result.output

    empty = tmp_path / "empty"
    empty.mkdir()
    result = runner.invoke(main, [*base, "build", "other", str(empty)])
    assert result.exit_code == 1 and "no text found" in result.output


def test_documents_outside_lists_what_a_build_over_fewer_paths_would_remove(demo):
    """``viva kb build`` asks before it removes these (engine.knowledge.kb.documents_outside)."""
    from engine.knowledge.kb import documents_outside

    files = sorted(p for p in demo.src.rglob("*") if p.is_file())
    stored = {r["path"] for r in demo.store.query("SELECT path FROM documents")}
    assert documents_outside(demo.store, "demo", [demo.src]) == []
    outside = documents_outside(demo.store, "demo", [files[0]])
    assert outside == sorted(p for p in stored if not p.split("#", 1)[0].endswith(files[0].name))
    assert len(outside) == len(stored) - sum(1 for p in stored if p.split("#", 1)[0] == str(files[0].resolve()))
    assert documents_outside(demo.store, "no such kb", [demo.src]) == []
