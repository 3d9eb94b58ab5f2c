"""Savepoints: created on a completed commit (named with its time), listing the files of
the latest slices as of it; listed, deleted; refused where Hudi refuses them."""
from __future__ import annotations

import io
import os

import fastavro
import pytest

from hoodie.errors import InstantNotFoundError, TimelineError
from hoodie.services.cleaning import CleanResult, CleanSettings, clean, plan_clean
from hoodie.services.savepoint import (
    create_savepoint,
    delete_savepoint,
    earliest_savepoint,
    list_savepoints,
)
from hoodie.timeline.instant import Action


def test_savepoint_of_the_latest_commit_by_default(mor) -> None:
    t1 = mor.write(["k1", "k2"], ["a", "b"], 1)
    t2 = mor.write(["k1"], "a", 2)  # a log file on a's slice
    sp = create_savepoint(mor.open(), user="ops", comment="nightly")
    assert sp.instant == t2 and sp.savepointed_by == "ops" and sp.comments == "nightly"
    files = {os.path.join(p, n) for p, names in sp.files.items() for n in names}
    assert files == mor.data_files()  # one base file per partition and a's log file
    assert any(".log." in f for f in files)
    names = mor.timeline_files()
    assert f"{t2}.savepoint.inflight" in names and f"{t2}.savepoint" in names
    table = mor.open()
    # the savepoint shares the commit's time; both are on the timeline
    assert [i.action for i in table.timeline.instants if i.timestamp == t2] == [Action.DELTA_COMMIT, Action.SAVEPOINT]
    assert table.timeline.last_completed_write().timestamp == t2
    assert [s.instant for s in list_savepoints(table)] == [t2] and earliest_savepoint(table) == t2
    assert mor.rows() == mor.rs_rows()
    assert t1


def test_savepoint_metadata_is_hudi_avro(cow) -> None:
    t1 = cow.write(["k1"], "a", 1)
    create_savepoint(cow.open(), t1, user="u", comment="c")
    with open(os.path.join(cow.path, ".hoodie", f"{t1}.savepoint"), "rb") as f:
        reader = fastavro.reader(io.BytesIO(f.read()))
        record = next(iter(reader))
    assert reader.writer_schema["name"].endswith("HoodieSavepointMetadata")
    assert record["savepointedBy"] == "u" and record["comments"] == "c" and record["version"] == 1
    assert record["savepointedAt"] > 1_600_000_000_000  # epoch millis, as Java's currentTimeMillis
    [(part, pm)] = record["partitionMetadata"].items()
    assert part == "a" and pm["partitionPath"] == "a" and len(pm["savepointDataFile"]) == 1


def test_savepoint_as_of_an_older_commit_lists_that_view(cow) -> None:
    t1 = cow.write(["k1", "k2"], "a", 1)
    cow.write(["k1"], "a", 2)
    sp = create_savepoint(cow.open(), t1)
    assert [n for names in sp.files.values() for n in names] == [f.split("/")[1] for f in cow.data_files() if f"_{t1}." in f]


def test_refusals(cow) -> None:
    t = [cow.write(["k1"], "a", 1)]
    for ts in range(2, 6):
        t.append(cow.write(["k1"], "a", ts))
    with pytest.raises(InstantNotFoundError, match="not a completed commit"):
        create_savepoint(cow.open(), "20000101000000000")
    create_savepoint(cow.open(), t[3])
    with pytest.raises(TimelineError, match="already savepointed"):
        create_savepoint(cow.open(), t[3])
    assert isinstance(clean(cow.open(), CleanSettings(commits_retained=2)), CleanResult)
    with pytest.raises(TimelineError, match="older than"):
        create_savepoint(cow.open(), t[0])  # its files may be cleaned already
    with pytest.raises(InstantNotFoundError):
        delete_savepoint(cow.open(), t[0])


def test_deleting_a_savepoint_makes_its_files_cleanable(cow) -> None:
    t = [cow.write(["k1", "k2"], ["a", "b"], 1)]
    create_savepoint(cow.open(), t[0])
    for ts in range(2, 6):
        t.append(cow.write(["k1", "k2"], ["a", "b"], ts))
    first = clean(cow.open(), CleanSettings(commits_retained=2))
    assert isinstance(first, CleanResult)
    assert {f for f in cow.data_files() if f"_{t[0]}." in f}  # pinned
    delete_savepoint(cow.open(), t[0])
    assert not [n for n in cow.timeline_files() if "savepoint" in n]
    plan = plan_clean(cow.open(), CleanSettings(commits_retained=2))
    # no commit since the last clean, but the deleted savepoint's files are garbage now
    assert plan.partition_selection == f"all partitions (savepoint {t[0]} was deleted since the clean at {first.instant})"
    assert isinstance(clean(cow.open(), CleanSettings(commits_retained=2)), CleanResult)
    assert not {f for f in cow.data_files() if f"_{t[0]}." in f}
    assert cow.rows() == cow.rs_rows()
