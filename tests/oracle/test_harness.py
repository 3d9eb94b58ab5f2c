"""The oracle's harness: Apache Hudi's refusals reach the test with its message and the
process keeps serving; a child that dies or does not answer is an error carrying the
tail of its stderr, and one that does not answer is killed with everything it started;
without Maven the set-up says the oracle is unavailable (the tests then skip)."""
from __future__ import annotations

import os
import shutil
import stat
import time
from collections.abc import Callable
from pathlib import Path

import pytest
from hudi_oracle import HUDI_0_15, HudiOracle, OracleError, OracleSetup, OracleUnavailable, set_up


@pytest.mark.parametrize("version", [HUDI_0_15])
def test_a_refused_request_names_apache_hudis_error(version: str, hudi_oracle: Callable[[str], HudiOracle], tmp_path: Path) -> None:
    oracle = hudi_oracle(version)
    with pytest.raises(OracleError, match=r"Apache Hudi 0\.15\.0 refused read of .*nothing-here: .*nothing-here"):
        oracle.read(tmp_path / "nothing-here")
    assert oracle.running


def _fake_python(tmp_path: Path, body: str) -> OracleSetup:
    """A set-up whose "python" is a shell script: it runs instead of the driver."""
    script = tmp_path / "python"
    script.write_text(f"#!/bin/sh\n{body}\n")
    script.chmod(script.stat().st_mode | stat.S_IXUSR)
    return OracleSetup("test", script, tmp_path / "no.jar")


def test_a_child_that_dies_names_its_exit_status_and_stderr(tmp_path: Path) -> None:
    setup = _fake_python(tmp_path, "echo 'Error: no JVM here' >&2\nexit 7")
    with pytest.raises(OracleError, match=r"(?s)died during start \(exit status 7\).*Error: no JVM here"):
        HudiOracle(setup, tmp_path / "work")


def _gone(pid: int) -> bool:
    """Whether ``pid`` has ended (a zombie waiting for its parent counts as ended)."""
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (FileNotFoundError, ProcessLookupError):
        return True
    return state in ("Z", "X")


def test_a_child_that_does_not_answer_is_killed_with_what_it_started(tmp_path: Path) -> None:
    # the script starts a process of its own (as the driver starts a JVM), then hangs
    setup = _fake_python(tmp_path, f"sleep 600 &\necho $! > {tmp_path}/grandchild\necho 'still starting' >&2\nsleep 600")
    with pytest.raises(OracleError, match=r"(?s)did not answer start within 2s \(killed\).*still starting"):
        HudiOracle(setup, tmp_path / "work", start_timeout=2)
    grandchild = int((tmp_path / "grandchild").read_text())
    for _ in range(100):  # SIGKILL is delivered, not awaited: give it up to 10 s
        if _gone(grandchild):
            break
        time.sleep(0.1)
    assert _gone(grandchild), "the process the child started outlived it"


def test_without_maven_the_oracle_is_unavailable(tmp_path: Path) -> None:
    bin_dir = tmp_path / "bin"  # the tools the set-up uses, without mvn
    bin_dir.mkdir()
    for tool in ("bash", "dirname", "mkdir", "flock"):
        found = shutil.which(tool)
        assert found is not None, f"{tool} not on PATH"
        os.symlink(found, bin_dir / tool)
    env = {"PATH": str(bin_dir), "HOME": str(tmp_path), "HOODIE_ORACLE_CACHE": str(tmp_path / "cache")}
    with pytest.raises(OracleUnavailable, match=r"mvn not found \(needed to fetch org\.apache\.hudi:hudi-spark3\.5-bundle_2\.12:0\.15\.0\)"):
        set_up(HUDI_0_15, env=env)
