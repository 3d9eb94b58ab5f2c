"""The timeline server as Apache Hudi's writers use it (their oracle test is
tests/oracle/test_hudi_uses_our_server.py): requests without a token only on loopback and
only when asked (``--no-token``), and the view endpoints Hudi calls that hoodie's own
clients do not, answered in Hudi's DTOs with Java's semantics: base files and slices as of
an instant, one file group's latest, replaced file groups, pending compactions (the slice a
compaction opens), a pending clustering refused, the view's timeline."""
from __future__ import annotations

import http.client
import json
import subprocess
import sys
import urllib.parse
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pyarrow as pa
import pytest
from server_process import start_server
from table_options import MOR_TRIPS, trip_options

import hoodie
from hoodie.errors import ConfigError
from hoodie.services import CleanSettings, CompactionSettings, clean, open_for_services, schedule_compaction
from hoodie.table import HoodieTable
from hoodie.timeline import avro_metadata as avro
from hoodie.timeline_server import TimelineServer

VIEW = "/v1/hoodie/view/"


#: the running compaction's own base file is found by listing storage (a metadata table
#: lists committed files only)
NO_MDT_MOR = {**MOR_TRIPS, "hoodie.metadata.enable": "false"}


def _get(port: int, path: str, headers: dict[str, str] | None = None, method: str = "GET", **params: str) -> tuple[int, Any]:
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
    query = urllib.parse.urlencode(params)
    conn.request(method, f"{path}?{query}", headers=headers or {})
    response = conn.getresponse()
    return response.status, json.loads(response.read() or b"null")


@pytest.fixture
def tokenless() -> Iterator[TimelineServer]:
    with TimelineServer("127.0.0.1", 0, require_token=False) as server:
        yield server


def _trips(keys: list[str], ts: int, city: str = "sf") -> pa.Table:
    return pa.table({"uuid": keys, "city": [city] * len(keys), "ts": [ts] * len(keys)})


# --- no token: loopback only, and only when asked --------------------------------------------
def test_a_tokenless_server_answers_requests_without_a_token_and_a_default_one_refuses_them(tmp_path: Path, tokenless: TimelineServer) -> None:
    path = str(tmp_path / "t")
    hoodie.write(_trips(["a"], 1), path, trip_options())
    tokenless.add_table(path)
    status, answer = _get(tokenless.port, VIEW + "timeline/instant/last", basepath=path)
    assert status == 200 and answer[0]["action"] == "commit"
    with TimelineServer("127.0.0.1", 0) as guarded:
        guarded.add_table(path)
        assert _get(guarded.port, VIEW + "timeline/instant/last", basepath=path)[0] == 401
        status, _ = _get(guarded.port, VIEW + "timeline/instant/last", {"X-Hoodie-Token": guarded.token}, basepath=path)
        assert status == 200


@pytest.mark.parametrize("host", ["0.0.0.0", "::", "0x0"])
def test_no_token_is_refused_on_an_address_other_machines_reach(host: str) -> None:
    with pytest.raises(ConfigError, match=r"without a token \(--no-token\) only on a loopback address") as refused:
        TimelineServer(host, 0, allow_wildcard=True, require_token=False)
    assert repr(host) in str(refused.value)


def test_no_token_and_a_token_contradict() -> None:
    with pytest.raises(ConfigError, match="given a token and told to accept requests without one"):
        TimelineServer("127.0.0.1", 0, token="s3cr3t", require_token=False)


def test_the_command_takes_no_token_on_loopback_and_refuses_it_elsewhere(tmp_path: Path) -> None:
    path = str(tmp_path / "t")
    hoodie.write(_trips(["a"], 1), path, trip_options())
    for args, expected in [
        (["--host", "0.0.0.0", "--allow-wildcard"], "only on a loopback address"),
        (["--token", "s3cr3t"], "--token and --no-token contradict each other"),
    ]:
        done = subprocess.run(
            [sys.executable, "-m", "hoodie.cli", "timeline-server", "--table", path, "--no-token", "--port", "0", *args],
            capture_output=True, text=True, timeout=60,
        )
        assert done.returncode != 0 and expected in done.stdout + done.stderr, done.stdout + done.stderr
    proc, port = start_server("--table", path, "--port", "0", "--no-token")
    try:
        assert _get(port, VIEW + "compactions/pending/", basepath=path) == (200, [])
    finally:
        proc.terminate()
        assert proc.stdout is not None
        out = proc.stdout.read()  # (what start_server's first read buffered too)
        proc.wait(timeout=30)
    assert "no token required (loopback only)" in out, (out, proc.returncode)


# --- Hudi's view endpoints ---------------------------------------------------------------------
def test_base_files_and_replaced_file_groups_as_of_an_instant(tmp_path: Path, tokenless: TimelineServer) -> None:
    path = str(tmp_path / "t")
    t1 = hoodie.write(_trips(["a", "b"], 1), path, trip_options())
    t2 = hoodie.write(_trips(["a"], 2), path, trip_options())
    t3 = hoodie.write(_trips(["c"], 3), path, trip_options(**{"hoodie.datasource.write.operation": "insert_overwrite"}))
    t4 = hoodie.write(_trips(["d"], 4, "la"), path, trip_options())
    tokenless.add_table(path)
    port = tokenless.port
    status, before_t2 = _get(port, VIEW + "datafiles/beforeoron/latest/", basepath=path, partition="sf", maxinstant=t2)
    assert status == 200
    # the group t3 replaced is still there as of t2, at t2's version (t1's before it)
    assert [b["commitTime"] for b in before_t2] == [t2]
    old = before_t2[0]
    assert set(old) == {"fileStatus", "fullPath", "fileLen", "commitTime", "fileId", "bootstrapBaseFile"}
    assert _get(port, VIEW + "datafiles/beforeoron/latest/", basepath=path, partition="sf", maxinstant=t1)[1][0]["commitTime"] == t1
    latest = _get(port, VIEW + "datafiles/beforeoron/latest/", basepath=path, partition="sf", maxinstant=t4)[1]
    assert [b["commitTime"] for b in latest] == [t3]
    assert _get(port, VIEW + "datafile/latest/partition", basepath=path, partition="sf", fileid=old["fileId"])[1] == []
    on_t1 = _get(port, VIEW + "datafile/on/latest/", basepath=path, partition="sf", instant=t1, fileid=old["fileId"])[1]
    assert [b["commitTime"] for b in on_t1] == [t1]
    # replaced by t3: not before t3, on or before it, and in the partition's replaced groups
    assert _get(port, VIEW + "filegroups/replaced/before/", basepath=path, partition="sf", maxinstant=t3)[1] == []
    for endpoint, params in [("filegroups/replaced/beforeoron/", {"maxinstant": t3}), ("filegroups/replaced/before/", {"maxinstant": t4}),
                             ("filegroups/replaced/partition/", {}), ("filegroups/replaced/afteroron/", {"mininstant": t3})]:
        status, groups = _get(port, VIEW + endpoint, basepath=path, partition="sf", **params)
        assert status == 200 and [g["fileId"] for g in groups] == [old["fileId"]], endpoint
        # the first group carries the view's timeline (Hudi's client needs it), in 0.x's form on a v6 table
        assert [i["ts"] for i in groups[0]["timeline"]["instants"]] == [t1, t2, t3, t4]
        assert set(groups[0]["timeline"]["instants"][0]) == {"action", "ts", "state"}
        assert {s["baseInstant"] for s in groups[0]["slices"]} == {t1, t2}
    assert _get(port, VIEW + "filegroups/replaced/afteroron/", basepath=path, partition="sf", mininstant=t4)[1] == []
    # Hudi 1.x asks the server to list partitions ahead (POST, a JSON list in the query)
    assert _get(port, VIEW + "loadpartitions/", method="POST", basepath=path, partitions='["sf", "la"]') == (200, True)
    assert _get(port, VIEW + "loadallpartitions/", method="POST", basepath=path) == (200, True)
    status, refused = _get(port, VIEW + "loadpartitions/", method="POST", basepath=path, partitions='["../x"]')
    assert status == 400 and "../x" in refused["error"]
    status, timeline = _get(port, VIEW + "timeline/instants/all", basepath=path)
    assert status == 200 and [i["ts"] for i in timeline["instants"]] == [t1, t2, t3, t4]


def test_a_pending_compaction_opens_a_slice_as_in_java(tmp_path: Path, tokenless: TimelineServer) -> None:
    path = str(tmp_path / "t")
    hoodie.write(_trips(["a", "b"], 1), path, MOR_TRIPS)
    t2 = hoodie.write(_trips(["a"], 2), path, MOR_TRIPS)
    compaction, _ = schedule_compaction(open_for_services(path), CompactionSettings(max_delta_commits=1))
    assert compaction is not None
    t3 = hoodie.write(_trips(["b"], 3), path, MOR_TRIPS)  # its log opens the compaction's slice
    tokenless.add_table(path)
    port = tokenless.port
    status, ops = _get(port, VIEW + "compactions/pending/", basepath=path)
    assert status == 200 and len(ops) == 1
    op = ops[0]
    assert op["compactionInstant"] == compaction and op["partition"] == "sf" and len(op["deltaFiles"]) == 1
    assert op["baseFile"].split("_")[-1].startswith(op["dataFileInstant"]) and op["baseInstant"] == op["dataFileInstant"]
    (latest,) = _get(port, VIEW + "slices/file/latest/", basepath=path, partition="sf", fileid=op["id"])[1]
    assert latest["baseInstant"] == compaction and latest["baseFile"] is None
    assert [lf["path"].rsplit("/", 1)[-1].split("_")[1].split(".")[0] for lf in latest["logFiles"]] == [compaction]
    (stateless,) = _get(port, VIEW + "slices/partition/latest/stateless/", basepath=path, partition="sf")[1]
    assert stateless == latest
    # without includependingcompaction the group under compaction is left out; with it, the
    # newest non-empty slice at or before the instant
    assert _get(port, VIEW + "slices/beforeoron/latest/", basepath=path, partition="sf", maxinstant=t3, includependingcompaction="false")[1] == []
    (read,) = _get(port, VIEW + "slices/beforeoron/latest/", basepath=path, partition="sf", maxinstant=t2, includependingcompaction="true")[1]
    assert read["baseInstant"] == op["baseInstant"] and [lf["path"].rsplit("/", 1)[-1] for lf in read["logFiles"]] == op["deltaFiles"]
    # merged: the slice the compaction reads with the log written since
    (merged,) = _get(port, VIEW + "slices/merged/beforeoron/latest/", basepath=path, partition="sf", maxinstant=t3)[1]
    assert merged["baseInstant"] == op["baseInstant"] and merged["baseFile"]["commitTime"] == op["dataFileInstant"]
    assert [lf["path"] for lf in merged["logFiles"]] == [lf["path"] for lf in read["logFiles"] + latest["logFiles"]]
    assert len(_get(port, VIEW + "slices/all", basepath=path, partition="sf")[1]) == 2
    assert _get(port, VIEW + "logcompactions/pending/", basepath=path)[1] == []


def test_a_pending_clustering_is_refused_naming_it(tmp_path: Path, tokenless: TimelineServer) -> None:
    path = tmp_path / "t"
    t1 = hoodie.write(_trips(["a"], 1), str(path), trip_options())
    tokenless.add_table(str(path))
    assert _get(tokenless.port, VIEW + "clustering/pending/", basepath=str(path)) == (200, [])
    clustering = str(int(t1) + 1)
    plan = avro.encode(avro.REQUESTED_REPLACE_METADATA, {"operationType": "CLUSTER", "extraMetadata": {}, "version": 1})
    (path / ".hoodie" / f"{clustering}.replacecommit.requested").write_bytes(plan)
    status, answer = _get(tokenless.port, VIEW + "clustering/pending/", basepath=str(path), lastinstantts=clustering, timelinehash="x")
    assert status == 422 and f"clustering {clustering} is pending" in answer["error"]


@pytest.mark.parametrize(("params", "named"), [
    ({"partition": "sf"}, "missing parameter 'maxinstant'"),
    ({"partition": "sf", "maxinstant": "2024x"}, "maxinstant '2024x' is not an instant time"),
    ({"partition": "../x", "maxinstant": "20240101000000000"}, "../x"),
])
def test_bad_parameters_are_refused_naming_them(tmp_path: Path, tokenless: TimelineServer, params: dict[str, str], named: str) -> None:
    path = str(tmp_path / "t")
    hoodie.write(_trips(["a"], 1), path, trip_options())
    tokenless.add_table(path)
    status, answer = _get(tokenless.port, VIEW + "datafiles/beforeoron/latest/", basepath=path, **params)
    assert status == 400 and named in answer["error"]


# --- the rest of Hudi's view API: whole-table, ranges, 1.x's inflight slices, APPEND markers -----
def test_whole_table_and_range_answers(tmp_path: Path, tokenless: TimelineServer) -> None:
    path = str(tmp_path / "t")
    t1 = hoodie.write(pa.concat_tables([_trips(["a"], 1), _trips(["b"], 1, "la")]), path, trip_options())
    t2 = hoodie.write(_trips(["a"], 2), path, trip_options())
    t3 = hoodie.write(_trips(["c"], 3), path, trip_options(**{"hoodie.datasource.write.operation": "insert_overwrite"}))
    tokenless.add_table(path)
    port = tokenless.port
    status, latest = _get(port, VIEW + "datafiles/all/latest/", basepath=path)
    assert status == 200 and sorted(b["commitTime"] for b in latest) == [t1, t3]  # la's, and sf's new group
    status, as_of_t2 = _get(port, VIEW + "basefiles/all/beforeoron/", basepath=path, maxinstant=t2)
    assert status == 200 and {p: [b["commitTime"] for b in bs] for p, bs in as_of_t2.items()} == {"sf": [t2], "la": [t1]}
    status, slices = _get(port, VIEW + "slices/all/beforeoron/latest/", basepath=path, maxinstant=t3)
    assert status == 200 and {p: [s["baseInstant"] for s in ss] for p, ss in slices.items()} == {"sf": [t3], "la": [t1]}
    # of each file group not replaced by the last instant named, its newest base file (slice) at one of them
    assert [b["commitTime"] for b in _get(port, VIEW + "datafiles/range/latest/", basepath=path, instants=f"{t1},{t2}")[1]] == [t1, t2]
    assert [s["baseInstant"] for s in _get(port, VIEW + "slices/range/latest/", basepath=path, instants=t1)[1]] == [t1, t1]
    assert sorted(s["baseInstant"] for s in _get(port, VIEW + "slices/range/latest/", basepath=path, instants=f"{t1},{t3}")[1]) == [t1, t3]
    assert _get(port, VIEW + "datafiles/range/latest/", basepath=path, instants="") == (200, [])
    status, refused = _get(port, VIEW + "slices/range/latest/", basepath=path, instants=f"{t1},x1")
    assert status == 400 and "'x1'" in refused["error"]


def test_uncompacted_merged_and_inflight_slices_under_a_pending_compaction(tmp_path: Path, tokenless: TimelineServer) -> None:
    path = str(tmp_path / "t")
    t1 = hoodie.write(_trips(["a", "b"], 1), path, NO_MDT_MOR)
    t2 = hoodie.write(_trips(["a"], 2), path, NO_MDT_MOR)
    compaction, _ = schedule_compaction(HoodieTable.open(path), CompactionSettings(max_delta_commits=1))
    assert compaction is not None
    t3 = hoodie.write(_trips(["b"], 3), path, NO_MDT_MOR)
    tokenless.add_table(path)
    port = tokenless.port
    (uncompacted,) = _get(port, VIEW + "slices/uncompacted/partition/latest/", basepath=path, partition="sf")[1]
    assert uncompacted["baseInstant"] == t1 and len(uncompacted["logFiles"]) == 1 and t2 not in uncompacted["logFiles"][0]["path"]
    (inflight,) = _get(port, VIEW + "slices/partition/latest/inflight/", basepath=path, partition="sf")[1]
    assert inflight["baseInstant"] == compaction and inflight["baseFile"] is None and len(inflight["logFiles"]) == 1
    file_id = inflight["fileId"]
    (merged,) = _get(port, VIEW + "slice/merged/beforeoron/latest/", basepath=path, partition="sf", maxinstant=t3, fileid=file_id)[1]
    assert merged["baseInstant"] == t1 and len(merged["logFiles"]) == 2
    assert _get(port, VIEW + "slice/merged/beforeoron/latest/", basepath=path, partition="sf", maxinstant=t3, fileid="other")[1] == []
    (same,) = _get(port, VIEW + "slices/merged/beforeoron/inflight/latest/", basepath=path, partition="sf", maxinstant=t3, currentinstant=t3)[1]
    assert _files(same) == _files(merged)
    # the compaction's own base file, while it runs, is in the slice it opens (for the
    # compaction only); the others see the merged slice
    hoodie_dir = Path(path, ".hoodie")
    (hoodie_dir / f"{compaction}.compaction.inflight").write_bytes((hoodie_dir / f"{compaction}.compaction.requested").read_bytes())
    base = Path(path, "sf", f"{file_id}_0-1-0_{compaction}.parquet")
    base.write_bytes(b"written by the running compaction")
    with TimelineServer("127.0.0.1", 0, require_token=False) as fresh:
        fresh.add_table(path)
        params = {"basepath": path, "partition": "sf", "maxinstant": t3}
        (own,) = _get(fresh.port, VIEW + "slices/merged/beforeoron/inflight/latest/", currentinstant=compaction, **params)[1]
        assert own["baseInstant"] == compaction and own["baseFile"]["fullPath"].endswith(base.name)
        (other,) = _get(fresh.port, VIEW + "slices/merged/beforeoron/inflight/latest/", currentinstant=t3, **params)[1]
        assert _files(other) == _files(merged)
        assert _get(fresh.port, VIEW + "slice/merged/beforeoron/latest/", fileid=file_id, **params)[1] == [merged]


def _files(slice_dto: dict[str, Any]) -> tuple[str, str | None, list[str]]:
    """A FileSliceDTO's base instant, base file and log files."""
    base = slice_dto["baseFile"]["fullPath"] if slice_dto["baseFile"] else None
    return slice_dto["baseInstant"], base, [lf["path"] for lf in slice_dto["logFiles"]]


def test_append_markers_of_a_directory(tmp_path: Path, tokenless: TimelineServer) -> None:
    path = str(tmp_path / "t")
    hoodie.write(_trips(["a"], 1), path, trip_options())
    tokenless.add_table(path)
    marker_dir = f"{path}/.hoodie/.temp/20991231235959999"
    names = ["sf/f1_0-1-0_1.parquet.marker.CREATE", "sf/.f2_1.log.1_0-1-0.marker.APPEND", "sf/f3_0-1-0_1.parquet.marker.MERGE"]
    for name in names:
        assert _get(tokenless.port, "/v1/hoodie/marker/create", method="POST", markerdirpath=marker_dir, markername=name) == (200, True)
    assert _get(tokenless.port, "/v1/hoodie/marker/append", markerdirpath=marker_dir) == (200, [names[1]])
    assert sorted(_get(tokenless.port, "/v1/hoodie/marker/create-and-merge", markerdirpath=marker_dir)[1]) == [names[0], names[2]]


def test_the_views_timeline_holds_cleans_and_the_file_groups_timeline_writes_only(tmp_path: Path, tokenless: TimelineServer) -> None:
    path = str(tmp_path / "t")
    t1 = hoodie.write(_trips(["a"], 1), path, trip_options())
    t2 = hoodie.write(_trips(["a"], 2), path, trip_options())
    t3 = hoodie.write(_trips(["a"], 3), path, trip_options())
    cleaned = clean(open_for_services(path), CleanSettings(commits_retained=1))
    assert getattr(cleaned, "deleted", None)
    (clean_instant,) = HoodieTable.open(path).timeline.completed(["clean"])
    tokenless.add_table(path)
    port = tokenless.port
    status, timeline = _get(port, VIEW + "timeline/instants/all", basepath=path)
    expected = [("commit", t1), ("commit", t2), ("commit", t3), ("clean", clean_instant.timestamp)]
    assert status == 200 and [(i["action"], i["ts"]) for i in timeline["instants"]] == expected
    assert _get(port, VIEW + "timeline/instant/last", basepath=path)[1] == [{"action": "clean", "ts": clean_instant.timestamp, "state": "COMPLETED"}]
    (group,) = _get(port, VIEW + "filegroups/all/partition/stateless/", basepath=path, partition="sf")[1]
    assert [i["ts"] for i in group["timeline"]["instants"]] == [t1, t2, t3]
