//! Cluster membership end to end: a federation (`skein serve`) and member
//! processes (`skein serve --role=member`), joined by creating the Secret
//! and the Cluster with kubectl (not the join CLI), observed through
//! `kubectl get clusters`, `kubectl describe cluster` (1.35 and 1.32) and
//! the stored Cluster objects.

use std::fs;
use std::time::{Duration, Instant};

use serde_json::{Value, json};
use skein_tests::cli::{self, cells, header};
use skein_tests::etcd::Etcd;
use skein_tests::http::Api;
use skein_tests::kubectl_binaries;
use skein_tests::member::{Member, SECRETS_NS, apply, cluster, join, secret};
use skein_tests::server::Server;

/// The stored Cluster.
async fn get_cluster(api: &Api, name: &str) -> Value {
    api.get(&format!(
        "/apis/federation.skein.io/v1alpha1/clusters/{name}"
    ))
    .await
    .expect(200)
}

fn ready(c: &Value) -> Value {
    c["status"]["conditions"]
        .as_array()
        .and_then(|cs| cs.iter().find(|x| x["type"] == "Ready"))
        .cloned()
        .unwrap_or(Value::Null)
}

/// Polls the Cluster until `done` holds; panics after `timeout` with the
/// last state and the federation's log tail.
async fn wait_for(
    api: &Api,
    fed: &Server,
    name: &str,
    timeout: Duration,
    what: &str,
    done: impl Fn(&Value) -> bool,
) -> Value {
    let start = Instant::now();
    loop {
        let c = get_cluster(api, name).await;
        if done(&c) {
            return c;
        }
        assert!(
            start.elapsed() < timeout,
            "cluster {name} not {what} within {timeout:?}: {:#}\n--- federation log tail:\n{}",
            c["status"],
            skein_tests::kubectl::log_tail(fed)
        );
        tokio::time::sleep(Duration::from_millis(250)).await;
    }
}

fn is_ready(c: &Value) -> bool {
    ready(c)["status"] == "True"
}

/// Seconds since the epoch of an RFC 3339 `YYYY-MM-DDTHH:MM:SSZ` time.
fn epoch_seconds(t: &str) -> i64 {
    let n = |r: std::ops::Range<usize>| -> i64 {
        t.get(r)
            .and_then(|s| s.parse().ok())
            .unwrap_or_else(|| panic!("not an RFC 3339 time: {t:?}"))
    };
    let (y, m, d) = (n(0..4), n(5..7), n(8..10));
    // Days from civil (Howard Hinnant's algorithm).
    let y = if m <= 2 { y - 1 } else { y };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let mp = (m + 9) % 12;
    let doy = (153 * mp + 2) / 5 + d - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    let days = era * 146_097 + doe - 719_468;
    days * 86_400 + n(11..13) * 3600 + n(14..16) * 60 + n(17..19)
}

/// `kubectl get clusters` (both kubectls): the default columns, and each
/// named cluster's row with READY and a v1.33 VERSION; returns 1.35's table.
fn assert_get_clusters(fed: &Server, names: &[&str], ready: &str, nodes: &str) -> String {
    let mut first = String::new();
    for k in &kubectl_binaries() {
        let table = cli::ok(k, fed, &["get", "clusters"]);
        assert_eq!(
            header(&table),
            ["NAME", "READY", "VERSION", "REGION", "NODES", "AGE"],
            "{table}"
        );
        for name in names {
            let row = cells(&table)
                .into_iter()
                .find(|r| r.first() == Some(name))
                .unwrap_or_else(|| panic!("no row for {name}:\n{table}"));
            assert_eq!(row[1], ready, "{name} READY:\n{table}");
            assert!(row[2].starts_with("v1.33."), "{name} VERSION:\n{table}");
            assert_eq!(row[row.len() - 2], nodes, "{name} NODES:\n{table}");
            assert!(cli::is_age(row[row.len() - 1]), "{name} AGE:\n{table}");
        }
        if first.is_empty() {
            first = table;
        }
    }
    first
}

/// `kubectl describe cluster NAME` (both kubectls) lists an Event with
/// `reason` whose line contains `text`.
fn assert_described_event(fed: &Server, name: &str, kind: &str, reason: &str, text: &str) {
    for k in &kubectl_binaries() {
        let out = cli::ok(k, fed, &["describe", "cluster", name]);
        let events = out
            .split("\nEvents:")
            .nth(1)
            .unwrap_or_else(|| panic!("describe shows no Events section:\n{out}"));
        assert!(
            events.lines().any(|l| {
                let c: Vec<&str> = l.split_whitespace().collect();
                c.first() == Some(&kind)
                    && c.get(1) == Some(&reason)
                    && l.contains("skein-cluster-controller")
                    && l.contains(text)
            }),
            "describe cluster {name} has no {kind} {reason} event mentioning {text:?}:\n{out}"
        );
    }
}

/// Three members on the default 10 s period: all become Ready; one
/// stopped turns `Ready=False` (`Unreachable`) within 40 s with a
/// `ClusterNotReady` Event while the others stay Ready and keep being
/// probed every period; started again on its port it is Ready again.
#[tokio::test]
async fn three_members_on_the_default_period() {
    let kubectls = kubectl_binaries();
    let k = &kubectls[0];
    let dir = tempfile::tempdir().expect("tempdir");
    let fed = Server::start(&dir.path().join("fed"), &[]).await;
    let names = ["eu-1", "us-1", "ap-1"];
    let mut members = Vec::new();
    for name in names {
        members.push(Member::start(&dir.path().join(name), &[]).await);
    }
    let joined: Vec<(&str, String)> = names
        .iter()
        .zip(&members)
        .map(|(n, m)| (*n, m.kubeconfig()))
        .collect();
    join(k, &fed, &joined);
    let api = Api::new(&fed);
    for name in names {
        let c = wait_for(&api, &fed, name, Duration::from_secs(15), "Ready", is_ready).await;
        let r = ready(&c);
        assert_eq!(r["reason"], "ClusterReady", "{c:#}");
        assert!(r["lastTransitionTime"].is_string(), "{c:#}");
        assert_eq!(c["status"]["observedGeneration"], 1, "{c:#}");
        let served = c["status"]["servedResources"]
            .as_array()
            .cloned()
            .unwrap_or_default();
        let gv = |g: &str| served.iter().find(|s| s["groupVersion"] == g).cloned();
        let core = gv("v1").unwrap_or_else(|| panic!("no v1 in servedResources: {c:#}"));
        assert!(
            core["resources"]
                .as_array()
                .is_some_and(|r| r.contains(&json!("pods")))
        );
        assert!(
            !core["resources"]
                .as_array()
                .is_some_and(|r| r.contains(&json!("pods/log"))),
            "subresources are not resources: {core}"
        );
        assert!(
            gv("apps/v1").is_some(),
            "no apps/v1 in servedResources: {c:#}"
        );
    }
    assert_get_clusters(&fed, &names, "True", "0");
    // The Federation counts them (`kubectl get federations`, which an
    // aggregated-mode host shows too).
    let deadline = Instant::now() + Duration::from_secs(15);
    loop {
        let table = cli::ok(k, &fed, &["get", "federations"]);
        let row = cells(&table)
            .into_iter()
            .find(|r| r.first() == Some(&"default"))
            .map(|r| r.iter().map(|c| c.to_string()).collect::<Vec<_>>());
        if row.as_ref().is_some_and(|r| {
            r.get(1..4) == Some(&["3".to_string(), "3".to_string(), "0".to_string()][..])
        }) {
            assert_eq!(
                header(&table),
                ["NAME", "CLUSTERS", "READY", "PLACEMENTS", "AGE"],
                "{table}"
            );
            break;
        }
        assert!(
            Instant::now() < deadline,
            "the Federation never counted 3 Ready clusters:\n{table}"
        );
        tokio::time::sleep(Duration::from_millis(250)).await;
    }

    // Stop us-1.
    members[1].stop();
    let stopped = Instant::now();
    let mut probes: Vec<Vec<i64>> = vec![Vec::new(); names.len()];
    let mut went_down: Option<Duration> = None;
    let down = loop {
        for (i, name) in names.iter().enumerate() {
            let c = get_cluster(&api, name).await;
            let t = epoch_seconds(c["status"]["lastProbeTime"].as_str().unwrap_or_default());
            if probes[i].last() != Some(&t) {
                probes[i].push(t);
            }
            if i != 1 {
                assert!(
                    is_ready(&c),
                    "{name} must stay Ready while us-1 is down: {c:#}"
                );
            } else if ready(&c)["status"] == "False" && went_down.is_none() {
                went_down = Some(stopped.elapsed());
            }
        }
        // Keep sampling the others for a while after us-1 went down.
        if went_down.is_some()
            && (probes[0].len() >= 4 || stopped.elapsed() > Duration::from_secs(40))
        {
            break get_cluster(&api, "us-1").await;
        }
        assert!(
            stopped.elapsed() < Duration::from_secs(45),
            "us-1 not Ready=False within 40s: {:#}\n{}",
            get_cluster(&api, "us-1").await["status"],
            skein_tests::kubectl::log_tail(&fed)
        );
        tokio::time::sleep(Duration::from_millis(250)).await;
    };
    let went_down = went_down.unwrap_or_default();
    assert!(
        went_down <= Duration::from_secs(40),
        "Ready=False after {went_down:?}"
    );
    let r = ready(&down);
    assert_eq!(r["reason"], "Unreachable", "{down:#}");
    assert!(
        r["message"].as_str().is_some_and(|m| m.contains("/readyz")),
        "{down:#}"
    );
    let transition = epoch_seconds(r["lastTransitionTime"].as_str().unwrap_or_default());
    // The healthy members were probed every period (10 s, give or take the
    // second lastProbeTime is rounded to) the whole time.
    for i in [0, 2] {
        let p = &probes[i];
        assert!(p.len() >= 3, "{}: too few probes seen: {p:?}", names[i]);
        for w in p.windows(2) {
            let gap = w[1] - w[0];
            assert!(
                (9..=11).contains(&gap),
                "{}: probes {gap}s apart: {p:?}",
                names[i]
            );
        }
    }
    assert_described_event(&fed, "us-1", "Warning", "ClusterNotReady", "Unreachable");
    let table = cli::ok(k, &fed, &["get", "clusters", "us-1"]);
    assert_eq!(cells(&table)[1][1], "False", "{table}");

    // Start it again where its kubeconfig points.
    members[1].run().await;
    let back = wait_for(
        &api,
        &fed,
        "us-1",
        Duration::from_secs(15),
        "Ready again",
        is_ready,
    )
    .await;
    assert!(
        epoch_seconds(
            ready(&back)["lastTransitionTime"]
                .as_str()
                .unwrap_or_default()
        ) > transition,
        "{back:#}"
    );
    assert_described_event(&fed, "us-1", "Normal", "ClusterReady", "is ready");
    assert_get_clusters(&fed, &names, "True", "0");
}

/// Credentials that cannot work: a wrong token (`Unauthorized`), a
/// kubeconfig with an exec plugin and a Secret that does not exist yet
/// (`InvalidCredentials`, with the reason in the message); a member that
/// never answers is `Unknown`, then `Unreachable` after the 3 s timeout;
/// creating the missing Secret makes its Cluster Ready. Then inventory from Nodes and
/// Pods created on the member by hand.
#[tokio::test]
async fn credentials_and_inventory() {
    let kubectls = kubectl_binaries();
    let k = &kubectls[0];
    let dir = tempfile::tempdir().expect("tempdir");
    let fed = Server::start(&dir.path().join("fed"), &["--cluster-probe-period=1s"]).await;
    let tokens = dir.path().join("tokens.csv");
    fs::write(&tokens, "good-token,alice,u1,system:masters\n").expect("write tokens");
    let token_flag = format!("--token-auth-file={}", tokens.display());
    let member = Member::start(&dir.path().join("m"), &[&token_flag]).await;
    let admin: Value = serde_json::from_str(&member.kubeconfig()).expect("kubeconfig is JSON");
    let with_user = |user: Value| {
        json!({
            "apiVersion": "v1", "kind": "Config", "current-context": "m",
            "clusters": [{"name": "m", "cluster": admin["clusters"][0]["cluster"]}],
            "users": [{"name": "u", "user": user}],
            "contexts": [{"name": "m", "context": {"cluster": "m", "user": "u"}}],
        })
        .to_string()
    };
    let wrong = with_user(json!({"token": "wrong-token"}));
    let exec = with_user(
        json!({"exec": {"apiVersion": "client.authentication.k8s.io/v1",
        "command": "aws", "args": ["eks", "get-token"]}}),
    );
    let good = with_user(json!({"token": "good-token"}));
    // A member that accepts connections and never answers.
    let silent = std::net::TcpListener::bind("127.0.0.1:0").expect("bind a silent port");
    let mut slow: Value = serde_json::from_str(&good).expect("JSON");
    slow["clusters"][0]["cluster"]["server"] = json!(format!(
        "https://{}",
        silent.local_addr().expect("silent address")
    ));
    let slow = slow.to_string();
    apply(
        k,
        &fed,
        "bad",
        &[
            json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": SECRETS_NS}}),
            secret("wrong", &wrong),
            cluster("wrong", "wrong"),
            secret("exec", &exec),
            cluster("exec", "exec"),
            cluster("late", "late"),
            secret("slow", &slow),
            cluster("slow", "slow"),
        ],
    );
    let api = Api::new(&fed);
    // Before its first probe answers (it times out after 3 s), Ready is
    // Unknown.
    let c = wait_for(&api, &fed, "slow", Duration::from_secs(2), "Unknown", |c| {
        ready(c)["status"] == "Unknown"
    })
    .await;
    assert_eq!(ready(&c)["reason"], "Pending", "{c:#}");
    let not_ready = |c: &Value| ready(c)["status"] == "False";
    let c = wait_for(
        &api,
        &fed,
        "wrong",
        Duration::from_secs(10),
        "False",
        not_ready,
    )
    .await;
    assert_eq!(ready(&c)["reason"], "Unauthorized", "{c:#}");
    assert!(
        ready(&c)["message"]
            .as_str()
            .is_some_and(|m| m.contains("401")),
        "{c:#}"
    );
    let c = wait_for(
        &api,
        &fed,
        "exec",
        Duration::from_secs(10),
        "False",
        not_ready,
    )
    .await;
    assert_eq!(ready(&c)["reason"], "InvalidCredentials", "{c:#}");
    assert!(
        ready(&c)["message"]
            .as_str()
            .is_some_and(|m| m.contains("exec plugin")),
        "{c:#}"
    );
    let c = wait_for(
        &api,
        &fed,
        "late",
        Duration::from_secs(10),
        "False",
        not_ready,
    )
    .await;
    assert_eq!(ready(&c)["reason"], "InvalidCredentials", "{c:#}");
    assert_eq!(
        ready(&c)["message"],
        "secret \"skein-system/late\" not found",
        "{c:#}"
    );
    let c = wait_for(
        &api,
        &fed,
        "slow",
        Duration::from_secs(10),
        "False",
        not_ready,
    )
    .await;
    assert_eq!(ready(&c)["reason"], "Unreachable", "{c:#}");
    assert!(
        ready(&c)["message"]
            .as_str()
            .is_some_and(|m| m.ends_with("/readyz: no answer within 3s")),
        "{c:#}"
    );
    for k in &kubectls {
        let out = cli::ok(k, &fed, &["describe", "cluster", "exec"]);
        assert!(out.contains("InvalidCredentials"), "{out}");
        assert!(out.contains("exec plugin"), "{out}");
    }
    assert_described_event(&fed, "wrong", "Warning", "ClusterNotReady", "Unauthorized");

    // The Secret arrives: the Cluster's worker restarts with it.
    apply(k, &fed, "late", &[secret("late", &good)]);
    let c = wait_for(
        &api,
        &fed,
        "late",
        Duration::from_secs(10),
        "Ready",
        is_ready,
    )
    .await;
    assert_eq!(c["status"]["nodes"], 0, "{c:#}");

    // Inventory from Nodes and Pods made by hand on the member.
    let node = |name: &str, zone: &str| {
        json!({"apiVersion": "v1", "kind": "Node",
            "metadata": {"name": name, "labels": {
                "topology.kubernetes.io/region": "eu", "topology.kubernetes.io/zone": zone}},
            "status": {"capacity": {"cpu": "4", "memory": "16Gi", "pods": "110"},
                       "allocatable": {"cpu": "4", "memory": "16Gi", "pods": "110"}}})
    };
    let nodes_file = dir.path().join("nodes.json");
    let list = json!({"apiVersion": "v1", "kind": "List",
        "items": [node("n1", "eu-a"), node("n2", "eu-b")]});
    fs::write(&nodes_file, list.to_string()).expect("write nodes");
    member.kubectl(k, &["create", "-f", &nodes_file.to_string_lossy()]);
    let c = wait_for(
        &api,
        &fed,
        "late",
        Duration::from_secs(10),
        "showing 2 Nodes",
        |c| c["status"]["nodes"] == 2,
    )
    .await;
    assert_eq!(c["status"]["region"], "eu", "{c:#}");
    assert_eq!(c["status"]["zones"], json!(["eu-a", "eu-b"]), "{c:#}");
    assert_eq!(
        c["status"]["allocatable"],
        json!({"cpu": "8", "memory": "32Gi", "pods": "220"}),
        "{c:#}"
    );
    assert_eq!(
        c["status"]["available"], c["status"]["allocatable"],
        "{c:#}"
    );
    let pod = json!({"apiVersion": "v1", "kind": "Pod",
        "metadata": {"name": "p", "namespace": "default"},
        "spec": {"nodeName": "n1", "containers": [{"name": "c", "image": "nginx",
            "resources": {"requests": {"cpu": "1500m", "memory": "1Gi"}}}]}});
    let pod_file = dir.path().join("pod.json");
    fs::write(&pod_file, pod.to_string()).expect("write pod");
    member.kubectl(k, &["create", "-f", &pod_file.to_string_lossy()]);
    let placed = Instant::now();
    let c = wait_for(
        &api,
        &fed,
        "late",
        Duration::from_secs(5),
        "lowering available CPU",
        |c| c["status"]["available"]["cpu"] == "6500m",
    )
    .await;
    assert!(
        placed.elapsed() < Duration::from_secs(3),
        "took {:?}",
        placed.elapsed()
    );
    assert_eq!(c["status"]["available"]["memory"], "31Gi", "{c:#}");
    assert_eq!(c["status"]["available"]["pods"], "219", "{c:#}");
    for k in &kubectls {
        let table = cli::ok(k, &fed, &["get", "clusters", "late", "-o", "wide"]);
        assert_eq!(
            header(&table),
            [
                "NAME", "READY", "VERSION", "REGION", "NODES", "ZONES", "CPU", "MEMORY", "AGE"
            ],
            "{table}"
        );
        let row = &cells(&table)[1];
        assert_eq!(
            (row[0], row[1], row[3], row[4], row[6], row[7]),
            ("late", "True", "eu", "2", "6500m", "31Gi"),
            "{table}"
        );
    }
}

/// The health scenario on etcd: a member joined, stopped (`Unreachable`)
/// and started again (Ready), with a short probe period.
#[tokio::test]
async fn health_on_etcd() {
    let kubectls = kubectl_binaries();
    let k = &kubectls[0];
    let etcd = tokio::task::spawn_blocking(Etcd::start)
        .await
        .expect("start etcd");
    let dir = tempfile::tempdir().expect("tempdir");
    let servers = format!("--etcd-servers={}", etcd.endpoint());
    let fed = Server::start(
        &dir.path().join("fed"),
        &[
            &servers,
            "--etcd-prefix=/members-e2e",
            "--cluster-probe-period=2s",
        ],
    )
    .await;
    let mut member = Member::start(&dir.path().join("m"), &[]).await;
    join(k, &fed, &[("eu-1", member.kubeconfig())]);
    let api = Api::new(&fed);
    wait_for(
        &api,
        &fed,
        "eu-1",
        Duration::from_secs(10),
        "Ready",
        is_ready,
    )
    .await;
    assert_get_clusters(&fed, &["eu-1"], "True", "0");
    member.stop();
    let stopped = Instant::now();
    let c = wait_for(
        &api,
        &fed,
        "eu-1",
        Duration::from_secs(15),
        "Ready=False",
        |c| ready(c)["status"] == "False",
    )
    .await;
    assert_eq!(ready(&c)["reason"], "Unreachable", "{c:#}");
    // Three failed probes, 2 s apart.
    assert!(
        stopped.elapsed() >= Duration::from_secs(3),
        "{:?}",
        stopped.elapsed()
    );
    assert_described_event(&fed, "eu-1", "Warning", "ClusterNotReady", "Unreachable");
    member.run().await;
    wait_for(
        &api,
        &fed,
        "eu-1",
        Duration::from_secs(10),
        "Ready again",
        is_ready,
    )
    .await;
    assert_described_event(&fed, "eu-1", "Normal", "ClusterReady", "is ready");
}

/// Inventory from a simulated member (needs the workload simulator): its
/// Nodes, region and zones, allocatable CPU, a bound Pod's request lowering
/// the available CPU within one probe period, then a Deployment's.
#[tokio::test]
async fn inventory_of_a_simulated_member() {
    let kubectls = kubectl_binaries();
    let k = &kubectls[0];
    let dir = tempfile::tempdir().expect("tempdir");
    let fed = Server::start(&dir.path().join("fed"), &["--cluster-probe-period=2s"]).await;
    let member = Member::start(
        &dir.path().join("m"),
        &[
            "--simulate-workloads",
            "--sim-nodes=2",
            "--sim-node-cpu=4",
            "--sim-region=eu",
            "--sim-zones=eu-a,eu-b",
        ],
    )
    .await;
    join(k, &fed, &[("eu-1", member.kubeconfig())]);
    let api = Api::new(&fed);
    let c = wait_for(
        &api,
        &fed,
        "eu-1",
        Duration::from_secs(15),
        "Ready with 2 Nodes",
        |c| is_ready(c) && c["status"]["nodes"] == 2,
    )
    .await;
    let member_nodes = member.kubectl(k, &["get", "nodes", "-o", "name"]);
    assert_eq!(member_nodes.lines().count(), 2, "{member_nodes}");
    assert_eq!(c["status"]["region"], "eu", "{c:#}");
    assert_eq!(c["status"]["zones"], json!(["eu-a", "eu-b"]), "{c:#}");
    assert_eq!(c["status"]["allocatable"]["cpu"], "8", "{c:#}");
    let cpu = |c: &Value| -> i64 {
        let s = c["status"]["available"]["cpu"].as_str().unwrap_or_default();
        match s.strip_suffix('m') {
            Some(m) => m.parse().unwrap_or(-1),
            None => s.parse::<i64>().map_or(-1, |v| v * 1000),
        }
    };
    let before = cpu(&c);
    assert!(before > 0, "{c:#}");
    // A Pod the simulated scheduler binds: within one probe period (2 s)
    // of its binding, the Cluster shows its CPU taken.
    let pod = json!({"apiVersion": "v1", "kind": "Pod",
        "metadata": {"name": "solo", "namespace": "default"},
        "spec": {"containers": [{"name": "c", "image": "nginx",
            "resources": {"requests": {"cpu": "250m"}}}]}});
    let file = dir.path().join("solo.json");
    fs::write(&file, pod.to_string()).expect("write the Pod");
    member.kubectl(k, &["create", "-f", &file.to_string_lossy()]);
    let start = Instant::now();
    while member
        .kubectl(
            k,
            &["get", "pod", "solo", "-o", "jsonpath={.spec.nodeName}"],
        )
        .is_empty()
    {
        assert!(
            start.elapsed() < Duration::from_secs(10),
            "Pod solo never bound"
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    let bound = Instant::now();
    wait_for(
        &api,
        &fed,
        "eu-1",
        Duration::from_secs(10),
        "with 250m CPU less available",
        |c| cpu(c) == before - 250,
    )
    .await;
    assert!(
        bound.elapsed() < Duration::from_millis(3500),
        "available CPU lowered {:?} after the binding",
        bound.elapsed()
    );
    // A Deployment's Pods (the simulator's Deployment controller).
    let before = before - 250;
    let deployment = json!({"apiVersion": "apps/v1", "kind": "Deployment",
        "metadata": {"name": "web", "namespace": "default"},
        "spec": {"replicas": 2, "selector": {"matchLabels": {"app": "web"}},
            "template": {"metadata": {"labels": {"app": "web"}},
                "spec": {"containers": [{"name": "web", "image": "nginx",
                    "resources": {"requests": {"cpu": "500m"}}}]}}}});
    let file = dir.path().join("web.json");
    fs::write(&file, deployment.to_string()).expect("write the Deployment");
    member.kubectl(k, &["create", "-f", &file.to_string_lossy()]);
    wait_for(
        &api,
        &fed,
        "eu-1",
        Duration::from_secs(20),
        "with 1 CPU less available",
        |c| cpu(c) == before - 1000,
    )
    .await;
    for k in &kubectls {
        let table = cli::ok(k, &fed, &["get", "clusters", "-o", "wide"]);
        let row = &cells(&table)[1];
        assert_eq!((row[3], row[4]), ("eu", "2"), "{table}");
    }
}
