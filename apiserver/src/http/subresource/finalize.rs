//! `PUT namespaces/{name}/finalize` (upstream `FinalizeREST` with
//! `namespaceFinalizeStrategy`): replaces the Namespace as sent, keeping its
//! status — the way the namespace controller (or an operator) removes
//! `spec.finalizers`. A terminating Namespace left without finalizers is
//! deleted by the write, as upstream's `ShouldDeleteNamespaceDuringUpdate`.
//!
//! Finalizer names must be qualified names or one of the standard ones
//! (`kubernetes`, `orphan`, `foregroundDeletion`), upstream's
//! `validateFinalizerName` at `spec.finalizers[i]`.

use axum::http::{Method, StatusCode};
use axum::response::Response;
use serde_json::Value;

use super::super::AppState;
use super::super::api::{Call, object_response, write_options};
use super::super::status::{ApiError, Cause};
use super::allow;
use crate::registry::{ResourceInfo, object, validation};

const STANDARD_FINALIZERS: &[&str] = &["kubernetes", "orphan", "foregroundDeletion"];

/// Upstream `validateFinalizerName` of each `spec.finalizers` entry.
pub fn finalizer_errors(ns: &Value) -> Vec<Cause> {
    let list = ns
        .pointer("/spec/finalizers")
        .and_then(Value::as_array)
        .cloned()
        .unwrap_or_default();
    let mut out = Vec::new();
    for (i, f) in list.iter().enumerate() {
        let name = f.as_str().unwrap_or("");
        let field = format!("spec.finalizers[{i}]");
        let errors = validation::qualified_name_errors(name, &field);
        if !errors.is_empty() {
            out.extend(errors);
            continue;
        }
        if !name.contains('/') && !STANDARD_FINALIZERS.contains(&name) {
            out.push(Cause::invalid(
                field,
                format!("{name:?}"),
                "name is neither a standard finalizer name nor is it fully qualified",
            ));
        }
    }
    out
}

/// `PUT namespaces/{name}/finalize`.
pub(in crate::http) async fn update(
    state: &AppState,
    call: &Call,
    res: &ResourceInfo,
    name: &str,
) -> Result<Response, ApiError> {
    allow(call, &[Method::PUT])?;
    let (sent, warnings) = call.admitted_body(state.registry.resources(), res, "UpdateOptions")?;
    let sent_name = object::name(&sent);
    if !sent_name.is_empty() && sent_name != name {
        return Err(ApiError::bad_request(format!(
            "the name of the object ({sent_name}) does not match the name on the URL ({name})"
        )));
    }
    let causes = finalizer_errors(&sent);
    if !causes.is_empty() {
        return Err(ApiError::invalid("", "Namespace", name, causes));
    }
    let mut opts = write_options(call, "UpdateOptions")?;
    opts.subresource = Some("finalize");
    let updated = state
        .registry
        .update_subresource(res, "", name, "finalize", &opts, |stored| {
            let mut next = sent.clone();
            if let Some(map) = next.as_object_mut() {
                match stored.get("status") {
                    Some(s) => {
                        map.insert("status".into(), s.clone());
                    }
                    None => {
                        map.remove("status");
                    }
                }
            }
            Ok(next)
        })
        .await?;
    Ok(object_response(StatusCode::OK, &updated, &warnings))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn finalizer_names_follow_upstream() {
        assert!(
            finalizer_errors(&json!({"spec": {"finalizers": ["kubernetes", "example.com/x"]}}))
                .is_empty()
        );
        let e = finalizer_errors(&json!({"spec": {"finalizers": ["bogus"]}}));
        assert_eq!(
            e[0].text(),
            "spec.finalizers[0]: Invalid value: \"bogus\": name is neither a standard finalizer name nor is it fully qualified"
        );
    }
}
