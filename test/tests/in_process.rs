//! Two Skein servers in one process: a federation and a member, each
//! `skein::server::serve` on this test's runtime. Nothing is process-wide:
//! the member serves no federation API although the federation installed
//! its CRDs in the same process, the member is joined, and a ConfigMap
//! submitted to the federation is applied to it.

use std::time::{Duration, Instant};

use serde_json::{Value, json};
use skein_tests::http::Api;
use skein_tests::member::{SECRETS_NS, cluster, secret};
use skein_tests::server::Server;

/// Polls `check` every 100 ms until it returns `Some`, or panics with
/// `what` after `limit`.
async fn eventually<T, F, Fut>(limit: Duration, what: &str, mut check: F) -> T
where
    F: FnMut() -> Fut,
    Fut: std::future::Future<Output = Option<T>>,
{
    let deadline = Instant::now() + limit;
    loop {
        if let Some(v) = check().await {
            return v;
        }
        assert!(Instant::now() < deadline, "{what} within {limit:?}");
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

fn ready(cluster: &Value) -> bool {
    cluster["status"]["conditions"]
        .as_array()
        .is_some_and(|cs| {
            cs.iter()
                .any(|c| c["type"] == "Ready" && c["status"] == "True")
        })
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_federation_and_a_member_in_one_process_propagate_a_configmap() {
    let dir = tempfile::tempdir().expect("tempdir");
    let mut fed = Server::start_in_process(&dir.path().join("fed"), &[]).await;
    let mut member = Server::start_in_process(&dir.path().join("m1"), &["--role=member"]).await;
    let (fed_api, member_api) = (Api::new(&fed), Api::new(&member));

    // Each server has its own resource table: the federation group is
    // served by the federation only.
    fed_api
        .get("/apis/federation.skein.io/v1alpha1")
        .await
        .expect(200);
    let unserved = member_api.get("/apis/federation.skein.io/v1alpha1").await;
    assert_eq!(unserved.status, 404, "{}", unserved.text());
    let groups = member_api.get("/apis").await.expect(200);
    assert!(
        !groups.to_string().contains("federation.skein.io"),
        "the member's discovery lists the federation's group: {groups}"
    );

    // Join the member: its kubeconfig in a Secret, and a Cluster.
    let kubeconfig = std::fs::read_to_string(member.kubeconfig()).expect("member kubeconfig");
    fed_api
        .post(
            "/api/v1/namespaces",
            &json!({"apiVersion": "v1", "kind": "Namespace",
            "metadata": {"name": SECRETS_NS}}),
        )
        .await
        .expect(201);
    fed_api
        .post(
            &format!("/api/v1/namespaces/{SECRETS_NS}/secrets"),
            &secret("m1", &kubeconfig),
        )
        .await
        .expect(201);
    fed_api
        .post(
            "/apis/federation.skein.io/v1alpha1/clusters",
            &cluster("m1", "m1"),
        )
        .await
        .expect(201);
    eventually(Duration::from_secs(60), "the Cluster is Ready", || async {
        let c = fed_api
            .get("/apis/federation.skein.io/v1alpha1/clusters/m1")
            .await;
        ready(&c.json()).then_some(())
    })
    .await;

    // A ConfigMap placed on m1 reaches it.
    fed_api
        .post(
            "/api/v1/namespaces/default/configmaps",
            &json!({"apiVersion": "v1", "kind": "ConfigMap",
                "metadata": {"name": "settings", "annotations": {"skein.io/clusters": "m1"}},
                "data": {"color": "blue"}}),
        )
        .await
        .expect(201);
    let copy = eventually(Duration::from_secs(60), "the copy on m1", || async {
        let r = member_api
            .get("/api/v1/namespaces/default/configmaps/settings")
            .await;
        (r.status == 200).then(|| r.json())
    })
    .await;
    assert_eq!(copy["data"], json!({"color": "blue"}));

    // The member's metrics are its own: it served no ConfigMap create,
    // the federation did.
    let metrics = |api: &Api| {
        let api = api.clone();
        async move { api.get("/metrics").await.text() }
    };
    let created = |text: &str| {
        text.lines().any(|l| {
            l.starts_with("apiserver_request_total{")
                && l.contains("resource=\"configmaps\"")
                && l.contains("verb=\"POST\"")
        })
    };
    assert!(created(&metrics(&fed_api).await));
    assert!(!created(&metrics(&member_api).await));

    member
        .stop_in_process()
        .await
        .expect("the member stops cleanly");
    fed.stop_in_process()
        .await
        .expect("the federation stops cleanly");
}
