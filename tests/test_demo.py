"""The demo pipeline runs end to end (in process here; on Spark in test_demo_spark.py) and
leaves a table that hudi-rs reads with the expected number of trips. It deletes only a
table it created itself: any other non-empty folder given as ``--path`` is refused with
one line and exit code 1, byte for byte untouched."""
from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pyarrow as pa
import pytest
from readers import hudi_rs_table

import hoodie
from hoodie.demo import main
from hoodie.table import HoodieTable

ROOT = Path(__file__).resolve().parents[1]


def test_demo_in_process(tmp_path: Path, capsys) -> None:
    path = tmp_path / "trips"
    main(["--in-process", "--path", str(path), "--batches", "5"])
    out = capsys.readouterr().out
    assert "snapshot: 250 trips (250 expected)" in out
    assert "incremental pull of" in out and "DELETE" in out
    pulled = int(out.split("incremental pull of")[1].split("]: ")[1].split(" records")[0])
    assert f"the first 10 of {pulled} pulled records, oldest commit first" in out
    assert hudi_rs_table(path).num_rows == 250
    # the demo's writes keep a metadata table (hoodie.metadata.enable's default), as Apache Hudi's do
    assert HoodieTable.open(str(path)).config.metadata_partitions == ("files",)


def _tree(path: Path) -> dict[str, bytes | str]:
    """Every file (its bytes), folder and link (its target) under ``path``."""
    out: dict[str, bytes | str] = {}
    for folder, dirs, files in os.walk(path):
        for name in dirs + files:
            full = Path(folder, name)
            key = str(full.relative_to(path))
            out[key] = f"-> {os.readlink(full)}" if full.is_symlink() else (full.read_bytes() if full.is_file() else "dir")
    return out


def _refused(path: Path, capsys) -> str:
    """Run the demo at ``path``; it must refuse (exit code 1) with one line, and return it."""
    with pytest.raises(SystemExit) as stop:
        main(["--in-process", "--path", str(path), "--batches", "3"])
    message = str(stop.value.code)
    assert message.startswith(f"hoodie demo: refusing to use {path}: it holds "), message
    assert "\n" not in message and "the demo replaces only a table it created" in message
    assert capsys.readouterr().out == ""  # nothing was written or shown
    return message


def test_a_folder_of_csv_files_is_refused_untouched(tmp_path: Path) -> None:
    """The issue's reproduction, as ``./scripts/demo.sh --path DIR`` runs it (on Spark: the
    refusal comes before any session starts)."""
    data = tmp_path / "data"
    data.mkdir()
    (data / "trips.csv").write_text("uuid,fare\na,9.5\n")
    (data / "fares.csv").write_text("uuid,fare\nb,20.0\n")
    before = _tree(data)
    proc = subprocess.run(
        [sys.executable, "-m", "hoodie.demo", "--path", str(data)],
        capture_output=True, text=True, timeout=300, env={**os.environ, "PYTHONPATH": str(ROOT / "src")},
    )
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert proc.stderr.strip() == (
        f"hoodie demo: refusing to use {data}: it holds files that are not a Hudi table (fares.csv, trips.csv); "
        "the demo replaces only a table it created (choose another --path)"
    )
    assert _tree(data) == before


def test_a_delta_table_is_refused_untouched(tmp_path: Path, capsys) -> None:
    delta = tmp_path / "delta"
    (delta / "_delta_log").mkdir(parents=True)
    (delta / "_delta_log" / "00000000000000000000.json").write_text('{"commitInfo":{}}\n')
    (delta / "part-00000.parquet").write_bytes(b"PAR1")
    before = _tree(delta)
    assert "a Delta Lake table (_delta_log/)" in _refused(delta, capsys)
    assert _tree(delta) == before


def test_a_hudi_table_the_demo_did_not_create_is_refused_untouched(tmp_path: Path, capsys) -> None:
    table = tmp_path / "trips"
    options = {"hoodie.table.name": "trips", "hoodie.datasource.write.recordkey.field": "uuid",
               "hoodie.datasource.write.partitionpath.field": "city", "hoodie.datasource.write.hive_style_partitioning": "true"}
    hoodie.write(pa.table({"uuid": ["a"], "city": ["london"], "ts": [1]}), str(table), options)
    before = _tree(table)
    assert "a Hudi table the demo did not create (no .hoodie/.aux/hoodie-demo)" in _refused(table, capsys)
    assert _tree(table) == before


def test_a_file_and_a_link_are_refused(tmp_path: Path, capsys) -> None:
    file = tmp_path / "notes.txt"
    file.write_text("keep me")
    assert _refused(file, capsys).endswith("it holds a file; the demo replaces only a table it created (choose another --path)")
    assert file.read_text() == "keep me"
    link = tmp_path / "link"
    link.symlink_to(tmp_path / "elsewhere", target_is_directory=True)
    assert "it holds a symbolic link" in _refused(link, capsys)


@pytest.fixture(scope="module")
def demo_table(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A table the demo made (module-wide: tests copy it before they change it)."""
    path = tmp_path_factory.mktemp("demo") / "trips"
    main(["--in-process", "--path", str(path), "--batches", "3"])
    return path


def _copy(table: Path, to: Path) -> Path:
    subprocess.run(["cp", "-a", str(table), str(to)], check=True)
    return to


@pytest.mark.parametrize(
    ("where", "shown"),
    [("notes.csv", "notes.csv"), ("city=london/notes.csv", "city=london/notes.csv"), ("backup/x.parquet", "backup"),
     (".hoodie/notes.csv", ".hoodie/notes.csv")],
    ids=["beside-the-partitions", "in-a-partition", "in-a-folder-of-its-own", "in-.hoodie"],
)
def test_the_demo_table_with_foreign_files_is_refused_untouched(demo_table: Path, tmp_path: Path, capsys, where: str, shown: str) -> None:
    table = _copy(demo_table, tmp_path / "trips")
    (table / where).parent.mkdir(parents=True, exist_ok=True)
    (table / where).write_text("not the demo's")
    before = _tree(table)
    assert f"it holds the demo's table and other files ({shown})" in _refused(table, capsys)
    assert _tree(table) == before


def test_the_demo_table_with_a_link_out_is_refused_and_nothing_outside_changes(demo_table: Path, tmp_path: Path, capsys) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "precious.csv").write_text("a,b\n")
    table = _copy(demo_table, tmp_path / "trips")
    (table / "city=london" / "more").symlink_to(outside, target_is_directory=True)
    before, outside_before = _tree(table), _tree(outside)
    assert "it holds symbolic links (city=london/more)" in _refused(table, capsys)
    assert _tree(table) == before and _tree(outside) == outside_before


def test_a_rerun_replaces_the_demo_table(demo_table: Path, tmp_path: Path, capsys) -> None:
    table = _copy(demo_table, tmp_path / "trips")
    first = [i.timestamp for i in HoodieTable.open(str(table)).timeline.completed_writes()]
    main(["--in-process", "--path", str(table), "--batches", "3"])
    assert "snapshot: 240 trips (240 expected)" in capsys.readouterr().out
    second = [i.timestamp for i in HoodieTable.open(str(table)).timeline.completed_writes()]
    assert len(second) == 3 and not set(first) & set(second)  # a new table, not three more commits
    assert (table / ".hoodie" / ".aux" / "hoodie-demo").is_file()


def test_an_empty_folder_is_used(tmp_path: Path, capsys) -> None:
    empty = tmp_path / "empty"
    empty.mkdir()
    main(["--in-process", "--path", str(empty), "--batches", "3"])
    assert "snapshot: 240 trips (240 expected)" in capsys.readouterr().out
