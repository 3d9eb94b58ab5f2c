"""A storage that adds a fixed latency to every call of another one: what a local disk
looks like when each call is a request to object storage (10–50 ms). For tests and
benchmarks; calls are counted by the wrapped storage.

Parquet files are read and written through the wrapped storage's pyarrow filesystem
(:meth:`arrow_filesystem`), without the added latency.
"""
from __future__ import annotations

import time

import pyarrow.fs as pafs

from hoodie.storage.base import FileInfo, Storage, StorageCounters


class LatencyStorage:
    is_local = False  # it stands for object storage

    def __init__(self, inner: Storage, seconds: float) -> None:
        self.inner = inner
        self.seconds = seconds

    @property
    def counters(self) -> StorageCounters:
        return self.inner.counters

    def _wait(self) -> None:
        time.sleep(self.seconds)

    def read_bytes(self, path: str) -> bytes:
        self._wait()
        return self.inner.read_bytes(path)

    def write_bytes(self, path: str, data: bytes) -> None:
        self._wait()
        self.inner.write_bytes(path, data)

    def create_new(self, path: str, data: bytes, durable: bool = True) -> None:
        self._wait()
        self.inner.create_new(path, data, durable)

    def create_empty(self, path: str, like: str | None = None) -> bool:
        self._wait()
        return self.inner.create_empty(path, like)

    def exists(self, path: str) -> bool:
        self._wait()
        return self.inner.exists(path)

    def size(self, path: str) -> int:
        self._wait()
        return self.inner.size(path)

    def list_dir(self, path: str) -> list[FileInfo]:
        self._wait()
        return self.inner.list_dir(path)

    def list_names(self, path: str) -> list[tuple[str, bool]]:
        self._wait()
        return self.inner.list_names(path)

    def delete(self, path: str) -> bool:
        self._wait()
        return self.inner.delete(path)

    def delete_dir(self, path: str) -> None:
        self._wait()
        self.inner.delete_dir(path)

    def rename(self, src: str, dst: str) -> None:
        self._wait()
        self.inner.rename(src, dst)

    def makedirs(self, path: str) -> None:
        self._wait()
        self.inner.makedirs(path)

    def check_file(self, path: str) -> None:
        self.inner.check_file(path)

    def arrow_filesystem(self) -> tuple[pafs.FileSystem, str]:
        return self.inner.arrow_filesystem()
