# shellcheck shell=bash
# `test`: the checks against the running real host (`up` first). Each prints
# `ok - <what>` or `not ok - <what>` followed by its evidence as `#` lines;
# the last line is `N passed, N failed`. Returns non-zero when any failed.
# Sourced by hack/real-host.sh.
#
# Names are suffixed with a per-run tag so `test` can run more than once
# against one `up` (except `team-a`, which check e needs by that name).

PREFIX_PATH=/apis/federation.skein.io/v1alpha1/federations/default/proxy

# ---------------------------------------------------------------- reporting
# rh_result ok|not_ok WHAT [EVIDENCE...]
rh_result() {
  local status="$1" what="$2"
  shift 2
  if [[ "$status" == ok ]]; then
    echo "ok - ${what}" | tee -a "${RH_TEST}/results"
  else
    echo "not ok - ${what}" | tee -a "${RH_TEST}/results"
  fi
  local line
  for line in "$@"; do
    # shellcheck disable=SC2001
    [[ -n "$line" ]] && sed 's/^/#   /' <<<"$line"
  done
  return 0
}

# rh_check FUNC WHAT: run one check in a subshell with errexit on, so that
# an unexpected failure ends that check only and is reported as not ok.
rh_check() {
  local before after rc
  before="$(wc -l <"${RH_TEST}/results")"
  set +e
  (
    set -e
    "$1"
  )
  rc=$?
  set -e
  after="$(wc -l <"${RH_TEST}/results")"
  if ((rc != 0)) && ((after == before)); then
    rh_result not_ok "$2" "the check itself failed (exit ${rc}); see the output above"
  fi
}

# fk KUBECTL KUBECONFIG ARGS...: a short request through a kubeconfig.
fk() {
  local k="$1" cfg="$2"
  shift 2
  "$k" --kubeconfig "$cfg" --request-timeout=30s "$@"
}

# until_ok DEADLINE CMD...: retry CMD every second until it succeeds.
until_ok() { rh_wait "$1" "" "${@:2}"; }

# kv K: "1.35" or "1.32", the client's minor version, for names and output.
kv() { [[ "$1" == "$K" ]] && echo 1.35 || echo 1.32; }

# ---------------------------------------------------------------- a
# The host's discovery of federation.skein.io: at the root path Skein shows
# the host only the cluster-scoped `federations` and its subresources.
check_a_discovery() {
  local res raw names want='["federations","federations/proxy","federations/status"]'
  res="$(hk api-resources --api-group=federation.skein.io --no-headers 2>&1)" || true
  raw="$(hk get --raw /apis/federation.skein.io/v1alpha1 2>&1)" || true
  names="$(jq -c '[.resources[].name] | sort' <<<"$raw" 2>/dev/null)" || names="(not JSON)"
  local rows
  rows="$(awk 'NF' <<<"$res" | wc -l)"
  if [[ "$rows" == 1 ]] && awk '$1 == "federations" && $(NF-1) == "false" { found = 1 } END { exit !found }' <<<"$res"; then
    rh_result ok "a1: host kubectl api-resources --api-group=federation.skein.io lists only federations (cluster-scoped)" "$res"
  else
    rh_result not_ok "a1: host kubectl api-resources --api-group=federation.skein.io lists only federations (cluster-scoped)" \
      "got ${rows} rows:" "$(head -n 40 <<<"$res")"
  fi
  if [[ "$names" == "$want" ]] &&
    [[ "$(jq -r '.resources[] | select(.name == "federations") | .namespaced' <<<"$raw")" == false ]]; then
    rh_result ok "a2: GET /apis/federation.skein.io/v1alpha1 on the host lists federations, federations/proxy, federations/status" \
      "$(jq -c '[.resources[] | {name, namespaced, verbs}]' <<<"$raw")"
  else
    rh_result not_ok "a2: GET /apis/federation.skein.io/v1alpha1 on the host lists federations, federations/proxy, federations/status" \
      "want ${want}, got $(head -c 3000 <<<"$names")"
  fi
  local out
  out="$(hk get federations 2>&1)" || true
  if awk 'NR > 1 && $1 == "default" { found = 1 } END { exit !found }' <<<"$out"; then
    rh_result ok "a3: kubectl get federations on the host (admin) shows default" "$out"
  else
    rh_result not_ok "a3: kubectl get federations on the host (admin) shows default" "$out"
  fi
}

# ---------------------------------------------------------------- b
# The host's namespace controller deletes a namespace (it discovers and
# empties every namespaced resource of every group, Skein's included).
check_b_namespace() {
  local ns="rh-nsdel-${RH_T}" t0
  hk create namespace "$ns" >/dev/null
  hk -n "$ns" create configmap c --from-literal=a=1 >/dev/null
  t0=$SECONDS
  hk delete namespace "$ns" --wait=false >/dev/null
  if until_ok 30 bash -c "! \"$K\" --kubeconfig \"${RH_RUN}/host-admin.kubeconfig\" get namespace \"$ns\" >/dev/null 2>&1"; then
    rh_result ok "b: host namespace ${ns} with a ConfigMap deleted" "gone after $((SECONDS - t0)) s"
  else
    rh_result not_ok "b: host namespace ${ns} with a ConfigMap deleted" "still there after 30 s:" \
      "$(hk get namespace "$ns" -o jsonpath='{.status}' 2>&1)"
  fi
}

# ---------------------------------------------------------------- c
# The host's garbage collector (which also discovers every group) deletes a
# dependent whose owner is gone.
check_c_gc() {
  local ns="rh-gc-${RH_T}" uid t0
  hk create namespace "$ns" >/dev/null
  hk -n "$ns" create configmap owner >/dev/null
  uid="$(hk -n "$ns" get configmap owner -o jsonpath='{.metadata.uid}')"
  hk -n "$ns" apply -f - >/dev/null <<EOF
apiVersion: v1
kind: ConfigMap
metadata:
  name: dependent
  ownerReferences:
  - apiVersion: v1
    kind: ConfigMap
    name: owner
    uid: ${uid}
EOF
  t0=$SECONDS
  hk -n "$ns" delete configmap owner >/dev/null
  if until_ok 60 bash -c "! \"$K\" --kubeconfig \"${RH_RUN}/host-admin.kubeconfig\" -n \"$ns\" get configmap dependent >/dev/null 2>&1"; then
    rh_result ok "c: host GC deleted ConfigMap dependent of deleted owner (uid ${uid})" "gone after $((SECONDS - t0)) s"
  else
    rh_result not_ok "c: host GC deleted ConfigMap dependent of deleted owner (uid ${uid})" "still there after 60 s:" \
      "$(hk -n "$ns" get configmap dependent -o yaml 2>&1)" \
      "garbage collector log lines:" "$(grep -i 'garbage' "${RH_RUN}/logs/kube-controller-manager.log" | tail -n 15)"
  fi
  hk delete namespace "$ns" --wait=false >/dev/null 2>&1 || true
}

# ---------------------------------------------------------------- d
# kube-controller-manager never gets a 403 from federation.skein.io (its
# namespace controller and garbage collector discover and list the group).
check_d_kcm_log() {
  local lines others what="d: kube-controller-manager's log has no 'forbidden' line and no warning or error about federation.skein.io"
  local log="${RH_RUN}/logs/kube-controller-manager.log"
  lines="$(grep -i 'forbidden' "$log" | grep 'federation.skein.io' || true)"
  # Any other complaint about the group counts too: e.g. its metadata
  # informers' watches failing to decode what Skein sends.
  others="$(grep -iv 'forbidden' "$log" | grep -E '^[EW].*federation\.skein\.io' || true)"
  if [[ -z "$lines" && -z "$others" ]]; then
    rh_result ok "$what" "$(wc -l <"$log") lines checked"
  else
    rh_result not_ok "$what" \
      "forbidden: $(grep -c . <<<"$lines" || true) lines; other warnings/errors: $(grep -c . <<<"$others" || true); the first 10 of each:" \
      "$(head -n 10 <<<"$lines" | cut -c1-600)" "$(head -n 10 <<<"$others" | cut -c1-600)"
  fi
}

# ---------------------------------------------------------------- e
# A host namespace that shares its name with a Skein namespace: deleting it
# on the host must not touch Skein's objects (the host's namespace
# controller must not reach into Skein through the root path).
e_uids() {
  local what
  for what in "configmap cm-a" "deployment web" "placements"; do
    # shellcheck disable=SC2086
    fk "$K" "$F" -n team-a get $what -o json |
      jq -r 'if .kind | endswith("List") then .items[] else . end
             | "\(.kind)/\(.metadata.name) uid=\(.metadata.uid) deletionTimestamp=\(.metadata.deletionTimestamp // "none")"'
  done
}
check_e_protection() {
  local what="e: deleting host namespace team-a leaves Skein's team-a ConfigMap, Deployment and Placement alone"
  if fk "$K" "$F" get namespace team-a >/dev/null 2>&1; then
    # A previous test run against this `up`: start over.
    fk "$K" "$F" delete namespace team-a --timeout=60s >/dev/null 2>&1 || true
  fi
  fk "$K" "$F" create namespace team-a >/dev/null
  fk "$K" "$F" -n team-a create configmap cm-a --from-literal=team=a >/dev/null
  fk "$K" "$F" -n team-a create deployment web --image=web:1 >/dev/null
  if ! until_ok 60 bash -c "[[ \"\$(\"$K\" --kubeconfig \"$F\" -n team-a get placements -o json | jq '.items | length')\" -ge 1 ]]"; then
    rh_result not_ok "$what" "no Placement appeared in Skein's team-a within 60 s:" \
      "$(fk "$K" "$F" -n team-a get placements 2>&1)" "$(fk "$K" "$F" get clusters 2>&1)"
    return 0
  fi
  local before after t0
  before="$(e_uids)"
  t0=$SECONDS
  hk create namespace team-a >/dev/null
  hk delete namespace team-a --wait=false >/dev/null
  if ! until_ok 60 bash -c "! \"$K\" --kubeconfig \"${RH_RUN}/host-admin.kubeconfig\" get namespace team-a >/dev/null 2>&1"; then
    rh_result not_ok "$what" "host namespace team-a not gone after 60 s:" "$(hk get namespace team-a -o jsonpath='{.status}' 2>&1)"
    return 0
  fi
  local gone=$((SECONDS - t0))
  # Give a misdirected deletion a moment to show.
  sleep 3
  after="$(e_uids 2>&1)" || true
  if [[ "$before" == "$after" ]] && ! grep -q 'deletionTimestamp=[^n]' <<<"$after"; then
    rh_result ok "$what" "host team-a gone after ${gone} s; Skein's objects unchanged:" "$after"
  else
    rh_result not_ok "$what" "host team-a gone after ${gone} s; before:" "$before" "after:" "$after"
  fi
}

# ---------------------------------------------------------------- f
# A host ServiceAccount with only federations/proxy on the host.
check_f_reader() {
  local ns="rh-reader-${RH_T}" user
  user="system:serviceaccount:${ns}:reader"
  hk create namespace "$ns" >/dev/null
  hk -n "$ns" create serviceaccount reader >/dev/null
  hk apply -f - >/dev/null <<EOF
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRole
metadata: {name: rh-federation-proxy}
rules:
- apiGroups: [federation.skein.io]
  resources: [federations/proxy]
  verbs: ["*"]
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRoleBinding
metadata: {name: rh-federation-proxy-${ns}}
roleRef: {apiGroup: rbac.authorization.k8s.io, kind: ClusterRole, name: rh-federation-proxy}
subjects:
- {kind: ServiceAccount, namespace: ${ns}, name: reader}
EOF
  local token
  token="$(rh_sa_token "$ns" reader)"
  READER_HOST="${RH_TEST}/reader-host.kubeconfig"
  READER_FED="${RH_TEST}/reader-federation.kubeconfig"
  rh_kubeconfig "$READER_HOST" "$RH_HOST_URL" "${RH_RUN}/pki/ca.crt" token "$token"
  "$SKEIN_BIN" kubeconfig --aggregated --host-kubeconfig "$READER_HOST" >"$READER_FED"
  echo "$ns" >"${RH_TEST}/reader-ns"

  # f1: whoami through the prefix, both kubectl versions.
  local k who evidence=() bad=0
  for k in "$K" "$K32"; do
    who="$(fk "$k" "$READER_FED" auth whoami -o jsonpath='{.status.userInfo.username}' 2>&1)" || true
    evidence+=("kubectl $(kv "$k") auth whoami: ${who}")
    [[ "$who" == "$user" ]] || bad=1
  done
  if ((bad == 0)); then
    rh_result ok "f1: reader's kubectl auth whoami through the prefix shows ${user}" "${evidence[@]}"
  else
    rh_result not_ok "f1: reader's kubectl auth whoami through the prefix shows ${user}" "${evidence[@]}"
  fi

  # f2: Skein's own RBAC: nothing is bound to reader inside Skein.
  local want="Error from server (Forbidden): configmaps is forbidden: User \"${user}\" cannot list resource \"configmaps\" in API group \"\" in the namespace \"default\""
  local err
  evidence=()
  bad=0
  for k in "$K" "$K32"; do
    if err="$(fk "$k" "$READER_FED" get configmaps -n default 2>&1)"; then
      bad=1
      evidence+=("kubectl $(kv "$k"): succeeded: ${err}")
    else
      evidence+=("kubectl $(kv "$k"): ${err}")
      [[ "$err" == "$want" ]] || bad=1
    fi
  done
  if ((bad == 0)); then
    rh_result ok "f2: reader's kubectl get configmaps -n default through the prefix is forbidden with upstream's message" "${evidence[@]}"
  else
    rh_result not_ok "f2: reader's kubectl get configmaps -n default through the prefix is forbidden with upstream's message" \
      "want: ${want}" "${evidence[@]}"
  fi

  # f3: at the root path, the host (and Skein's delegated review) says no.
  # (kube-apiserver authorizes a request to an aggregated group itself
  # before proxying it, so the 403 may come from the host without Skein
  # seeing the request; the evidence says which. f4 shows the delegated
  # review's answer once the host allows.)
  local seen
  if err="$(fk "$K" "$READER_HOST" get federations 2>&1)"; then
    rh_result not_ok "f3: reader's kubectl get federations on the host is forbidden (403 naming federations)" "succeeded: ${err}"
  else
    seen="$(sed 's/\x1b\[[0-9;]*m//g' "${RH_RUN}/logs/skein.log" |
      grep -F "user=\"${user}\"" | grep -c 'URI="/apis/federation.skein.io/v1alpha1/federations?' || true)"
    seen="Skein's access log has ${seen} root-path requests of ${user} to federations"
    if grep -q 'Forbidden' <<<"$err" && grep -q 'federations' <<<"$err"; then
      rh_result ok "f3: reader's kubectl get federations on the host is forbidden (403 naming federations)" "$err" "$seen"
    else
      rh_result not_ok "f3: reader's kubectl get federations on the host is forbidden (403 naming federations)" "$err" "$seen"
    fi
  fi

  # f4: grant list on federations on the host; it works within ~20 s
  # (Skein caches a denied review for 10 s).
  hk apply -f - >/dev/null <<EOF
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRole
metadata: {name: rh-federation-list}
rules:
- apiGroups: [federation.skein.io]
  resources: [federations]
  verbs: [list]
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRoleBinding
metadata: {name: rh-federation-list-${ns}}
roleRef: {apiGroup: rbac.authorization.k8s.io, kind: ClusterRole, name: rh-federation-list}
subjects:
- {kind: ServiceAccount, namespace: ${ns}, name: reader}
EOF
  local t0=$SECONDS
  if until_ok 25 "$K" --kubeconfig "$READER_HOST" --request-timeout=10s get federations; then
    rh_result ok "f4: after granting list on federations on the host, reader's kubectl get federations succeeds" \
      "after $((SECONDS - t0)) s:" "$(fk "$K" "$READER_HOST" get federations 2>&1)" \
      "Skein's access log: $(sed 's/\x1b\[[0-9;]*m//g' "${RH_RUN}/logs/skein.log" | grep -F "user=\"${user}\"" |
        grep 'URI="/apis/federation.skein.io/v1alpha1/federations?' | tail -n1 | grep -o 'verb=.*' | cut -c1-300)"
  else
    rh_result not_ok "f4: after granting list on federations on the host, reader's kubectl get federations succeeds" \
      "still failing after 25 s:" "$(fk "$K" "$READER_HOST" get federations 2>&1)"
  fi
}

# ---------------------------------------------------------------- g
# The aggregated flows through the admin's prefix kubeconfig.
check_g_kubectl() {
  local k="$1" v ns out bad evidence
  v="$(kv "$k")"
  ns="rh-flows-${v/./}-${RH_T}"

  # discovery
  out="$(fk "$k" "$F" api-resources 2>&1)" || true
  if awk '$1 == "deployments" { d = 1 } $1 == "configmaps" { c = 1 } END { exit !(d && c) }' <<<"$out"; then
    rh_result ok "g: kubectl ${v} api-resources through the prefix lists deployments, configmaps, …" \
      "$(wc -l <<<"$out") lines; $(grep -E '^(configmaps|deployments|namespaces|placements) ' <<<"$out" | awk '{print $1, $(NF-2)}' | paste -sd' ')"
  else
    rh_result not_ok "g: kubectl ${v} api-resources through the prefix lists deployments, configmaps, …" "$(head -n 20 <<<"$out")"
  fi

  fk "$k" "$F" create namespace "$ns" >/dev/null
  # create / get / replace / delete
  bad=0
  evidence=()
  out="$(fk "$k" "$F" -n "$ns" create configmap crud --from-literal=v=1 2>&1)" || bad=1
  evidence+=("create: ${out}")
  out="$(fk "$k" "$F" -n "$ns" get configmap crud -o jsonpath='{.data.v}' 2>&1)" || bad=1
  evidence+=("get .data.v: ${out}")
  [[ "$out" == 1 ]] || bad=1
  out="$(fk "$k" "$F" -n "$ns" get configmap crud -o json | jq '.data.v = "2"' | fk "$k" "$F" replace -f - 2>&1)" || bad=1
  evidence+=("replace: ${out}")
  out="$(fk "$k" "$F" -n "$ns" get configmap crud -o jsonpath='{.data.v}' 2>&1)" || bad=1
  evidence+=("get .data.v: ${out}")
  [[ "$out" == 2 ]] || bad=1
  out="$(fk "$k" "$F" -n "$ns" delete configmap crud 2>&1)" || bad=1
  evidence+=("delete: ${out}")
  out="$(fk "$k" "$F" -n "$ns" get configmap crud 2>&1)" && bad=1
  evidence+=("get after delete: ${out}")
  grep -q NotFound <<<"$out" || bad=1
  if ((bad == 0)); then
    rh_result ok "g: kubectl ${v} create/get/replace/delete a ConfigMap through the prefix" "${evidence[@]}"
  else
    rh_result not_ok "g: kubectl ${v} create/get/replace/delete a ConfigMap through the prefix" "${evidence[@]}"
  fi

  # server-side apply twice: the second is a no-op (same resourceVersion)
  local manifest="${RH_TEST}/ssa-${v}.yaml" rv1 rv2 out1 out2
  cat >"$manifest" <<EOF
apiVersion: v1
kind: ConfigMap
metadata:
  name: ssa
  namespace: ${ns}
data:
  v: "1"
EOF
  bad=0
  out1="$(fk "$k" "$F" apply --server-side -f "$manifest" 2>&1)" || bad=1
  rv1="$(fk "$k" "$F" -n "$ns" get configmap ssa -o jsonpath='{.metadata.resourceVersion}' 2>&1)" || bad=1
  out2="$(fk "$k" "$F" apply --server-side -f "$manifest" 2>&1)" || bad=1
  rv2="$(fk "$k" "$F" -n "$ns" get configmap ssa -o jsonpath='{.metadata.resourceVersion}' 2>&1)" || bad=1
  [[ -n "$rv1" && "$rv1" == "$rv2" ]] || bad=1
  if ((bad == 0)); then
    rh_result ok "g: kubectl ${v} apply --server-side twice through the prefix (second unchanged, no conflict)" \
      "first: ${out1} (resourceVersion ${rv1})" "second: ${out2} (resourceVersion ${rv2})"
  else
    rh_result not_ok "g: kubectl ${v} apply --server-side twice through the prefix (second unchanged, no conflict)" \
      "first: ${out1} (resourceVersion ${rv1})" "second: ${out2} (resourceVersion ${rv2})"
  fi
}

# helm install of the podinfo fixture through the prefix. The member
# simulates workloads and the federation reports the member's status back,
# so --wait is tried first; helm's own verdict is the evidence either way.
check_g_helm() {
  local h="$1" v="$2" release="podinfo-h${2%%.*}" ns out
  ns="rh-helm${2%%.*}-${RH_T}"
  # The shared fixture beside the repository, else the repository's copy.
  local chart="${ROOT}/../shared/fixtures/charts/podinfo"
  [[ -d "$chart" ]] || chart="${ROOT}/test/fixtures/podinfo"
  [[ -d "$chart" ]] || {
    rh_result not_ok "g: helm ${v} install ${release}" "no chart at ${chart}"
    return 0
  }
  if out="$("$h" --kubeconfig "$F" install "$release" "$chart" -n "$ns" --create-namespace --wait --timeout 120s 2>&1)"; then
    local status
    status="$("$h" --kubeconfig "$F" status "$release" -n "$ns" -o json | jq -r .info.status)"
    if [[ "$status" == deployed ]]; then
      rh_result ok "g: helm ${v} install --wait ${release} (podinfo) into Skein namespace ${ns}; helm status: deployed" \
        "$(head -n 6 <<<"$out")" \
        "$(fk "$K" "$F" -n "$ns" get deployment "$release" -o jsonpath='{.metadata.name} ready={.status.readyReplicas}/{.spec.replicas}' 2>&1)"
    else
      rh_result not_ok "g: helm ${v} install --wait ${release} (podinfo) into Skein namespace ${ns}; helm status: deployed" \
        "helm status: ${status}" "$out"
    fi
  else
    rh_result not_ok "g: helm ${v} install --wait ${release} (podinfo) into Skein namespace ${ns}; helm status: deployed" \
      "$out" "$(fk "$K" "$F" -n "$ns" get deployment -o wide 2>&1)" \
      "$(fk "$K" "$F" -n "$ns" get deployment "$release" -o jsonpath='{.status}' 2>&1)"
  fi
}

check_g_helm_list() {
  local h out bad=0 evidence=()
  for h in "$H4" "$H3"; do
    out="$("$h" --kubeconfig "$F" list -A 2>&1)" || bad=1
    evidence+=("helm $("$h" version --template '{{.Version}}') list -A:" "$out")
    # (helm separates its columns with tabs and spaces)
    awk '$1 == "podinfo-h4" && /[[:space:]]deployed[[:space:]]/ { a = 1 }
         $1 == "podinfo-h3" && /[[:space:]]deployed[[:space:]]/ { b = 1 } END { exit !(a && b) }' <<<"$out" || bad=1
  done
  if ((bad == 0)); then
    rh_result ok "g: helm 4 and helm 3 list -A through the prefix show both podinfo releases deployed" "${evidence[@]}"
  else
    rh_result not_ok "g: helm 4 and helm 3 list -A through the prefix show both podinfo releases deployed" "${evidence[@]}"
  fi
}

# The 5-minute watch runs in the background from the start of `test`:
# one `kubectl get configmaps --watch -o name` per kubectl version, objects
# created at ~5 s, ~150 s and ~290 s; at 300 s both watches must still be
# running and have printed all three.
G_WATCH_SECONDS=300
watch_start() {
  local ns="rh-watch-${RH_T}" k v
  fk "$K" "$F" create namespace "$ns" >/dev/null
  for k in "$K" "$K32"; do
    v="$(kv "$k")"
    "$k" --kubeconfig "$F" -n "$ns" get configmaps --watch -o name \
      >"${RH_TEST}/watch-${v}.out" 2>"${RH_TEST}/watch-${v}.err" </dev/null &
    echo $! >"${RH_RUN}/pids/test-watch-${v}.pid"
    echo kubectl >"${RH_RUN}/pids/test-watch-${v}.cmd"
  done
  (
    set +e
    t0=$SECONDS
    for spec in 5:w-0 150:w-1 290:w-2; do
      at="${spec%%:*}"
      while ((SECONDS - t0 < at)); do sleep 1; done
      "$K" --kubeconfig "$F" --request-timeout=30s -n "$ns" create configmap "${spec#*:}" \
        >>"${RH_TEST}/watch-creates.log" 2>&1
      echo "created ${spec#*:} at $((SECONDS - t0)) s (exit $?)" >>"${RH_TEST}/watch-creates.log"
    done
    while ((SECONDS - t0 < G_WATCH_SECONDS)); do sleep 1; done
    # Alive at 5 min?
    for v in 1.35 1.32; do
      if kill -0 "$(cat "${RH_RUN}/pids/test-watch-${v}.pid")" 2>/dev/null; then
        echo "alive" >"${RH_TEST}/watch-${v}.alive"
      else
        echo "exited" >"${RH_TEST}/watch-${v}.alive"
      fi
    done
  ) &
  echo $! >"${RH_RUN}/pids/test-watch-driver.pid"
  echo bash >"${RH_RUN}/pids/test-watch-driver.cmd"
}

watch_finish() {
  # Not started (watch_start's failure is already reported).
  [[ -f "${RH_RUN}/pids/test-watch-driver.pid" ]] || return 0
  local left=$((G_WATCH_SECONDS + 30 - (SECONDS - WATCH_T0)))
  ((left > 0)) && rh_log "test: waiting up to ${left} s for the 5-minute watch"
  local pid
  pid="$(cat "${RH_RUN}/pids/test-watch-driver.pid")"
  while kill -0 "$pid" 2>/dev/null && ((SECONDS - WATCH_T0 < G_WATCH_SECONDS + 60)); do sleep 1; done
  local v bad alive out
  for v in 1.35 1.32; do
    bad=0
    alive="$(cat "${RH_TEST}/watch-${v}.alive" 2>/dev/null || echo unknown)"
    [[ "$alive" == alive ]] || bad=1
    out="$(cat "${RH_TEST}/watch-${v}.out")"
    for n in w-0 w-1 w-2; do
      grep -qx "configmap/${n}" <<<"$out" || bad=1
    done
    if ((bad == 0)); then
      rh_result ok "g: kubectl ${v} get configmaps --watch through the prefix held 5 min (objects at ~5 s, ~150 s, ~290 s all seen; still running)" \
        "$(paste -sd' ' <<<"$out")" "$(grep '^created' "${RH_TEST}/watch-creates.log" | paste -sd';')"
    else
      rh_result not_ok "g: kubectl ${v} get configmaps --watch through the prefix held 5 min (objects at ~5 s, ~150 s, ~290 s all seen; still running)" \
        "process at 300 s: ${alive}" "stdout: $(paste -sd' ' <<<"$out")" "stderr: $(tail -n 5 "${RH_TEST}/watch-${v}.err")" \
        "$(cat "${RH_TEST}/watch-creates.log")"
    fi
    rh_stop "test-watch-${v}" >/dev/null 2>&1 || true
  done
  rm -f "${RH_RUN}/pids/test-watch-driver.pid"
}

# ---------------------------------------------------------------- h
# Forged front-proxy headers.
check_h_forged() {
  local code body
  # h1: straight to Skein without the front-proxy client certificate.
  body="${RH_TEST}/h1.json"
  code="$(curl -sS -o "$body" -w '%{http_code}' --cacert "${RH_RUN}/pki/skein-ca.crt" \
    -H 'X-Remote-User: admin' -H 'X-Remote-Group: system:masters' \
    "https://${RH_SKEIN_IP}:6443/api/v1/namespaces" 2>&1)" || true
  if [[ "$code" == 401 ]]; then
    rh_result ok "h1: X-Remote-User: admin / X-Remote-Group: system:masters straight to Skein without a client cert gets 401" \
      "HTTP ${code}: $(head -c 300 "$body")"
  else
    rh_result not_ok "h1: X-Remote-User: admin / X-Remote-Group: system:masters straight to Skein without a client cert gets 401" \
      "HTTP ${code}: $(head -c 300 "$body" 2>/dev/null)"
  fi

  # h2: the same headers sent to the host by reader (federations/proxy on
  # the host, nothing in Skein) and by a ServiceAccount with no rights at
  # all: the host replaces them; nobody becomes admin.
  local rns evidence=() bad=0 token nobody
  rns="$(cat "${RH_TEST}/reader-ns" 2>/dev/null)" || rns=""
  if [[ -z "$rns" ]]; then
    rh_result not_ok "h2: forged headers through the host give no elevation" "check f did not create reader"
    return 0
  fi
  token="$(rh_sa_token "$rns" reader)"
  hk -n "$rns" create serviceaccount nobody >/dev/null
  nobody="$(rh_sa_token "$rns" nobody)"
  local who tok
  for who in reader nobody; do
    [[ "$who" == reader ]] && tok="$token" || tok="$nobody"
    body="${RH_TEST}/h2-${who}.json"
    code="$(curl -sS -o "$body" -w '%{http_code}' --cacert "${RH_RUN}/pki/ca.crt" \
      -H "Authorization: Bearer ${tok}" -H 'X-Remote-User: admin' -H 'X-Remote-Group: system:masters' \
      "${RH_HOST_URL}${PREFIX_PATH}/api/v1/namespaces/default/configmaps" 2>&1)" || true
    evidence+=("${who}: HTTP ${code}: $(jq -r '.message // .' "$body" 2>/dev/null | head -c 400)")
    [[ "$code" == 403 ]] || bad=1
    grep -q "system:serviceaccount:${rns}:${who}" "$body" || bad=1
  done
  if ((bad == 0)); then
    rh_result ok "h2: forged X-Remote-User/Group through the host give no elevation (403 as the caller)" "${evidence[@]}"
  else
    rh_result not_ok "h2: forged X-Remote-User/Group through the host give no elevation (403 as the caller)" "${evidence[@]}"
  fi
}

# ---------------------------------------------------------------- main
rh_test() {
  [[ -s "${RH_RUN}/federation-admin.kubeconfig" ]] || rh_die "no ${RH_RUN}/federation-admin.kubeconfig: run up first"
  rh_alive skein || rh_die "Skein is not running (pid file ${RH_RUN}/pids/skein.pid): run up first"
  RH_T="$(openssl rand -hex 2)"
  RH_TEST="${RH_RUN}/test-${RH_T}"
  mkdir -p "$RH_TEST" "${RH_RUN}/pids"
  : >"${RH_TEST}/results"
  F="${RH_RUN}/federation-admin.kubeconfig"
  local started=$SECONDS
  rh_log "test: run ${RH_T}, files in ${RH_TEST}"
  echo "# host: kube-apiserver $(hk get --raw /version | jq -r .gitVersion) at ${RH_HOST_URL};" \
    "Skein: $("$SKEIN_BIN" --version 2>&1) (${SKEIN_BIN})"
  echo "# registration objects applied from the chart's rendering (helm template charts/skein --kube-version 1.33; the chart cannot install on v1.20):" \
    "$(jq -r '[.items[] | .kind + " " + .metadata.name] | join(", ")' "${RH_RUN}/chart/applied.json" 2>/dev/null)" \
    "(Service without selector) + manual Endpoints -> ${RH_SKEIN_IP}:6443"

  WATCH_T0=$SECONDS
  rh_check watch_start "g: start the 5-minute watches"
  rh_check check_a_discovery "a: host discovery of federation.skein.io"
  rh_check check_b_namespace "b: host namespace deletion"
  rh_check check_c_gc "c: host garbage collection"
  rh_check check_e_protection "e: Skein namespace protection"
  rh_check check_f_reader "f: host ServiceAccount reader"
  rh_check "check_g_kubectl_135" "g: kubectl 1.35 flows"
  rh_check "check_g_kubectl_132" "g: kubectl 1.32 flows"
  rh_check "check_g_helm4" "g: helm 4 install"
  rh_check "check_g_helm3" "g: helm 3 install"
  rh_check check_g_helm_list "g: helm list -A"
  rh_check check_h_forged "h: forged headers"
  watch_finish
  # Last, after b, c and e made the controller manager work.
  rh_check check_d_kcm_log "d: kube-controller-manager log"

  local passed failed
  passed="$(grep -c '^ok - ' "${RH_TEST}/results" || true)"
  failed="$(grep -c '^not ok - ' "${RH_TEST}/results" || true)"
  rh_log "test: took $((SECONDS - started)) s; logs in ${RH_RUN}/logs"
  echo "${passed} passed, ${failed} failed"
  ((failed == 0))
}
check_g_kubectl_135() { check_g_kubectl "$K"; }
check_g_kubectl_132() { check_g_kubectl "$K32"; }
check_g_helm4() { check_g_helm "$H4" 4.1; }
check_g_helm3() { check_g_helm "$H3" 3.17; }
