"""Apache Hudi's own metadata-table validation passes on the tables hoodie writes: after
every write of the oracle's sequence by hoodie with all four metadata partitions on
(copy-on-write and merge-on-read; inline compaction and cleaning, a delete, an
insert_overwrite, the metadata table compacting itself every three delta commits), Apache
Hudi 0.15 compares its reading of hoodie's metadata table with its reading of storage and
footers (``hudi_validator.py``: the checks of its HoodieMetadataTableValidator's
``--validate-latest-file-slices --validate-latest-base-files --validate-all-file-groups
--validate-all-column-stats --validate-bloom-filters --validate-record-index-count
--validate-record-index-content``, and every file listed both ways with its size) and
finds no difference. On copies damaged outside the timeline (a column statistic or a
record-index entry changed in the metadata table's HFiles, a base file lost from storage)
the same validation reports the difference."""
from __future__ import annotations

import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from hudi_oracle import HUDI_0_15, HudiOracle
from mdt_checks import change_one_column_min, rewrite_mdt_base
from oracle_reads import completed_actions
from sequences import ALL_METADATA, Layout, batch, inline_services, steps

import hoodie
from hoodie.config.options import HoodieConfig
from hoodie.metadata_table import MetadataRecord, MetadataTableReader
from hoodie.metadata_table.services import MetadataServiceSettings, run_table_services
from hoodie.services.for_metadata import METADATA_SERVICES
from hoodie.table.table import HoodieTable

LAYOUTS = [Layout("COPY_ON_WRITE", "hive"), Layout("MERGE_ON_READ", "plain")]
#: what every validation compares at least once
COUNTED = ("partitions", "files", "file_slices", "base_files", "file_groups", "column_stats", "bloom_filters", "keys")


def _write_sequence(path: Path, layout: Layout, after_each: Callable[[int, str], None] = lambda n, op: None) -> None:
    options = layout.options("validated", **inline_services(not layout.is_mor), **ALL_METADATA)
    for n, (op, records) in enumerate(steps()):
        hoodie.write(batch(records), str(path), {**options, "hoodie.datasource.write.operation": op})
        after_each(n, op)


def _shown(report: dict[str, Any]) -> str:
    return "\n".join(f"{d['check']} [{d['partition']}]: metadata table {d['metadata']} | storage {d['storage']}" for d in report["differences"])


@pytest.mark.parametrize("layout", LAYOUTS, ids=[x.id for x in LAYOUTS])
def test_apache_hudi_validates_the_metadata_table_hoodie_writes(layout: Layout, hudi_oracle: Callable[[str], HudiOracle], tmp_path: Path) -> None:
    oracle = hudi_oracle(HUDI_0_15)
    path = tmp_path / "table"

    def validated(n: int, op: str) -> None:
        report = oracle.validate_metadata(path)
        assert not report["differences"], f"Apache Hudi's validation after write {n} ({op}) by hoodie:\n{_shown(report)}"
        assert all(report["counts"][c] for c in COUNTED), report["counts"]

    _write_sequence(path, layout, validated)
    # what the sequence went through: cleaning, an insert_overwrite, compaction (merge-on-read),
    # the metadata table's own compaction
    actions = completed_actions(path)
    assert {"clean", "replacecommit"} <= actions and (not layout.is_mor or "commit" in actions), sorted(actions)
    assert "commit" in completed_actions(path / ".hoodie" / "metadata"), "the metadata table never compacted itself"


def test_apache_hudi_validation_reports_a_damaged_metadata_table(hudi_oracle: Callable[[str], HudiOracle], tmp_path: Path) -> None:
    oracle = hudi_oracle(HUDI_0_15)
    table_path = tmp_path / "table"
    _write_sequence(table_path, Layout("MERGE_ON_READ", "hive"))
    # every metadata slice compacted into a base HFile, so that the damage to base HFiles
    # is what a read of the metadata table answers
    settings = MetadataServiceSettings.of(HoodieConfig.of({"hoodie.metadata.compact.max.delta.commits": "1"}))
    run_table_services(HoodieTable.open(str(table_path)), settings, METADATA_SERVICES)
    reader = MetadataTableReader(HoodieTable.open(str(table_path)))
    assert all(not s.log_files for p in reader.partitions for s in reader.file_slices(p))
    assert not oracle.validate_metadata(table_path)["differences"]
    latest = [s.base_file for s in HoodieTable.open(str(table_path)).local_view().latest_slices_all() if s.base_file is not None]
    held = {b.file_name for b in latest}

    def copy(name: str) -> Path:
        dest = tmp_path / name
        shutil.copytree(table_path, dest)
        return dest

    # a column statistic of a latest base file changed
    stats = copy("stats")
    before = change_one_column_min(stats, "ts", held, -1000)
    report = oracle.validate_metadata(stats)
    assert [d["check"] for d in report["differences"]] == ["column stats"], _shown(report)
    assert before.file_name in report["differences"][0]["metadata"] and "minValue=-1000" in report["differences"][0]["metadata"]

    # a record-index entry lost
    lost: list[str] = []

    def drop_one(record: MetadataRecord) -> MetadataRecord | None:
        if lost:
            return record
        lost.append(record.key)
        return None

    keys = copy("keys")
    rewrite_mdt_base(keys, "record_index", drop_one)
    report = oracle.validate_metadata(keys)
    assert sorted(d["check"] for d in report["differences"]) == ["record index content", "record index count"], _shown(report)
    assert lost[0] in report["differences"][0]["storage"] + report["differences"][1]["storage"]

    # a latest base file lost from storage
    files = copy("files")
    gone = latest[0]
    (files / Path(gone.path).relative_to(table_path)).unlink()
    report = oracle.validate_metadata(files)
    found = {d["check"] for d in report["differences"]}
    assert {"files", "latest file slices", "latest base files", "all file groups", "record index count"} <= found, _shown(report)
    assert any(d["metadata"] == f"{gone.file_name} ({gone.size} bytes)" and d["storage"] == "-" for d in report["differences"] if d["check"] == "files")
