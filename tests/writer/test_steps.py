"""Engine-neutral write steps on Arrow batches."""
from __future__ import annotations

import numpy as np
import pyarrow as pa
import pytest

from hoodie.writer.steps import group_indices


@pytest.mark.parametrize("distinct", [1, 3, 70_000])
def test_group_indices_lists_each_value_rows_in_order(distinct: int) -> None:
    """Row indices per distinct value, ascending within each value (input order is what
    dedupe and the handles rely on), for few values and for more than 16 bits' worth."""
    rng = np.random.default_rng(distinct)
    codes = rng.integers(0, distinct, 150_000)
    values = pa.chunked_array([pa.array([f"v{c}" for c in codes[:70_000]]), pa.array([f"v{c}" for c in codes[70_000:]])])
    groups = group_indices(values)
    assert set(groups) == {f"v{c}" for c in np.unique(codes)}
    label = np.full(len(codes), -1)
    for value, idx in groups.items():
        assert (np.diff(idx) > 0).all(), value
        label[idx] = int(value[1:])
    assert np.array_equal(label, codes)  # every row once, under its own value
    assert group_indices(pa.array([], pa.string())) == {}
