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
            "not within {timeout:?}: {what}\n--- federation log (controllers, tail):\n{}",
            controller_log(fed)
        );
        tokio::time::sleep(Duration::from_millis(250)).await;
    }
}

/// The last lines of the federation's log that are not access lines.
fn controller_log(fed: &Server) -> String {
    let log = fs::read_to_string(fed.data_dir.join("skein.log")).unwrap_or_default();
    let lines: Vec<&str> = log
        .lines()
        .filter(|l| !l.contains("skein::access") && !l.contains("bootstrap"))
        .collect();
    let k = kubectl_binaries().first().expect("a kubectl").clone();
    let placements = cli::kubectl(&k, fed, &["get", "placements", "-A", "-o", "yaml"]);
    let events = cli::kubectl(&k, fed, &["get", "events", "-A"]);
    format!(
        "{}\n--- events:\n{}\n--- placements:\n{}",
        lines[lines.len().saturating_sub(30)..].join("\n"),
        String::from_utf8_lossy(&events.stdout),
        String::from_utf8_lossy(&placements.stdout)
    )
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
    weighted_split(&f, &k, &k_old).await;
}

/// Scenario 1's steps on a started federation.
async fn weighted_split(f: &Federation, k: &Path, k_old: &Path) {
    let (k, k_old) = (k.to_path_buf(), k_old.to_path_buf());
    let prefs = r#"{"clusters":{"eu":{"weight":2},"us":{"weight":1},"ap":{"weight":0}}}"#;
    // The dry run shows the decision first and stores nothing.
    let web = deployment(
        "web",
        6,
        "nginx:1.25",
        json!({"skein.io/replica-preferences": prefs}),
    );
    let path = f.fed.data_dir.join("web-dry.json");
    fs::write(&path, web.to_string()).expect("write a manifest");
    let decision = dry_run_decision(&k, &f.fed, &path).expect("the decision annotation is JSON");
    assert_eq!(
        decision["clusters"],
        json!({"ap": 0, "eu": 4, "us": 2}),
        "{decision:#}"
    );
    let fed = &f.fed;
    let stored = cli::kubectl(&k, fed, &["get", "deployment", "web", "-n", "default"]);
    assert!(!stored.status.success(), "the dry run stored nothing");
    apply(&k, fed, "web", &[web]);
    // It was created with the cleanup finalizer (admission), so the syncer
    // never had to add it by an update of its own.
    let created = cli::get_json(
        &k,
        fed,
        &[
            "get",
            "deployment",
            "web",
            "-n",
            "default",
            "--show-managed-fields",
        ],
    );
    assert!(
        created["metadata"]["finalizers"]
            .as_array()
            .is_some_and(|f| f.iter().any(|x| x == "federation.skein.io/cleanup")),
        "{created:#}"
    );
    let syncer_finalizers = created["metadata"]["managedFields"]
        .as_array()
        .into_iter()
        .flatten()
        .any(|e| {
            e["manager"] == "skein-syncer"
                && e["fieldsV1"]["f:metadata"].get("f:finalizers").is_some()
        });
    assert!(!syncer_finalizers, "{created:#}");
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
    assert!(
        copy["metadata"]["annotations"]
            .get("skein.io/replica-preferences")
            .is_none(),
        "{copy:#}"
    );
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
    // kubectl describe shows the decision and each cluster's apply.
    eventually(
        fed,
        Duration::from_secs(10),
        "Scheduled and Applied events",
        || {
            let d = cli::ok(
                &k_old,
                fed,
                &["describe", "deployment", "web", "-n", "default"],
            );
            (d.contains("Scheduled")
                && d.contains("scheduled to clusters ap (0), eu (4), us (2)")
                && d.lines().any(|l| {
                    // One Event names every cluster applied together.
                    l.contains("applied generation 1 to cluster") && l.contains("eu")
                }))
            .then_some(())
        },
    )
    .await;
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
        &[
            "get",
            "placement",
            "deployment-web",
            "-n",
            "default",
            "--show-managed-fields",
        ],
    );
    let decision = &p["status"]["decision"];
    assert_eq!(decision["scheduling"], "Divided", "{p:#}");
    assert_eq!(
        decision["clusters"],
        json!([{"name": "ap", "replicas": 0}, {"name": "eu", "replicas": 4}, {"name": "us", "replicas": 2}]),
        "{p:#}"
    );
    // The syncer owns the Placement's spec and, through the status
    // subresource, its status (it was created with its status, one write).
    let owned: Vec<(String, String)> = p["metadata"]["managedFields"]
        .as_array()
        .into_iter()
        .flatten()
        .filter(|e| e["manager"] == "skein-syncer")
        .map(|e| {
            let sub = e["subresource"].as_str().unwrap_or("");
            let top: Vec<&str> = e["fieldsV1"]
                .as_object()
                .into_iter()
                .flat_map(|m| m.keys().map(String::as_str))
                .filter(|k| k.starts_with("f:"))
                .collect();
            (sub.to_owned(), top.join(","))
        })
        .collect();
    assert_eq!(
        owned,
        [
            (String::new(), "f:metadata,f:spec".to_owned()),
            ("status".to_owned(), "f:status".to_owned())
        ],
        "{p:#}"
    );
    // Every call and watch to a member rides one HTTP/2 connection per
    // client (the prober's and the syncers'), as client-go's would: not a
    // connection per watch and per write in flight.
    for (name, m) in &f.members {
        let open = skein_tests::member::connections_to(m.port);
        assert!(
            (1..=2).contains(&open),
            "the federation holds {open} connections to member {name} (expected 1 or 2: HTTP/2)\n{}",
            String::from_utf8_lossy(
                &std::process::Command::new("ss")
                    .args(["-tnpo", "dst", &format!(":{}", m.port)])
                    .output()
                    .map(|o| o.stdout)
                    .unwrap_or_default()
            )
        );
    }
}

fn configmap(name: &str, annotations: Value) -> Value {
    json!({
        "apiVersion": "v1", "kind": "ConfigMap",
        "metadata": {"name": name, "namespace": "default", "labels": {"app": name}, "annotations": annotations},
        "data": {"color": "blue", "size": "m"},
    })
}

/// Which of eu, us, ap hold `args` (a kubectl object reference).
fn holders(f: &Federation, k: &Path, args: &[&str]) -> Vec<String> {
    ["eu", "us", "ap"]
        .iter()
        .filter(|c| member_get(f.member(c), k, args).is_some())
        .map(|c| (*c).to_owned())
        .collect()
}

/// Scenarios 3, 4, 8 and 10: overrides change one cluster's copy;
/// selectors (both forms) choose clusters and relabelling moves the
/// object; an unknown cluster shows as excluded; deletion removes every
/// copy, orphan deletion leaves them without markers.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn overrides_selectors_and_deletion() {
    let dir = tempfile::tempdir().expect("tempdir");
    let (k, k_old) = kubectls();
    let f = Federation::start(dir.path(), &k, &[], &REGIONS).await;
    let fed = &f.fed;
    let cm = ["configmap", "cfg", "-n", "default"];

    // Overrides: merge form for eu, JSON patch form for us; ap untouched.
    apply(
        &k,
        fed,
        "cfg",
        &[configmap(
            "cfg",
            json!({
                "override.skein.io/eu": r#"{"data":{"color":"green"}}"#,
                "override.skein.io/us": r#"[{"op":"replace","path":"/data/size","value":"xl"},{"op":"add","path":"/metadata/labels/tier","value":"gold"}]"#,
            }),
        )],
    );
    let copies = eventually(
        fed,
        Duration::from_secs(30),
        "the ConfigMap on all three members",
        || {
            let c: Vec<Value> = ["eu", "us", "ap"]
                .iter()
                .filter_map(|m| member_get(f.member(m), &k, &cm))
                .collect();
            (c.len() == 3).then_some(c)
        },
    )
    .await;
    assert_eq!(copies[0]["data"], json!({"color": "green", "size": "m"}));
    assert_eq!(copies[1]["data"], json!({"color": "blue", "size": "xl"}));
    assert_eq!(copies[1]["metadata"]["labels"]["tier"], "gold");
    assert_eq!(copies[2]["data"], json!({"color": "blue", "size": "m"}));

    // Selector, kubectl syntax: only eu and us.
    apply(
        &k_old,
        fed,
        "sel",
        &[configmap(
            "sel",
            json!({"skein.io/cluster-selector": "region in (eu,us)"}),
        )],
    );
    let sel = ["configmap", "sel", "-n", "default"];
    eventually(
        fed,
        Duration::from_secs(30),
        "sel on eu and us only",
        || (holders(&f, &k, &sel) == ["eu", "us"]).then_some(()),
    )
    .await;
    // The V1 JSON form: only ap.
    apply(
        &k,
        fed,
        "v1sel",
        &[configmap(
            "v1sel",
            json!({
                "federation.alpha.kubernetes.io/cluster-selector": r#"[{"key":"region","operator":"in","values":["ap"]}]"#,
            }),
        )],
    );
    let v1sel = ["configmap", "v1sel", "-n", "default"];
    eventually(fed, Duration::from_secs(30), "v1sel on ap only", || {
        (holders(&f, &k, &v1sel) == ["ap"]).then_some(())
    })
    .await;
    // Relabelling us out of the selector moves sel off it.
    cli::ok(
        &k,
        fed,
        &["label", "cluster", "us", "region=sa", "--overwrite"],
    );
    eventually(
        fed,
        Duration::from_secs(30),
        "sel leaves us after relabelling",
        || (holders(&f, &k, &sel) == ["eu"]).then_some(()),
    )
    .await;
    let p = cli::get_json(
        &k,
        fed,
        &["get", "placement", "configmap-sel", "-n", "default"],
    );
    let excluded = p["status"]["decision"]["excluded"]
        .as_array()
        .cloned()
        .unwrap_or_default();
    assert!(
        excluded.contains(&json!({"name": "us", "reason": "NotSelected"}))
            || excluded
                .iter()
                .any(|e| e["name"] == "us" && e["reason"] == "NotSelected"),
        "{p:#}"
    );

    // control-plane-only stays on the federation; retain-replicas leaves
    // spec.replicas to each member (its own HPA or a person).
    let mut keep = deployment(
        "keep",
        2,
        "nginx:1.25",
        json!({"skein.io/retain-replicas": "true"}),
    );
    keep["metadata"]["labels"] = json!({"app": "keep"});
    apply(
        &k,
        fed,
        "local",
        &[
            configmap("local", json!({"skein.io/control-plane-only": "true"})),
            keep,
        ],
    );
    // A Namespace's control-plane-only keeps its objects on the
    // federation, and admission knows it: the object is created without
    // the cleanup finalizer (no copy will need cleaning up).
    apply(
        &k,
        fed,
        "ops-ns",
        &[
            json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {
            "name": "ops", "annotations": {"skein.io/control-plane-only": "true"}}}),
        ],
    );
    let mut ops_cm = configmap("ops-local", json!({}));
    ops_cm["metadata"]["namespace"] = json!("ops");
    let path = fed.data_dir.join("ops-cm.json");
    fs::write(&path, ops_cm.to_string()).expect("write a manifest");
    let created: Value = serde_json::from_str(&cli::ok(
        &k,
        fed,
        &["create", "-f", &path.to_string_lossy(), "-o", "json"],
    ))
    .expect("kubectl create -o json");
    assert_eq!(
        created["metadata"].get("finalizers"),
        None,
        "an object of a control-plane-only Namespace got a finalizer: {created:#}"
    );
    let keep_ref = ["deployment", "keep", "-n", "default"];
    eventually(fed, Duration::from_secs(30), "keep on every member", || {
        (holders(&f, &k, &keep_ref).len() == 3).then_some(())
    })
    .await;
    assert!(
        holders(&f, &k, &["configmap", "local", "-n", "default"]).is_empty(),
        "control-plane-only was propagated"
    );
    assert!(
        holders(&f, &k, &["configmap", "ops-local", "-n", "ops"]).is_empty(),
        "an object of a control-plane-only Namespace was propagated"
    );
    let copy = member_get(f.member("eu"), &k, &keep_ref).expect("keep on eu");
    let managed = copy["metadata"]["managedFields"].to_string();
    assert!(
        !managed.contains("f:replicas"),
        "skein manages replicas: {managed}"
    );
    f.member("eu").kubectl(
        &k,
        &[
            "scale",
            "deployment",
            "keep",
            "-n",
            "default",
            "--replicas=5",
        ],
    );
    cli::ok(
        &k,
        fed,
        &[
            "label",
            "deployment",
            "keep",
            "-n",
            "default",
            "touched=yes",
        ],
    );
    eventually(
        fed,
        Duration::from_secs(20),
        "the label reaches eu, its replicas stay 5",
        || {
            let c = member_get(f.member("eu"), &k, &keep_ref)?;
            (c["metadata"]["labels"]["touched"] == "yes").then_some(())
        },
    )
    .await;
    assert_eq!(replicas_on(f.member("eu"), &k, "keep"), Some(5));

    // An unknown cluster name is no error: it shows as excluded.
    apply(
        &k,
        fed,
        "named",
        &[configmap("named", json!({"skein.io/clusters": "eu,nope"}))],
    );
    let named = ["configmap", "named", "-n", "default"];
    eventually(fed, Duration::from_secs(30), "named on eu only", || {
        (holders(&f, &k, &named) == ["eu"]).then_some(())
    })
    .await;
    let p = eventually(
        fed,
        Duration::from_secs(10),
        "the placement names nope as UnknownCluster",
        || {
            let p = cli::get_json(
                &k,
                fed,
                &["get", "placement", "configmap-named", "-n", "default"],
            );
            p["status"]["decision"]["excluded"]
                .as_array()
                .is_some_and(|ex| {
                    ex.iter()
                        .any(|e| e["name"] == "nope" && e["reason"] == "UnknownCluster")
                })
                .then_some(p)
        },
    )
    .await;
    assert_eq!(p["status"]["summary"]["clusters"], 1, "{p:#}");

    // Deletion removes every copy, then the federated object.
    cli::ok(
        &k,
        fed,
        &[
            "delete",
            "configmap",
            "cfg",
            "-n",
            "default",
            "--wait=true",
            "--timeout=30s",
        ],
    );
    assert!(
        holders(&f, &k, &cm).is_empty(),
        "copies left after delete: {:?}",
        holders(&f, &k, &cm)
    );
    // Orphan deletion leaves the copies, without Skein's markers.
    cli::ok(
        &k,
        fed,
        &[
            "delete",
            "configmap",
            "named",
            "-n",
            "default",
            "--cascade=orphan",
            "--wait=true",
            "--timeout=30s",
        ],
    );
    let left = member_get(f.member("eu"), &k, &named).expect("the orphaned copy stays");
    assert!(
        left["metadata"]["labels"]
            .get("federation.skein.io/managed-by")
            .is_none(),
        "{left:#}"
    );
    assert!(
        left["metadata"]["annotations"]
            .get("federation.skein.io/origin-uid")
            .is_none(),
        "{left:#}"
    );
    let gone = cli::kubectl(&k, fed, &["get", "configmap", "named", "-n", "default"]);
    assert!(!gone.status.success(), "the federated object is gone");
}

/// The podinfo chart, unchanged (the repository's verbatim copy of the
/// shared fixture, as `tests/helm.rs` uses).
fn podinfo() -> String {
    let chart = skein_tests::repo_root().join("test/fixtures/podinfo");
    assert!(
        chart.join("Chart.yaml").is_file(),
        "the podinfo chart is missing at {}",
        chart.display()
    );
    chart.to_string_lossy().into_owned()
}

/// Scenario 9: a Namespace's cluster selector places a whole chart;
/// `helm install --wait` (Helm 4.1 and 3.17) succeeds once the eu member
/// reports ready; its objects land only on eu; `helm uninstall` removes
/// them from the member.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn helm_chart_into_an_annotated_namespace() {
    let dir = tempfile::tempdir().expect("tempdir");
    let (k, _) = kubectls();
    let f = Federation::start(dir.path(), &k, &[], &REGIONS).await;
    let fed = &f.fed;
    apply(
        &k,
        fed,
        "ns",
        &[json!({
            "apiVersion": "v1", "kind": "Namespace",
            "metadata": {"name": "team-eu", "annotations": {"skein.io/cluster-selector": "region=eu"}},
        })],
    );
    for (i, h) in skein_tests::http::helm_binaries().iter().enumerate() {
        let release = format!("web{i}");
        let out = skein_tests::http::helm(
            fed,
            h,
            &[
                "install",
                &release,
                &podinfo(),
                "-n",
                "team-eu",
                "--wait",
                "--timeout",
                "90s",
            ],
        );
        assert!(
            out.status.success(),
            "{} install --wait: {}\n{}\n--- federation:\n{}",
            h.display(),
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr),
            controller_log(fed)
        );
        let name = format!("{release}-podinfo");
        let d = ["deployment", name.as_str(), "-n", "team-eu"];
        let on: Vec<String> = holders(&f, &k, &d);
        assert_eq!(on, ["eu"], "{} landed on {on:?}", h.display());
        let svc = ["service", name.as_str(), "-n", "team-eu"];
        assert_eq!(holders(&f, &k, &svc), ["eu"]);
        let copy = member_get(f.member("eu"), &k, &d).expect("the eu copy");
        assert!(
            copy["status"]["readyReplicas"].as_i64().unwrap_or(0) >= 1,
            "helm returned before the eu member was ready: {:#}",
            copy["status"]
        );
        // Helm's release record stays on the federation.
        let secrets = f
            .member("eu")
            .kubectl(&k, &["get", "secrets", "-n", "team-eu", "-o", "name"]);
        assert!(!secrets.contains("sh.helm.release"), "{secrets}");
        let out =
            skein_tests::http::helm(fed, h, &["uninstall", &release, "-n", "team-eu", "--wait"]);
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        eventually(
            fed,
            Duration::from_secs(30),
            "the chart's objects leave eu",
            || holders(&f, &k, &d).is_empty().then_some(()),
        )
        .await;
    }
}

/// Scenario 7: a member stops; its Cluster turns not Ready; the others
/// keep syncing new objects; Divided replicas move after the grace
/// period; restarting the member converges everything.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn member_outage() {
    let dir = tempfile::tempdir().expect("tempdir");
    let (k, _) = kubectls();
    let mut f = Federation::start(
        dir.path(),
        &k,
        &["--cluster-failure-threshold=2", "--cluster-grace-period=4s"],
        &REGIONS,
    )
    .await;
    apply(
        &k,
        &f.fed,
        "web",
        // With rebalance, replicas return to a cluster that comes back
        // (without it they stay where they are, as Federation V1's planner).
        &[deployment(
            "web",
            6,
            "nginx:1.25",
            json!({"skein.io/replica-preferences": r#"{"rebalance":true,"clusters":{"*":{"weight":1}}}"#}),
        )],
    );
    eventually(&f.fed, Duration::from_secs(30), "2/2/2", || {
        let got: Vec<Option<i64>> = ["eu", "us", "ap"]
            .iter()
            .map(|c| replicas_on(f.member(c), &k, "web"))
            .collect();
        (got == [Some(2), Some(2), Some(2)]).then_some(())
    })
    .await;
    f.member_mut("ap").stop();
    f.wait_cluster("ap", Duration::from_secs(30), |c| {
        !skein_tests::member::is_ready(c)
    })
    .await;
    // New objects still reach the others.
    apply(&k, &f.fed, "late", &[configmap("late", json!({}))]);
    let late = ["configmap", "late", "-n", "default"];
    eventually(&f.fed, Duration::from_secs(30), "late on eu and us", || {
        let on: Vec<&str> = ["eu", "us"]
            .into_iter()
            .filter(|c| member_get(f.member(c), &k, &late).is_some())
            .collect();
        (on.len() == 2).then_some(())
    })
    .await;
    // After the grace period the replicas move to the Ready clusters.
    eventually(&f.fed, Duration::from_secs(30), "3/3 on eu and us", || {
        let got: Vec<Option<i64>> = ["eu", "us"]
            .iter()
            .map(|c| replicas_on(f.member(c), &k, "web"))
            .collect();
        (got == [Some(3), Some(3)]).then_some(())
    })
    .await;
    // While it is not Ready, the syncer of the lost member waits: no
    // request to it, no retry (its probes go on).
    let calls_to_ap = || {
        let metrics =
            String::from_utf8_lossy(&f.fed.kubectl(&k, &["get", "--raw", "/metrics"]).stdout)
                .into_owned();
        metrics
            .lines()
            .filter(|l| {
                (l.starts_with("skein_federation_member_request_duration_seconds_count{")
                    || l.starts_with("skein_federation_sync_retries_total{"))
                    && l.contains("cluster=\"ap\"")
            })
            .filter_map(|l| l.rsplit(' ').next()?.parse::<f64>().ok())
            .sum::<f64>()
    };
    let before = calls_to_ap();
    tokio::time::sleep(Duration::from_secs(5)).await;
    assert_eq!(
        calls_to_ap(),
        before,
        "the syncer called or retried the unreachable member"
    );
    // The member comes back: everything converges.
    f.member_mut("ap").run().await;
    f.wait_cluster("ap", Duration::from_secs(30), skein_tests::member::is_ready)
        .await;
    eventually(
        &f.fed,
        Duration::from_secs(30),
        "2/2/2 again and late on ap",
        || {
            let got: Vec<Option<i64>> = ["eu", "us", "ap"]
                .iter()
                .map(|c| replicas_on(f.member(c), &k, "web"))
                .collect();
            (got == [Some(2), Some(2), Some(2)] && member_get(f.member("ap"), &k, &late).is_some())
                .then_some(())
        },
    )
    .await;
    let out = cli::ok(
        &k,
        &f.fed,
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

fn image_on(m: &Member, k: &Path, name: &str) -> Option<String> {
    member_get(m, k, &["deployment", name, "-n", "default"]).and_then(|d| {
        d.pointer("/spec/template/spec/containers/0/image")
            .and_then(Value::as_str)
            .map(str::to_owned)
    })
}

/// Scenarios 2, 5 and 6: a template change rolls out everywhere and
/// `kubectl rollout undo` on the federation rolls the members back; drift
/// is reverted (Enforce) or reported (Report); a member object Skein does
/// not own is left alone (Abort) or taken over (Adopt).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn rollout_drift_and_conflict() {
    let dir = tempfile::tempdir().expect("tempdir");
    let (k, k_old) = kubectls();
    let f = Federation::start(dir.path(), &k, &[], &REGIONS).await;
    let fed = &f.fed;

    // Template change and undo.
    apply(
        &k,
        fed,
        "web",
        &[deployment("web", 3, "nginx:1.25", json!({}))],
    );
    cli::ok(
        &k,
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
    cli::ok(
        &k,
        fed,
        &[
            "set",
            "image",
            "deployment/web",
            "web=nginx:1.26",
            "-n",
            "default",
        ],
    );
    let out = cli::ok(
        &k_old,
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
    for c in ["eu", "us", "ap"] {
        assert_eq!(
            image_on(f.member(c), &k, "web").as_deref(),
            Some("nginx:1.26"),
            "{c}"
        );
    }
    // The federation's history ReplicaSets carry the members' counts: the
    // new template's all 3 replicas, the old one none (as `kubectl get rs`
    // on a cluster shows after a rollout).
    eventually(
        fed,
        Duration::from_secs(30),
        "the ReplicaSets' counts: revision 2 holds 3 ready, revision 1 none",
        || {
            let list = cli::get_json(&k, fed, &["get", "rs", "-n", "default", "-l", "app=web"]);
            let by_revision: Vec<(String, i64, i64)> = list["items"]
                .as_array()?
                .iter()
                .map(|rs| {
                    (
                        rs["metadata"]["annotations"]["deployment.kubernetes.io/revision"]
                            .as_str()
                            .unwrap_or_default()
                            .to_owned(),
                        rs["status"]["replicas"].as_i64().unwrap_or(-1),
                        // Omitted when 0 (`omitempty`, as upstream).
                        rs["status"]["readyReplicas"].as_i64().unwrap_or(0),
                    )
                })
                .collect();
            let want = |r: &str, n: i64| by_revision.iter().any(|x| *x == (r.to_owned(), n, n));
            (by_revision.len() == 2 && want("2", 3) && want("1", 0)).then_some(())
        },
    )
    .await;
    let history = cli::ok(
        &k,
        fed,
        &["rollout", "history", "deployment/web", "-n", "default"],
    );
    assert!(history.contains('1') && history.contains('2'), "{history}");
    cli::ok(
        &k,
        fed,
        &["rollout", "undo", "deployment/web", "-n", "default"],
    );
    let out = cli::ok(
        &k,
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
    eventually(
        fed,
        Duration::from_secs(30),
        "members rolled back to nginx:1.25",
        || {
            ["eu", "us", "ap"]
                .iter()
                .all(|c| image_on(f.member(c), &k, "web").as_deref() == Some("nginx:1.25"))
                .then_some(())
        },
    )
    .await;

    // Drift, Enforce (the default): another manager's change is reverted.
    apply(&k, fed, "cfg", &[configmap("cfg", json!({}))]);
    let cm = ["configmap", "cfg", "-n", "default"];
    eventually(fed, Duration::from_secs(30), "cfg on every member", || {
        (holders(&f, &k, &cm).len() == 3).then_some(())
    })
    .await;
    f.member("eu").kubectl(
        &k,
        &[
            "patch",
            "configmap",
            "cfg",
            "-n",
            "default",
            "-p",
            r#"{"data":{"color":"red"}}"#,
        ],
    );
    let start = Instant::now();
    eventually(
        fed,
        Duration::from_secs(5),
        "the drift is reverted within 5 s",
        || {
            let c = member_get(f.member("eu"), &k, &cm)?;
            (c["data"]["color"] == "blue").then_some(())
        },
    )
    .await;
    assert!(start.elapsed() < Duration::from_secs(5));
    // Report: the change stays, the Placement says who changed what.
    cli::ok(
        &k,
        fed,
        &[
            "annotate",
            "configmap",
            "cfg",
            "-n",
            "default",
            "skein.io/drift=Report",
        ],
    );
    f.member("us").kubectl(
        &k,
        &[
            "patch",
            "configmap",
            "cfg",
            "-n",
            "default",
            "-p",
            r#"{"data":{"color":"red"}}"#,
        ],
    );
    let p = eventually(fed, Duration::from_secs(20), "us marked Drifted", || {
        let p = cli::get_json(
            &k,
            fed,
            &["get", "placement", "configmap-cfg", "-n", "default"],
        );
        let us = p["status"]["clusters"]
            .as_array()?
            .iter()
            .find(|c| c["name"] == "us")?
            .clone();
        (us["state"] == "Drifted").then_some(us)
    })
    .await;
    let message = p["message"].as_str().unwrap_or_default();
    assert!(
        message.contains("data.color") && message.contains("kubectl-patch"),
        "{p:#}"
    );
    let c = member_get(f.member("us"), &k, &cm).expect("the us copy");
    assert_eq!(c["data"]["color"], "red", "Report leaves the change");
    let described = cli::ok(&k, fed, &["describe", "configmap", "cfg", "-n", "default"]);
    assert!(
        described.contains("Drifted") && described.contains("cluster us"),
        "{described}"
    );

    // Conflict: Abort leaves a foreign object alone; Adopt takes it over.
    f.member("ap").kubectl(
        &k,
        &[
            "create",
            "configmap",
            "taken",
            "-n",
            "default",
            "--from-literal=owner=ap",
        ],
    );
    let mut taken = configmap("taken", json!({}));
    taken["metadata"]["labels"] = json!({"app": "taken"});
    apply(&k, fed, "taken", &[taken]);
    let p = eventually(fed, Duration::from_secs(20), "ap reports Conflict", || {
        // The Placement appears once the syncer has recorded the object.
        let p = cli::get_json(
            &k,
            fed,
            &[
                "get",
                "placements",
                "-n",
                "default",
                "--field-selector",
                "metadata.name=configmap-taken",
            ],
        )["items"]
            .get(0)?
            .clone();
        let ap = p["status"]["clusters"]
            .as_array()?
            .iter()
            .find(|c| c["name"] == "ap")?
            .clone();
        (ap["state"] == "Conflict").then_some(ap)
    })
    .await;
    assert!(
        p["message"]
            .as_str()
            .is_some_and(|m| m.contains("not manage")),
        "{p:#}"
    );
    let theirs =
        member_get(f.member("ap"), &k, &["configmap", "taken", "-n", "default"]).expect("theirs");
    assert_eq!(
        theirs["data"],
        json!({"owner": "ap"}),
        "Abort leaves it alone"
    );
    cli::ok(
        &k,
        fed,
        &[
            "annotate",
            "configmap",
            "taken",
            "-n",
            "default",
            "skein.io/conflict-resolution=Adopt",
        ],
    );
    eventually(fed, Duration::from_secs(20), "ap's object adopted", || {
        let c = member_get(f.member("ap"), &k, &["configmap", "taken", "-n", "default"])?;
        (c["metadata"]["labels"]["federation.skein.io/managed-by"] == "default"
            && c["data"]["color"] == "blue")
            .then_some(())
    })
    .await;

    // A divided Job: parallelism and completions split over the members;
    // the federation's Job completes when every part has.
    apply(
        &k,
        fed,
        "job",
        &[json!({
            "apiVersion": "batch/v1", "kind": "Job",
            "metadata": {"name": "batch", "namespace": "default"},
            "spec": {
                "parallelism": 3, "completions": 6,
                "template": {"spec": {"restartPolicy": "Never",
                    "containers": [{"name": "work", "image": "busybox:1.36"}]}},
            },
        })],
    );
    let out = cli::ok(
        &k,
        fed,
        &[
            "wait",
            "--for=condition=complete",
            "job/batch",
            "-n",
            "default",
            "--timeout=60s",
        ],
    );
    assert!(out.contains("condition met"), "{out}");
    for c in ["eu", "us", "ap"] {
        let job = member_get(f.member(c), &k, &["job", "batch", "-n", "default"])
            .expect("a part on every member");
        assert_eq!(job["spec"]["parallelism"], 1, "{c}");
        assert_eq!(job["spec"]["completions"], 2, "{c}");
    }
    let job = cli::get_json(&k, fed, &["get", "job", "batch", "-n", "default"]);
    assert_eq!(job["status"]["succeeded"], 6, "{:#}", job["status"]);
}

/// Scenario 1 on etcd: the weighted split, its status and its Placement,
/// with the federation's objects in a real etcd.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn weighted_split_on_etcd() {
    let etcd = tokio::task::spawn_blocking(skein_tests::etcd::Etcd::start)
        .await
        .expect("start etcd");
    let dir = tempfile::tempdir().expect("tempdir");
    let (k, _) = kubectls();
    let servers = format!("--etcd-servers={}", etcd.endpoint());
    let f = Federation::start(
        dir.path(),
        &k,
        &[&servers, "--etcd-prefix=/propagation-e2e"],
        &REGIONS,
    )
    .await;
    weighted_split(&f, &k, &k).await;
}

/// Every member object carrying Skein's marker, as `kind/namespace/name`.
fn managed_on(m: &Member, k: &Path, kinds: &str) -> Vec<String> {
    let out = m.kubectl(
        k,
        &[
            "get",
            kinds,
            "-A",
            "-l",
            "federation.skein.io/managed-by",
            "-o",
            "json",
        ],
    );
    let list: Value = serde_json::from_str(&out).expect("kubectl -o json");
    let mut names: Vec<String> = list["items"]
        .as_array()
        .map(|items| {
            items
                .iter()
                .map(|o| {
                    format!(
                        "{}/{}/{}",
                        o["kind"].as_str().unwrap_or(""),
                        o["metadata"]["namespace"].as_str().unwrap_or(""),
                        o["metadata"]["name"].as_str().unwrap_or("")
                    )
                })
                .collect()
        })
        .unwrap_or_default();
    names.sort();
    names
}

/// Scenario 11: SIGKILL of the federation during a fan-out of 200
/// objects; after a restart every object converges and no member holds a
/// stray or doubled copy.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn restart_during_fan_out() {
    let dir = tempfile::tempdir().expect("tempdir");
    let (k, _) = kubectls();
    let mut f = Federation::start(dir.path(), &k, &[], &REGIONS).await;
    let objects: Vec<Value> = (0..200)
        .map(|i| {
            let mut cm = configmap(&format!("cm-{i:03}"), json!({}));
            cm["metadata"]["namespace"] = json!("fan");
            cm
        })
        .collect();
    let mut all =
        vec![json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "fan"}})];
    all.extend(objects);
    apply(&k, &f.fed, "fan", &all);
    // Kill it while copies are being made.
    eventually(
        &f.fed,
        Duration::from_secs(30),
        "the fan-out under way",
        || {
            let n = managed_on(f.member("eu"), &k, "configmaps").len();
            (n > 0).then_some(())
        },
    )
    .await;
    f.fed
        .stop_with(nix::sys::signal::Signal::SIGKILL, Duration::from_secs(10))
        .await;
    // A few objects are deleted right after the restart, racing the resync.
    f.fed = Server::start(
        &dir.path().join("federation"),
        &["--cluster-probe-period=1s"],
    )
    .await;
    for i in 0..10 {
        cli::ok(
            &k,
            &f.fed,
            &[
                "delete",
                "configmap",
                &format!("cm-{i:03}"),
                "-n",
                "fan",
                "--wait=false",
            ],
        );
    }
    let want: Vec<String> = (10..200)
        .map(|i| format!("ConfigMap/fan/cm-{i:03}"))
        .collect();
    for c in ["eu", "us", "ap"] {
        eventually(
            &f.fed,
            Duration::from_secs(90),
            &format!("exactly the 190 live objects on {c}"),
            || {
                let got: Vec<String> = managed_on(f.member(c), &k, "configmaps")
                    .into_iter()
                    .filter(|n| n.starts_with("ConfigMap/fan/"))
                    .collect();
                (got == want).then_some(())
            },
        )
        .await;
    }
    // Every live object's Placement reports all three copies applied.
    eventually(
        &f.fed,
        Duration::from_secs(60),
        "all Placements synced",
        || {
            let list = cli::get_json(&k, &f.fed, &["get", "placements", "-n", "fan"]);
            let items = list["items"].as_array()?.clone();
            (items.len() == 190 && items.iter().all(|p| p["status"]["summary"]["synced"] == 3))
                .then_some(())
        },
    )
    .await;

    // A clean restart (SIGTERM) writes nothing the members already hold:
    // the only write each member sees afterwards is the one new copy.
    let before: Vec<u64> = ["eu", "us", "ap"]
        .iter()
        .map(|c| member_writes(f.member(c), &k))
        .collect();
    f.fed
        .stop_with(nix::sys::signal::Signal::SIGTERM, Duration::from_secs(10))
        .await;
    f.fed = Server::start(
        &dir.path().join("federation"),
        &["--cluster-probe-period=1s"],
    )
    .await;
    let mut after_restart = configmap("after-restart", json!({}));
    after_restart["metadata"]["namespace"] = json!("fan");
    apply(&k, &f.fed, "after-restart", &[after_restart]);
    for c in ["eu", "us", "ap"] {
        eventually(
            &f.fed,
            Duration::from_secs(60),
            &format!("the new ConfigMap on {c}"),
            || {
                member_get(
                    f.member(c),
                    &k,
                    &["configmap", "after-restart", "-n", "fan"],
                )
            },
        )
        .await;
    }
    tokio::time::sleep(Duration::from_secs(2)).await;
    // The federation's per-cluster series.
    let metrics = String::from_utf8_lossy(&f.fed.kubectl(&k, &["get", "--raw", "/metrics"]).stdout)
        .into_owned();
    let value = |series: &str| -> Option<f64> {
        metrics
            .lines()
            .find(|l| l.starts_with(series) && l[series.len()..].starts_with(' '))
            .and_then(|l| l.rsplit(' ').next()?.parse().ok())
    };
    for c in ["eu", "us", "ap"] {
        assert_eq!(
            value(&format!(
                "skein_federation_cluster_ready{{cluster=\"{c}\"}}"
            )),
            Some(1.0),
            "{c} Ready in /metrics:\n{metrics}"
        );
        assert_eq!(
            value(&format!(
                "skein_federation_copies{{cluster=\"{c}\",state=\"Applied\"}}"
            )),
            // 190 ConfigMaps, the new one and the Namespace `fan`.
            Some(192.0),
            "{c}'s applied copies in /metrics:\n{metrics}"
        );
        assert!(
            value(&format!(
                "skein_federation_propagation_duration_seconds_count{{cluster=\"{c}\"}}"
            ))
            .is_some_and(|n| n >= 191.0),
            "{c}'s submit-to-applied count in /metrics:\n{metrics}"
        );
        assert!(
            value(&format!(
                "skein_federation_member_request_duration_seconds_count{{cluster=\"{c}\",verb=\"APPLY\",code=\"200\"}}"
            ))
            .is_some_and(|n| n >= 1.0),
            "{c}'s applies in /metrics:\n{metrics}"
        );
        assert_eq!(
            value(&format!(
                "skein_federation_sync_queue_depth{{cluster=\"{c}\"}}"
            )),
            Some(0.0),
            "{c}'s queue in /metrics:\n{metrics}"
        );
    }
    for (c, before) in ["eu", "us", "ap"].iter().zip(before) {
        let after = member_writes(f.member(c), &k);
        assert_eq!(
            after - before,
            1,
            "write requests on {c} after a restart of the federation (only the new copy's \
             apply is expected; 190 copies were unchanged)"
        );
    }
}

/// The member's write requests so far (every verb that writes, from its
/// `apiserver_request_total`).
fn member_writes(m: &Member, k: &Path) -> u64 {
    skein_tests::metrics::writes(&m.kubectl(k, &["get", "--raw", "/metrics"]))
}

/// Unjoining a cluster deletes the federation's copies on it; `--orphan`
/// leaves them without Skein's markers.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn unjoin_removes_or_orphans_copies() {
    let dir = tempfile::tempdir().expect("tempdir");
    let (k, _) = kubectls();
    let f = Federation::start(dir.path(), &k, &[], &[("eu", "eu"), ("us", "us")]).await;
    let fed = &f.fed;
    apply(&k, fed, "cfg", &[configmap("cfg", json!({}))]);
    let cm = ["configmap", "cfg", "-n", "default"];
    eventually(fed, Duration::from_secs(30), "cfg on eu and us", || {
        let on: Vec<&str> = ["eu", "us"]
            .into_iter()
            .filter(|c| member_get(f.member(c), &k, &cm).is_some())
            .collect();
        (on.len() == 2).then_some(())
    })
    .await;
    let kubeconfig = fed.kubeconfig().to_string_lossy().into_owned();
    let unjoin = |args: &[&str]| {
        let out = std::process::Command::new(skein_tests::skein_bin())
            .args(args)
            .args(["--federation-kubeconfig", &kubeconfig])
            .env_remove("KUBECONFIG")
            .output()
            .expect("run skein unjoin");
        assert!(
            out.status.success(),
            "skein {args:?}: {}\n{}\n--- federation:\n{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr),
            controller_log(fed)
        );
        String::from_utf8_lossy(&out.stdout).into_owned()
    };
    let out = unjoin(&["unjoin", "us"]);
    assert!(
        out.contains("removing the federation's copies") && out.contains("cluster \"us\" deleted"),
        "{out}"
    );
    assert!(
        member_get(f.member("us"), &k, &cm).is_none(),
        "the copy on us is deleted"
    );
    let out = unjoin(&["unjoin", "eu", "--orphan"]);
    assert!(out.contains("orphaning"), "{out}");
    let left = member_get(f.member("eu"), &k, &cm).expect("the orphaned copy stays on eu");
    assert!(
        left["metadata"]["labels"]
            .get("federation.skein.io/managed-by")
            .is_none(),
        "{left:#}"
    );
    let clusters = cli::ok(&k, fed, &["get", "clusters", "-o", "name"]);
    assert!(clusters.trim().is_empty(), "{clusters}");
    // The federated object stays, placed nowhere.
    cli::ok(&k, fed, &["get", "configmap", "cfg", "-n", "default"]);
}

/// The member's object as JSON; `None` when it has none or does not serve
/// its resource (yet).
fn member_try_get(m: &Member, k: &Path, args: &[&str]) -> Option<Value> {
    let out = std::process::Command::new(k)
        .arg("--kubeconfig")
        .arg(m.kubeconfig_path())
        .args(["get", "-o", "json", "--ignore-not-found"])
        .args(args)
        .env_remove("KUBECONFIG")
        .stdin(std::process::Stdio::null())
        .output()
        .expect("run kubectl");
    let text = String::from_utf8_lossy(&out.stdout);
    if !out.status.success() || text.trim().is_empty() {
        return None;
    }
    Some(serde_json::from_str(&text).expect("kubectl -o json"))
}

/// Which of eu, us, ap hold `args`, a reference to a custom resource some
/// members may not serve.
fn custom_holders(f: &Federation, k: &Path, args: &[&str]) -> Vec<String> {
    ["eu", "us", "ap"]
        .iter()
        .filter(|c| member_try_get(f.member(c), k, args).is_some())
        .map(|c| (*c).to_owned())
        .collect()
}

/// A namespaced CRD `widgets.example.com` with one version and a status
/// subresource, placed by `annotations`.
/// The `federation.skein.io/decision` annotation of `kubectl create
/// --dry-run=server -f path`, parsed; `None` when missing or not JSON.
fn dry_run_decision(k: &Path, fed: &Server, path: &Path) -> Option<Value> {
    let dry = cli::get_json(
        k,
        fed,
        &["create", "--dry-run=server", "-f", &path.to_string_lossy()],
    );
    serde_json::from_str(dry["metadata"]["annotations"]["federation.skein.io/decision"].as_str()?)
        .ok()
}

fn widget_crd(annotations: Value) -> Value {
    json!({
        "apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
        "metadata": {"name": "widgets.example.com", "annotations": annotations},
        "spec": {
            "group": "example.com",
            "scope": "Namespaced",
            "names": {"plural": "widgets", "singular": "widget", "kind": "Widget", "listKind": "WidgetList"},
            "versions": [{
                "name": "v1", "served": true, "storage": true,
                "subresources": {"status": {}},
                "schema": {"openAPIV3Schema": {
                    "type": "object",
                    "properties": {
                        "spec": {"type": "object", "properties": {"size": {"type": "integer"}}},
                        "status": {"type": "object", "properties": {"phase": {"type": "string"}}},
                    },
                }},
            }],
        },
    })
}

/// CustomResourceDefinitions propagate like any cluster-scoped object, and
/// their custom resources once the CRD is established on the federation:
/// a member that does not serve the resource (yet) is excluded with
/// `MissingAPI` until its inventory shows it; Skein's own CRDs stay on the
/// federation; deleting the object removes its copies.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn custom_resources_and_their_crds() {
    let dir = tempfile::tempdir().expect("tempdir");
    let (k, k_old) = kubectls();
    let f = Federation::start(dir.path(), &k, &[], &REGIONS).await;
    let fed = &f.fed;

    // The CRD goes to eu and us only.
    apply(
        &k,
        fed,
        "crd",
        &[widget_crd(json!({"skein.io/clusters": "eu,us"}))],
    );
    let crd = ["crd", "widgets.example.com"];
    eventually(fed, Duration::from_secs(30), "the CRD on eu and us", || {
        (holders(&f, &k, &crd) == ["eu", "us"]).then_some(())
    })
    .await;
    let copy = member_get(f.member("eu"), &k, &crd).expect("eu's CRD");
    assert_eq!(
        copy["metadata"]["labels"]["federation.skein.io/managed-by"], "default",
        "{copy:#}"
    );
    assert!(
        copy["metadata"]["annotations"]
            .get("skein.io/clusters")
            .is_none(),
        "placement annotations stay on the federation: {copy:#}"
    );
    // Skein's own API never leaves the federation.
    for m in ["eu", "us", "ap"] {
        if let Some(own) = member_get(f.member(m), &k, &["crd", "clusters.federation.skein.io"]) {
            assert!(
                own["metadata"]["labels"]
                    .get("federation.skein.io/managed-by")
                    .is_none(),
                "{m}: the federation's own CRD was copied: {own:#}"
            );
        }
    }

    // A Widget placed everywhere lands where its API is served; ap, which
    // was not given the CRD, is excluded with MissingAPI.
    let widget = json!({
        "apiVersion": "example.com/v1", "kind": "Widget",
        "metadata": {"name": "w1", "namespace": "default"},
        "spec": {"size": 3},
    });
    apply(&k_old, fed, "w1", std::slice::from_ref(&widget));
    let w1 = ["widgets.example.com", "w1", "-n", "default"];
    eventually(fed, Duration::from_secs(45), "w1 on eu and us", || {
        (custom_holders(&f, &k, &w1) == ["eu", "us"]).then_some(())
    })
    .await;
    let p = eventually(
        fed,
        Duration::from_secs(15),
        "w1's placement names ap as MissingAPI",
        || {
            let p = cli::get_json(&k, fed, &["get", "placement", "widget-w1", "-n", "default"]);
            p["status"]["decision"]["excluded"]
                .as_array()
                .is_some_and(|ex| {
                    ex.iter()
                        .any(|e| e["name"] == "ap" && e["reason"] == "MissingAPI")
                })
                .then_some(p)
        },
    )
    .await;
    assert_eq!(p["status"]["summary"]["clusters"], 2, "{p:#}");
    // A dry run of another Widget previews the same decision: the CRD's
    // copies on eu and us count as soon as they are Ready, long before
    // the members' next discovery (5 minutes).
    let path = fed.data_dir.join("w2-dry.json");
    let mut w2 = widget.clone();
    w2["metadata"]["name"] = json!("w2");
    fs::write(&path, w2.to_string()).expect("write a manifest");
    let preview = eventually(
        fed,
        Duration::from_secs(30),
        "the dry run of w2 places it on eu and us",
        || dry_run_decision(&k, fed, &path).filter(|d| d["clusters"] == json!(["eu", "us"])),
    )
    .await;
    assert_eq!(
        preview["excluded"],
        json!({"ap": "MissingAPI"}),
        "{preview:#}"
    );

    // A change of the template reaches the copies.
    let mut bigger = widget.clone();
    bigger["spec"]["size"] = json!(5);
    apply(&k, fed, "w1", &[bigger]);
    eventually(fed, Duration::from_secs(30), "size 5 on eu and us", || {
        ["eu", "us"]
            .iter()
            .all(|m| {
                member_try_get(f.member(m), &k, &w1)
                    .is_some_and(|w| w.pointer("/spec/size") == Some(&json!(5)))
            })
            .then_some(())
    })
    .await;

    // Deleting the Widget, then the CRD, removes their copies.
    cli::ok(
        &k,
        fed,
        &["delete", "widgets.example.com", "w1", "-n", "default"],
    );
    eventually(
        fed,
        Duration::from_secs(30),
        "w1 gone from the members",
        || custom_holders(&f, &k, &w1).is_empty().then_some(()),
    )
    .await;
    cli::ok(&k, fed, &["delete", "crd", "widgets.example.com"]);
    eventually(
        fed,
        Duration::from_secs(30),
        "the CRD gone from the members",
        || holders(&f, &k, &crd).is_empty().then_some(()),
    )
    .await;

    // The CRD created again, now serving v2 only: its Widgets propagate
    // again, in the new version.
    let mut v2 = widget_crd(json!({"skein.io/clusters": "eu,us"}));
    v2["spec"]["versions"][0]["name"] = json!("v2");
    apply(&k, fed, "crd-v2", &[v2]);
    eventually(
        fed,
        Duration::from_secs(30),
        "the v2 CRD on eu and us",
        || (holders(&f, &k, &crd) == ["eu", "us"]).then_some(()),
    )
    .await;
    let w3 = json!({
        "apiVersion": "example.com/v2", "kind": "Widget",
        "metadata": {"name": "w3", "namespace": "default"},
        "spec": {"size": 7},
    });
    apply(&k, fed, "w3", &[w3]);
    let w3 = ["widgets.example.com", "w3", "-n", "default"];
    eventually(
        fed,
        Duration::from_secs(45),
        "w3 on eu and us in v2",
        || {
            ["eu", "us"]
                .iter()
                .all(|m| {
                    member_try_get(f.member(m), &k, &w3).is_some_and(|w| {
                        w["apiVersion"] == "example.com/v2"
                            && w.pointer("/spec/size") == Some(&json!(7))
                    })
                })
                .then_some(())
        },
    )
    .await;
    assert!(
        member_try_get(f.member("ap"), &k, &w3).is_none(),
        "ap has no copy"
    );
}
