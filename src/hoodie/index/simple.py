"""Simple index: join incoming keys with the record keys of every latest base file."""
from __future__ import annotations

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from hoodie.formats.parquet import read_record_keys
from hoodie.index.base import FileRef, TagResult
from hoodie.storage.base import Storage


def simple_tag(keys: pa.Array, files: list[FileRef], storage: Storage) -> TagResult:
    pos = np.full(len(keys), -1, dtype=np.int32)
    for i, ref in enumerate(files):
        found = pc.is_in(keys, value_set=read_record_keys(storage, ref.path)).to_numpy(zero_copy_only=False)
        pos[found] = i
    return TagResult(pos, len(files), len(keys) * len(files))
