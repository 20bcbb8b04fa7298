//! The bootstrap configuration: kube-apiserver 1.33's mandatory and
//! suggested FlowSchemas and PriorityLevelConfigurations
//! (`k8s.io/apiserver/pkg/apis/flowcontrol/bootstrap`), with their names,
//! specs and the `apf.kubernetes.io/autoupdate-spec: "true"` annotation,
//! and [`ensure`], which creates them at start as upstream's
//! configuration ensurer does.
//!
//! - Mandatory objects (`exempt` and `catch-all`, both kinds) are
//!   recreated when deleted, and put back to their default spec while
//!   their annotation is `"true"`.
//! - Suggested objects are created when missing at start, and put back to
//!   their default spec while their annotation is `"true"`; a deleted
//!   suggested object stays deleted until the next start (upstream's
//!   ensurer recreates it at its next sync, which is every start too).

use serde_json::{Value, json};

use crate::controllers::bootstrap;
use crate::registry::{Registry, Target, WriteOptions, object};
use crate::status::ApiError;

/// The group of both kinds.
pub const GROUP: &str = "flowcontrol.apiserver.k8s.io";

/// The annotation that lets the server keep an object's spec at its
/// default.
pub const AUTOUPDATE: &str = "apf.kubernetes.io/autoupdate-spec";

/// The priority level and flow schema every `system:masters` request
/// takes.
pub const EXEMPT: &str = "exempt";

/// The priority level and flow schema of last resort.
pub const CATCH_ALL: &str = "catch-all";

/// `Subject`s.
fn group(name: &str) -> Value {
    json!({"kind": "Group", "group": {"name": name}})
}

fn user(name: &str) -> Value {
    json!({"kind": "User", "user": {"name": name}})
}

fn kube_system_account(name: &str) -> Value {
    json!({"kind": "ServiceAccount", "serviceAccount": {"namespace": "kube-system", "name": name}})
}

fn resource_rule(
    verbs: &[&str],
    groups: &[&str],
    resources: &[&str],
    ns: &[&str],
    cluster: bool,
) -> Value {
    let mut rule = json!({
        "verbs": verbs,
        "apiGroups": groups,
        "resources": resources,
        "namespaces": ns,
    });
    if cluster {
        rule["clusterScope"] = json!(true);
    }
    rule
}

/// Every verb, group and resource, in every namespace and cluster-wide;
/// every non-resource URL.
fn everything(subjects: Vec<Value>) -> Value {
    json!({
        "subjects": subjects,
        "resourceRules": [resource_rule(&["*"], &["*"], &["*"], &["*"], true)],
        "nonResourceRules": [{"verbs": ["*"], "nonResourceURLs": ["*"]}],
    })
}

fn flow_schema(
    name: &str,
    level: &str,
    precedence: i64,
    by: Option<&str>,
    rules: Vec<Value>,
) -> Value {
    let mut spec = json!({
        "priorityLevelConfiguration": {"name": level},
        "matchingPrecedence": precedence,
        "rules": rules,
    });
    if let Some(by) = by {
        spec["distinguisherMethod"] = json!({"type": by});
    }
    json!({
        "apiVersion": format!("{GROUP}/v1"),
        "kind": "FlowSchema",
        "metadata": {"name": name, "annotations": {AUTOUPDATE: "true"}},
        "spec": spec,
    })
}

fn limited(name: &str, shares: i64, lendable: i64, queuing: Option<(i64, i64, i64)>) -> Value {
    let response = match queuing {
        Some((queues, hand, length)) => json!({
            "type": "Queue",
            "queuing": {"queues": queues, "handSize": hand, "queueLengthLimit": length},
        }),
        None => json!({"type": "Reject"}),
    };
    level(
        name,
        json!({
            "type": "Limited",
            "limited": {
                "nominalConcurrencyShares": shares,
                "lendablePercent": lendable,
                "limitResponse": response,
            },
        }),
    )
}

fn level(name: &str, spec: Value) -> Value {
    json!({
        "apiVersion": format!("{GROUP}/v1"),
        "kind": "PriorityLevelConfiguration",
        "metadata": {"name": name, "annotations": {AUTOUPDATE: "true"}},
        "spec": spec,
    })
}

/// The mandatory PriorityLevelConfigurations: `exempt`, `catch-all`.
pub fn mandatory_levels() -> Vec<Value> {
    vec![
        level(
            EXEMPT,
            json!({"type": "Exempt", "exempt": {"nominalConcurrencyShares": 0, "lendablePercent": 0}}),
        ),
        limited(CATCH_ALL, 5, 0, None),
    ]
}

/// The suggested PriorityLevelConfigurations.
pub fn suggested_levels() -> Vec<Value> {
    vec![
        limited("system", 30, 33, Some((64, 6, 50))),
        limited("node-high", 40, 25, Some((64, 6, 50))),
        limited("leader-election", 10, 0, Some((16, 4, 50))),
        limited("workload-high", 40, 50, Some((128, 6, 50))),
        limited("workload-low", 100, 90, Some((128, 6, 50))),
        limited("global-default", 20, 50, Some((128, 6, 50))),
    ]
}

/// The mandatory FlowSchemas: `exempt` (group `system:masters`, no
/// distinguisher) and `catch-all` (every user, by user).
pub fn mandatory_schemas() -> Vec<Value> {
    vec![
        flow_schema(
            EXEMPT,
            EXEMPT,
            1,
            None,
            vec![everything(vec![group("system:masters")])],
        ),
        flow_schema(
            CATCH_ALL,
            CATCH_ALL,
            10000,
            Some("ByUser"),
            vec![everything(vec![
                group("system:unauthenticated"),
                group("system:authenticated"),
            ])],
        ),
    ]
}

/// The suggested FlowSchemas.
pub fn suggested_schemas() -> Vec<Value> {
    let get_create_update = ["get", "create", "update"];
    let leases = resource_rule(
        &get_create_update,
        &["coordination.k8s.io"],
        &["leases"],
        &["*"],
        false,
    );
    let all_users = vec![
        group("system:unauthenticated"),
        group("system:authenticated"),
    ];
    vec![
        flow_schema(
            "probes",
            EXEMPT,
            2,
            None,
            vec![json!({
                "subjects": all_users.clone(),
                "nonResourceRules": [{"verbs": ["get"], "nonResourceURLs": ["/healthz", "/readyz", "/livez"]}],
            })],
        ),
        flow_schema(
            "system-leader-election",
            "leader-election",
            100,
            Some("ByUser"),
            vec![json!({
                "subjects": [
                    user("system:kube-controller-manager"),
                    user("system:kube-scheduler"),
                    kube_system_account("*"),
                ],
                "resourceRules": [leases.clone()],
            })],
        ),
        flow_schema(
            "endpoint-controller",
            "workload-high",
            150,
            Some("ByUser"),
            vec![json!({
                "subjects": [
                    user("system:kube-controller-manager"),
                    kube_system_account("endpoint-controller"),
                    kube_system_account("endpointslicemirroring-controller"),
                ],
                "resourceRules": [resource_rule(&get_create_update, &[""], &["endpoints"], &["*"], false)],
            })],
        ),
        flow_schema(
            "workload-leader-election",
            "leader-election",
            200,
            Some("ByUser"),
            vec![json!({
                "subjects": [kube_system_account("*")],
                "resourceRules": [
                    resource_rule(&get_create_update, &[""], &["endpoints", "configmaps"], &["*"], false),
                    leases,
                ],
            })],
        ),
        flow_schema(
            "system-node-high",
            "node-high",
            400,
            Some("ByUser"),
            vec![json!({
                "subjects": [group("system:nodes")],
                "resourceRules": [
                    resource_rule(&["*"], &[""], &["nodes", "nodes/status"], &["*"], true),
                    resource_rule(&["*"], &["coordination.k8s.io"], &["leases"], &["*"], false),
                ],
            })],
        ),
        flow_schema(
            "system-nodes",
            "system",
            500,
            Some("ByUser"),
            vec![everything(vec![group("system:nodes")])],
        ),
        flow_schema(
            "kube-controller-manager",
            "workload-high",
            800,
            Some("ByNamespace"),
            vec![everything(vec![user("system:kube-controller-manager")])],
        ),
        flow_schema(
            "kube-scheduler",
            "workload-high",
            800,
            Some("ByNamespace"),
            vec![everything(vec![user("system:kube-scheduler")])],
        ),
        flow_schema(
            "kube-system-service-accounts",
            "workload-high",
            900,
            Some("ByNamespace"),
            vec![everything(vec![kube_system_account("*")])],
        ),
        flow_schema(
            "service-accounts",
            "workload-low",
            9000,
            Some("ByUser"),
            vec![everything(vec![group("system:serviceaccounts")])],
        ),
        flow_schema(
            "global-default",
            "global-default",
            9900,
            Some("ByUser"),
            vec![everything(all_users)],
        ),
    ]
}

/// Every default object of `plural` (`flowschemas` or
/// `prioritylevelconfigurations`) and whether it is mandatory.
pub fn all(plural: &str) -> Vec<(Value, bool)> {
    let (mandatory, suggested) = if plural == "flowschemas" {
        (mandatory_schemas(), suggested_schemas())
    } else {
        (mandatory_levels(), suggested_levels())
    };
    let m = mandatory.into_iter().map(|o| (o, true));
    m.chain(suggested.into_iter().map(|o| (o, false))).collect()
}

/// Creates every default object that is missing, and puts the spec of
/// each stored one whose [`AUTOUPDATE`] annotation is `"true"` back to its
/// default. With `only_mandatory`, only the mandatory ones (the periodic
/// check). Idempotent.
///
/// # Errors
///
/// A read or write failed.
pub async fn ensure(registry: &Registry, only_mandatory: bool) -> Result<(), ApiError> {
    for plural in ["prioritylevelconfigurations", "flowschemas"] {
        let Some(res) = registry.resources().find(GROUP, "v1", plural) else {
            continue;
        };
        for (obj, mandatory) in all(plural) {
            if only_mandatory && !mandatory {
                continue;
            }
            let name = object::name(&obj).to_string();
            match registry.get(&res, "", &name).await {
                Ok(stored) => {
                    let auto = stored
                        .pointer(&format!(
                            "/metadata/annotations/{}",
                            AUTOUPDATE.replace('/', "~1")
                        ))
                        .and_then(Value::as_str)
                        == Some("true");
                    let wanted = res
                        .normalize(obj.clone())
                        .map_err(|e| ApiError::internal(e.to_string()))?;
                    if auto && stored.get("spec") != wanted.get("spec") {
                        let mut updated = stored.clone();
                        updated["spec"] = wanted["spec"].clone();
                        let opts = WriteOptions {
                            field_manager: "api-priority-and-fairness-config-producer-v1".into(),
                            ..WriteOptions::default()
                        };
                        registry
                            .update(&res, "", &name, updated, Target::Main, &opts)
                            .await?;
                    }
                }
                Err(e) if e.reason() == "NotFound" => {
                    bootstrap::create(registry, GROUP, "v1", plural, obj).await?;
                }
                Err(e) => return Err(e),
            }
        }
    }
    Ok(())
}
