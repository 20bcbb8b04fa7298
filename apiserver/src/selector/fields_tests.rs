use serde_json::json;

use super::*;

fn sel(s: &str) -> field::Selector {
    field::Selector::parse(s).unwrap()
}

fn check(
    group: &str,
    version: &str,
    kind: &str,
    selector: &str,
) -> std::result::Result<(), String> {
    validate(group, version, kind, &sel(selector)).map_err(|e| e.to_string())
}

#[test]
fn default_kinds_accept_name_and_namespace_only() {
    for (g, v, k) in [
        ("apps", "v1", "Deployment"),
        ("", "v1", "ConfigMap"),
        ("rbac.authorization.k8s.io", "v1", "ClusterRole"),
        ("", "v1", "PersistentVolume"),
        ("batch", "v1", "CronJob"),
        ("example.com", "v1", "Widget"),
    ] {
        assert_eq!(supported(g, v, k), ["metadata.name", "metadata.namespace"]);
        assert_eq!(
            check(g, v, k, "metadata.name=a,metadata.namespace!=b"),
            Ok(())
        );
    }
    assert_eq!(
        check("networking.k8s.io", "v1", "Ingress", "foo.bar=baz"),
        Err(r#""foo.bar" is not a known field selector: only "metadata.name", "metadata.namespace""#.into())
    );
    // Upstream registers no conversion for apps/v1 ReplicaSets, so their
    // selectable status.replicas is rejected (kubernetes#135136).
    assert_eq!(
        check("apps", "v1", "ReplicaSet", "status.replicas=0"),
        Err(r#""status.replicas" is not a known field selector: only "metadata.name", "metadata.namespace""#.into())
    );
}

#[test]
fn per_kind_lists_and_messages() {
    let ok = [
        (
            "",
            "v1",
            "Pod",
            "spec.nodeName=n,status.phase!=Running,spec.hostNetwork=true",
        ),
        (
            "",
            "v1",
            "Pod",
            "spec.restartPolicy=Always,spec.schedulerName=s,spec.serviceAccountName=a",
        ),
        (
            "",
            "v1",
            "Pod",
            "status.podIP=1.2.3.4,status.podIPs=x,status.nominatedNodeName=n,spec.host=h",
        ),
        ("", "v1", "Node", "metadata.name=n,spec.unschedulable=false"),
        (
            "",
            "v1",
            "ReplicationController",
            "status.replicas=0,metadata.namespace=x",
        ),
        (
            "",
            "v1",
            "Event",
            "involvedObject.kind=Pod,involvedObject.name=x,reason=r,source=s,type=Normal",
        ),
        (
            "",
            "v1",
            "Event",
            "involvedObject.uid=u,involvedObject.apiVersion=v1,involvedObject.resourceVersion=1,involvedObject.fieldPath=f,involvedObject.namespace=n,reportingComponent=c",
        ),
        ("", "v1", "Namespace", "status.phase=Active,metadata.name=x"),
        ("", "v1", "Secret", "type=Opaque"),
        (
            "",
            "v1",
            "Service",
            "spec.type=ClusterIP,spec.clusterIP=None",
        ),
        ("batch", "v1", "Job", "status.successful=1"),
        (
            "events.k8s.io",
            "v1",
            "Event",
            "regarding.kind=Pod,reportingController=c,source=s,type=Warning,reason=r",
        ),
        (
            "certificates.k8s.io",
            "v1",
            "CertificateSigningRequest",
            "spec.signerName=kubernetes.io/kubelet-serving",
        ),
        (
            "certificates.k8s.io",
            "v1beta1",
            "ClusterTrustBundle",
            "spec.signerName=x",
        ),
        (
            "certificates.k8s.io",
            "v1alpha1",
            "ClusterTrustBundle",
            "spec.signerName=x",
        ),
        (
            "resource.k8s.io",
            "v1beta1",
            "ResourceSlice",
            "spec.nodeName=n,spec.driver=d",
        ),
        (
            "resource.k8s.io",
            "v1beta2",
            "ResourceSlice",
            "spec.nodeName=n",
        ),
        (
            "resource.k8s.io",
            "v1alpha3",
            "ResourceSlice",
            "spec.driver=d",
        ),
    ];
    for (g, v, k, s) in ok {
        assert_eq!(check(g, v, k, s), Ok(()), "{k} {s}");
    }
    let bad = [
        (
            "",
            "v1",
            "Pod",
            "spec.foo=x",
            "field label not supported: spec.foo",
        ),
        (
            "",
            "v1",
            "Node",
            "metadata.namespace=x",
            "field label not supported: metadata.namespace",
        ),
        (
            "",
            "v1",
            "Namespace",
            "metadata.namespace=x",
            "field label not supported: metadata.namespace",
        ),
        (
            "",
            "v1",
            "Namespace",
            "name=x",
            "field label not supported: name",
        ),
        (
            "",
            "v1",
            "Secret",
            "data=x",
            "field label not supported: data",
        ),
        (
            "",
            "v1",
            "Event",
            "regarding.kind=Pod",
            "field label not supported: regarding.kind",
        ),
        (
            "events.k8s.io",
            "v1",
            "Event",
            "involvedObject.name=x",
            "field label not supported: involvedObject.name",
        ),
        (
            "batch",
            "v1",
            "Job",
            "status.active=1",
            r#"field label "status.active" not supported for Job"#,
        ),
        (
            "certificates.k8s.io",
            "v1",
            "CertificateSigningRequest",
            "metadata.namespace=x",
            "field label not supported: metadata.namespace",
        ),
        (
            "resource.k8s.io",
            "v1beta1",
            "ResourceSlice",
            "spec.pool=p",
            "field label not supported for resource.k8s.io/v1beta1, Kind=ResourceSlice: spec.pool",
        ),
        ("", "v1", "Pod", "=x", "field label not supported: "),
        (
            "",
            "v1",
            "ConfigMap",
            "=x",
            r#""" is not a known field selector: only "metadata.name", "metadata.namespace""#,
        ),
        (
            "",
            "v1",
            "ConfigMap",
            "a\"b=x",
            r#""a\"b" is not a known field selector: only "metadata.name", "metadata.namespace""#,
        ),
    ];
    for (g, v, k, s, want) in bad {
        assert_eq!(check(g, v, k, s), Err(want.to_string()), "{k} {s}");
        assert!(matches!(
            validate(g, v, k, &sel(s)),
            Err(SelectorError::UnsupportedField(_))
        ));
    }
}

#[test]
fn first_unsupported_term_in_sorted_order_is_reported() {
    assert_eq!(
        check("", "v1", "Pod", "zzz=1,aaa=2,spec.nodeName=x"),
        Err("field label not supported: aaa".into())
    );
}

#[test]
fn convert_applies_upstream_renames() {
    let s = convert("", "v1", "Pod", &sel("spec.host=n1,status.phase=Running")).unwrap();
    assert_eq!(s.to_string(), "spec.nodeName=n1,status.phase=Running");
    let s = convert(
        "events.k8s.io",
        "v1",
        "Event",
        &sel("regarding.name=web,reportingController=kubelet,type=Normal"),
    )
    .unwrap();
    assert_eq!(
        s.to_string(),
        "involvedObject.name=web,reportingComponent=kubelet,type=Normal"
    );
}

#[test]
fn pod_values() {
    let pod = json!({
        "metadata": {"name": "web-0", "namespace": "prod"},
        "spec": {"nodeName": "n1", "restartPolicy": "Always", "schedulerName": "default-scheduler",
                 "serviceAccount": "old", "hostNetwork": true},
        "status": {"phase": "Running", "podIPs": [{"ip": "10.0.0.2"}], "nominatedNodeName": "n2"}
    });
    let v = |f: &str| value("", "Pod", &pod, f);
    assert_eq!(v("metadata.name").as_deref(), Some("web-0"));
    assert_eq!(v("metadata.namespace").as_deref(), Some("prod"));
    assert_eq!(v("spec.nodeName").as_deref(), Some("n1"));
    assert_eq!(v("spec.host").as_deref(), Some("n1"));
    assert_eq!(v("spec.restartPolicy").as_deref(), Some("Always"));
    assert_eq!(
        v("spec.schedulerName").as_deref(),
        Some("default-scheduler")
    );
    assert_eq!(v("spec.serviceAccountName").as_deref(), Some("old"));
    assert_eq!(v("spec.hostNetwork").as_deref(), Some("true"));
    assert_eq!(v("status.phase").as_deref(), Some("Running"));
    assert_eq!(v("status.podIP").as_deref(), Some("10.0.0.2"));
    assert_eq!(v("status.nominatedNodeName").as_deref(), Some("n2"));
    assert_eq!(v("status.podIPs"), None);
    assert_eq!(v("spec.containers"), None);

    let empty = json!({"metadata": {"name": "p"}});
    let v = |f: &str| value("", "Pod", &empty, f);
    assert_eq!(v("spec.hostNetwork").as_deref(), Some("false"));
    assert_eq!(v("spec.nodeName").as_deref(), Some(""));
    assert_eq!(v("metadata.namespace").as_deref(), Some(""));
    assert_eq!(v("status.podIP").as_deref(), Some(""));

    let both = json!({"spec": {"serviceAccountName": "new", "serviceAccount": "old"},
                      "status": {"podIP": "10.0.0.9", "podIPs": [{"ip": "10.0.0.2"}]}});
    assert_eq!(
        value("", "Pod", &both, "spec.serviceAccountName").as_deref(),
        Some("new")
    );
    assert_eq!(
        value("", "Pod", &both, "status.podIP").as_deref(),
        Some("10.0.0.9")
    );
}

#[test]
fn event_values_in_both_shapes() {
    let core = json!({
        "metadata": {"name": "e", "namespace": "ns"},
        "involvedObject": {"kind": "Pod", "namespace": "ns", "name": "web", "uid": "u1",
                           "apiVersion": "v1", "resourceVersion": "7", "fieldPath": "spec.containers{a}"},
        "reason": "Pulled", "type": "Normal", "reportingComponent": "kubelet",
        "source": {"component": "kubelet-src"}
    });
    let events = json!({
        "metadata": {"name": "e", "namespace": "ns"},
        "regarding": {"kind": "Pod", "namespace": "ns", "name": "web", "uid": "u1",
                      "apiVersion": "v1", "resourceVersion": "7", "fieldPath": "spec.containers{a}"},
        "reason": "Pulled", "type": "Normal", "reportingController": "kubelet"
    });
    for (field, want) in [
        ("involvedObject.kind", "Pod"),
        ("involvedObject.namespace", "ns"),
        ("involvedObject.name", "web"),
        ("involvedObject.uid", "u1"),
        ("involvedObject.apiVersion", "v1"),
        ("involvedObject.resourceVersion", "7"),
        ("involvedObject.fieldPath", "spec.containers{a}"),
        ("reason", "Pulled"),
        ("type", "Normal"),
        ("reportingComponent", "kubelet"),
    ] {
        assert_eq!(
            value("", "Event", &core, field).as_deref(),
            Some(want),
            "{field}"
        );
        assert_eq!(
            value("events.k8s.io", "Event", &events, field).as_deref(),
            Some(want),
            "{field}"
        );
    }
    assert_eq!(
        value("events.k8s.io", "Event", &events, "regarding.name").as_deref(),
        Some("web")
    );
    assert_eq!(
        value("events.k8s.io", "Event", &events, "reportingController").as_deref(),
        Some("kubelet")
    );
    assert_eq!(
        value("", "Event", &core, "source").as_deref(),
        Some("kubelet-src")
    );
    // No source component: the reporting controller stands in.
    assert_eq!(
        value("events.k8s.io", "Event", &events, "source").as_deref(),
        Some("kubelet")
    );
    assert_eq!(value("", "Event", &core, "message"), None);
}

#[test]
fn other_kind_values() {
    let cases = [
        (
            "",
            "Node",
            json!({"spec": {"unschedulable": true}}),
            "spec.unschedulable",
            "true",
        ),
        ("", "Node", json!({}), "spec.unschedulable", "false"),
        (
            "",
            "Namespace",
            json!({"status": {"phase": "Terminating"}}),
            "status.phase",
            "Terminating",
        ),
        (
            "",
            "Secret",
            json!({"type": "kubernetes.io/tls"}),
            "type",
            "kubernetes.io/tls",
        ),
        (
            "",
            "Service",
            json!({"spec": {"type": "NodePort", "clusterIP": "10.96.0.1"}}),
            "spec.type",
            "NodePort",
        ),
        (
            "",
            "Service",
            json!({"spec": {"type": "NodePort", "clusterIP": "10.96.0.1"}}),
            "spec.clusterIP",
            "10.96.0.1",
        ),
        (
            "",
            "ReplicationController",
            json!({"status": {"replicas": 3}}),
            "status.replicas",
            "3",
        ),
        (
            "",
            "ReplicationController",
            json!({}),
            "status.replicas",
            "0",
        ),
        (
            "apps",
            "ReplicaSet",
            json!({"status": {"replicas": 2}}),
            "status.replicas",
            "2",
        ),
        (
            "batch",
            "Job",
            json!({"status": {"succeeded": 1}}),
            "status.successful",
            "1",
        ),
        (
            "batch",
            "Job",
            json!({"status": {}}),
            "status.successful",
            "0",
        ),
        (
            "certificates.k8s.io",
            "CertificateSigningRequest",
            json!({"spec": {"signerName": "s"}}),
            "spec.signerName",
            "s",
        ),
        (
            "certificates.k8s.io",
            "ClusterTrustBundle",
            json!({"spec": {"signerName": "s"}}),
            "spec.signerName",
            "s",
        ),
        (
            "resource.k8s.io",
            "ResourceSlice",
            json!({"spec": {"driver": "d"}}),
            "spec.driver",
            "d",
        ),
        (
            "resource.k8s.io",
            "ResourceSlice",
            json!({"spec": {"driver": "d"}}),
            "spec.nodeName",
            "",
        ),
        (
            "apps",
            "Deployment",
            json!({"metadata": {"name": "d"}}),
            "metadata.name",
            "d",
        ),
    ];
    for (g, k, obj, field, want) in cases {
        assert_eq!(
            value(g, k, &obj, field).as_deref(),
            Some(want),
            "{k} {field}"
        );
    }
    assert_eq!(value("", "Secret", &json!({}), "spec.type"), None);
    assert_eq!(value("", "Service", &json!({}), "type"), None);
    assert_eq!(
        value("apps", "Deployment", &json!({}), "status.replicas"),
        None
    );
}

#[test]
fn matches_objects() {
    let pod = json!({"metadata": {"name": "a", "namespace": "x"}, "spec": {"nodeName": "n1"},
                     "status": {"phase": "Running"}});
    assert!(matches(
        "",
        "Pod",
        &sel("spec.nodeName=n1,status.phase!=Pending"),
        &pod
    ));
    assert!(!matches("", "Pod", &sel("spec.nodeName=n2"), &pod));
    assert!(matches("", "Pod", &sel("status.podIPs!=1.2.3.4"), &pod));
    assert!(!matches("", "Pod", &sel("status.podIPs=1.2.3.4"), &pod));
    assert!(matches(
        "",
        "Pod",
        &sel("metadata.name=a,metadata.namespace=x"),
        &pod
    ));
    let cm = json!({"metadata": {"name": "c"}});
    assert!(matches("", "ConfigMap", &sel("metadata.namespace="), &cm));
}
