"""The only path that writes data files: write client, operations, key generators, dedupe,
partitioner, write handles and the commit protocol. The table services a write runs
(recovery, rollback, inline services) are given to it (:mod:`.table_services`)."""
