//! kube-controller-manager's ClusterRole aggregation controller: a
//! ClusterRole with an `aggregationRule` gets, as its `rules`, the rules of
//! every other ClusterRole its selectors match (ordered by role name,
//! duplicates dropped), kept up to date as roles come, change and go.

use std::collections::BTreeMap;
use std::time::Duration;

use futures::StreamExt;
use serde_json::{Value, json};

use crate::registry::list::ListQuery;
use crate::registry::watch::{WatchItem, WatchQuery};
use crate::registry::{Registry, ResourceInfo, Target, WriteOptions, object, resource};
use crate::status::ApiError;

/// The field manager upstream's controller writes as.
const MANAGER: &str = "clusterrole-aggregation-controller";

/// Whether the labels of a role match one `metav1.LabelSelector`
/// (`matchLabels` and `matchExpressions`; an empty selector matches
/// everything, as upstream's `LabelSelectorAsSelector`).
pub fn selects(selector: &Value, labels: &BTreeMap<String, String>) -> bool {
    let match_labels = selector
        .get("matchLabels")
        .and_then(Value::as_object)
        .into_iter()
        .flatten();
    for (k, v) in match_labels {
        if labels.get(k).map(String::as_str) != v.as_str() {
            return false;
        }
    }
    let expressions = selector
        .get("matchExpressions")
        .and_then(Value::as_array)
        .into_iter()
        .flatten();
    for e in expressions {
        let key = e.get("key").and_then(Value::as_str).unwrap_or_default();
        let values: Vec<&str> = e
            .get("values")
            .and_then(Value::as_array)
            .map(|a| a.iter().filter_map(Value::as_str).collect())
            .unwrap_or_default();
        let value = labels.get(key).map(String::as_str);
        let ok = match e
            .get("operator")
            .and_then(Value::as_str)
            .unwrap_or_default()
        {
            "In" => value.is_some_and(|v| values.contains(&v)),
            "NotIn" => value.is_none_or(|v| !values.contains(&v)),
            "Exists" => value.is_some(),
            "DoesNotExist" => value.is_none(),
            _ => false,
        };
        if !ok {
            return false;
        }
    }
    true
}

/// The rules `role` aggregates from `roles` (every ClusterRole, by name),
/// or `None` when it has no aggregation rule.
pub fn aggregate(role: &Value, roles: &BTreeMap<String, Value>) -> Option<Vec<Value>> {
    let selectors = role
        .pointer("/aggregationRule/clusterRoleSelectors")
        .and_then(Value::as_array)?;
    let own = object::name(role);
    let mut rules: Vec<Value> = Vec::new();
    for selector in selectors {
        for (name, other) in roles {
            if name == own || !selects(selector, &object::labels(other)) {
                continue;
            }
            let theirs = other
                .get("rules")
                .and_then(Value::as_array)
                .into_iter()
                .flatten();
            for rule in theirs {
                if !rules.contains(rule) {
                    rules.push(rule.clone());
                }
            }
        }
    }
    Some(rules)
}

/// Runs forever.
pub async fn run(registry: Registry) {
    loop {
        if let Err(e) = watch_once(&registry).await {
            tracing::warn!(error = %e, "clusterrole aggregation restarting");
        }
        tokio::time::sleep(Duration::from_millis(500)).await;
    }
}

async fn watch_once(registry: &Registry) -> Result<(), ApiError> {
    let Some(res) = resource::builtin("rbac.authorization.k8s.io", "v1", "clusterroles") else {
        return Ok(());
    };
    // List, then watch from the list's revision: rules are aggregated
    // from a complete view, as upstream waits for its informer to sync.
    let page = registry.list(&res, None, &ListQuery::default()).await?;
    let mut roles: BTreeMap<String, Value> = page
        .items
        .into_iter()
        .map(|o| (object::name(&o).to_string(), o))
        .collect();
    let q = WatchQuery {
        resource_version: Some(page.revision.to_string()),
        ..WatchQuery::default()
    };
    let mut events = registry.watch(&res, None, q).await?;
    sync(registry, &res, &roles).await;
    while let Some(item) = events.next().await {
        match item {
            WatchItem::Added(o) | WatchItem::Modified(o) => {
                roles.insert(object::name(&o).to_string(), o);
            }
            WatchItem::Deleted(o) => {
                roles.remove(object::name(&o));
            }
            WatchItem::Bookmark { .. } => continue,
            WatchItem::Error(e) => return Err(e),
        }
        sync(registry, &res, &roles).await;
    }
    Ok(())
}

/// Writes the aggregated rules of every aggregating role whose stored
/// rules differ.
async fn sync(registry: &Registry, res: &ResourceInfo, roles: &BTreeMap<String, Value>) {
    let opts = WriteOptions {
        field_manager: MANAGER.into(),
        ..WriteOptions::default()
    };
    for (name, role) in roles {
        let Some(rules) = aggregate(role, roles) else {
            continue;
        };
        let stored = role
            .get("rules")
            .and_then(Value::as_array)
            .cloned()
            .unwrap_or_default();
        if stored == rules {
            continue;
        }
        let result = registry
            .update_with(res, "", name, Target::Main, &opts, |current| {
                let mut next = current.clone();
                if let Some(map) = next.as_object_mut() {
                    map.insert("rules".into(), json!(rules));
                }
                Ok(next)
            })
            .await;
        match result {
            Ok(_) => {}
            Err(e) if e.reason() == "NotFound" => {}
            Err(e) => tracing::warn!(role = %name, error = %e, "aggregating rules failed"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn labels(pairs: &[(&str, &str)]) -> BTreeMap<String, String> {
        pairs
            .iter()
            .map(|(k, v)| ((*k).into(), (*v).into()))
            .collect()
    }

    #[test]
    fn selectors_match_labels_and_expressions() {
        let l = labels(&[("a", "1"), ("b", "2")]);
        assert!(selects(&json!({"matchLabels": {"a": "1"}}), &l));
        assert!(!selects(&json!({"matchLabels": {"a": "2"}}), &l));
        assert!(selects(
            &json!({"matchExpressions": [{"key": "b", "operator": "In", "values": ["2", "3"]}]}),
            &l
        ));
        assert!(!selects(
            &json!({"matchExpressions": [{"key": "c", "operator": "Exists"}]}),
            &l
        ));
        assert!(selects(
            &json!({"matchExpressions": [{"key": "c", "operator": "DoesNotExist"}]}),
            &l
        ));
        assert!(selects(&json!({}), &l));
    }

    #[test]
    fn rules_come_from_matching_roles_in_name_order_without_duplicates() {
        let read = json!({"apiGroups": [""], "resources": ["pods"], "verbs": ["get"]});
        let write = json!({"apiGroups": [""], "resources": ["pods"], "verbs": ["create"]});
        let label = "rbac.authorization.k8s.io/aggregate-to-view";
        let mut roles = BTreeMap::new();
        let view = json!({"metadata": {"name": "view"},
            "aggregationRule": {"clusterRoleSelectors": [{"matchLabels": {label: "true"}}]}});
        roles.insert("view".to_string(), view.clone());
        roles.insert(
            "z".to_string(),
            json!({"metadata": {"name": "z", "labels": {label: "true"}}, "rules": [write, read]}),
        );
        roles.insert(
            "a".to_string(),
            json!({"metadata": {"name": "a", "labels": {label: "true"}}, "rules": [read]}),
        );
        roles.insert(
            "other".to_string(),
            json!({"metadata": {"name": "other"}, "rules": [json!({"verbs": ["*"]})]}),
        );
        assert_eq!(
            aggregate(&view, &roles),
            Some(vec![read.clone(), write.clone()])
        );
        assert_eq!(aggregate(&roles["a"], &roles), None);
    }
}
