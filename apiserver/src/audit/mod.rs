//! Auditing (`--audit-log-path`, `--audit-policy-file`,
//! `--audit-log-maxsize`/`-maxbackup`/`-maxage`): `audit.k8s.io/v1` Event
//! JSON lines per stage, as kube-apiserver's log backend writes them.
//!
//! - `policy.rs`: the Policy file and its first-match evaluation.
//! - `http/audit.rs` (in the HTTP layer, which this module never
//!   imports): the layers that build events (outside and inside
//!   authentication, so 401s are recorded).
//! - `sink.rs`: the buffered writer thread and lumberjack rotation.
//!
//! As upstream, a log path without a policy file records nothing (with a
//! warning at start).

pub mod policy;
pub mod sink;

use std::path::PathBuf;
use std::sync::Arc;

pub use policy::{Level, Policy};
pub use sink::{Rotation, Sink};

/// The policy and where events go; an `Arc<Auditor>` extension on the
/// router turns auditing on.
pub struct Auditor {
    /// The policy.
    pub policy: Policy,
    sink: Sink,
}

/// The audit flags.
#[derive(Clone, Debug, Default)]
pub struct AuditOptions {
    /// `--audit-log-path` (`-` is stdout).
    pub log_path: Option<PathBuf>,
    /// `--audit-policy-file`.
    pub policy_file: Option<PathBuf>,
    /// Rotation.
    pub rotation: Rotation,
}

impl Auditor {
    /// Builds the auditor from the flags; `Ok(None)` when auditing is off.
    /// The error is the startup message.
    pub fn from_options(o: &AuditOptions) -> Result<Option<Arc<Auditor>>, String> {
        let Some(path) = &o.log_path else {
            return Ok(None);
        };
        let Some(policy_file) = &o.policy_file else {
            tracing::warn!(
                "--audit-log-path without --audit-policy-file: no audit events will be recorded"
            );
            return Ok(None);
        };
        let text = std::fs::read_to_string(policy_file).map_err(|e| {
            format!(
                "loading audit policy file: failed to read file path {:?}: {e}",
                policy_file.display().to_string()
            )
        })?;
        let policy = Policy::parse(&text).map_err(|e| {
            format!(
                "loading audit policy file: failed decoding file {:?}: {e}",
                policy_file.display().to_string()
            )
        })?;
        let sink = Sink::open(path, o.rotation.clone())
            .map_err(|e| format!("cannot open the audit log {}: {e}", path.display()))?;
        Ok(Some(Arc::new(Auditor { policy, sink })))
    }

    /// Writes one event, a JSON line without its newline (waits only
    /// while the writer's queue is full).
    pub async fn write(&self, line: Vec<u8>) {
        self.sink.send(line).await;
    }

    /// Writes one event from a synchronous context (a body's end): queued
    /// at once, or handed to a task while the queue is full.
    pub fn write_nowait(&self, line: Vec<u8>) {
        let sink = self.sink.clone();
        match tokio::runtime::Handle::try_current() {
            Ok(handle) => {
                handle.spawn(async move { sink.send(line).await });
            }
            Err(_) => tracing::warn!("audit event after the runtime stopped; lost"),
        }
    }
}
