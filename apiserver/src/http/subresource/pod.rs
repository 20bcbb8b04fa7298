//! Pod facts the pod subresources share: container names and choice
//! (upstream `validateContainer`), readiness, conditions, and the node
//! connection of a scheduled pod (upstream `NodeConnectionInfoGetter`).

use serde_json::{Value, json};

use super::super::status::ApiError;
use crate::registry::object::now_rfc3339;

/// The kubelet port when the Node reports none (kube-apiserver's
/// `--kubelet-port` default).
pub const DEFAULT_KUBELET_PORT: i64 = 10250;

/// Address types in kube-apiserver's default `--kubelet-preferred-address-types` order.
const PREFERRED_ADDRESS_TYPES: &[&str] = &[
    "Hostname",
    "InternalDNS",
    "InternalIP",
    "ExternalDNS",
    "ExternalIP",
];

/// Names of the containers of `list` (`containers`, `initContainers`,
/// `ephemeralContainers`) in `pod.spec`.
pub fn names<'a>(pod: &'a Value, list: &str) -> Vec<&'a str> {
    pod.get("spec")
        .and_then(|s| s.get(list))
        .and_then(Value::as_array)
        .map(|a| {
            a.iter()
                .filter_map(|c| c.get("name").and_then(Value::as_str))
                .collect()
        })
        .unwrap_or_default()
}

/// Every container name in upstream's `VisitContainers` order: init,
/// regular, ephemeral.
pub fn all_names(pod: &Value) -> Vec<&str> {
    let mut out = names(pod, "initContainers");
    out.extend(names(pod, "containers"));
    out.extend(names(pod, "ephemeralContainers"));
    out
}

/// Upstream `validateContainer`: the container a log/exec/attach request
/// addresses. Empty means the only container; errors are 400.
pub fn choose_container(pod: &Value, name: &str, wanted: &str) -> Result<String, ApiError> {
    if wanted.is_empty() {
        let regular = names(pod, "containers");
        return match regular.as_slice() {
            [only] => Ok((*only).to_string()),
            [] => Err(ApiError::bad_request(format!(
                "a container name must be specified for pod {name}"
            ))),
            _ => Err(ApiError::bad_request(format!(
                "a container name must be specified for pod {name}, choose one of: [{}]",
                all_names(pod).join(" ")
            ))),
        };
    }
    if all_names(pod).contains(&wanted) {
        Ok(wanted.to_string())
    } else {
        Err(ApiError::bad_request(format!(
            "container {wanted} is not valid for pod {name}"
        )))
    }
}

/// `spec.nodeName` ("" when unscheduled).
pub fn node_name(pod: &Value) -> &str {
    pod.pointer("/spec/nodeName")
        .and_then(Value::as_str)
        .unwrap_or("")
}

/// `status.phase` ("" when unset).
pub fn phase(pod: &Value) -> &str {
    pod.pointer("/status/phase")
        .and_then(Value::as_str)
        .unwrap_or("")
}

/// Upstream `podutil.IsPodReady`: the `Ready` condition is `True`.
pub fn is_ready(pod: &Value) -> bool {
    pod.pointer("/status/conditions")
        .and_then(Value::as_array)
        .is_some_and(|cs| {
            cs.iter().any(|c| {
                c.get("type") == Some(&json!("Ready")) && c.get("status") == Some(&json!("True"))
            })
        })
}

/// Upstream `podutil.UpdatePodCondition`: sets condition `kind` of
/// `status.conditions`, keeping the old transition time when the status did
/// not change.
pub fn set_condition(pod: &mut Value, kind: &str, status: &str, reason: &str, message: &str) {
    let mut condition = json!({"type": kind, "status": status, "lastProbeTime": null,
        "lastTransitionTime": now_rfc3339()});
    if !reason.is_empty() {
        condition["reason"] = json!(reason);
    }
    if !message.is_empty() {
        condition["message"] = json!(message);
    }
    let Some(obj) = pod.as_object_mut() else {
        return;
    };
    let status_obj = obj.entry("status").or_insert_with(|| json!({}));
    if !status_obj.is_object() {
        *status_obj = json!({});
    }
    let Some(status_map) = status_obj.as_object_mut() else {
        return;
    };
    let conditions = status_map.entry("conditions").or_insert_with(|| json!([]));
    if !conditions.is_array() {
        *conditions = json!([]);
    }
    let Some(list) = conditions.as_array_mut() else {
        return;
    };
    match list
        .iter_mut()
        .find(|c| c.get("type") == Some(&json!(kind)))
    {
        Some(old) => {
            if old.get("status") == Some(&json!(status))
                && let Some(t) = old.get("lastTransitionTime")
            {
                condition["lastTransitionTime"] = t.clone();
            }
            *old = condition;
        }
        None => list.push(condition),
    }
}

/// Where kube-apiserver would reach a node's kubelet: the preferred
/// address and the reported (or default) port.
#[derive(Debug, PartialEq, Eq)]
pub struct KubeletAddress {
    /// Host (an address of the Node).
    pub host: String,
    /// Port.
    pub port: i64,
}

impl KubeletAddress {
    /// `host:port` as Go's `net.JoinHostPort` writes it.
    pub fn host_port(&self) -> String {
        if self.host.contains(':') {
            format!("[{}]:{}", self.host, self.port)
        } else {
            format!("{}:{}", self.host, self.port)
        }
    }
}

/// Upstream `NodeConnectionInfoGetter.GetConnectionInfo` on a stored Node:
/// the first address of a preferred type, else upstream's 500
/// `no preferred addresses found; known addresses: [...]`.
pub fn kubelet_address(node: &Value) -> Result<KubeletAddress, ApiError> {
    let addresses: Vec<(&str, &str)> = node
        .pointer("/status/addresses")
        .and_then(Value::as_array)
        .map(|a| {
            a.iter()
                .map(|x| {
                    (
                        x.get("type").and_then(Value::as_str).unwrap_or(""),
                        x.get("address").and_then(Value::as_str).unwrap_or(""),
                    )
                })
                .collect()
        })
        .unwrap_or_default();
    let host = PREFERRED_ADDRESS_TYPES
        .iter()
        .find_map(|t| addresses.iter().find(|(kind, _)| kind == t))
        .map(|(_, a)| (*a).to_string());
    let Some(host) = host else {
        let known: Vec<String> = addresses
            .iter()
            .map(|(t, a)| format!("{{{t} {a}}}"))
            .collect();
        return Err(ApiError::new(
            axum::http::StatusCode::INTERNAL_SERVER_ERROR,
            "",
            format!(
                "no preferred addresses found; known addresses: [{}]",
                known.join(" ")
            ),
        ));
    };
    let port = node
        .pointer("/status/daemonEndpoints/kubeletEndpoint/Port")
        .and_then(Value::as_i64)
        .filter(|p| *p > 0)
        .unwrap_or(DEFAULT_KUBELET_PORT);
    Ok(KubeletAddress { host, port })
}

/// Upstream `utilnet.SplitSchemeNamePort`: `name`, `name:port` or
/// `scheme:name:port` with scheme `http`, `https` or empty.
pub fn split_scheme_name_port(id: &str) -> Option<(&str, &str, &str)> {
    let parts: Vec<&str> = id.split(':').collect();
    let (scheme, name, port) = match parts.as_slice() {
        [name] => ("", *name, ""),
        [name, port] => ("", *name, *port),
        [scheme, name, port] => (*scheme, *name, *port),
        _ => return None,
    };
    (!name.is_empty() && matches!(scheme, "" | "http" | "https")).then_some((scheme, name, port))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pod(spec: Value) -> Value {
        json!({"metadata": {"name": "p1"}, "spec": spec})
    }

    #[test]
    fn container_choice_follows_validate_container() {
        let one = pod(json!({"containers": [{"name": "app"}]}));
        assert_eq!(choose_container(&one, "p1", "").unwrap(), "app");
        let two = pod(json!({"initContainers": [{"name": "init"}],
            "containers": [{"name": "a"}, {"name": "b"}]}));
        assert_eq!(
            choose_container(&two, "p1", "").unwrap_err().message(),
            "a container name must be specified for pod p1, choose one of: [init a b]"
        );
        assert_eq!(choose_container(&two, "p1", "init").unwrap(), "init");
        let e = choose_container(&two, "p1", "c").unwrap_err();
        assert_eq!(e.message(), "container c is not valid for pod p1");
        assert_eq!(e.reason(), "BadRequest");
        let none = pod(json!({}));
        assert_eq!(
            choose_container(&none, "p1", "").unwrap_err().message(),
            "a container name must be specified for pod p1"
        );
    }

    #[test]
    fn kubelet_address_prefers_hostname_then_internal_ip() {
        let node = json!({"status": {"addresses": [
            {"type": "InternalIP", "address": "10.0.0.5"},
            {"type": "Hostname", "address": "n1"}],
            "daemonEndpoints": {"kubeletEndpoint": {"Port": 10251}}}});
        assert_eq!(
            kubelet_address(&node).unwrap(),
            KubeletAddress {
                host: "n1".into(),
                port: 10251
            }
        );
        let bare = json!({"status": {"addresses": [{"type": "Weird", "address": "x"}]}});
        let e = kubelet_address(&bare).unwrap_err();
        assert_eq!(e.code().as_u16(), 500);
        assert_eq!(
            e.message(),
            "no preferred addresses found; known addresses: [{Weird x}]"
        );
        let ip = json!({"status": {"addresses": [{"type": "InternalIP", "address": "fd00::1"}]}});
        assert_eq!(kubelet_address(&ip).unwrap().host_port(), "[fd00::1]:10250");
    }

    #[test]
    fn scheme_name_port() {
        assert_eq!(split_scheme_name_port("web"), Some(("", "web", "")));
        assert_eq!(split_scheme_name_port("web:80"), Some(("", "web", "80")));
        assert_eq!(
            split_scheme_name_port("https:web:443"),
            Some(("https", "web", "443"))
        );
        assert_eq!(split_scheme_name_port("ftp:web:21"), None);
        assert_eq!(split_scheme_name_port(":80"), None);
        assert_eq!(split_scheme_name_port("a:b:c:d"), None);
    }

    #[test]
    fn conditions_keep_transition_time_when_status_is_unchanged() {
        let mut p = json!({"status": {"conditions": [{"type": "PodScheduled", "status": "True",
            "lastTransitionTime": "2020-01-01T00:00:00Z"}]}});
        set_condition(&mut p, "PodScheduled", "True", "", "");
        assert_eq!(
            p["status"]["conditions"][0]["lastTransitionTime"],
            "2020-01-01T00:00:00Z"
        );
        set_condition(
            &mut p,
            "DisruptionTarget",
            "True",
            "EvictionByEvictionAPI",
            "Eviction API: evicting",
        );
        assert_eq!(
            p["status"]["conditions"][1]["reason"],
            "EvictionByEvictionAPI"
        );
        assert!(!is_ready(&p));
    }
}
