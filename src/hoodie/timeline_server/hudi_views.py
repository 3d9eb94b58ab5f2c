"""The view endpoints Apache Hudi's own writers call (``RemoteHoodieTableFileSystemView``
of Hudi 0.15 and 1.x, with the embedded server off and the view pointed at a hoodie
server): base files and slices of a partition as of an instant, one file group's latest
base file or slice, file groups a replace commit replaced, pending compactions and
clustering, and the view's timeline — answered from the server's synced view in Hudi's
DTOs, with Java's ``AbstractTableFileSystemView`` semantics.

Where the two views differ in form, this module gives Java's: a file group under a
pending compaction has, as in Java, a slice opened at the compaction instant holding the
logs written since (hoodie's own view merges them into the slice the compaction reads).
A pending clustering is refused (HTTP 422): hoodie does not read clustering plans, and
an answer without the file groups it rewrites would let a writer update them.

This module owns these endpoints; the synced view is :mod:`.views`'s.
"""
from __future__ import annotations

import dataclasses
from collections.abc import Callable
from typing import Any

from hoodie.errors import UnsupportedTableError
from hoodie.layout import InstantTime, parse_base_file_name
from hoodie.table.file_group import BaseFile, FileGroup, FileSlice, LogFile
from hoodie.table.fs_view import FileSystemView
from hoodie.table.remote_view import base_file_dto, group_dto, instant_dto, slice_dto
from hoodie.timeline.active import ActiveTimeline
from hoodie.timeline.compaction_plan import pending_plans
from hoodie.timeline.instant import Action, Instant

# endpoint → the query parameters it needs besides basepath
NEEDS: dict[str, tuple[str, ...]] = {
    "compactions/pending/": (),
    "logcompactions/pending/": (),
    "clustering/pending/": (),
    "datafiles/latest/partition": ("partition",),
    "datafiles/beforeoron/latest/": ("partition", "maxinstant"),
    "datafiles/all": ("partition",),
    "datafile/latest/partition": ("partition", "fileid"),
    "datafile/on/latest/": ("partition", "instant", "fileid"),
    "slices/partition/latest/stateless/": ("partition",),
    "slices/file/latest/": ("partition", "fileid"),
    "slices/beforeoron/latest/": ("partition", "maxinstant"),
    "slices/merged/beforeoron/latest/": ("partition", "maxinstant"),
    "slices/all": ("partition",),
    "filegroups/all/partition/stateless/": ("partition",),
    "filegroups/replaced/before/": ("partition", "maxinstant"),
    "filegroups/replaced/beforeoron/": ("partition", "maxinstant"),
    "filegroups/replaced/afteroron/": ("partition", "mininstant"),
    "filegroups/replaced/partition/": ("partition",),
    "loadpartitions/": ("partitions",),  # (a JSON list of partition paths)
    "loadallpartitions/": (),
}
HUDI_ENDPOINTS = tuple(NEEDS)
#: the endpoints Hudi's client calls with POST (parameters in the query, as the others)
POST_ENDPOINTS = ("loadpartitions/", "loadallpartitions/")
# the parameters that name instants (checked as instant times by the caller)
INSTANT_PARAMS = ("maxinstant", "mininstant", "instant")


def view_timeline(timeline: ActiveTimeline) -> list[Instant]:
    """Java's view timeline: completed writes and pending (log) compactions."""
    pending_ok = (Action.COMPACTION, Action.LOG_COMPACTION)
    actions = (*Action.WRITE_ACTIONS, *pending_ok)
    return [i for i in timeline.instants if i.action in actions and (i.is_completed or i.action in pending_ok)]


def timeline_dto(timeline: ActiveTimeline) -> dict[str, Any]:
    """Hudi's TimelineDTO of the view's timeline."""
    return {"instants": [instant_dto(i, timeline.layout_version) for i in view_timeline(timeline)]}


def last_instant_dto(timeline: ActiveTimeline) -> list[dict[str, Any]]:
    """The last instant of the view's timeline, as a list of at most one InstantDTO."""
    instants = view_timeline(timeline)
    return [instant_dto(instants[-1], timeline.layout_version)] if instants else []


def group_dtos(groups: list[FileGroup], timeline: ActiveTimeline) -> list[dict[str, Any]]:
    """FileGroupDTOs as Java sends them: the first carries the view's timeline, which
    Hudi's client requires and gives every group of the answer."""
    out = [group_dto(g) for g in groups]
    if out:
        out[0]["timeline"] = timeline_dto(timeline)
    return out


def _le(a: str, b: str) -> bool:
    return InstantTime(a) <= InstantTime(b)


class HudiView:
    """One request's view of a table in Java's terms."""

    def __init__(self, view: FileSystemView) -> None:
        self.view = view
        self.timeline = view.timeline
        self._compactions: dict[tuple[str, str], str] | None = None
        self._replacers: dict[tuple[str, str], str] | None = None

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
        if compaction is None or latest is None or not _le(latest.base_instant, compaction) or latest.base_instant == compaction:
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
        slices = [s for s in group.slices if _le(s.base_instant, max_instant)]
        if not slices:
            return None
        last = slices[-1]
        if len(slices) > 1 and last.base_instant == self.pending_compactions().get((group.partition_path, group.file_id)):
            reads = slices[-2]
            return dataclasses.replace(reads, log_files=reads.log_files + last.log_files)
        return last

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


def _first(items: list[Any]) -> list[Any]:
    return items[:1]


def answer_hudi(view: FileSystemView, endpoint: str, params: dict[str, Any]) -> Any:
    """The JSON answer of one of :data:`HUDI_ENDPOINTS` (the part after ``/v1/hoodie/view/``);
    ``partition`` (trimmed) and ``partitions`` (a list) come checked by the caller."""
    hv = HudiView(view)
    if endpoint == "compactions/pending/":
        return hv.compaction_ops(Action.COMPACTION)
    if endpoint == "logcompactions/pending/":
        return hv.compaction_ops(Action.LOG_COMPACTION)
    if endpoint == "clustering/pending/":
        hv.check_no_pending_clustering()
        return []
    if endpoint in POST_ENDPOINTS:  # list the partitions now, side by side: later requests ask for them
        view.prefetch_latest(view.all_partition_paths() if endpoint == "loadallpartitions/" else params["partitions"])
        return True
    partition = str(params["partition"])
    if endpoint.startswith("filegroups/"):
        return group_dtos(_file_groups(hv, endpoint, partition, params), hv.timeline)
    if endpoint.startswith("datafile"):
        return _base_files(hv, endpoint, partition, params)
    return _slices(hv, endpoint, partition, params)


def _file_groups(hv: HudiView, endpoint: str, partition: str, params: dict[str, Any]) -> list[FileGroup]:
    if endpoint == "filegroups/all/partition/stateless/":
        return hv.groups(partition)
    if endpoint == "filegroups/replaced/partition/":
        return hv.replaced(partition, lambda t: True)
    if endpoint == "filegroups/replaced/afteroron/":
        return hv.replaced(partition, lambda t: _le(str(params["mininstant"]), t))
    max_instant = str(params["maxinstant"])
    if endpoint == "filegroups/replaced/before/":
        return hv.replaced(partition, lambda t: InstantTime(t) < InstantTime(max_instant))
    return hv.replaced(partition, lambda t: _le(t, max_instant))  # filegroups/replaced/beforeoron/


def _base_files(hv: HudiView, endpoint: str, partition: str, params: dict[str, Any]) -> list[dict[str, Any]]:
    if endpoint == "datafiles/beforeoron/latest/":
        max_instant = str(params["maxinstant"])
        groups = hv.groups_as_of(partition, max_instant)
        return [base_file_dto(b) for g in groups if (b := _latest_base(g, lambda t: _le(t, max_instant))) is not None]
    if endpoint == "datafiles/all":
        return [base_file_dto(s.base_file) for g in hv.groups(partition) for s in reversed(g.slices) if s.base_file is not None]
    file_id = str(params.get("fileid", ""))
    if endpoint == "datafile/on/latest/":  # the base file written at an instant, unless replaced by then
        at = str(params["instant"])
        on = [g for g in hv.groups_as_of(partition, at) if g.file_id == file_id]
        return _first([base_file_dto(b) for g in on if (b := _latest_base(g, lambda t: t == at)) is not None])
    every = endpoint == "datafiles/latest/partition"
    bases = [base_file_dto(b) for g in hv.groups(partition) if (every or g.file_id == file_id) and (b := _latest_base(g, lambda t: True)) is not None]
    return bases if every else _first(bases)


def _slices(hv: HudiView, endpoint: str, partition: str, params: dict[str, Any]) -> list[dict[str, Any]]:
    if endpoint == "slices/partition/latest/stateless/":
        return [slice_dto(s) for g in hv.groups(partition) if (s := g.latest_slice) is not None]
    if endpoint == "slices/file/latest/":
        group = hv.group(partition, str(params["fileid"]))
        return [slice_dto(group.latest_slice)] if group is not None and group.latest_slice is not None else []
    if endpoint == "slices/all":
        return [slice_dto(s) for g in hv.groups(partition) for s in reversed(g.slices)]
    max_instant = str(params["maxinstant"])
    if endpoint == "slices/merged/beforeoron/latest/":
        return [slice_dto(s) for g in hv.groups_as_of(partition, max_instant) if (s := hv.merged_slice(g, max_instant)) is not None]
    # slices/beforeoron/latest/: the newest non-empty slice at or before the instant; without
    # includependingcompaction, no slice of a file group a pending compaction rewrites
    include_pending = str(params.get("includependingcompaction", "false")).lower() == "true"
    out = []
    for g in hv.groups_as_of(partition, max_instant):
        if not include_pending and (partition, g.file_id) in hv.pending_compactions():
            continue
        candidates = [s for s in reversed(g.slices) if _le(s.base_instant, max_instant) and (s.base_file is not None or s.log_files)]
        if candidates:
            out.append(slice_dto(candidates[0]))
    return out


def _latest_base(group: FileGroup, accept: Callable[[str], bool]) -> BaseFile | None:
    """The newest base file of ``group`` whose instant ``accept`` takes, or None."""
    return next((s.base_file for s in reversed(group.slices) if s.base_file is not None and accept(s.base_file.instant)), None)
