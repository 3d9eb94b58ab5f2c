"""Forged instants and metadata never read stale data, hang a writer or crash.

A completed write instant with empty, ``{}`` or mistyped metadata, a timeline file dated
far in the future or named in non-ASCII digits, and a ``hoodie.timeline.layout.version``
that does not match the table version are refused with an error naming the instant (or
file, or property) and the field: by ``hoodie.read``, ``hoodie.write``, the services and
the CLI (one line, no traceback). Every file a completed instant wrote stays byte for
byte as it was; once the forged file is put right, the table reads and writes as before.
"""
from __future__ import annotations

import io
import json
import time
from collections.abc import Callable, Iterator
from datetime import datetime, timedelta, timezone
from pathlib import Path

import fastavro
import pyarrow as pa
import pytest
from hostile_paths import tree_state
from typer.testing import CliRunner

import hoodie
from hoodie.cli.main import app
from hoodie.errors import ConfigError, FormatError, TimelineError, UnsupportedTableError
from hoodie.layout import format_instant
from hoodie.services.cleaning import CleanSettings, clean
from hoodie.table.table import HoodieTable
from hoodie.timeline import active
from hoodie.timeline.commit_metadata import CommitMetadata

OPTIONS = {
    "hoodie.datasource.write.recordkey.field": "key",
    "hoodie.datasource.write.partitionpath.field": "part",
    "hoodie.datasource.write.precombine.field": "ts",
    "hoodie.clean.automatic": "false",
    "hoodie.archive.automatic": "false",
}


class Table:
    """A table of two commits: C1 inserts k1, k2 into ``p``; C2 updates k1."""

    def __init__(self, path: Path, table_type: str) -> None:
        self.path = path
        self.table_type = table_type
        self.commits = [self.write(["k1", "k2"], 1), self.write(["k1"], 2)]
        self.rows = self.read_rows()

    @property
    def base(self) -> str:
        return str(self.path)

    @property
    def timeline(self) -> Path:
        return self.path / ".hoodie"

    def write(self, keys: list[str], ts: int) -> str:
        batch = pa.table({"key": keys, "part": ["p"] * len(keys), "ts": [ts] * len(keys), "val": [float(ts)] * len(keys)})
        opts = {**OPTIONS, "hoodie.table.name": "t", "hoodie.datasource.write.table.type": self.table_type}
        return hoodie.write(batch, self.base, opts)

    def read_rows(self) -> list[tuple[str, int]]:
        return sorted((r["key"], r["ts"]) for r in hoodie.read(self.base).to_pylist())

    def latest_commit_file(self) -> Path:
        suffix = ".commit" if self.table_type == "COPY_ON_WRITE" else ".deltacommit"
        return self.timeline / f"{self.commits[-1]}{suffix}"

    def files_of_latest_commit(self) -> list[Path]:
        doc = json.loads(self.latest_commit_file().read_bytes())
        return [self.path / s["path"] for stats in doc["partitionToWriteStats"].values() for s in stats]


@pytest.fixture(params=["COPY_ON_WRITE", "MERGE_ON_READ"], ids=["cow", "mor"])
def table(tmp_path: Path, request: pytest.FixtureRequest) -> Table:
    return Table(tmp_path / "t", request.param)


@pytest.fixture
def cow(tmp_path: Path) -> Table:
    return Table(tmp_path / "t", "COPY_ON_WRITE")


@pytest.fixture
def no_waiting(monkeypatch: pytest.MonkeyPatch) -> None:
    """Waiting for the clock is a failure: a writer that meets an instant it cannot follow
    errs at once instead of spinning in ``new_instant_time``."""

    class NoSleep:
        """The time module as the timeline sees it, without its sleep (only the
        timeline's: a thread of another library, Spark's gateway, sleeps on)."""

        def __getattr__(self, name: str) -> object:
            return getattr(time, name)

        @staticmethod
        def sleep(seconds: float) -> None:
            raise AssertionError(f"hoodie waited ({seconds} s) for the clock to pass an instant")

    monkeypatch.setattr(active, "time", NoSleep())


def refused(call: Callable[[], object], error: type[Exception], *expected: str) -> None:
    with pytest.raises(error) as info:
        call()
    for text in expected:
        assert text in str(info.value), str(info.value)


def cli_refuses(*args: str, expected: tuple[str, ...]) -> None:
    """The command fails with one error line naming ``expected``, and no traceback."""
    result = CliRunner().invoke(app, list(args))
    assert result.exit_code == 1, result.output
    assert result.exception is None or isinstance(result.exception, SystemExit), result.exception
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: "), result.stderr
    assert all(text in lines[0] for text in expected), lines[0]


def committed_files_unchanged(before: dict[str, tuple[int, str]], root: Path) -> None:
    """Every file that was there is byte-identical; anything new is timeline bookkeeping."""
    after = tree_state(root)
    assert {k: after.get(k) for k in before} == before
    assert all(k.startswith(".hoodie/") for k in set(after) - set(before)), sorted(set(after) - set(before))


def every_door_refuses(t: Table, error: type[Exception], *expected: str) -> None:
    """hoodie.read, hoodie.write, a clean and the CLI's read, validate and clean all stop
    with ``error`` naming ``expected``; nothing committed changes."""
    before = tree_state(t.path)
    refused(lambda: hoodie.read(t.base), error, *expected)
    refused(lambda: t.write(["k3"], 3), error, *expected)
    refused(lambda: clean(HoodieTable.open(t.base), CleanSettings(commits_retained=1)), error, *expected)
    for command in (["read", t.base], ["validate", t.base], ["clean", t.base, "-o", "hoodie.cleaner.commits.retained=1"]):
        cli_refuses(*command, expected=expected)
    committed_files_unchanged(before, t.path)


# --- item: completed commits with empty or mistyped metadata ----------------------------------


@pytest.mark.parametrize("content", [b"", b"{}", b" \n", b'{"partitionToWriteStats": null}'], ids=["zero-bytes", "braces", "blank", "null-stats"])
def test_empty_latest_commit_with_its_files_deleted_is_refused_not_the_older_version(table: Table, content: bytes) -> None:
    victims = table.files_of_latest_commit()
    table.latest_commit_file().write_bytes(content)
    for victim in victims:
        victim.unlink()
    instant = table.commits[-1]
    every_door_refuses(table, FormatError, f"commit metadata of instant {instant}", "partitionToWriteStats")


def test_empty_latest_commit_is_refused_even_with_its_files_in_place(table: Table) -> None:
    good = table.latest_commit_file().read_bytes()
    table.latest_commit_file().write_bytes(b"")
    every_door_refuses(table, FormatError, f"commit metadata of instant {table.commits[-1]} is empty")
    table.latest_commit_file().write_bytes(good)  # put right, the table is whole again
    assert table.read_rows() == table.rows
    table.write(["k3"], 3)
    assert table.read_rows() == [("k1", 2), ("k2", 1), ("k3", 3)]


def _stats(doc: dict) -> list[dict]:
    return doc["partitionToWriteStats"]["p"]


MISTYPED: dict[str, tuple[Callable[[dict], None], str]] = {
    "stats-as-list": (lambda d: d.update(partitionToWriteStats=[1]), "partitionToWriteStats is [1] (a list), not a map"),
    "stat-as-string": (lambda d: d["partitionToWriteStats"].update(p=["x"]), "partitionToWriteStats['p']: a write stat is 'x' (a string), not a map"),
    "stats-of-a-partition-as-map": (lambda d: d["partitionToWriteStats"].update(p={}), "partitionToWriteStats['p'] is {} (a map), not a list"),
    "integer-file-id": (lambda d: _stats(d)[0].update(fileId=5), "fileId is 5 (an integer), not a string"),
    "num-writes-lots": (lambda d: _stats(d)[0].update(numWrites="lots"), "numWrites is 'lots' (a string), not an integer"),
    "boolean-count": (lambda d: _stats(d)[0].update(numInserts=True), "numInserts is True (a boolean), not an integer"),
    "path-as-list": (lambda d: _stats(d)[0].update(path=["p/x.parquet"]), "path is ['p/x.parquet'] (a list), not a string"),
    "log-files-of-integers": (lambda d: _stats(d)[0].update(logFiles=[1]), "an entry of logFiles is 1 (an integer), not a string"),
    "runtime-stats-as-text": (lambda d: _stats(d)[0].update(runtimeStats="fast"), "runtimeStats is 'fast' (a string), not a map"),
    "runtime-stat-as-text": (lambda d: _stats(d)[0].update(runtimeStats={"totalCreateTime": "x"}), "runtimeStats.totalCreateTime is 'x'"),
    "extra-metadata-as-list": (lambda d: d.update(extraMetadata=["schema"]), "extraMetadata is ['schema'] (a list), not a map"),
    "schema-as-number": (lambda d: d["extraMetadata"].update(schema=1), "extraMetadata['schema'] is 1 (an integer), not a string"),
    "replaced-ids-as-text": (lambda d: d.update(partitionToReplaceFileIds={"p": "f1"}), "partitionToReplaceFileIds['p'] is 'f1' (a string), not a list"),
    "operation-type-as-number": (lambda d: d.update(operationType=3), "operationType is 3 (an integer), not a string"),
    "compacted-as-text": (lambda d: d.update(compacted="yes"), "compacted is 'yes' (a string), not a boolean"),
}


@pytest.mark.parametrize("case", list(MISTYPED))
def test_mistyped_commit_metadata_is_a_format_error_naming_instant_and_field(table: Table, case: str) -> None:
    change, expected = MISTYPED[case]
    path = table.latest_commit_file()
    good = path.read_bytes()
    doc = json.loads(good)
    change(doc)
    path.write_bytes(json.dumps(doc).encode())
    every_door_refuses(table, FormatError, f"commit metadata of instant {table.commits[-1]}", expected)
    path.write_bytes(good)  # later writes are not broken for good: put right, all goes on
    assert table.read_rows() == table.rows
    table.write(["k3"], 3)


def test_mistyped_avro_commit_metadata_is_refused(cow: Table) -> None:
    """Avro (v8+) commit metadata decodes to the same structure: a writer schema giving a
    field another type is refused the same way."""
    doc = json.loads(cow.latest_commit_file().read_bytes())
    stat = {"fileId": _stats(doc)[0]["fileId"], "path": _stats(doc)[0]["path"], "numWrites": "lots"}
    schema = {
        "type": "record", "name": "HoodieCommitMetadata", "fields": [
            {"name": "partitionToWriteStats", "type": {"type": "map", "values": {"type": "array", "items": {
                "type": "record", "name": "HoodieWriteStat", "fields": [
                    {"name": "fileId", "type": "string"}, {"name": "path", "type": "string"}, {"name": "numWrites", "type": "string"},
                ]}}}},
            {"name": "operationType", "type": "string"},
        ],
    }
    out = io.BytesIO()
    fastavro.writer(out, fastavro.parse_schema(schema), [{"partitionToWriteStats": {"p": [stat]}, "operationType": "UPSERT"}])
    cow.latest_commit_file().write_bytes(out.getvalue())
    every_door_refuses(cow, FormatError, f"commit metadata of instant {cow.commits[-1]}", "numWrites is 'lots' (a string), not an integer")


def test_an_empty_inflight_is_still_a_pending_write_that_is_rolled_back(cow: Table) -> None:
    """Only completed instants must carry metadata: Java leaves ``.commit.requested``
    (and, from some writers, ``.inflight``) empty, and the next writer rolls them back."""
    pending = HoodieTable.open(cow.base).timeline.new_instant_time()
    (cow.timeline / f"{pending}.commit.requested").write_bytes(b"")
    (cow.timeline / f"{pending}.inflight").write_bytes(b"")
    assert cow.read_rows() == cow.rows
    cow.write(["k3"], 3)
    assert not (cow.timeline / f"{pending}.inflight").exists()
    assert cow.read_rows() == [("k1", 2), ("k2", 1), ("k3", 3)]


def test_every_completed_write_apache_hudi_made_has_metadata_of_the_right_types(conformance_case: object, conformance_table: Callable[[object], Path]) -> None:
    """Hudi (v6 JSON, v8/v9 Avro) always records partitionToWriteStats in a completed write
    instant, of the types hoodie now insists on."""
    table = HoodieTable.open(str(conformance_table(conformance_case)))
    for instant in table.timeline.completed_writes():
        table.commit_metadata(instant)  # a completed instant: decoded strictly


def test_the_commit_metadata_vectors_decode_as_completed_instants(conformance_dir: Path) -> None:
    folder = conformance_dir / "vectors" / "commit_metadata"
    for name in ("v6_commit.json", "v8_deltacommit.avro"):
        meta = CommitMetadata.decode((folder / name).read_bytes(), name, completed=True)
        assert meta.write_stats() and all(s.fileId and s.path for s in meta.write_stats())


# --- item: future and non-ASCII instants --------------------------------------------------------


@pytest.mark.parametrize(
    "name",
    ["99991231235959999.clean", "99991231235959999.commit.requested", "99991231235959999.inflight", "29991231235959.commit"],
)
def test_an_instant_far_in_the_future_is_refused_where_the_timeline_is_read(table: Table, name: str, no_waiting: None) -> None:
    (table.timeline / name).write_bytes(b"")
    every_door_refuses(table, TimelineError, repr(name), "more than 1 day after this machine's clock")
    cli_refuses("timeline", table.base, expected=(repr(name),))
    (table.timeline / name).unlink()
    assert table.read_rows() == table.rows
    table.write(["k3"], 3)


@pytest.mark.parametrize(
    "name",
    [
        "２０２０１２３１２３５９５９９９９.clean",  # fullwidth digits
        "٢٠٢٠١٢٣١٢٣٥٩٥٩٩٩٩.commit",  # Arabic-Indic digits
        "20201231235959999_２０２１.commit",  # a layout-2 completion time in fullwidth digits
        "2020¹231235959999.commit.requested",  # a superscript digit (str.isdigit, yet no int)
        "latest.commit",
    ],
)
def test_an_instant_not_in_ascii_digits_is_refused(table: Table, name: str, no_waiting: None) -> None:
    (table.timeline / name).write_bytes(b"")
    every_door_refuses(table, TimelineError, repr(name), "ASCII digits")
    (table.timeline / name).unlink()
    assert table.read_rows() == table.rows


def test_an_instant_option_in_non_ascii_digits_is_refused(cow: Table) -> None:
    fullwidth = "".join(chr(ord(c) + 0xFEE0) for c in cow.commits[0])  # "２０２６..."
    for key in ("as.of.instant", "hoodie.datasource.read.begin.instanttime"):
        options = {key: fullwidth}
        if key != "as.of.instant":
            options["hoodie.datasource.query.type"] = "incremental"
        refused(lambda: hoodie.read(cow.base, options), ConfigError, key, repr(fullwidth))  # noqa: B023 (called at once)
    cli_refuses("read", cow.base, "--as-of", fullwidth, expected=("--as-of", repr(fullwidth)))
    cli_refuses("read", cow.base, "--begin", fullwidth, expected=("--begin", repr(fullwidth)))


def test_an_instant_ahead_of_the_clock_within_a_day_is_read_but_no_writer_waits_for_it(cow: Table, no_waiting: None) -> None:
    cow.write(["k1"], 3)  # a third slice: a clean has a file to delete
    rows = cow.read_rows()
    ahead = format_instant(datetime.now(timezone.utc) + timedelta(hours=3))
    (cow.timeline / f"{ahead}.commit.requested").write_bytes(b"")  # another writer's, clock 3 h ahead
    before = tree_state(cow.path)
    assert cow.read_rows() == rows  # a pending write hides nothing
    expected = (ahead, "ahead of this machine's clock")
    refused(lambda: cow.write(["k3"], 3), TimelineError, *expected)
    refused(lambda: clean(HoodieTable.open(cow.base), CleanSettings(commits_retained=1)), TimelineError, *expected)
    cli_refuses("clean", cow.base, "-o", "hoodie.cleaner.commits.retained=1", expected=expected)
    committed_files_unchanged(before, cow.path)


def test_an_instant_slightly_ahead_of_the_clock_is_waited_for(cow: Table) -> None:
    """Another writer's clock a little ahead of this one's: the next instant waits for it
    (at most CLOCK_SKEW_WAIT) and comes after it."""
    ahead = format_instant(datetime.now(timezone.utc) + timedelta(milliseconds=300))
    (cow.timeline / f"{ahead}.clean.requested").write_bytes(b"")
    assert HoodieTable.open(cow.base).timeline.new_instant_time() > ahead


def test_new_instant_time_gives_up_when_the_clock_goes_back(cow: Table, monkeypatch: pytest.MonkeyPatch) -> None:
    """The wait for the clock is bounded even when the clock never passes the instant."""
    timeline = HoodieTable.open(cow.base).timeline
    frozen = datetime.strptime(cow.commits[-1][:14], "%Y%m%d%H%M%S").replace(tzinfo=timezone.utc)

    class StuckClock(datetime):
        @classmethod
        def now(cls, tz: object = None) -> datetime:  # type: ignore[override]
            return frozen

    ticks: Iterator[float] = iter(range(0, 10**6, 1))
    monkeypatch.setattr(active, "datetime", StuckClock)
    monkeypatch.setattr(active.time, "monotonic", lambda: float(next(ticks)))
    monkeypatch.setattr(active.time, "sleep", lambda seconds: None)
    refused(timeline.new_instant_time, TimelineError, cow.commits[-1], "did not pass")


# --- item: the timeline layout of hoodie.properties ----------------------------------------------


def _set_layout(t: Table, value: str) -> None:
    props = t.timeline / "hoodie.properties"
    text = props.read_text()
    assert "hoodie.timeline.layout.version=1\n" in text
    props.write_text(text.replace("hoodie.timeline.layout.version=1\n", f"hoodie.timeline.layout.version={value}\n"))


@pytest.mark.parametrize("value", ["2", "0", "3", "two"])
def test_a_timeline_layout_the_table_version_does_not_have_is_refused(table: Table, value: str) -> None:
    _set_layout(table, value)
    every_door_refuses(table, UnsupportedTableError, f"hoodie.timeline.layout.version={value!r}", "version 6")
    cli_refuses("timeline", table.base, expected=("hoodie.timeline.layout.version",))
    _set_layout_back(table, value)
    assert table.read_rows() == table.rows


def _set_layout_back(t: Table, value: str) -> None:
    props = t.timeline / "hoodie.properties"
    props.write_text(props.read_text().replace(f"hoodie.timeline.layout.version={value}\n", "hoodie.timeline.layout.version=1\n"))

