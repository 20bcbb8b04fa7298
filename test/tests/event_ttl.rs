//! `--event-ttl` (kube-apiserver's flag): Events expire a TTL after their
//! last write, on the embedded store and on a real etcd. With
//! `--event-ttl=3s`: an Event created through core/v1 and one through
//! events.k8s.io/v1 are listed (HTTP and kubectl), then each is gone with a
//! DELETED watch event no earlier than 3 s after its last write, the one
//! bumped as client-go's recorder bumps a repeat (`count`,
//! `lastTimestamp`) later than the other; a ConfigMap written with them
//! stays. `--event-ttl=bogus` stops the server at startup with a message
//! naming the flag.

use std::time::Duration;

use serde_json::{Value, json};
use skein_tests::etcd::Etcd;
use skein_tests::http::{Api, Next, Watch};
use skein_tests::kubectl_binaries;
use skein_tests::server::Server;
use tokio::time::Instant;

const TTL: Duration = Duration::from_secs(3);
const NS: &str = "ttl";
const CORE: &str = "/api/v1/namespaces/ttl/events";
const EVENTS: &str = "/apis/events.k8s.io/v1/namespaces/ttl/events";

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn events_expire_on_the_embedded_store() {
    let dir = tempfile::tempdir().expect("tempdir");
    let server = Server::start(dir.path(), &["--event-ttl=3s"]).await;
    events_expire(&server).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn events_expire_on_etcd() {
    let etcd = tokio::task::spawn_blocking(Etcd::start)
        .await
        .expect("start etcd");
    let dir = tempfile::tempdir().expect("tempdir");
    let servers = format!("--etcd-servers={}", etcd.endpoint());
    let server = Server::start(dir.path(), &["--event-ttl=3s", &servers]).await;
    events_expire(&server).await;
    drop(server);
    drop(etcd);
}

#[tokio::test]
async fn a_bogus_event_ttl_is_a_startup_error() {
    let dir = tempfile::tempdir().expect("tempdir");
    for (flag, says) in [
        ("--event-ttl=bogus", r#"time: invalid duration "bogus""#),
        ("--event-ttl=5", r#"time: missing unit in duration "5""#),
        (
            "--event-ttl=-1h",
            r#"negative duration "-1h" is not allowed"#,
        ),
    ] {
        let (status, stderr) = Server::start_expecting_failure(dir.path(), &[flag]).await;
        assert!(!status.success(), "{flag}: {status}");
        assert!(
            stderr.contains("--event-ttl") && stderr.contains(says),
            "{flag}: stderr does not name the flag and say {says:?}:\n{stderr}"
        );
    }
}

fn core_event(name: &str) -> Value {
    json!({"metadata": {"name": name},
        "involvedObject": {"kind": "Pod", "name": "p", "namespace": NS},
        "reason": "Started", "message": "started container", "type": "Normal",
        "source": {"component": "kubelet", "host": "n1"}, "count": 1,
        "firstTimestamp": "2026-01-01T00:00:00Z", "lastTimestamp": "2026-01-01T00:00:00Z"})
}

fn events_event(name: &str) -> Value {
    json!({"apiVersion": "events.k8s.io/v1", "kind": "Event",
        "metadata": {"name": name}, "eventTime": "2026-01-01T00:00:00.000000Z",
        "reportingController": "example.com/ctl", "reportingInstance": "ctl-1",
        "action": "Scale", "reason": "Scaled", "type": "Normal", "note": "scaled up",
        "regarding": {"kind": "Deployment", "name": "web", "namespace": NS}})
}

/// The next DELETED event's object name and when it arrived (ADDED,
/// MODIFIED and BOOKMARK events are skipped); fails after `wait`.
async fn next_deleted(watch: &mut Watch, wait: Duration) -> (String, Instant) {
    let deadline = Instant::now() + wait;
    loop {
        let left = deadline.saturating_duration_since(Instant::now());
        match watch.next_within(left).await {
            Next::Event(e) if e["type"] == "DELETED" => {
                let name = e["object"]["metadata"]["name"].as_str().unwrap_or_default();
                return (name.to_string(), Instant::now());
            }
            Next::Event(e) => assert_ne!(e["type"], "ERROR", "{e}"),
            other => panic!("no DELETED event within {wait:?}: {other:?}"),
        }
    }
}

/// The names `kubectl get events -n ttl -o name` prints.
fn kubectl_events(server: &Server) -> Vec<String> {
    let kubectl = &kubectl_binaries()[0];
    let out = server.kubectl(kubectl, &["get", "events", "-n", NS, "-o", "name"]);
    assert!(
        out.status.success(),
        "kubectl get events: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let mut names: Vec<String> = String::from_utf8_lossy(&out.stdout)
        .lines()
        .map(|l| l.rsplit('/').next().unwrap_or_default().to_string())
        .collect();
    names.sort();
    names
}

async fn events_expire(server: &Server) {
    let api = Api::new(server);
    api.post("/api/v1/namespaces", &json!({"metadata": {"name": NS}}))
        .await
        .expect(201);
    let list = api.get(CORE).await.expect(200);
    let rv = list["metadata"]["resourceVersion"]
        .as_str()
        .expect("list resourceVersion")
        .to_string();
    let mut core_watch = api
        .watch(&format!("{CORE}?watch=1&resourceVersion={rv}"))
        .await;
    let mut events_watch = api
        .watch(&format!("{EVENTS}?watch=1&resourceVersion={rv}"))
        .await;

    // Written before the clock starts: each deletion must come at least
    // TTL after its write, whatever the machine's load.
    let t0 = Instant::now();
    api.post(CORE, &core_event("a")).await.expect(201);
    api.post(EVENTS, &events_event("b")).await.expect(201);
    api.post(
        "/api/v1/namespaces/ttl/configmaps",
        &json!({"metadata": {"name": "stays"}, "data": {"k": "v"}}),
    )
    .await
    .expect(201);

    let mut names = api.names(CORE).await;
    names.sort();
    assert_eq!(names, ["a", "b"]);
    assert_eq!(kubectl_events(server), ["a", "b"]);

    // A repeat of b, as client-go's recorder reports it: count and
    // lastTimestamp bumped. Its time starts again.
    tokio::time::sleep(Duration::from_millis(1500)).await;
    let t1 = Instant::now();
    let bumped = api
        .merge_patch(
            &format!("{CORE}/b"),
            &json!({"count": 2, "lastTimestamp": "2026-01-01T00:00:02Z"}),
        )
        .await
        .expect(200);
    assert_eq!(bumped["count"], 2, "{bumped}");

    // a goes first, with a DELETED event on both APIs, while b stays.
    for watch in [&mut core_watch, &mut events_watch] {
        let (name, at) = next_deleted(watch, Duration::from_secs(20)).await;
        assert_eq!(name, "a", "the first Event to expire");
        assert!(at - t0 >= TTL, "a expired {:?} after its write", at - t0);
    }
    api.get(&format!("{CORE}/a")).await.expect(404);
    api.get(&format!("{EVENTS}/a")).await.expect(404);
    let b = api.get(&format!("{EVENTS}/b")).await.expect(200);
    assert_eq!(b["deprecatedCount"], 2, "{b}");

    // Then b, TTL after its bump.
    for watch in [&mut core_watch, &mut events_watch] {
        let (name, at) = next_deleted(watch, Duration::from_secs(20)).await;
        assert_eq!(name, "b");
        assert!(at - t1 >= TTL, "b expired {:?} after its bump", at - t1);
    }
    assert!(api.names(CORE).await.is_empty());
    assert!(api.names(EVENTS).await.is_empty());
    assert!(kubectl_events(server).is_empty());

    // The ConfigMap written with them, older than the TTL by now, stays.
    assert!(t0.elapsed() > TTL);
    let cm = api
        .get("/api/v1/namespaces/ttl/configmaps/stays")
        .await
        .expect(200);
    assert_eq!(cm["data"]["k"], "v");
    // And nothing else expires: a second later it is still there, and so
    // is the namespace.
    tokio::time::sleep(Duration::from_secs(1)).await;
    api.get("/api/v1/namespaces/ttl/configmaps/stays")
        .await
        .expect(200);
    api.get("/api/v1/namespaces/ttl").await.expect(200);
}
