"""Parquet base files: write with Hudi's footer (bloom filter, min/max record key), read
back whole, by column, or just the footer.

Files are written without pyarrow's ``ARROW:schema`` entry: it would embed the footer
metadata a second time (the bloom filter is ~430 KB of Base64).
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from hoodie.errors import FormatError
from hoodie.formats.bloom import BloomFilter, new_bloom_filter
from hoodie.formats.bloom_footer import EncodedBloomFilter, FooterIndex, footer_metadata, read_footer_index
from hoodie.storage.base import Storage, arrow_path

RECORD_KEY_COLUMN = "_hoodie_record_key"


@dataclass(frozen=True)
class BloomSettings:
    """``hoodie.index.bloom.*`` settings for the filter written into each base file."""

    num_entries: int = 60000
    fpp: float = 1e-9
    filter_type: str = "DYNAMIC_V0"
    max_entries: int = 100000


#: Compression levels as Apache Hudi's Parquet writer (parquet-mr through Hadoop's codecs)
#: uses them: gzip at zlib's default level 6. Arrow's own gzip default is zlib's maximum,
#: 9, which takes about three times as long for files about 1% smaller.
_CODEC_LEVELS = {"gzip": 6}


def compression_of(codec: str) -> tuple[str, int | None]:
    """Arrow's ``compression`` and ``compression_level`` for a ``hoodie.parquet.compression.codec``
    value: base files and Parquet log blocks are compressed alike."""
    name = codec.lower()
    if name in ("uncompressed", "none"):
        return "none", None
    return name, _CODEC_LEVELS.get(name)


@dataclass(frozen=True)
class ParquetSettings:
    codec: str = "gzip"
    page_size: int = 1048576
    row_group_bytes: int = 125829120


def write_base_file(
    storage: Storage,
    path: str,
    table: pa.Table,
    parquet: ParquetSettings,
    bloom: BloomSettings | None,
    bloom_filter: BloomFilter | EncodedBloomFilter | None = None,
    use_dictionary: list[str] | None = None,
) -> int:
    """Write ``table`` (meta columns first) to ``path``; returns the file size in bytes.

    With ``bloom`` set, every record key goes into the footer's bloom filter and the
    smallest and largest keys are recorded (Hudi's bloom index reads both). A caller that
    already holds a filter containing every key of ``table`` passes it as ``bloom_filter``,
    and one that chose the dictionary-encoded columns for several files at once (see
    :func:`dictionary_columns`) passes them as ``use_dictionary``.
    """
    metadata: dict[bytes, bytes] = {}
    if bloom is not None:
        keys = table.column(RECORD_KEY_COLUMN)
        f = bloom_filter
        if f is None:
            f = new_bloom_filter(bloom.num_entries, bloom.fpp, bloom.filter_type, bloom.max_entries)
            if len(keys):
                f.add_many(keys)
        if len(keys):
            bounds = pc.min_max(keys)
            metadata = footer_metadata(f, bounds["min"].as_py(), bounds["max"].as_py())
        else:
            metadata = footer_metadata(f, None, None)
    fs, fpath = arrow_path(storage, path)
    codec, level = compression_of(parquet.codec)
    # Rows per row group from the byte budget, estimated from the in-memory size.
    avg_row = max(1, table.nbytes // max(1, table.num_rows))
    rows_per_group = max(1024, parquet.row_group_bytes // avg_row)
    # the size comes from the stream written, not from asking storage once more
    with fs.open_output_stream(fpath) as sink:
        with pq.ParquetWriter(
            sink,
            table.schema.remove_metadata(),
            compression=codec,
            compression_level=level,
            use_dictionary=dictionary_columns(table) if use_dictionary is None else use_dictionary,
            data_page_size=parquet.page_size,
            store_schema=False,
            write_statistics=True,
        ) as writer:
            writer.write_table(table, row_group_size=rows_per_group)
            if metadata:
                writer.add_key_value_metadata(metadata)
        size = sink.tell()
    storage.counters.bump("write")
    return int(size)


UNIQUE_COLUMNS = ("_hoodie_commit_seqno", RECORD_KEY_COLUMN)
_SAMPLE_ROWS = 1024
_MIN_SAMPLE_ROWS = 256


def dictionary_columns(table: pa.Table, spread: bool = False) -> list[str]:
    """Columns worth dictionary encoding: not the unique meta columns, and not columns
    whose sample is mostly distinct values. Trying a dictionary and falling back, as the
    writer does otherwise, costs about 40% of the write time on typical tables and makes
    files larger.

    The sample is a quarter of a small table (at least 256 rows, at most 1024): counting
    distinct values costs about as much as writing the rows counted, and a file of a
    thousand rows gains little from a closer estimate. With ``spread``, for the rows of
    several files deciding for all of them, the sample is 1024 rows spread evenly over
    the whole table, so every file has its say."""
    if spread and table.num_rows > _SAMPLE_ROWS:
        sample = table.take(pa.array(np.linspace(0, table.num_rows - 1, _SAMPLE_ROWS).astype(np.int64)))
    else:
        sample = table.slice(0, min(_SAMPLE_ROWS, max(_MIN_SAMPLE_ROWS, table.num_rows // 4)))
    out = []
    for name in table.column_names:
        if name in UNIQUE_COLUMNS:
            continue
        col = sample.column(name)
        t = col.type
        if pa.types.is_nested(t) or pa.types.is_boolean(t):
            out.append(name)
            continue
        if len(col) and pc.count_distinct(col).as_py() > len(col) // 2:
            continue
        out.append(name)
    return out


def read_base_file(storage: Storage, path: str, columns: list[str] | None = None) -> pa.Table:
    """Read a base file (optionally only some columns)."""
    fs, fpath = arrow_path(storage, path)
    storage.counters.bump("read")
    try:
        return pq.read_table(fpath, filesystem=fs, columns=columns, use_threads=True, pre_buffer=True)
    except (pa.ArrowInvalid, OSError) as e:
        if isinstance(e, FileNotFoundError):
            raise
        raise FormatError(f"cannot read base file {path}: {e}") from e


def read_record_keys(storage: Storage, path: str) -> pa.Array:
    """The ``_hoodie_record_key`` column of a base file."""
    return read_base_file(storage, path, [RECORD_KEY_COLUMN]).column(RECORD_KEY_COLUMN).combine_chunks()


class BaseFileReader:
    """One open base file: its footer is parsed once (Hudi footers carry a ~430 KB bloom
    filter, so re-opening a file per question is costly), then columns are read on demand."""

    def __init__(self, storage: Storage, path: str) -> None:
        fs, fpath = arrow_path(storage, path)
        storage.counters.bump("footer")
        self.path = path
        try:
            self._file = pq.ParquetFile(fs.open_input_file(fpath), pre_buffer=True)
        except (pa.ArrowInvalid, OSError) as e:
            if isinstance(e, FileNotFoundError):
                raise
            raise FormatError(f"cannot read footer of base file {path}: {e}") from e

    @property
    def metadata(self) -> pq.FileMetaData:
        """The parsed footer: row groups, column chunks and their statistics."""
        return self._file.metadata

    @property
    def footer(self) -> FooterInfo:
        md = self._file.metadata
        return FooterInfo(read_footer_index(md.metadata), md.num_rows, self._file.schema_arrow)

    def read(self, columns: list[str] | None = None) -> pa.Table:
        try:
            # single-threaded: callers are engine tasks, already one per core
            return self._file.read(columns=columns, use_threads=False)
        except (pa.ArrowInvalid, OSError) as e:
            raise FormatError(f"cannot read base file {self.path}: {e}") from e

    def record_keys(self) -> pa.Array:
        return self.read([RECORD_KEY_COLUMN]).column(RECORD_KEY_COLUMN).combine_chunks()

    def close(self) -> None:
        self._file.close()

    def __enter__(self) -> BaseFileReader:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


@dataclass(frozen=True)
class FooterInfo:
    index: FooterIndex | None
    num_rows: int
    schema: pa.Schema
