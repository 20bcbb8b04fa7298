//! Why admission refused a request: the crate's one error type.

use crate::attributes::{Attributes, GroupVersionKind, qualify};

/// A refusal by an admission plugin (the crate-boundary error type).
///
/// Each variant maps to exactly one `metav1.Status` `code` and `reason`
/// ([`Denial::code`], [`Denial::reason`]); [`Denial::status_message`] gives the
/// `message` the way upstream words it, so `kubectl` prints the familiar
/// text. A denial is final for the request: the apiserver returns it and
/// stores nothing. None of them is retryable as-is except, at the client's
/// discretion, [`Denial::Internal`].
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum Denial {
    /// The request is not allowed (policy, quota, a terminating namespace...).
    ///
    /// HTTP 403, reason `"Forbidden"` (upstream `admission.NewForbidden` →
    /// `apierrors.NewForbidden`). Status details: `group` = the resource's
    /// group, `kind` = the plural resource, `name` = the object name.
    #[error("admission plugin {plugin:?} denied the request: {message}")]
    Forbidden {
        /// Name of the plugin that said no ([`crate::Mutate::name`]).
        plugin: String,
        /// Why, for the user; upstream prefixes it with
        /// `<resource> "<name>" is forbidden: `.
        message: String,
    },
    /// The object violates a field-level rule.
    ///
    /// HTTP 422, reason `"Invalid"` (upstream `apierrors.NewInvalid`). Status
    /// details: `group`, `kind`, `name` and one `causes[]` entry per
    /// [`Cause`]. The display text is upstream's message verbatim:
    /// `Deployment.apps "web" is invalid: spec.replicas: Invalid value: -1: must be >= 0`.
    #[error("{}", invalid_message(.group, .kind, .name, .causes))]
    Invalid {
        /// API group of the object's kind; `""` for the core group.
        group: String,
        /// The object's kind, e.g. `"Deployment"`.
        kind: String,
        /// The object's name (may be empty on create with `generateName`).
        name: String,
        /// What is wrong, field by field; normally at least one.
        causes: Vec<Cause>,
    },
    /// The request itself is malformed in a way only admission noticed
    /// (e.g. an object a plugin cannot interpret).
    ///
    /// HTTP 400, reason `"BadRequest"` (upstream `apierrors.NewBadRequest`).
    #[error("{message}")]
    BadRequest {
        /// Why, for the user.
        message: String,
    },
    /// The plugin could not decide (a bug, or a dependency it consults is
    /// unavailable). The request is refused rather than let through.
    ///
    /// HTTP 500, reason `"InternalError"` (upstream
    /// `apierrors.NewInternalError`, message `Internal error occurred: ...`).
    #[error("admission plugin {plugin:?} failed: {message}")]
    Internal {
        /// Name of the failing plugin.
        plugin: String,
        /// What went wrong.
        message: String,
    },
}

impl Denial {
    /// A [`Denial::Forbidden`] from `plugin`.
    pub fn forbidden(plugin: impl Into<String>, message: impl Into<String>) -> Self {
        Denial::Forbidden {
            plugin: plugin.into(),
            message: message.into(),
        }
    }

    /// A [`Denial::Invalid`] for the object `name` of kind `gvk`.
    pub fn invalid(gvk: &GroupVersionKind, name: impl Into<String>, causes: Vec<Cause>) -> Self {
        Denial::Invalid {
            group: gvk.group.clone(),
            kind: gvk.kind.clone(),
            name: name.into(),
            causes,
        }
    }

    /// A [`Denial::BadRequest`].
    pub fn bad_request(message: impl Into<String>) -> Self {
        Denial::BadRequest {
            message: message.into(),
        }
    }

    /// A [`Denial::Internal`] from `plugin`.
    pub fn internal(plugin: impl Into<String>, message: impl Into<String>) -> Self {
        Denial::Internal {
            plugin: plugin.into(),
            message: message.into(),
        }
    }

    /// The HTTP status code and `metav1.Status.code`: 403, 422, 400 or 500.
    pub fn code(&self) -> u16 {
        match self {
            Denial::Forbidden { .. } => 403,
            Denial::Invalid { .. } => 422,
            Denial::BadRequest { .. } => 400,
            Denial::Internal { .. } => 500,
        }
    }

    /// The `metav1.Status.reason`: `"Forbidden"`, `"Invalid"`, `"BadRequest"`
    /// or `"InternalError"`.
    pub fn reason(&self) -> &'static str {
        match self {
            Denial::Forbidden { .. } => "Forbidden",
            Denial::Invalid { .. } => "Invalid",
            Denial::BadRequest { .. } => "BadRequest",
            Denial::Internal { .. } => "InternalError",
        }
    }

    /// The `metav1.Status.message` for this denial of the request `attrs`,
    /// worded as upstream does:
    ///
    /// - Forbidden: `deployments.apps "web" is forbidden: <message>` (the name
    ///   falls back to `object.metadata.name`, and is left out when both are
    ///   empty: `pods is forbidden: <message>`);
    /// - Invalid: the display text (it already names kind and object);
    /// - BadRequest: the message as is;
    /// - Internal: `Internal error occurred: <display text>`.
    pub fn status_message(&self, attrs: &Attributes) -> String {
        match self {
            Denial::Forbidden { message, .. } => {
                let resource = attrs.gvr.qualified_resource();
                let name = if attrs.name.is_empty() {
                    attrs
                        .object
                        .as_ref()
                        .and_then(|o| o.pointer("/metadata/name"))
                        .and_then(|n| n.as_str())
                        .unwrap_or_default()
                } else {
                    attrs.name.as_str()
                };
                if name.is_empty() {
                    format!("{resource} is forbidden: {message}")
                } else {
                    format!("{resource} {name:?} is forbidden: {message}")
                }
            }
            Denial::Invalid { .. } => self.to_string(),
            Denial::BadRequest { message } => message.clone(),
            Denial::Internal { .. } => format!("Internal error occurred: {self}"),
        }
    }
}

/// Upstream's `NewInvalid` message: `Kind.group "name" is invalid: ...`, with
/// one cause as `field: message` and several as `[a, b]`.
fn invalid_message(group: &str, kind: &str, name: &str, causes: &[Cause]) -> String {
    let head = format!("{} {name:?} is invalid", qualify(kind, group));
    let rendered: Vec<String> = causes.iter().map(Cause::to_string).collect();
    match rendered.as_slice() {
        [] => head,
        [one] => format!("{head}: {one}"),
        many => format!("{head}: [{}]", many.join(", ")),
    }
}

/// One field-level problem: a `metav1.StatusCause` (upstream `field.Error`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Cause {
    /// JSON path of the offending field, e.g. `"spec.template.spec.containers[0].image"`;
    /// empty if the problem is not tied to one field.
    pub field: String,
    /// The cause type, one of the `FIELD_VALUE_*` constants, e.g.
    /// [`Cause::FIELD_VALUE_INVALID`] (`"FieldValueInvalid"`).
    pub reason: String,
    /// The problem without the field path, upstream's `ErrorBody()`, e.g.
    /// `Invalid value: -1: must be greater than or equal to 0`.
    pub message: String,
}

impl Cause {
    /// A required field is missing.
    pub const FIELD_VALUE_REQUIRED: &'static str = "FieldValueRequired";
    /// A value is malformed or out of range.
    pub const FIELD_VALUE_INVALID: &'static str = "FieldValueInvalid";
    /// A value is not one of the supported ones.
    pub const FIELD_VALUE_NOT_SUPPORTED: &'static str = "FieldValueNotSupported";
    /// A value is valid but not allowed here (by policy, or immutable).
    pub const FIELD_VALUE_FORBIDDEN: &'static str = "FieldValueForbidden";
    /// A value that must be unique is repeated.
    pub const FIELD_VALUE_DUPLICATE: &'static str = "FieldValueDuplicate";
    /// A value refers to something that does not exist.
    pub const FIELD_VALUE_NOT_FOUND: &'static str = "FieldValueNotFound";
    /// A value is longer than allowed.
    pub const FIELD_VALUE_TOO_LONG: &'static str = "FieldValueTooLong";
    /// A list has more items than allowed.
    pub const FIELD_VALUE_TOO_MANY: &'static str = "FieldValueTooMany";

    /// A cause from its three parts.
    pub fn new(
        field: impl Into<String>,
        reason: impl Into<String>,
        message: impl Into<String>,
    ) -> Self {
        Self {
            field: field.into(),
            reason: reason.into(),
            message: message.into(),
        }
    }

    /// `field: Invalid value: <value>: <detail>` (upstream `field.Invalid`).
    /// The value is rendered as kube-apiserver 1.33 renders it
    /// ([`render_value`]): strings quoted, string lists as
    /// `[]string{"a", "b"}`, string maps as `map[string]string{"k":"v"}`.
    pub fn invalid(
        field: impl Into<String>,
        value: &serde_json::Value,
        detail: impl AsRef<str>,
    ) -> Self {
        Self::invalid_rendered(field, &render_value(value), detail)
    }

    /// Like [`Cause::invalid`], with the value already rendered (for the Go
    /// struct renderings upstream prints, e.g. `v1.LabelSelector{...}`).
    pub fn invalid_rendered(
        field: impl Into<String>,
        rendered: &str,
        detail: impl AsRef<str>,
    ) -> Self {
        Self::new(
            field,
            Self::FIELD_VALUE_INVALID,
            with_detail(&format!("Invalid value: {rendered}"), detail.as_ref()),
        )
    }

    /// `field: Unsupported value: <value>: supported values: "a", "b"`
    /// (upstream `field.NotSupported`).
    pub fn not_supported(
        field: impl Into<String>,
        value: &serde_json::Value,
        supported: &[&str],
    ) -> Self {
        let quoted: Vec<String> = supported.iter().map(|s| quote(s)).collect();
        let detail = if quoted.is_empty() {
            String::new()
        } else {
            format!("supported values: {}", quoted.join(", "))
        };
        Self::new(
            field,
            Self::FIELD_VALUE_NOT_SUPPORTED,
            with_detail(
                &format!("Unsupported value: {}", render_value(value)),
                &detail,
            ),
        )
    }

    /// `field: Duplicate value: <value>` (upstream `field.Duplicate`).
    pub fn duplicate(field: impl Into<String>, value: &serde_json::Value) -> Self {
        Self::duplicate_rendered(field, &render_value(value))
    }

    /// Like [`Cause::duplicate`], with the value already rendered.
    pub fn duplicate_rendered(field: impl Into<String>, rendered: &str) -> Self {
        Self::new(
            field,
            Self::FIELD_VALUE_DUPLICATE,
            format!("Duplicate value: {rendered}"),
        )
    }

    /// `field: Not found: <value>` (upstream `field.NotFound`).
    pub fn not_found(field: impl Into<String>, value: &serde_json::Value) -> Self {
        Self::new(
            field,
            Self::FIELD_VALUE_NOT_FOUND,
            format!("Not found: {}", render_value(value)),
        )
    }

    /// `field: Too long: may not be more than <max> bytes` (upstream
    /// `field.TooLong`).
    pub fn too_long(field: impl Into<String>, max: usize) -> Self {
        // v1.33's field.TooLong says "bytes" whatever the number.
        Self::new(
            field,
            Self::FIELD_VALUE_TOO_LONG,
            format!("Too long: may not be more than {max} bytes"),
        )
    }

    /// `field: Required value[: <detail>]` (upstream `field.Required`).
    pub fn required(field: impl Into<String>, detail: impl AsRef<str>) -> Self {
        Self::new(
            field,
            Self::FIELD_VALUE_REQUIRED,
            with_detail("Required value", detail.as_ref()),
        )
    }

    /// `field: Forbidden[: <detail>]` (upstream `field.Forbidden`).
    pub fn forbidden(field: impl Into<String>, detail: impl AsRef<str>) -> Self {
        Self::new(
            field,
            Self::FIELD_VALUE_FORBIDDEN,
            with_detail("Forbidden", detail.as_ref()),
        )
    }
}

/// A bad value as kube-apiserver 1.33 prints it in a field error
/// (`apimachinery/pkg/util/validation/field/errors.go`, `ErrorBody`: simple
/// types with `%v`/`%q`, everything else with Go's `%#v`; 1.34 switched to
/// JSON). Strings, numbers and booleans print as themselves (strings
/// quoted); a list of strings as `[]string{"a", "b"}`; an object of string
/// values as `map[string]string{"a":"b"}` (keys sorted, as Go prints maps);
/// anything else as compact JSON, the closest stable rendering of a Go
/// struct we can give without the Go type.
pub fn render_value(value: &serde_json::Value) -> String {
    use serde_json::Value;
    match value {
        Value::Null => "null".to_owned(),
        Value::String(s) => quote(s),
        Value::Array(items) if items.iter().all(Value::is_string) => {
            let parts: Vec<String> = items.iter().map(render_value).collect();
            format!("[]string{{{}}}", parts.join(", "))
        }
        Value::Object(map) if map.values().all(Value::is_string) => {
            let mut keys: Vec<&String> = map.keys().collect();
            keys.sort();
            let parts: Vec<String> = keys
                .into_iter()
                .map(|k| format!("{}:{}", quote(k), render_value(&map[k.as_str()])))
                .collect();
            format!("map[string]string{{{}}}", parts.join(", "))
        }
        other => other.to_string(),
    }
}

/// A string quoted the way Go's `%q` does ([`crate::gofmt::quote`]).
pub use crate::gofmt::quote;

fn with_detail(head: &str, detail: &str) -> String {
    if detail.is_empty() {
        head.to_owned()
    } else {
        format!("{head}: {detail}")
    }
}

impl std::fmt::Display for Cause {
    /// `field: message`, or just `message` when no field is named.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        if self.field.is_empty() {
            f.write_str(&self.message)
        } else {
            write!(f, "{}: {}", self.field, self.message)
        }
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::{GroupVersionResource, Operation};

    fn deployment() -> GroupVersionKind {
        GroupVersionKind::new("apps", "v1", "Deployment")
    }

    #[test]
    fn code_and_reason_per_variant() {
        let cases = [
            (Denial::forbidden("P", "no"), 403, "Forbidden"),
            (
                Denial::invalid(&deployment(), "web", vec![]),
                422,
                "Invalid",
            ),
            (Denial::bad_request("what"), 400, "BadRequest"),
            (Denial::internal("P", "oops"), 500, "InternalError"),
        ];
        for (denial, code, reason) in cases {
            assert_eq!(denial.code(), code, "{denial:?}");
            assert_eq!(denial.reason(), reason, "{denial:?}");
        }
    }

    #[test]
    fn invalid_message_matches_upstream() {
        let replicas = Cause::invalid("spec.replicas", &json!(-1), "must be >= 0");
        let image = Cause::required("spec.template.spec.containers[0].image", "");
        let cases = [
            (
                Denial::invalid(&deployment(), "web", vec![]),
                r#"Deployment.apps "web" is invalid"#,
            ),
            (
                Denial::invalid(&deployment(), "web", vec![replicas.clone()]),
                r#"Deployment.apps "web" is invalid: spec.replicas: Invalid value: -1: must be >= 0"#,
            ),
            (
                Denial::invalid(
                    &GroupVersionKind::new("", "v1", "Pod"),
                    "p",
                    vec![replicas, image],
                ),
                r#"Pod "p" is invalid: [spec.replicas: Invalid value: -1: must be >= 0, spec.template.spec.containers[0].image: Required value]"#,
            ),
        ];
        for (denial, want) in cases {
            assert_eq!(denial.to_string(), want);
        }
    }

    #[test]
    fn cause_constructors() {
        let cases = [
            (
                Cause::invalid("metadata.name", &json!("Bad_Name"), "must be lower case"),
                Cause::FIELD_VALUE_INVALID,
                r#"Invalid value: "Bad_Name": must be lower case"#,
            ),
            (
                Cause::invalid("x", &json!(true), ""),
                Cause::FIELD_VALUE_INVALID,
                "Invalid value: true",
            ),
            (
                Cause::required("spec.selector", ""),
                Cause::FIELD_VALUE_REQUIRED,
                "Required value",
            ),
            (
                Cause::forbidden("spec.selector", "field is immutable"),
                Cause::FIELD_VALUE_FORBIDDEN,
                "Forbidden: field is immutable",
            ),
        ];
        for (cause, reason, message) in cases {
            assert_eq!(cause.reason, reason);
            assert_eq!(cause.message, message);
        }
        assert_eq!(
            Cause::new("", "R", "whole object").to_string(),
            "whole object"
        );
    }

    #[test]
    fn status_message_per_variant() {
        let mut attrs = Attributes::new(
            Operation::Create,
            GroupVersionResource::new("apps", "v1", "deployments"),
            deployment(),
            "web",
        );
        let forbidden = Denial::forbidden("NamespaceLifecycle", "namespace ns is terminating");
        assert_eq!(
            forbidden.status_message(&attrs),
            r#"deployments.apps "web" is forbidden: namespace ns is terminating"#
        );
        assert_eq!(
            forbidden.to_string(),
            r#"admission plugin "NamespaceLifecycle" denied the request: namespace ns is terminating"#
        );

        // generateName: no name in the URL; fall back to the object, then to none.
        attrs.name.clear();
        attrs.object = Some(json!({"metadata": {"name": "web-x7k2p"}}));
        assert_eq!(
            forbidden.status_message(&attrs),
            r#"deployments.apps "web-x7k2p" is forbidden: namespace ns is terminating"#
        );
        attrs.object = Some(json!({"metadata": {"generateName": "web-"}}));
        assert_eq!(
            forbidden.status_message(&attrs),
            "deployments.apps is forbidden: namespace ns is terminating"
        );

        let invalid = Denial::invalid(&deployment(), "web", vec![Cause::required("spec", "")]);
        assert_eq!(invalid.status_message(&attrs), invalid.to_string());
        assert_eq!(
            Denial::bad_request("cannot decode").status_message(&attrs),
            "cannot decode"
        );
        assert_eq!(
            Denial::internal("Quota", "lookup failed").status_message(&attrs),
            r#"Internal error occurred: admission plugin "Quota" failed: lookup failed"#
        );
    }
}
