"""``hoodie validate`` checks the files of archived commits too: in a partition written
only by commits that archival moved to ``.hoodie/archived``, a lost latest file (reads
would return the older version) or a lost partition folder (its rows would vanish) is
reported missing, naming the file and the archived instant that wrote it, and the
command fails. A healthy table with an archived history passes."""
from __future__ import annotations

import json
import shutil
from pathlib import Path

import pyarrow as pa
import pytest

import hoodie
from hoodie import HoodieTable
from hoodie.table.archived import archived_commits, read_archived_instants
from hoodie.table.validate import validate_table

BASE = {
    "hoodie.table.name": "t",
    "hoodie.datasource.write.recordkey.field": "id",
    "hoodie.datasource.write.partitionpath.field": "p",
    "hoodie.datasource.write.precombine.field": "ts",
    "hoodie.index.bloom.num_entries": "500",
    # archival forced early: above 3 completed commits, down to 2
    "hoodie.keep.min.commits": "2",
    "hoodie.keep.max.commits": "3",
    # no metadata table: it would hold archival back until it compacts (after 10 writes)
    "hoodie.metadata.enable": "false",
}
# no clean keeps the older slice readable (reads fall back to it); an inline clean that
# retains one commit removes it (the file group's rows then vanish)
CLEANING = {
    "no-clean": {"hoodie.clean.automatic": "false"},
    "clean-retaining-one": {"hoodie.cleaner.commits.retained": "1"},
}


def _archived_partition(path: Path, table_type: str, cleaning: str) -> tuple[str, str]:
    """Partition ``old`` written by two commits (an insert, then an update of it), then
    four commits to partition ``new``, so that archival moves both of ``old``'s commits.
    Returns (the update's instant, the file it wrote in ``old``)."""
    opts = {**BASE, **CLEANING[cleaning], "hoodie.datasource.write.table.type": table_type}
    base = str(path)
    hoodie.write(pa.table({"id": [1, 2], "p": ["old", "old"], "ts": [1, 1]}), base, opts)
    update = hoodie.write(pa.table({"id": [1], "p": ["old"], "ts": [2]}), base, opts)
    for ts in range(3, 7):
        hoodie.write(pa.table({"id": [10 + ts], "p": ["new"], "ts": [ts]}), base, opts)
    table = HoodieTable.open(base)
    assert {i.timestamp for i in table.timeline.completed_writes()}.isdisjoint({update}), "the update is archived"
    assert update in {i.timestamp for i in read_archived_instants(table)}
    (stat,) = [s for inst, meta in archived_commits(table) if inst.timestamp == update for s in meta.write_stats()]
    return update, stat.path


@pytest.fixture(params=["COPY_ON_WRITE", "MERGE_ON_READ"], ids=["cow", "mor"])
def table_type(request: pytest.FixtureRequest) -> str:
    return request.param


@pytest.mark.parametrize("cleaning", list(CLEANING))
def test_a_lost_latest_file_of_archived_commits_fails_validate(tmp_path: Path, cli, table_type: str, cleaning: str) -> None:
    path = tmp_path / "t"
    update, written = _archived_partition(path, table_type, cleaning)
    assert validate_table(HoodieTable.open(str(path))).ok
    (path / written).unlink()  # copy-on-write: the latest base file; merge-on-read: the update's log
    report = validate_table(HoodieTable.open(str(path)))
    assert [(p.partition_path, p.file_name, p.instant, p.kind) for p in report.problems] == [("old", Path(written).name, update, "missing")]
    result = cli("validate", str(path), "--json")
    assert result.exit_code == 1, result.output
    [problem] = json.loads(result.stdout)["problems"]
    assert (problem["file_name"], problem["instant"], problem["kind"]) == (Path(written).name, update, "missing")
    human = cli("validate", str(path))
    assert human.exit_code == 1 and Path(written).name in human.stdout


@pytest.mark.parametrize("cleaning", list(CLEANING))
def test_a_lost_partition_of_archived_commits_fails_validate(tmp_path: Path, cli, table_type: str, cleaning: str) -> None:
    path = tmp_path / "t"
    _, written = _archived_partition(path, table_type, cleaning)
    table = HoodieTable.open(str(path))
    written_in_old = {Path(s.path).name for _, meta in archived_commits(table) for s in meta.write_stats() if s.partitionPath == "old"}
    shutil.rmtree(path / "old")
    report = validate_table(table.reload())
    # the file group's latest base file (under a lost base, its logs are not listed again)
    names = {p.file_name for p in report.problems}
    assert {(p.partition_path, p.kind) for p in report.problems} == {("old", "missing")} and names and names <= written_in_old
    if table_type == "COPY_ON_WRITE":
        assert names == {Path(written).name}
    result = cli("validate", str(path))
    assert result.exit_code == 1 and all(name in result.stdout for name in names), result.output


def test_archived_commits_as_of_an_instant(tmp_path: Path) -> None:
    path = tmp_path / "t"
    _, written = _archived_partition(path, "COPY_ON_WRITE", "no-clean")
    table = HoodieTable.open(str(path))
    first = read_archived_instants(table)[0].timestamp
    assert [i.timestamp for i, _ in archived_commits(table, as_of=first)] == [first]
    (path / written).unlink()
    # as of the first commit, the update had not happened: nothing it wrote is needed
    assert validate_table(table, as_of=first).ok
    assert not validate_table(table).ok
