"""The storage protocol shared by every backend.

Paths are plain strings: absolute POSIX paths for local files, ``scheme://...`` URIs for
fsspec filesystems. Every backend counts its calls (``counters``) so that tests and
benchmarks can prove that a lookup did not turn into a listing.
"""
from __future__ import annotations

from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Protocol, runtime_checkable

import pyarrow.fs as pafs


@dataclass(frozen=True)
class FileInfo:
    """One entry of a directory listing."""

    path: str
    name: str
    size: int
    is_dir: bool
    mtime_ms: int = 0


@dataclass
class StorageCounters:
    """How many calls of each kind a storage served (reads, writes, lists, ...)."""

    calls: Counter[str] = field(default_factory=Counter)

    def bump(self, op: str) -> None:
        self.calls[op] += 1

    def __getitem__(self, op: str) -> int:
        return self.calls[op]

    def reset(self) -> None:
        self.calls.clear()

    def by_kind(self) -> dict[str, int]:
        """The calls as list, read, write (creates, renames, directories made), exists
        (sizes too) and delete; a Parquet footer opened is a read."""
        return calls_by_kind(self.calls)

    def snapshot(self) -> Counter[str]:
        """The counts now, for :meth:`since`."""
        return Counter(self.calls)

    def since(self, snapshot: Counter[str]) -> dict[str, int]:
        """The calls made after ``snapshot`` was taken, by kind."""
        return calls_by_kind(self.calls - snapshot)


def calls_by_kind(calls: Mapping[str, int]) -> dict[str, int]:
    """Storage calls counted by operation, as list, read, write, exists and delete."""
    kinds = {"list": 0, "read": 0, "write": 0, "exists": 0, "delete": 0}
    for op, n in calls.items():
        kinds[_KIND.get(op, op)] = kinds.get(_KIND.get(op, op), 0) + n
    return kinds


_KIND = {"create": "write", "rename": "write", "mkdir": "write", "stat": "exists", "footer": "read"}


@runtime_checkable
class Storage(Protocol):
    """File operations hoodie needs; implementations must be picklable."""

    counters: StorageCounters
    # Paths are on this machine's file systems: creating a file is a system call (a
    # marker costs a hard link), not a request to a remote store.
    is_local: bool

    def read_bytes(self, path: str) -> bytes:
        """Whole content of a file; raises ``FileNotFoundError`` if absent."""

    def write_bytes(self, path: str, data: bytes) -> None:
        """Create or replace a file (parents are created)."""

    def create_new(self, path: str, data: bytes, durable: bool = True) -> None:
        """Write a file that must not exist yet, atomically: it appears whole or not at all.

        ``durable`` also flushes it to stable storage before it appears (instants need
        this; markers, which only matter while their writer's files exist, do not).
        Raises :class:`hoodie.errors.FileAlreadyExistsError` if the path exists.
        """

    def create_empty(self, path: str, like: str | None = None) -> bool:
        """Create an empty file that must not exist yet (a marker), not flushed to stable
        storage. ``like`` names an existing empty file the new one may share storage with
        (a hard link on a local file system: no new inode, which can cost a hundred times
        a link); it is only a hint. Returns whether the new file shares ``like``'s.
        Raises :class:`hoodie.errors.FileAlreadyExistsError` if the path exists.
        """

    def exists(self, path: str) -> bool: ...

    def size(self, path: str) -> int: ...

    def list_dir(self, path: str) -> list[FileInfo]:
        """Direct children of a directory; empty list if it does not exist."""

    def list_names(self, path: str) -> list[tuple[str, bool]]:
        """(name, is a folder) of each direct child of a directory (none if it does not
        exist), for a listing that needs neither sizes nor times (a timeline's): a local
        file system then reads no entry's attributes one by one."""

    def delete(self, path: str) -> bool:
        """Delete a file; returns False if it did not exist."""

    def delete_dir(self, path: str) -> None:
        """Delete a directory tree if present."""

    def rename(self, src: str, dst: str) -> None:
        """Move a file, refusing to overwrite ``dst``."""

    def makedirs(self, path: str) -> None: ...

    def check_file(self, path: str) -> None:
        """Refuse a file that another library (pyarrow) is about to open by its path:
        on a local file system, one reached through a symbolic link inside a table, or a
        link itself (:class:`hoodie.errors.UnsafePathError`; see
        :mod:`hoodie.storage.links`). Object stores have no links: nothing to check."""

    def arrow_filesystem(self) -> tuple[pafs.FileSystem, str]:
        """A pyarrow filesystem for Parquet I/O and the prefix to strip from paths.

        Use :func:`arrow_path` to turn a storage path into a path for that filesystem.
        """


def arrow_path(storage: Storage, path: str) -> tuple[pafs.FileSystem, str]:
    """The pyarrow filesystem of ``storage`` and ``path`` in that filesystem's terms,
    once ``storage`` has checked that the file may be opened there
    (:meth:`Storage.check_file`)."""
    storage.check_file(path)
    fs, prefix = storage.arrow_filesystem()
    return fs, path[len(prefix) :] if path.startswith(prefix) else path
