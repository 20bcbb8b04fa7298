//! The Pod addresses in use on each simulated Node, as the kubelet knows
//! them: what it handed out, and what the Node's Pods held when it first
//! gave an address on that Node.
//!
//! Contract:
//! - A Pod key holds at most one address at a time: holding another (a
//!   new Pod of the same name, or a stored address read later) frees the
//!   old one.
//! - An address is held by at most one key; releasing a key frees only
//!   what that key holds.
//! - A Node's table is seeded once, from its live Pods' stored addresses
//!   ([`Addresses::seed`]); after that only [`Addresses::hold`],
//!   [`Addresses::take`] and [`Addresses::release`] change it, so giving
//!   an address costs no scan of the Node's Pods.
//! - Pure bookkeeping: no I/O.

use std::collections::HashMap;
use std::net::Ipv4Addr;

use skein_apiserver::controllers::informer::ObjectKey;

/// What one key holds.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Held {
    uid: String,
    node: String,
    ip: Ipv4Addr,
}

/// The addresses held on every Node this kubelet gave addresses on.
#[derive(Debug, Default)]
pub struct Addresses {
    /// Node → address → the key holding it; a Node is here once seeded.
    nodes: HashMap<String, HashMap<Ipv4Addr, ObjectKey>>,
    /// Key → what it holds.
    keys: HashMap<ObjectKey, Held>,
}

impl Addresses {
    /// Whether `node`'s table was seeded.
    pub fn seeded(&self, node: &str) -> bool {
        self.nodes.contains_key(node)
    }

    /// Seeds `node`'s table with its live Pods' stored addresses: (key,
    /// uid, address). What keys already hold there stays held.
    pub fn seed(
        &mut self,
        node: &str,
        pods: impl IntoIterator<Item = (ObjectKey, String, Ipv4Addr)>,
    ) {
        self.nodes.entry(node.to_owned()).or_default();
        for (key, uid, ip) in pods {
            if !self.nodes.get(node).is_some_and(|t| t.contains_key(&ip)) {
                self.hold(key, uid, node, ip);
            }
        }
    }

    /// The address `key` holds for the Pod `uid` on `node`, if it holds one.
    pub fn held(&self, key: &ObjectKey, uid: &str, node: &str) -> Option<Ipv4Addr> {
        self.keys
            .get(key)
            .filter(|h| h.uid == uid && h.node == node)
            .map(|h| h.ip)
    }

    /// Records that `key` (Pod `uid`) holds `ip` on `node`, freeing what
    /// the key held before.
    pub fn hold(&mut self, key: ObjectKey, uid: String, node: &str, ip: Ipv4Addr) {
        self.release(&key);
        self.nodes
            .entry(node.to_owned())
            .or_default()
            .insert(ip, key.clone());
        self.keys.insert(
            key,
            Held {
                uid,
                node: node.to_owned(),
                ip,
            },
        );
    }

    /// Gives `key` (Pod `uid`) the lowest free address of the block of
    /// `size` addresses at `base` on `node` (see [`free_ip`]); `None` when
    /// the block is full.
    pub fn take(
        &mut self,
        key: &ObjectKey,
        uid: &str,
        node: &str,
        base: Ipv4Addr,
        size: u32,
    ) -> Option<Ipv4Addr> {
        if let Some(ip) = self.held(key, uid, node) {
            return Some(ip);
        }
        self.release(key);
        let table = self.nodes.get(node);
        let ip = free_ip(base, size, |ip| table.is_some_and(|t| t.contains_key(&ip)))?;
        self.hold(key.clone(), uid.to_owned(), node, ip);
        Some(ip)
    }

    /// Frees what `key` holds (its Pod finished or is gone).
    pub fn release(&mut self, key: &ObjectKey) {
        let Some(held) = self.keys.remove(key) else {
            return;
        };
        if let Some(table) = self.nodes.get_mut(&held.node)
            && table.get(&held.ip) == Some(key)
        {
            table.remove(&held.ip);
        }
    }
}

/// The lowest free Pod address of the block of `size` addresses starting
/// at `base` (from the third; the last one, broadcast, is never given),
/// given which addresses are in use.
pub fn free_ip(base: Ipv4Addr, size: u32, used: impl Fn(Ipv4Addr) -> bool) -> Option<Ipv4Addr> {
    (2u32..size.saturating_sub(1))
        .map(|i| Ipv4Addr::from(u32::from(base).saturating_add(i)))
        .find(|ip| !used(*ip))
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashSet;

    const BASE: Ipv4Addr = Ipv4Addr::new(10, 244, 1, 0);

    fn ip(last: u8) -> Ipv4Addr {
        Ipv4Addr::new(10, 244, 1, last)
    }

    fn key(name: &str) -> ObjectKey {
        ObjectKey::new("ns", name)
    }

    #[test]
    fn free_ip_skips_the_used_ones() {
        assert_eq!(free_ip(BASE, 256, |_| false), Some(ip(2)));
        let used = HashSet::from([ip(2), ip(3)]);
        assert_eq!(free_ip(BASE, 256, |a| used.contains(&a)), Some(ip(4)));
        let full: HashSet<Ipv4Addr> = (2u8..255).map(ip).collect();
        assert_eq!(free_ip(BASE, 256, |a| full.contains(&a)), None);
        // A /22 goes on past the first /24, and keeps its broadcast.
        assert_eq!(free_ip(BASE, 1024, |a| full.contains(&a)), Some(ip(255)));
    }

    #[test]
    fn seeded_addresses_are_not_given_again_until_released() {
        let mut a = Addresses::default();
        assert!(!a.seeded("n1"));
        a.seed("n1", [(key("old"), "u0".into(), ip(2))]);
        assert!(a.seeded("n1"));
        assert_eq!(a.take(&key("p"), "u1", "n1", BASE, 256), Some(ip(3)));
        // Asking again gives the same address.
        assert_eq!(a.take(&key("p"), "u1", "n1", BASE, 256), Some(ip(3)));
        assert_eq!(a.take(&key("q"), "u2", "n1", BASE, 256), Some(ip(4)));
        a.release(&key("old"));
        assert_eq!(a.take(&key("r"), "u3", "n1", BASE, 256), Some(ip(2)));
        // Another Node has its own table.
        assert_eq!(a.take(&key("s"), "u4", "n2", BASE, 256), Some(ip(2)));
    }

    #[test]
    fn a_new_pod_of_the_same_name_frees_the_old_address() {
        let mut a = Addresses::default();
        a.seed("n1", []);
        assert_eq!(a.take(&key("p"), "u1", "n1", BASE, 256), Some(ip(2)));
        assert_eq!(a.take(&key("q"), "u2", "n1", BASE, 256), Some(ip(3)));
        // p is recreated (new uid): it gets the lowest free one, its old
        // address having been freed first.
        assert_eq!(a.held(&key("p"), "u9", "n1"), None);
        assert_eq!(a.take(&key("p"), "u9", "n1", BASE, 256), Some(ip(2)));
        // A stored address read later replaces the handed-out one.
        a.hold(key("q"), "u2".into(), "n1", ip(7));
        assert_eq!(a.take(&key("t"), "u5", "n1", BASE, 256), Some(ip(3)));
    }

    #[test]
    fn releasing_a_key_frees_only_its_own_address() {
        let mut a = Addresses::default();
        // Two Pods stored with one address (a stale store): the second
        // seed entry is ignored, and releasing it frees nothing.
        a.seed(
            "n1",
            [
                (key("a"), "ua".into(), ip(2)),
                (key("b"), "ub".into(), ip(2)),
            ],
        );
        a.release(&key("b"));
        assert_eq!(a.take(&key("c"), "uc", "n1", BASE, 256), Some(ip(3)));
        a.release(&key("a"));
        assert_eq!(a.take(&key("d"), "ud", "n1", BASE, 256), Some(ip(2)));
        let full = 256 - 3;
        let mut b = Addresses::default();
        for i in 0..full {
            assert!(
                b.take(&key(&format!("p{i}")), "u", "n1", BASE, 256)
                    .is_some()
            );
        }
        assert_eq!(b.take(&key("last"), "u", "n1", BASE, 256), None);
    }
}
