use serde_json::json;

use super::*;
use crate::allocator::{InMemoryAllocator, release, rollback};
use crate::defaults::Defaults;
use crate::{GroupVersionKind, GroupVersionResource};

fn setup() -> (Arc<InMemoryAllocator>, crate::Chain) {
    let alloc = Arc::new(
        InMemoryAllocator::new("10.96.0.0/12", 30000..=32767)
            .unwrap()
            .with_seed(42),
    );
    let chain = crate::Chain::new()
        .with_mutator(Arc::new(Defaults))
        .with_mutator(Arc::new(ServiceAllocation::new(alloc.clone())));
    (alloc, chain)
}

fn attrs(op: Operation, obj: Value, old: Option<Value>) -> Attributes {
    let mut a = Attributes::new(
        op,
        GroupVersionResource::new("", "v1", "services"),
        GroupVersionKind::new("", "v1", "Service"),
        "web",
    );
    a.namespace = Some("default".into());
    a.object = Some(obj);
    a.old_object = old;
    a
}

fn admit(chain: &crate::Chain, a: &mut Attributes) -> Result<Value, Denial> {
    chain.admit(a)?;
    Ok(a.object.clone().unwrap())
}

#[test]
fn cluster_ip_service_gets_ip_and_families() {
    let (alloc, chain) = setup();
    let mut a = attrs(
        Operation::Create,
        json!({"metadata": {"name": "web"}, "spec": {"ports": [{"port": 80}], "selector": {"app": "web"}}}),
        None,
    );
    let got = admit(&chain, &mut a).unwrap();
    let spec = &got["spec"];
    let ip = spec["clusterIP"].as_str().unwrap();
    assert!(ip.starts_with("10."), "{ip}");
    assert_eq!(spec["clusterIPs"], json!([ip]));
    assert_eq!(spec["ipFamilies"], json!(["IPv4"]));
    assert_eq!(spec["ipFamilyPolicy"], "SingleStack");
    assert_eq!(spec["ports"][0].get("nodePort"), None);
    assert_eq!(alloc.used(), (1, 0));
    // The same IP asked for by another Service: upstream's message.
    let mut b = attrs(
        Operation::Create,
        json!({"metadata": {"name": "other"}, "spec": {"clusterIP": ip, "ports": [{"port": 80}]}}),
        None,
    );
    let err = admit(&chain, &mut b).unwrap_err();
    assert_eq!(
        err.to_string(),
        format!(
            r#"Service "other" is invalid: spec.clusterIPs: Invalid value: []string{{"{ip}"}}: failed to allocate IP {ip}: provided IP is already allocated"#
        )
    );
    // Out of range and garbage.
    let mut c = attrs(
        Operation::Create,
        json!({"metadata": {"name": "c"}, "spec": {"clusterIP": "192.168.0.1", "ports": [{"port": 80}]}}),
        None,
    );
    assert_eq!(
        admit(&chain, &mut c).unwrap_err().to_string(),
        r#"Service "c" is invalid: spec.clusterIPs: Invalid value: []string{"192.168.0.1"}: failed to allocate IP 192.168.0.1: the provided IP (192.168.0.1) is not in the valid range. The range of valid IPs is 10.96.0.0/12"#
    );
    let mut d = attrs(
        Operation::Create,
        json!({"metadata": {"name": "d"}, "spec": {"clusterIP": "x", "ports": [{"port": 80}]}}),
        None,
    );
    assert_eq!(
        admit(&chain, &mut d).unwrap_err().to_string(),
        r#"Service "d" is invalid: spec.clusterIPs[0]: Invalid value: "x": must be a valid IP address, (e.g. 10.9.8.7 or 2001:db8::ffff)"#
    );
    assert_eq!(alloc.used(), (1, 0));
}

#[test]
fn the_kubernetes_service_can_have_the_first_ip() {
    let (_, chain) = setup();
    let mut a = attrs(
        Operation::Create,
        json!({"metadata": {"name": "kubernetes"}, "spec": {"clusterIP": "10.96.0.1", "ports": [{"name": "https", "port": 443, "targetPort": 6443}]}}),
        None,
    );
    let got = admit(&chain, &mut a).unwrap();
    assert_eq!(got["spec"]["clusterIPs"], json!(["10.96.0.1"]));
}

#[test]
fn headless_and_external_name() {
    let (alloc, chain) = setup();
    let mut a = attrs(
        Operation::Create,
        json!({"spec": {"clusterIP": "None", "selector": {"app": "db"}, "ports": [{"port": 5432}]}}),
        None,
    );
    let got = admit(&chain, &mut a).unwrap();
    assert_eq!(got["spec"]["clusterIPs"], json!(["None"]));
    assert_eq!(got["spec"]["ipFamilyPolicy"], "SingleStack");
    let mut b = attrs(
        Operation::Create,
        json!({"spec": {"clusterIP": "None"}}),
        None,
    );
    assert_eq!(
        admit(&chain, &mut b).unwrap()["spec"]["ipFamilyPolicy"],
        "RequireDualStack"
    );
    let mut c = attrs(
        Operation::Create,
        json!({"spec": {"type": "ExternalName", "externalName": "example.com"}}),
        None,
    );
    let got = admit(&chain, &mut c).unwrap();
    assert_eq!(got["spec"].get("clusterIP"), None);
    assert_eq!(got["spec"].get("ipFamilies"), None);
    assert_eq!(alloc.used(), (0, 0));
}

#[test]
fn node_ports_and_health_check() {
    let (alloc, chain) = setup();
    let mut a = attrs(
        Operation::Create,
        json!({"spec": {"type": "NodePort", "ports": [{"name": "a", "port": 80}, {"name": "b", "port": 81, "nodePort": 30080}]}}),
        None,
    );
    let got = admit(&chain, &mut a).unwrap();
    let p0 = got["spec"]["ports"][0]["nodePort"].as_u64().unwrap();
    assert!((30000..=32767).contains(&p0));
    assert_eq!(got["spec"]["ports"][1]["nodePort"], 30080);
    assert_eq!(got["spec"]["externalTrafficPolicy"], "Cluster");
    assert_eq!(alloc.used(), (1, 2));
    let mut b = attrs(
        Operation::Create,
        json!({"metadata": {"name": "b"}, "spec": {"type": "NodePort", "ports": [{"port": 80, "nodePort": 30080}]}}),
        None,
    );
    assert_eq!(
        admit(&chain, &mut b).unwrap_err().to_string(),
        r#"Service "b" is invalid: spec.ports[0].nodePort: Invalid value: 30080: provided port is already allocated"#
    );
    // The failed request gave back its cluster IP.
    assert_eq!(alloc.used(), (1, 2));
    let mut lb = attrs(
        Operation::Create,
        json!({"spec": {"type": "LoadBalancer", "externalTrafficPolicy": "Local", "ports": [{"port": 443}]}}),
        None,
    );
    let got = admit(&chain, &mut lb).unwrap();
    assert!(got["spec"]["healthCheckNodePort"].as_u64().is_some());
    assert!(got["spec"]["ports"][0]["nodePort"].as_u64().is_some());
    assert_eq!(alloc.used(), (2, 4));
    let mut no_np = attrs(
        Operation::Create,
        json!({"spec": {"type": "LoadBalancer", "allocateLoadBalancerNodePorts": false, "ports": [{"port": 443}]}}),
        None,
    );
    assert_eq!(
        admit(&chain, &mut no_np).unwrap()["spec"]["ports"][0].get("nodePort"),
        None
    );
}

#[test]
fn dry_run_takes_nothing() {
    let (alloc, chain) = setup();
    let mut a = attrs(
        Operation::Create,
        json!({"spec": {"type": "NodePort", "ports": [{"port": 80}, {"port": 81}]}}),
        None,
    );
    a.dry_run = true;
    let got = admit(&chain, &mut a).unwrap();
    assert!(got["spec"]["clusterIP"].is_string());
    assert_ne!(
        got["spec"]["ports"][0]["nodePort"],
        got["spec"]["ports"][1]["nodePort"]
    );
    assert_eq!(alloc.used(), (0, 0));
}

#[test]
fn update_carries_allocated_values_over() {
    let (alloc, chain) = setup();
    let mut a = attrs(
        Operation::Create,
        json!({"spec": {"type": "NodePort", "ports": [{"name": "http", "port": 80}]}}),
        None,
    );
    let stored = admit(&chain, &mut a).unwrap();
    // kubectl replace with the original manifest: no clusterIP, no nodePort.
    let mut u = attrs(
        Operation::Update,
        json!({"spec": {"type": "NodePort", "ports": [{"name": "http", "port": 80}]}}),
        Some(stored.clone()),
    );
    let updated = admit(&chain, &mut u).unwrap();
    assert_eq!(updated["spec"]["clusterIP"], stored["spec"]["clusterIP"]);
    assert_eq!(updated["spec"]["clusterIPs"], stored["spec"]["clusterIPs"]);
    assert_eq!(
        updated["spec"]["ports"][0]["nodePort"],
        stored["spec"]["ports"][0]["nodePort"]
    );
    assert_eq!(updated["spec"]["ipFamilies"], json!(["IPv4"]));
    assert_eq!(alloc.used(), (1, 1));
    // Switch to ClusterIP: nodePort not carried; after commit the port is released.
    let mut c = attrs(
        Operation::Update,
        json!({"spec": {"type": "ClusterIP", "ports": [{"name": "http", "port": 80}]}}),
        Some(stored.clone()),
    );
    let cip = admit(&chain, &mut c).unwrap();
    assert_eq!(cip["spec"]["ports"][0].get("nodePort"), None);
    release(alloc.as_ref(), &stored, Some(&cip));
    assert_eq!(alloc.used(), (1, 0));
    // Delete releases the rest.
    release(alloc.as_ref(), &cip, None);
    assert_eq!(alloc.used(), (0, 0));
}

#[test]
fn rollback_after_a_failed_write() {
    let (alloc, chain) = setup();
    let mut a = attrs(
        Operation::Create,
        json!({"spec": {"type": "NodePort", "ports": [{"port": 80}]}}),
        None,
    );
    let new = admit(&chain, &mut a).unwrap();
    assert_eq!(alloc.used(), (1, 1));
    rollback(alloc.as_ref(), None, &new);
    assert_eq!(alloc.used(), (0, 0));
}

#[test]
fn changed_cluster_ip_is_left_for_validation() {
    let (_, chain) = setup();
    let mut a = attrs(
        Operation::Create,
        json!({"spec": {"ports": [{"port": 80}]}}),
        None,
    );
    let stored = admit(&chain, &mut a).unwrap();
    let mut u = attrs(
        Operation::Update,
        json!({"spec": {"clusterIP": "10.96.5.5", "ports": [{"port": 80}]}}),
        Some(stored),
    );
    let got = admit(&chain, &mut u).unwrap();
    // clusterIPs follows the singular field, so validation reports the change.
    assert_eq!(got["spec"]["clusterIPs"], json!(["10.96.5.5"]));
}

#[test]
fn other_kinds_are_untouched() {
    let (alloc, chain) = setup();
    let mut a = attrs(Operation::Create, json!({"spec": {}}), None);
    a.gvk = GroupVersionKind::new("", "v1", "Endpoints");
    chain.admit(&mut a).unwrap();
    assert_eq!(alloc.used(), (0, 0));
}

#[test]
fn a_type_change_drops_what_the_new_type_does_not_use() {
    let (allocator, chain) = setup();
    let lb = json!({"apiVersion": "v1", "kind": "Service", "metadata": {"name": "s", "namespace": "d"},
        "spec": {"type": "LoadBalancer", "externalTrafficPolicy": "Local", "loadBalancerClass": "x",
                 "allocateLoadBalancerNodePorts": true,
                 "ports": [{"port": 80, "protocol": "TCP"}]}});
    let mut a = attrs(Operation::Create, lb, None);
    let stored = admit(&chain, &mut a).expect("create");
    let port = stored["spec"]["ports"][0]["nodePort"]
        .as_u64()
        .expect("a node port");
    assert!(stored["spec"]["healthCheckNodePort"].as_u64().is_some());

    // `kubectl patch -p '{"spec":{"type":"ClusterIP"}}'`: everything else as stored.
    let mut changed = stored.clone();
    changed["spec"]["type"] = json!("ClusterIP");
    let mut a = attrs(Operation::Update, changed, Some(stored.clone()));
    let got = admit(&chain, &mut a).expect("update");
    assert_eq!(got["spec"]["ports"][0].get("nodePort"), None, "{got}");
    for key in [
        "healthCheckNodePort",
        "loadBalancerClass",
        "allocateLoadBalancerNodePorts",
    ] {
        assert_eq!(got["spec"].get(key), None, "{key}: {got}");
    }
    assert_eq!(
        got["spec"]["clusterIP"], stored["spec"]["clusterIP"],
        "the cluster IP stays"
    );

    // A node port the client set anew is left for validation to refuse.
    let mut changed = stored.clone();
    changed["spec"]["type"] = json!("ClusterIP");
    changed["spec"]["ports"][0]["nodePort"] = json!(port + 1);
    let mut a = attrs(Operation::Update, changed, Some(stored.clone()));
    let got = admit(&chain, &mut a).expect("update");
    assert_eq!(got["spec"]["ports"][0]["nodePort"], json!(port + 1));

    // To ExternalName: the unchanged cluster IP and families go too.
    let mut changed = stored.clone();
    changed["spec"]["type"] = json!("ExternalName");
    changed["spec"]["externalName"] = json!("example.com");
    let mut a = attrs(Operation::Update, changed, Some(stored));
    let got = admit(&chain, &mut a).expect("update");
    for key in ["clusterIP", "clusterIPs", "ipFamilies", "ipFamilyPolicy"] {
        assert_eq!(got["spec"].get(key), None, "{key}: {got}");
    }
    assert_eq!(got["spec"]["ports"][0].get("nodePort"), None, "{got}");
    drop(allocator);
}
