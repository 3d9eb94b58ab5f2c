"""Hudi log files (``.<fileId>_<instant>.log.<version>_<token>``): blocks, reading, writing.

Modules, each owning one concern:

* :mod:`.blocks` — the block model: :class:`BlockType`, :class:`HeaderKey`, and one frozen
  dataclass per block kind (:class:`AvroDataBlock`, :class:`ParquetDataBlock`,
  :class:`DeleteBlock` of :class:`DeleteRecord`, :class:`CommandBlock`,
  :class:`HFileDataBlock`, :class:`CdcDataBlock`, :class:`CorruptBlock`);
* :mod:`.framing` — the block frame (magic, lengths, version, type, header, footer);
* :mod:`.content` — block content per type; :mod:`.delete_codec` for delete blocks;
  :mod:`.hfile_content` for HFILE_DATA blocks (an HFile of Avro records, see
  :mod:`hoodie.formats.hfile`);
* :mod:`hoodie.formats.avro_nodes` (shared with the Arrow schema of a writer schema) — a
  writer schema resolved into the tree both Avro codecs walk;
* :mod:`.avro_vector` — the codec of AVRO_DATA records whose fields are scalars or
  nullable scalars (every meta column, almost every table): numpy, one field of all
  records at a time, writing the whole block content at once. On 100k records of 16
  such columns (``bench/avro_codec.py``) it encodes and decodes about 12× faster than
  the closure codec, and about 30× / 17× faster than fastavro's
  ``schemaless_writer``/``reader`` with the conversion to and from Arrow;
* :mod:`.avro_decode`, :mod:`.avro_encode` — the closure codec: each Avro type compiled
  to a small function, values one at a time. Used for records with nested records,
  arrays, maps, decimals or multi-type unions (:func:`.avro_vector.can_vectorize`
  decides), and the reference the vector codec is tested against; the tests check that
  both write fastavro's bytes for every Avro type;
* :mod:`.reader` — walking a file, corrupt-block recovery, decoding on demand;
* :mod:`.writer` — encoding blocks and creating new log files.
"""
from hoodie.formats.log.blocks import (
    AvroDataBlock,
    BlockType,
    CdcDataBlock,
    CommandBlock,
    CommandType,
    CorruptBlock,
    DataBlock,
    DeleteBlock,
    DeleteRecord,
    Header,
    HeaderKey,
    HFileDataBlock,
    LogBlock,
    OrderingType,
    ParquetDataBlock,
)
from hoodie.formats.log.content import encode_together
from hoodie.formats.log.framing import MAGIC, BlockInfo, frame_block
from hoodie.formats.log.reader import (
    LogFileReader,
    first_block_instant,
    iter_log_file,
    read_log_bytes,
    read_log_file,
)
from hoodie.formats.log.writer import encode_block, encode_log_file, write_log_file

__all__ = [
    "MAGIC",
    "AvroDataBlock",
    "BlockInfo",
    "BlockType",
    "CdcDataBlock",
    "CommandBlock",
    "CommandType",
    "CorruptBlock",
    "DataBlock",
    "DeleteBlock",
    "DeleteRecord",
    "HFileDataBlock",
    "Header",
    "HeaderKey",
    "LogBlock",
    "LogFileReader",
    "OrderingType",
    "ParquetDataBlock",
    "encode_block",
    "encode_log_file",
    "encode_together",
    "first_block_instant",
    "frame_block",
    "iter_log_file",
    "read_log_bytes",
    "read_log_file",
    "write_log_file",
]
