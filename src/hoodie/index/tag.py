"""Tagging one partition's keys with the index type the settings name."""
from __future__ import annotations

from collections.abc import Mapping

import numpy as np
import pyarrow as pa

from hoodie.errors import ConfigError
from hoodie.index.base import FileKeyIndex, FileRef, IndexSettings, TagResult
from hoodie.index.bloom import bloom_tag
from hoodie.index.bucket import BUCKET
from hoodie.index.simple import simple_tag
from hoodie.storage.base import Storage


def tag_partition(
    keys: pa.Array, files: list[FileRef], storage: Storage, settings: IndexSettings, kept: Mapping[str, FileKeyIndex] | None = None
) -> TagResult:
    """Locate ``keys`` (all of one partition, unique) among ``files`` (that partition's
    latest base files, with the logs of their slices). ``kept``: what the settings' bloom source keeps of the files, by
    path, when the caller looked it up for many partitions at once
    (:func:`hoodie.index.bloom.metadata_indexes`).

    Only the file-reading index types come here; the writer routes the others elsewhere
    (a :class:`ValueError` names a caller that did not, before any answer, even for an
    empty partition)."""
    if settings.is_global:
        raise ValueError(
            f"internal error: tag_partition was called for hoodie.index.type={settings.index_type}, a global index whose keys "
            "are located across partitions (writer.global_tag, index.record_index); its caller must route them there"
        )
    if settings.index_type == BUCKET:
        raise ValueError(
            "internal error: tag_partition was called for hoodie.index.type=BUCKET, which places keys by their hash and reads "
            "no file (writer.steps.tag_by_bucket, index.bucket); its caller must route bucket writes there"
        )
    if not files or len(keys) == 0:
        return TagResult(np.full(len(keys), -1, dtype=np.int32), 0, 0)
    if settings.index_type == "BLOOM":
        return bloom_tag(keys, files, storage, settings.prune_by_ranges, settings.bloom_source, kept, settings.slice_reading)
    if settings.index_type == "SIMPLE":
        return simple_tag(keys, files, storage, settings.slice_reading)
    raise ConfigError(f"unsupported hoodie.index.type {settings.index_type!r} (supported: BLOOM, SIMPLE, BUCKET, RECORD_INDEX)")
