//! Raw HTTP helpers for the API suites: requests with the admin client
//! certificate, replies with their status, headers and parsed body, `Status`
//! assertions, streaming watches, and the other clients' binaries (Helm,
//! the Python `kubernetes` package).

use std::path::PathBuf;
use std::time::Duration;

use reqwest::header::{HeaderMap, HeaderName, HeaderValue};
use reqwest::{Method, StatusCode};
use serde_json::Value;

use crate::server::Server;

/// A finished request: status, headers and the whole body.
#[derive(Debug)]
pub struct Reply {
    /// The HTTP status.
    pub status: StatusCode,
    /// The response headers.
    pub headers: HeaderMap,
    /// The body bytes.
    pub body: Vec<u8>,
}

impl Reply {
    /// The body as text (lossy).
    pub fn text(&self) -> String {
        String::from_utf8_lossy(&self.body).into_owned()
    }

    /// The body as JSON; panics, quoting it, if it is not JSON.
    pub fn json(&self) -> Value {
        serde_json::from_slice(&self.body)
            .unwrap_or_else(|e| panic!("{} reply is not JSON ({e}): {}", self.status, self.text()))
    }

    /// A header's value as text, if present.
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers.get(name).and_then(|v| v.to_str().ok())
    }

    /// Asserts a success status `code` and returns the JSON body.
    pub fn expect(&self, code: u16) -> Value {
        assert_eq!(
            self.status.as_u16(),
            code,
            "expected {code}, got {}: {}",
            self.status,
            self.text()
        );
        self.json()
    }

    /// Asserts a 4xx whose body is a `metav1.Status` (any reason); returns
    /// the Status.
    pub fn expect_client_error(&self) -> Value {
        assert!(
            self.status.is_client_error(),
            "expected a 4xx, got {}: {}",
            self.status,
            self.text()
        );
        let s = self.json();
        let reason = s["reason"].as_str().unwrap_or_default().to_string();
        self.expect_status(self.status.as_u16(), &reason)
    }

    /// Asserts that this is an error `code` whose body is a `metav1.Status`
    /// with `reason`, answered as `application/json`; returns the Status.
    pub fn expect_status(&self, code: u16, reason: &str) -> Value {
        assert_eq!(
            self.status.as_u16(),
            code,
            "expected {code} {reason}, got {}: {}",
            self.status,
            self.text()
        );
        assert_eq!(
            self.header("content-type"),
            Some("application/json"),
            "an error body is JSON: {}",
            self.text()
        );
        let s = self.json();
        assert_eq!(s["kind"], "Status", "{s}");
        assert_eq!(s["apiVersion"], "v1", "{s}");
        assert_eq!(s["status"], "Failure", "{s}");
        assert_eq!(s["code"], code, "{s}");
        assert_eq!(s["reason"], reason, "{s}");
        assert!(
            s["message"].as_str().is_some_and(|m| !m.is_empty()),
            "a Status has a message: {s}"
        );
        s
    }
}

/// `Status.message` of a Status body.
pub fn message(status: &Value) -> &str {
    status["message"].as_str().unwrap_or_default()
}

/// An API client for one server, authenticated with the admin certificate.
#[derive(Clone)]
pub struct Api {
    client: reqwest::Client,
    base: String,
}

impl Api {
    /// An admin client for `server` (HTTP/2 or HTTP/1.1 by ALPN).
    pub fn new(server: &Server) -> Api {
        Api::with(server, server.client_builder(true))
    }

    /// An admin client that speaks only HTTP/1.1.
    pub fn http1(server: &Server) -> Api {
        Api::with(server, server.client_builder(true).http1_only())
    }

    fn with(server: &Server, builder: reqwest::ClientBuilder) -> Api {
        Api {
            // Watches stream for a while; every read is still bounded by
            // the suites' own timeouts.
            client: builder
                .timeout(Duration::from_secs(60))
                .build()
                .expect("reqwest client"),
            base: server.url(""),
        }
    }

    /// `https://<addr><path>`.
    pub fn url(&self, path: &str) -> String {
        format!("{}{path}", self.base)
    }

    /// Sends `method path` with `headers` and `body`; returns the whole reply.
    pub async fn call(
        &self,
        method: Method,
        path: &str,
        headers: &[(&str, &str)],
        body: Option<Vec<u8>>,
    ) -> Reply {
        let response = self.start(method.clone(), path, headers, body).await;
        let status = response.status();
        let headers = response.headers().clone();
        let body = response
            .bytes()
            .await
            .unwrap_or_else(|e| panic!("{method} {path}: reading the body failed: {e:?}"))
            .to_vec();
        Reply {
            status,
            headers,
            body,
        }
    }

    /// Sends a request and returns the response before reading its body.
    pub async fn start(
        &self,
        method: Method,
        path: &str,
        headers: &[(&str, &str)],
        body: Option<Vec<u8>>,
    ) -> reqwest::Response {
        let mut map = HeaderMap::new();
        for (k, v) in headers {
            map.append(
                HeaderName::from_bytes(k.as_bytes()).expect("header name"),
                HeaderValue::from_str(v).expect("header value"),
            );
        }
        let mut request = self
            .client
            .request(method.clone(), self.url(path))
            .headers(map);
        if let Some(b) = body {
            request = request.body(b);
        }
        request
            .send()
            .await
            .unwrap_or_else(|e| panic!("{method} {path} failed: {e:?}"))
    }

    /// `GET path`.
    pub async fn get(&self, path: &str) -> Reply {
        self.call(Method::GET, path, &[], None).await
    }

    /// `GET path` with an `Accept` header.
    pub async fn get_as(&self, path: &str, accept: &str) -> Reply {
        self.call(Method::GET, path, &[("accept", accept)], None)
            .await
    }

    /// `POST path` with a JSON body.
    pub async fn post(&self, path: &str, body: &Value) -> Reply {
        self.send_json(Method::POST, path, body).await
    }

    /// `PUT path` with a JSON body.
    pub async fn put(&self, path: &str, body: &Value) -> Reply {
        self.send_json(Method::PUT, path, body).await
    }

    /// `PATCH path` with a merge patch.
    pub async fn merge_patch(&self, path: &str, patch: &Value) -> Reply {
        self.raw(
            Method::PATCH,
            path,
            "application/merge-patch+json",
            serde_json::to_vec(patch).expect("json"),
        )
        .await
    }

    /// `DELETE path` without a body.
    pub async fn delete(&self, path: &str) -> Reply {
        self.call(Method::DELETE, path, &[], None).await
    }

    /// `method path` with a JSON body.
    pub async fn send_json(&self, method: Method, path: &str, body: &Value) -> Reply {
        self.raw(
            method,
            path,
            "application/json",
            serde_json::to_vec(body).expect("json"),
        )
        .await
    }

    /// `method path` with `body` of `content_type`.
    pub async fn raw(
        &self,
        method: Method,
        path: &str,
        content_type: &str,
        body: Vec<u8>,
    ) -> Reply {
        self.call(method, path, &[("content-type", content_type)], Some(body))
            .await
    }

    /// The names of the items a list at `path` returns.
    pub async fn names(&self, path: &str) -> Vec<String> {
        let list = self.get(path).await.expect(200);
        items(&list)
            .iter()
            .map(|o| {
                o["metadata"]["name"]
                    .as_str()
                    .unwrap_or_default()
                    .to_string()
            })
            .collect()
    }

    /// Starts a watch (`path` must carry `watch=1`); panics unless 200.
    pub async fn watch(&self, path: &str) -> Watch {
        match self.try_watch(path).await {
            Ok(w) => w,
            Err(r) => panic!("watch {path}: {}: {}", r.status, r.text()),
        }
    }

    /// Starts a watch: the stream on 200, else the whole error reply.
    pub async fn try_watch(&self, path: &str) -> Result<Watch, Reply> {
        let response = self.start(Method::GET, path, &[], None).await;
        if response.status() != StatusCode::OK {
            let status = response.status();
            let headers = response.headers().clone();
            let body = response
                .bytes()
                .await
                .map(|b| b.to_vec())
                .unwrap_or_default();
            return Err(Reply {
                status,
                headers,
                body,
            });
        }
        Ok(Watch {
            path: path.to_string(),
            response,
            buf: Vec::new(),
        })
    }
}

/// The `items` of a list.
pub fn items(list: &Value) -> Vec<Value> {
    list["items"].as_array().cloned().unwrap_or_default()
}

/// A streaming watch: newline-separated `WatchEvent`s.
pub struct Watch {
    path: String,
    response: reqwest::Response,
    buf: Vec<u8>,
}

/// What reading a watch produced.
#[derive(Debug)]
pub enum Next {
    /// One `{"type", "object"}` event.
    Event(Value),
    /// The server ended the stream cleanly.
    End,
    /// Nothing arrived in time.
    Timeout,
}

impl Watch {
    /// The next event, the end of the stream, or a timeout after `wait`.
    /// A broken stream (reset, bad chunk, bad JSON) panics.
    pub async fn next_within(&mut self, wait: Duration) -> Next {
        let deadline = tokio::time::Instant::now() + wait;
        loop {
            if let Some(pos) = self.buf.iter().position(|b| *b == b'\n') {
                let line: Vec<u8> = self.buf.drain(..=pos).collect();
                let text = String::from_utf8_lossy(&line);
                if text.trim().is_empty() {
                    continue;
                }
                let event: Value = serde_json::from_str(text.trim()).unwrap_or_else(|e| {
                    panic!("watch {}: a line that is not JSON ({e}): {text}", self.path)
                });
                return Next::Event(event);
            }
            let chunk = match tokio::time::timeout_at(deadline, self.response.chunk()).await {
                Err(_) => return Next::Timeout,
                Ok(Ok(Some(c))) => c,
                Ok(Ok(None)) => {
                    assert!(
                        self.buf.iter().all(u8::is_ascii_whitespace),
                        "watch {}: stream ended inside an event: {}",
                        self.path,
                        String::from_utf8_lossy(&self.buf)
                    );
                    return Next::End;
                }
                Ok(Err(e)) => panic!("watch {}: the stream broke: {e:?}", self.path),
            };
            self.buf.extend_from_slice(&chunk);
        }
    }

    /// The next event; panics if the stream ends or nothing comes within
    /// `wait`.
    pub async fn event_within(&mut self, wait: Duration) -> Value {
        match self.next_within(wait).await {
            Next::Event(e) => e,
            other => panic!("watch {}: expected an event, got {other:?}", self.path),
        }
    }

    /// The next event within 10 s.
    pub async fn event(&mut self) -> Value {
        self.event_within(Duration::from_secs(10)).await
    }

    /// The next event that is not a BOOKMARK, within 10 s.
    pub async fn change(&mut self) -> Value {
        loop {
            let e = self.event().await;
            if e["type"] != "BOOKMARK" {
                return e;
            }
        }
    }

    /// Asserts the stream ends cleanly within `wait`, with no further
    /// non-BOOKMARK event.
    pub async fn expect_end(&mut self, wait: Duration) {
        loop {
            match self.next_within(wait).await {
                Next::End => return,
                Next::Event(e) if e["type"] == "BOOKMARK" => {}
                other => panic!(
                    "watch {}: expected the end of the stream, got {other:?}",
                    self.path
                ),
            }
        }
    }

    /// Asserts no non-BOOKMARK event arrives within `wait` (and the stream
    /// stays open).
    pub async fn expect_quiet(&mut self, wait: Duration) {
        let deadline = tokio::time::Instant::now() + wait;
        loop {
            let left = deadline.saturating_duration_since(tokio::time::Instant::now());
            match self.next_within(left).await {
                Next::Timeout => return,
                Next::Event(e) if e["type"] == "BOOKMARK" => {}
                other => panic!("watch {}: expected silence, got {other:?}", self.path),
            }
        }
    }
}

/// `(type, metadata.name)` of a watch event.
pub fn event_name(e: &Value) -> (String, String) {
    (
        e["type"].as_str().unwrap_or_default().to_string(),
        e["object"]["metadata"]["name"]
            .as_str()
            .unwrap_or_default()
            .to_string(),
    )
}

/// The Helm binaries to test with: `$SKEIN_HELM` (colon-separated paths)
/// if set, else Helm 4.1 and 3.17 from `<repo>/.tools/`.
///
/// Panics, naming the missing tool and how to install it, if any is absent.
pub fn helm_binaries() -> Vec<PathBuf> {
    let paths: Vec<PathBuf> = match std::env::var("SKEIN_HELM") {
        Ok(list) if !list.trim().is_empty() => std::env::split_paths(&list).collect(),
        _ => {
            let tools = crate::repo_root().join(".tools");
            vec![
                tools.join("helm-4.1").join("helm"),
                tools.join("helm-3.17").join("helm"),
            ]
        }
    };
    for p in &paths {
        assert!(
            p.is_file(),
            "helm {} is missing: run `bash hack/tools.sh` to install the pinned kubectl and \
             helm into .tools/ (or set SKEIN_HELM to colon-separated helm paths)",
            p.display()
        );
    }
    paths
}

/// Runs `helm --kubeconfig <admin.kubeconfig> <args>` with Helm's cache,
/// config and data directories inside the server's data dir.
pub fn helm(server: &Server, helm: &std::path::Path, args: &[&str]) -> std::process::Output {
    helm_with(server, helm, &server.kubeconfig(), args)
}

/// [`helm`] with another kubeconfig (for example one whose server is the
/// aggregated prefix path).
pub fn helm_with(
    server: &Server,
    helm: &std::path::Path,
    kubeconfig: &std::path::Path,
    args: &[&str],
) -> std::process::Output {
    let home = server.data_dir.join("helm-home");
    std::process::Command::new(helm)
        .arg("--kubeconfig")
        .arg(kubeconfig)
        .args(args)
        .env_remove("KUBECONFIG")
        .env_remove("HELM_NAMESPACE")
        .env_remove("HELM_KUBECONTEXT")
        .env("HELM_CACHE_HOME", home.join("cache"))
        .env("HELM_CONFIG_HOME", home.join("config"))
        .env("HELM_DATA_HOME", home.join("data"))
        .stdin(std::process::Stdio::null())
        .output()
        .unwrap_or_else(|e| panic!("cannot run {}: {e}", helm.display()))
}

/// The Python interpreter that has the `kubernetes` client package:
/// `$SKEIN_PYTHON` if set, else the virtualenv `hack/test.sh` creates in
/// `<repo>/.tools/python/`.
///
/// Panics with instructions if it is missing or cannot `import kubernetes`.
pub fn python() -> PathBuf {
    let path = match std::env::var_os("SKEIN_PYTHON") {
        Some(p) if !p.is_empty() => PathBuf::from(p),
        _ => crate::repo_root()
            .join(".tools")
            .join("python")
            .join("bin")
            .join("python3"),
    };
    let how = "run `bash hack/test.sh` (it creates .tools/python with the pinned `kubernetes` \
               package), or point SKEIN_PYTHON at a python3 that can `import kubernetes`";
    assert!(
        path.is_file(),
        "python {} is missing: {how}",
        path.display()
    );
    let out = std::process::Command::new(&path)
        .args(["-c", "import kubernetes; print(kubernetes.__version__)"])
        .output()
        .unwrap_or_else(|e| panic!("cannot run {}: {e}; {how}", path.display()));
    assert!(
        out.status.success(),
        "{} cannot `import kubernetes`: {}\n{how}",
        path.display(),
        String::from_utf8_lossy(&out.stderr)
    );
    path
}

/// The directory of the Python test scripts (`<repo>/test/python`).
pub fn python_scripts() -> PathBuf {
    crate::repo_root().join("test").join("python")
}
