"""Column builders for the five meta columns, vectorised (no per-row Python)."""
from __future__ import annotations

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc


def constant_column(value: str, n: int) -> pa.Array:
    """``n`` copies of ``value`` (commit time, file name or file id)."""
    return pa.repeat(pa.scalar(value, pa.string()), n)


def sequence_numbers(prefix: str, start: int, n: int) -> pa.Array:
    """``_hoodie_commit_seqno`` values ``<instant>_<partition>_<i>`` for i from ``start``."""
    counters = pc.cast(pa.array(np.arange(start, start + n, dtype=np.int64)), pa.string())
    return pc.binary_join_element_wise(constant_column(prefix, n), counters, "")
