//! `ReplicaAllocationPreferences` (Federation V1's replica planner input):
//! `{"rebalance": false, "clusters": {"east": {"weight": 2, "minReplicas": 1,
//! "maxReplicas": 10}, "*": {"weight": 1}}}`.

use std::collections::BTreeMap;

use serde_json::Value;

/// How replicas are split over clusters (the whole annotation).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ReplicaPreferences {
    /// Whether existing assignments may be moved to follow the weights.
    pub rebalance: bool,
    /// Per cluster name, or `*` for every cluster not named.
    pub clusters: BTreeMap<String, ClusterPreferences>,
}

impl Default for ReplicaPreferences {
    /// `{"clusters":{"*":{"weight":1}}}` (DESIGN.md §3).
    fn default() -> Self {
        let mut clusters = BTreeMap::new();
        clusters.insert(
            "*".to_owned(),
            ClusterPreferences {
                weight: 1,
                min_replicas: 0,
                max_replicas: None,
            },
        );
        Self {
            rebalance: false,
            clusters,
        }
    }
}

/// One cluster's entry.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ClusterPreferences {
    /// Relative share of the replicas left after minimums; 0 gets only its
    /// minimum. Default 0, as V1.
    pub weight: i64,
    /// Replicas this cluster gets first. Default 0.
    pub min_replicas: i64,
    /// Upper bound; `None` is unbounded.
    pub max_replicas: Option<i64>,
}

/// Parses and checks the JSON text. Field names match case-insensitively,
/// as Federation V1's Go decoder matched them (`"Rebalance"`, `"Clusters"`,
/// `"Weight"`, `"MinReplicas"`, `"MaxReplicas"` work); cluster names are
/// matched exactly. Unknown fields are rejected so a typo (`"minReplica"`)
/// is not silently ignored, and so is a field given twice in different
/// cases (V1 silently kept the last one).
///
/// # Errors
///
/// The first problem, worded for the user (the caller adds which
/// annotation it is).
pub fn parse(text: &str) -> Result<ReplicaPreferences, String> {
    let v: Value = serde_json::from_str(text).map_err(|e| format!("must be valid JSON: {e}"))?;
    let Value::Object(top) = v else {
        return Err("must be a JSON object".into());
    };
    let mut out = ReplicaPreferences {
        rebalance: false,
        clusters: BTreeMap::new(),
    };
    let mut seen = Vec::new();
    for (k, v) in &top {
        match field(k, &["rebalance", "clusters"], &mut seen)? {
            "rebalance" => {
                out.rebalance = v
                    .as_bool()
                    .ok_or_else(|| "\"rebalance\" must be a boolean".to_owned())?;
            }
            "clusters" => {
                let Value::Object(clusters) = v else {
                    return Err(
                        "\"clusters\" must be an object of cluster name to preferences".into(),
                    );
                };
                for (name, prefs) in clusters {
                    if name != "*" && !super::valid_cluster_name(name) {
                        return Err(format!(
                            "\"clusters\" key {name:?} must be \"*\" or a valid cluster name (a lowercase RFC 1123 subdomain)"
                        ));
                    }
                    let p = cluster(prefs).map_err(|e| format!("clusters[{name}]: {e}"))?;
                    out.clusters.insert(name.clone(), p);
                }
            }
            _ => {
                return Err(format!(
                    "unknown field {k:?} (known fields: \"rebalance\", \"clusters\")"
                ));
            }
        }
    }
    Ok(out)
}

/// The known field `key` stands for (matched ASCII case-insensitively, as
/// Go's `encoding/json`), or `""` when it is unknown. A field met twice
/// (`"weight"` and `"Weight"`) is an error.
fn field(
    key: &str,
    known: &[&'static str],
    seen: &mut Vec<&'static str>,
) -> Result<&'static str, String> {
    let Some(name) = known.iter().find(|k| k.eq_ignore_ascii_case(key)) else {
        return Ok("");
    };
    if seen.contains(name) {
        return Err(format!("field {name:?} is given more than once"));
    }
    seen.push(name);
    Ok(name)
}

fn cluster(v: &Value) -> Result<ClusterPreferences, String> {
    let Value::Object(m) = v else {
        return Err("must be an object".into());
    };
    let mut p = ClusterPreferences {
        weight: 0,
        min_replicas: 0,
        max_replicas: None,
    };
    let mut seen = Vec::new();
    for (k, v) in m {
        let n = || {
            v.as_i64()
                .ok_or_else(|| format!("{k:?} must be an integer"))
        };
        match field(k, &["weight", "minReplicas", "maxReplicas"], &mut seen)? {
            "weight" => p.weight = n()?,
            "minReplicas" => p.min_replicas = n()?,
            "maxReplicas" => {
                p.max_replicas = if v.is_null() { None } else { Some(n()?) };
            }
            _ => {
                return Err(format!(
                    "unknown field {k:?} (known fields: \"weight\", \"minReplicas\", \"maxReplicas\")"
                ));
            }
        }
    }
    if p.weight < 0 {
        return Err("\"weight\" must be greater than or equal to 0".into());
    }
    if p.min_replicas < 0 {
        return Err("\"minReplicas\" must be greater than or equal to 0".into());
    }
    if let Some(max) = p.max_replicas
        && max < p.min_replicas
    {
        return Err("\"maxReplicas\" must be greater than or equal to \"minReplicas\"".into());
    }
    Ok(p)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_the_design_example() {
        let p = parse(r#"{"rebalance":false,"clusters":{"east":{"weight":2,"minReplicas":1,"maxReplicas":10},"*":{"weight":1}}}"#).unwrap();
        assert!(!p.rebalance);
        assert_eq!(
            p.clusters["east"],
            ClusterPreferences {
                weight: 2,
                min_replicas: 1,
                max_replicas: Some(10)
            }
        );
        assert_eq!(p.clusters["*"].weight, 1);
        assert_eq!(
            parse(r#"{"clusters":{"*":{"weight":1}}}"#).unwrap(),
            ReplicaPreferences::default()
        );
    }

    #[test]
    fn field_names_match_case_insensitively_as_v1() {
        let p = parse(
            r#"{"Rebalance":true,"Clusters":{"East":{"Weight":2,"MinReplicas":1,"MaxReplicas":10},"*":{"WEIGHT":1}}}"#,
        );
        // Cluster names are not folded: "East" is not a cluster name.
        assert!(p.unwrap_err().contains("\"clusters\" key \"East\""));
        let p = parse(
            r#"{"Rebalance":true,"CLUSTERS":{"east":{"Weight":2,"minreplicas":1,"MaxReplicas":10},"*":{"WEIGHT":1}}}"#,
        )
        .unwrap();
        assert!(p.rebalance);
        assert_eq!(
            p.clusters["east"],
            ClusterPreferences {
                weight: 2,
                min_replicas: 1,
                max_replicas: Some(10)
            }
        );
        assert_eq!(p.clusters["*"].weight, 1);
        let twice = parse(r#"{"clusters":{"a":{"weight":1,"Weight":2}}}"#).unwrap_err();
        assert_eq!(
            twice,
            "clusters[a]: field \"weight\" is given more than once"
        );
        let twice = parse(r#"{"rebalance":true,"Rebalance":false}"#).unwrap_err();
        assert_eq!(twice, "field \"rebalance\" is given more than once");
    }

    #[test]
    fn rejects_bad_documents() {
        let cases = [
            ("nope", "must be valid JSON"),
            ("[]", "must be a JSON object"),
            (r#"{"rebalance":"yes"}"#, "\"rebalance\" must be a boolean"),
            (r#"{"clusterz":{}}"#, "unknown field \"clusterz\""),
            (
                r#"{"clusters":{"a":{"minReplica":1}}}"#,
                "clusters[a]: unknown field \"minReplica\"",
            ),
            (
                r#"{"clusters":{"a":{"weight":-1}}}"#,
                "clusters[a]: \"weight\" must be greater than or equal to 0",
            ),
            (
                r#"{"clusters":{"a":{"minReplicas":3,"maxReplicas":2}}}"#,
                "clusters[a]: \"maxReplicas\" must be greater than or equal to \"minReplicas\"",
            ),
            (
                r#"{"clusters":{"A_b":{}}}"#,
                "\"clusters\" key \"A_b\" must be",
            ),
            (
                r#"{"clusters":{"a":{"weight":1.5}}}"#,
                "\"weight\" must be an integer",
            ),
        ];
        for (text, want) in cases {
            let err = parse(text).unwrap_err();
            assert!(err.contains(want), "{text}: {err}");
        }
    }
}
