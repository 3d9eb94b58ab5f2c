"""``hoodie archive [--dry-run]`` on real tables."""
from __future__ import annotations

import json
import re

import hoodie
from hoodie.services.archival import read_archived_instants

KEEP = ["-o", "hoodie.keep.min.commits=2", "-o", "hoodie.keep.max.commits=3"]


def _active(path: str) -> list[str]:
    return [i.timestamp for i in hoodie.HoodieTable.open(path).timeline.instants]


def test_dry_run_lists_what_would_move(cli, cow_without_mdt):
    cow = cow_without_mdt
    result = cli("archive", cow.path, "--dry-run", *KEEP)
    assert result.exit_code == 0, result.output
    assert result.stdout.splitlines()[0] == "Would archive 3 instant(s) of t: 3 of 5 completed commits (keeping 2)"
    for instant in cow.commits[:3]:
        assert re.search(rf"│ {instant} │ commit │ COMPLETED │", result.stdout)
    assert _active(cow.path) == cow.commits
    doc = json.loads(cli("archive", cow.path, "--dry-run", "--json", *KEEP).stdout)
    assert doc == {
        "dry_run": True,
        "would_run": True,
        "reason": "3 of 5 completed commits (keeping 2)",
        "instants": [{"instant": t, "action": "commit", "state": "COMPLETED"} for t in cow.commits[:3]],
    }


def test_archive_moves_the_instants(cli, cow_without_mdt, rows):
    cow = cow_without_mdt
    before = rows(cow.path)
    result = cli("archive", cow.path, *KEEP)
    assert result.exit_code == 0, result.output
    assert result.stdout.splitlines()[0] == (
        "Archived 3 instant(s) of t into .commits_.archive.1_1-0-1 (9 record(s)): 3 of 5 completed commits (keeping 2)"
    )
    table = hoodie.HoodieTable.open(cow.path)
    assert [i.timestamp for i in read_archived_instants(table)] == cow.commits[:3]
    assert _active(cow.path) == cow.commits[3:]
    assert rows(cow.path) == before

    again = cli("archive", cow.path, "--json", *KEEP)
    assert json.loads(again.stdout) == {"ran": False, "reason": "2 completed commits on the active timeline; archival starts above 3"}


def test_nothing_to_archive_with_the_defaults(cli, cow):
    result = cli("archive", cow.path)
    assert result.exit_code == 0
    assert result.stdout.strip() == "Nothing archived in t: 5 completed commits on the active timeline; archival starts above 30"
    dry = cli("archive", cow.path, "--dry-run")
    assert dry.stdout.strip() == "Nothing to archive in t: 5 completed commits on the active timeline; archival starts above 30"


def test_a_savepoint_stops_archival(cli, cow_without_mdt):
    cow = cow_without_mdt
    assert cli("savepoint", "create", cow.path, "--instant", cow.commits[1]).exit_code == 0
    result = cli("archive", cow.path, *KEEP)
    assert result.exit_code == 0
    assert result.stdout.splitlines()[0].endswith(
        f"1 of 5 completed commits (keeping 2), stopped before {cow.commits[1]}: savepoint {cow.commits[1]}"
    )
    assert _active(cow.path)[0] == cow.commits[1]


def test_the_metadata_table_holds_archival_back_until_it_compacts(cli, cow):
    """A table keeping a metadata table (the default) archives nothing its metadata table
    has not compacted past, as Apache Hudi: its delta commits since its last compaction
    need the data instants they mirror on the active timeline."""
    result = cli("archive", cow.path, *KEEP)
    assert result.exit_code == 0, result.output
    assert result.stdout.strip() == (
        f"Nothing archived in t: 5 completed commits, but the oldest, {cow.commits[0]}, must stay: the metadata table has not compacted yet"
    )
    assert _active(cow.path) == cow.commits


def test_invalid_settings(cli, cow, one_line_error):
    message = one_line_error(cli("archive", cow.path, "-o", "hoodie.keep.min.commits=40"))
    assert message == "hoodie.keep.max.commits (30) must be greater than hoodie.keep.min.commits (40)"
    assert one_line_error(cli("archive", cow.path, "-o", "hoodie.keep.max.comits=4")).startswith("unknown option hoodie.keep.max.comits")
    assert _active(cow.path) == cow.commits
