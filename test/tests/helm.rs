//! Helm 3.17 and 4.1 against `skein serve` with the admin kubeconfig.

use serde_json::{Value, json};
use skein_tests::http::{Api, helm, helm_binaries};
use skein_tests::server::Server;

/// `helm list`'s header line (columns are tab-separated, padded with spaces).
const HEADER: &str = "NAME\tNAMESPACE\tREVISION\tUPDATED\tSTATUS\tCHART\tAPP VERSION";

fn base64(data: &[u8]) -> String {
    const ALPHABET: &[u8] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    let mut out = String::new();
    for chunk in data.chunks(3) {
        let b = [
            chunk[0],
            *chunk.get(1).unwrap_or(&0),
            *chunk.get(2).unwrap_or(&0),
        ];
        let n = (u32::from(b[0]) << 16) | (u32::from(b[1]) << 8) | u32::from(b[2]);
        for i in 0..4 {
            if i <= chunk.len() {
                out.push(ALPHABET[((n >> (18 - 6 * i)) & 63) as usize] as char);
            } else {
                out.push('=');
            }
        }
    }
    out
}

/// Runs `helm <args>`; asserts exit 0 and an empty stderr; returns stdout.
fn run(server: &Server, helm_bin: &std::path::Path, args: &[&str]) -> String {
    let out = helm(server, helm_bin, args);
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    assert!(
        out.status.success() && stderr.is_empty(),
        "{} {args:?} ({}):\nstdout:\n{stdout}\nstderr:\n{stderr}\nserver log:\n{}",
        helm_bin.display(),
        out.status,
        server.logs()
    );
    stdout
}

/// A row's tab-separated cells without their padding.
fn cells(line: &str) -> Vec<&str> {
    line.split('\t').map(str::trim_end).collect()
}

#[tokio::test]
async fn helm_list_all_namespaces() {
    let helms = helm_binaries();
    let dir = tempfile::tempdir().expect("tempdir");
    let server = Server::start_on_backend(dir.path(), &[]).await;

    // No releases: just the header line.
    for h in &helms {
        let stdout = run(&server, h, &["list", "-A"]);
        assert_eq!(stdout, format!("{HEADER}\n"), "{}", h.display());
        let stdout = run(&server, h, &["list", "-A", "-o", "json"]);
        assert_eq!(stdout.trim(), "[]", "{}", h.display());
    }

    // A release record as Helm's Secret driver stores it (the release JSON,
    // base64-encoded, in data.release): both versions read it back through
    // the API.
    let release = json!({
        "name": "demo", "namespace": "default", "version": 1,
        "info": {"first_deployed": "2025-01-01T00:00:00Z", "last_deployed": "2025-01-01T00:00:00Z",
                 "deleted": "", "description": "Install complete", "status": "deployed"},
        "chart": {"metadata": {"apiVersion": "v2", "name": "demo-chart", "version": "0.1.0", "appVersion": "1.2.3"}},
        "config": {}, "manifest": ""
    });
    let encoded = base64(&serde_json::to_vec(&release).expect("json"));
    let secret = json!({
        "apiVersion": "v1", "kind": "Secret", "type": "helm.sh/release.v1",
        "metadata": {"name": "sh.helm.release.v1.demo.v1",
                     "labels": {"owner": "helm", "name": "demo", "status": "deployed", "version": "1"}},
        "data": {"release": base64(encoded.as_bytes())}
    });
    Api::new(&server)
        .post("/api/v1/namespaces/default/secrets", &secret)
        .await
        .expect(201);
    for h in &helms {
        let stdout = run(&server, h, &["list", "-A"]);
        let lines: Vec<&str> = stdout.lines().collect();
        assert_eq!(lines.len(), 2, "{}:\n{stdout}", h.display());
        assert_eq!(cells(lines[0]), cells(HEADER), "{}", h.display());
        assert_eq!(
            cells(lines[1]),
            [
                "demo",
                "default",
                "1",
                "2025-01-01 00:00:00 +0000 UTC",
                "deployed",
                "demo-chart-0.1.0",
                "1.2.3"
            ],
            "{}:\n{stdout}",
            h.display()
        );
        // Another namespace has none.
        let stdout = run(&server, h, &["list", "-n", "kube-system"]);
        assert_eq!(stdout, format!("{HEADER}\n"), "{}", h.display());
    }
}

/// The podinfo chart (a verbatim copy of the shared fixture, Apache-2.0).
fn podinfo_chart() -> String {
    let chart = skein_tests::repo_root().join("test/fixtures/podinfo");
    assert!(
        chart.join("Chart.yaml").is_file(),
        "the podinfo chart is missing at {}",
        chart.display()
    );
    chart.to_string_lossy().into_owned()
}

/// Names of the objects a list path returns, sorted.
async fn names(api: &Api, path: &str) -> Vec<String> {
    let mut n = api.names(path).await;
    n.sort();
    n
}

/// The Helm release Secrets of `release` in `ns`, as Helm lists them (by
/// label), sorted by name.
async fn release_secrets(api: &Api, ns: &str, release: &str) -> Vec<Value> {
    let list = api
        .get(&format!(
            "/api/v1/namespaces/{ns}/secrets?labelSelector=owner%3Dhelm%2Cname%3D{release}"
        ))
        .await
        .expect(200);
    let mut items = skein_tests::http::items(&list);
    items.sort_by_key(|s| s["metadata"]["name"].as_str().unwrap_or("").to_string());
    items
}

/// install (three value sets), upgrade, history, rollback, list and
/// uninstall of the podinfo chart, with Helm 4.1 (server-side apply) and
/// Helm 3.17 (three-way strategic merge patches), never disabling OpenAPI
/// validation.
#[tokio::test]
async fn podinfo_install_upgrade_rollback_uninstall() {
    let helms = helm_binaries();
    let dir = tempfile::tempdir().expect("tempdir");
    let server = Server::start_on_backend(dir.path(), &[]).await;
    let api = Api::new(&server);
    let chart = podinfo_chart();
    let prod = format!("{chart}/values-prod.yaml");

    for (i, h) in helms.iter().enumerate() {
        let ns = format!("podinfo-{i}");
        let apps = format!("/apis/apps/v1/namespaces/{ns}/deployments");

        // Default values: a Deployment and a Service.
        let out = run(
            &server,
            h,
            &["install", "web", &chart, "-n", &ns, "--create-namespace"],
        );
        assert!(out.contains("STATUS: deployed"), "{out}");
        assert_eq!(names(&api, &apps).await, ["web-podinfo"]);
        let svc = api
            .get(&format!("/api/v1/namespaces/{ns}/services/web-podinfo"))
            .await
            .expect(200);
        let ports: Vec<i64> = svc["spec"]["ports"]
            .as_array()
            .expect("ports")
            .iter()
            .filter_map(|p| p["port"].as_i64())
            .collect();
        assert_eq!(ports, [9898, 9999], "{svc}");
        assert!(svc["spec"]["clusterIP"].is_string(), "{svc}");

        // Production values: Redis and an HPA too.
        run(
            &server,
            h,
            &["install", "prod", &chart, "-n", &ns, "-f", &prod],
        );
        assert_eq!(
            names(&api, &apps).await,
            ["prod-podinfo", "prod-podinfo-redis", "web-podinfo"]
        );
        let hpa = api
            .get(&format!(
                "/apis/autoscaling/v2/namespaces/{ns}/horizontalpodautoscalers/prod-podinfo"
            ))
            .await
            .expect(200);
        assert_eq!(hpa["spec"]["maxReplicas"], 5);

        // Everything switched on with --set.
        run(
            &server,
            h,
            &[
                "install",
                "full",
                &chart,
                "-n",
                &ns,
                "--set",
                "hpa.enabled=true,redis.enabled=true,serviceAccount.enabled=true,ingress.enabled=true",
            ],
        );
        for path in [
            format!("/apis/autoscaling/v2/namespaces/{ns}/horizontalpodautoscalers/full-podinfo"),
            format!("/apis/apps/v1/namespaces/{ns}/deployments/full-podinfo-redis"),
            format!("/api/v1/namespaces/{ns}/serviceaccounts/full-podinfo"),
            format!("/apis/networking.k8s.io/v1/namespaces/{ns}/ingresses/full-podinfo"),
        ] {
            api.get(&path).await.expect(200);
        }

        // Upgrade with changed values; the stored objects follow.
        run(
            &server,
            h,
            &[
                "upgrade",
                "web",
                &chart,
                "-n",
                &ns,
                "--set",
                "replicaCount=3,image.tag=6.14.0",
            ],
        );
        let web = api.get(&format!("{apps}/web-podinfo")).await.expect(200);
        assert_eq!(web["spec"]["replicas"], 3, "{web}");
        let image = web["spec"]["template"]["spec"]["containers"][0]["image"].clone();
        assert_eq!(image, "ghcr.io/stefanprodan/podinfo:6.14.0");

        let history = run(&server, h, &["history", "web", "-n", &ns]);
        let rows: Vec<Vec<&str>> = history.lines().skip(1).map(cells).collect();
        assert_eq!(rows.len(), 2, "{history}");
        assert_eq!((rows[0][0], rows[0][2]), ("1", "superseded"), "{history}");
        assert_eq!((rows[1][0], rows[1][2]), ("2", "deployed"), "{history}");

        // Rollback to revision 1: the objects return to its values.
        let out = run(&server, h, &["rollback", "web", "1", "-n", &ns]);
        assert!(out.contains("Rollback was a success"), "{out}");
        let web = api.get(&format!("{apps}/web-podinfo")).await.expect(200);
        assert_eq!(web["spec"]["replicas"], 1, "{web}");
        assert_eq!(
            web["spec"]["template"]["spec"]["containers"][0]["image"],
            "ghcr.io/stefanprodan/podinfo:6.14.1"
        );

        // Release Secrets, as Helm stores and lists them.
        let secrets = release_secrets(&api, &ns, "web").await;
        let secret_names: Vec<&str> = secrets
            .iter()
            .filter_map(|s| s["metadata"]["name"].as_str())
            .collect();
        assert_eq!(
            secret_names,
            [
                "sh.helm.release.v1.web.v1",
                "sh.helm.release.v1.web.v2",
                "sh.helm.release.v1.web.v3"
            ]
        );
        assert!(secrets.iter().all(|s| s["type"] == "helm.sh/release.v1"));

        let list = run(&server, h, &["list", "-A"]);
        for release in ["web", "prod", "full"] {
            assert!(
                list.lines()
                    .any(|l| cells(l).first() == Some(&release)
                        && cells(l).get(1) == Some(&ns.as_str())),
                "{release} in {ns} missing from:\n{list}"
            );
        }

        // Uninstall: the objects and the release records are gone.
        for release in ["web", "prod", "full"] {
            let out = run(&server, h, &["uninstall", release, "-n", &ns]);
            assert!(
                out.contains(&format!("release \"{release}\" uninstalled")),
                "{out}"
            );
        }
        assert!(names(&api, &apps).await.is_empty());
        assert!(
            names(&api, &format!("/api/v1/namespaces/{ns}/services"))
                .await
                .is_empty()
        );
        assert!(release_secrets(&api, &ns, "web").await.is_empty());
    }
}

/// A release installed by Helm 3.17 (client-side: create, then three-way
/// merge patches) is upgraded by Helm 4.1 (server-side apply): Helm 4
/// moves Helm 3's field ownership to its own apply manager first, so the
/// upgrade applies without conflicts and the values land.
#[tokio::test]
async fn helm3_release_upgrades_with_helm4() {
    let helms = helm_binaries();
    let (helm4, helm3) = match helms.as_slice() {
        [a, b] => (a, b),
        other => panic!("expected Helm 4.1 and 3.17, got {other:?}"),
    };
    let dir = tempfile::tempdir().expect("tempdir");
    let server = Server::start_on_backend(dir.path(), &[]).await;
    let api = Api::new(&server);
    let chart = podinfo_chart();
    let ns = "mixed";
    run(
        &server,
        helm3,
        &["install", "web", &chart, "-n", ns, "--create-namespace"],
    );
    let out = run(
        &server,
        helm4,
        &[
            "upgrade",
            "web",
            &chart,
            "-n",
            ns,
            "--set",
            "replicaCount=2",
        ],
    );
    assert!(out.contains("STATUS: deployed"), "{out}");
    let out = run(
        &server,
        helm4,
        &[
            "upgrade",
            "web",
            &chart,
            "-n",
            ns,
            "--server-side=true",
            "--set",
            "replicaCount=3",
        ],
    );
    assert!(out.contains("STATUS: deployed"), "{out}");
    let web = api
        .get(&format!(
            "/apis/apps/v1/namespaces/{ns}/deployments/web-podinfo"
        ))
        .await
        .expect(200);
    assert_eq!(web["spec"]["replicas"], 3, "{web}");
    let applied: Vec<&str> = web["metadata"]["managedFields"]
        .as_array()
        .expect("managedFields")
        .iter()
        .filter(|e| e["operation"] == "Apply")
        .filter_map(|e| e["manager"].as_str())
        .collect();
    assert_eq!(applied, ["helm"], "{web}");
    let history = run(&server, helm4, &["history", "web", "-n", ns]);
    assert_eq!(history.lines().count(), 4, "{history}");
}

/// The statefulset-claims chart (written for these tests): a StatefulSet
/// whose container mounts its `volumeClaimTemplates` entry `storage`, with
/// a config volume and a sidecar (`restartPolicy: Always` init container),
/// the shape of the widely used Alertmanager chart.
fn claims_chart() -> String {
    let chart = skein_tests::repo_root().join("test/fixtures/statefulset-claims");
    assert!(
        chart.join("Chart.yaml").is_file(),
        "the statefulset-claims chart is missing at {}",
        chart.display()
    );
    chart.to_string_lossy().into_owned()
}

/// Upstream's refusal of a change to a StatefulSet's immutable spec fields.
const STS_FORBIDDEN: &str = "spec: Forbidden: updates to statefulset spec for fields other than 'replicas', 'ordinals', 'template', 'updateStrategy', 'revisionHistoryLimit', 'persistentVolumeClaimRetentionPolicy' and 'minReadySeconds' are forbidden";

/// install, upgrade, a refused upgrade (claim templates are immutable) and
/// uninstall of a chart whose StatefulSet mounts its claim template, with
/// Helm 4.1 and Helm 3.17.
#[tokio::test]
async fn statefulset_mounting_its_claim_template_installs_upgrades_uninstalls() {
    let helms = helm_binaries();
    let dir = tempfile::tempdir().expect("tempdir");
    let server = Server::start_on_backend(dir.path(), &[]).await;
    let api = Api::new(&server);
    let chart = claims_chart();

    for (i, h) in helms.iter().enumerate() {
        let ns = format!("claims-{i}");
        let sts_path = format!("/apis/apps/v1/namespaces/{ns}/statefulsets/am-claims");

        let out = run(
            &server,
            h,
            &["install", "am", &chart, "-n", &ns, "--create-namespace"],
        );
        assert!(out.contains("STATUS: deployed"), "{out}");
        let sts = api.get(&sts_path).await.expect(200);
        let spec = &sts["spec"];
        assert_eq!(spec["replicas"], 1, "{sts}");
        assert_eq!(spec["serviceName"], "am-claims-headless", "{sts}");
        let pod = &spec["template"]["spec"];
        let mounts: Vec<(&str, &str)> = pod["containers"][0]["volumeMounts"]
            .as_array()
            .expect("volumeMounts")
            .iter()
            .filter_map(|m| Some((m["name"].as_str()?, m["mountPath"].as_str()?)))
            .collect();
        assert_eq!(
            mounts,
            [
                ("config", "/etc/alertmanager"),
                ("storage", "/alertmanager")
            ],
            "{sts}"
        );
        assert_eq!(
            pod["volumes"],
            json!([{"name": "config", "configMap": {"name": "am-claims", "defaultMode": 420}}])
        );
        assert_eq!(pod["initContainers"][0]["restartPolicy"], "Always", "{sts}");
        // The readiness probe is stored with upstream's defaults.
        assert_eq!(
            pod["containers"][0]["readinessProbe"],
            json!({"httpGet": {"path": "/-/ready", "port": "http", "scheme": "HTTP"},
                   "timeoutSeconds": 1, "periodSeconds": 10, "successThreshold": 1, "failureThreshold": 3})
        );
        let claim = &spec["volumeClaimTemplates"][0];
        assert_eq!(claim["metadata"]["name"], "storage", "{sts}");
        assert_eq!(
            claim["spec"],
            json!({"accessModes": ["ReadWriteOnce"], "resources": {"requests": {"storage": "1Gi"}},
                   "volumeMode": "Filesystem"})
        );
        assert_eq!(claim["status"], json!({"phase": "Pending"}), "{sts}");

        // Upgrade: replicas and image change (both mutable).
        let out = run(
            &server,
            h,
            &[
                "upgrade",
                "am",
                &chart,
                "-n",
                &ns,
                "--set",
                "replicaCount=3,image.tag=v0.28.0",
            ],
        );
        assert!(out.contains("STATUS: deployed"), "{out}");
        let sts = api.get(&sts_path).await.expect(200);
        assert_eq!(sts["spec"]["replicas"], 3, "{sts}");
        assert_eq!(
            sts["spec"]["template"]["spec"]["containers"][0]["image"],
            "quay.io/prometheus/alertmanager:v0.28.0"
        );

        // Claim templates are immutable: Helm reports upstream's message and
        // the stored StatefulSet keeps its claim.
        let failed = helm(
            &server,
            h,
            &[
                "upgrade",
                "am",
                &chart,
                "-n",
                &ns,
                "--set",
                "replicaCount=3,image.tag=v0.28.0,storage.size=2Gi",
            ],
        );
        let stderr = String::from_utf8_lossy(&failed.stderr);
        assert!(!failed.status.success(), "{}: {stderr}", h.display());
        assert!(
            stderr.contains(&format!(
                "StatefulSet.apps \"am-claims\" is invalid: {STS_FORBIDDEN}"
            )),
            "{}: {stderr}",
            h.display()
        );
        let sts = api.get(&sts_path).await.expect(200);
        assert_eq!(
            sts["spec"]["volumeClaimTemplates"][0]["spec"]["resources"]["requests"]["storage"],
            "1Gi"
        );

        let out = run(&server, h, &["uninstall", "am", "-n", &ns]);
        assert!(out.contains("release \"am\" uninstalled"), "{out}");
        api.get(&sts_path).await.expect(404);
        assert!(
            names(&api, &format!("/api/v1/namespaces/{ns}/configmaps"))
                .await
                .iter()
                .all(|n| n != "am-claims")
        );
        assert!(
            names(&api, &format!("/api/v1/namespaces/{ns}/services"))
                .await
                .is_empty()
        );
        assert!(release_secrets(&api, &ns, "am").await.is_empty());
    }
}
