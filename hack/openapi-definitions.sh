#!/usr/bin/env bash
# Regenerates apiserver/openapi/v1.33.0/_definitions.json: the upstream
# Kubernetes v1.33 type definitions (with their x-kubernetes-* extensions) as
# shipped by the PyPI package kubernetes-validate (Apache-2.0).
#
# Usage: hack/openapi-definitions.sh [kubernetes-validate version]
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
version=${1:-1.37.0}
k8s=v1.33.0
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

python3 -m pip download --quiet --no-deps --dest "$tmp" "kubernetes-validate==$version"
wheel=$(ls "$tmp"/kubernetes_validate-*.whl)
out="$root/apiserver/openapi/$k8s"
mkdir -p "$out"
python3 - "$wheel" "$out/_definitions.json" "$root/apiserver/openapi/LICENSE.kubernetes-validate" "$k8s" <<'PY'
import json, sys, zipfile
wheel, dest, license_dest, k8s = sys.argv[1:]
with zipfile.ZipFile(wheel) as z:
    data = z.read(f"kubernetes_validate/kubernetes-json-schema/{k8s}-local/_definitions.json")
    json.loads(data)  # refuse to vendor something that is not JSON
    lic = [n for n in z.namelist() if n.endswith("licenses/LICENSE") or n.endswith("/LICENSE")]
    open(dest, "wb").write(data)
    if lic:
        open(license_dest, "wb").write(z.read(lic[0]))
PY
sha256sum "$out/_definitions.json"
