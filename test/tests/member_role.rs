//! `skein serve --role=member`: a plain Kubernetes API server. It serves no
//! `federation.skein.io` group and runs no federation controllers; without
//! `--simulate-workloads` nothing pretends to run workloads.

use skein_tests::http::Api;
use skein_tests::kubectl_binaries;
use skein_tests::server::Server;

#[tokio::test]
async fn a_member_serves_no_federation_group() {
    let kubectls = kubectl_binaries();
    let dir = tempfile::tempdir().expect("tempdir");
    let member = Server::start(dir.path(), &["--role=member"]).await;
    let api = Api::new(&member);

    let groups = api.get("/apis").await.expect(200);
    let names: Vec<&str> = groups["groups"]
        .as_array()
        .expect("groups")
        .iter()
        .filter_map(|g| g["name"].as_str())
        .collect();
    assert!(names.contains(&"apps"), "{names:?}");
    assert!(!names.contains(&"federation.skein.io"), "{names:?}");
    let missing = api.get("/apis/federation.skein.io/v1alpha1").await;
    assert_eq!(missing.status, 404, "{}", missing.text());

    let crds = api
        .get("/apis/apiextensions.k8s.io/v1/customresourcedefinitions")
        .await
        .expect(200);
    assert_eq!(
        crds["items"],
        serde_json::json!([]),
        "no built-in CRDs on a member"
    );

    for kubectl in &kubectls {
        let out = member.kubectl(kubectl, &["api-resources", "-o", "name"]);
        let text = String::from_utf8_lossy(&out.stdout);
        assert!(
            out.status.success(),
            "{}: {}",
            kubectl.display(),
            String::from_utf8_lossy(&out.stderr)
        );
        assert!(text.lines().any(|l| l == "deployments.apps"), "{text}");
        assert!(!text.contains("federation.skein.io"), "{text}");
        // Without --simulate-workloads there are no Nodes.
        let out = member.kubectl(kubectl, &["get", "nodes", "-o", "name"]);
        assert!(out.status.success());
        assert_eq!(
            String::from_utf8_lossy(&out.stdout),
            "",
            "{}",
            kubectl.display()
        );
    }
}

#[tokio::test]
async fn the_control_plane_serves_the_federation_group() {
    let dir = tempfile::tempdir().expect("tempdir");
    let server = Server::start(dir.path(), &[]).await;
    let api = Api::new(&server);
    let group = api
        .get("/apis/federation.skein.io/v1alpha1")
        .await
        .expect(200);
    let resources: Vec<&str> = group["resources"]
        .as_array()
        .expect("resources")
        .iter()
        .filter_map(|r| r["name"].as_str())
        .collect();
    assert!(resources.contains(&"clusters"), "{resources:?}");
}
