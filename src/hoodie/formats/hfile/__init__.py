"""HFile v3, the storage format of Hudi's metadata table (base files ``*.hfile`` and the
content of HFILE_DATA log blocks).

* :mod:`.encoding` — varints, KeyValue keys, the trailer and file info messages;
* :mod:`.blocks` — block headers, CRC32C chunk checksums, compression, block indexes;
* :mod:`.reader` — :class:`HFileReader`: iteration, point, sorted and prefix lookups
  through single- and multi-level indexes, file info, meta blocks;
* :mod:`.writer` — :func:`write_hfile`/:func:`encode_hfile`, as Apache Hudi writes them.
"""
from hoodie.formats.hfile.blocks import Codec
from hoodie.formats.hfile.reader import HFileReader
from hoodie.formats.hfile.writer import DEFAULT_BLOCK_SIZE, HFileSettings, encode_hfile, write_hfile

__all__ = ["DEFAULT_BLOCK_SIZE", "Codec", "HFileReader", "HFileSettings", "encode_hfile", "write_hfile"]
