//! `skein storage rewrite`: re-encrypts every object of the resources an
//! `EncryptionConfiguration` names with its current first key, the way
//! upstream documents key rotation (`kubectl get secrets -A -o json |
//! kubectl replace -f -`): each object is read and written back unchanged
//! through the API. The server writes a no-op update whose stored bytes
//! are stale (sealed by another key, or plaintext) instead of skipping it,
//! so every value ends up sealed by the first key. Safe while clients
//! write: a conflict means someone else just wrote the object, with the
//! current key.

use serde_json::Value;

use super::federation::Federation;
use super::report;
use crate::config::{RewriteArgs, StorageCommand};
use skein_apiserver::encryption::config;

/// Runs a `skein storage` subcommand; a failure prints `error: <why>` and
/// exits 1.
///
/// # Errors
///
/// Never returns one.
pub async fn run(cmd: StorageCommand) -> anyhow::Result<()> {
    let StorageCommand::Rewrite(args) = cmd;
    if let Err(why) = rewrite(&args).await {
        eprintln!("error: {}", report::one_line(&why));
        std::process::exit(1);
    }
    Ok(())
}

/// One served resource: its collection path (all namespaces) and whether
/// it is namespaced.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Served {
    group: String,
    /// `/api/v1` or `/apis/<group>/<version>`.
    base: String,
    plural: String,
    namespaced: bool,
}

async fn rewrite(args: &RewriteArgs) -> Result<(), String> {
    let rules = config::load(&args.encryption_provider_config)?;
    let patterns: Vec<(String, String)> = rules
        .iter()
        .flat_map(|r| r.resources.iter().cloned())
        .collect();
    let api = Federation::connect(args.kubeconfig.as_deref(), &args.data_dir).await?;
    let served = discover(&api).await?;
    let mut total = 0usize;
    for res in served.iter().filter(|s| matches(&patterns, s)) {
        let n = rewrite_resource(&api, res).await?;
        let name = if res.group.is_empty() {
            res.plural.clone()
        } else {
            format!("{}.{}", res.plural, res.group)
        };
        println!("{name}: {n} rewritten");
        total += n;
    }
    println!("{total} objects rewritten");
    Ok(())
}

fn matches(patterns: &[(String, String)], s: &Served) -> bool {
    patterns
        .iter()
        .any(|(g, r)| (g == "*" && r == "*") || (g == &s.group && (r == "*" || r == &s.plural)))
}

/// Every listable, updatable resource of each group's preferred version.
async fn discover(api: &Federation) -> Result<Vec<Served>, String> {
    let fail = |f: super::federation::Failure| format!("discovery: {f}");
    let mut bases = vec![(String::new(), "/api/v1".to_string())];
    let groups = api.get("/apis").await.map_err(fail)?.unwrap_or_default();
    for g in groups["groups"].as_array().into_iter().flatten() {
        if let (Some(name), Some(gv)) = (
            g["name"].as_str(),
            g["preferredVersion"]["groupVersion"].as_str(),
        ) {
            bases.push((name.to_string(), format!("/apis/{gv}")));
        }
    }
    let mut out = Vec::new();
    for (group, base) in bases {
        let Some(list) = api.get(&base).await.map_err(fail)? else {
            continue;
        };
        for r in list["resources"].as_array().into_iter().flatten() {
            let name = r["name"].as_str().unwrap_or_default();
            let verbs: Vec<&str> = r["verbs"]
                .as_array()
                .into_iter()
                .flatten()
                .filter_map(Value::as_str)
                .collect();
            if name.is_empty()
                || name.contains('/')
                || !verbs.contains(&"list")
                || !verbs.contains(&"update")
            {
                continue;
            }
            out.push(Served {
                group: group.clone(),
                base: base.clone(),
                plural: name.to_string(),
                namespaced: r["namespaced"].as_bool().unwrap_or(false),
            });
        }
    }
    Ok(out)
}

/// Lists `res` in pages and writes each object back unchanged.
async fn rewrite_resource(api: &Federation, res: &Served) -> Result<usize, String> {
    let mut count = 0;
    let mut cont = String::new();
    loop {
        let mut path = format!("{}/{}?limit=500", res.base, res.plural);
        if !cont.is_empty() {
            path.push_str("&continue=");
            path.push_str(&form_urlencoded::byte_serialize(cont.as_bytes()).collect::<String>());
        }
        let page = api
            .get(&path)
            .await
            .map_err(|f| format!("list {}: {f}", res.plural))?
            .unwrap_or_default();
        for item in page["items"].as_array().into_iter().flatten() {
            let mut obj = item.clone();
            if obj.get("apiVersion").is_none() {
                let api_version = res
                    .base
                    .trim_start_matches("/apis/")
                    .trim_start_matches("/api/");
                obj["apiVersion"] = Value::from(api_version);
            }
            let name = obj["metadata"]["name"]
                .as_str()
                .unwrap_or_default()
                .to_string();
            let ns = obj["metadata"]["namespace"]
                .as_str()
                .unwrap_or_default()
                .to_string();
            let path = if res.namespaced {
                format!("{}/namespaces/{ns}/{}/{name}", res.base, res.plural)
            } else {
                format!("{}/{}/{name}", res.base, res.plural)
            };
            match api.replace(&path, &obj).await {
                Ok(_) => count += 1,
                // Deleted or written by someone else meanwhile: either way
                // no longer stored with an old key.
                Err(f) if matches!(f.code, Some(404 | 409)) => {}
                Err(f) => return Err(format!("rewrite {path}: {f}")),
            }
        }
        cont = page["metadata"]["continue"]
            .as_str()
            .unwrap_or_default()
            .to_string();
        if cont.is_empty() {
            return Ok(count);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn patterns_match_as_upstream() {
        let s = |g: &str, r: &str| Served {
            group: g.into(),
            base: String::new(),
            plural: r.into(),
            namespaced: true,
        };
        let p = vec![
            ("".to_string(), "secrets".to_string()),
            ("apps".into(), "*".into()),
        ];
        assert!(matches(&p, &s("", "secrets")));
        assert!(!matches(&p, &s("", "configmaps")));
        assert!(matches(&p, &s("apps", "deployments")));
        assert!(matches(&[("*".into(), "*".into())], &s("batch", "jobs")));
    }
}
