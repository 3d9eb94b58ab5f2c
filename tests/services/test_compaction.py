"""Compaction merges log files into new base files: plans are saved and executed, inline
compaction follows its threshold, writers keep appending while a compaction is pending,
and a compaction that failed midway is redone."""
from __future__ import annotations

from pathlib import Path

import pyarrow as pa
import pytest
from readers import hudi_rs_table, sorted_tuples
from table_options import MOR_TRIPS

import hoodie
from hoodie.engine.local import LocalEngine
from hoodie.errors import TimelineError
from hoodie.services.compaction import (
    UNBOUNDED_STRATEGY,
    CompactionSettings,
    compact,
    pending_compactions,
    plan_compaction,
    run_compaction,
    schedule_compaction,
)
from hoodie.table.table import HoodieTable

OPTS = {**MOR_TRIPS, "hoodie.metadata.enable": "false"}  # (compactions run through the library on tables opened plainly)


@pytest.fixture
def table_path(tmp_path: Path) -> str:
    return str(tmp_path / "trips")


def hudi_rs(path: str) -> list[tuple]:
    return sorted_tuples(hudi_rs_table(path), ["uuid", "city", "ts", "fare"])


def ours(path: str, **opts: str) -> list[tuple]:
    t = hoodie.read(path, opts or None)
    return sorted((r["uuid"], r["city"], r["ts"], r["fare"]) for r in t.select(["uuid", "city", "ts", "fare"]).to_pylist())


def build(path: str, updates: int = 3) -> None:
    hoodie.write(pa.table({"uuid": [f"u{i}" for i in range(8)], "city": ["sf", "nyc"] * 4, "ts": [1] * 8, "fare": [float(i) for i in range(8)]}), path, OPTS)
    for k in range(updates):
        hoodie.write(
            pa.table(
                {
                    "uuid": [f"u{k}", f"u{k + 4}"],
                    "city": ["sf" if k % 2 == 0 else "nyc", "sf" if k % 2 == 0 else "nyc"],
                    "ts": [10 + k] * 2,
                    "fare": [100.0 + k] * 2,
                }
            ),
            path,
            OPTS,
        )
    hoodie.write(pa.table({"uuid": ["u7"], "city": ["nyc"], "ts": [0]}), path, {**OPTS, "hoodie.datasource.write.operation": "delete"})


def test_threshold_and_explanation(table_path: str) -> None:
    build(table_path, updates=2)
    table = HoodieTable.open(table_path)
    decision = plan_compaction(table, CompactionSettings(max_delta_commits=5))
    assert not decision.should_run and decision.reason == "4 delta commits since the last compaction, threshold 5"
    assert plan_compaction(table, CompactionSettings(max_delta_commits=4)).should_run


def test_compaction_merges_logs_into_new_base_files(table_path: str) -> None:
    build(table_path)
    before = ours(table_path)
    assert before == hudi_rs(table_path)
    table = HoodieTable.open(table_path)
    instant, decision = schedule_compaction(table, CompactionSettings(strategy=UNBOUNDED_STRATEGY), require_threshold=False)
    assert instant and len(decision.operations) == 2
    assert [i.timestamp for i, _ in pending_compactions(HoodieTable.open(table_path))] == [instant]
    meta = run_compaction(HoodieTable.open(table_path), instant)
    assert meta.compacted and meta.operation_type == "COMPACT"
    table = HoodieTable.open(table_path)
    assert table.timeline.get(instant).action == "commit" and table.timeline.get(instant).is_completed
    slices = table.view().latest_slices_all()
    assert all(s.base_instant == instant and not s.log_files for s in slices)
    assert ours(table_path) == before == hudi_rs(table_path)
    assert ours(table_path, **{"hoodie.datasource.query.type": "read_optimized"}) == before


def test_writes_continue_while_a_compaction_is_pending(table_path: str) -> None:
    build(table_path)
    instant, _ = schedule_compaction(HoodieTable.open(table_path), CompactionSettings(strategy=UNBOUNDED_STRATEGY), require_threshold=False)
    hoodie.write(pa.table({"uuid": ["u1", "u9"], "city": ["nyc", "sf"], "ts": [50, 1], "fare": [-5.0, 9.0]}), table_path, OPTS)
    logs_on_new_slice = [p.name for p in Path(table_path).rglob(f".*_{instant}.log.*")]
    assert len(logs_on_new_slice) == 1, "the update of u1 goes to the slice the compaction opens"
    expected = ours(table_path)
    # Java's view merges the slice a pending compaction opens into the previous one, and so
    # does hoodie; hudi-rs 0.5.0 ignores those logs until the compaction completes.
    assert ("u1", "nyc", 50, -5.0) in expected
    run_compaction(HoodieTable.open(table_path), instant)
    assert ours(table_path) == expected == hudi_rs(table_path)


def test_failed_compaction_is_redone(table_path: str, monkeypatch: pytest.MonkeyPatch) -> None:
    build(table_path)
    before = ours(table_path)
    instant, _ = schedule_compaction(HoodieTable.open(table_path), CompactionSettings(strategy=UNBOUNDED_STRATEGY), require_threshold=False)
    from hoodie.services import compaction as c

    real = c.write_base_file
    calls = {"n": 0}

    def failing(*args, **kwargs):
        calls["n"] += 1
        if calls["n"] == 2:
            raise OSError("disk full")
        return real(*args, **kwargs)

    monkeypatch.setattr(c, "write_base_file", failing)
    with pytest.raises(OSError, match="disk full"):
        run_compaction(HoodieTable.open(table_path), instant, engine=LocalEngine(1))
    monkeypatch.setattr(c, "write_base_file", real)
    assert HoodieTable.open(table_path).timeline.get(instant).is_inflight
    written = list(Path(table_path).rglob(f"*_{instant}.parquet"))
    assert len(written) == 1, "the first slice's file was written before the failure"
    assert ours(table_path) == before
    run_compaction(HoodieTable.open(table_path))
    assert ours(table_path) == before == hudi_rs(table_path)
    assert len(list(Path(table_path).rglob(f"*_{instant}.parquet"))) == 2
    # the failed attempt was rolled back as Hudi does: a rollback instant deleted its file,
    # and the compaction went back to requested and completed under the same instant
    import fastavro

    table = HoodieTable.open(table_path)
    (rollback,) = [i for i in table.timeline.instants if i.action == "rollback"]
    assert rollback.is_completed and rollback.timestamp > instant
    with open(Path(table_path) / ".hoodie" / f"{rollback.timestamp}.rollback", "rb") as f:
        (meta,) = list(fastavro.reader(f))
    assert meta["instantsRollback"] == [{"commitTime": instant, "action": "compaction"}]
    deleted = [f for pm in meta["partitionMetadata"].values() for f in pm["successDeleteFiles"]]
    assert [Path(f).name for f in deleted] == [written[0].name]
    assert table.timeline.get(instant).action == "commit" and table.timeline.get(instant).is_completed


def test_inline_compaction_follows_the_threshold(table_path: str) -> None:
    opts = {**OPTS, "hoodie.compact.inline": "true", "hoodie.compact.inline.max.delta.commits": "3"}
    hoodie.write(pa.table({"uuid": ["a", "b"], "city": ["sf", "sf"], "ts": [1, 1], "fare": [1.0, 2.0]}), table_path, opts)
    hoodie.write(pa.table({"uuid": ["a"], "city": ["sf"], "ts": [2], "fare": [3.0]}), table_path, opts)
    assert not HoodieTable.open(table_path).timeline.completed(["commit"])
    hoodie.write(pa.table({"uuid": ["b"], "city": ["sf"], "ts": [2], "fare": [4.0]}), table_path, opts)
    table = HoodieTable.open(table_path)
    (commit,) = table.timeline.completed(["commit"])
    assert table.commit_metadata(commit).compacted
    assert ours(table_path) == [("a", "sf", 2, 3.0), ("b", "sf", 2, 4.0)] == hudi_rs(table_path)


def test_inline_compaction_finishes_a_pending_compaction_first(table_path: str) -> None:
    """As Apache Hudi's runAnyPendingCompactions: a compaction left pending (scheduled
    alone, or inflight after a crash) is completed by the next write's inline compaction,
    before a new one is planned (which would leave its slices out)."""
    build(table_path)
    before = ours(table_path)
    instant, _ = schedule_compaction(HoodieTable.open(table_path), CompactionSettings(strategy=UNBOUNDED_STRATEGY), require_threshold=False)
    table = HoodieTable.open(table_path)
    table.timeline.transition_to_inflight(table.timeline.get(instant), b"")  # a run died midway
    opts = {**OPTS, "hoodie.compact.inline": "true", "hoodie.compact.inline.max.delta.commits": "5"}
    hoodie.write(pa.table({"uuid": ["u9"], "city": ["sf"], "ts": [1], "fare": [9.0]}), table_path, opts)
    table = HoodieTable.open(table_path)
    assert not pending_compactions(table)
    assert table.timeline.get(instant).is_completed and table.commit_metadata(table.timeline.get(instant)).compacted
    assert ours(table_path) == sorted([*before, ("u9", "sf", 1, 9.0)]) == hudi_rs(table_path)


def test_copy_on_write_tables_have_nothing_to_compact(tmp_path: Path) -> None:
    path = str(tmp_path / "cow")
    hoodie.write(pa.table({"uuid": ["a"], "city": ["sf"], "ts": [1], "fare": [1.0]}), path, {**OPTS, "hoodie.datasource.write.table.type": "COPY_ON_WRITE"})
    assert "nothing to compact" in plan_compaction(HoodieTable.open(path), CompactionSettings()).reason
    with pytest.raises(TimelineError, match="no pending compaction"):
        run_compaction(HoodieTable.open(path))
    assert compact(HoodieTable.open(path), CompactionSettings())[0] is None


def _footer_keys_test(path: str) -> tuple[list[str], object]:
    import pyarrow.parquet as pq

    from hoodie.formats.bloom_footer import read_footer_index

    keys = pq.read_table(path, columns=["_hoodie_record_key"]).column(0).to_pylist()
    return keys, read_footer_index(pq.read_metadata(path).metadata)


def test_compacted_files_carry_a_bloom_filter_of_all_their_keys(table_path: str) -> None:
    build(table_path)
    compact(HoodieTable.open(table_path), CompactionSettings(strategy=UNBOUNDED_STRATEGY), require_threshold=False)
    for s in HoodieTable.open(table_path).view().latest_slices_all():
        keys, footer = _footer_keys_test(s.base_file.path)
        assert footer.bloom.might_contain_many(keys).all()
        assert (footer.min_key, footer.max_key) == (min(keys), max(keys))


def test_compaction_merge_keeps_the_base_footer_it_read(table_path: str) -> None:
    """The merge hands compaction the base file's footer from the read of its records."""
    from hoodie.table.slice_reader.for_compaction import merge_slice_for_compaction
    from hoodie.timeline.compaction_plan import CompactionOperation

    build(table_path)
    table = HoodieTable.open(table_path)
    s = next(s for s in table.view().latest_slices_all() if s.log_files)
    op = CompactionOperation(s.partition_path, s.file_id, s.base_instant, s.base_file.file_name, tuple(lf.file_name for lf in s.log_files))
    merged = merge_slice_for_compaction(table.storage, table_path, op, table.data_schema(), None, "20990101000000000")
    _, footer = _footer_keys_test(s.base_file.path)
    assert merged.base_footer is not None and footer is not None
    assert merged.base_footer.bloom.text == footer.bloom.text
    assert (merged.base_footer.min_key, merged.base_footer.max_key) == (footer.min_key, footer.max_key)


def test_compaction_filter_adds_the_keys_the_base_file_lacked(table_path: str) -> None:
    """Log records of keys the base file lacks (written by engines whose index sees logs)
    come last in the merge; only they are added to the carried-over filter."""
    from hoodie.formats.parquet import BloomSettings, ParquetSettings
    from hoodie.services.compaction import CompactionTask, _bloom_filter
    from hoodie.table.slice_reader.merge_rules import MergeConfig
    from hoodie.timeline.compaction_plan import CompactionOperation

    build(table_path, updates=0)
    table = HoodieTable.open(table_path)
    s = next(s for s in table.view().latest_slices_all() if s.partition_path == "sf")
    base_keys, footer = _footer_keys_test(s.base_file.path)
    new_keys = ["log-only-1", "log-only-2"]
    merged = pa.table({"_hoodie_record_key": base_keys + new_keys})
    op = CompactionOperation(s.partition_path, s.file_id, s.base_instant, s.base_file.file_name, ())
    bloom = BloomSettings(num_entries=1000)
    task = CompactionTask(op, table_path, "20990101000000000", pa.schema([]), MergeConfig(), None, table.storage, ParquetSettings(), bloom)
    f = _bloom_filter(task, footer, merged, {"inserted": len(new_keys)})
    assert f is not None and f.might_contain_many(base_keys + new_keys).all()
    assert not _bloom_filter(task, footer, merged, {"inserted": 0}).might_contain_many(new_keys).any()
    assert _bloom_filter(task, None, merged, {"inserted": 0}) is None  # no footer: built from every key


def test_compaction_filter_keeps_removed_keys_when_the_base_file_had_no_footer(table_path: str) -> None:
    """A base file without a key footer: the new filter is built afresh, and still holds
    the keys the merge removed (a write during the compaction may have put them again into
    a log of the next slice, where the index finds them only through the filter)."""
    from hoodie.formats.parquet import BloomSettings, ParquetSettings
    from hoodie.services.compaction import CompactionTask, _bloom_filter
    from hoodie.table.slice_reader.merge_rules import MergeConfig
    from hoodie.timeline.compaction_plan import CompactionOperation

    build(table_path, updates=0)
    table = HoodieTable.open(table_path)
    s = next(s for s in table.view().latest_slices_all() if s.partition_path == "sf")
    base_keys, _ = _footer_keys_test(s.base_file.path)
    removed, kept = base_keys[:2], base_keys[2:]
    merged = pa.table({"_hoodie_record_key": kept})
    op = CompactionOperation(s.partition_path, s.file_id, s.base_instant, s.base_file.file_name, ())
    bloom = BloomSettings(num_entries=1000)
    task = CompactionTask(op, table_path, "20990101000000000", pa.schema([]), MergeConfig(), None, table.storage, ParquetSettings(), bloom)
    f = _bloom_filter(task, None, merged, {"inserted": 0, "deleted": len(removed)})
    assert f is not None and f.might_contain_many(base_keys).all()


def test_compaction_in_groups_writes_what_one_slice_a_task_writes(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Twenty slices with logs (Avro data blocks, delete blocks) on two workers: each task
    compacts a few slices, their log blocks decoded together. The result is what one
    slice a task gives: the same records, counters and file groups, hudi-rs agreeing."""
    import shutil

    from hoodie.services import compaction

    grouped_path, single_path = str(tmp_path / "grouped"), str(tmp_path / "single")
    cities = [f"c{i:02d}" for i in range(20)]
    hoodie.write(
        pa.table(
            {"uuid": [f"u{i:03d}" for i in range(200)], "city": [cities[i % 20] for i in range(200)], "ts": [1] * 200, "fare": [float(i) for i in range(200)]}
        ),
        grouped_path,
        OPTS,
    )
    hoodie.write(
        pa.table({"uuid": [f"u{i:03d}" for i in range(0, 200, 3)], "city": [cities[i % 20] for i in range(0, 200, 3)], "ts": [5] * 67, "fare": [-1.0] * 67}),
        grouped_path,
        OPTS,
    )
    hoodie.write(
        pa.table({"uuid": [f"u{i:03d}" for i in range(1, 200, 7)], "city": [cities[i % 20] for i in range(1, 200, 7)], "ts": [0] * 29}),
        grouped_path,
        {**OPTS, "hoodie.datasource.write.operation": "delete"},
    )
    before = ours(grouped_path)
    shutil.copytree(grouped_path, single_path)
    settings = CompactionSettings(strategy=UNBOUNDED_STRATEGY)

    calls: list[int] = []
    real = compaction.compact_group
    monkeypatch.setattr(compaction, "compact_group", lambda group, ctx: calls.append(len(group.tasks)) or real(group, ctx))
    grouped, _ = compact(HoodieTable.open(grouped_path), settings, LocalEngine(2), require_threshold=False)
    assert sorted(calls) == [2] * 10, "twenty slices on two workers: groups of two, four tasks a worker"
    monkeypatch.setattr(compaction, "GROUP_SLICES", 1)
    calls.clear()
    single, _ = compact(HoodieTable.open(single_path), settings, LocalEngine(2), require_threshold=False)
    assert sorted(calls) == [1] * 20

    def counters(meta) -> list[tuple]:
        return sorted(
            (s.partitionPath, s.fileId, s.numWrites, s.numUpdateWrites, s.numDeletes, s.totalLogRecords, s.totalLogBlocks, s.totalLogFilesCompacted)
            for s in meta.write_stats()
        )

    assert grouped is not None and single is not None
    assert counters(grouped) == counters(single)
    assert sum(s.numDeletes for s in grouped.write_stats()) == 29
    assert ours(grouped_path) == ours(single_path) == before == hudi_rs(grouped_path)
    assert all(not s.log_files for s in HoodieTable.open(grouped_path).view().latest_slices_all())


def _logs_of_sizes(path: str, updates: dict[str, int]) -> None:
    """A table with one file group per city and, per city, a log of that many updates."""
    cities = list(updates)
    n = 40 * len(cities)
    hoodie.write(
        pa.table(
            {"uuid": [f"u{i:03d}" for i in range(n)], "city": [cities[i % len(cities)] for i in range(n)], "ts": [1] * n, "fare": [float(i) for i in range(n)]}
        ),
        path,
        OPTS,
    )
    rows = [(f"u{i:03d}", cities[i % len(cities)]) for i in range(n)]
    chosen = [r for city, k in updates.items() for r in [r for r in rows if r[1] == city][:k]]
    hoodie.write(pa.table({"uuid": [u for u, _ in chosen], "city": [c for _, c in chosen], "ts": [2] * len(chosen), "fare": [0.5] * len(chosen)}), path, OPTS)


def test_log_size_strategy_takes_the_most_log_data_first_within_the_io_target(table_path: str) -> None:
    _logs_of_sizes(table_path, {"a": 2, "b": 30, "c": 10, "d": 20})
    table = HoodieTable.open(table_path)
    everything = plan_compaction(table, CompactionSettings(strategy=UNBOUNDED_STRATEGY), require_threshold=False)
    assert sorted(op.partition_path for op in everything.operations) == ["a", "b", "c", "d"]
    io = {op.partition_path: op.metrics["TOTAL_IO_MB"] for op in everything.operations}
    by_logs = [op.partition_path for op in sorted(everything.operations, key=lambda op: -op.log_bytes)]
    assert by_logs == ["b", "d", "c", "a"]
    # a budget the two largest logs' slices reach: the one reaching it is still taken (as Hudi's bounded IO)
    target = io["b"] + io["d"] * 0.5
    decision = plan_compaction(table, CompactionSettings(target_io_mb=max(1, int(target))), require_threshold=False)
    budget = max(1, int(target))
    expected, total = [], 0.0
    for city in by_logs:
        expected.append(city)
        total += io[city]
        if total >= budget:
            break
    assert [op.partition_path for op in decision.operations] == expected
    assert f"target {budget} MB" in decision.reason
    assert [op.partition_path for op in plan_compaction(table, CompactionSettings(target_io_mb=0), require_threshold=False).operations] == ["b"]


class _OnlyCity:
    def __init__(self, city: str) -> None:
        self.city = city

    def select(self, candidates, settings):  # type: ignore[no-untyped-def]
        return [op for op in candidates if op.partition_path == self.city], f"only {self.city}"


def test_compaction_strategies_are_pluggable(table_path: str) -> None:
    """A strategy registered under a name, or given as the import path of a class with
    select(), is what hoodie.compaction.strategy picks, inline as well; an unknown name
    or a strategy choosing slices it was not offered is a clear error."""
    from hoodie.errors import ConfigError
    from hoodie.services.compaction import register_compaction_strategy

    _logs_of_sizes(table_path, {"a": 2, "b": 30, "c": 10})
    register_compaction_strategy("test-only-c", _OnlyCity("c"))
    decision = plan_compaction(HoodieTable.open(table_path), CompactionSettings(strategy="test-only-c"), require_threshold=False)
    assert [op.partition_path for op in decision.operations] == ["c"] and decision.reason == "only c"
    by_path = plan_compaction(
        HoodieTable.open(table_path), CompactionSettings(strategy="hoodie.services.compaction.UnboundedStrategy"), require_threshold=False
    )
    assert sorted(op.partition_path for op in by_path.operations) == ["a", "b", "c"]
    # inline, through the write options
    inline = {**OPTS, "hoodie.compact.inline": "true", "hoodie.compact.inline.max.delta.commits": "1", "hoodie.compaction.strategy": "test-only-c"}
    hoodie.write(pa.table({"uuid": ["u000"], "city": ["a"], "ts": [3], "fare": [9.0]}), table_path, inline)
    table = HoodieTable.open(table_path)
    compacted = {s.partition_path for s in table.view().latest_slices_all() if not s.log_files}
    assert compacted == {"c"}
    with pytest.raises(ConfigError, match="unknown hoodie.compaction.strategy 'no.such.Strategy'"):
        CompactionSettings(strategy="no.such.Strategy")
    register_compaction_strategy("test-bad", _Foreign())
    with pytest.raises(ConfigError, match="test-bad chose slices it was not offered"):
        plan_compaction(table, CompactionSettings(strategy="test-bad"), require_threshold=False)


class _Foreign:
    def select(self, candidates, settings):  # type: ignore[no-untyped-def]
        return [*candidates, candidates[0]], "twice"


def test_an_interrupted_rollback_of_a_failed_compaction_is_finished_not_repeated(table_path: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """A crash while rolling back a failed compaction attempt leaves a pending rollback:
    the next run finishes that rollback (one rollback instant in all) before running the
    compaction again, so no stale rollback is left for a writer to resume later."""
    from hoodie.services import compaction as c
    from hoodie.services import rollback

    build(table_path)
    before = ours(table_path)
    instant, _ = schedule_compaction(HoodieTable.open(table_path), CompactionSettings(strategy=UNBOUNDED_STRATEGY), require_threshold=False)
    real_write, real_execute = c.write_base_file, rollback._execute

    def failing_write(*args, **kwargs):
        raise OSError("disk full")

    monkeypatch.setattr(c, "write_base_file", failing_write)
    with pytest.raises(OSError, match="disk full"):
        run_compaction(HoodieTable.open(table_path), instant, engine=LocalEngine(1))
    monkeypatch.setattr(c, "write_base_file", real_write)

    def crash(*args, **kwargs):
        raise KeyboardInterrupt("killed during the rollback")

    monkeypatch.setattr(rollback, "_execute", crash)
    with pytest.raises(KeyboardInterrupt):
        run_compaction(HoodieTable.open(table_path), instant)
    pending = HoodieTable.open(table_path).timeline.pending(["rollback"])
    assert len(pending) == 1
    monkeypatch.setattr(rollback, "_execute", real_execute)
    run_compaction(HoodieTable.open(table_path), instant)
    table = HoodieTable.open(table_path)
    rollbacks = [i for i in table.timeline.instants if i.action == "rollback"]
    assert [(i.timestamp, i.is_completed) for i in rollbacks] == [(pending[0].timestamp, True)]
    assert table.timeline.get(instant).action == "commit" and table.timeline.get(instant).is_completed
    assert ours(table_path) == before == hudi_rs(table_path)


def test_delta_commits_count_after_a_second_precision_compaction_as_instants(table_path: str) -> None:
    """A compaction at a second-precision instant (``yyyyMMddHHmmss``, Hudi before 0.9)
    stands for the end of its second: a delta commit earlier in that second is not after
    it, though its string sorts after the compaction's."""
    from hoodie.services.compaction import delta_commits_since_last_compaction
    from hoodie.timeline import CompactionPlan

    build(table_path, updates=1)
    table = HoodieTable.open(table_path)
    last = table.timeline.completed_writes()[-1].timestamp
    Path(table_path, ".hoodie", f"{last[:14]}.compaction.requested").write_bytes(CompactionPlan(()).encode())
    assert delta_commits_since_last_compaction(table.reload()) == 0
