"""Rows of an Arrow table on stdout, as a rich table, JSON or CSV.

JSON is one array of objects, one object per line; CSV has a header row. In both,
nested values are JSON, times ISO 8601, decimals exact strings and binary base64;
nulls are JSON ``null`` and empty CSV fields. The table format shows ``null`` dimmed.
"""
from __future__ import annotations

import csv
import json
import sys
from typing import Any

import pyarrow as pa
from rich.table import Table
from rich.text import Text

from hoodie.cli.output import dumps, json_default, print_table

FORMATS = ("table", "json", "csv")


def print_rows(data: pa.Table, fmt: str) -> None:
    """Print ``data`` in ``fmt``, one of :data:`FORMATS`."""
    if fmt == "json":
        _print_json(data)
    elif fmt == "csv":
        _print_csv(data)
    else:
        _print_table(data)


def _print_json(data: pa.Table) -> None:
    rows = data.to_pylist()
    out = sys.stdout
    if not rows:
        out.write("[]\n")
        return
    out.write("[\n")
    for i, row in enumerate(rows):
        out.write("  " + dumps(row, indent=None) + (",\n" if i < len(rows) - 1 else "\n"))
    out.write("]\n")
    out.flush()


def _print_csv(data: pa.Table) -> None:
    writer = csv.writer(sys.stdout, lineterminator="\n")
    writer.writerow(data.column_names)
    for row in data.to_pylist():
        writer.writerow([csv_value(row[name]) for name in data.column_names])
    sys.stdout.flush()


def csv_value(value: Any) -> Any:
    """A value as a CSV field: nested values JSON, null empty (``hoodie read`` files too)."""
    if value is None:
        return ""
    if isinstance(value, (dict, list)):
        return json.dumps(value, default=json_default, ensure_ascii=False)
    if isinstance(value, (str, int, float, bool)):
        return value
    return json_default(value)


def _print_table(data: pa.Table) -> None:
    if data.num_columns == 0:
        return  # an empty table without a schema: nothing to draw, the caller says "0 rows"
    out = Table()
    numeric = [_is_numeric(f.type) for f in data.schema]
    for f, right in zip(data.schema, numeric):
        out.add_column(f.name, justify="right" if right else "left", overflow="fold")
    for row in data.to_pylist():
        out.add_row(*(_cell(row[name]) for name in data.column_names))
    print_table(out)


def _is_numeric(t: pa.DataType) -> bool:
    return pa.types.is_integer(t) or pa.types.is_floating(t) or pa.types.is_decimal(t)


def _cell(value: Any) -> str | Text:
    if value is None:
        return Text("null", style="dim")
    if isinstance(value, str):
        return value
    if isinstance(value, (dict, list)):
        return json.dumps(value, default=json_default, ensure_ascii=False)
    if isinstance(value, (bool, int, float)):
        return str(value)
    return str(json_default(value))

