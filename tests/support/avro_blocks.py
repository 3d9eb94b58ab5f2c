"""Test helper: the records inside the content of an AVRO_DATA log block."""
from __future__ import annotations

import struct


def split_avro_content(content: bytes) -> list[bytes]:
    """Each record's Avro bytes from a block content (version 3, count, length-prefixed
    records), checking that the records fill the content exactly."""
    version, count = struct.unpack_from(">ii", content, 0)
    assert version == 3
    out, pos = [], 8
    for _ in range(count):
        (n,) = struct.unpack_from(">i", content, pos)
        out.append(content[pos + 4 : pos + 4 + n])
        pos += 4 + n
    assert pos == len(content)
    return out
