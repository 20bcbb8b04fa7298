//! The Deployment controller's decisions, as kube-controller-manager's
//! `pkg/controller/deployment`: rollout arithmetic ([`plan`]) and
//! revisions ([`revision`]).

pub mod plan;
pub mod revision;
