//! `POST pods/{name}/eviction` (upstream `EvictionREST`,
//! `pkg/registry/core/pod/storage/eviction.go`): delete a pod unless its
//! PodDisruptionBudget forbids it.
//!
//! The body is a `policy/v1` or `policy/v1beta1` Eviction named as the URL.
//! In upstream's order:
//! 1. A pod that is Pending, Succeeded, Failed or already being deleted is
//!    deleted without looking at budgets.
//! 2. More than one budget selecting the pod: 500 Status, upstream's text.
//! 3. One budget: an unready pod is deleted when the budget says
//!    `AlwaysAllow` or is currently healthy enough; otherwise the budget's
//!    status decides: not yet observed by its controller
//!    (`observedGeneration < generation`) → 429 `…is still being processed
//!    by the server.` (Retry-After 10); `disruptionsAllowed` negative or
//!    too many pending disruptions → 403; zero → 429 `Cannot evict pod as
//!    it would violate the pod's disruption budget.` with a
//!    `DisruptionBudget` cause; else the budget's status records the
//!    disruption (`disruptionsAllowed - 1`, `disruptedPods[pod]`, the
//!    `DisruptionAllowed` condition at zero).
//! 4. The pod gets the `DisruptionTarget` condition, then is deleted.
//!    Success is 201 with the `Success` Status.
//!
//! Skein runs no disruption controller: a budget's status is whatever its
//! writers put there, so a budget nobody updated is "still being
//! processed", exactly as on a cluster whose controller has not caught up.

use axum::http::{Method, StatusCode};
use axum::response::Response;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::{StatusCause, StatusDetails};
use serde_json::{Value, json};

use super::super::AppState;
use super::super::api::Call;
use super::super::body;
use super::super::status::ApiError;
use super::{allow, body_name, check_body_namespace, created_success, error_response, pod};
use crate::registry::list::ListQuery;
use crate::registry::object::{self, now_rfc3339};
use crate::registry::{DeleteOptions, Propagation, ResourceInfo, Target, WriteOptions, resource};
use crate::selector::label::Selector;

/// Upstream `MaxDisruptedPodSize`.
const MAX_DISRUPTED_PODS: usize = 2000;

/// Upstream's message of every refused eviction.
pub const VIOLATION: &str = "Cannot evict pod as it would violate the pod's disruption budget.";

/// 429 TooManyRequests with a `DisruptionBudget` cause.
fn too_many_requests(cause: String, retry_after: i32) -> ApiError {
    ApiError::new(StatusCode::TOO_MANY_REQUESTS, "TooManyRequests", VIOLATION).with_details(
        StatusDetails {
            causes: Some(vec![StatusCause {
                reason: Some("DisruptionBudget".into()),
                message: Some(cause),
                field: None,
            }]),
            retry_after_seconds: (retry_after > 0).then_some(retry_after),
            ..StatusDetails::default()
        },
    )
}

/// Upstream `createTooManyRequestsError`: the budget is not processed yet.
fn still_processing(pdb: &str) -> ApiError {
    too_many_requests(
        format!("The disruption budget {pdb} is still being processed by the server."),
        10,
    )
}

fn int(v: &Value, pointer: &str) -> i64 {
    v.pointer(pointer).and_then(Value::as_i64).unwrap_or(0)
}

/// The delete options an Eviction carries, with the request's `dryRun`.
fn delete_options(eviction: &Value, call: &Call) -> Result<DeleteOptions, ApiError> {
    let d = eviction.get("deleteOptions").cloned().unwrap_or(json!({}));
    let query_dry = call.query.dry_run("CreateOptions")?;
    let body_dry = d
        .get("dryRun")
        .and_then(Value::as_array)
        .filter(|a| !a.is_empty());
    let dry_run = match body_dry {
        None => query_dry,
        Some(a) => {
            let body_all = a.iter().all(|v| v == "All");
            if call.query.get("dryRun").is_some_and(|q| !q.is_empty()) && body_all != query_dry {
                return Err(ApiError::bad_request(format!(
                    "Non-matching dry-run options in request and content: [{}] and {}",
                    call.query.get("dryRun").unwrap_or(""),
                    Value::Array(a.clone())
                )));
            }
            body_all
        }
    };
    let propagation = match d.get("propagationPolicy").and_then(Value::as_str) {
        Some("Foreground") => Some(Propagation::Foreground),
        Some("Orphan") => Some(Propagation::Orphan),
        Some("Background") => Some(Propagation::Background),
        _ => None,
    };
    Ok(DeleteOptions {
        dry_run,
        propagation,
        precondition_uid: d
            .pointer("/preconditions/uid")
            .and_then(Value::as_str)
            .map(str::to_string),
        precondition_rv: d
            .pointer("/preconditions/resourceVersion")
            .and_then(Value::as_str)
            .map(str::to_string),
    })
}

/// Decodes the Eviction body (`policy/v1` or `policy/v1beta1`).
fn decode(call: &Call, ns: &str, name: &str) -> Result<Value, ApiError> {
    let raw = body::decode(&body::content_type(&call.headers), &call.body)?.raw;
    if !raw.is_object() {
        return Err(ApiError::bad_request("the object must be a JSON object"));
    }
    let kind = raw
        .get("kind")
        .and_then(Value::as_str)
        .unwrap_or("Eviction");
    let version = raw
        .get("apiVersion")
        .and_then(Value::as_str)
        .unwrap_or("policy/v1");
    if kind != "Eviction" || !matches!(version, "policy/v1" | "policy/v1beta1") {
        return Err(ApiError::bad_request(format!(
            "{kind} in version {version:?} cannot be handled as a Eviction: no kind {kind:?} is registered for version {version:?}"
        )));
    }
    if body_name(&raw) != name {
        return Err(ApiError::bad_request(
            "name in URL does not match name in Eviction object",
        ));
    }
    check_body_namespace(&raw, ns)?;
    Ok(raw)
}

/// Upstream `canIgnorePDB`.
fn can_ignore_budgets(p: &Value) -> bool {
    matches!(pod::phase(p), "Succeeded" | "Failed" | "Pending") || object::is_deleting(p)
}

/// Upstream `shouldEnforceResourceVersion`.
fn enforce_resource_version(p: &Value) -> bool {
    !(matches!(pod::phase(p), "Succeeded" | "Failed") || object::is_deleting(p))
}

/// The budgets of the pod's namespace whose selector matches it (an
/// invalid selector matches nothing).
async fn budgets_of(state: &AppState, p: &Value, ns: &str) -> Result<Vec<Value>, ApiError> {
    let pdbs = resource::builtin("policy", "v1", "poddisruptionbudgets")
        .ok_or_else(ApiError::path_not_found)?;
    let page = state
        .registry
        .list(&pdbs, Some(ns), &ListQuery::default())
        .await?;
    Ok(page
        .items
        .into_iter()
        .filter(|pdb| {
            let sel = pdb.pointer("/spec/selector").map_or_else(
                || Ok(Selector::nothing()),
                Selector::from_label_selector_value,
            );
            sel.is_ok_and(|s| s.matches_object(p))
        })
        .collect())
}

/// Upstream `pdbhelper.UpdateDisruptionAllowedCondition` + `SetStatusCondition`.
fn set_disruption_allowed_condition(pdb: &mut Value) {
    let allowed = int(pdb, "/status/disruptionsAllowed") > 0;
    let (status, reason) = if allowed {
        ("True", "SufficientPods")
    } else {
        ("False", "InsufficientPods")
    };
    let observed = int(pdb, "/status/observedGeneration");
    let Some(st) = pdb.get_mut("status").and_then(Value::as_object_mut) else {
        return;
    };
    let conditions = st.entry("conditions").or_insert_with(|| json!([]));
    if !conditions.is_array() {
        *conditions = json!([]);
    }
    let Some(list) = conditions.as_array_mut() else {
        return;
    };
    let fresh = json!({"type": "DisruptionAllowed", "status": status, "observedGeneration": observed,
        "lastTransitionTime": now_rfc3339(), "reason": reason, "message": ""});
    match list
        .iter_mut()
        .find(|c| c.get("type") == Some(&json!("DisruptionAllowed")))
    {
        Some(c) => {
            let changed = c.get("status") != Some(&json!(status));
            let mut next = fresh;
            if !changed && let Some(t) = c.get("lastTransitionTime") {
                next["lastTransitionTime"] = t.clone();
            }
            if let Some(m) = c.get("message") {
                next["message"] = m.clone();
            }
            *c = next;
        }
        None => list.push(fresh),
    }
}

/// Upstream `checkAndDecrement`, retried on conflicts with a fresh budget.
async fn check_and_decrement(
    state: &AppState,
    ns: &str,
    pod_name: &str,
    pdb_name: &str,
    dry_run: bool,
) -> Result<(), ApiError> {
    let pdbs = resource::builtin("policy", "v1", "poddisruptionbudgets")
        .ok_or_else(ApiError::path_not_found)?;
    let opts = WriteOptions {
        dry_run,
        field_manager: "kube-apiserver".into(),
        ..WriteOptions::default()
    };
    state
        .registry
        .update_with(&pdbs, ns, pdb_name, Target::Status, &opts, |pdb| {
            let generation = pdb
                .pointer("/metadata/generation")
                .and_then(Value::as_i64)
                .unwrap_or(0);
            if int(pdb, "/status/observedGeneration") < generation {
                return Err(still_processing(pdb_name));
            }
            let allowed = int(pdb, "/status/disruptionsAllowed");
            if allowed < 0 {
                return Err(ApiError::forbidden(
                    "policy",
                    "poddisruptionbudget",
                    pdb_name,
                    "pdb disruptions allowed is negative",
                ));
            }
            let disrupted = pdb
                .pointer("/status/disruptedPods")
                .and_then(Value::as_object)
                .map_or(0, serde_json::Map::len);
            if disrupted > MAX_DISRUPTED_PODS {
                return Err(ApiError::forbidden(
                    "policy",
                    "poddisruptionbudget",
                    pdb_name,
                    "DisruptedPods map too big - too many evictions not confirmed by PDB controller",
                ));
            }
            if allowed == 0 {
                return Err(too_many_requests(
                    format!(
                        "The disruption budget {pdb_name} needs {} healthy pods and has {} currently",
                        int(pdb, "/status/desiredHealthy"),
                        int(pdb, "/status/currentHealthy")
                    ),
                    0,
                ));
            }
            let mut next = pdb.clone();
            next["status"]["disruptionsAllowed"] = json!(allowed - 1);
            if allowed - 1 == 0 {
                set_disruption_allowed_condition(&mut next);
            }
            let status = next["status"].as_object_mut();
            if let Some(status) = status {
                let map = status
                    .entry("disruptedPods")
                    .or_insert_with(|| json!({}));
                if !map.is_object() {
                    *map = json!({});
                }
                map[pod_name] = json!(now_rfc3339());
            }
            // The budget as read is the precondition (upstream updates the
            // object it checked).
            Ok(next)
        })
        .await
        .map(|_| ())
}

/// Upstream `addConditionAndDeletePod`.
async fn condition_and_delete(
    state: &AppState,
    pods: &ResourceInfo,
    ns: &str,
    name: &str,
    mut opts: DeleteOptions,
) -> Result<(), ApiError> {
    if !opts.dry_run {
        let write = WriteOptions {
            field_manager: "kube-apiserver".into(),
            ..WriteOptions::default()
        };
        let precondition_uid = opts.precondition_uid.clone();
        let precondition_rv = opts.precondition_rv.clone();
        let updated = state
            .registry
            .update_with(pods, ns, name, Target::Status, &write, |p| {
                if let Some(uid) = precondition_uid.as_deref().filter(|u| !u.is_empty())
                    && uid != object::uid(p)
                {
                    return Err(ApiError::conflict("", "Pod", name, &format!(
                        "the UID in the precondition ({uid}) does not match the UID in record ({}). The object might have been deleted and then recreated",
                        object::uid(p)
                    )));
                }
                let current_rv = object::meta_str(p, "resourceVersion").unwrap_or("");
                if let Some(rv) = precondition_rv.as_deref().filter(|r| !r.is_empty())
                    && rv != current_rv
                {
                    return Err(ApiError::conflict("", "Pod", name, &format!(
                        "the ResourceVersion in the precondition ({rv}) does not match the ResourceVersion in record ({current_rv}). The object might have been modified"
                    )));
                }
                let mut next = p.clone();
                pod::set_condition(
                    &mut next,
                    "DisruptionTarget",
                    "True",
                    "EvictionByEvictionAPI",
                    "Eviction API: evicting",
                );
                Ok(next)
            })
            .await?;
        if opts.precondition_rv.is_some() {
            opts.precondition_rv =
                object::meta_str(&updated, "resourceVersion").map(str::to_string);
        }
    }
    state
        .registry
        .delete(pods, ns, name, &opts)
        .await
        .map(|_| ())
}

/// `POST pods/{name}/eviction`.
pub(in crate::http) async fn create(
    state: &AppState,
    call: &Call,
    res: &ResourceInfo,
    ns: &str,
    name: &str,
) -> Result<Response, ApiError> {
    allow(call, &[Method::POST])?;
    match evict(state, call, res, ns, name).await {
        Ok(r) => Ok(r),
        Err(e) => Ok(error_response(e)),
    }
}

async fn evict(
    state: &AppState,
    call: &Call,
    pods: &ResourceInfo,
    ns: &str,
    name: &str,
) -> Result<Response, ApiError> {
    let eviction = decode(call, ns, name)?;
    let original = delete_options(&eviction, call)?;
    let p = state.registry.get(pods, ns, name).await?;
    if can_ignore_budgets(&p) {
        let mut opts = original.clone();
        if enforce_resource_version(&p) && opts.precondition_rv.is_none() {
            opts.precondition_rv = object::meta_str(&p, "resourceVersion").map(str::to_string);
        }
        condition_and_delete(state, pods, ns, name, opts).await?;
        return Ok(created_success());
    }
    let budgets = budgets_of(state, &p, ns).await?;
    if budgets.len() > 1 {
        return Err(ApiError::new(
            StatusCode::INTERNAL_SERVER_ERROR,
            "",
            "This pod has more than one PodDisruptionBudget, which the eviction subresource does not support.",
        ));
    }
    let mut pin_version = false;
    let mut pdb_name = String::new();
    if let Some(pdb) = budgets.first() {
        pdb_name = object::name(pdb).to_string();
        let unready_allowed = !pod::is_ready(&p)
            && (pdb.pointer("/spec/unhealthyPodEvictionPolicy") == Some(&json!("AlwaysAllow"))
                || (int(pdb, "/status/currentHealthy") >= int(pdb, "/status/desiredHealthy")
                    && int(pdb, "/status/desiredHealthy") > 0));
        if unready_allowed {
            pin_version = true;
        } else {
            check_and_decrement(state, ns, name, &pdb_name, original.dry_run).await?;
        }
    }
    let mut opts = original.clone();
    if pin_version {
        opts.precondition_rv = object::meta_str(&p, "resourceVersion").map(str::to_string);
    }
    match condition_and_delete(state, pods, ns, name, opts).await {
        Ok(()) => Ok(created_success()),
        Err(e) if e.reason() == "Conflict" && pin_version && original.precondition_rv.is_none() => {
            Err(still_processing(&pdb_name))
        }
        Err(e) => Err(e),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn violation_status_matches_upstream() {
        let e = too_many_requests(
            "The disruption budget web needs 2 healthy pods and has 2 currently".into(),
            0,
        );
        let body: Value = serde_json::from_slice(&e.to_json()).unwrap();
        assert_eq!(
            body,
            json!({"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure",
                "message": VIOLATION, "reason": "TooManyRequests",
                "details": {"causes": [{"reason": "DisruptionBudget",
                    "message": "The disruption budget web needs 2 healthy pods and has 2 currently"}]},
                "code": 429})
        );
        let p = still_processing("web");
        assert_eq!(
            p.status().details.as_ref().unwrap().retry_after_seconds,
            Some(10)
        );
    }

    #[test]
    fn terminal_and_pending_pods_skip_budgets() {
        assert!(can_ignore_budgets(&json!({"status": {"phase": "Pending"}})));
        assert!(can_ignore_budgets(&json!({"status": {"phase": "Failed"}})));
        assert!(!can_ignore_budgets(
            &json!({"status": {"phase": "Running"}})
        ));
        assert!(can_ignore_budgets(
            &json!({"metadata": {"deletionTimestamp": "2020-01-01T00:00:00Z"},
            "status": {"phase": "Running"}})
        ));
        assert!(enforce_resource_version(
            &json!({"status": {"phase": "Pending"}})
        ));
        assert!(!enforce_resource_version(
            &json!({"status": {"phase": "Succeeded"}})
        ));
    }

    #[test]
    fn condition_flips_at_zero() {
        let mut pdb = json!({"status": {"disruptionsAllowed": 0, "observedGeneration": 3}});
        set_disruption_allowed_condition(&mut pdb);
        let c = &pdb["status"]["conditions"][0];
        assert_eq!(c["status"], "False");
        assert_eq!(c["reason"], "InsufficientPods");
        assert_eq!(c["observedGeneration"], 3);
    }
}
