//! `spec.conversion` (upstream `validateCustomResourceConversion`, and
//! `k8s.io/apiserver/pkg/util/webhook`'s URL, service and CA bundle rules).
//! Paths are the internal type's: v1's `webhook.clientConfig` is
//! `webhookClientConfig`, v1's `webhook.conversionReviewVersions` is
//! `conversionReviewVersions`.

use serde_json::{Value, json};
use skein_admission::{
    Cause,
    names::{dns1035_label, dns1123_subdomain},
};

use super::json::{arr, obj, opt_str, str_of};
use super::path::{child, index};
use super::url;

/// The ConversionReview versions this server understands, sorted.
const ACCEPTED_REVIEW_VERSIONS: [&str; 2] = ["v1", "v1beta1"];
const FORM: &str = "; desired format: https://host[/path]";

/// The internal `webhookClientConfig` of a v1 `conversion`.
fn client_config(conversion: &Value) -> Option<&Value> {
    conversion
        .get("webhook")
        .and_then(|w| obj(w, "clientConfig"))
}

/// The internal `conversionReviewVersions` of a v1 `conversion`.
fn review_versions(conversion: &Value) -> Option<&Vec<Value>> {
    conversion
        .get("webhook")
        .and_then(|w| arr(w, "conversionReviewVersions"))
}

/// `true` when `conversion` names an accepted ConversionReview version, or
/// names none (upstream `hasValidConversionReviewVersionOrEmpty`).
pub(crate) fn has_valid_review_version_or_empty(conversion: Option<&Value>) -> bool {
    let Some(list) = conversion.and_then(review_versions) else {
        return true;
    };
    list.is_empty()
        || list.iter().any(|v| {
            v.as_str()
                .is_some_and(|v| ACCEPTED_REVIEW_VERSIONS.contains(&v))
        })
}

/// Problems of `spec.conversion` under `path`.
pub(crate) fn validate_conversion(
    conversion: Option<&Value>,
    require_recognized_version: bool,
    allow_invalid_ca_bundle: bool,
    path: &str,
) -> Vec<Cause> {
    let mut out = Vec::new();
    let Some(conversion) = conversion else {
        return out;
    };
    let strategy = str_of(conversion, "strategy");
    if strategy.is_empty() {
        out.push(Cause::required(child(path, "strategy"), ""));
    } else if strategy != "None" && strategy != "Webhook" {
        out.push(Cause::not_supported(
            child(path, "strategy"),
            &json!(strategy),
            &["None", "Webhook"],
        ));
    }
    let cc_path = child(path, "webhookClientConfig");
    let cc = client_config(conversion);
    let versions = review_versions(conversion);
    if strategy == "Webhook" {
        match cc {
            None => out.push(Cause::required(
                &cc_path,
                "required when strategy is set to Webhook",
            )),
            Some(cc) => {
                let url = opt_str(cc, "url");
                let service = obj(cc, "service");
                match (url, service) {
                    (Some(url), None) => {
                        out.extend(validate_webhook_url(&child(&cc_path, "url"), url));
                    }
                    (None, Some(service)) => {
                        out.extend(validate_webhook_service(
                            &child(&cc_path, "service"),
                            service,
                        ));
                    }
                    _ => out.push(Cause::required(
                        &cc_path,
                        "exactly one of url or service is required",
                    )),
                }
                let bundle = str_of(cc, "caBundle");
                if !bundle.is_empty() && !allow_invalid_ca_bundle {
                    out.extend(validate_ca_bundle(&child(&cc_path, "caBundle"), bundle));
                }
            }
        }
        out.extend(validate_review_versions(
            versions,
            require_recognized_version,
            &child(path, "conversionReviewVersions"),
        ));
    } else {
        if cc.is_some() {
            out.push(Cause::forbidden(
                cc_path,
                "should not be set when strategy is not set to Webhook",
            ));
        }
        if versions.is_some_and(|v| !v.is_empty()) {
            out.push(Cause::forbidden(
                child(path, "conversionReviewVersions"),
                "should not be set when strategy is not set to Webhook",
            ));
        }
    }
    out
}

fn validate_review_versions(
    versions: Option<&Vec<Value>>,
    require_recognized: bool,
    path: &str,
) -> Vec<Cause> {
    let list: Vec<&str> = versions
        .map(|v| v.iter().map(|s| s.as_str().unwrap_or_default()).collect())
        .unwrap_or_default();
    if list.is_empty() {
        return vec![Cause::required(path, "")];
    }
    let mut out = Vec::new();
    let mut seen = std::collections::HashSet::new();
    let mut accepted = false;
    for (i, v) in list.iter().enumerate() {
        if !seen.insert(*v) {
            out.push(Cause::invalid(
                index(path, i),
                &json!(v),
                "duplicate version",
            ));
            continue;
        }
        for err in dns1035_label(v) {
            out.push(Cause::invalid(index(path, i), &json!(v), err));
        }
        accepted |= ACCEPTED_REVIEW_VERSIONS.contains(v);
    }
    if require_recognized && !accepted {
        out.push(Cause::invalid(
            path,
            &json!(list),
            format!(
                "must include at least one of {}",
                ACCEPTED_REVIEW_VERSIONS.join(", ")
            ),
        ));
    }
    out
}

/// Upstream `webhook.ValidateWebhookURL` with `forceHttps`.
pub(crate) fn validate_webhook_url(path: &str, raw: &str) -> Vec<Cause> {
    let u = match url::parse(raw) {
        Ok(u) => u,
        Err(e) => {
            return vec![Cause::required(
                path,
                format!("url must be a valid URL: {e}{FORM}"),
            )];
        }
    };
    let mut out = Vec::new();
    if u.scheme != "https" {
        out.push(Cause::invalid(
            path,
            &json!(u.scheme),
            format!("'https' is the only allowed URL scheme{FORM}"),
        ));
    }
    if u.host.is_empty() {
        out.push(Cause::invalid(
            path,
            &json!(u.host),
            format!("host must be specified{FORM}"),
        ));
    }
    if let Some(user) = &u.user {
        out.push(Cause::invalid(
            path,
            &json!(user),
            "user information is not permitted in the URL",
        ));
    }
    if !u.fragment.is_empty() {
        out.push(Cause::invalid(
            path,
            &json!(u.fragment),
            "fragments are not permitted in the URL",
        ));
    }
    if !u.raw_query.is_empty() {
        out.push(Cause::invalid(
            path,
            &json!(u.raw_query),
            "query parameters are not permitted in the URL",
        ));
    }
    out
}

/// Upstream `webhook.ValidateWebhookService`.
fn validate_webhook_service(path: &str, service: &Value) -> Vec<Cause> {
    let mut out = Vec::new();
    if str_of(service, "name").is_empty() {
        out.push(Cause::required(
            child(path, "name"),
            "service name is required",
        ));
    }
    if str_of(service, "namespace").is_empty() {
        out.push(Cause::required(
            child(path, "namespace"),
            "service namespace is required",
        ));
    }
    let port = service.get("port").and_then(Value::as_i64).unwrap_or(0);
    if !(1..=65535).contains(&port) {
        out.push(Cause::invalid(
            child(path, "port"),
            &json!(port),
            "port is not valid: must be between 1 and 65535, inclusive",
        ));
    }
    let Some(url_path) = opt_str(service, "path") else {
        return out;
    };
    let p = child(path, "path");
    if url_path == "/" || url_path.is_empty() {
        return out;
    }
    if url_path == "//" {
        out.push(Cause::invalid(
            p,
            &json!(url_path),
            "segment[0] may not be empty",
        ));
        return out;
    }
    if !url_path.starts_with('/') {
        out.push(Cause::invalid(
            &p,
            &json!(url_path),
            "must start with a '/'",
        ));
    }
    let mut check = url_path.get(1..).unwrap_or_default();
    check = check.strip_suffix('/').unwrap_or(check);
    for (i, step) in check.split('/').enumerate() {
        if step.is_empty() {
            out.push(Cause::invalid(
                &p,
                &json!(url_path),
                format!("segment[{i}] may not be empty"),
            ));
            continue;
        }
        for failure in dns1123_subdomain(step) {
            out.push(Cause::invalid(
                &p,
                &json!(url_path),
                format!("segment[{i}]: {failure}"),
            ));
        }
    }
    out
}

/// Upstream `webhook.ValidateCABundle`: the bundle must hold a PEM
/// certificate. (Skein checks the PEM framing, not the certificate's DER.)
fn validate_ca_bundle(path: &str, base64: &str) -> Vec<Cause> {
    let bytes = decode_base64(base64).unwrap_or_default();
    let text = String::from_utf8_lossy(&bytes);
    let detail = if !text.contains("-----BEGIN ") {
        "unable to parse bytes as PEM block"
    } else if text.contains("-----BEGIN CERTIFICATE-----")
        && text.contains("-----END CERTIFICATE-----")
    {
        return Vec::new();
    } else {
        "no valid certificate authority data seen"
    };
    let rendered: Vec<String> = bytes.iter().map(|b| format!("0x{b:x}")).collect();
    vec![Cause::invalid_rendered(
        path,
        &format!("[]byte{{{}}}", rendered.join(", ")),
        format!("unable to load root certificates: {detail}"),
    )]
}

/// Standard base64 (Go's `[]byte` JSON form); `None` when malformed.
fn decode_base64(s: &str) -> Option<Vec<u8>> {
    let mut out = Vec::with_capacity(s.len() / 4 * 3);
    let mut acc = 0u32;
    let mut bits = 0;
    for c in s.bytes().filter(|c| *c != b'=') {
        let v = match c {
            b'A'..=b'Z' => c - b'A',
            b'a'..=b'z' => c - b'a' + 26,
            b'0'..=b'9' => c - b'0' + 52,
            b'+' => 62,
            b'/' => 63,
            _ => return None,
        };
        acc = (acc << 6) | u32::from(v);
        bits += 6;
        if bits >= 8 {
            bits -= 8;
            out.push(((acc >> bits) & 0xff) as u8);
        }
    }
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn messages(c: Value) -> Vec<String> {
        validate_conversion(Some(&c), true, false, "spec.conversion")
            .iter()
            .map(ToString::to_string)
            .collect()
    }

    #[test]
    fn none_strategy() {
        assert!(messages(json!({"strategy": "None"})).is_empty());
        assert_eq!(
            messages(json!({})),
            ["spec.conversion.strategy: Required value"]
        );
        assert_eq!(
            messages(json!({"strategy": "Foo"})),
            [
                r#"spec.conversion.strategy: Unsupported value: "Foo": supported values: "None", "Webhook""#
            ]
        );
        assert_eq!(
            messages(
                json!({"strategy": "None", "webhook": {"clientConfig": {"url": "https://h"},
                "conversionReviewVersions": ["v1"]}})
            ),
            [
                "spec.conversion.webhookClientConfig: Forbidden: should not be set when strategy is not set to Webhook",
                "spec.conversion.conversionReviewVersions: Forbidden: should not be set when strategy is not set to Webhook",
            ]
        );
    }

    #[test]
    fn webhook_strategy() {
        assert!(messages(json!({"strategy": "Webhook", "webhook": {"clientConfig": {"url": "https://h/convert"},
            "conversionReviewVersions": ["v1"]}})).is_empty());
        assert_eq!(
            messages(json!({"strategy": "Webhook"})),
            [
                "spec.conversion.webhookClientConfig: Required value: required when strategy is set to Webhook",
                "spec.conversion.conversionReviewVersions: Required value",
            ]
        );
        assert_eq!(
            messages(
                json!({"strategy": "Webhook", "webhook": {"clientConfig": {}, "conversionReviewVersions": ["v3", "v3"]}})
            ),
            [
                "spec.conversion.webhookClientConfig: Required value: exactly one of url or service is required",
                r#"spec.conversion.conversionReviewVersions[1]: Invalid value: "v3": duplicate version"#,
                r#"spec.conversion.conversionReviewVersions: Invalid value: []string{"v3", "v3"}: must include at least one of v1, v1beta1"#,
            ]
        );
        assert_eq!(
            messages(
                json!({"strategy": "Webhook", "webhook": {"clientConfig": {"url": "http://u@h/p?q=1#f"},
                "conversionReviewVersions": ["v1beta1"]}})
            ),
            [
                r#"spec.conversion.webhookClientConfig.url: Invalid value: "http": 'https' is the only allowed URL scheme; desired format: https://host[/path]"#,
                r#"spec.conversion.webhookClientConfig.url: Invalid value: "u": user information is not permitted in the URL"#,
                r#"spec.conversion.webhookClientConfig.url: Invalid value: "f": fragments are not permitted in the URL"#,
                r#"spec.conversion.webhookClientConfig.url: Invalid value: "q=1": query parameters are not permitted in the URL"#,
            ]
        );
    }

    #[test]
    fn webhook_service() {
        assert_eq!(
            messages(
                json!({"strategy": "Webhook", "webhook": {"clientConfig": {"service": {"port": 0, "path": "foo//Bar/"}},
                "conversionReviewVersions": ["v1"]}})
            ),
            [
                "spec.conversion.webhookClientConfig.service.name: Required value: service name is required",
                "spec.conversion.webhookClientConfig.service.namespace: Required value: service namespace is required",
                "spec.conversion.webhookClientConfig.service.port: Invalid value: 0: port is not valid: must be between 1 and 65535, inclusive",
                r#"spec.conversion.webhookClientConfig.service.path: Invalid value: "foo//Bar/": must start with a '/'"#,
                r#"spec.conversion.webhookClientConfig.service.path: Invalid value: "foo//Bar/": segment[1] may not be empty"#,
                r#"spec.conversion.webhookClientConfig.service.path: Invalid value: "foo//Bar/": segment[2]: a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')"#,
            ]
        );
    }

    #[test]
    fn ca_bundle() {
        let bad = validate_ca_bundle("p", "YWI=");
        assert_eq!(
            bad[0].to_string(),
            "p: Invalid value: []byte{0x61, 0x62}: unable to load root certificates: unable to parse bytes as PEM block"
        );
        let pem =
            "LS0tLS1CRUdJTiBDRVJUSUZJQ0FURS0tLS0tCk1JSQotLS0tLUVORCBDRVJUSUZJQ0FURS0tLS0tCg==";
        assert!(validate_ca_bundle("p", pem).is_empty());
        assert!(has_valid_review_version_or_empty(None));
        assert!(!has_valid_review_version_or_empty(Some(
            &json!({"webhook": {"conversionReviewVersions": ["v9"]}})
        )));
    }
}
