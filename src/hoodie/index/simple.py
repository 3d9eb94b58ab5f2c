"""Simple index: join incoming keys with the record keys of every latest base file, then
look the keys no base file holds up in the logs of the slices that have some (a key may
live only there on a merge-on-read table: :mod:`hoodie.index.log_keys`)."""
from __future__ import annotations

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from hoodie.formats.parquet import BaseFileReader, read_record_keys
from hoodie.index.base import FileRef, KeyProbe, SliceReading, TagResult
from hoodie.index.log_keys import found_in_logs
from hoodie.storage.base import Storage


def simple_tag(keys: pa.Array, files: list[FileRef], storage: Storage, reading: SliceReading | None = None) -> TagResult:
    pos = np.full(len(keys), -1, dtype=np.int32)
    verified = len(keys) * len(files)
    with_logs: list[tuple[int, KeyProbe | None]] = []
    for i, ref in enumerate(files):
        if ref.logs is not None and reading is not None:
            # the footer's filter, read in the same open, spares the logs' reading below
            with BaseFileReader(storage, ref.path) as reader:
                file_keys = reader.record_keys()
                footer = reader.footer.index
            with_logs.append((i, footer.bloom if footer is not None else None))
        else:
            file_keys = read_record_keys(storage, ref.path)
        found = pc.is_in(keys, value_set=file_keys).to_numpy(zero_copy_only=False)
        pos[found] = i
    for i, bloom in with_logs:
        idx = np.nonzero(pos < 0)[0]
        if not len(idx):
            break
        in_logs, n_logs = found_in_logs(storage, files[i].logs, bloom, reading, idx, keys.take(pa.array(idx)))
        pos[in_logs] = i
        verified += n_logs
    return TagResult(pos, len(files), verified)
