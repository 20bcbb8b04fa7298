//! The custom resource of `bench api`'s CR cells: a namespaced
//! `BenchWidget` (`bench.skein.io/v1`) whose CRD has ten CEL rules
//! (`x-kubernetes-validations`) and defaults, and 1 KiB objects of it.

use bytes::Bytes;
use serde_json::{Value, json};

/// The CRD's group.
pub const GROUP: &str = "bench.skein.io";
/// The served (and storage) version.
pub const VERSION: &str = "v1";
/// The plural resource name.
pub const PLURAL: &str = "benchwidgets";
/// Size of an object's JSON as sent (padded with `spec.note`).
pub const CR_BYTES: usize = 1024;

/// The ten CEL rules of `spec`, all evaluated on every create.
pub const RULES: [&str; 10] = [
    "self.replicas >= 0",
    "self.minReplicas <= self.maxReplicas",
    "self.replicas <= self.maxReplicas",
    "self.image.size() > 0",
    "!self.image.startsWith('http')",
    "!has(self.ports) || self.ports.all(p, p > 0 && p < 65536)",
    "self.tier in ['web', 'db', 'cache']",
    "!self.paused || self.replicas == 0",
    "!has(self.owner) || self.owner.matches('^[a-z][a-z0-9-]*$')",
    "!has(self.note) || self.note.size() <= 2048",
];

/// The CRD: `spec` with bounded fields, five defaults (`replicas`,
/// `minReplicas`, `maxReplicas`, `tier`, `paused`) and [`RULES`].
pub fn crd() -> Value {
    let rules: Vec<Value> = RULES
        .iter()
        .enumerate()
        .map(|(i, r)| json!({"rule": r, "message": format!("bench rule {i} failed")}))
        .collect();
    json!({
        "apiVersion": "apiextensions.k8s.io/v1",
        "kind": "CustomResourceDefinition",
        "metadata": {"name": format!("{PLURAL}.{GROUP}")},
        "spec": {
            "group": GROUP,
            "scope": "Namespaced",
            "names": {"plural": PLURAL, "singular": "benchwidget", "kind": "BenchWidget",
                      "listKind": "BenchWidgetList"},
            "versions": [{
                "name": VERSION, "served": true, "storage": true,
                "schema": {"openAPIV3Schema": {"type": "object", "properties": {
                    "spec": {
                        "type": "object",
                        "required": ["image"],
                        "x-kubernetes-validations": rules,
                        "properties": {
                            "image": {"type": "string", "maxLength": 256},
                            "replicas": {"type": "integer", "minimum": 0, "maximum": 1000, "default": 1},
                            "minReplicas": {"type": "integer", "default": 1},
                            "maxReplicas": {"type": "integer", "default": 10},
                            "tier": {"type": "string", "enum": ["web", "db", "cache"], "default": "web"},
                            "paused": {"type": "boolean", "default": false},
                            "ports": {"type": "array", "maxItems": 16,
                                      "items": {"type": "integer"}},
                            "owner": {"type": "string", "maxLength": 63},
                            "note": {"type": "string", "maxLength": 2048}
                        }
                    }
                }}}
            }]
        }
    })
}

/// A `BenchWidget` named `name` in `namespace` whose JSON is [`CR_BYTES`]
/// long for a 12-character name; `tier` and `paused` are left to the
/// defaults.
pub fn object(namespace: &str, name: &str) -> Bytes {
    let encode = |note: &str| {
        json!({
            "apiVersion": format!("{GROUP}/{VERSION}"),
            "kind": "BenchWidget",
            "metadata": {"name": name, "namespace": namespace, "labels": {"app": "bench"}},
            "spec": {"image": "registry.example/bench:1.0", "replicas": 3, "minReplicas": 1,
                     "maxReplicas": 5, "ports": [80, 443], "owner": "bench", "note": note},
        })
        .to_string()
    };
    let bare = encode("").len() + name.len().max(12) - name.len();
    Bytes::from(encode(&"n".repeat(CR_BYTES.saturating_sub(bare))))
}

/// The collection path in `namespace`.
pub fn collection(namespace: &str) -> String {
    format!("/apis/{GROUP}/{VERSION}/namespaces/{namespace}/{PLURAL}")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn objects_are_one_kib_and_crd_has_ten_rules() {
        let o = object("ns", "c-0000000001");
        assert_eq!(o.len(), CR_BYTES);
        let v: Value = serde_json::from_slice(&o).unwrap();
        assert_eq!(v["metadata"]["name"], "c-0000000001");
        let crd = crd();
        let rules = &crd["spec"]["versions"][0]["schema"]["openAPIV3Schema"]["properties"]["spec"]
            ["x-kubernetes-validations"];
        assert_eq!(rules.as_array().map(Vec::len), Some(10));
    }
}
