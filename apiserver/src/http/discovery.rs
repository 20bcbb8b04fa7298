//! Discovery: legacy (`/api`, `/apis`, `/api/v1`, `/apis/{g}/{v}`) and
//! aggregated v2 (`Accept: …;as=APIGroupDiscoveryList`), from the resource
//! table, so discovery always matches what is served. A host request
//! (`host == true`, see `http/host_view.rs`) sees only what the host view
//! serves: `federation.skein.io/v1alpha1` with `federations`.

use axum::http::{HeaderMap, HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use serde_json::{Value, json};

use crate::registry::resource::{GROUP_ORDER, ResourceInfo, Resources};
use crate::registry::subresource;

use super::host_view;

/// A group/version and its resources, in discovery order.
struct GroupVersion {
    group: &'static str,
    version: &'static str,
    resources: Vec<std::sync::Arc<ResourceInfo>>,
}

/// Every served group/version (one version per group today); for a host
/// request, only the host view's.
fn group_versions(resources: &Resources, host: bool) -> Vec<GroupVersion> {
    let mut out = all_group_versions(resources);
    if host {
        out.retain(|gv| host_view::shows_group_version(gv.group, gv.version));
        for gv in &mut out {
            gv.resources
                .retain(|r| host_view::shows_resource(r.group, r.version, r.plural));
        }
    }
    out
}

fn all_group_versions(resources: &Resources) -> Vec<GroupVersion> {
    let mut out: Vec<GroupVersion> = Vec::new();
    for r in resources.all().iter().cloned() {
        match out
            .iter_mut()
            .find(|gv| gv.group == r.group && gv.version == r.version)
        {
            Some(gv) => gv.resources.push(r),
            None => out.push(GroupVersion {
                group: r.group,
                version: r.version,
                resources: vec![r],
            }),
        }
    }
    // authentication.k8s.io and authorization.k8s.io have only the review
    // resources, which are never stored.
    for r in super::review::REVIEWS {
        if !out
            .iter()
            .any(|gv| gv.group == r.group && gv.version == r.version)
        {
            out.push(GroupVersion {
                group: r.group,
                version: r.version,
                resources: vec![],
            });
        }
    }
    let order = |g: &str| {
        GROUP_ORDER
            .iter()
            .position(|x| *x == g)
            .unwrap_or(GROUP_ORDER.len())
    };
    out.sort_by_key(|gv| order(gv.group));
    out
}

fn api_version(group: &str, version: &str) -> String {
    if group.is_empty() {
        version.to_string()
    } else {
        format!("{group}/{version}")
    }
}

/// Virtual resources served by handlers rather than storage.
fn virtual_resources(group: &str) -> Vec<Value> {
    let served_here = subresource::virtual_resources(group, "v1")
        .into_iter()
        .map(|v| {
            json!({"name": v.plural, "singularName": v.singular, "namespaced": v.namespaced,
            "kind": v.kind, "verbs": v.verbs})
        });
    let mut out: Vec<Value> = served_here.collect();
    out.extend(
        super::review::REVIEWS
            .iter()
            .filter(|r| r.group == group)
            .map(|r| {
                json!({
                    "name": r.plural, "singularName": r.kind.to_ascii_lowercase(),
                    "namespaced": r.namespaced, "kind": r.kind, "verbs": ["create"]
                })
            }),
    );
    out
}

fn legacy_resources(r: &ResourceInfo) -> Vec<Value> {
    let mut out = vec![json!({
        "name": r.plural,
        "singularName": r.singular,
        "namespaced": r.namespaced,
        "kind": r.kind,
        "verbs": r.verbs(),
        "shortNames": r.short_names,
        "categories": r.categories,
        "storageVersionHash": r.storage_version_hash(),
    })];
    if let Some(o) = out[0].as_object_mut() {
        if r.short_names.is_empty() {
            o.remove("shortNames");
        }
        if r.categories.is_empty() {
            o.remove("categories");
        }
    }
    for s in subresource::of(r) {
        let mut v = json!({"name": format!("{}/{}", r.plural, s.name), "singularName": "",
            "namespaced": r.namespaced});
        if let (Some((g, ver)), Some(o)) = (s.group_version, v.as_object_mut()) {
            o.insert("group".into(), json!(g));
            o.insert("version".into(), json!(ver));
        }
        v["kind"] = json!(s.kind);
        v["verbs"] = json!(s.verbs);
        out.push(v);
    }
    out
}

fn aggregated_resource(r: &ResourceInfo) -> Value {
    let subresources: Vec<Value> = subresource::of(r)
        .iter()
        .map(|s| {
            let (group, version) = s.group_version_of(r);
            json!({"subresource": s.name,
                "responseKind": {"group": group, "version": version, "kind": s.kind},
                "verbs": s.verbs})
        })
        .collect();
    let mut v = json!({
        "resource": r.plural,
        "responseKind": {"group": r.group, "version": r.version, "kind": r.kind},
        "scope": if r.namespaced { "Namespaced" } else { "Cluster" },
        "singularResource": r.singular,
        "verbs": r.verbs(),
        "shortNames": r.short_names,
        "categories": r.categories,
        "subresources": subresources,
    });
    if let Some(o) = v.as_object_mut() {
        for k in ["shortNames", "categories", "subresources"] {
            if o.get(k)
                .and_then(Value::as_array)
                .is_some_and(Vec::is_empty)
            {
                o.remove(k);
            }
        }
    }
    v
}

fn aggregated_virtual(group: &str) -> Vec<Value> {
    virtual_resources(group)
        .into_iter()
        .map(|r| {
            let scope = if r["namespaced"] == true { "Namespaced" } else { "Cluster" };
            json!({"resource": r["name"], "responseKind": {"group": group, "version": "v1", "kind": r["kind"]},
                "scope": scope, "singularResource": r["singularName"], "verbs": r["verbs"]})
        })
        .collect()
}

/// Which aggregated version the client accepts, if any.
fn wants_aggregated(headers: &HeaderMap) -> Option<&'static str> {
    let accept = headers.get(header::ACCEPT)?.to_str().ok()?;
    for part in accept.split(',') {
        let p = part.replace(' ', "");
        if p.contains("as=APIGroupDiscoveryList") && p.contains("g=apidiscovery.k8s.io") {
            if p.contains("v=v2beta1") {
                return Some("v2beta1");
            }
            if p.contains("v=v2") {
                return Some("v2");
            }
        }
    }
    None
}

fn json_response(body: &Value) -> Response {
    let bytes = serde_json::to_vec(body).unwrap_or_default();
    ([(header::CONTENT_TYPE, "application/json")], bytes).into_response()
}

fn aggregated_response(headers: &HeaderMap, version: &str, items: Vec<Value>) -> Response {
    let body = json!({"kind": "APIGroupDiscoveryList", "apiVersion": format!("apidiscovery.k8s.io/{version}"),
        "metadata": {}, "items": items});
    let bytes = serde_json::to_vec(&body).unwrap_or_default();
    let etag = {
        use sha2::Digest;
        let digest = sha2::Sha512::digest(&bytes);
        let hex: String = digest.iter().map(|b| format!("{b:02X}")).collect();
        format!("\"{hex}\"")
    };
    let content_type =
        format!("application/json;g=apidiscovery.k8s.io;v={version};as=APIGroupDiscoveryList");
    let matches = headers
        .get(header::IF_NONE_MATCH)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| v == etag);
    let mut response = if matches {
        StatusCode::NOT_MODIFIED.into_response()
    } else {
        bytes.into_response()
    };
    let h = response.headers_mut();
    if let Ok(v) = HeaderValue::from_str(&content_type) {
        h.insert(header::CONTENT_TYPE, v);
    }
    if let Ok(v) = HeaderValue::from_str(&etag) {
        h.insert(header::ETAG, v);
    }
    h.insert(header::VARY, HeaderValue::from_static("Accept"));
    h.insert(header::CACHE_CONTROL, HeaderValue::from_static("public"));
    response
}

fn aggregated_item(name: &str, gvs: &[&GroupVersion]) -> Value {
    let versions: Vec<Value> = gvs
        .iter()
        .map(|gv| {
            let mut resources: Vec<Value> = gv
                .resources
                .iter()
                .map(|r| aggregated_resource(r))
                .collect();
            resources.extend(aggregated_virtual(gv.group));
            // Upstream lists resources sorted by name.
            resources.sort_by(|a, b| a["resource"].as_str().cmp(&b["resource"].as_str()));
            json!({"version": gv.version, "resources": resources, "freshness": "Current"})
        })
        .collect();
    json!({"metadata": {"name": name, "creationTimestamp": null}, "versions": versions})
}

/// `GET /api`.
pub fn legacy_root(resources: &Resources, headers: &HeaderMap, host: &str) -> Response {
    let gvs = group_versions(resources, false);
    if let Some(v) = wants_aggregated(headers) {
        let core: Vec<&GroupVersion> = gvs.iter().filter(|gv| gv.group.is_empty()).collect();
        return aggregated_response(headers, v, vec![aggregated_item("", &core)]);
    }
    json_response(&json!({"kind": "APIVersions", "versions": ["v1"],
        "serverAddressByClientCIDRs": [{"clientCIDR": "0.0.0.0/0", "serverAddress": host}]}))
}

/// The served groups, each with its group/versions, preferred (storage
/// order: `autoscaling` lists v2, then v1) first.
fn groups(gvs: &[GroupVersion]) -> Vec<(&'static str, Vec<&GroupVersion>)> {
    let mut out: Vec<(&'static str, Vec<&GroupVersion>)> = Vec::new();
    for gv in gvs {
        match out.iter_mut().find(|(g, _)| *g == gv.group) {
            Some((_, list)) => list.push(gv),
            None => out.push((gv.group, vec![gv])),
        }
    }
    out
}

fn group_entry(group: &str, versions: &[&GroupVersion]) -> Value {
    let list: Vec<Value> = versions
        .iter()
        .map(|gv| json!({"groupVersion": api_version(gv.group, gv.version), "version": gv.version}))
        .collect();
    let preferred = list.first().cloned().unwrap_or(Value::Null);
    json!({"name": group, "versions": list, "preferredVersion": preferred})
}

/// `GET /apis`.
pub fn groups_root(resources: &Resources, headers: &HeaderMap, host: bool) -> Response {
    let gvs = group_versions(resources, host);
    let named: Vec<(&str, Vec<&GroupVersion>)> = groups(&gvs)
        .into_iter()
        .filter(|(g, _)| !g.is_empty())
        .collect();
    if let Some(v) = wants_aggregated(headers) {
        let items = named
            .iter()
            .map(|(g, versions)| aggregated_item(g, versions))
            .collect();
        return aggregated_response(headers, v, items);
    }
    let groups: Vec<Value> = named
        .iter()
        .map(|(g, versions)| group_entry(g, versions))
        .collect();
    json_response(&json!({"kind": "APIGroupList", "apiVersion": "v1", "groups": groups}))
}

/// `GET /apis/{group}`.
pub fn group(resources: &Resources, name: &str, host: bool) -> Response {
    let gvs = group_versions(resources, host);
    match groups(&gvs)
        .into_iter()
        .find(|(g, _)| *g == name && !name.is_empty())
    {
        Some((g, versions)) => {
            let mut entry = group_entry(g, &versions);
            if let Some(o) = entry.as_object_mut() {
                o.insert("kind".into(), json!("APIGroup"));
                o.insert("apiVersion".into(), json!("v1"));
            }
            json_response(&entry)
        }
        None => super::not_found::page_not_found(),
    }
}

/// Whether `group/version` is served (resources or virtual resources):
/// paths under an unserved one get upstream's plain-text 404.
pub fn serves(resources: &Resources, group: &str, version: &str, host: bool) -> bool {
    group_versions(resources, host)
        .iter()
        .any(|gv| gv.group == group && gv.version == version)
}

/// `GET /api/v1`, `GET /apis/{group}/{version}`.
pub fn group_version(resources: &Resources, group: &str, version: &str, host: bool) -> Response {
    let gvs = group_versions(resources, host);
    let Some(gv) = gvs
        .iter()
        .find(|gv| gv.group == group && gv.version == version)
    else {
        return super::not_found::page_not_found();
    };
    let mut resources: Vec<Value> = gv
        .resources
        .iter()
        .flat_map(|r| legacy_resources(r))
        .collect();
    resources.extend(virtual_resources(group));
    // Upstream lists resources (and subresources after them) sorted by name.
    resources.sort_by(|a, b| a["name"].as_str().cmp(&b["name"].as_str()));
    json_response(&json!({"kind": "APIResourceList", "apiVersion": "v1",
        "groupVersion": api_version(group, version), "resources": resources}))
}
