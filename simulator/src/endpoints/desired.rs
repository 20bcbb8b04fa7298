//! What a Service's EndpointSlices and legacy Endpoints should hold, as
//! kube-controller-manager's endpointslice and endpoints controllers
//! compute them. Pure functions over JSON objects.

use std::collections::{BTreeMap, HashMap};

use serde_json::{Map, Value, json};

use skein_apiserver::registry::object;
use skein_workloads::template;

/// The `endpointslice.kubernetes.io/managed-by` value of the slices this
/// controller owns.
pub const MANAGED_BY: &str = "endpointslice-controller.k8s.io";

/// How many endpoints one slice holds at most (kube-controller-manager's
/// `--max-endpoints-per-slice` default).
pub const MAX_ENDPOINTS_PER_SLICE: usize = 100;

/// The label naming a slice's Service.
pub const SERVICE_NAME: &str = "kubernetes.io/service-name";

/// The label naming a slice's manager.
pub const MANAGED_BY_LABEL: &str = "endpointslice.kubernetes.io/managed-by";

/// The label of a headless Service's endpoints.
pub const HEADLESS: &str = "service.kubernetes.io/headless";

/// Endpoints grouped by their port set: ports, then (Pod name, endpoint).
type SliceGroups = BTreeMap<String, (Vec<Value>, Vec<(String, Value)>)>;

/// Addresses grouped by their port set: ports, ready, not ready.
type SubsetGroups = BTreeMap<String, (Vec<Value>, Vec<Value>, Vec<Value>)>;

fn str_at<'a>(v: &'a Value, ptr: &str) -> &'a str {
    v.pointer(ptr).and_then(Value::as_str).unwrap_or_default()
}

/// Whether this controller manages `service`'s endpoints: it has a
/// non-empty selector and is not `ExternalName`.
pub fn is_managed(service: &Value) -> bool {
    str_at(service, "/spec/type") != "ExternalName"
        && service
            .pointer("/spec/selector")
            .and_then(Value::as_object)
            .is_some_and(|s| !s.is_empty())
}

/// Whether `pod`'s labels match `service`'s selector.
pub fn selects(service: &Value, pod: &Value) -> bool {
    let Some(selector) = service.pointer("/spec/selector").and_then(Value::as_object) else {
        return false;
    };
    !selector.is_empty()
        && selector.iter().all(|(k, v)| {
            pod.pointer("/metadata/labels")
                .and_then(|l| l.get(k))
                .is_some_and(|x| Some(x) == Some(v))
        })
}

/// Whether `pod` has an endpoint at all: it has an IP and has not
/// finished.
pub fn has_endpoint(pod: &Value) -> bool {
    !str_at(pod, "/status/podIP").is_empty()
        && !matches!(template::phase(pod), "Succeeded" | "Failed")
}

/// The named container port `name` of `pod`.
fn container_port(pod: &Value, name: &str, protocol: &str) -> Option<i64> {
    pod.pointer("/spec/containers")
        .and_then(Value::as_array)?
        .iter()
        .filter_map(|c| c.get("ports").and_then(Value::as_array))
        .flatten()
        .find(|p| {
            p.get("name").and_then(Value::as_str) == Some(name)
                && p.get("protocol").and_then(Value::as_str).unwrap_or("TCP") == protocol
        })
        .and_then(|p| p.get("containerPort"))
        .and_then(Value::as_i64)
}

/// `service`'s ports as `pod` serves them (targetPort resolved, by name
/// from the containers' ports); a named port the Pod lacks is left out.
pub fn ports(service: &Value, pod: &Value) -> Vec<Value> {
    service
        .pointer("/spec/ports")
        .and_then(Value::as_array)
        .map(|ports| {
            ports
                .iter()
                .filter_map(|p| {
                    let protocol = p.get("protocol").and_then(Value::as_str).unwrap_or("TCP");
                    let number = match p.get("targetPort") {
                        Some(Value::String(name)) => match name.parse::<i64>() {
                            Ok(n) => n,
                            Err(_) => container_port(pod, name, protocol)?,
                        },
                        Some(Value::Number(n)) => n.as_i64()?,
                        _ => p.get("port").and_then(Value::as_i64)?,
                    };
                    let mut out = json!({
                        "name": p.get("name").and_then(Value::as_str).unwrap_or_default(),
                        "port": number,
                        "protocol": protocol,
                    });
                    if let Some(a) = p.get("appProtocol") {
                        out["appProtocol"] = a.clone();
                    }
                    Some(out)
                })
                .collect()
        })
        .unwrap_or_default()
}

/// Whether `service` publishes endpoints of Pods that are not ready.
fn publish_not_ready(service: &Value) -> bool {
    service
        .pointer("/spec/publishNotReadyAddresses")
        .and_then(Value::as_bool)
        == Some(true)
}

fn target_ref(pod: &Value) -> Value {
    json!({
        "kind": "Pod",
        "namespace": object::namespace(pod),
        "name": object::name(pod),
        "uid": object::uid(pod),
    })
}

/// `pod`'s endpoint in a slice of `service`; `zones` maps Node names to
/// their zone.
pub fn endpoint(service: &Value, pod: &Value, zones: &HashMap<String, String>) -> Value {
    let terminating = object::is_deleting(pod);
    let serving = template::is_ready(pod) || publish_not_ready(service);
    let mut e = json!({
        "addresses": [str_at(pod, "/status/podIP")],
        "conditions": {
            "ready": serving && !terminating,
            "serving": serving,
            "terminating": terminating,
        },
        "targetRef": target_ref(pod),
    });
    let node = str_at(pod, "/spec/nodeName");
    if !node.is_empty() {
        e["nodeName"] = json!(node);
        if let Some(z) = zones.get(node) {
            e["zone"] = json!(z);
        }
    }
    e
}

/// The slices `service` should have: per distinct port set of its Pods,
/// its endpoints in Pod name order, [`MAX_ENDPOINTS_PER_SLICE`] a slice; a
/// Service without
/// endpoints gets one empty slice (upstream's placeholder).
pub fn slices(
    service: &Value,
    pods: &[&Value],
    zones: &HashMap<String, String>,
) -> Vec<(Vec<Value>, Vec<Value>)> {
    let mut groups = SliceGroups::new();
    for pod in pods {
        if !selects(service, pod) || !has_endpoint(pod) {
            continue;
        }
        let p = ports(service, pod);
        let entry = groups
            .entry(Value::Array(p.clone()).to_string())
            .or_insert_with(|| (p, Vec::new()));
        entry
            .1
            .push((object::name(pod).to_owned(), endpoint(service, pod, zones)));
    }
    if groups.is_empty() {
        return vec![(Vec::new(), Vec::new())];
    }
    let mut out = Vec::new();
    for (p, mut eps) in groups.into_values() {
        eps.sort_by(|a, b| a.0.cmp(&b.0));
        let eps: Vec<Value> = eps.into_iter().map(|(_, e)| e).collect();
        for chunk in eps.chunks(MAX_ENDPOINTS_PER_SLICE) {
            out.push((p.clone(), chunk.to_vec()));
        }
    }
    out
}

/// The labels of `service`'s endpoints: its own, plus the headless mark.
fn service_labels(service: &Value) -> Map<String, Value> {
    let mut labels = service
        .pointer("/metadata/labels")
        .and_then(Value::as_object)
        .cloned()
        .unwrap_or_default();
    if str_at(service, "/spec/clusterIP") == "None" {
        labels.insert(HEADLESS.into(), json!(""));
    }
    labels
}

/// A slice of `service` holding `ports` and `endpoints`; `existing` gives
/// its name (else it is named from the Service, `generateName`).
pub fn slice(
    service: &Value,
    ports: &[Value],
    endpoints: &[Value],
    existing: Option<&Value>,
) -> Value {
    let name = object::name(service);
    let mut labels = service_labels(service);
    labels.insert(SERVICE_NAME.into(), json!(name));
    labels.insert(MANAGED_BY_LABEL.into(), json!(MANAGED_BY));
    let mut meta = match existing {
        Some(e) => e.get("metadata").cloned().unwrap_or_else(|| json!({})),
        None => json!({"generateName": format!("{name}-")}),
    };
    meta["namespace"] = json!(object::namespace(service));
    meta["labels"] = Value::Object(labels);
    meta["ownerReferences"] = json!([template::controller_ref(service, "v1", "Service")]);
    let mut s = json!({
        "apiVersion": "discovery.k8s.io/v1",
        "kind": "EndpointSlice",
        "metadata": meta,
        "addressType": "IPv4",
        "endpoints": endpoints,
    });
    if !ports.is_empty() {
        s["ports"] = json!(ports);
    }
    s
}

/// Whether two slices hold the same endpoints, ports, labels and owner.
pub fn same_slice(a: &Value, b: &Value) -> bool {
    let parts = |s: &Value| {
        (
            s.get("endpoints").cloned().unwrap_or_else(|| json!([])),
            s.get("ports").cloned().unwrap_or_else(|| json!([])),
            s.pointer("/metadata/labels").cloned(),
            s.pointer("/metadata/ownerReferences").cloned(),
        )
    };
    parts(a) == parts(b)
}

/// The legacy Endpoints object of `service` (upstream's endpoints
/// controller): Pods grouped by port set into subsets, ready addresses
/// and not-ready ones apart, terminating Pods left out (unless the
/// Service publishes not-ready addresses), addresses in IP order.
pub fn legacy(service: &Value, pods: &[&Value], existing: Option<&Value>) -> Value {
    let mut groups = SubsetGroups::new();
    let publish = publish_not_ready(service);
    for pod in pods {
        if !selects(service, pod) || !has_endpoint(pod) {
            continue;
        }
        if object::is_deleting(pod) && !publish {
            continue;
        }
        let p: Vec<Value> = ports(service, pod)
            .into_iter()
            .map(|mut p| {
                if p.get("name").and_then(Value::as_str) == Some("")
                    && let Some(m) = p.as_object_mut()
                {
                    m.remove("name");
                }
                p
            })
            .collect();
        let mut address = json!({"ip": str_at(pod, "/status/podIP"), "targetRef": target_ref(pod)});
        let node = str_at(pod, "/spec/nodeName");
        if !node.is_empty() {
            address["nodeName"] = json!(node);
        }
        let entry = groups
            .entry(Value::Array(p.clone()).to_string())
            .or_insert_with(|| (p, Vec::new(), Vec::new()));
        if template::is_ready(pod) || publish {
            entry.1.push(address);
        } else {
            entry.2.push(address);
        }
    }
    let by_ip = |a: &Value| {
        a.get("ip")
            .and_then(Value::as_str)
            .and_then(|ip| ip.parse::<std::net::Ipv4Addr>().ok())
    };
    let subsets: Vec<Value> = groups
        .into_values()
        .filter(|(p, _, _)| !p.is_empty())
        .map(|(p, mut ready, mut not_ready)| {
            ready.sort_by_key(by_ip);
            not_ready.sort_by_key(by_ip);
            let mut s = json!({"ports": p});
            if !ready.is_empty() {
                s["addresses"] = json!(ready);
            }
            if !not_ready.is_empty() {
                s["notReadyAddresses"] = json!(not_ready);
            }
            s
        })
        .collect();
    let mut meta = match existing {
        Some(e) => e.get("metadata").cloned().unwrap_or_else(|| json!({})),
        None => json!({"name": object::name(service)}),
    };
    meta["namespace"] = json!(object::namespace(service));
    meta["labels"] = Value::Object(service_labels(service));
    let mut e = json!({"apiVersion": "v1", "kind": "Endpoints", "metadata": meta});
    if !subsets.is_empty() {
        e["subsets"] = json!(subsets);
    }
    e
}

/// Whether two Endpoints objects hold the same subsets and labels.
pub fn same_legacy(a: &Value, b: &Value) -> bool {
    let parts = |e: &Value| {
        (
            e.get("subsets")
                .cloned()
                .filter(|s| s.as_array().is_some_and(|a| !a.is_empty())),
            e.pointer("/metadata/labels")
                .cloned()
                .filter(|l| l.as_object().is_some_and(|m| !m.is_empty())),
        )
    };
    parts(a) == parts(b)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn service() -> Value {
        json!({
            "metadata": {"name": "web", "namespace": "ns", "uid": "s1", "labels": {"app": "web"}},
            "spec": {
                "selector": {"app": "web"},
                "clusterIP": "10.96.0.10",
                "ports": [
                    {"name": "http", "port": 80, "targetPort": "http", "protocol": "TCP"},
                    {"name": "metrics", "port": 9090, "targetPort": 9100, "protocol": "TCP"},
                ],
            },
        })
    }

    fn pod(name: &str, ip: &str, ready: bool, http: Option<i64>) -> Value {
        let ports: Vec<Value> = http
            .map(|p| json!({"name": "http", "containerPort": p, "protocol": "TCP"}))
            .into_iter()
            .collect();
        json!({
            "metadata": {"name": name, "namespace": "ns", "uid": format!("u-{name}"), "labels": {"app": "web"}},
            "spec": {"nodeName": "sim-node-0", "containers": [{"name": "c", "ports": ports}]},
            "status": {"phase": "Running", "podIP": ip, "conditions": [
                {"type": "Ready", "status": if ready { "True" } else { "False" }}
            ]},
        })
    }

    #[test]
    fn endpoints_resolve_named_ports_and_carry_conditions() {
        let zones = HashMap::from([("sim-node-0".to_owned(), "a".to_owned())]);
        let (a, b) = (
            pod("b", "10.244.0.3", true, Some(8080)),
            pod("a", "10.244.0.2", false, Some(8080)),
        );
        let out = slices(&service(), &[&a, &b], &zones);
        assert_eq!(out.len(), 1);
        let (ports, eps) = &out[0];
        assert_eq!(
            ports[0],
            json!({"name": "http", "port": 8080, "protocol": "TCP"})
        );
        assert_eq!(ports[1]["port"], 9100);
        assert_eq!(eps[0]["targetRef"]["name"], "a");
        assert_eq!(
            eps[0]["conditions"],
            json!({"ready": false, "serving": false, "terminating": false})
        );
        assert_eq!(eps[1]["conditions"]["ready"], true);
        assert_eq!(eps[1]["zone"], "a");
        let s = slice(&service(), ports, eps, None);
        assert_eq!(s["metadata"]["generateName"], "web-");
        assert_eq!(s["metadata"]["labels"][SERVICE_NAME], "web");
        assert_eq!(s["metadata"]["labels"][MANAGED_BY_LABEL], MANAGED_BY);
        assert_eq!(s["metadata"]["labels"]["app"], "web");
        assert_eq!(s["metadata"]["ownerReferences"][0]["uid"], "s1");
        assert!(same_slice(&s, &slice(&service(), ports, eps, Some(&s))));
    }

    #[test]
    fn different_port_sets_get_their_own_slice_and_none_gets_a_placeholder() {
        let zones = HashMap::new();
        let (a, b) = (
            pod("a", "10.244.0.2", true, Some(8080)),
            pod("b", "10.244.0.3", true, None),
        );
        assert_eq!(slices(&service(), &[&a, &b], &zones).len(), 2);
        let out = slices(&service(), &[], &zones);
        assert_eq!(out, vec![(Vec::new(), Vec::new())]);
        let s = slice(&service(), &[], &[], None);
        assert!(s.get("ports").is_none());
        assert_eq!(s["endpoints"], json!([]));
    }

    #[test]
    fn slices_hold_at_most_a_hundred_endpoints() {
        let pods: Vec<Value> = (0..250)
            .map(|i| {
                pod(
                    &format!("p{i:03}"),
                    &format!("10.244.{}.{}", i / 200, i % 200 + 2),
                    true,
                    Some(80),
                )
            })
            .collect();
        let refs: Vec<&Value> = pods.iter().collect();
        let sizes: Vec<usize> = slices(&service(), &refs, &HashMap::new())
            .iter()
            .map(|(_, e)| e.len())
            .collect();
        assert_eq!(sizes, [100, 100, 50]);
    }

    #[test]
    fn legacy_endpoints_split_ready_and_not_ready() {
        let (a, b, c) = (
            pod("a", "10.244.0.10", true, Some(8080)),
            pod("b", "10.244.0.9", true, Some(8080)),
            pod("c", "10.244.0.2", false, Some(8080)),
        );
        let mut gone = pod("d", "10.244.0.4", true, Some(8080));
        gone["metadata"]["deletionTimestamp"] = json!("2026-01-01T00:00:00Z");
        let e = legacy(&service(), &[&a, &b, &c, &gone], None);
        let subset = &e["subsets"][0];
        assert_eq!(subset["addresses"][0]["ip"], "10.244.0.9");
        assert_eq!(subset["addresses"][1]["ip"], "10.244.0.10");
        assert_eq!(subset["notReadyAddresses"][0]["ip"], "10.244.0.2");
        assert_eq!(subset["addresses"].as_array().map(Vec::len), Some(2));
        assert_eq!(e["metadata"]["name"], "web");
        let empty = legacy(&service(), &[], None);
        assert!(empty.get("subsets").is_none());
    }

    #[test]
    fn only_selector_services_are_managed() {
        assert!(is_managed(&service()));
        assert!(!is_managed(&json!({"spec": {"ports": []}})));
        assert!(!is_managed(
            &json!({"spec": {"type": "ExternalName", "selector": {"a": "b"}}})
        ));
        let other = json!({"metadata": {"labels": {"app": "db"}}});
        assert!(!selects(&service(), &other));
    }
}
