//! The federation's invariants once faults stop (issue 31's chaos run),
//! checked from what users see: the federated objects, their Namespaces'
//! annotations, the Clusters' labels, the Placements, the member copies
//! read through each member's own API, and the federation's Events.
//!
//! The expected placement is computed here, independently of Skein's
//! scheduler, from the placement annotations (DESIGN §3): the cluster
//! choice (`skein.io/clusters`, `skein.io/cluster-selector`) is the
//! object's when it sets either, else its Namespace's; a selector is
//! kubectl `-l` syntax over the Cluster's labels. Every joined Cluster is
//! expected Ready, serving every kind, untainted (the chaos run makes them
//! so), so an object belongs on exactly the selected joined Clusters.
//!
//! [`check`] returns every violation as a sentence (empty: all hold):
//! - every federated object has a copy on each expected cluster and none
//!   elsewhere, each copy's `origin-uid` is the object's uid, its content
//!   (ConfigMap `data`, Deployment containers' images) is the object's,
//!   and a Divided Deployment's copies sum to its replicas (a Duplicated
//!   one's each hold them all);
//! - no member holds a managed copy without a live federated owner (an
//!   unjoined member holds none);
//! - no federated object or Cluster is stuck deleting (finalizers);
//! - each Placement's decision names exactly the expected clusters and
//!   every copy in it is `Applied` or `Ready` at the current generation;
//!
//! [`event_repeats`] checks that Events are aggregated: no two Events
//! share involved object, reason and message (a repeat bumps `count`).

use std::collections::{BTreeMap, BTreeSet};

use serde_json::Value;

use crate::http::Api;
use crate::member::Member;
use crate::server::Server;

/// The copy marker label and the owner annotation Skein puts on copies.
pub const MANAGED_BY: &str = "federation.skein.io/managed-by";
/// The annotation naming the federated object's uid on a copy.
pub const ORIGIN_UID: &str = "federation.skein.io/origin-uid";

/// The kinds the chaos run places: (list path under a namespace, kind,
/// Placement name prefix).
pub const KINDS: [(&str, &str, &str); 2] = [
    (
        "/api/v1/namespaces/{ns}/configmaps",
        "ConfigMap",
        "configmap",
    ),
    (
        "/apis/apps/v1/namespaces/{ns}/deployments",
        "Deployment",
        "deployment",
    ),
];

/// An admin [`Api`] for a member (its CA and admin certificate).
pub fn member_api(m: &Member) -> Api {
    let data_dir = m
        .kubeconfig_path()
        .parent()
        .expect("the kubeconfig is in the data dir")
        .to_path_buf();
    let server = Server {
        child: None,
        in_process: None,
        etcd: None,
        addr: std::net::SocketAddr::from(([127, 0, 0, 1], m.port)),
        log: data_dir.join("skein.log"),
        data_dir,
    };
    Api::new(&server)
}

/// A member as the checker sees it: its Cluster name, its API and whether
/// it is joined now (an unjoined member must hold no managed copy).
pub struct MemberView {
    /// The Cluster name it is (or was) joined as.
    pub name: String,
    /// Its own API.
    pub api: Api,
    /// Whether a Cluster of this name should exist.
    pub joined: bool,
}

/// A kubectl `-l` selector term.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Term {
    Eq(String, String),
    Ne(String, String),
    In(String, Vec<String>),
    NotIn(String, Vec<String>),
    Exists(String),
    Absent(String),
}

/// Parses kubectl `-l` syntax: `k=v`, `k==v`, `k!=v`, `k in (a,b)`,
/// `k notin (a,b)`, `k`, `!k`, comma-separated (ANDed).
fn parse_selector(s: &str) -> Result<Vec<Term>, String> {
    let mut terms = Vec::new();
    let mut depth = 0;
    let mut start = 0;
    let mut parts = Vec::new();
    for (i, c) in s.char_indices() {
        match c {
            '(' => depth += 1,
            ')' => depth -= 1,
            ',' if depth == 0 => {
                parts.push(&s[start..i]);
                start = i + 1;
            }
            _ => {}
        }
    }
    parts.push(&s[start..]);
    let set = |v: &str| -> Vec<String> {
        v.trim()
            .trim_start_matches('(')
            .trim_end_matches(')')
            .split(',')
            .map(|x| x.trim().to_owned())
            .collect()
    };
    for p in parts.into_iter().map(str::trim).filter(|p| !p.is_empty()) {
        let t = if let Some((k, v)) = p.split_once(" notin ") {
            Term::NotIn(k.trim().into(), set(v))
        } else if let Some((k, v)) = p.split_once(" in ") {
            Term::In(k.trim().into(), set(v))
        } else if let Some((k, v)) = p.split_once("!=") {
            Term::Ne(k.trim().into(), v.trim().into())
        } else if let Some((k, v)) = p.split_once("==").or_else(|| p.split_once('=')) {
            Term::Eq(k.trim().into(), v.trim().into())
        } else if let Some(k) = p.strip_prefix('!') {
            Term::Absent(k.trim().into())
        } else if p.chars().all(|c| c.is_alphanumeric() || "-_./".contains(c)) {
            Term::Exists(p.into())
        } else {
            return Err(format!("cannot parse selector term {p:?}"));
        };
        terms.push(t);
    }
    Ok(terms)
}

fn matches(terms: &[Term], labels: &BTreeMap<String, String>) -> bool {
    terms.iter().all(|t| match t {
        Term::Eq(k, v) => labels.get(k) == Some(v),
        Term::Ne(k, v) => labels.get(k) != Some(v),
        Term::In(k, vs) => labels.get(k).is_some_and(|l| vs.contains(l)),
        Term::NotIn(k, vs) => labels.get(k).is_none_or(|l| !vs.contains(l)),
        Term::Exists(k) => labels.contains_key(k),
        Term::Absent(k) => !labels.contains_key(k),
    })
}

fn annotation<'a>(o: &'a Value, key: &str) -> Option<&'a str> {
    o.pointer("/metadata/annotations")
        .and_then(|a| a.get(key))
        .and_then(Value::as_str)
}

fn meta<'a>(o: &'a Value, key: &str) -> &'a str {
    o.pointer(&format!("/metadata/{key}"))
        .and_then(Value::as_str)
        .unwrap_or_default()
}

/// The clusters (of `clusters`: name → labels) an object with
/// annotations `object`, in a Namespace with annotations `namespace`,
/// belongs on (DESIGN §3), or why the annotations cannot be read.
pub fn expected_clusters(
    object: &Value,
    namespace: &Value,
    clusters: &BTreeMap<String, BTreeMap<String, String>>,
) -> Result<BTreeSet<String>, String> {
    const CHOICE: [&str; 2] = ["skein.io/clusters", "skein.io/cluster-selector"];
    let source = if CHOICE.iter().any(|k| annotation(object, k).is_some()) {
        object
    } else {
        namespace
    };
    let names: Option<BTreeSet<&str>> = match annotation(source, CHOICE[0]).map(str::trim) {
        None | Some("*") => None,
        Some(list) => Some(list.split(',').map(str::trim).collect()),
    };
    let terms = match annotation(source, CHOICE[1]) {
        Some(s) => parse_selector(s)?,
        None => Vec::new(),
    };
    Ok(clusters
        .iter()
        .filter(|(n, labels)| {
            names.as_ref().is_none_or(|ns| ns.contains(n.as_str())) && matches(&terms, labels)
        })
        .map(|(n, _)| n.clone())
        .collect())
}

/// Whether a Deployment is Divided: its own `skein.io/replica-scheduling`,
/// else its Namespace's, else Divided.
fn divided(object: &Value, namespace: &Value) -> bool {
    annotation(object, "skein.io/replica-scheduling")
        .or_else(|| annotation(namespace, "skein.io/replica-scheduling"))
        .is_none_or(|s| s == "Divided")
}

/// What a copy must carry of its federated object: ConfigMap `data`, or a
/// Deployment's container images.
fn content(kind: &str, o: &Value) -> Value {
    match kind {
        "ConfigMap" => o.get("data").cloned().unwrap_or(Value::Null),
        _ => o
            .pointer("/spec/template/spec/containers")
            .and_then(Value::as_array)
            .map(|cs| cs.iter().map(|c| c["image"].clone()).collect())
            .unwrap_or(Value::Null),
    }
}

fn items(list: &Value) -> Vec<Value> {
    list["items"].as_array().cloned().unwrap_or_default()
}

async fn get(api: &Api, path: &str, out: &mut Vec<String>, what: &str) -> Option<Value> {
    let r = api.get(path).await;
    if r.status.as_u16() == 200 {
        Some(r.json())
    } else {
        out.push(format!(
            "{what}: GET {path} answered {}: {}",
            r.status,
            r.text()
        ));
        None
    }
}

/// A federated object: `(kind, namespace, name)`.
type Key = (String, String, String);

/// What the copies of one federated object must be.
struct Expected {
    uid: String,
    content: Value,
    replicas: Option<i64>,
    divided: bool,
    /// The clusters placement puts it on.
    clusters: BTreeSet<String>,
}

/// Checks every invariant over `namespaces` (see the module
/// documentation); returns the violations, empty when all hold.
pub async fn check(fed: &Api, members: &[MemberView], namespaces: &[String]) -> Vec<String> {
    let mut out = Vec::new();
    let Some(cl) = get(
        fed,
        "/apis/federation.skein.io/v1alpha1/clusters",
        &mut out,
        "federation",
    )
    .await
    else {
        return out;
    };
    let mut clusters: BTreeMap<String, BTreeMap<String, String>> = BTreeMap::new();
    for c in items(&cl) {
        let name = meta(&c, "name").to_owned();
        if c.pointer("/metadata/deletionTimestamp").is_some() {
            out.push(format!("Cluster {name} is stuck deleting"));
        }
        if !crate::member::is_ready(&c) {
            out.push(format!("Cluster {name} is not Ready: {}", c["status"]));
        }
        let labels = c
            .pointer("/metadata/labels")
            .and_then(Value::as_object)
            .map(|m| {
                m.iter()
                    .map(|(k, v)| (k.clone(), v.as_str().unwrap_or_default().to_owned()))
                    .collect()
            })
            .unwrap_or_default();
        clusters.insert(name, labels);
    }
    for m in members {
        if m.joined != clusters.contains_key(&m.name) {
            out.push(format!(
                "member {} should {}be joined",
                m.name,
                if m.joined { "" } else { "not " }
            ));
        }
    }
    // The federated objects, and their expected copies.
    let mut expected: BTreeMap<Key, Expected> = BTreeMap::new();
    for ns in namespaces {
        let Some(nso) = get(
            fed,
            &format!("/api/v1/namespaces/{ns}"),
            &mut out,
            "federation",
        )
        .await
        else {
            continue;
        };
        for (path, kind, prefix) in KINDS {
            let path = path.replace("{ns}", ns);
            let Some(list) = get(fed, &path, &mut out, "federation").await else {
                continue;
            };
            for o in items(&list) {
                let name = meta(&o, "name").to_owned();
                if name == "kube-root-ca.crt" {
                    continue;
                }
                if o.pointer("/metadata/deletionTimestamp").is_some() {
                    out.push(format!(
                        "{kind} {ns}/{name} is stuck deleting: finalizers {}",
                        o["metadata"]["finalizers"]
                    ));
                    continue;
                }
                let want = match expected_clusters(&o, &nso, &clusters) {
                    Ok(w) => w,
                    Err(e) => {
                        out.push(format!("{kind} {ns}/{name}: {e}"));
                        continue;
                    }
                };
                let replicas = o.pointer("/spec/replicas").and_then(Value::as_i64);
                let div = kind == "Deployment" && divided(&o, &nso);
                // The Placement: the decision and each copy's state.
                let pl_path = format!(
                    "/apis/federation.skein.io/v1alpha1/namespaces/{ns}/placements/{prefix}-{name}"
                );
                if let Some(p) = get(fed, &pl_path, &mut out, "federation").await {
                    check_placement(&p, &o, &want, &mut out);
                }
                expected.insert(
                    (kind.to_owned(), ns.clone(), name),
                    Expected {
                        uid: meta(&o, "uid").to_owned(),
                        content: content(kind, &o),
                        replicas,
                        divided: div,
                        clusters: want,
                    },
                );
            }
        }
    }
    // The copies, member by member.
    let mut sums: BTreeMap<Key, i64> = BTreeMap::new();
    let mut seen: BTreeSet<(Key, String)> = BTreeSet::new();
    for m in members {
        for ns in namespaces {
            for (path, kind, _) in KINDS {
                let path = format!("{}?labelSelector={MANAGED_BY}", path.replace("{ns}", ns));
                let Some(list) = get(&m.api, &path, &mut out, &format!("member {}", m.name)).await
                else {
                    continue;
                };
                for copy in items(&list) {
                    let key = (kind.to_owned(), ns.clone(), meta(&copy, "name").to_owned());
                    let what = format!("{kind} {ns}/{} on {}", key.2, m.name);
                    let Some(Expected {
                        uid,
                        content: body,
                        replicas,
                        divided: div,
                        clusters: want,
                    }) = expected.get(&key)
                    else {
                        out.push(format!("{what}: a managed copy without a federated owner"));
                        continue;
                    };
                    if !m.joined || !want.contains(&m.name) {
                        out.push(format!(
                            "{what}: a copy where placement does not put it (expected on {want:?})"
                        ));
                        continue;
                    }
                    if annotation(&copy, ORIGIN_UID) != Some(uid.as_str()) {
                        out.push(format!(
                            "{what}: origin-uid {:?}, the object's uid is {uid}",
                            annotation(&copy, ORIGIN_UID)
                        ));
                    }
                    if &content(kind, &copy) != body {
                        out.push(format!(
                            "{what}: content {} but the federated object has {body}",
                            content(kind, &copy)
                        ));
                    }
                    let got = copy.pointer("/spec/replicas").and_then(Value::as_i64);
                    if *div {
                        *sums.entry(key.clone()).or_default() += got.unwrap_or(0);
                    } else if got != *replicas {
                        out.push(format!(
                            "{what}: {got:?} replicas, Duplicated wants {replicas:?}"
                        ));
                    }
                    seen.insert((key, m.name.clone()));
                }
            }
        }
    }
    for (key, e) in &expected {
        let (replicas, div, want) = (&e.replicas, &e.divided, &e.clusters);
        for c in want {
            if !seen.contains(&(key.clone(), c.clone())) {
                out.push(format!("{} {}/{}: no copy on {c}", key.0, key.1, key.2));
            }
        }
        if *div && !want.is_empty() {
            let sum = sums.get(key).copied().unwrap_or(0);
            if Some(sum) != *replicas {
                out.push(format!(
                    "{} {}/{}: copies hold {sum} replicas, the object {replicas:?}",
                    key.0, key.1, key.2
                ));
            }
        }
    }
    out
}

fn check_placement(p: &Value, o: &Value, want: &BTreeSet<String>, out: &mut Vec<String>) {
    let what = format!("Placement {}/{}", meta(p, "namespace"), meta(p, "name"));
    let decided: BTreeSet<String> = p
        .pointer("/status/decision/clusters")
        .and_then(Value::as_array)
        .map(|cs| {
            cs.iter()
                .filter_map(|c| c["name"].as_str().map(str::to_owned))
                .collect()
        })
        .unwrap_or_default();
    if &decided != want {
        out.push(format!(
            "{what}: decision {decided:?}, placement says {want:?}"
        ));
    }
    // Kinds without a spec (ConfigMaps) have no generation: Skein records 0.
    let generation = Some(
        o.pointer("/metadata/generation")
            .and_then(Value::as_i64)
            .unwrap_or(0),
    );
    let lines = p
        .pointer("/status/clusters")
        .and_then(Value::as_array)
        .cloned()
        .unwrap_or_default();
    for c in want {
        let line = lines.iter().find(|l| l["name"] == c.as_str());
        let state = line.and_then(|l| l["state"].as_str()).unwrap_or("none");
        let applied = line.and_then(|l| l["appliedGeneration"].as_i64());
        if !matches!(state, "Applied" | "Ready") || applied != generation {
            out.push(format!(
                "{what}: {c} is {state} at generation {applied:?}, the object is at {generation:?}"
            ));
        }
    }
    for l in &lines {
        let name = l["name"].as_str().unwrap_or_default();
        if !want.contains(name) {
            out.push(format!(
                "{what}: a line for {name}, which placement excludes: {l}"
            ));
        }
    }
}

/// Events of the federation repeated as new objects instead of a count
/// bump (upstream's recorder aggregates identical Events): one sentence
/// per repeated (involved object, reason, message); empty when none.
pub async fn event_repeats(fed: &Api) -> Vec<String> {
    let mut out = Vec::new();
    let Some(list) = get(fed, "/api/v1/events", &mut out, "federation").await else {
        return out;
    };
    let mut by_key: BTreeMap<(String, String, String), usize> = BTreeMap::new();
    for e in items(&list) {
        let key = (
            e.pointer("/involvedObject/uid")
                .and_then(Value::as_str)
                .unwrap_or_default()
                .to_owned(),
            e["reason"].as_str().unwrap_or_default().to_owned(),
            e["message"].as_str().unwrap_or_default().to_owned(),
        );
        *by_key.entry(key).or_default() += 1;
    }
    for ((uid, reason, message), n) in by_key {
        if n > 1 {
            out.push(format!(
                "{n} Events for one object (uid {uid}) with reason {reason} and message \
                 {message:?}: repeats are not aggregated"
            ));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn labels(pairs: &[(&str, &str)]) -> BTreeMap<String, String> {
        pairs
            .iter()
            .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
            .collect()
    }

    #[test]
    fn selectors_follow_kubectl_syntax() {
        let l = labels(&[("region", "eu"), ("tier", "gold")]);
        for (s, want) in [
            ("region=eu", true),
            ("region==eu,tier=gold", true),
            ("region!=eu", false),
            ("region in (eu, us)", true),
            ("region notin (eu,us)", false),
            ("tier", true),
            ("!tier", false),
            ("!zone", true),
            ("region in (us),tier", false),
        ] {
            assert_eq!(matches(&parse_selector(s).expect(s), &l), want, "{s}");
        }
    }

    #[test]
    fn the_object_choice_replaces_the_namespace_choice() {
        let clusters: BTreeMap<_, _> = [
            ("a".to_owned(), labels(&[("region", "eu")])),
            ("b".to_owned(), labels(&[("region", "us")])),
            ("c".to_owned(), labels(&[("region", "eu")])),
        ]
        .into();
        let ns = json!({"metadata": {"annotations": {"skein.io/cluster-selector": "region=eu"}}});
        let plain = json!({"metadata": {}});
        let named = json!({"metadata": {"annotations": {"skein.io/clusters": "a,b"}}});
        let set = |v: &[&str]| v.iter().map(|s| (*s).to_owned()).collect::<BTreeSet<_>>();
        assert_eq!(
            expected_clusters(&plain, &ns, &clusters),
            Ok(set(&["a", "c"]))
        );
        assert_eq!(
            expected_clusters(&named, &ns, &clusters),
            Ok(set(&["a", "b"]))
        );
        assert_eq!(
            expected_clusters(&plain, &plain, &clusters),
            Ok(set(&["a", "b", "c"]))
        );
    }
}
