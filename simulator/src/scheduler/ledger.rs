//! Each Node's [`Usage`], kept up to date from the Pod cache without
//! recounting every Pod at every scheduling attempt.
//!
//! Contract: after [`Ledger::sync`] with the cache's current Pods,
//! [`Ledger::nodes`] equals [`fit::usage`] over those Pods (up to resource
//! names whose total is zero). A sync costs one pointer comparison per
//! unchanged Pod; only Pods whose cached object changed (a new `Arc`) are
//! read again.

use std::collections::HashMap;
use std::sync::Arc;

use serde_json::Value;

use super::fit::{self, Share, Usage};
use skein_apiserver::controllers::informer::ObjectKey;

/// One Pod as last counted.
struct Counted {
    /// The cached object it was read from.
    obj: Arc<Value>,
    /// Where it holds room, and how much.
    place: Option<(String, Share)>,
    /// The [`Ledger::sync`] round that last saw it.
    round: u64,
}

/// See the module documentation.
#[derive(Default)]
pub struct Ledger {
    pods: HashMap<ObjectKey, Counted>,
    nodes: HashMap<String, Usage>,
    round: u64,
}

impl Ledger {
    /// Brings the ledger to `pods`, the cache's current Pods.
    pub fn sync(&mut self, pods: &[Arc<Value>]) {
        self.round = self.round.wrapping_add(1);
        let round = self.round;
        for pod in pods {
            let key = ObjectKey::of(pod);
            if let Some(c) = self.pods.get_mut(&key)
                && Arc::ptr_eq(&c.obj, pod)
            {
                c.round = round;
                continue;
            }
            let place = fit::placement(pod);
            if let Some((node, share)) = &place {
                self.nodes.entry(node.clone()).or_default().add_share(share);
            }
            let old = self.pods.insert(
                key,
                Counted {
                    obj: pod.clone(),
                    place,
                    round,
                },
            );
            if let Some(old) = old {
                self.uncount(old);
            }
        }
        let gone: Vec<ObjectKey> = self
            .pods
            .iter()
            .filter(|(_, c)| c.round != round)
            .map(|(k, _)| k.clone())
            .collect();
        for key in gone {
            if let Some(old) = self.pods.remove(&key) {
                self.uncount(old);
            }
        }
    }

    /// Each Node's usage (Nodes without Pods are absent).
    pub fn nodes(&self) -> &HashMap<String, Usage> {
        &self.nodes
    }

    fn uncount(&mut self, old: Counted) {
        let Some((node, share)) = old.place else {
            return;
        };
        if let Some(u) = self.nodes.get_mut(&node) {
            u.remove_share(&share);
            if u.pods == 0 {
                self.nodes.remove(&node);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;
    use serde_json::json;

    fn pod(name: &str, node: Option<&str>, cpu_m: u32, phase: &str) -> Arc<Value> {
        let mut spec = json!({"containers": [{"name": "c", "resources": {"requests": {"cpu": format!("{cpu_m}m")}}}]});
        if let Some(n) = node {
            spec["nodeName"] = json!(n);
        }
        Arc::new(json!({
            "metadata": {"name": name, "namespace": "ns"},
            "spec": spec,
            "status": {"phase": phase},
        }))
    }

    /// A node's non-zero amounts and Pod count, comparable across maps.
    type Row = (String, Vec<(String, i128)>, usize);

    fn normalized(m: &HashMap<String, Usage>) -> Vec<Row> {
        let mut out: Vec<_> = m
            .iter()
            .filter(|(_, u)| u.pods > 0)
            .map(|(n, u)| {
                let mut r: Vec<(String, i128)> = u
                    .requested
                    .iter()
                    .chain(u.scored.iter())
                    .filter(|(_, v)| **v != 0)
                    .map(|(k, v)| (k.clone(), *v))
                    .collect();
                r.sort();
                (n.clone(), r, u.pods)
            })
            .collect();
        out.sort();
        out
    }

    proptest! {
        /// After any sequence of cache states, the ledger counts what a
        /// full recount does.
        #[test]
        fn equals_a_full_recount(
            states in prop::collection::vec(
                prop::collection::vec((0u8..12, prop::option::of(0u8..3), 0u32..2000, 0u8..3), 0..12),
                1..8,
            )
        ) {
            let mut ledger = Ledger::default();
            let mut previous: HashMap<String, Arc<Value>> = HashMap::new();
            for state in states {
                let mut now: HashMap<String, Arc<Value>> = HashMap::new();
                for (i, node, cpu, phase) in state {
                    let name = format!("p{i}");
                    let node = node.map(|n| format!("n{n}"));
                    let phase = ["Pending", "Running", "Succeeded"][usize::from(phase)];
                    let fresh = pod(&name, node.as_deref(), cpu, phase);
                    // An unchanged Pod keeps its Arc, as in the informer.
                    let obj = match previous.get(&name) {
                        Some(p) if **p == *fresh => p.clone(),
                        _ => fresh,
                    };
                    now.insert(name, obj);
                }
                let pods: Vec<Arc<Value>> = now.values().cloned().collect();
                ledger.sync(&pods);
                let recount = fit::usage(pods.iter().map(|p| &**p));
                prop_assert_eq!(normalized(ledger.nodes()), normalized(&recount));
                previous = now;
            }
        }
    }
}
