//! Aggregated mode end to end on loopback: a host Skein (member role)
//! registers the federation Skein through an `APIService` for
//! `v1alpha1.federation.skein.io` whose Service's EndpointSlice names the
//! federation's address; a user authenticated by the host (bearer token)
//! uses the prefix kubeconfig on the host, and the federation sees that
//! user's name and groups through the front-proxy headers.

use std::time::{Duration, Instant};

use serde_json::{Value, json};
use skein_tests::kubectl_binaries;
use skein_tests::server::Server;

const PREFIX: &str = "/apis/federation.skein.io/v1alpha1/federations/default/proxy";

async fn post(server: &Server, path: &str, body: Value) -> Value {
    let response = server
        .client(true)
        .post(server.url(path))
        .header("content-type", "application/json")
        .body(body.to_string())
        .send()
        .await
        .expect("POST");
    let status = response.status();
    let body: Value = serde_json::from_slice(&response.bytes().await.expect("body")).expect("JSON");
    assert_eq!(status, 201, "POST {path}: {body}");
    body
}

async fn get(server: &Server, path: &str) -> Value {
    let response = server
        .client(true)
        .get(server.url(path))
        .send()
        .await
        .expect("GET");
    serde_json::from_slice(&response.bytes().await.expect("body")).expect("JSON")
}

/// Registers `backend_port` on the host as the APIService's backend
/// through Service `skein-system/skein` and its EndpointSlice.
async fn register(host: &Server, backend_port: u16) {
    post(
        host,
        "/api/v1/namespaces",
        json!({"metadata": {"name": "skein-system"}}),
    )
    .await;
    post(
        host,
        "/api/v1/namespaces/skein-system/services",
        json!({"metadata": {"name": "skein"}, "spec": {"ports": [{"name": "https", "port": 443, "targetPort": "https"}]}}),
    )
    .await;
    post(
        host,
        "/apis/discovery.k8s.io/v1/namespaces/skein-system/endpointslices",
        json!({
            "metadata": {"name": "skein-1", "labels": {"kubernetes.io/service-name": "skein"}},
            "addressType": "IPv4",
            "ports": [{"name": "https", "port": backend_port, "protocol": "TCP"}],
            "endpoints": [{"addresses": ["127.0.0.1"], "conditions": {"ready": true}}],
        }),
    )
    .await;
    post(
        host,
        "/apis/apiregistration.k8s.io/v1/apiservices",
        json!({
            "metadata": {"name": "v1alpha1.federation.skein.io"},
            "spec": {
                "group": "federation.skein.io",
                "version": "v1alpha1",
                "service": {"namespace": "skein-system", "name": "skein", "port": 443},
                "insecureSkipTLSVerify": true,
                "groupPriorityMinimum": 1000,
                "versionPriority": 15,
            },
        }),
    )
    .await;
}

/// Lets `kind`/`name` use the federation through `host`
/// (`federations/proxy`, as a kube-apiserver host authorizes it).
async fn allow_proxy(host: &Server, kind: &str, name: &str) {
    post(
        host,
        "/apis/rbac.authorization.k8s.io/v1/clusterroles",
        json!({"metadata": {"name": "federation-user"}, "rules": [
            {"apiGroups": ["federation.skein.io"], "resources": ["federations/proxy"], "verbs": ["*"]}
        ]}),
    )
    .await;
    post(
        host,
        "/apis/rbac.authorization.k8s.io/v1/clusterrolebindings",
        json!({"metadata": {"name": "federation-users"},
               "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": "federation-user"},
               "subjects": [{"apiGroup": "rbac.authorization.k8s.io", "kind": kind, "name": name}]}),
    )
    .await;
}

/// Creates ClusterRole `name` with `rules` on `server`.
async fn cluster_role(server: &Server, name: &str, rules: Value) {
    post(
        server,
        "/apis/rbac.authorization.k8s.io/v1/clusterroles",
        json!({"metadata": {"name": name}, "rules": rules}),
    )
    .await;
}

/// Binds ClusterRole `role` to `subject` on `server` (binding `name`).
async fn bind(server: &Server, name: &str, role: &str, subject: Value) {
    post(
        server,
        "/apis/rbac.authorization.k8s.io/v1/clusterrolebindings",
        json!({"metadata": {"name": name},
               "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": role},
               "subjects": [subject]}),
    )
    .await;
}

/// An RBAC subject of `kind` (User, Group) named `name`.
fn subject(kind: &str, name: &str) -> Value {
    json!({"apiGroup": "rbac.authorization.k8s.io", "kind": kind, "name": name})
}

/// Waits until APIService `name` has condition Available with `status`.
async fn wait_available(host: &Server, name: &str, status: &str) -> Value {
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        let svc = get(
            host,
            &format!("/apis/apiregistration.k8s.io/v1/apiservices/{name}"),
        )
        .await;
        let available = svc
            .pointer("/status/conditions")
            .and_then(Value::as_array)
            .and_then(|c| c.iter().find(|c| c["type"] == "Available"))
            .cloned();
        if let Some(c) = &available
            && c["status"] == status
        {
            return c.clone();
        }
        assert!(
            Instant::now() < deadline,
            "{name} never Available={status}: {svc}\n{}",
            host.logs()
        );
        tokio::time::sleep(Duration::from_millis(250)).await;
    }
}

/// A host Skein (member role, carol's token) and a federation Skein
/// registered on it through the APIService, and carol's federated-context
/// kubeconfig from `skein kubeconfig --aggregated`.
async fn federated_pair(dir: &std::path::Path) -> (Server, Server, std::path::PathBuf) {
    let tokens = dir.join("tokens.csv");
    std::fs::write(
        &tokens,
        "carol-token,carol,carol-uid,\"dev,ops\"\nreviewer-token,skein-reviewer,reviewer-uid,\n",
    )
    .expect("write tokens");
    let host = Server::start(
        &dir.join("host"),
        &[
            "--role=member",
            &format!("--token-auth-file={}", tokens.display()),
        ],
    )
    .await;
    // The host publishes its front-proxy trust for aggregated servers.
    let cm = get(
        &host,
        "/api/v1/namespaces/kube-system/configmaps/extension-apiserver-authentication",
    )
    .await;
    assert_eq!(
        cm["data"]["requestheader-allowed-names"], "[\"front-proxy-client\"]",
        "{cm}"
    );
    assert!(
        cm["data"]["requestheader-client-ca-file"]
            .as_str()
            .is_some_and(|c| c.contains("BEGIN CERTIFICATE"))
    );

    // The federation's identity on the host may create
    // SubjectAccessReviews (the chart's `system:auth-delegator` binding).
    bind(
        &host,
        "skein-reviewer:system:auth-delegator",
        "system:auth-delegator",
        subject("User", "skein-reviewer"),
    )
    .await;
    let reviewer = host.token_kubeconfig("skein-reviewer", "reviewer-token");
    let federation = Server::start(
        &dir.join("federation"),
        &[
            &format!(
                "--authentication-kubeconfig={}",
                host.kubeconfig().display()
            ),
            &format!("--authorization-kubeconfig={}", reviewer.display()),
            "--authorization-webhook-cache-unauthorized-ttl=2s",
        ],
    )
    .await;
    let port = federation
        .url("")
        .rsplit(':')
        .next()
        .and_then(|p| p.parse::<u16>().ok())
        .expect("port");
    register(&host, port).await;
    let available = wait_available(&host, "v1alpha1.federation.skein.io", "True").await;
    assert_eq!(available["reason"], "Passed", "{available}");

    // carol's kubeconfig on the host, and her federated context from
    // `skein kubeconfig --aggregated`.
    let host_config = host.token_kubeconfig("carol", "carol-token");
    let out = std::process::Command::new(skein_tests::skein_bin())
        .args(["kubeconfig", "--aggregated", "--host-kubeconfig"])
        .arg(&host_config)
        .output()
        .expect("run skein kubeconfig");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains(PREFIX), "{text}");
    assert!(text.contains("token: carol-token"), "{text}");
    let config = dir.join("carol-federation.kubeconfig");
    std::fs::write(&config, text.as_bytes()).expect("write");
    (host, federation, config)
}

#[tokio::test]
async fn a_host_user_reaches_the_federation_through_the_apiservice() {
    let dir = tempfile::tempdir().expect("tempdir");
    let (host, federation, config) = federated_pair(dir.path()).await;

    // The host authorizes the proxied request as sent: carol needs
    // `federations/proxy` there.
    let k0 = &kubectl_binaries()[0];
    let response = host
        .client(false)
        .get(host.url(&format!("{PREFIX}/api/v1/namespaces")))
        .bearer_auth("carol-token")
        .send()
        .await
        .expect("GET");
    assert_eq!(response.status(), 403);
    let body: Value =
        serde_json::from_slice(&response.bytes().await.expect("body")).expect("a Status");
    assert_eq!(
        body["message"],
        "federations.federation.skein.io \"default\" is forbidden: User \"carol\" cannot get resource \"federations/proxy\" in API group \"federation.skein.io\" at the cluster scope",
        "{body}"
    );
    allow_proxy(&host, "Group", "dev").await;
    // The federation applies its own RBAC to carol as the host named her:
    // nothing is bound to her there yet.
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        let out = host.kubectl_with(k0, &config, &["get", "namespaces"]);
        let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
        if stderr.contains("User \"carol\" cannot list resource \"namespaces\" in API group \"\" at the cluster scope") {
            break;
        }
        assert!(Instant::now() < deadline, "{stderr}");
        tokio::time::sleep(Duration::from_millis(250)).await;
    }
    post(
        &federation,
        "/apis/rbac.authorization.k8s.io/v1/clusterrolebindings",
        json!({"metadata": {"name": "ops-admin"},
               "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": "cluster-admin"},
               "subjects": [{"apiGroup": "rbac.authorization.k8s.io", "kind": "Group", "name": "ops"}]}),
    )
    .await;
    let deadline = Instant::now() + Duration::from_secs(10);
    while !host
        .kubectl_with(k0, &config, &["get", "namespaces"])
        .status
        .success()
    {
        assert!(
            Instant::now() < deadline,
            "carol's binding never took effect"
        );
        tokio::time::sleep(Duration::from_millis(250)).await;
    }

    for k in kubectl_binaries() {
        // The federation sees carol, as the host authenticated her.
        let out = host.kubectl_with(&k, &config, &["auth", "whoami", "-o", "json"]);
        assert!(
            out.status.success(),
            "{}\n{}",
            String::from_utf8_lossy(&out.stderr),
            federation.logs()
        );
        let review: Value = serde_json::from_slice(&out.stdout).expect("a SelfSubjectReview");
        let info = &review["status"]["userInfo"];
        assert_eq!(info["username"], "carol", "{review}");
        assert_eq!(
            info["groups"],
            json!(["dev", "ops", "system:authenticated"]),
            "{review}"
        );

        // What she creates lands in the federation, not in the host.
        let name = format!("via-host-{}", skein_tests::kubectl::client_minor(&k));
        let out = host.kubectl_with(&k, &config, &["create", "namespace", &name]);
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        assert_eq!(
            String::from_utf8_lossy(&out.stdout),
            format!("namespace/{name} created\n")
        );
        let there = get(&federation, &format!("/api/v1/namespaces/{name}")).await;
        assert_eq!(there["metadata"]["name"], name.as_str(), "{there}");
        let here = get(&host, &format!("/api/v1/namespaces/{name}")).await;
        assert_eq!(here["reason"], "NotFound", "{here}");
    }

    // A watch through the host streams events made at the federation.
    let k = &kubectl_binaries()[0];
    let mut watch = std::process::Command::new(k)
        .args([
            "--kubeconfig",
            config.to_str().expect("utf-8"),
            "get",
            "configmaps",
            "-n",
            "default",
            "--watch",
            "-o",
            "name",
        ])
        .env_remove("KUBECONFIG")
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("spawn a watch");
    for i in 0..3 {
        tokio::time::sleep(Duration::from_secs(2)).await;
        post(
            &federation,
            "/api/v1/namespaces/default/configmaps",
            json!({"metadata": {"name": format!("w{i}")}}),
        )
        .await;
    }
    tokio::time::sleep(Duration::from_secs(2)).await;
    let _ = watch.kill();
    let out = watch.wait_with_output().expect("watch output");
    let stdout = String::from_utf8_lossy(&out.stdout);
    for i in 0..3 {
        assert!(
            stdout.lines().any(|l| l == format!("configmap/w{i}")),
            "{stdout}\n{}",
            String::from_utf8_lossy(&out.stderr)
        );
    }

    // Without the front-proxy certificate the same headers mean nothing
    // to the federation.
    let response = federation
        .client(false)
        .get(federation.url("/api/v1/namespaces"))
        .header("X-Remote-User", "carol")
        .header("X-Remote-Group", "system:masters")
        .send()
        .await
        .expect("GET");
    assert_eq!(response.status(), 401);
}

#[tokio::test]
async fn an_apiservice_without_a_backend_is_unavailable_and_503() {
    let dir = tempfile::tempdir().expect("tempdir");
    let host = Server::start(&dir.path().join("host"), &["--role=member"]).await;
    post(
        &host,
        "/apis/apiregistration.k8s.io/v1/apiservices",
        json!({
            "metadata": {"name": "v1.example.com"},
            "spec": {
                "group": "example.com", "version": "v1",
                "service": {"namespace": "default", "name": "missing", "port": 443},
                "insecureSkipTLSVerify": true,
                "groupPriorityMinimum": 1000, "versionPriority": 15,
            },
        }),
    )
    .await;
    let condition = wait_available(&host, "v1.example.com", "False").await;
    assert_eq!(condition["reason"], "ServiceNotFound", "{condition}");
    assert_eq!(
        condition["message"], "service/missing in \"default\" is not present",
        "{condition}"
    );
    let response = host
        .client(true)
        .get(host.url("/apis/example.com/v1/things"))
        .send()
        .await
        .expect("GET");
    assert_eq!(response.status(), 503);
    let body: Value =
        serde_json::from_slice(&response.bytes().await.expect("body")).expect("a Status");
    assert_eq!(body["reason"], "ServiceUnavailable", "{body}");
    assert_eq!(
        body["message"],
        "error trying to reach service: service/missing in \"default\" is not present"
    );

    // The Service appears, without endpoints, then with one: each request
    // is routed by what the host holds now, not by what it saw before.
    post(
        &host,
        "/api/v1/namespaces/default/services",
        json!({"metadata": {"name": "missing"}, "spec": {"ports": [{"name": "https", "port": 443}]}}),
    )
    .await;
    let message = |host: &Server| {
        let client = host.client(true);
        let url = host.url("/apis/example.com/v1/things");
        async move {
            let response = client.get(url).send().await.expect("GET");
            let status = response.status();
            let body: Value =
                serde_json::from_slice(&response.bytes().await.expect("body")).expect("a Status");
            (
                status,
                body["message"].as_str().unwrap_or_default().to_string(),
            )
        }
    };
    // (The host's informers follow the writes within moments.)
    let until = |want: fn(&str) -> bool| {
        let host = &host;
        async move {
            let deadline = Instant::now() + Duration::from_secs(10);
            loop {
                let (status, text) = message(host).await;
                if want(&text) || Instant::now() > deadline {
                    return (status, text);
                }
                tokio::time::sleep(Duration::from_millis(100)).await;
            }
        }
    };
    let (status, text) = until(|t| t.contains("cannot find endpoints")).await;
    assert_eq!(status, 503);
    assert_eq!(
        text,
        "error trying to reach service: cannot find endpoints for service/missing in \"default\""
    );
    // A port nothing listens on.
    let closed = std::net::TcpListener::bind("127.0.0.1:0").expect("bind");
    let port = closed.local_addr().expect("addr").port();
    drop(closed);
    post(
        &host,
        "/apis/discovery.k8s.io/v1/namespaces/default/endpointslices",
        json!({
            "metadata": {"name": "missing-1", "labels": {"kubernetes.io/service-name": "missing"}},
            "addressType": "IPv4",
            "ports": [{"name": "https", "port": port, "protocol": "TCP"}],
            "endpoints": [{"addresses": ["127.0.0.1"], "conditions": {"ready": true}}],
        }),
    )
    .await;
    let (status, text) = until(|t| t.contains("onnection refused")).await;
    assert_eq!(status, 503);
    assert!(
        text.starts_with("error trying to reach service: ") && text.contains("onnection refused"),
        "{text}"
    );
}

/// A watch through the host lives as long as a watch on the federation
/// itself: kubectl 1.35 and 1.32 (carol, authenticated by the host's
/// token file) watch ConfigMaps through the prefix kubeconfig for more
/// than 5 minutes, through idle stretches longer than the usual 60–90 s
/// idle timeouts, and see every event, the last after the 5 minutes.
#[tokio::test]
async fn a_watch_through_the_host_survives_five_minutes() {
    let dir = tempfile::tempdir().expect("tempdir");
    let (host, federation, config) = federated_pair(dir.path()).await;
    allow_proxy(&host, "User", "carol").await;
    post(
        &federation,
        "/apis/rbac.authorization.k8s.io/v1/namespaces/default/rolebindings",
        json!({"metadata": {"name": "carol-view"},
               "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": "view"},
               "subjects": [{"apiGroup": "rbac.authorization.k8s.io", "kind": "User", "name": "carol"}]}),
    )
    .await;
    let k0 = &kubectl_binaries()[0];
    let deadline = Instant::now() + Duration::from_secs(10);
    while !host
        .kubectl_with(k0, &config, &["get", "configmaps", "-n", "default"])
        .status
        .success()
    {
        assert!(
            Instant::now() < deadline,
            "carol's bindings never took effect"
        );
        tokio::time::sleep(Duration::from_millis(250)).await;
    }

    let started = Instant::now();
    let mut watches: Vec<(std::path::PathBuf, std::process::Child)> = kubectl_binaries()
        .into_iter()
        .map(|k| {
            let child = std::process::Command::new(&k)
                .args([
                    "--kubeconfig",
                    config.to_str().expect("utf-8"),
                    "get",
                    "configmaps",
                    "-n",
                    "default",
                    "--watch-only",
                    "-o",
                    "name",
                ])
                .env_remove("KUBECONFIG")
                .stdout(std::process::Stdio::piped())
                .stderr(std::process::Stdio::piped())
                .spawn()
                .expect("spawn a watch");
            (k, child)
        })
        .collect();
    // Events at 10 s, after an idle 2.5 minutes, and after the 5 minutes.
    for (i, at) in [10u64, 160, 310].into_iter().enumerate() {
        let wait = Duration::from_secs(at).saturating_sub(started.elapsed());
        tokio::time::sleep(wait).await;
        for (k, child) in &mut watches {
            let exited = child.try_wait().expect("try_wait");
            assert!(
                exited.is_none(),
                "{} stopped watching after {:?}: {exited:?}\nhost:\n{}",
                k.display(),
                started.elapsed(),
                host.logs()
            );
        }
        post(
            &federation,
            "/api/v1/namespaces/default/configmaps",
            json!({"metadata": {"name": format!("late-{i}")}}),
        )
        .await;
    }
    tokio::time::sleep(Duration::from_secs(3)).await;
    assert!(started.elapsed() > Duration::from_secs(300));
    for (k, mut child) in watches {
        let exited = child.try_wait().expect("try_wait");
        let _ = child.kill();
        let out = child.wait_with_output().expect("watch output");
        let stdout = String::from_utf8_lossy(&out.stdout);
        assert_eq!(
            stdout,
            "configmap/late-0\nconfigmap/late-1\nconfigmap/late-2\n",
            "{} (exited early: {exited:?}): {}",
            k.display(),
            String::from_utf8_lossy(&out.stderr)
        );
        assert!(exited.is_none(), "{} exited: {exited:?}", k.display());
    }
}

/// More watches through the host than one HTTP/2 connection has streams
/// (a server allows 200 by default): they all start, and a short request
/// through the host still answers at once, because the host gives each
/// long-running request an HTTP/1.1 connection of its own.
#[tokio::test]
async fn many_watches_through_the_host_do_not_hold_up_other_requests() {
    let dir = tempfile::tempdir().expect("tempdir");
    let (host, _federation, _config) = federated_pair(dir.path()).await;
    // HTTP/1.1 to the host: a connection per watch, so the host's own
    // stream limit is not what is tested.
    let client = host
        .client_builder(true)
        .http1_only()
        .timeout(Duration::from_secs(300))
        .build()
        .expect("client");
    let url = host.url(&format!(
        "{PREFIX}/api/v1/namespaces/default/configmaps?watch=true"
    ));
    let started: Vec<_> = (0..230)
        .map(|_| {
            let request = client.get(&url).send();
            tokio::spawn(
                async move { tokio::time::timeout(Duration::from_secs(30), request).await },
            )
        })
        .collect();
    let mut watches = Vec::new();
    for (i, response) in started.into_iter().enumerate() {
        let response = response
            .await
            .expect("task")
            .unwrap_or_else(|_| panic!("watch {i} through the host never started"))
            .expect("watch");
        assert_eq!(response.status(), 200, "watch {i}");
        watches.push(response);
    }
    let begun = Instant::now();
    let response = tokio::time::timeout(
        Duration::from_secs(10),
        client
            .get(host.url(&format!("{PREFIX}/api/v1/namespaces/default")))
            .send(),
    )
    .await
    .expect("a GET through the host behind 230 watches")
    .expect("GET");
    assert_eq!(response.status(), 200);
    assert!(
        begun.elapsed() < Duration::from_secs(5),
        "{:?}",
        begun.elapsed()
    );
    drop(watches);
}

/// A client that is the host's aggregator to `federation`: the host's
/// front-proxy client certificate, so `X-Remote-*` headers count.
fn as_aggregator(host: &Server, federation: &Server) -> reqwest::Client {
    let mut pem = host.pki_file("front-proxy-client.crt");
    pem.extend(host.pki_file("front-proxy-client.key"));
    federation
        .client_builder(false)
        .identity(reqwest::Identity::from_pem(&pem).expect("the front-proxy identity"))
        // Longer than a review's 10 s timeout.
        .timeout(Duration::from_secs(30))
        .build()
        .expect("client")
}

/// `method path` sent to `federation` by the host's aggregator for `user`
/// in `groups`: the status, content type and body.
async fn proxied(
    aggregator: &reqwest::Client,
    federation: &Server,
    method: reqwest::Method,
    path: &str,
    user: &str,
    groups: &[&str],
) -> (u16, String, String) {
    let mut request = aggregator
        .request(method, federation.url(path))
        .header("X-Remote-User", user);
    for g in groups {
        request = request.header("X-Remote-Group", *g);
    }
    let response = request.send().await.expect("request");
    let status = response.status().as_u16();
    let ctype = response
        .headers()
        .get("content-type")
        .and_then(|v| v.to_str().ok())
        .unwrap_or_default()
        .to_string();
    let body = String::from_utf8_lossy(&response.bytes().await.expect("body")).into_owned();
    (status, ctype, body)
}

fn resource_names(list: &Value) -> Vec<String> {
    let mut names: Vec<String> = list["resources"]
        .as_array()
        .map(|r| {
            r.iter()
                .filter_map(|r| r["name"].as_str().map(str::to_string))
                .collect()
        })
        .unwrap_or_default();
    names.sort();
    names
}

/// The root path of `federation.skein.io`, as a host's controllers and
/// users reach it through the APIService: only the cluster-scoped
/// `federations` (so the host's namespace controller finds nothing of
/// Skein's to delete), authorized by the host's SubjectAccessReviews;
/// everything else of Skein's through the prefix only. Refusals name the
/// user in the access log.
#[tokio::test]
async fn the_host_sees_only_federations_and_authorizes_them() {
    let dir = tempfile::tempdir().expect("tempdir");
    let (host, federation, config) = federated_pair(dir.path()).await;
    let k0 = &kubectl_binaries()[0];

    // Discovery through the host: federations, cluster-scoped, with its
    // proxy and status subresources; no namespaced resource at all.
    let list = get(&host, "/apis/federation.skein.io/v1alpha1").await;
    assert_eq!(
        resource_names(&list),
        ["federations", "federations/proxy", "federations/status"],
        "{list}"
    );
    assert!(
        list["resources"]
            .as_array()
            .expect("resources")
            .iter()
            .all(|r| r["namespaced"] == false),
        "{list}"
    );
    // (A Skein host does not merge its backends' groups into its own
    // discovery, so kubectl on the host cannot name them; the real-host
    // script checks `kubectl get federations` on a kube-apiserver host.)
    let list = get(&host, "/apis/federation.skein.io/v1alpha1/federations").await;
    assert_eq!(list["items"][0]["metadata"]["name"], "default", "{list}");
    let missing = get(
        &host,
        "/apis/federation.skein.io/v1alpha1/namespaces/default/placements",
    )
    .await;
    assert_eq!(missing["reason"], "NotFound", "{missing}");
    assert_eq!(missing["code"], 404, "{missing}");

    let aggregator = as_aggregator(&host, &federation);
    use reqwest::Method;
    let carol_lists_federations = || {
        proxied(
            &aggregator,
            &federation,
            Method::GET,
            "/apis/federation.skein.io/v1alpha1/federations",
            "carol",
            &["dev"],
        )
    };
    let masters = ["system:masters"];
    // The OpenAPI a host merges describes federations only.
    let (code, _, body) = proxied(
        &aggregator,
        &federation,
        Method::GET,
        "/openapi/v3",
        "system:aggregator",
        &masters,
    )
    .await;
    assert_eq!(code, 200, "{body}");
    let index: Value = serde_json::from_str(&body).expect("an index");
    let keys: Vec<&String> = index["paths"].as_object().expect("paths").keys().collect();
    assert_eq!(keys, ["apis/federation.skein.io/v1alpha1"], "{index}");
    for (doc, path) in [
        ("v3", "/openapi/v3/apis/federation.skein.io/v1alpha1"),
        ("v2", "/openapi/v2"),
    ] {
        let (code, _, body) = proxied(
            &aggregator,
            &federation,
            Method::GET,
            path,
            "system:aggregator",
            &masters,
        )
        .await;
        assert_eq!(code, 200, "{doc}: {body}");
        let v: Value = serde_json::from_str(&body).expect("a document");
        let paths: Vec<&String> = v["paths"].as_object().expect("paths").keys().collect();
        assert!(
            paths.contains(&&"/apis/federation.skein.io/v1alpha1/federations".to_string()),
            "{doc}: {paths:?}"
        );
        assert!(
            paths
                .iter()
                .all(|p| p.contains("/federations") || p.ends_with("/v1alpha1/")),
            "{doc}: {paths:?}"
        );
    }
    // The native API is not at the host's root at all.
    let (code, ctype, body) = proxied(
        &aggregator,
        &federation,
        Method::GET,
        "/api/v1/namespaces",
        "system:admin",
        &masters,
    )
    .await;
    assert_eq!(
        (code, ctype.as_str(), body.as_str()),
        (404, "text/plain; charset=utf-8", "404 page not found\n")
    );

    // Through the prefix the federation's own types are all there (for
    // a host user the host lets through).
    allow_proxy(&host, "Group", "dev").await;
    let out = host.kubectl_with(
        k0,
        &config,
        &[
            "api-resources",
            "--api-group=federation.skein.io",
            "-o",
            "name",
        ],
    );
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    // (carol has no rights inside the federation yet; discovery is public
    // to authenticated users.)
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    for r in ["clusters", "placements", "clusterplacements", "federations"] {
        assert!(
            stdout.contains(&format!("{r}.federation.skein.io")),
            "{r}: {stdout}{stderr}"
        );
    }

    // The host's garbage collector: its host RBAC lets it list everything,
    // and the federation asks the host.
    cluster_role(
        &host,
        "gc-like",
        json!([{"apiGroups": ["*"], "resources": ["*"],
                "verbs": ["get", "list", "watch", "delete", "deletecollection"]}]),
    )
    .await;
    for sa in ["generic-garbage-collector", "namespace-controller"] {
        bind(
            &host,
            &format!("gc-like-{sa}"),
            "gc-like",
            json!({"kind": "ServiceAccount", "namespace": "kube-system", "name": sa}),
        )
        .await;
    }
    let gc = "system:serviceaccount:kube-system:generic-garbage-collector";
    let sa_groups = [
        "system:serviceaccounts",
        "system:serviceaccounts:kube-system",
    ];
    let deadline = Instant::now() + Duration::from_secs(15);
    loop {
        let (code, _, body) = proxied(
            &aggregator,
            &federation,
            Method::GET,
            "/apis/federation.skein.io/v1alpha1/federations",
            gc,
            &sa_groups,
        )
        .await;
        if code == 200 {
            let v: Value = serde_json::from_str(&body).expect("a list");
            assert_eq!(v["items"][0]["metadata"]["name"], "default", "{v}");
            break;
        }
        assert!(Instant::now() < deadline, "{code} {body}");
        tokio::time::sleep(Duration::from_millis(250)).await;
    }
    // Its metadata-only list and watch (client-go's metadata informer)
    // get PartialObjectMetadata, events included.
    let metadata_list = "application/vnd.kubernetes.protobuf;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1,application/json;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1,application/json";
    let metadata_object = "application/vnd.kubernetes.protobuf;as=PartialObjectMetadata;g=meta.k8s.io;v=v1,application/json;as=PartialObjectMetadata;g=meta.k8s.io;v=v1,application/json";
    let as_gc = |path: &str, accept: &str| {
        let mut request = aggregator
            .get(federation.url(path))
            .header("X-Remote-User", gc)
            .header("Accept", accept);
        for g in sa_groups {
            request = request.header("X-Remote-Group", g);
        }
        request
    };
    let response = as_gc(
        "/apis/federation.skein.io/v1alpha1/federations",
        metadata_list,
    )
    .send()
    .await
    .expect("list");
    assert_eq!(response.status(), 200);
    let list: Value = serde_json::from_slice(&response.bytes().await.expect("body")).expect("JSON");
    assert_eq!(list["kind"], "PartialObjectMetadataList", "{list}");
    assert_eq!(list["apiVersion"], "meta.k8s.io/v1", "{list}");
    assert_eq!(list["items"][0]["kind"], "PartialObjectMetadata", "{list}");
    assert_eq!(list["items"][0]["metadata"]["name"], "default", "{list}");
    assert!(list["items"][0].get("spec").is_none(), "{list}");
    let response = as_gc(
        "/apis/federation.skein.io/v1alpha1/federations?watch=true&resourceVersion=0&timeoutSeconds=1",
        metadata_object,
    )
    .send()
    .await
    .expect("watch");
    assert_eq!(response.status(), 200);
    let text = response.text().await.expect("events");
    let events: Vec<Value> = text
        .lines()
        .map(|l| serde_json::from_str(l).expect("an event"))
        .collect();
    assert!(!events.is_empty(), "{text}");
    for e in &events {
        assert_eq!(e["object"]["kind"], "PartialObjectMetadata", "{text}");
    }
    // A list asked for as an object is upstream's 406.
    let response = as_gc(
        "/apis/federation.skein.io/v1alpha1/federations",
        metadata_object,
    )
    .send()
    .await
    .expect("list");
    assert_eq!(response.status(), 406);
    // What it may not see is not there, whatever its rights.
    let (code, _, body) = proxied(
        &aggregator,
        &federation,
        Method::GET,
        "/apis/federation.skein.io/v1alpha1/placements",
        gc,
        &sa_groups,
    )
    .await;
    assert_eq!(code, 404, "{body}");
    let ns_controller = "system:serviceaccount:kube-system:namespace-controller";
    // A Placement-like object in a federation namespace named as a host
    // namespace the host now deletes: the host's namespace controller's
    // deletecollection never reaches it.
    post(
        &federation,
        "/api/v1/namespaces",
        json!({"metadata": {"name": "team-a"}}),
    )
    .await;
    let cm = post(
        &federation,
        "/api/v1/namespaces/team-a/configmaps",
        json!({"metadata": {"name": "kept"}}),
    )
    .await;
    for path in [
        "/apis/federation.skein.io/v1alpha1/namespaces/team-a/placements",
        "/api/v1/namespaces/team-a/configmaps",
        "/apis/federation.skein.io/v1alpha1/clusters/x/proxy/api",
    ] {
        let (code, _, body) = proxied(
            &aggregator,
            &federation,
            Method::DELETE,
            path,
            ns_controller,
            &sa_groups,
        )
        .await;
        assert_eq!(code, 404, "{path}: {body}");
    }
    let still = get(&federation, "/api/v1/namespaces/team-a/configmaps/kept").await;
    assert_eq!(still["metadata"]["uid"], cm["metadata"]["uid"], "{still}");
    assert!(still["metadata"]["deletionTimestamp"].is_null(), "{still}");

    // carol has nothing on the host for federations: the host's review
    // says no, with upstream's 403, and the access log names her.
    let (code, _, body) = carol_lists_federations().await;
    assert_eq!(code, 403, "{body}");
    let status: Value = serde_json::from_str(&body).expect("a Status");
    assert_eq!(
        status["message"],
        "federations.federation.skein.io is forbidden: User \"carol\" cannot list resource \"federations\" in API group \"federation.skein.io\" at the cluster scope",
        "{status}"
    );
    // Skein's own RBAC would have said the same; binding carol inside the
    // federation changes nothing at the root path: the host decides.
    bind(
        &federation,
        "carol-admin",
        "cluster-admin",
        subject("User", "carol"),
    )
    .await;
    tokio::time::sleep(Duration::from_secs(3)).await;
    let (code, _, body) = carol_lists_federations().await;
    assert_eq!(
        code, 403,
        "the federation's RBAC decided a host request: {body}"
    );
    // Under the prefix, the federation's RBAC decides: now she may.
    let (code, _, body) = proxied(
        &aggregator,
        &federation,
        Method::GET,
        &format!("{PREFIX}/api/v1/namespaces/team-a/configmaps/kept"),
        "carol",
        &["dev"],
    )
    .await;
    assert_eq!(code, 200, "{body}");
    // The host grants her federations: within the denial's cache time
    // (2 s here) the host's answer changes.
    cluster_role(
        &host,
        "federation-reader",
        json!([{"apiGroups": ["federation.skein.io"], "resources": ["federations"], "verbs": ["get", "list"]}]),
    )
    .await;
    bind(
        &host,
        "carol-federation-reader",
        "federation-reader",
        subject("User", "carol"),
    )
    .await;
    let deadline = Instant::now() + Duration::from_secs(15);
    loop {
        let (code, _, body) = carol_lists_federations().await;
        if code == 200 {
            break;
        }
        assert!(Instant::now() < deadline, "{code} {body}");
        tokio::time::sleep(Duration::from_millis(250)).await;
    }
    // The access log names the user on refusals too.
    let logs = federation.logs();
    assert!(
        logs.lines().any(|l| l.contains("skein::access")
            && l.contains("URI=\"/apis/federation.skein.io/v1alpha1/federations\"")
            && l.contains("user=\"carol\"")
            && l.contains("resp=403")),
        "no access-log line names carol's 403:\n{logs}"
    );
}

/// Delegated authorization that cannot reach the host: upstream's
/// plain-text 500 within the review timeout (a refused connection at
/// once, a silent host after 10 s), never a hang; `system:masters` and
/// the prefix path do not depend on the host; an unreadable
/// `--authorization-kubeconfig` stops the server at start.
#[tokio::test]
async fn an_unreachable_host_for_delegated_authorization_is_a_500_not_a_hang() {
    let dir = tempfile::tempdir().expect("tempdir");
    let host = Server::start(&dir.path().join("host"), &["--role=member"]).await;

    let (status, stderr) = Server::start_expecting_failure(
        &dir.path().join("bad"),
        &[
            &format!(
                "--authentication-kubeconfig={}",
                host.kubeconfig().display()
            ),
            "--authorization-kubeconfig=/nonexistent/host.kubeconfig",
        ],
    )
    .await;
    assert!(!status.success());
    assert!(
        stderr.contains("--authorization-kubeconfig: failed to get delegated authorization kubeconfig: /nonexistent/host.kubeconfig"),
        "{stderr}"
    );

    // A host address that refuses connections, and one that accepts and
    // never answers.
    let refused_port = {
        let l = std::net::TcpListener::bind("127.0.0.1:0").expect("bind");
        l.local_addr().expect("addr").port()
    };
    let silent = std::net::TcpListener::bind("127.0.0.1:0").expect("bind");
    let silent_port = silent.local_addr().expect("addr").port();
    let kubeconfig = |name: &str, port: u16| {
        let path = dir.path().join(format!("{name}.kubeconfig"));
        let config = json!({
            "apiVersion": "v1", "kind": "Config",
            "clusters": [{"name": "h", "cluster": {"server": format!("https://127.0.0.1:{port}"), "insecure-skip-tls-verify": true}}],
            "users": [{"name": "u", "user": {"token": "t"}}],
            "contexts": [{"name": "c", "context": {"cluster": "h", "user": "u"}}],
            "current-context": "c",
        });
        std::fs::write(&path, config.to_string()).expect("write");
        path
    };
    for (name, port, within) in [("refused", refused_port, 5u64), ("silent", silent_port, 16)] {
        let federation = Server::start(
            &dir.path().join(name),
            &[
                &format!(
                    "--authentication-kubeconfig={}",
                    host.kubeconfig().display()
                ),
                &format!(
                    "--authorization-kubeconfig={}",
                    kubeconfig(name, port).display()
                ),
            ],
        )
        .await;
        let aggregator = as_aggregator(&host, &federation);
        let path = "/apis/federation.skein.io/v1alpha1/federations";
        let started = Instant::now();
        let request = aggregator
            .get(federation.url(path))
            .header("X-Remote-User", "carol")
            .send();
        let response = request.await.expect("an answer");
        let elapsed = started.elapsed();
        assert_eq!(response.status(), 500, "{name}");
        assert_eq!(
            response
                .headers()
                .get("content-type")
                .and_then(|v| v.to_str().ok()),
            Some("text/plain; charset=utf-8")
        );
        let body = response.text().await.expect("body");
        let expected = format!(
            "Internal Server Error: \"{path}\": Post \"https://127.0.0.1:{port}/apis/authorization.k8s.io/v1/subjectaccessreviews?timeout=10s\": "
        );
        assert!(body.starts_with(&expected), "{name}: {body}");
        assert!(elapsed < Duration::from_secs(within), "{name}: {elapsed:?}");
        if name == "silent" {
            assert!(body.contains("context deadline exceeded"), "{body}");
            assert!(elapsed >= Duration::from_secs(9), "{elapsed:?}");
        }
        // system:masters needs no review; the prefix path is the
        // federation's to authorize.
        let (code, _, body) = proxied(
            &aggregator,
            &federation,
            reqwest::Method::GET,
            path,
            "root",
            &["system:masters"],
        )
        .await;
        assert_eq!(code, 200, "{body}");
        let (code, _, body) = proxied(
            &aggregator,
            &federation,
            reqwest::Method::GET,
            &format!("{PREFIX}/api/v1/namespaces"),
            "carol",
            &[],
        )
        .await;
        assert_eq!(code, 403, "{body}");
        assert!(
            body.contains("User \\\"carol\\\" cannot list resource \\\"namespaces\\\""),
            "{body}"
        );
    }
    drop(silent);
}
