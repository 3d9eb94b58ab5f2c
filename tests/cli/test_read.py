"""``hoodie read``: snapshot, time travel and incremental rows through ``hoodie.read``."""
from __future__ import annotations

import csv
import io
import json

import pyarrow as pa
import pytest

import hoodie


def ids(stdout: str) -> list[int]:
    return sorted(r["id"] for r in json.loads(stdout))


def test_snapshot_as_a_table(cli, table):
    result = cli("read", table.path)
    assert result.exit_code == 0, result.output
    body = [line for line in result.stdout.splitlines() if line.startswith("│")]
    cells = sorted([c.strip() for c in line.strip("│").split("│")] for line in body)
    assert cells == [["1", "a", "2", "X"], ["3", "b", "1", "z"], ["4", "b", "1", "w"], ["5", "b", "2", "N"]]
    header = next(line for line in result.stdout.splitlines() if line.startswith("┃"))
    assert [c.strip() for c in header.strip("┃").split("┃")] == ["id", "p", "ts", "v"]
    assert "4 rows" in result.stdout
    assert "_hoodie_commit_time" not in result.stdout


def test_snapshot_json_matches_hoodie_read(cli, table):
    result = cli("read", table.path, "--format", "json")
    assert result.exit_code == 0
    rows = json.loads(result.stdout)
    expected = hoodie.read(table.path).select(["id", "p", "ts", "v"]).to_pylist()
    assert rows == expected
    assert ids(result.stdout) == [1, 3, 4, 5]


def test_time_travel(cli, table):
    assert ids(cli("read", table.path, "--as-of", table.insert, "-f", "json").stdout) == [1, 2, 3, 4]
    rows = json.loads(cli("read", table.path, "--as-of", table.upsert, "-f", "json").stdout)
    assert sorted((r["id"], r["v"]) for r in rows) == [(1, "X"), (2, "y"), (3, "z"), (4, "w"), (5, "N")]


def test_incremental(cli, table):
    # after the insert: what the upsert wrote (id 1 updated, id 5 inserted)
    out = cli("read", table.path, "--begin", table.insert, "--end", table.upsert, "-f", "json", "--meta").stdout
    rows = json.loads(out)
    assert sorted(r["id"] for r in rows) == [1, 5]
    assert {r["_hoodie_commit_time"] for r in rows} == {table.upsert}
    # from the beginning up to the insert
    assert ids(cli("read", table.path, "--begin", "0", "--end", table.insert, "-f", "json").stdout) == [1, 2, 3, 4]
    # after the delete: nothing (a delete adds no rows to an incremental pull)
    assert json.loads(cli("read", table.path, "--begin", table.delete, "-f", "json").stdout) == []


def test_an_empty_read_says_why(cli, table):
    before = cli("read", table.path, "--as-of", "20000101000000000", "-f", "json")
    assert json.loads(before.stdout) == []
    assert (
        f"note: as.of.instant 20000101000000000 is before the first commit of {table.path} "
        f"(its first commit is {table.insert}, its latest {table.delete}): the read is empty"
    ) in before.stderr.replace("\n", "")
    after = cli("read", table.path, "--begin", table.delete, "-f", "json")
    assert json.loads(after.stdout) == []
    assert (
        f"note: incremental pull from {table.delete} on {table.path}: it begins at or after the latest commit, so nothing was "
        f"committed after it (its first commit is {table.insert}, its latest {table.delete}): the read is empty"
    ) in after.stderr.replace("\n", "")
    assert "the read is empty" not in cli("read", table.path, "--as-of", table.insert, "-f", "json").stderr


def test_columns_limit_and_csv(cli, table):
    result = cli("read", table.path, "--columns", "v,_hoodie_commit_time,id", "--limit", "2", "--format", "csv")
    assert result.exit_code == 0
    rows = list(csv.reader(io.StringIO(result.stdout)))
    assert rows[0] == ["v", "_hoodie_commit_time", "id"]
    assert len(rows) == 3
    assert all(r[1] in (table.insert, table.upsert) for r in rows[1:])
    assert "first 2 of 4 rows" in result.stderr  # the note stays off stdout


def test_limit_zero_prints_everything(cli, table):
    assert len(json.loads(cli("read", table.path, "-n", "0", "-f", "json").stdout)) == 4
    out = cli("read", table.path, "-n", "3").stdout
    assert "first 3 of 4 rows (use --limit 0 for all)" in out


def test_meta_columns(cli, table):
    rows = json.loads(cli("read", table.path, "--meta", "-f", "json").stdout)
    assert list(rows[0])[:5] == [
        "_hoodie_commit_time",
        "_hoodie_commit_seqno",
        "_hoodie_record_key",
        "_hoodie_partition_path",
        "_hoodie_file_name",
    ]


def test_values_of_every_type_in_json_and_csv(cli, tmp_path):
    path = str(tmp_path / "types")
    data = pa.table(
        {
            "id": pa.array([1, 2], pa.int64()),
            "p": ["x", "x"],
            "ts": pa.array([1, 1], pa.int64()),
            "d": pa.array([pa.scalar(1.5).as_py(), None], pa.float64()),
            "s": pa.array([{"a": 1, "b": "q"}, None], pa.struct([("a", pa.int32()), ("b", pa.string())])),
            "l": pa.array([[1, 2], []], pa.list_(pa.int32())),
        }
    )
    hoodie.write(
        data,
        path,
        {
            "hoodie.table.name": "types",
            "hoodie.datasource.write.recordkey.field": "id",
            "hoodie.datasource.write.partitionpath.field": "p",
            "hoodie.datasource.write.precombine.field": "ts",
        },
    )
    rows = sorted(json.loads(cli("read", path, "-f", "json").stdout), key=lambda r: r["id"])
    assert rows == [
        {"id": 1, "p": "x", "ts": 1, "d": 1.5, "s": {"a": 1, "b": "q"}, "l": [1, 2]},
        {"id": 2, "p": "x", "ts": 1, "d": None, "s": None, "l": []},
    ]
    lines = sorted(list(csv.reader(io.StringIO(cli("read", path, "-f", "csv").stdout)))[1:])
    assert lines == [["1", "x", "1", "1.5", '{"a": 1, "b": "q"}', "[1, 2]"], ["2", "x", "1", "", "", "[]"]]
    table_out = cli("read", path).stdout
    assert "null" in table_out and '{"a": 1, "b": "q"}' in table_out


def test_merge_on_read_snapshot_and_read_optimized(cli, conformance_table):
    """A merge-on-read snapshot through the CLI is the merged view hoodie.read gives (and
    differs from the read-optimized one, which skips the logs)."""
    trips = str(conformance_table("quickstart_trips_table/mor/avro/v6_trips_8i1u"))
    columns = ["uuid", "rider", "fare", "city"]
    result = cli("read", trips, "-c", ",".join(columns), "-f", "json")
    assert result.exit_code == 0, result.stderr
    key = lambda r: r["uuid"]  # noqa: E731
    expected = sorted(hoodie.read(trips).select(columns).to_pylist(), key=key)
    assert sorted(json.loads(result.stdout), key=key) == expected
    assert {r["fare"] for r in expected if r["rider"] == "rider-D"} == {25.0}, "the update in the log is merged"
    ro_rows = sorted(hoodie.read(trips, {"hoodie.datasource.query.type": "read_optimized"}).select(columns).to_pylist(), key=key)
    assert ro_rows != expected, "read-optimized skips the log"
    ro_cli = cli("read", trips, "--read-optimized", "-c", ",".join(columns), "-f", "json")
    assert ro_cli.exit_code == 0 and sorted(json.loads(ro_cli.stdout), key=key) == ro_rows
    path = str(conformance_table("sample_table/mor/parquet/v6_complexkeygen_hivestyle"))
    ro = cli("read", path, "--read-optimized", "-c", "id,name", "-f", "json")
    assert ro.exit_code == 0
    assert sorted(r["id"] for r in json.loads(ro.stdout)) == [1, 2, 3, 4]


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--end", "20240101000000000"], "--end 20240101000000000 needs --begin"),
        (["--as-of", "20240101", "--begin", "0"], "--as-of 20240101 cannot be combined with --begin 0"),
        (["--begin", "20240102", "--end", "20240101"], "--begin 20240102 is after --end 20240101"),
        (["--read-optimized", "--begin", "0"], "--read-optimized cannot be combined with --begin 0"),
        (["--as-of", "yesterday"], "invalid instant 'yesterday' for --as-of"),
        (["--begin", "2024-13-01"], "invalid instant '2024-13-01' for --begin: not a valid date and time"),
        (["--format", "xml"], "unknown format 'xml' for --format"),
        (["--limit", "-1"], "invalid value -1 for --limit"),
        (["--columns", "id,nope"], "unknown column 'nope' for --columns"),
        (["--columns", " , "], "invalid value ' , ' for --columns"),
    ],
)
def test_bad_options(cli, table, args, message):
    result = cli("read", table.path, *args)
    assert result.exit_code == 1
    assert message in result.stderr
    assert len(result.stderr.strip().splitlines()) == 1
    assert result.stdout == ""
