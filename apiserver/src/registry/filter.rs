//! List and watch filters. PLACEHOLDER until `crate::selector` lands: it
//! rejects every non-empty selector with 400 rather than ignoring it.

use serde_json::Value;

use super::resource::ResourceInfo;
use crate::http::status::ApiError;

/// The selectors of one list or watch.
#[derive(Clone, Debug, Default)]
pub struct Filter;

impl Filter {
    /// Parses selectors (none supported yet: 400).
    pub fn parse(
        _res: &ResourceInfo,
        label_selector: Option<&str>,
        field_selector: Option<&str>,
    ) -> Result<Filter, ApiError> {
        if label_selector.is_some_and(|s| !s.trim().is_empty())
            || field_selector.is_some_and(|s| !s.trim().is_empty())
        {
            return Err(ApiError::bad_request("selectors are not supported yet"));
        }
        Ok(Filter)
    }

    /// Whether nothing is filtered.
    pub fn is_empty(&self) -> bool {
        true
    }

    /// Whether `obj` passes.
    pub fn matches(&self, _res: &ResourceInfo, _obj: &Value) -> bool {
        true
    }
}
