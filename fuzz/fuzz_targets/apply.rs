//! Fuzz target: server-side apply and managedFields bookkeeping,
//! `apply::apply` and `apply::update`, under the Deployment schema.
//!
//! The input drives a small generator: live objects, applied
//! configurations, updated objects and client-sent managedFields built from
//! Deployment field names (so most inputs get past the schema checks), or,
//! when the input starts with `[`, a JSON array `[live, config, new]`
//! taken literally (for hand-written seeds). On every input: nothing
//! panics, errors render (conflicts with upstream's message), results are
//! objects whose managedFields decode and whose FieldsV1 round-trip, and
//! re-applying a configuration just applied never conflicts for the
//! manager that owns it alone.

#![no_main]

use libfuzzer_sys::arbitrary::{Result as ArbResult, Unstructured};
use libfuzzer_sys::fuzz_target;
use serde_json::{Map, Value, json};

// Compiled from source: the engine needs only the schema module (which
// embeds the vendored definitions), serde_json and time.
#[path = "../../apiserver/src/schema/mod.rs"]
#[allow(dead_code, missing_docs, unused_imports)]
mod schema;

#[path = "../../apiserver/src/apply/mod.rs"]
#[allow(dead_code, missing_docs, unused_imports)]
mod apply;

const KEYS: &[&str] = &[
    "apiVersion",
    "kind",
    "metadata",
    "name",
    "namespace",
    "labels",
    "annotations",
    "finalizers",
    "ownerReferences",
    "uid",
    "managedFields",
    "spec",
    "replicas",
    "selector",
    "matchLabels",
    "matchExpressions",
    "template",
    "containers",
    "initContainers",
    "image",
    "ports",
    "containerPort",
    "protocol",
    "env",
    "value",
    "args",
    "command",
    "resources",
    "limits",
    "requests",
    "cpu",
    "strategy",
    "type",
    "rollingUpdate",
    "maxSurge",
    "paused",
    "status",
    "conditions",
    "observedGeneration",
    "volumes",
    "configMap",
    "volumeMounts",
    "mountPath",
    "app",
    "tolerations",
    "key",
    "hostAliases",
    "ip",
    "hostnames",
    "bogus",
];

const STRINGS: &[&str] = &[
    "app",
    "web",
    "nginx",
    "TCP",
    "UDP",
    "a",
    "b",
    "apps/v1",
    "Deployment",
    "v1",
    "",
    "RollingUpdate",
    "25%",
];

const MANAGERS: &[&str] = &[
    "kubectl",
    "helm",
    "kubectl-client-side-apply",
    "before-first-apply",
    "m",
];

fn key(u: &mut Unstructured<'_>) -> ArbResult<String> {
    if u.ratio(1, 16)? {
        let s: String = u.arbitrary()?;
        return Ok(s.chars().take(8).collect());
    }
    Ok((*u.choose(KEYS)?).to_owned())
}

fn scalar(u: &mut Unstructured<'_>) -> ArbResult<Value> {
    Ok(match u.int_in_range(0..=5)? {
        0 => json!(u.int_in_range(-2..=100)?),
        1 => Value::Bool(u.arbitrary()?),
        2 => Value::Null,
        3 => json!(f64::from(u.int_in_range(0..=9)?) / 2.0),
        _ => json!(*u.choose(STRINGS)?),
    })
}

fn value(u: &mut Unstructured<'_>, depth: u32) -> ArbResult<Value> {
    if depth == 0 || u.is_empty() {
        return scalar(u);
    }
    Ok(match u.int_in_range(0..=3)? {
        0 => scalar(u)?,
        1 => {
            let n = u.int_in_range(0..=3)?;
            let mut items = Vec::new();
            for _ in 0..n {
                items.push(value(u, depth - 1)?);
            }
            Value::Array(items)
        }
        _ => {
            let n = u.int_in_range(0..=4)?;
            let mut m = Map::new();
            for _ in 0..n {
                m.insert(key(u)?, value(u, depth - 1)?);
            }
            Value::Object(m)
        }
    })
}

fn base(u: &mut Unstructured<'_>) -> ArbResult<Value> {
    let names = ["app", "side", "x"];
    let n = u.int_in_range(0..=3)?;
    let mut containers = Vec::new();
    for i in 0..n {
        let mut c = json!({"name": names[i as usize % 3], "image": *u.choose(STRINGS)?});
        if u.arbitrary()?
            && let Some(m) = c.as_object_mut()
        {
            m.insert(
                "ports".into(),
                json!([{"containerPort": u.int_in_range(79..=81)?}]),
            );
        }
        containers.push(c);
    }
    Ok(json!({
        "apiVersion": "apps/v1", "kind": "Deployment",
        "metadata": {"name": "web", "namespace": "default"},
        "spec": {"replicas": u.int_in_range(0..=3)?, "selector": {"matchLabels": {"app": "web"}},
            "template": {"metadata": {"labels": {"app": "web"}},
                "spec": {"containers": containers}}}
    }))
}

/// Sets a generated value at a random path of `v`.
fn mutate(u: &mut Unstructured<'_>, v: &mut Value) -> ArbResult<()> {
    let depth = u.int_in_range(0..=6)?;
    mutate_at(u, v, depth)
}

fn mutate_at(u: &mut Unstructured<'_>, v: &mut Value, depth: u32) -> ArbResult<()> {
    if depth > 0 {
        match v {
            Value::Object(m) if !m.is_empty() => {
                let keys: Vec<String> = m.keys().cloned().collect();
                let k = u.choose(&keys)?.clone();
                if let Some(child) = m.get_mut(&k) {
                    return mutate_at(u, child, depth - 1);
                }
            }
            Value::Array(a) if !a.is_empty() => {
                let i = u.choose_index(a.len())?;
                if let Some(child) = a.get_mut(i) {
                    return mutate_at(u, child, depth - 1);
                }
            }
            _ => {}
        }
    }
    let add: bool = u.arbitrary()?;
    match v {
        Value::Object(m) if add => {
            m.insert(key(u)?, value(u, 3)?);
        }
        Value::Array(a) if add => a.push(value(u, 3)?),
        other => *other = value(u, 3)?,
    }
    Ok(())
}

fn fields_v1(u: &mut Unstructured<'_>, depth: u32) -> ArbResult<Value> {
    let mut m = Map::new();
    if depth == 0 {
        return Ok(Value::Object(m));
    }
    for _ in 0..u.int_in_range(0..=3)? {
        let k = match u.int_in_range(0..=5)? {
            0 => ".".to_owned(),
            1 => format!("k:{{\"name\":{}}}", json!(*u.choose(STRINGS)?)),
            2 => format!("v:{}", json!(*u.choose(STRINGS)?)),
            3 => format!("i:{}", u.int_in_range(0..=3)?),
            _ => format!("f:{}", key(u)?),
        };
        m.insert(k, fields_v1(u, depth - 1)?);
    }
    Ok(Value::Object(m))
}

fn managed_fields(u: &mut Unstructured<'_>) -> ArbResult<Value> {
    let mut out = Vec::new();
    for _ in 0..u.int_in_range(0..=3)? {
        let mut e = json!({
            "manager": *u.choose(MANAGERS)?,
            "operation": *u.choose(&["Apply", "Update", "Nope"])?,
            "apiVersion": "apps/v1",
            "fieldsType": "FieldsV1",
            "fieldsV1": fields_v1(u, 4)?,
        });
        if u.arbitrary()? {
            e["time"] = json!(format!("2024-01-01T00:00:{:02}Z", u.int_in_range(0..=59)?));
        }
        if u.ratio(1, 4)? {
            e["subresource"] = json!("status");
        }
        out.push(e);
    }
    Ok(Value::Array(out))
}

struct Case {
    live: Option<Value>,
    config: Value,
    new: Value,
    manager: &'static str,
    force: bool,
    status: bool,
}

fn generate(u: &mut Unstructured<'_>) -> ArbResult<Case> {
    let live = match u.int_in_range(0..=3)? {
        0 => None,
        1 => Some(value(u, 5)?),
        _ => {
            let mut l = base(u)?;
            for _ in 0..u.int_in_range(0..=2)? {
                mutate(u, &mut l)?;
            }
            if u.arbitrary()?
                && let Some(m) = l.get_mut("metadata").and_then(Value::as_object_mut)
            {
                m.insert("managedFields".into(), managed_fields(u)?);
            }
            Some(l)
        }
    };
    let mut config = if u.ratio(1, 8)? {
        value(u, 5)?
    } else {
        base(u)?
    };
    for _ in 0..u.int_in_range(0..=3)? {
        mutate(u, &mut config)?;
    }
    let mut new = live.clone().unwrap_or_else(|| json!({}));
    for _ in 0..u.int_in_range(0..=3)? {
        mutate(u, &mut new)?;
    }
    if u.ratio(1, 4)? {
        if let Some(m) = new.get_mut("metadata").and_then(Value::as_object_mut) {
            m.insert("managedFields".into(), managed_fields(u)?);
        }
    }
    Ok(Case {
        live,
        config,
        new,
        manager: u.choose(MANAGERS)?,
        force: u.arbitrary()?,
        status: u.arbitrary()?,
    })
}

fn literal(data: &[u8]) -> Option<Case> {
    let v: Value = serde_json::from_slice(data).ok()?;
    let a = v.as_array()?;
    let live = a.first().filter(|v| !v.is_null()).cloned();
    Some(Case {
        config: a.get(1).cloned().unwrap_or(Value::Null),
        new: a.get(2).cloned().unwrap_or(Value::Null),
        live,
        manager: "kubectl",
        force: false,
        status: false,
    })
}

fn check_managed(v: &Value) {
    let mf = v.get("metadata").and_then(|m| m.get("managedFields"));
    let managed = apply::managers::Managed::decode(mf).expect("written managedFields decode");
    for entry in managed.entries.values() {
        let encoded = entry.set.to_fields_v1();
        let back = apply::fieldpath::Set::from_fields_v1(&encoded).expect("FieldsV1 decodes");
        assert_eq!(back, entry.set, "FieldsV1 round trip");
        assert!(!entry.set.is_empty(), "empty entry written");
    }
    if let Some(e) = managed.encode() {
        assert_eq!(Some(&e), mf, "managedFields are in canonical order");
    }
}

fn has_null(v: &Value) -> bool {
    match v {
        Value::Null => true,
        Value::Array(a) => a.iter().any(has_null),
        Value::Object(m) => m.values().any(has_null),
        _ => false,
    }
}

fn run(case: Case) {
    let defs = schema::definitions();
    let req = |manager: &'static str| apply::Request {
        schema: defs.for_gvk("apps", "v1", "Deployment"),
        api_version: "apps/v1",
        kind: "Deployment",
        manager,
        subresource: if case.status { Some("status") } else { None },
        status_subresource: true,
        now: "2024-05-01T10:00:00Z",
    };
    let r = req(case.manager);
    match apply::apply(&r, case.live.as_ref(), &case.config, case.force) {
        Ok(out) => {
            assert!(out.is_object(), "apply result is an object");
            check_managed(&out);
            // Re-applying what was just applied, alone, is no conflict
            // (nulls are dropped from the result, which can leave items
            // without their keys, so only for configs without them).
            if case.live.is_none() && !has_null(&case.config) {
                match apply::apply(&r, Some(&out), &case.config, false) {
                    Ok(again) => check_managed(&again),
                    Err(apply::Error::Conflicts(c)) => panic!("re-apply conflicts: {c:?}"),
                    Err(e) => panic!("re-apply failed: {e}"),
                }
            }
        }
        Err(apply::Error::Conflicts(c)) => {
            assert!(!c.is_empty());
            assert!(
                !case.force || case.manager == "kubectl",
                "forced apply conflicted"
            );
            let msg = apply::conflict_message(&c);
            assert!(msg.starts_with("Apply failed with "));
            for x in &c {
                let _ = x.cause_message();
            }
        }
        Err(e) => {
            let _ = e.to_string();
        }
    }
    let mut new = case.new.clone();
    apply::update(&r, case.live.as_ref(), &mut new).expect("update does not fail");
    if new.is_object() {
        check_managed(&new);
    }
}

fuzz_target!(|data: &[u8]| {
    if data.first() == Some(&b'[') {
        if let Some(case) = literal(data) {
            run(case);
        }
        return;
    }
    let mut u = Unstructured::new(data);
    if let Ok(case) = generate(&mut u) {
        run(case);
    }
});
