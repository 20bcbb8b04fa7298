//! The StatefulSet controller, as kube-controller-manager v1.33's
//! (pkg/controller/statefulset):
//! - Pods `<set>-<ordinal>` for ordinals `start..start+replicas`, labelled
//!   `statefulset.kubernetes.io/pod-name`, `apps.kubernetes.io/pod-index`
//!   and `controller-revision-hash`, with hostname and subdomain, and a
//!   PVC `<claim>-<set>-<ordinal>` per volume claim template (created
//!   before the Pod, never deleted: the Retain policy).
//! - `OrderedReady`: one Pod at a time, the next once the previous is
//!   Running and Ready; scale-down from the highest ordinal, one at a
//!   time, once every remaining replica is healthy (an unhealthy condemned
//!   Pod only when it is the first unhealthy one). `Parallel`: all at once.
//! - Revisions are ControllerRevisions ([`history`]). `RollingUpdate`
//!   replaces Pods from the highest ordinal down to `partition`, one at a
//!   time, each once the others are healthy; `OnDelete` only gives new
//!   Pods the new revision.
//! - Status: observedGeneration, replicas, readyReplicas,
//!   availableReplicas, currentReplicas, updatedReplicas, current and
//!   update revisions (equal once a rolling update is done), collisionCount.

pub mod history;

use std::collections::BTreeMap;
use std::time::Duration;

use serde_json::{Value, json};
use time::OffsetDateTime;

use super::Sim;
use super::owner_loop::{self, int};
use super::template::{self, PodName};
use skein_apiserver::controllers::informer::ObjectKey;
use skein_apiserver::registry::object;
use skein_apiserver::status::ApiError;

const MANAGER: &str = "statefulset-controller";

/// The Pod label naming a StatefulSet Pod.
pub const POD_NAME_LABEL: &str = "statefulset.kubernetes.io/pod-name";
/// The Pod label holding a StatefulSet Pod's ordinal.
pub const POD_INDEX_LABEL: &str = "apps.kubernetes.io/pod-index";

/// What one sync of a StatefulSet does.
#[derive(Debug, Default)]
pub struct SetPlan {
    /// PersistentVolumeClaims to create (existing ones are kept).
    pub claims: Vec<Value>,
    /// Pods to create.
    pub create: Vec<Value>,
    /// Names of Pods to delete.
    pub delete: Vec<String>,
    /// The new status.
    pub status: Value,
    /// Look again after this long (minReadySeconds).
    pub requeue: Option<Duration>,
}

/// The ordinal of `pod` if it is named `<set>-<ordinal>`.
pub fn ordinal(set_name: &str, pod: &Value) -> Option<i64> {
    object::name(pod)
        .strip_prefix(set_name)?
        .strip_prefix('-')?
        .parse()
        .ok()
        .filter(|o: &i64| *o >= 0)
}

fn revision_of(pod: &Value) -> &str {
    pod.pointer("/metadata/labels")
        .and_then(|l| l.get(history::REVISION_LABEL))
        .and_then(Value::as_str)
        .unwrap_or_default()
}

fn healthy(pod: &Value) -> bool {
    template::phase(pod) == "Running" && template::is_ready(pod) && !object::is_deleting(pod)
}

/// The claims of ordinal `ord` of `set`, from its volume claim templates.
pub fn claims_for(set: &Value, ord: i64) -> Vec<Value> {
    let set_name = object::name(set);
    let labels = set
        .pointer("/spec/selector/matchLabels")
        .cloned()
        .unwrap_or_else(|| json!({}));
    set.pointer("/spec/volumeClaimTemplates")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .map(|t| {
            let claim = t
                .pointer("/metadata/name")
                .and_then(Value::as_str)
                .unwrap_or_default();
            let mut pvc = json!({
                "apiVersion": "v1",
                "kind": "PersistentVolumeClaim",
                "metadata": {
                    "name": format!("{claim}-{set_name}-{ord}"),
                    "namespace": object::namespace(set),
                    "labels": labels,
                },
                "spec": t.get("spec").cloned().unwrap_or_else(|| json!({})),
            });
            if let Some(l) = t.pointer("/metadata/labels").and_then(Value::as_object) {
                for (k, v) in l {
                    pvc["metadata"]["labels"][k] = v.clone();
                }
            }
            if let Some(a) = t.pointer("/metadata/annotations") {
                pvc["metadata"]["annotations"] = a.clone();
            }
            pvc
        })
        .collect()
}

/// Pod `ord` of `set` from the Pod template `template` of revision
/// `revision`.
pub fn new_pod(set: &Value, template: &Value, revision: &str, ord: i64) -> Value {
    let set_name = object::name(set);
    let name = format!("{set_name}-{ord}");
    let ord_s = ord.to_string();
    let mut pod = template::pod_from_template(
        template,
        object::namespace(set),
        &PodName::Fixed(name.clone()),
        template::controller_ref(set, "apps/v1", "StatefulSet"),
        &[
            (POD_NAME_LABEL, &name),
            (POD_INDEX_LABEL, &ord_s),
            (history::REVISION_LABEL, revision),
        ],
    );
    let service = set.pointer("/spec/serviceName").and_then(Value::as_str);
    let claims: Vec<(String, String)> = claims_for(set, ord)
        .iter()
        .map(|c| {
            let full = object::name(c).to_owned();
            let short = full
                .strip_suffix(&format!("-{set_name}-{ord}"))
                .unwrap_or(&full)
                .to_owned();
            (short, full)
        })
        .collect();
    if let Some(spec) = pod.get_mut("spec").and_then(Value::as_object_mut) {
        spec.insert("hostname".into(), json!(name));
        if let Some(s) = service.filter(|s| !s.is_empty()) {
            spec.insert("subdomain".into(), json!(s));
        }
        if !claims.is_empty() {
            let volumes = spec.entry("volumes").or_insert_with(|| json!([]));
            if let Some(vs) = volumes.as_array_mut() {
                vs.retain(|v| {
                    let n = v.get("name").and_then(Value::as_str).unwrap_or_default();
                    !claims.iter().any(|(short, _)| short == n)
                });
                for (short, full) in &claims {
                    vs.push(json!({"name": short, "persistentVolumeClaim": {"claimName": full}}));
                }
            }
        }
    }
    pod
}

/// One sync of `set` with its Pods: `update` and `current` are the
/// (name, template) of the update and current revisions. Pure.
pub fn plan(
    set: &Value,
    pods: &[Value],
    current: (&str, &Value),
    update: (&str, &Value),
    collision_count: i64,
    now: OffsetDateTime,
) -> SetPlan {
    let name = object::name(set);
    let replicas = int(set, "/spec/replicas", 1).max(0);
    let start = int(set, "/spec/ordinals/start", 0).max(0);
    let monotonic = set
        .pointer("/spec/podManagementPolicy")
        .and_then(Value::as_str)
        != Some("Parallel");
    let rolling = set
        .pointer("/spec/updateStrategy/type")
        .and_then(Value::as_str)
        != Some("OnDelete");
    let partition = if rolling {
        int(set, "/spec/updateStrategy/rollingUpdate/partition", 0).max(0)
    } else {
        0
    };
    let min_ready = int(set, "/spec/minReadySeconds", 0);
    let by_ordinal: BTreeMap<i64, &Value> = pods
        .iter()
        .filter_map(|p| ordinal(name, p).map(|o| (o, p)))
        .collect();
    let valid = start..start + replicas;
    let mut out = SetPlan::default();

    // Status from the Pods as they are.
    let (mut count, mut ready, mut available, mut cur, mut upd) = (0, 0, 0, 0, 0);
    for p in by_ordinal.values() {
        if object::is_deleting(p) {
            continue;
        }
        count += 1;
        if healthy(p) {
            ready += 1;
            if template::is_available(p, min_ready, now) {
                available += 1;
            } else if min_ready > 0 {
                out.requeue = Some(Duration::from_secs(1));
            }
        }
        if revision_of(p) == current.0 {
            cur += 1;
        }
        if revision_of(p) == update.0 {
            upd += 1;
        }
    }
    let mut current_rev = current.0;
    if rolling && upd == count && ready == count && count == replicas {
        cur = upd;
        current_rev = update.0;
    }
    let mut status = json!({
        "observedGeneration": int(set, "/metadata/generation", 0),
        "replicas": count,
        "readyReplicas": ready,
        "currentReplicas": cur,
        "updatedReplicas": upd,
        "availableReplicas": available,
        "currentRevision": current_rev,
        "updateRevision": update.0,
        "collisionCount": collision_count,
    });
    if let Some(m) = status.as_object_mut() {
        for k in ["readyReplicas", "currentReplicas", "updatedReplicas"] {
            if m.get(k) == Some(&json!(0)) {
                m.remove(k);
            }
        }
    }
    out.status = status;

    // Create, replace and wait, in ordinal order.
    for ord in valid.clone() {
        let Some(pod) = by_ordinal.get(&ord) else {
            let (rev, tpl) = if ord - start < partition {
                current
            } else {
                update
            };
            out.claims.extend(claims_for(set, ord));
            out.create.push(new_pod(set, tpl, rev, ord));
            if monotonic {
                return out;
            }
            continue;
        };
        if matches!(template::phase(pod), "Failed" | "Succeeded") && !object::is_deleting(pod) {
            out.delete.push(object::name(pod).to_owned());
            if monotonic {
                return out;
            }
            continue;
        }
        if !healthy(pod) && monotonic {
            return out;
        }
    }
    // Scale down: the highest condemned ordinal first; in order, an
    // unhealthy one only when it is the first unhealthy Pod (upstream).
    let first_unhealthy = by_ordinal
        .iter()
        .find(|(_, p)| !healthy(p))
        .map(|(o, _)| *o);
    for (ord, pod) in by_ordinal.iter().rev() {
        if valid.contains(ord) {
            continue;
        }
        if object::is_deleting(pod) {
            if monotonic {
                return out;
            }
            continue;
        }
        if monotonic && !healthy(pod) && first_unhealthy != Some(*ord) {
            return out;
        }
        out.delete.push(object::name(pod).to_owned());
        if monotonic {
            return out;
        }
    }
    if !out.delete.is_empty() || !out.create.is_empty() || !rolling {
        return out;
    }
    // Rolling update: highest ordinal first, down to the partition.
    for ord in valid.rev() {
        if ord - start < partition {
            break;
        }
        let Some(pod) = by_ordinal.get(&ord) else {
            return out;
        };
        if revision_of(pod) != update.0 && !object::is_deleting(pod) {
            out.delete.push(object::name(pod).to_owned());
            return out;
        }
        if !healthy(pod) {
            return out;
        }
    }
    out
}

/// Runs the StatefulSet controller until the runtime shuts down.
pub async fn run(sim: Sim) {
    let Some((sets, pods)) = sim.informer_pair(
        ("apps", "v1", "statefulsets"),
        ("", "v1", "pods"),
        "statefulset controller cannot start",
    ) else {
        return;
    };
    let related = vec![(pods, owner_loop::controller_of("StatefulSet"))];
    owner_loop::drive(
        "statefulset",
        sets,
        related,
        Duration::from_secs(10),
        |key| {
            let sim = sim.clone();
            async move { sync(&sim, &key).await }
        },
    )
    .await;
}

async fn sync(sim: &Sim, key: &ObjectKey) -> Result<Option<Duration>, ApiError> {
    let sets = Sim::resource("apps", "v1", "statefulsets")?;
    let pods_res = Sim::resource("", "v1", "pods")?;
    let Some(set) = owner_loop::fresh(sim, &sets, key).await? else {
        return Ok(None);
    };
    if object::is_deleting(&set) {
        return Ok(None);
    }
    let pods = owner_loop::owned(sim, &pods_res, &key.namespace, object::uid(&set)).await?;
    let in_use: Vec<String> = pods.iter().map(|p| revision_of(p).to_owned()).collect();
    let revs = history::sync(sim, &set, "apps/v1", "StatefulSet", &in_use).await?;
    let current_tpl = history::template_of(&revs.current);
    let update_tpl = set
        .pointer("/spec/template")
        .cloned()
        .unwrap_or_else(|| json!({}));
    let plan = plan(
        &set,
        &pods,
        (object::name(&revs.current), &current_tpl),
        (object::name(&revs.update), &update_tpl),
        revs.collision_count,
        owner_loop::now(),
    );
    let mut events = Vec::new();
    let result = apply(
        sim,
        &set,
        plan.claims,
        &plan.delete,
        plan.create,
        &mut events,
    )
    .await;
    owner_loop::record(sim, events).await;
    result?;
    owner_loop::write_status(sim, &sets, &set, plan.status, MANAGER).await?;
    Ok(plan.requeue)
}

/// Creates claims and Pods and deletes Pods, with upstream's events.
async fn apply(
    sim: &Sim,
    set: &Value,
    claims: Vec<Value>,
    delete: &[String],
    create: Vec<Value>,
    events: &mut Vec<Value>,
) -> Result<(), ApiError> {
    let pods_res = Sim::resource("", "v1", "pods")?;
    let pvcs = Sim::resource("", "v1", "persistentvolumeclaims")?;
    let ns = object::namespace(set);
    let name = object::name(set);
    let ev = |reason: &str, message: String| {
        owner_loop::event(
            set,
            "apps/v1",
            "StatefulSet",
            "Normal",
            reason,
            &message,
            MANAGER,
            owner_loop::now(),
        )
    };
    let pod_of_claim = |claim: &str| {
        create
            .iter()
            .map(|p| object::name(p).to_owned())
            .find(|p| claim.ends_with(&format!("-{p}")))
            .unwrap_or_default()
    };
    for claim in claims {
        let claim_name = object::name(&claim).to_owned();
        if owner_loop::create(sim, &pvcs, ns, claim, MANAGER)
            .await?
            .is_some()
        {
            let pod = pod_of_claim(&claim_name);
            events.push(ev(
                "SuccessfulCreate",
                format!("create Claim {claim_name} Pod {pod} in StatefulSet {name} success"),
            ));
        }
    }
    for pod in delete {
        owner_loop::delete(sim, &pods_res, ns, pod, None).await?;
        events.push(ev(
            "SuccessfulDelete",
            format!("delete Pod {pod} in StatefulSet {name} successful"),
        ));
    }
    for pod in create {
        if let Some(p) = owner_loop::create(sim, &pods_res, ns, pod, MANAGER).await? {
            events.push(ev(
                "SuccessfulCreate",
                format!(
                    "create Pod {} in StatefulSet {name} successful",
                    object::name(&p)
                ),
            ));
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    const NOW: &str = "2026-01-01T00:01:00Z";

    fn now() -> OffsetDateTime {
        owner_loop::parse_time(NOW).expect("time")
    }

    fn set(spec: Value) -> Value {
        let mut s = json!({"metadata": {"name": "web", "namespace": "ns", "uid": "s1", "generation": 2},
            "spec": {"replicas": 3, "serviceName": "nginx", "podManagementPolicy": "OrderedReady",
                "selector": {"matchLabels": {"app": "web"}},
                "updateStrategy": {"type": "RollingUpdate", "rollingUpdate": {"partition": 0}},
                "template": {"metadata": {"labels": {"app": "web"}},
                    "spec": {"containers": [{"name": "c", "image": "nginx:1"}]}}}});
        if let (Some(a), Value::Object(b)) = (s["spec"].as_object_mut(), spec) {
            a.extend(b);
        }
        s
    }

    fn pod(ord: i64, rev: &str, ready: bool) -> Value {
        json!({"metadata": {"name": format!("web-{ord}"), "labels": {history::REVISION_LABEL: rev}},
            "status": {"phase": "Running", "conditions": [{"type": "Ready",
                "status": if ready { "True" } else { "False" },
                "lastTransitionTime": "2026-01-01T00:00:00Z"}]}})
    }

    fn tpl() -> Value {
        json!({"metadata": {"labels": {"app": "web"}}, "spec": {"containers": [{"name": "c"}]}})
    }

    fn names(pods: &[Value]) -> Vec<String> {
        pods.iter().map(|p| object::name(p).to_owned()).collect()
    }

    #[test]
    fn ordered_ready_creates_one_pod_at_a_time() {
        let s = set(json!({}));
        let t = tpl();
        let p = plan(&s, &[], ("r1", &t), ("r1", &t), 0, now());
        assert_eq!(names(&p.create), ["web-0"]);
        let pod0 = &p.create[0];
        assert_eq!(pod0["metadata"]["labels"][POD_NAME_LABEL], "web-0");
        assert_eq!(pod0["metadata"]["labels"][POD_INDEX_LABEL], "0");
        assert_eq!(pod0["metadata"]["labels"][history::REVISION_LABEL], "r1");
        assert_eq!(pod0["spec"]["hostname"], "web-0");
        assert_eq!(pod0["spec"]["subdomain"], "nginx");
        // web-0 not Ready yet: wait.
        let p = plan(&s, &[pod(0, "r1", false)], ("r1", &t), ("r1", &t), 0, now());
        assert!(p.create.is_empty());
        let p = plan(&s, &[pod(0, "r1", true)], ("r1", &t), ("r1", &t), 0, now());
        assert_eq!(names(&p.create), ["web-1"]);
        assert_eq!(p.status["replicas"], 1);
        assert_eq!(p.status["readyReplicas"], 1);
        assert_eq!(p.status["observedGeneration"], 2);
    }

    #[test]
    fn parallel_creates_all_pods() {
        let s = set(json!({"podManagementPolicy": "Parallel"}));
        let t = tpl();
        let p = plan(&s, &[], ("r1", &t), ("r1", &t), 0, now());
        assert_eq!(names(&p.create), ["web-0", "web-1", "web-2"]);
    }

    #[test]
    fn scale_down_removes_the_highest_ordinal_first() {
        let s = set(json!({"replicas": 1}));
        let t = tpl();
        let pods = [pod(0, "r1", true), pod(1, "r1", true), pod(2, "r1", true)];
        let p = plan(&s, &pods, ("r1", &t), ("r1", &t), 0, now());
        assert_eq!(p.delete, ["web-2"]);
    }

    #[test]
    fn rolling_update_goes_down_from_the_highest_ordinal_to_the_partition() {
        let t = tpl();
        let pods = [pod(0, "r1", true), pod(1, "r1", true), pod(2, "r1", true)];
        let s = set(json!({}));
        let p = plan(&s, &pods, ("r1", &t), ("r2", &t), 0, now());
        assert_eq!(p.delete, ["web-2"]);
        assert_eq!(p.status["currentRevision"], "r1");
        assert_eq!(p.status["updateRevision"], "r2");
        // web-2 recreated at r2 but not Ready: wait.
        let pods2 = [pod(0, "r1", true), pod(1, "r1", true), pod(2, "r2", false)];
        let p = plan(&s, &pods2, ("r1", &t), ("r2", &t), 0, now());
        assert!(p.delete.is_empty());
        // All updated and Ready: the update revision becomes current.
        let done = [pod(0, "r2", true), pod(1, "r2", true), pod(2, "r2", true)];
        let p = plan(&s, &done, ("r1", &t), ("r2", &t), 0, now());
        assert_eq!(p.status["currentRevision"], "r2");
        assert_eq!(p.status["currentReplicas"], 3);
        assert_eq!(p.status["updatedReplicas"], 3);
        // Partition 2: only web-2 is updated; new Pods below it get r1.
        let s = set(
            json!({"updateStrategy": {"type": "RollingUpdate", "rollingUpdate": {"partition": 2}}}),
        );
        let pods = [pod(0, "r1", true), pod(1, "r1", true), pod(2, "r2", true)];
        let p = plan(&s, &pods, ("r1", &t), ("r2", &t), 0, now());
        assert!(p.delete.is_empty());
        let p = plan(&s, &[], ("r1", &t), ("r2", &t), 0, now());
        assert_eq!(
            p.create[0]["metadata"]["labels"][history::REVISION_LABEL],
            "r1"
        );
    }

    #[test]
    fn on_delete_leaves_old_pods() {
        let s = set(json!({"updateStrategy": {"type": "OnDelete"}}));
        let t = tpl();
        let pods = [pod(0, "r1", true), pod(1, "r1", true)];
        let p = plan(&s, &pods, ("r1", &t), ("r2", &t), 0, now());
        assert!(p.delete.is_empty());
        assert_eq!(
            p.create[0]["metadata"]["labels"][history::REVISION_LABEL],
            "r2"
        );
    }

    #[test]
    fn claims_come_from_templates_and_pods_mount_them() {
        let s = set(
            json!({"volumeClaimTemplates": [{"metadata": {"name": "www"},
            "spec": {"accessModes": ["ReadWriteOnce"], "resources": {"requests": {"storage": "1Gi"}}}}]}),
        );
        let t = tpl();
        let p = plan(&s, &[], ("r1", &t), ("r1", &t), 0, now());
        assert_eq!(p.claims.len(), 1);
        assert_eq!(p.claims[0]["metadata"]["name"], "www-web-0");
        assert_eq!(p.claims[0]["metadata"]["labels"]["app"], "web");
        assert_eq!(
            p.create[0]["spec"]["volumes"][0],
            json!({"name": "www", "persistentVolumeClaim": {"claimName": "www-web-0"}})
        );
    }

    #[test]
    fn ordinals_parse_only_own_pods() {
        assert_eq!(
            ordinal("web", &json!({"metadata": {"name": "web-12"}})),
            Some(12)
        );
        assert_eq!(
            ordinal("web", &json!({"metadata": {"name": "webx-1"}})),
            None
        );
        assert_eq!(
            ordinal("web", &json!({"metadata": {"name": "web-a"}})),
            None
        );
    }

    proptest::proptest! {
        /// OrderedReady: at most one change a sync; a Pod is created only
        /// when every lower ordinal is Running and Ready, and deleted only
        /// when every other Pod is.
        #[test]
        fn ordered_ready_changes_one_pod_behind_healthy_ones(
            replicas in 0i64..5,
            states in proptest::collection::vec(0u8..3, 0..6),
        ) {
            let s = set(json!({"replicas": replicas}));
            let t = tpl();
            // state 0: missing, 1: not ready, 2: ready.
            let pods: Vec<Value> = states
                .iter()
                .enumerate()
                .filter(|(_, st)| **st > 0)
                .map(|(o, st)| pod(i64::try_from(o).unwrap_or(0), "r1", *st == 2))
                .collect();
            let p = plan(&s, &pods, ("r1", &t), ("r1", &t), 0, now());
            proptest::prop_assert!(p.create.len() + p.delete.len() <= 1);
            let healthy_below = |o: i64| {
                (0..o).all(|k| {
                    states.get(usize::try_from(k).unwrap_or(0)).copied() == Some(2)
                })
            };
            for c in &p.create {
                let o = ordinal("web", c).unwrap_or(-1);
                proptest::prop_assert!(o >= 0 && o < replicas && healthy_below(o));
            }
            for d in &p.delete {
                let o = ordinal("web", &json!({"metadata": {"name": d}})).unwrap_or(-1);
                proptest::prop_assert!(o >= replicas);
                let target = pods.iter().find(|x| object::name(x) == d);
                proptest::prop_assert!(
                    target.is_some_and(healthy)
                        || pods.iter().filter(|x| object::name(x) != d).all(healthy)
                );
            }
        }
    }
}
