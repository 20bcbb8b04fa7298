//! `skein join` and `skein unjoin`.
//!
//! Join: check the name and labels, read the member's kubeconfig and reduce
//! it to one self-contained context ([`member_kubeconfig`]), make sure the
//! federation has no Cluster of that name, check that the member answers
//! those credentials ([`member::check`]), then create the Secret
//! (`skein-system/cluster-<NAME>-kubeconfig`, key `kubeconfig`, label
//! `federation.skein.io/cluster=<NAME>`) and the Cluster, and wait until the
//! federation's Cluster controllers report it Ready, printing progress.
//! Nothing is created when a check fails; a Secret is deleted again when the
//! Cluster cannot be created. A join that times out leaves the Cluster (the
//! error says how to remove it).
//!
//! Unjoin: delete the Cluster, and the Secret its spec names when that
//! Secret carries the cluster label (a Secret the user made is kept).
//!
//! Failures print one line, `error: <why>`, on stderr and exit 1.

use std::time::{Duration, Instant};

use base64::Engine;
use serde_json::{Value, json};

use super::federation::{Failure, Federation};
use super::{labels, member, member_kubeconfig, report};
use crate::config::{JoinArgs, UnjoinArgs};
use skein_apiserver::member_client::credentials;

/// The namespace of the Secrets holding members' kubeconfigs.
pub const SECRET_NAMESPACE: &str = "skein-system";
/// The label that ties a Secret to the Cluster it was made for.
pub const CLUSTER_LABEL: &str = "federation.skein.io/cluster";
/// The Secret key holding the kubeconfig.
pub const SECRET_KEY: &str = "kubeconfig";

/// How often the Cluster is read while waiting for it.
const POLL: Duration = Duration::from_millis(500);
/// A progress line is repeated at least this often while nothing changes.
const REPEAT: Duration = Duration::from_secs(10);

/// `skein join`.
///
/// # Errors
///
/// Never returns one: a failure prints `error: <why>` and exits 1.
pub async fn run(args: JoinArgs) -> anyhow::Result<()> {
    exit_on_error(join(&args).await)
}

/// `skein unjoin`.
///
/// # Errors
///
/// Never returns one: a failure prints `error: <why>` and exits 1.
pub async fn unjoin(args: UnjoinArgs) -> anyhow::Result<()> {
    exit_on_error(remove(&args).await)
}

fn exit_on_error(result: Result<(), String>) -> anyhow::Result<()> {
    if let Err(why) = result {
        eprintln!("error: {}", report::one_line(&why));
        std::process::exit(1);
    }
    Ok(())
}

/// The Cluster's API path.
pub fn cluster_path(name: &str) -> String {
    format!("/apis/federation.skein.io/v1alpha1/clusters/{name}")
}

/// The Secret `skein join` stores `name`'s kubeconfig in.
pub fn secret_name(name: &str) -> String {
    format!("cluster-{name}-kubeconfig")
}

fn secret_path(namespace: &str, name: &str) -> String {
    format!("/api/v1/namespaces/{namespace}/secrets/{name}")
}

/// The Secret object for `name`'s kubeconfig `text`.
pub fn secret(name: &str, text: &str) -> Value {
    json!({
        "apiVersion": "v1",
        "kind": "Secret",
        "metadata": {
            "name": secret_name(name),
            "namespace": SECRET_NAMESPACE,
            "labels": {CLUSTER_LABEL: name},
        },
        "type": "Opaque",
        "data": {SECRET_KEY: base64::engine::general_purpose::STANDARD.encode(text)},
    })
}

/// The Cluster object for `name` with `labels`.
pub fn cluster(name: &str, labels: &std::collections::BTreeMap<String, String>) -> Value {
    let mut metadata = json!({"name": name});
    if !labels.is_empty() {
        metadata["labels"] = json!(labels);
    }
    json!({
        "apiVersion": "federation.skein.io/v1alpha1",
        "kind": "Cluster",
        "metadata": metadata,
        "spec": {"kubeconfigSecretRef": {
            "namespace": SECRET_NAMESPACE,
            "name": secret_name(name),
            "key": SECRET_KEY,
        }},
    })
}

async fn join(args: &JoinArgs) -> Result<(), String> {
    let name = args.name.as_str();
    let problems = skein_admission::names::dns1123_label(name);
    if !problems.is_empty() {
        return Err(format!(
            "invalid cluster name {name:?}: {}",
            problems.join("; ")
        ));
    }
    let labels = labels::parse(&args.labels)?;
    let kubeconfig = read_member_kubeconfig(args)?;
    let server = member_kubeconfig::server(&kubeconfig).to_owned();
    let text = serde_json::to_string_pretty(&kubeconfig)
        .map_err(|e| format!("cannot encode the member's kubeconfig: {e}"))?;
    credentials::parse(&text, None)
        .map_err(|e| format!("the member's kubeconfig cannot be stored: {e}"))?;

    let fed = Federation::connect(args.federation_kubeconfig.as_deref(), &args.data_dir).await?;
    if fed
        .get(&cluster_path(name))
        .await
        .map_err(fed_error)?
        .is_some()
    {
        return Err(format!("cluster {name:?} already exists"));
    }
    let version = member::check(name, &text, &server).await?;
    println!("member {name:?} at {server} answers (version {version})");

    ensure_namespace(&fed).await?;
    let secret_written = write_secret(&fed, name, &text).await?;
    if let Err(f) = fed
        .create(
            "/apis/federation.skein.io/v1alpha1/clusters",
            &cluster(name, &labels),
        )
        .await
    {
        if secret_written {
            let path = secret_path(SECRET_NAMESPACE, &secret_name(name));
            if let Err(e) = fed.delete(&path).await {
                eprintln!(
                    "warning: could not delete secret {SECRET_NAMESPACE}/{}: {e}",
                    secret_name(name)
                );
            }
        }
        return Err(if f.code == Some(409) {
            format!("cluster {name:?} already exists")
        } else {
            format!("cannot create cluster {name:?}: {f}")
        });
    }
    println!(
        "cluster {name:?} created; waiting up to {}s for it to become Ready",
        args.timeout.as_secs()
    );
    wait_ready(&fed, name, args.timeout).await
}

/// The member's kubeconfig, read and reduced to one self-contained context.
fn read_member_kubeconfig(args: &JoinArgs) -> Result<Value, String> {
    let path = &args.kubeconfig;
    let parsed = kube::config::Kubeconfig::read_from(path).map_err(|e| {
        format!(
            "cannot read the member's kubeconfig {}: {}",
            path.display(),
            super::federation::error_chain(&e)
        )
    })?;
    let value = serde_json::to_value(&parsed).map_err(|e| {
        format!(
            "cannot read the member's kubeconfig {}: {e}",
            path.display()
        )
    })?;
    let mut read = |p: &str| std::fs::read(p).map_err(|e| e.to_string());
    member_kubeconfig::flatten_minify(&value, args.context.as_deref(), &mut read)
        .map_err(|e| format!("the member's kubeconfig {}: {e}", path.display()))
}

fn fed_error(f: Failure) -> String {
    f.message
}

async fn ensure_namespace(fed: &Federation) -> Result<(), String> {
    let path = format!("/api/v1/namespaces/{SECRET_NAMESPACE}");
    if fed.get(&path).await.map_err(fed_error)?.is_some() {
        return Ok(());
    }
    let ns =
        json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": SECRET_NAMESPACE}});
    match fed.create("/api/v1/namespaces", &ns).await {
        Ok(_) => Ok(()),
        Err(f) if f.code == Some(409) => Ok(()),
        Err(f) => Err(format!("cannot create namespace {SECRET_NAMESPACE}: {f}")),
    }
}

/// Creates the Secret; a Secret of that name already labelled for this
/// cluster (left by an earlier join whose Cluster is gone) is replaced.
/// Returns whether it was written.
async fn write_secret(fed: &Federation, name: &str, text: &str) -> Result<bool, String> {
    let body = secret(name, text);
    let collection = format!("/api/v1/namespaces/{SECRET_NAMESPACE}/secrets");
    let failure = match fed.create(&collection, &body).await {
        Ok(_) => return Ok(true),
        Err(f) => f,
    };
    let path = secret_path(SECRET_NAMESPACE, &secret_name(name));
    let what = format!("secret {SECRET_NAMESPACE}/{}", secret_name(name));
    if failure.code != Some(409) {
        return Err(format!("cannot create {what}: {failure}"));
    }
    let existing = fed
        .get(&path)
        .await
        .map_err(|f| format!("cannot read {what}: {f}"))?
        .unwrap_or(Value::Null);
    if existing
        .pointer("/metadata/labels")
        .and_then(|l| l.get(CLUSTER_LABEL))
        .and_then(Value::as_str)
        != Some(name)
    {
        return Err(format!(
            "{what} already exists and is not labelled {CLUSTER_LABEL}={name}; delete it or join under another name"
        ));
    }
    let mut body = body;
    body["metadata"]["resourceVersion"] = existing
        .pointer("/metadata/resourceVersion")
        .cloned()
        .unwrap_or(Value::Null);
    fed.replace(&path, &body)
        .await
        .map_err(|f| format!("cannot replace {what}: {f}"))?;
    Ok(true)
}

/// Polls the Cluster until it is Ready and has reported its inventory,
/// printing progress; on timeout, the last condition. A Cluster that is
/// Ready at the deadline without an inventory is printed as it is.
async fn wait_ready(fed: &Federation, name: &str, timeout: Duration) -> Result<(), String> {
    let deadline = Instant::now() + timeout;
    let mut last: Option<Value> = None;
    let mut printed: Option<(String, Instant)> = None;
    loop {
        let final_poll = Instant::now() + POLL > deadline;
        let error = match fed.get(&cluster_path(name)).await {
            Ok(Some(c)) => {
                if report::is_ready(&c) && (report::has_inventory(&c) || final_poll) {
                    println!("{}", report::summary(name, &c));
                    return Ok(());
                }
                let line = report::progress(name, &c);
                let due = printed
                    .as_ref()
                    .is_none_or(|(p, at)| *p != line || at.elapsed() >= REPEAT);
                if due {
                    println!("{line}");
                    printed = Some((line, Instant::now()));
                }
                last = Some(c);
                None
            }
            Ok(None) => return Err(format!("cluster {name:?} was deleted while waiting for it")),
            // Keep waiting through a federation hiccup; the deadline
            // still holds, and the timeout says what failed.
            Err(f) => Some(f.message),
        };
        if final_poll {
            let mut why = report::timed_out(name, timeout, last.as_ref());
            if let Some(e) = error {
                why.push_str(&format!(" (the last read of it failed: {e})"));
            }
            return Err(why);
        }
        tokio::time::sleep(POLL).await;
    }
}

async fn remove(args: &UnjoinArgs) -> Result<(), String> {
    let name = args.name.as_str();
    let fed = Federation::connect(args.federation_kubeconfig.as_deref(), &args.data_dir).await?;
    let Some(cluster) = fed.get(&cluster_path(name)).await.map_err(fed_error)? else {
        return Err(format!("cluster {name:?} not found"));
    };
    let options = serde_json::json!({
        "apiVersion": "v1", "kind": "DeleteOptions",
        "propagationPolicy": if args.orphan { "Orphan" } else { "Background" },
    });
    if !fed
        .delete_with(&cluster_path(name), Some(&options))
        .await
        .map_err(|f| format!("cannot delete cluster {name:?}: {f}"))?
    {
        return Err(format!("cluster {name:?} not found"));
    }
    // The federation removes (or orphans) its copies on the member while
    // the Cluster waits on its cleanup finalizer; its Secret is still
    // needed until then.
    println!(
        "cluster {name:?} deleting: {} the federation's copies on it",
        if args.orphan { "orphaning" } else { "removing" }
    );
    let deadline = std::time::Instant::now() + args.timeout;
    loop {
        match fed.get(&cluster_path(name)).await.map_err(fed_error)? {
            None => break,
            Some(_) if std::time::Instant::now() >= deadline => {
                return Err(format!(
                    "cluster {name:?} is still being removed after {}s: see `kubectl get placements -A`",
                    args.timeout.as_secs()
                ));
            }
            Some(_) => tokio::time::sleep(std::time::Duration::from_millis(250)).await,
        }
    }
    println!("cluster {name:?} deleted");
    let reference = cluster.pointer("/spec/kubeconfigSecretRef");
    let field = |k: &str| {
        reference
            .and_then(|r| r.get(k))
            .and_then(Value::as_str)
            .unwrap_or("")
            .to_owned()
    };
    let (namespace, secret) = (field("namespace"), field("name"));
    if namespace.is_empty() || secret.is_empty() {
        return Ok(());
    }
    let path = secret_path(&namespace, &secret);
    let what = format!("secret {namespace}/{secret}");
    let Some(existing) = fed
        .get(&path)
        .await
        .map_err(|f| format!("cannot read {what}: {f}"))?
    else {
        return Ok(());
    };
    let owned = existing
        .pointer("/metadata/labels")
        .and_then(|l| l.get(CLUSTER_LABEL))
        .and_then(Value::as_str)
        == Some(name);
    if !owned {
        println!("{what} kept: it is not labelled {CLUSTER_LABEL}={name}");
        return Ok(());
    }
    if fed
        .delete(&path)
        .await
        .map_err(|f| format!("cannot delete {what}: {f}"))?
    {
        println!("{what} deleted");
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn objects() {
        let labels = [("region".to_owned(), "eu".to_owned())]
            .into_iter()
            .collect();
        let c = cluster("eu-1", &labels);
        assert_eq!(
            c["metadata"],
            json!({"name": "eu-1", "labels": {"region": "eu"}})
        );
        assert_eq!(
            c["spec"],
            json!({"kubeconfigSecretRef": {"namespace": "skein-system", "name": "cluster-eu-1-kubeconfig", "key": "kubeconfig"}})
        );
        assert_eq!(
            cluster("x", &Default::default())["metadata"],
            json!({"name": "x"})
        );
        let s = secret("eu-1", "text");
        assert_eq!(s["metadata"]["labels"][CLUSTER_LABEL], "eu-1");
        let stored = credentials::from_secret(&s, SECRET_KEY).ok();
        assert_eq!(stored.as_deref(), Some("text"));
    }
}
