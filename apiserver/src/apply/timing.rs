//! A timing helper for [`update`] on the write path's typical objects
//! (ignored: run it with
//! `cargo test -p skein-apiserver --release --lib apply::timing -- --ignored --nocapture`).

use std::time::Instant;

use serde_json::{Value, json};

use super::*;
use crate::schema::definitions;

/// A 1 KiB Opaque Secret as the registry has it when it records the
/// create (`hack/bench`'s payload, plus uid and creationTimestamp).
pub(super) fn secret_1k() -> Value {
    json!({
        "apiVersion": "v1", "kind": "Secret",
        "metadata": {"name": "c-r0-00-0000", "namespace": "bench-create",
            "labels": {"app": "bench"},
            "uid": "0b7d8c5e-3f4a-4d2e-9a61-5d7c2e8f9a10",
            "creationTimestamp": "2024-05-01T10:00:00Z"},
        "type": "Opaque",
        "data": {"payload": "QUJD".repeat(215)},
    })
}

/// A ~4 KiB stored Deployment (two containers with ports, env, resources,
/// mounts).
pub(super) fn deployment_4k(image: &str) -> Value {
    let env: Vec<Value> = (0..12)
        .map(|i| json!({"name": format!("VAR_{i}"), "value": format!("value-number-{i}")}))
        .collect();
    let container = |name: &str| {
        json!({
            "name": name, "image": image, "imagePullPolicy": "IfNotPresent",
            "args": ["--listen=:8080", "--verbose"],
            "ports": [{"containerPort": 8080, "name": "http", "protocol": "TCP"},
                      {"containerPort": 9090, "name": "metrics", "protocol": "TCP"}],
            "env": env,
            "resources": {"limits": {"cpu": "500m", "memory": "256Mi"},
                          "requests": {"cpu": "100m", "memory": "128Mi"}},
            "volumeMounts": [{"name": "config", "mountPath": "/etc/config"}],
            "readinessProbe": {"httpGet": {"path": "/healthz", "port": 8080},
                               "periodSeconds": 10},
            "terminationMessagePath": "/dev/termination-log",
            "terminationMessagePolicy": "File"
        })
    };
    json!({
        "apiVersion": "apps/v1", "kind": "Deployment",
        "metadata": {"name": "web", "namespace": "default", "generation": 1,
            "uid": "0b7d8c5e-3f4a-4d2e-9a61-5d7c2e8f9a10", "resourceVersion": "42",
            "creationTimestamp": "2024-05-01T10:00:00Z",
            "labels": {"app": "web", "tier": "frontend"},
            "annotations": {"deployment.kubernetes.io/revision": "1"}},
        "spec": {
            "replicas": 3, "revisionHistoryLimit": 10, "progressDeadlineSeconds": 600,
            "selector": {"matchLabels": {"app": "web"}},
            "strategy": {"type": "RollingUpdate",
                         "rollingUpdate": {"maxSurge": "25%", "maxUnavailable": "25%"}},
            "template": {
                "metadata": {"labels": {"app": "web", "tier": "frontend"}},
                "spec": {
                    "containers": [container("app"), container("sidecar")],
                    "volumes": [{"name": "config", "configMap": {"name": "web-config",
                                                                 "defaultMode": 420}}],
                    "restartPolicy": "Always", "dnsPolicy": "ClusterFirst",
                    "schedulerName": "default-scheduler",
                    "terminationGracePeriodSeconds": 30,
                    "securityContext": {}
                }
            }
        },
        "status": {}
    })
}

fn request<'a>(kind: &'a str, manager: &'a str, now: &'a str) -> Request<'a> {
    let (group, version, api_version, status) = match kind {
        "Deployment" => ("apps", "v1", "apps/v1", true),
        _ => ("", "v1", "v1", false),
    };
    Request {
        schema: definitions().for_gvk(group, version, kind),
        api_version,
        kind,
        manager,
        subresource: None,
        status_subresource: status,
        now,
    }
}

/// Mean nanoseconds of `f` over `n` runs (after a warm-up).
fn time(n: u32, mut f: impl FnMut()) -> f64 {
    for _ in 0..n / 10 {
        f();
    }
    let start = Instant::now();
    for _ in 0..n {
        f();
    }
    start.elapsed().as_nanos() as f64 / f64::from(n)
}

#[test]
#[ignore = "timing helper; run in release with --ignored --nocapture"]
fn update_timings() {
    const N: u32 = 20_000;
    let secret = secret_1k();
    let r = request("Secret", "bench", "2024-05-01T10:00:01Z");
    let clone = time(N, || {
        std::hint::black_box(secret.clone());
    });
    let create = time(N, || {
        let mut obj = secret.clone();
        let _ = update(&r, None, &mut obj);
        std::hint::black_box(obj);
    });
    println!(
        "Secret 1 KiB create: {:.0} ns (clone {:.0} ns)",
        create - clone,
        clone
    );

    // A PUT of a Deployment created by `kubectl-create`, sent back with
    // its managedFields and a new image by `kubectl-replace`.
    let mut created = deployment_4k("nginx:1.25");
    let _ = update(
        &request("Deployment", "kubectl-create", "2024-05-01T10:00:00Z"),
        None,
        &mut created,
    );
    let mut put = deployment_4k("nginx:1.26");
    put["metadata"]["managedFields"] = created["metadata"]["managedFields"].clone();
    println!(
        "Deployment: {} bytes without managedFields, {} with",
        serde_json::to_string(&deployment_4k("nginx:1.26")).map_or(0, |s| s.len()),
        serde_json::to_string(&put).map_or(0, |s| s.len())
    );
    let r = request("Deployment", "kubectl-replace", "2024-05-01T10:00:01Z");
    let clone = time(N, || {
        std::hint::black_box(put.clone());
    });
    let update_ns = time(N, || {
        let mut obj = put.clone();
        let _ = update(&r, Some(&created), &mut obj);
        std::hint::black_box(obj);
    });
    println!(
        "Deployment ~4 KiB PUT: {:.0} ns (clone {:.0} ns)",
        update_ns - clone,
        clone
    );
    // The same PUT by the manager that created it (its own entry grows).
    let r = request("Deployment", "kubectl-create", "2024-05-01T10:00:01Z");
    let own = time(N, || {
        let mut obj = put.clone();
        let _ = update(&r, Some(&created), &mut obj);
        std::hint::black_box(obj);
    });
    println!("Deployment ~4 KiB PUT, same manager: {:.0} ns", own - clone);
    let fresh = deployment_4k("nginx:1.25");
    let clone = time(N, || {
        std::hint::black_box(fresh.clone());
    });
    let create = time(N, || {
        let mut obj = fresh.clone();
        let _ = update(&r, None, &mut obj);
        std::hint::black_box(obj);
    });
    println!("Deployment ~4 KiB create: {:.0} ns", create - clone);
}

#[test]
#[ignore = "timing helper; run in release with --ignored --nocapture"]
fn update_parts_timings() {
    const N: u32 = 20_000;
    for (kind, obj) in [
        ("Secret", secret_1k()),
        ("Deployment", deployment_4k("nginx")),
    ] {
        let r = request(kind, "bench", "2024-05-01T10:00:01Z");
        let zero = typed::zero_object(r.schema);
        let filter = r.filter();
        let walk = time(N, || {
            std::hint::black_box(changes::changed_paths(&zero, &obj, r.schema, &|k| {
                filter.keeps_root(k)
            }));
        });
        let cmp = changes::changed_paths(&zero, &obj, r.schema, &|k| filter.keeps_root(k));
        let set = cmp.changed;
        let clone = time(N, || {
            std::hint::black_box(set.clone());
        });
        let encode = time(N, || {
            std::hint::black_box(set.to_fields_v1());
        });
        let fields = set.to_fields_v1();
        let decode = time(N, || {
            std::hint::black_box(fieldpath::Set::from_fields_v1(&fields).ok());
        });
        let to_set = time(N, || {
            std::hint::black_box(to_field_set(&obj, r.schema, Mode::Lenient).ok());
        });
        println!(
            "{kind}: walk {walk:.0} ns, set clone {clone:.0} ns, encode {encode:.0} ns, \
             decode {decode:.0} ns, to_field_set {to_set:.0} ns"
        );
    }
}
