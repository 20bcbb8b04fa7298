//! Charts that ship CustomResourceDefinitions, with Helm 4.1 and 3.17
//! against `skein serve` (issue 10), on the embedded store or on etcd
//! (`SKEIN_TEST_BACKEND=etcd`).
//!
//! The charts are `test/fixtures/charts/` (its README says why each is
//! shaped as it is):
//! - `crd-folder`: the CRD in `crds/`, custom resources in `templates/`.
//!   Helm creates `crds/` before the templates, waits for `Established`,
//!   and never upgrades or deletes those CRDs.
//! - `crd-templates`: the CRD in `templates/` (part of the release: upgraded
//!   and deleted with it), its custom resource in a post-install /
//!   post-upgrade hook.

use std::path::Path;
use std::time::{Duration, Instant};

use serde_json::{Value, json};
use skein_tests::cli::{Env, start};
use skein_tests::http::{Api, helm, helm_binaries, items};
use skein_tests::server::Server;

/// How long a CRD may take to be established or to go away.
const SETTLE: Duration = Duration::from_secs(30);

fn chart(name: &str) -> String {
    skein_tests::repo_root()
        .join("test/fixtures/charts")
        .join(name)
        .to_string_lossy()
        .into_owned()
}

/// Runs `helm <args>`; asserts exit 0 and an empty stderr; returns stdout.
fn run(server: &Server, h: &Path, args: &[&str]) -> String {
    let out = helm(server, h, args);
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    assert!(
        out.status.success() && stderr.is_empty(),
        "{} {args:?} ({}):\nstdout:\n{stdout}\nstderr:\n{stderr}\nserver log (tail):\n{}",
        h.display(),
        out.status,
        tail(server)
    );
    stdout
}

/// Runs `helm <args>`; asserts it fails; returns stderr.
fn fails(server: &Server, h: &Path, args: &[&str]) -> String {
    let out = helm(server, h, args);
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    assert!(
        !out.status.success(),
        "{} {args:?} should fail:\nstdout:\n{stdout}\nstderr:\n{stderr}",
        h.display()
    );
    stderr
}

fn tail(server: &Server) -> String {
    let logs = server.logs();
    let lines: Vec<&str> = logs.lines().collect();
    lines[lines.len().saturating_sub(40)..].join("\n")
}

/// Polls `GET path` until `done(status, body)` holds; panics after
/// [`SETTLE`] quoting the last answer.
async fn wait_for(api: &Api, path: &str, what: &str, done: impl Fn(u16, &Value) -> bool) -> Value {
    let start = Instant::now();
    loop {
        let r = api.get(path).await;
        let body = serde_json::from_slice(&r.body).unwrap_or(Value::Null);
        if done(r.status.as_u16(), &body) {
            return body;
        }
        assert!(
            start.elapsed() < SETTLE,
            "{what}: GET {path} did not get there within {SETTLE:?}; last: {} {}",
            r.status,
            r.text()
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

/// Whether a CRD object is Established.
fn established(crd: &Value) -> bool {
    crd["status"]["conditions"].as_array().is_some_and(|cs| {
        cs.iter()
            .any(|c| c["type"] == "Established" && c["status"] == "True")
    })
}

/// The names of the items of the list at `path` (200 expected), sorted.
async fn names(api: &Api, path: &str) -> Vec<String> {
    let list = api.get(path).await.expect(200);
    let mut names: Vec<String> = items(&list)
        .iter()
        .map(|o| {
            o["metadata"]["name"]
                .as_str()
                .unwrap_or_default()
                .to_string()
        })
        .collect();
    names.sort();
    names
}

fn write_values(env: &Env, name: &str, yaml: &str) -> String {
    let path = env.dir.path().join(name);
    std::fs::write(&path, yaml).expect("write values");
    path.to_string_lossy().into_owned()
}

#[tokio::test]
async fn a_chart_with_a_crds_folder_installs_upgrades_and_uninstalls() {
    let env = start().await;
    let api = Api::new(&env.server);
    let chart = chart("crd-folder");
    let crd_path =
        "/apis/apiextensions.k8s.io/v1/customresourcedefinitions/backups.crdfolder.example.com";
    for (i, h) in helm_binaries().iter().enumerate() {
        let ns = format!("crd-folder-{i}");
        let backups = format!("/apis/crdfolder.example.com/v1/namespaces/{ns}/backups");

        // Install: the CRD from crds/ first (the second Helm finds it and
        // skips it), then the custom resources of the templates.
        let out = run(
            &env.server,
            h,
            &[
                "install",
                "backups",
                &chart,
                "-n",
                &ns,
                "--create-namespace",
            ],
        );
        assert!(out.contains("STATUS: deployed"), "{out}");
        let crd = api.get(crd_path).await.expect(200);
        assert!(established(&crd), "{crd}");
        assert_eq!(names(&api, &backups).await, ["nightly", "weekly"]);
        let nightly = api.get(&format!("{backups}/nightly")).await.expect(200);
        assert_eq!(
            nightly["spec"]["target"], "s3://backups/default",
            "{nightly}"
        );
        assert_eq!(
            nightly["spec"]["suspend"], false,
            "the schema's default: {nightly}"
        );
        assert_eq!(
            nightly["metadata"]["annotations"]["meta.helm.sh/release-name"], "backups",
            "{nightly}"
        );
        api.get(&format!(
            "/api/v1/namespaces/{ns}/configmaps/backups-config"
        ))
        .await
        .expect(200);

        // Upgrade: one custom resource changed, one removed.
        let values = write_values(
            &env,
            &format!("backups-{i}.yaml"),
            "backups:\n  - name: nightly\n    schedule: \"30 1 * * *\"\n    retention: 14\n\
             target: gs://backups/eu\n",
        );
        let out = run(
            &env.server,
            h,
            &["upgrade", "backups", &chart, "-n", &ns, "-f", &values],
        );
        assert!(out.contains("STATUS: deployed"), "{out}");
        assert_eq!(names(&api, &backups).await, ["nightly"]);
        let nightly = api.get(&format!("{backups}/nightly")).await.expect(200);
        assert_eq!(nightly["spec"]["retention"], 14, "{nightly}");
        assert_eq!(nightly["spec"]["schedule"], "30 1 * * *", "{nightly}");
        assert_eq!(nightly["spec"]["target"], "gs://backups/eu", "{nightly}");

        // A value the schema rejects fails the upgrade with upstream's text.
        let bad = write_values(
            &env,
            &format!("bad-{i}.yaml"),
            "backups:\n  - name: nightly\n    schedule: \"30 1 * * *\"\n    retention: 400\n",
        );
        let stderr = fails(
            &env.server,
            h,
            &["upgrade", "backups", &chart, "-n", &ns, "-f", &bad],
        );
        assert!(
            stderr.contains(
                "spec.retention: Invalid value: 400: spec.retention in body should be less than \
                 or equal to 365"
            ),
            "{stderr}"
        );
        let nightly = api.get(&format!("{backups}/nightly")).await.expect(200);
        assert_eq!(nightly["spec"]["retention"], 14, "unchanged: {nightly}");

        // Uninstall: the custom resources go, the CRD stays (Helm never
        // deletes crds/).
        let out = run(&env.server, h, &["uninstall", "backups", "-n", &ns]);
        assert!(out.contains("release \"backups\" uninstalled"), "{out}");
        assert!(names(&api, &backups).await.is_empty());
        api.get(crd_path).await.expect(200);
    }
}

#[tokio::test]
async fn a_chart_that_renders_its_crd_from_templates_installs_upgrades_and_uninstalls() {
    let env = start().await;
    let api = Api::new(&env.server);
    let chart = chart("crd-templates");
    let crd_path =
        "/apis/apiextensions.k8s.io/v1/customresourcedefinitions/gadgets.crdtemplates.example.com";
    // The CRD is cluster-scoped and owned by one release at a time, so the
    // Helm versions take turns.
    for (i, h) in helm_binaries().iter().enumerate() {
        let ns = format!("crd-templates-{i}");
        let gadget = format!("/apis/crdtemplates.example.com/v1/namespaces/{ns}/gadgets/main");

        let out = run(
            &env.server,
            h,
            &[
                "install",
                "gadgets",
                &chart,
                "-n",
                &ns,
                "--create-namespace",
            ],
        );
        assert!(out.contains("STATUS: deployed"), "{out}");
        let crd = api.get(crd_path).await.expect(200);
        assert_eq!(
            crd["metadata"]["annotations"]["meta.helm.sh/release-namespace"], ns,
            "the CRD belongs to the release: {crd}"
        );
        assert!(established(&crd), "{crd}");
        // The hook's custom resource, with the schema's defaults.
        let g = api.get(&gadget).await.expect(200);
        assert_eq!(
            g["spec"],
            json!({"size": "small", "replicas": 1, "colour": "grey"}),
            "{g}"
        );

        // Upgrade: the hook re-creates it with the new values.
        let out = run(
            &env.server,
            h,
            &[
                "upgrade",
                "gadgets",
                &chart,
                "-n",
                &ns,
                "--set",
                "gadget.size=medium,gadget.replicas=4",
            ],
        );
        assert!(out.contains("STATUS: deployed"), "{out}");
        let g = api.get(&gadget).await.expect(200);
        assert_eq!(g["spec"]["size"], "medium", "{g}");
        assert_eq!(g["spec"]["replicas"], 4, "{g}");
        let settings = api
            .get(&format!(
                "/api/v1/namespaces/{ns}/configmaps/gadgets-settings"
            ))
            .await
            .expect(200);
        assert_eq!(settings["data"]["size"], "medium", "{settings}");

        // A CEL rule of the CRD fails the hook: Helm reports upstream's text.
        let stderr = fails(
            &env.server,
            h,
            &[
                "upgrade",
                "gadgets",
                &chart,
                "-n",
                &ns,
                "--set",
                "gadget.size=small,gadget.replicas=4",
            ],
        );
        assert!(
            stderr.contains(
                "Gadget.crdtemplates.example.com \"main\" is invalid: spec: Invalid value: \
                 \"object\": a small gadget has at most 3 replicas"
            ),
            "{stderr}"
        );

        // Uninstall: the CRD goes with the release, and its custom
        // resources with it.
        let out = run(&env.server, h, &["uninstall", "gadgets", "-n", &ns]);
        assert!(out.contains("release \"gadgets\" uninstalled"), "{out}");
        wait_for(&api, crd_path, "the CRD is deleted", |code, _| code == 404).await;
        let r = api.get(&gadget).await;
        assert_eq!(r.status, 404, "{}", r.text());
    }
}
