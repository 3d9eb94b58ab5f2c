"""Byte-level formats shared by the reader and writer.

* :mod:`hoodie.formats.bloom` — Hudi's Hadoop-derived bloom filters and the parquet footer
  keys that carry them (``org.apache.hudi.bloomfilter``, min/max record key).
* :mod:`hoodie.formats.avro_schema` — Arrow schema ⇄ Hudi Avro schema JSON, as written into
  commit metadata (``extraMetadata.schema``) and Avro log blocks.
* :mod:`hoodie.formats.parquet` — base files: write with Hudi's footer, read whole, by
  column or footer only.
* :mod:`hoodie.formats.log` — log files: data, delete and command blocks, corrupt-block
  recovery, byte-exact encoding.
"""
