//! Keeps an instance's [`FlowControl`](super::FlowControl) current: the
//! FlowSchemas and PriorityLevelConfigurations come from the shared
//! informers, every change recompiles the configuration, a deleted
//! mandatory object is recreated, and every second the levels' current
//! seats are rebalanced from their demand ([`super::borrowing`]).
//!
//! Upstream's controller also writes FlowSchema status conditions
//! (`Dangling` when the named level does not exist); Skein does not: a
//! dangling schema is skipped when classifying, as upstream.

use std::time::Duration;

use tokio::sync::broadcast::error::RecvError;

use super::defaults::{self, GROUP};
use crate::controllers::informer::{Informer, Notice};
use crate::registry::{Registry, object};

/// How often seats are rebalanced.
pub const REBALANCE_PERIOD: Duration = Duration::from_secs(1);

/// Runs until the runtime shuts down.
pub async fn run(registry: Registry) {
    let instance = registry.instance().clone();
    let fc = instance.flowcontrol();
    let (Some(fs_res), Some(pl_res)) = (
        registry.resources().find(GROUP, "v1", "flowschemas"),
        registry
            .resources()
            .find(GROUP, "v1", "prioritylevelconfigurations"),
    ) else {
        tracing::warn!(
            "flowcontrol resources are not served; API priority and fairness uses its defaults"
        );
        return;
    };
    let schemas = Informer::start(&registry, fs_res);
    let levels = Informer::start(&registry, pl_res);
    let mut fs_notices = schemas.subscribe();
    let mut pl_notices = levels.subscribe();
    schemas.synced().await;
    levels.synced().await;
    let mut tick = tokio::time::interval(REBALANCE_PERIOD);
    let mut dirty = true;
    loop {
        if dirty {
            fc.configure(&schemas.list(|_| true), &levels.list(|_| true));
            dirty = false;
        }
        let notice = tokio::select! {
            n = fs_notices.recv() => n,
            n = pl_notices.recv() => n,
            _ = tick.tick() => {
                fc.rebalance();
                continue;
            }
        };
        match notice {
            Ok(Notice::Deleted(obj)) => {
                let name = object::name(&obj);
                if (name == defaults::EXEMPT || name == defaults::CATCH_ALL)
                    && let Err(e) = defaults::ensure(&registry, true).await
                {
                    tracing::warn!(error = %e, "recreating the mandatory flowcontrol objects failed");
                }
                dirty = true;
            }
            Ok(_) | Err(RecvError::Lagged(_)) => dirty = true,
            Err(RecvError::Closed) => return,
        }
    }
}
