//! HTTP handlers for `/openapi/v3`, `/openapi/v3/<path>` and `/openapi/v2`
//! (mounted by `http::routes`, behind authentication like `/api`).
//!
//! Headers follow kube-openapi's `handler3.HandleGroupVersion` and
//! kube-apiserver's `WithCacheControl` filter, except that a wrong `hash`
//! is answered with the current document instead of a 301 (see the module
//! contract in `openapi/mod.rs`).

use axum::Extension;
use axum::extract::{Path, RawQuery, State};
use axum::http::{HeaderMap, HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};

use super::{Served, host_v2_docs, host_v3_set, v2_docs, v3_set};
use crate::http::AppState;
use crate::http::host_view::HostView;
use crate::status::ApiError;

/// The gnostic protobuf media type of the v2 document
/// (`client-go/discovery/discovery_client.go: openAPIV2mimePb`).
pub const V2_PROTOBUF: &str = "application/com.github.proto-openapi.spec.v2@v1.0+protobuf";
/// The v2 protobuf type's newer spelling (kube-openapi `handler.go`).
pub const V2_PROTOBUF_NEW: &str = "application/com.github.proto-openapi.spec.v2.v1.0+protobuf";

/// `GET /openapi/v3`: the index (always JSON, as upstream). A host
/// request sees the host's documents only (`openapi/host.rs`), here and
/// in the two handlers below.
pub async fn v3_index(
    State(state): State<AppState>,
    host: Option<Extension<HostView>>,
    headers: HeaderMap,
) -> Response {
    let set = if host.is_some() {
        host_v3_set(state.registry.instance())
    } else {
        v3_set(state.registry.instance())
    };
    respond(&headers, &set.index, "application/json", Caching::Private)
}

/// `GET /openapi/v3/<path>?hash=<HASH>`: one document, JSON only.
pub async fn v3_document(
    State(state): State<AppState>,
    host: Option<Extension<HostView>>,
    Path(rest): Path<String>,
    RawQuery(query): RawQuery,
    headers: HeaderMap,
) -> Response {
    let set = if host.is_some() {
        host_v3_set(state.registry.instance())
    } else {
        v3_set(state.registry.instance())
    };
    let Some(doc) = set.docs.get(rest.trim_end_matches('/')) else {
        return ApiError::path_not_found().into_response();
    };
    if !accepts(&headers, &[("application", "json")]) {
        return ApiError::not_acceptable(&["application/json"]).into_response();
    }
    let caching = match query_hash(query.as_deref()) {
        Some(h) if h == doc.hash => Caching::Immutable,
        _ => Caching::Private,
    };
    let mut resp = respond(&headers, doc, "application/json", caching);
    resp.headers_mut()
        .insert(header::VARY, HeaderValue::from_static("Accept"));
    resp
}

/// `GET /openapi/v2`: gnostic protobuf when asked for (client-go always
/// is), else JSON.
pub async fn v2(
    State(state): State<AppState>,
    host: Option<Extension<HostView>>,
    headers: HeaderMap,
) -> Response {
    let docs = if host.is_some() {
        host_v2_docs(state.registry.instance())
    } else {
        v2_docs(state.registry.instance())
    };
    let protobuf = [
        (
            "application",
            "com.github.proto-openapi.spec.v2@v1.0+protobuf",
        ),
        (
            "application",
            "com.github.proto-openapi.spec.v2.v1.0+protobuf",
        ),
    ];
    let mut resp = match preferred(&headers, &protobuf) {
        Preference::Exact => respond(&headers, &docs.protobuf, V2_PROTOBUF_NEW, Caching::Private),
        Preference::Other if accepts(&headers, &[("application", "json")]) => {
            respond(&headers, &docs.json, "application/json", Caching::Private)
        }
        _ => {
            return ApiError::not_acceptable(&["application/json", V2_PROTOBUF]).into_response();
        }
    };
    resp.headers_mut()
        .insert(header::VARY, HeaderValue::from_static("Accept"));
    resp
}

/// How a response may be cached.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Caching {
    /// `Cache-Control: no-cache, private` (kube-apiserver's default filter).
    Private,
    /// `public, immutable` and `Expires` one year ahead: the URL's hash
    /// names these exact bytes.
    Immutable,
}

fn respond(
    headers: &HeaderMap,
    doc: &Served,
    content_type: &'static str,
    caching: Caching,
) -> Response {
    let etag = format!("\"{}\"", doc.hash);
    let not_modified = headers
        .get(header::IF_NONE_MATCH)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| v.split(',').any(|t| t.trim() == etag || t.trim() == "*"));
    let mut resp = if not_modified {
        StatusCode::NOT_MODIFIED.into_response()
    } else {
        doc.bytes.clone().into_response()
    };
    let h = resp.headers_mut();
    h.insert(header::CONTENT_TYPE, HeaderValue::from_static(content_type));
    if let Ok(v) = HeaderValue::from_str(&etag) {
        h.insert(header::ETAG, v);
    }
    match caching {
        Caching::Private => {
            h.insert(
                header::CACHE_CONTROL,
                HeaderValue::from_static("no-cache, private"),
            );
        }
        Caching::Immutable => {
            h.insert(
                header::CACHE_CONTROL,
                HeaderValue::from_static("public, immutable"),
            );
            let expires = time::OffsetDateTime::now_utc() + time::Duration::days(365);
            if let Ok(v) = HeaderValue::from_str(&http_date(expires)) {
                h.insert(header::EXPIRES, v);
            }
        }
    }
    resp
}

/// The `hash` query parameter, if present.
fn query_hash(query: Option<&str>) -> Option<String> {
    form_urlencoded::parse(query?.as_bytes())
        .find(|(k, _)| k == "hash")
        .map(|(_, v)| v.into_owned())
}

/// An RFC 7231 HTTP-date (`Sun, 06 Nov 1994 08:49:37 GMT`).
pub fn http_date(t: time::OffsetDateTime) -> String {
    let t = t.to_offset(time::UtcOffset::UTC);
    let weekday = &format!("{:?}", t.weekday())[..3];
    let month = &format!("{:?}", t.month())[..3];
    format!(
        "{weekday}, {:02} {month} {} {:02}:{:02}:{:02} GMT",
        t.day(),
        t.year(),
        t.hour(),
        t.minute(),
        t.second()
    )
}

/// Media ranges of the Accept header with a non-zero q (`*/*` when absent).
fn ranges(headers: &HeaderMap) -> Vec<(String, String)> {
    let accept = headers
        .get(header::ACCEPT)
        .and_then(|v| v.to_str().ok())
        .filter(|s| !s.trim().is_empty())
        .unwrap_or("*/*");
    accept
        .split(',')
        .filter_map(|clause| {
            let mut parts = clause.split(';');
            let range = parts.next()?.trim().to_ascii_lowercase();
            let zero = parts.any(|p| {
                p.trim()
                    .strip_prefix("q=")
                    .and_then(|q| q.trim().parse::<f32>().ok())
                    == Some(0.0)
            });
            if zero {
                return None;
            }
            let (t, s) = range.split_once('/')?;
            Some((t.to_owned(), s.to_owned()))
        })
        .collect()
}

/// Whether any Accept range matches one of `offered` (type, subtype).
fn accepts(headers: &HeaderMap, offered: &[(&str, &str)]) -> bool {
    ranges(headers).iter().any(|(t, s)| {
        offered
            .iter()
            .any(|(ot, os)| (t == "*" || t == ot) && (s == "*" || s == os))
    })
}

enum Preference {
    /// An exact (non-wildcard) range names one of the offered types.
    Exact,
    /// Nothing names them exactly.
    Other,
}

/// Whether the client named one of `offered` explicitly. Wildcards do not
/// count: `*/*` gets JSON, the widely readable form.
fn preferred(headers: &HeaderMap, offered: &[(&str, &str)]) -> Preference {
    if ranges(headers)
        .iter()
        .any(|(t, s)| offered.iter().any(|(ot, os)| t == ot && s == os))
    {
        Preference::Exact
    } else {
        Preference::Other
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn h(accept: &str) -> HeaderMap {
        let mut m = HeaderMap::new();
        m.insert(header::ACCEPT, HeaderValue::from_str(accept).unwrap());
        m
    }

    #[test]
    fn accept_matching() {
        let json = [("application", "json")];
        assert!(accepts(&HeaderMap::new(), &json));
        assert!(accepts(&h("application/json"), &json));
        assert!(accepts(&h("application/*"), &json));
        assert!(accepts(&h("text/html, */*;q=0.1"), &json));
        assert!(!accepts(
            &h("application/com.github.proto-openapi.spec.v3@v1.0+protobuf"),
            &json
        ));
        assert!(!accepts(&h("application/json;q=0"), &json));
    }

    #[test]
    fn http_dates() {
        let t = time::OffsetDateTime::from_unix_timestamp(784111777).unwrap();
        assert_eq!(http_date(t), "Sun, 06 Nov 1994 08:49:37 GMT");
    }
}
