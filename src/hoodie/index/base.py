"""The values every index type shares: file references, settings and tag results."""
from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Protocol

import numpy as np
import pyarrow as pa

from hoodie.index.bucket import BucketSpec
from hoodie.index.record_index import KeyLocator
from hoodie.table.file_group import FileSlice
from hoodie.table.slice_reader.instants import InstantFilter
from hoodie.table.slice_reader.merge_rules import MergeConfig

RECORD_INDEX = "RECORD_INDEX"


@dataclass(frozen=True)
class FileRef:
    """The latest base file of a file group, as an index sees it. ``logs``: the group's
    latest slice when it has log files (a key may live only there: see
    :mod:`hoodie.index.log_keys`), else None. The bucket index, which reads no file, is
    given every file group, a group of log files only with an empty ``path``."""

    file_id: str
    base_instant: str
    path: str
    partition_path: str = ""
    logs: FileSlice | None = None

    @property
    def file_name(self) -> str:
        return self.path.rsplit("/", 1)[-1]


class KeyProbe(Protocol):
    """A bloom filter, in footer text or decoded: all tagging asks of it."""

    def might_contain(self, key: str) -> bool: ...

    def might_contain_many(self, keys: pa.Array) -> np.ndarray: ...


@dataclass(frozen=True)
class FileKeyIndex:
    """What an index keeps of a base file besides the file: its key range (None: not
    known) and its bloom filter (None: none kept)."""

    min_key: str | None
    max_key: str | None
    bloom: KeyProbe | None


class BloomSource(Protocol):
    """Bloom filters and key ranges of base files kept outside them (the metadata
    table's ``bloom_filters`` and ``column_stats``). Picklable: engine tasks call it."""

    def file_indexes(self, files: Sequence[tuple[str, str]]) -> Mapping[tuple[str, str], tuple[str | None, str | None, KeyProbe]]:
        """Each of ``files`` ((partition, file name) pairs, of any partitions) whose bloom
        filter it holds: (min key, max key, filter), the range None where it holds none;
        one lookup for them all. (Plain tuples: the metadata table cannot import this
        package.)"""
        ...


@dataclass(frozen=True)
class SliceReading:
    """What reading the live keys of a slice's log files takes: the table's schema (meta
    columns and data), its merge rules and the instants whose log blocks count; and
    ``uncompacted``, the completed writes on the active timeline other than compactions:
    the logs on a base file one of them wrote hold only keys that base file holds (each
    was found in it), so they are never read. Wired by the writer on merge-on-read
    tables; picklable."""

    schema: pa.Schema
    merge: MergeConfig
    visible: InstantFilter
    uncompacted: frozenset[str] = frozenset()


@dataclass(frozen=True)
class IndexSettings:
    """How a write's keys are looked up. ``locator`` (RECORD_INDEX) and ``bloom_source``
    (BLOOM with ``hoodie.bloom.index.use.metadata``) are wired by the writer from the
    table's metadata table; ``slice_reading`` (BLOOM and SIMPLE on merge-on-read tables)
    from the table, to find keys that live only in log files."""

    index_type: str = "BLOOM"
    prune_by_ranges: bool = True
    update_partition_path: bool = False
    locator: KeyLocator | None = None
    bloom_source: BloomSource | None = None
    slice_reading: SliceReading | None = None
    bucket: BucketSpec | None = None

    @property
    def is_global(self) -> bool:
        """Whether a key is looked up in every partition, not only the one its record
        names (and records of one key are one record whatever their partitions)."""
        return self.index_type == RECORD_INDEX


@dataclass(frozen=True)
class TagResult:
    """Per input key: position of the file in the ``files`` list holding it, or -1."""

    file_pos: np.ndarray  # int32
    files_checked: int
    keys_verified: int
