//! Validation and defaulting of `apiextensions.k8s.io/v1`
//! CustomResourceDefinitions, as apiextensions-apiserver v1.33
//! (`pkg/apis/apiextensions/validation/validation.go`, `v1/defaults.go`,
//! the structural schema rules of `pkg/apiserver/schema`), with upstream's
//! field paths and messages.
//!
//! Upstream validates the internal type, so paths are the internal type's:
//! when every version has the same schema (every single-version CRD), its
//! problems are reported under `spec.validation.openAPIV3Schema`, else
//! under `spec.versions[i].schema.openAPIV3Schema` (see `view.rs`).
//!
//! Call order for a write: [`set_defaults`], then [`prepare_for_create`] or
//! [`prepare_for_update`], then [`validate_create`] or [`validate_update`];
//! [`validate_status`] for writes to the `status` subresource. Generic
//! object metadata (name format, immutable fields) is the registry's.
//! Pure; never panics; schemas nested deeper than 128 levels are refused.

mod approval;
mod columns;
mod conversion;
mod default_values;
mod defaults;
mod field_path;
mod json;
mod names;
mod options;
mod path;
mod pattern;
mod render;
mod rules;
mod schema_props;
mod spec;
mod status;
mod structural;
mod subresources;
mod url;
mod validation;
mod view;

#[cfg(test)]
mod tests;

use serde_json::{Value, json};
use skein_admission::Cause;

pub use approval::API_APPROVED_ANNOTATION;
pub use defaults::{prepare_for_create, prepare_for_update, set_defaults};

use options::Options;
use view::Spec;

/// Problems of a new CRD (after [`set_defaults`] and
/// [`prepare_for_create`]), upstream `ValidateCustomResourceDefinition`:
/// `metadata.name`, the spec, `status.acceptedNames`,
/// `status.storedVersions`, the API approval annotation, and
/// `spec.preserveUnknownFields`. Empty when valid.
pub fn validate_create(crd: &Value) -> Vec<Cause> {
    let mut out = spec::validate_name(crd);
    out.extend(spec::validate_spec(crd, &Options::create()));
    out.extend(common_tail(crd, None));
    out
}

/// Problems of an update from `old` to `new` (after [`set_defaults`] and
/// [`prepare_for_update`]), upstream `ValidateCustomResourceDefinitionUpdate`:
/// everything [`validate_create`] checks except the name, with rules the
/// stored `old` already breaks relaxed (a CRD stored by an older server
/// stays updatable), plus the immutable `spec.group` and
/// `spec.names.plural`, and, once `old` is `Established`, `spec.scope` and
/// `spec.names.kind`.
pub fn validate_update(new: &Value, old: &Value) -> Vec<Cause> {
    let opts = update_options(old);
    let mut out = spec::validate_spec(new, &opts);
    let (n, o) = (Spec::of(new), Spec::of(old));
    let mut immutable = |path: &str, new: &str, old: &str| {
        if new != old {
            out.push(Cause::invalid(path, &json!(new), "field is immutable"));
        }
    };
    if opts.require_immutable_names {
        immutable("spec.scope", n.scope, o.scope);
        immutable(
            "spec.names.kind",
            json::str_of(n.names, "kind"),
            json::str_of(o.names, "kind"),
        );
    }
    immutable("spec.group", n.group, o.group);
    immutable(
        "spec.names.plural",
        json::str_of(n.names, "plural"),
        json::str_of(o.names, "plural"),
    );
    out.extend(common_tail(new, Some(old)));
    out
}

/// Problems of a write to the `status` subresource (upstream
/// `ValidateUpdateCustomResourceDefinitionStatus`): `status.acceptedNames`.
/// Upstream checks `status.storedVersions` only on main-resource writes.
pub fn validate_status(crd: &Value) -> Vec<Cause> {
    status::validate_status(crd)
}

/// `true` when the CRD's `Established` condition is `True`.
pub fn is_established(crd: &Value) -> bool {
    json::items(crd.get("status").unwrap_or(&Value::Null), "conditions")
        .iter()
        .any(|c| json::str_of(c, "type") == "Established" && json::str_of(c, "status") == "True")
}

fn common_tail(crd: &Value, old: Option<&Value>) -> Vec<Cause> {
    let spec = Spec::of(crd);
    let mut out = status::validate_status(crd);
    out.extend(status::validate_stored_versions(crd, &spec.versions));
    out.extend(approval::validate_api_approval(crd, old));
    let old_preserves = old.is_some_and(|o| Spec::of(o).preserve_unknown_fields);
    if !old_preserves && spec.preserve_unknown_fields {
        out.push(Cause::invalid(
            "spec.preserveUnknownFields",
            &json!(true),
            "cannot set to true, set x-kubernetes-preserve-unknown-fields to true in spec.versions[*].schema instead",
        ));
    }
    out
}

/// The rules of an update, relaxed where `old` already breaks them.
fn update_options(old: &Value) -> Options {
    let o = Spec::of(old);
    let established = is_established(old);
    let any = |pred: &dyn Fn(&Value) -> bool| o.schemas().any(|s| spec::schema_has(s, pred, 0));
    let all_versions_have_schema = o
        .validation
        .and_then(|v| json::obj(v, "openAPIV3Schema"))
        .is_some()
        || o.versions.iter().all(|v| {
            v.schema
                .and_then(|s| json::obj(s, "openAPIV3Schema"))
                .is_some()
        });
    let non_structural = o.schemas().any(|s| {
        structural::conversion_error(s).is_some()
            || !structural::validate_structural(s, "").is_empty()
    });
    let invalid_type = |s: &Value| {
        let t = json::str_of(s, "type");
        !t.is_empty() && !["string", "number", "integer", "boolean", "array", "object"].contains(&t)
    };
    let non_atomic_set = |s: &Value| {
        let Some(is) = json::obj(s, "items") else {
            return false;
        };
        if json::opt_str(s, "x-kubernetes-list-type") != Some("set") {
            return false;
        }
        match json::str_of(is, "type") {
            "array" => json::opt_str(is, "x-kubernetes-list-type").is_some_and(|t| t != "atomic"),
            "object" => json::opt_str(is, "x-kubernetes-map-type") != Some("atomic"),
            _ => false,
        }
    };
    let bad_map_list = |s: &Value| !schema_props::map_list_keys_map_set(s, "").is_empty();
    Options {
        allow_defaults: true,
        require_recognized_conversion_review_version: conversion::has_valid_review_version_or_empty(
            o.conversion,
        ),
        require_immutable_names: established,
        require_open_api_schema: all_versions_have_schema,
        require_valid_property_type: !any(&invalid_type),
        require_structural_schema: !non_structural,
        require_pruned_defaults: !o.schemas().any(default_values::has_unpruned_defaults),
        require_atomic_set_type: !any(&non_atomic_set),
        require_map_list_keys_map_set_validation: !any(&bad_map_list),
        allow_invalid_ca_bundle: !established || old_ca_bundle_invalid(o.conversion),
    }
}

/// `true` when the stored conversion webhook has a `caBundle` that does not
/// validate (so keeping it is allowed).
fn old_ca_bundle_invalid(conversion: Option<&Value>) -> bool {
    let Some(c) = conversion else {
        return false;
    };
    let check = json!({"strategy": "Webhook", "webhook": {
        "clientConfig": c.pointer("/webhook/clientConfig").cloned().unwrap_or(Value::Null),
        "conversionReviewVersions": ["v1"]}});
    let has_bundle = c
        .pointer("/webhook/clientConfig/caBundle")
        .and_then(Value::as_str)
        .is_some_and(|b| !b.is_empty());
    has_bundle
        && conversion::validate_conversion(Some(&check), false, false, "c")
            .iter()
            .any(|e| e.field == "c.webhookClientConfig.caBundle")
}
