"""The timeline server's Prometheus metrics: requests by endpoint and status, request
latency, view syncs by kind, markers and marker files written, and the work its views did
on the served tables' metadata tables (``hoodie_metadata_*``: each metric of
:data:`hoodie.metadata_table.metrics.METRICS` as counters of its operations, their seconds
and its amounts). One registry per server, so that two servers in a process (tests, a
command serving several tables) count apart."""
from __future__ import annotations

from collections.abc import Iterator

from prometheus_client import CONTENT_TYPE_LATEST, CollectorRegistry, Counter, Histogram, generate_latest
from prometheus_client.core import CounterMetricFamily
from prometheus_client.metrics_core import Metric as PrometheusMetric

from hoodie.metadata_table.metrics import METRICS, Figure, MetadataMetrics

_LATENCY_BUCKETS = (0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5)
_METADATA_PREFIX = "hoodie_metadata_"


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
        #: what the served tables' views asked of their metadata tables
        self.metadata = MetadataMetrics()
        self.registry.register(MetadataCollector(self.metadata))

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


class MetadataCollector:
    """``metrics`` as Prometheus counters, read when scraped: for each metric ``m``,
    ``hoodie_metadata_<m>_total`` (operations), ``hoodie_metadata_<m>_seconds_total`` and
    ``hoodie_metadata_<m>_<amount>_total``, labelled by the metric's label."""

    def __init__(self, metrics: MetadataMetrics) -> None:
        self.metrics = metrics

    def describe(self) -> Iterator[PrometheusMetric]:
        return self._families(with_samples=False)

    def collect(self) -> Iterator[PrometheusMetric]:
        return self._families(with_samples=True)

    def _families(self, with_samples: bool) -> Iterator[PrometheusMetric]:
        figures = self.metrics.figures() if with_samples else []
        for metric in METRICS:
            labels = [metric.label] if metric.label else []
            name = _METADATA_PREFIX + metric.name
            count = CounterMetricFamily(name, f"{metric.doc}: operations", labels=labels)
            seconds = CounterMetricFamily(f"{name}_seconds", f"{metric.doc}: seconds taken", labels=labels)
            amounts = {a: CounterMetricFamily(f"{name}_{a}", f"{metric.doc}: {a.replace('_', ' ')}", labels=labels) for a in metric.amounts}
            mine = [(label, f) for m, label, f in figures if m is metric]
            if with_samples and not mine and not labels:
                mine = [("", Figure())]  # an unlabelled counter reads 0 until its first operation
            for label, figure in mine:
                values = [label] if labels else []
                count.add_metric(values, figure.count)
                seconds.add_metric(values, figure.seconds)
                for a, family in amounts.items():
                    family.add_metric(values, figure.amounts.get(a, 0))
            yield count
            yield seconds
            yield from amounts.values()
