//! The simulated Deployment and ReplicaSet controllers on a member
//! (`skein serve --role=member --simulate-workloads`), driven by real
//! kubectl 1.35 and 1.32: rollouts (`rollout status/history/undo/pause/
//! resume/restart`, `set image`, `scale`), ReplicaSets with owner
//! references and `pod-template-hash`, revisions, Recreate, history
//! cleanup, capacity limits, never-ready Pods and the progress deadline,
//! orphan adoption, `ReplicaFailure`, and garbage collection.
//!
//! Pods become Running and Ready through the simulated Pod lifecycle
//! (`--sim-pod-ready-delay 200ms`). What is asserted is what kubectl
//! prints and what is stored.

use std::fs;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use serde_json::{Value, json};
use skein_tests::cli::{cells, err, get_json, kubectl, ok, stderr};
use skein_tests::kubectl_binaries;
use skein_tests::server::Server;

/// A member with the workload simulator, and the kubectls to drive it.
struct Member {
    server: Server,
    dir: tempfile::TempDir,
    kubectls: Vec<PathBuf>,
}

impl Member {
    async fn start() -> Member {
        let kubectls = kubectl_binaries();
        let dir = tempfile::tempdir().expect("tempdir");
        let server = Server::start(
            &dir.path().join("data"),
            &[
                "--role=member",
                "--simulate-workloads",
                "--sim-pod-ready-delay=200ms",
                "--sim-nodes=2",
                "--sim-node-cpu=4",
            ],
        )
        .await;
        Member {
            server,
            dir,
            kubectls,
        }
    }

    fn ok(&self, k: &Path, args: &[&str]) -> String {
        ok(k, &self.server, args)
    }

    fn json(&self, k: &Path, args: &[&str]) -> Value {
        get_json(k, &self.server, args)
    }

    /// Writes `object` to a file and `kubectl apply`s it in `ns`.
    fn apply(&self, k: &Path, ns: &str, object: &Value) {
        let name = object["metadata"]["name"].as_str().unwrap_or("object");
        let path = self.dir.path().join(format!("{ns}-{name}.json"));
        fs::write(&path, serde_json::to_vec_pretty(object).expect("JSON")).expect("write");
        let file = path.to_string_lossy().into_owned();
        self.ok(k, &["apply", "-f", &file, "-n", ns]);
    }

    fn namespace(&self, k: &Path, ns: &str) {
        self.ok(k, &["create", "namespace", ns]);
        // Pods need the namespace's default ServiceAccount.
        self.wait(&format!("the default ServiceAccount of {ns}"), || {
            kubectl(k, &self.server, &["get", "sa", "default", "-n", ns])
                .status
                .success()
                .then_some(())
        });
    }

    /// Polls `check` every 100 ms until it gives a value (20 s at most).
    fn wait<T>(&self, what: &str, mut check: impl FnMut() -> Option<T>) -> T {
        let start = Instant::now();
        loop {
            if let Some(v) = check() {
                return v;
            }
            assert!(
                start.elapsed() < Duration::from_secs(20),
                "timed out waiting for {what}\n--- server log (tail):\n{}",
                skein_tests::kubectl::log_tail(&self.server)
            );
            std::thread::sleep(Duration::from_millis(100));
        }
    }

    /// The ReplicaSets of `app` in `ns`, oldest first.
    fn replica_sets(&self, k: &Path, ns: &str, app: &str) -> Vec<Value> {
        let list = self.json(
            k,
            &[
                "get",
                "rs",
                "-n",
                ns,
                "-l",
                &format!("app={app}"),
                "--sort-by=.metadata.creationTimestamp",
            ],
        );
        list["items"].as_array().cloned().unwrap_or_default()
    }

    /// `kubectl rollout status` until it reports success.
    fn rolled_out(&self, k: &Path, ns: &str, deploy: &str) {
        let out = self.ok(
            k,
            &[
                "rollout",
                "status",
                &format!("deploy/{deploy}"),
                "-n",
                ns,
                "--timeout=30s",
            ],
        );
        assert!(
            out.ends_with(&format!(
                "deployment \"{deploy}\" successfully rolled out\n"
            )),
            "{out}"
        );
    }
}

fn annotation<'a>(obj: &'a Value, key: &str) -> &'a str {
    obj["metadata"]["annotations"][key].as_str().unwrap_or("")
}

fn name(obj: &Value) -> &str {
    obj["metadata"]["name"].as_str().unwrap_or("")
}

fn condition<'a>(obj: &'a Value, type_: &str) -> &'a Value {
    obj["status"]["conditions"]
        .as_array()
        .and_then(|cs| cs.iter().find(|c| c["type"] == type_))
        .unwrap_or(&Value::Null)
}

/// The REVISION column of `kubectl rollout history`.
fn revisions(history: &str) -> Vec<String> {
    cells(history)
        .into_iter()
        .skip_while(|row| row.first() != Some(&"REVISION"))
        .skip(1)
        .filter_map(|row| row.first().map(|c| (*c).to_owned()))
        .collect()
}

fn deployment(name: &str, replicas: u32, extra_spec: Value, annotations: Value) -> Value {
    let mut d = json!({
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": name, "annotations": annotations},
        "spec": {
            "replicas": replicas,
            "selector": {"matchLabels": {"app": name}},
            "template": {
                "metadata": {"labels": {"app": name}},
                "spec": {"containers": [{"name": "app", "image": "nginx:1.27"}]},
            },
        },
    });
    if let (Some(spec), Some(extra)) = (d["spec"].as_object_mut(), extra_spec.as_object()) {
        for (k, v) in extra {
            spec.insert(k.clone(), v.clone());
        }
    }
    d
}

#[tokio::test(flavor = "multi_thread")]
async fn rollouts_revisions_undo_and_scale() {
    let m = Member::start().await;
    for (i, k) in m.kubectls.iter().enumerate() {
        let ns = format!("roll{i}");
        m.namespace(k, &ns);
        let out = m.ok(
            k,
            &[
                "create",
                "deployment",
                "web",
                "--image=nginx",
                "--replicas=3",
                "-n",
                &ns,
            ],
        );
        assert_eq!(out, "deployment.apps/web created\n");
        m.rolled_out(k, &ns, "web");

        // One ReplicaSet `web-<hash>` owned by the Deployment, three Pods
        // owned by it, all carrying the hash.
        let d = m.json(k, &["get", "deploy", "web", "-n", &ns]);
        let sets = m.replica_sets(k, &ns, "web");
        assert_eq!(sets.len(), 1, "{sets:?}");
        let first = &sets[0];
        let hash = first["metadata"]["labels"]["pod-template-hash"]
            .as_str()
            .unwrap_or("");
        assert!(!hash.is_empty(), "{first}");
        assert_eq!(name(first), format!("web-{hash}"));
        assert_eq!(
            first["spec"]["selector"]["matchLabels"]["pod-template-hash"],
            hash
        );
        let owner = &first["metadata"]["ownerReferences"][0];
        assert_eq!(
            (owner["kind"].as_str(), owner["name"].as_str()),
            (Some("Deployment"), Some("web"))
        );
        assert_eq!(owner["uid"], d["metadata"]["uid"]);
        assert_eq!(owner["controller"], true);
        assert_eq!(annotation(first, "deployment.kubernetes.io/revision"), "1");
        assert_eq!(
            annotation(first, "deployment.kubernetes.io/desired-replicas"),
            "3"
        );
        assert_eq!(
            annotation(first, "deployment.kubernetes.io/max-replicas"),
            "4"
        );
        let pods = m.json(k, &["get", "pods", "-n", &ns, "-l", "app=web"]);
        let pods = pods["items"].as_array().cloned().unwrap_or_default();
        assert_eq!(pods.len(), 3);
        for p in &pods {
            assert_eq!(p["metadata"]["labels"]["pod-template-hash"], hash);
            assert_eq!(p["metadata"]["ownerReferences"][0]["kind"], "ReplicaSet");
            assert_eq!(
                p["metadata"]["ownerReferences"][0]["uid"],
                first["metadata"]["uid"]
            );
            assert!(name(p).starts_with(&format!("web-{hash}-")), "{}", name(p));
        }
        let table = m.ok(k, &["get", "rs", "-n", &ns]);
        let row = &cells(&table)[1];
        assert_eq!(&row[..4], [name(first), "3", "3", "3"], "{table}");

        // Status and conditions as kube-controller-manager reports them.
        assert_eq!(d["status"]["replicas"], 3);
        assert_eq!(d["status"]["updatedReplicas"], 3);
        assert_eq!(d["status"]["readyReplicas"], 3);
        assert_eq!(d["status"]["availableReplicas"], 3);
        assert_eq!(
            d["status"]["observedGeneration"],
            d["metadata"]["generation"]
        );
        let available = condition(&d, "Available");
        assert_eq!(available["status"], "True");
        assert_eq!(available["reason"], "MinimumReplicasAvailable");
        assert_eq!(available["message"], "Deployment has minimum availability.");
        let progressing = condition(&d, "Progressing");
        assert_eq!(progressing["reason"], "NewReplicaSetAvailable");
        assert_eq!(
            progressing["message"],
            format!(
                "ReplicaSet \"{}\" has successfully progressed.",
                name(first)
            )
        );
        assert_eq!(annotation(&d, "deployment.kubernetes.io/revision"), "1");

        // Events, as kubectl describe lists them.
        let events = m.json(k, &["get", "events", "-n", &ns]);
        let events = events["items"].as_array().cloned().unwrap_or_default();
        let said = |reason: &str, message: &str| {
            events
                .iter()
                .any(|e| e["reason"] == reason && e["message"] == message)
        };
        let scaled = format!("Scaled up replica set {} from 0 to 3", name(first));
        assert!(said("ScalingReplicaSet", &scaled), "{events:?}");
        for p in &pods {
            assert!(
                said("SuccessfulCreate", &format!("Created pod: {}", name(p))),
                "{events:?}"
            );
        }
        let described = m.ok(k, &["describe", "deploy", "web", "-n", &ns]);
        assert!(described.contains(&scaled), "{described}");

        // set image: a second ReplicaSet at revision 2; the first at 0.
        m.ok(
            k,
            &["set", "image", "deploy/web", "nginx=nginx:1.28", "-n", &ns],
        );
        m.rolled_out(k, &ns, "web");
        let sets = m.replica_sets(k, &ns, "web");
        assert_eq!(sets.len(), 2);
        let (old, new) = (&sets[0], &sets[1]);
        assert_eq!(name(old), name(first));
        assert_eq!(
            (
                old["spec"]["replicas"].as_i64(),
                new["spec"]["replicas"].as_i64()
            ),
            (Some(0), Some(3))
        );
        assert_eq!(annotation(new, "deployment.kubernetes.io/revision"), "2");
        assert_eq!(
            new["spec"]["template"]["spec"]["containers"][0]["image"],
            "nginx:1.28"
        );
        let history = m.ok(k, &["rollout", "history", "deploy/web", "-n", &ns]);
        assert_eq!(revisions(&history), ["1", "2"], "{history}");

        // undo: the first ReplicaSet comes back as revision 3.
        let out = m.ok(k, &["rollout", "undo", "deploy/web", "-n", &ns]);
        assert_eq!(out, "deployment.apps/web rolled back\n");
        m.rolled_out(k, &ns, "web");
        let sets = m.replica_sets(k, &ns, "web");
        assert_eq!(sets.len(), 2);
        let back = sets
            .iter()
            .find(|s| name(s) == name(first))
            .cloned()
            .unwrap_or_default();
        assert_eq!(back["spec"]["replicas"], 3);
        assert_eq!(annotation(&back, "deployment.kubernetes.io/revision"), "3");
        assert_eq!(
            annotation(&back, "deployment.kubernetes.io/revision-history"),
            "1"
        );
        let history = m.ok(k, &["rollout", "history", "deploy/web", "-n", &ns]);
        assert_eq!(revisions(&history), ["2", "3"], "{history}");
        let image = m.ok(
            k,
            &[
                "get",
                "deploy",
                "web",
                "-n",
                &ns,
                "-o",
                "jsonpath={.spec.template.spec.containers[0].image}",
            ],
        );
        assert_eq!(image, "nginx");

        // scale.
        let out = m.ok(k, &["scale", "deploy/web", "--replicas=5", "-n", &ns]);
        assert_eq!(out, "deployment.apps/web scaled\n");
        m.rolled_out(k, &ns, "web");
        let table = m.ok(k, &["get", "deploy", "web", "-n", &ns]);
        assert_eq!(&cells(&table)[1][..4], ["web", "5/5", "5", "5"], "{table}");
        let back = m.json(k, &["get", "rs", name(first), "-n", &ns]);
        assert_eq!(
            annotation(&back, "deployment.kubernetes.io/desired-replicas"),
            "5"
        );

        // pause: a template change makes no ReplicaSet until resumed.
        m.ok(k, &["rollout", "pause", "deploy/web", "-n", &ns]);
        m.ok(
            k,
            &["set", "image", "deploy/web", "nginx=nginx:1.29", "-n", &ns],
        );
        let paused = m.wait("the paused condition", || {
            let d = m.json(k, &["get", "deploy", "web", "-n", &ns]);
            (condition(&d, "Progressing")["reason"] == "DeploymentPaused").then_some(d)
        });
        assert_eq!(condition(&paused, "Progressing")["status"], "Unknown");
        assert_eq!(
            condition(&paused, "Progressing")["message"],
            "Deployment is paused"
        );
        assert_eq!(m.replica_sets(k, &ns, "web").len(), 2);
        m.ok(k, &["rollout", "resume", "deploy/web", "-n", &ns]);
        m.rolled_out(k, &ns, "web");
        m.ok(k, &["rollout", "restart", "deploy/web", "-n", &ns]);
        m.rolled_out(k, &ns, "web");
        let history = m.ok(k, &["rollout", "history", "deploy/web", "-n", &ns]);
        assert_eq!(revisions(&history), ["2", "3", "4", "5"], "{history}");
        let sets = m.replica_sets(k, &ns, "web");
        let live: Vec<i64> = sets
            .iter()
            .filter_map(|s| s["spec"]["replicas"].as_i64())
            .filter(|r| *r > 0)
            .collect();
        assert_eq!(live, [5], "one ReplicaSet holds every Pod: {sets:?}");
        m.wait("5 Pods", || {
            let pods = m.ok(
                k,
                &["get", "pods", "-n", &ns, "-l", "app=web", "--no-headers"],
            );
            (pods.lines().count() == 5).then_some(())
        });
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn recreate_history_limit_and_garbage_collection() {
    let m = Member::start().await;
    for (i, k) in m.kubectls.iter().enumerate() {
        let ns = format!("recreate{i}");
        m.namespace(k, &ns);
        let d = deployment(
            "db",
            2,
            json!({"strategy": {"type": "Recreate"}, "revisionHistoryLimit": 1}),
            json!({"team": "storage"}),
        );
        m.apply(k, &ns, &d);
        m.rolled_out(k, &ns, "db");
        for image in ["nginx:1.28", "nginx:1.29", "nginx:1.30"] {
            m.ok(
                k,
                &[
                    "set",
                    "image",
                    "deploy/db",
                    &format!("app={image}"),
                    "-n",
                    &ns,
                ],
            );
            m.rolled_out(k, &ns, "db");
        }
        // revisionHistoryLimit 1: the new ReplicaSet and one old one.
        let sets = m.wait("history cleanup", || {
            let sets = m.replica_sets(k, &ns, "db");
            (sets.len() == 2).then_some(sets)
        });
        let revs: Vec<&str> = sets
            .iter()
            .map(|s| annotation(s, "deployment.kubernetes.io/revision"))
            .collect();
        assert_eq!(revs, ["3", "4"]);
        // The Deployment's annotations are copied, kubectl's own is not.
        let new = &sets[1];
        assert_eq!(annotation(new, "team"), "storage");
        assert_eq!(
            annotation(new, "kubectl.kubernetes.io/last-applied-configuration"),
            ""
        );

        let out = m.ok(k, &["delete", "deploy", "db", "-n", &ns]);
        assert!(out.starts_with("deployment.apps \"db\" deleted"), "{out}");
        m.wait("the ReplicaSets and Pods to be collected", || {
            let out = kubectl(k, &m.server, &["get", "rs,pods", "-n", &ns, "-l", "app=db"]);
            stderr(&out).contains("No resources found").then_some(())
        });
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn unschedulable_never_ready_and_progress_deadline() {
    let m = Member::start().await;
    for (i, k) in m.kubectls.iter().enumerate() {
        let ns = format!("stuck{i}");
        m.namespace(k, &ns);

        // More CPU than any Node has: Pending Pods, never available.
        let mut big = deployment("big", 2, json!({}), json!({}));
        big["spec"]["template"]["spec"]["containers"][0]["resources"] =
            json!({"requests": {"cpu": "16"}});
        m.apply(k, &ns, &big);
        let pods = m.wait("2 Pending Pods", || {
            let pods = m.ok(
                k,
                &["get", "pods", "-n", &ns, "-l", "app=big", "--no-headers"],
            );
            (pods.lines().count() == 2).then_some(pods)
        });
        assert!(
            pods.lines()
                .all(|l| l.split_whitespace().nth(2) == Some("Pending")),
            "{pods}"
        );
        let d = m.wait("Available False", || {
            let d = m.json(k, &["get", "deploy", "big", "-n", &ns]);
            (condition(&d, "Available")["status"] == "False").then_some(d)
        });
        assert_eq!(
            condition(&d, "Available")["reason"],
            "MinimumReplicasUnavailable"
        );
        assert_eq!(
            condition(&d, "Available")["message"],
            "Deployment does not have minimum availability."
        );
        let table = m.ok(k, &["get", "deploy", "big", "-n", &ns]);
        assert_eq!(&cells(&table)[1][..4], ["big", "0/2", "2", "0"], "{table}");

        // Never ready: `rollout status` gives up at its timeout.
        let stuck = deployment(
            "stuck",
            2,
            json!({}),
            json!({"sim.skein.io/never-ready": "true"}),
        );
        m.apply(k, &ns, &stuck);
        let e = err(
            k,
            &m.server,
            &[
                "rollout",
                "status",
                "deploy/stuck",
                "-n",
                &ns,
                "--timeout=5s",
            ],
        );
        assert!(e.contains("timed out waiting for the condition"), "{e}");
        let pods = m.ok(
            k,
            &["get", "pods", "-n", &ns, "-l", "app=stuck", "--no-headers"],
        );
        assert!(
            pods.lines()
                .all(|l| l.contains(" 0/1 ") && l.contains("Running")),
            "{pods}"
        );

        // With a short progress deadline it reports the deadline.
        let late = deployment(
            "late",
            1,
            json!({"progressDeadlineSeconds": 2}),
            json!({"sim.skein.io/never-ready": "true"}),
        );
        m.apply(k, &ns, &late);
        let d = m.wait("ProgressDeadlineExceeded", || {
            let d = m.json(k, &["get", "deploy", "late", "-n", &ns]);
            (condition(&d, "Progressing")["reason"] == "ProgressDeadlineExceeded").then_some(d)
        });
        let rs = &m.replica_sets(k, &ns, "late")[0];
        assert_eq!(condition(&d, "Progressing")["status"], "False");
        assert_eq!(
            condition(&d, "Progressing")["message"],
            format!("ReplicaSet \"{}\" has timed out progressing.", name(rs))
        );
        let e = err(
            k,
            &m.server,
            &[
                "rollout",
                "status",
                "deploy/late",
                "-n",
                &ns,
                "--timeout=10s",
            ],
        );
        assert!(
            e.contains("deployment \"late\" exceeded its progress deadline"),
            "{e}"
        );
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn replica_sets_adopt_orphans_scale_down_and_report_failures() {
    let m = Member::start().await;
    for (i, k) in m.kubectls.iter().enumerate() {
        let ns = format!("rs{i}");
        m.namespace(k, &ns);
        let orphan = json!({
            "apiVersion": "v1", "kind": "Pod",
            "metadata": {"name": "orphan", "labels": {"app": "cache"}},
            "spec": {"containers": [{"name": "c", "image": "redis"}]},
        });
        m.apply(k, &ns, &orphan);
        let rs = json!({
            "apiVersion": "apps/v1", "kind": "ReplicaSet",
            "metadata": {"name": "cache"},
            "spec": {
                "replicas": 3,
                "selector": {"matchLabels": {"app": "cache"}},
                "template": {"metadata": {"labels": {"app": "cache"}},
                             "spec": {"containers": [{"name": "c", "image": "redis"}]}},
            },
        });
        m.apply(k, &ns, &rs);
        m.wait("3 ready replicas", || {
            let t = m.ok(k, &["get", "rs", "cache", "-n", &ns]);
            (cells(&t)[1][..4] == ["cache", "3", "3", "3"]).then_some(())
        });
        let pod = m.json(k, &["get", "pod", "orphan", "-n", &ns]);
        assert_eq!(
            pod["metadata"]["ownerReferences"][0]["kind"], "ReplicaSet",
            "adopted: {pod}"
        );
        assert_eq!(pod["metadata"]["ownerReferences"][0]["name"], "cache");
        let status = m.json(k, &["get", "rs", "cache", "-n", &ns])["status"].clone();
        assert_eq!(
            status,
            json!({"replicas": 3, "fullyLabeledReplicas": 3, "readyReplicas": 3,
                   "availableReplicas": 3, "observedGeneration": 1})
        );

        m.ok(k, &["scale", "rs", "cache", "--replicas=1", "-n", &ns]);
        m.wait("one Pod left", || {
            let pods = m.ok(
                k,
                &["get", "pods", "-n", &ns, "-l", "app=cache", "--no-headers"],
            );
            (pods.lines().count() == 1).then_some(())
        });

        // A Pod the server refuses: ReplicaFailure on the ReplicaSet and
        // on its Deployment.
        let mut bad = deployment("bad", 1, json!({}), json!({}));
        bad["spec"]["template"]["spec"]["serviceAccountName"] = json!("missing");
        m.apply(k, &ns, &bad);
        let set = m.wait("ReplicaFailure", || {
            let sets = m.replica_sets(k, &ns, "bad");
            sets.into_iter()
                .find(|s| condition(s, "ReplicaFailure")["status"] == "True")
        });
        let c = condition(&set, "ReplicaFailure");
        assert_eq!(c["reason"], "FailedCreate");
        assert!(
            c["message"]
                .as_str()
                .unwrap_or("")
                .contains("serviceaccount \"missing\" not found"),
            "{c}"
        );
        let d = m.wait("the Deployment's ReplicaFailure", || {
            let d = m.json(k, &["get", "deploy", "bad", "-n", &ns]);
            (condition(&d, "ReplicaFailure")["status"] == "True").then_some(d)
        });
        assert_eq!(condition(&d, "ReplicaFailure")["reason"], "FailedCreate");
    }
}
