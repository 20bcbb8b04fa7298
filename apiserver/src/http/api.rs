//! The API handler: parses the path, finds the resource, and runs the verb
//! against the registry. No business logic lives here beyond request and
//! response shapes.

use axum::body::Body;
use axum::extract::{Request, State};
use axum::http::{HeaderMap, HeaderValue, Method, StatusCode, header};
use axum::response::{IntoResponse, Response};
use serde_json::{Value, json};

use super::authn::UserInfo;
use super::body::{self, MAX_BODY};
use super::path::{self, ApiPath, ResourcePath};
use super::query::Query;
use super::status::ApiError;
use super::{AppState, discovery};
use crate::registry::list::ListQuery;
use crate::registry::{
    DeleteOptions, Deleted, Filter, Propagation, ResourceInfo, Target, WriteOptions, object,
};

/// Entry point for every path under `/api` and `/apis`. JSON documents
/// (objects, lists, Status errors) are indented when the request asks for
/// it as upstream's negotiation reads it ([`crate::wire::pretty_requested`]).
pub async fn handle(State(state): State<AppState>, req: Request) -> Response {
    let pretty = crate::wire::pretty_requested(
        req.uri().query(),
        req.headers()
            .get(header::ACCEPT)
            .and_then(|v| v.to_str().ok()),
        req.headers()
            .get(header::USER_AGENT)
            .and_then(|v| v.to_str().ok()),
    );
    let response = match dispatch(state, req).await {
        Ok(r) => r,
        Err(e) => e.into_response(),
    };
    if pretty {
        super::status::pretty(response).await
    } else {
        response
    }
}

/// The request, pulled apart once.
pub(super) struct Call {
    pub(super) method: Method,
    pub(super) headers: HeaderMap,
    pub(super) query: Query,
    pub(super) user: Option<UserInfo>,
    pub(super) body: axum::body::Bytes,
    /// The server's authenticators, when it has them (for TokenReviews and
    /// TokenRequests).
    pub(super) auth: Option<std::sync::Arc<super::authn::Authenticator>>,
    /// The `kubernetes.io/kube-apiserver-client` CSR signer, when the
    /// server has one (for `certificatesigningrequests/approval`).
    pub(super) signer: Option<std::sync::Arc<crate::csr_signer::ClientSigner>>,
    /// The authorizer, when the server has one (for the access reviews).
    pub(super) authorizer: Option<std::sync::Arc<crate::authz::Authorizer>>,
    /// The impersonated user's extras, if any.
    pub(super) extra: Option<super::authz::UserExtra>,
}

impl Call {
    /// The body as an object of `res`: decoded by its content type, then
    /// admitted (apiVersion/kind, normalization, unknown and duplicate
    /// fields under the query's `fieldValidation` for `options`, e.g.
    /// `"UpdateOptions"`). Returns the object and its warnings.
    pub(super) fn admitted_body(
        &self,
        resources: &crate::registry::resource::Resources,
        res: &ResourceInfo,
        options: &str,
    ) -> Result<(Value, Vec<String>), ApiError> {
        let decoded = body::decode(&body::content_type(&self.headers), &self.body)?;
        body::admit_body(
            resources,
            res,
            decoded,
            self.query.field_validation(options)?,
        )
    }
}

async fn dispatch(state: AppState, req: Request) -> Result<Response, ApiError> {
    let (parts, body) = req.into_parts();
    let Some(api_path) = path::parse(parts.uri.path()) else {
        return Err(ApiError::path_not_found());
    };
    let body = axum::body::to_bytes(body, MAX_BODY + 1)
        .await
        .map_err(|_| ApiError::body_too_large(MAX_BODY))?;
    if body.len() > MAX_BODY {
        return Err(ApiError::body_too_large(MAX_BODY));
    }
    // HTTP/2 carries the host in `:authority` (the URI), not in `Host`.
    let host = parts
        .headers
        .get(header::HOST)
        .and_then(|h| h.to_str().ok())
        .map(str::to_string)
        .or_else(|| parts.uri.authority().map(|a| a.to_string()))
        .unwrap_or_default();
    let call = Call {
        method: parts.method,
        query: Query::parse(parts.uri.query()),
        user: parts.extensions.get::<UserInfo>().cloned(),
        auth: parts
            .extensions
            .get::<std::sync::Arc<super::authn::Authenticator>>()
            .cloned(),
        signer: parts
            .extensions
            .get::<std::sync::Arc<crate::csr_signer::ClientSigner>>()
            .cloned(),
        authorizer: parts
            .extensions
            .get::<std::sync::Arc<crate::authz::Authorizer>>()
            .cloned(),
        extra: parts.extensions.get::<super::authz::UserExtra>().cloned(),
        headers: parts.headers,
        body,
    };
    let discovery_get = call.method == Method::GET;
    // What a host's aggregator may reach at the root path
    // (`http/host_view.rs`): the core API is not there at all.
    let host_view = parts
        .extensions
        .get::<super::host_view::HostView>()
        .is_some();
    match api_path {
        ApiPath::LegacyRoot if host_view => Ok(super::not_found::page_not_found()),
        ApiPath::LegacyRoot if discovery_get => Ok(discovery::legacy_root(
            state.registry.resources(),
            &call.headers,
            &host,
        )),
        ApiPath::GroupsRoot if discovery_get => Ok(discovery::groups_root(
            state.registry.resources(),
            &call.headers,
            host_view,
        )),
        ApiPath::Group(g) if discovery_get => {
            Ok(discovery::group(state.registry.resources(), &g, host_view))
        }
        ApiPath::GroupVersion(g, v) if discovery_get => Ok(discovery::group_version(
            state.registry.resources(),
            &g,
            &v,
            host_view,
        )),
        ApiPath::Resource(p) if host_view => {
            if !discovery::serves(state.registry.resources(), &p.group, &p.version, true) {
                return Ok(super::not_found::page_not_found());
            }
            if !super::host_view::shows_resource(&p.group, &p.version, &p.resource) {
                return Err(ApiError::path_not_found());
            }
            resource_call(state, call, p).await
        }
        ApiPath::Resource(p) => resource_call(state, call, p).await,
        _ => Err(ApiError::method_not_allowed()),
    }
}

async fn resource_call(state: AppState, call: Call, p: ResourcePath) -> Result<Response, ApiError> {
    if let Some(review) = super::review::find(&p.group, &p.version, &p.resource) {
        if p.subresource.is_some() {
            return Err(ApiError::path_not_found());
        }
        return super::review::handle(
            review,
            p.namespace.as_deref(),
            p.name.as_deref(),
            &call,
            call.auth.as_ref(),
        )
        .await;
    }
    if p.group.is_empty() && p.version == "v1" && p.resource == "bindings" && p.name.is_none() {
        return super::subresource::binding::legacy(&state, &call, p.namespace.as_deref()).await;
    }
    let Some(res) = state
        .registry
        .resources()
        .find(&p.group, &p.version, &p.resource)
    else {
        if !discovery::serves(state.registry.resources(), &p.group, &p.version, false) {
            return Ok(super::not_found::page_not_found());
        }
        return Err(ApiError::path_not_found());
    };
    if res.group.is_empty() && res.plural == "componentstatuses" && p.subresource.is_none() {
        let name = p.name.as_deref();
        let (method, query, headers) = (&call.method, &call.query, &call.headers);
        return Ok(
            super::componentstatus::handle(&state, &res, method, name, query, headers).await,
        );
    }
    if !res.namespaced && p.namespace.is_some() {
        return Err(ApiError::path_not_found());
    }
    let ns = p.namespace.as_deref();
    let writes_crd = res.group == "apiextensions.k8s.io"
        && res.plural == "customresourcedefinitions"
        && call.method != Method::GET;
    let response = serve_resource(&state, &call, &p, &res, ns).await;
    if writes_crd && response.as_ref().is_ok_and(|r| r.status().is_success()) {
        // Serve (or stop serving) at once, so a client that reads discovery
        // right after the write (Helm before its hooks) finds it; the
        // controller's loop would get there a moment later.
        if let Err(e) = crate::controllers::crd::sync(&state.registry).await {
            tracing::warn!(error = %e, "serving CRDs after a write failed");
        }
    }
    response
}

/// The verbs of one resource (after the special resources above).
async fn serve_resource(
    state: &AppState,
    call: &Call,
    p: &ResourcePath,
    res: &std::sync::Arc<ResourceInfo>,
    ns: Option<&str>,
) -> Result<Response, ApiError> {
    let state = state.clone();
    let res = res.clone();
    match (&call.method, p.name.as_deref(), p.subresource.as_deref()) {
        (&Method::GET, None, None) => {
            if call.query.bool("watch")?.unwrap_or(false) {
                super::watch::serve(&state, &res, ns, &call.query, &call.headers).await
            } else {
                list(&state, &res, ns, call).await
            }
        }
        (&Method::POST, None, None) => {
            let ns = namespace_for_write(&res, ns)?;
            create(&state, &res, &ns, call).await
        }
        (&Method::DELETE, None, None) => {
            if !res.verbs().contains(&"deletecollection") {
                return Err(ApiError::method_not_allowed());
            }
            delete_collection(&state, &res, ns, call).await
        }
        (&Method::GET, Some(name), None) => {
            let rv = call.query.get("resourceVersion");
            let obj = state
                .registry
                .get_at(&res, ns.unwrap_or(""), name, rv)
                .await?;
            get_response(&res, &obj, call)
        }
        (&Method::GET, Some(name), Some("status")) if res.status => {
            let obj = state.registry.get(&res, ns.unwrap_or(""), name).await?;
            get_response(&res, &obj, call)
        }
        (&Method::PUT, Some(name), sub @ (None | Some("status"))) => {
            if sub.is_some() && !res.status {
                return Err(ApiError::path_not_found());
            }
            let ns = namespace_for_write(&res, ns)?;
            update(&state, &res, &ns, name, sub_target(sub), call).await
        }
        (&Method::PATCH, Some(name), sub @ (None | Some("status"))) => {
            if sub.is_some() && !res.status {
                return Err(ApiError::path_not_found());
            }
            let ns = namespace_for_write(&res, ns)?;
            super::patch::handle(&state, &res, &ns, name, sub_target(sub), call).await
        }
        (&Method::DELETE, Some(name), None) => {
            let ns = namespace_for_write(&res, ns)?;
            delete(&state, &res, &ns, name, call).await
        }
        (m, Some(name), Some("scale")) if res.scale.is_some() => {
            let ns = namespace_for_write(&res, ns)?;
            super::scale::handle(
                &state,
                &res,
                &ns,
                name,
                m,
                &call.query,
                &call.headers,
                &call.body,
            )
            .await
        }
        (_, Some(name), Some(sub))
            if !matches!(sub, "status" | "scale")
                && crate::registry::subresource::find(&res, sub).is_some() =>
        {
            super::subresource::handle(&state, call, &res, ns, name, sub).await
        }
        (_, _, Some(_)) => Err(ApiError::path_not_found()),
        _ => Err(ApiError::method_not_allowed()),
    }
}

fn sub_target(sub: Option<&str>) -> Target {
    if sub == Some("status") {
        Target::Status
    } else {
        Target::Main
    }
}

/// The namespace a write goes to: required for namespaced kinds.
fn namespace_for_write(res: &ResourceInfo, ns: Option<&str>) -> Result<String, ApiError> {
    match (res.namespaced, ns) {
        (true, Some(ns)) => Ok(ns.to_string()),
        (true, None) => Err(ApiError::path_not_found()),
        (false, _) => Ok(String::new()),
    }
}

/// Whether the client asked for `meta.k8s.io` Tables (kubectl get).
pub fn wants_table(headers: &HeaderMap) -> bool {
    headers
        .get_all(header::ACCEPT)
        .iter()
        .filter_map(|v| v.to_str().ok())
        .flat_map(|v| v.split(','))
        .any(|part| {
            let p = part.replace(' ', "");
            p.contains("as=Table") && p.contains("g=meta.k8s.io")
        })
}

/// The metadata-only form a client asks for (client-go's metadata client:
/// the garbage collector, the quota controller, `kubectl get -o name` of
/// some versions).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum MetadataAs {
    /// `as=PartialObjectMetadata;g=meta.k8s.io;v=v1` (an object, or each
    /// event's object of a watch).
    Object,
    /// `as=PartialObjectMetadataList;g=meta.k8s.io;v=v1` (a list).
    List,
}

/// The metadata-only form the client prefers: upstream's negotiation takes
/// the first entry of `Accept` the server can answer, and Skein answers
/// JSON, not protobuf, so the first non-protobuf entry decides.
pub fn wants_metadata(headers: &HeaderMap) -> Option<MetadataAs> {
    let entries = headers
        .get_all(header::ACCEPT)
        .iter()
        .filter_map(|v| v.to_str().ok())
        .flat_map(|v| v.split(','));
    for entry in entries {
        let mut parts = entry.split(';').map(str::trim);
        let media = parts.next().unwrap_or_default().to_ascii_lowercase();
        if media == super::body::PROTOBUF || media.is_empty() {
            continue;
        }
        let params: Vec<(&str, &str)> = parts.filter_map(|p| p.split_once('=')).collect();
        let param = |k: &str| params.iter().find(|(n, _)| *n == k).map(|(_, v)| *v);
        if param("g") != Some("meta.k8s.io") || !matches!(param("v"), Some("v1" | "v1beta1")) {
            return None;
        }
        return match param("as") {
            Some("PartialObjectMetadata") => Some(MetadataAs::Object),
            Some("PartialObjectMetadataList") => Some(MetadataAs::List),
            _ => None,
        };
    }
    None
}

/// The `PartialObjectMetadataList` of a page (upstream's
/// `asPartialObjectMetadataList`).
fn partial_list(items: &[Value], metadata: Value) -> Value {
    let items: Vec<Value> = items
        .iter()
        .map(crate::table::partial_object_metadata)
        .collect();
    json!({
        "kind": "PartialObjectMetadataList",
        "apiVersion": "meta.k8s.io/v1",
        "metadata": metadata,
        "items": items,
    })
}

/// Upstream's 406 for a metadata form that does not fit the answer.
fn metadata_mismatch(asked: MetadataAs, res: &ResourceInfo) -> ApiError {
    let message = match asked {
        MetadataAs::Object => format!(
            "you requested PartialObjectMetadata, but the requested object is a list (*v1.{})",
            res.list_kind
        ),
        MetadataAs::List => format!(
            "you requested PartialObjectMetadataList, but the requested object is not a list (*v1.{})",
            res.kind
        ),
    };
    ApiError::new(StatusCode::NOT_ACCEPTABLE, "NotAcceptable", message)
}

/// `includeObject` (400 for unknown values).
pub fn include_object(q: &Query) -> Result<crate::table::IncludeObject, ApiError> {
    let v = q.get("includeObject").unwrap_or("");
    crate::table::IncludeObject::parse(v)
        .ok_or_else(|| ApiError::bad_request(format!("unrecognized includeObject value: {v:?}")))
}

fn get_response(res: &ResourceInfo, obj: &Value, call: &Call) -> Result<Response, ApiError> {
    let warnings = deprecation(res);
    if wants_table(&call.headers) {
        let include = include_object(&call.query)?;
        let now = time::OffsetDateTime::now_utc();
        let table = match &res.custom {
            Some(c) => crate::table::custom_object_table(&c.columns, obj, include, now),
            None => crate::table::object_table(res.group, res.kind, obj, include, now),
        };
        return Ok(object_response(StatusCode::OK, &table, &warnings));
    }
    match wants_metadata(&call.headers) {
        Some(MetadataAs::Object) => Ok(object_response(
            StatusCode::OK,
            &crate::table::partial_object_metadata(obj),
            &warnings,
        )),
        Some(asked @ MetadataAs::List) => Err(metadata_mismatch(asked, res)),
        None => Ok(object_response(StatusCode::OK, obj, &warnings)),
    }
}

/// The `Warning` of a deprecated CRD version (upstream sends it on every
/// request to that version).
pub fn deprecation(res: &ResourceInfo) -> Vec<String> {
    res.custom
        .as_ref()
        .and_then(|c| c.deprecation_warning.clone())
        .into_iter()
        .collect()
}

/// Custom resources are JSON (or YAML) only, as upstream's CRD handler:
/// a protobuf body is 415.
fn check_custom_body(res: &ResourceInfo, call: &Call) -> Result<(), ApiError> {
    if res.is_custom() && body::content_type(&call.headers) == body::PROTOBUF {
        return Err(ApiError::unsupported_media_type(&[
            "application/json",
            "application/yaml",
        ]));
    }
    Ok(())
}

/// A JSON response for one object (encoded as upstream, see
/// [`crate::wire`]), with `Warning` headers.
pub fn object_response(code: StatusCode, obj: &Value, warnings: &[String]) -> Response {
    json_response(code, crate::wire::to_vec(obj), warnings)
}

/// A response of encoded JSON bytes, with `Warning` headers; marked as a
/// JSON document so `?pretty` indents it.
pub fn json_response(code: StatusCode, bytes: Vec<u8>, warnings: &[String]) -> Response {
    let mut response = (code, bytes).into_response();
    response
        .extensions_mut()
        .insert(super::status::JsonDocument);
    let h = response.headers_mut();
    h.insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("application/json"),
    );
    h.insert(
        header::CACHE_CONTROL,
        HeaderValue::from_static("no-cache, private"),
    );
    for w in warnings {
        let text = format!("299 - {}", serde_json::to_string(w).unwrap_or_default());
        if let Ok(v) = HeaderValue::from_str(&text) {
            h.append("warning", v);
        }
    }
    response
}

/// The field manager of a write: `fieldManager`, else the user agent's
/// product token (upstream `prefixFromUserAgent`).
pub(super) fn field_manager(call: &Call, options: &str) -> Result<String, ApiError> {
    if let Some(m) = call.query.get("fieldManager").filter(|m| !m.is_empty()) {
        if m.len() > 128 {
            return Err(ApiError::invalid(
                "meta.k8s.io",
                options,
                "",
                vec![super::status::Cause::too_long(
                    "fieldManager",
                    "may not be more than 128 characters",
                )],
            ));
        }
        return Ok(m.to_string());
    }
    let agent = call
        .headers
        .get(header::USER_AGENT)
        .and_then(|v| v.to_str().ok())
        .unwrap_or("unknown");
    Ok(agent
        .split('/')
        .next()
        .unwrap_or("unknown")
        .chars()
        .take(128)
        .collect())
}

/// Write options of a create (`CreateOptions`), update (`UpdateOptions`)
/// or patch (`PatchOptions`); `options` names the kind in errors.
pub(super) fn write_options(call: &Call, options: &str) -> Result<WriteOptions, ApiError> {
    Ok(WriteOptions {
        dry_run: call.query.dry_run(options)?,
        field_manager: field_manager(call, options)?,
        requester: call.user.clone(),
        ..WriteOptions::default()
    })
}

async fn list(
    state: &AppState,
    res: &ResourceInfo,
    ns: Option<&str>,
    call: &Call,
) -> Result<Response, ApiError> {
    let q = &call.query;
    // Parsed as upstream parses ListOptions, even where a list ignores them.
    q.int("timeoutSeconds")?;
    q.bool("allowWatchBookmarks")?;
    q.bool("sendInitialEvents")?;
    let filter = Filter::parse(res, q.get("labelSelector"), q.get("fieldSelector"))?;
    let limit = q.int("limit")?.unwrap_or(0).max(0) as usize;
    let query = ListQuery {
        filter,
        limit,
        continue_token: q.get("continue").map(str::to_string),
        resource_version: q.get("resourceVersion").map(str::to_string),
        resource_version_match: q.get("resourceVersionMatch").map(str::to_string),
    };
    let table = wants_table(&call.headers);
    let metadata_only = if table {
        None
    } else {
        wants_metadata(&call.headers)
    };
    if let Some(asked @ MetadataAs::Object) = metadata_only {
        return Err(metadata_mismatch(asked, res));
    }
    if !table
        && metadata_only.is_none()
        && let Some(page) = state.registry.list_encoded(res, ns, &query).await?
    {
        // From the watch cache: the items' bytes are spliced, not encoded.
        let mut metadata = json!({"resourceVersion": page.revision.to_string()});
        if let Some(c) = &page.continue_token {
            metadata["continue"] = json!(c);
        }
        let body =
            crate::wire::list_spliced(res.list_kind, res.api_version, &metadata, &page.items);
        return Ok(json_response(StatusCode::OK, body, &deprecation(res)));
    }
    let page = state.registry.list(res, ns, &query).await?;
    if table {
        let include = include_object(q)?;
        let meta = crate::table::ListMeta {
            resource_version: page.revision.to_string(),
            continue_token: page.continue_token.clone().unwrap_or_default(),
            remaining_item_count: None,
        };
        let now = time::OffsetDateTime::now_utc();
        let table = match &res.custom {
            Some(c) => crate::table::custom_table(&c.columns, &page.items, &meta, include, now),
            None => crate::table::table(res.group, res.kind, &page.items, &meta, include, now),
        };
        return Ok(object_response(StatusCode::OK, &table, &deprecation(res)));
    }
    let mut metadata = json!({"resourceVersion": page.revision.to_string()});
    if let Some(c) = &page.continue_token {
        metadata["continue"] = json!(c);
    }
    if metadata_only.is_some() {
        let list = partial_list(&page.items, metadata);
        return Ok(object_response(StatusCode::OK, &list, &deprecation(res)));
    }
    let body = crate::wire::list(
        res.list_kind,
        res.api_version,
        &metadata,
        &page.items,
        res.kind,
    );
    Ok(json_response(StatusCode::OK, body, &deprecation(res)))
}

async fn create(
    state: &AppState,
    res: &ResourceInfo,
    ns: &str,
    call: &Call,
) -> Result<Response, ApiError> {
    check_custom_body(res, call)?;
    if let Some(c) = &res.custom
        && c.terminating
    {
        return Err(ApiError::method_not_supported(
            res.group,
            res.plural,
            "create not allowed while custom resource definition is terminating",
        ));
    }
    let (obj, mut warnings) =
        call.admitted_body(state.registry.resources(), res, "CreateOptions")?;
    warnings.extend(deprecation(res));
    let opts = write_options(call, "CreateOptions")?;
    let created = state.registry.create(res, ns, obj, &opts).await?;
    Ok(object_response(StatusCode::CREATED, &created, &warnings))
}

async fn update(
    state: &AppState,
    res: &ResourceInfo,
    ns: &str,
    name: &str,
    target: Target,
    call: &Call,
) -> Result<Response, ApiError> {
    check_custom_body(res, call)?;
    let (obj, mut warnings) =
        call.admitted_body(state.registry.resources(), res, "UpdateOptions")?;
    warnings.extend(deprecation(res));
    let opts = write_options(call, "UpdateOptions")?;
    let updated = state
        .registry
        .update(res, ns, name, obj, target, &opts)
        .await?;
    Ok(object_response(StatusCode::OK, &updated, &warnings))
}

/// DeleteOptions from the body (JSON or protobuf) and the query.
fn delete_options(call: &Call) -> Result<DeleteOptions, ApiError> {
    let mut opts = DeleteOptions {
        dry_run: call.query.dry_run("DeleteOptions")?,
        ..DeleteOptions::default()
    };
    let mut policy = call.query.get("propagationPolicy").map(str::to_string);
    if !call.body.is_empty() {
        let decoded = body::decode(&body::content_type(&call.headers), &call.body)?;
        let b = decoded.raw;
        if let Some(p) = b.get("propagationPolicy").and_then(Value::as_str) {
            policy = Some(p.to_string());
        }
        if let Some(orphan) = b.get("orphanDependents").and_then(Value::as_bool) {
            policy.get_or_insert_with(|| {
                if orphan {
                    "Orphan".into()
                } else {
                    "Background".into()
                }
            });
        }
        if b.get("dryRun")
            .and_then(Value::as_array)
            .is_some_and(|a| a.iter().any(|v| v == "All"))
        {
            opts.dry_run = true;
        }
        if let Some(pre) = b.get("preconditions") {
            opts.precondition_uid = pre.get("uid").and_then(Value::as_str).map(str::to_string);
            opts.precondition_rv = pre
                .get("resourceVersion")
                .and_then(Value::as_str)
                .map(str::to_string);
        }
    }
    if let Some(orphan) = call.query.bool("orphanDependents")? {
        policy.get_or_insert_with(|| {
            if orphan {
                "Orphan".into()
            } else {
                "Background".into()
            }
        });
    }
    opts.propagation = match policy.as_deref() {
        None | Some("") => None,
        Some("Background") => Some(Propagation::Background),
        Some("Foreground") => Some(Propagation::Foreground),
        Some("Orphan") => Some(Propagation::Orphan),
        Some(other) => {
            return Err(ApiError::invalid(
                "meta.k8s.io",
                "DeleteOptions",
                "",
                vec![super::status::Cause {
                    reason: "FieldValueNotSupported",
                    field: "propagationPolicy".into(),
                    value: Some(format!("{other:?}")),
                    detail: "supported values: \"Foreground\", \"Background\", \"Orphan\", \"nil\""
                        .into(),
                }],
            ));
        }
    };
    Ok(opts)
}

async fn delete(
    state: &AppState,
    res: &ResourceInfo,
    ns: &str,
    name: &str,
    call: &Call,
) -> Result<Response, ApiError> {
    let opts = delete_options(call)?;
    match state.registry.delete(res, ns, name, &opts).await? {
        Deleted::Gone(obj) if res.returns_deleted_object() => {
            Ok(object_response(StatusCode::OK, &obj, &[]))
        }
        Deleted::Gone(obj) => {
            let mut details = json!({"name": name, "kind": res.plural, "uid": object::uid(&obj)});
            if !res.group.is_empty() {
                details["group"] = json!(res.group);
            }
            let status = json!({"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Success", "details": details});
            Ok(object_response(StatusCode::OK, &status, &[]))
        }
        Deleted::Pending(obj) => Ok(object_response(StatusCode::OK, &obj, &[])),
    }
}

async fn delete_collection(
    state: &AppState,
    res: &ResourceInfo,
    ns: Option<&str>,
    call: &Call,
) -> Result<Response, ApiError> {
    let opts = delete_options(call)?;
    let filter = Filter::parse(
        res,
        call.query.get("labelSelector"),
        call.query.get("fieldSelector"),
    )?;
    let page = state
        .registry
        .list(
            res,
            ns,
            &ListQuery {
                filter,
                ..ListQuery::default()
            },
        )
        .await?;
    let mut deleted = Vec::new();
    for obj in page.items {
        let name = object::name(&obj).to_string();
        let ons = object::namespace(&obj).to_string();
        match state.registry.delete(res, &ons, &name, &opts).await {
            Ok(Deleted::Gone(o)) | Ok(Deleted::Pending(o)) => deleted.push(o),
            Err(e) if e.reason() == "NotFound" => {}
            Err(e) => return Err(e),
        }
    }
    let body = crate::wire::list(
        res.list_kind,
        res.api_version,
        &json!({}),
        &deleted,
        res.kind,
    );
    Ok(json_response(StatusCode::OK, body, &[]))
}

/// A `Body` of one JSON document, encoded as upstream (for streaming helpers).
pub fn json_body(v: &Value) -> Body {
    Body::from(crate::wire::to_vec(v))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn accept(v: &str) -> HeaderMap {
        let mut h = HeaderMap::new();
        h.insert(header::ACCEPT, HeaderValue::from_str(v).expect("header"));
        h
    }

    #[test]
    fn metadata_forms_follow_the_first_json_entry() {
        // client-go's metadata client, list then get/watch.
        let list = "application/vnd.kubernetes.protobuf;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1,application/json;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1,application/json";
        assert_eq!(wants_metadata(&accept(list)), Some(MetadataAs::List));
        let object = "application/vnd.kubernetes.protobuf;as=PartialObjectMetadata;g=meta.k8s.io;v=v1,application/json;as=PartialObjectMetadata;g=meta.k8s.io;v=v1,application/json";
        assert_eq!(wants_metadata(&accept(object)), Some(MetadataAs::Object));
        // A plain entry first wins over a later metadata one.
        assert_eq!(
            wants_metadata(&accept(
                "application/json, application/json;as=PartialObjectMetadata;g=meta.k8s.io;v=v1"
            )),
            None
        );
        assert_eq!(wants_metadata(&accept("application/json")), None);
        assert_eq!(
            wants_metadata(&accept("application/json;as=Table;g=meta.k8s.io;v=v1")),
            None
        );
        // Another group is not metadata.
        assert_eq!(
            wants_metadata(&accept(
                "application/json;as=PartialObjectMetadata;g=example.com;v=v1"
            )),
            None
        );
    }

    #[test]
    fn partial_lists_carry_only_metadata() {
        let items = vec![json!({"apiVersion": "v1", "kind": "ConfigMap",
            "metadata": {"name": "a", "uid": "u", "resourceVersion": "7"}, "data": {"k": "v"}})];
        let list = partial_list(&items, json!({"resourceVersion": "9"}));
        assert_eq!(
            list,
            json!({"kind": "PartialObjectMetadataList", "apiVersion": "meta.k8s.io/v1",
                "metadata": {"resourceVersion": "9"},
                "items": [{"kind": "PartialObjectMetadata", "apiVersion": "meta.k8s.io/v1",
                    "metadata": {"name": "a", "uid": "u", "resourceVersion": "7", "creationTimestamp": null}}]})
        );
    }
}
