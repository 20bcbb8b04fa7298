//! What a cluster creates by itself, seen with kubectl 1.35 and 1.32 and
//! raw HTTPS: the `kubernetes` Service and its endpoints, the system
//! namespaces (labelled), PriorityClasses and bootstrap ClusterRoles; the
//! `default` ServiceAccount and `kube-root-ca.crt` in every namespace
//! (recreated when deleted); ServiceAccount admission on Pods; and the
//! conditions of a namespace stuck on a finalizer.

use std::path::Path;
use std::time::{Duration, Instant};

use serde_json::{Value, json};
use skein_tests::cli::*;
use skein_tests::http::Api;
use skein_tests::server::Server;

/// How long a controller may take to (re)create what it keeps.
const SETTLE: Duration = Duration::from_secs(8);

/// Runs `kubectl <args>` until it succeeds and `done(stdout)` holds, or
/// panics after [`SETTLE`] with the last output.
fn eventually(k: &Path, server: &Server, args: &[&str], done: impl Fn(&str) -> bool) -> String {
    eventually_within(SETTLE, k, server, args, done)
}

/// [`eventually`] with another deadline.
fn eventually_within(
    settle: Duration,
    k: &Path,
    server: &Server,
    args: &[&str],
    done: impl Fn(&str) -> bool,
) -> String {
    let start = Instant::now();
    loop {
        let out = kubectl(k, server, args);
        let text = stdout(&out);
        if out.status.success() && done(&text) {
            return text;
        }
        if start.elapsed() > settle {
            panic!(
                "{}",
                failure(
                    "eventually print what the test expects",
                    k,
                    server,
                    args,
                    &out
                )
            );
        }
        std::thread::sleep(Duration::from_millis(200));
    }
}

fn row<'a>(table: &'a str, name: &str) -> Vec<&'a str> {
    cells(table)
        .into_iter()
        .find(|r| r.first() == Some(&name))
        .unwrap_or_else(|| panic!("no row {name} in\n{table}"))
}

#[tokio::test]
async fn the_kubernetes_service_and_its_endpoints_name_this_server() {
    let env = start().await;
    let port = env.server.addr.port().to_string();
    for (_, k) in env.each() {
        let s = &env.server;
        let table = ok(k, s, &["get", "svc", "kubernetes", "-n", "default"]);
        assert_eq!(
            header(&table),
            [
                "NAME",
                "TYPE",
                "CLUSTER-IP",
                "EXTERNAL-IP",
                "PORT(S)",
                "AGE"
            ]
        );
        let r = row(&table, "kubernetes");
        assert_eq!(
            &r[..5],
            ["kubernetes", "ClusterIP", "10.96.0.1", "<none>", "443/TCP"]
        );
        assert!(is_age(r[5]), "{table}");

        let svc = get_json(k, s, &["get", "svc", "kubernetes", "-n", "default"]);
        assert_eq!(
            svc["metadata"]["labels"],
            json!({"component": "apiserver", "provider": "kubernetes"})
        );
        assert_eq!(
            svc["spec"]["ports"],
            json!([{"name": "https", "port": 443, "protocol": "TCP", "targetPort": env.server.addr.port()}])
        );
        assert_eq!(svc["spec"]["sessionAffinity"], "None");
        assert!(svc["spec"].get("selector").is_none(), "{svc}");

        let table = ok(k, s, &["get", "endpointslices", "-n", "default"]);
        assert_eq!(
            header(&table),
            ["NAME", "ADDRESSTYPE", "PORTS", "ENDPOINTS", "AGE"]
        );
        let r = row(&table, "kubernetes");
        assert_eq!(&r[..4], ["kubernetes", "IPv4", port.as_str(), "127.0.0.1"]);
        let slice = get_json(
            k,
            s,
            &["get", "endpointslice", "kubernetes", "-n", "default"],
        );
        assert_eq!(
            slice["metadata"]["labels"],
            json!({"kubernetes.io/service-name": "kubernetes"})
        );
        assert_eq!(
            slice["endpoints"],
            json!([{"addresses": ["127.0.0.1"], "conditions": {"ready": true}}])
        );
        assert_eq!(
            slice["ports"],
            json!([{"name": "https", "port": env.server.addr.port(), "protocol": "TCP"}])
        );

        let table = ok(k, s, &["get", "endpoints", "kubernetes", "-n", "default"]);
        assert_eq!(row(&table, "kubernetes")[1], format!("127.0.0.1:{port}"));
        let eps = get_json(k, s, &["get", "endpoints", "kubernetes", "-n", "default"]);
        assert_eq!(
            eps["metadata"]["labels"],
            json!({"endpointslice.kubernetes.io/skip-mirror": "true"})
        );
    }
}

#[tokio::test]
async fn the_kubernetes_service_is_repaired() {
    let env = start().await;
    let port = env.server.addr.port();
    for (_, k) in env.each() {
        let s = &env.server;
        for what in [
            "service/kubernetes",
            "endpointslice/kubernetes",
            "endpoints/kubernetes",
        ] {
            ok(k, s, &["delete", what, "-n", "default"]);
        }
        eventually(
            k,
            s,
            &[
                "get",
                "svc,endpointslices,endpoints",
                "-n",
                "default",
                "-o",
                "name",
            ],
            |out| {
                out.contains("service/kubernetes\n")
                    && out.contains("endpointslice.discovery.k8s.io/kubernetes\n")
                    && out.contains("endpoints/kubernetes\n")
            },
        );
        // A changed target port is set back.
        ok(
            k,
            s,
            &[
                "patch",
                "svc",
                "kubernetes",
                "-n",
                "default",
                "--type=json",
                "-p",
                r#"[{"op":"replace","path":"/spec/ports/0/targetPort","value":1234}]"#,
            ],
        );
        eventually(
            k,
            s,
            &[
                "get",
                "svc",
                "kubernetes",
                "-n",
                "default",
                "-o",
                "jsonpath={.spec.ports[0].targetPort}",
            ],
            |out| out == port.to_string(),
        );
    }
}

#[tokio::test]
async fn a_deleted_system_namespace_comes_back() {
    let env = start().await;
    let s = &env.server;
    let k = env.kubectls[0].as_path();
    ok(k, s, &["delete", "ns", "kube-node-lease"]);
    // The reconciler runs every 10 seconds (upstream: 10 s for `default`,
    // a minute for the others).
    let table = eventually_within(
        Duration::from_secs(25),
        k,
        s,
        &["get", "ns", "kube-node-lease"],
        |t| t.contains("kube-node-lease "),
    );
    assert_eq!(row(&table, "kube-node-lease")[1], "Active");
    eventually(
        k,
        s,
        &["get", "sa,cm", "-n", "kube-node-lease", "-o", "name"],
        |t| t == "serviceaccount/default\nconfigmap/kube-root-ca.crt\n",
    );
}

#[tokio::test]
async fn system_namespaces_priority_classes_and_roles_exist() {
    let env = start().await;
    for (_, k) in env.each() {
        let s = &env.server;
        let table = ok(k, s, &["get", "ns", "--show-labels"]);
        for ns in ["default", "kube-node-lease", "kube-public", "kube-system"] {
            let r = row(&table, ns);
            assert_eq!(r[1], "Active", "{table}");
            assert_eq!(r[3], format!("kubernetes.io/metadata.name={ns}"), "{table}");
        }

        let table = ok(k, s, &["get", "pc"]);
        let h = header(&table);
        assert_eq!(&h[..3], ["NAME", "VALUE", "GLOBAL-DEFAULT"], "{table}");
        assert_eq!(
            &row(&table, "system-cluster-critical")[..3],
            ["system-cluster-critical", "2000000000", "false"]
        );
        assert_eq!(
            &row(&table, "system-node-critical")[..3],
            ["system-node-critical", "2000001000", "false"]
        );
        let pc = get_json(k, s, &["get", "pc", "system-node-critical"]);
        assert_eq!(
            pc["description"],
            "Used for system critical pods that must not be moved from their current node."
        );
        assert_eq!(pc["preemptionPolicy"], "PreemptLowerPriority");
        let pc = get_json(k, s, &["get", "pc", "system-cluster-critical"]);
        assert_eq!(
            pc["description"],
            "Used for system critical pods that must run in the cluster, but can be moved to another node if necessary."
        );

        let admin = get_json(k, s, &["get", "clusterrole", "cluster-admin"]);
        assert_eq!(
            admin["rules"],
            json!([
                {"apiGroups": ["*"], "resources": ["*"], "verbs": ["*"]},
                {"nonResourceURLs": ["*"], "verbs": ["*"]},
            ])
        );
        for (role, selects) in [("admin", "admin"), ("edit", "edit"), ("view", "view")] {
            let r = get_json(k, s, &["get", "clusterrole", role]);
            assert_eq!(
                r["aggregationRule"],
                json!({"clusterRoleSelectors": [{"matchLabels": {format!("rbac.authorization.k8s.io/aggregate-to-{selects}"): "true"}}]}),
                "{role}"
            );
            assert_eq!(
                r["metadata"]["labels"]["kubernetes.io/bootstrapping"],
                "rbac-defaults"
            );
        }
        let view = get_json(k, s, &["get", "clusterrole", "view"]);
        assert_eq!(
            view["metadata"]["labels"]["rbac.authorization.k8s.io/aggregate-to-edit"],
            "true"
        );
        // The aggregation controller fills them from system:aggregate-to-*:
        // view = to-view; edit = to-edit + view; admin = edit + to-admin.
        let rules = |name: &str| get_json(k, s, &["get", "clusterrole", name])["rules"].clone();
        let to_view = rules("system:aggregate-to-view");
        assert_eq!(to_view[0]["resources"][0], "configmaps", "{to_view}");
        let sum = |parts: &[Value]| -> Value {
            let mut all: Vec<Value> = Vec::new();
            for rule in parts
                .iter()
                .flat_map(|p| p.as_array().cloned().unwrap_or_default())
            {
                if !all.contains(&rule) {
                    all.push(rule);
                }
            }
            Value::Array(all)
        };
        let want_edit = sum(&[rules("system:aggregate-to-edit"), to_view.clone()]);
        let want_admin = sum(&[want_edit.clone(), rules("system:aggregate-to-admin")]);
        for (role, want) in [
            ("view", to_view),
            ("edit", want_edit),
            ("admin", want_admin),
        ] {
            eventually(k, s, &["get", "clusterrole", role, "-o", "json"], |t| {
                serde_json::from_str::<Value>(t).is_ok_and(|r| r["rules"] == want)
            });
        }
        let binding = get_json(k, s, &["get", "clusterrolebinding", "cluster-admin"]);
        assert_eq!(
            binding["subjects"],
            json!([{"apiGroup": "rbac.authorization.k8s.io", "kind": "Group", "name": "system:masters"}])
        );
        // What an aggregated API server's chart binds to, as upstream.
        let delegator = get_json(k, s, &["get", "clusterrole", "system:auth-delegator"]);
        assert_eq!(
            delegator["rules"],
            json!([
                {"apiGroups": ["authentication.k8s.io"], "resources": ["tokenreviews"], "verbs": ["create"]},
                {"apiGroups": ["authorization.k8s.io"], "resources": ["subjectaccessreviews"], "verbs": ["create"]},
            ])
        );
        let reader = get_json(
            k,
            s,
            &[
                "get",
                "role",
                "-n",
                "kube-system",
                "extension-apiserver-authentication-reader",
            ],
        );
        assert_eq!(
            reader["rules"],
            json!([{"apiGroups": [""], "resources": ["configmaps"],
                "resourceNames": ["extension-apiserver-authentication"], "verbs": ["get", "list", "watch"]}])
        );
    }
}

#[tokio::test]
async fn aggregated_roles_collect_the_rules_of_labelled_roles() {
    let env = start().await;
    for (i, k) in env.each() {
        let s = &env.server;
        let name = format!("reader-{i}");
        let file = env.manifest(&json!({
            "apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRole",
            "metadata": {"name": name, "labels": {"rbac.authorization.k8s.io/aggregate-to-view": "true"}},
            "rules": [{"apiGroups": ["example.com"], "resources": ["widgets"], "verbs": ["get", "list"]}],
        }));
        ok(k, s, &["create", "-f", &file]);
        let rule = json!({"apiGroups": ["example.com"], "resources": ["widgets"], "verbs": ["get", "list"]});
        let has = |t: &str| {
            serde_json::from_str::<Value>(t)
                .is_ok_and(|r| r["rules"].as_array().is_some_and(|a| a.contains(&rule)))
        };
        // view aggregates it; edit aggregates view; admin aggregates edit.
        for role in ["view", "edit", "admin"] {
            eventually(k, s, &["get", "clusterrole", role, "-o", "json"], has);
        }
        ok(k, s, &["delete", "clusterrole", &name]);
        for role in ["view", "edit", "admin"] {
            eventually(k, s, &["get", "clusterrole", role, "-o", "json"], |t| {
                serde_json::from_str::<Value>(t).is_ok() && !has(t)
            });
        }
    }
}

#[tokio::test]
async fn every_namespace_gets_its_label_account_and_ca_bundle() {
    let env = start().await;
    let ca = String::from_utf8(env.server.pki_file("ca.crt")).expect("PEM");
    for (i, k) in env.each() {
        let s = &env.server;
        let ns = format!("boot-{i}");
        env.namespace(k, &ns);
        let table = ok(k, s, &["get", "ns", &ns, "--show-labels"]);
        assert_eq!(
            row(&table, &ns)[3],
            format!("kubernetes.io/metadata.name={ns}")
        );
        // Users cannot change it.
        ok(
            k,
            s,
            &[
                "label",
                "ns",
                &ns,
                "kubernetes.io/metadata.name=other",
                "--overwrite",
            ],
        );
        let labels = ok(
            k,
            s,
            &["get", "ns", &ns, "-o", "jsonpath={.metadata.labels}"],
        );
        assert_eq!(
            labels,
            format!(r#"{{"kubernetes.io/metadata.name":"{ns}"}}"#)
        );

        for round in 0..2 {
            let sa = eventually(k, s, &["get", "sa", "-n", &ns], |t| t.contains("default"));
            assert_eq!(header(&sa), ["NAME", "SECRETS", "AGE"]);
            assert_eq!(&row(&sa, "default")[..2], ["default", "0"]);
            eventually(
                k,
                s,
                &["get", "cm", "kube-root-ca.crt", "-n", &ns, "-o", "name"],
                |t| t == "configmap/kube-root-ca.crt\n",
            );
            let cm = get_json(k, s, &["get", "cm", "kube-root-ca.crt", "-n", &ns]);
            assert_eq!(cm["data"], json!({"ca.crt": ca}));
            assert_eq!(
                cm["metadata"]["annotations"]["kubernetes.io/description"],
                "Contains a CA bundle that can be used to verify the kube-apiserver when using internal endpoints such as the internal service IP or kubernetes.default.svc. No other usage is guaranteed across distributions of Kubernetes clusters."
            );
            if round == 0 {
                ok(k, s, &["delete", "sa", "default", "-n", &ns]);
                ok(k, s, &["delete", "cm", "kube-root-ca.crt", "-n", &ns]);
            }
        }
        // A changed bundle is set back.
        ok(
            k,
            s,
            &[
                "patch",
                "cm",
                "kube-root-ca.crt",
                "-n",
                &ns,
                "-p",
                r#"{"data":{"ca.crt":"nope"}}"#,
            ],
        );
        eventually(
            k,
            s,
            &["get", "cm", "kube-root-ca.crt", "-n", &ns, "-o", "json"],
            |t| {
                serde_json::from_str::<Value>(t).is_ok_and(|cm| cm["data"]["ca.crt"] == ca.as_str())
            },
        );
    }
}

#[tokio::test]
async fn pods_run_as_a_service_account() {
    let env = start().await;
    for (i, k) in env.each() {
        let s = &env.server;
        let ns = format!("pods-{i}");
        env.namespace(k, &ns);

        // A missing account: upstream's exact refusal, nothing stored.
        let e = err(
            k,
            s,
            &[
                "run",
                "p",
                "--image=nginx",
                "-n",
                &ns,
                "--overrides",
                r#"{"spec":{"serviceAccountName":"sa"}}"#,
            ],
        );
        assert_eq!(
            e,
            format!(
                "Error from server (Forbidden): pods \"p\" is forbidden: error looking up service account {ns}/sa: serviceaccount \"sa\" not found\n"
            )
        );
        let e = err(k, s, &["get", "pod", "p", "-n", &ns]);
        assert_eq!(e, "Error from server (NotFound): pods \"p\" not found\n");

        // Created right after its account, it is admitted.
        ok(k, s, &["create", "sa", "sa", "-n", &ns]);
        ok(
            k,
            s,
            &[
                "run",
                "p",
                "--image=nginx",
                "-n",
                &ns,
                "--overrides",
                r#"{"spec":{"serviceAccountName":"sa"}}"#,
            ],
        );

        // No account named: `default`, with the token volume in every container.
        let file = env.manifest(&json!({
            "apiVersion": "v1", "kind": "Pod", "metadata": {"name": "two"},
            "spec": {
                "initContainers": [{"name": "init", "image": "busybox"}],
                "containers": [{"name": "app", "image": "nginx"}, {"name": "side", "image": "nginx"}],
            },
        }));
        ok(k, s, &["create", "-f", &file, "-n", &ns]);
        let pod = get_json(k, s, &["get", "pod", "two", "-n", &ns]);
        let spec = &pod["spec"];
        assert_eq!(spec["serviceAccountName"], "default");
        assert_eq!(spec["serviceAccount"], "default");
        let volumes = spec["volumes"].as_array().expect("volumes");
        assert_eq!(volumes.len(), 1, "{spec}");
        let name = volumes[0]["name"].as_str().expect("name");
        let suffix = name
            .strip_prefix("kube-api-access-")
            .expect("kube-api-access-*");
        assert_eq!(suffix.len(), 5, "{name}");
        assert!(
            suffix
                .chars()
                .all(|c| "bcdfghjklmnpqrstvwxz2456789".contains(c)),
            "{name}"
        );
        assert_eq!(
            volumes[0]["projected"],
            json!({
                "defaultMode": 420,
                "sources": [
                    {"serviceAccountToken": {"expirationSeconds": 3607, "path": "token"}},
                    {"configMap": {"items": [{"key": "ca.crt", "path": "ca.crt"}], "name": "kube-root-ca.crt"}},
                    {"downwardAPI": {"items": [{"fieldRef": {"apiVersion": "v1", "fieldPath": "metadata.namespace"}, "path": "namespace"}]}},
                ],
            })
        );
        let mount = json!([{"mountPath": "/var/run/secrets/kubernetes.io/serviceaccount", "name": name, "readOnly": true}]);
        assert_eq!(spec["initContainers"][0]["volumeMounts"], mount);
        assert_eq!(spec["containers"][0]["volumeMounts"], mount);
        assert_eq!(spec["containers"][1]["volumeMounts"], mount);

        // automountServiceAccountToken: false on the Pod, or on the account.
        ok(
            k,
            s,
            &[
                "run",
                "quiet",
                "--image=nginx",
                "-n",
                &ns,
                "--overrides",
                r#"{"spec":{"automountServiceAccountToken":false}}"#,
            ],
        );
        let pod = get_json(k, s, &["get", "pod", "quiet", "-n", &ns]);
        assert!(pod["spec"].get("volumes").is_none(), "{pod}");
        assert!(
            pod["spec"]["containers"][0].get("volumeMounts").is_none(),
            "{pod}"
        );
        ok(k, s, &["create", "sa", "shy", "-n", &ns]);
        ok(
            k,
            s,
            &[
                "patch",
                "sa",
                "shy",
                "-n",
                &ns,
                "-p",
                r#"{"automountServiceAccountToken":false}"#,
            ],
        );
        ok(
            k,
            s,
            &[
                "run",
                "shy",
                "--image=nginx",
                "-n",
                &ns,
                "--overrides",
                r#"{"spec":{"serviceAccountName":"shy"}}"#,
            ],
        );
        let pod = get_json(k, s, &["get", "pod", "shy", "-n", &ns]);
        assert!(pod["spec"].get("volumes").is_none(), "{pod}");
    }
}

#[tokio::test]
async fn a_missing_service_account_is_a_forbidden_status() {
    let env = start().await;
    let api = Api::new(&env.server);
    let pod = json!({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "x"},
        "spec": {"serviceAccountName": "nobody", "containers": [{"name": "c", "image": "nginx"}]}});
    let status = api
        .post("/api/v1/namespaces/default/pods", &pod)
        .await
        .expect_status(403, "Forbidden");
    assert_eq!(
        status["message"],
        "pods \"x\" is forbidden: error looking up service account default/nobody: serviceaccount \"nobody\" not found"
    );
    assert_eq!(status["details"], json!({"name": "x", "kind": "pods"}));
    // A Pod in a namespace that does not exist is the namespace's 404.
    let status = api
        .post("/api/v1/namespaces/nowhere/pods", &pod)
        .await
        .expect_status(404, "NotFound");
    assert_eq!(status["message"], "namespaces \"nowhere\" not found");
}

#[tokio::test]
async fn a_namespace_held_by_a_finalizer_says_why() {
    let env = start().await;
    for (i, k) in env.each() {
        let s = &env.server;
        let ns = format!("stuck-{i}");
        env.namespace(k, &ns);
        let file = env.manifest(&json!({
            "apiVersion": "v1", "kind": "ConfigMap",
            "metadata": {"name": "held", "finalizers": ["example.com/x"]},
        }));
        ok(k, s, &["create", "-f", &file, "-n", &ns]);
        ok(k, s, &["delete", "ns", &ns, "--wait=false"]);
        let out = eventually(k, s, &["describe", "ns", &ns], |t| {
            t.contains("NamespaceFinalizersRemaining")
        });
        let lines: Vec<&str> = out.lines().collect();
        assert_eq!(lines[0], format!("Name:         {ns}"));
        assert_eq!(
            lines[1],
            format!("Labels:       kubernetes.io/metadata.name={ns}")
        );
        assert_eq!(lines[3], "Status:       Terminating");
        assert_eq!(lines[4], "Conditions:");
        let expected = [
            (
                "NamespaceDeletionDiscoveryFailure",
                "False",
                "ResourcesDiscovered",
                "All resources successfully discovered",
            ),
            (
                "NamespaceDeletionGroupVersionParsingFailure",
                "False",
                "ParsedGroupVersions",
                "All legacy kube types successfully parsed",
            ),
            (
                "NamespaceDeletionContentFailure",
                "False",
                "ContentDeleted",
                "All content successfully deleted, may be waiting on finalization",
            ),
            (
                "NamespaceContentRemaining",
                "True",
                "SomeResourcesRemain",
                "Some resources are remaining: configmaps. has 1 resource instances",
            ),
            (
                "NamespaceFinalizersRemaining",
                "True",
                "SomeFinalizersRemain",
                "Some content in the namespace has finalizers remaining: example.com/x in 1 resource instances",
            ),
        ];
        for (kind, status, reason, message) in expected {
            let line = lines
                .iter()
                .find(|l| l.trim_start().starts_with(&format!("{kind} ")))
                .unwrap_or_else(|| panic!("no {kind} line in\n{out}"));
            let words: Vec<&str> = line.split_whitespace().collect();
            assert_eq!(words[1], status, "{line}");
            assert!(line.contains(&format!("  {reason}  ")), "{line}");
            assert!(line.ends_with(message), "{line}");
        }
        // Once the finalizer goes, so does the namespace.
        ok(
            k,
            s,
            &[
                "patch",
                "cm",
                "held",
                "-n",
                &ns,
                "--type=json",
                "-p",
                r#"[{"op":"remove","path":"/metadata/finalizers"}]"#,
            ],
        );
        let start = Instant::now();
        loop {
            let out = kubectl(k, s, &["get", "ns", &ns]);
            if stderr(&out)
                == format!("Error from server (NotFound): namespaces \"{ns}\" not found\n")
            {
                break;
            }
            assert!(
                start.elapsed() < SETTLE,
                "namespace {ns} was not released: {}",
                stdout(&out)
            );
            std::thread::sleep(Duration::from_millis(200));
        }
    }
}
