"""Table services: rollback of failed writes (compaction, cleaning and archival follow).
Each plans first (saved as a requested instant), then executes, then completes."""
