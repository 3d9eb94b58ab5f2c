"""Test helpers for reading conformance tables next to hudi-rs."""
from __future__ import annotations

from hoodie.table.table import HoodieTable

BEGINNING = "0"


def open_case(conformance_table, conformance_case) -> tuple[str, HoodieTable]:
    path = str(conformance_table(conformance_case))
    return path, HoodieTable.open(path)


def empty_schema(hudi_rs, path: str, table: HoodieTable):
    return hudi_rs(path).schema(meta_fields=table.config.populate_meta_fields)


def commits(table: HoodieTable) -> list[str]:
    return [i.timestamp for i in table.timeline.completed_writes()]


def pull_points(table: HoodieTable) -> list[list[str]]:
    """Instant sequences to pull between: requested times, plus completion times on v8+."""
    writes = table.timeline.completed_writes()
    points = [[BEGINNING, *[i.timestamp for i in writes]]]
    if table.timeline.layout_version >= 2:
        points.append([BEGINNING, *sorted(table.timeline.completion_time(i) for i in writes)])
    return points


def iso(instant: str) -> str:
    return f"{instant[0:4]}-{instant[4:6]}-{instant[6:8]} {instant[8:10]}:{instant[10:12]}:{instant[12:14]}.{instant[14:17]}"
