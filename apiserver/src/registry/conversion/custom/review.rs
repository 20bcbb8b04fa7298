//! The `ConversionReview` exchange of a conversion webhook, as
//! apiextensions-apiserver v1.33 (`pkg/apiserver/conversion/
//! webhook_converter.go`): the request body Skein sends, and
//! [`check_response`], the pure check of what the webhook answered
//! (decoding, `uid`, `result.status`, object count, each converted object's
//! `apiVersion` and `kind`, and its metadata: only labels and annotations
//! may change). Error texts are upstream's, without and with the
//! `conversion webhook for <gvk> ...` prefix exactly where upstream puts it.
//!
//! Contracts: pure, never panics on any response body; the returned
//! objects carry the original objects' metadata with the webhook's labels
//! and annotations, in the order the objects were sent.

use serde::Serialize;
use serde_json::{Map, Value};
use skein_admission::names;

use crate::registry::validation::ANNOTATIONS_MAX;
use crate::status::Cause;

/// The `apiextensions.k8s.io` group the `ConversionReview` lives in.
const GROUP: &str = "apiextensions.k8s.io";

/// Which `ConversionReview` version a webhook speaks.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ReviewVersion {
    /// `apiextensions.k8s.io/v1`: the response's kind, apiVersion and uid
    /// are checked.
    V1,
    /// `apiextensions.k8s.io/v1beta1`: as upstream, for compatibility the
    /// response's kind and uid are not checked.
    V1beta1,
}

impl ReviewVersion {
    /// The first version of `conversionReviewVersions` Skein speaks, as
    /// upstream's `createConversionReviewObjects` picks it; `None` when
    /// the list names none (`no supported conversion review versions`).
    pub fn pick<'a>(versions: impl IntoIterator<Item = &'a str>) -> Option<ReviewVersion> {
        versions.into_iter().find_map(|v| match v {
            "v1" => Some(ReviewVersion::V1),
            "v1beta1" => Some(ReviewVersion::V1beta1),
            _ => None,
        })
    }

    /// `apiextensions.k8s.io/v1` or `apiextensions.k8s.io/v1beta1`.
    pub fn api_version(self) -> &'static str {
        match self {
            ReviewVersion::V1 => "apiextensions.k8s.io/v1",
            ReviewVersion::V1beta1 => "apiextensions.k8s.io/v1beta1",
        }
    }
}

/// One conversion request: what was sent and what the answer must match.
#[derive(Clone, Debug)]
pub struct Review {
    /// The review version spoken.
    pub version: ReviewVersion,
    /// The request's fresh `uid`.
    pub uid: String,
    /// `desiredAPIVersion` (`group/version`).
    pub desired_api_version: String,
    /// The objects sent, in order (only those not already in the desired
    /// version).
    pub objects: Vec<Value>,
    /// Whether the request converts one object (upstream's single-object
    /// path and texts) rather than the items of a list.
    pub single: bool,
    /// The group/version/kind upstream names in its errors, Go's
    /// `GroupVersionKind.String()` (`stable.example.com/v1, Kind=CronTab`).
    pub gvk: String,
}

/// The request half of a `ConversionReview`, in Go's field order.
#[derive(Serialize)]
struct WireReview<'a> {
    kind: &'static str,
    #[serde(rename = "apiVersion")]
    api_version: &'static str,
    request: WireRequest<'a>,
    response: WireResponse,
}

#[derive(Serialize)]
struct WireRequest<'a> {
    uid: &'a str,
    #[serde(rename = "desiredAPIVersion")]
    desired_api_version: &'a str,
    objects: &'a [Value],
}

/// Upstream sends an empty `response` (`&ConversionResponse{}`).
#[derive(Serialize)]
struct WireResponse {
    uid: &'static str,
    #[serde(rename = "convertedObjects")]
    converted_objects: Option<()>,
    result: EmptyStatus,
}

#[derive(Serialize)]
struct EmptyStatus {
    metadata: Map<String, Value>,
}

impl Review {
    /// The JSON body POSTed to the webhook.
    pub fn request_body(&self) -> Vec<u8> {
        let wire = WireReview {
            kind: "ConversionReview",
            api_version: self.version.api_version(),
            request: WireRequest {
                uid: &self.uid,
                desired_api_version: &self.desired_api_version,
                objects: &self.objects,
            },
            response: WireResponse {
                uid: "",
                converted_objects: None,
                result: EmptyStatus {
                    metadata: Map::new(),
                },
            },
        };
        serde_json::to_vec(&wire).unwrap_or_default()
    }

    /// `conversion webhook for <gvk> failed: <why>`.
    pub fn failed(&self, why: &str) -> String {
        format!("conversion webhook for {} failed: {why}", self.gvk)
    }
}

/// Go's `GroupVersionKind.String()` of an object: `group/version, Kind=K`
/// (an empty group prints as `/version`).
pub fn gvk_string(obj: &Value) -> String {
    let (group, version) = group_version(api_version(obj));
    format!("{group}/{version}, Kind={}", kind(obj))
}

/// `apiVersion` of an object ("" when absent or not a string).
pub fn api_version(obj: &Value) -> &str {
    obj.get("apiVersion").and_then(Value::as_str).unwrap_or("")
}

fn kind(obj: &Value) -> &str {
    obj.get("kind").and_then(Value::as_str).unwrap_or("")
}

/// `schema.ParseGroupVersion`, an unparsable value reading as empty (as
/// `GroupVersionKind()` of an unstructured object does).
fn group_version(api_version: &str) -> (&str, &str) {
    let mut parts = api_version.split('/');
    match (parts.next(), parts.next(), parts.next()) {
        (Some(v), None, _) => ("", v),
        (Some(g), Some(v), None) => (g, v),
        _ => ("", ""),
    }
}

/// Go's `GroupVersion.String()`: `group/version`, or just `version`.
fn gv_string(api_version: &str) -> String {
    match group_version(api_version) {
        ("", v) => v.to_string(),
        (g, v) => format!("{g}/{v}"),
    }
}

/// Go's `%T` of a decoded JSON value.
fn go_type(v: &Value) -> &'static str {
    match v {
        Value::Null => "<nil>",
        Value::Bool(_) => "bool",
        Value::Number(n) if n.is_i64() => "int64",
        Value::Number(_) => "float64",
        Value::String(_) => "string",
        Value::Array(_) => "[]interface {}",
        Value::Object(_) => "map[string]interface {}",
    }
}

fn meta_str<'a>(obj: &'a Value, field: &str) -> &'a str {
    obj.get("metadata")
        .and_then(|m| m.get(field))
        .and_then(Value::as_str)
        .unwrap_or("")
}

/// Checks a webhook's answer to `review` and returns the converted
/// objects (metadata restored from the originals, labels and annotations
/// taken from the webhook), or upstream's error text.
pub fn check_response(review: &Review, body: &[u8]) -> Result<Vec<Value>, String> {
    let converted = converted_objects(review, body).map_err(|e| review.failed(&e))?;
    if converted.len() != review.objects.len() {
        return Err(format!(
            "conversion webhook for {} returned {} objects, expected {}",
            review.gvk,
            converted.len(),
            review.objects.len()
        ));
    }
    let desired = gv_string(&review.desired_api_version);
    let mut out = Vec::with_capacity(converted.len());
    for (index, (original, converted)) in review.objects.iter().zip(converted).enumerate() {
        out.push(check_object(review, &desired, index, original, converted)?);
    }
    Ok(out)
}

/// One converted object against the one sent, with upstream's texts for
/// the single-object and the list path.
fn check_object(
    review: &Review,
    desired: &str,
    index: usize,
    original: &Value,
    mut converted: Value,
) -> Result<Value, String> {
    let gvk = &review.gvk;
    let invalid = |why: String| {
        if review.single {
            format!("conversion webhook for {gvk} returned invalid object at index 0: {why}")
        } else {
            format!(
                "conversion webhook for {gvk} returned invalid converted object at index {index}: {why}"
            )
        }
    };
    if kind(&converted).is_empty() {
        // Upstream decodes each object as Unstructured, which needs a kind.
        let missing = format!("Object 'Kind' is missing in '{converted}'");
        return Err(if review.single {
            missing
        } else {
            invalid(missing)
        });
    }
    let got = gv_string(api_version(&converted));
    if got != desired {
        return Err(invalid(format!(
            "invalid groupVersion (expected {desired}, received {got})"
        )));
    }
    if kind(original) != kind(&converted) {
        return Err(invalid(format!(
            "invalid kind (expected {}, received {})",
            kind(original),
            kind(&converted)
        )));
    }
    if let Err(why) = same_identity(original, &converted) {
        return Err(if review.single {
            format!("conversion webhook for {gvk} returned invalid object: {why}")
        } else {
            invalid(why)
        });
    }
    if let Err(why) = restore_object_meta(original, &mut converted) {
        return Err(if review.single {
            format!("conversion webhook for {gvk} returned invalid metadata: {why}")
        } else {
            format!(
                "conversion webhook for {gvk} returned invalid metadata in object at index {index}: {why}"
            )
        });
    }
    Ok(converted)
}

/// Upstream's `getConvertedObjectsFromResponse` after decoding: the
/// `response.convertedObjects`, or why there are none (without prefix).
fn converted_objects(review: &Review, body: &[u8]) -> Result<Vec<Value>, String> {
    let doc: Value = serde_json::from_slice(body)
        .map_err(|e| format!("couldn't get version/kind; json parse error: {e}"))?;
    if !doc.is_object() {
        return Err(format!(
            "couldn't get version/kind; json parse error: expected an object, got {}",
            go_type(&doc)
        ));
    }
    if review.version == ReviewVersion::V1 {
        let (group, version) = group_version(api_version(&doc));
        if group != GROUP || version != "v1" || kind(&doc) != "ConversionReview" {
            return Err(format!(
                "expected webhook response of {GROUP}/v1, Kind=ConversionReview, got {}",
                gvk_string(&doc)
            ));
        }
    }
    let response = match doc.get("response") {
        Some(r @ Value::Object(_)) => r,
        _ => return Err("no response provided".into()),
    };
    if review.version == ReviewVersion::V1 {
        let uid = response.get("uid").and_then(Value::as_str).unwrap_or("");
        if uid != review.uid {
            return Err(format!(
                "expected response.uid={}, got {}",
                skein_admission::quote(&review.uid),
                skein_admission::quote(uid)
            ));
        }
    }
    let result = response.get("result");
    let status = result
        .and_then(|r| r.get("status"))
        .and_then(Value::as_str)
        .unwrap_or("");
    if status != "Success" {
        let message = result
            .and_then(|r| r.get("message"))
            .and_then(Value::as_str)
            .unwrap_or("");
        if !message.is_empty() {
            return Err(message.to_string());
        }
        return Err(format!(
            "response.result.status was '{status}', not 'Success'"
        ));
    }
    match response.get("convertedObjects") {
        None | Some(Value::Null) => Ok(Vec::new()),
        Some(Value::Array(items)) => Ok(items.clone()),
        Some(other) => Err(format!(
            "json: cannot unmarshal {} into Go struct field ConversionResponse.response.convertedObjects of type []runtime.RawExtension",
            json_type_word(other)
        )),
    }
}

/// The JSON type word Go's `encoding/json` names in unmarshal errors.
fn json_type_word(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "bool",
        Value::Number(_) => "number",
        Value::String(_) => "string",
        Value::Array(_) => "array",
        Value::Object(_) => "object",
    }
}

/// Upstream's `validateConvertedObject`: kind, name, namespace and uid
/// must be the original's.
fn same_identity(original: &Value, converted: &Value) -> Result<(), String> {
    if kind(original) != kind(converted) {
        return Err(format!(
            "must have the same kind: {} != {}",
            kind(original),
            kind(converted)
        ));
    }
    for (field, word) in [("name", "name"), ("namespace", "namespace"), ("uid", "UID")] {
        let (e, a) = (meta_str(original, field), meta_str(converted, field));
        if e != a {
            return Err(format!("must have the same {word}: {e} != {a}"));
        }
    }
    Ok(())
}

/// Upstream's `restoreObjectMeta`: the converted object gets the
/// original's metadata, except labels and annotations, which are the
/// webhook's (validated when they changed).
fn restore_object_meta(original: &Value, converted: &mut Value) -> Result<(), String> {
    let Some(obj) = converted.as_object_mut() else {
        return Err("missing metadata in converted object".into());
    };
    let response_meta = match obj.get("metadata") {
        None => return Err("missing metadata in converted object".into()),
        Some(Value::Object(m)) => m.clone(),
        Some(other) => {
            return Err(format!(
                "invalid metadata of type {} in converted object",
                go_type(other)
            ));
        }
    };
    let mut meta = match original.get("metadata") {
        None => Map::new(),
        Some(Value::Object(m)) => m.clone(),
        Some(other) => {
            return Err(format!(
                "invalid metadata of type {} in input object",
                go_type(other)
            ));
        }
    };
    for field in ["labels", "annotations"] {
        let response_field = match response_meta.get(field) {
            None | Some(Value::Null) => {
                meta.remove(field);
                continue;
            }
            Some(Value::Object(m)) => m,
            Some(other) => {
                return Err(format!(
                    "invalid metadata.{field} of type {} in converted object",
                    go_type(other)
                ));
            }
        };
        let original_field = match meta.get(field) {
            None | Some(Value::Null) => None,
            Some(Value::Object(m)) => Some(m),
            Some(other) => {
                return Err(format!(
                    "invalid metadata.{field} of type {} in original object",
                    go_type(other)
                ));
            }
        };
        let mut changed = original_field.map_or(0, Map::len) != response_field.len();
        for (k, v) in response_field {
            if !v.is_string() {
                return Err(format!(
                    "metadata.{field}[{k}] must be a string, but is {} in converted object",
                    go_type(v)
                ));
            }
            if original_field.and_then(|m| m.get(k)) != Some(v) {
                changed = true;
            }
        }
        if changed {
            let causes = if field == "labels" {
                label_errors(response_field)
            } else {
                annotation_errors(response_field)
            };
            if !causes.is_empty() {
                return Err(aggregate(&causes));
            }
        }
        meta.insert(field.to_string(), Value::Object(response_field.clone()));
    }
    obj.insert("metadata".into(), Value::Object(meta));
    Ok(())
}

/// `metav1validation.ValidateLabels` at `metadata.labels`, keys sorted.
fn label_errors(labels: &Map<String, Value>) -> Vec<Cause> {
    let mut out = Vec::new();
    let mut keys: Vec<&String> = labels.keys().collect();
    keys.sort();
    for k in keys {
        for msg in names::qualified_name(k) {
            out.push(Cause::invalid(
                "metadata.labels",
                skein_admission::quote(k),
                msg,
            ));
        }
        let v = labels.get(k).and_then(Value::as_str).unwrap_or("");
        for msg in names::label_value(v) {
            out.push(Cause::invalid(
                "metadata.labels",
                skein_admission::quote(v),
                msg,
            ));
        }
    }
    out
}

/// `apivalidation.ValidateAnnotations` at upstream's path here,
/// `metadata.annotation` (sic), keys sorted.
fn annotation_errors(annotations: &Map<String, Value>) -> Vec<Cause> {
    const PATH: &str = "metadata.annotation";
    let mut out = Vec::new();
    let mut keys: Vec<&String> = annotations.keys().collect();
    keys.sort();
    let mut total = 0usize;
    for k in keys {
        for msg in names::qualified_name(&k.to_lowercase()) {
            out.push(Cause::invalid(PATH, skein_admission::quote(k), msg));
        }
        total += k.len()
            + annotations
                .get(k)
                .and_then(Value::as_str)
                .map_or(0, str::len);
    }
    if total > ANNOTATIONS_MAX {
        out.push(Cause::too_long(
            PATH,
            format!("may not be more than {ANNOTATIONS_MAX} bytes"),
        ));
    }
    out
}

/// Go's `ErrorList.ToAggregate().Error()`: one message alone, several
/// (deduplicated) in brackets.
fn aggregate(causes: &[Cause]) -> String {
    let mut seen: Vec<String> = Vec::new();
    for c in causes {
        let t = c.text();
        if !seen.contains(&t) {
            seen.push(t);
        }
    }
    match seen.as_slice() {
        [one] => one.clone(),
        many => format!("[{}]", many.join(", ")),
    }
}

#[cfg(test)]
#[path = "review_tests.rs"]
mod tests;
