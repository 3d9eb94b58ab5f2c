"""Driver-side plumbing around the Spark jobs of one write: a job group, waiting for
cancelled tasks to stop, and hoodie errors raised inside tasks brought back as such.

It owns no table logic; :mod:`hoodie.spark.write` uses it so that a failed write is
rolled back only once no task of it can still create files.
"""
from __future__ import annotations

import re
import time
from collections.abc import Iterator
from contextlib import contextmanager

from pyspark import SparkContext
from pyspark.errors import PySparkException

import hoodie.errors as errors

_GROUP_PROPERTIES = ("spark.jobGroup.id", "spark.job.description", "spark.job.interruptOnCancel")
# How a task's Python traceback names a hoodie error: "hoodie.errors.RecordError: message"
_TASK_ERROR = re.compile(r"^hoodie\.errors\.(\w+): (.*)$", re.MULTILINE)


@contextmanager
def job_group(sc: SparkContext, group_id: str, description: str) -> Iterator[str]:
    """Run the enclosed Spark jobs in their own job group (interruptible on cancel),
    restoring the caller's group afterwards."""
    saved = {k: sc.getLocalProperty(k) for k in _GROUP_PROPERTIES}
    sc.setJobGroup(group_id, description, interruptOnCancel=True)
    try:
        yield group_id
    finally:
        for key, value in saved.items():
            sc.setLocalProperty(key, value)  # type: ignore[arg-type]  # None clears it


def cancel_and_wait(sc: SparkContext, group_id: str, timeout_s: float = 60.0) -> bool:
    """Cancel the group's jobs and wait until none of their tasks is still running.

    A failed job leaves its other tasks running for a moment (Spark kills them
    asynchronously); a rollback started before they stop could miss a file they are
    about to write. Returns False if tasks were still active at the timeout.
    """
    sc.cancelJobGroup(group_id)
    tracker = sc.statusTracker()
    deadline = time.monotonic() + timeout_s
    while True:
        active = 0
        for job_id in tracker.getJobIdsForGroup(group_id):
            info = tracker.getJobInfo(job_id)
            for stage_id in info.stageIds if info is not None else ():
                stage = tracker.getStageInfo(stage_id)
                if stage is not None:
                    active += stage.numActiveTasks
        if active == 0:
            return True
        if time.monotonic() > deadline:
            return False
        time.sleep(0.05)


def hoodie_error_in(exc: BaseException) -> errors.HoodieError | None:
    """The hoodie error a Spark task raised, rebuilt on the driver, or None.

    PySpark reports a failed Python task as a ``PythonException`` whose text holds the
    task's traceback; the last ``hoodie.errors.X: message`` line in it names the error.
    """
    if not isinstance(exc, PySparkException):
        return None
    matches = _TASK_ERROR.findall(str(exc))
    if not matches:
        return None
    name, message = matches[-1]
    cls = getattr(errors, name, None)
    if isinstance(cls, type) and issubclass(cls, errors.HoodieError):
        return cls(message)
    return None
