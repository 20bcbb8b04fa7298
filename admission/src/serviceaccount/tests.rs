use std::sync::Arc;

use serde_json::{Value, json};

use super::*;
use crate::{GroupVersionKind, GroupVersionResource};

struct Accounts(Vec<Value>);

impl ServiceAccountLookup for Accounts {
    fn service_account(&self, namespace: &str, name: &str) -> Lookup {
        if namespace == "gone" {
            return Lookup::NamespaceUnusable;
        }
        self.0
            .iter()
            .find(|sa| sa["metadata"]["name"] == name)
            .cloned()
            .map_or(Lookup::Missing, Lookup::Found)
    }
}

fn plugin(accounts: Vec<Value>) -> ServiceAccountAdmission {
    ServiceAccountAdmission::new(
        Arc::new(Accounts(accounts)),
        Arc::new(|| "abcde".to_owned()),
    )
}

fn default_sa() -> Value {
    json!({"metadata": {"name": "default", "namespace": "ns"}})
}

fn pod_attrs(pod: Value) -> Attributes {
    let mut a = Attributes::new(
        Operation::Create,
        GroupVersionResource::new("", "v1", "pods"),
        GroupVersionKind::new("", "v1", "Pod"),
        "x",
    );
    a.namespace = Some("ns".into());
    a.object = Some(pod);
    a
}

fn pod(spec: Value) -> Value {
    json!({"metadata": {"name": "x"}, "spec": spec})
}

#[test]
fn defaults_the_account_and_mounts_the_token() {
    let p = plugin(vec![default_sa()]);
    let mut a = pod_attrs(pod(json!({
        "initContainers": [{"name": "init", "image": "busybox"}],
        "containers": [{"name": "app", "image": "nginx", "volumeMounts": [{"name": "data", "mountPath": "/data"}]}],
        "volumes": [{"name": "data", "emptyDir": {}}],
    })));
    p.admit(&mut a).unwrap();
    let spec = &a.object.as_ref().unwrap()["spec"];
    assert_eq!(spec["serviceAccountName"], "default");
    assert_eq!(spec["serviceAccount"], "default");
    let mount =
        json!({"mountPath": TOKEN_MOUNT_PATH, "name": "kube-api-access-abcde", "readOnly": true});
    assert_eq!(spec["initContainers"][0]["volumeMounts"], json!([mount]));
    assert_eq!(spec["containers"][0]["volumeMounts"][1], mount);
    assert_eq!(
        spec["volumes"][1],
        json!({"name": "kube-api-access-abcde", "projected": {
            "defaultMode": 420,
            "sources": [
                {"serviceAccountToken": {"expirationSeconds": 3607, "path": "token"}},
                {"configMap": {"items": [{"key": "ca.crt", "path": "ca.crt"}], "name": "kube-root-ca.crt"}},
                {"downwardAPI": {"items": [{"fieldRef": {"apiVersion": "v1", "fieldPath": "metadata.namespace"}, "path": "namespace"}]}},
            ],
        }})
    );
    // Admitting again changes nothing.
    let once = a.object.clone();
    p.admit(&mut a).unwrap();
    assert_eq!(a.object, once);
    p.validate(&a).unwrap();
}

#[test]
fn missing_account_is_forbidden_with_upstreams_message() {
    let p = plugin(vec![default_sa()]);
    let mut a = pod_attrs(pod(
        json!({"serviceAccountName": "sa", "containers": [{"name": "c"}]}),
    ));
    let d = p.admit(&mut a).unwrap_err();
    assert_eq!(d.code(), 403);
    assert_eq!(
        d.status_message(&a),
        r#"pods "x" is forbidden: error looking up service account ns/sa: serviceaccount "sa" not found"#
    );
}

#[test]
fn an_unusable_namespace_is_left_to_the_namespace_check() {
    let p = plugin(vec![]);
    let mut a = pod_attrs(pod(json!({"containers": [{"name": "c"}]})));
    a.namespace = Some("gone".into());
    p.admit(&mut a).unwrap();
    p.validate(&a).unwrap();
}

#[test]
fn automount_false_on_the_pod_or_the_account_mounts_nothing() {
    let p = plugin(vec![default_sa()]);
    let mut a = pod_attrs(pod(
        json!({"automountServiceAccountToken": false, "containers": [{"name": "c"}]}),
    ));
    p.admit(&mut a).unwrap();
    let spec = &a.object.as_ref().unwrap()["spec"];
    assert!(spec.get("volumes").is_none());
    assert!(spec["containers"][0].get("volumeMounts").is_none());

    let p = plugin(vec![
        json!({"metadata": {"name": "default"}, "automountServiceAccountToken": false}),
    ]);
    let mut a = pod_attrs(pod(json!({"containers": [{"name": "c"}]})));
    p.admit(&mut a).unwrap();
    assert!(a.object.as_ref().unwrap()["spec"].get("volumes").is_none());

    // The Pod's choice wins over the account's.
    let mut a = pod_attrs(pod(
        json!({"automountServiceAccountToken": true, "containers": [{"name": "c"}]}),
    ));
    p.admit(&mut a).unwrap();
    assert_eq!(
        a.object.as_ref().unwrap()["spec"]["volumes"][0]["name"],
        "kube-api-access-abcde"
    );
}

#[test]
fn an_existing_mount_at_the_path_is_kept() {
    let p = plugin(vec![default_sa()]);
    let mine = json!({"name": "mine", "mountPath": TOKEN_MOUNT_PATH});
    let mut a = pod_attrs(pod(
        json!({"containers": [{"name": "c", "volumeMounts": [mine.clone()]}]}),
    ));
    p.admit(&mut a).unwrap();
    let spec = &a.object.as_ref().unwrap()["spec"];
    assert_eq!(spec["containers"][0]["volumeMounts"], json!([mine]));
    assert!(spec.get("volumes").is_none());
}

#[test]
fn pull_secrets_come_from_the_account() {
    let p = plugin(vec![
        json!({"metadata": {"name": "default"}, "imagePullSecrets": [{"name": "reg"}]}),
    ]);
    let mut a = pod_attrs(pod(json!({"containers": [{"name": "c"}]})));
    p.admit(&mut a).unwrap();
    assert_eq!(
        a.object.as_ref().unwrap()["spec"]["imagePullSecrets"],
        json!([{"name": "reg"}])
    );
}

#[test]
fn mountable_secrets_are_enforced_when_annotated() {
    let sa = json!({"metadata": {"name": "default", "annotations": {ENFORCE_MOUNTABLE_SECRETS: "true"}},
        "secrets": [{"name": "ok"}]});
    let p = plugin(vec![sa]);
    let mut a = pod_attrs(pod(
        json!({"automountServiceAccountToken": false, "containers": [{"name": "c", "env": [
        {"name": "E", "valueFrom": {"secretKeyRef": {"name": "nope", "key": "k"}}}]}]}),
    ));
    let d = p.admit(&mut a).unwrap_err();
    assert_eq!(
        d.status_message(&a),
        r#"pods "x" is forbidden: container c with envVar E referencing secret.secretName="nope" is not allowed because service account default does not reference that secret"#
    );
}

#[test]
fn mirror_pods_may_not_name_accounts() {
    let p = plugin(vec![default_sa()]);
    let mut a = pod_attrs(
        json!({"metadata": {"name": "x", "annotations": {MIRROR_POD_ANNOTATION: "h"}},
        "spec": {"containers": [{"name": "c"}]}}),
    );
    p.admit(&mut a).unwrap();
    assert!(
        a.object.as_ref().unwrap()["spec"]
            .get("serviceAccountName")
            .is_none()
    );
    let mut a = pod_attrs(
        json!({"metadata": {"name": "x", "annotations": {MIRROR_POD_ANNOTATION: "h"}},
        "spec": {"serviceAccountName": "default", "containers": [{"name": "c"}]}}),
    );
    let d = p.admit(&mut a).unwrap_err();
    assert_eq!(
        d.status_message(&a),
        r#"pods "x" is forbidden: a mirror pod may not reference service accounts"#
    );
}

#[test]
fn other_requests_are_ignored() {
    let p = plugin(vec![]);
    let mut a = pod_attrs(pod(json!({"containers": [{"name": "c"}]})));
    a.subresource = Some("status".into());
    p.admit(&mut a).unwrap();
    let mut a = pod_attrs(json!({"metadata": {"name": "x"}}));
    a.gvr = GroupVersionResource::new("", "v1", "configmaps");
    p.admit(&mut a).unwrap();
    assert_eq!(a.object.unwrap(), json!({"metadata": {"name": "x"}}));
}
