"""A Spark application of its own, for the tests that need a NEW application: run as
``python catalog_app.py <step> <work dir>``; writes what it saw as JSON to
``<work dir>/<step>.json``.

Steps (each a fresh JVM, the same Derby metastore and warehouse under ``<work dir>/catalog``):

* ``write``: a merge-on-read trips table written twice through ``format("hoodie")`` with
  the catalog sync on (database ``lake``);
* ``query``: SQL over ``lake.trips``, ``trips_ro``, ``trips_rt`` and their partitions, then a
  write adding a column and a partition (synced), and the same queries again;
* ``discover``: no ``register`` call and no Hive: ``format("hoodie")`` found through the
  ``pyspark_hoodie`` package, for reads (snapshot, read-optimized, incremental) and writes.
"""
from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from typing import Any

ROWS = "uuid string, city string, ts long, fare double"
OPTIONS = {
    "hoodie.table.name": "trips",
    "hoodie.datasource.write.recordkey.field": "uuid",
    "hoodie.datasource.write.partitionpath.field": "city",
    "hoodie.datasource.write.precombine.field": "ts",
    "hoodie.datasource.write.table.type": "MERGE_ON_READ",
    "hoodie.index.bloom.num_entries": "1000",
}
SYNC = {"hoodie.datasource.meta.sync.enable": "true", "hoodie.datasource.hive_sync.database": "lake"}


def rows(df: Any) -> list[dict[str, Any]]:
    return sorted((r.asDict() for r in df.collect()), key=lambda r: json.dumps(r, sort_keys=True, default=str))


def catalog_step(step: str, work: Path) -> dict[str, Any]:
    from hoodie.spark import local_session

    spark = local_session("catalog-app", catalog_dir=str(work / "catalog"))
    spark.sparkContext.setLogLevel("ERROR")
    table = str(work / "trips")
    out: dict[str, Any] = {}
    if step == "write":
        first = spark.createDataFrame([("a", "sf", 1, 1.0), ("b", "la", 1, 2.0), ("c", "sf", 1, 3.0)], ROWS)
        first.write.format("hoodie").options(**OPTIONS, **SYNC).mode("append").save(table)
        update = spark.createDataFrame([("a", "sf", 2, 10.0)], ROWS)
        update.write.format("hoodie").options(**OPTIONS, **SYNC).mode("append").save(table)
        return out
    out["before"] = seen(spark)
    out["filtered"] = rows(spark.sql("SELECT uuid, fare FROM lake.trips_rt WHERE city = 'sf' AND fare > 2"))
    wider = spark.createDataFrame([("d", "nyc", 3, 4.0, 0.5)], ROWS + ", tip double")
    wider.write.format("hoodie").options(**OPTIONS, **SYNC).mode("append").save(table)
    out["after"] = seen(spark)
    return out


def seen(spark: Any) -> dict[str, Any]:
    """What the catalog shows of the three tables."""
    from hoodie.spark import catalog_partitions

    out: dict[str, Any] = {"tables": sorted(r.tableName for r in spark.sql("SHOW TABLES IN lake").collect())}
    for name in ("trips", "trips_ro", "trips_rt"):
        out[name] = rows(spark.sql(f"SELECT * FROM lake.{name}"))
        out[f"{name}.columns"] = spark.table(f"lake.{name}").columns
        out[f"{name}.partitions"] = catalog_partitions(spark, f"lake.{name}")
    return out


def discover_step(work: Path) -> dict[str, Any]:
    from pyspark.sql import SparkSession

    from hoodie.spark.datasource import is_registered

    os.environ["PYSPARK_PYTHON"] = sys.executable
    spark = (
        SparkSession.builder.master("local[2]").appName("discover-app")
        .config("spark.ui.enabled", "false").config("spark.sql.shuffle.partitions", "2")
        .config("spark.sql.session.timeZone", "UTC").getOrCreate()
    )
    spark.sparkContext.setLogLevel("ERROR")
    table = str(work / "trips")
    out: dict[str, Any] = {"registered": is_registered()}
    first = spark.createDataFrame([("a", "sf", 1, 1.0), ("b", "la", 1, 2.0)], ROWS)
    first.write.format("hoodie").options(**OPTIONS).mode("append").save(table)
    out["first_instants"] = sorted({r[0] for r in spark.read.format("hoodie").load(table).select("_hoodie_commit_time").collect()})
    update = spark.createDataFrame([("a", "sf", 2, 10.0), ("c", "nyc", 2, 3.0)], ROWS)
    update.write.format("hoodie").options(**OPTIONS).mode("append").save(table)
    out["snapshot"] = rows(spark.read.format("hoodie").load(table))
    out["read_optimized"] = rows(spark.read.format("hoodie").option("hoodie.datasource.query.type", "read_optimized").load(table))
    begin = out["first_instants"][0]
    incremental = spark.read.format("hoodie").options(**{"hoodie.datasource.query.type": "incremental", "hoodie.datasource.read.begin.instanttime": begin})
    out["incremental"] = rows(incremental.load(table))
    out["temp"] = sorted(p.name for p in (work / "trips" / ".hoodie" / ".temp").glob("*"))
    try:
        first.write.format("hoodie").options(**OPTIONS, **{"hoodie.datasource.meta.sync.enable": "true"}).mode("append").save(table)
        out["sync_refused"] = None
    except Exception as e:  # the refusal, as Spark relays it
        out["sync_refused"] = str(e)
    out["stream_sync_refused"] = stream_with_sync(spark, work)
    overwrite = spark.createDataFrame([("z", "la", 5, 9.0)], ROWS)
    overwrite.write.format("hoodie").options(**OPTIONS).mode("overwrite").save(table)
    out["overwritten"] = rows(spark.read.format("hoodie").load(table).select("uuid", "city", "ts", "fare"))
    return out


def stream_with_sync(spark: Any, work: Path) -> str | None:
    """A streaming query through the data source's stream writer with the sync on: the error."""
    landing = work / "landing"
    landing.mkdir()
    spark.createDataFrame([("s", "sf", 1, 1.0)], ROWS).write.parquet(str(landing / "0"))
    stream = spark.readStream.schema(ROWS).parquet(str(landing / "0"))
    options = {**OPTIONS, "hoodie.datasource.meta.sync.enable": "true", "checkpointLocation": str(work / "checkpoint")}
    try:
        query = stream.writeStream.format("hoodie").options(**options).start(str(work / "streamed"))
        try:
            query.processAllAvailable()
        finally:
            query.stop()
    except Exception as e:  # the refusal, as Spark relays it
        return str(e)
    return None


def main() -> None:
    step, work = sys.argv[1], Path(sys.argv[2])
    out = discover_step(work) if step == "discover" else catalog_step(step, work)
    (work / f"{step}.json").write_text(json.dumps(out, default=str))


if __name__ == "__main__":
    main()
