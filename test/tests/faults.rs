//! Faults between the federation and its members (issue 31): each member
//! behind a [`FaultProxy`] (latency, resets, a member that never answers,
//! a partition that also cuts open watches), a member whose store is
//! wiped while it is away, and a member answering 500/429/503 (an
//! [`HttpFaultProxy`]). The assertions are what users see: the member
//! copies read through each member's own API, the Clusters' Ready
//! condition, and [`invariants::check`] (copies exactly where placement
//! says, Placements truthful) once the fault is lifted. Timings are
//! printed (`--nocapture`) for the report.

use std::path::PathBuf;
use std::time::{Duration, Instant};

use serde_json::{Value, json};
use skein_tests::fault::{CONNECT_TIMEOUT, Fault, FaultProxy};
use skein_tests::http::Api;
use skein_tests::http_fault::{HttpFault, HttpFaultProxy};
use skein_tests::invariants::{self, MemberView, member_api};
use skein_tests::kubectl_binaries;
use skein_tests::member::{Federation, Member, is_ready};
use skein_tests::proxied::{FAST_HEALTH, Proxied, wipe};
use skein_tests::server::Server;

/// The grace period of [`skein_tests::proxied::FAST_HEALTH`].
const GRACE: Duration = Duration::from_secs(4);

fn kubectl() -> PathBuf {
    kubectl_binaries().first().expect("a kubectl").clone()
}

fn configmap(name: &str) -> Value {
    json!({
        "apiVersion": "v1", "kind": "ConfigMap",
        "metadata": {"name": name, "namespace": "default"},
        "data": {"k": name},
    })
}

async fn create_configmaps(api: &Api, names: &[String]) {
    for n in names {
        api.post("/api/v1/namespaces/default/configmaps", &configmap(n))
            .await
            .expect(201);
    }
}

/// Whether the member behind `api` holds every ConfigMap of `names`.
async fn holds(api: &Api, names: &[String]) -> bool {
    for n in names {
        let r = api
            .get(&format!("/api/v1/namespaces/default/configmaps/{n}"))
            .await;
        if r.status != 200 {
            return false;
        }
    }
    true
}

/// Polls until every member of `on` holds `names`; returns how long that
/// took from `since`, panicking after `timeout`.
async fn until_held(
    p: &Proxied,
    on: &[&str],
    names: &[String],
    since: Instant,
    timeout: Duration,
) -> Duration {
    let apis: Vec<(&str, Api)> = on.iter().map(|n| (*n, member_api(p.f.member(n)))).collect();
    loop {
        let mut all = true;
        for (_, a) in &apis {
            if !holds(a, names).await {
                all = false;
                break;
            }
        }
        if all {
            return since.elapsed();
        }
        assert!(
            since.elapsed() < timeout,
            "{names:?} not on all of {on:?} within {timeout:?}\n--- federation log tail:\n{}",
            skein_tests::kubectl::log_tail(&p.f.fed)
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

/// Polls until the Placements of the ConfigMaps `names` show `cluster`'s
/// copy `Applied` or `Ready`; returns how long that took from `since`.
async fn until_applied(
    p: &Proxied,
    cluster: &str,
    names: &[String],
    since: Instant,
    timeout: Duration,
) -> Duration {
    let api = p.api();
    'poll: loop {
        assert!(
            since.elapsed() < timeout,
            "{cluster}'s copies of {names:?} not Applied within {timeout:?}"
        );
        for n in names {
            let r = api
                .get(&format!(
                    "/apis/federation.skein.io/v1alpha1/namespaces/default/placements/configmap-{n}"
                ))
                .await;
            let applied = r.status == 200
                && r.json()
                    .pointer("/status/clusters")
                    .and_then(Value::as_array)
                    .is_some_and(|ls| {
                        ls.iter().any(|l| {
                            l["name"] == cluster
                                && matches!(l["state"].as_str(), Some("Applied" | "Ready"))
                        })
                    });
            if !applied {
                tokio::time::sleep(Duration::from_millis(50)).await;
                continue 'poll;
            }
        }
        return since.elapsed();
    }
}

/// Polls [`invariants::check`] until it finds nothing; returns how long
/// that took, panicking with the violations after `timeout`.
async fn converged(p: &Proxied, timeout: Duration) -> Duration {
    let start = Instant::now();
    let api = p.api();
    let views = p.views();
    let namespaces = vec!["default".to_owned()];
    loop {
        let mut v = invariants::check(&api, &views, &namespaces).await;
        v.extend(invariants::event_repeats(&api).await);
        if v.is_empty() {
            return start.elapsed();
        }
        assert!(
            start.elapsed() < timeout,
            "not converged within {timeout:?}:\n{}\n--- federation log tail:\n{}",
            v.join("\n"),
            skein_tests::kubectl::log_tail(&p.f.fed)
        );
        tokio::time::sleep(Duration::from_millis(250)).await;
    }
}

/// The member's write requests so far, by verb and resource.
async fn member_writes(api: &Api) -> std::collections::BTreeMap<(String, String), u64> {
    skein_tests::metrics::writes_by_resource(&api.get("/metrics").await.text())
}

fn names(prefix: &str, n: usize) -> Vec<String> {
    (0..n).map(|i| format!("{prefix}-{i}")).collect()
}

/// Latency on one member, resets on another, a third that accepts
/// connections and never answers: each delays only its own copies; each
/// turns its Cluster not Ready only when probes fail; after the fault is
/// lifted every copy is where placement says.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn one_faulty_member_delays_only_itself() {
    let dir = tempfile::tempdir().expect("tempdir");
    let k = kubectl();
    let p = Proxied::start(
        dir.path(),
        &k,
        &[],
        &[("a", ""), ("b", ""), ("c", ""), ("d", "")],
    )
    .await;
    let api = p.api();
    let limit = Duration::from_secs(30);

    // Baseline: no fault.
    let base = names("base", 5);
    let t = Instant::now();
    create_configmaps(&api, &base).await;
    let t_base = until_held(&p, &["a", "b", "c", "d"], &base, t, limit).await;
    println!("baseline: 5 ConfigMaps on 4 members in {t_base:?}");

    // 500 ms on every answer of d: the others are not delayed.
    p.proxy("d").set(Fault::Latency(Duration::from_millis(500)));
    let slow = names("slow", 5);
    let t = Instant::now();
    create_configmaps(&api, &slow).await;
    let t_others = until_held(&p, &["a", "b", "c"], &slow, t, limit).await;
    // Writes reach d at once; its answers (and so the federation's view
    // of its copies) come 500 ms late; it stays Ready (probe timeout 2 s).
    let t_d = until_applied(&p, "d", &slow, t, limit).await;
    println!("latency 500ms on d: others in {t_others:?}, d's copies Applied in {t_d:?}");
    assert!(
        t_others < t_base.max(Duration::from_millis(500)) * 3,
        "a slow member delayed the others: {t_others:?} (baseline {t_base:?})"
    );
    p.wait_ready("d", true, Duration::from_secs(1)).await;
    p.proxy("d").heal();

    // c resets every connection (the open ones too); then b accepts
    // connections and never answers (not even TLS), the open ones stalling.
    // Each turns not Ready; the others go on; lifted, it catches up.
    let cases = [
        ("c", Fault::Reset, ["a", "b", "d"], "resets"),
        ("b", Fault::BlackHole, ["a", "c", "d"], "never answers"),
    ];
    for (faulty, fault, others, what) in cases {
        let t = Instant::now();
        p.proxy(faulty).set(fault);
        if fault == Fault::Reset {
            p.proxy(faulty).cut();
        }
        p.wait_ready(faulty, false, Duration::from_secs(15)).await;
        println!("{faulty} {what}: not Ready after {:?}", t.elapsed());
        let batch = names(what.split(' ').next().unwrap_or(what), 3);
        let t = Instant::now();
        create_configmaps(&api, &batch).await;
        let t_others = until_held(&p, &others, &batch, t, limit).await;
        println!("{faulty} {what}: the others in {t_others:?}");
        assert!(
            t_others < t_base.max(Duration::from_millis(500)) * 3,
            "{faulty} {what} and delayed the others: {t_others:?} (baseline {t_base:?})"
        );
        p.proxy(faulty).heal();
        let t = Instant::now();
        p.wait_ready(faulty, true, Duration::from_secs(30)).await;
        let t_back = until_held(&p, &[faulty], &batch, t, limit).await;
        println!("{faulty} {what} no more: Ready and its copies in {t_back:?}");
    }
    let t_conv = converged(&p, Duration::from_secs(30)).await;
    println!("all invariants hold {t_conv:?} later");
}

fn replicas(api: &Api, name: &str) -> impl std::future::Future<Output = Option<i64>> {
    let api = api.clone();
    let path = format!("/apis/apps/v1/namespaces/default/deployments/{name}");
    async move {
        let r = api.get(&path).await;
        (r.status == 200)
            .then(|| r.json().pointer("/spec/replicas").and_then(Value::as_i64))
            .flatten()
    }
}

/// A partition (new connections black-holed, open ones and their
/// watches cut): the member turns not Ready, its Divided replicas move to
/// the others within the grace period plus 5 s, new objects reach the
/// others; after healing everything converges. Then a member's store is
/// wiped while it is away: it gets its copies back.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn partition_replans_and_a_wiped_member_recovers() {
    let dir = tempfile::tempdir().expect("tempdir");
    let k = kubectl();
    let mut p = Proxied::start(dir.path(), &k, &[], &[("a", ""), ("b", ""), ("c", "")]).await;
    let api = p.api();
    let web = json!({
        "apiVersion": "apps/v1", "kind": "Deployment",
        "metadata": {"name": "web", "namespace": "default", "annotations": {
            "skein.io/replica-preferences": r#"{"rebalance":true,"clusters":{"*":{"weight":1}}}"#}},
        "spec": {
            "replicas": 6,
            "selector": {"matchLabels": {"app": "web"}},
            "template": {"metadata": {"labels": {"app": "web"}},
                "spec": {"containers": [{"name": "web", "image": "nginx:1.25"}]}},
        },
    });
    api.post("/apis/apps/v1/namespaces/default/deployments", &web)
        .await
        .expect(201);
    // The default (`rebalance: false`): b's share moves away and stays.
    let mut steady = web.clone();
    steady["metadata"]["name"] = json!("steady");
    steady["metadata"]["annotations"] = json!({});
    api.post("/apis/apps/v1/namespaces/default/deployments", &steady)
        .await
        .expect(201);
    let members: Vec<Api> = ["a", "b", "c"]
        .iter()
        .map(|n| member_api(p.f.member(n)))
        .collect();
    let split = |want: [Option<i64>; 3]| {
        let members = members.clone();
        async move {
            let mut got = [None; 3];
            for (i, m) in members.iter().enumerate() {
                got[i] = replicas(m, "web").await;
            }
            got == want
        }
    };
    let start = Instant::now();
    while !split([Some(2), Some(2), Some(2)]).await {
        assert!(
            start.elapsed() < Duration::from_secs(30),
            "web never split 2/2/2"
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }

    // Partition b.
    let t0 = Instant::now();
    p.proxy("b").partition();
    p.wait_ready("b", false, Duration::from_secs(15)).await;
    let t_not_ready = t0.elapsed();
    let during = names("during", 3);
    let t = Instant::now();
    create_configmaps(&api, &during).await;
    let t_others = until_held(&p, &["a", "c"], &during, t, Duration::from_secs(30)).await;
    // Re-planned within the grace period plus 5 s of turning not Ready.
    loop {
        let a = replicas(&members[0], "web").await.unwrap_or(0);
        let c = replicas(&members[2], "web").await.unwrap_or(0);
        if a + c == 6 {
            break;
        }
        assert!(
            t0.elapsed() < t_not_ready + GRACE + Duration::from_secs(5),
            "web's replicas not re-planned onto a and c within the grace period + 5 s of b \
             turning not Ready ({t_not_ready:?}): a {a}, c {c}\n--- federation log tail:\n{}",
            skein_tests::kubectl::log_tail(&p.f.fed)
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    let t_replan = t0.elapsed();
    println!(
        "partition of b: not Ready after {t_not_ready:?}, new objects on the others in \
         {t_others:?}, replicas re-planned after {t_replan:?} (grace {GRACE:?})"
    );

    // Heal: b is Ready again, gets what it missed and its share back.
    let b_writes = member_writes(&members[1]).await;
    let t = Instant::now();
    p.proxy("b").heal();
    p.wait_ready("b", true, Duration::from_secs(30)).await;
    let t_ready = t.elapsed();
    until_held(&p, &["b"], &during, t, Duration::from_secs(30)).await;
    while !split([Some(2), Some(2), Some(2)]).await {
        assert!(
            t.elapsed() < Duration::from_secs(30),
            "web never split 2/2/2 again"
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    let t_split = t.elapsed();
    let t_conv = converged(&p, Duration::from_secs(30)).await;
    println!(
        "healed: b Ready after {t_ready:?}, 2/2/2 after {t_split:?}, invariants {t_conv:?} later"
    );
    // b was sent only what changed for it while it was away: the
    // ConfigMaps made meanwhile, and `steady` scaled to the 0 replicas it
    // keeps (its 2 moved to a and c for good). `web`, planned down to 0
    // while b was away and back to the 2 b holds now, is not written.
    let healed_writes = skein_tests::metrics::growth(&b_writes, &member_writes(&members[1]).await);
    let key = |v: &str, r: &str| (v.to_owned(), r.to_owned());
    assert_eq!(
        healed_writes,
        std::collections::BTreeMap::from([
            (key("APPLY", "configmaps"), during.len() as u64),
            (key("APPLY", "deployments"), 1),
        ]),
        "b's writes from the heal until converged, by verb and resource"
    );
    assert_eq!(replicas(&members[1], "steady").await, Some(0));

    // c goes away (the federation sees it not Ready), its store is wiped,
    // and it comes back on the same port with the same certificates.
    let t = Instant::now();
    wipe(p.f.member_mut("c"));
    p.wait_ready("c", false, Duration::from_secs(15)).await;
    p.f.member_mut("c").run().await;
    let wiped = member_api(p.f.member("c"));
    assert!(
        !holds(&wiped, &during).await,
        "the wiped member still holds its copies"
    );
    let t_back = Instant::now();
    until_held(&p, &["c"], &during, t_back, Duration::from_secs(30)).await;
    let t_conv = converged(&p, Duration::from_secs(30)).await;
    println!(
        "c wiped while away ({:?} until not Ready): its copies back {:?} after it restarted, \
         invariants hold {t_conv:?} later",
        t_back.duration_since(t),
        t_back.elapsed()
    );

    // Again, but back at once, before the federation sees it not Ready:
    // its syncer's watches resume on a store that went back in time, and
    // it must notice (the member's version is behind its own) and list.
    wipe(p.f.member_mut("c"));
    p.f.member_mut("c").run().await;
    let wiped = member_api(p.f.member("c"));
    assert!(
        !holds(&wiped, &during).await,
        "the wiped member still holds its copies"
    );
    let t_back = Instant::now();
    until_held(&p, &["c"], &during, t_back, Duration::from_secs(30)).await;
    let t_conv = converged(&p, Duration::from_secs(30)).await;
    println!(
        "c wiped and back at once: its copies back {:?} after it restarted, invariants hold \
         {t_conv:?} later",
        t_back.elapsed()
    );
}

/// A member unjoined while unreachable keeps its copies (it cannot be
/// told), and nothing waits on it afterwards: its Placement lines go, and
/// deleting an object it held is not held up by the cleanup finalizer.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn unjoining_an_unreachable_member_leaves_nothing_waiting() {
    let dir = tempfile::tempdir().expect("tempdir");
    let k = kubectl();
    let p = Proxied::start(dir.path(), &k, &[], &[("a", ""), ("b", "")]).await;
    let api = p.api();
    let x = names("x", 1);
    let t = Instant::now();
    create_configmaps(&api, &x).await;
    until_held(&p, &["a", "b"], &x, t, Duration::from_secs(30)).await;
    p.proxy("b").set(Fault::Reset);
    p.proxy("b").cut();
    p.wait_ready("b", false, Duration::from_secs(15)).await;
    api.delete("/apis/federation.skein.io/v1alpha1/clusters/b")
        .await
        .expect(200);
    let gone = Instant::now();
    loop {
        let c = api
            .get("/apis/federation.skein.io/v1alpha1/clusters/b")
            .await;
        if c.status == 404 {
            break;
        }
        assert!(
            gone.elapsed() < Duration::from_secs(30),
            "Cluster b not released: {}",
            c.status
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    let placement = format!(
        "/apis/federation.skein.io/v1alpha1/namespaces/default/placements/configmap-{}",
        x[0]
    );
    let t = Instant::now();
    loop {
        let pl = api.get(&placement).await;
        let lines: Vec<String> = pl.json()["status"]["clusters"]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(|c| c["name"].as_str().map(str::to_owned))
            .collect();
        if lines == ["a"] {
            break;
        }
        assert!(
            t.elapsed() < Duration::from_secs(10),
            "the Placement still lists {lines:?} after b was released"
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    api.delete(&format!("/api/v1/namespaces/default/configmaps/{}", x[0]))
        .await
        .expect(200);
    let t = Instant::now();
    loop {
        let r = api
            .get(&format!("/api/v1/namespaces/default/configmaps/{}", x[0]))
            .await;
        if r.status == 404 {
            break;
        }
        assert!(
            t.elapsed() < Duration::from_secs(10),
            "the deleted ConfigMap is still there: {}",
            r.json()["metadata"]
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    println!("deleted {:?} after b's release", t.elapsed());
}

/// A member whose API answers 503, 429 (with `Retry-After`) or 500
/// instead of serving (an HTTP fault proxy that terminates TLS with the
/// member's own certificate): its copies wait, its Placement lines say
/// `Failed`, the other members are not delayed; with the probes failing
/// too it turns not Ready; once it serves again everything converges.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn http_errors_from_one_member() {
    let dir = tempfile::tempdir().expect("tempdir");
    let k = kubectl();
    let fed = Server::start(&dir.path().join("federation"), &FAST_HEALTH).await;
    let mut members = Vec::new();
    for n in ["a", "b", "c"] {
        members.push((n.to_owned(), Member::start(&dir.path().join(n), &[]).await));
    }
    let c_dir = members[2].1.kubeconfig_path();
    let http = HttpFaultProxy::start(c_dir.parent().expect("the data dir"), members[2].1.port)
        .unwrap_or_else(|e| panic!("{e}"));
    let joined: Vec<(&str, String)> = members
        .iter()
        .map(|(n, m)| {
            let kc = m.kubeconfig();
            (n.as_str(), if n == "c" { http.kubeconfig(&kc) } else { kc })
        })
        .collect();
    skein_tests::member::join(&k, &fed, &joined);
    let f = Federation { fed, members };
    for n in ["a", "b", "c"] {
        f.wait_cluster(n, Duration::from_secs(30), |c| {
            is_ready(c) && c.pointer("/status/servedResources").is_some()
        })
        .await;
    }
    let api = Api::new(&f.fed);
    let apis: Vec<Api> = ["a", "b", "c"]
        .iter()
        .map(|n| member_api(f.member(n)))
        .collect();
    let views: Vec<MemberView> = ["a", "b", "c"]
        .iter()
        .zip(&apis)
        .map(|(n, a)| MemberView {
            name: (*n).to_owned(),
            api: a.clone(),
            joined: true,
        })
        .collect();
    let namespaces = vec!["default".to_owned()];
    for (round, (code, probes)) in [(500, false), (503, false), (429, false), (500, true)]
        .into_iter()
        .enumerate()
    {
        http.set(HttpFault::Status { code, probes });
        let t = Instant::now();
        if probes {
            f.wait_cluster("c", Duration::from_secs(15), |c| !is_ready(c))
                .await;
            println!(
                "{code} on every request of c: not Ready after {:?}",
                t.elapsed()
            );
        }
        let batch = names(&format!("http-{round}-{code}"), 3);
        let t = Instant::now();
        create_configmaps(&api, &batch).await;
        let held = |i: usize| holds(&apis[i], &batch);
        while !(held(0).await && held(1).await) {
            assert!(
                t.elapsed() < Duration::from_secs(10),
                "{code}: not on a and b"
            );
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
        let t_others = t.elapsed();
        assert!(!held(2).await, "{code}: the proxy let a write through");
        // The Placement tells why c has no copy (a 500 on the probes
        // makes c not Ready: then it is simply not chosen).
        if !probes {
            let path = format!(
                "/apis/federation.skein.io/v1alpha1/namespaces/default/placements/configmap-{}",
                batch[0]
            );
            loop {
                let r = api.get(&path).await;
                let p = if r.status == 200 {
                    r.json()
                } else {
                    Value::Null
                };
                let line = p
                    .pointer("/status/clusters")
                    .and_then(Value::as_array)
                    .and_then(|ls| ls.iter().find(|l| l["name"] == "c").cloned());
                // Each fails at once with the member's message (the
                // syncer retries on its own backoff, not inside the call
                // until it times out).
                if line.as_ref().is_some_and(|l| {
                    l["state"] == "Failed"
                        && l["message"]
                            .as_str()
                            .is_some_and(|m| m.contains("injected"))
                }) {
                    println!("{code}: c's Placement line {}", line.unwrap_or_default());
                    break;
                }
                assert!(
                    t.elapsed() < Duration::from_secs(20),
                    "{code}: c's line is not Failed: {line:?}"
                );
                tokio::time::sleep(Duration::from_millis(100)).await;
            }
        }
        http.set(HttpFault::None);
        let t = Instant::now();
        loop {
            let mut v = invariants::check(&api, &views, &namespaces).await;
            v.extend(invariants::event_repeats(&api).await);
            if v.is_empty() {
                break;
            }
            assert!(
                t.elapsed() < Duration::from_secs(30),
                "{code} lifted: not converged:\n{}",
                v.join("\n")
            );
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
        println!(
            "{code} from c (probes too: {probes}): a and b in {t_others:?}; converged {:?} \
             after it was lifted ({} answers made up)",
            t.elapsed(),
            http.answered()
        );
    }
}

/// A proxy misconfigured (upstream not listening, a kubeconfig that does
/// not name its upstream) is a clear error at once, never a hang.
#[test]
fn a_misconfigured_proxy_fails_clearly() {
    let port = skein_tests::etcd::free_port();
    let t = Instant::now();
    let err = FaultProxy::start(std::net::SocketAddr::from(([127, 0, 0, 1], port)))
        .err()
        .expect("nothing listens on the upstream");
    assert!(t.elapsed() < CONNECT_TIMEOUT, "took {:?}", t.elapsed());
    let text = err.to_string();
    assert!(
        text.contains(&format!("127.0.0.1:{port}")) && text.contains("does not accept connections"),
        "{text}"
    );
    // A listener that goes away after the start: connections through the
    // proxy are reset at once and counted, not left hanging. Its port is
    // held for the whole test by a second socket (SO_REUSEPORT) that never
    // listens, so it refuses connections once the listener is gone, and
    // no server another test starts meanwhile can take the port (a port
    // released and bound again could be taken in between).
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("a runtime for the sockets");
    let _in_rt = rt.enter();
    let shared_port = || {
        let s = tokio::net::TcpSocket::new_v4()?;
        s.set_reuseaddr(true)?;
        s.set_reuseport(true)?;
        Ok::<_, std::io::Error>(s)
    };
    let held = shared_port()
        .and_then(|s| {
            s.bind(std::net::SocketAddr::from(([127, 0, 0, 1], 0)))?;
            Ok(s)
        })
        .expect("a loopback port held without listening");
    let upstream = held.local_addr().expect("addr");
    let listener = shared_port()
        .and_then(|s| {
            s.bind(upstream)?;
            s.listen(16)
        })
        .expect("the upstream listens on the held port");
    let proxy = FaultProxy::start(upstream).expect("the upstream listens");
    drop(listener);
    let t = Instant::now();
    let mut s = std::net::TcpStream::connect(proxy.addr).expect("the proxy accepts");
    s.set_read_timeout(Some(Duration::from_secs(10)))
        .expect("timeout");
    use std::io::{Read, Write};
    let _ = s.write_all(b"GET / HTTP/1.1\r\n\r\n");
    let mut buf = [0u8; 16];
    let n = s.read(&mut buf);
    assert!(
        matches!(n, Ok(0) | Err(_)) && t.elapsed() < Duration::from_secs(5),
        "a connection to a dead upstream must end at once: {n:?} after {:?}",
        t.elapsed()
    );
    // The proxy counts the refused upstream connection before it resets the
    // client; allow its thread a moment to be observed from this one.
    let seen = Instant::now();
    while proxy.upstream_errors() == 0 && seen.elapsed() < Duration::from_secs(2) {
        std::thread::sleep(Duration::from_millis(10));
    }
    assert_eq!(proxy.upstream_errors(), 1, "read gave {n:?}");
    let wrong = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        proxy.kubeconfig("server: https://127.0.0.1:1")
    }));
    let msg = wrong.expect_err("a kubeconfig not naming the upstream is refused");
    let msg = msg.downcast_ref::<String>().cloned().unwrap_or_default();
    assert!(msg.contains("does not name the proxy's upstream"), "{msg}");
}
