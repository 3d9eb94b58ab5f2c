"""What a folder holds before a Hudi table is created in it.

A table's home must be empty (or hold only the ``.hoodie/`` folder an interrupted create
left): creating ``.hoodie/`` beside a Delta Lake table, an Iceberg table or a folder of
CSV files would make one folder two tables, or a table over files it does not know.
This module only lists and names what it finds; it never writes or deletes.
"""
from __future__ import annotations

from hoodie.config.options import CREATE_BESIDE_FOREIGN_FILES
from hoodie.errors import TableError
from hoodie.layout import HOODIE_FOLDER
from hoodie.storage.base import Storage
from hoodie.storage.paths import under

_SHOWN = 3  # names listed in the error before "and N more"


def foreign_contents(path: str, storage: Storage) -> str | None:
    """What ``path`` holds other than a Hudi table's own folder, in words, or ``None``."""
    entries = {e.name: e for e in storage.list_dir(path) if e.name != HOODIE_FOLDER}
    if not entries:
        return None
    delta_log = entries.get("_delta_log")
    if delta_log is not None and delta_log.is_dir:
        return "a Delta Lake table (_delta_log/)"
    metadata = entries.get("metadata")
    if metadata is not None and metadata.is_dir:
        versions = sorted(e.name for e in storage.list_dir(under(path, "metadata")) if e.name.endswith(".metadata.json"))
        if versions:
            return f"an Iceberg table ({under('metadata', versions[-1])})"
    names = sorted(f"{name} (a folder)" if entry.is_dir else name for name, entry in entries.items())
    more = f" and {len(names) - _SHOWN} more" if len(names) > _SHOWN else ""
    return f"files that are not a Hudi table ({', '.join(names[:_SHOWN])}{more})"


def check_home(path: str, storage: Storage, allow_foreign_files: bool) -> None:
    """Refuse to create a table at ``path`` when it holds anything but a Hudi table's own
    folder, unless ``allow_foreign_files`` (:data:`~hoodie.config.options.CREATE_BESIDE_FOREIGN_FILES`)."""
    if allow_foreign_files:
        return
    found = foreign_contents(path, storage)
    if found is not None:
        key = CREATE_BESIDE_FOREIGN_FILES.key
        raise TableError(f"{path} holds {found}; no Hudi table was created there (set {key}=true to create one beside them)")
