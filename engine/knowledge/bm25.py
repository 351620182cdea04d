"""The BM25 index of a knowledge base: one Whoosh index under ``HOME/indexes/<kb>/bm25``.

Text is analysed by one analyser for every language: words of space-separated scripts are
lower-cased, stop-word filtered and Porter-stemmed; runs of CJK characters become overlapping
character bigrams (a lone character stays a unigram), so Chinese and Japanese text is searchable
without a word segmenter. Queries go through the same analyser and are OR-ed, so no query syntax
can fail to parse.

The index records the knowledge-base version it reflects (``stamp.json``); a reader that finds a
different version rebuilds the index from SQLite, so a crash between the database commit and the
index commit heals itself.
"""

from __future__ import annotations

import json
import shutil
import threading
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from whoosh import index as windex
from whoosh import scoring
from whoosh.analysis import LowercaseFilter, StemFilter, StopFilter, Token, Tokenizer
from whoosh.fields import ID, NUMERIC, TEXT, Schema
from whoosh.query import Or, Term

from engine.text.cjk import CJK_RUN_RE
from engine.text.tokens import WORD_RE

INDEX_FORMAT = 1
_STAMP = "stamp.json"


class MixedScriptTokenizer(Tokenizer):
    """Words for space-separated scripts, overlapping character bigrams for CJK runs."""

    def __eq__(self, other):
        return other.__class__ is self.__class__

    def __hash__(self):
        return hash(self.__class__.__name__)

    def __call__(self, value, positions=False, chars=False, keeporiginal=False, removestops=True,
                 start_pos=0, start_char=0, tokenize=True, mode="", **kwargs):
        """Tokenize ``value`` for Whoosh: one token per word and per overlapping CJK bigram (a lone CJK
        character stays a unigram), in text order; the Whoosh tokenizer arguments keep their meaning.
        """
        token = Token(positions, chars, removestops=removestops, mode=mode, **kwargs)
        pos = start_pos
        spans: list[tuple[int, int, str]] = []
        cjk_spans = [(m.start(), m.end()) for m in CJK_RUN_RE.finditer(value)]
        for m in WORD_RE.finditer(value):
            spans.append((m.start(), m.end(), "w"))
        for s, e in cjk_spans:
            spans.append((s, e, "c"))
        spans.sort()
        for s, e, kind in spans:
            if kind == "w":
                pieces = [(s, e)]
            elif e - s == 1:
                pieces = [(s, e)]
            else:
                pieces = [(i, i + 2) for i in range(s, e - 1)]
            for ps, pe in pieces:
                token.text = value[ps:pe]
                token.boost = 1.0
                token.stopped = False
                if keeporiginal:
                    token.original = token.text
                if positions:
                    token.pos = pos
                    pos += 1
                if chars:
                    token.startchar = start_char + ps
                    token.endchar = start_char + pe
                yield token


def text_analyzer():
    """The analyser for chunk text and queries (see the module docstring)."""
    return MixedScriptTokenizer() | LowercaseFilter() | StopFilter(minsize=1) | StemFilter()


def _schema() -> Schema:
    return Schema(
        chunk_id=ID(stored=True, unique=True),
        document_id=ID(stored=True),
        ord=NUMERIC(stored=False),
        text=TEXT(analyzer=text_analyzer(), stored=False),
    )


@dataclass(frozen=True)
class IndexedChunk:
    """What the BM25 index needs of a chunk."""

    chunk_id: int
    document_id: int
    ord: int
    text: str


def index_dir(home: Path, kb_name: str) -> Path:
    """Where a knowledge base's BM25 index lives."""
    return Path(home) / "indexes" / kb_name / "bm25"


def read_stamp(path: Path) -> int | None:
    """The knowledge-base version an index reflects, or None when absent or of an old format."""
    try:
        data = json.loads((path / _STAMP).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    if data.get("format") != INDEX_FORMAT:
        return None
    return int(data.get("version", -1))


WRITER_LIMIT_MB = 32
"""Whoosh's in-memory posting pool per writer: past it, sorted runs go to disk (and are merged at the
commit). It bounds the index stage's memory whatever the corpus' size; the pool's real size is a few
times Whoosh's own estimate, so 128 held hundreds of MB on large corpora."""


def _write_stamp(path: Path, version: int) -> None:
    tmp = path / (_STAMP + ".tmp")
    tmp.write_text(json.dumps({"format": INDEX_FORMAT, "version": version}), encoding="utf-8")
    tmp.replace(path / _STAMP)


def _add(writer, chunks: Iterable[IndexedChunk]) -> int:
    n = 0
    for c in chunks:
        writer.add_document(chunk_id=str(c.chunk_id), document_id=str(c.document_id), ord=c.ord, text=c.text)
        n += 1
    return n


def rebuild_index(path: Path, chunks: Iterable[IndexedChunk], version: int) -> int:
    """Write a fresh index with these chunks; returns how many were indexed."""
    if path.exists():
        shutil.rmtree(path)
    path.mkdir(parents=True)
    ix = windex.create_in(str(path), _schema())
    writer = ix.writer(limitmb=WRITER_LIMIT_MB)
    n = _add(writer, chunks)
    writer.commit()
    ix.close()
    _write_stamp(path, version)
    _drop_searcher(path)
    return n


def update_index(path: Path, removed_document_ids: Iterable[int], added: Iterable[IndexedChunk],
                 version: int) -> int:
    """Remove every chunk of some documents and add new chunks, in one Whoosh commit.

    The index must exist and be of the current format (see ``read_stamp``).
    Returns how many chunks were added.
    """
    ix = windex.open_dir(str(path))
    writer = ix.writer(timeout=30.0, limitmb=WRITER_LIMIT_MB)
    try:
        for doc_id in removed_document_ids:
            writer.delete_by_term("document_id", str(doc_id))
        n = _add(writer, added)
    except BaseException:
        writer.cancel()
        raise
    writer.commit()
    ix.close()
    _write_stamp(path, version)
    return n


_SEARCHERS: dict[str, tuple] = {}
_SEARCHER_LOCK = threading.Lock()


def _drop_searcher(path: Path) -> None:
    with _SEARCHER_LOCK:
        entry = _SEARCHERS.pop(str(path), None)
    if entry is not None:
        entry[2].close()


def _searcher(path: Path, version: int):
    """A cached searcher for this index version (reopened when the version changes)."""
    key = str(path)
    with _SEARCHER_LOCK:
        entry = _SEARCHERS.get(key)
        if entry is not None and entry[0] != version:
            entry[2].close()
            entry = None
        if entry is None:
            ix = windex.open_dir(key)
            entry = (version, ix, ix.searcher(weighting=scoring.BM25F()))
        else:
            # Cheap when nothing changed; picks up commits made by other processes.
            entry = (version, entry[1], entry[2].refresh())
        _SEARCHERS[key] = entry
        return entry[2]


def analyze(text: str) -> list[str]:
    """The index terms of a text (used for queries; exposed for tests and diagnostics)."""
    return [t.text for t in text_analyzer()(text)]


def search_index(path: Path, query: str, limit: int, version: int = 0) -> list[tuple[int, float]]:
    """BM25 search: ``(chunk_id, score)`` best first; empty when the query has no index terms.

    Args:
        path: the index folder.
        query: free text, analysed like the indexed text.
        limit: how many hits at most.
        version: the knowledge-base version the caller expects; a cached searcher of another
            version is reopened.
    """
    terms = list(dict.fromkeys(analyze(query)))
    if not terms:
        return []
    searcher = _searcher(path, version)
    results = searcher.search(Or([Term("text", t) for t in terms]), limit=limit)
    return [(int(hit["chunk_id"]), float(hit.score)) for hit in results]


def delete_index(home: Path, kb_name: str) -> None:
    """Remove a knowledge base's index folder (all of ``HOME/indexes/<kb>``)."""
    path = index_dir(home, kb_name)
    _drop_searcher(path)
    shutil.rmtree(path.parent, ignore_errors=True)
