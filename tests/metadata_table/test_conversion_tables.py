"""Every partition's records of tables hoodie writes (metadata_table/conversion.py), read
back through the metadata table's reader: through a write sequence of many column types
(inserts, upserts with a stale update, deletes, insert_overwrite; merge-on-read with
inline compaction and cleaning), the records of each data instant, made as it completes
(as the metadata writer's hook makes them), folded in order with the metadata payload's
merge and laid out as a metadata table, list the committed files, hold each file's column
statistics and bloom filter and place every live key (tests/support/mdt_checks.py, which
also runs ``hoodie metadata validate``'s checks); so do the records of one listing of the
same table (initialisation)."""
from __future__ import annotations

import json
import shutil
import sys
from pathlib import Path

import pytest
from mdt_checks import check_bloom_filters, check_column_stats, check_files, check_record_index

import hoodie
from hoodie.formats.hfile import encode_hfile
from hoodie.metadata_table import MetadataTableReader
from hoodie.metadata_table.conversion import MdtRecords, records_for_action, records_for_listing
from hoodie.metadata_table.records import MetadataRecord, encode_value, is_deletion, merge
from hoodie.metadata_table.schema import METADATA_RECORD_SCHEMA_JSON as SCHEMA
from hoodie.metadata_table.settings import FILES, PARTITION_ORDER, MetadataSettings, file_group_ids
from hoodie.table.properties_file import store_table_config
from hoodie.table.table import HoodieTable
from hoodie.timeline.active import ActiveTimeline
from hoodie.timeline.instant import Instant, State

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "oracle"))
from sequences import SERVICES, Layout, batch, steps  # noqa: E402

ALL = MetadataSettings(enable=True, column_stats=True, bloom_filters=True, record_index=True)
INIT_SUFFIX = "010"  # a metadata table built on a table with history: at <its latest instant>010
Folded = dict[str, dict[str, MetadataRecord]]


def _fold(state: Folded, records: MdtRecords) -> None:
    for partition, rs in records.items():
        mine = state.setdefault(partition, {})
        for r in rs:
            if is_deletion(r):
                mine.pop(r.key, None)  # a delete-block entry
            else:
                mine[r.key] = merge(mine.get(r.key), r)


def _lay_out(base: Path, state: Folded) -> MetadataTableReader:
    """``state`` as a metadata table of one file group per partition (a base HFile each),
    named complete in the data table's properties, built as of the data table's latest
    instant (so that it holds every instant the data table completed)."""
    table = HoodieTable.open(str(base))
    init = table.timeline.instants[-1].timestamp + INIT_SUFFIX
    config = table.config.with_updates({"hoodie.table.metadata.partitions": ",".join(PARTITION_ORDER)})
    store_table_config(config, table.storage, table.meta_path)
    mdt = base / ".hoodie" / "metadata"
    HoodieTable.create(str(mdt), {
        "hoodie.table.name": "t_metadata", "hoodie.table.type": "MERGE_ON_READ", "hoodie.table.version": "6",
        "hoodie.table.base.file.format": "HFILE", "hoodie.table.recordkey.fields": "key",
    })
    for state_name in ("requested", "inflight"):
        (mdt / ".hoodie" / f"{init}.deltacommit.{state_name}").write_bytes(b"")
    (mdt / ".hoodie" / f"{init}.deltacommit").write_text(json.dumps({"partitionToWriteStats": {}, "operationType": "UPSERT_PREPPED"}))
    for partition in PARTITION_ORDER:
        (file_id,) = file_group_ids(partition, 1)
        folder = mdt / partition
        folder.mkdir(parents=True)
        entries = sorted((k, encode_value(r)) for k, r in state.get(partition, {}).items())
        (folder / f"{file_id}_0-0-0_{init}.hfile").write_bytes(encode_hfile(entries, schema=SCHEMA))
    return MetadataTableReader.open(str(base))


def _check(base: Path, state: Folded, gone: list[str]) -> None:
    reader = _lay_out(base, state)
    table = HoodieTable.open(str(base))
    assert check_files(reader, table)
    assert check_column_stats(reader, table) > 0
    assert check_bloom_filters(reader, table) > 0
    check_record_index(reader, str(base), gone)


@pytest.mark.parametrize("layout", [Layout("COPY_ON_WRITE", "hive"), Layout("MERGE_ON_READ", "hive"), Layout("MERGE_ON_READ", "none")], ids=lambda lay: lay.id)
def test_folded_records_read_back_as_the_data_says(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, layout: Layout) -> None:
    path = tmp_path / "t"
    state: Folded = {}
    actions: list[str] = []
    complete = ActiveTimeline.transition_to_completed

    def converting(timeline: ActiveTimeline, instant: Instant, content: bytes) -> Instant:
        table = HoodieTable.open(timeline.base_path)
        _fold(state, records_for_action(table, instant.with_state(State.COMPLETED), content, PARTITION_ORDER, ALL))
        actions.append(instant.action)
        return complete(timeline, instant, content)

    monkeypatch.setattr(ActiveTimeline, "transition_to_completed", converting)
    # the records are folded here, from the completions, and laid out as a metadata table
    # of their own: none of the writer's
    options = layout.options(
        "conv", **(SERVICES if layout.is_mor else {"hoodie.cleaner.commits.retained": "2"}), **{"hoodie.metadata.enable": "false"}
    )
    deleted: list[str] = []
    for op, records in steps("insert"):
        hoodie.write(batch(records), str(path), {**options, "hoodie.datasource.write.operation": op})
        if op == "delete":
            deleted += [r["uuid"] for r in records]
    monkeypatch.undo()
    assert {"clean", "replacecommit"} <= set(actions) and ("compaction" in actions or "commit" in actions), actions
    live = {k for k in state["record_index"]}
    gone = [k for k in deleted if k not in live]
    assert gone, "the deleted keys left the record index"
    twin = tmp_path / "twin"
    shutil.copytree(path, twin)
    _check(path, state, gone)

    # the records of one listing of the same table: the same answers
    listed = HoodieTable.open(str(twin))
    view = listed.local_view()
    files = {}
    for partition in view.all_partition_paths():
        groups = [*view.file_groups(partition), *view.replaced_file_groups(partition)]
        files[partition] = {f.file_name: f.size for g in groups for s in g.slices for f in [*([s.base_file] if s.base_file else []), *s.log_files]}
    latest = listed.timeline.completed()[-1].timestamp
    fresh: Folded = {}
    _fold(fresh, records_for_listing(listed, files, PARTITION_ORDER, ALL, latest))
    assert {k: r.live_files() for k, r in fresh[FILES].items()} == {k: r.live_files() for k, r in state[FILES].items()}
    _check(twin, fresh, gone)


def test_a_configured_column_list_reaches_nested_leaves(tmp_path: Path) -> None:
    """``hoodie.metadata.index.column.stats.column.list`` names the columns kept; a
    struct's leaf by its dotted path, in base files (the footer's column) and log files
    (the records' field) alike."""
    layout = Layout("MERGE_ON_READ", "hive")
    path = str(tmp_path / "t")
    records = [r for _, rs in steps("insert")[:4] for r in rs]
    settings = MetadataSettings(enable=True, column_stats=True, column_stats_columns=("rider.name", "ts", "absent"))
    written = {}
    for op, rs in steps("insert")[:4]:
        hoodie.write(batch(rs), path, {**layout.options("conv"), "hoodie.datasource.write.operation": op})
        table = HoodieTable.open(path)
        last = table.timeline.completed()[-1]
        found = records_for_action(table, last, table.timeline.read_content(last), ["column_stats"], settings)["column_stats"]
        for r in found:
            written.setdefault(r.payload.file_name, {})[r.payload.column_name] = r.payload
    names = [r["rider"]["name"] for r in records if r["rider"] is not None]
    logs = [f for f in written if ".log." in f]
    assert logs, f"the upsert appended to log files: {sorted(written)}"
    assert {c for f in logs for c in written[f]} == {"rider.name", "ts", "absent"}
    for file_name, cols in written.items():
        if ".log." in file_name:  # Java reads a field the records lack as null
            assert cols["absent"].min is None and cols["absent"].null_count == cols["absent"].value_count
        else:  # a footer without the column: no statistics
            assert "absent" not in cols
        rider = cols["rider.name"]
        if rider.value_count == 0:  # a log of deletes only
            assert rider.min is None and rider.null_count == 0
        else:
            assert rider.min in names and rider.max in names and rider.min <= rider.max, (file_name, rider)
    assert any(written[f]["rider.name"].value_count for f in logs), "a log of records"


@pytest.mark.parametrize("layout", [Layout("COPY_ON_WRITE", "hive"), Layout("MERGE_ON_READ", "hive")], ids=lambda lay: lay.id)
def test_the_metadata_writer_keeps_every_partition_as_the_data_says(tmp_path: Path, layout: Layout) -> None:
    """With all four partitions on, after every write of the sequence the metadata table
    hoodie writes answers as the data says; deleted keys leave the record index (the
    writer puts them in delete blocks)."""
    path = tmp_path / "t"
    options = layout.options(
        "conv", **(SERVICES if layout.is_mor else {"hoodie.cleaner.commits.retained": "2"}),
        **{"hoodie.metadata.enable": "true", "hoodie.metadata.index.column.stats.enable": "true",
           "hoodie.metadata.index.bloom.filter.enable": "true", "hoodie.metadata.record.index.enable": "true"},
    )
    deleted: set[str] = set()
    for op, records in steps("insert"):
        hoodie.write(batch(records), str(path), {**options, "hoodie.datasource.write.operation": op})
        keys = {r["uuid"] for r in records}
        deleted = (deleted | keys) if op == "delete" else (deleted - keys)
        table = HoodieTable.open(str(path))
        assert set(table.config.metadata_partitions) == set(PARTITION_ORDER)
        reader = MetadataTableReader(table)
        check_files(reader, table)
        assert check_column_stats(reader, table) > 0
        assert check_bloom_filters(reader, table) > 0
        check_record_index(reader, str(path), sorted(deleted))
