"""hoodie's timeline server beside Apache Hudi's own, on the same tables: every view
request Apache Hudi's ``RemoteHoodieTableFileSystemView`` can make (0.15's, and 1.2's,
which adds the ``inflight`` slices and ``slice/merged/beforeoron/latest/``), and the
markers' reads, asked of both with the same parameters, must be answered alike.

Apache Hudi's server (``TimelineService`` of the oracle's bundle, on a plain JVM) and
hoodie's (in this process, no token) serve the tables of :mod:`view_tables`: hoodie's
copy-on-write table with a cleaned slice and file groups an ``insert_overwrite``
replaced, hoodie's merge-on-read one with log files, a completed and a pending compaction
and a write killed before it completed, and a version-9 merge-on-read table Apache Hudi
1.2 wrote. Where the two differ on purpose (docs/apache-hudi.md) the comparison leaves
the difference out: :func:`normalised` (what a DTO carries besides the files),
:func:`instants` (0.x's form of instants on version 6), :func:`hoodie_form` (the two
endpoints hoodie's own clients share) and :func:`_documented` (what Apache Hudi's server
refuses or answers otherwise).
"""
from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from hudi_oracle import HUDI_0_15, HUDI_1, HudiOracle, OracleSetup
from hudi_server import ask, hudi_timeline_server
from view_tables import MARKER, VIEW, client_params, copy_on_write, merge_on_read, merge_on_read_by_hudi, requests

from hoodie.table.table import HoodieTable
from hoodie.timeline.active import ActiveTimeline
from hoodie.timeline_server import TimelineServer


def normalised(answer: Any) -> Any:
    """``answer`` without what differs on purpose: a base or log file's ``fileStatus``
    (Java sends Hadoop's, with modification and access times, owner and permissions;
    hoodie none: Apache Hudi's client builds the file from its path and length), the
    ``file:`` scheme of paths, hoodie's ``committed`` extents of a log file (Apache Hudi's
    client ignores them), the timeline a file group carries (compared on its own, see
    :func:`instants`) and the order of lists (Java's come out of hash maps)."""
    if isinstance(answer, dict):
        out = {}
        for key, value in answer.items():
            if key in ("fileStatus", "committed", "timeline"):
                continue
            if key in ("fullPath", "path") and isinstance(value, str):
                value = value.removeprefix("file:")
            out[key] = normalised(value)
        return out
    if isinstance(answer, list):
        return sorted((normalised(v) for v in answer), key=lambda v: json.dumps(v, sort_keys=True))
    return answer


#: the fields of an InstantDTO in Apache Hudi 0.x's form, which hoodie's server sends for
#: a table of version 6 (Apache Hudi 0.15 refuses fields it does not know); Apache Hudi
#: 1.2's server adds ``requestedTime`` and ``completionTime`` on every table
INSTANT_0X = ("action", "ts", "state")


def _only_instants(answer: Any) -> bool:
    """Whether ``answer`` is a TimelineDTO or a list of InstantDTOs."""
    return (isinstance(answer, dict) and "instants" in answer) or (
        isinstance(answer, list) and bool(answer) and isinstance(answer[0], dict) and "ts" in answer[0]
    )


def instants(answer: Any, layout_version: int) -> list[Any]:
    """The instants an answer names, in order: a TimelineDTO's, a list of InstantDTOs, or
    those of the timeline the file groups of an answer carry (Java's first group carries
    the view's, which Apache Hudi's client gives every group of the answer); on a table of
    version 6 in 0.x's form."""
    if isinstance(answer, dict) and "instants" in answer:
        found = answer["instants"]
    elif _only_instants(answer):
        found = answer
    elif isinstance(answer, list):
        found = [i for g in answer if isinstance(g, dict) and g.get("timeline") for i in g["timeline"]["instants"]]
    else:
        return []
    return found if layout_version >= 2 else [{k: i.get(k) for k in INSTANT_0X} for i in found]


def differ(java: Any, ours: Any, layout_version: int) -> bool:
    """Whether two answers differ in more than :func:`normalised` leaves out."""
    if instants(java, layout_version) != instants(ours, layout_version):
        return True
    return not _only_instants(java) and normalised(java) != normalised(ours)


def hoodie_form(groups: list[dict[str, Any]], timeline: ActiveTimeline) -> list[dict[str, Any]]:
    """Java's FileGroupDTOs in the form hoodie's server answers ``filegroups/all/partition/``
    (and, their latest slices, ``slices/partition/latest/``), which hoodie's own clients
    read (docs/apache-hudi.md): slices of writes not completed left out, and the slice a
    pending compaction opens merged into the slice it compacts."""
    compactions = {i.timestamp for i in timeline.instants if i.action == "compaction" and not i.is_completed}
    committed = {i.timestamp for i in timeline.instants if i.is_completed} | compactions
    out = []
    for g in groups:
        merged: list[dict[str, Any]] = []
        for s in sorted((s for s in g["slices"] if s["baseInstant"] in committed), key=lambda s: s["baseInstant"]):
            if s["baseInstant"] in compactions and merged:
                merged[-1] = {**merged[-1], "logFiles": merged[-1]["logFiles"] + s["logFiles"]}
            else:
                merged.append(s)
        out.append({**g, "slices": merged})
    return out


#: what Apache Hudi 0.15's own server refuses (HTTP 500) on a table without a metadata
#: table, which 1.2's and hoodie's answer (docs/apache-hudi.md): it does not list
#: partitions itself
REFUSED_BY_0_15 = ("loadallpartitions/", "slices/all/beforeoron/latest/", "basefiles/all/beforeoron/")


def _documented(version: str, endpoint: str, params: dict[str, str], status: int, pending: list[str]) -> bool:
    """Whether Apache Hudi's answer differs from hoodie's as docs/apache-hudi.md says it
    does: Java fails (500) on a range that misses a file group, 0.15 refuses the whole-table
    requests, and 0.15's slices as of an instant at or after a pending write's include that
    write's base file."""
    if endpoint == "slices/range/latest/" or (version == HUDI_0_15 and endpoint in REFUSED_BY_0_15):
        return status == 500
    return version == HUDI_0_15 and endpoint == "slices/beforeoron/latest/" and any(params["maxinstant"] >= t for t in pending)


def _mismatches(port: int, theirs: int, path: Path, version: str) -> list[str]:
    base = client_params(path)
    timeline = HoodieTable.open(str(path)).timeline
    pending = [i.timestamp for i in timeline.instants if not i.is_completed and i.action != "compaction"]
    layout = timeline.layout_version
    # Java answers the whole-table requests from the partitions its view has loaded (and
    # 0.15's refuses loadallpartitions/ on a table without a metadata table)
    loaded = {**base, "partitions": json.dumps(["city=sf", "city=la"])}
    for server in (theirs, port):
        assert ask(server, VIEW + "loadpartitions/", loaded, "POST") == (200, True)
    out = []
    for method, endpoint, params in requests(path, version == HUDI_1):
        query = {**base, **params}
        (s1, java), (s2, ours) = ask(theirs, VIEW + endpoint, query, method), ask(port, VIEW + endpoint, query, method)
        if _documented(version, endpoint, params, s1, pending):
            assert s2 == 200, (endpoint, params, ours)
            continue
        if s1 == 200 and endpoint in ("filegroups/all/partition/", "slices/partition/latest/"):
            groups = ask(theirs, VIEW + "filegroups/all/partition/", query)[1] if endpoint != "filegroups/all/partition/" else java
            formed = hoodie_form(groups, timeline)
            java = formed if endpoint == "filegroups/all/partition/" else [g["slices"][-1] for g in formed if g["slices"]]
        if s1 != s2 or (s1 == 200 and differ(java, ours, layout)):
            out.append(f"{path.name} {endpoint} {params}:\n  Apache Hudi {s1} {json.dumps(java)[:700]}\n  hoodie      {s2} {json.dumps(ours)[:700]}")
    return out


def _marker_mismatches(port: int, theirs: int, path: Path, instant: str) -> list[str]:
    """Markers created through hoodie's server in the marker folder of ``instant``, read
    through both."""
    marker_dir = f"{path}/.hoodie/.temp/{instant}"
    names = ["city=sf/f1-0_0-1-0_1.parquet.marker.CREATE", "city=sf/f2-0_0-1-0_1.parquet.marker.MERGE", "city=la/.f3-0_1.log.1_0-1-0.marker.APPEND"]
    for name in names:
        assert ask(port, MARKER + "create", {"markerdirpath": marker_dir, "markername": name}, "POST") == (200, True)
    out = []
    for endpoint in ("all", "create-and-merge", "append", "dir/exists"):
        (s1, java), (s2, ours) = ask(theirs, MARKER + endpoint, {"markerdirpath": marker_dir}), ask(port, MARKER + endpoint, {"markerdirpath": marker_dir})
        if (s1, normalised(java)) != (s2, normalised(ours)):
            out.append(f"marker/{endpoint}: Apache Hudi {s1} {java}, hoodie {s2} {ours}")
    return out


@pytest.fixture(scope="module")
def tables(tmp_path_factory: pytest.TempPathFactory) -> list[Path]:
    root = tmp_path_factory.mktemp("view-tables")
    copy_on_write(root / "cow")
    merge_on_read(root / "mor")
    return [root / "cow", root / "mor"]


@pytest.mark.parametrize("version", [HUDI_0_15, HUDI_1])
def test_every_view_endpoint_answers_as_apache_hudis_own_server(
    version: str, tables: list[Path], hudi_setup: Callable[[str], OracleSetup], tmp_path: Path
) -> None:
    setup = hudi_setup(version)
    assert HoodieTable.open(str(tables[1])).timeline.pending(), "the merge-on-read table has no pending instant"
    mismatches = []
    with TimelineServer("127.0.0.1", 0, require_token=False) as ours, hudi_timeline_server(setup, tmp_path) as theirs:
        for path in tables:
            ours.add_table(str(path))
            mismatches += _mismatches(ours.port, theirs, path, version)
        mismatches += _marker_mismatches(ours.port, theirs, tables[1], "2099123123595900" + version[0])
    assert not mismatches, f"{len(mismatches)} answers differ:\n" + "\n".join(mismatches[:15])


@pytest.mark.parametrize("version", [HUDI_1])  # (a version parameter: run beside the other tests of its oracle)
def test_every_view_endpoint_on_a_table_apache_hudi_1_wrote(
    version: str, hudi_oracle: Callable[[str], HudiOracle], hudi_setup: Callable[[str], OracleSetup], tmp_path: Path
) -> None:
    """The same on a merge-on-read table of version 9 (log files placed by completion
    time, a completed and a pending compaction), written by Apache Hudi 1.2."""
    path = tmp_path / "table"
    merge_on_read_by_hudi(hudi_oracle(version), path)
    with TimelineServer("127.0.0.1", 0, require_token=False) as ours, hudi_timeline_server(hudi_setup(version), tmp_path / "server") as theirs:
        ours.add_table(str(path))
        mismatches = _mismatches(ours.port, theirs, path, version)
    assert not mismatches, f"{len(mismatches)} answers differ:\n" + "\n".join(mismatches[:15])
