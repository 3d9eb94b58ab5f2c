"""The compression of base files and Parquet log blocks: the codec of
``hoodie.parquet.compression.codec`` at the level Apache Hudi's writer uses (gzip: zlib's
default, 6), not Arrow's own gzip default (9, about three times slower)."""
from __future__ import annotations

from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from hoodie.formats.log import LogFileReader, ParquetDataBlock, encode_block, read_log_bytes
from hoodie.formats.parquet import ParquetSettings, compression_of, write_base_file
from hoodie.storage.local import LocalStorage

GZIP_MAGIC = b"\x1f\x8b\x08"
# RFC 1952's XFL byte, which zlib sets from the level: 2 for 9 (maximum), 4 for 1, else 0
XFL_BY_LEVEL = {1: 4, 6: 0, 9: 2}


def _table() -> pa.Table:
    keys = [f"key-{i:06d}" for i in range(5000)]
    return pa.table({"_hoodie_record_key": keys, "v": [f"value {i % 97} of row {i}" for i in range(5000)]})


def _first_gzip_xfl(data: bytes, start: int) -> int:
    at = data.index(GZIP_MAGIC, start)
    return data[at + 8]


def test_gzip_base_files_use_zlibs_default_level(tmp_path: Path) -> None:
    path = tmp_path / "f.parquet"
    write_base_file(LocalStorage(), str(path), _table(), ParquetSettings(codec="gzip"), bloom=None)
    data = path.read_bytes()
    chunk = pq.ParquetFile(path).metadata.row_group(0).column(1)
    assert chunk.compression == "GZIP"
    assert _first_gzip_xfl(data, chunk.data_page_offset) == XFL_BY_LEVEL[6]


def test_the_check_tells_levels_apart(tmp_path: Path) -> None:
    # the byte the test above reads does tell Arrow's default (9) from 6
    for level, xfl in XFL_BY_LEVEL.items():
        path = tmp_path / f"{level}.parquet"
        pq.write_table(_table(), path, compression="gzip", compression_level=level, use_dictionary=False)
        chunk = pq.ParquetFile(path).metadata.row_group(0).column(1)
        assert _first_gzip_xfl(path.read_bytes(), chunk.data_page_offset) == xfl


@pytest.mark.parametrize(
    ("codec", "expected"),
    [("gzip", ("gzip", 6)), ("GZIP", ("gzip", 6)), ("snappy", ("snappy", None)), ("uncompressed", ("none", None)), ("none", ("none", None))],
)
def test_compression_of(codec: str, expected: tuple[str, int | None]) -> None:
    assert compression_of(codec) == expected


def test_gzip_parquet_log_blocks_use_zlibs_default_level() -> None:
    table = _table()
    schema = '{"type":"record","name":"r","fields":[{"name":"_hoodie_record_key","type":"string"},{"name":"v","type":"string"}]}'
    data = encode_block(ParquetDataBlock.create(table, "20240101000000000", schema, compression="gzip"))
    (decoded,) = read_log_bytes(data)
    assert isinstance(decoded, ParquetDataBlock) and decoded.records.equals(table)
    with LogFileReader.from_bytes(data) as reader:
        (info,) = list(reader.scan())
        content = reader._source.read_at(info.content_offset, info.content_length)
    chunk = pq.ParquetFile(pa.BufferReader(content)).metadata.row_group(0).column(1)
    assert chunk.compression == "GZIP"
    assert _first_gzip_xfl(content, chunk.data_page_offset) == XFL_BY_LEVEL[6]
