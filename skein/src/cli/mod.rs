//! The client-side subcommands of `skein` (everything but `serve`): they
//! talk to a running federation through its API with the `kube` client,
//! like any other client would.

pub mod federation;
pub mod join;
pub mod kubeconfig;
pub mod labels;
pub mod member;
pub mod member_kubeconfig;
pub mod report;
pub mod storage;
