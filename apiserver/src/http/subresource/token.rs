//! `POST serviceaccounts/{name}/token` (TokenRequest, upstream
//! `pkg/registry/core/serviceaccount/storage/token.go`): issues a signed
//! ServiceAccount token ([`crate::http::authn::serviceaccount`]).
//!
//! In upstream's order: a body `metadata.name` / `namespace` must match
//! the URL (422); the ServiceAccount must exist (404); `spec.audiences`
//! defaults to the API audiences and `spec.expirationSeconds` to 3600, which
//! must be at least 600 and at most 2^32 (422, upstream's texts); a
//! `spec.boundObjectRef` must be a `v1` Pod (running as this account) or
//! Secret that exists, with the given uid if any (400 / 404 / 409); an
//! expiration over `--service-account-max-token-expiration` is shortened
//! to it. The answer is 201 with the TokenRequest, `status.token` and
//! `status.expirationTimestamp`.

use axum::http::{Method, StatusCode};
use axum::response::Response;
use serde_json::{Value, json};

use super::super::AppState;
use super::super::api::{Call, object_response};
use super::super::authn::serviceaccount::{Ref, SaToken};
use super::super::authn::unix_now;
use super::super::body;
use super::super::status::{ApiError, Cause};
use super::allow;
use crate::registry::object;
use crate::registry::{ResourceInfo, resource};

/// Upstream's default `spec.expirationSeconds`.
pub const DEFAULT_EXPIRATION: i64 = 3600;
/// Upstream's minimum `spec.expirationSeconds`.
pub const MIN_EXPIRATION: i64 = 600;

const GROUP: &str = "authentication.k8s.io";

fn invalid(name: &str, cause: Cause) -> ApiError {
    ApiError::invalid(GROUP, "TokenRequest", name, vec![cause])
}

/// `POST serviceaccounts/{name}/token`.
pub(in crate::http) async fn create(
    state: &AppState,
    call: &Call,
    res: &ResourceInfo,
    ns: &str,
    name: &str,
) -> Result<Response, ApiError> {
    allow(call, &[Method::POST])?;
    let Some((issuer, _)) = call.auth.as_ref().and_then(|a| a.service_accounts.as_ref()) else {
        return Err(ApiError::new(
            StatusCode::NOT_IMPLEMENTED,
            "NotImplemented",
            "serviceaccounts/token: this server issues no service account tokens",
        ));
    };
    let mut req = body::decode(&body::content_type(&call.headers), &call.body)?.raw;
    if !req.is_object() {
        return Err(ApiError::bad_request(
            "the body must be a TokenRequest object",
        ));
    }
    let meta = |f: &str| {
        req.pointer(&format!("/metadata/{f}"))
            .and_then(Value::as_str)
            .unwrap_or("")
            .to_string()
    };
    let (body_name, body_ns) = (meta("name"), meta("namespace"));
    if !body_name.is_empty() && body_name != name {
        return Err(invalid(
            name,
            Cause::invalid(
                "metadata.name",
                format!("{body_name:?}"),
                "must match the service account name if specified",
            ),
        ));
    }
    if !body_ns.is_empty() && body_ns != ns {
        return Err(invalid(
            name,
            Cause::invalid(
                "metadata.namespace",
                format!("{body_ns:?}"),
                "must match the service account namespace if specified",
            ),
        ));
    }
    let account = state.registry.get(res, ns, name).await?;
    let account_uid = object::meta_str(&account, "uid").unwrap_or("").to_string();

    let mut audiences: Vec<String> = req
        .pointer("/spec/audiences")
        .and_then(Value::as_array)
        .map(|a| {
            a.iter()
                .filter_map(Value::as_str)
                .map(str::to_string)
                .collect()
        })
        .unwrap_or_default();
    if audiences.is_empty() {
        audiences = issuer.api_audiences().to_vec();
    }
    let mut seconds = match req.pointer("/spec/expirationSeconds") {
        None | Some(Value::Null) => DEFAULT_EXPIRATION,
        Some(v) => v
            .as_i64()
            .ok_or_else(|| ApiError::bad_request("spec.expirationSeconds must be an integer"))?,
    };
    if seconds < MIN_EXPIRATION {
        return Err(invalid(
            "",
            Cause::invalid(
                "spec.expirationSeconds",
                seconds.to_string(),
                "may not specify a duration less than 10 minutes",
            ),
        ));
    }
    if seconds > 1 << 32 {
        return Err(invalid(
            "",
            Cause::invalid(
                "spec.expirationSeconds",
                seconds.to_string(),
                "may not specify a duration larger than 2^32 seconds",
            ),
        ));
    }

    let mut token = SaToken {
        namespace: ns.to_string(),
        account: Ref {
            name: name.to_string(),
            uid: account_uid,
        },
        pod: None,
        node: None,
        secret: None,
        audiences: audiences.clone(),
        jti: uuid::Uuid::new_v4().to_string(),
    };
    if let Some(r) = req.pointer("/spec/boundObjectRef").filter(|r| !r.is_null()) {
        bind(state, &mut token, r, ns, name).await?;
    }
    if let Some(max) = issuer.max_expiration()
        && seconds as u64 > max
    {
        seconds = max as i64;
    }
    let now = unix_now();
    let jwt = issuer
        .issue(&token, now, seconds as u64)
        .map_err(|e| ApiError::internal(format!("signing the token failed: {e}")))?;

    req["apiVersion"] = json!("authentication.k8s.io/v1");
    req["kind"] = json!("TokenRequest");
    let created = rfc3339(now);
    let m = &mut req["metadata"];
    if !m.is_object() {
        *m = json!({});
    }
    m["name"] = json!(name);
    m["namespace"] = json!(ns);
    m["creationTimestamp"] = json!(created);
    if !req["spec"].is_object() {
        req["spec"] = json!({});
    }
    req["spec"]["audiences"] = json!(audiences);
    req["spec"]["expirationSeconds"] = json!(seconds);
    if req["spec"].get("boundObjectRef").is_none() {
        req["spec"]["boundObjectRef"] = Value::Null;
    }
    req["status"] = json!({
        "token": jwt,
        "expirationTimestamp": rfc3339(now + seconds as u64),
    });
    Ok(object_response(StatusCode::CREATED, &req, &[]))
}

/// Binds the token to the `boundObjectRef` `r` (upstream's checks).
async fn bind(
    state: &AppState,
    token: &mut SaToken,
    r: &Value,
    ns: &str,
    account: &str,
) -> Result<(), ApiError> {
    let field = |f: &str| r.get(f).and_then(Value::as_str).unwrap_or("").to_string();
    let (api_version, kind, obj_name, want_uid) = (
        field("apiVersion"),
        field("kind"),
        field("name"),
        field("uid"),
    );
    let (group, version) = match api_version.split_once('/') {
        Some((g, v)) => (g.to_string(), v.to_string()),
        None => (String::new(), api_version.clone()),
    };
    let plural = match (group.as_str(), kind.as_str()) {
        ("", "Pod") => "pods",
        ("", "Secret") => "secrets",
        _ => {
            return Err(ApiError::bad_request(format!(
                "cannot bind token for serviceaccount {account:?} to object of type {group}/{version}, Kind={kind}"
            )));
        }
    };
    let Some(res) = resource::builtin("", "v1", plural) else {
        return Err(ApiError::internal(format!("no {plural} resource")));
    };
    let obj = state.registry.get(&res, ns, &obj_name).await?;
    let uid = object::meta_str(&obj, "uid").unwrap_or("").to_string();
    if plural == "pods" {
        let sa = obj
            .pointer("/spec/serviceAccountName")
            .and_then(Value::as_str)
            .unwrap_or("");
        if sa != account {
            return Err(ApiError::bad_request(format!(
                "cannot bind token for serviceaccount {account:?} to pod running with different serviceaccount name."
            )));
        }
    }
    if !want_uid.is_empty() && want_uid != uid {
        return Err(ApiError::conflict(
            "",
            &kind,
            &obj_name,
            &format!(
                "the UID in the bound object reference ({want_uid}) does not match the UID in record. The object might have been deleted and then recreated"
            ),
        ));
    }
    let reference = Ref {
        name: obj_name,
        uid,
    };
    if plural == "pods" {
        token.node = obj
            .pointer("/spec/nodeName")
            .and_then(Value::as_str)
            .filter(|n| !n.is_empty())
            .map(str::to_string);
        token.pod = Some(reference);
    } else {
        token.secret = Some(reference);
    }
    Ok(())
}

fn rfc3339(secs: u64) -> String {
    time::OffsetDateTime::from_unix_timestamp(secs as i64)
        .ok()
        .and_then(|t| {
            t.format(&time::format_description::well_known::Rfc3339)
                .ok()
        })
        .unwrap_or_default()
}
