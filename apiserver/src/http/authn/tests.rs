//! Unit tests of authentication (`mod.rs`) and the token file.

use std::collections::BTreeMap;

use axum::Router;
use axum::body::Body;
use axum::http::{HeaderValue, StatusCode};
use axum::routing::get;
use http_body_util::BodyExt;
use tower::ServiceExt;

use super::token_file::*;
use super::*;

#[test]
fn public_paths_are_exact() {
    for p in ["/healthz", "/livez", "/readyz", "/version", "/version/"] {
        assert!(is_public(p), "{p}");
    }
    for p in ["/", "/api", "/healthz/etcd", "/versions", "/apis"] {
        assert!(!is_public(p), "{p}");
    }
}

#[test]
fn user_from_admin_certificate() {
    let dir = tempfile::tempdir().expect("tempdir");
    let pki = crate::pki::Pki::load_or_create(dir.path(), &["localhost".to_string()]).expect("pki");
    let (_, pem) = x509_parser::pem::parse_x509_pem(pki.admin.cert_pem.as_bytes()).expect("pem");
    let user = ClientCertUser::from_der(&pem.contents).expect("user");
    assert_eq!(user.name, "skein-admin");
    assert_eq!(user.groups, ["system:masters"]);
    assert_eq!(
        user.user_info(),
        UserInfo {
            name: "skein-admin".into(),
            uid: None,
            groups: vec!["system:masters".into(), AUTHENTICATED_GROUP.into()],
            extra: BTreeMap::new(),
        }
    );
}

#[test]
fn authenticated_group_is_added_once() {
    let g = |groups: &[&str]| {
        UserInfo::authenticated(
            "u".into(),
            None,
            groups.iter().map(|g| g.to_string()).collect(),
        )
        .groups
    };
    assert_eq!(g(&[]), ["system:authenticated"]);
    assert_eq!(g(&["a"]), ["a", "system:authenticated"]);
    assert_eq!(
        g(&["system:authenticated", "a"]),
        ["system:authenticated", "a"]
    );
    // As upstream's AuthenticatedGroupAdder.
    assert_eq!(g(&["system:unauthenticated"]), ["system:unauthenticated"]);
}

// ---- the token file ----

fn user(name: &str, uid: Option<&str>, groups: &[&str]) -> UserInfo {
    UserInfo {
        name: name.into(),
        uid: uid.map(str::to_string),
        groups: groups.iter().map(|g| g.to_string()).collect(),
        extra: BTreeMap::new(),
    }
}

/// Parses `text` and returns each (token, user), sorted by token.
fn users_of(text: &str, tokens: &[&str]) -> Vec<(String, Option<UserInfo>)> {
    let (auth, _) =
        TokenAuthenticator::parse(text).unwrap_or_else(|e| panic!("{text:?} should parse: {e}"));
    tokens
        .iter()
        .map(|t| {
            (
                t.to_string(),
                auth.authenticate_token(t.as_bytes()).cloned(),
            )
        })
        .collect()
}

#[test]
fn valid_token_files() {
    let alice = |groups: &[&str]| Some(user("alice", Some("1001"), groups));
    #[allow(clippy::type_complexity)]
    let cases: &[(&str, &str, &[(&str, Option<UserInfo>)])] = &[
        (
            "three columns",
            "tok,alice,1001\n",
            &[("tok", alice(&["system:authenticated"]))],
        ),
        (
            "quoted groups",
            "tok,alice,1001,\"dev,ops\"\n",
            &[("tok", alice(&["dev", "ops", "system:authenticated"]))],
        ),
        (
            "one unquoted group",
            "tok,alice,1001,dev",
            &[("tok", alice(&["dev", "system:authenticated"]))],
        ),
        (
            "columns after the 4th are ignored",
            "tok,alice,1001,dev,extra,more\n",
            &[("tok", alice(&["dev", "system:authenticated"]))],
        ),
        (
            "an empty 4th column is one empty group, as strings.Split",
            "tok,alice,1001,\n",
            &[("tok", alice(&["", "system:authenticated"]))],
        ),
        (
            "system:authenticated is not doubled",
            "tok,alice,1001,system:authenticated\n",
            &[("tok", alice(&["system:authenticated"]))],
        ),
        (
            "an empty uid is no uid",
            "tok,bob,\n",
            &[("tok", Some(user("bob", None, &["system:authenticated"])))],
        ),
        (
            "nothing is trimmed",
            "tok, alice ,1001, dev\n",
            &[
                (
                    "tok",
                    Some(user(
                        " alice ",
                        Some("1001"),
                        &[" dev", "system:authenticated"],
                    )),
                ),
                (" tok", None),
            ],
        ),
        (
            "blank lines, CRLF and a missing final newline",
            "\n\r\na,alice,1\r\n\nb,bob,2",
            &[
                (
                    "a",
                    Some(user("alice", Some("1"), &["system:authenticated"])),
                ),
                ("b", Some(user("bob", Some("2"), &["system:authenticated"]))),
            ],
        ),
        (
            "quotes: escaped quote, quoted token, newline inside quotes",
            "\"t\"\"k\",\"al,ice\",1,\"a\nb\"\n",
            &[(
                "t\"k",
                Some(user("al,ice", Some("1"), &["a\nb", "system:authenticated"])),
            )],
        ),
        (
            "an empty token is skipped",
            ",nobody,0\ntok,alice,1001\n",
            &[("", None), ("tok", alice(&["system:authenticated"]))],
        ),
        (
            "the last duplicate wins",
            "tok,mallory,6\ntok,alice,1001\n",
            &[("tok", alice(&["system:authenticated"]))],
        ),
        ("an empty file", "", &[("tok", None)]),
        (
            "tokens are case sensitive",
            "Tok,alice,1001\n",
            &[("tok", None), ("Tok", alice(&["system:authenticated"]))],
        ),
    ];
    for (name, text, want) in cases {
        let tokens: Vec<&str> = want.iter().map(|(t, _)| *t).collect();
        let got = users_of(text, &tokens);
        let want: Vec<(String, Option<UserInfo>)> = want
            .iter()
            .map(|(t, u)| (t.to_string(), u.clone()))
            .collect();
        assert_eq!(got, want, "{name}");
    }
}

#[test]
fn invalid_token_files() {
    let cases: &[(&str, &str, &str)] = &[
        (
            "too few columns",
            "a,alice,1\nb,bob\n",
            "line 2: must have at least 3 columns (token, user name, user uid), found 2",
        ),
        (
            "one column",
            "justatoken\n",
            "line 1: must have at least 3 columns (token, user name, user uid), found 1",
        ),
        (
            "no comments, as upstream",
            "# tokens\na,alice,1\n",
            "line 1: must have at least 3 columns (token, user name, user uid), found 1",
        ),
        (
            "a comment with commas is a record, and 3 columns is not checked later",
            "\n\n# a, b\n",
            "line 3: must have at least 3 columns (token, user name, user uid), found 2",
        ),
        (
            "too few columns is checked before the empty token",
            ",alice\n",
            "line 1: must have at least 3 columns (token, user name, user uid), found 2",
        ),
        (
            "a whitespace-only line is a record",
            "a,alice,1\n   \n",
            "line 2: must have at least 3 columns (token, user name, user uid), found 1",
        ),
        (
            "a bare quote",
            "a,al\"ice,1\n",
            "line 1: column 5: bare \" in non-quoted-field",
        ),
        (
            "a space before the opening quote",
            "a,alice,1, \"dev,ops\"\n",
            "line 1: column 12: bare \" in non-quoted-field",
        ),
        (
            "text after the closing quote",
            "a,alice,1,\"dev\"x\n",
            "line 1: column 15: extraneous or missing \" in quoted-field",
        ),
        (
            "an unterminated quote",
            "a,alice,1,\"dev\nb,bob,2\n",
            // Where Go's reader reports it: the end of the last line.
            "line 2: column 9: extraneous or missing \" in quoted-field \
             (in the record that starts on line 1)",
        ),
    ];
    for (name, text, want) in cases {
        let err = TokenAuthenticator::parse(text)
            .map(|(a, _)| a)
            .expect_err(name);
        assert_eq!(err.to_string(), *want, "{name}");
    }
}

#[test]
fn warnings_for_empty_and_duplicate_tokens() {
    let (auth, warnings) =
        TokenAuthenticator::parse("a,alice,1\n,nobody,0\n\nb,bob,2\na,mallory,3\n")
            .expect("parses");
    assert_eq!(auth.len(), 2);
    assert_eq!(
        warnings,
        [
            TokenFileWarning::EmptyToken { line: 2 },
            TokenFileWarning::DuplicateToken {
                line: 5,
                earlier: 1
            },
        ]
    );
    assert_eq!(
        warnings[1].to_string(),
        "line 5: duplicate token (also on line 1); line 5 wins"
    );
    assert_eq!(
        auth.authenticate_token(b"a").map(|u| u.name.as_str()),
        Some("mallory")
    );
}

#[test]
fn debug_does_not_show_tokens() {
    let (auth, _) = TokenAuthenticator::parse("s3cret,alice,1\n").expect("parses");
    assert_eq!(format!("{auth:?}"), "TokenAuthenticator { users: 1 }");
}

#[test]
fn load_names_the_file_and_line() {
    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path().join("tokens.csv");
    std::fs::write(&path, "a,alice,1\nb\n").expect("write");
    let err = TokenAuthenticator::load(&path).expect_err("malformed");
    assert_eq!(
        err.to_string(),
        format!(
            "invalid --token-auth-file {}: line 2: must have at least 3 columns \
             (token, user name, user uid), found 1",
            path.display()
        )
    );
    let missing = dir.path().join("missing.csv");
    let err = TokenAuthenticator::load(&missing).expect_err("missing");
    assert!(
        err.to_string().starts_with(&format!(
            "cannot read --token-auth-file {}: ",
            missing.display()
        )),
        "{err}"
    );
    std::fs::write(&path, "a,alice,1\n").expect("write");
    assert_eq!(TokenAuthenticator::load(&path).expect("valid").len(), 1);
}

#[test]
fn bearer_header_parsing() {
    let cases: &[(&str, Option<&str>)] = &[
        ("Bearer tok", Some("tok")),
        ("bearer tok", Some("tok")),
        ("BEARER tok", Some("tok")),
        ("  Bearer tok  ", Some("tok")),
        ("Bearer tok extra", Some("tok")),
        ("Bearer  tok", None),
        ("Bearer", None),
        ("Bearer ", None),
        ("Basic dXNlcjpwYXNz", None),
        ("Bearertok", None),
        ("", None),
    ];
    for (value, want) in cases {
        let mut headers = HeaderMap::new();
        headers.insert(
            header::AUTHORIZATION,
            HeaderValue::from_str(value).expect("header"),
        );
        assert_eq!(bearer_token(&headers), want.map(str::as_bytes), "{value:?}");
    }
    assert_eq!(bearer_token(&HeaderMap::new()), None);
}

// ---- the middleware ----

// json.Encoder's trailing newline, as upstream.
const UNAUTHORIZED: &str = "{\"kind\":\"Status\",\"apiVersion\":\"v1\",\"metadata\":{},\"status\":\"Failure\",\"message\":\"Unauthorized\",\"reason\":\"Unauthorized\",\"code\":401}\n";

/// A router whose handlers echo the user and whether the Authorization
/// header reached them, behind [`authenticate`], with `tokens` (if any)
/// layered outside it as `server::run` does.
fn router(tokens: Option<&str>) -> Router {
    async fn echo(req: Request) -> String {
        let user = req.extensions().get::<UserInfo>().map(|u| {
            format!(
                "{} uid={} groups={}",
                u.name,
                u.uid.as_deref().unwrap_or("-"),
                u.groups.join("|")
            )
        });
        let auth = req.headers().contains_key(header::AUTHORIZATION);
        format!(
            "{} authorization={auth}",
            user.as_deref().unwrap_or("anonymous")
        )
    }
    let app = Router::new()
        .route("/api", get(echo))
        .route("/healthz", get(echo))
        .layer(axum::middleware::from_fn(authenticate));
    match tokens {
        Some(text) => {
            let (tokens, _) = TokenAuthenticator::parse(text).expect("token file");
            let auth = Authenticator {
                tokens: Some(tokens),
                ..Authenticator::default()
            };
            app.layer(axum::Extension(Arc::new(auth)))
        }
        None => app,
    }
}

const TOKENS: &str = "good,alice,1001,\"dev,ops\"\nplain,bob,\n";

async fn call(
    app: &Router,
    path: &str,
    authorization: Option<&str>,
    cert: Option<ClientCertUser>,
) -> (StatusCode, String) {
    let mut req = axum::http::Request::builder().uri(path);
    if let Some(value) = authorization {
        req = req.header(header::AUTHORIZATION, value);
    }
    let mut req = req.body(Body::empty()).expect("request");
    if let Some(cert) = cert {
        req.extensions_mut().insert(cert);
    }
    let resp = app.clone().oneshot(req).await.expect("infallible");
    let code = resp.status();
    let body = resp.into_body().collect().await.expect("body").to_bytes();
    (code, String::from_utf8(body.to_vec()).expect("utf8"))
}

fn admin() -> ClientCertUser {
    ClientCertUser {
        name: "skein-admin".into(),
        groups: vec!["system:masters".into()],
    }
}

#[tokio::test]
async fn valid_token_authenticates_and_is_removed() {
    let app = router(Some(TOKENS));
    let (code, body) = call(&app, "/api", Some("Bearer good"), None).await;
    assert_eq!(code, StatusCode::OK);
    assert_eq!(
        body,
        "alice uid=1001 groups=dev|ops|system:authenticated authorization=false"
    );
    let (code, body) = call(&app, "/api", Some("bearer plain"), None).await;
    assert_eq!(code, StatusCode::OK);
    assert_eq!(
        body,
        "bob uid=- groups=system:authenticated authorization=false"
    );
}

#[tokio::test]
async fn bad_token_is_401_even_on_public_paths() {
    let app = router(Some(TOKENS));
    for path in ["/api", "/healthz"] {
        for value in ["Bearer wrong", "Bearer Good", "Bearer good2", "Bearer goo"] {
            let (code, body) = call(&app, path, Some(value), None).await;
            assert_eq!(code, StatusCode::UNAUTHORIZED, "{path} {value}");
            assert_eq!(body, UNAUTHORIZED, "{path} {value}");
        }
    }
}

#[tokio::test]
async fn no_token_is_unauthenticated_not_rejected() {
    let app = router(Some(TOKENS));
    for value in [None, Some("Basic dXNlcjpwYXNz"), Some("Bearer  good")] {
        let (code, body) = call(&app, "/api", value, None).await;
        assert_eq!(code, StatusCode::UNAUTHORIZED, "{value:?}");
        assert_eq!(body, UNAUTHORIZED, "{value:?}");
        let (code, body) = call(&app, "/healthz", value, None).await;
        assert_eq!(code, StatusCode::OK, "{value:?}");
        assert!(body.starts_with("anonymous"), "{value:?}: {body}");
    }
}

#[tokio::test]
async fn client_certificate_wins_over_the_token() {
    let app = router(Some(TOKENS));
    let want = "skein-admin uid=- groups=system:masters|system:authenticated";
    for value in [None, Some("Bearer good"), Some("Bearer wrong")] {
        let (code, body) = call(&app, "/api", value, Some(admin())).await;
        assert_eq!(code, StatusCode::OK, "{value:?}");
        // The token is not looked at, so it is not removed either.
        assert_eq!(
            body,
            format!("{want} authorization={}", value.is_some()),
            "{value:?}"
        );
    }
}

#[tokio::test]
async fn without_a_token_file_bearer_tokens_are_ignored() {
    let app = router(None);
    let (code, body) = call(&app, "/api", Some("Bearer good"), None).await;
    assert_eq!(
        (code, body.as_str()),
        (StatusCode::UNAUTHORIZED, UNAUTHORIZED)
    );
    let (code, _) = call(&app, "/healthz", Some("Bearer good"), None).await;
    assert_eq!(code, StatusCode::OK);
    let (code, body) = call(&app, "/api", None, Some(admin())).await;
    assert_eq!(code, StatusCode::OK);
    assert!(body.starts_with("skein-admin "), "{body}");
}

#[tokio::test]
async fn anonymous_auth_serves_unauthenticated_requests_as_system_anonymous() {
    let auth = Authenticator {
        anonymous: true,
        ..Authenticator::default()
    };
    let app = Router::new()
        .route(
            "/api",
            get(|req: Request| async move {
                let u = req.extensions().get::<UserInfo>().cloned();
                u.map(|u| format!("{} {}", u.name, u.groups.join("|")))
                    .unwrap_or_default()
            }),
        )
        .layer(axum::middleware::from_fn(authenticate))
        .layer(axum::Extension(Arc::new(auth)));
    let (code, body) = call(&app, "/api", None, None).await;
    assert_eq!(code, StatusCode::OK);
    assert_eq!(body, "system:anonymous system:unauthenticated");
    let (code, body) = call(&app, "/api", None, Some(admin())).await;
    assert_eq!(code, StatusCode::OK);
    assert_eq!(body, "skein-admin system:masters|system:authenticated");
    // A bad token is never treated as no token.
    let (code, body) = call(&app, "/api", Some("Bearer x"), None).await;
    assert_eq!(
        (code, body.as_str()),
        (StatusCode::UNAUTHORIZED, UNAUTHORIZED)
    );
}

#[tokio::test]
async fn an_empty_token_file_rejects_every_token() {
    let app = router(Some(""));
    let (code, _) = call(&app, "/api", Some("Bearer good"), None).await;
    assert_eq!(code, StatusCode::UNAUTHORIZED);
    let (code, _) = call(&app, "/healthz", Some("Bearer good"), None).await;
    assert_eq!(code, StatusCode::UNAUTHORIZED);
}
