"""Model-based test on merge-on-read tables with table services interleaved at random:
writes (upserts, deletes, inserts), compaction, cleaning, archival, savepoints and
restores, with the bloom and the simple index.

The model keeps every version each write gave a record (``History``): the snapshot is the
event-time merge of them (the stored record wins when an update carries a smaller ordering
value; a delete of the delete operation always wins), and an incremental pull over
``(begin, end]`` is what :mod:`hoodie.query.incremental` defines on a v6 table (as
Apache Hudi reads it): the file groups are read as their latest slice as of ``end``, and
only what the range committed is merged — the base file's version of a key when it was
committed after ``begin``, then the versions the slice's logs hold — so an update that
lost the snapshot merge to an older, larger ordering value comes back, whether or not a
compaction rewrote that older version into a newer base file.

Which file group holds a key and which instants wrote a group's base files (a new group,
a small file merged with inserts, a compaction) are layout decisions of the writer: the
test observes them (the snapshot's file names, the commits' write stats) and models the
merges.

After every step the snapshot (through hoodie and hudi-rs) equals the model; after every
write, incremental pulls from earlier completed commits of the active timeline to the
latest one, and single-commit ranges the cleaner still retains, equal the model, while
pulls starting before the archived boundary raise ``InstantNotFoundError``. Every run must
really compact, clean, archive, savepoint and restore.
"""
from __future__ import annotations

import os
import random
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pyarrow as pa
import pytest
from modeling import Model, model_options, random_batch, table_rows, to_arrow

import hoodie
from hoodie.errors import InstantNotFoundError, TimelineError
from hoodie.layout import InstantTime, parse_base_file_name
from hoodie.services.archival import ArchiveResult, ArchiveSettings, archive, read_archived_instants
from hoodie.services.clean_plan import CleanSettings
from hoodie.services.cleaning import CleanResult, clean
from hoodie.services.compaction import (
    UNBOUNDED_STRATEGY,
    CompactionSettings,
    pending_compactions,
    run_compaction,
    schedule_compaction,
)
from hoodie.services.restore import RestoreResult, restore_to
from hoodie.services.savepoint import create_savepoint, delete_savepoint, list_savepoints
from hoodie.table.table import HoodieTable
from hoodie.timeline.instant import Action

Key = tuple[str, str]
Row = dict[str, Any]
Version = tuple[str, Row | None]  # (instant, row); None: deleted by the delete operation

SEEDS = [int(s) for s in os.environ.get("HOODIE_MODEL_SEEDS", "1,2").split(",")]
SERVICES = ("compact", "clean", "archive", "savepoint", "restore")
FIRST_WRITES = 5  # then ROUNDS rounds of writes with every service once, in random order
ROUNDS = 3
CLEAN = CleanSettings(commits_retained=2)
ARCHIVE = ArchiveSettings(min_commits=2, max_commits=4)


def later(a: str, b: str) -> bool:
    return InstantTime(a) > InstantTime(b)


def fold(versions: list[Version]) -> tuple[str, Row] | None:
    """The surviving version of a key from its versions, oldest first: event-time ordering,
    ties to the newer version; a delete (of the delete operation: default ordering) always
    wins. No version ever follows a delete (the test never writes a deleted key again): a
    base row would then beat a smaller re-insert from the logs, so the result would depend
    on the layout."""
    won: tuple[str, Row] | None = None
    for instant, row in versions:
        if row is None:
            won = None
        elif won is None or won[1]["ts"] <= row["ts"]:
            won = (instant, row)
    return won


def dedupe(rows: list[Row]) -> dict[Key, Row]:
    """A batch pre-combined: per key the largest ordering value, the later row on ties."""
    out: dict[Key, Row] = {}
    for row in rows:
        key = (row["city"], row["uuid"])
        if key not in out or out[key]["ts"] <= row["ts"]:
            out[key] = row
    return out


@dataclass
class History:
    """Every version of every record, plus the layout facts incremental pulls depend on."""

    versions: dict[Key, list[Version]] = field(default_factory=dict)
    group: dict[Key, str] = field(default_factory=dict)  # key -> file id (a key never moves)
    bases: dict[str, list[str]] = field(default_factory=dict)  # file id -> base file instants

    def record_write(self, instant: str, op: str, rows: list[Row], live: set[Key]) -> None:
        if op == "delete":
            for row in rows:
                key = (row["city"], row["uuid"])
                if key in live:  # a key never written is dropped by the index
                    self.versions[key].append((instant, None))
            return
        for key, row in dedupe(rows).items():
            vs = self.versions.setdefault(key, [])
            assert not vs or vs[-1][1] is not None, f"test bug: {key} written again after its delete"
            vs.append((instant, row))

    def record_base(self, file_id: str, instant: str) -> None:
        self.bases.setdefault(file_id, []).append(instant)

    def rows(self) -> dict[Key, Row]:
        return {k: won[1] for k, vs in self.versions.items() if (won := fold(vs)) is not None}

    def undo_after(self, savepoint: str) -> None:
        """A restore to ``savepoint``: every write and compaction after it is gone."""
        kept = {k: [v for v in vs if not later(v[0], savepoint)] for k, vs in self.versions.items()}
        self.versions = {k: vs for k, vs in kept.items() if vs}
        self.bases = {g: [t for t in ts if not later(t, savepoint)] for g, ts in self.bases.items()}

    def incremental(self, begin: str, end: str) -> dict[Key, tuple[str, Row]]:
        """Key -> (commit time, row) an incremental pull over (begin, end] returns."""
        out: dict[Key, tuple[str, Row]] = {}
        for key, vs in self.versions.items():
            base = max((t for t in self.bases[self.group[key]] if not later(t, end)), key=InstantTime, default="0")
            # the latest slice as of end: its base file's version of the key (the merge of
            # the versions up to the base file), merged only when committed in the range,
            # then the versions of its logs, which are all in the range
            stored = fold([v for v in vs if not later(v[0], base)])
            merged = [stored] if stored is not None and later(stored[0], begin) else []
            won = fold(merged + [v for v in vs if later(v[0], max(base, begin, key=InstantTime)) and not later(v[0], end)])
            if won is not None:
                out[key] = won
        return out


def schedule(rng: random.Random) -> list[str]:
    """The run's actions: a few writes, then rounds of 4-6 writes with each service at a
    random place among them, except that archival comes before the savepoint (which would
    block it) and the savepoint before the restore, with a write in between (so that the
    restore undoes something)."""
    actions = ["write"] * FIRST_WRITES
    for _ in range(ROUNDS):
        round_ = ["write"] * rng.randint(4, 6) + list(SERVICES) + ["compact"]
        rng.shuffle(round_)
        ordered = iter(["archive", "savepoint", "restore"])
        round_ = [next(ordered) if a in ("archive", "savepoint", "restore") else a for a in round_]
        sp, rs = round_.index("savepoint"), round_.index("restore")
        if "write" not in round_[sp:rs]:
            round_.insert(rs, "write")
        actions += round_
    return actions


def hudi_rs_rows(path: str) -> dict:
    from hudi import HudiTableBuilder

    batches = HudiTableBuilder.from_base_uri(path).build().read()
    return table_rows(pa.Table.from_batches(batches)) if batches else {}


def pull(path: str, begin: str, end: str) -> pa.Table:
    return hoodie.read(path, {
        "hoodie.datasource.query.type": "incremental",
        "hoodie.datasource.read.begin.instanttime": begin,
        "hoodie.datasource.read.end.instanttime": end,
    })


def _diff(got: dict, want: dict) -> str:
    missing = sorted(set(want) - set(got))
    extra = sorted(set(got) - set(want))
    wrong = sorted(k for k in set(got) & set(want) if got[k] != want[k])
    sample = [(k, got[k], want[k]) for k in wrong[:2]]
    return f"{len(missing)} missing {missing[:3]}, {len(extra)} extra {extra[:3]}, {len(wrong)} differ {sample}"


def check_pull(path: str, history: History, begin: str, end: str, archived: set[str], what: str) -> None:
    if begin in archived or (begin == "0" and archived):
        with pytest.raises(InstantNotFoundError, match="are archived"):
            pull(path, begin, end)
        return
    got = pull(path, begin, end)
    rows = table_rows(got)
    expected = history.incremental(begin, end)
    assert got.num_rows == len(rows), f"{what}: duplicate keys in the pull of ({begin}, {end}]"
    want = {k: row for k, (_, row) in expected.items()}
    assert rows == want, f"{what}: pull of ({begin}, {end}]: {_diff(rows, want)}"
    times = {(r["city"], r["uuid"]): r["_hoodie_commit_time"] for r in got.to_pylist()}
    assert times == {k: t for k, (t, _) in expected.items()}, f"{what}: commit times of the pull of ({begin}, {end}]"


def observe_layout(path: str, instant: str, snapshot: pa.Table, history: History) -> None:
    """The file group of each key (the snapshot's file names) and the base files the write
    created (its write stats)."""
    for r in snapshot.select(["city", "uuid", "_hoodie_file_name"]).to_pylist():
        name = r["_hoodie_file_name"]
        parsed = parse_base_file_name(name)
        file_id = parsed.file_id if parsed else name  # log records name their file id
        key = (r["city"], r["uuid"])
        assert history.group.setdefault(key, file_id) == file_id, f"{key} moved to file group {file_id}"
    table = HoodieTable.open(path)
    for stat in table.commit_metadata(table.timeline.get(instant)).write_stats():
        if stat.path.endswith(".parquet"):
            history.record_base(stat.fileId, instant)


@dataclass
class Run:
    path: str
    rng: random.Random
    opts: dict[str, str]
    model: Model = field(default_factory=Model)
    history: History = field(default_factory=History)
    next_id: list[int] = field(default_factory=lambda: [0])
    counts: Counter = field(default_factory=Counter)
    archived: set[str] = field(default_factory=set)  # archived write instants
    clean_floor: str = "0"  # views older than a clean's earliest commit to retain may be gone
    last_clean_retains: str = "0"  # the last clean's earliest commit to retain
    steps: list[str] = field(default_factory=list)

    def table(self) -> HoodieTable:
        return HoodieTable.open(self.path)

    def write(self, step: int) -> None:
        # an update's ordering value is smaller than, equal to or larger than the stored one's
        rng = self.rng
        op, rows = random_batch(
            rng, self.model, self.next_id, max_updates=30, max_inserts=60,
            update_ts=lambda stored: max(1, stored + rng.choice([-rng.randint(1, 200), 0, rng.randint(1, 200)])),
            insert_ts=lambda: rng.randint(1000, 2000),
        )
        live = set(self.model.rows)
        self.model.apply(op, rows)
        instant = hoodie.write(to_arrow(rows), self.path, {**self.opts, "hoodie.datasource.write.operation": op})
        self.history.record_write(instant, op, rows, live)
        assert self.history.rows() == self.model.rows, "test bug: the history and the model disagree"
        what = f"step {step} ({op}) after {self.steps}"
        snapshot = self.check_snapshot(what)
        observe_layout(self.path, instant, snapshot, self.history)
        self.check_pulls(instant, what)

    def check_pulls(self, end: str, what: str) -> None:
        """Pulls up to ``end`` from the previous commit, from two more earlier commits of the
        active timeline (delta commits or compactions), and from the start (refused once
        instants are archived, as is a pull from the last archived commit); and the pull of
        one earlier single commit."""
        commits = [i.timestamp for i in self.table().timeline.completed_writes()]
        earlier = [t for t in commits if later(end, t)]
        if not earlier:
            return
        begins = [earlier[-1], *self.rng.sample(earlier, min(len(earlier), 2)), "0"]
        if self.archived:
            begins.append(max(self.archived, key=InstantTime))  # just before the active timeline
        for begin in dict.fromkeys(begins):
            check_pull(self.path, self.history, begin, end, self.archived, what)
        # a single commit, as it stood then (the cleaner keeps the views from clean_floor on)
        pairs = [(a, b) for a, b in zip(earlier, earlier[1:]) if not later(self.clean_floor, b)]
        if pairs:
            begin, single = self.rng.choice(pairs)
            check_pull(self.path, self.history, begin, single, self.archived, what)

    def compact(self) -> None:
        table = self.table()
        pending = pending_compactions(table)
        if pending and self.rng.random() < 0.6:
            instant = pending[0][0].timestamp
        else:
            instant, _ = schedule_compaction(table, CompactionSettings(strategy=UNBOUNDED_STRATEGY), require_threshold=False)
            if instant is None or (self.counts["compact"] and self.rng.random() < 0.3):
                return  # nothing to compact, or left pending: writers keep appending around it
        metadata = run_compaction(self.table(), instant)
        stats = metadata.write_stats()
        assert stats and all(s.path.endswith(f"_{instant}.parquet") for s in stats), f"compaction {instant} wrote {stats}"
        for s in stats:
            self.history.record_base(s.fileId, instant)
        assert instant in {i.timestamp for i in self.table().timeline.completed_writes()}
        self.counts["compact"] += 1

    def clean(self) -> None:
        result = clean(self.table(), CLEAN)
        if not isinstance(result, CleanResult):
            return
        assert result.total_deleted > 0 and not any(result.failed.values()), result
        for partition, names in result.deleted.items():
            for name in names:
                assert not os.path.exists(os.path.join(self.path, partition, os.path.basename(name))), f"clean left {name}"
        self.last_clean_retains = result.earliest_commit_to_retain
        if later(result.earliest_commit_to_retain, self.clean_floor):
            self.clean_floor = result.earliest_commit_to_retain
        self.counts["clean"] += 1

    def archive(self) -> None:
        table = self.table()
        settings = ARCHIVE
        result = archive(table, settings)
        if not isinstance(result, ArchiveResult):
            return
        moved = {(i.timestamp, i.action) for i in result.archived}
        active = {(i.timestamp, i.action) for i in self.table().timeline.instants}
        assert moved and not moved & active, f"archived {moved}, still active {moved & active}"
        assert moved <= {(i.timestamp, i.action) for i in read_archived_instants(self.table())}
        writes = {t for t, action in moved if action in Action.WRITE_ACTIONS}
        assert writes, f"archival moved no commit: {moved}"
        self.archived |= writes
        self.counts["archive"] += 1

    def savepoint(self) -> None:
        table = self.table()
        savepoints = [sp.instant for sp in list_savepoints(table)]
        latest = table.timeline.completed_writes()[-1].timestamp
        if latest in savepoints:
            return  # that commit is savepointed already
        if later(self.last_clean_retains, latest):
            # restored to before what the last clean retains: Hudi refuses to savepoint it
            with pytest.raises(TimelineError, match="earliest commit the last clean kept"):
                create_savepoint(table)
            return
        info = create_savepoint(table)
        assert info.instant == latest and latest in {sp.instant for sp in list_savepoints(self.table())}
        self.counts["savepoint"] += 1

    def restore(self) -> None:
        table = self.table()
        savepoints = [sp.instant for sp in list_savepoints(table)]
        if not savepoints:
            return
        target = savepoints[-1]  # later savepoints would have to be deleted first
        result = restore_to(table, target)
        if not isinstance(result, RestoreResult):
            return  # nothing written since
        assert result.rolled_back and all(later(t, target) for t in result.rolled_back), result
        left = [i.timestamp for i in self.table().timeline.instants if i.action in (*Action.WRITE_ACTIONS, Action.COMPACTION)]
        assert not [t for t in left if later(t, target)], f"restore to {target} left {left}"
        self.history.undo_after(target)
        self.model.rows = self.history.rows()
        if self.rng.random() < 0.7:
            delete_savepoint(self.table(), target)  # savepoints block archival
        self.counts["restore"] += 1

    def check_snapshot(self, what: str) -> pa.Table:
        snapshot = hoodie.read(self.path)
        rows = table_rows(snapshot)
        assert rows == self.model.rows, f"snapshot after {what}: {_diff(rows, self.model.rows)}; steps {self.steps}"
        assert snapshot.num_rows == len(self.model.rows), f"duplicate keys in the snapshot after {what}"
        rs = hudi_rs_rows(self.path)
        assert rs == self.model.rows or _pending_compaction(self.path), f"hudi-rs after {what}: {_diff(rs, self.model.rows)}; steps {self.steps}"
        return snapshot


@pytest.mark.slow
@pytest.mark.parametrize("index_type", ["BLOOM", "SIMPLE"])
@pytest.mark.parametrize("seed", SEEDS)
def test_mor_with_services_matches_model(tmp_path: Path, seed: int, index_type: str) -> None:
    # (services through the library, on tables opened plainly: no metadata table)
    opts = {
        **model_options(index_type, "MERGE_ON_READ"), "hoodie.clean.automatic": "false", "hoodie.archive.automatic": "false",
        "hoodie.metadata.enable": "false",
    }
    # each marker type with one index (the timeline server batches the markers of the other
    # and serves its views, from a spillable store with room for a few listings only)
    opts["hoodie.write.markers.type"] = "DIRECT" if index_type == "BLOOM" else "TIMELINE_SERVER_BASED"
    opts["hoodie.filesystem.view.type"] = "SPILLABLE_DISK"
    opts["hoodie.filesystem.view.spillable.mem"] = "600"
    run = Run(str(tmp_path / "mor"), random.Random(f"{seed}/{index_type}"), opts)  # a run of its own per index
    for step, action in enumerate(schedule(run.rng)):
        if action == "write":
            run.write(step)
        else:
            getattr(run, action)()
            run.check_snapshot(f"step {step} ({action})")
        run.steps.append(action)
    # whatever is left pending finishes (oldest first), and the result is still the model
    while _pending_compaction(run.path):
        run_compaction(run.table())
    run.check_snapshot("the last compaction")
    print(f"seed {seed} {index_type}: {dict(run.counts)}")
    assert all(run.counts[s] >= 1 for s in SERVICES), f"services that never ran: {[s for s in SERVICES if not run.counts[s]]}; steps {run.steps}"


def _pending_compaction(path: str) -> bool:
    # hudi-rs 0.5.0 ignores logs written on the slice a pending compaction opens; hoodie
    # (like Java) reads them, so the two may differ only while a compaction is pending.
    return bool(HoodieTable.open(path).timeline.pending(["compaction"]))


# --- archival past a restore instant (a bug the model test found) -------------------------------


def _archive_past_a_restore(mor) -> str:
    """A merge-on-read table whose delta commits after a restore are archived while the
    restore instant (never archived) stays first on the active timeline; returns w3, an
    archived delta commit whose update of ``a`` (ts 3) is in a log file no compaction merged."""
    mor.extra.update({"hoodie.clean.automatic": "false", "hoodie.archive.automatic": "false"})
    w1 = mor.write(["a", "b"], "p", 1)
    create_savepoint(mor.open())
    mor.write(["a"], "p", 2)
    assert isinstance(restore_to(mor.open(), w1), RestoreResult)
    delete_savepoint(mor.open(), w1)  # nothing holds archival back any more
    w3 = mor.write(["a"], "p", 3)
    mor.write(["b"], "p", 4)
    mor.write(["b"], "p", 5)
    assert mor.rows() == [("a", "p", 3, 3.0), ("b", "p", 5, 5.0)]
    result = archive(mor.open(), ArchiveSettings(min_commits=1, max_commits=2))
    assert isinstance(result, ArchiveResult) and w3 in {i.timestamp for i in result.archived}
    assert mor.open().timeline.instants[0].action == Action.RESTORE
    assert mor.rs_rows() == [("a", "p", 3, 3.0), ("b", "p", 5, 5.0)]  # hudi-rs still reads w3's update
    return w3


def test_archival_past_a_restore_instant_keeps_archived_log_updates(mor) -> None:
    _archive_past_a_restore(mor)
    assert mor.rows() == [("a", "p", 3, 3.0), ("b", "p", 5, 5.0)]  # hoodie read a = 1 (w1's base) before the fix


def test_archival_past_a_restore_instant_refuses_pulls_from_archived_commits(mor) -> None:
    w3 = _archive_past_a_restore(mor)
    with pytest.raises(InstantNotFoundError, match="are archived"):
        pull(mor.path, w3, mor.open().timeline.completed_writes()[-1].timestamp)
