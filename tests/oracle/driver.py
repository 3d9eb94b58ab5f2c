"""Apache Hudi's side of the oracle: a long-lived process (run by the oracle's own
virtual environment, PySpark 3.5 and a Hudi Spark bundle, never hoodie) that answers one
JSON request per line on stdin with one JSON line on stdout.

    {"op": "write", "path": P, "data": F, "options": {...}, "mode": "append"}
        Apache Hudi writes the rows of the Parquet file F into the table at P
        (df.write.format("hudi")); answers the instants completed by it.
    {"op": "read", "path": P, "options": {...}, "out": D}
        Apache Hudi reads the table (spark.read.format("hudi") with those options: snapshot,
        read_optimized, incremental, as.of.instant) and writes the rows as one Parquet
        file under the new folder D; answers that file and the row count.
    {"op": "hfile", "path": F, "info": [NAME...], "meta": [NAME...], "lookups": [KEY...]}
        Apache Hudi's own HFile reader (hudi-io's HFileReaderImpl) reads the HFile F;
        answers its entry count, every (key, value hex) in order, the file info entries
        and meta blocks asked for (hex, or null), and for each lookup key (sorted) the
        seekTo code with the key and value hex at the cursor (or null).
    {"op": "validate_metadata", "path": P}
        Apache Hudi's metadata-table validation of the table at P (hudi_validator.py):
        answers the differences it found and how many things it compared.
    {"op": "stop"}
        stops Spark and exits.

Every answer is {"ok": true, ...} or {"ok": false, "error": "<Java or Python error>"}.
Spark's and Hudi's own output goes to stderr: stdout carries answers only.

Usage: python driver.py JAR WORKDIR
"""
from __future__ import annotations

import json
import os
import re
import sys
import traceback

# The answers get a copy of stdout; fd 1 itself becomes stderr before the JVM starts, so
# nothing the JVM or a library prints can come between two answers.
ANSWERS = os.fdopen(os.dup(1), "w", buffering=1)
os.dup2(2, 1)

# Completed instants that write data: <t>.<action> (table version 6) or
# timeline/<t>_<completion time>.<action> (versions 8 and 9).
COMPLETED = re.compile(r"^(\d+)(?:_(\d+))?\.(commit|deltacommit|replacecommit)$")


def completed_instants(path: str) -> list[list[str | None]]:
    """[time, action, completion time or None] of every completed write on the table's
    active timeline."""
    out = []
    for folder in (os.path.join(path, ".hoodie"), os.path.join(path, ".hoodie", "timeline")):
        if os.path.isdir(folder):
            for name in os.listdir(folder):
                m = COMPLETED.match(name)
                if m:
                    out.append([m.group(1), m.group(3), m.group(2)])
    return sorted(out)


def session(jar: str, workdir: str):
    from pyspark.sql import SparkSession

    builder = (
        SparkSession.builder.master("local[2]")
        .appName("hudi-oracle")
        .config("spark.jars", jar)
        # also on the JVM's own class path, as when the bundle lies in Spark's jars folder:
        # Avro (Spark's) finds Hudi's generated record classes only there, and Hudi 0.15's
        # reader of delete blocks and metadata payloads needs them (else a
        # ClassCastException of GenericData$Record or Utf8)
        .config("spark.driver.extraClassPath", jar)
        .config("spark.driver.memory", "2g")
        # Hudi's quickstart settings
        .config("spark.serializer", "org.apache.spark.serializer.KryoSerializer")
        .config("spark.kryo.registrator", "org.apache.spark.HoodieSparkKryoRegistrar")
        .config("spark.sql.extensions", "org.apache.spark.sql.hudi.HoodieSparkSessionExtension")
        .config("spark.sql.catalog.spark_catalog", "org.apache.spark.sql.hudi.catalog.HoodieCatalog")
        # small and local: tests write few rows
        .config("spark.sql.shuffle.partitions", "2")
        .config("spark.default.parallelism", "2")
        .config("spark.ui.enabled", "false")
        .config("spark.ui.showConsoleProgress", "false")
        .config("spark.sql.session.timeZone", "UTC")
        .config("spark.local.dir", os.path.join(workdir, "spark-local"))
        .config("spark.sql.warehouse.dir", os.path.join(workdir, "warehouse"))
        # answers are read by pyarrow: standard timestamps rather than INT96
        .config("spark.sql.parquet.outputTimestampType", "TIMESTAMP_MICROS")
    )
    spark = builder.getOrCreate()
    spark.sparkContext.setLogLevel("ERROR")
    return spark


def write(spark, req: dict) -> dict:
    before = completed_instants(req["path"])
    df = spark.read.parquet(req["data"])
    df.write.format("hudi").options(**req["options"]).mode(req.get("mode", "append")).save(req["path"])
    after = completed_instants(req["path"])
    return {"instants": [i for i in after if i not in before]}


def read(spark, req: dict) -> dict:
    df = spark.read.format("hudi").options(**req.get("options", {})).load(req["path"])
    if req.get("where"):
        df = df.where(req["where"])  # on the loaded DataFrame: Hudi's file index prunes by it
    df.coalesce(1).write.mode("errorifexists").parquet(req["out"])
    files = sorted(f for f in os.listdir(req["out"]) if f.endswith(".parquet"))
    return {"files": [os.path.join(req["out"], f) for f in files], "schema": df.schema.json()}


def _hfile_reader(jvm, data: bytes):
    """hudi-io's HFileReaderImpl over the bytes of an HFile (the input stream class
    moved between 0.15 and 1.x)."""
    buffer = None
    for name in ("org.apache.hudi.io.ByteBufferBackedInputStream", "org.apache.hudi.common.util.io.ByteBufferBackedInputStream"):
        try:
            buffer = _construct(jvm, name, bytearray(data))
            break
        except Exception:  # noqa: BLE001 - not this version's class
            continue
    if buffer is None:
        raise RuntimeError("no ByteBufferBackedInputStream in this Hudi bundle")
    stream = jvm.org.apache.hudi.io.ByteArraySeekableDataInputStream(buffer)
    reader = jvm.org.apache.hudi.io.hfile.HFileReaderImpl(stream, len(data))
    reader.initializeMetadata()
    return reader


def _construct(jvm, name: str, *args):
    """A new instance of the Java class ``name`` (a TypeError when the bundle lacks it:
    py4j then finds a package, not a class)."""
    target = jvm
    for part in name.split("."):
        target = getattr(target, part)
    return target(*args)


def _cursor(reader) -> list | None:
    kv = reader.getKeyValue()
    if not kv.isPresent():
        return None
    kv = kv.get()
    block = kv.getBytes()  # the decompressed data block the entry lies in
    start = kv.getValueOffset()
    return [kv.getKey().getContentInString(), bytes(block[start : start + kv.getValueLength()]).hex()]


def hfile(spark, req: dict) -> dict:
    jvm = spark._jvm
    with open(req["path"], "rb") as f:
        reader = _hfile_reader(jvm, f.read())
    try:
        entries = []
        if reader.seekTo():
            while True:
                entries.append(_cursor(reader))
                if not reader.next():
                    break
        info = {}
        for name in req.get("info", []):
            found = reader.getMetaInfo(jvm.org.apache.hudi.io.hfile.UTF8StringKey(name))
            info[name] = bytes(found.get()).hex() if found.isPresent() else None
        meta = {}
        for name in req.get("meta", []):
            found = reader.getMetaBlock(name)
            if found.isPresent():
                buf = found.get()
                meta[name] = bytes(buf.array()[buf.arrayOffset() + buf.position() : buf.arrayOffset() + buf.limit()]).hex()
            else:
                meta[name] = None
        lookups = []
        reader.seekTo()
        for key in req.get("lookups", []):
            code = reader.seekTo(jvm.org.apache.hudi.io.hfile.UTF8StringKey(key))
            lookups.append([code, _cursor(reader)])
        return {"count": reader.getNumKeyValueEntries(), "entries": entries, "info": info, "meta": meta, "lookups": lookups}
    finally:
        reader.close()


def main() -> None:
    jar, workdir = sys.argv[1], sys.argv[2]
    spark = session(jar, workdir)
    ANSWERS.write(json.dumps({"ok": True, "ready": True, "spark": spark.version}) + "\n")
    import hudi_validator  # (beside this file)

    ops = {"write": write, "read": read, "hfile": hfile, "validate_metadata": hudi_validator.validate}
    for line in sys.stdin:
        req = json.loads(line)
        if req["op"] == "stop":
            break
        try:
            answer = {"ok": True, **ops[req["op"]](spark, req)}
        except Exception as exc:  # the test side raises it, with this text
            java = getattr(exc, "java_exception", None)
            text = str(java) if java is not None else f"{type(exc).__name__}: {exc}"
            answer = {"ok": False, "error": text, "trace": traceback.format_exc()[-4000:]}
        ANSWERS.write(json.dumps(answer) + "\n")
    spark.stop()


if __name__ == "__main__":
    main()
