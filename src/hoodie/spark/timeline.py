"""The embedded timeline server of a Spark application: started on the driver by the
application's first write that uses timeline-server-based markers, bound to
``spark.driver.host`` on ``hoodie.embed.timeline.server.port`` (0: a free port), reused
by the application's later writes and stopped with it. A driver host that resolves to a
wildcard address, however spelt, is refused (the write makes direct markers) unless
``hoodie.embed.timeline.server.allow.wildcard`` is true.

When the server starts, one Spark task calls its ``/health`` from an executor; if that
fails the write logs which host and port could not be reached and its tasks create direct
markers instead (the write itself never fails for the server). The server's token reaches
the executors inside the tasks' write context.
"""
from __future__ import annotations

import logging

from pyspark.sql import SparkSession

from hoodie import server_api as api
from hoodie.config.options import HoodieConfig
from hoodie.errors import ConfigError
from hoodie.markers import ServerAddress
from hoodie.server_calls import ServerCallError
from hoodie.storage.base import Storage
from hoodie.table.view_stores import StoreSettings
from hoodie.timeline_server.embedded import client_address, embedded_server, running_applications, stop_embedded

log = logging.getLogger(__name__)
_PREFIX = "spark:"
_UNREACHABLE: set[str] = set()


def probe(address: ServerAddress) -> str:
    """Empty if ``/health`` answers, else why not (runs in an executor)."""
    try:
        api.call_once(address, api.HEALTH, {})
    except ServerCallError as e:
        return str(e)
    return ""


def driver_server_for(spark: SparkSession, base_path: str, storage: Storage, config: HoodieConfig) -> ServerAddress | None:
    """The address of the application's embedded server, serving ``base_path``; None if
    the executors cannot reach it (then the write uses direct markers)."""
    sc = spark.sparkContext
    application = _PREFIX + sc.applicationId
    _stop_servers_of_stopped_applications(application)
    host = sc.getConf().get("spark.driver.host") or "127.0.0.1"
    try:
        server, started = embedded_server(application, host, config)
    except ConfigError as e:  # e.g. the configured port is taken: the write goes on
        log.warning("%s; this write creates direct markers", e)
        return None
    server.add_table(base_path, storage, StoreSettings.from_config(config))
    address = client_address(server, config)
    if started:
        quick = ServerAddress(address.host, address.port, address.token, timeout_s=10.0, retries=1)
        problem = sc.parallelize([quick], 1).map(probe).collect()[0]
        if problem:
            _UNREACHABLE.add(application)
            log.warning(
                "executors cannot reach the embedded timeline server at %s:%d (%s); writes of this application create direct markers",
                address.host, address.port, problem,
            )
    return None if application in _UNREACHABLE else address


def _stop_servers_of_stopped_applications(current: str) -> None:
    """A Spark application that has stopped has no use for its server (a new
    SparkContext in the same process is another application)."""
    for application in running_applications():
        if application.startswith(_PREFIX) and application != current:
            stop_embedded(application)
