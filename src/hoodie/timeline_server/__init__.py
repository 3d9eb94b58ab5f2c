"""The timeline server (RFC-03): an HTTP server a writer's driver embeds, or a command runs,
that serves the file-system views of the tables it was started for (kept in a memory,
spillable or RocksDB store and synced incrementally), batches the markers of a write's
tasks into a few ``MARKERS<n>`` files, and serves nothing else.

:class:`TimelineServer` is the server; clients are below it (:mod:`hoodie.markers.remote`,
:mod:`hoodie.table.remote_view`) so that writers and readers reach it without importing it.
"""
from hoodie.table.view_stores import STORE_TYPES, StoreSettings
from hoodie.timeline_server.markers import MarkerBatching
from hoodie.timeline_server.server import NO_TOKEN_FLAG, TimelineServer

__all__ = ["NO_TOKEN_FLAG", "STORE_TYPES", "MarkerBatching", "StoreSettings", "TimelineServer"]
