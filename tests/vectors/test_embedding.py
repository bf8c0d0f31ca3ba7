from __future__ import annotations

import shutil
import sys
import threading
from pathlib import Path

import numpy as np
import pytest

from memorypr.vectors import embedding, onnx_model
from memorypr.vectors.embedding import (
    embed_text,
    embed_texts,
    embedding_backend_name,
    embedding_cache,
    embedding_reset,
)
from memorypr.vectors.embedding_cache import EmbeddingCache
from memorypr.vectors.encoders import EMBEDDING_DIMENSIONS, OnnxEncoder, TorchEncoder
from tests.vectors.texts import AGREEMENT_TEXTS

TEXTS = AGREEMENT_TEXTS


pytestmark = pytest.mark.usefixtures("fresh_backend")


@pytest.fixture(scope="module")
def torch_encoder() -> TorchEncoder:
    return TorchEncoder.load(threads=1)


@pytest.fixture(scope="module")
def exported_model(onnx_encoder: OnnxEncoder) -> Path:
    """The export in the default cache folder (made by loading the ONNX backend once)."""
    return onnx_model.onnx_model_path()


def cosines(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    return np.asarray((a * b).sum(axis=1) / (np.linalg.norm(a, axis=1) * np.linalg.norm(b, axis=1)))


# --- both backends -------------------------------------------------------------------------


def test_both_backends_give_unit_vectors_that_agree(
    torch_encoder: TorchEncoder, onnx_encoder: OnnxEncoder
) -> None:
    # given / when
    from_torch = torch_encoder.encode(TEXTS, batch_size=64)
    from_onnx = onnx_encoder.encode(TEXTS, batch_size=64)
    # then
    assert from_onnx.shape == from_torch.shape == (len(TEXTS), EMBEDDING_DIMENSIONS)
    np.testing.assert_allclose(np.linalg.norm(from_onnx, axis=1), 1.0, atol=1e-5)
    np.testing.assert_allclose(np.linalg.norm(from_torch, axis=1), 1.0, atol=1e-5)
    assert cosines(from_onnx, from_torch).min() >= 0.999


def test_onnx_vectors_do_not_depend_on_the_batch_a_text_is_padded_in(onnx_encoder: OnnxEncoder) -> None:
    # given: texts of very different lengths, so the short ones are padded in a shared batch
    alone = np.stack([onnx_encoder.encode([text], batch_size=1)[0] for text in TEXTS])
    # when
    together = onnx_encoder.encode(TEXTS, batch_size=3)
    # then
    assert cosines(alone, together).min() >= 0.99999


def test_distinct_texts_get_distinct_vectors(onnx_encoder: OnnxEncoder) -> None:
    vectors = onnx_encoder.encode(["drinks green tea", "works as a nurse on night shifts"], batch_size=2)
    assert float(vectors[0] @ vectors[1]) < 0.9


def test_the_default_backend_is_onnx_and_never_imports_torch_itself() -> None:
    # when
    name = embedding_backend_name()
    vector = embed_text("has a cat called Miso")
    # then
    assert name == "onnx"
    assert len(vector) == EMBEDDING_DIMENSIONS
    assert abs(float(np.linalg.norm(vector)) - 1.0) < 1e-5


# --- fallback --------------------------------------------------------------------------------


def test_the_torch_backend_is_used_when_set(
    monkeypatch: pytest.MonkeyPatch, onnx_encoder: OnnxEncoder
) -> None:
    # given
    monkeypatch.setenv("MEMORYPR_EMBEDDING_BACKEND", "torch")
    # when
    vectors = np.asarray(embed_texts(TEXTS[:3]))
    # then
    assert embedding_backend_name() == "torch"
    assert cosines(vectors, onnx_encoder.encode(TEXTS[:3], batch_size=3)).min() >= 0.999


def test_without_onnx_runtime_it_falls_back_to_torch(monkeypatch: pytest.MonkeyPatch) -> None:
    # given: onnxruntime cannot be imported
    monkeypatch.setitem(sys.modules, "onnxruntime", None)
    # when
    vector = embed_text("lives in Shenzhen")
    # then
    assert embedding_backend_name() == "torch"
    assert abs(float(np.linalg.norm(vector)) - 1.0) < 1e-5


def test_a_failed_export_falls_back_to_torch(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    # given: no cached model, and an export that fails
    monkeypatch.setenv("MEMORYPR_EMBEDDING_ONNX_PATH", str(tmp_path / "model.onnx"))

    def failing_export(path: Path) -> None:
        raise onnx_model.OnnxExportError("no room on the disk")

    monkeypatch.setattr(onnx_model, "onnx_export_in_child", failing_export)
    # when / then
    assert embedding_backend_name() == "torch"
    assert len(embed_text("lives in Shenzhen")) == EMBEDDING_DIMENSIONS


def test_an_unknown_backend_is_refused(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MEMORYPR_EMBEDDING_BACKEND", "tensorflow")
    with pytest.raises(ValueError, match="MEMORYPR_EMBEDDING_BACKEND"):
        embed_text("anything")


# --- the cache -------------------------------------------------------------------------------


class CountingEncoder:
    name = "counting"

    def __init__(self, inner: OnnxEncoder) -> None:
        self.inner = inner
        self.texts: list[str] = []

    def encode(self, texts: list[str], *, batch_size: int) -> np.ndarray:
        self.texts += texts
        return self.inner.encode(texts, batch_size=batch_size)


@pytest.fixture
def counting(monkeypatch: pytest.MonkeyPatch, onnx_encoder: OnnxEncoder) -> CountingEncoder:
    encoder = CountingEncoder(onnx_encoder)
    monkeypatch.setattr(embedding, "_backend", lambda: encoder)
    return encoder


def test_the_cache_returns_the_same_vector_without_embedding_again(counting: CountingEncoder) -> None:
    # given
    first = embed_text("drinks green tea every afternoon")
    # when
    second = embed_text("drinks green tea every afternoon")
    # then
    assert second == first
    assert counting.texts == ["drinks green tea every afternoon"]


def test_a_batch_embeds_each_new_text_once(counting: CountingEncoder) -> None:
    # given
    embed_texts(["a", "b"])
    # when
    vectors = embed_texts(["b", "c", "c", "a"])
    # then: only "c" was new, and it was embedded once
    assert counting.texts == ["a", "b", "c"]
    assert vectors[1] == vectors[2]
    assert vectors[3] == embed_text("a")


def test_changing_a_returned_vector_does_not_change_the_cached_one(counting: CountingEncoder) -> None:
    vector = embed_text("has a cat called Miso")
    vector[0] = 42.0
    assert embed_text("has a cat called Miso")[0] != 42.0


def test_the_cache_does_not_grow_past_its_bound(
    monkeypatch: pytest.MonkeyPatch, counting: CountingEncoder
) -> None:
    # given
    monkeypatch.setenv("MEMORYPR_EMBEDDING_CACHE_SIZE", "3")
    embedding_reset()
    # when
    embed_texts([f"text {i}" for i in range(10)])
    # then
    assert len(embedding_cache()) == 3


def test_the_cache_evicts_the_least_recently_used() -> None:
    # given
    cache = EmbeddingCache(maxsize=2)
    cache.put_many([("a", np.ones(3)), ("b", np.zeros(3))])
    cache.get_many(["a"])  # "a" is now more recent than "b"
    # when
    cache.put_many([("c", np.ones(3))])
    # then
    hits = cache.get_many(["a", "b", "c"])
    assert [vector is not None for vector in hits] == [True, False, True]
    assert len(cache) == 2


def test_a_cache_of_size_zero_keeps_nothing(
    monkeypatch: pytest.MonkeyPatch, counting: CountingEncoder
) -> None:
    monkeypatch.setenv("MEMORYPR_EMBEDDING_CACHE_SIZE", "0")
    embedding_reset()
    embed_text("x")
    embed_text("x")
    assert counting.texts == ["x", "x"]
    assert len(embedding_cache()) == 0


def test_very_long_texts_are_not_cached() -> None:
    cache = EmbeddingCache(maxsize=10)
    cache.put_many([("y" * 10_000, np.ones(3))])
    assert len(cache) == 0


# --- the export --------------------------------------------------------------------------------


def test_a_cached_export_is_reused(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, exported_model: Path
) -> None:
    # given: a good export in the cache folder
    target = tmp_path / "model.onnx"
    shutil.copyfile(exported_model, target)
    modified = target.stat().st_mtime_ns
    monkeypatch.setenv("MEMORYPR_EMBEDDING_ONNX_PATH", str(target))
    exports: list[Path] = []
    monkeypatch.setattr(onnx_model, "onnx_export_in_child", exports.append)
    # when
    name = embedding_backend_name()
    # then
    assert name == "onnx"
    assert exports == []
    assert target.stat().st_mtime_ns == modified


def copying_export(source: Path, exports: list[Path]):  # type: ignore[no-untyped-def]
    """Stands in for the child process: writes a good export beside the target, renames it over."""

    def export(path: Path) -> None:
        exports.append(path)
        temporary = path.with_name(path.name + ".tmp")
        shutil.copyfile(source, temporary)
        temporary.replace(path)

    return export


@pytest.mark.parametrize(
    "damage",
    [
        pytest.param(lambda path, good: path.write_bytes(b"not an onnx graph"), id="garbage"),
        pytest.param(lambda path, good: path.write_bytes(good.read_bytes()[:10_000_000]), id="truncated"),
        pytest.param(lambda path, good: path.write_bytes(b""), id="empty"),
    ],
)
def test_a_corrupt_export_is_exported_again(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, exported_model: Path, damage
) -> None:  # type: ignore[no-untyped-def]
    # given
    target = tmp_path / "model.onnx"
    damage(target, exported_model)
    monkeypatch.setenv("MEMORYPR_EMBEDDING_ONNX_PATH", str(target))
    exports: list[Path] = []
    monkeypatch.setattr(onnx_model, "onnx_export_in_child", copying_export(exported_model, exports))
    # when
    vector = embed_text("has a cat called Miso")
    # then
    assert embedding_backend_name() == "onnx"
    assert exports == [target]
    assert target.read_bytes() == exported_model.read_bytes()
    assert abs(float(np.linalg.norm(vector)) - 1.0) < 1e-5


def test_a_graph_that_does_not_reproduce_its_probe_is_exported_again(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, exported_model: Path
) -> None:
    # given: a readable graph whose stored reference vectors are not its own
    import onnx

    graph = onnx.load(str(exported_model))
    for entry in graph.metadata_props:
        if entry.key == onnx_model.PROBE_KEY:
            probe = __import__("json").loads(entry.value)
            probe["vectors"] = [list(reversed(v)) for v in probe["vectors"]]
            entry.value = __import__("json").dumps(probe)
    target = tmp_path / "model.onnx"
    onnx.save(graph, str(target))
    monkeypatch.setenv("MEMORYPR_EMBEDDING_ONNX_PATH", str(target))
    exports: list[Path] = []
    monkeypatch.setattr(onnx_model, "onnx_export_in_child", copying_export(exported_model, exports))
    # when
    name = embedding_backend_name()
    # then
    assert name == "onnx"
    assert exports == [target]


def test_a_missing_export_is_made_offline_in_a_child_process(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, torch_encoder: TorchEncoder
) -> None:
    # given
    target = tmp_path / "models" / "model.onnx"
    monkeypatch.setenv("MEMORYPR_EMBEDDING_ONNX_PATH", str(target))
    # when
    vectors = np.asarray(embed_texts(TEXTS))
    # then: the real export, renamed into place, nothing left beside it
    assert embedding_backend_name() == "onnx"
    assert target.exists()
    assert sorted(p.name for p in target.parent.iterdir()) == ["model.onnx", "model.onnx.lock"]
    assert cosines(vectors, torch_encoder.encode(TEXTS, batch_size=64)).min() >= 0.999


def test_processes_that_start_together_export_once(tmp_path: Path, exported_model: Path, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    # given: a slow export, and several loaders arriving while it runs
    target = tmp_path / "model.onnx"
    exports: list[Path] = []
    copy = copying_export(exported_model, exports)

    def slow_export(path: Path) -> None:
        threading.Event().wait(0.5)
        copy(path)

    monkeypatch.setattr(onnx_model, "onnx_export_in_child", slow_export)
    seen: list[bool] = []

    def is_valid(path: Path) -> bool:
        seen.append(path.stat().st_size == exported_model.stat().st_size)
        return path.stat().st_size == exported_model.stat().st_size

    # when
    threads = [
        threading.Thread(target=onnx_model.onnx_model_ensure, args=(target,), kwargs={"is_valid": is_valid})
        for _ in range(4)
    ]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=60)
    # then
    assert exports == [target]
    assert target.read_bytes() == exported_model.read_bytes()
    assert all(seen)


# --- threads ---------------------------------------------------------------------------------


@pytest.mark.parametrize("backend", ["onnx", "torch"])
def test_threads_embedding_at_once_get_their_own_vectors(
    monkeypatch: pytest.MonkeyPatch, backend: str, onnx_encoder: OnnxEncoder
) -> None:
    # given: no cache, so every call reaches the model; eight threads as in a web process
    monkeypatch.setenv("MEMORYPR_EMBEDDING_BACKEND", backend)
    monkeypatch.setenv("MEMORYPR_EMBEDDING_CACHE_SIZE", "0")
    work = {n: [f"thread {n} fact {i}: lives in city {i * n}" for i in range(12)] for n in range(8)}
    expected = {n: onnx_encoder.encode(texts, batch_size=64) for n, texts in work.items()}
    results: dict[int, list[list[float]]] = {}
    errors: list[BaseException] = []
    barrier = threading.Barrier(len(work))

    def worker(n: int) -> None:
        try:
            barrier.wait()
            vectors = []
            for i in range(0, len(work[n]), 3):  # several calls per thread, batches and single texts
                vectors += embed_texts(work[n][i : i + 2]) + [embed_text(work[n][i + 2])]
            results[n] = vectors
        except BaseException as exc:  # noqa: BLE001 - reported below
            errors.append(exc)

    # when
    threads = [threading.Thread(target=worker, args=(n,)) for n in work]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=120)
    # then
    assert errors == []
    assert embedding_backend_name() == backend
    for n in work:
        assert cosines(np.asarray(results[n]), expected[n]).min() >= 0.999
