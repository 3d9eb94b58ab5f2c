"""``hoodie read --output FILE``: the rows written to a Parquet, CSV, JSON-lines or Arrow
file, read back equal to ``hoodie.read``; the files it refuses to write; and a failure
part-way leaving no file (nor a damaged old one)."""
from __future__ import annotations

import csv
from collections.abc import Iterator
from pathlib import Path

import pyarrow as pa
import pyarrow.csv as pa_csv
import pyarrow.json as pa_json
import pyarrow.parquet as pq
import pytest

import hoodie
from hoodie.cli import row_files

OPTIONS = {
    "hoodie.table.name": "types",
    "hoodie.datasource.write.recordkey.field": "id",
    "hoodie.datasource.write.partitionpath.field": "p",
    "hoodie.datasource.write.precombine.field": "ts",
}
ROWS = 25  # more than the 20 rows `hoodie read` prints by default
SCALARS = ["id", "p", "ts", "d", "v"]


@pytest.fixture(scope="module")
def types_table(tmp_path_factory: pytest.TempPathFactory) -> str:
    """A table of scalar, nested and null values in two partitions."""
    path = str(tmp_path_factory.mktemp("out") / "types")
    n = range(ROWS)
    data = pa.table(
        {
            "id": pa.array(list(n), pa.int64()),
            "p": ["x" if i % 2 else "y" for i in n],
            "ts": pa.array([1] * ROWS, pa.int64()),
            "d": pa.array([None if i % 5 == 0 else i / 4 for i in n], pa.float64()),
            "v": [None if i % 7 == 0 else f'v{i}, "quoted"' for i in n],
            "s": pa.array([{"a": i, "b": str(i)} if i % 3 else None for i in n], pa.struct([("a", pa.int32()), ("b", pa.string())])),
            "l": pa.array([list(range(i % 4)) for i in n], pa.list_(pa.int32())),
        }
    )
    hoodie.write(data, path, OPTIONS)
    return path


def expected(path: str, columns: list[str] | None = None) -> pa.Table:
    data = hoodie.read(path)
    keep = columns or [c for c in data.column_names if not c.startswith("_hoodie_")]
    return data.select(keep)


def by_id(data: pa.Table) -> list[dict]:
    return data.sort_by("id").to_pylist()


def read_back(file: Path, fmt: str, schema: pa.Schema) -> pa.Table:
    if fmt == "parquet":
        return pq.read_table(file)
    if fmt == "arrow":
        with pa.ipc.open_file(file) as reader:
            return reader.read_all()
    if fmt == "json":
        return pa_json.read_json(file, parse_options=pa_json.ParseOptions(explicit_schema=schema))
    return pa_csv.read_csv(file, convert_options=pa_csv.ConvertOptions(column_types=schema, strings_can_be_null=True))


@pytest.mark.parametrize(
    ("name", "fmt"),
    [("rows.parquet", "parquet"), ("rows.arrow", "arrow"), ("rows.feather", "arrow"), ("rows.jsonl", "json"), ("rows.json", "json"), ("rows.csv", "csv")],
)
def test_each_format_round_trips_to_the_rows_of_hoodie_read(cli, types_table, tmp_path, name, fmt):
    # CSV holds no nested values that read back as such: its round trip is of the scalars
    columns = SCALARS if fmt == "csv" else None
    want = expected(types_table, columns)
    file = tmp_path / name
    args = ["-c", ",".join(columns)] if columns else []
    result = cli("read", types_table, "-o", str(file), *args)
    assert result.exit_code == 0, result.output
    assert result.stdout.strip() == f"wrote {ROWS} rows to {file} ({fmt})"  # every row, not the first 20
    back = read_back(file, fmt, want.schema)
    assert back.schema.equals(want.schema) if fmt in ("parquet", "arrow") else back.column_names == want.column_names
    assert by_id(back) == by_id(want)
    assert [p.name for p in tmp_path.iterdir()] == [name], "no temporary file is left beside it"


def test_format_option_overrides_the_suffix_and_columns_meta_limit_apply(cli, types_table, tmp_path):
    file = tmp_path / "rows.out"
    result = cli("read", types_table, "-o", str(file), "--format", "parquet", "--meta", "--limit", "3")
    assert result.exit_code == 0, result.output
    assert result.stdout.strip() == f"wrote 3 rows (the first of {ROWS}) to {file} (parquet)"
    written = pq.read_table(file)
    whole = hoodie.read(types_table)
    assert written.column_names == whole.column_names  # the meta columns too
    assert written.to_pylist() == whole.slice(0, 3).to_pylist()

    csv_file = tmp_path / "ids.csv"
    assert cli("read", types_table, "-o", str(csv_file), "-c", "v,id").exit_code == 0
    with csv_file.open(newline="") as f:
        lines = list(csv.reader(f))
    assert lines[0] == ["v", "id"] and len(lines) == ROWS + 1
    assert sorted(lines[1:], key=lambda r: int(r[1]))[1] == ['v1, "quoted"', "1"]


@pytest.mark.parametrize(
    ("name", "args", "message"),
    [
        ("rows.txt", [], "unknown file suffix '.txt' of --output {file}"),
        ("rows", [], "unknown file suffix '(none)' of --output {file}"),
        ("missing/rows.csv", [], "folder {parent} of --output {file} does not exist"),
        ("rows.csv", ["--format", "xml"], "unknown format 'xml' for --format with --output"),
    ],
)
def test_refusals_name_the_value(cli, one_line_error, table, tmp_path, name, args, message):
    file = tmp_path / name
    error = one_line_error(cli("read", table.path, "-o", str(file), *args))
    assert error.startswith(message.format(file=file, parent=file.parent)), error
    assert list(tmp_path.iterdir()) == []


def test_an_existing_file_is_kept_unless_force(cli, one_line_error, table, tmp_path):
    file = tmp_path / "rows.jsonl"
    file.write_text("mine\n")
    assert one_line_error(cli("read", table.path, "-o", str(file))) == f"file {file} exists: use --force to replace it"
    assert file.read_text() == "mine\n"
    assert cli("read", table.path, "-o", str(file), "--force").exit_code == 0
    assert sorted(r["id"] for r in pa_json.read_json(file).to_pylist()) == [1, 3, 4, 5]
    assert one_line_error(cli("read", table.path, "--force")) == "--force replaces the file --output names: give --output FILE"
    assert one_line_error(cli("read", table.path, "-f", "parquet")).endswith("(parquet writes a file: give --output FILE)")


@pytest.mark.parametrize("fmt", ["parquet", "csv", "json", "arrow"])
def test_a_failure_part_way_leaves_no_file_and_the_old_one_whole(cli, one_line_error, types_table, tmp_path, monkeypatch, fmt):
    batches = row_files._batches

    def failing(data: pa.Table) -> Iterator[pa.RecordBatch]:
        """The first batch, then the disk is full."""
        for i, batch in enumerate(batches(data)):
            if i == 1:
                raise OSError(28, "No space left on device")
            yield batch

    monkeypatch.setattr(row_files, "_BATCH_ROWS", 10)
    monkeypatch.setattr(row_files, "_batches", failing)
    file = tmp_path / f"rows.{fmt}"
    assert one_line_error(cli("read", types_table, "-o", str(file))) == "No space left on device"
    assert list(tmp_path.iterdir()) == []
    file.write_bytes(b"old")
    assert one_line_error(cli("read", types_table, "-o", str(file), "--force")) == "No space left on device"
    assert [p.name for p in tmp_path.iterdir()] == [file.name] and file.read_bytes() == b"old"


def test_a_failed_read_writes_nothing(cli, one_line_error, own_table, tmp_path):
    read_name = hoodie.read(own_table.path).column("_hoodie_file_name")[0].as_py()  # a file of the latest snapshot
    data_file = next(p for p in Path(own_table.path).rglob("*.parquet") if p.name == read_name)
    data_file.unlink()
    out = tmp_path / "out"
    out.mkdir()
    error = one_line_error(cli("read", own_table.path, "-o", str(out / "rows.parquet")))
    assert data_file.name in error
    assert list(out.iterdir()) == []
