"""The metadata-table records of each data action (metadata_table/conversion.py) against
what Apache Hudi 0.15 wrote for the same actions (``tests/support/hudi015_samples.py``):
field by field, wrapper types included, for every record whose data file the sample
still holds (the cleaner removed the oldest ones).

* files: every instant (nothing is read from the data files);
* column_stats and bloom_filters: every base file and log file a write wrote; the
  tombstones of the files a clean deleted;
* record_index: every write whose files (and the previous base file of each group it
  rewrote) are still there: a delete, upserts, and both insert_overwrites.
"""
from __future__ import annotations

import base64
import time
from collections.abc import Iterator
from typing import Any

import pytest
from hudi015_samples import DELETED, plain_record, sample_records, sample_table

from hoodie.errors import DamagedTableError
from hoodie.metadata_table.conversion import records_for_action
from hoodie.metadata_table.file_stats import base_file_records, columns_to_index, log_file_stats
from hoodie.metadata_table.settings import BLOOM_FILTERS, COLUMN_STATS, FILES, RECORD_INDEX, MetadataSettings
from hoodie.storage.paths import under
from hoodie.table.table import HoodieTable
from hoodie.timeline.instant import Action, Instant, State

SAMPLES = sample_records()
ALL = MetadataSettings(enable=True, column_stats=True, bloom_filters=True, record_index=True)
CASES = [(t, s) for t in SAMPLES for s in SAMPLES[t]]
IDS = [f"{t.split('_')[0].lower()}-{s['action']}-{s['instant']}" for t, s in CASES]


@pytest.fixture(scope="module")
def tables(tmp_path_factory: pytest.TempPathFactory) -> dict[str, HoodieTable]:
    root = tmp_path_factory.mktemp("hudi015")
    return {t: HoodieTable.open(str(sample_table(t, root))) for t in SAMPLES}


@pytest.fixture(autouse=True)
def utc(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """Apache Hudi wrote the samples' instants (and their epoch milliseconds) in UTC."""
    monkeypatch.setenv("TZ", "UTC")
    time.tzset()
    yield
    monkeypatch.undo()
    time.tzset()


def _instant(sample: dict[str, Any]) -> Instant:
    return Instant(sample["instant"], sample["action"], State.COMPLETED)


def _mine(records: list[Any]) -> dict[str, Any]:
    keys = [r.key for r in records]
    assert len(keys) == len(set(keys)), "one record per key"
    return {r.key: plain_record(r) for r in records}


@pytest.mark.parametrize("table_type, sample", CASES, ids=IDS)
def test_files_records_equal_apache_hudi_015(tables: dict[str, HoodieTable], table_type: str, sample: dict[str, Any]) -> None:
    content = base64.b64decode(sample["content"])
    records = records_for_action(tables[table_type], _instant(sample), content, [FILES], ALL)
    assert _mine(records[FILES]) == sample["records"][FILES]


@pytest.mark.parametrize("table_type", list(SAMPLES))
def test_file_stats_and_bloom_filters_equal_apache_hudi_015(tables: dict[str, HoodieTable], table_type: str) -> None:
    table = tables[table_type]
    compared = {"base": 0, "log": 0, "columns": 0}
    for sample in SAMPLES[table_type]:
        instant = _instant(sample)
        if instant.action not in Action.WRITE_ACTIONS:
            continue
        commit = table.timeline.commit_metadata(instant)
        columns = columns_to_index((), commit.schema, True)
        hudi = {**sample["records"].get(COLUMN_STATS, {}), **sample["records"].get(BLOOM_FILTERS, {})}
        for partition, stats in commit.partition_to_write_stats.items():
            for stat in stats:
                path = under(table.base_path, stat.path)
                if not table.storage.exists(path):
                    continue  # cleaned since
                if stat.path.endswith(".parquet"):
                    found, bloom = base_file_records(table.storage, path, partition, stat.file_name, instant.timestamp, columns, True)
                    assert bloom is not None
                    found.append(bloom)
                    compared["base"] += 1
                else:
                    found = log_file_stats(table.storage, path, partition, stat.file_name, {instant.timestamp}, columns)
                    compared["log"] += 1
                mine = _mine(found)
                assert mine == {k: hudi.get(k) for k in mine}, (instant, stat.path)
                compared["columns"] += len(found)
    # (the primitive top-level columns and the meta columns of each base file; every column of a log)
    assert compared["base"] >= 4 and compared["columns"] >= 60, compared
    assert (compared["log"] > 0) == (table_type == "MERGE_ON_READ"), compared


@pytest.mark.parametrize("table_type", list(SAMPLES))
def test_clean_tombstones_equal_apache_hudi_015_but_name_the_file(tables: dict[str, HoodieTable], table_type: str) -> None:
    """Bloom filters: equal. Column statistics: one tombstone per column of the table, as
    Hudi's; but Hudi 0.15's cleaner shortens the file name by the partition's length plus
    one (``FSUtils.getFileName`` of a bare name) and hashes the key from that, so its
    tombstones never reach the statistics they mean to delete. hoodie names the file."""
    table = tables[table_type]
    cleans = [s for s in SAMPLES[table_type] if s["action"] == Action.CLEAN]
    assert cleans
    for sample in cleans:
        content = base64.b64decode(sample["content"])
        records = records_for_action(table, _instant(sample), content, [COLUMN_STATS, BLOOM_FILTERS], ALL)
        assert _mine(records[BLOOM_FILTERS]) == sample["records"][BLOOM_FILTERS]
        hudi = list(sample["records"][COLUMN_STATS].values())
        mine = [plain_record(r) for r in records[COLUMN_STATS]]
        assert len(mine) == len(hudi) and all(r["ColumnStatsMetadata"]["isDeleted"] for r in mine)
        for record in records[COLUMN_STATS]:
            cs = plain_record(record)["ColumnStatsMetadata"]
            partition = next(p for p in table.timeline.clean_metadata(_instant(sample)).partition_metadata if cs["fileName"] in
                             table.timeline.clean_metadata(_instant(sample)).partition_metadata[p].delete_path_patterns)
            shortened = {**cs, "fileName": cs["fileName"][len(partition) + 1:]}
            assert any(h["ColumnStatsMetadata"] == shortened for h in hudi), cs


@pytest.mark.parametrize("table_type", list(SAMPLES))
def test_record_index_equals_apache_hudi_015(tables: dict[str, HoodieTable], table_type: str) -> None:
    table = tables[table_type]
    compared = []
    for sample in SAMPLES[table_type]:
        instant = _instant(sample)
        if instant.action not in Action.WRITE_ACTIONS:
            continue
        try:
            records = records_for_action(table, instant, base64.b64decode(sample["content"]), [RECORD_INDEX], ALL)
        except (DamagedTableError, FileNotFoundError):
            continue  # a file it wrote or rewrote was cleaned since
        assert _mine(records[RECORD_INDEX]) == sample["records"].get(RECORD_INDEX, {}), instant
        compared.append(table.timeline.commit_metadata(instant).operation_type)
    assert "INSERT_OVERWRITE" in compared, compared
    if table_type == "COPY_ON_WRITE":
        assert "UPSERT" in compared
    assert any(v == DELETED for s in SAMPLES[table_type] for v in s["records"].get(RECORD_INDEX, {}).values())
