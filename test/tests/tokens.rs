//! Bearer tokens beyond the static file, end to end with a real process and
//! kubectl 1.35: ServiceAccount tokens from `kubectl create token`, OIDC
//! JWTs from a test issuer (signed here, keys in a JWKS file), the issuer
//! discovery documents, and `--anonymous-auth`.

use std::path::Path;
use std::process::Output;

use base64::Engine;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use reqwest::StatusCode;
use serde_json::{Value, json};
use skein_tests::kubectl_binaries;
use skein_tests::oidc::{ISSUER, Issuer, now};
use skein_tests::server::Server;

// With json.Encoder's trailing newline, as upstream.
const UNAUTHORIZED: &str = "{\"kind\":\"Status\",\"apiVersion\":\"v1\",\"metadata\":{},\"status\":\"Failure\",\"message\":\"Unauthorized\",\"reason\":\"Unauthorized\",\"code\":401}\n";

fn kubectl() -> std::path::PathBuf {
    kubectl_binaries().remove(0)
}

fn ok(out: &Output, what: &str) -> String {
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    assert!(
        out.status.success(),
        "{what} failed: {stdout}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    stdout
}

fn whoami(server: &Server, k: &Path, kubeconfig: &Path) -> Result<Value, String> {
    let out = server.kubectl_with(k, kubeconfig, &["auth", "whoami", "-o", "json"]);
    if !out.status.success() {
        return Err(String::from_utf8_lossy(&out.stderr).into_owned());
    }
    let v: Value = serde_json::from_slice(&out.stdout).expect("whoami JSON");
    Ok(v["status"]["userInfo"].clone())
}

/// `GET path` with `Authorization: Bearer token` and no client certificate.
async fn get_with_token(server: &Server, path: &str, token: &str) -> (StatusCode, String) {
    let resp = server
        .client(false)
        .get(server.url(path))
        .bearer_auth(token)
        .send()
        .await
        .expect("request");
    let code = resp.status();
    (code, resp.text().await.expect("body"))
}

#[tokio::test]
async fn kubectl_create_token_authenticates_as_the_service_account() {
    let k = kubectl();
    let dir = tempfile::tempdir().expect("tempdir");
    let server = Server::start(&dir.path().join("data"), &[]).await;
    ok(
        &server.kubectl(&k, &["create", "namespace", "apps"]),
        "create ns",
    );
    ok(
        &server.kubectl(&k, &["-n", "apps", "create", "serviceaccount", "robot"]),
        "create sa",
    );
    let sa_uid = ok(
        &server.kubectl(
            &k,
            &[
                "-n",
                "apps",
                "get",
                "sa",
                "robot",
                "-o",
                "jsonpath={.metadata.uid}",
            ],
        ),
        "sa uid",
    );
    let token = ok(
        &server.kubectl(&k, &["-n", "apps", "create", "token", "robot"]),
        "create token",
    );
    let token = token.trim().to_string();

    // Upstream's claims.
    let payload = token.split('.').nth(1).expect("a JWT");
    let claims: Value =
        serde_json::from_slice(&URL_SAFE_NO_PAD.decode(payload).expect("base64url")).expect("json");
    assert_eq!(claims["sub"], "system:serviceaccount:apps:robot");
    assert_eq!(
        claims["iss"],
        "https://kubernetes.default.svc.cluster.local"
    );
    assert_eq!(
        claims["aud"],
        json!(["https://kubernetes.default.svc.cluster.local"])
    );
    assert_eq!(claims["kubernetes.io"]["namespace"], "apps");
    assert_eq!(
        claims["kubernetes.io"]["serviceaccount"],
        json!({"name": "robot", "uid": sa_uid})
    );
    let exp = claims["exp"].as_i64().expect("exp");
    assert_eq!(exp - claims["iat"].as_i64().expect("iat"), 3600, "{claims}");
    assert_eq!(claims["nbf"], claims["iat"]);
    assert!(claims["jti"].is_string());

    let robot = server.token_kubeconfig("robot", &token);
    let info = whoami(&server, &k, &robot).expect("whoami as the service account");
    assert_eq!(info["username"], "system:serviceaccount:apps:robot");
    assert_eq!(info["uid"], sa_uid.as_str());
    assert_eq!(
        info["groups"],
        json!([
            "system:serviceaccounts",
            "system:serviceaccounts:apps",
            "system:authenticated"
        ])
    );
    assert_eq!(
        info["extra"]["authentication.kubernetes.io/credential-id"],
        json!([format!("JTI={}", claims["jti"].as_str().unwrap_or(""))])
    );

    // Too short a duration: upstream's 422.
    let out = server.kubectl(
        &k,
        &["-n", "apps", "create", "token", "robot", "--duration=5m"],
    );
    assert!(!out.status.success());
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("may not specify a duration less than 10 minutes"),
        "{stderr}"
    );
    // No such account: 404.
    let out = server.kubectl(&k, &["-n", "apps", "create", "token", "ghost"]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("serviceaccounts \"ghost\" not found"),
        "{stderr}"
    );

    // A TokenReview accepts it (and refuses it for another audience).
    let review = |aud: Option<&str>| {
        let mut spec = json!({"token": token});
        if let Some(a) = aud {
            spec["audiences"] = json!([a]);
        }
        json!({"apiVersion": "authentication.k8s.io/v1", "kind": "TokenReview", "spec": spec})
    };
    let admin = server.client(true);
    let url = server.url("/apis/authentication.k8s.io/v1/tokenreviews");
    let r: Value = admin
        .post(&url)
        .header("content-type", "application/json")
        .body(review(None).to_string())
        .send()
        .await
        .expect("review")
        .text()
        .await
        .map(|t| serde_json::from_str::<Value>(&t).expect("json"))
        .expect("body");
    assert_eq!(r["status"]["authenticated"], true, "{r}");
    assert_eq!(
        r["status"]["user"]["username"],
        "system:serviceaccount:apps:robot"
    );
    let r: Value = admin
        .post(&url)
        .header("content-type", "application/json")
        .body(review(Some("https://vault")).to_string())
        .send()
        .await
        .expect("review")
        .text()
        .await
        .map(|t| serde_json::from_str::<Value>(&t).expect("json"))
        .expect("body");
    assert_ne!(r["status"]["authenticated"], true, "{r}");

    // A token bound to a Secret dies with the Secret.
    ok(
        &server.kubectl(
            &k,
            &[
                "-n",
                "apps",
                "create",
                "secret",
                "generic",
                "s1",
                "--from-literal=a=b",
            ],
        ),
        "create secret",
    );
    let bound = ok(
        &server.kubectl(
            &k,
            &[
                "-n",
                "apps",
                "create",
                "token",
                "robot",
                "--bound-object-kind=Secret",
                "--bound-object-name=s1",
                "--audience=https://kubernetes.default.svc.cluster.local",
                "--duration=1h",
            ],
        ),
        "create bound token",
    );
    let bound_config = server.token_kubeconfig("bound", bound.trim());
    whoami(&server, &k, &bound_config).expect("bound token works");
    ok(
        &server.kubectl(&k, &["-n", "apps", "delete", "secret", "s1"]),
        "delete secret",
    );
    let err = whoami(&server, &k, &bound_config).expect_err("secret deleted");
    assert!(err.contains("Unauthorized"), "{err}");
    // Binding to a missing object, or an unsupported kind.
    let out = server.kubectl(
        &k,
        &[
            "-n",
            "apps",
            "create",
            "token",
            "robot",
            "--bound-object-kind=Secret",
            "--bound-object-name=nope",
        ],
    );
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("secrets \"nope\" not found"),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );

    // Deleting the ServiceAccount invalidates its tokens, and a new one with
    // the same name (another uid) does not bring them back.
    ok(
        &server.kubectl(&k, &["-n", "apps", "delete", "sa", "robot"]),
        "delete sa",
    );
    let err = whoami(&server, &k, &robot).expect_err("sa deleted");
    assert!(err.contains("Unauthorized"), "{err}");
    ok(
        &server.kubectl(&k, &["-n", "apps", "create", "serviceaccount", "robot"]),
        "recreate sa",
    );
    let err = whoami(&server, &k, &robot).expect_err("sa recreated");
    assert!(err.contains("Unauthorized"), "{err}");
    let (code, body) = get_with_token(&server, "/api", &token).await;
    assert_eq!(
        (code, body.as_str()),
        (StatusCode::UNAUTHORIZED, UNAUTHORIZED)
    );
}

#[tokio::test]
async fn issuer_discovery_documents() {
    let dir = tempfile::tempdir().expect("tempdir");
    let server = Server::start(
        &dir.path().join("data"),
        &["--service-account-issuer=https://skein.example/issuer"],
    )
    .await;
    let admin = server.client(true);
    let resp = admin
        .get(server.url("/.well-known/openid-configuration"))
        .send()
        .await
        .expect("get");
    assert_eq!(resp.status(), StatusCode::OK);
    assert_eq!(
        resp.headers()["cache-control"].to_str().unwrap_or(""),
        "public, max-age=3600"
    );
    let config: Value = serde_json::from_str(&resp.text().await.expect("body")).expect("json");
    assert_eq!(
        config,
        json!({
            "issuer": "https://skein.example/issuer",
            "jwks_uri": "https://skein.example/issuer/openid/v1/jwks",
            "response_types_supported": ["id_token"],
            "subject_types_supported": ["public"],
            "id_token_signing_alg_values_supported": ["ES256"],
        })
    );
    let resp = admin
        .get(server.url("/openid/v1/jwks"))
        .send()
        .await
        .expect("get");
    assert_eq!(
        resp.headers()["content-type"].to_str().unwrap_or(""),
        "application/jwk-set+json"
    );
    let jwks: Value = serde_json::from_str(&resp.text().await.expect("body")).expect("json");
    let key = &jwks["keys"][0];
    assert_eq!(
        (key["kty"].as_str(), key["use"].as_str()),
        (Some("EC"), Some("sig"))
    );

    // A token kubectl gets verifies against the published key.
    let k = kubectl();
    let token = ok(
        &server.kubectl(&k, &["create", "token", "default"]),
        "create token",
    );
    let header: Value = serde_json::from_slice(
        &URL_SAFE_NO_PAD
            .decode(token.trim().split('.').next().unwrap_or(""))
            .expect("b64"),
    )
    .expect("json");
    assert_eq!(header["kid"], key["kid"]);
    let jwk: jsonwebtoken::jwk::Jwk = serde_json::from_value(key.clone()).expect("jwk");
    let mut v = jsonwebtoken::Validation::new(jsonwebtoken::Algorithm::ES256);
    v.set_audience(&["https://skein.example/issuer"]);
    v.set_issuer(&["https://skein.example/issuer"]);
    jsonwebtoken::decode::<Value>(
        token.trim(),
        &jsonwebtoken::DecodingKey::from_jwk(&jwk).expect("key"),
        &v,
    )
    .expect("the token verifies with the JWKS");
    // The key survives a restart (it is kept in the PKI directory).
    assert!(dir.path().join("data/pki/sa.key").exists());
}

#[tokio::test]
async fn oidc_tokens_from_a_test_issuer() {
    let k = kubectl();
    let dir = tempfile::tempdir().expect("tempdir");
    let issuer = Issuer::new("k1");
    let jwks = dir.path().join("jwks.json");
    std::fs::write(&jwks, json!({"keys": [issuer.jwk]}).to_string()).expect("write jwks");
    let flags = [
        format!("--oidc-issuer-url={ISSUER}"),
        "--oidc-client-id=skein".to_string(),
        format!("--oidc-jwks-file={}", jwks.display()),
        "--oidc-signing-algs=ES256".to_string(),
        "--oidc-groups-claim=groups".to_string(),
        "--oidc-groups-prefix=oidc:".to_string(),
    ];
    let flags: Vec<&str> = flags.iter().map(String::as_str).collect();
    let server = Server::start(&dir.path().join("data"), &flags).await;
    let claims = |f: &dyn Fn(&mut Value)| {
        let mut c = json!({"iss": ISSUER, "aud": "skein", "sub": "alice", "groups": ["dev"],
            "iat": now(), "exp": now() + 600});
        f(&mut c);
        c
    };

    let good = issuer.sign(&claims(&|_| {}));
    let config = server.token_kubeconfig("alice", &good);
    let info = whoami(&server, &k, &config).expect("OIDC token authenticates");
    // Upstream's default prefix for a claim other than email.
    assert_eq!(info["username"], "https://issuer.test#alice");
    assert_eq!(info["groups"], json!(["oidc:dev", "system:authenticated"]));
    let (code, _) = get_with_token(&server, "/api", &good).await;
    assert_eq!(code, StatusCode::OK);

    let expired = issuer.sign(&claims(&|c| {
        c["iat"] = json!(now() - 3600);
        c["exp"] = json!(now() - 600);
    }));
    let wrong_audience = issuer.sign(&claims(&|c| c["aud"] = json!("someone-else")));
    let wrong_key = Issuer::new("k1").sign(&claims(&|_| {}));
    let not_yet = issuer.sign(&claims(&|c| c["nbf"] = json!(now() + 600)));
    let alg_none = format!(
        "{}.{}.",
        URL_SAFE_NO_PAD.encode(br#"{"alg":"none","typ":"JWT"}"#),
        URL_SAFE_NO_PAD.encode(claims(&|_| {}).to_string())
    );
    let garbage = "not-a-jwt".to_string();
    for (what, token) in [
        ("expired", &expired),
        ("wrong audience", &wrong_audience),
        ("wrong key", &wrong_key),
        ("not yet valid", &not_yet),
        ("alg none", &alg_none),
        ("garbage", &garbage),
    ] {
        for path in ["/api", "/healthz"] {
            let (code, body) = get_with_token(&server, path, token).await;
            assert_eq!(code, StatusCode::UNAUTHORIZED, "{what} {path}");
            assert_eq!(body, UNAUTHORIZED, "{what} {path}");
        }
        let config = server.token_kubeconfig("bad", token);
        let err = whoami(&server, &k, &config).expect_err(what);
        assert!(err.contains("Unauthorized"), "{what}: {err}");
    }
}

#[tokio::test]
async fn oidc_flags_are_checked_at_startup() {
    let dir = tempfile::tempdir().expect("tempdir");
    let (status, stderr) = Server::start_expecting_failure(
        &dir.path().join("data"),
        &["--oidc-issuer-url=https://issuer.test"],
    )
    .await;
    assert!(!status.success());
    assert!(
        stderr.contains("oidc-issuer-url and oidc-client-id must be specified together"),
        "{stderr}"
    );
    let (_, stderr) = Server::start_expecting_failure(
        &dir.path().join("data2"),
        &["--oidc-issuer-url=http://issuer.test", "--oidc-client-id=x"],
    )
    .await;
    assert!(stderr.contains("must use the https scheme"), "{stderr}");
}

#[tokio::test]
async fn anonymous_requests() {
    let dir = tempfile::tempdir().expect("tempdir");
    let off = Server::start(&dir.path().join("off"), &[]).await;
    let on = Server::start(&dir.path().join("on"), &["--anonymous-auth=true"]).await;
    let review = json!({"apiVersion": "authentication.k8s.io/v1", "kind": "SelfSubjectReview"});
    let path = "/apis/authentication.k8s.io/v1/selfsubjectreviews";

    let resp = off
        .client(false)
        .post(off.url(path))
        .header("content-type", "application/json")
        .body(review.to_string())
        .send()
        .await
        .expect("post");
    assert_eq!(resp.status(), StatusCode::UNAUTHORIZED);
    assert_eq!(resp.text().await.expect("body"), UNAUTHORIZED);
    let resp = off
        .client(false)
        .get(off.url("/version"))
        .send()
        .await
        .expect("get");
    assert_eq!(resp.status(), StatusCode::OK);

    let resp = on
        .client(false)
        .post(on.url(path))
        .header("content-type", "application/json")
        .body(review.to_string())
        .send()
        .await
        .expect("post");
    let code = resp.status();
    let body: Value = serde_json::from_str(&resp.text().await.expect("body")).expect("json");
    // Authorization (RBAC) may refuse the anonymous user, but it is no
    // longer an authentication failure.
    assert_ne!(code, StatusCode::UNAUTHORIZED, "{body}");
    if code == StatusCode::CREATED {
        assert_eq!(
            body["status"]["userInfo"],
            json!({"username": "system:anonymous", "groups": ["system:unauthenticated"]})
        );
    }
    // A bad token is still a 401, anonymous or not.
    let (code, body) = get_with_token(&on, "/version", "nope").await;
    assert_eq!(
        (code, body.as_str()),
        (StatusCode::UNAUTHORIZED, UNAUTHORIZED)
    );
}
