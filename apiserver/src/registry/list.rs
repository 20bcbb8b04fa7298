//! LIST: selectors, `limit`/`continue` pagination pinned to one revision,
//! and the `resourceVersion`/`resourceVersionMatch` semantics.

use base64::Engine;
use serde_json::{Value, json};
use skein_storage::{Error as StoreError, ListOptions};

use std::sync::Arc;

use super::cache::index::Entry;
use super::filter::Attrs;
use super::{Filter, Registry, ResourceInfo, key, store_error};
use crate::status::ApiError;

/// What a LIST asked for.
#[derive(Clone, Debug, Default)]
pub struct ListQuery {
    /// Selectors.
    pub filter: Filter,
    /// Page size; 0 = everything.
    pub limit: usize,
    /// `continue` token from a previous page.
    pub continue_token: Option<String>,
    /// `resourceVersion`.
    pub resource_version: Option<String>,
    /// `resourceVersionMatch`.
    pub resource_version_match: Option<String>,
}

/// One page.
#[derive(Clone, Debug)]
pub struct ListPage {
    /// Matching objects, in key order.
    pub items: Vec<Value>,
    /// The revision the page was read at.
    pub revision: i64,
    /// Token for the next page, if any.
    pub continue_token: Option<String>,
}

const EXPIRED_CONTINUE: &str = "The provided continue parameter is too old to display a consistent list result. You can start a new list without the continue parameter, or use the continue token in this response to retrieve the remainder of the results. Continuing with the provided token results in an inconsistent list - objects that were created, modified, or deleted between the time the first chunk was returned and now may show up in the list.";

fn encode_continue(rev: i64, start: &str) -> String {
    let token = json!({"v": "meta.k8s.io/v1", "rv": rev, "start": start});
    base64::engine::general_purpose::URL_SAFE.encode(token.to_string())
}

fn decode_continue(token: &str) -> Result<(i64, String), ApiError> {
    let bad = || ApiError::bad_request(format!("continue key is not valid: {token}"));
    let raw = base64::engine::general_purpose::URL_SAFE
        .decode(token)
        .or_else(|_| base64::engine::general_purpose::STANDARD.decode(token))
        .map_err(|_| bad())?;
    let v: Value = serde_json::from_slice(&raw).map_err(|_| bad())?;
    let rev = v
        .get("rv")
        .and_then(Value::as_i64)
        .filter(|r| *r > 0)
        .ok_or_else(bad)?;
    let start = v.get("start").and_then(Value::as_str).ok_or_else(bad)?;
    if start.contains("..") || start.starts_with('/') {
        return Err(bad());
    }
    Ok((rev, start.to_string()))
}

impl Registry {
    /// Lists objects of `res` in `ns` (`None` = all namespaces), in `res`'s
    /// version.
    pub async fn list(
        &self,
        res: &ResourceInfo,
        ns: Option<&str>,
        q: &ListQuery,
    ) -> Result<ListPage, ApiError> {
        if let Some(c) = &res.custom {
            let mut page = self.list_stored(res, ns, q).await?;
            page.items = c
                .present_all(res.api_version, std::mem::take(&mut page.items))
                .await?;
            return Ok(page);
        }
        match super::converted(res)? {
            None => self.list_stored(res, ns, q).await,
            Some((stored, c)) => {
                let mut page = self.list_stored(&stored, ns, q).await?;
                page.items = page.items.into_iter().map(c.from_storage).collect();
                Ok(page)
            }
        }
    }

    async fn list_stored(
        &self,
        res: &ResourceInfo,
        ns: Option<&str>,
        q: &ListQuery,
    ) -> Result<ListPage, ApiError> {
        validate_match(q)?;
        let prefix = key::prefix(res, ns);
        let Route {
            from_cache,
            at,
            start_after,
        } = self.route(&prefix, q).await?;
        if let Some(read) = from_cache
            && let Some(page) = self.list_cached(res, &prefix, q, read).await?
        {
            return Ok(page);
        }

        let page = self.store_page(res, &prefix, q, at, start_after).await?;
        let mut items = Vec::with_capacity(page.items.len());
        for (kv, obj) in page.items {
            items.push(match obj {
                Some(o) => o,
                None => Registry::decode(&kv)?,
            });
        }
        Ok(ListPage {
            items,
            revision: page.revision,
            continue_token: page.continue_token,
        })
    }

    /// One page read from the store at `at` (0: now) after `start_after`:
    /// the matching pairs (with the decoded object when the filter needed
    /// it), the revision and the continue token.
    async fn store_page(
        &self,
        res: &ResourceInfo,
        prefix: &str,
        q: &ListQuery,
        at: i64,
        mut start_after: Option<String>,
    ) -> Result<StorePage, ApiError> {
        let mut items = Vec::new();
        let mut more;
        let mut last_key = None;
        let mut revision = at;
        loop {
            let opts = ListOptions {
                at_revision: revision,
                limit: if q.limit == 0 {
                    0
                } else {
                    (q.limit - items.len()).max(1)
                },
                start_after: start_after.clone(),
            };
            let page = match self.store.list(prefix, opts).await {
                Ok(p) => p,
                Err(StoreError::Compacted { .. }) if q.continue_token.is_some() => {
                    return Err(ApiError::expired(EXPIRED_CONTINUE));
                }
                Err(StoreError::Compacted { .. }) => {
                    return Err(ApiError::expired(
                        "The resourceVersion for the provided list is too old.",
                    ));
                }
                Err(StoreError::FutureRevision { requested, current }) => {
                    return Err(ApiError::resource_version_too_large(requested, current));
                }
                Err(e) => return Err(store_error(e)),
            };
            revision = page.revision;
            for kv in page.items {
                last_key = Some(kv.key.clone());
                if q.filter.is_empty() {
                    items.push((kv, None));
                    continue;
                }
                let obj = Registry::decode(&kv)?;
                if q.filter.matches(res, &obj) {
                    items.push((kv, Some(obj)));
                }
            }
            start_after = last_key.clone();
            more = page.more;
            if !page.more || (q.limit > 0 && items.len() >= q.limit) {
                break;
            }
        }
        let continue_token = match (more, &last_key) {
            (true, Some(k)) => Some(encode_continue(
                revision,
                k.strip_prefix(prefix).unwrap_or(k),
            )),
            _ => None,
        };
        Ok(StorePage {
            items,
            revision,
            continue_token,
        })
    }
}

/// A page read from the store (see `Registry::store_page`).
struct StorePage {
    items: Vec<(skein_storage::KeyValue, Option<Value>)>,
    revision: i64,
    continue_token: Option<String>,
}

/// Where a list is read from: the cache (how fresh), or the store (at which
/// revision, after which key).
struct Route {
    from_cache: Option<CacheRead>,
    at: i64,
    start_after: Option<String>,
}

/// A page from the cache: the matching entries (with the decoded object
/// when the filter needed it), the revision and the continue token.
struct CachedPage {
    entries: Vec<(Arc<Entry>, Option<Value>)>,
    revision: i64,
    continue_token: Option<String>,
}

/// A page of list items already encoded as JSON list items (see
/// [`Registry::list_encoded`]).
#[derive(Clone, Debug)]
pub struct EncodedPage {
    /// Each matching object's encoding as a list item, in key order.
    pub items: Vec<crate::wire::Item>,
    /// The revision the page was read at.
    pub revision: i64,
    /// Token for the next page, if any.
    pub continue_token: Option<String>,
}

impl Registry {
    /// Decides where a list of `prefix` is read from.
    async fn route(&self, prefix: &str, q: &ListQuery) -> Result<Route, ApiError> {
        let (mut at, mut start_after) = (0, None);
        // From the watch cache, as upstream's cacher: `""` (consistent:
        // once the cache has the store's current revision), `0` and
        // `NotOlderThan` (once it has that revision); `Exact`, the legacy
        // exact match (`resourceVersion=N` with a limit) and continue tokens
        // go to the store.
        let mut from_cache = Some(CacheRead::Consistent);
        if let Some(token) = q.continue_token.as_deref().filter(|t| !t.is_empty()) {
            if q.resource_version
                .as_deref()
                .is_some_and(|rv| !rv.is_empty())
            {
                return Err(ApiError::bad_request(
                    "specifying resource version is not allowed when using continue",
                ));
            }
            let (rev, start) = decode_continue(token)?;
            from_cache = None;
            at = rev;
            start_after = Some(format!("{prefix}{start}"));
        } else if let Some(rv) = q
            .resource_version
            .as_deref()
            .filter(|rv| !rv.is_empty() && *rv != "0")
        {
            let rev = rv
                .parse::<i64>()
                .map_err(|_| ApiError::bad_request(format!("invalid resource version: {rv}")))?;
            match q.resource_version_match.as_deref() {
                Some("Exact") => {
                    from_cache = None;
                    at = rev;
                }
                m @ (None | Some("") | Some("NotOlderThan")) => {
                    let current = self.store.current_revision().await.map_err(store_error)?;
                    if rev > current {
                        return Err(ApiError::resource_version_too_large(rev, current));
                    }
                    from_cache = (m == Some("NotOlderThan") || q.limit == 0)
                        .then_some(CacheRead::NotOlderThan(rev));
                }
                Some(other) => {
                    return Err(ApiError::bad_request(format!(
                        "resourceVersionMatch: Unsupported value: \"{other}\": supported values: \"Exact\", \"NotOlderThan\""
                    )));
                }
            }
        } else if q.resource_version.as_deref() == Some("0") {
            from_cache = Some(CacheRead::NotOlderThan(1));
        }
        Ok(Route {
            from_cache,
            at,
            start_after,
        })
    }

    /// A list served by splicing encoded items, when that is possible: the
    /// cache is on and `res` is a built-in resource served in its storage
    /// version (no conversion). Lists the cache serves splice its entries'
    /// encodings; lists read from the store (Exact, continue tokens, a
    /// cache not fresh in time) reuse them for every object the cache holds
    /// in the same version. `None` otherwise: the caller uses
    /// [`Registry::list`]. Items are the bytes `crate::wire::list` would
    /// write for the same objects.
    pub async fn list_encoded(
        &self,
        res: &ResourceInfo,
        ns: Option<&str>,
        q: &ListQuery,
    ) -> Result<Option<EncodedPage>, ApiError> {
        if self.cache.is_none() || res.custom.is_some() || super::converted(res)?.is_some() {
            return Ok(None);
        }
        validate_match(q)?;
        let prefix = key::prefix(res, ns);
        let route = self.route(&prefix, q).await?;
        let cached = match route.from_cache {
            Some(read) => self.cached_page(res, &prefix, q, read, false).await?,
            None => None,
        };
        let Some(page) = cached else {
            return self
                .store_page_encoded(res, &prefix, q, route)
                .await
                .map(Some);
        };
        let mut items = Vec::with_capacity(page.entries.len());
        for (entry, obj) in page.entries {
            items.push(list_item(res, &entry, obj)?);
        }
        Ok(Some(EncodedPage {
            items,
            revision: page.revision,
            continue_token: page.continue_token,
        }))
    }
}

/// `entry`'s list-item encoding for `res` (kept in the entry), from `obj`
/// when the caller decoded it already.
fn list_item(
    res: &ResourceInfo,
    entry: &Entry,
    obj: Option<Value>,
) -> Result<crate::wire::Item, ApiError> {
    entry.encoded(res.api_version, || {
        let obj = match obj {
            Some(o) => o,
            None => Registry::decode(&entry.kv)?,
        };
        Ok::<_, ApiError>(crate::wire::list_item(res.api_version, res.kind, &obj))
    })
}

impl Registry {
    /// A page read from the store, its items encoded through the watch
    /// cache's entries where the cache holds the same version of the object
    /// (its encoding is made once and kept), else encoded here.
    async fn store_page_encoded(
        &self,
        res: &ResourceInfo,
        prefix: &str,
        q: &ListQuery,
        route: Route,
    ) -> Result<EncodedPage, ApiError> {
        let page = self
            .store_page(res, prefix, q, route.at, route.start_after)
            .await?;
        let cache = self
            .cache
            .as_ref()
            .map(|c| c.cache(&key::prefix(res, None)));
        let mut items = Vec::with_capacity(page.items.len());
        for (kv, obj) in page.items {
            let held = cache
                .as_ref()
                .and_then(|c| c.get(&kv.key))
                .and_then(|(entry, _)| entry)
                .filter(|e| e.kv.mod_revision == kv.mod_revision);
            let entry = held.unwrap_or_else(|| Arc::new(Entry::new(kv)));
            items.push(list_item(res, &entry, obj)?);
        }
        Ok(EncodedPage {
            items,
            revision: page.revision,
            continue_token: page.continue_token,
        })
    }
}

/// How fresh a list from the watch cache must be.
#[derive(Clone, Copy, Debug)]
enum CacheRead {
    /// At least the store's current revision.
    Consistent,
    /// At least this revision.
    NotOlderThan(i64),
}

impl Registry {
    /// One page from the watch cache, or `None` when the cache is off or
    /// does not reach the wanted revision within its timeout (the store
    /// serves the list then). Same page semantics as the store path: up to
    /// `q.limit` matching items, and a continue token (pinned to the
    /// cache's revision, which the store serves) when keys follow.
    async fn list_cached(
        &self,
        res: &ResourceInfo,
        prefix: &str,
        q: &ListQuery,
        read: CacheRead,
    ) -> Result<Option<ListPage>, ApiError> {
        let Some(page) = self.cached_page(res, prefix, q, read, true).await? else {
            return Ok(None);
        };
        Ok(Some(ListPage {
            items: page.entries.into_iter().filter_map(|(_, o)| o).collect(),
            revision: page.revision,
            continue_token: page.continue_token,
        }))
    }

    /// The entries of one page from the cache (`decode_all`: with every
    /// decoded object, else only those the filter decoded), or `None` when
    /// the cache is off or not fresh enough in time.
    async fn cached_page(
        &self,
        res: &ResourceInfo,
        prefix: &str,
        q: &ListQuery,
        read: CacheRead,
        decode_all: bool,
    ) -> Result<Option<CachedPage>, ApiError> {
        let Some(cacher) = &self.cache else {
            return Ok(None);
        };
        let cache = cacher.cache(&key::prefix(res, None));
        let fresh = match read {
            CacheRead::Consistent => cache.wait_fresh().await.map_err(store_error)?,
            CacheRead::NotOlderThan(rev) => cache.wait_for(rev).await,
        };
        if !fresh {
            return Ok(None);
        }
        // Objects whose selector attributes are known and fail the filter
        // are left out under the cache's lock, before their pointers are
        // copied; the loop below decides every other one, as before.
        let skip = |entry: &super::cache::index::Entry| {
            !q.filter.is_empty()
                && !decode_all
                && entry
                    .attrs_known()
                    .flatten()
                    .and_then(|a| q.filter.matches_attrs(a))
                    == Some(false)
        };
        // Without a filter every entry is kept: a page needs its items and
        // one more (to know that keys follow), not the whole collection.
        let max = if q.filter.is_empty() && q.limit > 0 {
            q.limit.saturating_add(1)
        } else {
            usize::MAX
        };
        let Some(snapshot) = cache.snapshot_where(prefix, None, skip, max) else {
            return Ok(None);
        };
        let mut entries = Vec::new();
        let mut more = false;
        let super::cache::Snapshot {
            items,
            revision,
            more: tail,
        } = snapshot;
        for entry in items {
            if q.limit > 0 && entries.len() >= q.limit {
                more = true;
                break;
            }
            if q.filter.is_empty() && !decode_all {
                entries.push((entry, None));
                continue;
            }
            if !decode_all {
                // Selectors read the attributes parsed once per version of
                // the object, not the decoded object.
                let attrs =
                    entry.attrs(|| Registry::decode(&entry.kv).ok().map(|o| Attrs::of(res, &o)));
                if let Some(pass) = attrs.and_then(|a| q.filter.matches_attrs(a)) {
                    if pass {
                        entries.push((entry, None));
                    }
                    continue;
                }
            }
            let obj = Registry::decode(&entry.kv)?;
            if q.filter.matches(res, &obj) {
                entries.push((entry, Some(obj)));
            }
        }
        // A page filled by the snapshot's last item continues when any key
        // follows it, kept or skipped, as upstream's (its next page may be
        // empty).
        if !more && q.limit > 0 && entries.len() >= q.limit {
            more = tail;
        }
        let continue_token = match (more, entries.last()) {
            (true, Some((e, _))) => Some(encode_continue(
                revision,
                e.kv.key.strip_prefix(prefix).unwrap_or(&e.kv.key),
            )),
            _ => None,
        };
        Ok(Some(CachedPage {
            entries,
            revision,
            continue_token,
        }))
    }
}

/// Upstream's `ListOptions` checks of `resourceVersionMatch` (422).
fn validate_match(q: &ListQuery) -> Result<(), ApiError> {
    let Some(m) = q
        .resource_version_match
        .as_deref()
        .filter(|m| !m.is_empty())
    else {
        return Ok(());
    };
    let rv = q.resource_version.as_deref().unwrap_or("");
    let why = if q.continue_token.as_deref().is_some_and(|c| !c.is_empty()) {
        Some("resourceVersionMatch is forbidden when continue is provided".to_string())
    } else if rv.is_empty() {
        Some("resourceVersionMatch is forbidden unless resourceVersion is provided".to_string())
    } else if m == "Exact" && rv == "0" {
        Some("resourceVersionMatch \"exact\" is forbidden for resourceVersion \"0\"".to_string())
    } else {
        None
    };
    match why {
        Some(why) => Err(ApiError::invalid(
            "meta.k8s.io",
            "ListOptions",
            "",
            vec![crate::status::Cause::forbidden("resourceVersionMatch", why)],
        )),
        None => Ok(()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn continue_tokens_round_trip_and_reject_garbage() {
        let t = encode_continue(42, "default/web-1");
        assert_eq!(
            decode_continue(&t).unwrap(),
            (42, "default/web-1".to_string())
        );
        assert!(decode_continue("not base64!").is_err());
        let evil = base64::engine::general_purpose::URL_SAFE.encode(r#"{"rv":1,"start":"../x"}"#);
        assert!(decode_continue(&evil).is_err());
    }
}
