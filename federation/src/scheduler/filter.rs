//! The filter stage: which clusters may hold an object, and why the others
//! may not. Pure: no I/O.
//!
//! Tolerations are not part of placement yet: every `NoSchedule` or
//! `NoExecute` taint excludes a cluster; `PreferNoSchedule` does not.

use std::collections::{BTreeMap, BTreeSet};
use std::fmt;

use skein_admission::placement::{Clusters, Placement};

use super::snapshot::{ClusterSnapshot, Readiness};

/// A group/version/resource (`group` empty for the core group).
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Gvr {
    /// API group, empty for core.
    pub group: String,
    /// Version (`v1`).
    pub version: String,
    /// Plural resource name (`deployments`).
    pub resource: String,
}

impl Gvr {
    /// Builds a Gvr from its three parts.
    pub fn new(group: &str, version: &str, resource: &str) -> Gvr {
        Gvr {
            group: group.to_owned(),
            version: version.to_owned(),
            resource: resource.to_owned(),
        }
    }

    /// `v1` or `group/version`.
    pub fn group_version(&self) -> String {
        if self.group.is_empty() {
            self.version.clone()
        } else {
            format!("{}/{}", self.group, self.version)
        }
    }
}

/// Why a cluster does not get an object.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Exclusion {
    /// Not named in `skein.io/clusters`, or its labels do not match the
    /// cluster selector.
    NotSelected,
    /// Its `Ready` condition is not `True`.
    NotReady,
    /// It does not serve the object's group/version/resource (or its
    /// inventory is not known yet).
    MissingApi,
    /// It has a `NoSchedule`/`NoExecute` taint (the first one, as
    /// `key=value:effect`).
    Tainted(String),
    /// `skein.io/clusters` names a cluster that does not exist.
    UnknownCluster,
}

impl Exclusion {
    /// The reason as written into a Placement's `status.decision.excluded`
    /// (the CRD's CamelCase): `NotSelected`, `NotReady`, `MissingAPI`,
    /// `Tainted`, `UnknownCluster`.
    pub fn reason(&self) -> &'static str {
        match self {
            Exclusion::NotSelected => "NotSelected",
            Exclusion::NotReady => "NotReady",
            Exclusion::MissingApi => "MissingAPI",
            Exclusion::Tainted(_) => "Tainted",
            Exclusion::UnknownCluster => "UnknownCluster",
        }
    }

    /// The details for people (a Placement's `message`).
    pub fn message(&self) -> String {
        match self {
            Exclusion::NotSelected => {
                "not named in skein.io/clusters or not matching the cluster selector".to_owned()
            }
            Exclusion::NotReady => "the cluster is not Ready".to_owned(),
            Exclusion::MissingApi => {
                "the cluster does not serve the object's group/version/resource".to_owned()
            }
            Exclusion::Tainted(t) => format!("the cluster has the taint {t}"),
            Exclusion::UnknownCluster => "no Cluster has this name".to_owned(),
        }
    }
}

impl fmt::Display for Exclusion {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Exclusion::Tainted(t) => write!(f, "Tainted: {t}"),
            other => f.write_str(other.reason()),
        }
    }
}

/// The clusters that may hold an object of `gvr` placed by `placement`
/// (sorted by name), and every other cluster with the first reason it is
/// excluded, checked in the order: selection (`skein.io/clusters` and the
/// selector), readiness, API, taints. Names in `skein.io/clusters` with no
/// snapshot are [`Exclusion::UnknownCluster`]. The result does not depend
/// on the order of `clusters`; a duplicated name keeps its first snapshot.
pub fn filter(
    gvr: &Gvr,
    placement: &Placement,
    clusters: &[ClusterSnapshot],
) -> (Vec<String>, BTreeMap<String, Exclusion>) {
    let mut by_name: BTreeMap<&str, &ClusterSnapshot> = BTreeMap::new();
    for c in clusters {
        by_name.entry(c.name.as_str()).or_insert(c);
    }
    let named = placement.effective_clusters();
    let mut eligible = Vec::new();
    let mut excluded = BTreeMap::new();
    for (name, c) in &by_name {
        match exclusion(gvr, placement, &named, c) {
            None => eligible.push((*name).to_owned()),
            Some(e) => {
                excluded.insert((*name).to_owned(), e);
            }
        }
    }
    if let Clusters::Named(names) = &named {
        for n in names {
            if !by_name.contains_key(n.as_str()) {
                excluded.insert(n.clone(), Exclusion::UnknownCluster);
            }
        }
    }
    (eligible, excluded)
}

/// Of the clusters [`filter`] excludes as [`Exclusion::NotReady`], those
/// that keep what they hold: clusters of the `previous` decision that pass
/// every other check and are [`Readiness::Unready`] (within the grace
/// period), or, when `whole_copies` (Duplicated), also
/// [`Readiness::Offline`]. Sorted by name.
pub fn kept_while_not_ready(
    gvr: &Gvr,
    placement: &Placement,
    clusters: &[ClusterSnapshot],
    previous: &BTreeSet<String>,
    whole_copies: bool,
) -> Vec<String> {
    let mut by_name: BTreeMap<&str, &ClusterSnapshot> = BTreeMap::new();
    for c in clusters {
        by_name.entry(c.name.as_str()).or_insert(c);
    }
    let named = placement.effective_clusters();
    by_name
        .into_iter()
        .filter(|(name, c)| {
            let keeps = match c.readiness() {
                Readiness::Ready => false,
                Readiness::Unready => true,
                Readiness::Offline => whole_copies,
            };
            keeps
                && previous.contains(*name)
                && exclusion_ignoring_readiness(gvr, placement, &named, c).is_none()
        })
        .map(|(name, _)| name.to_owned())
        .collect()
}

fn exclusion(
    gvr: &Gvr,
    placement: &Placement,
    named: &Clusters,
    c: &ClusterSnapshot,
) -> Option<Exclusion> {
    match exclusion_ignoring_readiness(gvr, placement, named, c) {
        Some(Exclusion::NotSelected) => Some(Exclusion::NotSelected),
        _ if !c.ready => Some(Exclusion::NotReady),
        other => other,
    }
}

fn exclusion_ignoring_readiness(
    gvr: &Gvr,
    placement: &Placement,
    named: &Clusters,
    c: &ClusterSnapshot,
) -> Option<Exclusion> {
    let in_list = match named {
        Clusters::All => true,
        Clusters::Named(names) => names.contains(&c.name),
    };
    let selected = placement
        .cluster_selector
        .as_ref()
        .is_none_or(|s| s.matches(&c.labels));
    if !(in_list && selected) {
        return Some(Exclusion::NotSelected);
    }
    if !c.serves(&gvr.group, &gvr.version, &gvr.resource) {
        return Some(Exclusion::MissingApi);
    }
    c.taints
        .iter()
        .find(|t| t.repels() && !placement.tolerates(&t.key, &t.value, &t.effect))
        .map(|t| {
            Exclusion::Tainted(if t.value.is_empty() {
                format!("{}:{}", t.key, t.effect)
            } else {
                format!("{}={}:{}", t.key, t.value, t.effect)
            })
        })
}

#[cfg(test)]
mod tests {
    use std::collections::{BTreeMap, BTreeSet};

    use skein_admission::selector::label::Selector;

    use super::super::snapshot::Taint;
    use super::*;

    fn cluster(name: &str, region: &str) -> ClusterSnapshot {
        let mut served = BTreeMap::new();
        served.insert(
            "apps/v1".to_owned(),
            BTreeSet::from(["deployments".to_owned()]),
        );
        served.insert("v1".to_owned(), BTreeSet::from(["configmaps".to_owned()]));
        ClusterSnapshot {
            name: name.to_owned(),
            labels: BTreeMap::from([("region".to_owned(), region.to_owned())]),
            ready: true,
            served: Some(std::sync::Arc::new(served)),
            ..ClusterSnapshot::default()
        }
    }

    fn deployments() -> Gvr {
        Gvr::new("apps", "v1", "deployments")
    }

    #[test]
    fn every_reason_is_reported() {
        let mut not_ready = cluster("b-notready", "eu");
        not_ready.ready = false;
        let mut no_api = cluster("c-noapi", "eu");
        no_api.served = Some(std::sync::Arc::new(BTreeMap::new()));
        let mut tainted = cluster("d-tainted", "eu");
        tainted.taints = vec![
            Taint {
                key: "spot".into(),
                value: String::new(),
                effect: "PreferNoSchedule".into(),
            },
            Taint {
                key: "maintenance".into(),
                value: "now".into(),
                effect: "NoExecute".into(),
            },
        ];
        let mut soft = cluster("e-soft", "eu");
        soft.taints = vec![Taint {
            key: "spot".into(),
            value: String::new(),
            effect: "PreferNoSchedule".into(),
        }];
        let clusters = vec![
            cluster("a-us", "us"),
            not_ready,
            no_api,
            tainted,
            soft,
            cluster("f-eu", "eu"),
        ];
        let placement = Placement {
            cluster_selector: Some(Selector::parse("region=eu").expect("selector")),
            ..Placement::default()
        };
        let (eligible, excluded) = filter(&deployments(), &placement, &clusters);
        assert_eq!(eligible, ["e-soft", "f-eu"]);
        let reasons: Vec<(&str, String)> = excluded
            .iter()
            .map(|(k, v)| (k.as_str(), v.to_string()))
            .collect();
        assert_eq!(
            reasons,
            [
                ("a-us", "NotSelected".to_owned()),
                ("b-notready", "NotReady".to_owned()),
                ("c-noapi", "MissingAPI".to_owned()),
                ("d-tainted", "Tainted: maintenance=now:NoExecute".to_owned()),
            ]
        );
    }

    #[test]
    fn tolerations_admit_tainted_clusters() {
        let mut tainted = cluster("a-tainted", "eu");
        tainted.taints = vec![Taint {
            key: "maintenance".into(),
            value: "now".into(),
            effect: "NoSchedule".into(),
        }];
        let clusters = vec![tainted, cluster("b", "eu")];
        let annotations = serde_json::json!({
            "skein.io/tolerations": r#"[{"key":"maintenance","operator":"Exists","effect":"NoSchedule"}]"#
        });
        let placement = skein_admission::placement::parse(
            annotations.as_object().expect("an object"),
            "Deployment",
        )
        .expect("valid");
        let (eligible, excluded) = filter(&deployments(), &placement, &clusters);
        assert_eq!(eligible, ["a-tainted", "b"]);
        assert!(excluded.is_empty());
        // Another effect is not tolerated.
        let annotations = serde_json::json!({
            "skein.io/tolerations": r#"[{"key":"maintenance","operator":"Exists","effect":"NoExecute"}]"#
        });
        let placement = skein_admission::placement::parse(
            annotations.as_object().expect("an object"),
            "Deployment",
        )
        .expect("valid");
        let (eligible, _) = filter(&deployments(), &placement, &clusters);
        assert_eq!(eligible, ["b"]);
    }

    #[test]
    fn named_clusters_and_unknown_names() {
        let clusters = vec![cluster("a", "eu"), cluster("b", "us"), cluster("c", "eu")];
        let placement = Placement {
            clusters: Some(Clusters::Named(vec![
                "c".into(),
                "ghost".into(),
                "b".into(),
            ])),
            cluster_selector: Some(Selector::parse("region in (eu)").expect("selector")),
            ..Placement::default()
        };
        let (eligible, excluded) = filter(&deployments(), &placement, &clusters);
        assert_eq!(eligible, ["c"]);
        assert_eq!(excluded["a"], Exclusion::NotSelected);
        assert_eq!(excluded["b"], Exclusion::NotSelected);
        assert_eq!(excluded["ghost"], Exclusion::UnknownCluster);
        assert_eq!(excluded["ghost"].reason(), "UnknownCluster");
    }

    #[test]
    fn core_group_and_unknown_inventory() {
        let mut unknown = cluster("b", "eu");
        unknown.served = None;
        let clusters = vec![cluster("a", "eu"), unknown];
        let (eligible, excluded) = filter(
            &Gvr::new("", "v1", "configmaps"),
            &Placement::default(),
            &clusters,
        );
        assert_eq!(eligible, ["a"]);
        assert_eq!(excluded["b"], Exclusion::MissingApi);
        let (eligible, _) = filter(
            &Gvr::new("batch", "v1", "jobs"),
            &Placement::default(),
            &clusters,
        );
        assert!(eligible.is_empty());
    }

    #[test]
    fn order_of_snapshots_does_not_matter() {
        let mut clusters = vec![cluster("c", "eu"), cluster("a", "us"), cluster("b", "eu")];
        let p = Placement::default();
        let first = filter(&deployments(), &p, &clusters);
        clusters.reverse();
        assert_eq!(filter(&deployments(), &p, &clusters), first);
        assert_eq!(first.0, ["a", "b", "c"]);
    }
}
