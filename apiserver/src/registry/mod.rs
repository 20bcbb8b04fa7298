//! The generic registry: every kind's CRUD, list and watch over one
//! [`Store`], with per-kind differences in [`strategy`].
//!
//! Objects are `serde_json::Value`s in their external (`v1`) JSON form.
//! They are stored as JSON without `metadata.resourceVersion`; on the way
//! out, `resourceVersion` is set to the storage `mod_revision`.
//!
//! **Architecture Invariant:** this module (with `store.rs`) is the only
//! user of `skein-storage`, and the only place storage errors become
//! [`ApiError`]s. Controllers use the registry, never storage.

mod admit;
pub mod cache;
pub mod claims;
pub mod conversion;
pub mod custom;
pub mod dry_run;
pub mod filter;
pub mod key;
pub mod list;
pub mod managed;
pub mod object;
pub mod resource;
pub mod strategy;
pub mod subresource;
pub mod validation;
pub mod watch;

use std::sync::Arc;

use serde_json::{Value, json};
use skein_admission::allocator::InMemoryAllocator;
use skein_admission::{Chain, Operation};
use skein_storage::{Error as StoreError, KeyValue, Store};

use crate::status::{ApiError, Cause};
pub use dry_run::DryRunHook;
pub use filter::Filter;
use object::{meta_str, set_meta};
pub use resource::ResourceInfo;

/// How a write was asked for.
#[derive(Clone, Debug, Default)]
pub struct WriteOptions {
    /// `dryRun=All`: run everything, persist nothing.
    pub dry_run: bool,
    /// The field manager (`fieldManager`, else the user agent's product).
    pub field_manager: String,
    /// The object's `managedFields` were already computed by server-side
    /// apply; the registry must not record an Update for this write.
    pub keep_managed_fields: bool,
    /// The subresource the client wrote through when it is not the
    /// update's [`Target`] (`scale` writes the main object); recorded in
    /// the manager's managedFields entry.
    pub subresource: Option<&'static str>,
    /// Who asked, for strategies that record it (a
    /// CertificateSigningRequest's `spec.username`, `uid` and `groups`).
    pub requester: Option<Requester>,
    /// In-process writers only (never set from a request): a create keeps
    /// the `status` it carries, as a create followed by a status update
    /// would leave the object, in one write; managedFields record the
    /// status as the manager's through the `status` subresource.
    pub keep_status: bool,
}

/// The authenticated user behind a write, as the registry sees it.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Requester {
    /// User name.
    pub name: String,
    /// User uid (empty when the authenticator has none).
    pub uid: String,
    /// Groups.
    pub groups: Vec<String>,
}

/// Which part of an object an update targets.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Target {
    /// The main resource: status is ignored.
    Main,
    /// `/status`: only status changes.
    Status,
}

/// `DeleteOptions` that matter to the registry.
#[derive(Clone, Debug, Default)]
pub struct DeleteOptions {
    /// `dryRun=All`.
    pub dry_run: bool,
    /// `Background`, `Foreground` or `Orphan`; `None` = the kind's default.
    pub propagation: Option<Propagation>,
    /// Precondition on `metadata.uid`.
    pub precondition_uid: Option<String>,
    /// Precondition on `metadata.resourceVersion`.
    pub precondition_rv: Option<String>,
}

/// Garbage-collection propagation of a delete.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Propagation {
    /// Delete the owner now; the collector deletes dependents afterwards.
    Background,
    /// Delete dependents first, then the owner.
    Foreground,
    /// Leave dependents, removing their owner references.
    Orphan,
}

/// The finalizer of a foreground deletion.
pub const FOREGROUND_FINALIZER: &str = "foregroundDeletion";
/// The finalizer of an orphaning deletion.
pub const ORPHAN_FINALIZER: &str = "orphan";

/// The result of a delete.
#[derive(Debug)]
pub enum Deleted {
    /// The object is gone (its last state).
    Gone(Value),
    /// The object is marked for deletion and waits for finalizers.
    Pending(Value),
}

/// The registry. Cheap to clone.
#[derive(Clone)]
pub struct Registry {
    store: Arc<dyn Store>,
    admission: Arc<Chain>,
    /// Service cluster IPs and node ports, shared with the chain's
    /// allocation plugin: completed (rolled back or released) here.
    services: Option<Arc<InMemoryAllocator>>,
    /// Decorates dry runs' answers ([`DryRunHook`]).
    dry_run_hook: Option<Arc<dyn DryRunHook>>,
    /// The watch caches lists and watches are served from, if enabled.
    cache: Option<Arc<cache::Cacher>>,
    /// The server instance this registry belongs to: its resource table,
    /// metrics and per-instance values.
    instance: Arc<crate::instance::Instance>,
}

/// SHA-256 of `data`.
pub fn sha256(data: &[u8]) -> [u8; 32] {
    use sha2::Digest;
    sha2::Sha256::digest(data).into()
}

/// Maps storage failures that are not about the request itself.
pub(crate) fn store_error(e: StoreError) -> ApiError {
    match e {
        StoreError::TooLarge { .. } => ApiError::too_large("etcdserver: request is too large"),
        StoreError::Unavailable(m) => ApiError::unavailable(m),
        other => ApiError::internal(other.to_string()),
    }
}

/// Maps the failure of a compare-and-swap write of one object: a changed
/// object is 409 Conflict, a vanished one 404.
fn write_error(res: &ResourceInfo, name: &str, e: StoreError) -> ApiError {
    match e {
        StoreError::Conflict { .. } => {
            ApiError::conflict(res.group, res.plural, name, ApiError::MODIFIED)
        }
        StoreError::NotFound { .. } => ApiError::not_found(res.group, res.plural, name),
        other => store_error(other),
    }
}

/// The storage row and conversion of `res` when it is served in a version
/// other than its storage version; `None` when it is stored as served.
fn converted(
    res: &ResourceInfo,
) -> Result<Option<(Arc<ResourceInfo>, &'static conversion::Conversion)>, ApiError> {
    match res.conversion {
        None => Ok(None),
        Some(c) => resource::storage_of(res)
            .map(|stored| Some((stored, c)))
            .ok_or_else(|| {
                ApiError::internal(format!("no storage version for {}", res.qualified()))
            }),
    }
}

/// Converts a request object into its storage version (400 on failure, as
/// upstream's decoding does).
fn to_storage(c: &conversion::Conversion, obj: Value) -> Result<Value, ApiError> {
    (c.to_storage)(obj).map_err(ApiError::bad_request)
}

/// A UUIDv4 string.
fn new_uid() -> String {
    uuid::Uuid::new_v4().to_string()
}

/// `generateName` suffix: 5 characters from upstream's alphabet.
fn random_suffix() -> String {
    const ALPHABET: &[u8] = b"bcdfghjklmnpqrstvwxz2456789";
    uuid::Uuid::new_v4()
        .as_bytes()
        .iter()
        .take(5)
        .map(|b| ALPHABET[*b as usize % ALPHABET.len()] as char)
        .collect()
}

impl Registry {
    /// A registry over `store`, in a server instance of its own (see
    /// [`Registry::with_instance`]).
    pub fn new(store: Arc<dyn Store>) -> Self {
        Registry {
            store,
            admission: Arc::new(Chain::new()),
            services: None,
            dry_run_hook: None,
            cache: None,
            instance: crate::instance::Instance::new(),
        }
    }

    /// The same registry in server instance `instance`: every registry of
    /// one server shares its instance (resource table, metrics, shared
    /// informers).
    pub fn with_instance(mut self, instance: Arc<crate::instance::Instance>) -> Self {
        self.instance = instance;
        self
    }

    /// The server instance.
    pub fn instance(&self) -> &Arc<crate::instance::Instance> {
        &self.instance
    }

    /// The server instance's resource table.
    pub fn resources(&self) -> &resource::Resources {
        self.instance.resources()
    }

    /// The same registry serving lists, `resourceVersion=0` gets and
    /// watches from `cacher` (see `list.rs` and `watch.rs` for which reads
    /// still go to the store).
    pub fn with_watch_cache(mut self, cacher: Arc<cache::Cacher>) -> Self {
        self.cache = Some(cacher);
        self
    }

    /// The watch caches, if enabled.
    pub fn watch_cache(&self) -> Option<&Arc<cache::Cacher>> {
        self.cache.as_ref()
    }

    /// The same registry running `admission`'s chain on every create and
    /// update, and completing its Service address allocations.
    pub fn with_admission(mut self, admission: crate::admission::Admission) -> Self {
        self.admission = Arc::new(admission.chain);
        self.services = Some(admission.services);
        self
    }

    /// The Service allocator, when `res` is core/v1 Services and the write
    /// persists (dry runs allocate nothing).
    fn service_allocator(
        &self,
        res: &ResourceInfo,
        dry_run: bool,
    ) -> Option<Arc<InMemoryAllocator>> {
        (res.group.is_empty() && res.plural == "services" && !dry_run)
            .then(|| self.services.clone())
            .flatten()
    }

    /// The underlying store (for health checks).
    pub fn store(&self) -> &Arc<dyn Store> {
        &self.store
    }

    /// The watch cache's current entry for an object of `res` (its stored
    /// bytes, shared), for readers that hold entries instead of decoded
    /// copies (see `controllers::informer`); `Registry::decode` of its
    /// pair is what a read of the object returns. `None` when the cache is off, has not
    /// listed yet, does not hold the object, or `res` is a custom or
    /// converted resource (its stored bytes are not what a read returns).
    /// Never reads the store.
    pub fn cached_entry(
        &self,
        res: &ResourceInfo,
        ns: &str,
        name: &str,
    ) -> Option<Arc<cache::index::Entry>> {
        let cacher = self.cache.as_ref()?;
        if res.custom.is_some() || res.conversion.is_some() {
            return None;
        }
        let (entry, _) = cacher
            .cache(&key::prefix(res, None))
            .get(&key::object(res, ns, name))?;
        entry
    }

    /// Decodes a stored object and stamps its resourceVersion.
    pub(crate) fn decode(kv: &KeyValue) -> Result<Value, ApiError> {
        let mut obj: Value = serde_json::from_slice(&kv.value)
            .map_err(|e| ApiError::internal(format!("stored object {} is corrupt: {e}", kv.key)))?;
        set_meta(
            &mut obj,
            "resourceVersion",
            Some(json!(kv.mod_revision.to_string())),
        );
        Ok(obj)
    }

    /// A custom resource written through a version other than its CRD's
    /// storage version, converted to the storage version (as upstream's
    /// storage codec); every other object as it is.
    async fn storage_form<'a>(
        res: &ResourceInfo,
        obj: &'a Value,
    ) -> Result<std::borrow::Cow<'a, Value>, ApiError> {
        let Some(c) = &res.custom else {
            return Ok(std::borrow::Cow::Borrowed(obj));
        };
        if c.version == c.storage_version {
            return Ok(std::borrow::Cow::Borrowed(obj));
        }
        let storage_api_version = format!("{}/{}", res.group, c.storage_version);
        let mut out = c
            .converter
            .convert(vec![obj.clone()], &storage_api_version)
            .await?;
        out.pop()
            .map(std::borrow::Cow::Owned)
            .ok_or_else(|| ApiError::internal("conversion returned no object"))
    }

    /// Whether a write that changes nothing must still happen because the
    /// stored bytes are stale ([`Store::needs_rewrite`]: an old encryption
    /// key). Dry runs never write, so never ask.
    async fn needs_rewrite(
        &self,
        key: &str,
        expected: i64,
        dry_run: bool,
    ) -> Result<bool, ApiError> {
        if dry_run {
            return Ok(false);
        }
        self.store
            .needs_rewrite(key, expected)
            .await
            .map_err(store_error)
    }

    /// Serializes an object for storage, without its resourceVersion.
    /// Upstream's JSON form ([`crate::wire::storage_bytes`]: Go field order
    /// and zero values), written without a copy of the object.
    fn encode(obj: &Value) -> Result<Vec<u8>, ApiError> {
        Ok(crate::wire::storage_bytes(obj))
    }

    /// Reads one object, in `res`'s version.
    pub async fn get(&self, res: &ResourceInfo, ns: &str, name: &str) -> Result<Value, ApiError> {
        if let Some(c) = &res.custom {
            let obj = self.get_stored(res, ns, name).await?;
            return c.present_one(res.api_version, obj).await;
        }
        match converted(res)? {
            None => self.get_stored(res, ns, name).await,
            Some((stored, c)) => Ok((c.from_storage)(self.get_stored(&stored, ns, name).await?)),
        }
    }

    /// Reads one object as [`Registry::get`], honouring the request's
    /// `resourceVersion`: `0` ("any") is served from the watch cache when it
    /// is on, as upstream's cacher; anything else reads the store's latest
    /// state (which satisfies every "not older than").
    pub async fn get_at(
        &self,
        res: &ResourceInfo,
        ns: &str,
        name: &str,
        resource_version: Option<&str>,
    ) -> Result<Value, ApiError> {
        if resource_version != Some("0") || self.cache.is_none() {
            return self.get(res, ns, name).await;
        }
        if let Some(c) = &res.custom {
            let obj = self.get_cached(res, ns, name).await?;
            return c.present_one(res.api_version, obj).await;
        }
        match converted(res)? {
            None => self.get_cached(res, ns, name).await,
            Some((stored, c)) => Ok((c.from_storage)(self.get_cached(&stored, ns, name).await?)),
        }
    }

    /// Reads one object of a storage-version row from the watch cache (the
    /// store when the cache is off or has not listed yet).
    async fn get_cached(
        &self,
        res: &ResourceInfo,
        ns: &str,
        name: &str,
    ) -> Result<Value, ApiError> {
        let Some(cacher) = &self.cache else {
            return self.get_stored(res, ns, name).await;
        };
        let cache = cacher.cache(&key::prefix(res, None));
        cache.wait_for(1).await;
        match cache.get(&key::object(res, ns, name)) {
            Some((Some(entry), _)) => Registry::decode(&entry.kv),
            Some((None, _)) => Err(ApiError::not_found(res.group, res.plural, name)),
            None => self.get_stored(res, ns, name).await,
        }
    }

    /// Reads one object of a storage-version row.
    async fn get_stored(
        &self,
        res: &ResourceInfo,
        ns: &str,
        name: &str,
    ) -> Result<Value, ApiError> {
        match self.store.get(&key::object(res, ns, name)).await {
            Ok(kv) => Registry::decode(&kv),
            Err(StoreError::NotFound { .. }) => {
                Err(ApiError::not_found(res.group, res.plural, name))
            }
            Err(e) => Err(store_error(e)),
        }
    }

    /// Checks that namespace `ns` exists and is not terminating.
    async fn check_namespace(
        &self,
        res: &ResourceInfo,
        ns: &str,
        name: &str,
    ) -> Result<(), ApiError> {
        let Some(namespaces) = resource::builtin("", "v1", "namespaces") else {
            return Ok(());
        };
        // Only the namespace's metadata matters: read its header, not the
        // whole object (this runs on every namespaced create).
        let deleting = match self.store.get(&key::object(&namespaces, "", ns)).await {
            Ok(kv) => {
                object::Header::decode(&kv.value)
                    .ok_or_else(|| {
                        ApiError::internal(format!("stored object {} is corrupt", kv.key))
                    })?
                    .deleting
            }
            Err(StoreError::NotFound { .. }) => {
                return Err(ApiError::not_found("", "namespaces", ns));
            }
            Err(e) => return Err(store_error(e)),
        };
        if deleting {
            let why = format!(
                "unable to create new content in namespace {ns} because it is being terminated"
            );
            let mut err = ApiError::forbidden(res.group, res.plural, name, &why);
            err = err.with_cause("NamespaceTerminating", &why, "metadata.namespace");
            return Err(err);
        }
        Ok(())
    }

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

    async fn create_stored(
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

    async fn update_stored(
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
    async fn finish_update(
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
    fn prepare_update(
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
    async fn write_update(
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

    async fn update_with_inner<F>(
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

    async fn apply_with_inner<F>(
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
    async fn read_modify_write<F>(
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

    async fn delete_stored(
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

/// The object's namespace against the URL's (upstream `rest/meta.go`):
/// defaulted from the URL, must match it, cleared for cluster-scoped kinds.
fn reconcile_namespace(res: &ResourceInfo, obj: &mut Value, ns: &str) -> Result<(), ApiError> {
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

/// Whether a Namespace still has `spec.finalizers` (its controller's).
fn spec_finalizers(res: &ResourceInfo, obj: &Value) -> bool {
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
fn check_delete_preconditions(
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

/// The propagation used when the client names none (upstream's
/// `DefaultGarbageCollectionPolicy`: orphan for the legacy workload kinds).
pub fn default_propagation(res: &ResourceInfo) -> Propagation {
    match (res.group, res.plural) {
        ("", "replicationcontrollers") | ("batch", "jobs") => Propagation::Orphan,
        _ => Propagation::Background,
    }
}

/// Parses a resourceVersion given by a client.
pub fn parse_rv(rv: &str, res: &ResourceInfo, name: &str) -> Result<i64, ApiError> {
    rv.parse::<i64>().ok().filter(|v| *v >= 0).ok_or_else(|| {
        ApiError::invalid(
            res.group,
            res.kind,
            name,
            vec![Cause::invalid(
                "metadata.resourceVersion",
                format!("{rv:?}"),
                "must be a valid resource version",
            )],
        )
    })
}
