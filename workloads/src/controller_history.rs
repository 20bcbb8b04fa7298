//! ControllerRevisions (apps/v1) of StatefulSets and DaemonSets, as
//! upstream's `controller/history` and the two controllers' revision
//! code: each distinct Pod template is one revision named
//! `<owner>-<hash>`, whose `data` is `{"spec":{"template":{…,
//! "$patch":"replace"}}}` and whose `revision` numbers increase; going
//! back to an older template renumbers its revision as the newest (so
//! `kubectl rollout history` and `rollout undo` work). The hash is
//! upstream's: FNV-1 32 over the data (and the collision count), encoded
//! with the safe alphabet.

use serde_json::{Value, json};

use crate::template;

/// The label holding a revision's hash.
pub const HASH_LABEL: &str = "controller.kubernetes.io/hash";

/// The label on Pods naming their revision.
pub const REVISION_LABEL: &str = "controller-revision-hash";

/// The revision data of a workload: its template, replacing the whole.
pub fn patch(owner: &Value) -> Value {
    let mut template = owner
        .pointer("/spec/template")
        .cloned()
        .unwrap_or_else(|| json!({}));
    if let Some(t) = template.as_object_mut() {
        t.insert("$patch".into(), json!("replace"));
    }
    json!({"spec": {"template": template}})
}

/// The Pod template a revision holds.
pub fn template_of(revision: &Value) -> Value {
    let mut t = revision
        .pointer("/data/spec/template")
        .cloned()
        .unwrap_or_else(|| json!({}));
    if let Some(m) = t.as_object_mut() {
        m.remove("$patch");
    }
    t
}

/// Upstream's `HashControllerRevision`: FNV-1 32 over the data's JSON and
/// the collision count, as safe-encoded decimal.
pub fn hash(data: &Value, collision_count: i64) -> String {
    let mut h: u32 = 2_166_136_261;
    let text = serde_json::to_string(data).unwrap_or_default();
    let mut feed = |bytes: &[u8]| {
        for b in bytes {
            h = h.wrapping_mul(16_777_619);
            h ^= u32::from(*b);
        }
    };
    feed(text.as_bytes());
    if collision_count > 0 {
        feed(collision_count.to_string().as_bytes());
    }
    safe_encode(&h.to_string())
}

/// apimachinery's `rand.SafeEncodeString`.
pub fn safe_encode(s: &str) -> String {
    const ALPHABET: &[u8] = b"bcdfghjklmnpqrstvwxz2456789";
    s.bytes()
        .map(|b| ALPHABET[usize::from(b) % ALPHABET.len()] as char)
        .collect()
}

/// A revision's number.
pub fn number(revision: &Value) -> i64 {
    revision
        .get("revision")
        .and_then(Value::as_i64)
        .unwrap_or(0)
}

/// A new ControllerRevision of `owner` (`api_version`/`kind`) with `data`,
/// numbered `revision`: labelled with the template's labels and the hash,
/// annotated with the owner's annotations, controlled by the owner.
pub fn new_revision(
    owner: &Value,
    api_version: &str,
    kind: &str,
    data: &Value,
    revision: i64,
    collision_count: i64,
) -> Value {
    let h = hash(data, collision_count);
    let mut labels = owner
        .pointer("/spec/template/metadata/labels")
        .and_then(Value::as_object)
        .cloned()
        .unwrap_or_default();
    labels.insert(HASH_LABEL.into(), json!(h));
    let mut meta = json!({
        "name": format!("{}-{h}", owner.pointer("/metadata/name").and_then(Value::as_str).unwrap_or_default()),
        "namespace": owner.pointer("/metadata/namespace").and_then(Value::as_str).unwrap_or_default(),
        "labels": labels,
        "ownerReferences": [template::controller_ref(owner, api_version, kind)],
    });
    if let Some(a) = owner
        .pointer("/metadata/annotations")
        .filter(|a| a.as_object().is_some_and(|m| !m.is_empty()))
    {
        meta["annotations"] = a.clone();
    }
    json!({
        "apiVersion": "apps/v1",
        "kind": "ControllerRevision",
        "metadata": meta,
        "data": data,
        "revision": revision,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn revisions_hold_the_template_and_are_named_by_its_hash() {
        let owner = json!({"metadata": {"name": "web", "namespace": "ns", "uid": "u",
            "annotations": {"a": "b"}},
            "spec": {"template": {"metadata": {"labels": {"app": "web"}},
                "spec": {"containers": [{"name": "c", "image": "nginx:1"}]}}}});
        let data = patch(&owner);
        assert_eq!(data["spec"]["template"]["$patch"], "replace");
        let rev = new_revision(&owner, "apps/v1", "StatefulSet", &data, 1, 0);
        let h = hash(&data, 0);
        assert_eq!(rev["metadata"]["name"], format!("web-{h}"));
        assert_eq!(rev["metadata"]["labels"][HASH_LABEL], h);
        assert_eq!(rev["metadata"]["labels"]["app"], "web");
        assert_eq!(rev["metadata"]["annotations"]["a"], "b");
        assert_eq!(rev["revision"], 1);
        assert_eq!(template_of(&rev), owner["spec"]["template"]);
        assert!(template::is_controlled_by(&rev, "u"));
        // Deterministic; changes with the template and the collision count.
        assert_eq!(hash(&data, 0), h);
        assert_ne!(hash(&data, 1), h);
        let mut other = owner.clone();
        other["spec"]["template"]["spec"]["containers"][0]["image"] = json!("nginx:2");
        assert_ne!(hash(&patch(&other), 0), h);
        assert!(
            h.bytes()
                .all(|b| b"bcdfghjklmnpqrstvwxz2456789".contains(&b))
        );
    }
}
