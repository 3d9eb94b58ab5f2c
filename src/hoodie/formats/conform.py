"""Arrow tables brought to a given schema: the one place where stored or incoming columns
are cast, reordered and filled to what a reader or a writer expects. No I/O."""
from __future__ import annotations

import pyarrow as pa

from hoodie.errors import SchemaError


def conform(data: pa.Table, schema: pa.Schema, source: str = "data") -> pa.Table:
    """``data`` with exactly ``schema``: columns cast and reordered, absent ones null.

    Columns ``data`` lacks (added to the table after a file was written, or left out of
    a batch) become nulls; columns the schema lacks are dropped. Casting also renames list
    and map children, so Avro-writer files (``array`` items) and Spark-writer files
    (``element`` items) agree. A column that cannot be cast raises
    :class:`~hoodie.errors.SchemaError` naming ``source``, the column and both types.
    """
    arrays = []
    present = {name: i for i, name in enumerate(data.schema.names)}
    for field in schema:
        idx = present.get(field.name)
        if idx is None:
            arrays.append(pa.nulls(data.num_rows, field.type))
            continue
        column = data.column(idx)
        # Arrow's type equality ignores the names of list and map children, which the
        # cast is there to rename: only a type that prints the same is left as it is
        if column.type.equals(field.type) and str(column.type) == str(field.type):
            arrays.append(column)
            continue
        try:
            arrays.append(column.cast(field.type))
        except (pa.ArrowInvalid, pa.ArrowNotImplementedError, pa.ArrowTypeError) as e:
            raise SchemaError(f"{source}: column {field.name!r} of type {column.type} cannot be cast to {field.type}: {e}") from e
    return pa.Table.from_arrays(arrays, schema=schema)
