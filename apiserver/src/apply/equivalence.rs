//! Property tests: [`update`] and [`update_chain`] give exactly what the
//! step-by-step reference ([`super::reference`]) gives, on varied objects
//! of several kinds (odd values included), with and without managedFields
//! of other managers, sent by the client or stored, on the main resource
//! and on subresources.

use proptest::prelude::*;
use serde_json::{Map, Value, json};

use super::managers::Managed;
use super::typed::{Mode, to_field_set, zero_object};
use super::*;
use crate::schema::definitions;

const T0: &str = "2024-05-01T10:00:00Z";
const T1: &str = "2024-05-01T10:00:01Z";
const T2: &str = "2024-05-01T10:00:02Z";

/// A shape to generate JSON from.
#[derive(Clone)]
enum T {
    /// One of these strings.
    S(&'static [&'static str]),
    /// One of these JSON texts.
    J(&'static [&'static str]),
    /// An object with some of these fields.
    Obj(Vec<(&'static str, T)>),
    /// A map with some of these keys.
    Map(&'static [&'static str], Box<T>),
    /// A list of up to three items.
    List(Box<T>),
}

fn obj(fields: Vec<(&'static str, T)>) -> T {
    T::Obj(fields)
}

fn map(keys: &'static [&'static str], t: T) -> T {
    T::Map(keys, Box::new(t))
}

fn list(t: T) -> T {
    T::List(Box::new(t))
}

/// Mostly `s`, sometimes a value of the wrong shape.
fn odd(s: BoxedStrategy<Value>) -> BoxedStrategy<Value> {
    prop_oneof![
        24 => s,
        1 => Just(Value::Null),
        1 => Just(json!({})),
        1 => Just(json!("x")),
        1 => Just(json!([])),
    ]
    .boxed()
}

fn strategy(t: &T) -> BoxedStrategy<Value> {
    match t {
        T::S(pool) => prop::sample::select(*pool).prop_map(|s| json!(s)).boxed(),
        T::J(pool) => prop::sample::select(*pool)
            .prop_map(|s| serde_json::from_str(s).unwrap_or(Value::Null))
            .boxed(),
        T::Obj(fields) => {
            let parts: Vec<BoxedStrategy<Option<(&'static str, Value)>>> = fields
                .iter()
                .map(|(name, t)| {
                    let name = *name;
                    prop::option::weighted(0.6, odd(strategy(t)))
                        .prop_map(move |v| v.map(|v| (name, v)))
                        .boxed()
                })
                .collect();
            parts
                .prop_map(|ps| {
                    Value::Object(
                        ps.into_iter()
                            .flatten()
                            .map(|(k, v)| (k.to_owned(), v))
                            .collect(),
                    )
                })
                .boxed()
        }
        T::Map(keys, t) => {
            prop::collection::btree_map(prop::sample::select(*keys), odd(strategy(t)), 0..4)
                .prop_map(|m| {
                    Value::Object(m.into_iter().map(|(k, v)| (k.to_owned(), v)).collect())
                })
                .boxed()
        }
        T::List(t) => prop::collection::vec(odd(strategy(t)), 0..4)
            .prop_map(Value::Array)
            .boxed(),
    }
}

fn metadata() -> T {
    obj(vec![
        ("name", T::S(&["web", "db"])),
        ("namespace", T::S(&["default", "x"])),
        ("labels", map(&["app", "tier", "env"], T::S(&["a", "b"]))),
        ("annotations", map(&["a/b", "c"], T::S(&["1", "2"]))),
        ("uid", T::S(&["u-1"])),
        ("resourceVersion", T::S(&["1", "2"])),
        ("generation", T::J(&["1", "2"])),
        ("creationTimestamp", T::S(&[T0])),
        ("finalizers", list(T::S(&["f1", "f2"]))),
        // Client-sent (and, in the extra entries, owned) managedFields.
        ("managedFields", list(obj(vec![("manager", T::S(&["z"]))]))),
        (
            "ownerReferences",
            list(obj(vec![
                ("apiVersion", T::S(&["v1"])),
                ("kind", T::S(&["X"])),
                ("name", T::S(&["o"])),
                ("uid", T::S(&["u1", "u2"])),
                ("controller", T::J(&["true", "false"])),
            ])),
        ),
    ])
}

fn container() -> T {
    let quantities = || map(&["cpu", "memory"], T::J(&["\"1\"", "\"2Gi\"", "1"]));
    obj(vec![
        ("name", T::S(&["a", "b", "c"])),
        ("image", T::S(&["i1", "i2"])),
        ("args", list(T::S(&["-v", "-x"]))),
        (
            "ports",
            list(obj(vec![
                ("containerPort", T::J(&["80", "443", "80.0"])),
                ("protocol", T::S(&["TCP", "UDP"])),
                ("name", T::S(&["http"])),
            ])),
        ),
        (
            "env",
            list(obj(vec![
                ("name", T::S(&["A", "B"])),
                ("value", T::S(&["1", "2"])),
                (
                    "valueFrom",
                    obj(vec![("fieldRef", obj(vec![("fieldPath", T::S(&["x"]))]))]),
                ),
            ])),
        ),
        (
            "resources",
            obj(vec![("limits", quantities()), ("requests", quantities())]),
        ),
    ])
}

fn conditions() -> T {
    list(obj(vec![
        ("type", T::S(&["Available", "Progressing"])),
        ("status", T::S(&["True", "False"])),
    ]))
}

fn deployment() -> T {
    obj(vec![
        ("apiVersion", T::S(&["apps/v1"])),
        ("kind", T::S(&["Deployment"])),
        ("metadata", metadata()),
        (
            "spec",
            obj(vec![
                ("replicas", T::J(&["1", "3", "3.0"])),
                ("paused", T::J(&["true", "false"])),
                (
                    "selector",
                    obj(vec![(
                        "matchLabels",
                        map(&["app", "tier"], T::S(&["a", "b"])),
                    )]),
                ),
                (
                    "strategy",
                    obj(vec![
                        ("type", T::S(&["RollingUpdate", "Recreate"])),
                        (
                            "rollingUpdate",
                            obj(vec![("maxSurge", T::J(&["1", "\"25%\""]))]),
                        ),
                    ]),
                ),
                (
                    "template",
                    obj(vec![
                        (
                            "metadata",
                            obj(vec![
                                ("labels", map(&["app", "tier"], T::S(&["a", "b"]))),
                                ("annotations", map(&["k"], T::S(&["v"]))),
                            ]),
                        ),
                        (
                            "spec",
                            obj(vec![
                                ("containers", list(container())),
                                ("initContainers", list(container())),
                                (
                                    "volumes",
                                    list(obj(vec![
                                        ("name", T::S(&["v1", "v2"])),
                                        ("configMap", obj(vec![("name", T::S(&["c"]))])),
                                        ("emptyDir", obj(vec![])),
                                    ])),
                                ),
                                ("restartPolicy", T::S(&["Always"])),
                                ("securityContext", obj(vec![("runAsUser", T::J(&["1"]))])),
                                ("nodeSelector", map(&["zone"], T::S(&["a"]))),
                            ]),
                        ),
                    ]),
                ),
                ("bogus", T::J(&["1"])),
            ]),
        ),
        (
            "status",
            obj(vec![
                ("replicas", T::J(&["1", "2"])),
                ("observedGeneration", T::J(&["1"])),
                ("conditions", conditions()),
            ]),
        ),
    ])
}

fn service() -> T {
    obj(vec![
        ("apiVersion", T::S(&["v1"])),
        ("kind", T::S(&["Service"])),
        ("metadata", metadata()),
        (
            "spec",
            obj(vec![
                (
                    "ports",
                    list(obj(vec![
                        ("port", T::J(&["80", "443"])),
                        ("protocol", T::S(&["TCP", "UDP"])),
                        ("targetPort", T::J(&["8080", "\"http\""])),
                        ("name", T::S(&["http", "https"])),
                    ])),
                ),
                ("selector", map(&["app", "tier"], T::S(&["a", "b"]))),
                ("type", T::S(&["ClusterIP", "NodePort"])),
                ("clusterIP", T::S(&["10.0.0.1"])),
                ("clusterIPs", list(T::S(&["10.0.0.1", "fd00::1"]))),
            ]),
        ),
        (
            "status",
            obj(vec![
                (
                    "loadBalancer",
                    obj(vec![(
                        "ingress",
                        list(obj(vec![("ip", T::S(&["1.2.3.4"]))])),
                    )]),
                ),
                ("conditions", conditions()),
            ]),
        ),
    ])
}

fn secret() -> T {
    obj(vec![
        ("apiVersion", T::S(&["v1"])),
        ("kind", T::S(&["Secret"])),
        ("metadata", metadata()),
        ("type", T::S(&["Opaque"])),
        ("data", map(&["a", "b", "c"], T::S(&["QUJD", "eHl6"]))),
        ("stringData", map(&["a", "d"], T::S(&["x"]))),
        ("immutable", T::J(&["true", "false"])),
    ])
}

fn config_map() -> T {
    obj(vec![
        ("apiVersion", T::S(&["v1"])),
        ("kind", T::S(&["ConfigMap"])),
        ("metadata", metadata()),
        ("data", map(&["a", "b", "c"], T::S(&["1", "2"]))),
        ("binaryData", map(&["z"], T::S(&["QUJD"]))),
        ("immutable", T::J(&["true"])),
    ])
}

const KINDS: [&str; 4] = ["Deployment", "Service", "Secret", "ConfigMap"];

fn shape(kind: &str) -> T {
    match kind {
        "Deployment" => deployment(),
        "Service" => service(),
        "Secret" => secret(),
        _ => config_map(),
    }
}

fn request<'a>(
    kind: &'a str,
    manager: &'a str,
    subresource: Option<&'a str>,
    now: &'a str,
) -> Request<'a> {
    let (group, version, api_version, status) = match kind {
        "Deployment" => ("apps", "v1", "apps/v1", true),
        "Service" => ("", "v1", "v1", true),
        _ => ("", "v1", "v1", false),
    };
    Request {
        schema: definitions().for_gvk(group, version, kind),
        api_version,
        kind,
        manager,
        subresource,
        status_subresource: status,
        now,
    }
}

const MANAGERS: &[&str] = &["m1", "m2", "", "kubectl", "\u{0}current-operation"];
const SUBRESOURCES: &[Option<&str>] = &[None, None, None, Some("status"), Some("scale")];

/// A managedFields entry owning the fields of `fields` (an object).
fn entry(
    manager: &str,
    apply: bool,
    api_version: &str,
    sub: Option<&str>,
    time: Option<&str>,
    fields: &Value,
    kind: &str,
) -> Value {
    let ty = request(kind, "", None, T0).schema;
    let set = to_field_set(fields, ty, Mode::Lenient).unwrap_or_default();
    let mut m = Map::new();
    m.insert("manager".into(), json!(manager));
    m.insert(
        "operation".into(),
        json!(if apply { "Apply" } else { "Update" }),
    );
    m.insert("apiVersion".into(), json!(api_version));
    m.insert("fieldsType".into(), json!("FieldsV1"));
    m.insert("fieldsV1".into(), set.to_fields_v1());
    if let Some(t) = time {
        m.insert("time".into(), json!(t));
    }
    if let Some(s) = sub {
        m.insert("subresource".into(), json!(s));
    }
    Value::Object(m)
}

/// Extra entries: `(manager, apply, subresource, has time, fields)`.
type Extra = (usize, bool, usize, bool, Value);

fn extras(kind: &'static str) -> impl Strategy<Value = Vec<Extra>> {
    prop::collection::vec(
        (
            0..MANAGERS.len(),
            any::<bool>(),
            0..SUBRESOURCES.len(),
            any::<bool>(),
            strategy(&shape(kind)),
        ),
        0..3,
    )
}

fn extra_entries(kind: &str, extras: &[Extra]) -> Vec<Value> {
    let api_version = request(kind, "", None, T0).api_version;
    extras
        .iter()
        .map(|(m, apply, sub, timed, fields)| {
            entry(
                MANAGERS[*m],
                *apply,
                api_version,
                SUBRESOURCES[*sub],
                timed.then_some(T0),
                fields,
                kind,
            )
        })
        .collect()
}

/// What the client sends as managedFields.
#[derive(Debug, Clone)]
enum Client {
    Nothing,
    /// The stored object's.
    Stored,
    /// `[]`.
    Reset,
    /// `[{}]`.
    ResetEntry,
    /// Not a list.
    Invalid,
    /// These entries.
    Entries(Vec<Extra>),
}

fn client(kind: &'static str) -> impl Strategy<Value = Client> {
    prop_oneof![
        4 => Just(Client::Nothing),
        4 => Just(Client::Stored),
        1 => Just(Client::Reset),
        1 => Just(Client::ResetEntry),
        1 => Just(Client::Invalid),
        2 => extras(kind).prop_map(Client::Entries),
    ]
}

/// One generated write.
#[derive(Debug, Clone)]
struct Case {
    kind: &'static str,
    /// The stored object's history: each `(manager, subresource, object)`
    /// written in turn by the reference (none: no stored object).
    history: Vec<(usize, usize, Value)>,
    /// Entries added to the stored object's managedFields.
    stored_extras: Vec<Extra>,
    /// The written object, and which of its root keys (and metadata keys)
    /// are taken from the stored object instead.
    new: Value,
    keep_root: Vec<bool>,
    manager: usize,
    subresource: usize,
    client: Client,
}

fn case() -> impl Strategy<Value = Case> {
    prop::sample::select(&KINDS[..]).prop_flat_map(|kind| {
        let object = strategy(&shape(kind));
        (
            prop::collection::vec(
                (0..MANAGERS.len(), 0..SUBRESOURCES.len(), object.clone()),
                0..3,
            ),
            extras(kind),
            object,
            prop::collection::vec(any::<bool>(), 16),
            0..MANAGERS.len(),
            0..SUBRESOURCES.len(),
            client(kind),
        )
            .prop_map(
                move |(history, stored_extras, new, keep_root, manager, subresource, client)| {
                    Case {
                        kind,
                        history,
                        stored_extras,
                        new,
                        keep_root,
                        manager,
                        subresource,
                        client,
                    }
                },
            )
    })
}

/// Sets `metadata.managedFields` (making `metadata` an object if needed).
fn put_managed(v: &mut Value, fields: Value) {
    if let Some(o) = v.as_object_mut() {
        let m = o.entry("metadata").or_insert_with(|| json!({}));
        if !m.is_object() {
            *m = json!({});
        }
        if let Some(m) = m.as_object_mut() {
            m.insert("managedFields".into(), fields);
        }
    }
}

/// The stored object and the written one of a case.
fn objects(c: &Case) -> (Option<Value>, Value) {
    let times = [T0, T1, T1];
    let mut stored: Option<Value> = None;
    for (i, (m, sub, obj)) in c.history.iter().enumerate() {
        let mut next = obj.clone();
        let r = request(c.kind, MANAGERS[*m], SUBRESOURCES[*sub], times[i]);
        reference::update(&r, stored.as_ref(), &mut next);
        stored = Some(next);
    }
    if let Some(s) = stored.as_mut()
        && !c.stored_extras.is_empty()
    {
        let mut list = managed_fields(s)
            .and_then(Value::as_array)
            .cloned()
            .unwrap_or_default();
        list.extend(extra_entries(c.kind, &c.stored_extras));
        put_managed(s, Value::Array(list));
    }
    // Mix the written object with the stored one, key by key, so that
    // parts are unchanged.
    let mut new = c.new.clone();
    if let (Some(s), Some(n)) = (
        stored.as_ref().and_then(Value::as_object),
        new.as_object_mut(),
    ) {
        let mut keys: Vec<String> = s.keys().chain(n.keys()).cloned().collect();
        keys.sort();
        keys.dedup();
        for (i, k) in keys.iter().enumerate() {
            if c.keep_root.get(i).copied().unwrap_or(false) {
                match s.get(k) {
                    Some(v) => n.insert(k.clone(), v.clone()),
                    None => n.remove(k),
                };
            }
        }
        // All of it, sometimes: a no-op write.
        if c.keep_root.iter().take(4).all(|b| *b) {
            new = Value::Object(s.clone());
        }
    }
    if let Some(m) = new.get_mut("metadata").and_then(Value::as_object_mut) {
        m.remove("managedFields");
    }
    match &c.client {
        Client::Nothing => {}
        Client::Stored => {
            if let Some(f) = stored.as_ref().and_then(managed_fields) {
                put_managed(&mut new, f.clone());
            }
        }
        Client::Reset => put_managed(&mut new, json!([])),
        Client::ResetEntry => put_managed(&mut new, json!([{}])),
        Client::Invalid => put_managed(&mut new, json!("x")),
        Client::Entries(e) => put_managed(&mut new, Value::Array(extra_entries(c.kind, e))),
    }
    (stored, new)
}

fn text(v: &Value) -> String {
    serde_json::to_string(v).unwrap_or_default()
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(2000))]

    #[test]
    fn update_matches_the_reference(c in case()) {
        let (stored, new) = objects(&c);
        let r = request(c.kind, MANAGERS[c.manager], SUBRESOURCES[c.subresource], T2);
        let mut expected = new.clone();
        reference::update(&r, stored.as_ref(), &mut expected);
        let mut got = new;
        prop_assert!(update(&r, stored.as_ref(), &mut got).is_ok());
        prop_assert_eq!(text(&got), text(&expected));
        prop_assert_eq!(got, expected);
    }

    /// The chain alone, on any managed entries, from a zero object too
    /// (as the first apply to an untracked object runs it).
    #[test]
    fn update_chain_matches_the_reference(
        c in case(),
        from_zero in any::<bool>(),
        entries in prop::sample::select(&KINDS[..]).prop_flat_map(extras),
    ) {
        let (stored, new) = objects(&c);
        let r = request(c.kind, MANAGERS[c.manager], SUBRESOURCES[c.subresource], T2);
        let live = match (&stored, from_zero) {
            (Some(s), false) => s.clone(),
            _ => zero_object(r.schema),
        };
        let mut list = managed_fields(&live)
            .and_then(Value::as_array)
            .cloned()
            .unwrap_or_default();
        list.extend(extra_entries(c.kind, &entries));
        let managed = Managed::decode(Some(&Value::Array(list))).unwrap_or_default();
        let mut expected = managed.clone();
        reference::update_chain(&r, &live, &new, &mut expected, MANAGERS[c.manager]);
        let mut got = managed;
        update_chain(&r, &live, &new, &mut got, MANAGERS[c.manager]);
        prop_assert_eq!(got.encode(), expected.encode());
        prop_assert_eq!(got, expected);
    }
}
