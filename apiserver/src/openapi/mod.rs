//! OpenAPI: `/openapi/v3` (index and one document per group/version) and
//! `/openapi/v2` (one Swagger 2.0 document, JSON or gnostic protobuf).
//!
//! Paths come from the resource table (`registry::resource`), so they always
//! match what is served; schemas come from the vendored upstream
//! definitions (`crate::schema`), rewritten into the published forms by
//! [`schemas`].
//!
//! # Contracts
//! - Documents are built once, on first use, and served from memory as
//!   bytes; their ETag is the upper-case hex SHA-512 of those bytes (as
//!   kube-openapi's `handler3` computes it), so a hash in a URL names exactly
//!   one document.
//! - No response here is ever a redirect: a stale or wrong `hash` gets the
//!   current document with non-immutable caching (behind the aggregator a
//!   3xx would become a 502).
//! - Every PATCH operation carries `dryRun`, `fieldManager`,
//!   `fieldValidation` and `force` and the four patch media types: kubectl
//!   and Helm decide on server-side field validation from exactly that
//!   (`cli-runtime/pkg/resource/query_param_verifier_v3.go`).
//! - Every `$ref` in a document resolves inside that document.

pub mod gnostic;
pub mod handler;
pub mod params;
pub mod paths;
pub mod schemas;
pub mod subresource;
pub mod v2;
pub mod v3;

use std::collections::BTreeMap;
use std::sync::OnceLock;

use serde_json::{Value, json};
use sha2::Digest;

use crate::registry::resource::{self, ResourceInfo};
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
    /// Documents by path.
    pub docs: BTreeMap<String, Served>,
    /// The `/openapi/v3` index.
    pub index: Served,
}

/// The served group/versions and their resources, in table order, with the
/// virtual `authentication.k8s.io/v1` (selfsubjectreviews) that discovery
/// also lists.
fn group_versions() -> Vec<(
    &'static str,
    &'static str,
    Vec<std::sync::Arc<ResourceInfo>>,
)> {
    let mut out: Vec<(&str, &str, Vec<std::sync::Arc<ResourceInfo>>)> = Vec::new();
    for r in resource::all().iter().cloned() {
        match out
            .iter_mut()
            .find(|(g, v, _)| *g == r.group && *v == r.version)
        {
            Some((_, _, rs)) => rs.push(r),
            None => out.push((r.group, r.version, vec![r])),
        }
    }
    if !out.iter().any(|(g, _, _)| *g == "authentication.k8s.io") {
        out.push(("authentication.k8s.io", "v1", vec![]));
    }
    out
}

/// Builds every v3 document (pure; [`v3_set`] caches it).
pub fn build_v3(defs: &Definitions) -> V3Set {
    let mut docs = BTreeMap::new();
    let mut groups: Vec<&str> = Vec::new();
    for (group, version, resources) in group_versions() {
        let mut doc = v3::group_version(defs, group, version, &resources);
        if group == "authentication.k8s.io" {
            add_self_subject_review(defs, &mut doc);
        }
        let key = paths::prefix(group, version)
            .trim_start_matches('/')
            .to_owned();
        docs.insert(key, Served::json(&doc));
        if !group.is_empty() && !groups.contains(&group) {
            groups.push(group);
        }
    }
    const META: &str = "io.k8s.apimachinery.pkg.apis.meta.v1";
    docs.insert(
        "api".to_owned(),
        Served::json(&v3::discovery(
            defs,
            "/api/",
            "get available API versions",
            "getCoreAPIVersions",
            "core",
            &format!("{META}.APIVersions"),
        )),
    );
    docs.insert(
        "apis".to_owned(),
        Served::json(&v3::discovery(
            defs,
            "/apis/",
            "get available API versions",
            "getAPIVersions",
            "apis",
            &format!("{META}.APIGroupList"),
        )),
    );
    for group in groups {
        let camel = paths::group_camel(group);
        let tag = paths::tag(group, "").trim_end_matches('_').to_owned();
        docs.insert(
            format!("apis/{group}"),
            Served::json(&v3::discovery(
                defs,
                &format!("/apis/{group}/"),
                "get information of a group",
                &format!("get{camel}APIGroup"),
                &tag,
                &format!("{META}.APIGroup"),
            )),
        );
    }
    docs.insert(
        "version".to_owned(),
        Served::json(&v3::discovery(
            defs,
            "/version/",
            "get the version information for this server",
            "getCodeVersion",
            "version",
            "io.k8s.apimachinery.pkg.version.Info",
        )),
    );
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

/// The process-wide v3 documents, built on first use.
pub fn v3_set() -> &'static V3Set {
    static SET: OnceLock<V3Set> = OnceLock::new();
    SET.get_or_init(|| build_v3(schema::definitions()))
}

/// The process-wide v2 document (JSON and protobuf), built on first use.
pub fn v2_docs() -> &'static v2::V2Docs {
    static DOCS: OnceLock<v2::V2Docs> = OnceLock::new();
    DOCS.get_or_init(|| v2::build(schema::definitions(), &group_versions()))
}

#[cfg(test)]
mod tests;
