//! A namespace far larger than one etcd gRPC response (4 MiB by default):
//! 55 ConfigMaps of 1 MB (55 MB), created over HTTPS against a real
//! `skein serve`, on etcd and on the embedded store. Then what users do
//! with it must work: a raw list returns every item, `kubectl get cm`
//! lists them, `limit`/`continue` pages through one snapshot, a watch from
//! before the writes replays them, the garbage collector still collects,
//! and deleting the namespace empties and removes it.
//!
//! Each test prints how long the 55 MB list took
//! (`cargo test --test large -- --nocapture`).

use std::time::{Duration, Instant};

use serde_json::{Value, json};
use skein_tests::cli;
use skein_tests::etcd::Etcd;
use skein_tests::http::{Api, items};
use skein_tests::server::Server;

const NS: &str = "big";
const COUNT: usize = 55;
/// Bytes of data per ConfigMap: under upstream's 1 MiB ConfigMap limit.
const DATA_BYTES: usize = 1_000_000;

fn name(i: usize) -> String {
    format!("cm-{i:02}")
}

/// ConfigMap `i`'s data value: 1 MB, unique to `i`.
fn blob(i: usize) -> String {
    let tag = format!("{} ", name(i));
    let fill = char::from(b'a' + (i % 26) as u8);
    let mut s = String::with_capacity(DATA_BYTES);
    s.push_str(&tag);
    s.extend(std::iter::repeat_n(fill, DATA_BYTES - tag.len()));
    s
}

fn configmap(name: &str, data: &str) -> Value {
    json!({
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {"name": name},
        "data": {"blob": data},
    })
}

/// The ConfigMap the root CA publisher puts in every namespace (if this
/// build has one); the assertions look past it.
const ROOT_CA: &str = "kube-root-ca.crt";

/// The names in `list`, without [`ROOT_CA`].
fn names(list: &Value) -> Vec<String> {
    items(list)
        .iter()
        .map(|o| {
            o["metadata"]["name"]
                .as_str()
                .unwrap_or_default()
                .to_owned()
        })
        .filter(|n| n != ROOT_CA)
        .collect()
}

fn rv(obj: &Value) -> String {
    obj["metadata"]["resourceVersion"]
        .as_str()
        .unwrap_or_default()
        .to_owned()
}

const CMS: &str = "/api/v1/namespaces/big/configmaps";

/// Creates the 55 ConfigMaps, 8 requests at a time.
async fn fill(api: &Api) {
    let mut next = 0;
    while next < COUNT {
        let mut batch = tokio::task::JoinSet::new();
        for i in next..(next + 8).min(COUNT) {
            let api = api.clone();
            batch.spawn(async move {
                let created = api.post(CMS, &configmap(&name(i), &blob(i))).await;
                created.expect(201);
            });
        }
        while let Some(done) = batch.join_next().await {
            done.expect("create task");
        }
        next += 8;
    }
}

/// Polls `path` until it answers 404, for up to `wait`.
async fn wait_gone(api: &Api, path: &str, wait: Duration) {
    let deadline = Instant::now() + wait;
    loop {
        let reply = api.get(path).await;
        if reply.status == 404 {
            return;
        }
        assert!(
            Instant::now() < deadline,
            "{path} still answers {} after {wait:?}",
            reply.status
        );
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
}

async fn scenario(server: &Server, backend: &str) {
    let api = Api::new(server);
    api.post(
        "/api/v1/namespaces",
        &json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": NS}}),
    )
    .await
    .expect(201);
    let before = rv(&api.get(CMS).await.expect(200));
    let started = Instant::now();
    fill(&api).await;
    println!(
        "{backend}: creating {COUNT} ConfigMaps of {DATA_BYTES} bytes took {:?}",
        started.elapsed()
    );
    let want: Vec<String> = (0..COUNT).map(name).collect();

    // A raw list: 200 with every item, whole.
    let started = Instant::now();
    let list = api.get(CMS).await;
    let took = started.elapsed();
    let list = list.expect(200);
    println!(
        "{backend}: GET {CMS} ({} MB) took {took:?}",
        COUNT * DATA_BYTES / 1_000_000
    );
    assert_eq!(list["kind"], "ConfigMapList");
    assert_eq!(names(&list), want);
    for (i, cm) in items(&list).iter().take(COUNT).enumerate() {
        assert!(cm["data"]["blob"] == blob(i), "data of {}", name(i));
    }
    let snapshot = rv(&list);

    // kubectl lists them (as a Table, in chunks of 500).
    for kubectl in skein_tests::kubectl_binaries() {
        let started = Instant::now();
        let out = cli::ok(&kubectl, server, &["get", "cm", "-n", NS]);
        println!(
            "{backend}: kubectl {} get cm took {:?}",
            kubectl.display(),
            started.elapsed()
        );
        let mut lines = out.lines();
        let header: Vec<&str> = lines
            .next()
            .unwrap_or_default()
            .split_whitespace()
            .collect();
        assert_eq!(header, ["NAME", "DATA", "AGE"], "{out}");
        let rows: Vec<Vec<&str>> = lines.map(|l| l.split_whitespace().collect()).collect();
        let rows: Vec<&Vec<&str>> = rows.iter().filter(|r| r[0] != ROOT_CA).collect();
        let listed: Vec<&str> = rows.iter().map(|r| r[0]).collect();
        assert_eq!(listed, want, "{out}");
        assert!(rows.iter().all(|r| r[1] == "1"), "{out}");
    }

    // limit/continue: three pages of one snapshot, even with a write
    // between them.
    let first = api.get(&format!("{CMS}?limit=20")).await.expect(200);
    assert_eq!(names(&first), want[..20]);
    let token = first["metadata"]["continue"].as_str().unwrap_or_default();
    assert!(!token.is_empty(), "first page has a continue token");
    api.post(CMS, &configmap("cm-00a-late", "late"))
        .await
        .expect(201);
    let second = api
        .get(&format!("{CMS}?limit=20&continue={token}"))
        .await
        .expect(200);
    assert_eq!(names(&second), want[20..40]);
    let token = second["metadata"]["continue"].as_str().unwrap_or_default();
    assert!(!token.is_empty(), "second page has a continue token");
    let third = api
        .get(&format!("{CMS}?limit=20&continue={token}"))
        .await
        .expect(200);
    assert_eq!(names(&third), want[40..]);
    assert!(
        third["metadata"].get("continue").is_none_or(|c| c == ""),
        "the last page has no continue token: {}",
        third["metadata"]
    );
    for page in [&first, &second, &third] {
        assert_eq!(
            rv(page),
            snapshot,
            "every page is read at the first page's revision"
        );
    }
    let now = api.get(CMS).await.expect(200);
    assert_eq!(names(&now).len(), COUNT + 1, "the late write is there now");

    // A watch from before the writes replays all of them.
    let mut watch = api
        .watch(&format!("{CMS}?watch=1&resourceVersion={before}"))
        .await;
    let mut replayed = Vec::new();
    while replayed.len() < COUNT + 1 {
        let event = watch.event_within(Duration::from_secs(20)).await;
        assert_eq!(event["type"], "ADDED", "replayed {} events", replayed.len());
        let name = event["object"]["metadata"]["name"]
            .as_str()
            .unwrap_or_default();
        if name != ROOT_CA {
            replayed.push(name.to_owned());
        }
    }
    replayed.sort();
    let mut all = want.clone();
    all.push("cm-00a-late".into());
    all.sort();
    assert_eq!(replayed, all);
    drop(watch);

    // The garbage collector still works: it lists everything (55 MB) first.
    let owner = api.post(CMS, &configmap("owner", "o")).await.expect(201);
    let mut dependent = configmap("dependent", "d");
    dependent["metadata"]["ownerReferences"] = json!([{
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "name": "owner",
        "uid": owner["metadata"]["uid"],
    }]);
    api.post(CMS, &dependent).await.expect(201);
    api.delete(&format!("{CMS}/owner")).await.expect(200);
    wait_gone(&api, &format!("{CMS}/dependent"), Duration::from_secs(20)).await;

    // Deleting the namespace empties it (the controller lists it whole).
    api.delete(&format!("/api/v1/namespaces/{NS}"))
        .await
        .expect(200);
    wait_gone(
        &api,
        &format!("/api/v1/namespaces/{NS}"),
        Duration::from_secs(30),
    )
    .await;
    let left = api.get("/api/v1/configmaps").await.expect(200);
    assert!(
        items(&left)
            .iter()
            .all(|cm| cm["metadata"]["namespace"] != NS),
        "no ConfigMap of {NS} is left"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn fifty_five_megabytes_on_etcd() {
    let etcd = tokio::task::spawn_blocking(Etcd::start)
        .await
        .expect("start etcd");
    let dir = tempfile::tempdir().expect("tempdir");
    let flag = format!("--etcd-servers={}", etcd.endpoint());
    let server = Server::start(&dir.path().join("data"), &[&flag]).await;
    scenario(&server, "etcd").await;
    assert!(
        !server.logs().contains("garbage collector restarting"),
        "the collector never failed:\n{}",
        server.logs()
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn fifty_five_megabytes_on_the_embedded_store() {
    let dir = tempfile::tempdir().expect("tempdir");
    let server = Server::start(&dir.path().join("data"), &[]).await;
    scenario(&server, "embedded").await;
    assert!(
        !server.logs().contains("garbage collector restarting"),
        "the collector never failed:\n{}",
        server.logs()
    );
}
