//! A simulated cloud load balancer: `type: LoadBalancer` Services (without
//! a `loadBalancerClass`) get `status.loadBalancer.ingress[{ip, ipMode:
//! VIP}]` from `--sim-lb-range`.
//!
//! Contract:
//! - The address is stable: a Service keeps the one it has (across
//!   restarts too) while it is in the range and no other Service holds it;
//!   `spec.loadBalancerIP`, when set, free and in the range, is honoured;
//!   otherwise the lowest free address is taken (the network and broadcast
//!   addresses of ranges wider than /31 are never handed out).
//! - An address is released when its Service is deleted or stops being a
//!   LoadBalancer (its ingress is then cleared, as upstream's service
//!   controller does).
//! - Each change is recorded as the service controller's Events
//!   (`EnsuringLoadBalancer`/`EnsuredLoadBalancer`, `DeletingLoadBalancer`/
//!   `DeletedLoadBalancer`).
//! - One worker: the addresses handed out are tracked in memory, so two
//!   Services never get the same one even before the cache shows it.

use skein_apiserver::status::ErrorKind;
use std::collections::{HashMap, HashSet};
use std::net::Ipv4Addr;

use serde_json::{Value, json};

use super::Sim;
use super::pods::events::{self, Source};
use skein_apiserver::controllers::informer::{Informer, Notice, ObjectKey};
use skein_apiserver::controllers::queue::WorkQueue;
use skein_apiserver::registry::{Target, object};
use skein_apiserver::status::ApiError;

/// The field manager of the status writes (upstream's service controller).
const MANAGER: &str = "service-controller";

/// The addresses of an IPv4 CIDR that may be handed out, first and last.
pub fn usable(cidr: &str) -> Option<(u32, u32)> {
    let (ip, bits) = cidr.split_once('/')?;
    let ip: Ipv4Addr = ip.trim().parse().ok()?;
    let bits: u32 = bits.trim().parse().ok()?;
    if bits > 32 {
        return None;
    }
    let mask = if bits == 0 {
        0
    } else {
        u32::MAX << (32 - bits)
    };
    let network = u32::from(ip) & mask;
    let broadcast = network | !mask;
    if bits >= 31 {
        Some((network, broadcast))
    } else {
        Some((network + 1, broadcast - 1))
    }
}

/// Whether `service` should get an address from the simulator.
pub fn wants_address(service: &Value) -> bool {
    service.pointer("/spec/type").and_then(Value::as_str) == Some("LoadBalancer")
        && service
            .pointer("/spec/loadBalancerClass")
            .and_then(Value::as_str)
            .is_none_or(str::is_empty)
}

/// The address in `service`'s status, if any.
pub fn current(service: &Value) -> Option<Ipv4Addr> {
    service
        .pointer("/status/loadBalancer/ingress/0/ip")
        .and_then(Value::as_str)
        .and_then(|ip| ip.parse().ok())
}

/// The address `service` should have, given the range and the addresses
/// other Services hold; `None` when the range is exhausted.
pub fn choose(service: &Value, range: (u32, u32), taken: &HashSet<Ipv4Addr>) -> Option<Ipv4Addr> {
    let fits = |ip: &Ipv4Addr| {
        let n = u32::from(*ip);
        n >= range.0 && n <= range.1 && !taken.contains(ip)
    };
    if let Some(ip) = current(service).filter(fits) {
        return Some(ip);
    }
    let requested = service
        .pointer("/spec/loadBalancerIP")
        .and_then(Value::as_str)
        .and_then(|ip| ip.parse::<Ipv4Addr>().ok());
    if let Some(ip) = requested.filter(fits) {
        return Some(ip);
    }
    (range.0..=range.1).map(Ipv4Addr::from).find(fits)
}

/// `service` with its ingress set to `ip` (cleared when `None`).
pub fn with_ingress(service: &Value, ip: Option<Ipv4Addr>) -> Value {
    let mut next = service.clone();
    let lb = match ip {
        Some(ip) => json!({"ingress": [{"ip": ip.to_string(), "ipMode": "VIP"}]}),
        None => json!({}),
    };
    if !next.get("status").is_some_and(Value::is_object) {
        next["status"] = json!({});
    }
    next["status"]["loadBalancer"] = lb;
    next
}

/// Whether `service`'s ingress already says `ip` (and nothing else).
fn has_ingress(service: &Value, ip: Option<Ipv4Addr>) -> bool {
    let ingress = service
        .pointer("/status/loadBalancer/ingress")
        .and_then(Value::as_array)
        .cloned()
        .unwrap_or_default();
    match ip {
        None => ingress.is_empty(),
        Some(ip) => {
            ingress.len() == 1
                && ingress[0].get("ip").and_then(Value::as_str) == Some(ip.to_string().as_str())
                && ingress[0].get("ipMode").and_then(Value::as_str) == Some("VIP")
        }
    }
}

struct Allocator {
    sim: Sim,
    services: Informer,
    range: (u32, u32),
    /// Addresses handed out: Service → (uid, address).
    held: HashMap<ObjectKey, (String, Ipv4Addr)>,
}

impl Allocator {
    async fn sync(&mut self, key: &ObjectKey) -> Result<(), ApiError> {
        let Some(service) = self.services.get(key) else {
            self.held.remove(key);
            return Ok(());
        };
        let uid = object::uid(&service).to_owned();
        if self.held.get(key).is_some_and(|(u, _)| *u != uid) {
            self.held.remove(key);
        }
        let want = if wants_address(&service) {
            let taken: HashSet<Ipv4Addr> = self
                .held
                .iter()
                .filter(|(k, _)| *k != key)
                .map(|(_, (_, ip))| *ip)
                .collect();
            let held = self.held.get(key).map(|(_, ip)| *ip);
            let ip = match held {
                Some(ip) if !taken.contains(&ip) => Some(ip),
                _ => choose(&service, self.range, &taken),
            };
            let Some(ip) = ip else {
                tracing::warn!(service = %key, "no free address in --sim-lb-range");
                return Ok(());
            };
            self.held.insert(key.clone(), (uid.clone(), ip));
            Some(ip)
        } else {
            self.held.remove(key);
            // Only an address this simulator could have given is cleared.
            if current(&service).is_none() {
                return Ok(());
            }
            None
        };
        if has_ingress(&service, want) {
            return Ok(());
        }
        let res = Sim::resource("", "v1", "services")?;
        let result = self
            .sim
            .registry
            .update_with(
                &res,
                &key.namespace,
                &key.name,
                Target::Status,
                &Sim::opts(MANAGER),
                |cur| {
                    if object::uid(cur) != uid || has_ingress(cur, want) {
                        return Ok(cur.clone());
                    }
                    Ok(with_ingress(cur, want))
                },
            )
            .await;
        match result {
            Err(e) if e.kind() != ErrorKind::NotFound => Err(e),
            Err(_) => Ok(()),
            Ok(mut written) => {
                written["kind"] = json!("Service");
                written["apiVersion"] = json!("v1");
                let steps = match want {
                    Some(_) => [
                        ("EnsuringLoadBalancer", "Ensuring load balancer"),
                        ("EnsuredLoadBalancer", "Ensured load balancer"),
                    ],
                    None => [
                        ("DeletingLoadBalancer", "Deleting load balancer"),
                        ("DeletedLoadBalancer", "Deleted load balancer"),
                    ],
                };
                let now = time::OffsetDateTime::now_utc();
                let recorded = steps
                    .iter()
                    .zip(0i64..)
                    .map(|((reason, message), i)| {
                        events::event(
                            &written,
                            "Normal",
                            reason,
                            message,
                            Source::ServiceController,
                            now + time::Duration::nanoseconds(i),
                        )
                    })
                    .collect();
                events::record(&self.sim, recorded).await;
                Ok(())
            }
        }
    }
}

/// Runs the load balancer simulation until the runtime shuts down.
pub async fn run(sim: Sim) {
    let Some(range) = usable(&sim.config.lb_range) else {
        tracing::error!(
            range = sim.config.lb_range,
            "--sim-lb-range is not an IPv4 CIDR; LoadBalancer Services get no address"
        );
        return;
    };
    let services = match sim.informer("", "v1", "services") {
        Ok(s) => s,
        Err(e) => {
            tracing::error!(error = %e, "simulated load balancers disabled");
            return;
        }
    };
    let queue: WorkQueue<ObjectKey> = WorkQueue::new();
    let mut notices = services.subscription();
    services.synced().await;
    // Addresses held before a restart stay with their Services (oldest
    // first when two claim the same).
    let mut existing = services.list(wants_address);
    existing.sort_by(|a, b| {
        let created = |s: &Value| object::meta_str(s, "creationTimestamp").map(str::to_owned);
        created(a).cmp(&created(b))
    });
    let mut held: HashMap<ObjectKey, (String, Ipv4Addr)> = HashMap::new();
    for s in &existing {
        if let Some(ip) = current(s)
            && (range.0..=range.1).contains(&u32::from(ip))
            && !held.values().any(|(_, h)| *h == ip)
        {
            held.insert(ObjectKey::of(s), (object::uid(s).to_owned(), ip));
        }
    }
    for s in services.list(|_| true) {
        queue.add(ObjectKey::of(&s));
    }
    let feeder = queue.clone();
    let all = services.clone();
    tokio::spawn(async move {
        while let Some(n) = notices.next().await {
            match n {
                Notice::Applied(s) | Notice::Deleted(s) => feeder.add(ObjectKey::of(&s)),
                Notice::Resync => {
                    for s in all.list(|_| true) {
                        feeder.add(ObjectKey::of(&s));
                    }
                }
            }
        }
    });
    let mut allocator = Allocator {
        sim,
        services,
        range,
        held,
    };
    loop {
        let item = queue.next().await;
        let key = item.key().clone();
        if let Err(e) = allocator.sync(&key).await {
            tracing::warn!(service = %key, error = %e, "load balancer sync failed");
            item.retry();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lb(ip: Option<&str>) -> Value {
        let mut s =
            json!({"metadata": {"name": "s", "uid": "u"}, "spec": {"type": "LoadBalancer"}});
        if let Some(ip) = ip {
            s["status"] = json!({"loadBalancer": {"ingress": [{"ip": ip, "ipMode": "VIP"}]}});
        }
        s
    }

    fn ip(s: &str) -> Ipv4Addr {
        s.parse().expect("ip")
    }

    #[test]
    fn ranges_skip_network_and_broadcast() {
        let r = usable("172.18.255.0/24").expect("range");
        assert_eq!(
            (Ipv4Addr::from(r.0), Ipv4Addr::from(r.1)),
            (ip("172.18.255.1"), ip("172.18.255.254"))
        );
        let r = usable("10.0.0.7/32").expect("range");
        assert_eq!(r.0, r.1);
        assert!(usable("nonsense").is_none());
        assert!(usable("10.0.0.0/33").is_none());
    }

    #[test]
    fn addresses_are_stable_first_free_or_requested() {
        let r = usable("172.18.255.0/24").expect("range");
        let none = HashSet::new();
        assert_eq!(choose(&lb(None), r, &none), Some(ip("172.18.255.1")));
        let taken = HashSet::from([ip("172.18.255.1")]);
        assert_eq!(choose(&lb(None), r, &taken), Some(ip("172.18.255.2")));
        assert_eq!(
            choose(&lb(Some("172.18.255.9")), r, &taken),
            Some(ip("172.18.255.9"))
        );
        // Someone else holds it, or it is outside the range: a new one.
        let taken9 = HashSet::from([ip("172.18.255.9")]);
        assert_eq!(
            choose(&lb(Some("172.18.255.9")), r, &taken9),
            Some(ip("172.18.255.1"))
        );
        assert_eq!(
            choose(&lb(Some("10.0.0.1")), r, &none),
            Some(ip("172.18.255.1"))
        );
        let mut requested = lb(None);
        requested["spec"]["loadBalancerIP"] = json!("172.18.255.77");
        assert_eq!(choose(&requested, r, &none), Some(ip("172.18.255.77")));
        let tiny = usable("10.0.0.0/30").expect("range");
        let full = HashSet::from([ip("10.0.0.1"), ip("10.0.0.2")]);
        assert_eq!(choose(&lb(None), tiny, &full), None);
    }

    #[test]
    fn ingress_is_set_and_cleared() {
        let s = with_ingress(&lb(None), Some(ip("172.18.255.3")));
        assert_eq!(
            s["status"]["loadBalancer"]["ingress"][0],
            json!({"ip": "172.18.255.3", "ipMode": "VIP"})
        );
        assert!(has_ingress(&s, Some(ip("172.18.255.3"))));
        let cleared = with_ingress(&s, None);
        assert_eq!(cleared["status"]["loadBalancer"], json!({}));
        assert!(has_ingress(&cleared, None));
        assert!(wants_address(&lb(None)));
        let mut classed = lb(None);
        classed["spec"]["loadBalancerClass"] = json!("example.com/lb");
        assert!(!wants_address(&classed));
    }

    proptest::proptest! {
        /// Services taking addresses one after another never share one,
        /// and every address is in the range.
        #[test]
        fn addresses_are_unique(n in 0usize..40, bits in 26u32..31) {
            let r = usable(&format!("10.1.0.0/{bits}")).expect("range");
            let mut taken = HashSet::new();
            for _ in 0..n {
                match choose(&lb(None), r, &taken) {
                    Some(ip) => {
                        proptest::prop_assert!(!taken.contains(&ip));
                        proptest::prop_assert!((r.0..=r.1).contains(&u32::from(ip)));
                        taken.insert(ip);
                    }
                    None => proptest::prop_assert_eq!(taken.len() as u32, r.1 - r.0 + 1),
                }
            }
        }
    }
}
