//! Service: `printService`.
//!
//! CLUSTER-IP is the first of `spec.clusterIPs` (or `spec.clusterIP`), or
//! `<none>`. EXTERNAL-IP depends on the type: ClusterIP/NodePort show
//! `spec.externalIPs` or `<none>`; LoadBalancer shows the load-balancer
//! ingress points followed by `spec.externalIPs`, or `<pending>`;
//! ExternalName shows `spec.externalName`; any other type `<unknown>`.
//! PORT(S) is `port[:nodePort]/protocol`, comma-joined, or `<none>`.

use serde_json::Value;
use time::OffsetDateTime;

use super::super::column::Column;
use super::super::descriptions as doc;
use super::super::printer::{Printer, no_conditions};
use super::super::{fields, labels};
use super::load_balancer_ingress;

pub(crate) static SERVICE: Printer = Printer {
    columns: &COLUMNS,
    cells,
    conditions: no_conditions,
    empty_rows_are_null: false,
};

static COLUMNS: [Column; 7] = [
    Column::name(),
    Column::string("Type", doc::SERVICE_SPEC_TYPE),
    Column::string("Cluster-IP", doc::SERVICE_SPEC_CLUSTER_IP),
    Column::string("External-IP", doc::SERVICE_SPEC_EXTERNAL_IPS),
    Column::string("Port(s)", doc::SERVICE_SPEC_PORTS),
    Column::age(),
    Column::string("Selector", doc::SERVICE_SPEC_SELECTOR).wide(),
];

fn cells(svc: &Value, now: OffsetDateTime) -> Vec<Value> {
    let spec = fields::child(svc, &["spec"]);
    // v1 defaulting copies clusterIP into an empty clusterIPs.
    let cluster_ip = match fields::items_at(spec, &["clusterIPs"]).first() {
        Some(ip) => ip.as_str().unwrap_or("").to_owned(),
        None => match fields::str_at(spec, &["clusterIP"]) {
            "" => "<none>".to_owned(),
            ip => ip.to_owned(),
        },
    };
    let ports: Vec<String> = fields::items_at(spec, &["ports"])
        .iter()
        .map(|p| {
            let port = fields::int_at(p, &["port"]);
            let node_port = fields::int_at(p, &["nodePort"]);
            let protocol = fields::str_at(p, &["protocol"]);
            if node_port > 0 {
                format!("{port}:{node_port}/{protocol}")
            } else {
                format!("{port}/{protocol}")
            }
        })
        .collect();
    let ports = if ports.is_empty() {
        "<none>".to_owned()
    } else {
        ports.join(",")
    };
    vec![
        fields::name(svc).into(),
        fields::str_at(spec, &["type"]).into(),
        cluster_ip.into(),
        external_ip(svc).into(),
        ports.into(),
        fields::age(svc, now).into(),
        labels::format_labels(fields::at(spec, &["selector"])).into(),
    ]
}

/// `getServiceExternalIP` in its wide form.
fn external_ip(svc: &Value) -> String {
    let external: Vec<&str> = fields::items_at(svc, &["spec", "externalIPs"])
        .iter()
        .map(|ip| ip.as_str().unwrap_or(""))
        .collect();
    match fields::str_at(svc, &["spec", "type"]) {
        "ClusterIP" | "NodePort" => {
            if external.is_empty() {
                "<none>".to_owned()
            } else {
                external.join(",")
            }
        }
        "LoadBalancer" => {
            let lb = load_balancer_ingress(svc, &["status", "loadBalancer", "ingress"]);
            if !external.is_empty() {
                let mut all: Vec<&str> = Vec::new();
                if !lb.is_empty() {
                    all.extend(lb.split(','));
                }
                all.extend(external);
                all.join(",")
            } else if !lb.is_empty() {
                lb
            } else {
                "<pending>".to_owned()
            }
        }
        "ExternalName" => fields::str_at(svc, &["spec", "externalName"]).to_owned(),
        _ => "<unknown>".to_owned(),
    }
}
