//! The `scale` subresource: `autoscaling/v1 Scale` views of Deployments,
//! ReplicaSets, StatefulSets and ReplicationControllers.

use axum::http::{HeaderMap, Method, StatusCode};
use axum::response::Response;
use serde_json::{Value, json};

use super::AppState;
use super::api::object_response;
use super::body;
use super::patch::{PATCH_TYPES, PatchType, apply_document};
use super::query::Query;
use super::status::ApiError;
use crate::registry::{ResourceInfo, Target, WriteOptions, object};

/// The value at a CRD scale path (`.spec.replicas`: dotted fields only,
/// as upstream's CRD validation requires).
fn at_path<'a>(obj: &'a Value, path: &str) -> Option<&'a Value> {
    path.trim_start_matches('.')
        .split('.')
        .try_fold(obj, |v, field| v.get(field))
}

/// Sets the value at a CRD scale path, creating objects on the way.
fn set_path(obj: &mut Value, path: &str, value: Value) {
    let fields: Vec<&str> = path.trim_start_matches('.').split('.').collect();
    let Some((last, parents)) = fields.split_last() else {
        return;
    };
    let mut cur = obj;
    for f in parents {
        let Some(map) = cur.as_object_mut() else {
            return;
        };
        let next = map.entry(f.to_string()).or_insert_with(|| json!({}));
        if !next.is_object() {
            *next = json!({});
        }
        cur = next;
    }
    if let Some(map) = cur.as_object_mut() {
        map.insert(last.to_string(), value);
    }
}

/// The Scale of a custom resource, as upstream's CRD scale storage:
/// missing replicas read as 0; the selector is the string at
/// `labelSelectorPath`.
fn custom_scale_of(obj: &Value, scale: &crate::registry::custom::CustomScale) -> Value {
    let mut out = scale_of(obj);
    let int = |p: &str| at_path(obj, p).and_then(Value::as_i64).unwrap_or(0);
    out["spec"] = json!({"replicas": int(&scale.spec_replicas)});
    let mut status = json!({"replicas": int(&scale.status_replicas)});
    if let Some(sel) = scale
        .label_selector
        .as_deref()
        .and_then(|p| at_path(obj, p))
        .and_then(Value::as_str)
        .filter(|s| !s.is_empty())
    {
        status["selector"] = json!(sel);
    }
    out["status"] = status;
    out
}

/// The Scale of `obj` as `res` maps it.
fn scale_for(res: &ResourceInfo, obj: &Value) -> Value {
    match res.custom.as_ref().and_then(|c| c.scale.as_ref()) {
        Some(s) => custom_scale_of(obj, s),
        None => scale_of(obj),
    }
}

/// The Scale of `obj`.
pub fn scale_of(obj: &Value) -> Value {
    let meta = obj.get("metadata").cloned().unwrap_or(json!({}));
    let pick = |k: &str| meta.get(k).cloned();
    let mut m = serde_json::Map::new();
    for k in [
        "name",
        "namespace",
        "uid",
        "resourceVersion",
        "creationTimestamp",
    ] {
        if let Some(v) = pick(k) {
            m.insert(k.into(), v);
        }
    }
    let replicas = obj
        .pointer("/spec/replicas")
        .and_then(Value::as_i64)
        .unwrap_or(1);
    let status_replicas = obj
        .pointer("/status/replicas")
        .and_then(Value::as_i64)
        .unwrap_or(0);
    let selector = obj
        .pointer("/spec/selector")
        .map(selector_string)
        .unwrap_or_default();
    let mut status = json!({"replicas": status_replicas});
    if !selector.is_empty() {
        status["selector"] = json!(selector);
    }
    json!({"kind": "Scale", "apiVersion": "autoscaling/v1", "metadata": m,
        "spec": {"replicas": replicas}, "status": status})
}

/// The label selector as a string (`a=b,c in (d)`), from a
/// `metav1.LabelSelector` or a plain map (ReplicationController).
fn selector_string(sel: &Value) -> String {
    let mut parts = Vec::new();
    let labels = sel
        .get("matchLabels")
        .or(if sel.get("matchExpressions").is_none() {
            Some(sel)
        } else {
            None
        });
    if let Some(m) = labels.and_then(Value::as_object) {
        let mut pairs: Vec<_> = m
            .iter()
            .filter_map(|(k, v)| v.as_str().map(|v| format!("{k}={v}")))
            .collect();
        pairs.sort();
        parts.extend(pairs);
    }
    if let Some(exprs) = sel.get("matchExpressions").and_then(Value::as_array) {
        for e in exprs {
            let key = e.get("key").and_then(Value::as_str).unwrap_or("");
            let values: Vec<&str> = e
                .get("values")
                .and_then(Value::as_array)
                .map(|a| a.iter().filter_map(Value::as_str).collect())
                .unwrap_or_default();
            match e.get("operator").and_then(Value::as_str) {
                Some("In") => parts.push(format!("{key} in ({})", values.join(","))),
                Some("NotIn") => parts.push(format!("{key} notin ({})", values.join(","))),
                Some("Exists") => parts.push(key.to_string()),
                Some("DoesNotExist") => parts.push(format!("!{key}")),
                _ => {}
            }
        }
    }
    parts.join(",")
}

/// GET, PUT and PATCH of `…/{name}/scale`.
#[allow(clippy::too_many_arguments)]
pub async fn handle(
    state: &AppState,
    res: &ResourceInfo,
    ns: &str,
    name: &str,
    method: &Method,
    query: &Query,
    headers: &HeaderMap,
    body_bytes: &[u8],
) -> Result<Response, ApiError> {
    let current = state.registry.get(res, ns, name).await?;
    let opts = WriteOptions {
        dry_run: query.dry_run(if *method == Method::PUT {
            "UpdateOptions"
        } else {
            "PatchOptions"
        })?,
        field_manager: query.get("fieldManager").unwrap_or("kubectl").to_string(),
        subresource: Some("scale"),
        ..WriteOptions::default()
    };
    let wanted_scale = match *method {
        Method::GET => {
            let scale = scale_for(res, &current);
            // `kubectl get … --subresource=scale` asks for a Table.
            if super::api::wants_table(headers) {
                let include = super::api::include_object(query)?;
                let now = time::OffsetDateTime::now_utc();
                let table = match res.custom.as_ref().and_then(|c| c.scale_columns.as_ref()) {
                    Some(cols) => crate::table::custom_object_table(cols, &scale, include, now),
                    None => {
                        crate::table::object_table("autoscaling", "Scale", &scale, include, now)
                    }
                };
                return Ok(object_response(StatusCode::OK, &table, &[]));
            }
            return Ok(object_response(StatusCode::OK, &scale, &[]));
        }
        Method::PUT => body::decode(&body::content_type(headers), body_bytes)?.raw,
        Method::PATCH => {
            let ct = body::content_type(headers);
            let Some(patch_type) =
                PatchType::from_content_type(&ct).filter(|t| *t != PatchType::Apply)
            else {
                return Err(ApiError::unsupported_media_type(PATCH_TYPES));
            };
            let scale_schema = crate::schema::definitions().for_gvk("autoscaling", "v1", "Scale");
            apply_document(
                patch_type,
                body_bytes,
                &scale_for(res, &current),
                scale_schema,
            )?
        }
        _ => return Err(ApiError::method_not_allowed()),
    };
    // autoscaling/v1 omits `replicas: 0`; a missing field reads as 0, as in Go.
    let replicas = match wanted_scale.pointer("/spec/replicas") {
        None | Some(Value::Null) => 0,
        Some(v) => v
            .as_i64()
            .ok_or_else(|| ApiError::bad_request("Scale spec.replicas must be an integer"))?,
    };
    if replicas < 0 {
        return Err(ApiError::invalid(
            "autoscaling",
            "Scale",
            name,
            vec![super::status::Cause::invalid(
                "spec.replicas",
                replicas.to_string(),
                "must be greater than or equal to 0",
            )],
        ));
    }
    let precondition = object::meta_str(&wanted_scale, "resourceVersion").map(str::to_string);
    let updated = state
        .registry
        .update_with(res, ns, name, Target::Main, &opts, |obj| {
            let mut obj = obj.clone();
            if let Some(rv) = &precondition {
                object::set_meta(&mut obj, "resourceVersion", Some(json!(rv)));
            }
            match res.custom.as_ref().and_then(|c| c.scale.as_ref()) {
                Some(s) => set_path(&mut obj, &s.spec_replicas, json!(replicas)),
                None => {
                    if let Some(spec) = obj.get_mut("spec").and_then(Value::as_object_mut) {
                        spec.insert("replicas".into(), json!(replicas));
                    }
                }
            }
            Ok(obj)
        })
        .await?;
    Ok(object_response(
        StatusCode::OK,
        &scale_for(res, &updated),
        &[],
    ))
}
