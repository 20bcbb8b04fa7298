//! kubectl 1.35 and 1.32 against `skein serve`: what users see (stdout,
//! stderr, exit code), asserted to be what the same kubectl prints against a
//! real Kubernetes API server.
//!
//! Every test starts its own server and runs its steps once per kubectl
//! binary, each binary in its own namespace (`<prefix>-<index>`), so the
//! binaries never see each other's objects. Every kubectl invocation has a
//! deadline ([`TIMEOUT`]); one that overruns is killed and fails the test.
//!
//! Files are created and replaced with kubectl's default validation, which
//! reads the server's OpenAPI v3 and validates on the server
//! (`fieldValidation=Strict`).

use std::fs;
use std::path::Path;

use serde_json::{Value, json};
use skein_tests::cli::*;
use skein_tests::kubectl::{self as kc, Background};
use skein_tests::server::Server;

fn configmap(name: &str, labels: Value, data: Value) -> Value {
    json!({
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {"name": name, "labels": labels},
        "data": data,
    })
}

fn secret(name: &str, type_: &str) -> Value {
    json!({
        "apiVersion": "v1",
        "kind": "Secret",
        "metadata": {"name": name},
        "type": type_,
        "data": {"k": "dg=="},
    })
}

/// A Deployment `name` with `app=<name>` labels and selector, one
/// `nginx:1.27` container called `web`.
fn deployment(name: &str, replicas: u32) -> Value {
    json!({
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": name, "labels": {"app": name}},
        "spec": {
            "replicas": replicas,
            "selector": {"matchLabels": {"app": name}},
            "template": {
                "metadata": {"labels": {"app": name}},
                "spec": {"containers": [{"name": "web", "image": "nginx:1.27"}]},
            },
        },
    })
}

/// A ReplicaSet `name` selecting `app=<app>`, owned (as its controller) by
/// Deployment `owner = (name, uid)` if given.
fn replicaset(name: &str, app: &str, owner: Option<(&str, &str)>) -> Value {
    let mut rs = json!({
        "apiVersion": "apps/v1",
        "kind": "ReplicaSet",
        "metadata": {"name": name, "labels": {"app": app}},
        "spec": {
            "replicas": 2,
            "selector": {"matchLabels": {"app": app}},
            "template": {
                "metadata": {"labels": {"app": app}},
                "spec": {"containers": [{"name": "web", "image": "nginx:1.27"}]},
            },
        },
    });
    if let Some((owner, uid)) = owner {
        rs["metadata"]["ownerReferences"] = json!([{
            "apiVersion": "apps/v1",
            "kind": "Deployment",
            "name": owner,
            "uid": uid,
            "controller": true,
            "blockOwnerDeletion": true,
        }]);
    }
    rs
}

/// Creates Deployment `web` and ReplicaSet `web-abc` owned by it in `ns`
/// (there are no workload controllers, so the test plays the Deployment
/// controller). Returns the Deployment's uid.
fn deployment_with_replicaset(env: &Env, k: &Path, ns: &str) -> String {
    let s = &env.server;
    env.create(k, ns, &deployment("web", 2));
    let uid = ok(
        k,
        s,
        &[
            "get",
            "deploy",
            "web",
            "-n",
            ns,
            "-o",
            "jsonpath={.metadata.uid}",
        ],
    );
    assert!(!uid.is_empty(), "the Deployment has no uid");
    env.create(k, ns, &replicaset("web-abc", "web", Some(("web", &uid))));
    let owner = ok(
        k,
        s,
        &[
            "get",
            "rs",
            "web-abc",
            "-n",
            ns,
            "-o",
            "jsonpath={.metadata.ownerReferences[0].kind}/{.metadata.ownerReferences[0].uid}",
        ],
    );
    assert_eq!(owner, format!("Deployment/{uid}"));
    uid
}

/// `kubectl wait --for=delete <what> --timeout=30s` succeeds. It prints
/// `<what> condition met` if it saw the deletion, nothing if the object was
/// already gone.
fn wait_deleted(k: &Path, server: &Server, what: &str, ns: &str) {
    let out = ok(
        k,
        server,
        &["wait", "--for=delete", what, "-n", ns, "--timeout=30s"],
    );
    assert!(
        out.is_empty() || out == format!("{what} condition met\n"),
        "wait --for=delete {what}: {out:?}"
    );
}

// ---------------------------------------------------------------------------
// Reading: get, output formats, discovery, whoami
// ---------------------------------------------------------------------------

#[tokio::test]
async fn get_namespaces_lists_the_system_namespaces() {
    let env = start().await;
    let s = &env.server;
    for (_, k) in env.each() {
        let table = ok(k, s, &["get", "ns"]);
        assert_eq!(
            column(&table, 0),
            [
                "NAME",
                "default",
                "kube-node-lease",
                "kube-public",
                "kube-system"
            ],
            "{table}"
        );
        assert_eq!(
            ok(k, s, &["get", "namespaces", "-o", "name"]),
            "namespace/default\nnamespace/kube-node-lease\nnamespace/kube-public\n\
             namespace/kube-system\n"
        );
        assert_eq!(
            ok(
                k,
                s,
                &["get", "ns", "default", "-o", "jsonpath={.status.phase}"]
            ),
            "Active"
        );
    }
}

#[tokio::test]
async fn create_from_a_file_then_get_in_every_output_format() {
    let env = start().await;
    let s = &env.server;
    for (i, k) in env.each() {
        let ns = format!("formats-{i}");
        env.namespace(k, &ns);
        let file = env.manifest(&configmap("x", json!({"app": "web"}), json!({"a": "1"})));
        assert_eq!(
            ok(k, s, &["create", "-f", &file, "-n", &ns]),
            "configmap/x created\n"
        );

        let table = ok(k, s, &["get", "configmaps", "-n", &ns]);
        assert_eq!(
            column(&table, 0),
            ["NAME", "kube-root-ca.crt", "x"],
            "{table}"
        );
        assert!(is_age(cells(&table)[1].last().unwrap_or(&"")), "{table}");

        let cm = get_json(k, s, &["get", "cm", "x", "-n", &ns]);
        assert_eq!(cm["apiVersion"], "v1", "{cm}");
        assert_eq!(cm["kind"], "ConfigMap", "{cm}");
        assert_eq!(cm["metadata"]["name"], "x", "{cm}");
        assert_eq!(cm["metadata"]["namespace"], ns.as_str(), "{cm}");
        assert_eq!(cm["metadata"]["labels"], json!({"app": "web"}), "{cm}");
        assert_eq!(cm["data"], json!({"a": "1"}), "{cm}");
        for field in ["uid", "resourceVersion", "creationTimestamp"] {
            assert!(
                cm["metadata"][field]
                    .as_str()
                    .is_some_and(|v| !v.is_empty()),
                "metadata.{field} is missing: {cm}"
            );
        }

        let list = get_json(k, s, &["get", "cm", "-n", &ns]);
        assert_eq!(list["kind"], "List", "{list}");
        assert_eq!(
            list["items"][0]["metadata"]["name"], "kube-root-ca.crt",
            "{list}"
        );
        assert_eq!(list["items"][1]["metadata"]["name"], "x", "{list}");
        assert_eq!(list["items"].as_array().map(Vec::len), Some(2), "{list}");

        let yaml = ok(k, s, &["get", "cm", "x", "-n", &ns, "-o", "yaml"]);
        for line in [
            "apiVersion: v1\n",
            "kind: ConfigMap\n",
            "data:\n  a: \"1\"\n",
            "  name: x\n",
            &format!("  namespace: {ns}\n"),
            "    app: web\n",
        ] {
            assert!(yaml.contains(line), "-o yaml lacks {line:?}:\n{yaml}");
        }

        assert_eq!(
            ok(
                k,
                s,
                &[
                    "get",
                    "cm",
                    "x",
                    "-n",
                    &ns,
                    "-o",
                    "jsonpath={.metadata.name}={.data.a}"
                ]
            ),
            "x=1"
        );
        assert_eq!(
            ok(k, s, &["get", "cm", "x", "-n", &ns, "-o", "name"]),
            "configmap/x\n"
        );
        assert_eq!(
            ok(k, s, &["get", "cm", "-n", &ns, "-o", "name"]),
            "configmap/kube-root-ca.crt\nconfigmap/x\n"
        );
        let custom = ok(
            k,
            s,
            &[
                "get",
                "cm",
                "-n",
                &ns,
                "-o",
                "custom-columns=NAME:.metadata.name,A:.data.a,APP:.metadata.labels.app",
            ],
        );
        assert_eq!(
            cells(&custom),
            [
                vec!["NAME", "A", "APP"],
                vec!["kube-root-ca.crt", "<none>", "<none>"],
                vec!["x", "1", "web"]
            ]
        );
    }
}

#[tokio::test]
async fn get_several_kinds_at_once() {
    let env = start().await;
    let s = &env.server;
    for (i, k) in env.each() {
        let ns = format!("kinds-{i}");
        env.namespace(k, &ns);
        env.create(k, &ns, &deployment("web", 2));
        env.create(k, &ns, &configmap("x", json!({}), json!({"a": "1"})));

        let out = ok(k, s, &["get", "deploy,cm", "-n", &ns]);
        let tables = blocks(&out);
        assert_eq!(tables.len(), 2, "two tables:\n{out}");
        assert_eq!(
            column(tables[0], 0),
            ["NAME", "deployment.apps/web"],
            "{out}"
        );
        assert_eq!(
            column(tables[1], 0),
            ["NAME", "configmap/kube-root-ca.crt", "configmap/x"],
            "{out}"
        );
        assert_eq!(
            ok(k, s, &["get", "deploy,cm", "-n", &ns, "-o", "name"]),
            "deployment.apps/web\nconfigmap/kube-root-ca.crt\nconfigmap/x\n"
        );
    }
}

#[tokio::test]
async fn all_namespaces_lists_objects_of_every_namespace() {
    let env = start().await;
    let s = &env.server;
    for (i, k) in env.each() {
        let (a, b) = (format!("all-a-{i}"), format!("all-b-{i}"));
        env.namespace(k, &a);
        env.namespace(k, &b);
        env.create(k, &a, &configmap("x", json!({}), json!({})));
        env.create(k, &b, &configmap("x", json!({}), json!({})));
        env.create(k, &b, &configmap("y", json!({}), json!({})));

        for flag in ["-A", "--all-namespaces"] {
            let table = ok(k, s, &["get", "cm", flag]);
            assert_eq!(header(&table)[..2], ["NAMESPACE", "NAME"], "{table}");
            let mine: Vec<(&str, &str)> = cells(&table)
                .into_iter()
                .filter(|r| r[0] == a || r[0] == b)
                .map(|r| (r[0], r[1]))
                .collect();
            assert_eq!(
                mine,
                [
                    (a.as_str(), "kube-root-ca.crt"),
                    (a.as_str(), "x"),
                    (b.as_str(), "kube-root-ca.crt"),
                    (b.as_str(), "x"),
                    (b.as_str(), "y")
                ],
                "{table}"
            );
        }
    }
}

#[tokio::test]
async fn auth_whoami_names_the_admin() {
    let env = start().await;
    let s = &env.server;
    for (_, k) in env.each() {
        assert_eq!(
            ok(k, s, &["auth", "whoami"]),
            "ATTRIBUTE   VALUE\n\
             Username    skein-admin\n\
             Groups      [system:masters system:authenticated]\n"
        );
        let review = get_json(k, s, &["auth", "whoami"]);
        assert_eq!(review["apiVersion"], "authentication.k8s.io/v1", "{review}");
        assert_eq!(review["kind"], "SelfSubjectReview", "{review}");
        assert_eq!(
            review["status"]["userInfo"]["username"], "skein-admin",
            "{review}"
        );
        assert_eq!(
            review["status"]["userInfo"]["groups"],
            json!(["system:masters", "system:authenticated"]),
            "{review}"
        );
    }
}

#[tokio::test]
async fn api_resources_and_api_versions_come_from_discovery() {
    let env = start().await;
    let s = &env.server;
    for (_, k) in env.each() {
        let table = ok(k, s, &["api-resources"]);
        let rows = cells(&table);
        assert_eq!(
            rows[0],
            ["NAME", "SHORTNAMES", "APIVERSION", "NAMESPACED", "KIND"],
            "{table}"
        );
        for expected in [
            vec!["configmaps", "cm", "v1", "true", "ConfigMap"],
            vec!["namespaces", "ns", "v1", "false", "Namespace"],
            vec!["secrets", "v1", "true", "Secret"],
            vec!["deployments", "deploy", "apps/v1", "true", "Deployment"],
            vec!["replicasets", "rs", "apps/v1", "true", "ReplicaSet"],
            vec![
                "selfsubjectreviews",
                "authentication.k8s.io/v1",
                "false",
                "SelfSubjectReview",
            ],
        ] {
            assert!(
                rows.contains(&expected),
                "api-resources lacks {expected:?}:\n{table}"
            );
        }

        let apps = ok(k, s, &["api-resources", "--api-group=apps", "-o", "name"]);
        let apps: Vec<&str> = apps.lines().collect();
        for r in ["deployments.apps", "replicasets.apps", "statefulsets.apps"] {
            assert!(apps.contains(&r), "--api-group=apps lacks {r}: {apps:?}");
        }
        assert!(apps.iter().all(|r| r.ends_with(".apps")), "{apps:?}");

        let cluster = ok(k, s, &["api-resources", "--namespaced=false", "-o", "name"]);
        let cluster: Vec<&str> = cluster.lines().collect();
        assert!(cluster.contains(&"namespaces"), "{cluster:?}");
        assert!(!cluster.contains(&"configmaps"), "{cluster:?}");

        let listable = ok(k, s, &["api-resources", "--verbs=list", "-o", "name"]);
        let listable: Vec<&str> = listable.lines().collect();
        assert!(listable.contains(&"configmaps"), "{listable:?}");
        assert!(
            !listable.contains(&"selfsubjectreviews.authentication.k8s.io"),
            "selfsubjectreviews only support create: {listable:?}"
        );

        let versions = ok(k, s, &["api-versions"]);
        let versions: Vec<&str> = versions.lines().collect();
        for v in ["v1", "apps/v1", "authentication.k8s.io/v1", "batch/v1"] {
            assert!(
                versions.contains(&v),
                "api-versions lacks {v}: {versions:?}"
            );
        }
        let mut sorted = versions.clone();
        sorted.sort_unstable();
        assert_eq!(versions, sorted, "kubectl prints api-versions sorted");
    }
}

#[tokio::test]
async fn get_all_lists_the_workloads_of_a_namespace() {
    let env = start().await;
    let s = &env.server;
    for (i, k) in env.each() {
        let ns = format!("everything-{i}");
        env.namespace(k, &ns);

        let out = kubectl(k, s, &["get", "all", "-n", &ns]);
        assert!(out.status.success(), "{}", stderr(&out));
        assert_eq!(stdout(&out), "");
        assert_eq!(
            stderr(&out),
            format!("No resources found in {ns} namespace.\n")
        );

        env.create(k, &ns, &deployment("web", 2));
        env.create(k, &ns, &replicaset("web-abc", "web", None));
        env.create(k, &ns, &configmap("x", json!({}), json!({})));

        let out = ok(k, s, &["get", "all", "-n", &ns]);
        let tables = blocks(&out);
        assert_eq!(tables.len(), 2, "deployments and replicasets:\n{out}");
        assert_eq!(
            column(tables[0], 0),
            ["NAME", "deployment.apps/web"],
            "{out}"
        );
        assert_eq!(
            column(tables[1], 0),
            ["NAME", "replicaset.apps/web-abc"],
            "{out}"
        );
        assert_eq!(
            ok(k, s, &["get", "all", "-n", &ns, "-o", "name"]),
            "deployment.apps/web\nreplicaset.apps/web-abc\n",
            "ConfigMaps are not in the `all` category"
        );
    }
}

#[tokio::test]
async fn chunked_list_returns_every_object() {
    let env = start().await;
    let s = &env.server;
    for (i, k) in env.each() {
        let ns = format!("chunks-{i}");
        env.namespace(k, &ns);
        // Nine and the namespace's kube-root-ca.crt: ten objects.
        let mut names: Vec<String> = (0..9).map(|n| format!("cm-{n}")).collect();
        for name in &names {
            env.create(k, &ns, &configmap(name, json!({}), json!({})));
        }
        names.push("kube-root-ca.crt".into());
        let expected: String = names.iter().map(|n| format!("configmap/{n}\n")).collect();

        assert_eq!(
            ok(
                k,
                s,
                &["get", "cm", "-n", &ns, "--chunk-size=2", "-o", "name"]
            ),
            expected
        );

        // The table output merges the pages into one table; -v=6 logs each
        // request: five pages of two, the last without a continue token.
        let out = kubectl(k, s, &["get", "cm", "-n", &ns, "--chunk-size=2", "-v=6"]);
        assert!(out.status.success(), "{}", stderr(&out));
        let table = stdout(&out);
        let mut want = vec!["NAME"];
        want.extend(names.iter().map(String::as_str));
        assert_eq!(column(&table, 0), want, "{table}");
        let log = stderr(&out);
        let pages: Vec<&str> = log
            .lines()
            .filter(|l| l.contains("/configmaps?") && l.contains("limit=2") && l.contains("200 OK"))
            .collect();
        assert_eq!(
            pages.len(),
            5,
            "five requests of two:\n{}",
            pages.join("\n")
        );
        assert!(!pages[0].contains("continue="), "{}", pages[0]);
        assert!(
            pages[1..].iter().all(|p| p.contains("continue=")),
            "{}",
            pages.join("\n")
        );
    }
}

// ---------------------------------------------------------------------------
// Writing: create, replace, label, annotate, scale, delete; errors
// ---------------------------------------------------------------------------

#[tokio::test]
async fn creating_an_existing_object_is_already_exists() {
    let env = start().await;
    let s = &env.server;
    for (i, k) in env.each() {
        let ns = format!("exists-{i}");
        let ns_file = env.manifest(&namespace(&ns));
        assert_eq!(
            ok(k, s, &["create", "-f", &ns_file]),
            format!("namespace/{ns} created\n")
        );
        assert_eq!(
            err(k, s, &["create", "-f", &ns_file]),
            format!(
                "Error from server (AlreadyExists): error when creating \"{ns_file}\": \
                 namespaces \"{ns}\" already exists\n"
            )
        );

        let file = env.manifest(&configmap("x", json!({}), json!({"a": "1"})));
        let create = ["create", "-f", &file, "-n", &ns];
        assert_eq!(ok(k, s, &create), "configmap/x created\n");
        assert_eq!(
            err(k, s, &create),
            format!(
                "Error from server (AlreadyExists): error when creating \"{file}\": \
                 configmaps \"x\" already exists\n"
            )
        );

        let file = env.manifest(&deployment("web", 1));
        let create = ["create", "-f", &file, "-n", &ns];
        assert_eq!(ok(k, s, &create), "deployment.apps/web created\n");
        assert_eq!(
            err(k, s, &create),
            format!(
                "Error from server (AlreadyExists): error when creating \"{file}\": \
                 deployments.apps \"web\" already exists\n"
            )
        );
    }
}

#[tokio::test]
async fn missing_objects_are_not_found() {
    let env = start().await;
    let s = &env.server;
    for (i, k) in env.each() {
        let ns = format!("missing-{i}");
        env.namespace(k, &ns);
        for (args, expected) in [
            (
                vec!["get", "cm", "nope", "-n", &ns],
                r#"configmaps "nope" not found"#,
            ),
            (
                vec!["get", "deploy", "nope", "-n", &ns],
                r#"deployments.apps "nope" not found"#,
            ),
            (
                vec!["delete", "cm", "nope", "-n", &ns],
                r#"configmaps "nope" not found"#,
            ),
            (vec!["get", "ns", "nope"], r#"namespaces "nope" not found"#),
            // The server answers `configmaps "x" not found`; kubectl then
            // looks the namespace up and reports that it is missing instead.
            (
                vec!["get", "cm", "x", "-n", "no-such-namespace"],
                r#"namespaces "no-such-namespace" not found"#,
            ),
        ] {
            assert_eq!(
                err(k, s, &args),
                format!("Error from server (NotFound): {expected}\n"),
                "{}",
                kc::describe(k, &args)
            );
        }

        // Creating in a namespace that does not exist names the namespace.
        let file = env.manifest(&configmap("x", json!({}), json!({})));
        assert_eq!(
            err(k, s, &["create", "-f", &file, "-n", "no-such-namespace"]),
            format!(
                "Error from server (NotFound): error when creating \"{file}\": \
                 namespaces \"no-such-namespace\" not found\n"
            )
        );
    }
}

#[tokio::test]
async fn replace_with_a_stale_resource_version_conflicts() {
    let env = start().await;
    let s = &env.server;
    for (i, k) in env.each() {
        let ns = format!("replace-{i}");
        env.namespace(k, &ns);
        env.create(k, &ns, &configmap("x", json!({}), json!({"a": "1"})));

        // What a user saved before someone else changed the object.
        let stale = env.dir.path().join(format!("stale-{i}.yaml"));
        fs::write(
            &stale,
            ok(k, s, &["get", "cm", "x", "-n", &ns, "-o", "yaml"]),
        )
        .expect("write stale.yaml");
        let stale = stale.to_string_lossy().into_owned();
        assert_eq!(
            ok(k, s, &["label", "cm", "x", "-n", &ns, "changed=yes"]),
            "configmap/x labeled\n"
        );
        assert_eq!(
            err(k, s, &["replace", "-f", &stale]),
            format!(
                "Error from server (Conflict): error when replacing \"{stale}\": Operation cannot \
                 be fulfilled on configmaps \"x\": the object has been modified; please apply \
                 your changes to the latest version and try again\n"
            )
        );
        assert_eq!(
            ok(
                k,
                s,
                &["get", "cm", "x", "-n", &ns, "-o", "jsonpath={.data.a}"]
            ),
            "1",
            "a conflicting replace changes nothing"
        );

        // Replacing the current version works.
        let mut fresh = get_json(k, s, &["get", "cm", "x", "-n", &ns]);
        fresh["data"]["a"] = json!("2");
        let file = env.manifest(&fresh);
        assert_eq!(
            ok(k, s, &["replace", "-f", &file]),
            "configmap/x replaced\n"
        );
        assert_eq!(
            ok(
                k,
                s,
                &[
                    "get",
                    "cm",
                    "x",
                    "-n",
                    &ns,
                    "-o",
                    "jsonpath={.data.a} {.metadata.labels.changed}"
                ]
            ),
            "2 yes"
        );
    }
}

#[tokio::test]
async fn label_and_annotate() {
    let env = start().await;
    let s = &env.server;
    for (i, k) in env.each() {
        let ns = format!("labels-{i}");
        env.namespace(k, &ns);
        env.create(k, &ns, &configmap("x", json!({"app": "web"}), json!({})));
        let labels =
            || get_json(k, s, &["get", "cm", "x", "-n", &ns])["metadata"]["labels"].clone();

        assert_eq!(
            ok(k, s, &["label", "cm", "x", "-n", &ns, "tier=front"]),
            "configmap/x labeled\n"
        );
        assert_eq!(labels(), json!({"app": "web", "tier": "front"}));
        assert_eq!(
            err(k, s, &["label", "cm", "x", "-n", &ns, "app=api"]),
            "error: 'app' already has a value (web), and --overwrite is false\n"
        );
        assert_eq!(
            ok(
                k,
                s,
                &["label", "cm", "x", "-n", &ns, "app=api", "--overwrite"]
            ),
            "configmap/x labeled\n"
        );
        assert_eq!(
            ok(k, s, &["label", "cm", "x", "-n", &ns, "tier-"]),
            "configmap/x unlabeled\n"
        );
        assert_eq!(labels(), json!({"app": "api"}));
        assert_eq!(
            ok(
                k,
                s,
                &["label", "cm", "x", "-n", &ns, "app=api", "--overwrite"]
            ),
            "configmap/x not labeled\n",
            "an unchanged label is reported as such"
        );

        assert_eq!(
            ok(
                k,
                s,
                &["annotate", "cm", "x", "-n", &ns, "note=hello world"]
            ),
            "configmap/x annotated\n"
        );
        assert_eq!(
            ok(
                k,
                s,
                &[
                    "get",
                    "cm",
                    "x",
                    "-n",
                    &ns,
                    "-o",
                    "jsonpath={.metadata.annotations.note}"
                ]
            ),
            "hello world"
        );
        assert_eq!(
            ok(k, s, &["annotate", "cm", "x", "-n", &ns, "note-"]),
            "configmap/x annotated\n"
        );
        let cm = get_json(k, s, &["get", "cm", "x", "-n", &ns]);
        let annotations = &cm["metadata"]["annotations"];
        assert!(
            annotations.is_null() || annotations == &json!({}),
            "the annotation is gone: {cm}"
        );
    }
}

#[tokio::test]
async fn scale_a_deployment() {
    let env = start().await;
    let s = &env.server;
    for (i, k) in env.each() {
        let ns = format!("scale-{i}");
        env.namespace(k, &ns);
        env.create(k, &ns, &deployment("web", 2));
        let replicas = || {
            ok(
                k,
                s,
                &[
                    "get",
                    "deploy",
                    "web",
                    "-n",
                    &ns,
                    "-o",
                    "jsonpath={.spec.replicas} {.metadata.generation}",
                ],
            )
        };
        assert_eq!(replicas(), "2 1");

        assert_eq!(
            ok(k, s, &["scale", "deploy", "web", "-n", &ns, "--replicas=3"]),
            "deployment.apps/web scaled\n"
        );
        assert_eq!(
            replicas(),
            "3 2",
            "scaling changes the spec: generation + 1"
        );

        let scale = get_json(
            k,
            s,
            &["get", "deploy", "web", "-n", &ns, "--subresource=scale"],
        );
        assert_eq!(scale["apiVersion"], "autoscaling/v1", "{scale}");
        assert_eq!(scale["kind"], "Scale", "{scale}");
        assert_eq!(scale["spec"]["replicas"], 3, "{scale}");
        assert_eq!(scale["status"]["selector"], "app=web", "{scale}");

        assert_eq!(
            err(
                k,
                s,
                &[
                    "scale",
                    "deploy",
                    "web",
                    "-n",
                    &ns,
                    "--current-replicas=2",
                    "--replicas=4"
                ]
            ),
            "error: Expected replicas to be 2, was 3\n"
        );
        assert_eq!(
            ok(
                k,
                s,
                &[
                    "scale",
                    "deployment/web",
                    "-n",
                    &ns,
                    "--current-replicas=3",
                    "--replicas=0"
                ]
            ),
            "deployment.apps/web scaled\n"
        );
        assert_eq!(replicas(), "0 3");
    }
}

#[tokio::test]
async fn delete_removes_objects() {
    let env = start().await;
    let s = &env.server;
    for (i, k) in env.each() {
        let ns = format!("delete-{i}");
        env.namespace(k, &ns);
        for name in ["x", "y", "z"] {
            env.create(k, &ns, &configmap(name, json!({}), json!({})));
        }

        let out = ok(k, s, &["delete", "cm", "x", "-n", &ns]);
        assert_deleted(k, &out, r#"configmap "x""#, Some(&ns));
        assert_eq!(
            err(k, s, &["get", "cm", "x", "-n", &ns]),
            "Error from server (NotFound): configmaps \"x\" not found\n"
        );

        let out = ok(k, s, &["delete", "cm", "y", "z", "-n", &ns]);
        let lines: Vec<String> = out.lines().map(|l| format!("{l}\n")).collect();
        assert_eq!(lines.len(), 2, "{out}");
        assert_deleted(k, &lines[0], r#"configmap "y""#, Some(&ns));
        assert_deleted(k, &lines[1], r#"configmap "z""#, Some(&ns));

        // Everything but the root CA bundle the cluster keeps there.
        let rest = "metadata.name!=kube-root-ca.crt";
        let out = kubectl(k, s, &["get", "cm", "-n", &ns, "--field-selector", rest]);
        assert!(out.status.success(), "{}", stderr(&out));
        assert_eq!(stdout(&out), "");
        assert_eq!(
            stderr(&out),
            format!("No resources found in {ns} namespace.\n")
        );
    }
}

// ---------------------------------------------------------------------------
// Watch
// ---------------------------------------------------------------------------

#[tokio::test]
async fn watch_prints_added_modified_deleted() {
    let env = start().await;
    let s = &env.server;
    for (i, k) in env.each() {
        let ns = format!("watch-{i}");
        env.namespace(k, &ns);
        // An object that exists before the watch starts: the initial list
        // prints it as ADDED, which tells us the watch is established.
        env.create(k, &ns, &configmap("before", json!({}), json!({})));

        let mut watch = Background::spawn(
            k,
            s,
            &["get", "cm", "-n", &ns, "-w", "--output-watch-events"],
        );
        let saw = |event: &'static str, name: &'static str| {
            move |out: &str| {
                cells(out)
                    .iter()
                    .any(|r| r.len() > 1 && r[0] == event && r[1] == name)
            }
        };
        watch.wait_for_stdout("ADDED before", WATCH_TIMEOUT, saw("ADDED", "before"));

        env.create(k, &ns, &configmap("x", json!({}), json!({"a": "1"})));
        ok(k, s, &["label", "cm", "x", "-n", &ns, "step=two"]);
        ok(k, s, &["delete", "cm", "x", "-n", &ns]);
        watch.wait_for_stdout("DELETED x", WATCH_TIMEOUT, saw("DELETED", "x"));

        let out = watch.stop();
        let printed = stdout(&out);
        let rows = cells(&printed);
        assert_eq!(rows[0][..2], ["EVENT", "NAME"], "{printed}");
        let events: Vec<(&str, &str)> = rows[1..].iter().map(|r| (r[0], r[1])).collect();
        assert_eq!(
            events,
            [
                ("ADDED", "before"),
                ("ADDED", "kube-root-ca.crt"),
                ("ADDED", "x"),
                ("MODIFIED", "x"),
                ("DELETED", "x")
            ],
            "{printed}\n--- stderr:\n{}",
            stderr(&out)
        );
    }
}

// ---------------------------------------------------------------------------
// Namespace deletion and garbage collection
// ---------------------------------------------------------------------------

#[tokio::test]
async fn deleting_a_namespace_deletes_its_contents_then_the_namespace() {
    let env = start().await;
    let s = &env.server;
    for (i, k) in env.each() {
        let ns = format!("doomed-{i}");
        env.namespace(k, &ns);
        env.create(k, &ns, &configmap("x", json!({}), json!({})));
        env.create(k, &ns, &secret("s", "Opaque"));
        env.create(k, &ns, &deployment("web", 1));

        assert_eq!(
            ok(k, s, &["delete", "ns", &ns, "--timeout=30s"]),
            format!("namespace \"{ns}\" deleted\n")
        );
        let out = ok(
            k,
            s,
            &["wait", "--for=delete", &format!("ns/{ns}"), "--timeout=30s"],
        );
        assert!(
            out.is_empty() || out == format!("namespace/{ns} condition met\n"),
            "{out:?}"
        );
        assert_eq!(
            err(k, s, &["get", "ns", &ns]),
            format!("Error from server (NotFound): namespaces \"{ns}\" not found\n")
        );
        let left = ok(
            k,
            s,
            &[
                "get",
                "cm,secrets,deploy",
                "-A",
                "-o",
                "jsonpath={range .items[*]}{.kind} {.metadata.namespace}/{.metadata.name}{\"\\n\"}{end}",
            ],
        );
        assert!(
            !left.contains(&format!(" {ns}/")),
            "objects of the deleted namespace remain:\n{left}"
        );
    }
}

#[tokio::test]
async fn cascade_background_deletes_the_replicaset() {
    let env = start().await;
    let s = &env.server;
    for (i, k) in env.each() {
        let ns = format!("background-{i}");
        env.namespace(k, &ns);
        deployment_with_replicaset(&env, k, &ns);

        let out = ok(
            k,
            s,
            &["delete", "deploy", "web", "-n", &ns, "--cascade=background"],
        );
        assert_deleted(k, &out, r#"deployment.apps "web""#, Some(&ns));
        wait_deleted(k, s, "deployment.apps/web", &ns);
        wait_deleted(k, s, "replicaset.apps/web-abc", &ns);
        assert_eq!(
            err(k, s, &["get", "rs", "web-abc", "-n", &ns]),
            "Error from server (NotFound): replicasets.apps \"web-abc\" not found\n"
        );
    }
}

#[tokio::test]
async fn cascade_foreground_deletes_the_replicaset_before_the_deployment() {
    let env = start().await;
    let s = &env.server;
    for (i, k) in env.each() {
        let ns = format!("foreground-{i}");
        env.namespace(k, &ns);
        deployment_with_replicaset(&env, k, &ns);

        let out = ok(
            k,
            s,
            &[
                "delete",
                "deploy",
                "web",
                "-n",
                &ns,
                "--cascade=foreground",
                "--timeout=30s",
            ],
        );
        assert_deleted(k, &out, r#"deployment.apps "web""#, Some(&ns));
        wait_deleted(k, s, "deployment.apps/web", &ns);
        // Foreground: the owner goes only after its blocking dependents.
        assert_eq!(
            err(k, s, &["get", "rs", "web-abc", "-n", &ns]),
            "Error from server (NotFound): replicasets.apps \"web-abc\" not found\n",
            "the Deployment is gone, so its ReplicaSet must be gone already"
        );
    }
}

#[tokio::test]
async fn cascade_orphan_keeps_the_replicaset_without_its_owner_reference() {
    let env = start().await;
    let s = &env.server;
    for (i, k) in env.each() {
        let ns = format!("orphan-{i}");
        env.namespace(k, &ns);
        deployment_with_replicaset(&env, k, &ns);

        let out = ok(
            k,
            s,
            &[
                "delete",
                "deploy",
                "web",
                "-n",
                &ns,
                "--cascade=orphan",
                "--timeout=30s",
            ],
        );
        assert_deleted(k, &out, r#"deployment.apps "web""#, Some(&ns));
        wait_deleted(k, s, "deployment.apps/web", &ns);
        assert_eq!(
            err(k, s, &["get", "deploy", "web", "-n", &ns]),
            "Error from server (NotFound): deployments.apps \"web\" not found\n"
        );
        let rs = get_json(k, s, &["get", "rs", "web-abc", "-n", &ns]);
        let owners = &rs["metadata"]["ownerReferences"];
        assert!(
            owners.is_null() || owners == &json!([]),
            "the orphaned ReplicaSet still names its owner: {rs}"
        );
        assert!(
            rs["metadata"]["deletionTimestamp"].is_null(),
            "the orphan is not being deleted: {rs}"
        );
    }
}

// ---------------------------------------------------------------------------
// Selectors
// ---------------------------------------------------------------------------

#[tokio::test]
async fn label_selectors_filter_lists_and_deletes() {
    let env = start().await;
    let s = &env.server;
    for (i, k) in env.each() {
        let ns = format!("lsel-{i}");
        env.namespace(k, &ns);
        env.create(
            k,
            &ns,
            &configmap("web-1", json!({"app": "web", "tier": "front"}), json!({})),
        );
        env.create(
            k,
            &ns,
            &configmap("web-2", json!({"app": "web"}), json!({})),
        );
        env.create(
            k,
            &ns,
            &configmap("api-1", json!({"app": "api"}), json!({})),
        );
        env.create(k, &ns, &configmap("plain", json!({}), json!({})));
        env.create(k, &ns, &deployment("web", 1));

        for (selector, expected) in [
            ("app=web", "configmap/web-1\nconfigmap/web-2\n"),
            ("app==web", "configmap/web-1\nconfigmap/web-2\n"),
            (
                "app!=web",
                "configmap/api-1\nconfigmap/kube-root-ca.crt\nconfigmap/plain\n",
            ),
            (
                "app in (web,api)",
                "configmap/api-1\nconfigmap/web-1\nconfigmap/web-2\n",
            ),
            (
                "app notin (web)",
                "configmap/api-1\nconfigmap/kube-root-ca.crt\nconfigmap/plain\n",
            ),
            ("app", "configmap/api-1\nconfigmap/web-1\nconfigmap/web-2\n"),
            ("!app", "configmap/kube-root-ca.crt\nconfigmap/plain\n"),
            ("app=web,tier=front", "configmap/web-1\n"),
        ] {
            assert_eq!(
                ok(
                    k,
                    s,
                    &["get", "cm", "-n", &ns, "-l", selector, "-o", "name"]
                ),
                expected,
                "-l {selector:?}"
            );
        }

        let table = ok(k, s, &["get", "cm", "-n", &ns, "--selector", "app=web"]);
        assert_eq!(column(&table, 0), ["NAME", "web-1", "web-2"], "{table}");
        assert_eq!(
            ok(
                k,
                s,
                &["get", "deploy,cm", "-n", &ns, "-l", "app=web", "-o", "name"]
            ),
            "deployment.apps/web\nconfigmap/web-1\nconfigmap/web-2\n"
        );

        let out = kubectl(k, s, &["get", "cm", "-n", &ns, "-l", "app=nothing"]);
        assert!(out.status.success(), "{}", stderr(&out));
        assert_eq!(stdout(&out), "");
        assert_eq!(
            stderr(&out),
            format!("No resources found in {ns} namespace.\n")
        );

        let out = ok(k, s, &["delete", "cm", "-n", &ns, "-l", "app=web"]);
        let lines: Vec<String> = out.lines().map(|l| format!("{l}\n")).collect();
        assert_eq!(lines.len(), 2, "{out}");
        assert_deleted(k, &lines[0], r#"configmap "web-1""#, Some(&ns));
        assert_deleted(k, &lines[1], r#"configmap "web-2""#, Some(&ns));
        assert_eq!(
            ok(k, s, &["get", "cm", "-n", &ns, "-o", "name"]),
            "configmap/api-1\nconfigmap/kube-root-ca.crt\nconfigmap/plain\n"
        );
    }
}

#[tokio::test]
async fn field_selectors_filter_lists() {
    let env = start().await;
    let s = &env.server;
    for (i, k) in env.each() {
        let ns = format!("fsel-{i}");
        env.namespace(k, &ns);
        for name in ["x", "y"] {
            env.create(k, &ns, &configmap(name, json!({}), json!({})));
        }
        env.create(k, &ns, &secret("opaque", "Opaque"));
        env.create(k, &ns, &secret("custom", "skein.test/custom"));

        assert_eq!(
            ok(
                k,
                s,
                &[
                    "get",
                    "cm",
                    "-n",
                    &ns,
                    "--field-selector",
                    "metadata.name=x",
                    "-o",
                    "name"
                ]
            ),
            "configmap/x\n"
        );
        let table = ok(
            k,
            s,
            &[
                "get",
                "cm",
                "-n",
                &ns,
                "--field-selector",
                "metadata.name!=x",
            ],
        );
        assert_eq!(
            column(&table, 0),
            ["NAME", "kube-root-ca.crt", "y"],
            "{table}"
        );
        let across = ok(
            k,
            s,
            &[
                "get",
                "cm",
                "-A",
                "--field-selector",
                &format!("metadata.namespace={ns},metadata.name=y"),
                "-o",
                "name",
            ],
        );
        assert_eq!(across, "configmap/y\n");
        assert_eq!(
            ok(
                k,
                s,
                &[
                    "get",
                    "secrets",
                    "-n",
                    &ns,
                    "--field-selector",
                    "type=Opaque",
                    "-o",
                    "name"
                ]
            ),
            "secret/opaque\n"
        );
        assert_eq!(
            ok(
                k,
                s,
                &[
                    "get",
                    "ns",
                    "--field-selector",
                    &format!("metadata.name={ns}"),
                    "-o",
                    "name"
                ]
            ),
            format!("namespace/{ns}\n")
        );

        let out = kubectl(
            k,
            s,
            &[
                "get",
                "cm",
                "-n",
                &ns,
                "--field-selector",
                "metadata.name=nothing",
            ],
        );
        assert!(out.status.success(), "{}", stderr(&out));
        assert_eq!(
            stderr(&out),
            format!("No resources found in {ns} namespace.\n")
        );

        // The upstream conversion error for a field Secrets do not index.
        assert_eq!(
            err(
                k,
                s,
                &[
                    "get",
                    "secrets",
                    "-n",
                    &ns,
                    "--field-selector",
                    "spec.foo=x"
                ]
            ),
            "Error from server (BadRequest): Unable to find \"/v1, Resource=secrets\" that match \
             label selector \"\", field selector \"spec.foo=x\": field label not supported: \
             spec.foo\n"
        );
    }
}

// ---------------------------------------------------------------------------
// kubectl create <generator> (protobuf request bodies)
// ---------------------------------------------------------------------------

#[tokio::test]
async fn create_subcommands_build_the_objects() {
    let env = start().await;
    let s = &env.server;
    for (i, k) in env.each() {
        let ns = format!("generated-{i}");
        assert_eq!(
            ok(k, s, &["create", "namespace", &ns]),
            format!("namespace/{ns} created\n")
        );
        assert_eq!(
            ok(
                k,
                s,
                &[
                    "get",
                    "ns",
                    &ns,
                    "-o",
                    "jsonpath={.metadata.name} {.status.phase}"
                ]
            ),
            format!("{ns} Active")
        );

        assert_eq!(
            ok(
                k,
                s,
                &[
                    "create",
                    "configmap",
                    "c",
                    "-n",
                    &ns,
                    "--from-literal=a=1",
                    "--from-literal=b=two"
                ]
            ),
            "configmap/c created\n"
        );
        let cm = get_json(k, s, &["get", "cm", "c", "-n", &ns]);
        assert_eq!(cm["data"], json!({"a": "1", "b": "two"}), "{cm}");
        assert_eq!(
            err(k, s, &["create", "configmap", "c", "-n", &ns]),
            "error: failed to create configmap: configmaps \"c\" already exists\n"
        );

        assert_eq!(
            ok(
                k,
                s,
                &[
                    "create",
                    "secret",
                    "generic",
                    "s",
                    "-n",
                    &ns,
                    "--from-literal=k=v"
                ]
            ),
            "secret/s created\n"
        );
        assert_eq!(
            ok(
                k,
                s,
                &[
                    "get",
                    "secret",
                    "s",
                    "-n",
                    &ns,
                    "-o",
                    "jsonpath={.type} {.data.k}"
                ]
            ),
            "Opaque dg=="
        );
        assert_eq!(
            err(k, s, &["create", "secret", "generic", "s", "-n", &ns]),
            "error: failed to create secret secrets \"s\" already exists\n"
        );

        assert_eq!(
            ok(
                k,
                s,
                &[
                    "create",
                    "deployment",
                    "d",
                    "-n",
                    &ns,
                    "--image=nginx:1.27",
                    "--replicas=2"
                ]
            ),
            "deployment.apps/d created\n"
        );
        let d = get_json(k, s, &["get", "deploy", "d", "-n", &ns]);
        assert_eq!(d["metadata"]["labels"], json!({"app": "d"}), "{d}");
        assert_eq!(d["spec"]["replicas"], 2, "{d}");
        assert_eq!(
            d["spec"]["selector"],
            json!({"matchLabels": {"app": "d"}}),
            "{d}"
        );
        assert_eq!(
            d["spec"]["template"]["metadata"]["labels"],
            json!({"app": "d"}),
            "{d}"
        );
        let container = &d["spec"]["template"]["spec"]["containers"][0];
        assert_eq!(container["name"], "nginx", "{d}");
        assert_eq!(container["image"], "nginx:1.27", "{d}");
    }
}

// ---------------------------------------------------------------------------
// Server-side tables: the upstream columns
// ---------------------------------------------------------------------------

#[tokio::test]
async fn tables_have_the_upstream_columns() {
    let env = start().await;
    let s = &env.server;
    for (i, k) in env.each() {
        let ns = format!("tables-{i}");
        env.namespace(k, &ns);
        env.create(
            k,
            &ns,
            &configmap("x", json!({"app": "web"}), json!({"a": "1", "b": "2"})),
        );
        env.create(k, &ns, &secret("s", "Opaque"));
        env.create(k, &ns, &deployment("web", 2));
        env.create(k, &ns, &replicaset("web-abc", "web", None));

        // (command, header, the row without its AGE cell)
        let cases: [(&[&str], &[&str], &[&str]); 5] = [
            (
                &["get", "ns", &ns],
                &["NAME", "STATUS", "AGE"],
                &[&ns, "Active"],
            ),
            (
                &["get", "cm", "x", "-n", &ns],
                &["NAME", "DATA", "AGE"],
                &["x", "2"],
            ),
            (
                &["get", "secret", "s", "-n", &ns],
                &["NAME", "TYPE", "DATA", "AGE"],
                &["s", "Opaque", "1"],
            ),
            (
                &["get", "deploy", "web", "-n", &ns],
                &["NAME", "READY", "UP-TO-DATE", "AVAILABLE", "AGE"],
                &["web", "0/2", "0", "0"],
            ),
            (
                &["get", "rs", "web-abc", "-n", &ns],
                &["NAME", "DESIRED", "CURRENT", "READY", "AGE"],
                &["web-abc", "2", "0", "0"],
            ),
        ];
        for (args, want_header, want_row) in cases {
            let table = ok(k, s, args);
            let rows = cells(&table);
            assert_eq!(rows.len(), 2, "{}:\n{table}", kc::describe(k, args));
            assert_eq!(rows[0], want_header, "{}:\n{table}", kc::describe(k, args));
            let (age, row) = rows[1].split_last().expect("a row");
            assert_eq!(row, want_row, "{}:\n{table}", kc::describe(k, args));
            assert!(
                is_age(age),
                "{}: AGE {age:?}:\n{table}",
                kc::describe(k, args)
            );
        }

        // Several kinds, all namespaces, labels as columns.
        let out = ok(k, s, &["get", "deploy,cm", "-n", &ns]);
        let tables = blocks(&out);
        assert_eq!(tables.len(), 2, "{out}");
        assert_eq!(
            header(tables[0]),
            ["NAME", "READY", "UP-TO-DATE", "AVAILABLE", "AGE"],
            "{out}"
        );
        assert_eq!(header(tables[1]), ["NAME", "DATA", "AGE"], "{out}");
        let table = ok(k, s, &["get", "cm", "-A"]);
        assert_eq!(
            header(&table),
            ["NAMESPACE", "NAME", "DATA", "AGE"],
            "{table}"
        );
        let table = ok(k, s, &["get", "cm", "x", "-n", &ns, "--show-labels"]);
        assert_eq!(header(&table), ["NAME", "DATA", "AGE", "LABELS"], "{table}");
        assert_eq!(cell(&table, 1, 3), "app=web", "{table}");
        let table = ok(k, s, &["get", "cm", "x", "-n", &ns, "-L", "app"]);
        assert_eq!(header(&table), ["NAME", "DATA", "AGE", "APP"], "{table}");
        assert_eq!(cell(&table, 1, 3), "web", "{table}");
    }
}

#[tokio::test]
async fn wide_output_adds_the_upstream_columns() {
    let env = start().await;
    let s = &env.server;
    for (i, k) in env.each() {
        let ns = format!("wide-{i}");
        env.namespace(k, &ns);
        env.create(k, &ns, &deployment("web", 2));
        env.create(k, &ns, &replicaset("web-abc", "web", None));
        env.create(k, &ns, &configmap("x", json!({}), json!({"a": "1"})));

        let table = ok(k, s, &["get", "deploy", "-n", &ns, "-o", "wide"]);
        assert_eq!(
            cells(&table),
            [
                vec![
                    "NAME",
                    "READY",
                    "UP-TO-DATE",
                    "AVAILABLE",
                    "AGE",
                    "CONTAINERS",
                    "IMAGES",
                    "SELECTOR"
                ],
                vec![
                    "web",
                    "0/2",
                    "0",
                    "0",
                    cell(&table, 1, 4),
                    "web",
                    "nginx:1.27",
                    "app=web"
                ],
            ],
            "{table}"
        );
        let table = ok(k, s, &["get", "rs", "-n", &ns, "-o", "wide"]);
        assert_eq!(
            cells(&table),
            [
                vec![
                    "NAME",
                    "DESIRED",
                    "CURRENT",
                    "READY",
                    "AGE",
                    "CONTAINERS",
                    "IMAGES",
                    "SELECTOR"
                ],
                vec![
                    "web-abc",
                    "2",
                    "0",
                    "0",
                    cell(&table, 1, 4),
                    "web",
                    "nginx:1.27",
                    "app=web"
                ],
            ],
            "{table}"
        );
        // ConfigMaps have no wide-only columns.
        let table = ok(k, s, &["get", "cm", "-n", &ns, "-o", "wide"]);
        assert_eq!(header(&table), ["NAME", "DATA", "AGE"], "{table}");
    }
}
