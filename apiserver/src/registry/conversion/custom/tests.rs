//! Tests of [`CustomConverter`]: strategy `None`, and strategy `Webhook`
//! against a small HTTPS webhook served on 127.0.0.1 inside the test.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use base64::Engine;
use http_body_util::{BodyExt, Full};
use hyper::body::{Bytes, Incoming};
use hyper::{Request, Response};
use hyper_util::rt::TokioIo;
use rcgen::{BasicConstraints, CertificateParams, IsCa, Issuer, KeyPair};
use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, PrivateKeyDer};
use serde_json::{Value, json};
use tokio::net::TcpListener;

use super::*;

type Handler = dyn Fn(Value) -> (u16, Value) + Send + Sync;

/// A test webhook: its URL, the CA bundle (PEM) that trusts it, and how
/// many connections and reviews it saw.
struct Server {
    url: String,
    ca_pem: String,
    connections: Arc<AtomicUsize>,
    reviews: Arc<std::sync::Mutex<Vec<Value>>>,
}

fn ca() -> (String, Issuer<'static, KeyPair>) {
    let mut params = CertificateParams::default();
    params.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
    let key = KeyPair::generate().expect("key");
    let cert = params.self_signed(&key).expect("ca");
    (cert.pem(), Issuer::new(params, key))
}

async fn serve(handler: Arc<Handler>) -> Server {
    let (ca_pem, issuer) = ca();
    let params = CertificateParams::new(vec!["127.0.0.1".to_string()]).expect("params");
    let key = KeyPair::generate().expect("key");
    let cert = params.signed_by(&key, &issuer).expect("leaf");
    let certs = vec![CertificateDer::from_pem_slice(cert.pem().as_bytes()).expect("der")];
    let key = PrivateKeyDer::from_pem_slice(key.serialize_pem().as_bytes()).expect("key der");
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let config = rustls::ServerConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .expect("versions")
        .with_no_client_auth()
        .with_single_cert(certs, key)
        .expect("server config");
    let acceptor = tokio_rustls::TlsAcceptor::from(Arc::new(config));
    let listener = TcpListener::bind("127.0.0.1:0").await.expect("bind");
    let port = listener.local_addr().expect("addr").port();
    let connections = Arc::new(AtomicUsize::new(0));
    let reviews = Arc::new(std::sync::Mutex::new(Vec::new()));
    let (conns, seen) = (connections.clone(), reviews.clone());
    tokio::spawn(async move {
        while let Ok((tcp, _)) = listener.accept().await {
            conns.fetch_add(1, Ordering::SeqCst);
            let (acceptor, handler, seen) = (acceptor.clone(), handler.clone(), seen.clone());
            tokio::spawn(async move {
                let Ok(tls) = acceptor.accept(tcp).await else {
                    return;
                };
                let service = hyper::service::service_fn(move |req: Request<Incoming>| {
                    let (handler, seen) = (handler.clone(), seen.clone());
                    async move {
                        let body = req.into_body().collect().await?.to_bytes();
                        let review: Value = serde_json::from_slice(&body).unwrap_or_default();
                        seen.lock().expect("lock").push(review.clone());
                        let (code, answer) = handler(review);
                        let body = match answer {
                            Value::String(s) => s.into_bytes(),
                            v => v.to_string().into_bytes(),
                        };
                        Ok::<_, hyper::Error>(
                            Response::builder()
                                .status(code)
                                .body(Full::new(Bytes::from(body)))
                                .expect("response"),
                        )
                    }
                });
                let _ = hyper::server::conn::http1::Builder::new()
                    .serve_connection(TokioIo::new(tls), service)
                    .await;
            });
        }
    });
    Server {
        url: format!("https://127.0.0.1:{port}/convert"),
        ca_pem,
        connections,
        reviews,
    }
}

/// A webhook converting Widgets v1 (`spec.size`) ↔ v2 (`spec.replicas`),
/// adding a label, as a real one would.
fn widget_webhook(review: Value) -> (u16, Value) {
    let desired = review["request"]["desiredAPIVersion"]
        .as_str()
        .unwrap_or("")
        .to_string();
    let objects = review["request"]["objects"]
        .as_array()
        .cloned()
        .unwrap_or_default();
    let converted: Vec<Value> = objects
        .into_iter()
        .map(|mut o| {
            let spec = o["spec"].as_object().cloned().unwrap_or_default();
            let mut out = serde_json::Map::new();
            for (k, v) in spec {
                let k = match (desired.as_str(), k.as_str()) {
                    ("example.com/v2", "size") => "replicas".to_string(),
                    ("example.com/v1", "replicas") => "size".to_string(),
                    _ => k,
                };
                out.insert(k, v);
            }
            o["spec"] = Value::Object(out);
            o["apiVersion"] = json!(desired);
            o["metadata"]["labels"]["converted"] = json!("yes");
            o["metadata"]["resourceVersion"] = json!("bogus");
            o
        })
        .collect();
    let api_version = review["apiVersion"].clone();
    (
        200,
        json!({"apiVersion": api_version, "kind": "ConversionReview",
               "response": {"uid": review["request"]["uid"], "result": {"status": "Success"},
                            "convertedObjects": converted}}),
    )
}

fn crd(conversion: Value) -> Value {
    json!({"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
           "metadata": {"name": "widgets.example.com"},
           "spec": {"group": "example.com", "conversion": conversion}})
}

fn webhook_crd(server: &Server, versions: Value) -> Value {
    let ca = base64::engine::general_purpose::STANDARD.encode(&server.ca_pem);
    crd(json!({"strategy": "Webhook", "webhook": {
        "clientConfig": {"url": server.url, "caBundle": ca},
        "conversionReviewVersions": versions}}))
}

fn widget(version: &str, name: &str) -> Value {
    json!({"apiVersion": format!("example.com/{version}"), "kind": "Widget",
           "metadata": {"name": name, "namespace": "default", "uid": format!("uid-{name}"),
                        "resourceVersion": "5"},
           "spec": {"size": 3}})
}

#[tokio::test]
async fn strategy_none_rewrites_api_version_only() {
    for conversion in [json!({"strategy": "None"}), json!(null)] {
        let converter = CustomConverter::new(&crd(conversion));
        assert!(matches!(converter, CustomConverter::None));
        let out = converter
            .convert(vec![widget("v1", "a"), widget("v2", "b")], "example.com/v2")
            .await;
        let mut a = widget("v1", "a");
        a["apiVersion"] = json!("example.com/v2");
        assert_eq!(out, Ok(vec![a, widget("v2", "b")]));
    }
}

#[tokio::test]
async fn webhook_converts_one_object_and_lists() {
    let server = serve(Arc::new(widget_webhook)).await;
    let converter = CustomConverter::new(&webhook_crd(&server, json!(["v1"])));
    assert!(
        matches!(converter, CustomConverter::Webhook(_)),
        "{converter:?}"
    );

    let out = converter
        .convert(vec![widget("v1", "a")], "example.com/v2")
        .await;
    let mut want = widget("v2", "a");
    want["spec"] = json!({"replicas": 3});
    want["metadata"]["labels"] = json!({"converted": "yes"});
    assert_eq!(out, Ok(vec![want.clone()]));

    // A list: only the objects not in the desired version are sent.
    let out = converter
        .convert(
            vec![widget("v1", "a"), widget("v2", "b"), widget("v1", "c")],
            "example.com/v2",
        )
        .await
        .expect("converted");
    assert_eq!(out.len(), 3);
    assert_eq!(out[0], want);
    assert_eq!(out[1], widget("v2", "b"));
    assert_eq!(out[2]["metadata"]["name"], "c");
    assert_eq!(out[2]["spec"], json!({"replicas": 3}));

    let reviews = server.reviews.lock().expect("lock").clone();
    assert_eq!(reviews.len(), 2);
    let last = &reviews[1];
    assert_eq!(last["apiVersion"], "apiextensions.k8s.io/v1");
    assert_eq!(last["kind"], "ConversionReview");
    assert_eq!(last["request"]["desiredAPIVersion"], "example.com/v2");
    assert_eq!(last["request"]["objects"].as_array().map(Vec::len), Some(2));
    assert_ne!(reviews[0]["request"]["uid"], reviews[1]["request"]["uid"]);
    // Both calls used one kept-alive connection.
    assert_eq!(server.connections.load(Ordering::SeqCst), 1);

    // Everything already in the desired version: no call.
    let same = converter
        .convert(vec![widget("v2", "z")], "example.com/v2")
        .await;
    assert_eq!(same, Ok(vec![widget("v2", "z")]));
    // An empty object converts without a call.
    let empty = json!({"apiVersion": "example.com/v1", "kind": "Widget"});
    let out = converter.convert(vec![empty], "example.com/v2").await;
    assert_eq!(
        out,
        Ok(vec![
            json!({"apiVersion": "example.com/v2", "kind": "Widget"})
        ])
    );
    assert_eq!(server.reviews.lock().expect("lock").len(), 2);
}

#[tokio::test]
async fn webhook_speaks_v1beta1_when_asked() {
    let server = serve(Arc::new(|review: Value| {
        let (code, mut answer) = widget_webhook(review);
        // v1beta1 answers are not checked for uid.
        answer["response"]["uid"] = json!("whatever");
        (code, answer)
    }))
    .await;
    let converter = CustomConverter::new(&webhook_crd(&server, json!(["v9", "v1beta1", "v1"])));
    let out = converter
        .convert(vec![widget("v2", "a")], "example.com/v1")
        .await;
    assert_eq!(out.map(|o| o[0]["spec"].clone()), Ok(json!({"size": 3})));
    let sent = server.reviews.lock().expect("lock")[0].clone();
    assert_eq!(sent["apiVersion"], "apiextensions.k8s.io/v1beta1");
}

async fn failure(handler: Arc<Handler>, versions: Value) -> ApiError {
    let server = serve(handler).await;
    let converter = CustomConverter::new(&webhook_crd(&server, versions));
    match converter
        .convert(vec![widget("v1", "a")], "example.com/v2")
        .await
    {
        Ok(out) => panic!("converted: {out:?}"),
        Err(e) => e,
    }
}

#[tokio::test]
async fn webhook_failures_are_upstream_errors() {
    let prefix = "conversion webhook for example.com/v1, Kind=Widget failed: ";
    let e = failure(
        Arc::new(|r: Value| {
            (200, json!({"apiVersion": "apiextensions.k8s.io/v1", "kind": "ConversionReview",
                "response": {"uid": r["request"]["uid"], "result": {"status": "Failure", "message": "no way"}}}))
        }),
        json!(["v1"]),
    )
    .await;
    assert_eq!(e.code().as_u16(), 500);
    assert_eq!(e.reason(), "");
    assert_eq!(e.message(), format!("{prefix}no way"));

    let e = failure(
        Arc::new(|r: Value| {
            let (c, mut a) = widget_webhook(r);
            a["response"]["uid"] = json!("wrong");
            (c, a)
        }),
        json!(["v1"]),
    )
    .await;
    assert!(
        e.message()
            .starts_with(&format!("{prefix}expected response.uid=")),
        "{}",
        e.message()
    );

    let e = failure(
        Arc::new(|r: Value| {
            let (c, mut a) = widget_webhook(r);
            a["response"]["convertedObjects"][0]["metadata"]["name"] = json!("b");
            (c, a)
        }),
        json!(["v1"]),
    )
    .await;
    assert_eq!(
        e.message(),
        "conversion webhook for example.com/v1, Kind=Widget returned invalid object: must have the same name: a != b"
    );

    let e = failure(Arc::new(|_| (500, json!("it broke"))), json!(["v1"])).await;
    assert_eq!(
        e.message(),
        format!(
            "{prefix}an error on the server (\"unknown\") has prevented the request from succeeding"
        )
    );

    let e = failure(Arc::new(widget_webhook), json!(["v7"])).await;
    assert_eq!(e.message(), "no supported conversion review versions");
}

#[tokio::test]
async fn untrusted_and_unreachable_webhooks() {
    let server = serve(Arc::new(widget_webhook)).await;
    let (other_ca, _) = ca();
    let mut spec = webhook_crd(&server, json!(["v1"]));
    spec["spec"]["conversion"]["webhook"]["clientConfig"]["caBundle"] =
        json!(base64::engine::general_purpose::STANDARD.encode(other_ca));
    let e = CustomConverter::new(&spec)
        .convert(vec![widget("v1", "a")], "example.com/v2")
        .await
        .expect_err("untrusted");
    assert_eq!(
        e.message(),
        format!(
            "conversion webhook for example.com/v1, Kind=Widget failed: Post \"{}?timeout=30s\": tls: failed to verify certificate: x509: certificate signed by unknown authority",
            server.url
        )
    );

    // A port nothing listens on.
    let port = {
        let l = std::net::TcpListener::bind("127.0.0.1:0").expect("bind");
        l.local_addr().expect("addr").port()
    };
    let spec = crd(json!({"strategy": "Webhook", "webhook": {
        "clientConfig": {"url": format!("https://127.0.0.1:{port}/convert")},
        "conversionReviewVersions": ["v1"]}}));
    let e = CustomConverter::new(&spec)
        .convert(vec![widget("v1", "a")], "example.com/v2")
        .await
        .expect_err("refused");
    assert_eq!(
        e.message(),
        format!(
            "conversion webhook for example.com/v1, Kind=Widget failed: Post \"https://127.0.0.1:{port}/convert?timeout=30s\": dial tcp 127.0.0.1:{port}: connect: connection refused"
        )
    );
}

#[tokio::test]
async fn service_references_are_unsupported_with_a_clear_error() {
    let spec = crd(json!({"strategy": "Webhook", "webhook": {
        "clientConfig": {"service": {"namespace": "ns", "name": "hook", "path": "/convert", "port": 443}},
        "conversionReviewVersions": ["v1"]}}));
    let converter = CustomConverter::new(&spec);
    assert_eq!(converter.unsupported_reason(), Some(SERVICE_UNSUPPORTED));
    // The storage version itself is still served.
    assert_eq!(
        converter
            .convert(vec![widget("v1", "a")], "example.com/v1")
            .await,
        Ok(vec![widget("v1", "a")])
    );
    let e = converter
        .convert(vec![widget("v1", "a")], "example.com/v2")
        .await
        .expect_err("service");
    assert_eq!(e.code().as_u16(), 500);
    assert_eq!(
        e.message(),
        format!("conversion webhook for example.com/v1, Kind=Widget failed: {SERVICE_UNSUPPORTED}")
    );
    assert!(e.message().contains("clientConfig.url"));

    let unknown = CustomConverter::new(&crd(json!({"strategy": "Magic"})));
    assert_eq!(
        unknown.unsupported_reason(),
        Some("unknown conversion strategy \"Magic\" for CRD widgets.example.com")
    );
    let no_url = CustomConverter::new(&crd(
        json!({"strategy": "Webhook", "webhook": {"clientConfig": {}}}),
    ));
    assert_eq!(
        no_url.unsupported_reason(),
        Some(
            "failed calling webhook \"conversion_webhook_for_widgets.example.com\": webhook configuration must have either service or URL"
        )
    );
}
