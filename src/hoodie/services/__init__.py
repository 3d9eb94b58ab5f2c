"""Table services: rollback of failed writes, compaction, cleaning, savepoints and
restore, archival, and the inline runner that writers call after a commit.

Each service plans first (a pure step that also says why it would not run), saves the
plan as a requested instant, executes idempotently (a crashed run is finished by the
next one) and completes with Hudi's Avro metadata."""
