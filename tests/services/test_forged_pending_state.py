"""Forged pending state deletes nothing committed: markers of a pending (or committing)
instant that name another commit's files, rollback plans aimed at completed commits or at
files their target did not write, restore plans to no savepoint, and clean plans naming
files of latest, savepointed or retained slices. A rollback, restore, clean or commit only
ever deletes what its own rules allow; the rest is left alone with a warning naming it
(or, for a restore, refused with an error), and every committed file stays byte for byte
as it was, on copy-on-write and merge-on-read tables alike."""
from __future__ import annotations

import logging
from collections.abc import Callable
from pathlib import Path

import pytest
from hostile_paths import tree_state
from table_options import KEY_PART_OPTIONS, key_part_batch

import hoodie
from hoodie.errors import TimelineError
from hoodie.layout import marker_name, parse_base_file_name, parse_log_file_name
from hoodie.markers import DirectMarkers, ServerClient, TimelineServerMarkers
from hoodie.markers.timeline_based import MARKERS_TYPE_FILE, TIMELINE_SERVER_BASED, markers_file_name, render_markers
from hoodie.services.cleaning import CleanSettings, clean, plan_clean, run_clean
from hoodie.services.restore import restore_to
from hoodie.services.rollback import rollback_failed_writes
from hoodie.services.savepoint import create_savepoint, list_savepoints
from hoodie.storage.local import LocalStorage
from hoodie.table.table import HoodieTable
from hoodie.timeline import avro_metadata as avro
from hoodie.timeline.instant import Instant, State
from hoodie.timeline_server import TimelineServer

OPTIONS = KEY_PART_OPTIONS

batch = key_part_batch


class Table:
    """A table of three commits over partition ``p``: an insert, then two upserts (new base
    files on copy-on-write, log files on merge-on-read)."""

    def __init__(self, root: Path, table_type: str) -> None:
        self.path = root / "t"
        self.table_type = table_type
        self.commits = [self.write(["k1", "k2"], 1), self.write(["k1"], 2), self.write(["k2"], 3)]

    def write(self, keys: list[str], ts: int) -> str:
        opts = {**OPTIONS, "hoodie.table.name": "t", "hoodie.datasource.write.table.type": self.table_type}
        return hoodie.write(batch(keys, ts), str(self.path), opts)

    def open(self) -> HoodieTable:
        return HoodieTable.open(str(self.path))

    def rows(self) -> list[tuple[str, int]]:
        return sorted((r["key"], r["ts"]) for r in hoodie.read(str(self.path)).to_pylist())

    def data_files(self) -> dict[str, tuple[int, str]]:
        """Every file outside ``.hoodie`` with its size and digest."""
        return {k: v for k, v in tree_state(self.path).items() if not k.startswith(".hoodie") and not k.endswith("/")}

    def committed_names(self) -> list[str]:
        """Names of the base and log files in partition ``p``."""
        return sorted(k.split("/", 1)[1] for k in self.data_files() if k.startswith("p/") and (parse_base_file_name(k[2:]) or parse_log_file_name(k[2:])))

    def leave_pending(self) -> str:
        """A write instant left requested and inflight, as by a writer killed at its start."""
        instant = self.open().timeline.new_instant_time()
        action = "commit" if self.table_type == "COPY_ON_WRITE" else "deltacommit"
        meta = self.path / ".hoodie"
        for state in (State.REQUESTED, State.INFLIGHT):
            (meta / Instant(instant, action, state).file_name(1)).write_bytes(b"")
        return instant

    def marker_dir(self, instant: str) -> Path:
        return self.path / ".hoodie" / ".temp" / instant


@pytest.fixture(params=["COPY_ON_WRITE", "MERGE_ON_READ"], ids=["cow", "mor"])
def table(tmp_path: Path, request: pytest.FixtureRequest) -> Table:
    return Table(tmp_path, request.param)


def forged_marker_names(table: Table) -> list[str]:
    """Marker names (relative to a marker folder) for every committed data file, of every
    kind: CREATE and MERGE naming the file, APPEND in Hudi 1.x's style (naming a log file)
    and in 0.x's (naming the slice by a placeholder base file carrying the log's token)."""
    names = []
    for name in table.committed_names():
        names += [marker_name("p", name, "CREATE"), marker_name("p", name, "MERGE"), marker_name("p", name, "APPEND")]
        log_file = parse_log_file_name(name)
        if log_file is not None:
            placeholder = f"{log_file.file_id}_{log_file.write_token}_{log_file.instant}.parquet"
            names.append(marker_name("p", placeholder, "APPEND"))
    return names


def write_direct(table: Table, instant: str, names: list[str]) -> None:
    for name in names:
        path = table.marker_dir(instant) / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(b"")


def write_markers_file(table: Table, instant: str, names: list[str]) -> None:
    folder = table.marker_dir(instant)
    folder.mkdir(parents=True, exist_ok=True)
    (folder / MARKERS_TYPE_FILE).write_text(TIMELINE_SERVER_BASED)
    (folder / markers_file_name(0)).write_bytes(render_markers(names))


def ask_the_server(table: Table, instant: str, names: list[str]) -> None:
    """Anyone holding the token asks the timeline server for the markers."""
    with TimelineServer() as server:
        server.add_table(str(table.path))
        markers = TimelineServerMarkers(LocalStorage(), str(table.path), instant, ServerClient(server.address))
        for name in names:
            partition, rest = name.split("/", 1)
            data_file, io_type = rest.rsplit(".marker.", 1)
            markers.create(partition, data_file, io_type)


Forger = Callable[[Table, str, list[str]], None]
FORGERS: dict[str, Forger] = {"direct": write_direct, "markers-file": write_markers_file, "server": ask_the_server}


@pytest.mark.parametrize("forge", FORGERS.values(), ids=FORGERS.keys())
def test_markers_of_a_failed_write_naming_committed_files_delete_nothing(table: Table, forge: Forger, caplog: pytest.LogCaptureFixture) -> None:
    rows, before = table.rows(), table.data_files()
    failed = table.leave_pending()
    forge(table, failed, forged_marker_names(table))
    with caplog.at_level(logging.WARNING, logger="hoodie"):
        results = rollback_failed_writes(table.open())
    assert [r.rolled_back for r in results] == [failed] and results[0].deleted_files == ()
    assert table.data_files() == before
    assert table.rows() == rows
    assert "which that instant did not write" in caplog.text
    # the exact reproduction: the next ordinary write rolls the failed one back and reads stay whole
    failed = table.leave_pending()
    forge(table, failed, forged_marker_names(table))
    table.write(["k3"], 4)
    assert table.rows() == sorted([*rows, ("k3", 4)])
    assert not table.open().timeline.pending()


def test_a_marker_added_to_a_committing_write_deletes_no_committed_file(table: Table, monkeypatch: pytest.MonkeyPatch) -> None:
    rows, before = table.rows(), table.data_files()
    forged = forged_marker_names(table)
    real = DirectMarkers.delete_unaccepted

    def forge_then_delete(self: DirectMarkers, *args: object, **kwargs: object) -> None:
        write_direct(table, self.instant, forged)
        real(self, *args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(DirectMarkers, "delete_unaccepted", forge_then_delete)
    table.write(["k4"], 5)
    after = table.data_files()
    assert {k: after[k] for k in before} == before
    assert table.rows() == sorted([*rows, ("k4", 5)])


def test_unaccepted_files_named_by_a_completed_commit_are_kept(table: Table) -> None:
    """Even a file whose name carries the committing instant is kept when a completed
    commit's metadata names it (forged metadata must not turn the commit into a delete)."""
    table_ = table.open()
    victim = next(n for n in table.committed_names() if (parse_base_file_name(n) or parse_log_file_name(n)).instant == table.commits[0])  # type: ignore[union-attr]
    markers = DirectMarkers(table_.storage, table_.base_path, table.commits[0])
    write_direct(table, table.commits[0], [marker_name("p", victim, "CREATE")])
    before = table.data_files()
    markers.delete_unaccepted([], table_.local_view().partition_files, lambda: {f"p/{victim}"})
    assert table.data_files() == before


def rollback_plan(table: Table, target: str, action: str, files: list[str]) -> None:
    instant = table.open().timeline.new_instant_time()
    plan = {
        "instantToRollback": {"commitTime": target, "action": action},
        "RollbackRequests": [{"partitionPath": "p", "fileId": None, "latestBaseInstant": None, "filesToBeDeleted": files, "logBlocksToBeDeleted": {}}],
        "version": 1,
    }
    (table.path / ".hoodie" / f"{instant}.rollback.requested").write_bytes(avro.encode(avro.ROLLBACK_PLAN, plan))


def test_a_rollback_plan_aimed_at_a_completed_commit_deletes_nothing(table: Table, caplog: pytest.LogCaptureFixture) -> None:
    rows, before = table.rows(), table.data_files()
    action = "commit" if table.table_type == "COPY_ON_WRITE" else "deltacommit"
    rollback_plan(table, table.commits[-1], action, [str(table.path / "p" / n) for n in table.committed_names()])
    with caplog.at_level(logging.WARNING, logger="hoodie"):
        table.write(["k5"], 6)
    assert f"aimed at {table.commits[-1]}, a completed instant: ignored" in caplog.text
    after = table.data_files()
    assert {k: after[k] for k in before} == before
    assert table.rows() == sorted([*rows, ("k5", 6)])


def test_a_rollback_plan_deletes_only_files_its_target_wrote(table: Table, caplog: pytest.LogCaptureFixture) -> None:
    rows, before = table.rows(), table.data_files()
    failed = table.leave_pending()
    own = table.path / "p" / f"00000000-0000-0000-0000-000000000000-0_0-1-0_{failed}.parquet"
    own.write_bytes(b"a partial file of the failed write")
    action = "commit" if table.table_type == "COPY_ON_WRITE" else "deltacommit"
    rollback_plan(table, failed, action, [str(table.path / "p" / n) for n in table.committed_names()] + [str(own)])
    with caplog.at_level(logging.WARNING, logger="hoodie"):
        results = rollback_failed_writes(table.open())
    assert [r.rolled_back for r in results] == [failed] and results[0].deleted_files == (str(own),)
    assert f"which {failed} did not write: left alone" in caplog.text
    assert table.data_files() == before and table.rows() == rows


def restore_plan(table: Table, savepoint: str, undo: list[str]) -> str:
    instant = table.open().timeline.new_instant_time()
    action = "commit" if table.table_type == "COPY_ON_WRITE" else "deltacommit"
    plan = {"instantsToRollback": [{"commitTime": t, "action": action} for t in undo], "version": 2, "savepointToRestoreTimestamp": savepoint}
    (table.path / ".hoodie" / f"{instant}.restore.requested").write_bytes(avro.encode(avro.RESTORE_PLAN, plan))
    return instant


def test_a_restore_plan_to_no_savepoint_is_refused_and_undoes_nothing(table: Table) -> None:
    rows, before = table.rows(), table.data_files()
    restore = restore_plan(table, table.commits[0], list(reversed(table.commits)))
    for attempt in (lambda: table.write(["k6"], 7), lambda: restore_to(table.open(), table.commits[0])):
        with pytest.raises(TimelineError, match=f"restore {restore} .* goes to {table.commits[0]}, which is not a savepoint"):
            attempt()
    assert table.data_files() == before and table.rows() == rows


def test_a_restore_plan_undoing_what_its_savepoint_keeps_is_refused(table: Table) -> None:
    create_savepoint(table.open(), table.commits[1])
    rows, before = table.rows(), table.data_files()
    restore_plan(table, table.commits[1], list(reversed(table.commits)))
    with pytest.raises(TimelineError, match=f"would undo .* {table.commits[1]}, which a restore to it keeps"):
        table.write(["k6"], 7)
    assert table.data_files() == before and table.rows() == rows


def test_a_restore_to_a_savepoint_whose_metadata_is_refused_is_refused(table: Table) -> None:
    create_savepoint(table.open(), table.commits[1])
    savepoint = table.path / ".hoodie" / f"{table.commits[1]}.savepoint"
    doc = avro.decode(savepoint.read_bytes(), "savepoint")
    doc["partitionMetadata"] = {"../../elsewhere": {"partitionPath": "../../elsewhere", "savepointDataFile": ["x.parquet"]}}
    savepoint.write_bytes(avro.encode(avro.SAVEPOINT_METADATA, doc))
    before = table.data_files()
    with pytest.raises(Exception, match=f"savepoint {table.commits[1]}") as info:
        plan_clean(table.open(), CleanSettings(commits_retained=1))
    with pytest.raises(type(info.value), match=f"savepoint {table.commits[1]}"):
        restore_to(table.open(), table.commits[1])
    assert table.data_files() == before
    assert not list((table.path / ".hoodie").glob("*.restore*"))


def clean_plan(table: Table, files: list[str], earliest: str | None) -> str:
    instant = table.open().timeline.new_instant_time()
    plan = {
        "earliestInstantToRetain": {"timestamp": earliest, "action": "commit", "state": "COMPLETED"} if earliest else None,
        "lastCompletedCommitTimestamp": table.commits[-1], "policy": "KEEP_LATEST_COMMITS",
        "filesToBeDeletedPerPartition": None, "version": 2, "partitionsToBeDeleted": [], "extraMetadata": {},
        "filePathsToBeDeletedPerPartition": {"p": [{"filePath": f, "isBootstrapBaseFile": False} for f in files]},
    }
    (table.path / ".hoodie" / f"{instant}.clean.requested").write_bytes(avro.encode(avro.CLEANER_PLAN, plan))
    return instant


def latest_slice_files(table: Table) -> list[str]:
    view = table.open().view()
    return [p for s in view.latest_slices("p") for p in ([s.base_file.path] if s.base_file else []) + [lf.path for lf in s.log_files]]


@pytest.mark.parametrize("earliest", ["none", "future", "latest"])
def test_a_clean_plan_naming_latest_slices_deletes_nothing(table: Table, earliest: str, caplog: pytest.LogCaptureFixture) -> None:
    rows, before = table.rows(), table.data_files()
    boundary = {"none": None, "future": "99991231235959999", "latest": table.commits[-1]}[earliest]
    instant = clean_plan(table, latest_slice_files(table), boundary)
    with caplog.at_level(logging.WARNING, logger="hoodie"):
        result = clean(table.open(), CleanSettings(commits_retained=1))
    assert result.instant == instant and result.total_deleted == 0  # type: ignore[union-attr]
    assert "which no clean may delete now" in caplog.text
    assert table.data_files() == before and table.rows() == rows


def test_a_clean_plan_keeps_savepointed_and_retained_slices(table: Table) -> None:
    table.write(["k1", "k2"], 8)  # every slice of p has a newer one now (copy-on-write)
    create_savepoint(table.open(), table.commits[0])
    before = table.data_files()
    every_file = [str(table.path / k) for k in before]
    clean_plan(table, every_file, table.commits[-1])
    result = run_clean(table.open(), settings=CleanSettings(commits_retained=2))
    kept = {str(table.path / k) for k in table.data_files()}
    assert set(latest_slice_files(table)) <= kept  # latest slices
    savepointed = list_savepoints(table.open())[0].file_names()
    assert all(any(k.endswith(n) for k in kept) for n in savepointed)
    # what the running settings (two commits retained) still read is kept too
    for rows_at in table.open().timeline.completed_writes()[-2:]:
        assert hoodie.read(str(table.path), {"as.of.instant": rows_at.timestamp}).num_rows > 0
    assert result.total_deleted == len(before) - len(kept)
