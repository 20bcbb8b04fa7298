//! `apiextensions.k8s.io/v1` defaulting (upstream `v1/defaults.go`) and the
//! CRD strategy's create/update preparation (`registry/customresourcedefinition/strategy.go`).

use serde_json::{Map, Value, json};

use super::json::{bool_of, items, str_of};

/// Upstream's v1 defaults, in place: `spec.names.singular` = lower-cased
/// kind, `spec.names.listKind` = `<kind>List`, `spec.conversion` =
/// `{strategy: None}`, a conversion webhook service's `port` = 443, and an
/// empty `status.storedVersions` = the storage version. Only fills what is
/// missing, so applying it twice changes nothing; leaves a value that is
/// not an object (or whose `spec` is not one) alone.
pub fn set_defaults(crd: &mut Value) {
    let Some(root) = crd.as_object_mut() else {
        return;
    };
    let spec = root
        .entry("spec")
        .or_insert_with(|| Value::Object(Map::new()));
    let Some(spec) = spec.as_object_mut() else {
        return;
    };
    if let Some(names) = spec.get_mut("names").and_then(Value::as_object_mut) {
        let kind = names
            .get("kind")
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_owned();
        if is_empty_str(names.get("singular")) {
            names.insert("singular".into(), Value::String(kind.to_lowercase()));
        }
        if is_empty_str(names.get("listKind")) && !kind.is_empty() {
            names.insert("listKind".into(), Value::String(format!("{kind}List")));
        }
    }
    match spec.get_mut("conversion") {
        None | Some(Value::Null) => {
            spec.insert("conversion".into(), json!({"strategy": "None"}));
        }
        Some(conversion) => {
            if let Some(service) = conversion
                .pointer_mut("/webhook/clientConfig/service")
                .and_then(Value::as_object_mut)
                && service.get("port").is_none_or(Value::is_null)
            {
                service.insert("port".into(), json!(443));
            }
        }
    }
    let storage = storage_version(crd);
    if let (Some(name), Some(root)) = (storage, crd.as_object_mut()) {
        let status = root
            .entry("status")
            .or_insert_with(|| Value::Object(Map::new()));
        if let Some(status) = status.as_object_mut() {
            let empty = status
                .get("storedVersions")
                .and_then(Value::as_array)
                .is_none_or(Vec::is_empty);
            if empty {
                status.insert("storedVersions".into(), json!([name]));
            }
        }
    }
}

fn is_empty_str(v: Option<&Value>) -> bool {
    v.and_then(Value::as_str).is_none_or(str::is_empty)
}

/// The name of the first version marked `storage`.
fn storage_version(crd: &Value) -> Option<String> {
    let spec = crd.get("spec")?;
    items(spec, "versions")
        .iter()
        .find(|v| bool_of(v, "storage"))
        .map(|v| str_of(v, "name").to_owned())
}

/// What upstream's CRD strategy does before validating a create: the status
/// is cleared, then records the storage version in `status.storedVersions`;
/// `metadata.generation` is 1.
pub fn prepare_for_create(crd: &mut Value) {
    let stored = storage_version(crd);
    let Some(root) = crd.as_object_mut() else {
        return;
    };
    let mut status = Map::new();
    if let Some(name) = stored {
        status.insert("storedVersions".into(), json!([name]));
    }
    root.insert("status".into(), Value::Object(status));
    if let Some(meta) = root.get_mut("metadata").and_then(Value::as_object_mut) {
        meta.insert("generation".into(), json!(1));
    }
}

/// What upstream's CRD strategy does before validating an update of the
/// main resource: the status is kept from `old`, `metadata.generation` is
/// `old`'s plus one when the spec changed (else `old`'s), and the storage
/// version is appended to `status.storedVersions` when missing.
pub fn prepare_for_update(new: &mut Value, old: &Value) {
    let old_generation = old
        .pointer("/metadata/generation")
        .and_then(Value::as_i64)
        .unwrap_or(0);
    let spec_changed = new.get("spec") != old.get("spec");
    let stored = storage_version(new);
    let Some(root) = new.as_object_mut() else {
        return;
    };
    let mut status = old.get("status").cloned().unwrap_or_else(|| json!({}));
    if let (Some(name), Some(s)) = (stored, status.as_object_mut()) {
        let list = s
            .entry("storedVersions")
            .or_insert_with(|| Value::Array(Vec::new()));
        if let Some(list) = list.as_array_mut()
            && !list.iter().any(|v| v.as_str() == Some(name.as_str()))
        {
            list.push(Value::String(name));
        }
    }
    root.insert("status".into(), status);
    if let Some(meta) = root.get_mut("metadata").and_then(Value::as_object_mut) {
        let generation = if spec_changed {
            old_generation.saturating_add(1)
        } else {
            old_generation
        };
        meta.insert("generation".into(), json!(generation));
    }
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;

    use super::*;

    #[test]
    fn v1_defaults() {
        let mut crd = json!({"spec": {
            "names": {"kind": "Widget", "plural": "widgets"},
            "versions": [{"name": "v1", "served": true, "storage": false},
                         {"name": "v2", "served": true, "storage": true}],
        }});
        set_defaults(&mut crd);
        assert_eq!(crd.pointer("/spec/names/singular"), Some(&json!("widget")));
        assert_eq!(
            crd.pointer("/spec/names/listKind"),
            Some(&json!("WidgetList"))
        );
        assert_eq!(
            crd.pointer("/spec/conversion"),
            Some(&json!({"strategy": "None"}))
        );
        assert_eq!(crd.pointer("/status/storedVersions"), Some(&json!(["v2"])));
    }

    #[test]
    fn webhook_service_port() {
        let mut crd = json!({"spec": {"conversion": {"strategy": "Webhook", "webhook": {
            "clientConfig": {"service": {"name": "s", "namespace": "n"}}}}}});
        set_defaults(&mut crd);
        assert_eq!(
            crd.pointer("/spec/conversion/webhook/clientConfig/service/port"),
            Some(&json!(443))
        );
    }

    #[test]
    fn keeps_what_is_set() {
        let mut crd = json!({"spec": {"names": {"kind": "W", "singular": "s", "listKind": "L"},
            "conversion": {"strategy": "Webhook"}}, "status": {"storedVersions": ["v0"]}});
        let before = crd.clone();
        set_defaults(&mut crd);
        assert_eq!(crd, before);
    }

    #[test]
    fn prepare() {
        let mut crd = json!({"metadata": {"name": "a"}, "spec": {"versions": [{"name": "v1", "storage": true}]},
            "status": {"conditions": [1]}});
        prepare_for_create(&mut crd);
        assert_eq!(crd["status"], json!({"storedVersions": ["v1"]}));
        assert_eq!(crd["metadata"]["generation"], json!(1));
        let old = crd.clone();
        let mut new = json!({"metadata": {"name": "a"}, "spec": {"versions": [{"name": "v2", "storage": true}]}});
        prepare_for_update(&mut new, &old);
        assert_eq!(new["status"], json!({"storedVersions": ["v1", "v2"]}));
        assert_eq!(new["metadata"]["generation"], json!(2));
    }

    fn arb_json() -> impl Strategy<Value = Value> {
        let leaf = prop_oneof![
            Just(Value::Null),
            any::<bool>().prop_map(Value::Bool),
            any::<i32>().prop_map(|n| json!(n)),
            "[a-zA-Z]{0,6}".prop_map(Value::String),
        ];
        leaf.prop_recursive(4, 32, 6, |inner| {
            prop_oneof![
                prop::collection::vec(inner.clone(), 0..4).prop_map(Value::Array),
                prop::collection::btree_map(
                    prop_oneof![
                        Just("spec".to_owned()),
                        Just("names".to_owned()),
                        Just("kind".to_owned()),
                        Just("versions".to_owned()),
                        Just("storage".to_owned()),
                        Just("conversion".to_owned()),
                        Just("status".to_owned()),
                        "[a-z]{1,4}"
                    ],
                    inner,
                    0..5
                )
                .prop_map(|m| Value::Object(m.into_iter().collect())),
            ]
        })
    }

    proptest! {
        #[test]
        fn idempotent(mut v in arb_json()) {
            set_defaults(&mut v);
            let once = v.clone();
            set_defaults(&mut v);
            prop_assert_eq!(v, once);
        }
    }
}
