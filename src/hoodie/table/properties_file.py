"""Reading and writing ``.hoodie/hoodie.properties`` (parsed by
:class:`~hoodie.config.table_config.TableConfig`).

Updates follow Java's protocol (``HoodieTableConfig.modify``): write a backup, replace
the file, re-read and verify the checksum, drop the backup; a reader that finds a bad
checksum or a missing file falls back to the backup. This module touches no other file.
"""
from __future__ import annotations

from hoodie.config.table_config import TableConfig
from hoodie.errors import TableError
from hoodie.storage.base import Storage
from hoodie.storage.paths import under

PROPERTIES_FILE = "hoodie.properties"
BACKUP_FILE = "hoodie.properties.backup"


def properties_exist(storage: Storage, meta_path: str) -> bool:
    """Whether ``meta_path`` holds the properties file or its backup."""
    return storage.exists(under(meta_path, PROPERTIES_FILE)) or storage.exists(under(meta_path, BACKUP_FILE))


def load_table_config(storage: Storage, meta_path: str) -> TableConfig:
    """Read ``<meta_path>/hoodie.properties``, falling back to the backup if it is bad."""
    for candidate in (under(meta_path, PROPERTIES_FILE), under(meta_path, BACKUP_FILE)):
        try:
            data = storage.read_bytes(candidate)
        except (FileNotFoundError, NotADirectoryError):
            continue
        config = TableConfig.parse(data)
        if config is not None:
            return config
    raise TableError(f"no valid {PROPERTIES_FILE} under {meta_path}")


def store_table_config(config: TableConfig, storage: Storage, meta_path: str, create: bool = False) -> None:
    """Write the properties with a fresh checksum; ``create`` refuses an existing table."""
    data = config.render()
    main = under(meta_path, PROPERTIES_FILE)
    if create:
        storage.create_new(main, data)
        return
    backup = under(meta_path, BACKUP_FILE)
    storage.write_bytes(backup, storage.read_bytes(main))
    storage.delete(main)
    storage.write_bytes(main, data)
    if TableConfig.parse(storage.read_bytes(main)) is None:
        raise TableError(f"{main}: checksum mismatch right after writing it")
    storage.delete(backup)
