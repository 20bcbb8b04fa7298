//! Auditing end to end: a real server with `--audit-log-path`,
//! `--audit-policy-file` and a 1 MB `--audit-log-maxsize`; kubectl and
//! direct requests (including a 404 and a 401) each appear with the level
//! the policy gives them, Secrets' bodies stay out of the log under a
//! catch-all rule, and the log rotates with lumberjack's backup names.

use std::path::Path;
use std::time::Duration;

use reqwest::Method;
use serde_json::{Value, json};
use skein_tests::http::Api;
use skein_tests::kubectl_binaries;
use skein_tests::server::Server;

const POLICY: &str = r#"
apiVersion: audit.k8s.io/v1
kind: Policy
rules:
  - level: None
    nonResourceURLs: ["/readyz", "/readyz/*"]
  - level: RequestResponse
    resources:
      - group: ""
        resources: ["configmaps"]
  - level: Metadata
    verbs: ["watch"]
  - level: Request
"#;

const SECRET: &str = "audit-secret-marker-41d9";

/// Every event in the log and its backups, oldest file first.
fn events(dir: &Path) -> (Vec<Value>, Vec<String>) {
    let mut backups: Vec<String> = std::fs::read_dir(dir)
        .expect("read log dir")
        .filter_map(Result::ok)
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| n.starts_with("audit-") && n.ends_with(".log"))
        .collect();
    backups.sort();
    let mut files: Vec<String> = backups.clone();
    files.push("audit.log".into());
    let mut out = Vec::new();
    for f in files {
        let text = std::fs::read_to_string(dir.join(&f)).expect("read audit log");
        for line in text.lines() {
            out.push(
                serde_json::from_str(line)
                    .unwrap_or_else(|e| panic!("bad line in {f} ({e}): {line}")),
            );
        }
    }
    (out, backups)
}

fn by_id<'a>(events: &'a [Value], id: &str) -> Vec<&'a Value> {
    events.iter().filter(|e| e["auditID"] == id).collect()
}

#[tokio::test]
async fn requests_are_audited_at_their_level_and_the_log_rotates() {
    let kubectl = kubectl_binaries().remove(0);
    let dir = tempfile::tempdir().expect("tempdir");
    let logs = dir.path().join("logs");
    std::fs::create_dir_all(&logs).expect("mkdir");
    let policy = dir.path().join("policy.yaml");
    std::fs::write(&policy, POLICY).expect("write policy");
    let tokens = dir.path().join("tokens.csv");
    std::fs::write(&tokens, "alice-token,alice,1001,\"dev\"\n").expect("write tokens");
    let flags = [
        format!("--audit-log-path={}", logs.join("audit.log").display()),
        format!("--audit-policy-file={}", policy.display()),
        "--audit-log-maxsize=1".to_string(),
        "--audit-log-maxbackup=3".to_string(),
        format!("--token-auth-file={}", tokens.display()),
        // The test is about what is recorded, not who may do it.
        "--authorization-mode=AlwaysAllow".to_string(),
    ];
    let args: Vec<&str> = flags.iter().map(String::as_str).collect();
    let server = Server::start(&dir.path().join("data"), &args).await;
    let api = Api::new(&server);

    // Direct requests: each one's Audit-Id must show up with its stages.
    let created = api
        .call(
            Method::POST,
            "/api/v1/namespaces/default/configmaps",
            &[("content-type", "application/json")],
            Some(json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "cm1"}, "data": {"k": "v"}}).to_string().into_bytes()),
        )
        .await;
    assert_eq!(created.status, 201, "{}", created.text());
    let missing = api.get("/api/v1/namespaces/default/configmaps/nope").await;
    assert_eq!(missing.status, 404);
    let pods = api.get("/api/v1/namespaces/default/pods").await;
    assert_eq!(pods.status, 200);
    let version = api.get("/version").await;
    // A watch that the server ends after a second.
    let watch = api
        .get("/api/v1/namespaces/default/pods?watch=true&timeoutSeconds=1")
        .await;
    assert_eq!(watch.status, 200);
    let ids: Vec<String> = [&created, &missing, &pods, &version, &watch]
        .iter()
        .map(|r| r.header("audit-id").expect("Audit-Id header").to_string())
        .collect();

    // 401: a bad token.
    let bad = reqwest::Client::builder()
        .use_rustls_tls()
        .tls_built_in_root_certs(false)
        .add_root_certificate(
            reqwest::Certificate::from_pem(&server.pki_file("ca.crt")).expect("ca"),
        )
        .build()
        .expect("client")
        .get(server.url("/api/v1/namespaces"))
        .bearer_auth("wrong-token")
        .send()
        .await
        .expect("401 request");
    assert_eq!(bad.status(), 401);
    let unauthorized_id = bad
        .headers()
        .get("audit-id")
        .expect("Audit-Id on 401")
        .to_str()
        .expect("ascii")
        .to_string();

    // kubectl: a Secret under the catch-all Request rule, and a 404.
    let literal = format!("--from-literal=password={SECRET}");
    let out = server.kubectl(&kubectl, &["create", "secret", "generic", "s1", &literal]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let out = server.kubectl(&kubectl, &["get", "deployment", "ghost"]);
    assert!(!out.status.success());
    let alice = server.token_kubeconfig("alice", "alice-token");
    let out = server.kubectl_with(&kubectl, &alice, &["get", "namespaces"]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );

    // Enough RequestResponse traffic to pass 1 MB and rotate (~600 KB per
    // create: body in RequestReceived, both bodies in ResponseComplete),
    // little enough that maxbackup=3 keeps every event.
    let big = "x".repeat(200 * 1024);
    for i in 0..4 {
        let r = api
            .call(
                Method::POST,
                "/api/v1/namespaces/default/configmaps",
                &[("content-type", "application/json")],
                Some(json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": format!("big{i}")}, "data": {"k": big}}).to_string().into_bytes()),
            )
            .await;
        assert_eq!(r.status, 201);
    }
    // The writer flushes each batch; give it a moment.
    tokio::time::sleep(Duration::from_millis(500)).await;

    let (events, backups) = events(&logs);
    assert!(
        !backups.is_empty(),
        "no rotation: {:?}",
        std::fs::read_dir(&logs).map(|d| d.count())
    );
    assert!(backups.len() <= 3, "maxbackup: {backups:?}");
    for b in &backups {
        // audit-2006-01-02T15-04-05.000.log
        assert_eq!(b.len(), "audit-2006-01-02T15-04-05.000.log".len(), "{b}");
        assert_eq!(&b[16..17], "T", "{b}");
        let len = std::fs::metadata(logs.join(b)).expect("backup").len();
        assert!(len <= 1024 * 1024, "{b} is {len} bytes");
    }

    // Created ConfigMap: both stages, RequestResponse, bodies.
    let evs = by_id(&events, &ids[0]);
    let stages: Vec<&str> = evs
        .iter()
        .map(|e| e["stage"].as_str().unwrap_or_default())
        .collect();
    assert_eq!(stages, ["RequestReceived", "ResponseComplete"], "{evs:?}");
    let done = evs[1];
    assert_eq!(done["level"], "RequestResponse");
    assert_eq!(done["verb"], "create");
    assert_eq!(done["apiVersion"], "audit.k8s.io/v1");
    assert_eq!(done["kind"], "Event");
    assert_eq!(
        done["objectRef"],
        json!({"resource": "configmaps", "namespace": "default", "apiVersion": "v1"})
    );
    assert_eq!(done["user"]["username"], "skein-admin", "{done}");
    assert_eq!(done["responseStatus"]["code"], 201);
    assert_eq!(done["requestObject"]["data"]["k"], "v");
    assert_eq!(done["responseObject"]["metadata"]["name"], "cm1");
    assert_eq!(done["sourceIPs"], json!(["127.0.0.1"]));
    assert!(done["requestReceivedTimestamp"].is_string() && done["stageTimestamp"].is_string());

    // 404, with the Status in responseStatus.
    let evs = by_id(&events, &ids[1]);
    let done = evs.last().expect("404 event");
    assert_eq!(done["verb"], "get");
    assert_eq!(done["objectRef"]["name"], "nope");
    assert_eq!(done["responseStatus"]["code"], 404);
    assert_eq!(done["responseStatus"]["reason"], "NotFound");

    // Pods list: catch-all Request level, no bodies for a GET.
    let evs = by_id(&events, &ids[2]);
    assert_eq!(evs.len(), 2);
    assert_eq!(evs[1]["level"], "Request");
    assert_eq!(evs[1]["verb"], "list");
    assert!(evs[1].get("responseObject").is_none());

    // /version: non-resource, verb get.
    let evs = by_id(&events, &ids[3]);
    assert_eq!(evs.last().expect("version")["verb"], "get");
    assert!(evs.last().expect("version").get("objectRef").is_none());

    // The watch: Metadata; RequestReceived, ResponseStarted at once, and
    // ResponseComplete when its body ends, a second later.
    let evs = by_id(&events, &ids[4]);
    let stages: Vec<&Value> = evs.iter().map(|e| &e["stage"]).collect();
    assert_eq!(
        stages,
        [
            &json!("RequestReceived"),
            &json!("ResponseStarted"),
            &json!("ResponseComplete")
        ],
        "{evs:?}"
    );
    assert!(
        evs.iter()
            .all(|e| e["level"] == "Metadata" && e["verb"] == "watch")
    );
    assert_eq!(evs[2]["responseStatus"]["code"], 200, "{evs:?}");
    let at = |e: &Value| e["stageTimestamp"].as_str().unwrap_or_default().to_string();
    assert!(at(evs[2]) > at(evs[1]), "{evs:?}");

    // 401: one ResponseStarted event with an empty user.
    let evs = by_id(&events, &unauthorized_id);
    assert_eq!(evs.len(), 1, "{evs:?}");
    assert_eq!(evs[0]["stage"], "ResponseStarted");
    assert_eq!(evs[0]["user"], json!({}));
    assert_eq!(evs[0]["responseStatus"]["code"], 401);

    // kubectl's requests: the Secret create without its body; the 404.
    let secret_create = events
        .iter()
        .find(|e| {
            e["verb"] == "create"
                && e["objectRef"]["resource"] == "secrets"
                && e["stage"] == "ResponseComplete"
        })
        .expect("secret create event");
    assert_eq!(secret_create["level"], "Request");
    assert!(
        secret_create.get("requestObject").is_none(),
        "{secret_create}"
    );
    assert!(
        secret_create["userAgent"]
            .as_str()
            .unwrap_or_default()
            .starts_with("kubectl")
    );
    let all = events.iter().map(Value::to_string).collect::<String>();
    assert!(
        !all.contains(SECRET),
        "the Secret's value is in the audit log"
    );
    let ghost = events
        .iter()
        .find(|e| e["objectRef"]["name"] == "ghost" && e["stage"] == "ResponseComplete")
        .expect("kubectl 404 event");
    assert_eq!(ghost["responseStatus"]["code"], 404);
    assert_eq!(ghost["objectRef"]["apiGroup"], "apps");
    let alice_list = events
        .iter()
        .find(|e| e["user"]["username"] == "alice" && e["objectRef"]["resource"] == "namespaces")
        .expect("alice's list");
    assert_eq!(
        alice_list["user"]["groups"],
        json!(["dev", "system:authenticated"])
    );
    assert_eq!(alice_list["user"]["uid"], "1001");
    // The authorization filter's annotations are on the events after it
    // (not on RequestReceived), as upstream's.
    let alice_done = events
        .iter()
        .find(|e| {
            e["user"]["username"] == "alice"
                && e["objectRef"]["resource"] == "namespaces"
                && e["stage"] == "ResponseComplete"
        })
        .expect("alice's list, complete");
    assert_eq!(
        alice_done["annotations"],
        json!({"authorization.k8s.io/decision": "allow", "authorization.k8s.io/reason": ""}),
        "{alice_done}"
    );
    assert!(
        events
            .iter()
            .filter(|e| e["stage"] == "RequestReceived")
            .all(|e| e.get("annotations").is_none())
    );

    // The harness's /readyz polls are level None: never recorded.
    assert!(events.iter().all(|e| {
        !e["requestURI"]
            .as_str()
            .unwrap_or_default()
            .starts_with("/readyz")
    }));
}

/// Issue 14's bad input: a bad token, an expired JWT, forged front-proxy
/// headers without the front-proxy certificate, a request with neither a
/// client certificate nor a token, and an impersonation without the
/// `impersonate` verb each get a clean 401 or 403 `Status`, and each is in
/// the audit log under its Audit-Id with that code (a 401 with an empty
/// user: the forged identity is never recorded as the caller).
#[tokio::test]
async fn bad_credentials_get_a_clean_status_and_are_audited() {
    use skein_tests::oidc::{ISSUER, Issuer, now};

    let dir = tempfile::tempdir().expect("tempdir");
    let logs = dir.path().join("logs");
    std::fs::create_dir_all(&logs).expect("mkdir");
    let policy = dir.path().join("policy.yaml");
    std::fs::write(
        &policy,
        "apiVersion: audit.k8s.io/v1\nkind: Policy\nrules:\n- level: Metadata\n",
    )
    .expect("write policy");
    let tokens = dir.path().join("tokens.csv");
    std::fs::write(&tokens, "alice-token,alice,1001,\"dev\"\n").expect("write tokens");
    let issuer = Issuer::new("k1");
    let jwks = dir.path().join("jwks.json");
    std::fs::write(&jwks, json!({"keys": [issuer.jwk]}).to_string()).expect("write jwks");
    let flags = [
        format!("--audit-log-path={}", logs.join("audit.log").display()),
        format!("--audit-policy-file={}", policy.display()),
        format!("--token-auth-file={}", tokens.display()),
        format!("--oidc-issuer-url={ISSUER}"),
        "--oidc-client-id=skein".to_string(),
        format!("--oidc-jwks-file={}", jwks.display()),
        "--oidc-signing-algs=ES256".to_string(),
    ];
    let args: Vec<&str> = flags.iter().map(String::as_str).collect();
    let server = Server::start(&dir.path().join("data"), &args).await;

    let expired = issuer.sign(&json!({"iss": ISSUER, "aud": "skein", "sub": "alice",
        "iat": now() - 3600, "exp": now() - 600}));
    // No client certificate: only what each case adds.
    let anonymous = server.client(false);
    let url = server.url("/api/v1/namespaces/default/configmaps");
    let cases: Vec<(&str, reqwest::RequestBuilder, u16)> = vec![
        (
            "a bad token",
            anonymous.get(&url).bearer_auth("wrong-token"),
            401,
        ),
        (
            "an expired JWT",
            anonymous.get(&url).bearer_auth(&expired),
            401,
        ),
        (
            "forged front-proxy headers",
            anonymous
                .get(&url)
                .header("X-Remote-User", "system:admin")
                .header("X-Remote-Group", "system:masters"),
            401,
        ),
        (
            "no client certificate and no token",
            anonymous.get(&url),
            401,
        ),
        (
            "an impersonation without the verb",
            anonymous
                .get(&url)
                .bearer_auth("alice-token")
                .header("Impersonate-User", "bob"),
            403,
        ),
        (
            "a request RBAC does not allow",
            anonymous.get(&url).bearer_auth("alice-token"),
            403,
        ),
    ];
    let mut seen = Vec::new();
    for (what, request, code) in cases {
        let response = request.send().await.expect(what);
        assert_eq!(response.status().as_u16(), code, "{what}");
        let id = response
            .headers()
            .get("audit-id")
            .and_then(|v| v.to_str().ok())
            .unwrap_or_else(|| panic!("{what}: no Audit-Id"))
            .to_string();
        let status: Value =
            serde_json::from_slice(&response.bytes().await.expect("body")).expect("a Status");
        assert_eq!(status["kind"], "Status", "{what}: {status}");
        assert_eq!(status["code"], code, "{what}: {status}");
        let reason = if code == 401 {
            "Unauthorized"
        } else {
            "Forbidden"
        };
        assert_eq!(status["reason"], reason, "{what}: {status}");
        if what == "an impersonation without the verb" {
            assert_eq!(
                status["message"],
                "users \"bob\" is forbidden: User \"alice\" cannot impersonate resource \"users\" in API group \"\" at the cluster scope",
                "{what}"
            );
        }
        if what == "a request RBAC does not allow" {
            assert_eq!(
                status["message"],
                "configmaps is forbidden: User \"alice\" cannot list resource \"configmaps\" in API group \"\" in the namespace \"default\"",
                "{what}"
            );
        }
        seen.push((what, id, code));
    }

    tokio::time::sleep(Duration::from_millis(500)).await;
    let (events, _) = events(&logs);
    for (what, id, code) in seen {
        let evs = by_id(&events, &id);
        let last = evs
            .last()
            .unwrap_or_else(|| panic!("{what}: no audit event for {id}"));
        assert_eq!(last["responseStatus"]["code"], code, "{what}: {evs:?}");
        assert_eq!(last["level"], "Metadata", "{what}: {evs:?}");
        if code == 401 {
            assert_eq!(evs.len(), 1, "{what}: {evs:?}");
            assert_eq!(last["stage"], "ResponseStarted", "{what}: {evs:?}");
            assert_eq!(last["user"], json!({}), "{what}: {evs:?}");
        } else {
            assert_eq!(last["stage"], "ResponseComplete", "{what}: {evs:?}");
            assert_eq!(last["user"]["username"], "alice", "{what}: {evs:?}");
        }
        // The authorization filter's annotations, as upstream's, on the
        // request it decided (impersonation is refused before it).
        if what == "a request RBAC does not allow" {
            assert_eq!(
                last["annotations"],
                json!({"authorization.k8s.io/decision": "forbid", "authorization.k8s.io/reason": ""}),
                "{what}: {evs:?}"
            );
        } else {
            assert!(last.get("annotations").is_none(), "{what}: {evs:?}");
        }
    }
}
