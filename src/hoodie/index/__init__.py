"""Indexes: map incoming record keys to the file groups that hold them.

BLOOM and SIMPLE work one partition at a time (keys are unique within a partition):
given the keys bound for a partition and the latest base files there, they return the
file id of each key that already exists. :mod:`bloom` prunes by key range and bloom
filter (from the footers, or from the metadata table) before checking the real keys;
:mod:`simple` checks every file's keys; on merge-on-read both find the keys that live
only in a slice's log files (:mod:`log_keys`). BUCKET (:mod:`bucket`) reads nothing: a
key's file group is a hash of the key, among a fixed number per partition. RECORD_INDEX
(:mod:`record_index`) is global: the metadata table's record index names each key's
partition and file group, through a locator the writer wires. All are pure functions over picklable inputs, so the
in-process and Spark engines run the same code.
"""
from __future__ import annotations

from hoodie.index.base import BloomSource, FileKeyIndex, FileRef, IndexSettings
from hoodie.index.bloom import metadata_indexes
from hoodie.index.bucket import BucketSpec
from hoodie.index.record_index import GlobalLocations, KeyLocator, locate_keys
from hoodie.index.tag import tag_partition

__all__ = [
    "BloomSource",
    "BucketSpec",
    "FileKeyIndex",
    "FileRef",
    "GlobalLocations",
    "IndexSettings",
    "KeyLocator",
    "locate_keys",
    "metadata_indexes",
    "tag_partition",
]
