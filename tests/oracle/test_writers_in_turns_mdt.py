"""Writers in turns with the metadata table: hoodie and Apache Hudi write one table
alternately (the turns of ``test_writers_in_turns.py``: upserts, deletes, inserts and an
insert_overwrite from either side, inline compaction and cleaning), both with
``hoodie.metadata.enable=true`` and all four metadata partitions on (files, column stats,
bloom filters, record index). Each side keeps the other's metadata table: after every turn
hoodie's ``metadata_table.validate`` finds no difference between it and the data, Apache
Hudi's reads through it (``hoodie.metadata.enable=true``: its listing comes from the
metadata table) return the model's rows, as hoodie's do; at the end Apache Hudi's own
validation (``hudi_validator.py``) finds no difference either.

With Apache Hudi 0.15 (all the turns on merge-on-read, the first five on copy-on-write)
and with Apache Hudi 1.2 told to keep the table's version
(``hoodie.write.table.version=6``; the first five turns on merge-on-read), which keeps
the version-6 metadata table too, writing its delta commits as 0.15 does, except that it
leaves ``_hoodie_commit_seqno`` and ``_hoodie_file_name`` out of the column statistics
of the files it writes (docs/apache-hudi.md)."""
from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from hudi_oracle import HUDI_0_15, HUDI_1, Completed, HudiOracle
from oracle_reads import both_read
from sequences import ALL_METADATA, Layout, Model, batch, data, differences, inline_services, model_rows
from test_writers_in_turns import HOODIE, HUDI, KEEP_VERSION_6, LAYOUTS, stays_version_6, timeline, turns

import hoodie
from hoodie.config.properties import parse_properties
from hoodie.metadata_table import Difference, validate_metadata_table
from hoodie.table.table import HoodieTable

#: (Apache Hudi's index for its upserts: bloom; the record index is kept either way)
METADATA = {**ALL_METADATA, "hoodie.index.type": "BLOOM"}
MDT_PARTITIONS = {"files", "column_stats", "bloom_filters", "record_index"}
THROUGH_MDT = {"hoodie.metadata.enable": "true"}


#: the meta columns Apache Hudi 1.x leaves out of the column statistics of the files it
#: writes (0.15, and hoodie on a version-6 table, index every column)
NOT_INDEXED_BY_1X = {"_hoodie_commit_seqno", "_hoodie_file_name"}


def _unindexed_by_1x(diff: Difference, written_by_1x: set[str]) -> bool:
    """A difference that is Apache Hudi 1.x's choice of columns: no statistics of
    :data:`NOT_INDEXED_BY_1X` for a base file it wrote."""
    return (
        diff.check == "column_stats" and diff.column in NOT_INDEXED_BY_1X and diff.metadata == "absent"
        and diff.file is not None and diff.file.rsplit("_", 1)[-1].split(".")[0] in written_by_1x
    )


def _check(oracle: HudiOracle, path: Path, model: Model, what: str, written_by_1x: set[str]) -> None:
    props = parse_properties((path / ".hoodie" / "hoodie.properties").read_text())
    assert set(props["hoodie.table.metadata.partitions"].split(",")) == MDT_PARTITIONS, f"after {what}: {props}"
    assert not props.get("hoodie.table.metadata.partitions.inflight"), f"after {what}: {props}"
    report = validate_metadata_table(HoodieTable.open(str(path)))
    found = [d for d in report.differences if not _unindexed_by_1x(d, written_by_1x)]
    assert not found, f"hoodie's validation of the metadata table after {what}: {found}"
    assert report.files_checked and report.statistics_checked and report.filters_checked and report.keys_checked
    read = both_read(oracle, path, THROUGH_MDT, f"snapshot through the metadata table after {what}")
    assert read is not None
    expected = model_rows(model.rows.values())
    assert data(read) == expected, f"snapshot after {what} (left) differs from the model:\n{differences(data(read), expected)}"


COW, MOR = LAYOUTS
#: (version, layout, how many of the turns): all of them once (merge-on-read, Apache Hudi
#: 0.15), else the first five, the fewest in which each side cleans (and compacts, on
#: merge-on-read) at least once
CASES = [(HUDI_0_15, COW, 5), (HUDI_0_15, MOR, len(turns())), (HUDI_1, MOR, 5)]


@pytest.mark.parametrize(("version", "layout", "count"), CASES, ids=[f"{v}-{x.id}-{n}" for v, x, n in CASES])
def test_hoodie_and_apache_hudi_write_in_turns_keeping_the_metadata_table(
    version: str, layout: Layout, count: int, hudi_oracle: Callable[[str], HudiOracle], tmp_path: Path
) -> None:
    oracle = hudi_oracle(version)
    path = tmp_path / "table"
    options = layout.options("in_turns_mdt", **inline_services(not layout.is_mor), **METADATA)
    hudi_options = {**options, **(KEEP_VERSION_6 if version == HUDI_1 else {})}
    model = Model.of(layout)
    first_mdt_instant = None
    written_by_1x: set[str] = set()  # the instants of Apache Hudi 1.2's writes and compactions
    services: dict[str, set[str]] = {HOODIE: set(), HUDI: set()}
    for n, (writer, op, records) in enumerate(turns()[:count]):
        before = timeline(path)
        if writer == HOODIE:
            instant = hoodie.write(batch(records), str(path), {**options, "hoodie.datasource.write.operation": op})
            done = Completed(instant, "", instant)
        else:
            completed = oracle.write(path, batch(records), {**hudi_options, "hoodie.datasource.write.operation": op})
            assert completed, f"Apache Hudi completed no instant for write {n} ({op})"
            done = completed[0]
            if version == HUDI_1:
                written_by_1x |= {c.instant for c in completed}
        stays_version_6(path)
        services[writer] |= {a for name, a in timeline(path).items() if name not in before and not name.startswith(done.instant)}
        model.apply(done.instant, op, records)
        what = f"write {n} ({op}) by {writer}"
        _check(oracle, path, model, what, written_by_1x)
        mdt = HoodieTable.open(str(path / ".hoodie" / "metadata"))
        stays_version_6(path / ".hoodie" / "metadata")
        # neither side rebuilds the other's metadata table: its first instant stays
        first_mdt_instant = first_mdt_instant or mdt.timeline.instants[0].timestamp
        assert mdt.timeline.instants[0].timestamp == first_mdt_instant, f"the metadata table was rebuilt by {what}"
        assert done.instant in {i.timestamp for i in mdt.timeline.completed(["deltacommit"])}, f"{what} left no delta commit"

    for writer, ran in services.items():
        assert "clean" in ran, f"{writer} cleaned nothing: it ran {sorted(ran)}"
        if layout.is_mor:
            assert "commit" in ran, f"{writer} compacted nothing: it ran {sorted(ran)}"
    mdt = HoodieTable.open(str(path / ".hoodie" / "metadata"))
    assert mdt.timeline.completed(["commit"]), "the metadata table never compacted itself"
    if version == HUDI_0_15:
        report: dict[str, Any] = oracle.validate_metadata(path)
        assert not report["differences"], f"Apache Hudi's validation after the turns: {report['differences']}"
