//! Table output (`as=Table;v=v1;g=meta.k8s.io`): printer columns per kind.
