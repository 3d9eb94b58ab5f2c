"""Options at the front door (``hoodie.read`` / ``hoodie.write``): a misspelled option is
an error naming the closest one, never read past (a time travel that silently returns the
latest snapshot), and a bad value names the option, the value and what is expected.
Keys that are no mistake (Spark's own, Hudi's read options) pass."""
from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pyarrow as pa
import pytest

import hoodie
from hoodie.config import options as o
from hoodie.config.options import OPTIONS, HoodieConfig, closest_option
from hoodie.errors import ConfigError

OPTS = {
    "hoodie.table.name": "t",
    "hoodie.datasource.write.recordkey.field": "k",
    "hoodie.datasource.write.precombine.field": "ts",
    "hoodie.index.bloom.num_entries": "500",
}


@pytest.fixture
def two_commits(tmp_path: Path) -> tuple[str, str, str]:
    path = str(tmp_path / "t")
    t1 = hoodie.write(pa.table({"k": ["a"], "ts": [1]}), path, OPTS)
    t2 = hoodie.write(pa.table({"k": ["a", "b"], "ts": [2, 2]}), path, OPTS)
    return path, t1, t2


def refused(call: Callable[[], object], key: str, value: str, expected: str) -> None:
    """``call`` raises a :class:`ConfigError` naming ``key``, ``value`` and ``expected``."""
    with pytest.raises(ConfigError) as err:
        call()
    assert str(err.value).startswith(f"invalid value {value!r} for option {key}: {expected}"), err.value


def rows(data: pa.Table) -> list[tuple]:
    return sorted((r["k"], r["ts"]) for r in data.select(["k", "ts"]).to_pylist())


@pytest.mark.parametrize(
    ("typed", "meant"),
    [
        ("as.of.instnt", "as.of.instant"),  # the reproduction of issue 27 item 9
        ("as_of_instant", "as.of.instant"),
        ("asOfInstant", "as.of.instant"),
        ("hoodie.datasource.query.typ", "hoodie.datasource.query.type"),
        ("hoodi.datasource.query.type", "hoodie.datasource.query.type"),
        ("datasource.read.begin.instanttime", "hoodie.datasource.read.begin.instanttime"),
        ("ignoreMisingFiles", "ignoreMissingFiles"),
    ],
)
def test_a_misspelled_read_option_is_an_error_naming_the_closest(two_commits: tuple[str, str, str], typed: str, meant: str) -> None:
    path, t1, _ = two_commits
    with pytest.raises(ConfigError) as err:
        hoodie.read(path, {typed: t1})
    assert str(err.value) == f"unknown option {typed}; did you mean {meant}?"
    if meant == "as.of.instant":  # what was meant: the first commit, not the latest snapshot
        assert rows(hoodie.read(path, {meant: t1})) == [("a", 1)]


def test_a_misspelled_write_option_outside_hoodie_is_an_error_and_writes_nothing(two_commits: tuple[str, str, str]) -> None:
    path, _, t2 = two_commits
    with pytest.raises(ConfigError, match=r"^unknown option hoodi\.datasource\.write\.operation; did you mean hoodie\.datasource\.write\.operation\?$"):
        hoodie.write(pa.table({"k": ["a"], "ts": [3]}), path, {**OPTS, "hoodi.datasource.write.operation": "delete"})
    assert [i.timestamp for i in hoodie.HoodieTable.open(path).timeline.completed_writes()][-1] == t2


def test_keys_that_are_no_mistake_pass(two_commits: tuple[str, str, str]) -> None:
    path, t1, t2 = two_commits
    spark_keys = {"path": path, "header": "true", "basePath": path, "mergeSchema": "false", "spark.sql.files.maxPartitionBytes": "1"}
    assert rows(hoodie.read(path, {**spark_keys, "as.of.instant": t1})) == [("a", 1)]
    # Hudi's read options: those that change nothing here, and those at the value hoodie implements
    hudi_reads = {
        "hoodie.datasource.query.type": "incremental", "hoodie.datasource.read.begin.instanttime": t1,
        "hoodie.datasource.read.end.instanttime": t2, "hoodie.datasource.read.incr.path.glob": "",
        "hoodie.datasource.read.incr.filters": "", "hoodie.datasource.query.incremental.format": "latest_state",
        "hoodie.datasource.read.incr.fallback.fulltablescan.enable": "false", "hoodie.datasource.merge.type": "payload_combine",
        "hoodie.enable.data.skipping": "true", "hoodie.file.index.enable": "true", "hoodie.metadata.enable": "false",
        "hoodie.datasource.read.extract.partition.values.from.path": "false",
    }
    assert rows(hoodie.read(path, hudi_reads)) == [("a", 2), ("b", 2)]
    # Spark takes keys whatever their case
    assert rows(hoodie.read(path, {"AS.OF.INSTANT": t1})) == [("a", 1)]


@pytest.mark.parametrize(
    ("key", "value", "expected"),
    [
        ("hoodie.datasource.read.incr.path.glob", "/p1/*", "expected an empty value, the only value hoodie supports"),
        ("hoodie.datasource.read.incr.filters", "ts > 1", "expected an empty value, the only value hoodie supports"),
        ("hoodie.datasource.query.incremental.format", "cdc", "expected one of latest_state"),
        ("hoodie.datasource.merge.type", "skip_merge", "expected one of payload_combine"),
        ("hoodie.datasource.read.extract.partition.values.from.path", "maybe", "expected true or false"),
    ],
)
def test_hudi_read_options_that_would_change_the_result_are_refused_at_other_values(
    two_commits: tuple[str, str, str], key: str, value: str, expected: str
) -> None:
    path, t1, _ = two_commits
    incremental = {"hoodie.datasource.query.type": "incremental", "hoodie.datasource.read.begin.instanttime": t1}
    refused(lambda: hoodie.read(path, {**incremental, key: value}), key, value, expected)


def test_partition_values_from_the_path_are_for_spark_reads_only(two_commits: tuple[str, str, str]) -> None:
    """The in-process readers read partition columns from the data files only: asked for
    the path's values they refuse, naming the option."""
    path, _, _ = two_commits
    key = "hoodie.datasource.read.extract.partition.values.from.path"
    for read in (hoodie.read, hoodie.dataset):
        with pytest.raises(ConfigError, match=f"{key}=true is taken by Spark's batch reads only"):
            read(path, {key: "true"})


@pytest.mark.parametrize(
    ("key", "value", "expected"),
    [
        ("hoodie.parquet.max.file.size", "big", "expected an integer from 1"),
        ("hoodie.parquet.max.file.size", "1.5", "expected an integer from 1"),
        ("hoodie.parquet.small.file.limit", "-5", "expected an integer from 0"),
        ("hoodie.index.bloom.num_entries", "0", "expected an integer from 1"),
        ("hoodie.index.bloom.fpp", "x", "expected a number greater than 0 and less than 1"),
        ("hoodie.index.bloom.fpp", "1", "expected a number greater than 0 and less than 1"),
        ("hoodie.record.size.estimation.threshold", "nan", "expected a number from 0"),
        ("hoodie.upsert.shuffle.parallelism", "-3", "expected an integer from 0"),
        ("hoodie.embed.timeline.server.port", "http", "expected an integer from 0 to 65535"),
        ("hoodie.clean.automatic", "maybe", "expected true or false"),
        ("hoodie.datasource.write.operation", "upsrt", "expected one of upsert, insert"),
        ("hoodie.keep.min.commits", "0", "expected an integer from 1"),
    ],
)
def test_a_bad_write_option_value_names_the_option_the_value_and_what_is_expected(
    two_commits: tuple[str, str, str], key: str, value: str, expected: str
) -> None:
    path, _, t2 = two_commits
    refused(lambda: hoodie.write(pa.table({"k": ["c"], "ts": [3]}), path, {**OPTS, key: value}), key, value, expected)
    assert [i.timestamp for i in hoodie.HoodieTable.open(path).timeline.completed_writes()][-1] == t2


@pytest.mark.parametrize(
    ("key", "value", "expected"),
    [
        ("ignoreMissingFiles", "perhaps", "expected true or false"),
        ("as.of.instant", "yesterday", "expected an instant time"),
        ("hoodie.datasource.query.type", "snap", "expected one of snapshot, incremental, read_optimized"),
    ],
)
def test_a_bad_read_option_value_names_the_option_the_value_and_what_is_expected(
    two_commits: tuple[str, str, str], key: str, value: str, expected: str
) -> None:
    refused(lambda: hoodie.read(two_commits[0], {key: value}), key, value, expected)


def test_no_parse_error_of_any_option_leaks_python_wording() -> None:
    # every option, given a value of the wrong kind: the message says what is expected
    for option in OPTIONS.values():
        for bad in ("not-a-value!", "-1", "1e400"):
            try:
                HoodieConfig.of({option.key: bad})
            except ConfigError as e:
                message = str(e)
                assert message.startswith(f"invalid value {bad!r} for option {option.key}: expected "), message
                assert "literal" not in message and "could not convert" not in message, message


def test_spark_and_other_tools_keys_are_never_taken_for_typos() -> None:
    common = [
        "path", "header", "inferSchema", "sep", "encoding", "mode", "mergeSchema", "basePath", "pathGlobFilter", "recursiveFileLookup",
        "compression", "maxRecordsPerFile", "partitionOverwriteMode", "checkpointLocation", "versionAsOf", "timestampAsOf",
        "spark.sql.files.maxPartitionBytes", "spark.sql.parquet.compression.codec", "spark.sql.sources.partitionOverwriteMode",
        "parquet.block.size", "primaryKey", "preCombineField", "type", "table.name",
    ]
    assert {key: closest_option(key) for key in common} == dict.fromkeys(common)
    assert HoodieConfig.of(dict.fromkeys(common, "1")).raw == dict.fromkeys(common, "1")
    assert o.lookup("spark.sql.files.ignoremissingfiles") is o.IGNORE_MISSING_FILES


@pytest.mark.parametrize(
    ("key", "value", "expected"),
    [
        ("hoodie.keygen.timebased.timezone", "Mars/Base", "expected a time zone name (UTC, Europe/Paris) or an offset (+08:00)"),
        # read as seconds before: a unit Java knows but hoodie does not compute is refused
        ("hoodie.keygen.timebased.timestamp.scalar.time.unit", "HOURS", "expected one of SECONDS, MILLISECONDS, MICROSECONDS, DAYS"),
    ],
)
def test_bad_timestamp_key_generator_values_are_named_before_anything_is_written(tmp_path: Path, key: str, value: str, expected: str) -> None:
    path = tmp_path / "t"
    opts = {
        **OPTS, "hoodie.datasource.write.partitionpath.field": "ts",
        "hoodie.datasource.write.keygenerator.class": "org.apache.hudi.keygen.TimestampBasedKeyGenerator",
        "hoodie.keygen.timebased.timestamp.type": "SCALAR", "hoodie.keygen.timebased.output.dateformat": "yyyy/MM/dd", key: value,
    }
    with pytest.raises(ConfigError) as err:
        hoodie.write(pa.table({"k": ["a"], "ts": [19000]}), str(path), opts)
    assert str(err.value) == f"invalid value {value!r} for option {key}: {expected}"
    assert not path.exists()
