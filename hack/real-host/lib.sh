# shellcheck shell=bash
# Common helpers of hack/real-host.sh (sourced; see that file for the overview).

rh_log() { printf '[real-host %(%H:%M:%S)T] %s\n' -1 "$*" >&2; }
rh_die() {
  printf '[real-host] error: %s\n' "$*" >&2
  exit 1
}

# rh_need CMD [HINT]: fail (never skip) when a required tool is missing.
rh_need() {
  command -v "$1" >/dev/null 2>&1 || [[ -x "$1" ]] ||
    rh_die "'$1' is required but missing${2:+ ($2)}"
}

# rh_wait DEADLINE_SECONDS WHAT CMD...: run CMD every second until it
# succeeds; fail with WHAT after the deadline.
rh_wait() {
  local deadline=$((SECONDS + $1)) what="$2"
  shift 2
  until "$@" >/dev/null 2>&1; do
    ((SECONDS < deadline)) || return 1
    sleep 1
  done
}

# rh_wait_or_die DEADLINE WHAT CMD...
rh_wait_or_die() {
  local what="$2"
  rh_wait "$@" || rh_die "timed out waiting for ${what}"
}

# rh_apt_update_once [force]: `apt-get update` before the first install
# (apt's lists may be absent or stale on a fresh machine): once per run, and
# only when this script family has not refreshed them within a day, or
# with `force` (after adding a source).
# shellcheck disable=SC2120
rh_apt_update_once() {
  local stamp=/var/lib/apt/periodic/skein-real-host-update
  if [[ "${1:-}" != force ]]; then
    [[ -n "${RH_APT_UPDATED:-}" ]] && return 0
    [[ -f "$stamp" && -z "$(find "$stamp" -mmin +1440 2>/dev/null)" ]] && return 0
  fi
  rh_log "apt-get update"
  DEBIAN_FRONTEND=noninteractive apt-get update -qq >/dev/null || rh_die "apt-get update failed"
  mkdir -p "$(dirname "$stamp")" && touch "$stamp"
  RH_APT_UPDATED=1
}

# rh_apt_install PKG...: install Debian packages that are not installed yet.
rh_apt_install() {
  local missing=() p
  for p in "$@"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'ok installed' || missing+=("$p")
  done
  ((${#missing[@]} == 0)) && return 0
  rh_need apt-get "this script installs its Debian packages with apt-get"
  # shellcheck disable=SC2119
  rh_apt_update_once
  rh_log "apt-get install ${missing[*]}"
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null ||
    rh_die "apt-get install ${missing[*]} failed"
}
