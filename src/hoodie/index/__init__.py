"""Indexes: map incoming record keys to the file groups that hold them.

An index works one partition at a time (keys are unique within a partition): given the
keys bound for a partition and the latest base files there, it returns the file id of
each key that already exists. :mod:`bloom` prunes by key range and bloom filter before
checking the real keys; :mod:`simple` checks every file's keys. Both are pure functions
over picklable inputs, so the in-process and Spark engines run the same code.
"""
from __future__ import annotations

from hoodie.index.base import FileRef, IndexSettings
from hoodie.index.tag import tag_partition

__all__ = ["FileRef", "IndexSettings", "tag_partition"]
