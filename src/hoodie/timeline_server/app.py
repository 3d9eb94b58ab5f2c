"""The timeline server's HTTP interface (aiohttp): Apache Hudi's REST paths and parameter
names, JSON bodies, plus ``/health`` and a Prometheus ``/metrics``.

Every ``/v1/`` request must carry the server's token (header ``X-Hoodie-Token``), and
``/health`` names the served tables only to a request that carries it (a server started
without a token, on loopback only, checks none: Apache Hudi's clients send none); a path
it names must lie inside one of the tables the server was started for (marker directories
exactly ``<table>/.hoodie/.temp/<instant>``, marker names checked like every recorded
path). A refused request reads and writes nothing and is answered 4xx with a one-line
reason; an oversized body 413; a full marker queue 503; a marker past the names kept
for its directory 507.

This module owns routing, checking and answering; the marker batching is
:mod:`.markers`'s, the counters :mod:`.metrics`'s.
"""
from __future__ import annotations

import asyncio
import hmac
import json
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass

from aiohttp import web
from aiohttp.typedefs import Middleware

from hoodie.errors import HoodieError, UnsafePathError
from hoodie.layout import HOODIE_FOLDER, TEMP_FOLDER, is_instant_time, parse_marker_name
from hoodie.server_calls import STATUS_FULL, TABLE_TROUBLE, TOKEN_HEADER
from hoodie.storage.base import Storage
from hoodie.storage.paths import check_name, check_partition_path, under
from hoodie.timeline_server.hudi_views import HUDI_ENDPOINTS, INSTANT_PARAMS, NEEDS, POST_ENDPOINTS
from hoodie.timeline_server.markers import MarkerService, Overloaded, TooManyMarkers
from hoodie.timeline_server.metrics import ServerMetrics
from hoodie.timeline_server.views import BODY_ENDPOINTS, ENDPOINTS, PARTITION_ENDPOINTS, TableViews, ViewBehind, answer

MARKER_PREFIX = "/v1/hoodie/marker/"
VIEW_PREFIX = "/v1/hoodie/view/"
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
        """The table storage and the checked marker directory ``marker_dir`` names."""
        head, _, instant = marker_dir.rstrip("/").rpartition("/")
        if not is_instant_time(instant):
            raise Refused(400, f"markerdirpath {marker_dir[:200]!r} does not end in an instant time")
        for base, views in self.tables.items():
            if head == under(base, HOODIE_FOLDER, TEMP_FOLDER):
                return views.storage, under(head, instant)
        raise Refused(403, f"markerdirpath {marker_dir[:200]!r} is not the marker folder of a table this server serves")

    def views(self, base_path: str) -> TableViews:
        views = self.tables.get(base_path.rstrip("/"))
        if views is None:
            raise Refused(403, f"basepath {base_path[:200]!r} is not a table this server serves")
        return views


def _param(request: web.Request, name: str) -> str:
    value = request.query.get(name)
    if value is None:
        raise Refused(400, f"missing parameter {name!r}")
    return value


async def _json_body(request: web.Request) -> dict[str, object]:
    try:
        body = await request.json()
    except ValueError as e:
        raise Refused(400, f"body must be a JSON object: {e}") from None
    if not isinstance(body, dict):
        raise Refused(400, "body must be a JSON object")
    return body


def _check_hudi_params(params: dict[str, str]) -> None:
    """Instants must be instant times and a file id a plain name (they only select what
    the view holds, but an answer never echoes an unchecked value)."""
    for name in INSTANT_PARAMS:
        if name in params and not is_instant_time(params[name]):
            raise Refused(400, f"{name} {params[name][:200]!r} is not an instant time of ASCII digits")
    for instant in _instant_list(params.get("instants", "")):
        if not is_instant_time(instant):
            raise Refused(400, f"instants names {instant[:200]!r}, which is not an instant time of ASCII digits")
    if "fileid" in params:
        try:
            check_name(params["fileid"], "fileid", "file id")
        except UnsafePathError as e:
            raise Refused(400, str(e)) from None


def _instant_list(value: str) -> list[str]:
    """The instants a comma-separated ``instants`` parameter names (none when empty)."""
    return [i for i in value.split(",") if i] if value else []


def _partition_list(value: str) -> list[str]:
    """The partitions a JSON list names (``loadpartitions/``), unchecked yet."""
    try:
        partitions = json.loads(value)
    except ValueError:
        partitions = None
    if not isinstance(partitions, list) or not all(isinstance(p, str) for p in partitions):
        raise Refused(400, f"partitions {value[:200]!r} is not a JSON list of partition paths")
    return partitions


def _checked_marker_name(name: str) -> str:
    parsed = parse_marker_name(name)
    if parsed is None:
        raise Refused(400, f"markername {name[:200]!r} is not <partition>/<file>.marker.<CREATE|MERGE|APPEND>")
    partition, file_name, _ = parsed
    try:
        check_partition_path(partition, "markername")
        check_name(file_name, "markername")
    except UnsafePathError as e:
        raise Refused(400, str(e)) from None
    return name


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


def _view_handler(tables: ServedTables, endpoint: str) -> Handler:
    """The handler of one ``/v1/hoodie/view/`` endpoint."""

    async def handler(request: web.Request) -> web.Response:
        params: dict[str, object] = dict(request.query)
        if endpoint in BODY_ENDPOINTS:
            params = await _json_body(request)
            partitions = params.get("partitions")
            if not isinstance(partitions, list) or not all(isinstance(p, str) for p in partitions):
                raise Refused(400, "partitions must be a list of partition paths")
            checked = partitions
        elif endpoint in PARTITION_ENDPOINTS:
            checked = [_param(request, "partition").removesuffix("/")]  # (Java trims a trailing slash)
            params["partition"] = checked[0]
        elif endpoint in HUDI_ENDPOINTS:
            needed = {name: _param(request, name) for name in NEEDS[endpoint]}
            _check_hudi_params(needed)
            # the answer uses the values checked here, not the query again
            if "partition" in needed:
                checked = [needed["partition"].removesuffix("/")]  # (Java trims one trailing slash)
                params["partition"] = checked[0]
            elif "partitions" in needed:
                checked = _partition_list(needed["partitions"])
                params["partitions"] = checked
            else:
                checked = []
            if "instants" in needed:
                params["instants"] = _instant_list(needed["instants"])
        else:
            checked = []
        basepath = params.get("basepath")
        if not isinstance(basepath, str):
            raise Refused(400, "missing parameter 'basepath'")
        last = params.get("lastinstantts")
        if last and not (isinstance(last, str) and is_instant_time(last)):
            raise Refused(400, f"lastinstantts {str(last)[:200]!r} is not an instant time of ASCII digits")
        views = tables.views(basepath)
        try:
            for partition in checked:
                check_partition_path(partition, "partition")
        except UnsafePathError as e:
            raise Refused(400, str(e)) from None
        try:
            # listings and metadata reads block: off the loop that answers markers
            result = await asyncio.get_running_loop().run_in_executor(None, answer, views, endpoint, params)
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

    async def create_marker(request: web.Request) -> web.Response:
        storage, marker_dir = tables.marker_dir(_param(request, "markerdirpath"))
        return web.json_response(await markers.create(storage, marker_dir, _checked_marker_name(_param(request, "markername"))))

    async def create_markers(request: web.Request) -> web.Response:
        """hoodie's extension: the markers of one task at once, JSON ``{"markerdirpath":
        ..., "markernames": [...]}``; answers a list of booleans in the same order."""
        body = await _json_body(request)
        marker_dir_path, names = body.get("markerdirpath"), body.get("markernames")
        if not isinstance(marker_dir_path, str) or not isinstance(names, list) or not all(isinstance(n, str) for n in names):
            raise Refused(400, "markerdirpath must be a string and markernames a list of strings")
        storage, marker_dir = tables.marker_dir(marker_dir_path)
        checked = [_checked_marker_name(n) for n in names]
        results = await asyncio.gather(*(markers.create(storage, marker_dir, n) for n in checked))
        return web.json_response(list(results))

    async def all_markers(request: web.Request) -> web.Response:
        storage, marker_dir = tables.marker_dir(_param(request, "markerdirpath"))
        return web.json_response(await markers.names(storage, marker_dir))

    def markers_of_type(*suffixes: str) -> Handler:
        """The markers of a directory whose IO type is one of ``suffixes``."""

        async def handler(request: web.Request) -> web.Response:
            storage, marker_dir = tables.marker_dir(_param(request, "markerdirpath"))
            names = await markers.names(storage, marker_dir)
            return web.json_response([n for n in names if n.endswith(suffixes)])

        return handler

    async def marker_dir_exists(request: web.Request) -> web.Response:
        storage, marker_dir = tables.marker_dir(_param(request, "markerdirpath"))
        return web.json_response(await markers.exists(storage, marker_dir))

    async def delete_marker_dir(request: web.Request) -> web.Response:
        storage, marker_dir = tables.marker_dir(_param(request, "markerdirpath"))
        return web.json_response(await markers.delete_dir(storage, marker_dir))

    app = web.Application(middlewares=[_guard(token, metrics)], client_max_size=MAX_BODY_BYTES)
    routes: dict[str, tuple[str, Handler]] = {
        "/health": ("GET", health),
        "/metrics": ("GET", prometheus),
        MARKER_PREFIX + "create": ("POST", create_marker),
        MARKER_PREFIX + "create-all": ("POST", create_markers),
        MARKER_PREFIX + "all": ("GET", all_markers),
        MARKER_PREFIX + "create-and-merge": ("GET", markers_of_type(".marker.CREATE", ".marker.MERGE")),
        MARKER_PREFIX + "append": ("GET", markers_of_type(".marker.APPEND")),  # (table version 6's)
        MARKER_PREFIX + "dir/exists": ("GET", marker_dir_exists),
        MARKER_PREFIX + "dir/delete": ("POST", delete_marker_dir),
    }
    for endpoint in ENDPOINTS:
        post = endpoint == "refresh/" or endpoint in BODY_ENDPOINTS or endpoint in POST_ENDPOINTS
        routes[VIEW_PREFIX + endpoint] = ("POST" if post else "GET", _view_handler(tables, endpoint))
    for path, (method, handler) in routes.items():
        app.router.add_route(method, path, handler)
    return app
