"""What every index does with a file's keys once it holds them: probe a bloom filter for
any of many candidates, and verify candidates exactly against the keys a file holds."""
from __future__ import annotations

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from hoodie.index.base import KeyProbe

_SINGLE_PROBES = 4
_FIRST_PROBE = 64


def verified(file_keys: pa.Array | pa.ChunkedArray, idx: np.ndarray, candidates: pa.Array) -> tuple[np.ndarray, int]:
    """The entries of ``idx`` (keys ``candidates``, aligned) whose key is among
    ``file_keys``, and how many keys were checked."""
    # The candidates, usually far fewer, are hashed and the file's keys looked up among
    # them (cheaper than hashing every key of the file); the keys found then mark every
    # candidate equal to one (a batch not combined may hold a key twice).
    found = file_keys.filter(pc.is_in(file_keys, value_set=candidates))
    present = pc.is_in(candidates, value_set=found).to_numpy(zero_copy_only=False)
    return idx[present], len(idx)


def admits_any(bloom: KeyProbe, candidates: pa.Array) -> bool:
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
