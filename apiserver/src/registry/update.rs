//! Updates: `Registry::update` (preconditions, the generation, no-op
//! detection, admission), `update_with`/`apply_with` (read-modify-write
//! with retries on conflict) and the storage write they share.

#[allow(clippy::wildcard_imports)]
use super::*;

impl Registry {
    /// Replaces an object (PUT). `obj.metadata.resourceVersion`, when set, is
    /// a precondition; when empty the update is unconditional.
    pub async fn update(
        &self,
        res: &ResourceInfo,
        ns: &str,
        name: &str,
        obj: Value,
        target: Target,
        opts: &WriteOptions,
    ) -> Result<Value, ApiError> {
        let mut updated = match converted(res)? {
            None => self.update_stored(res, ns, name, obj, target, opts).await?,
            Some((stored, c)) => {
                let obj = to_storage(c, obj)?;
                let new = self
                    .update_stored(&stored, ns, name, obj, target, opts)
                    .await?;
                (c.from_storage)(new)
            }
        };
        self.after_dry_run(res, target, opts, &mut updated).await;
        Ok(updated)
    }

    pub(super) async fn update_stored(
        &self,
        res: &ResourceInfo,
        ns: &str,
        name: &str,
        mut obj: Value,
        target: Target,
        opts: &WriteOptions,
    ) -> Result<Value, ApiError> {
        if !obj.is_object() {
            return Err(ApiError::bad_request("the object must be a JSON object"));
        }
        // Upstream's update handler (checkName): the body names the object.
        let obj_name = meta_str(&obj, "name").unwrap_or("");
        if obj_name != name {
            return Err(ApiError::bad_request(format!(
                "the name of the object ({obj_name}) does not match the name on the URL ({name})"
            )));
        }
        if res.namespaced
            && let Some(obj_ns) = meta_str(&obj, "namespace").filter(|n| !n.is_empty() && *n != ns)
        {
            return Err(ApiError::bad_request(format!(
                "the namespace of the object ({obj_ns}) does not match the namespace on the URL ({ns})"
            )));
        }
        reconcile_namespace(res, &mut obj, ns)?;
        let expected = meta_str(&obj, "resourceVersion")
            .filter(|s| !s.is_empty())
            .map(|s| parse_rv(s, res, name))
            .transpose()?;
        let key = key::object(res, ns, name);
        let current = match self.store.get(&key).await {
            Ok(kv) => kv,
            Err(StoreError::NotFound { .. }) => {
                return Err(ApiError::not_found(res.group, res.plural, name));
            }
            Err(e) => return Err(store_error(e)),
        };
        let old = Registry::decode(&current)?;
        // Upstream's update handler makes a uid in the body a storage
        // precondition, checked before the resourceVersion.
        if let Some(sent) = meta_str(&obj, "uid").filter(|u| !u.is_empty())
            && sent != object::uid(&old)
        {
            return Err(ApiError::conflict(
                res.group,
                res.plural,
                name,
                &format!(
                    "StorageError: invalid object, Code: 4, Key: {key}, ResourceVersion: 0, \
                     AdditionalErrorMsg: Precondition failed: UID in precondition: {sent}, \
                     UID in object meta: {}",
                    object::uid(&old)
                ),
            ));
        }
        if let Some(rv) = expected
            && rv != current.mod_revision
        {
            return Err(ApiError::conflict(
                res.group,
                res.plural,
                name,
                ApiError::MODIFIED,
            ));
        }
        self.finish_update(res, ns, name, obj, &old, current.mod_revision, target, opts)
            .await
    }

    /// Admits, prepares and writes one update of `old` (stored at revision
    /// `expected`) to `wanted`, completing Service allocations.
    #[allow(clippy::too_many_arguments)]
    pub(super) async fn finish_update(
        &self,
        res: &ResourceInfo,
        ns: &str,
        name: &str,
        wanted: Value,
        old: &Value,
        expected: i64,
        target: Target,
        opts: &WriteOptions,
    ) -> Result<Value, ApiError> {
        if opts.requester.is_some() {
            custom::guard_federation(res, name)?;
        }
        let admission = admit::Request {
            res,
            operation: Operation::Update,
            namespace: ns,
            name,
            subresource: (target == Target::Status).then_some("status"),
            old: Some(old),
            dry_run: opts.dry_run,
            requester: opts.requester.as_ref(),
        };
        let mut obj = wanted;
        let allocator = self.service_allocator(res, opts.dry_run);
        let requested = allocator
            .as_ref()
            .map(|_| skein_admission::allocator::held(&obj));
        admit::mutate(&self.admission, &admission, &mut obj)?;
        let admitted = allocator.as_ref().map(|_| obj.clone());
        let mut claimed = None;
        let result = match self.prepare_update(res, obj, old, target, opts) {
            Ok(mut new) => {
                let claim = match (&allocator, &requested) {
                    (Some(a), Some(requested)) => self
                        .claim_service(a, ns, name, Some(old), &mut new, requested)
                        .await
                        .map(Some),
                    _ => Ok(None),
                };
                match claim {
                    Ok(c) => {
                        claimed = c;
                        self.write_update(res, ns, name, new, old, expected, opts)
                            .await
                    }
                    Err(e) => Err(e),
                }
            }
            Err(e) => Err(e),
        };
        if let (Some(a), Some(admitted)) = (&allocator, &admitted) {
            match &result {
                Err(_) => {
                    if let Some(claims) = &claimed {
                        self.drop_claims(a, ns, name, claims).await;
                    }
                    crate::admission::service_write_failed(a, Some(old), admitted)
                }
                Ok(stored) => {
                    let gone = object::is_deleting(stored) && object::finalizers(stored).is_empty();
                    let kept = (!gone).then_some(stored);
                    self.release_claims(ns, name, old, kept).await;
                    crate::admission::service_stored(a, old, kept);
                }
            }
        }
        result
    }

    /// Applies the strategy and system-field rules of an update.
    pub(super) fn prepare_update(
        &self,
        res: &ResourceInfo,
        obj: Value,
        old: &Value,
        target: Target,
        opts: &WriteOptions,
    ) -> Result<Value, ApiError> {
        let name = object::name(old).to_string();
        let namespace = meta_str(old, "namespace").unwrap_or("").to_string();
        if opts.requester.is_some() {
            custom::guard_federation(res, &name)?;
        }
        // An empty uid takes the stored one; another one is refused, as
        // upstream's common update validation does (a patch or apply that
        // names a uid is thereby a precondition: no write, a 422).
        if let Some(sent) = meta_str(&obj, "uid").filter(|u| !u.is_empty())
            && sent != object::uid(old)
        {
            return Err(ApiError::invalid(
                res.group,
                res.kind,
                &name,
                vec![Cause::invalid(
                    "metadata.uid",
                    format!("{sent:?}"),
                    "field is immutable",
                )],
            ));
        }
        let admission = admit::Request {
            res,
            operation: Operation::Update,
            namespace: &namespace,
            name: &name,
            subresource: (target == Target::Status).then_some("status"),
            old: Some(old),
            dry_run: opts.dry_run,
            requester: opts.requester.as_ref(),
        };
        let mut new = match target {
            Target::Main => {
                let mut new = obj;
                strategy::prepare_for_update(res, &mut new, old);
                new
            }
            Target::Status => strategy::prepare_for_status_update(&obj, old),
        };
        // Fields the client cannot change.
        for field in [
            "uid",
            "creationTimestamp",
            "deletionTimestamp",
            "deletionGracePeriodSeconds",
        ] {
            let v = old.get("metadata").and_then(|m| m.get(field)).cloned();
            set_meta(&mut new, field, v);
        }
        if let Some(generation) = old.get("metadata").and_then(|m| m.get("generation"))
            && !strategy::tracks_generation(res)
        {
            set_meta(&mut new, "generation", Some(generation.clone()));
        }
        let causes = validation::object_meta(&new, strategy::name_rule(res));
        if !causes.is_empty() {
            return Err(ApiError::invalid(
                res.group,
                res.kind,
                object::name(&new),
                causes,
            ));
        }
        admit::validate(&self.admission, &admission, &mut new)?;
        if !opts.keep_managed_fields {
            let subresource = opts
                .subresource
                .or((target == Target::Status).then_some("status"));
            managed::record_update(&mut new, Some(old), res, &opts.field_manager, subresource);
        }
        Ok(new)
    }

    /// Writes a prepared update with compare-and-swap on `expected`. An
    /// object being deleted whose last finalizer went away is removed.
    #[allow(clippy::too_many_arguments)]
    pub(super) async fn write_update(
        &self,
        res: &ResourceInfo,
        ns: &str,
        name: &str,
        mut new: Value,
        old: &Value,
        expected: i64,
        opts: &WriteOptions,
    ) -> Result<Value, ApiError> {
        let key = key::object(res, ns, name);
        if object::is_deleting(&new)
            && object::finalizers(&new).is_empty()
            && !spec_finalizers(res, &new)
        {
            if opts.dry_run {
                return Ok(new);
            }
            return match self.store.delete(&key, Some(expected)).await {
                Ok(_) => Ok(new),
                Err(e) => Err(write_error(res, name, e)),
            };
        }
        // A no-op update does not write (upstream skips the etcd write).
        // managedFields count: the field manager leaves them untouched when
        // nothing else changed, so a difference there is the client's own
        // (kubectl's and Helm's client-side → server-side apply upgrade).
        // Unless the stored bytes are stale (sealed with an old encryption
        // key): then the write goes through, which is how
        // `kubectl replace` re-encrypts, as upstream.
        if object::same_but_resource_version(old, &new)
            && !self.needs_rewrite(&key, expected, opts.dry_run).await?
        {
            let mut out = old.clone();
            set_meta(
                &mut out,
                "resourceVersion",
                Some(json!(expected.to_string())),
            );
            return Ok(out);
        }
        if opts.dry_run {
            set_meta(
                &mut new,
                "resourceVersion",
                Some(json!(expected.to_string())),
            );
            return Ok(new);
        }
        let bytes = Registry::encode(Self::storage_form(res, &new).await?.as_ref())?;
        match self.store.update(&key, &bytes, expected).await {
            Ok(kv) => {
                set_meta(
                    &mut new,
                    "resourceVersion",
                    Some(json!(kv.mod_revision.to_string())),
                );
                Ok(new)
            }
            Err(e) => Err(write_error(res, name, e)),
        }
    }

    /// Read-modify-write: `change` gets the current object and returns the
    /// new one (as a client would PUT it). Retried on conflicts, as
    /// upstream's GuaranteedUpdate. Used by patch and by controllers.
    pub async fn update_with<F>(
        &self,
        res: &ResourceInfo,
        ns: &str,
        name: &str,
        target: Target,
        opts: &WriteOptions,
        change: F,
    ) -> Result<Value, ApiError>
    where
        F: FnMut(&Value) -> Result<Value, ApiError> + Send,
    {
        let mut updated = self
            .update_with_inner(res, ns, name, target, opts, change)
            .await?;
        self.after_dry_run(res, target, opts, &mut updated).await;
        Ok(updated)
    }

    pub(super) async fn update_with_inner<F>(
        &self,
        res: &ResourceInfo,
        ns: &str,
        name: &str,
        target: Target,
        opts: &WriteOptions,
        mut change: F,
    ) -> Result<Value, ApiError>
    where
        F: FnMut(&Value) -> Result<Value, ApiError> + Send,
    {
        if let Some(c) = res.custom.clone() {
            let api_version = res.api_version;
            let (obj, _) = self
                .read_modify_write(
                    res,
                    ns,
                    name,
                    target,
                    opts,
                    false,
                    |current| match current {
                        Some(cur) => change(&c.present_blocking(api_version, cur.clone())?),
                        None => Err(ApiError::not_found(res.group, res.plural, name)),
                    },
                )
                .await?;
            return c.present_one(api_version, obj).await;
        }
        if let Some((stored, c)) = converted(res)? {
            // The change sees and returns `res`'s version; storage keeps its own.
            let (obj, _) =
                self.read_modify_write(&stored, ns, name, target, opts, false, |current| {
                    match current {
                        Some(cur) => to_storage(c, change(&(c.from_storage)(cur.clone()))?),
                        None => Err(ApiError::not_found(res.group, res.plural, name)),
                    }
                })
                .await?;
            return Ok((c.from_storage)(obj));
        }
        self.read_modify_write(
            res,
            ns,
            name,
            target,
            opts,
            false,
            |current| match current {
                Some(c) => change(c),
                None => Err(ApiError::not_found(res.group, res.plural, name)),
            },
        )
        .await
        .map(|(obj, _)| obj)
    }

    /// Server-side apply's read-merge-write. `merge` gets the live object
    /// (`None` when it does not exist) and returns the object to store, with
    /// its `managedFields` already computed by the apply engine. A missing
    /// object is created (the `bool` is then true). Retried on conflicts,
    /// so `merge` must be a pure function of its input.
    pub async fn apply_with<F>(
        &self,
        res: &ResourceInfo,
        ns: &str,
        name: &str,
        target: Target,
        opts: &WriteOptions,
        merge: F,
    ) -> Result<(Value, bool), ApiError>
    where
        F: FnMut(Option<&Value>) -> Result<Value, ApiError> + Send,
    {
        let (mut applied, created) = self
            .apply_with_inner(res, ns, name, target, opts, merge)
            .await?;
        self.after_dry_run(res, target, opts, &mut applied).await;
        Ok((applied, created))
    }

    pub(super) async fn apply_with_inner<F>(
        &self,
        res: &ResourceInfo,
        ns: &str,
        name: &str,
        target: Target,
        opts: &WriteOptions,
        merge: F,
    ) -> Result<(Value, bool), ApiError>
    where
        F: FnMut(Option<&Value>) -> Result<Value, ApiError> + Send,
    {
        let opts = WriteOptions {
            keep_managed_fields: true,
            ..opts.clone()
        };
        if let Some(c) = res.custom.clone() {
            let api_version = res.api_version;
            let mut merge = merge;
            let (obj, created) = self
                .read_modify_write(res, ns, name, target, &opts, true, |current| {
                    let current = current
                        .map(|cur| c.present_blocking(api_version, cur.clone()))
                        .transpose()?;
                    merge(current.as_ref())
                })
                .await?;
            return Ok((c.present_one(api_version, obj).await?, created));
        }
        if let Some((stored, c)) = converted(res)? {
            let mut merge = merge;
            let (obj, created) = self
                .read_modify_write(&stored, ns, name, target, &opts, true, |current| {
                    let current = current.map(|cur| (c.from_storage)(cur.clone()));
                    to_storage(c, merge(current.as_ref())?)
                })
                .await?;
            return Ok(((c.from_storage)(obj), created));
        }
        self.read_modify_write(res, ns, name, target, &opts, true, merge)
            .await
    }

    /// The loop behind [`Registry::update_with`] and
    /// [`Registry::apply_with`]: read, `change`, write with compare-and-swap,
    /// retry on conflicts. A missing object is 404, or, with
    /// `create_missing` (main resource only), created from `change(None)`.
    /// A resourceVersion in the changed object is a precondition; name and
    /// namespace are pinned to the URL's.
    #[allow(clippy::too_many_arguments)]
    pub(super) async fn read_modify_write<F>(
        &self,
        res: &ResourceInfo,
        ns: &str,
        name: &str,
        target: Target,
        opts: &WriteOptions,
        create_missing: bool,
        mut change: F,
    ) -> Result<(Value, bool), ApiError>
    where
        F: FnMut(Option<&Value>) -> Result<Value, ApiError> + Send,
    {
        let key = key::object(res, ns, name);
        for _ in 0..16 {
            let current = match self.store.get(&key).await {
                Ok(kv) => kv,
                Err(StoreError::NotFound { .. }) if create_missing && target == Target::Main => {
                    let mut obj = change(None)?;
                    set_meta(&mut obj, "name", Some(json!(name)));
                    match self.create_stored(res, ns, obj, opts).await {
                        Err(e) if e.reason() == "AlreadyExists" => continue,
                        other => return other.map(|o| (o, true)),
                    }
                }
                Err(StoreError::NotFound { .. }) => {
                    return Err(ApiError::not_found(res.group, res.plural, name));
                }
                Err(e) => return Err(store_error(e)),
            };
            let old = Registry::decode(&current)?;
            let mut wanted = change(Some(&old))?;
            if let Some(rv) = meta_str(&wanted, "resourceVersion").filter(|s| !s.is_empty())
                && parse_rv(rv, res, name)? != current.mod_revision
            {
                return Err(ApiError::conflict(
                    res.group,
                    res.plural,
                    name,
                    ApiError::MODIFIED,
                ));
            }
            set_meta(&mut wanted, "name", Some(json!(name)));
            if res.namespaced {
                set_meta(&mut wanted, "namespace", Some(json!(ns)));
            }
            let written = self
                .finish_update(
                    res,
                    ns,
                    name,
                    wanted,
                    &old,
                    current.mod_revision,
                    target,
                    opts,
                )
                .await;
            match written {
                Err(e) if e.reason() == "Conflict" => continue,
                other => return other.map(|o| (o, false)),
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
