"""hoodie writes the metadata table, Apache Hudi 0.15 uses it: after every write of the
oracle's sequence by hoodie with ``hoodie.metadata.enable=true`` (inline compaction and
cleaning, the metadata table compacting itself every three delta commits), Apache Hudi's
reads with ``hoodie.metadata.enable=true`` (its file listing from hoodie's metadata
table) return exactly hoodie's reads and the model's rows. Then Apache Hudi 0.15 writes
next with its metadata table on: it takes hoodie's metadata table as it is (no rebuild)
and keeps it consistent: hoodie's metadata-table reader lists exactly the committed
files, and hoodie writes on with it."""
from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest
from hudi_oracle import HUDI_0_15, Completed, HudiOracle
from mdt_checks import check_files
from oracle_reads import both_read, check_reads
from sequences import SERVICES, Layout, Model, batch, data, model_rows, record, steps

import hoodie
from hoodie.metadata_table import MetadataTableReader
from hoodie.table.table import HoodieTable

LAYOUTS = [Layout("COPY_ON_WRITE", "hive"), Layout("MERGE_ON_READ", "plain")]
ON = {"hoodie.metadata.enable": "true"}


def _check_metadata_table(path: Path) -> None:
    table = HoodieTable.open(str(path))
    assert "files" in table.config.metadata_partitions
    check_files(MetadataTableReader(table), table)


@pytest.mark.parametrize("layout", LAYOUTS, ids=[x.id for x in LAYOUTS])
def test_apache_hudi_reads_and_keeps_the_metadata_table_hoodie_writes(layout: Layout, hudi_oracle: Callable[[str], HudiOracle], tmp_path: Path) -> None:
    oracle = hudi_oracle(HUDI_0_15)
    path = tmp_path / "table"
    # (Apache Hudi refuses hoodie.compact.inline on copy-on-write)
    services = SERVICES if layout.is_mor else {k: v for k, v in SERVICES.items() if "compact" not in k}
    options = layout.options("hoodie_mdt", **services, **ON, **{"hoodie.metadata.compact.max.delta.commits": "3"})
    model = Model.of(layout)
    writes: list[Completed] = []
    for n, (op, records) in enumerate(steps()):
        instant = hoodie.write(batch(records), str(path), {**options, "hoodie.datasource.write.operation": op})
        model.apply(instant, op, records)
        writes.append(Completed(instant, "", instant))
        _check_metadata_table(path)
        check_reads(oracle, path, layout, model, writes, f"write {n} ({op}) by hoodie")
        listed = both_read(oracle, path, ON, f"snapshot through the metadata table after write {n} ({op})")
        assert listed is not None and data(listed) == model_rows(model.rows.values())
    mdt = HoodieTable.open(str(path / ".hoodie" / "metadata"))
    assert mdt.timeline.completed(["commit"]), "hoodie's metadata table never compacted itself"
    first = mdt.timeline.instants[0].timestamp

    # Apache Hudi 0.15 writes next, with its metadata table on: it keeps hoodie's
    upsert = [record(n, 20) for n in (0, 1, 2, 45)]
    done = oracle.write(path, batch(upsert), {**options, "hoodie.datasource.write.operation": "upsert"})[0]
    model.apply(done.instant, "upsert", upsert)
    writes.append(done)
    mdt = HoodieTable.open(str(path / ".hoodie" / "metadata"))
    assert mdt.timeline.instants[0].timestamp == first, "Apache Hudi rebuilt the metadata table"
    assert done.instant in {i.timestamp for i in mdt.timeline.completed(["deltacommit"])}
    _check_metadata_table(path)
    check_reads(oracle, path, layout, model, writes, "an upsert by Apache Hudi 0.15")

    # and hoodie writes on with it
    upsert = [record(n, 21) for n in (3, 4, 46)]
    instant = hoodie.write(batch(upsert), str(path), {**options, "hoodie.datasource.write.operation": "upsert"})
    model.apply(instant, "upsert", upsert)
    writes.append(Completed(instant, "", instant))
    _check_metadata_table(path)
    listed = both_read(oracle, path, ON, "snapshot through the metadata table after hoodie's last write")
    assert listed is not None and data(listed) == model_rows(model.rows.values())
