"""The timeline server's file-system views: one synced view per served table, and the
``/v1/hoodie/view/...`` endpoints that answer from it.

A table's view keeps its partition listings and what the completed writes wrote in the
configured store (:class:`~hoodie.table.view_stores.StoreSettings`), and its timeline
snapshot, which keeps no decoded commit metadata: what the server holds per table is its
store plus a fixed overhead. A request
whose ``timelinehash`` differs from the snapshot's makes the server load the timeline
again (one listing of ``.hoodie``) and sync the listings from what completed since
(:class:`~hoodie.table.synced_listings.SyncedListings`), counted by kind in
``hoodie_timeline_server_view_syncs_total`` — but only if the timeline may have changed
since the server last loaded it: the client names an instant the server does not have
(``lastinstantts``), or one of the server's pending instants moved on (a few ``exists``
calls). A hash the server has no reason to believe newer than its own (a reader's older
snapshot, or made up) costs no listing, so listings follow changes of the timeline, not
requests. A client whose ``lastinstantts`` the server still cannot see is answered 400, as
Java's server does. Views are built on worker threads so that marker requests on the
event loop never wait for a listing.

With ``hoodie.metadata.enable`` (the default) and a table whose metadata table has a
complete ``files`` partition, partitions and files not kept yet come from the metadata
table as of the synced timeline, and no partition folder is listed; its views then hold
committed files only (Apache Hudi 1.x's endpoints of files in flight see no more).

This module owns the per-table view state and its endpoints; markers are :mod:`.markers`'s.
"""
from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any

from hoodie.layout import HOODIE_FOLDER
from hoodie.metadata_table.listing import MetadataListing
from hoodie.metadata_table.metrics import MetadataMetrics
from hoodie.storage.base import Storage
from hoodie.storage.paths import under
from hoodie.table.fs_view import FileSystemView, PartitionLister
from hoodie.table.properties_file import load_table_config
from hoodie.table.remote_view import slice_dto
from hoodie.table.synced_listings import SyncedListings
from hoodie.table.table import HoodieTable
from hoodie.table.view_stores import StoreSettings
from hoodie.timeline.active import ActiveTimeline
from hoodie.timeline.instant import State
from hoodie.timeline_server.hudi_views import HUDI_ENDPOINTS, answer_hudi, group_dtos, last_instant_dto, timeline_dto

_MAX_ANSWERED = 64
# Pending instants the server checks for a change before loading its timeline again;
# with more (failed writes not yet rolled back), one listing costs less than the checks.
_MAX_PROBED = 8


class ViewBehind(Exception):
    """The client has seen an instant the server's storage does not show yet."""


class TableViews:
    """The synced latest view of one table."""

    def __init__(
        self, base_path: str, storage: Storage, settings: StoreSettings, on_sync: Callable[[str], None], metadata_metrics: MetadataMetrics | None = None
    ) -> None:
        self.base_path = base_path
        self.storage = storage
        self.settings = settings
        self.listings = SyncedListings(storage, base_path, settings.open(), settings.incremental_sync)
        # the metadata table's lookups for the views are recorded in the server's metrics
        self.listing = MetadataListing(settings.validate_metadata, metadata_metrics) if settings.metadata_table else None
        self._on_sync = on_sync
        self._lock = threading.Lock()
        self._timeline: ActiveTimeline | None = None
        self._view: FileSystemView | None = None
        self._hash = ""
        self._answered: set[str] = set()  # client timeline hashes the current view was checked for

    def view(self, last_instant: str = "", timeline_hash: str = "") -> FileSystemView:
        """The view, synced first when the client's timeline differs from the server's and
        the timeline may have changed since the server loaded it."""
        with self._lock:
            if self._view is None or (timeline_hash and timeline_hash not in self._answered and self._may_have_changed(last_instant)):
                self._refresh()
            if timeline_hash and timeline_hash not in self._answered:
                # a client whose timeline differs for good (a reader's older snapshot) is
                # not checked for again while the server's timeline stays as it is
                if len(self._answered) >= _MAX_ANSWERED:
                    self._answered = {self._hash}
                self._answered.add(timeline_hash)
            assert self._view is not None and self._timeline is not None
            if last_instant and not self._timeline.contains(last_instant):
                raise ViewBehind(f"the timeline server does not see instant {last_instant} of {self.base_path} yet")
            return self._view

    def refresh(self) -> None:
        with self._lock:
            self._refresh()

    def _may_have_changed(self, last_instant: str) -> bool:
        """Whether storage may hold a newer timeline than the server's: the client has seen
        an instant the server has not, or a pending instant of the server's completed, moved
        on or went away. Instants only appear or move on through files the server can
        check for; what else differs (an older snapshot, completed instants archived) leaves
        the latest view as it is."""
        timeline = self._timeline
        assert timeline is not None
        if last_instant and not timeline.contains(last_instant):
            return True
        pending = [i for i in timeline.instants if not i.is_completed]
        if timeline.layout_version >= 2 or len(pending) > _MAX_PROBED:
            return True  # a completed file's name holds its completion time: only a listing finds it
        exists = self.storage.exists
        for instant in pending:
            if exists(timeline.instant_path(instant.with_state(State.COMPLETED))) or not exists(timeline.instant_path(instant)):
                return True
            if instant.is_requested and exists(timeline.instant_path(instant.with_state(State.INFLIGHT))):
                return True
        return False

    def _refresh(self) -> None:
        # the server's timeline decodes commit metadata when asked and keeps none: what its
        # views need of it is kept in the store (the listings, and what writes wrote)
        timeline = self._timeline.reload() if self._timeline is not None else HoodieTable.open(self.base_path, self.storage).timeline.without_metadata_cache()
        kind = self.listings.sync(timeline)
        if kind is not None:
            self._on_sync(kind)
        self.listings.use_lister(lambda: self._lister(timeline))
        fresh = timeline.timeline_hash()
        if self._view is None or fresh != self._hash:
            committed = self.listings.committed_files(timeline)
            self._view = FileSystemView(self.storage, self.base_path, timeline, listings=self.listings, committed=committed)
            self._timeline, self._hash = timeline, fresh
            self._answered = {fresh}

    def _lister(self, timeline: ActiveTimeline) -> PartitionLister | None:
        """The table's metadata table as of ``timeline`` (its hoodie.properties read again:
        a writer may have created or dropped it), or None to list storage."""
        if self.listing is None:
            return None
        config = load_table_config(self.storage, under(self.base_path, HOODIE_FOLDER))
        return self.listing.lister(HoodieTable(self.base_path, self.storage, config, timeline))

    @property
    def timeline(self) -> ActiveTimeline:
        with self._lock:
            if self._timeline is None:
                self._refresh()
            assert self._timeline is not None
            return self._timeline

    def close(self) -> None:
        self.listings.store.close()


def answer(views: TableViews, endpoint: str, params: dict[str, Any]) -> Any:
    """The JSON answer of a view ``endpoint`` (the part after ``/v1/hoodie/view/``)."""
    if endpoint == "refresh/":
        views.refresh()
        return True
    if endpoint == "timeline/instants/all":
        return timeline_dto(views.timeline)
    if endpoint == "timeline/instant/last":
        return last_instant_dto(views.timeline)
    view = views.view(str(params.get("lastinstantts") or ""), str(params.get("timelinehash") or ""))
    if endpoint in HUDI_ENDPOINTS:
        return answer_hudi(view, endpoint, params)
    if endpoint == "partitions/all/":
        return view.all_partition_paths()
    if endpoint == "slices/partitions/latest/":
        view.prefetch_latest(params["partitions"])  # a cold server lists them side by side
        return {p: [slice_dto(s) for s in view.latest_slices(p)] for p in params["partitions"]}
    partition = params["partition"]
    if endpoint == "slices/partition/latest/":
        return [slice_dto(s) for s in view.latest_slices(partition)]
    if endpoint == "filegroups/all/partition/":
        return group_dtos(view.file_groups(partition), view.timeline)
    raise KeyError(endpoint)

