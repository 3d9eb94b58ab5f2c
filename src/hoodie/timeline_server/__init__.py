"""The timeline server (RFC-03): an HTTP server a writer's driver embeds, or a command runs,
that batches the markers of a write's tasks into a few ``MARKERS<n>`` files and serves the
tables it was started for, nothing else.

:class:`TimelineServer` is the server; clients are below it (:mod:`hoodie.markers.remote`)
so that the write handles can reach it without importing it.
"""
from hoodie.timeline_server.markers import MarkerBatching
from hoodie.timeline_server.server import TimelineServer

__all__ = ["MarkerBatching", "TimelineServer"]
