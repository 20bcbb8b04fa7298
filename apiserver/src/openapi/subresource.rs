//! OpenAPI path items of the subresources other than `status` and `scale`
//! (those are in [`super::paths::resource`]), from the same table the HTTP
//! layer serves ([`crate::registry::subresource`]), with kube-apiserver
//! v1.33's operation ids, descriptions, parameters and actions:
//! - connect subresources (`attach`, `exec`, `portforward`, `proxy` and
//!   `proxy/{path}`): one `connect<Method>` operation per method, a string
//!   response of `*/*`, the options' query parameters on the path;
//! - `log`: `read…Log`, a string response as text, its options on the path;
//! - `binding`, `eviction`, `token`: `create…` with their kinds' bodies;
//! - `ephemeralcontainers`, `resize`, `approval`: read, patch, replace of
//!   the parent kind; `finalize`: replace of the Namespace;
//! - core/v1 `bindings`: `createCoreV1NamespacedBinding`.
//!
//! A response named [`STRING`] is a plain `{"type": "string"}` schema.

use crate::registry::resource::ResourceInfo;
use crate::registry::subresource::{self, Subresource};

use super::params::{self, In, Param};
use super::paths::{
    Body, Gvk, Method, Op, PathItem, Produces, group_camel, patch_params, prefix, write_params,
};

/// The response "definition" of operations that return a plain string.
pub const STRING: &str = "";

const BINDING: &str = "io.k8s.api.core.v1.Binding";
const EVICTION: &str = "io.k8s.api.policy.v1.Eviction";
const TOKEN_REQUEST: &str = "io.k8s.api.authentication.v1.TokenRequest";

const fn query(name: &'static str, ty: &'static str, description: &'static str) -> Param {
    Param {
        name,
        location: In::Query,
        ty,
        description,
    }
}

const ATTACH: &[Param] = &[
    query(
        "container",
        "string",
        "The container in which to execute the command. Defaults to only container if there is only one container in the pod.",
    ),
    query(
        "stderr",
        "boolean",
        "Stderr if true indicates that stderr is to be redirected for the attach call. Defaults to true.",
    ),
    query(
        "stdin",
        "boolean",
        "Stdin if true, redirects the standard input stream of the pod for this call. Defaults to false.",
    ),
    query(
        "stdout",
        "boolean",
        "Stdout if true indicates that stdout is to be redirected for the attach call. Defaults to true.",
    ),
    query(
        "tty",
        "boolean",
        "TTY if true indicates that a tty will be allocated for the attach call. This is passed through the container runtime so the tty is allocated on the worker node by the container runtime. Defaults to false.",
    ),
];

const EXEC: &[Param] = &[
    query(
        "command",
        "string",
        "Command is the remote command to execute. argv array. Not executed within a shell.",
    ),
    query(
        "container",
        "string",
        "Container in which to execute the command. Defaults to only container if there is only one container in the pod.",
    ),
    query(
        "stderr",
        "boolean",
        "Redirect the standard error stream of the pod for this call.",
    ),
    query(
        "stdin",
        "boolean",
        "Redirect the standard input stream of the pod for this call. Defaults to false.",
    ),
    query(
        "stdout",
        "boolean",
        "Redirect the standard output stream of the pod for this call.",
    ),
    query(
        "tty",
        "boolean",
        "TTY if true indicates that a tty will be allocated for the exec call. Defaults to false.",
    ),
];

const PORTFORWARD: &[Param] = &[query(
    "ports",
    "integer",
    "List of ports to forward Required when using WebSockets",
)];

const LOG: &[Param] = &[
    query(
        "container",
        "string",
        "The container for which to stream logs. Defaults to only container if there is one container in the pod.",
    ),
    query(
        "follow",
        "boolean",
        "Follow the log stream of the pod. Defaults to false.",
    ),
    query(
        "insecureSkipTLSVerifyBackend",
        "boolean",
        "insecureSkipTLSVerifyBackend indicates that the apiserver should not confirm the validity of the serving certificate of the backend it is connecting to.  This will make the HTTPS connection between the apiserver and the backend insecure. This means the apiserver cannot verify the log data it is receiving came from the real kubelet.  If the kubelet is configured to verify the apiserver's TLS credentials, it does not mean the connection to the real kubelet is vulnerable to a man in the middle attack (e.g. an attacker could not intercept the actual log data coming from the real kubelet).",
    ),
    query(
        "limitBytes",
        "integer",
        "If set, the number of bytes to read from the server before terminating the log output. This may not display a complete final line of logging, and may return slightly more or slightly less than the specified limit.",
    ),
    query(
        "previous",
        "boolean",
        "Return previous terminated container logs. Defaults to false.",
    ),
    query(
        "sinceSeconds",
        "integer",
        "A relative time in seconds before the current time from which to show logs. If this value precedes the time a pod was started, only logs since the pod start will be returned. If this value is in the future, no logs will be returned. Only one of sinceSeconds or sinceTime may be specified.",
    ),
    query(
        "stream",
        "string",
        "Specify which container log stream to return to the client. Acceptable values are \"All\", \"Stdout\" and \"Stderr\". If not specified, \"All\" is used, and both stdout and stderr are returned interleaved. Note that when \"TailLines\" is specified, \"Stream\" can only be set to nil or \"All\".",
    ),
    query(
        "tailLines",
        "integer",
        "If set, the number of lines from the end of the logs to show. If not specified, logs are shown from the creation of the container or sinceSeconds or sinceTime. Note that when \"TailLines\" is specified, \"Stream\" can only be set to nil or \"All\".",
    ),
    query(
        "timestamps",
        "boolean",
        "If true, add an RFC3339 or RFC3339Nano timestamp at the beginning of every line of log output. Defaults to false.",
    ),
];

/// The `path` query parameter of a proxy, per parent kind.
fn proxy_path(kind: &str) -> Param {
    let description = match kind {
        "Service" => {
            "Path is the part of URLs that include service endpoints, suffixes, and parameters to use for the current proxy request to service. For example, the whole request URL is http://localhost/api/v1/namespaces/kube-system/services/elasticsearch-logging/_search?q=user:kimchy. Path is _search?q=user:kimchy."
        }
        "Node" => "Path is the URL path to use for the current proxy request to node.",
        "Cluster" => {
            "Path is the URL path to use for the current proxy request to the member cluster."
        }
        "Federation" => {
            "Path is the URL path to use for the current proxy request to the federation's native API."
        }
        _ => "Path is the URL path to use for the current proxy request to pod.",
    };
    query("path", "string", description)
}

const PATH_SEGMENT: Param = Param {
    name: "path",
    location: In::Path,
    ty: "string",
    description: "path to the resource",
};

fn name_param() -> Param {
    Param {
        name: "name",
        location: In::Path,
        ty: "string",
        description: "",
    }
}

fn capitalize(s: &str) -> String {
    let mut c = s.chars();
    match c.next() {
        Some(f) => f.to_uppercase().chain(c).collect(),
        None => String::new(),
    }
}

/// The definitions the subresource operations of `r` name.
pub fn definitions(r: &ResourceInfo) -> Vec<&'static str> {
    subresource::extra(r.group, r.plural)
        .iter()
        .filter_map(|s| match s.kind {
            "Binding" => Some(BINDING),
            "Eviction" => Some(EVICTION),
            "TokenRequest" => Some(TOKEN_REQUEST),
            _ => None,
        })
        .collect()
}

/// What one subresource's operations share.
struct Ctx<'a> {
    r: &'a ResourceInfo,
    /// `CoreV1`, `CertificatesV1`.
    gv: String,
    /// `Namespaced` or "".
    ns: &'static str,
    /// The item path, `…/pods/{name}`.
    item: String,
    kind_def: &'a str,
}

impl Ctx<'_> {
    /// Path-level parameters: `extra`, `name` (described), `namespace`
    /// when namespaced, `pretty` when asked; sorted by name.
    fn params(&self, of: &str, extra: &[Param], pretty: bool) -> Vec<(Param, Option<String>)> {
        let mut p: Vec<(Param, Option<String>)> = extra.iter().map(|x| (*x, None)).collect();
        p.push((name_param(), Some(format!("name of the {of}"))));
        if self.r.namespaced {
            p.push((params::NAMESPACE, None));
        }
        if pretty {
            p.push((params::PRETTY, None));
        }
        p.sort_by_key(|(x, _)| x.name);
        p
    }

    fn gvk(group: &str, version: &str, kind: &str) -> Option<Gvk> {
        Some(Gvk {
            group: group.to_owned(),
            version: version.to_owned(),
            kind: kind.to_owned(),
        })
    }

    /// `connect<Method>` operations of a connect subresource.
    fn connect(&self, s: &Subresource, methods: &[Method], suffix: &str) -> Vec<Op> {
        let kind = self.r.kind;
        let sub = capitalize(s.name);
        methods
            .iter()
            .map(|m| {
                let verb = m.key().to_uppercase();
                Op {
                    method: *m,
                    description: format!("connect {verb} requests to {} of {kind}", s.name),
                    operation_id: format!(
                        "connect{}{}{}{kind}{sub}{suffix}",
                        self.gv,
                        capitalize(m.key()),
                        self.ns
                    ),
                    params: vec![],
                    body: None,
                    codes: vec!["200"],
                    response: STRING.to_owned(),
                    produces: Produces::Any,
                    action: Some("connect"),
                    gvk: Ctx::gvk(self.r.group, self.r.version, s.kind),
                }
            })
            .collect()
    }

    /// `create<GV><NS><Kind><Sub>` posting `def`.
    fn create(&self, s: &Subresource, def: &str) -> Op {
        let (group, version) = s.group_version_of(self.r);
        Op {
            method: Method::Post,
            description: format!("create {} of {}", s.name, article_kind(self.r.kind)),
            operation_id: format!(
                "create{}{}{}{}",
                self.gv,
                self.ns,
                self.r.kind,
                capitalize(s.name)
            ),
            params: write_params(),
            body: Some(Body::Object {
                schema: def.to_owned(),
                required: true,
            }),
            codes: vec!["200", "201", "202"],
            response: def.to_owned(),
            produces: Produces::Object,
            action: Some("post"),
            gvk: Ctx::gvk(group, version, s.kind),
        }
    }

    /// read/patch/replace of the parent kind through `s`.
    fn read_patch_put(&self, s: &Subresource, methods: &[Method]) -> Vec<Op> {
        let kind = self.r.kind;
        let sub = capitalize(s.name);
        let what = format!("{} of the specified {kind}", s.name);
        let id = |verb: &str| format!("{verb}{}{}{kind}{sub}", self.gv, self.ns);
        let gvk = Ctx::gvk(self.r.group, self.r.version, kind);
        methods
            .iter()
            .map(|m| match m {
                Method::Get => Op {
                    method: Method::Get,
                    description: format!("read {what}"),
                    operation_id: id("read"),
                    params: vec![],
                    body: None,
                    codes: vec!["200"],
                    response: self.kind_def.to_owned(),
                    produces: Produces::Object,
                    action: Some("get"),
                    gvk: gvk.clone(),
                },
                Method::Patch => Op {
                    method: Method::Patch,
                    description: format!("partially update {what}"),
                    operation_id: id("patch"),
                    params: patch_params(),
                    body: Some(Body::Patch),
                    codes: vec!["200", "201"],
                    response: self.kind_def.to_owned(),
                    produces: Produces::Object,
                    action: Some("patch"),
                    gvk: gvk.clone(),
                },
                _ => Op {
                    method: Method::Put,
                    description: format!("replace {what}"),
                    operation_id: id("replace"),
                    params: write_params(),
                    body: Some(Body::Object {
                        schema: self.kind_def.to_owned(),
                        required: true,
                    }),
                    codes: vec!["200", "201"],
                    response: self.kind_def.to_owned(),
                    produces: Produces::Object,
                    action: Some("put"),
                    gvk: gvk.clone(),
                },
            })
            .collect()
    }
}

/// `a Pod`, `an Ingress` (upstream's `GetArticleForNoun` for subresource
/// descriptions).
fn article_kind(kind: &str) -> String {
    let article = if kind
        .chars()
        .next()
        .is_some_and(|c| "AEIOUaeiou".contains(c))
    {
        "an"
    } else {
        "a"
    };
    format!("{article} {kind}")
}

const PROXY_METHODS: &[Method] = &[
    Method::Delete,
    Method::Get,
    Method::Head,
    Method::Options,
    Method::Patch,
    Method::Post,
    Method::Put,
];

/// The path items of `r`'s subresources other than status and scale.
/// `coll` is the collection path, `kind_def` the parent's definition.
pub fn items(r: &ResourceInfo, coll: &str, kind_def: &str) -> Vec<PathItem> {
    let ctx = Ctx {
        r,
        gv: format!("{}{}", group_camel(r.group), capitalize(r.version)),
        ns: if r.namespaced { "Namespaced" } else { "" },
        item: format!("{coll}/{{name}}"),
        kind_def,
    };
    let mut out = Vec::new();
    for s in subresource::extra(r.group, r.plural) {
        let path = format!("{}/{}", ctx.item, s.name);
        match s.name {
            "attach" | "exec" | "portforward" => {
                let extra = match s.name {
                    "attach" => ATTACH,
                    "exec" => EXEC,
                    _ => PORTFORWARD,
                };
                out.push(PathItem {
                    path,
                    params: ctx.params(s.kind, extra, false),
                    ops: ctx.connect(s, &[Method::Get, Method::Post], ""),
                });
            }
            "proxy" => {
                let q = proxy_path(r.kind);
                out.push(PathItem {
                    path: path.clone(),
                    params: ctx.params(s.kind, &[q], false),
                    ops: ctx.connect(s, PROXY_METHODS, ""),
                });
                let mut with_path = ctx.params(s.kind, &[PATH_SEGMENT, q], false);
                with_path.sort_by_key(|(x, _)| (x.name, x.location == In::Query));
                out.push(PathItem {
                    path: format!("{path}/{{path}}"),
                    params: with_path,
                    ops: ctx.connect(s, PROXY_METHODS, "WithPath"),
                });
            }
            "log" => out.push(PathItem {
                path,
                params: ctx.params(r.kind, LOG, true),
                ops: vec![Op {
                    method: Method::Get,
                    description: format!("read log of the specified {}", r.kind),
                    operation_id: format!("read{}{}{}Log", ctx.gv, ctx.ns, r.kind),
                    params: vec![],
                    body: None,
                    codes: vec!["200"],
                    response: STRING.to_owned(),
                    produces: Produces::Text,
                    action: Some("get"),
                    gvk: Ctx::gvk(r.group, r.version, r.kind),
                }],
            }),
            "binding" | "eviction" | "token" => {
                let def = match s.name {
                    "binding" => BINDING,
                    "eviction" => EVICTION,
                    _ => TOKEN_REQUEST,
                };
                out.push(PathItem {
                    path,
                    params: ctx.params(s.kind, &[], true),
                    ops: vec![ctx.create(s, def)],
                });
            }
            "finalize" => out.push(PathItem {
                path,
                params: ctx.params(r.kind, &[], true),
                ops: ctx.read_patch_put(s, &[Method::Put]),
            }),
            _ => out.push(PathItem {
                path,
                params: ctx.params(r.kind, &[], true),
                ops: ctx.read_patch_put(s, &[Method::Get, Method::Patch, Method::Put]),
            }),
        }
    }
    out
}

/// The path items of the storage-less resources of a group/version
/// (core/v1 `bindings`).
pub fn virtual_items(group: &str, version: &str) -> Vec<PathItem> {
    subresource::virtual_resources(group, version)
        .iter()
        .map(|v| {
            let gv = format!("{}{}", group_camel(v.group), capitalize(v.version));
            PathItem {
                path: format!(
                    "{}/namespaces/{{namespace}}/{}",
                    prefix(v.group, v.version),
                    v.plural
                ),
                params: vec![(params::NAMESPACE, None), (params::PRETTY, None)],
                ops: vec![Op {
                    method: Method::Post,
                    description: format!("create {}", article_kind(v.kind)),
                    operation_id: format!("create{gv}Namespaced{}", v.kind),
                    params: write_params(),
                    body: Some(Body::Object {
                        schema: BINDING.to_owned(),
                        required: true,
                    }),
                    codes: vec!["200", "201", "202"],
                    response: BINDING.to_owned(),
                    produces: Produces::Object,
                    action: Some("post"),
                    gvk: Ctx::gvk(v.group, v.version, v.kind),
                }],
            }
        })
        .collect()
}

/// The definitions of [`virtual_items`].
pub fn virtual_definitions(group: &str, version: &str) -> Vec<&'static str> {
    if subresource::virtual_resources(group, version).is_empty() {
        vec![]
    } else {
        vec![BINDING]
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::registry::resource;

    #[test]
    fn pod_subresource_operations_are_named_as_upstream() {
        let pods = resource::builtin("", "v1", "pods").expect("pods");
        let items = items(
            &pods,
            "/api/v1/namespaces/{namespace}/pods",
            "io.k8s.api.core.v1.Pod",
        );
        let ids: Vec<(String, String)> = items
            .iter()
            .flat_map(|i| {
                i.ops
                    .iter()
                    .map(move |o| (i.path.clone(), o.operation_id.clone()))
            })
            .collect();
        let has = |path: &str, id: &str| {
            assert!(
                ids.iter().any(|(p, i)| p == path && i == id),
                "{path} {id} missing from {ids:?}"
            );
        };
        let base = "/api/v1/namespaces/{namespace}/pods/{name}";
        has(
            &format!("{base}/attach"),
            "connectCoreV1GetNamespacedPodAttach",
        );
        has(
            &format!("{base}/exec"),
            "connectCoreV1PostNamespacedPodExec",
        );
        has(
            &format!("{base}/portforward"),
            "connectCoreV1GetNamespacedPodPortforward",
        );
        has(
            &format!("{base}/proxy"),
            "connectCoreV1HeadNamespacedPodProxy",
        );
        has(
            &format!("{base}/proxy/{{path}}"),
            "connectCoreV1PutNamespacedPodProxyWithPath",
        );
        has(&format!("{base}/log"), "readCoreV1NamespacedPodLog");
        has(
            &format!("{base}/binding"),
            "createCoreV1NamespacedPodBinding",
        );
        has(
            &format!("{base}/eviction"),
            "createCoreV1NamespacedPodEviction",
        );
        has(
            &format!("{base}/ephemeralcontainers"),
            "patchCoreV1NamespacedPodEphemeralcontainers",
        );
        has(
            &format!("{base}/resize"),
            "replaceCoreV1NamespacedPodResize",
        );
        let eviction = items
            .iter()
            .find(|i| i.path.ends_with("/eviction"))
            .expect("eviction");
        assert_eq!(eviction.ops[0].description, "create eviction of a Pod");
        assert_eq!(
            eviction.ops[0].gvk.as_ref().map(|g| g.group.as_str()),
            Some("policy")
        );
        let attach = items
            .iter()
            .find(|i| i.path.ends_with("/attach"))
            .expect("attach");
        assert_eq!(
            attach.ops[0].description,
            "connect GET requests to attach of Pod"
        );
        let names: Vec<&str> = attach.params.iter().map(|(p, _)| p.name).collect();
        assert_eq!(
            names,
            [
                "container",
                "name",
                "namespace",
                "stderr",
                "stdin",
                "stdout",
                "tty"
            ]
        );
    }

    #[test]
    fn namespaces_token_and_bindings() {
        let ns = resource::builtin("", "v1", "namespaces").expect("namespaces");
        let items = items(&ns, "/api/v1/namespaces", "io.k8s.api.core.v1.Namespace");
        assert_eq!(items[0].path, "/api/v1/namespaces/{name}/finalize");
        assert_eq!(
            items[0].ops[0].operation_id,
            "replaceCoreV1NamespaceFinalize"
        );
        let sa = resource::builtin("", "v1", "serviceaccounts").expect("serviceaccounts");
        let items = super::items(
            &sa,
            "/api/v1/namespaces/{namespace}/serviceaccounts",
            "io.k8s.api.core.v1.ServiceAccount",
        );
        assert_eq!(
            items[0].ops[0].operation_id,
            "createCoreV1NamespacedServiceAccountToken"
        );
        let v = virtual_items("", "v1");
        assert_eq!(v[0].path, "/api/v1/namespaces/{namespace}/bindings");
        assert_eq!(v[0].ops[0].operation_id, "createCoreV1NamespacedBinding");
        assert!(virtual_items("apps", "v1").is_empty());
    }
}
