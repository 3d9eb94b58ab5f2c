"""The README's examples run as written: the in-process Python example (its incremental
pull returns the rows its comment shows) and the command-line example, on a copy-on-write
table made by that example and a merge-on-read table (compaction runs on it, not on the
copy-on-write one)."""
from __future__ import annotations

import re
import shlex
from pathlib import Path

import pyarrow as pa
from typer.testing import CliRunner

import hoodie
from hoodie.cli.main import app

README = Path(__file__).resolve().parents[1] / "README.md"


def code_block(heading: str, language: str) -> str:
    """The first ``language`` code block after the line ``heading`` of the README."""
    text = README.read_text()
    after = text[text.index(f"\n{heading}\n"):]
    match = re.search(rf"```{language}\n(.*?)```", after, re.S)
    assert match, f"no {language} block under {heading!r}"
    return match.group(1)


def run_python_example(trips: Path) -> dict[str, object]:
    code = code_block("### In one Python process (no JVM)", "python").replace('"/data/trips"', repr(str(trips)))
    assert str(trips) in code
    namespace: dict[str, object] = {}
    exec(compile(code, str(README), "exec"), namespace)  # noqa: S102 (the README's own example)
    return namespace


def test_the_in_process_example_pulls_rows(tmp_path: Path, capsys) -> None:
    namespace = run_python_example(tmp_path / "trips")
    changes = namespace["changes"]
    assert isinstance(changes, pa.Table) and changes.num_rows > 0
    # what it prints is what the README's comment says it prints
    code = code_block("### In one Python process (no JVM)", "python")
    (promised,) = re.findall(r"^print\(changes.*# (.*)$", code, re.M)
    assert capsys.readouterr().out.strip() == promised
    assert hoodie.read(str(tmp_path / "trips")).select(["uuid", "fare"]).to_pylist() == [{"uuid": "b", "fare": 22.5}]


def _rides(path: Path) -> None:
    """A merge-on-read table with as many delta commits as make a compaction due (5)."""
    options = {
        "hoodie.table.name": "rides",
        "hoodie.datasource.write.recordkey.field": "id",
        "hoodie.datasource.write.partitionpath.field": "city",
        "hoodie.datasource.write.precombine.field": "ts",
        "hoodie.datasource.write.table.type": "MERGE_ON_READ",
    }
    for ts in range(1, 6):
        hoodie.write(pa.table({"id": [1, 2], "city": ["sf", "nyc"], "ts": [ts, ts], "fare": [1.0 * ts, 2.0 * ts]}), str(path), options)


def test_the_command_line_example_runs(tmp_path: Path) -> None:
    run_python_example(tmp_path / "trips")
    _rides(tmp_path / "rides")
    paths = {"/data/trips": str(tmp_path / "trips"), "/data/rides": str(tmp_path / "rides"), "/data/trips.parquet": str(tmp_path / "trips.parquet")}
    lines = [line.split("#")[0].strip() for line in code_block("### Command line", "bash").splitlines()]
    commands = [shlex.split(line) for line in lines if line]
    assert any(c[1:3] == ["compaction", "run"] for c in commands)
    for command in commands:
        assert command[0] == "hoodie"
        args = [paths.get(a, a) for a in command[1:]]
        result = CliRunner().invoke(app, args)
        assert result.exit_code == 0, (command, result.output)
        if "-o" in command[1:]:
            assert (tmp_path / "trips.parquet").is_file(), result.output
        if command[1] == "compaction":
            assert "nothing to compact" not in result.output, command
        if command[1:3] == ["compaction", "run"]:
            assert re.search(r"Compaction \d+ completed: 2 file slice\(s\) compacted", result.stdout), result.output


def test_the_engines_example_reads_the_table(tmp_path: Path) -> None:
    run_python_example(tmp_path / "trips")
    code = code_block("### Reading from DuckDB, Polars, pandas and Daft", "python").replace('"/data/trips"', repr(str(tmp_path / "trips")))
    lines = code.splitlines()
    # each engine's query line, kept as a value to check
    queries = [i for i, line in enumerate(lines) if line.startswith(("duckdb.", "pl.", "trips.", "hoodie.to_daft"))]
    assert len(queries) == 4
    for n, i in enumerate(queries):
        lines[i] = f"result_{n} = {lines[i]}"
    namespace: dict[str, object] = {}
    exec(compile("\n".join(lines), str(README), "exec"), namespace)  # noqa: S102 (the README's own example)
    duck, polars_frame, pandas_frame, daft_frame = (namespace[f"result_{n}"] for n in range(4))
    assert duck == [("b", 22.5)]
    assert polars_frame.rows() == [("b", 22.5)]  # type: ignore[attr-defined]
    assert pandas_frame.to_dict("records") == [{"uuid": "b", "fare": 22.5}]  # type: ignore[attr-defined]
    assert daft_frame.to_pydict() == {"uuid": ["b"], "fare": [22.5]}  # type: ignore[attr-defined]
