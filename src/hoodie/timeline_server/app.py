"""The timeline server's HTTP interface (aiohttp): Apache Hudi's REST paths and parameter
names, JSON bodies, plus ``/health`` and a Prometheus ``/metrics`` — routed and checked
as :mod:`hoodie.server_api` describes them.

Every ``/v1/`` request must carry the server's token (header ``X-Hoodie-Token``), and
``/health`` names the served tables only to a request that carries it (a server started
without a token, on loopback only, checks none: Apache Hudi's clients send none); a path
it names must lie inside one of the tables the server was started for (marker directories
exactly ``<table>/.hoodie/.temp/<instant>``, marker names checked like every recorded
path). A refused request reads and writes nothing and is answered 4xx with a one-line
reason; an oversized body 413; a full marker queue 503; a marker past the names kept
for its directory 507.

This module owns serving the endpoints and the checks that depend on the served tables;
the marker batching is :mod:`.markers`'s, the counters :mod:`.metrics`'s.
"""
from __future__ import annotations

import asyncio
import hmac
import time
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass
from typing import cast

from aiohttp import web
from aiohttp.typedefs import Middleware

from hoodie import server_api as api
from hoodie.errors import HoodieError, RequestError, UnsafePathError
from hoodie.layout import HOODIE_FOLDER, TEMP_FOLDER
from hoodie.server_calls import STATUS_FULL, TABLE_TROUBLE, TOKEN_HEADER
from hoodie.storage.base import Storage
from hoodie.storage.paths import under
from hoodie.timeline_server.markers import MarkerService, Overloaded, TooManyMarkers
from hoodie.timeline_server.metrics import ServerMetrics
from hoodie.timeline_server.views import TableViews, ViewBehind, answer

MAX_BODY_BYTES = 64 * 1024


class Refused(Exception):
    """A request the server will not serve; ``status`` says why in HTTP terms."""

    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status = status


@dataclass
class ServedTables:
    """The tables a server serves (their views), by normalised base path."""

    tables: dict[str, TableViews]

    def marker_dir(self, marker_dir: str) -> tuple[Storage, str]:
        """The table storage and the marker directory ``marker_dir`` names (its instant
        checked by the endpoint's description)."""
        head, _, instant = marker_dir.rstrip("/").rpartition("/")
        for base, views in self.tables.items():
            if head == under(base, HOODIE_FOLDER, TEMP_FOLDER):
                return views.storage, under(head, instant)
        raise Refused(403, f"markerdirpath {marker_dir[:200]!r} is not the marker folder of a table this server serves")

    def views(self, base_path: str) -> TableViews:
        views = self.tables.get(base_path.rstrip("/"))
        if views is None:
            raise Refused(403, f"basepath {base_path[:200]!r} is not a table this server serves")
        return views


async def _json_body(request: web.Request) -> dict[str, object]:
    try:
        body = await request.json()
    except ValueError as e:
        raise Refused(400, f"body must be a JSON object: {e}") from None
    if not isinstance(body, dict):
        raise Refused(400, "body must be a JSON object")
    return body


async def _given(request: web.Request, endpoint: api.Endpoint) -> Mapping[str, object]:
    """What a request gives, where its endpoint's description says it travels."""
    return await _json_body(request) if endpoint.body else request.query


def _checked(endpoint: api.Endpoint, given: Mapping[str, object]) -> dict[str, object]:
    """The parameters ``endpoint`` describes, checked (an answer never echoes an
    unchecked value); a bad one refused with 400."""
    try:
        return endpoint.checked(given)
    except (RequestError, UnsafePathError) as e:
        raise Refused(400, str(e)) from None


Handler = Callable[[web.Request], Awaitable[web.StreamResponse]]


def _carries(request: web.Request, token: str | None) -> bool:
    """Whether ``request`` carries the server's token (None: the server requires none)."""
    if token is None:
        return True
    given = request.headers.get(TOKEN_HEADER, "")
    return bool(token) and hmac.compare_digest(given.encode(), token.encode())


def _guard(token: str | None, metrics: ServerMetrics) -> Middleware:
    """The middleware every request passes: the token of ``/v1/`` requests, refusals as
    one-line JSON errors, and the request counted and timed."""

    @web.middleware
    async def guard(request: web.Request, handler: Handler) -> web.StreamResponse:
        started = time.perf_counter()
        resource = request.match_info.route.resource
        endpoint = resource.canonical if resource is not None else "unknown"
        status = 500
        try:
            if (request.content_length or 0) > MAX_BODY_BYTES:
                raise Refused(413, f"request body of {request.content_length} bytes; at most {MAX_BODY_BYTES}")
            if request.path.startswith("/v1/") and not _carries(request, token):
                raise Refused(401, "wrong token" if request.headers.get(TOKEN_HEADER) else f"missing token (header {TOKEN_HEADER})")
            response = await handler(request)
            status = response.status
            return response
        except Refused as e:
            status = e.status
            return web.json_response({"error": str(e)}, status=e.status)
        except Overloaded as e:
            status = 503
            return web.json_response({"error": str(e)}, status=503)
        except TooManyMarkers as e:
            status = STATUS_FULL
            return web.json_response({"error": str(e)}, status=STATUS_FULL)
        except web.HTTPException as e:
            status = e.status
            raise
        except HoodieError as e:
            # the table's trouble, not the server's: retrying would not help
            status = TABLE_TROUBLE
            return web.json_response({"error": f"{type(e).__name__}: {e}"}, status=TABLE_TROUBLE)
        finally:
            metrics.observe(endpoint, status, time.perf_counter() - started)

    return guard


def _view_handler(tables: ServedTables, endpoint: api.Endpoint) -> Handler:
    """The handler of one ``/v1/hoodie/view/`` endpoint."""

    async def handler(request: web.Request) -> web.Response:
        given = await _given(request, endpoint)
        # what the endpoint does not describe passes as given (Hudi's clients send some);
        # what it describes, only as checked here
        params: dict[str, object] = {**given, **_checked(endpoint, given)}
        views = tables.views(str(params["basepath"]))
        try:
            # listings and metadata reads block: off the loop that answers markers
            result = await asyncio.get_running_loop().run_in_executor(None, answer, views, endpoint.view, params)
        except ViewBehind as e:
            raise Refused(400, str(e)) from None
        return web.json_response(result)

    return handler


def make_app(tables: ServedTables, markers: MarkerService, metrics: ServerMetrics, token: str | None) -> web.Application:
    """The aiohttp application of one server (``token`` None: requests carry none)."""

    async def health(request: web.Request) -> web.Response:
        # anyone may ask whether the server is up; which tables it serves only with the token
        if not _carries(request, token):
            return web.json_response({"status": "ok"})
        return web.json_response({"status": "ok", "tables": sorted(tables.tables)})

    async def prometheus(request: web.Request) -> web.Response:
        body, content_type = metrics.render()
        return web.Response(body=body, headers={"Content-Type": content_type})

    async def marker_params(request: web.Request, endpoint: api.Endpoint) -> tuple[Storage, str, dict[str, object]]:
        """The table storage and marker directory a marker request names, and its checked parameters."""
        params = _checked(endpoint, await _given(request, endpoint))
        return (*tables.marker_dir(str(params["markerdirpath"])), params)

    async def create_marker(request: web.Request) -> web.Response:
        storage, marker_dir, params = await marker_params(request, api.MARKER_CREATE)
        return web.json_response(await markers.create(storage, marker_dir, str(params["markername"])))

    async def create_markers(request: web.Request) -> web.Response:
        """hoodie's extension: the markers of one task at once, JSON ``{"markerdirpath":
        ..., "markernames": [...]}``; answers a list of booleans in the same order."""
        storage, marker_dir, params = await marker_params(request, api.MARKER_CREATE_ALL)
        names = cast(list[str], params["markernames"])
        results = await asyncio.gather(*(markers.create(storage, marker_dir, n) for n in names))
        return web.json_response(list(results))

    def markers_of_type(endpoint: api.Endpoint, *suffixes: str) -> Handler:
        """The markers of a directory whose IO type is one of ``suffixes`` (all: none given)."""

        async def handler(request: web.Request) -> web.Response:
            storage, marker_dir, _ = await marker_params(request, endpoint)
            names = await markers.names(storage, marker_dir)
            return web.json_response([n for n in names if n.endswith(suffixes)] if suffixes else names)

        return handler

    async def marker_dir_exists(request: web.Request) -> web.Response:
        storage, marker_dir, _ = await marker_params(request, api.MARKER_DIR_EXISTS)
        return web.json_response(await markers.exists(storage, marker_dir))

    async def delete_marker_dir(request: web.Request) -> web.Response:
        storage, marker_dir, _ = await marker_params(request, api.MARKER_DIR_DELETE)
        return web.json_response(await markers.delete_dir(storage, marker_dir))

    app = web.Application(middlewares=[_guard(token, metrics)], client_max_size=MAX_BODY_BYTES)
    handlers: dict[api.Endpoint, Handler] = {
        api.HEALTH: health,
        api.METRICS: prometheus,
        api.MARKER_CREATE: create_marker,
        api.MARKER_CREATE_ALL: create_markers,
        api.MARKERS_ALL: markers_of_type(api.MARKERS_ALL),
        api.MARKERS_CREATE_AND_MERGE: markers_of_type(api.MARKERS_CREATE_AND_MERGE, ".marker.CREATE", ".marker.MERGE"),
        api.MARKERS_APPEND: markers_of_type(api.MARKERS_APPEND, ".marker.APPEND"),
        api.MARKER_DIR_EXISTS: marker_dir_exists,
        api.MARKER_DIR_DELETE: delete_marker_dir,
        **{endpoint: _view_handler(tables, endpoint) for endpoint in api.VIEW_ENDPOINTS},
    }
    # every described endpoint is served, and nothing else
    for endpoint in api.ENDPOINTS:
        app.router.add_route(endpoint.method, endpoint.path, handlers.pop(endpoint))
    if handlers:
        raise AssertionError(f"handlers of endpoints hoodie.server_api does not describe: {sorted(e.path for e in handlers)}")
    return app
