#!/usr/bin/env bash
# The whole test suite, from a fresh machine: installs what the tests need,
# builds the skein binary, runs every test. This is the README's test command.
#
# Installs (only what is missing):
#   - etcd (Debian package etcd-server), for the storage and end-to-end suites;
#   - kubectl 1.35/1.32 and helm 4.1/3.17 into .tools/ (hack/tools.sh);
#   - the Python `kubernetes` client into the virtualenv .tools/python.
# protoc is not needed: hack/protoc (see .cargo/config.toml) supplies it.
set -euo pipefail
cd "$(dirname "$0")/.."

as_root() {
  if [ "$(id -u)" = 0 ]; then "$@"; else sudo "$@"; fi
}

if ! command -v etcd >/dev/null 2>&1; then
  echo "== installing etcd (Debian etcd-server)"
  export DEBIAN_FRONTEND=noninteractive
  as_root apt-get install -y -q etcd-server >/dev/null 2>&1 || {
    as_root apt-get update -q >/dev/null
    as_root apt-get install -y -q etcd-server >/dev/null
  }
  # The Debian package may start a system etcd on the default ports; the
  # tests start their own on free loopback ports and do not need it.
fi
# The first line only; a pipe into head could end etcd with SIGPIPE under
# pipefail and fail the run.
etcd_version="$(etcd --version)"
echo "${etcd_version%%$'\n'*}"

echo "== client tools"
bash hack/tools.sh

# The official Python client (test/tests/python.rs), pinned, in a virtualenv
# under .tools/python (idempotent: kept when it already has this version).
PY_KUBERNETES=33.1.0
if ! .tools/python/bin/python3 -c "import kubernetes, sys; sys.exit(kubernetes.__version__ != '${PY_KUBERNETES}')" 2>/dev/null; then
  echo "== python kubernetes ${PY_KUBERNETES} into .tools/python"
  python3 -m venv .tools/python
  .tools/python/bin/python3 -m pip install -q --disable-pip-version-check "kubernetes==${PY_KUBERNETES}"
fi
.tools/python/bin/python3 -c "import kubernetes; print('python kubernetes', kubernetes.__version__)"

echo "== build"
cargo build --bin skein

# The five-minute watch through a host (test/tests/aggregated.rs) mostly
# waits: it runs in the background beside the other suites instead of
# adding five minutes to the run, and is skipped in the main run.
LONG_TEST=a_watch_through_the_host_survives_five_minutes
long_bin="$(cargo test --no-run --test aggregated --message-format=json 2>/dev/null |
  python3 -c 'import json, sys
for line in sys.stdin:
    m = json.loads(line)
    if m.get("reason") == "compiler-artifact" and m.get("executable") and m["target"]["name"] == "aggregated":
        print(m["executable"])')"
if [ -z "$long_bin" ]; then
  echo "error: could not build the aggregated test binary" >&2
  exit 1
fi
long_log="$(mktemp)"
(cd test && exec "$long_bin" --exact "$LONG_TEST" --nocapture) >"$long_log" 2>&1 &
long_pid=$!

echo "== tests"
status=0
python3 hack/check-links.py || status=$?
cargo test --no-fail-fast "$@" -- --skip "$LONG_TEST" || status=$?

echo "== $LONG_TEST (started in the background)"
if wait "$long_pid"; then
  grep -E '^test result' "$long_log" || true
else
  cat "$long_log"
  status=1
fi
rm -f "$long_log"

echo "== kubectl and api suites again, on etcd"
SKEIN_TEST_BACKEND=etcd cargo test --test kubectl --test api "$@" || status=$?

echo "== CRD suites again, on etcd"
SKEIN_TEST_BACKEND=etcd cargo test --test crd --test crd_helm "$@" || status=$?

echo "== Helm and Python suites again, on etcd"
SKEIN_TEST_BACKEND=etcd cargo test --test helm --test python "$@" || status=$?
exit $status
