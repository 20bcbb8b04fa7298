//! The `kubernetes` Service in `default` and its endpoints, as
//! kube-apiserver's bootstrap controller and lease endpoint reconciler
//! keep them: the Service (ClusterIP = the first address of
//! `--service-cluster-ip-range`, port 443 `https` → Skein's secure port),
//! the legacy Endpoints object (labelled
//! `endpointslice.kubernetes.io/skip-mirror`) and the EndpointSlice
//! `kubernetes`, both naming Skein's own address and port. Reconciled at
//! startup, whenever one of them is changed or deleted, and every 10
//! seconds (upstream's interval). Each pass also recreates a deleted
//! system namespace, as upstream's bootstrap controller does for
//! `default` and its system-namespaces controller for the others.

use std::net::{IpAddr, Ipv4Addr, Ipv6Addr, UdpSocket};
use std::time::Duration;

use futures::StreamExt;
use futures::stream::select_all;
use serde_json::{Value, json};

use crate::registry::watch::{WatchItem, WatchQuery};
use crate::registry::{Filter, Registry, ResourceInfo, Target, WriteOptions, resource};
use crate::status::ApiError;

/// The Service's (and its endpoints') name.
pub const NAME: &str = "kubernetes";
/// Its namespace.
pub const NAMESPACE: &str = "default";
/// The field manager kube-apiserver writes these as.
pub const MANAGER: &str = "kube-apiserver";
/// Upstream's reconcile interval.
const INTERVAL: Duration = Duration::from_secs(10);

/// Where clients reach this server.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Endpoint {
    /// The Service's cluster IP: the first address of the service range.
    pub cluster_ip: IpAddr,
    /// The address the endpoints name (upstream's advertise address).
    pub address: IpAddr,
    /// The secure port (the Service's targetPort and the endpoints' port).
    pub port: u16,
}

/// The first usable address of an IPv4 or IPv6 CIDR (network + 1), as
/// upstream's `GetIndexedIP(cidr, 1)`.
pub fn first_address(cidr: &str) -> Option<IpAddr> {
    let (base, _) = cidr.split_once('/')?;
    match base.trim().parse::<IpAddr>().ok()? {
        IpAddr::V4(a) => Some(IpAddr::V4(Ipv4Addr::from(u32::from(a).checked_add(1)?))),
        IpAddr::V6(a) => Some(IpAddr::V6(Ipv6Addr::from(u128::from(a).checked_add(1)?))),
    }
}

/// Upstream's advertise address when none is given: the bind address, or,
/// when that is the unspecified address, the address of the interface the
/// default route leaves through (found without sending anything), else
/// loopback.
pub fn advertise_address(bind: IpAddr) -> IpAddr {
    if !bind.is_unspecified() {
        return bind;
    }
    let routed = UdpSocket::bind((Ipv4Addr::UNSPECIFIED, 0))
        .and_then(|s| {
            // TEST-NET-1: routing picks the default interface; no packet leaves.
            s.connect((Ipv4Addr::new(192, 0, 2, 1), 9))?;
            s.local_addr()
        })
        .map(|a| a.ip())
        .ok()
        .filter(|ip| !ip.is_unspecified());
    routed.unwrap_or(IpAddr::V4(Ipv4Addr::LOCALHOST))
}

fn opts() -> WriteOptions {
    WriteOptions {
        field_manager: MANAGER.into(),
        ..WriteOptions::default()
    }
}

fn find(group: &str, plural: &str) -> Result<std::sync::Arc<ResourceInfo>, ApiError> {
    resource::builtin(group, "v1", plural)
        .ok_or_else(|| ApiError::internal(format!("resource {plural} is not served")))
}

/// The Service as upstream creates it.
fn service(ep: &Endpoint) -> Value {
    json!({
        "apiVersion": "v1",
        "kind": "Service",
        "metadata": {
            "name": NAME,
            "namespace": NAMESPACE,
            "labels": {"component": "apiserver", "provider": "kubernetes"},
        },
        "spec": {
            "clusterIP": ep.cluster_ip.to_string(),
            "ports": ports(ep),
            "sessionAffinity": "None",
            "type": "ClusterIP",
        },
    })
}

fn ports(ep: &Endpoint) -> Value {
    json!([{"name": "https", "port": 443, "protocol": "TCP", "targetPort": ep.port}])
}

/// Whether the stored Service has upstream's ports and type (what the
/// reconciler resets; the rest is the user's business).
fn service_current(svc: &Value, ep: &Endpoint) -> bool {
    let Some(stored) = svc.pointer("/spec/ports").and_then(Value::as_array) else {
        return false;
    };
    let [port] = stored.as_slice() else {
        return false;
    };
    let node_port = port.get("nodePort").and_then(Value::as_i64).unwrap_or(0);
    port.get("name") == Some(&json!("https"))
        && port.get("port") == Some(&json!(443))
        && port
            .get("protocol")
            .and_then(Value::as_str)
            .unwrap_or("TCP")
            == "TCP"
        && port.get("targetPort") == Some(&json!(ep.port))
        && node_port == 0
        && svc.pointer("/spec/type") == Some(&json!("ClusterIP"))
}

fn subsets(ep: &Endpoint) -> Value {
    json!([{
        "addresses": [{"ip": ep.address.to_string()}],
        "ports": [{"name": "https", "port": ep.port, "protocol": "TCP"}],
    }])
}

fn slice_fields(ep: &Endpoint) -> [(&'static str, Value); 3] {
    let family = if ep.address.is_ipv6() { "IPv6" } else { "IPv4" };
    [
        ("addressType", json!(family)),
        (
            "endpoints",
            json!([{"addresses": [ep.address.to_string()], "conditions": {"ready": true}}]),
        ),
        (
            "ports",
            json!([{"name": "https", "port": ep.port, "protocol": "TCP"}]),
        ),
    ]
}

fn has_label(obj: &Value, key: &str, value: &str) -> bool {
    obj.pointer("/metadata/labels")
        .and_then(|l| l.get(key))
        .and_then(Value::as_str)
        == Some(value)
}

fn set_label(obj: &mut Value, key: &str, value: &str) {
    if let Some(meta) = obj.get_mut("metadata").and_then(Value::as_object_mut) {
        let labels = meta.entry("labels").or_insert_with(|| json!({}));
        if !labels.is_object() {
            *labels = json!({});
        }
        if let Some(l) = labels.as_object_mut() {
            l.insert(key.into(), json!(value));
        }
    }
}

const SKIP_MIRROR: &str = "endpointslice.kubernetes.io/skip-mirror";
const SERVICE_NAME: &str = "kubernetes.io/service-name";

/// Creates or repairs a Service, Endpoints and EndpointSlice. `desired`
/// builds the object to create; `current` says whether a stored one is
/// right; `fix` corrects one in place.
async fn keep(
    registry: &Registry,
    res: &ResourceInfo,
    desired: Value,
    current: impl Fn(&Value) -> bool,
    fix: impl Fn(&mut Value) + Send + Sync,
) -> Result<(), ApiError> {
    match registry.get(res, NAMESPACE, NAME).await {
        Ok(obj) if current(&obj) => Ok(()),
        Ok(_) => {
            registry
                .update_with(res, NAMESPACE, NAME, Target::Main, &opts(), |obj| {
                    let mut next = obj.clone();
                    fix(&mut next);
                    Ok(next)
                })
                .await?;
            tracing::info!(
                resource = res.plural,
                "reset the kubernetes service's object"
            );
            Ok(())
        }
        Err(e) if e.reason() == "NotFound" => {
            let obj = res
                .normalize(desired)
                .map_err(|e| ApiError::internal(e.to_string()))?;
            match registry.create(res, NAMESPACE, obj, &opts()).await {
                Ok(_) => Ok(()),
                Err(e) if e.reason() == "AlreadyExists" => Ok(()),
                Err(e) => Err(e),
            }
        }
        Err(e) => Err(e),
    }
}

/// One reconcile of the three objects.
///
/// # Errors
///
/// The first failed read or write.
pub async fn reconcile(registry: &Registry, ep: &Endpoint) -> Result<(), ApiError> {
    let services = find("", "services")?;
    let want_ports = ports(ep);
    keep(
        registry,
        &services,
        service(ep),
        |svc| service_current(svc, ep),
        |svc| {
            if let Some(spec) = svc.get_mut("spec").and_then(Value::as_object_mut) {
                spec.insert("ports".into(), want_ports.clone());
                spec.insert("type".into(), json!("ClusterIP"));
            }
        },
    )
    .await?;

    let endpoints = find("", "endpoints")?;
    let want = subsets(ep);
    keep(
        registry,
        &endpoints,
        json!({
            "apiVersion": "v1",
            "kind": "Endpoints",
            "metadata": {"name": NAME, "namespace": NAMESPACE, "labels": {SKIP_MIRROR: "true"}},
            "subsets": want,
        }),
        |obj| obj.get("subsets") == Some(&want) && has_label(obj, SKIP_MIRROR, "true"),
        |obj| {
            if let Some(map) = obj.as_object_mut() {
                map.insert("subsets".into(), want.clone());
            }
            set_label(obj, SKIP_MIRROR, "true");
        },
    )
    .await?;

    let slices = find("discovery.k8s.io", "endpointslices")?;
    let fields = slice_fields(ep);
    let mut slice = json!({
        "apiVersion": "discovery.k8s.io/v1",
        "kind": "EndpointSlice",
        "metadata": {"name": NAME, "namespace": NAMESPACE, "labels": {SERVICE_NAME: NAME}},
    });
    if let Some(map) = slice.as_object_mut() {
        for (k, v) in &fields {
            map.insert((*k).into(), v.clone());
        }
    }
    keep(
        registry,
        &slices,
        slice,
        |obj| {
            fields.iter().all(|(k, v)| obj.get(*k) == Some(v)) && has_label(obj, SERVICE_NAME, NAME)
        },
        |obj| {
            if let Some(map) = obj.as_object_mut() {
                for (k, v) in &fields {
                    map.insert((*k).into(), v.clone());
                }
            }
            set_label(obj, SERVICE_NAME, NAME);
        },
    )
    .await
}

/// Runs forever: reconciles on every change to one of the three objects
/// and every [`INTERVAL`].
pub async fn run(registry: Registry, ep: Endpoint) {
    loop {
        if let Err(e) = watch_once(&registry, &ep).await {
            tracing::warn!(error = %e, "kubernetes service controller restarting");
        }
        tokio::time::sleep(Duration::from_millis(500)).await;
    }
}

async fn watch_once(registry: &Registry, ep: &Endpoint) -> Result<(), ApiError> {
    let selector = format!("metadata.name={NAME}");
    let mut streams = Vec::new();
    for (group, plural) in [
        ("", "services"),
        ("", "endpoints"),
        ("discovery.k8s.io", "endpointslices"),
    ] {
        let res = find(group, plural)?;
        let q = WatchQuery {
            filter: Filter::parse(&res, None, Some(&selector))?,
            // Only changes: the reconcile below covers what exists now.
            resource_version: Some(registry_revision(registry).await?),
            ..WatchQuery::default()
        };
        streams.push(registry.watch(&res, Some(NAMESPACE), q).await?);
    }
    let mut changes = select_all(streams);
    let mut tick = tokio::time::interval(INTERVAL);
    loop {
        if let Err(e) = super::bootstrap::ensure_namespaces(registry).await {
            tracing::warn!(error = %e, "recreating the system namespaces failed");
        }
        if let Err(e) = reconcile(registry, ep).await {
            tracing::warn!(error = %e, "reconciling the kubernetes service failed");
        }
        tokio::select! {
            item = changes.next() => match item {
                Some(WatchItem::Error(e)) => return Err(e),
                None => return Ok(()),
                Some(_) => {}
            },
            _ = tick.tick() => {}
        }
    }
}

async fn registry_revision(registry: &Registry) -> Result<String, ApiError> {
    let rev = registry
        .store()
        .current_revision()
        .await
        .map_err(|e| ApiError::unavailable(e.to_string()))?;
    Ok(rev.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn first_address_of_the_range() {
        assert_eq!(
            first_address("10.96.0.0/12"),
            Some("10.96.0.1".parse().unwrap())
        );
        assert_eq!(
            first_address("fd00::/108"),
            Some("fd00::1".parse().unwrap())
        );
        assert_eq!(first_address("nonsense"), None);
    }

    #[test]
    fn advertise_address_prefers_the_bind_address() {
        let ip: IpAddr = "127.0.0.1".parse().unwrap();
        assert_eq!(advertise_address(ip), ip);
        assert!(!advertise_address("0.0.0.0".parse().unwrap()).is_unspecified());
    }

    #[test]
    fn service_drift_is_detected() {
        let ep = Endpoint {
            cluster_ip: "10.96.0.1".parse().unwrap(),
            address: "127.0.0.1".parse().unwrap(),
            port: 6443,
        };
        let svc = service(&ep);
        assert!(service_current(&svc, &ep));
        let mut moved = svc.clone();
        moved["spec"]["ports"][0]["targetPort"] = json!(7443);
        assert!(!service_current(&moved, &ep));
        let mut typed = svc;
        typed["spec"]["type"] = json!("NodePort");
        assert!(!service_current(&typed, &ep));
    }
}
