//! The review resources: create-only, never stored, answered from the
//! request and the server's authenticators and authorizer.
//!
//! - `authentication.k8s.io/v1` `selfsubjectreviews` (`kubectl auth
//!   whoami`) and `tokenreviews` (checks a bearer token with the server's
//!   token authenticators — static tokens, ServiceAccount tokens, OIDC —
//!   for `spec.audiences` or the API audiences, as upstream's TokenReview
//!   REST does).
//! - `authorization.k8s.io/v1` `selfsubjectaccessreviews` (`kubectl auth
//!   can-i`), `subjectaccessreviews`, `localsubjectaccessreviews` and
//!   `selfsubjectrulesreviews` (`kubectl auth can-i --list`), answered by
//!   the server's [`Authorizer`] (allowed and upstream's RBAC reason; the
//!   rules the user holds in the namespace). Without one (router unit
//!   tests) they answer as upstream's `AlwaysAllow`.
//!
//! Invalid specs get upstream's 422 texts; bodies may be JSON or protobuf.

use std::sync::Arc;

use axum::http::{Method, StatusCode};
use axum::response::Response;
use serde_json::{Map, Value, json};

use super::api::{Call, object_response};
use super::authn::Authenticator;
use super::body;
use crate::authz::{Attributes, Authorizer};
use crate::status::{ApiError, Cause};

/// A review resource: group, version, plural, kind, namespaced.
pub struct Review {
    /// API group.
    pub group: &'static str,
    /// Version.
    pub version: &'static str,
    /// Plural (URL segment).
    pub plural: &'static str,
    /// Kind.
    pub kind: &'static str,
    /// Whether it lives in a namespace (`localsubjectaccessreviews`).
    pub namespaced: bool,
}

/// Every review resource, in upstream discovery order per group.
pub static REVIEWS: &[Review] = &[
    Review {
        group: "authentication.k8s.io",
        version: "v1",
        plural: "selfsubjectreviews",
        kind: "SelfSubjectReview",
        namespaced: false,
    },
    Review {
        group: "authentication.k8s.io",
        version: "v1",
        plural: "tokenreviews",
        kind: "TokenReview",
        namespaced: false,
    },
    Review {
        group: "authorization.k8s.io",
        version: "v1",
        plural: "localsubjectaccessreviews",
        kind: "LocalSubjectAccessReview",
        namespaced: true,
    },
    Review {
        group: "authorization.k8s.io",
        version: "v1",
        plural: "selfsubjectaccessreviews",
        kind: "SelfSubjectAccessReview",
        namespaced: false,
    },
    Review {
        group: "authorization.k8s.io",
        version: "v1",
        plural: "selfsubjectrulesreviews",
        kind: "SelfSubjectRulesReview",
        namespaced: false,
    },
    Review {
        group: "authorization.k8s.io",
        version: "v1",
        plural: "subjectaccessreviews",
        kind: "SubjectAccessReview",
        namespaced: false,
    },
];

/// The review served at `group/version/plural`, if any.
pub fn find(group: &str, version: &str, plural: &str) -> Option<&'static Review> {
    REVIEWS
        .iter()
        .find(|r| r.group == group && r.version == version && r.plural == plural)
}

/// Handles a request for a review resource. Only `POST` to the collection
/// exists (405 otherwise, as upstream's create-only storage).
pub(super) async fn handle(
    review: &'static Review,
    namespace: Option<&str>,
    name: Option<&str>,
    call: &Call,
    auth: Option<&Arc<Authenticator>>,
) -> Result<Response, ApiError> {
    if call.method != Method::POST || name.is_some() {
        return Err(ApiError::method_not_allowed());
    }
    if review.namespaced != namespace.is_some() {
        return Err(ApiError::path_not_found());
    }
    let mut obj = decode(review, call)?;
    let user = call.user.clone().ok_or_else(ApiError::unauthorized)?;
    let status = match review.plural {
        "selfsubjectreviews" => json!({"userInfo": user.to_json()}),
        "tokenreviews" => token_review(&obj, auth).await?,
        "selfsubjectrulesreviews" => {
            if spec_str(&obj, "namespace").is_empty() {
                return Err(invalid(review, vec![Cause::required("spec.namespace", "")]));
            }
            let subject = super::authz::subject(&user, call.extra.as_ref());
            rules_review(
                call.authorizer.as_deref(),
                &subject,
                spec_str(&obj, "namespace"),
            )
        }
        _ => {
            access_review(review, &obj, namespace)?;
            let subject = super::authz::subject(&user, call.extra.as_ref());
            decide(call.authorizer.as_deref(), review, &obj, subject)
        }
    };
    if let Some(map) = obj.as_object_mut() {
        map.insert("status".into(), status);
    }
    Ok(object_response(StatusCode::CREATED, &obj, &[]))
}

/// The body as a JSON object with its kind and apiVersion checked and set,
/// and `metadata.creationTimestamp` null as upstream echoes it.
fn decode(review: &Review, call: &Call) -> Result<Value, ApiError> {
    let api_version = format!("{}/{}", review.group, review.version);
    let decoded = body::decode(&body::content_type(&call.headers), &call.body)?;
    let Value::Object(mut map) = decoded.raw else {
        return Err(ApiError::bad_request(format!(
            "{} in version \"{}\" cannot be handled as a {}: the object must be a JSON object",
            review.kind, review.version, review.kind
        )));
    };
    for (field, want) in [("kind", review.kind), ("apiVersion", api_version.as_str())] {
        match map.get(field).and_then(Value::as_str) {
            None | Some("") => {
                map.insert(field.into(), json!(want));
            }
            Some(got) if got != want => {
                return Err(ApiError::bad_request(format!(
                    "{got} in version \"{}\" cannot be handled as a {}: the {field} must be {want}",
                    review.version, review.kind
                )));
            }
            Some(_) => {}
        }
    }
    let meta = map
        .entry("metadata")
        .or_insert_with(|| Value::Object(Map::new()));
    if let Some(meta) = meta.as_object_mut() {
        meta.entry("creationTimestamp").or_insert(Value::Null);
    }
    Ok(Value::Object(map))
}

fn spec_str<'a>(obj: &'a Value, field: &str) -> &'a str {
    obj.get("spec")
        .and_then(|s| s.get(field))
        .and_then(Value::as_str)
        .unwrap_or("")
}

fn invalid(review: &Review, causes: Vec<Cause>) -> ApiError {
    ApiError::invalid(review.group, review.kind, "", causes)
}

/// TokenReview: `spec.token` against the server's token authenticators,
/// for `spec.audiences` (the API audiences when empty). A refused token is
/// `authenticated: false` with upstream's `status.error`.
async fn token_review(obj: &Value, auth: Option<&Arc<Authenticator>>) -> Result<Value, ApiError> {
    let token = spec_str(obj, "token");
    if token.is_empty() {
        return Err(ApiError::bad_request(
            "token is required for TokenReview in authentication",
        ));
    }
    let audiences: Option<Vec<String>> = obj
        .pointer("/spec/audiences")
        .and_then(Value::as_array)
        .filter(|a| !a.is_empty())
        .map(|a| {
            a.iter()
                .filter_map(Value::as_str)
                .map(str::to_string)
                .collect()
        });
    let result = match auth {
        Some(a) => a
            .authenticate_token(token.as_bytes(), audiences.as_deref())
            .await
            .map_err(|e| e.0),
        None => Ok(None),
    };
    Ok(match result {
        Ok(Some((user, auds))) => {
            let mut status = json!({"authenticated": true, "user": user.to_json()});
            if !auds.is_empty() {
                status["audiences"] = json!(auds);
            }
            status
        }
        Ok(None) => json!({"user": {}}),
        // Upstream reports the authenticator's failure in status.error.
        Err(_) => json!({"user": {}, "error": "[invalid bearer token, token lookup failed]"}),
    })
}

/// The three access reviews: spec checks as upstream's validation, then
/// the `AlwaysAllow` answer.
fn access_review(review: &Review, obj: &Value, namespace: Option<&str>) -> Result<(), ApiError> {
    let spec = obj.get("spec").cloned().unwrap_or(Value::Null);
    let resource = spec.get("resourceAttributes").filter(|v| !v.is_null());
    let non_resource = spec.get("nonResourceAttributes").filter(|v| !v.is_null());
    let mut causes = Vec::new();
    if resource.is_some() && non_resource.is_some() {
        causes.push(Cause::invalid(
            "spec.nonResourceAttributes",
            render(non_resource),
            "cannot be specified in combination with resourceAttributes",
        ));
    }
    if resource.is_none() && non_resource.is_none() {
        causes.push(Cause::invalid(
            "spec.resourceAttributes",
            "null",
            "exactly one of nonResourceAttributes or resourceAttributes must be specified",
        ));
    }
    let user = spec.get("user").and_then(Value::as_str).unwrap_or("");
    let groups = spec
        .get("groups")
        .and_then(Value::as_array)
        .is_some_and(|g| !g.is_empty());
    match review.plural {
        "subjectaccessreviews" | "localsubjectaccessreviews" if user.is_empty() && !groups => {
            causes.push(Cause::invalid(
                "spec.user",
                "\"\"",
                "at least one of user or group must be specified",
            ));
        }
        "selfsubjectaccessreviews" => {}
        _ => {}
    }
    if review.plural == "localsubjectaccessreviews" {
        let ns = namespace.unwrap_or("");
        let want = resource
            .and_then(|r| r.get("namespace"))
            .and_then(Value::as_str)
            .unwrap_or("");
        if obj
            .pointer("/metadata/namespace")
            .and_then(Value::as_str)
            .is_some_and(|m| m != ns)
        {
            return Err(ApiError::bad_request(
                "the namespace of the provided object does not match the namespace sent on the request",
            ));
        }
        if resource.is_some() && want != ns {
            causes.push(Cause::invalid(
                "spec.resourceAttributes.namespace",
                format!("\"{want}\""),
                "must match metadata.namespace",
            ));
        }
    }
    if !causes.is_empty() {
        return Err(invalid(review, causes));
    }
    Ok(())
}

/// The access review's status: the authorizer's decision on the spec's
/// attributes, for the spec's user (the caller for the self review).
fn decide(
    authorizer: Option<&Authorizer>,
    review: &Review,
    obj: &Value,
    caller: skein_admission::UserInfo,
) -> Value {
    let Some(authorizer) = authorizer else {
        return json!({"allowed": true});
    };
    let spec = obj.get("spec").cloned().unwrap_or(Value::Null);
    let user = if review.plural == "selfsubjectaccessreviews" {
        caller
    } else {
        let strings = |v: Option<&Value>| -> Vec<String> {
            v.and_then(Value::as_array)
                .map(|a| {
                    a.iter()
                        .filter_map(Value::as_str)
                        .map(str::to_string)
                        .collect()
                })
                .unwrap_or_default()
        };
        skein_admission::UserInfo {
            name: spec
                .get("user")
                .and_then(Value::as_str)
                .unwrap_or("")
                .to_string(),
            uid: spec
                .get("uid")
                .and_then(Value::as_str)
                .filter(|u| !u.is_empty())
                .map(str::to_string),
            groups: strings(spec.get("groups")),
            extra: spec
                .get("extra")
                .and_then(Value::as_object)
                .map(|m| {
                    m.iter()
                        .map(|(k, v)| (k.clone(), strings(Some(v))))
                        .collect()
                })
                .unwrap_or_default(),
        }
    };
    let field = |v: &Value, f: &str| v.get(f).and_then(Value::as_str).unwrap_or("").to_string();
    let attrs = match spec.get("resourceAttributes").filter(|v| !v.is_null()) {
        Some(r) => Attributes {
            user,
            verb: field(r, "verb"),
            resource_request: true,
            api_group: field(r, "group"),
            api_version: match field(r, "version") {
                v if v.is_empty() => "*".to_string(),
                v => v,
            },
            resource: field(r, "resource"),
            subresource: field(r, "subresource"),
            namespace: field(r, "namespace"),
            name: field(r, "name"),
            ..Attributes::default()
        },
        None => {
            let n = spec
                .get("nonResourceAttributes")
                .cloned()
                .unwrap_or(Value::Null);
            Attributes {
                user,
                verb: field(&n, "verb"),
                path: field(&n, "path"),
                ..Attributes::default()
            }
        }
    };
    let d = authorizer.authorize(&attrs);
    let mut status = json!({"allowed": d.allowed});
    if !d.reason.is_empty() {
        status["reason"] = json!(d.reason);
    }
    status
}

/// SelfSubjectRulesReview's status: every rule `user` holds in
/// `namespace`, split into resource and non-resource rules as upstream.
fn rules_review(
    authorizer: Option<&Authorizer>,
    user: &skein_admission::UserInfo,
    namespace: &str,
) -> Value {
    let always;
    let authorizer = match authorizer {
        Some(a) => a,
        None => {
            always = Authorizer::always_allow();
            &always
        }
    };
    let (rules, errors) = authorizer.rules_for(user, namespace);
    let mut resource_rules = Vec::new();
    let mut non_resource_rules = Vec::new();
    for r in &rules {
        if !r.resources.is_empty() {
            let mut rule = json!({"verbs": r.verbs});
            for (k, v) in [
                ("apiGroups", &r.api_groups),
                ("resources", &r.resources),
                ("resourceNames", &r.resource_names),
            ] {
                if !v.is_empty() {
                    rule[k] = json!(v);
                }
            }
            resource_rules.push(rule);
        }
        if !r.non_resource_urls.is_empty() {
            non_resource_rules
                .push(json!({"verbs": r.verbs, "nonResourceURLs": r.non_resource_urls}));
        }
    }
    let mut status = json!({
        "resourceRules": resource_rules,
        "nonResourceRules": non_resource_rules,
        "incomplete": false
    });
    if !errors.is_empty() {
        status["evaluationError"] = json!(crate::authz::rbac::aggregate(&errors));
    }
    status
}

fn render(v: Option<&Value>) -> String {
    v.map(Value::to_string).unwrap_or_else(|| "null".into())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_review_is_found_by_path() {
        for r in REVIEWS {
            assert!(std::ptr::eq(find(r.group, r.version, r.plural).unwrap(), r));
        }
        assert!(find("authorization.k8s.io", "v1", "roles").is_none());
    }

    #[test]
    fn access_reviews_need_attributes_and_a_subject() {
        let sar = find("authorization.k8s.io", "v1", "subjectaccessreviews").unwrap();
        let err = access_review(sar, &json!({"spec": {}}), None).unwrap_err();
        assert_eq!(
            err.message(),
            "SubjectAccessReview.authorization.k8s.io \"\" is invalid: [spec.resourceAttributes: Invalid value: null: exactly one of nonResourceAttributes or resourceAttributes must be specified, spec.user: Invalid value: \"\": at least one of user or group must be specified]"
        );
        let obj = json!({"spec": {"user": "alice", "resourceAttributes": {"verb": "get", "resource": "pods"}}});
        access_review(sar, &obj, None).unwrap();
        let caller = skein_admission::UserInfo::default();
        assert_eq!(
            decide(None, sar, &obj, caller.clone()),
            json!({"allowed": true})
        );
        let rbac = Authorizer::new(vec![crate::authz::Mode::Rbac], None);
        assert_eq!(
            decide(Some(&rbac), sar, &obj, caller),
            json!({"allowed": false})
        );
    }
}
