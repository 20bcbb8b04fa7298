//! Ownership bookkeeping for one write (upstream `merge.Updater`).
//!
//! Follows `sigs.k8s.io/structured-merge-diff/merge/update.go`: `Update`
//! gives the writer every field it added, changed or removed and takes
//! them from everyone else; `Apply` merges the configuration, prunes what
//! the applier stopped applying (unless someone else still owns it), and
//! fails with conflicts when another manager owns a field the result
//! changes, unless forced.
//!
//! All managers are taken to be at the request's version (Skein serves one
//! version per kind, so no conversion is needed).

use serde_json::{Map, Value};

use super::fieldpath::{PathElement, Set};
use super::managers::{Entry, Managed, ManagerId};
use super::merge::merge;
use super::typed::{
    Comparison, Mode, TypedError, compare, ensure_named_fields_are_members, remove_items,
    to_field_set, with_zero_fields,
};
use crate::schema::Schema;

/// Fields a manager of this request may not own (upstream reset fields).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Filter {
    /// Nothing is reset.
    Nothing,
    /// The main resource of a kind with a status subresource: `status` is
    /// reset.
    Status,
    /// The status subresource: everything but `status` and `metadata`
    /// (except `metadata.labels`) is reset.
    AllButStatus,
}

impl Filter {
    /// `set` without the reset fields.
    pub fn apply(self, mut set: Set) -> Set {
        let f = |n: &str| PathElement::Field(n.to_owned());
        match self {
            Filter::Nothing => set,
            Filter::Status => {
                set.remove_element(&f("status"));
                set
            }
            Filter::AllButStatus => {
                let mut out = Set::new();
                for name in ["metadata", "status"] {
                    let pe = f(name);
                    if set.has_member(&pe) {
                        out.insert_member(pe.clone());
                    }
                    if let Some(mut c) = set.take_child(&pe) {
                        if name == "metadata" {
                            c.remove_element(&f("labels"));
                        }
                        out.set_child(pe, c);
                    }
                }
                out
            }
        }
    }

    /// Whether [`Filter::apply`] keeps anything below the root key `key`.
    pub fn keeps_root(self, key: &str) -> bool {
        match self {
            Filter::Nothing => true,
            Filter::Status => key != "status",
            Filter::AllButStatus => key == "status" || key == "metadata",
        }
    }
}

/// Why an apply failed inside the updater.
#[derive(Debug)]
pub enum ApplyFailure {
    /// Other managers own fields the result changes: `(manager, fields)`.
    Conflicts(Vec<(ManagerId, Set)>),
    /// The configuration does not fit the schema.
    Typed(Vec<TypedError>),
}

/// The updater for one request.
pub struct Updater<'a> {
    /// The kind's schema.
    pub ty: Option<Schema<'a>>,
    /// Reset fields.
    pub filter: Filter,
    /// The request's apiVersion.
    pub version: &'a str,
}

impl Updater<'_> {
    /// Compares `live` with `new` and takes changed fields from managers
    /// other than `workflow` (removed fields always; modified and added ones
    /// only with `force`, else they are the conflicts).
    fn update_others(
        &self,
        live: &Value,
        new: &Value,
        managed: &mut Managed,
        workflow: &ManagerId,
        force: bool,
    ) -> Result<Comparison, Vec<(ManagerId, Set)>> {
        let filter = self.filter;
        let live = with_zero_fields(live, self.ty);
        let new = with_zero_fields(new, self.ty);
        let cmp = compare(Some(&live), Some(&new), self.ty).filter(&move |s| filter.apply(s));
        let changed = cmp.modified.union(&cmp.added);
        let mut conflicts = Vec::new();
        for (id, entry) in &managed.entries {
            if id == workflow {
                continue;
            }
            let c = entry.set.intersection(&changed);
            if !c.is_empty() {
                conflicts.push((id.clone(), c));
            }
        }
        if !force && !conflicts.is_empty() {
            return Err(conflicts);
        }
        for (id, c) in &conflicts {
            if let Some(e) = managed.entries.get_mut(id) {
                e.set = e.set.difference(c);
            }
        }
        if !cmp.removed.is_empty() {
            for (id, e) in managed.entries.iter_mut() {
                if id != workflow {
                    e.set = e.set.difference(&cmp.removed);
                }
            }
        }
        managed.entries.retain(|_, e| !e.set.is_empty());
        Ok(cmp)
    }

    /// An Update by `manager` from `live` to `new`: `manager`'s entry gains
    /// every changed field (before reset fields are filtered out); the
    /// returned set is what it gained.
    pub fn update(
        &self,
        live: &Value,
        new: &Value,
        managed: &mut Managed,
        manager: &ManagerId,
    ) -> Set {
        let cmp = match self.update_others(live, new, managed, manager, true) {
            Ok(c) => c,
            // Unreachable with force; keep the managers as they are.
            Err(_) => return Set::new(),
        };
        let prev = managed
            .entries
            .get(manager)
            .map(|e| e.set.clone())
            .unwrap_or_default();
        let set = self.filter.apply(
            prev.difference(&cmp.removed)
                .union(&cmp.modified)
                .union(&cmp.added),
        );
        let time = managed.entries.get(manager).and_then(|e| e.time.clone());
        if set.is_empty() {
            managed.entries.remove(manager);
        } else {
            managed.entries.insert(
                manager.clone(),
                Entry {
                    set: set.clone(),
                    api_version: self.version.to_owned(),
                    time,
                },
            );
        }
        set
    }

    /// An Apply of `config` by `manager` onto `live`. Returns the new
    /// object, or `None` when it equals `live`.
    pub fn apply(
        &self,
        live: &Value,
        config: &Value,
        managed: &mut Managed,
        manager: &ManagerId,
        force: bool,
    ) -> Result<Option<Value>, ApplyFailure> {
        let set = to_field_set(config, self.ty, Mode::Strict).map_err(ApplyFailure::Typed)?;
        let merged = merge(Some(live), Some(config), self.ty)
            .map_err(ApplyFailure::Typed)?
            .unwrap_or_else(|| Value::Object(Map::new()));
        let last = managed.entries.get(manager).map(|e| e.set.clone());
        let time = managed.entries.get(manager).and_then(|e| e.time.clone());
        managed.entries.insert(
            manager.clone(),
            Entry {
                set: self.filter.apply(set),
                api_version: self.version.to_owned(),
                time,
            },
        );
        let new = self.prune(merged, managed, last.as_ref());
        if managed.entries.keys().any(|id| id != manager) {
            self.update_others(live, &new, managed, manager, force)
                .map_err(ApplyFailure::Conflicts)?;
        } else {
            // The applier is the only manager (a create, or an object only
            // it has written): no other entry can conflict or lose fields,
            // so the comparison of live and new is skipped.
            managed.entries.retain(|_, e| !e.set.is_empty());
        }
        if super::fieldpath::value_eq(live, &new) {
            Ok(None)
        } else {
            Ok(Some(new))
        }
    }

    /// Removes from `merged` the fields the applier applied last time and
    /// no longer applies, unless another manager owns them (upstream
    /// `prune`, `addBackOwnedItems`, `addBackDanglingItems`).
    fn prune(&self, merged: Value, managed: &Managed, last: Option<&Set>) -> Value {
        let Some(last) = last.filter(|s| !s.is_empty()) else {
            return merged;
        };
        let ty = self.ty;
        let named = |s: &Set| ensure_named_fields_are_members(s, ty);
        let fields = |v: &Value| to_field_set(v, ty, Mode::Lenient).unwrap_or_default();
        let empty = || Value::Object(Map::new());
        let last = named(last);
        let pruned = remove_items(&merged, &last, ty).unwrap_or_else(empty);
        let all = managed
            .entries
            .values()
            .fold(Set::new(), |acc, e| acc.union(&e.set));
        let merged_set = named(&fields(&merged));
        let keep = named(&fields(&pruned)).union(&named(&all));
        let owned_back =
            remove_items(&merged, &merged_set.difference(&keep), ty).unwrap_or_else(empty);
        let owned_set = named(&fields(&owned_back));
        let dangling = merged_set.difference(&owned_set).intersection(&last);
        remove_items(&merged, &dangling, ty).unwrap_or_else(empty)
    }
}
