"""``hoodie metadata list-partitions | list-files | stats`` on the metadata tables Apache
Hudi wrote (the conformance tables with ``.hoodie/metadata``), copied where a test changes
them, and on a table hoodie wrote, which has none."""
from __future__ import annotations

import json
import shutil
from collections.abc import Callable
from pathlib import Path

import pytest
from folder_listings import FolderListings
from mdt_checks import mdt_tables, stored_files
from shared import cases_or_skip
from typer.testing import Result

from hoodie.config.table_config import TableConfig
from hoodie.formats.hfile import HFileReader
from hoodie.metadata_table import MetadataTableReader
from hoodie.table import HoodieTable

MDT_TABLES = mdt_tables()
CASES = cases_or_skip(MDT_TABLES, MDT_TABLES, "tables with a metadata table")


def _json(result: Result) -> dict:
    assert result.exit_code == 0, result.output
    return json.loads(result.stdout)


def _copy(conformance_table: Callable[[str], Path], name: str, tmp_path: Path) -> Path:
    dest = tmp_path / Path(name).name
    shutil.copytree(conformance_table(name), dest)
    return dest


@pytest.mark.parametrize("name", CASES)
def test_list_partitions_equals_storage(cli, conformance_table: Callable[[str], Path], name: str) -> None:
    path = str(conformance_table(name))
    out = _json(cli("metadata", "list-partitions", path, "--compare", "--json"))
    on_storage = HoodieTable.open(path).local_view().all_partition_paths()
    assert out["partitions"] == on_storage == out["storage_partitions"]
    assert out["only_in_metadata_table"] == out["only_on_storage"] == []
    assert out["duration_s"] >= 0
    human = cli("metadata", "list-partitions", path, "--compare")
    assert human.exit_code == 0
    assert f"{len(on_storage)} partition(s) in the metadata table, listed in " in human.stdout
    assert "the same" in human.stdout


def test_list_partitions_compare_fails_when_storage_differs(cli, conformance_table: Callable[[str], Path], tmp_path: Path) -> None:
    partitioned = [n for n in MDT_TABLES if HoodieTable.open(str(conformance_table(n))).config.is_partitioned]
    if not partitioned:
        pytest.skip("no partitioned conformance table with a metadata table")
    base = _copy(conformance_table, partitioned[0], tmp_path)
    gone = HoodieTable.open(str(base)).local_view().all_partition_paths()[0]
    shutil.rmtree(base / gone)  # lost on storage; the metadata table still lists it
    result = cli("metadata", "list-partitions", str(base), "--compare")
    assert result.exit_code == 1, result.output
    assert "1 only in the metadata table, 0 only on storage" in result.stdout
    out = json.loads(cli("metadata", "list-partitions", str(base), "--compare", "--json").stdout)
    assert out["only_in_metadata_table"] == [gone]
    # without --compare nothing lists storage, and the listing stands
    assert gone in _json(cli("metadata", "list-partitions", str(base), "--json"))["partitions"]


@pytest.mark.parametrize("name", CASES)
def test_list_files_equals_the_committed_files(cli, conformance_table: Callable[[str], Path], name: str) -> None:
    path = str(conformance_table(name))
    table = HoodieTable.open(path)
    for partition in table.local_view().all_partition_paths():
        args = ["--partition", partition] if partition else []
        out = _json(cli("metadata", "list-files", path, *args, "--json"))
        files = {f["name"]: f["size"] for f in out["files"]}
        assert files == stored_files(table, partition) == MetadataTableReader(table).files_in(partition)
        assert out["partition"] == partition and out["total_bytes"] == sum(files.values())
        human = cli("metadata", "list-files", path, *args)
        assert human.exit_code == 0 and f"{len(files)} file(s), " in human.stdout and " listed in " in human.stdout
        assert all(name in human.stdout for name in files)


@pytest.mark.parametrize("name", CASES)
def test_list_files_names_a_partition_the_metadata_table_lacks(cli, one_line_error, conformance_table: Callable[[str], Path], name: str) -> None:
    path = str(conformance_table(name))
    message = one_line_error(cli("metadata", "list-files", path, "--partition", "no=such"))
    assert "no partition 'no=such' in the metadata table" in message
    if HoodieTable.open(path).config.is_partitioned:
        assert "--partition is required" in one_line_error(cli("metadata", "list-files", path))
    else:
        assert _json(cli("metadata", "list-files", path, "--partition", ".", "--json"))["partition"] == ""


@pytest.mark.parametrize("name", CASES)
def test_stats_describes_partitions_slices_and_timeline(cli, conformance_table: Callable[[str], Path], name: str) -> None:
    path = str(conformance_table(name))
    table = HoodieTable.open(path)
    mdt = HoodieTable.open(f"{path}/.hoodie/metadata")
    out = _json(cli("metadata", "stats", path, "--json"))
    assert out["complete"] == list(table.config.metadata_partitions)
    assert set(out["partition_states"]) >= set(out["complete"]) and "files" in out["on_storage"]
    assert all(out["partition_states"][p] == "complete" for p in out["complete"])
    view = mdt.local_view()
    for partition in out["on_storage"]:
        slices = sorted(view.latest_slices(partition), key=lambda s: s.file_id)
        mine = [s for s in out["slices"] if s["partition"] == partition]
        assert [s["file_id"] for s in mine] == [s.file_id for s in slices]
        for stat, slc in zip(mine, slices):
            assert stat["log_files"] == len(slc.log_files) and stat["log_bytes"] == sum(lf.size for lf in slc.log_files)
            assert stat["log_blocks"] >= stat["log_files"]
            if slc.base_file is None:
                assert stat["base_records"] is None
            else:
                with HFileReader.open(mdt.storage, slc.base_file.path) as hfile:
                    assert stat["base_records"] == hfile.entry_count
    files_records = sum(s["base_records"] or 0 for s in out["slices"] if s["partition"] == "files")
    assert files_records + sum(s["log_records"] for s in out["slices"] if s["partition"] == "files") > 0
    last = mdt.timeline.completed()[-1]
    assert out["last_completed"] == [last.timestamp, last.action] and out["pending"] == []
    human = cli("metadata", "stats", path)
    assert human.exit_code == 0
    assert f"Last completed instant: {last.timestamp} ({last.action}); pending: none" in human.stdout
    assert "Gathered in " in human.stdout


@pytest.mark.parametrize("name", CASES)
def test_stats_shows_pending_instants_and_inflight_partitions(cli, conformance_table: Callable[[str], Path], name: str, tmp_path: Path) -> None:
    base = _copy(conformance_table, name, tmp_path)
    mdt = HoodieTable.open(str(base / ".hoodie" / "metadata"))
    last = mdt.timeline.completed()[-1]
    pending = str(int(last.timestamp) + 1)  # a delta commit a writer requested after it
    (Path(mdt.timeline.instant_path(last)).parent / f"{pending}.deltacommit.requested").write_bytes(b"")
    table = HoodieTable.open(str(base))
    props = {**table.config.props, "hoodie.table.metadata.partitions": "files", "hoodie.table.metadata.partitions.inflight": "record_index"}
    (base / ".hoodie" / "hoodie.properties").write_bytes(TableConfig(props).render())
    out = _json(cli("metadata", "stats", str(base), "--json"))
    assert out["pending"] == [[pending, "deltacommit", "REQUESTED"]]
    assert out["complete"] == ["files"] and out["inflight"] == ["record_index"]
    assert out["partition_states"]["files"] == "complete" and out["partition_states"]["record_index"] == "inflight"
    assert all(out["partition_states"][p] == "not listed" for p in out["on_storage"] if p not in ("files", "record_index"))
    human = cli("metadata", "stats", str(base))
    assert f"pending: {pending} (deltacommit, REQUESTED)" in human.stdout
    assert "inflight" in human.stdout


@pytest.mark.parametrize("command", [["list-partitions"], ["list-partitions", "--compare"], ["list-files", "-p", "a"], ["stats"]])
def test_a_table_without_a_metadata_table_is_one_error_line(cli, one_line_error, table_without_mdt, command: list[str]) -> None:
    message = one_line_error(cli("metadata", command[0], table_without_mdt.path, *command[1:]))
    assert table_without_mdt.path in message and "metadata table" in message


def test_a_table_named_but_not_written_is_an_error(cli, one_line_error, table_without_mdt, tmp_path: Path) -> None:
    # hoodie.table.metadata.partitions names 'files', but .hoodie/metadata does not exist
    base = Path(table_without_mdt.path)
    props = {**HoodieTable.open(str(base)).config.props, "hoodie.table.metadata.partitions": "files"}
    (base / ".hoodie" / "hoodie.properties").write_bytes(TableConfig(props).render())
    for command in (["list-partitions"], ["stats"]):
        message = one_line_error(cli("metadata", *command, str(base)))
        assert "metadata" in message and str(base) in message


def test_a_missing_table_is_one_error_line(cli, one_line_error, tmp_path: Path) -> None:
    assert "no Hudi table at" in one_line_error(cli("metadata", "stats", str(tmp_path / "nothing")))


@pytest.mark.parametrize("name", CASES)
def test_validate_and_show_list_through_the_metadata_table(
    cli, conformance_table: Callable[[str], Path], name: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``hoodie validate`` and ``hoodie show`` of a table with a metadata table list no
    partition folder (unless ``hoodie.metadata.enable=false`` for a service command), and
    validate still finds a file the metadata table lists and storage lost."""
    base = _copy(conformance_table, name, tmp_path)
    storage = FolderListings(str(base))
    monkeypatch.setattr("hoodie.table.table.storage_for", lambda path: storage)
    assert json.loads(cli("validate", str(base), "--json").stdout)["ok"] is True
    assert cli("show", str(base), "--json").exit_code == 0
    assert not storage.listed, storage.listed
    assert cli("explain", str(base), "-o", "hoodie.metadata.enable=false").exit_code == 0
    gone = next(s.base_file for s in HoodieTable.open(str(base)).local_view().latest_slices_all() if s.base_file is not None)
    Path(gone.path).unlink()
    report = json.loads(cli("validate", str(base), "--json").stdout)
    assert [(p["file_name"], p["kind"]) for p in report["problems"]] == [(gone.file_name, "missing")], report
