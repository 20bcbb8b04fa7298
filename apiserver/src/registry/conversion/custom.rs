//! Conversion of custom resources between the served versions of one
//! CustomResourceDefinition, as apiextensions-apiserver v1.33
//! (`pkg/apiserver/conversion/`): strategy `None` rewrites `apiVersion`
//! only; strategy `Webhook` POSTs a `ConversionReview` to
//! `clientConfig.url` and checks the answer ([`review`]) before using it.
//!
//! `clientConfig.service` cannot be reached here (Skein has no service
//! network): such a CRD gets [`CustomConverter::Unsupported`], whose
//! requests fail with a message saying so. Objects already in the desired
//! version never need the webhook, so the storage version of such a CRD
//! is still served.
//!
//! Contracts: no I/O besides the webhook call; never panics; a failed
//! conversion is upstream's error for a converter failure, a 500 with no
//! reason (`StatusReasonUnknown`) and the converter's message
//! (`conversion webhook for stable.example.com/v1, Kind=CronTab failed:
//! ...`); the returned objects are in the order given.

pub mod client;
pub mod review;

use base64::Engine;
use serde_json::Value;

use self::client::Endpoint;
use self::review::{Review, ReviewVersion, api_version, check_response, gvk_string};
use crate::status::ApiError;

/// What a service-referenced webhook is told (in the CRD's status and on
/// requests).
pub const SERVICE_UNSUPPORTED: &str = "spec.conversion.webhook.clientConfig.service is not supported by Skein \
     (there is no service network to reach a Service through); \
     give the webhook's address in spec.conversion.webhook.clientConfig.url instead";

/// How the objects of one CRD change versions (`spec.conversion`).
#[derive(Debug)]
pub enum CustomConverter {
    /// Strategy `None`: only `apiVersion` changes.
    None,
    /// Strategy `Webhook` with `clientConfig.url`.
    Webhook(Webhook),
    /// A conversion Skein cannot perform (a `service` reference, an
    /// unknown strategy, a URL or `caBundle` no client can be built
    /// from); the message says why.
    Unsupported(String),
}

/// A conversion webhook reached by URL.
#[derive(Debug)]
pub struct Webhook {
    /// The first `conversionReviewVersions` entry Skein speaks (`None`:
    /// upstream's `no supported conversion review versions` per call).
    review_version: Option<ReviewVersion>,
    endpoint: Endpoint,
}

impl Webhook {
    /// The URL called, as shown in errors (with `?timeout=30s`).
    pub fn url(&self) -> &str {
        self.endpoint.url()
    }
}

impl CustomConverter {
    /// The converter for a CRD (a `CustomResourceDefinition` object, read
    /// from `spec.conversion`; a missing strategy is `None`, as upstream's
    /// defaulting).
    pub fn new(crd: &Value) -> CustomConverter {
        let name = crd
            .pointer("/metadata/name")
            .and_then(Value::as_str)
            .unwrap_or("");
        let conversion = crd.pointer("/spec/conversion");
        let strategy = conversion
            .and_then(|c| c.get("strategy"))
            .and_then(Value::as_str)
            .unwrap_or("None");
        match strategy {
            "None" => CustomConverter::None,
            "Webhook" => {
                let webhook = conversion.and_then(|c| c.get("webhook"));
                Self::webhook(name, webhook)
            }
            other => CustomConverter::Unsupported(format!(
                "unknown conversion strategy {} for CRD {name}",
                skein_admission::quote(other)
            )),
        }
    }

    fn webhook(crd_name: &str, webhook: Option<&Value>) -> CustomConverter {
        let config = webhook.and_then(|w| w.get("clientConfig"));
        let calling = |why: &str| {
            CustomConverter::Unsupported(format!(
                "failed calling webhook \"conversion_webhook_for_{crd_name}\": {why}"
            ))
        };
        if config
            .and_then(|c| c.get("service"))
            .is_some_and(|s| !s.is_null())
        {
            return CustomConverter::Unsupported(SERVICE_UNSUPPORTED.to_string());
        }
        let url = config
            .and_then(|c| c.get("url"))
            .and_then(Value::as_str)
            .unwrap_or("");
        if url.is_empty() {
            return calling("webhook configuration must have either service or URL");
        }
        let ca_bundle = match config
            .and_then(|c| c.get("caBundle"))
            .and_then(Value::as_str)
        {
            None => Vec::new(),
            Some(b64) => match base64::engine::general_purpose::STANDARD.decode(b64) {
                Ok(bytes) => bytes,
                Err(e) => return CustomConverter::Unsupported(format!("invalid caBundle: {e}")),
            },
        };
        let endpoint = match Endpoint::new(url, &ca_bundle) {
            Ok(e) => e,
            Err(why) if why.starts_with("Unparsable URL") => return calling(&why),
            Err(why) => return CustomConverter::Unsupported(why),
        };
        let versions = webhook
            .and_then(|w| w.get("conversionReviewVersions"))
            .and_then(Value::as_array)
            .map(|vs| vs.iter().filter_map(Value::as_str).collect::<Vec<_>>())
            .unwrap_or_default();
        CustomConverter::Webhook(Webhook {
            review_version: ReviewVersion::pick(versions),
            endpoint,
        })
    }

    /// Why this CRD's objects cannot be converted, for its status; `None`
    /// when they can.
    pub fn unsupported_reason(&self) -> Option<&str> {
        match self {
            CustomConverter::Unsupported(why) => Some(why),
            _ => None,
        }
    }

    /// Converts `objects` (custom resources of this CRD, each with
    /// `apiVersion` and `kind`) to `desired_api_version` (`group/version`,
    /// a version of this CRD). One object is upstream's single-object
    /// conversion; several are the items of a list, sent to a webhook in
    /// one review (only those not already in the desired version).
    pub async fn convert(
        &self,
        mut objects: Vec<Value>,
        desired_api_version: &str,
    ) -> Result<Vec<Value>, ApiError> {
        let pending: Vec<usize> = objects
            .iter()
            .enumerate()
            .filter(|(_, o)| api_version(o) != desired_api_version)
            .map(|(i, _)| i)
            .collect();
        let webhook = match self {
            CustomConverter::None => {
                for obj in &mut objects {
                    super::set_api_version(obj, desired_api_version);
                }
                return Ok(objects);
            }
            _ if pending.is_empty() => return Ok(objects),
            CustomConverter::Unsupported(why) => {
                let gvk = first_gvk(&objects, &pending);
                return Err(ApiError::unknown(format!(
                    "conversion webhook for {gvk} failed: {why}"
                )));
            }
            CustomConverter::Webhook(webhook) => webhook,
        };
        // An object with nothing but apiVersion and kind converts to an
        // empty object without asking the webhook, as upstream.
        let mut to_send = Vec::with_capacity(pending.len());
        for &i in &pending {
            match objects.get_mut(i) {
                Some(obj) if is_empty_object(obj) => {
                    super::set_api_version(obj, desired_api_version);
                }
                Some(_) => to_send.push(i),
                None => {}
            }
        }
        if to_send.is_empty() {
            return Ok(objects);
        }
        let Some(version) = webhook.review_version else {
            return Err(ApiError::unknown("no supported conversion review versions"));
        };
        let review = Review {
            version,
            uid: uuid::Uuid::new_v4().to_string(),
            desired_api_version: desired_api_version.to_string(),
            gvk: first_gvk(&objects, &to_send),
            objects: to_send
                .iter()
                .filter_map(|&i| objects.get(i).cloned())
                .collect(),
            single: objects.len() == 1,
        };
        let answer = webhook
            .endpoint
            .post(review.request_body())
            .await
            .map_err(|e| ApiError::unknown(review.failed(&e)))?;
        let converted = check_response(&review, &answer).map_err(ApiError::unknown)?;
        for (i, obj) in to_send.into_iter().zip(converted) {
            if let Some(slot) = objects.get_mut(i) {
                *slot = obj;
            }
        }
        Ok(objects)
    }
}

/// The GVK upstream names in errors: the first object being converted.
fn first_gvk(objects: &[Value], pending: &[usize]) -> String {
    pending
        .first()
        .and_then(|&i| objects.get(i))
        .map(gvk_string)
        .unwrap_or_default()
}

/// Upstream's `isEmptyUnstructuredObject`: exactly `apiVersion` and `kind`.
fn is_empty_object(obj: &Value) -> bool {
    obj.as_object()
        .is_some_and(|m| m.len() == 2 && m.contains_key("apiVersion") && m.contains_key("kind"))
}

#[cfg(test)]
#[path = "custom/tests.rs"]
mod tests;
