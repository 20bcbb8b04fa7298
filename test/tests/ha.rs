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
    assert!(
        took <= Duration::from_secs(15) + Duration::from_millis(2400) + Duration::from_millis(500),
        "b took over after {took:?} (lease 15 s, retry 2 s + jitter)"
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
