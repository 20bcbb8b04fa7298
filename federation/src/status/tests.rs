//! The aggregators against realistic member statuses, and their
//! properties.

use proptest::prelude::*;
use serde_json::{Value, json};

use super::fixtures::*;
use super::*;

fn cond<'a>(status: &'a Value, type_: &str) -> &'a Value {
    status["conditions"]
        .as_array()
        .and_then(|cs| cs.iter().find(|c| c["type"] == type_))
        .unwrap_or(&Value::Null)
}

#[test]
fn weighted_split_all_ready_reaches_the_generation() {
    let fed = federated_deployment(6, 1, None);
    let (eu, us, ap) = (
        member_deployment(4, 4, 1, 1),
        member_deployment(2, 2, 1, 1),
        member_deployment(0, 0, 1, 1),
    );
    let copies = [
        copy("eu", &eu, true),
        copy("us", &us, true),
        copy("ap", &ap, true),
    ];
    let s = aggregate(&fed, &copies).expect("a Deployment has a status");
    assert_eq!(s["readyReplicas"], 6);
    assert_eq!(s["replicas"], 6);
    assert_eq!(s["updatedReplicas"], 6);
    assert_eq!(s["availableReplicas"], 6);
    assert!(s.get("unavailableReplicas").is_none());
    assert_eq!(s["observedGeneration"], 1);
    let avail = cond(&s, "Available");
    assert_eq!(avail["status"], "True");
    assert_eq!(
        avail["message"],
        "ap, eu, us: Deployment has minimum availability."
    );
    assert_eq!(cond(&s, "Progressing")["reason"], "NewReplicaSetAvailable");
    let done = with_status(&fed, Some(s));
    assert_eq!(rollout_status(&done), Ok(true));
    assert_eq!(
        assess(&done).readiness,
        Readiness::Current,
        "{:?}",
        assess(&done)
    );
    assert_eq!(ready_count(&copies), 3);
}

#[test]
fn a_copy_not_current_keeps_the_old_generation() {
    let fed = federated_deployment(6, 2, Some(1));
    let (eu, us, ap) = (
        member_deployment(4, 4, 2, 2),
        member_deployment(2, 2, 1, 1),
        member_deployment(0, 0, 2, 2),
    );
    let copies = [
        copy("eu", &eu, true),
        copy("us", &us, false),
        copy("ap", &ap, true),
    ];
    let s = aggregate(&fed, &copies).expect("status");
    assert_eq!(s["observedGeneration"], 1);
    assert_eq!(
        rollout_status(&with_status(&fed, Some(s.clone()))),
        Ok(false)
    );
    assert_eq!(
        assess(&with_status(&fed, Some(s))).readiness,
        Readiness::InProgress
    );
    assert_eq!(ready_count(&copies), 2);
}

#[test]
fn a_member_behind_its_generation_or_missing_keeps_the_old_generation() {
    let fed = federated_deployment(6, 2, Some(1));
    let eu = member_deployment(4, 4, 3, 2);
    let us = member_deployment(2, 2, 2, 2);
    let copies = [copy("eu", &eu, true), copy("us", &us, true)];
    assert_eq!(
        aggregate(&fed, &copies).expect("status")["observedGeneration"],
        1
    );
    // The zero-replica share is no exception: its observation matters.
    let ap = member_deployment(0, 0, 2, 1);
    let eu = member_deployment(4, 4, 2, 2);
    let copies = [
        copy("eu", &eu, true),
        copy("us", &us, true),
        copy("ap", &ap, true),
    ];
    assert_eq!(
        aggregate(&fed, &copies).expect("status")["observedGeneration"],
        1
    );
    let copies = [
        copy("eu", &eu, true),
        copy("us", &us, true),
        MemberCopy {
            cluster: "ap",
            object: None,
            current: false,
        },
    ];
    assert_eq!(
        aggregate(&fed, &copies).expect("status")["observedGeneration"],
        1
    );
    // Never observed before: absent, and the sums keep rollout waiting.
    let fresh = federated_deployment(6, 1, None);
    let eu1 = member_deployment(4, 4, 1, 1);
    let copies = [
        copy("eu", &eu1, true),
        MemberCopy {
            cluster: "us",
            object: None,
            current: false,
        },
    ];
    let s = aggregate(&fresh, &copies).expect("status");
    assert!(s.get("observedGeneration").is_none());
    let f = with_status(&fresh, Some(s));
    assert_eq!(rollout_status(&f), Ok(false));
    assert_eq!(assess(&f).readiness, Readiness::InProgress);
    // No chosen cluster at all: nothing observed it.
    assert!(
        aggregate(&fresh, &[])
            .expect("status")
            .get("observedGeneration")
            .is_none()
    );
}

#[test]
fn progress_deadline_exceeded_on_one_member_fails_the_rollout() {
    let fed = federated_deployment(6, 2, Some(1));
    let eu = timed_out(member_deployment(4, 2, 2, 2));
    let us = member_deployment(2, 2, 2, 2);
    let copies = [copy("us", &us, true), copy("eu", &eu, true)];
    let s = aggregate(&fed, &copies).expect("status");
    let p = cond(&s, "Progressing");
    assert_eq!(p["status"], "False");
    assert_eq!(p["reason"], "ProgressDeadlineExceeded");
    assert_eq!(
        p["message"],
        "eu: Deployment \"web\" has timed out progressing."
    );
    assert_eq!(p["lastTransitionTime"], T1);
    assert_eq!(
        cond(&s, "Available")["message"],
        "eu: Deployment does not have minimum availability."
    );
    assert_eq!(s["readyReplicas"], 4);
    assert_eq!(s["unavailableReplicas"], 2);
    let f = with_status(&fed, Some(s));
    assert!(rollout_status(&f).is_err());
    assert_eq!(assess(&f).readiness, Readiness::Failed);
}

#[test]
fn a_member_still_rolling_keeps_progressing_in_progress() {
    let fed = federated_deployment(6, 1, None);
    let eu = member_deployment(4, 3, 1, 1);
    let us = member_deployment(2, 2, 1, 1);
    let s = aggregate(&fed, &[copy("eu", &eu, true), copy("us", &us, true)]).expect("status");
    assert_eq!(cond(&s, "Progressing")["reason"], "ReplicaSetUpdated");
    assert_eq!(
        cond(&s, "Progressing")["message"],
        "eu: ReplicaSet \"web-5d4b8c7f9\" is progressing."
    );
    assert_eq!(s["availableReplicas"], 5);
    let f = with_status(&fed, Some(s));
    assert_eq!(rollout_status(&f), Ok(false));
    assert_eq!(assess(&f).readiness, Readiness::InProgress);
}

#[test]
fn collision_count_stays_the_federations() {
    let mut fed = federated_deployment(1, 1, Some(1));
    fed["status"]["collisionCount"] = json!(2);
    let eu = member_deployment(1, 1, 1, 1);
    let s = aggregate(&fed, &[copy("eu", &eu, true)]).expect("status");
    assert_eq!(s["collisionCount"], 2);
}

fn sts(
    replicas: i64,
    ready: i64,
    cur_rev: &str,
    upd_rev: &str,
    current: i64,
    updated: i64,
) -> Value {
    json!({"apiVersion": "apps/v1", "kind": "StatefulSet",
        "metadata": {"name": "db", "generation": 1},
        "spec": {"replicas": replicas, "updateStrategy": {"type": "RollingUpdate"}},
        "status": {"observedGeneration": 1, "replicas": replicas, "readyReplicas": ready,
            "currentReplicas": current, "updatedReplicas": updated, "availableReplicas": ready,
            "currentRevision": cur_rev, "updateRevision": upd_rev, "collisionCount": 0}})
}

#[test]
fn stateful_set_sums_and_revisions() {
    let fed = json!({"apiVersion": "apps/v1", "kind": "StatefulSet",
        "metadata": {"name": "db", "generation": 1}, "spec": {"replicas": 5}});
    let a = sts(3, 3, "db-r1", "db-r1", 3, 3);
    let b = sts(2, 2, "db-r1", "db-r1", 2, 2);
    let s = aggregate(&fed, &[copy("eu", &a, true), copy("us", &b, true)]).expect("status");
    assert_eq!(
        (
            s["replicas"].clone(),
            s["readyReplicas"].clone(),
            s["currentReplicas"].clone()
        ),
        (json!(5), json!(5), json!(5))
    );
    assert_eq!(
        (s["currentRevision"].as_str(), s["updateRevision"].as_str()),
        (Some("db-r1"), Some("db-r1"))
    );
    assert_eq!(s["observedGeneration"], 1);
    // Overrides: each member names its own revision; all finished.
    let b2 = sts(2, 2, "db-r9", "db-r9", 2, 2);
    let s = aggregate(&fed, &[copy("us", &b2, true), copy("eu", &a, true)]).expect("status");
    assert_eq!(
        (s["currentRevision"].as_str(), s["updateRevision"].as_str()),
        (Some("db-r1"), Some("db-r1"))
    );
    // One member rolling: the two differ, rollout waits.
    let rolling = sts(2, 2, "db-r1", "db-r2", 1, 1);
    let s = aggregate(&fed, &[copy("eu", &a, true), copy("us", &rolling, true)]).expect("status");
    assert_ne!(s.get("currentRevision"), s.get("updateRevision"));
    let f = with_status(&fed, Some(s));
    assert_eq!(assess(&f).readiness, Readiness::InProgress);
    let (c, u) = workload::revisions(&[]);
    assert_eq!((c, u), (None, None));
}

#[test]
fn daemon_set_sums() {
    let fed = json!({"apiVersion": "apps/v1", "kind": "DaemonSet",
        "metadata": {"name": "agent", "generation": 3}, "spec": {}});
    let m = |n: i64, ready: i64| {
        json!({"apiVersion": "apps/v1", "kind": "DaemonSet",
        "metadata": {"name": "agent", "generation": 1},
        "status": {"observedGeneration": 1, "currentNumberScheduled": n, "numberMisscheduled": 0,
            "desiredNumberScheduled": n, "numberReady": ready, "updatedNumberScheduled": n,
            "numberAvailable": ready, "numberUnavailable": n - ready}})
    };
    let (a, b) = (m(3, 3), m(2, 1));
    let s = aggregate(&fed, &[copy("eu", &a, true), copy("us", &b, true)]).expect("status");
    assert_eq!(s["desiredNumberScheduled"], 5);
    assert_eq!(s["numberReady"], 4);
    assert_eq!(s["numberAvailable"], 4);
    assert_eq!(s["numberUnavailable"], 1);
    assert_eq!(s["numberMisscheduled"], 0);
    assert_eq!(s["observedGeneration"], 3);
    assert!(is_ready(&a));
    assert!(!is_ready(&b));
    assert_eq!(
        assess(&with_status(&fed, Some(s))).message,
        "Available: 4/5"
    );
}

#[test]
fn replica_set_failure_is_worst() {
    let fed = json!({"apiVersion": "apps/v1", "kind": "ReplicaSet",
        "metadata": {"name": "rs", "generation": 1}, "spec": {"replicas": 4}});
    let ok = json!({"apiVersion": "apps/v1", "kind": "ReplicaSet", "metadata": {"generation": 1},
        "spec": {"replicas": 2},
        "status": {"observedGeneration": 1, "replicas": 2, "fullyLabeledReplicas": 2, "readyReplicas": 2, "availableReplicas": 2}});
    let bad = json!({"apiVersion": "apps/v1", "kind": "ReplicaSet", "metadata": {"generation": 1},
        "spec": {"replicas": 2},
        "status": {"observedGeneration": 1, "replicas": 0,
            "conditions": [{"type": "ReplicaFailure", "status": "True", "reason": "FailedCreate",
                "message": "pods \"rs-x\" is forbidden: exceeded quota", "lastTransitionTime": T0}]}});
    let s = aggregate(&fed, &[copy("us", &ok, true), copy("eu", &bad, true)]).expect("status");
    assert_eq!(s["replicas"], 2);
    assert_eq!(s["fullyLabeledReplicas"], 2);
    assert_eq!(
        cond(&s, "ReplicaFailure")["message"],
        "eu: pods \"rs-x\" is forbidden: exceeded quota"
    );
    assert!(is_ready(&ok));
    assert!(!is_ready(&bad));
}

#[test]
fn job_complete_only_when_every_part_is() {
    let fed = json!({"apiVersion": "batch/v1", "kind": "Job", "metadata": {"name": "pi"},
        "spec": {"completions": 5, "parallelism": 5}});
    let a = member_job(3, 3, 0, T0, "2026-12-03T10:02:00Z");
    let b = member_job(2, 2, 0, "2026-12-03T09:59:00Z", T1);
    let s = aggregate(&fed, &[copy("eu", &a, true), copy("us", &b, true)]).expect("status");
    assert_eq!(s["succeeded"], 5);
    assert_eq!(s["startTime"], "2026-12-03T09:59:00Z");
    assert_eq!(s["completionTime"], T1);
    assert_eq!(s["ready"], 0);
    let c = cond(&s, "Complete");
    assert_eq!(c["status"], "True");
    assert_eq!(
        c["message"],
        "eu, us: Reached expected number of succeeded pods"
    );
    assert_eq!(c["lastTransitionTime"], T1);
    assert_eq!(cond(&s, "SuccessCriteriaMet")["status"], "True");
    let types: Vec<&Value> = s["conditions"]
        .as_array()
        .expect("conditions")
        .iter()
        .map(|c| &c["type"])
        .collect();
    assert_eq!(types, [&json!("SuccessCriteriaMet"), &json!("Complete")]);
    // One part still running: not complete, no completion time.
    let running = member_job(2, 1, 1, T0, T1);
    let s = aggregate(&fed, &[copy("eu", &a, true), copy("us", &running, true)]).expect("status");
    assert_eq!(s["succeeded"], 4);
    assert_eq!(s["active"], 1);
    assert!(s.get("conditions").is_none());
    assert!(s.get("completionTime").is_none());
    assert!(is_ready(&running), "a running Job is Current for kstatus");
    // A part missing: not complete either.
    let s = aggregate(
        &fed,
        &[
            copy("eu", &a, true),
            MemberCopy {
                cluster: "us",
                object: None,
                current: false,
            },
        ],
    )
    .expect("status");
    assert!(s.get("conditions").is_none());
}

#[test]
fn job_failed_if_any_part_fails() {
    let fed =
        json!({"apiVersion": "batch/v1", "kind": "Job", "metadata": {"name": "pi"}, "spec": {}});
    let a = member_job(3, 3, 0, T0, T1);
    let b = failed_job(T0, T1);
    let s = aggregate(&fed, &[copy("us", &b, true), copy("eu", &a, true)]).expect("status");
    let f = cond(&s, "Failed");
    assert_eq!(f["status"], "True");
    assert_eq!(f["reason"], "BackoffLimitExceeded");
    assert_eq!(
        f["message"],
        "us: Job has reached the specified backoff limit"
    );
    assert!(cond(&s, "Complete").is_null());
    assert_eq!(s["failed"], 2);
    assert_eq!(assess(&b).readiness, Readiness::Failed);
    assert_eq!(
        assess(&with_status(&fed, Some(s))).readiness,
        Readiness::Failed
    );
}

#[test]
fn load_balancer_ingress_is_a_sorted_union() {
    let svc = |ingress: Value| {
        json!({"apiVersion": "v1", "kind": "Service",
        "spec": {"type": "LoadBalancer", "clusterIP": "10.0.0.1"},
        "status": {"loadBalancer": ingress}})
    };
    let fed = json!({"apiVersion": "v1", "kind": "Service", "metadata": {"name": "web"}});
    let a = svc(json!({"ingress": [{"ip": "172.18.0.9", "ipMode": "VIP"}]}));
    let b = svc(
        json!({"ingress": [{"ip": "172.18.0.3", "ipMode": "VIP"}, {"hostname": "lb.example"}]}),
    );
    let c = svc(json!({"ingress": [{"ip": "172.18.0.9", "ipMode": "VIP"}]}));
    let none = svc(json!({}));
    let s = aggregate(
        &fed,
        &[
            copy("eu", &a, true),
            copy("us", &b, true),
            copy("ap", &c, true),
            copy("x", &none, true),
        ],
    )
    .expect("status");
    assert_eq!(
        s,
        json!({"loadBalancer": {"ingress": [
            {"hostname": "lb.example"},
            {"ip": "172.18.0.3", "ipMode": "VIP"},
            {"ip": "172.18.0.9", "ipMode": "VIP"}]}})
    );
    assert_eq!(
        aggregate(&fed, &[copy("x", &none, true)]),
        Some(json!({"loadBalancer": {}}))
    );
    assert!(is_ready(&a));
    assert!(!is_ready(&none));
    let ing = json!({"apiVersion": "networking.k8s.io/v1", "kind": "Ingress",
        "status": {"loadBalancer": {"ingress": [{"ip": "10.1.1.1"}]}}});
    let fed_ing =
        json!({"apiVersion": "networking.k8s.io/v1", "kind": "Ingress", "metadata": {"name": "i"}});
    assert_eq!(
        aggregate(&fed_ing, &[copy("eu", &ing, true)]),
        Some(json!({"loadBalancer": {"ingress": [{"ip": "10.1.1.1"}]}}))
    );
}

#[test]
fn hpa_sums_replicas_and_merges_conditions() {
    let fed = json!({"apiVersion": "autoscaling/v2", "kind": "HorizontalPodAutoscaler",
        "metadata": {"name": "web", "generation": 1}});
    let m = |cur: i64, limited: &str| {
        json!({"apiVersion": "autoscaling/v2", "kind": "HorizontalPodAutoscaler",
        "metadata": {"generation": 1},
        "status": {"currentReplicas": cur, "desiredReplicas": cur, "lastScaleTime": T0,
            "currentMetrics": [{"type": "Resource", "resource": {"name": "cpu", "current": {"averageUtilization": 40}}}],
            "conditions": [
                {"type": "AbleToScale", "status": "True", "reason": "ReadyForNewScale", "message": "ok", "lastTransitionTime": T0},
                {"type": "ScalingLimited", "status": limited, "reason": "TooManyReplicas", "message": "the desired replica count is more than the maximum replica count", "lastTransitionTime": T0}]}})
    };
    let (a, b) = (m(3, "False"), m(5, "True"));
    let s = aggregate(&fed, &[copy("eu", &a, true), copy("us", &b, true)]).expect("status");
    assert_eq!(s["currentReplicas"], 8);
    assert_eq!(s["desiredReplicas"], 8);
    assert_eq!(s["lastScaleTime"], T0);
    assert!(s.get("currentMetrics").is_none());
    assert!(s.get("observedGeneration").is_none(), "members report none");
    assert_eq!(cond(&s, "ScalingLimited")["status"], "True");
    assert!(
        cond(&s, "ScalingLimited")["message"]
            .as_str()
            .is_some_and(|m| m.starts_with("us: "))
    );
    let s = aggregate(&fed, &[copy("eu", &a, true)]).expect("status");
    assert_eq!(s["currentMetrics"], a["status"]["currentMetrics"]);
}

#[test]
fn single_copy_status_is_copied_and_none_otherwise() {
    let fed = json!({"apiVersion": "policy/v1", "kind": "PodDisruptionBudget",
        "metadata": {"name": "web", "generation": 2}, "status": {"observedGeneration": 1}});
    let pdb = json!({"apiVersion": "policy/v1", "kind": "PodDisruptionBudget",
        "metadata": {"generation": 1},
        "status": {"observedGeneration": 1, "currentHealthy": 3, "desiredHealthy": 2,
            "disruptionsAllowed": 1, "expectedPods": 3}});
    let s = aggregate(&fed, &[copy("eu", &pdb, true)]).expect("status");
    assert_eq!(
        s["observedGeneration"], 2,
        "the federation's generation, not the member's"
    );
    assert_eq!(s["disruptionsAllowed"], 1);
    let s = aggregate(&fed, &[copy("eu", &pdb, false)]).expect("status");
    assert_eq!(s["observedGeneration"], 1);
    assert_eq!(
        aggregate(&fed, &[copy("eu", &pdb, true), copy("us", &pdb, true)]),
        None
    );
    assert_eq!(aggregate(&fed, &[]), None);
    for (api, kind) in [
        ("v1", "ConfigMap"),
        ("v1", "Secret"),
        ("v1", "Namespace"),
        ("rbac.authorization.k8s.io/v1", "Role"),
        ("apiextensions.k8s.io/v1", "CustomResourceDefinition"),
    ] {
        let o = json!({"apiVersion": api, "kind": kind, "status": {"phase": "Active"}});
        assert_eq!(aggregate(&o, &[copy("eu", &o, true)]), None, "{kind}");
    }
}

#[test]
fn claims_are_bound_when_every_copy_is() {
    let fed =
        json!({"apiVersion": "v1", "kind": "PersistentVolumeClaim", "metadata": {"name": "data"}});
    let pvc = |phase: &str| {
        json!({"apiVersion": "v1", "kind": "PersistentVolumeClaim",
        "status": {"phase": phase, "accessModes": ["ReadWriteOnce"], "capacity": {"storage": "1Gi"}}})
    };
    let (b, p) = (pvc("Bound"), pvc("Pending"));
    let s = aggregate(&fed, &[copy("eu", &b, true), copy("us", &b, true)]).expect("status");
    assert_eq!(
        s,
        json!({"phase": "Bound", "accessModes": ["ReadWriteOnce"], "capacity": {"storage": "1Gi"}})
    );
    let s = aggregate(&fed, &[copy("eu", &b, true), copy("us", &p, true)]).expect("status");
    assert_eq!(s["phase"], "Pending");
    assert!(is_ready(&b));
    assert!(!is_ready(&p));
}

#[test]
fn readiness_of_members() {
    let deleting =
        json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"deletionTimestamp": T0}});
    assert_eq!(assess(&deleting).readiness, Readiness::Terminating);
    assert!(is_ready(&json!({"apiVersion": "v1", "kind": "ConfigMap"})));
    let behind = member_deployment(2, 2, 3, 2);
    assert_eq!(
        assess(&behind).message,
        "Deployment generation is 3, but latest observed generation is 2"
    );
    let mut old = member_deployment(2, 2, 1, 1);
    old["status"]["replicas"] = json!(3);
    assert_eq!(assess(&old).message, "Pending termination: 1");
    assert!(!is_ready(&timed_out(member_deployment(2, 2, 1, 1))));
    let stalled = json!({"apiVersion": "example.com/v1", "kind": "Widget",
        "status": {"conditions": [{"type": "Stalled", "status": "True", "message": "stuck"}]}});
    assert_eq!(
        assess(&stalled),
        Assessment {
            readiness: Readiness::Failed,
            message: "stuck".into()
        }
    );
    let unstarted = json!({"apiVersion": "batch/v1", "kind": "Job", "status": {}});
    assert!(!is_ready(&unstarted));
    let on_delete = json!({"apiVersion": "apps/v1", "kind": "StatefulSet",
        "spec": {"updateStrategy": {"type": "OnDelete"}}});
    assert!(is_ready(&on_delete));
    let pod = json!({"apiVersion": "v1", "kind": "Pod", "status": {"phase": "Running",
        "containerStatuses": [{"name": "app", "state": {"waiting": {"reason": "CrashLoopBackOff"}}}]}});
    assert_eq!(assess(&pod).readiness, Readiness::Failed);
    let external = json!({"apiVersion": "v1", "kind": "Service",
        "spec": {"type": "LoadBalancer", "clusterIP": "10.0.0.2", "externalIPs": ["1.2.3.4"]}});
    assert!(is_ready(&external));
    let ds_unobserved = json!({"apiVersion": "apps/v1", "kind": "DaemonSet", "status": {"desiredNumberScheduled": 0}});
    assert!(!is_ready(&ds_unobserved));
}

// Properties.

fn member_strategy() -> impl Strategy<Value = (String, i64, i64, i64, i64, bool, bool)> {
    (
        prop::sample::select(vec!["ap", "eu", "us", "sa", "af"]).prop_map(str::to_owned),
        0i64..20,
        0i64..20,
        1i64..5,
        0i64..5,
        any::<bool>(),
        any::<bool>(),
    )
        .prop_map(|(c, r, ready, g, lag, current, deadline)| {
            (c, r, ready.min(r), g, (g - lag).max(0), current, deadline)
        })
}

fn members_strategy() -> impl Strategy<Value = Vec<(String, i64, i64, i64, i64, bool, bool)>> {
    prop::collection::vec(member_strategy(), 0..5).prop_map(|mut v| {
        // Cluster names are unique.
        let mut seen = std::collections::BTreeSet::new();
        v.retain(|m| seen.insert(m.0.clone()));
        v
    })
}

fn objects(members: &[(String, i64, i64, i64, i64, bool, bool)]) -> Vec<Value> {
    members
        .iter()
        .map(|(_, r, ready, g, o, _, deadline)| {
            let d = member_deployment(*r, *ready, *g, *o);
            if *deadline { timed_out(d) } else { d }
        })
        .collect()
}

proptest! {
    #[test]
    fn sums_equal_the_sum_of_parts(members in members_strategy(), fed_gen in 1i64..6) {
        let objs = objects(&members);
        let copies: Vec<MemberCopy<'_>> = members.iter().zip(&objs)
            .map(|(m, o)| copy(&m.0, o, m.5)).collect();
        let fed = federated_deployment(10, fed_gen, None);
        let s = aggregate(&fed, &copies).expect("status");
        for field in ["replicas", "updatedReplicas", "readyReplicas", "availableReplicas", "unavailableReplicas"] {
            let parts: i64 = objs.iter().map(|o| o["status"][field].as_i64().unwrap_or(0)).sum();
            prop_assert_eq!(s.get(field).and_then(Value::as_i64).unwrap_or(0), parts, "{}", field);
        }
    }

    #[test]
    fn aggregate_is_independent_of_copy_order(members in members_strategy(), fed_gen in 1i64..6, prev in prop::option::of(0i64..8), seed in any::<u64>()) {
        let objs = objects(&members);
        let copies: Vec<MemberCopy<'_>> = members.iter().zip(&objs)
            .map(|(m, o)| copy(&m.0, o, m.5)).collect();
        let mut shuffled = copies.clone();
        let n = shuffled.len();
        if n > 1 {
            let mut s = seed;
            for i in (1..n).rev() {
                s = s.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
                let j = usize::try_from(s >> 33).unwrap_or(0) % (i + 1);
                shuffled.swap(i, j);
            }
        }
        let fed = federated_deployment(10, fed_gen, prev);
        prop_assert_eq!(aggregate(&fed, &copies), aggregate(&fed, &shuffled));
        prop_assert_eq!(ready_count(&copies), ready_count(&shuffled));
    }

    #[test]
    fn observed_generation_never_exceeds_the_federated_generation(members in members_strategy(), fed_gen in 1i64..6, prev in prop::option::of(0i64..8)) {
        let objs = objects(&members);
        let copies: Vec<MemberCopy<'_>> = members.iter().zip(&objs)
            .map(|(m, o)| copy(&m.0, o, m.5)).collect();
        let fed = federated_deployment(10, fed_gen, prev);
        let s = aggregate(&fed, &copies).expect("status");
        let observed = s.get("observedGeneration").and_then(Value::as_i64);
        prop_assert!(observed.is_none_or(|o| o <= fed_gen));
        let all = !members.is_empty() && members.iter().all(|m| m.5 && m.4 >= m.3);
        if all {
            prop_assert_eq!(observed, Some(fed_gen));
        } else {
            prop_assert_eq!(observed, prev.map(|p| p.min(fed_gen)));
        }
        // A member past its deadline always fails the federated rollout once observed.
        if all && members.iter().any(|m| m.6) {
            prop_assert!(rollout_status(&with_status(&fed, Some(s))).is_err());
        }
    }
}

fn shuffle<T>(v: &mut [T], seed: u64) {
    let mut s = seed;
    for i in (1..v.len()).rev() {
        s = s
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        let j = usize::try_from(s >> 33).unwrap_or(0) % (i + 1);
        v.swap(i, j);
    }
}

fn job_part_strategy() -> impl Strategy<Value = Value> {
    (1i64..4, 0i64..4, 0u8..3, 0i64..60, any::<bool>()).prop_map(
        |(n, done, minute, start, fail)| {
            let start = format!("2026-12-03T10:{:02}:00Z", start);
            let end = format!("2026-12-03T11:{:02}:00Z", minute);
            if fail {
                failed_job(&start, &end)
            } else {
                member_job(n, done.min(n), n - done.min(n), &start, &end)
            }
        },
    )
}

fn ingress_strategy() -> impl Strategy<Value = Value> {
    prop::collection::vec(
        (0u8..4, any::<bool>()).prop_map(|(n, host)| {
            if host {
                json!({"hostname": format!("lb{n}.example")})
            } else {
                json!({"ip": format!("172.18.0.{n}"), "ipMode": "VIP"})
            }
        }),
        0..3,
    )
    .prop_map(|ingress| {
        json!({"apiVersion": "v1", "kind": "Service", "spec": {"type": "LoadBalancer"},
            "status": {"loadBalancer": {"ingress": ingress}}})
    })
}

proptest! {
    #[test]
    fn jobs_and_load_balancers_are_independent_of_copy_order(
        jobs in prop::collection::vec(job_part_strategy(), 0..5),
        services in prop::collection::vec(ingress_strategy(), 0..5),
        seed in any::<u64>(),
    ) {
        let names = ["ap", "eu", "us", "sa", "af"];
        let fed_job = json!({"apiVersion": "batch/v1", "kind": "Job", "metadata": {"name": "pi"}});
        let copies: Vec<MemberCopy<'_>> = jobs.iter().zip(names).map(|(o, c)| copy(c, o, true)).collect();
        let mut shuffled = copies.clone();
        shuffle(&mut shuffled, seed);
        let s = aggregate(&fed_job, &copies);
        prop_assert_eq!(&s, &aggregate(&fed_job, &shuffled));
        let s = s.expect("a Job has a status");
        let succeeded: i64 = jobs.iter().map(|j| j["status"]["succeeded"].as_i64().unwrap_or(0)).sum();
        prop_assert_eq!(s.get("succeeded").and_then(Value::as_i64).unwrap_or(0), succeeded);
        let any_failed = jobs.iter().any(|j| j["status"]["failed"].as_i64().is_some());
        prop_assert_eq!(cond(&s, "Failed")["status"] == "True", any_failed);

        let fed_svc = json!({"apiVersion": "v1", "kind": "Service", "metadata": {"name": "web"}});
        let copies: Vec<MemberCopy<'_>> = services.iter().zip(names).map(|(o, c)| copy(c, o, true)).collect();
        let mut shuffled = copies.clone();
        shuffle(&mut shuffled, seed);
        let s = aggregate(&fed_svc, &copies);
        prop_assert_eq!(&s, &aggregate(&fed_svc, &shuffled));
        let union = s.as_ref().and_then(|s| s.pointer("/loadBalancer/ingress")).and_then(Value::as_array).cloned().unwrap_or_default();
        for svc in &services {
            for e in svc["status"]["loadBalancer"]["ingress"].as_array().into_iter().flatten() {
                prop_assert_eq!(union.iter().filter(|u| *u == e).count(), 1);
            }
        }
    }
}

#[test]
fn history_replica_sets_split_the_members_counts() {
    use super::workload::{HistoryReplicaSet, history_replica_sets};
    let sets = [1, 2, 3].map(|revision| HistoryReplicaSet {
        revision,
        generation: revision + 10,
    });
    // Mid-rollout: 6 replicas, 4 of them updated, 5 ready, 3 available.
    let agg =
        json!({"replicas": 6, "updatedReplicas": 4, "readyReplicas": 5, "availableReplicas": 3});
    let got = history_replica_sets(&agg, 3, &sets);
    assert_eq!(got[2]["replicas"], 4);
    assert_eq!(got[2]["readyReplicas"], 4);
    assert_eq!(got[2]["availableReplicas"], 3);
    assert_eq!(got[2]["observedGeneration"], 13);
    assert_eq!(
        got[1]["replicas"], 2,
        "the previous revision holds the rest"
    );
    assert_eq!(got[1]["readyReplicas"], 1);
    assert_eq!(got[1]["availableReplicas"], 0);
    assert_eq!(got[0]["replicas"], 0, "older revisions hold none");
    // Rolled out: the old ones report nothing.
    let done =
        json!({"replicas": 6, "updatedReplicas": 6, "readyReplicas": 6, "availableReplicas": 6});
    let got = history_replica_sets(&done, 3, &sets);
    assert_eq!(got[2]["replicas"], 6);
    assert_eq!(
        (got[1]["replicas"].as_i64(), got[0]["replicas"].as_i64()),
        (Some(0), Some(0))
    );
    // Rolled back to revision 1's template as revision 4: 4 is current.
    let sets4 = [2, 3, 4].map(|revision| HistoryReplicaSet {
        revision,
        generation: 1,
    });
    let got = history_replica_sets(&agg, 4, &sets4);
    assert_eq!(
        got.iter()
            .map(|s| s["replicas"].as_i64().unwrap_or(-1))
            .collect::<Vec<_>>(),
        [0, 2, 4]
    );
    // Counts missing or odd never go negative.
    let odd = json!({"replicas": 2, "updatedReplicas": 5, "readyReplicas": -1});
    let got = history_replica_sets(&odd, 3, &sets);
    assert!(got.iter().all(|s| s["replicas"].as_i64() >= Some(0)));
}
