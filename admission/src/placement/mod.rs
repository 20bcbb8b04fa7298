//! Placement annotations (DESIGN.md §3): where an object goes and how it
//! is synced, parsed into a typed [`Placement`] for the scheduler and
//! syncer, and checked at admission ([`PlacementValidation`]).
//!
//! Every annotation is optional; [`Placement`] keeps `None` for "not set"
//! so namespace defaults can be layered under an object's own annotations
//! ([`Placement::or`]); the effective values with the design's defaults
//! come from the accessor methods.

mod overrides;
mod plugin;
mod preferences;
mod tolerations;

use std::collections::BTreeMap;

use serde_json::{Map, Value};

pub use overrides::Override;
pub use plugin::PlacementValidation;
pub use preferences::{ClusterPreferences, ReplicaPreferences};
pub use tolerations::Toleration;

use crate::Cause;
use crate::path::Path;
use crate::selector::label::{Operator, Requirement, Selector};

/// `skein.io/clusters`.
pub const CLUSTERS: &str = "skein.io/clusters";
/// `skein.io/cluster-selector`.
pub const CLUSTER_SELECTOR: &str = "skein.io/cluster-selector";
/// `skein.io/replica-scheduling`.
pub const REPLICA_SCHEDULING: &str = "skein.io/replica-scheduling";
/// `skein.io/replica-preferences`.
pub const REPLICA_PREFERENCES: &str = "skein.io/replica-preferences";
/// `skein.io/replica-weighting`.
pub const REPLICA_WEIGHTING: &str = "skein.io/replica-weighting";
/// `skein.io/conflict-resolution`.
pub const CONFLICT_RESOLUTION: &str = "skein.io/conflict-resolution";
/// `skein.io/drift`.
pub const DRIFT: &str = "skein.io/drift";
/// `skein.io/tolerations`.
pub const TOLERATIONS: &str = "skein.io/tolerations";
/// `skein.io/retain-replicas`.
pub const RETAIN_REPLICAS: &str = "skein.io/retain-replicas";
/// `skein.io/control-plane-only`.
pub const CONTROL_PLANE_ONLY: &str = "skein.io/control-plane-only";
/// Prefix of the per-cluster override annotations.
pub const OVERRIDE_PREFIX: &str = "override.skein.io/";
/// Federation V1 cluster selector (JSON list of `{key, operator, values}`).
pub const V1_CLUSTER_SELECTOR: &str = "federation.alpha.kubernetes.io/cluster-selector";
/// Federation V1 ReplicaSet preferences.
pub const V1_REPLICA_SET_PREFERENCES: &str = "federation.kubernetes.io/replica-set-preferences";
/// Federation V1 Deployment preferences.
pub const V1_DEPLOYMENT_PREFERENCES: &str = "federation.kubernetes.io/deployment-preferences";
/// Federation V1 Job preferences.
pub const V1_JOB_PREFERENCES: &str = "federation.kubernetes.io/job-preferences";

/// The `skein.io/` annotation keys Skein knows, in the order DESIGN.md
/// lists them.
pub const KNOWN: [&str; 10] = [
    CLUSTERS,
    CLUSTER_SELECTOR,
    REPLICA_SCHEDULING,
    REPLICA_PREFERENCES,
    CONFLICT_RESOLUTION,
    DRIFT,
    REPLICA_WEIGHTING,
    RETAIN_REPLICAS,
    CONTROL_PLANE_ONLY,
    TOLERATIONS,
];

/// Which clusters `skein.io/clusters` names.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Clusters {
    /// `*`: every Ready cluster (the default).
    All,
    /// These clusters, in the order written, without duplicates.
    Named(Vec<String>),
}

/// `skein.io/replica-scheduling`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ReplicaScheduling {
    /// Replicas are split over the chosen clusters.
    Divided,
    /// Every chosen cluster gets the whole object.
    Duplicated,
}

/// `skein.io/replica-weighting`: where a Divided object's weights come
/// from. In both, no cluster gets more replicas than its available
/// capacity holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ReplicaWeighting {
    /// The weights of `skein.io/replica-preferences` (default).
    Static,
    /// Weights proportional to each cluster's available capacity for the
    /// object's pod template.
    Capacity,
}

/// `skein.io/conflict-resolution`: what to do with a member object of the
/// same name that Skein does not own.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ConflictResolution {
    /// Leave it and report a conflict (default).
    Abort,
    /// Take ownership, keeping its content until the next sync.
    Adopt,
    /// Take ownership and overwrite it.
    Overwrite,
}

/// `skein.io/drift`: what to do when another manager changed a field.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Drift {
    /// Force Skein's value back (default).
    Enforce,
    /// Mark the cluster Drifted and emit an Event.
    Report,
    /// Do nothing.
    Ignore,
}

/// The placement annotations of one object (or the defaults a Namespace
/// carries). `None`/empty means "not set here".
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Placement {
    /// `skein.io/clusters`.
    pub clusters: Option<Clusters>,
    /// `skein.io/cluster-selector`, ANDed with the V1
    /// `federation.alpha.kubernetes.io/cluster-selector` when both are set;
    /// `None` when neither is.
    pub cluster_selector: Option<Selector>,
    /// `skein.io/replica-scheduling`.
    pub replica_scheduling: Option<ReplicaScheduling>,
    /// `skein.io/replica-preferences`, else the V1 preferences annotation
    /// for the object's kind.
    pub replica_preferences: Option<ReplicaPreferences>,
    /// `override.skein.io/<cluster>`, by cluster name.
    pub overrides: BTreeMap<String, Override>,
    /// `skein.io/replica-weighting`.
    pub replica_weighting: Option<ReplicaWeighting>,
    /// `skein.io/conflict-resolution`.
    pub conflict_resolution: Option<ConflictResolution>,
    /// `skein.io/drift`.
    pub drift: Option<Drift>,
    /// `skein.io/retain-replicas`.
    pub retain_replicas: Option<bool>,
    /// `skein.io/control-plane-only`.
    pub control_plane_only: Option<bool>,
    /// `skein.io/tolerations`: the Cluster taints tolerated.
    pub tolerations: Option<Vec<Toleration>>,
}

impl Placement {
    /// Each field of `self`, or `defaults`' where `self` has none (an
    /// object's own annotations over its namespace's). Overrides merge by
    /// cluster, the object's winning.
    #[must_use]
    pub fn or(self, defaults: &Placement) -> Placement {
        let mut overrides = defaults.overrides.clone();
        overrides.extend(self.overrides);
        Placement {
            clusters: self.clusters.or_else(|| defaults.clusters.clone()),
            cluster_selector: self
                .cluster_selector
                .or_else(|| defaults.cluster_selector.clone()),
            replica_scheduling: self.replica_scheduling.or(defaults.replica_scheduling),
            replica_preferences: self
                .replica_preferences
                .or_else(|| defaults.replica_preferences.clone()),
            overrides,
            replica_weighting: self.replica_weighting.or(defaults.replica_weighting),
            conflict_resolution: self.conflict_resolution.or(defaults.conflict_resolution),
            drift: self.drift.or(defaults.drift),
            retain_replicas: self.retain_replicas.or(defaults.retain_replicas),
            control_plane_only: self.control_plane_only.or(defaults.control_plane_only),
            tolerations: self.tolerations.or_else(|| defaults.tolerations.clone()),
        }
    }

    /// Whether `skein.io/tolerations` tolerates the taint
    /// `key=value:effect`.
    pub fn tolerates(&self, key: &str, value: &str, effect: &str) -> bool {
        self.tolerations
            .iter()
            .flatten()
            .any(|t| t.tolerates(key, value, effect))
    }

    /// Effective `skein.io/clusters` (default `*`).
    pub fn effective_clusters(&self) -> Clusters {
        self.clusters.clone().unwrap_or(Clusters::All)
    }

    /// Effective conflict resolution (default Abort).
    pub fn effective_conflict_resolution(&self) -> ConflictResolution {
        self.conflict_resolution
            .unwrap_or(ConflictResolution::Abort)
    }

    /// Effective drift policy (default Enforce).
    pub fn effective_drift(&self) -> Drift {
        self.drift.unwrap_or(Drift::Enforce)
    }

    /// Effective replica weighting (default Static).
    pub fn effective_replica_weighting(&self) -> ReplicaWeighting {
        self.replica_weighting.unwrap_or(ReplicaWeighting::Static)
    }

    /// Effective replica preferences (default `{"clusters":{"*":{"weight":1}}}`).
    pub fn effective_replica_preferences(&self) -> ReplicaPreferences {
        self.replica_preferences.clone().unwrap_or_default()
    }
}

/// Whether `name` can name a Cluster (a lowercase RFC 1123 subdomain, the
/// rule for cluster-scoped object names).
pub(crate) fn valid_cluster_name(name: &str) -> bool {
    crate::names::dns1123_subdomain(name).is_empty()
}

/// Parses the placement annotations of an object of `kind` (the kind picks
/// which Federation V1 preferences annotation applies: `ReplicaSet`,
/// `Deployment` or `Job`).
///
/// Annotations that are not placement annotations are ignored. An unknown
/// `skein.io/` key is an error (it is almost certainly a typo).
///
/// # Errors
///
/// Every malformed annotation, one [`Cause`] each, at
/// `metadata.annotations[<key>]`, keys in sorted order.
pub fn parse(annotations: &Map<String, Value>, kind: &str) -> Result<Placement, Vec<Cause>> {
    let base = Path::new("metadata").child("annotations");
    let mut out = Placement::default();
    let mut errs = Vec::new();
    let mut v1_selector = None;
    let mut v1_prefs = None;
    let mut keys: Vec<&String> = annotations.keys().collect();
    keys.sort();
    for key in keys {
        let raw = &annotations[key.as_str()];
        let text = raw.as_str().unwrap_or_default();
        let path = base.key(key);
        let invalid = |detail: String| Cause::invalid(&path, raw, format!("{key}: {detail}"));
        let enumerated = |supported: &[&str]| Cause::not_supported(&path, raw, supported);
        match key.as_str() {
            CLUSTERS => match parse_clusters(text) {
                Ok(c) => out.clusters = Some(c),
                Err(e) => errs.push(invalid(e)),
            },
            CLUSTER_SELECTOR => match Selector::parse(text) {
                Ok(sel) => out.cluster_selector = Some(sel),
                Err(e) => errs.push(invalid(format!(
                    "not a valid label selector: {}",
                    e.message()
                ))),
            },
            REPLICA_SCHEDULING => match text {
                "Divided" => out.replica_scheduling = Some(ReplicaScheduling::Divided),
                "Duplicated" => out.replica_scheduling = Some(ReplicaScheduling::Duplicated),
                _ => errs.push(enumerated(&["Divided", "Duplicated"])),
            },
            REPLICA_PREFERENCES => match preferences::parse(text) {
                Ok(p) => out.replica_preferences = Some(p),
                Err(e) => errs.push(invalid(e)),
            },
            REPLICA_WEIGHTING => match text {
                "Static" => out.replica_weighting = Some(ReplicaWeighting::Static),
                "Capacity" => out.replica_weighting = Some(ReplicaWeighting::Capacity),
                _ => errs.push(enumerated(&["Static", "Capacity"])),
            },
            CONFLICT_RESOLUTION => match text {
                "Abort" => out.conflict_resolution = Some(ConflictResolution::Abort),
                "Adopt" => out.conflict_resolution = Some(ConflictResolution::Adopt),
                "Overwrite" => out.conflict_resolution = Some(ConflictResolution::Overwrite),
                _ => errs.push(enumerated(&["Abort", "Adopt", "Overwrite"])),
            },
            DRIFT => match text {
                "Enforce" => out.drift = Some(Drift::Enforce),
                "Report" => out.drift = Some(Drift::Report),
                "Ignore" => out.drift = Some(Drift::Ignore),
                _ => errs.push(enumerated(&["Enforce", "Report", "Ignore"])),
            },
            RETAIN_REPLICAS | CONTROL_PLANE_ONLY => {
                let b = match text {
                    "true" => true,
                    "false" => false,
                    _ => {
                        errs.push(enumerated(&["true", "false"]));
                        continue;
                    }
                };
                if key == RETAIN_REPLICAS {
                    out.retain_replicas = Some(b);
                } else {
                    out.control_plane_only = Some(b);
                }
            }
            TOLERATIONS => match tolerations::parse(text) {
                Ok(t) => out.tolerations = Some(t),
                Err(e) => errs.push(invalid(e)),
            },
            V1_CLUSTER_SELECTOR => match parse_v1_selector(text) {
                Ok(reqs) => v1_selector = Some(reqs),
                Err(e) => errs.push(invalid(e)),
            },
            V1_REPLICA_SET_PREFERENCES | V1_DEPLOYMENT_PREFERENCES | V1_JOB_PREFERENCES => {
                match preferences::parse(text) {
                    Ok(p) => {
                        let applies = matches!(
                            (key.as_str(), kind),
                            (V1_REPLICA_SET_PREFERENCES, "ReplicaSet")
                                | (V1_DEPLOYMENT_PREFERENCES, "Deployment")
                                | (V1_JOB_PREFERENCES, "Job")
                        );
                        if applies {
                            v1_prefs = Some(p);
                        }
                    }
                    Err(e) => errs.push(invalid(e)),
                }
            }
            k if k.starts_with(OVERRIDE_PREFIX) => {
                let cluster = &k[OVERRIDE_PREFIX.len()..];
                if !valid_cluster_name(cluster) {
                    errs.push(invalid(format!(
                        "{cluster:?} is not a valid cluster name (a lowercase RFC 1123 subdomain)"
                    )));
                    continue;
                }
                match overrides::parse(text) {
                    Ok(o) => {
                        out.overrides.insert(cluster.to_owned(), o);
                    }
                    Err(e) => errs.push(invalid(e)),
                }
            }
            k if k.starts_with("skein.io/") => {
                errs.push(Cause::invalid(
                    &path,
                    raw,
                    format!(
                        "unknown placement annotation {k:?}; known skein.io annotations: {}",
                        KNOWN.join(", ")
                    ),
                ));
            }
            _ => {}
        }
    }
    if out.replica_preferences.is_none() {
        out.replica_preferences = v1_prefs;
    }
    if let Some(v1) = v1_selector {
        let mut reqs = out
            .cluster_selector
            .take()
            .map(|s| s.requirements().to_vec())
            .unwrap_or_default();
        reqs.extend(v1);
        out.cluster_selector = Some(Selector::from_requirements(reqs));
    }
    if errs.is_empty() { Ok(out) } else { Err(errs) }
}

fn parse_clusters(text: &str) -> Result<Clusters, String> {
    if text.trim() == "*" {
        return Ok(Clusters::All);
    }
    let mut names: Vec<String> = Vec::new();
    for part in text.split(',') {
        let name = part.trim();
        if name.is_empty() {
            return Err(
                "must be \"*\" or a comma-separated list of cluster names, without empty entries"
                    .into(),
            );
        }
        if name == "*" {
            return Err("\"*\" cannot be combined with cluster names".into());
        }
        if !valid_cluster_name(name) {
            return Err(format!(
                "{name:?} is not a valid cluster name (a lowercase RFC 1123 subdomain)"
            ));
        }
        if names.iter().any(|n| n == name) {
            return Err(format!("cluster {name:?} is listed more than once"));
        }
        names.push(name.to_owned());
    }
    Ok(Clusters::Named(names))
}

/// V1's `[{"key": "region", "operator": "in", "values": ["eu"]}]`.
fn parse_v1_selector(text: &str) -> Result<Vec<Requirement>, String> {
    let v: Value = serde_json::from_str(text).map_err(|e| format!("must be valid JSON: {e}"))?;
    let Value::Array(items) = v else {
        return Err("must be a JSON list of {\"key\", \"operator\", \"values\"} objects".into());
    };
    let mut out = Vec::new();
    for (i, item) in items.iter().enumerate() {
        let Value::Object(m) = item else {
            return Err(format!("[{i}]: must be an object"));
        };
        if let Some(k) = m
            .keys()
            .find(|k| !matches!(k.as_str(), "key" | "operator" | "values"))
        {
            return Err(format!(
                "[{i}]: unknown field {k:?} (known fields: \"key\", \"operator\", \"values\")"
            ));
        }
        let key = m.get("key").and_then(Value::as_str).unwrap_or_default();
        let op_text = m
            .get("operator")
            .and_then(Value::as_str)
            .unwrap_or_default();
        let op = v1_operator(op_text).ok_or_else(|| {
            format!(
                "[{i}]: unsupported operator {op_text:?} (supported: in, notin, exists, !, =, ==, !=, gt, lt)"
            )
        })?;
        let values = match m.get("values") {
            None | Some(Value::Null) => Vec::new(),
            Some(Value::Array(vs)) => vs
                .iter()
                .map(|v| v.as_str().map(str::to_owned))
                .collect::<Option<Vec<_>>>()
                .ok_or_else(|| format!("[{i}]: \"values\" must be a list of strings"))?,
            Some(_) => return Err(format!("[{i}]: \"values\" must be a list of strings")),
        };
        out.push(Requirement::new(key, op, values).map_err(|e| format!("[{i}]: {}", e.message()))?);
    }
    Ok(out)
}

/// The Federation V1 JSON spelling of an operator (upstream's
/// `selection.Operator` strings).
fn v1_operator(op: &str) -> Option<Operator> {
    Some(match op {
        "=" => Operator::Equals,
        "==" => Operator::DoubleEquals,
        "!=" => Operator::NotEquals,
        "in" => Operator::In,
        "notin" => Operator::NotIn,
        "exists" => Operator::Exists,
        "!" => Operator::DoesNotExist,
        "gt" => Operator::GreaterThan,
        "lt" => Operator::LessThan,
        _ => return None,
    })
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn annotations(v: Value) -> Map<String, Value> {
        v.as_object().unwrap().clone()
    }

    #[test]
    fn parses_every_annotation() {
        let a = annotations(json!({
            "skein.io/clusters": "east, west",
            "skein.io/cluster-selector": "region in (eu,us),!legacy",
            "skein.io/replica-scheduling": "Duplicated",
            "skein.io/replica-preferences": r#"{"rebalance":true,"clusters":{"east":{"weight":2}}}"#,
            "override.skein.io/east": r#"{"spec":{"replicas":1}}"#,
            "skein.io/conflict-resolution": "Adopt",
            "skein.io/drift": "Report",
            "skein.io/retain-replicas": "true",
            "skein.io/control-plane-only": "false",
            "skein.io/replica-weighting": "Capacity",
            "federation.alpha.kubernetes.io/cluster-selector": r#"[{"key":"tier","operator":"!=","values":["dev"]}]"#,
            "unrelated.example.com/x": "whatever",
        }));
        let p = parse(&a, "Deployment").unwrap();
        assert_eq!(
            p.clusters,
            Some(Clusters::Named(vec!["east".into(), "west".into()]))
        );
        assert_eq!(
            p.cluster_selector.unwrap().to_string(),
            "!legacy,region in (eu,us),tier!=dev"
        );
        assert_eq!(p.replica_scheduling, Some(ReplicaScheduling::Duplicated));
        assert!(p.replica_preferences.unwrap().rebalance);
        assert!(matches!(p.overrides.get("east"), Some(Override::Merge(_))));
        assert_eq!(p.conflict_resolution, Some(ConflictResolution::Adopt));
        assert_eq!(p.drift, Some(Drift::Report));
        assert_eq!(p.retain_replicas, Some(true));
        assert_eq!(p.control_plane_only, Some(false));
        assert_eq!(p.replica_weighting, Some(ReplicaWeighting::Capacity));
    }

    #[test]
    fn defaults_and_layering() {
        let p = parse(&Map::new(), "Deployment").unwrap();
        assert_eq!(p, Placement::default());
        assert_eq!(p.effective_clusters(), Clusters::All);
        assert_eq!(p.effective_drift(), Drift::Enforce);
        assert_eq!(p.effective_replica_weighting(), ReplicaWeighting::Static);
        assert_eq!(p.effective_conflict_resolution(), ConflictResolution::Abort);
        assert_eq!(
            p.effective_replica_preferences(),
            ReplicaPreferences::default()
        );

        let ns = parse(
            &annotations(json!({"skein.io/drift": "Ignore", "skein.io/clusters": "a"})),
            "Namespace",
        )
        .unwrap();
        let own = parse(
            &annotations(json!({"skein.io/clusters": "b"})),
            "Deployment",
        )
        .unwrap();
        let eff = own.or(&ns);
        assert_eq!(eff.clusters, Some(Clusters::Named(vec!["b".into()])));
        assert_eq!(eff.drift, Some(Drift::Ignore));
    }

    #[test]
    fn v1_preferences_follow_the_kind() {
        let a = annotations(json!({
            "federation.kubernetes.io/replica-set-preferences": r#"{"clusters":{"a":{"weight":3}}}"#,
        }));
        assert_eq!(
            parse(&a, "ReplicaSet")
                .unwrap()
                .replica_preferences
                .unwrap()
                .clusters["a"]
                .weight,
            3
        );
        assert_eq!(parse(&a, "Deployment").unwrap().replica_preferences, None);
        let both = annotations(json!({
            "federation.kubernetes.io/deployment-preferences": r#"{"clusters":{"a":{"weight":3}}}"#,
            "skein.io/replica-preferences": r#"{"clusters":{"b":{"weight":1}}}"#,
        }));
        let p = parse(&both, "Deployment")
            .unwrap()
            .replica_preferences
            .unwrap();
        assert!(p.clusters.contains_key("b") && !p.clusters.contains_key("a"));
    }

    #[test]
    fn malformed_annotations_name_the_key_and_problem() {
        let cases = [
            (
                "skein.io/drift",
                "Sometimes",
                r#"metadata.annotations[skein.io/drift]: Unsupported value: "Sometimes": supported values: "Enforce", "Report", "Ignore""#,
            ),
            (
                "skein.io/replica-scheduling",
                "divided",
                r#"metadata.annotations[skein.io/replica-scheduling]: Unsupported value: "divided": supported values: "Divided", "Duplicated""#,
            ),
            (
                "skein.io/conflict-resolution",
                "",
                r#"metadata.annotations[skein.io/conflict-resolution]: Unsupported value: "": supported values: "Abort", "Adopt", "Overwrite""#,
            ),
            (
                "skein.io/replica-weighting",
                "bogus",
                r#"metadata.annotations[skein.io/replica-weighting]: Unsupported value: "bogus": supported values: "Static", "Capacity""#,
            ),
            (
                "skein.io/retain-replicas",
                "yes",
                r#"metadata.annotations[skein.io/retain-replicas]: Unsupported value: "yes": supported values: "true", "false""#,
            ),
            (
                "skein.io/control-plane-only",
                "True",
                r#"metadata.annotations[skein.io/control-plane-only]: Unsupported value: "True": supported values: "true", "false""#,
            ),
            (
                "skein.io/clusters",
                "a,,b",
                r#"metadata.annotations[skein.io/clusters]: Invalid value: "a,,b": skein.io/clusters: must be "*" or a comma-separated list of cluster names, without empty entries"#,
            ),
            (
                "skein.io/clusters",
                "East",
                r#"metadata.annotations[skein.io/clusters]: Invalid value: "East": skein.io/clusters: "East" is not a valid cluster name (a lowercase RFC 1123 subdomain)"#,
            ),
            (
                "skein.io/clusters",
                "a,*",
                r#"metadata.annotations[skein.io/clusters]: Invalid value: "a,*": skein.io/clusters: "*" cannot be combined with cluster names"#,
            ),
            (
                "skein.io/clusters",
                "a,a",
                r#"metadata.annotations[skein.io/clusters]: Invalid value: "a,a": skein.io/clusters: cluster "a" is listed more than once"#,
            ),
            (
                "skein.io/cluster-selector",
                "region in (eu",
                r#"metadata.annotations[skein.io/cluster-selector]: Invalid value: "region in (eu": skein.io/cluster-selector: not a valid label selector: unable to parse requirement: found '', expected: ',' or ')'"#,
            ),
            (
                "skein.io/replica-preferences",
                r#"{"clusters":{"a":{"weight":-1}}}"#,
                r#"metadata.annotations[skein.io/replica-preferences]: Invalid value: "{\"clusters\":{\"a\":{\"weight\":-1}}}": skein.io/replica-preferences: clusters[a]: "weight" must be greater than or equal to 0"#,
            ),
            (
                "override.skein.io/east",
                "[{\"op\":\"add\"}]",
                r#"metadata.annotations[override.skein.io/east]: Invalid value: "[{\"op\":\"add\"}]": override.skein.io/east: operation [0]: "path" is required"#,
            ),
            (
                "override.skein.io/East_1",
                "{}",
                r#"metadata.annotations[override.skein.io/East_1]: Invalid value: "{}": override.skein.io/East_1: "East_1" is not a valid cluster name (a lowercase RFC 1123 subdomain)"#,
            ),
            (
                "federation.alpha.kubernetes.io/cluster-selector",
                r#"[{"key":"a","operator":"like","values":["x"]}]"#,
                r#"metadata.annotations[federation.alpha.kubernetes.io/cluster-selector]: Invalid value: "[{\"key\":\"a\",\"operator\":\"like\",\"values\":[\"x\"]}]": federation.alpha.kubernetes.io/cluster-selector: [0]: unsupported operator "like" (supported: in, notin, exists, !, =, ==, !=, gt, lt)"#,
            ),
            (
                "federation.kubernetes.io/job-preferences",
                "{",
                r#"metadata.annotations[federation.kubernetes.io/job-preferences]: Invalid value: "{": federation.kubernetes.io/job-preferences: must be valid JSON: EOF while parsing"#,
            ),
            (
                "skein.io/cluster",
                "a",
                r#"metadata.annotations[skein.io/cluster]: Invalid value: "a": unknown placement annotation "skein.io/cluster"; known skein.io annotations: skein.io/clusters, skein.io/cluster-selector, skein.io/replica-scheduling, skein.io/replica-preferences, skein.io/conflict-resolution, skein.io/drift, skein.io/replica-weighting, skein.io/retain-replicas, skein.io/control-plane-only, skein.io/tolerations"#,
            ),
        ];
        for (key, value, want) in cases {
            let errs = parse(&annotations(json!({ key: value })), "Deployment").unwrap_err();
            assert_eq!(errs.len(), 1, "{key}");
            let got = errs[0].to_string();
            assert!(got.starts_with(want), "{key}:\n got {got}\nwant {want}");
        }
    }

    #[test]
    fn v1_selector_forms() {
        let text = r#"[{"key":"a","operator":"in","values":["x","y"]},{"key":"b","operator":"exists"},{"key":"c","operator":"!"},{"key":"d","operator":"==","values":["1"]},{"key":"e","operator":"gt","values":["2"]},{"key":"f","operator":"lt","values":["9"]},{"key":"g","operator":"notin","values":["z"]}]"#;
        let reqs = parse_v1_selector(text).unwrap();
        let rendered: Vec<String> = reqs.iter().map(ToString::to_string).collect();
        assert_eq!(
            rendered,
            ["a in (x,y)", "b", "!c", "d==1", "e>2", "f<9", "g notin (z)"]
        );
        assert!(parse_v1_selector(r#"[{"key":"a","operator":"in"}]"#).is_err());
        assert!(parse_v1_selector(r#"[{"key":"a","operator":"gt","values":["x"]}]"#).is_err());
        assert!(parse_v1_selector(r#"{"key":"a"}"#).is_err());
    }
}
