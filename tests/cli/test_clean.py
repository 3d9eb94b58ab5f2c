"""``hoodie clean [--dry-run]`` on real tables."""
from __future__ import annotations

import json
import os
import posixpath
import re

import hoodie
from hoodie.config.options import HoodieConfig
from hoodie.services.cleaning import plan_clean, schedule_clean
from hoodie.services.inline import clean_settings

RETAIN_ONE = ["-o", "hoodie.cleaner.commits.retained=1"]


def _plan(path: str, **options: str):
    return plan_clean(hoodie.HoodieTable.open(path), clean_settings(HoodieConfig.of(options)))


def _cleans(path: str) -> list[str]:
    return [str(i) for i in hoodie.HoodieTable.open(path).timeline.instants if i.action == "clean"]


def test_dry_run_prints_the_plan_and_deletes_nothing(cli, cow):
    plan = _plan(cow.path, **{"hoodie.cleaner.commits.retained": "1"})
    assert plan.file_count == 6  # 3 older slices of each file group; the last before the boundary stays
    result = cli("clean", cow.path, "--dry-run", *RETAIN_ONE)
    assert result.exit_code == 0, result.output
    lines = result.stdout.splitlines()
    assert lines[0] == f"Clean plan for t (KEEP_LATEST_COMMITS): would delete 6 file(s): {plan.reason}"
    assert lines[1] == "Partitions: all partitions (first clean of the table)"
    for partition, paths in plan.files_to_delete.items():
        for path in paths:
            assert re.search(rf"│ {partition} +│ {re.escape(posixpath.basename(path))} +│", result.stdout)
            assert os.path.exists(path)
    assert _cleans(cow.path) == []


def test_dry_run_json(cli, cow):
    plan = _plan(cow.path, **{"hoodie.cleaner.commits.retained": "1"})
    doc = json.loads(cli("clean", cow.path, "--dry-run", "--json", *RETAIN_ONE).stdout)
    assert doc["dry_run"] is True and doc["would_run"] is True
    assert doc["reason"] == plan.reason
    assert doc["policy"] == "KEEP_LATEST_COMMITS"
    assert doc["earliest_instant_to_retain"] == cow.commits[-1]
    assert doc["partitions_scanned"] == ["a", "b"]
    assert doc["files"] == {p: [posixpath.basename(f) for f in paths] for p, paths in plan.files_to_delete.items()}
    assert doc["pending_cleans"] == []


def test_nothing_to_clean_with_the_defaults(cli, cow):
    result = cli("clean", cow.path, "--dry-run")
    assert result.exit_code == 0
    assert result.stdout.strip() == "Nothing to clean in t (KEEP_LATEST_COMMITS): 5 completed commits and 10 retained: no commit is old enough to clean"
    result = cli("clean", cow.path)
    assert result.exit_code == 0
    assert result.stdout.strip() == "Nothing cleaned in t: 5 completed commits and 10 retained: no commit is old enough to clean"
    assert _cleans(cow.path) == []


def test_clean_deletes_the_planned_files(cli, cow, rows):
    before = rows(cow.path)
    plan = _plan(cow.path, **{"hoodie.cleaner.commits.retained": "1"})
    result = cli("clean", cow.path, *RETAIN_ONE)
    assert result.exit_code == 0, result.output
    table = hoodie.HoodieTable.open(cow.path)
    [clean] = table.timeline.completed(["clean"])
    assert result.stdout.splitlines()[0] == (
        f"Clean {clean.timestamp} of t deleted 6 file(s) in 2 partition(s) (KEEP_LATEST_COMMITS; retaining the view of {cow.commits[-1]} and later)"
    )
    for partition, paths in plan.files_to_delete.items():
        for path in paths:
            assert not os.path.exists(path)
            assert re.search(rf"│ {partition} +│ {re.escape(posixpath.basename(path))} +│", result.stdout)
    assert rows(cow.path) == before
    # each file group keeps its latest slice and the one the retained commit's view needs
    assert all(len(g.slices) == 2 for p in ("a", "b") for g in table.view().file_groups(p))

    # nothing left to do: the reason comes from the service
    again = cli("clean", cow.path, *RETAIN_ONE)
    assert again.exit_code == 0
    assert again.stdout.startswith("Nothing cleaned in t: no partition to clean (incremental: 0 partitions written")
    assert len(_cleans(cow.path)) == 1


def test_clean_json(cli, cow):
    doc = json.loads(cli("clean", cow.path, "--json", *RETAIN_ONE).stdout)
    [clean] = hoodie.HoodieTable.open(cow.path).timeline.completed(["clean"])
    assert doc["ran"] is True and doc["resumed"] is False
    assert doc["instant"] == clean.timestamp
    assert doc["earliest_commit_to_retain"] == cow.commits[-1]
    assert sorted(doc["deleted"]) == ["a", "b"] and sum(len(v) for v in doc["deleted"].values()) == 6
    assert doc["failed"] == {}
    assert json.loads(cli("clean", cow.path, "--json").stdout)["ran"] is False


def test_a_pending_clean_is_finished_first(cli, cow):
    table = hoodie.HoodieTable.open(cow.path)
    instant, plan = schedule_clean(table, clean_settings(HoodieConfig.of({"hoodie.cleaner.commits.retained": "2"})))
    assert instant is not None

    dry = cli("clean", cow.path, "--dry-run", *RETAIN_ONE)
    assert dry.exit_code == 0
    assert f"note: clean {instant} is pending; hoodie clean finishes it before planning a new one" in dry.stderr

    result = cli("clean", cow.path, *RETAIN_ONE)
    assert result.exit_code == 0, result.output
    assert result.stdout.startswith(f"Finished the pending clean {instant} of t deleted {plan.file_count} file(s)")
    assert _cleans(cow.path) == [f"[{instant}__clean__COMPLETED]"]


def test_merge_on_read_after_compaction(cli, mor, rows):
    before = rows(mor.path)
    assert cli("compaction", "schedule", mor.path, "--force").exit_code == 0
    assert cli("compaction", "run", mor.path).exit_code == 0
    # the compaction commit is the boundary; the slice before it is what that view reads
    result = cli("clean", mor.path, "--dry-run", *RETAIN_ONE)
    assert result.exit_code == 0
    assert result.stdout.startswith("Nothing to clean in t (KEEP_LATEST_COMMITS): nothing to delete in the 2 partitions scanned")
    assert rows(mor.path) == before


def test_invalid_settings(cli, cow, one_line_error):
    message = one_line_error(cli("clean", cow.path, "-o", "hoodie.cleaner.commits.retained=0"))
    assert message == "invalid value '0' for option hoodie.cleaner.commits.retained: expected an integer from 1"
    message = one_line_error(cli("clean", cow.path, "-o", "hoodie.cleaner.policy=KEEP_NOTHING"))
    assert message.startswith("invalid value 'KEEP_NOTHING' for option hoodie.cleaner.policy: expected one of KEEP_LATEST_COMMITS")


def test_unknown_option(cli, cow, one_line_error):
    message = one_line_error(cli("clean", cow.path, "-o", "hoodie.cleaner.commits.retain=1"))
    assert message == "unknown option hoodie.cleaner.commits.retain; did you mean hoodie.cleaner.commits.retained?"
    assert _cleans(cow.path) == []


def test_option_syntax(cli, cow, one_line_error):
    assert one_line_error(cli("clean", cow.path, "-o", "hoodie.cleaner.commits.retained")).startswith(
        "invalid value 'hoodie.cleaner.commits.retained' for --option: expected key=value"
    )
    assert one_line_error(cli("clean", cow.path, "-o", "cleaner.commits=1")) == (
        "unknown option cleaner.commits for --option (Hudi options start with 'hoodie.')"
    )


def test_options_of_other_services_are_noted(cli, cow):
    result = cli("clean", cow.path, "--dry-run", "-o", "hoodie.keep.min.commits=5")
    assert result.exit_code == 0
    assert "note: option hoodie.keep.min.commits has no effect on clean" in result.stderr
