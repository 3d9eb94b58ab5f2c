"""Record keys and partition paths that hoodie computes from the data columns equal the
meta columns Apache Hudi wrote, for every conformance table that has meta fields."""
from __future__ import annotations

import pyarrow.parquet as pq
import pytest

from hoodie.config.options import HoodieConfig
from hoodie.table.table import HoodieTable
from hoodie.writer.keygen import KeyGenerator
from hoodie.writer.table_setup import effective_config


@pytest.mark.conformance()
def test_keys_and_partition_paths_match_hudi(conformance_case, conformance_table) -> None:
    table = HoodieTable.open(str(conformance_table(conformance_case)))
    if not table.config.populate_meta_fields or not table.timeline.completed_writes():
        pytest.skip("no meta fields or no data to compare")
    keygen = KeyGenerator.from_config(effective_config(HoodieConfig.of({}), table.config, table.base_path))
    files = [s.base_file.path for s in table.view().latest_slices_all() if s.base_file is not None]
    assert files
    for f in files:
        data = pq.read_table(f)
        if data.num_rows == 0:
            continue
        assert keygen.record_keys(data).to_pylist() == data.column("_hoodie_record_key").to_pylist(), f
        assert keygen.partition_paths(data).to_pylist() == data.column("_hoodie_partition_path").to_pylist(), f
