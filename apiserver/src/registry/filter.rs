//! List and watch filters: label and field selectors, checked against the
//! kind's selectable fields (see [`crate::selector`]).

use serde_json::Value;

use super::object;
use super::resource::ResourceInfo;
use crate::selector::{SelectorError, field, fields, label};
use crate::status::ApiError;

/// The selectors of one list or watch.
#[derive(Clone, Debug, Default)]
pub struct Filter {
    label: Option<label::Selector>,
    field: Option<field::Selector>,
}

fn bad(e: SelectorError) -> ApiError {
    ApiError::bad_request(e.message())
}

impl Filter {
    /// Parses `labelSelector` and `fieldSelector` for `res`. Bad syntax and
    /// unsupported fields are 400 BadRequest with upstream's message.
    pub fn parse(
        res: &ResourceInfo,
        label_selector: Option<&str>,
        field_selector: Option<&str>,
    ) -> Result<Filter, ApiError> {
        let label = match label_selector.filter(|s| !s.trim().is_empty()) {
            Some(s) => Some(label::Selector::parse(s).map_err(bad)?),
            None => None,
        };
        let field = match field_selector.filter(|s| !s.is_empty()) {
            Some(s) => {
                let sel = field::Selector::parse(s).map_err(bad)?;
                fields::validate(res.group, res.version, res.kind, &sel).map_err(bad)?;
                Some(sel)
            }
            None => None,
        };
        Ok(Filter { label, field })
    }

    /// Whether nothing is filtered.
    pub fn is_empty(&self) -> bool {
        self.label.is_none() && self.field.is_none()
    }

    /// Whether an object with `attrs` passes; `None` when the field
    /// selector names a field `attrs` lacks (the caller decodes the object
    /// and asks [`Filter::matches`]).
    pub fn matches_attrs(&self, attrs: &Attrs) -> Option<bool> {
        if let Some(l) = &self.label
            && !l.matches_with(|k| attrs.label(k))
        {
            return Some(false);
        }
        let Some(f) = &self.field else {
            return Some(true);
        };
        if f.requirements()
            .iter()
            .any(|r| attrs.field(&r.field).is_none())
        {
            return None;
        }
        Some(f.matches(|name| attrs.field(name).flatten().map(str::to_string)))
    }

    /// Whether `obj` (of kind `res`) passes.
    pub fn matches(&self, res: &ResourceInfo, obj: &Value) -> bool {
        if let Some(l) = &self.label
            && !l.matches(&object::labels(obj))
        {
            return false;
        }
        match &self.field {
            Some(f) => fields::matches(res.group, res.kind, f, obj),
            None => true,
        }
    }
}

/// What selectors read of one object, parsed once (the watch cache keeps it
/// beside the object's bytes): its labels and the values of its kind's
/// selectable fields. Kept compact, one per cached object: every label in
/// one allocation (a selector LIST of 10,000 objects reads one cache line
/// or two per object, not a node per label).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Attrs {
    labels: Labels,
    fields: Box<[Field]>,
}

/// A selectable field's name and value (`None`: the object has none).
type Field = (&'static str, Option<Box<str>>);

/// Labels as `len key len value …` (lengths as u32, little-endian) in one
/// boxed slice, in key order.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
struct Labels(Box<[u8]>);

impl Labels {
    fn of(labels: &std::collections::BTreeMap<String, String>) -> Labels {
        let mut out = Vec::new();
        for (k, v) in labels {
            for part in [k, v] {
                // A label longer than 4 GiB cannot be stored: the store
                // refuses values over 1.5 MiB.
                let len = u32::try_from(part.len()).unwrap_or(u32::MAX);
                out.extend_from_slice(&len.to_le_bytes());
                out.extend_from_slice(&part.as_bytes()[..len as usize]);
            }
        }
        Labels(out.into_boxed_slice())
    }

    /// The value of label `key`.
    fn get(&self, key: &str) -> Option<&str> {
        let mut rest = &self.0[..];
        let mut take = || -> Option<&str> {
            let (len, tail) = rest.split_first_chunk::<4>()?;
            let len = u32::from_le_bytes(*len) as usize;
            let part = tail.get(..len)?;
            rest = &tail[len..];
            std::str::from_utf8(part).ok()
        };
        while let Some(k) = take() {
            let v = take()?;
            if k == key {
                return Some(v);
            }
        }
        None
    }
}

impl Attrs {
    /// The attributes of `obj`, an object of `res` (a built-in kind;
    /// custom resources' selectable fields are not precomputed).
    pub fn of(res: &ResourceInfo, obj: &Value) -> Attrs {
        let names = if res.custom.is_some() {
            &["metadata.name", "metadata.namespace"][..]
        } else {
            fields::supported(res.group, res.version, res.kind)
        };
        Attrs {
            labels: Labels::of(&object::labels(obj)),
            fields: names
                .iter()
                .map(|f| {
                    let value = fields::value(res.group, res.kind, obj, f);
                    (*f, value.map(String::into_boxed_str))
                })
                .collect(),
        }
    }

    /// The value of label `key`, if the object has it.
    fn label(&self, key: &str) -> Option<&str> {
        self.labels.get(key)
    }

    /// A selectable field's value: `None` when not precomputed, else as
    /// [`fields::value`] gives it.
    fn field(&self, name: &str) -> Option<Option<&str>> {
        self.fields
            .iter()
            .find(|(f, _)| *f == name)
            .map(|(_, v)| v.as_deref())
    }
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;

    use proptest::prelude::*;

    use super::*;

    proptest! {
        /// Packed labels answer every lookup as the map they came from.
        #[test]
        fn packed_labels_answer_as_their_map(
            labels in proptest::collection::btree_map("[a-z./]{0,6}", "[a-z0-9]{0,6}", 0..6),
            probe in "[a-z./]{0,6}",
        ) {
            let packed = Labels::of(&labels);
            for (k, v) in &labels {
                prop_assert_eq!(packed.get(k), Some(v.as_str()));
            }
            prop_assert_eq!(packed.get(&probe), labels.get(&probe).map(String::as_str));
        }
    }

    #[test]
    fn no_labels_find_nothing() {
        assert_eq!(Labels::of(&BTreeMap::new()).get(""), None);
        assert_eq!(Labels::of(&BTreeMap::new()).get("app"), None);
    }
}
