//! The workload simulator's Nodes, scheduler, Pod lifecycle, EndpointSlices
//! and LoadBalancer addresses, on real `skein serve --role=member
//! --simulate-workloads` processes, as kubectl 1.35 and 1.32 show them:
//! `get nodes`, `wait --for=condition=Ready`, `describe pod` of an
//! unschedulable Pod, capacity that frees up, the never-ready and fail
//! annotations, `delete pod`, `get endpointslices`, `get svc` EXTERNAL-IP.
//! A member without `--simulate-workloads` has no Nodes and its Pods stay
//! Pending without conditions.

use std::path::Path;
use std::time::{Duration, Instant};

use serde_json::{Value, json};
use skein_tests::cli::*;
use skein_tests::kubectl_binaries;
use skein_tests::server::Server;

/// The simulated cluster of these tests: 3 Nodes of 2 CPUs in two zones.
const SIM_FLAGS: &[&str] = &[
    "--role=member",
    "--simulate-workloads",
    "--sim-nodes=3",
    "--sim-node-cpu=2",
    "--sim-node-memory=8Gi",
    "--sim-region=eu-test",
    "--sim-zones=zone-a,zone-b",
    "--sim-pod-ready-delay=200ms",
    "--sim-job-duration=1s",
    "--sim-lb-range=172.31.200.0/29",
];

/// A running member and its scratch directory.
struct Member {
    server: Server,
    dir: tempfile::TempDir,
}

impl Member {
    async fn start(flags: &[&str]) -> Member {
        let dir = tempfile::tempdir().expect("tempdir");
        let server = Server::start(&dir.path().join("data"), flags).await;
        Member { server, dir }
    }

    /// Writes `object` as a manifest and `kubectl create -f`s it.
    fn create(&self, k: &Path, ns: &str, object: &Value) {
        let name = object["metadata"]["name"].as_str().unwrap_or("object");
        let path = self
            .dir
            .path()
            .join(format!("{ns}-{name}-{}.json", rand_suffix()));
        std::fs::write(&path, serde_json::to_vec(object).expect("JSON")).expect("write");
        let file = path.to_string_lossy().into_owned();
        let out = ok(k, &self.server, &["create", "-f", &file, "-n", ns]);
        assert!(out.ends_with(" created\n"), "create {object}: {out}");
    }
}

fn rand_suffix() -> u128 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_nanos())
        .unwrap_or_default()
}

/// Polls `check` until it returns `Some`, for up to `limit`.
fn eventually<T>(what: &str, limit: Duration, mut check: impl FnMut() -> Option<T>) -> T {
    let start = Instant::now();
    loop {
        if let Some(v) = check() {
            return v;
        }
        assert!(start.elapsed() < limit, "timed out waiting for {what}");
        std::thread::sleep(Duration::from_millis(100));
    }
}

/// A one-container Pod, with optional CPU request, node selector and
/// annotations.
fn pod(name: &str, cpu: Option<&str>, node: Option<&str>, annotations: &[(&str, &str)]) -> Value {
    let mut p = json!({
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name, "labels": {"app": name}},
        "spec": {"containers": [{"name": "app", "image": "nginx:1.27"}]},
    });
    if let Some(cpu) = cpu {
        p["spec"]["containers"][0]["resources"] = json!({"requests": {"cpu": cpu}});
    }
    if let Some(node) = node {
        p["spec"]["nodeSelector"] = json!({"kubernetes.io/hostname": node});
    }
    for (k, v) in annotations {
        p["metadata"]["annotations"][*k] = json!(v);
    }
    p
}

fn jsonpath(k: &Path, m: &Member, ns: &str, what: &str, path: &str) -> String {
    ok(
        k,
        &m.server,
        &["get", what, "-n", ns, "-o", &format!("jsonpath={path}")],
    )
}

/// `kubectl wait --for=condition=Ready pod/<pod>` (20 s); its output.
fn wait_ready(k: &Path, m: &Member, ns: &str, pod: &str) -> String {
    let target = format!("pod/{pod}");
    ok(
        k,
        &m.server,
        &[
            "wait",
            "--for=condition=Ready",
            &target,
            "-n",
            ns,
            "--timeout=20s",
        ],
    )
}

fn namespace(k: &Path, m: &Member, ns: &str) {
    ok(k, &m.server, &["create", "namespace", ns]);
}

#[tokio::test]
async fn nodes_are_registered_with_zones_capacity_and_heartbeats() {
    let m = Member::start(SIM_FLAGS).await;
    for k in kubectl_binaries() {
        let k = k.as_path();
        let table = ok(
            k,
            &m.server,
            &[
                "get",
                "nodes",
                "-L",
                "topology.kubernetes.io/region,topology.kubernetes.io/zone",
            ],
        );
        assert_eq!(
            header(&table),
            [
                "NAME", "STATUS", "ROLES", "AGE", "VERSION", "REGION", "ZONE"
            ],
            "{table}"
        );
        let rows: Vec<Vec<&str>> = cells(&table).into_iter().skip(1).collect();
        assert_eq!(rows.len(), 3, "{table}");
        for (i, row) in rows.iter().enumerate() {
            assert_eq!(row[0], format!("sim-node-{i}"), "{table}");
            assert_eq!(row[1], "Ready", "{table}");
            assert_eq!(row[4], "v1.33.0", "{table}");
            assert_eq!(row[5], "eu-test", "{table}");
            assert_eq!(row[6], ["zone-a", "zone-b"][i % 2], "{table}");
        }
        let node = get_json(k, &m.server, &["get", "node", "sim-node-1"]);
        assert_eq!(node["status"]["capacity"]["cpu"], "2");
        assert_eq!(node["status"]["allocatable"]["memory"], "8Gi");
        assert_eq!(node["status"]["allocatable"]["pods"], "110");
        assert_eq!(node["metadata"]["labels"]["kubernetes.io/os"], "linux");
        assert_eq!(node["status"]["nodeInfo"]["architecture"], "amd64");
        let conditions: Vec<(String, String)> = node["status"]["conditions"]
            .as_array()
            .expect("conditions")
            .iter()
            .map(|c| {
                (
                    c["type"].as_str().unwrap_or("").to_owned(),
                    c["status"].as_str().unwrap_or("").to_owned(),
                )
            })
            .collect();
        assert_eq!(
            conditions,
            [
                ("MemoryPressure".into(), "False".into()),
                ("DiskPressure".into(), "False".into()),
                ("PIDPressure".into(), "False".into()),
                ("Ready".into(), "True".into()),
            ]
        );
        let leases = ok(k, &m.server, &["get", "leases", "-n", "kube-node-lease"]);
        assert_eq!(
            column(&leases, 1),
            ["HOLDER", "sim-node-0", "sim-node-1", "sim-node-2"],
            "{leases}"
        );
        let described = ok(k, &m.server, &["describe", "node", "sim-node-0"]);
        assert!(
            described.contains("KubeletReady") && described.contains("10.89.0.2"),
            "{described}"
        );
    }
    // A simulated Node that is deleted registers again, as a kubelet does.
    let k = kubectl_binaries().remove(0);
    ok(&k, &m.server, &["delete", "node", "sim-node-2"]);
    eventually("sim-node-2 to come back", Duration::from_secs(10), || {
        kubectl(&k, &m.server, &["get", "node", "sim-node-2"])
            .status
            .success()
            .then_some(())
    });
}

#[tokio::test]
async fn pods_are_scheduled_run_and_become_ready() {
    let m = Member::start(SIM_FLAGS).await;
    for (i, k) in kubectl_binaries().iter().enumerate() {
        let k = k.as_path();
        let ns = format!("life-{i}");
        namespace(k, &m, &ns);

        // A bare Pod: bound, Running with an IP from its Node, then Ready.
        let out = ok(k, &m.server, &["run", "web", "--image=nginx", "-n", &ns]);
        assert_eq!(out, "pod/web created\n");
        let out = wait_ready(k, &m, &ns, "web");
        assert_eq!(out, "pod/web condition met\n");
        let table = ok(
            k,
            &m.server,
            &["get", "pod", "web", "-n", &ns, "-o", "wide"],
        );
        assert_eq!(cell(&table, 1, 1), "1/1", "{table}");
        assert_eq!(cell(&table, 1, 2), "Running", "{table}");
        assert!(cell(&table, 1, 5).starts_with("10.244."), "{table}");
        assert!(cell(&table, 1, 6).starts_with("sim-node-"), "{table}");
        let p = get_json(k, &m.server, &["get", "pod", "web", "-n", &ns]);
        assert_eq!(p["status"]["containerStatuses"][0]["ready"], true);
        assert_eq!(
            p["status"]["containerStatuses"][0]["image"],
            "docker.io/library/nginx:latest"
        );
        assert!(p["status"]["startTime"].is_string());
        // Events are recorded right after the writes they describe.
        let events = ["Scheduled", "Pulled", "Created", "Started"];
        eventually("web's events", Duration::from_secs(10), || {
            let described = ok(k, &m.server, &["describe", "pod", "web", "-n", &ns]);
            events.iter().all(|e| described.contains(e)).then_some(())
        });

        // Bigger than any Node: Pending, Unschedulable with kube-scheduler's
        // message, shown by describe.
        m.create(k, &ns, &pod("huge", Some("3"), None, &[]));
        let message = "0/3 nodes are available: 3 Insufficient cpu. preemption: 0/3 nodes are available: 3 No preemption victims found for incoming pod.";
        let reason = eventually("huge to be unschedulable", Duration::from_secs(10), || {
            let r = jsonpath(
                k,
                &m,
                &ns,
                "pod/huge",
                "{.status.conditions[?(@.type==\"PodScheduled\")].reason}",
            );
            (!r.is_empty()).then_some(r)
        });
        assert_eq!(reason, "Unschedulable");
        let text = jsonpath(
            k,
            &m,
            &ns,
            "pod/huge",
            "{.status.conditions[?(@.type==\"PodScheduled\")].message}",
        );
        assert_eq!(text, message);
        eventually(
            "huge's FailedScheduling event",
            Duration::from_secs(10),
            || {
                let described = ok(k, &m.server, &["describe", "pod", "huge", "-n", &ns]);
                (described.contains("FailedScheduling") && described.contains(message))
                    .then_some(())
            },
        );
        assert_eq!(
            jsonpath(k, &m, &ns, "pod/huge", "{.status.phase}"),
            "Pending"
        );

        // Capacity is real: fill sim-node-0, the next Pod waits, and runs
        // once the first is deleted.
        m.create(k, &ns, &pod("fill", Some("1500m"), Some("sim-node-0"), &[]));
        wait_ready(k, &m, &ns, "fill");
        m.create(k, &ns, &pod("next", Some("1"), Some("sim-node-0"), &[]));
        let why = eventually("next to be unschedulable", Duration::from_secs(10), || {
            let r = jsonpath(
                k,
                &m,
                &ns,
                "pod/next",
                "{.status.conditions[?(@.type==\"PodScheduled\")].message}",
            );
            (!r.is_empty()).then_some(r)
        });
        assert_eq!(
            why,
            "0/3 nodes are available: 1 Insufficient cpu, 2 node(s) didn't match Pod's node affinity/selector. preemption: 0/3 nodes are available: 1 No preemption victims found for incoming pod, 2 Preemption is not helpful for scheduling."
        );
        let out = ok(k, &m.server, &["delete", "pod", "fill", "-n", &ns]);
        assert!(out.starts_with("pod \"fill\" deleted"), "{out}");
        wait_ready(k, &m, &ns, "next");
        assert_eq!(
            jsonpath(k, &m, &ns, "pod/next", "{.spec.nodeName}"),
            "sim-node-0"
        );

        // Never ready: Running, its container running, never Ready.
        ok(
            k,
            &m.server,
            &[
                "run",
                "lazy",
                "--image=nginx",
                "--annotations=sim.skein.io/never-ready=true",
                "-n",
                &ns,
            ],
        );
        eventually("lazy to run", Duration::from_secs(10), || {
            (jsonpath(k, &m, &ns, "pod/lazy", "{.status.phase}") == "Running").then_some(())
        });
        let out = kubectl(
            k,
            &m.server,
            &[
                "wait",
                "--for=condition=Ready",
                "pod/lazy",
                "-n",
                &ns,
                "--timeout=1s",
            ],
        );
        assert!(!out.status.success(), "lazy became Ready");
        let table = ok(k, &m.server, &["get", "pod", "lazy", "-n", &ns]);
        assert_eq!(cell(&table, 1, 1), "0/1", "{table}");
        assert_eq!(cell(&table, 1, 2), "Running", "{table}");
        assert!(
            jsonpath(
                k,
                &m,
                &ns,
                "pod/lazy",
                "{.status.containerStatuses[0].state.running.startedAt}"
            )
            .ends_with('Z')
        );

        // Failing: a restarting container crash-loops; one that never
        // restarts ends the Pod Failed.
        ok(
            k,
            &m.server,
            &[
                "run",
                "crash",
                "--image=busybox",
                "--annotations=sim.skein.io/fail=true",
                "-n",
                &ns,
            ],
        );
        ok(
            k,
            &m.server,
            &[
                "run",
                "once",
                "--image=busybox",
                "--restart=Never",
                "--annotations=sim.skein.io/fail=true",
                "-n",
                &ns,
            ],
        );
        let table = eventually("crash to crash-loop", Duration::from_secs(10), || {
            let t = ok(k, &m.server, &["get", "pod", "crash", "-n", &ns]);
            (cell(&t, 1, 2) == "CrashLoopBackOff").then_some(t)
        });
        assert_eq!(cell(&table, 1, 1), "0/1", "{table}");
        assert_eq!(cell(&table, 1, 3), "1", "restarts: {table}");
        assert_eq!(
            jsonpath(
                k,
                &m,
                &ns,
                "pod/crash",
                "{.status.containerStatuses[0].lastState.terminated.exitCode}"
            ),
            "1"
        );
        eventually("once to fail", Duration::from_secs(10), || {
            (jsonpath(k, &m, &ns, "pod/once", "{.status.phase}") == "Failed").then_some(())
        });
        let table = ok(k, &m.server, &["get", "pod", "once", "-n", &ns]);
        assert_eq!(cell(&table, 1, 2), "Error", "{table}");

        // The annotation on the Pod's controller counts too (a
        // ReplicationController: no simulator controller manages it).
        m.create(
            k,
            &ns,
            &json!({
                "apiVersion": "v1",
                "kind": "ReplicationController",
                "metadata": {"name": "legacy", "annotations": {"sim.skein.io/fail": "true"}},
                "spec": {
                    "replicas": 0,
                    "selector": {"app": "legacy"},
                    "template": {
                        "metadata": {"labels": {"app": "legacy"}},
                        "spec": {"containers": [{"name": "app", "image": "nginx"}]},
                    },
                },
            }),
        );
        let uid = jsonpath(k, &m, &ns, "rc/legacy", "{.metadata.uid}");
        let mut owned = pod("owned", None, None, &[]);
        owned["metadata"]["ownerReferences"] = json!([{
            "apiVersion": "v1", "kind": "ReplicationController", "name": "legacy",
            "uid": uid, "controller": true, "blockOwnerDeletion": true,
        }]);
        m.create(k, &ns, &owned);
        eventually("owned to crash-loop", Duration::from_secs(10), || {
            let t = ok(k, &m.server, &["get", "pod", "owned", "-n", &ns]);
            (cell(&t, 1, 2) == "CrashLoopBackOff").then_some(())
        });
        ok(k, &m.server, &["delete", "rc", "legacy", "-n", &ns]);

        // A running Pod held by a finalizer is killed when deleted (Failed,
        // exit code 137) and goes once the finalizer is removed.
        let mut held = pod("held", None, None, &[]);
        held["metadata"]["finalizers"] = json!(["example.com/hold"]);
        m.create(k, &ns, &held);
        wait_ready(k, &m, &ns, "held");
        ok(
            k,
            &m.server,
            &["delete", "pod", "held", "-n", &ns, "--wait=false"],
        );
        eventually("held to be killed", Duration::from_secs(10), || {
            (jsonpath(k, &m, &ns, "pod/held", "{.status.phase}") == "Failed").then_some(())
        });
        assert_eq!(
            jsonpath(
                k,
                &m,
                &ns,
                "pod/held",
                "{.status.containerStatuses[0].state.terminated.exitCode}"
            ),
            "137"
        );
        ok(
            k,
            &m.server,
            &[
                "patch",
                "pod",
                "held",
                "-n",
                &ns,
                "--type=json",
                "-p",
                r#"[{"op":"remove","path":"/metadata/finalizers"}]"#,
            ],
        );
        eventually("held to go", Duration::from_secs(10), || {
            (!kubectl(k, &m.server, &["get", "pod", "held", "-n", &ns])
                .status
                .success())
            .then_some(())
        });

        // Deleting completes.
        for name in ["web", "huge", "next", "lazy", "crash", "once"] {
            let out = ok(k, &m.server, &["delete", "pod", name, "-n", &ns]);
            assert!(out.starts_with(&format!("pod \"{name}\" deleted")), "{out}");
        }
        let out = ok(k, &m.server, &["get", "pods", "-n", &ns]);
        assert_eq!(out, "");
    }
}

#[tokio::test]
async fn services_get_endpoint_slices_and_load_balancer_addresses() {
    let m = Member::start(SIM_FLAGS).await;
    for (i, k) in kubectl_binaries().iter().enumerate() {
        let k = k.as_path();
        let ns = format!("svc-{i}");
        namespace(k, &m, &ns);
        for (name, ready) in [("web-a", true), ("web-b", true), ("web-c", false)] {
            let mut p = pod(name, None, None, &[]);
            p["metadata"]["labels"] = json!({"app": "web"});
            p["spec"]["containers"][0]["ports"] = json!([{"name": "http", "containerPort": 8080}]);
            if !ready {
                p["metadata"]["annotations"] = json!({"sim.skein.io/never-ready": "true"});
            }
            m.create(k, &ns, &p);
        }
        m.create(
            k,
            &ns,
            &json!({
                "apiVersion": "v1",
                "kind": "Service",
                "metadata": {"name": "web"},
                "spec": {"selector": {"app": "web"}, "ports": [
                    {"name": "http", "port": 80, "targetPort": "http"}
                ]},
            }),
        );
        ok(
            k,
            &m.server,
            &[
                "wait",
                "--for=condition=Ready",
                "pod/web-a",
                "pod/web-b",
                "-n",
                &ns,
                "--timeout=20s",
            ],
        );
        let ip = |name: &str| jsonpath(k, &m, &ns, &format!("pod/{name}"), "{.status.podIP}");
        let (a, b) = (ip("web-a"), ip("web-b"));
        let c = eventually("web-c's address", Duration::from_secs(10), || {
            let c = ip("web-c");
            (!c.is_empty()).then_some(c)
        });
        // Every Pod with an address is in the slice, each with its
        // readiness; the port is resolved by name.
        let slice = eventually(
            "the slice to list all three",
            Duration::from_secs(10),
            || {
                let list = get_json(
                    k,
                    &m.server,
                    &[
                        "get",
                        "endpointslices",
                        "-n",
                        &ns,
                        "-l",
                        "kubernetes.io/service-name=web",
                    ],
                );
                let items = list["items"].as_array().cloned().unwrap_or_default();
                let slice = items.first()?.clone();
                let n = slice["endpoints"].as_array().map_or(0, Vec::len);
                let ready = slice["endpoints"]
                    .as_array()?
                    .iter()
                    .filter(|e| e["conditions"]["ready"] == true)
                    .count();
                (items.len() == 1 && n == 3 && ready == 2).then_some(slice)
            },
        );
        assert!(
            slice["metadata"]["name"]
                .as_str()
                .is_some_and(|n| n.starts_with("web-"))
        );
        assert_eq!(
            slice["metadata"]["labels"]["endpointslice.kubernetes.io/managed-by"],
            "endpointslice-controller.k8s.io"
        );
        assert_eq!(slice["metadata"]["ownerReferences"][0]["kind"], "Service");
        assert_eq!(slice["addressType"], "IPv4");
        assert_eq!(
            slice["ports"],
            json!([{"name": "http", "port": 8080, "protocol": "TCP"}])
        );
        for e in slice["endpoints"].as_array().expect("endpoints") {
            let name = e["targetRef"]["name"].as_str().unwrap_or("");
            let want = match name {
                "web-a" => &a,
                "web-b" => &b,
                _ => &c,
            };
            assert_eq!(e["addresses"], json!([want]));
            assert_eq!(e["conditions"]["ready"], name != "web-c", "{e}");
            assert!(
                e["nodeName"]
                    .as_str()
                    .is_some_and(|n| n.starts_with("sim-node-"))
            );
            assert!(e["zone"].as_str().is_some_and(|z| z.starts_with("zone-")));
        }
        let table = ok(k, &m.server, &["get", "endpointslices", "-n", &ns]);
        assert_eq!(cell(&table, 1, 2), "8080", "{table}");
        let listed: Vec<&str> = cell(&table, 1, 3).split(',').collect();
        assert!(
            listed.contains(&a.as_str()) && listed.contains(&b.as_str()),
            "{table}"
        );
        // The legacy Endpoints list the ready Pods.
        let endpoints = get_json(k, &m.server, &["get", "endpoints", "web", "-n", &ns]);
        let mut ready: Vec<String> = endpoints["subsets"][0]["addresses"]
            .as_array()
            .expect("addresses")
            .iter()
            .filter_map(|x| x["ip"].as_str().map(str::to_owned))
            .collect();
        ready.sort();
        let mut want = vec![a.clone(), b.clone()];
        want.sort();
        assert_eq!(ready, want);
        assert_eq!(
            endpoints["subsets"][0]["notReadyAddresses"][0]["ip"],
            json!(c)
        );
        // A deleted Pod leaves the slice.
        ok(k, &m.server, &["delete", "pod", "web-a", "-n", &ns]);
        eventually("web-a to leave the slice", Duration::from_secs(10), || {
            let list = get_json(
                k,
                &m.server,
                &[
                    "get",
                    "endpointslices",
                    "-n",
                    &ns,
                    "-l",
                    "kubernetes.io/service-name=web",
                ],
            );
            let n = list["items"][0]["endpoints"].as_array().map_or(0, Vec::len);
            (n == 2).then_some(())
        });

        // LoadBalancer Services get stable addresses from the range.
        ok(
            k,
            &m.server,
            &[
                "create",
                "service",
                "loadbalancer",
                "lb1",
                "--tcp=80:8080",
                "-n",
                &ns,
            ],
        );
        ok(
            k,
            &m.server,
            &[
                "create",
                "service",
                "loadbalancer",
                "lb2",
                "--tcp=80:8080",
                "-n",
                &ns,
            ],
        );
        let external = |name: &str| {
            eventually(
                &format!("{name}'s EXTERNAL-IP"),
                Duration::from_secs(10),
                || {
                    let t = ok(k, &m.server, &["get", "svc", name, "-n", &ns]);
                    let ip = cell(&t, 1, 3).to_owned();
                    (ip != "<pending>").then_some(ip)
                },
            )
        };
        let (ip1, ip2) = (external("lb1"), external("lb2"));
        assert_ne!(ip1, ip2);
        for ip in [&ip1, &ip2] {
            assert!(ip.starts_with("172.31.200."), "{ip}");
        }
        // The service controller's Events follow the address.
        eventually(
            "lb1's EnsuredLoadBalancer event",
            Duration::from_secs(10),
            || {
                let described = ok(k, &m.server, &["describe", "svc", "lb1", "-n", &ns]);
                (described.contains("EnsuredLoadBalancer") && described.contains(&ip1))
                    .then_some(())
            },
        );
        let ingress = get_json(k, &m.server, &["get", "svc", "lb1", "-n", &ns]);
        assert_eq!(
            ingress["status"]["loadBalancer"]["ingress"][0]["ipMode"],
            "VIP"
        );
        // Changing type releases the address; the node port the new type
        // does not use goes with it, as upstream's Service strategy drops it.
        ok(
            k,
            &m.server,
            &[
                "patch",
                "svc",
                "lb2",
                "-n",
                &ns,
                "-p",
                r#"{"spec":{"type":"ClusterIP"}}"#,
            ],
        );
        let lb2 = get_json(k, &m.server, &["get", "svc", "lb2", "-n", &ns]);
        assert_eq!(lb2["spec"]["ports"][0].get("nodePort"), None, "{lb2}");
        eventually(
            "lb2's address to be released",
            Duration::from_secs(10),
            || {
                let t = ok(k, &m.server, &["get", "svc", "lb2", "-n", &ns]);
                (cell(&t, 1, 3) == "<none>").then_some(())
            },
        );
        ok(
            k,
            &m.server,
            &["delete", "svc", "lb1", "lb2", "web", "-n", &ns],
        );
    }
}

#[tokio::test]
async fn without_the_simulator_there_are_no_nodes_and_pods_stay_pending() {
    let m = Member::start(&["--role=member"]).await;
    for k in kubectl_binaries() {
        let k = k.as_path();
        let out = kubectl(k, &m.server, &["get", "nodes"]);
        assert!(out.status.success());
        assert_eq!(stderr(&out), "No resources found\n");
    }
    let k = kubectl_binaries().remove(0);
    ok(&k, &m.server, &["run", "idle", "--image=nginx"]);
    std::thread::sleep(Duration::from_millis(1500));
    let p = get_json(&k, &m.server, &["get", "pod", "idle"]);
    assert_eq!(p["status"]["phase"], "Pending");
    assert!(p["status"].get("conditions").is_none(), "{p}");
    assert!(p["spec"].get("nodeName").is_none(), "{p}");
}

#[tokio::test]
async fn a_restart_keeps_nodes_addresses_and_running_pods() {
    let mut m = Member::start(SIM_FLAGS).await;
    let k = kubectl_binaries().remove(0);
    let k = k.as_path();
    m.create(k, "default", &pod("keep", None, Some("sim-node-1"), &[]));
    ok(
        k,
        &m.server,
        &["wait", "--for=condition=Ready", "pod/keep", "--timeout=20s"],
    );
    ok(
        k,
        &m.server,
        &["create", "service", "loadbalancer", "lb", "--tcp=80"],
    );
    let lb_ip = |m: &Member| {
        eventually("lb's address", Duration::from_secs(10), || {
            let ip = jsonpath(
                k,
                m,
                "default",
                "svc/lb",
                "{.status.loadBalancer.ingress[0].ip}",
            );
            (!ip.is_empty()).then_some(ip)
        })
    };
    let before = (
        jsonpath(k, &m, "default", "node/sim-node-1", "{.metadata.uid}"),
        jsonpath(k, &m, "default", "pod/keep", "{.status.podIP}"),
        jsonpath(k, &m, "default", "pod/keep", "{.status.startTime}"),
        lb_ip(&m),
    );
    m.server
        .stop_with(nix::sys::signal::Signal::SIGTERM, Duration::from_secs(20))
        .await;
    // Fewer Nodes this time: the third goes, the others stay as they were.
    let flags: Vec<&str> = SIM_FLAGS
        .iter()
        .map(|f| {
            if *f == "--sim-nodes=3" {
                "--sim-nodes=2"
            } else {
                f
            }
        })
        .collect();
    m.server = Server::start(&m.dir.path().join("data"), &flags).await;
    let nodes = eventually("two nodes", Duration::from_secs(10), || {
        let t = ok(k, &m.server, &["get", "nodes", "-o", "name"]);
        (t.lines().count() == 2).then_some(t)
    });
    assert_eq!(nodes, "node/sim-node-0\nnode/sim-node-1\n");
    let after = (
        jsonpath(k, &m, "default", "node/sim-node-1", "{.metadata.uid}"),
        jsonpath(k, &m, "default", "pod/keep", "{.status.podIP}"),
        jsonpath(k, &m, "default", "pod/keep", "{.status.startTime}"),
        lb_ip(&m),
    );
    assert_eq!(before, after);
    let table = ok(k, &m.server, &["get", "pod", "keep"]);
    assert_eq!(cell(&table, 1, 1), "1/1", "{table}");
    // A new LoadBalancer does not get the address the first still holds.
    ok(
        k,
        &m.server,
        &["create", "service", "loadbalancer", "lb2", "--tcp=80"],
    );
    let second = eventually("lb2's address", Duration::from_secs(10), || {
        let ip = jsonpath(
            k,
            &m,
            "default",
            "svc/lb2",
            "{.status.loadBalancer.ingress[0].ip}",
        );
        (!ip.is_empty()).then_some(ip)
    });
    assert_ne!(second, after.3);
}

#[tokio::test]
async fn job_pods_succeed_after_the_job_duration_or_fail() {
    let m = Member::start(SIM_FLAGS).await;
    let k = kubectl_binaries().remove(0);
    let k = k.as_path();
    // A Job managed elsewhere (`spec.managedBy`), so that no simulated Job
    // controller acts on it: its Pods are made by hand here.
    let job = |name: &str, fail: bool| {
        let mut j = json!({
            "apiVersion": "batch/v1",
            "kind": "Job",
            "metadata": {"name": name},
            "spec": {
                "managedBy": "example.com/elsewhere",
                "suspend": true,
                "template": {"spec": {"restartPolicy": "Never",
                    "containers": [{"name": "work", "image": "busybox"}]}},
            },
        });
        if fail {
            j["metadata"]["annotations"] = json!({"sim.skein.io/fail": "true"});
        }
        j
    };
    for (name, fail, status, phase) in [
        ("works", false, "Completed", "Succeeded"),
        ("breaks", true, "Error", "Failed"),
    ] {
        m.create(k, "default", &job(name, fail));
        let uid = jsonpath(k, &m, "default", &format!("job/{name}"), "{.metadata.uid}");
        let mut p = pod(&format!("{name}-pod"), None, None, &[]);
        p["spec"]["restartPolicy"] = json!("Never");
        p["metadata"]["ownerReferences"] = json!([{
            "apiVersion": "batch/v1", "kind": "Job", "name": name, "uid": uid,
            "controller": true, "blockOwnerDeletion": true,
        }]);
        m.create(k, "default", &p);
        let pod_ref = format!("pod/{name}-pod");
        eventually(
            &format!("{name}-pod to finish"),
            Duration::from_secs(10),
            || (jsonpath(k, &m, "default", &pod_ref, "{.status.phase}") == phase).then_some(()),
        );
        let table = ok(k, &m.server, &["get", &pod_ref]);
        assert_eq!(cell(&table, 1, 1), "0/1", "{table}");
        assert_eq!(cell(&table, 1, 2), status, "{table}");
        let code = jsonpath(
            k,
            &m,
            "default",
            &pod_ref,
            "{.status.containerStatuses[0].state.terminated.exitCode}",
        );
        assert_eq!(code, if fail { "1" } else { "0" });
    }
    // The successful one ran for the Job duration (1 s) after it started.
    let p = get_json(k, &m.server, &["get", "pod", "works-pod"]);
    let t = &p["status"]["containerStatuses"][0]["state"]["terminated"];
    let secs = |s: &Value| {
        let s = s.as_str().unwrap_or_default();
        let hms = s.get(11..19).unwrap_or_default();
        hms.split(':')
            .filter_map(|x| x.parse::<i64>().ok())
            .fold(0, |acc, x| acc * 60 + x)
    };
    let ran = secs(&t["finishedAt"]) - secs(&t["startedAt"]);
    assert!((1..=3).contains(&ran), "ran {ran}s: {t}");
}

/// The niceness of each thread of process `pid`, by thread name.
fn thread_niceness(pid: u32) -> Vec<(String, i64)> {
    let mut out = Vec::new();
    let tasks = std::fs::read_dir(format!("/proc/{pid}/task")).expect("/proc/<pid>/task");
    for task in tasks.flatten() {
        let stat = std::fs::read_to_string(task.path().join("stat")).unwrap_or_default();
        // `pid (comm) state ppid ...`: the fields after the name, counted
        // from `state` (field 3); niceness is field 19.
        let Some((name, rest)) = stat.split_once(" (").and_then(|(_, r)| r.rsplit_once(") "))
        else {
            continue;
        };
        let nice = rest.split_whitespace().nth(16).and_then(|n| n.parse().ok());
        if let Some(nice) = nice {
            out.push((name.to_owned(), nice));
        }
    }
    out
}

#[tokio::test]
async fn a_niced_simulator_runs_on_threads_of_its_own() {
    let mut flags = SIM_FLAGS.to_vec();
    flags.push("--sim-nice=19");
    let m = Member::start(&flags).await;
    let kubectl = kubectl_binaries();
    let k = kubectl[0].as_path();
    namespace(k, &m, "niced");
    ok(
        k,
        &m.server,
        &["run", "web", "--image=nginx", "-n", "niced"],
    );
    let out = wait_ready(k, &m, "niced", "web");
    assert_eq!(out, "pod/web condition met\n");
    let pid = m.server.pid().expect("the member's pid");
    let threads = thread_niceness(pid);
    let sim: Vec<i64> = threads
        .iter()
        .filter(|(n, _)| n == "skein-sim")
        .map(|(_, nice)| *nice)
        .collect();
    assert_eq!(sim, [19, 19], "{threads:?}");
    // The API server's threads keep the niceness the process started with.
    let started = std::fs::read_to_string(format!("/proc/{pid}/stat"))
        .ok()
        .and_then(|s| {
            let (_, rest) = s.rsplit_once(") ")?;
            rest.split_whitespace().nth(16)?.parse::<i64>().ok()
        })
        .expect("the process's niceness");
    assert!(started < 19, "the test runs at niceness {started}");
    let api: Vec<i64> = threads
        .iter()
        .filter(|(n, _)| n == "tokio-rt-worker")
        .map(|(_, nice)| *nice)
        .collect();
    assert!(
        !api.is_empty() && api.iter().all(|n| *n == started),
        "{threads:?}"
    );

    // Without the flag the simulator shares the API server's threads.
    let plain = Member::start(SIM_FLAGS).await;
    let threads = thread_niceness(plain.server.pid().expect("pid"));
    assert!(threads.iter().all(|(n, _)| n != "skein-sim"), "{threads:?}");

    // Out of range: refused before anything starts.
    let out = std::process::Command::new(skein_tests::skein_bin())
        .args([
            "serve",
            "--role=member",
            "--simulate-workloads",
            "--sim-nice=20",
        ])
        .output()
        .expect("run skein");
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("--sim-nice") && err.contains("20 is not in 0..=19"),
        "{err}"
    );
}
