"""Bloom index: prune candidate files by the key range and bloom filter in each base
file's footer, then verify candidates against the file's real keys.

Verification is what makes the index exact: a bloom false positive costs one read of a
file's key column, never an insert turned into an update.
"""
from __future__ import annotations

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from hoodie.formats.parquet import read_footer, read_record_keys
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
        candidates = keys.take(pa.array(idx))
        footer = read_footer(storage, ref.path).index
        checked += 1
        if footer is not None and prune_by_ranges and footer.min_key is not None and footer.max_key is not None:
            in_range = pc.and_(pc.greater_equal(candidates, footer.min_key), pc.less_equal(candidates, footer.max_key))
            mask = in_range.to_numpy(zero_copy_only=False)
            idx, candidates = idx[mask], candidates.filter(in_range)
        if len(idx) and footer is not None and footer.bloom_filter is not None:
            mask = footer.bloom_filter.might_contain_many(candidates)
            idx, candidates = idx[mask], candidates.filter(pa.array(mask))
        if not len(idx):
            continue
        verified += len(idx)
        found = pc.is_in(candidates, value_set=read_record_keys(storage, ref.path)).to_numpy(zero_copy_only=False)
        pos[idx[found]] = i
        unresolved[idx[found]] = False
    return TagResult(pos, checked, verified)
