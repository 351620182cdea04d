"""Knowledge-base benchmark: ingest rate by stage, query latency per mode, recall@5 on SQuAD; and
ingest at scale (``--scale``): peak memory and chunks/s on generated corpora of 1x, 10x and 50 MB.

Usage (from the repository root)::

    python bench/kb.py                      # ../shared/data/squad
    python bench/kb.py path/to/folder --queries 200 --repeats 3
    nice -n 10 python bench/kb.py --scale   # about 10 minutes; --base-mb, --budget

Prints figures; asserts nothing. The embedding rate (``Embedder.embed``, tokenising included) is
compared in the same run, over the same chunks, with two baselines and with the machine's peak:

- naive: 32-chunk batches in input order, every batch padded to 256 tokens, a default ONNX session;
- plain sorted: what sentence-transformers does: chunks sorted by length, batches of 32 padded to the
  batch's longest, a default ONNX session (onnxruntime's default threads: every core);
- peak: this machine's best rate for the model itself: batches of identical inputs of the chunks'
  mean token length (nothing padded, nothing tokenised), over the thread and batch settings that
  matter (one session on every core at batch 8/32; one single-threaded run per core at batch 4/8/16),
  the best kept. Rates are real (unpadded) tokens per second, so "% of peak" compares like with like.

All are measured alternately, ``--repeats`` rounds, medians reported (this machine's cores are
shared and timings drift; the spread is printed). Cold query: ``viva kb search`` as a new process
(imports, store, embedder load, one query), first with no saved optimised graph, then with it
(median of ``--repeats``). Recall@5 uses the SQuAD questions of the ingested files: a question's
gold is the paragraph it was written for.

``--scale``: each build runs in a child process of its own; its peak memory is the child's
``ru_maxrss`` (``os.wait4``, the same figure ``resource.getrusage`` reports), its rate the chunks
stored (published or staged) over its wall time. A build that outlives ``--budget`` seconds is
killed (SIGKILL) and reported as partial; the next build of the same corpus continues from what it
staged, which the resume row measures. Two embedders: ``model`` (the real ONNX encoder: the figure
users get) and ``bow`` (a hashed bag of words, labelled as such: the pipeline without the model's
cost, so the whole 50 MB goes through reading, chunking, staging, publishing and indexing in the
time available and the memory bound is seen over the whole corpus).
"""

from __future__ import annotations

import argparse
import json
import os
import random
import re
import signal
import statistics
import subprocess
import sys
import tempfile
import time
import zlib
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from engine.config import RetrievalConfig  # noqa: E402
from engine.knowledge.embed import get_embedder  # noqa: E402
from engine.knowledge.kb import build_kb  # noqa: E402
from engine.knowledge.retrieval import MODES, search  # noqa: E402
from engine.store import Store  # noqa: E402


def _session(model_path: Path, intra: int = 0):
    import onnxruntime as ort

    options = ort.SessionOptions()
    if intra:
        options.intra_op_num_threads = intra
        options.inter_op_num_threads = 1
    return ort.InferenceSession(str(model_path), sess_options=options, providers=["CPUExecutionProvider"])


def _feeds(names: list[str], rows: list[list[int]], length: int | None = None) -> tuple[dict, np.ndarray]:
    width = length or max(len(r) for r in rows)
    ids = np.zeros((len(rows), width), dtype=np.int64)
    mask = np.zeros_like(ids)
    for i, r in enumerate(rows):
        ids[i, : len(r)] = r
        mask[i, : len(r)] = 1
    feeds = {"input_ids": ids, "attention_mask": mask, "token_type_ids": np.zeros_like(ids)}
    return {k: feeds[k] for k in names}, mask


def _pool(hidden: np.ndarray, mask: np.ndarray) -> np.ndarray:
    pooled = (hidden * mask[:, :, None]).sum(1) / mask.sum(1, keepdims=True)
    return pooled / np.linalg.norm(pooled, axis=1, keepdims=True)


def naive_embed(model_path: Path, tokenizer_path: Path, texts: list[str], batch: int = 32, length: int = 256,
                session=None) -> float:
    """Seconds for the naive loop: fixed batches, padded to ``length``, default session options."""
    from tokenizers import Tokenizer

    tok = Tokenizer.from_file(str(tokenizer_path))
    tok.enable_truncation(length)
    tok.enable_padding(length=length)
    session = session or _session(model_path)
    names = [i.name for i in session.get_inputs()]
    start = time.perf_counter()
    for i in range(0, len(texts), batch):
        enc = tok.encode_batch(texts[i: i + batch])
        feeds, mask = _feeds(names, [e.ids for e in enc], length)
        feeds["attention_mask"] = np.array([e.attention_mask for e in enc], dtype=np.int64)
        _pool(session.run(None, feeds)[0], feeds["attention_mask"])
    return time.perf_counter() - start


def plain_sorted_embed(model_path: Path, tokenizer_path: Path, texts: list[str], batch: int = 32,
                       length: int = 256, session=None) -> float:
    """Seconds for the plain sorted loop (sentence-transformers' way): sort by length, batches of
    ``batch`` padded to their longest, default session options (every core)."""
    from tokenizers import Tokenizer

    tok = Tokenizer.from_file(str(tokenizer_path))
    tok.enable_truncation(length)
    session = session or _session(model_path)
    names = [i.name for i in session.get_inputs()]
    start = time.perf_counter()
    ids = [e.ids for e in tok.encode_batch(texts)]
    order = sorted(range(len(ids)), key=lambda i: len(ids[i]))
    out = np.empty((len(ids), 0), dtype=np.float32)
    for i in range(0, len(order), batch):
        feeds, mask = _feeds(names, [ids[j] for j in order[i: i + batch]])
        vectors = _pool(session.run(None, feeds)[0], mask)
        if out.shape[1] == 0:
            out = np.empty((len(ids), vectors.shape[1]), dtype=np.float32)
        out[order[i: i + batch]] = vectors
    return time.perf_counter() - start


def peak_rate(model_path: Path, length: int, tokens: int, threads: int) -> tuple[float, str]:
    """This machine's best rate for the model (real tokens/s) and the setting that reached it: batches
    of identical ``length``-token inputs (no padding, no tokenising), about ``tokens`` tokens per
    setting, over one session on every core (batch 8, 32) and one single-threaded run per core
    (batch 4, 8, 16)."""
    from concurrent.futures import ThreadPoolExecutor

    row = [101] + [2000 + k % 500 for k in range(length - 2)] + [102]
    best, label = 0.0, ""
    shared = _session(model_path)
    single = _session(model_path, intra=1)
    settings = [(f"1 session x {threads} threads, batch {b}", shared, b, 1) for b in (8, 32)] + \
               [(f"{threads} runs x 1 thread, batch {b}", single, b, threads) for b in (4, 8, 16)]
    for name, session, b, workers in settings:
        names = [i.name for i in session.get_inputs()]
        feeds, _ = _feeds(names, [row] * b)
        runs = max(workers, round(tokens / (b * length)))
        session.run(None, feeds)
        start = time.perf_counter()
        with ThreadPoolExecutor(workers) as pool:
            list(pool.map(lambda _, s=session, f=feeds: s.run(None, f), range(runs)))
        rate = runs * b * length / (time.perf_counter() - start)
        if rate > best:
            best, label = rate, name
    return best, label


def cold_query(home: Path, kb: str, question: str, repeats: int) -> tuple[float, list[float]]:
    """Seconds of ``viva kb search`` as a new process: the first with no saved optimised graph, then
    ``repeats`` with it."""
    import shutil

    viva = shutil.which("viva") or str(Path(sys.executable).with_name("viva"))
    cmd = [viva, "--home", str(home), "kb", "search", kb, question, "--json"]
    shutil.rmtree(home / "cache", ignore_errors=True)
    env = {**os.environ, "PYTHONPATH": str(ROOT)}

    def once() -> float:
        t = time.perf_counter()
        subprocess.run(cmd, check=True, capture_output=True, env=env)
        return time.perf_counter() - t

    first = once()
    return first, [once() for _ in range(repeats)]


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


# -- ingest at scale ---------------------------------------------------------------------------------

def vocabulary() -> list[str]:
    """The words of the shipped demo documents (real words, so token counts are realistic)."""
    words: set[str] = set()
    for path in sorted((ROOT / "engine" / "demo" / "docs").glob("*.md")):
        words.update(w.lower() for w in re.findall(r"[A-Za-z]{2,}", path.read_text(encoding="utf-8")))
    return sorted(words)


def generate_corpus(folder: Path, total_bytes: int, seed: int = 0, file_bytes: int = 48_000) -> dict[str, int]:
    """Write about ``total_bytes`` of text under ``folder``: ``.txt`` and ``.md`` files (one document
    each) and ``.jsonl`` files (one document per line), of random sentences over :func:`vocabulary`
    (seeded; no two paragraphs alike, so nothing is answered from the embedding cache).

    Returns:
        ``{"files", "bytes"}`` written.
    """
    rng = random.Random(seed)
    words = vocabulary()
    folder.mkdir(parents=True, exist_ok=True)

    def paragraph() -> str:
        sentences = []
        for _ in range(rng.randint(3, 7)):
            sentence = " ".join(rng.choice(words) for _ in range(rng.randint(8, 20)))
            sentences.append(sentence[0].upper() + sentence[1:] + ".")
        return " ".join(sentences)

    written = files = 0
    while written < total_bytes:
        kind = rng.choices(["txt", "md", "jsonl"], weights=[6, 2, 2])[0]
        path = folder / f"doc{files:06d}.{kind}"
        target = min(file_bytes, total_bytes - written)
        parts: list[str] = []
        size = 0
        while size < target:
            if kind == "jsonl":
                line = json.dumps({"id": f"{files}-{len(parts)}", "title": f"record {len(parts)}",
                                   "text": "\n\n".join(paragraph() for _ in range(rng.randint(1, 3)))})
                parts.append(line + "\n")
            else:
                parts.append(paragraph() + "\n\n")
            size += len(parts[-1].encode())
        if kind == "md":
            parts.insert(0, f"# Generated document {files}\n\n")
        data = "".join(parts).encode()
        path.write_bytes(data)
        written += len(data)
        files += 1
    return {"files": files, "bytes": written}


class BagOfWordsEmbedder:
    """A hashed bag of words (crc32 of each word, 384 buckets, L2-normalised): real vectors at almost no
    cost, so a bench can push a whole large corpus through the pipeline. Labelled ``bow`` in every
    figure; never the figure of the model."""

    name = "bench-bow-crc32@384"
    dim = 384

    def embed(self, texts: list[str]) -> np.ndarray:
        """One vector per text."""
        out = np.zeros((len(texts), self.dim), dtype=np.float32)
        for i, text in enumerate(texts):
            for w in re.findall(r"\w+", text.lower()):
                out[i, zlib.crc32(w.encode()) % self.dim] += 1.0
            norm = float(np.linalg.norm(out[i]))
            out[i] /= norm or 1.0
        return out

    def embed_one(self, text: str) -> np.ndarray:
        """One text's vector."""
        return self.embed([text])[0]


def _child(corpus: str, home: str, embedder_kind: str) -> None:
    """The build measured by :func:`measure` (run as ``bench/kb.py --child``); prints its summary."""
    embedder = BagOfWordsEmbedder() if embedder_kind == "bow" else get_embedder(RetrievalConfig().embedder)
    store = Store(Path(home) / "viva.db")
    if corpus == "-":  # the baseline: imports and the embedder loaded, nothing built
        embedder.embed(["warm up"])
        print(json.dumps({"baseline": True}))
        return
    summary = build_kb(store, Path(home), "bench", [corpus], embedder=embedder)
    print(json.dumps(summary.to_dict()))


def stored_chunks(home: Path, table: str = "chunks") -> int:
    """Chunks a (possibly killed) build stored (published or staged), or with ``table="embeddings"``,
    the vectors it cached."""
    if not (home / "viva.db").exists():
        return 0
    store = Store(home / "viva.db")
    try:
        return int(store.one(f"SELECT COUNT(*) AS n FROM {table}")["n"])
    finally:
        store.close()


def measure(corpus: Path | None, home: Path, embedder_kind: str, budget: float,
            kill_at_chunks: int | None = None) -> dict[str, object]:
    """Run one build in a child; kill it at ``budget`` seconds (or once ``kill_at_chunks`` are stored).

    Returns:
        seconds, peak RSS (MB), chunks stored (by then), chunks/s, whether it finished, its summary.
    """
    home.mkdir(parents=True, exist_ok=True)
    before = stored_chunks(home)
    vectors_before = stored_chunks(home, "embeddings")
    cmd = [sys.executable, str(Path(__file__).resolve()), "--child", str(corpus) if corpus else "-", str(home),
           embedder_kind]
    start = time.perf_counter()
    with tempfile.TemporaryFile("w+") as out_file, tempfile.TemporaryFile("w+") as err_file:
        proc = subprocess.Popen(cmd, stdout=out_file, stderr=err_file, text=True)
        killed = False
        while True:
            pid, status, usage = os.wait4(proc.pid, os.WNOHANG)  # reaped here only: its rusage is ours
            if pid:
                break
            time.sleep(0.5)
            elapsed = time.perf_counter() - start
            if not killed and (elapsed > budget or (
                    kill_at_chunks is not None and stored_chunks(home) - before >= kill_at_chunks)):
                os.kill(proc.pid, signal.SIGKILL)
                killed = True
        proc.returncode = status
        seconds = time.perf_counter() - start
        out_file.seek(0)
        err_file.seek(0)
        out, err = out_file.read(), err_file.read()
    summary = json.loads(out) if out.strip() and not killed else None
    if not killed and status != 0:
        raise SystemExit(f"child failed ({status}): {err[-2000:]}")
    chunks = stored_chunks(home) - before if killed or summary is None else int(summary.get("chunks_written", 0))
    embedded = stored_chunks(home, "embeddings") - vectors_before
    # finished: chunks stored per second, end to end; killed: chunks embedded per second (the build's
    # bottleneck; staged chunks lag by up to one batch)
    rate = (chunks if not killed else embedded) / seconds if seconds else 0.0
    return {"seconds": seconds, "peak_mb": usage.ru_maxrss / 1024, "chunks": chunks, "embedded": embedded,
            "rate": rate, "finished": not killed, "killed_by": None if not killed else (
                "kill_at" if kill_at_chunks is not None and seconds <= budget else "budget"), "summary": summary}


def scale_main(args: argparse.Namespace) -> None:
    """Peak memory and chunks/s at 1x, 10x and 50 MB (see the module docstring)."""
    with tempfile.TemporaryDirectory(prefix="viva-bench-scale-") as tmp:
        root = Path(tmp)
        sizes = [("1x", args.base_mb), ("10x", args.base_mb * 10), ("50 MB", 50.0)]
        corpora = {}
        for label, mb in sizes:
            t = time.perf_counter()
            info = generate_corpus(root / f"corpus-{label}", int(mb * 1e6), seed=15)
            corpora[label] = root / f"corpus-{label}"
            print(f"corpus {label}: {info['bytes'] / 1e6:.2f} MB in {info['files']} files "
                  f"(generated in {time.perf_counter() - t:.1f} s)", flush=True)
        print(f"\n{'corpus':<7} {'embedder':<8} {'stored':>8} {'embedded':>9} {'seconds':>8} {'chunks/s':>9} "
              f"{'peak RSS':>10}  note", flush=True)

        budgets = {"bow": args.bow_budget, "model": args.budget}

        def row(label: str, kind: str, m: dict[str, object], note: str = "") -> None:
            done = "" if m["finished"] or m["killed_by"] != "budget" else (
                f"partial: killed at the {budgets[kind]:.0f} s budget (chunks/s: embedded); ")
            print(f"{label:<7} {kind:<8} {m['chunks']:>8} {m['embedded']:>9} {m['seconds']:>8.1f} {m['rate']:>9.1f} "
                  f"{m['peak_mb']:>7.0f} MB  {done}{note}", flush=True)

        for kind in ("bow", "model"):
            base = measure(None, root / f"home-base-{kind}", kind, budgets[kind])
            row("none", kind, {**base, "chunks": 0, "embedded": 0, "rate": 0.0},
                "baseline: imports and the embedder loaded")
        for label, _ in sizes:
            for kind in ("bow", "model"):
                m = measure(corpora[label], root / f"home-{label}-{kind}", kind, budgets[kind])
                row(label, kind, m)
        # resumable: the 10x build killed once it stored about half its chunks, then built again
        full = measure(corpora["10x"], root / "home-resume-ref", "bow", args.bow_budget)
        half = max(1, int(full["chunks"]) // 2)
        cut = measure(corpora["10x"], root / "home-resume", "bow", args.bow_budget, kill_at_chunks=half)
        again = measure(corpora["10x"], root / "home-resume", "bow", args.bow_budget)
        row("10x", "bow", cut, f"kill -9 after {cut['chunks']} of {full['chunks']} chunks were stored")
        summary = again["summary"] or {}
        row("10x", "bow", again, f"resumed: {summary.get('resumed', 0)} documents already staged were not redone; "
                                 f"{summary.get('chunks', 0)} chunks in the knowledge base "
                                 f"(a clean build: {full['summary']['chunks'] if full['summary'] else '?'})")


def main() -> None:
    if len(sys.argv) == 5 and sys.argv[1] == "--child":
        _child(*sys.argv[2:])
        return
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("paths", nargs="*", default=[str(ROOT.parent / "shared" / "data" / "squad")])
    parser.add_argument("--queries", type=int, default=0, help="Use at most this many questions (0: all).")
    parser.add_argument("--repeats", type=int, default=3, help="Alternating embedding measurements (medians).")
    parser.add_argument("--no-cold", dest="cold", action="store_false", help="Skip the cold CLI query time.")
    parser.add_argument("--k", type=int, default=5)
    parser.add_argument("--scale", action="store_true", help="Peak memory and chunks/s at 1x, 10x and 50 MB.")
    parser.add_argument("--base-mb", type=float, default=0.25, help="--scale: size of the 1x corpus in MB.")
    parser.add_argument("--budget", type=float, default=75.0,
                        help="--scale: seconds before a build with the model is killed (reported as partial).")
    parser.add_argument("--bow-budget", type=float, default=300.0,
                        help="--scale: the same for the bag-of-words builds (the whole corpus, normally).")
    args = parser.parse_args()
    if args.scale:
        scale_main(args)
        return
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
        lengths = [len(ids) for ids in embedder._encode_ids(texts)]
        real = sum(lengths)
        print(f"chunk length: mean {statistics.mean(lengths):.0f} tokens, max {max(lengths)} "
              f"(cap {embedder.max_length}); {embedder.threads} threads; padding to 256 would add "
              f"{len(texts) * 256 / real - 1:.0%} tokens; load average {os.getloadavg()[0]:.2f}", flush=True)
        default = _session(embedder.model_path)  # created once, outside the timings, as the embedder's is
        runs: dict[str, list[float]] = {"ours": [], "naive": [], "plain": []}
        peaks: list[tuple[float, str]] = []
        for _ in range(args.repeats):  # alternated, so drifting load touches every figure alike
            t = time.perf_counter()
            embedder.embed(texts)
            runs["ours"].append(time.perf_counter() - t)
            runs["naive"].append(naive_embed(embedder.model_path, embedder.tokenizer_path, texts, session=default))
            runs["plain"].append(plain_sorted_embed(embedder.model_path, embedder.tokenizer_path, texts,
                                                    session=default))
            peaks.append(peak_rate(embedder.model_path, round(statistics.mean(lengths)), min(real, 12_000),
                                   embedder.threads))
        med = {k: statistics.median(v) for k, v in runs.items()}
        peak = statistics.median(p for p, _ in peaks)
        setting = "; ".join(dict.fromkeys(label for _, label in peaks))
        for key, label in (("ours", "Embedder.embed (sorted, per-core runs)"), ("plain", "plain sorted loop"),
                           ("naive", "naive loop (padded to 256)")):
            rate = real / med[key]
            print(f"  {label:<40} {len(texts) / med[key]:7.1f} chunks/s {rate:8.0f} tokens/s  "
                  f"{rate / peak:5.0%} of peak  (median of {args.repeats}: "
                  f"{', '.join(f'{x:.2f}' for x in runs[key])} s)")
        print(f"  peak for the model on this machine      {peak:8.0f} tokens/s (median of {args.repeats}: "
              f"{', '.join(f'{p:.0f}' for p, _ in peaks)}; best setting: {setting}; inputs of the mean length)")
        print(f"embedding speed-up: {med['naive'] / med['ours']:.2f}x the naive loop (goal >= 3x), "
              f"{med['plain'] / med['ours']:.2f}x the plain sorted loop (goal >= 2x); the ceiling at this peak: "
              f"{med['naive'] * peak / real:.2f}x and {med['plain'] * peak / real:.2f}x")
        if args.cold:
            first, again = cold_query(home, "bench", "What is the capital of Normandy?", args.repeats)
            print(f"cold `viva kb search` (new process): {first:.2f} s optimising the graph, then median "
                  f"{statistics.median(again):.2f} s with the saved graph ({', '.join(f'{x:.2f}' for x in again)} s)")

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
