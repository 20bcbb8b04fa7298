//! Structural schemas applied to custom resources, as apiextensions-apiserver
//! v1.33 applies a CRD version's `openAPIV3Schema`
//! (`pkg/apiserver/schema/`, `pkg/apiserver/validation/`, kube-openapi's
//! `pkg/validation/validate`).
//!
//! A [`Structural`] is parsed once per CRD version and shared. The request
//! path runs, in upstream's order:
//! 1. [`Structural::prune`] on decode (pruning, `null`s without `nullable`
//!    or `default` dropped, `ObjectMeta` decoding of `metadata` and of
//!    embedded resources' metadata) — its paths feed `fieldValidation`;
//! 2. [`Structural::default`] (create, update and read);
//! 3. [`Structural::validate`] / [`Structural::validate_update`] (schema
//!    rules, embedded resources' type and object metadata, list-type
//!    uniqueness).
//!
//! Known differences from upstream: errors come in a fixed order (object
//! keys in map order, schema properties by name) where Go's map iteration
//! is random; `ObjectMeta` decoding drops unknown and empty fields but
//! does not re-encode timestamps or coerce types; embedded resources'
//! metadata is checked for name, generateName, namespace, generation,
//! labels and annotations (not owner references, finalizers or managed
//! fields); `uri` and `email` approximate Go's `net/url` and `net/mail`;
//! a `pattern` Go accepts but the `regex` crate does not fails with the
//! crate's wording; ratcheting does not reproduce upstream's lookup of
//! grandchildren of uncorrelated fields in the parent's old value.
//!
//! Nothing here panics on any input, and recursion follows the schema,
//! whose depth [`Structural::parse`] bounds ([`MAX_SCHEMA_DEPTH`]); values
//! below a schema's reach are walked iteratively or not at all.

mod defaulting;
mod failure;
mod format;
mod gofmt;
mod list_type;
mod node;
mod object_meta;
mod path;
mod pattern;
mod prune;
mod validator;

#[cfg(test)]
mod tests;

use std::sync::Arc;

use serde_json::Value;
use skein_admission::Cause;

pub use failure::FIELD_VALUE_TYPE_INVALID;
pub use node::MAX_SCHEMA_DEPTH;

/// Deepest body [`Structural::validate`] looks into: a deeper value (only
/// possible when the JSON decoder's own limit is lifted) is refused with
/// one error rather than walked, so no input overflows the stack.
pub const MAX_BODY_DEPTH: usize = 512;

/// How deeply `v` nests (a scalar is 1, `[[]]` is 2), found without
/// recursion.
pub fn nesting_depth(v: &Value) -> usize {
    let mut max = 0;
    let mut stack = vec![(v, 1usize)];
    while let Some((v, depth)) = stack.pop() {
        max = max.max(depth);
        match v {
            Value::Array(items) => stack.extend(items.iter().map(|i| (i, depth + 1))),
            Value::Object(map) => stack.extend(map.values().map(|i| (i, depth + 1))),
            _ => {}
        }
    }
    max
}

/// The error for a body nested deeper than [`MAX_BODY_DEPTH`].
fn too_deep() -> Cause {
    Cause::new(
        "<nil>",
        Cause::FIELD_VALUE_INVALID,
        format!("Invalid value: \"\": nesting exceeds {MAX_BODY_DEPTH} levels"),
    )
}

use node::Node;

/// A CRD version's structural schema, ready to prune, default and validate
/// custom resources. Cheap to clone (shared).
#[derive(Debug, Clone)]
pub struct Structural {
    root: Arc<Node>,
}

impl Structural {
    /// Reads `schema`, the `openAPIV3Schema` of an already validated CRD
    /// version. Formats apiextensions does not validate are dropped, as
    /// upstream drops them; `pattern`s compile here (one that does not
    /// compile fails validation with upstream's "pattern is invalid" text).
    /// Fails on a non-object schema, a keyword of the wrong JSON type, or
    /// nesting deeper than [`MAX_SCHEMA_DEPTH`]. Never panics.
    pub fn parse(schema: &Value) -> Result<Structural, String> {
        let mut root = Node::parse(schema, "openAPIV3Schema", 0)?;
        prune_defaults(&mut root);
        Ok(Structural {
            root: Arc::new(root),
        })
    }

    /// Applies `default`s (upstream `structuraldefaulting.Default`): a
    /// missing field, or a `null` the schema does not allow, takes its
    /// default, then fields and items are defaulted in turn. Idempotent.
    /// Run it after [`Structural::prune`] on create and update, and on
    /// every read from storage.
    pub fn default(&self, obj: &mut Value) {
        defaulting::apply(obj, &self.root);
    }

    /// Drops what the schema does not know, as upstream's decoder does
    /// (`PruneWithOptions`, `PruneNonNullableNullsWithoutDefaults`, and
    /// `ObjectMeta` decoding of the root's and embedded resources'
    /// `metadata`). The root and embedded resources keep `apiVersion`,
    /// `kind` and `metadata`; `x-kubernetes-preserve-unknown-fields` keeps
    /// unknown fields (known ones below are still pruned).
    ///
    /// Returns the dropped fields' paths as upstream reports them, which
    /// `fieldValidation=Strict` turns into `strict decoding error: unknown
    /// field "spec.foo"` and `Warn` into warnings: `metadata.*` first
    /// (`metadata.foo`, `metadata.ownerReferences[0].x`), then the pruned
    /// paths sorted (`spec.foo`, `spec.list[0].x`, `spec.map.key.x`), then
    /// embedded resources' metadata (`spec.template.metadata.foo`).
    pub fn prune(&self, obj: &mut Value) -> Vec<String> {
        let mut paths = match obj {
            Value::Object(map) => object_meta::coerce_metadata(map, ""),
            _ => Vec::new(),
        };
        let root = &self.root;
        paths.extend(prune::prune_root(root, obj));
        prune::prune_nulls(obj, Some(root));
        let mut embedded = Vec::new();
        object_meta::coerce_embedded(obj, root, &path::Path::Root, &mut embedded);
        embedded.sort();
        paths.extend(embedded);
        paths
    }

    /// Validates `obj` (already pruned and defaulted): the schema's rules
    /// with upstream's paths (rooted at the object: `spec.replicas`),
    /// messages and cause types, then embedded resources (`apiVersion`,
    /// `kind`, object metadata), then `x-kubernetes-list-type` uniqueness.
    /// Junctor failures (`anyOf`...) carry upstream's `<nil>` field.
    /// A body nested deeper than [`MAX_BODY_DEPTH`] gets one error instead.
    pub fn validate(&self, obj: &Value) -> Vec<Cause> {
        if nesting_depth(obj) > MAX_BODY_DEPTH {
            return vec![too_deep()];
        }
        let mut out = self.schema_causes(obj, None);
        self.embedded_causes(obj, &mut out);
        self.list_causes(obj, &mut out);
        out
    }

    /// Validates an update: like [`Structural::validate`], with CRD
    /// validation ratcheting (GA, always on in 1.33): schema errors of a
    /// value that is unchanged from `old` (correlated by field name, and
    /// by key in `x-kubernetes-list-type: map` lists) are dropped, and
    /// list-type uniqueness is checked only if `old` passed it.
    pub fn validate_update(&self, new: &Value, old: &Value) -> Vec<Cause> {
        if nesting_depth(new) > MAX_BODY_DEPTH || nesting_depth(old) > MAX_BODY_DEPTH {
            return vec![too_deep()];
        }
        let mut out = self.schema_causes(new, Some(old));
        self.embedded_causes(new, &mut out);
        let mut old_lists = Vec::new();
        self.list_causes(old, &mut old_lists);
        if old_lists.is_empty() {
            self.list_causes(new, &mut out);
        }
        out
    }

    /// Validates an update through the `status` subresource (upstream
    /// `statusStrategy.ValidateUpdate`): only `status` is checked against
    /// the `status` property's schema, with ratcheting, messages naming
    /// paths relative to it (`conditions in body ...`) and fields under
    /// `status` (`status.conditions`); then list-type uniqueness of the
    /// whole object if `old` passed it.
    pub fn validate_status_update(&self, new: &Value, old: &Value) -> Vec<Cause> {
        if nesting_depth(new) > MAX_BODY_DEPTH || nesting_depth(old) > MAX_BODY_DEPTH {
            return vec![too_deep()];
        }
        let mut out = Vec::new();
        if let (Some(schema), Some(status)) =
            (self.root.properties.get("status"), new.get("status"))
        {
            out.extend(
                validator::validate(schema, status, &path::Path::Root, old.get("status"), true)
                    .errors
                    .iter()
                    .map(|f| f.to_cause_under(Some("status"))),
            );
        }
        let mut old_lists = Vec::new();
        self.list_causes(old, &mut old_lists);
        if old_lists.is_empty() {
            self.list_causes(new, &mut out);
        }
        out
    }

    fn schema_causes(&self, obj: &Value, old: Option<&Value>) -> Vec<Cause> {
        validator::validate(&self.root, obj, &path::Path::Root, old, true)
            .errors
            .iter()
            .map(failure::Failure::to_cause)
            .collect()
    }

    fn embedded_causes(&self, obj: &Value, out: &mut Vec<Cause>) {
        object_meta::validate(obj, &self.root, &path::Path::Root, out);
    }

    fn list_causes(&self, obj: &Value, out: &mut Vec<Cause>) {
        if let Value::Object(map) = obj {
            list_type::validate(&self.root, map, &path::Path::Root, out);
        }
    }
}

/// Upstream `PruneDefaults`: every `default` is pruned by its own schema.
fn prune_defaults(node: &mut Node) {
    if let Some(default) = node.default.as_mut() {
        let mut value = std::mem::take(default);
        let snapshot = node.clone();
        prune::prune_value(&snapshot, &mut value);
        node.default = Some(value);
    }
    for prop in node.properties.values_mut() {
        prune_defaults(prop);
    }
    if let Some(node::Additional::Schema(s)) = node.additional.as_mut() {
        prune_defaults(s);
    }
    if let Some(items) = node.items.as_mut() {
        prune_defaults(items);
    }
}
