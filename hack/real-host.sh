#!/usr/bin/env bash
# Skein as an aggregated API server behind a REAL upstream kube-apiserver.
#
#   bash hack/real-host.sh [build|up|test|down|all]     (default: all)
#
# build  kube-apiserver + kube-controller-manager v1.20.2 from Debian
#        bookworm's `kubernetes` source package with golang-1.19, cached in
#        ${SKEIN_REAL_HOST_CACHE:-/var/tmp/skein-real-host} (hack/real-host/build.sh)
# up     PKI, etcd, kube-apiserver, kube-controller-manager on loopback and on
#        a veth into the network namespace skein-rh; Skein (federation) and a
#        member inside that namespace, registered through the APIService
#        v1alpha1.federation.skein.io that charts/skein renders (hack/real-host/up.sh)
# test   the checks; prints `ok - …` / `not ok - …` and `N passed, N failed`
#        (hack/real-host/test.sh); exit status 0 only when none failed
# down   stops what `up` started (by recorded PIDs), deletes the netns and
#        the veth; keeps the cache and the run directory (hack/real-host/down.sh)
# all    build, up, test, down (down runs on any exit, Ctrl-C included);
#        exit status = test's
#
# Environment:
#   SKEIN_BIN              skein binary (default /var/tmp/skein-ci-target/debug/skein)
#   SKEIN_REAL_HOST_CACHE  build cache (default /var/tmp/skein-real-host)
#   SKEIN_REAL_HOST_RUN    run directory with every piece of state: PKI,
#                          kubeconfigs, data, logs, PIDs. Default: a new
#                          `mktemp -d` for `up`/`all`; `test`/`down` alone
#                          use the one the last `up` recorded in the cache.
#
# Needs root (network namespaces, veth), Debian (apt-get installs what is
# missing) and the client tools of hack/tools.sh (kubectl 1.35/1.32,
# helm 4.1/3.17 in .tools/).
# The settings below are used by the sourced pieces:
# shellcheck disable=SC2034
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
HERE="${ROOT}/hack/real-host"
for piece in lib build up test down; do
  # shellcheck source=/dev/null
  source "${HERE}/${piece}.sh"
done

RH_CACHE="${SKEIN_REAL_HOST_CACHE:-/var/tmp/skein-real-host}"
SKEIN_BIN="${SKEIN_BIN:-/var/tmp/skein-ci-target/debug/skein}"
# The private /30 between the root namespace (host end: kube-apiserver)
# and the netns (Skein). 10.213.0.0/30 is unlikely to clash with anything.
RH_NETNS=skein-rh
RH_VETH_HOST=skrh-host
RH_VETH_NS=skrh-skein
RH_HOST_IP=10.213.0.1
RH_SKEIN_IP=10.213.0.2
RH_APISERVER_PORT=6443
RH_HOST_URL="https://${RH_HOST_IP}:${RH_APISERVER_PORT}"

# The client tools (hack/tools.sh installs them).
K="${ROOT}/.tools/kubectl-1.35/kubectl"
K32="${ROOT}/.tools/kubectl-1.32/kubectl"
H4="${ROOT}/.tools/helm-4.1/helm"
H3="${ROOT}/.tools/helm-3.17/helm"
rh_need_tools() {
  local t
  for t in "$K" "$K32" "$H4" "$H3"; do
    if [[ ! -x "$t" ]]; then
      rh_log "missing ${t}: running hack/tools.sh"
      bash "${ROOT}/hack/tools.sh" >&2 || rh_die "hack/tools.sh failed: kubectl 1.35/1.32 and helm 4/3 are required"
    fi
    [[ -x "$t" ]] || rh_die "missing ${t} even after hack/tools.sh"
  done
}

# The run directory: given, new (up, all), or the last up's (test, down).
rh_set_run() {
  if [[ -n "${SKEIN_REAL_HOST_RUN:-}" ]]; then
    RH_RUN="$SKEIN_REAL_HOST_RUN"
  elif [[ "$1" == new ]]; then
    RH_RUN="$(mktemp -d -t skein-real-host.XXXXXX)"
  elif [[ -s "${RH_CACHE}/current-run" ]]; then
    RH_RUN="$(cat "${RH_CACHE}/current-run")"
  else
    rh_die "no run recorded in ${RH_CACHE}/current-run: run up first, or set SKEIN_REAL_HOST_RUN"
  fi
  mkdir -p "$RH_RUN"
  RH_RUN="$(cd "$RH_RUN" && pwd)"
  rh_log "run directory: ${RH_RUN}"
  # `test` uses the binary `up` pinned.
  if [[ "$1" != new && -x "${RH_RUN}/bin/skein" ]]; then
    SKEIN_BIN="${RH_RUN}/bin/skein"
  fi
}

# On a failed `up`, and on any exit of `all`: tear down.
rh_teardown_trap() {
  local rc=$?
  trap - EXIT INT TERM
  rh_down || true
  exit "$rc"
}

main() {
  local cmd="${1:-all}" t0
  case "$cmd" in
    build) rh_build ;;
    up)
      rh_set_run new
      trap rh_teardown_trap INT TERM
      trap 'rc=$?; ((rc == 0)) || rh_teardown_trap' EXIT
      rh_up
      trap - EXIT INT TERM
      ;;
    test)
      rh_set_run existing
      rh_need_tools
      rh_test
      ;;
    down)
      rh_set_run existing
      rh_down
      ;;
    all)
      rh_set_run new
      trap rh_teardown_trap EXIT INT TERM
      t0=$SECONDS
      rh_build
      rh_log "all: build took $((SECONDS - t0)) s"
      t0=$SECONDS
      rh_up
      rh_log "all: up took $((SECONDS - t0)) s"
      t0=$SECONDS
      # Not `rh_test || rc=$?`: errexit is ignored inside anything run as
      # the left side of || (subshells included), and the checks rely on it.
      local rc
      set +e
      (
        set -e
        rh_test
      )
      rc=$?
      set -e
      rh_log "all: test took $((SECONDS - t0)) s"
      exit "$rc"
      ;;
    *) rh_die "usage: $0 [build|up|test|down|all]" ;;
  esac
}

main "$@"
