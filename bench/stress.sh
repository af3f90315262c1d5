#!/usr/bin/env bash
# The concurrency suite (tests/integration/concurrency.sh, stress.py), long:
#
#   bench/stress.sh [BUILD_DIR] [SECONDS] [SEED]   (defaults: build, 300, 11)
#
# SECONDS of writers (sed -i, os.replace, `>`, a truncating writer) and
# readers (grep -r, find+cat) per loop mode (-o st, then -o mt), each run
# followed by the check that SOURCE decodes and holds every writer's last
# acknowledged edit, including lost updates between
# writers sharing a view or a model with a whole-model writer. The report
# (saves, refusals, reads, failures) goes to stderr; the work folder (logs,
# state-*.json) stays in BUILD_DIR/tests/integration/work/concurrency.
# Numbers: docs/performance.md "Threads".
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
build=$(cd "${1:-$root/build}" && pwd)
export LFS_BUILD_ROOT=$build LFS_SOURCE_ROOT=$root
export LFS_CORPUS=${LFS_CORPUS:-$root/../shared/corpus}
export CONCURRENCY_SECONDS=${2:-300} CONCURRENCY_SEED=${3:-11}
exec bash "$root/tests/integration/concurrency.sh"
