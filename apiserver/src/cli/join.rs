//! `skein join` and `skein unjoin`.

use crate::config::{JoinArgs, UnjoinArgs};

/// `skein join`: not built yet.
///
/// # Errors
///
/// Always, for now.
pub async fn run(args: JoinArgs) -> anyhow::Result<()> {
    anyhow::bail!("skein join {}: not implemented yet", args.name)
}

/// `skein unjoin`: not built yet.
///
/// # Errors
///
/// Always, for now.
pub async fn unjoin(args: UnjoinArgs) -> anyhow::Result<()> {
    anyhow::bail!("skein unjoin {}: not implemented yet", args.name)
}
