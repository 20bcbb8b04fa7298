#!/usr/bin/env bash
# Skein's benchmarks (docs/benchmarks.md): a release build of hack/bench.
#
#   hack/bench.sh storage              # the storage report, about 1.5 minutes
#   hack/bench.sh storage --seconds 1  # quicker, noisier
#   hack/bench.sh api                  # HTTPS GET/LIST/CREATE vs bare server and storage, < 1 minute
#   hack/bench.sh api --etcd           # the same with skein on a real etcd
#   hack/bench.sh cache                # watch cache: LIST, wrk workload, fan-out, RSS; both stores
#   hack/bench.sh patch                # PUT vs strategic merge patch vs server-side apply
#   hack/bench.sh patch --modes put    # only the modes the server supports
#   hack/bench.sh members            # 50 member processes probed by one federation, ~3 minutes
#   hack/bench.sh propagation        # 1,000 Deployments fanned out to 3 and 10 members, < 10 minutes
#   hack/bench.sh fleet              # 10, 50 and 100 members, 10,000 objects, restart, a member lost
#   hack/bench.sh fleet --members 10 --objects 1000   # a quick look
#   hack/bench.sh chaos --minutes 30 # the long chaos run (issue 31): faults, SIGKILLs, invariants, RSS
#   hack/bench.sh flood              # APF: a polite user alone and under a 2,000-connection flood, ~1 minute
#   hack/bench.sh --help
#
# The report goes to stdout, progress to stderr. Needs etcd on PATH (or
# $SKEIN_ETCD), as the storage tests do. `api` and `patch` run a release
# build of the skein binary, built here ($SKEIN_BIN overrides it).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
case "${1:-}" in
  api|cache|patch|members|propagation|fleet|chaos|flood)
    if [[ -z "${SKEIN_BIN:-}" ]]; then
      cargo build --quiet --release -p skein --bin skein
      target_dir="${CARGO_TARGET_DIR:-target}"
      [[ "$target_dir" == /* ]] || target_dir="$PWD/$target_dir"
      export SKEIN_BIN="$target_dir/release/skein"
    fi
    ;;
esac
exec cargo run --quiet --release -p skein-bench -- "$@"
