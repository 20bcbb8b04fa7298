//! What `skein join` prints about a Cluster while it waits and once it is
//! Ready: pure text from the Cluster object as the federation's Cluster
//! controllers write its status (the `Ready` condition and the inventory:
//! `kubernetesVersion`, `region`, `zones`, `nodes`, `allocatable`,
//! `available`, `servedResources`).

use serde_json::Value;

/// The Cluster's `Ready` condition as `(status, reason, message)`, `None`
/// while it has none.
pub fn ready(cluster: &Value) -> Option<(&str, &str, &str)> {
    let c = cluster
        .pointer("/status/conditions")?
        .as_array()?
        .iter()
        .find(|c| c.get("type").and_then(Value::as_str) == Some("Ready"))?;
    let field = |k: &str| c.get(k).and_then(Value::as_str).unwrap_or("");
    Some((field("status"), field("reason"), field("message")))
}

/// Whether the Cluster's `Ready` condition is `True`.
pub fn is_ready(cluster: &Value) -> bool {
    ready(cluster).is_some_and(|(s, _, _)| s == "True")
}

/// Whether the Cluster's status carries the inventory (the controller
/// writes the member's version with it).
pub fn has_inventory(cluster: &Value) -> bool {
    cluster
        .pointer("/status/kubernetesVersion")
        .and_then(Value::as_str)
        .is_some_and(|v| !v.is_empty())
}

/// `Unknown: Probing: first probe pending`, or `no Ready condition yet`.
pub fn condition_text(cluster: &Value) -> String {
    match ready(cluster) {
        None => "no Ready condition yet".to_owned(),
        Some((status, reason, message)) => {
            let mut out = status.to_owned();
            for part in [reason, message] {
                if !part.is_empty() {
                    out.push_str(": ");
                    out.push_str(&one_line(part));
                }
            }
            out
        }
    }
}

/// The progress line printed while waiting.
pub fn progress(name: &str, cluster: &Value) -> String {
    if is_ready(cluster) {
        return format!("waiting for cluster {name:?} to report its inventory (Ready)");
    }
    format!(
        "waiting for cluster {name:?} to become Ready ({})",
        condition_text(cluster)
    )
}

/// The one-line error of a join that timed out (`cluster` is the last
/// Cluster read, if any).
pub fn timed_out(name: &str, timeout: std::time::Duration, cluster: Option<&Value>) -> String {
    let last = cluster.map_or_else(|| "never read".to_owned(), condition_text);
    format!(
        "cluster {name:?} did not become Ready within {}s (last condition: {last}); it was left in place: remove it with `skein unjoin {name}`",
        timeout.as_secs()
    )
}

/// The lines printed once the Cluster is Ready.
pub fn summary(name: &str, cluster: &Value) -> String {
    let status = cluster.get("status").unwrap_or(&Value::Null);
    let text = |k: &str| {
        status
            .get(k)
            .and_then(Value::as_str)
            .filter(|s| !s.is_empty())
            .unwrap_or("unknown")
            .to_owned()
    };
    let zones = status
        .get("zones")
        .and_then(Value::as_array)
        .map(|z| {
            z.iter()
                .filter_map(Value::as_str)
                .collect::<Vec<_>>()
                .join(", ")
        })
        .filter(|z| !z.is_empty())
        .unwrap_or_else(|| "none".to_owned());
    let nodes = status
        .get("nodes")
        .and_then(Value::as_i64)
        .map_or_else(|| "unknown".to_owned(), |n| n.to_string());
    let capacity = |k: &str| {
        let q = |r: &str| {
            status
                .pointer(&format!("/{k}/{r}"))
                .map(|v| match v {
                    Value::String(s) => s.clone(),
                    other => other.to_string(),
                })
                .unwrap_or_else(|| "unknown".to_owned())
        };
        format!("cpu {}, memory {}", q("cpu"), q("memory"))
    };
    let served = status
        .get("servedResources")
        .and_then(Value::as_array)
        .map(Vec::as_slice)
        .unwrap_or_default();
    let resources: usize = served
        .iter()
        .map(|gv| {
            gv.get("resources")
                .and_then(Value::as_array)
                .map_or(0, Vec::len)
        })
        .sum();
    [
        format!("cluster {name:?} is Ready"),
        format!("  version:      {}", text("kubernetesVersion")),
        format!("  region:       {}", text("region")),
        format!("  zones:        {zones}"),
        format!("  nodes:        {nodes}"),
        format!("  allocatable:  {}", capacity("allocatable")),
        format!("  available:    {}", capacity("available")),
        format!(
            "  resources:    {resources} in {} groupVersions",
            served.len()
        ),
    ]
    .join("\n")
}

/// `s` with line breaks replaced, so an error stays one line.
pub fn one_line(s: &str) -> String {
    s.split(['\n', '\r'])
        .map(str::trim)
        .filter(|l| !l.is_empty())
        .collect::<Vec<_>>()
        .join(" ")
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn cluster(ready: &str) -> Value {
        json!({"status": {
            "conditions": [{"type": "Other", "status": "True"},
                           {"type": "Ready", "status": ready, "reason": "Unreachable", "message": "dial tcp:\nrefused"}],
            "kubernetesVersion": "v1.33.0", "region": "eu", "zones": ["eu-a", "eu-b"], "nodes": 3,
            "allocatable": {"cpu": "24", "memory": "96Gi"}, "available": {"cpu": "23500m", "memory": "90Gi"},
            "servedResources": [{"groupVersion": "v1", "resources": ["pods", "services"]},
                                {"groupVersion": "apps/v1", "resources": ["deployments"]}],
        }})
    }

    #[test]
    fn conditions() {
        assert!(is_ready(&cluster("True")));
        assert!(!is_ready(&cluster("False")));
        assert!(!is_ready(&json!({})));
        assert_eq!(
            progress("eu-1", &cluster("False")),
            "waiting for cluster \"eu-1\" to become Ready (False: Unreachable: dial tcp: refused)"
        );
        assert_eq!(
            progress("eu-1", &json!({"metadata": {}})),
            "waiting for cluster \"eu-1\" to become Ready (no Ready condition yet)"
        );
        assert_eq!(
            timed_out("eu-1", std::time::Duration::from_secs(5), Some(&json!({}))),
            "cluster \"eu-1\" did not become Ready within 5s (last condition: no Ready condition yet); it was left in place: remove it with `skein unjoin eu-1`"
        );
    }

    #[test]
    fn ready_without_inventory_is_still_waited_for() {
        let c = json!({"status": {"conditions": [{"type": "Ready", "status": "True"}]}});
        assert!(is_ready(&c) && !has_inventory(&c));
        assert!(has_inventory(&cluster("True")));
        assert_eq!(
            progress("eu-1", &c),
            "waiting for cluster \"eu-1\" to report its inventory (Ready)"
        );
    }

    #[test]
    fn summary_lists_the_inventory() {
        assert_eq!(
            summary("eu-1", &cluster("True")),
            "cluster \"eu-1\" is Ready\n  version:      v1.33.0\n  region:       eu\n  zones:        eu-a, eu-b\n  nodes:        3\n  allocatable:  cpu 24, memory 96Gi\n  available:    cpu 23500m, memory 90Gi\n  resources:    3 in 2 groupVersions"
        );
        let bare = summary("x", &json!({}));
        assert!(bare.contains("version:      unknown"), "{bare}");
        assert!(
            bare.contains("resources:    0 in 0 groupVersions"),
            "{bare}"
        );
    }

    proptest::proptest! {
        #[test]
        fn lines_stay_single(msg in "\\PC{0,40}(\n\\PC{0,10}){0,3}") {
            let c = json!({"status": {"conditions": [{"type": "Ready", "status": "False", "message": msg}]}});
            proptest::prop_assert!(!progress("a", &c).contains('\n'));
            proptest::prop_assert!(!timed_out("a", std::time::Duration::from_secs(1), Some(&c)).contains('\n'));
        }
    }
}
