"""Knowledge-base benchmark: ingest rate by stage, query latency per mode, recall@5 on SQuAD.

Usage (from the repository root)::

    python bench/kb.py                      # ../shared/data/squad
    python bench/kb.py path/to/folder --queries 200 --repeats 3

Prints figures; asserts nothing. The embedding rate is compared with a naive loop over the same
chunks in the same run: 32-chunk batches in input order, every batch padded to 256 tokens, a
default ONNX session. The two are measured alternately (``--repeats`` times, best kept) because
this machine's cores are shared and timings drift. Recall@5 uses the SQuAD questions of the
ingested files: a question's gold is the paragraph it was written for.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from engine.config import RetrievalConfig  # noqa: E402
from engine.knowledge.embed import get_embedder  # noqa: E402
from engine.knowledge.kb import build_kb  # noqa: E402
from engine.knowledge.retrieval import MODES, search  # noqa: E402
from engine.store import Store  # noqa: E402


def naive_embed(model_path: Path, tokenizer_path: Path, texts: list[str], batch: int = 32, length: int = 256) -> float:
    """Seconds for the naive loop: fixed batches, padded to ``length``, default session options."""
    import onnxruntime as ort
    from tokenizers import Tokenizer

    tok = Tokenizer.from_file(str(tokenizer_path))
    tok.enable_truncation(length)
    tok.enable_padding(length=length)
    session = ort.InferenceSession(str(model_path), providers=["CPUExecutionProvider"])
    names = [i.name for i in session.get_inputs()]
    start = time.perf_counter()
    for i in range(0, len(texts), batch):
        enc = tok.encode_batch(texts[i: i + batch])
        ids = np.array([e.ids for e in enc], dtype=np.int64)
        mask = np.array([e.attention_mask for e in enc], dtype=np.int64)
        feeds = {"input_ids": ids, "attention_mask": mask, "token_type_ids": np.zeros_like(ids)}
        hidden = session.run(None, {k: feeds[k] for k in names})[0]
        pooled = (hidden * mask[:, :, None]).sum(1) / mask.sum(1, keepdims=True)
        pooled / np.linalg.norm(pooled, axis=1, keepdims=True)
    return time.perf_counter() - start


def squad_questions(paths: list[Path]) -> list[tuple[str, str]]:
    """``(question, gold document path)`` for every SQuAD question in the given files/folders."""
    files = [p for path in paths for p in ([path] if path.is_file() else sorted(path.rglob("*.json")))]
    out = []
    for f in files:
        try:
            data = json.loads(f.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            continue
        if not (isinstance(data, dict) and isinstance(data.get("data"), list)):
            continue
        for ai, article in enumerate(data["data"]):
            for pi, paragraph in enumerate(article.get("paragraphs") or []):
                for qa in paragraph.get("qas") or []:
                    out.append((qa["question"], f"{f.resolve()}#data[{ai}].paragraphs[{pi}]"))
    return out


def pct(values: list[float], q: float) -> float:
    return float(np.percentile(np.array(values), q)) if values else float("nan")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("paths", nargs="*", default=[str(ROOT.parent / "shared" / "data" / "squad")])
    parser.add_argument("--queries", type=int, default=0, help="Use at most this many questions (0: all).")
    parser.add_argument("--repeats", type=int, default=2, help="Alternating embedding measurements.")
    parser.add_argument("--k", type=int, default=5)
    args = parser.parse_args()
    paths = [Path(p) for p in args.paths]

    config = RetrievalConfig()
    embedder = get_embedder(config.embedder)  # loaded before any timing
    with tempfile.TemporaryDirectory(prefix="viva-bench-kb-") as tmp:
        home = Path(tmp)
        store = Store(home / "viva.db")
        t0 = time.perf_counter()
        summary = build_kb(store, home, "bench", paths, config=config, embedder=embedder)
        total = time.perf_counter() - t0
        s = summary.seconds
        n = summary.chunks
        print(f"corpus: {summary.documents} documents, {n} chunks, {summary.files_read} files "
              f"({len(summary.bad_files)} skipped)")
        print(f"ingest total {total:.2f} s = {n / total:.1f} chunks/s")
        for stage, key in (("read + chunking", None), ("embedding", "embed"), ("BM25 indexing", "index"),
                           ("SQLite writes", "store")):
            sec = s["read"] + s["chunk"] if key is None else s[key]
            print(f"  {stage:<16} {sec:8.3f} s  {n / sec if sec else float('inf'):10.1f} chunks/s")

        texts = [r["text"] for r in store.query("SELECT text FROM chunks ORDER BY id")]
        tokens = [len(ids) for ids in embedder._encode_ids(texts)]
        print(f"chunk length: mean {statistics.mean(tokens):.0f} tokens, max {max(tokens)} "
              f"(cap {embedder.max_length}); threads {embedder.threads}")
        best_opt, best_naive = float("inf"), float("inf")
        for _ in range(args.repeats):
            t = time.perf_counter()
            embedder.embed(texts)
            best_opt = min(best_opt, time.perf_counter() - t)
            best_naive = min(best_naive, naive_embed(embedder.model_path, embedder.tokenizer_path, texts))
        print(f"embedding, best of {args.repeats}: sorted+dynamic padding {len(texts) / best_opt:.1f} chunks/s, "
              f"naive (32 per batch, padded to 256) {len(texts) / best_naive:.1f} chunks/s, "
              f"speed-up {best_naive / best_opt:.2f}x (goal >= 3x)")

        questions = squad_questions(paths)
        if args.queries:
            questions = questions[: args.queries]
        doc_ids = {r["path"]: r["id"] for r in store.query("SELECT id, path FROM documents")}
        for mode in MODES:  # warm the caches (searcher, matrix)
            search(store, home, "bench", "warm up", k=args.k, mode=mode, config=config, embedder=embedder)
        recall: dict[str, float] = {}
        for mode in MODES:
            latencies, found = [], 0
            for question, gold in questions:
                t = time.perf_counter()
                hits = search(store, home, "bench", question, k=args.k, mode=mode, config=config, embedder=embedder)
                latencies.append((time.perf_counter() - t) * 1000)
                found += any(h.document_id == doc_ids.get(gold) for h in hits)
            recall[mode] = found / len(questions) if questions else float("nan")
            print(f"{mode:<6} query p50 {pct(latencies, 50):6.1f} ms  p95 {pct(latencies, 95):6.1f} ms  "
                  f"recall@{args.k} {recall[mode]:.3f}  ({len(questions)} questions)")
        if questions:
            print(f"goals: hybrid recall@{args.k} >= bm25: {recall['hybrid'] >= recall['bm25']}")
        store.close()


if __name__ == "__main__":
    main()
