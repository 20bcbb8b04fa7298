//! The status conditions upstream's namespace deleter keeps on a
//! terminating Namespace (`pkg/controller/namespace/deletion`): one of each
//! type, `True` with what blocks deletion or `False` with the "ok" text.

use std::collections::BTreeMap;

use serde_json::{Value, json};

use crate::registry::{ResourceInfo, object};

/// The condition types, in upstream's order.
pub const TYPES: [&str; 5] = [
    "NamespaceDeletionDiscoveryFailure",
    "NamespaceDeletionGroupVersionParsingFailure",
    "NamespaceDeletionContentFailure",
    "NamespaceContentRemaining",
    "NamespaceFinalizersRemaining",
];

/// Upstream's reason and message for a condition type that is `False`.
fn ok_text(kind: &str) -> (&'static str, &'static str) {
    match kind {
        "NamespaceDeletionDiscoveryFailure" => (
            "ResourcesDiscovered",
            "All resources successfully discovered",
        ),
        "NamespaceDeletionGroupVersionParsingFailure" => (
            "ParsedGroupVersions",
            "All legacy kube types successfully parsed",
        ),
        "NamespaceDeletionContentFailure" => (
            "ContentDeleted",
            "All content successfully deleted, may be waiting on finalization",
        ),
        _ => ("ContentRemoved", "All content successfully removed"),
    }
}

/// What is left in a namespace: objects per `resource.group`, and objects
/// per finalizer.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct Remaining {
    resources: BTreeMap<String, usize>,
    finalizers: BTreeMap<String, usize>,
}

impl Remaining {
    /// Counts `items`, the objects of `res` still in the namespace.
    pub fn add(&mut self, res: &ResourceInfo, items: &[Value]) {
        if items.is_empty() {
            return;
        }
        // Upstream prints `resource.group`, so core resources end in a dot.
        *self
            .resources
            .entry(format!("{}.{}", res.plural, res.group))
            .or_default() += items.len();
        for item in items {
            for f in object::finalizers(item) {
                *self.finalizers.entry(f).or_default() += 1;
            }
        }
    }

    /// Whether nothing is left.
    pub fn is_empty(&self) -> bool {
        self.resources.is_empty()
    }
}

/// One condition (without its transition time).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Condition {
    /// The type.
    pub kind: &'static str,
    /// `True` when something blocks deletion.
    pub status: bool,
    /// The reason.
    pub reason: String,
    /// The message.
    pub message: String,
}

/// The five conditions for what is `remaining` and the delete or list
/// `failures` (messages) of one pass.
pub fn of(remaining: &Remaining, failures: &[String]) -> Vec<Condition> {
    TYPES
        .iter()
        .map(|kind| {
            let blocked = match *kind {
                "NamespaceDeletionContentFailure" if !failures.is_empty() => {
                    let mut msgs = failures.to_vec();
                    msgs.sort();
                    Some((
                        "ContentDeletionFailed",
                        format!(
                            "Failed to delete all resource types, {} remaining: {}",
                            msgs.len(),
                            msgs.join(", ")
                        ),
                    ))
                }
                "NamespaceContentRemaining" if !remaining.resources.is_empty() => {
                    let list: Vec<String> = remaining
                        .resources
                        .iter()
                        .map(|(r, n)| format!("{r} has {n} resource instances"))
                        .collect();
                    Some((
                        "SomeResourcesRemain",
                        format!("Some resources are remaining: {}", sorted(list)),
                    ))
                }
                "NamespaceFinalizersRemaining" if !remaining.finalizers.is_empty() => {
                    let list: Vec<String> = remaining
                        .finalizers
                        .iter()
                        .map(|(f, n)| format!("{f} in {n} resource instances"))
                        .collect();
                    Some((
                        "SomeFinalizersRemain",
                        format!(
                            "Some content in the namespace has finalizers remaining: {}",
                            sorted(list)
                        ),
                    ))
                }
                _ => None,
            };
            match blocked {
                Some((reason, message)) => Condition {
                    kind,
                    status: true,
                    reason: reason.into(),
                    message,
                },
                None => {
                    let (reason, message) = ok_text(kind);
                    Condition {
                        kind,
                        status: false,
                        reason: reason.into(),
                        message: message.into(),
                    }
                }
            }
        })
        .collect()
}

/// Go's `sort.Strings` then `strings.Join(…, ", ")`.
fn sorted(mut list: Vec<String>) -> String {
    list.sort();
    list.join(", ")
}

fn status_text(b: bool) -> &'static str {
    if b { "True" } else { "False" }
}

/// The namespace's `status.conditions` with `conditions` applied as
/// upstream's `updateConditions` does (other conditions kept; a changed
/// condition keeps its `lastTransitionTime` unless its status flips; new
/// ones get `now`), or `None` when nothing changes.
pub fn merge(namespace: &Value, conditions: &[Condition], now: &str) -> Option<Value> {
    let mut list: Vec<Value> = namespace
        .pointer("/status/conditions")
        .and_then(Value::as_array)
        .cloned()
        .unwrap_or_default();
    let mut changed = false;
    for c in conditions {
        let status = status_text(c.status);
        let existing = list
            .iter_mut()
            .find(|o| o.get("type").and_then(Value::as_str) == Some(c.kind));
        match existing {
            None => {
                list.push(json!({
                    "type": c.kind,
                    "status": status,
                    "lastTransitionTime": now,
                    "reason": c.reason,
                    "message": c.message,
                }));
                changed = true;
            }
            Some(old) => {
                let same = old.get("status").and_then(Value::as_str) == Some(status)
                    && old.get("reason").and_then(Value::as_str) == Some(c.reason.as_str())
                    && old.get("message").and_then(Value::as_str) == Some(c.message.as_str());
                if same {
                    continue;
                }
                let Some(map) = old.as_object_mut() else {
                    continue;
                };
                if map.get("status").and_then(Value::as_str) != Some(status) {
                    map.insert("lastTransitionTime".into(), json!(now));
                }
                map.insert("status".into(), json!(status));
                map.insert("reason".into(), json!(c.reason));
                map.insert("message".into(), json!(c.message));
                changed = true;
            }
        }
    }
    changed.then_some(Value::Array(list))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::registry::resource;

    #[test]
    fn a_configmap_held_by_a_finalizer() {
        let cms = resource::builtin("", "v1", "configmaps").unwrap();
        let mut r = Remaining::default();
        r.add(
            &cms,
            &[json!({"metadata": {"name": "c", "finalizers": ["example.com/x"]}})],
        );
        let cs = of(&r, &[]);
        let kinds: Vec<&str> = cs.iter().map(|c| c.kind).collect();
        assert_eq!(kinds, TYPES);
        assert_eq!(
            cs[3].message,
            "Some resources are remaining: configmaps. has 1 resource instances"
        );
        assert_eq!(cs[3].reason, "SomeResourcesRemain");
        assert_eq!(
            cs[4].message,
            "Some content in the namespace has finalizers remaining: example.com/x in 1 resource instances"
        );
        assert_eq!(cs[4].reason, "SomeFinalizersRemain");
        assert!(!cs[0].status && cs[0].reason == "ResourcesDiscovered");
        assert_eq!(
            cs[2].message,
            "All content successfully deleted, may be waiting on finalization"
        );
    }

    #[test]
    fn merge_keeps_transition_times_unless_status_flips() {
        let cms = resource::builtin("", "v1", "configmaps").unwrap();
        let mut r = Remaining::default();
        r.add(
            &cms,
            &[json!({"metadata": {"name": "c", "finalizers": ["a"]}})],
        );
        let first = merge(&json!({}), &of(&r, &[]), "T1").unwrap();
        assert_eq!(first.as_array().unwrap().len(), 5);
        let ns = json!({"status": {"conditions": first}});
        assert_eq!(merge(&ns, &of(&r, &[]), "T2"), None);
        let done = merge(&ns, &of(&Remaining::default(), &[]), "T3").unwrap();
        assert_eq!(done[0]["lastTransitionTime"], "T1");
        assert_eq!(done[3]["lastTransitionTime"], "T3");
        assert_eq!(done[3]["status"], "False");
        assert_eq!(done[3]["message"], "All content successfully removed");
    }

    #[test]
    fn failures_are_listed_sorted() {
        let cs = of(&Remaining::default(), &["b".into(), "a".into()]);
        assert_eq!(
            cs[2].message,
            "Failed to delete all resource types, 2 remaining: a, b"
        );
        assert_eq!(cs[2].reason, "ContentDeletionFailed");
    }
}
