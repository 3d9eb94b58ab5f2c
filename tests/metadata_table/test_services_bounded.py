"""The metadata table's files stay bounded whatever the data table keeps: with a small
``hoodie.keep.min.commits`` (the data table's archival) its archival would keep fewer
commits than its cleaner retains (at least 20), so that cleaner never ran and every
compaction's base files and every log stayed. Its archival now keeps at least one more
commit than the cleaner retains; the cleaner runs, the file count levels off, and the data
table's retained instants still read the same through it as through storage."""
from __future__ import annotations

import os
from pathlib import Path

import pyarrow as pa
import pytest
from mdt_checks import check_files

import hoodie
from hoodie.config.options import HoodieConfig
from hoodie.layout import InstantTime
from hoodie.metadata_table import MetadataTableReader
from hoodie.metadata_table.services import MetadataServiceSettings
from hoodie.table.table import HoodieTable
from hoodie.timeline.instant import Action

SMALL = {"hoodie.keep.min.commits": "2", "hoodie.keep.max.commits": "3", "hoodie.cleaner.commits.retained": "1"}


def _files(path: Path) -> int:
    """Every file of the metadata table's partitions (its timeline left out)."""
    mdt = path / ".hoodie" / "metadata"
    return sum(len(names) for folder, _, names in os.walk(mdt) if ".hoodie" not in Path(folder).relative_to(mdt).parts)


@pytest.mark.parametrize("table_type", ["COPY_ON_WRITE", "MERGE_ON_READ"])
def test_a_small_keep_min_commits_leaves_the_metadata_table_bounded(tmp_path: Path, table_type: str) -> None:
    path = tmp_path / "t"
    options = {
        "hoodie.table.name": "t", "hoodie.datasource.write.recordkey.field": "id", "hoodie.datasource.write.partitionpath.field": "p",
        "hoodie.datasource.write.precombine.field": "ts", "hoodie.datasource.write.table.type": table_type, **SMALL,
    }
    counts = []
    for i in range(60):
        hoodie.write(pa.table({"id": [i % 7, 100 + i], "p": ["a", "b"], "ts": [i, i]}), str(path), options)
        if i % 10 == 9:
            counts.append(_files(path))
    # (before: 22, 44, 66, ... one more log per delta commit, never cleaned)
    assert max(counts[2:]) <= counts[1], counts
    table = HoodieTable.open(str(path))
    mdt = HoodieTable.open(str(path / ".hoodie" / "metadata"))
    assert mdt.timeline.completed([Action.CLEAN]) and mdt.timeline.completed([Action.COMMIT])
    # the cleaner kept what it retains: at least 20 commits on the metadata table's timeline
    assert len(mdt.timeline.completed([Action.DELTA_COMMIT, Action.COMMIT])) > 20
    check_files(MetadataTableReader(table), table)
    # every instant the data table's cleaner retains reads the same through its metadata table
    last_clean = table.timeline.completed([Action.CLEAN])[-1]
    retained = InstantTime(table.timeline.clean_metadata(last_clean).earliest_commit_to_retain)
    readable = [i for i in table.timeline.completed(Action.WRITE_ACTIONS) if i.time >= retained]
    assert readable
    for instant in readable:
        listed = {"as.of.instant": instant.timestamp}
        through = hoodie.read(str(path), listed).sort_by("id")
        storage = hoodie.read(str(path), {**listed, "hoodie.metadata.enable": "false"}).sort_by("id")
        assert through.equals(storage), instant


def test_the_archival_window_stays_above_what_the_cleaner_retains() -> None:
    small = MetadataServiceSettings.of(HoodieConfig.of(SMALL))
    assert small.clean.commits_retained == 20
    assert (small.archive.min_commits, small.archive.max_commits) == (21, 22)
    # Apache Hudi's derivation where it already leaves the cleaner room
    default = MetadataServiceSettings.of(HoodieConfig.of({}))
    assert (default.clean.commits_retained, default.archive.min_commits, default.archive.max_commits) == (20, 21, 31)
    wide = MetadataServiceSettings.of(HoodieConfig.of({"hoodie.keep.min.commits": "40", "hoodie.keep.max.commits": "50"}))
    assert (wide.archive.min_commits, wide.archive.max_commits) == (41, 51)
    # the other policies count no commits: the data table's bounds, plus one
    versions = MetadataServiceSettings.of(HoodieConfig.of({**SMALL, "hoodie.cleaner.policy": "KEEP_LATEST_FILE_VERSIONS"}))
    assert (versions.archive.min_commits, versions.archive.max_commits) == (3, 4)
