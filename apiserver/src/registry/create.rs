//! Creates: `Registry::create` (naming, uid, timestamps, managedFields,
//! metadata validation, the namespace check, admission) and its storage
//! write.

#[allow(clippy::wildcard_imports)]
use super::*;

impl Registry {
    /// Creates `obj` (already normalized and admitted) in namespace `ns`.
    ///
    /// Sets name from `generateName`, uid, creationTimestamp, generation and
    /// a managedFields entry; validates metadata; checks the namespace.
    pub async fn create(
        &self,
        res: &ResourceInfo,
        ns: &str,
        obj: Value,
        opts: &WriteOptions,
    ) -> Result<Value, ApiError> {
        let mut created = match converted(res)? {
            None => self.create_stored(res, ns, obj, opts).await?,
            Some((stored, c)) => {
                let obj = to_storage(c, obj)?;
                (c.from_storage)(self.create_stored(&stored, ns, obj, opts).await?)
            }
        };
        self.after_dry_run(res, Target::Main, opts, &mut created)
            .await;
        Ok(created)
    }

    pub(super) async fn create_stored(
        &self,
        res: &ResourceInfo,
        ns: &str,
        mut obj: Value,
        opts: &WriteOptions,
    ) -> Result<Value, ApiError> {
        if !obj.is_object() {
            return Err(ApiError::bad_request("the object must be a JSON object"));
        }
        reconcile_namespace(res, &mut obj, ns)?;
        let generate = meta_str(&obj, "generateName").map(str::to_string);
        if meta_str(&obj, "name").unwrap_or("").is_empty()
            && let Some(prefix) = &generate
            && !prefix.is_empty()
        {
            let name = format!("{prefix}{}", random_suffix());
            set_meta(&mut obj, "name", Some(json!(name)));
        }
        let name = object::name(&obj).to_string();
        if opts.requester.is_some() {
            custom::guard_federation(res, &name)?;
        }
        let admission = admit::Request {
            res,
            operation: Operation::Create,
            namespace: ns,
            name: &name,
            subresource: None,
            old: None,
            dry_run: opts.dry_run,
            requester: opts.requester.as_ref(),
        };
        let allocator = self.service_allocator(res, opts.dry_run);
        // What the request itself asks for: never replaced by a claim.
        let requested = allocator
            .as_ref()
            .map(|_| skein_admission::allocator::held(&obj));
        admit::mutate(&self.admission, &admission, &mut obj)?;
        let admitted = allocator.as_ref().map(|_| obj.clone());
        let mut claimed = None;
        let result: Result<Value, ApiError> = async {
            let mut causes = validation::object_meta(&obj, strategy::name_rule(res));
            if name.is_empty() && generate.is_none() {
                causes.retain(|c| c.field != "metadata.name");
                causes.insert(
                    0,
                    Cause::required("metadata.name", "name or generateName is required"),
                );
            }
            if !causes.is_empty() {
                return Err(ApiError::invalid(res.group, res.kind, &name, causes));
            }

            // System fields.
            for field in [
                "uid",
                "creationTimestamp",
                "deletionTimestamp",
                "deletionGracePeriodSeconds",
                "resourceVersion",
                "selfLink",
            ] {
                set_meta(&mut obj, field, None);
            }
            set_meta(&mut obj, "uid", Some(json!(new_uid())));
            set_meta(
                &mut obj,
                "creationTimestamp",
                Some(json!(object::now_rfc3339())),
            );
            if res.group == "batch" && res.plural == "jobs" {
                skein_admission::defaults::job_selector(&mut obj);
            }
            let keep_status = opts.keep_status && res.status;
            let status = keep_status.then(|| obj.get("status").cloned()).flatten();
            strategy::prepare_for_create(res, &mut obj, opts.requester.as_ref());
            if let (Some(st), Some(m)) = (status, obj.as_object_mut()) {
                m.insert("status".into(), st);
            }
            admit::validate(&self.admission, &admission, &mut obj)?;
            if !opts.keep_managed_fields {
                let status = keep_status
                    .then(|| obj.as_object_mut().and_then(|m| m.remove("status")))
                    .flatten();
                managed::record_update(&mut obj, None, res, &opts.field_manager, None);
                if let Some(st) = status {
                    let main = obj.clone();
                    if let Some(m) = obj.as_object_mut() {
                        m.insert("status".into(), st);
                    }
                    managed::record_update(
                        &mut obj,
                        Some(&main),
                        res,
                        &opts.field_manager,
                        Some("status"),
                    );
                }
            }

            if res.namespaced {
                self.check_namespace(res, ns, &name).await?;
            }
            if opts.dry_run {
                // Upstream checks existence too.
                if self.get_stored(res, ns, &name).await.is_ok() {
                    return Err(ApiError::already_exists(res.group, res.plural, &name));
                }
                return Ok(obj);
            }
            if let (Some(a), Some(requested)) = (&allocator, &requested) {
                claimed = Some(
                    self.claim_service(a, ns, &name, None, &mut obj, requested)
                        .await?,
                );
            }
            let bytes = Registry::encode(Self::storage_form(res, &obj).await?.as_ref())?;
            match self
                .store
                .create(&key::object(res, ns, &name), &bytes)
                .await
            {
                Ok(kv) => {
                    set_meta(
                        &mut obj,
                        "resourceVersion",
                        Some(json!(kv.mod_revision.to_string())),
                    );
                    Ok(obj)
                }
                Err(StoreError::AlreadyExists { .. }) => {
                    Err(ApiError::already_exists(res.group, res.plural, &name))
                }
                Err(e) => Err(store_error(e)),
            }
        }
        .await;
        if let (Err(_), Some(a), Some(admitted)) = (&result, &allocator, &admitted) {
            if let Some(claims) = &claimed {
                self.drop_claims(a, ns, &name, claims).await;
            }
            crate::admission::service_write_failed(a, None, admitted);
        }
        result
    }
}

/// The object's namespace against the URL's (upstream `rest/meta.go`):
/// defaulted from the URL, must match it, cleared for cluster-scoped kinds.
pub(super) fn reconcile_namespace(
    res: &ResourceInfo,
    obj: &mut Value,
    ns: &str,
) -> Result<(), ApiError> {
    if !res.namespaced {
        set_meta(obj, "namespace", None);
        return Ok(());
    }
    match meta_str(obj, "namespace") {
        None | Some("") => set_meta(obj, "namespace", Some(json!(ns))),
        Some(n) if n != ns => {
            return Err(ApiError::bad_request(
                "the namespace of the provided object does not match the namespace sent on the request",
            ));
        }
        Some(_) => {}
    }
    Ok(())
}
