//! The member-cluster client: a `kube` client built from a stored
//! kubeconfig ([`credentials`]), the client a real cluster gets. The
//! cluster proxy, the aggregator and the federation all reach members
//! through it.

pub mod credentials;

/// An error and its sources, joined with ": ", repeats skipped;
/// kube's own variant prefixes (`ServiceError: `) are dropped.
pub fn chain(err: &dyn std::error::Error) -> String {
    let top = err.to_string();
    let top = ["ServiceError: ", "HyperError: "]
        .iter()
        .find_map(|p| top.strip_prefix(p))
        .map_or_else(|| top.clone(), str::to_owned);
    let mut parts: Vec<String> = vec![top];
    let mut source = err.source();
    while let Some(s) = source {
        let text = s.to_string();
        if parts.last().is_none_or(|p| !p.contains(&text)) {
            parts.push(text);
        }
        source = s.source();
    }
    parts.join(": ")
}
