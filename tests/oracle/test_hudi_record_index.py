"""RECORD_INDEX between hoodie and Apache Hudi 0.15 (issue 29): one table written in
turns by both with ``hoodie.index.type=RECORD_INDEX``, each side tagging its upserts and
deletes by the record index the other side built and kept. hoodie builds the table and its
record index first on copy-on-write (hive-style), Apache Hudi does on merge-on-read (where
it may insert into log files). After every write both sides read the model's rows and
the record index places every live key where it is read from."""
from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from hudi_oracle import HUDI_0_15, Completed, HudiOracle
from mdt_checks import check_record_index
from oracle_reads import check_reads
from sequences import Layout, Model, batch, record

import hoodie
from hoodie.metadata_table import MetadataTableReader
from hoodie.table.table import HoodieTable

HOODIE, HUDI = "hoodie", "Apache Hudi"
RECORD_INDEX = {
    "hoodie.index.type": "RECORD_INDEX",
    "hoodie.metadata.enable": "true",
    "hoodie.metadata.record.index.enable": "true",
    "hoodie.metadata.compact.max.delta.commits": "3",
}
CASES = [(Layout("COPY_ON_WRITE", "hive"), HOODIE), (Layout("MERGE_ON_READ", "plain"), HUDI)]


def turns(first: str) -> list[tuple[str, str, list[dict[str, Any]]]]:
    """Each update carries a larger ``ts`` than the stored record (Apache Hudi 0.15's
    default payload takes the later write, hoodie the larger ``ts``: they agree)."""
    other = HUDI if first == HOODIE else HOODIE
    return [
        (first, "bulk_insert", [record(n, 1) for n in range(30)]),
        (other, "upsert", [record(n, 2) for n in range(0, 12)] + [record(n, 1) for n in range(30, 35)]),
        (first, "upsert", [record(n, 3) for n in range(6, 16)] + [record(n, 3) for n in (31, 32)] + [record(n, 1) for n in (40, 41)]),
        (other, "delete", [record(n, 9) for n in (0, 1, 30, 99)]),
        (first, "delete", [record(n, 9) for n in (2, 40)]),
        (other, "upsert", [record(n, 4) for n in (3, 6, 31, 41)]),
    ]


def _load_hfile_classes(oracle: HudiOracle, path: Path, layout: Layout) -> None:
    """Apache Hudi 0.15 reads a metadata table once first. Its bundled HBase HFile class
    initialises a metrics factory by ServiceLoader in whichever thread first uses it; a
    record-index lookup spans several file groups in a parallel stream, so that thread may
    be a ForkJoinPool worker without the application's class loader, and the class then
    fails for the rest of the JVM ("Could not create interface ...
    MetricsRegionServerSourceFactory"). A read lists through the one-file-group ``files``
    partition in the calling thread."""
    hoodie.write(batch([record(0, 1)]), str(path), layout.options("warm", **{"hoodie.metadata.enable": "true"}))
    assert oracle.read(path, {"hoodie.metadata.enable": "true"}).num_rows == 1


@pytest.mark.parametrize(("layout", "first"), CASES, ids=[f"{x.id}-{w.split()[-1].lower()}-first" for x, w in CASES])
def test_both_sides_tag_by_the_record_index_the_other_kept(
    layout: Layout, first: str, hudi_oracle: Callable[[str], HudiOracle], tmp_path: Path
) -> None:
    oracle = hudi_oracle(HUDI_0_15)
    _load_hfile_classes(oracle, tmp_path / "warm", layout)
    path = tmp_path / "table"
    options = layout.options("hoodie_rli", **RECORD_INDEX)
    model = Model.of(layout)
    writes: list[Completed] = []
    for n, (writer, op, records) in enumerate(turns(first)):
        step_options = {**options, "hoodie.datasource.write.operation": op}
        if writer == HOODIE:
            instant = hoodie.write(batch(records), str(path), step_options)
            done = Completed(instant, "", instant)
        else:
            done = oracle.write(path, batch(records), step_options)[0]
        model.apply(done.instant, op, records)
        writes.append(done)
        table = HoodieTable.open(str(path))
        assert "record_index" in table.config.metadata_partitions
        check_reads(oracle, path, layout, model, writes, f"write {n} ({op}) by {writer}")
        check_record_index(MetadataTableReader(table), str(path), gone=[r["uuid"] for r in records] if op == "delete" else ())
