"""One timeline server: an aiohttp application on its own event-loop thread, bound to a
given address (loopback by default, never a wildcard unless asked), serving the tables
added to it, with a token every ``/v1/`` request must carry — or, when asked, none: Apache
Hudi's writers send no token, so a server may accept them without one, and then binds to
loopback addresses only (only processes of its own machine reach it).

Whether an address is a wildcard is decided by what the name resolves to (``0``, ``0x0``,
``::0`` and ``""`` are ``0.0.0.0`` or ``::`` as much as those are), and the server binds
to the addresses it checked, not to the name resolved again.

``TimelineServer(host, port).start()`` returns once the socket is bound (port 0: a free
one, read back from :attr:`address`); :meth:`stop` answers queued marker requests, closes
the socket and ends the thread. The embedded server of a write and the ``hoodie
timeline-server`` command both run this.
"""
from __future__ import annotations

import asyncio
import ipaddress
import secrets
import socket
import threading
from concurrent.futures import Future
from typing import cast

from aiohttp import web

from hoodie.errors import ConfigError
from hoodie.server_calls import ServerAddress
from hoodie.storage.base import Storage
from hoodie.storage.factory import normalize_path, storage_for
from hoodie.table.view_stores import StoreSettings
from hoodie.timeline_server.app import ServedTables, make_app
from hoodie.timeline_server.markers import MarkerBatching, MarkerService
from hoodie.timeline_server.metrics import ServerMetrics
from hoodie.timeline_server.views import TableViews

ALLOW_WILDCARD_FLAG = "--allow-wildcard"
NO_TOKEN_FLAG = "--no-token"


def bind_addresses(host: str) -> list[str]:
    """The addresses a server told to listen on ``host`` binds (what the name resolves
    to; an empty name is every interface), in the resolver's order."""
    try:
        infos = socket.getaddrinfo(host or None, 0, type=socket.SOCK_STREAM, flags=socket.AI_PASSIVE)
    except (socket.gaierror, UnicodeError) as e:
        raise ConfigError(f"the timeline server cannot bind to {host!r}: {e}") from None
    return list(dict.fromkeys(str(info[4][0]) for info in infos))


def is_loopback(address: str) -> bool:
    """Whether a numeric ``address`` reaches this machine only (``::ffff:127.0.0.1`` too)."""
    ip = ipaddress.ip_address(address)
    mapped = ip.ipv4_mapped if isinstance(ip, ipaddress.IPv6Address) else None
    return ip.is_loopback or (mapped is not None and mapped.is_loopback)


def is_wildcard(address: str) -> bool:
    """Whether a numeric ``address`` means every interface (``::ffff:0.0.0.0`` too)."""
    ip = ipaddress.ip_address(address)
    mapped = ip.ipv4_mapped if isinstance(ip, ipaddress.IPv6Address) else None
    return ip.is_unspecified or (mapped is not None and mapped.is_unspecified)


def _check_tokenless(host: str, addresses: list[str], token: str | None) -> None:
    """Refuses a server without a token anywhere but on loopback addresses: anyone who
    reaches it could create markers and read the views of its tables."""
    if token:
        raise ConfigError(f"the timeline server was given a token and told to accept requests without one ({NO_TOKEN_FLAG}): choose one")
    outside = next((a for a in addresses if not is_loopback(a)), None)
    if outside is not None:
        raise ConfigError(
            f"the timeline server accepts requests without a token ({NO_TOKEN_FLAG}) only on a loopback address; "
            f"{host!r} is {outside}, which other machines may reach: bind to 127.0.0.1 or ::1, or require a token"
        )


class TimelineServer:
    """``allow_with`` is what a user sets to allow a wildcard address, named when one is
    refused (the command's flag; an option for the embedded server). ``require_token=False``
    accepts ``/v1/`` requests without a token (Apache Hudi's clients send none): only on
    loopback addresses, and not with a ``token``."""

    def __init__(
        self,
        host: str = "127.0.0.1",
        port: int = 0,
        token: str | None = None,
        batching: MarkerBatching | None = None,
        allow_wildcard: bool = False,
        allow_with: str = ALLOW_WILDCARD_FLAG,
        require_token: bool = True,
    ) -> None:
        self._bind = bind_addresses(host)
        if not require_token:
            _check_tokenless(host, self._bind, token)
        wildcard = next((a for a in self._bind if is_wildcard(a)), None)
        if wildcard is not None and not allow_wildcard:
            raise ConfigError(
                f"the timeline server does not bind to {host!r}: it is the wildcard address {wildcard} (every interface); "
                f"bind to the driver's address, or allow it with {allow_with}"
            )
        self.host = host
        self.port = port
        self.require_token = require_token
        # (no token: the server's clients send "", which it does not check)
        self.token = (token or secrets.token_urlsafe(32)) if require_token else ""
        self.metrics = ServerMetrics()
        self.markers = MarkerService(batching or MarkerBatching(), on_flush=self.metrics.flushed)
        self.tables = ServedTables({})
        self._loop: asyncio.AbstractEventLoop | None = None
        self._thread: threading.Thread | None = None
        self._runner: web.AppRunner | None = None

    @property
    def address(self) -> ServerAddress:
        return ServerAddress(self.host, self.port, self.token)

    @property
    def running(self) -> bool:
        return self._thread is not None and self._thread.is_alive()

    def add_table(self, base_path: str, storage: Storage | None = None, views: StoreSettings | None = None) -> None:
        """Serve the table at ``base_path`` (requests naming any other path are refused),
        its views in the store ``views`` names (default: memory). A table served already
        keeps its views."""
        path = normalize_path(base_path)
        if path not in self.tables.tables:
            settings = views or StoreSettings()
            self.tables.tables[path] = TableViews(path, storage or storage_for(path), settings, self.metrics.synced, self.metrics.metadata)

    def start(self) -> TimelineServer:
        ready: Future[int] = Future()
        self._loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self._serve, args=(ready,), name=f"hoodie-timeline-server-{self.host}", daemon=True)
        self._thread.start()
        try:
            self.port = ready.result(timeout=30)
        except OSError as e:
            self._thread.join(timeout=5)
            raise ConfigError(f"the timeline server cannot listen on {self.host}:{self.port}: {e.strerror or e}") from e
        return self

    def _serve(self, ready: Future[int]) -> None:
        loop = self._loop
        assert loop is not None
        asyncio.set_event_loop(loop)
        try:
            loop.run_until_complete(self._open(ready))
        except BaseException as e:
            if not ready.done():
                ready.set_exception(e)
            loop.close()
            return
        loop.run_forever()
        loop.close()

    async def _open(self, ready: Future[int]) -> None:
        self.markers.start()
        app = make_app(self.tables, self.markers, self.metrics, self.token if self.require_token else None)
        # a stopping server waits this long for requests in progress (markers are answered
        # by then: the marker service refuses new ones and answers the queued first)
        self._runner = web.AppRunner(app, access_log=None, handle_signals=False, shutdown_timeout=5.0)
        await self._runner.setup()
        # SO_REUSEADDR: a restarted server takes its port back from connections in
        # TIME_WAIT (on Linux it never lets two servers listen on one port)
        # the addresses checked above, not the name resolved again (asyncio binds a list)
        site = web.TCPSite(self._runner, cast(str, self._bind), self.port, reuse_address=True)
        await site.start()
        server = site._server
        sockets = getattr(server, "sockets", None) or []
        ready.set_result(sockets[0].getsockname()[1] if sockets else self.port)

    async def _close(self) -> None:
        await self.markers.stop()
        if self._runner is not None:
            await self._runner.cleanup()
        for views in self.tables.tables.values():
            views.close()

    def stop(self) -> None:
        loop, thread = self._loop, self._thread
        if loop is None or thread is None or not thread.is_alive():
            return
        asyncio.run_coroutine_threadsafe(self._close(), loop).result(timeout=30)
        loop.call_soon_threadsafe(loop.stop)
        thread.join(timeout=30)
        self._thread = None

    def __enter__(self) -> TimelineServer:
        return self.start() if not self.running else self

    def __exit__(self, *exc: object) -> None:
        self.stop()
