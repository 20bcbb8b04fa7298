//! Reading a server's `/metrics` text: the request counts the tests and
//! benchmarks assert on (how many writes a member received, and of what).

use std::collections::BTreeMap;

/// The verbs of `apiserver_request_total` that write.
pub const WRITE_VERBS: &[&str] = &[
    "POST",
    "PUT",
    "PATCH",
    "DELETE",
    "APPLY",
    "DELETECOLLECTION",
];

/// Write requests by `(verb, resource)` (`resource` with its `/subresource`
/// when it has one), summed over codes and groups, from a Prometheus text
/// exposition. Lines that are not `apiserver_request_total` samples, or
/// that do not parse, count for nothing.
pub fn writes_by_resource(metrics: &str) -> BTreeMap<(String, String), u64> {
    let mut out = BTreeMap::new();
    for line in metrics.lines() {
        let Some(rest) = line.strip_prefix("apiserver_request_total{") else {
            continue;
        };
        let Some((labels, value)) = rest.rsplit_once("} ") else {
            continue;
        };
        let Ok(value) = value.trim().parse::<f64>() else {
            continue;
        };
        let label = |name: &str| {
            labels.split(',').find_map(|kv| {
                let (k, v) = kv.split_once('=')?;
                (k == name).then(|| v.trim_matches('"').to_owned())
            })
        };
        let Some(verb) = label("verb").filter(|v| WRITE_VERBS.contains(&v.as_str())) else {
            continue;
        };
        let mut resource = label("resource").unwrap_or_default();
        if let Some(sub) = label("subresource").filter(|s| !s.is_empty()) {
            resource = format!("{resource}/{sub}");
        }
        *out.entry((verb, resource)).or_insert(0) += value as u64;
    }
    out
}

/// All write requests of a `/metrics` text (see [`writes_by_resource`]).
pub fn writes(metrics: &str) -> u64 {
    writes_by_resource(metrics).values().sum()
}

/// `after - before` per key, leaving out keys that did not grow.
pub fn growth(
    before: &BTreeMap<(String, String), u64>,
    after: &BTreeMap<(String, String), u64>,
) -> BTreeMap<(String, String), u64> {
    after
        .iter()
        .filter_map(|(k, v)| {
            let d = v.saturating_sub(before.get(k).copied().unwrap_or(0));
            (d > 0).then(|| (k.clone(), d))
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_writes_by_verb_and_resource() {
        let text = "# HELP apiserver_request_total x\n\
            apiserver_request_total{code=\"200\",component=\"apiserver\",dry_run=\"\",group=\"apps\",resource=\"deployments\",scope=\"resource\",subresource=\"\",verb=\"APPLY\",version=\"v1\"} 7\n\
            apiserver_request_total{code=\"409\",component=\"apiserver\",dry_run=\"\",group=\"apps\",resource=\"deployments\",scope=\"resource\",subresource=\"\",verb=\"APPLY\",version=\"v1\"} 2\n\
            apiserver_request_total{code=\"200\",group=\"apps\",resource=\"deployments\",subresource=\"status\",verb=\"PUT\"} 3\n\
            apiserver_request_total{code=\"200\",group=\"\",resource=\"configmaps\",verb=\"GET\"} 100\n\
            apiserver_request_total{code=\"200\",group=\"\",resource=\"configmaps\",verb=\"DELETE\"} 1.0\n\
            apiserver_request_duration_seconds_count{resource=\"pods\",verb=\"POST\"} 50\n";
        let by = writes_by_resource(text);
        let key = |v: &str, r: &str| (v.to_owned(), r.to_owned());
        assert_eq!(by.get(&key("APPLY", "deployments")), Some(&9));
        assert_eq!(by.get(&key("PUT", "deployments/status")), Some(&3));
        assert_eq!(by.get(&key("DELETE", "configmaps")), Some(&1));
        assert_eq!(by.len(), 3);
        assert_eq!(writes(text), 13);
        let mut later = by.clone();
        later.insert(key("DELETE", "configmaps"), 4);
        assert_eq!(
            growth(&by, &later),
            BTreeMap::from([(key("DELETE", "configmaps"), 3)])
        );
    }
}
