//! Everyday kubectl workflows that need patch, server-side apply and
//! OpenAPI: `apply` (client- and server-side, `--prune`), `diff`, `edit`,
//! `replace`, `patch --type strategic|merge|json`, `set image`,
//! `rollout restart`. kubectl 1.35 and 1.32, each in its own namespace, and
//! never with `--validate=false`: kubectl validates through the server's
//! OpenAPI (`fieldValidation=Strict`).
//!
//! What is asserted is what kubectl prints against a real cluster and what
//! is stored afterwards.

use std::fs;

use serde_json::{Value, json};
use skein_tests::cli::*;
use skein_tests::kubectl as kc;

/// A two-container Deployment: `app` (nginx) and `sidecar` (busybox).
fn web(name: &str, app_image: &str, replicas: u32) -> Value {
    json!({
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": name, "labels": {"app": name}},
        "spec": {
            "replicas": replicas,
            "selector": {"matchLabels": {"app": name}},
            "template": {
                "metadata": {"labels": {"app": name}},
                "spec": {"containers": [
                    {"name": "app", "image": app_image,
                     "ports": [{"containerPort": 80}]},
                    {"name": "sidecar", "image": "busybox:1.36",
                     "command": ["sh", "-c", "sleep 3600"]},
                ]},
            },
        },
    })
}

/// The container called `name` in a Deployment.
fn container<'a>(deploy: &'a Value, name: &str) -> &'a Value {
    deploy["spec"]["template"]["spec"]["containers"]
        .as_array()
        .and_then(|cs| cs.iter().find(|c| c["name"] == name))
        .unwrap_or_else(|| panic!("no container {name} in {deploy}"))
}

/// Writes `object` to a fixed path (so a later write replaces the file).
fn write(env: &Env, file: &str, object: &Value) -> String {
    let path = env.dir.path().join(file);
    fs::write(&path, serde_json::to_vec_pretty(object).expect("JSON")).expect("write manifest");
    path.to_string_lossy().into_owned()
}

fn rv(obj: &Value) -> String {
    obj["metadata"]["resourceVersion"]
        .as_str()
        .unwrap_or_default()
        .to_string()
}

/// The managers of an object's managedFields, as `manager/operation`.
fn managers(obj: &Value) -> Vec<String> {
    obj["metadata"]["managedFields"]
        .as_array()
        .map(|a| {
            a.iter()
                .map(|e| {
                    format!(
                        "{}/{}",
                        e["manager"].as_str().unwrap_or(""),
                        e["operation"].as_str().unwrap_or("")
                    )
                })
                .collect()
        })
        .unwrap_or_default()
}

#[tokio::test]
async fn client_side_apply_creates_then_merges_list_items_by_key() {
    let env = start().await;
    let s = &env.server;
    for (i, k) in env.each() {
        let ns = format!("csa-{i}");
        env.namespace(k, &ns);
        let file = write(&env, &format!("web-{i}.json"), &web("web", "nginx:1.25", 1));

        assert_eq!(
            ok(k, s, &["apply", "-f", &file, "-n", &ns]),
            "deployment.apps/web created\n"
        );
        let created = get_json(k, s, &["get", "deployment", "web", "-n", &ns]);
        assert!(
            created["metadata"]["annotations"]["kubectl.kubernetes.io/last-applied-configuration"]
                .is_string(),
            "{created}"
        );
        assert_eq!(
            ok(k, s, &["apply", "-f", &file, "-n", &ns]),
            "deployment.apps/web unchanged\n"
        );

        // Another writer adds an env var to the sidecar. A strategic patch
        // merges containers by name, so the next apply keeps it; a JSON merge
        // patch would replace the whole list and lose it.
        assert_eq!(
            ok(
                k,
                s,
                &[
                    "set",
                    "env",
                    "deployment/web",
                    "-c",
                    "sidecar",
                    "MODE=quiet",
                    "-n",
                    &ns
                ]
            ),
            "deployment.apps/web env updated\n"
        );

        write(&env, &format!("web-{i}.json"), &web("web", "nginx:1.26", 1));
        let out = kubectl(k, s, &["apply", "-f", &file, "-n", &ns, "-v=8"]);
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        assert_eq!(
            String::from_utf8_lossy(&out.stdout),
            "deployment.apps/web configured\n"
        );
        let log = String::from_utf8_lossy(&out.stderr);
        assert!(
            log.contains("application/strategic-merge-patch+json"),
            "kubectl apply should send a strategic merge patch:\n{log}"
        );

        let after = get_json(k, s, &["get", "deployment", "web", "-n", &ns]);
        assert_eq!(container(&after, "app")["image"], "nginx:1.26");
        let sidecar = container(&after, "sidecar");
        assert_eq!(sidecar["image"], "busybox:1.36");
        assert_eq!(sidecar["command"], json!(["sh", "-c", "sleep 3600"]));
        assert_eq!(sidecar["env"], json!([{"name": "MODE", "value": "quiet"}]));
        assert_eq!(after["metadata"]["generation"], 3, "{after}");
    }
}

#[tokio::test]
async fn apply_prune_removes_what_left_the_manifest_set() {
    let env = start().await;
    let s = &env.server;
    for (i, k) in env.each() {
        let ns = format!("prune-{i}");
        env.namespace(k, &ns);
        let dir = env.dir.path().join(format!("prune-{i}"));
        fs::create_dir_all(&dir).expect("mkdir");
        let cm = |name: &str| {
            json!({"apiVersion": "v1", "kind": "ConfigMap",
                   "metadata": {"name": name, "labels": {"set": "prune"}},
                   "data": {"k": name}})
        };
        for name in ["keep", "drop"] {
            fs::write(
                dir.join(format!("{name}.json")),
                serde_json::to_vec(&cm(name)).expect("JSON"),
            )
            .expect("write");
        }
        // Not part of the set: no label, so prune must not touch it.
        env.create(
            k,
            &ns,
            &json!({"apiVersion": "v1", "kind": "ConfigMap",
                                    "metadata": {"name": "bystander"}}),
        );
        let d = dir.to_string_lossy().into_owned();
        let out = ok(k, s, &["apply", "-f", &d, "-n", &ns, "-l", "set=prune"]);
        assert_eq!(out, "configmap/drop created\nconfigmap/keep created\n");

        fs::remove_file(dir.join("drop.json")).expect("rm");
        let out = ok(
            k,
            s,
            &["apply", "-f", &d, "-n", &ns, "-l", "set=prune", "--prune"],
        );
        assert_eq!(out, "configmap/keep unchanged\nconfigmap/drop pruned\n");
        let names = ok(k, s, &["get", "configmaps", "-n", &ns, "-o", "name"]);
        assert!(names.contains("configmap/keep\n"), "{names}");
        assert!(names.contains("configmap/bystander\n"), "{names}");
        assert!(!names.contains("configmap/drop\n"), "{names}");
    }
}

#[tokio::test]
async fn server_side_apply_conflicts_and_force() {
    let env = start().await;
    let s = &env.server;
    for (i, k) in env.each() {
        let ns = format!("ssa-{i}");
        env.namespace(k, &ns);
        let file = write(&env, &format!("ssa-{i}.json"), &web("ssa", "nginx:1.25", 1));
        assert_eq!(
            ok(k, s, &["apply", "--server-side", "-f", &file, "-n", &ns]),
            "deployment.apps/ssa serverside-applied\n"
        );
        let applied = get_json(
            k,
            s,
            &[
                "get",
                "deployment",
                "ssa",
                "-n",
                &ns,
                "--show-managed-fields",
            ],
        );
        assert_eq!(managers(&applied), ["kubectl/Apply"], "{applied}");
        let fields = &applied["metadata"]["managedFields"][0]["fieldsV1"];
        assert!(fields["f:spec"]["f:replicas"].is_object(), "{fields}");
        assert!(
            fields["f:spec"]["f:template"]["f:spec"]["f:containers"]["k:{\"name\":\"app\"}"]
                ["f:image"]
                .is_object(),
            "{fields}"
        );

        // Another manager takes spec.replicas.
        assert_eq!(
            ok(
                k,
                s,
                &[
                    "patch",
                    "deployment",
                    "ssa",
                    "-n",
                    &ns,
                    "--type",
                    "merge",
                    "-p",
                    r#"{"spec":{"replicas":5}}"#
                ]
            ),
            "deployment.apps/ssa patched\n"
        );
        write(&env, &format!("ssa-{i}.json"), &web("ssa", "nginx:1.25", 3));
        let stderr = err(k, s, &["apply", "--server-side", "-f", &file, "-n", &ns]);
        let first = stderr.lines().next().unwrap_or_default();
        assert_eq!(
            first,
            "error: Apply failed with 1 conflict: conflict with \"kubectl-patch\" using apps/v1: .spec.replicas",
            "{stderr}"
        );
        assert!(stderr.contains("--force-conflicts"), "{stderr}");
        let unchanged = get_json(
            k,
            s,
            &[
                "get",
                "deployment",
                "ssa",
                "-n",
                &ns,
                "--show-managed-fields",
            ],
        );
        assert_eq!(unchanged["spec"]["replicas"], 5);

        assert_eq!(
            ok(
                k,
                s,
                &[
                    "apply",
                    "--server-side",
                    "--force-conflicts",
                    "-f",
                    &file,
                    "-n",
                    &ns
                ]
            ),
            "deployment.apps/ssa serverside-applied\n"
        );
        let forced = get_json(
            k,
            s,
            &[
                "get",
                "deployment",
                "ssa",
                "-n",
                &ns,
                "--show-managed-fields",
            ],
        );
        assert_eq!(forced["spec"]["replicas"], 3);
        let owners: Vec<&Value> = forced["metadata"]["managedFields"]
            .as_array()
            .expect("managedFields")
            .iter()
            .filter(|e| e["fieldsV1"]["f:spec"]["f:replicas"].is_object())
            .collect();
        assert_eq!(owners.len(), 1, "{forced}");
        assert_eq!(owners[0]["manager"], "kubectl");
    }
}

#[tokio::test]
async fn diff_shows_the_change_and_persists_nothing() {
    let env = start().await;
    let s = &env.server;
    for (i, k) in env.each() {
        let ns = format!("diff-{i}");
        env.namespace(k, &ns);
        let file = write(
            &env,
            &format!("diff-{i}.json"),
            &web("web", "nginx:1.25", 1),
        );
        ok(k, s, &["apply", "-f", &file, "-n", &ns]);
        let before = get_json(k, s, &["get", "deployment", "web", "-n", &ns]);

        write(
            &env,
            &format!("diff-{i}.json"),
            &web("web", "nginx:1.26", 1),
        );
        let out = kubectl(k, s, &["diff", "-f", &file, "-n", &ns]);
        // kubectl diff exits 1 when there are differences.
        assert_eq!(
            out.status.code(),
            Some(1),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        let diff = String::from_utf8_lossy(&out.stdout);
        // Only the change (and the generation it bumps) is shown.
        let changed: Vec<&str> = diff
            .lines()
            .filter(|l| {
                (l.starts_with('+') || l.starts_with('-'))
                    && !l.starts_with("+++")
                    && !l.starts_with("---")
            })
            .collect();
        assert_eq!(
            changed,
            [
                "-  generation: 1",
                "+  generation: 2",
                "-      - image: nginx:1.25",
                "+      - image: nginx:1.26"
            ],
            "{diff}"
        );

        let after = get_json(k, s, &["get", "deployment", "web", "-n", &ns]);
        assert_eq!(rv(&after), rv(&before), "diff must not persist anything");
        assert_eq!(container(&after, "app")["image"], "nginx:1.25");
    }
}

#[tokio::test]
async fn edit_replace_patch_set_image_and_rollout_restart() {
    let env = start().await;
    let s = &env.server;
    let editor = env.dir.path().join("editor.sh");
    fs::write(
        &editor,
        "#!/bin/sh\nsed -i 's/replicas: 1$/replicas: 4/' \"$1\"\n",
    )
    .expect("write editor");
    let status = std::process::Command::new("chmod")
        .arg("+x")
        .arg(&editor)
        .status()
        .expect("chmod");
    assert!(status.success());

    for (i, k) in env.each() {
        let ns = format!("edit-{i}");
        env.namespace(k, &ns);
        let file = write(
            &env,
            &format!("edit-{i}.json"),
            &web("web", "nginx:1.25", 1),
        );
        assert_eq!(
            ok(k, s, &["create", "-f", &file, "-n", &ns]),
            "deployment.apps/web created\n"
        );

        // edit, with EDITOR set to a script.
        let out = kc::command(k, s)
            .env("KUBE_EDITOR", &editor)
            .args(["edit", "deployment/web", "-n", &ns])
            .output()
            .expect("run kubectl edit");
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        assert_eq!(
            String::from_utf8_lossy(&out.stdout),
            "deployment.apps/web edited\n"
        );
        let edited = get_json(k, s, &["get", "deployment", "web", "-n", &ns]);
        assert_eq!(edited["spec"]["replicas"], 4);
        assert_eq!(container(&edited, "sidecar")["image"], "busybox:1.36");

        // replace -f, with validation through the server.
        let mut replacement = web("web", "nginx:1.25", 2);
        replacement["metadata"]["labels"]["tier"] = json!("front");
        let rfile = write(&env, &format!("replace-{i}.json"), &replacement);
        assert_eq!(
            ok(k, s, &["replace", "-f", &rfile, "-n", &ns]),
            "deployment.apps/web replaced\n"
        );
        let replaced = get_json(k, s, &["get", "deployment", "web", "-n", &ns]);
        assert_eq!(replaced["spec"]["replicas"], 2);
        assert_eq!(replaced["metadata"]["labels"]["tier"], "front");

        // patch, three ways.
        let strategic = r#"{"spec":{"template":{"spec":{"containers":[{"name":"sidecar","image":"busybox:1.37"}]}}}}"#;
        assert_eq!(
            ok(
                k,
                s,
                &[
                    "patch",
                    "deployment",
                    "web",
                    "-n",
                    &ns,
                    "--type",
                    "strategic",
                    "-p",
                    strategic
                ]
            ),
            "deployment.apps/web patched\n"
        );
        let merge = r#"{"metadata":{"labels":{"tier":"edge"}}}"#;
        assert_eq!(
            ok(
                k,
                s,
                &[
                    "patch",
                    "deployment",
                    "web",
                    "-n",
                    &ns,
                    "--type",
                    "merge",
                    "-p",
                    merge
                ]
            ),
            "deployment.apps/web patched\n"
        );
        let json_patch = r#"[{"op":"replace","path":"/spec/replicas","value":3}]"#;
        assert_eq!(
            ok(
                k,
                s,
                &[
                    "patch",
                    "deployment",
                    "web",
                    "-n",
                    &ns,
                    "--type",
                    "json",
                    "-p",
                    json_patch
                ]
            ),
            "deployment.apps/web patched\n"
        );
        assert_eq!(
            ok(
                k,
                s,
                &[
                    "patch",
                    "deployment",
                    "web",
                    "-n",
                    &ns,
                    "--type",
                    "merge",
                    "-p",
                    merge
                ]
            ),
            "deployment.apps/web patched (no change)\n"
        );
        let patched = get_json(k, s, &["get", "deployment", "web", "-n", &ns]);
        assert_eq!(container(&patched, "sidecar")["image"], "busybox:1.37");
        assert_eq!(container(&patched, "app")["image"], "nginx:1.25");
        assert_eq!(patched["metadata"]["labels"]["tier"], "edge");
        assert_eq!(patched["spec"]["replicas"], 3);

        // set image and rollout restart.
        assert_eq!(
            ok(
                k,
                s,
                &[
                    "set",
                    "image",
                    "deployment/web",
                    "app=nginx:1.27",
                    "-n",
                    &ns
                ]
            ),
            "deployment.apps/web image updated\n"
        );
        assert_eq!(
            ok(k, s, &["rollout", "restart", "deployment/web", "-n", &ns]),
            "deployment.apps/web restarted\n"
        );
        let restarted = get_json(k, s, &["get", "deployment", "web", "-n", &ns]);
        assert_eq!(container(&restarted, "app")["image"], "nginx:1.27");
        let stamp = &restarted["spec"]["template"]["metadata"]["annotations"]["kubectl.kubernetes.io/restartedAt"];
        assert!(stamp.is_string(), "{restarted}");
        assert!(
            restarted["metadata"]["generation"].as_i64().unwrap_or(0)
                > patched["metadata"]["generation"].as_i64().unwrap_or(0)
        );
    }
}

#[tokio::test]
async fn invalid_objects_and_unknown_fields_are_refused_with_upstream_messages() {
    let env = start().await;
    let s = &env.server;
    for (i, k) in env.each() {
        let ns = format!("bad-{i}");
        env.namespace(k, &ns);

        // Strict validation of an unknown field, through the server.
        let mut unknown = web("typo", "nginx:1.25", 1);
        unknown["spec"]["replica"] = json!(2);
        let file = write(&env, &format!("typo-{i}.json"), &unknown);
        let stderr = err(k, s, &["create", "-f", &file, "-n", &ns]);
        assert!(
            stderr.contains(r#"strict decoding error: unknown field "spec.replica""#),
            "{stderr}"
        );

        // A selector that does not match the template's labels.
        let mut mismatch = web("mismatch", "nginx:1.25", 1);
        mismatch["spec"]["template"]["metadata"]["labels"] = json!({"app": "other"});
        let file = write(&env, &format!("mismatch-{i}.json"), &mismatch);
        let stderr = err(k, s, &["apply", "-f", &file, "-n", &ns]);
        assert!(
            stderr.contains(r#"The Deployment "mismatch" is invalid: spec.template.metadata.labels: Invalid value: map[string]string{"app":"other"}: `selector` does not match template `labels`"#),
            "{stderr}"
        );

        // A malformed placement annotation.
        let mut placed = web("placed", "nginx:1.25", 1);
        placed["metadata"]["annotations"] = json!({"skein.io/drift": "Sometimes"});
        let file = write(&env, &format!("placed-{i}.json"), &placed);
        let stderr = err(k, s, &["apply", "--server-side", "-f", &file, "-n", &ns]);
        assert!(stderr.contains("skein.io/drift"), "{stderr}");
        assert!(stderr.contains("is invalid"), "{stderr}");

        let names = ok(k, s, &["get", "deployments", "-n", &ns, "-o", "name"]);
        assert_eq!(names, "", "nothing may be stored");
    }
}

#[tokio::test]
async fn client_side_apply_upgrades_to_server_side_apply() {
    let env = start().await;
    let s = &env.server;
    for (i, k) in env.each() {
        let ns = format!("upgrade-{i}");
        env.namespace(k, &ns);
        let file = write(&env, &format!("up-{i}.json"), &web("web", "nginx:1.25", 2));
        assert_eq!(
            ok(k, s, &["apply", "-f", &file, "-n", &ns]),
            "deployment.apps/web created\n"
        );
        let before = get_json(
            k,
            s,
            &[
                "get",
                "deployment",
                "web",
                "-n",
                &ns,
                "--show-managed-fields",
            ],
        );
        assert_eq!(
            managers(&before),
            ["kubectl-client-side-apply/Update"],
            "{before}"
        );

        // The same file, now server-side: kubectl moves the client-side
        // manager's fields to its own Apply entry, so nothing conflicts.
        write(&env, &format!("up-{i}.json"), &web("web", "nginx:1.26", 3));
        assert_eq!(
            ok(k, s, &["apply", "--server-side", "-f", &file, "-n", &ns]),
            "deployment.apps/web serverside-applied\n"
        );
        let after = get_json(
            k,
            s,
            &[
                "get",
                "deployment",
                "web",
                "-n",
                &ns,
                "--show-managed-fields",
            ],
        );
        assert_eq!(after["spec"]["replicas"], 3);
        assert_eq!(container(&after, "app")["image"], "nginx:1.26");
        // kubectl moved the client-side manager's fields to "kubectl"
        // (its own last-applied annotation goes through a separate
        // "kubectl-last-applied" apply).
        let all = managers(&after);
        assert!(all.iter().any(|m| m == "kubectl/Apply"), "{after}");
        assert!(
            !all.iter().any(|m| m == "kubectl-client-side-apply/Update"),
            "{after}"
        );
        let applied = after["metadata"]["managedFields"]
            .as_array()
            .and_then(|a| {
                a.iter()
                    .find(|e| e["operation"] == "Apply" && e["manager"] == "kubectl")
            })
            .expect("an Apply entry");
        assert!(
            applied["fieldsV1"]["f:spec"]["f:replicas"].is_object(),
            "{applied}"
        );
    }
}
