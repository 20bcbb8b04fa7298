//! `skein kubeconfig`: prints a kubeconfig for the federation.
//!
//! - `--aggregated --host-kubeconfig F`: the federated context of
//!   aggregated mode for a host user (DESIGN §1): F's cluster with its
//!   server moved under the prefix path
//!   (`/apis/federation.skein.io/v1alpha1/federations/default/proxy`), F's
//!   user and credentials unchanged, in one context `skein-federation`. The
//!   host authenticates the user and its aggregator forwards the identity.
//! - Otherwise: the admin kubeconfig of `--data-dir` as `skein serve`
//!   wrote it.

use anyhow::{Context, anyhow};
use kube::config::{Kubeconfig, NamedCluster, NamedContext};

use crate::config::KubeconfigArgs;
use skein_apiserver::http::routes::AGGREGATED_PREFIX;

/// The context (and cluster) name of the printed federated context.
pub const CONTEXT: &str = "skein-federation";

/// Runs `skein kubeconfig`.
pub async fn run(args: KubeconfigArgs) -> anyhow::Result<()> {
    let text = if args.aggregated {
        let host = args
            .host_kubeconfig
            .as_deref()
            .ok_or_else(|| anyhow!("--aggregated needs --host-kubeconfig"))?;
        let config =
            Kubeconfig::read_from(host).with_context(|| format!("reading {}", host.display()))?;
        let federated = aggregated(config, args.context.as_deref())?;
        serde_saphyr::to_string(&federated).context("writing the kubeconfig")?
    } else {
        let path = args.data_dir.join("admin.kubeconfig");
        std::fs::read_to_string(&path).with_context(|| format!("reading {}", path.display()))?
    };
    print!("{text}");
    Ok(())
}

/// The federated context for `host`'s `context` (its current one when
/// `None`).
pub fn aggregated(host: Kubeconfig, context: Option<&str>) -> anyhow::Result<Kubeconfig> {
    let name = context
        .map(str::to_owned)
        .or_else(|| host.current_context.clone())
        .ok_or_else(|| anyhow!("the host kubeconfig has no current context; pass --context"))?;
    let ctx = host
        .contexts
        .iter()
        .find(|c| c.name == name)
        .and_then(|c| c.context.clone())
        .ok_or_else(|| anyhow!("context {name:?} is not in the host kubeconfig"))?;
    let mut cluster = host
        .clusters
        .iter()
        .find(|c| c.name == ctx.cluster)
        .and_then(|c| c.cluster.clone())
        .ok_or_else(|| anyhow!("cluster {:?} is not in the host kubeconfig", ctx.cluster))?;
    let server = cluster
        .server
        .as_deref()
        .ok_or_else(|| anyhow!("cluster {:?} has no server", ctx.cluster))?;
    cluster.server = Some(format!(
        "{}{AGGREGATED_PREFIX}",
        server.trim_end_matches('/')
    ));
    let user = ctx.user.clone().unwrap_or_default();
    let auth_infos = host
        .auth_infos
        .into_iter()
        .filter(|a| a.name == user)
        .collect();
    let mut context = ctx;
    context.cluster = CONTEXT.to_owned();
    Ok(Kubeconfig {
        clusters: vec![NamedCluster {
            name: CONTEXT.to_owned(),
            cluster: Some(cluster),
            ..NamedCluster::default()
        }],
        auth_infos,
        contexts: vec![NamedContext {
            name: CONTEXT.to_owned(),
            context: Some(context),
            ..NamedContext::default()
        }],
        current_context: Some(CONTEXT.to_owned()),
        api_version: Some("v1".to_owned()),
        kind: Some("Config".to_owned()),
        ..Kubeconfig::default()
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    const HOST: &str = r#"
apiVersion: v1
kind: Config
clusters:
- name: host
  cluster: {server: "https://10.0.0.1:6443/", certificate-authority-data: Q0E=}
- name: other
  cluster: {server: "https://10.0.0.2"}
users:
- name: carol
  user: {token: carol-token}
- name: dave
  user: {token: dave-token}
contexts:
- name: carol@host
  context: {cluster: host, user: carol, namespace: team}
- name: dave@other
  context: {cluster: other, user: dave}
current-context: carol@host
"#;

    #[test]
    fn the_federated_context_is_the_host_context_under_the_prefix() {
        let host = Kubeconfig::from_yaml(HOST).expect("valid");
        let fed = aggregated(host, None).expect("federated");
        assert_eq!(fed.current_context.as_deref(), Some(CONTEXT));
        let cluster = fed.clusters[0].cluster.as_ref().expect("cluster");
        assert_eq!(
            cluster.server.as_deref(),
            Some(
                "https://10.0.0.1:6443/apis/federation.skein.io/v1alpha1/federations/default/proxy"
            )
        );
        assert_eq!(cluster.certificate_authority_data.as_deref(), Some("Q0E="));
        assert_eq!(fed.auth_infos.len(), 1);
        assert_eq!(fed.auth_infos[0].name, "carol");
        let ctx = fed.contexts[0].context.as_ref().expect("context");
        assert_eq!(ctx.user.as_deref(), Some("carol"));
        assert_eq!(ctx.namespace.as_deref(), Some("team"));
    }

    #[test]
    fn another_context_and_unknown_ones() {
        let host = Kubeconfig::from_yaml(HOST).expect("valid");
        let fed = aggregated(host.clone(), Some("dave@other")).expect("federated");
        assert_eq!(fed.auth_infos[0].name, "dave");
        let e = aggregated(host, Some("nope")).expect_err("unknown");
        assert_eq!(
            e.to_string(),
            "context \"nope\" is not in the host kubeconfig"
        );
    }
}
