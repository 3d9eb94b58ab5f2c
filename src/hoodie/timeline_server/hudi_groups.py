"""Apache Hudi's file-system view as Java builds it, from the server's synced view: file
groups with a pending compaction's slice opened at its instant (holding the logs written
since; hoodie's own view merges them into the slice the compaction reads), the file
groups completed replace commits replaced, and every file group as listed, its files
committed or not (Java's stored file groups, which its FileGroupDTOs and 1.x's
"inflight" slices carry), with Java's choice of a slice as of an instant.

This module owns that model; the endpoints answering from it are :mod:`.hudi_views`'s.
"""
from __future__ import annotations

import dataclasses
from collections import defaultdict
from collections.abc import Callable
from typing import Any

from hoodie.errors import UnsupportedTableError
from hoodie.layout import InstantTime, parse_base_file_name, parse_log_file_name
from hoodie.table.file_group import BaseFile, FileGroup, FileSlice, LogFile
from hoodie.table.fs_view import FileSystemView
from hoodie.timeline.active import ActiveTimeline
from hoodie.timeline.compaction_plan import pending_plans
from hoodie.timeline.instant import Action, Instant

_PENDING_VISIBLE = (Action.COMPACTION, Action.LOG_COMPACTION)


def write_timeline(timeline: ActiveTimeline) -> list[Instant]:
    """The timeline of Java's file groups: completed writes and pending (log) compactions."""
    actions = (*Action.WRITE_ACTIONS, *_PENDING_VISIBLE)
    return [i for i in timeline.instants if i.action in actions and (i.is_completed or i.action in _PENDING_VISIBLE)]


def visible_timeline(timeline: ActiveTimeline) -> list[Instant]:
    """The timeline of Java's view: completed instants of every action (cleans and
    rollbacks too) and pending (log) compactions."""
    return [i for i in timeline.instants if i.is_completed or i.action in _PENDING_VISIBLE]


def at_or_before(a: str, b: str) -> bool:
    """Whether instant time ``a`` is at or before ``b``."""
    return InstantTime(a) <= InstantTime(b)


class HudiView:
    """One request's view of a table in Java's terms."""

    def __init__(self, view: FileSystemView) -> None:
        self.view = view
        self.timeline = view.timeline
        self._compactions: dict[tuple[str, str], str] | None = None
        self._replacers: dict[tuple[str, str], str] | None = None
        self._completed_by_time: dict[str, Instant] | None = None
        self._write_times: list[str] | None = None

    # --- what the timeline says about file groups ---------------------------------------
    def pending_compactions(self) -> dict[tuple[str, str], str]:
        """(partition, file id) → the instant of the pending compaction rewriting it."""
        if self._compactions is None:
            self._compactions = {
                (op.partition_path, op.file_id): inst.timestamp for inst, plan in pending_plans(self.timeline) for op in plan.operations
            }
        return self._compactions

    def replacers(self) -> dict[tuple[str, str], str]:
        """(partition, file id) → the completed replace commit that replaced it."""
        if self._replacers is None:
            self._replacers = {}
            for inst in self.view.visible_instants:
                if inst.action == Action.REPLACE_COMMIT:
                    for partition, ids in self.timeline.commit_metadata(inst).replaced_file_ids().items():
                        for file_id in ids:
                            self._replacers.setdefault((partition, file_id), inst.timestamp)
        return self._replacers

    # --- file groups as Java builds them ----------------------------------------------------
    def _java_group(self, group: FileGroup) -> FileGroup:
        """``group`` with a pending compaction's slice split off the one it reads: the logs
        written after the compaction was scheduled open a slice at its instant, as Java
        builds it (empty until a log is written)."""
        compaction = self.pending_compactions().get((group.partition_path, group.file_id))
        latest = group.latest_slice
        if compaction is None or latest is None or not at_or_before(latest.base_instant, compaction) or latest.base_instant == compaction:
            return group
        before: list[LogFile] = []
        after: list[LogFile] = []
        for lf in latest.log_files:
            (after if self._written_after(lf.name.instant, compaction) else before).append(lf)
        reads = dataclasses.replace(latest, log_files=tuple(before))
        opened = FileSlice(group.partition_path, group.file_id, compaction, None, tuple(after))
        return dataclasses.replace(group, slices=(*group.slices[:-1], reads, opened))

    def _written_after(self, log_instant: str, compaction: str) -> bool:
        if self.timeline.layout_version < 2:  # v6: a log names the slice it extends
            return log_instant == compaction
        inst = next((i for i in self.view.visible_instants if i.timestamp == log_instant), None)
        return inst is not None and InstantTime(self.timeline.completion_time(inst)) > InstantTime(compaction)

    def groups(self, partition: str) -> list[FileGroup]:
        """The live file groups of ``partition`` (not replaced)."""
        return [self._java_group(g) for g in self.view.file_groups(partition)]

    def group(self, partition: str, file_id: str) -> FileGroup | None:
        return next((g for g in self.groups(partition) if g.file_id == file_id), None)

    def replaced(self, partition: str, replaced_when: Callable[[str], bool]) -> list[FileGroup]:
        """The replaced file groups of ``partition`` whose replace instant passes ``replaced_when``."""
        by = self.replacers()
        return [
            self._java_group(g) for g in self.view.replaced_file_groups(partition)
            if (partition, g.file_id) in by and replaced_when(by[(partition, g.file_id)])
        ]

    def groups_as_of(self, partition: str, max_instant: str) -> list[FileGroup]:
        """The file groups not replaced on or before ``max_instant``."""
        return self.groups(partition) + self.replaced(partition, lambda t: InstantTime(t) > InstantTime(max_instant))

    def merged_slice(self, group: FileGroup, max_instant: str) -> FileSlice | None:
        """The latest slice at or before ``max_instant``; the slice a pending compaction
        opened comes merged with the one the compaction reads (Java's merged file slice)."""
        return self._merged(group, [s for s in group.slices if at_or_before(s.base_instant, max_instant)])

    def _merged(self, group: FileGroup, slices: list[FileSlice]) -> FileSlice | None:
        """The last of ``slices``, merged with the one before when a pending compaction opened it."""
        if not slices:
            return None
        last = slices[-1]
        if len(slices) > 1 and last.base_instant == self.pending_compactions().get((group.partition_path, group.file_id)):
            reads = slices[-2]
            return dataclasses.replace(reads, log_files=reads.log_files + last.log_files)
        return last

    # --- files in flight (Apache Hudi 1.x's "inflight" endpoints) ------------------------------
    def listed_groups(self, partition: str) -> list[FileGroup]:
        """Every file group of ``partition`` as storage lists it, replaced or not, its files
        committed or not (Java's stored file groups before its view filters them): a slice
        per base file and per pending compaction, and each log file in the newest slice
        opened at or before its write completed, or in the latest slice while its write is
        pending (as Apache Hudi 1.x places them)."""
        bases: dict[str, dict[str, BaseFile | None]] = defaultdict(dict)
        logs: dict[str, list[LogFile]] = defaultdict(list)
        for info in self.view.partition_files(partition):
            if (bname := parse_base_file_name(info.name)) is not None:
                bases[bname.file_id][bname.instant] = BaseFile(info.path, bname, info.size)
            elif (lname := parse_log_file_name(info.name)) is not None and not lname.cdc:
                logs[lname.file_id].append(LogFile(info.path, lname, info.size))
        for (p, file_id), compaction in self.pending_compactions().items():
            if p == partition and (file_id in bases or file_id in logs):
                bases[file_id].setdefault(compaction, None)
        groups = []
        for file_id in sorted(set(bases) | set(logs)):
            slices: dict[str, tuple[BaseFile | None, list[LogFile]]] = {t: (b, []) for t, b in bases[file_id].items()}
            for lf in sorted(logs[file_id], key=lambda x: x.name.sort_key()):
                owner = self._log_owner(sorted(slices, key=InstantTime), lf.name.instant)
                slices.setdefault(owner, (None, []))[1].append(lf)
            ordered = sorted(slices.items(), key=lambda kv: InstantTime(kv[0]))
            groups.append(FileGroup(partition, file_id, tuple(FileSlice(partition, file_id, t, b, tuple(ls)) for t, (b, ls) in ordered)))
        return groups

    def _log_owner(self, opened: list[str], log_instant: str) -> str:
        """The slice (base instant) a log file written by ``log_instant`` belongs to."""
        if not opened or self.timeline.layout_version < 2:
            return log_instant  # (table version 6: a log names the slice it extends)
        inst = self._completed().get(log_instant)
        if inst is None:
            return opened[-1]  # written by a pending (or unknown) instant: the latest slice
        done = self.timeline.completion_time(inst)
        return next((t for t in reversed(opened) if at_or_before(t, done)), log_instant)

    def _completed(self) -> dict[str, Instant]:
        if self._completed_by_time is None:
            self._completed_by_time = {i.timestamp: i for i in self.timeline.instants if i.is_completed}
        return self._completed_by_time

    def committed_slice(self, base_instant: str) -> bool:
        """Whether a slice opened at ``base_instant`` is on the view's timeline (Java's
        ``isFileSliceCommitted``: a completed write, a pending compaction, or older than the
        active timeline)."""
        if self._write_times is None:
            self._write_times = [i.timestamp for i in write_timeline(self.timeline)]
        times = self._write_times
        if not times or InstantTime(base_instant) > InstantTime(times[-1]):
            return False
        start = self.timeline.commits_start()
        return base_instant in times or (start is not None and InstantTime(base_instant) < InstantTime(start))

    def listed_as_of(self, partition: str, max_instant: str) -> list[FileGroup]:
        """The listed file groups of ``partition`` not replaced on or before ``max_instant``."""
        replacers = self.replacers()
        return [
            g for g in self.listed_groups(partition)
            if (replacer := replacers.get((partition, g.file_id))) is None or not at_or_before(replacer, max_instant)
        ]

    def merged_including_inflight(self, group: FileGroup, max_instant: str, current: str) -> FileSlice | None:
        """Java's merged slice at or before ``max_instant`` with the logs of pending writes,
        and, for the compaction ``current`` itself, the slice holding its new base file."""
        slices = [s for s in group.slices if self.committed_slice(s.base_instant) and at_or_before(s.base_instant, max_instant)]
        compaction = self.pending_compactions().get((group.partition_path, group.file_id))
        if slices and slices[-1].base_instant == current == compaction and slices[-1].base_file is not None:
            return slices[-1]
        return self._merged(group, slices)

    def latest_committed(self, group: FileGroup, max_instant: str, keep_empty: bool) -> FileSlice | None:
        """Java's newest slice of a listed group at or before ``max_instant`` on a table of
        version 8 or 9: without the files of writes not completed, and skipped if that
        leaves it empty; a slice that had none of them is taken as it is, empty or not,
        when ``keep_empty`` (a pending compaction's slice with no log yet)."""
        done = self._completed()
        for s in reversed(group.slices):
            if not self.committed_slice(s.base_instant) or not at_or_before(s.base_instant, max_instant):
                continue
            base = s.base_file if s.base_file is not None and s.base_instant in done else None
            logs = tuple(lf for lf in s.log_files if lf.name.instant in done)
            if base is s.base_file and len(logs) == len(s.log_files):
                if keep_empty or base is not None or logs:
                    return s
                continue
            if base is not None or logs:
                return dataclasses.replace(s, base_file=base, log_files=logs)
        return None

    # --- pending operations -------------------------------------------------------------------
    def compaction_ops(self, action: str) -> list[dict[str, Any]]:
        """Hudi's CompactionOpDTOs of the pending compactions (or log compactions)."""
        out = []
        for inst, plan in pending_plans(self.timeline, (action,)):
            for op in plan.operations:
                base = parse_base_file_name(op.base_file) if op.base_file else None
                out.append({
                    "baseInstant": op.base_instant, "compactionInstant": inst.timestamp,
                    "dataFileInstant": base.instant if base is not None else None, "deltaFiles": list(op.log_files),
                    "baseFile": op.base_file, "id": op.file_id, "partition": op.partition_path, "metrics": dict(op.metrics),
                    "bootstrapBaseFile": None,
                })
        return out

    def check_no_pending_clustering(self) -> None:
        """Refuses a table with a pending clustering (whose plan hoodie does not read)."""
        for inst in self.timeline.pending([Action.CLUSTERING, Action.REPLACE_COMMIT]):
            if inst.action == Action.CLUSTERING or self._is_clustering(inst):
                raise UnsupportedTableError(
                    f"{self.view.base_path}: clustering {inst.timestamp} is pending, and hoodie's timeline server does not read "
                    "clustering plans: complete or roll it back with Apache Hudi, or use Apache Hudi's timeline server"
                )

    def _is_clustering(self, inst: Instant) -> bool:
        requested = self.timeline.requested_replace(inst)
        return requested is not None and requested.is_clustering
