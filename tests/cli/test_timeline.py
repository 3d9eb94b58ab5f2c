"""``hoodie timeline``: instants, states and write statistics."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from hoodie.table.table import HoodieTable


def row(output: str, instant: str) -> list[str]:
    """The cells of the table row of ``instant``."""
    lines = [line for line in output.splitlines() if instant in line]
    assert len(lines) == 1, output
    return [c.strip() for c in lines[0].strip("│┃ ").split("│")]


def test_lists_each_commit_with_its_counts(cli, table):
    result = cli("timeline", table.path)
    assert result.exit_code == 0, result.output
    #               instant, action, state, operation, written, inserted, updated, deleted, files
    assert row(result.stdout, table.insert)[:9] == [table.insert, "commit", "COMPLETED", "UPSERT", "4", "4", "0", "0", "2"]
    assert row(result.stdout, table.upsert)[:9] == [table.upsert, "commit", "COMPLETED", "UPSERT", "5", "1", "1", "0", "2"]
    assert row(result.stdout, table.delete)[:9] == [table.delete, "commit", "COMPLETED", "DELETE", "1", "0", "0", "1", "1"]
    assert "Timeline of t (COPY_ON_WRITE, v6)" in result.stdout
    # v6 tables record no completion time: no column for it
    assert "Completed" not in result.stdout
    # oldest first
    out = result.stdout
    assert out.index(table.insert) < out.index(table.upsert) < out.index(table.delete)


def test_json(cli, table):
    result = cli("timeline", table.path, "--json")
    assert result.exit_code == 0
    rows = json.loads(result.stdout)
    assert [r["instant"] for r in rows] == [table.insert, table.upsert, table.delete]
    assert rows[1] == {
        "instant": table.upsert,
        "action": "commit",
        "state": "COMPLETED",
        "completion_time": None,
        "operation": "UPSERT",
        "files": 2,
        "writes": 5,
        "inserts": 1,
        "updates": 1,
        "deletes": 0,
        "bytes": rows[1]["bytes"],
        "storage_calls": rows[1]["storage_calls"],
    }
    assert rows[1]["bytes"] > 0
    assert set(rows[1]["storage_calls"]) == {"list", "read", "write", "exists", "delete"}
    assert rows[2]["deletes"] == 1


def test_limit_keeps_the_newest(cli, table):
    result = cli("timeline", table.path, "--limit", "2")
    assert result.exit_code == 0
    assert table.insert not in result.stdout
    assert table.upsert in result.stdout and table.delete in result.stdout
    assert "1 older row(s) left out by --limit" in result.stdout
    rows = json.loads(cli("timeline", table.path, "-n", "1", "--json").stdout)
    assert [r["instant"] for r in rows] == [table.delete]


def test_pending_instants_are_hidden_by_default_and_shown_with_all(cli, own_table):
    pending = HoodieTable.open(own_table.path).timeline.new_instant_time()
    hoodie_dir = Path(own_table.path) / ".hoodie"
    (hoodie_dir / f"{pending}.commit.requested").write_bytes(b"")
    (hoodie_dir / f"{pending}.inflight").write_bytes(b"")

    default = cli("timeline", own_table.path)
    assert default.exit_code == 0
    assert pending not in default.stdout
    assert "not shown: 1 inflight commit (use --all)" in default.stdout

    everything = cli("timeline", own_table.path, "--all")
    assert everything.exit_code == 0
    cells = row(everything.stdout, pending)
    assert cells[:3] == [pending, "commit", "INFLIGHT"]
    assert not any(cells[3:])  # no statistics for a pending write
    assert "not shown" not in everything.stdout

    rows = json.loads(cli("timeline", own_table.path, "--all", "--json").stdout)
    assert rows[-1]["instant"] == pending and rows[-1]["state"] == "INFLIGHT" and rows[-1]["writes"] is None


def test_unreadable_commit_metadata_is_shown_not_fatal(cli, own_table):
    (Path(own_table.path) / ".hoodie" / f"{own_table.upsert}.commit").write_text("{not json")
    result = cli("timeline", own_table.path)
    assert result.exit_code == 0
    assert "unreadable" in row(result.stdout, own_table.upsert)[3]
    assert row(result.stdout, own_table.delete)[3] == "DELETE"
    rows = json.loads(cli("timeline", own_table.path, "--json").stdout)
    assert "cannot be decoded" in rows[1]["error"]


def test_empty_table(cli, conformance_table):
    path = str(conformance_table("sample_table/cow/v6_empty"))
    result = cli("timeline", path)
    assert result.exit_code == 0
    assert "No instants to show" in result.stdout
    assert json.loads(cli("timeline", path, "--json").stdout) == []


def test_v9_table_shows_completion_times_and_rollbacks_with_all(cli, conformance_table):
    path = str(conformance_table("sample_table/mor/avro/v9_nonpartitioned_rollback"))
    default = cli("timeline", path)
    assert default.exit_code == 0
    assert "Completed" in default.stdout
    assert "rollback" not in row_lines(default.stdout)
    assert "not shown: 1 completed rollback (use --all)" in default.stdout

    rows = json.loads(cli("timeline", path, "--all", "--json").stdout)
    assert [r["action"] for r in rows] == ["deltacommit", "rollback", "deltacommit"]
    assert all(r["completion_time"] and r["completion_time"] > r["instant"] for r in rows)
    assert rows[0]["inserts"] == 3 and rows[2]["inserts"] == 1
    assert rows[1]["operation"] is None


def row_lines(output: str) -> str:
    return "\n".join(line for line in output.splitlines() if line.startswith("│"))


@pytest.mark.parametrize("limit", ["0", "-3"])
def test_bad_limit(cli, table, limit):
    result = cli("timeline", table.path, "--limit", limit)
    assert result.exit_code == 1
    assert f"invalid value {limit} for --limit" in result.stderr


def test_calls_show_what_each_write_cost_in_storage_calls(cli, table):
    result = cli("timeline", table.path, "--calls")
    assert result.exit_code == 0, result.output
    for header in ("Lists", "Reads", "Writes", "Exists", "Deletes"):
        assert header in result.stdout
    recorded = {r["instant"]: r["storage_calls"] for r in json.loads(cli("timeline", table.path, "--json").stdout)}
    for instant, calls in recorded.items():
        cells = row(result.stdout, instant)[-5:]
        assert cells == [f"{calls[k]:,}" for k in ("list", "read", "write", "exists", "delete")], result.stdout
        assert calls["list"] >= 1 and calls["write"] >= 1  # the timeline listed; markers (at least) written
    assert "storage calls of each write up to its commit" in result.stdout
    assert "Lists" not in cli("timeline", table.path).stdout
