"""``hoodie compaction schedule|run|show`` on real merge-on-read tables."""
from __future__ import annotations

import json
import re
from pathlib import Path

import hoodie
from hoodie.cli.output import human_size
from hoodie.services.compaction import pending_compactions

THRESHOLD = "hoodie.compact.inline.max.delta.commits"


def _pending(path: str) -> list[str]:
    return [inst.timestamp for inst, _ in pending_compactions(hoodie.HoodieTable.open(path))]


def _latest_slices(path: str) -> dict[str, tuple[str, int]]:
    """file id → (base instant, number of log files) of each latest slice."""
    view = hoodie.HoodieTable.open(path).view()
    return {s.file_id: (s.base_instant, len(s.log_files)) for s in view.latest_slices_all()}


def test_schedule_below_the_threshold_schedules_nothing(cli, mor):
    result = cli("compaction", "schedule", mor.path)
    assert result.exit_code == 0, result.output
    assert result.stdout.strip() == "No compaction scheduled: 3 delta commits since the last compaction, threshold 5"
    assert "--force would schedule 2 file slice(s)" in result.stderr
    assert _pending(mor.path) == []


def test_schedule_with_a_lower_threshold(cli, mor):
    result = cli("compaction", "schedule", mor.path, "-o", f"{THRESHOLD}=3")
    assert result.exit_code == 0, result.output
    [instant] = _pending(mor.path)
    assert f"Scheduled compaction {instant} of 2 file slice(s): 2 slices with the most log data" in result.stdout
    for file_id in _latest_slices(mor.path):
        assert file_id in result.stdout
    assert f"hoodie compaction run {mor.path} --instant {instant}" in result.stdout


def test_schedule_force_ignores_the_threshold(cli, mor):
    result = cli("compaction", "schedule", mor.path, "--force", "--json")
    assert result.exit_code == 0, result.output
    doc = json.loads(result.stdout)
    [instant] = _pending(mor.path)
    assert doc["scheduled"] is True and doc["instant"] == instant
    assert sorted(op["partition"] for op in doc["operations"]) == ["a", "b"]
    assert all(op["log_file_count"] == 2 for op in doc["operations"])


def test_schedule_on_a_copy_on_write_table(cli, cow):
    result = cli("compaction", "schedule", cow.path, "--force")
    assert result.exit_code == 0
    assert result.stdout.strip() == "No compaction scheduled: t is a COPY_ON_WRITE table: nothing to compact"


def test_show_lists_the_operations(cli, mor):
    assert cli("compaction", "schedule", mor.path, "--force").exit_code == 0
    table = hoodie.HoodieTable.open(mor.path)
    [(inst, plan)] = pending_compactions(table)

    result = cli("compaction", "show", mor.path)
    assert result.exit_code == 0, result.output
    assert f"Compaction {inst.timestamp} (REQUESTED): 2 file slice(s)" in result.stdout
    for op in plan.operations:
        size = human_size(int(op.metrics["TOTAL_LOG_FILES_SIZE"]))
        assert re.search(rf"│ {op.partition_path} +│ {op.file_id} +│ {op.base_instant} +│ +2 │ +{re.escape(size)} │", result.stdout), op

    doc = json.loads(cli("compaction", "show", mor.path, "--json").stdout)
    assert [p["instant"] for p in doc] == [inst.timestamp]
    assert doc[0]["state"] == "REQUESTED"
    by_file = {op["file_id"]: op for op in doc[0]["operations"]}
    for op in plan.operations:
        got = by_file[op.file_id]
        assert got["partition"] == op.partition_path
        assert got["base_instant"] == op.base_instant
        assert got["base_file"] == op.base_file
        assert got["log_files"] == list(op.log_files)
        assert got["log_file_count"] == len(op.log_files)
        assert got["log_bytes"] == int(op.metrics["TOTAL_LOG_FILES_SIZE"])


def test_show_without_pending_compactions(cli, mor, cow):
    result = cli("compaction", "show", mor.path)
    assert result.exit_code == 0
    assert result.stdout.strip() == "No pending compaction on the timeline of t."
    assert json.loads(cli("compaction", "show", mor.path, "--json").stdout) == []
    assert "COPY_ON_WRITE tables are not compacted" in cli("compaction", "show", cow.path).stdout


def test_run_compacts_the_oldest_pending_compaction(cli, mor, rows):
    before = rows(mor.path)
    assert cli("compaction", "schedule", mor.path, "--force").exit_code == 0
    [instant] = _pending(mor.path)

    result = cli("compaction", "run", mor.path)
    assert result.exit_code == 0, result.output
    assert f"Compaction {instant} completed: 2 file slice(s) compacted, 4 log file(s) merged" in result.stdout
    # every slice now starts with a base file of the compaction, without log files
    assert set(_latest_slices(mor.path).values()) == {(instant, 0)}
    for s in hoodie.HoodieTable.open(mor.path).view().latest_slices_all():
        assert s.base_file is not None and s.base_file.file_name in result.stdout
    assert rows(mor.path) == before
    assert _pending(mor.path) == []
    completed = hoodie.HoodieTable.open(mor.path).timeline.completed(["commit"])
    assert [i.timestamp for i in completed] == [instant]


def test_run_a_given_instant(cli, mor, rows):
    before = rows(mor.path)
    # two pending compactions: the first of one slice (the IO budget), the second of the other
    assert cli("compaction", "schedule", mor.path, "--force", "-o", "hoodie.compaction.target.io=0").exit_code == 0
    assert cli("compaction", "schedule", mor.path, "--force").exit_code == 0
    first, second = _pending(mor.path)

    result = cli("compaction", "run", mor.path, "--instant", second, "--json")
    assert result.exit_code == 0, result.output
    doc = json.loads(result.stdout)
    assert doc["ran"] is True and doc["instant"] == second
    assert len(doc["files"]) == 1 and doc["totals"]["log_files_compacted"] == 2
    assert _pending(mor.path) == [first]
    assert sorted(v[0] for v in _latest_slices(mor.path).values()) == sorted([mor.commits[0], second])
    assert rows(mor.path) == before


def test_run_without_a_pending_compaction(cli, mor, one_line_error):
    assert one_line_error(cli("compaction", "run", mor.path)) == f"no pending compaction in {mor.path}"


def test_run_on_a_copy_on_write_table_says_there_is_nothing_to_compact(cli, cow):
    """As schedule does: not an error, the reason on stdout; nothing is written."""
    before = sorted(p.name for p in Path(cow.path, ".hoodie").iterdir())
    result = cli("compaction", "run", cow.path)
    assert result.exit_code == 0, result.output
    assert result.stdout.strip() == "No compaction run: t is a COPY_ON_WRITE table: nothing to compact"
    assert json.loads(cli("compaction", "run", cow.path, "--json").stdout) == {
        "ran": False, "reason": "t is a COPY_ON_WRITE table: nothing to compact"
    }
    assert sorted(p.name for p in Path(cow.path, ".hoodie").iterdir()) == before


def test_run_an_instant_that_is_not_pending(cli, mor, one_line_error):
    assert cli("compaction", "schedule", mor.path, "--force").exit_code == 0
    message = one_line_error(cli("compaction", "run", mor.path, "--instant", mor.commits[0]))
    assert message == f"no pending compaction at {mor.commits[0]} in {mor.path}"
    assert one_line_error(cli("compaction", "run", mor.path, "--instant", "soon")).startswith("invalid instant 'soon' for --instant")


def test_unknown_option(cli, mor, one_line_error):
    message = one_line_error(cli("compaction", "schedule", mor.path, "-o", "hoodie.compact.inline.max.delta.comits=3"))
    assert message == f"unknown option hoodie.compact.inline.max.delta.comits; did you mean {THRESHOLD}?"
    assert _pending(mor.path) == []


def test_invalid_option_value(cli, mor, one_line_error):
    message = one_line_error(cli("compaction", "schedule", mor.path, "-o", "hoodie.compaction.strategy=Biggest"))
    assert message.startswith(
        "unknown hoodie.compaction.strategy 'Biggest' (built in: org.apache.hudi.table.action.compact.strategy.LogFileSizeBasedCompactionStrategy"
    )


def test_options_without_effect_are_noted(cli, mor):
    result = cli("compaction", "show", mor.path, "-o", f"{THRESHOLD}=3")
    assert result.exit_code == 0
    assert f"note: option {THRESHOLD} has no effect on compaction show" in result.stderr
