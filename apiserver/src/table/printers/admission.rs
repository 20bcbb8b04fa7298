//! admissionregistration.k8s.io: MutatingWebhookConfiguration,
//! ValidatingWebhookConfiguration, ValidatingAdmissionPolicy,
//! ValidatingAdmissionPolicyBinding (`printMutatingWebhook`,
//! `printValidatingWebhook`, `printValidatingAdmissionPolicy`,
//! `printValidatingAdmissionPolicyBinding`).
//!
//! PARAMKIND is `<apiVersion>/<kind>` or `<unset>`. PARAMREF is
//! `<namespace>/<name>` (`*/<name>` without a namespace), else the
//! selector in Go's generated `LabelSelector.String()` form, else `<unset>`.

use serde_json::Value;
use time::OffsetDateTime;

use super::super::column::Column;
use super::super::fields;
use super::super::printer::Printer;
use super::kind_printer;

const WEBHOOKS: &str = "Webhooks indicates the number of webhooks registered in this configuration";

pub(crate) static MUTATING_WEBHOOK_CONFIGURATION: Printer =
    kind_printer(&WEBHOOK_COLUMNS, webhook_configuration);
pub(crate) static VALIDATING_WEBHOOK_CONFIGURATION: Printer =
    kind_printer(&WEBHOOK_COLUMNS, webhook_configuration);
static WEBHOOK_COLUMNS: [Column; 3] = [
    Column::name(),
    Column::integer("Webhooks", WEBHOOKS),
    Column::age(),
];

/// Name, number of `webhooks`, age.
fn webhook_configuration(config: &Value, now: OffsetDateTime) -> Vec<Value> {
    vec![
        fields::name(config).into(),
        fields::len_at(config, &["webhooks"]).into(),
        fields::age(config, now).into(),
    ]
}

pub(crate) static VALIDATING_ADMISSION_POLICY: Printer =
    kind_printer(&POLICY_COLUMNS, validating_admission_policy);
static POLICY_COLUMNS: [Column; 4] = [
    Column::name(),
    Column::integer(
        "Validations",
        "Validations indicates the number of validation rules defined in this configuration",
    ),
    Column::string(
        "ParamKind",
        "ParamKind specifies the kind of resources used to parameterize this policy",
    ),
    Column::age(),
];

/// Name, number of `spec.validations`, param kind, age.
fn validating_admission_policy(policy: &Value, now: OffsetDateTime) -> Vec<Value> {
    let param_kind = if fields::is_set(policy, &["spec", "paramKind"]) {
        format!(
            "{}/{}",
            fields::str_at(policy, &["spec", "paramKind", "apiVersion"]),
            fields::str_at(policy, &["spec", "paramKind", "kind"])
        )
    } else {
        "<unset>".to_owned()
    };
    vec![
        fields::name(policy).into(),
        fields::len_at(policy, &["spec", "validations"]).into(),
        param_kind.into(),
        fields::age(policy, now).into(),
    ]
}

pub(crate) static VALIDATING_ADMISSION_POLICY_BINDING: Printer =
    kind_printer(&BINDING_COLUMNS, validating_admission_policy_binding);
static BINDING_COLUMNS: [Column; 4] = [
    Column::name(),
    Column::string(
        "PolicyName",
        "PolicyName indicates the policy definition which the policy binding binded to",
    ),
    Column::string(
        "ParamRef",
        "ParamRef indicates the param resource which sets the configration param",
    ),
    Column::age(),
];

/// Name, `spec.policyName`, param reference, age.
fn validating_admission_policy_binding(binding: &Value, now: OffsetDateTime) -> Vec<Value> {
    let param = match fields::at(binding, &["spec", "paramRef"]) {
        None => "<unset>".to_owned(),
        Some(p) => {
            let name = fields::str_at(p, &["name"]);
            let namespace = fields::str_at(p, &["namespace"]);
            if !name.is_empty() {
                if namespace.is_empty() {
                    format!("*/{name}")
                } else {
                    format!("{namespace}/{name}")
                }
            } else if let Some(selector) = fields::at(p, &["selector"]) {
                go_label_selector(selector)
            } else {
                "<unset>".to_owned()
            }
        }
    };
    vec![
        fields::name(binding).into(),
        fields::str_at(binding, &["spec", "policyName"]).into(),
        param.into(),
        fields::age(binding, now).into(),
    ]
}

/// The gogo-protobuf generated `(*metav1.LabelSelector).String()`:
/// `&LabelSelector{MatchLabels:map[string]string{k: v,},MatchExpressions:[]LabelSelectorRequirement{LabelSelectorRequirement{Key:k,Operator:In,Values:[a b],},},}`.
fn go_label_selector(selector: &Value) -> String {
    let mut labels: Vec<(&String, &str)> = fields::at(selector, &["matchLabels"])
        .and_then(Value::as_object)
        .map(|m| {
            m.iter()
                .map(|(k, v)| (k, v.as_str().unwrap_or("")))
                .collect()
        })
        .unwrap_or_default();
    labels.sort_unstable();
    let mut out = String::from("&LabelSelector{MatchLabels:map[string]string{");
    for (key, value) in labels {
        out.push_str(&format!("{key}: {value},"));
    }
    out.push_str("},MatchExpressions:[]LabelSelectorRequirement{");
    for expr in fields::items_at(selector, &["matchExpressions"]) {
        let values: Vec<&str> = fields::items_at(expr, &["values"])
            .iter()
            .map(|v| v.as_str().unwrap_or(""))
            .collect();
        out.push_str(&format!(
            "LabelSelectorRequirement{{Key:{},Operator:{},Values:[{}],}},",
            fields::str_at(expr, &["key"]),
            fields::str_at(expr, &["operator"]),
            values.join(" ")
        ));
    }
    out.push_str("},}");
    out
}
