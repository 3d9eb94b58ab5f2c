"""Index protocol pieces shared by every index type."""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pyarrow as pa

from hoodie.errors import ConfigError
from hoodie.storage.base import Storage


@dataclass(frozen=True)
class FileRef:
    """The latest base file of a file group, as an index sees it."""

    file_id: str
    base_instant: str
    path: str


@dataclass(frozen=True)
class IndexSettings:
    index_type: str = "BLOOM"
    prune_by_ranges: bool = True


@dataclass(frozen=True)
class TagResult:
    """Per input key: position of the file in the ``files`` list holding it, or -1."""

    file_pos: np.ndarray  # int32
    files_checked: int
    keys_verified: int


def tag_partition(keys: pa.Array, files: list[FileRef], storage: Storage, settings: IndexSettings) -> TagResult:
    """Locate ``keys`` (all of one partition, unique) among ``files`` (that partition's
    latest base files)."""
    if not files or len(keys) == 0:
        return TagResult(np.full(len(keys), -1, dtype=np.int32), 0, 0)
    if settings.index_type == "BLOOM":
        from hoodie.index.bloom import bloom_tag

        return bloom_tag(keys, files, storage, settings.prune_by_ranges)
    if settings.index_type == "SIMPLE":
        from hoodie.index.simple import simple_tag

        return simple_tag(keys, files, storage)
    raise ConfigError(f"unsupported hoodie.index.type {settings.index_type!r} (supported: BLOOM, SIMPLE)")
