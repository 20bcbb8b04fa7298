//! Type information for built-in kinds, read from the upstream v1.33
//! definitions (`apiserver/openapi/v1.33.0/_definitions.json`, vendored from
//! the PyPI package `kubernetes-validate`; see `apiserver/openapi/README.md`).
//!
//! Strategic merge patch, server-side apply and the OpenAPI documents all
//! read the same data through this module, so they agree on every list's
//! merge key and every map's atomicity.
//!
//! # Contracts
//! - [`definitions`] parses the vendored file once; it is data compiled into
//!   the binary, so a parse failure is a build defect (a test guards it) and
//!   yields an empty table rather than a panic.
//! - A [`Schema`] is a *position* in a type: the node that declares a field
//!   (which carries per-field extensions such as
//!   `x-kubernetes-patch-strategy`) plus the type it resolves to through
//!   `$ref` (which carries per-type extensions such as
//!   `x-kubernetes-map-type`). Extension lookups read the declaration first,
//!   then the type, as kube-openapi does.
//! - Lists without `x-kubernetes-list-type` follow kube-openapi's schema
//!   conversion: patch strategy `merge` with a merge key is a map list keyed
//!   by it, `merge` without a key is a set, anything else is atomic.

use std::collections::HashMap;
use std::sync::OnceLock;

use serde_json::{Map, Value};

/// The vendored definitions, as text.
const DEFINITIONS_JSON: &str = include_str!("../../openapi/v1.33.0/_definitions.json");

/// Prefix of every `$ref` in the vendored file.
const REF_PREFIX: &str = "#/$defs/";

/// The parsed definitions table: type name → JSON Schema node.
#[derive(Debug, Default)]
pub struct Definitions {
    defs: Map<String, Value>,
    by_gvk: HashMap<(String, String, String), String>,
    /// The kind a custom table ([`Definitions::for_custom`]) is built for.
    root: Option<String>,
}

/// The process-wide definitions, parsed on first use.
pub fn definitions() -> &'static Definitions {
    static DEFS: OnceLock<Definitions> = OnceLock::new();
    DEFS.get_or_init(|| Definitions::parse(DEFINITIONS_JSON).unwrap_or_default())
}

impl Definitions {
    /// Parses a `_definitions.json` document (JSON Schema with `$defs`).
    pub fn parse(text: &str) -> Result<Self, String> {
        let mut root: Value = serde_json::from_str(text).map_err(|e| e.to_string())?;
        let defs = match root.get_mut("$defs").map(Value::take) {
            Some(Value::Object(m)) => m,
            _ => return Err("no $defs object".to_owned()),
        };
        let mut by_gvk = HashMap::new();
        for (name, node) in &defs {
            let Some(gvks) = node
                .get("x-kubernetes-group-version-kind")
                .and_then(Value::as_array)
            else {
                continue;
            };
            for gvk in gvks {
                let part = |k: &str| gvk.get(k).and_then(Value::as_str).unwrap_or("").to_owned();
                // DeleteOptions, WatchEvent and friends are listed under every
                // group; the first (and only real) owner of a kind wins.
                by_gvk
                    .entry((part("group"), part("version"), part("kind")))
                    .or_insert_with(|| name.clone());
            }
        }
        Ok(Self {
            defs,
            by_gvk,
            root: None,
        })
    }

    /// The server-side-apply schema of one version of a custom resource:
    /// the kind's published v3 schema
    /// ([`skein_apiextensions::openapi::apply_schema`], with `metadata`,
    /// `apiVersion`, `kind` and embedded resources filled in as upstream)
    /// as one definition, next to `ObjectMeta` and what it references,
    /// cloned from the vendored built-ins. [`Definitions::root`] is the
    /// kind; [`Definitions::for_gvk`] finds it too.
    ///
    /// Object nodes with neither `properties` nor `additionalProperties`
    /// become maps of untyped values, as structured-merge-diff reads
    /// them (granular keys, atomic values), instead of atomic values.
    /// `x-kubernetes-list-type`, `-list-map-keys` and `-map-type` are read
    /// where they stand; lists without them are atomic (a CRD schema has
    /// no patch strategies).
    ///
    /// Errors only for a CRD without that version.
    pub fn for_custom(crd: &Value, version: &str) -> Result<Self, String> {
        use skein_apiextensions::openapi::{self as published, CrdVersion, OBJECT_META};
        let cv = CrdVersion::read(crd, version)?;
        let mut kind = cv.kind_schema(published::Form::Source);
        untyped_object_maps(&mut kind, 0);
        let base = definitions();
        let mut defs: Map<String, Value> = base
            .reachable(OBJECT_META)
            .into_iter()
            .filter_map(|n| base.defs.get(&n).map(|d| (n, d.clone())))
            .collect();
        let name = cv.kind_name();
        defs.insert(name.clone(), kind);
        let mut by_gvk = HashMap::new();
        by_gvk.insert((cv.group, cv.version, cv.kind), name.clone());
        Ok(Self {
            defs,
            by_gvk,
            root: Some(name),
        })
    }

    /// The kind of a table built by [`Definitions::for_custom`] (`None`
    /// for the built-in table).
    pub fn root(&self) -> Option<Schema<'_>> {
        self.named(self.root.as_deref()?)
    }

    /// Every definition reachable from `root` through `$ref` (`root`
    /// included when defined), sorted by name.
    pub fn reachable(&self, root: &str) -> Vec<String> {
        let mut seen: std::collections::BTreeSet<String> = std::collections::BTreeSet::new();
        let mut stack: Vec<String> = vec![root.to_owned()];
        while let Some(name) = stack.pop() {
            let Some(node) = self.defs.get(&name) else {
                continue;
            };
            if !seen.insert(name) {
                continue;
            }
            refs(node, &mut |target| {
                if !seen.contains(target) {
                    stack.push(target.to_owned());
                }
            });
        }
        seen.into_iter().collect()
    }

    /// Every definition by name (`io.k8s.api.apps.v1.Deployment`), raw.
    pub fn raw(&self) -> &Map<String, Value> {
        &self.defs
    }

    /// The definition name of a group/version/kind (`""` is the core group).
    pub fn name_for_gvk(&self, group: &str, version: &str, kind: &str) -> Option<&str> {
        self.by_gvk
            .get(&(group.to_owned(), version.to_owned(), kind.to_owned()))
            .map(String::as_str)
    }

    /// The schema of a whole object of this group/version/kind.
    pub fn for_gvk(&self, group: &str, version: &str, kind: &str) -> Option<Schema<'_>> {
        self.named(self.name_for_gvk(group, version, kind)?)
    }

    /// The schema of a named definition.
    pub fn named(&self, name: &str) -> Option<Schema<'_>> {
        let (name, node) = self.defs.get_key_value(name)?;
        Some(Schema {
            defs: self,
            decl: node,
            ty: node,
            name: Some(name.as_str()),
        })
    }

    fn resolve<'a>(&'a self, node: &'a Value) -> (&'a Value, Option<&'a str>) {
        let mut cur = node;
        let mut name = None;
        // Definitions never chain more than once; bound it anyway.
        for _ in 0..4 {
            match cur
                .get("$ref")
                .and_then(Value::as_str)
                .and_then(|r| r.strip_prefix(REF_PREFIX))
            {
                Some(target) => match self.defs.get_key_value(target) {
                    Some((k, v)) => {
                        cur = v;
                        name = Some(k.as_str());
                    }
                    None => return (&Value::Null, None),
                },
                None => break,
            }
        }
        (cur, name)
    }
}

/// Calls `f` with every `#/$defs/` reference target under `node`.
fn refs(node: &Value, f: &mut impl FnMut(&str)) {
    // Explicit stack: the walk is bounded by the value, not the call stack.
    let mut stack = vec![node];
    while let Some(v) = stack.pop() {
        match v {
            Value::Object(m) => {
                for (k, x) in m {
                    match x.as_str().and_then(|r| r.strip_prefix(REF_PREFIX)) {
                        Some(t) if k == "$ref" => f(t),
                        _ => stack.push(x),
                    }
                }
            }
            Value::Array(a) => stack.extend(a),
            _ => {}
        }
    }
}

/// `{"type":"object"}` without `properties` or `additionalProperties`
/// gets `additionalProperties: {}` (see [`Definitions::for_custom`]).
/// Walks `properties`, `items` and `additionalProperties`, to
/// [`skein_apiextensions::openapi::structural::MAX_DEPTH`].
fn untyped_object_maps(node: &mut Value, depth: usize) {
    if depth > skein_apiextensions::openapi::structural::MAX_DEPTH {
        return;
    }
    let Some(m) = node.as_object_mut() else {
        return;
    };
    if m.get("type").and_then(Value::as_str) == Some("object")
        && !m.contains_key("properties")
        && !m.contains_key("additionalProperties")
    {
        m.insert("additionalProperties".to_owned(), Value::Object(Map::new()));
    }
    if let Some(Value::Object(p)) = m.get_mut("properties") {
        p.values_mut()
            .for_each(|c| untyped_object_maps(c, depth + 1));
    }
    for k in ["items", "additionalProperties"] {
        if let Some(c) = m.get_mut(k) {
            untyped_object_maps(c, depth + 1);
        }
    }
}

/// What a position in a type holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Shape {
    /// An object with named fields (`properties`).
    Struct,
    /// An object whose keys are data (`additionalProperties`).
    Map,
    /// A JSON array.
    List,
    /// A string, number, boolean, int-or-string or quantity.
    Scalar,
    /// Anything (RawExtension, JSON, FieldsV1, unknown types).
    Untyped,
}

/// How a list merges, for server-side apply (and the SMP defaults).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ListType<'a> {
    /// Replaced as a whole.
    Atomic,
    /// Scalars, merged as a set.
    Set,
    /// Objects keyed by these fields.
    Map(Vec<&'a str>),
}

/// The strategic-merge-patch strategy of a field
/// (`x-kubernetes-patch-strategy`, a comma list).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct PatchStrategy {
    /// `merge`: lists merge (by the merge key, or as a set of scalars).
    pub merge: bool,
    /// `retainKeys`: fields absent from the patch are cleared.
    pub retain_keys: bool,
    /// `replace`: the field is replaced whole.
    pub replace: bool,
}

/// A position in a type: see the module docs.
#[derive(Debug, Clone, Copy)]
pub struct Schema<'a> {
    defs: &'a Definitions,
    decl: &'a Value,
    ty: &'a Value,
    name: Option<&'a str>,
}

impl<'a> Schema<'a> {
    fn at(defs: &'a Definitions, decl: &'a Value) -> Self {
        let (ty, name) = defs.resolve(decl);
        Self {
            defs,
            decl,
            ty,
            name,
        }
    }

    /// The definition name of this position's type, when it is a named type.
    pub fn type_name(&self) -> Option<&'a str> {
        self.name
    }

    fn ext(&self, key: &str) -> Option<&'a Value> {
        self.decl.get(key).or_else(|| self.ty.get(key))
    }

    fn has_type(&self, t: &str) -> bool {
        match self.ty.get("type") {
            Some(Value::String(s)) => s == t,
            Some(Value::Array(a)) => a.iter().any(|v| v.as_str() == Some(t)),
            _ => false,
        }
    }

    /// What this position holds.
    pub fn shape(&self) -> Shape {
        if self.ty.get("properties").is_some() {
            Shape::Struct
        } else if self.ty.get("additionalProperties").is_some() {
            Shape::Map
        } else if self.ty.get("items").is_some() || self.has_type("array") {
            Shape::List
        } else if self.ty.get("oneOf").is_some()
            || ["string", "integer", "number", "boolean"]
                .iter()
                .any(|t| self.has_type(t))
        {
            Shape::Scalar
        } else {
            Shape::Untyped
        }
    }

    /// A struct field's schema (`None` for unknown fields and non-structs).
    pub fn field(&self, name: &str) -> Option<Schema<'a>> {
        let node = self.ty.get("properties")?.get(name)?;
        Some(Schema::at(self.defs, node))
    }

    /// Every declared field of a struct, in the file's (alphabetical) order.
    pub fn fields(&self) -> impl Iterator<Item = (&'a str, Schema<'a>)> + 'a {
        let defs = self.defs;
        self.ty
            .get("properties")
            .and_then(Value::as_object)
            .into_iter()
            .flat_map(move |m| {
                m.iter()
                    .map(move |(k, v)| (k.as_str(), Schema::at(defs, v)))
            })
    }

    /// The fields a struct requires (`required`).
    pub fn required(&self) -> Vec<&'a str> {
        self.ty
            .get("required")
            .and_then(Value::as_array)
            .map(|a| a.iter().filter_map(Value::as_str).collect())
            .unwrap_or_default()
    }

    /// A list's element schema.
    pub fn items(&self) -> Option<Schema<'a>> {
        Some(Schema::at(self.defs, self.ty.get("items")?))
    }

    /// A map's value schema.
    pub fn values(&self) -> Option<Schema<'a>> {
        match self.ty.get("additionalProperties")? {
            v @ Value::Object(_) => Some(Schema::at(self.defs, v)),
            _ => None,
        }
    }

    /// The child position for a key of this struct or map: a declared field
    /// of a struct, or the value schema of a map.
    pub fn child(&self, key: &str) -> Option<Schema<'a>> {
        match self.shape() {
            Shape::Struct => self.field(key),
            Shape::Map => self.values(),
            _ => None,
        }
    }

    /// The strategic-merge-patch strategy (`x-kubernetes-patch-strategy`).
    pub fn patch_strategy(&self) -> PatchStrategy {
        let mut out = PatchStrategy::default();
        if let Some(s) = self
            .ext("x-kubernetes-patch-strategy")
            .and_then(Value::as_str)
        {
            for part in s.split(',') {
                match part.trim() {
                    "merge" => out.merge = true,
                    "retainKeys" => out.retain_keys = true,
                    "replace" => out.replace = true,
                    _ => {}
                }
            }
        }
        out
    }

    /// The strategic-merge-patch merge key (`x-kubernetes-patch-merge-key`).
    pub fn patch_merge_key(&self) -> Option<&'a str> {
        self.ext("x-kubernetes-patch-merge-key")
            .and_then(Value::as_str)
    }

    /// The server-side-apply list semantics (see the module docs for the
    /// default when `x-kubernetes-list-type` is absent).
    pub fn list_type(&self) -> ListType<'a> {
        match self.ext("x-kubernetes-list-type").and_then(Value::as_str) {
            Some("map") => {
                let keys = self
                    .ext("x-kubernetes-list-map-keys")
                    .and_then(Value::as_array)
                    .map(|a| a.iter().filter_map(Value::as_str).collect::<Vec<_>>())
                    .unwrap_or_default();
                if keys.is_empty() {
                    ListType::Atomic
                } else {
                    ListType::Map(keys)
                }
            }
            Some("set") => ListType::Set,
            Some(_) => ListType::Atomic,
            None => {
                if self.patch_strategy().merge {
                    match self.patch_merge_key() {
                        Some(k) => ListType::Map(vec![k]),
                        None => ListType::Set,
                    }
                } else {
                    ListType::Atomic
                }
            }
        }
    }

    /// Whether a struct or map is atomic (`x-kubernetes-map-type: atomic`),
    /// i.e. owned and replaced as a whole by server-side apply.
    pub fn is_atomic_map(&self) -> bool {
        self.ext("x-kubernetes-map-type").and_then(Value::as_str) == Some("atomic")
    }

    /// The raw declaration node (the property as written, before `$ref`).
    pub fn declaration(&self) -> &'a Value {
        self.decl
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn deployment() -> Schema<'static> {
        definitions()
            .for_gvk("apps", "v1", "Deployment")
            .expect("Deployment is defined")
    }

    fn path(mut s: Schema<'static>, p: &[&str]) -> Schema<'static> {
        for seg in p {
            s = if *seg == "[]" {
                s.items().expect("list")
            } else {
                s.child(seg).unwrap_or_else(|| panic!("no field {seg}"))
            };
        }
        s
    }

    #[test]
    fn vendored_file_parses_and_indexes_kinds() {
        let d = definitions();
        assert!(d.raw().len() > 700, "{} definitions", d.raw().len());
        assert_eq!(
            d.name_for_gvk("", "v1", "Pod"),
            Some("io.k8s.api.core.v1.Pod")
        );
        assert_eq!(
            d.name_for_gvk("apps", "v1", "Deployment"),
            Some("io.k8s.api.apps.v1.Deployment")
        );
        assert_eq!(
            d.name_for_gvk("autoscaling", "v2", "HorizontalPodAutoscaler"),
            Some("io.k8s.api.autoscaling.v2.HorizontalPodAutoscaler")
        );
    }

    #[test]
    fn containers_merge_on_name() {
        let c = path(deployment(), &["spec", "template", "spec", "containers"]);
        assert_eq!(c.shape(), Shape::List);
        assert!(c.patch_strategy().merge);
        assert_eq!(c.patch_merge_key(), Some("name"));
        assert_eq!(c.list_type(), ListType::Map(vec!["name"]));
        assert_eq!(c.items().map(|i| i.shape()), Some(Shape::Struct));
    }

    #[test]
    fn ports_differ_between_smp_and_ssa() {
        let p = path(
            deployment(),
            &["spec", "template", "spec", "containers", "[]", "ports"],
        );
        assert_eq!(p.patch_merge_key(), Some("containerPort"));
        assert_eq!(
            p.list_type(),
            ListType::Map(vec!["containerPort", "protocol"])
        );
    }

    #[test]
    fn retain_keys_and_atomic_maps() {
        let strategy = path(deployment(), &["spec", "strategy"]);
        assert!(strategy.patch_strategy().retain_keys);
        assert!(!strategy.patch_strategy().merge);
        let volumes = path(deployment(), &["spec", "template", "spec", "volumes"]);
        let ps = volumes.patch_strategy();
        assert!(ps.merge && ps.retain_keys);
        let selector = path(deployment(), &["spec", "selector"]);
        assert!(selector.is_atomic_map());
        assert!(!path(deployment(), &["spec"]).is_atomic_map());
    }

    #[test]
    fn scalars_maps_sets_and_atomic_lists() {
        let labels = path(deployment(), &["metadata", "labels"]);
        assert_eq!(labels.shape(), Shape::Map);
        assert_eq!(labels.values().map(|v| v.shape()), Some(Shape::Scalar));
        let fin = path(deployment(), &["metadata", "finalizers"]);
        assert_eq!(fin.list_type(), ListType::Set);
        let args = path(
            deployment(),
            &["spec", "template", "spec", "containers", "[]", "args"],
        );
        assert_eq!(args.list_type(), ListType::Atomic);
        let replicas = path(deployment(), &["spec", "replicas"]);
        assert_eq!(replicas.shape(), Shape::Scalar);
        let max_surge = path(
            deployment(),
            &["spec", "strategy", "rollingUpdate", "maxSurge"],
        );
        assert_eq!(max_surge.shape(), Shape::Scalar);
        let cpu = path(
            deployment(),
            &[
                "spec",
                "template",
                "spec",
                "containers",
                "[]",
                "resources",
                "limits",
            ],
        );
        assert_eq!(cpu.shape(), Shape::Map);
        assert_eq!(cpu.values().map(|v| v.shape()), Some(Shape::Scalar));
    }

    fn crontab() -> Definitions {
        let crd = serde_json::json!({
            "spec": {
                "group": "stable.example.com",
                "names": {"plural": "crontabs", "kind": "CronTab"},
                "scope": "Namespaced",
                "versions": [{"name": "v1", "served": true, "storage": true, "schema": {
                    "openAPIV3Schema": {"type": "object", "properties": {
                        "spec": {"type": "object", "properties": {
                            "ports": {"type": "array", "x-kubernetes-list-type": "map",
                                "x-kubernetes-list-map-keys": ["name", "protocol"],
                                "items": {"type": "object", "required": ["name"], "properties": {
                                    "name": {"type": "string"}, "protocol": {"type": "string"}}}},
                            "tags": {"type": "array", "x-kubernetes-list-type": "set",
                                "items": {"type": "string"}},
                            "args": {"type": "array", "items": {"type": "string"}},
                            "selector": {"type": "object", "x-kubernetes-map-type": "atomic",
                                "additionalProperties": {"type": "string"}},
                            "config": {"type": "object", "x-kubernetes-preserve-unknown-fields": true},
                            "template": {"type": "object", "x-kubernetes-embedded-resource": true,
                                "x-kubernetes-preserve-unknown-fields": true}}},
                        "status": {"type": "object"}}}}}]
            }
        });
        Definitions::for_custom(&crd, "v1").expect("the version exists")
    }

    #[test]
    fn custom_resources_have_a_schema() {
        let defs = crontab();
        let root = defs.root().expect("root");
        assert_eq!(root.type_name(), Some("com.example.stable.v1.CronTab"));
        assert_eq!(
            defs.for_gvk("stable.example.com", "v1", "CronTab")
                .and_then(|s| s.type_name()),
            Some("com.example.stable.v1.CronTab")
        );
        assert_eq!(root.shape(), Shape::Struct);
        let meta = root.field("metadata").expect("metadata");
        assert_eq!(
            meta.type_name(),
            Some("io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta")
        );
        let labels = meta.field("labels").expect("labels");
        assert_eq!(labels.shape(), Shape::Map);
        let managed = meta.field("managedFields").and_then(|m| m.items());
        assert_eq!(managed.map(|m| m.shape()), Some(Shape::Struct));
        let spec = root.field("spec").expect("spec");
        let ports = spec.field("ports").expect("ports");
        assert_eq!(ports.list_type(), ListType::Map(vec!["name", "protocol"]));
        assert_eq!(
            spec.field("tags").map(|t| t.list_type()),
            Some(ListType::Set)
        );
        assert_eq!(
            spec.field("args").map(|t| t.list_type()),
            Some(ListType::Atomic)
        );
        assert!(spec.field("selector").is_some_and(|s| s.is_atomic_map()));
        // An object without fields is a map of untyped values.
        let status = root.field("status").expect("status");
        assert_eq!(status.shape(), Shape::Map);
        assert_eq!(status.values().map(|v| v.shape()), Some(Shape::Untyped));
        assert_eq!(spec.field("config").map(|c| c.shape()), Some(Shape::Map));
        // Embedded resources get apiVersion, kind and ObjectMeta.
        let tpl = spec.field("template").expect("template");
        assert_eq!(tpl.shape(), Shape::Struct);
        assert_eq!(
            tpl.field("metadata").and_then(|m| m.type_name()),
            Some("io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta")
        );
        assert!(definitions().root().is_none());
    }

    /// Two managers applying different entries of a `map` list keep both,
    /// and a second apply of a changed `atomic` map takes it whole: the
    /// apply engine reads the CRD's list and map types through this schema.
    #[test]
    fn server_side_apply_merges_custom_list_maps() {
        use crate::apply::{Request, apply};
        let defs = crontab();
        let req = |manager: &'static str| Request {
            schema: defs.root(),
            api_version: "stable.example.com/v1",
            kind: "CronTab",
            manager,
            subresource: None,
            status_subresource: true,
            now: "2024-05-01T10:00:00Z",
        };
        let cfg = |port: &str| {
            serde_json::json!({
                "apiVersion": "stable.example.com/v1", "kind": "CronTab",
                "metadata": {"name": "c", "namespace": "default"},
                "spec": {"ports": [{"name": port, "protocol": "TCP"}]}
            })
        };
        let one = apply(&req("a"), None, &cfg("http"), false).expect("first apply");
        let two = apply(&req("b"), Some(&one), &cfg("https"), false).expect("second apply");
        let names: Vec<&str> = two["spec"]["ports"]
            .as_array()
            .map(|a| a.iter().filter_map(|p| p["name"].as_str()).collect())
            .unwrap_or_default();
        assert_eq!(names, ["http", "https"]);
        let managers = two["metadata"]["managedFields"]
            .as_array()
            .map(Vec::len)
            .unwrap_or(0);
        assert_eq!(managers, 2);
    }

    #[test]
    fn custom_without_the_version_is_an_error() {
        let crd = serde_json::json!({"spec": {"group": "a.b", "versions": []}});
        assert!(Definitions::for_custom(&crd, "v1").is_err());
    }

    #[test]
    fn unknown_fields_have_no_schema() {
        assert!(deployment().field("nope").is_none());
        assert!(path(deployment(), &["spec"]).field("nope").is_none());
    }
}
