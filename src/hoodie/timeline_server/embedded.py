"""Embedded timeline servers: one per application (this process, or a Spark application),
started by its first write that needs one, reused by the writes after it (each adds its
table) and stopped with the application (:func:`stop_embedded`, and at interpreter exit).

A reused server keeps the address, port and marker batching it was started with. An
address that resolves to a wildcard is refused unless
``hoodie.embed.timeline.server.allow.wildcard`` is true.
"""
from __future__ import annotations

import atexit
import logging
import threading

from hoodie.config import options as o
from hoodie.config.options import HoodieConfig
from hoodie.errors import ConfigError
from hoodie.markers import ServerAddress
from hoodie.storage.base import Storage
from hoodie.table.view_stores import StoreSettings
from hoodie.timeline_server.markers import MarkerBatching
from hoodie.timeline_server.server import TimelineServer

log = logging.getLogger(__name__)
PROCESS = "process"
_SERVERS: dict[str, TimelineServer] = {}
_LOCK = threading.Lock()


def embedded_server(application: str, host: str, config: HoodieConfig) -> tuple[TimelineServer, bool]:
    """The running embedded server of ``application``, started on ``host`` if there is
    none yet (port and batching from ``config``); and whether it was started now."""
    with _LOCK:
        server = _SERVERS.get(application)
        if server is not None and server.running:
            return server, False
        batching = MarkerBatching(
            config.get(o.MARKERS_BATCH_INTERVAL_MS), config.get(o.MARKERS_BATCH_THREADS), max_dir_bytes=config.get(o.MARKERS_DIR_MAX_BYTES)
        )
        allow = o.EMBED_TIMELINE_SERVER_ALLOW_WILDCARD
        server = TimelineServer(
            host, config.get(o.EMBED_TIMELINE_SERVER_PORT), batching=batching, allow_wildcard=config.get(allow), allow_with=f"{allow.key}=true"
        ).start()
        _SERVERS[application] = server
        return server, True


def client_address(server: TimelineServer, config: HoodieConfig) -> ServerAddress:
    """How a write's tasks call ``server`` (timeouts and retries from the write's options)."""
    return ServerAddress.configured(server.host, server.port, server.token, config)


def process_server_for(base_path: str, storage: Storage, config: HoodieConfig) -> ServerAddress | None:
    """The embedded server of this process, on loopback, serving ``base_path``; None (the
    write makes direct markers) if it cannot start, e.g. its configured port is taken."""
    try:
        server, _ = embedded_server(PROCESS, "127.0.0.1", config)
    except ConfigError as e:
        log.warning("%s; this write creates direct markers", e)
        return None
    server.add_table(base_path, storage, StoreSettings.from_config(config))
    return client_address(server, config)


def running_applications() -> list[str]:
    with _LOCK:
        return list(_SERVERS)


def stop_embedded(application: str | None = None) -> None:
    """Stop the embedded server of ``application`` (None: every one)."""
    with _LOCK:
        keys = list(_SERVERS) if application is None else [application]
        servers = [_SERVERS.pop(k) for k in keys if k in _SERVERS]
    for server in servers:
        server.stop()


atexit.register(stop_embedded)
