//! `metav1.TableColumnDefinition`.

use std::borrow::Cow;

use serde::Serialize;

use super::descriptions as doc;

/// One column of a Table, serialized exactly as `metav1.TableColumnDefinition`
/// (`name`, `type`, `format`, `description`, `priority` — all always
/// present).
///
/// - `type_` is an OpenAPI type: `string`, `integer`, `number`, `boolean`
///   or `date`. It describes how a client may sort/format the column; cells
///   need not match it (upstream puts integers in several `string` columns).
/// - `format` is `name` for the column holding the object's name, else "".
/// - `priority` 0 is shown by `kubectl get`; 1 only by `-o wide`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Column {
    /// Header text; kubectl upper-cases it.
    pub name: Cow<'static, str>,
    /// OpenAPI type of the cells.
    #[serde(rename = "type")]
    pub type_: Cow<'static, str>,
    /// `name` for the object-name column, otherwise empty.
    pub format: Cow<'static, str>,
    /// Human-readable description (upstream: the field's swagger doc).
    pub description: Cow<'static, str>,
    /// 0 = default view, 1 = wide view only.
    pub priority: i32,
}

impl Column {
    /// A priority-0 column without a format.
    pub(crate) const fn new(
        name: &'static str,
        type_: &'static str,
        description: &'static str,
    ) -> Self {
        Self {
            name: Cow::Borrowed(name),
            type_: Cow::Borrowed(type_),
            format: Cow::Borrowed(""),
            description: Cow::Borrowed(description),
            priority: 0,
        }
    }

    /// A `string` column.
    pub(crate) const fn string(name: &'static str, description: &'static str) -> Self {
        Self::new(name, "string", description)
    }

    /// An `integer` column.
    pub(crate) const fn integer(name: &'static str, description: &'static str) -> Self {
        Self::new(name, "integer", description)
    }

    /// A `boolean` column.
    pub(crate) const fn boolean(name: &'static str, description: &'static str) -> Self {
        Self::new(name, "boolean", description)
    }

    /// A `string` column with format `name` (upstream marks a few columns
    /// besides the object's name so, e.g. VolumeAttachment's `Attacher`).
    pub(crate) const fn named_string(name: &'static str, description: &'static str) -> Self {
        Self {
            name: Cow::Borrowed(name),
            type_: Cow::Borrowed("string"),
            format: Cow::Borrowed("name"),
            description: Cow::Borrowed(description),
            priority: 0,
        }
    }

    /// The same column, shown only with `-o wide`.
    pub(crate) const fn wide(mut self) -> Self {
        self.priority = 1;
        self
    }

    /// Upstream's first column for nearly every kind: `Name`, format `name`.
    pub(crate) const fn name() -> Self {
        Self {
            name: Cow::Borrowed("Name"),
            type_: Cow::Borrowed("string"),
            format: Cow::Borrowed("name"),
            description: Cow::Borrowed(doc::META_NAME),
            priority: 0,
        }
    }

    /// Upstream's `Age` column (a `string`, described as creationTimestamp).
    pub(crate) const fn age() -> Self {
        Self::string("Age", doc::META_CREATION_TIMESTAMP)
    }

    /// The `Containers` column of workload kinds (wide).
    pub(crate) const fn containers() -> Self {
        Self::string("Containers", "Names of each container in the template.").wide()
    }

    /// The `Images` column of workload kinds (wide).
    pub(crate) const fn images() -> Self {
        Self::string(
            "Images",
            "Images referenced by each container in the template.",
        )
        .wide()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn serializes_like_table_column_definition() {
        let json = serde_json::to_value(Column::name()).unwrap();
        assert_eq!(
            json,
            serde_json::json!({
                "name": "Name",
                "type": "string",
                "format": "name",
                "description": doc::META_NAME,
                "priority": 0,
            })
        );
        let wide = serde_json::to_value(Column::integer("Count", "c").wide()).unwrap();
        assert_eq!(
            wide,
            serde_json::json!({"name": "Count", "type": "integer", "format": "", "description": "c", "priority": 1})
        );
    }
}
