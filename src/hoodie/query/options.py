"""Hudi's read options, parsed and checked once for every engine.

``hoodie.datasource.query.type`` (snapshot, read_optimized, incremental), ``as.of.instant``,
the incremental range ``hoodie.datasource.read.{begin,end}.instanttime`` (and its fallback
``hoodie.datasource.read.incr.fallback.fulltablescan.enable``) and whether
filters skip files (``hoodie.enable.data.skipping``, ``hoodie.metadata.enable``), whether
views list through the metadata table (``hoodie.metadata.enable``, ``.validate``); every
inconsistency is a :class:`~hoodie.errors.ConfigError` naming the options involved.
"""
from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from hoodie.config import options as opts
from hoodie.config.options import HoodieConfig
from hoodie.errors import ConfigError
from hoodie.metadata_table.listing import MetadataListing, metadata_listing
from hoodie.query.planner import as_instant


@dataclass(frozen=True)
class ReadRequest:
    """What a read asks for."""

    query_type: str
    as_of: str | None
    begin: str | None
    end: str | None
    ignore_missing_files: bool = False
    ignore_corrupt_files: bool = False
    # hoodie.enable.data.skipping, and hoodie.metadata.enable: true for reads unless set
    # false (Apache Hudi's readers default it so, whatever its writers do)
    data_skipping: bool = True
    # how the read's views list (hoodie.metadata.enable, .validate): through the table's
    # metadata table, or storage (None)
    listing: MetadataListing | None = MetadataListing()
    # hoodie.datasource.read.incr.fallback.fulltablescan.enable: an incremental range whose
    # commits were archived or cleaned reads the latest snapshot's records of the range
    fallback_full_scan: bool = False
    # hoodie.datasource.read.extract.partition.values.from.path: partition columns from the
    # partition path (True), from the data files (False), or unset (None: Spark's batch
    # reads take the path, other readers the files)
    values_from_path: bool | None = None

    @classmethod
    def of(cls, options: Mapping[str, Any] | None) -> ReadRequest:
        config = HoodieConfig.of(options)
        query_type = config.get(opts.QUERY_TYPE)
        as_of, begin, end = (instant_option(config, opt) for opt in (opts.AS_OF_INSTANT, opts.BEGIN_INSTANT, opts.END_INSTANT))
        if query_type == "incremental":
            if begin is None:
                raise ConfigError(
                    f"an incremental query needs option {opts.BEGIN_INSTANT.key} "
                    "(the instant after which changes are pulled; use 0 for the beginning)"
                )
            if as_of is not None:
                raise ConfigError(f"option {opts.AS_OF_INSTANT.key} (time travel) cannot be used with an incremental query")
        elif begin is not None or end is not None:
            key = opts.BEGIN_INSTANT.key if begin is not None else opts.END_INSTANT.key
            raise ConfigError(f"option {key} needs {opts.QUERY_TYPE.key}=incremental (it is {query_type})")
        skipping = bool(config.get(opts.DATA_SKIPPING)) and bool(config.get(opts.METADATA_ENABLE))
        return cls(
            query_type, as_of, begin, end, bool(config.get(opts.IGNORE_MISSING_FILES)), bool(config.get(opts.IGNORE_CORRUPT_FILES)), skipping,
            metadata_listing(config), bool(config.get(opts.INCR_FALLBACK_FULL_SCAN)), _optional_bool(config, opts.EXTRACT_PARTITION_VALUES),
        )

    def values_from_files(self, reader: str) -> ReadRequest:
        """This request, for a ``reader`` that reads partition columns from the data files
        only: one asking for their values from the partition path is refused."""
        if self.values_from_path is True:
            raise ConfigError(
                f"{opts.EXTRACT_PARTITION_VALUES.key}=true is taken by Spark's batch reads only; {reader} reads "
                "partition columns from the data files (leave the option false)"
            )
        return self


def _optional_bool(config: HoodieConfig, option: opts.Option[Any]) -> bool | None:
    """A boolean option's value, or None where the read does not set it."""
    value = config.get(option)
    return None if value is None else bool(value)


def instant_option(config: HoodieConfig, option: opts.Option[Any]) -> str | None:
    """An instant-valued option: ``yyyyMMddHHmmss[SSS]`` or an ISO timestamp."""
    raw = config.get(option)
    if raw is None:
        return None
    try:
        # Any all-digit value is taken as is: "0" and "000" are the usual way to say
        # "from the beginning" in incremental pulls.
        return as_instant(str(raw))
    except ValueError:
        raise ConfigError(
            f"invalid value {raw!r} for option {option.key}: expected an instant time "
            "(yyyyMMddHHmmssSSS) or a timestamp (yyyy-MM-dd HH:mm:ss[.SSS])"
        ) from None
