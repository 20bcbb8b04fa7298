//! Table output (`Accept: application/json;as=Table;v=v1;g=meta.k8s.io`):
//! the `meta.k8s.io/v1` `Table` kube-apiserver returns to `kubectl get`.
//!
//! This module is pure: object JSON (external v1 form, as stored) in,
//! Table JSON out. The HTTP layer negotiates the media type, parses
//! `includeObject`, and frames watch events.
//!
//! # Contract
//!
//! - **Columns and cells match kube-apiserver 1.33** for the kinds in
//!   `printers` (`pkg/printers/internalversion/printers.go`):
//!   same column names, types, formats, priorities and descriptions, same
//!   cell strings and JSON types (counts are JSON integers). Rows are always
//!   the wide form — kube-apiserver converts with `Wide: true` and kubectl
//!   drops priority-1 columns itself. Every other built-in kind gets the
//!   default table (`registry/rest/table.go`): `Name`, `Created At`.
//!   Custom resources are printed from their CRD version's
//!   `additionalPrinterColumns` by [`CustomColumns`] (see `custom`).
//! - **Ages** are computed against the caller's `now`
//!   (`duration.HumanDuration`, see `age`).
//! - **Never panics.** Missing, `null` or mistyped fields print as the Go
//!   zero value would; see `fields`.
//! - **Row objects** follow `includeObject`: [`IncludeObject::Metadata`]
//!   (kubectl's default) embeds a `PartialObjectMetadata`,
//!   [`IncludeObject::Object`] the object as given (callers pass it with
//!   `kind`/`apiVersion` set), [`IncludeObject::None`] `"object": null`.
//! - **Metadata**: a list table carries the list's `resourceVersion`,
//!   `continue` and `remainingItemCount`; a single-object or watch-event
//!   table carries the object's `resourceVersion`.
//!
//! # Kinds
//!
//! Every built-in kind has a dedicated printer (`printers::lookup`, keyed by
//! group and kind, never version) or is listed in
//! `printers::DEFAULT_TABLE_KINDS` — LimitRange, Role, ClusterRole,
//! CustomResourceDefinition and the create-only review kinds, which
//! upstream also prints with the default table. FlowSchema lists are
//! sorted as upstream sorts them; every other list keeps storage order.
//! Rows have one cell per column, except IPAddress rows, which carry the
//! age as a third cell without a column, as upstream's do.
//!
//! # Defaults
//!
//! Printers apply no API defaulting: kube-apiserver prints decoded (hence
//! defaulted) objects, so the registry must store objects defaulted — an
//! omitted `spec.replicas` prints 0, an omitted port protocol prints empty.
//! Quantities are printed canonically (`1024Mi` → `1Gi`), as upstream
//! re-encodes them.
//!
//! # Watch
//!
//! A watch with a Table `Accept` sends one single-row Table per event.
//! Upstream (`handlers/response.go`, `watchEmbeddedEncoder.doEncode`)
//! includes `columnDefinitions` in the first event only and sends
//! `"columnDefinitions": null` afterwards; `metav1.Status` objects (ERROR
//! events) pass through unconverted but still count as the first event.
//! BOOKMARK objects are converted like any other object, as upstream does.
//! [`WatchTables`] carries that per-watch state.
//!
//! ```text
//! {"kind":"Table","apiVersion":"meta.k8s.io/v1","metadata":{"resourceVersion":"42"},
//!  "columnDefinitions":[{"name":"Name","type":"string","format":"name",…},…],
//!  "rows":[{"cells":["web-0","1/1","Running","0","5m",…],
//!           "object":{"kind":"PartialObjectMetadata","apiVersion":"meta.k8s.io/v1","metadata":{…}}}]}
//! ```

mod age;
mod column;
mod custom;
mod descriptions;
mod fields;
mod labels;
mod printer;
mod printers;
mod quantity;
#[cfg(test)]
mod tests;
mod timestamp;

use serde_json::{Map, Value, json};
use time::OffsetDateTime;

pub use column::Column;
pub use custom::{CustomColumns, custom_object_table, custom_table};
pub use printer::{DEFAULT_PRINTER, Printer, printer};

/// `apiVersion` of the Tables (and `PartialObjectMetadata`) produced.
pub const API_VERSION: &str = "meta.k8s.io/v1";

/// What each row embeds as `object` (the `includeObject` query parameter).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum IncludeObject {
    /// `"object": null`.
    None,
    /// A `PartialObjectMetadata` (kind, apiVersion, the full `metadata`).
    #[default]
    Metadata,
    /// The whole object.
    Object,
}

impl IncludeObject {
    /// Parses the `includeObject` query value; `""` means [`Self::Metadata`].
    /// `None` for a value upstream rejects with 400 (`unrecognized
    /// includeObject value`).
    pub fn parse(value: &str) -> Option<Self> {
        match value {
            "" | "Metadata" => Some(Self::Metadata),
            "None" => Some(Self::None),
            "Object" => Some(Self::Object),
            _ => None,
        }
    }
}

/// The list metadata a list Table carries over from the list.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ListMeta {
    /// The list's `resourceVersion`; omitted when empty.
    pub resource_version: String,
    /// The `continue` token; omitted when empty.
    pub continue_token: String,
    /// `remainingItemCount`; omitted when `None`.
    pub remaining_item_count: Option<i64>,
}

/// The Table for a LIST of `kind` objects.
pub fn table(
    group: &str,
    kind: &str,
    objects: &[Value],
    list_meta: &ListMeta,
    include: IncludeObject,
    now: OffsetDateTime,
) -> Value {
    let metadata = list_metadata(list_meta);
    let p = printer(group, kind);
    let mut ordered: Vec<&Value> = objects.iter().collect();
    let group = if group == "core" { "" } else { group };
    if let Some(order) = printers::list_order(group, kind) {
        ordered.sort_by(|a, b| order(a, b));
    }
    let rows: Vec<Value> = ordered.iter().map(|o| row(p, o, include, now)).collect();
    let rows = if rows.is_empty() && p.empty_rows_are_null() {
        Value::Null
    } else {
        Value::Array(rows)
    };
    assemble(metadata, columns(p, true), rows)
}

/// A list Table's `metadata`: the list's `resourceVersion`, `continue`
/// and `remainingItemCount`, each omitted when unset.
fn list_metadata(list_meta: &ListMeta) -> Map<String, Value> {
    let mut metadata = Map::new();
    if !list_meta.resource_version.is_empty() {
        metadata.insert(
            "resourceVersion".into(),
            list_meta.resource_version.clone().into(),
        );
    }
    if !list_meta.continue_token.is_empty() {
        metadata.insert("continue".into(), list_meta.continue_token.clone().into());
    }
    if let Some(count) = list_meta.remaining_item_count {
        metadata.insert("remainingItemCount".into(), count.into());
    }
    metadata
}

/// What prints the rows of a Table: a built-in kind's [`Printer`] or a
/// CRD version's [`CustomColumns`].
trait Rows {
    /// The column definitions, in cell order.
    fn column_defs(&self) -> &[Column];
    /// The cells of `object`'s row at `now`.
    fn cells(&self, object: &Value, now: OffsetDateTime) -> Vec<Value>;
    /// The row's `conditions`.
    fn conditions(&self, object: &Value) -> Vec<Value>;
}

impl Rows for Printer {
    fn column_defs(&self) -> &[Column] {
        self.columns()
    }

    fn cells(&self, object: &Value, now: OffsetDateTime) -> Vec<Value> {
        self.row(object, now)
    }

    fn conditions(&self, object: &Value) -> Vec<Value> {
        Printer::conditions(self, object)
    }
}

/// The Table for a GET of one object: one row, the object's
/// `resourceVersion`.
pub fn object_table(
    group: &str,
    kind: &str,
    object: &Value,
    include: IncludeObject,
    now: OffsetDateTime,
) -> Value {
    single(printer(group, kind), object, include, true, now)
}

/// Per-watch state for Table-encoded watch events.
#[derive(Debug)]
pub struct WatchTables {
    printer: WatchPrinter,
    include: IncludeObject,
    headers_sent: bool,
}

/// The printer a watch holds: a built-in kind's, or a CRD version's
/// (shared with the resource table that built it).
#[derive(Debug)]
enum WatchPrinter {
    Builtin(&'static Printer),
    Custom(std::sync::Arc<CustomColumns>),
}

impl WatchPrinter {
    fn rows(&self) -> &dyn Rows {
        match self {
            Self::Builtin(p) => *p,
            Self::Custom(c) => c.as_ref(),
        }
    }
}

impl WatchTables {
    /// State for one watch of `kind` objects.
    pub fn new(group: &str, kind: &str, include: IncludeObject) -> Self {
        Self {
            printer: WatchPrinter::Builtin(printer(group, kind)),
            include,
            headers_sent: false,
        }
    }

    /// The `object` of the next watch event: a one-row Table (column
    /// definitions on the first call only), or `object` itself when it is a
    /// `metav1.Status`.
    pub fn event_object(&mut self, object: &Value, now: OffsetDateTime) -> Value {
        let headers = !self.headers_sent;
        self.headers_sent = true;
        if is_status(object) {
            return object.clone();
        }
        single(self.printer.rows(), object, self.include, headers, now)
    }
}

/// Whether `object` is a `metav1.Status` (sent unconverted).
fn is_status(object: &Value) -> bool {
    fields::str_at(object, &["kind"]) == "Status" && fields::str_at(object, &["apiVersion"]) == "v1"
}

fn single(
    p: &dyn Rows,
    object: &Value,
    include: IncludeObject,
    headers: bool,
    now: OffsetDateTime,
) -> Value {
    let mut metadata = Map::new();
    let rv = fields::str_at(object, &["metadata", "resourceVersion"]);
    if !rv.is_empty() {
        metadata.insert("resourceVersion".into(), rv.into());
    }
    let rows = Value::Array(vec![row(p, object, include, now)]);
    assemble(metadata, columns(p, headers), rows)
}

/// `columnDefinitions`: the printer's columns, or `null` without headers.
fn columns(p: &dyn Rows, headers: bool) -> Value {
    if !headers {
        return Value::Null;
    }
    serde_json::to_value(p.column_defs()).unwrap_or(Value::Null)
}

fn assemble(metadata: Map<String, Value>, columns: Value, rows: Value) -> Value {
    json!({
        "kind": "Table",
        "apiVersion": API_VERSION,
        "metadata": metadata,
        "columnDefinitions": columns,
        "rows": rows,
    })
}

fn row(p: &dyn Rows, object: &Value, include: IncludeObject, now: OffsetDateTime) -> Value {
    let mut row = Map::new();
    row.insert("cells".into(), Value::Array(p.cells(object, now)));
    let conditions = p.conditions(object);
    if !conditions.is_empty() {
        row.insert("conditions".into(), Value::Array(conditions));
    }
    let embedded = match include {
        IncludeObject::None => Value::Null,
        IncludeObject::Object => object.clone(),
        IncludeObject::Metadata => partial_object_metadata(object),
    };
    row.insert("object".into(), embedded);
    Value::Object(row)
}

/// `meta.AsPartialObjectMetadata`: the object's metadata under
/// `PartialObjectMetadata`. Go always encodes `creationTimestamp`, as
/// `null` when unset.
pub fn partial_object_metadata(object: &Value) -> Value {
    let mut metadata = fields::at(object, &["metadata"])
        .and_then(Value::as_object)
        .cloned()
        .unwrap_or_default();
    metadata.entry("creationTimestamp").or_insert(Value::Null);
    json!({
        "kind": "PartialObjectMetadata",
        "apiVersion": API_VERSION,
        "metadata": metadata,
    })
}
