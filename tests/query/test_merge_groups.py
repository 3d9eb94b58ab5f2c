"""Slices with logs merged a few to a task: which slices are grouped, and the log blocks
of a group decoded together exactly as one by one (batches split at another writer
schema, a delete block and the byte budget; errors still name the file)."""
from __future__ import annotations

import pyarrow as pa
import pytest

from hoodie.errors import FormatError
from hoodie.formats.log import AvroDataBlock, LogFileReader
from hoodie.layout import parse_log_file_name
from hoodie.query.slices import GROUP_LOG_BYTES, MergeGroup, group_merges
from hoodie.table.file_group import FileSlice, LogFile
from hoodie.table.slice_reader import log_scan
from hoodie.table.slice_reader.instants import InstantFilter
from hoodie.table.slice_reader.log_scan import decode_pending, scan_log
from hoodie.table.slice_reader.merge import MergeSliceTask

T = [f"2024010100000{i}000" for i in range(1, 8)]
F = "11111111-0000-0000-0000-000000000000-0"


def _task(i: int, log_bytes: int) -> MergeSliceTask:
    name = f".{F}_{T[0]}.log.{i + 1}_0-1-1"
    log = LogFile(f"/t/p/{name}", parse_log_file_name(name), log_bytes)
    # grouping looks at the slices' log files only
    return MergeSliceTask(None, FileSlice("p", f"fg{i}", T[0], None, (log,)), pa.schema([]), None, None)  # type: ignore[arg-type]


def _shape(grouped: list) -> list[int]:
    return [len(t.tasks) if isinstance(t, MergeGroup) else 1 for t in grouped]


def test_groups_form_only_while_every_worker_keeps_four_tasks() -> None:
    small = [_task(i, 1000) for i in range(40)]
    assert _shape(group_merges(small[:7], 1)) == [1] * 7
    assert _shape(group_merges(small[:8], 1)) == [2] * 4
    assert _shape(group_merges(small[:16], 2)) == [2] * 8
    assert _shape(group_merges(small[:15], 2)) == [1] * 15
    assert _shape(group_merges(small, 1)) == [4] * 10
    assert _shape(group_merges(small[:18], 1)) == [4, 4, 4, 4, 2]
    # slice order is kept
    flat = [t for g in group_merges(small, 1) for t in (g.tasks if isinstance(g, MergeGroup) else (g,))]
    assert flat == small


def test_groups_hold_at_most_the_log_byte_budget() -> None:
    mib = 1 << 20
    sizes = [3 * mib, 1 * mib, 1 * mib, GROUP_LOG_BYTES + 1, 100, 100, 100, 100, 100] + [100] * 31
    grouped = group_merges([_task(i, s) for i, s in enumerate(sizes)], 1)
    assert _shape(grouped)[:4] == [2, 1, 1, 4]  # 3+1 MiB; 1 MiB, as the next passes 4 MiB; the big one alone
    for g in grouped:
        tasks = g.tasks if isinstance(g, MergeGroup) else (g,)
        if len(tasks) > 1:
            assert sum(lf.size for t in tasks for lf in t.file_slice.log_files) <= GROUP_LOG_BYTES


def _mixed_log(mor_table):
    """One log file: Avro blocks of two writer schemas, a delete block between them."""
    t = mor_table()
    wide = pa.schema([*t.schema, ("extra", pa.string())])
    blocks = [
        t.data_block(T[1], [{"id": 1, "ts": 1, "name": "a", "part": "p"}], "p", F),
        t.data_block(T[2], [{"id": 2, "ts": 1, "name": "b", "part": "p"}, {"id": 3, "ts": 1, "name": "c", "part": "p"}], "p", F),
        t.delete_block(T[3], [(2,)], "p"),
        t.data_block(T[4], [{"id": 4, "ts": 1, "name": "d", "part": "p"}], "p", F),
        t.data_block(T[5], [{"id": 5, "ts": 1, "name": "e", "part": "p", "extra": "x"}], "p", F, schema=wide),
        t.data_block(T[6], [{"id": 6, "ts": 1, "name": "f", "part": "p", "extra": "y"}], "p", F, schema=wide),
    ]
    stat = t.log("p", F, T[0], 1, blocks)
    name = stat.path.split("/")[-1]
    return t, LogFile(f"{t.path}/{stat.path}", parse_log_file_name(name), stat.fileSizeInBytes)


def _one_by_one(storage, log: LogFile) -> list:
    with LogFileReader(storage, log.path) as reader:
        return [reader.read_block(info) for info in reader.scan()]


def test_pending_blocks_decode_as_one_by_one(mor_table, monkeypatch) -> None:
    t, log = _mixed_log(mor_table)
    storage = t.open().storage
    batches: list[int] = []
    together = log_scan.decode_avro_together

    def recording(parts):
        batches.append(len(parts))
        return together(parts)

    monkeypatch.setattr(log_scan, "decode_avro_together", recording)
    pending = scan_log(storage, [log], lambda instant: True)
    assert decode_pending(pending) == _one_by_one(storage, log)
    assert batches == [2, 2]  # split at the delete block and at the other schema
    batches.clear()
    monkeypatch.setattr(log_scan, "_DECODE_BATCH_BYTES", 1)  # every block over the budget
    assert decode_pending(pending) == _one_by_one(storage, log)
    assert batches == []
    # two slices' blocks in one call: as each slice's alone
    assert decode_pending(pending + pending) == _one_by_one(storage, log) * 2
    visible = InstantFilter.of_timeline(t.open().timeline)
    assert scan_log(storage, [log], visible) == []  # no instant completed: nothing to replay


def test_a_bad_block_among_others_is_named_by_file_and_offset(mor_table) -> None:
    t, log = _mixed_log(mor_table)
    storage = t.open().storage
    pending = scan_log(storage, [log], lambda instant: True)
    second = pending[1]
    content = second.content[:12] + b"\x09" + second.content[13:]  # a union index out of range
    broken = [pending[0], log_scan.PendingBlock(second.path, second.info, content)]
    with pytest.raises(FormatError, match=rf"{log.path}: AVRO_DATA block at byte {second.info.offset}: .*union index"):
        decode_pending(broken)
    assert isinstance(decode_pending(pending)[0], AvroDataBlock)
