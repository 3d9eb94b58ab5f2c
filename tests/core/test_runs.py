"""bounded_runs: consecutive runs within a weight budget and an item count, in order;
grouped_runs: such runs only while every worker keeps enough tasks."""
from __future__ import annotations

from hoodie.engine.runs import bounded_runs


def test_runs_keep_order_and_respect_both_bounds() -> None:
    assert bounded_runs([], len, 10) == []
    weights = [3, 3, 3, 2, 20, 1, 1, 1, 1, 1]
    runs = bounded_runs(range(len(weights)), lambda i: weights[i], 9)
    assert runs == [[0, 1, 2], [3], [4], [5, 6, 7, 8, 9]]  # 3+3+3; 2 (20 would pass 9); 20 alone
    assert [i for run in runs for i in run] == list(range(len(weights)))
    assert bounded_runs(range(len(weights)), lambda i: weights[i], 9, max_items=2) == [[0, 1], [2, 3], [4], [5, 6], [7, 8], [9]]
    assert bounded_runs([5, 5], lambda w: w, 10) == [[5, 5]]  # the limit itself fits


def test_grouped_runs_leave_every_worker_enough_tasks() -> None:
    from hoodie.engine.runs import grouped_runs

    one = lambda _: 1  # noqa: E731
    assert grouped_runs(list(range(7)), one, 100, 4, parallelism=1, tasks_per_worker=4) == [[i] for i in range(7)]
    assert grouped_runs(list(range(8)), one, 100, 4, parallelism=1, tasks_per_worker=4) == [[0, 1], [2, 3], [4, 5], [6, 7]]
    assert [len(r) for r in grouped_runs(list(range(40)), one, 100, 4, parallelism=2, tasks_per_worker=4)] == [4] * 10
    assert [len(r) for r in grouped_runs(list(range(40)), one, 2, 4, parallelism=2, tasks_per_worker=4)] == [2] * 20  # the weight bound
