"""The bulk encoder: all-MiniLM-L6-v2 in bfloat16 on CPUs that multiply it in hardware, for large batches.

On a CPU with Intel's Advanced Matrix Extensions (Xeon since Sapphire Rapids), oneDNN runs the
transformer's matrix products in bfloat16 on the tile unit, accumulating in float32; norms,
softmax and pooling stay in float32. Measured on a 2-core Xeon, one thread each, 1,000
conversation lines in batches of 64: 680-880 texts/s against 260-280 for ONNX Runtime in
float32, and a cosine of at least 0.99995 to the float32 vectors. Each call costs about 15 ms of
eager torch, against 6 ms for a single text on ONNX Runtime: the bulk encoder is ahead from
about four texts on, so queries stay on the main backend and merges use this one.

Without AMX, a CPU with AVX-512 BF16 still multiplies bfloat16 pairs at twice the float32 rate:
on a 2-core AMD EPYC of that kind (no AMX), one thread, fact texts in batches of 20 and 100:
455 and 426 texts/s against 265-282 for ONNX Runtime in float32 (batches of 5: 374 against
282). Through a real worker on that machine, beside PostgreSQL, the gain did not show: 41 ms of
CPU per KPR against 45.8 without (medians of alternated runs of 200 KPRs), 46.3 against 46.1
over 800, and the KPRs merged per second within the machine's noise either way.

MEMORYPR_EMBEDDING_BULK: `off` (the default), `auto` (bfloat16 where the CPU has AMX or AVX-512
BF16, read from /proc/cpuinfo so that deciding imports nothing) or `bf16` (always; measure such a
CPU with `make bench BENCH_ARGS=embedding`).
Off by default: it is for worker machines of their own. On a 2-core virtual machine running
the web tier beside the worker (`make run`), merges through the worker gained about 7% with it
(a store of 220k versions, where inserting into the HNSW graphs bounds a merge), each worker
process held about 300 MB more, and the web tier's retrieval p95 at 8 clients (100k facts) was
94-131 ms in six runs against 75-121 ms in five without it: within the machine's noise, but
no better. MEMORYPR_EMBEDDING_BULK_MIN_TEXTS (default 8): fewer texts than
that go to the main backend. A process that loads it imports torch (about 300 MB more resident
memory); the web tier embeds queries only and never loads it.
"""

from __future__ import annotations

import logging
import os
import threading
import warnings
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from memorypr.vectors.encoders import OnnxEncoder, encode_in_padded_batches

if TYPE_CHECKING:
    from tokenizers import Tokenizer

logger = logging.getLogger(__name__)

SETTINGS = ("auto", "bf16", "off")
DEFAULT_MIN_TEXTS = 8
# bfloat16 keeps 8 bits of mantissa: a graph whose vectors fall under this cosine to its own
# float32 vectors is not the same model for retrieval, and is not used.
MIN_COSINE = 0.999
PROBE_TEXTS = (
    "warm",
    "likes coffee: likes a strong coffee in the morning",
    "home city: 上个月我举家搬迁到了深圳",
    "I just got back from walking my two dogs, they love the beach in the morning.",
)


def bulk_setting() -> str:
    value = os.environ.get("MEMORYPR_EMBEDDING_BULK", "off").strip().lower() or "off"
    if value not in SETTINGS:
        raise ValueError(f"MEMORYPR_EMBEDDING_BULK={value!r}: expected one of {', '.join(SETTINGS)}")
    return value


def bulk_min_texts() -> int:
    return max(1, int(os.environ.get("MEMORYPR_EMBEDDING_BULK_MIN_TEXTS", "").strip() or DEFAULT_MIN_TEXTS))


# A unit that multiplies bfloat16 in hardware: the tile unit (AMX), or AVX-512's bfloat16 dot product.
BF16_FLAGS = frozenset({"amx_bf16", "avx512_bf16"})


def cpu_flags(cpuinfo: Path = Path("/proc/cpuinfo")) -> frozenset[str]:
    try:
        text = cpuinfo.read_text()
    except OSError:
        return frozenset()
    for line in text.splitlines():
        if line.startswith("flags"):
            return frozenset(line.partition(":")[2].split())
    return frozenset()


def bulk_wanted() -> bool:
    """Whether this machine's settings call for the bulk encoder at all."""
    setting = bulk_setting()
    if setting == "auto":
        return bool(BF16_FLAGS & cpu_flags())
    return setting == "bf16"


class Bf16Encoder:
    name = "torch-bf16"

    def __init__(self, *, model: Any, tokenizer: Tokenizer) -> None:
        self._model = model
        self._tokenizer = tokenizer
        self._tokenize_lock = threading.Lock()
        self._agreement = float("nan")
        self._traced: Any = None

    def encode(self, texts: list[str], *, batch_size: int) -> np.ndarray:
        return encode_in_padded_batches(
            self._tokenizer, texts, batch_size=batch_size, lock=self._tokenize_lock, run=self._run
        )

    def _run(self, input_ids: np.ndarray, attention_mask: np.ndarray) -> np.ndarray:
        import torch

        # The traced graph is one call into C++ that releases the interpreter lock, so a merge's
        # transactions run beside it. Eager torch takes the lock back between its hundreds of
        # operations: measured beside a busy Python thread, 100 texts took 2.6 s instead of 0.13.
        # Without the profiling executor a graph is not re-specialised for each new shape.
        with (
            torch.inference_mode(),
            torch.autocast("cpu", dtype=torch.bfloat16),
            torch.jit.optimized_execution(False),
        ):
            hidden = self._traced(torch.from_numpy(input_ids), torch.from_numpy(attention_mask))
        return np.asarray(hidden.float().numpy())

    def _trace(self) -> None:
        import torch

        class TokenStates(torch.nn.Module):
            def __init__(self, model: Any) -> None:
                super().__init__()
                self.model = model

            def forward(self, input_ids: torch.Tensor, attention_mask: torch.Tensor) -> torch.Tensor:
                return self.model(
                    input_ids=input_ids,
                    attention_mask=attention_mask,
                    token_type_ids=torch.zeros_like(input_ids),
                ).last_hidden_state

        # An example with padding, so that the mask's path is the one traced.
        input_ids = torch.ones((2, 7), dtype=torch.long)
        attention_mask = torch.ones((2, 7), dtype=torch.long)
        attention_mask[1, 5:] = 0
        with torch.inference_mode(), torch.autocast("cpu", dtype=torch.bfloat16), warnings.catch_warnings():
            # The tracer warns of every Python-side shape check in the model's code; the traced
            # graph is checked against float32 after (`agreement`).
            warnings.simplefilter("ignore")
            traced = torch.jit.trace(
                TokenStates(self._model).eval(), (input_ids, attention_mask), check_trace=False
            )
            self._traced = torch.jit.freeze(traced)

    def _linear_weights_to_bf16(self) -> None:
        """Cast once what autocast would cast on every call: 4-6 ms of a small batch's time."""
        import torch

        for module in self._model.modules():
            if isinstance(module, torch.nn.Linear):
                module.to(torch.bfloat16)

    def agreement(self) -> float:
        """The least cosine between this encoder's vectors of the probe texts and the same
        model's in float32, measured when it was loaded."""
        return self._agreement

    @classmethod
    def load(cls, *, threads: int) -> Bf16Encoder:
        import torch
        from transformers import AutoModel
        from transformers.utils import logging as transformers_logging

        from memorypr.vectors.onnx_model import package_model_dir

        # One intra-op thread per process, as for the other backends (see TorchEncoder.load).
        torch.set_num_threads(threads)
        model_dir = package_model_dir()
        transformers_logging.disable_progress_bar()  # a worker's log is no terminal
        model = AutoModel.from_pretrained(str(model_dir)).eval()
        encoder = cls(model=model, tokenizer=OnnxEncoder.tokenizer_load(model_dir))
        texts = list(PROBE_TEXTS)
        exact = encode_in_padded_batches(
            encoder._tokenizer,
            texts,
            batch_size=len(texts),
            lock=encoder._tokenize_lock,
            run=encoder._run_fp32,
        )
        encoder._linear_weights_to_bf16()
        encoder._trace()
        encoder._agreement = float((encoder.encode(texts, batch_size=len(texts)) * exact).sum(axis=1).min())
        return encoder

    def _run_fp32(self, input_ids: np.ndarray, attention_mask: np.ndarray) -> np.ndarray:
        import torch

        ids = torch.from_numpy(input_ids)
        with torch.inference_mode():
            hidden = self._model(
                input_ids=ids,
                attention_mask=torch.from_numpy(attention_mask),
                token_type_ids=torch.zeros_like(ids),
            ).last_hidden_state
        return np.asarray(hidden.numpy())


def bulk_encoder_load(*, threads: int) -> Bf16Encoder | None:
    """The bulk encoder when this machine's settings want it and it agrees with float32;
    None (the main backend embeds everything) otherwise."""
    if not bulk_wanted():
        return None
    try:
        encoder = Bf16Encoder.load(threads=threads)
        agreement = encoder.agreement()
    except Exception:
        logger.warning("embedding: the bfloat16 bulk encoder is unavailable", exc_info=True)
        return None
    if agreement < MIN_COSINE:
        logger.warning(
            "embedding: bfloat16 vectors agree with float32 to a cosine of %.5f only (< %s): not used",
            agreement,
            MIN_COSINE,
        )
        return None
    logger.info("embedding: bfloat16 bulk encoder (agreement %.5f)", agreement)
    return encoder
