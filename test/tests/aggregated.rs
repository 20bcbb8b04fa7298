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
    std::fs::write(&tokens, "carol-token,carol,carol-uid,\"dev,ops\"\n").expect("write tokens");
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

    let federation = Server::start(
        &dir.join("federation"),
        &[&format!(
            "--authentication-kubeconfig={}",
            host.kubeconfig().display()
        )],
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
