//! `skein serve`: wires PKI, store, kubeconfig and HTTPS together, and
//! shuts down cleanly on SIGTERM or SIGINT.

use std::io::IsTerminal;
use std::net::SocketAddr;
use std::sync::Arc;

use tokio::net::TcpListener;

use skein_apiserver::config::Role;

use crate::config::Config;
use skein_apiserver::http::{self, AppState};
use skein_apiserver::pki::{self, Pki};
use skein_apiserver::{Error, kubeconfig, store};

/// Installs the tracing subscriber: `RUST_LOG` filter (default `info`),
/// written to stderr so that stdout carries only the serving line, through
/// the buffered background writer of [`skein_apiserver::log_writer`].
pub fn init_logging() {
    // The kube client logs every failed member connection at ERROR; the
    // member controllers report those themselves (conditions, Placements),
    // so it is quiet unless RUST_LOG names it.
    let spec = std::env::var("RUST_LOG").unwrap_or_else(|_| "info".into());
    let spec = if spec.contains("kube_client") {
        spec
    } else {
        format!("{spec},kube_client=off")
    };
    let filter = tracing_subscriber::EnvFilter::try_new(&spec)
        .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("info,kube_client=off"));
    tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(skein_apiserver::log_writer::stderr())
        .with_ansi(std::io::stderr().is_terminal())
        .init();
}

/// The line printed on stdout once the server accepts connections, followed
/// by the bound address (scripts and the test harness read it).
pub const SERVING_LINE: &str = "Serving securely on ";

/// Runs the server until SIGTERM or SIGINT, then drains and closes the
/// store. Prints [`SERVING_LINE`] and the address once it accepts
/// connections. Returns an error only if startup fails.
pub async fn run(config: Config) -> anyhow::Result<()> {
    let _flush_logs = skein_apiserver::log_writer::FlushOnDrop;
    serve(config, signals(), |local| println!("{SERVING_LINE}{local}")).await
}

/// Runs one server instance until `shutdown` completes (or the leader
/// Lease is lost), then drains and closes the store. `ready` gets the
/// bound address once the server accepts connections. Everything the
/// server holds belongs to this call: several can run in one process
/// (the test harness runs a federation and its members this way).
///
/// # Errors
///
/// Startup failures (flags, PKI, store, port), and a lost leader Lease.
pub async fn serve(
    config: Config,
    shutdown: impl std::future::Future<Output = ()> + Send + 'static,
    ready: impl FnOnce(SocketAddr),
) -> anyhow::Result<()> {
    let Config {
        server: config,
        sim,
        members,
    } = config;
    tracing::info!(
        role = ?config.role,
        simulate_workloads = config.simulate_workloads,
        data_dir = %config.data_dir.display(),
        "starting skein"
    );
    if config.simulate_workloads && config.role != Role::Member {
        tracing::warn!("--simulate-workloads is meant for --role=member; simulating anyway");
    }
    let security = Security::load(&config).await?;
    let requested = SocketAddr::new(config.bind_address, config.secure_port);
    let listener = TcpListener::bind(requested)
        .await
        .map_err(|source| Error::Bind {
            addr: requested,
            source,
        })?;
    let local = listener.local_addr().map_err(|source| Error::Bind {
        addr: requested,
        source,
    })?;

    // Everything this server shares between its parts: its resource
    // table, metrics and shared informers.
    let metrics = Arc::new(skein_apiserver::metrics::Metrics::new());
    let instance = skein_apiserver::instance::Instance::with_metrics(metrics.clone());
    instance
        .flowcontrol()
        .set_enabled(config.enable_priority_and_fairness);
    instance
        .flowcontrol()
        .set_total(config.max_requests_inflight + config.max_mutating_requests_inflight);
    let store = store::open_store(&config, metrics.clone()).await?;
    let federation = match FederationRuntime::for_role(config.role) {
        Ok(f) => f,
        Err(e) => {
            store.close().await;
            return Err(e);
        }
    };
    let parts = Parts {
        config: &config,
        members: &members,
        sim: &sim,
        store: &store,
        instance: &instance,
        local,
        federation: federation.handle(),
    };
    let started = match start(&parts, security).await {
        Ok(started) => started,
        Err(e) => {
            federation.stop();
            store.close().await;
            return Err(e);
        }
    };
    tracing::info!(
        address = %local,
        kubeconfig = %config.kubeconfig_path().display(),
        "serving"
    );
    ready(local);

    let Started {
        state,
        app,
        tls,
        elector,
        lost,
    } = started;
    http::tls::serve(
        listener,
        tls,
        app,
        shutdown_signal(state, lost.clone(), shutdown),
    )
    .await;
    let lost = *lost.borrow();
    federation.stop();
    if let Some((elector, task)) = elector {
        // No renewal after this; then hand the Lease over at once.
        task.abort();
        if !lost {
            elector.release().await;
        }
    }
    store.close().await;
    if lost {
        return Err(anyhow::anyhow!(
            "lost the leader Lease; exiting so that the controllers stop (restart to rejoin as a candidate)"
        ));
    }
    tracing::info!("store closed; bye");
    Ok(())
}

/// What one server is made of once its store is open.
struct Parts<'a> {
    config: &'a skein_apiserver::config::Config,
    members: &'a skein_federation::config::MemberConfig,
    sim: &'a skein_simulator::config::SimConfig,
    store: &'a Arc<dyn skein_storage::Store>,
    instance: &'a Arc<skein_apiserver::instance::Instance>,
    /// The bound address.
    local: SocketAddr,
    /// Where the federation's controllers run ([`FederationRuntime`]).
    federation: Option<tokio::runtime::Handle>,
}

/// The federation's controllers' own runtime, on a control plane.
///
/// kube-controller-manager runs beside kube-apiserver in its own process,
/// so the kernel shares the CPUs between them. Skein's federation runs in
/// the server's process; on the server's runtime its syncers' tasks would
/// queue behind every API request in flight, and a flood of admitted
/// requests (API priority and fairness bounds how many run at once, not
/// how much CPU they take) would delay every copy. On threads of their
/// own, a syncer woken by a change is scheduled by the kernel beside the
/// request workers, as a separate controller manager would be. They call
/// the registry in-process as before; nothing else moves.
struct FederationRuntime(Option<tokio::runtime::Runtime>);

impl FederationRuntime {
    /// A runtime with one worker per CPU for a control plane; none for a
    /// member (it runs no federation).
    fn for_role(role: Role) -> anyhow::Result<FederationRuntime> {
        if role != Role::ControlPlane {
            return Ok(FederationRuntime(None));
        }
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .thread_name("skein-federation")
            .enable_all()
            .build()
            .map_err(|e| anyhow::anyhow!("starting the federation's runtime failed: {e}"))?;
        Ok(FederationRuntime(Some(runtime)))
    }

    fn handle(&self) -> Option<tokio::runtime::Handle> {
        self.0.as_ref().map(|r| r.handle().clone())
    }

    /// Stops its tasks (see [`Drop`]).
    fn stop(self) {
        drop(self);
    }
}

impl Drop for FederationRuntime {
    /// Stops its tasks without waiting for them: allowed in async code
    /// (dropping a `Runtime` there panics), so a `serve` future dropped
    /// before it returns (an in-process server a test abandons) ends its
    /// federation too.
    fn drop(&mut self) {
        if let Some(r) = self.0.take() {
            r.shutdown_background();
        }
    }
}

/// A started server, ready to serve.
struct Started {
    state: AppState,
    app: axum::Router,
    tls: http::tls::Tls,
    /// The leader elector and its task, with `--leader-elect`.
    elector: Option<(
        skein_apiserver::controllers::leadership::Elector,
        tokio::task::JoinHandle<()>,
    )>,
    /// Becomes true when the leader Lease is lost.
    lost: tokio::sync::watch::Receiver<bool>,
}

/// Everything read from flags and files before anything starts, so that a
/// bad file fails fast: authentication and TLS material, the audit
/// policy, delegated authorization.
struct Security {
    tokens: Option<http::authn::TokenAuthenticator>,
    pki: Pki,
    tls: http::tls::Tls,
    signer: skein_apiserver::csr_signer::ClientSigner,
    front_proxy: Option<Arc<http::requestheader::RequestHeader>>,
    delegated: Option<skein_apiserver::authz::delegated::Delegated>,
    auditor: Option<Arc<skein_apiserver::audit::Auditor>>,
}

impl Security {
    async fn load(config: &skein_apiserver::config::Config) -> anyhow::Result<Security> {
        let tokens = match &config.token_auth_file {
            Some(file) => Some(http::authn::TokenAuthenticator::load(file)?),
            None => None,
        };
        let tls_policy = http::tls_policy::TlsPolicy::from_flags(
            &config.protect.tls_min_version,
            &config.protect.tls_cipher_suites,
        )
        .map_err(Error::Config)?;
        let auditor = skein_apiserver::audit::Auditor::from_options(&config.protect.audit())
            .map_err(Error::Config)?;
        config.leader_election.validate().map_err(Error::Config)?;

        let pki = Pki::load_or_create(&config.pki_dir(), &pki::serving_names(config.bind_address))?;
        let signer = skein_apiserver::csr_signer::ClientSigner::new(
            &pki.ca.cert_pem,
            &pki.ca.key_pem,
            config.authn.cluster_signing_duration,
        )
        .map_err(|e| anyhow::anyhow!("the CSR signer: {e}"))?;
        let front_proxy = http::requestheader::RequestHeader::load(&config.front_proxy)
            .await?
            .map(Arc::new);
        let delegated = delegated(config, front_proxy.is_some()).await?;
        let tls = tls(config, &pki, &tls_policy, front_proxy.as_deref())?;
        Ok(Security {
            tokens,
            pki,
            tls,
            signer,
            front_proxy,
            delegated,
            auditor,
        })
    }
}

/// Delegated authorization of host requests: with front-proxy
/// authentication on, the in-cluster configuration is the default, as for
/// every aggregated API server.
async fn delegated(
    config: &skein_apiserver::config::Config,
    front_proxy: bool,
) -> anyhow::Result<Option<skein_apiserver::authz::delegated::Delegated>> {
    let delegated =
        skein_apiserver::authz::delegated::Delegated::from_config(&config.delegation, front_proxy)
            .await
            .map_err(|e| match &config.delegation.authorization_kubeconfig {
                Some(_) => Error::Config(format!("--authorization-kubeconfig: {e}")),
                None => Error::Config(format!("delegated authorization: {e}")),
            })?;
    match (&delegated, front_proxy) {
        (Some(d), _) => tracing::info!(
            host = d.server(),
            "host requests are authorized by the host's SubjectAccessReviews"
        ),
        (None, true) => tracing::warn!(
            "No authorization-kubeconfig provided, so SubjectAccessReview of authorization tokens won't work: host requests get Skein's own authorization"
        ),
        (None, false) => {}
    }
    Ok(delegated)
}

/// The serving TLS configuration. `--tls-cert-file`/`--tls-private-key-file`
/// replace the generated serving certificate (the generated CA still
/// verifies clients).
fn tls(
    config: &skein_apiserver::config::Config,
    pki: &Pki,
    policy: &http::tls_policy::TlsPolicy,
    front_proxy: Option<&http::requestheader::RequestHeader>,
) -> anyhow::Result<http::tls::Tls> {
    let mut serving = pki.clone();
    if let (Some(cert), Some(key)) = (
        &config.protect.tls_cert_file,
        &config.protect.tls_private_key_file,
    ) {
        let read = |p: &std::path::Path, flag: &str| {
            std::fs::read_to_string(p)
                .map_err(|e| Error::Config(format!("{flag} {}: {e}", p.display())))
        };
        serving.serving = pki::CertKey {
            cert_pem: read(cert, "--tls-cert-file")?,
            key_pem: read(key, "--tls-private-key-file")?,
        };
    }
    let tls = http::tls::server_tls(&serving, policy, front_proxy.map(|f| f.ca_pem.as_slice()))
        .map_err(|e| match &config.protect.tls_cert_file {
            Some(cert) => Error::Config(format!(
                "--tls-cert-file {} with --tls-private-key-file: {e} (the key must match the \
                 certificate)",
                cert.display()
            )),
            None => e,
        })?;
    Ok(tls)
}

/// Startup once the store is open: the admin kubeconfig, the registry and
/// its admission chain and authorizer, system objects and CRDs, the
/// controllers (at once or once elected), and the router. The caller
/// closes the store on an error.
async fn start(parts: &Parts<'_>, security: Security) -> anyhow::Result<Started> {
    let Parts {
        config,
        store,
        local,
        ..
    } = *parts;
    let Security {
        tokens,
        pki,
        tls,
        signer,
        front_proxy,
        delegated,
        auditor,
    } = security;
    let dial = SocketAddr::new(config.client_address(), local.port());
    kubeconfig::write_admin(&config.kubeconfig_path(), dial, &pki)?;
    let (state, authorizer, accounts) = registry(parts, delegated).await?;
    skein_apiserver::controllers::bootstrap::ensure(&state.registry)
        .await
        .map_err(|e| anyhow::anyhow!("creating the system namespaces failed: {e}"))?;
    skein_apiserver::controllers::crd::start(&state.registry, config.role == Role::ControlPlane)
        .await
        .map_err(|e| anyhow::anyhow!("installing the federation.skein.io CRDs failed: {e}"))?;
    skein_apiserver::controllers::spawn_shared(&state.registry);
    let (elector, lost) = controllers(parts, &state, &pki, accounts).await;
    skein_apiserver::store::objects::spawn(
        store.clone(),
        parts.instance.clone(),
        config.etcd_count_metric_poll_period,
    );
    if let Some(rbac) = &authorizer.1 {
        rbac.synced().await;
    }
    let auth = http::authn::setup::build(
        &config.authn,
        &config.pki_dir(),
        tokens,
        state.registry.clone(),
    )
    .map_err(|e| anyhow::anyhow!("authentication: {e}"))?;
    // Outside the router's authn layer, which looks them up per request.
    let mut app = http::app(state.clone())
        .layer(axum::Extension(Arc::new(authorizer.0)))
        .layer(axum::Extension(Arc::new(auth)))
        .layer(axum::Extension(Arc::new(signer)));
    // Skein as a host for aggregated API servers (kube-aggregator).
    let proxy_pki = skein_apiserver::pki::FrontProxyPki::load_or_create(&config.pki_dir())?;
    if let Err(e) =
        http::aggregator::publish_authentication(&state, &pki.ca.cert_pem, &proxy_pki).await
    {
        tracing::warn!(error = %e, "not publishing kube-system/extension-apiserver-authentication");
    }
    if let Some(aggregator) = http::aggregator::Aggregator::start(&state, &proxy_pki) {
        http::aggregator::spawn_availability(aggregator.clone());
        app = app.layer(axum::Extension(aggregator));
    }
    if let Some(front_proxy) = front_proxy {
        // Outside the router's authn layer, which looks it up per request.
        app = app.layer(axum::Extension(front_proxy));
    }
    if let Some(auditor) = auditor {
        // Outside the router's audit layers, which look it up per request.
        app = app.layer(axum::Extension(auditor));
    }
    if config.access_log {
        app = app.layer(axum::middleware::from_fn_with_state(
            state.registry.instance().clone(),
            http::access_log::log,
        ));
    }
    Ok(Started {
        state,
        app,
        tls,
        elector,
        lost,
    })
}

/// The server's registry: admission (with the federation's cleanup
/// finalizer on a control plane, and RBAC escalation), the watch caches,
/// the authorizer, the federation's dry-run hook; the Service addresses
/// already stored are taken before anything is served. Returns the state,
/// the authorizer and the ServiceAccount cache admission reads.
async fn registry(
    parts: &Parts<'_>,
    delegated: Option<skein_apiserver::authz::delegated::Delegated>,
) -> anyhow::Result<(
    AppState,
    (
        skein_apiserver::authz::Authorizer,
        Option<skein_apiserver::authz::RbacCache>,
    ),
    Arc<skein_apiserver::controllers::account_cache::AccountCache>,
)> {
    let Parts {
        config,
        members,
        store,
        instance,
        ..
    } = *parts;
    let admission = skein_apiserver::admission::build(&config.admission())
        .map_err(|e| anyhow::anyhow!("admission: {e}"))?;
    let accounts = skein_apiserver::controllers::account_cache::AccountCache::new();
    let mut admission =
        skein_apiserver::admission::with_service_accounts(admission, accounts.clone());
    let cleanup_finalizer = (config.role == Role::ControlPlane).then(|| {
        let plugin = skein_federation::sync::finalizer::CleanupFinalizer::new();
        admission.chain = std::mem::take(&mut admission.chain).with_mutator(plugin.clone());
        plugin
    });
    // One set of watch caches for every registry of the server.
    let cacher = config.watch_cache.then(|| {
        skein_apiserver::registry::cache::Cacher::recording(
            store.clone(),
            skein_apiserver::registry::cache::CacheConfig::default(),
            instance.metrics().clone(),
        )
    });
    // RBAC objects are read through a plain registry (no admission needed
    // to read), so the escalation check can sit in the admission chain.
    let mut authorizer = authorizer(config, store, cacher.as_ref(), instance);
    if let Some(delegated) = delegated {
        authorizer.0 = authorizer.0.with_delegation(delegated);
    }
    admission.chain = admission.chain.with_validator(Arc::new(
        skein_apiserver::authz::escalation::Escalation::new(authorizer.0.clone()),
    ));
    let allocator = admission.services.clone();
    let mut registry = skein_apiserver::registry::Registry::new(store.clone())
        .with_instance(instance.clone())
        .with_admission(admission);
    if let Some(cacher) = &cacher {
        registry = registry.with_watch_cache(cacher.clone());
    }
    if config.role == Role::ControlPlane {
        registry =
            registry.with_dry_run_hook(skein_federation::preview::hook(members.grace_period));
    }
    let state = AppState::with_registry(store.clone(), registry);
    if let Some(plugin) = &cleanup_finalizer {
        plugin.follow_clusters(&state.registry);
    }
    // Addresses that stored Services hold are taken before anything is served.
    if let Some(services) = skein_apiserver::registry::resource::builtin("", "v1", "services") {
        let existing = state
            .registry
            .all_of(&services)
            .await
            .map_err(|e| anyhow::anyhow!("reading stored Services failed: {e}"))?;
        skein_apiserver::admission::seed(&allocator, existing.iter());
        tokio::spawn(skein_apiserver::controllers::service_addresses::run_memory(
            state.registry.clone(),
            allocator.clone(),
        ));
    }
    Ok((state, authorizer, accounts))
}

/// Starts the controllers: the `kubernetes` Service's cluster facts, then
/// what one replica runs (the native leader-only controllers, the
/// federation's on a control plane, the simulator with
/// `--simulate-workloads`), at once or, with `--leader-elect`, once the
/// Lease is held. Returns the elector and a receiver that turns true when
/// the Lease is lost.
async fn controllers(
    parts: &Parts<'_>,
    state: &AppState,
    pki: &Pki,
    accounts: Arc<skein_apiserver::controllers::account_cache::AccountCache>,
) -> (
    Option<(
        skein_apiserver::controllers::leadership::Elector,
        tokio::task::JoinHandle<()>,
    )>,
    tokio::sync::watch::Receiver<bool>,
) {
    let Parts {
        config,
        members,
        sim,
        local,
        ..
    } = *parts;
    let (cidr, bind) = (&config.service_cluster_ip_range, config.bind_address);
    let pem = &pki.ca.cert_pem;
    let cluster =
        match skein_apiserver::controllers::Cluster::new(cidr, bind, local.port(), pem, accounts) {
            Ok(cluster) => {
                skein_apiserver::controllers::prepare_cluster(&state.registry, &cluster).await;
                Some(cluster)
            }
            Err(e) => {
                tracing::warn!(error = %e, "not creating the kubernetes service");
                None
            }
        };
    // The controllers one replica runs: at once, or once elected.
    let lead = {
        let (registry, config) = (state.registry.clone(), config.clone());
        let (members, sim) = (members.clone(), sim.clone());
        let federation = parts.federation.clone();
        move || {
            skein_apiserver::controllers::spawn_leader(&registry, cluster.as_ref());
            if config.role == Role::ControlPlane {
                // Its tasks (and every task they spawn) on its runtime.
                let _on = federation.as_ref().map(tokio::runtime::Handle::enter);
                skein_federation::spawn_all(&registry, &members);
            }
            if config.simulate_workloads {
                skein_simulator::spawn_all(&registry, &sim);
            }
        }
    };
    let (lost_tx, lost) = tokio::sync::watch::channel(false);
    if !config.leader_election.enabled {
        lead();
        return (None, lost);
    }
    let le = &config.leader_election;
    let settings = skein_apiserver::controllers::leadership::LeaderElection {
        name: le.resource_name.clone(),
        namespace: le.resource_namespace.clone(),
        lease_duration: le.lease_duration,
        renew_deadline: le.renew_deadline,
        retry_period: le.retry_period,
        identity: skein_apiserver::controllers::leadership::identity(),
    };
    tracing::info!(identity = %settings.identity, lease = %format!("{}/{}", settings.namespace, settings.name), "leader election on");
    let elector =
        skein_apiserver::controllers::leadership::Elector::new(state.registry.clone(), settings);
    let mut running = elector.clone();
    let task = tokio::spawn(async move {
        let outcome = running.run(lead).await;
        tracing::error!(?outcome, "leader election lost: shutting down");
        let _ = lost_tx.send(true);
    });
    (Some((elector, task)), lost)
}

/// The `--authorization-mode` authorizer, and its RBAC cache when RBAC is
/// one of the modes (informers started; wait for `synced` before serving).
fn authorizer(
    config: &skein_apiserver::config::Config,
    store: &Arc<dyn skein_storage::Store>,
    cacher: Option<&Arc<skein_apiserver::registry::cache::Cacher>>,
    instance: &Arc<skein_apiserver::instance::Instance>,
) -> (
    skein_apiserver::authz::Authorizer,
    Option<skein_apiserver::authz::RbacCache>,
) {
    let modes = config.authorization_mode.clone();
    let rbac = if modes.contains(&skein_apiserver::authz::Mode::Rbac) {
        let mut registry =
            skein_apiserver::registry::Registry::new(store.clone()).with_instance(instance.clone());
        if let Some(cacher) = cacher {
            registry = registry.with_watch_cache(cacher.clone());
        }
        skein_apiserver::authz::RbacCache::start(&registry)
    } else {
        None
    };
    tracing::info!(modes = ?modes, "authorization");
    (
        skein_apiserver::authz::Authorizer::new(modes, rbac.clone()),
        rbac,
    )
}

/// Completes on the first SIGTERM or SIGINT.
async fn signals() {
    use tokio::signal::unix::{SignalKind, signal};
    let sigterm = async {
        match signal(SignalKind::terminate()) {
            Ok(mut s) => {
                s.recv().await;
            }
            Err(e) => {
                tracing::error!(error = %e, "cannot listen for SIGTERM");
                std::future::pending::<()>().await;
            }
        }
    };
    let sigint = async {
        if let Err(e) = tokio::signal::ctrl_c().await {
            tracing::error!(error = %e, "cannot listen for SIGINT");
            std::future::pending::<()>().await;
        }
    };
    let which = tokio::select! {
        () = sigterm => "SIGTERM",
        () = sigint => "SIGINT",
    };
    tracing::info!(signal = which, "shutting down");
}

/// Completes when `shutdown` does or the leader Lease is lost, after
/// marking the state as shutting down.
async fn shutdown_signal(
    state: AppState,
    mut lost: tokio::sync::watch::Receiver<bool>,
    shutdown: impl std::future::Future<Output = ()>,
) {
    let lost = async move {
        if lost.wait_for(|l| *l).await.is_err() {
            std::future::pending::<()>().await;
        }
    };
    tokio::select! {
        () = shutdown => {}
        () = lost => tracing::info!(signal = "leader election lost", "shutting down"),
    }
    state.begin_shutdown();
}
