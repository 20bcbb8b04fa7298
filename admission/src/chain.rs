//! The admission chain (upstream `admission/chain.go`).

use std::fmt;
use std::sync::Arc;

use crate::{Attributes, Denial, Mutate, Validate};

/// An ordered list of mutating and validating plugins.
///
/// Contract:
/// - Plugins run in registration order, mutators in [`Chain::admit`] and
///   validators in [`Chain::validate`]; the apiserver calls `admit` before
///   the strategy and `validate` after it, so every validator sees the
///   object as changed by every mutator (and by the strategy).
/// - A plugin whose `handles(attrs.operation)` is false is skipped.
/// - The first [`Denial`] wins: it is returned at once and no later plugin
///   of that phase runs. After a failed `admit` the caller must not call
///   `validate` (the object may be half-mutated) and must store nothing.
/// - An empty chain admits everything.
///
/// A plugin that both mutates and validates is registered in both lists
/// ([`Chain::with_plugin`]). Cloning a chain is cheap and shares the plugins.
#[derive(Clone, Default)]
pub struct Chain {
    mutators: Vec<Arc<dyn Mutate>>,
    validators: Vec<Arc<dyn Validate>>,
}

impl Chain {
    /// An empty chain.
    pub fn new() -> Self {
        Self::default()
    }

    /// Appends a mutating plugin.
    #[must_use]
    pub fn with_mutator(mut self, plugin: Arc<dyn Mutate>) -> Self {
        self.mutators.push(plugin);
        self
    }

    /// Appends a validating plugin.
    #[must_use]
    pub fn with_validator(mut self, plugin: Arc<dyn Validate>) -> Self {
        self.validators.push(plugin);
        self
    }

    /// Appends a plugin that is both: one instance, registered at the end of
    /// the mutators and at the end of the validators.
    #[must_use]
    pub fn with_plugin<P: Mutate + Validate + 'static>(mut self, plugin: Arc<P>) -> Self {
        self.mutators.push(plugin.clone());
        self.validators.push(plugin);
        self
    }

    /// The mutating plugins, in the order they run.
    pub fn mutators(&self) -> &[Arc<dyn Mutate>] {
        &self.mutators
    }

    /// The validating plugins, in the order they run.
    pub fn validators(&self) -> &[Arc<dyn Validate>] {
        &self.validators
    }

    /// Whether the chain has no plugins at all.
    pub fn is_empty(&self) -> bool {
        self.mutators.is_empty() && self.validators.is_empty()
    }

    /// The mutating phase: runs every mutator that handles
    /// `attrs.operation`, in order, each seeing the previous one's changes.
    ///
    /// # Errors
    ///
    /// The first mutator's [`Denial`]; later mutators do not run and
    /// `attrs.object` keeps whatever the earlier ones did.
    pub fn admit(&self, attrs: &mut Attributes) -> Result<(), Denial> {
        for plugin in &self.mutators {
            if plugin.handles(attrs.operation) {
                plugin.admit(attrs)?;
            }
        }
        Ok(())
    }

    /// The validating phase: runs every validator that handles
    /// `attrs.operation`, in order.
    ///
    /// # Errors
    ///
    /// The first validator's [`Denial`]; later validators do not run.
    pub fn validate(&self, attrs: &Attributes) -> Result<(), Denial> {
        for plugin in &self.validators {
            if plugin.handles(attrs.operation) {
                plugin.validate(attrs)?;
            }
        }
        Ok(())
    }
}

impl fmt::Debug for Chain {
    /// `Chain { mutators: ["A", "B"], validators: ["C"] }`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mutators: Vec<&str> = self.mutators.iter().map(|p| p.name()).collect();
        let validators: Vec<&str> = self.validators.iter().map(|p| p.name()).collect();
        f.debug_struct("Chain")
            .field("mutators", &mutators)
            .field("validators", &validators)
            .finish()
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Mutex;

    use serde_json::{Value, json};

    use super::*;
    use crate::{Cause, GroupVersionKind, GroupVersionResource, Operation};

    use Operation::{Connect, Create, Delete, Update};

    const ALL: &[Operation] = &Operation::ALL;

    fn pod(op: Operation) -> Attributes {
        let mut attrs = Attributes::new(
            op,
            GroupVersionResource::new("", "v1", "pods"),
            GroupVersionKind::new("", "v1", "Pod"),
            "web",
        );
        attrs.namespace = Some("default".into());
        attrs.object = Some(json!({"metadata": {"name": "web"}}));
        attrs
    }

    /// Names of the plugins that ran, in order: mutators append to the
    /// object's `trace`, validators (which may not touch the object) to a log.
    type Log = Arc<Mutex<Vec<String>>>;

    fn trace(attrs: &Attributes) -> Vec<String> {
        attrs
            .object
            .as_ref()
            .and_then(|o| o.get("trace"))
            .and_then(Value::as_array)
            .map(|a| {
                a.iter()
                    .filter_map(|v| v.as_str().map(str::to_owned))
                    .collect()
            })
            .unwrap_or_default()
    }

    /// A test plugin: handles `ops`; as a mutator it appends its name to the
    /// object's `trace`, as a validator to `log`; denies if `deny`.
    struct Probe {
        name: &'static str,
        ops: &'static [Operation],
        deny: bool,
        log: Log,
    }

    impl Mutate for Probe {
        fn name(&self) -> &str {
            self.name
        }
        fn handles(&self, op: Operation) -> bool {
            self.ops.contains(&op)
        }
        fn admit(&self, attrs: &mut Attributes) -> Result<(), Denial> {
            if self.deny {
                return Err(Denial::forbidden(self.name, "no"));
            }
            let object = attrs.object.get_or_insert_with(|| json!({}));
            match object.get_mut("trace").and_then(Value::as_array_mut) {
                Some(trace) => trace.push(json!(self.name)),
                None => object["trace"] = json!([self.name]),
            }
            Ok(())
        }
    }

    impl Validate for Probe {
        fn name(&self) -> &str {
            self.name
        }
        fn handles(&self, op: Operation) -> bool {
            self.ops.contains(&op)
        }
        fn validate(&self, _attrs: &Attributes) -> Result<(), Denial> {
            self.log.lock().unwrap().push(self.name.to_owned());
            if self.deny {
                return Err(Denial::forbidden(self.name, "no"));
            }
            Ok(())
        }
    }

    /// `(name, operations handled, denies?)`
    type Spec = (&'static str, &'static [Operation], bool);

    fn probes(specs: &[Spec], log: &Log) -> Vec<Arc<Probe>> {
        specs
            .iter()
            .map(|&(name, ops, deny)| {
                Arc::new(Probe {
                    name,
                    ops,
                    deny,
                    log: log.clone(),
                })
            })
            .collect()
    }

    struct Case {
        what: &'static str,
        plugins: &'static [Spec],
        op: Operation,
        /// Plugins that ran, in order (the denier included).
        ran: &'static [&'static str],
        /// The plugin whose denial is returned, if any.
        denied_by: Option<&'static str>,
    }

    /// The same table drives both phases: ordering, `handles` and
    /// first-denial-wins behave identically for mutators and validators.
    const CASES: &[Case] = &[
        Case {
            what: "empty chain admits",
            plugins: &[],
            op: Create,
            ran: &[],
            denied_by: None,
        },
        Case {
            what: "registration order",
            plugins: &[("c", ALL, false), ("a", ALL, false), ("b", ALL, false)],
            op: Create,
            ran: &["c", "a", "b"],
            denied_by: None,
        },
        Case {
            what: "skip by handles on create",
            plugins: &[
                ("all", ALL, false),
                ("update-only", &[Update], false),
                ("create-delete", &[Create, Delete], false),
                ("none", &[], false),
            ],
            op: Create,
            ran: &["all", "create-delete"],
            denied_by: None,
        },
        Case {
            what: "skip by handles on update",
            plugins: &[
                ("all", ALL, false),
                ("update-only", &[Update], false),
                ("create-delete", &[Create, Delete], false),
            ],
            op: Update,
            ran: &["all", "update-only"],
            denied_by: None,
        },
        Case {
            what: "connect reaches only connect handlers",
            plugins: &[("create", &[Create], false), ("connect", &[Connect], false)],
            op: Connect,
            ran: &["connect"],
            denied_by: None,
        },
        Case {
            what: "denial stops the phase",
            plugins: &[("a", ALL, false), ("x", ALL, true), ("b", ALL, false)],
            op: Create,
            ran: &["a", "x"],
            denied_by: Some("x"),
        },
        Case {
            what: "first denial wins",
            plugins: &[("x", ALL, true), ("y", ALL, true)],
            op: Delete,
            ran: &["x"],
            denied_by: Some("x"),
        },
        Case {
            what: "a denier that does not handle the operation is skipped",
            plugins: &[("x", &[Delete], true), ("a", ALL, false), ("y", ALL, true)],
            op: Update,
            ran: &["a", "y"],
            denied_by: Some("y"),
        },
    ];

    fn expected(case: &Case) -> Result<(), Denial> {
        match case.denied_by {
            Some(plugin) => Err(Denial::forbidden(plugin, "no")),
            None => Ok(()),
        }
    }

    #[test]
    fn admit_table() {
        for case in CASES {
            let log = Log::default();
            let chain = probes(case.plugins, &log)
                .into_iter()
                .fold(Chain::new(), |c, p| c.with_mutator(p));
            let mut attrs = pod(case.op);
            let got = chain.admit(&mut attrs);
            assert_eq!(got, expected(case), "{}", case.what);
            // A denier does not stamp, so the trace holds the others that ran.
            let stamped: Vec<&str> = case
                .ran
                .iter()
                .copied()
                .filter(|n| Some(*n) != case.denied_by)
                .collect();
            assert_eq!(trace(&attrs), stamped, "{}", case.what);
            assert!(
                log.lock().unwrap().is_empty(),
                "{}: no validator ran",
                case.what
            );
        }
    }

    #[test]
    fn validate_table() {
        for case in CASES {
            let log = Log::default();
            let chain = probes(case.plugins, &log)
                .into_iter()
                .fold(Chain::new(), |c, p| c.with_validator(p));
            let attrs = pod(case.op);
            let before = attrs.clone();
            let got = chain.validate(&attrs);
            assert_eq!(got, expected(case), "{}", case.what);
            assert_eq!(*log.lock().unwrap(), case.ran, "{}", case.what);
            assert_eq!(attrs, before, "{}: validation changed nothing", case.what);
        }
    }

    /// Adds `metadata.labels.team` unless present.
    struct DefaultTeam;

    impl Mutate for DefaultTeam {
        fn name(&self) -> &str {
            "DefaultTeam"
        }
        fn admit(&self, attrs: &mut Attributes) -> Result<(), Denial> {
            let Some(object) = attrs.object.as_mut() else {
                return Ok(());
            };
            if object.pointer("/metadata/labels/team").is_none() {
                object["metadata"]["labels"]["team"] = json!("platform");
            }
            Ok(())
        }
    }

    /// Requires `metadata.labels.team`.
    struct RequireTeam;

    impl Validate for RequireTeam {
        fn name(&self) -> &str {
            "RequireTeam"
        }
        fn handles(&self, op: Operation) -> bool {
            matches!(op, Create | Update)
        }
        fn validate(&self, attrs: &Attributes) -> Result<(), Denial> {
            let has_team = attrs
                .object
                .as_ref()
                .and_then(|o| o.pointer("/metadata/labels/team"))
                .is_some();
            if has_team {
                Ok(())
            } else {
                Err(Denial::invalid(
                    &attrs.gvk,
                    attrs.name.clone(),
                    vec![Cause::required("metadata.labels.team", "")],
                ))
            }
        }
    }

    fn team_chain() -> Chain {
        Chain::new()
            .with_validator(Arc::new(RequireTeam))
            .with_mutator(Arc::new(DefaultTeam))
    }

    #[test]
    fn validators_see_the_mutated_object() {
        let chain = team_chain();
        let mut attrs = pod(Create);
        chain.admit(&mut attrs).unwrap();
        assert_eq!(
            attrs.object.as_ref().unwrap()["metadata"]["labels"]["team"],
            "platform"
        );
        chain.validate(&attrs).unwrap();
    }

    #[test]
    fn validate_without_admit_sees_the_raw_object() {
        let err = team_chain().validate(&pod(Update)).unwrap_err();
        assert_eq!(err.code(), 422);
        assert_eq!(
            err.to_string(),
            r#"Pod "web" is invalid: metadata.labels.team: Required value"#
        );
        // Delete is not handled by RequireTeam.
        team_chain().validate(&pod(Delete)).unwrap();
    }

    #[test]
    fn mutators_see_earlier_mutations() {
        // DefaultTeam after a mutator that already set a team keeps it.
        struct SetTeam;
        impl Mutate for SetTeam {
            fn name(&self) -> &str {
                "SetTeam"
            }
            fn admit(&self, attrs: &mut Attributes) -> Result<(), Denial> {
                if let Some(o) = attrs.object.as_mut() {
                    o["metadata"]["labels"]["team"] = json!("storage");
                }
                Ok(())
            }
        }
        let chain = Chain::new()
            .with_mutator(Arc::new(SetTeam))
            .with_mutator(Arc::new(DefaultTeam));
        let mut attrs = pod(Create);
        chain.admit(&mut attrs).unwrap();
        assert_eq!(
            attrs.object.unwrap()["metadata"]["labels"]["team"],
            "storage"
        );
    }

    #[test]
    fn with_plugin_registers_one_instance_in_both_phases() {
        let log = Log::default();
        let probe = Arc::new(Probe {
            name: "both",
            ops: ALL,
            deny: false,
            log: log.clone(),
        });
        let chain = Chain::new()
            .with_mutator(Arc::new(DefaultTeam))
            .with_plugin(probe.clone());
        assert_eq!(Arc::strong_count(&probe), 3);
        assert_eq!(chain.mutators().len(), 2);
        assert_eq!(chain.validators().len(), 1);

        let mut attrs = pod(Create);
        chain.admit(&mut attrs).unwrap();
        chain.validate(&attrs).unwrap();
        assert_eq!(trace(&attrs), ["both"]);
        assert_eq!(*log.lock().unwrap(), ["both"]);
    }

    #[test]
    fn debug_lists_plugin_names_in_order() {
        let chain = team_chain().with_mutator(Arc::new(DefaultTeam));
        assert_eq!(
            format!("{chain:?}"),
            r#"Chain { mutators: ["DefaultTeam", "DefaultTeam"], validators: ["RequireTeam"] }"#
        );
        assert!(!chain.is_empty());
        assert!(Chain::new().is_empty());
        assert_eq!(format!("{:?}", chain.clone()), format!("{chain:?}"));
    }

    #[test]
    fn chain_is_shareable_across_threads() {
        fn assert_send_sync<T: Send + Sync + Clone + 'static>() {}
        assert_send_sync::<Chain>();

        let chain = team_chain();
        let handles: Vec<_> = (0..4)
            .map(|_| {
                let chain = chain.clone();
                std::thread::spawn(move || {
                    let mut attrs = pod(Create);
                    chain
                        .admit(&mut attrs)
                        .and_then(|()| chain.validate(&attrs))
                })
            })
            .collect();
        for h in handles {
            h.join().unwrap().unwrap();
        }
    }
}
