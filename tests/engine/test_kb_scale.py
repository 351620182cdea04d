"""Ingest at scale (issue 15, item 7): streaming reads, bounded memory, a killed build that continues."""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import time
import tracemalloc
from pathlib import Path

import pytest
from click.testing import CliRunner

from bench.kb import BagOfWordsEmbedder, generate_corpus
from engine.knowledge.ingest import ReadReport, iter_file, read_file
from engine.knowledge.kb import build_kb, get_kb, list_kbs
from engine.knowledge.retrieval import search
from engine.store import Store

ROOT = Path(__file__).resolve().parents[2]
FIXTURES = Path(__file__).parent / "fixtures" / "kb"


def both(path: Path, **kw):
    whole, streamed = ReadReport(), ReadReport()
    docs = read_file(path, whole, **kw)
    got = list(iter_file(path, streamed, **kw))
    return (docs, whole), (got, streamed)


def test_streamed_jsonl_and_csv_read_as_whole_files_do(tmp_path):
    lines = ["\ufeff" + json.dumps({"title": "Café", "text": "Caf\u0065\u0301 au lait  \r\nis warm."}),
             "", '{"text": oops}', json.dumps({"other": 3}), json.dumps({"text": "Tabs\t \nand\rreturns"})]
    (tmp_path / "a.jsonl").write_bytes("\r\n".join(lines).encode())
    (tmp_path / "b.csv").write_bytes(b'id,fact,n\r\n1,"Quoted, with\r\nnewline",2\r\n2,,3\r\n3,Plain fact ,4\r\n')
    (tmp_path / "c.csv").write_bytes(b'id,fact\n1,"never closed\n2,x\n')
    big = tmp_path / "d.jsonl"  # a character split across the 1 MiB block boundary, then a bad byte
    head = json.dumps({"text": "x" * ((1 << 20) - 20)}).encode()
    big.write_bytes(head + b"\n" + json.dumps({"text": "\u00e9t\u00e9 " * 40}, ensure_ascii=False).encode()
                    + b"\n" + b'{"text": "caf\xe9"}\n')
    for name, kw in (("a.jsonl", {}), ("a.jsonl", {"text_field": "text"}), ("b.csv", {}),
                     ("b.csv", {"text_column": "fact"}), ("c.csv", {}), ("d.jsonl", {})):
        (docs, whole), (got, streamed) = both(tmp_path / name, **kw)
        assert got == docs, name
        assert (streamed.files_read, streamed.bad_files, streamed.bad_records) == \
               (whole.files_read, whole.bad_files, whole.bad_records), name
    (_, whole), _ = both(big)
    assert whole.bad_files and "invalid byte 0xe9 at line 3" in str(whole.bad_files[0])
    (docs, _), _ = both(tmp_path / "a.jsonl")
    assert [d.meta["line"] for d in docs] == [1, 5] and "Café au lait\nis warm." in docs[0].text


def traced_build(tmp_path: Path, size: int) -> tuple[int, int, object]:
    """(corpus bytes, peak bytes of Python objects until the index stage, summary) of one build.

    The index stage is Whoosh's, bounded by its pool (``bm25.WRITER_LIMIT_MB``), so it is not traced.
    """
    info = generate_corpus(tmp_path / f"corpus{size}", size, seed=1)
    store = Store(tmp_path / f"home{size}" / "viva.db")
    peak: list[int] = []

    def stop_at_index(stage, done, total):
        if stage == "index" and not peak:
            peak.append(tracemalloc.get_traced_memory()[1])
            tracemalloc.stop()

    tracemalloc.start()
    try:
        summary = build_kb(store, tmp_path / f"home{size}", "big", [tmp_path / f"corpus{size}"],
                           embedder=BagOfWordsEmbedder(), batch_chars=20_000, progress=stop_at_index)
    finally:
        tracemalloc.stop()
    assert store.one("SELECT COUNT(*) AS n FROM chunks")["n"] == summary.chunks
    assert [k["name"] for k in list_kbs(store)] == ["big"]  # the staging knowledge base is gone
    store.close()
    return info["bytes"], peak[0], summary


def test_a_build_holds_one_batch_not_the_corpus(tmp_path):
    small_bytes, small_peak, small = traced_build(tmp_path, 500_000)
    big_bytes, big_peak, big = traced_build(tmp_path, 2_000_000)
    assert big.bytes_read == big_bytes and big.chunks > 3 * small.chunks > 1500
    # four times the corpus, the same memory: one batch and one file at a time, never the corpus
    assert big_peak <= 1.1 * small_peak, (small_peak, big_peak)
    assert big_peak < big_bytes / 1.5


CHILD = """
import sys, time
from pathlib import Path
sys.path.insert(0, {root!r})
from bench.kb import BagOfWordsEmbedder
from engine.knowledge.kb import build_kb
from engine.store import Store
store = Store(Path({home!r}) / "viva.db")
def slow(stage, done, total):
    if stage == "chunks" and done:
        time.sleep(0.3)  # one pause per staged batch: the test's kill lands mid-build
build_kb(store, Path({home!r}), "kb", [{corpus!r}], embedder=BagOfWordsEmbedder(), batch_chars=20_000, progress=slow)
"""


def chunk_set(store: Store) -> list[tuple]:
    return [tuple(r.values()) for r in store.query(
        "SELECT d.path, c.ord, c.sha256 FROM chunks c JOIN documents d ON d.id = c.document_id "
        "JOIN knowledge_bases k ON k.id = c.kb_id WHERE k.name = 'kb' ORDER BY d.path, c.ord")]


def test_a_build_killed_with_sigkill_continues_where_it_stopped(tmp_path):
    corpus = tmp_path / "corpus"
    generate_corpus(corpus, 400_000, seed=2)
    home = tmp_path / "home"
    home.mkdir()
    store = Store(home / "viva.db")
    child = subprocess.Popen([sys.executable, "-c", CHILD.format(root=str(ROOT), home=str(home), corpus=str(corpus))],
                             stderr=subprocess.PIPE, text=True)
    deadline = time.monotonic() + 120
    while store.one("SELECT COUNT(*) AS n FROM chunks")["n"] < 150:
        assert child.poll() is None, child.stderr.read()
        assert time.monotonic() < deadline
        time.sleep(0.02)
    os.kill(child.pid, signal.SIGKILL)
    child.wait()
    staged = store.one("SELECT COUNT(*) AS n FROM documents")["n"]
    assert staged > 0 and list_kbs(store) == []  # nothing published; the staging is not a knowledge base

    resumed = build_kb(store, home, "kb", [corpus], embedder=BagOfWordsEmbedder(), batch_chars=20_000)
    assert resumed.resumed == staged and resumed.added == resumed.documents
    assert 0 < resumed.embedded < resumed.chunks  # what was embedded before the kill was not redone

    clean_home = tmp_path / "clean"
    clean = Store(clean_home / "viva.db")
    reference = build_kb(clean, clean_home, "kb", [corpus], embedder=BagOfWordsEmbedder(), batch_chars=20_000)
    assert reference.resumed == 0 and reference.embedded == reference.chunks == resumed.chunks
    assert chunk_set(store) == chunk_set(clean)
    assert get_kb(store, "kb").version == 1
    store.close()
    clean.close()


def test_real_embedder_build_interrupted_then_resumed(tmp_path):
    src = tmp_path / "docs"
    shutil.copytree(FIXTURES / "docs", src)
    home = tmp_path / "home"
    store = Store(home / "viva.db")

    class Crash(Exception):
        pass

    def crash_after_first_batch(stage, done, total):
        if stage == "chunks" and done:
            raise Crash

    with pytest.raises(Crash):
        build_kb(store, home, "kb", [src], chunk_chars=200, overlap=30, batch_chars=1, progress=crash_after_first_batch)
    staged = store.one("SELECT COUNT(*) AS n FROM documents")["n"]
    assert staged == 1
    summary = build_kb(store, home, "kb", [src], chunk_chars=200, overlap=30, batch_chars=1)
    assert (summary.documents, summary.added, summary.resumed, summary.chunks) == (3, 3, 1, 9)
    assert summary.embedded + summary.embeddings_cached < 9  # the first document's chunks were not looked at again
    hits = search(store, home, "kb", "What makes bread dough rise?", k=1)
    assert hits and "yeast" in hits[0].text

    # other settings make the staged documents useless: a new staging, nothing resumed
    with pytest.raises(Crash):
        build_kb(store, home, "kb", [src], chunk_chars=300, overlap=30, batch_chars=1, progress=crash_after_first_batch)
    again = build_kb(store, home, "kb", [src], chunk_chars=400, overlap=30, batch_chars=1)
    assert again.resumed == 0 and again.updated == 3 and get_kb(store, "kb").version == 2
    store.close()


def test_cli_build_shows_rate_and_eta(tmp_path, home):
    from tui.cli import main

    generate_corpus(tmp_path / "corpus", 20_000, seed=3)
    result = CliRunner().invoke(main, ["kb", "build", "kb", str(tmp_path / "corpus"), "--chunk-chars", "2000"])
    assert result.exit_code == 0, result.output
    assert "reading + embedding" in result.output and "B/s" in result.output and "ETA" in result.output
    assert "chunks staged" in result.output and "chunks/s" in result.output
