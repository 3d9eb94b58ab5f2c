"""The record index's lookup of many keys over arrays (``metadata_table/record_lookup.py``,
``MetadataTableReader.locate_many``) against the record-by-record paths it replaced:

* the file group of a key: Java's ``String.hashCode`` over Arrow's UTF-8 bytes equals the
  scalar hash on any keys (non-ASCII, beyond the Basic Multilingual Plane, NUL);
* the values decoded once per distinct value equal fastavro's decoding of every entry,
  on the record indexes Apache Hudi wrote (the 0.15 samples, the conformance tables) and
  on Apache Hudi 0.15's record-index values of ``tests/metadata_table/data``;
* the merge of a slice (base file, log blocks in order, delete blocks, a key deleted then
  written again) equals the reader's merge of records, on one thread or several.
"""
from __future__ import annotations

import io
import json
from collections.abc import Callable
from pathlib import Path

import fastavro
import pyarrow as pa
import pytest
from hudi015_samples import DELETED, sample_records
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from mdt_checks import SAMPLE_NAMES, copy_sample, mdt_tables
from mdt_layout import INIT, base_hfile, create_tables, delta_commits, hfile_block

from hoodie.errors import FormatError
from hoodie.formats.hfile import encode_hfile
from hoodie.formats.hfile import reader as reader_module
from hoodie.formats.log import write_log_file
from hoodie.formats.log.blocks import DeleteBlock, DeleteRecord
from hoodie.metadata_table import MetadataTableReader
from hoodie.metadata_table.keys import file_group_index, file_group_indices
from hoodie.metadata_table.record_lookup import _Locations
from hoodie.metadata_table.records import MetadataRecord, RecordLocation, _location, encode_value
from hoodie.metadata_table.schema import METADATA_RECORD_SCHEMA_JSON as SCHEMA
from hoodie.metadata_table.slice_parts import slice_parts
from hoodie.storage.local import LocalStorage
from hoodie.table.slice_reader.log_scan import LogScanStats
from hoodie.table.table import HoodieTable

KEY_TEXT = st.text(st.characters(blacklist_categories=("Cs",)), max_size=40)


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(KEY_TEXT, max_size=60), st.integers(1, 64), st.integers(0, 5))
def test_vectorised_hash_equals_the_scalar_hash(keys: list[str], groups: int, cut: int) -> None:
    expected = [file_group_index(k, groups) for k in keys]
    assert file_group_indices(keys, groups).tolist() == expected
    arr = pa.array(keys, pa.string())
    # a slice of an array (an offset into its buffers), a large_string array, chunks
    assert file_group_indices(arr.slice(cut), groups).tolist() == expected[cut:]
    assert file_group_indices(arr.cast(pa.large_string()), groups).tolist() == expected
    assert file_group_indices(pa.chunked_array([arr.slice(0, cut), arr.slice(cut)], pa.string()), groups).tolist() == expected


def test_vectorised_hash_of_known_keys() -> None:
    keys = ["", "a", "polygenelubricants", "zürich-𝄞", "😀", "a\x00b", "k" * 300]
    assert file_group_indices(pa.array(keys), 10).tolist() == [file_group_index(k, 10) for k in keys]
    assert file_group_indices(pa.array(keys), 7)[2] == (2**31) % 7  # hashCode() == Integer.MIN_VALUE


def _fastavro_locations(reader: MetadataTableReader) -> dict[str, tuple[str, str]]:
    """Every record-index entry of ``reader``'s latest slices decoded by fastavro one by
    one and merged in order: each live key's (partition, file id)."""
    out: dict[str, tuple[str, str] | None] = {}
    for slc in reader.file_slices("record_index"):
        for part in slice_parts(reader.storage, slc, reader._visible, LogScanStats(), reader.base_path):
            if isinstance(part, DeleteBlock):
                out.update({d.record_key: None for d in part.keys if d.record_key is not None})
                continue
            parsed = fastavro.parse_schema(json.loads(part.schema))
            for key, value in part.reader.read_all():
                raw = fastavro.schemaless_reader(io.BytesIO(value), parsed, None)
                loc = _location(raw["recordIndexMetadata"])
                partition = "" if loc.partition in (None, ".") else loc.partition
                out[key] = (partition, loc.file_id)
    return {k: v for k, v in out.items() if v is not None}


def _bulk(reader: MetadataTableReader, keys: list[str], workers: int) -> dict[str, tuple[str, str]]:
    codes, where = reader.locate_many(pa.array(keys, pa.string()), workers)
    return {k: (where[c].partition, where[c].file_id) for k, c in zip(keys, codes.tolist()) if c >= 0}


@pytest.mark.parametrize("name", SAMPLE_NAMES)
def test_bulk_lookup_equals_fastavro_on_apache_hudi_015_samples(name: str, tmp_path: Path) -> None:
    reader = MetadataTableReader(HoodieTable.open(str(copy_sample(name, tmp_path))))
    expected = _fastavro_locations(reader)
    assert expected
    asked = sorted(expected) + ["no-such-key", "k0", ""]
    for workers in (1, 2):
        assert _bulk(reader, asked, workers) == expected


@pytest.mark.parametrize("name", mdt_tables())
def test_bulk_lookup_equals_fastavro_on_conformance_tables(conformance_table: Callable[[str], Path], name: str) -> None:
    reader = MetadataTableReader(HoodieTable.open(str(conformance_table(name))))
    if "record_index" not in reader.partitions:
        pytest.skip("no record_index partition")
    expected = _fastavro_locations(reader)
    assert _bulk(reader, [*sorted(expected), "no-such-key"], 2) == expected


def test_bulk_decoder_equals_fastavro_on_apache_hudi_015_values() -> None:
    """Hudi 0.15's record-index values of every instant of both samples, encoded with
    the schema Hudi wrote them with, decoded once per distinct value."""
    parsed = fastavro.parse_schema(json.loads(SCHEMA))
    entries: dict[bytes, dict[str, object]] = {}
    for instants in sample_records().values():
        for sample in instants:
            for record in sample["records"].get("record_index", {}).values():
                if record != DELETED:
                    raw = {"key": "", "type": 5, **record}
                    buf = io.BytesIO()
                    fastavro.schemaless_writer(buf, parsed, raw)
                    entries[buf.getvalue()] = record["recordIndexMetadata"]
    assert len(entries) > 10
    values = list(entries)
    keys = pa.array([f"k{i:04d}" for i in range(2 * len(values))])
    doubled = pa.array(values + values, pa.binary())  # each distinct value twice
    locations = _Locations()
    codes = locations.codes(keys, pa.array(range(len(doubled))).to_numpy(), doubled, SCHEMA, "test").tolist()
    for i, value in enumerate(values + values):
        fast = fastavro.schemaless_reader(io.BytesIO(value), parsed, None)["recordIndexMetadata"]
        assert locations.found[codes[i]] == _location(fast) == _location(entries[value])


def test_a_record_of_another_type_in_the_record_index_is_an_error() -> None:
    files = encode_value(MetadataRecord("p1", 2, {}))
    with pytest.raises(FormatError, match="'k1'.*of type 2"):
        _Locations().codes(pa.array(["k0", "k1"]), pa.array([1]).to_numpy(), pa.array([files], pa.binary()), SCHEMA, "f.hfile")


T1, T2, T3 = (f"2025010100000{i}000" for i in range(1, 4))
FILE_ID = "4f8e6c1a-3b2d-4e5f-9a7b-1c2d3e4f5a6b-0"


def _at(key: str, partition: str, millis: int = 1735689600000) -> MetadataRecord:
    return MetadataRecord(key, 5, RecordLocation(partition, FILE_ID, millis))


def test_bulk_lookup_merges_as_the_reader_merges(tmp_path: Path) -> None:
    """Base file, then log blocks: moved keys, deleted keys, a key deleted then written
    again, keys of every kind of character (a NUL one looked up one by one), keys asked
    twice or absent."""
    base = tmp_path / "t"
    mdt = create_tables(base, "files,record_index")
    delta_commits(base / ".hoodie", [T1, T2, T3])
    delta_commits(mdt / ".hoodie", [INIT, T1, T2, T3])
    base_hfile(mdt / "files" / f"files-0000-0_0-0-0_{INIT}.hfile", MetadataRecord("__all_partitions__", 1, {}))
    keys = [f"key{i:03d}" for i in range(200)] + ["zürich", "𝄞-clef", "nul\x00key", "", "key000\x00"]
    storage = LocalStorage()
    for group in range(3):
        mine = [k for k in keys if file_group_index(k, 3) == group]
        folder = mdt / "record_index"
        base_hfile(folder / f"record-index-000{group}-0_0-0-0_{INIT}.hfile", *(_at(k, f"p{i % 4}") for i, k in enumerate(mine)))
        write_log_file(storage, str(folder / f".record-index-000{group}-0_{INIT}.log.1_0-0-0"), [
            hfile_block(T1, *(_at(k, "moved", 1735689601000) for k in mine[::5])),
            DeleteBlock.create([DeleteRecord(k, None) for k in mine[1::7]], T2),
            hfile_block(T3, *(_at(k, "back") for k in mine[1::14])),
        ])
    reader = MetadataTableReader.open(str(base))
    merged = {r.key: r.payload for r in reader.records("record_index")}
    expected = {k: (p.partition, p.file_id) for k, p in merged.items() if isinstance(p, RecordLocation)}
    assert {"moved", "back"} <= {p for p, _ in expected.values()} and len(expected) < len(keys)
    asked = [*keys, *keys[:20], "absent", "nul\x00"]
    for workers in (1, 2):
        assert _bulk(reader, asked, workers) == expected
    codes, _ = reader.locate_many(pa.array(asked), 1)
    assert (codes[len(keys):len(keys) + 20] == codes[:20]).all()  # a key asked twice: one answer
    assert reader.record_locations(asked) == {k: v for k, v in reader.record_locations(keys).items()}


@pytest.mark.parametrize("window", [reader_module.FIND_ROWS_WINDOW_BYTES, 1, 10_000])
def test_find_rows_values_are_the_entries_values(window: int, monkeypatch: pytest.MonkeyPatch) -> None:
    """An HFile of many blocks searched on threads, its blocks read a window of bytes at a
    time (one block at least): the same values as one lookup a key."""
    monkeypatch.setattr(reader_module, "FIND_ROWS_WINDOW_BYTES", window)
    from hoodie.formats.hfile import HFileReader
    from hoodie.formats.hfile.batch_lookup import arrow_rows
    from hoodie.formats.hfile.writer import HFileSettings

    entries = [(f"key{i:06d}", bytes([i % 251]) * (i % 37)) for i in range(0, 40_000, 3)]
    reader = HFileReader.from_bytes(encode_hfile(entries, HFileSettings(block_size=4096)), "t")
    asked = pa.array(sorted([k for k, _ in entries[::5]] + [f"key{i:06d}" for i in range(1, 40_000, 997)]))
    rows, lengths = arrow_rows(asked)
    for workers in (1, 2, 4):
        which, values = reader.find_rows(rows, lengths, workers)
        got = dict(zip([asked[int(w)].as_py() for w in which], values.to_pylist()))
        assert got == {k: v for k, v in entries if k in set(asked.to_pylist())}
