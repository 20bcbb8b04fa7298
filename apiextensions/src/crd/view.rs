//! A v1 CRD seen as upstream's internal `apiextensions` type, which is what
//! upstream validates.
//!
//! Converting `apiextensions.k8s.io/v1` to the internal type moves a
//! per-version `schema`, `subresources`, `additionalPrinterColumns` or
//! `selectableFields` to the top level when every version has the same
//! one, and sets `spec.version` to the first version's name. So a real
//! v1.33 server reports a schema problem of a CRD whose versions share one
//! schema (every single-version CRD) under `spec.validation.openAPIV3Schema`,
//! and one of a CRD whose versions differ under
//! `spec.versions[i].schema.openAPIV3Schema`. The conversion's
//! `spec.conversion.webhook.clientConfig` is `spec.conversion.webhookClientConfig`.

use serde_json::Value;

use super::json::{arr, bool_of, obj, opt_str, str_of};

/// One entry of the internal `spec.versions`.
pub(crate) struct Version<'a> {
    /// The whole v1 version object.
    pub raw: &'a Value,
    /// `name`.
    pub name: &'a str,
    /// `storage`.
    pub storage: bool,
    /// `deprecated`.
    pub deprecated: bool,
    /// `deprecationWarning` (a `*string`).
    pub deprecation_warning: Option<&'a str>,
    /// The per-version `schema` (a `*CustomResourceValidation`), unless
    /// moved to the top level.
    pub schema: Option<&'a Value>,
    /// The per-version `subresources`, unless moved to the top level.
    pub subresources: Option<&'a Value>,
    /// The per-version `additionalPrinterColumns`, unless moved.
    pub columns: Option<&'a Vec<Value>>,
    /// The per-version `selectableFields`, unless moved.
    pub selectable_fields: Option<&'a Vec<Value>>,
}

/// The internal `CustomResourceDefinitionSpec` of a v1 CRD.
pub(crate) struct Spec<'a> {
    /// The whole v1 spec (or `null`).
    pub raw: &'a Value,
    /// `group`.
    pub group: &'a str,
    /// `names` (or `null`).
    pub names: &'a Value,
    /// `scope`.
    pub scope: &'a str,
    /// The internal `versions`.
    pub versions: Vec<Version<'a>>,
    /// `spec.validation`: the schema all versions share.
    pub validation: Option<&'a Value>,
    /// `spec.subresources`: the subresources all versions share.
    pub subresources: Option<&'a Value>,
    /// `spec.additionalPrinterColumns`: the columns all versions share.
    pub columns: Option<&'a Vec<Value>>,
    /// `spec.selectableFields`: the selectable fields all versions share.
    pub selectable_fields: Option<&'a Vec<Value>>,
    /// `spec.preserveUnknownFields` (never nil from v1).
    pub preserve_unknown_fields: bool,
    /// `spec.conversion` (or `None`).
    pub conversion: Option<&'a Value>,
}

impl<'a> Spec<'a> {
    /// The internal view of `crd.spec`.
    pub(crate) fn of(crd: &'a Value) -> Spec<'a> {
        static NULL: Value = Value::Null;
        let raw = crd.get("spec").unwrap_or(&NULL);
        let list: Vec<&Value> = arr(raw, "versions")
            .map(|v| v.iter().collect())
            .unwrap_or_default();
        let field = |v: &'a Value, k: &str| v.get(k).filter(|x| !x.is_null());
        // Semantic.DeepEqual of every version's field with the first one's.
        let identical = |k: &str| {
            list.first()
                .is_some_and(|first| list.iter().all(|v| field(v, k) == field(first, k)))
        };
        let shared = |k: &str| {
            if identical(k) {
                list.first().and_then(|first| field(first, k))
            } else {
                None
            }
        };
        let schema_shared = identical("schema");
        let subresources_shared = identical("subresources");
        let columns_shared = identical("additionalPrinterColumns");
        let selectable_shared = identical("selectableFields");
        let versions = list
            .iter()
            .map(|v| Version {
                raw: v,
                name: str_of(v, "name"),
                storage: bool_of(v, "storage"),
                deprecated: bool_of(v, "deprecated"),
                deprecation_warning: opt_str(v, "deprecationWarning"),
                schema: if schema_shared {
                    None
                } else {
                    obj(v, "schema")
                },
                subresources: if subresources_shared {
                    None
                } else {
                    obj(v, "subresources")
                },
                columns: if columns_shared {
                    None
                } else {
                    arr(v, "additionalPrinterColumns")
                },
                selectable_fields: if selectable_shared {
                    None
                } else {
                    arr(v, "selectableFields")
                },
            })
            .collect();
        Spec {
            raw,
            group: str_of(raw, "group"),
            names: raw.get("names").unwrap_or(&NULL),
            scope: str_of(raw, "scope"),
            versions,
            validation: shared("schema").filter(|s| s.is_object()),
            subresources: shared("subresources").filter(|s| s.is_object()),
            columns: shared("additionalPrinterColumns").and_then(Value::as_array),
            selectable_fields: shared("selectableFields").and_then(Value::as_array),
            preserve_unknown_fields: bool_of(raw, "preserveUnknownFields"),
            conversion: obj(raw, "conversion"),
        }
    }

    /// The internal `spec.version`: the first version's name, `""` without versions.
    pub(crate) fn version(&self) -> &'a str {
        self.versions.first().map(|v| v.name).unwrap_or_default()
    }

    /// Every `openAPIV3Schema` of the spec (top-level, then per version).
    pub(crate) fn schemas(&self) -> impl Iterator<Item = &'a Value> + '_ {
        self.validation
            .into_iter()
            .chain(self.versions.iter().filter_map(|v| v.schema))
            .filter_map(|s| obj(s, "openAPIV3Schema"))
    }

    /// The subresources that apply to version `i` (upstream
    /// `getSubresourcesForVersion`).
    pub(crate) fn subresources_for(&self, i: usize) -> Option<&'a Value> {
        if self.versions.iter().any(|v| v.subresources.is_some()) {
            self.versions.get(i).and_then(|v| v.subresources)
        } else {
            self.subresources
        }
    }

    /// `true` when the top-level or some version's subresources enable `status`.
    pub(crate) fn any_status_enabled(&self) -> bool {
        status_enabled(self.subresources)
            || self.versions.iter().any(|v| status_enabled(v.subresources))
    }
}

/// `true` when `subresources.status` is set (upstream `hasStatusEnabled`).
pub(crate) fn status_enabled(subresources: Option<&Value>) -> bool {
    subresources.is_some_and(|s| s.get("status").is_some_and(|x| !x.is_null()))
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn identical_per_version_fields_move_to_the_top() {
        let s = json!({"openAPIV3Schema": {"type": "object"}});
        let crd = json!({"spec": {"versions": [
            {"name": "v1", "schema": s, "subresources": {"status": {}}},
            {"name": "v2", "schema": s},
        ]}});
        let spec = Spec::of(&crd);
        assert_eq!(spec.validation, Some(&s));
        assert!(spec.versions.iter().all(|v| v.schema.is_none()));
        assert!(spec.subresources.is_none());
        assert!(spec.versions[0].subresources.is_some());
        assert!(spec.any_status_enabled());
        assert!(status_enabled(spec.subresources_for(0)));
        assert!(!status_enabled(spec.subresources_for(1)));
        assert_eq!(spec.version(), "v1");
        assert_eq!(spec.schemas().count(), 1);
    }

    #[test]
    fn no_versions_no_top_level() {
        let empty = json!({});
        let spec = Spec::of(&empty);
        assert!(spec.validation.is_none() && spec.versions.is_empty());
        assert_eq!(spec.version(), "");
    }
}
