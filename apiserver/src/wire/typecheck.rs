//! Go's `json.UnmarshalTypeError` for a request body: the first value
//! that encoding/json (as kube-apiserver's case-sensitive fork) cannot
//! store in the Go struct, in upstream's words:
//!
//! `json: cannot unmarshal bool into Go struct field ObjectMeta.spec.template.metadata.labels of type string`
//!
//! Go names the innermost struct type, then the full path of JSON field
//! names from the root (map keys and list indices are not part of it),
//! then the Go type it tried to fill (after dereferencing pointers). Keys
//! are visited in sorted order (kubectl sends sorted keys, so this is
//! usually the document order Go reports the first error in). Types with
//! their own UnmarshalJSON (Time, Quantity, IntOrString, …) are not
//! checked here.

use serde_json::Value;

use super::types::{Kind, Table, TypeId};

/// The type error Go reports for `obj` decoded as `kind` in
/// `api_version`, if any.
pub fn type_error(obj: &Value, api_version: &str, kind: &str) -> Option<String> {
    let table = Table::get();
    let id = table.kind(api_version, kind)?;
    let mut path = Vec::new();
    check(table, obj, id, None, &mut path)
}

fn check<'v>(
    table: &Table,
    v: &'v Value,
    id: TypeId,
    strukt: Option<&str>,
    path: &mut Vec<&'v str>,
) -> Option<String> {
    if v.is_null() {
        return None;
    }
    let ty = table.ty(id);
    let fail = |what: String| Some(message(&what, strukt, path, &ty.go));
    match (ty.kind, v) {
        (Kind::Ptr(t), _) => check(table, v, t, strukt, path),
        (Kind::Struct(s), Value::Object(map)) => {
            let s = table.structs.get(s as usize)?;
            for (k, item) in map {
                let Some(f) = s.field(k) else { continue };
                path.push(k);
                let found = check(table, item, f.ty, Some(&s.go), path);
                path.pop();
                if found.is_some() {
                    return found;
                }
            }
            None
        }
        (Kind::Slice(t), Value::Array(items)) => items
            .iter()
            .find_map(|item| check(table, item, t, strukt, path)),
        (Kind::Map(t), Value::Object(map)) => map
            .values()
            .find_map(|item| check(table, item, t, strukt, path)),
        (Kind::Str, Value::String(_)) | (Kind::Bool, Value::Bool(_)) => None,
        (Kind::Float, Value::Number(_)) => None,
        (Kind::I32 | Kind::I64 | Kind::U64, Value::Number(n)) => {
            let fits = match ty.kind {
                Kind::I32 => n.as_i64().is_some_and(|i| i32::try_from(i).is_ok()),
                Kind::I64 => n.as_i64().is_some(),
                _ => n.as_u64().is_some(),
            };
            if fits {
                None
            } else {
                fail(format!("number {n}"))
            }
        }
        (Kind::Bytes, Value::String(_) | Value::Array(_)) => None,
        (
            Kind::Struct(_)
            | Kind::Slice(_)
            | Kind::Map(_)
            | Kind::Str
            | Kind::Bool
            | Kind::Float
            | Kind::I32
            | Kind::I64
            | Kind::U64
            | Kind::Bytes,
            _,
        ) => fail(describe(v).to_string()),
        // Custom unmarshalers (Time, Quantity, IntOrString, raw JSON, …).
        _ => None,
    }
}

/// Go's name for a JSON value's type in the message.
fn describe(v: &Value) -> &'static str {
    match v {
        Value::Bool(_) => "bool",
        Value::Number(_) => "number",
        Value::String(_) => "string",
        Value::Array(_) => "array",
        Value::Object(_) => "object",
        Value::Null => "null",
    }
}

fn message(what: &str, strukt: Option<&str>, path: &[&str], go: &str) -> String {
    match strukt {
        Some(s) => format!(
            "json: cannot unmarshal {what} into Go struct field {s}.{} of type {go}",
            path.join(".")
        ),
        None => format!("json: cannot unmarshal {what} into Go value of type {go}"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn names_struct_path_and_type_as_go() {
        let d = json!({"apiVersion": "apps/v1", "kind": "Deployment",
            "spec": {"template": {"metadata": {"labels": {"app": true}}}}});
        assert_eq!(
            type_error(&d, "apps/v1", "Deployment").unwrap(),
            "json: cannot unmarshal bool into Go struct field ObjectMeta.spec.template.metadata.labels of type string"
        );
        let d = json!({"spec": {"replicas": "3"}});
        assert_eq!(
            type_error(&d, "apps/v1", "Deployment").unwrap(),
            "json: cannot unmarshal string into Go struct field DeploymentSpec.spec.replicas of type int32"
        );
        let d = json!({"spec": {"template": {"spec": {"containers": {"name": "x"}}}}});
        assert_eq!(
            type_error(&d, "apps/v1", "Deployment").unwrap(),
            "json: cannot unmarshal object into Go struct field PodSpec.spec.template.spec.containers of type []v1.Container"
        );
        let d = json!({"spec": {"containers": [{"name": 1}]}});
        assert_eq!(
            type_error(&d, "v1", "Pod").unwrap(),
            "json: cannot unmarshal number into Go struct field Container.spec.containers.name of type string"
        );
        let d = json!({"spec": {"restartPolicy": false}});
        assert_eq!(
            type_error(&d, "v1", "Pod").unwrap(),
            "json: cannot unmarshal bool into Go struct field PodSpec.spec.restartPolicy of type v1.RestartPolicy"
        );
        let d = json!({"spec": {"replicas": 1.5}});
        assert_eq!(
            type_error(&d, "apps/v1", "Deployment").unwrap(),
            "json: cannot unmarshal number 1.5 into Go struct field DeploymentSpec.spec.replicas of type int32"
        );
        assert_eq!(
            type_error(&json!([1]), "v1", "ConfigMap").unwrap(),
            "json: cannot unmarshal array into Go value of type v1.ConfigMap"
        );
        let ok = json!({"metadata": {"name": "x", "creationTimestamp": null}, "data": {"a": "b"}});
        assert_eq!(type_error(&ok, "v1", "ConfigMap"), None);
    }
}
