"""``hoodie timeline-server``: a timeline server for several tables and jobs, in the
foreground until interrupted.

It binds to the given address (loopback by default; a wildcard only with
``--allow-wildcard``), serves only the ``--table`` paths, and requires the token from
``--token`` or ``HOODIE_TIMELINE_SERVER_TOKEN`` (a new one is made and printed when neither
is given), or none with ``--no-token`` (for Apache Hudi's writers, which send none; loopback
only). Jobs reach it with ``hoodie.filesystem.view.remote.host``/``port`` and the token.
"""
from __future__ import annotations

import os
import signal
import threading

from hoodie.cli.errors import UsageError
from hoodie.cli.output import stdout_console
from hoodie.config import options as o
from hoodie.table import HoodieTable
from hoodie.timeline_server import NO_TOKEN_FLAG, STORE_TYPES, MarkerBatching, StoreSettings, TimelineServer

TOKEN_ENV = "HOODIE_TIMELINE_SERVER_TOKEN"


def store_settings(kind: str, spillable_mem: int, rocksdb_path: str) -> StoreSettings:
    """The view store the options name, refused with the value named if unknown."""
    if kind.upper() not in STORE_TYPES:
        raise UsageError(f"--view-store {kind!r}: expected one of {', '.join(STORE_TYPES)}")
    if spillable_mem < 0:
        raise UsageError(f"--spillable-mem {spillable_mem}: expected bytes, 0 or more")
    return StoreSettings(kind.upper(), spillable_memory_bytes=spillable_mem, rocksdb_base_path=rocksdb_path)


def marker_batching(interval_ms: int, threads: int, max_dir_bytes: int) -> MarkerBatching:
    """The marker batching the options name, a bound out of range refused naming it."""
    return MarkerBatching(interval_ms, threads, max_dir_bytes=o.MARKERS_DIR_MAX_BYTES.convert(max_dir_bytes))


def serve(
    tables: list[str],
    host: str,
    port: int,
    token: str | None,
    batching: MarkerBatching,
    allow_wildcard: bool,
    store: StoreSettings | None = None,
    require_token: bool = True,
) -> None:
    if not tables:
        raise UsageError("name at least one table to serve (--table PATH)")
    if not require_token and token:
        raise UsageError(f"--token and {NO_TOKEN_FLAG} contradict each other: give one")
    opened = [HoodieTable.open(path) for path in tables]  # each must be a table
    if require_token:
        token = token or os.environ.get(TOKEN_ENV) or None
    server = TimelineServer(host, port, token, batching, allow_wildcard=allow_wildcard, require_token=require_token)
    for table in opened:
        server.add_table(table.base_path, table.storage, store)
    # before the address is printed: a client may stop the server as soon as it reads it
    stop = threading.Event()
    for sig in (signal.SIGINT, signal.SIGTERM):
        signal.signal(sig, lambda *_: stop.set())
    server.start()
    console = stdout_console()
    console.print(f"timeline server on http://{server.host}:{server.port} serving {len(opened)} table(s), views in {(store or StoreSettings()).kind}")
    for table in opened:
        console.print(f"  {table.base_path}")
    if not require_token:
        console.print("no token required (loopback only): Apache Hudi's writers may use it")
    elif not token:
        console.print(f"token (send as header X-Hoodie-Token): {server.token}")
    try:
        stop.wait()
    finally:
        server.stop()
        console.print("timeline server stopped")
