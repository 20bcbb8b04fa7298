//! Custom resources: the resource-table rows served from
//! CustomResourceDefinitions, and what a CRD version brings to the write
//! and read paths (normalization: defaulting and pruning; validation:
//! structural schema and CEL rules; scale paths; deprecation warnings).
//!
//! # Contracts
//! - [`rows`] is pure: CRD objects in, rows and per-CRD naming outcomes out.
//!   Only CRDs whose names are accepted get rows; a terminating CRD keeps its
//!   rows (its objects must be listable and deletable) until its finalizer
//!   is gone.
//! - A [`CustomVersion`] is built once per CRD change and shared by every
//!   request through the table snapshot; nothing in it is compiled per
//!   request.
//! - Built-in names are never shadowed: a CRD whose group/plural or kind is
//!   already served gets `NamesAccepted=False` and no rows.

use std::collections::{BTreeMap, HashSet};
use std::sync::Arc;

use serde_json::{Map, Value, json};
use skein_admission::Cause;

use super::resource::{self, ResourceInfo, ScaleMapping, intern, intern_list};

/// The CRD resource's group.
pub const GROUP: &str = "apiextensions.k8s.io";
/// The finalizer that deletes a CRD's objects before the CRD goes.
pub const CLEANUP_FINALIZER: &str = "customresourcecleanup.apiextensions.k8s.io";

/// The `scale` subresource paths of a CRD version (`.spec.replicas` form).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CustomScale {
    /// `specReplicasPath`.
    pub spec_replicas: String,
    /// `statusReplicasPath`.
    pub status_replicas: String,
    /// `labelSelectorPath`, when set.
    pub label_selector: Option<String>,
}

/// One served version of a CRD, as the request paths need it.
pub struct CustomVersion {
    /// The CRD's `metadata.name` (`crontabs.stable.example.com`).
    pub crd_name: String,
    /// The CRD's uid (objects are served only while it is the same CRD).
    pub crd_uid: String,
    /// The CRD object (spec as accepted; read by OpenAPI and tables).
    pub crd: Value,
    /// This version's name.
    pub version: String,
    /// The storage version's name.
    pub storage_version: String,
    /// `deprecated` with its warning text (upstream's default text when the
    /// CRD gives none).
    pub deprecation_warning: Option<String>,
    /// The `scale` subresource, if any.
    pub scale: Option<CustomScale>,
    /// Whether the CRD is being deleted (creates are refused).
    pub terminating: bool,
    /// The server-side-apply schema of this version, built on first use
    /// ([`CustomVersion::apply_definitions`]).
    pub apply_schema: std::sync::OnceLock<Option<crate::schema::Definitions>>,
    /// The structural schema (validation, pruning, defaulting); `None`
    /// when the version has no usable schema.
    pub structural: Option<skein_apiextensions::schema::Structural>,
    /// The CEL rules of this version's schema.
    pub rules: Option<skein_apiextensions::cel::Rules>,
    /// The Table columns (`additionalPrinterColumns`, default `Age`).
    pub columns: Arc<crate::table::CustomColumns>,
    /// The Table columns of the `scale` subresource.
    pub scale_columns: Option<Arc<crate::table::CustomColumns>>,
    /// How objects change versions (`spec.conversion`), shared by the
    /// CRD's versions.
    pub converter: Arc<super::conversion::custom::CustomConverter>,
}

impl std::fmt::Debug for CustomVersion {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("CustomVersion")
            .field("crd_name", &self.crd_name)
            .field("version", &self.version)
            .field("storage_version", &self.storage_version)
            .finish_non_exhaustive()
    }
}

impl CustomVersion {
    /// The server-side-apply schema of this version
    /// ([`crate::schema::Definitions::for_custom`]), built once.
    pub fn apply_definitions(&self) -> Option<&crate::schema::Definitions> {
        self.apply_schema
            .get_or_init(|| crate::schema::Definitions::for_custom(&self.crd, &self.version).ok())
            .as_ref()
    }

    /// This version's entry in `spec.versions`.
    pub fn spec_version(&self) -> Option<&Value> {
        versions(&self.crd).find(|v| v.get("name").and_then(Value::as_str) == Some(&self.version))
    }

    /// This version's `openAPIV3Schema`.
    pub fn schema(&self) -> Option<&Value> {
        self.spec_version()?.get("schema")?.get("openAPIV3Schema")
    }

    /// This version's `additionalPrinterColumns` (`null` when none).
    pub fn printer_columns(&self) -> &Value {
        self.spec_version()
            .and_then(|v| v.get("additionalPrinterColumns"))
            .unwrap_or(&Value::Null)
    }

    /// The object as stored: `metadata` decoded as `ObjectMeta` (unknown
    /// metadata fields dropped, as upstream's decoder), then defaults
    /// applied and unknown fields pruned by the structural schema.
    pub fn normalize(&self, mut v: Value) -> Result<Value, serde_json::Error> {
        if let Some(map) = v.as_object_mut()
            && let Some(meta) = map.get_mut("metadata")
        {
            let typed: k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta =
                serde_json::from_value(meta.take())?;
            *meta = serde_json::to_value(typed)?;
        }
        if let Some(s) = &self.structural {
            s.prune(&mut v);
            s.default(&mut v);
        }
        Ok(v)
    }

    /// Defaults applied on read, as upstream defaults stored objects when
    /// they are decoded.
    pub fn default_on_read(&self, v: &mut Value) {
        if let Some(s) = &self.structural {
            s.default(v);
        }
    }

    /// Stored objects as `api_version` (this version's) serves them:
    /// converted (strategy `None`: `apiVersion` rewritten; `Webhook`: one
    /// review for every object not already in this version), then
    /// defaulted. Objects are stored in the version they were written in,
    /// so reads convert whatever version they find, as upstream after a
    /// storage-version change.
    pub async fn present_all(
        &self,
        api_version: &str,
        objects: Vec<Value>,
    ) -> Result<Vec<Value>, crate::status::ApiError> {
        let mut out = self.converter.convert(objects, api_version).await?;
        for o in &mut out {
            self.default_on_read(o);
        }
        Ok(out)
    }

    /// [`CustomVersion::present_all`] of one object.
    pub async fn present_one(
        &self,
        api_version: &str,
        obj: Value,
    ) -> Result<Value, crate::status::ApiError> {
        let mut out = self.present_all(api_version, vec![obj]).await?;
        out.pop()
            .ok_or_else(|| crate::status::ApiError::internal("conversion returned no object"))
    }

    /// [`CustomVersion::present_one`] from synchronous code on the server's
    /// (multi-threaded) runtime: a webhook call blocks this worker only
    /// (`block_in_place`). Strategy `None` never blocks.
    pub fn present_blocking(
        &self,
        api_version: &str,
        mut obj: Value,
    ) -> Result<Value, crate::status::ApiError> {
        use super::conversion::custom::CustomConverter;
        if matches!(*self.converter, CustomConverter::None)
            || obj.get("apiVersion").and_then(Value::as_str) == Some(api_version)
        {
            self.present(api_version, &mut obj);
            return Ok(obj);
        }
        let handle = tokio::runtime::Handle::try_current()
            .map_err(|_| crate::status::ApiError::internal("conversion needs a runtime"))?;
        if handle.runtime_flavor() != tokio::runtime::RuntimeFlavor::MultiThread {
            return Err(crate::status::ApiError::internal(
                "webhook conversion inside a read-modify-write needs the multi-threaded runtime",
            ));
        }
        tokio::task::block_in_place(|| handle.block_on(self.present_one(api_version, obj)))
    }

    /// A stored object as this version serves it: `apiVersion` rewritten
    /// (conversion strategy `None`, as upstream's nop converter) and
    /// defaults applied, as upstream decodes stored objects.
    pub fn present(&self, api_version: &str, obj: &mut Value) {
        if let Some(map) = obj.as_object_mut()
            && map.get("apiVersion").and_then(Value::as_str) != Some(api_version)
        {
            map.insert("apiVersion".into(), Value::String(api_version.to_string()));
        }
        self.default_on_read(obj);
    }

    /// Schema and CEL validation of a write (`old` on updates).
    /// Schema errors come first; CEL rules run unless a schema error
    /// blocks them (upstream's `hasBlockingErr`). Returns the causes and the
    /// warnings (ratcheted rule failures) to send.
    pub fn validate(&self, new: &Value, old: Option<&Value>) -> (Vec<Cause>, Vec<String>) {
        let mut causes = match (&self.structural, old) {
            (Some(s), Some(old)) => s.validate_update(new, old),
            (Some(s), None) => s.validate(new),
            (None, _) => Vec::new(),
        };
        let mut warnings = Vec::new();
        if let Some(rules) = &self.rules
            && !rules.is_empty()
        {
            match skein_apiextensions::cel::blocking_cause(&causes) {
                Some(blocking) => causes.push(blocking),
                None => {
                    let outcome = rules.validate_with_warnings(new, old);
                    causes.extend(outcome.causes);
                    warnings = outcome.warnings;
                }
            }
        }
        (causes, warnings)
    }

    /// Validation of a `/status` write: only `status`, against its schema.
    pub fn validate_status(&self, new: &Value, old: &Value) -> (Vec<Cause>, Vec<String>) {
        let mut causes = match &self.structural {
            Some(s) => s.validate_status_update(new, old),
            None => Vec::new(),
        };
        let mut warnings = Vec::new();
        if let Some(rules) = &self.rules
            && !rules.is_empty()
        {
            match skein_apiextensions::cel::blocking_cause(&causes) {
                Some(blocking) => causes.push(blocking),
                None => {
                    let outcome = rules.validate_with_warnings(new, Some(old));
                    causes.extend(outcome.causes);
                    warnings = outcome.warnings;
                }
            }
        }
        (causes, warnings)
    }
}

/// The group of Skein's own API, whose CRDs the server installs.
pub const FEDERATION_GROUP: &str = "federation.skein.io";

/// Refuses a user's write or delete of a CRD of Skein's own API group: the
/// server installs and upgrades those at start.
pub fn guard_federation(res: &ResourceInfo, name: &str) -> Result<(), crate::status::ApiError> {
    if super::admit::is_crd(res) && name.ends_with(&format!(".{FEDERATION_GROUP}")) {
        return Err(crate::status::ApiError::forbidden(
            GROUP,
            "customresourcedefinitions",
            name,
            &format!(
                "{name} is part of Skein's own API ({FEDERATION_GROUP}): the server installs and upgrades it at start, and it cannot be changed or deleted"
            ),
        ));
    }
    Ok(())
}

/// Sets a condition in `status.conditions` (replacing one of the same type;
/// `lastTransitionTime` kept when the status did not change).
pub fn set_condition(obj: &mut Value, kind: &str, status: bool, reason: &str, message: &str) {
    let Some(root) = obj.as_object_mut() else {
        return;
    };
    let st = root.entry("status").or_insert_with(|| json!({}));
    if !st.is_object() {
        *st = json!({});
    }
    let Some(st) = st.as_object_mut() else {
        return;
    };
    let list = st.entry("conditions").or_insert_with(|| json!([]));
    if !list.is_array() {
        *list = json!([]);
    }
    let Some(list) = list.as_array_mut() else {
        return;
    };
    let status_text = if status { "True" } else { "False" };
    let now = super::object::now_rfc3339();
    let existing = list
        .iter_mut()
        .find(|c| c.get("type").and_then(Value::as_str) == Some(kind));
    match existing {
        Some(c) => {
            let changed = c.get("status").and_then(Value::as_str) != Some(status_text);
            c["status"] = json!(status_text);
            c["reason"] = json!(reason);
            c["message"] = json!(message);
            if changed || c.get("lastTransitionTime").is_none() {
                c["lastTransitionTime"] = json!(now);
            }
        }
        None => list.push(json!({
            "type": kind,
            "status": status_text,
            "lastTransitionTime": now,
            "reason": reason,
            "message": message,
        })),
    }
}

/// `spec.versions` of a CRD.
pub fn versions(crd: &Value) -> impl Iterator<Item = &Value> {
    crd.pointer("/spec/versions")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
}

fn str_at<'a>(v: &'a Value, pointer: &str) -> &'a str {
    v.pointer(pointer).and_then(Value::as_str).unwrap_or("")
}

fn strings_at(v: &Value, pointer: &str) -> Vec<String> {
    v.pointer(pointer)
        .and_then(Value::as_array)
        .map(|a| {
            a.iter()
                .filter_map(Value::as_str)
                .map(str::to_string)
                .collect()
        })
        .unwrap_or_default()
}

/// The names a CRD asks for (`spec.names`).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Names {
    /// `plural`.
    pub plural: String,
    /// `singular` (defaulted to lower-case kind).
    pub singular: String,
    /// `kind`.
    pub kind: String,
    /// `listKind` (defaulted to `<kind>List`).
    pub list_kind: String,
    /// `shortNames`.
    pub short_names: Vec<String>,
    /// `categories`.
    pub categories: Vec<String>,
}

impl Names {
    /// The names under `pointer` (`/spec/names` or `/status/acceptedNames`).
    pub fn at(crd: &Value, pointer: &str) -> Names {
        let kind = str_at(crd, &format!("{pointer}/kind")).to_string();
        let mut singular = str_at(crd, &format!("{pointer}/singular")).to_string();
        if singular.is_empty() {
            singular = kind.to_ascii_lowercase();
        }
        let mut list_kind = str_at(crd, &format!("{pointer}/listKind")).to_string();
        if list_kind.is_empty() && !kind.is_empty() {
            list_kind = format!("{kind}List");
        }
        Names {
            plural: str_at(crd, &format!("{pointer}/plural")).to_string(),
            singular,
            kind,
            list_kind,
            short_names: strings_at(crd, &format!("{pointer}/shortNames")),
            categories: strings_at(crd, &format!("{pointer}/categories")),
        }
    }

    /// `acceptedNames` JSON.
    pub fn to_json(&self) -> Value {
        let mut m = Map::new();
        m.insert("plural".into(), json!(self.plural));
        m.insert("singular".into(), json!(self.singular));
        if !self.short_names.is_empty() {
            m.insert("shortNames".into(), json!(self.short_names));
        }
        m.insert("kind".into(), json!(self.kind));
        m.insert("listKind".into(), json!(self.list_kind));
        if !self.categories.is_empty() {
            m.insert("categories".into(), json!(self.categories));
        }
        Value::Object(m)
    }
}

/// What the naming controller decided for one CRD.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Naming {
    /// The accepted names (the requested ones when there is no conflict,
    /// else the previously accepted ones).
    pub accepted: Names,
    /// `NamesAccepted` condition: `(status, reason, message)`.
    pub names_accepted: (bool, &'static str, String),
}

/// Names already taken in one group: resources (plural, singular, short
/// names) and kinds (kind, list kind).
#[derive(Default)]
struct Taken {
    resources: HashSet<String>,
    kinds: HashSet<String>,
}

impl Taken {
    fn add(&mut self, n: &Names) {
        self.resources.insert(n.plural.clone());
        self.resources.insert(n.singular.clone());
        self.resources.extend(n.short_names.iter().cloned());
        self.kinds.insert(n.kind.clone());
        self.kinds.insert(n.list_kind.clone());
    }
}

/// Upstream's NamingConditionController for one CRD, given the names the
/// other CRDs of its group have accepted and the built-in names.
fn naming(crd: &Value, taken: &Taken) -> Naming {
    let requested = Names::at(crd, "/spec/names");
    let previous = Names::at(crd, "/status/acceptedNames");
    let conflict =
        |what: &str, reason: &'static str| (false, reason, format!("{what:?} is already in use"));
    let verdict = if taken.resources.contains(&requested.plural) {
        Some(conflict(&requested.plural, "PluralConflict"))
    } else if taken.resources.contains(&requested.singular) {
        Some(conflict(&requested.singular, "SingularConflict"))
    } else if let Some(s) = requested
        .short_names
        .iter()
        .find(|s| taken.resources.contains(*s))
    {
        Some(conflict(s, "ShortNamesConflict"))
    } else if taken.kinds.contains(&requested.kind) {
        Some(conflict(&requested.kind, "KindConflict"))
    } else if taken.kinds.contains(&requested.list_kind) {
        Some(conflict(&requested.list_kind, "ListKindConflict"))
    } else {
        None
    };
    match verdict {
        None => Naming {
            accepted: requested,
            names_accepted: (true, "NoConflicts", "no conflicts found".into()),
        },
        Some(v) => Naming {
            accepted: previous,
            names_accepted: v,
        },
    }
}

/// The rows of every servable CRD and the naming outcome of each CRD (by
/// name). CRDs are taken oldest first, so the first to claim a name keeps
/// it, as upstream's controller (which sees existing CRDs' accepted names).
pub fn rows(crds: &[Value]) -> (Vec<Arc<ResourceInfo>>, BTreeMap<String, Naming>) {
    let builtins = resource::builtins();
    // CRDs that already hold accepted names keep them: they go first, then
    // the others oldest first (upstream's controller checks a CRD against
    // the names the other CRDs of its group have accepted).
    let mut order: Vec<&Value> = crds.iter().collect();
    order.sort_by(|a, b| {
        let key = |v: &Value| {
            (
                str_at(v, "/status/acceptedNames/kind").is_empty(),
                str_at(v, "/metadata/creationTimestamp").to_string(),
                str_at(v, "/metadata/name").to_string(),
            )
        };
        key(a).cmp(&key(b))
    });
    let mut taken: BTreeMap<String, Taken> = BTreeMap::new();
    for r in builtins.iter().filter(|r| !r.is_custom()) {
        let t = taken.entry(r.group.to_string()).or_default();
        t.resources.insert(r.plural.to_string());
        t.resources.insert(r.singular.clone());
        t.kinds.insert(r.kind.to_string());
        t.kinds.insert(r.list_kind.to_string());
    }
    let mut outcomes = BTreeMap::new();
    let mut out = Vec::new();
    let mut next_cache = RowCache::default();
    for crd in order {
        let name = str_at(crd, "/metadata/name").to_string();
        let group = str_at(crd, "/spec/group").to_string();
        let t = taken.entry(group.clone()).or_default();
        let n = naming(crd, t);
        // A refused rename keeps serving the names accepted before.
        if !n.accepted.kind.is_empty() && !n.accepted.plural.is_empty() {
            t.add(&n.accepted);
            out.extend(cached_rows(crd, &n.accepted, &mut next_cache));
        }
        outcomes.insert(name, n);
    }
    *ROW_CACHE
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner) = next_cache;
    out.sort_by(|a, b| (a.group, a.version, a.plural).cmp(&(b.group, b.version, b.plural)));
    (out, outcomes)
}

/// Rows already built, by what they are built from: a CRD's uid, its
/// deletion state and the names it serves, with the spec they came from
/// (a hit needs an equal spec). Status-only changes reuse the rows, so
/// schemas and rules are compiled once per CRD change, not once per pass.
type RowCache = std::collections::HashMap<(String, bool, String), (Value, Vec<Arc<ResourceInfo>>)>;

static ROW_CACHE: std::sync::LazyLock<std::sync::Mutex<RowCache>> =
    std::sync::LazyLock::new(Default::default);

fn cached_rows(crd: &Value, names: &Names, next: &mut RowCache) -> Vec<Arc<ResourceInfo>> {
    let key = (
        str_at(crd, "/metadata/uid").to_string(),
        crd.pointer("/metadata/deletionTimestamp").is_some(),
        format!("{names:?}"),
    );
    let spec = crd.get("spec").cloned().unwrap_or(Value::Null);
    let hit = ROW_CACHE
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
        .get(&key)
        .filter(|(cached_spec, _)| *cached_spec == spec)
        .map(|(_, rows)| rows.clone());
    let rows = hit.unwrap_or_else(|| version_rows(crd, names));
    next.insert(key, (spec, rows.clone()));
    rows
}

/// The rows of one CRD's served versions.
fn version_rows(crd: &Value, names: &Names) -> Vec<Arc<ResourceInfo>> {
    let group = str_at(crd, "/spec/group");
    let namespaced = str_at(crd, "/spec/scope") != "Cluster";
    let storage_version = versions(crd)
        .find(|v| v.get("storage").and_then(Value::as_bool) == Some(true))
        .and_then(|v| v.get("name"))
        .and_then(Value::as_str)
        .unwrap_or("")
        .to_string();
    let terminating = crd.pointer("/metadata/deletionTimestamp").is_some();
    let converter = Arc::new(super::conversion::custom::CustomConverter::new(crd));
    let mut out = Vec::new();
    for (i, v) in versions(crd).enumerate() {
        if v.get("served").and_then(Value::as_bool) != Some(true) {
            continue;
        }
        let version = v.get("name").and_then(Value::as_str).unwrap_or("");
        let status = v.pointer("/subresources/status").is_some();
        let scale = v.pointer("/subresources/scale").map(|s| CustomScale {
            spec_replicas: str_at(s, "/specReplicasPath").to_string(),
            status_replicas: str_at(s, "/statusReplicasPath").to_string(),
            label_selector: s
                .get("labelSelectorPath")
                .and_then(Value::as_str)
                .map(str::to_string),
        });
        let deprecation_warning = (v.get("deprecated").and_then(Value::as_bool) == Some(true))
            .then(
                || match v.get("deprecationWarning").and_then(Value::as_str) {
                    Some(w) => w.to_string(),
                    None => default_deprecation_warning(crd, group, version, &names.kind),
                },
            );
        let schema = v
            .pointer("/schema/openAPIV3Schema")
            .or_else(|| crd.pointer("/spec/validation/openAPIV3Schema"));
        let structural =
            schema.and_then(|s| skein_apiextensions::schema::Structural::parse(s).ok());
        let rules = schema.and_then(|s| {
            skein_apiextensions::cel::compile(
                s,
                &format!("spec.versions[{i}].schema.openAPIV3Schema"),
            )
            .ok()
        });
        let columns = Arc::new(crate::table::CustomColumns::lenient(
            v.get("additionalPrinterColumns").unwrap_or(&Value::Null),
        ));
        let scale_columns = v
            .pointer("/subresources/scale")
            .map(|s| Arc::new(crate::table::CustomColumns::scale(s)));
        let custom = CustomVersion {
            converter: converter.clone(),
            crd_name: str_at(crd, "/metadata/name").to_string(),
            crd_uid: str_at(crd, "/metadata/uid").to_string(),
            crd: crd.clone(),
            version: version.to_string(),
            storage_version: storage_version.clone(),
            deprecation_warning,
            scale: scale.clone(),
            terminating,
            apply_schema: std::sync::OnceLock::new(),
            structural,
            rules,
            columns,
            scale_columns,
        };
        let api_version = format!("{group}/{version}");
        out.push(Arc::new(ResourceInfo {
            group: intern(group),
            version: intern(version),
            api_version: intern(&api_version),
            kind: intern(&names.kind),
            list_kind: intern(&names.list_kind),
            plural: intern(&names.plural),
            singular: names.singular.clone(),
            namespaced,
            short_names: intern_list(&names.short_names),
            categories: intern_list(&names.categories),
            status,
            scale: scale.map(|s| ScaleMapping {
                spec_replicas: intern(s.spec_replicas.trim_start_matches('.')),
            }),
            decode: keep,
            conversion: None,
            custom: Some(Arc::new(custom)),
        }));
    }
    out
}

/// Upstream's default warning for a deprecated version: it names the
/// newest served, non-deprecated version newer than it, if any.
fn default_deprecation_warning(crd: &Value, group: &str, version: &str, kind: &str) -> String {
    let mut msg = format!("{group}/{version} {kind} is deprecated");
    let newer = versions(crd)
        .filter(|v| {
            v.get("served").and_then(Value::as_bool) == Some(true)
                && v.get("deprecated").and_then(Value::as_bool) != Some(true)
        })
        .filter_map(|v| v.get("name").and_then(Value::as_str))
        .filter(|name| compare_kube_versions(version, name) == std::cmp::Ordering::Less)
        .max_by(|a, b| compare_kube_versions(a, b));
    if let Some(n) = newer {
        msg.push_str(&format!("; use {group}/{n} {kind}"));
    }
    msg
}

/// Kubernetes' version order (`version.CompareKubeAwareVersionStrings`):
/// `v2` > `v1` > `v1beta2` > `v1beta1` > `v1alpha1` > anything not of that
/// form (those compare as strings, in reverse).
pub fn compare_kube_versions(a: &str, b: &str) -> std::cmp::Ordering {
    fn parse(v: &str) -> Option<(u64, u8, u64)> {
        let rest = v.strip_prefix('v')?;
        let digits = rest
            .find(|c: char| !c.is_ascii_digit())
            .unwrap_or(rest.len());
        let major: u64 = rest[..digits].parse().ok()?;
        if major == 0 {
            return None;
        }
        let tail = &rest[digits..];
        let (stage, num) = if tail.is_empty() {
            return Some((major, 3, 0));
        } else if let Some(n) = tail.strip_prefix("beta") {
            (2, n)
        } else if let Some(n) = tail.strip_prefix("alpha") {
            (1, n)
        } else {
            return None;
        };
        if num.is_empty() || !num.chars().all(|c| c.is_ascii_digit()) {
            return None;
        }
        Some((major, stage, num.parse().ok()?))
    }
    match (parse(a), parse(b)) {
        (Some(x), Some(y)) => x.cmp(&y),
        (Some(_), None) => std::cmp::Ordering::Greater,
        (None, Some(_)) => std::cmp::Ordering::Less,
        (None, None) => b.cmp(a),
    }
}

/// Custom rows normalize through [`CustomVersion::normalize`]; this is
/// never called for them.
fn keep(v: Value) -> Result<Value, serde_json::Error> {
    Ok(v)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn crd(name: &str, kind: &str, short: &[&str], created: &str) -> Value {
        let (plural, group) = name.split_once('.').unwrap();
        json!({
            "apiVersion": "apiextensions.k8s.io/v1",
            "kind": "CustomResourceDefinition",
            "metadata": {"name": name, "uid": "u", "creationTimestamp": created},
            "spec": {
                "group": group,
                "scope": "Namespaced",
                "names": {"plural": plural, "kind": kind, "shortNames": short},
                "versions": [
                    {"name": "v1", "served": true, "storage": true,
                     "schema": {"openAPIV3Schema": {"type": "object"}}},
                    {"name": "v2", "served": false, "storage": false}
                ]
            }
        })
    }

    #[test]
    fn kube_versions_order_as_upstream() {
        use std::cmp::Ordering::*;
        assert_eq!(compare_kube_versions("v1", "v1beta1"), Greater);
        assert_eq!(compare_kube_versions("v1beta2", "v1beta1"), Greater);
        assert_eq!(compare_kube_versions("v1alpha1", "v1beta1"), Less);
        assert_eq!(compare_kube_versions("v2", "v10"), Less);
        assert_eq!(compare_kube_versions("foo", "v1alpha1"), Less);
        assert_eq!(compare_kube_versions("bar", "foo"), Greater);
    }

    #[test]
    fn accepted_crds_get_rows_for_served_versions() {
        let (rows, outcomes) = rows(&[crd(
            "crontabs.stable.example.com",
            "CronTab",
            &["ct"],
            "2026-01-01T00:00:00Z",
        )]);
        assert_eq!(rows.len(), 1);
        let r = &rows[0];
        assert_eq!(
            (r.group, r.version, r.plural, r.kind, r.list_kind),
            (
                "stable.example.com",
                "v1",
                "crontabs",
                "CronTab",
                "CronTabList"
            )
        );
        assert_eq!(r.short_names, &["ct"]);
        assert!(r.namespaced && r.is_custom() && r.is_storage());
        assert!(outcomes["crontabs.stable.example.com"].names_accepted.0);
    }

    #[test]
    fn a_later_crd_with_a_taken_kind_is_refused() {
        let (rows, outcomes) = rows(&[
            crd(
                "b.stable.example.com",
                "CronTab",
                &[],
                "2026-01-02T00:00:00Z",
            ),
            crd(
                "a.stable.example.com",
                "CronTab",
                &[],
                "2026-01-01T00:00:00Z",
            ),
        ]);
        assert_eq!(rows.len(), 1);
        assert_eq!(rows[0].plural, "a");
        let refused = &outcomes["b.stable.example.com"].names_accepted;
        assert_eq!(
            refused,
            &(
                false,
                "SingularConflict",
                "\"crontab\" is already in use".to_string()
            )
        );
    }

    #[test]
    fn built_in_names_are_never_shadowed() {
        let mut c = crd("pods.x.example.com", "Pod", &[], "2026-01-01T00:00:00Z");
        c["spec"]["group"] = json!("");
        c["metadata"]["name"] = json!("pods.");
        let (rows, outcomes) = rows(&[c]);
        assert!(rows.is_empty());
        assert_eq!(outcomes["pods."].names_accepted.1, "PluralConflict");
    }
}
