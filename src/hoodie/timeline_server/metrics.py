"""The timeline server's Prometheus metrics: requests by endpoint and status, request
latency, view syncs by kind, markers and marker files written. One registry per server,
so that two servers in a process (tests, a command serving several tables) count apart."""
from __future__ import annotations

from prometheus_client import CONTENT_TYPE_LATEST, CollectorRegistry, Counter, Histogram, generate_latest

_LATENCY_BUCKETS = (0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5)


class ServerMetrics:
    def __init__(self) -> None:
        self.registry = CollectorRegistry()
        self.requests = Counter("hoodie_timeline_server_requests", "Requests served", ["endpoint", "status"], registry=self.registry)
        self.latency = Histogram(
            "hoodie_timeline_server_request_seconds", "Request latency", ["endpoint"], buckets=_LATENCY_BUCKETS, registry=self.registry
        )
        self.syncs = Counter("hoodie_timeline_server_view_syncs", "File-system view syncs", ["kind"], registry=self.registry)
        self.markers = Counter("hoodie_timeline_server_markers_flushed", "Markers written to MARKERS files", registry=self.registry)
        self.marker_files = Counter("hoodie_timeline_server_marker_files_written", "MARKERS files (re)written", registry=self.registry)

    def observe(self, endpoint: str, status: int, seconds: float) -> None:
        self.requests.labels(endpoint, str(status)).inc()
        self.latency.labels(endpoint).observe(seconds)

    def synced(self, kind: str) -> None:
        self.syncs.labels(kind).inc()

    def flushed(self, markers: int, files: int) -> None:
        self.markers.inc(markers)
        self.marker_files.inc(files)

    def render(self) -> tuple[bytes, str]:
        return generate_latest(self.registry), CONTENT_TYPE_LATEST
