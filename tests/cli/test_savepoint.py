"""``hoodie savepoint create|delete|list`` on real tables."""
from __future__ import annotations

import json
import re

import hoodie
from hoodie.services.savepoint import list_savepoints


def _savepoints(path: str):
    return list_savepoints(hoodie.HoodieTable.open(path))


def test_create_the_latest_commit_by_default(cli, cow):
    result = cli("savepoint", "create", cow.path)
    assert result.exit_code == 0, result.output
    [sp] = _savepoints(cow.path)
    assert sp.instant == cow.commits[-1]
    assert result.stdout.strip() == f"Savepoint {sp.instant} created: 2 file(s) in 2 partition(s) are kept until it is deleted"


def test_create_list_and_delete(cli, cow):
    result = cli("savepoint", "create", cow.path, "--instant", cow.commits[1], "--user", "ann", "--comment", "before the fix", "--json")
    assert result.exit_code == 0, result.output
    created = json.loads(result.stdout)
    [sp] = _savepoints(cow.path)
    assert created["instant"] == sp.instant == cow.commits[1]
    assert created["savepointed_by"] == "ann" and created["comments"] == "before the fix"
    # the files of the commit's view: one base file per partition
    view = hoodie.HoodieTable.open(cow.path).view(cow.commits[1])
    assert created["files"] == {p: [s.base_file.file_name for s in view.latest_slices(p)] for p in ("a", "b")}

    listing = cli("savepoint", "list", cow.path)
    assert listing.exit_code == 0
    assert re.search(rf"│ {cow.commits[1]} │ \d{{4}}-\d\d-\d\d \d\d:\d\d:\d\d UTC │ ann │ +2 │ +2 │ before the fix │", listing.stdout), listing.stdout
    assert json.loads(cli("savepoint", "list", cow.path, "--json").stdout) == [created]

    deleted = cli("savepoint", "delete", cow.path, cow.commits[1])
    assert deleted.exit_code == 0, deleted.output
    assert deleted.stdout.strip() == f"Savepoint {cow.commits[1]} deleted; the files it kept can be cleaned again"
    assert _savepoints(cow.path) == []
    assert cli("savepoint", "list", cow.path).stdout.strip() == "No savepoints on the timeline of t."
    assert json.loads(cli("savepoint", "list", cow.path, "--json").stdout) == []


def test_errors(cli, cow, one_line_error):
    assert cli("savepoint", "create", cow.path, "--instant", cow.commits[0]).exit_code == 0
    assert one_line_error(cli("savepoint", "create", cow.path, "--instant", cow.commits[0])) == (
        f"commit {cow.commits[0]} of {cow.path} is already savepointed"
    )
    assert one_line_error(cli("savepoint", "create", cow.path, "--instant", "20000101000000000")) == (
        f"cannot savepoint 20000101000000000: it is not a completed commit on the active timeline of {cow.path}"
    )
    assert one_line_error(cli("savepoint", "delete", cow.path, cow.commits[1])) == f"no savepoint at {cow.commits[1]} in {cow.path}"
    assert one_line_error(cli("savepoint", "delete", cow.path, "tomorrow")).startswith("invalid instant 'tomorrow' for T")
    assert one_line_error(cli("savepoint", "list", cow.path, "-o", "hoodie.savepoint=1")).startswith("unknown option hoodie.savepoint")
    assert [sp.instant for sp in _savepoints(cow.path)] == [cow.commits[0]]


def test_a_savepoint_keeps_its_files_from_the_cleaner(cli, cow):
    assert cli("savepoint", "create", cow.path, "--instant", cow.commits[1]).exit_code == 0
    [sp] = _savepoints(cow.path)
    result = cli("clean", cow.path, "--json", "-o", "hoodie.cleaner.commits.retained=1")
    deleted = {name for names in json.loads(result.stdout)["deleted"].values() for name in names}
    assert deleted and not deleted & sp.file_names()
