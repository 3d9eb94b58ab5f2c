"""Writers killed (SIGKILL, in a child process) at each step of keeping a metadata table
with all four partitions (issue 29): while each partition is initialised (after some of
its files are written; after its delta commit, before ``hoodie.table.metadata.partitions``
names it), after the metadata table's delta commit and before the data commit, in the
middle of the metadata table's compaction and of its clean, while it is deleted to drop a
partition a write no longer enables. After each, readers are
correct at the last data commit (``hoodie.read``, the metadata table's reader on the
partitions the table names complete, a view listing through the metadata table, checked
against storage), and the next writer repairs: ``validate`` then finds no difference in
any of the four partitions."""
from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
from pathlib import Path

import pyarrow as pa
import pytest

import hoodie
from hoodie.metadata_table.listing import MetadataListing, listed_through_metadata
from hoodie.metadata_table.settings import PARTITION_ORDER
from hoodie.metadata_table.validate import validate_metadata_table
from hoodie.table.table import HoodieTable
from hoodie.timeline.instant import Action

ON = {
    "hoodie.table.name": "crash",
    "hoodie.datasource.write.recordkey.field": "id",
    "hoodie.datasource.write.partitionpath.field": "p",
    "hoodie.datasource.write.precombine.field": "ts",
    "hoodie.metadata.enable": "true",
    "hoodie.metadata.index.column.stats.enable": "true",
    "hoodie.metadata.index.bloom.filter.enable": "true",
    "hoodie.metadata.record.index.enable": "true",
    "hoodie.metadata.compact.max.delta.commits": "2",
    "hoodie.metadata.cleaner.commits.retained": "1",
    "hoodie.cleaner.commits.retained": "1",
}

# The child writes one batch with its options, killing itself where ``mode`` says.
CHILD = textwrap.dedent(
    """
    import os, signal, sys
    import pyarrow as pa
    import hoodie
    from hoodie.metadata_table import compaction, writer
    from hoodie.services import cleaning
    from hoodie.storage.local import LocalStorage
    from hoodie.timeline.active import ActiveTimeline

    path, opts, mode, arg, start, ts = sys.argv[1], eval(sys.argv[2]), sys.argv[3], sys.argv[4], int(sys.argv[5]), int(sys.argv[6])

    def die():
        os.kill(os.getpid(), signal.SIGKILL)

    if mode == "init-files":  # some files of partition ``arg`` written, not all
        real_create = LocalStorage.create_new
        written = []

        def create_new(self, target, data, durable=True):
            folder, name = os.path.split(target)
            if folder.endswith("/.hoodie/metadata/" + arg) and not name.startswith(".hoodie_partition"):
                if written:
                    die()
                written.append(name)
            return real_create(self, target, data, durable)

        LocalStorage.create_new = create_new
    elif mode == "init-named":  # partition ``arg``'s delta commit done, not yet named complete
        real_state = writer.set_partition_state

        def set_partition_state(table, complete, inflight):
            if arg in complete and not inflight:
                die()
            return real_state(table, complete, inflight)

        writer.set_partition_state = set_partition_state
    elif mode == "between":  # the metadata delta commit completed, the data commit not
        real_timeline_create = ActiveTimeline._create

        def timeline_create(self, instant, content):
            if instant.is_completed and "/metadata" not in self.base_path and instant.action == arg:
                die()
            return real_timeline_create(self, instant, content)

        ActiveTimeline._create = timeline_create
    elif mode == "mdt-compaction":  # one slice compacted into its new base file, not the rest
        real_slice = compaction._compact_slice
        slices = []

        def compact_slice(*args, **kwargs):
            if slices:
                die()
            slices.append(1)
            return real_slice(*args, **kwargs)

        compaction._compact_slice = compact_slice
    elif mode == "mdt-clean":  # one of the metadata table's old files deleted, not the rest
        real_delete = cleaning._delete_partition_files

        def delete_files(task, ctx):
            if "/.hoodie/metadata/" in task.paths[0]:
                task.storage.delete(task.paths[0])
                die()
            return real_delete(task, ctx)

        cleaning._delete_partition_files = delete_files
    elif mode == "drop":  # the metadata table being deleted to drop partition ``arg``: half its folder gone
        import shutil
        real_delete_dir = LocalStorage.delete_dir

        def delete_dir(self, target):
            if target.rstrip("/").endswith("/.hoodie/metadata"):
                shutil.rmtree(os.path.join(target, arg))
                die()
            return real_delete_dir(self, target)

        LocalStorage.delete_dir = delete_dir
    rows = [{"id": f"k{n:03d}", "p": f"p{n % 3}", "ts": ts, "v": n * ts} for n in range(start, start + 12)]
    hoodie.write(pa.Table.from_pylist(rows), path, opts)
    print("NOT KILLED")
    """
)


def _rows(start: int, ts: int) -> dict[str, int]:
    return {f"k{n:03d}": n * ts for n in range(start, start + 12)}


def _write(path: Path, start: int, ts: int, opts: dict[str, str]) -> None:
    rows = [{"id": k, "p": f"p{int(k[1:]) % 3}", "ts": ts, "v": v} for k, v in _rows(start, ts).items()]
    hoodie.write(pa.Table.from_pylist(rows), str(path), opts)


def _child(path: Path, opts: dict[str, str], mode: str, arg: str, start: int, ts: int) -> bool:
    """Run the child; True when it was killed, False when it wrote without reaching the
    point it dies at."""
    args = [sys.executable, "-c", CHILD, str(path), repr(opts), mode, arg, str(start), str(ts)]
    done = subprocess.run(args, capture_output=True, text=True, env=os.environ.copy(), timeout=300)
    if done.returncode == 0 and "NOT KILLED" in done.stdout:
        return False
    assert done.returncode == -signal.SIGKILL, done.stderr
    return True


def _readers_correct(path: Path, model: dict[str, int]) -> tuple[str, ...]:
    """Readers see the last data commit; the metadata partitions the table names complete
    equal the data; a view listing through the metadata table equals storage. The
    partitions named complete."""
    rows = hoodie.read(str(path)).select(["id", "v"]).to_pylist()
    assert {r["id"]: r["v"] for r in rows} == model and len(rows) == len(model)
    table = HoodieTable.open(str(path))
    complete = table.config.metadata_partitions
    if complete:
        report = validate_metadata_table(table)
        assert sorted(report.checks) == sorted(complete)
        assert report.ok, "\n".join(map(str, report.differences[:20]))
        # every answer of a view listing through the metadata table is compared with storage
        view = listed_through_metadata(table, MetadataListing(validate=True)).local_view()
        storage = table.storage_view()
        assert view.all_partition_paths() == storage.all_partition_paths()
        for partition in view.all_partition_paths():
            listed = {s.base_file.file_name for s in view.latest_slices(partition) if s.base_file}
            assert listed == {s.base_file.file_name for s in storage.latest_slices(partition) if s.base_file}
    return complete


def _repaired(path: Path, model: dict[str, int], opts: dict[str, str], ts: int) -> None:
    """The next writer leaves all four partitions complete and equal to the data."""
    _write(path, 100, ts, opts)
    model.update(_rows(100, ts))
    assert sorted(_readers_correct(path, model)) == sorted(PARTITION_ORDER)
    table = HoodieTable.open(str(path))
    assert not table.timeline.pending() and table.config.props["hoodie.table.metadata.partitions.inflight"] == ""
    mdt = HoodieTable.open(str(path / ".hoodie" / "metadata"))
    assert not mdt.timeline.pending(), mdt.timeline.pending()


@pytest.mark.parametrize("partition", PARTITION_ORDER)
@pytest.mark.parametrize("mode", ["init-files", "init-named"])
def test_killed_while_initialising_a_partition(tmp_path: Path, mode: str, partition: str) -> None:
    path = tmp_path / "t"
    opts = {**ON, "hoodie.datasource.write.table.type": "MERGE_ON_READ"}
    model: dict[str, int] = {}
    for start, ts in ((0, 1), (6, 2)):  # a table written without a metadata table
        _write(path, start, ts, {**opts, "hoodie.metadata.enable": "false"})
        model.update(_rows(start, ts))
    assert _child(path, opts, mode, partition, 20, 3)
    table = HoodieTable.open(str(path))
    assert partition not in table.config.metadata_partitions
    assert not table.timeline.pending()  # the data write had not started
    done = _readers_correct(path, model)
    assert set(done) == set(PARTITION_ORDER[: PARTITION_ORDER.index(partition)])
    _repaired(path, model, opts, 4)


@pytest.mark.parametrize(
    ("table_type", "action"),
    [("COPY_ON_WRITE", "commit"), ("MERGE_ON_READ", "deltacommit"), ("MERGE_ON_READ", "compaction"), ("COPY_ON_WRITE", "clean")],
    ids=["cow-write", "mor-write", "mor-inline-compaction", "cow-inline-clean"],
)
def test_killed_after_the_metadata_delta_commit_before_the_data_commit(tmp_path: Path, table_type: str, action: str) -> None:
    """Killed as the data instant of ``action`` completes, its metadata delta commit done:
    the write's own commit (rolled back by the next writer in both tables), or that of the
    compaction or clean the write runs after committing (finished by the next writer)."""
    path = tmp_path / "t"
    opts = {**ON, "hoodie.datasource.write.table.type": table_type, "hoodie.compact.inline": "true", "hoodie.compact.inline.max.delta.commits": "1"}
    model: dict[str, int] = {}
    for ts in (1, 2):  # the same keys: updates (log files on merge-on-read), files to clean
        _write(path, 0, ts, opts)
        model.update(_rows(0, ts))
    assert _child(path, opts, "between", action, 0, 3)
    table = HoodieTable.open(str(path))
    [pending] = table.timeline.pending()
    assert pending.action == action
    written = pending.action in (Action.COMPACTION, Action.CLEAN)  # the write itself committed
    if written:
        model.update(_rows(0, 3))
    mdt = HoodieTable.open(str(path / ".hoodie" / "metadata"))
    assert pending.timestamp in {i.timestamp for i in mdt.timeline.completed([Action.DELTA_COMMIT])}
    assert sorted(_readers_correct(path, model)) == sorted(PARTITION_ORDER)
    _repaired(path, model, opts, 4)
    table = HoodieTable.open(str(path))
    mdt_instants = {i.timestamp for i in HoodieTable.open(str(mdt.base_path)).timeline.completed()}
    if written:  # finished, in both tables
        assert table.timeline.get(pending.timestamp).is_completed and pending.timestamp in mdt_instants
    else:  # rolled back, in both tables
        assert not table.timeline.contains(pending.timestamp) and pending.timestamp not in mdt_instants


@pytest.mark.parametrize("mode", ["mdt-compaction", "mdt-clean"])
def test_killed_in_the_metadata_tables_own_services(tmp_path: Path, mode: str) -> None:
    """Killed after the data commit, in the services the write runs after it: the write
    is committed and readers see it; the metadata table's pending compaction (or clean)
    is invisible to them and finished or redone by the next writer."""
    path = tmp_path / "t"
    # the metadata table cleans three instants after a compaction (as Apache Hudi's does),
    # keeping 1.2 x the data table's versions: two
    opts = {
        **ON, "hoodie.datasource.write.table.type": "MERGE_ON_READ", "hoodie.metadata.compact.max.delta.commits": "3",
        "hoodie.cleaner.policy": "KEEP_LATEST_FILE_VERSIONS", "hoodie.cleaner.fileversions.retained": "1",
    }
    _write(path, 0, 1, opts)
    model = _rows(0, 1)
    for ts in range(2, 12):  # until a write runs the service the child dies in
        killed = _child(path, opts, mode, "", ts * 4, ts)
        model.update(_rows(ts * 4, ts))  # the data commit completed before the services ran
        if killed:
            break
    else:
        pytest.fail(f"no write reached {mode}")
    mdt = HoodieTable.open(str(path / ".hoodie" / "metadata"))
    action = Action.COMPACTION if mode == "mdt-compaction" else Action.CLEAN
    assert [i.action for i in mdt.timeline.pending()] == [action]
    assert sorted(_readers_correct(path, model)) == sorted(PARTITION_ORDER)
    _repaired(path, model, opts, 20)
    if mode == "mdt-compaction":
        assert HoodieTable.open(str(mdt.base_path)).timeline.completed([Action.COMMIT])
    else:
        assert HoodieTable.open(str(mdt.base_path)).timeline.completed([Action.CLEAN])


@pytest.mark.parametrize("partition", ["column_stats", "files"])
def test_killed_while_the_metadata_table_is_deleted_to_drop_a_partition(tmp_path: Path, partition: str) -> None:
    """A write with ``column_stats`` off deletes the metadata table to build it again
    without it; killed with its folder half deleted (``partition`` gone, the rest there):
    the table no longer names any metadata partition, readers read the data, and the next
    writer builds the partitions its options enable."""
    path = tmp_path / "t"
    opts = {**ON, "hoodie.datasource.write.table.type": "MERGE_ON_READ"}
    _write(path, 0, 1, opts)
    model = _rows(0, 1)
    off = {**opts, "hoodie.metadata.index.column.stats.enable": "false"}
    assert _child(path, off, "drop", partition, 6, 2)
    assert (path / ".hoodie" / "metadata").is_dir() and not (path / ".hoodie" / "metadata" / partition).exists()
    assert _readers_correct(path, model) == ()
    _write(path, 6, 3, off)
    model.update(_rows(6, 3))
    assert sorted(_readers_correct(path, model)) == sorted(set(PARTITION_ORDER) - {"column_stats"})
    _repaired(path, model, opts, 4)
