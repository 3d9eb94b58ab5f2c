"""``hoodie metadata stats`` shows, after the metadata table's state, the metrics of the
work the command did and the figures the metadata timeline persisted (issue 29), on
copies of the tables Apache Hudi 0.15 wrote."""
from __future__ import annotations

import json
from pathlib import Path

import pytest
from mdt_checks import SAMPLE_NAMES, copy_sample

from hoodie.metadata_table import MetadataTableReader
from hoodie.metadata_table.stats import timeline_figures
from hoodie.table import HoodieTable


@pytest.mark.parametrize("name", SAMPLE_NAMES)
def test_stats_prints_its_metrics_and_the_persisted_figures(cli, tmp_path: Path, name: str) -> None:
    base = copy_sample(name, tmp_path)
    result = cli("metadata", "stats", str(base), "--json")
    assert result.exit_code == 0, result.output
    out = json.loads(result.stdout)
    partitions = MetadataTableReader(HoodieTable.open(str(base))).all_partition_paths()
    assert out["data_partitions"] == len(partitions)
    metrics = {(m["metric"], m["value"]): m for m in out["metrics"]}
    lookup = metrics[("lookup", "partitions")]
    assert (lookup["label"], lookup["count"], lookup["keys"], lookup["hits"]) == ("kind", 1, 1, 1)
    # every slice walked once, and the files partition's slice read again by the lookup
    for partition in out["on_storage"]:
        slices = [s for s in out["slices"] if s["partition"] == partition]
        scan = metrics[("scan", partition)]
        again = 1 if partition == "files" else 0
        assert scan["count"] == len(slices) + again
        assert scan["log_files"] == sum(s["log_files"] for s in slices) * (1 + again)
        assert scan["seconds"] >= 0
    mdt = HoodieTable.open(str(base / ".hoodie" / "metadata"))
    history = {h["action"]: h for h in out["history"]}
    for f in timeline_figures(mdt.timeline):
        assert history[f.action]["instants"] == f.instants and history[f.action]["bytes_written"] == f.bytes_written
    assert history["deltacommit"]["instants"] == len(mdt.timeline.completed(["deltacommit"]))

    human = cli("metadata", "stats", str(base))
    assert human.exit_code == 0, human.output
    assert f"{len(partitions)} data partition(s) in the files partition" in human.stdout
    assert "Recorded by the metadata table's completed instants" in human.stdout
    assert "Metadata table work of this command" in human.stdout
    assert "kind=partitions" in human.stdout and "partition=record_index" in human.stdout
