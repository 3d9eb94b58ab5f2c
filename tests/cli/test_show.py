"""``hoodie show``: configuration, file groups and slices, totals."""
from __future__ import annotations

import json
import re
from pathlib import Path

import hoodie


def test_config_and_file_groups(cli, table):
    result = cli("show", table.path)
    assert result.exit_code == 0, result.output
    out = result.stdout
    for label, value in [
        ("Name", "t"),
        ("Type", "COPY_ON_WRITE"),
        ("Version", "6"),
        ("Record key", "id"),
        ("Partition fields", "p"),
        ("Precombine field", "ts"),
        ("Key generator", "org.apache.hudi.keygen.SimpleKeyGenerator"),
        ("Base file format", "PARQUET"),
    ]:
        assert re.search(rf"│ {label} +│ {re.escape(value)} +│", out), label
    # other properties, and the schema
    assert re.search(r"│ hoodie.populate.meta.fields +│ true +│", out)
    assert re.search(r"│ ts +│ int64 +│ yes +│", out)

    # every slice of every file group, with its base file
    view = hoodie.HoodieTable.open(table.path).view()
    for partition in ("a", "b"):
        assert f"Partition {partition}" in out
        for group in view.file_groups(partition):
            assert group.file_id in out
            for s in group.slices:
                assert re.search(rf"│ {s.base_instant} +│ {re.escape(s.base_file.file_name)} +│", out)
    # partition a: one group with a slice per commit; b: untouched by the delete
    assert "1 file group(s), 3 slice(s), 0 log file(s)" in out
    assert "1 file group(s), 2 slice(s), 0 log file(s)" in out
    assert "Total: 2 partition(s), 2 file group(s), 5 slice(s), 5 base file(s), 0 log file(s)" in out


def test_json(cli, table):
    result = cli("show", table.path, "--json")
    assert result.exit_code == 0
    doc = json.loads(result.stdout)
    assert doc["config"] == {
        "name": "t",
        "type": "COPY_ON_WRITE",
        "version": 6,
        "record_key_fields": ["id"],
        "partition_fields": ["p"],
        "precombine_field": "ts",
        "key_generator": "org.apache.hudi.keygen.SimpleKeyGenerator",
        "base_file_format": "PARQUET",
    }
    assert doc["properties"]["hoodie.table.name"] == "t"
    assert [f["name"] for f in doc["schema"]] == ["id", "p", "ts", "v"]
    parts = {p["partition"]: p for p in doc["partitions"]}
    assert sorted(parts) == ["a", "b"]
    (group_a,) = parts["a"]["file_groups"]
    assert [s["base_instant"] for s in group_a["slices"]] == [table.insert, table.upsert, table.delete]
    sizes = [Path(table.path, "a", s["base_file"]).stat().st_size for s in group_a["slices"]]
    assert [s["base_file_size"] for s in group_a["slices"]] == sizes
    assert [s["total_size"] for s in group_a["slices"]] == sizes
    assert parts["a"]["totals"] == {
        "file_groups": 1,
        "slices": 3,
        "base_files": 3,
        "log_files": 0,
        "bytes": sum(sizes),
        "latest_bytes": sizes[-1],
    }
    assert doc["totals"]["slices"] == 5
    assert doc["totals"]["bytes"] == parts["a"]["totals"]["bytes"] + parts["b"]["totals"]["bytes"]


def test_one_partition(cli, table):
    doc = json.loads(cli("show", table.path, "--partition", "b", "--json").stdout)
    assert [p["partition"] for p in doc["partitions"]] == ["b"]
    out = cli("show", table.path, "-p", "b").stdout
    assert "Partition b" in out and "Partition a" not in out


def test_as_of_hides_later_slices(cli, table):
    doc = json.loads(cli("show", table.path, "--as-of", table.upsert, "--json").stdout)
    assert doc["as_of"] == table.upsert
    slices = {p["partition"]: [s["base_instant"] for g in p["file_groups"] for s in g["slices"]] for p in doc["partitions"]}
    assert slices == {"a": [table.insert, table.upsert], "b": [table.insert, table.upsert]}
    out = cli("show", table.path, "--as-of", table.insert).stdout
    assert f"Table t as of {table.insert}" in out
    assert table.upsert not in out


def test_as_of_before_the_first_commit_notes_it(cli, table):
    result = cli("show", table.path, "--as-of", "2000-01-01", "--json")
    assert result.exit_code == 0
    doc = json.loads(result.stdout)
    assert doc["as_of"] == "20000101000000000"
    assert doc["totals"]["file_groups"] == 0
    assert (
        f"note: as.of.instant 20000101000000000 is before the first commit of {table.path} "
        f"(its first commit is {table.insert}, its latest {table.delete}): the table as of then holds no file group"
    ) in result.stderr.replace("\n", "")


def test_unknown_partition(cli, table):
    result = cli("show", table.path, "--partition", "zz")
    assert result.exit_code == 1
    assert "no partition 'zz' in table t" in result.stderr
    assert "'a', 'b'" in result.stderr
    assert result.stdout == ""


def test_merge_on_read_slices_count_their_log_files(cli, conformance_table):
    path = str(conformance_table("sample_table/mor/parquet/v6_complexkeygen_hivestyle"))
    doc = json.loads(cli("show", path, "--json").stdout)
    assert doc["config"]["type"] == "MERGE_ON_READ"
    assert doc["config"]["partition_fields"] == ["byteField", "shortField"]
    part = {p["partition"]: p for p in doc["partitions"]}["byteField=10/shortField=300"]
    (group,) = part["file_groups"]
    (slice_,) = group["slices"]
    assert len(slice_["log_files"]) == 1 and slice_["log_files"][0].startswith(f".{group['file_id']}_")
    assert slice_["total_size"] > slice_["base_file_size"]
    assert part["totals"]["log_files"] == 1
    out = cli("show", path, "-p", "byteField=10/shortField=300").stdout
    assert "1 file group(s), 1 slice(s), 1 log file(s)" in out


def test_non_partitioned(cli, conformance_table):
    path = str(conformance_table("sample_table/mor/avro/v9_nonpartitioned_rollback"))
    result = cli("show", path)
    assert result.exit_code == 0
    assert "Partition (non-partitioned)" in result.stdout
    assert "Total: 1 partition(s), 2 file group(s)" in result.stdout
