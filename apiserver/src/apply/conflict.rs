//! Apply conflicts and their messages.
//!
//! Follows `k8s.io/apimachinery/pkg/util/managedfields/internal/conflict.go`
//! (`NewConflictError`, `getConflictMessage`, `printManager`) and
//! `sigs.k8s.io/structured-merge-diff/merge/conflict.go`.

use super::fieldpath::go_quote;
use super::managers::{ManagerId, Operation};

/// A field another manager owns with a different value.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Conflict {
    /// The owning manager's name.
    pub manager: String,
    /// Its operation.
    pub operation: Operation,
    /// Its apiVersion (Update managers only, as upstream prints them).
    pub api_version: Option<String>,
    /// Its subresource, if any.
    pub subresource: Option<String>,
    /// The field, printed as upstream prints paths
    /// (`.spec.template.spec.containers[name="app"].image`).
    pub field: String,
}

impl Conflict {
    pub(crate) fn new(id: &ManagerId, field: String) -> Self {
        Self {
            manager: id.manager.clone(),
            operation: id.operation,
            api_version: (id.operation == Operation::Update).then(|| id.api_version.clone()),
            subresource: (!id.subresource.is_empty()).then(|| id.subresource.clone()),
            field,
        }
    }

    /// The manager as upstream prints it: `"kubectl"`,
    /// `"kube-controller-manager" with subresource "status" using apps/v1`.
    pub fn manager_display(&self) -> String {
        let mut out = go_quote(&self.manager);
        if let Some(sub) = &self.subresource {
            out.push_str(&format!(" with subresource {}", go_quote(sub)));
        }
        if self.operation == Operation::Update {
            out.push_str(&format!(
                " using {}",
                self.api_version.as_deref().unwrap_or("")
            ));
        }
        out
    }

    /// The per-field cause message (`type: FieldManagerConflict`).
    pub fn cause_message(&self) -> String {
        format!("conflict with {}", self.manager_display())
    }

    fn sort_key(&self) -> String {
        ManagerId {
            manager: self.manager.clone(),
            operation: self.operation,
            api_version: self.api_version.clone().unwrap_or_default(),
            subresource: self.subresource.clone().unwrap_or_default(),
        }
        .key()
    }
}

/// The 409 message: `Apply failed with 1 conflict: conflict with "m" using
/// apps/v1: .spec.replicas`, or for several, one `conflicts with "m":`
/// block per manager (sorted) listing `- <path>` lines.
pub fn conflict_message(conflicts: &[Conflict]) -> String {
    if let [c] = conflicts {
        return format!(
            "Apply failed with 1 conflict: conflict with {}: {}",
            c.manager_display(),
            c.field
        );
    }
    let mut managers: Vec<(String, String)> = conflicts
        .iter()
        .map(|c| (c.sort_key(), c.manager_display()))
        .collect();
    managers.sort();
    managers.dedup();
    let mut lines = Vec::new();
    for (key, display) in &managers {
        lines.push(format!("conflicts with {display}:"));
        for c in conflicts.iter().filter(|c| &c.sort_key() == key) {
            lines.push(format!("- {}", c.field));
        }
    }
    format!(
        "Apply failed with {} conflicts: {}",
        conflicts.len(),
        lines.join("\n")
    )
}

/// Sorts conflicts by manager identity, then as the manager's set
/// iterates (the order the paths were produced in is kept).
pub(crate) fn sort(conflicts: &mut [Conflict]) {
    conflicts.sort_by_key(Conflict::sort_key);
}

#[cfg(test)]
mod tests {
    use super::*;

    fn c(manager: &str, op: Operation, field: &str) -> Conflict {
        Conflict::new(
            &ManagerId::new(manager, op, "apps/v1", ""),
            field.to_owned(),
        )
    }

    #[test]
    fn single_conflict_message() {
        let one = c(
            "kubectl-client-side-apply",
            Operation::Update,
            ".spec.replicas",
        );
        assert_eq!(
            conflict_message(std::slice::from_ref(&one)),
            "Apply failed with 1 conflict: conflict with \"kubectl-client-side-apply\" using apps/v1: .spec.replicas"
        );
        assert_eq!(
            one.cause_message(),
            "conflict with \"kubectl-client-side-apply\" using apps/v1"
        );
    }

    #[test]
    fn several_conflicts_group_by_manager() {
        let list = vec![
            c("kubectl", Operation::Apply, ".spec.replicas"),
            c("helm", Operation::Apply, ".spec.paused"),
            c("helm", Operation::Apply, ".spec.replicas"),
        ];
        assert_eq!(
            conflict_message(&list),
            "Apply failed with 3 conflicts: conflicts with \"helm\":\n- .spec.paused\n- .spec.replicas\nconflicts with \"kubectl\":\n- .spec.replicas"
        );
        let sub = Conflict::new(
            &ManagerId::new("kcm", Operation::Update, "apps/v1", "status"),
            ".status.replicas".into(),
        );
        assert_eq!(
            sub.cause_message(),
            "conflict with \"kcm\" with subresource \"status\" using apps/v1"
        );
    }
}
