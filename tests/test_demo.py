"""The demo pipeline runs end to end (in process here; on Spark in test_demo_spark.py) and
leaves a table that hudi-rs reads with the expected number of trips."""
from __future__ import annotations

from pathlib import Path

from readers import hudi_rs_table

from hoodie.demo import main


def test_demo_in_process(tmp_path: Path, capsys) -> None:
    path = tmp_path / "trips"
    main(["--in-process", "--path", str(path), "--batches", "5"])
    out = capsys.readouterr().out
    assert "snapshot: 250 trips (250 expected)" in out
    assert "incremental pull of" in out and "DELETE" in out
    pulled = int(out.split("incremental pull of")[1].split("]: ")[1].split(" records")[0])
    assert f"the first 10 of {pulled} pulled records, oldest commit first" in out
    assert hudi_rs_table(path).num_rows == 250
