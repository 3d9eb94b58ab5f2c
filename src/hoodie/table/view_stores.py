"""Where a synced view keeps its partition listings: ``MEMORY``, ``SPILLABLE_DISK`` and
``EMBEDDED_KV_STORE`` (Hudi's ``hoodie.filesystem.view.type`` values for a view's store).

A store maps a partition path to the encoded listing of that partition (bytes); it knows
nothing of what the bytes say. ``SPILLABLE_DISK`` keeps listings in memory up to
``hoodie.filesystem.view.spillable.mem`` bytes and the rest in an SQLite file on local disk;
``EMBEDDED_KV_STORE`` keeps them all in RocksDB (through ``rocksdict``) under
``hoodie.filesystem.view.rocksdb.base.path``. Both remove their files on :meth:`close`.
"""
from __future__ import annotations

import os
import shutil
import sqlite3
import tempfile
import threading
from dataclasses import dataclass
from typing import Protocol

from hoodie.config import options as o
from hoodie.config.options import HoodieConfig
from hoodie.errors import ConfigError

MEMORY = "MEMORY"
SPILLABLE_DISK = "SPILLABLE_DISK"
EMBEDDED_KV_STORE = "EMBEDDED_KV_STORE"
STORE_TYPES = (MEMORY, SPILLABLE_DISK, EMBEDDED_KV_STORE)


class ViewStore(Protocol):
    """Partition path → encoded listing."""

    def get(self, key: str) -> bytes | None: ...

    def put(self, key: str, value: bytes) -> None: ...

    def delete(self, key: str) -> None: ...

    def clear(self) -> None: ...

    def close(self) -> None: ...

    def memory_bytes(self) -> int:
        """Bytes of listings held in memory (what the store's bound applies to)."""
        ...


class MemoryStore:
    """Every listing in a dict."""

    def __init__(self) -> None:
        self._data: dict[str, bytes] = {}
        self._bytes = 0

    def get(self, key: str) -> bytes | None:
        return self._data.get(key)

    def put(self, key: str, value: bytes) -> None:
        self.delete(key)
        self._data[key] = value
        self._bytes += len(key) + len(value)

    def delete(self, key: str) -> None:
        old = self._data.pop(key, None)
        if old is not None:
            self._bytes -= len(key) + len(old)

    def clear(self) -> None:
        self._data.clear()
        self._bytes = 0

    def close(self) -> None:
        self.clear()

    def memory_bytes(self) -> int:
        return self._bytes


class SpillableStore:
    """Listings in memory up to ``max_memory_bytes``, the rest in an SQLite file in a
    directory of its own under ``spill_dir`` (the system's temporary directory if None)."""

    def __init__(self, max_memory_bytes: int, spill_dir: str | None = None) -> None:
        self._memory = MemoryStore()
        self._max = max_memory_bytes
        handle, self._file = tempfile.mkstemp(prefix="hoodie-view-spill-", suffix=".db", dir=spill_dir)
        os.close(handle)
        # one connection, used under a lock by the server's worker threads
        self._db = sqlite3.connect(self._file, check_same_thread=False, isolation_level=None)
        self._db.execute("PRAGMA journal_mode=OFF")
        self._db.execute("PRAGMA synchronous=OFF")
        self._db.execute("CREATE TABLE listing (partition TEXT PRIMARY KEY, value BLOB NOT NULL)")
        self._lock = threading.Lock()

    def get(self, key: str) -> bytes | None:
        value = self._memory.get(key)
        if value is not None:
            return value
        with self._lock:
            row = self._db.execute("SELECT value FROM listing WHERE partition = ?", (key,)).fetchone()
        return bytes(row[0]) if row is not None else None

    def put(self, key: str, value: bytes) -> None:
        self._memory.delete(key)
        if self._memory.memory_bytes() + len(key) + len(value) <= self._max:
            with self._lock:
                self._db.execute("DELETE FROM listing WHERE partition = ?", (key,))
            self._memory.put(key, value)
            return
        with self._lock:
            self._db.execute("INSERT OR REPLACE INTO listing VALUES (?, ?)", (key, value))

    def delete(self, key: str) -> None:
        self._memory.delete(key)
        with self._lock:
            self._db.execute("DELETE FROM listing WHERE partition = ?", (key,))

    def clear(self) -> None:
        self._memory.clear()
        with self._lock:
            self._db.execute("DELETE FROM listing")

    def close(self) -> None:
        self._memory.clear()
        with self._lock:
            self._db.close()
        os.unlink(self._file)

    def memory_bytes(self) -> int:
        return self._memory.memory_bytes()

    def spilled(self) -> int:
        """Listings on disk."""
        with self._lock:
            return int(self._db.execute("SELECT count(*) FROM listing").fetchone()[0])


# RocksDB's memtable (64 MiB by default) is what the store holds in memory before it
# writes to disk: a listing store is written once and read many times
_ROCKSDB_WRITE_BUFFER = 8 * 1024 * 1024


class RocksDBStore:
    """Every listing in an embedded RocksDB database in a directory of its own under
    ``base_path``."""

    def __init__(self, base_path: str) -> None:
        from rocksdict import Options, Rdict

        os.makedirs(base_path, exist_ok=True)
        self._dir = tempfile.mkdtemp(prefix="hoodie-view-", dir=base_path)
        options = Options(raw_mode=True)
        options.set_write_buffer_size(_ROCKSDB_WRITE_BUFFER)
        self._db = Rdict(self._dir, options=options)

    def get(self, key: str) -> bytes | None:
        value = self._db.get(key.encode())
        return bytes(value) if value is not None else None

    def put(self, key: str, value: bytes) -> None:
        self._db[key.encode()] = value

    def delete(self, key: str) -> None:
        del self._db[key.encode()]

    def clear(self) -> None:
        for key in list(self._db.keys()):
            del self._db[key]

    def close(self) -> None:
        self._db.close()
        shutil.rmtree(self._dir, ignore_errors=True)

    def memory_bytes(self) -> int:
        return 0  # RocksDB's own caches are bounded by its options


@dataclass(frozen=True)
class StoreSettings:
    """Which store a synced view keeps its listings in, and how it is bounded."""

    kind: str = MEMORY
    spillable_memory_bytes: int = 100 * 1024 * 1024
    spill_dir: str = ""
    rocksdb_base_path: str = "/tmp/hoodie_timeline_rocksdb"
    incremental_sync: bool = True
    # what the view lists partitions and files with: the table's metadata table when it has
    # a complete files partition (hoodie.metadata.enable), compared with storage (.validate)
    metadata_table: bool = True
    validate_metadata: bool = False

    @classmethod
    def from_config(cls, config: HoodieConfig) -> StoreSettings:
        """The store ``hoodie.filesystem.view.type`` names (a client type such as
        REMOTE_FIRST, or none, means MEMORY on a server)."""
        kind = config.get(o.VIEW_TYPE)
        return cls(
            kind if kind in STORE_TYPES else MEMORY,
            config.get(o.VIEW_SPILLABLE_MEM),
            config.get(o.VIEW_SPILLABLE_DIR),
            config.get(o.VIEW_ROCKSDB_BASE_PATH),
            config.get(o.VIEW_INCREMENTAL_SYNC),
            bool(config.get(o.METADATA_ENABLE)),
            bool(config.get(o.METADATA_VALIDATE)),
        )

    def open(self) -> ViewStore:
        if self.kind == MEMORY:
            return MemoryStore()
        if self.kind == SPILLABLE_DISK:
            return SpillableStore(self.spillable_memory_bytes, self.spill_dir or None)
        if self.kind == EMBEDDED_KV_STORE:
            return RocksDBStore(self.rocksdb_base_path)
        raise ConfigError(f"view store {self.kind!r}: expected one of {', '.join(STORE_TYPES)}")
