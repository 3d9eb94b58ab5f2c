"""``hoodie restore PATH --to T`` on real tables."""
from __future__ import annotations

import json
import re

import hoodie


def _timeline(path: str) -> list[str]:
    return [str(i) for i in hoodie.HoodieTable.open(path).timeline.instants]


def test_restore_copy_on_write(cli, cow, rows):
    savepoint = cow.commits[2]
    assert cli("savepoint", "create", cow.path, "--instant", savepoint).exit_code == 0
    expected = rows(cow.path, {"as.of.instant": savepoint})
    assert rows(cow.path) != expected

    result = cli("restore", cow.path, "--to", savepoint, "--yes")
    assert result.exit_code == 0, result.output
    restore = hoodie.HoodieTable.open(cow.path).timeline.completed(["restore"])[0].timestamp
    assert result.stdout.splitlines()[0] == (
        f"Restored t to savepoint {savepoint} (restore {restore}): 2 instant(s) undone, 4 file(s) deleted, 0 rollback log file(s) written"
    )
    for undone in cow.commits[3:]:
        assert re.search(rf"│ {undone} │ commit │", result.stdout)
    assert rows(cow.path) == expected
    writes = [i.timestamp for i in hoodie.HoodieTable.open(cow.path).timeline.completed_writes()]
    assert writes == cow.commits[:3]

    again = cli("restore", cow.path, "--to", savepoint)  # nothing to undo: no question asked
    assert again.exit_code == 0
    assert again.stdout.strip() == f"Nothing to restore: {cow.path} has no write after savepoint {savepoint}: nothing to undo"


def test_restore_merge_on_read_past_a_compaction(cli, mor, rows, upsert):
    savepoint = mor.commits[1]
    assert cli("savepoint", "create", mor.path, "--instant", savepoint).exit_code == 0
    expected = rows(mor.path, {"as.of.instant": savepoint})
    upsert(mor.path, [1, 5], 9, "late")
    assert cli("compaction", "schedule", mor.path, "--force").exit_code == 0
    assert cli("compaction", "run", mor.path).exit_code == 0
    upsert(mor.path, [2], 10, "later")
    assert rows(mor.path) != expected

    result = cli("restore", mor.path, "--to", savepoint, "--yes", "--json")
    assert result.exit_code == 0, result.output
    doc = json.loads(result.stdout)
    assert doc["savepoint"] == savepoint and doc["resumed"] is False
    # newest first: the later upsert, the compaction (its instant is "compaction" on the
    # timeline until it completes), the first upsert and the last delta commit of the fixture
    actions = [u["action"] for u in doc["rolled_back"]]
    assert [u["instant"] for u in doc["rolled_back"]][-1] == mor.commits[2]
    assert len(actions) == 4 and actions[0] == actions[2] == actions[3] == "deltacommit"
    assert doc["rollback_log_files"]  # delta commits are undone with rollback command blocks
    assert rows(mor.path) == expected
    assert [i.timestamp for i in hoodie.HoodieTable.open(mor.path).timeline.completed_writes()] == mor.commits[:2]


def test_the_prompt(cli, cow, rows):
    savepoint = cow.commits[3]
    assert cli("savepoint", "create", cow.path, "--instant", savepoint).exit_code == 0
    before, timeline = rows(cow.path), _timeline(cow.path)

    declined = cli("restore", cow.path, "--to", savepoint, input="n\n")
    assert declined.exit_code == 1
    assert f"Restoring t to savepoint {savepoint} undoes 1 instant(s): {cow.commits[4]} (commit)" in declined.stderr
    assert f"Restore {cow.path} to {savepoint}? [y/N]" in declined.stderr
    assert declined.stderr.strip().splitlines()[-1] == "error: restore cancelled; nothing was changed (use --yes to restore without asking)"
    assert declined.stdout.strip() == "n"  # CliRunner echoes the input, as a terminal would
    no_answer = cli("restore", cow.path, "--to", savepoint, input="")
    assert no_answer.exit_code == 1 and "restore cancelled" in no_answer.stderr
    assert rows(cow.path) == before and _timeline(cow.path) == timeline

    accepted = cli("restore", cow.path, "--to", savepoint, input="y\n")
    assert accepted.exit_code == 0, accepted.output
    assert f"\nRestored t to savepoint {savepoint}" in accepted.stdout
    assert rows(cow.path) == rows(cow.path, {"as.of.instant": savepoint})


def test_not_a_savepoint(cli, cow, rows, one_line_error):
    timeline = _timeline(cow.path)
    assert one_line_error(cli("restore", cow.path, "--to", cow.commits[2], "--yes")) == (
        f"{cow.commits[2]} is not a savepoint of {cow.path} (savepoints: none (create one with hoodie savepoint create))"
    )
    assert cli("savepoint", "create", cow.path, "--instant", cow.commits[1]).exit_code == 0
    assert one_line_error(cli("restore", cow.path, "--to", cow.commits[2])) == (
        f"{cow.commits[2]} is not a savepoint of {cow.path} (savepoints: {cow.commits[1]})"
    )
    assert one_line_error(cli("restore", cow.path, "--to", "last week")).startswith("invalid instant 'last week' for --to")
    assert _timeline(cow.path) == [*timeline[:2], f"[{cow.commits[1]}__savepoint__COMPLETED]", *timeline[2:]]


def test_later_savepoints_must_go_first(cli, cow, one_line_error):
    for instant in cow.commits[1:3]:
        assert cli("savepoint", "create", cow.path, "--instant", instant).exit_code == 0
    message = one_line_error(cli("restore", cow.path, "--to", cow.commits[1], "--yes"))
    assert message == f"cannot restore {cow.path} to {cow.commits[1]}: later savepoints {cow.commits[2]} must be deleted first"
    assert len(hoodie.HoodieTable.open(cow.path).timeline.completed_writes()) == 5


def test_to_is_required(cli, cow):
    result = cli("restore", cow.path)
    assert result.exit_code == 2
    assert "--to" in result.stderr
