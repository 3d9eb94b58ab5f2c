"""Bloom index: prune candidate files by the key range and bloom filter of each base
file, then verify candidates against the file's real keys.

Range and filter come from the file's footer, or, given a :class:`BloomSource`
(``hoodie.bloom.index.use.metadata`` on a table whose metadata table has a complete
``bloom_filters`` partition), from the metadata table, and a file the filter rules out is
never opened. The metadata table is asked once for the files of many partitions
(:func:`metadata_indexes`, which the write's tagging step calls for its whole batch):
each lookup reads every metadata file group it touches, so a lookup per partition would
read the same file groups again and again. Verification is what
makes the index exact: a bloom false positive costs one read of a file's key column,
never an insert turned into an update, so both sources tag alike. Each file is opened
once: its footer (with the filter) and, when needed, its key column come from the same
reader. The filter's job is to spare files from being read, so probing a file stops at
the first key it lets through: that file is read, and all its candidates are checked
exactly. On a merge-on-read table a key may live only in the logs of a file group's
latest slice: the keys a base file lacks but its filter lets through (its range aside)
are looked for there (:mod:`hoodie.index.log_keys`).
"""
from __future__ import annotations

from collections.abc import Iterable, Mapping

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from hoodie.formats.parquet import BaseFileReader, read_record_keys
from hoodie.index.base import BloomSource, FileKeyIndex, FileRef, SliceReading, TagResult
from hoodie.index.log_keys import found_in_logs
from hoodie.index.probe import admits_any, verified
from hoodie.storage.base import Storage

#: files whose filters one metadata-table lookup returns at most (a filter's text is
#: ~430 KB at the default 60,000 entries: memory holds one lookup's filters at a time)
METADATA_LOOKUP_FILES = 512


def metadata_indexes(source: BloomSource, files: Iterable[FileRef]) -> dict[str, FileKeyIndex]:
    """The range and filter ``source`` keeps of each of ``files`` (of any partitions), by
    path; files it holds no filter of are left out. One lookup of up to
    :data:`METADATA_LOOKUP_FILES` files at a time."""
    refs = list({ref.path: ref for ref in files}.values())
    out: dict[str, FileKeyIndex] = {}
    for start in range(0, len(refs), METADATA_LOOKUP_FILES):
        run = refs[start : start + METADATA_LOOKUP_FILES]
        by_name = {(ref.partition_path, ref.file_name): ref.path for ref in run}
        for where, held in source.file_indexes(list(by_name)).items():
            out[by_name[where]] = FileKeyIndex(*held)
    return out


def bloom_tag(
    keys: pa.Array,
    files: list[FileRef],
    storage: Storage,
    prune_by_ranges: bool = True,
    source: BloomSource | None = None,
    kept: Mapping[str, FileKeyIndex] | None = None,
    reading: SliceReading | None = None,
) -> TagResult:
    """Tag ``keys`` among ``files`` (one partition's). With a ``source``, the ranges and
    filters it keeps: ``kept`` (by path) when the caller looked them up already (for many
    partitions at once, :func:`metadata_indexes`), else one lookup for ``files``. With
    ``reading``, a key no base file holds is looked for in the logs of the files' slices
    (:mod:`hoodie.index.log_keys`)."""
    pos = np.full(len(keys), -1, dtype=np.int32)
    unresolved = np.ones(len(keys), dtype=bool)
    checked = keys_verified = 0
    if kept is None:
        kept = metadata_indexes(source, files) if source is not None else {}
    for i, ref in enumerate(files):
        if not unresolved.any():
            break
        idx = np.nonzero(unresolved)[0]
        candidates = keys.take(pa.array(idx))
        index = kept.get(ref.path)
        if index is not None:
            # the metadata table's filter and range: the file is read only to verify
            in_idx, in_candidates, ruled_out = _admitted(index, idx, candidates, prune_by_ranges)
            found, n_verified = verified(read_record_keys(storage, ref.path), in_idx, in_candidates) if len(in_idx) else (in_idx, 0)
        else:
            with BaseFileReader(storage, ref.path) as reader:
                footer = reader.footer.index
                index = FileKeyIndex(footer.min_key, footer.max_key, footer.bloom) if footer is not None else FileKeyIndex(None, None, None)
                in_idx, in_candidates, ruled_out = _admitted(index, idx, candidates, prune_by_ranges)
                found, n_verified = verified(reader.record_keys(), in_idx, in_candidates) if len(in_idx) else (in_idx, 0)
        if ref.logs is not None:
            # keys the base file lacks may live in the slice's logs, but not those its filter
            # ruled out already: it keeps every key that can (index.log_keys)
            rest = ~np.isin(idx, np.concatenate([found, ruled_out]))
            if rest.any():
                in_logs, n_logs = found_in_logs(storage, ref.logs, index.bloom, reading, idx[rest], candidates.filter(pa.array(rest)))
                found, n_verified = np.concatenate([found, in_logs]), n_verified + n_logs
        checked += 1
        keys_verified += n_verified
        pos[found] = i
        unresolved[found] = False
    return TagResult(pos, checked, keys_verified)


def _admitted(index: FileKeyIndex, idx: np.ndarray, candidates: pa.Array, prune_by_ranges: bool) -> tuple[np.ndarray, pa.Array, np.ndarray]:
    """The entries of ``idx`` (keys ``candidates``, aligned) the file's key range and
    filter may hold: every candidate in its key range once the filter lets one through,
    else none; and the entries the filter ruled out (all those in range, when it let none
    through)."""
    if prune_by_ranges and index.min_key is not None and index.max_key is not None:
        in_range = pc.and_(pc.greater_equal(candidates, index.min_key), pc.less_equal(candidates, index.max_key))
        idx, candidates = idx[in_range.to_numpy(zero_copy_only=False)], candidates.filter(in_range)
    if len(idx) and index.bloom is not None and not admits_any(index.bloom, candidates):
        return idx[:0], candidates.slice(0, 0), idx
    return idx, candidates, idx[:0]
