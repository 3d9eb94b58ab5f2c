"""Where bytes live.

A :class:`~hoodie.storage.base.Storage` reads, writes, lists, renames and deletes files
under absolute paths. Backends: local POSIX files, any fsspec filesystem (S3, GCS, ...)
and an in-memory store for fast tests; :class:`LatencyStorage` adds a fixed latency to
every call of another, to stand in for object storage. Storage knows nothing of Hudi.
"""
from __future__ import annotations

from hoodie.storage.base import FileInfo, Storage, StorageCounters
from hoodie.storage.factory import storage_for
from hoodie.storage.latency import LatencyStorage
from hoodie.storage.paths import relative, under

__all__ = ["FileInfo", "LatencyStorage", "Storage", "StorageCounters", "relative", "storage_for", "under"]
