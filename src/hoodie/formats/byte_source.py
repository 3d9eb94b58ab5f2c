"""Random access to one file's bytes for the readers that read a format block by block
(HFile, log files): from bytes in memory, or from an open Arrow file. This module knows
no format; it only reads, finds a byte string, and counts reads when told to."""
from __future__ import annotations

from typing import Protocol

import pyarrow as pa

from hoodie.storage.base import StorageCounters

_FIND_WINDOW = 1024 * 1024  # read size when searching a large file for a byte string


class ByteSource(Protocol):
    size: int

    def read_at(self, offset: int, n: int) -> bytes:
        """Up to ``n`` bytes at ``offset`` (fewer at the end of the file)."""

    def find(self, needle: bytes, start: int) -> int:
        """Position of the next ``needle`` at or after ``start``, or -1."""

    def close(self) -> None: ...


class MemorySource:
    """A file's bytes held in memory."""

    def __init__(self, data: bytes) -> None:
        self.data = data
        self.size = len(data)

    def read_at(self, offset: int, n: int) -> bytes:
        return self.data[offset : offset + n]

    def find(self, needle: bytes, start: int) -> int:
        return self.data.find(needle, start)

    def close(self) -> None:
        self.data = b""


class FileSource:
    """An open file read where asked; each read counted in ``counters`` when given."""

    def __init__(self, handle: pa.NativeFile, counters: StorageCounters | None = None) -> None:
        self.handle = handle
        self.counters = counters
        self.size = handle.size()

    def read_at(self, offset: int, n: int) -> bytes:
        n = max(0, min(n, self.size - offset))
        if self.counters is not None:
            self.counters.bump("read")
        return self.handle.read_at(n, offset) if n else b""

    def find(self, needle: bytes, start: int) -> int:
        pos = start
        while pos < self.size:
            window = self.read_at(pos, _FIND_WINDOW)
            found = window.find(needle)
            if found >= 0:
                return pos + found
            if pos + len(window) >= self.size:
                return -1
            pos += len(window) - (len(needle) - 1)  # a needle may straddle two windows
        return -1

    def close(self) -> None:
        self.handle.close()
