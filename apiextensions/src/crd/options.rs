//! Which rules apply (upstream `validationOptions`): all of them on create;
//! on update some are relaxed when the stored CRD already breaks them, so
//! a CRD accepted by an older server stays updatable ("ratcheting").

/// The switches of one validation run.
#[derive(Debug, Clone)]
pub(crate) struct Options {
    /// `default` may appear in schemas.
    pub allow_defaults: bool,
    /// Webhook conversion must name a ConversionReview version this server knows.
    pub require_recognized_conversion_review_version: bool,
    /// `scope` and `names.kind` may not change (the CRD is established).
    pub require_immutable_names: bool,
    /// Every version needs an `openAPIV3Schema`.
    pub require_open_api_schema: bool,
    /// `type` must be an OpenAPI v3 type.
    pub require_valid_property_type: bool,
    /// Schemas must be structural.
    pub require_structural_schema: bool,
    /// Defaults must survive pruning unchanged.
    pub require_pruned_defaults: bool,
    /// Items of `x-kubernetes-list-type: set` lists must be atomic.
    pub require_atomic_set_type: bool,
    /// Map-list keys must be required or defaulted, set/map items not nullable.
    pub require_map_list_keys_map_set_validation: bool,
    /// An invalid conversion webhook `caBundle` is let through.
    pub allow_invalid_ca_bundle: bool,
}

impl Options {
    /// Every rule, as on create.
    pub(crate) fn create() -> Self {
        Options {
            allow_defaults: true,
            require_recognized_conversion_review_version: true,
            require_immutable_names: false,
            require_open_api_schema: true,
            require_valid_property_type: true,
            require_structural_schema: true,
            require_pruned_defaults: true,
            require_atomic_set_type: true,
            require_map_list_keys_map_set_validation: true,
            allow_invalid_ca_bundle: true,
        }
    }
}
