//! networking.k8s.io/v1 Ingress: `printIngress`.
//!
//! CLASS is `spec.ingressClassName` or `<none>`. HOSTS lists up to three
//! non-empty rule hosts (then ` + N more...`, N counting all rules past
//! the third), or `*`. ADDRESS is the sorted load-balancer ingress points.
//! PORTS is `80, 443` with any TLS section, else `80`.

use serde_json::Value;
use time::OffsetDateTime;

use super::super::column::Column;
use super::super::fields;
use super::super::printer::{Printer, no_conditions};
use super::load_balancer_ingress;

pub(crate) static INGRESS: Printer = Printer {
    columns: &COLUMNS,
    cells,
    conditions: no_conditions,
    empty_rows_are_null: false,
};

static COLUMNS: [Column; 6] = [
    Column::name(),
    Column::string(
        "Class",
        "The name of the IngressClass resource that should be used for additional configuration",
    ),
    Column::string(
        "Hosts",
        "Hosts that incoming requests are matched against before the ingress rule",
    ),
    Column::string(
        "Address",
        "Address is a list containing ingress points for the load-balancer",
    ),
    Column::string("Ports", "Ports of TLS configurations that open"),
    Column::age(),
];

fn cells(ing: &Value, now: OffsetDateTime) -> Vec<Value> {
    let ports = if fields::items_at(ing, &["spec", "tls"]).is_empty() {
        "80"
    } else {
        "80, 443"
    };
    vec![
        fields::name(ing).into(),
        fields::opt_str_at(ing, &["spec", "ingressClassName"])
            .unwrap_or("<none>")
            .into(),
        hosts(ing).into(),
        load_balancer_ingress(ing, &["status", "loadBalancer", "ingress"]).into(),
        ports.into(),
        fields::age(ing, now).into(),
    ]
}

/// `formatHosts`.
fn hosts(ing: &Value) -> String {
    const MAX: usize = 3;
    let rules = fields::items_at(ing, &["spec", "rules"]);
    let mut list: Vec<&str> = Vec::new();
    let mut more = false;
    for rule in rules {
        if list.len() == MAX {
            more = true;
        }
        let host = fields::str_at(rule, &["host"]);
        if !more && !host.is_empty() {
            list.push(host);
        }
    }
    if list.is_empty() {
        return "*".to_owned();
    }
    let joined = list.join(",");
    if more {
        format!("{joined} + {} more...", rules.len().saturating_sub(MAX))
    } else {
        joined
    }
}
