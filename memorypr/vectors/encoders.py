"""The encoders of all-MiniLM-L6-v2: ONNX Runtime (the default), sentence-transformers (the
fallback), and the padded batching and pooling they share with the bulk encoder
(`memorypr.vectors.bulk`). Which one a process uses is `memorypr.vectors.embedding`'s choice.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Protocol

import numpy as np

if TYPE_CHECKING:
    import onnxruntime
    from sentence_transformers import SentenceTransformer
    from tokenizers import Tokenizer

logger = logging.getLogger(__name__)

EMBEDDING_DIMENSIONS = 384


class Encoder(Protocol):
    name: str

    def encode(self, texts: list[str], *, batch_size: int) -> np.ndarray:
        """Unit-length float32 vectors, one row per text, in order."""
        ...


def mean_pool_normalize(hidden: np.ndarray, attention_mask: np.ndarray) -> np.ndarray:
    """sentence-transformers' Pooling(mean) + Normalize: the mean of the real tokens' states, L2 = 1."""
    mask = attention_mask[..., None].astype(np.float32)
    summed = (hidden * mask).sum(axis=1)
    pooled = summed / np.clip(mask.sum(axis=1), 1e-9, None)
    norms = np.linalg.norm(pooled, axis=1, keepdims=True)
    return (pooled / np.maximum(norms, 1e-12)).astype(np.float32, copy=False)


def encode_in_padded_batches(
    tokenizer: Tokenizer,
    texts: list[str],
    *,
    batch_size: int,
    lock: threading.Lock,
    run: Callable[[np.ndarray, np.ndarray], np.ndarray],
) -> np.ndarray:
    """Unit vectors of `texts`, in order: tokenized at once, then `run(input_ids, attention_mask)`
    (token states out) over batches of texts of about one length, mean-pooled and normalised."""
    with lock:
        encodings = tokenizer.encode_batch(texts)
    lengths = [len(encoding.ids) for encoding in encodings]
    # Longest first, so each batch pads to texts of about its own length.
    order = sorted(range(len(texts)), key=lambda i: -lengths[i])
    vectors = np.empty((len(texts), EMBEDDING_DIMENSIONS), dtype=np.float32)
    for start in range(0, len(order), max(1, batch_size)):
        rows = order[start : start + max(1, batch_size)]
        width = lengths[rows[0]]
        input_ids = np.zeros((len(rows), width), dtype=np.int64)
        attention_mask = np.zeros((len(rows), width), dtype=np.int64)
        for row, index in enumerate(rows):
            input_ids[row, : lengths[index]] = encodings[index].ids
            attention_mask[row, : lengths[index]] = 1
        vectors[rows] = mean_pool_normalize(run(input_ids, attention_mask), attention_mask)
    return vectors


class TorchEncoder:
    name = "torch"

    def __init__(self, model: SentenceTransformer) -> None:
        self._model = model
        # The fast tokenizer is not safe to share between threads ("Already borrowed": the
        # transformers wrapper reconfigures padding on every call); encoding is CPU-bound
        # anyway, so threads of one process take turns.
        self._lock = threading.Lock()

    @classmethod
    def load(cls, *, threads: int) -> TorchEncoder:
        import torch
        from sentence_transformers import SentenceTransformer

        from memorypr.vectors.onnx_model import package_model_dir

        # One intra-op thread per process by default: web and worker processes already run one
        # per core, and torch's own pool on top of them oversubscribes the CPUs (a merge measured
        # ~7x slower on a busy 2-core machine with torch's default).
        torch.set_num_threads(threads)
        return cls(SentenceTransformer(str(package_model_dir()), device="cpu"))

    def encode(self, texts: list[str], *, batch_size: int) -> np.ndarray:
        with self._lock:
            vectors = self._model.encode(
                texts,
                batch_size=batch_size,
                normalize_embeddings=True,
                convert_to_numpy=True,
                show_progress_bar=False,
            )
        return np.asarray(vectors, dtype=np.float32)


class OnnxEncoder:
    name = "onnx"

    def __init__(self, *, session: onnxruntime.InferenceSession, tokenizer: Tokenizer) -> None:
        self._session = session
        self._tokenizer = tokenizer
        # The tokenizer is configured once and only read afterwards, but a lock costs microseconds
        # next to the model and rules out "Already borrowed" for good. InferenceSession.run is
        # thread-safe and releases the GIL, so inference itself runs concurrently.
        self._tokenize_lock = threading.Lock()

    @staticmethod
    def tokenizer_load(model_dir: Path) -> Tokenizer:
        """The package's fast tokenizer, set up as sentence-transformers calls it."""
        from tokenizers import Tokenizer

        from memorypr.vectors.onnx_model import max_seq_length

        tokenizer = Tokenizer.from_file(str(model_dir / "tokenizer.json"))
        # tokenizer.json pads and truncates to 128; sentence-transformers pads each batch to its
        # longest text and truncates at max_seq_length (256). Padding is done per batch below.
        tokenizer.no_padding()
        tokenizer.enable_truncation(max_length=max_seq_length(model_dir))
        return tokenizer

    def encode(self, texts: list[str], *, batch_size: int) -> np.ndarray:
        return encode_in_padded_batches(
            self._tokenizer, texts, batch_size=batch_size, lock=self._tokenize_lock, run=self._run
        )

    def _run(self, input_ids: np.ndarray, attention_mask: np.ndarray) -> np.ndarray:
        (hidden,) = self._session.run(
            ["last_hidden_state"],
            {
                "input_ids": input_ids,
                "attention_mask": attention_mask,
                "token_type_ids": np.zeros_like(input_ids),
            },
        )
        return np.asarray(hidden)

    def probe_agrees(self) -> bool:
        """Whether this graph reproduces the reference vectors its export stored."""
        from memorypr.vectors.onnx_model import PROBE_MIN_COSINE, session_probe

        texts, expected = session_probe(self._session)
        got = self.encode(texts, batch_size=len(texts))
        cosines = (got * np.asarray(expected, dtype=np.float32)).sum(axis=1)
        return bool(np.all(cosines >= PROBE_MIN_COSINE))

    @classmethod
    def load(cls, *, threads: int) -> OnnxEncoder:
        """Open the cached ONNX export (exporting it first if it is missing or unusable)."""
        import onnxruntime  # noqa: F401 - missing ONNX Runtime means the torch fallback

        from memorypr.vectors.onnx_model import (
            onnx_model_ensure,
            onnx_model_path,
            package_model_dir,
            session_open,
        )

        model_dir = package_model_dir()
        tokenizer = cls.tokenizer_load(model_dir)
        opened: dict[Path, OnnxEncoder] = {}

        def is_valid(path: Path) -> bool:
            try:
                encoder = cls(session=session_open(path, threads=threads), tokenizer=tokenizer)
                if not encoder.probe_agrees():
                    return False
            except Exception as exc:  # a truncated or foreign file fails in many ways
                logger.warning("embedding: cannot use the ONNX model at %s: %s", path, exc)
                return False
            opened[path] = encoder
            return True

        path = onnx_model_ensure(onnx_model_path(model_dir), is_valid=is_valid)
        logger.info("embedding: ONNX Runtime with %s", path)
        return opened[path]
