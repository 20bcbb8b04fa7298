# shellcheck shell=bash
# `up`: a v1.20.2 control plane (etcd, kube-apiserver, kube-controller-manager)
# in the root network namespace, and Skein (federation + one member) inside
# the network namespace ${RH_NETNS}, registered on that control plane through
# the APIService v1alpha1.federation.skein.io that charts/skein renders.
# Sourced by hack/real-host.sh; every piece of state goes in ${RH_RUN}.
#
#   root namespace                         netns ${RH_NETNS}
#   127.0.0.1:<free>  etcd
#   ${RH_HOST_IP}:6443 kube-apiserver  <-veth->  ${RH_SKEIN_IP}:6443 skein serve (federation)
#   kube-controller-manager                    ${RH_SKEIN_IP}:6444 skein serve --role=member
#
# Why a network namespace: kube-apiserver's aggregator refuses to proxy to
# loopback endpoints, so Skein must listen on another address; addresses
# in a /30 on a veth pair the script creates are the only non-loopback ones
# this machine may use. Nothing gets a default route: traffic cannot leave.

# ---------------------------------------------------------------- PKI
# rh_ca NAME CN: a self-signed CA, pki/NAME.{crt,key}.
rh_ca() {
  openssl req -x509 -newkey rsa:2048 -nodes -sha256 -days 3650 \
    -keyout "${RH_RUN}/pki/$1.key" -out "${RH_RUN}/pki/$1.crt" -subj "/CN=$2" \
    -addext "basicConstraints=critical,CA:TRUE" \
    -addext "keyUsage=critical,digitalSignature,keyEncipherment,keyCertSign" 2>/dev/null ||
    rh_die "openssl: cannot create CA $1"
}

# rh_cert NAME CA SUBJECT USAGE [SAN]: pki/NAME.{crt,key} signed by pki/CA;
# USAGE is serverAuth or clientAuth; SAN e.g. "DNS:a,IP:1.2.3.4".
rh_cert() {
  local name="$1" ca="$2" subj="$3" usage="$4" san="${5:-}" ext="${RH_RUN}/pki/$1.ext"
  {
    echo "basicConstraints=critical,CA:FALSE"
    echo "keyUsage=critical,digitalSignature,keyEncipherment"
    echo "extendedKeyUsage=${usage}"
    [[ -n "$san" ]] && echo "subjectAltName=${san}"
  } >"$ext"
  if ! openssl req -new -newkey rsa:2048 -nodes -sha256 -keyout "${RH_RUN}/pki/${name}.key" \
    -out "${RH_RUN}/pki/${name}.csr" -subj "$subj" 2>/dev/null ||
    ! openssl x509 -req -sha256 -days 3650 -in "${RH_RUN}/pki/${name}.csr" \
      -CA "${RH_RUN}/pki/${ca}.crt" -CAkey "${RH_RUN}/pki/${ca}.key" -CAcreateserial \
      -extfile "$ext" -out "${RH_RUN}/pki/${name}.crt" 2>/dev/null; then
    rh_die "openssl: cannot create certificate ${name}"
  fi
}

rh_up_pki() {
  mkdir -p "${RH_RUN}/pki"
  # The host's CA: apiserver serving cert, client certs (controller manager).
  rh_ca ca skein-real-host-ca
  rh_cert apiserver ca "/CN=kube-apiserver" serverAuth \
    "IP:127.0.0.1,IP:${RH_HOST_IP},DNS:kubernetes,DNS:kubernetes.default,DNS:kubernetes.default.svc,DNS:kubernetes.default.svc.cluster.local"
  rh_cert kube-controller-manager ca "/CN=system:kube-controller-manager" clientAuth
  # ServiceAccount token keys (the controller manager signs the legacy
  # token Secrets with the private key; the apiserver verifies with the
  # public one and signs TokenRequest tokens with the private one).
  if ! openssl genpkey -algorithm RSA -pkeyopt rsa_keygen_bits:2048 -out "${RH_RUN}/pki/sa.key" 2>/dev/null ||
    ! openssl pkey -in "${RH_RUN}/pki/sa.key" -pubout -out "${RH_RUN}/pki/sa.pub" 2>/dev/null; then
    rh_die "openssl: cannot create the service-account key pair"
  fi
  # The aggregator's identity towards Skein: a separate CA (published in
  # kube-system/extension-apiserver-authentication as
  # requestheader-client-ca-file) and a client cert with the one allowed CN.
  rh_ca front-proxy-ca skein-real-host-front-proxy-ca
  rh_cert front-proxy-client front-proxy-ca "/CN=front-proxy-client" clientAuth
  # Skein's serving certificate, from its own CA: the APIService's caBundle.
  # The aggregator dials the endpoint address but verifies the name
  # <service>.<namespace>.svc.
  rh_ca skein-ca skein-real-host-skein-ca
  rh_cert skein skein-ca "/CN=skein.skein-system.svc" serverAuth \
    "DNS:skein.skein-system.svc,DNS:skein.skein-system.svc.cluster.local,IP:${RH_SKEIN_IP}"
  # The admin: a static token (user admin, group system:masters).
  RH_ADMIN_TOKEN="$(openssl rand -hex 24)"
  printf '%s,admin,admin-uid,"system:masters"\n' "$RH_ADMIN_TOKEN" >"${RH_RUN}/tokens.csv"
  chmod 600 "${RH_RUN}/tokens.csv" "${RH_RUN}"/pki/*.key
}

# rh_kubeconfig FILE SERVER CA (token TOKEN | cert CRT KEY): a one-context kubeconfig.
rh_kubeconfig() {
  local file="$1" server="$2" ca="$3" kind="$4"
  {
    cat <<EOF
apiVersion: v1
kind: Config
clusters:
- name: real-host
  cluster:
    server: ${server}
    certificate-authority-data: $(base64 -w0 <"$ca")
contexts:
- name: real-host
  context: {cluster: real-host, user: user}
current-context: real-host
users:
- name: user
  user:
EOF
    if [[ "$kind" == token ]]; then
      echo "    token: $5"
    else
      echo "    client-certificate-data: $(base64 -w0 <"$5")"
      echo "    client-key-data: $(base64 -w0 <"$6")"
    fi
  } >"$file"
  chmod 600 "$file"
}

# ---------------------------------------------------------------- processes
# rh_start NAME [--netns] CMD...: start CMD in the background, in a session
# of its own (so a Ctrl-C to the script reaches it only through `down`),
# logging to logs/NAME.log, its PID in pids/NAME.pid.
rh_start() {
  local name="$1"
  shift
  local pre=()
  if [[ "$1" == --netns ]]; then
    shift
    # `ip netns exec` execs the command in the same process: $! is its PID.
    pre=(ip netns exec "$RH_NETNS")
  fi
  mkdir -p "${RH_RUN}/logs" "${RH_RUN}/pids"
  setsid "${pre[@]}" "$@" >"${RH_RUN}/logs/${name}.log" 2>&1 </dev/null &
  echo $! >"${RH_RUN}/pids/${name}.pid"
  # What the process runs, so that `down` never signals a reused PID.
  echo "${1##*/}" >"${RH_RUN}/pids/${name}.cmd"
  rh_log "up: started ${name} (pid $!, log ${RH_RUN}/logs/${name}.log)"
}

rh_alive() { [[ -f "${RH_RUN}/pids/$1.pid" ]] && kill -0 "$(cat "${RH_RUN}/pids/$1.pid")" 2>/dev/null; }

# rh_wait_up DEADLINE NAME WHAT CMD...: like rh_wait_or_die, but fails at
# once (with the log's tail) when process NAME died.
rh_wait_up() {
  local deadline=$((SECONDS + $1)) name="$2" what="$3"
  shift 3
  until "$@" >/dev/null 2>&1; do
    if ! rh_alive "$name"; then
      tail -n 30 "${RH_RUN}/logs/${name}.log" >&2 || true
      rh_die "${name} exited while waiting for ${what} (log: ${RH_RUN}/logs/${name}.log)"
    fi
    if ((SECONDS >= deadline)); then
      tail -n 30 "${RH_RUN}/logs/${name}.log" >&2 || true
      rh_die "timed out waiting for ${what} (log: ${RH_RUN}/logs/${name}.log)"
    fi
    sleep 1
  done
}

# rh_free_port: a TCP port nothing listens on in the root namespace.
rh_free_port() {
  local p
  for _ in $(seq 200); do
    p=$((20000 + RANDOM % 20000))
    [[ -z "$(ss -Hltn "sport = :${p}")" ]] && [[ " ${RH_USED_PORTS:-} " != *" ${p} "* ]] && {
      RH_USED_PORTS="${RH_USED_PORTS:-} ${p}"
      echo "$p"
      return 0
    }
  done
  rh_die "no free loopback port found"
}

# ---------------------------------------------------------------- network
rh_up_netns() {
  ip netns add "$RH_NETNS"
  ip link add "$RH_VETH_HOST" type veth peer name "$RH_VETH_NS" netns "$RH_NETNS"
  ip addr add "${RH_HOST_IP}/30" dev "$RH_VETH_HOST"
  ip link set "$RH_VETH_HOST" up
  ip -n "$RH_NETNS" addr add "${RH_SKEIN_IP}/30" dev "$RH_VETH_NS"
  ip -n "$RH_NETNS" link set "$RH_VETH_NS" up
  ip -n "$RH_NETNS" link set lo up
  rh_wait_or_die 10 "the veth pair" ping -c1 -W1 -I "$RH_VETH_HOST" "$RH_SKEIN_IP"
  rh_log "up: netns ${RH_NETNS}: ${RH_VETH_HOST} ${RH_HOST_IP}/30 <-> ${RH_VETH_NS} ${RH_SKEIN_IP}/30"
}

# ---------------------------------------------------------------- host
rh_up_host() {
  local etcd_port etcd_peer
  etcd_port="$(rh_free_port)"
  etcd_peer="$(rh_free_port)"
  rh_start etcd etcd --name real-host --data-dir "${RH_RUN}/etcd" \
    --listen-client-urls "http://127.0.0.1:${etcd_port}" --advertise-client-urls "http://127.0.0.1:${etcd_port}" \
    --listen-peer-urls "http://127.0.0.1:${etcd_peer}" --initial-advertise-peer-urls "http://127.0.0.1:${etcd_peer}" \
    --initial-cluster "real-host=http://127.0.0.1:${etcd_peer}" --listen-metrics-urls "" \
    --log-outputs stderr
  rh_wait_up 30 etcd "etcd on 127.0.0.1:${etcd_port}" curl -fsS "http://127.0.0.1:${etcd_port}/health"

  local pki="${RH_RUN}/pki"
  # --bind-address: only the host end of the veth (reachable from the
  # netns and from the root namespace), nothing on the machine's other
  # interfaces. --insecure-port=0: v1.20 still opens 127.0.0.1:8080
  # otherwise. --enable-aggregator-routing: the aggregator dials the
  # Service's Endpoints instead of its ClusterIP (no kube-proxy here); the
  # cluster IP range is only bookkeeping, nothing dials it.
  rh_start kube-apiserver "${RH_CACHE}/bin/kube-apiserver" \
    --advertise-address="$RH_HOST_IP" --bind-address="$RH_HOST_IP" --secure-port="$RH_APISERVER_PORT" \
    --insecure-port=0 \
    --etcd-servers="http://127.0.0.1:${etcd_port}" \
    --tls-cert-file="${pki}/apiserver.crt" --tls-private-key-file="${pki}/apiserver.key" \
    --client-ca-file="${pki}/ca.crt" \
    --token-auth-file="${RH_RUN}/tokens.csv" \
    --authorization-mode=Node,RBAC \
    --service-account-key-file="${pki}/sa.pub" \
    --service-account-signing-key-file="${pki}/sa.key" \
    --service-account-issuer=https://kubernetes.default.svc.cluster.local \
    --service-cluster-ip-range=10.213.16.0/24 \
    --requestheader-client-ca-file="${pki}/front-proxy-ca.crt" \
    --requestheader-allowed-names=front-proxy-client \
    --requestheader-username-headers=X-Remote-User \
    --requestheader-group-headers=X-Remote-Group \
    --requestheader-extra-headers-prefix=X-Remote-Extra- \
    --proxy-client-cert-file="${pki}/front-proxy-client.crt" \
    --proxy-client-key-file="${pki}/front-proxy-client.key" \
    --enable-aggregator-routing=true \
    --v=2
  rh_kubeconfig "${RH_RUN}/host-admin.kubeconfig" "$RH_HOST_URL" "${pki}/ca.crt" token "$RH_ADMIN_TOKEN"
  rh_wait_up 120 kube-apiserver "kube-apiserver /readyz" \
    curl -fsS --cacert "${pki}/ca.crt" -H "Authorization: Bearer ${RH_ADMIN_TOKEN}" "${RH_HOST_URL}/readyz"
  rh_log "up: kube-apiserver ready at ${RH_HOST_URL} ($(hk get --raw /version | jq -r .gitVersion))"

  rh_kubeconfig "${RH_RUN}/kube-controller-manager.kubeconfig" "$RH_HOST_URL" "${pki}/ca.crt" \
    cert "${pki}/kube-controller-manager.crt" "${pki}/kube-controller-manager.key"
  # --controllers=*: every default controller, among them the namespace
  # controller and the garbage collector, which discover and list every
  # aggregated group (federation.skein.io included).
  # --use-service-account-credentials: each controller acts as its own
  # ServiceAccount (system:serviceaccount:kube-system:namespace-controller,
  # …:generic-garbage-collector), the identities Skein's delegated
  # authorization sees. --port/--secure-port=0: no serving, no ports.
  rh_start kube-controller-manager "${RH_CACHE}/bin/kube-controller-manager" \
    --kubeconfig="${RH_RUN}/kube-controller-manager.kubeconfig" \
    --controllers='*' --use-service-account-credentials=true \
    --service-account-private-key-file="${pki}/sa.key" --root-ca-file="${pki}/ca.crt" \
    --cluster-signing-cert-file="${pki}/ca.crt" --cluster-signing-key-file="${pki}/ca.key" \
    --leader-elect=false --port=0 --secure-port=0 --v=2
  # Ready when the token controller works: the default ServiceAccount in
  # `default` exists and has its legacy token Secret (a v1.20 cluster
  # creates one per ServiceAccount).
  rh_wait_up 120 kube-controller-manager "the controller manager's ServiceAccount token controller" \
    rh_sa_has_secret default default
  rh_log "up: kube-controller-manager running"
}

# hk ARGS...: kubectl 1.35 as the host admin.
hk() { "$K" --kubeconfig "${RH_RUN}/host-admin.kubeconfig" "$@"; }

# rh_sa_has_secret NS NAME: the ServiceAccount exists and lists a token Secret.
rh_sa_has_secret() { [[ -n "$(hk -n "$1" get sa "$2" -o jsonpath='{.secrets[0].name}' 2>/dev/null)" ]]; }

# rh_sa_token NS NAME: the legacy token of a ServiceAccount (its Secret,
# created by the controller manager's token controller).
rh_sa_token() {
  local secret=""
  rh_wait 60 "token Secret of $1/$2" rh_sa_has_secret "$1" "$2" ||
    rh_die "ServiceAccount $1/$2 got no token Secret"
  secret="$(hk -n "$1" get sa "$2" -o jsonpath='{.secrets[0].name}')"
  hk -n "$1" get secret "$secret" -o jsonpath='{.data.token}' | base64 -d
}

# ---------------------------------------------------------------- chart
# The registration objects come from the chart's own rendering: helm
# template with the serving certificate set (so the APIService's caBundle
# is Skein's CA). The chart itself cannot be installed on v1.20
# (kubeVersion >=1.27, policy/v1), so the objects are applied directly:
# ServiceAccount, ClusterRoleBinding (system:auth-delegator), RoleBinding
# (extension-apiserver-authentication-reader), Service and APIService. The
# Service loses its selector (there are no Pods: a selector-less Service
# keeps the manual Endpoints below).
rh_up_register() {
  hk create namespace skein-system >/dev/null
  local out="${RH_RUN}/chart"
  mkdir -p "$out"
  "$H4" template skein "${ROOT}/charts/skein" -n skein-system --kube-version 1.33 \
    --set-file tls.certificate="${RH_RUN}/pki/skein.crt" \
    --set-file tls.key="${RH_RUN}/pki/skein.key" \
    --set-file tls.ca="${RH_RUN}/pki/skein-ca.crt" \
    --show-only templates/serviceaccount.yaml --show-only templates/rbac.yaml \
    --show-only templates/service.yaml --show-only templates/apiservice.yaml \
    >"${out}/rendered.yaml" || rh_die "helm template charts/skein failed"
  # YAML -> JSON through the server's schema (client-side dry run), then
  # keep the five kinds, drop the Service's selector.
  hk create --dry-run=client -o json -f "${out}/rendered.yaml" |
    jq -s '{apiVersion: "v1", kind: "List", items: [
          .[] | (if .kind == "List" then .items[] else . end)
          | select(.kind | IN("ServiceAccount", "ClusterRoleBinding", "RoleBinding", "Service", "APIService"))
          | if .kind == "Service" then del(.spec.selector) else . end ]}' >"${out}/applied.json"
  [[ "$(jq '.items | length' "${out}/applied.json")" == 5 ]] ||
    rh_die "expected 5 objects from the chart's rendering, got: $(jq -c '[.items[] | .kind]' "${out}/applied.json")"
  jq -r '.items[] | select(.kind == "APIService") | .spec.caBundle' "${out}/applied.json" | base64 -d |
    cmp -s - "${RH_RUN}/pki/skein-ca.crt" || rh_die "the rendered APIService's caBundle is not Skein's CA"
  # The APIService last: first Skein must be listening.
  jq '.items |= map(select(.kind != "APIService"))' "${out}/applied.json" | hk apply -f - >/dev/null
  cat >"${out}/endpoints.yaml" <<EOF
apiVersion: v1
kind: Endpoints
metadata:
  name: skein
  namespace: skein-system
subsets:
- addresses:
  - ip: ${RH_SKEIN_IP}
  ports:
  - name: https
    port: 6443
    protocol: TCP
EOF
  hk apply -f "${out}/endpoints.yaml" >/dev/null
  rh_log "up: applied the chart's rendering (charts/skein via helm template --kube-version 1.33; the chart itself cannot install on v1.20: kubeVersion >=1.27, policy/v1): $(jq -r '[.items[] | .kind + " " + (if .metadata.namespace then .metadata.namespace + "/" else "" end) + .metadata.name] | join(", ")' "${out}/applied.json") (Service without its selector; objects in ${out}/applied.json), plus Endpoints skein-system/skein -> ${RH_SKEIN_IP}:6443"
}

# ---------------------------------------------------------------- skein
rh_up_skein() {
  local token
  token="$(rh_sa_token skein-system skein)"
  [[ -n "$token" ]] || rh_die "empty token for skein-system/skein"
  # Skein's view of the host: ServiceAccount skein-system/skein with its
  # legacy token, the host's address on the veth.
  rh_kubeconfig "${RH_RUN}/skein-host.kubeconfig" "$RH_HOST_URL" "${RH_RUN}/pki/ca.crt" token "$token"

  local authz=()
  if "$SKEIN_BIN" serve --help | grep -q -- '--authorization-kubeconfig'; then
    authz=(--authorization-kubeconfig "${RH_RUN}/skein-host.kubeconfig")
  else
    rh_log "up: WARNING: ${SKEIN_BIN} has no --authorization-kubeconfig yet; Skein runs without delegated authorization"
  fi
  mkdir -p "${RH_RUN}/skein/federation" "${RH_RUN}/skein/member"
  rh_start skein --netns "$SKEIN_BIN" serve --data-dir "${RH_RUN}/skein/federation" \
    --bind-address "$RH_SKEIN_IP" --secure-port 6443 \
    --tls-cert-file "${RH_RUN}/pki/skein.crt" --tls-private-key-file "${RH_RUN}/pki/skein.key" \
    --authentication-kubeconfig "${RH_RUN}/skein-host.kubeconfig" "${authz[@]}"
  # The member stores what the federation propagates to it and simulates
  # the workloads' status (so Deployments become available).
  rh_start skein-member --netns "$SKEIN_BIN" serve --role=member --simulate-workloads \
    --data-dir "${RH_RUN}/skein/member" --bind-address "$RH_SKEIN_IP" --secure-port 6444
  rh_wait_up 120 skein "Skein's /readyz" curl -fsS --cacert "${RH_RUN}/pki/skein-ca.crt" "https://${RH_SKEIN_IP}:6443/readyz"
  rh_wait_up 120 skein-member "the member's /readyz" curl -fsSk "https://${RH_SKEIN_IP}:6444/readyz"
  rh_wait_up 30 skein "Skein's admin kubeconfig" test -s "${RH_RUN}/skein/federation/admin.kubeconfig"
  rh_wait_up 30 skein-member "the member's admin kubeconfig" test -s "${RH_RUN}/skein/member/admin.kubeconfig"
  rh_log "up: Skein ready at https://${RH_SKEIN_IP}:6443, member at https://${RH_SKEIN_IP}:6444"

  # Skein's admin kubeconfig embeds the CA Skein generated in its data
  # directory; with --tls-cert-file Skein serves a certificate from another
  # CA (ours), which that CA does not verify. The admin's client
  # certificate is still the generated CA's, so a copy with our CA as the
  # cluster's certificate-authority-data is the admin kubeconfig to use.
  local fed_admin="${RH_RUN}/skein/federation/admin.kubeconfig"
  if ! ip netns exec "$RH_NETNS" "$K" --kubeconfig "$fed_admin" --request-timeout=10s get --raw /readyz \
    >"${RH_RUN}/logs/skein-admin-kubeconfig.log" 2>&1; then
    rh_log "up: NOTE: Skein's own ${fed_admin} does not verify its --tls-cert-file ($(tail -n1 "${RH_RUN}/logs/skein-admin-kubeconfig.log" | cut -c1-160)); using a copy that trusts ${RH_RUN}/pki/skein-ca.crt"
  fi
  jq --arg ca "$(base64 -w0 <"${RH_RUN}/pki/skein-ca.crt")" \
    '.clusters[].cluster["certificate-authority-data"] = $ca' "$fed_admin" >"${RH_RUN}/skein-admin.kubeconfig"
  chmod 600 "${RH_RUN}/skein-admin.kubeconfig"

  # Join the member (from inside the netns, where both listen).
  ip netns exec "$RH_NETNS" "$SKEIN_BIN" join m1 \
    --kubeconfig "${RH_RUN}/skein/member/admin.kubeconfig" \
    --federation-kubeconfig "${RH_RUN}/skein-admin.kubeconfig" \
    >"${RH_RUN}/logs/join.log" 2>&1 || {
    cat "${RH_RUN}/logs/join.log" >&2
    rh_die "skein join m1 failed"
  }
  rh_log "up: joined member m1: $(grep -m1 'is Ready' "${RH_RUN}/logs/join.log" || tail -n1 "${RH_RUN}/logs/join.log")"
}

rh_apiservice_available() {
  [[ "$(hk get apiservice v1alpha1.federation.skein.io \
    -o jsonpath='{.status.conditions[?(@.type=="Available")].status}' 2>/dev/null)" == True ]]
}

rh_up() {
  [[ $EUID -eq 0 ]] || rh_die "up needs root (network namespace, veth)"
  if ip netns list | grep -qw "$RH_NETNS"; then
    rh_die "network namespace ${RH_NETNS} exists: a previous run is still up (bash hack/real-host.sh down)"
  fi
  rh_build_done || rh_die "no kube-apiserver/kube-controller-manager in ${RH_CACHE}/bin: run bash hack/real-host.sh build"
  [[ -x "$SKEIN_BIN" ]] || rh_die "no skein binary at ${SKEIN_BIN} (build it, or set SKEIN_BIN)"
  rh_apt_install etcd-server iproute2 iputils-ping openssl jq curl
  rh_need etcd "Debian etcd-server"
  rh_need_tools

  local started=$SECONDS
  mkdir -p "$RH_RUN"
  echo "$RH_RUN" >"${RH_CACHE}/current-run"
  rh_log "up: run directory ${RH_RUN}"
  # Pin the binary for this run (cargo may replace SKEIN_BIN meanwhile): a
  # hard link keeps the current file, a copy where links cannot be made.
  mkdir -p "${RH_RUN}/bin"
  ln -f "$SKEIN_BIN" "${RH_RUN}/bin/skein" 2>/dev/null || cp "$SKEIN_BIN" "${RH_RUN}/bin/skein"
  rh_log "up: skein: $("${RH_RUN}/bin/skein" --version) (${SKEIN_BIN}, pinned as ${RH_RUN}/bin/skein)"
  SKEIN_BIN="${RH_RUN}/bin/skein"
  rh_up_pki
  rh_up_netns
  rh_up_host
  rh_up_register
  rh_up_skein
  hk apply -f <(jq '.items |= map(select(.kind == "APIService"))' "${RH_RUN}/chart/applied.json") >/dev/null
  local deadline=$((SECONDS + 90))
  until rh_apiservice_available; do
    if ((SECONDS >= deadline)); then
      hk get apiservice v1alpha1.federation.skein.io -o yaml >&2 || true
      rh_die "APIService v1alpha1.federation.skein.io never became Available"
    fi
    sleep 1
  done
  rh_log "up: APIService v1alpha1.federation.skein.io Available"
  # Available is the availability controller's verdict; the aggregator's
  # proxy handler for the group is installed by another controller a moment
  # later (until then the host answers 404 for the group).
  rh_wait 60 "" hk get --raw /apis/federation.skein.io/v1alpha1 ||
    rh_die "the host does not serve /apis/federation.skein.io/v1alpha1 60 s after the APIService became Available"

  # The host admin's federated context (token of the static admin).
  "$SKEIN_BIN" kubeconfig --aggregated --host-kubeconfig "${RH_RUN}/host-admin.kubeconfig" \
    >"${RH_RUN}/federation-admin.kubeconfig" || rh_die "skein kubeconfig --aggregated failed"
  chmod 600 "${RH_RUN}/federation-admin.kubeconfig"
  rh_wait 30 "" "$K" --kubeconfig "${RH_RUN}/federation-admin.kubeconfig" get --raw /api/v1/namespaces/default ||
    rh_die "the prefix path does not reach Skein: $("$K" --kubeconfig "${RH_RUN}/federation-admin.kubeconfig" get --raw /api/v1/namespaces/default 2>&1)"
  rh_log "up: done in $((SECONDS - started)) s"
  cat >&2 <<EOF
  run directory:          ${RH_RUN}
  host admin kubeconfig:  ${RH_RUN}/host-admin.kubeconfig   (${RH_HOST_URL}, user admin, system:masters)
  federated kubeconfig:   ${RH_RUN}/federation-admin.kubeconfig   (through the host's prefix path)
  Skein admin kubeconfig: ${RH_RUN}/skein-admin.kubeconfig   (direct, https://${RH_SKEIN_IP}:6443)
  logs:                   ${RH_RUN}/logs/{etcd,kube-apiserver,kube-controller-manager,skein,skein-member,join}.log
EOF
}
