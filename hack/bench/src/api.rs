//! `bench api`: GET, LIST (1,000 objects) and CREATE of 1 KiB Secrets over
//! HTTPS against a real `skein serve`, side by side with a bare axum/rustls
//! server answering a fixed 1 KiB body ([`crate::bare`]) and with the
//! storage layer's own create rate, all in one run; ratios against the
//! targets of the native-API issue. Beside them, with the same client and
//! concurrency, GET and CREATE of a 1 KiB custom resource whose CRD has ten
//! CEL rules and defaults ([`crate::custom`]), as ratios to the Secret
//! cells (the CRD issue's targets); and GET and CREATE of Secrets as a
//! user authorized by RBAC through a RoleBinding among 200, audited at
//! Metadata level, as ratios to the same requests by the admin (issue 14's
//! targets; the audit policy records only that user).
//!
//! Every response is checked: status, the name of the Secret got or
//! created, the number of items in each LIST, the bare body's size. After
//! the run, the Secrets in the create namespace are counted on the server
//! and compared with the creates the client saw acknowledged (and the
//! custom resources likewise).

use std::fmt::Write as _;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use anyhow::Context as _;
use bytes::Bytes;
use futures::StreamExt as _;
use http::Method;
use serde::Deserialize;
use serde::de::IgnoredAny;
use skein_storage::Store;
use skein_storage::embedded::{EmbeddedOptions, EmbeddedStore};
use skein_storage::etcd::{EtcdOptions, EtcdStore};

use crate::bare::{self, BareServer};
use crate::client::{Https, Protocol, connections_to, version_name};
use crate::cluster::{Skein, skein_facts};
use crate::custom;
use crate::measure::{Cell, LoadSnapshot, run_cell};
use crate::report::{
    error_lines, facts_table, lat, loadavg, machine_facts, noise_line, ops, verdict,
};
use crate::storage::{Target, creates};

/// Options of `bench api`.
#[derive(clap::Args)]
pub struct Args {
    /// Seconds each measurement runs (split into `--rounds`).
    #[arg(long, default_value_t = 6.0)]
    seconds: f64,
    /// Each measurement's time is split into this many rounds, run in
    /// rotation across the measurements, so that a change in background
    /// load hits all of them alike.
    #[arg(long, default_value_t = 3)]
    rounds: u32,
    /// Seconds of unmeasured warm-up per measurement (connections, caches).
    #[arg(long, default_value_t = 1.0)]
    warmup: f64,
    /// Tasks issuing requests in a loop.
    #[arg(long, default_value_t = 64)]
    concurrency: usize,
    /// Secrets in the namespace that LIST reads (GET reads them too).
    #[arg(long, default_value_t = 1000)]
    list_size: usize,
    /// HTTP/2 (one multiplexed connection, as client-go) or HTTP/1.1 (a
    /// keep-alive pool).
    #[arg(long, value_enum, default_value_t = Protocol::H2)]
    protocol: Protocol,
    /// Run Skein on a real etcd (started for the run) instead of its
    /// embedded store; the storage column is then the etcd backend.
    #[arg(long)]
    etcd: bool,
    /// Run only these measurements (repeatable; all by default). A ratio
    /// whose two measurements did not both run is reported as not measured.
    /// For profiling one cell, not for results.
    #[arg(long, value_enum)]
    only: Vec<Measure>,
    /// A flag added to the `skein serve` under test (repeatable), for an
    /// A/B of one build, e.g. `--skein-flag=--enable-priority-and-fairness=false`.
    #[arg(long = "skein-flag", allow_hyphen_values = true)]
    skein_flags: Vec<String>,
}

/// Targets (docs/benchmarks.md): GET ≥ 0.3× the bare server's request rate,
/// CREATE ≥ 0.7× the storage layer's create rate.
const GET_VS_BARE_TARGET: f64 = 0.3;
const CREATE_VS_STORAGE_TARGET: f64 = 0.7;
/// Targets of the CRD issue: custom resource CREATE ≥ 0.8× Secret CREATE,
/// GET ≥ 0.9× Secret GET.
const CR_CREATE_VS_SECRET_TARGET: f64 = 0.8;
const CR_GET_VS_SECRET_TARGET: f64 = 0.9;
/// Targets of issue 14: with RBAC (a RoleBinding among 200, 50 extra
/// ClusterRoles) and audit at Metadata, GET ≥ 0.8× and CREATE ≥ 0.85× of
/// the same requests by `system:masters` with no audit.
const RBAC_GET_TARGET: f64 = 0.8;
const RBAC_CREATE_TARGET: f64 = 0.85;
/// The user of the RBAC cells, its token, and the RBAC objects around it.
const RBAC_USER: &str = "bench-user";
const RBAC_TOKEN: &str = "bench-rbac-token";
const NOISE_ROLE_BINDINGS: usize = 200;
const NOISE_CLUSTER_ROLES: usize = 50;
/// Audit only the RBAC user's requests, at Metadata, as a typical
/// production policy does (no RequestReceived stage).
const AUDIT_POLICY: &str = "apiVersion: audit.k8s.io/v1
kind: Policy
omitStages: [RequestReceived]
rules:
- level: Metadata
  users: [bench-user]
- level: None
";

/// Issue 14: GET through a host's aggregator ≥ 0.5× direct GET.
const HOST_GET_TARGET: f64 = 0.5;
/// The federated context's path prefix on a host.
const HOST_PREFIX: &str = "/apis/federation.skein.io/v1alpha1/federations/default/proxy";

/// How long the benchmark CRD may take to be served.
const CRD_SETTLE: Duration = Duration::from_secs(60);
/// The namespace LIST and GET read, and the one CREATE writes to.
const LIST_NS: &str = "bench-list";
const CREATE_NS: &str = "bench-create";
/// Size of the Secrets' JSON as sent (the payload is padded to it).
const SECRET_BYTES: usize = 1024;
/// Storage values of the storage column (as in `bench storage`).
const STORAGE_VALUE_BYTES: usize = 1024;

/// A Secret named `name` in `namespace` whose JSON is [`SECRET_BYTES`] long
/// when the name is 12 characters (longer names make it a little longer).
fn secret(namespace: &str, name: &str) -> Bytes {
    let encode = |payload: &str| {
        serde_json::json!({
            "apiVersion": "v1",
            "kind": "Secret",
            "metadata": {"name": name, "namespace": namespace, "labels": {"app": "bench"}},
            "type": "Opaque",
            "data": {"payload": payload},
        })
        .to_string()
    };
    let bare = encode("").len() + name.len().max(12) - name.len();
    // Base64 text in multiples of 4 characters, then pad to the exact size
    // with a second key if needed: keep it simple, round down.
    let b64_len = SECRET_BYTES.saturating_sub(bare) / 4 * 4;
    let payload = "QUJD".repeat(b64_len / 4); // "ABC" × n, valid base64
    Bytes::from(encode(&payload))
}

/// What GET checks in a Secret.
#[derive(Deserialize)]
struct Named {
    metadata: Meta,
}
#[derive(Deserialize)]
struct Meta {
    name: String,
}
/// What LIST checks: the number of items (skipped over, not built).
#[derive(Deserialize)]
struct Items {
    items: Vec<IgnoredAny>,
    metadata: ListMeta,
}
#[derive(Deserialize)]
struct ListMeta {
    #[serde(rename = "continue", default)]
    continue_: Option<String>,
}

/// The measurements, in the order each round runs them.
#[derive(Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
enum Measure {
    BareGet,
    Get,
    CrGet,
    List,
    BareCreate,
    Create,
    CrCreate,
    StorageCreate,
    RbacGet,
    RbacCreate,
    HostGet,
}

const MEASURES: [Measure; 11] = [
    Measure::BareGet,
    Measure::Get,
    Measure::RbacGet,
    Measure::HostGet,
    Measure::CrGet,
    Measure::List,
    Measure::BareCreate,
    Measure::Create,
    Measure::RbacCreate,
    Measure::CrCreate,
    Measure::StorageCreate,
];

impl Measure {
    fn label(self, storage: &str) -> String {
        match self {
            Measure::BareGet => "bare axum + rustls: GET fixed 1 KiB body".into(),
            Measure::Get => "skein: GET Secret".into(),
            Measure::List => "skein: LIST Secrets".into(),
            Measure::BareCreate => {
                format!("bare axum + rustls + storage: POST 1 KiB → Store::create ({storage})")
            }
            Measure::Create => "skein: CREATE Secret (JSON)".into(),
            Measure::CrGet => "skein: GET custom resource (CRD: 10 CEL rules, defaults)".into(),
            Measure::CrCreate => {
                "skein: CREATE custom resource (JSON; 10 CEL rules, defaults)".into()
            }
            Measure::StorageCreate => format!("storage layer: create 1 KiB ({storage})"),
            Measure::RbacGet => {
                "skein: GET Secret as a user bound by a RoleBinding (RBAC; audit at Metadata)"
                    .into()
            }
            Measure::RbacCreate => {
                "skein: CREATE Secret as a user bound by a RoleBinding (RBAC; audit at Metadata)"
                    .into()
            }
            Measure::HostGet => {
                "skein through a host: GET Secret by the prefix path on a host Skein's aggregator"
                    .into()
            }
        }
    }
}

/// Everything a measurement needs.
#[derive(Clone)]
struct Systems {
    skein: Https,
    /// The same server as [`RBAC_USER`] (bearer token): authorized by RBAC
    /// through a RoleBinding, audited at Metadata level.
    rbac: Https,
    /// The host Skein (member role) whose aggregator proxies to this one:
    /// its admin, through the prefix path.
    host: Https,
    bare: Https,
    store: Arc<dyn Store>,
    list_size: usize,
    /// Creates the client saw acknowledged with 201 (warm-up included).
    created: Arc<AtomicU64>,
    /// The same for custom resources.
    cr_created: Arc<AtomicU64>,
}

impl Systems {
    /// Runs `what` at `concurrency` for `secs`; `run` makes names unique.
    async fn cell(&self, what: Measure, run: &str, concurrency: usize, secs: Duration) -> Cell {
        let this = self.clone();
        let run = run.to_owned();
        match what {
            Measure::StorageCreate => {
                let value: Arc<[u8]> = vec![b'v'; STORAGE_VALUE_BYTES].into();
                creates(&Target::Store(this.store), &run, concurrency, secs, &value).await
            }
            _ => {
                run_cell(concurrency, secs, move |task, i| {
                    let this = this.clone();
                    let run = run.clone();
                    async move { this.op(what, &run, task, i).await }
                })
                .await
            }
        }
    }

    /// One request of `what`, checked.
    async fn op(&self, what: Measure, run: &str, task: usize, i: u64) -> anyhow::Result<()> {
        match what {
            Measure::BareGet => {
                let body = self.bare.expect(200, Method::GET, bare::PATH, None).await?;
                anyhow::ensure!(
                    body.len() == bare::BODY_BYTES,
                    "bare GET: {} bytes, expected {}",
                    body.len(),
                    bare::BODY_BYTES
                );
            }
            Measure::Get | Measure::RbacGet | Measure::HostGet => {
                let (client, prefix) = match what {
                    Measure::Get => (&self.skein, ""),
                    Measure::RbacGet => (&self.rbac, ""),
                    _ => (&self.host, HOST_PREFIX),
                };
                let n = (task as u64 * 7919 + i) % self.list_size as u64;
                let name = format!("s-{n:05}");
                let path = format!("{prefix}/api/v1/namespaces/{LIST_NS}/secrets/{name}");
                let body = client.expect(200, Method::GET, &path, None).await?;
                let got: Named = serde_json::from_slice(&body).context("GET: not a Secret")?;
                anyhow::ensure!(
                    got.metadata.name == name,
                    "GET {name}: got {}",
                    got.metadata.name
                );
            }
            Measure::List => {
                let path = format!("/api/v1/namespaces/{LIST_NS}/secrets");
                let body = self.skein.expect(200, Method::GET, &path, None).await?;
                let list: Items = serde_json::from_slice(&body).context("LIST: not a list")?;
                anyhow::ensure!(
                    list.items.len() == self.list_size,
                    "LIST: {} items, expected {}",
                    list.items.len(),
                    self.list_size
                );
            }
            Measure::BareCreate => {
                let name = format!("{run}-{task}-{i}");
                let path = format!("{}/{name}", bare::STORE_PATH);
                let body = secret(CREATE_NS, &name);
                let sent = body.len();
                let reply = self
                    .bare
                    .expect(201, Method::POST, &path, Some(("application/json", body)))
                    .await?;
                anyhow::ensure!(
                    reply.len() == sent,
                    "bare POST {name}: {} bytes back, sent {sent}",
                    reply.len()
                );
            }
            Measure::Create | Measure::RbacCreate => {
                let (client, tag) = if what == Measure::Create {
                    (&self.skein, "")
                } else {
                    (&self.rbac, "u")
                };
                let name = format!("{run}{tag}-{task}-{i}");
                let path = format!("/api/v1/namespaces/{CREATE_NS}/secrets");
                let body = secret(CREATE_NS, &name);
                let reply = client
                    .expect(201, Method::POST, &path, Some(("application/json", body)))
                    .await?;
                self.created.fetch_add(1, Ordering::Relaxed);
                let got: Named = serde_json::from_slice(&reply).context("CREATE: not a Secret")?;
                anyhow::ensure!(
                    got.metadata.name == name,
                    "CREATE {name}: got {}",
                    got.metadata.name
                );
            }
            Measure::CrGet => {
                let n = (task as u64 * 7919 + i) % self.list_size as u64;
                let name = format!("c-{n:05}");
                let path = format!("{}/{name}", custom::collection(LIST_NS));
                let body = self.skein.expect(200, Method::GET, &path, None).await?;
                let got: Named =
                    serde_json::from_slice(&body).context("GET: not a custom resource")?;
                anyhow::ensure!(
                    got.metadata.name == name,
                    "GET {name}: got {}",
                    got.metadata.name
                );
            }
            Measure::CrCreate => {
                let name = format!("{run}-{task}-{i}");
                let body = custom::object(CREATE_NS, &name);
                let reply = self
                    .skein
                    .expect(
                        201,
                        Method::POST,
                        &custom::collection(CREATE_NS),
                        Some(("application/json", body)),
                    )
                    .await?;
                self.cr_created.fetch_add(1, Ordering::Relaxed);
                let got: Named =
                    serde_json::from_slice(&reply).context("CREATE: not a custom resource")?;
                anyhow::ensure!(
                    got.metadata.name == name,
                    "CREATE {name}: got {}",
                    got.metadata.name
                );
            }
            Measure::StorageCreate => {
                anyhow::bail!("storage creates run through crate::storage")
            }
        }
        Ok(())
    }
}

/// Creates a namespace (201).
async fn create_namespace(client: &Https, name: &str) -> anyhow::Result<()> {
    let body =
        serde_json::json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": name}});
    client
        .expect(
            201,
            Method::POST,
            "/api/v1/namespaces",
            Some(("application/json", Bytes::from(body.to_string()))),
        )
        .await?;
    Ok(())
}

/// The number of Secrets in `namespace`, by paginated LIST.
async fn count_secrets(client: &Https, namespace: &str) -> anyhow::Result<usize> {
    count(client, &format!("/api/v1/namespaces/{namespace}/secrets")).await
}

/// The number of objects in `collection`, by paginated LIST.
async fn count(client: &Https, collection: &str) -> anyhow::Result<usize> {
    let mut total = 0;
    let mut token: Option<String> = None;
    loop {
        let mut path = format!("{collection}?limit=2000");
        if let Some(t) = &token {
            path.push_str("&continue=");
            path.push_str(&form_escape(t));
        }
        let body = client.expect(200, Method::GET, &path, None).await?;
        let page: Items = serde_json::from_slice(&body).context("not a list")?;
        total += page.items.len();
        match page.metadata.continue_ {
            Some(t) if !t.is_empty() => token = Some(t),
            _ => return Ok(total),
        }
    }
}

/// Creates the benchmark CRD and waits until its resource is served.
async fn install_crd(client: &Https) -> anyhow::Result<()> {
    let body = Bytes::from(custom::crd().to_string());
    client
        .expect(
            201,
            Method::POST,
            "/apis/apiextensions.k8s.io/v1/customresourcedefinitions",
            Some(("application/json", body)),
        )
        .await
        .context("creating the benchmark CRD")?;
    let started = Instant::now();
    loop {
        let reply = client
            .send(Method::GET, &custom::collection(LIST_NS), None)
            .await?;
        if reply.status == 200 {
            return Ok(());
        }
        anyhow::ensure!(
            started.elapsed() < CRD_SETTLE,
            "the benchmark CRD is not served after {CRD_SETTLE:?}: {} {}",
            reply.status,
            crate::client::excerpt(&reply.body)
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

/// Percent-encodes a query value (continue tokens are base64).
fn form_escape(s: &str) -> String {
    s.bytes()
        .map(|b| match b {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'_' | b'.' | b'~' => {
                (b as char).to_string()
            }
            _ => format!("%{b:02X}"),
        })
        .collect()
}

/// Runs the whole benchmark and prints the report.
pub async fn run(args: Args) -> anyhow::Result<()> {
    let started = Instant::now();
    let load_start = loadavg();
    let c = args.concurrency;
    anyhow::ensure!(
        c > 0 && args.list_size > 0,
        "concurrency and list size must be > 0"
    );

    eprintln!(
        "bench api: starting skein{}…",
        if args.etcd { " on etcd" } else { "" }
    );
    // The RBAC cells' user (a static token) and the audit policy that
    // records only that user's requests.
    let files = tempfile::tempdir().context("temp dir for the token and audit files")?;
    let tokens = files.path().join("tokens.csv");
    std::fs::write(
        &tokens,
        format!("{RBAC_TOKEN},{RBAC_USER},{RBAC_USER}-uid,\"bench\"\n"),
    )
    .context("writing the token file")?;
    let policy = files.path().join("audit-policy.yaml");
    std::fs::write(&policy, AUDIT_POLICY).context("writing the audit policy")?;
    let audit_log = files.path().join("audit.log");
    // A host Skein (member role) whose aggregator will proxy to the one
    // under test, which trusts the host's front-proxy certificate.
    eprintln!("bench api: starting the host skein…");
    let host = Skein::start_with(false, &["--role=member".to_owned()]).await?;
    let skein = Skein::start_with(
        args.etcd,
        &[
            format!("--token-auth-file={}", tokens.display()),
            format!("--audit-policy-file={}", policy.display()),
            format!("--audit-log-path={}", audit_log.display()),
            format!(
                "--authentication-kubeconfig={}",
                host.server.kubeconfig().display()
            ),
        ]
        .into_iter()
        .chain(args.skein_flags.iter().cloned())
        .collect::<Vec<_>>(),
    )
    .await?;
    let host_client = host.client(args.protocol)?;
    register_on_host(&host_client, skein.server.addr.port()).await?;
    let etcd_endpoint = skein.etcd.as_ref().map(|e| e.endpoint());
    let bare_server = BareServer::start(&skein.pki_dir(), etcd_endpoint.as_deref())?;
    let storage_dir = tempfile::tempdir().context("temp dir for the storage column")?;
    let (store, storage_name): (Arc<dyn Store>, &str) = match &skein.etcd {
        None => (
            EmbeddedStore::open(
                &storage_dir.path().join("skein.redb"),
                EmbeddedOptions {
                    retain_history: None,
                    ..EmbeddedOptions::default()
                },
            )
            .await
            .context("embedded store")?,
            "embedded",
        ),
        Some(etcd) => (
            EtcdStore::connect(EtcdOptions {
                endpoints: vec![etcd.endpoint()],
                retain_history: None,
                ..EtcdOptions::default()
            })
            .await
            .context("etcd backend")?,
            "etcd backend",
        ),
    };
    let rbac_credentials = skein.credentials.bearer(RBAC_TOKEN);
    let systems = Systems {
        skein: skein.client(args.protocol)?,
        rbac: Https::new(skein.server.addr, &rbac_credentials, args.protocol)?,
        host: host_client,
        bare: Https::new(bare_server.addr, &skein.credentials, args.protocol)?,
        store: store.clone(),
        list_size: args.list_size,
        created: Arc::new(AtomicU64::new(0)),
        cr_created: Arc::new(AtomicU64::new(0)),
    };

    // The objects LIST and GET read.
    eprintln!("  creating {} Secrets in {LIST_NS}…", args.list_size);
    create_namespace(&systems.skein, LIST_NS).await?;
    create_namespace(&systems.skein, CREATE_NS).await?;
    let results: Vec<anyhow::Result<Bytes>> = futures::stream::iter(0..args.list_size)
        .map(|n| {
            let client = systems.skein.clone();
            async move {
                let name = format!("s-{n:05}");
                let path = format!("/api/v1/namespaces/{LIST_NS}/secrets");
                client
                    .expect(
                        201,
                        Method::POST,
                        &path,
                        Some(("application/json", secret(LIST_NS, &name))),
                    )
                    .await
            }
        })
        .buffer_unordered(16)
        .collect()
        .await;
    for r in results {
        r.context("populating the LIST namespace")?;
    }
    eprintln!(
        "  creating the benchmark CRD and {} custom resources in {LIST_NS}…",
        args.list_size
    );
    install_crd(&systems.skein).await?;
    let results: Vec<anyhow::Result<Bytes>> = futures::stream::iter(0..args.list_size)
        .map(|n| {
            let client = systems.skein.clone();
            async move {
                let name = format!("c-{n:05}");
                client
                    .expect(
                        201,
                        Method::POST,
                        &custom::collection(LIST_NS),
                        Some(("application/json", custom::object(LIST_NS, &name))),
                    )
                    .await
            }
        })
        .buffer_unordered(16)
        .collect()
        .await;
    for r in results {
        r.context("populating the custom resources")?;
    }

    eprintln!(
        "  RBAC: {NOISE_CLUSTER_ROLES} ClusterRoles, {NOISE_ROLE_BINDINGS} RoleBindings, and {RBAC_USER}'s…"
    );
    rbac_objects(&systems.skein).await?;

    // Sizes and protocols, once.
    let get_reply = systems
        .skein
        .send(
            Method::GET,
            &format!("/api/v1/namespaces/{LIST_NS}/secrets/s-00000"),
            None,
        )
        .await?;
    let list_reply = systems
        .skein
        .send(
            Method::GET,
            &format!("/api/v1/namespaces/{LIST_NS}/secrets"),
            None,
        )
        .await?;
    let cr_reply = systems
        .skein
        .send(
            Method::GET,
            &format!("{}/c-00000", custom::collection(LIST_NS)),
            None,
        )
        .await?;
    let bare_reply = systems.bare.send(Method::GET, bare::PATH, None).await?;
    for (what, reply) in [
        ("GET", &get_reply),
        ("GET custom resource", &cr_reply),
        ("LIST", &list_reply),
        ("bare GET", &bare_reply),
    ] {
        anyhow::ensure!(
            reply.status == 200,
            "{what}: {} {}",
            reply.status,
            crate::client::excerpt(&reply.body)
        );
    }
    let sent_bytes = secret(CREATE_NS, "c-r0-00-0000").len();

    // Warm-up: unmeasured, and any error stops the run here.
    let warmup = Duration::from_secs_f64(args.warmup);
    let mut connections = Vec::new();
    let selected = |m: &Measure| args.only.is_empty() || args.only.contains(m);
    for what in MEASURES.into_iter().filter(selected) {
        eprintln!("  warm-up: {}", what.label(storage_name));
        let cell = systems.cell(what, "w", c, warmup).await;
        if let Some(e) = cell.first_error {
            anyhow::bail!(
                "warm-up of {} failed ({} errors): {e}",
                what.label(storage_name),
                cell.errors
            );
        }
        match what {
            Measure::BareGet => connections.push(("bare", connections_to(bare_server.addr.port()))),
            Measure::Get => connections.push(("skein", connections_to(skein.server.addr.port()))),
            _ => {}
        }
    }

    let run_load = LoadSnapshot::now();
    let rounds = args.rounds.max(1);
    let slice = Duration::from_secs_f64(args.seconds) / rounds;
    let mut parts: Vec<Vec<Cell>> = MEASURES.iter().map(|_| Vec::new()).collect();
    for round in 0..rounds {
        eprintln!("  round {}/{rounds}", round + 1);
        for (k, what) in MEASURES.into_iter().enumerate() {
            if !selected(&what) {
                continue;
            }
            let run = format!("r{round}");
            parts[k].push(systems.cell(what, &run, c, slice).await);
        }
    }
    let cells: Vec<Cell> = parts.into_iter().map(Cell::merge).collect();
    let others = LoadSnapshot::now().others_since(&run_load);
    let load_end = loadavg();

    // The server must hold exactly the Secrets it acknowledged.
    let acknowledged = systems.created.load(Ordering::Relaxed);
    let stored = count_secrets(&systems.skein, CREATE_NS).await?;
    let listed = count_secrets(&systems.skein, LIST_NS).await?;
    let cr_acknowledged = systems.cr_created.load(Ordering::Relaxed);
    let cr_stored = count(&systems.skein, &custom::collection(CREATE_NS)).await?;
    store.close().await;
    let backend = skein.backend();
    let audited = audit_lines(&audit_log)?;
    drop(bare_server);
    drop(skein);

    // The report.
    let cell = |m: Measure| &cells[MEASURES.iter().position(|x| *x == m).unwrap_or(0)];
    let mut out = String::new();
    let w = &mut out;
    let _ = writeln!(w, "# Skein API benchmark\n");
    let mut facts = machine_facts();
    facts.push((
        "load average (uptime) at start / end",
        format!("{load_start} / {load_end}"),
    ));
    facts.extend(skein_facts());
    facts.push((
        "store",
        format!(
            "skein on {backend}; storage column: the {storage_name} store in the bench process"
        ),
    ));
    facts.push((
        "client",
        format!(
            "hyper 1 client connections + rustls (hack/bench/src/client.rs), admin client certificate from admin.kubeconfig, in the \
             bench process; {}; negotiated: skein {}, bare {}; established connections after \
             warm-up: {}",
            args.protocol.describe(),
            version_name(get_reply.version),
            version_name(bare_reply.version),
            connections
                .iter()
                .map(|(who, n)| format!("{who} {n}"))
                .collect::<Vec<_>>()
                .join(", ")
        ),
    ));
    facts.push((
        "servers",
        "skein serve, the host skein (member role, embedded store; it only proxies the \
         through-a-host GETs) and the bare server are separate processes (Tokio \
         multi-thread, one worker per core) with the same TLS layer (skein_apiserver::http::tls: same \
         certificates, client-certificate verification, ALPN h2/http1.1, hyper auto builder)"
            .into(),
    ));
    facts.push((
        "sizes",
        format!(
            "Secret JSON sent {sent_bytes} B; GET response {} B; LIST response {} B ({} items); \
             custom resource JSON sent {} B, GET response {} B; bare body {} B; storage values \
             {STORAGE_VALUE_BYTES} B",
            get_reply.body.len(),
            list_reply.body.len(),
            args.list_size,
            custom::object(CREATE_NS, "c-r0-00-0000").len(),
            cr_reply.body.len(),
            bare_reply.body.len()
        ),
    ));
    facts.push((
        "settings",
        format!(
            "concurrency {c}; {} s per measurement in {rounds} interleaved rounds, after {} s \
             warm-up each",
            args.seconds, args.warmup
        ),
    ));
    facts_table(w, &facts);

    let _ = writeln!(w, "\n## Throughput at concurrency {c}\n");
    let _ = writeln!(w, "| measurement | ops/s | p50 / p99 ms | note |");
    let _ = writeln!(w, "| --- | ---: | ---: | --- |");
    for what in MEASURES.into_iter().filter(selected) {
        let cell = cell(what);
        let note = match what {
            Measure::List => format!(
                "{:.0} objects/s ({} items per LIST, every one counted)",
                cell.rate() * args.list_size as f64,
                args.list_size
            ),
            Measure::Create => format!("{} creates acknowledged (with warm-up)", acknowledged),
            Measure::CrCreate => {
                format!("{cr_acknowledged} creates acknowledged (with warm-up)")
            }
            _ => String::new(),
        };
        let _ = writeln!(
            w,
            "| {} | {} | {} | {note} |",
            what.label(storage_name),
            ops(cell),
            lat(cell)
        );
    }

    let _ = writeln!(w, "\n## Ratios against the targets\n");
    let _ = writeln!(w, "| ratio | measured | target | result |");
    let _ = writeln!(w, "| --- | ---: | ---: | --- |");
    let both = |a: Measure, b: Measure| selected(&a) && selected(&b);
    let (get, bare_get) = (cell(Measure::Get), cell(Measure::BareGet));
    if both(Measure::Get, Measure::BareGet) {
        let get_ratio = get.rate() / bare_get.rate();
        let _ = writeln!(
            w,
            "| skein GET / bare GET | {get_ratio:.2}× | ≥ {GET_VS_BARE_TARGET:.1}× | {} |",
            verdict(get_ratio, GET_VS_BARE_TARGET, &[get, bare_get])
        );
    } else {
        let _ = writeln!(
            w,
            "| skein GET / bare GET | not measured (--only) | ≥ {GET_VS_BARE_TARGET:.1}× | — |"
        );
    }
    let (create, storage) = (cell(Measure::Create), cell(Measure::StorageCreate));
    if both(Measure::Create, Measure::StorageCreate) {
        let create_ratio = create.rate() / storage.rate();
        let _ = writeln!(
            w,
            "| skein CREATE / {storage_name} create | {create_ratio:.2}× | ≥ {CREATE_VS_STORAGE_TARGET:.1}× | {} |",
            verdict(create_ratio, CREATE_VS_STORAGE_TARGET, &[create, storage])
        );
    } else {
        let _ = writeln!(
            w,
            "| skein CREATE / {storage_name} create | not measured (--only) | ≥ {CREATE_VS_STORAGE_TARGET:.1}× | — |"
        );
    }

    for (what, secret_what, target, name) in [
        (
            Measure::CrCreate,
            Measure::Create,
            CR_CREATE_VS_SECRET_TARGET,
            "custom resource CREATE / Secret CREATE",
        ),
        (
            Measure::CrGet,
            Measure::Get,
            CR_GET_VS_SECRET_TARGET,
            "custom resource GET / Secret GET",
        ),
    ] {
        if both(what, secret_what) {
            let (cr, secret) = (cell(what), cell(secret_what));
            let ratio = cr.rate() / secret.rate();
            let _ = writeln!(
                w,
                "| {name} | {ratio:.2}× | ≥ {target:.1}× | {} |",
                verdict(ratio, target, &[cr, secret])
            );
        } else {
            let _ = writeln!(w, "| {name} | not measured (--only) | ≥ {target:.1}× | — |");
        }
    }

    for (what, plain, target, name) in [
        (
            Measure::RbacGet,
            Measure::Get,
            RBAC_GET_TARGET,
            "GET with RBAC and audit / GET as system:masters, no audit",
        ),
        (
            Measure::RbacCreate,
            Measure::Create,
            RBAC_CREATE_TARGET,
            "CREATE with RBAC and audit / CREATE as system:masters, no audit",
        ),
    ] {
        if both(what, plain) {
            let (with, without) = (cell(what), cell(plain));
            let ratio = with.rate() / without.rate();
            let _ = writeln!(
                w,
                "| {name} | {ratio:.2}× | ≥ {target:.2}× | {} |",
                verdict(ratio, target, &[with, without])
            );
        } else {
            let _ = writeln!(w, "| {name} | not measured (--only) | ≥ {target:.2}× | — |");
        }
    }

    if both(Measure::HostGet, Measure::Get) {
        let (through, direct) = (cell(Measure::HostGet), cell(Measure::Get));
        let ratio = through.rate() / direct.rate();
        let _ = writeln!(
            w,
            "| GET through a host's aggregator / direct GET | {ratio:.2}× | ≥ {HOST_GET_TARGET:.1}× | {} |",
            verdict(ratio, HOST_GET_TARGET, &[through, direct])
        );
    } else {
        let _ = writeln!(
            w,
            "| GET through a host's aggregator / direct GET | not measured (--only) | ≥ {HOST_GET_TARGET:.1}× | — |"
        );
    }

    let bare_create = cell(Measure::BareCreate);
    if both(Measure::BareCreate, Measure::StorageCreate)
        && both(Measure::Create, Measure::BareCreate)
    {
        let ceiling = bare_create.rate() / storage.rate();
        let _ = writeln!(
            w,
            "| bare + storage CREATE / {storage_name} create (the ceiling of the CREATE ratio on this machine) | {ceiling:.2}× | — | — |"
        );
        let _ = writeln!(
            w,
            "| skein CREATE / bare + storage CREATE | {:.2}× | — | — |",
            create.rate() / bare_create.rate()
        );
    }

    let _ = writeln!(w, "\n## Checks\n");
    let count_ok = stored as u64 == acknowledged;
    let _ = writeln!(
        w,
        "- {CREATE_NS}: the server lists {stored} Secrets; the client saw {acknowledged} creates \
         acknowledged with 201: {}.",
        if count_ok { "equal" } else { "MISMATCH" }
    );
    let cr_count_ok = cr_stored as u64 == cr_acknowledged;
    let _ = writeln!(
        w,
        "- {CREATE_NS}: the server lists {cr_stored} custom resources; the client saw \
         {cr_acknowledged} creates acknowledged with 201: {}.",
        if cr_count_ok { "equal" } else { "MISMATCH" }
    );
    let _ = writeln!(
        w,
        "- {LIST_NS}: the server lists {listed} Secrets (expected {}). Every measured LIST \
         response was parsed and had exactly {} items; every GET and CREATE response named the \
         Secret asked for; every bare response was {} B.",
        args.list_size,
        args.list_size,
        bare::BODY_BYTES
    );
    let audit_ok = audited.others == 0
        && (!selected(&Measure::RbacGet) && !selected(&Measure::RbacCreate) || audited.user > 0);
    let _ = writeln!(
        w,
        "- audit log: {} events of {RBAC_USER} at Metadata, {} of anyone else (policy: \
         Metadata for {RBAC_USER}, None otherwise): {}.",
        audited.user,
        audited.others,
        if audit_ok {
            "as the policy says"
        } else {
            "WRONG"
        }
    );
    let _ = writeln!(w, "\n{}", noise_line(others, cells.iter()));

    let errors = error_lines(
        MEASURES
            .iter()
            .zip(&cells)
            .map(|(m, c)| (m.label(storage_name), c)),
    );
    let error_count: u64 = cells.iter().map(|c| c.errors).sum();
    let _ = writeln!(w, "\nErrors: {error_count}.");
    for e in &errors {
        let _ = writeln!(w, "- {e}");
    }
    let _ = writeln!(
        w,
        "\nTotal run time: {:.0} s (including server start and populating {LIST_NS}).",
        started.elapsed().as_secs_f64()
    );
    print!("{out}");
    anyhow::ensure!(
        error_count == 0,
        "{error_count} requests failed (see the report)"
    );
    anyhow::ensure!(
        count_ok,
        "the server holds {stored} created Secrets, the client saw {acknowledged}"
    );
    anyhow::ensure!(
        cr_count_ok,
        "the server holds {cr_stored} created custom resources, the client saw {cr_acknowledged}"
    );
    anyhow::ensure!(listed == args.list_size, "{LIST_NS} holds {listed} Secrets");
    anyhow::ensure!(audit_ok, "the audit log does not follow the policy");
    Ok(())
}

/// Registers the Skein under test (`port` on loopback) with the host as
/// the APIService `v1alpha1.federation.skein.io` (Service
/// `skein-system/skein`, an EndpointSlice naming 127.0.0.1), then waits
/// until the host reports it Available.
async fn register_on_host(host: &Https, port: u16) -> anyhow::Result<()> {
    let post = |path: &'static str, body: serde_json::Value| {
        let host = host.clone();
        async move {
            host.expect(
                201,
                Method::POST,
                path,
                Some(("application/json", Bytes::from(body.to_string()))),
            )
            .await
            .map(drop)
        }
    };
    post(
        "/api/v1/namespaces",
        serde_json::json!({"metadata": {"name": "skein-system"}}),
    )
    .await?;
    post(
        "/api/v1/namespaces/skein-system/services",
        serde_json::json!({"metadata": {"name": "skein"},
            "spec": {"ports": [{"name": "https", "port": 443, "targetPort": "https"}]}}),
    )
    .await?;
    post(
        "/apis/discovery.k8s.io/v1/namespaces/skein-system/endpointslices",
        serde_json::json!({
            "metadata": {"name": "skein-1", "labels": {"kubernetes.io/service-name": "skein"}},
            "addressType": "IPv4",
            "ports": [{"name": "https", "port": port, "protocol": "TCP"}],
            "endpoints": [{"addresses": ["127.0.0.1"], "conditions": {"ready": true}}],
        }),
    )
    .await?;
    post(
        "/apis/apiregistration.k8s.io/v1/apiservices",
        serde_json::json!({
            "metadata": {"name": "v1alpha1.federation.skein.io"},
            "spec": {
                "group": "federation.skein.io", "version": "v1alpha1",
                "service": {"namespace": "skein-system", "name": "skein", "port": 443},
                "insecureSkipTLSVerify": true,
                "groupPriorityMinimum": 1000, "versionPriority": 15,
            },
        }),
    )
    .await?;
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        let body = host
            .expect(
                200,
                Method::GET,
                "/apis/apiregistration.k8s.io/v1/apiservices/v1alpha1.federation.skein.io",
                None,
            )
            .await?;
        let svc: serde_json::Value = serde_json::from_slice(&body).context("not an APIService")?;
        let available = svc["status"]["conditions"].as_array().is_some_and(|c| {
            c.iter()
                .any(|c| c["type"] == "Available" && c["status"] == "True")
        });
        if available {
            return Ok(());
        }
        anyhow::ensure!(
            Instant::now() < deadline,
            "the host never reported the APIService Available: {svc}"
        );
        tokio::time::sleep(Duration::from_millis(250)).await;
    }
}

/// Audit events in the log: the RBAC user's (each at Metadata) and
/// anyone else's.
struct Audited {
    user: u64,
    others: u64,
}

fn audit_lines(path: &std::path::Path) -> anyhow::Result<Audited> {
    let text = std::fs::read_to_string(path).unwrap_or_default();
    let mut out = Audited { user: 0, others: 0 };
    for line in text.lines().filter(|l| !l.trim().is_empty()) {
        let event: serde_json::Value =
            serde_json::from_str(line).context("an audit line is not JSON")?;
        if event["user"]["username"] == RBAC_USER && event["level"] == "Metadata" {
            out.user += 1;
        } else {
            out.others += 1;
        }
    }
    Ok(out)
}

/// The RBAC objects of the RBAC cells: [`NOISE_CLUSTER_ROLES`] ClusterRoles
/// and [`NOISE_ROLE_BINDINGS`] RoleBindings of other users in the two
/// namespaces the cells use (so the authorizer has bindings to look
/// through), and the ClusterRole `bench-secrets` (get, create Secrets)
/// bound to [`RBAC_USER`] by a RoleBinding in each of them.
async fn rbac_objects(client: &Https) -> anyhow::Result<()> {
    let post = |path: String, body: serde_json::Value| {
        let client = client.clone();
        async move {
            client
                .expect(
                    201,
                    Method::POST,
                    &path,
                    Some(("application/json", Bytes::from(body.to_string()))),
                )
                .await
                .map(drop)
        }
    };
    let rbac = "/apis/rbac.authorization.k8s.io/v1";
    for i in 0..NOISE_CLUSTER_ROLES {
        post(
            format!("{rbac}/clusterroles"),
            serde_json::json!({"metadata": {"name": format!("noise-{i:02}")}, "rules": [
                {"apiGroups": ["apps"], "resources": ["deployments", "replicasets"], "verbs": ["get", "list", "watch"]},
                {"apiGroups": [""], "resources": ["configmaps"], "verbs": ["get"], "resourceNames": [format!("cm-{i}")]},
            ]}),
        )
        .await?;
    }
    for i in 0..NOISE_ROLE_BINDINGS {
        let ns = if i % 2 == 0 { LIST_NS } else { CREATE_NS };
        post(
            format!("{rbac}/namespaces/{ns}/rolebindings"),
            serde_json::json!({"metadata": {"name": format!("noise-{i:03}")},
                "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole",
                    "name": format!("noise-{:02}", i % NOISE_CLUSTER_ROLES)},
                "subjects": [{"apiGroup": "rbac.authorization.k8s.io", "kind": "User", "name": format!("other-{i}")}]}),
        )
        .await?;
    }
    post(
        format!("{rbac}/clusterroles"),
        serde_json::json!({"metadata": {"name": "bench-secrets"}, "rules": [
            {"apiGroups": [""], "resources": ["secrets"], "verbs": ["get", "create"]},
        ]}),
    )
    .await?;
    for ns in [LIST_NS, CREATE_NS] {
        post(
            format!("{rbac}/namespaces/{ns}/rolebindings"),
            serde_json::json!({"metadata": {"name": "bench-user-secrets"},
                "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": "bench-secrets"},
                "subjects": [{"apiGroup": "rbac.authorization.k8s.io", "kind": "User", "name": RBAC_USER}]}),
        )
        .await?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn secrets_are_one_kib() {
        let s = secret(CREATE_NS, "s-0000000001");
        assert!(
            (SECRET_BYTES - 4..=SECRET_BYTES).contains(&s.len()),
            "{}",
            s.len()
        );
        let v: serde_json::Value = serde_json::from_slice(&s).unwrap();
        assert_eq!(v["metadata"]["name"], "s-0000000001");
    }

    #[test]
    fn escapes_continue_tokens() {
        assert_eq!(form_escape("ab+/=c"), "ab%2B%2F%3Dc");
    }
}
