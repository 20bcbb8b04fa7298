//! certificates.k8s.io CertificateSigningRequest:
//! `printCertificateSigningRequest`.
//!
//! SIGNERNAME is `<none>` when empty; REQUESTOR is `spec.username`;
//! REQUESTEDDURATION is `spec.expirationSeconds` as a human duration
//! (`1h`, `<none>` when unset); CONDITION is `Denied`, else `Approved`, else
//! `Pending`, then `,Failed` for a Failed condition and `,Issued` once
//! `status.certificate` is set.

use serde_json::Value;
use time::OffsetDateTime;

use super::super::column::Column;
use super::super::descriptions as doc;
use super::super::printer::Printer;
use super::super::{age, fields};
use super::kind_printer;

pub(crate) static CERTIFICATE_SIGNING_REQUEST: Printer = kind_printer(&COLUMNS, cells);
static COLUMNS: [Column; 6] = [
    Column::name(),
    Column::age(),
    Column::string("SignerName", doc::CSR_SPEC_SIGNER_NAME),
    Column::string("Requestor", doc::CSR_SPEC_REQUEST),
    Column::string("RequestedDuration", doc::CSR_SPEC_EXPIRATION_SECONDS),
    Column::string("Condition", doc::CSR_STATUS_CONDITIONS),
];

const NANOS_PER_SECOND: i64 = 1_000_000_000;

fn cells(csr: &Value, now: OffsetDateTime) -> Vec<Value> {
    let signer = match fields::str_at(csr, &["spec", "signerName"]) {
        "" => "<none>",
        s => s,
    };
    let duration = fields::opt_int_at(csr, &["spec", "expirationSeconds"]).map_or_else(
        || "<none>".to_owned(),
        |s| age::human_duration(s.saturating_mul(NANOS_PER_SECOND)),
    );
    vec![
        fields::name(csr).into(),
        fields::age(csr, now).into(),
        signer.into(),
        fields::str_at(csr, &["spec", "username"]).into(),
        duration.into(),
        condition(csr).into(),
    ]
}

/// `extractCSRStatus`.
fn condition(csr: &Value) -> String {
    let types: Vec<&str> = fields::items_at(csr, &["status", "conditions"])
        .iter()
        .map(|c| fields::str_at(c, &["type"]))
        .collect();
    let mut status = if types.contains(&"Denied") {
        "Denied".to_owned()
    } else if types.contains(&"Approved") {
        "Approved".to_owned()
    } else {
        "Pending".to_owned()
    };
    if types.contains(&"Failed") {
        status.push_str(",Failed");
    }
    if !fields::str_at(csr, &["status", "certificate"]).is_empty() {
        status.push_str(",Issued");
    }
    status
}
