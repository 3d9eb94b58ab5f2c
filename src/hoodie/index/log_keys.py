"""Keys that live only in the log files of a file group's latest slice.

A merge-on-read file group holds a key that its base file lacks when the key was deleted
in the slice a compaction merged and written again, while that compaction was pending,
into a log of the compaction's new slice (the write found the key in the old base file):
the compacted base file leaves it out, its log holds it. An index that checked base
files only would take the next write of that key for an insert and place it in another
file group, a second row of one key. So a key that no base file holds is looked for in
the logs of the latest slices too, merged as a read merges them (data blocks and delete
blocks in order, rollbacks and uncommitted blocks left out).

Only slices whose base file a compaction wrote can hold such keys (or one whose instant
left the active timeline: it may have been a compaction). Their logs are read only when
the group's bloom filter lets one of those keys through: a compaction keeps in its base
file's filter every key its merge removed from the base file before
(:mod:`hoodie.services.compaction`), the only keys that can live in a log without being
in the base file; so the usual write, whose new keys every filter rules out, reads no
log. The key range is not consulted: the compacted file's range does not cover keys it
lacks. A file without a filter has its logs read whenever keys remain.
"""
from __future__ import annotations

import dataclasses

import numpy as np
import pyarrow as pa

from hoodie.formats.meta_columns import RECORD_KEY
from hoodie.index.base import KeyProbe, SliceReading
from hoodie.index.probe import admits_any, verified
from hoodie.storage.base import Storage
from hoodie.table.file_group import FileSlice
from hoodie.table.slice_reader.merge import merge_slice


def found_in_logs(
    storage: Storage, logs: FileSlice | None, bloom: KeyProbe | None, reading: SliceReading | None, idx: np.ndarray, candidates: pa.Array
) -> tuple[np.ndarray, int]:
    """The entries of ``idx`` (keys ``candidates``, aligned; none of them in the slice's
    base file) whose key lives in the log files of ``logs`` (a latest slice, None when it
    has no logs), and how many keys were checked; ``bloom``: the filter of the slice's
    base file, None when it has none."""
    if logs is None or reading is None or not len(idx) or logs.base_instant in reading.uncompacted:
        return idx[:0], 0
    if bloom is not None and not admits_any(bloom, candidates):
        return idx[:0], 0
    return verified(live_log_keys(storage, logs, reading), idx, candidates)


def live_log_keys(storage: Storage, file_slice: FileSlice, reading: SliceReading) -> pa.ChunkedArray:
    """The keys whose latest version in the log files of ``file_slice`` is a record, not a
    delete: the logs merged without the base file (only keys the base file lacks are
    asked about, and for them the base file holds nothing to merge)."""
    logs_only = dataclasses.replace(file_slice, base_file=None)
    return merge_slice(storage, logs_only, reading.schema, reading.merge, reading.visible, columns=[RECORD_KEY]).records.column(RECORD_KEY)
