//! The Update bookkeeping as it was before [`super::changes`]: upstream's
//! chain step by step (zero-filled copies, a full comparison, set algebra
//! through a `current-operation` entry). The reference the equivalence
//! tests hold [`update`](super::update) to.

use std::borrow::Cow;

use serde_json::Value;

use super::fieldpath::{PathElement, Set};
use super::managers::{self, Managed, ManagerId, Operation};
use super::typed::zero_object;
use super::{MAX_UPDATE_MANAGERS, Request, equal_except_meta, is_reset, managed_fields, meta_mut};

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

pub(super) fn update_chain(
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
        manager: "\u{0}current-operation".to_owned(),
        operation: Operation::Update,
        api_version: req.api_version.to_owned(),
        subresource: String::new(),
    };
    let live = without_managed_fields(live);
    let new = without_managed_fields(new);
    let gained = req.updater().update(&live, &new, managed, &current);
    managed.entries.remove(&current);
    let gained = gained.difference(&strip_set());
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

fn keep_old_timestamps(old: &Value, new: &mut Value) {
    let (Some(Value::Array(o)), Some(Value::Array(n))) = (managed_fields(old), managed_fields(new))
    else {
        return;
    };
    if o.len() != n.len() {
        return;
    }
    let no_time = |e: &Value| {
        let mut e = e.clone();
        if let Some(m) = e.as_object_mut() {
            m.remove("time");
        }
        e
    };
    if o.iter()
        .zip(n.iter())
        .any(|(a, b)| no_time(a) != no_time(b))
    {
        return;
    }
    if equal_except_meta(old, new, &["managedFields", "resourceVersion"]) {
        let old_fields = o.clone();
        if let Some(m) = meta_mut(new) {
            m.insert("managedFields".into(), Value::Array(old_fields));
        }
    }
}

/// [`super::update`] as it was.
pub(super) fn update(req: &Request<'_>, old: Option<&Value>, new: &mut Value) {
    if !new.is_object() {
        return;
    }
    let from_client = managed_fields(new).cloned();
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
    if let Some(m) = new.get_mut("metadata").and_then(Value::as_object_mut) {
        m.remove("managedFields");
    }
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
}
