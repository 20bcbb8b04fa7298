//! The Grafana dashboard (`charts/skein/dashboards/skein-federation.json`)
//! against a real federation: every metric a panel's PromQL names is one
//! the federation serves on `/metrics`, once the events the panels count
//! have happened (a copy applied, a member refusal retried, a member watch
//! restarted, a cluster excluded by the scheduler).

use std::collections::BTreeSet;
use std::path::Path;
use std::time::{Duration, Instant};

use serde_json::{Value, json};
use skein_tests::member::{Federation, apply};
use skein_tests::{cli, kubectl_binaries};

fn dashboard() -> Value {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../charts/skein/dashboards/skein-federation.json");
    let text = std::fs::read_to_string(&path)
        .unwrap_or_else(|e| panic!("reading {}: {e}", path.display()));
    serde_json::from_str(&text).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// Every panel's PromQL expressions.
fn expressions(d: &Value) -> Vec<(String, String)> {
    let panels = d["panels"].as_array().expect("panels");
    assert!(!panels.is_empty(), "the dashboard has no panel");
    let mut out = Vec::new();
    for p in panels {
        let title = p["title"].as_str().expect("a panel title").to_owned();
        let targets = p["targets"].as_array().expect("panel targets");
        assert!(!targets.is_empty(), "panel {title:?} has no query");
        for t in targets {
            let expr = t["expr"].as_str().expect("a target expr").to_owned();
            out.push((title.clone(), expr));
        }
    }
    out
}

/// The metric names an expression reads: identifiers of Skein's families
/// (not functions, labels or label values).
fn metric_names(expr: &str) -> BTreeSet<String> {
    let mut names = BTreeSet::new();
    let mut in_braces = 0usize;
    let mut in_quotes = false;
    let mut word = String::new();
    let flush = |word: &mut String, names: &mut BTreeSet<String>, in_braces: usize| {
        if in_braces == 0
            && ["skein_", "apiserver_", "process_", "etcd_"]
                .iter()
                .any(|p| word.starts_with(p))
        {
            names.insert(word.clone());
        }
        word.clear();
    };
    for ch in expr.chars() {
        if in_quotes {
            if ch == '"' {
                in_quotes = false;
            }
            continue;
        }
        match ch {
            'a'..='z' | 'A'..='Z' | '0'..='9' | '_' | ':' => word.push(ch),
            _ => {
                flush(&mut word, &mut names, in_braces);
                match ch {
                    '{' => in_braces += 1,
                    '}' => in_braces = in_braces.saturating_sub(1),
                    '"' => in_quotes = true,
                    _ => {}
                }
            }
        }
    }
    flush(&mut word, &mut names, in_braces);
    names
}

#[test]
fn names_are_read_from_promql() {
    let got = metric_names(
        "histogram_quantile(0.99, sum by (cluster, le) (rate(skein_federation_x_bucket{code!~\"2..\"}[5m])))",
    );
    assert_eq!(
        got,
        BTreeSet::from(["skein_federation_x_bucket".to_owned()])
    );
}

/// The sample names served on `/metrics` (the name before `{` or space).
fn served(metrics: &str) -> BTreeSet<String> {
    metrics
        .lines()
        .filter(|l| !l.starts_with('#'))
        .filter_map(|l| l.split(['{', ' ']).next())
        .map(str::to_owned)
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_panel_reads_a_served_metric() {
    let d = dashboard();
    let exprs = expressions(&d);
    let dir = tempfile::tempdir().expect("tempdir");
    let k = kubectl_binaries().first().expect("a kubectl").clone();
    let mut f = Federation::start(dir.path(), &k, &[], &[("eu", "eu")]).await;
    // A copy applied; a refusal retried (the override makes a ConfigMap key
    // the member rejects); a cluster excluded (an unknown name).
    apply(
        &k,
        &f.fed,
        "objects",
        &[
            json!({"apiVersion": "v1", "kind": "ConfigMap",
                "metadata": {"name": "fine", "namespace": "default"}, "data": {"a": "1"}}),
            json!({"apiVersion": "v1", "kind": "ConfigMap",
                "metadata": {"name": "refused", "namespace": "default", "annotations": {
                    "override.skein.io/eu": "{\"data\": {\"not a valid key!\": \"x\"}}"}},
                "data": {"a": "1"}}),
            json!({"apiVersion": "v1", "kind": "ConfigMap",
                "metadata": {"name": "elsewhere", "namespace": "default", "annotations": {
                    "skein.io/clusters": "eu,nowhere"}}, "data": {"a": "1"}}),
        ],
    );
    // A member watch restarted: the member stops and comes back before
    // its Cluster is marked not Ready.
    let m = f.member_mut("eu");
    m.stop();
    m.run().await;

    let wanted: BTreeSet<String> = exprs.iter().flat_map(|(_, e)| metric_names(e)).collect();
    let deadline = Instant::now() + Duration::from_secs(60);
    loop {
        let out = f.fed.kubectl(&k, &["get", "--raw", "/metrics"]);
        assert!(out.status.success(), "kubectl get --raw /metrics: {out:?}");
        let have = served(&String::from_utf8_lossy(&out.stdout));
        let missing: Vec<(&str, String)> = exprs
            .iter()
            .flat_map(|(title, e)| {
                metric_names(e)
                    .into_iter()
                    .filter(|n| !have.contains(n))
                    .map(move |n| (title.as_str(), n))
            })
            .collect();
        if missing.is_empty() {
            break;
        }
        assert!(
            Instant::now() < deadline,
            "panels read metrics the federation does not serve: {missing:?} (of {wanted:?})"
        );
        tokio::time::sleep(Duration::from_millis(500)).await;
    }
    // The copy that was fine is on the member.
    let got = cli::get_json(
        &k,
        &f.fed,
        &["get", "placement", "configmap-fine", "-n", "default"],
    );
    assert_eq!(got["status"]["summary"]["synced"], 1, "{got}");
}
