//! The watch cache against a three-member etcd (issue 13): an etcd member
//! is killed while clients watch and writes go on. The cache's store watch
//! fails over (or relists); every watcher sees each acknowledged write
//! exactly once and in order, or gets a 410 and can list again; LISTs keep
//! answering with every acknowledged object.

#![allow(clippy::unwrap_used)] // tests: clippy's allow-unwrap-in-tests does not reach tests/ (rust-clippy#13981)

use std::time::{Duration, Instant};

use serde_json::{Value, json};
use skein_tests::etcd::Etcd;
use skein_tests::http::Api;
use skein_tests::server::Server;

const NS: &str = "/api/v1/namespaces/default/configmaps";

fn configmap(name: &str) -> Value {
    json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": name}})
}

/// One watch's decoded events so far, and whether it ended.
struct Watch {
    response: reqwest::Response,
    buffer: Vec<u8>,
    events: Vec<Value>,
    ended: bool,
}

impl Watch {
    async fn open(server: &Server, rv: &str) -> Watch {
        let response = server
            .client(true)
            .get(server.url(&format!("{NS}?watch=1&resourceVersion={rv}")))
            .send()
            .await
            .expect("start a watch");
        assert_eq!(response.status(), 200);
        Watch {
            response,
            buffer: Vec::new(),
            events: Vec::new(),
            ended: false,
        }
    }

    /// Reads until `done` holds for the events or `deadline` passes.
    async fn read_until(&mut self, deadline: Instant, done: impl Fn(&[Value]) -> bool) {
        while !self.ended && !done(&self.events) && Instant::now() < deadline {
            let left = deadline.saturating_duration_since(Instant::now());
            match tokio::time::timeout(left, self.response.chunk()).await {
                Err(_) => return,
                Ok(Ok(Some(chunk))) => {
                    self.buffer.extend_from_slice(&chunk);
                    while let Some(end) = self.buffer.iter().position(|b| *b == b'\n') {
                        let line: Vec<u8> = self.buffer.drain(..=end).collect();
                        let event: Value = serde_json::from_slice(&line).expect("a JSON event");
                        self.events.push(event);
                    }
                }
                Ok(Ok(None)) | Ok(Err(_)) => self.ended = true,
            }
        }
    }
}

fn names(events: &[Value]) -> Vec<String> {
    events
        .iter()
        .filter(|e| e["type"] == "ADDED")
        .filter_map(|e| e["object"]["metadata"]["name"].as_str().map(str::to_string))
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn watches_and_lists_survive_an_etcd_member_death() {
    let mut etcd = tokio::task::spawn_blocking(|| Etcd::cluster(3))
        .await
        .unwrap();
    let servers = format!("--etcd-servers={}", etcd.endpoints().join(","));
    let dir = tempfile::tempdir().unwrap();
    let server = Server::start(&dir.path().join("data"), &[&servers]).await;
    let api = Api::new(&server);

    let first = api.post(NS, &configmap("before")).await.expect(201);
    let rv = first["metadata"]["resourceVersion"]
        .as_str()
        .unwrap()
        .to_string();
    let mut watches = Vec::new();
    for _ in 0..4 {
        watches.push(Watch::open(&server, &rv).await);
    }

    // Writes before, during and after the death of member 0; every write
    // that was acknowledged must reach every watcher.
    let mut written = Vec::new();
    for i in 0..60 {
        if i == 20 {
            etcd.members[0].kill();
        }
        let name = format!("cm-{i:02}");
        let deadline = Instant::now() + Duration::from_secs(30);
        loop {
            let r = api.post(NS, &configmap(&name)).await;
            match r.status.as_u16() {
                201 => break,
                // Retried: an election may refuse writes for a moment.
                s if (s == 409 || s >= 500) && Instant::now() < deadline => {
                    if s == 409 {
                        break; // created by the attempt whose answer was lost
                    }
                    tokio::time::sleep(Duration::from_millis(200)).await;
                }
                s => panic!("create {name}: {s}: {}", r.text()),
            }
        }
        written.push(name);
    }

    let deadline = Instant::now() + Duration::from_secs(30);
    for (i, w) in watches.iter_mut().enumerate() {
        w.read_until(deadline, |events| {
            names(events).len() >= written.len() || events.iter().any(|e| e["type"] == "ERROR")
        })
        .await;
        if let Some(error) = w.events.iter().find(|e| e["type"] == "ERROR") {
            // A 410 is the one error a client may get: it lists again.
            assert_eq!(error["object"]["code"], 410, "watch {i}: {error}");
            continue;
        }
        let got = names(&w.events);
        assert_eq!(
            got, written,
            "watch {i} saw every acknowledged write once, in order (ended: {})",
            w.ended
        );
        let revisions: Vec<i64> = w
            .events
            .iter()
            .filter_map(|e| {
                e["object"]["metadata"]["resourceVersion"]
                    .as_str()?
                    .parse()
                    .ok()
            })
            .collect();
        assert!(
            revisions.windows(2).all(|p| p[0] < p[1]),
            "watch {i}: revisions increase: {revisions:?}"
        );
    }

    // A consistent LIST and a LIST at resourceVersion=0 (from the cache)
    // both hold every object.
    for query in ["", "?resourceVersion=0"] {
        let deadline = Instant::now() + Duration::from_secs(10);
        loop {
            let list = api.get(&format!("{NS}{query}")).await.expect(200);
            let listed: Vec<String> = list["items"]
                .as_array()
                .unwrap()
                .iter()
                .filter_map(|o| o["metadata"]["name"].as_str().map(str::to_string))
                .filter(|n| n.starts_with("cm-"))
                .collect();
            if listed == written {
                break;
            }
            assert!(
                Instant::now() < deadline,
                "LIST{query} after the member's death: {listed:?}"
            );
            tokio::time::sleep(Duration::from_millis(200)).await;
        }
    }
}
