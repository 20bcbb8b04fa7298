//! rbac.authorization.k8s.io/v1 RoleBinding and ClusterRoleBinding
//! (`printRoleBinding`, `printClusterRoleBinding`).
//!
//! ROLE is `<kind>/<name>` of the roleRef. The wide columns list the
//! subjects by kind — users, groups, and service accounts as
//! `<namespace>/<name>` — each joined with `, `. Role and ClusterRole have
//! no printer upstream and use the default table (Name, Created At).

use serde_json::Value;
use time::OffsetDateTime;

use super::super::column::Column;
use super::super::descriptions as doc;
use super::super::fields;
use super::super::printer::{Printer, no_conditions};

pub(crate) static ROLE_BINDING: Printer = Printer {
    columns: &ROLE_BINDING_COLUMNS,
    cells,
    conditions: no_conditions,
    empty_rows_are_null: false,
};

static ROLE_BINDING_COLUMNS: [Column; 6] = [
    Column::name(),
    Column::string("Role", doc::RBAC_ROLE_BINDING_ROLE_REF),
    Column::age(),
    Column::string("Users", "Users in the roleBinding").wide(),
    Column::string("Groups", "Groups in the roleBinding").wide(),
    Column::string("ServiceAccounts", "ServiceAccounts in the roleBinding").wide(),
];

pub(crate) static CLUSTER_ROLE_BINDING: Printer = Printer {
    columns: &CLUSTER_ROLE_BINDING_COLUMNS,
    cells,
    conditions: no_conditions,
    empty_rows_are_null: false,
};

static CLUSTER_ROLE_BINDING_COLUMNS: [Column; 6] = [
    Column::name(),
    Column::string("Role", doc::RBAC_CLUSTER_ROLE_BINDING_ROLE_REF),
    Column::age(),
    Column::string("Users", "Users in the clusterRoleBinding").wide(),
    Column::string("Groups", "Groups in the clusterRoleBinding").wide(),
    Column::string(
        "ServiceAccounts",
        "ServiceAccounts in the clusterRoleBinding",
    )
    .wide(),
];

fn cells(binding: &Value, now: OffsetDateTime) -> Vec<Value> {
    let role = format!(
        "{}/{}",
        fields::str_at(binding, &["roleRef", "kind"]),
        fields::str_at(binding, &["roleRef", "name"])
    );
    let (mut users, mut groups, mut sas) = (Vec::new(), Vec::new(), Vec::new());
    for subject in fields::items_at(binding, &["subjects"]) {
        let name = fields::str_at(subject, &["name"]);
        match fields::str_at(subject, &["kind"]) {
            "ServiceAccount" => {
                let namespace = fields::str_at(subject, &["namespace"]);
                sas.push(format!("{namespace}/{name}"));
            }
            "User" => users.push(name.to_owned()),
            "Group" => groups.push(name.to_owned()),
            _ => {}
        }
    }
    vec![
        fields::name(binding).into(),
        role.into(),
        fields::age(binding, now).into(),
        users.join(", ").into(),
        groups.join(", ").into(),
        sas.join(", ").into(),
    ]
}
