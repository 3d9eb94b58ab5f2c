"""``hoodie explain``: one line per table service, with the planners' reasons verbatim."""
from __future__ import annotations

import json
import os

import hoodie
from hoodie.config.options import HoodieConfig
from hoodie.services.archival import plan_archive
from hoodie.services.cleaning import plan_clean, schedule_clean
from hoodie.services.compaction import plan_compaction
from hoodie.services.inline import archive_settings, clean_settings, compaction_settings

THRESHOLD = "hoodie.compact.inline.max.delta.commits"


def _files(path: str) -> list[str]:
    return sorted(os.path.join(d, f) for d, _, fs in os.walk(path) for f in fs)


def test_defaults_on_merge_on_read(cli, mor):
    files = _files(mor.path)
    result = cli("explain", mor.path)
    assert result.exit_code == 0, result.output
    assert result.stdout.splitlines() == [
        "compaction: would not run: 3 delta commits since the last compaction, threshold 5",
        "clean: would not run: 3 completed commits and 10 retained: no commit is old enough to clean",
        "archive: would not run: 3 completed commits on the active timeline; archival starts above 30",
    ]
    assert _files(mor.path) == files  # explaining writes nothing


def test_options_change_the_thresholds(cli, mor_without_mdt):
    mor = mor_without_mdt  # (a metadata table would hold archival back until it compacts)
    options = {THRESHOLD: "3", "hoodie.cleaner.commits.retained": "1", "hoodie.keep.min.commits": "1", "hoodie.keep.max.commits": "2"}
    table = hoodie.HoodieTable.open(mor.path)
    config = HoodieConfig.of(options)
    compaction = plan_compaction(table, compaction_settings(config))
    clean = plan_clean(table, clean_settings(config))
    archive = plan_archive(table, archive_settings(config))
    assert compaction.should_run and archive.should_run and not clean.should_run

    args = [a for k, v in options.items() for a in ("-o", f"{k}={v}")]
    result = cli("explain", mor.path, *args)
    assert result.exit_code == 0, result.output
    assert result.stdout.splitlines() == [
        f"compaction: would run: {compaction.reason}",
        f"clean: would not run: {clean.reason} ({clean.partition_selection})",
        f"archive: would run: {archive.reason}",
    ]
    assert result.stderr == ""


def test_copy_on_write(cli, cow):
    result = cli("explain", cow.path, "-o", "hoodie.cleaner.commits.retained=2")
    assert result.exit_code == 0, result.output
    table = hoodie.HoodieTable.open(cow.path)
    clean = plan_clean(table, clean_settings(HoodieConfig.of({"hoodie.cleaner.commits.retained": "2"})))
    assert result.stdout.splitlines() == [
        "compaction: does not apply: t is a COPY_ON_WRITE table: nothing to compact",
        f"clean: would run: {clean.reason} ({clean.partition_selection})",
        "archive: would not run: 5 completed commits on the active timeline; archival starts above 30",
    ]


def test_pending_work_is_mentioned(cli, mor):
    assert cli("compaction", "schedule", mor.path, "--force").exit_code == 0
    instant = hoodie.HoodieTable.open(mor.path).timeline.pending(["compaction"])[0].timestamp
    line = cli("explain", mor.path).stdout.splitlines()[0]
    assert line == f"compaction: would not run: 0 delta commits since the last compaction, threshold 5 [pending: {instant}]"


def test_an_unfinished_clean_runs_first(cli, cow):
    table = hoodie.HoodieTable.open(cow.path)
    instant, _ = schedule_clean(table, clean_settings(HoodieConfig.of({"hoodie.cleaner.commits.retained": "1"})))
    line = cli("explain", cow.path).stdout.splitlines()[1]
    assert line == f"clean: would run: clean {instant} is unfinished and would be completed first [pending: {instant}]"


def test_json(cli, mor):
    doc = json.loads(cli("explain", mor.path, "--json", "-o", f"{THRESHOLD}=2").stdout)
    assert [d["service"] for d in doc] == ["compaction", "clean", "archive"]
    assert [d["status"] for d in doc] == ["would run", "would not run", "would not run"]
    assert doc[0]["reason"].startswith("2 slices with the most log data")
    assert all(d["pending"] == [] for d in doc)


def test_errors(cli, mor, one_line_error):
    assert one_line_error(cli("explain", mor.path, "-o", "hoodie.compact.inline.max.delta=3")).startswith(
        "unknown option hoodie.compact.inline.max.delta; did you mean"
    )
    assert one_line_error(cli("explain", mor.path, "-o", f"{THRESHOLD}=three")).startswith(f"invalid value 'three' for option {THRESHOLD}")
    assert one_line_error(cli("explain", str(mor.path) + "-missing")).startswith("no Hudi table at")


def test_write_options_are_noted(cli, mor):
    result = cli("explain", mor.path, "-o", "hoodie.parquet.max.file.size=1000")
    assert result.exit_code == 0
    assert result.stderr.strip() == "note: option hoodie.parquet.max.file.size has no effect on explain"
