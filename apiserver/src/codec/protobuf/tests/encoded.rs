//! Bodies encoded with the `k8s-pb` prost types, for kinds and fields the
//! kubectl generators never send. The expected JSON is what encoding/json
//! prints for the same Go object (tags checked against upstream types.go).

use std::collections::BTreeMap;

use k8s_pb::api::apps::v1 as apps;
use k8s_pb::api::core::v1 as core;
use k8s_pb::apiextensions_apiserver::pkg::apis::apiextensions::v1 as apiext;
use k8s_pb::apimachinery::pkg::api::resource::Quantity;
use k8s_pb::apimachinery::pkg::apis::meta::v1 as meta;
use k8s_pb::apimachinery::pkg::util::intstr::IntOrString;
use prost::Message;
use serde_json::{Value as Json, json};

use super::{assert_json_eq, decode, envelope};

fn s(text: &str) -> Option<String> {
    Some(text.to_owned())
}

fn map<V>(entries: &[(&str, V)]) -> BTreeMap<String, V>
where
    V: Clone,
{
    entries
        .iter()
        .map(|(k, v)| ((*k).to_owned(), v.clone()))
        .collect()
}

fn quantity(text: &str) -> Quantity {
    Quantity { string: s(text) }
}

fn int(i: i32) -> Option<IntOrString> {
    Some(IntOrString {
        r#type: Some(0),
        int_val: Some(i),
        str_val: s(""),
    })
}

fn string(text: &str) -> Option<IntOrString> {
    Some(IntOrString {
        r#type: Some(1),
        int_val: Some(0),
        str_val: s(text),
    })
}

#[track_caller]
fn check(api_version: &str, kind: &str, message: &impl Message, want: Json) {
    let body = envelope(api_version, kind, &message.encode_to_vec());
    let decoded = decode(&body).unwrap_or_else(|e| panic!("{api_version} {kind}: {e}"));
    assert_eq!(decoded.api_version, api_version);
    assert_eq!(decoded.kind, kind);
    assert_json_eq(&decoded.object, &want, &format!("{api_version} {kind}"));
}

/// Pointers to zero kept, non-pointer zeros dropped, inline embedding
/// (ProbeHandler, VolumeSource, LocalObjectReference two levels down),
/// IntOrString both ways, quantities, Time without its fraction, FieldsV1,
/// and zero structs printed (`status: {}`, `resources: {}`).
#[test]
fn deployment() {
    let time = |seconds| meta::Time {
        seconds: Some(seconds),
        nanos: Some(999),
    };
    let deployment = apps::Deployment {
        metadata: Some(meta::ObjectMeta {
            name: s("web"),
            namespace: s("default"),
            generation: Some(0),
            labels: map(&[("app", "web".to_owned())]),
            creation_timestamp: Some(time(1_704_164_645)),
            deletion_grace_period_seconds: Some(0),
            owner_references: vec![meta::OwnerReference {
                api_version: s("v1"),
                kind: s("ConfigMap"),
                name: s("owner"),
                uid: s("1234"),
                controller: Some(false),
                block_owner_deletion: None,
            }],
            managed_fields: vec![meta::ManagedFieldsEntry {
                manager: s("kubectl"),
                operation: s("Update"),
                api_version: s("apps/v1"),
                time: Some(time(1_704_164_645)),
                fields_type: s("FieldsV1"),
                fields_v1: Some(meta::FieldsV1 {
                    raw: Some(br#"{"f:spec":{"f:replicas":{}}}"#.to_vec()),
                }),
                subresource: s(""),
            }],
            ..Default::default()
        }),
        spec: Some(apps::DeploymentSpec {
            replicas: Some(0),
            revision_history_limit: Some(0),
            min_ready_seconds: Some(0),
            paused: Some(false),
            selector: Some(meta::LabelSelector {
                match_labels: map(&[("app", "web".to_owned())]),
                match_expressions: vec![meta::LabelSelectorRequirement {
                    key: s("tier"),
                    operator: s("In"),
                    values: vec!["a".into(), "b".into()],
                }],
            }),
            strategy: Some(apps::DeploymentStrategy {
                r#type: s("RollingUpdate"),
                rolling_update: Some(apps::RollingUpdateDeployment {
                    max_unavailable: string("25%"),
                    max_surge: int(0),
                }),
            }),
            template: Some(core::PodTemplateSpec {
                metadata: Some(meta::ObjectMeta {
                    labels: map(&[("app", "web".to_owned())]),
                    ..Default::default()
                }),
                spec: Some(core::PodSpec {
                    termination_grace_period_seconds: Some(0),
                    automount_service_account_token: Some(false),
                    host_pid: Some(true),
                    host_network: Some(false),
                    containers: vec![core::Container {
                        name: s("app"),
                        image: s("nginx"),
                        args: vec![String::new(), "x".into()],
                        tty: Some(true),
                        stdin: Some(false),
                        ports: vec![core::ContainerPort {
                            name: s("http"),
                            container_port: Some(8080),
                            host_port: Some(0),
                            protocol: s("TCP"),
                            host_ip: s(""),
                        }],
                        env: vec![core::EnvVar {
                            name: s("A"),
                            value: s(""),
                            value_from: None,
                        }],
                        resources: Some(core::ResourceRequirements {
                            requests: map(&[("cpu", quantity("100m"))]),
                            limits: map(&[("memory", quantity("128Mi"))]),
                            claims: vec![],
                        }),
                        liveness_probe: Some(core::Probe {
                            handler: Some(core::ProbeHandler {
                                http_get: Some(core::HttpGetAction {
                                    path: s("/healthz"),
                                    port: string("http"),
                                    ..Default::default()
                                }),
                                ..Default::default()
                            }),
                            initial_delay_seconds: Some(0),
                            period_seconds: Some(10),
                            ..Default::default()
                        }),
                        security_context: Some(core::SecurityContext {
                            allow_privilege_escalation: Some(false),
                            run_as_user: Some(0),
                            ..Default::default()
                        }),
                        ..Default::default()
                    }],
                    volumes: vec![
                        core::Volume {
                            name: s("data"),
                            volume_source: Some(core::VolumeSource {
                                empty_dir: Some(core::EmptyDirVolumeSource {
                                    medium: s("Memory"),
                                    size_limit: Some(quantity("256Mi")),
                                }),
                                ..Default::default()
                            }),
                        },
                        core::Volume {
                            name: s("cfg"),
                            volume_source: Some(core::VolumeSource {
                                config_map: Some(core::ConfigMapVolumeSource {
                                    local_object_reference: Some(core::LocalObjectReference {
                                        name: s("cm"),
                                    }),
                                    default_mode: Some(420),
                                    optional: Some(false),
                                    items: vec![],
                                }),
                                ..Default::default()
                            }),
                        },
                    ],
                    ..Default::default()
                }),
            }),
            ..Default::default()
        }),
        status: None,
    };
    check(
        "apps/v1",
        "Deployment",
        &deployment,
        json!({
            "apiVersion": "apps/v1",
            "kind": "Deployment",
            "metadata": {
                "name": "web",
                "namespace": "default",
                "labels": {"app": "web"},
                "creationTimestamp": "2024-01-02T03:04:05Z",
                "deletionGracePeriodSeconds": 0,
                "ownerReferences": [
                    {"apiVersion": "v1", "kind": "ConfigMap", "name": "owner", "uid": "1234", "controller": false}
                ],
                "managedFields": [{
                    "manager": "kubectl",
                    "operation": "Update",
                    "apiVersion": "apps/v1",
                    "time": "2024-01-02T03:04:05Z",
                    "fieldsType": "FieldsV1",
                    "fieldsV1": {"f:spec": {"f:replicas": {}}}
                }]
            },
            "spec": {
                "replicas": 0,
                "revisionHistoryLimit": 0,
                "selector": {
                    "matchLabels": {"app": "web"},
                    "matchExpressions": [{"key": "tier", "operator": "In", "values": ["a", "b"]}]
                },
                "strategy": {
                    "type": "RollingUpdate",
                    "rollingUpdate": {"maxUnavailable": "25%", "maxSurge": 0}
                },
                "template": {
                    "metadata": {"labels": {"app": "web"}},
                    "spec": {
                        "terminationGracePeriodSeconds": 0,
                        "automountServiceAccountToken": false,
                        "hostPID": true,
                        "containers": [{
                            "name": "app",
                            "image": "nginx",
                            "args": ["", "x"],
                            "tty": true,
                            "ports": [{"name": "http", "containerPort": 8080, "protocol": "TCP"}],
                            "env": [{"name": "A"}],
                            "resources": {"requests": {"cpu": "100m"}, "limits": {"memory": "128Mi"}},
                            "livenessProbe": {"httpGet": {"path": "/healthz", "port": "http"}, "periodSeconds": 10},
                            "securityContext": {"allowPrivilegeEscalation": false, "runAsUser": 0}
                        }],
                        "volumes": [
                            {"name": "data", "emptyDir": {"medium": "Memory", "sizeLimit": "256Mi"}},
                            {"name": "cfg", "configMap": {"name": "cm", "defaultMode": 420, "optional": false}}
                        ]
                    }
                }
            },
            "status": {}
        }),
    );
}

/// JSONSchemaProps: `$ref`, `x-kubernetes-*` names, raw JSON `default` and
/// `enum`, the three "Or" wrappers, doubles printed as Go prints them.
#[test]
fn custom_resource_definition() {
    let props = |ty: &str| apiext::JsonSchemaProps {
        r#type: s(ty),
        ..Default::default()
    };
    let raw = |text: &str| apiext::Json {
        raw: Some(text.as_bytes().to_vec()),
    };
    let schema = apiext::JsonSchemaProps {
        r#type: s("object"),
        properties: map(&[
            (
                "spec",
                apiext::JsonSchemaProps {
                    r#type: s("object"),
                    x_kubernetes_preserve_unknown_fields: Some(true),
                    default: Some(raw(r#"{"a":1}"#)),
                    ..Default::default()
                },
            ),
            (
                "mode",
                apiext::JsonSchemaProps {
                    r#type: s("string"),
                    r#enum: vec![raw(r#""fast""#), raw(r#""slow""#)],
                    ..Default::default()
                },
            ),
            (
                "list",
                apiext::JsonSchemaProps {
                    r#type: s("array"),
                    items: Some(Box::new(apiext::JsonSchemaPropsOrArray {
                        schema: Some(Box::new(props("string"))),
                        j_son_schemas: vec![],
                    })),
                    x_kubernetes_list_type: s("set"),
                    max_items: Some(3),
                    minimum: Some(1.5),
                    maximum: Some(10.0),
                    ..Default::default()
                },
            ),
            (
                "tuple",
                apiext::JsonSchemaProps {
                    items: Some(Box::new(apiext::JsonSchemaPropsOrArray {
                        schema: None,
                        j_son_schemas: vec![props("string"), props("integer")],
                    })),
                    ..Default::default()
                },
            ),
            (
                "labels",
                apiext::JsonSchemaProps {
                    r#type: s("object"),
                    additional_properties: Some(Box::new(apiext::JsonSchemaPropsOrBool {
                        allows: Some(true),
                        schema: Some(Box::new(props("string"))),
                    })),
                    ..Default::default()
                },
            ),
            (
                "ref",
                apiext::JsonSchemaProps {
                    r#ref: s("#/definitions/x"),
                    ..Default::default()
                },
            ),
        ]),
        additional_properties: Some(Box::new(apiext::JsonSchemaPropsOrBool {
            allows: Some(false),
            schema: None,
        })),
        dependencies: map(&[(
            "a",
            apiext::JsonSchemaPropsOrStringArray {
                schema: None,
                property: vec!["b".into()],
            },
        )]),
        ..Default::default()
    };
    let crd = apiext::CustomResourceDefinition {
        metadata: Some(meta::ObjectMeta {
            name: s("widgets.example.com"),
            ..Default::default()
        }),
        spec: Some(apiext::CustomResourceDefinitionSpec {
            group: s("example.com"),
            names: Some(apiext::CustomResourceDefinitionNames {
                plural: s("widgets"),
                kind: s("Widget"),
                ..Default::default()
            }),
            scope: s("Namespaced"),
            versions: vec![apiext::CustomResourceDefinitionVersion {
                name: s("v1"),
                served: Some(true),
                storage: Some(false),
                schema: Some(apiext::CustomResourceValidation {
                    open_apiv3_schema: Some(schema),
                }),
                ..Default::default()
            }],
            ..Default::default()
        }),
        status: None,
    };
    check(
        "apiextensions.k8s.io/v1",
        "CustomResourceDefinition",
        &crd,
        json!({
            "apiVersion": "apiextensions.k8s.io/v1",
            "kind": "CustomResourceDefinition",
            "metadata": {"name": "widgets.example.com"},
            "spec": {
                "group": "example.com",
                "names": {"plural": "widgets", "kind": "Widget"},
                "scope": "Namespaced",
                "versions": [{
                    "name": "v1",
                    "served": true,
                    "storage": false,
                    "schema": {"openAPIV3Schema": {
                        "type": "object",
                        "properties": {
                            "spec": {"type": "object", "x-kubernetes-preserve-unknown-fields": true, "default": {"a": 1}},
                            "mode": {"type": "string", "enum": ["fast", "slow"]},
                            "list": {
                                "type": "array",
                                "items": {"type": "string"},
                                "x-kubernetes-list-type": "set",
                                "maxItems": 3,
                                "minimum": 1.5,
                                "maximum": 10
                            },
                            "tuple": {"items": [{"type": "string"}, {"type": "integer"}]},
                            "labels": {"type": "object", "additionalProperties": {"type": "string"}},
                            "ref": {"$ref": "#/definitions/x"}
                        },
                        "additionalProperties": false,
                        "dependencies": {"a": ["b"]}
                    }}
                }]
            },
            "status": {"conditions": null, "acceptedNames": {"plural": "", "kind": ""}, "storedVersions": null}
        }),
    );
}

/// MicroTime keeps microseconds (truncating nanoseconds); Time drops them.
#[test]
fn lease_and_event_times() {
    let micro = |seconds, nanos| meta::MicroTime {
        seconds: Some(seconds),
        nanos: Some(nanos),
    };
    let lease = k8s_pb::api::coordination::v1::Lease {
        metadata: Some(meta::ObjectMeta {
            name: s("leader"),
            ..Default::default()
        }),
        spec: Some(k8s_pb::api::coordination::v1::LeaseSpec {
            holder_identity: s("pod-a"),
            lease_duration_seconds: Some(0),
            acquire_time: Some(micro(1_704_164_645, 123_456_789)),
            renew_time: Some(micro(1_704_164_645, 0)),
            lease_transitions: Some(2),
            ..Default::default()
        }),
    };
    check(
        "coordination.k8s.io/v1",
        "Lease",
        &lease,
        json!({
            "apiVersion": "coordination.k8s.io/v1",
            "kind": "Lease",
            "metadata": {"name": "leader"},
            "spec": {
                "holderIdentity": "pod-a",
                "leaseDurationSeconds": 0,
                "acquireTime": "2024-01-02T03:04:05.123456Z",
                "renewTime": "2024-01-02T03:04:05.000000Z",
                "leaseTransitions": 2
            }
        }),
    );
    let event = k8s_pb::api::events::v1::Event {
        metadata: Some(meta::ObjectMeta {
            name: s("e"),
            ..Default::default()
        }),
        event_time: Some(micro(0, 1_000)),
        reason: s("Started"),
        deprecated_first_timestamp: Some(meta::Time {
            seconds: Some(-1),
            nanos: Some(500),
        }),
        deprecated_count: Some(0),
        ..Default::default()
    };
    check(
        "events.k8s.io/v1",
        "Event",
        &event,
        json!({
            "apiVersion": "events.k8s.io/v1",
            "kind": "Event",
            "metadata": {"name": "e"},
            "eventTime": "1970-01-01T00:00:00.000001Z",
            "reason": "Started",
            "regarding": {},
            "deprecatedSource": {},
            "deprecatedFirstTimestamp": "1969-12-31T23:59:59Z",
            "deprecatedLastTimestamp": null
        }),
    );
}

/// RawExtension holding JSON, and holding a whole protobuf object.
#[test]
fn controller_revision_raw_extension() {
    let revision = |raw: Vec<u8>| apps::ControllerRevision {
        metadata: Some(meta::ObjectMeta {
            name: s("rev"),
            ..Default::default()
        }),
        data: Some(k8s_pb::apimachinery::pkg::runtime::RawExtension { raw: Some(raw) }),
        revision: Some(3),
    };
    check(
        "apps/v1",
        "ControllerRevision",
        &revision(br#"{"spec":{"template":{"x":[1,2]}}}"#.to_vec()),
        json!({
            "apiVersion": "apps/v1",
            "kind": "ControllerRevision",
            "metadata": {"name": "rev"},
            "data": {"spec": {"template": {"x": [1, 2]}}},
            "revision": 3
        }),
    );
    let config_map = core::ConfigMap {
        metadata: Some(meta::ObjectMeta {
            name: s("inner"),
            ..Default::default()
        }),
        data: map(&[("k", "v".to_owned())]),
        ..Default::default()
    };
    let nested = envelope("v1", "ConfigMap", &config_map.encode_to_vec());
    check(
        "apps/v1",
        "ControllerRevision",
        &revision(nested),
        json!({
            "apiVersion": "apps/v1",
            "kind": "ControllerRevision",
            "metadata": {"name": "rev"},
            "data": {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "inner"}, "data": {"k": "v"}},
            "revision": 3
        }),
    );
}

/// DELETE bodies of typed clients: DeleteOptions under the resource's own
/// group/version (client-go registers the option kinds in every one).
#[test]
fn delete_options() {
    let options = meta::DeleteOptions {
        grace_period_seconds: Some(0),
        preconditions: Some(meta::Preconditions {
            uid: s("u-1"),
            resource_version: s("42"),
        }),
        orphan_dependents: Some(false),
        propagation_policy: s("Foreground"),
        dry_run: vec!["All".into()],
        ignore_store_read_error_with_cluster_breaking_potential: None,
    };
    for api_version in ["v1", "apps/v1", "meta.k8s.io/v1"] {
        check(
            api_version,
            "DeleteOptions",
            &options,
            json!({
                "apiVersion": api_version,
                "kind": "DeleteOptions",
                "gracePeriodSeconds": 0,
                "preconditions": {"uid": "u-1", "resourceVersion": "42"},
                "orphanDependents": false,
                "propagationPolicy": "Foreground",
                "dryRun": ["All"]
            }),
        );
    }
    check(
        "v1",
        "DeleteOptions",
        &meta::DeleteOptions::default(),
        json!({"apiVersion": "v1", "kind": "DeleteOptions"}),
    );
}

/// PUT on the scale subresource.
#[test]
fn scale() {
    let scale = k8s_pb::api::autoscaling::v1::Scale {
        metadata: Some(meta::ObjectMeta {
            name: s("web"),
            namespace: s("default"),
            resource_version: s("7"),
            ..Default::default()
        }),
        spec: Some(k8s_pb::api::autoscaling::v1::ScaleSpec { replicas: Some(0) }),
        status: Some(k8s_pb::api::autoscaling::v1::ScaleStatus {
            replicas: Some(3),
            selector: s("app=web"),
        }),
    };
    check(
        "autoscaling/v1",
        "Scale",
        &scale,
        json!({
            "apiVersion": "autoscaling/v1",
            "kind": "Scale",
            "metadata": {"name": "web", "namespace": "default", "resourceVersion": "7"},
            "spec": {},
            "status": {"replicas": 3, "selector": "app=web"}
        }),
    );
}

/// Named slices (`Verbs`, `ExtraValue`) print as plain arrays.
#[test]
fn named_slices() {
    let list = meta::APIResourceList {
        group_version: s("apps/v1"),
        resources: vec![
            meta::APIResource {
                name: s("deployments"),
                singular_name: s("deployment"),
                namespaced: Some(true),
                kind: s("Deployment"),
                verbs: Some(meta::Verbs {
                    items: vec!["get".into(), "list".into()],
                }),
                short_names: vec!["deploy".into()],
                ..Default::default()
            },
            meta::APIResource {
                name: s("deployments/status"),
                verbs: None,
                ..Default::default()
            },
        ],
    };
    check(
        "v1",
        "APIResourceList",
        &list,
        json!({
            "apiVersion": "v1",
            "kind": "APIResourceList",
            "groupVersion": "apps/v1",
            "resources": [
                {"name": "deployments", "singularName": "deployment", "namespaced": true, "kind": "Deployment",
                 "verbs": ["get", "list"], "shortNames": ["deploy"]},
                {"name": "deployments/status", "singularName": "", "namespaced": false, "kind": "", "verbs": null}
            ]
        }),
    );
    let review = k8s_pb::api::authorization::v1::SubjectAccessReview {
        metadata: None,
        spec: Some(k8s_pb::api::authorization::v1::SubjectAccessReviewSpec {
            user: s("alice"),
            extra: map(&[(
                "scopes",
                k8s_pb::api::authorization::v1::ExtraValue {
                    items: vec!["a".into(), "b".into()],
                },
            )]),
            ..Default::default()
        }),
        status: None,
    };
    check(
        "authorization.k8s.io/v1",
        "SubjectAccessReview",
        &review,
        json!({
            "apiVersion": "authorization.k8s.io/v1",
            "kind": "SubjectAccessReview",
            "metadata": {},
            "spec": {"user": "alice", "extra": {"scopes": ["a", "b"]}},
            "status": {"allowed": false}
        }),
    );
}

/// kube-aggregator's APIService: bytes as base64.
#[test]
fn api_service() {
    use k8s_pb::kube_aggregator::pkg::apis::apiregistration::v1 as reg;
    let service = reg::APIService {
        metadata: Some(meta::ObjectMeta {
            name: s("v1beta1.metrics.k8s.io"),
            ..Default::default()
        }),
        spec: Some(reg::APIServiceSpec {
            service: Some(reg::ServiceReference {
                namespace: s("kube-system"),
                name: s("metrics-server"),
                port: Some(443),
            }),
            group: s("metrics.k8s.io"),
            version: s("v1beta1"),
            insecure_skip_tls_verify: Some(false),
            ca_bundle: Some(b"\x00\x01ca".to_vec()),
            group_priority_minimum: Some(100),
            version_priority: Some(100),
        }),
        status: None,
    };
    check(
        "apiregistration.k8s.io/v1",
        "APIService",
        &service,
        json!({
            "apiVersion": "apiregistration.k8s.io/v1",
            "kind": "APIService",
            "metadata": {"name": "v1beta1.metrics.k8s.io"},
            "spec": {
                "service": {"namespace": "kube-system", "name": "metrics-server", "port": 443},
                "group": "metrics.k8s.io",
                "version": "v1beta1",
                "caBundle": "AAFjYQ==",
                "groupPriorityMinimum": 100,
                "versionPriority": 100
            },
            "status": {}
        }),
    );
}

/// Fields whose proto name is not their JSON name (besides JSONSchemaProps'
/// `$ref` and `x-kubernetes-*`): the Go JSON tag wins.
#[test]
fn proto_names_that_differ_from_json() {
    use k8s_pb::api::authentication::v1 as authn;
    use k8s_pb::api::networking::v1 as net;
    let request = authn::TokenRequest {
        metadata: None,
        spec: Some(authn::TokenRequestSpec {
            audiences: vec!["api".into()],
            expiration_seconds: Some(600),
            bound_object_ref: Some(authn::BoundObjectReference {
                kind: s("Pod"),
                api_version: s("v1"),
                name: s("p"),
                u_id: s("uid-1"),
            }),
        }),
        status: None,
    };
    check(
        "authentication.k8s.io/v1",
        "TokenRequest",
        &request,
        json!({
            "apiVersion": "authentication.k8s.io/v1",
            "kind": "TokenRequest",
            "metadata": {},
            "spec": {
                "audiences": ["api"],
                "expirationSeconds": 600,
                "boundObjectRef": {"kind": "Pod", "apiVersion": "v1", "name": "p", "uid": "uid-1"}
            },
            "status": {"token": "", "expirationTimestamp": null}
        }),
    );
    let class = net::IngressClass {
        metadata: None,
        spec: Some(net::IngressClassSpec {
            controller: s("example.com/ingress"),
            parameters: Some(net::IngressClassParametersReference {
                a_pi_group: s("example.com"),
                kind: s("Params"),
                name: s("p"),
                ..Default::default()
            }),
        }),
    };
    check(
        "networking.k8s.io/v1",
        "IngressClass",
        &class,
        json!({
            "apiVersion": "networking.k8s.io/v1",
            "kind": "IngressClass",
            "metadata": {},
            "spec": {
                "controller": "example.com/ingress",
                "parameters": {"apiGroup": "example.com", "kind": "Params", "name": "p", "scope": null}
            }
        }),
    );
    let hooks = k8s_pb::api::admissionregistration::v1::MutatingWebhookConfiguration {
        metadata: None,
        webhooks: vec![k8s_pb::api::admissionregistration::v1::MutatingWebhook {
            name: s("w.example.com"),
            ..Default::default()
        }],
    };
    check(
        "admissionregistration.k8s.io/v1",
        "MutatingWebhookConfiguration",
        &hooks,
        json!({
            "apiVersion": "admissionregistration.k8s.io/v1",
            "kind": "MutatingWebhookConfiguration",
            "metadata": {},
            "webhooks": [{
                "name": "w.example.com",
                "clientConfig": {},
                "sideEffects": null,
                "admissionReviewVersions": null
            }]
        }),
    );
}
