//! networking.k8s.io: Ingress, IngressClass, NetworkPolicy, ServiceCIDR,
//! IPAddress (`printIngress`, `printIngressClass`, `printNetworkPolicy`,
//! `printServiceCIDR`, `printIPAddress`).
//!
//! Ingress: CLASS is `spec.ingressClassName` or `<none>`. HOSTS lists up to three
//! non-empty rule hosts (then ` + N more...`, N counting all rules past
//! the third), or `*`. ADDRESS is the sorted load-balancer ingress points.
//! PORTS is `80, 443` with any TLS section, else `80`.

use serde_json::Value;
use time::OffsetDateTime;

use super::super::column::Column;
use super::super::descriptions as doc;
use super::super::printer::{Printer, no_conditions};
use super::super::{fields, labels};
use super::{kind_printer, load_balancer_ingress};

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

pub(crate) static INGRESS_CLASS: Printer = kind_printer(&INGRESS_CLASS_COLUMNS, ingress_class);
static INGRESS_CLASS_COLUMNS: [Column; 4] = [
    Column::name(),
    Column::string(
        "Controller",
        "Controller that is responsible for handling this class",
    ),
    Column::string(
        "Parameters",
        "A reference to a resource with additional parameters",
    ),
    Column::age(),
];

/// Name, `spec.controller`, parameters as `Kind[.apiGroup]/name` (`<none>`
/// without them), age.
fn ingress_class(class: &Value, now: OffsetDateTime) -> Vec<Value> {
    let parameters = if fields::is_set(class, &["spec", "parameters"]) {
        let p = fields::child(class, &["spec", "parameters"]);
        let mut text = fields::str_at(p, &["kind"]).to_owned();
        if let Some(group) = fields::opt_str_at(p, &["apiGroup"]) {
            text.push('.');
            text.push_str(group);
        }
        text.push('/');
        text.push_str(fields::str_at(p, &["name"]));
        text
    } else {
        "<none>".to_owned()
    };
    vec![
        fields::name(class).into(),
        fields::str_at(class, &["spec", "controller"]).into(),
        parameters.into(),
        fields::age(class, now).into(),
    ]
}

pub(crate) static NETWORK_POLICY: Printer = kind_printer(&NETWORK_POLICY_COLUMNS, network_policy);
static NETWORK_POLICY_COLUMNS: [Column; 3] = [
    Column::name(),
    Column::string("Pod-Selector", doc::EXT_NETWORK_POLICY_SPEC_POD_SELECTOR),
    Column::age(),
];

/// Name, `metav1.FormatLabelSelector(spec.podSelector)` (`<none>` for the
/// empty selector that selects every pod), age.
fn network_policy(np: &Value, now: OffsetDateTime) -> Vec<Value> {
    vec![
        fields::name(np).into(),
        labels::format_label_selector(Some(fields::child(np, &["spec", "podSelector"]))).into(),
        fields::age(np, now).into(),
    ]
}

pub(crate) static SERVICE_CIDR: Printer = kind_printer(&SERVICE_CIDR_COLUMNS, service_cidr);
static SERVICE_CIDR_COLUMNS: [Column; 3] = [
    Column::name(),
    Column::string("CIDRs", doc::SERVICE_CIDR_SPEC_CIDRS),
    Column::age(),
];

/// Name, `spec.cidrs` comma-joined, age.
fn service_cidr(cidr: &Value, now: OffsetDateTime) -> Vec<Value> {
    let cidrs: Vec<&str> = fields::items_at(cidr, &["spec", "cidrs"])
        .iter()
        .map(|c| c.as_str().unwrap_or(""))
        .collect();
    vec![
        fields::name(cidr).into(),
        cidrs.join(",").into(),
        fields::age(cidr, now).into(),
    ]
}

/// IPAddress rows carry three cells for two columns: upstream's
/// `printIPAddress` appends the age, but its column list has no Age column.
/// kubectl prints the two defined columns.
pub(crate) static IP_ADDRESS: Printer = kind_printer(&IP_ADDRESS_COLUMNS, ip_address);
static IP_ADDRESS_COLUMNS: [Column; 2] = [
    Column::name(),
    Column::string("ParentRef", doc::IP_ADDRESS_SPEC_PARENT_REF),
];

/// Name, the parent as `resource[.group][/namespace]/name` lowercased
/// (`services/default/kubernetes`; `<none>` without one), age.
fn ip_address(ip: &Value, now: OffsetDateTime) -> Vec<Value> {
    let parent = if fields::is_set(ip, &["spec", "parentRef"]) {
        let p = fields::child(ip, &["spec", "parentRef"]);
        let resource = fields::str_at(p, &["resource"]);
        let mut text = match fields::str_at(p, &["group"]) {
            "" => resource.to_lowercase(),
            group => format!("{resource}.{group}").to_lowercase(),
        };
        let namespace = fields::str_at(p, &["namespace"]);
        if !namespace.is_empty() {
            text.push('/');
            text.push_str(namespace);
        }
        text.push('/');
        text.push_str(fields::str_at(p, &["name"]));
        text
    } else {
        "<none>".to_owned()
    };
    vec![
        fields::name(ip).into(),
        parent.into(),
        fields::age(ip, now).into(),
    ]
}
