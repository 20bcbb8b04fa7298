//! The bare server of `bench api`: axum behind exactly Skein's TLS and
//! connection layer (`skein_apiserver::http::tls`: the same rustls config,
//! certificates, client-certificate verification, ALPN h2/http1.1 and hyper
//! accept loop). It answers:
//! - `GET` [`PATH`]: a fixed 1 KiB body;
//! - `POST` [`STORE_PATH`]`/<name>`: stores the request body with the
//!   storage layer's `Store::create` under `/bare/<name>` (an embedded store
//!   in its own temp dir, or the etcd backend on the run's etcd) and answers
//!   201 with the body: the least any create endpoint must do, so its rate
//!   is the ceiling of Skein's CREATE on this machine;
//! - `GET` [`LIST_PATH`] (with `--list-body`): that file's bytes, as read
//!   once at start (a LIST response pre-encoded: the ceiling of a LIST).
//!
//! It runs as its own process (`bench bare-server`, started by
//! [`BareServer::start`]) so that, like `skein serve`, it has its own Tokio
//! runtime and is measured from outside.

use std::io::{BufRead as _, BufReader, Read as _};
use std::net::{IpAddr, Ipv4Addr, SocketAddr};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::Duration;

use anyhow::Context as _;
use axum::Router;
use axum::extract::Path as UrlPath;
use axum::http::StatusCode;
use axum::routing::{get, post};
use bytes::Bytes;
use skein_apiserver::http::tls;
use skein_apiserver::pki::{Pki, serving_names};
use skein_storage::Store;
use skein_storage::embedded::{EmbeddedOptions, EmbeddedStore};
use skein_storage::etcd::{EtcdOptions, EtcdStore};

/// The path the bare server answers GETs on.
pub const PATH: &str = "/bare";
/// The path it answers with the `--list-body` file.
pub const LIST_PATH: &str = "/bare-list";
/// The path prefix it stores POSTed bodies under.
pub const STORE_PATH: &str = "/bare-store";
/// Its body's size.
pub const BODY_BYTES: usize = 1024;
/// The stdout line prefix that announces the bound address (as `skein serve`).
const SERVING_LINE: &str = "Serving securely on ";

/// Options of the hidden `bench bare-server` subcommand.
#[derive(clap::Args)]
pub struct Args {
    /// A Skein PKI directory (`<data-dir>/pki`); its CA and serving
    /// certificate are reused, so a client of that Skein trusts this server.
    #[arg(long)]
    pki_dir: PathBuf,
    /// Store POSTed bodies in the etcd backend on this endpoint instead of
    /// an embedded store in a temp dir.
    #[arg(long)]
    etcd: Option<String>,
    /// Answer `GET` [`LIST_PATH`] with this file's bytes.
    #[arg(long)]
    list_body: Option<PathBuf>,
}

/// The fixed body: a JSON object of exactly [`BODY_BYTES`] bytes.
fn body() -> Bytes {
    let head = r#"{"kind":"Bare","data":""#;
    let tail = r#""}"#;
    let pad = BODY_BYTES - head.len() - tail.len();
    Bytes::from(format!("{head}{}{tail}", "x".repeat(pad)))
}

/// `bench bare-server`: serves until stdin closes (the parent exits or
/// drops its [`BareServer`]).
pub async fn serve(args: Args) -> anyhow::Result<()> {
    let pki = Pki::load_or_create(
        &args.pki_dir,
        &serving_names(IpAddr::V4(Ipv4Addr::LOCALHOST)),
    )
    .context("loading the PKI")?;
    let config = tls::server_config(
        &pki,
        &skein_apiserver::http::tls_policy::TlsPolicy::default(),
    )
    .context("TLS config")?;
    let listener = tokio::net::TcpListener::bind((Ipv4Addr::LOCALHOST, 0)).await?;
    println!("{SERVING_LINE}{}", listener.local_addr()?);
    let body = body();
    let list_body = match &args.list_body {
        Some(path) => {
            Bytes::from(std::fs::read(path).with_context(|| format!("reading {}", path.display()))?)
        }
        None => Bytes::new(),
    };
    let store_dir = tempfile::tempdir().context("temp dir for the bare store")?;
    // The same settings as the storage column of `bench api`.
    let store: std::sync::Arc<dyn Store> = match args.etcd {
        None => EmbeddedStore::open(
            &store_dir.path().join("bare.redb"),
            EmbeddedOptions {
                retain_history: None,
                ..EmbeddedOptions::default()
            },
        )
        .await
        .context("embedded store")?,
        Some(endpoint) => EtcdStore::connect(EtcdOptions {
            endpoints: vec![endpoint],
            retain_history: None,
            ..EtcdOptions::default()
        })
        .await
        .context("etcd backend")?,
    };
    let app = Router::new()
        .route(
            PATH,
            get(move || {
                let body = body.clone();
                async move { ([("content-type", "application/json")], body) }
            }),
        )
        .route(
            LIST_PATH,
            get(move || {
                let body = list_body.clone();
                async move { ([("content-type", "application/json")], body) }
            }),
        )
        .route(
            &format!("{STORE_PATH}/{{name}}"),
            post(move |UrlPath(name): UrlPath<String>, body: Bytes| {
                let store = store.clone();
                async move {
                    match store.create(&format!("/bare/{name}"), &body).await {
                        Ok(_) => (
                            StatusCode::CREATED,
                            [("content-type", "application/json")],
                            body,
                        ),
                        Err(e) => (
                            StatusCode::INTERNAL_SERVER_ERROR,
                            [("content-type", "text/plain")],
                            Bytes::from(e.to_string()),
                        ),
                    }
                }
            }),
        );
    let stdin_closed = async {
        let _ = tokio::task::spawn_blocking(|| {
            let mut sink = Vec::new();
            let _ = std::io::stdin().read_to_end(&mut sink);
        })
        .await;
    };
    tls::serve(listener, config, app, stdin_closed).await;
    Ok(())
}

/// A running `bench bare-server` child. Killed on drop.
pub struct BareServer {
    child: Child,
    /// Where it listens.
    pub addr: SocketAddr,
}

impl BareServer {
    /// Starts this program's `bare-server` subcommand on the PKI in
    /// `pki_dir` and waits for its address.
    ///
    /// `etcd`: the endpoint of the etcd its store uses (else embedded).
    pub fn start(pki_dir: &Path, etcd: Option<&str>) -> anyhow::Result<BareServer> {
        Self::start_with(pki_dir, etcd, None)
    }

    /// [`BareServer::start`], also answering [`LIST_PATH`] with the bytes
    /// of the file `list_body`.
    pub fn start_with(
        pki_dir: &Path,
        etcd: Option<&str>,
        list_body: Option<&Path>,
    ) -> anyhow::Result<BareServer> {
        let exe = std::env::current_exe().context("the bench binary's path")?;
        let mut command = Command::new(exe);
        command.arg("bare-server").arg("--pki-dir").arg(pki_dir);
        if let Some(endpoint) = etcd {
            command.arg("--etcd").arg(endpoint);
        }
        if let Some(path) = list_body {
            command.arg("--list-body").arg(path);
        }
        let mut child = command
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .context("spawning the bare server")?;
        let stdout = child.stdout.take().context("piped stdout")?;
        let (tx, rx) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines().map_while(Result::ok) {
                if let Some(addr) = line.strip_prefix(SERVING_LINE) {
                    let _ = tx.send(addr.trim().to_owned());
                }
            }
        });
        let addr = match rx.recv_timeout(Duration::from_secs(20)) {
            Ok(addr) => addr,
            Err(_) => {
                let _ = child.kill();
                let _ = child.wait();
                anyhow::bail!("the bare server printed no address within 20 s");
            }
        };
        let addr = addr.parse().context("the bare server's address")?;
        Ok(BareServer { child, addr })
    }
}

impl Drop for BareServer {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn body_is_one_kib_of_json() {
        let body = super::body();
        assert_eq!(body.len(), super::BODY_BYTES);
        let v: serde_json::Value = serde_json::from_slice(&body).unwrap();
        assert_eq!(v["kind"], "Bare");
    }
}
