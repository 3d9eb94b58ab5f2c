"""bounded_runs: consecutive runs within a weight budget and an item count, in order."""
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
