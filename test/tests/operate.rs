//! Operating Skein (issue 9, gap 11) against a real `skein serve`:
//! `/metrics` through `kubectl get --raw` (1.35 and 1.32) and raw HTTPS,
//! the access log in the server's stderr, `componentstatuses` with the
//! deprecation warning, and `/version`'s build facts.

use std::path::Path;
use std::time::{Duration, Instant};

use reqwest::Method;
use serde_json::{Value, json};
use skein_tests::cli::{self, cells, header};
use skein_tests::http::Api;
use skein_tests::kubectl_binaries;
use skein_tests::server::Server;

const UNAUTHORIZED: &str = r#"{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":"Unauthorized","reason":"Unauthorized","code":401}"#;

const CS_WARNING: &str = "Warning: v1 ComponentStatus is deprecated in v1.19+";

/// `kubectl get --raw /metrics`.
fn scrape(k: &Path, server: &Server) -> String {
    cli::ok(k, server, &["get", "--raw", "/metrics"])
}

/// The value of the series `name{labels}` (labels exactly as printed),
/// `None` if it is absent.
fn value(text: &str, series: &str) -> Option<f64> {
    text.lines().find_map(|l| {
        let rest = l.strip_prefix(series)?.strip_prefix(' ')?;
        rest.trim().parse().ok()
    })
}

fn must(text: &str, series: &str) -> f64 {
    value(text, series).unwrap_or_else(|| {
        let name = series.split('{').next().unwrap_or(series);
        let related: Vec<&str> = text.lines().filter(|l| l.starts_with(name)).collect();
        panic!(
            "no series {series}; series of that name:\n{}",
            related.join("\n")
        )
    })
}

/// `apiserver_request_total` labels (in the sorted order Go prints).
fn request(
    code: u16,
    dry_run: &str,
    group: &str,
    resource: &str,
    scope: &str,
    sub: &str,
    verb: &str,
) -> String {
    format!(
        "apiserver_request_total{{code=\"{code}\",component=\"apiserver\",dry_run=\"{dry_run}\",\
         group=\"{group}\",resource=\"{resource}\",scope=\"{scope}\",subresource=\"{sub}\",\
         verb=\"{verb}\",version=\"v1\"}}"
    )
}

/// A Secret: a kind nothing in the server creates by itself, so every
/// count below is the test's own.
fn secret(name: &str) -> Value {
    json!({"apiVersion": "v1", "kind": "Secret", "metadata": {"name": name}, "data": {"k": "dg=="}})
}

#[tokio::test]
async fn metrics_count_requests_with_upstream_labels() {
    let kubectls = kubectl_binaries();
    let dir = tempfile::tempdir().expect("tempdir");
    let server = Server::start(
        &dir.path().join("data"),
        &["--etcd-count-metric-poll-period=1s"],
    )
    .await;
    let api = Api::new(&server);
    let ns = "/api/v1/namespaces/default/secrets";

    api.post(ns, &secret("one")).await.expect(201);
    api.post(&format!("{ns}?dryRun=All"), &secret("dry"))
        .await
        .expect(201);
    api.get(ns).await.expect(200);
    api.get(&format!("{ns}/one")).await.expect(200);
    api.get(&format!("{ns}/missing"))
        .await
        .expect_status(404, "NotFound");
    let apply = json!({"apiVersion": "v1", "kind": "Secret", "metadata": {"name": "two"}, "data": {"a": "Yg=="}});
    api.call(
        Method::PATCH,
        &format!("{ns}/two?fieldManager=operate"),
        &[("content-type", "application/apply-patch+yaml")],
        Some(serde_json::to_vec(&apply).expect("json")),
    )
    .await
    .expect(201);
    api.get("/apis/apps/v1/deployments").await.expect(200);
    // A watch that ends by itself after its initial events.
    let watch = api.get(&format!("{ns}?watch=1&timeoutSeconds=1")).await;
    assert_eq!(watch.status, 200);
    let events = watch.text().lines().count();
    assert_eq!(events, 2, "ADDED one and two:\n{}", watch.text());

    let first = scrape(&kubectls[0], &server);
    assert!(first.contains("# TYPE apiserver_request_total counter\n"));
    assert!(
        first.contains("# HELP apiserver_request_total [STABLE] Counter of apiserver requests")
    );
    assert_eq!(
        must(
            &first,
            &request(201, "", "", "secrets", "resource", "", "POST")
        ),
        1.0
    );
    assert_eq!(
        must(
            &first,
            &request(201, "All", "", "secrets", "resource", "", "POST")
        ),
        1.0
    );
    assert_eq!(
        must(
            &first,
            &request(200, "", "", "secrets", "namespace", "", "LIST")
        ),
        1.0
    );
    assert_eq!(
        must(
            &first,
            &request(200, "", "", "secrets", "resource", "", "GET")
        ),
        1.0
    );
    assert_eq!(
        must(
            &first,
            &request(404, "", "", "secrets", "resource", "", "GET")
        ),
        1.0
    );
    assert_eq!(
        must(
            &first,
            &request(201, "", "", "secrets", "resource", "", "APPLY")
        ),
        1.0
    );
    assert_eq!(
        must(
            &first,
            &request(200, "", "apps", "deployments", "cluster", "", "LIST")
        ),
        1.0
    );
    assert_eq!(
        must(
            &first,
            &request(200, "", "", "secrets", "namespace", "", "WATCH")
        ),
        1.0
    );
    // The harness's readiness probes went through the instrumented root.
    assert!(
        must(
            &first,
            "apiserver_request_total{code=\"200\",component=\"\",dry_run=\"\",group=\"\",resource=\"\",scope=\"\",subresource=\"/readyz\",verb=\"GET\",version=\"\"}"
        ) >= 1.0
    );
    assert_eq!(
        must(
            &first,
            "apiserver_request_duration_seconds_count{component=\"apiserver\",dry_run=\"\",group=\"\",resource=\"secrets\",scope=\"namespace\",subresource=\"\",verb=\"WATCH\",version=\"v1\"}"
        ),
        1.0
    );
    assert!(first.contains(
        "apiserver_request_duration_seconds_bucket{component=\"apiserver\",dry_run=\"\",group=\"\",resource=\"secrets\",scope=\"resource\",subresource=\"\",verb=\"POST\",version=\"v1\",le=\"0.005\"}"
    ));
    assert_eq!(
        must(
            &first,
            "apiserver_watch_events_total{group=\"\",kind=\"Secret\",version=\"v1\"}"
        ),
        2.0
    );
    assert_eq!(
        must(
            &first,
            "apiserver_longrunning_requests{component=\"apiserver\",group=\"\",resource=\"secrets\",scope=\"namespace\",subresource=\"\",verb=\"WATCH\",version=\"v1\"}"
        ),
        0.0
    );
    // The scrape itself is the one read-only request in flight.
    assert_eq!(
        must(
            &first,
            "apiserver_current_inflight_requests{request_kind=\"readOnly\"}"
        ),
        1.0
    );
    assert_eq!(
        must(
            &first,
            "apiserver_current_inflight_requests{request_kind=\"mutating\"}"
        ),
        0.0
    );
    assert!(
        must(
            &first,
            "etcd_request_duration_seconds_count{operation=\"create\",type=\"secrets\"}"
        ) >= 1.0
    );
    assert!(
        must(
            &first,
            "etcd_request_duration_seconds_count{operation=\"get\",type=\"secrets\"}"
        ) >= 1.0
    );
    assert!(
        must(
            &first,
            "etcd_request_duration_seconds_count{operation=\"list\",type=\"secrets\"}"
        ) >= 1.0
    );
    assert!(must(&first, "process_cpu_seconds_total") > 0.0);
    assert!(must(&first, "process_resident_memory_bytes") > 1e6);
    assert!(must(&first, "process_open_fds") >= 3.0);
    let started = must(&first, "process_start_time_seconds");
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .expect("clock")
        .as_secs_f64();
    assert!(
        started <= now && started > now - 600.0,
        "{started} vs {now}"
    );

    // Counts increase by exactly the requests made; scrapes are not counted.
    api.get(ns).await.expect(200);
    api.get(ns).await.expect(200);
    for k in &kubectls {
        let text = scrape(k, &server);
        assert_eq!(
            must(
                &text,
                &request(200, "", "", "secrets", "namespace", "", "LIST")
            ),
            3.0,
            "{}",
            k.display()
        );
    }

    // A live watch is long-running while it streams.
    let live = api
        .start(
            Method::GET,
            &format!("{ns}?watch=1&timeoutSeconds=30"),
            &[],
            None,
        )
        .await;
    assert_eq!(live.status(), 200);
    let text = scrape(&kubectls[0], &server);
    assert_eq!(
        must(
            &text,
            "apiserver_longrunning_requests{component=\"apiserver\",group=\"\",resource=\"secrets\",scope=\"namespace\",subresource=\"\",verb=\"WATCH\",version=\"v1\"}"
        ),
        1.0
    );
    drop(live);

    // apiserver_storage_objects is recounted every second here: the two
    // stored Secrets (the dry run stored nothing), and the system
    // namespaces.
    let deadline = Instant::now() + Duration::from_secs(20);
    loop {
        let text = scrape(&kubectls[1], &server);
        let cms = value(&text, "apiserver_storage_objects{resource=\"secrets\"}");
        let nss = value(&text, "apiserver_storage_objects{resource=\"namespaces\"}");
        if cms == Some(2.0) && nss.is_some_and(|n| n >= 1.0) {
            assert!(
                value(
                    &text,
                    "apiserver_storage_objects{resource=\"deployments.apps\"}"
                ) == Some(0.0)
            );
            assert!(!text.contains("apiserver_storage_objects{resource=\"componentstatuses\"}"));
            break;
        }
        assert!(
            Instant::now() < deadline,
            "storage objects never counted:\n{text}"
        );
        tokio::time::sleep(Duration::from_millis(300)).await;
    }
}

#[tokio::test]
async fn metrics_need_authentication() {
    let dir = tempfile::tempdir().expect("tempdir");
    let server = Server::start(&dir.path().join("data"), &[]).await;
    let anonymous = server.client(false);
    let r = anonymous
        .get(server.url("/metrics"))
        .send()
        .await
        .expect("GET /metrics");
    assert_eq!(r.status(), 401);
    assert_eq!(r.headers()["content-type"], "application/json");
    let body: Value = serde_json::from_str(&r.text().await.expect("body")).expect("a Status");
    let want: Value = serde_json::from_str(UNAUTHORIZED).expect("JSON");
    assert_eq!(body, want);

    let r = Api::new(&server).get("/metrics").await;
    assert_eq!(r.status, 200);
    assert_eq!(
        r.header("content-type"),
        Some("text/plain; version=0.0.4; charset=utf-8")
    );
    let text = r.text();
    assert!(
        text.contains("# TYPE apiserver_request_duration_seconds histogram\n"),
        "{text}"
    );
    // Rejected requests never reached a handler: not counted, as upstream.
    assert!(!text.contains("code=\"401\""), "{text}");
}

/// Upstream's watch cache series for Secrets: the cache is started by a
/// first LIST, sees the three creates that follow, and a consistent LIST
/// waits for it (`read_wait_seconds`); the gauges show its revision and
/// window.
#[tokio::test]
async fn watch_cache_series_follow_the_cache_of_a_resource() {
    let dir = tempfile::tempdir().expect("tempdir");
    let server = Server::start(&dir.path().join("data"), &[]).await;
    let api = Api::new(&server);
    let ns = "/api/v1/namespaces/default/secrets";
    api.get(ns).await.expect(200);
    for name in ["a", "b", "c"] {
        api.post(ns, &secret(name)).await.expect(201);
    }
    let list = api.get(ns).await.expect(200);
    assert_eq!(list["items"].as_array().map(Vec::len), Some(3), "{list}");
    let rv: f64 = list["metadata"]["resourceVersion"]
        .as_str()
        .and_then(|v| v.parse().ok())
        .expect("a resourceVersion");

    let text = Api::new(&server).get("/metrics").await.text();
    let labels = "{group=\"\",resource=\"secrets\"}";
    for (series, want) in [
        ("apiserver_watch_cache_initializations_total", 1.0),
        ("apiserver_watch_cache_events_received_total", 3.0),
        ("apiserver_watch_cache_events_dispatched_total", 3.0),
        ("apiserver_watch_cache_resource_version", rv),
        ("apiserver_terminated_watchers_total", 0.0),
    ] {
        assert_eq!(must(&text, &format!("{series}{labels}")), want, "{series}");
    }
    assert!(must(&text, &format!("watch_cache_capacity{labels}")) > 0.0);
    assert!(
        must(
            &text,
            &format!("apiserver_watch_cache_read_wait_seconds_count{labels}")
        ) >= 2.0,
        "two LISTs waited for a fresh cache"
    );
    assert!(
        text.contains("# TYPE apiserver_watch_cache_events_received_total counter\n"),
        "{text}"
    );
    assert!(text.contains(
        "# HELP apiserver_watch_cache_events_received_total [ALPHA] Counter of events received \
         in watch cache broken by resource type.\n"
    ));
}

/// However many clients watch, the store holds one watch per resource:
/// the watch cache's (`skein_storage_watches{type}`), and none over every
/// key (the garbage collector reads through the caches too). Every watcher
/// still gets each change.
#[tokio::test]
async fn store_watches_are_one_per_resource_whatever_the_watchers() {
    let dir = tempfile::tempdir().expect("tempdir");
    let server = Server::start(&dir.path().join("data"), &[]).await;
    let api = Api::new(&server);
    let client = server.client(true);
    let mut watches = Vec::new();
    for i in 0..12 {
        let path = if i % 3 == 0 {
            "/api/v1/configmaps?watch=1"
        } else {
            "/api/v1/namespaces/default/configmaps?watch=1"
        };
        let r = client
            .get(server.url(path))
            .send()
            .await
            .expect("start a watch");
        assert_eq!(r.status(), 200, "{path}");
        watches.push(r);
    }
    api.post(
        "/api/v1/namespaces/default/configmaps",
        &json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "seen-by-all"}}),
    )
    .await
    .expect(201);
    for (i, w) in watches.iter_mut().enumerate() {
        let mut got = String::new();
        while !got.contains("seen-by-all") {
            let chunk = tokio::time::timeout(Duration::from_secs(10), w.chunk())
                .await
                .unwrap_or_else(|_| panic!("watch {i} got no event in 10 s: {got}"))
                .expect("read the watch")
                .unwrap_or_else(|| panic!("watch {i} ended: {got}"));
            got.push_str(&String::from_utf8_lossy(&chunk));
        }
        assert!(got.starts_with("{\"type\":\"ADDED\""), "watch {i}: {got}");
    }
    let text = api.get("/metrics").await.text();
    assert_eq!(
        must(&text, "skein_storage_watches{type=\"configmaps\"}"),
        1.0,
        "one store watch for twelve watchers"
    );
    let per_type: Vec<(&str, f64)> = text
        .lines()
        .filter_map(|l| {
            let rest = l.strip_prefix("skein_storage_watches{type=\"")?;
            let (kind, value) = rest.split_once("\"} ")?;
            Some((kind, value.trim().parse().ok()?))
        })
        .collect();
    assert!(
        per_type.len() > 10,
        "the caches of every resource: {per_type:?}"
    );
    for (kind, n) in &per_type {
        assert!(*n <= 1.0, "{n} store watches of {kind:?}: {per_type:?}");
    }
    assert_eq!(
        value(&text, "skein_storage_watches{type=\"\"}").unwrap_or(0.0),
        0.0,
        "no store watch of every key"
    );
    drop(watches);
}

/// The access-log lines of a server's stderr.
fn access_lines(server: &Server) -> Vec<String> {
    server
        .logs()
        .lines()
        .filter(|l| l.contains("skein::access"))
        .map(str::to_string)
        .collect()
}

#[tokio::test]
async fn access_log_has_one_line_per_request_and_can_be_switched_off() {
    let dir = tempfile::tempdir().expect("tempdir");
    let server = Server::start(&dir.path().join("on"), &[]).await;
    let api = Api::new(&server);
    api.call(
        Method::GET,
        "/api/v1/namespaces/default/configmaps?limit=7",
        &[("user-agent", "operate-test/1.0")],
        None,
    )
    .await
    .expect(200);
    let anonymous = server.client(false);
    let r = anonymous
        .get(server.url("/api/v1/namespaces?limit=8"))
        .header("user-agent", "anonymous-test/2.0")
        .send()
        .await
        .expect("anonymous GET");
    assert_eq!(r.status(), 401);

    let deadline = Instant::now() + Duration::from_secs(10);
    let (admin, anon) = loop {
        let lines = access_lines(&server);
        let find = |needle: &str| lines.iter().find(|l| l.contains(needle)).cloned();
        match (find("limit=7"), find("limit=8")) {
            (Some(a), Some(b)) => break (a, b),
            _ if Instant::now() < deadline => tokio::time::sleep(Duration::from_millis(100)).await,
            _ => panic!("no access-log lines for the requests:\n{}", server.logs()),
        }
    };
    for part in [
        " INFO skein::access: HTTP ",
        "verb=\"LIST\"",
        "URI=\"/api/v1/namespaces/default/configmaps?limit=7\"",
        "user=\"skein-admin\"",
        "latency=",
        "userAgent=\"operate-test/1.0\"",
        "srcIP=127.0.0.1:",
        "resp=200",
    ] {
        assert!(admin.contains(part), "{part:?} missing from {admin}");
    }
    for part in [
        "verb=\"LIST\"",
        "URI=\"/api/v1/namespaces?limit=8\"",
        "user=\"\"",
        "userAgent=\"anonymous-test/2.0\"",
        "resp=401",
    ] {
        assert!(anon.contains(part), "{part:?} missing from {anon}");
    }
    let count = access_lines(&server)
        .iter()
        .filter(|l| l.contains("limit=7"))
        .count();
    assert_eq!(count, 1, "one line per request");

    let quiet = Server::start(&dir.path().join("off"), &["--access-log=false"]).await;
    Api::new(&quiet)
        .get("/api/v1/namespaces/default/configmaps?limit=7")
        .await
        .expect(200);
    // The log is written synchronously with the request; give it a moment
    // anyway before asserting nothing came.
    tokio::time::sleep(Duration::from_millis(300)).await;
    assert!(access_lines(&quiet).is_empty(), "{}", quiet.logs());
    assert!(
        quiet.logs().contains("serving"),
        "the server does log otherwise"
    );
}

#[tokio::test]
async fn componentstatuses_report_storage_with_the_deprecation_warning() {
    let kubectls = kubectl_binaries();
    let dir = tempfile::tempdir().expect("tempdir");
    let server = Server::start(&dir.path().join("data"), &[]).await;
    for k in &kubectls {
        for args in [&["get", "componentstatuses"][..], &["get", "cs"][..]] {
            let out = cli::kubectl(k, &server, args);
            assert!(
                out.status.success(),
                "{}",
                cli::failure("succeed", k, &server, args, &out)
            );
            let (stdout, stderr) = (cli::stdout(&out), cli::stderr(&out));
            assert!(stderr.contains(CS_WARNING), "{}: {stderr}", k.display());
            assert_eq!(
                header(&stdout),
                ["NAME", "STATUS", "MESSAGE", "ERROR"],
                "{stdout}"
            );
            assert_eq!(
                cells(&stdout)[1..],
                [vec!["etcd-0", "Healthy", "ok"]],
                "{stdout}"
            );
        }
        let obj = cli::get_json(k, &server, &["get", "cs", "etcd-0"]);
        assert_eq!(obj["kind"], "ComponentStatus");
        assert_eq!(obj["metadata"]["name"], "etcd-0");
        assert_eq!(
            obj["conditions"],
            json!([{"type": "Healthy", "status": "True", "message": "ok"}])
        );
        let stderr = cli::err(k, &server, &["delete", "cs", "etcd-0"]);
        assert!(
            stderr.contains("MethodNotAllowed") || stderr.contains("method"),
            "{stderr}"
        );
    }

    let api = Api::new(&server);
    let list = api.get("/api/v1/componentstatuses").await;
    assert_eq!(list.status, 200);
    assert_eq!(
        list.header("warning"),
        Some("299 - \"v1 ComponentStatus is deprecated in v1.19+\"")
    );
    assert_eq!(
        list.json(),
        json!({"kind": "ComponentStatusList", "apiVersion": "v1", "metadata": {},
               "items": [{"kind": "ComponentStatus", "apiVersion": "v1",
                          "metadata": {"name": "etcd-0", "creationTimestamp": null},
                          "conditions": [{"type": "Healthy", "status": "True", "message": "ok"}]}]})
    );
    let selected = api
        .get("/api/v1/componentstatuses?labelSelector=a%3Db")
        .await
        .expect(200);
    assert_eq!(selected["items"], json!([]));

    let missing = api.get("/api/v1/componentstatuses/scheduler").await;
    missing.expect_status(404, "NotFound");
    assert!(missing.header("warning").is_some());

    let watch = api.get("/api/v1/componentstatuses?watch=1").await;
    let status = watch.expect_status(405, "MethodNotAllowed");
    assert_eq!(
        status["message"],
        "watch is not supported on resources of kind \"componentstatuses\""
    );
    assert!(watch.header("warning").is_some());

    let post = api
        .post(
            "/api/v1/componentstatuses",
            &json!({"apiVersion": "v1", "kind": "ComponentStatus", "metadata": {"name": "x"}}),
        )
        .await;
    post.expect_status(405, "MethodNotAllowed");
    api.delete("/api/v1/componentstatuses/etcd-0")
        .await
        .expect_status(405, "MethodNotAllowed");

    // Discovery: get and list only, short name cs.
    let v1 = api.get("/api/v1").await.expect(200);
    let cs = v1["resources"]
        .as_array()
        .and_then(|rs| rs.iter().find(|r| r["name"] == "componentstatuses"))
        .cloned()
        .expect("componentstatuses in /api/v1");
    assert_eq!(cs["verbs"], json!(["get", "list"]));
    assert_eq!(cs["shortNames"], json!(["cs"]));
    assert_eq!(cs["namespaced"], false);

    let text = scrape(&kubectls[0], &server);
    assert_eq!(
        must(
            &text,
            "apiserver_requested_deprecated_apis{group=\"\",removed_release=\"\",resource=\"componentstatuses\",subresource=\"\",version=\"v1\"}"
        ),
        1.0
    );
}

#[tokio::test]
async fn version_reports_the_commit_tree_state_and_build_date() {
    let kubectls = kubectl_binaries();
    let dir = tempfile::tempdir().expect("tempdir");
    let server = Server::start(&dir.path().join("data"), &[]).await;
    let head = std::process::Command::new("git")
        .args(["rev-parse", "HEAD"])
        .current_dir(skein_tests::repo_root())
        .output()
        .expect("git rev-parse HEAD");
    assert!(head.status.success(), "the tests run in a git checkout");
    let head = String::from_utf8_lossy(&head.stdout).trim().to_string();
    assert_eq!(head.len(), 40);

    let anonymous = server.client(false);
    let v: Value = anonymous
        .get(server.url("/version"))
        .send()
        .await
        .expect("GET /version")
        .text()
        .await
        .map(|t| serde_json::from_str(&t).expect("JSON"))
        .expect("body");
    assert_eq!(
        v["gitCommit"], head,
        "the binary was built from another commit (rebuild it: cargo build -p skein)"
    );
    let state = v["gitTreeState"].as_str().expect("gitTreeState");
    assert!(state == "clean" || state == "dirty", "{state}");
    let date = v["buildDate"].as_str().expect("buildDate");
    assert_eq!(date.len(), 20, "{date}");
    assert!(date.ends_with('Z') && date.as_bytes()[10] == b'T', "{date}");
    assert!(date > "2025-01-01T00:00:00Z", "a real build date: {date}");
    assert_eq!(v["major"], "1");
    assert_eq!(v["minor"], "33");
    let git_version = v["gitVersion"].as_str().expect("gitVersion");
    assert!(git_version.starts_with("v1.33."), "{git_version}");

    for k in &kubectls {
        let out = cli::ok(k, &server, &["version", "-o", "json"]);
        let parsed: Value = serde_json::from_str(&out).expect("kubectl version JSON");
        assert_eq!(
            parsed["serverVersion"]["gitCommit"],
            head,
            "{}",
            k.display()
        );
        assert_eq!(parsed["serverVersion"]["buildDate"], date);
        assert_eq!(parsed["serverVersion"]["gitTreeState"], state);
    }
}
