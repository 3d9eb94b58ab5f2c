"""The timeline server's REST endpoints, each described once: path, HTTP method, where
the parameters travel (query or JSON body) and each parameter's name, kind and whether
it is required. The server (:mod:`hoodie.timeline_server.app`) routes from
:data:`ENDPOINTS` and checks every request with :meth:`Endpoint.checked`; the clients
(:mod:`hoodie.table.remote_view`, :mod:`hoodie.markers.remote`, the Spark health check)
build their requests with :func:`call`, which refuses a parameter the endpoint does not
describe.

A parameter's kind carries the server's check of its value: instant times are ASCII
digits, a file id a plain name, partition paths and marker names are checked like every
recorded path. These checks know nothing of which tables a server serves (the server
resolves ``basepath`` and ``markerdirpath`` against those itself). Parameters an
endpoint does not describe are ignored by the server (Apache Hudi's clients send some
the server does not use), never sent by hoodie's clients.

This module owns the description and the checks; how a call is made and retried is
:mod:`hoodie.server_calls`'s.
"""
from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from enum import Enum

from hoodie.errors import RequestError
from hoodie.layout import is_instant_time, parse_marker_name
from hoodie.server_calls import ServerAddress, ServerClient
from hoodie.storage.paths import check_name, check_partition_path

VIEW_PREFIX = "/v1/hoodie/view/"
MARKER_PREFIX = "/v1/hoodie/marker/"


class Kind(Enum):
    """What a parameter's value is; the server checks it as :func:`_check` says."""

    TEXT = "text"  # (basepath: resolved against the served tables by the server; timelinehash)
    FLAG = "true or false"  # (read by the answer itself, Hudi's default when absent)
    INSTANT = "instant time"
    INSTANTS = "comma-separated instant times"
    FILE_ID = "file id"
    PARTITION = "partition path"  # (Java trims one trailing slash)
    PARTITIONS_JSON = "JSON list of partition paths"  # (in a query: Hudi's loadpartitions/)
    PARTITIONS = "list of partition paths"  # (in a JSON body)
    MARKER_DIR = "marker directory"  # <table>/.hoodie/.temp/<instant>
    MARKER_NAME = "marker name"  # <partition>/<file>.marker.<IO type>
    MARKER_NAMES = "list of marker names"  # (in a JSON body)


@dataclass(frozen=True)
class Param:
    """One parameter; an optional one given empty counts as absent."""

    name: str
    kind: Kind
    required: bool = True


@dataclass(frozen=True)
class Endpoint:
    """One REST endpoint: its path, method, and parameters (in the JSON body when
    ``body``, else in the query)."""

    path: str
    method: str
    params: tuple[Param, ...] = ()
    body: bool = False

    @property
    def view(self) -> str:
        """The part of a view endpoint's path after ``/v1/hoodie/view/``."""
        return self.path.removeprefix(VIEW_PREFIX)

    def takes(self, name: str) -> bool:
        return any(p.name == name for p in self.params)

    def checked(self, given: Mapping[str, object]) -> dict[str, object]:
        """The described parameters of a request (its query, or its JSON body), each
        checked, in the form the answers use: partition paths trimmed, lists as lists.
        Raises :class:`RequestError` naming the parameter and its value."""
        out: dict[str, object] = {}
        for p in self.params:
            value = given.get(p.name)
            if value is None or (not p.required and value == ""):
                if p.required:
                    raise RequestError(f"missing parameter {p.name!r}")
                continue
            out[p.name] = _check(p, value)
        return out


def _text(p: Param, value: object) -> str:
    if not isinstance(value, str):
        raise RequestError(f"{p.name} must be a string")
    return value


def _strings(p: Param, value: object) -> list[str]:
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise RequestError(f"{p.name} must be a {p.kind.value}")
    return value


def _instant(p: Param, value: object) -> str:
    text = _text(p, value)
    if not is_instant_time(text):
        raise RequestError(f"{p.name} {text[:200]!r} is not an instant time of ASCII digits")
    return text


def _instants(p: Param, value: object) -> list[str]:
    instants = [i for i in _text(p, value).split(",") if i]
    for instant in instants:
        if not is_instant_time(instant):
            raise RequestError(f"{p.name} names {instant[:200]!r}, which is not an instant time of ASCII digits")
    return instants


def _partitions_json(p: Param, value: object) -> list[str]:
    text = _text(p, value)
    try:
        partitions = json.loads(text)
    except ValueError:
        partitions = None
    if not isinstance(partitions, list) or not all(isinstance(v, str) for v in partitions):
        raise RequestError(f"{p.name} {text[:200]!r} is not a JSON list of partition paths")
    return [check_partition_path(v, "partition") for v in partitions]


def _marker_dir(p: Param, value: object) -> str:
    text = _text(p, value)
    if not is_instant_time(text.rstrip("/").rpartition("/")[2]):
        raise RequestError(f"{p.name} {text[:200]!r} does not end in an instant time")
    return text


def _marker_name(p: Param, value: object) -> str:
    text = _text(p, value)
    parsed = parse_marker_name(text)
    if parsed is None:
        raise RequestError(f"{p.name} {text[:200]!r} is not <partition>/<file>.marker.<CREATE|MERGE|APPEND>")
    partition, file_name, _ = parsed
    check_partition_path(partition, p.name)
    check_name(file_name, p.name)
    return text


_CHECKS: dict[Kind, Callable[[Param, object], object]] = {
    Kind.TEXT: _text,
    Kind.FLAG: _text,
    Kind.INSTANT: _instant,
    Kind.INSTANTS: _instants,
    Kind.FILE_ID: lambda p, v: check_name(_text(p, v), p.name, "file id"),
    Kind.PARTITION: lambda p, v: check_partition_path(_text(p, v).removesuffix("/"), p.name),
    Kind.PARTITIONS_JSON: _partitions_json,
    Kind.PARTITIONS: lambda p, v: [check_partition_path(x, p.name) for x in _strings(p, v)],
    Kind.MARKER_DIR: _marker_dir,
    Kind.MARKER_NAME: _marker_name,
    Kind.MARKER_NAMES: lambda p, v: [_marker_name(Param(p.name, Kind.MARKER_NAME), x) for x in _strings(p, v)],
}


def _check(p: Param, value: object) -> object:
    """The checked value of ``p`` (an unsafe path raises :class:`UnsafePathError`, which
    names it)."""
    return _CHECKS[p.kind](p, value)


# --- the endpoints --------------------------------------------------------------------------
_PART, _MAX, _FILE = Param("partition", Kind.PARTITION), Param("maxinstant", Kind.INSTANT), Param("fileid", Kind.FILE_ID)
# what every view request carries: the table, and the client's timeline (a server behind syncs)
_TABLE = (Param("basepath", Kind.TEXT), Param("lastinstantts", Kind.INSTANT, False), Param("timelinehash", Kind.TEXT, False))


def _view(name: str, *params: Param, method: str = "GET", body: bool = False) -> Endpoint:
    return Endpoint(VIEW_PREFIX + name, method, (*_TABLE, *params), body)


def _markers(name: str, *params: Param, method: str = "GET", body: bool = False) -> Endpoint:
    return Endpoint(MARKER_PREFIX + name, method, (Param("markerdirpath", Kind.MARKER_DIR), *params), body)


HEALTH = Endpoint("/health", "GET")
METRICS = Endpoint("/metrics", "GET")  # (Prometheus text, not JSON)

MARKER_CREATE = _markers("create", Param("markername", Kind.MARKER_NAME), method="POST")
# hoodie's: the markers of one task at once; answers a list of booleans in the same order
MARKER_CREATE_ALL = _markers("create-all", Param("markernames", Kind.MARKER_NAMES), method="POST", body=True)
MARKERS_ALL = _markers("all")
MARKERS_CREATE_AND_MERGE = _markers("create-and-merge")
MARKERS_APPEND = _markers("append")  # (table version 6's)
MARKER_DIR_EXISTS = _markers("dir/exists")
MARKER_DIR_DELETE = _markers("dir/delete", method="POST")
MARKER_ENDPOINTS = (MARKER_CREATE, MARKER_CREATE_ALL, MARKERS_ALL, MARKERS_CREATE_AND_MERGE, MARKERS_APPEND, MARKER_DIR_EXISTS, MARKER_DIR_DELETE)

# the views hoodie's own clients call
LATEST_SLICES = _view("slices/partition/latest/", _PART)
# hoodie's: the latest slices of several partitions in one request
LATEST_SLICES_OF = _view("slices/partitions/latest/", Param("partitions", Kind.PARTITIONS), method="POST", body=True)
ALL_FILE_GROUPS = _view("filegroups/all/partition/", _PART)
REPLACED_FILE_GROUPS = _view("filegroups/replaced/partition/", _PART)
ALL_PARTITIONS = _view("partitions/all/")  # hoodie's: Hudi's clients list partitions themselves
# the views only Apache Hudi's clients call (answered by hoodie.timeline_server.hudi_views)
HUDI_VIEWS = (
    _view("compactions/pending/"),
    _view("logcompactions/pending/"),
    _view("clustering/pending/"),
    _view("datafiles/latest/partition", _PART),
    _view("datafiles/beforeoron/latest/", _PART, _MAX),
    _view("datafiles/all", _PART),
    _view("datafile/latest/partition", _PART, _FILE),
    _view("datafile/on/latest/", _PART, Param("instant", Kind.INSTANT), _FILE),
    _view("slices/partition/latest/stateless/", _PART),
    _view("slices/file/latest/", _PART, _FILE),
    _view("slices/beforeoron/latest/", _PART, _MAX, Param("includependingcompaction", Kind.FLAG, False)),
    _view("slices/merged/beforeoron/latest/", _PART, _MAX),
    _view("slices/all", _PART),
    _view("filegroups/all/partition/stateless/", _PART),
    _view("filegroups/replaced/before/", _PART, _MAX),
    _view("filegroups/replaced/beforeoron/", _PART, _MAX),
    _view("filegroups/replaced/afteroron/", _PART, Param("mininstant", Kind.INSTANT)),
    REPLACED_FILE_GROUPS,
    _view("loadpartitions/", Param("partitions", Kind.PARTITIONS_JSON), method="POST"),
    _view("loadallpartitions/", method="POST"),
    _view("slices/uncompacted/partition/latest/", _PART),
    _view("slices/range/latest/", Param("instants", Kind.INSTANTS)),
    _view("slices/all/beforeoron/latest/", _MAX),
    _view("datafiles/all/latest/"),
    _view("datafiles/range/latest/", Param("instants", Kind.INSTANTS)),
    _view("basefiles/all/beforeoron/", _MAX),
    # Apache Hudi 1.x's
    _view("slices/partition/latest/inflight/", _PART),
    _view("slices/merged/beforeoron/inflight/latest/", _PART, _MAX, Param("currentinstant", Kind.INSTANT)),
    _view("slice/merged/beforeoron/latest/", _PART, _MAX, _FILE),
)
VIEW_ENDPOINTS = (
    LATEST_SLICES,
    LATEST_SLICES_OF,
    ALL_FILE_GROUPS,
    ALL_PARTITIONS,
    *HUDI_VIEWS,
    _view("timeline/instants/all"),
    _view("timeline/instant/last"),
    _view("refresh/", method="POST"),
)
ENDPOINTS = (HEALTH, METRICS, *MARKER_ENDPOINTS, *VIEW_ENDPOINTS)
BY_PATH = {e.path: e for e in ENDPOINTS}


def request(endpoint: Endpoint, params: Mapping[str, object]) -> tuple[dict[str, str], object]:
    """The query and JSON body (None: none) of a call of ``endpoint`` with ``params``;
    raises :class:`ValueError` for a parameter it does not describe or a required one
    missing (a mistake of the calling code, not of data)."""
    names = {p.name: p for p in endpoint.params}
    unknown = sorted(set(params) - set(names))
    missing = [p.name for p in endpoint.params if p.required and p.name not in params]
    if unknown or missing:
        raise ValueError(f"{endpoint.method} {endpoint.path} does not take {unknown} or needs {missing}")
    if endpoint.body:
        return {}, dict(params)
    return {k: _encode(names[k].kind, v) for k, v in params.items()}, None


def _encode(kind: Kind, value: object) -> str:
    if kind is Kind.PARTITIONS_JSON:
        return json.dumps(value)
    if kind is Kind.INSTANTS and isinstance(value, list | tuple):
        return ",".join(value)
    return str(value)


def call(client: ServerClient, endpoint: Endpoint, params: Mapping[str, object]) -> object:
    """One call of ``endpoint`` through ``client`` (see :meth:`ServerClient.call`)."""
    query, body = request(endpoint, params)
    return client.call(endpoint.method, endpoint.path, query, body)


def call_once(address: ServerAddress, endpoint: Endpoint, params: Mapping[str, object]) -> object:
    """One call through a client of its own (closed after): a single question, such as
    whether a server is up."""
    with ServerClient(address) as client:
        return call(client, endpoint, params)
