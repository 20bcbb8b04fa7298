//! A Deployment's ReplicaSets as revisions, as upstream's
//! `util/deployment_util.go` and `util/hash.go`: the `pod-template-hash`
//! (FNV-32a over the template and the collision count, in the safe
//! alphabet), which ReplicaSet is the new one (template equal ignoring the
//! hash), the annotations a ReplicaSet carries (revision,
//! revision-history, desired/max replicas, and the Deployment's own), and
//! the new ReplicaSet itself.
//!
//! Pure functions over JSON objects.

use serde_json::{Map, Value, json};

use super::plan::{DESIRED_REPLICAS, MAX_REPLICAS, POD_TEMPLATE_HASH, REVISION, REVISION_HISTORY};
use crate::template;

/// The longest revision-history annotation upstream keeps, in characters.
pub const MAX_REVISION_HISTORY_CHARS: usize = 2000;

/// kubectl's `last-applied-configuration` annotation.
const LAST_APPLIED: &str = "kubectl.kubernetes.io/last-applied-configuration";
/// The extensions/v1beta1 rollback annotation.
const ROLLBACK_TO: &str = "deprecated.deployment.rollback.to";

/// Deployment annotations never copied onto its ReplicaSets (upstream's
/// `annotationsToSkip`).
pub fn skip_copy(key: &str) -> bool {
    matches!(
        key,
        LAST_APPLIED | REVISION | REVISION_HISTORY | DESIRED_REPLICAS | MAX_REPLICAS | ROLLBACK_TO
    )
}

/// The characters of `k8s.io/apimachinery/pkg/util/rand`'s safe alphabet.
const SAFE: &[u8] = b"bcdfghjklmnpqrstvwxz2456789";

/// FNV-32a of `bytes`, continuing from `hash`.
fn fnv32a(mut hash: u32, bytes: &[u8]) -> u32 {
    for b in bytes {
        hash ^= u32::from(*b);
        hash = hash.wrapping_mul(0x0100_0193);
    }
    hash
}

const FNV_OFFSET: u32 = 0x811c_9dc5;

/// Upstream's `ComputeHash`: FNV-32a over the template (here its canonical
/// JSON: sorted keys, Go zero values dropped) and, when set, the collision
/// count as four little-endian bytes; the decimal digits of the sum mapped
/// through the safe alphabet (`SafeEncodeString`).
pub fn compute_hash(template: &Value, collision_count: Option<i32>) -> String {
    let mut text = String::new();
    canonical(&strip_zero(template).unwrap_or(Value::Null), &mut text);
    let mut hash = fnv32a(FNV_OFFSET, text.as_bytes());
    if let Some(c) = collision_count {
        hash = fnv32a(hash, &c.to_le_bytes());
    }
    hash.to_string()
        .bytes()
        .map(|b| char::from(SAFE[usize::from(b) % SAFE.len()]))
        .collect()
}

fn canonical(v: &Value, out: &mut String) {
    match v {
        Value::Object(m) => {
            let mut keys: Vec<&String> = m.keys().collect();
            keys.sort();
            out.push('{');
            for (i, k) in keys.into_iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                out.push_str(&Value::String(k.clone()).to_string());
                out.push(':');
                if let Some(v) = m.get(k) {
                    canonical(v, out);
                }
            }
            out.push('}');
        }
        Value::Array(a) => {
            out.push('[');
            for (i, v) in a.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                canonical(v, out);
            }
            out.push(']');
        }
        other => out.push_str(&other.to_string()),
    }
}

/// `v` without Go zero values (null, "", 0, false, empty lists and maps),
/// recursively; `None` when `v` itself is zero. Go compares structs this
/// way: an absent field and its zero value are the same.
pub fn strip_zero(v: &Value) -> Option<Value> {
    match v {
        Value::Null => None,
        Value::Bool(b) => b.then_some(Value::Bool(true)),
        Value::Number(n) => (n.as_f64() != Some(0.0)).then(|| v.clone()),
        Value::String(s) => (!s.is_empty()).then(|| v.clone()),
        Value::Array(a) => {
            // List items keep their place: a zero item stays as null.
            (!a.is_empty()).then(|| {
                Value::Array(
                    a.iter()
                        .map(|i| strip_zero(i).unwrap_or(Value::Null))
                        .collect(),
                )
            })
        }
        Value::Object(m) => {
            let kept: Map<String, Value> = m
                .iter()
                .filter_map(|(k, v)| strip_zero(v).map(|v| (k.clone(), v)))
                .collect();
            (!kept.is_empty()).then_some(Value::Object(kept))
        }
    }
}

/// Upstream's `EqualIgnoreHash`: two Pod templates are the same revision
/// when equal without their `pod-template-hash` labels.
pub fn equal_ignore_hash(a: &Value, b: &Value) -> bool {
    let clean = |t: &Value| {
        let mut t = t.clone();
        if let Some(labels) = t
            .pointer_mut("/metadata/labels")
            .and_then(Value::as_object_mut)
        {
            labels.remove(POD_TEMPLATE_HASH);
        }
        strip_zero(&t)
    };
    clean(a) == clean(b)
}

/// The ReplicaSet (among `rss`, oldest first) whose template is the
/// Deployment's: upstream's `FindNewReplicaSet`.
pub fn find_new<'a>(d_template: &Value, rss: &[&'a Value]) -> Option<&'a Value> {
    let mut sorted: Vec<&Value> = rss.to_vec();
    sorted.sort_by(|a, b| {
        created(a)
            .cmp(created(b))
            .then_with(|| name(a).cmp(name(b)))
    });
    sorted.into_iter().find(|rs| {
        equal_ignore_hash(
            rs.pointer("/spec/template").unwrap_or(&Value::Null),
            d_template,
        )
    })
}

fn created(v: &Value) -> &str {
    v.pointer("/metadata/creationTimestamp")
        .and_then(Value::as_str)
        .unwrap_or_default()
}

fn name(v: &Value) -> &str {
    v.pointer("/metadata/name")
        .and_then(Value::as_str)
        .unwrap_or_default()
}

/// Upstream's `SetNewReplicaSetAnnotations` on a ReplicaSet's annotations:
/// the Deployment's annotations copied (but [`skip_copy`]), the revision
/// raised to `new_revision` (the old one appended to the revision
/// history, capped at [`MAX_REVISION_HISTORY_CHARS`]), and for a new
/// ReplicaSet (`!exists`) the desired/max replicas. Returns whether
/// anything changed.
pub fn set_new_rs_annotations(
    d_annotations: &Map<String, Value>,
    rs_annotations: &mut Map<String, Value>,
    new_revision: i64,
    exists: bool,
    desired: i32,
    max: i32,
) -> bool {
    let mut changed = copy_annotations(d_annotations, rs_annotations);
    let old_text = rs_annotations
        .get(REVISION)
        .and_then(Value::as_str)
        .unwrap_or_default()
        .to_owned();
    let old = if old_text.is_empty() {
        0
    } else {
        match old_text.parse::<i64>() {
            Ok(n) => n,
            Err(_) => return false,
        }
    };
    if old < new_revision {
        rs_annotations.insert(REVISION.into(), json!(new_revision.to_string()));
        changed = true;
    }
    if !old_text.is_empty() && old < new_revision {
        let history = rs_annotations
            .get(REVISION_HISTORY)
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_owned();
        if history.is_empty() {
            rs_annotations.insert(REVISION_HISTORY.into(), json!(old_text));
        } else {
            let olds: Vec<&str> = history.split(',').collect();
            let mut total = history.len() + old_text.len() + 1;
            let mut start = 0;
            while total > MAX_REVISION_HISTORY_CHARS && start < olds.len() {
                total = total.saturating_sub(olds.get(start).map_or(0, |s| s.len()) + 1);
                start += 1;
            }
            if total <= MAX_REVISION_HISTORY_CHARS {
                let mut kept: Vec<&str> = olds.get(start..).unwrap_or_default().to_vec();
                kept.push(&old_text);
                rs_annotations.insert(REVISION_HISTORY.into(), json!(kept.join(",")));
            }
        }
    }
    if !exists && set_replicas_annotations(rs_annotations, desired, max) {
        changed = true;
    }
    changed
}

/// Upstream's `copyDeploymentAnnotationsToReplicaSet`.
pub fn copy_annotations(d: &Map<String, Value>, rs: &mut Map<String, Value>) -> bool {
    let mut changed = false;
    for (k, v) in d {
        if skip_copy(k) || rs.get(k) == Some(v) {
            continue;
        }
        rs.insert(k.clone(), v.clone());
        changed = true;
    }
    changed
}

/// Upstream's `SetReplicasAnnotations`: whether either changed.
pub fn set_replicas_annotations(rs: &mut Map<String, Value>, desired: i32, max: i32) -> bool {
    let mut changed = false;
    for (k, v) in [(DESIRED_REPLICAS, desired), (MAX_REPLICAS, max)] {
        let v = json!(v.to_string());
        if rs.get(k) != Some(&v) {
            rs.insert(k.into(), v);
            changed = true;
        }
    }
    changed
}

/// The new ReplicaSet `<deploy>-<hash>` of Deployment `d` (upstream's
/// `getNewReplicaSet`): its template and selector get the
/// `pod-template-hash` label, it is controlled by `d`, and starts at
/// `replicas` with `annotations`.
pub fn new_replica_set(
    d: &Value,
    hash: &str,
    replicas: i32,
    annotations: Map<String, Value>,
) -> Value {
    let mut template = d
        .pointer("/spec/template")
        .cloned()
        .unwrap_or_else(|| json!({}));
    add_label(&mut template, hash);
    let mut selector = d
        .pointer("/spec/selector")
        .cloned()
        .unwrap_or_else(|| json!({}));
    if let Some(sel) = selector.as_object_mut() {
        let labels = sel.entry("matchLabels").or_insert_with(|| json!({}));
        if let Some(labels) = labels.as_object_mut() {
            labels.insert(POD_TEMPLATE_HASH.into(), json!(hash));
        }
    }
    let d_name = name(d);
    let namespace = d
        .pointer("/metadata/namespace")
        .and_then(Value::as_str)
        .unwrap_or_default();
    let mut meta = Map::new();
    meta.insert("name".into(), json!(format!("{d_name}-{hash}")));
    meta.insert("namespace".into(), json!(namespace));
    if let Some(labels) = template.pointer("/metadata/labels") {
        meta.insert("labels".into(), labels.clone());
    }
    if !annotations.is_empty() {
        meta.insert("annotations".into(), Value::Object(annotations));
    }
    meta.insert(
        "ownerReferences".into(),
        json!([template::controller_ref(d, "apps/v1", "Deployment")]),
    );
    let mut spec = Map::new();
    spec.insert("replicas".into(), json!(replicas));
    if let Some(m) = d.pointer("/spec/minReadySeconds") {
        spec.insert("minReadySeconds".into(), m.clone());
    }
    spec.insert("selector".into(), selector);
    spec.insert("template".into(), template);
    json!({
        "apiVersion": "apps/v1",
        "kind": "ReplicaSet",
        "metadata": meta,
        "spec": spec,
    })
}

fn add_label(template: &mut Value, hash: &str) {
    let Some(t) = template.as_object_mut() else {
        return;
    };
    let meta = t.entry("metadata").or_insert_with(|| json!({}));
    if let Some(meta) = meta.as_object_mut() {
        let labels = meta.entry("labels").or_insert_with(|| json!({}));
        if let Some(labels) = labels.as_object_mut() {
            labels.insert(POD_TEMPLATE_HASH.into(), json!(hash));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tmpl(image: &str) -> Value {
        json!({"metadata": {"labels": {"app": "web"}},
               "spec": {"containers": [{"name": "c", "image": image}]}})
    }

    #[test]
    fn hashes_are_stable_safe_and_depend_on_template_and_collisions() {
        let a = compute_hash(&tmpl("nginx"), None);
        assert_eq!(a, compute_hash(&tmpl("nginx"), None));
        assert!(!a.is_empty() && a.len() <= 10);
        assert!(a.bytes().all(|b| b"45679bcdf8".contains(&b)), "{a}");
        assert_ne!(a, compute_hash(&tmpl("nginx:2"), None));
        assert_ne!(a, compute_hash(&tmpl("nginx"), Some(1)));
        assert_ne!(
            compute_hash(&tmpl("nginx"), Some(1)),
            compute_hash(&tmpl("nginx"), Some(2))
        );
    }

    #[test]
    fn hash_ignores_key_order_and_go_zero_values() {
        let a =
            json!({"spec": {"containers": [{"name": "c", "image": "x"}], "hostNetwork": false}});
        let b = json!({"spec": {"containers": [{"image": "x", "name": "c", "args": []}]}});
        assert_eq!(compute_hash(&a, None), compute_hash(&b, None));
    }

    #[test]
    fn the_safe_alphabet_maps_digits_as_upstream() {
        // SafeEncodeString("0123456789"): byte % 27 into the alphabet.
        let digits: String = "0123456789"
            .bytes()
            .map(|b| char::from(SAFE[usize::from(b) % SAFE.len()]))
            .collect();
        assert_eq!(digits, "456789bcdf");
    }

    #[test]
    fn fnv32a_matches_the_reference_vectors() {
        assert_eq!(fnv32a(FNV_OFFSET, b""), 0x811c_9dc5);
        assert_eq!(fnv32a(FNV_OFFSET, b"a"), 0xe40c_292c);
        assert_eq!(fnv32a(FNV_OFFSET, b"foobar"), 0xbf9c_f968);
    }

    #[test]
    fn templates_equal_ignoring_the_hash_label() {
        let mut with = tmpl("nginx");
        add_label(&mut with, "abc");
        assert!(equal_ignore_hash(&with, &tmpl("nginx")));
        assert!(!equal_ignore_hash(&with, &tmpl("httpd")));
    }

    #[test]
    fn the_oldest_matching_replica_set_is_the_new_one() {
        let rs = |n: &str, t: &str, image: &str| {
            json!({"metadata": {"name": n, "creationTimestamp": t},
                   "spec": {"template": tmpl(image)}})
        };
        let (a, b, c) = (
            rs("b", "2026-01-02T00:00:00Z", "nginx"),
            rs("a", "2026-01-01T00:00:00Z", "httpd"),
            rs("c", "2026-01-03T00:00:00Z", "nginx"),
        );
        let found = find_new(&tmpl("nginx"), &[&c, &a, &b]);
        assert_eq!(found.map(name), Some("b"));
        assert!(find_new(&tmpl("redis"), &[&a, &b, &c]).is_none());
    }

    fn map(v: Value) -> Map<String, Value> {
        v.as_object().cloned().unwrap_or_default()
    }

    #[test]
    fn new_replica_sets_copy_annotations_but_the_skipped_ones() {
        let d = map(json!({
            "kubernetes.io/change-cause": "kubectl set image",
            LAST_APPLIED: "{}",
            REVISION: "7",
            "team": "a",
        }));
        let mut rs = Map::new();
        assert!(set_new_rs_annotations(&d, &mut rs, 1, false, 3, 4));
        assert_eq!(
            Value::Object(rs.clone()),
            json!({
                "kubernetes.io/change-cause": "kubectl set image",
                "team": "a",
                REVISION: "1",
                DESIRED_REPLICAS: "3",
                MAX_REPLICAS: "4",
            })
        );
        assert!(
            !set_new_rs_annotations(&d, &mut rs, 1, true, 3, 4),
            "idempotent"
        );
    }

    #[test]
    fn a_reused_replica_set_records_its_old_revisions() {
        let d = Map::new();
        let mut rs = map(json!({REVISION: "1"}));
        assert!(set_new_rs_annotations(&d, &mut rs, 3, true, 1, 1));
        assert_eq!(rs[REVISION], "3");
        assert_eq!(rs[REVISION_HISTORY], "1");
        assert!(set_new_rs_annotations(&d, &mut rs, 5, true, 1, 1));
        assert_eq!(rs[REVISION], "5");
        assert_eq!(rs[REVISION_HISTORY], "1,3");
        assert!(
            !rs.contains_key(DESIRED_REPLICAS),
            "only new ReplicaSets get replica annotations here"
        );
        // A lower revision never lowers it.
        assert!(!set_new_rs_annotations(&d, &mut rs, 2, true, 1, 1));
        assert_eq!(rs[REVISION], "5");
    }

    #[test]
    fn revision_history_is_capped_dropping_the_oldest() {
        let d = Map::new();
        let long: Vec<String> = (0..600).map(|i| i.to_string()).collect();
        let mut rs = map(json!({REVISION: "1000", REVISION_HISTORY: long.join(",")}));
        assert!(set_new_rs_annotations(&d, &mut rs, 1001, true, 1, 1));
        let h = rs[REVISION_HISTORY].as_str().unwrap_or_default();
        assert!(h.len() <= MAX_REVISION_HISTORY_CHARS, "{}", h.len());
        assert!(h.ends_with(",599,1000"));
        assert!(!h.starts_with("0,"));
    }

    #[test]
    fn the_new_replica_set_is_labelled_selected_and_owned() {
        let d = json!({
            "metadata": {"name": "web", "namespace": "ns", "uid": "u1"},
            "spec": {"selector": {"matchLabels": {"app": "web"}}, "minReadySeconds": 5,
                     "template": tmpl("nginx")},
        });
        let rs = new_replica_set(&d, "5d4f", 2, map(json!({REVISION: "1"})));
        assert_eq!(rs["metadata"]["name"], "web-5d4f");
        assert_eq!(
            rs["metadata"]["labels"],
            json!({"app": "web", POD_TEMPLATE_HASH: "5d4f"})
        );
        assert_eq!(
            rs["spec"]["selector"]["matchLabels"],
            json!({"app": "web", POD_TEMPLATE_HASH: "5d4f"})
        );
        assert_eq!(
            rs["spec"]["template"]["metadata"]["labels"][POD_TEMPLATE_HASH],
            "5d4f"
        );
        assert_eq!(rs["spec"]["replicas"], 2);
        assert_eq!(rs["spec"]["minReadySeconds"], 5);
        assert!(template::is_controlled_by(&rs, "u1"));
        assert_eq!(rs["metadata"]["ownerReferences"][0]["kind"], "Deployment");
    }
}
