//! The Kubernetes API over real HTTPS, request by request: bad input, CRUD
//! semantics, lists, watches, discovery and tables. Each test runs its own
//! `skein serve` and checks the status code, the `Status` body and what was
//! (not) stored.

use std::time::{Duration, Instant};

use nix::sys::signal::Signal;
use reqwest::Method;
use serde_json::{Value, json};
use skein_tests::http::{Api, event_name, items, message};
use skein_tests::server::Server;

/// Flags for a server that keeps only ~2 s of history.
const FAST_COMPACTION: &[&str] = &["--etcd-compaction-interval=2s"];

async fn start(extra: &[&str]) -> (tempfile::TempDir, Server, Api) {
    let dir = tempfile::tempdir().expect("tempdir");
    let server = Server::start_on_backend(dir.path(), extra).await;
    let api = Api::new(&server);
    (dir, server, api)
}

fn cms(ns: &str) -> String {
    format!("/api/v1/namespaces/{ns}/configmaps")
}

fn cm(ns: &str, name: &str) -> String {
    format!("/api/v1/namespaces/{ns}/configmaps/{name}")
}

fn deploys(ns: &str) -> String {
    format!("/apis/apps/v1/namespaces/{ns}/deployments")
}

fn deploy(ns: &str, name: &str) -> String {
    format!("/apis/apps/v1/namespaces/{ns}/deployments/{name}")
}

fn deployment(name: &str, replicas: i64) -> Value {
    json!({
        "apiVersion": "apps/v1", "kind": "Deployment",
        "metadata": {"name": name, "labels": {"app": name}},
        "spec": {
            "replicas": replicas,
            "selector": {"matchLabels": {"app": name}},
            "template": {
                "metadata": {"labels": {"app": name}},
                "spec": {"containers": [{"name": "web", "image": "nginx:1.27"}]}
            }
        }
    })
}

/// The ConfigMap the root CA publisher puts in every namespace, as
/// kube-controller-manager's does.
const ROOT_CA: &str = "kube-root-ca.crt";

/// Creates namespace `ns` and waits for its `kube-root-ca.crt`, so that
/// lists of its ConfigMaps are deterministic.
async fn create_namespace(api: &Api, ns: &str) {
    api.post("/api/v1/namespaces", &json!({"metadata": {"name": ns}}))
        .await
        .expect(201);
    let deadline = std::time::Instant::now() + Duration::from_secs(10);
    while api.get(&cm(ns, ROOT_CA)).await.status != 200 {
        assert!(std::time::Instant::now() < deadline, "no {ROOT_CA} in {ns}");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

async fn create_cm(api: &Api, ns: &str, name: &str) -> Value {
    api.post(
        &cms(ns),
        &json!({"metadata": {"name": name}, "data": {"k": "v"}}),
    )
    .await
    .expect(201)
}

fn rv(obj: &Value) -> String {
    obj["metadata"]["resourceVersion"]
        .as_str()
        .unwrap_or_else(|| panic!("no resourceVersion: {obj}"))
        .to_string()
}

fn rv_num(obj: &Value) -> i64 {
    rv(obj).parse().expect("numeric resourceVersion")
}

// ---------------------------------------------------------------- bad input

/// `k8s\0` + a `runtime.Unknown` whose `raw` is `raw`.
fn protobuf(api_version: &str, kind: &str, raw: &[u8]) -> Vec<u8> {
    fn field(tag: u8, bytes: &[u8]) -> Vec<u8> {
        let mut out = vec![tag];
        let mut n = bytes.len();
        loop {
            let b = (n & 0x7f) as u8;
            n >>= 7;
            if n == 0 {
                out.push(b);
                break;
            }
            out.push(b | 0x80);
        }
        out.extend_from_slice(bytes);
        out
    }
    let mut type_meta = field(0x0a, api_version.as_bytes());
    type_meta.extend(field(0x12, kind.as_bytes()));
    let mut out = b"k8s\0".to_vec();
    out.extend(field(0x0a, &type_meta));
    out.extend(field(0x12, raw));
    out
}

#[tokio::test]
async fn bad_bodies_get_a_clean_status_and_store_nothing() {
    let (_dir, server, api) = start(&[]).await;
    create_namespace(&api, "bad").await;
    let json_ct = "application/json";
    let pb = "application/vnd.kubernetes.protobuf";
    let post = |ct: &'static str, body: Vec<u8>| {
        let api = api.clone();
        async move { api.raw(Method::POST, &cms("bad"), ct, body).await }
    };

    // Malformed JSON: truncated, trailing garbage, not an object.
    for body in [
        &br#"{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"x""#[..],
        br#"{"metadata":{"name":"x"}} trailing"#,
        b"not json at all",
        br#"["a list"]"#,
    ] {
        post(json_ct, body.to_vec())
            .await
            .expect_status(400, "BadRequest");
    }

    // Malformed protobuf: no magic, a truncated envelope, a garbage object.
    let cm_raw = {
        // ConfigMap{metadata: ObjectMeta{name: "pb"}}
        let meta = [0x0a, 0x02, b'p', b'b'];
        let mut raw = vec![0x0a, meta.len() as u8];
        raw.extend_from_slice(&meta);
        raw
    };
    let good = protobuf("v1", "ConfigMap", &cm_raw);
    let mut bodies: Vec<Vec<u8>> = vec![
        b"garbage, not protobuf".to_vec(),
        b"k8s\0".to_vec(),
        b"k8s\0\xff\xff\xff\xff".to_vec(),
        protobuf("v1", "ConfigMap", &[0xff, 0xff, 0xff, 0xff, 0xff]),
        protobuf("v1", "ConfigMap", &[0x0a, 0x7f, 0x0a]),
    ];
    for cut in [5, 8, good.len() / 2, good.len() - 1] {
        bodies.push(good[..cut].to_vec());
    }
    for body in bodies {
        let reply = post(pb, body.clone()).await;
        let s = reply.expect_status(400, "BadRequest");
        assert!(!message(&s).is_empty(), "{body:?}");
    }

    // Kind or apiVersion that does not fit the URL.
    let s = api
        .post(
            &cms("bad"),
            &json!({"apiVersion": "v1", "kind": "Secret", "metadata": {"name": "x"}}),
        )
        .await
        .expect_status(400, "BadRequest");
    assert!(
        message(&s).contains("Secret") && message(&s).contains("ConfigMap"),
        "{s}"
    );
    let s = api
        .post(
            &cms("bad"),
            &json!({"apiVersion": "apps/v1", "kind": "ConfigMap", "metadata": {"name": "x"}}),
        )
        .await
        .expect_status(400, "BadRequest");
    // ConfigMap is not a kind of apps/v1: upstream's decoder fails first.
    assert_eq!(
        message(&s),
        "ConfigMap in version \"v1\" cannot be handled as a ConfigMap: no kind \"ConfigMap\" is registered for version \"apps/v1\" in scheme \"pkg/api/legacyscheme/scheme.go:30\""
    );
    api.post(
        &deploys("bad"),
        &json!({"apiVersion": "extensions/v1beta1", "kind": "Deployment", "metadata": {"name": "x"}}),
    )
    .await
    .expect_status(400, "BadRequest");

    // Names that break the kind's DNS rule: 422 Invalid on metadata.name.
    let invalid_name = |s: &Value, kind: &str, name: &str, rule: &str| {
        assert_eq!(s["details"]["kind"], kind, "{s}");
        assert_eq!(s["details"]["name"], name, "{s}");
        let cause = &s["details"]["causes"][0];
        assert_eq!(cause["field"], "metadata.name", "{s}");
        assert_eq!(cause["reason"], "FieldValueInvalid", "{s}");
        assert!(
            message(s).starts_with(&format!(
                "{kind} \"{name}\" is invalid: metadata.name: Invalid value: \"{name}\": {rule}"
            )),
            "{s}"
        );
    };
    for name in ["Bad_Name", "-x", "x-", "a..b", &"a".repeat(254)] {
        let s = api
            .post(&cms("bad"), &json!({"metadata": {"name": name}}))
            .await
            .expect_status(422, "Invalid");
        let rule = if name.len() > 253 {
            "must be no more than 253 characters"
        } else {
            "a lowercase RFC 1123 subdomain must consist of"
        };
        invalid_name(&s, "ConfigMap", name, rule);
    }
    assert_eq!(
        message(
            &api.post(&cms("bad"), &json!({"metadata": {"name": "Bad_Name"}}))
                .await
                .expect_status(422, "Invalid")
        ),
        "ConfigMap \"Bad_Name\" is invalid: metadata.name: Invalid value: \"Bad_Name\": a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')"
    );
    let s = api
        .post("/api/v1/namespaces", &json!({"metadata": {"name": "a.b"}}))
        .await
        .expect_status(422, "Invalid");
    // A valid subdomain that is not a label: upstream's IsDNS1123Label
    // says why.
    invalid_name(&s, "Namespace", "a.b", "must not contain dots");
    let s = api
        .post("/api/v1/namespaces", &json!({"metadata": {"name": "A_b"}}))
        .await
        .expect_status(422, "Invalid");
    invalid_name(
        &s,
        "Namespace",
        "A_b",
        "a lowercase RFC 1123 label must consist of",
    );
    let s = api
        .post(
            "/api/v1/namespaces/bad/services",
            &json!({"metadata": {"name": "1abc"}, "spec": {"ports": [{"port": 80}]}}),
        )
        .await
        .expect_status(422, "Invalid");
    invalid_name(&s, "Service", "1abc", "a DNS-1035 label must consist of");
    let s = api
        .post(&cms("bad"), &json!({"metadata": {}}))
        .await
        .expect_status(422, "Invalid");
    assert_eq!(
        message(&s),
        "ConfigMap \"\" is invalid: metadata.name: Required value: name or generateName is required"
    );

    // Labels and annotations over their limits.
    let long = "a".repeat(64);
    let s = api
        .post(
            &cms("bad"),
            &json!({"metadata": {"name": "x", "labels": {"k": long}}}),
        )
        .await
        .expect_status(422, "Invalid");
    assert_eq!(
        message(&s),
        format!(
            "ConfigMap \"x\" is invalid: metadata.labels: Invalid value: \"{long}\": must be no more than 63 characters"
        )
    );
    let s = api
        .post(
            &cms("bad"),
            &json!({"metadata": {"name": "x", "labels": {long.clone(): "v"}}}),
        )
        .await
        .expect_status(422, "Invalid");
    assert_eq!(s["details"]["causes"][0]["field"], "metadata.labels", "{s}");
    let s = api
        .post(
            &cms("bad"),
            &json!({"metadata": {"name": "x", "labels": {"bad key!": "v"}}}),
        )
        .await
        .expect_status(422, "Invalid");
    assert_eq!(s["details"]["causes"][0]["field"], "metadata.labels", "{s}");
    let s = api
        .post(
            &cms("bad"),
            &json!({"metadata": {"name": "x", "annotations": {"a": "b".repeat(256 * 1024)}}}),
        )
        .await
        .expect_status(422, "Invalid");
    let cause = &s["details"]["causes"][0];
    assert_eq!(cause["field"], "metadata.annotations", "{s}");
    assert_eq!(cause["reason"], "FieldValueTooLong", "{s}");
    assert!(
        message(&s).starts_with("ConfigMap \"x\" is invalid: metadata.annotations: Too long: "),
        "{s}"
    );

    // A body over 3 MiB: 413, over HTTP/1.1 and HTTP/2. The JSON itself is
    // valid, so only the size is wrong.
    let huge = serde_json::to_vec(
        &json!({"metadata": {"name": "huge"}, "data": {"k": "x".repeat(3 * 1024 * 1024)}}),
    )
    .expect("json");
    for client in [Api::http1(&server), api.clone()] {
        let s = client
            .raw(Method::POST, &cms("bad"), json_ct, huge.clone())
            .await
            .expect_status(413, "RequestEntityTooLarge");
        assert!(message(&s).contains("too large"), "{s}");
    }
    // Under the body limit, but over a ConfigMap's 1 MiB: upstream's 422.
    let big = serde_json::to_vec(
        &json!({"metadata": {"name": "big"}, "data": {"k": "x".repeat(2 * 1024 * 1024)}}),
    )
    .expect("json");
    let s = api
        .raw(Method::POST, &cms("bad"), json_ct, big)
        .await
        .expect_status(422, "Invalid");
    assert_eq!(
        message(&s),
        r#"ConfigMap "big" is invalid: []: Too long: may not be more than 1048576 bytes"#
    );
    // A kind without a size rule, over the 1.5 MiB an object may take in
    // storage: still a clean 413.
    let big_event = serde_json::to_vec(&json!({
        "metadata": {"name": "big"},
        "involvedObject": {"kind": "Pod", "name": "p", "namespace": "bad"},
        "message": "x".repeat(2 * 1024 * 1024),
    }))
    .expect("json");
    api.raw(
        Method::POST,
        "/api/v1/namespaces/bad/events",
        json_ct,
        big_event,
    )
    .await
    .expect_status(413, "RequestEntityTooLarge");
    assert_eq!(
        api.names("/api/v1/namespaces/bad/events").await,
        Vec::<String>::new()
    );

    // Nothing was stored.
    assert_eq!(api.names(&cms("bad")).await, [ROOT_CA]);
    assert_eq!(
        api.names("/api/v1/namespaces/bad/services").await,
        Vec::<String>::new()
    );
    assert_eq!(api.names(&deploys("bad")).await, Vec::<String>::new());
    let mut namespaces = api.names("/api/v1/namespaces").await;
    namespaces.sort();
    assert_eq!(
        namespaces,
        [
            "bad",
            "default",
            "kube-node-lease",
            "kube-public",
            "kube-system"
        ]
    );

    // A PUT of the wrong kind leaves the stored object alone.
    let stored = create_cm(&api, "bad", "keep").await;
    api.put(
        &cm("bad", "keep"),
        &json!({"apiVersion": "v1", "kind": "Secret", "metadata": {"name": "keep"}, "data": {}}),
    )
    .await
    .expect_status(400, "BadRequest");
    api.raw(Method::PUT, &cm("bad", "keep"), json_ct, b"{".to_vec())
        .await
        .expect_status(400, "BadRequest");
    let now = api.get(&cm("bad", "keep")).await.expect(200);
    assert_eq!(now, stored);
}

#[tokio::test]
async fn a_well_formed_protobuf_body_is_accepted() {
    // The counterpart of the malformed-protobuf cases above: typed client-go
    // clients send this (api-contract §10).
    let (_dir, _server, api) = start(&[]).await;
    let meta = [0x0a, 0x02, b'p', b'b'];
    let mut raw = vec![0x0a, meta.len() as u8];
    raw.extend_from_slice(&meta);
    // data: {"k": "v"} (map entry = field 2, key 1, value 2)
    raw.extend_from_slice(&[0x12, 0x06, 0x0a, 0x01, b'k', 0x12, 0x01, b'v']);
    let created = api
        .raw(
            Method::POST,
            &cms("default"),
            "application/vnd.kubernetes.protobuf",
            protobuf("v1", "ConfigMap", &raw),
        )
        .await
        .expect(201);
    assert_eq!(created["metadata"]["name"], "pb");
    assert_eq!(created["data"], json!({"k": "v"}));
    assert_eq!(
        api.get(&cm("default", "pb")).await.expect(200)["data"]["k"],
        "v"
    );
}

#[tokio::test]
async fn bad_query_parameters_are_rejected_before_anything_happens() {
    let (_dir, _server, api) = start(&[]).await;
    let stored = create_cm(&api, "default", "keep").await;

    // Selectors, with upstream's messages.
    let s = api
        .get(&format!("{}?labelSelector=a%20in%20(b", cms("default")))
        .await
        .expect_status(400, "BadRequest");
    assert_eq!(
        message(&s),
        "unable to parse requirement: found '', expected: ',' or ')'"
    );
    let s = api
        .get(&format!(
            "{}?labelSelector=x%20nott%20in%20(y)",
            cms("default")
        ))
        .await
        .expect_status(400, "BadRequest");
    assert_eq!(
        message(&s),
        "unable to parse requirement: found 'nott', expected: in, notin, =, ==, !=, gt, lt"
    );
    let s = api
        .get(&format!("{}?fieldSelector=spec.foo%3Dbar", cms("default")))
        .await
        .expect_status(400, "BadRequest");
    assert_eq!(
        message(&s),
        r#""spec.foo" is not a known field selector: only "metadata.name", "metadata.namespace""#
    );
    let s = api
        .get(&format!("{}?fieldSelector=x", cms("default")))
        .await
        .expect_status(400, "BadRequest");
    assert_eq!(message(&s), "invalid selector: 'x'; can't understand 'x'");
    // The same selectors on a watch.
    api.get(&format!(
        "{}?watch=1&fieldSelector=spec.foo%3Dbar",
        cms("default")
    ))
    .await
    .expect_status(400, "BadRequest");
    api.get(&format!(
        "{}?watch=1&labelSelector=a%20in%20(b",
        cms("default")
    ))
    .await
    .expect_status(400, "BadRequest");

    // Values that do not parse.
    for q in [
        "watch=maybe",
        "limit=abc",
        "watch=1&timeoutSeconds=soon",
        "watch=1&allowWatchBookmarks=perhaps",
        "timeoutSeconds=soon",
        "allowWatchBookmarks=perhaps",
    ] {
        api.get(&format!("{}?{q}", cms("default")))
            .await
            .expect_status(400, "BadRequest");
    }

    // Write options: nothing is written.
    let new = json!({"metadata": {"name": "new"}});
    let s = api
        .post(&format!("{}?dryRun=Some", cms("default")), &new)
        .await
        .expect_status(422, "Invalid");
    assert_eq!(
        message(&s),
        r#"CreateOptions.meta.k8s.io "" is invalid: dryRun: Unsupported value: []string{"Some"}: supported values: "All""#
    );
    assert_eq!(s["details"]["causes"][0]["field"], "dryRun", "{s}");
    let s = api
        .post(&format!("{}?fieldValidation=Loose", cms("default")), &new)
        .await
        .expect_status(422, "Invalid");
    assert_eq!(
        message(&s),
        r#"CreateOptions.meta.k8s.io "" is invalid: fieldValidation: Unsupported value: "Loose": supported values: "", "Ignore", "Strict", "Warn""#
    );
    let mut changed = stored.clone();
    changed["data"]["k"] = json!("changed");
    api.put(&format!("{}?dryRun=Maybe", cm("default", "keep")), &changed)
        .await
        .expect_status(422, "Invalid");
    api.put(
        &format!("{}?fieldValidation=Loose", cm("default", "keep")),
        &changed,
    )
    .await
    .expect_status(422, "Invalid");
    let s = api
        .delete(&format!(
            "{}?propagationPolicy=Sideways",
            cm("default", "keep")
        ))
        .await
        .expect_status(422, "Invalid");
    assert_eq!(
        message(&s),
        r#"DeleteOptions.meta.k8s.io "" is invalid: propagationPolicy: Unsupported value: "Sideways": supported values: "Foreground", "Background", "Orphan", "nil""#
    );
    assert_eq!(
        s["details"]["causes"][0]["field"], "propagationPolicy",
        "{s}"
    );
    api.delete(&format!("{}?dryRun=Some", cm("default", "keep")))
        .await
        .expect_status(422, "Invalid");

    // Patch content types.
    for ct in ["text/plain", "application/xml"] {
        let s = api
            .raw(
                Method::PATCH,
                &cm("default", "keep"),
                ct,
                br#"{"data":{"k":"patched"}}"#.to_vec(),
            )
            .await
            .expect_status(415, "UnsupportedMediaType");
        assert!(
            message(&s).contains("application/merge-patch+json"),
            "the 415 names the types taken: {s}"
        );
    }
    // A malformed patch document.
    api.raw(
        Method::PATCH,
        &cm("default", "keep"),
        "application/merge-patch+json",
        b"{not json".to_vec(),
    )
    .await
    .expect_status(400, "BadRequest");

    assert_eq!(api.names(&cms("default")).await, ["keep", ROOT_CA]);
    assert_eq!(api.get(&cm("default", "keep")).await.expect(200), stored);
}

// ------------------------------------------------------------------- CRUD

fn is_uuid_v4(s: &str) -> bool {
    let parts: Vec<&str> = s.split('-').collect();
    parts.iter().map(|p| p.len()).collect::<Vec<_>>() == [8, 4, 4, 4, 12]
        && s.chars().all(|c| c == '-' || c.is_ascii_hexdigit())
        && parts[2].starts_with('4')
}

fn is_rfc3339_utc(s: &str) -> bool {
    // 2006-01-02T15:04:05Z
    let b = s.as_bytes();
    b.len() == 20
        && b[4] == b'-'
        && b[7] == b'-'
        && b[10] == b'T'
        && b[13] == b':'
        && b[16] == b':'
        && b[19] == b'Z'
        && s.chars().filter(char::is_ascii_digit).count() == 14
}

#[tokio::test]
async fn create_sets_system_fields_and_conflicts_read_as_upstream() {
    let (_dir, _server, api) = start(&[]).await;

    // generateName, uid, creationTimestamp, managedFields from fieldManager.
    let created = api
        .post(
            &format!("{}?fieldManager=e2e-manager", cms("default")),
            &json!({"metadata": {"generateName": "gen-", "uid": "bogus", "creationTimestamp": "2000-01-01T00:00:00Z"}, "data": {"a": "b"}}),
        )
        .await
        .expect(201);
    let meta = &created["metadata"];
    let name = meta["name"].as_str().expect("a name");
    assert!(name.starts_with("gen-") && name.len() == 9, "{name}");
    assert!(
        name[4..]
            .chars()
            .all(|c| "bcdfghjklmnpqrstvwxz2456789".contains(c)),
        "{name}"
    );
    assert_eq!(meta["generateName"], "gen-");
    let uid = meta["uid"].as_str().expect("uid");
    assert!(is_uuid_v4(uid), "{uid}");
    let ts = meta["creationTimestamp"]
        .as_str()
        .expect("creationTimestamp");
    assert!(is_rfc3339_utc(ts) && ts != "2000-01-01T00:00:00Z", "{ts}");
    assert!(rv_num(&created) > 0);
    assert!(
        meta.get("generation").is_none(),
        "ConfigMaps have no generation: {created}"
    );
    let mf = &meta["managedFields"];
    assert_eq!(mf.as_array().map(Vec::len), Some(1), "{created}");
    assert_eq!(mf[0]["manager"], "e2e-manager");
    assert_eq!(mf[0]["operation"], "Update");
    assert_eq!(mf[0]["apiVersion"], "v1");
    assert_eq!(mf[0]["fieldsType"], "FieldsV1");
    assert_eq!(
        mf[0]["fieldsV1"],
        json!({"f:data": {".": {}, "f:a": {}}, "f:metadata": {"f:generateName": {}}})
    );
    assert!(is_rfc3339_utc(mf[0]["time"].as_str().unwrap_or_default()));
    // What was returned is what is stored.
    assert_eq!(api.get(&cm("default", name)).await.expect(200), created);
    // A second generateName gets another name.
    let other = api
        .post(
            &cms("default"),
            &json!({"metadata": {"generateName": "gen-"}}),
        )
        .await
        .expect(201);
    assert_ne!(other["metadata"]["name"], created["metadata"]["name"]);
    assert_ne!(other["metadata"]["uid"], created["metadata"]["uid"]);

    // The manager defaults to the User-Agent's product.
    let by_agent = api
        .call(
            Method::POST,
            &cms("default"),
            &[
                ("content-type", "application/json"),
                (
                    "user-agent",
                    "skein-e2e/1.2.3 (linux/amd64) kubernetes/abcdef",
                ),
            ],
            Some(br#"{"metadata":{"name":"by-agent"},"data":{"a":"b"}}"#.to_vec()),
        )
        .await
        .expect(201);
    assert_eq!(
        by_agent["metadata"]["managedFields"][0]["manager"],
        "skein-e2e"
    );

    // AlreadyExists, exactly as upstream.
    let s = api
        .post(&cms("default"), &json!({"metadata": {"name": "by-agent"}}))
        .await
        .expect_status(409, "AlreadyExists");
    assert_eq!(message(&s), r#"configmaps "by-agent" already exists"#);
    assert_eq!(
        s["details"],
        json!({"name": "by-agent", "kind": "configmaps"})
    );
    api.post(&deploys("default"), &deployment("web", 1))
        .await
        .expect(201);
    let s = api
        .post(&deploys("default"), &deployment("web", 1))
        .await
        .expect_status(409, "AlreadyExists");
    assert_eq!(message(&s), r#"deployments.apps "web" already exists"#);
    assert_eq!(
        s["details"],
        json!({"name": "web", "group": "apps", "kind": "deployments"})
    );

    // A stale resourceVersion: Conflict, nothing written.
    let mut first = by_agent.clone();
    first["data"]["a"] = json!("first");
    let updated = api
        .put(&cm("default", "by-agent"), &first)
        .await
        .expect(200);
    assert!(rv_num(&updated) > rv_num(&by_agent));
    let mut stale = by_agent.clone();
    stale["data"]["a"] = json!("stale");
    let s = api
        .put(&cm("default", "by-agent"), &stale)
        .await
        .expect_status(409, "Conflict");
    assert_eq!(
        message(&s),
        r#"Operation cannot be fulfilled on configmaps "by-agent": the object has been modified; please apply your changes to the latest version and try again"#
    );
    assert_eq!(
        s["details"],
        json!({"name": "by-agent", "kind": "configmaps"})
    );
    // The same through a patch that carries the old resourceVersion.
    api.merge_patch(
        &cm("default", "by-agent"),
        &json!({"metadata": {"resourceVersion": rv(&by_agent)}, "data": {"a": "stale"}}),
    )
    .await
    .expect_status(409, "Conflict");
    let now = api.get(&cm("default", "by-agent")).await.expect(200);
    assert_eq!(now["data"]["a"], "first");
    assert_eq!(rv(&now), rv(&updated));
    // creationTimestamp survives an update that tries to change it.
    let mut hijack = now.clone();
    hijack["metadata"]["creationTimestamp"] = json!("2000-01-01T00:00:00Z");
    hijack["data"]["a"] = json!("second");
    let after = api
        .put(&cm("default", "by-agent"), &hijack)
        .await
        .expect(200);
    assert_eq!(after["metadata"]["uid"], by_agent["metadata"]["uid"]);
    assert_eq!(
        after["metadata"]["creationTimestamp"],
        by_agent["metadata"]["creationTimestamp"]
    );
    // Another uid in a PUT is a failed precondition (upstream's update
    // handler makes it one), checked before the resourceVersion; nothing
    // is written.
    let uid = by_agent["metadata"]["uid"].as_str().unwrap_or_default();
    let other = "00000000-0000-4000-8000-000000000000";
    let mut hijack = after.clone();
    hijack["metadata"]["uid"] = json!(other);
    hijack["metadata"]["resourceVersion"] = json!("1");
    hijack["data"]["a"] = json!("third");
    let s = api
        .put(&cm("default", "by-agent"), &hijack)
        .await
        .expect_status(409, "Conflict");
    assert_eq!(
        message(&s),
        format!(
            "Operation cannot be fulfilled on configmaps \"by-agent\": StorageError: invalid object, \
             Code: 4, Key: /registry/core/configmaps/default/by-agent, ResourceVersion: 0, \
             AdditionalErrorMsg: Precondition failed: UID in precondition: {other}, \
             UID in object meta: {uid}"
        )
    );
    // In a patch or an apply it is an immutable field: 422, nothing written.
    let s = api
        .merge_patch(
            &cm("default", "by-agent"),
            &json!({"metadata": {"uid": other}, "data": {"a": "third"}}),
        )
        .await
        .expect_status(422, "Invalid");
    assert_eq!(
        message(&s),
        format!(
            "ConfigMap \"by-agent\" is invalid: metadata.uid: Invalid value: \"{other}\": \
             field is immutable"
        )
    );
    assert_eq!(s["details"]["causes"][0]["field"], "metadata.uid");
    let apply = |name: &str| {
        serde_json::to_vec(&json!({
            "apiVersion": "v1", "kind": "ConfigMap",
            "metadata": {"name": name, "uid": other},
            "data": {"a": "applied"},
        }))
        .expect("json")
    };
    api.raw(
        Method::PATCH,
        &format!("{}?fieldManager=t&force=true", cm("default", "by-agent")),
        "application/apply-patch+yaml",
        apply("by-agent"),
    )
    .await
    .expect_status(422, "Invalid");
    let now = api.get(&cm("default", "by-agent")).await.expect(200);
    assert_eq!(now["data"]["a"], "second");
    assert_eq!(rv(&now), rv(&after));
    // A create takes no uid from its body, an apply that creates neither.
    let created = api
        .raw(
            Method::PATCH,
            &format!("{}?fieldManager=t", cm("default", "applied")),
            "application/apply-patch+yaml",
            apply("applied"),
        )
        .await
        .expect(201);
    assert!(is_uuid_v4(
        created["metadata"]["uid"].as_str().unwrap_or_default()
    ));
    assert_ne!(created["metadata"]["uid"], other);
    // Updating or deleting what does not exist.
    let s = api
        .put(
            &cm("default", "nope"),
            &json!({"metadata": {"name": "nope"}}),
        )
        .await
        .expect_status(404, "NotFound");
    assert_eq!(message(&s), r#"configmaps "nope" not found"#);
    api.delete(&cm("default", "nope"))
        .await
        .expect_status(404, "NotFound");
    // Name in the body different from the URL.
    api.put(
        &cm("default", "by-agent"),
        &json!({"metadata": {"name": "other"}}),
    )
    .await
    .expect_status(400, "BadRequest");
}

#[tokio::test]
async fn generation_status_and_dry_run() {
    let (_dir, _server, api) = start(&[]).await;

    let mut body = deployment("web", 1);
    body["status"] = json!({"replicas": 42});
    let created = api.post(&deploys("default"), &body).await.expect(201);
    assert_eq!(created["metadata"]["generation"], 1);
    assert!(
        created.get("status").is_none() || created["status"].get("replicas").is_none(),
        "status is not set by create: {created}"
    );

    // A label change is not a spec change.
    let mut labelled = created.clone();
    labelled["metadata"]["labels"]["tier"] = json!("front");
    let labelled = api
        .put(&deploy("default", "web"), &labelled)
        .await
        .expect(200);
    assert_eq!(labelled["metadata"]["generation"], 1, "{labelled}");
    assert_eq!(labelled["metadata"]["labels"]["tier"], "front");
    assert!(rv_num(&labelled) > rv_num(&created));

    // Status sent to the main resource is ignored.
    let mut with_status = labelled.clone();
    with_status["status"] = json!({"replicas": 7, "readyReplicas": 7});
    let ignored = api
        .put(&deploy("default", "web"), &with_status)
        .await
        .expect(200);
    assert!(
        ignored["status"].get("replicas").is_none(),
        "main PUT must ignore status: {ignored}"
    );
    assert_eq!(ignored["metadata"]["generation"], 1);

    // A spec change bumps the generation.
    let mut scaled = ignored.clone();
    scaled["spec"]["replicas"] = json!(3);
    let scaled = api
        .put(&deploy("default", "web"), &scaled)
        .await
        .expect(200);
    assert_eq!(scaled["metadata"]["generation"], 2, "{scaled}");
    assert_eq!(scaled["spec"]["replicas"], 3);

    // /status changes status only.
    let mut status = scaled.clone();
    status["status"] = json!({"replicas": 3, "observedGeneration": 2});
    status["spec"]["replicas"] = json!(10);
    status["metadata"]["labels"]["tier"] = json!("back");
    let after = api
        .put(&format!("{}/status", deploy("default", "web")), &status)
        .await
        .expect(200);
    assert_eq!(after["status"]["replicas"], 3, "{after}");
    assert_eq!(after["status"]["observedGeneration"], 2);
    assert_eq!(after["spec"]["replicas"], 3, "/status must not change spec");
    assert_eq!(after["metadata"]["labels"]["tier"], "front");
    assert_eq!(after["metadata"]["generation"], 2);
    let stored = api.get(&deploy("default", "web")).await.expect(200);
    assert_eq!(stored, after);
    let via_status = api
        .get(&format!("{}/status", deploy("default", "web")))
        .await
        .expect(200);
    assert_eq!(via_status["status"]["replicas"], 3);
    // A stale /status write conflicts.
    api.put(&format!("{}/status", deploy("default", "web")), &status)
        .await
        .expect_status(409, "Conflict");

    // dryRun=All: create, update, patch and delete answer as if done, and
    // persist nothing.
    let dry = api
        .post(
            &format!("{}?dryRun=All", cms("default")),
            &json!({"metadata": {"name": "dry"}, "data": {"k": "v"}}),
        )
        .await
        .expect(201);
    assert_eq!(dry["metadata"]["name"], "dry");
    assert!(dry["metadata"]["uid"].is_string());
    api.get(&cm("default", "dry"))
        .await
        .expect_status(404, "NotFound");

    let before = api.get(&deploy("default", "web")).await.expect(200);
    let mut change = before.clone();
    change["spec"]["replicas"] = json!(5);
    let answered = api
        .put(&format!("{}?dryRun=All", deploy("default", "web")), &change)
        .await
        .expect(200);
    assert_eq!(answered["spec"]["replicas"], 5);
    assert_eq!(answered["metadata"]["generation"], 3);
    let answered = api
        .merge_patch(
            &format!("{}?dryRun=All", deploy("default", "web")),
            &json!({"spec": {"replicas": 6}}),
        )
        .await
        .expect(200);
    assert_eq!(answered["spec"]["replicas"], 6);
    api.delete(&format!("{}?dryRun=All", deploy("default", "web")))
        .await
        .expect(200);
    assert_eq!(api.get(&deploy("default", "web")).await.expect(200), before);
    // A dry-run create of an existing name still conflicts.
    api.post(
        &format!("{}?dryRun=All", deploys("default")),
        &deployment("web", 1),
    )
    .await
    .expect_status(409, "AlreadyExists");
}

#[tokio::test]
async fn field_validation_strict_warn_and_ignore() {
    let (_dir, _server, api) = start(&[]).await;
    let mut body = deployment("strict", 1);
    body["spec"]["foo"] = json!("bar");

    let s = api
        .post(
            &format!("{}?fieldValidation=Strict", deploys("default")),
            &body,
        )
        .await
        .expect_status(400, "BadRequest");
    assert_eq!(
        message(&s),
        r#"Deployment in version "v1" cannot be handled as a Deployment: strict decoding error: unknown field "spec.foo""#
    );
    api.get(&deploy("default", "strict"))
        .await
        .expect_status(404, "NotFound");

    // Warn is the default: stored without the field, one Warning header.
    let r = api.post(&deploys("default"), &body).await;
    let created = r.expect(201);
    assert_eq!(
        r.header("warning"),
        Some(r#"299 - "unknown field \"spec.foo\"""#),
        "{:?}",
        r.headers
    );
    assert!(created["spec"].get("foo").is_none());
    assert!(
        api.get(&deploy("default", "strict")).await.expect(200)["spec"]
            .get("foo")
            .is_none()
    );

    // Ignore: accepted silently.
    body["metadata"]["name"] = json!("ignored");
    let r = api
        .post(
            &format!("{}?fieldValidation=Ignore", deploys("default")),
            &body,
        )
        .await;
    r.expect(201);
    assert_eq!(r.header("warning"), None);

    // Strict on update and patch too; nothing changes.
    let current = api.get(&deploy("default", "strict")).await.expect(200);
    let mut update = current.clone();
    update["spec"]["foo"] = json!("bar");
    update["spec"]["replicas"] = json!(4);
    api.put(
        &format!("{}?fieldValidation=Strict", deploy("default", "strict")),
        &update,
    )
    .await
    .expect_status(400, "BadRequest");
    let s = api
        .merge_patch(
            &format!("{}?fieldValidation=Strict", deploy("default", "strict")),
            &json!({"spec": {"replicas": 4, "foo": 1}}),
        )
        .await
        .expect_status(400, "BadRequest");
    assert_eq!(
        message(&s),
        r#"strict decoding error: unknown field "spec.foo""#
    );
    assert_eq!(
        api.get(&deploy("default", "strict")).await.expect(200),
        current
    );
}

#[tokio::test]
async fn finalizers_and_namespaces() {
    let (_dir, _server, api) = start(&[]).await;

    // A finalizer holds a deleted object until an update removes it.
    let created = api
        .post(
            &cms("default"),
            &json!({"metadata": {"name": "held", "finalizers": ["example.com/a", "example.com/b"]}}),
        )
        .await
        .expect(201);
    let marked = api.delete(&cm("default", "held")).await.expect(200);
    assert_eq!(
        marked["kind"], "ConfigMap",
        "a pending delete returns the object"
    );
    let ts = marked["metadata"]["deletionTimestamp"]
        .as_str()
        .expect("deletionTimestamp");
    assert!(is_rfc3339_utc(ts), "{ts}");
    assert_eq!(marked["metadata"]["deletionGracePeriodSeconds"], 0);
    let stored = api.get(&cm("default", "held")).await.expect(200);
    assert_eq!(stored["metadata"]["deletionTimestamp"], ts);
    assert_eq!(stored["metadata"]["uid"], created["metadata"]["uid"]);
    // Deleting again changes nothing.
    let again = api.delete(&cm("default", "held")).await.expect(200);
    assert_eq!(again["metadata"]["deletionTimestamp"], ts);
    // An update cannot clear deletionTimestamp; removing one finalizer keeps it.
    let mut one = stored.clone();
    one["metadata"]["finalizers"] = json!(["example.com/b"]);
    one["metadata"]["deletionTimestamp"] = Value::Null;
    let one = api.put(&cm("default", "held"), &one).await.expect(200);
    assert_eq!(one["metadata"]["deletionTimestamp"], ts);
    assert_eq!(api.names(&cms("default")).await, ["held", ROOT_CA]);
    // Removing the last one deletes it.
    api.merge_patch(
        &cm("default", "held"),
        &json!({"metadata": {"finalizers": null}}),
    )
    .await
    .expect(200);
    api.get(&cm("default", "held"))
        .await
        .expect_status(404, "NotFound");

    // A plain delete answers a Success Status.
    let plain = create_cm(&api, "default", "plain").await;
    let s = api.delete(&cm("default", "plain")).await.expect(200);
    assert_eq!(s["kind"], "Status");
    assert_eq!(s["status"], "Success");
    assert_eq!(
        s["details"],
        json!({"name": "plain", "kind": "configmaps", "uid": plain["metadata"]["uid"]})
    );
    // Preconditions.
    create_cm(&api, "default", "pre").await;
    let s = api
        .call(
            Method::DELETE,
            &cm("default", "pre"),
            &[("content-type", "application/json")],
            Some(
                serde_json::to_vec(&json!({"kind": "DeleteOptions", "apiVersion": "v1",
                    "preconditions": {"uid": "00000000-0000-4000-8000-000000000000"}}))
                .expect("json"),
            ),
        )
        .await
        .expect_status(409, "Conflict");
    let uid = api.get(&cm("default", "pre")).await.expect(200)["metadata"]["uid"]
        .as_str()
        .expect("uid")
        .to_string();
    assert_eq!(
        message(&s),
        format!(
            "Operation cannot be fulfilled on ConfigMap \"pre\": the UID in the precondition \
             (00000000-0000-4000-8000-000000000000) does not match the UID in record ({uid}). \
             The object might have been deleted and then recreated"
        ),
        "{s}"
    );
    assert_eq!(s["details"]["kind"], "ConfigMap", "{s}");
    api.get(&cm("default", "pre")).await.expect(200);

    // Creating in a namespace that does not exist.
    let s = api
        .post(&cms("missing"), &json!({"metadata": {"name": "x"}}))
        .await
        .expect_status(404, "NotFound");
    assert_eq!(message(&s), r#"namespaces "missing" not found"#);
    assert_eq!(
        s["details"],
        json!({"name": "missing", "kind": "namespaces"})
    );

    // Creating in a terminating namespace: an object with a finalizer keeps
    // it Terminating.
    create_namespace(&api, "doomed").await;
    api.post(
        &cms("doomed"),
        &json!({"metadata": {"name": "hold", "finalizers": ["example.com/hold"]}}),
    )
    .await
    .expect(201);
    let ns = api.delete("/api/v1/namespaces/doomed").await.expect(200);
    assert_eq!(ns["status"]["phase"], "Terminating", "{ns}");
    assert!(ns["metadata"]["deletionTimestamp"].is_string());
    // Give the namespace controller time to act; it must not finish.
    tokio::time::sleep(Duration::from_millis(1500)).await;
    let ns = api.get("/api/v1/namespaces/doomed").await.expect(200);
    assert_eq!(ns["status"]["phase"], "Terminating", "{ns}");
    let s = api
        .post(&cms("doomed"), &json!({"metadata": {"name": "new"}}))
        .await
        .expect_status(403, "Forbidden");
    assert_eq!(
        message(&s),
        "configmaps \"new\" is forbidden: unable to create new content in namespace doomed because it is being terminated"
    );
    assert_eq!(
        s["details"]["causes"][0]["reason"], "NamespaceTerminating",
        "{s}"
    );
    assert_eq!(api.names(&cms("doomed")).await, ["hold"]);
    // Releasing the finalizer lets the namespace go.
    api.merge_patch(
        &cm("doomed", "hold"),
        &json!({"metadata": {"finalizers": []}}),
    )
    .await
    .expect(200);
    let deadline = Instant::now() + Duration::from_secs(20);
    loop {
        let r = api.get("/api/v1/namespaces/doomed").await;
        if r.status == 404 {
            break;
        }
        assert!(
            Instant::now() < deadline,
            "namespace doomed still there: {}",
            r.text()
        );
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
}

// ------------------------------------------------------------------- lists

#[tokio::test]
async fn pagination_is_pinned_and_history_expires() {
    let (_dir, _server, api) = start(FAST_COMPACTION).await;
    create_namespace(&api, "page").await;
    for i in 0..10 {
        create_cm(&api, "page", &format!("cm-{i:02}")).await;
    }

    let page1 = api
        .get(&format!("{}?limit=4", cms("page")))
        .await
        .expect(200);
    let names = |l: &Value| -> Vec<String> {
        items(l)
            .iter()
            .map(|o| {
                o["metadata"]["name"]
                    .as_str()
                    .unwrap_or_default()
                    .to_string()
            })
            .collect()
    };
    assert_eq!(names(&page1), ["cm-00", "cm-01", "cm-02", "cm-03"]);
    assert_eq!(page1["kind"], "ConfigMapList");
    let list_rv = rv(&page1);
    let token = page1["metadata"]["continue"]
        .as_str()
        .expect("continue")
        .to_string();

    // Writes between pages do not show: the list stays at its revision.
    create_cm(&api, "page", "cm-10").await;
    create_cm(&api, "page", "cm-045").await;
    api.delete(&cm("page", "cm-05")).await.expect(200);
    api.merge_patch(&cm("page", "cm-06"), &json!({"data": {"k": "changed"}}))
        .await
        .expect(200);

    let page2 = api
        .get(&format!("{}?limit=4&continue={token}", cms("page")))
        .await
        .expect(200);
    assert_eq!(names(&page2), ["cm-04", "cm-05", "cm-06", "cm-07"]);
    assert_eq!(rv(&page2), list_rv);
    assert_eq!(
        items(&page2)[2]["data"]["k"],
        "v",
        "cm-06 as of the first page"
    );
    let token2 = page2["metadata"]["continue"].as_str().expect("continue");
    let page3 = api
        .get(&format!("{}?limit=4&continue={token2}", cms("page")))
        .await
        .expect(200);
    assert_eq!(names(&page3), ["cm-08", "cm-09", ROOT_CA]);
    assert_eq!(rv(&page3), list_rv);
    assert!(
        page3["metadata"].get("continue").is_none_or(|c| c == ""),
        "the last page has no continue: {page3}"
    );
    // A fresh list sees the writes.
    let all = api.names(&cms("page")).await;
    assert_eq!(all.len(), 12);
    assert!(all.contains(&"cm-10".to_string()) && !all.contains(&"cm-05".to_string()));

    // A continue token and a resourceVersion at a compacted revision: 410.
    let old = api
        .get(&format!("{}?limit=2", cms("page")))
        .await
        .expect(200);
    let old_token = old["metadata"]["continue"]
        .as_str()
        .expect("continue")
        .to_string();
    let old_rv = rv(&old);
    // Two writes after the token: compaction to the newest revision that is
    // more than 2 s old then removes the first change after it, which both a
    // list at old_rv and a watch from old_rv need.
    create_cm(&api, "page", "after-1").await;
    create_cm(&api, "page", "after-2").await;
    // The compactor runs every 2 s; on a loaded machine its pass may come
    // late, so wait for the answer to turn (up to 30 s) rather than a
    // fixed time.
    tokio::time::sleep(Duration::from_millis(4000)).await;
    let deadline = std::time::Instant::now() + Duration::from_secs(30);
    let page = format!("{}?limit=2&continue={old_token}", cms("page"));
    while api.get(&page).await.status == 200 && std::time::Instant::now() < deadline {
        tokio::time::sleep(Duration::from_millis(250)).await;
    }
    let s = api.get(&page).await.expect_status(410, "Expired");
    assert!(
        message(&s).starts_with(
            "The provided continue parameter is too old to display a consistent list result."
        ),
        "{s}"
    );
    api.get(&format!(
        "{}?resourceVersion={old_rv}&resourceVersionMatch=Exact",
        cms("page")
    ))
    .await
    .expect_status(410, "Expired");

    // A watch from the compacted revision: 410 before streaming, or an
    // ERROR event with code 410.
    match api
        .try_watch(&format!("{}?watch=1&resourceVersion={old_rv}", cms("page")))
        .await
    {
        Err(reply) => {
            let s = reply.expect_status(410, "Expired");
            assert!(message(&s).starts_with("too old resource version"), "{s}");
        }
        Ok(mut w) => {
            let e = w.event().await;
            assert_eq!(e["type"], "ERROR", "{e}");
            assert_eq!(e["object"]["code"], 410, "{e}");
            assert_eq!(e["object"]["reason"], "Expired", "{e}");
            w.expect_end(Duration::from_secs(5)).await;
        }
    }
    // A continue token that is not one.
    api.get(&format!("{}?limit=2&continue=bm90LWEtdG9rZW4", cms("page")))
        .await
        .expect_status(400, "BadRequest");
    // A resourceVersion from the future.
    let s = api
        .get(&format!(
            "{}?resourceVersion=999999&resourceVersionMatch=NotOlderThan",
            cms("page")
        ))
        .await
        .expect_status(504, "Timeout");
    assert_eq!(
        s["details"]["causes"][0]["reason"], "ResourceVersionTooLarge",
        "{s}"
    );
}

// ----------------------------------------------------------------- watches

#[tokio::test]
async fn watch_streams_changes_and_honours_resource_version_and_selectors() {
    let (_dir, _server, api) = start(&[]).await;
    create_namespace(&api, "w").await;
    let a = create_cm(&api, "w", "a").await;

    // No resourceVersion: synthetic ADDED for what exists, then changes.
    let mut all = api.watch(&format!("{}?watch=1", cms("w"))).await;
    assert_eq!(event_name(&all.event().await), ("ADDED".into(), "a".into()));
    assert_eq!(
        event_name(&all.event().await),
        ("ADDED".into(), ROOT_CA.into())
    );
    let b = create_cm(&api, "w", "b").await;
    let b2 = api
        .merge_patch(&cm("w", "b"), &json!({"data": {"k": "v2"}}))
        .await
        .expect(200);
    api.delete(&cm("w", "b")).await.expect(200);
    let added = all.change().await;
    assert_eq!(event_name(&added), ("ADDED".into(), "b".into()));
    assert_eq!(added["object"], b);
    let modified = all.change().await;
    assert_eq!(event_name(&modified), ("MODIFIED".into(), "b".into()));
    assert_eq!(modified["object"], b2);
    let deleted = all.change().await;
    assert_eq!(event_name(&deleted), ("DELETED".into(), "b".into()));
    assert!(
        rv_num(&deleted["object"]) > rv_num(&b2),
        "a DELETED object carries the deletion's revision: {deleted}"
    );
    assert_eq!(deleted["object"]["kind"], "ConfigMap");
    assert_eq!(deleted["object"]["apiVersion"], "v1");

    // resourceVersion=N: only what changed after N, no synthetic events.
    let mut replay = api
        .watch(&format!("{}?watch=1&resourceVersion={}", cms("w"), rv(&a)))
        .await;
    let got: Vec<(String, String)> = [
        replay.change().await,
        replay.change().await,
        replay.change().await,
    ]
    .iter()
    .map(event_name)
    .collect();
    assert_eq!(
        got,
        [
            ("ADDED".to_string(), "b".to_string()),
            ("MODIFIED".into(), "b".into()),
            ("DELETED".into(), "b".into())
        ]
    );
    replay.expect_quiet(Duration::from_millis(500)).await;
    let mut after_b = api
        .watch(&format!("{}?watch=1&resourceVersion={}", cms("w"), rv(&b2)))
        .await;
    assert_eq!(
        event_name(&after_b.change().await),
        ("DELETED".into(), "b".into())
    );
    after_b.expect_quiet(Duration::from_millis(300)).await;

    // timeoutSeconds ends the stream cleanly.
    let current = rv(&api.get(&cms("w")).await.expect(200));
    let started = Instant::now();
    let mut short = api
        .watch(&format!(
            "{}?watch=1&resourceVersion={current}&timeoutSeconds=1",
            cms("w")
        ))
        .await;
    short.expect_end(Duration::from_secs(5)).await;
    assert!(
        started.elapsed() >= Duration::from_millis(900),
        "{:?}",
        started.elapsed()
    );

    // Selectors: an object that stops matching is DELETED for the watcher,
    // one that starts matching is ADDED.
    let mut by_label = api
        .watch(&format!(
            "{}?watch=1&resourceVersion={current}&labelSelector=app%3Dweb",
            cms("w")
        ))
        .await;
    let mut by_name = api
        .watch(&format!(
            "{}?watch=1&resourceVersion={current}&fieldSelector=metadata.name%3Dc",
            cms("w")
        ))
        .await;
    let mut by_both = api
        .watch(&format!(
            "{}?watch=1&fieldSelector=metadata.name%3Dd,metadata.namespace%3Dw&labelSelector=app",
            cms("w")
        ))
        .await;
    api.post(
        &cms("w"),
        &json!({"metadata": {"name": "c", "labels": {"app": "web"}}}),
    )
    .await
    .expect(201);
    api.post(
        &cms("w"),
        &json!({"metadata": {"name": "d", "labels": {"app": "web"}}}),
    )
    .await
    .expect(201);
    api.merge_patch(
        &cm("w", "c"),
        &json!({"metadata": {"labels": {"app": "db"}}}),
    )
    .await
    .expect(200);
    api.merge_patch(
        &cm("w", "c"),
        &json!({"metadata": {"labels": {"app": "web"}}}),
    )
    .await
    .expect(200);
    api.delete(&cm("w", "c")).await.expect(200);
    // Matches no selector above: filtered out.
    api.post(
        &cms("w"),
        &json!({"metadata": {"name": "e", "labels": {"app": "other"}}}),
    )
    .await
    .expect(201);

    let mut got = Vec::new();
    for _ in 0..5 {
        got.push(event_name(&by_label.change().await));
    }
    let ev = |t: &str, n: &str| (t.to_string(), n.to_string());
    assert_eq!(
        got,
        [
            ev("ADDED", "c"),
            ev("ADDED", "d"),
            ev("DELETED", "c"),
            ev("ADDED", "c"),
            ev("DELETED", "c")
        ]
    );
    let mut got = Vec::new();
    for _ in 0..4 {
        got.push(event_name(&by_name.change().await));
    }
    assert_eq!(
        got,
        [
            ev("ADDED", "c"),
            ev("MODIFIED", "c"),
            ev("MODIFIED", "c"),
            ev("DELETED", "c")
        ]
    );
    assert_eq!(event_name(&by_both.change().await), ev("ADDED", "d"));
    by_name.expect_quiet(Duration::from_millis(300)).await;
    by_both.expect_quiet(Duration::from_millis(100)).await;
    by_label.expect_quiet(Duration::from_millis(100)).await;
}

#[tokio::test]
async fn watch_list_sends_initial_events_then_the_end_bookmark() {
    let (_dir, _server, api) = start(&[]).await;
    create_namespace(&api, "wl").await;
    let mut latest = 0;
    for n in ["x", "y", "z"] {
        latest = rv_num(&create_cm(&api, "wl", n).await);
    }

    let base = format!(
        "{}?watch=1&sendInitialEvents=true&resourceVersionMatch=NotOlderThan&allowWatchBookmarks=true",
        cms("wl")
    );
    let mut w = api.watch(&base).await;
    let mut seen = Vec::new();
    let bookmark = loop {
        let e = w.event().await;
        match e["type"].as_str() {
            Some("ADDED") => seen.push(event_name(&e).1),
            Some("BOOKMARK") => break e,
            _ => panic!("unexpected event before the bookmark: {e}"),
        }
    };
    seen.sort();
    assert_eq!(seen, [ROOT_CA, "x", "y", "z"]);
    let obj = &bookmark["object"];
    assert_eq!(obj["kind"], "ConfigMap", "{bookmark}");
    assert_eq!(obj["apiVersion"], "v1", "{bookmark}");
    assert_eq!(
        obj["metadata"]["annotations"],
        json!({"k8s.io/initial-events-end": "true"}),
        "{bookmark}"
    );
    assert!(rv_num(obj) >= latest, "{bookmark}");
    // Then live events.
    create_cm(&api, "wl", "live").await;
    assert_eq!(
        event_name(&w.change().await),
        ("ADDED".into(), "live".into())
    );

    // With a selector, only matching initial events.
    let mut one = api
        .watch(&format!("{base}&fieldSelector=metadata.name%3Dy"))
        .await;
    assert_eq!(event_name(&one.event().await), ("ADDED".into(), "y".into()));
    let end = one.event().await;
    assert_eq!(end["type"], "BOOKMARK");
    assert_eq!(
        end["object"]["metadata"]["annotations"]["k8s.io/initial-events-end"],
        "true"
    );

    // sendInitialEvents without resourceVersionMatch=NotOlderThan: 422.
    let s = api
        .get(&format!(
            "{}?watch=1&sendInitialEvents=true&allowWatchBookmarks=true",
            cms("wl")
        ))
        .await
        .expect_status(422, "Invalid");
    assert_eq!(
        message(&s),
        r#"ListOptions.meta.k8s.io "" is invalid: resourceVersionMatch: Forbidden: sendInitialEvents requires setting resourceVersionMatch to NotOlderThan"#
    );
    assert_eq!(s["details"]["causes"][0]["field"], "resourceVersionMatch");
}

#[tokio::test]
async fn watches_end_cleanly_on_sigterm() {
    let dir = tempfile::tempdir().expect("tempdir");
    let mut server = Server::start(dir.path(), &[]).await;
    let h2 = Api::new(&server);
    let h1 = Api::http1(&server);
    create_cm(&h2, "default", "one").await;
    let mut w2 = h2.watch(&format!("{}?watch=1", cms("default"))).await;
    let mut w1 = h1
        .watch("/api/v1/configmaps?watch=1&allowWatchBookmarks=true")
        .await;
    // The initial events: `one` and the kube-root-ca.crt ConfigMaps.
    for _ in 0..h2.names(&cms("default")).await.len() {
        assert_eq!(event_name(&w2.event().await).0, "ADDED");
    }
    for _ in 0..h2.names("/api/v1/configmaps").await.len() {
        assert_eq!(event_name(&w1.change().await).0, "ADDED");
    }

    let (status, (), ()) = tokio::join!(
        server.stop_with(Signal::SIGTERM, Duration::from_secs(15)),
        w2.expect_end(Duration::from_secs(10)),
        w1.expect_end(Duration::from_secs(10)),
    );
    assert_eq!(status.code(), Some(0), "log:\n{}", server.logs());
}

// --------------------------------------------------------------- discovery

const AGGREGATED_ACCEPT: &str = "application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList,application/json;g=apidiscovery.k8s.io;v=v2beta1;as=APIGroupDiscoveryList,application/json";
const AGGREGATED_TYPE: &str =
    "application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList";

#[tokio::test]
async fn discovery_documents() {
    let (_dir, server, api) = start(&[]).await;

    // Legacy: /api, /apis, /api/v1, /apis/apps/v1.
    for client in [api.clone(), Api::http1(&server)] {
        let r = client.get("/api").await;
        let v = r.expect(200);
        assert_eq!(r.header("content-type"), Some("application/json"));
        assert_eq!(v["kind"], "APIVersions");
        assert_eq!(v["versions"], json!(["v1"]));
        assert_eq!(
            v["serverAddressByClientCIDRs"],
            json!([{"clientCIDR": "0.0.0.0/0", "serverAddress": server.addr.to_string()}])
        );
    }
    let apis = api.get("/apis").await.expect(200);
    assert_eq!(apis["kind"], "APIGroupList");
    assert_eq!(apis["apiVersion"], "v1");
    let groups = apis["groups"].as_array().expect("groups");
    let apps = groups
        .iter()
        .find(|g| g["name"] == "apps")
        .expect("apps group");
    assert_eq!(
        apps["preferredVersion"],
        json!({"groupVersion": "apps/v1", "version": "v1"})
    );
    assert!(
        groups.iter().all(|g| g["name"] != ""),
        "core is not in /apis"
    );
    let group = api.get("/apis/apps").await.expect(200);
    assert_eq!(group["kind"], "APIGroup");
    assert_eq!(group["name"], "apps");

    let core = api.get("/api/v1").await.expect(200);
    assert_eq!(core["kind"], "APIResourceList");
    assert_eq!(core["groupVersion"], "v1");
    let find = |list: &Value, name: &str| -> Value {
        list["resources"]
            .as_array()
            .and_then(|rs| rs.iter().find(|r| r["name"] == name).cloned())
            .unwrap_or_else(|| panic!("no {name} in {list}"))
    };
    let pods = find(&core, "pods");
    assert_eq!(pods["storageVersionHash"], "xPOwRZ+Yhw8=");
    assert_eq!(pods["namespaced"], true);
    assert_eq!(find(&core, "namespaces")["namespaced"], false);
    assert_eq!(find(&core, "configmaps")["shortNames"], json!(["cm"]));

    let appsv1 = api.get("/apis/apps/v1").await.expect(200);
    assert_eq!(appsv1["kind"], "APIResourceList");
    assert_eq!(appsv1["groupVersion"], "apps/v1");
    assert_eq!(
        find(&appsv1, "deployments"),
        json!({"name": "deployments", "singularName": "deployment", "namespaced": true,
            "kind": "Deployment",
            "verbs": ["create", "delete", "deletecollection", "get", "list", "patch", "update", "watch"],
            "shortNames": ["deploy"], "categories": ["all"], "storageVersionHash": "8aSe+NMegvE="})
    );
    assert_eq!(
        find(&appsv1, "deployments/scale"),
        json!({"name": "deployments/scale", "singularName": "", "namespaced": true,
            "group": "autoscaling", "version": "v1", "kind": "Scale", "verbs": ["get", "patch", "update"]})
    );
    assert_eq!(
        find(&appsv1, "deployments/status"),
        json!({"name": "deployments/status", "singularName": "", "namespaced": true,
            "kind": "Deployment", "verbs": ["get", "patch", "update"]})
    );
    // Unserved group/versions: Go's plain-text 404, as kube-apiserver.
    for path in ["/apis/nope/v1", "/apis/apps/v2"] {
        let r = api.get(path).await;
        assert_eq!(r.status.as_u16(), 404, "{path}");
        assert_eq!(r.text(), "404 page not found\n", "{path}");
    }

    // Aggregated v2.
    let r = api.get_as("/apis", AGGREGATED_ACCEPT).await;
    let agg = r.expect(200);
    assert_eq!(r.header("content-type"), Some(AGGREGATED_TYPE));
    assert_eq!(r.header("vary"), Some("Accept"));
    let etag = r.header("etag").expect("an ETag").to_string();
    assert!(
        etag.len() > 2 && etag.starts_with('"') && etag.ends_with('"'),
        "{etag}"
    );
    assert_eq!(agg["kind"], "APIGroupDiscoveryList");
    assert_eq!(agg["apiVersion"], "apidiscovery.k8s.io/v2");
    let apps = agg["items"]
        .as_array()
        .and_then(|is| is.iter().find(|i| i["metadata"]["name"] == "apps"))
        .expect("apps in the aggregated list");
    let v1 = &apps["versions"][0];
    assert_eq!(v1["version"], "v1");
    let d = v1["resources"]
        .as_array()
        .and_then(|rs| rs.iter().find(|r| r["resource"] == "deployments"))
        .expect("deployments");
    assert_eq!(
        d["responseKind"],
        json!({"group": "apps", "version": "v1", "kind": "Deployment"})
    );
    assert_eq!(d["scope"], "Namespaced");
    assert_eq!(d["singularResource"], "deployment");
    assert_eq!(d["shortNames"], json!(["deploy"]));
    assert_eq!(d["categories"], json!(["all"]));
    let scale = d["subresources"]
        .as_array()
        .and_then(|s| s.iter().find(|s| s["subresource"] == "scale"))
        .expect("scale subresource");
    assert_eq!(
        scale["responseKind"],
        json!({"group": "autoscaling", "version": "v1", "kind": "Scale"})
    );
    // The same body, byte for byte, on a second request; 304 on a match.
    let again = api.get_as("/apis", AGGREGATED_ACCEPT).await;
    assert_eq!(again.header("etag"), Some(etag.as_str()));
    assert_eq!(again.body, r.body);
    let not_modified = api
        .call(
            Method::GET,
            "/apis",
            &[("accept", AGGREGATED_ACCEPT), ("if-none-match", &etag)],
            None,
        )
        .await;
    assert_eq!(not_modified.status, 304, "{}", not_modified.text());
    assert!(not_modified.body.is_empty());
    assert_eq!(not_modified.header("etag"), Some(etag.as_str()));
    let other = api
        .call(
            Method::GET,
            "/apis",
            &[
                ("accept", AGGREGATED_ACCEPT),
                ("if-none-match", "\"other\""),
            ],
            None,
        )
        .await;
    assert_eq!(other.status, 200);

    let r = api.get_as("/api", AGGREGATED_ACCEPT).await;
    let core = r.expect(200);
    assert_eq!(r.header("content-type"), Some(AGGREGATED_TYPE));
    assert!(r.header("etag").is_some());
    let items = core["items"].as_array().expect("items");
    assert_eq!(items.len(), 1, "{core}");
    assert_eq!(items[0]["metadata"]["name"], "");
    assert_eq!(items[0]["versions"][0]["version"], "v1");
    assert!(
        items[0]["versions"][0]["resources"]
            .as_array()
            .is_some_and(|rs| rs.iter().any(|r| r["resource"] == "pods"
                && r["responseKind"] == json!({"group": "", "version": "v1", "kind": "Pod"})))
    );
    // /api and /apis answer with different ETags.
    assert_ne!(r.header("etag"), Some(etag.as_str()));
}

// ------------------------------------------------------------------ tables

const TABLE_ACCEPT: &str = "application/json;as=Table;v=v1;g=meta.k8s.io,application/json;as=Table;v=v1beta1;g=meta.k8s.io,application/json";

#[tokio::test]
async fn deployment_tables() {
    let (_dir, _server, api) = start(&[]).await;
    api.post(&deploys("default"), &deployment("web", 2))
        .await
        .expect(201);

    let r = api.get_as(&deploys("default"), TABLE_ACCEPT).await;
    let table = r.expect(200);
    assert_eq!(r.header("content-type"), Some("application/json"));
    assert_eq!(table["kind"], "Table");
    assert_eq!(table["apiVersion"], "meta.k8s.io/v1");
    assert!(table["metadata"]["resourceVersion"].is_string(), "{table}");
    let columns: Vec<(&str, i64)> = table["columnDefinitions"]
        .as_array()
        .expect("columnDefinitions")
        .iter()
        .map(|c| {
            (
                c["name"].as_str().unwrap_or_default(),
                c["priority"].as_i64().unwrap_or(-1),
            )
        })
        .collect();
    assert_eq!(
        columns,
        [
            ("Name", 0),
            ("Ready", 0),
            ("Up-to-date", 0),
            ("Available", 0),
            ("Age", 0),
            ("Containers", 1),
            ("Images", 1),
            ("Selector", 1)
        ]
    );
    let row = &table["rows"][0];
    let cells = row["cells"].as_array().expect("cells");
    assert_eq!(cells.len(), 8, "{row}");
    assert_eq!(cells[0], "web");
    assert_eq!(cells[1], "0/2", "ready/desired: {row}");
    assert_eq!(cells[5], "web");
    assert_eq!(cells[6], "nginx:1.27");
    assert_eq!(cells[7], "app=web");
    // Default: the object as PartialObjectMetadata.
    assert_eq!(row["object"]["kind"], "PartialObjectMetadata", "{row}");
    assert_eq!(row["object"]["apiVersion"], "meta.k8s.io/v1");
    assert_eq!(row["object"]["metadata"]["name"], "web");

    let full = api
        .get_as(
            &format!("{}?includeObject=Object", deploys("default")),
            TABLE_ACCEPT,
        )
        .await
        .expect(200);
    let obj = &full["rows"][0]["object"];
    assert_eq!(obj["kind"], "Deployment", "{obj}");
    assert_eq!(obj["spec"]["replicas"], 2);
    let none = api
        .get_as(
            &format!("{}?includeObject=None", deploys("default")),
            TABLE_ACCEPT,
        )
        .await
        .expect(200);
    assert!(
        none["rows"][0].get("object").is_none_or(Value::is_null),
        "{none}"
    );
    api.get_as(
        &format!("{}?includeObject=Everything", deploys("default")),
        TABLE_ACCEPT,
    )
    .await
    .expect_status(400, "BadRequest");

    // One object as a Table; plain JSON without the Table Accept.
    let one = api
        .get_as(&deploy("default", "web"), TABLE_ACCEPT)
        .await
        .expect(200);
    assert_eq!(one["kind"], "Table");
    assert_eq!(one["rows"].as_array().map(Vec::len), Some(1));
    let plain = api.get(&deploys("default")).await.expect(200);
    assert_eq!(plain["kind"], "DeploymentList");
}

#[tokio::test]
async fn namespaces_have_no_collection_delete() {
    let (_dir, _server, api) = start(&[]).await;
    let v1 = api.get("/api/v1").await.expect(200);
    let ns = v1["resources"]
        .as_array()
        .and_then(|r| r.iter().find(|r| r["name"] == "namespaces"))
        .cloned()
        .expect("namespaces in /api/v1");
    assert_eq!(
        ns["verbs"],
        json!([
            "create", "delete", "get", "list", "patch", "update", "watch"
        ])
    );
    api.delete("/api/v1/namespaces")
        .await
        .expect_status(405, "MethodNotAllowed");
    assert!(
        api.names("/api/v1/namespaces")
            .await
            .contains(&"default".to_string())
    );
    // The OpenAPI document agrees: no deletecollection on namespaces.
    let doc = api.get("/openapi/v3/api/v1").await.expect(200);
    assert!(doc["paths"]["/api/v1/namespaces"].get("delete").is_none());
    assert!(doc["paths"]["/api/v1/namespaces"].get("post").is_some());
    assert!(
        doc["paths"]["/api/v1/namespaces/{namespace}/configmaps"]
            .get("delete")
            .is_some()
    );
}
