//! stub

use super::Sim;

/// Runs the controller.
pub async fn run(_sim: Sim) {}
