//! A CRD conversion webhook on loopback for the end-to-end suites: HTTPS
//! (its own CA, given to the CRD as `caBundle`) on `127.0.0.1`, answering
//! `ConversionReview`s (`apiextensions.k8s.io/v1` or `v1beta1`, the version
//! it was asked in) by applying a conversion function to each object, as
//! a real webhook does.

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

/// Converts one object to the desired `group/version`; sets `apiVersion`
/// itself.
pub type Convert = fn(Value, &str) -> Value;

/// A running webhook; stops (closing its connections) when dropped.
pub struct ConversionWebhook {
    url: String,
    ca_pem: String,
    reviews: Arc<AtomicUsize>,
    task: tokio::task::JoinHandle<()>,
}

impl Drop for ConversionWebhook {
    fn drop(&mut self) {
        self.task.abort();
    }
}

impl ConversionWebhook {
    /// Starts a webhook at `https://127.0.0.1:<port>/convert` converting
    /// with `convert`.
    pub async fn start(convert: Convert) -> ConversionWebhook {
        let mut ca_params = CertificateParams::default();
        ca_params.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
        let ca_key = KeyPair::generate().expect("CA key");
        let ca_pem = ca_params.self_signed(&ca_key).expect("CA").pem();
        let issuer = Issuer::new(ca_params, ca_key);
        let key = KeyPair::generate().expect("serving key");
        let cert = CertificateParams::new(vec!["127.0.0.1".to_string()])
            .expect("serving params")
            .signed_by(&key, &issuer)
            .expect("serving cert");
        let certs = vec![CertificateDer::from_pem_slice(cert.pem().as_bytes()).expect("cert")];
        let key = PrivateKeyDer::from_pem_slice(key.serialize_pem().as_bytes()).expect("key");
        let provider = Arc::new(rustls::crypto::ring::default_provider());
        let config = rustls::ServerConfig::builder_with_provider(provider)
            .with_safe_default_protocol_versions()
            .expect("TLS versions")
            .with_no_client_auth()
            .with_single_cert(certs, key)
            .expect("TLS config");
        let acceptor = tokio_rustls::TlsAcceptor::from(Arc::new(config));
        let listener = TcpListener::bind("127.0.0.1:0").await.expect("bind");
        let port = listener.local_addr().expect("address").port();
        let reviews = Arc::new(AtomicUsize::new(0));
        let counter = reviews.clone();
        let task = tokio::spawn(async move {
            // Connection tasks live in this set, so stopping the webhook
            // also closes its kept-alive connections.
            let mut connections = tokio::task::JoinSet::new();
            loop {
                let tcp = tokio::select! {
                    accepted = listener.accept() => match accepted {
                        Ok((tcp, _)) => tcp,
                        Err(_) => break,
                    },
                    Some(_) = connections.join_next(), if !connections.is_empty() => continue,
                };
                let (acceptor, counter) = (acceptor.clone(), counter.clone());
                connections.spawn(async move {
                    let Ok(tls) = acceptor.accept(tcp).await else {
                        return;
                    };
                    let service = hyper::service::service_fn(move |req: Request<Incoming>| {
                        let counter = counter.clone();
                        async move {
                            let body = req.into_body().collect().await?.to_bytes();
                            counter.fetch_add(1, Ordering::SeqCst);
                            let review: Value = serde_json::from_slice(&body).unwrap_or_default();
                            let answer = answer(&review, convert);
                            Ok::<_, hyper::Error>(Response::new(Full::new(Bytes::from(
                                answer.to_string(),
                            ))))
                        }
                    });
                    let _ = hyper::server::conn::http1::Builder::new()
                        .serve_connection(TokioIo::new(tls), service)
                        .await;
                });
            }
        });
        ConversionWebhook {
            url: format!("https://127.0.0.1:{port}/convert"),
            ca_pem,
            reviews,
            task,
        }
    }

    /// `clientConfig.url`.
    pub fn url(&self) -> &str {
        &self.url
    }

    /// `clientConfig.caBundle` (base64 of the CA's PEM).
    pub fn ca_bundle(&self) -> String {
        base64::engine::general_purpose::STANDARD.encode(self.ca_pem.as_bytes())
    }

    /// How many reviews it answered.
    pub fn reviews(&self) -> usize {
        self.reviews.load(Ordering::SeqCst)
    }
}

/// The `ConversionReview` answering `review`.
fn answer(review: &Value, convert: Convert) -> Value {
    let desired = review["request"]["desiredAPIVersion"]
        .as_str()
        .unwrap_or_default();
    let converted: Vec<Value> = review["request"]["objects"]
        .as_array()
        .map(|objs| objs.iter().map(|o| convert(o.clone(), desired)).collect())
        .unwrap_or_default();
    json!({
        "apiVersion": review["apiVersion"],
        "kind": "ConversionReview",
        "response": {
            "uid": review["request"]["uid"],
            "result": {"status": "Success"},
            "convertedObjects": converted,
        }
    })
}
