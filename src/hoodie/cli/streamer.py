"""``hoodie streamer``: ingest mini-batches from a source into a table (Hudi's HoodieStreamer).

The command gathers Hudi's streamer flags (``--props`` file, ``--hoodie-conf``/``-o``
options, ``--target-table``, ``--table-type``, ``--op``, ``--source-ordering-field``)
into the options of :class:`hoodie.streamer.StreamerSettings`, runs the loop of
:mod:`hoodie.streamer` on the chosen engine, and shows each batch as it commits: its
instant, the rows it took from the source and which files or commits, how far the source is ahead
(lag) and how long it took, and the asynchronous compactions a continuous job starts.
SIGINT or SIGTERM stop the job after the batch in flight (and a running compaction).
"""
from __future__ import annotations

import threading
from collections.abc import Sequence

from rich.text import Text

from hoodie.cli.errors import UsageError
from hoodie.cli.options import parse_options
from hoodie.cli.output import stderr_console, stdout_console
from hoodie.storage import storage_for
from hoodie.streamer import BatchResult, Streamer, StreamerSettings, engine_for, stopping_on_signals

# Hudi's streamer flags that are options under another name
FLAG_OPTIONS = {
    "--target-table": "hoodie.table.name",
    "--table-type": "hoodie.datasource.write.table.type",
    "--op": "hoodie.datasource.write.operation",
    "--source-ordering-field": "hoodie.datasource.write.precombine.field",
}


def read_props(path: str) -> list[str]:
    """``key=value`` lines of a properties file (local or a storage URL; ``#`` and ``!``
    start comments), as ``-o`` values."""
    try:  # a local path or a storage URL, as Hudi's --props and the transformer's SQL file
        lines = storage_for(path).read_bytes(path).decode("utf-8").splitlines()
    except (OSError, UnicodeDecodeError) as e:
        raise UsageError(f"cannot read --props {path}: {e}") from e
    kept = [line.strip() for line in lines]
    return [line for line in kept if line and not line.startswith(("#", "!"))]


def settings_from(
    path: str,
    source: str,
    props: str | None,
    options: Sequence[str],
    flags: dict[str, str | None],
    source_limit: int | None,
    checkpoint: str | None,
    compaction: bool = True,
) -> StreamerSettings:
    """The streamer's settings from the command line (options checked by
    :func:`hoodie.cli.options.parse_options`)."""
    layers = [parse_options(read_props(props) if props else []), parse_options(options)]  # each checked on its own
    layers.append(parse_options([f"{FLAG_OPTIONS[flag]}={value}" for flag, value in flags.items() if value is not None]))
    merged: dict[str, str] = {}
    for layer in layers:  # -o wins over --props, the flags over both
        merged.update(layer.raw)
    if source_limit is not None and source_limit < 1:
        raise UsageError(f"invalid value {source_limit} for --source-limit: expected a number of bytes from 1")
    return StreamerSettings(path, source, merged, source_limit, checkpoint, compaction)


def run(settings: StreamerSettings, engine_name: str, continuous: bool, min_sync_interval_seconds: float) -> list[BatchResult]:
    """Run the job, printing each batch; returns the committed batches."""
    if min_sync_interval_seconds < 0:
        raise UsageError(f"invalid value {min_sync_interval_seconds} for --min-sync-interval-seconds: expected 0 or more")
    streamer = Streamer(settings, engine_for(engine_name))
    out, err = stdout_console(), stderr_console()
    mode = "continuously" if continuous else "once"
    err.print(Text(f"streaming {streamer.source.describe()} into {streamer.target} ({engine_name}, {mode})", style="bold"), soft_wrap=True)
    idle = [False]

    def show(result: BatchResult | None) -> None:
        if result is None:
            if not idle[0]:
                err.print(Text("up to date: no new data in the source" + ("; waiting" if continuous else ""), style="dim"), soft_wrap=True)
            idle[0] = True
            return
        idle[0] = False
        line = Text()
        line.append(f"batch {result.number}", style="bold")
        line.append(f"  {result.instant or '-'}  ")
        line.append(f"{result.rows:,} rows", style="green")
        line.append(f"  {result.batch.describe()}  lag: {result.batch.lag()}  {result.seconds:.1f} s")
        out.print(line, soft_wrap=True)
        if result.compaction is not None:
            err.print(Text(f"compaction {result.compaction} started beside the next batches", style="dim"), soft_wrap=True)

    stop = threading.Event()
    with stopping_on_signals(stop):
        results = streamer.run(continuous=continuous, min_sync_interval_seconds=min_sync_interval_seconds, stop=stop, on_batch=show)
    if stop.is_set():
        err.print(Text(f"stopped after {len(results)} batch{'es' if len(results) != 1 else ''}", style="yellow"), soft_wrap=True)
    return results
