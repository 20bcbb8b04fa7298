//! The resource table: one row per served group/version/resource, built from
//! the k8s-openapi `v1_33` types (group, version, kind, plural, scope and list
//! kind come from the `Resource` traits) plus the discovery facts those types
//! do not carry (short names, categories, subresources), taken from
//! kube-apiserver v1.33's discovery documents, plus the rows of established
//! CustomResourceDefinitions (`super::custom`).
//!
//! # Contracts
//! - Each server instance has its own table ([`Resources`], held by its
//!   registry): an immutable snapshot behind an `ArcSwap`: readers
//!   ([`Resources::snapshot`], [`Resources::find`], ...) never block and
//!   never see a half-made change; [`Resources::replace_custom`] swaps in
//!   a new snapshot with a higher [`Table::generation`] (discovery ETags
//!   and the OpenAPI cache key on it). Built-in rows ([`builtin`]) are
//!   shared, immutable data.
//! - Built-in rows never change. Custom rows are replaced as a whole set.
//! - Strings of custom rows are interned ([`intern`]), so a row's `&'static
//!   str`s cost memory once per distinct name, not once per CRD change.

use std::collections::HashSet;
use std::sync::{Arc, Mutex, OnceLock};

use arc_swap::ArcSwap;

use k8s_openapi::{ClusterResourceScope, ListableResource, NamespaceResourceScope};
use serde_json::Value;

use super::conversion::{self, Conversion};

/// How the `scale` subresource maps onto the object.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ScaleMapping {
    /// Field path of the desired replicas (`spec.replicas`).
    pub spec_replicas: &'static str,
}

/// One served resource.
#[derive(Debug)]
pub struct ResourceInfo {
    /// API group ("" for core).
    pub group: &'static str,
    /// Version.
    pub version: &'static str,
    /// `apiVersion` string (`apps/v1`, `v1`).
    pub api_version: &'static str,
    /// Kind.
    pub kind: &'static str,
    /// List kind.
    pub list_kind: &'static str,
    /// Plural resource name (URL segment).
    pub plural: &'static str,
    /// Singular name (lowercase kind).
    pub singular: String,
    /// Whether objects live in namespaces.
    pub namespaced: bool,
    /// kubectl short names.
    pub short_names: &'static [&'static str],
    /// Categories (`all`).
    pub categories: &'static [&'static str],
    /// Whether the `status` subresource exists (status/spec split).
    pub status: bool,
    /// The `scale` subresource, if any.
    pub scale: Option<ScaleMapping>,
    /// Decodes into the typed k8s-openapi struct and back: the object as a
    /// real API server would store it (unknown fields dropped). Errors are
    /// decode errors, for a 400. Use [`ResourceInfo::normalize`], which
    /// also prunes and defaults custom resources.
    pub decode: fn(Value) -> Result<Value, serde_json::Error>,
    /// How this version maps onto the resource's storage version; `None`
    /// when this row is the storage version (custom rows convert through
    /// [`ResourceInfo::custom`]).
    pub conversion: Option<&'static Conversion>,
    /// The served CRD version behind a custom row; `None` for built-ins.
    pub custom: Option<Arc<super::custom::CustomVersion>>,
}

impl ResourceInfo {
    /// The object as this resource stores it: built-ins through their typed
    /// k8s-openapi struct; custom resources defaulted and pruned by their
    /// structural schema, with `metadata` decoded as `ObjectMeta`. Errors are
    /// decode errors, for a 400.
    pub fn normalize(&self, v: Value) -> Result<Value, serde_json::Error> {
        match &self.custom {
            None => (self.decode)(v),
            Some(c) => c.normalize(v),
        }
    }

    /// Whether this row serves a CustomResourceDefinition.
    pub fn is_custom(&self) -> bool {
        self.custom.is_some()
    }

    /// `deployments.apps` / `pods`: the group-qualified resource, as used in
    /// error messages.
    pub fn qualified(&self) -> String {
        if self.group.is_empty() {
            self.plural.to_string()
        } else {
            format!("{}.{}", self.plural, self.group)
        }
    }

    /// `Deployment.apps` / `Pod`: the group-qualified kind, used by Invalid.
    pub fn qualified_kind(&self) -> String {
        if self.group.is_empty() {
            self.kind.to_string()
        } else {
            format!("{}.{}", self.kind, self.group)
        }
    }

    /// The verbs served on the collection and objects.
    pub fn verbs(&self) -> &'static [&'static str] {
        const ALL: &[&str] = &[
            "create",
            "delete",
            "deletecollection",
            "get",
            "list",
            "patch",
            "update",
            "watch",
        ];
        // Namespaces go one by one through their controller: upstream's
        // namespace storage has no DeleteCollection.
        const NO_COLLECTION_DELETE: &[&str] = &[
            "create", "delete", "get", "list", "patch", "update", "watch",
        ];
        if self.group.is_empty() && self.plural == "namespaces" {
            NO_COLLECTION_DELETE
        } else if self.group.is_empty() && self.plural == "componentstatuses" {
            // Read-only and computed (http/componentstatus.rs).
            &["get", "list"]
        } else {
            ALL
        }
    }

    /// Whether DELETE answers with the deleted object rather than a
    /// `Success` Status: upstream's `ReturnDeletedObject` storages (typed
    /// clients decode the body into the kind).
    pub fn returns_deleted_object(&self) -> bool {
        matches!(
            (self.group, self.plural),
            (
                "",
                "pods"
                    | "services"
                    | "serviceaccounts"
                    | "podtemplates"
                    | "resourcequotas"
                    | "persistentvolumes"
                    | "persistentvolumeclaims"
                    | "namespaces"
            ) | (
                "storage.k8s.io",
                "storageclasses" | "csidrivers" | "csinodes" | "volumeattachments"
            )
        )
    }

    /// Base64 of the first 8 bytes of sha256("group/version/Kind") of the
    /// storage version — the discovery `storageVersionHash` (the same for
    /// every served version of one resource).
    pub fn storage_version_hash(&self) -> String {
        use base64::Engine;
        let input = if let Some(c) = &self.custom {
            format!("{}/{}/{}", self.group, c.storage_version, self.kind)
        } else {
            match storage_of(self) {
                Some(s) => format!("{}/{}/{}", s.group, s.version, s.kind),
                None => format!("{}/{}/{}", self.group, self.version, self.kind),
            }
        };
        let digest = crate::registry::sha256(input.as_bytes());
        base64::engine::general_purpose::STANDARD.encode(&digest[..8])
    }
}

/// Marks the two object scopes; subresource-scoped types are not served as
/// resources.
trait Scope {
    const NAMESPACED: bool;
}
impl Scope for NamespaceResourceScope {
    const NAMESPACED: bool = true;
}
impl Scope for ClusterResourceScope {
    const NAMESPACED: bool = false;
}

fn normalize<T>(v: Value) -> Result<Value, serde_json::Error>
where
    T: serde::de::DeserializeOwned + serde::Serialize,
{
    let typed: T = serde_json::from_value(v)?;
    serde_json::to_value(typed)
}

fn row<T>() -> ResourceInfo
where
    T: ListableResource + serde::de::DeserializeOwned + serde::Serialize,
    T::Scope: Scope,
{
    let extra = extras(T::GROUP, T::URL_PATH_SEGMENT);
    ResourceInfo {
        group: T::GROUP,
        version: T::VERSION,
        api_version: T::API_VERSION,
        kind: T::KIND,
        list_kind: T::LIST_KIND,
        plural: T::URL_PATH_SEGMENT,
        singular: T::KIND.to_ascii_lowercase(),
        namespaced: <T::Scope as Scope>::NAMESPACED,
        short_names: extra.short_names,
        categories: extra.categories,
        status: extra.status,
        scale: extra.scale.then_some(ScaleMapping {
            spec_replicas: "spec.replicas",
        }),
        decode: normalize::<T>,
        conversion: None,
        custom: None,
    }
}

/// A row served in a version other than its storage version.
fn converted<T>(conversion: &'static Conversion) -> ResourceInfo
where
    T: ListableResource + serde::de::DeserializeOwned + serde::Serialize,
    T::Scope: Scope,
{
    let mut r = row::<T>();
    let stored = extras(conversion.storage_group, conversion.storage_plural);
    r.short_names = stored.short_names;
    r.categories = stored.categories;
    r.status = stored.status;
    r.conversion = Some(conversion);
    r
}

struct Extra {
    short_names: &'static [&'static str],
    categories: &'static [&'static str],
    status: bool,
    scale: bool,
}

/// Discovery facts of kube-apiserver v1.33 that the types do not carry.
fn extras(group: &str, plural: &str) -> Extra {
    const ALL: &[&str] = &["all"];
    let (short_names, categories, status, scale): (&[&str], &[&str], bool, bool) =
        match (group, plural) {
            ("", "pods") => (&["po"], ALL, true, false),
            ("", "services") => (&["svc"], ALL, true, false),
            ("", "replicationcontrollers") => (&["rc"], ALL, true, true),
            ("", "namespaces") => (&["ns"], &[], true, false),
            ("", "nodes") => (&["no"], &[], true, false),
            ("", "componentstatuses") => (&["cs"], &[], false, false),
            ("", "configmaps") => (&["cm"], &[], false, false),
            ("", "endpoints") => (&["ep"], &[], false, false),
            ("", "events") => (&["ev"], &[], false, false),
            ("", "limitranges") => (&["limits"], &[], false, false),
            ("", "persistentvolumeclaims") => (&["pvc"], &[], true, false),
            ("", "persistentvolumes") => (&["pv"], &[], true, false),
            ("", "resourcequotas") => (&["quota"], &[], true, false),
            ("", "serviceaccounts") => (&["sa"], &[], false, false),
            ("apps", "deployments") => (&["deploy"], ALL, true, true),
            ("apps", "replicasets") => (&["rs"], ALL, true, true),
            ("apps", "statefulsets") => (&["sts"], ALL, true, true),
            ("apps", "daemonsets") => (&["ds"], ALL, true, false),
            ("batch", "jobs") => (&[], ALL, true, false),
            ("batch", "cronjobs") => (&["cj"], ALL, true, false),
            ("autoscaling", "horizontalpodautoscalers") => (&["hpa"], ALL, true, false),
            ("policy", "poddisruptionbudgets") => (&["pdb"], &[], true, false),
            ("networking.k8s.io", "ingresses") => (&["ing"], &[], true, false),
            ("networking.k8s.io", "networkpolicies") => (&["netpol"], &[], false, false),
            ("networking.k8s.io", "servicecidrs") => (&[], &[], true, false),
            ("networking.k8s.io", "ipaddresses") => (&["ip"], &[], false, false),
            ("events.k8s.io", "events") => (&["ev"], &[], false, false),
            ("scheduling.k8s.io", "priorityclasses") => (&["pc"], &[], false, false),
            ("storage.k8s.io", "storageclasses") => (&["sc"], &[], false, false),
            ("storage.k8s.io", "volumeattachments") => (&[], &[], true, false),
            ("apiextensions.k8s.io", "customresourcedefinitions") => {
                (&["crd", "crds"], &["api-extensions"], true, false)
            }
            ("apiregistration.k8s.io", "apiservices") => (&[], &["api-extensions"], true, false),
            ("admissionregistration.k8s.io", "validatingadmissionpolicies") => {
                (&[], &["api-extensions"], true, false)
            }
            ("admissionregistration.k8s.io", _) => (&[], &["api-extensions"], false, false),
            ("certificates.k8s.io", "certificatesigningrequests") => (&["csr"], &[], true, false),
            ("flowcontrol.apiserver.k8s.io", _) => (&[], &[], true, false),
            _ => (&[], &[], false, false),
        };
    Extra {
        short_names,
        categories,
        status,
        scale,
    }
}

/// One immutable snapshot of every served resource.
#[derive(Debug, Default)]
pub struct Table {
    generation: u64,
    rows: Vec<Arc<ResourceInfo>>,
}

impl Table {
    /// Bumped by every change; equal generations mean equal tables.
    pub fn generation(&self) -> u64 {
        self.generation
    }

    /// Every row, in discovery order: built-ins (groups in kube-apiserver's
    /// priority order, then resources by name), then custom groups.
    pub fn iter(&self) -> impl Iterator<Item = &Arc<ResourceInfo>> {
        self.rows.iter()
    }

    /// Finds a row by group, version and plural.
    pub fn find(&self, group: &str, version: &str, plural: &str) -> Option<&Arc<ResourceInfo>> {
        self.rows
            .iter()
            .find(|r| r.group == group && r.version == version && r.plural == plural)
    }
}

/// The built-in rows, the same in every server instance; never change.
fn builtin_table() -> &'static Table {
    static TABLE: OnceLock<Table> = OnceLock::new();
    TABLE.get_or_init(|| Table {
        generation: 1,
        rows: build().into_iter().map(Arc::new).collect(),
    })
}

/// Finds a built-in resource by group, version and plural: for code that
/// names a built-in type (a custom resource never shadows one). What a
/// client or a CRD names is looked up in the instance's [`Resources`].
pub fn builtin(group: &str, version: &str, plural: &str) -> Option<Arc<ResourceInfo>> {
    builtin_table().find(group, version, plural).cloned()
}

/// Every built-in row, in discovery order.
pub fn builtins() -> Vec<Arc<ResourceInfo>> {
    builtin_table().rows.clone()
}

/// One server instance's resource table: the built-in rows and the rows
/// of its established CRDs. Cheap to clone (a handle); two instances in
/// one process have tables of their own.
#[derive(Clone)]
pub struct Resources {
    inner: Arc<Cell>,
}

struct Cell {
    table: ArcSwap<Table>,
    writer: Mutex<()>,
}

impl std::fmt::Debug for Resources {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Resources")
            .field("generation", &self.snapshot().generation)
            .finish()
    }
}

impl Default for Resources {
    fn default() -> Self {
        Resources::new()
    }
}

impl Resources {
    /// A table of the built-in rows only.
    pub fn new() -> Resources {
        let builtin = builtin_table();
        Resources {
            inner: Arc::new(Cell {
                table: ArcSwap::from_pointee(Table {
                    generation: builtin.generation,
                    rows: builtin.rows.clone(),
                }),
                writer: Mutex::new(()),
            }),
        }
    }

    /// The current snapshot. Hold it for the duration of one request so
    /// every lookup in it agrees.
    pub fn snapshot(&self) -> Arc<Table> {
        self.inner.table.load_full()
    }

    /// Every served resource (the current snapshot's rows), in discovery
    /// order.
    pub fn all(&self) -> Vec<Arc<ResourceInfo>> {
        self.snapshot().rows.clone()
    }

    /// Replaces every custom row with `rows` (ordered by the caller) and
    /// bumps the generation. Built-in rows are kept; a custom row may not
    /// shadow one (the CRD controller refuses such names before they get
    /// here).
    pub fn replace_custom(&self, rows: Vec<Arc<ResourceInfo>>) {
        let _guard = self
            .inner
            .writer
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        let cur = self.inner.table.load();
        let mut next: Vec<Arc<ResourceInfo>> = cur
            .rows
            .iter()
            .filter(|r| !r.is_custom())
            .cloned()
            .collect();
        next.extend(rows);
        self.inner.table.store(Arc::new(Table {
            generation: cur.generation + 1,
            rows: next,
        }));
    }

    /// The rows that are storage versions: one per stored resource.
    /// Everything that walks storage (the garbage collector, namespace
    /// deletion, startup scans) iterates these, so no object is seen twice.
    pub fn stored(&self) -> Vec<Arc<ResourceInfo>> {
        self.snapshot()
            .iter()
            .filter(|r| r.is_storage())
            .cloned()
            .collect()
    }

    /// Finds a resource by group, version and plural.
    pub fn find(&self, group: &str, version: &str, plural: &str) -> Option<Arc<ResourceInfo>> {
        self.snapshot().find(group, version, plural).cloned()
    }

    /// Finds the resource of a kind in a group/version.
    pub fn by_kind(&self, group: &str, version: &str, kind: &str) -> Option<Arc<ResourceInfo>> {
        self.snapshot()
            .iter()
            .find(|r| r.group == group && r.version == version && r.kind == kind)
            .cloned()
    }
}

/// The interned copy of `s`: one leaked allocation per distinct string, so
/// custom rows can carry `&'static str`s like built-in ones.
pub fn intern(s: &str) -> &'static str {
    static STRINGS: OnceLock<Mutex<HashSet<&'static str>>> = OnceLock::new();
    let set = STRINGS.get_or_init(Default::default);
    let mut set = set
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner);
    if let Some(found) = set.get(s) {
        return found;
    }
    let leaked: &'static str = Box::leak(s.to_owned().into_boxed_str());
    set.insert(leaked);
    leaked
}

/// The interned copy of a list of strings (short names, categories).
pub fn intern_list(items: &[String]) -> &'static [&'static str] {
    static LISTS: OnceLock<Mutex<HashSet<&'static [&'static str]>>> = OnceLock::new();
    let interned: Vec<&'static str> = items.iter().map(|s| intern(s)).collect();
    let set = LISTS.get_or_init(Default::default);
    let mut set = set
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner);
    if let Some(found) = set.get(interned.as_slice()) {
        return found;
    }
    let leaked: &'static [&'static str] = Box::leak(interned.into_boxed_slice());
    set.insert(leaked);
    leaked
}

fn build() -> Vec<ResourceInfo> {
    use k8s_openapi::api::{
        admissionregistration::v1 as admreg, apps::v1 as apps, autoscaling::v1 as autoscaling_v1,
        autoscaling::v2 as autoscaling, batch::v1 as batch, certificates::v1 as certs,
        coordination::v1 as coord, core::v1 as core, discovery::v1 as disc, events::v1 as events,
        flowcontrol::v1 as flow, networking::v1 as net, node::v1 as node, policy::v1 as policy,
        rbac::v1 as rbac, scheduling::v1 as sched, storage::v1 as storage,
    };
    use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1 as apiext;
    use k8s_openapi::kube_aggregator::pkg::apis::apiregistration::v1 as apireg;

    let mut rows = vec![
        row::<core::ComponentStatus>(),
        row::<core::ConfigMap>(),
        row::<core::Endpoints>(),
        row::<core::Event>(),
        row::<core::LimitRange>(),
        row::<core::Namespace>(),
        row::<core::Node>(),
        row::<core::PersistentVolumeClaim>(),
        row::<core::PersistentVolume>(),
        row::<core::Pod>(),
        row::<core::PodTemplate>(),
        row::<core::ReplicationController>(),
        row::<core::ResourceQuota>(),
        row::<core::Secret>(),
        row::<core::ServiceAccount>(),
        row::<core::Service>(),
        row::<apireg::APIService>(),
        row::<apps::ControllerRevision>(),
        row::<apps::DaemonSet>(),
        row::<apps::Deployment>(),
        row::<apps::ReplicaSet>(),
        row::<apps::StatefulSet>(),
        converted::<events::Event>(&conversion::event::EVENTS_V1),
        row::<autoscaling::HorizontalPodAutoscaler>(),
        converted::<autoscaling_v1::HorizontalPodAutoscaler>(&conversion::hpa::HPA_V1),
        row::<batch::CronJob>(),
        row::<batch::Job>(),
        row::<certs::CertificateSigningRequest>(),
        row::<net::IngressClass>(),
        row::<net::Ingress>(),
        row::<net::IPAddress>(),
        row::<net::NetworkPolicy>(),
        row::<net::ServiceCIDR>(),
        row::<policy::PodDisruptionBudget>(),
        row::<rbac::ClusterRoleBinding>(),
        row::<rbac::ClusterRole>(),
        row::<rbac::RoleBinding>(),
        row::<rbac::Role>(),
        row::<storage::CSIDriver>(),
        row::<storage::CSINode>(),
        row::<storage::CSIStorageCapacity>(),
        row::<storage::StorageClass>(),
        row::<storage::VolumeAttachment>(),
        row::<admreg::MutatingWebhookConfiguration>(),
        row::<admreg::ValidatingAdmissionPolicy>(),
        row::<admreg::ValidatingAdmissionPolicyBinding>(),
        row::<admreg::ValidatingWebhookConfiguration>(),
        row::<apiext::CustomResourceDefinition>(),
        row::<sched::PriorityClass>(),
        row::<coord::Lease>(),
        row::<node::RuntimeClass>(),
        row::<flow::FlowSchema>(),
        row::<flow::PriorityLevelConfiguration>(),
        row::<disc::EndpointSlice>(),
    ];
    let order = |g: &str| {
        GROUP_ORDER
            .iter()
            .position(|x| *x == g)
            .unwrap_or(GROUP_ORDER.len())
    };
    rows.sort_by(|a, b| (order(a.group), a.plural).cmp(&(order(b.group), b.plural)));
    rows
}

/// kube-apiserver's group priority order (the order of `/apis`).
pub const GROUP_ORDER: &[&str] = &[
    "",
    "apiregistration.k8s.io",
    "apps",
    "events.k8s.io",
    "authentication.k8s.io",
    "authorization.k8s.io",
    "autoscaling",
    "batch",
    "certificates.k8s.io",
    "networking.k8s.io",
    "policy",
    "rbac.authorization.k8s.io",
    "storage.k8s.io",
    "admissionregistration.k8s.io",
    "apiextensions.k8s.io",
    "scheduling.k8s.io",
    "coordination.k8s.io",
    "node.k8s.io",
    "discovery.k8s.io",
    "flowcontrol.apiserver.k8s.io",
];

impl ResourceInfo {
    /// The server-side-apply and strategic-merge schema of this resource:
    /// the vendored definition of a built-in kind, or a custom row's own
    /// ([`crate::schema::Definitions::for_custom`], built once per CRD
    /// version).
    pub fn schema(&self) -> Option<crate::schema::Schema<'_>> {
        match &self.custom {
            None => crate::schema::definitions().for_gvk(self.group, self.version, self.kind),
            Some(c) => c.apply_definitions()?.root(),
        }
    }

    /// Whether this row is its resource's storage version.
    pub fn is_storage(&self) -> bool {
        match &self.custom {
            Some(c) => c.version == c.storage_version,
            None => self.conversion.is_none(),
        }
    }
}

/// The storage version's row of a converted built-in `res`; `None` when
/// `res` is stored as served (or, impossibly, its storage row is missing).
pub fn storage_of(res: &ResourceInfo) -> Option<Arc<ResourceInfo>> {
    let c = res.conversion?;
    builtin(c.storage_group, c.storage_version, c.storage_plural)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn table_has_the_common_kinds_with_discovery_facts() {
        let d = builtin("apps", "v1", "deployments").unwrap();
        assert_eq!(d.kind, "Deployment");
        assert_eq!(d.list_kind, "DeploymentList");
        assert!(d.namespaced);
        assert_eq!(d.short_names, &["deploy"]);
        assert_eq!(d.categories, &["all"]);
        assert!(d.status && d.scale.is_some());
        let ns = builtin("", "v1", "namespaces").unwrap();
        assert!(!ns.namespaced);
        assert_eq!(ns.qualified(), "namespaces");
        assert_eq!(d.qualified(), "deployments.apps");
    }

    #[test]
    fn storage_version_hash_matches_upstream() {
        // kube-apiserver publishes these values.
        assert_eq!(
            builtin("", "v1", "pods").unwrap().storage_version_hash(),
            "xPOwRZ+Yhw8="
        );
        assert_eq!(
            builtin("apps", "v1", "deployments")
                .unwrap()
                .storage_version_hash(),
            "8aSe+NMegvE="
        );
    }

    #[test]
    fn normalize_drops_unknown_fields_and_checks_kind() {
        let d = builtin("", "v1", "configmaps").unwrap();
        let v = serde_json::json!({"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"x"},"data":{"a":"b"},"bogus":1});
        let n = d.normalize(v).unwrap();
        assert_eq!(
            n,
            serde_json::json!({"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"x"},"data":{"a":"b"}})
        );
        let wrong = serde_json::json!({"apiVersion":"v1","kind":"Secret","metadata":{"name":"x"}});
        assert!(d.normalize(wrong).is_err());
    }
}
