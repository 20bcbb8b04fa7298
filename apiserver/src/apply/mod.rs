//! Server-side apply and `metadata.managedFields`.
//!
//! [`apply`] runs an `application/apply-patch+yaml` request; [`update`]
//! records who changed what on every other write (create, PUT, JSON, merge
//! and strategic patches). Both are pure: the caller passes the clock
//! ([`Request::now`]) and stores the result.
//!
//! This is upstream's field manager chain
//! (`k8s.io/apimachinery/pkg/util/managedfields/internal/fieldmanager.go`,
//! `NewDefaultFieldManager`), outermost first:
//! - version check: the configuration's apiVersion/kind must be the
//!   resource's (`versioncheck.go`);
//! - last-applied updater and manager: for the `kubectl` applier, keep
//!   `kubectl.kubernetes.io/last-applied-configuration` in step, and let
//!   fields unchanged since the last client-side apply be taken over
//!   without a conflict (`lastappliedupdater.go`, `lastappliedmanager.go`);
//! - skip-non-applied: an object without managedFields is tracked only
//!   from its creation; the first apply to such an object first records
//!   everything as owned by `before-first-apply` (`skipnonapplied.go`);
//! - cap managers: at most 10 Update entries (`capmanagers.go`);
//! - managed-fields updater: entry times (`managedfieldsupdater.go`);
//! - strip-meta: `apiVersion`, `kind`, `metadata` and its system fields
//!   are never owned (`stripmeta.go`);
//! - the structured merge (`structuredmerge.go`, [`updater`]).
//!
//! Then, as the REST handlers do
//! (`apiserver/pkg/endpoints/handlers/fieldmanager/equality.go`), a write
//! that changes nothing but managedFields timestamps keeps the old ones.

mod changes;
pub mod conflict;
pub mod fieldpath;
pub mod managers;
pub mod merge;
pub mod typed;
pub mod updater;

use std::borrow::Cow;
use std::sync::LazyLock;

use serde_json::{Map, Value};

use crate::schema::Schema;
pub use conflict::{Conflict, conflict_message};
use fieldpath::{Path, PathElement, Set, go_json, path_string};
use managers::{Managed, ManagerId, Operation};
use typed::{Mode, compare, errors_string, strip_nulls, to_field_set, zero_object};
use updater::{ApplyFailure, Filter, Updater};

/// Most Update managers kept before the oldest merge into
/// `ancient-changes` (upstream `DefaultMaxUpdateManagers`).
pub const MAX_UPDATE_MANAGERS: usize = 10;

/// The annotation client-side apply keeps.
pub const LAST_APPLIED: &str = "kubectl.kubernetes.io/last-applied-configuration";

/// Upstream's total annotation size limit (`ValidateAnnotationsSize`).
const MAX_ANNOTATIONS_SIZE: usize = 256 * 1024;

/// One write's context.
#[derive(Debug, Clone, Copy)]
pub struct Request<'a> {
    /// The kind's schema (`None`: everything is atomic).
    pub schema: Option<Schema<'a>>,
    /// The resource's apiVersion (`apps/v1`, `v1`).
    pub api_version: &'a str,
    /// The resource's kind (`Deployment`).
    pub kind: &'a str,
    /// The field manager (`fieldManager`, or the user agent's first part
    /// for non-apply writes, as upstream defaults it).
    pub manager: &'a str,
    /// The subresource written (`status`), if any.
    pub subresource: Option<&'a str>,
    /// Whether the resource has a status subresource: then main-resource
    /// writers never own `status`.
    pub status_subresource: bool,
    /// The current time, RFC 3339 in seconds (`2024-01-02T03:04:05Z`).
    pub now: &'a str,
}

impl Request<'_> {
    fn filter(&self) -> Filter {
        match self.subresource {
            Some("status") => Filter::AllButStatus,
            Some(_) => Filter::Nothing,
            None if self.status_subresource => Filter::Status,
            None => Filter::Nothing,
        }
    }

    fn updater(&self) -> Updater<'_> {
        Updater {
            ty: self.schema,
            filter: self.filter(),
            version: self.api_version,
        }
    }

    fn subresource(&self) -> &str {
        self.subresource.unwrap_or("")
    }
}

/// Why a write failed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Error {
    /// 409 `Conflict` with one `FieldManagerConflict` cause per entry
    /// (message [`conflict_message`], cause message
    /// [`Conflict::cause_message`], cause field [`Conflict::field`]).
    Conflicts(Vec<Conflict>),
    /// 400 `BadRequest` with this message.
    BadRequest(String),
    /// 422 on the patch options (`fieldManager` missing for apply).
    Invalid {
        /// The option's path.
        field: String,
        /// `Required value: ...`.
        message: String,
    },
    /// Upstream answers these with a plain error: 500, reason unset,
    /// this message (e.g. `failed to create typed patch object (...): ...`).
    Internal(String),
}

impl std::fmt::Display for Error {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Error::Conflicts(c) => f.write_str(&conflict_message(c)),
            Error::BadRequest(m) | Error::Internal(m) => f.write_str(m),
            Error::Invalid { field, message } => write!(f, "{field}: {message}"),
        }
    }
}

impl std::error::Error for Error {}

fn meta(v: &Value) -> Option<&Map<String, Value>> {
    v.get("metadata")?.as_object()
}

fn meta_mut(v: &mut Value) -> Option<&mut Map<String, Value>> {
    let obj = v.as_object_mut()?;
    obj.entry("metadata")
        .or_insert_with(|| Value::Object(Map::new()))
        .as_object_mut()
}

fn managed_fields(v: &Value) -> Option<&Value> {
    meta(v)?.get("managedFields")
}

fn set_managed_fields(v: &mut Value, managed: &Managed) {
    let encoded = managed.encode();
    match (encoded, meta_mut(v)) {
        (Some(e), Some(m)) => {
            m.insert("managedFields".into(), e);
        }
        (None, Some(m)) => {
            m.remove("managedFields");
        }
        _ => {}
    }
}

/// `group/version, Kind=kind` as Go prints a GroupVersionKind.
fn gvk_string(api_version: &str, kind: &str) -> String {
    let (group, version) = match api_version.split_once('/') {
        Some((g, v)) if !v.contains('/') => (g, v),
        Some(_) => ("", ""),
        None => ("", api_version),
    };
    format!("{group}/{version}, Kind={kind}")
}

/// `namespace/name; group/version, Kind=kind` (upstream `objectGVKNN`).
fn object_gvknn(v: &Value) -> String {
    let s = |k: &str| {
        meta(v)
            .and_then(|m| m.get(k))
            .and_then(Value::as_str)
            .unwrap_or("")
    };
    let top = |k: &str| v.get(k).and_then(Value::as_str).unwrap_or("");
    format!(
        "{}/{}; {}",
        s("namespace"),
        s("name"),
        gvk_string(top("apiVersion"), top("kind"))
    )
}

/// The set stripMeta removes (upstream `stripmeta.go`).
static STRIP_SET: LazyLock<Set> = LazyLock::new(strip_set);

/// Builds [`STRIP_SET`].
fn strip_set() -> Set {
    let mut s = Set::new();
    let f = |n: &str| PathElement::Field(n.to_owned());
    s.insert(&[f("apiVersion")]);
    s.insert(&[f("kind")]);
    s.insert(&[f("metadata")]);
    for m in [
        "name",
        "namespace",
        "creationTimestamp",
        "selfLink",
        "uid",
        "clusterName",
        "generation",
        "managedFields",
        "resourceVersion",
    ] {
        s.insert(&[f("metadata"), f(m)]);
    }
    s
}

/// `v` without `metadata.managedFields`; borrowed when it has none.
fn without_managed_fields(v: &Value) -> Cow<'_, Value> {
    if managed_fields(v).is_none() {
        return Cow::Borrowed(v);
    }
    let mut c = v.clone();
    if let Some(m) = c.get_mut("metadata").and_then(Value::as_object_mut) {
        m.remove("managedFields");
    }
    Cow::Owned(c)
}

/// Whether `a` and `b` are equal apart from these `metadata` keys,
/// without copying either.
fn equal_except_meta(a: &Value, b: &Value, ignored: &[&str]) -> bool {
    let (Some(a), Some(b)) = (a.as_object(), b.as_object()) else {
        return a == b;
    };
    let meta_eq = |x: Option<&Value>, y: Option<&Value>| {
        let empty = Map::new();
        let x = x.and_then(Value::as_object).unwrap_or(&empty);
        let y = y.and_then(Value::as_object).unwrap_or(&empty);
        let relevant =
            |m: &Map<String, Value>| m.keys().filter(|k| !ignored.contains(&k.as_str())).count();
        relevant(x) == relevant(y)
            && x.iter()
                .filter(|(k, _)| !ignored.contains(&k.as_str()))
                .all(|(k, v)| y.get(k) == Some(v))
    };
    let others = |m: &Map<String, Value>| m.keys().filter(|k| *k != "metadata").count();
    others(a) == others(b)
        && a.iter()
            .filter(|(k, _)| *k != "metadata")
            .all(|(k, v)| b.get(k) == Some(v))
        && meta_eq(a.get("metadata"), b.get("metadata"))
}

/// The name under which upstream runs the structured update before
/// folding it into the manager's entry (a name no client sends).
const CURRENT_OPERATION: &str = "\u{0}current-operation";

/// The Update chain below skip-non-applied: cap managers, build manager
/// info, managed-fields updater, strip-meta, structured update.
///
/// Upstream compares `live` and `new` (each with its Go zero fields,
/// without managedFields), less the request's reset fields; takes the
/// removed, modified and added fields from every other entry; gives the
/// modified and added ones to a `current-operation` entry; folds that
/// entry (less stripMeta's fields) into the manager's and drops empty
/// entries. Unless
/// the client sent an entry under that very name, this computes the
/// changed fields once ([`changes::changed_paths`]) and edits the entries
/// in place; the result is the same.
fn update_chain(
    req: &Request<'_>,
    live: &Value,
    new: &Value,
    managed: &mut Managed,
    manager: &str,
) {
    let is_current = |id: &ManagerId| {
        id.manager == CURRENT_OPERATION
            && id.operation == Operation::Update
            && id.api_version == req.api_version
            && id.subresource.is_empty()
    };
    if managed.entries.keys().any(is_current) {
        return update_chain_general(req, live, new, managed, manager);
    }
    let filter = req.filter();
    let cmp = changes::changed_paths(live, new, req.schema, &|k| filter.keeps_root(k));
    let mut changed = filter.apply(cmp.changed);
    let removed = filter.apply(cmp.removed);
    for e in managed.entries.values_mut() {
        e.set.subtract(&changed);
        e.set.subtract(&removed);
    }
    managed.entries.retain(|_, e| !e.set.is_empty());
    changed.subtract(&STRIP_SET);
    if !changed.is_empty() {
        let id = ManagerId::new(
            manager,
            Operation::Update,
            req.api_version,
            req.subresource(),
        );
        match managed.entries.get_mut(&id) {
            Some(e) => {
                e.set.union_with(changed);
                req.api_version.clone_into(&mut e.api_version);
                e.time = Some(req.now.to_owned());
            }
            None => {
                managed.entries.insert(
                    id,
                    managers::Entry {
                        set: changed,
                        api_version: req.api_version.to_owned(),
                        time: Some(req.now.to_owned()),
                    },
                );
            }
        }
    }
    managed.cap_updaters(MAX_UPDATE_MANAGERS);
}

/// [`update_chain`] as upstream runs it, through a `current-operation`
/// entry: for the one case where the client sent an entry of that name.
fn update_chain_general(
    req: &Request<'_>,
    live: &Value,
    new: &Value,
    managed: &mut Managed,
    manager: &str,
) {
    let id = ManagerId::new(
        manager,
        Operation::Update,
        req.api_version,
        req.subresource(),
    );
    let current = ManagerId {
        manager: CURRENT_OPERATION.to_owned(),
        operation: Operation::Update,
        api_version: req.api_version.to_owned(),
        subresource: String::new(),
    };
    let live = without_managed_fields(live);
    let new = without_managed_fields(new);
    let gained = req.updater().update(&live, &new, managed, &current);
    managed.entries.remove(&current);
    let gained = gained.difference(&STRIP_SET);
    if !gained.is_empty() {
        let set = match managed.entries.get(&id) {
            Some(prev) => gained.union(&prev.set),
            None => gained,
        };
        managed.entries.insert(
            id,
            managers::Entry {
                set,
                api_version: req.api_version.to_owned(),
                time: Some(req.now.to_owned()),
            },
        );
    }
    managed.cap_updaters(MAX_UPDATE_MANAGERS);
}

/// Whether the client asked to reset managedFields: an empty list, or a
/// single empty entry (upstream `isResetManagedFields`).
fn is_reset(v: Option<&Value>) -> bool {
    match v {
        Some(Value::Array(a)) if a.is_empty() => true,
        Some(Value::Array(a)) if a.len() == 1 => match &a[0] {
            Value::Object(m) => m.values().all(|x| match x {
                Value::Null => true,
                Value::String(s) => s.is_empty(),
                Value::Object(o) => o.is_empty(),
                _ => false,
            }),
            _ => false,
        },
        _ => false,
    }
}

/// Keeps the old managedFields when a write changed nothing but their
/// timestamps (upstream `IgnoreManagedFieldsTimestampsTransformer`).
fn keep_old_timestamps(old: &Value, new: &mut Value) {
    let (Some(Value::Array(o)), Some(Value::Array(n))) = (managed_fields(old), managed_fields(new))
    else {
        return;
    };
    // Equal but for their `time`s (entries that are not objects: equal).
    let equal_but_time = |a: &Value, b: &Value| match (a, b) {
        (Value::Object(x), Value::Object(y)) => {
            let timeless = |m: &Map<String, Value>| m.keys().filter(|k| *k != "time").count();
            timeless(x) == timeless(y)
                && x.iter()
                    .filter(|(k, _)| *k != "time")
                    .all(|(k, v)| y.get(k) == Some(v))
        }
        _ => a == b,
    };
    if o.len() != n.len() || !o.iter().zip(n.iter()).all(|(a, b)| equal_but_time(a, b)) {
        return;
    }
    if !equal_except_meta(old, new, &["managedFields", "resourceVersion"]) {
        return;
    }
    // The old list is the new one with the old times.
    let Some(Value::Array(n)) = meta_mut(new).and_then(|m| m.get_mut("managedFields")) else {
        return;
    };
    for (a, b) in o.iter().zip(n.iter_mut()) {
        if let (Value::Object(x), Value::Object(y)) = (a, b) {
            match x.get("time") {
                Some(t) => {
                    y.insert("time".to_owned(), t.clone());
                }
                None => {
                    y.remove("time");
                }
            }
        }
    }
}

/// Records an Update operation: sets `new.metadata.managedFields` from
/// `old` (`None` on create) and the change from `old` to `new`.
///
/// - managedFields sent by the client are honoured as upstream does: an
///   empty list (or one empty entry) resets them; a valid non-empty list is
///   taken as the starting point (this is how kubectl's and Helm's
///   client-side-apply upgrade rewrites entries); an invalid or absent one
///   falls back to `old`'s. On a subresource the client's are ignored.
/// - An existing object without managedFields stays untracked.
/// - The manager's Update entry gains every field it added, changed or
///   removed; other managers lose them; Update managers are capped at
///   [`MAX_UPDATE_MANAGERS`]; empty entries are dropped.
///
/// Never fails on object contents (upstream restores the old
/// managedFields instead); the `Result` is for future validation.
pub fn update(req: &Request<'_>, old: Option<&Value>, new: &mut Value) -> Result<(), Error> {
    if !new.is_object() {
        return Ok(());
    }
    // Taken out: the object gets the resulting managedFields, if any.
    let from_client = new
        .get_mut("metadata")
        .and_then(Value::as_object_mut)
        .and_then(|m| m.remove("managedFields"));
    let from_live = || {
        old.and_then(|o| Managed::decode(managed_fields(o)).ok())
            .unwrap_or_default()
    };
    let mut managed = if req.subresource.is_some() {
        from_live()
    } else if is_reset(from_client.as_ref()) {
        Managed::default()
    } else {
        match Managed::decode(from_client.as_ref()) {
            Ok(m) if !m.is_empty() => m,
            _ => from_live(),
        }
    };
    // skip-non-applied: an existing untracked object stays untracked.
    if !(managed.is_empty() && old.is_some()) {
        let zero;
        let live = match old {
            Some(o) => o,
            None => {
                zero = zero_object(req.schema);
                &zero
            }
        };
        update_chain(req, live, new, &mut managed, req.manager);
    }
    set_managed_fields(new, &managed);
    if let Some(o) = old {
        keep_old_timestamps(o, new);
    }
    Ok(())
}

/// Runs a server-side apply of `config` by `req.manager` onto `live`
/// (`None`: the object does not exist and is created). Returns the new
/// object with `metadata.managedFields` updated.
///
/// The result is the merge of `config` into `live` minus what the manager
/// stopped applying (unless someone else owns it), `null`s removed. The
/// caller still defaults, validates and normalizes it, as upstream does
/// after the field manager.
pub fn apply(
    req: &Request<'_>,
    live: Option<&Value>,
    config: &Value,
    force: bool,
) -> Result<Value, Error> {
    if req.manager.is_empty() {
        return Err(Error::Invalid {
            field: "fieldManager".to_owned(),
            message: "Required value: is required for apply patch".to_owned(),
        });
    }
    let top = |k: &str| config.get(k).and_then(Value::as_str).unwrap_or("");
    if !config.is_object() || top("apiVersion") != req.api_version || top("kind") != req.kind {
        return Err(Error::BadRequest(format!(
            "invalid object type: {}",
            gvk_string(top("apiVersion"), top("kind"))
        )));
    }
    if managed_fields(config).is_some_and(|v| !v.is_null()) {
        return Err(Error::BadRequest(
            "metadata.managedFields must be nil".to_owned(),
        ));
    }
    let empty = Value::Object(Map::new());
    let live_obj = live.unwrap_or(&empty);
    let managed = Managed::decode(managed_fields(live_obj))
        .map_err(|e| Error::Internal(format!("failed to decode managed fields: {e}")))?;

    let mut result = match apply_chain(req, live, config, managed.clone(), force) {
        Err(ChainError::Conflicts(conflicts)) if req.manager == "kubectl" => {
            // lastappliedmanager.go: conflicts with fields unchanged since
            // the last client-side apply are not conflicts.
            let Some(allowed) = allowed_from_last_applied(req, live_obj) else {
                return Err(Error::Conflicts(conflicts_list(&conflicts)));
            };
            let remaining: Vec<(ManagerId, Path)> = conflicts
                .into_iter()
                .filter(|(_, p)| !allowed.has(p))
                .collect();
            if !remaining.is_empty() {
                return Err(Error::Conflicts(conflicts_list(&remaining)));
            }
            apply_chain(req, live, config, managed, true).map_err(|e| e.into_error(config))?
        }
        other => other.map_err(|e| e.into_error(config))?,
    };

    // lastappliedupdater.go
    if req.manager == "kubectl" && has_last_applied(&result) {
        set_last_applied(&mut result, config);
    }
    if let Some(l) = live {
        keep_old_timestamps(l, &mut result);
    }
    Ok(result)
}

enum ChainError {
    Conflicts(Vec<(ManagerId, Path)>),
    Typed(Vec<typed::TypedError>),
}

impl ChainError {
    fn into_error(self, config: &Value) -> Error {
        match self {
            ChainError::Conflicts(c) => Error::Conflicts(conflicts_list(&c)),
            ChainError::Typed(errs) => Error::Internal(format!(
                "failed to create typed patch object ({}): {}",
                object_gvknn(config),
                errors_string(&errs)
            )),
        }
    }
}

fn conflicts_list(c: &[(ManagerId, Path)]) -> Vec<Conflict> {
    let mut out: Vec<Conflict> = c
        .iter()
        .map(|(id, p)| Conflict::new(id, path_string(p)))
        .collect();
    conflict::sort(&mut out);
    out
}

/// skip-non-applied and below, for Apply.
fn apply_chain(
    req: &Request<'_>,
    live: Option<&Value>,
    config: &Value,
    mut managed: Managed,
    force: bool,
) -> Result<Value, ChainError> {
    let empty = Value::Object(Map::new());
    let live_obj = live.unwrap_or(&empty);
    if managed.is_empty()
        && let Some(l) = live
    {
        let zero = zero_object(req.schema);
        update_chain(req, &zero, l, &mut managed, "before-first-apply");
    }
    let id = ManagerId::new(
        req.manager,
        Operation::Apply,
        req.api_version,
        req.subresource(),
    );
    let live_plain = without_managed_fields(live_obj);
    let outcome = req
        .updater()
        .apply(&live_plain, config, &mut managed, &id, force)
        .map_err(|e| match e {
            ApplyFailure::Typed(errs) => ChainError::Typed(errs),
            ApplyFailure::Conflicts(by_manager) => {
                let mut list = Vec::new();
                for (mid, set) in by_manager {
                    for p in set.paths() {
                        list.push((mid.clone(), p));
                    }
                }
                ChainError::Conflicts(list)
            }
        })?;
    // strip-meta
    if let Some(e) = managed.entries.get_mut(&id) {
        e.set.subtract(&STRIP_SET);
        if e.set.is_empty() {
            managed.entries.remove(&id);
        }
    }
    let mut result = match outcome {
        Some(mut new) => {
            if let Some(e) = managed.entries.get_mut(&id) {
                e.time = Some(req.now.to_owned());
            }
            strip_nulls(&mut new);
            new
        }
        None => live_plain.into_owned(),
    };
    set_managed_fields(&mut result, &managed);
    Ok(result)
}

fn annotations(v: &Value) -> Option<&Map<String, Value>> {
    meta(v)?.get("annotations")?.as_object()
}

fn has_last_applied(v: &Value) -> bool {
    annotations(v)
        .and_then(|a| a.get(LAST_APPLIED))
        .and_then(Value::as_str)
        .is_some_and(|s| !s.is_empty())
}

/// Sets the last-applied annotation to `config` (without that annotation)
/// as Go's JSON encoder writes it; drops it when the annotations would
/// exceed upstream's size limit.
fn set_last_applied(result: &mut Value, config: &Value) {
    let mut cfg = config.clone();
    if let Some(a) = cfg
        .get_mut("metadata")
        .and_then(|m| m.get_mut("annotations"))
        .and_then(Value::as_object_mut)
    {
        a.remove(LAST_APPLIED);
    }
    let mut text = String::new();
    go_json(&cfg, &mut text);
    text.push('\n');
    let Some(m) = meta_mut(result) else { return };
    let Some(a) = m
        .entry("annotations")
        .or_insert_with(|| Value::Object(Map::new()))
        .as_object_mut()
    else {
        return;
    };
    a.insert(LAST_APPLIED.to_owned(), Value::String(text));
    let size: usize = a
        .iter()
        .map(|(k, v)| k.len() + v.as_str().map_or(0, str::len))
        .sum();
    if size > MAX_ANNOTATIONS_SIZE {
        a.remove(LAST_APPLIED);
    }
}

/// Fields of the last client-side-applied configuration whose live values
/// are unchanged (upstream `allowedConflictsFromLastApplied`).
fn allowed_from_last_applied(req: &Request<'_>, live: &Value) -> Option<Set> {
    let text = annotations(live)?.get(LAST_APPLIED)?.as_str()?;
    if text.is_empty() {
        return None;
    }
    let last: Value = serde_json::from_str(text).ok()?;
    if !last.is_object() || last.get("apiVersion").and_then(Value::as_str) != Some(req.api_version)
    {
        return None;
    }
    let set = to_field_set(&last, req.schema, Mode::Strict).ok()?;
    let live = without_managed_fields(live);
    let cmp = compare(Some(&last), Some(&live), req.schema);
    Some(
        set.difference(&cmp.modified)
            .difference(&cmp.added)
            .difference(&cmp.removed),
    )
}

#[cfg(test)]
mod equivalence;
#[cfg(test)]
mod reference;
#[cfg(test)]
mod tests;
#[cfg(test)]
mod timing;
