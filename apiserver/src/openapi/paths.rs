//! The `paths` of one group/version, built from the resource table, in the
//! shape kube-apiserver's installer gives them
//! (`k8s.io/apiserver/pkg/endpoints/installer.go`, rendered by
//! `kube-openapi/pkg/builder3`): operation ids, descriptions, actions,
//! parameters (sorted by name, as published) and response media types.
//!
//! The operations are described in a form-neutral [`Op`]; `v3.rs` and
//! `v2.rs` render them.

use serde_json::{Map, Value};

use crate::registry::resource::ResourceInfo;

use super::params::{self, Param};

/// The `x-kubernetes-group-version-kind` of an operation.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Gvk {
    /// Group (`""` for core).
    pub group: String,
    /// Version.
    pub version: String,
    /// Kind.
    pub kind: String,
}

/// The HTTP methods an operation can have, in the order upstream's JSON
/// sorts them.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Method {
    /// DELETE.
    Delete,
    /// GET.
    Get,
    /// HEAD (proxy subresources).
    Head,
    /// OPTIONS (proxy subresources).
    Options,
    /// PATCH.
    Patch,
    /// POST.
    Post,
    /// PUT.
    Put,
}

impl Method {
    /// The lower-case key in a path item.
    pub fn key(self) -> &'static str {
        match self {
            Method::Delete => "delete",
            Method::Get => "get",
            Method::Head => "head",
            Method::Options => "options",
            Method::Patch => "patch",
            Method::Post => "post",
            Method::Put => "put",
        }
    }
}

/// What a request body is.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Body {
    /// `*/*` with a definition (create, replace, delete options).
    Object {
        /// The definition name.
        schema: String,
        /// Whether the body is required (not for DELETE, as upstream).
        required: bool,
    },
    /// The four patch media types with `meta.v1.Patch`.
    Patch,
    /// JSON and YAML with a definition (custom resources' create, replace
    /// and delete options).
    Json {
        /// The definition name.
        schema: String,
        /// Whether the body is required.
        required: bool,
    },
    /// JSON patch, merge patch and apply patch with `meta.v1.Patch`
    /// (custom resources: no strategic merge).
    JsonPatch,
}

/// Which media types a 2xx response lists.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Produces {
    /// json, yaml, protobuf.
    Object,
    /// json, json;stream=watch, protobuf, protobuf;stream=watch, yaml.
    Stream,
    /// `*/*` (connect subresources).
    Any,
    /// text/plain, json, yaml, protobuf (`pods/log`).
    Text,
    /// json, yaml (custom resources).
    Json,
}

/// One operation.
#[derive(Debug, Clone)]
pub struct Op {
    /// HTTP method.
    pub method: Method,
    /// `description`.
    pub description: String,
    /// `operationId`.
    pub operation_id: String,
    /// Operation-level parameters (sorted by name).
    pub params: Vec<Param>,
    /// Request body, if any.
    pub body: Option<Body>,
    /// Response codes with a body (`200`, `201`, `202`); `401` is always added.
    pub codes: Vec<&'static str>,
    /// Definition name of the response body.
    pub response: String,
    /// Media types of the response.
    pub produces: Produces,
    /// `x-kubernetes-action` (`None` for the group/version root).
    pub action: Option<&'static str>,
    /// `x-kubernetes-group-version-kind` (`None` for the root).
    pub gvk: Option<Gvk>,
}

/// One path and its operations.
#[derive(Debug, Clone)]
pub struct PathItem {
    /// The path, e.g. `/apis/apps/v1/namespaces/{namespace}/deployments`.
    pub path: String,
    /// Path-level parameters (sorted by name), with the `{name}` parameter's
    /// description when there is one.
    pub params: Vec<(Param, Option<String>)>,
    /// Operations, sorted by method.
    pub ops: Vec<Op>,
}

/// Definition names every group/version document carries besides its kinds.
pub const META_DEFINITIONS: &[&str] = &[
    "io.k8s.apimachinery.pkg.apis.meta.v1.APIResourceList",
    "io.k8s.apimachinery.pkg.apis.meta.v1.DeleteOptions",
    "io.k8s.apimachinery.pkg.apis.meta.v1.Patch",
    "io.k8s.apimachinery.pkg.apis.meta.v1.Status",
    "io.k8s.apimachinery.pkg.apis.meta.v1.WatchEvent",
];

const STATUS: &str = "io.k8s.apimachinery.pkg.apis.meta.v1.Status";
const DELETE_OPTIONS: &str = "io.k8s.apimachinery.pkg.apis.meta.v1.DeleteOptions";
const WATCH_EVENT: &str = "io.k8s.apimachinery.pkg.apis.meta.v1.WatchEvent";
const API_RESOURCE_LIST: &str = "io.k8s.apimachinery.pkg.apis.meta.v1.APIResourceList";
/// The `scale` subresource's definition.
pub const SCALE: &str = "io.k8s.api.autoscaling.v1.Scale";

/// The URL prefix of a group/version: `/api/v1` or `/apis/<g>/<v>`.
pub fn prefix(group: &str, version: &str) -> String {
    if group.is_empty() {
        format!("/api/{version}")
    } else {
        format!("/apis/{group}/{version}")
    }
}

/// `rbac.authorization.k8s.io` → `RbacAuthorization`, `""` → `Core`
/// (the operation-id infix; upstream's `ToValidOperationID`).
pub fn group_camel(group: &str) -> String {
    if group.is_empty() {
        return "Core".to_owned();
    }
    let trimmed = group.strip_suffix(".k8s.io").unwrap_or(group);
    valid_operation_id(trimmed)
}

/// Upstream's `ToValidOperationID(s, true)`: letters and `_` kept (digits
/// too, except first), each run of other characters dropped and the next
/// kept character upper-cased (`cert-manager.io` → `CertManagerIo`).
fn valid_operation_id(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    let mut upper = true;
    for (i, c) in s.chars().enumerate() {
        if c.is_alphabetic() || c == '_' || (i != 0 && c.is_numeric()) {
            if upper {
                out.extend(c.to_uppercase());
                upper = false;
            } else {
                out.push(c);
            }
        } else {
            upper = true;
        }
    }
    out
}

/// The tag of every operation: `apps_v1`, `rbacAuthorization_v1`, `core_v1`.
pub fn tag(group: &str, version: &str) -> String {
    let camel = group_camel(group);
    let mut chars = camel.chars();
    let lower: String = match chars.next() {
        Some(c) => c.to_lowercase().chain(chars).collect(),
        None => String::new(),
    };
    format!("{lower}_{version}")
}

fn capitalize(s: &str) -> String {
    let mut c = s.chars();
    match c.next() {
        Some(f) => f.to_uppercase().chain(c).collect(),
        None => String::new(),
    }
}

/// `a`/`an`/nothing before a kind in descriptions (apiserver's
/// `GetArticleForNoun`: plurals other than `-ss` take none).
fn article(kind: &str) -> &'static str {
    if !kind.ends_with("ss") && kind.ends_with('s') {
        " "
    } else if kind
        .chars()
        .next()
        .is_some_and(|c| "AEIOUaeiou".contains(c))
    {
        " an "
    } else {
        " a "
    }
}

/// Kinds whose DELETE returns the object rather than a Status
/// (`ReturnDeletedObject` in their registries, as published).
/// Whether the DELETE operation documents the kind rather than a Status:
/// the storages that return the deleted object, except namespaces, whose
/// REST type wraps the store and is published with a Status as upstream's.
fn delete_returns_object(r: &ResourceInfo) -> bool {
    r.returns_deleted_object() && !(r.group.is_empty() && r.plural == "namespaces")
}

fn sorted(mut p: Vec<Param>) -> Vec<Param> {
    p.sort_by_key(|x| x.name);
    p
}

fn list_params() -> Vec<Param> {
    vec![
        params::ALLOW_WATCH_BOOKMARKS,
        params::CONTINUE,
        params::FIELD_SELECTOR,
        params::LABEL_SELECTOR,
        params::LIMIT,
        params::RESOURCE_VERSION,
        params::RESOURCE_VERSION_MATCH,
        params::SEND_INITIAL_EVENTS,
        params::TIMEOUT_SECONDS,
        params::WATCH,
    ]
}

fn delete_collection_params() -> Vec<Param> {
    sorted(vec![
        params::CONTINUE,
        params::DRY_RUN,
        params::FIELD_SELECTOR,
        params::GRACE_PERIOD_SECONDS,
        params::LABEL_SELECTOR,
        params::LIMIT,
        params::ORPHAN_DEPENDENTS,
        params::PROPAGATION_POLICY,
        params::RESOURCE_VERSION,
        params::RESOURCE_VERSION_MATCH,
        params::SEND_INITIAL_EVENTS,
        params::TIMEOUT_SECONDS,
    ])
}

pub(super) fn write_params() -> Vec<Param> {
    vec![
        params::DRY_RUN,
        params::FIELD_MANAGER,
        params::FIELD_VALIDATION,
    ]
}

pub(super) fn patch_params() -> Vec<Param> {
    vec![
        params::DRY_RUN,
        params::FIELD_MANAGER_PATCH,
        params::FIELD_VALIDATION,
        params::FORCE,
    ]
}

fn delete_params() -> Vec<Param> {
    vec![
        params::DRY_RUN,
        params::GRACE_PERIOD_SECONDS,
        params::ORPHAN_DEPENDENTS,
        params::PROPAGATION_POLICY,
    ]
}

/// Names shared by every operation of one resource.
struct Names<'a> {
    r: &'a ResourceInfo,
    gv: String,
    kind_def: String,
    list_def: String,
}

impl Names<'_> {
    fn gvk(&self) -> Option<Gvk> {
        Some(Gvk {
            group: self.r.group.to_owned(),
            version: self.r.version.to_owned(),
            kind: self.r.kind.to_owned(),
        })
    }

    /// `Namespaced` for namespaced kinds, else nothing.
    fn ns(&self) -> &'static str {
        if self.r.namespaced { "Namespaced" } else { "" }
    }
}

/// The root path of a group/version: `GET <prefix>/` (APIResourceList).
pub fn root(group: &str, version: &str) -> PathItem {
    PathItem {
        path: format!("{}/", prefix(group, version)),
        params: vec![],
        ops: vec![Op {
            method: Method::Get,
            description: "get available resources".to_owned(),
            operation_id: format!(
                "get{}{}APIResources",
                group_camel(group),
                capitalize(version)
            ),
            params: vec![],
            body: None,
            codes: vec!["200"],
            response: API_RESOURCE_LIST.to_owned(),
            produces: Produces::Object,
            action: None,
            gvk: None,
        }],
    }
}

/// Every path of one resource (collection, item, subresources, watch),
/// or nothing when its kind has no definition.
pub fn resource(r: &ResourceInfo, kind_def: &str, list_def: &str) -> Vec<PathItem> {
    let n = Names {
        r,
        gv: format!("{}{}", group_camel(r.group), capitalize(r.version)),
        kind_def: kind_def.to_owned(),
        list_def: list_def.to_owned(),
    };
    let base = prefix(r.group, r.version);
    let (coll, watch_coll) = if r.namespaced {
        (
            format!("{base}/namespaces/{{namespace}}/{}", r.plural),
            format!("{base}/watch/namespaces/{{namespace}}/{}", r.plural),
        )
    } else {
        (
            format!("{base}/{}", r.plural),
            format!("{base}/watch/{}", r.plural),
        )
    };
    let scope_params = |extra: &[Param]| -> Vec<(Param, Option<String>)> {
        let mut p: Vec<(Param, Option<String>)> = extra.iter().map(|x| (*x, None)).collect();
        if r.namespaced {
            p.push((params::NAMESPACE, None));
        }
        p.push((params::PRETTY, None));
        p.sort_by_key(|(x, _)| x.name);
        p
    };
    let name_param = |of: &str| (name_param(), Some(format!("name of the {of}")));
    let with_name = |of: &str, extra: &[Param]| {
        let mut p = scope_params(extra);
        p.push(name_param(of));
        p.sort_by_key(|(x, _)| x.name);
        p
    };

    let mut out = Vec::new();

    if r.namespaced {
        let mut p: Vec<(Param, Option<String>)> =
            list_params().into_iter().map(|x| (x, None)).collect();
        p.push((params::PRETTY, None));
        p.sort_by_key(|(x, _)| x.name);
        out.push(PathItem {
            path: format!("{base}/{}", r.plural),
            params: p,
            ops: vec![list_op(
                &n,
                &format!("list{}{}ForAllNamespaces", n.gv, r.kind),
                vec![],
            )],
        });
    }

    out.push(PathItem {
        path: coll.clone(),
        params: scope_params(&[]),
        ops: vec![
            Op {
                method: Method::Delete,
                description: format!("delete collection of {}", r.kind),
                operation_id: format!("delete{}Collection{}{}", n.gv, n.ns(), r.kind),
                params: delete_collection_params(),
                body: Some(Body::Object {
                    schema: DELETE_OPTIONS.to_owned(),
                    required: false,
                }),
                codes: vec!["200"],
                response: STATUS.to_owned(),
                produces: Produces::Object,
                action: Some("deletecollection"),
                gvk: n.gvk(),
            },
            list_op(
                &n,
                &format!("list{}{}{}", n.gv, n.ns(), r.kind),
                list_params(),
            ),
            Op {
                method: Method::Post,
                description: format!("create{}{}", article(r.kind), r.kind),
                operation_id: format!("create{}{}{}", n.gv, n.ns(), r.kind),
                params: write_params(),
                body: Some(Body::Object {
                    schema: n.kind_def.clone(),
                    required: true,
                }),
                codes: vec!["200", "201", "202"],
                response: n.kind_def.clone(),
                produces: Produces::Object,
                action: Some("post"),
                gvk: n.gvk(),
            },
        ]
        .into_iter()
        // Only the verbs the resource serves (namespaces: no deletecollection).
        .filter(|op| {
            op.action.is_none_or(|a| {
                let verb = if a == "post" { "create" } else { a };
                r.verbs().contains(&verb)
            })
        })
        .collect(),
    });

    let deleted = if delete_returns_object(r) {
        n.kind_def.clone()
    } else {
        STATUS.to_owned()
    };
    let mut item_ops = vec![Op {
        method: Method::Delete,
        description: format!("delete{}{}", article(r.kind), r.kind),
        operation_id: format!("delete{}{}{}", n.gv, n.ns(), r.kind),
        params: delete_params(),
        body: Some(Body::Object {
            schema: DELETE_OPTIONS.to_owned(),
            required: false,
        }),
        codes: vec!["200", "202"],
        response: deleted,
        produces: Produces::Object,
        action: Some("delete"),
        gvk: n.gvk(),
    }];
    item_ops.extend(read_patch_put(
        &n,
        "",
        "the specified",
        &n.kind_def,
        n.gvk(),
    ));
    // Only the verbs the resource serves (componentstatuses: get and list).
    item_ops.retain(|op| {
        op.action.is_none_or(|a| {
            let verb = if a == "put" { "update" } else { a };
            r.verbs().contains(&verb)
        })
    });
    out.push(PathItem {
        path: format!("{coll}/{{name}}"),
        params: with_name(r.kind, &[]),
        ops: item_ops,
    });

    if r.scale.is_some() {
        let gvk = Some(Gvk {
            group: "autoscaling".to_owned(),
            version: "v1".to_owned(),
            kind: "Scale".to_owned(),
        });
        out.push(PathItem {
            path: format!("{coll}/{{name}}/scale"),
            params: with_name("Scale", &[]),
            ops: read_patch_put(&n, "Scale", "scale of the specified", SCALE, gvk),
        });
    }
    if r.status {
        out.push(PathItem {
            path: format!("{coll}/{{name}}/status"),
            params: with_name(r.kind, &[]),
            ops: read_patch_put(
                &n,
                "Status",
                "status of the specified",
                &n.kind_def,
                n.gvk(),
            ),
        });
    }

    out.extend(super::subresource::items(r, &coll, &n.kind_def));

    if !r.verbs().contains(&"watch") {
        return out;
    }
    if r.namespaced {
        let mut p: Vec<(Param, Option<String>)> =
            list_params().into_iter().map(|x| (x, None)).collect();
        p.push((params::PRETTY, None));
        p.sort_by_key(|(x, _)| x.name);
        out.push(PathItem {
            path: format!("{base}/watch/{}", r.plural),
            params: p,
            ops: vec![watch_op(
                &n,
                format!(
                    "watch individual changes to a list of {}. deprecated: use the 'watch' parameter with a list operation instead.",
                    r.kind
                ),
                format!("watch{}{}ListForAllNamespaces", n.gv, r.kind),
                "watchlist",
            )],
        });
    }
    out.push(PathItem {
        path: watch_coll.clone(),
        params: scope_params(&list_params()),
        ops: vec![watch_op(
            &n,
            format!(
                "watch individual changes to a list of {}. deprecated: use the 'watch' parameter with a list operation instead.",
                r.kind
            ),
            format!("watch{}{}{}List", n.gv, n.ns(), r.kind),
            "watchlist",
        )],
    });
    out.push(PathItem {
        path: format!("{watch_coll}/{{name}}"),
        params: with_name(r.kind, &list_params()),
        ops: vec![watch_op(
            &n,
            format!(
                "watch changes to an object of kind {}. deprecated: use the 'watch' parameter with a list operation instead, filtered to a single item with the 'fieldSelector' parameter.",
                r.kind
            ),
            format!("watch{}{}{}", n.gv, n.ns(), r.kind),
            "watch",
        )],
    });
    out
}

fn name_param() -> Param {
    Param {
        name: "name",
        location: params::In::Path,
        ty: "string",
        description: "",
    }
}

fn list_op(n: &Names<'_>, operation_id: &str, params: Vec<Param>) -> Op {
    Op {
        method: Method::Get,
        description: format!("list or watch objects of kind {}", n.r.kind),
        operation_id: operation_id.to_owned(),
        params,
        body: None,
        codes: vec!["200"],
        response: n.list_def.clone(),
        produces: Produces::Stream,
        action: Some("list"),
        gvk: n.gvk(),
    }
}

fn watch_op(n: &Names<'_>, description: String, operation_id: String, action: &'static str) -> Op {
    Op {
        method: Method::Get,
        description,
        operation_id,
        params: vec![],
        body: None,
        codes: vec!["200"],
        response: WATCH_EVENT.to_owned(),
        produces: Produces::Stream,
        action: Some(action),
        gvk: n.gvk(),
    }
}

/// GET, PATCH and PUT on an object or one of its subresources. `suffix` is
/// the operation-id suffix (`""`, `Status`, `Scale`), `what` the phrase
/// after the verb (`the specified`, `status of the specified`).
fn read_patch_put(n: &Names<'_>, suffix: &str, what: &str, def: &str, gvk: Option<Gvk>) -> Vec<Op> {
    let kind = n.r.kind;
    let id = |verb: &str| format!("{verb}{}{}{kind}{suffix}", n.gv, n.ns());
    vec![
        Op {
            method: Method::Get,
            description: format!("read {what} {kind}"),
            operation_id: id("read"),
            params: vec![],
            body: None,
            codes: vec!["200"],
            response: def.to_owned(),
            produces: Produces::Object,
            action: Some("get"),
            gvk: gvk.clone(),
        },
        Op {
            method: Method::Patch,
            description: format!("partially update {what} {kind}"),
            operation_id: id("patch"),
            params: patch_params(),
            body: Some(Body::Patch),
            codes: vec!["200", "201"],
            response: def.to_owned(),
            produces: Produces::Object,
            action: Some("patch"),
            gvk: gvk.clone(),
        },
        Op {
            method: Method::Put,
            description: format!("replace {what} {kind}"),
            operation_id: id("replace"),
            params: write_params(),
            body: Some(Body::Object {
                schema: def.to_owned(),
                required: true,
            }),
            codes: vec!["200", "201"],
            response: def.to_owned(),
            produces: Produces::Object,
            action: Some("put"),
            gvk,
        },
    ]
}

/// Renders path items into `out` (a `paths` object), with one OpenAPI
/// version's renderers for operations and parameters.
pub fn render_into(
    items: &[PathItem],
    tag: &str,
    out: &mut Map<String, Value>,
    operation: impl Fn(&Op, &str) -> Value,
    param: impl Fn(&Param, Option<&str>) -> Value,
) {
    for item in items {
        let mut obj = Map::new();
        for op in &item.ops {
            obj.insert(op.method.key().to_owned(), operation(op, tag));
        }
        if !item.params.is_empty() {
            obj.insert(
                "parameters".to_owned(),
                Value::Array(
                    item.params
                        .iter()
                        .map(|(p, d)| param(p, d.as_deref()))
                        .collect(),
                ),
            );
        }
        out.insert(item.path.clone(), Value::Object(obj));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn operation_id_infixes_and_tags_match_upstream() {
        assert_eq!(group_camel(""), "Core");
        assert_eq!(group_camel("apps"), "Apps");
        assert_eq!(
            group_camel("rbac.authorization.k8s.io"),
            "RbacAuthorization"
        );
        assert_eq!(
            group_camel("flowcontrol.apiserver.k8s.io"),
            "FlowcontrolApiserver"
        );
        assert_eq!(
            tag("rbac.authorization.k8s.io", "v1"),
            "rbacAuthorization_v1"
        );
        assert_eq!(tag("", "v1"), "core_v1");
        assert_eq!(tag("apps", "v1"), "apps_v1");
        assert_eq!(group_camel("cert-manager.io"), "CertManagerIo");
        assert_eq!(tag("stable.example.com", "v1"), "stableExampleCom_v1");
        assert_eq!(group_camel("x9.a_b.io"), "X9A_bIo");
    }

    #[test]
    fn articles_follow_get_article_for_noun() {
        assert_eq!(article("Deployment"), " a ");
        assert_eq!(article("Ingress"), " an ");
        assert_eq!(article("Endpoints"), " ");
        assert_eq!(article("IngressClass"), " an ");
    }
}
