"""Reading a file slice: its base file, its log files scanned and merged into it by Hudi's
merge rules and ordering values, for the instants a reader may see.

Queries (``hoodie.query``) and compaction (``hoodie.services.compaction``) both read
slices through this package, as hudi-rs's file-group reader serves both; it reads and
never writes.

* ``instants``: :class:`InstantFilter`, which write instants a read sees;
* ``base_file``: one base file as a picklable task;
* ``log_scan``: scanning log files (block order, rollbacks, committed byte ranges);
* ``ordering`` and ``merge_rules``: ordering values and which record version wins;
* ``merge``: merging the log records of a slice into its base file;
* ``for_compaction``: the same merge for the slices a compaction plan names.
"""
