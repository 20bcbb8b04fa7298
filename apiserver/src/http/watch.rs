//! Streaming watch responses: one JSON `WatchEvent` per line (encoded as
//! upstream by [`crate::wire::event`]), flushed per event, ended by `timeoutSeconds`, by an ERROR event, or at shutdown.

use std::time::Duration;

use axum::body::Body;
use axum::http::{HeaderMap, HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use futures::StreamExt;
use serde_json::{Value, json};

use super::AppState;
use super::query::Query;
use super::status::ApiError;
use crate::registry::watch::{WatchItem, WatchLine, WatchQuery};
use crate::registry::{Filter, ResourceInfo};

/// Serves `GET …?watch=1`.
pub async fn serve(
    state: &AppState,
    res: &std::sync::Arc<ResourceInfo>,
    ns: Option<&str>,
    q: &Query,
    headers: &HeaderMap,
) -> Result<Response, ApiError> {
    let mut tables = if super::api::wants_table(headers) {
        let include = super::api::include_object(q)?;
        Some(match &res.custom {
            Some(c) => crate::table::WatchTables::custom(c.columns.clone(), include),
            None => crate::table::WatchTables::new(res.group, res.kind, include),
        })
    } else {
        None
    };
    // Each event's object as `PartialObjectMetadata` (client-go's metadata
    // informers ask for that, or for the list form, on their watches).
    let metadata_only = tables.is_none() && super::api::wants_metadata(headers).is_some();
    let filter = Filter::parse(res, q.get("labelSelector"), q.get("fieldSelector"))?;
    let query = WatchQuery {
        filter,
        resource_version: q.get("resourceVersion").map(str::to_string),
        resource_version_match: q.get("resourceVersionMatch").map(str::to_string),
        send_initial_events: q.bool("sendInitialEvents")?,
        allow_bookmarks: q.bool("allowWatchBookmarks")?.unwrap_or(false),
    };
    // Upstream picks a random timeout in [min, 2·min) with min = 30 min when
    // the client names none.
    let timeout = q
        .int("timeoutSeconds")?
        .filter(|t| *t > 0)
        .map_or(Duration::from_secs(1800), |t| {
            Duration::from_secs(t.unsigned_abs())
        });
    // Without a Table, changes come encoded once for all their watchers.
    let lines = if tables.is_some() || metadata_only {
        state
            .registry
            .watch(res, ns, query)
            .await?
            .map(WatchLine::Item)
            .boxed()
    } else {
        state.registry.watch_lines(res, ns, query).await?
    };
    let res = res.clone();
    let shutdown = state.shutdown_signal();
    let deadline = tokio::time::sleep(timeout);
    let stopped = Box::pin(async move {
        tokio::select! {
            () = shutdown => {},
            () = deadline => {},
        }
    });
    let body = lines
        .take_until(stopped)
        .scan(false, |errored, line| {
            // Stop after an ERROR event.
            if *errored {
                return futures::future::ready(None);
            }
            *errored = matches!(line, WatchLine::Item(WatchItem::Error(_)));
            futures::future::ready(Some(line))
        })
        .map(move |line| {
            let item = match line {
                WatchLine::Encoded(bytes) => return bytes,
                WatchLine::Item(item) => item,
            };
            let (kind, mut object) = event_json(&res, item);
            if let Some(t) = tables.as_mut()
                && kind != "BOOKMARK"
            {
                object = t.event_object(&object, time::OffsetDateTime::now_utc());
            } else if metadata_only && kind != "ERROR" {
                object = crate::table::partial_object_metadata(&object);
            }
            bytes::Bytes::from(crate::wire::event(kind, &object))
        })
        // Events already waiting go out as one body chunk (one HTTP/2 DATA
        // frame, one TLS record): a busy watch costs fewer writes, and an
        // idle one is not delayed (only ready events are joined).
        .ready_chunks(EVENTS_PER_CHUNK)
        .map(|lines| Ok::<_, std::convert::Infallible>(join(lines)));
    let mut response = (StatusCode::OK, Body::from_stream(body)).into_response();
    let h = response.headers_mut();
    h.insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("application/json"),
    );
    h.insert(
        header::CACHE_CONTROL,
        HeaderValue::from_static("no-cache, private"),
    );
    Ok(response)
}

/// At most this many ready events are joined into one body chunk.
const EVENTS_PER_CHUNK: usize = 64;

/// The lines as one buffer (no copy for a single line).
fn join(mut lines: Vec<bytes::Bytes>) -> bytes::Bytes {
    if lines.len() == 1 {
        return lines.pop().unwrap_or_default();
    }
    let mut out = bytes::BytesMut::with_capacity(lines.iter().map(bytes::Bytes::len).sum());
    for l in &lines {
        out.extend_from_slice(l);
    }
    out.freeze()
}

/// The type and object of one item's `{"type": …, "object": …}` line.
fn event_json(res: &ResourceInfo, item: WatchItem) -> (&'static str, Value) {
    match item {
        WatchItem::Added(o) => ("ADDED", o),
        WatchItem::Modified(o) => ("MODIFIED", o),
        WatchItem::Deleted(o) => ("DELETED", o),
        WatchItem::Bookmark {
            revision,
            initial_events_end,
        } => {
            let mut metadata =
                json!({"resourceVersion": revision.to_string(), "creationTimestamp": null});
            if initial_events_end {
                metadata["annotations"] = json!({"k8s.io/initial-events-end": "true"});
            }
            (
                "BOOKMARK",
                json!({"kind": res.kind, "apiVersion": res.api_version, "metadata": metadata}),
            )
        }
        WatchItem::Error(e) => {
            let status: Value = serde_json::from_slice(&e.to_json()).unwrap_or(Value::Null);
            ("ERROR", status)
        }
    }
}
