# shellcheck shell=bash
# `build`: kube-apiserver and kube-controller-manager v1.20.2 from Debian
# bookworm's `kubernetes` source package, compiled with Debian's golang-1.19,
# into ${RH_CACHE}/bin. Cached: nothing is done when both binaries exist and
# report v1.20.2. Sourced by hack/real-host.sh.

RH_K8S_VERSION=v1.20.2
RH_K8S_COMMIT=faecb196815e248d3ecfb03c680a4507229c2a56
RH_GO=/usr/lib/go-1.19/bin/go # golang-1.19 does not put itself on PATH

rh_build_done() {
  local b
  for b in kube-apiserver kube-controller-manager; do
    [[ -x "${RH_CACHE}/bin/${b}" ]] || return 1
    "${RH_CACHE}/bin/${b}" --version 2>/dev/null | grep -q "Kubernetes ${RH_K8S_VERSION}\$" || return 1
  done
}

# The deb-src entry: the `kubernetes` source package is in bookworm main
# (and its +deb12u1 update in the security suite). The entry is derived from
# the machine's own Debian .sources file (same URIs, suites and Signed-By,
# Types: deb-src) instead of naming any mirror here.
rh_build_debsrc() {
  if apt-cache showsrc kubernetes 2>/dev/null | grep -q '^Version: 1\.20\.'; then
    return 0
  fi
  local src=/etc/apt/sources.list.d/debian.sources dst=/etc/apt/sources.list.d/skein-real-host-src.sources
  [[ -f "$src" ]] || rh_die "no ${src} to derive a deb-src entry from: add a deb-src line for bookworm main yourself"
  rh_log "adding deb-src entry ${dst} (derived from ${src})"
  sed -e 's/^Types:.*$/Types: deb-src/' "$src" >"$dst"
  rh_apt_update_once force
  apt-cache showsrc kubernetes 2>/dev/null | grep -q '^Version: 1\.20\.' ||
    rh_die "apt-cache showsrc kubernetes finds no 1.20 source package even with ${dst}"
}

rh_build() {
  if rh_build_done; then
    rh_log "build: cached kube-apiserver and kube-controller-manager ${RH_K8S_VERSION} in ${RH_CACHE}/bin"
    return 0
  fi
  mkdir -p "${RH_CACHE}"
  local log="${RH_CACHE}/build.log"
  rh_log "build: kube-apiserver + kube-controller-manager ${RH_K8S_VERSION} into ${RH_CACHE}/bin (10-15 min on 2 CPUs; log: ${log})"
  rh_apt_install dpkg-dev golang-1.19 ca-certificates
  [[ -x "$RH_GO" ]] || rh_die "golang-1.19 is installed but ${RH_GO} is missing"
  rh_build_debsrc

  local gopath="${RH_CACHE}/gopath" srcroot="${RH_CACHE}/src"
  local k8s="${gopath}/src/k8s.io/kubernetes"
  mkdir -p "$srcroot" "${gopath}/src/k8s.io" "${RH_CACHE}/bin" "${RH_CACHE}/tools"

  # 1. Sources. `apt-get source` unpacks into the current directory and
  # applies Debian's patches. The tree is moved (not linked) into GOPATH:
  # GOPATH mode resolves import paths from the real directory.
  if [[ ! -d "$k8s" ]]; then
    rh_log "build: apt-get source kubernetes golang-github-modern-go-reflect2"
    (cd "$srcroot" && rm -rf kubernetes-* golang-github-modern-go-reflect2* &&
      apt-get source -qq kubernetes golang-github-modern-go-reflect2) >>"$log" 2>&1 ||
      rh_die "apt-get source failed (see ${log})"
    local unpacked
    unpacked="$(find "$srcroot" -maxdepth 1 -type d -name 'kubernetes-1.20*' | head -n1)"
    [[ -n "$unpacked" ]] || rh_die "apt-get source kubernetes unpacked no kubernetes-1.20* directory"
    mv "$unpacked" "$k8s"
  fi

  # 2. vendor/github.com/modern-go/reflect2 is v1.0.1, which go:linknames
  # reflect.mapiterinit with its pre-Go-1.18 signature: under Go >= 1.18
  # every map iteration through json-iterator corrupts memory (JSON/YAML
  # responses crash or are garbage). v1.0.2 is API-compatible; its files
  # replace the vendored ones (GOPATH mode checks no hashes).
  local r2="${k8s}/vendor/github.com/modern-go/reflect2"
  if [[ ! -f "${r2}/.skein-reflect2-1.0.2" ]]; then
    local r2src
    r2src="$(find "$srcroot" -maxdepth 1 -type d -name 'golang-github-modern-go-reflect2-1.0.2*' | head -n1)"
    [[ -n "$r2src" ]] || rh_die "no golang-github-modern-go-reflect2 1.0.2 source in ${srcroot}"
    rh_log "build: vendoring reflect2 1.0.2 from ${r2src##*/}"
    find "$r2" -maxdepth 1 -type f \( -name '*.go' -o -name '*.s' \) -delete
    cp "$r2src"/*.go "$r2src"/*.s "$r2"/
    touch "${r2}/.skein-reflect2-1.0.2"
  fi

  export GOPATH="$gopath" GOCACHE="${RH_CACHE}/go-build" GO111MODULE=off GOPROXY=off GOFLAGS='' CGO_ENABLED=0
  export GOTOOLCHAIN=local

  # 3. pkg/generated/openapi/zz_generated.openapi.go is not in the release
  # tarball (upstream's `make` generates it). Reproduce the KUBE target of
  # Makefile.generated_files: every directory (staging/src seen as vendor/)
  # whose Go files carry a +k8s:openapi-gen= tag, outside
  # vendor/k8s.io/code-generator and sample-apiserver. The API-rule report
  # must equal api/api-rules/violation_exceptions.list, which proves the
  # input set is upstream's.
  local openapi="${k8s}/pkg/generated/openapi/zz_generated.openapi.go"
  if [[ ! -s "$openapi" ]]; then
    rh_log "build: openapi-gen (building the generator, then generating ${openapi#"${k8s}"/})"
    (cd "$k8s" && "$RH_GO" build -o "${RH_CACHE}/tools/openapi-gen" ./vendor/k8s.io/kube-openapi/cmd/openapi-gen) >>"$log" 2>&1 ||
      rh_die "building openapi-gen failed (see ${log})"
    local dirs
    dirs="$(cd "$k8s" &&
      find -H . -not \( \( -path './_*' -o -path './.*' -o -path ./vendor -o -path ./debian \) -prune \) \
        -type f -name '*.go' -print0 |
      xargs -0 grep -l '^// *+k8s:' | xargs grep -l '+k8s:openapi-gen=' |
      sed -e 's|^\./staging/src/|vendor/|' -e 's|^\./||' -e 's|/[^/]*$||' |
      grep -v -e '^vendor/k8s.io/code-generator/' -e '^vendor/k8s.io/sample-apiserver/' |
      LC_ALL=C sort -u | sed 's|^|k8s.io/kubernetes/|' | paste -sd,)"
    [[ -n "$dirs" ]] || rh_die "found no +k8s:openapi-gen= packages"
    rh_log "build: openapi-gen over $(tr ',' '\n' <<<"$dirs" | wc -l) packages"
    (cd "$k8s" && "${RH_CACHE}/tools/openapi-gen" --logtostderr \
      -i "$dirs" \
      -p k8s.io/kubernetes/pkg/generated/openapi \
      -O zz_generated.openapi \
      -h vendor/k8s.io/code-generator/hack/boilerplate.go.txt \
      -r "${RH_CACHE}/openapi-violations.report") >>"$log" 2>&1 ||
      rh_die "openapi-gen failed (see ${log})"
    diff "${RH_CACHE}/openapi-violations.report" "${k8s}/api/api-rules/violation_exceptions.list" >>"$log" 2>&1 ||
      rh_die "openapi-gen's API-rule report differs from api/api-rules/violation_exceptions.list (wrong input set? see ${log})"
    [[ -s "$openapi" ]] || rh_die "openapi-gen wrote no ${openapi}"
  fi

  # 4. The binaries. The version is stamped as upstream's release build
  # does (else /version says v0.0.0 and clients warn about the skew).
  local ld=() p
  for p in k8s.io/kubernetes/vendor/k8s.io/component-base/version k8s.io/kubernetes/vendor/k8s.io/client-go/pkg/version; do
    ld+=("-X '${p}.gitVersion=${RH_K8S_VERSION}'" "-X '${p}.gitMajor=1'" "-X '${p}.gitMinor=20'"
      "-X '${p}.gitCommit=${RH_K8S_COMMIT}'" "-X '${p}.gitTreeState=clean'"
      "-X '${p}.buildDate=2021-01-13T13:20:00Z'")
  done
  local b started
  for b in kube-controller-manager kube-apiserver; do
    [[ -x "${RH_CACHE}/bin/${b}" ]] && "${RH_CACHE}/bin/${b}" --version 2>/dev/null | grep -q "${RH_K8S_VERSION}\$" && continue
    started=$SECONDS
    rh_log "build: go build ./cmd/${b} (log: ${log})"
    # `go build -v` names each package as it compiles it: report the count
    # every minute (the first build compiles about 1,700 packages).
    local glog="${RH_CACHE}/build-${b}.log" pid rc
    (cd "$k8s" && exec "$RH_GO" build -v -o "${RH_CACHE}/bin/${b}.tmp" -ldflags "-s -w ${ld[*]}" "./cmd/${b}") >"$glog" 2>&1 &
    pid=$!
    while kill -0 "$pid" 2>/dev/null; do
      for _ in $(seq 60); do
        kill -0 "$pid" 2>/dev/null || break
        sleep 1
      done
      kill -0 "$pid" 2>/dev/null &&
        rh_log "build: ${b}: $(wc -l <"$glog") packages compiled after $((SECONDS - started)) s (last: $(tail -n1 "$glog"))"
    done
    rc=0
    wait "$pid" || rc=$?
    cat "$glog" >>"$log"
    ((rc == 0)) || {
      tail -n 20 "$glog" >&2
      rh_die "go build ./cmd/${b} failed (see ${log})"
    }
    mv -f "${RH_CACHE}/bin/${b}.tmp" "${RH_CACHE}/bin/${b}"
    rh_log "build: ${b} built in $((SECONDS - started)) s"
  done
  rh_build_done || rh_die "the built binaries do not report Kubernetes ${RH_K8S_VERSION}"
  rh_log "build: done ($("${RH_CACHE}/bin/kube-apiserver" --version))"
}
