//! The Helm chart `charts/skein` (aggregated mode), with the real tools:
//!
//! - `helm lint --strict` with Helm 3.17 and 4.1;
//! - `helm template` with the default values (two replicas on etcd) and
//!   with `storage=embedded` (one replica on a PVC): the objects, the
//!   container's flags (which `skein serve --help` must know), the
//!   APIService and its caBundle, which verifies the generated serving
//!   certificate for the Service's name (openssl);
//! - the files the Pod mounts (ConfigMaps and Secrets laid out as the
//!   kubelet would) start a real `skein serve` with the chart's flags:
//!   audit policy, encryption configuration, ServiceAccount signing key;
//! - `kubectl apply --dry-run=server` of the rendered manifests against a
//!   real Skein (kubectl 1.32 and 1.35);
//! - `helm install`, `upgrade` and `uninstall` into a Skein used as the
//!   host: the APIService, Deployment, Service, ServiceAccount and RBAC
//!   bindings as a user sees them, and certificates that survive upgrades.

use std::collections::BTreeMap;
use std::path::Path;
use std::process::{Command, Output, Stdio};
use std::time::Duration;

use base64::Engine;
use base64::engine::general_purpose::STANDARD;
use serde_json::{Value, json};
use skein_tests::http::{Api, helm, helm_binaries, python};
use skein_tests::kubectl::{describe, run as kubectl};
use skein_tests::kubectl_binaries;
use skein_tests::server::Server;

/// The release name and namespace the tests install as (the release name
/// contains the chart's, so every object is named `skein...`).
const RELEASE: &str = "skein";
const NS: &str = "skein-system";
const KUBECTL_TIMEOUT: Duration = Duration::from_secs(60);

/// `<repo>/charts/skein`.
fn chart() -> String {
    let chart = skein_tests::repo_root().join("charts").join("skein");
    assert!(
        chart.join("Chart.yaml").is_file(),
        "the chart is missing at {}",
        chart.display()
    );
    chart.to_string_lossy().into_owned()
}

/// The tool's directory name (`helm-4.1`), for messages.
fn tool(bin: &Path) -> String {
    bin.parent().and_then(Path::file_name).map_or_else(
        || bin.display().to_string(),
        |n| n.to_string_lossy().into_owned(),
    )
}

/// Asserts `out` succeeded; returns its stdout.
fn ok(out: &Output, what: &str) -> String {
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    assert!(
        out.status.success(),
        "{what} ({}):\nstdout:\n{stdout}\nstderr:\n{}",
        out.status,
        String::from_utf8_lossy(&out.stderr)
    );
    stdout
}

/// Runs helm without a cluster (lint, template): Helm's directories in
/// `home`, no kubeconfig from the environment.
fn helm_offline(helm: &Path, home: &Path, args: &[&str]) -> Output {
    Command::new(helm)
        .args(args)
        .env_remove("KUBECONFIG")
        .env_remove("HELM_NAMESPACE")
        .env_remove("HELM_KUBECONTEXT")
        .env("KUBECONFIG", home.join("no-kubeconfig"))
        .env("HELM_CACHE_HOME", home.join("cache"))
        .env("HELM_CONFIG_HOME", home.join("config"))
        .env("HELM_DATA_HOME", home.join("data"))
        .stdin(Stdio::null())
        .output()
        .unwrap_or_else(|e| panic!("cannot run {}: {e}", helm.display()))
}

/// `helm template skein <chart> -n skein-system --set <set>...`: the YAML.
fn template(helm: &Path, home: &Path, sets: &[&str]) -> String {
    let chart = chart();
    let mut args = vec!["template", RELEASE, chart.as_str(), "-n", NS];
    for s in sets {
        args.extend(["--set", s]);
    }
    ok(
        &helm_offline(helm, home, &args),
        &format!("{} {}", tool(helm), args.join(" ")),
    )
}

/// The documents of a YAML stream, parsed by PyYAML (empty ones dropped).
fn parse_yaml(yaml: &str) -> Vec<Value> {
    let mut child = Command::new(python())
        .args([
            "-c",
            "import json, sys, yaml\n\
             json.dump([d for d in yaml.safe_load_all(sys.stdin) if d], sys.stdout)",
        ])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("run python");
    std::io::Write::write_all(&mut child.stdin.take().expect("stdin"), yaml.as_bytes())
        .expect("write the YAML");
    let out = child.wait_with_output().expect("python");
    let json = ok(&out, &format!("parse YAML:\n{yaml}"));
    match serde_json::from_str(&json).expect("python printed JSON") {
        Value::Array(docs) => docs,
        other => panic!("not a list: {other}"),
    }
}

/// `helm template` with `sets`, parsed.
fn render(helm: &Path, home: &Path, sets: &[&str]) -> Vec<Value> {
    parse_yaml(&template(helm, home, sets))
}

/// `(kind, name)` of every object, sorted.
fn kinds(objects: &[Value]) -> Vec<(String, String)> {
    let mut k: Vec<(String, String)> = objects
        .iter()
        .map(|o| {
            (
                o["kind"].as_str().unwrap_or_default().to_string(),
                o["metadata"]["name"]
                    .as_str()
                    .unwrap_or_default()
                    .to_string(),
            )
        })
        .collect();
    k.sort();
    k
}

fn find<'a>(objects: &'a [Value], kind: &str, name: &str) -> &'a Value {
    objects
        .iter()
        .find(|o| o["kind"] == kind && o["metadata"]["name"] == name)
        .unwrap_or_else(|| panic!("no {kind} {name} in {:?}", kinds(objects)))
}

fn strings(v: &Value) -> Vec<String> {
    v.as_array()
        .unwrap_or_else(|| panic!("not a list: {v}"))
        .iter()
        .map(|s| {
            s.as_str()
                .unwrap_or_else(|| panic!("not a string: {s}"))
                .to_string()
        })
        .collect()
}

fn b64(s: &Value) -> Vec<u8> {
    STANDARD
        .decode(s.as_str().unwrap_or_else(|| panic!("not a string: {s}")))
        .unwrap_or_else(|e| panic!("not base64 ({e}): {s}"))
}

/// The one container of the Deployment.
fn container(deploy: &Value) -> &Value {
    let containers = deploy["spec"]["template"]["spec"]["containers"]
        .as_array()
        .expect("containers");
    assert_eq!(containers.len(), 1, "{deploy}");
    &containers[0]
}

/// The flags `skein serve --help` lists (`--name`, without values).
fn serve_flags() -> Vec<String> {
    let out = Command::new(skein_tests::skein_bin())
        .args(["serve", "--help"])
        .output()
        .expect("run skein serve --help");
    let help = ok(&out, "skein serve --help");
    help.split_whitespace()
        .filter(|w| w.starts_with("--"))
        .map(|w| {
            w.trim_end_matches(|c: char| !c.is_ascii_alphanumeric())
                .to_string()
        })
        .collect()
}

/// The container arguments for the default values.
fn default_args() -> Vec<String> {
    [
        "serve",
        "--data-dir=/var/lib/skein",
        "--bind-address=0.0.0.0",
        "--secure-port=6443",
        "--etcd-servers=http://etcd.example.invalid:2379",
        "--leader-elect=true",
        "--leader-elect-lease-duration=10s",
        "--leader-elect-renew-deadline=7s",
        "--leader-elect-retry-period=2s",
        "--authentication-kubeconfig=/etc/skein/authentication/kubeconfig",
        "--authorization-kubeconfig=/etc/skein/authentication/kubeconfig",
        "--authorization-mode=RBAC",
        "--service-account-signing-key-file=/etc/skein/service-account/sa.key",
        "--service-account-key-file=/etc/skein/service-account/sa.key",
        "--audit-policy-file=/etc/skein/audit/policy.yaml",
        "--audit-log-path=-",
        "--audit-log-maxsize=100",
        "--audit-log-maxbackup=5",
        "--audit-log-maxage=7",
        "--tls-cert-file=/etc/skein/tls/tls.crt",
        "--tls-private-key-file=/etc/skein/tls/tls.key",
        "--tls-min-version=VersionTLS12",
    ]
    .map(String::from)
    .to_vec()
}

/// Runs openssl in `dir`; returns stdout.
fn openssl(dir: &Path, args: &[&str]) -> String {
    let out = Command::new("openssl")
        .current_dir(dir)
        .args(args)
        .output()
        .unwrap_or_else(|e| panic!("cannot run openssl (install it): {e}"));
    ok(&out, &format!("openssl {}", args.join(" ")))
}

/// The serving Secret's certificate chains to its CA, names the Service
/// (`skein.skein-system.svc`, as the aggregator dials it) and matches its
/// key; the APIService's caBundle is that CA.
fn check_serving_cert(secret: &Value, apiservice: &Value) {
    assert_eq!(secret["type"], "kubernetes.io/tls", "{secret}");
    let data = &secret["data"];
    assert_eq!(
        apiservice["spec"]["caBundle"], data["ca.crt"],
        "the APIService's caBundle is the Secret's CA"
    );
    let dir = tempfile::tempdir().expect("tempdir");
    for (key, file) in [
        ("ca.crt", "ca.crt"),
        ("tls.crt", "tls.crt"),
        ("tls.key", "tls.key"),
    ] {
        std::fs::write(dir.path().join(file), b64(&data[key])).expect("write");
    }
    let verified = openssl(
        dir.path(),
        &[
            "verify",
            "-CAfile",
            "ca.crt",
            "-verify_hostname",
            "skein.skein-system.svc",
            "tls.crt",
        ],
    );
    assert_eq!(verified.trim(), "tls.crt: OK");
    let sans = openssl(
        dir.path(),
        &["x509", "-in", "tls.crt", "-noout", "-ext", "subjectAltName"],
    );
    for name in [
        "DNS:skein,",
        "DNS:skein.skein-system,",
        "DNS:skein.skein-system.svc,",
        "DNS:skein.skein-system.svc.cluster.local",
    ] {
        assert!(sans.contains(name), "{name} not in {sans}");
    }
    assert_eq!(
        openssl(dir.path(), &["x509", "-in", "tls.crt", "-noout", "-pubkey"]),
        openssl(dir.path(), &["pkey", "-in", "tls.key", "-pubout"]),
        "tls.key is the certificate's key"
    );
}

#[test]
fn helm_lint_is_clean_with_helm_3_and_4() {
    let chart = chart();
    let home = tempfile::tempdir().expect("tempdir");
    let value_sets: [&[&str]; 3] = [
        &[],
        &["storage=embedded"],
        &[
            "encryption.enabled=true",
            "audit.logPath=/var/log/skein/audit.log",
            "members[0].name=east",
            "members[0].kubeconfig=apiVersion: v1",
            "frontProxy.clientCA=PEM",
        ],
    ];
    for h in &helm_binaries() {
        for sets in value_sets {
            let mut args = vec!["lint", "--strict", chart.as_str()];
            for s in sets {
                args.extend(["--set", s]);
            }
            let what = format!("{} {}", tool(h), args.join(" "));
            let stdout = ok(&helm_offline(h, home.path(), &args), &what);
            assert!(
                stdout.contains("1 chart(s) linted, 0 chart(s) failed"),
                "{what}:\n{stdout}"
            );
            assert!(
                !stdout.contains("[WARNING]") && !stdout.contains("[ERROR]"),
                "{what}:\n{stdout}"
            );
        }
    }
}

#[test]
fn default_values_render_two_replicas_on_etcd_behind_an_apiservice() {
    let home = tempfile::tempdir().expect("tempdir");
    let known = serve_flags();
    for h in &helm_binaries() {
        let objects = render(h, home.path(), &[]);
        let want: Vec<(String, String)> = [
            ("APIService", "v1alpha1.federation.skein.io"),
            ("ClusterRoleBinding", "skein:system:auth-delegator"),
            ("ConfigMap", "skein-audit-policy"),
            ("ConfigMap", "skein-authentication"),
            ("Deployment", "skein"),
            ("PodDisruptionBudget", "skein"),
            (
                "RoleBinding",
                "skein:extension-apiserver-authentication-reader",
            ),
            ("Secret", "skein-service-account-key"),
            ("Secret", "skein-serving-cert"),
            ("Service", "skein"),
            ("ServiceAccount", "skein"),
        ]
        .map(|(k, n)| (k.to_string(), n.to_string()))
        .to_vec();
        assert_eq!(kinds(&objects), want, "{}", tool(h));

        // Two replicas on etcd, rolled one at a time.
        let deploy = find(&objects, "Deployment", "skein");
        assert_eq!(deploy["spec"]["replicas"], 2);
        assert_eq!(deploy["spec"]["strategy"]["type"], "RollingUpdate");
        assert_eq!(
            find(&objects, "PodDisruptionBudget", "skein")["spec"]["minAvailable"],
            1
        );
        let pod = &deploy["spec"]["template"]["spec"];
        assert_eq!(pod["serviceAccountName"], "skein");
        let c = container(deploy);
        assert_eq!(c["image"], "skein:0.1.0");
        let args = strings(&c["args"]);
        assert_eq!(args, default_args(), "{}", tool(h));
        // Every flag is one `skein serve` has (or is on its way).
        for arg in &args[1..] {
            let flag = arg.split('=').next().unwrap_or_default();
            assert!(
                known.iter().any(|k| k == flag),
                "the chart passes {flag}, which `skein serve --help` does not list"
            );
        }

        // HTTPS probes on the named port; a non-root, read-only container.
        assert_eq!(
            c["ports"],
            json!([{"name": "https", "containerPort": 6443, "protocol": "TCP"}])
        );
        for (probe, path) in [
            ("livenessProbe", "/livez"),
            ("readinessProbe", "/readyz"),
            ("startupProbe", "/livez"),
        ] {
            assert_eq!(
                c[probe]["httpGet"],
                json!({"path": path, "port": "https", "scheme": "HTTPS"}),
                "{probe}"
            );
        }
        let sc = &c["securityContext"];
        assert_eq!(sc["readOnlyRootFilesystem"], true);
        assert_eq!(sc["runAsNonRoot"], true);
        assert_eq!(sc["allowPrivilegeEscalation"], false);
        assert_eq!(sc["capabilities"]["drop"], json!(["ALL"]));
        assert_eq!(pod["securityContext"]["runAsNonRoot"], true);
        assert_eq!(
            pod["securityContext"]["seccompProfile"]["type"],
            "RuntimeDefault"
        );
        assert!(c["resources"]["requests"]["memory"].is_string(), "{c}");
        // On etcd the data directory is scratch space; no claim.
        let volumes = pod["volumes"].as_array().expect("volumes");
        let data = volumes
            .iter()
            .find(|v| v["name"] == "data")
            .expect("data volume");
        assert_eq!(data["emptyDir"], json!({}));

        // The APIService registers the Service with the CA that verifies
        // the serving certificate.
        let apiservice = find(&objects, "APIService", "v1alpha1.federation.skein.io");
        let spec = &apiservice["spec"];
        assert_eq!(spec["group"], "federation.skein.io");
        assert_eq!(spec["version"], "v1alpha1");
        assert_eq!(
            spec["service"],
            json!({"name": "skein", "namespace": NS, "port": 443})
        );
        assert!(spec.get("insecureSkipTLSVerify").is_none(), "{spec}");
        assert!(!b64(&spec["caBundle"]).is_empty());
        check_serving_cert(find(&objects, "Secret", "skein-serving-cert"), apiservice);

        let svc = find(&objects, "Service", "skein");
        assert_eq!(
            svc["spec"]["ports"],
            json!([{"name": "https", "port": 443, "targetPort": "https", "protocol": "TCP"}])
        );

        // The host RBAC of an aggregated API server.
        let subject = json!([{"kind": "ServiceAccount", "name": "skein", "namespace": NS}]);
        let crb = find(
            &objects,
            "ClusterRoleBinding",
            "skein:system:auth-delegator",
        );
        assert_eq!(crb["roleRef"]["kind"], "ClusterRole");
        assert_eq!(crb["roleRef"]["name"], "system:auth-delegator");
        assert_eq!(crb["subjects"], subject);
        let rb = find(
            &objects,
            "RoleBinding",
            "skein:extension-apiserver-authentication-reader",
        );
        assert_eq!(rb["metadata"]["namespace"], "kube-system");
        assert_eq!(rb["roleRef"]["kind"], "Role");
        assert_eq!(
            rb["roleRef"]["name"],
            "extension-apiserver-authentication-reader"
        );
        assert_eq!(rb["subjects"], subject);
    }
}

#[test]
fn embedded_storage_renders_one_replica_on_a_pvc() {
    let home = tempfile::tempdir().expect("tempdir");
    for h in &helm_binaries() {
        let objects = render(h, home.path(), &["storage=embedded"]);
        let k = kinds(&objects);
        assert!(
            k.contains(&("PersistentVolumeClaim".into(), "skein-data".into())),
            "{}: {k:?}",
            tool(h)
        );
        assert!(
            !k.iter().any(|(kind, _)| kind == "PodDisruptionBudget"),
            "no PodDisruptionBudget for one replica: {k:?}"
        );
        let deploy = find(&objects, "Deployment", "skein");
        assert_eq!(deploy["spec"]["replicas"], 1);
        assert_eq!(deploy["spec"]["strategy"], json!({"type": "Recreate"}));
        let args = strings(&container(deploy)["args"]);
        assert!(!args.iter().any(|a| a.starts_with("--etcd")), "{args:?}");
        assert!(
            args.contains(&"--data-dir=/var/lib/skein".to_string()),
            "{args:?}"
        );
        let volumes = deploy["spec"]["template"]["spec"]["volumes"]
            .as_array()
            .expect("volumes");
        let data = volumes
            .iter()
            .find(|v| v["name"] == "data")
            .expect("data volume");
        assert_eq!(
            data["persistentVolumeClaim"],
            json!({"claimName": "skein-data"})
        );
        let pvc = find(&objects, "PersistentVolumeClaim", "skein-data");
        assert_eq!(pvc["spec"]["accessModes"], json!(["ReadWriteOnce"]));
        assert_eq!(pvc["spec"]["resources"]["requests"]["storage"], "10Gi");
        assert_eq!(
            pvc["metadata"]["annotations"]["helm.sh/resource-policy"],
            "keep"
        );

        // Two replicas cannot share the embedded store.
        let chart = chart();
        let out = helm_offline(
            h,
            home.path(),
            &[
                "template",
                RELEASE,
                &chart,
                "-n",
                NS,
                "--set",
                "storage=embedded",
                "--set",
                "replicas=2",
            ],
        );
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(
            !out.status.success() && stderr.contains("storage: embedded runs one replica"),
            "{}: {stderr}",
            tool(h)
        );
    }
}

/// values.schema.json refuses a misspelt key and a bad enum value before
/// anything renders, with both Helm versions.
#[test]
fn values_are_checked_against_the_schema() {
    let home = tempfile::tempdir().expect("tempdir");
    let chart = chart();
    for h in &helm_binaries() {
        for (set, names) in [
            ("stroage=embedded", "stroage"),
            ("storage=sqlite", "storage"),
            ("members[0].name=East", "name"),
        ] {
            let out = helm_offline(
                h,
                home.path(),
                &["template", RELEASE, &chart, "-n", NS, "--set", set],
            );
            let stderr = String::from_utf8_lossy(&out.stderr);
            assert!(
                !out.status.success()
                    && stderr.contains("don't meet the specifications of the schema")
                    && stderr.contains(names),
                "{} --set {set}: {stderr}",
                tool(h)
            );
        }
    }
}

/// Lays the ConfigMap, Secret and emptyDir volumes of the Deployment out
/// under `root` as the kubelet mounts them (`root/<mountPath>/<key>`).
fn mount_volumes(objects: &[Value], root: &Path) {
    let deploy = find(objects, "Deployment", "skein");
    let pod = &deploy["spec"]["template"]["spec"];
    let volumes: BTreeMap<&str, &Value> = pod["volumes"]
        .as_array()
        .expect("volumes")
        .iter()
        .map(|v| (v["name"].as_str().expect("volume name"), v))
        .collect();
    for mount in container(deploy)["volumeMounts"]
        .as_array()
        .expect("mounts")
    {
        let path = mount["mountPath"].as_str().expect("mountPath");
        let dir = root.join(path.trim_start_matches('/'));
        std::fs::create_dir_all(&dir).expect("mkdir");
        let volume = volumes[mount["name"].as_str().expect("mount name")];
        let files: Vec<(String, Vec<u8>)> = if let Some(name) = volume["configMap"]["name"].as_str()
        {
            let cm = find(objects, "ConfigMap", name);
            cm["data"]
                .as_object()
                .expect("data")
                .iter()
                .map(|(k, v)| (k.clone(), v.as_str().expect("text").as_bytes().to_vec()))
                .collect()
        } else if let Some(name) = volume["secret"]["secretName"].as_str() {
            let secret = find(objects, "Secret", name);
            let data = secret["data"].as_object().expect("data");
            match volume["secret"]["items"].as_array() {
                Some(items) => items
                    .iter()
                    .map(|i| {
                        let key = i["key"].as_str().expect("key");
                        (
                            i["path"].as_str().expect("path").to_string(),
                            b64(&data[key]),
                        )
                    })
                    .collect(),
                None => data.iter().map(|(k, v)| (k.clone(), b64(v))).collect(),
            }
        } else {
            Vec::new() // emptyDir or a claim: an empty directory
        };
        for (name, content) in files {
            std::fs::write(dir.join(name), content).expect("write a mounted file");
        }
    }
}

/// The container's flags (after `serve`) for a `skein serve` on loopback
/// with the Pod's files under `root`: paths are rewritten under it; the
/// data dir, address and port (the harness sets them), the flags in
/// `drop` are left out.
fn chart_args(objects: &[Value], root: &Path, drop: &[&str]) -> Vec<String> {
    let deploy = find(objects, "Deployment", "skein");
    let mut args = Vec::new();
    for arg in strings(&container(deploy)["args"]).into_iter().skip(1) {
        let (flag, value) = arg.split_once('=').unwrap_or((arg.as_str(), ""));
        if ["--data-dir", "--bind-address", "--secure-port"].contains(&flag) || drop.contains(&flag)
        {
            continue;
        }
        if let Some(path) = value.strip_prefix('/') {
            args.push(format!("{flag}={}", root.join(path).display()));
        } else {
            args.push(arg.clone());
        }
    }
    args
}

/// The chart's generated audit policy, encryption configuration and
/// ServiceAccount signing key, mounted as the Pod would see them, start a
/// real Skein with the chart's own flags: the audit log records requests,
/// Secrets are encrypted in the store with the generated key, and
/// `kubectl create token` signs with the chart's key.
#[tokio::test]
async fn the_chart_s_files_and_flags_start_skein() {
    let home = tempfile::tempdir().expect("tempdir");
    let helm_bin = &helm_binaries()[0];
    let objects = render(
        helm_bin,
        home.path(),
        &[
            "storage=embedded",
            "encryption.enabled=true",
            "audit.logPath=/var/log/skein/audit.log",
        ],
    );
    let dir = tempfile::tempdir().expect("tempdir");
    let root = dir.path().join("pod");
    mount_volumes(&objects, &root);

    // The chart's flags, with paths under the mounts; the harness sets the
    // data dir and port, and this test runs without a host
    // (--authentication-kubeconfig, --authorization-kubeconfig). It serves Skein's own certificate,
    // which the admin kubeconfig kubectl uses here trusts (the chart's is
    // served in the end-to-end test below).
    let args = chart_args(
        &objects,
        &root,
        &[
            "--authentication-kubeconfig",
            "--authorization-kubeconfig",
            "--tls-cert-file",
            "--tls-private-key-file",
        ],
    );
    for want in [
        "--audit-policy-file",
        "--audit-log-path",
        "--encryption-provider-config",
        "--service-account-signing-key-file",
    ] {
        assert!(
            args.iter().any(|a| a.starts_with(want)),
            "{want} not in {args:?}"
        );
    }
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let server = Server::start(&dir.path().join("data"), &args).await;
    let api = Api::new(&server);

    let plaintext = "chart-plaintext-4b1d";
    api.post(
        "/api/v1/namespaces/default/secrets",
        &json!({"metadata": {"name": "s1"}, "stringData": {"v": plaintext}}),
    )
    .await
    .expect(201);
    let got = api
        .get("/api/v1/namespaces/default/secrets/s1")
        .await
        .expect(200);
    assert_eq!(b64(&got["data"]["v"]), plaintext.as_bytes());

    // Encrypted at rest with the generated secretbox key.
    let store = std::fs::read(dir.path().join("data").join("store.redb")).expect("read the store");
    let contains = |needle: &[u8]| store.windows(needle.len()).any(|w| w == needle);
    assert!(
        contains(b"k8s:enc:secretbox:v1:key1:"),
        "no secretbox envelope in the store"
    );
    assert!(
        !contains(plaintext.as_bytes()),
        "the Secret is plaintext in the store"
    );

    // ServiceAccount tokens signed with the chart's key.
    let kubectl_bin = &kubectl_binaries()[0];
    let out = kubectl(
        kubectl_bin,
        &server,
        &["create", "token", "default", "-n", "default"],
        KUBECTL_TIMEOUT,
    );
    let token = ok(&out, "kubectl create token");
    let review = api
        .post(
            "/apis/authentication.k8s.io/v1/tokenreviews",
            &json!({"spec": {"token": token.trim()}}),
        )
        .await
        .expect(201);
    assert_eq!(review["status"]["authenticated"], true, "{review}");
    assert_eq!(
        review["status"]["user"]["username"],
        "system:serviceaccount:default:default"
    );

    // The audit log (a file on the audit-log volume) has the create, at
    // the policy's level and without the body.
    let log = std::fs::read_to_string(root.join("var/log/skein/audit.log")).expect("the audit log");
    let create = log
        .lines()
        .map(|l| serde_json::from_str::<Value>(l).expect("an audit event per line"))
        .find(|e| {
            e["verb"] == "create"
                && e["objectRef"]["resource"] == "secrets"
                && e["responseStatus"]["code"] == 201
        })
        .unwrap_or_else(|| panic!("no create of a Secret in the audit log:\n{log}"));
    assert_eq!(create["level"], "Metadata");
    assert!(create.get("requestObject").is_none(), "{create}");
    assert_eq!(create["user"]["username"], "skein-admin");
}

/// Runs kubectl; asserts success; returns stdout.
fn kubectl_ok(bin: &Path, server: &Server, args: &[&str]) -> String {
    let out = kubectl(bin, server, args, KUBECTL_TIMEOUT);
    ok(&out, &describe(bin, args))
}

#[tokio::test]
async fn rendered_manifests_pass_a_server_side_dry_run() {
    let dir = tempfile::tempdir().expect("tempdir");
    let server = Server::start_on_backend(dir.path(), &[]).await;
    let kubectls = kubectl_binaries();
    kubectl_ok(&kubectls[0], &server, &["create", "namespace", NS]);
    let value_sets: [&[&str]; 2] = [
        &[],
        &[
            "storage=embedded",
            "encryption.enabled=true",
            "audit.logPath=/var/log/skein/audit.log",
            "members[0].name=east",
            "members[0].kubeconfig=apiVersion: v1",
            "frontProxy.clientCA=PEM",
        ],
    ];
    for h in &helm_binaries() {
        for sets in value_sets {
            let yaml = template(h, dir.path(), sets);
            let count = parse_yaml(&yaml).len();
            let file = dir.path().join("rendered.yaml");
            std::fs::write(&file, &yaml).expect("write");
            let file = file.to_string_lossy().into_owned();
            for k in &kubectls {
                let out = kubectl(
                    k,
                    &server,
                    &["apply", "--dry-run=server", "-f", &file],
                    KUBECTL_TIMEOUT,
                );
                let what = format!(
                    "{} with {} {sets:?}",
                    describe(k, &["apply", "--dry-run=server"]),
                    tool(h)
                );
                let stdout = ok(&out, &what);
                assert!(
                    out.stderr.is_empty(),
                    "{what}: {}",
                    String::from_utf8_lossy(&out.stderr)
                );
                let lines: Vec<&str> = stdout.lines().collect();
                assert_eq!(lines.len(), count, "{what}:\n{stdout}");
                assert!(
                    lines
                        .iter()
                        .all(|l| l.ends_with(" created (server dry run)")),
                    "{what}:\n{stdout}"
                );
            }
        }
    }
    // The dry run validates: an unknown field is refused (kubectl asks for
    // strict field validation).
    let bad = template(&helm_binaries()[0], dir.path(), &[]);
    let bad = bad.replace(
        "emptyDir: {}\n        - name: tmp",
        "emptyDir: {}\n          bogus: 1\n        - name: tmp",
    );
    assert!(bad.contains("bogus: 1"), "the data volume moved:\n{bad}");
    let file = dir.path().join("bad.yaml");
    std::fs::write(&file, &bad).expect("write");
    let file = file.to_string_lossy().into_owned();
    for k in &kubectls {
        let out = kubectl(
            k,
            &server,
            &["apply", "--dry-run=server", "-f", &file],
            KUBECTL_TIMEOUT,
        );
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(
            !out.status.success()
                && stderr.contains(r#"unknown field "spec.template.spec.volumes[0].bogus""#),
            "{}: {stderr}",
            describe(k, &["apply", "--dry-run=server"])
        );
    }

    // A dry run stores nothing.
    Api::new(&server)
        .get("/apis/apiregistration.k8s.io/v1/apiservices/v1alpha1.federation.skein.io")
        .await
        .expect(404);
    let deployments = Api::new(&server)
        .names(&format!("/apis/apps/v1/namespaces/{NS}/deployments"))
        .await;
    assert!(deployments.is_empty(), "{deployments:?}");
}

/// Runs `helm <args>` against the server; asserts success.
fn helm_ok(server: &Server, bin: &Path, args: &[&str]) -> String {
    let out = helm(server, bin, args);
    ok(
        &out,
        &format!(
            "{} {}\nserver log:\n{}",
            tool(bin),
            args.join(" "),
            server.logs()
        ),
    )
}

/// The objects a user of the host sees after `helm install`.
async fn installed(api: &Api) -> BTreeMap<&'static str, Value> {
    let paths = [
        ("apiservice", "/apis/apiregistration.k8s.io/v1/apiservices/v1alpha1.federation.skein.io".to_string()),
        ("deployment", format!("/apis/apps/v1/namespaces/{NS}/deployments/skein")),
        ("service", format!("/api/v1/namespaces/{NS}/services/skein")),
        ("serviceaccount", format!("/api/v1/namespaces/{NS}/serviceaccounts/skein")),
        ("serving-cert", format!("/api/v1/namespaces/{NS}/secrets/skein-serving-cert")),
        ("sa-key", format!("/api/v1/namespaces/{NS}/secrets/skein-service-account-key")),
        (
            "clusterrolebinding",
            "/apis/rbac.authorization.k8s.io/v1/clusterrolebindings/skein:system:auth-delegator".to_string(),
        ),
        (
            "rolebinding",
            "/apis/rbac.authorization.k8s.io/v1/namespaces/kube-system/rolebindings/skein:extension-apiserver-authentication-reader"
                .to_string(),
        ),
    ];
    let mut out = BTreeMap::new();
    for (what, path) in paths {
        out.insert(what, api.get(&path).await.expect(200));
    }
    out
}

/// `helm install` into a Skein used as the host, with Helm 4.1 and 3.17:
/// the APIService, Deployment, Service, ServiceAccount and bindings exist
/// with the chart's fields; `helm upgrade` keeps the generated CA, serving
/// certificate and signing key (lookup), so the host's trust survives;
/// `helm uninstall` removes them.
#[tokio::test]
async fn helm_install_upgrade_uninstall_into_a_skein_host() {
    let dir = tempfile::tempdir().expect("tempdir");
    let server = Server::start_on_backend(dir.path(), &[]).await;
    let api = Api::new(&server);
    let chart = chart();
    kubectl_ok(
        &kubectl_binaries()[0],
        &server,
        &["create", "namespace", NS],
    );

    for h in &helm_binaries() {
        let out = helm_ok(&server, h, &["install", RELEASE, &chart, "-n", NS]);
        assert!(out.contains("STATUS: deployed"), "{out}");
        let first = installed(&api).await;

        let apiservice = &first["apiservice"];
        let spec = &apiservice["spec"];
        assert_eq!(spec["group"], "federation.skein.io");
        assert_eq!(spec["version"], "v1alpha1");
        assert_eq!(
            spec["service"],
            json!({"name": "skein", "namespace": NS, "port": 443})
        );
        assert_eq!(spec["groupPriorityMinimum"], 1000);
        assert_eq!(spec["versionPriority"], 15);
        check_serving_cert(&first["serving-cert"], apiservice);
        assert_eq!(
            apiservice["metadata"]["labels"]["app.kubernetes.io/managed-by"],
            "Helm"
        );
        assert_eq!(
            apiservice["metadata"]["annotations"]["meta.helm.sh/release-namespace"],
            NS
        );

        let deploy = &first["deployment"];
        assert_eq!(deploy["spec"]["replicas"], 2);
        assert_eq!(
            deploy["spec"]["template"]["spec"]["serviceAccountName"],
            "skein"
        );
        assert_eq!(
            strings(&container(deploy)["args"]),
            default_args(),
            "{}",
            tool(h)
        );
        assert_eq!(
            container(deploy)["readinessProbe"]["httpGet"],
            json!({"path": "/readyz", "port": "https", "scheme": "HTTPS"})
        );
        let svc = &first["service"];
        assert_eq!(svc["spec"]["ports"][0]["port"], 443);
        assert_eq!(svc["spec"]["ports"][0]["targetPort"], "https");
        assert_eq!(
            svc["spec"]["selector"],
            json!({"app.kubernetes.io/name": "skein", "app.kubernetes.io/instance": RELEASE})
        );
        assert!(svc["spec"]["clusterIP"].is_string(), "{svc}");
        assert_eq!(first["serviceaccount"]["metadata"]["name"], "skein");
        let subject = json!([{"kind": "ServiceAccount", "name": "skein", "namespace": NS}]);
        assert_eq!(
            first["clusterrolebinding"]["roleRef"]["name"],
            "system:auth-delegator"
        );
        assert_eq!(first["clusterrolebinding"]["subjects"], subject);
        assert_eq!(
            first["rolebinding"]["roleRef"],
            json!({"apiGroup": "rbac.authorization.k8s.io", "kind": "Role", "name": "extension-apiserver-authentication-reader"})
        );
        assert_eq!(first["rolebinding"]["subjects"], subject);

        // kubectl shows the APIService (not Available: nothing runs the Pods).
        let table = kubectl_ok(
            &kubectl_binaries()[0],
            &server,
            &["get", "apiservice", "v1alpha1.federation.skein.io"],
        );
        assert!(table.contains(&format!("{NS}/skein")), "{table}");

        // An upgrade that changes the Pods keeps every generated secret.
        let out = helm_ok(
            &server,
            h,
            &[
                "upgrade",
                RELEASE,
                &chart,
                "-n",
                NS,
                "--set",
                "logLevel=debug",
            ],
        );
        assert!(out.contains("has been upgraded"), "{out}");
        let second = installed(&api).await;
        assert_eq!(
            second["serving-cert"]["data"],
            first["serving-cert"]["data"],
            "{}",
            tool(h)
        );
        assert_eq!(
            second["sa-key"]["data"],
            first["sa-key"]["data"],
            "{}",
            tool(h)
        );
        assert_eq!(second["apiservice"]["spec"]["caBundle"], spec["caBundle"]);
        assert_eq!(
            container(&second["deployment"])["env"],
            json!([{"name": "RUST_LOG", "value": "debug"}])
        );
        assert_eq!(second["deployment"]["metadata"]["generation"], 2);

        helm_ok(&server, h, &["uninstall", RELEASE, "-n", NS]);
        api.get("/apis/apiregistration.k8s.io/v1/apiservices/v1alpha1.federation.skein.io")
            .await
            .expect(404);
        api.get(
            "/apis/rbac.authorization.k8s.io/v1/clusterrolebindings/skein:system:auth-delegator",
        )
        .await
        .expect(404);
        api.get(&format!(
            "/api/v1/namespaces/{NS}/secrets/skein-serving-cert"
        ))
        .await
        .expect(404);
    }
}

/// Polls APIService `name` on `host` until its Available condition has
/// `status`; returns the condition.
async fn wait_available(api: &Api, name: &str, status: &str) -> Value {
    let deadline = std::time::Instant::now() + Duration::from_secs(30);
    loop {
        let svc = api
            .get(&format!(
                "/apis/apiregistration.k8s.io/v1/apiservices/{name}"
            ))
            .await
            .expect(200);
        let available = svc["status"]["conditions"]
            .as_array()
            .and_then(|c| c.iter().find(|c| c["type"] == "Available"))
            .cloned();
        if let Some(c) = available
            && c["status"] == status
        {
            return c;
        }
        assert!(
            std::time::Instant::now() < deadline,
            "{name} never Available={status}: {svc}"
        );
        tokio::time::sleep(Duration::from_millis(250)).await;
    }
}

/// The chart end to end on a Skein host (member role): `helm install`,
/// then the Pod it describes run on loopback — the files of its volumes
/// (from the installed release's manifest), its flags, and the projected
/// ServiceAccount token of the chart's ServiceAccount, with which Skein
/// reads the host's front-proxy settings through the chart's own
/// authentication kubeconfig. Once an EndpointSlice names it (no kubelet
/// here), the APIService becomes Available and a host user reaches the
/// federation through the prefix path with her host identity.
///
/// Skein serves the chart's certificate (`--tls-cert-file`), which the
/// host verifies against the APIService's `caBundle` for the Service's
/// name; the certificate also names 127.0.0.1 (`tls.extraIPAddresses`)
/// so that the test's own client, which dials the address, verifies it
/// too.
#[tokio::test]
async fn the_installed_chart_registers_a_federation_with_a_skein_host() {
    let dir = tempfile::tempdir().expect("tempdir");
    let tokens = dir.path().join("tokens.csv");
    std::fs::write(&tokens, "carol-token,carol,carol-uid,\"dev,ops\"\n").expect("write tokens");
    let host = Server::start(
        &dir.path().join("host"),
        &[
            "--role=member",
            &format!("--token-auth-file={}", tokens.display()),
        ],
    )
    .await;
    let host_api = Api::new(&host);
    let k = &kubectl_binaries()[0];
    let h = &helm_binaries()[0];
    kubectl_ok(k, &host, &["create", "namespace", NS]);
    helm_ok(
        &host,
        h,
        &[
            "install",
            RELEASE,
            &chart(),
            "-n",
            NS,
            "--set",
            "storage=embedded",
            "--set",
            "tls.extraIPAddresses={127.0.0.1}",
        ],
    );
    // The Role the chart binds to is bootstrapped, as upstream's.
    let reader = host_api
        .get("/apis/rbac.authorization.k8s.io/v1/namespaces/kube-system/roles/extension-apiserver-authentication-reader")
        .await
        .expect(200);
    assert_eq!(
        reader["rules"][0]["resourceNames"],
        json!(["extension-apiserver-authentication"]),
        "{reader}"
    );

    // The Pod's files: its volumes, and the ServiceAccount token and host
    // CA the kubelet projects, with the in-cluster address replaced by
    // the host's.
    let manifest = helm_ok(&host, h, &["get", "manifest", RELEASE, "-n", NS]);
    let objects = parse_yaml(&manifest);
    let root = dir.path().join("pod");
    mount_volumes(&objects, &root);
    let sa_dir = root.join("var/run/secrets/kubernetes.io/serviceaccount");
    std::fs::create_dir_all(&sa_dir).expect("mkdir");
    let token = kubectl_ok(k, &host, &["create", "token", "skein", "-n", NS]);
    std::fs::write(sa_dir.join("token"), token.trim()).expect("write the token");
    std::fs::write(sa_dir.join("ca.crt"), host.pki_file("ca.crt")).expect("write the CA");
    let authn = root.join("etc/skein/authentication/kubeconfig");
    let text = std::fs::read_to_string(&authn).expect("the chart's authentication kubeconfig");
    let text = text
        .replace("https://kubernetes.default.svc:443", &host.url(""))
        .replace(
            "/var/run/secrets",
            &root.join("var/run/secrets").display().to_string(),
        );
    std::fs::write(&authn, text).expect("rewrite the kubeconfig");

    let args = chart_args(&objects, &root, &[]);
    assert!(
        args.iter()
            .any(|a| a.starts_with("--authentication-kubeconfig=")),
        "{args:?}"
    );
    assert!(
        args.iter().any(|a| a.starts_with("--tls-cert-file=")),
        "{args:?}"
    );
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let fed_dir = dir.path().join("federation");
    std::fs::create_dir_all(&fed_dir).expect("mkdir");
    std::fs::copy(
        root.join("etc/skein/tls/ca.crt"),
        fed_dir.join(skein_tests::server::TRUSTED_CA),
    )
    .expect("trust the chart's CA");
    let federation = Server::start(&fed_dir, &args).await;

    // The Service's endpoint is the federation on loopback.
    host_api
        .post(
            &format!("/apis/discovery.k8s.io/v1/namespaces/{NS}/endpointslices"),
            &json!({
                "metadata": {"name": "skein-loopback", "labels": {"kubernetes.io/service-name": "skein"}},
                "addressType": "IPv4",
                "ports": [{"name": "https", "port": federation.addr.port(), "protocol": "TCP"}],
                "endpoints": [{"addresses": ["127.0.0.1"], "conditions": {"ready": true}}],
            }),
        )
        .await
        .expect(201);
    let available = wait_available(&host_api, "v1alpha1.federation.skein.io", "True").await;
    assert_eq!(available["reason"], "Passed", "{available}");

    // carol may use the proxy on the host and is an admin in the federation.
    host_api
        .post(
            "/apis/rbac.authorization.k8s.io/v1/clusterroles",
            &json!({"metadata": {"name": "federation-user"}, "rules": [
                {"apiGroups": ["federation.skein.io"], "resources": ["federations/proxy"], "verbs": ["*"]}
            ]}),
        )
        .await
        .expect(201);
    host_api
        .post(
            "/apis/rbac.authorization.k8s.io/v1/clusterrolebindings",
            &json!({"metadata": {"name": "federation-users"},
                    "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": "federation-user"},
                    "subjects": [{"apiGroup": "rbac.authorization.k8s.io", "kind": "Group", "name": "dev"}]}),
        )
        .await
        .expect(201);
    Api::new(&federation)
        .post(
            "/apis/rbac.authorization.k8s.io/v1/clusterrolebindings",
            &json!({"metadata": {"name": "ops-admin"},
                    "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": "cluster-admin"},
                    "subjects": [{"apiGroup": "rbac.authorization.k8s.io", "kind": "Group", "name": "ops"}]}),
        )
        .await
        .expect(201);

    let host_config = host.token_kubeconfig("carol", "carol-token");
    let out = Command::new(skein_tests::skein_bin())
        .args(["kubeconfig", "--aggregated", "--host-kubeconfig"])
        .arg(&host_config)
        .output()
        .expect("run skein kubeconfig");
    let config = dir.path().join("carol-federation.kubeconfig");
    std::fs::write(&config, ok(&out, "skein kubeconfig --aggregated")).expect("write");
    for k in kubectl_binaries() {
        let deadline = std::time::Instant::now() + Duration::from_secs(10);
        let out = loop {
            let out = host.kubectl_with(&k, &config, &["auth", "whoami", "-o", "json"]);
            if out.status.success() || std::time::Instant::now() > deadline {
                break out;
            }
            tokio::time::sleep(Duration::from_millis(250)).await;
        };
        let review: Value =
            serde_json::from_str(&ok(&out, &tool(&k))).expect("a SelfSubjectReview");
        assert_eq!(
            review["status"]["userInfo"]["username"], "carol",
            "{review}"
        );
        // What she creates lands in the federation, not in the host.
        let name = format!("from-chart-{}", skein_tests::kubectl::client_minor(&k));
        let out = host.kubectl_with(&k, &config, &["create", "namespace", &name]);
        assert_eq!(ok(&out, &tool(&k)), format!("namespace/{name} created\n"));
        Api::new(&federation)
            .get(&format!("/api/v1/namespaces/{name}"))
            .await
            .expect(200);
        host_api
            .get(&format!("/api/v1/namespaces/{name}"))
            .await
            .expect(404);
        let out = host.kubectl_with(
            &k,
            &config,
            &["get", "namespace", "kube-system", "-o", "name"],
        );
        assert_eq!(ok(&out, &tool(&k)), "namespace/kube-system\n");
    }
}
