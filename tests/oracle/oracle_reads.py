"""The reads every oracle test compares after each write: snapshot, read-optimized (on
merge-on-read), the incremental pull of the last write and time travel to before it,
each by Apache Hudi and by hoodie (meta columns included), and against the model."""
from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from hudi_oracle import HUDI_0_15, Completed, HudiOracle, OracleRefused
from sequences import TIMESTAMP_KEYS, Layout, Model, batch, data, differences, model_rows, rows

import hoodie
from hoodie.config.properties import parse_properties
from hoodie.errors import DamagedTableError, HoodieError


def log_files(path: Path) -> list[Path]:
    """The log files under a table's partitions (not its metadata table's)."""
    return [p for p in path.rglob(".*.log.*") if ".hoodie" not in p.relative_to(path).parts and not p.name.endswith(".crc")]


ACTIONS = ("commit", "deltacommit", "replacecommit", "clean", "rollback", "savepoint", "restore")


def completed_actions(path: Path) -> set[str]:
    """The actions of the completed instants on a table's active timeline (any layout)."""
    names = [p.name for p in (path / ".hoodie").iterdir()] + [p.name for p in (path / ".hoodie" / "timeline").glob("*")]
    return {n.split(".", 1)[1] for n in names if n[:1].isdigit() and n.split(".", 1)[-1] in ACTIONS}


def check_services(path: Path, layout: Layout, extra: dict[str, str]) -> None:
    """After the sequence: merge-on-read reads merged log files, and with the services
    inline (``SERVICES``) a compaction (merge-on-read) and a clean completed."""
    actions = completed_actions(path)
    if extra.get("hoodie.compact.inline") == "true":
        assert "clean" in actions, f"no clean completed: {sorted(actions)}"
        # (on merge-on-read every write is a delta commit or a replace commit)
        assert not layout.is_mor or "commit" in actions, f"no compaction completed: {sorted(actions)}"
    else:
        assert bool(log_files(path)) == layout.is_mor


def table_version(path: Path) -> int:
    """``hoodie.table.version`` of the table at ``path``."""
    return int(parse_properties((path / ".hoodie" / "hoodie.properties").read_text())["hoodie.table.version"])


#: Apache Hudi refuses time travel to anything older than the last clean's
#: earliestCommitToRetain; hoodie reads a view whose files are all still there (the
#: cleaner keeps each file group's last slice before that commit) and raises
#: DamagedTableError otherwise (docs/apache-hudi.md)
CLEANED_UP = "Cleaner cleaned up the timestamp of interest"


def path_valued(version: str, options: dict[str, str]) -> str | None:
    """The column Apache Hudi ``version`` fills from the partition folders, not from the
    files, in its reads of base files alone (copy-on-write, read-optimized), or None:
    Apache Hudi 0.15 types the timestamp key generator's partition field as a string
    and Spark takes its values from the partition path (docs/apache-hudi.md)."""
    if version == HUDI_0_15 and options.get("hoodie.datasource.write.keygenerator.class") == TIMESTAMP_KEYS:
        return options["hoodie.datasource.write.partitionpath.field"]
    return None


def _from_path(theirs: list[dict[str, Any]], ours: list[dict[str, Any]], column: str, what: str) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """Both reads without ``column``, once every value of it in Apache Hudi's read is
    checked to be its row's partition path (without a hive-style ``column=``)."""
    wrong = [r for r in theirs if r[column] != r["_hoodie_partition_path"].removeprefix(f"{column}=")]
    assert not wrong, f"Apache Hudi's {what} no longer reads {column} from the partition path: {wrong[:3]}"
    return [{k: v for k, v in r.items() if k != column} for r in theirs], [{k: v for k, v in r.items() if k != column} for r in ours]


def both_read(
    oracle: HudiOracle, path: Path, options: dict[str, str], what: str, time_travel: bool = False, from_path: str | None = None
) -> list[dict[str, Any]] | None:
    """hoodie's rows, checked equal to Apache Hudi's; when Apache Hudi refuses the read,
    hoodie must refuse it too (None), except for time travel past the cleaner's boundary
    (``time_travel``), which hoodie reads when every file of that view is there.
    ``from_path``: a column Apache Hudi reads from the partition path (see
    :func:`path_valued`), checked to be so and left out of the comparison."""
    theirs: list[dict[str, Any]] | Exception
    ours: list[dict[str, Any]] | Exception
    try:
        theirs = rows(oracle.read(path, options))
    except OracleRefused as refused:
        theirs = refused
    try:
        ours = rows(hoodie.read(str(path), options))
    except HoodieError as refused:
        ours = refused
    version = oracle.setup.hudi_version
    if time_travel and isinstance(theirs, Exception) and CLEANED_UP in str(theirs):
        if isinstance(ours, DamagedTableError):
            return None
        assert not isinstance(ours, Exception), f"hoodie refuses the {what} with an unexpected error: {ours}"
        return ours  # (checked against the model by the caller)
    if isinstance(theirs, Exception) or isinstance(ours, Exception):
        assert isinstance(theirs, Exception) and isinstance(ours, Exception), (
            f"only one refuses the {what}: Apache Hudi {version}: {theirs if isinstance(theirs, Exception) else 'reads it'}; "
            f"hoodie: {ours if isinstance(ours, Exception) else 'reads it'}"
        )
        raise AssertionError(f"both refuse the {what}: Apache Hudi {version}: {theirs}; hoodie: {ours}")
    compared = _from_path(theirs, ours, from_path, what) if from_path else (theirs, ours)
    assert compared[0] == compared[1], f"Apache Hudi {version} (left) and hoodie differ on the {what}:\n{differences(*compared)}"
    return ours


def check_reads(
    oracle: HudiOracle, path: Path, layout: Layout, model: Model, writes: list[Completed], step: str, from_path: str | None = None
) -> None:
    """After ``step``, the last of ``writes``: every read agrees. The incremental pull
    names the range by completion times (the instant times on table version 6).
    ``from_path``: the column Apache Hudi reads from the partition path in the
    read-optimized read of a merge-on-read table (:func:`path_valued`)."""
    snapshot = both_read(oracle, path, {}, f"snapshot after {step}")
    assert snapshot is not None
    expected = model_rows(model.rows.values())
    assert data(snapshot) == expected, f"snapshot after {step} (left) differs from the model:\n{differences(data(snapshot), expected)}"
    if layout.is_mor:  # (on copy-on-write it is the snapshot)
        both_read(oracle, path, {"hoodie.datasource.query.type": "read_optimized"}, f"read-optimized read after {step}", from_path=from_path)
    if len(writes) > 1:
        previous, last = writes[-2], writes[-1]
        pulled = both_read(oracle, path, {
            "hoodie.datasource.query.type": "incremental",
            "hoodie.datasource.read.begin.instanttime": previous.completion,
            "hoodie.datasource.read.end.instanttime": last.completion,
        }, f"incremental pull of {step}")
        assert pulled is not None
        pulled_keys = {r["uuid"] for r in pulled}
        assert pulled_keys == model.changed[last.instant], (
            f"incremental pull of {step}: only pulled {sorted(pulled_keys - model.changed[last.instant])}, "
            f"only in the model {sorted(model.changed[last.instant] - pulled_keys)}"
        )
        before = both_read(oracle, path, {"as.of.instant": previous.instant}, f"time travel to before {step}", time_travel=True)
        expected = model_rows(model.as_of[previous.instant].values())
        assert before is None or data(before) == expected, f"time travel to before {step} (left) differs from the model:\n{differences(data(before), expected)}"


def run_sequence(
    oracle: HudiOracle,
    path: Path,
    layout: Layout,
    model: Model,
    extra: dict[str, str],
    sequence: list[tuple[str, list[dict[str, Any]]]],
    write: Callable[[str, list[dict[str, Any]]], Completed],
    writer: str,
    from_path: str | None = None,
) -> None:
    """Each (operation, records) of ``sequence`` written by ``write`` (which returns the
    write it completed), applied to the model and checked by :func:`check_reads` (with
    ``from_path``); then :func:`check_services`."""
    writes: list[Completed] = []
    for n, (op, records) in enumerate(sequence):
        done = write(op, records)
        model.apply(done.instant, op, records)
        writes.append(done)
        check_reads(oracle, path, layout, model, writes, f"write {n} ({op}) by {writer}", from_path)
    check_services(path, layout, extra)


HOODIE, HUDI = "hoodie", "Apache Hudi"
#: one write of a sequence in turns: who writes (HOODIE or HUDI), the operation, the records
Turn = tuple[str, str, list[dict[str, Any]]]


def write_in_turns(
    oracle: HudiOracle, path: Path, layout: Layout, options: dict[str, str], turns: list[Turn], check: Callable[[str, str, list[dict[str, Any]]], None]
) -> None:
    """Each turn written by hoodie or by Apache Hudi with ``options``; after each, every
    read agrees with the model (:func:`check_reads`) and ``check(step, operation, records)``
    holds."""
    model = Model.of(layout)
    writes: list[Completed] = []
    for n, (writer, op, records) in enumerate(turns):
        step_options = {**options, "hoodie.datasource.write.operation": op}
        if writer == HOODIE:
            instant = hoodie.write(batch(records), str(path), step_options)
            done = Completed(instant, "", instant)  # (table version 6: completion is the instant)
        else:
            done = oracle.write(path, batch(records), step_options)[0]
        model.apply(done.instant, op, records)
        writes.append(done)
        step = f"write {n} ({op}) by {writer}"
        check_reads(oracle, path, layout, model, writes, step)
        check(step, op, records)
