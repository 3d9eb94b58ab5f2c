"""The record index's lookup of many keys at once, over arrays: where each key lives.

A write tagging its batch asks for 100,000s of keys. Nothing here is done once a key in
Python:

* the keys are hashed to the index's file groups at once
  (:func:`~hoodie.metadata_table.keys.file_group_indices`) and sorted as the HFiles
  hold them (bytes);
* each file group's latest slice is searched for its keys part by part
  (:func:`~.slice_parts.slice_parts`: the base HFile, then the log blocks, oldest first)
  with :meth:`~hoodie.formats.hfile.HFileReader.find_rows` (numpy over the decompressed
  blocks, the blocks of a file on up to ``workers`` threads);
* the values found are decoded once per distinct value of a part (Arrow's dictionary
  encoding finds them): a record-index value holds a location only, its key being the
  HFile entry's, and the keys of one data file group written at one instant share it;
* each key's result is a code into the distinct locations, merged as the reader merges
  records (the later part wins, a delete block's key is gone until a later part brings
  it back).

Only record-index entries are expected: a value of another record type is a
:class:`~hoodie.errors.FormatError` naming its key and file.
"""
from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from hoodie.errors import FormatError
from hoodie.formats.hfile.batch_lookup import arrow_rows
from hoodie.formats.log.blocks import DeleteBlock
from hoodie.metadata_table.keys import file_group_indices
from hoodie.metadata_table.metrics import MetadataMetrics
from hoodie.metadata_table.records import RecordLocation, decode_value
from hoodie.metadata_table.slice_parts import record_scan, slice_parts
from hoodie.storage.base import Storage
from hoodie.table.file_group import FileSlice
from hoodie.table.slice_reader.log_scan import LogScanStats

__all__ = ["FoundLocations", "locate_in_slices"]


@dataclass(frozen=True)
class FoundLocations:
    """Per key asked, in order: the index of its location in ``locations``, -1 where the
    record index holds none; how many distinct keys were asked, and found."""

    codes: np.ndarray
    locations: list[RecordLocation]
    distinct: int = 0
    hits: int = 0


@dataclass(frozen=True)
class SliceReading:
    """What reading a slice needs of the reader: storage, the instants that count, the
    metrics to record in and the metadata table's path for errors."""

    storage: Storage
    visible: Callable[[str], bool]
    metrics: MetadataMetrics
    base_path: str


def locate_in_slices(keys: pa.Array, slices: list[FileSlice], reading: SliceReading, workers: int = 1) -> FoundLocations:
    """Where the record index, whose file groups' latest slices are ``slices`` (in file
    id order), places each of ``keys`` (strings without NUL characters, repeats allowed)."""
    locations = _Locations()
    codes = np.full(len(keys), -1, np.int64)
    if len(keys) == 0 or not slices:
        return FoundLocations(codes, locations.found)
    keys = keys.cast(pa.string())
    order = pc.sort_indices(keys).to_numpy()
    ordered = keys.take(pa.array(order))
    rows, lengths = arrow_rows(ordered)
    # a key asked more than once is looked up once (repeats are neighbours once sorted)
    repeat = (rows[1:] == rows[:-1]) & (lengths[1:] == lengths[:-1])
    distinct = np.r_[True, ~repeat]
    if repeat.any():
        ordered, rows, lengths = ordered.filter(pa.array(distinct)), rows[distinct], lengths[distinct]
    group_of = file_group_indices(ordered, len(slices))
    found = np.full(len(ordered), -1, np.int64)
    for g, slc in enumerate(slices):
        at = np.flatnonzero(group_of == g)
        if len(at):
            found[at] = _slice_codes(slc, reading, ordered.take(pa.array(at)), rows[at], lengths[at], locations, workers)
    codes[order] = found[np.cumsum(distinct) - 1]
    return FoundLocations(codes, locations.found, len(ordered), int((found >= 0).sum()))


class _Locations:
    """The distinct locations found, each decoded once per (schema, value bytes)."""

    def __init__(self) -> None:
        self.found: list[RecordLocation] = []
        self._code_of: dict[RecordLocation, int] = {}
        self._value_codes: dict[tuple[str, bytes], int] = {}

    def codes(self, keys: pa.Array, which: np.ndarray, values: pa.Array, schema: str, where: str) -> np.ndarray:
        """The location code of each of ``values`` (found for ``keys[which]``)."""
        encoded = pc.dictionary_encode(values)
        index = encoded.indices.to_numpy(zero_copy_only=False).astype(np.int64)
        distinct = encoded.dictionary.to_pylist()
        # where each distinct value first occurs (the key named if it cannot be decoded)
        # (a fancy assignment with repeated indices leaves an unspecified one standing)
        first = np.unique(index, return_index=True)[1]
        table = np.empty(len(distinct), np.int64)
        for d, value in enumerate(distinct):
            code = self._value_codes.get((schema, value))
            if code is None:
                key = keys[int(which[first[d]])].as_py()
                record = decode_value(key, value, schema, where)
                if not isinstance(record.payload, RecordLocation):
                    raise FormatError(f"{where}: record {key!r} in the record index is of type {record.type}, not a record location")
                code = self._code_of.setdefault(record.payload, len(self.found))
                if code == len(self.found):
                    self.found.append(record.payload)
                self._value_codes[(schema, value)] = code
            table[d] = code
        coded: np.ndarray = table[index]
        return coded


def _slice_codes(
    slc: FileSlice, reading: SliceReading, keys: pa.Array, rows: np.ndarray, lengths: np.ndarray, locations: _Locations, workers: int
) -> np.ndarray:
    """The location code of each of the sorted ``keys`` (``rows``, ``lengths``: their
    bytes) in one slice, -1 where it holds none."""
    started, stats = time.perf_counter(), LogScanStats()
    codes = np.full(len(keys), -1, np.int64)
    base_blocks = records = 0
    for part in slice_parts(reading.storage, slc, reading.visible, stats, reading.base_path):
        if isinstance(part, DeleteBlock):
            deleted = pa.array([d.record_key for d in part.keys if d.record_key is not None], pa.string())
            at = pc.index_in(deleted, value_set=keys).drop_null().to_numpy()
            codes[at] = -1
            records += len(at)
            continue
        which, values = part.reader.find_rows(rows, lengths, workers)
        if len(which):
            codes[which] = locations.codes(keys, which, values, part.schema, part.where)
        records += len(which)
        if part.is_base:
            base_blocks = part.reader.block_reads
    record_scan(reading.metrics, slc, time.perf_counter() - started, base_blocks, stats.blocks, records)
    return codes
