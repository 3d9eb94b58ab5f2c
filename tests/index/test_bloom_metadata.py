"""The bloom index from the metadata table (issue 29: "The bloom index reads filters from
bloom_filters instead of file footers"): with ``hoodie.bloom.index.use.metadata`` and a
complete ``bloom_filters`` partition, each file's filter (and, with ``column_stats``,
its key range) comes from the metadata table, and tagging gives exactly the locations
footer-based tagging gives, opening only the files whose filter lets a key through."""
from __future__ import annotations

import random
from collections import Counter
from pathlib import Path

import numpy as np
import pyarrow as pa
import pytest
from opened_files import OpenedFiles
from table_options import BLOOM_IN_METADATA

import hoodie
from hoodie.engine.local import LocalEngine
from hoodie.index import IndexSettings, tag_partition
from hoodie.metadata_table.index_lookup import MetadataBloomSource
from hoodie.storage.local import LocalStorage
from hoodie.table.table import HoodieTable
from hoodie.writer import steps
from hoodie.writer.schema import FILE_ID_COLUMN

OPTS = {
    **BLOOM_IN_METADATA,
    "hoodie.copyonwrite.insert.auto.split": "false",
    "hoodie.copyonwrite.insert.split.size": "25",
    "hoodie.parquet.small.file.limit": "0",
}


def _table(path: str, rng: random.Random, table_type: str, options: dict[str, str]) -> list[str]:
    keys: list[str] = []
    for batch in range(4):
        new = [f"{rng.randrange(10**6):06d}-{batch}" for _ in range(60)]
        olds = rng.sample(keys, min(len(keys), 20))
        rows = new + olds
        keys += new
        data = pa.table({"uuid": rows, "city": [("sf", "la")[int(k[:6]) % 2] for k in rows], "ts": [batch] * len(rows)})
        hoodie.write(data, path, {**options, "hoodie.datasource.write.table.type": table_type})
    return keys


@pytest.mark.parametrize("column_stats", [True, False])
@pytest.mark.parametrize("table_type", ["COPY_ON_WRITE", "MERGE_ON_READ"])
def test_tagging_from_the_metadata_table_equals_tagging_from_footers(tmp_path: Path, table_type: str, column_stats: bool) -> None:
    rng = random.Random(15)
    path = str(tmp_path / "t")
    options = {**OPTS, "hoodie.metadata.index.column.stats.enable": str(column_stats).lower()}
    keys = _table(path, rng, table_type, options)
    table = HoodieTable.open(path)
    source = MetadataBloomSource(table)
    asked = pa.array(sorted(set(rng.sample(keys, 40)) | {f"absent-{i}" for i in range(40)}))
    for partition in ("sf", "la"):
        refs = steps.file_refs(table.view().latest_slices(partition))
        assert len(refs) > 2
        footers, metadata = OpenedFiles(), OpenedFiles()
        by_footer = tag_partition(asked, refs, footers, IndexSettings("BLOOM"))
        by_metadata = tag_partition(asked, refs, metadata, IndexSettings("BLOOM", bloom_source=source))
        np.testing.assert_array_equal(by_metadata.file_pos, by_footer.file_pos)
        assert (by_footer.file_pos >= 0).any()
        # every file's footer is opened from footers; from the metadata table only the
        # files a key may be in are read, to verify it
        assert footers.counters["footer"] == by_footer.files_checked
        assert metadata.counters["footer"] == 0
        assert set(metadata.opened) <= {r.path for r in refs}
        assert len(metadata.opened) < len(refs)


def test_writes_with_the_metadata_bloom_index_end_as_writes_with_footers(tmp_path: Path) -> None:
    """Upserts with ``hoodie.bloom.index.use.metadata`` on and off: the same rows (every
    existing key updated in place, none inserted twice)."""
    results = []
    for use in ("true", "false"):
        path = str(tmp_path / use)
        keys = _table(path, random.Random(7), "COPY_ON_WRITE", {**OPTS, "hoodie.bloom.index.use.metadata": use})
        results.append(hoodie.read(path).select(["uuid", "city", "ts"]).sort_by("uuid"))
        assert results[-1].num_rows == len(set(keys))
    assert results[0].equals(results[1])


def test_the_write_takes_the_metadata_table_only_when_asked_and_complete(tmp_path: Path) -> None:
    from hoodie.services.for_writers import WRITER_SERVICES
    from hoodie.writer.table_setup import prepare_write

    path = str(tmp_path / "t")
    _table(path, random.Random(3), "COPY_ON_WRITE", OPTS)
    schema = pa.schema([("uuid", pa.string()), ("city", pa.string()), ("ts", pa.int64())])
    storage = LocalStorage()
    on = prepare_write(path, {**OPTS, "hoodie.bloom.index.use.metadata": "true"}, None, schema, storage, WRITER_SERVICES)
    assert isinstance(on.settings.index.bloom_source, MetadataBloomSource)
    off = prepare_write(path, OPTS, None, schema, storage, WRITER_SERVICES)  # Apache Hudi's default: false
    assert off.settings.index.bloom_source is None
    without = {k: v for k, v in OPTS.items() if k != "hoodie.metadata.index.bloom.filter.enable"}
    plain = str(tmp_path / "plain")
    _table(plain, random.Random(3), "COPY_ON_WRITE", without)
    none = prepare_write(plain, {**without, "hoodie.bloom.index.use.metadata": "true"}, None, schema, storage, WRITER_SERVICES)
    assert none.settings.index.bloom_source is None  # no bloom_filters partition: the footers


def test_tagging_a_batch_of_many_partitions_reads_each_metadata_file_once(tmp_path: Path) -> None:
    """The tagging step asks the metadata table once for the filters of every partition's
    files: each file of the ``bloom_filters`` partition is opened once, not once per data
    partition (each partition's lookup would read the file groups its files hash into),
    and the tags are those of the footers."""
    rng = random.Random(21)
    path = str(tmp_path / "t")
    cities = ["sf", "la", "nyc", "sea", "chi", "bos"]
    keys: list[str] = []
    for batch in range(3):
        new = [f"{rng.randrange(10**6):06d}-{batch}" for _ in range(120)]
        keys += new
        data = pa.table({"uuid": new, "city": [cities[int(k[:6]) % len(cities)] for k in new], "ts": [batch] * len(new)})
        hoodie.write(data, path, OPTS)
    asked = sorted(set(rng.sample(keys, 90)) | {f"{i:06d}-absent" for i in range(90)})
    records = pa.table({"_hoodie_record_key": asked, "_hoodie_partition_path": [cities[int(k[:6]) % len(cities)] for k in asked]})
    opened = OpenedFiles()
    table = HoodieTable.open(path, opened)
    refs = {c: steps.file_refs(table.view().latest_slices(c)) for c in cities}
    assert all(len(r) >= 3 for r in refs.values())
    opened.opened.clear()
    by_metadata = steps.tag_records(records, refs, opened, IndexSettings("BLOOM", bloom_source=MetadataBloomSource(table)), LocalEngine(2))
    metadata_files = Counter(p for p in opened.opened if "/.hoodie/metadata/bloom_filters/" in p)
    assert metadata_files and set(metadata_files.values()) == {1}, metadata_files
    assert {p for p in opened.opened if "/.hoodie/" not in p} <= {r.path for rs in refs.values() for r in rs}
    by_footer = steps.tag_records(records, refs, LocalStorage(), IndexSettings("BLOOM"), LocalEngine(2))
    assert by_metadata.column(FILE_ID_COLUMN).equals(by_footer.column(FILE_ID_COLUMN))
    assert by_footer.column(FILE_ID_COLUMN).null_count == len(asked) - 90
