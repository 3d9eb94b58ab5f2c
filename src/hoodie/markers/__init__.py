"""Markers: one per data file a write creates, made before the file, so that a commit can
delete the files of failed or duplicate task attempts and a rollback can find everything a
failed write left. Written by the write handles; read by the commit and by rollback and
restore, which is why they sit below both ``writer`` and ``services``.

``direct``: a marker file per data file; ``timeline_based``: the ``MARKERS<n>`` files a
timeline server batches marker names into (read here, whoever wrote them); ``remote``:
creating a marker through a timeline server, direct if the server fails.
"""
from __future__ import annotations

from hoodie.markers.direct import DirectMarkers, MarkerEntry, log_file_written_by
from hoodie.markers.remote import ServerAddress, ServerClient, TimelineServerMarkers
from hoodie.markers.timeline_based import TIMELINE_SERVER_BASED
from hoodie.storage.base import Storage

__all__ = [
    "DIRECT",
    "TIMELINE_SERVER_BASED",
    "DirectMarkers",
    "MarkerEntry",
    "ServerAddress",
    "ServerClient",
    "TimelineServerMarkers",
    "log_file_written_by",
    "marker_writer",
]

DIRECT = "DIRECT"  # hoodie.write.markers.type values: DIRECT, TIMELINE_SERVER_BASED


def marker_writer(storage: Storage, base_path: str, instant: str, server: ServerClient | None) -> DirectMarkers | TimelineServerMarkers:
    """What creates the markers of ``instant``'s data files: the timeline server
    ``server`` is a client of, or marker files directly (None)."""
    if server is None:
        return DirectMarkers(storage, base_path, instant)
    return TimelineServerMarkers(storage, base_path, instant, server)
