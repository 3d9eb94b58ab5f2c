"""The timeline server's marker batches on a slow storage: batches in flight write
different MARKERS files side by side, never one file twice at once; a batch whose write
fails forgets its names; a repeated request is answered only once the name is durable."""
from __future__ import annotations

import asyncio
import threading
import time
from pathlib import Path

import pytest

from hoodie.markers.timeline_based import read_markers_file
from hoodie.storage.local import LocalStorage
from hoodie.timeline_server.markers import MarkerBatching, MarkerService


class SlowStorage(LocalStorage):
    """Local storage whose writes take ``seconds`` and may fail; records which files are
    being written at once."""

    def __init__(self, seconds: float, failures: int = 0) -> None:
        super().__init__()
        self.seconds = seconds
        self.failures = failures
        self.writing: set[str] = set()
        self.most_at_once = 0
        self.overlapping_same_file = False
        self.done_at: dict[str, float] = {}
        self._lock = threading.Lock()

    def write_bytes(self, path: str, data: bytes) -> None:
        with self._lock:
            self.overlapping_same_file |= path in self.writing
            self.writing.add(path)
            self.most_at_once = max(self.most_at_once, len([p for p in self.writing if "MARKERS" in p and not p.endswith(".type")]))
            fail = self.failures > 0 and not path.endswith(".type")
            self.failures -= fail
        try:
            time.sleep(self.seconds)
            if fail:
                raise OSError(f"injected failure writing {path}")
            super().write_bytes(path, data)
        finally:
            with self._lock:
                self.writing.discard(path)
                self.done_at[path] = time.monotonic()


def _names(marker_dir: Path, files: int) -> list[str]:
    storage = LocalStorage()
    return sorted(n for i in range(files) if (marker_dir / f"MARKERS{i}").exists() for n in read_markers_file(storage, str(marker_dir), i))


async def _serve(batching: MarkerBatching) -> MarkerService:
    service = MarkerService(batching)
    service.start()
    return service


def test_batches_in_flight_write_different_files_side_by_side(tmp_path: Path) -> None:
    storage, marker_dir = SlowStorage(0.05), tmp_path / "m"
    names = [f"p/f{i}.parquet.marker.CREATE" for i in range(12)]

    async def run() -> None:
        service = await _serve(MarkerBatching(threads=4))

        async def one(i: int, name: str) -> bool:
            await asyncio.sleep(i * 0.01)  # arriving while earlier batches are written
            return await service.create(storage, str(marker_dir), name)

        assert await asyncio.gather(*(one(i, n) for i, n in enumerate(names))) == [True] * len(names)
        await service.stop()

    asyncio.run(run())
    # side by side (not one after another), never more than num_threads at once
    assert 1 < storage.most_at_once <= 4, storage.most_at_once
    assert not storage.overlapping_same_file, "two batches wrote one MARKERS file at once"
    assert _names(marker_dir, 4) == sorted(names)


def test_a_batch_whose_write_fails_forgets_its_names(tmp_path: Path) -> None:
    storage, marker_dir = SlowStorage(0.0, failures=1), tmp_path / "m"

    async def run() -> None:
        service = await _serve(MarkerBatching(threads=2))
        with pytest.raises(OSError, match="injected failure"):
            await service.create(storage, str(marker_dir), "p/a.parquet.marker.CREATE")
        # asked again, the name is made (not found among names never written)
        assert await service.create(storage, str(marker_dir), "p/a.parquet.marker.CREATE") is True
        assert await service.names(storage, str(marker_dir)) == ["p/a.parquet.marker.CREATE"]
        await service.stop()

    asyncio.run(run())
    assert _names(marker_dir, 2) == ["p/a.parquet.marker.CREATE"]


def test_a_repeated_request_is_answered_once_the_name_is_written(tmp_path: Path) -> None:
    storage, marker_dir = SlowStorage(0.1), tmp_path / "m"
    name = "p/a.parquet.marker.CREATE"

    async def run() -> tuple[list[bool], float]:
        service = await _serve(MarkerBatching(threads=4))

        async def repeat() -> tuple[bool, float]:
            await asyncio.sleep(0.03)  # the first request's batch is being written
            made = await service.create(storage, str(marker_dir), name)
            return made, time.monotonic()

        first, (again, answered_at) = await asyncio.gather(service.create(storage, str(marker_dir), name), repeat())
        await service.stop()
        return [first, again], answered_at

    answers, answered_at = asyncio.run(run())
    assert answers == [True, False]
    assert answered_at >= storage.done_at[str(marker_dir / "MARKERS0")]
