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

import pyarrow as pa
import pytest
from hudi_oracle import HUDI_0_15, HUDI_1, HudiOracle
from mdt_checks import check_record_index
from oracle_reads import HOODIE, HUDI, Turn, write_in_turns
from sequences import Layout, batch, record

import hoodie
from hoodie.metadata_table import MetadataTableReader
from hoodie.table.table import HoodieTable

RECORD_INDEX = {
    "hoodie.index.type": "RECORD_INDEX",
    "hoodie.metadata.enable": "true",
    "hoodie.metadata.record.index.enable": "true",
    "hoodie.metadata.compact.max.delta.commits": "3",
}
CASES = [(Layout("COPY_ON_WRITE", "hive"), HOODIE), (Layout("MERGE_ON_READ", "plain"), HUDI)]


def turns(first: str) -> list[Turn]:
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

    def check(step: str, op: str, records: list[dict[str, Any]]) -> None:
        table = HoodieTable.open(str(path))
        assert "record_index" in table.config.metadata_partitions, step
        check_record_index(MetadataTableReader(table), str(path), gone=[r["uuid"] for r in records] if op == "delete" else ())

    write_in_turns(oracle, path, layout, layout.options("hoodie_rli", **RECORD_INDEX), turns(first), check)


COMPACTED = {"hoodie.compact.inline": "true", "hoodie.compact.inline.max.delta.commits": "1"}
# Which reads of Apache Hudi give such a record its partition's value (from the folder)
# rather than the stored one, its option hoodie.datasource.read.extract.partition.values.from.path
# left false (docs/apache-hudi.md): 1.2's everywhere, 0.15's on copy-on-write.
MOVED_CASES = [
    pytest.param(HUDI_1, "COPY_ON_WRITE", {}, True, id="hudi-1-cow"),
    pytest.param(HUDI_1, "MERGE_ON_READ", {}, True, id="hudi-1-mor-logs"),
    pytest.param(HUDI_1, "MERGE_ON_READ", COMPACTED, True, id="hudi-1-mor-compacted"),
    pytest.param(HUDI_0_15, "COPY_ON_WRITE", {}, True, id="hudi-0.15-cow"),
    pytest.param(HUDI_0_15, "MERGE_ON_READ", {}, False, id="hudi-0.15-mor-logs"),
    pytest.param(HUDI_0_15, "MERGE_ON_READ", COMPACTED, False, id="hudi-0.15-mor-compacted"),
]


@pytest.mark.parametrize(("version", "table_type", "extra", "hudi_from_path"), MOVED_CASES)
def test_a_record_kept_in_its_old_partition_reads_as_apache_hudi_reads_it(
    spark: Any, version: str, table_type: str, extra: dict[str, str], hudi_from_path: bool,
    hudi_oracle: Callable[[str], HudiOracle], tmp_path: Path,
) -> None:
    """``hoodie.record.index.update.partition.path=false``: k0 moves from sf to la and is
    updated where it is, holding "la" in sf's file. ``hoodie.read`` and hoodie's Spark
    read with ``extract.partition.values.from.path=false`` show the stored "la", as Apache
    Hudi 0.15's merge-on-read reads do; the reads of Apache Hudi that show the folder's
    "sf" are hoodie's Spark read by default (the option unset, or true). Filtered on the
    partition column, both prune by partition path and filter the values they show alike."""
    oracle = hudi_oracle(version)
    _load_hfile_classes(oracle, tmp_path / "warm", Layout(table_type, "plain"))
    path = str(tmp_path / "moved")
    options = {
        "hoodie.table.name": "moved", "hoodie.datasource.write.recordkey.field": "uuid",
        "hoodie.datasource.write.partitionpath.field": "city", "hoodie.datasource.write.precombine.field": "ts",
        "hoodie.datasource.write.table.type": table_type, "hoodie.record.index.update.partition.path": "false", **RECORD_INDEX, **extra,
    }

    def rows(keys: list[str], cities: list[str], ts: int) -> pa.Table:
        return pa.table({"uuid": keys, "city": cities, "ts": pa.array([ts] * len(keys), pa.int64())})

    hoodie.write(rows(["k0", "k1", "k2"], ["sf", "sf", "la"], 1), path, options)
    hoodie.write(rows(["k0"], ["la"], 2), path, options)

    def seen(data: Any) -> list[tuple[str, str, str]]:
        table = data if isinstance(data, pa.Table) else data.toArrow()
        return sorted((r["uuid"], r["_hoodie_partition_path"], r["city"]) for r in table.to_pylist())

    stored = [("k0", "sf", "la"), ("k1", "sf", "sf"), ("k2", "la", "la")]
    from_files = {"hoodie.datasource.read.extract.partition.values.from.path": "false"}
    assert seen(hoodie.read(path)) == seen(spark.read.format("hoodie").options(**from_files).load(path)) == stored
    assert seen(spark.read.format("hoodie").load(path)) == [("k0", "sf", "sf"), *stored[1:]]
    mdt = {"hoodie.metadata.enable": "true"}
    ours = spark.read.format("hoodie").option("hoodie.datasource.read.extract.partition.values.from.path", str(hudi_from_path)).load(path)
    assert seen(oracle.read(path, mdt)) == seen(ours) == ([("k0", "sf", "sf"), *stored[1:]] if hudi_from_path else stored)
    for city in ("la", "sf"):
        assert seen(ours.where(f"city = '{city}'")) == seen(oracle.read(path, mdt, where=f"city = '{city}'")), city
