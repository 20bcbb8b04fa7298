//! `bench patch`: updates of 4 KiB Deployments at concurrency 16 against a
//! real `skein serve`, three ways, side by side:
//!
//! - **PUT**: each task keeps the object the server last returned, changes
//!   the `app` container's image and PUTs it back with that
//!   `resourceVersion` (the update-from-cache pattern of controllers and of
//!   `kubectl replace`; one request per update, no GET).
//! - **SMP**: `PATCH` with `application/strategic-merge-patch+json`,
//!   `{"spec":{"template":{"spec":{"containers":[{"name":"app","image":…}]}}}}`
//!   (merged into the two-container list by its `name` key).
//! - **SSA**: `PATCH` with `application/apply-patch+yaml`,
//!   `fieldManager=bench`: the full object as the user wrote it (JSON, which
//!   is YAML; kubectl sends JSON too) with the new image.
//!
//! Each task updates its own Deployment (`<mode>-<task>`), so there are no
//! conflicts; any non-2xx answer is an error, counted and reported, and the
//! run exits non-zero. Every response is checked (the new image, both
//! containers still there), and after the run every object is read back
//! and must carry the last image the client saw acknowledged.

use std::fmt::Write as _;
use std::sync::Arc;
use std::time::{Duration, Instant};

use anyhow::Context as _;
use bytes::Bytes;
use http::Method;
use serde_json::{Value, json};
use tokio::sync::Mutex;

use crate::client::{Https, Protocol, version_name};
use crate::cluster::{Skein, skein_facts};
use crate::measure::{Cell, LoadSnapshot, run_cell};
use crate::report::{
    error_lines, facts_table, lat, loadavg, machine_facts, noise_line, ops, verdict,
};

/// Options of `bench patch`.
#[derive(clap::Args)]
pub struct Args {
    /// Seconds each mode runs (split into `--rounds`).
    #[arg(long, default_value_t = 6.0)]
    seconds: f64,
    /// Rounds run in rotation across the modes.
    #[arg(long, default_value_t = 3)]
    rounds: u32,
    /// Seconds of unmeasured warm-up per mode.
    #[arg(long, default_value_t = 1.0)]
    warmup: f64,
    /// Tasks issuing updates in a loop, each on its own Deployment.
    #[arg(long, default_value_t = 16)]
    concurrency: usize,
    /// The update modes to measure (PUT is the baseline of the ratios).
    #[arg(long, value_enum, value_delimiter = ',', default_value = "put,smp,ssa")]
    modes: Vec<Mode>,
    /// HTTP/2 (as client-go) or HTTP/1.1.
    #[arg(long, value_enum, default_value_t = Protocol::H2)]
    protocol: Protocol,
    /// Run Skein on a real etcd (started for the run).
    #[arg(long)]
    etcd: bool,
}

/// How an update is sent.
#[derive(Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Mode {
    /// PUT of the whole object with its resourceVersion.
    Put,
    /// Strategic merge patch.
    Smp,
    /// Server-side apply.
    Ssa,
}

impl Mode {
    fn name(self) -> &'static str {
        match self {
            Mode::Put => "put",
            Mode::Smp => "smp",
            Mode::Ssa => "ssa",
        }
    }

    /// The `managedFields` operation the server records for this mode.
    fn operation(self) -> &'static str {
        match self {
            Mode::Ssa => "Apply",
            Mode::Put | Mode::Smp => "Update",
        }
    }

    fn label(self) -> &'static str {
        match self {
            Mode::Put => "PUT (object + resourceVersion)",
            Mode::Smp => "strategic-merge-patch (image)",
            Mode::Ssa => "server-side apply (full object, fieldManager=bench)",
        }
    }
}

/// Target (docs/benchmarks.md): SSA ≥ 0.5× PUT.
const SSA_VS_PUT_TARGET: f64 = 0.5;
const NAMESPACE: &str = "bench-patch";
/// The Deployment's JSON as created is padded to at least this size.
const DEPLOYMENT_BYTES: usize = 4096;
const APP_IMAGE: &str = "registry.example/shop/checkout";

/// A realistic two-container Deployment named `name`, its `app` container
/// running `image`, padded with environment variables to
/// [`DEPLOYMENT_BYTES`] of JSON. The padding is fixed once, for a typical
/// name and image, so that every object and every applied configuration
/// has the same fields.
fn deployment(name: &str, image: &str) -> Value {
    static PADDING: std::sync::OnceLock<usize> = std::sync::OnceLock::new();
    let n = *PADDING.get_or_init(|| {
        let image = format!("{APP_IMAGE}:r0-00-00000");
        (0..200)
            .find(|&n| padded_deployment("put-00", &image, n).to_string().len() >= DEPLOYMENT_BYTES)
            .unwrap_or(200)
    });
    padded_deployment(name, image, n)
}

/// [`deployment`] with `n` padding variables.
fn padded_deployment(name: &str, image: &str, n: usize) -> Value {
    let env = |n: usize| -> Vec<Value> {
        let mut env = vec![
            json!({"name": "LOG_LEVEL", "value": "info"}),
            json!({"name": "POD_NAME", "valueFrom": {"fieldRef": {"fieldPath": "metadata.name"}}}),
            json!({"name": "DB_PASSWORD", "valueFrom": {"secretKeyRef": {"name": "checkout-db", "key": "password"}}}),
        ];
        env.extend((0..n).map(|i| {
            json!({"name": format!("FEATURE_FLAG_{i:02}"), "value": format!("enabled-for-cohort-{i:02}-of-the-checkout-rollout")})
        }));
        env
    };
    json!({
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {
            "name": name,
            "namespace": NAMESPACE,
            "labels": {"app.kubernetes.io/name": "checkout", "app.kubernetes.io/part-of": "shop", "team": "payments"},
            "annotations": {
                "deployment.kubernetes.io/revision": "1",
                "shop.example/owner": "payments-oncall@shop.example",
                "shop.example/runbook": "https://runbooks.shop.example/checkout"
            }
        },
        "spec": {
            "replicas": 3,
            "revisionHistoryLimit": 5,
            "selector": {"matchLabels": {"app.kubernetes.io/name": "checkout"}},
            "strategy": {"type": "RollingUpdate", "rollingUpdate": {"maxSurge": "25%", "maxUnavailable": 0}},
            "template": {
                "metadata": {
                    "labels": {"app.kubernetes.io/name": "checkout", "app.kubernetes.io/part-of": "shop"},
                    "annotations": {"prometheus.io/scrape": "true", "prometheus.io/port": "9090"}
                },
                "spec": {
                    "serviceAccountName": "checkout",
                    "terminationGracePeriodSeconds": 45,
                    "containers": [
                        {
                            "name": "app",
                            "image": image,
                            "imagePullPolicy": "IfNotPresent",
                            "args": ["--listen=:8080", "--metrics=:9090"],
                            "ports": [
                                {"name": "http", "containerPort": 8080, "protocol": "TCP"},
                                {"name": "metrics", "containerPort": 9090, "protocol": "TCP"}
                            ],
                            "env": env(n),
                            "resources": {
                                "requests": {"cpu": "250m", "memory": "256Mi"},
                                "limits": {"cpu": "1", "memory": "512Mi"}
                            },
                            "readinessProbe": {"httpGet": {"path": "/ready", "port": "http"}, "periodSeconds": 5},
                            "livenessProbe": {"httpGet": {"path": "/healthz", "port": "http"}, "initialDelaySeconds": 10, "periodSeconds": 10},
                            "volumeMounts": [{"name": "config", "mountPath": "/etc/checkout", "readOnly": true}]
                        },
                        {
                            "name": "proxy",
                            "image": "registry.example/mesh/proxy:1.24.3",
                            "args": ["proxy", "--upstream=127.0.0.1:8080"],
                            "ports": [{"name": "mesh", "containerPort": 15001, "protocol": "TCP"}],
                            "resources": {"requests": {"cpu": "50m", "memory": "64Mi"}}
                        }
                    ],
                    "volumes": [{"name": "config", "configMap": {"name": "checkout-config"}}]
                }
            }
        }
    })
}

/// The `app` container's image in a Deployment, and its number of
/// containers.
fn app_image(object: &Value) -> Option<(&str, usize)> {
    let containers = object
        .pointer("/spec/template/spec/containers")?
        .as_array()?;
    let image = containers
        .iter()
        .find(|c| c["name"] == "app")?
        .get("image")?
        .as_str()?;
    Some((image, containers.len()))
}

/// Sets the `app` container's image.
fn set_app_image(object: &mut Value, image: &str) -> anyhow::Result<()> {
    let containers = object
        .pointer_mut("/spec/template/spec/containers")
        .and_then(Value::as_array_mut)
        .context("no containers")?;
    let app = containers
        .iter_mut()
        .find(|c| c["name"] == "app")
        .context("no app container")?;
    app["image"] = Value::String(image.to_owned());
    Ok(())
}

/// One task's Deployment: the object the server last returned and the
/// image it last acknowledged.
struct Slot {
    name: String,
    object: Value,
    image: String,
}

/// The Deployments of one mode, one per task.
#[derive(Clone)]
struct Fleet {
    mode: Mode,
    client: Https,
    slots: Arc<Vec<Mutex<Slot>>>,
}

impl Fleet {
    /// Creates `concurrency` Deployments `<mode>-<task>`.
    async fn create(mode: Mode, client: &Https, concurrency: usize) -> anyhow::Result<Fleet> {
        let mut slots = Vec::with_capacity(concurrency);
        for task in 0..concurrency {
            let name = format!("{}-{task}", mode.name());
            let image = format!("{APP_IMAGE}:1.0.0");
            let body = Bytes::from(deployment(&name, &image).to_string());
            let reply = client
                .expect(
                    201,
                    Method::POST,
                    &format!(
                        "/apis/apps/v1/namespaces/{NAMESPACE}/deployments?fieldManager=bench-setup"
                    ),
                    Some(("application/json", body)),
                )
                .await?;
            let object: Value = serde_json::from_slice(&reply).context("create: not JSON")?;
            slots.push(Mutex::new(Slot {
                name,
                object,
                image,
            }));
        }
        Ok(Fleet {
            mode,
            client: client.clone(),
            slots: Arc::new(slots),
        })
    }

    /// Sets task `task`'s Deployment's image to `image` the fleet's way and
    /// checks the answer. `force` takes ownership (SSA's first apply: the
    /// objects were created by another manager).
    async fn update(&self, task: usize, image: String, force: bool) -> anyhow::Result<()> {
        let mut slot = self.slots.get(task).context("no such task")?.lock().await;
        let path = format!(
            "/apis/apps/v1/namespaces/{NAMESPACE}/deployments/{}?fieldManager=bench{}",
            slot.name,
            if force { "&force=true" } else { "" }
        );
        let (method, content_type, body) = match self.mode {
            Mode::Put => {
                let mut object = slot.object.clone();
                set_app_image(&mut object, &image)?;
                (Method::PUT, "application/json", object.to_string())
            }
            Mode::Smp => (
                Method::PATCH,
                "application/strategic-merge-patch+json",
                json!({"spec": {"template": {"spec": {"containers": [{"name": "app", "image": image}]}}}})
                    .to_string(),
            ),
            Mode::Ssa => (
                Method::PATCH,
                "application/apply-patch+yaml",
                deployment(&slot.name, &image).to_string(),
            ),
        };
        let reply = self
            .client
            .expect(200, method, &path, Some((content_type, Bytes::from(body))))
            .await
            .with_context(|| self.mode.label())?;
        let object: Value = serde_json::from_slice(&reply).context("update: not JSON")?;
        match app_image(&object) {
            Some((got, 2)) if got == image => {}
            other => anyhow::bail!(
                "{}: {} answered app image / containers {other:?}, expected {image:?} / 2",
                self.mode.label(),
                slot.name
            ),
        }
        slot.image = image;
        if self.mode == Mode::Put {
            slot.object = object;
        }
        Ok(())
    }

    /// Runs updates on every task's Deployment for `secs`; `run` makes the
    /// images unique.
    async fn cell(&self, run: &str, secs: Duration) -> Cell {
        let (this, run) = (self.clone(), run.to_owned());
        run_cell(self.slots.len(), secs, move |task, i| {
            let this = this.clone();
            let image = format!("{APP_IMAGE}:{run}-{task}-{i}");
            async move { this.update(task, image, false).await }
        })
        .await
    }

    /// Reads every Deployment back: each must carry the image last
    /// acknowledged, and a `managedFields` entry of manager `bench` with
    /// the operation this mode implies (`Apply` for SSA, `Update` for PUT
    /// and SMP), so a server that handled an apply as a plain merge would
    /// show. Returns the number that do not.
    async fn verify(&self) -> anyhow::Result<usize> {
        let operation = self.mode.operation();
        let mut wrong = 0;
        for slot in self.slots.iter() {
            let slot = slot.lock().await;
            let path = format!(
                "/apis/apps/v1/namespaces/{NAMESPACE}/deployments/{}",
                slot.name
            );
            let body = self.client.expect(200, Method::GET, &path, None).await?;
            let object: Value = serde_json::from_slice(&body).context("not JSON")?;
            let managed = object
                .pointer("/metadata/managedFields")
                .and_then(Value::as_array)
                .is_some_and(|entries| {
                    entries
                        .iter()
                        .any(|e| e["manager"] == "bench" && e["operation"] == operation)
                });
            if app_image(&object) != Some((slot.image.as_str(), 2)) || !managed {
                eprintln!(
                    "  {}: {} lacks image {} or a managedFields entry bench/{operation}: {}",
                    self.mode.name(),
                    slot.name,
                    slot.image,
                    crate::client::excerpt(&body)
                );
                wrong += 1;
            }
        }
        Ok(wrong)
    }
}

/// Runs the whole benchmark and prints the report.
pub async fn run(args: Args) -> anyhow::Result<()> {
    let started = Instant::now();
    let load_start = loadavg();
    let c = args.concurrency;
    let mut modes = args.modes.clone();
    modes.dedup();
    anyhow::ensure!(c > 0 && !modes.is_empty(), "need a concurrency and a mode");

    eprintln!(
        "bench patch: starting skein{}…",
        if args.etcd { " on etcd" } else { "" }
    );
    let skein = Skein::start(args.etcd).await?;
    let client = skein.client(args.protocol)?;
    let ns = json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": NAMESPACE}});
    client
        .expect(
            201,
            Method::POST,
            "/api/v1/namespaces",
            Some(("application/json", Bytes::from(ns.to_string()))),
        )
        .await?;

    // Objects, then one update each (SSA's forced): any mode that does not
    // work stops the run here, loudly.
    let mut fleets = Vec::new();
    for &mode in &modes {
        eprintln!(
            "  {}: creating {c} Deployments, one update each",
            mode.name()
        );
        let fleet = Fleet::create(mode, &client, c).await?;
        for task in 0..c {
            let image = format!("{APP_IMAGE}:prime-{task}");
            fleet
                .update(task, image, mode == Mode::Ssa)
                .await
                .with_context(|| {
                    format!(
                        "the first {} update failed; measure the other modes with \
                         --modes (e.g. --modes put)",
                        mode.name()
                    )
                })?;
        }
        fleets.push(fleet);
    }
    let sizes = {
        let slot = fleets[0].slots[0].lock().await;
        let path = format!(
            "/apis/apps/v1/namespaces/{NAMESPACE}/deployments/{}",
            slot.name
        );
        let reply = client.send(Method::GET, &path, None).await?;
        (
            deployment(&slot.name, APP_IMAGE).to_string().len(),
            reply.body.len(),
            version_name(reply.version),
        )
    };

    let warmup = Duration::from_secs_f64(args.warmup);
    for fleet in &fleets {
        eprintln!("  warm-up: {}", fleet.mode.label());
        let cell = fleet.cell("w", warmup).await;
        if let Some(e) = cell.first_error {
            anyhow::bail!(
                "warm-up of {} failed ({} errors): {e}",
                fleet.mode.label(),
                cell.errors
            );
        }
    }

    let run_load = LoadSnapshot::now();
    let rounds = args.rounds.max(1);
    let slice = Duration::from_secs_f64(args.seconds) / rounds;
    let mut parts: Vec<Vec<Cell>> = fleets.iter().map(|_| Vec::new()).collect();
    for round in 0..rounds {
        eprintln!("  round {}/{rounds}", round + 1);
        for (k, fleet) in fleets.iter().enumerate() {
            parts[k].push(fleet.cell(&format!("r{round}"), slice).await);
        }
    }
    let cells: Vec<Cell> = parts.into_iter().map(Cell::merge).collect();
    let others = LoadSnapshot::now().others_since(&run_load);
    let load_end = loadavg();
    let mut wrong = Vec::new();
    for fleet in &fleets {
        wrong.push(fleet.verify().await?);
    }
    let backend = skein.backend();
    drop(skein);

    // The report.
    let mut out = String::new();
    let w = &mut out;
    let _ = writeln!(w, "# Skein patch benchmark\n");
    let mut facts = machine_facts();
    facts.push((
        "load average (uptime) at start / end",
        format!("{load_start} / {load_end}"),
    ));
    facts.extend(skein_facts());
    facts.push(("store", format!("skein on {backend}")));
    facts.push((
        "client",
        format!(
            "hyper 1 client connections + rustls (hack/bench/src/client.rs), admin client certificate; {}; negotiated {}",
            args.protocol.describe(),
            sizes.2
        ),
    ));
    facts.push((
        "objects",
        format!(
            "{c} Deployments per mode, one per task, 2 containers; JSON as written {} B, as \
             stored and read back {} B (with managedFields and defaults)",
            sizes.0, sizes.1
        ),
    ));
    facts.push((
        "settings",
        format!(
            "concurrency {c}; {} s per mode in {rounds} interleaved rounds, after {} s warm-up \
             each; every update changes the app container's image",
            args.seconds, args.warmup
        ),
    ));
    facts_table(w, &facts);

    let put = fleets
        .iter()
        .position(|f| f.mode == Mode::Put)
        .map(|k| &cells[k]);
    let _ = writeln!(w, "\n## Updates at concurrency {c}\n");
    let _ = writeln!(w, "| mode | updates/s | p50 / p99 ms | / PUT |");
    let _ = writeln!(w, "| --- | ---: | ---: | ---: |");
    for (fleet, cell) in fleets.iter().zip(&cells) {
        let ratio = put.map_or("–".to_owned(), |p| {
            format!("{:.2}×", cell.rate() / p.rate())
        });
        let _ = writeln!(
            w,
            "| {} | {} | {} | {ratio} |",
            fleet.mode.label(),
            ops(cell),
            lat(cell)
        );
    }

    let _ = writeln!(w, "\n## Ratios against the targets\n");
    let _ = writeln!(w, "| ratio | measured | target | result |");
    let _ = writeln!(w, "| --- | ---: | ---: | --- |");
    for (fleet, cell) in fleets.iter().zip(&cells) {
        let Some(put) = put else { break };
        let ratio = cell.rate() / put.rate();
        match fleet.mode {
            Mode::Ssa => {
                let _ = writeln!(
                    w,
                    "| SSA / PUT | {ratio:.2}× | ≥ {SSA_VS_PUT_TARGET:.1}× | {} |",
                    verdict(ratio, SSA_VS_PUT_TARGET, &[cell, put])
                );
            }
            Mode::Smp => {
                let _ = writeln!(w, "| SMP / PUT | {ratio:.2}× | (none) | information |");
            }
            Mode::Put => {}
        }
    }
    if put.is_none() || !modes.contains(&Mode::Ssa) {
        let _ = writeln!(w, "\n(SSA / PUT needs both `put` and `ssa` in --modes.)");
    }

    let _ = writeln!(w, "\n## Checks\n");
    for (fleet, bad) in fleets.iter().zip(&wrong) {
        let _ = writeln!(
            w,
            "- {}: {} of {c} Deployments read back with the last acknowledged image and a \
             managedFields entry of manager bench, operation {}{}.",
            fleet.mode.label(),
            c - bad,
            fleet.mode.operation(),
            if *bad > 0 { " — MISMATCH" } else { "" }
        );
    }
    let _ = writeln!(
        w,
        "- Every update response was 200 with the new image and both containers."
    );
    let _ = writeln!(w, "\n{}", noise_line(others, cells.iter()));
    let errors = error_lines(
        fleets
            .iter()
            .zip(&cells)
            .map(|(f, c)| (f.mode.label().to_owned(), c)),
    );
    let error_count: u64 = cells.iter().map(|c| c.errors).sum();
    let _ = writeln!(w, "\nErrors: {error_count}.");
    for e in &errors {
        let _ = writeln!(w, "- {e}");
    }
    let _ = writeln!(
        w,
        "\nTotal run time: {:.0} s (including server start).",
        started.elapsed().as_secs_f64()
    );
    print!("{out}");
    anyhow::ensure!(
        error_count == 0,
        "{error_count} updates failed (see the report)"
    );
    let bad: usize = wrong.iter().sum();
    anyhow::ensure!(
        bad == 0,
        "{bad} Deployments do not carry their last acknowledged image"
    );
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn deployments_are_about_four_kib() {
        let d = deployment("put-0", "registry.example/shop/checkout:1.0.0");
        let len = d.to_string().len();
        assert!(
            (DEPLOYMENT_BYTES..DEPLOYMENT_BYTES + 200).contains(&len),
            "{len}"
        );
        assert_eq!(
            app_image(&d),
            Some(("registry.example/shop/checkout:1.0.0", 2))
        );
    }

    #[test]
    fn sets_the_app_image_only() {
        let mut d = deployment("put-0", "a:1");
        set_app_image(&mut d, "a:2").unwrap();
        assert_eq!(app_image(&d), Some(("a:2", 2)));
        assert_eq!(
            d["spec"]["template"]["spec"]["containers"][1]["image"],
            "registry.example/mesh/proxy:1.24.3"
        );
    }
}
