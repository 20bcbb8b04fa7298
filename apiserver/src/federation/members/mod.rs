//! Member clusters: how the federation reaches them (credentials), whether
//! they are healthy, what they hold (inventory), and the `clusters/proxy`
//! subresource.

pub mod credentials;

use crate::config::MemberConfig;
use crate::registry::Registry;

/// Starts the member-cluster controllers.
pub fn spawn_all(_registry: &Registry, _config: &MemberConfig) {}
