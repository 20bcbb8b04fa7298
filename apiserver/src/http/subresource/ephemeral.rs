//! `pods/ephemeralcontainers` (upstream `EphemeralContainersREST` with
//! `podEphemeralContainersStrategy`): GET the Pod; PUT a Pod or PATCH one
//! (JSON, merge or strategic merge, as `kubectl debug` sends) and only
//! `spec.ephemeralContainers` is taken from it.
//!
//! Validation (upstream `ValidatePodEphemeralContainersUpdate`): the new
//! ephemeral containers as the Pod validation checks them (unique names
//! across all containers, an image, no ports, probes, resources, lifecycle,
//! resize or restart policy, no `subPath`, a target that is a regular
//! container), existing ephemeral containers may be neither removed nor
//! changed, and static pods have none. Errors are 422 `Pod "p" is invalid`.
//!
//! [`serve`] is the GET/PUT/PATCH frame shared with `pods/resize`.

use axum::http::{Method, StatusCode};
use axum::response::Response;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::StatusDetails;
use serde_json::{Value, json};
use skein_admission::{Cause as AdmissionCause, Denial, GroupVersionKind};

use super::super::AppState;
use super::super::api::{Call, object_response, write_options};
use super::super::body;
use super::super::patch::{PATCH_TYPES, PatchType, apply_document, schema_of};
use super::super::status::ApiError;
use super::allow;
use crate::registry::{ResourceInfo, object};

/// How a subresource derives the Pod to store from the stored one and the
/// Pod the client sent: `(stored, sent) -> new`, validated.
pub type Take = fn(&str, &Value, &Value) -> Result<Value, ApiError>;

/// 422 `Pod "name" is invalid: …` from admission-style causes.
pub fn invalid_pod(name: &str, causes: Vec<AdmissionCause>) -> ApiError {
    let message = Denial::invalid(
        &GroupVersionKind::new("", "v1", "Pod"),
        name,
        causes.clone(),
    )
    .to_string();
    let mut e = ApiError::new(StatusCode::UNPROCESSABLE_ENTITY, "Invalid", message).with_details(
        StatusDetails {
            name: (!name.is_empty()).then(|| name.to_string()),
            kind: Some("Pod".into()),
            ..StatusDetails::default()
        },
    );
    for c in causes {
        e = e.with_cause(&c.reason, &c.message, &c.field);
    }
    e
}

/// GET, PUT and PATCH of a Pod subresource whose writes keep all but what
/// `take` copies from the sent Pod.
pub(in crate::http) async fn serve(
    state: &AppState,
    call: &Call,
    res: &ResourceInfo,
    ns: &str,
    name: &str,
    subresource: &'static str,
    take: Take,
) -> Result<Response, ApiError> {
    allow(call, &[Method::GET, Method::PUT, Method::PATCH])?;
    if call.method == Method::GET {
        let p = state.registry.get(res, ns, name).await?;
        return Ok(object_response(StatusCode::OK, &p, &[]));
    }
    let (options, sent, patch_type) = if call.method == Method::PUT {
        let (obj, _) = call.admitted_body(state.registry.resources(), res, "UpdateOptions")?;
        let sent_name = object::name(&obj);
        if !sent_name.is_empty() && sent_name != name {
            return Err(ApiError::bad_request(format!(
                "the name of the object ({sent_name}) does not match the name on the URL ({name})"
            )));
        }
        ("UpdateOptions", Some(obj), None)
    } else {
        let ct = body::content_type(&call.headers);
        let Some(t) = PatchType::from_content_type(&ct).filter(|t| *t != PatchType::Apply) else {
            return Err(ApiError::unsupported_media_type(PATCH_TYPES));
        };
        ("PatchOptions", None, Some(t))
    };
    let mut opts = write_options(call, options)?;
    opts.subresource = Some(subresource);
    let updated = state
        .registry
        .update_subresource(res, ns, name, subresource, &opts, |stored| {
            let wanted = match (&sent, patch_type) {
                (Some(obj), _) => obj.clone(),
                (None, Some(t)) => {
                    let patched = apply_document(t, &call.body, stored, schema_of(res))?;
                    res.normalize(patched).map_err(|e| {
                        ApiError::bad_request(format!(
                            "Pod in version \"v1\" cannot be handled as a Pod: {e}"
                        ))
                    })?
                }
                (None, None) => stored.clone(),
            };
            let mut next = take(name, stored, &wanted)?;
            let rv = object::meta_str(&wanted, "resourceVersion")
                .filter(|_| sent.is_some())
                .map(|rv| json!(rv));
            object::set_meta(&mut next, "resourceVersion", rv);
            Ok(next)
        })
        .await?;
    Ok(object_response(StatusCode::OK, &updated, &[]))
}

/// The ephemeral containers of a pod by name.
fn ephemeral_by_name(pod: &Value) -> Vec<(&str, &Value)> {
    pod.pointer("/spec/ephemeralContainers")
        .and_then(Value::as_array)
        .map(|a| {
            a.iter()
                .map(|c| (c.get("name").and_then(Value::as_str).unwrap_or(""), c))
                .collect()
        })
        .unwrap_or_default()
}

/// The stored Pod with the sent Pod's ephemeral containers (defaulted),
/// validated as upstream.
fn take_ephemeral(name: &str, stored: &Value, sent: &Value) -> Result<Value, ApiError> {
    let mut next = stored.clone();
    let list = sent
        .pointer("/spec/ephemeralContainers")
        .filter(|v| v.as_array().is_some_and(|a| !a.is_empty()))
        .cloned();
    if let Some(spec) = next.get_mut("spec").and_then(Value::as_object_mut) {
        match list {
            Some(l) => {
                spec.insert("ephemeralContainers".into(), l);
            }
            None => {
                spec.remove("ephemeralContainers");
            }
        }
    }
    skein_admission::defaults::apply("", "v1", "Pod", &mut next, false);
    if stored
        .pointer("/metadata/annotations/kubernetes.io~1config.mirror")
        .is_some()
    {
        return Err(invalid_pod(
            name,
            vec![AdmissionCause::forbidden(
                "",
                "static pods do not support ephemeral containers",
            )],
        ));
    }
    let mut causes: Vec<AdmissionCause> =
        skein_admission::validation::validate("", "Pod", &next, None)
            .into_iter()
            .filter(|c| c.field.starts_with("spec.ephemeralContainers["))
            .collect();
    let new = ephemeral_by_name(&next);
    for (old_name, old) in ephemeral_by_name(stored) {
        match new.iter().find(|(n, _)| *n == old_name) {
            None => causes.push(AdmissionCause::forbidden(
                "spec.ephemeralContainers",
                format!("existing ephemeral containers {old_name:?} may not be removed\n"),
            )),
            Some((_, c)) if *c != old => causes.push(AdmissionCause::forbidden(
                format!("spec.ephemeralContainers[{old_name}]"),
                format!("existing ephemeral containers {old_name:?} may not be changed\n"),
            )),
            Some(_) => {}
        }
    }
    if causes.is_empty() {
        Ok(next)
    } else {
        Err(invalid_pod(name, causes))
    }
}

/// `pods/{name}/ephemeralcontainers`.
pub(in crate::http) async fn handle(
    state: &AppState,
    call: &Call,
    res: &ResourceInfo,
    ns: &str,
    name: &str,
) -> Result<Response, ApiError> {
    serve(
        state,
        call,
        res,
        ns,
        name,
        "ephemeralcontainers",
        take_ephemeral,
    )
    .await
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pod(ephemeral: Value) -> Value {
        json!({"metadata": {"name": "p1"}, "spec": {
            "containers": [{"name": "app", "image": "nginx"}],
            "ephemeralContainers": ephemeral}})
    }

    #[test]
    fn only_ephemeral_containers_are_taken() {
        let stored = pod(json!([]));
        let mut sent = pod(json!([{"name": "debugger", "image": "busybox"}]));
        sent["spec"]["containers"][0]["image"] = json!("changed");
        let next = take_ephemeral("p1", &stored, &sent).unwrap();
        assert_eq!(next["spec"]["containers"][0]["image"], "nginx");
        assert_eq!(next["spec"]["ephemeralContainers"][0]["name"], "debugger");
    }

    #[test]
    fn existing_ephemeral_containers_stay() {
        let stored = take_ephemeral(
            "p1",
            &pod(json!([])),
            &pod(json!([{"name": "debugger", "image": "busybox"}])),
        )
        .unwrap();
        let e = take_ephemeral("p1", &stored, &pod(json!([]))).unwrap_err();
        assert_eq!(e.code().as_u16(), 422);
        assert!(
            e.message()
                .contains("existing ephemeral containers \"debugger\" may not be removed"),
            "{}",
            e.message()
        );
    }

    #[test]
    fn ports_and_duplicate_names_are_invalid() {
        let e = take_ephemeral(
            "p1",
            &pod(json!([])),
            &pod(json!([{"name": "app", "image": "busybox",
                "ports": [{"containerPort": 80}]}])),
        )
        .unwrap_err();
        let m = e.message();
        assert!(m.starts_with("Pod \"p1\" is invalid: "), "{m}");
        assert!(
            m.contains("spec.ephemeralContainers[0].name: Duplicate value: \"app\""),
            "{m}"
        );
        assert!(
            m.contains("spec.ephemeralContainers[0].ports: Forbidden: cannot be set for an Ephemeral Container"),
            "{m}"
        );
    }
}
