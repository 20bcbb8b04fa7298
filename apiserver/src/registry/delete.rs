//! Deletes: `Registry::delete` (preconditions, finalizers, the
//! propagation policy; Foreground and Orphan leave the rest to the garbage
//! collector).

#[allow(clippy::wildcard_imports)]
use super::*;

impl Registry {
    /// Deletes an object, honouring preconditions, finalizers and the
    /// propagation policy (Foreground and Orphan add their finalizer and
    /// leave the rest to the garbage collector).
    pub async fn delete(
        &self,
        res: &ResourceInfo,
        ns: &str,
        name: &str,
        opts: &DeleteOptions,
    ) -> Result<Deleted, ApiError> {
        match converted(res)? {
            None => self.delete_stored(res, ns, name, opts).await,
            Some((stored, c)) => Ok(match self.delete_stored(&stored, ns, name, opts).await? {
                Deleted::Gone(o) => Deleted::Gone((c.from_storage)(o)),
                Deleted::Pending(o) => Deleted::Pending((c.from_storage)(o)),
            }),
        }
    }

    pub(super) async fn delete_stored(
        &self,
        res: &ResourceInfo,
        ns: &str,
        name: &str,
        opts: &DeleteOptions,
    ) -> Result<Deleted, ApiError> {
        // Upstream's NamespaceLifecycle admission keeps these.
        if res.group.is_empty()
            && res.plural == "namespaces"
            && matches!(name, "default" | "kube-system" | "kube-public")
        {
            return Err(ApiError::forbidden(
                "",
                "namespaces",
                name,
                "this namespace may not be deleted",
            ));
        }
        custom::guard_federation(res, name)?;
        let key = key::object(res, ns, name);
        let is_crd = admit::is_crd(res);
        for _ in 0..16 {
            let current = match self.store.get(&key).await {
                Ok(kv) => kv,
                Err(StoreError::NotFound { .. }) => {
                    return Err(ApiError::not_found(res.group, res.plural, name));
                }
                Err(e) => return Err(store_error(e)),
            };
            let obj = Registry::decode(&current)?;
            check_delete_preconditions(res, name, opts, &obj, current.mod_revision)?;
            let mut finalizers = object::finalizers(&obj);
            // A CRD's objects go first (upstream's CRD storage adds the
            // cleanup finalizer on the first delete).
            if is_crd
                && !object::is_deleting(&obj)
                && !finalizers.iter().any(|f| f == custom::CLEANUP_FINALIZER)
            {
                finalizers.push(custom::CLEANUP_FINALIZER.to_string());
            }
            let propagation = opts.propagation.unwrap_or(default_propagation(res));
            let gc_finalizer = match propagation {
                Propagation::Foreground => Some(FOREGROUND_FINALIZER),
                Propagation::Orphan => Some(ORPHAN_FINALIZER),
                Propagation::Background => None,
            };
            // Namespaces always go through their controller.
            let is_namespace = res.group.is_empty() && res.plural == "namespaces";
            if let Some(f) = gc_finalizer
                && !finalizers.iter().any(|x| x == f)
                && !is_namespace
            {
                // Only needed if something may depend on this object; kept
                // simple: always, as upstream does.
                finalizers.push(f.to_string());
            }
            if finalizers.is_empty() && !spec_finalizers(res, &obj) {
                if opts.dry_run {
                    return Ok(Deleted::Gone(obj));
                }
                match self.store.delete(&key, Some(current.mod_revision)).await {
                    Ok(_) => {
                        if let Some(a) = self.service_allocator(res, false) {
                            self.release_claims(ns, name, &obj, None).await;
                            crate::admission::service_stored(&a, &obj, None);
                        }
                        return Ok(Deleted::Gone(obj));
                    }
                    Err(StoreError::Conflict { .. }) => continue,
                    Err(StoreError::NotFound { .. }) => {
                        return Err(ApiError::not_found(res.group, res.plural, name));
                    }
                    Err(e) => return Err(store_error(e)),
                }
            }
            // Graceful: mark and wait for finalizers.
            if object::is_deleting(&obj) && object::finalizers(&obj) == finalizers {
                return Ok(Deleted::Pending(obj));
            }
            let mut marked = obj.clone();
            if !object::is_deleting(&marked) {
                set_meta(
                    &mut marked,
                    "deletionTimestamp",
                    Some(json!(object::now_rfc3339())),
                );
                set_meta(&mut marked, "deletionGracePeriodSeconds", Some(json!(0)));
            }
            object::set_finalizers(&mut marked, &finalizers);
            if is_namespace
                && let Some(status) = marked.get_mut("status").and_then(Value::as_object_mut)
            {
                status.insert("phase".into(), json!("Terminating"));
            }
            if is_crd && !object::is_deleting(&obj) {
                custom::set_condition(
                    &mut marked,
                    "Terminating",
                    true,
                    "InstanceDeletionPending",
                    "CustomResourceDefinition marked for deletion; CustomResource deletion will begin soon",
                );
            }
            if opts.dry_run {
                return Ok(Deleted::Pending(marked));
            }
            let bytes = Registry::encode(&marked)?;
            match self.store.update(&key, &bytes, current.mod_revision).await {
                Ok(kv) => {
                    set_meta(
                        &mut marked,
                        "resourceVersion",
                        Some(json!(kv.mod_revision.to_string())),
                    );
                    return Ok(Deleted::Pending(marked));
                }
                Err(StoreError::Conflict { .. }) => continue,
                Err(StoreError::NotFound { .. }) => {
                    return Err(ApiError::not_found(res.group, res.plural, name));
                }
                Err(e) => return Err(store_error(e)),
            }
        }
        Err(ApiError::conflict(
            res.group,
            res.plural,
            name,
            "too many concurrent updates",
        ))
    }
}

/// Whether a Namespace still has `spec.finalizers` (its controller's).
pub(super) fn spec_finalizers(res: &ResourceInfo, obj: &Value) -> bool {
    res.group.is_empty()
        && res.plural == "namespaces"
        && obj
            .get("spec")
            .and_then(|s| s.get("finalizers"))
            .and_then(Value::as_array)
            .is_some_and(|a| !a.is_empty())
}

/// DeleteOptions preconditions, with upstream's texts: the generic store's
/// `BeforeDelete` names the Kind (`Operation cannot be fulfilled on
/// ConfigMap "one": the UID in the precondition (…) does not match …`);
/// namespaces have their own storage and older wording.
pub(super) fn check_delete_preconditions(
    res: &ResourceInfo,
    name: &str,
    opts: &DeleteOptions,
    obj: &Value,
    revision: i64,
) -> Result<(), ApiError> {
    let is_namespace = res.group.is_empty() && res.plural == "namespaces";
    let uid = object::uid(obj);
    if let Some(want) = opts.precondition_uid.as_deref().filter(|u| *u != uid) {
        return Err(if is_namespace {
            let why = format!(
                "Precondition failed: UID in precondition: {want}, UID in object meta: {uid}"
            );
            ApiError::conflict(res.group, res.plural, name, &why)
        } else {
            let why = format!(
                "the UID in the precondition ({want}) does not match the UID in record ({uid}). The object might have been deleted and then recreated"
            );
            ApiError::conflict(res.group, res.kind, name, &why)
        });
    }
    let rv = revision.to_string();
    if let Some(want) = opts.precondition_rv.as_deref().filter(|r| *r != rv) {
        return Err(if is_namespace {
            let why = format!(
                "Precondition failed: ResourceVersion in precondition: {want}, ResourceVersion in object meta: {rv}"
            );
            ApiError::conflict(res.group, res.plural, name, &why)
        } else {
            let why = format!(
                "the ResourceVersion in the precondition ({want}) does not match the ResourceVersion in record ({rv}). The object might have been modified"
            );
            ApiError::conflict(res.group, res.kind, name, &why)
        });
    }
    Ok(())
}
