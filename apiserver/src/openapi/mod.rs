//! OpenAPI: `/openapi/v3` (index and one document per group/version) and
//! `/openapi/v2` (one Swagger 2.0 document, JSON or gnostic protobuf).
//!
//! Paths come from the resource table (`registry::resource`), so they always
//! match what is served; schemas come from the vendored upstream
//! definitions (`crate::schema`), rewritten into the published forms by
//! [`schemas`].
//!
//! Custom resources' group/versions ([`custom`]) get their schemas from
//! their CustomResourceDefinitions (`skein_apiextensions::openapi`).
//!
//! # Contracts
//! - Documents are served from memory as bytes; their ETag is the
//!   upper-case hex SHA-512 of those bytes (as kube-openapi's `handler3`
//!   computes it), so a hash in a URL names exactly one document.
//! - The documents follow the resource table: they are rebuilt for each
//!   table generation ([`crate::registry::resource::Table::generation`]),
//!   on the first request that sees it. Built-in group/versions are built
//!   once (their rows never change) and shared by every generation; only
//!   custom group/versions, the index and (lazily) the v2 document are
//!   rebuilt. A request never waits for a build of a generation it does not
//!   need; requests needing the same new generation wait for one build.
//! - No response here is ever a redirect: a stale or wrong `hash` gets the
//!   current document with non-immutable caching (behind the aggregator a
//!   3xx would become a 502).
//! - Every PATCH operation carries `dryRun`, `fieldManager`,
//!   `fieldValidation` and `force` and the four patch media types: kubectl
//!   and Helm decide on server-side field validation from exactly that
//!   (`cli-runtime/pkg/resource/query_param_verifier_v3.go`).
//! - Every `$ref` in a document resolves inside that document.

pub mod custom;
pub mod gnostic;
pub mod handler;
pub mod host;
pub mod params;
pub mod paths;
pub mod schemas;
pub mod subresource;
pub mod v2;
pub mod v3;

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex, OnceLock, PoisonError, RwLock};

use serde_json::{Value, json};
use sha2::Digest;

use crate::instance::Instance;
use crate::registry::resource::{ResourceInfo, Resources, Table};
use crate::schema::{self, Definitions};

/// A rendered document and its ETag.
#[derive(Debug, Clone)]
pub struct Served {
    /// The response body.
    pub bytes: Vec<u8>,
    /// Upper-case hex SHA-512 of `bytes` (unquoted).
    pub hash: String,
}

impl Served {
    fn new(bytes: Vec<u8>) -> Self {
        let hash = hex_sha512(&bytes);
        Served { bytes, hash }
    }

    fn json(v: &Value) -> Self {
        Served::new(serde_json::to_vec(v).unwrap_or_default())
    }
}

/// kube-openapi's `computeETag`: `%X` of SHA-512.
pub fn hex_sha512(bytes: &[u8]) -> String {
    sha2::Sha512::digest(bytes)
        .iter()
        .map(|b| format!("{b:02X}"))
        .collect()
}

/// Every OpenAPI v3 document, keyed by its path under `/openapi/v3/`
/// (`api/v1`, `apis/apps/v1`, `apis/apps`, `api`, `apis`, `version`),
/// plus the index.
#[derive(Debug)]
pub struct V3Set {
    /// Documents by path (shared between generations when unchanged).
    pub docs: BTreeMap<String, Arc<Served>>,
    /// The `/openapi/v3` index.
    pub index: Served,
}

/// One group/version and its rows.
type GroupVersion = (&'static str, &'static str, Vec<Arc<ResourceInfo>>);

/// The served group/versions of `table` and their resources, in table
/// order, with the virtual `authentication.k8s.io/v1`
/// (selfsubjectreviews) that discovery also lists.
fn group_versions(table: &Table) -> Vec<GroupVersion> {
    let mut out: Vec<GroupVersion> = Vec::new();
    for r in table.iter() {
        match out
            .iter_mut()
            .find(|(g, v, _)| *g == r.group && *v == r.version)
        {
            Some((_, _, rs)) => rs.push(r.clone()),
            None => out.push((r.group, r.version, vec![r.clone()])),
        }
    }
    if !out.iter().any(|(g, _, _)| *g == "authentication.k8s.io") {
        out.push(("authentication.k8s.io", "v1", vec![]));
    }
    out
}

/// `group_versions` with only built-in rows (a group/version left with no
/// rows is dropped, except the virtual one).
fn builtin_group_versions(table: &Table) -> Vec<GroupVersion> {
    group_versions(table)
        .into_iter()
        .filter_map(|(g, v, rs)| {
            let builtin: Vec<_> = rs.into_iter().filter(|r| !r.is_custom()).collect();
            (!builtin.is_empty() || g == "authentication.k8s.io").then_some((g, v, builtin))
        })
        .collect()
}

/// The document key of a group/version (`api/v1`, `apis/apps/v1`).
fn key(group: &str, version: &str) -> String {
    paths::prefix(group, version)
        .trim_start_matches('/')
        .to_owned()
}

/// The `apis/<group>` discovery document.
fn group_document(defs: &Definitions, group: &str) -> Served {
    const META: &str = "io.k8s.apimachinery.pkg.apis.meta.v1";
    let camel = paths::group_camel(group);
    let tag = paths::tag(group, "").trim_end_matches('_').to_owned();
    Served::json(&v3::discovery(
        defs,
        &format!("/apis/{group}/"),
        "get information of a group",
        &format!("get{camel}APIGroup"),
        &tag,
        &format!("{META}.APIGroup"),
    ))
}

/// The documents of the built-in group/versions of `table` and the
/// discovery documents (`api`, `apis`, `apis/<group>`, `version`).
fn build_builtin_v3(defs: &Definitions, table: &Table) -> BTreeMap<String, Arc<Served>> {
    let mut docs = BTreeMap::new();
    let mut groups: Vec<&str> = Vec::new();
    for (group, version, resources) in builtin_group_versions(table) {
        let mut doc = v3::group_version(defs, group, version, &resources);
        if group == "authentication.k8s.io" {
            add_self_subject_review(defs, &mut doc);
        }
        docs.insert(key(group, version), Arc::new(Served::json(&doc)));
        if !group.is_empty() && !groups.contains(&group) {
            groups.push(group);
        }
    }
    const META: &str = "io.k8s.apimachinery.pkg.apis.meta.v1";
    docs.insert(
        "api".to_owned(),
        Arc::new(Served::json(&v3::discovery(
            defs,
            "/api/",
            "get available API versions",
            "getCoreAPIVersions",
            "core",
            &format!("{META}.APIVersions"),
        ))),
    );
    docs.insert(
        "apis".to_owned(),
        Arc::new(Served::json(&v3::discovery(
            defs,
            "/apis/",
            "get available API versions",
            "getAPIVersions",
            "apis",
            &format!("{META}.APIGroupList"),
        ))),
    );
    for group in groups {
        docs.insert(
            format!("apis/{group}"),
            Arc::new(group_document(defs, group)),
        );
    }
    docs.insert(
        "version".to_owned(),
        Arc::new(Served::json(&v3::discovery(
            defs,
            "/version/",
            "get the version information for this server",
            "getCodeVersion",
            "version",
            "io.k8s.apimachinery.pkg.version.Info",
        ))),
    );
    docs
}

/// Builds every v3 document of `table` on top of the built-in documents
/// `builtin` (from [`build_builtin_v3`]).
fn build_v3_on(
    defs: &Definitions,
    table: &Table,
    builtin: &BTreeMap<String, Arc<Served>>,
) -> V3Set {
    let mut docs = builtin.clone();
    for (group, version, rows) in group_versions(table) {
        let custom: Vec<_> = rows.iter().filter(|r| r.is_custom()).cloned().collect();
        if custom.is_empty() {
            continue;
        }
        let k = key(group, version);
        let doc = match docs
            .get(&k)
            .and_then(|d| serde_json::from_slice(&d.bytes).ok())
        {
            // A built-in group/version that also serves CRD kinds.
            Some(mut doc) => {
                custom::extend_v3(&mut doc, defs, group, version, &custom);
                doc
            }
            None => custom::v3_document(defs, group, version, &custom),
        };
        // No `apis/<group>` document for CRD groups: their group discovery
        // is not an OpenAPI-documented route upstream either.
        docs.insert(k, Arc::new(Served::json(&doc)));
    }
    let index_paths: serde_json::Map<String, Value> = docs
        .iter()
        .map(|(k, d)| {
            (
                k.clone(),
                json!({"serverRelativeURL": format!("/openapi/v3/{k}?hash={}", d.hash)}),
            )
        })
        .collect();
    let index = Served::json(&json!({ "paths": index_paths }));
    V3Set { docs, index }
}

/// Builds every v3 document of the current resource table (pure apart
/// from reading the table; [`v3_set`] caches it).
pub fn build_v3(defs: &Definitions, resources: &Resources) -> V3Set {
    let table = resources.snapshot();
    build_v3_on(defs, &table, &build_builtin_v3(defs, &table))
}

/// `POST /apis/authentication.k8s.io/v1/selfsubjectreviews`, which the
/// server answers without storage.
fn add_self_subject_review(defs: &Definitions, doc: &mut Value) {
    const DEF: &str = "io.k8s.api.authentication.v1.SelfSubjectReview";
    let item = paths::PathItem {
        path: "/apis/authentication.k8s.io/v1/selfsubjectreviews".to_owned(),
        params: vec![(params::PRETTY, None)],
        ops: vec![paths::Op {
            method: paths::Method::Post,
            description: "create a SelfSubjectReview".to_owned(),
            operation_id: "createAuthenticationV1SelfSubjectReview".to_owned(),
            params: vec![
                params::DRY_RUN,
                params::FIELD_MANAGER,
                params::FIELD_VALIDATION,
            ],
            body: Some(paths::Body::Object {
                schema: DEF.to_owned(),
                required: true,
            }),
            codes: vec!["200", "201", "202"],
            response: DEF.to_owned(),
            produces: paths::Produces::Object,
            action: Some("post"),
            gvk: Some(paths::Gvk {
                group: "authentication.k8s.io".to_owned(),
                version: "v1".to_owned(),
                kind: "SelfSubjectReview".to_owned(),
            }),
        }],
    };
    let rendered = v3::render_paths(&[item], "authentication_v1");
    if let Some(p) = doc.get_mut("paths").and_then(Value::as_object_mut) {
        p.extend(rendered);
    }
    let names = schemas::closure(defs, [DEF]);
    let converted = schemas::convert_all(defs, &names, schemas::Form::V3);
    if let Some(s) = doc
        .pointer_mut("/components/schemas")
        .and_then(Value::as_object_mut)
    {
        s.extend(converted);
    }
}

/// One server instance's documents: those of the last table generation
/// built, and the lock that lets one request build the next.
#[derive(Default)]
struct Cache {
    built: RwLock<Option<Arc<Built>>>,
    build: Mutex<()>,
}

/// The documents of one table generation.
struct Built {
    generation: u64,
    v3: Arc<V3Set>,
    table: Arc<Table>,
    /// Built on the first `/openapi/v2` request of this generation.
    v2: OnceLock<Arc<v2::V2Docs>>,
    /// What a host's aggregator sees (`host.rs`), built on the first host
    /// request of this generation.
    host_v3: OnceLock<Arc<V3Set>>,
    host_v2: OnceLock<Arc<v2::V2Docs>>,
}

/// The built-in v3 documents, built once.
fn builtin_v3(defs: &Definitions, table: &Table) -> &'static BTreeMap<String, Arc<Served>> {
    static DOCS: OnceLock<BTreeMap<String, Arc<Served>>> = OnceLock::new();
    DOCS.get_or_init(|| build_builtin_v3(defs, table))
}

/// The built-in part of the v2 document (JSON), built once.
fn builtin_v2(defs: &Definitions, table: &Table) -> &'static Value {
    static DOC: OnceLock<Value> = OnceLock::new();
    DOC.get_or_init(|| v2::document(defs, &builtin_group_versions(table)))
}

/// The documents of the current table generation, building them when the
/// generation changed (see the module contracts).
fn current(instance: &Instance) -> Arc<Built> {
    let cache = instance.shared("openapi", |_| false, || Arc::new(Cache::default()));
    let table = instance.resources().snapshot();
    let cached = || {
        cache
            .built
            .read()
            .unwrap_or_else(PoisonError::into_inner)
            .clone()
            .filter(|b| b.generation == table.generation())
    };
    if let Some(b) = cached() {
        return b;
    }
    let _one_builder = cache.build.lock().unwrap_or_else(PoisonError::into_inner);
    if let Some(b) = cached() {
        return b;
    }
    let defs = schema::definitions();
    let built = Arc::new(Built {
        generation: table.generation(),
        v3: Arc::new(build_v3_on(defs, &table, builtin_v3(defs, &table))),
        table: table.clone(),
        v2: OnceLock::new(),
        host_v3: OnceLock::new(),
        host_v2: OnceLock::new(),
    });
    *cache.built.write().unwrap_or_else(PoisonError::into_inner) = Some(built.clone());
    built
}

/// The v3 documents of the current table generation.
pub fn v3_set(instance: &Instance) -> Arc<V3Set> {
    current(instance).v3.clone()
}

/// The v3 documents a host's aggregator sees (`host.rs`), of the current
/// table generation.
pub fn host_v3_set(instance: &Instance) -> Arc<V3Set> {
    let built = current(instance);
    built
        .host_v3
        .get_or_init(|| Arc::new(host::v3(&built.v3)))
        .clone()
}

/// The v2 document a host's aggregator sees (`host.rs`), of the current
/// table generation.
pub fn host_v2_docs(instance: &Instance) -> Arc<v2::V2Docs> {
    let built = current(instance);
    built
        .host_v2
        .get_or_init(|| Arc::new(host::v2(&v2_docs_of(&built).json.bytes)))
        .clone()
}

/// The v2 document (JSON and protobuf) of the current table generation.
pub fn v2_docs(instance: &Instance) -> Arc<v2::V2Docs> {
    v2_docs_of(&current(instance))
}

fn v2_docs_of(built: &Built) -> Arc<v2::V2Docs> {
    built
        .v2
        .get_or_init(|| {
            let defs = schema::definitions();
            let mut doc = builtin_v2(defs, &built.table).clone();
            for (group, version, rows) in group_versions(&built.table) {
                let custom: Vec<_> = rows.into_iter().filter(|r| r.is_custom()).collect();
                if !custom.is_empty() {
                    custom::add_v2(&mut doc, defs, group, version, &custom);
                }
            }
            Arc::new(v2::encode(&doc))
        })
        .clone()
}

#[cfg(test)]
mod tests;
