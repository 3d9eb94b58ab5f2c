"""Apache Hudi's own metadata-table validation, run in the oracle's process (imported by
``driver.py``; PySpark 3.5 and a Hudi Spark bundle, never hoodie).

Hudi's validator, ``org.apache.hudi.utilities.HoodieMetadataTableValidator``, ships in
the hudi-utilities bundles, which the Maven Central this project reaches does not serve
(docs/apache-hudi.md). Its checks are calls on classes the Spark bundle has, so this
module makes the same calls through py4j, each side answered by Apache Hudi: a
file-system view, table metadata and a Spark read with the metadata table on (hoodie's
metadata table, read by Hudi's reader) against the same with it off (Hudi's listing of
storage and its reading of the files' footers). The checks, by the validator's flags:

* ``partitions``: ``HoodieTableMetadata.getAllPartitionPaths`` both ways.
* ``--validate-latest-file-slices``, ``--validate-latest-base-files``,
  ``--validate-all-file-groups``: per partition the slices of the file-system view (file
  group, base instant, base file name and size, log file names and sizes).
* ``--validate-all-column-stats``: per latest base file and column of the table's schema,
  ``getColumnStats`` of the metadata table (``convertColumnStatsRecordToColumnRangeMetadata``)
  against ``ParquetUtils.readColumnStatsFromMetadata`` of the file's footer.
* ``--validate-bloom-filters``: ``getBloomFilters`` against the footer's filter
  (``readBloomFilterFromMetadata``), serialised.
* ``--validate-record-index-count``: the data table's keys (a snapshot read listing
  storage) against the live entries of the ``record_index`` partition (the validator
  reads them by a Spark read of the metadata table, which Apache Hudi 0.15 fails on its
  own tables: see :meth:`_Validation.record_index`; here Hudi's metadata reader scans
  the partition).
* ``--validate-record-index-content``: each key's partition and file id in the snapshot
  against ``readRecordIndex``.
* ``files``: every file of each partition, with its size, listed both ways
  (``getAllFilesInPartition``): what Hudi's procedure ``validate_metadata_table_files``
  means to compare, which in 0.15 reads the metadata table on both sides
  (docs/apache-hudi.md).

Unlike the validator, which stops at the first failed check, every difference is
reported: ``{"check", "partition", "metadata", "storage"}`` with both sides' values as text.
"""
from __future__ import annotations

import decimal
from typing import Any

#: the scale of the metadata table's DecimalWrapper (``decimal(30, 15)``)
WRAPPER_SCALE = 15


def validate(spark: Any, req: dict[str, Any]) -> dict[str, Any]:
    """The differences Apache Hudi finds between the metadata table of the table at
    ``req["path"]`` and its data, and how many things each check compared."""
    run = _Validation(spark, req["path"])
    try:
        partitions = sorted(run.fs.metadata.getAllPartitionPaths())
        run.compare("partitions", "", sorted(run.mdt.metadata.getAllPartitionPaths()), partitions, "partitions")
        for partition in partitions:
            latest = run.listings(partition)
            run.column_stats(partition, latest)
            run.bloom_filters(partition, latest)
        run.record_index()
    finally:
        run.close()
    return {"differences": run.diffs, "counts": run.counts}


class _Validation:
    """One validation: both sides of Apache Hudi's answers, the differences found and
    what was compared."""

    def __init__(self, spark: Any, base: str) -> None:
        self.spark = spark
        self.jvm = spark._jvm
        self.hudi = hudi = self.jvm.org.apache.hudi
        self.base = base
        storage_conf = hudi.hadoop.fs.HadoopFSUtils.getStorageConf(spark._jsc.hadoopConfiguration())
        builder = hudi.common.table.HoodieTableMetaClient.builder().setConf(storage_conf).setBasePath(base)
        self.meta_client = builder.setLoadActiveTimelineOnLoad(True).build()
        self.storage = self.meta_client.getStorage()
        context = hudi.common.engine.HoodieLocalEngineContext(storage_conf)
        self.mdt = _Side(self.jvm, context, self.meta_client, True)
        self.fs = _Side(self.jvm, context, self.meta_client, False)
        self.parquet = hudi.common.util.ParquetUtils()
        self.diffs: list[dict[str, str]] = []
        counted = ("partitions", "files", "file_slices", "base_files", "file_groups", "column_stats", "bloom_filters", "keys")
        self.counts = dict.fromkeys((*counted, "column_stats_retyped"), 0)

    def close(self) -> None:
        self.mdt.close()
        self.fs.close()

    def compare(self, check: str, partition: str, ours: list[str], theirs: list[str], counted: str | None) -> None:
        """``ours`` (the metadata table's answer) against ``theirs`` (storage's), both
        sorted; ``counted``: the count ``theirs`` adds to."""
        if counted is not None:
            self.counts[counted] += len(theirs)
        if ours != theirs:
            self.diffs.append({
                "check": check, "partition": partition,
                "metadata": "; ".join(x for x in ours if x not in theirs) or "-",
                "storage": "; ".join(x for x in theirs if x not in ours) or "-",
            })

    def _path(self, partition: str, name: str = "") -> Any:
        folder = self.hudi.storage.StoragePath(self.base, partition) if partition else self.hudi.storage.StoragePath(self.base)
        return self.hudi.storage.StoragePath(folder, name) if name else folder

    def listings(self, partition: str) -> list[str]:
        """Latest file slices, all file groups, every file and the latest base files of a
        partition, both ways; the names of the latest base files on storage."""
        for check, counted, slices in (("latest file slices", "file_slices", _latest_slices), ("all file groups", "file_groups", _all_slices)):
            both = [sorted(_slice(x) for x in slices(side, partition)) for side in (self.mdt, self.fs)]
            self.compare(check, partition, both[0], both[1], counted)
        # every file with its size (what Hudi's procedure validate_metadata_table_files means
        # to compare; its own "file system" side reads the metadata table too)
        folder = self._path(partition)
        listed = [_items(side.metadata.getAllFilesInPartition(folder)) for side in (self.mdt, self.fs)]
        files = [sorted(_sized(i.getPath().getName(), i.getLength()) for i in infos) for infos in listed]
        self.compare("files", partition, files[0], files[1], "files")
        bases = [sorted(_sized(b.getFileName(), b.getFileSize()) for b in _items(side.view.getLatestBaseFiles(partition))) for side in (self.mdt, self.fs)]
        self.compare("latest base files", partition, bases[0], bases[1], "base_files")
        return sorted(b.getFileName() for b in _items(self.fs.view.getLatestBaseFiles(partition)))

    def _pairs(self, partition: str, names: list[str]) -> Any:
        pairs = self.jvm.java.util.ArrayList()
        for name in names:
            pairs.add(self.hudi.common.util.collection.Pair.of(partition, name))
        return pairs

    def column_stats(self, partition: str, names: list[str]) -> None:
        """Every column of the table's schema (as the validator asks for them) in each
        latest base file: the metadata table's statistics against the footer's."""
        columns = self.jvm.java.util.ArrayList()
        for field in self.hudi.common.table.TableSchemaResolver(self.meta_client).getTableAvroSchema().getFields():
            columns.add(field.name())
        util = self.hudi.metadata.HoodieTableMetadataUtil
        pairs = self._pairs(partition, names)
        from_mdt = {}
        for column in columns:
            for stats in list(self.mdt.metadata.getColumnStats(pairs, column).values()):
                r = util.convertColumnStatsRecordToColumnRangeMetadata(stats)
                from_mdt[(r.getFilePath(), r.getColumnName())] = r
        from_files = {}
        for name in names:
            for r in self.parquet.readColumnStatsFromMetadata(self.storage, self._path(partition, name), columns):
                from_files[(r.getFilePath(), r.getColumnName())] = r
        ours, theirs = [], []
        for key in sorted(from_mdt.keys() | from_files.keys()):
            a, b = from_mdt.get(key), from_files.get(key)
            if a is None or b is None or not _same_stats(self.jvm, a, b, self.counts):
                ours.append(a.toString() if a is not None else f"no statistics of {key[1]} in {key[0]}")
                theirs.append(b.toString() if b is not None else f"no statistics of {key[1]} in {key[0]}")
        self.compare("column stats", partition, ours, theirs, None)
        self.counts["column_stats"] += len(from_files)

    def bloom_filters(self, partition: str, names: list[str]) -> None:
        """Each latest base file's bloom filter in the metadata table against its footer's."""
        filters = self.mdt.metadata.getBloomFilters(self._pairs(partition, names))
        ours = {str(k.getValue()): v.serializeToString() for k, v in list(filters.items())}
        theirs = {}
        for name in names:
            found = self.parquet.readBloomFilterFromMetadata(self.storage, self._path(partition, name))
            if found is not None:
                theirs[name] = found.serializeToString()
        shown = [[f"{n}: {_digest(v)}" for n, v in sorted(side.items())] for side in (ours, theirs)]
        self.compare("bloom filters", partition, shown[0], shown[1], "bloom_filters")

    def record_index(self) -> None:
        """--validate-record-index-count and --validate-record-index-content."""
        hudi = self.hudi
        # the data's keys where a snapshot read finds them, storage listed
        read = self.spark.read.format("hudi").option("hoodie.metadata.enable", "false").load(self.base)
        data = read.select("_hoodie_record_key", "_hoodie_partition_path", "_hoodie_file_name").collect()
        located = {r[0]: (r[1], hudi.common.fs.FSUtils.getFileId(r[2])) for r in data}
        self.counts["keys"] = len(located)
        # (the validator counts the entries by a Spark read of the metadata table itself,
        # which Apache Hudi 0.15 fails on its own tables once a record-index file group has
        # log records to merge: a ClassCastException of Utf8 in HoodieMetadataPayload; here
        # its metadata reader scans the partition, merging base HFiles and logs)
        scan = self.mdt.metadata.getRecordsByKeyPrefixes(self.jvm.java.util.Collections.singletonList(""), "record_index", True)
        indexed = sorted(r.getRecordKey() for r in _items(scan.collectAsList()) if not r.getData().isDeleted())
        if indexed != sorted(located):
            self.diffs.append({
                "check": "record index count", "partition": "",
                "metadata": f"{len(indexed)} keys, not in the data: {sorted(set(indexed) - set(located))[:10]}",
                "storage": f"{len(located)} keys, not indexed: {sorted(set(located) - set(indexed))[:10]}",
            })
        keys = self.jvm.java.util.ArrayList()
        for key in sorted(located):
            keys.add(key)
        found = {k: (v.getPartitionPath(), v.getFileId()) for k, v in list(self.mdt.metadata.readRecordIndex(keys).items())}
        wrong = sorted(k for k in located if found.get(k) != located[k])
        if wrong:
            self.diffs.append({
                "check": "record index content", "partition": "",
                "metadata": "; ".join(f"{k}: {found.get(k)}" for k in wrong[:10]),
                "storage": "; ".join(f"{k}: {located[k]}" for k in wrong[:10]),
            })


class _Side:
    """Apache Hudi's answers with the metadata table on or off: a file-system view and
    table metadata, as the validator's HoodieMetadataValidationContext makes them."""

    def __init__(self, jvm: Any, context: Any, meta_client: Any, on: bool) -> None:
        hudi = jvm.org.apache.hudi
        config = (
            hudi.common.config.HoodieMetadataConfig.newBuilder().enable(on).withMetadataIndexBloomFilter(on).withMetadataIndexColumnStats(on).withEnableRecordIndex(on).build()
        )
        self.view = hudi.common.table.view.FileSystemViewManager.createInMemoryFileSystemView(context, meta_client, config)
        self.metadata = hudi.metadata.HoodieTableMetadata.create(context, meta_client.getStorage(), config, meta_client.getBasePath())

    def close(self) -> None:
        self.view.close()
        self.metadata.close()


def _items(stream: Any) -> list[Any]:
    """The elements of a Java stream or collection."""
    it = stream.iterator()
    out = []
    while it.hasNext():
        out.append(it.next())
    return out


def _same_stats(jvm: Any, mdt: Any, footer: Any, counts: dict[str, int]) -> bool:
    """One file's statistics of one column equal both ways. Apache Hudi 0.15 gives a
    date's bounds from the metadata table as days since the epoch (an Integer) and from
    the footer as a java.sql.Date, a decimal's as the unscaled bytes of its wrapper (a
    ByteBuffer, scale 15) and as a BigDecimal, so its validator fails its own tables with such columns; those are
    compared as the values they stand for (and counted in ``column_stats_retyped``)."""
    if [mdt.getNullCount(), mdt.getValueCount(), mdt.getTotalSize(), mdt.getTotalUncompressedSize()] != [
        footer.getNullCount(), footer.getValueCount(), footer.getTotalSize(), footer.getTotalUncompressedSize()
    ]:
        return False
    return all(_same_value(jvm, a, b, counts) for a, b in ((mdt.getMinValue(), footer.getMinValue()), (mdt.getMaxValue(), footer.getMaxValue())))


def _same_value(jvm: Any, mdt: Any, footer: Any, counts: dict[str, int]) -> bool:
    # (py4j hands boxed primitives, strings and BigDecimal over as Python values)
    if isinstance(footer, decimal.Decimal) and _is_java(mdt, "java.nio.HeapByteBuffer"):
        counts["column_stats_retyped"] += 1
        view = mdt.duplicate()  # (reading moves a buffer's position)
        raw = bytes(jvm.java.util.Arrays.copyOfRange(view.array(), view.arrayOffset() + view.position(), view.arrayOffset() + view.limit()))
        # (the unscaled value of the metadata schema's DecimalWrapper: decimal(30, 15))
        return decimal.Decimal(int.from_bytes(raw, "big", signed=True)).scaleb(-WRAPPER_SCALE) == footer
    if _is_java(footer, "java.sql.Date") and isinstance(mdt, int):
        counts["column_stats_retyped"] += 1
        return bool(jvm.java.time.LocalDate.ofEpochDay(mdt).toString() == footer.toString())
    if hasattr(footer, "getClass"):
        return bool(hasattr(mdt, "getClass") and footer.equals(mdt))
    return bool(mdt == footer)


def _is_java(value: Any, kind: str) -> bool:
    return hasattr(value, "getClass") and value.getClass().getName() == kind


def _latest_slices(side: _Side, partition: str) -> list[Any]:
    return _items(side.view.getLatestFileSlices(partition))


def _all_slices(side: _Side, partition: str) -> list[Any]:
    return [s for group in _items(side.view.getAllFileGroups(partition)) for s in _items(group.getAllFileSlices())]


def _slice(s: Any) -> str:
    """A file slice as the validator compares it: file group, base instant, base file
    (name and size) and log files (names and sizes)."""
    base = s.getBaseFile()
    base_text = _sized(base.get().getFileName(), base.get().getFileSize()) if base.isPresent() else "no base file"
    logs = sorted(_sized(lf.getFileName(), lf.getFileSize()) for lf in _items(s.getLogFiles()))
    return f"{s.getFileGroupId().toString()} @{s.getBaseInstantTime()}: {base_text}, logs [{', '.join(logs)}]"


def _sized(name: str, size: int) -> str:
    return f"{name} ({size} bytes)"


def _digest(serialized: str) -> str:
    import hashlib

    return f"filter sha1 {hashlib.sha1(serialized.encode()).hexdigest()[:16]} ({len(serialized)} chars)"


