"""Micro-benchmark of the AVRO_DATA block codecs: vector (numpy), closure and fastavro.

One block of N records (default 100k) of a 16-column record as hoodie writes to
merge-on-read logs: the five Hudi meta columns, a string key and partition, a long
ordering field, ints, longs, doubles, nullable strings, booleans and a timestamp. Each
codec encodes the Arrow table to the block content (version, count, length-prefixed
records) and decodes it back to an Arrow table:

* vector: :mod:`hoodie.formats.log.avro_vector` (what log blocks use for flat records);
* closure: :func:`~hoodie.formats.log.avro_encode.encode_records` /
  :func:`~hoodie.formats.log.avro_decode.decode_columns` (the fallback for nested types);
* fastavro: ``schemaless_writer`` / ``schemaless_reader`` per record, plus the conversion
  from / to Arrow (``to_pylist`` / ``from_pylist``).

Times are the best of ``--repeat`` runs, as wall-clock and as CPU time of this process
(steadier when the machine is shared); all three must produce the same bytes and the
same table.

    python bench/avro_codec.py [--rows 100000] [--repeat 3]
"""
from __future__ import annotations

import argparse
import io
import struct
import time
from collections.abc import Callable
from typing import Any

import fastavro
import numpy as np
import pyarrow as pa

from hoodie.formats.avro_schema import arrow_to_avro_schema, avro_schema_json
from hoodie.formats.log.avro_decode import decode_columns
from hoodie.formats.log.avro_encode import encode_records
from hoodie.formats.log.avro_vector import decode_records, encode_avro_content
from hoodie.formats.log.content import AVRO_BLOCK_VERSION, _record_spans, compiled_schema

_I32 = struct.Struct(">i")


def make_table(n: int, seed: int = 7) -> pa.Table:
    rng = np.random.default_rng(seed)
    keys = np.arange(n)
    parts = [f"2024/01/{d:02d}" for d in range(1, 29)]
    part = np.array(parts)[keys % len(parts)]
    key = np.char.add("key-", keys.astype(str))
    maybe = rng.random(n) < 0.2
    note = np.char.add("note ", rng.integers(0, 10**9, n).astype(str)).astype(object)
    note[maybe] = None
    data = {
        "_hoodie_commit_time": ["20250101000000000"] * n,
        "_hoodie_commit_seqno": np.char.add("20250101000000000_0_", keys.astype(str)).tolist(),
        "_hoodie_record_key": key.tolist(),
        "_hoodie_partition_path": part.tolist(),
        "_hoodie_file_name": ["7f3e9f43-2f43-4e3a-9d0f-3c1c7d8f1a2b-0_0-1-2_20250101000000000.parquet"] * n,
        "key": key.tolist(),
        "part": part.tolist(),
        "ts": pa.array(rng.integers(0, 1 << 40, n), pa.int64()),
        "qty": pa.array(rng.integers(-1000, 1000, n, dtype=np.int32)),
        "amount": pa.array(rng.integers(0, 1 << 50, n), pa.int64()),
        "price": pa.array(rng.random(n) * 1000),
        "score": pa.array(rng.normal(size=n)),
        "note": pa.array(note.tolist(), pa.string()),
        "flag": pa.array(rng.random(n) < 0.5),
        "opt_flag": pa.array(np.where(maybe, None, rng.random(n) < 0.5).tolist(), pa.bool_()),
        "created": pa.array(rng.integers(1_600_000_000_000_000, 1_700_000_000_000_000, n)).cast(pa.timestamp("us", "UTC")),
    }
    return pa.table(data)


def best(fn: Callable[[], Any], repeat: int) -> tuple[tuple[float, float], Any]:
    """((best wall seconds, best CPU seconds), result) of ``repeat`` calls."""
    walls, cpus, result = [], [], None
    for _ in range(repeat):
        wall, cpu = time.perf_counter(), time.process_time()
        result = fn()
        cpus.append(time.process_time() - cpu)
        walls.append(time.perf_counter() - wall)
    return (min(walls), min(cpus)), result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rows", type=int, default=100_000)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()

    table = make_table(args.rows)
    avro = arrow_to_avro_schema(table.schema, "bench", include_meta_fields=True)
    node, arrow_schema = compiled_schema(avro_schema_json(avro))
    table = table.select(arrow_schema.names).cast(arrow_schema)
    n = table.num_rows
    parsed = fastavro.parse_schema(avro)

    def frame(records: list[bytes]) -> bytes:
        parts = [struct.pack(">ii", AVRO_BLOCK_VERSION, len(records))]
        for r in records:
            parts.append(_I32.pack(len(r)))
            parts.append(r)
        return b"".join(parts)

    def enc_vector() -> bytes:
        return encode_avro_content(node, table, arrow_schema, AVRO_BLOCK_VERSION)

    def enc_closure() -> bytes:
        return frame(encode_records(node, table, arrow_schema))

    def enc_fastavro() -> bytes:
        out = []
        for row in table.to_pylist():
            buf = io.BytesIO()
            fastavro.schemaless_writer(buf, parsed, row)
            out.append(buf.getvalue())
        return frame(out)

    def dec_vector(content: bytes) -> pa.Table:
        starts, ends = _record_spans(content, n)
        return decode_records(node, content, starts, ends, arrow_schema)

    def dec_closure(content: bytes) -> pa.Table:
        starts, ends = _record_spans(content, n)
        return decode_columns(node, content, list(zip(starts.tolist(), ends.tolist())), arrow_schema)

    def dec_fastavro(content: bytes) -> pa.Table:
        starts, ends = _record_spans(content, n)
        rows = [fastavro.schemaless_reader(io.BytesIO(content[s:e]), parsed, None) for s, e in zip(starts.tolist(), ends.tolist())]
        return pa.Table.from_pylist(rows, schema=arrow_schema)

    results: dict[str, tuple[tuple[float, float], tuple[float, float]]] = {}
    reference: bytes | None = None
    for name, enc, dec in [("vector", enc_vector, dec_vector), ("closure", enc_closure, dec_closure), ("fastavro", enc_fastavro, dec_fastavro)]:
        enc_s, content = best(enc, args.repeat)
        if reference is None:
            reference = content
        assert content == reference, f"{name} bytes differ from the vector codec's"
        dec_s, decoded = best(lambda dec=dec, reference=reference: dec(reference), args.repeat)
        assert decoded.equals(table), f"{name} decoded table differs"
        results[name] = (enc_s, dec_s)

    assert reference is not None
    print(f"{n} records, {table.num_columns} columns, block content {len(reference) / 1e6:.1f} MB; best of {args.repeat}")
    for clock, k in (("wall", 0), ("cpu", 1)):
        print(f"{clock + ' s':<10}{'encode':>10}{'decode':>10}{'enc ×vector':>13}{'dec ×vector':>13}")
        v_enc, v_dec = results["vector"][0][k], results["vector"][1][k]
        for name, (enc_s, dec_s) in results.items():
            print(f"{name:<10}{enc_s[k]:>10.3f}{dec_s[k]:>10.3f}{enc_s[k] / v_enc:>13.1f}{dec_s[k] / v_dec:>13.1f}")


if __name__ == "__main__":
    main()
