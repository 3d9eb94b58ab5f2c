"""The only path that mutates a table: write client, operations, key generators, dedupe,
partitioner, write handles, markers and the commit protocol."""
