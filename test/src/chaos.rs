//! The chaos run of issue 31, shared by the short test
//! (`tests/chaos.rs`, in CI) and the long benchmark (`hack/bench.sh
//! chaos`).
//!
//! One driver, seeded (the seed is printed; the same seed replays the same
//! choices), makes one random step at a time against a federation whose
//! members sit behind [`FaultProxy`]s ([`Proxied`]): creates, updates,
//! deletes and re-placements of ConfigMaps and Deployments (Divided and
//! Duplicated, scale and image changes) in two namespaces (one with a
//! namespace-wide cluster selector), Cluster label changes, unjoins and
//! joins, proxy faults (latency, resets, black hole, partitions) lasting
//! a few seconds, members stopped and brought back with their store wiped,
//! and SIGKILLs of the federation (restarted on the same data). Then every
//! fault stops and [`Chaos::settle`] waits for [`invariants::check`] to
//! find nothing, and checks that the federation holds exactly the objects
//! the driver's acknowledged writes left (nothing lost across SIGKILLs).
//!
//! Two cases the federation does not handle yet are left out (issue 31's
//! report describes them): a wiped member stays down at least
//! [`WIPED_AWAY`] (one back within a fraction of a second is never
//! re-synced: the federation re-watches from the old store's
//! resourceVersion), and faults, wipes and unjoins only pick members that
//! are joined, not leaving and without a fault (a member unjoined while
//! unreachable keeps its copies, its Placement lines stay `Deleting` and
//! every object deleted afterwards keeps its cleanup finalizer).

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicU32, Ordering};
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use crate::fault::Fault;
use crate::http::Api;
use crate::invariants::{self, MemberView, member_api};
use crate::proxied::{FAST_HEALTH, Proxied, wipe};
use crate::server::Server;

/// How long a wiped member stays down before it starts again.
pub const WIPED_AWAY: Duration = Duration::from_secs(3);

/// The namespaces the run writes in: the first selects `region in
/// (eu,us)` by default, the second has no placement annotations.
pub const NAMESPACES: [&str; 2] = ["chaos-a", "chaos-b"];

const REGIONS: [&str; 3] = ["eu", "us", "ap"];
const TIERS: [&str; 2] = ["gold", "silver"];
/// What the driver writes and reads back: content and placement.
const PLACED: [&str; 6] = [
    "/data",
    "/spec/replicas",
    "/spec/template",
    "/metadata/annotations/skein.io~1clusters",
    "/metadata/annotations/skein.io~1cluster-selector",
    "/metadata/annotations/skein.io~1replica-scheduling",
];
/// Names are drawn from small pools, so deletes and re-creates reuse them.
const POOL: usize = 12;

/// What a run does.
#[derive(Debug, Clone)]
pub struct Config {
    /// Member clusters (each behind a proxy).
    pub members: usize,
    /// How long the random steps go on.
    pub duration: Duration,
    /// Seeds every choice.
    pub seed: u64,
    /// SIGKILL the federation this often (none when `None`).
    pub kill_every: Option<Duration>,
    /// The pause between two steps.
    pub pause: Duration,
    /// How long the invariants may take to hold once faults stop.
    pub settle: Duration,
}

/// What a run did and found.
#[derive(Debug, Default)]
pub struct Report {
    /// Steps taken, by kind.
    pub steps: BTreeMap<&'static str, usize>,
    /// Answers of the federation no step expects (a failed write).
    pub errors: Vec<String>,
    /// Invariant violations left after the settle time (empty: all hold).
    pub violations: Vec<String>,
    /// How long the invariants took to hold after faults stopped.
    pub settled_in: Option<Duration>,
    /// Events repeated instead of aggregated ([`invariants::event_repeats`]).
    pub event_repeats: Vec<String>,
    /// Federated objects at the end.
    pub objects: usize,
}

/// xorshift64*: a small deterministic generator.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }
    fn below(&mut self, n: usize) -> usize {
        usize::try_from(self.next() % (n.max(1) as u64)).unwrap_or(0)
    }
    fn pick<'a, T>(&mut self, v: &'a [T]) -> &'a T {
        &v[self.below(v.len())]
    }
}

/// A running chaos fixture. See the module documentation.
pub struct Chaos {
    /// The federation and its proxied members.
    pub p: Proxied,
    /// The federation's process id (changes at every restart), for
    /// samplers.
    pub fed_pid: Arc<AtomicU32>,
    fed_api: Api,
    fed_args: Vec<String>,
    fed_dir: PathBuf,
    rng: Rng,
    joined: BTreeMap<String, bool>,
    labels: BTreeMap<String, (String, String)>,
    fault_until: BTreeMap<String, Instant>,
    down_until: BTreeMap<String, Instant>,
    /// Members unjoined whose Cluster is not gone yet.
    leaving: BTreeSet<String>,
    /// (kind, namespace, name) → the object as last acknowledged.
    model: BTreeMap<(&'static str, String, String), Value>,
    report: Report,
}

fn member_names(n: usize) -> Vec<String> {
    (0..n).map(|i| format!("m{i}")).collect()
}

impl Chaos {
    /// Starts the federation (with `--cluster-grace-period` and the other
    /// [`FAST_HEALTH`] flags) and `config.members` members, labelled with
    /// a region and a tier, and creates the namespaces.
    pub async fn start(dir: &Path, k: &Path, config: &Config) -> Chaos {
        let names = member_names(config.members);
        let labels: BTreeMap<String, (String, String)> = names
            .iter()
            .enumerate()
            .map(|(i, n)| {
                (
                    n.clone(),
                    (REGIONS[i % 3].to_owned(), TIERS[i % 2].to_owned()),
                )
            })
            .collect();
        let label_args: Vec<String> = labels
            .values()
            .map(|(r, t)| format!("region={r},tier={t}"))
            .collect();
        let clusters: Vec<(&str, &str)> = names
            .iter()
            .zip(&label_args)
            .map(|(n, l)| (n.as_str(), l.as_str()))
            .collect();
        let p = Proxied::start(dir, k, &[], &clusters).await;
        let fed_api = p.api();
        for (i, ns) in NAMESPACES.iter().enumerate() {
            let mut o = json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": ns}});
            if i == 0 {
                o["metadata"]["annotations"] =
                    json!({"skein.io/cluster-selector": "region in (eu,us)"});
            }
            fed_api.post("/api/v1/namespaces", &o).await.expect(201);
        }
        let pid = p.f.fed.pid().unwrap_or(0);
        Chaos {
            fed_pid: Arc::new(AtomicU32::new(pid)),
            fed_api,
            fed_args: FAST_HEALTH.iter().map(|s| (*s).to_owned()).collect(),
            fed_dir: dir.join("federation"),
            rng: Rng(config.seed.max(1)),
            joined: names.iter().map(|n| (n.clone(), true)).collect(),
            labels,
            fault_until: BTreeMap::new(),
            down_until: BTreeMap::new(),
            leaving: BTreeSet::new(),
            model: BTreeMap::new(),
            report: Report::default(),
            p,
        }
    }

    /// Runs random steps for `config.duration`, then stops every fault,
    /// and settles ([`Chaos::settle`]).
    pub async fn run(mut self, config: &Config) -> Report {
        let start = Instant::now();
        let mut last_kill = Instant::now();
        while start.elapsed() < config.duration {
            self.expire().await;
            if let Some(every) = config.kill_every
                && last_kill.elapsed() >= every
            {
                self.kill_federation().await;
                last_kill = Instant::now();
            } else {
                self.step().await;
            }
            tokio::time::sleep(config.pause).await;
        }
        self.stop_faults().await;
        self.settle(config.settle).await;
        self.report
    }

    fn count(&mut self, what: &'static str) {
        *self.report.steps.entry(what).or_default() += 1;
    }

    fn error(&mut self, what: String) {
        self.report.errors.push(what);
    }

    /// Lifts faults whose time is up and restarts members whose time away
    /// is over.
    async fn expire(&mut self) {
        let now = Instant::now();
        let done: Vec<String> = self
            .fault_until
            .iter()
            .filter(|(_, t)| **t <= now)
            .map(|(n, _)| n.clone())
            .collect();
        for n in done {
            self.p.proxy(&n).heal();
            self.fault_until.remove(&n);
        }
        let back: Vec<String> = self
            .down_until
            .iter()
            .filter(|(_, t)| **t <= now)
            .map(|(n, _)| n.clone())
            .collect();
        for n in back {
            self.p.f.member_mut(&n).run().await;
            self.down_until.remove(&n);
        }
        let leaving: Vec<String> = self.leaving.iter().cloned().collect();
        for n in leaving {
            let path = format!("/apis/federation.skein.io/v1alpha1/clusters/{n}");
            if self.fed_api.get(&path).await.status == 404 {
                self.leaving.remove(&n);
            }
        }
    }

    /// Members joined, not leaving, without a fault and not away: the ones
    /// a fault, a wipe or an unjoin may pick.
    fn healthy(&self) -> Vec<String> {
        self.joined
            .iter()
            .filter(|(n, j)| {
                **j && !self.leaving.contains(*n)
                    && !self.fault_until.contains_key(*n)
                    && !self.down_until.contains_key(*n)
            })
            .map(|(n, _)| n.clone())
            .collect()
    }

    /// Heals every proxy and starts every stopped member.
    pub async fn stop_faults(&mut self) {
        for proxy in self.p.proxies.values() {
            proxy.heal();
        }
        self.fault_until.clear();
        let down: Vec<String> = self.down_until.keys().cloned().collect();
        for n in down {
            let wait = self.down_until[&n].saturating_duration_since(Instant::now());
            tokio::time::sleep(wait).await;
            self.p.f.member_mut(&n).run().await;
        }
        self.down_until.clear();
    }

    async fn kill_federation(&mut self) {
        self.count("sigkill-federation");
        self.p
            .f
            .fed
            .stop_with(nix::sys::signal::Signal::SIGKILL, Duration::from_secs(10))
            .await;
        let args: Vec<&str> = self.fed_args.iter().map(String::as_str).collect();
        self.p.f.fed = Server::start(&self.fed_dir, &args).await;
        self.fed_api = self.p.api();
        self.fed_pid
            .store(self.p.f.fed.pid().unwrap_or(0), Ordering::Relaxed);
    }

    /// The placement annotations of a new object or a re-placement.
    fn placement(&mut self) -> Value {
        let names: Vec<String> = self.joined.keys().cloned().collect();
        match self.rng.below(6) {
            0 => json!({}),
            1 => json!({"skein.io/clusters": "*"}),
            2 => {
                let n = 1 + self.rng.below(3);
                let chosen: BTreeSet<String> =
                    (0..n).map(|_| self.rng.pick(&names).clone()).collect();
                json!({"skein.io/clusters": chosen.into_iter().collect::<Vec<_>>().join(",")})
            }
            3 => json!({"skein.io/cluster-selector": "region=eu"}),
            4 => json!({"skein.io/cluster-selector": "region in (eu,ap)"}),
            _ => json!({"skein.io/cluster-selector": "tier!=gold"}),
        }
    }

    async fn step(&mut self) {
        match self.rng.below(100) {
            0..20 => self.create("ConfigMap").await,
            20..30 => self.create("Deployment").await,
            30..45 => self.update().await,
            45..55 => self.delete().await,
            55..62 => self.replace().await,
            62..70 => self.relabel().await,
            70..84 => self.fault(),
            84..89 => self.unjoin().await,
            89..95 => self.join().await,
            _ => self.wipe_member(),
        }
    }

    fn path(kind: &str, ns: &str) -> String {
        match kind {
            "ConfigMap" => format!("/api/v1/namespaces/{ns}/configmaps"),
            _ => format!("/apis/apps/v1/namespaces/{ns}/deployments"),
        }
    }

    async fn create(&mut self, kind: &'static str) {
        let ns = (*self.rng.pick(&NAMESPACES)).to_owned();
        let name = format!("{}-{}", kind.to_lowercase(), self.rng.below(POOL));
        if self.model.contains_key(&(kind, ns.clone(), name.clone())) {
            return self.update().await;
        }
        let mut annotations = self.placement();
        let v = self.rng.next() % 1000;
        let o = if kind == "ConfigMap" {
            json!({"apiVersion": "v1", "kind": kind,
                "metadata": {"name": name, "namespace": ns, "annotations": annotations},
                "data": {"v": v.to_string()}})
        } else {
            if self.rng.below(4) == 0 {
                annotations["skein.io/replica-scheduling"] = json!("Duplicated");
            }
            json!({"apiVersion": "apps/v1", "kind": kind,
                "metadata": {"name": name, "namespace": ns, "annotations": annotations},
                "spec": {"replicas": self.rng.below(9),
                    "selector": {"matchLabels": {"app": name}},
                    "template": {"metadata": {"labels": {"app": name}},
                        "spec": {"containers": [{"name": "c", "image": format!("nginx:1.{v}")}]}}}})
        };
        let r = self.fed_api.post(&Self::path(kind, &ns), &o).await;
        match r.status.as_u16() {
            201 => {
                self.count(if kind == "ConfigMap" {
                    "create-configmap"
                } else {
                    "create-deployment"
                });
                self.model.insert((kind, ns, name), r.json());
            }
            // The previous object of that name is still being deleted.
            409 => self.count("create-while-deleting"),
            _ => self.error(format!(
                "create {kind} {ns}/{name}: {} {}",
                r.status,
                r.text()
            )),
        }
    }

    fn pick_object(&mut self) -> Option<(&'static str, String, String)> {
        let keys: Vec<_> = self.model.keys().cloned().collect();
        (!keys.is_empty()).then(|| self.rng.pick(&keys).clone())
    }

    async fn patch(
        &mut self,
        key: &(&'static str, String, String),
        patch: Value,
        what: &'static str,
    ) {
        let path = format!("{}/{}", Self::path(key.0, &key.1), key.2);
        let r = self.fed_api.merge_patch(&path, &patch).await;
        if r.status == 200 {
            self.count(what);
            self.model.insert(key.clone(), r.json());
        } else {
            self.error(format!("{what} {path}: {} {}", r.status, r.text()));
        }
    }

    async fn update(&mut self) {
        let Some(key) = self.pick_object() else {
            return;
        };
        let v = self.rng.next() % 1000;
        if key.0 == "ConfigMap" {
            self.patch(
                &key,
                json!({"data": {"v": v.to_string()}}),
                "update-configmap",
            )
            .await;
        } else if self.rng.below(2) == 0 {
            let n = self.rng.below(9);
            self.patch(&key, json!({"spec": {"replicas": n}}), "scale-deployment")
                .await;
        } else {
            let patch = json!({"spec": {"template": {"spec": {"containers":
                [{"name": "c", "image": format!("nginx:1.{v}")}]}}}});
            self.patch(&key, patch, "image-deployment").await;
        }
    }

    /// New placement annotations on an object (the old keys removed).
    async fn replace(&mut self) {
        let Some(key) = self.pick_object() else {
            return;
        };
        let mut annotations = json!({"skein.io/clusters": null, "skein.io/cluster-selector": null});
        if let Some(new) = self.placement().as_object() {
            for (k, v) in new {
                annotations[k] = v.clone();
            }
        }
        self.patch(
            &key,
            json!({"metadata": {"annotations": annotations}}),
            "re-place",
        )
        .await;
    }

    async fn delete(&mut self) {
        let Some(key) = self.pick_object() else {
            return;
        };
        let path = format!("{}/{}", Self::path(key.0, &key.1), key.2);
        let r = self.fed_api.delete(&path).await;
        if matches!(r.status.as_u16(), 200 | 202) {
            self.count("delete");
            self.model.remove(&key);
        } else {
            self.error(format!("delete {path}: {} {}", r.status, r.text()));
        }
    }

    async fn relabel(&mut self) {
        let names: Vec<String> = self.joined.keys().cloned().collect();
        let name = self.rng.pick(&names).clone();
        let region = (*self.rng.pick(&REGIONS)).to_owned();
        let tier = (*self.rng.pick(&TIERS)).to_owned();
        self.labels
            .insert(name.clone(), (region.clone(), tier.clone()));
        if !self.joined[&name] {
            return;
        }
        let path = format!("/apis/federation.skein.io/v1alpha1/clusters/{name}");
        let patch = json!({"metadata": {"labels": {"region": region, "tier": tier}}});
        let r = self.fed_api.merge_patch(&path, &patch).await;
        match r.status.as_u16() {
            200 => self.count("relabel-cluster"),
            // Unjoined a moment ago and already gone.
            404 => {}
            _ => self.error(format!("relabel {name}: {} {}", r.status, r.text())),
        }
    }

    fn fault(&mut self) {
        let free = self.healthy();
        if free.is_empty() {
            return;
        }
        let name = self.rng.pick(&free).clone();
        let proxy = self.p.proxy(&name);
        let what = match self.rng.below(5) {
            0 => {
                let ms = 100 + self.rng.below(700) as u64;
                proxy.set(Fault::Latency(Duration::from_millis(ms)));
                "fault-latency"
            }
            1 => {
                proxy.set(Fault::Reset);
                proxy.cut();
                "fault-reset"
            }
            2 => {
                proxy.set(Fault::BlackHole);
                "fault-never-answers"
            }
            3 => {
                proxy.partition();
                "fault-partition"
            }
            _ => {
                proxy.cut();
                "fault-cut"
            }
        };
        let secs = 1 + self.rng.below(6) as u64;
        self.fault_until
            .insert(name, Instant::now() + Duration::from_secs(secs));
        self.count(what);
    }

    /// Unjoins a healthy member (never one with a fault: see the module
    /// documentation), keeping at least two joined.
    async fn unjoin(&mut self) {
        let joined = self.joined.values().filter(|j| **j).count();
        let healthy = self.healthy();
        if joined <= 2 || healthy.is_empty() {
            return;
        }
        let name = self.rng.pick(&healthy).clone();
        let path = format!("/apis/federation.skein.io/v1alpha1/clusters/{name}");
        let r = self.fed_api.delete(&path).await;
        if matches!(r.status.as_u16(), 200 | 202) {
            self.count("unjoin");
            self.joined.insert(name.clone(), false);
            self.leaving.insert(name);
        } else {
            self.error(format!("unjoin {name}: {} {}", r.status, r.text()));
        }
    }

    async fn join(&mut self) {
        let out: Vec<String> = self
            .joined
            .iter()
            .filter(|(_, j)| !**j)
            .map(|(n, _)| n.clone())
            .collect();
        if out.is_empty() {
            return;
        }
        let name = self.rng.pick(&out).clone();
        let path = format!("/apis/federation.skein.io/v1alpha1/clusters/{name}");
        if self.fed_api.get(&path).await.status == 200 {
            // Its unjoin is still removing the copies.
            return self.count("join-while-unjoining");
        }
        let (region, tier) = self.labels[&name].clone();
        let mut c = crate::member::cluster(&name, &name);
        c["metadata"]["labels"] = json!({"region": region, "tier": tier});
        let r = self
            .fed_api
            .post("/apis/federation.skein.io/v1alpha1/clusters", &c)
            .await;
        match r.status.as_u16() {
            201 => {
                self.count("join");
                self.joined.insert(name, true);
            }
            409 => self.count("join-while-unjoining"),
            _ => self.error(format!("join {name}: {} {}", r.status, r.text())),
        }
    }

    /// Stops a member and wipes its store; it starts again after
    /// [`WIPED_AWAY`] and a little more.
    fn wipe_member(&mut self) {
        let names = self.healthy();
        // At most one member away at a time.
        if names.is_empty() || !self.down_until.is_empty() {
            return;
        }
        let name = self.rng.pick(&names).clone();
        wipe(self.p.f.member_mut(&name));
        let extra = Duration::from_millis(self.rng.below(3000) as u64);
        self.down_until
            .insert(name, Instant::now() + WIPED_AWAY + extra);
        self.count("wipe-member");
    }

    /// Every member as the checker sees it.
    fn views(&self) -> Vec<MemberView> {
        self.p
            .f
            .members
            .iter()
            .map(|(n, m)| MemberView {
                name: n.clone(),
                api: member_api(m),
                joined: self.joined[n],
            })
            .collect()
    }

    /// Waits up to `timeout` for [`invariants::check`] to find nothing and
    /// for the federation to hold exactly the objects the acknowledged
    /// writes left; records what is left otherwise.
    pub async fn settle(&mut self, timeout: Duration) {
        let start = Instant::now();
        let views = self.views();
        let namespaces: Vec<String> = NAMESPACES.iter().map(|s| (*s).to_owned()).collect();
        loop {
            let mut v = invariants::check(&self.fed_api, &views, &namespaces).await;
            v.extend(self.lost_writes().await);
            if v.is_empty() {
                self.report.settled_in = Some(start.elapsed());
                break;
            }
            if start.elapsed() > timeout {
                self.report.violations = v;
                break;
            }
            tokio::time::sleep(Duration::from_millis(500)).await;
        }
        self.report.event_repeats = invariants::event_repeats(&self.fed_api).await;
        self.report.objects = self.model.len();
    }

    /// Objects the federation holds that the driver's acknowledged writes
    /// do not explain, or lacks, or holds with other content.
    async fn lost_writes(&self) -> Vec<String> {
        let mut out = Vec::new();
        let mut held: BTreeSet<(&'static str, String, String)> = BTreeSet::new();
        for ns in NAMESPACES {
            for kind in ["ConfigMap", "Deployment"] {
                let r = self.fed_api.get(&Self::path(kind, ns)).await;
                if r.status != 200 {
                    out.push(format!("list {kind} in {ns}: {}", r.status));
                    continue;
                }
                for o in crate::http::items(&r.json()) {
                    let name = o["metadata"]["name"]
                        .as_str()
                        .unwrap_or_default()
                        .to_owned();
                    if name == "kube-root-ca.crt" {
                        continue;
                    }
                    let key = (kind, ns.to_owned(), name);
                    match self.model.get(&key) {
                        None => out.push(format!("{kind} {ns}/{} was deleted, yet exists", key.2)),
                        Some(m) => {
                            for f in PLACED {
                                if m.pointer(f) != o.pointer(f) {
                                    out.push(format!(
                                        "{kind} {ns}/{}: {f} is {:?}, the last acknowledged write \
                                         made it {:?}",
                                        key.2,
                                        o.pointer(f),
                                        m.pointer(f)
                                    ));
                                }
                            }
                        }
                    }
                    held.insert(key);
                }
            }
        }
        for key in self.model.keys() {
            if !held.contains(key) {
                out.push(format!(
                    "{} {}/{}: acknowledged, yet gone",
                    key.0, key.1, key.2
                ));
            }
        }
        out
    }
}

/// The text of a report, for test failures and the benchmark.
pub fn summary(r: &Report) -> String {
    let steps: Vec<String> = r.steps.iter().map(|(k, v)| format!("{k} {v}")).collect();
    format!(
        "steps: {}\nobjects at the end: {}\nsettled in: {}\nerrors: {}\nviolations: {}\nrepeated \
         Events: {}",
        steps.join(", "),
        r.objects,
        r.settled_in
            .map_or("never".to_owned(), |d| format!("{d:.1?}")),
        if r.errors.is_empty() {
            "none".to_owned()
        } else {
            r.errors.join("\n  ")
        },
        if r.violations.is_empty() {
            "none".to_owned()
        } else {
            format!("\n  {}", r.violations.join("\n  "))
        },
        if r.event_repeats.is_empty() {
            "none".to_owned()
        } else {
            format!("\n  {}", r.event_repeats.join("\n  "))
        },
    )
}
