//! The subset of gnostic's `openapi.v2` protobuf messages a Kubernetes
//! Swagger document uses (`google/gnostic-models: openapiv2/OpenAPIv2.proto`;
//! field numbers as there), and the conversion from the JSON document.
//!
//! client-go fetches `/openapi/v2` as this protobuf and `proto.Unmarshal`s
//! it into `openapi_v2.Document` (`client-go/discovery/discovery_client.go:
//! OpenAPISchema`); kubectl then reads definitions and their vendor
//! extensions through `kube-openapi/pkg/util/proto`, which parses every
//! extension value from its `yaml` text (JSON text is valid YAML).
//!
//! Fields that a Kubernetes document never sets (security, XML, examples,
//! numeric bounds) are not modelled; prost skips unknown fields on decode,
//! and a message that omits them is still a valid `openapi.v2` message.

use prost::Message;
use serde_json::Value;

/// `openapi.v2.Any`: a value as YAML text.
#[derive(Clone, PartialEq, Message)]
pub struct Any {
    /// `string yaml = 2`.
    #[prost(string, tag = "2")]
    pub yaml: String,
}

/// `openapi.v2.NamedAny`: a vendor extension.
#[derive(Clone, PartialEq, Message)]
pub struct NamedAny {
    /// Extension name (`x-kubernetes-…`).
    #[prost(string, tag = "1")]
    pub name: String,
    /// Its value.
    #[prost(message, optional, tag = "2")]
    pub value: Option<Any>,
}

/// `openapi.v2.Info`.
#[derive(Clone, PartialEq, Message)]
pub struct Info {
    /// `title = 1`.
    #[prost(string, tag = "1")]
    pub title: String,
    /// `version = 2`.
    #[prost(string, tag = "2")]
    pub version: String,
}

/// `openapi.v2.Document`.
#[derive(Clone, PartialEq, Message)]
pub struct Document {
    /// `swagger = 1` ("2.0").
    #[prost(string, tag = "1")]
    pub swagger: String,
    /// `info = 2`.
    #[prost(message, optional, tag = "2")]
    pub info: Option<Info>,
    /// `paths = 8`.
    #[prost(message, optional, tag = "8")]
    pub paths: Option<Paths>,
    /// `definitions = 9`.
    #[prost(message, optional, tag = "9")]
    pub definitions: Option<Definitions>,
}

/// `openapi.v2.Paths`.
#[derive(Clone, PartialEq, Message)]
pub struct Paths {
    /// `path = 2`.
    #[prost(message, repeated, tag = "2")]
    pub path: Vec<NamedPathItem>,
}

/// `openapi.v2.NamedPathItem`.
#[derive(Clone, PartialEq, Message)]
pub struct NamedPathItem {
    /// The path.
    #[prost(string, tag = "1")]
    pub name: String,
    /// Its operations.
    #[prost(message, optional, tag = "2")]
    pub value: Option<PathItem>,
}

/// `openapi.v2.PathItem`.
#[derive(Clone, PartialEq, Message)]
pub struct PathItem {
    /// `get = 2`.
    #[prost(message, optional, tag = "2")]
    pub get: Option<Operation>,
    /// `put = 3`.
    #[prost(message, optional, tag = "3")]
    pub put: Option<Operation>,
    /// `post = 4`.
    #[prost(message, optional, tag = "4")]
    pub post: Option<Operation>,
    /// `delete = 5`.
    #[prost(message, optional, tag = "5")]
    pub delete: Option<Operation>,
    /// `options = 6`.
    #[prost(message, optional, tag = "6")]
    pub options: Option<Operation>,
    /// `head = 7`.
    #[prost(message, optional, tag = "7")]
    pub head: Option<Operation>,
    /// `patch = 8`.
    #[prost(message, optional, tag = "8")]
    pub patch: Option<Operation>,
    /// `parameters = 9`.
    #[prost(message, repeated, tag = "9")]
    pub parameters: Vec<ParametersItem>,
}

/// `openapi.v2.Operation`.
#[derive(Clone, PartialEq, Message)]
pub struct Operation {
    /// `tags = 1`.
    #[prost(string, repeated, tag = "1")]
    pub tags: Vec<String>,
    /// `description = 3`.
    #[prost(string, tag = "3")]
    pub description: String,
    /// `operation_id = 5`.
    #[prost(string, tag = "5")]
    pub operation_id: String,
    /// `produces = 6`.
    #[prost(string, repeated, tag = "6")]
    pub produces: Vec<String>,
    /// `consumes = 7`.
    #[prost(string, repeated, tag = "7")]
    pub consumes: Vec<String>,
    /// `parameters = 8`.
    #[prost(message, repeated, tag = "8")]
    pub parameters: Vec<ParametersItem>,
    /// `responses = 9`.
    #[prost(message, optional, tag = "9")]
    pub responses: Option<Responses>,
    /// `schemes = 10`.
    #[prost(string, repeated, tag = "10")]
    pub schemes: Vec<String>,
    /// `vendor_extension = 13`.
    #[prost(message, repeated, tag = "13")]
    pub vendor_extension: Vec<NamedAny>,
}

/// `openapi.v2.ParametersItem` (only the `parameter` arm is used).
#[derive(Clone, PartialEq, Message)]
pub struct ParametersItem {
    /// `parameter = 1`.
    #[prost(message, optional, tag = "1")]
    pub parameter: Option<Parameter>,
}

/// `openapi.v2.Parameter`: `oneof { body_parameter = 1; non_body_parameter = 2 }`.
#[derive(Clone, PartialEq, Message)]
pub struct Parameter {
    /// The arm.
    #[prost(oneof = "ParameterKind", tags = "1, 2")]
    pub oneof: Option<ParameterKind>,
}

/// The arms of [`Parameter`].
#[derive(Clone, PartialEq, prost::Oneof)]
pub enum ParameterKind {
    /// `body_parameter = 1`.
    #[prost(message, boxed, tag = "1")]
    Body(Box<BodyParameter>),
    /// `non_body_parameter = 2`.
    #[prost(message, tag = "2")]
    NonBody(NonBodyParameter),
}

/// `openapi.v2.BodyParameter`.
#[derive(Clone, PartialEq, Message)]
pub struct BodyParameter {
    /// `name = 2`.
    #[prost(string, tag = "2")]
    pub name: String,
    /// `in = 3`.
    #[prost(string, tag = "3")]
    pub r#in: String,
    /// `required = 4`.
    #[prost(bool, tag = "4")]
    pub required: bool,
    /// `schema = 5`.
    #[prost(message, optional, tag = "5")]
    pub schema: Option<Schema>,
}

/// `openapi.v2.NonBodyParameter`: query (3) or path (4) parameters here.
#[derive(Clone, PartialEq, Message)]
pub struct NonBodyParameter {
    /// The arm.
    #[prost(oneof = "NonBodyKind", tags = "3, 4")]
    pub oneof: Option<NonBodyKind>,
}

/// The arms of [`NonBodyParameter`] that Kubernetes uses.
#[derive(Clone, PartialEq, prost::Oneof)]
pub enum NonBodyKind {
    /// `query_parameter_sub_schema = 3`.
    #[prost(message, tag = "3")]
    Query(QueryParameter),
    /// `path_parameter_sub_schema = 4`.
    #[prost(message, tag = "4")]
    Path(PathParameter),
}

/// `openapi.v2.QueryParameterSubSchema` (the fields used).
#[derive(Clone, PartialEq, Message)]
pub struct QueryParameter {
    /// `required = 1`.
    #[prost(bool, tag = "1")]
    pub required: bool,
    /// `in = 2`.
    #[prost(string, tag = "2")]
    pub r#in: String,
    /// `description = 3`.
    #[prost(string, tag = "3")]
    pub description: String,
    /// `name = 4`.
    #[prost(string, tag = "4")]
    pub name: String,
    /// `type = 6`.
    #[prost(string, tag = "6")]
    pub r#type: String,
    /// `unique_items = 20`.
    #[prost(bool, tag = "20")]
    pub unique_items: bool,
}

/// `openapi.v2.PathParameterSubSchema` (the fields used).
#[derive(Clone, PartialEq, Message)]
pub struct PathParameter {
    /// `required = 1`.
    #[prost(bool, tag = "1")]
    pub required: bool,
    /// `in = 2`.
    #[prost(string, tag = "2")]
    pub r#in: String,
    /// `description = 3`.
    #[prost(string, tag = "3")]
    pub description: String,
    /// `name = 4`.
    #[prost(string, tag = "4")]
    pub name: String,
    /// `type = 5`.
    #[prost(string, tag = "5")]
    pub r#type: String,
    /// `unique_items = 19`.
    #[prost(bool, tag = "19")]
    pub unique_items: bool,
}

/// `openapi.v2.Responses`.
#[derive(Clone, PartialEq, Message)]
pub struct Responses {
    /// `response_code = 1`.
    #[prost(message, repeated, tag = "1")]
    pub response_code: Vec<NamedResponseValue>,
}

/// `openapi.v2.NamedResponseValue`.
#[derive(Clone, PartialEq, Message)]
pub struct NamedResponseValue {
    /// The status code.
    #[prost(string, tag = "1")]
    pub name: String,
    /// The response.
    #[prost(message, optional, tag = "2")]
    pub value: Option<ResponseValue>,
}

/// `openapi.v2.ResponseValue` (only `response = 1` is used).
#[derive(Clone, PartialEq, Message)]
pub struct ResponseValue {
    /// `response = 1`.
    #[prost(message, optional, tag = "1")]
    pub response: Option<Response>,
}

/// `openapi.v2.Response`.
#[derive(Clone, PartialEq, Message)]
pub struct Response {
    /// `description = 1`.
    #[prost(string, tag = "1")]
    pub description: String,
    /// `schema = 2`.
    #[prost(message, optional, tag = "2")]
    pub schema: Option<SchemaItem>,
}

/// `openapi.v2.SchemaItem` (only `schema = 1` is used).
#[derive(Clone, PartialEq, Message)]
pub struct SchemaItem {
    /// `schema = 1`.
    #[prost(message, optional, tag = "1")]
    pub schema: Option<Schema>,
}

/// `openapi.v2.Definitions`.
#[derive(Clone, PartialEq, Message)]
pub struct Definitions {
    /// `additional_properties = 1`.
    #[prost(message, repeated, tag = "1")]
    pub additional_properties: Vec<NamedSchema>,
}

/// `openapi.v2.NamedSchema`.
#[derive(Clone, PartialEq, Message)]
pub struct NamedSchema {
    /// Name.
    #[prost(string, tag = "1")]
    pub name: String,
    /// Schema.
    #[prost(message, optional, tag = "2")]
    pub value: Option<Schema>,
}

/// `openapi.v2.Schema` (the fields Kubernetes definitions use).
#[derive(Clone, PartialEq, Message)]
pub struct Schema {
    /// `_ref = 1`.
    #[prost(string, tag = "1")]
    pub r#ref: String,
    /// `format = 2`.
    #[prost(string, tag = "2")]
    pub format: String,
    /// `title = 3`.
    #[prost(string, tag = "3")]
    pub title: String,
    /// `description = 4`.
    #[prost(string, tag = "4")]
    pub description: String,
    /// `default = 5`.
    #[prost(message, optional, tag = "5")]
    pub default: Option<Any>,
    /// `multiple_of = 6`.
    #[prost(double, tag = "6")]
    pub multiple_of: f64,
    /// `maximum = 7`.
    #[prost(double, tag = "7")]
    pub maximum: f64,
    /// `exclusive_maximum = 8`.
    #[prost(bool, tag = "8")]
    pub exclusive_maximum: bool,
    /// `minimum = 9`.
    #[prost(double, tag = "9")]
    pub minimum: f64,
    /// `exclusive_minimum = 10`.
    #[prost(bool, tag = "10")]
    pub exclusive_minimum: bool,
    /// `max_length = 11`.
    #[prost(int64, tag = "11")]
    pub max_length: i64,
    /// `min_length = 12`.
    #[prost(int64, tag = "12")]
    pub min_length: i64,
    /// `pattern = 13`.
    #[prost(string, tag = "13")]
    pub pattern: String,
    /// `max_items = 14`.
    #[prost(int64, tag = "14")]
    pub max_items: i64,
    /// `min_items = 15`.
    #[prost(int64, tag = "15")]
    pub min_items: i64,
    /// `unique_items = 16`.
    #[prost(bool, tag = "16")]
    pub unique_items: bool,
    /// `max_properties = 17`.
    #[prost(int64, tag = "17")]
    pub max_properties: i64,
    /// `min_properties = 18`.
    #[prost(int64, tag = "18")]
    pub min_properties: i64,
    /// `required = 19`.
    #[prost(string, repeated, tag = "19")]
    pub required: Vec<String>,
    /// `enum = 20`.
    #[prost(message, repeated, tag = "20")]
    pub r#enum: Vec<Any>,
    /// `additional_properties = 21`.
    #[prost(message, optional, boxed, tag = "21")]
    pub additional_properties: Option<Box<AdditionalPropertiesItem>>,
    /// `type = 22`.
    #[prost(message, optional, tag = "22")]
    pub r#type: Option<TypeItem>,
    /// `items = 23`.
    #[prost(message, optional, tag = "23")]
    pub items: Option<ItemsItem>,
    /// `all_of = 24`.
    #[prost(message, repeated, tag = "24")]
    pub all_of: Vec<Schema>,
    /// `properties = 25`.
    #[prost(message, optional, tag = "25")]
    pub properties: Option<Properties>,
    /// `vendor_extension = 31`.
    #[prost(message, repeated, tag = "31")]
    pub vendor_extension: Vec<NamedAny>,
}

/// `openapi.v2.AdditionalPropertiesItem`: `oneof { schema = 1; boolean = 2 }`.
#[derive(Clone, PartialEq, Message)]
pub struct AdditionalPropertiesItem {
    /// The arm.
    #[prost(oneof = "AdditionalKind", tags = "1, 2")]
    pub oneof: Option<AdditionalKind>,
}

/// The arms of [`AdditionalPropertiesItem`].
#[derive(Clone, PartialEq, prost::Oneof)]
pub enum AdditionalKind {
    /// `schema = 1`.
    #[prost(message, boxed, tag = "1")]
    Schema(Box<Schema>),
    /// `boolean = 2`.
    #[prost(bool, tag = "2")]
    Boolean(bool),
}

/// `openapi.v2.TypeItem`.
#[derive(Clone, PartialEq, Message)]
pub struct TypeItem {
    /// `value = 1`.
    #[prost(string, repeated, tag = "1")]
    pub value: Vec<String>,
}

/// `openapi.v2.ItemsItem`.
#[derive(Clone, PartialEq, Message)]
pub struct ItemsItem {
    /// `schema = 1`.
    #[prost(message, repeated, tag = "1")]
    pub schema: Vec<Schema>,
}

/// `openapi.v2.Properties`.
#[derive(Clone, PartialEq, Message)]
pub struct Properties {
    /// `additional_properties = 1`.
    #[prost(message, repeated, tag = "1")]
    pub additional_properties: Vec<NamedSchema>,
}

fn str_of(v: &Value, k: &str) -> String {
    v.get(k).and_then(Value::as_str).unwrap_or("").to_owned()
}

fn any(v: &Value) -> Any {
    Any {
        yaml: serde_json::to_string(v).unwrap_or_default(),
    }
}

fn extensions(v: &Value) -> Vec<NamedAny> {
    v.as_object()
        .map(|m| {
            m.iter()
                .filter(|(k, _)| k.starts_with("x-"))
                .map(|(k, x)| NamedAny {
                    name: k.clone(),
                    value: Some(any(x)),
                })
                .collect()
        })
        .unwrap_or_default()
}

/// A Swagger 2.0 schema (JSON) as a gnostic `Schema`.
pub fn schema(v: &Value) -> Schema {
    let strings = |k: &str| -> Vec<String> {
        v.get(k)
            .and_then(Value::as_array)
            .map(|a| {
                a.iter()
                    .filter_map(Value::as_str)
                    .map(str::to_owned)
                    .collect()
            })
            .unwrap_or_default()
    };
    let num = |k: &str| v.get(k).and_then(Value::as_f64).unwrap_or(0.0);
    let int = |k: &str| v.get(k).and_then(Value::as_i64).unwrap_or(0);
    let flag = |k: &str| v.get(k).and_then(Value::as_bool).unwrap_or(false);
    Schema {
        r#ref: str_of(v, "$ref"),
        format: str_of(v, "format"),
        title: str_of(v, "title"),
        description: str_of(v, "description"),
        default: v.get("default").map(any),
        multiple_of: num("multipleOf"),
        maximum: num("maximum"),
        exclusive_maximum: flag("exclusiveMaximum"),
        minimum: num("minimum"),
        exclusive_minimum: flag("exclusiveMinimum"),
        max_length: int("maxLength"),
        min_length: int("minLength"),
        pattern: str_of(v, "pattern"),
        max_items: int("maxItems"),
        min_items: int("minItems"),
        unique_items: flag("uniqueItems"),
        max_properties: int("maxProperties"),
        min_properties: int("minProperties"),
        required: strings("required"),
        r#enum: v
            .get("enum")
            .and_then(Value::as_array)
            .map(|a| a.iter().map(any).collect())
            .unwrap_or_default(),
        additional_properties: v.get("additionalProperties").map(|a| {
            Box::new(AdditionalPropertiesItem {
                oneof: Some(match a {
                    Value::Bool(b) => AdditionalKind::Boolean(*b),
                    other => AdditionalKind::Schema(Box::new(schema(other))),
                }),
            })
        }),
        r#type: match v.get("type") {
            Some(Value::String(t)) => Some(TypeItem {
                value: vec![t.clone()],
            }),
            Some(Value::Array(a)) => Some(TypeItem {
                value: a
                    .iter()
                    .filter_map(Value::as_str)
                    .map(str::to_owned)
                    .collect(),
            }),
            _ => None,
        },
        items: v.get("items").map(|i| ItemsItem {
            schema: match i {
                Value::Array(a) => a.iter().map(schema).collect(),
                one => vec![schema(one)],
            },
        }),
        all_of: v
            .get("allOf")
            .and_then(Value::as_array)
            .map(|a| a.iter().map(schema).collect())
            .unwrap_or_default(),
        properties: v
            .get("properties")
            .and_then(Value::as_object)
            .map(|m| Properties {
                additional_properties: m
                    .iter()
                    .map(|(k, p)| NamedSchema {
                        name: k.clone(),
                        value: Some(schema(p)),
                    })
                    .collect(),
            }),
        vendor_extension: extensions(v),
    }
}

fn parameter(p: &Value) -> ParametersItem {
    let location = str_of(p, "in");
    let kind = match location.as_str() {
        "body" => ParameterKind::Body(Box::new(BodyParameter {
            name: str_of(p, "name"),
            r#in: location,
            required: p.get("required").and_then(Value::as_bool).unwrap_or(false),
            schema: p.get("schema").map(schema),
        })),
        "path" => ParameterKind::NonBody(NonBodyParameter {
            oneof: Some(NonBodyKind::Path(PathParameter {
                required: true,
                r#in: location,
                description: str_of(p, "description"),
                name: str_of(p, "name"),
                r#type: str_of(p, "type"),
                unique_items: p
                    .get("uniqueItems")
                    .and_then(Value::as_bool)
                    .unwrap_or(false),
            })),
        }),
        _ => ParameterKind::NonBody(NonBodyParameter {
            oneof: Some(NonBodyKind::Query(QueryParameter {
                required: p.get("required").and_then(Value::as_bool).unwrap_or(false),
                r#in: location,
                description: str_of(p, "description"),
                name: str_of(p, "name"),
                r#type: str_of(p, "type"),
                unique_items: p
                    .get("uniqueItems")
                    .and_then(Value::as_bool)
                    .unwrap_or(false),
            })),
        }),
    };
    ParametersItem {
        parameter: Some(Parameter { oneof: Some(kind) }),
    }
}

fn parameters(v: &Value) -> Vec<ParametersItem> {
    v.get("parameters")
        .and_then(Value::as_array)
        .map(|a| a.iter().map(parameter).collect())
        .unwrap_or_default()
}

fn strings(v: &Value, k: &str) -> Vec<String> {
    v.get(k)
        .and_then(Value::as_array)
        .map(|a| {
            a.iter()
                .filter_map(Value::as_str)
                .map(str::to_owned)
                .collect()
        })
        .unwrap_or_default()
}

fn operation(op: &Value) -> Operation {
    Operation {
        tags: strings(op, "tags"),
        description: str_of(op, "description"),
        operation_id: str_of(op, "operationId"),
        produces: strings(op, "produces"),
        consumes: strings(op, "consumes"),
        parameters: parameters(op),
        responses: op
            .get("responses")
            .and_then(Value::as_object)
            .map(|m| Responses {
                response_code: m
                    .iter()
                    .map(|(code, r)| NamedResponseValue {
                        name: code.clone(),
                        value: Some(ResponseValue {
                            response: Some(Response {
                                description: str_of(r, "description"),
                                schema: r.get("schema").map(|s| SchemaItem {
                                    schema: Some(schema(s)),
                                }),
                            }),
                        }),
                    })
                    .collect(),
            }),
        schemes: strings(op, "schemes"),
        vendor_extension: extensions(op),
    }
}

/// A Swagger 2.0 document (JSON) as gnostic protobuf bytes.
pub fn encode(doc: &Value) -> Vec<u8> {
    let op = |item: &Value, m: &str| item.get(m).map(operation);
    let paths = doc.get("paths").and_then(Value::as_object).map(|m| Paths {
        path: m
            .iter()
            .map(|(p, item)| NamedPathItem {
                name: p.clone(),
                value: Some(PathItem {
                    get: op(item, "get"),
                    put: op(item, "put"),
                    post: op(item, "post"),
                    delete: op(item, "delete"),
                    options: op(item, "options"),
                    head: op(item, "head"),
                    patch: op(item, "patch"),
                    parameters: parameters(item),
                }),
            })
            .collect(),
    });
    let definitions = doc
        .get("definitions")
        .and_then(Value::as_object)
        .map(|m| Definitions {
            additional_properties: m
                .iter()
                .map(|(k, s)| NamedSchema {
                    name: k.clone(),
                    value: Some(schema(s)),
                })
                .collect(),
        });
    Document {
        swagger: str_of(doc, "swagger"),
        info: doc.get("info").map(|i| Info {
            title: str_of(i, "title"),
            version: str_of(i, "version"),
        }),
        paths,
        definitions,
    }
    .encode_to_vec()
}

#[cfg(test)]
mod tests {
    use prost::Message;
    use serde_json::json;

    use super::*;

    /// The value validations of CRD schemas survive the protobuf encoding.
    #[test]
    fn value_validations_are_encoded() {
        let v = json!({"type": "integer", "minimum": 1, "maximum": 10.5, "exclusiveMaximum": true,
            "multipleOf": 2, "pattern": "^a", "maxLength": 3, "minLength": 1, "maxItems": 4,
            "minItems": 2, "uniqueItems": true, "maxProperties": 6, "minProperties": 5,
            "x-kubernetes-validations": [{"rule": "self > 1"}]});
        let s = schema(&v);
        let back = Schema::decode(s.encode_to_vec().as_slice()).unwrap_or_default();
        assert_eq!(
            (back.minimum, back.maximum, back.multiple_of),
            (1.0, 10.5, 2.0)
        );
        assert!(back.exclusive_maximum && !back.exclusive_minimum && back.unique_items);
        assert_eq!(back.pattern, "^a");
        assert_eq!(
            (
                back.max_length,
                back.min_length,
                back.max_items,
                back.min_items
            ),
            (3, 1, 4, 2)
        );
        assert_eq!((back.max_properties, back.min_properties), (6, 5));
        assert_eq!(back.vendor_extension[0].name, "x-kubernetes-validations");
    }
}
