"""Data skipping: ``hoodie.read(path, filters=...)`` reads only the file slices whose
column statistics in the metadata table (written by Apache Hudi 1.1: the conformance
tables with ``.hoodie/metadata``) may hold a matching row, and returns exactly the rows
of the unfiltered read that the filter matches. The slices read are compared with the
Parquet footers of their base files; missing statistics, incomparable values and a
damaged metadata table never give a wrong answer."""
from __future__ import annotations

import dataclasses
import datetime as dt
import shutil
from collections.abc import Callable
from decimal import Decimal
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc
import pytest
from mdt_checks import footer_stats, mdt_tables
from shared import cases_or_skip

import hoodie
from hoodie.errors import ConfigError, FormatError, SchemaError
from hoodie.layout import parse_log_file_name
from hoodie.metadata_table import MetadataTableReader
from hoodie.metadata_table.records import ColumnStats
from hoodie.query.skipping import RowFilter, prune_slices
from hoodie.table.file_group import FileSlice, LogFile
from hoodie.table.table import HoodieTable

MDT_TABLES = mdt_tables()
CASES = cases_or_skip(MDT_TABLES, MDT_TABLES, "tables with a metadata table")

# (filters, the footer test a base file must pass to be read)
Overlap = Callable[[dict[str, tuple[Any, Any, int, int]]], bool]


def _between(column: str, lo: Any, hi: Any) -> Overlap:
    return lambda f: column not in f or (f[column][1] >= lo and f[column][0] <= hi)


FILTERS: list[tuple[list[Any], Overlap]] = [
    ([("amount", ">=", Decimal("100.00")), ("amount", "<", Decimal("300.00"))], _between("amount", Decimal("100.00"), Decimal("300.00"))),
    ([("txn_id", "=", "TXN-017")], _between("txn_id", "TXN-017", "TXN-017")),
    ([("txn_date", ">", dt.date(2024, 1, 20))], lambda f: "txn_date" not in f or f["txn_date"][1] > dt.date(2024, 1, 20)),
    (
        [[("txn_id", "=", "TXN-002")], [("txn_id", "=", "TXN-018")]],
        lambda f: _between("txn_id", "TXN-002", "TXN-002")(f) or _between("txn_id", "TXN-018", "TXN-018")(f),
    ),
    ([("txn_id", "in", ["TXN-001", "TXN-999"])], _between("txn_id", "TXN-001", "TXN-001")),
]


def _sorted(t: pa.Table) -> pa.Table:
    return t.sort_by("_hoodie_record_key")


def _spy_reads(monkeypatch: pytest.MonkeyPatch) -> list[FileSlice]:
    """Record the slices each read hands to the slice reader."""
    from hoodie.query import snapshot

    read: list[FileSlice] = []
    original = snapshot.read_file_slices

    def spy(table: HoodieTable, slices: list[FileSlice], *args: Any, **kwargs: Any) -> pa.Table:
        read.extend(slices)
        return original(table, slices, *args, **kwargs)

    monkeypatch.setattr(snapshot, "read_file_slices", spy)
    return read


@pytest.mark.parametrize("name", CASES)
@pytest.mark.parametrize("case", range(len(FILTERS)))
def test_a_filtered_read_skips_the_files_whose_ranges_miss_it(
    conformance_table: Callable[[str], Path], name: str, case: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    base = str(conformance_table(name))
    filters, overlaps = FILTERS[case]
    everything = hoodie.read(base)
    expected = unskipped = everything.filter(RowFilter.of(filters).expression())  # type: ignore[union-attr]
    table = HoodieTable.open(base)
    latest = table.local_view().latest_slices_all()
    assert all(s.base_file is not None and not s.log_files for s in latest)
    should_read = {s.file_id for s in latest if s.base_file is not None and overlaps(footer_stats(Path(s.base_file.path)))}
    if "record_index" in table.config.metadata_partitions and RowFilter.of(filters).columns == list(table.config.record_key_fields):  # type: ignore[union-attr]
        # asked by key: only the file groups the record index names for those keys are
        # read; a key a table holds twice (v9_nonpartitioned_rollback inserted TXN-002 in
        # two file groups) is found where the index places it, as Apache Hudi finds it
        keys = {k for conj in RowFilter.of(filters).conjunctions for _, _, v in conj for k in (v if isinstance(v, list) else [v])}  # type: ignore[union-attr]
        named = {loc.file_id for loc in MetadataTableReader(table).record_locations(keys).values()}
        should_read &= named
        expected = expected.filter(pc.is_in(pc.utf8_slice_codeunits(expected.column("_hoodie_file_name"), 0, 38), pa.array(sorted(named), pa.string())))

    read = _spy_reads(monkeypatch)
    got = hoodie.read(base, filters=filters)
    assert _sorted(got).equals(_sorted(expected))
    assert {s.file_id for s in read} == should_read

    # skipping off (either option): every slice is read, the rows are the same
    for off in ({"hoodie.enable.data.skipping": "false"}, {"hoodie.metadata.enable": "false"}):
        read.clear()
        assert _sorted(hoodie.read(base, off, filters=filters)).equals(_sorted(unskipped))
        assert {s.file_id for s in read} == {s.file_id for s in latest}


def test_skipping_prunes_files_on_a_real_table(conformance_table: Callable[[str], Path], monkeypatch: pytest.MonkeyPatch) -> None:
    """The exact reproduction: a range filter on a data column reads fewer files."""
    if "sample_table/cow/v9_txns_simple_meta" not in MDT_TABLES:
        pytest.skip("conformance table sample_table/cow/v9_txns_simple_meta not found")
    base = str(conformance_table("sample_table/cow/v9_txns_simple_meta"))
    read = _spy_reads(monkeypatch)
    rows = hoodie.read(base, filters=[("txn_ts", ">=", 1700800000000)])
    assert sorted(rows.column("txn_id").to_pylist()) == ["TXN-017", "TXN-018"]
    assert len(read) == 2 < len(HoodieTable.open(base).local_view().latest_slices_all())


@pytest.mark.parametrize("name", CASES)
def test_read_optimized_and_time_travel_filter_and_skip(conformance_table: Callable[[str], Path], name: str) -> None:
    base = str(conformance_table(name))
    filters = [("amount", ">", Decimal("1000.00"))]
    table = HoodieTable.open(base)
    first = table.timeline.completed_writes()[0].timestamp
    for options in ({"hoodie.datasource.query.type": "read_optimized"}, {"as.of.instant": first}):
        unfiltered = hoodie.read(base, options)
        expected = unfiltered.filter(pc.field("amount") > Decimal("1000.00"))
        assert _sorted(hoodie.read(base, options, filters=filters)).equals(_sorted(expected))


@pytest.mark.parametrize("name", CASES)
def test_a_damaged_metadata_table_is_an_error_not_a_wrong_answer(conformance_table: Callable[[str], Path], name: str, tmp_path: Path) -> None:
    base = tmp_path / "t"
    shutil.copytree(conformance_table(name), base)
    reader = MetadataTableReader(HoodieTable.open(str(base)))
    # every column_stats file group's last log cut short inside what its delta commit wrote
    logs = [Path(s.log_files[-1].path) for s in reader.file_slices("column_stats") if s.log_files]
    if not logs:
        pytest.skip("column_stats has no log files")
    for log in logs:
        log.write_bytes(log.read_bytes()[:-20])
    with pytest.raises(FormatError, match="|".join(log.name for log in logs)):
        hoodie.read(str(base), filters=[("txn_id", "=", "TXN-001")])
    # with skipping off the read does not consult the metadata table
    assert hoodie.read(str(base), {"hoodie.enable.data.skipping": "false"}, filters=[("txn_id", "=", "TXN-001")]).num_rows == 1


def test_filters_on_a_table_without_a_metadata_table_filter_rows(tmp_path: Path) -> None:
    path = str(tmp_path / "t")
    options = {
        "hoodie.table.name": "t",
        "hoodie.datasource.write.recordkey.field": "id",
        "hoodie.datasource.write.partitionpath.field": "p",
        "hoodie.datasource.write.precombine.field": "ts",
    }
    t1 = hoodie.write(pa.table({"id": ["a", "b", "c"], "p": ["x", "y", "x"], "ts": [1, 1, 1], "v": [1.0, 5.0, None]}), path, options)
    hoodie.write(pa.table({"id": ["a"], "p": ["x"], "ts": [2], "v": [7.0]}), path, options)
    assert sorted(hoodie.read(path, filters=[("v", ">", 2.0)]).column("id").to_pylist()) == ["a", "b"]
    assert hoodie.read(path, filters=[("v", "<", 2.0)]).num_rows == 0  # a null never matches
    pulled = hoodie.read(path, {"hoodie.datasource.query.type": "incremental", "hoodie.datasource.read.begin.instanttime": t1}, filters=[("v", ">", 6.0)])
    assert pulled.column("id").to_pylist() == ["a"]
    assert hoodie.read(path, filters=[("v", "is null", None)]).column("id").to_pylist() == ["c"]
    assert sorted(hoodie.read(path, filters=[[("v", "is not null", None), ("v", "<", 6.0)], [("id", "=", "c")]]).column("id").to_pylist()) == ["b", "c"]


@pytest.mark.parametrize(
    ("filters", "error", "names"),
    [
        ([("nope", "=", 1)], SchemaError, "'nope'"),
        ([("v", "~", 1)], ConfigError, "'~'"),
        ([("v", "in", 1)], ConfigError, "'in'"),
        (["v > 1"], ConfigError, "'v > 1'"),
        ("v > 1", ConfigError, "'v > 1'"),
        ([("v", "is null", 1)], ConfigError, "'is null'"),
    ],
)
def test_bad_filters_are_errors_naming_them(tmp_path: Path, filters: Any, error: type[Exception], names: str) -> None:
    path = str(tmp_path / "t")
    hoodie.write(pa.table({"id": ["a"], "v": [1]}), path, {"hoodie.table.name": "t", "hoodie.datasource.write.recordkey.field": "id"})
    with pytest.raises(error, match=names):
        hoodie.read(path, filters=filters)


def _stats(lo: Any, hi: Any, values: int | None = 10, nulls: int | None = 0) -> ColumnStats:
    return ColumnStats("f", "c", lo, hi, values, nulls, None, None)


@pytest.mark.parametrize(
    ("pred", "stats", "may"),
    [
        (("c", "=", 5), _stats(1, 4), False),
        (("c", "=", 4), _stats(1, 4), True),
        (("c", ">", 4), _stats(1, 4), False),
        (("c", ">=", 4), _stats(1, 4), True),
        (("c", "<", 1), _stats(1, 4), False),
        (("c", "<=", 1), _stats(1, 4), True),
        (("c", "!=", 3), _stats(3, 3), False),
        (("c", "!=", 3), _stats(3, 4), True),
        (("c", "in", [0, 9]), _stats(1, 4), False),
        (("c", "in", [0, 2]), _stats(1, 4), True),
        (("c", "not in", [1, 2, 3, 4]), _stats(1, 4), True),
        (("c", "=", 1), _stats(None, None, 5, 5), False),  # only nulls
        (("c", "=", 1), _stats(None, None, None, None), True),  # no bounds
        (("c", "=", "x"), _stats(1, 4), True),  # incomparable types keep the file
        (("c", "=", dt.datetime(2024, 1, 1)), _stats(dt.datetime(2020, 1, 1, tzinfo=dt.timezone.utc), dt.datetime(2021, 1, 1, tzinfo=dt.timezone.utc)), True),
        (("c", "=", None), _stats(1, 4), True),
        (("d", "=", 100), _stats(1, 4), True),  # no statistics of the column
        (("c", "is null", None), _stats(1, 4, 10, 0), False),  # no nulls
        (("c", "is null", None), _stats(1, 4, 10, 2), True),
        (("c", "is null", None), _stats(1, 4, 10, None), True),  # null count unknown
        (("c", "is not null", None), _stats(None, None, 5, 5), False),  # only nulls
        (("c", "is not null", None), _stats(1, 4, 10, 9), True),
    ],
)
def test_which_statistics_rule_a_predicate_out(pred: tuple[str, str, Any], stats: ColumnStats, may: bool) -> None:
    row_filter = RowFilter.of([pred])
    assert row_filter is not None and row_filter.may_match({"c": stats}) is may


def test_a_slice_is_skipped_only_when_its_log_files_rule_the_filter_out_too(
    conformance_table: Callable[[str], Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    if "sample_table/cow/v9_txns_simple_meta" not in MDT_TABLES:
        pytest.skip("conformance table sample_table/cow/v9_txns_simple_meta not found")
    table = HoodieTable.open(str(conformance_table("sample_table/cow/v9_txns_simple_meta")))
    latest = table.local_view().latest_slices_all()
    row_filter = RowFilter.of([("txn_ts", ">=", 1700800000000)])
    assert row_filter is not None
    kept = prune_slices(table, latest, row_filter)
    ruled_out = next(s for s in latest if s not in kept)
    assert ruled_out.base_file is not None
    # the same slice with a log file the metadata table has no statistics of: kept
    name = f".{ruled_out.file_id}_{ruled_out.base_instant}.log.1_0-1-1"
    log = LogFile(ruled_out.base_file.path + ".log", parse_log_file_name(name), 10)
    with_log = dataclasses.replace(ruled_out, log_files=(log,))
    assert prune_slices(table, [with_log], row_filter) == [with_log]
    # ... and skipped when the log file's statistics rule the filter out as well
    original = MetadataTableReader.column_stats_many

    def with_log_stats(self: MetadataTableReader, files: Any, columns: Any) -> dict[tuple[str, str], dict[str, ColumnStats]]:
        out = original(self, list(files), columns)
        out[(ruled_out.partition_path, name)] = {"txn_ts": _stats(1, 2)}
        return out

    monkeypatch.setattr(MetadataTableReader, "column_stats_many", with_log_stats)
    assert prune_slices(table, [with_log], row_filter) == []
