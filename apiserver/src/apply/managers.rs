//! `metadata.managedFields` entries: decoding, encoding, ordering, capping.
//!
//! Follows `k8s.io/apimachinery/pkg/util/managedfields/internal`
//! `managedfields.go` (decode/encode, manager identifiers, entry order) and
//! `capmanagers.go` (at most ten Update managers, the oldest merged into
//! `ancient-changes`).
//!
//! # Contracts
//! - Managers are identified as upstream identifies them: by manager name,
//!   operation, subresource and, for Update, apiVersion (an applier keeps
//!   one identity across versions). [`ManagerId::key`] is upstream's JSON
//!   identifier, which also breaks ordering ties.
//! - Decoding fails on what upstream rejects (bad operation, empty
//!   apiVersion, missing or unknown fieldsType, unreadable FieldsV1).
//! - Encoding sorts entries by operation (Apply first), time (seconds),
//!   manager, apiVersion, subresource.

use std::collections::BTreeMap;

use serde_json::{Map, Value};

use super::fieldpath::{Set, go_json_string};

/// `operation` of an entry.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Operation {
    /// Server-side apply.
    Apply,
    /// Create, update or a non-apply patch.
    Update,
}

impl Operation {
    /// The wire name.
    pub fn as_str(self) -> &'static str {
        match self {
            Operation::Apply => "Apply",
            Operation::Update => "Update",
        }
    }
}

/// Who owns a set of fields.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub struct ManagerId {
    /// The field manager name (`kubectl`, `helm`, ...).
    pub manager: String,
    /// Apply or Update.
    pub operation: Operation,
    /// The apiVersion, part of the identity for Update only (empty for
    /// Apply).
    pub api_version: String,
    /// The subresource written (empty for the main resource).
    pub subresource: String,
}

impl ManagerId {
    /// An identity as upstream builds it (`buildmanagerinfo.go`): an empty
    /// manager name becomes `unknown`; Apply drops the apiVersion.
    pub fn new(manager: &str, operation: Operation, api_version: &str, subresource: &str) -> Self {
        Self {
            manager: if manager.is_empty() {
                "unknown".to_owned()
            } else {
                manager.to_owned()
            },
            operation,
            api_version: match operation {
                Operation::Apply => String::new(),
                Operation::Update => api_version.to_owned(),
            },
            subresource: subresource.to_owned(),
        }
    }

    /// Upstream's identifier string: the entry without fieldsType,
    /// fieldsV1 and time, as Go's encoding/json writes it.
    pub fn key(&self) -> String {
        let mut out = String::from("{");
        let mut first = true;
        let mut field = |name: &str, value: &str, out: &mut String| {
            if value.is_empty() {
                return;
            }
            if !first {
                out.push(',');
            }
            first = false;
            go_json_string(name, out);
            out.push(':');
            go_json_string(value, out);
        };
        field("manager", &self.manager, &mut out);
        field("operation", self.operation.as_str(), &mut out);
        field("apiVersion", &self.api_version, &mut out);
        field("subresource", &self.subresource, &mut out);
        out.push('}');
        out
    }
}

/// One manager's fields.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Entry {
    /// The fields owned.
    pub set: Set,
    /// The apiVersion the set is expressed in.
    pub api_version: String,
    /// The entry's time, as written (RFC 3339), when it has one.
    pub time: Option<String>,
}

/// Every manager's fields, by identity.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Managed {
    /// The entries.
    pub entries: BTreeMap<ManagerId, Entry>,
}

impl Managed {
    /// Whether no manager owns anything.
    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    /// Decodes `metadata.managedFields` (absent or null: empty).
    pub fn decode(v: Option<&Value>) -> Result<Managed, String> {
        let mut out = Managed::default();
        let items = match v {
            None | Some(Value::Null) => return Ok(out),
            Some(Value::Array(a)) => a,
            Some(_) => return Err("managedFields must be a list".to_owned()),
        };
        for (i, item) in items.iter().enumerate() {
            let Value::Object(m) = item else {
                return Err(format!("managed fields entry {i} must be an object"));
            };
            let s = |k: &str| -> Result<&str, String> {
                match m.get(k) {
                    None | Some(Value::Null) => Ok(""),
                    Some(Value::String(s)) => Ok(s),
                    Some(_) => Err(format!("{k} must be a string")),
                }
            };
            let operation = match s("operation")? {
                "Apply" => Operation::Apply,
                "Update" => Operation::Update,
                _ => return Err("operation must be `Apply` or `Update`".to_owned()),
            };
            let api_version = s("apiVersion")?;
            if api_version.is_empty() {
                return Err("apiVersion must not be empty".to_owned());
            }
            match s("fieldsType")? {
                "FieldsV1" => {}
                "" => return Err(format!("missing fieldsType in managed fields entry {i}")),
                other => {
                    return Err(format!(
                        "invalid fieldsType {other:?} in managed fields entry {i}"
                    ));
                }
            }
            let set = match m.get("fieldsV1") {
                None | Some(Value::Null) => Set::new(),
                Some(f) => {
                    Set::from_fields_v1(f).map_err(|e| format!("error decoding set: {e}"))?
                }
            };
            let time = s("time")?;
            // Identity keeps the manager name as written (no `unknown`).
            let id = ManagerId {
                manager: s("manager")?.to_owned(),
                operation,
                api_version: match operation {
                    Operation::Apply => String::new(),
                    Operation::Update => api_version.to_owned(),
                },
                subresource: s("subresource")?.to_owned(),
            };
            out.entries.insert(
                id,
                Entry {
                    set,
                    api_version: api_version.to_owned(),
                    time: (!time.is_empty()).then(|| time.to_owned()),
                },
            );
        }
        Ok(out)
    }

    /// Encodes the entries in upstream's order; `None` when there are none
    /// (upstream leaves `managedFields` unset).
    pub fn encode(&self) -> Option<Value> {
        if self.entries.is_empty() {
            return None;
        }
        let mut items: Vec<(&ManagerId, &Entry)> = self.entries.iter().collect();
        items.sort_by(|(pi, pe), (qi, qe)| {
            // Apply sorts before Update ("Apply" < "Update").
            pi.operation
                .cmp(&qi.operation)
                .then_with(|| seconds(pe.time.as_deref()).cmp(&seconds(qe.time.as_deref())))
                .then_with(|| pi.manager.cmp(&qi.manager))
                .then_with(|| pe.api_version.cmp(&qe.api_version))
                .then_with(|| pi.subresource.cmp(&qi.subresource))
        });
        let list = items
            .into_iter()
            .map(|(id, e)| {
                let mut m = Map::new();
                if !id.manager.is_empty() {
                    m.insert("manager".into(), Value::String(id.manager.clone()));
                }
                m.insert(
                    "operation".into(),
                    Value::String(id.operation.as_str().into()),
                );
                m.insert("apiVersion".into(), Value::String(e.api_version.clone()));
                if let Some(t) = &e.time {
                    m.insert("time".into(), Value::String(t.clone()));
                }
                m.insert("fieldsType".into(), Value::String("FieldsV1".into()));
                m.insert("fieldsV1".into(), e.set.to_fields_v1());
                if !id.subresource.is_empty() {
                    m.insert("subresource".into(), Value::String(id.subresource.clone()));
                }
                Value::Object(m)
            })
            .collect();
        Some(Value::Array(list))
    }

    /// Caps Update managers at `max`, merging the oldest into
    /// `ancient-changes` per apiVersion (upstream `capUpdateManagers`).
    pub fn cap_updaters(&mut self, max: usize) {
        let count = self
            .entries
            .keys()
            .filter(|id| id.operation == Operation::Update)
            .count();
        if count <= max {
            return;
        }
        let mut updaters: Vec<ManagerId> = self
            .entries
            .keys()
            .filter(|id| id.operation == Operation::Update)
            .cloned()
            .collect();
        if updaters.len() <= max {
            return;
        }
        let time_of = |m: &Managed, id: &ManagerId| {
            m.entries.get(id).map_or(0, |e| seconds(e.time.as_deref()))
        };
        updaters.sort_by(|a, b| {
            time_of(self, a)
                .cmp(&time_of(self, b))
                .then_with(|| a.key().cmp(&b.key()))
        });
        let mut first_by_version: BTreeMap<String, ManagerId> = BTreeMap::new();
        let mut length = updaters.len();
        for id in updaters {
            if length <= max {
                break;
            }
            let Some(entry) = self.entries.get(&id).cloned() else {
                continue;
            };
            let version = entry.api_version.clone();
            let bucket = ManagerId::new("ancient-changes", Operation::Update, &version, "");
            match first_by_version.get(&version) {
                Some(first) => {
                    if !self.entries.contains_key(&bucket)
                        && let Some(moved) = self.entries.remove(first)
                    {
                        self.entries.insert(bucket.clone(), moved);
                    }
                    let prev = self.entries.get(&bucket).map(|e| e.set.clone());
                    let set = match prev {
                        Some(p) => entry.set.union(&p),
                        None => entry.set.clone(),
                    };
                    self.entries.remove(&id);
                    self.entries.insert(
                        bucket,
                        Entry {
                            set,
                            api_version: version,
                            time: entry.time.clone(),
                        },
                    );
                    length -= 1;
                }
                None => {
                    first_by_version.insert(version, id);
                }
            }
        }
    }
}

/// Seconds since the epoch of an RFC 3339 time (0 when absent or
/// unparsable, as upstream treats a nil time).
pub fn seconds(t: Option<&str>) -> i64 {
    t.and_then(parse_rfc3339).unwrap_or(0)
}

fn parse_rfc3339(s: &str) -> Option<i64> {
    let b = s.as_bytes();
    if b.len() < 20 || b[4] != b'-' || b[7] != b'-' || !matches!(b[10], b'T' | b't') {
        return None;
    }
    let num = |r: std::ops::Range<usize>| s.get(r)?.parse::<i64>().ok();
    let (year, month, day) = (num(0..4)?, num(5..7)?, num(8..10)?);
    let (hour, min, sec) = (num(11..13)?, num(14..16)?, num(17..19)?);
    let mut rest = s.get(19..)?;
    if let Some(frac) = rest.strip_prefix('.') {
        let digits = frac.bytes().take_while(u8::is_ascii_digit).count();
        rest = frac.get(digits..)?;
    }
    let offset = match rest {
        "Z" | "z" => 0,
        _ => {
            let sign = match rest.as_bytes().first()? {
                b'+' => 1,
                b'-' => -1,
                _ => return None,
            };
            let oh = rest.get(1..3)?.parse::<i64>().ok()?;
            let om = rest.get(4..6)?.parse::<i64>().ok()?;
            sign * (oh * 3600 + om * 60)
        }
    };
    let month = time::Month::try_from(u8::try_from(month).ok()?).ok()?;
    let date =
        time::Date::from_calendar_date(i32::try_from(year).ok()?, month, u8::try_from(day).ok()?)
            .ok()?;
    let t = time::Time::from_hms(
        u8::try_from(hour).ok()?,
        u8::try_from(min).ok()?,
        u8::try_from(sec.min(59)).ok()?,
    )
    .ok()?;
    Some(
        time::PrimitiveDateTime::new(date, t)
            .assume_utc()
            .unix_timestamp()
            - offset,
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn identifiers_match_upstream() {
        let a = ManagerId::new("kubectl", Operation::Apply, "apps/v1", "");
        assert_eq!(a.key(), r#"{"manager":"kubectl","operation":"Apply"}"#);
        let u = ManagerId::new("kcm", Operation::Update, "apps/v1", "status");
        assert_eq!(
            u.key(),
            r#"{"manager":"kcm","operation":"Update","apiVersion":"apps/v1","subresource":"status"}"#
        );
        assert_eq!(
            ManagerId::new("", Operation::Update, "v1", "").manager,
            "unknown"
        );
    }

    #[test]
    fn decode_rejects_what_upstream_rejects() {
        let bad = |e: Value| Managed::decode(Some(&json!([e]))).unwrap_err();
        assert_eq!(
            bad(
                json!({"manager": "a", "operation": "X", "apiVersion": "v1", "fieldsType": "FieldsV1"})
            ),
            "operation must be `Apply` or `Update`"
        );
        assert_eq!(
            bad(json!({"manager": "a", "operation": "Update", "fieldsType": "FieldsV1"})),
            "apiVersion must not be empty"
        );
        assert_eq!(
            bad(json!({"manager": "a", "operation": "Update", "apiVersion": "v1"})),
            "missing fieldsType in managed fields entry 0"
        );
        assert_eq!(
            bad(
                json!({"manager": "a", "operation": "Update", "apiVersion": "v1", "fieldsType": "FieldsV2"})
            ),
            "invalid fieldsType \"FieldsV2\" in managed fields entry 0"
        );
    }

    #[test]
    fn encode_sorts_apply_first_then_time() {
        let entries = json!([
            {"manager": "b", "operation": "Update", "apiVersion": "v1", "time": "2024-01-01T00:00:02Z",
             "fieldsType": "FieldsV1", "fieldsV1": {"f:data": {"f:x": {}}}},
            {"manager": "a", "operation": "Update", "apiVersion": "v1", "time": "2024-01-01T00:00:03Z",
             "fieldsType": "FieldsV1", "fieldsV1": {"f:data": {"f:y": {}}}},
            {"manager": "z", "operation": "Apply", "apiVersion": "v1", "time": "2024-01-01T00:00:09Z",
             "fieldsType": "FieldsV1", "fieldsV1": {"f:data": {"f:z": {}}}, "subresource": "status"}
        ]);
        let m = Managed::decode(Some(&entries)).unwrap();
        let out = m.encode().unwrap();
        let names: Vec<&str> = out
            .as_array()
            .unwrap()
            .iter()
            .map(|e| e["manager"].as_str().unwrap())
            .collect();
        assert_eq!(names, ["z", "b", "a"]);
        assert_eq!(out[0]["subresource"], "status");
        assert_eq!(Managed::decode(Some(&out)).unwrap(), m);
    }

    #[test]
    fn times_parse() {
        assert_eq!(seconds(Some("1970-01-01T00:01:00Z")), 60);
        assert_eq!(seconds(Some("1970-01-01T01:00:00+01:00")), 0);
        assert_eq!(seconds(Some("1970-01-01T00:00:01.5Z")), 1);
        assert_eq!(seconds(Some("garbage")), 0);
    }
}
