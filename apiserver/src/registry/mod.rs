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
mod create;
mod delete;
mod update;

use create::reconcile_namespace;
use delete::spec_finalizers;
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
    pub requester: Option<skein_admission::UserInfo>,
    /// In-process writers only (never set from a request): a create keeps
    /// the `status` it carries, as a create followed by a status update
    /// would leave the object, in one write; managedFields record the
    /// status as the manager's through the `status` subresource.
    pub keep_status: bool,
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
        // A custom resource's entry is its stored version: usable when
        // serving it converts nothing but `apiVersion` (strategy `None`,
        // see [`custom::CustomVersion::present`]).
        if res.conversion.is_some()
            || res
                .custom
                .as_ref()
                .is_some_and(|c| !matches!(*c.converter, conversion::custom::CustomConverter::None))
        {
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
