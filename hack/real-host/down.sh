# shellcheck shell=bash
# `down`: stop what `up` started, by the PIDs it recorded, then delete the
# network namespace and the veth pair. The run directory (logs, PKI) and
# the build cache stay. Sourced by hack/real-host.sh.

# rh_stop NAME: SIGTERM the recorded PID, SIGKILL after 10 s.
rh_stop() {
  local file="${RH_RUN}/pids/$1.pid" pid
  [[ -f "$file" ]] || return 0
  pid="$(cat "$file")"
  # A recorded command name must still match (PIDs get reused).
  if [[ -f "${RH_RUN}/pids/$1.cmd" ]] &&
    ! { tr '\0' ' ' <"/proc/${pid}/cmdline"; } 2>/dev/null | grep -qF "$(cat "${RH_RUN}/pids/$1.cmd")"; then
    rm -f "$file" "${RH_RUN}/pids/$1.cmd"
    return 0
  fi
  if kill -0 "$pid" 2>/dev/null; then
    kill -TERM "$pid" 2>/dev/null || true
    local deadline=$((SECONDS + 10))
    while kill -0 "$pid" 2>/dev/null && ((SECONDS < deadline)); do sleep 0.2; done
    if kill -0 "$pid" 2>/dev/null; then
      rh_log "down: ${1} (pid ${pid}) ignored SIGTERM; SIGKILL"
      kill -KILL "$pid" 2>/dev/null || true
    fi
    rh_log "down: stopped ${1} (pid ${pid})"
  fi
  rm -f "$file" "${RH_RUN}/pids/$1.cmd"
}

rh_down() {
  local n
  # Clients first, then the store: Skein, the controller manager, the
  # apiserver, etcd; then any other PID recorded (background checks).
  for n in skein-member skein kube-controller-manager kube-apiserver etcd; do
    rh_stop "$n"
  done
  if [[ -d "${RH_RUN}/pids" ]]; then
    for n in "${RH_RUN}"/pids/*.pid; do
      [[ -e "$n" ]] || continue
      n="${n##*/}"
      rh_stop "${n%.pid}"
    done
  fi
  # Deleting the namespace deletes its end of the veth pair, and with it
  # the peer; the explicit delete covers a half-made pair.
  if ip netns list 2>/dev/null | grep -qw "$RH_NETNS"; then
    ip netns del "$RH_NETNS" && rh_log "down: deleted netns ${RH_NETNS}"
  fi
  if ip link show "$RH_VETH_HOST" >/dev/null 2>&1; then
    ip link del "$RH_VETH_HOST" && rh_log "down: deleted ${RH_VETH_HOST}"
  fi
  rh_log "down: done (run directory kept: ${RH_RUN})"
}
