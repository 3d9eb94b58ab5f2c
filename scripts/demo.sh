#!/usr/bin/env bash
# Set up the environment and run the demo pipeline (local Spark, local files).
# Extra arguments go to the demo, e.g. --path /some/dir --in-process. The demo replaces
# only a table it created at --path; any other non-empty folder is refused, untouched.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/bootstrap.sh
exec .venv/bin/python -m hoodie.demo "$@"
