//! Revision history on a federation (issue 12): a lone control-plane
//! `skein serve` (no members) keeps the ReplicaSets of Deployments and the
//! ControllerRevisions of StatefulSets and DaemonSets, so real kubectl 1.35
//! and 1.32 `rollout history` and `rollout undo [--to-revision]` work there
//! as on a cluster; the history objects go with their owner (garbage
//! collector).
//!
//! What is asserted is what kubectl prints and what is stored.

use std::fs;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use serde_json::{Value, json};
use skein_tests::cli::{cells, get_json, ok};
use skein_tests::kubectl_binaries;
use skein_tests::server::Server;

/// A lone federation and the kubectls to drive it.
struct Fed {
    server: Server,
    dir: tempfile::TempDir,
    kubectls: Vec<PathBuf>,
}

impl Fed {
    async fn start() -> Fed {
        let kubectls = kubectl_binaries();
        let dir = tempfile::tempdir().expect("tempdir");
        let server = Server::start(&dir.path().join("data"), &[]).await;
        let fed = Fed {
            server,
            dir,
            kubectls,
        };
        // The federation keeps history once it has a member; this one is
        // never reachable (no Secret), which history does not need.
        let k = fed.kubectls[0].clone();
        fed.apply(
            &k,
            "default",
            &serde_json::json!({
                "apiVersion": "federation.skein.io/v1alpha1", "kind": "Cluster",
                "metadata": {"name": "elsewhere"},
                "spec": {"kubeconfigSecretRef": {"namespace": "skein-system", "name": "none"}},
            }),
        );
        fed
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

    /// Waits until `kubectl rollout history <target>` lists `want`.
    fn history_is(&self, k: &Path, ns: &str, target: &str, want: &[&str]) -> String {
        self.wait(&format!("{target} history {want:?}"), || {
            let out = self.ok(k, &["rollout", "history", target, "-n", ns]);
            (revisions(&out) == want).then_some(out)
        })
    }

    /// The items of `kubectl get <what> -n ns`, by name.
    fn items(&self, k: &Path, ns: &str, what: &str) -> Vec<Value> {
        let mut items = self.json(k, &["get", what, "-n", ns])["items"]
            .as_array()
            .cloned()
            .unwrap_or_default();
        items.sort_by_key(|i| name(i).to_owned());
        items
    }

    fn image(&self, k: &Path, ns: &str, target: &str) -> String {
        self.ok(
            k,
            &[
                "get",
                target,
                "-n",
                ns,
                "-o",
                "jsonpath={.spec.template.spec.containers[0].image}",
            ],
        )
    }
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

fn name(obj: &Value) -> &str {
    obj["metadata"]["name"].as_str().unwrap_or_default()
}

fn annotation<'a>(obj: &'a Value, key: &str) -> &'a str {
    obj["metadata"]["annotations"][key]
        .as_str()
        .unwrap_or_default()
}

fn workload(kind: &str, name: &str, image: &str) -> Value {
    let mut spec = json!({
        "selector": {"matchLabels": {"app": name}},
        "template": {
            "metadata": {"labels": {"app": name}},
            "spec": {"containers": [{"name": "app", "image": image}]},
        },
    });
    match kind {
        "Deployment" => spec["replicas"] = json!(3),
        "StatefulSet" => {
            spec["replicas"] = json!(2);
            spec["serviceName"] = json!(name);
        }
        _ => {}
    }
    json!({
        "apiVersion": "apps/v1",
        "kind": kind,
        "metadata": {"name": name},
        "spec": spec,
    })
}

#[tokio::test(flavor = "multi_thread")]
async fn deployment_history_undo_and_garbage_collection() {
    let f = Fed::start().await;
    for (i, k) in f.kubectls.iter().enumerate() {
        let ns = format!("dep{i}");
        f.ok(k, &["create", "namespace", &ns]);
        f.apply(k, &ns, &workload("Deployment", "web", "nginx:1.27"));

        // Revision 1: one ReplicaSet, the Deployment annotated, its
        // generation untouched by that metadata write.
        let history = f.history_is(k, &ns, "deployment/web", &["1"]);
        assert_eq!(
            history,
            "deployment.apps/web \nREVISION  CHANGE-CAUSE\n1         <none>\n\n"
        );
        let d = f.wait("the Deployment's revision annotation", || {
            let d = f.json(k, &["get", "deploy", "web", "-n", &ns]);
            (annotation(&d, "deployment.kubernetes.io/revision") == "1").then_some(d)
        });
        assert_eq!(d["metadata"]["generation"], 1, "{d}");
        let sets = f.items(k, &ns, "rs");
        assert_eq!(sets.len(), 1);
        let first = sets[0].clone();
        let hash = first["metadata"]["labels"]["pod-template-hash"]
            .as_str()
            .unwrap_or_default();
        assert_eq!(name(&first), format!("web-{hash}"));
        assert_eq!(first["spec"]["replicas"], 3);
        assert_eq!(
            first["spec"]["selector"]["matchLabels"]["pod-template-hash"],
            hash
        );
        let owner = &first["metadata"]["ownerReferences"][0];
        assert_eq!(
            (
                &owner["kind"],
                &owner["name"],
                &owner["uid"],
                &owner["controller"],
                &owner["blockOwnerDeletion"]
            ),
            (
                &json!("Deployment"),
                &json!("web"),
                &d["metadata"]["uid"],
                &json!(true),
                &json!(true)
            )
        );
        assert_eq!(
            annotation(&first, "deployment.kubernetes.io/desired-replicas"),
            "3"
        );
        assert_eq!(
            annotation(&first, "deployment.kubernetes.io/max-replicas"),
            "4"
        );

        // A new image: revision 2; the old ReplicaSet scaled to 0.
        f.ok(
            k,
            &[
                "set",
                "image",
                "deployment/web",
                "app=nginx:1.28",
                "-n",
                &ns,
            ],
        );
        let history = f.history_is(k, &ns, "deployment/web", &["1", "2"]);
        assert_eq!(
            history,
            "deployment.apps/web \nREVISION  CHANGE-CAUSE\n1         <none>\n2         <none>\n\n"
        );
        let one = f.ok(
            k,
            &[
                "rollout",
                "history",
                "deployment/web",
                "-n",
                &ns,
                "--revision=1",
            ],
        );
        assert!(
            one.starts_with("deployment.apps/web with revision #1\n"),
            "{one}"
        );
        assert!(
            one.contains("nginx:1.27") && !one.contains("nginx:1.28"),
            "{one}"
        );
        let table = f.wait("two ReplicaSets", || {
            let t = f.ok(k, &["get", "rs", "-n", &ns]);
            (cells(&t).len() == 3).then_some(t)
        });
        let rows = cells(&table);
        assert_eq!(rows[0], ["NAME", "DESIRED", "CURRENT", "READY", "AGE"]);
        let row = |n: &str| rows.iter().find(|r| r[0] == n).cloned().unwrap_or_default();
        assert_eq!(row(name(&first))[1], "0", "{table}");
        let d = f.json(k, &["get", "deploy", "web", "-n", &ns]);
        assert_eq!(annotation(&d, "deployment.kubernetes.io/revision"), "2");
        assert_eq!(d["metadata"]["generation"], 2);

        // Undo: the first ReplicaSet becomes revision 3.
        let out = f.ok(k, &["rollout", "undo", "deployment/web", "-n", &ns]);
        assert_eq!(out, "deployment.apps/web rolled back\n");
        assert_eq!(f.image(k, &ns, "deployment/web"), "nginx:1.27");
        f.history_is(k, &ns, "deployment/web", &["2", "3"]);
        let back = f.wait("the first ReplicaSet at revision 3", || {
            f.items(k, &ns, "rs")
                .into_iter()
                .find(|s| name(s) == name(&first))
                .filter(|s| annotation(s, "deployment.kubernetes.io/revision") == "3")
        });
        assert_eq!(
            annotation(&back, "deployment.kubernetes.io/revision-history"),
            "1"
        );
        assert_eq!(back["spec"]["replicas"], 3);
        assert_eq!(f.items(k, &ns, "rs").len(), 2);

        // Undo to a named revision.
        let out = f.ok(
            k,
            &[
                "rollout",
                "undo",
                "deployment/web",
                "-n",
                &ns,
                "--to-revision=2",
            ],
        );
        assert_eq!(out, "deployment.apps/web rolled back\n");
        assert_eq!(f.image(k, &ns, "deployment/web"), "nginx:1.28");
        f.history_is(k, &ns, "deployment/web", &["3", "4"]);
        let out = f.ok(
            k,
            &[
                "rollout",
                "undo",
                "deployment/web",
                "-n",
                &ns,
                "--to-revision=4",
            ],
        );
        assert_eq!(
            out,
            "deployment.apps/web skipped rollback (current template already matches revision 4)\n"
        );
        let d = f.wait("the Deployment at revision 4", || {
            let d = f.json(k, &["get", "deploy", "web", "-n", &ns]);
            (annotation(&d, "deployment.kubernetes.io/revision") == "4").then_some(d)
        });
        assert_eq!(d["metadata"]["generation"], 4, "{d}");

        // Deleting the Deployment removes its ReplicaSets.
        f.ok(k, &["delete", "deployment", "web", "-n", &ns]);
        f.wait("the ReplicaSets to be collected", || {
            f.items(k, &ns, "rs").is_empty().then_some(())
        });
    }
}

/// StatefulSets and DaemonSets: ControllerRevisions, history, undo, GC.
#[tokio::test(flavor = "multi_thread")]
async fn statefulset_and_daemonset_history_and_undo() {
    let f = Fed::start().await;
    for (i, k) in f.kubectls.iter().enumerate() {
        for (kind, resource, hash_label) in [
            (
                "StatefulSet",
                "statefulset",
                "controller.kubernetes.io/hash",
            ),
            ("DaemonSet", "daemonset", "controller-revision-hash"),
        ] {
            let ns = format!("{resource}{i}");
            let target = format!("{resource}/db");
            f.ok(k, &["create", "namespace", &ns]);
            f.apply(k, &ns, &workload(kind, "db", "redis:7.0"));
            let history = f.history_is(k, &ns, &target, &["1"]);
            // kubectl 1.35 prints a CHANGE-CAUSE column for StatefulSets too.
            assert!(
                history.starts_with(&format!("{resource}.apps/db \nREVISION")),
                "{history}"
            );
            let owner = f.json(k, &["get", resource, "db", "-n", &ns]);
            let revs = f.items(k, &ns, "controllerrevisions");
            assert_eq!(revs.len(), 1);
            let first = revs[0].clone();
            let hash = first["metadata"]["labels"][hash_label]
                .as_str()
                .unwrap_or_default();
            assert_eq!(name(&first), format!("db-{hash}"), "{first}");
            assert_eq!(first["revision"], 1);
            assert_eq!(first["metadata"]["labels"]["app"], "db");
            assert_eq!(
                first["metadata"]["ownerReferences"][0]["uid"],
                owner["metadata"]["uid"]
            );
            assert_eq!(first["metadata"]["ownerReferences"][0]["kind"], kind);
            assert_eq!(first["data"]["spec"]["template"]["$patch"], "replace");
            assert!(
                owner
                    .get("status")
                    .is_none_or(|s| s.get("currentRevision").is_none()),
                "{owner}"
            );

            f.ok(k, &["set", "image", &target, "app=redis:7.2", "-n", &ns]);
            f.history_is(k, &ns, &target, &["1", "2"]);
            let one = f.ok(
                k,
                &["rollout", "history", &target, "-n", &ns, "--revision=1"],
            );
            assert!(
                one.contains("redis:7.0") && !one.contains("redis:7.2"),
                "{one}"
            );

            let out = f.ok(k, &["rollout", "undo", &target, "-n", &ns]);
            assert_eq!(out, format!("{resource}.apps/db rolled back\n"));
            assert_eq!(f.image(k, &ns, &target), "redis:7.0");
            f.history_is(k, &ns, &target, &["2", "3"]);
            let back = f.wait("the first revision renumbered", || {
                f.items(k, &ns, "controllerrevisions")
                    .into_iter()
                    .find(|r| name(r) == name(&first))
                    .filter(|r| r["revision"] == 3)
            });
            assert_eq!(back["data"], first["data"]);

            let out = f.ok(
                k,
                &["rollout", "undo", &target, "-n", &ns, "--to-revision=2"],
            );
            assert_eq!(out, format!("{resource}.apps/db rolled back\n"));
            assert_eq!(f.image(k, &ns, &target), "redis:7.2");
            f.history_is(k, &ns, &target, &["3", "4"]);
            // Undo to the current revision: kubectl compares the revision's
            // bytes with the template it encodes; from 1.35 on its encoding
            // omits `creationTimestamp: null`, which kube-controller-manager
            // 1.33 stores (and so does Skein), so 1.35 patches (a no-op)
            // where 1.32 skips, as against a real 1.33 cluster.
            let out = f.ok(
                k,
                &["rollout", "undo", &target, "-n", &ns, "--to-revision=4"],
            );
            let want = if skein_tests::kubectl::client_minor(k) >= 35 {
                format!("{resource}.apps/db rolled back\n")
            } else {
                format!(
                    "{resource}.apps/db skipped rollback (current template already matches revision 4)\n"
                )
            };
            assert_eq!(out, want);
            f.history_is(k, &ns, &target, &["3", "4"]);

            f.ok(k, &["delete", resource, "db", "-n", &ns]);
            f.wait("the ControllerRevisions to be collected", || {
                f.items(k, &ns, "controllerrevisions")
                    .is_empty()
                    .then_some(())
            });
        }
    }
}

/// The history limit holds on the federation too, and the history
/// objects' writes are not reverted by a later `kubectl apply`.
#[tokio::test(flavor = "multi_thread")]
async fn history_limit_and_apply() {
    let f = Fed::start().await;
    let k = &f.kubectls[0];
    let ns = "limit";
    f.ok(k, &["create", "namespace", ns]);
    let mut d = workload("Deployment", "web", "nginx:1.0");
    d["spec"]["revisionHistoryLimit"] = json!(2);
    for v in 0u32..5 {
        d["spec"]["template"]["spec"]["containers"][0]["image"] = json!(format!("nginx:1.{v}"));
        f.apply(k, ns, &d);
        let want: Vec<String> = ((v + 1).saturating_sub(3)..=v)
            .map(|r| (r + 1).to_string())
            .collect();
        let want: Vec<&str> = want.iter().map(String::as_str).collect();
        f.history_is(k, ns, "deployment/web", &want);
    }
    assert_eq!(f.items(k, ns, "rs").len(), 3);
    // Re-applying the same manifest leaves the revision annotation.
    f.apply(k, ns, &d);
    let d = f.json(
        k,
        &["get", "deploy", "web", "-n", ns, "--show-managed-fields"],
    );
    assert_eq!(annotation(&d, "deployment.kubernetes.io/revision"), "5");
    let managers: Vec<&str> = d["metadata"]["managedFields"]
        .as_array()
        .map(|m| m.iter().filter_map(|e| e["manager"].as_str()).collect())
        .unwrap_or_default();
    assert!(managers.contains(&"skein-history"), "{managers:?}");
}
