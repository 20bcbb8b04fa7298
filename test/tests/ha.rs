//! High availability (issue 14): two replicas on one etcd with
//! `--leader-elect`. Both serve the API; the controllers (garbage
//! collector, the federation's syncer, …) run on the holder of the Lease
//! `kube-system/skein`, and the other takes over when it dies.

use std::path::Path;
use std::time::{Duration, Instant};

use nix::sys::signal::Signal;
use serde_json::{Value, json};
use skein_tests::etcd::Etcd;
use skein_tests::http::Api;
use skein_tests::kubectl_binaries;
use skein_tests::member::{self, Member};
use skein_tests::server::Server;

const LEASE: &str = "/apis/coordination.k8s.io/v1/namespaces/kube-system/leases/skein";

/// `leader_election_master_status{name="skein"}` of `server`, if reported.
async fn leader_status(server: &Server) -> Option<u8> {
    let text = Api::new(server).get("/metrics").await.text();
    text.lines()
        .find(|l| l.starts_with("leader_election_master_status{name=\"skein\"}"))
        .and_then(|l| l.rsplit(' ').next())
        .and_then(|v| v.trim().parse().ok())
}

/// Polls until `done` holds for the Lease read through `api`; panics with
/// the last one after `timeout`. Returns the Lease and how long it took.
async fn wait_lease(
    api: &Api,
    timeout: Duration,
    done: impl Fn(&Value) -> bool,
) -> (Value, Duration) {
    let start = Instant::now();
    loop {
        let reply = api.get(LEASE).await;
        let lease = reply.json();
        if reply.status == 200 && done(&lease) {
            return (lease, start.elapsed());
        }
        assert!(
            start.elapsed() < timeout,
            "the Lease is not as expected after {timeout:?}: {lease:#}"
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

fn holder(lease: &Value) -> &str {
    lease["spec"]["holderIdentity"].as_str().unwrap_or_default()
}

async fn start_replica(dir: &Path, etcd: &Etcd) -> Server {
    Server::start(
        dir,
        &[
            "--leader-elect",
            &format!("--etcd-servers={}", etcd.endpoint()),
            "--cluster-probe-period=1s",
        ],
    )
    .await
}

/// Polls `cond` every 200 ms until it holds; panics with `what` after
/// `timeout`.
async fn eventually<F: AsyncFn() -> bool>(timeout: Duration, what: &str, cond: F) {
    let start = Instant::now();
    while !cond().await {
        assert!(start.elapsed() < timeout, "not within {timeout:?}: {what}");
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
}

fn deployment(name: &str) -> Value {
    json!({
        "apiVersion": "apps/v1", "kind": "Deployment",
        "metadata": {"name": name, "namespace": "default"},
        "spec": {
            "replicas": 1,
            "selector": {"matchLabels": {"app": name}},
            "template": {
                "metadata": {"labels": {"app": name}},
                "spec": {"containers": [{"name": "c", "image": "nginx:1.27"}]},
            },
        },
    })
}

/// Whether the member holds Deployment `name` in `default`.
fn member_has(k: &Path, m: &Member, name: &str) -> bool {
    m.kubectl(k, &["get", "deployments", "-n", "default", "-o", "name"])
        .lines()
        .any(|l| l == format!("deployment.apps/{name}"))
}

#[tokio::test(flavor = "multi_thread")]
async fn the_standby_takes_over_the_controllers_when_the_leader_dies() {
    let k = kubectl_binaries().remove(0);
    let etcd = tokio::task::spawn_blocking(Etcd::start)
        .await
        .expect("etcd");
    let dir = tempfile::tempdir().expect("tempdir");
    let mut a = start_replica(&dir.path().join("a"), &etcd).await;
    let api_a = Api::new(&a);
    let (lease, _) = wait_lease(&api_a, Duration::from_secs(20), |l| !holder(l).is_empty()).await;
    let first = holder(&lease).to_owned();
    assert_eq!(lease["spec"]["leaseDurationSeconds"], 15, "{lease}");
    assert_eq!(leader_status(&a).await, Some(1), "a leads");

    let b = start_replica(&dir.path().join("b"), &etcd).await;
    let api_b = Api::new(&b);
    // b is a candidate: it serves the API but waits for the Lease.
    tokio::time::sleep(Duration::from_secs(5)).await;
    assert_eq!(leader_status(&b).await, Some(0), "b waits");
    let (lease, _) = wait_lease(&api_b, Duration::from_secs(1), |_| true).await;
    assert_eq!(holder(&lease), first, "a kept the Lease: {lease}");
    assert_eq!(lease["spec"]["leaseTransitions"], 0, "{lease}");

    // A member joined through b; the leader (a) propagates to it.
    let m = Member::start(
        &dir.path().join("member"),
        &["--simulate-workloads", "--sim-pod-ready-delay=200ms"],
    )
    .await;
    member::join(&k, &b, &[("m1", m.kubeconfig())]);
    member::apply(&k, &b, "before", &[deployment("before")]);
    eventually(
        Duration::from_secs(60),
        "the member gets `before`",
        async || member_has(&k, &m, "before"),
    )
    .await;

    // The leader dies without handing over.
    a.stop_with(Signal::SIGKILL, Duration::from_secs(10)).await;
    let killed = Instant::now();
    // Until b takes over, no garbage collector runs: a dependent of a
    // deleted owner stays.
    let owner = api_b
        .post(
            "/api/v1/namespaces/default/configmaps",
            &json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "owner"}}),
        )
        .await
        .expect(201);
    api_b
        .post(
            "/api/v1/namespaces/default/configmaps",
            &json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {
                "name": "dependent",
                "ownerReferences": [{"apiVersion": "v1", "kind": "ConfigMap",
                    "name": "owner", "uid": owner["metadata"]["uid"]}],
            }}),
        )
        .await
        .expect(201);
    api_b
        .delete("/api/v1/namespaces/default/configmaps/owner")
        .await
        .expect(200);
    tokio::time::sleep(Duration::from_secs(5)).await;
    let lease = api_b.get(LEASE).await.expect(200);
    if holder(&lease) == first {
        api_b
            .get("/api/v1/namespaces/default/configmaps/dependent")
            .await
            .expect(200);
    }
    let (lease, _) = wait_lease(&api_b, Duration::from_secs(25), |l| {
        !holder(l).is_empty() && holder(l) != first
    })
    .await;
    let took = killed.elapsed();
    // b saw a's last renewal at most one jittered retry (2.4 s) after it,
    // and takes over at its first try (another 2.4 s at most) once the
    // lease (15 s) has run from then; a died at or after that renewal.
    assert!(
        took <= Duration::from_millis(15_000 + 2 * 2_400 + 1_000),
        "b took over after {took:?} (lease 15 s, retry 2 s + 20% jitter)"
    );
    assert_eq!(lease["spec"]["leaseTransitions"], 1, "{lease}");
    assert_eq!(leader_status(&b).await, Some(1), "b leads");

    // b's controllers work: the garbage collector removes the dependent,
    // and propagation goes on.
    member::apply(&k, &b, "after", &[deployment("after")]);
    eventually(
        Duration::from_secs(60),
        "the member gets `after`",
        async || member_has(&k, &m, "after"),
    )
    .await;
    eventually(
        Duration::from_secs(20),
        "the GC deletes the dependent",
        async || {
            api_b
                .get("/api/v1/namespaces/default/configmaps/dependent")
                .await
                .status
                == 404
        },
    )
    .await;
}

/// With the chart's settings (lease 10 s, renew deadline 7 s, retry 2 s)
/// a standby takes the controllers over within 15 s of the leader's death.
#[tokio::test(flavor = "multi_thread")]
async fn with_the_chart_s_settings_the_standby_takes_over_within_15_s() {
    let etcd = tokio::task::spawn_blocking(Etcd::start)
        .await
        .expect("etcd");
    let dir = tempfile::tempdir().expect("tempdir");
    let flags = [
        "--leader-elect".to_owned(),
        format!("--etcd-servers={}", etcd.endpoint()),
        "--leader-elect-lease-duration=10s".to_owned(),
        "--leader-elect-renew-deadline=7s".to_owned(),
        "--leader-elect-retry-period=2s".to_owned(),
    ];
    let flags: Vec<&str> = flags.iter().map(String::as_str).collect();
    let mut a = Server::start(&dir.path().join("a"), &flags).await;
    let (lease, _) = wait_lease(&Api::new(&a), Duration::from_secs(20), |l| {
        !holder(l).is_empty()
    })
    .await;
    let first = holder(&lease).to_owned();
    assert_eq!(lease["spec"]["leaseDurationSeconds"], 10, "{lease}");
    let b = Server::start(&dir.path().join("b"), &flags).await;
    let api_b = Api::new(&b);
    tokio::time::sleep(Duration::from_secs(3)).await;
    assert_eq!(leader_status(&b).await, Some(0), "b waits");
    a.stop_with(Signal::SIGKILL, Duration::from_secs(10)).await;
    let killed = Instant::now();
    wait_lease(&api_b, Duration::from_secs(20), |l| {
        !holder(l).is_empty() && holder(l) != first
    })
    .await;
    let took = killed.elapsed();
    assert!(
        took <= Duration::from_secs(15),
        "b took over after {took:?}"
    );
    assert_eq!(leader_status(&b).await, Some(1), "b leads");
}

#[tokio::test(flavor = "multi_thread")]
async fn a_leader_stopped_gracefully_hands_over_at_once() {
    let etcd = tokio::task::spawn_blocking(Etcd::start)
        .await
        .expect("etcd");
    let dir = tempfile::tempdir().expect("tempdir");
    let mut a = start_replica(&dir.path().join("a"), &etcd).await;
    let (lease, _) = wait_lease(&Api::new(&a), Duration::from_secs(20), |l| {
        !holder(l).is_empty()
    })
    .await;
    let first = holder(&lease).to_owned();
    let b = start_replica(&dir.path().join("b"), &etcd).await;
    let api_b = Api::new(&b);
    let status = a.stop_with(Signal::SIGTERM, Duration::from_secs(20)).await;
    assert!(
        status.success(),
        "a exits cleanly on SIGTERM: {status:?}\n{}",
        a.logs()
    );
    assert!(a.logs().contains("released the Lease"), "{}", a.logs());
    // Released: the holder is empty, then b takes it within a retry period.
    let (lease, took) = wait_lease(&api_b, Duration::from_secs(10), |l| {
        !holder(l).is_empty() && holder(l) != first
    })
    .await;
    assert!(took < Duration::from_secs(5), "b took over after {took:?}");
    assert_eq!(lease["spec"]["leaseDurationSeconds"], 15, "{lease}");
    assert_eq!(leader_status(&b).await, Some(1));
}

#[tokio::test(flavor = "multi_thread")]
async fn inconsistent_leader_election_flags_are_refused() {
    let dir = tempfile::tempdir().expect("tempdir");
    let (status, output) = Server::start_expecting_failure(
        dir.path(),
        &[
            "--leader-elect",
            "--leader-elect-lease-duration=10s",
            "--leader-elect-renew-deadline=10s",
        ],
    )
    .await;
    assert!(!status.success());
    assert!(
        output.contains(
            "--leader-elect-lease-duration must be greater than --leader-elect-renew-deadline"
        ),
        "{output}"
    );
}

fn service(name: &str, spec: Value) -> Value {
    let mut spec = spec;
    spec["ports"] = spec
        .get("ports")
        .cloned()
        .unwrap_or_else(|| json!([{"port": 80}]));
    json!({"apiVersion": "v1", "kind": "Service",
        "metadata": {"name": name, "namespace": "default"}, "spec": spec})
}

/// `n` Services `<prefix>-<i>` created through `api` by 16 tasks; returns
/// their cluster IPs.
async fn create_services(api: Api, prefix: &'static str, n: usize) -> Vec<String> {
    let mut tasks = tokio::task::JoinSet::new();
    for t in 0..16 {
        let api = api.clone();
        tasks.spawn(async move {
            let mut ips = Vec::new();
            for i in (t..n).step_by(16) {
                let created = api
                    .post(
                        "/api/v1/namespaces/default/services",
                        &service(&format!("{prefix}-{i}"), json!({})),
                    )
                    .await
                    .expect(201);
                ips.push(
                    created["spec"]["clusterIP"]
                        .as_str()
                        .unwrap_or_default()
                        .to_owned(),
                );
            }
            ips
        });
    }
    let mut all = Vec::new();
    while let Some(ips) = tasks.join_next().await {
        all.extend(ips.expect("a create task"));
    }
    all
}

#[tokio::test(flavor = "multi_thread")]
async fn replicas_never_hand_out_one_address_twice() {
    let etcd = tokio::task::spawn_blocking(Etcd::start)
        .await
        .expect("etcd");
    let dir = tempfile::tempdir().expect("tempdir");
    let a = start_replica(&dir.path().join("a"), &etcd).await;
    let b = start_replica(&dir.path().join("b"), &etcd).await;
    let (api_a, api_b) = (Api::new(&a), Api::new(&b));

    // 1,000 Services through both replicas at once.
    let (from_a, from_b) = tokio::join!(
        create_services(api_a.clone(), "a", 500),
        create_services(api_b.clone(), "b", 500)
    );
    let mut all: Vec<String> = from_a.into_iter().chain(from_b).collect();
    assert_eq!(all.len(), 1000);
    assert!(all.iter().all(|ip| ip.starts_with("10.")), "{all:?}");
    all.sort();
    all.dedup();
    assert_eq!(all.len(), 1000, "every Service got its own cluster IP");
    // Each address is an IPAddress object naming its Service.
    let addresses = api_b
        .get("/apis/networking.k8s.io/v1/ipaddresses")
        .await
        .expect(200);
    let items = addresses["items"].as_array().cloned().unwrap_or_default();
    for ip in &all {
        let a = items
            .iter()
            .find(|a| a["metadata"]["name"] == *ip)
            .unwrap_or_else(|| panic!("no IPAddress {ip}"));
        assert_eq!(a["spec"]["parentRef"]["resource"], "services", "{a}");
        assert_eq!(a["spec"]["parentRef"]["namespace"], "default", "{a}");
    }

    // An address or node port taken through one replica is refused
    // through the other, though that replica never allocated it.
    let taken = api_a
        .post(
            "/api/v1/namespaces/default/services",
            &service(
                "fixed",
                json!({"clusterIP": "10.96.0.77", "type": "NodePort",
                "ports": [{"port": 80, "nodePort": 30077}]}),
            ),
        )
        .await
        .expect(201);
    assert_eq!(taken["spec"]["clusterIP"], "10.96.0.77");
    let s = api_b
        .post(
            "/api/v1/namespaces/default/services",
            &service("same-ip", json!({"clusterIP": "10.96.0.77"})),
        )
        .await
        .expect_status(422, "Invalid");
    assert!(
        skein_tests::http::message(&s)
            .contains("failed to allocate IP 10.96.0.77: provided IP is already allocated"),
        "{s}"
    );
    let s = api_b
        .post(
            "/api/v1/namespaces/default/services",
            &service(
                "same-port",
                json!({"type": "NodePort", "ports": [{"port": 80, "nodePort": 30077}]}),
            ),
        )
        .await
        .expect_status(422, "Invalid");
    assert!(
        skein_tests::http::message(&s).contains("provided port is already allocated"),
        "{s}"
    );
    // Nothing of the refused Services was stored or kept.
    api_b
        .get("/api/v1/namespaces/default/services/same-port")
        .await
        .expect_status(404, "NotFound");
    // Deleted through b, the address is free again through b at once
    // (its claim is gone), whatever a's memory says.
    api_b
        .delete("/api/v1/namespaces/default/services/fixed")
        .await
        .expect(200);
    api_b
        .get("/apis/networking.k8s.io/v1/ipaddresses/10.96.0.77")
        .await
        .expect_status(404, "NotFound");
    api_b
        .post(
            "/api/v1/namespaces/default/services",
            &service(
                "again",
                json!({"clusterIP": "10.96.0.77", "type": "NodePort",
                "ports": [{"port": 80, "nodePort": 30077}]}),
            ),
        )
        .await
        .expect(201);
}

/// A Service whose IPAddress is missing (stored before claims existed, or
/// its claim deleted by hand) gets it back from the repair when the
/// controllers start.
#[tokio::test(flavor = "multi_thread")]
async fn a_missing_address_claim_is_repaired_at_start() {
    let dir = tempfile::tempdir().expect("tempdir");
    let mut server = Server::start(dir.path(), &[]).await;
    let api = Api::new(&server);
    let svc = api
        .post(
            "/api/v1/namespaces/default/services",
            &service("web", json!({"type": "NodePort"})),
        )
        .await
        .expect(201);
    let ip = svc["spec"]["clusterIP"]
        .as_str()
        .expect("a cluster IP")
        .to_owned();
    let address = format!("/apis/networking.k8s.io/v1/ipaddresses/{ip}");
    api.get(&address).await.expect(200);
    api.delete(&address).await.expect(200);
    server
        .stop_with(Signal::SIGTERM, Duration::from_secs(20))
        .await;

    let server = Server::start(dir.path(), &[]).await;
    let api = Api::new(&server);
    eventually(
        Duration::from_secs(10),
        "the IPAddress is back",
        async || api.get(&address).await.status == 200,
    )
    .await;
    let a = api.get(&address).await.expect(200);
    assert_eq!(
        a["spec"]["parentRef"],
        json!({"resource": "services", "namespace": "default", "name": "web"})
    );
    // The address stays taken: asking for it is refused.
    let s = api
        .post(
            "/api/v1/namespaces/default/services",
            &service("other", json!({"clusterIP": ip})),
        )
        .await
        .expect_status(422, "Invalid");
    assert!(
        skein_tests::http::message(&s).contains("provided IP is already allocated"),
        "{s}"
    );
}
