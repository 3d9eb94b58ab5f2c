"""Bloom index: prune candidate files by the key range and bloom filter in each base
file's footer, then verify candidates against the file's real keys.

Verification is what makes the index exact: a bloom false positive costs one read of a
file's key column, never an insert turned into an update. Each file is opened once: its
footer (with the filter) and, when needed, its key column come from the same reader. The
filter's job is to spare files from being read, so probing a file stops at the first key
it lets through: that file is read, and all its candidates are checked exactly.
"""
from __future__ import annotations

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from hoodie.formats.bloom_footer import EncodedBloomFilter
from hoodie.formats.parquet import BaseFileReader
from hoodie.index.base import FileRef, TagResult
from hoodie.storage.base import Storage


def bloom_tag(keys: pa.Array, files: list[FileRef], storage: Storage, prune_by_ranges: bool = True) -> TagResult:
    pos = np.full(len(keys), -1, dtype=np.int32)
    unresolved = np.ones(len(keys), dtype=bool)
    checked = verified = 0
    for i, ref in enumerate(files):
        if not unresolved.any():
            break
        idx = np.nonzero(unresolved)[0]
        with BaseFileReader(storage, ref.path) as reader:
            found, n_verified = _keys_in_file(reader, idx, keys.take(pa.array(idx)), prune_by_ranges)
        checked += 1
        verified += n_verified
        pos[found] = i
        unresolved[found] = False
    return TagResult(pos, checked, verified)


def _keys_in_file(reader: BaseFileReader, idx: np.ndarray, candidates: pa.Array, prune_by_ranges: bool) -> tuple[np.ndarray, int]:
    """The entries of ``idx`` whose key (``candidates``, aligned) is in the file, and how
    many keys were checked against the file's keys: every candidate in its key range
    once the filter lets one through, else none."""
    footer = reader.footer.index
    if footer is not None and prune_by_ranges and footer.min_key is not None and footer.max_key is not None:
        in_range = pc.and_(pc.greater_equal(candidates, footer.min_key), pc.less_equal(candidates, footer.max_key))
        idx, candidates = idx[in_range.to_numpy(zero_copy_only=False)], candidates.filter(in_range)
    if len(idx) and footer is not None and footer.bloom is not None and not _bloom_admits_any(footer.bloom, candidates):
        return idx[:0], 0
    if not len(idx):
        return idx, 0
    # The candidates, usually far fewer, are hashed and the file's keys looked up among
    # them (cheaper than hashing every key of the file); the keys found then mark every
    # candidate equal to one (a batch not combined may hold a key twice).
    file_keys = reader.record_keys()
    found = file_keys.filter(pc.is_in(file_keys, value_set=candidates))
    present = pc.is_in(candidates, value_set=found).to_numpy(zero_copy_only=False)
    return idx[present], len(idx)


_SINGLE_PROBES = 4
_FIRST_PROBE = 64


def _bloom_admits_any(bloom: EncodedBloomFilter, candidates: pa.Array) -> bool:
    """Whether the filter lets any candidate through: the first few keys one at a time,
    then the rest in growing chunks.

    One key through means the file's keys are read, and then checking every candidate
    against them is exact and costs less than hashing the rest (~1 µs a key for 30
    hashes): so probing stops there. Only files that rule out every candidate, the ones
    the filter saves from being read, have all of them probed. The first keys go one by
    one because an update usually is among them, and hashing one key alone costs a tenth
    of one vectorized hashing call.
    """
    single = min(_SINGLE_PROBES, len(candidates))
    for key in candidates.slice(0, single).to_pylist():
        if bloom.might_contain(key):
            return True
    start, step = single, _FIRST_PROBE
    while start < len(candidates):
        if bloom.might_contain_many(candidates.slice(start, step)).any():  # reads ~30 Base64 characters a key, decodes nothing
            return True
        start, step = start + step, step * 4
    return False
