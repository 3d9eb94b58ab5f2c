"""The view endpoints of Apache Hudi's ``RemoteHoodieTableFileSystemView`` (0.15 and
1.x) that hoodie's own clients do not call: base files and slices of a partition as of an
instant or at chosen instants, of the whole table, one file group's latest base file or
slice, its merged slice, the slices a compaction reads, file groups a replace commit
replaced, 1.x's slices with the files of writes in flight, pending compactions and
clustering, and the view's timeline — answered from the server's synced view in Hudi's
DTOs, with Java's ``AbstractTableFileSystemView`` semantics (the model is
:mod:`.hudi_groups`'s), as Apache Hudi's own timeline server answers them.

A pending clustering is refused (HTTP 422): hoodie does not read clustering plans, and
an answer without the file groups it rewrites would let a writer update them.

This module owns these endpoints; the synced view is :mod:`.views`'s.
"""
from __future__ import annotations

from collections.abc import Callable
from typing import Any

from hoodie import server_api as api
from hoodie.layout import InstantTime
from hoodie.table.file_group import BaseFile, FileGroup, FileSlice
from hoodie.table.fs_view import FileSystemView
from hoodie.table.remote_view import base_file_dto, group_dto, instant_dto, slice_dto
from hoodie.timeline.active import ActiveTimeline
from hoodie.timeline.instant import Action, Instant
from hoodie.timeline_server.hudi_groups import HudiView, at_or_before, visible_timeline, write_timeline

# the endpoints answered here, by the part of their path after /v1/hoodie/view/
_DESCRIBED = {e.view: e for e in api.HUDI_VIEWS}
HUDI_ENDPOINTS = tuple(_DESCRIBED)
# the endpoints that list partitions ahead of the requests that will ask for them
_LOAD = ("loadpartitions/", "loadallpartitions/")


def timeline_dto(timeline: ActiveTimeline, instants: list[Instant] | None = None) -> dict[str, Any]:
    """Hudi's TimelineDTO of ``instants`` (the view's timeline by default)."""
    chosen = visible_timeline(timeline) if instants is None else instants
    return {"instants": [instant_dto(i, timeline.layout_version) for i in chosen]}


def last_instant_dto(timeline: ActiveTimeline) -> list[dict[str, Any]]:
    """The last instant of the view's timeline, as a list of at most one InstantDTO."""
    instants = visible_timeline(timeline)
    return [instant_dto(instants[-1], timeline.layout_version)] if instants else []


def group_dtos(groups: list[FileGroup], timeline: ActiveTimeline) -> list[dict[str, Any]]:
    """FileGroupDTOs as Java sends them: the first carries the file groups' timeline,
    which Hudi's client requires, gives every group of the answer and judges their
    slices by (a slice whose instant is not on it is not committed)."""
    out = [group_dto(g) for g in groups]
    if out:
        out[0]["timeline"] = timeline_dto(timeline, write_timeline(timeline))
    return out


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
    if endpoint in _LOAD:  # list the partitions now, side by side: later requests ask for them
        view.prefetch_latest(view.all_partition_paths() if endpoint == "loadallpartitions/" else params["partitions"])
        return True
    if not _DESCRIBED[endpoint].takes("partition"):
        return _whole_table(hv, endpoint, params)
    partition = str(params["partition"])
    if endpoint.startswith("filegroups/"):
        return group_dtos(_file_groups(hv, endpoint, partition, params), hv.timeline)
    if endpoint.startswith("datafile"):
        return _base_files(hv, endpoint, partition, params)
    return _slices(hv, endpoint, partition, params)


def _whole_table(hv: HudiView, endpoint: str, params: dict[str, Any]) -> Any:
    """The answers about every partition (Java's, about the partitions its view has
    loaded: all of them once a client asked ``loadallpartitions/``)."""
    partitions = hv.view.all_partition_paths()
    hv.view.prefetch_latest(partitions)
    if endpoint == "datafiles/all/latest/":
        return [b for p in partitions for b in _base_files(hv, "datafiles/latest/partition", p, params)]
    if endpoint == "basefiles/all/beforeoron/":
        return {p: _base_files(hv, "datafiles/beforeoron/latest/", p, params) for p in partitions}
    if endpoint == "slices/all/beforeoron/latest/":
        return {p: _slices(hv, "slices/beforeoron/latest/", p, {**params, "includependingcompaction": "true"}) for p in partitions}
    # slices/range/latest/, datafiles/range/latest/: of each file group not replaced by the
    # last of the instants, its newest slice (base file) written at one of them
    instants: list[str] = params["instants"]
    if not instants:
        return []
    last, chosen = max(instants, key=InstantTime), set(instants)
    groups = [g for p in partitions for g in hv.groups_as_of(p, last)]
    if endpoint == "slices/range/latest/":
        return [slice_dto(s) for g in groups if (s := next((s for s in reversed(g.slices) if s.base_instant in chosen), None)) is not None]
    return [base_file_dto(b) for g in groups if (b := _latest_base(g, chosen.__contains__)) is not None]


def _file_groups(hv: HudiView, endpoint: str, partition: str, params: dict[str, Any]) -> list[FileGroup]:
    """The file groups an endpoint asks for, each with its slices as listed (Java's
    FileGroupDTO carries them all: Apache Hudi's client keeps those its timeline commits)."""
    replacers = hv.replacers()
    return [g for g in hv.listed_groups(partition) if _wanted(endpoint, params, replacers.get((partition, g.file_id)))]


def _wanted(endpoint: str, params: dict[str, Any], replacer: str | None) -> bool:
    """Whether a file group the instant ``replacer`` replaced (None: live) is one of those
    ``endpoint`` asks for."""
    if endpoint == "filegroups/all/partition/stateless/":
        return replacer is None
    if replacer is None:
        return False
    if endpoint == "filegroups/replaced/afteroron/":
        return at_or_before(str(params["mininstant"]), replacer)
    if endpoint == "filegroups/replaced/before/":
        return InstantTime(replacer) < InstantTime(str(params["maxinstant"]))
    if endpoint == "filegroups/replaced/beforeoron/":
        return at_or_before(replacer, str(params["maxinstant"]))
    return True  # filegroups/replaced/partition/


def _base_files(hv: HudiView, endpoint: str, partition: str, params: dict[str, Any]) -> list[dict[str, Any]]:
    if endpoint == "datafiles/beforeoron/latest/":
        max_instant = str(params["maxinstant"])
        groups = hv.groups_as_of(partition, max_instant)
        return [base_file_dto(b) for g in groups if (b := _latest_base(g, lambda t: at_or_before(t, max_instant))) is not None]
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
    if endpoint == "slices/partition/latest/inflight/":
        return [slice_dto(g.slices[-1]) for g in hv.listed_groups(partition) if g.slices]
    if endpoint == "slices/uncompacted/partition/latest/":  # under a pending compaction: the slice it reads
        pending = hv.pending_compactions()
        return [slice_dto(s) for g in hv.groups(partition) if (s := _before(g, pending.get((partition, g.file_id)))) is not None]
    max_instant = str(params["maxinstant"])
    if endpoint == "slices/merged/beforeoron/latest/":
        return [slice_dto(s) for g in hv.groups_as_of(partition, max_instant) if (s := hv.merged_slice(g, max_instant)) is not None]
    if endpoint == "slices/merged/beforeoron/inflight/latest/":
        current = str(params["currentinstant"])
        return [slice_dto(s) for g in hv.listed_as_of(partition, max_instant) if (s := hv.merged_including_inflight(g, max_instant, current)) is not None]
    if endpoint == "slice/merged/beforeoron/latest/":
        file_id = str(params["fileid"])
        groups = [g for g in hv.groups_as_of(partition, max_instant) if g.file_id == file_id]
        return _first([slice_dto(s) for g in groups if (s := hv.merged_slice(g, max_instant)) is not None])
    # slices/beforeoron/latest/: the newest slice at or before the instant; without
    # includependingcompaction, no slice of a file group a pending compaction rewrites
    include_pending = str(params.get("includependingcompaction", "false")).lower() == "true"
    pending = hv.pending_compactions()
    if hv.timeline.layout_version >= 2:
        wanted = [g for g in hv.listed_as_of(partition, max_instant) if include_pending or (partition, g.file_id) not in pending]
        return [slice_dto(s) for g in wanted if (s := hv.latest_committed(g, max_instant, include_pending)) is not None]
    out = []  # (table version 6: the newest slice with files; a pending compaction's has no base file yet)
    for g in hv.groups_as_of(partition, max_instant):
        if not include_pending and (partition, g.file_id) in pending:
            continue
        candidates = [s for s in reversed(g.slices) if at_or_before(s.base_instant, max_instant) and (s.base_file is not None or s.log_files)]
        if candidates:
            out.append(slice_dto(candidates[0]))
    return out


def _before(group: FileGroup, instant: str | None) -> FileSlice | None:
    """The newest slice of ``group`` opened before ``instant`` (the latest when None)."""
    if instant is None:
        return group.latest_slice
    return next((s for s in reversed(group.slices) if InstantTime(s.base_instant) < InstantTime(instant)), None)


def _latest_base(group: FileGroup, accept: Callable[[str], bool]) -> BaseFile | None:
    """The newest base file of ``group`` whose instant ``accept`` takes, or None."""
    return next((s.base_file for s in reversed(group.slices) if s.base_file is not None and accept(s.base_file.instant)), None)
