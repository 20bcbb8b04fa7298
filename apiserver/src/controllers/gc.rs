//! The ownerReference garbage collector.
//!
//! It keeps an index of every object's owners (built from the watch cache
//! of every resource, then kept up to date from their watches; without the
//! cache, from one list and one watch of everything) and acts on three
//! situations, as upstream's garbage collector (owners and dependents are
//! read live before anything is deleted: the index may lag):
//! - an owner is gone: dependents all of whose owners are gone are deleted
//!   (Background); dangling references to it are removed from dependents
//!   that still have other owners;
//! - an owner is being deleted with the `foregroundDeletion` finalizer: its
//!   dependents are deleted (Foreground), and once none is left the
//!   finalizer is removed;
//! - an owner is being deleted with the `orphan` finalizer: the reference is
//!   removed from each dependent, then the finalizer.

use std::collections::{HashMap, HashSet};
use std::time::Duration;

use futures::StreamExt;
use serde_json::{Value, json};

use crate::registry::object::Header;
use crate::registry::{
    DeleteOptions, FOREGROUND_FINALIZER, ORPHAN_FINALIZER, Propagation, Registry, ResourceInfo,
    Target, WriteOptions, object,
};
use crate::status::ApiError;

/// Finalizers whose controllers read the `orphan` finalizer: while one of
/// them is on an object, the collector orphans its dependents but leaves
/// the `orphan` finalizer (the federation syncer's cleanup finalizer:
/// member copies are orphaned too, then it goes).
pub const ORPHAN_WAITS_FOR: &[&str] = &["federation.skein.io/cleanup"];

/// What the collector knows about one object.
#[derive(Clone, Debug)]
struct Node {
    res: std::sync::Arc<ResourceInfo>,
    namespace: String,
    name: String,
    owners: Vec<String>,
    deleting: bool,
    finalizers: Vec<String>,
}

impl Node {
    fn of(res: std::sync::Arc<ResourceInfo>, header: Header) -> Node {
        Node {
            res,
            namespace: header.namespace,
            name: header.name,
            owners: header.owners,
            deleting: header.deleting,
            finalizers: header.finalizers,
        }
    }
}

/// The uids of every object the collector knows: a canonical (lowercase,
/// hyphenated) UUID, as Skein makes them, is held in 16 bytes; any other
/// uid as its string.
#[derive(Default)]
struct Uids {
    uuids: HashSet<u128>,
    other: HashSet<Box<str>>,
}

impl Uids {
    fn insert(&mut self, uid: &str) {
        match parse_uuid(uid) {
            Some(u) => self.uuids.insert(u),
            None => self.other.insert(uid.into()),
        };
    }

    fn remove(&mut self, uid: &str) {
        match parse_uuid(uid) {
            Some(u) => self.uuids.remove(&u),
            None => self.other.remove(uid),
        };
    }

    fn contains(&self, uid: &str) -> bool {
        match parse_uuid(uid) {
            Some(u) => self.uuids.contains(&u),
            None => self.other.contains(uid),
        }
    }
}

/// `s` as a number if it is a UUID in canonical form (8-4-4-4-12 lowercase
/// hex digits), so that distinct strings never share a number.
fn parse_uuid(s: &str) -> Option<u128> {
    let b = s.as_bytes();
    if b.len() != 36 {
        return None;
    }
    let mut n: u128 = 0;
    for (i, &c) in b.iter().enumerate() {
        let digit = match (i, c) {
            (8 | 13 | 18 | 23, b'-') => continue,
            (8 | 13 | 18 | 23, _) => return None,
            (_, b'0'..=b'9') => c - b'0',
            (_, b'a'..=b'f') => c - b'a' + 10,
            _ => return None,
        };
        n = (n << 4) | u128::from(digit);
    }
    Some(n)
}

/// The owner index. Every object's uid is in `present`; only objects that
/// have owners or are being deleted, the ones the collector acts on, have
/// a [`Node`] (most objects have neither, and cost 16 bytes here).
#[derive(Default)]
struct Graph {
    present: Uids,
    nodes: HashMap<String, Node>,
    dependents: HashMap<String, HashSet<String>>,
}

impl Graph {
    fn upsert(&mut self, uid: &str, node: Node) {
        self.remove(uid);
        self.present.insert(uid);
        if node.owners.is_empty() && !node.deleting {
            return;
        }
        for owner in &node.owners {
            self.dependents
                .entry(owner.clone())
                .or_default()
                .insert(uid.to_string());
        }
        self.nodes.insert(uid.to_string(), node);
    }

    /// Forgets `uid`; returns its node if it had one.
    fn remove(&mut self, uid: &str) -> Option<Node> {
        self.present.remove(uid);
        let node = self.nodes.remove(uid)?;
        for owner in &node.owners {
            if let Some(set) = self.dependents.get_mut(owner) {
                set.remove(uid);
                if set.is_empty() {
                    self.dependents.remove(owner);
                }
            }
        }
        Some(node)
    }

    /// Whether an object with `uid` exists (as far as the index knows).
    fn contains(&self, uid: &str) -> bool {
        self.present.contains(uid)
    }

    fn dependents_of(&self, uid: &str) -> Vec<(String, Node)> {
        self.dependents
            .get(uid)
            .map(|set| {
                set.iter()
                    .filter_map(|d| self.nodes.get(d).map(|n| (d.clone(), n.clone())))
                    .collect()
            })
            .unwrap_or_default()
    }
}

fn system() -> WriteOptions {
    WriteOptions {
        dry_run: false,
        field_manager: "skein-garbage-collector".into(),
        ..WriteOptions::default()
    }
}

/// Runs forever, relisting after any watch failure.
pub async fn run(registry: Registry) {
    loop {
        if let Err(e) = run_once(&registry).await {
            tracing::warn!(error = %e, "garbage collector restarting");
        }
        tokio::time::sleep(Duration::from_millis(500)).await;
    }
}

async fn run_once(registry: &Registry) -> Result<(), ApiError> {
    let (objects, mut changes) = registry.observe_all().await?;
    let mut graph = Graph::default();
    for (res, header) in objects {
        let uid = header.uid.clone();
        graph.upsert(&uid, Node::of(res, header));
    }
    // Work left over from before a restart.
    let deleting: Vec<(String, Node)> = graph
        .nodes
        .iter()
        .filter(|(_, n)| n.deleting)
        .map(|(u, n)| (u.clone(), n.clone()))
        .collect();
    for (uid, node) in deleting {
        handle_deleting_owner(registry, &graph, &uid, &node).await;
    }
    let mut tick = tokio::time::interval(Duration::from_secs(1));
    loop {
        tokio::select! {
            change = changes.next() => {
                let Some(change) = change else { return Ok(()) };
                let change = change?;
                match (change.object, change.previous) {
                    (Some(header), _) => {
                        let uid = header.uid.clone();
                        let node = Node::of(change.res, header);
                        graph.upsert(&uid, node.clone());
                        if node.deleting {
                            handle_deleting_owner(registry, &graph, &uid, &node).await;
                        }
                        // A new object whose owners are all gone is garbage.
                        if !node.owners.is_empty() && node.owners.iter().all(|o| !graph.contains(o)) {
                            collect_dependent(registry, &uid, &node).await;
                        }
                    }
                    (None, Some(prev)) => {
                        let uid = prev.uid;
                        let gone = graph.remove(&uid);
                        for (duid, dnode) in graph.dependents_of(&uid) {
                            collect_dependent(registry, &duid, &dnode).await;
                        }
                        // An owner waiting in foreground may now be free.
                        if let Some(gone) = gone {
                            for owner in gone.owners {
                                if let Some(onode) = graph.nodes.get(&owner).cloned()
                                    && onode.deleting
                                {
                                    handle_deleting_owner(registry, &graph, &owner, &onode).await;
                                }
                            }
                        }
                    }
                    (None, None) => {}
                }
            }
            _ = tick.tick() => {
                let deleting: Vec<(String, Node)> = graph
                    .nodes
                    .iter()
                    .filter(|(_, n)| n.deleting && (n.finalizers.iter().any(|f| f == FOREGROUND_FINALIZER || f == ORPHAN_FINALIZER)))
                    .map(|(u, n)| (u.clone(), n.clone()))
                    .collect();
                for (uid, node) in deleting {
                    handle_deleting_owner(registry, &graph, &uid, &node).await;
                }
            }
        }
    }
}

/// A dependent one of whose owners disappeared from the index (or, for a
/// new object, none of whose owners is in it). The index is fed by one
/// watch per resource, so it may lag one resource behind another (an owner
/// not seen yet, a dependent's orphaning not seen yet): before acting, the
/// dependent is read again and each of its owners is looked up live, as
/// upstream's collector verifies owners before deleting.
async fn collect_dependent(registry: &Registry, uid: &str, node: &Node) {
    match verify_and_collect(registry, uid, node).await {
        Ok(true) => tracing::debug!(uid, name = %node.name, "garbage collected"),
        Ok(false) => {}
        Err(e) if e.reason() == "NotFound" || e.reason() == "Conflict" => {}
        Err(e) => tracing::warn!(name = %node.name, error = %e, "garbage collection failed"),
    }
}

/// Deletes the dependent if every owner it names now is gone, or removes
/// the references to the gone ones if some remain. Returns whether it
/// changed anything.
async fn verify_and_collect(registry: &Registry, uid: &str, node: &Node) -> Result<bool, ApiError> {
    let current = registry.get(&node.res, &node.namespace, &node.name).await?;
    if object::uid(&current) != uid {
        return Ok(false);
    }
    let refs = object::owner_refs(&current);
    let mut gone = Vec::new();
    for r in &refs {
        if !owner_exists(registry, &node.namespace, r).await {
            gone.push(
                r.get("uid")
                    .and_then(Value::as_str)
                    .unwrap_or_default()
                    .to_string(),
            );
        }
    }
    if gone.is_empty() {
        return Ok(false);
    }
    if gone.len() == refs.len() {
        let opts = DeleteOptions {
            propagation: Some(Propagation::Background),
            precondition_uid: Some(uid.to_string()),
            precondition_rv: object::meta_str(&current, "resourceVersion").map(str::to_string),
            ..DeleteOptions::default()
        };
        registry
            .delete(&node.res, &node.namespace, &node.name, &opts)
            .await?;
    } else {
        for owner in &gone {
            remove_owner_ref(registry, node, owner).await?;
        }
    }
    Ok(true)
}

/// Whether the owner `reference` names (in `namespace` when it is
/// namespaced) exists with the referenced uid, read live. An unknown kind
/// or a different uid is absent, as upstream; a failed read counts as
/// present (nothing is deleted on doubt).
async fn owner_exists(registry: &Registry, namespace: &str, reference: &Value) -> bool {
    let field = |f: &str| reference.get(f).and_then(Value::as_str).unwrap_or_default();
    let (group, version) = match field("apiVersion").split_once('/') {
        Some((g, v)) => (g, v),
        None => ("", field("apiVersion")),
    };
    let Some(res) = registry.resources().by_kind(group, version, field("kind")) else {
        return false;
    };
    let ns = if res.namespaced { namespace } else { "" };
    match registry.get(&res, ns, field("name")).await {
        Ok(owner) => object::uid(&owner) == field("uid"),
        Err(e) => e.reason() != "NotFound",
    }
}

/// Read-modify-write of a node's object as the collector.
async fn edit(
    registry: &Registry,
    node: &Node,
    change: impl Fn(&Value) -> Value + Send + Sync,
) -> Result<(), ApiError> {
    registry
        .update_with(
            &node.res,
            &node.namespace,
            &node.name,
            Target::Main,
            &system(),
            |current| Ok(change(current)),
        )
        .await
        .map(|_| ())
}

async fn remove_owner_ref(registry: &Registry, node: &Node, owner: &str) -> Result<(), ApiError> {
    edit(registry, node, |current| {
        let mut next = current.clone();
        let kept: Vec<Value> = object::owner_refs(current)
            .into_iter()
            .filter(|r| r.get("uid").and_then(Value::as_str) != Some(owner))
            .collect();
        object::set_meta(
            &mut next,
            "ownerReferences",
            (!kept.is_empty()).then(|| json!(kept)),
        );
        next
    })
    .await
}

async fn remove_finalizer(
    registry: &Registry,
    node: &Node,
    finalizer: &str,
) -> Result<(), ApiError> {
    edit(registry, node, |current| {
        let mut next = current.clone();
        let kept: Vec<String> = object::finalizers(current)
            .into_iter()
            .filter(|f| f != finalizer)
            .collect();
        object::set_finalizers(&mut next, &kept);
        next
    })
    .await
}

/// An owner being deleted with a GC finalizer.
async fn handle_deleting_owner(registry: &Registry, graph: &Graph, uid: &str, node: &Node) {
    let dependents = graph.dependents_of(uid);
    let result = if node.finalizers.iter().any(|f| f == ORPHAN_FINALIZER) {
        let mut r = Ok(());
        for (_, d) in &dependents {
            if let Err(e) = remove_owner_ref(registry, d, uid).await
                && e.reason() != "NotFound"
            {
                r = Err(e);
            }
        }
        match r {
            // The federation's syncer reads the orphan finalizer to orphan
            // member copies too: it stays until the syncer is done.
            Ok(())
                if node
                    .finalizers
                    .iter()
                    .any(|f| ORPHAN_WAITS_FOR.contains(&f.as_str())) =>
            {
                Ok(())
            }
            Ok(()) => remove_finalizer(registry, node, ORPHAN_FINALIZER).await,
            Err(e) => Err(e),
        }
    } else if node.finalizers.iter().any(|f| f == FOREGROUND_FINALIZER) {
        if dependents.is_empty() {
            remove_finalizer(registry, node, FOREGROUND_FINALIZER).await
        } else {
            let opts = DeleteOptions {
                propagation: Some(Propagation::Foreground),
                ..DeleteOptions::default()
            };
            let mut r = Ok(());
            for (_, d) in dependents.iter().filter(|(_, d)| !d.deleting) {
                if let Err(e) = registry.delete(&d.res, &d.namespace, &d.name, &opts).await
                    && e.reason() != "NotFound"
                {
                    r = Err(e);
                }
            }
            r
        }
    } else {
        Ok(())
    };
    match result {
        Ok(()) => {}
        Err(e) if e.reason() == "NotFound" => {}
        Err(e) => {
            tracing::warn!(name = %node.name, error = %e, "garbage collector: owner handling failed")
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::registry::resource;

    fn node(owners: &[&str], deleting: bool) -> Node {
        Node {
            res: resource::builtin("", "v1", "configmaps").expect("configmaps are served"),
            namespace: "ns".into(),
            name: "n".into(),
            owners: owners.iter().map(|o| o.to_string()).collect(),
            deleting,
            finalizers: vec![],
        }
    }

    const OWNER: &str = "0f8fad5b-d9cb-469f-a165-70867728950e";
    const CHILD: &str = "7c9e6679-7425-40de-944b-e07fc1f90ae7";

    #[test]
    fn canonical_uuids_are_numbers_and_other_uids_stay_strings() {
        assert_eq!(
            parse_uuid("00000000-0000-0000-0000-00000000001f"),
            Some(0x1f)
        );
        assert!(parse_uuid(OWNER).is_some());
        // Upper case, missing hyphens, other lengths: not canonical.
        assert_eq!(parse_uuid(&OWNER.to_uppercase()), None);
        assert_eq!(parse_uuid(&OWNER.replace('-', "")), None);
        assert_eq!(parse_uuid("0f8fad5b-d9cb-469f-a165-70867728950"), None);
        assert_eq!(parse_uuid("0f8fad5b+d9cb-469f-a165-70867728950e"), None);
        let mut uids = Uids::default();
        uids.insert(OWNER);
        uids.insert("my-uid");
        assert!(uids.contains(OWNER) && uids.contains("my-uid"));
        assert!(!uids.contains(&OWNER.to_uppercase()));
        uids.remove(OWNER);
        uids.remove("my-uid");
        assert!(!uids.contains(OWNER) && !uids.contains("my-uid"));
    }

    #[test]
    fn only_dependents_and_deleting_objects_keep_a_node() {
        let mut g = Graph::default();
        g.upsert(OWNER, node(&[], false));
        g.upsert(CHILD, node(&[OWNER], false));
        assert!(g.contains(OWNER) && g.contains(CHILD));
        assert_eq!(g.nodes.len(), 1, "a plain object keeps only its uid");
        let deps: Vec<String> = g.dependents_of(OWNER).into_iter().map(|(u, _)| u).collect();
        assert_eq!(deps, [CHILD]);
        // The owner starts deleting: now it has a node; it stops: gone again.
        g.upsert(OWNER, node(&[], true));
        assert!(g.nodes.contains_key(OWNER));
        g.upsert(OWNER, node(&[], false));
        assert!(!g.nodes.contains_key(OWNER) && g.contains(OWNER));
        // The owner goes: its dependents are still found.
        assert!(g.remove(OWNER).is_none());
        assert!(!g.contains(OWNER));
        assert_eq!(g.dependents_of(OWNER).len(), 1);
        let gone = g.remove(CHILD).expect("the dependent had a node");
        assert_eq!(gone.owners, [OWNER]);
        assert!(g.dependents.is_empty() && g.nodes.is_empty() && !g.contains(CHILD));
    }
}
