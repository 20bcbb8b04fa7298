#!/usr/bin/env bash
# Skein's benchmarks (docs/benchmarks.md): a release build of hack/bench.
#
#   hack/bench.sh storage              # the storage report, about 1.5 minutes
#   hack/bench.sh storage --seconds 1  # quicker, noisier
#   hack/bench.sh --help
#
# The report goes to stdout, progress to stderr. Needs etcd on PATH (or
# $SKEIN_ETCD), as the storage tests do.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
exec cargo run --quiet --release -p skein-bench -- "$@"
